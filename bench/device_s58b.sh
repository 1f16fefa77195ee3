#!/usr/bin/env bash
# Session 58's second call: the prefetch (Fused16Form PF: the next chunk's q̂, k̂ B fragments loaded
# during the update). (1) gpu_gdn and gpu_gdn_pdl on device72.txz (the product's w4c entry with PF);
# (2) the harness: every CHECK, then w4c-po / w8-po against w4c-pf, w6c-po, w8c-po (and the w8
# chains alone), alternating, two rounds; (3) the forward by rule through the product, main's pack
# (device71.txz: w4c, b2c with PO) against device72, alternating, two rounds.
# run: command "bash bench/device_s58b.sh", any kind, carry [".xfer-tests68"]. ~250 s.
# (Rewritten after the call onto bench/device_lib.sh's one-pass helpers: the same steps.)
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
dev_pack main device71.txz
dev_pack new device72.txz
dev_f16_build &
dev_pack_tests new
dev_elapsed
wait
dev_f16_checks "w4c|w6c|w8c|w8-p"
dev_f16_rounds w4c-po,w8-po,w8-po-chain-only,w4c-pf,w6c-po,w8c-po,w8-pf-chain-only
dev_elapsed
dev_pack_fwd_ab main new
dev_elapsed
