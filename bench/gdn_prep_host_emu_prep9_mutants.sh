#!/usr/bin/env bash
# Session 8 (prepinv3): mutants of prep9's ldmatrix.x4 operand loads (LDSM paths in
# kernels/include/gdn_fwd_prep3.cuh) through bench/gdn_prep_host_emu.cpp in its fast mode
# (GDN_EMU_FAST=1), first 2 cases; log: bench/gdn_prep_host_emu_prep9_mutants.log. Each must FAIL
# on the v9 line (bitwise v8):
#  m1: phase 3's B pair swapped (n-tile 2np gets n-tile 2np + 1's fragment);
#  m2: the Ũᵀ product's B matrices without their + 8 column offset (k slots 8..15 read as 0..7).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
m=$(mktemp -d)
build() {  # $1: name, $2: python replacement (old, new)
  rm -rf "$m/include" && cp -r kernels/include "$m/include"
  python3 -c "import sys; p='$m/include/gdn_fwd_prep3.cuh'; s=open(p).read(); o,n=$2; assert s.count(o) == 1; open(p,'w').write(s.replace(o,n))"
  g++ -std=c++20 -O1 -fno-strict-aliasing -pthread -I"$m/include" bench/gdn_prep_host_emu.cpp -o "$m/$1"
}
export GDN_EMU_FAST=1
build m1 "('IO::mma(acc[2 * np], a, b);', 'IO::mma(acc[2 * np], a, b + 2);')"
echo "== m1 (phase 3 B pair swapped), first 2 cases"; "$m/m1" 2 | grep -E 'v9|PASS|FAIL' || true
build m2 "('* CP + 16 * kk + 8 * ((lane >> 3) & 1)]);', '* CP + 16 * kk]);')"
echo "== m2 (Ut B without the +8 column offset), first 2 cases"; "$m/m2" 2 | grep -E 'v9|PASS|FAIL' || true
rm -rf "$m"
