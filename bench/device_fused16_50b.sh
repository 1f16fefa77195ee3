#!/usr/bin/env bash
# Session 50's second device call, the landing tree (branch s50-order: the one pass's longest-first
# block order, the wave-fill rule, the lazy forms dropped): gpu_gdn every test, gpu_gdn_pdl, and
# gdn_benchmark_ours by rule at (4,8192,16), (16,2048,32), the ragged mix, and the ragged mix with
# the one pass forced (w8) and the two passes (0).
# run: command "bash bench/device_fused16_50b.sh", carry [".xfer-final"] (device52.txz: the branch's pack).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-final/device52.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
g=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 150 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "^test |test result|panicked" $OUT/gpu_gdn.log | grep -v "\.\.\. ok$" | head -20
pd=$(ls .device/tests/gpu_gdn_pdl-* | head -1)
timeout 40 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log
echo "elapsed $(( $(date +%s) - t0 )) s"
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
for form in rule w8 0; do
  shapes="0 2 3"; [ $form = rule ] || shapes="3"
  if [ $form = rule ]; then unset DNNPLAN_GDN_FWD_FUSED; else export DNNPLAN_GDN_FWD_FUSED=$form; fi
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="$shapes" timeout 70 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours_$form.log 2>&1
  echo "== FUSED=$form"; grep -E "BENCH ours fwd " $OUT/ours_$form.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-150
done
echo "elapsed $(( $(date +%s) - t0 )) s"
