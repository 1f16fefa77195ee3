#!/usr/bin/env bash
# Session 57's third call: (1) the chain bench (bench/chain_ksplit_bench.cu) with wgpq (P and Q as
# one wgmma m64n32k16 chain of the warpgroup), the relaxed release and the O store alone; (2) the
# harness (bench/gdn_fused16_bench.cu): every CHECK (the lean-step forms w4c-lt, w8-lt, b2c-lt among
# them), then the lean step against the landing step, alternating, two rounds. Any kind, no carry, ~150 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
F="-std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench"
nvcc $F bench/gdn_fused16_bench.cu -o /tmp/f16bench > /tmp/f16.build 2>&1 &
nvcc $F bench/chain_ksplit_bench.cu -o /tmp/ksplit && timeout 100 /tmp/ksplit | grep -E "nch  2048|SMs"
wait; tail -3 /tmp/f16.build
echo "elapsed $(( $(date +%s) - t0 )) s"
FUSED16_ONLY=none timeout 120 /tmp/f16bench 20 > $OUT/harness_checks.log 2>&1; echo "harness checks rc=$?"
grep -E "^ENTRY (w4c|b2c|w8)|CHECK.*FAIL|all checks|FAILED" $OUT/harness_checks.log | cut -c1-150 | head -20
grep -c "CHECK.*ok" $OUT/harness_checks.log
for rep in 1 2; do
  for only in w4c,w8,b2c,w8-chain-only w4c-lt,w8-lt,b2c-lt,w8-lt-chain-only,w4c-lt1,b2c-lt1; do
    FUSED16_ONLY=$only timeout 60 /tmp/f16bench 20 2>&1 | grep "^FUSED16" | cut -c1-60
  done
done
echo "elapsed $(( $(date +%s) - t0 )) s"
