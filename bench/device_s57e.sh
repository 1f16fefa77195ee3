#!/usr/bin/env bash
# Session 57, H200: the forward by rule through the product, device68 (session 56's main) against
# device70 (w4c with the lean step, as main since session 57), alternating, three rounds, at the
# shapes the one pass serves by rule ((4,8192,16), (16,2048,32), ragged).
# run: command "bash bench/device_s57e.sh", kind nvidia-h200, carry [".xfer-tests68"]. ~60 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for pk in 68 70; do mkdir -p /tmp/p$pk && tar xJf .xfer-tests68/device$pk.txz -C /tmp/p$pk; done
source /tmp/p70/.device/device-env.sh > /dev/null 2>&1
for rep in 1 2 3; do
  for pk in 68 70; do
    b=$(ls /tmp/p$pk/.device/tests/gpu_gdn_bench-* | head -1)
    DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" \
      timeout 60 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > /tmp/ours_${pk}_$rep.log 2>&1
    echo "== product $pk round $rep rc=$?"
    grep -E "BENCH ours fwd " /tmp/ours_${pk}_$rep.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-100
  done
done
