#!/usr/bin/env bash
# Session 52's fifth device call (branch s52-cluster, the cluster forms bundled: w4c / b2c by rule):
# 1. gpu_gdn (every test; the forms test forces w8, b2, w4c, b2c and compares bits, the 255-sequence
# test runs every form) and gpu_gdn_pdl; 2. memcheck of the malformed-offsets test on w4c and b2c;
# 3. gdn_benchmark_ours at (4,8192,16), (16,2048,32) and the ragged mix: by rule, and with w8, b2,
# w4c forced, alternating.
# run: command "bash bench/device_cluster_52e.sh", carry [".xfer-tests"] (device60.txz: the branch's pack).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-tests/device60.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
g=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 240 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "^test |test result|panicked" $OUT/gpu_gdn.log | grep -v "\.\.\. ok$" | head -20
pd=$(ls .device/tests/gpu_gdn_pdl-* | head -1)
timeout 40 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log
echo "elapsed $(( $(date +%s) - t0 )) s"
if command -v compute-sanitizer > /dev/null; then
  for form in w4c b2c; do
    DNNPLAN_GDN_FWD_FUSED=$form timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 "$g" --test-threads=1 --exact malformed_cu_seqlens_run_as_their_clamped_running_maximum > $OUT/memcheck_$form.log 2>&1
    echo "memcheck $form rc=$?"; grep -E "ERROR SUMMARY|test result" $OUT/memcheck_$form.log | head -3
  done
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
for rep in 1 2; do
  for form in rule w8 w4c b2; do
    if [ $form = rule ]; then unset DNNPLAN_GDN_FWD_FUSED; else export DNNPLAN_GDN_FWD_FUSED=$form; fi
    DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" timeout 70 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours_${form}_$rep.log 2>&1
    echo "== $form round $rep"; grep -E "BENCH ours fwd " $OUT/ours_${form}_$rep.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-150
  done
done
unset DNNPLAN_GDN_FWD_FUSED
echo "elapsed $(( $(date +%s) - t0 )) s"
