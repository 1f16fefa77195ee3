# Session 16 (helper ckst16): 16-byte quad-transposed io state stores (checkpoints, the backward's
# replay ws_s, dS') on the H200 in one call. This build (T) against main 3860975 (M, when staged as
# base/gpu_gdn_s16main) and the session base 9b7f993 (B): default forward / backward hashes; the
# checkpoint and parity tests; gdn_checkpoint_forward (c = 64 io vs none) T and M in both orders;
# the default backward timing T vs M.
# Stage: kernels/build-cubins.sh; device-pack (copy without the .git/info/exclude line) --features
# gpu-tests; tar czf /work/main/.xfer-ckst16/device.tgz .device/... base/ cubins.sha256
# bench/device_lib.sh bench/gdn_hashes_session9.txt bench/gdn_device_ckst16.sh. Run: carry
# [".xfer-ckst16"], `cd .xfer-ckst16 && tar xzf device.tgz && bash bench/gdn_device_ckst16.sh`.
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/ckst16
mkdir -p $DEV_TMP
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
m=$(ls base/gpu_gdn_s16main 2>/dev/null || ls base/gpu_gdn_s16base); mb=$(ls base/gpu_gdn_bench_s16main 2>/dev/null)
cat cubins.sha256
echo "binaries: T $t $tb, M $m $mb"
# 1. Default hashes: backward T vs M and vs the session-9 reference; forward T vs M.
DEV_CAP_S=60 dev_hashes bwd $t > $DEV_TMP/hb_T; DEV_CAP_S=60 dev_hashes bwd $m > $DEV_TMP/hb_M
dev_same $DEV_TMP/hb_T $DEV_TMP/hb_M "backward default: T == $m, $(wc -l < $DEV_TMP/hb_T) hash lines"
DEV_CAP_S=40 dev_hashes fwd $t > $DEV_TMP/hf_T; DEV_CAP_S=40 dev_hashes fwd $m > $DEV_TMP/hf_M
dev_same $DEV_TMP/hf_T $DEV_TMP/hf_M "forward default: T == $m, $(wc -l < $DEV_TMP/hf_T) hash lines"
dev_cover_reference "T: backward + forward" $DEV_TMP/hb_T $DEV_TMP/hf_T
echo "elapsed ${SECONDS}s"
# 2. Tests: checkpoints (rows vs fp64, O / final state bitwise with vs without), reuse, parity.
timeout 90 $t forward_state_checkpoints --test-threads=1 --nocapture > $DEV_TMP/ckpt.log 2>&1
grep -E "test result|panicked" $DEV_TMP/ckpt.log
for f in checkpoints_from_the_forward_reused_by_the_backward backward_checkpoint_reuse; do
  timeout 60 $t $f --test-threads=1 --nocapture > $DEV_TMP/$f.log 2>&1
  echo "$f: $(grep -E 'test result|panicked' $DEV_TMP/$f.log | tr '\n' ' ')"; grep -E "bitwise recompute" $DEV_TMP/$f.log
done
DEV_CAP_S=60 dev_parity "backward_parity T" $t backward_parity
DEV_CAP_S=40 dev_parity "forward_parity T" $t forward_parity
echo "elapsed ${SECONDS}s"
# 3. Checkpoint forward timing (c = 64 io vs none), T and M in both orders.
ck() { echo "$1:"; DNNPLAN_GDN_BENCH_CKPT=1 timeout 30 $2 gdn_checkpoint_forward --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ckpt|panicked"; }
ck "T (a)" $tb; [ -n "$mb" ] && ck "M (a)" $mb
[ $SECONDS -lt 150 ] && { [ -n "$mb" ] && ck "M (b)" $mb; ck "T (b)" $tb; }
echo "elapsed ${SECONDS}s"
# 4. Default forward / backward timing T vs M, both orders.
[ $SECONDS -lt 130 ] && { dev_timing "T (a)" $t tc12; dev_timing "M (a)" $m tc12; }
[ $SECONDS -lt 150 ] && { dev_timing "M (b)" $m tc12; dev_timing "T (b)" $t tc12; }
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
