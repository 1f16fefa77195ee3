#!/usr/bin/env bash
# Session 78: the chain floor of a one-pass backward at chunk 16 (bench/gdn_bwd1p_chain_bench.cu: the
# recompute and reverse chains alone and co-running, then with product warps and the factor build,
# against the forward one pass's chain measured in the same process; two rounds per shape). Either GPU
# kind: the answer is a ratio to the forward's chain on the same card. Needs no pack and no carry;
# ~40 s of command (build ~25 s). NCU=1 then profiles fwd and prodb at (4,8192,16) (~60 s more): speed
# of light, scheduler and warp-state statistics, instruction statistics.
# run: command "bash bench/device_s78_bwd1p.sh".
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
export PATH=/usr/local/cuda/bin:$PATH
nvcc -std=c++17 -O3 -arch=sm_90a -Ikernels/include -Ibench bench/gdn_bwd1p_chain_bench.cu -o /tmp/bwd1p 2>&1 |
  grep -v warning | head -5
timeout 120 /tmp/bwd1p 20 2>&1 | tee "${OUT:-/tmp}/bwd1p.log"
echo "elapsed $(( $(date +%s) - t0 )) s"
if [ "${NCU:-0}" = 1 ]; then
  ncu_bin=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
  for entry in fwd prodb; do
    BWD1P_ONLY=$entry BWD1P_SHAPES=0 timeout 120 "$ncu_bin" -k regex:"${entry}_kernel" -c 1 \
      --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section InstructionStats \
      --section LaunchStats /tmp/bwd1p 1 > "${OUT:-/tmp}/bwd1p_ncu_$entry.txt" 2>&1
    echo "ncu $entry rc=$?"
    grep -E "Duration|Issue Slots|Issued Ipc|Eligible|No Eligible|Warp Cycles|Stall|Pipe|Registers" \
      "${OUT:-/tmp}/bwd1p_ncu_$entry.txt" | head -40
  done
  echo "elapsed $(( $(date +%s) - t0 )) s"
fi
