#!/usr/bin/env bash
# Session 37, lead: the saved chunk factors on the H200 (first call). Run from the repo root on the
# device with the staged .device (this build) and base/ (main 330e912's gpu_gdn): the new GPU test
# (forward bitwise with / without saving, backward bitwise with / without the saved factors, zeroed
# factors move the gradients), the forward and backward by rule against the base (the backward
# prep16 entries' .text moved by an instruction reorder; FwdFastParams grew), memcheck of the new
# test, and the training step with / without saved factors per benchmark shape (one process).
set -uo pipefail
OUT=${OUT:-/tmp/cf37_out}
mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin cf37
start=$SECONDS
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=$(ls base/gpu_gdn-* | head -1)
echo "== chunk factors test"
timeout 90 $t chunk_factors_saved --test-threads=1 --nocapture 2>&1 | grep -E "saved factors|test result|panicked|differ" | head -20
echo "== bitwise against the base (s=$((SECONDS - start)))"
dev_compare fwd "forward by rule: this build == base 330e912" $t $b
dev_compare bwd "backward by rule: this build == base 330e912" $t $b
dev_compare bwd "backward at 8 pieces: this build == base" $t $b DNNPLAN_GDN_BWD_PIECES=8
echo "== memcheck (s=$((SECONDS - start)))"
DEV_CAP_S=120 dev_memcheck $t chunk_factors_saved
echo "== training step with saved factors (s=$((SECONDS - start)))"
DNNPLAN_GDN_BENCH_FACTORS=1 DNNPLAN_GDN_BENCH_FACTORS_ROUNDS=3 timeout 90 $tb gdn_benchmark_saved_factors --test-threads=1 --nocapture 2>&1 | grep -E "BENCH factors|panicked|test result"
echo "== done in $((SECONDS - start)) s"
