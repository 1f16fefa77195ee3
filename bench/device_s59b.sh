#!/usr/bin/env bash
# Session 59's second call: (1) the harness (every form on the lean step; the two-block forms'
# registers moved to the chain's warpgroup, CR / PR) — every CHECK, then alternating timings, two
# rounds; (2) gpu_gdn and gpu_gdn_pdl on device75.txz (every product form on the lean step, b2c
# with the early test); (3) the forward by rule through the product, main (devicemain58.txz)
# against device75, two rounds.
# run: command "bash bench/device_s59b.sh", any kind, carry [".xfer-tests68"]. ~330 s.
# (Rewritten after the call onto bench/device_lib.sh's one-pass helpers: the same commands.)
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
dev_f16_build &
dev_pack main devicemain58.txz
dev_pack new device75.txz
dev_pack_tests new
dev_elapsed
wait
dev_f16_checks "b2|w8c|b2c"
dev_f16_rounds w8c,b2c,b2c-late,b2c-norf,b2c-rg152,b2c-rg168,b2,b2-rg152,w8
dev_elapsed
dev_pack_fwd_ab main new
dev_elapsed
