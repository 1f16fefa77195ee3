#!/usr/bin/env bash
# Session 71, call 6: b2c's multicast boxes made safe. The multicast measured in calls 1-2
# (GDN_F16_TMA_QK=2) writes a CTA's chunk into the peer's stage once this CTA's chains released it,
# but under the remote forward (RF, the product's b2c) a stage's empty barrier counts only the own
# CTA's chains: the peer's chains may still read the stage's previous chunk (a race; the checks
# passed, so it is rare, but the form is not correct). Two correct forms:
# - =3: the issuing CTA first waits for the peer's forward of that stage (empty[S + s]);
# - b2cl-norf (any binary): the product's b2c without RF, whose empty barriers count both CTAs'
#   chains, so =2's multicast is safe on it.
# 1. The harness's checks on m2 and m3. 2. b2cl and b2cl-norf at the four shapes, three rounds
# alternating f16bench_m0 (cp.async), m2 (racy multicast), m3 (multicast after the peer's forward).
# Staging (CPU machine): on a192d28, `git apply bench/gdn_tma71_mc_rf.patch` (session 70's two TMA
# patches, the wait of =3 and the harness entry b2cl-norf), then nvcc -std=c++17 -O3 -L$CU/lib -DGDN_F16_TMA_QK=N -gencode
# arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o .xfer-s71/f16bench_mN (N = 0, 2, 3).
# run: command "bash bench/device_s71c.sh", carry [".xfer-s71"], ~70 s; any kind.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
dev_f16_bins_checks .xfer-s71 "m2 m3" "b2cl|b2cl-norf"
dev_f16_bins_rounds .xfer-s71 "m0 m2 m3" b2cl,b2cl-norf 2>&1 | tee "$OUT/s71c_rounds.log"
