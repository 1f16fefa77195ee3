#!/usr/bin/env bash
# Session 23, helper wg23: the uncut slim output scan with its P' = X kᵀ and O' = X qᵀ products by
# wgmma (w4g, DNNPLAN_GDN_FWD_SCAN=w4g; T = branch wg23) against main 4e5e9a6 (B =
# gpu_gdn_s23base, gpu_gdn_bench_s23base):
# 0. the wrapper's self-test (bench/gdn_wgmma_selftest.cu, built on the CPU machine: one
#    m64n64k128 product against a double reference);
# 1. forward tests (forward_parity state_pool batch_invariant, fp64 reference) on T with w4g
#    forced (pass / fail, the rms lines), also at 1 piece; hashes T vs B forced w4 (information:
#    w4g need not be bitwise w4), T vs B by rule (must be BITWISE: w4g off by rule);
# 2. memcheck forward_parity on T with w4g forced;
# 3. timing, gdn_benchmark_ours at the four shapes: default, w4 and w4g forced at 1 piece,
#    processes in the order B T T B.
# Staging (run from its root): .device/device-env.sh, .device/lib, .device/tests/gpu_gdn-<h>,
# gpu_gdn_bench-<h> (T), .device/base/gpu_gdn_s23base, gpu_gdn_bench_s23base (B),
# bench/device_lib.sh, this script, wgmma_selftest.
set -uo pipefail
out=${OUT:-/tmp/wg23}; mkdir -p "$out"
export DEV_TMP=/tmp/wg23d; mkdir -p "$DEV_TMP"
source .device/device-env.sh > "$DEV_TMP/env.log" 2>&1
source bench/device_lib.sh
exec > >(tee -a "$out/summary.log") 2>&1
head -1 "$DEV_TMP/env.log"
timeout 20 ./wgmma_selftest || echo "selftest rc=$?"
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=.device/base/gpu_gdn_s23base; bb=.device/base/gpu_gdn_bench_s23base
echo "T $t $tb; B $b $bb"
export DEV_CAP_S=40
dev_fwd_case T_w4g "$t" DNNPLAN_GDN_FWD_SCAN=w4g
grep -E "rms" $DEV_TMP/p_T_w4g.log
dev_fwd_case B_w4 "$b" DNNPLAN_GDN_FWD_SCAN=w4
grep -E "rms" $DEV_TMP/p_B_w4.log
dev_same $DEV_TMP/h_T_w4g $DEV_TMP/h_B_w4 "forward: T w4g forced == B w4 forced (information)"
echo "elapsed ${SECONDS}s"
dev_fwd_case T_w4g1 "$t" DNNPLAN_GDN_FWD_SCAN=w4g DNNPLAN_GDN_FWD_PIECES=1
grep -E "rms" $DEV_TMP/p_T_w4g1.log
dev_fwd_case B_w41 "$b" DNNPLAN_GDN_FWD_SCAN=w4 DNNPLAN_GDN_FWD_PIECES=1
grep -E "rms" $DEV_TMP/p_B_w41.log
dev_same $DEV_TMP/h_T_w4g1 $DEV_TMP/h_B_w41 "forward 1 piece: T w4g == B w4 (information)"
echo "elapsed ${SECONDS}s"
dev_fwd_case T_rule "$t"
dev_fwd_case B_rule "$b"
dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_B_rule "forward by rule: T == B"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=60 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_SCAN=w4g
echo "elapsed ${SECONDS}s"
sched="default:::,w4:w4:1:,w4g:w4g:1:"
for who in B T T B; do
  bin=$bb; [ $who = T ] && bin=$tb
  echo "== bench $who"
  log=$DEV_TMP/bench_${who}_${SECONDS}.log
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=$sched timeout 40 $bin gdn_benchmark_ours --test-threads=1 --nocapture > $log 2>&1
  grep -hE "BENCH ours fwd |panicked" $log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
  echo "elapsed ${SECONDS}s"
done
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
