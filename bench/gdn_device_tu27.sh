# Session 27 (helper tu27): the storing replay gdn_bwd_fscan_gx{,4}u_* (STORE_U: each chunk's io U
# tile into ws_dr's second half) + the token stage tc16 (gdn_bwd_tokens_tc16_ov_*, REV 16: loads U
# instead of W, Ũᵀ and the U product), DNNPLAN_GDN_BWD_TOKENS=tc16 (the default stays tc13).
# T = this build (branch tu27), B = /work/base27/gpu_gdn-* (main cd68965, the lead's base build).
#   0. smoke: backward_parity with tc16 (capped)
#   1. hashes: T tc16 == T tc13 == B default, uncut by rule and at DNNPLAN_GDN_BWD_PIECES=8
#      (where tc16 falls back to tc13)
#   2. the gpu_gdn backward tests with tc16
#   3. memcheck backward_parity with tc16
#   4. timing in one process A B B A: tc13 tc16 tc16 tc13 at the four shapes
# Command: `cd .xfer-tu27 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_tu27.sh`.
source bench/device_lib.sh
dev_begin tu27
d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | head -1)
echo "binaries: T $t, B $b"
U="DNNPLAN_GDN_BWD_TOKENS=tc16"
C="DNNPLAN_GDN_BWD_TOKENS=tc13"
P8="DNNPLAN_GDN_BWD_PIECES=8"
DEV_CAP_S=40 dev_parity "smoke backward_parity (tc16)" $t backward_parity $U
echo "elapsed ${SECONDS}s"
DEV_CAP_S=15 dev_hashes bwd $t $U > $d/h_T_u
DEV_CAP_S=15 dev_hashes bwd $t $C > $d/h_T_c
DEV_CAP_S=15 dev_hashes bwd $t > $d/h_T_d
DEV_CAP_S=15 dev_hashes bwd $b > $d/h_B_d
dev_same $d/h_T_u $d/h_T_c "uncut by rule, T tc16 == T tc13, $(wc -l < $d/h_T_u) hash lines"
dev_port_diff $d/h_T_u $d/h_T_c "T tc16 vs T tc13, lines differing per port"
dev_same $d/h_T_u $d/h_B_d "T tc16 == B default (cd68965)"
dev_same $d/h_T_d $d/h_B_d "T default == B default"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=15 dev_hashes bwd $t $U $P8 > $d/h_T_u8
DEV_CAP_S=15 dev_hashes bwd $b $P8 > $d/h_B_8
dev_same $d/h_T_u8 $d/h_B_8 "8 pieces, T tc16 == B default, $(wc -l < $d/h_T_u8) hash lines"
cp $d/h_* $OUT/ 2>/dev/null
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 110 ] && DEV_CAP_S=40 dev_parity "gpu_gdn backward (tc16)" $t backward $U
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 140 ] && DEV_CAP_S=28 dev_memcheck $t backward_parity $U
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 165 ] && DEV_CAP_S=32 dev_timing "T tc13 tc16 tc16 tc13" $t "tc13,tc16,tc16,tc13"
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
