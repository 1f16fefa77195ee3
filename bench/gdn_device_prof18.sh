#!/usr/bin/env bash
# Session 18 (lead): ncu full-set profiles of the default GDN kernels, one execute each, for the
# per-kernel accounting in bench/RESULTS.md (DRAM bytes, time, pipe use, stall reasons) and the
# next optimisation's target. Run from an unpacked staging root (.device/ + bench/); writes raw
# CSV pages and a details page per profile, packed into $OUT/prof18.tgz. PROF_BUDGET_S bounds the whole script.
set -uo pipefail
out=${OUT:-/tmp/prof18}
mkdir -p "$out"
start=$(date +%s)
budget=${PROF_BUDGET_S:-300}
left() { echo $((budget - ($(date +%s) - start))); }
# shellcheck disable=SC1091
source .device/device-env.sh
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader | tee "$out/gpu.txt"
echo "== default timings (shapes 0-3, default schedule)"
DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: timeout 60 "$b" gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 | grep BENCH | tee "$out/timings.log"
echo "elapsed $(( $(date +%s) - start ))s"
# prof TAG SHAPE REGEX SKIP COUNT [VAR=VALUE ...]
prof() {
  local tag=$1 shape=$2 re=$3 skip=$4 count=$5; shift 5
  local l; l=$(left); [ "$l" -gt 100 ] && l=100
  if [ "$l" -lt 15 ]; then echo "skipped (budget): $tag"; return; fi
  env "$@" DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=$shape \
    timeout "$l" ncu --clock-control none --set full -k "regex:$re" --launch-skip "$skip" --launch-count "$count" \
    -o "$out/$tag" "$b" gdn_benchmark_ours --test-threads=1 > "$out/$tag.ncu.log" 2>&1
  echo "rc=$? $tag"
  if [ -f "$out/$tag.ncu-rep" ]; then
    ncu --import "$out/$tag.ncu-rep" --page raw --csv > "$out/$tag.raw.csv" 2>/dev/null
    ncu --import "$out/$tag.ncu-rep" --page details --print-details all > "$out/$tag.details.txt" 2>/dev/null
    grep -E "^  [a-z_0-9]+|Duration|DRAM Throughput|Memory Throughput|Compute \(SM\)|Achieved Occupancy|Registers Per|Issue Slots Busy|No Eligible" "$out/$tag.details.txt" | head -80
    rm -f "$out/$tag.ncu-rep"
  fi
  echo "elapsed $(( $(date +%s) - start ))s"
}
prof fwd0 0 "gdn_fwd_slim(prep|scan)" 2 2 DNNPLAN_GDN_FWD_OVERLAP=0
prof bwd0 0 "gdn_bwd_(prep|fscan|dscan|tokens)" 4 4
prof fwd2 2 "gdn_fwd_slim(prep|scan)" 2 2
prof bwd2 2 "gdn_bwd_(prep|fscan|dscan|tokens)" 4 4
prof fwd1 1 "gdn_fwd_(slim|chain)" 4 4
echo "elapsed $(( $(date +%s) - start ))s"
# The run tool brings back only a few files: everything in one archive.
tar czf "$out/../prof18.tgz" -C "$out" . && rm -rf "${out:?}"/* && mv "$out/../prof18.tgz" "$out/"
