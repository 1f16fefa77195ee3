#!/usr/bin/env bash
# Session 63's second call: (1) bench/chain_ksplit_bench.cu's `base` (the one pass's chunk-16 chain
# step alone, session 57's form; its two helpers restored in the bench) on the GPU that ran call a's
# chunk-64 step, for the same-device comparison; (2) where the chunk-64 factor build's ~5,300 SM
# cycles per tile go: ncu's per-SASS instruction counts and warp-stall samples of one launch of
# bench/prep64_tile_bench.cu (built with -lineinfo), and its summary sections.
# run: command "bash bench/device_s63b.sh", any kind (~90 s). Output: bench/device_s63b_*.
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
dev_begin s63b
T0=$(date +%s)
dev_bench_build prep64_tile_bench -lineinfo & p1=$!
dev_bench_build chain_ksplit_bench -lineinfo & p2=$!
wait $p1 $p2
echo "built in $(( $(date +%s) - T0 )) s"
timeout 120 "$DEV_TMP/chain_ksplit_bench" | grep -E "^(NVIDIA|base |two |base\+o )"
timeout 60 "$DEV_TMP/prep64_tile_bench"
NCU=$(dev_ncu)
$NCU --version | tail -1
timeout 150 $NCU --clock-control none -k regex:prep64_bench --launch-skip 3 --launch-count 1 \
  --section SourceCounters --section WarpStateStats --page source --print-source sass --csv "$DEV_TMP/prep64_tile_bench" \
  > "$OUT/prep64_sass.csv" 2> "$OUT/prep64_sass.err"
echo "sass rc=$? lines $(wc -l < "$OUT/prep64_sass.csv")"; tail -3 "$OUT/prep64_sass.err"
timeout 150 $NCU --clock-control none -k regex:prep64_bench --launch-skip 3 --launch-count 1 \
  --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section InstructionStats \
  --section Occupancy --section SchedulerStats "$DEV_TMP/prep64_tile_bench" > "$OUT/prep64_ncu.txt" 2>&1
echo "ncu rc=$?"; grep -E "Duration|Issue Slots Busy|Executed Ipc|No Eligible|Warp Cycles Per Issued|Achieved Occupancy|Stall" "$OUT/prep64_ncu.txt" | head -30
gzip -9 "$OUT/prep64_sass.csv"
dev_elapsed
