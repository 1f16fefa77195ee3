#!/usr/bin/env bash
# Session 24, helper pw24, call 2: slimsum_gs + w4dgs the slim piece path's default by rule
# (SLIM_PIECE_WG_BY_RULE). T = branch pw24 4f224f8's build, B = main 3d52101 (slimsum / w4d).
# 1. every gpu_gdn test by rule; 2. forward hashes by rule and at 7 pieces T vs B (bitwise
# expected: run 1 found gs's hashes equal to the mma.sync passes'); T forced d vs B;
# 3. the forward checkpoint tests at 7 pieces; 4. memcheck forward_parity by rule (its piece-chain
# case runs the gs passes) and the checkpoint test at 7 pieces; 5. timing B T T B at (1,32768,16).
set -uo pipefail
out=${OUT:-/tmp/pw24b}; mkdir -p "$out"
export DEV_TMP=/tmp/pw24e; mkdir -p "$DEV_TMP"
source .device/device-env.sh > "$DEV_TMP/env.log" 2>&1
source bench/device_lib.sh
exec > >(tee -a "$out/summary.log") 2>&1
head -1 "$DEV_TMP/env.log"
chmod +x .device/tests/* base/*
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=base/gpu_gdn_s24base; bb=base/gpu_gdn_bench_s24base
echo "T $t $tb; B $b $bb"
timeout 100 $t --test-threads=1 > $DEV_TMP/tests.log 2>&1; echo "gpu_gdn (T, by rule): $(grep -E 'test result' $DEV_TMP/tests.log) $(grep -m1 panicked $DEV_TMP/tests.log)"
echo "elapsed ${SECONDS}s"
export DEV_CAP_S=40
dev_compare fwd "forward by rule: T (slimsum_gs, w4dgs) == B 3d52101 (slimsum, w4d)" $t $b
dev_compare fwd "forward at 7 pieces: T (gs by rule) == B" $t $b DNNPLAN_GDN_FWD_PIECES=7
dev_fwd_case T_p7d "$t" DNNPLAN_GDN_FWD_PIECES=7 DNNPLAN_GDN_FWD_PIECE=d; dev_fwd_case B_p7 "$b" DNNPLAN_GDN_FWD_PIECES=7
dev_same $DEV_TMP/h_T_p7d $DEV_TMP/h_B_p7 "forward tests at 7 pieces: T forced d == B"
dev_parity "forward checkpoints at 7 pieces (gs by rule)" $t "forward_state_checkpoints checkpoints_from_the_forward" DNNPLAN_GDN_FWD_PIECES=7
echo "elapsed ${SECONDS}s"
DEV_CAP_S=60 dev_memcheck "$t" forward_parity
DEV_CAP_S=60 dev_memcheck "$t" forward_state_checkpoints DNNPLAN_GDN_FWD_PIECES=7
echo "elapsed ${SECONDS}s"
export DNNPLAN_GDN_BENCH_SHAPES="1"
dev_bench_fwd_order "default:::" "$bb" "$tb"
tar czf "$out/res.tgz" -C "$DEV_TMP" . 2>/dev/null
