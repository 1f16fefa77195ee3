#!/usr/bin/env bash
# Session 57's third call: the chain bench (bench/chain_ksplit_bench.cu) with wgpq (P and Q as one
# wgmma m64n32k16 chain of the warpgroup), the relaxed release and the O store alone. Any kind, no carry, ~40 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/chain_ksplit_bench.cu -o /tmp/ksplit && timeout 120 /tmp/ksplit
