#!/usr/bin/env bash
# Session 41, lead, call 2: which form of the forward scans' descriptors and zero-started chains
# is fastest. Call 1 (gdn_device_desc41.sh) found the full change (every descriptor advanced, the
# U^T chain on the scale-d-0 form) bitwise but slower on the 4-warp scans (w4gxs +1..+2 %, w4gx0 /
# w4gxr +7..+12 %) and faster on w8gx and the saving scans. Four builds of the forward (the
# backward identical in all but base): base (main 58ef246), full, v2 (the tail's descriptors
# advanced and the U^T zero form; P', O' as main), v3 (the U^T zero form only). Hashes v2, v3 ==
# base (forward by rule, at 7 pieces); the forward's kernels in alternating processes; the
# training step once each.
set -uo pipefail
OUT=${OUT:-/tmp}/desc41b; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin desc41b
chmod +x .device/tests/* .device/base/* .device/var/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=.device/base/gpu_gdn_base; bb=.device/base/gpu_gdn_bench_base
v2=.device/var/gpu_gdn_v2; v2b=.device/var/gpu_gdn_bench_v2; v3=.device/var/gpu_gdn_v3; v3b=.device/var/gpu_gdn_bench_v3
export DEV_CAP_S=40
dev_fwd_case FB "$b"; dev_fwd_case F2 "$v2"; dev_fwd_case F3 "$v3"
dev_same $DEV_TMP/h_F2 $DEV_TMP/h_FB "forward by rule: v2 == base"
dev_same $DEV_TMP/h_F3 $DEV_TMP/h_FB "forward by rule: v3 == base"
dev_fwd_case FB7 "$b" DNNPLAN_GDN_FWD_PIECES=7; dev_fwd_case F27 "$v2" DNNPLAN_GDN_FWD_PIECES=7; dev_fwd_case F37 "$v3" DNNPLAN_GDN_FWD_PIECES=7
dev_same $DEV_TMP/h_F27 $DEV_TMP/h_FB7 "forward at 7 pieces: v2 == base"
dev_same $DEV_TMP/h_F37 $DEV_TMP/h_FB7 "forward at 7 pieces: v3 == base"
echo "elapsed ${SECONDS}s"
for x in bb tb v2b v3b v3b v2b tb bb; do
  bin=${!x}
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default timeout 40 $bin gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 \
    | grep -E "BENCH ours fwd |panicked" | sed -E "s/^test gdn_benchmark_ours \.\.\. //; s/^/$x /; s/min-traffic [0-9]* GB.s \| chunk_offsets [^|]*\| //; s/ [0-9]+ GB.s [0-9.]+ TFLOP.s//g"
done
echo "elapsed ${SECONDS}s"
for x in bb tb v2b v3b; do
  bin=${!x}
  DNNPLAN_GDN_BENCH_FACTORS=1 DNNPLAN_GDN_BENCH_FACTORS_ROUNDS=3 timeout 60 $bin gdn_benchmark_saved_factors --test-threads=1 --nocapture 2>&1 \
    | grep -E "BENCH replay|panicked" | sed -E "s/^test gdn_benchmark_saved_factors \.\.\. //; s/^/$x /"
done
echo "done ${SECONDS}s"
