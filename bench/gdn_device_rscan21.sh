# Session 21 (helper rscan21), one call: the backward's forward-state replay gdn_bwd_fscan_r4_* with
# its refill inside the P key steps (fscan_chunks INBODY). T = this build (branch rscan21), B =
# base/gpu_gdn_s21base (main 10a9548; backward outputs bitwise main b2464e5's). Steps in priority
# order, each bounded, the later ones skipped past their start time (run budget ~150 s):
# 1. backward hashes T vs B by rule; 2. timing (backward stages, tc12) processes B T T B;
# 3. the gpu_gdn backward tests (backward_parity{,_matrix}, the checkpoint tests) on T;
# 4. memcheck backward_parity on T by rule; 5. hashes T vs B at 8 pieces; 6. memcheck at 8 pieces.
# Stage: tar czf /work/main/.xfer-rscan21/device.tgz .device/device-env.sh .device/tests/gpu_gdn-*
#   bench/device_lib.sh bench/gdn_device_rscan21.sh cubins.sha256 -C /work/wt base/gpu_gdn_s21base
# run tool: carry [".xfer-rscan21"], command `cd .xfer-rscan21 && tar xzf device.tgz && timeout 150
#   bash bench/gdn_device_rscan21.sh; tar czf $OUT/details.tgz -C /tmp/rscan21 .`.
exec > >(tee $OUT/rscan21.log) 2>&1
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/rscan21
mkdir -p $DEV_TMP; d=$DEV_TMP
t=$(dev_bin gpu_gdn); b=base/gpu_gdn_s21base
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binaries: T $t, B $b"
DEV_CAP_S=25 dev_compare bwd "backward rule: T == B 10a9548" $t $b
echo "elapsed ${SECONDS}s"
for who in B T T B; do
  bin=$b; [ $who = T ] && bin=$t
  DEV_CAP_S=25 dev_timing "timing $who" $bin tc12 | grep -E "bwd stages|panicked"
done
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 78 ] && DEV_CAP_S=40 dev_parity "gpu_gdn backward (T)" $t backward
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 112 ] && DEV_CAP_S=20 dev_memcheck $t backward_parity
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 122 ] && DEV_CAP_S=12 dev_compare bwd "backward 8 pieces: T == B 10a9548" $t $b DNNPLAN_GDN_BWD_PIECES=8
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt 125 ] && DEV_CAP_S=22 dev_memcheck $t backward_parity DNNPLAN_GDN_BWD_PIECES=8
echo "elapsed ${SECONDS}s"
echo done
