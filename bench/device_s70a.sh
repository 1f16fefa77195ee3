#!/usr/bin/env bash
# Staged in session 69 (no device time left): the chunk build's mma A fragments by ldmatrix in the
# A order instead of register moves (bench/gdn_aload69.patch). w8c's chunk build issued ~110
# IMAD.MOV.U32 beside its 32 HMMA (each A fragment {b0, b2, b1, b3} copied out of the B fragments'
# registers, often once per HMMA); with q̂'s A fragment loaded in the A order (no extra load: q̂ is
# only ever A there) and k̂'s by a second ldmatrix (+8 LDSM per build), the producer's loop is
# 1,606 → 1,508 instructions per pair of chunks (w8c) and 1,750 → 1,664 (b2c); q̂ alone (A0):
# 1,558 / 1,705. The same registers reach the mma, so the outputs are bitwise main's.
# 1. The forward by rule, alternating, three rounds at the one pass's shapes: main (device90.txz:
#    7365f3b), A1 (device91.txz: the patch, GDN_F16_A_LOADS 1) and A0 (device92.txz: the patch with
#    GDN_F16_A_LOADS 0).
# 2. gpu_gdn and gpu_gdn_pdl on A1, then on A0 with time left (logs gpu_gdn*_a1.log, gpu_gdn*_a0.log;
#    A1's are gpu_gdn*.log when A0 is skipped).
# 3. With .xfer-final carried, on an H200 and time left: issue 8's table on TABLE_PACK (default
#    device91.txz; device_peers_55b.sh).
# Staging (CPU machine, from the repository root; packs already in .xfer-tests69 if it survived):
#   device90 = 7365f3b's pack (.xfer-tests68/device89.txz); device91 = `git apply
#   bench/gdn_aload69.patch`, bash kernels/build-cubins.sh, then device_s68c.sh's cargo test --no-run
#   and packing into .xfer-tests69; device92 the same with the macro's default 0.
# run: command "bash bench/device_s70a.sh", carry [".xfer-tests69", ".xfer-final"], ~200 s without
# the table (the table takes the rest of 590 s).
# Reading: A1 or A0 faster with gpu_gdn green -> apply the patch (the faster default), rebuild the
# cubins; the records say why.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
export DEV_PACKS=.xfer-tests69
dev_pack m device90.txz
dev_pack a1 device91.txz
dev_pack a0 device92.txz
echo "== the forward by rule: main (m), A1, A0"
dev_pack_fwd_packs "m a1 a0" "0 2 3" 3 2>&1 | tee "$OUT/s70a_fwd_abc.log"
echo "elapsed $SECONDS s"
dev_pack_tests a1
echo "elapsed $SECONDS s"
if [ "$SECONDS" -lt 300 ]; then
  mv "$OUT/gpu_gdn.log" "$OUT/gpu_gdn_a1.log"; mv "$OUT/gpu_gdn_pdl.log" "$OUT/gpu_gdn_pdl_a1.log"
  dev_pack_tests a0
  mv "$OUT/gpu_gdn.log" "$OUT/gpu_gdn_a0.log"; mv "$OUT/gpu_gdn_pdl.log" "$OUT/gpu_gdn_pdl_a0.log"
fi
echo "elapsed $SECONDS s"
if [ -d .xfer-final/whl ] && nvidia-smi --query-gpu=name --format=csv,noheader | grep -q H200 && [ "$SECONDS" -lt 330 ]; then
  mkdir -p .xfer-tests68 && cp ".xfer-tests69/${TABLE_PACK:-device91.txz}" .xfer-tests68/device68.txz
  BUDGET=$(( 575 - SECONDS )) bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s70a_table.log"
fi
echo "elapsed $SECONDS s"
