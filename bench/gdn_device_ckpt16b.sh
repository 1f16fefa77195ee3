# Session 16 (helper ckpt16b): the backward reusing io-dtype state checkpoints at c = 64 on the H200
# in one call. This build (T, branch ckpt16b; no kernel changed: the cubins are main 9b7f993's)
# against the base staged from main 9b7f993 (B, /work/wt/base/*_s16base): hashes of the default
# backward (no checkpoints), T vs B and vs the session-9 reference; every gpu_gdn test; the new
# backward_checkpoint_reuse test (printed lines kept); memcheck on reusing backwards (uncut and the
# piece chain); the whole backward with vs without checkpoints at the four benchmark shapes
# (gdn_backward_checkpoints: recompute, reuse, reuse, recompute; twice).
# Stage (from the worktree): device-pack.sh --features gpu-tests (without its .git/info/exclude
# line); tar czf /work/main/.xfer-ckpt16b/device.tgz .device/device-env.sh .device/tests/gpu_gdn-*
# .device/tests/gpu_gdn_bench-* bench/device_lib.sh bench/gdn_hashes_session9.txt
# bench/gdn_device_ckpt16b.sh cubins.sha256 -C /work/wt base/gpu_gdn_s16base base/gpu_gdn_bench_s16base.
# run tool: carry [".xfer-ckpt16b"], command
# `cd .xfer-ckpt16b && tar xzf device.tgz && bash bench/gdn_device_ckpt16b.sh`.
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/ckpt16b
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=base/gpu_gdn_s16base; bb=base/gpu_gdn_bench_s16base
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binaries: T $t $tb, B $b $bb"
# 1. The new test: reuse vs the reference and vs recompute, ignored cadences bitwise, zeroed rows.
timeout 90 $t backward_checkpoint_reuse --test-threads=1 --nocapture > $DEV_TMP/ckpt.log 2>&1
grep -E "ckpt|test result|panicked" $DEV_TMP/ckpt.log
echo "elapsed ${SECONDS}s"
# 2. Default backward hashes (no checkpoints), T vs B, and the session-9 reference.
dev_hashes bwd $t > $DEV_TMP/hb_T; dev_hashes bwd $b > $DEV_TMP/hb_B
dev_same $DEV_TMP/hb_T $DEV_TMP/hb_B "backward default: T == B 9b7f993, $(wc -l < $DEV_TMP/hb_T) hash lines"
dev_hashes fwd $t > $DEV_TMP/hf_T; dev_hashes fwd $b > $DEV_TMP/hf_B
dev_same $DEV_TMP/hf_T $DEV_TMP/hf_B "forward default: T == B 9b7f993, $(wc -l < $DEV_TMP/hf_T) hash lines"
echo "elapsed ${SECONDS}s"
# 3. Every other gpu_gdn test with the defaults.
DEV_CAP_S=60 dev_parity "default gpu_gdn (without backward_checkpoint_reuse)" $t "--skip backward_checkpoint_reuse"
echo "elapsed ${SECONDS}s"
# 4. Timing: whole backward, recompute vs reuse, both orders inside, twice.
for r in 1 2; do
  [ $SECONDS -lt 150 ] && DNNPLAN_GDN_BENCH_CKPT=1 timeout 45 $tb gdn_backward_checkpoints --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ckpt|panicked"
done
echo "elapsed ${SECONDS}s"
# 5. memcheck on reusing backwards: case 0 (uncut, ragged; also the ignored rows and zeroed rows) and 2 (piece chain).
[ $SECONDS -lt 175 ] && DEV_CAP_S=45 dev_memcheck $t backward_checkpoint_reuse DNNPLAN_GDN_CKPT_CASES=0,2
echo "elapsed ${SECONDS}s"
cp $DEV_TMP/ckpt.log $OUT/ 2>/dev/null
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
