#!/usr/bin/env bash
# Session 24, helper pwx24: the slim piece path's whole chunk step by wgmma (slimsum_gx, w4dgx;
# DNNPLAN_GDN_FWD_PIECE=gx, off by rule). One build: T = this build with gx forced, B = this build
# by rule (slimsum_gs, w4dgs). Staging (.xfer-pwx24/): .device/ (device-env.sh, lib, tests
# gpu_gdn-*, gpu_gdn_bench-* of branch pwx24), bench/device_lib.sh, this script. ~60-90 s.
# (Run 1 ran 2541e07's build, where gs is the rule, with B's steps unswitched; since c3b9d9d B
# forces gs explicitly, so the script means the same with the flip's build, the last commit of branch pwx24.)
# 1. forward tests with gx by rule (the piece-chain case of forward_parity runs the piece path)
#    and at DNNPLAN_GDN_FWD_PIECES=7 and =2 (fp64 parity: must pass); hashes gx vs gs of this
#    build (information: not bitwise by construction);
# 2. memcheck forward_parity at 7 pieces with gx;
# 3. timing B T T B at (1,32768,16) (by rule P = 7, forced P = 4, 2) and (4,8192,16) (forced
#    P = 4, 2), per-kernel parts on the BENCH lines.
set -uo pipefail
out=${OUT:-/tmp/pwx24}; mkdir -p "$out"
export DEV_TMP=/tmp/pwx24d; mkdir -p "$DEV_TMP"
source .device/device-env.sh > "$DEV_TMP/env.log" 2>&1
source bench/device_lib.sh
exec > >(tee -a "$out/summary.log") 2>&1
head -1 "$DEV_TMP/env.log"
chmod +x .device/tests/*
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
echo "T $t $tb"
export DEV_CAP_S=40
dev_fwd_case T_rule_gx "$t" DNNPLAN_GDN_FWD_PIECE=gx
dev_fwd_case T_rule_gs "$t" DNNPLAN_GDN_FWD_PIECE=gs
dev_same $DEV_TMP/h_T_rule_gx $DEV_TMP/h_T_rule_gs "forward tests by rule: gx == gs (information)"
echo "elapsed ${SECONDS}s"
dev_fwd_case T_p7gx "$t" DNNPLAN_GDN_FWD_PIECES=7 DNNPLAN_GDN_FWD_PIECE=gx
dev_fwd_case T_p7gs "$t" DNNPLAN_GDN_FWD_PIECES=7 DNNPLAN_GDN_FWD_PIECE=gs
dev_same $DEV_TMP/h_T_p7gx $DEV_TMP/h_T_p7gs "forward tests at 7 pieces: gx == gs (information)"
dev_port_diff $DEV_TMP/h_T_p7gx $DEV_TMP/h_T_p7gs "7 pieces gx vs gs"
echo "rms at 7 pieces, gx then gs:"; grep -h " rms " $DEV_TMP/p_T_p7gx.log | head -4; grep -h " rms " $DEV_TMP/p_T_p7gs.log | head -4
dev_fwd_case T_p2gx "$t" DNNPLAN_GDN_FWD_PIECES=2 DNNPLAN_GDN_FWD_PIECE=gx
dev_fwd_case T_p2gs "$t" DNNPLAN_GDN_FWD_PIECES=2 DNNPLAN_GDN_FWD_PIECE=gs
dev_same $DEV_TMP/h_T_p2gx $DEV_TMP/h_T_p2gs "forward tests at 2 pieces: gx == gs (information)"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=90 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_PIECES=7 DNNPLAN_GDN_FWD_PIECE=gx
echo "elapsed ${SECONDS}s"
export DNNPLAN_GDN_BENCH_SHAPES="1 0"
sched="default:::,p4::4:,p2::2:"
DNNPLAN_GDN_FWD_PIECE=gs dev_bench_fwd_order "$sched" "$tb" "$tb" "B"
DNNPLAN_GDN_FWD_PIECE=gx dev_bench_fwd_order "$sched" "$tb" "$tb" "T T"
DNNPLAN_GDN_FWD_PIECE=gs dev_bench_fwd_order "$sched" "$tb" "$tb" "B"
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
echo "total ${SECONDS}s"
