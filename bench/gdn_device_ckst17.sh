# Session 17 (helper ckst17): the forward's checkpoint stores on the H200 in one call. Three
# builds of this branch's tests (same test code, gdn_fwd.cubin differs; gdn_bwd.cubin is main's):
#   B = main 16d211a's gdn_fwd.cubin (the base kernels with this branch's checkpoint hash line),
#   L = "late": each checkpoint stored right after the state update that makes it (before the
#       chunk's closing barrier), fp32 rows as 16-byte stores,
#   S = "spread": an io row's quad stores ride in the next chunk's first products (a second copy of
#       that key loop), fp32 rows as 16-byte stores (the call's candidate; L was kept: the branch's
#       gdn_fwd.cubin is textcmp-identical to L's; bench/gdn_results.md, ckst17).
# and main 16d211a's staged binaries (base/gpu_gdn_s17base, gpu_gdn_bench_s17base).
# Steps: forward_state_checkpoints with hashes (O, final state and checkpoint rows of 21 cases, c =
# 64 / 128 / 192, io and fp32 rows, every output scan) S and L vs B, B vs base; checkpoint forward
# timing (c = 64 io vs none) B, L, S in both orders; default forward hashes vs base; the e2e,
# parity tests and a memcheck on S.
# Stage: var/{B,L,S}_gpu_gdn{,_bench}, base/, .device/device-env.sh, bench/device_lib.sh,
# bench/gdn_hashes_session9.txt, this script, cubins.sha256 in /work/main/.xfer-ckst17/device.tgz;
# run tool: carry [".xfer-ckst17"], `cd .xfer-ckst17 && tar xzf device.tgz && bash bench/gdn_device_ckst17.sh`.
source .device/device-env.sh > $OUT/env.log 2>&1
source bench/device_lib.sh
export DEV_TMP=/tmp/ckst17
mkdir -p $DEV_TMP
base=base/gpu_gdn_s17base; baseb=base/gpu_gdn_bench_s17base
cat cubins.sha256
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
# 1. Checkpoint cases with hashes: B, L, S (and base for the lines it prints: O / state).
ckh() {
  env DNNPLAN_GDN_TEST_HASHES=1 timeout 40 $2 forward_state_checkpoints --test-threads=1 --nocapture > $DEV_TMP/ck_$1.log 2>&1
  echo "forward_state_checkpoints $1: $(grep -E 'test result' $DEV_TMP/ck_$1.log) $(grep -m1 panicked $DEV_TMP/ck_$1.log)"
  grep -E "$DEV_HASH_RE" $DEV_TMP/ck_$1.log | sed -E 's/ in [0-9.]+ ?m?s//' > $DEV_TMP/hc_$1
}
for v in B S L; do ckh $v var/${v}_gpu_gdn; done
ckh base $base
echo "checkpoint hash lines: B $(grep -c 'checkpoints #' $DEV_TMP/hc_B), all $(wc -l < $DEV_TMP/hc_B)"
dev_same $DEV_TMP/hc_S $DEV_TMP/hc_B "checkpoint cases: S == B, O + state + rows"
dev_same $DEV_TMP/hc_L $DEV_TMP/hc_B "checkpoint cases: L == B, O + state + rows"
grep -v 'checkpoints #' $DEV_TMP/hc_B > $DEV_TMP/hc_B_os
dev_same $DEV_TMP/hc_B_os $DEV_TMP/hc_base "checkpoint cases: B == base 16d211a, O + state"
echo "elapsed ${SECONDS}s"
# 2. Checkpoint forward timing (c = 64 io rows vs none), order a.
ck() { echo "$1:"; DNNPLAN_GDN_BENCH_CKPT=1 timeout 25 $2 gdn_checkpoint_forward --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ckpt|panicked"; }
for v in B L S; do ck "$v (a)" var/${v}_gpu_gdn_bench; done
echo "elapsed ${SECONDS}s"
# 3. Order b.
[ $SECONDS -lt 110 ] && for v in S L B; do ck "$v (b)" var/${v}_gpu_gdn_bench; done
echo "elapsed ${SECONDS}s"
# 4. Default forward hashes vs base (S, L), backward S vs base.
[ $SECONDS -lt 150 ] && { DEV_CAP_S=30 dev_hashes fwd var/S_gpu_gdn > $DEV_TMP/hf_S; DEV_CAP_S=30 dev_hashes fwd $base > $DEV_TMP/hf_base
  dev_same $DEV_TMP/hf_S $DEV_TMP/hf_base "forward default: S == base 16d211a, $(wc -l < $DEV_TMP/hf_S) hash lines"; }
[ $SECONDS -lt 140 ] && { DEV_CAP_S=30 dev_hashes fwd var/L_gpu_gdn > $DEV_TMP/hf_L
  dev_same $DEV_TMP/hf_L $DEV_TMP/hf_base "forward default: L == base 16d211a, $(wc -l < $DEV_TMP/hf_L) hash lines"; }
echo "elapsed ${SECONDS}s"
# 5. Tests on S: e2e reuse, parity; backward hashes; memcheck on the new store paths.
[ $SECONDS -lt 160 ] && { timeout 25 var/S_gpu_gdn checkpoints_from_the_forward_reused_by_the_backward --test-threads=1 --nocapture > $DEV_TMP/e2e.log 2>&1
  echo "checkpoints_from_the_forward_reused_by_the_backward S: $(grep -E 'test result|panicked' $DEV_TMP/e2e.log | tr '\n' ' ')"; grep -E "bitwise recompute" $DEV_TMP/e2e.log; }
[ $SECONDS -lt 170 ] && DEV_CAP_S=20 dev_parity "forward_parity S" var/S_gpu_gdn forward_parity
[ $SECONDS -lt 150 ] && { DEV_CAP_S=25 dev_hashes bwd var/S_gpu_gdn > $DEV_TMP/hb_S; DEV_CAP_S=25 dev_hashes bwd $base > $DEV_TMP/hb_base
  dev_same $DEV_TMP/hb_S $DEV_TMP/hb_base "backward default: S == base 16d211a, $(wc -l < $DEV_TMP/hb_S) hash lines"; }
[ $SECONDS -lt 165 ] && DEV_CAP_S=25 dev_memcheck var/S_gpu_gdn forward_state_checkpoints DNNPLAN_GDN_CKPT_CASES=0,1,8,13
echo "elapsed ${SECONDS}s"
tar czf $OUT/details.tgz -C $DEV_TMP . 2>/dev/null
echo done
