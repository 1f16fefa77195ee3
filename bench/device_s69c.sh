#!/usr/bin/env bash
# Session 69, call 3: a full chunk's copies without the zero-fill predicates (GDN_F16_FULL_COPIES=1,
# row pointers stepped: ~40 producer instructions for a chunk's 20 cp.async instead of ~116-133)
# through the product, now that the one pass's time follows its issued instructions (the O store's
# ~100 fewer per pair of chunks: −3 to −4 %). Session 54 measured it neutral on w4c, before the
# producer stored O.
# 1. The forward by rule, main (device87.txz: 77e0341's product, call 2's C1) against FC
#    (device89.txz: the same with GDN_F16_FULL_COPIES 1), alternating, three rounds.
# 2. gpu_gdn and gpu_gdn_pdl on FC.
# Staging: 77e0341 with the macro's default 1; bash kernels/build-cubins.sh; device_s68c.sh's
# cargo test --no-run and packing.
# run: command "bash bench/device_s69c.sh", carry [".xfer-tests68"] (~150 s).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
dev_pack c1 device87.txz
dev_pack fc device89.txz
echo "== the forward by rule: main (c1) against FC"
dev_pack_fwd_ab c1 fc "0 2 3" 3 2>&1 | tee "$OUT/s69c_fwd_ab.log"
echo "elapsed $SECONDS s"
dev_pack_tests fc
echo "elapsed $SECONDS s"
