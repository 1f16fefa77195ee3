#!/usr/bin/env bash
# Session 60's ninth call: device_s60g.sh's profile for b2c and b2ph (the head fixed per cluster):
# ncu's source page (per-SASS-instruction executions and warp-stall samples) and warp-state /
# instruction statistics of one launch each at (4,8192,16) (one unit per cluster: the same work),
# the harness's first timed launch after its CHECK launches (b2c: 2, b2ph: 4).
# run: command "bash bench/device_s60i.sh", any kind. ~70 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin build
NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu /opt/nvidia/nsight-compute/*/ncu 2>/dev/null | head -1)
$NCU --version | tail -1
for k in b2c:2 b2ph:4; do
  name=${k%%:*} skip=${k##*:}
  FUSED16_ONLY=$name timeout 150 $NCU --clock-control none -k regex:"fused16_bf16_${name}\$" --launch-skip $skip --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section InstructionStats --section SchedulerStats \
    --page source --print-source sass --csv "$DEV_TMP/f16bench" 1 > $OUT/sass60i_$name.csv 2> $OUT/sass60i_$name.err
  echo "== $name source rc=$? lines $(wc -l < $OUT/sass60i_$name.csv)"; tail -2 $OUT/sass60i_$name.err
  FUSED16_ONLY=$name timeout 100 $NCU --clock-control none -k regex:"fused16_bf16_${name}\$" --launch-skip $skip --launch-count 1 \
    --section WarpStateStats --section InstructionStats --section SchedulerStats --section SpeedOfLight "$DEV_TMP/f16bench" 1 > $OUT/ncu60i_$name.txt 2>&1
  echo "== $name details rc=$?"; grep -E "Executed Instructions |Issued Instructions|Warp Cycles Per Issued|Issue Slots Busy|No Eligible|Active Warps Per|Eligible Warps|Duration|Registers" $OUT/ncu60i_$name.txt | head -14
  dev_elapsed
done
gzip -9 $OUT/*.csv
ls -la $OUT
