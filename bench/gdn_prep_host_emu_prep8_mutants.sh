#!/usr/bin/env bash
# Session 8 (prepinv2): mutants of prep8's 2x2-blocked inverse (tcinv8_* in
# kernels/include/gdn_fwd_tcinv.cuh) run through bench/gdn_prep_host_emu.cpp in its fast mode
# (GDN_EMU_FAST=1: prep3 = the v6 reference, prep7 once, prep8 twice); log:
# bench/gdn_prep_host_emu_prep8_mutants.log. Each must FAIL on the v8 line:
#  m1: step 2a's B fragment k slots swapped (rows 2t and 2t + 1 of T_AA exchanged);
#  m2: step 2b's k range one 8-block short for the lower half (T_BB's columns 56..63 dropped, the
#      unit diagonal of rows 56..63 included): an error of the size of L's entries, so the easy
#      cases (T ≈ I, |L| small) pass the 10 % bound and the aligned-keys stress cases must FAIL;
#  m3: the barrier between steps 2a and 2b removed (P read before every warp stored it: with the
#      emulator's real threads a race shows as a wrong value or a run-to-run difference).
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
m=$(mktemp -d)
build() {  # $1: name, $2: python replacement (old, new)
  rm -rf "$m/include" && cp -r kernels/include "$m/include"
  python3 -c "import sys; p='$m/include/gdn_fwd_tcinv.cuh'; s=open(p).read(); o,n=$2; assert s.count(o) == 1; open(p,'w').write(s.replace(o,n))"
  g++ -std=c++20 -O1 -fno-strict-aliasing -pthread -I"$m/include" bench/gdn_prep_host_emu.cpp -o "$m/$1"
}
export GDN_EMU_FAST=1
build m1 "('make_float2(Lf[(8 * kb + 2 * t) * LS + 8 * nt + g], Lf[(8 * kb + 2 * t + 1) * LS + 8 * nt + g])', 'make_float2(Lf[(8 * kb + 2 * t + 1) * LS + 8 * nt + g], Lf[(8 * kb + 2 * t) * LS + 8 * nt + g])')"
echo "== m1 (step 2a B k slots swapped), first 2 cases"; "$m/m1" 2 | grep -v '^  v7' || true
build m2 "('if (kb > 2 * mb + 1) continue;', 'if (kb > 2 * mb + 1 - mb) continue;')"
echo "== m2 (step 2b k range short), first 2 cases"; "$m/m2" 2 | grep -v '^  v7' || true
echo "== m2 (step 2b k range short), aligned-keys stress cases"; GDN_EMU_FIRST=8 "$m/m2" 10 | grep -v '^  v7' || true
build m3 "('    tcinv8_p(Lf, warp, lane);\n    __syncthreads();', '    tcinv8_p(Lf, warp, lane);')"
echo "== m3 (no barrier between steps 2a and 2b), first 2 cases"; "$m/m3" 2 | grep -v '^  v7' || true
rm -rf "$m"
