#!/usr/bin/env bash
# Session 23, helper ow23, call 2: an ncu source-level profile of the output-warp scan w4o and of
# w4 (the same T binary, branch ow23) at (4,8192,16): one launch each (the second: past the cold
# one), DNNPLAN_GDN_FWD_SCAN=w4o / w4 at 1 piece, sections SourceCounters, WarpStateStats,
# InstructionStats, SpeedOfLight, LaunchStats, warp sampling every 32 cycles; the source pages
# (csv) and details pages packed into $OUT/res.tgz (bench/ncu_sass_regions.py attributes them).
# Staging: .device/device-env.sh, .device/tests/gpu_gdn_bench-<hash> (T), this script.
set -uo pipefail
out=${OUT:-/tmp/ow23p}; mkdir -p "$out"
tmp=/tmp/ow23p; mkdir -p "$tmp"
source .device/device-env.sh > "$tmp/env.log" 2>&1
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
exec > >(tee -a "$out/summary.log") 2>&1
echo "bench $b"
prof() {
  local tag=$1 sched=$2 re=$3 cap=$4
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=$sched DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout "$cap" ncu --clock-control none --kill yes --warp-sampling-interval 0 \
      --section SourceCounters --section WarpStateStats --section InstructionStats \
      --section SpeedOfLight --section LaunchStats \
      -k "regex:$re" --launch-skip 1 --launch-count 1 -o "$tmp/$tag" \
      "$b" gdn_benchmark_ours --test-threads=1 > "$tmp/$tag.ncu.log" 2>&1
  echo "rc=$? $tag"
  tail -3 "$tmp/$tag.ncu.log"
  if [ -f "$tmp/$tag.ncu-rep" ]; then
    ncu --import "$tmp/$tag.ncu-rep" --page source --csv --print-source sass > "$tmp/$tag.sass.csv" 2>"$tmp/$tag.src.err"
    ncu --import "$tmp/$tag.ncu-rep" --page details --print-details all > "$tmp/$tag.details.txt" 2>/dev/null
    wc -l "$tmp/$tag.sass.csv"
    grep -E "Duration|Elapsed Cycles|Issue Slots Busy|Warp Cycles Per Issued|No Eligible|Issued Warp|Executed Instructions  |Registers Per|Tensor|Stall" "$tmp/$tag.details.txt" | head -40
  fi
  echo "elapsed ${SECONDS}s"
}
prof w4o w4o:w4o:1: '^gdn_fwd_slimscan_bf16_k128_w4o$' 60
prof w4 w4:w4:1: '^gdn_fwd_slimscan_bf16_k128_w4$' 60
rm -f "$tmp"/*.ncu-rep
tar czf "$out/res.tgz" -C "$tmp" . 2>/dev/null
ls -la "$out"
