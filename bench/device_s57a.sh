#!/usr/bin/env bash
# Session 57's first call: the mma.sync / wgmma rates (bench/mma_sync_rate_bench.cu, session 56's
# staged bench) and the chain in isolation against two ways of putting 8 warps on it
# (bench/chain_ksplit_bench.cu). Any kind, no carry, ~90 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
F="-std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench"
nvcc $F bench/chain_ksplit_bench.cu -o /tmp/ksplit & nvcc $F bench/mma_sync_rate_bench.cu -o /tmp/mmarate; wait
timeout 120 /tmp/ksplit
timeout 120 /tmp/mmarate
