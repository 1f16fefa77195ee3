#!/usr/bin/env bash
# Needs bench/gdn_tw8_s40.patch applied (against main 76a3805; `git apply`, then `bash kernels/build-cubins.sh`).
# Session 40, lead: tw8 (tw7's token tile in a persistent block, the next tile's ring loaded by
# tensor maps during this tile's epilogue; DNNPLAN_GDN_BWD_TOKENS=tw8). Checks: backward hashes
# tw8 == tw7 (by rule, uncut and at 8 pieces), the saved-output tests and the backward tests under
# tw8, memcheck; then timing tw7 / tw8 alternating at the four shapes (whole backward and stages),
# tw8 without its prefetch, the stages alone, the training step.
# Command (~150 s): `cd .xfer-sr && tar xJf dev.txz -C .. && cd .. && OUT=$OUT bash bench/gdn_device_tw8.sh`.
set -uo pipefail
OUT=${OUT:-/tmp}/tw8; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin tw8
chmod +x .device/tests/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
export DEV_CAP_S=60
W=DNNPLAN_GDN_BWD_TOKENS=tw8
dev_bwd_case T7 "$t"
dev_bwd_case T8 "$t" $W
dev_same $DEV_TMP/h_T8 $DEV_TMP/h_T7 "backward_parity: tw8 == tw7 (by rule)"
dev_port_diff $DEV_TMP/h_T8 $DEV_TMP/h_T7 "tw8 vs tw7"
dev_bwd_case P7 "$t" DNNPLAN_GDN_BWD_PIECES=8
dev_bwd_case P8 "$t" $W DNNPLAN_GDN_BWD_PIECES=8
dev_same $DEV_TMP/h_P8 $DEV_TMP/h_P7 "backward_parity at 8 pieces: tw8 == tw7"
dev_bwd_case L8 "$t" $W DNNPLAN_GDN_BWD_TW8_PREFETCH=0
dev_same $DEV_TMP/h_L8 $DEV_TMP/h_T7 "backward_parity: tw8 without prefetch == tw7"
dev_parity "gpu_gdn backward tests, tw8" "$t" backward $W
dev_parity "chunk_factors_saved, tw8" "$t" chunk_factors_saved $W
DEV_CAP_S=90 dev_parity "the_saved_replay, tw8" "$t" the_saved_replay $W
dev_parity "backward_checkpoint_reuse, tw8" "$t" backward_checkpoint_reuse $W
dev_parity "misaligned_operands, tw8" "$t" misaligned_operands $W
dev_memcheck "$t" backward_parity $W
echo "elapsed ${SECONDS}s"
env DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS="tw7/,tw8/,tw8/,tw7/,tw7/,tw8/" timeout 100 $t timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "bwd stages|panicked"
echo "elapsed ${SECONDS}s"
echo "without prefetch:"
env DNNPLAN_GDN_BWD_TW8_PREFETCH=0 DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS="tw7/,tw8/,tw8/,tw7/" timeout 80 $t timing_at_benchmark_shapes --test-threads=1 --nocapture 2>&1 | grep -E "bwd stages|panicked"
echo "elapsed ${SECONDS}s"
for v in tw7 tw8; do
  env DNNPLAN_GDN_BENCH_ALONE=1 DNNPLAN_GDN_BWD_TOKENS=$v timeout 60 $tb gdn_benchmark_stages_alone --test-threads=1 --nocapture 2>&1 | grep -E "BENCH alone|panicked" | sed "s/^/$v /"
done
echo "elapsed ${SECONDS}s"
for v in tw7 tw8 tw8 tw7; do
  env DNNPLAN_GDN_BENCH_FACTORS=1 DNNPLAN_GDN_BENCH_FACTORS_ROUNDS=1 DNNPLAN_GDN_BWD_TOKENS=$v timeout 60 $tb gdn_benchmark_saved_factors --test-threads=1 --nocapture 2>&1 | grep -E "BENCH replay|panicked" | sed "s/^/$v /"
done
echo "elapsed ${SECONDS}s"
