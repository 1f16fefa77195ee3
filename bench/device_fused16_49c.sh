#!/usr/bin/env bash
# Session 49, the closing call: gpu_gdn (every test) and gpu_gdn_pdl on the tree that landed (the
# one-pass forward's final rule, the saving / checkpoint tests comparing bits with the two passes),
# then gdn_benchmark_ours at the four shapes (forward by rule; training step).
# run: command "bash bench/device_fused16_49c.sh", carry [".xfer-final"] (device49c.txz: this tree's pack).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
t0=$(date +%s)
tar xJf .xfer-final/device49c.txz
source .device/device-env.sh > /dev/null 2>&1
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
g=$(ls .device/tests/gpu_gdn-* | head -1)
timeout 150 "$g" --test-threads=1 > $OUT/gpu_gdn.log 2>&1
echo "gpu_gdn rc=$?"; grep -E "^test |test result|panicked" $OUT/gpu_gdn.log | grep -v "\.\.\. ok$" | head -20
pd=$(ls .device/tests/gpu_gdn_pdl-* | head -1)
timeout 40 "$pd" --test-threads=1 > $OUT/gpu_gdn_pdl.log 2>&1; echo "gpu_gdn_pdl rc=$?"; grep "test result" $OUT/gpu_gdn_pdl.log
echo "elapsed $(( $(date +%s) - t0 )) s"
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES="default:::" DNNPLAN_GDN_BENCH_SHAPES="0 1 2 3" timeout 90 "$b" gdn_benchmark_ours --test-threads=1 --nocapture > $OUT/ours.log 2>&1
echo "ours rc=$?"; grep -E "BENCH ours (fwd|fwdbwd|replay) |panicked" $OUT/ours.log | sed 's/^test gdn_benchmark_ours ... //' | cut -c1-200 | head -16
echo "elapsed $(( $(date +%s) - t0 )) s"
