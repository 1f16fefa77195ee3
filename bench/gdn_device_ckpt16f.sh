# Session 16 (helper ckpt16f): state checkpoints written by the forward (every output scan) on the
# H200 in one call. This build (T) against the base staged from main 9b7f993 (B): forward hashes
# without checkpoints (the default, the full factors, 7 pieces) and the backward's (T, with the
# session-9 reference); every gpu_gdn test (forward_state_checkpoints: every schedule's rows vs the
# fp64 state series, O / final state bitwise with and without checkpoints); memcheck on three
# checkpoint forwards; whole forward / backward timing T vs B in both orders; the forward with
# checkpoints (c = 64, io) vs without (gdn_checkpoint_forward).
# Stage (from the worktree): kernels/build-cubins.sh; device-pack.sh --features gpu-tests; tar czf
# /work/main/.xfer-ckpt16f/device.tgz .device/device-env.sh .device/tests/gpu_gdn-*
# .device/tests/gpu_gdn_bench-* base/ cubins.sha256 bench/device_lib.sh
# bench/gdn_hashes_session9.txt bench/gdn_device_ckpt16f.sh. run tool: carry [".xfer-ckpt16f"],
# command `cd .xfer-ckpt16f && tar xzf device.tgz && bash bench/gdn_device_ckpt16f.sh`.
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/ckpt16f
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=$(ls base/gpu_gdn_s16base); bb=$(ls base/gpu_gdn_bench_s16base)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "binaries: T $t $tb, B $b $bb"
fh() { DEV_CAP_S=40 dev_fwd_case "$@"; }
# 1. Forward hashes without checkpoints, T vs B: default, full factors, 7 pieces.
for v in "default" "full DNNPLAN_GDN_FWD_FACTORS=full" "p7 DNNPLAN_GDN_FWD_PIECES=7"; do
  set -- $v; tag=$1; shift
  fh T_$tag $t "$@"; fh B_$tag $b "$@"
  dev_same $DEV_TMP/h_T_$tag $DEV_TMP/h_B_$tag "forward $tag: T == B 9b7f993, $(wc -l < $DEV_TMP/h_T_$tag) hash lines"
done
dev_hashes bwd $t > $DEV_TMP/hb_T
dev_cover_reference "T: backward + forward full factors" $DEV_TMP/hb_T $DEV_TMP/h_T_full
echo "elapsed ${SECONDS}s"
# 2. Every gpu_gdn test (the checkpoint test printed in full).
DEV_CAP_S=150 dev_parity "default gpu_gdn" $t ""
timeout 90 $t forward_state_checkpoints --test-threads=1 --nocapture > $DEV_TMP/ckpt.log 2>&1
grep -E "checkpoint case|checkpoints every|test result|panicked" $DEV_TMP/ckpt.log
echo "elapsed ${SECONDS}s"
# 3. memcheck: checkpoint forwards (slim w4 c = 192 bf16, slim pieces c = 192 fp32, full w4 c = 192 fp32).
DEV_CAP_S=60 dev_memcheck $t forward_state_checkpoints DNNPLAN_GDN_CKPT_CASES=2,8,16
echo "elapsed ${SECONDS}s"
# 4. Timing without checkpoints, both orders: whole forward / backward at the four shapes.
[ $SECONDS -lt 200 ] && { dev_timing "B 9b7f993 (a)" $b tc12; dev_timing "T (a)" $t tc12; }
[ $SECONDS -lt 225 ] && { dev_timing "T (b)" $t tc12; dev_timing "B 9b7f993 (b)" $b tc12; }
echo "elapsed ${SECONDS}s"
# 5. The forward with checkpoints (c = 64, io) vs without, same run.
[ $SECONDS -lt 250 ] && DNNPLAN_GDN_BENCH_CKPT=1 timeout 30 $tb gdn_checkpoint_forward --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ckpt|panicked"
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
