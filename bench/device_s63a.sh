#!/usr/bin/env bash
# Session 63's call: prices a one-pass forward at chunk 64 from its two parts in isolation, beside
# the chunk-16 chain on the same GPU: bench/chain_slim64_bench.cu (the two-pass scan's wgmma step
# on a static stage: whole step, O not stored, the state alone; one and two blocks per SM),
# bench/prep64_tile_bench.cu (one chunk-64 factor build, L2-resident inputs, the prep's residency)
# and bench/chain_ksplit_bench.cu's `base` (the one pass's chunk-16 chain step alone).
# run: command "bash bench/device_s63a.sh", any kind (~60 s). Output: bench/device_s63a_*.log.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_begin s63a
T0=$(date +%s)
dev_bench_build chain_slim64_bench & p1=$!
dev_bench_build prep64_tile_bench & p2=$!
dev_bench_build chain_ksplit_bench & p3=$!
wait $p1 $p2 $p3
echo "built in $(( $(date +%s) - T0 )) s"
timeout 120 "$DEV_TMP/chain_slim64_bench"
timeout 60 "$DEV_TMP/prep64_tile_bench"
timeout 120 "$DEV_TMP/chain_ksplit_bench" | grep -E "^(NVIDIA|base |base+o|two )"
dev_elapsed
