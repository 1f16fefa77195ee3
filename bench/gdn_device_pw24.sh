#!/usr/bin/env bash
# Session 24, helper pw24: the slim piece path with its products by wgmma (slimsum_gs, w4dgs;
# DNNPLAN_GDN_FWD_PIECE=gs, off by rule). T = branch pw24's build, B = main 3d52101 (w4d / slimsum).
# 1. forward tests by rule T vs B (bitwise expected: the rule runs the same kernels);
# 2. forward tests at 7 (and 2, 4) pieces with gs (fp64 parity), hashes T gs vs B (information),
#    T d vs B (bitwise expected); 3. memcheck forward_parity at 7 pieces with gs;
# 4. timing B T T B (T with gs) at (1,32768,16) by rule (P = 7) and forced P = 4, and at
#    (4,8192,16) forced P = 2 (the piece path with more pairs), then one T with d (control).
set -uo pipefail
out=${OUT:-/tmp/pw24}; mkdir -p "$out"
export DEV_TMP=/tmp/pw24d; mkdir -p "$DEV_TMP"
source .device/device-env.sh > "$DEV_TMP/env.log" 2>&1
source bench/device_lib.sh
exec > >(tee -a "$out/summary.log") 2>&1
head -1 "$DEV_TMP/env.log"
chmod +x .device/tests/* base/*
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=base/gpu_gdn_s24base; bb=base/gpu_gdn_bench_s24base
echo "T $t $tb; B $b $bb"
export DEV_CAP_S=40
dev_fwd_case T_rule "$t"; dev_fwd_case B_rule "$b"; dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_B_rule "forward tests by rule: T == B"
echo "elapsed ${SECONDS}s"
dev_fwd_case T_p7gs "$t" DNNPLAN_GDN_FWD_PIECES=7 DNNPLAN_GDN_FWD_PIECE=gs
dev_fwd_case T_p7d "$t" DNNPLAN_GDN_FWD_PIECES=7 DNNPLAN_GDN_FWD_PIECE=d
dev_fwd_case B_p7 "$b" DNNPLAN_GDN_FWD_PIECES=7
dev_same $DEV_TMP/h_T_p7d $DEV_TMP/h_B_p7 "forward tests at 7 pieces: T mma.sync (d) == B"
dev_same $DEV_TMP/h_T_p7gs $DEV_TMP/h_B_p7 "forward tests at 7 pieces: T wgmma (gs) == B (information)"
dev_port_diff $DEV_TMP/h_T_p7gs $DEV_TMP/h_B_p7 "7 pieces gs vs B"
dev_fwd_case T_p2gs "$t" DNNPLAN_GDN_FWD_PIECES=2 DNNPLAN_GDN_FWD_PIECE=gs
dev_fwd_case B_p2 "$b" DNNPLAN_GDN_FWD_PIECES=2
dev_same $DEV_TMP/h_T_p2gs $DEV_TMP/h_B_p2 "forward tests at 2 pieces: T gs == B (information)"
dev_fwd_case T_p4gs "$t" DNNPLAN_GDN_FWD_PIECES=4 DNNPLAN_GDN_FWD_PIECE=gs
echo "elapsed ${SECONDS}s"
DEV_CAP_S=90 dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_PIECES=7 DNNPLAN_GDN_FWD_PIECE=gs
echo "elapsed ${SECONDS}s"
export DNNPLAN_GDN_BENCH_SHAPES="1 0"
dev_bench_fwd_order "default:::,p4::4:,p2::2:" "$bb" "$tb" "B"
DNNPLAN_GDN_FWD_PIECE=gs dev_bench_fwd_order "default:::,p4::4:,p2::2:" "$bb" "$tb" "T T"
dev_bench_fwd_order "default:::,p4::4:,p2::2:" "$bb" "$tb" "B"
echo "== control: T with DNNPLAN_GDN_FWD_PIECE=d"
DNNPLAN_GDN_FWD_PIECE=d dev_bench_fwd_order "default:::,p4::4:,p2::2:" "$bb" "$tb" "T"
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
