# Session 35 (helper sc35), call 1: the forward's uncut slim scan gdn_fwd_slimscan_bf16_k128_w4gx
# profiled on the H200 by phase, and the candidate w4gxp (w4gx with the P' batch committed ahead of
# the O' batch; DNNPLAN_GDN_FWD_SCAN=w4gxp). T = this build (branch sc35), B = main 330e912's
# binaries (/work/base35 as base/).
#   1. ncu (one launch past the cold one) at (4,8192,16) of B's w4gx and T's w4gxp: SpeedOfLight,
#      Occupancy, WarpStateStats, SchedulerStats, InstructionStats, MemoryWorkloadAnalysis,
#      SourceCounters (--import-source yes); details text + SASS source csv
#   2. forward tests (forward_parity state_pool batch_invariant): T by rule == B by rule; T with
#      w4gxp forced == B with w4gx forced; memcheck forward_parity with w4gxp
#   3. timing in one process (T's bench): w4gx w4gxp w4gxp w4gx at the four shapes, twice
# Command: `cd .xfer-sc35 && tar xJf device.txz && OUT=$OUT timeout 150 bash bench/gdn_device_sc35a.sh`.
source bench/device_lib.sh
dev_begin sc35a
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=$(ls base/gpu_gdn-* | head -1); bb=$(ls base/gpu_gdn_bench-* | head -1)
echo "binaries: T $t, bench $tb, B $b, bench $bb"
prof() {
  local tag=$1 bin=$2 sched=$3 kern=$4 cap=$5
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=$sched DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout "$cap" ncu --clock-control none --kill yes --import-source yes \
      --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
      --section SchedulerStats --section InstructionStats --section MemoryWorkloadAnalysis \
      --section MemoryWorkloadAnalysis_Tables --section SourceCounters --section ComputeWorkloadAnalysis \
      --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio,l1tex__data_pipe_lsu_wavefronts.avg.pct_of_peak_sustained_elapsed,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared.sum,dram__bytes_read.sum,dram__bytes_write.sum,sm__cycles_elapsed.avg,sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_elapsed,sm__inst_executed_pipe_tensor_op_gmma.sum" \
      -k "regex:^gdn_fwd_slimscan_bf16_k128_${kern}\$" --launch-skip 1 --launch-count 1 -o "$d/$tag" \
      "$bin" gdn_benchmark_ours --test-threads=1 > "$d/$tag.ncu.log" 2>&1
  echo "rc=$? ncu $tag ($kern)"
  if [ -f "$d/$tag.ncu-rep" ]; then
    ncu --import "$d/$tag.ncu-rep" --page source --csv --print-source sass > "$d/$tag.sass.csv" 2>"$d/$tag.src.err"
    ncu --import "$d/$tag.ncu-rep" --page details --print-details all > "$d/$tag.details.txt" 2>/dev/null
    grep -E "Duration|Elapsed Cycles|Issue Slots Busy|Warp Cycles Per Issued|No Eligible|Registers Per|Achieved Occupancy|Memory Throughput|DRAM Throughput|Executed Ipc A|gmma" "$d/$tag.details.txt" | head -30
    grep -E "issue_stalled_(barrier|long_scoreboard|short_scoreboard|mio_throttle|lg_throttle|wait|math_pipe_throttle|membar|not_selected|selected|no_instruction|dispatch_stall|branch_resolving|tex_throttle|drain|imc_miss|sleeping)_per" "$d/$tag.details.txt" | head -20
    grep -E "lsu_wavefronts|bank_conflicts|dram__bytes" "$d/$tag.details.txt" | head -8
  else
    tail -5 "$d/$tag.ncu.log"
  fi
  echo "elapsed ${SECONDS}s"
}
prof gx "$bb" default w4gx 30
[ $SECONDS -lt 40 ] && prof gxp "$tb" "p:w4gxp" w4gxp 30
export DEV_CAP_S=20
dev_fwd_case T "$t"
dev_fwd_case B "$b"
dev_same $d/h_T $d/h_B "forward tests by rule: T == B 330e912, $(wc -l < $d/h_B) hash lines"
dev_fwd_case P "$t" DNNPLAN_GDN_FWD_SCAN=w4gxp
dev_fwd_case Bx "$b" DNNPLAN_GDN_FWD_SCAN=w4gx
dev_same $d/h_P $d/h_Bx "forward tests, T w4gxp forced == B w4gx forced, $(wc -l < $d/h_Bx) hash lines"
dev_same $d/h_P $d/h_B "forward tests, T w4gxp forced == B by rule"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 95 ] && DEV_CAP_S=25 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_SCAN=w4gxp
echo "elapsed ${SECONDS}s"
ben() {
  echo "== bench T ($1)"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=$1 timeout 25 "$tb" gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 \
    | grep -E "BENCH ours fwd |panicked" | sed -E 's/^test gdn_benchmark_ours \.\.\. //' | cut -c1-420
  echo "elapsed ${SECONDS}s"
}
[ $SECONDS -lt 112 ] && ben "gx:w4gx,gxp:w4gxp,gxp:w4gxp,gx:w4gx"
[ $SECONDS -lt 128 ] && ben "gxp:w4gxp,gx:w4gx,gx:w4gx,gxp:w4gxp"
tar czf $OUT/details.tgz -C $DEV_TMP --exclude='*.ncu-rep' . 2>/dev/null
ls -la $OUT
echo "done ${SECONDS}s"
