#!/usr/bin/env bash
# Session 78: the chain floor of a one-pass backward at chunk 16 (bench/gdn_bwd1p_chain_bench.cu: the
# recompute and reverse chains alone and co-running, against the forward one pass's chain measured in
# the same process; two rounds per shape). Either GPU kind: the answer is a ratio to the forward's
# chain on the same card. Needs no pack and no carry; ~40 s of command (build ~25 s).
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
