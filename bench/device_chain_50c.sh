#!/usr/bin/env bash
# Session 50's third device call: what bounds the one pass's chain. 1. bench/gdn_fused16_bench.cu:
# w8, b2 and their chains alone / producers alone (two chain warps per scheduler in b2's chain
# alone: if the chain were bound by its dependencies, b2's chain alone would run about twice w8's
# rate per SM); 2. ncu on one launch each of w8's chain alone, b2's chain alone and w8 at
# (4,8192,16): tensor-pipe activity, issue activity, every stall reason per issued instruction,
# and the hottest stall locations of w8's chain alone. No pack needed (the harness builds on the device).
# run: command "bash bench/device_chain_50c.sh" (no carry).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
NVCC=$(command -v nvcc || ls /usr/local/cuda*/bin/nvcc 2>/dev/null | head -1)
$NVCC -std=c++17 -O3 -arch=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o /tmp/f16bench 2>&1 | grep -v "^$" | tail -5
FUSED16_ONLY=w8,b2,w8-chain-only,b2-chain-only,w8-producer,b2-producer timeout 60 /tmp/f16bench 10 > $OUT/fused16.log 2>&1
grep -E "^FUSED16|all checks|FAIL" $OUT/fused16.log
echo "elapsed $(( $(date +%s) - t0 )) s"
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
M='regex:^smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio$,sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__cycles_elapsed.avg,smsp__warps_active.avg.per_cycle_active,gpu__time_duration.sum'
for k in w8_chainonly b2_chainonly w8; do
  [ $(( $(date +%s) - t0 )) -gt 300 ] && { echo "time guard"; break; }
  name=$(echo $k | sed 's/_chainonly/-chain-only/')
  FUSED16_ONLY=$name timeout 90 $NCU --clock-control none -k regex:"fused16_bf16_${k}\$" --launch-skip 2 --launch-count 1 --metrics "$M" /tmp/f16bench 1 > $OUT/ncu_$k.log 2>&1
  echo "== ncu $k (rc $?)"; grep -E "smsp__|sm__|gpu__" $OUT/ncu_$k.log | awk '$NF+0 > 0.05 || /pct|sum|avg/' | sed -E 's/ +/ /g' | head -40
done
if [ $(( $(date +%s) - t0 )) -lt 300 ]; then
  FUSED16_ONLY=w8-chain-only timeout 90 $NCU --clock-control none -k regex:"fused16_bf16_w8_chainonly\$" --launch-skip 2 --launch-count 1 --section SourceCounters --section InstructionStats /tmp/f16bench 1 > $OUT/ncu_src.log 2>&1
  echo "== ncu source counters (rc $?)"; grep -vE "^==PROF==|^\s*$" $OUT/ncu_src.log | tail -60
fi
echo "elapsed $(( $(date +%s) - t0 )) s"
