#!/usr/bin/env bash
# One device call that validates and times the GDN forward (for the next session with device time).
#
# Here (CPU machine, worktree root):
#   /work/wt/device-pack.sh --features gpu-tests          # stages .device/ (tests incl. gpu_gdn)
#   X=/work/main/.xfer-gdn; rm -rf $X && mkdir -p $X/whl && cp -a .device kernels bench $X/
#   python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 \
#       --implementation cp --platform manylinux2014_x86_64 -d $X/whl fla-core==0.6.0
# run tool: command "bash .xfer-gdn/bench/gdn_device_run.sh", carry [".xfer-gdn"].
#
# There: builds the standalone harness from the bundled module's source, runs its fp64-checked
# correctness matrix and timings, the end-to-end engine tests (tests/gpu_gdn.rs) and fla-core's
# forward on the same shapes. Logs go to $OUT.
set -uo pipefail
cd "$(dirname "$0")/.."
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a -Ikernels/include \
    -o /tmp/gdn_fwd_harness bench/gdn_fwd_harness.cu 2>&1 | grep -v ptxas | tail -5
timeout 300 /tmp/gdn_fwd_harness 2>&1 | tee "$OUT/harness.log"
if [ -d .device ]; then
  source .device/device-env.sh
  for t in .device/tests/gpu_gdn-*; do timeout 300 "$t" --test-threads=1 --nocapture 2>&1 | tee "$OUT/gpu_gdn.log"; done
fi
if ls whl/*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/site whl/*.whl \
    && PYTHONPATH=/tmp/site PYTHONUNBUFFERED=1 timeout 200 python3 bench/gdn_fla_bench.py 2>&1 \
    | grep -v Warning | tee "$OUT/fla.log"
fi
