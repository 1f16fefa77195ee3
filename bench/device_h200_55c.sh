#!/usr/bin/env bash
# Session 55's H200 call: (1) the one pass's wave-fill rule on the H200 (session 52's call 7, which
# set FUSED16_MIN_FILL_PCT = 80 from an H100 and an H200 estimate): the ragged mix and the same 320
# blocks at equal lengths (10 x 2,995 tokens, H = 16: 81 % of three waves), by rule (w4c) against
# the two passes (DNNPLAN_GDN_FWD_FUSED=0), alternating, two rounds; (2) issue 8's benchmark with
# the peers in the same run (bench/device_peers_55b.sh's: ours, the KDA path, fla-core 0.6.0).
# Staged, not run in session 55 (no H200 lent while budget remained).
# run: command "bash bench/device_h200_55c.sh", kind nvidia-h200, carry [".xfer-tests68", ".xfer-final"].
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-tests68/device68.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
for rep in 1 2; do
  for form in rule 0; do
    if [ $form = rule ]; then unset DNNPLAN_GDN_FWD_FUSED; else export DNNPLAN_GDN_FWD_FUSED=$form; fi
    DNNPLAN_GDN_BENCH_EXTRA="equal-10x2995-H16:2995,2995,2995,2995,2995,2995,2995,2995,2995,2995:16" \
      DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="3 4" \
      timeout 80 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/fill_${form}_$rep.log 2>&1
    echo "== fused=$form round $rep"; grep -E "BENCH ours fwd " $OUT/fill_${form}_$rep.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-140
  done
done
unset DNNPLAN_GDN_FWD_FUSED
echo "elapsed $(( $(date +%s) - t0 )) s"
BUDGET=$(( ${LIMIT:-540} - ($(date +%s) - t0) - 20 )) bash bench/device_peers_55b.sh
