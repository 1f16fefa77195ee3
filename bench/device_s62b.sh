#!/usr/bin/env bash
# Session 62's call (session 61's staged call cut to the ~350 s of device time the refused starts
# left; its chain-only and wave-shape timings dropped): applies
# bench/gdn_wg61_chain.patch to the device's copy, builds the harness, runs every CHECK, times
# w8c / w8c-wgu / w8c-u / b2c / b2c-u / b2c-wgu at the benchmark shapes (two rounds), b2c-wg and
# b2ph (one round), then ncu's LSU wavefronts of w8c and w8c-wgu at (4,8192,16).
# run: command "bash bench/device_s62b.sh 2>&1 | tee $OUT/s62b.log", any kind. ~100 s on an H100.
# Its output: bench/device_s62b_h100*. Since session 62 the tree holds neither the patch's base nor
# b2ph: bench/gdn_wg61_chain.patch is rebased onto it, b2ph lives in bench/gdn_persist60.patch.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
git apply bench/gdn_wg61_chain.patch 2>/dev/null || patch -p1 -s < bench/gdn_wg61_chain.patch || exit 1
dev_f16_begin build
dev_f16_checks "w8c|b2c"
grep -E "CHECK .*-(wg|wgu|u) " "$OUT/harness_checks.log" | cut -c1-120
dev_elapsed
dev_f16_rounds w8c,w8c-wgu,w8c-u,b2c,b2c-u,b2c-wgu 2
dev_f16_rounds b2c-wg,b2ph 1
dev_elapsed
for e in w8c w8c-wgu; do bash bench/device_s61d.sh "$e" '(4,8192,16)' | grep -E "rc=|wavefronts|ldsm|cycles_elapsed"; done
dev_elapsed
