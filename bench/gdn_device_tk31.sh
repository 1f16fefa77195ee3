# Session 31 (helper tk31): tw2 (REV 31: tw1 with dA / P_L by per-warpgroup m64n16k16 slices
# straight into phase A's fragments, no dA / P_L hand-off tiles). One call, <= ~95 s of script.
#   1. backward_parity with tw2 and tw1 (uncut, 8 pieces): per-port hash diff, BITWISE expected
#      (the same k16 steps in value order from zero); the rms ratios vs fp64 are in the h_ files
#   2. the gpu_gdn backward tests (fp64 reference) with tw2; memcheck backward_parity with tw2
#   3. timing in one process A B B A: tw1 tw2 tw2 tw1 at the four shapes (then B A A B if time)
# Command: `cd .xfer-tk31 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_tk31.sh`.
source bench/device_lib.sh
dev_begin tk31
d=$DEV_TMP
t=$(dev_bin gpu_gdn)
echo "binaries: T $t"
W2="DNNPLAN_GDN_BWD_TOKENS=tw2"
W1="DNNPLAN_GDN_BWD_TOKENS=tw1"
P8="DNNPLAN_GDN_BWD_PIECES=8"
DEV_CAP_S=20 dev_bwd_case T_tw2 $t $W2
DEV_CAP_S=20 dev_bwd_case T_tw1 $t $W1
dev_port_diff $d/h_T_tw2 $d/h_T_tw1 "T tw2 vs T tw1, lines differing per port"
dev_same $d/h_T_tw2 $d/h_T_tw1 "T tw2 == T tw1, uncut, $(wc -l < $d/h_T_tw1) hash lines"
DEV_CAP_S=20 dev_bwd_case T_tw2_p8 $t $W2 $P8
DEV_CAP_S=20 dev_bwd_case T_tw1_p8 $t $W1 $P8
dev_port_diff $d/h_T_tw2_p8 $d/h_T_tw1_p8 "8 pieces: T tw2 vs T tw1, lines differing per port"
dev_same $d/h_T_tw2_p8 $d/h_T_tw1_p8 "T tw2 == T tw1, 8 pieces, $(wc -l < $d/h_T_tw1_p8) hash lines"
cp $d/h_* $OUT/ 2>/dev/null
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 40 ] && DEV_CAP_S=35 dev_timing "T tw1 tw2 tw2 tw1 (A B B A)" $t "tw1/,tw2/,tw2/,tw1/"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 55 ] && DEV_CAP_S=32 dev_parity "gpu_gdn backward (tw2)" $t backward $W2
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 80 ] && DEV_CAP_S=14 dev_memcheck $t backward_parity $W2
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 80 ] && DEV_CAP_S=18 dev_timing "T tw2 tw1 tw1 tw2 (B A A B)" $t "tw2/,tw1/,tw1/,tw2/"
echo "done ${SECONDS}s"
