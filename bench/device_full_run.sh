#!/usr/bin/env bash
# One device call that validates a staged checkout end to end on the H200 and runs the benchmarks
# that fit, each step bounded so the call ends inside its limit:
#   1. every staged test binary (.device/run-tests.sh: CPU suites, C ABI, gpu_cuda, gpu_cudnn,
#      gpu_gdn, ...), one summary line per binary;
#   2. optional extra steps given in $EXTRA_STEPS (a file of shell lines, one step per line);
#   3. the PyTorch package: build the C++ launcher, GPU tests, torch boundary benchmark;
#   4. the GDN benchmark: ours per kernel, the cuDNN frontend's KDA path (and fla-core if time is left).
#
# Here (CPU machine, repo root): device-pack.sh --features gpu-tests, then
#   mkdir -p .xfer-final && tar czf .xfer-final/device.tgz .device (or tar cJf .xfer-final/device.txz .device when the tree plus the transfer would exceed 64 MiB) && cp <wheels> .xfer-final/whl/
# run tool: command "bash bench/device_full_run.sh", carry [".xfer-final"].
# Budget: FULL_RUN_BUDGET_S (default 540) for the whole script; TORCH=0 skips step 3, GDN_BENCH=0 step 4. Logs: one gzipped tarball
# $OUT/logs.tgz (refreshed after every step, so a run cut short still returns what it did) and
# $OUT/summary.txt.
set -uo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
out=${OUT:-/tmp/device-full-out}
mkdir -p "$out"
logs=/tmp/device-full-logs
rm -rf "$logs" && mkdir -p "$logs"
start=$(date +%s)
budget=${FULL_RUN_BUDGET_S:-540}
left() { echo $((budget - ($(date +%s) - start))); }
summary() { echo "$*" | tee -a "$out/summary.txt"; }
save() { tar czf "$out/logs.tgz" -C "$logs" . 2>/dev/null; }
# run_step NAME CAP CMD...: CMD with timeout min(CAP, time left), output in $logs/NAME.log.
run_step() {
  local name=$1 cap=$2; shift 2
  local l; l=$(left)
  [ "$l" -gt "$cap" ] && l=$cap
  if [ "$l" -lt 10 ]; then summary "SKIPPED (budget) $name"; return 0; fi
  local t0; t0=$(date +%s)
  timeout "$l" "$@" > "$logs/$name.log" 2>&1
  local rc=$?
  summary "== $name: rc=$rc in $(( $(date +%s) - t0 )) s"
  save
  return $rc
}

for a in .xfer-final/device.tgz .xfer-final/device.txz; do [ -f "$a" ] && { tar xf "$a" 2>/dev/null || python3 -c "import sys, tarfile; tarfile.open(sys.argv[1]).extractall()" "$a"; }; done
[ -d .xfer-final/whl ] && { rm -rf whl; cp -r .xfer-final/whl whl; }
# shellcheck disable=SC1091
source .device/device-env.sh > "$logs/env.log" 2>&1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader >> "$logs/env.log" 2>&1
summary "device: $(tail -1 "$logs/env.log")"

# fla-core's Triton autotuning takes ~30 s per shape forward and over 60 s per shape forward+backward
# on a fresh machine. With FLA_WARM=1 (default) it runs in the background while the tests run: one
# process per benchmark shape, all sharing one Triton cache (fla caches its autotuning results
# there), so the GDN benchmark's timed fla steps later find compiled kernels and tuned configs.
# The warm processes' own timings (taken while the GPU is shared) are not used.
export TRITON_CACHE_DIR=/tmp/triton-cache
warm_pids=()
if [ "${FLA_WARM:-1}" = 1 ] && [ "${GDN_BENCH:-1}" = 1 ] && ls whl/fla_core-*.whl > /dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site whl/*.whl \
    > "$logs/fla_warm_install.log" 2>&1
  for i in 0 1 2 3; do
    PYTHONPATH=/tmp/site:${PYTHONPATH:-} timeout "${FLA_WARM_CAP_S:-240}" \
      python3 bench/gdn_peers_bench.py fla fwdbwd "$i" > "$logs/fla_warm_$i.log" 2>&1 &
    warm_pids+=($!)
  done
  summary "fla warm-up started in the background (${#warm_pids[@]} processes)"
fi

# The robustness walks ask cuDNN's heuristics for every mutated graph on the GPU machine (~80 s
# for json_robustness's single-thread walk at 4 cases per seed, session 47): 2 cases per seed
# here, so every binary fits the step's cap.
DNNPLAN_JSON_ROBUSTNESS_CASES=${DNNPLAN_JSON_ROBUSTNESS_CASES:-2} \
  run_step tests "${TESTS_CAP_S:-260}" .device/run-tests.sh
grep -E "^== |test result|FAILED|panicked" "$logs/tests.log" | grep -B1 -E "test result|FAILED|panicked" \
  | grep -vE "^--$" > "$logs/tests.summary"
grep -E "FAILED|panicked" "$logs/tests.log" | head -20 | tee -a "$out/summary.txt"
summary "test binaries: $(grep -c 'test result: ok' "$logs/tests.log") ok, $(grep -c 'test result: FAILED' "$logs/tests.log") failed"
for b in gpu_cuda gpu_cudnn gpu_cudnn_perf gpu_gdn; do
  summary "$b: $(grep -A400 "^== $b-" "$logs/tests.log" | grep -m1 'test result')"
done

if [ -n "${EXTRA_STEPS:-}" ] && [ -f "$EXTRA_STEPS" ]; then
  n=0
  while IFS= read -r line; do
    [ -z "$line" ] && continue
    case "$line" in \#*) continue ;; esac
    n=$((n + 1))
    run_step "extra$n" "${EXTRA_CAP_S:-90}" bash -c "$line"
    summary "   extra$n: $line"
    grep -vE "^(running|test .* ok$)" "$logs/extra$n.log" | head -${EXTRA_LINES:-60} | tee -a "$out/summary.txt"
  done < "$EXTRA_STEPS"
fi

if [ "${TORCH:-1}" = 1 ]; then
  OUT=$logs/torch run_step torch "${TORCH_CAP_S:-180}" python/run_gpu_tests.sh
  grep -E "passed|failed" "$logs/torch/torch_tests.log" 2>/dev/null | tail -2 | tee -a "$out/summary.txt"
  grep -A30 -E "added over|over the library" "$logs/torch/torch_boundary.log" 2>/dev/null | head -40 \
    | tee -a "$out/summary.txt"
  save
fi

if [ "${#warm_pids[@]}" -gt 0 ]; then
  t0=$(date +%s)
  wait "${warm_pids[@]}"
  summary "fla warm-up done ($(( $(date +%s) - t0 )) s waited): $(cat "$logs"/fla_warm_*.log | grep -cE '^BENCH fla fwdbwd [^ ]+ [0-9.]+ ') of 4 shapes ran"
fi
l=$(left)
if [ "${GDN_BENCH:-1}" = 1 ] && [ "$l" -gt 40 ]; then
  OUT=$logs/gdn GDN_PARITY=${GDN_PARITY:-0} BENCH_BUDGET_S=$((l - 10)) run_step gdn "$l" bash bench/gdn_bench_run.sh
  cat "$logs/gdn/gdn_bench_table.md" 2>/dev/null | tee -a "$out/summary.txt"
fi
save
summary "elapsed $(( $(date +%s) - start )) s"
