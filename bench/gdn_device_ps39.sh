#!/usr/bin/env bash
# Session 39, lead: the split prep of the first-early piece path (DNNPLAN_GDN_FWD_PREP_SPLIT,
# SLIM_PREP_SPLIT of src/engines/gdn/engine.rs). Checks: the split at the unsplit cut bitwise the
# unsplit forward (in one binary), the forward tests and the saved outputs' tests under the split
# (fp64, saving == plain), memcheck; then the first piece's length swept at (1,32768,16) with the
# rule's unsplit forward beside it, two processes in opposite orders.
# Command (~150 s): `cd .xfer-sr && tar xJf dev.txz -C .. && cd .. && OUT=$OUT bash bench/gdn_device_ps39.sh`.
set -uo pipefail
OUT=${OUT:-/tmp}/ps39; mkdir -p "$OUT"
source bench/device_lib.sh
dev_begin ps39
chmod +x .device/tests/* 2>/dev/null
t=$(dev_bin gpu_gdn); tb=$(dev_bin gpu_gdn_bench)
export DEV_CAP_S=60
S=DNNPLAN_GDN_FWD_PREP_SPLIT=1
timeout 60 "$t" split_prep_forward --test-threads=1 --nocapture 2>&1 | grep -E "split prep|test result|panicked|piece chain" | head -16
dev_parity "forward_parity_matrix, split" "$t" forward_parity $S
dev_parity "chunk_factors_saved (saving == plain, backward), split" "$t" chunk_factors_saved $S
DEV_CAP_S=90 dev_parity "the_saved_replay, split" "$t" the_saved_replay $S
dev_parity "forward_state_checkpoints, split" "$t" forward_state_checkpoints $S
dev_memcheck "$t" split_prep_forward
timeout 60 compute-sanitizer --tool memcheck --print-limit 2 "$t" split_prep_forward --test-threads=1 2>&1 | grep -E "^========= (Invalid|Program hit|    at|by thread)" | head -8
dev_memcheck "$t" forward_parity $S
echo "elapsed ${SECONDS}s"
run_bench() {  # label shapes schedules
  local log=$DEV_TMP/bench_$1.log
  env DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES="$2" DNNPLAN_GDN_BENCH_SCHEDULES="$3" \
    timeout 50 $tb gdn_benchmark_ours --test-threads=1 --nocapture > $log 2>&1
  grep -hE "BENCH ours fwd |panicked" $log | sed -E 's/^test gdn_benchmark_ours \.\.\. //'
  echo "elapsed ${SECONDS}s"
}
R="R:::::::::"
sp() { echo "S$1:::::$1::::1"; }
run_bench a "1" "$R,$(sp 264),$(sp 320),$(sp 360),$(sp 400),$(sp 440),$(sp 480),$R"
run_bench b "1" "$(sp 480),$(sp 440),$(sp 400),$(sp 360),$(sp 320),$R,$(sp 264),$R"
tar czf "$OUT/ps39_res.tgz" -C "$DEV_TMP" . 2>/dev/null
echo done
