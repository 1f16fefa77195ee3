#!/usr/bin/env bash
# Session 52's eighth device call (main with the 80 % wave-fill rule): gpu_gdn (every test) and
# gpu_gdn_pdl on the landing tree, then gdn_benchmark_ours by rule at (4,8192,16), (16,2048,32) and
# the ragged mix.
# run: command "bash bench/device_final_52h.sh", carry [".xfer-tests"] (device62.txz: main's GDN test binaries).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-tests/device62.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
g=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 150 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "^test |test result|panicked" $OUT/gpu_gdn.log | grep -v "\.\.\. ok$" | head -20
pd=$(ls .device/tests/gpu_gdn_pdl-* | head -1)
timeout 30 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 2 3" timeout 40 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours.log 2>&1
grep -E "BENCH ours fwd " $OUT/ours.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-150
echo "elapsed $(( $(date +%s) - t0 )) s"
