#!/usr/bin/env bash
# Session 59's seventh call (harness only): b2c with three or two producer warps (b2c-p3, b2c-p2:
# more registers per thread under two blocks' launch bound) against b2c and w8c. Every CHECK, then
# alternating, two rounds.
# run: command "bash bench/device_s59g.sh", any kind. ~100 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
F="-std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench"
nvcc $F bench/gdn_fused16_bench.cu -o /tmp/f16bench > /tmp/f16.build 2>&1
echo "elapsed $(( $(date +%s) - t0 )) s"
FUSED16_ONLY=none timeout 120 /tmp/f16bench 20 > $OUT/harness_checks.log 2>&1; echo "harness checks rc=$?"
grep -cE "^CHECK.* ok$" $OUT/harness_checks.log; grep -E "CHECK.*FAIL|all checks|FAILED" $OUT/harness_checks.log | cut -c1-150 | head -12
grep -E "^ENTRY (b2c|w8c)" $OUT/harness_checks.log | cut -c1-150
for rep in 1 2; do
  FUSED16_ONLY=w8c,b2c,b2c-p3,b2c-p2 timeout 90 /tmp/f16bench 20 2>&1 | grep "^FUSED16" | cut -c1-62
done
echo "elapsed $(( $(date +%s) - t0 )) s"
