#!/usr/bin/env bash
# Session 35 (helper sm35), staged confirmation of the flip (gxr3 by rule, its first piece 264/256
# of the even one at 5 pieces). T = branch sm35 head (the flip), B = /work/base35 (main 330e912).
# O = the old rule by switch (DNNPLAN_GDN_FWD_PIECE_FIRST_SUM=gxr: gxr, 288 at 5 pieces).
# Command (~60 s): `cd .xfer-sm35 && tar xJf device-c.txz && OUT=$OUT bash bench/gdn_device_sm35c.sh`.
set -uo pipefail
OUT=${OUT:-/tmp}/sm35c; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin sm35c
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=$(ls base/gpu_gdn-* | head -1)
CAP=${SM35_CAP_S:-110}
export DEV_CAP_S=30
O=DNNPLAN_GDN_FWD_PIECE_FIRST_SUM=gxr
dev_fwd_case T_rule "$t"
dev_fwd_case T_old "$t" $O
dev_fwd_case B_rule "$b"
dev_same $DEV_TMP/h_T_rule $DEV_TMP/h_B_rule "forward tests by rule: T == B (no test shape takes 5 pieces by rule)"
dev_same $DEV_TMP/h_T_old $DEV_TMP/h_B_rule "forward tests, old rule by switch: T == B by rule"
dev_fwd_case T_p5 "$t" DNNPLAN_GDN_FWD_PIECES=5
dev_fwd_case T_p5o "$t" $O DNNPLAN_GDN_FWD_PIECES=5
dev_fwd_case T_p5s288 "$t" DNNPLAN_GDN_FWD_PIECES=5 DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE=288
dev_fwd_case B_p5 "$b" DNNPLAN_GDN_FWD_PIECES=5
dev_same $DEV_TMP/h_T_p5o $DEV_TMP/h_B_p5 "forward tests at 5 pieces, old rule by switch: T == B"
dev_same $DEV_TMP/h_T_p5s288 $DEV_TMP/h_B_p5 "forward tests at 5 pieces, gxr3 at 288: T == B (gxr at 288)"
dev_same $DEV_TMP/h_T_p5 $DEV_TMP/h_B_p5 "forward tests at 5 pieces by rule (264) vs B (288): expected to differ (another cut)"
for p in 7 3; do
  dev_fwd_case T_p$p "$t" DNNPLAN_GDN_FWD_PIECES=$p
  dev_fwd_case B_p$p "$b" DNNPLAN_GDN_FWD_PIECES=$p
  dev_same $DEV_TMP/h_T_p$p $DEV_TMP/h_B_p$p "forward tests at $p pieces: T (gxr3) == B (gxr)"
done
for x in T_p5 B_p5; do echo "rms $x:"; grep -E "rms" $DEV_TMP/p_$x.log | sed -E 's/ in [0-9.]+ ?m?s//' | head -8; done
dev_parity "forward_state_checkpoints by rule" "$t" forward_state_checkpoints
dev_parity "forward_state_checkpoints at 5 pieces" "$t" forward_state_checkpoints DNNPLAN_GDN_FWD_PIECES=5
[ $SECONDS -lt $((CAP - 40)) ] && dev_memcheck "$t" forward_parity DNNPLAN_GDN_FWD_PIECES=5 || echo "time cap: no memcheck"
echo "elapsed ${SECONDS}s"
run_bench() {  # label shapes schedules
  [ $SECONDS -lt $((CAP - 15)) ] || { echo "time cap: no bench $1"; return; }
  local log=$DEV_TMP/bench_$1.log
  env DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="$2" DNNPLAN_GDN_BENCH_SCHEDULES="$3" \
    timeout 40 $tb gdn_benchmark_ours --test-threads=1 --nocapture > $log 2>&1
  grep -hE "BENCH ours fwd |panicked" $log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
  echo "elapsed ${SECONDS}s"
}
A="O::::::::gxr"; R="R::::::::"
run_bench p1 "1" "$A,$R,$R,$A,$A,$R,$R,$A,$R,$A"
run_bench u "0 2 3" "$A,$R,$R,$A"
tar czf "$OUT/sm35c_res.tgz" -C "$DEV_TMP" . 2>/dev/null
echo done
