# Session 20 (helper bwd20), call 1: dscan18's publisher-warp producer ov5 (gdn_bwd_dscan{,p}_ov5_*,
# DNNPLAN_GDN_BWD_DSCAN=ov5) on main a85a1e8's code, the checks dscan18 left open. This build (T,
# branch bwd20: ov5 entries byte-identical to dscan18's run-2 machine code, every other entry to
# a85a1e8's) against the session's base (B = base/gpu_gdn_s19base, a85a1e8's default kernels):
# timing in one process A B B A (ov2 ov5 ov5 ov2) at the four benchmark shapes; backward hashes by
# rule (T default, T ov5, B default) and at 8 pieces (T ov5, B); the gpu_gdn backward tests with ov5;
# memcheck of backward_parity with ov5.
# Stage: tar czf /work/main/.xfer-bwd20/device.tgz .device/device-env.sh .device/tests/gpu_gdn-*
#   bench/device_lib.sh bench/gdn_device_bwd20a.sh cubins.sha256 -C /work/wt base/gpu_gdn_s19base
# run tool: carry [".xfer-bwd20"], command `cd .xfer-bwd20 && tar xzf device.tgz && bash bench/gdn_device_bwd20a.sh`.
exec > >(tee $OUT/bwd20a.log) 2>&1
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/bwd20a
mkdir -p $DEV_TMP; d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=base/gpu_gdn_s19base
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binaries: T $t, B $b"
# 1. Timing, one process, A B B A.
DEV_CAP_S=60 dev_timing "T ov2 ov5 ov5 ov2" $t "tc12/ov2,tc12/ov5,tc12/ov5,tc12/ov2"
echo "elapsed ${SECONDS}s"
# 2. Backward hashes.
DEV_CAP_S=30 dev_hashes bwd $b > $d/h_B_rule
DEV_CAP_S=30 dev_hashes bwd $t > $d/h_T_rule
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_DSCAN=ov5 > $d/h_T_rule_ov5
dev_same $d/h_T_rule $d/h_B_rule "backward rule, T default == B a85a1e8, $(wc -l < $d/h_T_rule) hash lines"
dev_same $d/h_T_rule_ov5 $d/h_T_rule "backward rule, T ov5 == T default, $(wc -l < $d/h_T_rule_ov5) hash lines"
dev_same $d/h_T_rule_ov5 $d/h_B_rule "backward rule, T ov5 == B a85a1e8, $(wc -l < $d/h_T_rule_ov5) hash lines"
DEV_CAP_S=30 dev_hashes bwd $b DNNPLAN_GDN_BWD_PIECES=8 > $d/h_B_p8
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_PIECES=8 DNNPLAN_GDN_BWD_DSCAN=ov5 > $d/h_T_p8_ov5
dev_same $d/h_T_p8_ov5 $d/h_B_p8 "backward 8 pieces, T ov5 == B a85a1e8, $(wc -l < $d/h_T_p8_ov5) hash lines"
echo "elapsed ${SECONDS}s"
# 3. The gpu_gdn backward tests with ov5 (backward_parity_matrix, the checkpoint tests).
DEV_CAP_S=60 dev_parity "gpu_gdn backward (ov5)" $t backward DNNPLAN_GDN_BWD_DSCAN=ov5
echo "elapsed ${SECONDS}s"
# 4. memcheck with ov5.
[ $SECONDS -lt 110 ] && DEV_CAP_S=30 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_DSCAN=ov5
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
