#!/usr/bin/env bash
# Stages, on the CPU machine, what the GDN device scripts carry, from a fresh checkout:
#   1. a pack DIR/NAME.txz (default .xfer-tests73/device75.txz, the name bench/device_peers_55b.sh
#      and bench/device_s74b.sh expect): the GDN test binaries (gpu_gdn, gpu_gdn_pdl,
#      gpu_gdn_bench; release, feature gpu-tests, stripped) and device-env.sh, staged by
#      ../shared/scripts/device-pack.sh limited to those tests (so it replaces this checkout's
#      `.device/`), then only `.device/tests` and `device-env.sh` packed: about 7 MB, where the
#      whole `.device/` is over the 64 MiB a call carries;
#   2. the peers' wheels in .xfer-final/whl (fla-core 0.6.0 and its einops, nvidia-cudnn-frontend
#      1.32.0 for CPython 3.12; the KDA path needs neither of the frontend's optional cutlass-dsl /
#      tvm-ffi dependencies), skipped when present.
# Both folders are git-ignored (.gitignore: /.xfer*/), so name them in the run tool's carry.
# Usage (from the checkout's root): bash bench/stage_gdn_pack.sh [DIR/NAME.txz]   (~3 min cold)
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
pack=${1:-.xfer-tests73/device75.txz}
tests=(gpu_gdn gpu_gdn_pdl gpu_gdn_bench)

args=(--features gpu-tests)
for t in "${tests[@]}"; do args+=(--test "$t"); done
../shared/scripts/device-pack.sh "${args[@]}" > /dev/null
n=$(find .device/tests -type f | wc -l)
[ "$n" -eq "${#tests[@]}" ] || { echo "stage_gdn_pack: expected ${#tests[@]} test executables in .device/tests, found $n" >&2; exit 1; }
mkdir -p "$(dirname "$pack")"
tar cJf "$pack" .device/device-env.sh .device/tests
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
