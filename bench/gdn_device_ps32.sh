# Session 32 (helper ps32), one device call: gdn_fwd_slimprep_*_k128_wgd and gdn_bwd_prep16sld_*
# (fwd_slim_prep_tile's G = 3: the four diagonal 16x16 blocks of the inverse solved concurrently by
# their owner warps 0, 1, 6, 7, two lanes per column; step 1 on warps 1 and 7). T = this build
# (branch ps32), B = the base binary of main cfd4a3a (kernels 5f14dfe, /work/base31).
#   1. forward tests with wgd forced: hashes == B's; backward_parity with v16d forced: == B
#   2. timing in one process: forward prep by cut wgc wgd wgd wgc at the four shapes; the backward
#      tw3^v16c / ^v16d (A B B A) at (4,8192,16) and (16,2048,32)
#   3. while SECONDS < CAP (first argument, default 60): memcheck forward_parity (wgd) and
#      backward_parity (v16d); forward tests at 7 pieces and backward_parity at 8 pieces (== B)
# Command: `cd .xfer-ps32 && tar xJf device.txz && OUT=$OUT timeout 120 bash bench/gdn_device_ps32.sh 95`.
CAP=${1:-60}
source bench/device_lib.sh
dev_begin ps32
d=$DEV_TMP
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, B $b, cap ${CAP}s"
P=DNNPLAN_GDN_FWD_SLIMPREP=wgd
Q=DNNPLAN_GDN_BWD_SLIMPREP=v16d
export DEV_CAP_S=20
dev_fwd_case wgd "$t" $P
dev_fwd_case B "$b"
dev_same $d/h_wgd $d/h_B "forward tests, wgd forced: T == B 5f14dfe, $(wc -l < $d/h_B) hash lines"
export DEV_CAP_S=25
dev_bwd_case d "$t" $Q
dev_bwd_case B "$b"
dev_same $d/h_d $d/h_B "backward_parity, prep16sld forced: T == B, $(wc -l < $d/h_B) hash lines"
echo "elapsed ${SECONDS}s"
echo "timing (fwd, one process; per shape wgc wgd wgd wgc):"
DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_FWD_SLIMPREP="wgc,wgd,wgd,wgc" timeout 25 "$t" \
  timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "fwd slimprep|panicked|test result"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=20 dev_timing "bwd A B B A (tw3^v16c prep16slc, tw3^v16d prep16sld)" "$t" \
  "tw3^v16c,tw3^v16d,tw3^v16d,tw3^v16c" DNNPLAN_GDN_TIMING_SHAPES=0,2
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt $((CAP - 8)) ]; then DEV_CAP_S=15 dev_memcheck "$t" forward_parity $P; echo "elapsed ${SECONDS}s"; fi
if [ $SECONDS -lt $((CAP - 12)) ]; then DEV_CAP_S=20 dev_memcheck "$t" backward_parity $Q; echo "elapsed ${SECONDS}s"; fi
if [ $SECONDS -lt $((CAP - 6)) ]; then
  DEV_CAP_S=15 dev_fwd_case wgd_p7 "$t" $P DNNPLAN_GDN_FWD_PIECES=7
  DEV_CAP_S=15 dev_fwd_case B_p7 "$b" DNNPLAN_GDN_FWD_PIECES=7
  dev_same $d/h_wgd_p7 $d/h_B_p7 "forward tests at 7 pieces, wgd forced: T == B, $(wc -l < $d/h_B_p7) hash lines"
  echo "elapsed ${SECONDS}s"
fi
if [ $SECONDS -lt $((CAP - 12)) ]; then
  DEV_CAP_S=15 dev_bwd_case d_p8 "$t" $Q DNNPLAN_GDN_BWD_PIECES=8
  DEV_CAP_S=15 dev_bwd_case B_p8 "$b" DNNPLAN_GDN_BWD_PIECES=8
  dev_same $d/h_d_p8 $d/h_B_p8 "backward_parity at 8 pieces, prep16sld forced: T == B, $(wc -l < $d/h_B_p8) hash lines"
fi
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo "done ${SECONDS}s"
