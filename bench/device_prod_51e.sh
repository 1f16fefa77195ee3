#!/usr/bin/env bash
# Session 51's fifth device call: per-SASS-instruction counts and stall sampling (ncu source page)
# of one launch each of w8's producer alone and w8 whole at (4,8192,16): where the producer's issue
# slots go (bench/ncu_sass_stalls.py reads them).
# run: command "bash bench/device_prod_51e.sh" (no carry).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
$NVCC -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench 2>&1 | grep -v "^$" | grep -v C7512 | tail -5
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "built $(( $(date +%s) - t0 )) s"
for k in w8_prod w8; do
  name=$(echo $k | sed 's/_prod/-producer/')
  FUSED16_ONLY=$name timeout 120 $NCU --clock-control none -k regex:"fused16_bf16_${k}\$" --launch-skip 2 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --page source --print-source sass --csv /tmp/f16bench 1 > $OUT/sass_$k.csv 2> $OUT/sass_$k.err
  echo "== $k rc=$? lines $(wc -l < $OUT/sass_$k.csv)"; tail -2 $OUT/sass_$k.err
  echo "elapsed $(( $(date +%s) - t0 )) s"
done
gzip -9 $OUT/*.csv
echo "elapsed $(( $(date +%s) - t0 )) s"
