# Session 35 (helper sc35), call 2: gdn_fwd_slimscan_{bf16,f16}_k128_w4gxs (w4gx with chunk c + 2's
# T, A, v and scalar copies issued in the step's tail instead of beside the P', O' batch;
# DNNPLAN_GDN_FWD_SCAN=w4gxs; the rule's uncut 4-warp scan in this build). T = this build (branch
# sc35), B = main 330e912's binaries (/work/base35 as base/).
#   1. forward tests (forward_parity state_pool batch_invariant): T by rule (w4gxs) == B by rule
#      (w4gx); T with w4gx forced == B with w4gx forced; at 7 pieces T == B; memcheck
#      forward_parity by rule
#   2. timing in one process (T's bench): w4gx w4gxs w4gxs w4gx at the four shapes, twice (the
#      second in the other order)
#   3. ncu of T's w4gxs at (4,8192,16) (the same sections as call 1) if time is left
# Command: `cd .xfer-sc35 && tar xJf device.txz && OUT=$OUT timeout 120 bash bench/gdn_device_sc35b.sh`.
source bench/device_lib.sh
dev_begin sc35b
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, bench $tb, B $b"
export DEV_CAP_S=20
dev_fwd_case T "$t"
dev_fwd_case B "$b"
dev_same $d/h_T $d/h_B "forward tests by rule (T w4gxs, B w4gx): T == B 330e912, $(wc -l < $d/h_B) hash lines"
dev_fwd_case X "$t" DNNPLAN_GDN_FWD_SCAN=w4gx
dev_fwd_case Bx "$b" DNNPLAN_GDN_FWD_SCAN=w4gx
dev_same $d/h_X $d/h_Bx "forward tests, w4gx forced: T == B 330e912"
dev_same $d/h_X $d/h_T "forward tests, T w4gx forced == T by rule (w4gxs)"
dev_fwd_case T7 "$t" DNNPLAN_GDN_FWD_PIECES=7
dev_fwd_case B7 "$b" DNNPLAN_GDN_FWD_PIECES=7
dev_same $d/h_T7 $d/h_B7 "forward tests at 7 pieces: T == B 330e912, $(wc -l < $d/h_B7) hash lines"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 50 ] && DEV_CAP_S=25 dev_memcheck "$t" forward_parity
echo "elapsed ${SECONDS}s"
ben() {
  echo "== bench T ($1)"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=$1 timeout 25 "$tb" gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 \
    | grep -E "BENCH ours fwd |panicked" | sed -E 's/^test gdn_benchmark_ours \.\.\. //' | cut -c1-420
  echo "elapsed ${SECONDS}s"
}
[ $SECONDS -lt 70 ] && ben "gx:w4gx,gxs:w4gxs,gxs:w4gxs,gx:w4gx,default"
[ $SECONDS -lt 85 ] && ben "gxs:w4gxs,gx:w4gx,gx:w4gx,gxs:w4gxs"
if [ $SECONDS -lt 100 ]; then
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout 18 ncu --clock-control none --kill yes --import-source yes \
      --section SpeedOfLight --section WarpStateStats --section SchedulerStats --section InstructionStats \
      --section SourceCounters --section ComputeWorkloadAnalysis \
      -k "regex:^gdn_fwd_slimscan_bf16_k128_w4gxs\$" --launch-skip 1 --launch-count 1 -o "$d/gxs" \
      "$tb" gdn_benchmark_ours --test-threads=1 > "$d/gxs.ncu.log" 2>&1
  echo "rc=$? ncu gxs"
  if [ -f "$d/gxs.ncu-rep" ]; then
    ncu --import "$d/gxs.ncu-rep" --page source --csv --print-source sass > "$d/gxs.sass.csv" 2>/dev/null
    ncu --import "$d/gxs.ncu-rep" --page details --print-details all > "$d/gxs.details.txt" 2>/dev/null
    grep -E "Duration|Elapsed Cycles|Issue Slots Busy|Warp Cycles Per Issued|Registers Per|Hgmma" "$d/gxs.details.txt" | head -12
  fi
fi
tar czf $OUT/details.tgz -C $DEV_TMP --exclude='*.ncu-rep' . 2>/dev/null
echo "done ${SECONDS}s"
