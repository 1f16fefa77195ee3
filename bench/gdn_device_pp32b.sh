# Session 32 (helper pp32), one device call for parts 1 and 2 (call 1's script gdn_device_pp32.sh
# folded in: one start-up instead of two). T = this build (branch pp32, part 2), B = the base binary
# of main cfd4a3a (kernels 5f14dfe, /work/base31).
# Part 1: gdn_fwd_slimprep_*_k128_wgc by rule (SLIM_PREP_PRODUCTS_BY_RULE = Wgc) and the backward's
#   gdn_bwd_prep16slc_* (DNNPLAN_GDN_BWD_SLIMPREP=v16c; rule off).
# Part 2: gdn_fwd_slimprep_*_k128_wgp (=wgp) and gdn_bwd_prep16slp_* (=v16p): fwd_slim_prep_tile's
#   G = 2 (T's io tile apart, step 2a's block barrier as a pair hand-over of P).
#   1. forward tests (forward_parity state_pool batch_invariant) by rule (wgc), wgp forced, and at 7
#      pieces (wgc, wgp): hashes == B's
#   2. backward_parity with v16c, v16p forced, and at 8 pieces: == B; by rule at the end
#   3. memcheck forward_parity (wgc by rule, wgp) and backward_parity (v16p, v16c)
#   4. timing in one process: forward prep by cut wg wgc wgp wgp wgc wg at the four shapes; the
#      backward tw1^v16 / ^v16c / ^v16p (A B C C B A) at (4,8192,16) and (16,2048,32)
#   5. ncu of _wgc and _wgp at (4,8192,16) if time is left
# Command: `cd .xfer-pp32 && tar xJf device.txz && OUT=$OUT timeout 170 bash bench/gdn_device_pp32b.sh`.
source bench/device_lib.sh
dev_begin pp32b
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, bench $tb, B $b"
P=DNNPLAN_GDN_FWD_SLIMPREP=wgp
C=DNNPLAN_GDN_BWD_SLIMPREP=v16c
Q=DNNPLAN_GDN_BWD_SLIMPREP=v16p
export DEV_CAP_S=20
dev_fwd_case T "$t"
dev_fwd_case B "$b"
dev_same $d/h_T $d/h_B "forward tests by rule (wgc): T == B 5f14dfe, $(wc -l < $d/h_B) hash lines"
dev_fwd_case wgp "$t" $P
dev_same $d/h_wgp $d/h_B "forward tests, wgp forced: T == B"
dev_fwd_case T_p7 "$t" DNNPLAN_GDN_FWD_PIECES=7
dev_fwd_case B_p7 "$b" DNNPLAN_GDN_FWD_PIECES=7
dev_same $d/h_T_p7 $d/h_B_p7 "forward tests at 7 pieces (wgc): T == B, $(wc -l < $d/h_B_p7) hash lines"
dev_fwd_case wgp_p7 "$t" $P DNNPLAN_GDN_FWD_PIECES=7
dev_same $d/h_wgp_p7 $d/h_B_p7 "forward tests at 7 pieces, wgp forced: T == B"
echo "elapsed ${SECONDS}s"
export DEV_CAP_S=30
dev_bwd_case c "$t" $C
dev_bwd_case B "$b"
dev_same $d/h_c $d/h_B "backward_parity, prep16slc forced: T == B, $(wc -l < $d/h_B) hash lines"
dev_bwd_case p "$t" $Q
dev_same $d/h_p $d/h_B "backward_parity, prep16slp forced: T == B"
echo "elapsed ${SECONDS}s"
dev_bwd_case c_p8 "$t" $C DNNPLAN_GDN_BWD_PIECES=8
dev_bwd_case B_p8 "$b" DNNPLAN_GDN_BWD_PIECES=8
dev_same $d/h_c_p8 $d/h_B_p8 "backward_parity at 8 pieces, prep16slc forced: T == B, $(wc -l < $d/h_B_p8) hash lines"
dev_bwd_case p_p8 "$t" $Q DNNPLAN_GDN_BWD_PIECES=8
dev_same $d/h_p_p8 $d/h_B_p8 "backward_parity at 8 pieces, prep16slp forced: T == B"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=15 dev_memcheck "$t" forward_parity
DEV_CAP_S=15 dev_memcheck "$t" forward_parity $P
echo "elapsed ${SECONDS}s"
DEV_CAP_S=25 dev_memcheck "$t" backward_parity $Q
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 100 ]; then
  echo "timing (fwd, one process; per shape wg wgc wgp wgp wgc wg):"
  DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_FWD_SLIMPREP="wg,wgc,wgp,wgp,wgc,wg" timeout 25 "$t" \
    timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "fwd slimprep|panicked|test result"
fi
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 115 ]; then
  DEV_CAP_S=25 dev_timing "bwd A B C C B A (tw1^v16 prep16sl, tw1^v16c prep16slc, tw1^v16p prep16slp)" "$t" \
    "tw1^v16,tw1^v16c,tw1^v16p,tw1^v16p,tw1^v16c,tw1^v16" DNNPLAN_GDN_TIMING_SHAPES=0,2
fi
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 135 ]; then
  dev_bwd_case T "$t"
  dev_same $d/h_T $d/h_B "backward_parity by rule: T == B"
fi
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 135 ] && DEV_CAP_S=20 dev_memcheck "$t" backward_parity $C
echo "elapsed ${SECONDS}s"
for v in wgc wgp; do
  [ $SECONDS -lt 145 ] || break
  DNNPLAN_GDN_FWD_SLIMPREP=$v DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout 12 ncu --clock-control none --kill yes \
      --section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy \
      --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
      -k "regex:^gdn_fwd_slimprep_bf16_k128_$v\$" --launch-skip 1 --launch-count 1 -o "$d/$v" \
      "$tb" gdn_benchmark_ours --test-threads=1 > "$d/$v.ncu.log" 2>&1
  echo "rc=$? ncu $v"
  if [ -f "$d/$v.ncu-rep" ]; then
    ncu --import "$d/$v.ncu-rep" --page details --print-details all > "$OUT/ncu_$v.txt" 2>/dev/null
    grep -E "Duration|Warp Cycles Per Issued|Registers Per|Achieved Occupancy|Theoretical Occupancy|Block Limit Barriers" "$OUT/ncu_$v.txt" | head -8
    grep -E "issue_stalled_(barrier|long_scoreboard|short_scoreboard|mio_throttle|wait|math_pipe_throttle|membar)_per" "$OUT/ncu_$v.txt" | head -8
    rm -f "$d/$v.ncu-rep"
  fi
  echo "elapsed ${SECONDS}s"
done
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
