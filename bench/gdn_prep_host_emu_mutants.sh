#!/usr/bin/env bash
# Mutation checks of bench/gdn_prep_host_emu.cpp (session 6): each mutant is one textual change to a
# copy of kernels/include/gdn_fwd_prep3.cuh; the emulator (first 2 cases) must FAIL on every one.
# Log: bench/gdn_prep_host_emu_mutants.log. Run from the repository root (~5 min per mutant on 2 cores).
set -u
root=$(pwd); work=$(mktemp -d)
mutant() {  # name, old text, new text
  local d="$work/$1"; mkdir -p "$d" && cp -r "$root/kernels/include" "$d/"
  python3 - "$d/include/gdn_fwd_prep3.cuh" "$2" "$3" <<'PY'
import sys
p, old, new = sys.argv[1:4]
s = open(p).read()
assert s.count(old) == 1, f"mutation site not unique: {old!r}"
open(p, "w").write(s.replace(old, new))
PY
  g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -I"$d/include" "$root/bench/gdn_prep_host_emu.cpp" -o "$d/emu"
  echo "== mutant $1"; "$d/emu" 2 | sed -E 's/ +vs fp64 rms.*(FAIL|ok)$/ \1/'
}
mutant nobar_end '    __syncthreads();  // every read of tile i'"'"'s set, ra, Γ and β done before they are rewritten' '    // (mutant: no barrier)'
mutant same_set 'prep4_set<T, K, V>(smem, (it & 1) ^ 1)' 'prep4_set<T, K, V>(smem, it & 1)'
mutant shfl_src 'sacc[J], src0 + m)' 'sacc[J], m)'
mutant wait_depth 'if (next_in_flight) cp_async_wait<1>();' 'if (next_in_flight) cp_async_wait<2>();'
mutant directa_stride 'if (DIRECT_A) prep_store_a<T, CHUNK>(' 'if (DIRECT_A) prep_store_a<T, CHUNK + 8>('
mutant nobar_inv2 '    for (int J = 0; J < I; ++J) Lf[(16 * J + cc) * FP + 16 * I + rr] = tout[J];
    __syncthreads();' '    for (int J = 0; J < I; ++J) Lf[(16 * J + cc) * FP + 16 * I + rr] = tout[J];'
mutant t_io_tr 'const bool diag = (cc >> 4) == (r >> 4);' 'const bool diag = true;'
rm -rf "$work"
