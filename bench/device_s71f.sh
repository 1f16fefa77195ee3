#!/usr/bin/env bash
# Staged in session 71 (not run: the device budget could not start another machine): the landing
# candidate rebuilt (bench/gdn_tq71_candidate.patch, branch s71-tq: b2c without RF, a full chunk's
# q, k by multicast boxes, the maps' address by GDN_FUSED16_QK_MAPS' inline PTX).
# 1. With HARNESS=1, the harness (.xfer-s71): checks of tq0; b2cl (TQ)
#    / b2cl-cp (no RF, cp.async) in tq0 against m2's b2cl-norf (the patch's multicast), two rounds.
# 2. gpu_gdn and gpu_gdn_pdl on the candidate's pack (device72.txz).
# 3. forward_parity's hashes with b2c forced: main (device90.txz) against the candidate.
# 4. The forward through the product, main (m) and the candidate (n) alternating, two rounds: by
#    rule at RULE_SHAPES (default 2: (16,2048,32), b2c's), then b2c forced at (4,8192,16) and the
#    ragged mix.
# Staging (CPU machine): on main, `git apply bench/gdn_tq71_candidate.patch` (or check out s71-tq),
# bash kernels/build-cubins.sh, then device_s71d.sh's cargo / packing recipe into
# .xfer-tests71/device72.txz, with main's pack device90.txz copied beside it (.xfer-tests69's; or
# main's own build packed the same way); harness binaries .xfer-s71/f16bench_tq0 (the patched tree's
# bench/gdn_fused16_bench.cu) and f16bench_m2 (bench/gdn_tma71_mc_rf.patch on 5fa94ad,
# -DGDN_F16_TMA_QK=2), device_s71c.sh's nvcc line. (Session 71 left all of these in the ignored
# .xfer-tests71 / .xfer-s71.)
# run: command "bash bench/device_s71f.sh", carry [".xfer-tests71", ".xfer-s71"] (device90.txz copied there),
# ~130 s (HARNESS=1 and RULE_SHAPES="0 1 2 3": ~230 s); any kind. On an H200: "TABLE=1 bash
# bench/device_s71f.sh", carry [".xfer-tests71", ".xfer-final"], the rest of 575 s for the table.
# Reading: gpu_gdn green, BITWISE, the candidate faster at (16,2048,32) -> merge branch s71-tq (or
# apply the patch and rebuild the cubins) and record the numbers.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
DEV_TMP=/tmp/s71f && mkdir -p $DEV_TMP
if [ "${HARNESS:-0}" = 1 ]; then
  dev_f16_bins_checks .xfer-s71 tq0 b2cl
  dev_f16_bins_rounds .xfer-s71 "m2 tq0" b2cl,b2cl-norf,b2cl-cp 2 2>&1 | tee "$OUT/s71f_harness.log" | grep -v '^m2 r. FUSED16 b2cl '
  dev_elapsed
fi
DEV_PACKS=.xfer-tests71 dev_pack m device90.txz
DEV_PACKS=.xfer-tests71 dev_pack n device72.txz
echo "== gpu_gdn on the candidate"
dev_pack_tests n
dev_elapsed
dev_pack_fwd_same m n "forward_parity, b2c forced: main / candidate" DNNPLAN_GDN_FWD_FUSED=b2c 2>&1 | tee "$OUT/s71f_hashes.log"
dev_pack_fwd_rule_and_form m n "${RULE_SHAPES:-2}" b2c "0 3" 2 s71f
# 5. TABLE=1 (carry .xfer-final too, without .xfer-s71: the 64 MiB limit): issue 8's table on the
#    candidate's pack (device_peers_55b.sh), on an H200 only (issue 8's GPU; the H100's is session 70's).
if [ "${TABLE:-0}" = 1 ] && nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200; then
  mkdir -p .xfer-tests68 && cp .xfer-tests71/device72.txz .xfer-tests68/device68.txz
  BUDGET=$(( 575 - $(date +%s) + T0 )) bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s71f_table.log"
  dev_elapsed
fi
