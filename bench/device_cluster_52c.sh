#!/usr/bin/env bash
# Session 52's third device call (branch s52-cluster): the cluster forms' push, three ways
# with the default (CTA-scope) barrier semantics (GDN_F16C_SCOPE 0; the first two calls used cluster scope, whose MEMBAR.ALL.GPU and CCTL.IVALL per chunk cost ~1,000 cycles), (GDN_F16C_PUSH 0: st.async completing bytes on the peer's full barrier; 1: plain remote stores and
# each lane's release arrival; 2: both CTAs copy and normalize q, k, the builder pushes only T, A
# and the scalars, as 1). bench/gdn_fused16_bench.cu built three times; every CHECK, then w8 / b2
# and the cluster forms with their producer-alone diagnostics at the four shapes.
# run: command "bash bench/device_cluster_52c.sh" (no carry).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
for m in 0 1 2; do
  $NVCC -std=c++17 -O3 -lineinfo -gencode=arch=compute_90a,code=sm_90a -DGDN_F16C_PUSH=$m -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench_$m > /tmp/build_$m.log 2>&1 &
done
wait
echo "built $(( $(date +%s) - t0 )) s"; ls /tmp/f16bench_* | wc -l
for m in 0 1 2; do
  only=w8c,w4c,b2c,w8c-producer,w4c-producer,b2c-producer
  [ $m = 1 ] && only=w8,b2,w8-producer,b2-producer,$only
  FUSED16_ONLY=$only timeout 120 /tmp/f16bench_$m 20 > $OUT/push$m.log 2>&1
  echo "== push $m rc=$?"; grep -E "^CHECK|^FUSED16|all checks|FAIL" $OUT/push$m.log | grep -v "^CHECK.*ok$" | cut -c1-75
done
echo "elapsed $(( $(date +%s) - t0 )) s"
