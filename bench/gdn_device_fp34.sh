#!/usr/bin/env bash
# Session 34 (helper fp34), call 1: the first piece on w4gx's three stages (w4gx0,
# DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN=w4gx0) and the first piece's length (PIECE_FIRST_SCALE).
# T = branch fp34's device build; B = /work/base32 (main 83a5e86; main 1640466 computes its bits).
# 1. bitwise: forward tests by rule T == B; with w4gx0 by rule and at forced piece counts 5 / 7 /
#    3 / 2 (first early) against B at the same counts (w4dgx0); w4gx0 == w4dgx0 at scale 320;
#    fp64 errors (tests pass) with w4gx0 at scales 288 / 352; checkpoints; memcheck on w4gx0.
# 2. one process at (1,32768,16): R (rule) G (w4gx0) ... and the scale sweep, forward then
#    reversed; forced P = 3 / 4 / 6 with both; then the uncut shapes R G.
# Command (~100 s): `cd .xfer-fp34 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_fp34.sh`.
set -uo pipefail
OUT=${OUT:-/tmp}/fp34; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin fp34
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=$(ls base/gpu_gdn-* | head -1)
echo "T $t $tb; B $b"
CAP=${FP34_CAP_S:-150}
export DEV_CAP_S=30
F1=DNNPLAN_GDN_FWD_PIECE_FIRST=1
G=DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN=w4gx0
dev_fwd_case T_rule "$t"
dev_fwd_case B_rule "$b"
dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_B_rule "forward tests by rule: T == B"
dev_fwd_case T_g "$t" $G
dev_same $DEV_TMP/h_T_g $DEV_TMP/h_B_rule "forward tests by rule, first scan w4gx0: T == B (w4dgx0)"
for P in 5 7 3 2; do
  dev_fwd_case T_g$P "$t" $F1 DNNPLAN_GDN_FWD_PIECES=$P $G
  dev_fwd_case B_p$P "$b" $F1 DNNPLAN_GDN_FWD_PIECES=$P
  dev_same $DEV_TMP/h_T_g$P $DEV_TMP/h_B_p$P "forward tests at $P pieces, first early: T w4gx0 == B w4dgx0"
done
echo "elapsed ${SECONDS}s"
dev_fwd_case T_d320 "$t" $F1 DNNPLAN_GDN_FWD_PIECES=5 DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE=320
dev_fwd_case T_g320 "$t" $F1 DNNPLAN_GDN_FWD_PIECES=5 DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE=320 $G
dev_same $DEV_TMP/h_T_g320 $DEV_TMP/h_T_d320 "forward tests at 5 pieces, scale 320: w4gx0 == w4dgx0"
for s in 288 352; do
  dev_fwd_case T_g$s "$t" $F1 DNNPLAN_GDN_FWD_PIECES=5 DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE=$s $G
  dev_fwd_case T_g${s}r "$t" DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE=$s $G
done
for x in T_g5 T_g288 T_g320 T_g352 T_rule T_g288r T_g352r; do echo "rms $x:"; grep -E "rms" $DEV_TMP/p_$x.log | sed -E 's/ in [0-9.]+ ?m?s//'; done
dev_parity "forward_state_checkpoints w4gx0 at 5 pieces" "$t" forward_state_checkpoints $F1 DNNPLAN_GDN_FWD_PIECES=5 $G
echo "elapsed ${SECONDS}s"
dev_memcheck "$t" forward_parity $F1 DNNPLAN_GDN_FWD_PIECES=5 $G
echo "elapsed ${SECONDS}s"
run_bench() {  # label shapes schedules
  [ $SECONDS -lt $((CAP - 15)) ] || { echo "time cap: no bench $1"; return; }
  local log=$DEV_TMP/bench_$1.log
  env DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="$2" DNNPLAN_GDN_BENCH_SCHEDULES="$3" \
    timeout 60 $tb gdn_benchmark_ours --test-threads=1 --nocapture > $log 2>&1
  grep -hE "BENCH ours fwd |panicked" $log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
  echo "elapsed ${SECONDS}s"
}
# label:scan:pieces:sum:first:scale:fscan
S="R::::::,G::::::w4gx0,G::::::w4gx0,R::::::"
for s in 224 288 320 352; do S="$S,D$s:::::$s:"; done
for s in 224 272 288 304 320 352 384; do S="$S,G$s:::::$s:w4gx0"; done
REV=$(echo "$S" | tr ',' '\n' | tac | paste -sd,)
run_bench sweep "1" "$S,$REV"
run_bench pieces "1" "R::::::,D3::3:::,G3::3:::w4gx0,D4::4:::,G4::4:::w4gx0,D6::6:::,G6::6:::w4gx0,G4::4:::w4gx0,D4::4:::,G3::3:::w4gx0,D3::3:::,R::::::"
run_bench u "0 2 3" "R::::::,G::::::w4gx0,G::::::w4gx0,R::::::"
tar czf "$OUT/fp34_res.tgz" -C "$DEV_TMP" . 2>/dev/null
echo done
