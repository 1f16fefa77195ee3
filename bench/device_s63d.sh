#!/usr/bin/env bash
# Session 63's fourth call: b2c's WG / UW chain forms with setmaxnreg (CR / PR: the chain's
# warpgroup raised to 160 or 176 registers, the producer's lowered to 96 or 80), on branch
# s63-wgrg's tree (bench/gdn_wg61_chain.patch applied plus CR / PR; see its commit): every harness
# CHECK, then the timings of b2c, b2c-wgu-r160, b2c-wgu-r176, b2c-wg-r160, b2c-u-r160 and w8c at the
# benchmark shapes, three rounds.
# run: command "bash bench/device_s63d.sh", any kind (~120 s). Output: bench/device_s63d_*.
# Ran at 08194d2; since 60d3f2d b2c-wgu-r160 is the product's b2c (entry `b2c`; the mma.sync one `b2c-mma`).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_begin s63d
dev_f16_begin build
grep -E "error" "$DEV_TMP/f16.build" | head -5
dev_f16_checks "b2c"
grep -E "CHECK .*-(r160|r176) " "$OUT/harness_checks.log" | cut -c1-140
dev_elapsed
dev_f16_rounds b2c,b2c-wgu-r160,b2c-wgu-r176,b2c-wg-r160,b2c-u-r160,w8c 3
dev_elapsed
