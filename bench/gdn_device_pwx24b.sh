#!/usr/bin/env bash
# Session 24, helper pwx24, by-rule check of the flip (SLIM_PIECE_WGX_BY_RULE = true, branch pwx24
# its last commit; not run by pwx24: prepared for the lead's final call). T = that build by rule
# (slimsum_gx + w4dgx on the piece path), B = the same build with DNNPLAN_GDN_FWD_PIECE=gs.
# Staging (.xfer-pwx24/): .device/ of the flip's build, bench/device_lib.sh, this script. ~60 s.
# 1. gpu_gdn by rule (all 15 tests); 2. forward tests by rule and at 7 pieces, hashes rule vs gs
#    (information; run 1 found them equal); 3. memcheck forward_parity by rule and
#    forward_state_checkpoints at 7 pieces; 4. timing B T T B at (1,32768,16) (rule: P = 7).
set -uo pipefail
out=${OUT:-/tmp/pwx24b}; mkdir -p "$out"
export DEV_TMP=/tmp/pwx24bd; mkdir -p "$DEV_TMP"
source .device/device-env.sh > "$DEV_TMP/env.log" 2>&1
source bench/device_lib.sh
exec > >(tee -a "$out/summary.log") 2>&1
head -1 "$DEV_TMP/env.log"
chmod +x .device/tests/*
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
echo "T $t $tb"
echo "gpu_gdn (T, by rule): $(timeout 60 $t --test-threads=1 2>&1 | grep -E 'test result|panicked' | tr '\n' ' ')"
echo "elapsed ${SECONDS}s"
export DEV_CAP_S=40
dev_fwd_case T_rule "$t"
dev_fwd_case T_rule_gs "$t" DNNPLAN_GDN_FWD_PIECE=gs
dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_T_rule_gs "forward tests by rule: rule (gx) == gs (information)"
dev_fwd_case T_p7 "$t" DNNPLAN_GDN_FWD_PIECES=7
dev_fwd_case T_p7gs "$t" DNNPLAN_GDN_FWD_PIECES=7 DNNPLAN_GDN_FWD_PIECE=gs
dev_same $DEV_TMP/h_T_p7 $DEV_TMP/h_T_p7gs "forward tests at 7 pieces: rule (gx) == gs (information)"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=60 dev_memcheck "$t" forward_parity
DEV_CAP_S=60 dev_memcheck "$t" forward_state_checkpoints DNNPLAN_GDN_FWD_PIECES=7
echo "elapsed ${SECONDS}s"
export DNNPLAN_GDN_BENCH_SHAPES="1"
DNNPLAN_GDN_FWD_PIECE=gs dev_bench_fwd_order "default:::" "$tb" "$tb" "B"
dev_bench_fwd_order "default:::" "$tb" "$tb" "T T"
DNNPLAN_GDN_FWD_PIECE=gs dev_bench_fwd_order "default:::" "$tb" "$tb" "B"
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
echo "total ${SECONDS}s"
