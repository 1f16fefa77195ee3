#!/usr/bin/env bash
# Session 32 (helper pc32), staged for the lead's final call (pc32's own two calls spent): the
# first-early piece path BY RULE (branch pc32 with the flip: SLIM_PIECE_FIRST_BY_RULE = true) at
# its piece count (P = 5 at (1,32768,16): the other pieces' scan at one block per SM, on w4gx's
# three stages, gdn_fwd_slimscan_*_k128_w4gxr).
# T = branch pc32's device build (the flip); B = /work/base31 (main cfd4a3a).
# 1. forward tests by rule, at 5 pieces with the two-per-SM rest (DNNPLAN_GDN_FWD_PIECE_FIRST=2:
#    w4dgxr; bitwise expected against w4gxr), and with the switch off (=0) against B (bitwise);
#    forward tests at 7 and 3 pieces (first early, forced counts); forward_state_checkpoints by
#    rule; memcheck forward_parity by rule;
# 2. timing in one process at (1,32768,16): O R R2 R R2 O O R (O = DNNPLAN_GDN_FWD_PIECE_FIRST=0, the
#    old path; R = the rule; R2 = first early with the two-per-SM rest at the rule's 5 pieces), then
#    shapes 0, 2, 3 (uncut: nothing changes) O R.
# Command (~70 s): `cd .xfer-pc32 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_pc32c.sh`.
set -uo pipefail
OUT=${OUT:-/tmp}/pc32c; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin pc32c
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=$(ls base/gpu_gdn-* | head -1)
echo "T $t $tb; B $b"
CAP=${PC32_CAP_S:-90}
export DEV_CAP_S=30
dev_fwd_case T_rule "$t"
dev_fwd_case T_r2 "$t" DNNPLAN_GDN_FWD_PIECE_FIRST=2
dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_T_r2 "forward tests by rule: w4gxr rest == w4dgxr rest"
dev_fwd_case T_p5 "$t" DNNPLAN_GDN_FWD_PIECES=5
dev_fwd_case T_p5r2 "$t" DNNPLAN_GDN_FWD_PIECES=5 DNNPLAN_GDN_FWD_PIECE_FIRST=2
dev_same $DEV_TMP/h_T_p5 $DEV_TMP/h_T_p5r2 "forward tests at 5 pieces: w4gxr rest == w4dgxr rest"
dev_fwd_case T_off "$t" DNNPLAN_GDN_FWD_PIECE_FIRST=0; dev_fwd_case B_rule "$b"
dev_same $DEV_TMP/h_T_off $DEV_TMP/h_B_rule "forward tests, first early off: T == B by rule"
dev_fwd_case T_p7 "$t" DNNPLAN_GDN_FWD_PIECES=7
dev_fwd_case T_p3 "$t" DNNPLAN_GDN_FWD_PIECES=3
for x in T_rule T_off; do echo "rms $x:"; grep -E "rms" $DEV_TMP/p_$x.log | sed -E 's/ in [0-9.]+ ?m?s//'; done
dev_parity "forward_state_checkpoints by rule" "$t" forward_state_checkpoints
echo "elapsed ${SECONDS}s"
dev_memcheck "$t" forward_parity
echo "elapsed ${SECONDS}s"
run_bench() {  # label shapes schedules
  [ $SECONDS -lt $((CAP - 15)) ] || { echo "time cap: no bench $1"; return; }
  local log=$DEV_TMP/bench_$1.log
  env DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="$2" DNNPLAN_GDN_BENCH_SCHEDULES="$3" \
    timeout 40 $tb gdn_benchmark_ours --test-threads=1 --nocapture > $log 2>&1
  grep -hE "BENCH ours fwd |panicked" $log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
  echo "elapsed ${SECONDS}s"
}
run_bench p1 "1" "O::::0:,R:::::,R2::::2:,R:::::,R2::::2:,O::::0:,O::::0:,R:::::"
run_bench u "0 2 3" "O::::0:,R:::::"
tar czf "$OUT/pc32c_res.tgz" -C "$DEV_TMP" . 2>/dev/null
echo done
