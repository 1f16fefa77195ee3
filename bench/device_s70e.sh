#!/usr/bin/env bash
# Session 70, call 5: what the producer's q, k copies cost w8c and b2c. Call 4's ncu of w8c at
# (4,8192,16) (bench/device_s70d_h100_sass70_w8c.csv.gz): 835 shared-memory wavefronts per chunk and
# CTA, of which the cp.async (LDGSTS) writes 210 against 80 ideal (2.6x) and the chain's ldmatrix 432.
# Tensor-map copies would write the stage without the LSU's wavefronts; GDN_F16_ABLATE_QK_COPIES=1
# (bench only: a full chunk's q, k copies skipped, the stage keeps old rows; O wrong) bounds what that
# could save (it also drops their DRAM / L2 reads). Harness, main (f16bench_q0) against the ablation
# (f16bench_nocp), w8c and b2c at the four shapes, three alternating rounds.
# Staging (CPU machine): .xfer-ql70/f16bench_nocp = device_s70c.sh's nvcc line with
#   -DGDN_F16_ABLATE_QK_COPIES=1 instead of -DGDN_F16_QLATE=N, on the header with bench/gdn_nocp70_ablation.patch applied.
# run: command "bash bench/device_s70e.sh", carry [".xfer-ql70"], ~60 s; any kind.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
dev_f16_bins_rounds .xfer-ql70 "q0 nocp" w8c,b2c 2>&1 | tee "$OUT/s70e_nocp.log"
