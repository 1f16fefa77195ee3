#!/usr/bin/env bash
# Session 70, call 7 (staged): b2c's q, k boxes multicast into both CTAs of the pair
# (GDN_F16_TMA_QK=2, bench/gdn_tma70_qk_mc.patch on top of bench/gdn_tma70_qk.patch) beside call 6's
# per-CTA boxes (TMA_QK=1: −0.6..−2.2 %; the bound of any cheaper copy −6..−7.5 %): each CTA issues
# only its own chunk's four boxes (multicast mask 0b11) and announces the peer's bytes on its own
# `landed` barrier.
# 1. The harness's checks on the multicast binary (b2c's kin against the fp64 recurrence).
# 2. b2c at the four shapes: main (f16bench_q0), TMA (f16bench_tma), multicast (f16bench_tmamc),
#    three alternating rounds.
# Staging (CPU machine): .xfer-ql70/f16bench_tmamc = device_s70c.sh's nvcc line with
#   -DGDN_F16_TMA_QK=2 (bench/gdn_tma70_qk.patch, then bench/gdn_tma70_qk_mc.patch applied).
# run: command "bash bench/device_s70g.sh", carry [".xfer-ql70"], ~50 s; any kind. Staged in session 70
# (no device time left; the binaries are rebuilt from the patches: f16bench_q0 on main, f16bench_tma
# with bench/gdn_tma70_qk.patch and -DGDN_F16_TMA_QK=1, f16bench_tmamc with both patches and =2).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
echo "== harness checks, TMA_QK=2"
F16BENCH=.xfer-ql70/f16bench_tmamc dev_f16_checks "b2c" tmamc
echo "elapsed $SECONDS s"
dev_f16_bins_rounds .xfer-ql70 "q0 tma tmamc" b2c 2>&1 | tee "$OUT/s70g_tmamc.log"
