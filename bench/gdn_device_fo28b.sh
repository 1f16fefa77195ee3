# NOT RUN (session 28: the shared device budget was left to the lead). For the variant of commit
# 9700982 (branch fo28; reverted in 0d999aa to call 1's validated order): re-apply its
# gdn_fwd_slim.cuh change, rebuild, stage, then run this.
# Session 28, helper fo28, call 2: w4gxo with the chain's Uᵀ hand-over moved before its state-update
# batch (call 1's w4gxo handed Uᵀ over after issuing it, so the output's O batch queued behind the
# state update and its o store ran past the chain's end: +15 % at (4,8192,16)). T = this build
# (branch fo28), B = main 9d26f11 (base/gpu_gdn-*).
#   1. timing, gdn_benchmark_ours in one process, A B B A: default (w4gx / w8gx / w4dgx), w4gxo, w4gxo, default
#   2. the forward tests with w4gxo; hashes T w4gxo == B default (must be BITWISE)
#   3. ncu (one launch each, past the cold one) of the scan at (4,8192,16): w4gx (default) and w4gxo:
#      SpeedOfLight, WarpStateStats, SourceCounters, InstructionStats; details + SASS source pages
#   4. memcheck forward_parity with w4gxo; forward_state_checkpoints with w4gxo
#   5. timing again, B A A B order
# Command: `cd .xfer-fo28 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_fo28b.sh`.
source bench/device_lib.sh
dev_begin fo28b
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t $tb, B $b"
X="DNNPLAN_GDN_FWD_SCAN=w4gxo"
bench() {
  local log=$d/bench_$SECONDS.log
  echo "== bench T ($1)"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=$1 timeout $2 $tb gdn_benchmark_ours --test-threads=1 --nocapture > $log 2>&1
  grep -hE "BENCH ours fwd |panicked" $log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
  echo "elapsed ${SECONDS}s"
}
bench "default:::,w4gxo:w4gxo::,w4gxo:w4gxo::,default:::" 40
export DEV_CAP_S=30
dev_fwd_case T_w4gxo "$t" $X
dev_fwd_case B_rule "$b"
dev_same $d/h_T_w4gxo $d/h_B_rule "forward tests: T w4gxo == B 9d26f11 default, $(wc -l < $d/h_B_rule) hash lines"
echo "elapsed ${SECONDS}s"
prof() {
  local tag=$1 sched=$2 re=$3 cap=$4
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=$sched DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout "$cap" ncu --clock-control none --kill yes --warp-sampling-interval 0 \
      --section SourceCounters --section WarpStateStats --section InstructionStats \
      --section SpeedOfLight --section LaunchStats --section ComputeWorkloadAnalysis \
      -k "regex:$re" --launch-skip 1 --launch-count 1 -o "$d/$tag" \
      "$tb" gdn_benchmark_ours --test-threads=1 > "$d/$tag.ncu.log" 2>&1
  echo "rc=$? $tag"
  if [ -f "$d/$tag.ncu-rep" ]; then
    ncu --import "$d/$tag.ncu-rep" --page source --csv --print-source sass > "$d/$tag.sass.csv" 2>"$d/$tag.src.err"
    ncu --import "$d/$tag.ncu-rep" --page details --print-details all > "$d/$tag.details.txt" 2>/dev/null
    grep -E "Duration|Elapsed Cycles|Issue Slots Busy|Warp Cycles Per Issued|No Eligible|Issued Warp|Registers Per|Pipe Tensor Cycles|Stall (Barrier|Wait|Long|Short|MIO|Math|Not Sel|Dispatch|Branch|Sleeping)" "$d/$tag.details.txt" | head -30
    rm -f "$d/$tag.ncu-rep"
  else
    tail -3 "$d/$tag.ncu.log"
  fi
  echo "elapsed ${SECONDS}s"
}
[ $SECONDS -lt 50 ] && prof w4gx "default:::" '^gdn_fwd_slimscan_bf16_k128_w4gx$' 25
[ $SECONDS -lt 65 ] && prof w4gxo "w4gxo:w4gxo::" '^gdn_fwd_slimscan_bf16_k128_w4gxo$' 25
[ $SECONDS -lt 85 ] && DEV_CAP_S=20 dev_memcheck $t forward_parity $X
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 95 ] && DEV_CAP_S=15 dev_parity "forward_state_checkpoints (w4gxo first, then its forced list)" $t forward_state_checkpoints $X
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 100 ] && bench "w4gxo:w4gxo::,default:::,default:::,w4gxo:w4gxo::" 20
cp $d/*.details.txt $OUT/ 2>/dev/null
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
