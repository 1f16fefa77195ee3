#!/usr/bin/env bash
# Superseded by bench/device_s72e.sh (this call could not start; device73.txz has since moved to
# the ignored .xfer-merge72 to keep .xfer-tests72 within the carry limit).
# Session 72, call 4: the one pass's entries with their own blocks again (only b2c's takes
# gdn::Fused16TmaParams; every other form gdn::Fused16Params, 224 bytes): w8c, w4c, w8 and b2's SASS
# byte-identical to main before the merge (500d3c7), b2c's to the merged candidate. Pack o:
# device74.txz (75689b4, built 13:39 UTC; its cubins are every later tree's until kernels/ changes);
# m: device90.txz (500d3c7), n: device73.txz (the merge, 521e772).
# 1. gpu_gdn and gpu_gdn_pdl on o.
# 2. forward_parity's hashes: by rule o against m (w8c, w8 ...: the same code), b2c forced o against n.
# 3. The forward by rule at (4,8192,16) and the ragged mix (w8c), m o then o m (FWD_ROUNDS=0: none).
# run: command "bash bench/device_s72d.sh", carry [".xfer-tests72"], ~150 s; any kind.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_packs_begin s72d .xfer-tests72 m:device90.txz n:device73.txz o:device74.txz
echo "== gpu_gdn on o"
dev_pack_tests o
dev_elapsed
{ dev_pack_fwd_same m o "forward_parity by rule: before the merge / now"
  dev_pack_fwd_same n o "forward_parity, b2c forced: the merge / now" DNNPLAN_GDN_FWD_FUSED=b2c; } 2>&1 | tee "$OUT/s72d_hashes.log"
dev_elapsed
if [ "${FWD_ROUNDS:-1}" -gt 0 ]; then
  echo "== the forward by rule: m (500d3c7), o (now)"
  { dev_pack_fwd_packs "m o" "0 3" "${FWD_ROUNDS:-1}"; dev_pack_fwd_packs "o m" "0 3" "${FWD_ROUNDS:-1}"; } 2>&1 | tee "$OUT/s72d_fwd.log"
  dev_elapsed
fi
