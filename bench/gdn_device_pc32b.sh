#!/usr/bin/env bash
# Session 32 (helper pc32), call 2: chain3r on fwd_chain4_body_from1 (2 rows x 4 columns per thread,
# bitwise chain2's arithmetic), the first piece longer than the others (DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE
# = s: s/256 of the even piece; another cut: fp64 tests) and the piece-count sweep with and without
# the first piece early.
# T = branch pc32's device build (call 2); C1 = call 1's hash files of the same tests (chain3r on
# fwd_chain2_body from seed 1); B = /work/base31 (main cfd4a3a).
# 1. forward tests with DNNPLAN_GDN_FWD_PIECE_FIRST=1 at 7 / 3 pieces and by rule: hashes == call 1's
#    (bitwise expected: only the chain's thread layout changed); memcheck forward_parity at 7 pieces;
# 2. timing in one process at (1,32768,16): A F, the sweep, F A (A = rule, F = first early; Fn / An:
#    n pieces forced).
# Command: `cd .xfer-pc32 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_pc32b.sh`.
set -uo pipefail
OUT=${OUT:-/tmp}/pc32b; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin pc32b
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=$(ls base/gpu_gdn-* | head -1)
echo "T $t $tb; B $b"
CAP=${PC32_CAP_S:-100}
export DEV_CAP_S=30
F=DNNPLAN_GDN_FWD_PIECE_FIRST=1
for p in 7 3; do
  dev_fwd_case T_f$p "$t" $F DNNPLAN_GDN_FWD_PIECES=$p
  dev_same $DEV_TMP/h_T_f$p c1/h_T_f$p "forward tests at $p pieces, first early: chain4 body == call 1 (chain2 body)"
done
dev_fwd_case T_frule "$t" $F
dev_same $DEV_TMP/h_T_frule c1/h_T_frule "forward tests by rule, first early: call 2 == call 1"
for p in 7 3; do
  dev_fwd_case T_s$p "$t" $F DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE=320 DNNPLAN_GDN_FWD_PIECES=$p
  grep -E "rms" $DEV_TMP/p_T_s$p.log | sed -E 's/ in [0-9.]+ ?m?s//' > $DEV_TMP/r_T_s$p
  grep -E "rms" $DEV_TMP/p_T_f$p.log | sed -E 's/ in [0-9.]+ ?m?s//' > $DEV_TMP/r_T_f$p
  echo "rms at $p pieces: first early with scale 320 (<) vs the even cut (>):"; diff $DEV_TMP/r_T_s$p $DEV_TMP/r_T_f$p
done
dev_fwd_case T_srule "$t" $F DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE=320
dev_fwd_case T_rule "$t"; dev_fwd_case B_rule "$b"
dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_B_rule "forward tests by rule: T (switch unset) == B"
echo "elapsed ${SECONDS}s"
dev_memcheck "$t" forward_parity $F DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE=320 DNNPLAN_GDN_FWD_PIECES=7
echo "elapsed ${SECONDS}s"
run_bench() {  # label shapes schedules
  [ $SECONDS -lt $((CAP - 20)) ] || { echo "time cap: no bench $1"; return; }
  local log=$DEV_TMP/bench_$1.log
  env DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="$2" DNNPLAN_GDN_BENCH_SCHEDULES="$3" \
    timeout 60 $tb gdn_benchmark_ours --test-threads=1 --nocapture > $log 2>&1
  grep -hE "BENCH ours fwd |panicked" $log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
  echo "elapsed ${SECONDS}s"
}
run_bench p1 "1" "A:::::,F::::1:,S280::::1:280,S300::::1:300,S320::::1:320,S340::::1:340,F5::5::1:,F6::6::1:,F8::8::1:,A6::6:::,A8::8:::,S340::::1:340,S320::::1:320,S300::::1:300,S280::::1:280,F::::1:,A:::::"
tar czf "$OUT/pc32b_res.tgz" -C "$DEV_TMP" . 2>/dev/null
echo done
