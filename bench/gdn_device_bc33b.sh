# Session 33 (helper bc33), call 2 (staged for the lead's final call): the chains beside the
# passes, second form (pchain3s / dchain3s at ≤ 51 registers so that one block fits beside dsum_sc
# and beside two fscan_gxsl blocks; only block (0,0,0) waits at the exit). Call 1
# (bench/gdn_device_bc33_run1.log): BITWISE at the rule / 8 / 4 pieces and PDL=0, but the first form
# was SLOWER at (1,32768,16) (2.157 / 2.156 ms against 2.064 / 2.054).
#   1. backward_parity at 8 pieces and by rule: side on == side off (BITWISE expected)
#   2. timing in one process: A B B A (~0 ~1 ~1 ~0) at (1,32768,16) and (4,8192,16); then the
#      one-chain rows ~p (forward chain beside dsum_sc) and ~d (reverse chain beside fscan_gxsl)
#      against ~0 at (1,32768,16)
#   3. memcheck with the side chains at 8 pieces; the gpu_gdn backward tests with them
# Command: `cd .xfer-bc33 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_bc33b.sh`
# (~90 s of command).
source bench/device_lib.sh
dev_begin bc33b
d=$DEV_TMP
t=$(dev_bin gpu_gdn)
echo "binaries: T $t"
S1="DNNPLAN_GDN_BWD_SIDE_CHAINS=1"
P8="DNNPLAN_GDN_BWD_PIECES=8"
DEV_CAP_S=15 dev_bwd_case T_side_p8 $t $S1 $P8
DEV_CAP_S=15 dev_bwd_case T_def_p8 $t $P8
dev_same $d/h_T_side_p8 $d/h_T_def_p8 "T side == T default, 8 pieces, $(wc -l < $d/h_T_def_p8) hash lines"
DEV_CAP_S=15 dev_bwd_case T_side $t $S1
DEV_CAP_S=15 dev_bwd_case T_def $t
dev_same $d/h_T_side $d/h_T_def "T side == T default, by rule, $(wc -l < $d/h_T_def) hash lines"
cp $d/h_* $OUT/ 2>/dev/null
echo "elapsed ${SECONDS}s"
DEV_CAP_S=20 DNNPLAN_GDN_TIMING_SHAPES=1,0 dev_timing "T side off / on / on / off (A B B A)" $t "tw3/~0,tw3/~1,tw3/~1,tw3/~0"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=20 DNNPLAN_GDN_TIMING_SHAPES=1 dev_timing "T side 0 / p / d / d / p / 0" $t "tw3/~0,tw3/~p,tw3/~d,tw3/~d,tw3/~p,tw3/~0"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 60 ] && DEV_CAP_S=30 dev_memcheck $t backward_parity $S1 $P8
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 80 ] && DEV_CAP_S=30 dev_parity "gpu_gdn backward (side chains)" $t backward $S1
echo "done ${SECONDS}s"
