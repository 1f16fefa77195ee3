#!/usr/bin/env bash
# Session 70, call 2: the mma.sync chain's readout (Q) moved off its serial path (QL,
# GDN_F16_QLATE in kernels/include/gdn_fwd_fused16.cuh), measured in the harness. ptxas orders the
# step by its own schedule whatever the source order (QLATE 2, 3 compile to 1's and main's SASS), so
# 4-7 tie Q's B loads (or the decay) to Rᵀ / Uᵀ through an opaque zero (the harness's null ws_gl):
# the same bits. SASS of w8c's step (census): 0 = main (P and Q interleaved, then Rᵀ, Uᵀ, the
# update), 1 (Q and the decay hoisted before Rᵀ by ptxas), 6 (P; Uᵀ; then Q beside the update, Q
# waiting for Uᵀ), 7 (P; Uᵀ and Q both after Rᵀ, Q filling Uᵀ's latency).
# 1. The harness's checks on QLATE 7 (every entry against fp64; w8c and its kin).
# 2. w8c and the chain alone (w8-chain-only) at the four shapes, QLATE 0 / 1 / 6 / 7 alternating,
#    three rounds.
# Staging (CPU machine): .xfer-ql70/f16bench_q{0,1,6,7} = nvcc -std=c++17 -O3 -DGDN_F16_QLATE=N
#   -L$CU/lib -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu (CU: the nvcc venv's nvidia/cu13).
# run: command "bash bench/device_s70c.sh", carry [".xfer-ql70"], ~250 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
echo "== harness checks, QLATE 7"
F16BENCH=.xfer-ql70/f16bench_q7 dev_f16_checks "w8c|w8|b1" q7
echo "elapsed $SECONDS s"
dev_f16_bins_rounds .xfer-ql70 "q0 q1 q6 q7" w8c,w8-chain-only 2>&1 | tee "$OUT/s70c_ql.log"
