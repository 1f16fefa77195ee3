#!/usr/bin/env bash
# Session 21, helper fscan21, call 1: an ncu source-level profile of the slim output scan's chunk
# step: gdn_fwd_slimscan_bf16_k128_w4 at (4,8192,16) (DNNPLAN_GDN_FWD_OVERLAP=0: the default) and
# gdn_fwd_slimscan_bf16_k128_w8 at (16,2048,32); one launch each (the second: past the cold one),
# sections SourceCounters, WarpStateStats, InstructionStats, MemoryWorkloadAnalysis_Tables,
# SpeedOfLight, LaunchStats, warp sampling every 32 cycles; per-SASS pages (source page, csv) and
# the details pages, packed into $OUT/res.tgz.
# Staging: .device/device-env.sh, .device/tests/gpu_gdn_bench-<hash> (a staged gpu-tests bench
# binary; every forward entry of main 10a9548 is byte-identical to a85a1e8's), this script.
set -uo pipefail
out=${OUT:-/tmp/fscan21p}; mkdir -p "$out"
tmp=/tmp/fscan21p; mkdir -p "$tmp"
source .device/device-env.sh > "$tmp/env.log" 2>&1
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
exec > >(tee -a "$out/summary.log") 2>&1
echo "bench $b"
prof() {
  local tag=$1 shape=$2 re=$3 cap=$4
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=$shape DNNPLAN_GDN_FWD_OVERLAP=0 \
    timeout "$cap" ncu --clock-control none --kill yes --warp-sampling-interval 0 \
      --section SourceCounters --section WarpStateStats --section InstructionStats \
      --section MemoryWorkloadAnalysis_Tables --section SpeedOfLight --section LaunchStats \
      -k "regex:$re" --launch-skip 1 --launch-count 1 -o "$tmp/$tag" \
      "$b" gdn_benchmark_ours --test-threads=1 > "$tmp/$tag.ncu.log" 2>&1
  echo "rc=$? $tag"
  tail -5 "$tmp/$tag.ncu.log"
  if [ -f "$tmp/$tag.ncu-rep" ]; then
    ncu --import "$tmp/$tag.ncu-rep" --page source --csv --print-source sass > "$tmp/$tag.sass.csv" 2>"$tmp/$tag.src.err"
    ncu --import "$tmp/$tag.ncu-rep" --page details --print-details all > "$tmp/$tag.details.txt" 2>/dev/null
    ncu --import "$tmp/$tag.ncu-rep" --page raw --csv > "$tmp/$tag.raw.csv" 2>/dev/null
    wc -l "$tmp/$tag.sass.csv"; head -c 600 "$tmp/$tag.sass.csv"; echo
    grep -E "Duration|Issue Slots|Warp Cycles Per Issued|No Eligible|Executed Instructions  |Registers Per|Stall" "$tmp/$tag.details.txt" | head -30
  fi
  echo "elapsed ${SECONDS}s"
}
prof w4 0 '^gdn_fwd_slimscan_bf16_k128_w4$' 55
prof w8 2 '^gdn_fwd_slimscan_bf16_k128_w8$' 45
tar czf "$out/res.tgz" -C "$tmp" . 2>/dev/null
ls -la "$out"
