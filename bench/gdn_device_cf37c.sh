#!/usr/bin/env bash
# Session 37, lead: third call. The backward's slim workspace (only the regions its kernels touch):
# the whole gpu_gdn suite, the backward by rule and at 8 pieces against the base, memcheck of the
# backward and of the chunk-factor test, each plan's workspace per benchmark shape (BENCH ours ws).
set -uo pipefail
OUT=${OUT:-/tmp/cf37c_out}
mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin cf37c
start=$SECONDS
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=$(ls base/gpu_gdn-* | head -1)
echo "== gpu_gdn suite"
timeout 150 $t --test-threads=1 > $OUT/gpu_gdn.log 2>&1; grep -E "test result|panicked|FAILED" $OUT/gpu_gdn.log | head
echo "== bitwise against the base (s=$((SECONDS - start)))"
dev_compare bwd "backward by rule (slim workspace): this build == base 330e912" $t $b
dev_compare bwd "backward at 8 pieces (slim workspace): this build == base" $t $b DNNPLAN_GDN_BWD_PIECES=8
dev_compare fwd "forward by rule: this build == base 330e912" $t $b
DEV_CAP_S=120 dev_memcheck $t backward_parity
DEV_CAP_S=120 dev_memcheck $t chunk_factors_saved
echo "== workspace and times (s=$((SECONDS - start)))"
DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SCHEDULES=default:::::::: timeout 150 $tb gdn_benchmark_ours --test-threads=1 --nocapture 2>&1 | grep -E "BENCH ours (ws|train|fwdbwd)|panicked|test result"
echo "== done in $((SECONDS - start)) s"
