#!/usr/bin/env bash
# Session 60's eighth call: b2ph, the persistent b2c with the head fixed per cluster (grid HO · k
# clusters; cluster y serves head y % HO of every k-th sequence rank: the head's q / k / v offsets
# are the block's own, as in b2c; its producer loop 2,546 static instructions against b2c's 2,555
# and b2p's 2,707). The harness: b2c, b2p, b2ph at the benchmark shapes (two rounds) and the wave
# shapes, the producers alone at the benchmark shapes, its CHECKs.
# run: command "bash bench/device_s60h.sh", any kind. ~120 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin build
dev_f16_rounds b2c,b2p,b2ph 2
dev_f16_rounds b2c,b2p,b2ph 1 FUSED16_SHAPES=waves
dev_f16_rounds b2c-producer,b2p-producer,b2ph-producer 1
dev_elapsed
dev_f16_checks "b2c|b2p"
dev_elapsed
