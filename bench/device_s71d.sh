#!/usr/bin/env bash
# Session 71, call 7: the landing candidate — the product's b2c without the remote forward and with
# a full chunk's q, k by tensor-map boxes multicast into both CTAs (Fused16Form TQ; branch s71-tq),
# against main's pack (device90.txz, the product before).
# 1. gpu_gdn and gpu_gdn_pdl on the candidate (device71.txz): the forms test holds b2c to the fp64
#    reference on edge lengths, GVA, pools and long spans; the most-sequences test.
# 2. forward_parity's hashes with b2c forced (DNNPLAN_GDN_FWD_FUSED=b2c): the candidate against main
#    (the same arithmetic: BITWISE expected).
# 3. The forward through the product, main (m) and the candidate (n) alternating, three rounds: by
#    rule at the four shapes, then b2c forced at the four shapes.
# 4. The harness (.xfer-s71/f16bench_tq, the candidate's header): its checks and b2cl (TQ) against
#    b2cl-rf (the product's b2c before) and b2cl-cp (no RF, cp.async), two rounds.
# Ran in session 71 on the candidate's first build (s71-tq at its first commit: the boxes' test
# computed apart from the copies' and &pp.qk_maps taken in C++; see gdn_results.md, session 71).
# Staging (CPU machine): on s71-tq, bash kernels/build-cubins.sh; CARGO_PROFILE_RELEASE_DEBUG=0
#   CARGO_PROFILE_RELEASE_STRIP=symbols cargo test --release --features gpu-tests --no-run --test
#   gpu_gdn --test gpu_gdn_pdl --test gpu_gdn_bench; pack the three binaries with
#   ../shared/scripts/device-env.sh into .xfer-tests71/device71.txz (device_s68c.sh's recipe); the
#   harness: nvcc ... bench/gdn_fused16_bench.cu -o .xfer-s71/f16bench_tq.
# run: command "bash bench/device_s71d.sh", carry [".xfer-tests69", ".xfer-tests71", ".xfer-s71"],
# ~450 s; any kind.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
DEV_TMP=/tmp/s71d && mkdir -p $DEV_TMP
DEV_PACKS=.xfer-tests69 dev_pack m device90.txz
DEV_PACKS=.xfer-tests71 dev_pack n device71.txz
echo "== gpu_gdn on the candidate"
dev_pack_tests n
dev_elapsed
echo "== forward_parity hashes, b2c forced: main vs candidate"
dev_pack_fwd_same m n "forward_parity, b2c forced: main / candidate" DNNPLAN_GDN_FWD_FUSED=b2c 2>&1 | tee "$OUT/s71d_hashes.log"
dev_elapsed
dev_pack_fwd_rule_and_form m n "0 1 2 3" b2c "0 1 2 3" 3 s71d
if [ "$(( $(date +%s) - T0 ))" -lt 470 ]; then
  F16BENCH=.xfer-s71/f16bench_tq dev_f16_checks "b2cl" tq
  F16BENCH=.xfer-s71/f16bench_tq dev_f16_rounds b2cl,b2cl-rf,b2cl-cp 2 2>&1 | tee "$OUT/s71d_harness.log"
fi
dev_elapsed
