#!/usr/bin/env bash
# Session 24, helper wgx24, second call: w8gx (w4gx's whole-step wgmma chunk on 8 warps = two
# warpgroups, w8's grid; DNNPLAN_GDN_FWD_SCAN=w8gx) and w4gx again. T = branch wgx24 f643f76,
# B = main 3d52101 (gpu_gdn_s24base, gpu_gdn_bench_s24base).
# 1. forward tests (forward_parity state_pool batch_invariant, fp64 reference) on T with w8gx and
#    with w4gx forced; hashes vs B by rule (information), T by rule vs B by rule (must be BITWISE);
# 2. memcheck forward_parity on T with w8gx forced;
# 3. timing, gdn_benchmark_ours: default, w4gx, w8gx at 1 piece, processes B T T B (B knows
#    neither switch value: its rows 2, 3 are its default again);
# 4. every gpu_gdn test by rule on T.
# Staging as gdn_device_wgx24.sh (without the self-test).
set -uo pipefail
out=${OUT:-/tmp/wgx24b}; mkdir -p "$out"
export DEV_TMP=/tmp/wgx24bd; mkdir -p "$DEV_TMP"
source .device/device-env.sh > "$DEV_TMP/env.log" 2>&1
source bench/device_lib.sh
exec > >(tee -a "$out/summary.log") 2>&1
head -1 "$DEV_TMP/env.log"
chmod +x .device/tests/* base/*
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=base/gpu_gdn_s24base; bb=base/gpu_gdn_bench_s24base
echo "T $t $tb; B $b $bb"
export DEV_CAP_S=30
dev_fwd_case T_w8gx "$t" DNNPLAN_GDN_FWD_SCAN=w8gx
grep -hiE "rms" $DEV_TMP/p_T_w8gx.log 2>/dev/null | head -6
dev_fwd_case T_w4gx "$t" DNNPLAN_GDN_FWD_SCAN=w4gx
dev_fwd_case T_rule "$t"; dev_fwd_case B_rule "$b"
dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_B_rule "forward tests by rule: T == B"
dev_same $DEV_TMP/h_T_w8gx $DEV_TMP/h_B_rule "forward tests: T w8gx vs B by rule (information)"
dev_same $DEV_TMP/h_T_w4gx $DEV_TMP/h_B_rule "forward tests: T w4gx vs B by rule (information)"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=60 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_SCAN=w8gx
echo "elapsed ${SECONDS}s"
dev_bench_fwd_order "default:::,w4gx:w4gx:1:,w8gx:w8gx:1:" "$bb" "$tb"
timeout 90 $t --test-threads=1 > $DEV_TMP/tests.log 2>&1; echo "gpu_gdn (T, by rule): $(grep -E 'test result' $DEV_TMP/tests.log) $(grep -m1 panicked $DEV_TMP/tests.log)"
echo "elapsed ${SECONDS}s"
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
