# Session 35 (helper pr35), call 2: gdn_fwd_slimprep_{bf16,f16}_k128_wgl (fwd_slim_prep_tile's G = 2:
# wgc with the chunk located in one round of loads, locate_chunk_warp; DNNPLAN_GDN_FWD_SLIMPREP=wgl)
# and the backward's gdn_bwd_prep16sll_{bf16,f16}_k128 (prep16slc's G = 2; DNNPLAN_GDN_BWD_SLIMPREP=v16l).
# T = this build (branch pr35), B = main 330e912's binaries (/work/base35 as base/).
#   1. forward tests (forward_parity state_pool batch_invariant) by rule and with wgl forced, and at
#      7 pieces: hashes == B's
#   2. memcheck forward_parity with wgl; backward_parity with v16l (hashes == B's, and at 8 pieces),
#      memcheck backward_parity v16l
#   3. timing in one process: the forward under wgc wgl wgl wgc wgc wgl (whole, prep by cut) at the
#      four benchmark shapes; the backward tw3^v16c / ^v16l A B B A at three shapes; the forward
#      again in another process in the other order
#   4. ncu of _wgl at (16,2048,32) (SpeedOfLight, WarpStateStats, SourceCounters) if time is left
# Command: `cd .xfer-pr35 && tar xJf device.txz && OUT=$OUT timeout 150 bash bench/gdn_device_pr35b.sh`.
source bench/device_lib.sh
dev_begin pr35b
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, bench $tb, B $b"
L=DNNPLAN_GDN_FWD_SLIMPREP=wgl
export DEV_CAP_S=20
dev_fwd_case T "$t"
dev_fwd_case B "$b"
dev_same $d/h_T $d/h_B "forward tests by rule (wgc): T == B 330e912, $(wc -l < $d/h_B) hash lines"
dev_fwd_case wgl "$t" $L
dev_same $d/h_wgl $d/h_B "forward tests, wgl forced: T == B 330e912"
echo "elapsed ${SECONDS}s"
dev_fwd_case wgl_p7 "$t" $L DNNPLAN_GDN_FWD_PIECES=7
dev_fwd_case B_p7 "$b" DNNPLAN_GDN_FWD_PIECES=7
dev_same $d/h_wgl_p7 $d/h_B_p7 "forward tests at 7 pieces, wgl forced: T == B, $(wc -l < $d/h_B_p7) hash lines"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=20 dev_memcheck "$t" forward_parity $L
echo "elapsed ${SECONDS}s"
V=DNNPLAN_GDN_BWD_SLIMPREP=v16l
export DEV_CAP_S=30
dev_bwd_case l "$t" $V
dev_bwd_case B "$b"
dev_same $d/h_l $d/h_B "backward_parity, prep16sll forced: T == B 330e912, $(wc -l < $d/h_B) hash lines"
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 60 ]; then
  dev_bwd_case l_p8 "$t" $V DNNPLAN_GDN_BWD_PIECES=8
  dev_bwd_case B_p8 "$b" DNNPLAN_GDN_BWD_PIECES=8
  dev_same $d/h_l_p8 $d/h_B_p8 "backward_parity at 8 pieces, prep16sll forced: T == B, $(wc -l < $d/h_B_p8) hash lines"
fi
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 70 ] && DEV_CAP_S=20 dev_memcheck "$t" backward_parity $V
echo "elapsed ${SECONDS}s"
tim() {
  echo "timing (fwd, one process; per shape $1):"
  DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_FWD_SLIMPREP="$1" timeout 25 "$t" \
    timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "fwd slimprep|panicked|test result"
  echo "elapsed ${SECONDS}s"
}
[ $SECONDS -lt 90 ] && tim "wgc,wgl,wgl,wgc,wgc,wgl"
if [ $SECONDS -lt 108 ]; then
  DEV_CAP_S=20 dev_timing "bwd A B B A (tw3^v16c prep16slc, tw3^v16l prep16sll)" "$t" \
    "tw3^v16c,tw3^v16l,tw3^v16l,tw3^v16c" DNNPLAN_GDN_TIMING_SHAPES=0,2,3
fi
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 122 ] && tim "wgl,wgc,wgc,wgl"
if [ $SECONDS -lt 130 ]; then
  DNNPLAN_GDN_FWD_SLIMPREP=wgl DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default DNNPLAN_GDN_BENCH_SHAPES=2 \
    timeout 15 ncu --clock-control none --kill yes \
      --section SpeedOfLight --section WarpStateStats --section SourceCounters --section LaunchStats --section Occupancy \
      -k "regex:^gdn_fwd_slimprep_bf16_k128_wgl\$" --launch-skip 1 --launch-count 1 -o "$d/wgl" \
      "$tb" gdn_benchmark_ours --test-threads=1 > "$d/wgl.ncu.log" 2>&1
  echo "rc=$? ncu wgl"
  if [ -f "$d/wgl.ncu-rep" ]; then
    ncu --import "$d/wgl.ncu-rep" --page source --csv --print-source sass > "$d/wgl.sass.csv" 2>/dev/null
    ncu --import "$d/wgl.ncu-rep" --page details --print-details all > "$d/wgl.details.txt" 2>/dev/null
    grep -E "Duration|Warp Cycles Per Issued|Issue Slots Busy|Achieved Occupancy|Registers Per" "$d/wgl.details.txt" | head -8
    rm -f "$d/wgl.ncu-rep"
  fi
  echo "elapsed ${SECONDS}s"
fi
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
