#!/usr/bin/env bash
# Session 50's fourth device call: per-SASS-instruction warp-stall sampling (ncu source page) of one
# launch each of w8's chain alone and w8 at (4,8192,16), to see where the chain waits.
# run: command "bash bench/device_chain_50d.sh" (no carry).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
$NVCC -std=c++17 -O3 -arch=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench 2>&1 | grep -v "^$" | tail -5
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
$NCU --version | tail -1
for k in w8_chainonly w8; do
  name=$(echo $k | sed 's/_chainonly/-chain-only/')
  FUSED16_ONLY=$name timeout 120 $NCU --clock-control none -k regex:"fused16_bf16_${k}\$" --launch-skip 2 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --page source --print-source sass --csv /tmp/f16bench 1 > $OUT/sass_$k.csv 2> $OUT/sass_$k.err
  echo "== $k rc=$? lines $(wc -l < $OUT/sass_$k.csv)"; head -c 600 $OUT/sass_$k.csv; echo; tail -3 $OUT/sass_$k.err
  [ $(( $(date +%s) - t0 )) -gt 200 ] && break
done
gzip -9 $OUT/*.csv
echo "elapsed $(( $(date +%s) - t0 )) s"
