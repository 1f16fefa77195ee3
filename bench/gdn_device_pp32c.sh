# Session 32 (helper pp32), staged call for part 2's second form (not run by pp32: its device time
# went to the combined call, bench/gdn_device_pp32b_run1.log): gdn_fwd_slimprep_*_k128_wgp and
# gdn_bwd_prep16slp_* (fwd_slim_prep_tile's G = 2: T's io tile apart, step 2a's block barrier as a
# half barrier on named barrier 1: warps 0..3 arrive, 4..7 sync). T = this build (branch pp32),
# B = the base binary of main cfd4a3a (kernels 5f14dfe, /work/base31).
#   1. forward tests with wgp forced, and at 7 pieces: hashes == B's
#   2. backward_parity with v16p forced, and at 8 pieces: == B
#   3. memcheck forward_parity (wgp) and backward_parity (v16p)
#   4. timing in one process: forward prep by cut wgc wgp wgp wgc at the four shapes; the backward
#      tw1^v16c / ^v16p (A B B A) at (4,8192,16) and (16,2048,32)
#   5. ncu of _wgp at (4,8192,16) if time is left (compare with run 1's _wgc: 161.6 us, barrier 3.31)
# Command: `cd .xfer-pp32 && tar xJf device.txz && OUT=$OUT timeout 110 bash bench/gdn_device_pp32c.sh` (about 85 s).
source bench/device_lib.sh
dev_begin pp32c
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, bench $tb, B $b"
P=DNNPLAN_GDN_FWD_SLIMPREP=wgp
Q=DNNPLAN_GDN_BWD_SLIMPREP=v16p
export DEV_CAP_S=20
dev_fwd_case wgp "$t" $P
dev_fwd_case B "$b"
dev_same $d/h_wgp $d/h_B "forward tests, wgp (second form) forced: T == B 5f14dfe, $(wc -l < $d/h_B) hash lines"
dev_fwd_case wgp_p7 "$t" $P DNNPLAN_GDN_FWD_PIECES=7
dev_fwd_case B_p7 "$b" DNNPLAN_GDN_FWD_PIECES=7
dev_same $d/h_wgp_p7 $d/h_B_p7 "forward tests at 7 pieces, wgp forced: T == B, $(wc -l < $d/h_B_p7) hash lines"
echo "elapsed ${SECONDS}s"
export DEV_CAP_S=30
dev_bwd_case p "$t" $Q
dev_bwd_case B "$b"
dev_same $d/h_p $d/h_B "backward_parity, prep16slp (second form) forced: T == B, $(wc -l < $d/h_B) hash lines"
dev_bwd_case p_p8 "$t" $Q DNNPLAN_GDN_BWD_PIECES=8
dev_bwd_case B_p8 "$b" DNNPLAN_GDN_BWD_PIECES=8
dev_same $d/h_p_p8 $d/h_B_p8 "backward_parity at 8 pieces, prep16slp forced: T == B, $(wc -l < $d/h_B_p8) hash lines"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=15 dev_memcheck "$t" forward_parity $P
DEV_CAP_S=25 dev_memcheck "$t" backward_parity $Q
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 75 ]; then
  echo "timing (fwd, one process; per shape wgc wgp wgp wgc):"
  DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_FWD_SLIMPREP="wgc,wgp,wgp,wgc" timeout 20 "$t" \
    timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "fwd slimprep|panicked|test result"
fi
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 85 ]; then
  DEV_CAP_S=20 dev_timing "bwd A B B A (tw1^v16c prep16slc, tw1^v16p prep16slp)" "$t" \
    "tw1^v16c,tw1^v16p,tw1^v16p,tw1^v16c" DNNPLAN_GDN_TIMING_SHAPES=0,2
fi
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 95 ]; then
  DNNPLAN_GDN_FWD_SLIMPREP=wgp DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout 12 ncu --clock-control none --kill yes \
      --section SpeedOfLight --section WarpStateStats --section LaunchStats --section Occupancy \
      --metrics "regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio" \
      -k "regex:^gdn_fwd_slimprep_bf16_k128_wgp\$" --launch-skip 1 --launch-count 1 -o "$d/wgp" \
      "$tb" gdn_benchmark_ours --test-threads=1 > "$d/wgp.ncu.log" 2>&1
  echo "rc=$? ncu wgp"
  if [ -f "$d/wgp.ncu-rep" ]; then
    ncu --import "$d/wgp.ncu-rep" --page details --print-details all > "$OUT/ncu_wgp.txt" 2>/dev/null
    grep -E "Duration|Warp Cycles Per Issued|Block Limit Barriers" "$OUT/ncu_wgp.txt" | head -4
    grep -E "issue_stalled_(barrier|long_scoreboard|no_instruction|branch_resolving|wait)_per" "$OUT/ncu_wgp.txt" | head -6
    rm -f "$d/wgp.ncu-rep"
  fi
fi
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
