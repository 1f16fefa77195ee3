#!/usr/bin/env bash
# Session 59's tenth call: the staggered prologue (Fused16Form SP) on w8c and b2c. (1) the harness
# (w8c / b2c with SP against w8c-nosp / b2c-nosp) at the benchmark shapes and the wave shapes,
# built while (2) gpu_gdn and gpu_gdn_pdl run on device76.txz (w8c and b2c with SP); (3) the
# forward by rule through the product, device75 (a91c9f1) against device76, two rounds.
# run: command "bash bench/device_s59j.sh", any kind, carry [".xfer-tests68"]. ~200 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
dev_f16_build &
dev_pack main device75.txz
dev_pack new device76.txz
wait
dev_elapsed
dev_f16_rounds w8c,w8c-nosp,b2c,b2c-nosp 2
dev_f16_rounds w8c,w8c-nosp,b2c,b2c-nosp 1 FUSED16_SHAPES=waves
dev_elapsed
dev_pack_tests new
dev_elapsed
dev_pack_fwd_ab main new
dev_elapsed
dev_f16_checks "w8c|b2c"
dev_elapsed
