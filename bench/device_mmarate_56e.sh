#!/usr/bin/env bash
# Session 56's last call (staged, not run): the mma.sync m16n8k16 and wgmma m64nNk16 rates on this GPU (bench/mma_sync_rate_bench.cu),
# the one pass's chain's suspected bound.
# run: command "bash bench/device_mmarate_56e.sh" (any kind; no carry).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/mma_sync_rate_bench.cu -o /tmp/mmarate && timeout 120 /tmp/mmarate
