# Session 22 (helper tstart22): the overlapped token stage's tile start (tc12_ov / tc13_ov: W, Ũᵀ,
# S, dO, q, k copies and the Γ / β / raw-gate rows before the unit's flag wait, dR, dS' after it).
# T = this build (branch tstart22), base = /work/wt/base/gpu_gdn_s22base (main d6063d8's cubins).
# 1. hashes T vs base (backward_parity, overlap by rule): tc13, tc12, tc13 at 8 pieces (BITWISE
# expected); 2. timing A B B A (T base base T, tc13) at the four shapes; 3. the gpu_gdn backward
# tests (`backward_ checkpoint`); 4. memcheck backward_parity (tc13).
# Stage: XZ_OPT='-T2 -9' tar cJf /work/main/.xfer-tstart22/device.txz .device/device-env.sh
#   .device/tests/gpu_gdn-* bench/device_lib.sh bench/gdn_device_tstart22.sh cubins.sha256 -C /work/wt base/gpu_gdn_s22base
# run tool: carry [".xfer-tstart22"], command `cd .xfer-tstart22 && tar xJf device.txz && bash bench/gdn_device_tstart22.sh`.
exec > >(tee $OUT/tstart22.log) 2>&1
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/tstart22
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn)
b=base/gpu_gdn_s22base
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binaries: T $t, base $b"
DEV_CAP_S=30 dev_compare bwd "tc13 by rule: T == base" $t $b DNNPLAN_GDN_BWD_TOKENS=tc13
echo "elapsed ${SECONDS}s"
DEV_CAP_S=25 dev_timing "T tc13" $t "tc13"
DEV_CAP_S=25 dev_timing "base tc13" $b "tc13"
DEV_CAP_S=25 dev_timing "base tc13" $b "tc13"
DEV_CAP_S=25 dev_timing "T tc13" $t "tc13"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=30 dev_compare bwd "tc12 by rule: T == base" $t $b DNNPLAN_GDN_BWD_TOKENS=tc12
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 95 ] && DEV_CAP_S=30 dev_compare bwd "tc13 at 8 pieces: T == base" $t $b DNNPLAN_GDN_BWD_TOKENS=tc13 DNNPLAN_GDN_BWD_PIECES=8
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 105 ] && DEV_CAP_S=25 dev_parity "gpu_gdn backward_ checkpoint (T, defaults)" $t "backward_ checkpoint"
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 110 ] && DEV_CAP_S=$((125 - SECONDS)) dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_TOKENS=tc13
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
