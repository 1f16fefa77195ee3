#!/usr/bin/env bash
# Session 65: what bounds the product's one-pass forms now (b2c on its wgmma chain since session 63,
# w8c): ncu's throughput sections of one launch each through the product (gdn_benchmark_fused_switch,
# one form forced), b2c at (16,2048,32) and w8c at (4,8192,16); $OUT/ncu65_{b2c,w8c}.txt.
# run: command "bash bench/device_s65b.sh", carry [".xfer-tests68"] (PACK, default device81.txz), any kind (~120 s).
set -u
cd "$(git rev-parse --show-toplevel 2>/dev/null || pwd)"
source bench/device_lib.sh
tar xJf ".xfer-tests68/${PACK:-device81.txz}"
dev_begin s65b  # (sources the pack's device-env.sh)
NCU=$(dev_ncu)
for cfg in "b2c 2048*16:32" "w8c 8192*4:16"; do
  set -- $cfg
  DNNPLAN_GDN_BENCH_SWITCH="s:$2" DNNPLAN_GDN_BENCH_SWITCH_FORMS=$1 DNNPLAN_GDN_BENCH_SWITCH_ROUNDS=1 \
    timeout 100 $NCU --clock-control none -k regex:"fused16.*$1" --launch-skip 3 --launch-count 1 \
    --section SpeedOfLight --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    --section MemoryWorkloadAnalysis_Tables --section WarpStateStats --section SchedulerStats \
    --section InstructionStats --section LaunchStats \
    "$(dev_bin gpu_gdn_bench)" gdn_benchmark_fused_switch --test-threads=1 --nocapture > "$OUT/ncu65_$1.txt" 2>&1
  echo "ncu $1 rc=$?"
  grep -E "fused16|Duration|Throughput|Pipe|Busy|Bank|Wavefront|Warp Cycles Per Issued|Eligible|Registers|Stall" "$OUT/ncu65_$1.txt" | head -40
done
echo "elapsed $SECONDS s"
