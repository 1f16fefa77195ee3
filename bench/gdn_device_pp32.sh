# Session 32 (helper pp32), device call 1: the slim prep tile with two block barriers fewer landed
# (gdn_fwd_slimprep_*_k128_wgc by rule, SLIM_PREP_PRODUCTS_BY_RULE = Wgc) and the backward's
# prep16sl on the same tile (gdn_bwd_prep16slc_*, DNNPLAN_GDN_BWD_SLIMPREP=v16c; rule not flipped).
# T = this build (branch pp32), B = the base binary of main cfd4a3a (kernels 5f14dfe, /work/base31).
#   1. forward tests (forward_parity state_pool batch_invariant) by rule (wgc) and at 7 pieces: == B
#   2. backward_parity with v16c forced, at 8 pieces with v16c, and by rule: == B
#   3. memcheck forward_parity (wgc by rule) and backward_parity (v16c)
#   4. timing in one process: forward prep by cut wg wgc wgc wg at the four shapes; backward
#      tw1^v16 / tw1^v16c (A B B A) at (4,8192,16) and (16,2048,32)
# Command: `cd .xfer-pp32 && tar xJf device.txz && OUT=$OUT timeout 110 bash bench/gdn_device_pp32.sh`.
source bench/device_lib.sh
dev_begin pp32
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, B $b"
C=DNNPLAN_GDN_BWD_SLIMPREP=v16c
export DEV_CAP_S=20
dev_fwd_case T "$t"
dev_fwd_case B "$b"
dev_same $d/h_T $d/h_B "forward tests by rule (wgc): T == B 5f14dfe, $(wc -l < $d/h_B) hash lines"
dev_fwd_case T_p7 "$t" DNNPLAN_GDN_FWD_PIECES=7
dev_fwd_case B_p7 "$b" DNNPLAN_GDN_FWD_PIECES=7
dev_same $d/h_T_p7 $d/h_B_p7 "forward tests at 7 pieces (wgc): T == B, $(wc -l < $d/h_B_p7) hash lines"
echo "elapsed ${SECONDS}s"
export DEV_CAP_S=30
dev_bwd_case c "$t" $C
dev_bwd_case B "$b"
dev_same $d/h_c $d/h_B "backward_parity, prep16slc forced: T == B, $(wc -l < $d/h_B) hash lines"
echo "elapsed ${SECONDS}s"
dev_bwd_case c_p8 "$t" $C DNNPLAN_GDN_BWD_PIECES=8
dev_bwd_case B_p8 "$b" DNNPLAN_GDN_BWD_PIECES=8
dev_same $d/h_c_p8 $d/h_B_p8 "backward_parity at 8 pieces, prep16slc forced: T == B, $(wc -l < $d/h_B_p8) hash lines"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=15 dev_memcheck "$t" forward_parity
echo "elapsed ${SECONDS}s"
DEV_CAP_S=25 dev_memcheck "$t" backward_parity $C
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 75 ]; then
  echo "timing (fwd, one process; per shape wg wgc wgc wg):"
  DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_FWD_SLIMPREP="wg,wgc,wgc,wg" timeout 20 "$t" \
    timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "fwd slimprep|panicked|test result"
fi
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 90 ]; then
  DEV_CAP_S=20 dev_timing "bwd A B B A (tw1^v16 prep16sl, tw1^v16c prep16slc)" "$t" \
    "tw1^v16,tw1^v16c,tw1^v16c,tw1^v16" DNNPLAN_GDN_TIMING_SHAPES=0,2
fi
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 95 ]; then
  dev_bwd_case T "$t"
  dev_same $d/h_T $d/h_B "backward_parity by rule: T == B"
fi
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
