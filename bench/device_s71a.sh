#!/usr/bin/env bash
# Session 71, call 2: w8c on the swizzled stage (Fused16Form SQ, the harness's `w8c-sq`: its chain
# and update still on mma.sync, the q̂ / k̂ fragments by ldmatrix from the 128-byte-swizzled rows),
# with its q, k rows by cp.async (f16bench_sq0), by per-CTA tensor-map boxes (sq1: GDN_F16_TMA_QK=1)
# and by boxes multicast into both CTAs of the pair (sq2: =2), beside w8c and b2c.
# 1. The harness's checks on sq1 and sq2 (every entry against the fp64 recurrence).
# 2. w8c, w8c-sq, b2c at the four shapes, three rounds alternating the binaries.
# Staging (CPU machine): on 1460772, `git apply bench/gdn_sq71_w8c_tma.patch` (session 70's two TMA
# patches and the SQ form with its harness entry `w8c-sq`), then for N in 0 1 2: nvcc -std=c++17 -O3 -L$CU/lib -DGDN_F16_TMA_QK=N -gencode
# arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o .xfer-s71/f16bench_sqN.
# run: command "bash bench/device_s71a.sh", carry [".xfer-s71"], ~90 s; any kind.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
dev_f16_bins_checks .xfer-s71 "sq1 sq2" "w8c|w8c-sq|b2c"
dev_f16_bins_rounds .xfer-s71 "sq0 sq1 sq2" w8c,w8c-sq,b2c 2>&1 | tee "$OUT/s71a_rounds.log"
