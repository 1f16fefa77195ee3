# Session 22 (helper slimb22), call 2: the rebuild with packed conversions (slimb_rebuild: 12
# cvt.rn.*x2 per 16 elements instead of 16 scalar cvt + 4 packed; call 1: the reverse scan +20 %
# with the scalar ones). T = this build, B = base/gpu_gdn_s22base (main d6063d8). 1. timing in one
# process, A B B A (keep slim slim keep; tc13 likewise); 2. hashes T slim == B (rule, 8 pieces).
# Stage as call 1 (bench/gdn_device_slimb22.sh), command `... && bash bench/gdn_device_slimb22b.sh`.
exec > >(tee $OUT/slimb22b.log) 2>&1
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/slimb22b
mkdir -p $DEV_TMP; d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=base/gpu_gdn_s22base
cat cubins.sha256
echo "binaries: T $t, B $b"
DEV_CAP_S=40 dev_timing "T keep slim slim keep" $t "tc12/ov5/keep,tc12/ov5/slim,tc12/ov5/slim,tc12/ov5/keep"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=40 dev_timing "T tc13: keep slim slim keep" $t "tc13/ov5/keep,tc13/ov5/slim,tc13/ov5/slim,tc13/ov5/keep"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=30 dev_hashes bwd $b > $d/h_B
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_PREP=slim > $d/h_T_slim
dev_same $d/h_T_slim $d/h_B "backward rule, T slim == B d6063d8, $(wc -l < $d/h_T_slim) hash lines"
DEV_CAP_S=30 dev_hashes bwd $b DNNPLAN_GDN_BWD_PIECES=8 > $d/h_B_p8
DEV_CAP_S=30 dev_hashes bwd $t DNNPLAN_GDN_BWD_PIECES=8 DNNPLAN_GDN_BWD_PREP=slim > $d/h_T_p8_slim
dev_same $d/h_T_p8_slim $d/h_B_p8 "backward 8 pieces, T slim == B, $(wc -l < $d/h_T_p8_slim) hash lines"
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
