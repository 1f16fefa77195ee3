#!/usr/bin/env bash
# Stages, on the CPU machine, what the GDN device scripts carry, from a fresh checkout:
#   1. a pack DIR/NAME.txz (default .xfer-tests73/device75.txz, the name bench/device_peers_55b.sh
#      and bench/device_s74b.sh expect): `.device/` with the GDN test binaries (gpu_gdn,
#      gpu_gdn_pdl, gpu_gdn_bench; release, feature gpu-tests, stripped) and device-env.sh;
#      about 7 MB, where ../shared/scripts/device-pack.sh's whole `.device/` is over the 64 MiB a
#      call carries;
#   2. the peers' wheels in .xfer-final/whl (fla-core 0.6.0 and its einops, nvidia-cudnn-frontend
#      1.32.0 for CPython 3.12; the KDA path needs neither of the frontend's optional cutlass-dsl /
#      tvm-ffi dependencies), skipped when present.
# Both folders are git-ignored (.gitignore: /.xfer*/), so name them in the run tool's carry.
# Usage (from the checkout's root): bash bench/stage_gdn_pack.sh [DIR/NAME.txz]   (~3 min cold)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
pack=${1:-.xfer-tests73/device75.txz}
tests=(gpu_gdn gpu_gdn_pdl gpu_gdn_bench)

export CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=symbols
args=(--release --features gpu-tests --no-run)
for t in "${tests[@]}"; do args+=(--test "$t"); done
# The executables' paths from cargo's own report (not a glob over target/, which keeps old builds).
mapfile -t exes < <(cargo test "${args[@]}" --message-format=json 2> /dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    if m.get("reason") == "compiler-artifact" and m.get("profile", {}).get("test") and m.get("executable"):
        print(m["executable"])')
[ "${#exes[@]}" -eq "${#tests[@]}" ] || { echo "stage_gdn_pack: expected ${#tests[@]} test executables, cargo reported ${#exes[@]}" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/.device/tests" "$(dirname "$pack")"
cp "${exes[@]}" "$stage/.device/tests/"
cp ../shared/scripts/device-env.sh "$stage/.device/"
tar cJf "$pack" -C "$stage" .device
echo "pack: $pack ($(du -h "$pack" | cut -f1))"

whl=.xfer-final/whl
if ls "$whl"/fla_core-0.6.0-*.whl "$whl"/nvidia_cudnn_frontend-1.32.0-*.whl "$whl"/einops-*.whl > /dev/null 2>&1; then
  echo "wheels: $whl (already there)"
else
  mkdir -p "$whl"
  for spec in fla-core==0.6.0 einops nvidia-cudnn-frontend==1.32.0; do
    python3 -m pip download -q --no-deps --only-binary=:all: --python-version 3.12 --implementation cp \
      --platform manylinux_2_28_x86_64 --platform manylinux_2_27_x86_64 --platform manylinux_2_17_x86_64 \
      --platform manylinux2014_x86_64 -d "$whl" "$spec"
  done
  echo "wheels: $whl ($(du -sh "$whl" | cut -f1))"
fi
