#!/usr/bin/env bash
# Staged in session 63 for the next session (not run): where b2c (two blocks per SM, since session
# 63 on the wgmma chain) starts to beat w8c (one block per SM), to reset the rule's switch
# (FUSED16_TWO_PER_SM_WAVES = 4, set against the mma.sync b2c). The harness's FUSED16_SHAPES=cross
# (128-640 blocks, equal lengths: 0.97-4.85 waves of single blocks), w8c / b2c / b2c-mma, two rounds.
# Between one and four waves the rule also weighs the two passes (FUSED16_MIN_FILL_PCT): time them
# through the product at the shape where b2c first wins before moving the switch.
# run: command "bash bench/device_s64a.sh", any kind (~90 s). Output: bench/device_s64a_*.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_begin s64a
dev_f16_begin build
dev_f16_checks "w8c|b2c"
dev_f16_rounds w8c,b2c,b2c-mma 2 FUSED16_SHAPES=cross
dev_elapsed
