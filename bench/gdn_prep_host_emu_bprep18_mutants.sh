#!/usr/bin/env bash
# bprep18 mutants (session 18): each must FAIL the GDN_EMU_V15 check (prep15's whole workspace bitwise
# prep14's) on the cases it runs (the first two: the forward and the backward's KEEP, bf16 K = 128).
# Run from the repository root; log: bench/gdn_prep_host_emu_bprep18_mutants.log.
set -u
run() {
  local name="$1" file="$2" from="$3" to="$4"
  local d=/tmp/bprep18_mut_$name
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
  rm -rf "$d"
}
# b1: warp 0 does not wait for warp 1's L rows (the bar.sync of the L hand-over dropped)
run b1 gdn_fwd_prep10.cuh 'if (warp == 0) slim_bar_sync<1, 64>();' 'if (warp == 0) {}'
# b2: phase 2's half-warp butterfly without the partner half's partial (row_norm_scales' step 16)
run b2 gdn_fwd_prep15.cuh 'float kt = ks[0] + ks[1], qt = qs[0] + qs[1];' 'float kt = ks[0] + ks[0], qt = qs[0] + qs[0];'
# b3: warp 1 forms only its first 16-column block of K Kᵀ / Q Kᵀ (its second holds the diagonal)
run b3 gdn_fwd_prep15.cuh 'const int np = hi ? (rt < 2 ? 0 : rt - 1) : (rt < 1 ? 1 : 2);' 'const int np = hi ? (rt < 2 ? 0 : rt - 1) : (rt < 2 ? 1 : 2);'
# b4: the E rows' half-warp stride 13 instead of 12 (some rows left unscaled)
run b4 gdn_fwd_prep10.cuh 'r < CHUNK; r += 12)' 'r < CHUNK; r += 13)'
# b5: phase 1's v copy without its row stride (every round copies the first round's rows)
run b5 gdn_fwd_prep15.cuh '      vs += vstep;' '      (void)vstep;'
