#!/usr/bin/env bash
# Runs dnnplan_torch's tests on the GPU machine (H200, PyTorch 2.11 there), then the torch
# boundary benchmark; results go to $OUT (or ./.torch-gpu-out).
#
#   python/run_gpu_tests.sh [--no-bench] [extra pytest args, e.g. -k sdpa]
#
# Library: $DNNPLAN_LIBRARY, else the staged .device/lib/libdnnplan.so (device-pack.sh) found
# next to this checkout, in the current directory, or in a .xfer-*/ folder of it. The staged
# .device/device-env.sh is sourced when present (cuDNN dir of torch's wheel, CUDA paths).
# Gpu-marked tests fail (not skip) when torch or CUDA is missing (DNNPLAN_REQUIRE_GPU=1).
# The C++ launcher (dnnplan_torch._C) is built in place first (python/src/dnnplan_torch/) unless
# DNNPLAN_TORCH_CPP=0; the tests then require it (DNNPLAN_REQUIRE_CPP=1). The header comes from
# $DNNPLAN_INCLUDE, else include/ of this checkout or of the current directory.
# Files written to $OUT: torch_build.log, torch_tests.log, torch_tests.xml (JUnit),
# torch_boundary.log/.json.
set -uo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
root=$(cd "$here/.." && pwd)
out=${OUT:-$PWD/.torch-gpu-out}
mkdir -p "$out"
bench=1
if [ "${1:-}" = "--no-bench" ]; then bench=0; shift; fi

if [ -z "${DNNPLAN_LIBRARY:-}" ]; then
  for c in "$root/.device/lib/libdnnplan.so" "$PWD/.device/lib/libdnnplan.so" \
           "$root"/.xfer-*/.device/lib/libdnnplan.so "$PWD"/.xfer-*/.device/lib/libdnnplan.so \
           "$root/target/release/libdnnplan.so"; do
    if [ -f "$c" ]; then export DNNPLAN_LIBRARY="$c"; break; fi
  done
fi
if [ -z "${DNNPLAN_LIBRARY:-}" ] || [ ! -f "$DNNPLAN_LIBRARY" ]; then
  echo "FAIL run_gpu_tests: libdnnplan.so not found (stage .device with device-pack.sh, or set DNNPLAN_LIBRARY)" | tee "$out/torch_tests.log"
  exit 2
fi
env_sh="$(dirname "$DNNPLAN_LIBRARY")/../device-env.sh"
# shellcheck disable=SC1090
if [ -f "$env_sh" ]; then source "$env_sh"; fi
# Optional extra wheels (e.g. nvidia-cudnn-frontend for the benchmark's reference column):
# any *.whl in $DNNPLAN_TORCH_WHEELS, else .whl/ next to this checkout or in the current dir,
# else a .xfer-*/whl/ folder of the current dir (the first folder holding wheels wins).
for w in "${DNNPLAN_TORCH_WHEELS:-}" "$root/.whl" "$PWD/.whl" "$PWD"/.xfer-*/whl; do
  if [ -n "$w" ] && ls "$w"/*.whl >/dev/null 2>&1; then
    if python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
         --target /tmp/dnnplan-torch-site "$w"/*.whl; then
      export PYTHONPATH="/tmp/dnnplan-torch-site${PYTHONPATH:+:$PYTHONPATH}"
      echo "run_gpu_tests: installed wheels from $w"
    else
      echo "run_gpu_tests: could not install wheels from $w (continuing without them)"
    fi
    break
  fi
done
export DNNPLAN_REQUIRE_GPU=1 PYTHONUNBUFFERED=1 PYTHONDONTWRITEBYTECODE=1
echo "run_gpu_tests: library $DNNPLAN_LIBRARY" | tee "$out/torch_tests.log"
python3 - <<'PY' 2>&1 | tee -a "$out/torch_tests.log"
import torch
print(f"run_gpu_tests: torch {torch.__version__}, cuda {torch.version.cuda}, "
      f"device {torch.cuda.get_device_name(0) if torch.cuda.is_available() else 'NONE'}, "
      f"torch cuDNN {torch.backends.cudnn.version()}")
PY

if [ "${DNNPLAN_TORCH_CPP:-1}" != "0" ]; then
  export DNNPLAN_REQUIRE_CPP=1
  if [ -z "${DNNPLAN_INCLUDE:-}" ]; then
    for c in "$root/include" "$PWD/include"; do
      if [ -f "$c/dnnplan.h" ]; then export DNNPLAN_INCLUDE="$c"; break; fi
    done
  fi
  bstart=$(date +%s)
  if (cd "$here" && MAX_JOBS=${MAX_JOBS:-4} python3 setup.py build_ext --inplace) \
       >"$out/torch_build.log" 2>&1; then
    echo "run_gpu_tests: built the C++ launcher in $(( $(date +%s) - bstart )) s" | tee -a "$out/torch_tests.log"
  else
    echo "run_gpu_tests: building the C++ launcher FAILED (torch_build.log):" | tee -a "$out/torch_tests.log"
    tail -n 30 "$out/torch_build.log" | tee -a "$out/torch_tests.log"
  fi
fi

timeout_flag=()
if python3 -c "import pytest_timeout" 2>/dev/null; then timeout_flag=(--timeout=150); fi
start=$(date +%s)
python3 -m pytest "$here/tests" -v -rfEsx -p no:cacheprovider --durations=15 "${timeout_flag[@]}" \
  --junitxml="$out/torch_tests.xml" "$@" 2>&1 | tee -a "$out/torch_tests.log"
rc=${PIPESTATUS[0]}
echo "run_gpu_tests: pytest exit $rc after $(( $(date +%s) - start )) s" | tee -a "$out/torch_tests.log"

if [ "$bench" = 1 ]; then
  timeout 240 python3 "$root/bench/torch_boundary.py" --json "$out/torch_boundary.json" 2>&1 \
    | tee "$out/torch_boundary.log" || echo "run_gpu_tests: benchmark failed (see torch_boundary.log)"
fi
exit "$rc"
