#!/usr/bin/env bash
# Session 63's third call: the chunk-64 chain step with the factor builds beside it on every SM
# (bench/fused64_corun_bench.cu: one chain block and two build blocks per SM, two streams), and
# the factor build's tile at 4, 1 and 2 blocks per SM (bench/prep64_tile_bench.cu: the throughput,
# one block's tile latency, two tiles in flight).
# run: command "bash bench/device_s63c.sh", any kind (~40 s). Output: bench/device_s63c_*.log.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
exec > >(tee "$OUT/s63c.log") 2>&1
source .device/device-env.sh > "$OUT/env.log" 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
T0=$(date +%s)
b() { nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench "bench/$1.cu" -o "/tmp/$1" > "/tmp/$1.build" 2>&1 || { echo "BUILD FAILED $1"; tail -5 "/tmp/$1.build"; }; }
b fused64_corun_bench & p1=$!
b prep64_tile_bench & p2=$!
wait $p1 $p2
echo "built in $(( $(date +%s) - T0 )) s"
timeout 120 /tmp/fused64_corun_bench
timeout 120 /tmp/prep64_tile_bench
echo "elapsed $(( $(date +%s) - T0 )) s"
