#!/usr/bin/env bash
# The cuDNN benchmark, every side in one device session:
#   * dnnplan: tests/gpu_cudnn.rs `bench_cudnn_backend` (through the C ABI, every execution path)
#     and tests/gpu_cudnn_perf.rs `bench_cudnn_creation` (plan-list creation cold, from the
#     heuristics cache's disk tier and cached in the process, and where a heuristics query's time
#     goes, per backend call), then `bench_cudnn_creation_fresh_process` twice over one fresh disk
#     tier (a process that finds it empty, then a fresh process that finds every graph on disk);
#   * the reference's C++ frontend: bench/cudnn_cpp_reference.cpp, compiled here with g++ against
#     the nvidia-cudnn-frontend 1.32.0 wheel's header-only C++ API (include/cudnn_frontend.h), the
#     cuDNN headers and libcudnn.so.9 of the machine's PyTorch wheel, and the CUDA toolkit;
#   * the reference's Python API: bench/cudnn_reference.py;
# then the joined tables (bench/cudnn_table.py). Writes bench_dnnplan.log, bench_creation.log,
# bench_cpp.log, bench_reference.log, cpp_build.log and cudnn_bench_table.md to $OUT (default
# /tmp/cudnn-bench). With RUN_TESTS=1 the staged gpu_cudnn_perf tests (correctness, not timed)
# run first, while the C++ reference compiles (nothing is timed while it compiles). With
# SKIP_EXEC_BENCH=1 the dnnplan kernel/execute benchmark (bench_cudnn_backend) is skipped (creation
# only; the references still run whole).
#
# Run from a folder holding .device/ (staged here with
# `/work/wt/device-pack.sh --features gpu-tests`), bench/ (this script, cudnn_cpp_reference.cpp,
# cudnn_reference.py, cudnn_table.py) and whl/ with nvidia_cudnn_frontend-1.32.0-*.whl (unpacked
# for the C++ headers, installed into /tmp/site for the Python side; the device image lacks it):
#   bench/run_cudnn_bench.sh
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-/tmp/cudnn-bench}
mkdir -p "$out"
# shellcheck disable=SC1091
source .device/device-env.sh
whl=$(ls whl/nvidia_cudnn_frontend-*.whl 2>/dev/null | head -1)

# -- the C++ reference: unpack the frontend wheel, compile (in the background)
cpp_bin=/tmp/cudnn_cpp_reference
cpp_pid=
if [ -n "$whl" ]; then
  rm -rf /tmp/fe-whl && python3 -m zipfile -e "$whl" /tmp/fe-whl
  if [ -f /tmp/fe-whl/include/cudnn_frontend.h ]; then
    cuda_inc="$CUDA_HOME/include"
    [ -f "$cuda_inc/cuda_runtime.h" ] || cuda_inc="$CUDA_HOME/targets/x86_64-linux/include"
    (
      set -x
      g++ -O2 -std=c++17 -pipe -I/tmp/fe-whl/include -I"$CUDNN_INCLUDE_DIR" -I"$cuda_inc" \
        bench/cudnn_cpp_reference.cpp -o "$cpp_bin" \
        -L"$DNNPLAN_CUDNN_LIB_DIR" -l:libcudnn.so.9 -L"$CUDA_HOME/lib64" -lcudart -lnvrtc \
        -Wl,-rpath,"$DNNPLAN_CUDNN_LIB_DIR" -Wl,-rpath,"$CUDA_HOME/lib64" -ldl -lpthread
    ) > "$out/cpp_build.log" 2>&1 &
    cpp_pid=$!
  else
    echo "the frontend wheel has no include/cudnn_frontend.h" | tee "$out/cpp_build.log"
  fi
else
  echo "no frontend wheel under whl/" | tee "$out/cpp_build.log"
fi

perf=$(ls .device/tests/gpu_cudnn_perf-* 2>/dev/null | head -1)
bin=$(ls .device/tests/gpu_cudnn-* 2>/dev/null | head -1)
if [ "${RUN_TESTS:-0}" = 1 ] && [ -n "$perf" ]; then
  echo "== gpu_cudnn_perf tests ($perf), execution paths vs plain ($bin)"
  "$perf" --test-threads=1 2>&1 | tee "$out/gpu_cudnn_perf_tests.log"
  [ -n "$bin" ] && "$bin" --test-threads=1 --exact execution_paths_match_the_plain_path 2>&1 \
    | tee -a "$out/gpu_cudnn_perf_tests.log"
fi
if [ -n "$cpp_pid" ]; then
  t0=$(date +%s)
  wait "$cpp_pid" && echo "C++ reference built (waited $(( $(date +%s) - t0 )) s)" \
    || { echo "C++ reference build failed:"; tail -30 "$out/cpp_build.log"; }
fi

if [ -z "$bin" ]; then
  echo "no staged gpu_cudnn test binary under .device/tests (stage with --features gpu-tests)" >&2
  exit 2
fi
if [ "${SKIP_EXEC_BENCH:-0}" = 1 ]; then
  echo "== dnnplan side: bench_cudnn_backend skipped (SKIP_EXEC_BENCH=1)" | tee "$out/bench_dnnplan.log"
else
  echo "== dnnplan side ($bin)"
  "$bin" --ignored --nocapture --test-threads=1 --exact bench_cudnn_backend 2>&1 | tee "$out/bench_dnnplan.log"
fi
if [ -n "$perf" ]; then
  echo "== dnnplan plan-list creation ($perf)"
  "$perf" --ignored --nocapture --test-threads=1 --exact bench_cudnn_creation 2>&1 | tee "$out/bench_creation.log"
  fresh_dir=/tmp/dnnplan-bench-fresh-heur-$$
  rm -rf "$fresh_dir"
  for pass in "empty disk tier" "disk tier warm, fresh process"; do
    echo "== dnnplan creation in a fresh process: $pass"
    echo "DNNP-FRESH-PASS | $pass" >> "$out/bench_creation.log"
    DNNPLAN_CUDNN_HEUR_DISK_CACHE=$fresh_dir "$perf" --ignored --nocapture --test-threads=1 \
      --exact bench_cudnn_creation_fresh_process 2>&1 | tee -a "$out/bench_creation.log"
  done
  rm -rf "$fresh_dir"
fi
echo "== reference side, C++ frontend"
if [ -x "$cpp_bin" ]; then
  "$cpp_bin" 2>&1 | tee "$out/bench_cpp.log"
else
  echo "CPP | not built (see cpp_build.log)" | tee "$out/bench_cpp.log"
fi
echo "== reference side, Python API (nvidia-cudnn-frontend)"
if [ -n "$whl" ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site "$whl" && export PYTHONPATH=/tmp/site:${PYTHONPATH:-}
fi
PYTHONUNBUFFERED=1 python3 bench/cudnn_reference.py 2>&1 | tee "$out/bench_reference.log"
echo "== table"
cat "$out/bench_dnnplan.log" "$out"/bench_creation.log "$out/bench_cpp.log" "$out/bench_reference.log" \
  > /tmp/cudnn-bench-all.log 2>/dev/null
python3 bench/cudnn_table.py /tmp/cudnn-bench-all.log | tee "$out/cudnn_bench_table.md"
