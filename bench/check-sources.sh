#!/usr/bin/env bash
# Compile-checks every benchmark source against today's kernel headers, so a kernel change that
# removes or renames what a bench uses fails CI instead of the next device call (session 63 found
# chain_ksplit_bench.cu and gdn_chain_c_bench.cu broken since session 59's a91c9f1).
#   bench/*.cu   nvcc -c for sm_90a with the pinned CUDA 13.0 nvcc (device code through ptxas);
#   bench/*.cpp  g++ -fsyntax-only (the CPU emulations; cudnn_cpp_reference.cpp needs cuDNN's
#                headers and is skipped).
# No GPU needed. Usage: bench/check-sources.sh [VENV] (the venv holding the pinned nvcc, as
# kernels/build-cubins.sh takes it; installed there when absent). Exit 1 if any source fails; each
# failure's first errors are printed.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
venv="${1:-${DNNPLAN_NVCC_VENV:-$HOME/.cache/dnnplan-nvcc}}"
installer=""
for cand in "${DNNPLAN_INSTALL_NVCC:-}" "$root/../shared/scripts/install-nvcc.sh" /work/shared/scripts/install-nvcc.sh; do
  if [ -n "$cand" ] && [ -f "$cand" ]; then installer="$cand"; break; fi
done
[ -n "$installer" ] || { echo "check-sources: shared/scripts/install-nvcc.sh not found (set DNNPLAN_INSTALL_NVCC)" >&2; exit 2; }
nvcc=$(bash "$installer" "$venv" | tail -1)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

# check NAME CMD...: runs CMD with its output in $out/NAME.log; prints `ok NAME` or `FAIL NAME`.
check() {
  local name=$1
  shift
  if "$@" > "$out/$name.log" 2>&1; then echo "ok   $name"; else echo "FAIL $name"; fi
}
export -f check
export out nvcc
jobs=$(nproc 2>/dev/null || echo 2)
{
  for f in bench/*.cu; do
    printf '%s\0' "check $(basename "$f") \"\$nvcc\" -std=c++17 -O1 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench -c $f -o \$out/$(basename "$f").o"
  done
  for f in bench/*.cpp; do
    [ "$(basename "$f")" = cudnn_cpp_reference.cpp ] && continue
    printf '%s\0' "check $(basename "$f") g++ -std=c++20 -fsyntax-only -fno-strict-aliasing -pthread -Ikernels/include -Ibench $f"
  done
} | xargs -0 -n1 -P "$jobs" bash -c | sort -k2 | tee "$out/summary"
if grep -q '^FAIL' "$out/summary"; then
  for name in $(awk '/^FAIL/ {print $2}' "$out/summary"); do
    echo "--- $name"
    grep -m5 -E "error" "$out/$name.log" || tail -5 "$out/$name.log"
  done
  exit 1
fi
echo "check-sources: every bench source compiles ($(wc -l < "$out/summary") files)"
