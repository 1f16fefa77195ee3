#!/usr/bin/env bash
# Session 23, helper wg23, second script (prepared, NOT run by wg23: its device budget was spent):
# the w4g variants that tell the candidates of its slowdown apart (bench/gdn_results.md, "Session
# 23 (helper wg23"): w4gs (q, k in the 128-byte swizzle) and w4gn (w4g without the proxy fence; a
# timing probe only), T = branch wg23 (the commit with w4gs / w4gn), B = main 4e5e9a6:
# 0. the wrapper's self-test, canonical and 128-byte swizzle layouts;
# 1. forward tests with w4gs forced (pass / fail, rms), hashes vs B w4 forced (information);
#    w4gn forced (pass / fail only);
# 2. memcheck forward_parity with w4gs forced;
# 3. timing, gdn_benchmark_ours at the four shapes: default, w4, w4g, w4gs, w4gn forced at 1
#    piece, processes in the order B T T B.
# Staging as bench/gdn_device_wg23.sh (run from its root; ~70 s).
set -uo pipefail
out=${OUT:-/tmp/wg23b}; mkdir -p "$out"
export DEV_TMP=/tmp/wg23bd; mkdir -p "$DEV_TMP"
source .device/device-env.sh > "$DEV_TMP/env.log" 2>&1
source bench/device_lib.sh
exec > >(tee -a "$out/summary.log") 2>&1
head -1 "$DEV_TMP/env.log"
timeout 20 ./wgmma_selftest || echo "selftest rc=$?"
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=.device/base/gpu_gdn_s23base; bb=.device/base/gpu_gdn_bench_s23base
echo "T $t $tb; B $b $bb"
export DEV_CAP_S=40
dev_fwd_case T_w4gs "$t" DNNPLAN_GDN_FWD_SCAN=w4gs
grep -E "rms" $DEV_TMP/p_T_w4gs.log
dev_fwd_case B_w4 "$b" DNNPLAN_GDN_FWD_SCAN=w4
dev_same $DEV_TMP/h_T_w4gs $DEV_TMP/h_B_w4 "forward: T w4gs forced == B w4 forced (information)"
dev_fwd_case T_w4gn "$t" DNNPLAN_GDN_FWD_SCAN=w4gn
dev_same $DEV_TMP/h_T_w4gn $DEV_TMP/h_B_w4 "forward: T w4gn forced == B w4 forced (information)"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=60 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_SCAN=w4gs
echo "elapsed ${SECONDS}s"
sched="default:::,w4:w4:1:,w4g:w4g:1:,w4gs:w4gs:1:,w4gn:w4gn:1:"
for who in B T T B; do
  bin=$bb; [ $who = T ] && bin=$tb
  echo "== bench $who"
  log=$DEV_TMP/bench_${who}_${SECONDS}.log
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=$sched timeout 40 $bin gdn_benchmark_ours --test-threads=1 --nocapture > $log 2>&1
  grep -hE "BENCH ours fwd |panicked" $log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
  echo "elapsed ${SECONDS}s"
done
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
