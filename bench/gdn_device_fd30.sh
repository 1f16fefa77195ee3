#!/usr/bin/env bash
# Session 30 (helper fd30): the forward's floors and the split P'/O' scan (one call).
# T = branch fd30's device build (main 7809042 + bench/gdn_fd30_timing.patch: the `_sp` scans and
# `_wg_rev` preps (candidates), the timing-only `_lo` / `_co` / `_ch` scans and `_lo` prep, selected by DNNPLAN_FD30_SCAN /
# DNNPLAN_FD30_PREP at plan build; every existing gdn_fwd entry byte-identical to main's, textcmp).
# B = /work/base30 (main 7809042).
# (~95 s of command; not run by fd30: both start-ups were refused. Meant for the lead's call.)
# 1. forward tests with DNNPLAN_FD30_SCAN=sp by rule and with w8gx forced, and with
#    DNNPLAN_FD30_PREP=rev, vs B's (bitwise expected: the same values), memcheck with sp;
# 2. timing, gdn_benchmark_ours (whole forward and per kernel, CUDA events) at (4,8192,16) and
#    (16,2048,32), one process per letter: B L C H S R R S H C L B, with L = prep and scan
#    load-only, C = scan compute-only, H = scan chain-only, S = the split scan, R = the reversed
#    prep order; schedules default and w4gx.
# Command: `cd .xfer-fd30 && tar xzf device.tgz && OUT=$OUT bash bench/gdn_device_fd30.sh`.
set -uo pipefail
# Its own folder under $OUT (fd30.log, env.log, fd30_res.tgz): safe inside another script's call.
OUT=${OUT:-/tmp}/fd30; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin fd30
chmod +x .device/tests/* base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=$(ls base/gpu_gdn-* | head -1); bb=$(ls base/gpu_gdn_bench-* | head -1)
echo "T $t $tb; B $b $bb"
export DEV_CAP_S=25
dev_fwd_case T_sp "$t" DNNPLAN_FD30_SCAN=sp; dev_fwd_case B_rule "$b"
dev_same $DEV_TMP/h_T_sp $DEV_TMP/h_B_rule "forward tests: T sp (by rule) == B by rule"
dev_fwd_case T_sp8 "$t" DNNPLAN_FD30_SCAN=sp DNNPLAN_GDN_FWD_SCAN=w8gx
dev_fwd_case B_w8 "$b" DNNPLAN_GDN_FWD_SCAN=w8gx
dev_same $DEV_TMP/h_T_sp8 $DEV_TMP/h_B_w8 "forward tests: T sp w8gx forced == B w8gx forced"
dev_fwd_case T_rev "$t" DNNPLAN_FD30_PREP=rev
dev_same $DEV_TMP/h_T_rev $DEV_TMP/h_B_rule "forward tests: T rev (by rule) == B by rule"
echo "elapsed ${SECONDS}s"
DEV_CAP_S=25 dev_memcheck "$t" forward_parity DNNPLAN_FD30_SCAN=sp
echo "elapsed ${SECONDS}s"
SCHED="default:::,w4gx:w4gx::"
for who in B L C H S R R S H C L B; do
  [ $SECONDS -lt 88 ] || { echo "time cap: stop before $who"; break; }
  bin=$tb; [ $who = B ] && bin=$bb
  envs=()
  case $who in
    L) envs=(DNNPLAN_FD30_PREP=lo DNNPLAN_FD30_SCAN=lo) ;;
    C) envs=(DNNPLAN_FD30_SCAN=co) ;;
    H) envs=(DNNPLAN_FD30_SCAN=ch) ;;
    S) envs=(DNNPLAN_FD30_SCAN=sp) ;;
    R) envs=(DNNPLAN_FD30_PREP=rev) ;;
  esac
  echo "== bench $who ${envs[*]+${envs[*]}}"
  log=$DEV_TMP/bench_${who}_${SECONDS}.log
  env ${envs[@]+"${envs[@]}"} DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="0 2" DNNPLAN_GDN_BENCH_SCHEDULES=$SCHED \
    timeout 15 $bin gdn_benchmark_ours --test-threads=1 --nocapture > $log 2>&1
  grep -hE "BENCH ours fwd |panicked" $log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
  echo "elapsed ${SECONDS}s"
done
tar czf "$OUT/fd30_res.tgz" -C "$DEV_TMP" . 2>/dev/null
echo done
