#!/usr/bin/env bash
# Session 60's fourth call: where b2p's ~5 % per chunk goes at one unit per cluster. The harness:
# b2c, b2p and their producers alone (the chains only take and release the stages) at the
# benchmark shapes, two rounds; b2p's producer turn on 32-bit token rows with unit-local chunks.
# run: command "bash bench/device_s60d.sh", any kind. ~90 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin build
dev_f16_rounds b2c,b2p,b2c-producer,b2p-producer 2
dev_elapsed
dev_f16_checks "b2c|b2p"
dev_elapsed
