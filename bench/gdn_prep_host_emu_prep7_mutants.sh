#!/usr/bin/env bash
# Session 8 (prepinv): mutants of prep7's tensor-core inverse (kernels/include/gdn_fwd_tcinv.cuh) run
# through bench/gdn_prep_host_emu.cpp; log: bench/gdn_prep_host_emu_prep7_mutants.log.
#  m1: the B fragment's k slots swapped (b0 <-> b1: columns 2t and 2t+1 exchanged) -> must FAIL;
#  m2: TF32 in one term (hi·hi only, no lo corrections): how much the 3-term split buys, on the
#      stress cases (GDN_EMU_FIRST=7) next to the unmutated prep7 on the same inputs.
set -euo pipefail
cd "$(git rev-parse --show-toplevel)"
m=$(mktemp -d)
build() {  # $1: name, $2: python replacement (old, new)
  rm -rf "$m/include" && cp -r kernels/include "$m/include"
  python3 -c "import sys; p='$m/include/gdn_fwd_tcinv.cuh'; s=open(p).read(); o,n=$2; assert o in s; open(p,'w').write(s.replace(o,n))"
  g++ -std=c++20 -O1 -fno-strict-aliasing -pthread -I"$m/include" bench/gdn_prep_host_emu.cpp -o "$m/$1"
}
build m1 "('tf32_split(bv.x, bh[0], bl[0]);\n  tf32_split(bv.y, bh[1], bl[1]);', 'tf32_split(bv.y, bh[0], bl[0]);\n  tf32_split(bv.x, bh[1], bl[1]);')"
echo "== m1 (B k slots swapped), first 2 cases"; "$m/m1" 2 || true
build m2 "('mma_tf32(c, al, bh);\n  mma_tf32(c, ah, bl);\n  mma_tf32(c, ah, bh);', 'mma_tf32(c, ah, bh);')"
echo "== m2 (one TF32 term), first 2 cases"; "$m/m2" 2 || true
echo "== m2 (one TF32 term), stress cases"; GDN_EMU_FIRST=7 "$m/m2" || true
g++ -std=c++20 -O1 -fno-strict-aliasing -pthread -Ikernels/include bench/gdn_prep_host_emu.cpp -o "$m/ok"
echo "== prep7 as committed, stress cases (same inputs)"; GDN_EMU_FIRST=7 "$m/ok" || true
rm -rf "$m"
