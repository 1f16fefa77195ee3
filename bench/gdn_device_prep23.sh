#!/usr/bin/env bash
# Session 23 (helper prep23), call 1: the forward's slim prep in fewer instructions (branch prep23
# at 877cc5d, T) against main 4e5e9a6 (B = /work/base23/gpu_gdn_s23base, gpu_gdn_bench_s23base):
# 1. forward hashes (forward_parity state_pool batch_invariant, DNNPLAN_GDN_TEST_HASHES=1) T vs B
#    by rule; timing, gdn_benchmark_ours at the four shapes (default schedule), processes B T T B;
# 2. forward hashes T vs B at 7 pieces on w4 and with the overlap forced on (the _ov prep);
# 3. ncu of the slim prep at (4,8192,16), overlap off, T and B (duration, executed instructions,
#    issue slots, occupancy);
# 4. memcheck forward_parity on T; backward hashes by rule T vs B (gdn_bwd.cubin is
#    byte-identical: insurance only).
# Every step after the first is skipped past its time mark (the call stays under ~200 s).
# Stage (from the worktree): kernels/build-cubins.sh; device-pack.sh --features gpu-tests;
# tar czf /work/main/.xfer-prep23/device.tgz .device/device-env.sh .device/lib .device/tests/gpu_gdn-*
# .device/tests/gpu_gdn_bench-* bench/device_lib.sh bench/gdn_device_prep23.sh cubins.sha256
# base23/gpu_gdn_s23base base23/gpu_gdn_bench_s23base (copied from /work/base23 into the tree for the tar).
# run tool: carry [".xfer-prep23"], command
# `cd .xfer-prep23 && tar xzf device.tgz && bash bench/gdn_device_prep23.sh`.
set -uo pipefail
out=${OUT:-/tmp/prep23}; mkdir -p "$out"
export DEV_TMP=/tmp/prep23d; mkdir -p "$DEV_TMP"
source .device/device-env.sh > "$out/env.log" 2>&1
source bench/device_lib.sh
exec > >(tee -a "$out/summary.log") 2>&1
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=base23/gpu_gdn_s23base; bb=base23/gpu_gdn_bench_s23base
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
cat cubins.sha256
echo "T $t $tb; B $b $bb"
export DEV_CAP_S=40
hash_case() {
  local tag=$1; shift
  dev_fwd_case "T_$tag" "$t" "$@"
  dev_fwd_case "B_$tag" "$b" "$@"
  dev_same $DEV_TMP/h_T_$tag $DEV_TMP/h_B_$tag "forward $tag: T == B 4e5e9a6 ($(wc -l < $DEV_TMP/h_T_$tag) hash lines)"
  echo "elapsed ${SECONDS}s"
}
# 1. By rule, then the bench.
hash_case rule
for who in B T T B; do
  [ $SECONDS -lt 120 ] || { echo "skipped (time): bench $who"; continue; }
  bin=$bb; [ $who = T ] && bin=$tb
  echo "== bench $who"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: timeout 30 $bin gdn_benchmark_ours --test-threads=1 --nocapture \
    > $DEV_TMP/bench_${who}_${SECONDS}.log 2>&1
  grep -hE "BENCH ours fwd |panicked" $DEV_TMP/bench_${who}_*.log | tail -4 | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
  echo "elapsed ${SECONDS}s"
done
# 2. The piece path on w4 and the overlapped pair.
[ $SECONDS -lt 140 ] && hash_case p7 DNNPLAN_GDN_FWD_PIECES=7 DNNPLAN_GDN_FWD_SCAN=w4
[ $SECONDS -lt 150 ] && hash_case ov1 DNNPLAN_GDN_FWD_OVERLAP=1
# 3. ncu: the slim prep alone (one launch after the first execute's).
prof() {
  local tag=$1 bin=$2
  DNNPLAN_GDN_FWD_OVERLAP=0 DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default::: DNNPLAN_GDN_BENCH_SHAPES=0 \
    timeout 25 ncu --clock-control none --section Occupancy --section SpeedOfLight --section LaunchStats \
    --section InstructionStats -k "regex:gdn_fwd_slimprep" --launch-skip 1 --launch-count 1 \
    "$bin" gdn_benchmark_ours --test-threads=1 > $DEV_TMP/ncu_$tag.log 2>&1
  echo "ncu $tag (rc $?): $(grep -E 'Duration|Theoretical Occupancy|Achieved Occupancy|Block Limit (Registers|Shared Mem)|Issue Slots Busy|Executed Ipc A|^ +Executed Instructions |Registers Per Thread' $DEV_TMP/ncu_$tag.log | sed -E 's/ +/ /g' | tr '\n' ';')"
}
[ $SECONDS -lt 160 ] && prof T $tb
[ $SECONDS -lt 170 ] && prof B $bb
echo "elapsed ${SECONDS}s"
# 4. memcheck, then the backward by rule (insurance: gdn_bwd.cubin is byte-identical).
[ $SECONDS -lt 175 ] && DEV_CAP_S=45 dev_memcheck "$t" forward_parity
echo "elapsed ${SECONDS}s"
if [ $SECONDS -lt 180 ]; then
  DEV_CAP_S=30 dev_hashes bwd $t > $DEV_TMP/hb_T; DEV_CAP_S=30 dev_hashes bwd $b > $DEV_TMP/hb_B
  dev_same $DEV_TMP/hb_T $DEV_TMP/hb_B "backward rule: T == B 4e5e9a6, $(wc -l < $DEV_TMP/hb_T) hash lines"
  echo "elapsed ${SECONDS}s"
fi
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
echo done
