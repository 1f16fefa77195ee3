# Session 27 (helper qke27), call 2: the scalar form combined with tu27's tc16 pair (branch qke27
# after merging tu27: gdn_bwd_fscan_gx{,4}scu = STORE_U + RAW_K_SCALED). T = this build,
# B = /work/base27's gpu_gdn (main cd68965).
#   0. smoke: backward_parity tc16 + scaled; tc13 + scaled; BITWISE expected (tc16 stores the U
#      that tc13 recomputes, in the scalar form as in the full one); PORTS vs the full form
#   1. full form by rule: T == B bitwise; tc16 (full) == T default bitwise
#   2. timing in one process: tc13 tc16@scaled tc13@scaled tc16 tc16 tc13@scaled tc16@scaled tc13
#   3. 8 pieces: tc16 + scaled falls back (BITWISE T == T default at 8 pieces)
#   4. memcheck backward_parity tc16 + scaled; gpu_gdn backward tests with tc16 + scaled
# Command: `cd .xfer-qke27 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_qke27b.sh`.
source bench/device_lib.sh
dev_begin qke27b
d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, B $b"
SC="DNNPLAN_GDN_BWD_PREP=scaled"
U="DNNPLAN_GDN_BWD_TOKENS=tc16"
P8="DNNPLAN_GDN_BWD_PIECES=8"
DEV_CAP_S=40 dev_bwd_case u_scaled $t $U $SC
DEV_CAP_S=30 dev_bwd_case scaled $t $SC
dev_same $d/h_u_scaled $d/h_scaled "T tc16 scaled == T tc13 scaled, $(wc -l < $d/h_scaled) hash lines"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=30 dev_bwd_case full $t
DEV_CAP_S=30 dev_bwd_case u_full $t $U
DEV_CAP_S=30 dev_bwd_case base $b
dev_same $d/h_full $d/h_base "backward rule, T full == B cd68965, $(wc -l < $d/h_full) hash lines"
dev_same $d/h_u_full $d/h_full "T tc16 full == T default"
dev_port_diff $d/h_u_scaled $d/h_full "T tc16 scaled vs T full, lines differing per port"
echo "== errors (rms ratio vs fp64) tc16 scaled:"; cat $d/h_u_scaled
cp $d/h_full $OUT/h_full.txt; cp $d/h_u_scaled $OUT/h_u_scaled.txt
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 90 ] && DEV_CAP_S=80 dev_timing "T tc13 tc16@scaled tc13@scaled tc16 tc16 tc13@scaled tc16@scaled tc13" $t \
  "tc13,tc16@scaled,tc13@scaled,tc16,tc16,tc13@scaled,tc16@scaled,tc13"
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 150 ]; then
  DEV_CAP_S=25 dev_bwd_case p8 $t $P8
  DEV_CAP_S=25 dev_bwd_case p8u_scaled $t $U $SC $P8
  dev_same $d/h_p8u_scaled $d/h_p8 "8 pieces, T tc16 scaled == T default (the fall-back), $(wc -l < $d/h_p8) hash lines"
fi
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 170 ] && DEV_CAP_S=20 dev_memcheck $t backward_parity $U $SC
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 185 ] && DEV_CAP_S=$((205 - SECONDS)) dev_parity "gpu_gdn backward (tc16, scaled)" $t backward $U $SC
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
