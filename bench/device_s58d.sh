#!/usr/bin/env bash
# Session 58's fourth call: the remote forward (Fused16Form RF: a chain warp releases a stage on its
# own CTA's barrier only; the refilling producer warp forwards the release to the peer CTA, whose
# builder waits on it before pushing). (1) gpu_gdn and gpu_gdn_pdl on device74.txz (the product's
# w8c and b2c with RF); (2) the harness: every CHECK, then w8c-po / b2c-po against w8c-rf, b2c-rf
# and b2c-po-et (b2c with the early test), alternating, two rounds; (3) the forward by rule through
# the product, device73 (main: w8c, b2c with PO) against device74, alternating, two rounds.
# run: command "bash bench/device_s58d.sh", any kind, carry [".xfer-tests68"]. ~260 s.
# (Rewritten after the call onto bench/device_lib.sh's one-pass helpers: the same steps.)
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
dev_pack main device73.txz
dev_pack new device74.txz
dev_f16_build &
dev_pack_tests new
dev_elapsed
dev_pack_fwd_ab main new
dev_elapsed
wait
dev_f16_checks "w8c|b2c"
dev_f16_rounds w8c-po,b2c-po,w8c-rf,b2c-rf,b2c-po-et
dev_elapsed
