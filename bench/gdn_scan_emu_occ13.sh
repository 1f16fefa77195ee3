#!/usr/bin/env bash
# Session 13 (helper occ13): the CPU emulation of the forward scans (bench/gdn_scan_host_emu.cpp)
# with the one-stage phased kernels (w4s1, w4p, sum1), lazy and eager copies, plus the mutant
# (w4p without its mid-chunk cp_async_wait<0>(): half 2 read before it lands) that must FAIL.
# Usage (repository root): bash bench/gdn_scan_emu_occ13.sh [cases...]  (logs in /tmp/occ13emu)
set -u
out=/tmp/occ13emu; mkdir -p $out/mut
g++ -std=c++20 -O1 -fno-strict-aliasing -pthread -Ikernels/include bench/gdn_scan_host_emu.cpp -o $out/emu || exit 1
cp -r kernels/include $out/mut/
python3 - "$out/mut/include/gdn_fwd_fast.cuh" <<'PY'
import sys
p = sys.argv[1]; s = open(p).read()
old = "      cp_async_wait<0>();  // this chunk's half 2"
assert s.count(old) == 1
open(p, "w").write(s.replace(old, "      // mutant: no wait  // this chunk's half 2"))
PY
g++ -std=c++20 -O1 -fno-strict-aliasing -pthread -I$out/mut/include bench/gdn_scan_host_emu.cpp -o $out/emu_mut || exit 1
cases=${*:-0 1 2 3}
export GDN_EMU_FWD_ONLY=${GDN_EMU_FWD_ONLY-1}  # the forward scans (the replays: case 0 ran them in full)
for c in $cases; do $out/emu $c > $out/lazy_$c.log 2>&1; echo "lazy case $c: $(tail -1 $out/lazy_$c.log) $(grep -c ' ok$' $out/lazy_$c.log) ok, $(grep -c FAIL $out/lazy_$c.log) FAIL"; done
for c in 1 2; do GDN_EMU_CP_EAGER=1 $out/emu $c > $out/eager_$c.log 2>&1; echo "eager case $c: $(tail -1 $out/eager_$c.log) $(grep -c ' ok$' $out/eager_$c.log) ok, $(grep -c FAIL $out/eager_$c.log) FAIL"; done
$out/emu_mut 3 > $out/mutant_3.log 2>&1; echo "mutant case 3: $(tail -1 $out/mutant_3.log)"; grep FAIL $out/mutant_3.log
