# Session 35 (helper ps35): the slim prep's lean forms — gdn_fwd_slimprep_{bf16,f16}_k128_wgn / _wgm
# (fwd_slim_prep_tile's G = 3 / 4: wgc / wgl with phases 2 and 3 in fewer instructions: the wgmma
# descriptors by constant steps, rsqrt.approx.ftz on inputs >= 1e-6, the L / A masks only on the
# diagonal block; DNNPLAN_GDN_FWD_SLIMPREP=wgn|wgm) and the backward's gdn_bwd_prep16sln / prep16slm
# (DNNPLAN_GDN_BWD_SLIMPREP=v16n|v16m). T = this build (branch ps35), B = main 330e912's binaries
# (/work/base35 as base/).
#   1. forward tests (forward_parity state_pool batch_invariant) with wgn and wgm forced, and wgn at
#      7 pieces: hashes == B's
#   2. memcheck forward_parity with wgn; backward_parity with v16n, v16m (hashes == B's) and v16m at
#      8 pieces; memcheck backward_parity v16m
#   3. timing in one process: the forward under wgc wgn wgn wgc wgl wgm wgm wgl (whole, prep by cut)
#      at the four benchmark shapes; the backward tw3^v16c / ^v16n A B B A at (4,8192,16) and
#      (16,2048,32), tw3^v16l / ^v16m at (16,2048,32) and ragged
# Command: `cd .xfer-ps35 && tar xJf device.txz && OUT=$OUT timeout 150 bash bench/gdn_device_ps35.sh`.
source bench/device_lib.sh
dev_begin ps35
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, B $b"
N=DNNPLAN_GDN_FWD_SLIMPREP=wgn
M=DNNPLAN_GDN_FWD_SLIMPREP=wgm
export DEV_CAP_S=20
dev_fwd_case B "$b"
dev_fwd_case wgn "$t" $N
dev_same $d/h_wgn $d/h_B "forward tests, wgn forced: T == B 330e912, $(wc -l < $d/h_B) hash lines"
dev_fwd_case wgm "$t" $M
dev_same $d/h_wgm $d/h_B "forward tests, wgm forced: T == B 330e912"
echo "elapsed ${SECONDS}s"
dev_fwd_case wgn_p7 "$t" $N DNNPLAN_GDN_FWD_PIECES=7
dev_fwd_case B_p7 "$b" DNNPLAN_GDN_FWD_PIECES=7
dev_same $d/h_wgn_p7 $d/h_B_p7 "forward tests at 7 pieces, wgn forced: T == B, $(wc -l < $d/h_B_p7) hash lines"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=20 dev_memcheck "$t" forward_parity $N
echo "elapsed ${SECONDS}s"
export DEV_CAP_S=30
dev_bwd_case n "$t" DNNPLAN_GDN_BWD_SLIMPREP=v16n
dev_bwd_case B "$b"
dev_same $d/h_n $d/h_B "backward_parity, prep16sln forced: T == B 330e912, $(wc -l < $d/h_B) hash lines"
dev_bwd_case m "$t" DNNPLAN_GDN_BWD_SLIMPREP=v16m
dev_same $d/h_m $d/h_B "backward_parity, prep16slm forced: T == B 330e912"
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 70 ]; then
  dev_bwd_case m_p8 "$t" DNNPLAN_GDN_BWD_SLIMPREP=v16m DNNPLAN_GDN_BWD_PIECES=8
  dev_bwd_case B_p8 "$b" DNNPLAN_GDN_BWD_PIECES=8
  dev_same $d/h_m_p8 $d/h_B_p8 "backward_parity at 8 pieces, prep16slm forced: T == B, $(wc -l < $d/h_B_p8) hash lines"
fi
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 80 ] && DEV_CAP_S=20 dev_memcheck "$t" backward_parity DNNPLAN_GDN_BWD_SLIMPREP=v16m
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 90 ]; then
  echo "timing (fwd, one process; per shape wgc,wgn,wgn,wgc,wgl,wgm,wgm,wgl):"
  DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_FWD_SLIMPREP="wgc,wgn,wgn,wgc,wgl,wgm,wgm,wgl" timeout 35 "$t" \
    timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "fwd slimprep|panicked|test result"
  echo "elapsed ${SECONDS}s"
fi
if [ $SECONDS -lt 110 ]; then
  DEV_CAP_S=20 dev_timing "bwd A B B A (tw3^v16c prep16slc, tw3^v16n prep16sln)" "$t" \
    "tw3^v16c,tw3^v16n,tw3^v16n,tw3^v16c" DNNPLAN_GDN_TIMING_SHAPES=0,2
fi
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 125 ]; then
  DEV_CAP_S=20 dev_timing "bwd A B B A (tw3^v16l prep16sll, tw3^v16m prep16slm)" "$t" \
    "tw3^v16l,tw3^v16m,tw3^v16m,tw3^v16l" DNNPLAN_GDN_TIMING_SHAPES=2,3
fi
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
