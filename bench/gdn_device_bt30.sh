# Session 30 (helper bt30): the backward plan's kernels chosen once from one table
# (src/engines/gdn/bwd_select.rs; host code only, the cubins unchanged). T = this build (branch
# bt30), B = /work/base30's gpu_gdn (main 7809042). The plan dump (bwd_plan_dump, 176,592 plans)
# is byte-identical on the CPU; here the gradients' hashes must be too:
#   1. backward_parity hashes T == B by rule, with DNNPLAN_GDN_BWD_PREP=slim, at 8 pieces
#   2. gpu_gdn backward tests of T (default)
# Command: `cd .xfer-bt30 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_bt30.sh`.
source bench/device_lib.sh
dev_begin bt30
d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=$(ls base/gpu_gdn-* | grep -v bench | head -1)
echo "binaries: T $t, B $b"
SLIM="DNNPLAN_GDN_BWD_PREP=slim"
P8="DNNPLAN_GDN_BWD_PIECES=8"
DEV_CAP_S=20 dev_bwd_case def $t
DEV_CAP_S=20 dev_bwd_case base $b
dev_same $d/h_def $d/h_base "backward by rule: T bt30 == B 7809042, $(wc -l < $d/h_def) hash lines"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=20 dev_bwd_case slim $t $SLIM
DEV_CAP_S=20 dev_bwd_case slimbase $b $SLIM
dev_same $d/h_slim $d/h_slimbase "backward with PREP=slim: T bt30 == B 7809042, $(wc -l < $d/h_slim) hash lines"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=20 dev_bwd_case p8 $t $P8
DEV_CAP_S=20 dev_bwd_case p8base $b $P8
dev_same $d/h_p8 $d/h_p8base "backward at 8 pieces: T bt30 == B 7809042, $(wc -l < $d/h_p8) hash lines"
echo "elapsed ${SECONDS}s"
cp $d/h_def $OUT/h_def.txt; cp $d/h_base $OUT/h_base.txt
[ $SECONDS -lt 80 ] && DEV_CAP_S=38 dev_parity "gpu_gdn backward (T, default)" $t backward
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
