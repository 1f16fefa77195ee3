# Session 33 (helper bc33), call 1: the piece chain's chains beside its passes
# (DNNPLAN_GDN_BWD_SIDE_CHAINS=1, SIDE_CHAINS in src/engines/gdn/backward.rs: dsum_sc before the
# forward chain, pchain3s beside it, dchain3s beside fscan_gxsl; the reverse chain's G / dX seeds
# in regions of their own). Same kernels' arithmetic: BITWISE expected everywhere.
# Steps in priority order, each behind a SECONDS guard (the whole command ~65 s):
#   1. backward_parity at 8 pieces: side on == side off (this build)
#   2. timing in one process A B B A (~0 ~1 ~1 ~0) at (1,32768,16) and (4,8192,16)
#   3. backward_parity by rule: side on == side off; memcheck side on at 8 pieces
#   4. 4 pieces; PDL=0; the gpu_gdn backward tests (fp64 reference) with the side chains;
#      B A A B at (1,32768,16); the other two shapes; the kernels cut one by one
# Command: `cd .xfer-bc33 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_bc33.sh`.
source bench/device_lib.sh
dev_begin bc33
d=$DEV_TMP
t=$(dev_bin gpu_gdn)
echo "binaries: T $t"
S1="DNNPLAN_GDN_BWD_SIDE_CHAINS=1"
P8="DNNPLAN_GDN_BWD_PIECES=8"
P4="DNNPLAN_GDN_BWD_PIECES=4"
DEV_CAP_S=15 dev_bwd_case T_side_p8 $t $S1 $P8
DEV_CAP_S=15 dev_bwd_case T_def_p8 $t $P8
dev_same $d/h_T_side_p8 $d/h_T_def_p8 "T side == T default, 8 pieces, $(wc -l < $d/h_T_def_p8) hash lines"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=20 DNNPLAN_GDN_TIMING_SHAPES=1,0 dev_timing "T side off / on / on / off (A B B A)" $t "tw3/~0,tw3/~1,tw3/~1,tw3/~0"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 45 ] && DEV_CAP_S=12 dev_bwd_case T_side $t $S1
[ $SECONDS -lt 50 ] && DEV_CAP_S=12 dev_bwd_case T_def $t
[ -s $d/h_T_def ] && dev_same $d/h_T_side $d/h_T_def "T side == T default, by rule, $(wc -l < $d/h_T_def) hash lines"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 55 ] && DEV_CAP_S=15 dev_memcheck $t backward_parity $S1 $P8
echo "elapsed ${SECONDS}s"
cp $d/h_* $OUT/ 2>/dev/null
if [ $SECONDS -lt 60 ]; then
  DEV_CAP_S=10 dev_bwd_case T_side_p4 $t $S1 $P4
  DEV_CAP_S=10 dev_bwd_case T_def_p4 $t $P4
  dev_same $d/h_T_side_p4 $d/h_T_def_p4 "T side == T default, 4 pieces"
fi
if [ $SECONDS -lt 70 ]; then
  DEV_CAP_S=10 dev_bwd_case T_side_p8_pdl0 $t $S1 $P8 DNNPLAN_GDN_PDL=0
  dev_same $d/h_T_side_p8_pdl0 $d/h_T_def_p8 "T side PDL=0 == T default, 8 pieces"
fi
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 75 ] && DEV_CAP_S=30 dev_parity "gpu_gdn backward (side chains)" $t backward $S1
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 105 ] && DEV_CAP_S=15 DNNPLAN_GDN_TIMING_SHAPES=1,2,3 dev_timing "T side on / off / off / on (B A A B)" $t "tw3/~1,tw3/~0,tw3/~0,tw3/~1"
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 115 ]; then
  for s in 0 1; do
    env DNNPLAN_GDN_BWD_SIDE_CHAINS=$s DNNPLAN_GDN_TIMING_PIECES=1 DNNPLAN_GDN_TIMING_PIECE_RUNS=":" \
      timeout 8 $t timing_backward_pieces --test-threads=1 --nocapture 2>&1 | grep -E "bwd pieces|panicked" | sed "s/^/side=$s /"
  done
fi
cp $d/h_* $OUT/ 2>/dev/null
echo "done ${SECONDS}s"
