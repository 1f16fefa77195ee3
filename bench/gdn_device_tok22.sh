# Session 22 (helper tok22), call 1: token stage tc14 / tc15 (DNNPLAN_GDN_BWD_TOKENS=tc14|tc15: the
# value products on wgmma, REV 14 / 15, kernels/include/dnnp_wgmma.cuh). T = this build (branch tok22).
# 1. the wgmma wrappers against an fp64 matmul (bench/dnnp_wgmma_selftest.cu, built on the CPU
#    machine with nvcc 13.0 + static cudart: ./wgst);  2. the gpu_gdn backward tests with tc14;
# 3. timing in one process A B B A (tc12 tc14 tc14 tc12) at the four benchmark shapes; 4. tc15
# tests and timing (tc13 tc15 tc15 tc13) if time is left; 5. memcheck backward_parity with tc14.
# Stage: XZ_OPT='-T2 -9' tar cJf /work/main/.xfer-tok22/device.txz .device/device-env.sh .device/tests/gpu_gdn-*
#   bench/device_lib.sh bench/gdn_device_tok22.sh cubins.sha256 wgst
# run tool: carry [".xfer-tok22"], command `cd .xfer-tok22 && tar xJf device.txz && bash bench/gdn_device_tok22.sh`.
exec > >(tee $OUT/tok22.log) 2>&1
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/tok22
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binary: T $t"
# 1. wgmma self-test.
timeout 30 ./wgst
st=$?
echo "selftest rc=$st elapsed ${SECONDS}s"
if [ $st -ne 0 ]; then echo "SELFTEST FAILED: skipping the rest"; exit 0; fi
# 2. The gpu_gdn backward tests with tc14 (backward_parity_matrix, the checkpoint tests, ...).
DEV_CAP_S=60 dev_parity "gpu_gdn backward (tc14)" $t backward DNNPLAN_GDN_BWD_TOKENS=tc14
echo "elapsed ${SECONDS}s"
# 3. Timing, one process, A B B A.
DEV_CAP_S=75 dev_timing "T tc12 tc14 tc14 tc12" $t "tc12,tc14,tc14,tc12"
echo "elapsed ${SECONDS}s"
# 4. tc15 (io dR + wgmma) against tc13, then its tests.
[ $SECONDS -lt 150 ] && DEV_CAP_S=75 dev_timing "T tc13 tc15 tc15 tc13" $t "tc13,tc15,tc15,tc13"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 200 ] && DEV_CAP_S=50 dev_parity "gpu_gdn backward (tc15)" $t backward DNNPLAN_GDN_BWD_TOKENS=tc15
echo "elapsed ${SECONDS}s"
# 5. memcheck with tc14.
[ $SECONDS -lt 225 ] && DEV_CAP_S=30 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_TOKENS=tc14
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
