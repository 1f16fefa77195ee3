#!/usr/bin/env bash
# Session 60's third call: b2p with the chain's lane offsets kept in registers (an opaque lane: the
# chain step 271 instructions against b2c's 270, was 283). The harness only: b2p against b2c at the
# benchmark shapes (two rounds) and the wave shapes (with and without states), its CHECKs.
# run: command "bash bench/device_s60c.sh", any kind. ~110 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin build
dev_f16_rounds b2c,b2p 2
dev_f16_rounds b2c,b2p 1 FUSED16_SHAPES=waves
dev_f16_rounds b2c,b2p 1 FUSED16_SHAPES=waves FUSED16_STATES=none
dev_elapsed
dev_f16_checks "b2c|b2p"
dev_elapsed
