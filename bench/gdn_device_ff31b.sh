# Session 31 (helper ff31), call 2 (timing only): where the fused forward's time goes. In one
# process (gdn_benchmark_ours) at (4,8192,16) and (16,2048,32): w4gx, w4fx, w4fxpo (the prep alone:
# the chain only takes the hand-over), w4fxco (the chain and the copies alone: no prep tile), then
# the reverse order. Then the forward tests with w4fx forced (the w4fx entry's .text is run 1's)
# and ncu of w4fx at (4,8192,16).
# Command: `cd .xfer-ff31 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_ff31b.sh`.
source bench/device_lib.sh
dev_begin ff31b
d=$DEV_TMP
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
B=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, bench $tb, base $B"
env DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="0 2" \
  DNNPLAN_GDN_BENCH_SCHEDULES="gx:w4gx:,fx:w4fx:,po:w4fxpo:,co:w4fxco:,co2:w4fxco:,po2:w4fxpo:,fx2:w4fx:,gx2:w4gx:" \
  timeout 60 $tb gdn_benchmark_ours --test-threads=1 --nocapture > $d/bench.log 2>&1
echo "bench rc=$? elapsed ${SECONDS}s"
grep -E "^BENCH ours fwd|gdn_benchmark_ours ... BENCH" $d/bench.log | sed -E 's/^test gdn_benchmark_ours ... //' | awk '{print $4, $6, $5}'
grep -E "BENCH ours fwd" $d/bench.log | sed -E 's/^test gdn_benchmark_ours ... //; s/ min-traffic [0-9]+ GB\/s//' | cut -c1-230
DEV_CAP_S=40 dev_fwd_case T_fx $t DNNPLAN_GDN_FWD_SCAN=w4fx
DEV_CAP_S=40 dev_fwd_case B_gx $B DNNPLAN_GDN_FWD_SCAN=w4gx
dev_same $d/h_T_fx $d/h_B_gx "forward tests: T w4fx forced == base w4gx forced (call 2 build)"
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 90 ]; then
  env DNNPLAN_GDN_FWD_SCAN=w4fx DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=fx:w4fx: DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout 45 ncu --clock-control none --kill yes \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats --section SchedulerStats \
      -k "regex:^gdn_fwd_slimscan_bf16_k128_w4fx$" --launch-skip 1 --launch-count 1 -o "$d/fx" \
      "$tb" gdn_benchmark_ours --test-threads=1 > "$d/fx.ncu.log" 2>&1
  echo "rc=$? ncu w4fx"
  if [ -f "$d/fx.ncu-rep" ]; then
    ncu --import "$d/fx.ncu-rep" --page details --print-details all > "$d/fx.details.txt" 2>/dev/null
    grep -E "Duration|Elapsed Cycles|Issue Slots Busy|Issued Warp|Warp Cycles Per Issued|No Eligible|Active Warps|Tensor|LSU|Stall" "$d/fx.details.txt" | head -30
    rm -f "$d/fx.ncu-rep"
  else tail -5 "$d/fx.ncu.log"; fi
fi
cp $d/h_* $OUT/ 2>/dev/null
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
