#!/usr/bin/env bash
# prep15 mutants: each must FAIL the GDN_EMU_V15 check (whole workspace bitwise prep14) on the cases it runs
# (the first two: the forward and the backward's KEEP). Run from the repository root.
set -u
run() {
  local name="$1" file="$2" from="$3" to="$4"
  local d=/tmp/prep15_mut_$name
  rm -rf "$d" && mkdir -p "$d" && cp kernels/include/*.cuh kernels/include/*.h "$d"/ 2>/dev/null
  python3 - "$d/$file" "$from" "$to" <<'PY'
import sys
p, a, b = sys.argv[1:4]
s = open(p).read()
assert s.count(a) == 1, (p, a, s.count(a))
open(p, 'w').write(s.replace(a, b))
PY
  g++ -std=c++20 -O1 -fno-strict-aliasing -pthread -I"$d" bench/gdn_prep_host_emu.cpp -o "$d/emu" || { echo "$name: build failed"; return; }
  echo "== $name"
  GDN_EMU_V15=1 "$d/emu" 2 | sed 's/^/  /'
}
# m1: no pair barrier after the L stores (warp 0 reads warp 1's L_10 / diagonal block 1 rows unsynchronised)
run m1 gdn_fwd_prep15.cuh '  emu_bar_sync(id, 64);' '  (void)id;'
# m2: no __syncwarp between the diagonal blocks and step 1
run m2 gdn_fwd_prep15.cuh '  __syncwarp();  // T_JJ, T_II' '  // T_JJ, T_II'
# m3: no block barrier between step 2a (P) and step 2b
run m3 gdn_fwd_prep10.cuh '                                4 * 32);
    }
    __syncthreads();' '                                4 * 32);
    }'
# m4: T_BB's io conversion reading row u = 4 + 2i (both half-warps) instead of 4 + 2i + h
run m4 gdn_fwd_prep15.cuh 'const int r = warp + 8 * (4 + 2 * i + (lane >> 4));' 'const int r = warp + 8 * (4 + 2 * i);'
