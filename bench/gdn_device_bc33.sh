# Session 33 (helper bc33), call 1: the piece chain's chains beside its passes
# (DNNPLAN_GDN_BWD_SIDE_CHAINS=1, SIDE_CHAINS in src/engines/gdn/backward.rs: dsum_sc before the
# forward chain, pchain3s beside it, dchain3s beside fscan_gxsl; the reverse chain's G / dX seeds
# in regions of their own). Same kernels' arithmetic: BITWISE expected everywhere.
#   1. backward_parity by rule, at 8 and at 4 pieces: side on == side off (this build); this build
#      by rule == base32 (main 83a5e86); side on at 8 pieces under DNNPLAN_GDN_PDL=0 and =early
#   2. timing in one process A B B A (~0 ~1 ~1 ~0) at the four shapes
#   3. gpu_gdn backward tests (fp64 reference) with the side chains; memcheck at 8 pieces
#   4. if time is left: B A A B; the kernels cut one by one at (1,32768,16), side off then on
# Command: `cd .xfer-bc33 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_bc33.sh`.
source bench/device_lib.sh
dev_begin bc33
d=$DEV_TMP
t=$(dev_bin gpu_gdn)
bg=$(ls base/gpu_gdn-* 2>/dev/null | head -1)
echo "binaries: T $t B $bg"
S1="DNNPLAN_GDN_BWD_SIDE_CHAINS=1"
S0="DNNPLAN_GDN_BWD_SIDE_CHAINS=0"
P8="DNNPLAN_GDN_BWD_PIECES=8"
P4="DNNPLAN_GDN_BWD_PIECES=4"
DEV_CAP_S=20 dev_bwd_case T_side $t $S1
DEV_CAP_S=20 dev_bwd_case T_def $t
dev_same $d/h_T_side $d/h_T_def "T side == T default, by rule, $(wc -l < $d/h_T_def) hash lines"
DEV_CAP_S=20 dev_bwd_case T_side_p8 $t $S1 $P8
DEV_CAP_S=20 dev_bwd_case T_def_p8 $t $P8
dev_same $d/h_T_side_p8 $d/h_T_def_p8 "T side == T default, 8 pieces, $(wc -l < $d/h_T_def_p8) hash lines"
DEV_CAP_S=20 dev_bwd_case T_side_p4 $t $S1 $P4
DEV_CAP_S=20 dev_bwd_case T_def_p4 $t $P4
dev_same $d/h_T_side_p4 $d/h_T_def_p4 "T side == T default, 4 pieces, $(wc -l < $d/h_T_def_p4) hash lines"
[ -n "$bg" ] && DEV_CAP_S=20 dev_bwd_case B_rule $bg
[ -n "$bg" ] && dev_same $d/h_T_def $d/h_B_rule "T default == base32 by rule"
DEV_CAP_S=20 dev_bwd_case T_side_p8_pdl0 $t $S1 $P8 DNNPLAN_GDN_PDL=0
dev_same $d/h_T_side_p8_pdl0 $d/h_T_def_p8 "T side PDL=0 == T default, 8 pieces"
DEV_CAP_S=20 dev_bwd_case T_side_p8_early $t $S1 $P8 DNNPLAN_GDN_PDL=early
dev_same $d/h_T_side_p8_early $d/h_T_def_p8 "T side PDL=early == T default, 8 pieces"
cp $d/h_* $OUT/ 2>/dev/null
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 70 ] && DEV_CAP_S=35 dev_timing "T side off / on / on / off (A B B A)" $t "tw3/~0,tw3/~1,tw3/~1,tw3/~0"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 95 ] && DEV_CAP_S=32 dev_parity "gpu_gdn backward (side chains)" $t backward $S1
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 120 ] && DEV_CAP_S=16 dev_memcheck $t backward_parity $S1 $P8
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 125 ] && DEV_CAP_S=30 DNNPLAN_GDN_TIMING_SHAPES=1 dev_timing "T side on / off / off / on (B A A B), (1,32768,16)" $t "tw3/~1,tw3/~0,tw3/~0,tw3/~1"
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 140 ]; then
  for s in 0 1; do
    env DNNPLAN_GDN_BWD_SIDE_CHAINS=$s DNNPLAN_GDN_TIMING_PIECES=1 DNNPLAN_GDN_TIMING_PIECE_RUNS=":" \
      timeout 15 $t timing_backward_pieces --test-threads=1 --nocapture 2>&1 | grep -E "bwd pieces|panicked" | sed "s/^/side=$s /"
  done
fi
tp=$(dev_bin gpu_gdn_pdl)
if [ $SECONDS -lt 150 ] && [ -n "$tp" ]; then
  env $S1 DNNPLAN_GDN_TIMING_PDL=1 DNNPLAN_GDN_TIMING_SHAPES=1 DNNPLAN_GDN_TIMING_PDL_SAMPLES=10 \
    timeout 20 $tp timing_launch_chain_modes --test-threads=1 --nocapture 2>&1 | grep -E "bwd|test result|panicked" | sed "s/^/pdl modes side=1: /"
fi
echo "done ${SECONDS}s"
