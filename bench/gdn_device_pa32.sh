# Session 32 (helper pa32), one call: tw4 (REV 34: tw3 with the row phase's norms / q̂ / k̂
# (warpgroup 1) and phase A's Q̂K̂ᵀ / K̂K̂ᵀ (every warp) before the hand-off; the same arithmetic).
#   1. backward_parity with tw4 and tw3 (uncut, 8 pieces) in this build: BITWISE expected
#      (tw3's SASS here is byte-identical to main 4e2752a's)
#   2. whole backward, one process, A B B A: tw3 tw4 tw4 tw3 at the four shapes
#   3. memcheck backward_parity with tw4; gpu_gdn backward tests (fp64 reference) with tw4
# Command: `cd .xfer-pa32 && tar xJf device.txz && OUT=$OUT timeout 75 bash bench/gdn_device_pa32.sh`.
source bench/device_lib.sh
dev_begin pa32
d=$DEV_TMP
t=$(dev_bin gpu_gdn)
echo "binaries: T $t"
W4="DNNPLAN_GDN_BWD_TOKENS=tw4"
W3="DNNPLAN_GDN_BWD_TOKENS=tw3"
P8="DNNPLAN_GDN_BWD_PIECES=8"
DEV_CAP_S=20 dev_bwd_case T_tw4 $t $W4
DEV_CAP_S=20 dev_bwd_case T_tw3 $t $W3
dev_port_diff $d/h_T_tw4 $d/h_T_tw3 "T tw4 vs T tw3, lines differing per port"
dev_same $d/h_T_tw4 $d/h_T_tw3 "T tw4 == T tw3, uncut, $(wc -l < $d/h_T_tw3) hash lines"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 40 ] && DEV_CAP_S=30 dev_timing "T tw3 tw4 tw4 tw3 (A B B A)" $t "tw3/,tw4/,tw4/,tw3/"
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 60 ]; then
  DEV_CAP_S=15 dev_bwd_case T_tw4_p8 $t $W4 $P8
  DEV_CAP_S=15 dev_bwd_case T_tw3_p8 $t $W3 $P8
  dev_port_diff $d/h_T_tw4_p8 $d/h_T_tw3_p8 "8 pieces: T tw4 vs T tw3, lines differing per port"
  dev_same $d/h_T_tw4_p8 $d/h_T_tw3_p8 "T tw4 == T tw3, 8 pieces, $(wc -l < $d/h_T_tw3_p8) hash lines"
fi
cp $d/h_* $OUT/ 2>/dev/null
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 75 ] && DEV_CAP_S=14 dev_memcheck $t backward_parity $W4
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 40 ] && DEV_CAP_S=25 dev_parity "gpu_gdn backward (tw4)" $t backward $W4
echo "done ${SECONDS}s"
