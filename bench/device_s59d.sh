#!/usr/bin/env bash
# Session 59's fourth call (harness only): the chain's P and Q by wgmma over swizzled q, k rows
# (Fused16Form WG, session 57's patch on the lean step with the producer's O store) on w8c, w4c,
# b2c and w8's chain alone, against the product's forms. Every CHECK, then alternating, two rounds.
# run: command "bash bench/device_s59d.sh", any kind. ~150 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
F="-std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench"
nvcc $F bench/gdn_fused16_bench.cu -o /tmp/f16bench > /tmp/f16.build 2>&1
ls -la /tmp/f16bench | cut -c1-80
echo "elapsed $(( $(date +%s) - t0 )) s"
FUSED16_ONLY=none timeout 120 /tmp/f16bench 20 > $OUT/harness_checks.log 2>&1; echo "harness checks rc=$?"
grep -cE "^CHECK.* ok$" $OUT/harness_checks.log; grep -E "CHECK.*(FAIL|wg)|all checks|FAILED" $OUT/harness_checks.log | cut -c1-150 | head -12
grep -E "^ENTRY .*wg" $OUT/harness_checks.log | cut -c1-150
for rep in 1 2; do
  FUSED16_ONLY=w8c,w8c-wg,w4c,w4c-wg,b2c,b2c-wg,w8-chain-only,w8-wg-chain-only timeout 90 /tmp/f16bench 20 2>&1 | grep "^FUSED16" | cut -c1-62
done
FUSED16_FLAGS=1 FUSED16_ONLY=w8c,w8c-wg,b2c,b2c-wg timeout 60 /tmp/f16bench 20 2>&1 | grep "^FUSED16" | sed 's/^FUSED16 /FUSED16 l2 /' | cut -c1-65
echo "elapsed $(( $(date +%s) - t0 )) s"
