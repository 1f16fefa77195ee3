#!/usr/bin/env bash
# Session 60's calls g and i: where the persistent forms' per-chunk cost goes. ncu's source page
# (per-SASS-instruction executions and warp-stall samples) and warp-state / instruction statistics
# of one launch each of the harness entries ENTRY:SKIP... (default "b2c:2 b2p:4") at (4,8192,16)
# (one unit per cluster: the same work as b2c), each the harness's first timed launch after its
# CHECK launches (SKIP: b2c 2, a persistent entry 4); files $OUT/sass<TAG>_<entry>.csv.gz,
# $OUT/ncu<TAG>_<entry>.txt (TAG default 60).
# run: command "bash bench/device_s60g.sh" (call g) or "bash bench/device_s60g.sh 'b2c:2 b2ph:4' 60i"
# (call i), any kind. ~80 s.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_f16_begin build
NCU=$(dev_ncu)
$NCU --version | tail -1
PAIRS=${1:-b2c:2 b2p:4}
TAG=${2:-60}
for k in $PAIRS; do
  name=${k%%:*} skip=${k##*:}
  FUSED16_ONLY=$name timeout 150 $NCU --clock-control none -k regex:"fused16_bf16_${name}\$" --launch-skip $skip --launch-count 1 \
    --section SourceCounters --section WarpStateStats --section InstructionStats --section SchedulerStats \
    --page source --print-source sass --csv "$DEV_TMP/f16bench" 1 > $OUT/sass${TAG}_$name.csv 2> $OUT/sass${TAG}_$name.err
  echo "== $name source rc=$? lines $(wc -l < $OUT/sass${TAG}_$name.csv)"; tail -2 $OUT/sass${TAG}_$name.err
  FUSED16_ONLY=$name timeout 100 $NCU --clock-control none -k regex:"fused16_bf16_${name}\$" --launch-skip $skip --launch-count 1 \
    --section WarpStateStats --section InstructionStats --section SchedulerStats --section SpeedOfLight "$DEV_TMP/f16bench" 1 > $OUT/ncu${TAG}_$name.txt 2>&1
  echo "== $name details rc=$?"; grep -E "Executed Instructions |Issued Instructions|Warp Cycles Per Issued|Issue Slots Busy|No Eligible|Active Warps Per|Eligible Warps|Duration|Registers" $OUT/ncu${TAG}_$name.txt | head -14
  dev_elapsed
done
gzip -9 $OUT/*.csv
ls -la $OUT
