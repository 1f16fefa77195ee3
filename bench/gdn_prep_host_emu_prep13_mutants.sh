#!/usr/bin/env bash
# Mutation checks of prep13 / prep14 (kernels/include/gdn_fwd_prep13.cuh): each mutant must make
# bench/gdn_prep_host_emu.cpp's v13/v14 bitwise-vs-prep10 check FAIL on the first two cases
# (GDN_EMU_V13=1: prep10 once, prep13 and prep14 twice each) or bench/gdn_prep13_diag_emu.cpp's
# fp32 check of the diagonal blocks alone. Run from the repository root; DIAG_ONLY=1 skips the
# whole-workspace check.
set -u
m() {  # name, command editing $1/include/gdn_fwd_prep13.cuh
  local d; d=$(mktemp -d)
  cp -r kernels/include "$d/include"
  f="$d/include/gdn_fwd_prep13.cuh"
  eval "$2"
  if cmp -s kernels/include/gdn_fwd_prep13.cuh "$f"; then echo "$1: edit did not apply"; rm -rf "$d"; return; fi
  echo "== $1"
  if [ -z "${DIAG_ONLY:-}" ]; then
    g++ -std=c++20 -O1 -fno-strict-aliasing -pthread -I"$d/include" bench/gdn_prep_host_emu.cpp -o "$d/emu" || { echo "$1: build failed"; rm -rf "$d"; return; }
    GDN_EMU_V13=1 "$d/emu" 2 | sed 's/^/   /'
  fi
  g++ -std=c++20 -O1 -fno-strict-aliasing -pthread -I"$d/include" bench/gdn_prep13_diag_emu.cpp -o "$d/diag" || { echo "$1: build failed"; rm -rf "$d"; return; }
  "$d/diag" 40 | sed 's/^/   /'
  rm -rf "$d"
}
# m1 (v13): T[j][c] shuffled from the lane of the other row parity
m m1_v13_wrong_source_lane 'sed -i "s/c + 16 \* (j \& 1))/c + 16 * (~j \& 1))/" "$f"'
# m2 (v13): no __syncwarp between the warp's L reads and its T stores
m m2_v13_no_syncwarp 'awk "/^  __syncwarp\\(\\);/ && ++n == 1 {next} {print}" "$f" > "$f.x" && mv "$f.x" "$f"'
# m3 (v14): no __syncwarp between the lanes' L reads and their T stores
m m3_v14_no_syncwarp 'awk "/^  __syncwarp\\(\\);/ && ++n == 2 {next} {print}" "$f" > "$f.x" && mv "$f.x" "$f"'
# m4 (v14): a row's terms jp and jp + 1 added in the other order (same values, other rounding)
m m4_v14_term_order 'awk "/if \\(jp >= c\\) s\\[r\\]/ {hold=\$0; next} hold != \"\" {print; print hold; hold=\"\"; next} {print}" "$f" > "$f.x" && mv "$f.x" "$f"'
