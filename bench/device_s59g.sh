#!/usr/bin/env bash
# Session 59's seventh call (harness only): b2c with three or two producer warps (b2c-p3, b2c-p2:
# more registers per thread under two blocks' launch bound) against b2c and w8c. Every CHECK, then
# alternating, two rounds.
# run: command "bash bench/device_s59g.sh", any kind. ~100 s.
# (Rewritten after the call onto bench/device_lib.sh's one-pass helpers: the same commands.)
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin build
dev_f16_checks "b2c|w8c"
dev_f16_rounds w8c,b2c,b2c-p3,b2c-p2
dev_elapsed
