#!/usr/bin/env bash
# One device call that validates the GDN engine (forward and backward, tests/gpu_gdn.rs against
# the fp64 reference), times it at the issue's shapes, times fla-core on the same shapes in the
# same run, and runs compute-sanitizer over the backward tests.
#
# Here (CPU machine, worktree root):
#   /work/wt/device-pack.sh --features gpu-tests           # stages .device/ (tests incl. gpu_gdn)
#   X=/work/main/.xfer-gdn2; rm -rf $X && mkdir -p $X/whl $X/bench && cp -a .device kernels $X/ \
#     && cp bench/gdn_device_run.sh bench/gdn_peers_bench.py bench/gdn_nvrtc_check.py $X/bench/
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#       --implementation cp --platform manylinux2014_x86_64 -d $X/whl fla-core==0.6.0
# run tool: command "bash .xfer-gdn2/bench/gdn_device_run.sh", carry [".xfer-gdn2"]. Logs in $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
source .device/device-env.sh
t=$(ls .device/tests/gpu_gdn-*)
echo "== NVRTC compiles gdn_fwd and gdn_bwd (sm_90a, sm_100a, sm_80)"
NVRTC_LIB=$CUDA_HOME/lib64/libnvrtc.so.13 timeout 120 python3 bench/gdn_nvrtc_check.py 2>&1 | cut -c1-200 | tee "$OUT/nvrtc.log"
echo "== engine tests (forward + backward vs fp64)"
timeout 120 "$t" --test-threads=1 --nocapture > "$OUT/gpu_gdn.log" 2>&1; echo "rc=$?"
grep -E "rms|host time|test result|panicked|over|non-finite|FAILED" "$OUT/gpu_gdn.log" | head -60
echo "== engine timing"
DNNPLAN_GDN_TIMING=1 timeout 100 "$t" timing_at_benchmark_shapes --nocapture > "$OUT/timing.log" 2>&1; echo "rc=$?"
grep -E "timing|panicked|test result" "$OUT/timing.log"
echo "== compute-sanitizer (backward parity tests)"
timeout 80 compute-sanitizer --tool memcheck --print-limit 5 "$t" backward_parity --test-threads=1 > "$OUT/memcheck.log" 2>&1; echo "rc=$?"
grep -E "ERROR SUMMARY|test result|Invalid|panicked" "$OUT/memcheck.log" | head -10
if ls whl/*.whl >/dev/null 2>&1; then
  echo "== fla-core 0.6.0 (same run)"
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site whl/*.whl \
    && for mode in fwd fwdbwd; do PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 100 python3 bench/gdn_peers_bench.py fla $mode 2>&1; done \
    | grep -v Warning | tee "$OUT/fla.log"
fi
