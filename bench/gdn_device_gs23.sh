#!/usr/bin/env bash
# Session 23, lead: w4gs (the slim scan's P', O' on wgmma, q, k in the 128-byte swizzle) the uncut
# 4-warp default by rule (SLIM_WG_BY_RULE); T = branch gs23's build, B = main 4e5e9a6 (w4 by rule).
# 1. every gpu_gdn test by rule; 2. forward hashes by rule T vs B (w4gs vs w4: equal expected),
# and T with DNNPLAN_GDN_FWD_SCAN=w4 vs B; 3. memcheck forward_parity by rule; 4. timing B T T B.
set -uo pipefail
out=${OUT:-/tmp/gs23}; mkdir -p "$out"
export DEV_TMP=/tmp/gs23d; mkdir -p "$DEV_TMP"
source .device/device-env.sh > "$DEV_TMP/env.log" 2>&1
source bench/device_lib.sh
exec > >(tee -a "$out/summary.log") 2>&1
head -1 "$DEV_TMP/env.log"
chmod +x .device/tests/* base/*
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=base/gpu_gdn_s23base; bb=base/gpu_gdn_bench_s23base
echo "T $t $tb; B $b $bb"
timeout 90 $t --test-threads=1 > $DEV_TMP/tests.log 2>&1; echo "gpu_gdn (T, by rule): $(grep -E 'test result' $DEV_TMP/tests.log) $(grep -m1 panicked $DEV_TMP/tests.log)"
echo "elapsed ${SECONDS}s"
export DEV_CAP_S=40
dev_compare fwd "forward by rule: T (w4gs) == B 4e5e9a6 (w4)" $t $b
dev_fwd_case T_rule "$t"; dev_fwd_case B_rule "$b"; dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_B_rule "forward tests by rule (forward_parity state_pool batch_invariant): T == B"
dev_fwd_case T_w4 "$t" DNNPLAN_GDN_FWD_SCAN=w4; dev_same $DEV_TMP/h_T_w4 $DEV_TMP/h_B_rule "forward tests: T forced w4 == B by rule"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=60 dev_memcheck "$t" forward_parity
echo "elapsed ${SECONDS}s"
dev_bench_fwd_order "default:::,w4:w4:1:" "$bb" "$tb"
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
