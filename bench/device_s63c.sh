#!/usr/bin/env bash
# Session 63's third call: the chunk-64 chain step with the factor builds beside it on every SM
# (bench/fused64_corun_bench.cu: one chain block and two build blocks per SM, two streams), and
# the factor build's tile at 4, 1 and 2 blocks per SM (bench/prep64_tile_bench.cu: the throughput,
# one block's tile latency, two tiles in flight).
# run: command "bash bench/device_s63c.sh", any kind (~40 s). Output: bench/device_s63c_*.log.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_begin s63c
T0=$(date +%s)
dev_bench_build fused64_corun_bench & p1=$!
dev_bench_build prep64_tile_bench & p2=$!
wait $p1 $p2
echo "built in $(( $(date +%s) - T0 )) s"
timeout 120 "$DEV_TMP/fused64_corun_bench"
timeout 120 "$DEV_TMP/prep64_tile_bench"
dev_elapsed
