#!/usr/bin/env bash
# Session 49, the product call: the one-pass forward bundled (module gdn_fused16) validated and
# measured. 1. bench/gdn_fused16_bench.cu (its forms and diagnostics at the benchmark shapes, fp64
# checks); 2. gpu_gdn, every test (the forward's K = 128 cases now run the one pass by rule; the new
# one_pass_forward_forms_and_the_two_passes_agree forces each form and the two passes);
# gpu_gdn_pdl; 3. gdn_benchmark_ours at the four shapes by rule, then with DNNPLAN_GDN_FWD_FUSED=0;
# 4. memcheck of the malformed-offsets and pool tests on the one pass.
# run: command "bash bench/device_fused16_49b.sh", carry [".xfer-final"] (device49.txz: this tree's pack).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
el() { echo "elapsed $(( $(date +%s) - t0 )) s"; }
# Steps after the first three run only while less than STOP_AT seconds have passed.
left() { [ $(( $(date +%s) - t0 )) -lt ${STOP_AT:-300} ]; }
tar xJf .xfer-final/device49.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
$NVCC -std=c++17 -O3 -arch=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench 2>&1 | grep -v "^$" | tail -5
timeout 90 /tmp/f16bench 15 > $OUT/fused16.log 2>&1
grep -E "CHECK|FUSED16|all checks|FAIL" $OUT/fused16.log | grep -vE "chain-only|producer|chain-copies" | head -40
el
g=$(ls .device/tests/gpu_gdn-* | head -1)
timeout ${GDN_CAP:-200} "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"
grep -E "^test |test result|panicked" $OUT/gpu_gdn.log | head -40
pd=$(ls .device/tests/gpu_gdn_pdl-* | head -1)
timeout 60 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log
el
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 1 2 3" timeout 100 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours.log 2>&1
echo "ours rc=$?"; grep -E "BENCH ours (fwd|train|replay) |panicked" $OUT/ours.log | sed 's/^test gdn_benchmark_ours ... //' | head -20
el
left && DNNPLAN_GDN_FWD_FUSED=0 DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" timeout 90 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours_two_pass.log 2>&1
echo "ours two-pass rc=$?"; grep -E "BENCH ours fwd |panicked" $OUT/ours_two_pass.log | sed 's/^test gdn_benchmark_ours ... //' | head -8
el
if left && command -v compute-sanitizer > /dev/null && [ "${MEMCHECK:-1}" = 1 ]; then
  for t in ${MEMCHECK_TESTS:-malformed_cu_seqlens_run_as_their_clamped_running_maximum}; do
    timeout ${MEMCHECK_CAP:-100} compute-sanitizer --tool memcheck --error-exitcode 9 "$g" --test-threads=1 --exact $t > $OUT/memcheck_$t.log 2>&1
    echo "memcheck $t rc=$?"; grep -E "ERROR SUMMARY|test result" $OUT/memcheck_$t.log | head -3
  done
fi
el
