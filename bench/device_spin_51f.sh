#!/usr/bin/env bash
# Session 51's sixth device call (branch s51-land): the one pass's producer sleeping between tries
# while it waits for a free stage (GDN_FUSED16_SPIN_NS) against spinning. 1. bench/gdn_fused16_bench.cu
# built three times (SPIN_NS 0 = spin, 256 = the default, 1024), w8 and b2 timed at the four shapes,
# the three builds alternating, three rounds; 2. gpu_gdn (every test, with 255 sequences on w8 / b2 /
# the rule) and gpu_gdn_pdl on the branch's pack; 3. gdn_benchmark_ours by rule at (4,8192,16),
# (16,2048,32) and the ragged mix.
# run: command "bash bench/device_spin_51f.sh", carry [".xfer-final"] (device58.txz: the branch's pack).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-final/device58.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
for ns in 0 256 1024; do
  $NVCC -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -DGDN_FUSED16_SPIN_NS=$ns -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench_$ns > /tmp/build_$ns.log 2>&1 &
done
wait
echo "built $(( $(date +%s) - t0 )) s"; ls -la /tmp/f16bench_* | wc -l
for rep in 1 2 3; do
  for ns in 0 256 1024; do
    FUSED16_ONLY=w8,b2 timeout 60 /tmp/f16bench_$ns 20 > $OUT/spin${ns}_$rep.log 2>&1
    echo "== round $rep spin $ns rc=$?"; grep -E "^FUSED16|FAIL" $OUT/spin${ns}_$rep.log | cut -c1-60
  done
done
grep -E "all checks|FAIL" $OUT/spin256_1.log
echo "elapsed $(( $(date +%s) - t0 )) s"
g=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 200 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "^test |test result|panicked" $OUT/gpu_gdn.log | grep -v "\.\.\. ok$" | head -20
pd=$(ls .device/tests/gpu_gdn_pdl-* | head -1)
timeout 40 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log
echo "elapsed $(( $(date +%s) - t0 )) s"
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" timeout 70 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours.log 2>&1
grep -E "BENCH ours fwd " $OUT/ours.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-150
echo "elapsed $(( $(date +%s) - t0 )) s"
