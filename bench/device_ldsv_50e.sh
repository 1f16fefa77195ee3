#!/usr/bin/env bash
# Session 50's fifth device call (branch s50-ldsv): the chain reads vᵀ by one transposing ldmatrix
# instead of eight 2-byte loads (bitwise the same). 1. bench/gdn_fused16_bench.cu: every CHECK, then
# w8 / w8-lds-v and b2 / b2-lds-v (the old loads) side by side at the four shapes, twice; 2. gpu_gdn
# every test and gpu_gdn_pdl on the branch's pack; 3. gdn_benchmark_ours by rule at (4,8192,16),
# (16,2048,32) and the ragged mix.
# run: command "bash bench/device_ldsv_50e.sh", carry [".xfer-final"] (device53.txz: the branch's pack).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-final/device53.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
$NVCC -std=c++17 -O3 -arch=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench 2>&1 | grep -v "^$" | tail -5
for rep in 1 2; do
  FUSED16_ONLY=w8,w8-lds-v,b2,b2-lds-v timeout 60 /tmp/f16bench 20 > $OUT/fused16_$rep.log 2>&1
  echo "== round $rep"; grep -E "^FUSED16|all checks|FAIL" $OUT/fused16_$rep.log
done
echo "elapsed $(( $(date +%s) - t0 )) s"
g=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 150 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "^test |test result|panicked" $OUT/gpu_gdn.log | grep -v "\.\.\. ok$" | head -20
pd=$(ls .device/tests/gpu_gdn_pdl-* | head -1)
timeout 40 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" timeout 70 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours.log 2>&1
grep -E "BENCH ours fwd " $OUT/ours.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-150
echo "elapsed $(( $(date +%s) - t0 )) s"
