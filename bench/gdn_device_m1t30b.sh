# Session 30 (helper m1t30), call 2: tw1 run 3 (pre-flag copies by all 512 threads, post-flag by
# warpgroups 0 and 3, tc16's dR pass and dD on every thread from the ring: bitwise tc16 expected
# on every port), after run 1 (bench/gdn_device_m1t30_run1.log: correct, dQ / dK / dV /
# d_initial_state hashes = tc16's, stage +7 %).
#   1. backward_parity with tw1 (uncut, 8 pieces), per-port hash diff vs the default (tc16)
#   2. the gpu_gdn backward tests with tw1; memcheck backward_parity with tw1
#   3. timing in one process A B B A: tc16 tw1 tw1 tc16 at the four shapes
#   4. racecheck of the tw1 kernel only (run 1's filter printed nothing: the options are listed)
#   5. ncu of tw1 at (4,8192,16) (one launch past the cold one), if time is left
# Command: `cd .xfer-m1t30 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_m1t30b.sh`.
source bench/device_lib.sh
dev_begin m1t30b
d=$DEV_TMP
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
echo "binaries: T $t, bench $tb"
W="DNNPLAN_GDN_BWD_TOKENS=tw1"
P8="DNNPLAN_GDN_BWD_PIECES=8"
DEV_CAP_S=40 dev_bwd_case T_tw1 $t $W
DEV_CAP_S=30 dev_bwd_case T_def $t
dev_port_diff $d/h_T_tw1 $d/h_T_def "T tw1 vs T default (tc16), lines differing per port"
dev_same $d/h_T_tw1 $d/h_T_def "T tw1 == T default (tc16), uncut by rule, $(wc -l < $d/h_T_def) hash lines"
DEV_CAP_S=30 dev_bwd_case T_tw1_p8 $t $W $P8
DEV_CAP_S=30 dev_bwd_case T_def_p8 $t $P8
dev_port_diff $d/h_T_tw1_p8 $d/h_T_def_p8 "8 pieces: T tw1 vs T default, lines differing per port"
dev_same $d/h_T_tw1_p8 $d/h_T_def_p8 "T tw1 == T default (tc16), 8 pieces, $(wc -l < $d/h_T_def_p8) hash lines"
cp $d/h_* $OUT/ 2>/dev/null
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 80 ] && DEV_CAP_S=40 dev_parity "gpu_gdn backward (tw1)" $t backward $W
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 100 ] && DEV_CAP_S=30 dev_memcheck $t backward_parity $W
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 125 ] && DEV_CAP_S=45 dev_timing "T tc16 tw1 tw1 tc16 (A B B A)" $t "tc16/,tw1/,tw1/,tc16/"
echo "elapsed ${SECONDS}s"
compute-sanitizer --help 2>&1 | grep -iE -A3 "kernel-name|kernel-regex|--filter" | head -14
if [ $SECONDS -lt 160 ]; then
  env $W timeout 30 compute-sanitizer --tool racecheck --kernel-name kns=tokens_tw1 --print-limit 5 \
    $t backward_parity --test-threads=1 > $d/racecheck.log 2>&1
  echo "racecheck rc=$? (--kernel-name kns=tokens_tw1):"
  grep -E "RACECHECK SUMMARY|ERROR SUMMARY|test result|Hazard|rror" $d/racecheck.log | head -8
  tail -3 $d/racecheck.log
fi
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 185 ]; then
  env $W DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout 25 ncu --clock-control none --kill yes \
      --section SpeedOfLight --section ComputeWorkloadAnalysis --section WarpStateStats \
      -k "regex:^gdn_bwd_tokens_tw1_bf16_k128$" --launch-skip 1 --launch-count 1 -o "$d/tw1b" \
      "$tb" gdn_benchmark_ours --test-threads=1 > "$d/tw1b.ncu.log" 2>&1
  echo "rc=$? ncu tw1 (run 3)"
  if [ -f "$d/tw1b.ncu-rep" ]; then
    ncu --import "$d/tw1b.ncu-rep" --page details --print-details all > "$d/tw1b.details.txt" 2>/dev/null
    grep -E "Duration|Elapsed Cycles|Issue Slots Busy|Warp Cycles Per Issued|LSU  |Tensor \(FP\)|Stall (Barrier|Long|Short|Wait|MIO|Not Sel)" "$d/tw1b.details.txt" | head -16
    rm -f "$d/tw1b.ncu-rep"
  fi
fi
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
