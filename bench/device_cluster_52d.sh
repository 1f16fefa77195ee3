#!/usr/bin/env bash
# Session 52's fourth device call (branch s52-cluster): the cluster forms' push as T, A and the
# scalars only by st.async (GDN_F16C_PUSH 3, both CTAs copying and normalizing q, k) against the same
# by remote stores and per-lane arrivals (2) and q̂, k̂ pushed as well (0); forms w4c, b2c, w8c and the
# bench-only w6c (six producer warps) / w4c2 (two pairs ahead), w8 / b2 alongside; two rounds.
# run: command "bash bench/device_cluster_52d.sh" (no carry).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
for m in 0 2 3; do
  $NVCC -std=c++17 -O3 -lineinfo -gencode=arch=compute_90a,code=sm_90a -DGDN_F16C_PUSH=$m -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench_$m > /tmp/build_$m.log 2>&1 &
done
wait
echo "built $(( $(date +%s) - t0 )) s"; ls /tmp/f16bench_* | wc -l; grep -i error /tmp/build_*.log | head
for rep in 1 2; do
  for m in 3 2 0; do
    only=w4c,b2c,w8c,w6c,w4c2
    [ $m = 3 ] && only=w8,b2,$only
    FUSED16_ONLY=$only timeout 120 /tmp/f16bench_$m 20 > $OUT/push${m}_$rep.log 2>&1
    echo "== round $rep push $m rc=$?"; grep -E "^CHECK|^FUSED16|all checks|FAIL" $OUT/push${m}_$rep.log | grep -v "^CHECK.*ok$" | grep -v "32768" | cut -c1-62
  done
done
grep -E "^ENTRY" $OUT/push3_1.log | cut -c1-150
echo "elapsed $(( $(date +%s) - t0 )) s"
