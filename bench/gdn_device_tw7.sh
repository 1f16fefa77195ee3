#!/usr/bin/env bash
# Session 39, lead: tw7 (tw3 with the token tile's ring S, dS', U, dR by tensor maps;
# DNNPLAN_GDN_BWD_TOKENS=tw7). Checks: backward hashes tw7 == tw3 (by rule, at 8 pieces), the
# saved-output tests and the backward tests under tw7, memcheck; then timing tw3 / tw7 alternating
# at the four shapes (whole backward and stages), the stages alone, the training step.
# Command (~120 s): `cd .xfer-sr && tar xJf dev.txz -C .. && cd .. && OUT=$OUT bash bench/gdn_device_tw7.sh`.
set -uo pipefail
OUT=${OUT:-/tmp}/tw7; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin tw7
chmod +x .device/tests/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
export DEV_CAP_S=60
W=DNNPLAN_GDN_BWD_TOKENS=tw7
dev_bwd_case T3 "$t"
dev_bwd_case T7 "$t" $W
dev_same $DEV_TMP/h_T7 $DEV_TMP/h_T3 "backward_parity: tw7 == tw3 (by rule)"
dev_port_diff $DEV_TMP/h_T7 $DEV_TMP/h_T3 "tw7 vs tw3"
dev_bwd_case P3 "$t" DNNPLAN_GDN_BWD_PIECES=8
dev_bwd_case P7 "$t" $W DNNPLAN_GDN_BWD_PIECES=8
dev_same $DEV_TMP/h_P7 $DEV_TMP/h_P3 "backward_parity at 8 pieces: tw7 == tw3"
dev_parity "chunk_factors_saved, tw7" "$t" chunk_factors_saved $W
DEV_CAP_S=90 dev_parity "the_saved_replay, tw7" "$t" the_saved_replay $W
dev_parity "backward_checkpoint_reuse, tw7" "$t" backward_checkpoint_reuse $W
dev_parity "misaligned_operands, tw7" "$t" misaligned_operands $W
dev_memcheck "$t" backward_parity $W
echo "elapsed ${SECONDS}s"
env DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS="tw3/,tw7/,tw7/,tw3/,tw3/,tw7/" timeout 100 $t timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "bwd stages|panicked"
echo "elapsed ${SECONDS}s"
for v in tw3 tw7; do
  env DNNPLAN_GDN_BENCH_ALONE=1 DNNPLAN_GDN_BWD_TOKENS=$v timeout 60 $tb gdn_benchmark_stages_alone --test-threads=1 --nocapture 2>&1 | grep -E "BENCH alone|panicked" | sed "s/^/$v /"
done
echo "elapsed ${SECONDS}s"
for v in tw3 tw7 tw7 tw3; do
  env DNNPLAN_GDN_BENCH_FACTORS=1 DNNPLAN_GDN_BENCH_FACTORS_ROUNDS=1 DNNPLAN_GDN_BWD_TOKENS=$v timeout 60 $tb gdn_benchmark_saved_factors --test-threads=1 --nocapture 2>&1 | grep -E "BENCH replay|panicked" | sed "s/^/$v /"
done
echo "elapsed ${SECONDS}s"
