# Session 31 (helper pw31), one device call: gdn_fwd_slimprep_*_k128_wgb / _wgc (the _wg prep with
# one / two block barriers fewer: fwd_slim_prep_tile's G = 1 / 2; DNNPLAN_GDN_FWD_SLIMPREP=wgb /
# wgc). T = this build (branch pw31), B = the base binary of main 5f14dfe (/work/base31).
#   1. forward tests (forward_parity state_pool batch_invariant) with wgb, wgc forced, T default, and
#      at 7 pieces with wgc: hashes == B's
#   2. memcheck forward_parity with wgc
#   3. timing in one process, per shape wg wgb wgc wgc wgb wg (whole forward, prep by cut)
#   4. ncu of _wgc and _wg at (4,8192,16) (one launch past the cold one), if time is left
# (gdn_bwd.cubin is byte-identical to main's: prep16sl unchanged, no backward step.)
# Command: `cd .xfer-pw31 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_pw31.sh`.
source bench/device_lib.sh
dev_begin pw31
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, bench $tb, B $b"
WGB=DNNPLAN_GDN_FWD_SLIMPREP=wgb
WGC=DNNPLAN_GDN_FWD_SLIMPREP=wgc
P7=DNNPLAN_GDN_FWD_PIECES=7
export DEV_CAP_S=20
dev_fwd_case wgb "$t" $WGB
dev_fwd_case B "$b"
dev_same $d/h_wgb $d/h_B "forward tests by rule, wgb forced: T == B 5f14dfe, $(wc -l < $d/h_B) hash lines"
dev_fwd_case wgc "$t" $WGC
dev_same $d/h_wgc $d/h_B "forward tests by rule, wgc forced: T == B 5f14dfe"
dev_fwd_case T "$t"
dev_same $d/h_T $d/h_B "forward tests by rule, T default == B"
dev_fwd_case wgc_p7 "$t" $WGC $P7
dev_fwd_case B_p7 "$b" $P7
dev_same $d/h_wgc_p7 $d/h_B_p7 "forward tests at 7 pieces, wgc forced: T == B, $(wc -l < $d/h_B_p7) hash lines"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 30 ] && DEV_CAP_S=15 dev_memcheck "$t" forward_parity $WGC
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 45 ]; then
  echo "timing (fwd, one process; per shape wg wgb wgc wgc wgb wg):"
  DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_FWD_SLIMPREP="wg,wgb,wgc,wgc,wgb,wg" timeout 30 "$t" \
    timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "fwd slimprep|panicked|test result"
fi
echo "elapsed ${SECONDS}s"
for v in wg wgc; do
  [ $SECONDS -lt 62 ] || break
  DNNPLAN_GDN_FWD_SLIMPREP=$v DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout 15 ncu --clock-control none --kill yes \
      --section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy \
      --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
      -k "regex:^gdn_fwd_slimprep_bf16_k128_$v\$" --launch-skip 1 --launch-count 1 -o "$d/$v" \
      "$tb" gdn_benchmark_ours --test-threads=1 > "$d/$v.ncu.log" 2>&1
  echo "rc=$? ncu $v"
  if [ -f "$d/$v.ncu-rep" ]; then
    ncu --import "$d/$v.ncu-rep" --page details --print-details all > "$OUT/ncu_$v.txt" 2>/dev/null
    grep -E "Duration|Elapsed Cycles|Issue Slots Busy|Warp Cycles Per Issued|Registers Per|Achieved Occupancy|Theoretical Occupancy|Stall (Barrier|Long|Short|Wait|MIO|Not Sel|Math|LG)" "$OUT/ncu_$v.txt" | head -20
    grep -E "issue_stalled_(barrier|long_scoreboard|short_scoreboard|mio_throttle|wait|not_selected|math_pipe_throttle|lg_throttle|membar|dispatch|no_instruction|selected|sleeping)_per" "$OUT/ncu_$v.txt" | head -14
    rm -f "$d/$v.ncu-rep"
  fi
  echo "elapsed ${SECONDS}s"
done
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
