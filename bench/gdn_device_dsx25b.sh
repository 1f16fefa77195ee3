# Session 25 (helper dsx25), call 2: with the piece chain's seeded pass on the same wgmma loop,
# gdn_bwd_dscanp_ov2gx_{bf16,f16}_k128 (DNNPLAN_GDN_BWD_DSCAN=ov2gx now swaps both io-dR producers
# at K = V = 128). The uncut dscan_ov2gx is byte-identical to call 1's (textcmp). T = this build
# (branch dsx25), B = /work/base25/gpu_gdn_s25base (main 6b47f08).
#   0. smoke: backward_parity with ov2gx at 8 pieces (capped: a hang = a publish bug)
#   1. timing in one process A B B A: tc13 tc13/ov2gx tc13/ov2gx tc13 at the four shapes
#      ((1, 32768, 16) runs the piece chain by rule: dscanp_ov2gx)
#   2. the gpu_gdn backward tests with ov2gx, by rule and at 8 pieces
#   3. memcheck backward_parity with ov2gx at 8 pieces
#   4. hashes at 8 pieces: T ov2gx vs T default per port; T default == B
# Stage as gdn_device_dsx25.sh (with this script); command
# `cd .xfer-dsx25 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_dsx25b.sh`.
source bench/device_lib.sh
dev_begin dsx25b
d=$DEV_TMP
mkdir -p base && [ -f gpu_gdn_s25base ] && mv gpu_gdn_s25base base/
t=$(dev_bin gpu_gdn); b=base/gpu_gdn_s25base
echo "binaries: T $t, B $b"
GX="DNNPLAN_GDN_BWD_DSCAN=ov2gx"
P8="DNNPLAN_GDN_BWD_PIECES=8"
DEV_CAP_S=40 dev_parity "smoke backward_parity (ov2gx, 8 pieces)" $t backward_parity $GX $P8
echo "elapsed ${SECONDS}s"
DEV_CAP_S=80 dev_timing "T tc13 tc13/ov2gx tc13/ov2gx tc13" $t "tc13,tc13/ov2gx,tc13/ov2gx,tc13"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 140 ] && DEV_CAP_S=45 dev_parity "gpu_gdn backward (ov2gx, 8 pieces)" $t backward $GX $P8
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 170 ] && DEV_CAP_S=40 dev_parity "gpu_gdn backward (ov2gx)" $t backward $GX
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 200 ] && DEV_CAP_S=25 dev_memcheck $t backward_parity $GX $P8
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 220 ]; then
  DEV_CAP_S=12 dev_hashes bwd $t $P8 > $d/h_T_p8
  DEV_CAP_S=12 dev_hashes bwd $t $GX $P8 > $d/h_T_p8_gx
  dev_port_diff $d/h_T_p8_gx $d/h_T_p8 "8 pieces, T ov2gx vs T default, lines differing per port"
  cp $d/h_T_p8_gx $OUT/h_T_p8_gx.txt; cp $d/h_T_p8 $OUT/h_T_p8.txt
fi
[ $SECONDS -lt 235 ] && DEV_CAP_S=12 dev_hashes bwd $b $P8 > $d/h_B_p8 && \
  dev_same $d/h_T_p8 $d/h_B_p8 "8 pieces, T default == B 6b47f08, $(wc -l < $d/h_T_p8) hash lines"
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
