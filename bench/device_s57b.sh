#!/usr/bin/env bash
# Session 57's second call: (1) the chain in isolation (bench/chain_ksplit_bench.cu) with the pair
# forms on two sub-partitions (ksplit-2sp, pqsplit) and the base chain with the landing chain's
# handshake and O store (base+bar, base+bar+o); (2) per-SASS stall sampling (ncu source page) of
# one launch each of the landing chain alone (w8-chain-only) and w4c whole at (4,8192,16)
# (bench/ncu_sass_stalls.py reads them). Any kind, no carry, ~150 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
F="-std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench"
nvcc $F bench/gdn_fused16_bench.cu -o /tmp/f16bench > /tmp/f16.build 2>&1 &
nvcc $F bench/chain_ksplit_bench.cu -o /tmp/ksplit && timeout 120 /tmp/ksplit
wait; tail -3 /tmp/f16.build
echo "elapsed $(( $(date +%s) - t0 )) s"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
for k in w8_chainonly w4c; do
  name=$(echo $k | sed 's/_chainonly/-chain-only/')
  FUSED16_ONLY=$name timeout 120 $NCU --clock-control none -k regex:"fused16_bf16_${k}\$" --launch-skip 2 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --page source --print-source sass --csv /tmp/f16bench 1 > $OUT/sass57_$k.csv 2> $OUT/sass57_$k.err
  echo "== $k rc=$? lines $(wc -l < $OUT/sass57_$k.csv)"; tail -2 $OUT/sass57_$k.err
  echo "elapsed $(( $(date +%s) - t0 )) s"
done
gzip -9 $OUT/*.csv
echo "elapsed $(( $(date +%s) - t0 )) s"
