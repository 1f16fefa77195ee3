#!/usr/bin/env bash
# Session 70, call 6: b2c's q, k by tensor-map boxes (GDN_F16_TMA_QK, bench only) in the harness.
# Call 5 bounded what copies that cost the L1 pipe nothing could save (q, k copies skipped: b2c
# −6..−7.5 %, w8c −3..−6 %). The swizzled cluster forms' stage is exactly the 128-byte swizzle's
# layout, so a full chunk's q, k rows are four boxes (64 channels x 16 tokens) issued by lane 0 of
# the copying producer warp, completed on a per-stage `landed` barrier; v and partial chunks stay on
# cp.async. w8c (unswizzled stage) is unchanged: the control.
# 1. The harness's checks on the TMA binary (every entry against the fp64 recurrence; b2c's kin on
#    the boxes).
# 2. b2c, w8c at the four shapes: main (f16bench_q0) against TMA (f16bench_tma), three rounds.
# Staging (CPU machine): .xfer-ql70/f16bench_tma = device_s70c.sh's nvcc line with
#   -DGDN_F16_TMA_QK=1 (bench/gdn_tma70_qk.patch applied).
# run: command "bash bench/device_s70f.sh", carry [".xfer-ql70"], ~70 s; any kind.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
echo "== harness checks, TMA_QK"
F16BENCH=.xfer-ql70/f16bench_tma dev_f16_checks "b2c|w8c" tma
echo "elapsed $SECONDS s"
dev_f16_bins_rounds .xfer-ql70 "q0 tma" b2c,w8c 2>&1 | tee "$OUT/s70f_tma.log"
