# Session 33 (helper pq33), one call: tw6 (REV 35: tw3 with the dR pass and dD's partial per value
# quarter as each quarter lands; the same values claimed).
#   1. backward_parity with tw6 and tw3 (uncut, 8 pieces) in this build, and base32 (main 83a5e86,
#      tw3 by rule) by rule: BITWISE expected (tw6 == tw3 == base32's rule)
#   2. whole backward, one process, A B B A: tw3 tw6 tw6 tw3 at the four shapes
#   3. gpu_gdn backward tests (fp64 reference) with tw6; memcheck backward_parity with tw6
# Command (after pa32's staged script in the same call): `cd .xfer-pq33 && tar xJf device.txz &&
# OUT=$OUT timeout 110 bash bench/gdn_device_pq33.sh`. PQ_PART=1: steps 1-2 only (~45 s);
# PQ_PART=2: step 3 only (~35 s); PQ_PART=3: tw6 against call 1's hash files in ref/ (uncut and 8
# pieces) and the timing (~30 s); unset: all.
source bench/device_lib.sh
dev_begin pq33
d=$DEV_TMP
t=$(dev_bin gpu_gdn)
bg=$(ls base/gpu_gdn-* 2>/dev/null | head -1)
echo "binaries: T $t B $bg"
W6="DNNPLAN_GDN_BWD_TOKENS=tw6"
W3="DNNPLAN_GDN_BWD_TOKENS=tw3"
P8="DNNPLAN_GDN_BWD_PIECES=8"
PART=${PQ_PART:-0}
if [ "$PART" = 3 ]; then
  # The second form, quick: tw6 against call 1's hashes of this build's tw3 (uncut; == base32's
  # rule) and of base32's rule at 8 pieces (ref/), then the timing.
  DEV_CAP_S=20 dev_bwd_case T_tw6 $t $W6
  dev_port_diff $d/h_T_tw6 ref/h_T_tw3 "T tw6 vs call 1's tw3, lines differing per port"
  dev_same $d/h_T_tw6 ref/h_T_tw3 "T tw6 == tw3 (call 1, == base32 by rule), uncut, $(wc -l < ref/h_T_tw3) hash lines"
  DEV_CAP_S=20 dev_bwd_case T_tw6_p8 $t $W6 $P8
  dev_port_diff $d/h_T_tw6_p8 ref/h_B_rule_p8 "8 pieces: T tw6 vs base32 by rule, lines differing per port"
  dev_same $d/h_T_tw6_p8 ref/h_B_rule_p8 "T tw6 == base32 by rule (tw3), 8 pieces, $(wc -l < ref/h_B_rule_p8) hash lines"
  cp $d/h_* $OUT/ 2>/dev/null
  echo "elapsed ${SECONDS}s"
  DEV_CAP_S=35 dev_timing "T tw3 tw6 tw6 tw3 (A B B A)" $t "tw3/,tw6/,tw6/,tw3/"
  echo "done ${SECONDS}s"
  exit 0
fi
if [ "$PART" != 2 ]; then
DEV_CAP_S=20 dev_bwd_case T_tw6 $t $W6
DEV_CAP_S=20 dev_bwd_case T_tw3 $t $W3
[ -n "$bg" ] && DEV_CAP_S=20 dev_bwd_case B_rule $bg
dev_port_diff $d/h_T_tw6 $d/h_T_tw3 "T tw6 vs T tw3, lines differing per port"
dev_same $d/h_T_tw6 $d/h_T_tw3 "T tw6 == T tw3, uncut, $(wc -l < $d/h_T_tw3) hash lines"
[ -n "$bg" ] && dev_same $d/h_T_tw6 $d/h_B_rule "T tw6 == base32 by rule (tw3), uncut, $(wc -l < $d/h_B_rule) hash lines"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=20 dev_bwd_case T_tw6_p8 $t $W6 $P8
[ -n "$bg" ] && DEV_CAP_S=20 dev_bwd_case B_rule_p8 $bg $P8
dev_port_diff $d/h_T_tw6_p8 $d/h_B_rule_p8 "8 pieces: T tw6 vs base32 by rule, lines differing per port"
dev_same $d/h_T_tw6_p8 $d/h_B_rule_p8 "T tw6 == base32 by rule (tw3), 8 pieces, $(wc -l < $d/h_B_rule_p8) hash lines"
cp $d/h_* $OUT/ 2>/dev/null
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 40 ] && DEV_CAP_S=35 dev_timing "T tw3 tw6 tw6 tw3 (A B B A)" $t "tw3/,tw6/,tw6/,tw3/"
echo "elapsed ${SECONDS}s"
fi
if [ "$PART" != 1 ]; then
DEV_CAP_S=30 dev_parity "gpu_gdn backward (tw6)" $t backward $W6
echo "elapsed ${SECONDS}s"
DEV_CAP_S=16 dev_memcheck $t backward_parity $W6
fi
echo "done ${SECONDS}s"
