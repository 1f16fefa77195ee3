# Session 17 (helper coarse17): coarse / fp32 state checkpoints seed the backward's forward-state
# replay (gdn_bwd_ckrows, gdn_bwd_fscanc*, gdn_bwd_psumt*) on the H200 in one call. This build (T,
# branch coarse17) against the base staged from main 16d211a (B, /work/wt/base/*_s17base): the
# new backward_checkpoint_seeds test (printed lines kept), the session-16 reuse tests (their piece
# chains now run psumt), hashes of the default backward / forward (no checkpoints) T vs B and vs
# the session-9 reference, memcheck of the seeded backward (uncut ragged and the piece chain), and
# the whole backward with seeding rows vs recompute vs c = 64 reuse at the four benchmark shapes
# (gdn_backward_checkpoints, both orders inside; then with DNNPLAN_GDN_BWD_CKPT_REPLAY=r4).
# Stage (from the worktree): kernels/build-cubins.sh; device-pack.sh --features gpu-tests; tar czf
# /work/main/.xfer-coarse17/device.tgz .device/device-env.sh .device/tests/gpu_gdn-*
# .device/tests/gpu_gdn_bench-* bench/device_lib.sh bench/gdn_hashes_session9.txt
# bench/gdn_device_coarse17.sh cubins.sha256 -C /work/wt base/gpu_gdn_s17base base/gpu_gdn_bench_s17base.
# run tool: carry [".xfer-coarse17"], command
# `cd .xfer-coarse17 && tar xzf device.tgz && bash bench/gdn_device_coarse17.sh`.
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/coarse17
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=base/gpu_gdn_s17base; bb=base/gpu_gdn_bench_s17base
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binaries: T $t $tb, B $b $bb"
# 1. The new test: seeded vs the reference and vs recompute, zeroed rows, r4 == p1, end to end.
timeout 100 $t backward_checkpoint_seeds --test-threads=1 --nocapture > $DEV_TMP/seed.log 2>&1
grep -E "seeded c=|zeroed rows|forward fp32 rows|test result|panicked|over " $DEV_TMP/seed.log
echo "elapsed ${SECONDS}s"
# 2. Default backward / forward hashes (no checkpoints), T vs B, and the session-9 reference.
dev_hashes bwd $t > $DEV_TMP/hb_T; dev_hashes bwd $b > $DEV_TMP/hb_B
dev_same $DEV_TMP/hb_T $DEV_TMP/hb_B "backward default: T == B 16d211a, $(wc -l < $DEV_TMP/hb_T) hash lines"
dev_hashes fwd $t > $DEV_TMP/hf_T; dev_hashes fwd $b > $DEV_TMP/hf_B
dev_same $DEV_TMP/hf_T $DEV_TMP/hf_B "forward default: T == B 16d211a, $(wc -l < $DEV_TMP/hf_T) hash lines"
echo "elapsed ${SECONDS}s"
# 3. The session-16 reuse tests (reuse at c = 64; the piece chain's summaries now psumt).
DEV_CAP_S=60 dev_parity "reuse tests" $t "checkpoint"
echo "elapsed ${SECONDS}s"
# 4. Timing: whole backward, recompute / reuse64 / seeding rows, both orders inside.
[ $SECONDS -lt 150 ] && DNNPLAN_GDN_BENCH_CKPT=1 timeout 45 $tb gdn_backward_checkpoints --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ckpt|panicked"
echo "elapsed ${SECONDS}s"
# 5. memcheck of the seeded backward: case 0 (uncut ragged; zeroed rows, r4) and 2 (piece chain).
[ $SECONDS -lt 165 ] && DEV_CAP_S=45 dev_memcheck $t backward_checkpoint_seeds DNNPLAN_GDN_CKPT_CASES=0,2
echo "elapsed ${SECONDS}s"
# 6. Timing again with the r4 seeded replay at K = 128.
[ $SECONDS -lt 175 ] && { echo "== DNNPLAN_GDN_BWD_CKPT_REPLAY=r4"; DNNPLAN_GDN_BWD_CKPT_REPLAY=r4 DNNPLAN_GDN_BENCH_CKPT=1 timeout 40 $tb gdn_backward_checkpoints --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ckpt|panicked"; }
echo "elapsed ${SECONDS}s"
cp $DEV_TMP/seed.log $OUT/ 2>/dev/null
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
