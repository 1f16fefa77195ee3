#!/usr/bin/env bash
# Session 59's eighth call (harness only): the one-pass forms' fixed cost per block and the last
# wave's (FUSED16_SHAPES=waves: (16,2048,32) beside (16,4096,32), (16,1024,32) and (33,2048,16)),
# b2c and w8c, two rounds. For the next session's choice of a persistent b2c.
# run: command "bash bench/device_s59h.sh", any kind. ~100 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin build
dev_f16_rounds b2c,w8c,b2c-late 2 FUSED16_SHAPES=waves
dev_f16_rounds b2c,w8c 1
dev_elapsed
