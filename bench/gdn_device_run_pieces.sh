#!/usr/bin/env bash
# One device call for the backward's piece chain (helper gdnbwdscan, issue 8): gpu_gdn parity
# (forward + backward vs fp64) with the default schedule, then the backward matrix with the piece
# chain forced (DNNPLAN_GDN_BWD_PIECES=3 and 8; run 1: 4 and 8), then the backward timed with and without pieces
# (timing_backward_pieces), optionally compute-sanitizer over the backward matrix with pieces.
#
# Here (CPU machine, worktree root):
#   /work/wt/device-pack.sh --features gpu-tests
#   X=/work/main/.xfer-gdnbwdscan; rm -rf $X && mkdir -p $X/.device/tests $X/bench \
#     && cp .device/device-env.sh $X/.device/ && cp .device/tests/gpu_gdn-* $X/.device/tests/ \
#     && cp -a kernels $X/ && cp bench/gdn_device_run_pieces.sh $X/bench/
# run tool: command "bash .xfer-gdnbwdscan/bench/gdn_device_run_pieces.sh", carry [".xfer-gdnbwdscan"].
# Logs in $OUT. MEMCHECK=1 adds the sanitizer step; PIECES_FORCED="4 8" the forced piece counts.
set -uo pipefail
cd "$(dirname "$0")/.."
source .device/device-env.sh
t=$(ls .device/tests/gpu_gdn-* | head -1)
echo "== gpu_gdn, default schedules"
timeout 30 "$t" --test-threads=1 --nocapture > "$OUT/parity_default.log" 2>&1; echo "rc=$?"
grep -E "^bwd |rms|test result|panicked|FAILED" "$OUT/parity_default.log" | cut -c1-260 | head -40
for p in ${PIECES_FORCED:-3 8}; do
  echo "== backward_parity_matrix, DNNPLAN_GDN_BWD_PIECES=$p"
  DNNPLAN_GDN_BWD_PIECES=$p timeout 15 "$t" backward_parity --test-threads=1 --nocapture > "$OUT/parity_p$p.log" 2>&1; echo "rc=$?"
  grep -E "^bwd |test result|panicked|FAILED" "$OUT/parity_p$p.log" | cut -c1-260 | head -20
done
echo "== timing, backward with and without pieces"
DNNPLAN_GDN_TIMING_PIECES=1 timeout ${TIMING_S:-40} "$t" timing_backward_pieces --test-threads=1 --nocapture > "$OUT/timing_pieces.log" 2>&1; echo "rc=$?"
grep -E "gdn_sm90|panicked|test result" "$OUT/timing_pieces.log"
if [ "${MEMCHECK:-0}" = 1 ]; then
  echo "== compute-sanitizer memcheck, backward matrix, DNNPLAN_GDN_BWD_PIECES=3"
  DNNPLAN_GDN_BWD_PIECES=3 timeout 60 compute-sanitizer --tool memcheck --print-limit 5 "$t" backward_parity --test-threads=1 > "$OUT/memcheck.log" 2>&1; echo "rc=$?"
  grep -E "ERROR SUMMARY|test result|Invalid|panicked" "$OUT/memcheck.log" | head -10
fi
