#!/usr/bin/env bash
# Session 44: fla's forward autotuned on an idle GPU (a fresh Triton cache, nothing else running),
# then again on the warm cache, with ours before it: does fla's call-to-call variance in
# bench/device_full_run.sh (its autotuning runs beside our tests) move the forward ratio?
# run tool: command "bash bench/device_fla_idle44.sh", carry [".xfer-final"] (device.txz, whl/).
set -uo pipefail
cd "$(dirname "$0")/.."
tar xf .xfer-final/device.txz
source .device/device-env.sh > /dev/null 2>&1
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site .xfer-final/whl/*.whl > /dev/null 2>&1
export TRITON_CACHE_DIR=/tmp/triton-idle
t=$(ls .device/tests/gpu_gdn-* | grep -E '/gpu_gdn-[0-9a-f]+$' | head -1)
ours() {
  DNNPLAN_GDN_TIMING=1 DNNPLAN_GDN_TIMING_FWD_SLIMPREP=d,d timeout 25 "$t" timing_at_benchmark_shapes \
    --test-threads=1 --nocapture 2>&1 | grep -E "fwd slimprep|panicked" | sed -E 's/^test timing_at_benchmark_shapes \.\.\. //'
}
echo "== ours"; ours
echo "== fla fwd, fresh cache (autotunes in its warm-ups)"; s=$SECONDS
PYTHONPATH=/tmp/site timeout 125 python3 bench/gdn_peers_bench.py fla fwd 2>&1 | grep -E "^BENCH|Error" ; echo "($((SECONDS - s)) s)"
echo "== fla fwd, warm cache"; s=$SECONDS
PYTHONPATH=/tmp/site timeout 30 python3 bench/gdn_peers_bench.py fla fwd 2>&1 | grep -E "^BENCH|Error"; echo "($((SECONDS - s)) s)"
