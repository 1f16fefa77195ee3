#!/usr/bin/env bash
# Session 49, one device call: fused16's second form (each producer warp builds whole chunks of its
# own, copies D own chunks ahead, mbarrier stages; bench/gdn_fwd_fused16.cuh) built with the device's
# nvcc, checked against fp64 and timed at the benchmark shapes in its three launch forms and four
# diagnostics, one ncu profile of b1 at (4,8192,16), our two-pass default forward beside it, then
# json_robustness with cuDNN loaded (session 47's harness fix; TAIL=1 only: it needs more than 150 s
# with cuDNN loaded). NCU_ENTRY picks the profiled entry (default w8).
# run: command "bash bench/device_fused16_49.sh", carry [".xfer-final"].
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-final/device.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
$NVCC -std=c++17 -O3 -arch=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench 2>&1 | grep -v "^$" | tail -5
timeout 120 /tmp/f16bench 20 2>&1 | tee $OUT/fused16.log
echo "fused16 done at $(( $(date +%s) - t0 )) s"
if command -v ncu > /dev/null; then
  NK=${NCU_ENTRY:-w8}
  FUSED16_ONLY=$NK timeout 60 ncu --clock-control none -k regex:"fused16_bf16_${NK}\$" --launch-skip 2 --launch-count 1 \
    --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    /tmp/f16bench 1 > $OUT/fused16_ncu.log 2>&1
  grep -E "Duration|Throughput|Issue Slots|Stall|Warp Cycles|Executed Ipc|Mem Busy|Max Bandwidth" $OUT/fused16_ncu.log | head -30
fi
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" timeout ${OURS_CAP:-100} "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours.log 2>&1
echo "ours rc=$?"
grep -E "BENCH ours fwd |panicked" $OUT/ours.log | sed 's/^test gdn_benchmark_ours ... //' | head -10
echo "elapsed $(( $(date +%s) - t0 )) s"
if [ "${TAIL:-0}" = 1 ]; then
j=$(ls .device/tests/json_robustness-* | head -1)
DNNPLAN_JSON_ROBUSTNESS_CASES=4 timeout ${JSON_CAP:-400} "$j" --test-threads=1 > $OUT/json_robustness.log 2>&1
echo "json_robustness rc=$?"
grep -E "test result|bug|without a message|panicked" $OUT/json_robustness.log | head -20
echo "elapsed $(( $(date +%s) - t0 )) s"
fi
