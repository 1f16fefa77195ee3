#!/usr/bin/env bash
# Staged in session 52 for the next device session (branch s52-fold): the l2 norms folded into the
# per-token scalars (GDN_F16_FOLD 1: the stage keeps the raw q, k rows; rk, rq from the diagonals of
# K Kᵀ and Q Qᵀ; no producer pass rewrites q̂, k̂ — in the cluster forms neither CTA normalizes).
# 1. bench/gdn_fused16_bench.cu built with GDN_F16_FOLD 0 and 1: every CHECK (fp64), then w8, b2,
# w4c, b2c, the bench-only w2c / b2c2 (two producer warps: with the fold a CTA only copies the
# peer's chunks) and the producer-alone diagnostics at the four shapes, alternating, two rounds;
# 2. gpu_gdn (every test) and gpu_gdn_pdl on the branch's pack; memcheck of the malformed-offsets
# test on w4c; 3. gdn_benchmark_ours by rule at (4,8192,16), (16,2048,32) and the ragged mix.
# Land the branch only if 1 shows w4c / b2c faster with the fold and 2 is green.
# run: command "bash bench/device_fold_53a.sh", carry [".xfer-tests"] (device63.txz: the branch's GDN test binaries).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-tests/device63.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
for f in 0 1; do
  $NVCC -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -DGDN_F16_FOLD=$f -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench_$f > /tmp/build_$f.log 2>&1 &
done
wait
echo "built $(( $(date +%s) - t0 )) s"; ls /tmp/f16bench_* | wc -l
for rep in 1 2; do
  for f in 0 1; do
    FUSED16_ONLY=w8,b2,w4c,b2c,w2c,b2c2,w8-producer,w4c-producer,b2c-producer timeout 120 /tmp/f16bench_$f 20 > $OUT/fold${f}_$rep.log 2>&1
    echo "== round $rep fold $f rc=$?"; grep -E "^CHECK|^FUSED16|all checks|FAIL" $OUT/fold${f}_$rep.log | grep -v "^CHECK.*ok$" | grep -v 32768 | cut -c1-62
  done
done
grep -E "^CHECK" $OUT/fold1_1.log | cut -c1-110
echo "elapsed $(( $(date +%s) - t0 )) s"
g=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 150 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "^test |test result|panicked" $OUT/gpu_gdn.log | grep -v "\.\.\. ok$" | head -20
pd=$(ls .device/tests/gpu_gdn_pdl-* | head -1)
timeout 30 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log
if command -v compute-sanitizer > /dev/null; then
  DNNPLAN_GDN_FWD_FUSED=w4c timeout 90 compute-sanitizer --tool memcheck --error-exitcode 9 "$g" --test-threads=1 --exact malformed_cu_seqlens_run_as_their_clamped_running_maximum > $OUT/memcheck.log 2>&1
  echo "memcheck w4c rc=$?"; grep -E "ERROR SUMMARY|test result" $OUT/memcheck.log | head -3
fi
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" timeout 40 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours.log 2>&1
grep -E "BENCH ours fwd " $OUT/ours.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-150
echo "elapsed $(( $(date +%s) - t0 )) s"
