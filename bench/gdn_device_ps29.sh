# Session 29 (helper ps29, with pr29's reverse half merged): the backward's piece chain on the slim
# form, DNNPLAN_GDN_BWD_PREP=slimp (prep15sl, psum_sl, pchain3, fscan_gxsl per piece, dsum_sc,
# dchain3, dscanp_ov2gxsc ∥ tokens_tc16_ov). T = this build (branch ps29 before the flip),
# B = /work/base29's gpu_gdn (main c271890).
#   0. backward_parity slimp / default / B: T default == B bitwise; per-case errors printed
#   1. backward_parity at 8 and 4 pieces with slimp; T default at 8 pieces == B at 8 pieces
#   2. witnesses: PREP=full T == B; the tc16 pairing on the full-form chain (slimp with the s2
#      passes, no slim swap) == B with s2 (bitwise: tc16 == tc13)
#   3. memcheck backward_parity slimp at 8 pieces; gpu_gdn backward tests with slimp
#   4. timing one process A B B A: tc16 tc16@slimp tc16@slimp tc16 at (1,32768,16) and (4,8192,16);
#      the piece chain cut into kernels (default, then slimp)
# Command: `cd .xfer-ps29 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_ps29.sh`.
source bench/device_lib.sh
dev_begin ps29
d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | grep -v bench | head -1)
echo "binaries: T $t, B $b"
SP="DNNPLAN_GDN_BWD_PREP=slimp"
P8="DNNPLAN_GDN_BWD_PIECES=8"
P4="DNNPLAN_GDN_BWD_PIECES=4"
DEV_CAP_S=40 dev_bwd_case slimp $t $SP
DEV_CAP_S=30 dev_bwd_case def $t
DEV_CAP_S=30 dev_bwd_case base $b
dev_same $d/h_def $d/h_base "backward rule, T default == B c271890, $(wc -l < $d/h_def) hash lines"
dev_port_diff $d/h_slimp $d/h_def "T slimp vs T default, lines differing per port"
echo "== errors (rms ratio vs fp64) T slimp:"; cat $d/h_slimp
echo "== errors (rms ratio vs fp64) T default:"; cat $d/h_def
echo "elapsed ${SECONDS}s"
DEV_CAP_S=40 dev_bwd_case p8slimp $t $SP $P8
DEV_CAP_S=30 dev_bwd_case p8 $t $P8
DEV_CAP_S=30 dev_bwd_case p8base $b $P8
dev_same $d/h_p8 $d/h_p8base "8 pieces, T default == B, $(wc -l < $d/h_p8) hash lines"
dev_port_diff $d/h_p8slimp $d/h_p8 "8 pieces, T slimp vs T default, lines differing per port"
echo "== errors 8 pieces T slimp:"; cat $d/h_p8slimp
echo "== errors 8 pieces T default:"; cat $d/h_p8
DEV_CAP_S=40 dev_bwd_case p4slimp $t $SP $P4
echo "elapsed ${SECONDS}s"
cp $d/h_slimp $d/h_def $d/h_p8slimp $d/h_p8 $OUT/ 2>/dev/null
if [ $SECONDS -lt 90 ]; then
  dev_compare bwd "PREP=full, T == B" $t $b DNNPLAN_GDN_BWD_PREP=full
  DEV_CAP_S=30 dev_bwd_case s2u $t $SP DNNPLAN_GDN_BWD_PIECE_PASSES=s2 $P8
  DEV_CAP_S=30 dev_bwd_case s2base $b DNNPLAN_GDN_BWD_PIECE_PASSES=s2 $P8
  dev_same $d/h_s2u $d/h_s2base "tc16 on the full-form piece chain (slimp, s2 passes, 8 pieces) == B s2"
fi
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 110 ] && DEV_CAP_S=30 dev_memcheck $t backward_parity $SP $P8
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 125 ] && DEV_CAP_S=40 dev_parity "gpu_gdn backward (slimp)" $t backward $SP
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 170 ]; then
  DEV_CAP_S=40 dev_timing "T tc16 tc16@slimp tc16@slimp tc16" $t "tc16,tc16@slimp,tc16@slimp,tc16" DNNPLAN_GDN_TIMING_SHAPES=1,0
fi
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 200 ]; then
  for e in "" $SP; do
    echo "== pieces cut ${e:-default}"
    env DNNPLAN_GDN_TIMING_PIECES=1 DNNPLAN_GDN_TIMING_PIECE_RUNS=":" $e timeout 15 $t timing_backward_pieces \
      --test-threads=1 --nocapture 2>&1 | grep -E "bwd pieces|panicked"
  done
fi
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
