#!/usr/bin/env bash
# Session 35 (helper sm35), call 1: the summary beside the first piece on three stages
# (slimsum_gxr3, DNNPLAN_GDN_FWD_PIECE_FIRST_SUM=gxr3) against gxr: BITWISE lines vs the base
# (/work/base35 = main 330e912) at the rule and at forced 5 / 7 / 3 pieces, tests, memcheck; then
# one gdn_benchmark_ours process at (1,32768,16): R (rule) / S (gxr3) A B B A, the first piece's
# scale and the piece count swept on w4gx0 (brief task 1) with both summaries, and the uncut shapes.
# Command (~90 s): `cd .xfer-sm35 && tar xJf device.txz && OUT=$OUT bash bench/gdn_device_sm35.sh`.
set -uo pipefail
OUT=${OUT:-/tmp}/sm35; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin sm35
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=$(ls base/gpu_gdn-* | head -1)
CAP=${SM35_CAP_S:-150}
export DEV_CAP_S=30
S3=DNNPLAN_GDN_FWD_PIECE_FIRST_SUM=gxr3
run_bench() {  # label shapes schedules
  [ $SECONDS -lt $((CAP - 20)) ] || { echo "time cap: no bench $1"; return; }
  local log=$DEV_TMP/bench_$1.log
  env DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="$2" DNNPLAN_GDN_BENCH_SCHEDULES="$3" \
    timeout 60 $tb gdn_benchmark_ours --test-threads=1 --nocapture > $log 2>&1
  grep -hE "BENCH ours fwd |panicked" $log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
  echo "elapsed ${SECONDS}s"
}
# Timing first (the part the brief needs most), then the checks.
R="R::::::::"; S="S::::::::gxr3"
sw=""
for p in 5 4 6; do
  for sc in 256 288 320 352; do sw="$sw,P${p}s${sc}::${p}::1:${sc}:w4gx0::"; done
done
for sc in 256 288 320 352; do sw="$sw,S5s${sc}::5::1:${sc}:w4gx0::gxr3"; done
run_bench ab "1" "$R,$S,$S,$R,$R,$S,$S,$R"
run_bench sweep "1" "$R$sw,$S"
run_bench ab2 "1" "$S,$R,$R,$S"
run_bench u "0 2 3" "$R,$S,$S,$R"
echo "elapsed ${SECONDS}s (timing done)"
dev_fwd_case T_rule "$t"
dev_fwd_case B_rule "$b"
dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_B_rule "forward tests by rule: T == B"
dev_fwd_case T_s3 "$t" $S3
dev_same $DEV_TMP/h_T_s3 $DEV_TMP/h_B_rule "forward tests by rule, summary gxr3: T == B (gxr)"
for p in 5 7 3; do
  [ $SECONDS -lt $((CAP - 25)) ] || { echo "time cap: no case at $p pieces"; continue; }
  dev_fwd_case T_s3p$p "$t" $S3 DNNPLAN_GDN_FWD_PIECES=$p
  dev_fwd_case B_p$p "$b" DNNPLAN_GDN_FWD_PIECES=$p
  dev_same $DEV_TMP/h_T_s3p$p $DEV_TMP/h_B_p$p "forward tests at $p pieces: T gxr3 == B (gxr)"
done
for x in T_s3p5 B_p5; do [ -f $DEV_TMP/p_$x.log ] && { echo "rms $x:"; grep -E "rms" $DEV_TMP/p_$x.log | sed -E 's/ in [0-9.]+ ?m?s//' | head -8; }; done
[ $SECONDS -lt $((CAP - 30)) ] && dev_memcheck "$t" forward_parity $S3 DNNPLAN_GDN_FWD_PIECES=5 || echo "time cap: no memcheck"
echo "elapsed ${SECONDS}s"
tar czf "$OUT/sm35_res.tgz" -C "$DEV_TMP" . 2>/dev/null
echo done
