# Session 33 (helper m233), calls 1 and 2 (the same script; call 2 adds the B A A B timing): tw5 (REV 33: tw3's tile in a persistent block, the next tile's
# copies issued during this tile's epilogue; the same arithmetic as tw3).
#   1. backward_parity with tw5 and tw3 in this build (uncut, 8 pieces): BITWISE expected;
#      tw5 vs base32 by rule (tw3): BITWISE expected
#   2. timing in one process A B B A: tw3 tw5 tw5 tw3 at the four shapes
#   3. gpu_gdn backward tests (fp64 reference) with tw5; memcheck backward_parity with tw5
# Command: `cd .xfer-m233 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_m233.sh`.
source bench/device_lib.sh
dev_begin m233
d=$DEV_TMP
t=$(dev_bin gpu_gdn)
bg=$(ls base/gpu_gdn-* 2>/dev/null | head -1)
echo "binaries: T $t B $bg"
W5="DNNPLAN_GDN_BWD_TOKENS=tw5"
W3="DNNPLAN_GDN_BWD_TOKENS=tw3"
P8="DNNPLAN_GDN_BWD_PIECES=8"
DEV_CAP_S=25 dev_bwd_case T_tw5 $t $W5
DEV_CAP_S=20 dev_bwd_case T_tw3 $t $W3
dev_port_diff $d/h_T_tw5 $d/h_T_tw3 "T tw5 vs T tw3, lines differing per port"
dev_same $d/h_T_tw5 $d/h_T_tw3 "T tw5 == T tw3, uncut, $(wc -l < $d/h_T_tw3) hash lines"
[ -n "$bg" ] && DEV_CAP_S=20 dev_bwd_case B_rule $bg
[ -n "$bg" ] && dev_same $d/h_T_tw5 $d/h_B_rule "tw5 == base32 by rule (tw3), uncut"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=20 dev_bwd_case T_tw5_p8 $t $W5 $P8
DEV_CAP_S=20 dev_bwd_case T_tw3_p8 $t $W3 $P8
dev_port_diff $d/h_T_tw5_p8 $d/h_T_tw3_p8 "8 pieces: T tw5 vs T tw3, lines differing per port"
dev_same $d/h_T_tw5_p8 $d/h_T_tw3_p8 "T tw5 == T tw3, 8 pieces, $(wc -l < $d/h_T_tw3_p8) hash lines"
[ -n "$bg" ] && DEV_CAP_S=20 dev_bwd_case B_rule_p8 $bg $P8
[ -n "$bg" ] && dev_same $d/h_T_tw5_p8 $d/h_B_rule_p8 "tw5 == base32 by rule (tw3), 8 pieces"
mkdir -p $OUT/h; cp $d/h_* $OUT/h/ 2>/dev/null
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 110 ] && DEV_CAP_S=40 dev_timing "T tw3 tw5 tw5 tw3 (A B B A)" $t "tw3/,tw5/,tw5/,tw3/"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 150 ] && DEV_CAP_S=32 dev_parity "gpu_gdn backward (tw5)" $t backward $W5
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 180 ] && DEV_CAP_S=16 dev_memcheck $t backward_parity $W5
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 95 ] && DEV_CAP_S=25 dev_timing "T tw5 tw3 tw3 tw5 (B A A B)" $t "tw5/,tw3/,tw3/,tw5/"
echo "elapsed ${SECONDS}s"
# Call 2: the persistent loop without its prefetch (every tile issues its own copies, as tw3).
[ $SECONDS -lt 120 ] && DEV_CAP_S=25 dev_timing "T tw3 tw5-noprefetch tw5-noprefetch tw3 (A B B A)" $t "tw3/,tw5/,tw5/,tw3/" DNNPLAN_GDN_BWD_TW5_PREFETCH=0
echo "done ${SECONDS}s"
