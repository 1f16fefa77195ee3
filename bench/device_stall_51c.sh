#!/usr/bin/env bash
# Session 51's third device call: per-SASS-instruction warp-stall sampling (ncu source page) of one
# launch each of w8g's and w8p's chain alone at (4,8192,16) (bench/ncu_sass_stalls.py reads them),
# and the pipes' utilization of w8g / w8 whole.
# run: command "bash bench/device_stall_51c.sh" (no carry).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
$NVCC -std=c++17 -O3 -gencode=arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench 2>&1 | grep -v "^$" | grep -v C7512 | tail -5
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
echo "built $(( $(date +%s) - t0 )) s"
for k in w8g_chainonly w8p_chainonly; do
  name=$(echo $k | sed 's/_chainonly/-chain-only/')
  FUSED16_ONLY=$name timeout 120 $NCU --clock-control none -k regex:"fused16_bf16_${k}\$" --launch-skip 2 --launch-count 1 \
    --section SourceCounters --section WarpStateStats --page source --print-source sass --csv /tmp/f16bench 1 > $OUT/sass_$k.csv 2> $OUT/sass_$k.err
  echo "== $k rc=$? lines $(wc -l < $OUT/sass_$k.csv)"; tail -2 $OUT/sass_$k.err
  echo "elapsed $(( $(date +%s) - t0 )) s"
  [ $(( $(date +%s) - t0 )) -gt 200 ] && break
done
for k in w8g_chainonly w8g w8; do
  name=$(echo $k | sed 's/_chainonly/-chain-only/')
  FUSED16_ONLY=$name timeout 60 $NCU --clock-control none -k regex:"fused16_bf16_${k}\$" --launch-skip 2 --launch-count 1 \
    --metrics sm__inst_executed_pipe_tensor_op_hmma.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active,sm__inst_executed.sum,gpu__time_duration.sum,sm__cycles_elapsed.avg.per_second,smsp__issue_active.avg.pct_of_peak_sustained_active \
    /tmp/f16bench 1 > $OUT/metrics_$k.log 2>&1
  echo "== $k"; grep -E "pct|inst_executed.sum|duration|per_second" $OUT/metrics_$k.log | tail -8
  [ $(( $(date +%s) - t0 )) -gt 280 ] && break
done
gzip -9 $OUT/*.csv
echo "elapsed $(( $(date +%s) - t0 )) s"
