#!/usr/bin/env bash
# Session 32 (helper pc32): the forward piece path with its first piece run early
# (DNNPLAN_GDN_FWD_PIECE_FIRST=1: w4dgx0 beside slimsum_gxr, chain3r, w4dgxr) at (1,32768,16).
# T = branch pc32's device build; B = /work/base31 (main cfd4a3a, session 31's kernels and plans).
# 1. the forward tests (forward_parity, state_pool, batch_invariant) with the switch at 7 pieces
#    (the rule's count at (1,32768,16)), 2 and 3 pieces and by rule, against B's under the same
#    environment (cases without an initial state: bitwise expected; with one: another rounding of
#    seed 1, fp64 tolerance) and T without the switch == B (the untouched default);
#    forward_state_checkpoints with the switch at 7 pieces; memcheck forward_parity at 7 pieces;
# 2. timing in one process (gdn_benchmark_ours, shape (1,32768,16)): A F F A (A = rule, F = the
#    switch), per kernel; then shapes 0 and 3 (uncut: the switch changes nothing there) A F.
# Command: `cd .xfer-pc32 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_pc32.sh`.
set -uo pipefail
OUT=${OUT:-/tmp}/pc32; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin pc32
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=$(ls base/gpu_gdn-* | head -1)
echo "T $t $tb; B $b"
CAP=${PC32_CAP_S:-150}
export DEV_CAP_S=30
F=DNNPLAN_GDN_FWD_PIECE_FIRST=1
rms() { grep -E "rms" "$DEV_TMP/p_$1.log" | sed -E 's/ in [0-9.]+ ?m?s//' > "$DEV_TMP/r_$1"; }
for p in 7 2 3; do
  dev_fwd_case T_f$p "$t" $F DNNPLAN_GDN_FWD_PIECES=$p
  dev_fwd_case B_p$p "$b" DNNPLAN_GDN_FWD_PIECES=$p
  dev_same $DEV_TMP/h_T_f$p $DEV_TMP/h_B_p$p "forward tests at $p pieces: T first-early == B"
  dev_port_diff $DEV_TMP/h_T_f$p $DEV_TMP/h_B_p$p "T first-early vs B at $p pieces"
  rms T_f$p; rms B_p$p
  echo "rms lines differing at $p pieces (T first-early vs B): $(diff $DEV_TMP/r_T_f$p $DEV_TMP/r_B_p$p | grep -c '^<')"
  diff $DEV_TMP/r_T_f$p $DEV_TMP/r_B_p$p | head -24
  echo "elapsed ${SECONDS}s"
done
dev_fwd_case T_rule "$t"; dev_fwd_case B_rule "$b"
dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_B_rule "forward tests by rule: T (switch unset) == B"
dev_fwd_case T_frule "$t" $F
dev_same $DEV_TMP/h_T_frule $DEV_TMP/h_B_rule "forward tests by rule: T first-early == B"
dev_parity "forward_state_checkpoints first-early 7 pieces" "$t" forward_state_checkpoints $F DNNPLAN_GDN_FWD_PIECES=7
echo "elapsed ${SECONDS}s"
[ $SECONDS -lt $((CAP - 60)) ] && dev_memcheck "$t" forward_parity $F DNNPLAN_GDN_FWD_PIECES=7
echo "elapsed ${SECONDS}s"
run_bench() {  # label shapes schedules
  [ $SECONDS -lt $((CAP - 20)) ] || { echo "time cap: no bench $1"; return; }
  local log=$DEV_TMP/bench_$1.log
  env DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="$2" DNNPLAN_GDN_BENCH_SCHEDULES="$3" \
    timeout 40 $tb gdn_benchmark_ours --test-threads=1 --nocapture > $log 2>&1
  grep -hE "BENCH ours fwd |panicked" $log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
  echo "elapsed ${SECONDS}s"
}
run_bench p1 "1" "A::::,F::::1,F::::1,A::::,A::::,F::::1"
run_bench u03 "0 3" "A::::,F::::1"
tar czf "$OUT/pc32_res.tgz" -C "$DEV_TMP" . 2>/dev/null
echo done
