#!/usr/bin/env bash
# Session 41, lead, staged on branch s41-handoff (not run: no device after the session's second
# call): the token tile's hand-off without the per-element sign (Re takes P_E; the row phase negates
# it in the two uses' operand signs) and with the hand-off stores and read-back addressed from row
# bases (tw1 / tw3 / tw7: static instructions 4,680 → 4,568 in tw7 bf16; handoff_rows_v3 also
# serves tc11-tc16). Against main's binaries (.device/base, built from main before the branch):
# hashes new == base (tw7 by rule, tw3, tc16, 8 pieces; the test matrix's K = 64 cases run by rule),
# the saved-replay test, memcheck, then the backward and the stages alone alternating.
# Command: cd .xfer-sr && tar xJf dev.txz -C .. && cd .. && OUT=$OUT bash bench/gdn_device_ho41.sh
set -uo pipefail
OUT=${OUT:-/tmp}/ho41; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin ho41
chmod +x .device/tests/* .device/base/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
b=.device/base/gpu_gdn_base; bb=.device/base/gpu_gdn_bench_base
export DEV_CAP_S=60
for c in "R" "T3 DNNPLAN_GDN_BWD_TOKENS=tw3" "T16 DNNPLAN_GDN_BWD_TOKENS=tc16" "P8 DNNPLAN_GDN_BWD_PIECES=8"; do
  set -- $c
  dev_bwd_case B$1 "$b" ${2:-}; dev_bwd_case N$1 "$t" ${2:-}
  dev_same $DEV_TMP/h_N$1 $DEV_TMP/h_B$1 "backward $1: new == base"
done
dev_parity "the_saved_replay (new)" "$t" the_saved_replay
dev_memcheck "$t" backward_parity
echo "elapsed ${SECONDS}s"
for x in bb tb bb tb; do
  bin=${!x}
  env DNNPLAN_GDN_BENCH_ALONE=1 timeout 60 $bin gdn_benchmark_stages_alone --test-threads=1 --nocapture 2>&1 | grep -E "BENCH alone|panicked" | sed -E "s/^/$x /; s/\| before the pair [^|]*//"
done
for x in bb tb; do
  bin=${!x}
  DNNPLAN_GDN_BENCH_FACTORS=1 DNNPLAN_GDN_BENCH_FACTORS_ROUNDS=3 timeout 60 $bin gdn_benchmark_saved_factors --test-threads=1 --nocapture 2>&1 \
    | grep -E "BENCH replay|panicked" | sed -E "s/^test gdn_benchmark_saved_factors \.\.\. //; s/^/$x /"
done
echo "done ${SECONDS}s"
