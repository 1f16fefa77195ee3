#!/usr/bin/env bash
# Session 61's third call (the ncu part of call a, which hung before it): what bounds b2c's steady
# state at (16,2048,32): ncu's throughput sections of one launch (speed of light, compute pipes,
# memory tables: shared-memory wavefronts and bank conflicts, warp states), $OUT/ncu61_b2c.txt.
# run: command "bash bench/device_s61c.sh", any kind, on the machine of call b (its harness). ~90 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin
[ -x "$DEV_TMP/f16bench" ] || dev_f16_build
NCU=$(dev_ncu)
FUSED16_ONLY=b2c FUSED16_SHAPE='(16,2048,32)' timeout 110 $NCU --clock-control none -k regex:'fused16_bf16_b2c$' \
  --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
  --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats \
  "$DEV_TMP/f16bench" 1 > $OUT/ncu61_b2c.txt 2>&1
echo "ncu rc=$?"
grep -E "Duration|Throughput|Pipe|Busy|Bank|Wavefront|Warp Cycles Per Issued|Eligible|Shared" $OUT/ncu61_b2c.txt | head -50
dev_elapsed
