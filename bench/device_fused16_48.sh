#!/usr/bin/env bash
# Session 48, one device call: the one-pass chunk-16 forward (bench/gdn_fwd_fused16.cuh) built with the
# device's nvcc, checked against fp64 and timed at the benchmark shapes (two launch bounds), our
# two-pass default forward timed beside it (gdn_benchmark_ours, default schedule), the fused run again,
# then json_robustness with cuDNN loaded. run: command "bash bench/device_fused16_48.sh", carry [".xfer-final"].
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-final/device.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
echo "nvcc: $NVCC"
$NVCC -std=c++17 -O3 -arch=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench 2>&1 | grep -v "^$" | tail -5
timeout 90 /tmp/f16bench 20 2>&1 | tee $OUT/fused16.log
echo "fused16 done at $(( $(date +%s) - t0 )) s"
# One profile of the full kernel at (4,8192,16) (its first timing warm-up; the two launches before it
# are the fp64 checks): which bound it meets (issue, tensor pipe, stalls, DRAM).
if command -v ncu > /dev/null; then
  timeout 60 ncu --clock-control none -k regex:"fused16_bf16_b1$" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section Occupancy \
    /tmp/f16bench 1 > $OUT/fused16_ncu.log 2>&1
  grep -E "Duration|Throughput|Issue Slots|Pipe|Stall|Warp Cycles|Achieved Occupancy|Executed Ipc" $OUT/fused16_ncu.log | head -40
fi
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" timeout ${OURS_CAP:-120} "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours.log 2>&1
echo "ours rc=$?"
grep -E "^BENCH|panicked" $OUT/ours.log | head -40
if [ "${TAIL:-1}" = 1 ]; then
timeout 60 /tmp/f16bench 20 2>&1 | grep FUSED16 | tee $OUT/fused16_again.log
echo "elapsed $(( $(date +%s) - t0 )) s"
# The robustness walks with cuDNN loaded (session 47's harness fix: the last error read by the two-call protocol).
j=$(ls .device/tests/json_robustness-* | head -1)
DNNPLAN_JSON_ROBUSTNESS_CASES=4 timeout 100 "$j" --test-threads=1 > $OUT/json_robustness.log 2>&1
echo "json_robustness rc=$?"
grep -E "test result|bug|without a message|panicked" $OUT/json_robustness.log | head -20
echo "elapsed $(( $(date +%s) - t0 )) s"
fi
