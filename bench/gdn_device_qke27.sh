# Session 27 (helper qke27): the backward's scalar form (gdn_bwd_prep15sc, fscan_gx{,4}sc,
# dscan_ov2gxsc; DNNPLAN_GDN_BWD_PREP=scaled) on the H200. T = this build (branch qke27),
# B = /work/base27's gpu_gdn (main cd68965).
#   0. smoke: backward_parity scaled (capped: a hang = a publish bug), its hash / error lines
#   1. backward_parity by rule (full form) on T and B: BITWISE expected
#   2. PORTS scaled vs full, the error lines of both (the fp64 reference's rms ratios)
#   3. timing in one process A B B A: tc13 tc13@scaled tc13@scaled tc13
#   4. 8 pieces: scaled must fall back to the full form (BITWISE T scaled == T full)
#   5. gpu_gdn backward tests with scaled; memcheck backward_parity scaled
# Command: `cd .xfer-qke27 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_qke27.sh`.
source bench/device_lib.sh
dev_begin qke27
d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, B $b"
SC="DNNPLAN_GDN_BWD_PREP=scaled"
P8="DNNPLAN_GDN_BWD_PIECES=8"
DEV_CAP_S=40 dev_bwd_case scaled $t $SC
echo "elapsed ${SECONDS}s"
DEV_CAP_S=30 dev_bwd_case full $t
DEV_CAP_S=30 dev_bwd_case base $b
dev_same $d/h_full $d/h_base "backward rule, T full == B cd68965, $(wc -l < $d/h_full) hash lines"
dev_port_diff $d/h_scaled $d/h_full "T scaled vs T full, lines differing per port"
echo "== errors (rms ratio vs fp64) full:"; cat $d/h_full
echo "== errors (rms ratio vs fp64) scaled:"; cat $d/h_scaled
cp $d/h_full $OUT/h_full.txt; cp $d/h_scaled $OUT/h_scaled.txt
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 100 ] && DEV_CAP_S=75 dev_timing "T tc13 tc13@scaled tc13@scaled tc13" $t "tc13,tc13@scaled,tc13@scaled,tc13"
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 150 ]; then
  DEV_CAP_S=25 dev_bwd_case p8 $t $P8
  DEV_CAP_S=25 dev_bwd_case p8scaled $t $SC $P8
  dev_same $d/h_p8scaled $d/h_p8 "8 pieces, T scaled == T full (the fall-back), $(wc -l < $d/h_p8) hash lines"
fi
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 175 ] && DEV_CAP_S=20 dev_memcheck $t backward_parity $SC
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 185 ] && DEV_CAP_S=$((198 - SECONDS)) dev_parity "gpu_gdn backward (scaled)" $t backward $SC
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
