#!/usr/bin/env bash
# Session 22, helper tprof22 (one call): an ncu source-level profile of the backward's token stage,
# phase by phase. One launch each (past the cold one) of
#   t13  gdn_bwd_tokens_tc13_ov_bf16_k128 at (4,8192,16), the default (DNNPLAN_GDN_BWD_TOKENS=tc13
#        forced so that the session-22 base binary runs it too; overlap by rule: the consumer, whose
#        flag waits are immediate under ncu's serialisation),
#   t12  gdn_bwd_tokens_tc12_bf16_k128 at (4,8192,16), sequential (DNNPLAN_GDN_BWD_OVERLAP=0,
#        DNNPLAN_GDN_BWD_TOKENS=tc12: no flag waits),
#   t13s2 the default at (16,2048,32) (if time is left),
# sections SourceCounters, WarpStateStats, InstructionStats, MemoryWorkloadAnalysis_Tables,
# SpeedOfLight, LaunchStats, Occupancy, ComputeWorkloadAnalysis, warp sampling every 32 cycles;
# per-SASS source pages (csv), details and raw pages, packed into $OUT/res.tgz (+ summary.log).
# Staging: .device/device-env.sh, .device/tests/gpu_gdn_bench-* (a staged gpu-tests bench binary of
# main d6063d8 / a07d81d: byte-identical gdn_bwd cubins), this script.
set -uo pipefail
out=${OUT:-/tmp/tprof22}; mkdir -p "$out"
tmp=/tmp/tprof22w; mkdir -p "$tmp"
start=$(date +%s)
source .device/device-env.sh > "$tmp/env.log" 2>&1
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
exec > >(tee -a "$out/summary.log") 2>&1
echo "bench $b"; nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
prof() {
  local tag=$1 shape=$2 re=$3 cap=$4; shift 4
  local left=$(( 140 - ($(date +%s) - start) ))
  [ "$left" -lt "$cap" ] && cap=$left
  if [ "$cap" -lt 15 ]; then echo "skipped (time): $tag"; return; fi
  env "$@" DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=$shape \
    timeout "$cap" ncu --clock-control none --kill yes --warp-sampling-interval 0 \
      --section SourceCounters --section WarpStateStats --section InstructionStats \
      --section MemoryWorkloadAnalysis_Tables --section SpeedOfLight --section LaunchStats \
      --section Occupancy --section ComputeWorkloadAnalysis \
      -k "regex:$re" --launch-skip 1 --launch-count 1 -o "$tmp/$tag" \
      "$b" gdn_benchmark_ours --test-threads=1 > "$tmp/$tag.ncu.log" 2>&1
  echo "rc=$? $tag ($*)"
  grep -E "==PROF==|error|Error" "$tmp/$tag.ncu.log" | tail -4
  if [ -f "$tmp/$tag.ncu-rep" ]; then
    ncu --import "$tmp/$tag.ncu-rep" --page source --csv --print-source sass > "$tmp/$tag.sass.csv" 2>"$tmp/$tag.src.err"
    ncu --import "$tmp/$tag.ncu-rep" --page details --print-details all > "$tmp/$tag.details.txt" 2>/dev/null
    ncu --import "$tmp/$tag.ncu-rep" --page raw --csv > "$tmp/$tag.raw.csv" 2>/dev/null
    wc -l "$tmp/$tag.sass.csv"
    grep -E "Duration|Elapsed Cycles|SM Active Cycles|SM Frequency|Issue Slots Busy|Warp Cycles Per Issued|Executed Instructions  |Registers Per|Stall (Barrier|Long|Short|Wait|MIO|Math|Not Sel|LG|Dispatch|Branch)|Shared Memory|Bank|Achieved Occ|Tensor|Pipe" "$tmp/$tag.details.txt" | head -60
    rm -f "$tmp/$tag.ncu-rep"
  fi
  echo "elapsed $(( $(date +%s) - start ))s"
}
prof t13 0 '^gdn_bwd_tokens_tc13_ov_bf16_k128$' 55 DNNPLAN_GDN_BWD_TOKENS=tc13
prof t12 0 '^gdn_bwd_tokens_tc12_bf16_k128$' 45 DNNPLAN_GDN_BWD_OVERLAP=0 DNNPLAN_GDN_BWD_TOKENS=tc12
prof t13s2 2 '^gdn_bwd_tokens_tc13_ov_bf16_k128$' 40 DNNPLAN_GDN_BWD_TOKENS=tc13
tar czf "$out/res.tgz" -C "$tmp" --exclude='*.ncu-rep' . 2>/dev/null
ls -la "$out"
echo "elapsed $(( $(date +%s) - start ))s"
