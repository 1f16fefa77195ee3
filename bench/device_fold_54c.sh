#!/usr/bin/env bash
# Session 54's fifth device call: the fold by default (branch s54-fold: GDN_F16_FOLD 1) — gpu_gdn and
# gpu_gdn_pdl on its pack, then the forward through the product (no l2norm in the benchmark's graph:
# the fold does not run there) against main's pack, alternating, two rounds.
# run: command "bash bench/device_fold_54c.sh", carry [".xfer-tests", ".xfer-tests67"].
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
mkdir -p /tmp/main /tmp/fold
tar xJf .xfer-tests/device64.txz -C /tmp/main
tar xJf .xfer-tests67/device67.txz -C /tmp/fold
source /tmp/fold/.device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
g=$(ls /tmp/fold/.device/tests/gpu_gdn-* | head -1)
timeout 200 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "test result|panicked|FAILED" $OUT/gpu_gdn.log | head -10
pd=$(ls /tmp/fold/.device/tests/gpu_gdn_pdl-* | head -1)
timeout 30 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log
echo "elapsed $(( $(date +%s) - t0 )) s"
for rep in 1 2; do
  for tree in main fold; do
    b=$(ls /tmp/$tree/.device/tests/gpu_gdn_bench-* | head -1)
    DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" \
      timeout 60 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours_${tree}_$rep.log 2>&1
    echo "== round $rep $tree rc=$?"
    grep -E "BENCH ours fwd " $OUT/ours_${tree}_$rep.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-70
  done
done
echo "elapsed $(( $(date +%s) - t0 )) s"
