#!/usr/bin/env bash
# Session 59's sixth call (harness only): the WG chain with six producer warps (w6c-wg), w4c-wg on 16
# stages and with the remote forward, against w8c, w4c-wg, w6c. Every CHECK, then alternating, two rounds.
# run: command "bash bench/device_s59e.sh", any kind. ~120 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
F="-std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench"
nvcc $F bench/gdn_fused16_bench.cu -o /tmp/f16bench > /tmp/f16.build 2>&1
echo "elapsed $(( $(date +%s) - t0 )) s"
FUSED16_ONLY=none timeout 120 /tmp/f16bench 20 > $OUT/harness_checks.log 2>&1; echo "harness checks rc=$?"
grep -cE "^CHECK.* ok$" $OUT/harness_checks.log; grep -E "CHECK.*FAIL|all checks|FAILED" $OUT/harness_checks.log | cut -c1-150 | head -12
grep -E "^ENTRY .*wg" $OUT/harness_checks.log | cut -c1-150
for rep in 1 2; do
  FUSED16_ONLY=w8c,w4c-wg,w6c,w6c-wg,w4c-s16-wg,w4c-rf-wg timeout 90 /tmp/f16bench 20 2>&1 | grep "^FUSED16" | cut -c1-62
done
echo "elapsed $(( $(date +%s) - t0 )) s"
