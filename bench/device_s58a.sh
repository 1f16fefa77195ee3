#!/usr/bin/env bash
# Session 58's first call: the producer's O store (Fused16Form PO). (1) gpu_gdn and gpu_gdn_pdl on
# device71.txz (the product's w4c and b2c entries with the lean step and PO); (2) the harness
# (bench/gdn_fused16_bench.cu): every CHECK, then the PO forms against the landing ones, alternating,
# two rounds; (3) the forward by rule through the product, main's pack (device70.txz, session 57's
# landing .text) against device71, alternating, two rounds.
# run: command "bash bench/device_s58a.sh", any kind, carry [".xfer-tests68"]. ~250 s.
# (Rewritten after the call onto bench/device_lib.sh's one-pass helpers: the same steps.)
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
dev_pack main device70.txz
dev_pack new device71.txz
dev_f16_build &
dev_pack_tests new
dev_elapsed
wait
dev_f16_checks "w4c|b2c|w8|b2"
dev_f16_rounds w4c-lt,b2c,w8,b2,w4c-po,w4c-po16,b2c-po,w8-po,b2-po
dev_elapsed
dev_pack_fwd_ab main new
dev_elapsed
