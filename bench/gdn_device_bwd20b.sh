# Session 20 (helper bwd20), call 2: the token stage's dR in the io dtype, as an experiment (X): a
# gpu_gdn build whose gdn_bwd cubin was built with -DGDN_DRIO_EXP=1 (the default overlapped pair:
# gdn_bwd_dscan_ov2_* / dscanp_ov2_* store dR as io [64][V] over the fp32 region, DR_IO;
# gdn_bwd_tokens_tc12_ov_* is REV 13: the io dR tile by cp.async, pass 1's A fragments by ldmatrix,
# dv / dβ's value part from the io dR). Everything else as T (call 1's build, bundled cubin).
# Timing: one process per run, T X X T, whole backward per stage at the four shapes; then
# backward_parity of X (the fp64 reference's tolerances; hashes: dQ, dK, dG, d_initial_state should
# equal T's, dV / dBeta change) and memcheck of X.
# Stage: tar czf /work/main/.xfer-bwd20/device.tgz .device/device-env.sh .device/tests/gpu_gdn-*
#   bench/device_lib.sh bench/gdn_device_bwd20b.sh cubins.sha256 xbin/gpu_gdn_drio
# run tool: carry [".xfer-bwd20"], command `cd .xfer-bwd20 && tar xzf device.tgz && bash bench/gdn_device_bwd20b.sh`.
exec > >(tee $OUT/bwd20b.log) 2>&1
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/bwd20b
mkdir -p $DEV_TMP; d=$DEV_TMP
t=$(dev_bin gpu_gdn); x=xbin/gpu_gdn_drio
cat cubins.sha256
echo "binaries: T $t, X $x"
DEV_CAP_S=25 dev_timing "T (a)" $t tc12
DEV_CAP_S=25 dev_timing "X (a)" $x tc12
DEV_CAP_S=25 dev_timing "X (b)" $x tc12
DEV_CAP_S=25 dev_timing "T (b)" $t tc12
echo "elapsed ${SECONDS}s"
DEV_CAP_S=25 dev_bwd_case T $t
DEV_CAP_S=25 dev_bwd_case X $x
dev_same $d/h_X $d/h_T "backward rule, X (io dR) == T, $(wc -l < $d/h_X) hash lines"
paste -d'\n' $d/h_T $d/h_X
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 48 ] && DEV_CAP_S=20 dev_memcheck $x backward_parity
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
