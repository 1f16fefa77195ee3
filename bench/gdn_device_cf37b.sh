#!/usr/bin/env bash
# Session 37, lead: second call. The saving prep on the rule's tensor-map tiles (wgts / wgtls)
# through the chunk-factor test (bitwise both directions) and memcheck; the forward by rule and at 7
# pieces against the base; session 36's review mend (slim_store_o_rows, one store_o lambda: the
# TMA scans' .text moved) as w4gxt / w4gxu / w4gxv forced == base w4gx forced; the torch package's
# gdn tests (the training ops); the training step with saved factors per shape.
set -uo pipefail
OUT=${OUT:-/tmp/cf37b_out}
mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin cf37b
start=$SECONDS
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench); b=$(ls base/gpu_gdn-* | head -1)
echo "== chunk factors test"
timeout 90 $t chunk_factors_saved --test-threads=1 --nocapture 2>&1 | grep -E "saved factors|test result|panicked|differ" | head -20
DEV_CAP_S=120 dev_memcheck $t chunk_factors_saved
echo "== bitwise against the base (s=$((SECONDS - start)))"
dev_compare fwd "forward by rule: this build == base 330e912" $t $b
dev_compare fwd "forward at 7 pieces: this build == base" $t $b DNNPLAN_GDN_FWD_PIECES=7
dev_fwd_case B $b DNNPLAN_GDN_FWD_SCAN=w4gx
for s in w4gxt w4gxu w4gxv; do
  dev_fwd_case $s $t DNNPLAN_GDN_FWD_SCAN=$s
  dev_same $DEV_TMP/h_B $DEV_TMP/h_$s "$s forced (slim_store_o_rows, one store_o) == base w4gx forced"
done
DEV_CAP_S=90 dev_memcheck $t forward_parity DNNPLAN_GDN_FWD_SCAN=w4gxu
echo "== training step with saved factors (s=$((SECONDS - start)))"
DNNPLAN_GDN_BENCH_FACTORS=1 DNNPLAN_GDN_BENCH_FACTORS_ROUNDS=3 timeout 90 $tb gdn_benchmark_saved_factors --test-threads=1 --nocapture 2>&1 | grep -E "BENCH factors|panicked|test result"
echo "== torch gdn tests (s=$((SECONDS - start)))"
OUT=$OUT/torch timeout 240 bash python/run_gpu_tests.sh --no-bench -k gdn > $OUT/torch_run.log 2>&1
grep -E "passed|failed|error|FAIL" $OUT/torch/torch_tests.log | tail -8
grep -E "FAILED|Error" $OUT/torch/torch_tests.log | head -10
echo "== done in $((SECONDS - start)) s"
