#!/usr/bin/env bash
# Staged in session 53 for the next device session (branch s53-staged; no device was lent after
# session 53's first call). bench/gdn_fused16_bench.cu built six ways, each with every CHECK (fp64,
# l2norm included) and w8, b2, w4c, b2c and the cluster producers alone at the four shapes, timed
# without l2norm (FUSED16_FLAGS 0, the benchmark's graph) and with it (1, as use_qk_l2norm), the
# builds alternating, two rounds:
#   0 base; 1 GDN_F16_BULK=1 (a cluster CTA's rows by cp.async.bulk, one token row per copy);
#   2 GDN_F16_BULK=2 (the own chunk's q, k multicast into both CTAs); 3 GDN_F16_FULL_COPIES=1 (a full
#   chunk's cp.async without the zero-fill predicates, every form); 4 GDN_F16_FOLD=1 (the l2 norms
#   folded into the per-token scalars, taken only with l2norm on, where it removes the norm pass:
#   at flags 0 build 4 runs build 0's code, a control); 5 all three.
# Every switch's default build has main's .text, byte for byte (checked on the CPU).
# Session 55 removed GDN_F16_BULK (measured 8-27 % slower by this script in session 54): on main builds
# 1 and 2 now compile the base copies; the script is kept as the record of that measurement.
# Then memcheck of the harness's checks on build 5, and on an H200 the wave-fill rule's worst case
# for w4c on main's pack (the two passes against w4c at the ragged mix's 320 blocks, equal lengths).
# Land a switch only if it is faster at both flag values and every CHECK is ok; then rebuild the
# cubin (kernels/tools), run gpu_gdn on a new pack.
# run: command "bash bench/device_staged_54a.sh", carry [".xfer-tests"] (device64.txz: main's GDN test binaries).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
defs=("" "-DGDN_F16_BULK=1" "-DGDN_F16_BULK=2" "-DGDN_F16_FULL_COPIES=1" "-DGDN_F16_FOLD=1" "-DGDN_F16_BULK=2 -DGDN_F16_FULL_COPIES=1 -DGDN_F16_FOLD=1")
for b in 0 1 2 3 4 5; do
  $NVCC -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a ${defs[$b]} -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench_$b > /tmp/build_$b.log 2>&1 &
done
wait
echo "built $(( $(date +%s) - t0 )) s: $(ls /tmp/f16bench_? | wc -l) of 6"; grep -i error /tmp/build_?.log | head
for rep in 1 2; do
  for fl in 0 1; do
    for b in 0 1 2 3 4 5; do
      FUSED16_FLAGS=$fl FUSED16_ONLY=w8,b2,w4c,b2c,w4c-producer,b2c-producer timeout 90 /tmp/f16bench_$b 20 > $OUT/b${b}_f${fl}_$rep.log 2>&1
      echo "== round $rep flags $fl build $b rc=$?"; grep -E "^CHECK|^FUSED16|all checks|FAIL" $OUT/b${b}_f${fl}_$rep.log | grep -v "^CHECK.*ok$" | grep -v 32768 | cut -c1-62
    done
  done
  echo "elapsed $(( $(date +%s) - t0 )) s"
done
for b in 1 2 4 5; do grep -E "^CHECK.*(w4c|b2c)" $OUT/b${b}_f0_1.log | cut -c1-110; done
if command -v compute-sanitizer > /dev/null; then
  FUSED16_ONLY=none timeout 100 compute-sanitizer --tool memcheck /tmp/f16bench_5 1 > $OUT/memcheck5.log 2>&1
  echo "memcheck build 5 rc=$?"; grep -E "ERROR SUMMARY|all checks" $OUT/memcheck5.log | head -3
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  tar xJf .xfer-tests/device64.txz
  source .device/device-env.sh > /dev/null 2>&1
  t=$(ls .device/tests/gpu_gdn_bench-* | head -1)
  export DNNPLAN_GDN_BENCH_EXTRA="equal-10x2995-H16:2995,2995,2995,2995,2995,2995,2995,2995,2995,2995:16"
  for rep in 1 2; do
    for form in 0 w4c; do
      DNNPLAN_GDN_FWD_FUSED=$form DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="3 4" timeout 80 "$t" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/fill_${form}_$rep.log 2>&1
      echo "== fused $form round $rep"; grep -E "BENCH ours fwd " $OUT/fill_${form}_$rep.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-140
    done
  done
  echo "elapsed $(( $(date +%s) - t0 )) s"
fi
