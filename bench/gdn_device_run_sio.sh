#!/usr/bin/env bash
# Helper gdnbwd2's device call (session 5): the backward with the states entering the chunks in
# the io dtype (FLAG_BWD_S_IO replays + gdn_bwd_tokens_tc4, the default) vs the fp32 states (tc3).
# gpu_gdn parity (default = tc4), the backward matrix with DNNPLAN_GDN_BWD_PIECES=4 (tc4 chain),
# the backward matrix with DNNPLAN_GDN_BWD_TOKENS=tc3 (old path), per-stage timings tc3 vs tc4 at
# the four benchmark shapes, and the piece-chain timing with tc3 then tc4.
# Here (CPU machine, worktree root):
#   cargo test --release --features gpu-tests --test gpu_gdn --no-run   (stripped, no debug)
#   X=/work/main/.xfer-gdnbwd2; rm -rf $X && mkdir -p $X/.device/tests $X/bench \
#     && cp .device/device-env.sh $X/.device/ && cp <gpu_gdn exe> $X/.device/tests/ \
#     && cp -a kernels $X/ && cp bench/gdn_device_run_sio.sh $X/bench/
# run tool: command "bash .xfer-gdnbwd2/bench/gdn_device_run_sio.sh", carry [".xfer-gdnbwd2"].
set -uo pipefail
cd "$(dirname "$0")/.."
source .device/device-env.sh
t=$(ls .device/tests/gpu_gdn-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.sm --format=csv,noheader > "$OUT/gpu.txt" 2>&1
echo "== gpu_gdn, default (tc4, io-dtype S_c)"
timeout 40 "$t" --test-threads=1 --nocapture > "$OUT/parity_default.log" 2>&1; echo "rc=$?"
grep -E "^bwd |test result|panicked|FAILED" "$OUT/parity_default.log" | cut -c1-260 | head -40
echo "== backward_parity_matrix, DNNPLAN_GDN_BWD_PIECES=4"
DNNPLAN_GDN_BWD_PIECES=4 timeout 20 "$t" backward_parity --test-threads=1 --nocapture > "$OUT/parity_p4.log" 2>&1; echo "rc=$?"
grep -E "^bwd |test result|panicked|FAILED" "$OUT/parity_p4.log" | cut -c1-260 | head -20
echo "== backward_parity_matrix, DNNPLAN_GDN_BWD_TOKENS=tc3 (fp32 S_c)"
DNNPLAN_GDN_BWD_TOKENS=tc3 timeout 20 "$t" backward_parity --test-threads=1 --nocapture > "$OUT/parity_tc3.log" 2>&1; echo "rc=$?"
grep -E "^bwd |test result|panicked|FAILED" "$OUT/parity_tc3.log" | cut -c1-260 | head -20
echo "== timing, tc3 vs tc4 per stage"
DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_VARIANTS=tc3,tc4 timeout 60 "$t" timing_at_benchmark_shapes --nocapture > "$OUT/timing.log" 2>&1; echo "rc=$?"
grep -E "gdn_sm90|panicked|test result" "$OUT/timing.log"
for v in tc3 tc4; do
  echo "== timing_backward_pieces, DNNPLAN_GDN_BWD_TOKENS=$v"
  DNNPLAN_GDN_BWD_TOKENS=$v DNNPLAN_GDN_TIMING_PIECES=1 timeout 40 "$t" timing_backward_pieces --test-threads=1 --nocapture > "$OUT/timing_pieces_$v.log" 2>&1; echo "rc=$?"
  grep -E "gdn_sm90|panicked|test result" "$OUT/timing_pieces_$v.log"
done
