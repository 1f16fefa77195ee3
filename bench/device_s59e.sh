#!/usr/bin/env bash
# Session 59's sixth call (harness only): the WG chain with six producer warps (w6c-wg), w4c-wg on 16
# stages and with the remote forward, against w8c, w4c-wg, w6c. Every CHECK, then alternating, two rounds.
# run: command "bash bench/device_s59e.sh", any kind. ~120 s.
# (Rewritten after the call onto bench/device_lib.sh's one-pass helpers: the same commands.)
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin build
dev_f16_checks ".*wg"
dev_f16_rounds w8c,w4c-wg,w6c,w6c-wg,w4c-s16-wg,w4c-rf-wg
dev_elapsed
