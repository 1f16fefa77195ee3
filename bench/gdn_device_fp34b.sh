#!/usr/bin/env bash
# Session 34 (helper fp34), call 2: confirm the flip (SLIM_FIRST_SCAN_BY_RULE = w4gx0, its first
# piece 288/256 of the even one at 5 pieces). T = branch fp34 with the flip; B = /work/base32.
# O = the old rule by switches (DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN=w4dgx0, _FIRST_SCALE=0).
# Command (~45 s): `cd .xfer-fp34 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_fp34b.sh`.
set -uo pipefail
OUT=${OUT:-/tmp}/fp34b; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin fp34b
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=$(ls base/gpu_gdn-* | head -1)
CAP=${FP34_CAP_S:-80}
export DEV_CAP_S=30
O="DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN=w4dgx0 DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE=0"
dev_fwd_case T_rule "$t"
dev_fwd_case T_old "$t" $O
dev_fwd_case B_rule "$b"
dev_same $DEV_TMP/h_T_old $DEV_TMP/h_B_rule "forward tests, old rule by switches: T == B by rule"
dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_B_rule "forward tests by rule (w4gx0, 288 at 5 pieces): T == B"
dev_fwd_case T_g288 "$t" DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE=288
dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_T_g288 "forward tests by rule == scale 288 forced at every count (hashes equal only where P = 5)"
for x in T_rule B_rule; do echo "rms $x:"; grep -E "rms" $DEV_TMP/p_$x.log | sed -E 's/ in [0-9.]+ ?m?s//'; done
dev_parity "forward_state_checkpoints by rule" "$t" forward_state_checkpoints
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
A="O:::::0:w4dgx0"; R="R::::::"
run_bench p1 "1" "$A,$R,$R,$A,$A,$R,$R,$A,$R,$A"
run_bench u "0 2 3" "$A,$R,$R,$A"
tar czf "$OUT/fp34b_res.tgz" -C "$DEV_TMP" . 2>/dev/null
echo done
