#!/usr/bin/env bash
# Session 69, call 1: the O store as one 16-byte store per row (STG) and, on top of it, the lazily
# scaled state (LS, session 68's staged candidate) through the product; issue 8's table on an H200.
# 1. The forward by rule through the product (dev_pack_fwd_ab, alternating, two rounds at the one
#    pass's shapes): main (device82.txz) against STG (device85.txz: main with fused16_store_stage_o
#    on st_global16_if; nvcc 13.0 had split each row's uint4 store into four 4-byte stores under
#    branches), then STG against STG + LS (device86.txz: bench/gdn_ls68_product.patch on STG).
# 2. gpu_gdn and gpu_gdn_pdl on STG + LS (the forms test holds LS's w8c / b2c to the fp64 reference),
#    then on STG (logs gpu_gdn*_ls.log, then gpu_gdn*.log).
# 3. The harness (.xfer-abl68/f16bench: main's header before STG): its checks (LS's forms against
#    fp64 on the GPU), then w8c, w8cl, w8cl1, b2c, b2cl, HREPS rounds (default 1).
# 4. On an H200 with .xfer-final carried and time left: issue 8's table on STG (device_peers_55b.sh).
# Staging (CPU machine, from the repository root): device85 = main with store_o on st_global16_if
#   (the STG tree), device86 = it with `git show c4fbf4e:bench/gdn_ls68_product.patch | git apply`;
#   for each: bash kernels/build-cubins.sh, then the cargo test --no-run and packing of
#   device_s68c.sh's header. device82 and the harness: device_s68c.sh.
# run: command "bash bench/device_s69a.sh", carry [".xfer-abl68", ".xfer-tests68"] (with .xfer-final
# too the tree passes the 64 MiB limit), kind nvidia-h200 (~400 s).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
dev_pack s66t device82.txz
dev_pack s69s device85.txz
dev_pack s69l device86.txz
echo "== the forward by rule: main (s66t) against STG (s69s)"
dev_pack_fwd_ab s66t s69s "0 2 3" 2 2>&1 | tee "$OUT/s69a_fwd_ab_stg.log"
echo "== the forward by rule: STG (s69s) against STG + LS (s69l)"
dev_pack_fwd_ab s69s s69l "0 2 3" 2 2>&1 | tee "$OUT/s69a_fwd_ab_ls.log"
echo "elapsed $SECONDS s"
dev_pack_tests s69l
mv "$OUT/gpu_gdn.log" "$OUT/gpu_gdn_ls.log"; mv "$OUT/gpu_gdn_pdl.log" "$OUT/gpu_gdn_pdl_ls.log"
echo "elapsed $SECONDS s"
dev_pack_tests s69s
echo "elapsed $SECONDS s"
echo "== harness checks (log harness_checks.log)"
F16BENCH=.xfer-abl68/f16bench dev_f16_checks "w8c|w8cl|w8cl1|b2c|b2cl"
echo "== harness: w8c, w8cl, w8cl1, b2c, b2cl"
F16BENCH=.xfer-abl68/f16bench dev_f16_rounds w8c,w8cl,w8cl1,b2c,b2cl "${HREPS:-1}" 2>&1 | tee "$OUT/s69a_harness.log"
echo "elapsed $SECONDS s"
if [ -d .xfer-final/whl ] && nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && [ "$SECONDS" -lt 330 ]; then
  cp .xfer-tests68/device85.txz .xfer-tests68/device68.txz
  BUDGET=$(( 570 - SECONDS )) bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s69a_table.log"
fi
echo "elapsed $SECONDS s"
