# Session 25 (helper dsx25), call 1: the overlapped uncut reverse scan on wgmma,
# gdn_bwd_dscan_ov2gx_{bf16,f16}_k128 (kernels/include/gdn_bwd_dscan_gx.cuh; DNNPLAN_GDN_BWD_DSCAN=ov2gx,
# which keeps tc13 by rule and replaces only the uncut io-dR producer dscan_ov5dr at K = V = 128).
# T = this build (branch dsx25), B = /work/base25/gpu_gdn_s25base (main 6b47f08).
#   0. smoke: backward_parity with ov2gx (a hang = a publish / barrier bug; capped)
#   1. timing in one process A B B A: tc13 (= ov5dr, the default's pair) tc13/ov2gx tc13/ov2gx tc13,
#      whole backward and the stages (dscan = the scan alone, cut after its launch)
#   2. the gpu_gdn backward tests with ov2gx (backward_parity* against the fp64 reference)
#   3. memcheck backward_parity with ov2gx
#   4. hashes: T default == B (the default is untouched), T ov2gx vs T default per port
# Stage (from the worktree): tar czf /work/main/.xfer-dsx25/device.tgz .device/device-env.sh .device/lib
#   .device/tests/gpu_gdn-* bench/device_lib.sh bench/gdn_device_dsx25.sh -C /work/base25 gpu_gdn_s25base
# run tool: carry [".xfer-dsx25"], command `cd .xfer-dsx25 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_dsx25.sh`.
source bench/device_lib.sh
dev_begin dsx25
d=$DEV_TMP
mkdir -p base && [ -f gpu_gdn_s25base ] && mv gpu_gdn_s25base base/
t=$(dev_bin gpu_gdn); b=base/gpu_gdn_s25base
echo "binaries: T $t, B $b"
GX="DNNPLAN_GDN_BWD_DSCAN=ov2gx"
# 0. smoke
DEV_CAP_S=40 dev_parity "smoke backward_parity (ov2gx)" $t backward_parity $GX
echo "elapsed ${SECONDS}s"
# 1. timing A B B A
DEV_CAP_S=80 dev_timing "T tc13 tc13/ov2gx tc13/ov2gx tc13" $t "tc13,tc13/ov2gx,tc13/ov2gx,tc13"
echo "elapsed ${SECONDS}s"
# 2. backward tests with ov2gx
[ $SECONDS -lt 170 ] && DEV_CAP_S=60 dev_parity "gpu_gdn backward (ov2gx)" $t backward $GX
echo "elapsed ${SECONDS}s"
# 3. memcheck
[ $SECONDS -lt 220 ] && DEV_CAP_S=30 dev_memcheck $t backward_parity $GX
echo "elapsed ${SECONDS}s"
# 4. hashes
if [ $SECONDS -lt 250 ]; then
  DEV_CAP_S=20 dev_hashes bwd $t > $d/h_T_rule
  DEV_CAP_S=20 dev_hashes bwd $t $GX > $d/h_T_gx
  dev_port_diff $d/h_T_gx $d/h_T_rule "T ov2gx vs T default, lines differing per port"
  cp $d/h_T_gx $OUT/h_T_gx.txt; cp $d/h_T_rule $OUT/h_T_rule.txt
fi
[ $SECONDS -lt 275 ] && DEV_CAP_S=20 dev_hashes bwd $b > $d/h_B_rule && \
  dev_same $d/h_T_rule $d/h_B_rule "backward rule, T default == B 6b47f08, $(wc -l < $d/h_T_rule) hash lines"
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
