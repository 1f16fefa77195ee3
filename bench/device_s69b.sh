#!/usr/bin/env bash
# Session 69, call 2: the landing candidates through the product, the tests, and issue 8's table.
# Call 1 (device_s69a.sh, H100): the O store as one 16-byte store per row (STG, inline-asm predicated
# store) −2.7 % at (4,8192,16) and −3.7 % on the ragged mix with w8c, +1.7 % with b2c at
# (16,2048,32); the lazily scaled state (LS) on top +6-7 % with w8c, −2.3 % with b2c.
# 1. The forward by rule, alternating, two rounds at the one pass's shapes: main (device82.txz),
#    C1 (device87.txz: STG by __stwb, no asm, b2c on LS, w8c eager) and C2 (device88.txz: STG by the
#    asm store st_global16_if, b2c on LS, w8c eager: call 1's faster kernel of each form).
# 2. gpu_gdn and gpu_gdn_pdl on C1.
# 3. Issue 8's table on C1 (device_peers_55b.sh: ours, the KDA path, fla-core 0.6.0), the rest of
#    the call's time.
# Staging (CPU machine, from the repository root): C1 = this tree; C2 = it with store_o on
#   st_global16_if; each: bash kernels/build-cubins.sh, then device_s68c.sh's cargo test --no-run
#   and packing. device82: device_s67a.sh's staging.
# run: command "bash bench/device_s69b.sh", carry [".xfer-tests68", ".xfer-final"], ~560 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
dev_pack s66t device82.txz
dev_pack c1 device87.txz
dev_pack c2 device88.txz
echo "== the forward by rule: main (s66t), C1, C2"
dev_pack_fwd_packs "s66t c1 c2" "0 2 3" 2 2>&1 | tee "$OUT/s69b_fwd_abc.log"
echo "elapsed $SECONDS s"
dev_pack_tests c1
echo "elapsed $SECONDS s"
if [ -d .xfer-final/whl ] && [ "$SECONDS" -lt 330 ]; then
  cp .xfer-tests68/device87.txz .xfer-tests68/device68.txz
  BUDGET=$(( 575 - SECONDS )) bash bench/device_peers_55b.sh 2>&1 | tee "$OUT/s69b_table.log"
fi
echo "elapsed $SECONDS s"
