#!/usr/bin/env bash
# The GDN benchmark of issue 8 in one device run: parity first (tests/gpu_gdn.rs, default and the
# forward scan schedules), then ours (tests/gpu_gdn_bench.rs: forward per schedule and per kernel
# with GB/s and TFLOP/s, backward, fwd+bwd), fla-core 0.6.0 and nvidia-cudnn-frontend 1.32.0's KDA
# path with the gate broadcast (bench/gdn_peers_bench.py), all in the same run, joined into
# $OUT/gdn_bench_table.md by bench/gdn_bench_table.py. Logs in $OUT (default /tmp/gdn-bench).
#
# Here (CPU machine, worktree root), stage and copy into the lead's checkout:
#   /work/wt/device-pack.sh --features gpu-tests
#   X=/work/main/.xfer-<name>; rm -rf $X && mkdir -p $X/bench $X/whl $X/.device/tests \
#     && cp .device/device-env.sh $X/.device/ && cp .device/tests/gpu_gdn-* .device/tests/gpu_gdn_bench-* $X/.device/tests/ \
#     && cp bench/gdn_bench_run.sh bench/gdn_peers_bench.py bench/gdn_bench_table.py $X/bench/ \
#     && cp /work/main/.xfer-gdn2/whl/fla_core-0.6.0-*.whl /work/main/.xfer-cudnn2/whl/*.whl $X/whl/
#   (only the two GDN test binaries: the whole .device/ is over the 64 MiB a call carries; ~24 MB)
# run tool: command "bash .xfer-<name>/bench/gdn_bench_run.sh", carry [".xfer-<name>"].
# BENCH_BUDGET_S (default 420) bounds the whole script: later steps get what is left (GDN_NCU=0 skips
# the ncu step); FLA_CAP_S
# (default 150) caps each fla step (its Triton autotuning takes ~30 s per shape forward and more
# than 60 s for one shape's forward+backward on a fresh machine). Session 4 ran it with
# BENCH_BUDGET_S=205 (the fla steps got 60 s each: fwd two shapes, fwd+bwd none).
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-/tmp/gdn-bench}
mkdir -p "$out"
start=$(date +%s)
budget=${BENCH_BUDGET_S:-420}
fla_cap=${FLA_CAP_S:-150}
left() { echo $((budget - ($(date +%s) - start))); }
# step CAP CMD...: runs CMD with timeout min(CAP, time left), skipped when < 5 s are left.
step() {
  local cap=$1; shift
  local l; l=$(left)
  [ "$l" -gt "$cap" ] && l=$cap
  if [ "$l" -lt 5 ]; then echo "skipped (budget): $*"; return 0; fi
  timeout "$l" "$@"; echo "rc=$? ($*)"
}
# shellcheck disable=SC1091
source .device/device-env.sh
t=$(ls .device/tests/gpu_gdn-* | head -1)
b=$(ls .device/tests/gpu_gdn_bench-* | head -1)
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader > "$out/gpu.txt" 2>&1

# GDN_PARITY=0 skips the parity steps (bench/device_full_run.sh has already run gpu_gdn).
if [ "${GDN_PARITY:-1}" = 1 ]; then
  echo "== parity: gpu_gdn, default schedules (forward + backward vs fp64)"
  step 60 "$t" --test-threads=1 --nocapture > "$out/parity.log" 2>&1
  grep -E "test result|panicked|FAILED" "$out/parity.log"
  echo "== parity: forward under the other scan schedules"
  for cfg in "w8 1" "w4 3" "w8 2" "v1 1"; do
    set -- $cfg
    echo "-- DNNPLAN_GDN_FWD_SCAN=$1 DNNPLAN_GDN_FWD_PIECES=$2" >> "$out/parity_sched.log"
    DNNPLAN_GDN_FWD_SCAN=$1 DNNPLAN_GDN_FWD_PIECES=$2 step 30 "$t" forward_parity state_pool batch_invariant \
      --test-threads=1 --nocapture >> "$out/parity_sched.log" 2>&1
  done
  grep -E "^-- |test result|panicked|FAILED" "$out/parity_sched.log"

fi
echo "== ours"
DNNPLAN_GDN_BENCH=1 step 160 "$b" --test-threads=1 --nocapture > "$out/ours.log" 2>&1
grep -E "^BENCH|panicked" "$out/ours.log"

echo "== peers"
if ls whl/*.whl > /dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site whl/*.whl \
    && export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
export PYTHONUNBUFFERED=1
# The KDA path first (forward, then forward+backward at (4, 8192, 16)), then fla (whose Triton
# autotuning is slow), then the other shapes: a run that hits its budget still has the headline numbers. Each line is printed as it is measured.
# GDN_PEER_STEPS (";"-separated "CAP peer mode [shapes]" items) replaces this list (e.g. a call
# that only times fla's forward+backward).
IFS=';' read -r -a peer_steps <<< "${GDN_PEER_STEPS:-60 kda fwd;45 kda fwdbwd 0;$fla_cap fla fwd;45 kda fwdbwd 1 2 3;$fla_cap fla fwdbwd 0;$fla_cap fla fwdbwd 1 2 3}"
for pm in "${peer_steps[@]}"; do
  set -- $pm
  cap=$1; shift
  step "$cap" python3 bench/gdn_peers_bench.py "$@" 2>&1 | grep -v -i "warn" | tee -a "$out/peers.log"
done

if [ "${GDN_NCU:-1}" = 1 ] && command -v ncu > /dev/null && [ "$(left)" -gt 30 ]; then
  # The default forward's prep and output scan (slim factors since session 13: gdn_fwd_slimprep*,
  # gdn_fwd_slimscan*; the full factors' gdn_fwd_prep* / scanx* where a rule or switch picks them).
  echo "== ncu: forward prep and output scan at (4, 8192, 16) (default schedule)"
  DNNPLAN_GDN_BENCH=1 DNNPLAN_GDN_BENCH_SHAPES=0 step 40 ncu --clock-control none -k regex:"gdn_fwd_(slimprep|slimscan|prep|scanx)" \
    --launch-skip 4 --launch-count 2 --section SpeedOfLight --section Occupancy --section WarpStateStats \
    --section MemoryWorkloadAnalysis "$b" --test-threads=1 > "$out/ncu.log" 2>&1
  grep -E "gdn_fwd|Duration|Throughput|Achieved Occupancy|Stall|Warp Cycles" "$out/ncu.log" | head -60
fi

python3 bench/gdn_bench_table.py "$out/ours.log" "$out/peers.log" > "$out/gdn_bench_table.md" 2>&1
cat "$out/gdn_bench_table.md"
echo "elapsed $(( $(date +%s) - start )) s"
