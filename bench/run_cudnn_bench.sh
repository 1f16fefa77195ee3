#!/usr/bin/env bash
# The cuDNN benchmark, both sides in one device session: dnnplan (tests/gpu_cudnn.rs
# `bench_cudnn_backend`, through the C ABI, every execution path) and the reference
# (bench/cudnn_reference.py, nvidia-cudnn-frontend 1.32.0's Python API), then the joined table
# (bench/cudnn_table.py). Writes bench_dnnplan.log, bench_reference.log and cudnn_bench_table.md
# to $OUT (default /tmp/cudnn-bench).
#
# Run from a folder holding .device/ (staged here with
# `/work/wt/device-pack.sh --features gpu-tests`), bench/ (this script, cudnn_reference.py,
# cudnn_table.py) and optionally whl/ with nvidia_cudnn_frontend-1.32.0-*.whl (installed into
# /tmp/site when present; the device image lacks the frontend):
#   bench/run_cudnn_bench.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-/tmp/cudnn-bench}
mkdir -p "$out"
# shellcheck disable=SC1091
source .device/device-env.sh
bin=$(ls .device/tests/gpu_cudnn-* 2>/dev/null | head -1)
if [ -z "$bin" ]; then
  echo "no staged gpu_cudnn test binary under .device/tests (stage with --features gpu-tests)" >&2
  exit 2
fi
echo "== dnnplan side ($bin)"
"$bin" --ignored --nocapture --test-threads=1 --exact bench_cudnn_backend 2>&1 | tee "$out/bench_dnnplan.log"
echo "== reference side (nvidia-cudnn-frontend)"
if ls whl/nvidia_cudnn_frontend-*.whl >/dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site whl/nvidia_cudnn_frontend-*.whl && export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
PYTHONUNBUFFERED=1 python3 bench/cudnn_reference.py 2>&1 | tee "$out/bench_reference.log"
echo "== table"
cat "$out/bench_dnnplan.log" "$out/bench_reference.log" > /tmp/cudnn-bench-both.log
python3 bench/cudnn_table.py /tmp/cudnn-bench-both.log | tee "$out/cudnn_bench_table.md"
