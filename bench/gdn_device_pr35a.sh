# Session 35 (helper pr35), call 1: the forward slim prep `gdn_fwd_slimprep_bf16_k128_wgc` (the rule's)
# profiled on the H200 with main 330e912's binaries (/work/base35 as base/), and its per-cut time.
#   1. ncu (one launch past the cold one) at (4,8192,16) and (16,2048,32): SpeedOfLight, Occupancy,
#      WarpStateStats, SchedulerStats, InstructionStats, MemoryWorkloadAnalysis(+_Tables),
#      SourceCounters (--import-source yes), LaunchStats; details text + SASS source csv
#   2. timing in one process: the forward under wgc / wg / wg / wgc (whole, and the prep by cut) at
#      the four benchmark shapes
# Command: `cd .xfer-pr35 && tar xJf device.txz && OUT=$OUT timeout 140 bash bench/gdn_device_pr35a.sh`.
source bench/device_lib.sh
dev_begin pr35a
d=$DEV_TMP
chmod +x base/* 2>/dev/null
b=$(ls base/gpu_gdn-* | head -1); tb=$(ls base/gpu_gdn_bench-* | head -1)
echo "binaries: B $b, bench $tb"
prof() {
  local tag=$1 shape=$2 cap=$3
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default DNNPLAN_GDN_BENCH_SHAPES=$shape \
    timeout "$cap" ncu --clock-control none --kill yes --import-source yes \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis \
      --section MemoryWorkloadAnalysis_Tables --section MemoryWorkloadAnalysis_Chart \
      --section SourceCounters --section ComputeWorkloadAnalysis \
      --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,dram__bytes_read.sum,dram__bytes_write.sum,lts__t_bytes.sum,sm__cycles_elapsed.avg" \
      -k "regex:^gdn_fwd_slimprep_bf16_k128_wgc\$" --launch-skip 1 --launch-count 1 -o "$d/$tag" \
      "$tb" gdn_benchmark_ours --test-threads=1 > "$d/$tag.ncu.log" 2>&1
  echo "rc=$? ncu $tag"
  if [ -f "$d/$tag.ncu-rep" ]; then
    ncu --import "$d/$tag.ncu-rep" --page source --csv --print-source sass > "$d/$tag.sass.csv" 2>"$d/$tag.src.err"
    ncu --import "$d/$tag.ncu-rep" --page details --print-details all > "$d/$tag.details.txt" 2>/dev/null
    ncu --import "$d/$tag.ncu-rep" --page raw --csv > "$d/$tag.raw.csv" 2>/dev/null
    grep -E "Duration|Elapsed Cycles|Issue Slots Busy|Warp Cycles Per Issued|No Eligible|Issued Warp|Registers Per|Achieved Occupancy|Block Limit|Memory Throughput|DRAM Throughput|L1/TEX Hit|Executed Ipc A" "$d/$tag.details.txt" | head -30
    grep -E "issue_stalled_(barrier|long_scoreboard|short_scoreboard|mio_throttle|lg_throttle|wait|math_pipe_throttle|membar|not_selected|selected|no_instruction|dispatch_stall|branch_resolving|tex_throttle|drain|imc_miss|sleeping)_per" "$d/$tag.details.txt" | head -20
    grep -E "lsu_wavefronts|bank_conflicts|dram__bytes|lts__t_bytes" "$d/$tag.details.txt" | head -8
    ls -la "$d/$tag.ncu-rep"
  else
    tail -5 "$d/$tag.ncu.log"
  fi
  echo "elapsed ${SECONDS}s"
}
prof s0 0 40
[ $SECONDS -lt 70 ] && prof s2 2 40
echo "timing (one process; per shape wgc wg wg wgc):"
DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_FWD_SLIMPREP="wgc,wg,wg,wgc" timeout 30 "$b" \
  timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "fwd slimprep|panicked|test result"
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 100 ]; then
  echo "bench (default schedule, per-kernel cuts):"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default timeout 30 "$tb" gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 \
    | grep -E "BENCH ours (fwd|bwd)" | sed -E 's/^test gdn_benchmark_ours ... //' | cut -c1-400
fi
echo "elapsed ${SECONDS}s"
mkdir -p $OUT/r
cp $d/*.ncu-rep $OUT/r/ 2>/dev/null
tar czf $OUT/details.tgz -C $DEV_TMP --exclude='*.ncu-rep' . 2>/dev/null
tar cf $OUT/reps.tar -C $OUT/r . && rm -rf $OUT/r
ls -la $OUT
echo "done ${SECONDS}s"
