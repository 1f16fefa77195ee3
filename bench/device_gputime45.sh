#!/usr/bin/env bash
# Session 45: how much of the peers' measured time is GPU work (bench/gdn_peers_gpu_time.py), on
# an idle GPU, with ours in the same call. MODE=fwd (default) or fwdbwd.
# run tool: command "MODE=fwd bash bench/device_gputime45.sh", carry [".xfer-final"] (device.txz, whl/).
set -uo pipefail
cd "$(dirname "$0")/.."
mode=${MODE:-fwd}
out=${OUT:-/tmp/out}
mkdir -p "$out"
tar xf .xfer-final/device.txz
source .device/device-env.sh > /dev/null 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .xfer-final/whl/*.whl > /dev/null 2>&1
export TRITON_CACHE_DIR=/tmp/triton-gt PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,temperature.gpu,power.draw --format=csv,noheader
t=$(ls .device/tests/gpu_gdn-* | grep -E '/gpu_gdn-[0-9a-f]+$' | head -1)
b=$(ls .device/tests/gpu_gdn_bench-* | grep -E '/gpu_gdn_bench-[0-9a-f]+$' | head -1)
ours() {
  if [ "$mode" = fwd ]; then
    DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_FWD_SLIMPREP=d,d timeout 30 "$t" timing_at_benchmark_shapes \
      --test-threads=1 --nocapture 2>&1 | grep -E "fwd slimprep|panicked" | sed -E 's/^test timing_at_benchmark_shapes \.\.\. //'
  else
    DNNPLAN_GDN_BENCH=1 timeout "${OURS_CAP:-150}" "$b" --test-threads=1 --nocapture > "$out/ours_bench.log" 2>&1
    grep -E "^BENCH|panicked" "$out/ours_bench.log"
  fi
}
peer() {  # cap peer
  local s=$SECONDS
  PYTHONPATH=/tmp/site:bench timeout "$1" python3 bench/gdn_peers_gpu_time.py "$2" "$mode" 2>&1 | grep -v -i warn | tee "$out/$2_$mode.log" | grep -E "^GPUTIME|^GRAPH|Error"
  echo "($2 $mode: $((SECONDS - s)) s)"
}
echo "== ours ($mode)"; ours
echo "== kda ($mode)"; peer "${KDA_CAP:-90}" kda
echo "== fla ($mode, fresh Triton cache: autotunes in its warm-ups)"; peer "${FLA_CAP:-300}" fla
echo "== ours again ($mode)"; ours
