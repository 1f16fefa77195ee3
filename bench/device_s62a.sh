#!/usr/bin/env bash
# Staged in session 61 for the next session (no device time was left): the chain's q̂ / k̂ / K̂ reads
# once per warpgroup (bench/gdn_wg61_chain.patch: WG, P and Q by wgmma; UW, the update by wgmma),
# against the L1 data-pipe bound session 61 measured on b2c. Applies the patch to the device's
# copy, builds the harness, runs every CHECK (WG / UW against fp64), times w8c / w8c-wg / w8c-wgu /
# w8c-u and b2c / b2c-wg / b2c-wgu / b2c-u (-u: the update alone by wgmma) at the benchmark shapes
# (two rounds) and the wave shapes, the chains alone, then ncu's LSU wavefronts
# (bench/device_s61d.sh) of w8c, w8c-wgu, w8c-u at (4,8192,16) and of b2c, b2c-wg, b2c-u at
# (16,2048,32). b2ph (session 60's persistent b2c, never measured on an H200) rides along.
# run: command "bash bench/device_s62a.sh", any kind. ~250 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
git apply bench/gdn_wg61_chain.patch 2>/dev/null || patch -p1 -s < bench/gdn_wg61_chain.patch || exit 1
dev_f16_begin build
dev_f16_checks "w8c|b2c"
grep -E "CHECK .*-(wg|wgu|u) " "$OUT/harness_checks.log" | cut -c1-120
dev_elapsed
dev_f16_rounds w8c,w8c-wg,w8c-wgu,w8c-u,b2c,b2c-wg,b2c-wgu,b2c-u,b2ph 2
dev_f16_rounds w8-chain-only,w8-wg-chain-only,w8-wgu-chain-only 1
dev_f16_rounds w8c,w8c-wgu,w8c-u,b2c,b2c-wg,b2c-u 1 FUSED16_SHAPES=waves
dev_elapsed
for e in w8c w8c-wgu w8c-u; do bash bench/device_s61d.sh "$e" '(4,8192,16)' | grep -E "rc=|wavefronts|ldsm|cycles_elapsed"; done
for e in b2c b2c-wg b2c-u; do bash bench/device_s61d.sh "$e" '(16,2048,32)' | grep -E "rc=|wavefronts|ldsm|cycles_elapsed"; done
dev_elapsed
