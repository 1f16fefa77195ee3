# Session 32 (helper tp32), call 2: tw3 (REV 32: tw1 with the unit's flag waited before the tile's
# first barrier and each quarter's dS' / dR copies issued with its S, U, dO; the same arithmetic).
#   1. backward_parity with tw3 and tw1 (uncut, 8 pieces) in this build: BITWISE expected;
#      this build by rule (tw1) vs base31 (main cfd4a3a): BITWISE expected (tw1 unchanged)
#   2. timing in one process A B B A: tw1 tw3 tw3 tw1 at the four shapes
#   3. gpu_gdn backward tests (fp64 reference) with tw3; memcheck backward_parity with tw3
#   4. if time is left: B A A B timing; the phase marks of tw3 (P = the timing-only build,
#      bench/gdn_tp32_phases.patch on this branch) at (4,8192,16)
# Command: `cd .xfer-tp32 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_tp32b.sh`.
source bench/device_lib.sh
dev_begin tp32b
d=$DEV_TMP
t=$(dev_bin gpu_gdn)
bg=$(ls base/gpu_gdn-* 2>/dev/null | head -1)
pb=$(ls phases/gpu_gdn_bench-* 2>/dev/null | head -1)
echo "binaries: T $t B $bg P $pb"
W3="DNNPLAN_GDN_BWD_TOKENS=tw3"
W1="DNNPLAN_GDN_BWD_TOKENS=tw1"
P8="DNNPLAN_GDN_BWD_PIECES=8"
DEV_CAP_S=20 dev_bwd_case T_tw3 $t $W3
DEV_CAP_S=20 dev_bwd_case T_tw1 $t $W1
dev_port_diff $d/h_T_tw3 $d/h_T_tw1 "T tw3 vs T tw1, lines differing per port"
dev_same $d/h_T_tw3 $d/h_T_tw1 "T tw3 == T tw1, uncut, $(wc -l < $d/h_T_tw1) hash lines"
DEV_CAP_S=20 dev_bwd_case T_tw3_p8 $t $W3 $P8
DEV_CAP_S=20 dev_bwd_case T_tw1_p8 $t $W1 $P8
dev_port_diff $d/h_T_tw3_p8 $d/h_T_tw1_p8 "8 pieces: T tw3 vs T tw1, lines differing per port"
dev_same $d/h_T_tw3_p8 $d/h_T_tw1_p8 "T tw3 == T tw1, 8 pieces, $(wc -l < $d/h_T_tw1_p8) hash lines"
[ -n "$bg" ] && DEV_CAP_S=20 dev_bwd_case B_rule $bg
[ -n "$bg" ] && dev_same $d/h_T_tw1 $d/h_B_rule "T tw1 == base31 by rule (tw1), uncut"
cp $d/h_* $OUT/ 2>/dev/null
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 50 ] && DEV_CAP_S=35 dev_timing "T tw1 tw3 tw3 tw1 (A B B A)" $t "tw1/,tw3/,tw3/,tw1/"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 75 ] && DEV_CAP_S=32 dev_parity "gpu_gdn backward (tw3)" $t backward $W3
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 100 ] && DEV_CAP_S=14 dev_memcheck $t backward_parity $W3
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 105 ] && DEV_CAP_S=30 dev_timing "T tw3 tw1 tw1 tw3 (B A A B)" $t "tw3/,tw1/,tw1/,tw3/"
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 130 ] && [ -n "$pb" ]; then
  mkdir -p $OUT/tp
  for w in tw3 tw1; do
    DNNPLAN_GDN_BWD_TOKENS=$w DNNPLAN_GDN_PHASES=1 DNNPLAN_GDN_BENCH_SHAPES="0" \
      timeout 15 $pb gdn_tile_phases --test-threads=1 --nocapture > $OUT/tp/phases_$w.log 2>&1
    echo "phases $w rc=$?"
    grep -E "^TP .* alone" $OUT/tp/phases_$w.log | sed "s/^TP/TP $w/"
  done
fi
echo "done ${SECONDS}s"
