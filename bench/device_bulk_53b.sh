#!/usr/bin/env bash
# Session 53's second device call: the cluster forms' copies by cp.async.bulk (GDN_F16_BULK 1: one
# token row per copy, each CTA its own q, k, v of both chunks of a pair; 2: CTA r copies q, k of its
# own chunk 2m + r into both CTAs' stages by multicast) against the zero-filling cp.async (0), and
# (build 3) the cp.async with a full chunk's copies unpredicated, row pointers stepped
# (GDN_F16_FULL_COPIES 1, every form).
# bench/gdn_fused16_bench.cu built three ways: every CHECK (fp64, l2norm included), then w8 (control),
# w4c, b2c and their producers alone at the four shapes, the builds alternating, two rounds.
# Then, on an H200 only, the wave-fill rule's worst case for w4c (session 52's bench/device_fill_52g.sh
# on main's pack): the ragged mix and its 320 blocks at equal lengths (10 x 2,995 tokens, H = 16),
# the two passes (DNNPLAN_GDN_FWD_FUSED=0) against w4c (the rule's pick at 81 % fill), two rounds.
# run: command "bash bench/device_bulk_53b.sh", carry [".xfer-tests"] (device64.txz: main's GDN test binaries).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
for b in 0 1 2; do
  $NVCC -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -DGDN_F16_BULK=$b -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench_$b > /tmp/build_$b.log 2>&1 &
done
$NVCC -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -DGDN_F16_FULL_COPIES=1 -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench_3 > /tmp/build_3.log 2>&1 &
wait
echo "built $(( $(date +%s) - t0 )) s"; ls /tmp/f16bench_? | wc -l  # 3: cp.async with the full chunks' copies unpredicated (GDN_F16_FULL_COPIES 1); grep -i error /tmp/build_?.log | head
for rep in 1 2; do
  for b in 0 1 2 3; do
    FUSED16_ONLY=w8,b2,w4c,b2c,w4c-producer,b2c-producer timeout 120 /tmp/f16bench_$b 20 > $OUT/bulk${b}_$rep.log 2>&1
    echo "== round $rep bulk $b rc=$?"; grep -E "^CHECK|^FUSED16|all checks|FAIL" $OUT/bulk${b}_$rep.log | grep -v "^CHECK.*ok$" | cut -c1-62
  done
done
grep -E "^CHECK.*(w4c|b2c|w8c)" $OUT/bulk2_1.log | cut -c1-110
grep -E "^CHECK.*(w4c|b2c|w8c)" $OUT/bulk1_1.log | cut -c1-110
if command -v compute-sanitizer > /dev/null; then
  FUSED16_ONLY=none timeout 100 compute-sanitizer --tool memcheck /tmp/f16bench_2 1 > $OUT/memcheck2.log 2>&1
  echo "memcheck bulk 2 rc=$?"; grep -E "ERROR SUMMARY|all checks" $OUT/memcheck2.log | head -3
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
if nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  tar xJf .xfer-tests/device64.txz
  source .device/device-env.sh > /dev/null 2>&1
  b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
  export DNNPLAN_GDN_BENCH_EXTRA="equal-10x2995-H16:2995,2995,2995,2995,2995,2995,2995,2995,2995,2995:16"
  for rep in 1 2; do
    for form in 0 w4c; do
      DNNPLAN_GDN_FWD_FUSED=$form DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="3 4" timeout 80 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/fill_${form}_$rep.log 2>&1
      echo "== fused $form round $rep"; grep -E "BENCH ours fwd " $OUT/fill_${form}_$rep.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-140
    done
  done
  echo "elapsed $(( $(date +%s) - t0 )) s"
fi
