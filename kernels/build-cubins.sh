#!/usr/bin/env bash
# Rebuild dnnplan's bundled cubins (kernels/sm_90a/*.cubin) and kernels/manifest.toml with the
# pinned CUDA 13.0 nvcc from Python wheels (no system toolkit, no GPU needed).
#
# Usage: kernels/build-cubins.sh [--check] [VENV]
#   --check  rebuild into a temporary directory; exit 1 unless the cubins and the manifest are
#            byte-identical to the checked-in ones (CI runs this).
#   VENV     the venv holding the pinned nvcc (default $DNNPLAN_NVCC_VENV, else
#            ~/.cache/dnnplan-nvcc); installed there by shared/scripts/install-nvcc.sh when absent.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
check=()
venv="${DNNPLAN_NVCC_VENV:-$HOME/.cache/dnnplan-nvcc}"
for arg in "$@"; do
  case "$arg" in
    --check) check=(--check) ;;
    -h|--help) sed -n '2,10p' "$0"; exit 0 ;;
    -*) echo "build-cubins: unknown option $arg" >&2; exit 2 ;;
    *) venv="$arg" ;;
  esac
done
installer=""
for cand in "${DNNPLAN_INSTALL_NVCC:-}" "$here/../../shared/scripts/install-nvcc.sh" \
            "$here/../shared/scripts/install-nvcc.sh" /work/shared/scripts/install-nvcc.sh; do
  if [ -n "$cand" ] && [ -f "$cand" ]; then installer="$cand"; break; fi
done
[ -n "$installer" ] || { echo "build-cubins: shared/scripts/install-nvcc.sh not found (set DNNPLAN_INSTALL_NVCC)" >&2; exit 2; }
nvcc=$(bash "$installer" "$venv" | tail -1)
python="$venv/bin/python3"
# blake3 for the manifest's hashes (the same function the crate uses, from its Python binding).
"$python" -c "import blake3" 2>/dev/null || "$venv/bin/pip" install -q --disable-pip-version-check "blake3==1.0.11"
exec "$python" "$here/tools/build_cubins.py" --nvcc "$nvcc" "${check[@]}"
