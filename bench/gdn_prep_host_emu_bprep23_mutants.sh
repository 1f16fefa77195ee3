#!/usr/bin/env bash
# bprep23 mutants (session 23): each must change the GDN_EMU_DUMP of prep15's whole workspace (all 15
# cases of bench/gdn_prep_host_emu.cpp, GDN_EMU_V15=1) against main's headers' dump and FAIL the v15
# vs v14 check. Run from the repository root after building main's dump:
#   g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -I<main>/kernels/include bench/gdn_prep_host_emu.cpp -o /tmp/emu_main
#   GDN_EMU_V15=1 GDN_EMU_DUMP=/tmp/bprep23_main.bin /tmp/emu_main
# Log: bench/gdn_prep_host_emu_bprep23.log.
set -u
run() {
  local name="$1" file="$2" from="$3" to="$4"
  local d=/tmp/bprep23_mut_$name
  rm -rf "$d" && mkdir -p "$d" && cp kernels/include/*.cuh kernels/include/*.h "$d"/ 2>/dev/null
  python3 - "$d/$file" "$from" "$to" <<'PY'
import sys
p, a, b = sys.argv[1:4]
s = open(p).read()
assert s.count(a) == 1, (p, a, s.count(a))
open(p, 'w').write(s.replace(a, b))
PY
  g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -I"$d" bench/gdn_prep_host_emu.cpp -o "$d/emu" || { echo "$name: build failed"; return; }
  GDN_EMU_V15=1 GDN_EMU_DUMP="$d/dump.bin" "$d/emu" > "$d/log" 2>&1
  local fails; fails=$(grep -c FAIL "$d/log")
  if cmp -s "$d/dump.bin" /tmp/bprep23_main.bin; then echo "$name: dump identical to main's (NOT caught); FAIL lines $fails"
  else echo "$name: dump differs from main's (caught); FAIL lines $fails"; fi
  rm -rf "$d"
}
# m1: phase 2's quarter sums in another order (row_norm_scales' steps 16 and 8 not reproduced)
run sumorder gdn_fwd_prep15.cuh 'l2norm_scales<4>((ks[0] + ks[2]) + (ks[1] + ks[3]), (qs[0] + qs[2]) + (qs[1] + qs[3]), p.scale, kr, qr);
  const float eg' 'l2norm_scales<4>((ks[0] + ks[1]) + (ks[2] + ks[3]), (qs[0] + qs[1]) + (qs[2] + qs[3]), p.scale, kr, qr);
  const float eg'
# m2: the zero-filling copies fill one row too many from global memory (row len)
run zfill gdn_fwd_prep15.cuh 'const bool full = r0 + it * RS < len;' 'const bool full = r0 + it * RS <= len;'
# m3: T's rows 32..63 stored from rows 0..31
run storet gdn_fwd_prep15.cuh '*reinterpret_cast<uint4*>(dt + (r + RH) * CHUNK + c8) = v1;' '*reinterpret_cast<uint4*>(dt + (r + RH) * CHUNK + c8) = v0;'
# m4: the E rows' last step on rows 16 below (rows 51, 55, 59, 63 left unscaled, 35.. twice)
run erow gdn_fwd_prep10.cuh '16 * (u >> 2) + (u & 3) + 4 * (lane >> 3), lane);' '16 * (u >> 2) + (u & 3) + 4 * (lane >> 3) - (u == 15 ? 16 : 0), lane);'
# m5: Y = β v with the second pair's values swapped
run ypack gdn_fwd_prep15.cuh 'make_uint2(IO::pack(br * y[0], br * y[1]), IO::pack(br * y[2], br * y[3]));' 'make_uint2(IO::pack(br * y[0], br * y[1]), IO::pack(br * y[3], br * y[2]));'
# m6: store_tile16_fixed's source rows without their 8-element padding
run tile16 gdn_fwd.cuh '*reinterpret_cast<uint4*>(d + it * RS * COLS) = *reinterpret_cast<const uint4*>(s + it * RS * (COLS + 8));' '*reinterpret_cast<uint4*>(d + it * RS * COLS) = *reinterpret_cast<const uint4*>(s + it * RS * COLS);'
