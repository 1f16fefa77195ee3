#!/usr/bin/env bash
# Session 52's seventh device call (main after the cluster forms): the wave-fill rule's worst case
# for w4c. The ragged mix (10 sequences, 29,949 tokens, H = 16: 320 blocks, 81 % of three waves at
# equal lengths) and the same 320 blocks at equal lengths (10 x 2,995 tokens, DNNPLAN_GDN_BENCH_EXTRA,
# shape index 4), by rule (both on the two passes) and with w4c forced, alternating, two rounds.
# run: command "bash bench/device_fill_52g.sh", carry [".xfer-tests"] (device61.txz: main's gpu_gdn_bench).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-tests/device61.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
export DNNPLAN_GDN_BENCH_EXTRA="equal-10x2995-H16:2995,2995,2995,2995,2995,2995,2995,2995,2995,2995:16"
for rep in 1 2; do
  for form in rule w4c; do
    if [ $form = rule ]; then unset DNNPLAN_GDN_FWD_FUSED; else export DNNPLAN_GDN_FWD_FUSED=$form; fi
    DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="3 4" timeout 80 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/fill_${form}_$rep.log 2>&1
    echo "== $form round $rep"; grep -E "BENCH ours fwd " $OUT/fill_${form}_$rep.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-140
  done
done
unset DNNPLAN_GDN_FWD_FUSED
echo "elapsed $(( $(date +%s) - t0 )) s"
