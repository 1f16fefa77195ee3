#!/usr/bin/env bash
# Session 59's ninth call (harness only): where the one pass's fixed cost per block (call h: ~0.06
# ms of b2c's 0.557 at (16,2048,32), ~14 µs per block generation) goes: the wave shapes with both
# states, with none, with the initial state only and the final state only; b2c and w8c, two rounds.
# run: command "bash bench/device_s59i.sh", any kind. ~120 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin build
for st in both none init final; do
  echo "== states $st"
  dev_f16_rounds b2c,w8c 2 FUSED16_SHAPES=waves FUSED16_STATES=$st
done
dev_elapsed
