#!/usr/bin/env bash
# Session 38, lead: first call. The saved replay (the forward's U-saving scans, the backward without
# prep and replay): its GPU test, the whole gpu_gdn suite (BwdParams grew by ws_u: every backward
# kernel's parameter block moved), forward / backward by rule and at pieces bitwise against the
# base, memcheck of the new test, the training step with factors and with the saved replay.
set -uo pipefail
OUT=${OUT:-/tmp/sr38_out}
mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin sr38
start=$SECONDS
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=$(ls base/gpu_gdn-* | head -1)
echo "== the saved replay"
timeout 120 $t the_saved_replay --test-threads=1 --nocapture > $OUT/saved_replay.log 2>&1
grep -E "saved replay|test result|panicked|FAILED|differ|left every" $OUT/saved_replay.log | head -20
echo "== gpu_gdn suite (s=$((SECONDS - start)))"
timeout 170 $t --test-threads=1 --skip the_saved_replay > $OUT/gpu_gdn.log 2>&1; grep -E "test result|panicked|FAILED" $OUT/gpu_gdn.log | head
echo "== bitwise against the base (s=$((SECONDS - start)))"
dev_compare bwd "backward by rule: this build == base 330e912" $t $b
dev_compare bwd "backward at 8 pieces: this build == base" $t $b DNNPLAN_GDN_BWD_PIECES=8
dev_compare fwd "forward by rule: this build == base 330e912" $t $b
DEV_CAP_S=150 dev_memcheck $t the_saved_replay
echo "== the training step (s=$((SECONDS - start)))"
DNNPLAN_GDN_BENCH_FACTORS=1 DNNPLAN_GDN_BENCH_FACTORS_ROUNDS=3 timeout 200 $tb gdn_benchmark_saved_factors --test-threads=1 --nocapture 2>&1 | grep -E "BENCH (factors|replay)|panicked|test result"
echo "== done in $((SECONDS - start)) s"
