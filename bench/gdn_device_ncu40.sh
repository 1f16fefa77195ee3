#!/usr/bin/env bash
# Session 40, lead: ncu of the token stage tw7 alone (the first tokens_tw7 launch of
# gdn_benchmark_stages_alone: every flag set, ncu serializes the pair), at (4,8192,16): speed of
# light, scheduler and warp-state statistics, the memory workload tables (shared-memory pipe
# included), source counters' top stalls. For the next token-tile design (bench/gdn_results.md,
# session 40: the tile is not load-latency bound).
set -uo pipefail
OUT=${OUT:-/tmp}/ncu40; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin ncu40
chmod +x .device/tests/* 2>/dev/null
tb=$(dev_bin gpu_gdn_bench)
NCU=$(dev_ncu)
echo "ncu: $NCU"
env DNNPLAN_GDN_BENCH_ALONE=1 timeout 240 "$NCU" -k regex:tokens_tw7 -c 1 \
  --section SpeedOfLight --section SchedulerStats --section WarpStateStats --section Occupancy \
  --section MemoryWorkloadAnalysis --section MemoryWorkloadAnalysis_Tables --section InstructionStats \
  --section SourceCounters --section LaunchStats \
  "$tb" gdn_benchmark_stages_alone --test-threads=1 --nocapture > "$OUT/ncu_tw7.txt" 2>&1
echo "rc=$? elapsed ${SECONDS}s"
grep -vE "^BENCH|^test " "$OUT/ncu_tw7.txt" | grep -E "Section|Duration|Throughput|Issue|Eligible|Active Warps|No Eligible|Stall|Shared|Bank|Pipe|Executed Ipc|Warp Cycles|L1|L2|DRAM|Registers|Occupancy|smsp__pcsamp" | head -120
