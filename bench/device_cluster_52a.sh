#!/usr/bin/env bash
# Session 52's first device call (branch s52-cluster): the one pass's cluster forms (w8c, w4c, b2c:
# the two value halves of a (sequence, head) as one 2-CTA cluster, each CTA building every other
# chunk and pushing it into its peer's stage). 1. bench/gdn_fused16_bench.cu (built here): every
# CHECK (eight forms against fp64), then w8 / b2 / w8c / w4c / b2c and the producer-alone
# diagnostics at the four shapes, two rounds; 2. compute-sanitizer memcheck and racecheck of the
# checks (timing skipped).
# run: command "bash bench/device_cluster_52a.sh" (no carry: the harness builds from the tree).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
$NVCC -std=c++17 -O3 -lineinfo -gencode=arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench 2>&1 | grep -v "^$" | grep -v "C7512\|#128\|for (int i = 0; i < D\|^ *\^\|detected during\|Remark" | tail -5
echo "built $(( $(date +%s) - t0 )) s"; export PATH="$PATH:$(dirname "$NVCC")"; ls "$(dirname "$NVCC")" | grep -c sanitizer
for rep in 1 2; do
  FUSED16_ONLY=w8,w8c,w4c,b2,b2c,w8-producer,w8c-producer,w4c-producer,b2-producer,b2c-producer \
    timeout 120 /tmp/f16bench 20 > $OUT/fused16_$rep.log 2>&1
  echo "== round $rep rc=$?"; grep -E "^ENTRY .*(w8|w4c|b2)c?[ :]|^CHECK|^FUSED16|all checks|FAIL" $OUT/fused16_$rep.log | grep -v "^CHECK.*ok$" | cut -c1-120
done
grep -E "^CHECK.*(w8c|w4c|b2c)" $OUT/fused16_1.log | cut -c1-120; grep -c "^CHECK.* ok$" $OUT/fused16_1.log
echo "elapsed $(( $(date +%s) - t0 )) s"
if command -v compute-sanitizer > /dev/null; then
  for tool in memcheck racecheck; do
    FUSED16_ONLY=none timeout 150 compute-sanitizer --tool $tool --error-exitcode 9 /tmp/f16bench 1 > $OUT/$tool.log 2>&1
    echo "$tool rc=$?"; grep -E "ERROR SUMMARY|RACECHECK SUMMARY|all checks|FAIL" $OUT/$tool.log | head -4
  done
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
