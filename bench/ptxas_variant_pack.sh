#!/usr/bin/env bash
# A device test pack of this tree whose bundled cubins are compiled with extra ptxas flags (a
# screen of code-generation choices that keep the numerics: register allocation and scheduling).
# Session 72 saw w8c move +0.9..+1.2 % when only its parameter bank's offsets changed, so ptxas's
# choices matter at this level; `--register-usage-level` 0-3 / 4-5 (the default) / 6-10 give three
# different codes for fused16_w8c and b2c (cuobjdump: w8c 5,560 / 5,360 / 5,360 instructions at
# 150 / 151 / 159 registers).
# Usage (repository root, CPU machine): bench/ptxas_variant_pack.sh "PTXAS FLAGS" NAME [DIR]
#   e.g. bench/ptxas_variant_pack.sh "--register-usage-level=10" device74_l10 .xfer-tests72
# Builds in a temporary git worktree of HEAD (this tree is left alone) with CARGO_TARGET_DIR shared,
# packs gpu_gdn, gpu_gdn_pdl and gpu_gdn_bench (release, stripped) with device-env.sh as
# DIR/NAME.txz (DIR default .xfer-tests72), the dev_pack layout of bench/device_lib.sh. ~7 min.
set -euo pipefail
flags=$1 name=$2 dir=${3:-.xfer-tests72}
root=$(git rev-parse --show-toplevel); cd "$root"
wt=$(mktemp -d /tmp/ptxas-variant.XXXXXX)
trap 'git worktree remove --force "$wt" >/dev/null 2>&1 || true; rm -rf "$wt.pack"' EXIT
git worktree add --detach -q "$wt" HEAD
extra=""
for f in $flags; do extra="$extra, \"-Xptxas\", \"$f\""; done
sed -i "s|^COMMON_FLAGS = \[\(.*\)\]$|COMMON_FLAGS = [\1$extra]|" "$wt/kernels/tools/build_cubins.py"
grep -q -- "$(echo "$flags" | awk '{print $1}')" "$wt/kernels/tools/build_cubins.py" || { echo "flags not applied" >&2; exit 1; }
# Every module at FLAGS alone: drop the manifest's per-module `ptxas` options (session 73: gdn_fwd,
# gdn_bwd at --register-usage-level=10), which would otherwise follow FLAGS on ptxas's command line.
sed -i '/^ptxas = /d' "$wt/kernels/manifest.toml"
bash "$wt/kernels/build-cubins.sh" > "$wt.cubins.log" 2>&1 || { tail -20 "$wt.cubins.log" >&2; exit 1; }
(cd "$wt" && CARGO_TARGET_DIR="$root/target/ptxas-variant" CARGO_PROFILE_RELEASE_DEBUG=0 CARGO_PROFILE_RELEASE_STRIP=symbols \
  cargo test --release --features gpu-tests --no-run --test gpu_gdn --test gpu_gdn_pdl --test gpu_gdn_bench -q 2>&1 | tail -3)
mkdir -p "$wt.pack/.device/tests" "$dir"
for t in gpu_gdn gpu_gdn_pdl gpu_gdn_bench; do
  cp "$(ls -t "$root/target/ptxas-variant/release/deps/$t"-* | grep -v '\.d$' | head -1)" "$wt.pack/.device/tests/"
done
cp "$root/../shared/scripts/device-env.sh" "$wt.pack/.device/"
tar cJf "$dir/$name.txz" -C "$wt.pack" .device
echo "$dir/$name.txz: ptxas $flags ($(git rev-parse --short HEAD))"
