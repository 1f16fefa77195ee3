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
# The landing kernel's chain alone (w8, b2: one and two chains per sub-partition) beside w4c, for scale.
nvcc $F bench/gdn_fused16_bench.cu -o /tmp/f16bench && FUSED16_ONLY=w4c,w8-chain-only,b2-chain-only,w8-producer timeout 120 /tmp/f16bench 20 2>&1 | grep -E "^FUSED16|FAIL|all checks" | cut -c1-70
