#!/usr/bin/env bash
# Mutation checks of prep10 / prep11 (kernels/include/gdn_fwd_prep10.cuh): each mutant must make
# bench/gdn_prep_host_emu.cpp's v10/v11 bitwise-vs-prep9 check FAIL on the first two cases
# (GDN_EMU_V10=1: prep9 once, prep10 and prep11 twice each). Run from the repository root.
set -u
m() {  # name, sed expression on gdn_fwd_prep10.cuh
  local d; d=$(mktemp -d)
  cp -r kernels/include "$d/include"
  sed -i "$2" "$d/include/gdn_fwd_prep10.cuh"
  if cmp -s kernels/include/gdn_fwd_prep10.cuh "$d/include/gdn_fwd_prep10.cuh"; then echo "$1: sed did not apply"; rm -rf "$d"; return; fi
  g++ -std=c++20 -O1 -fno-strict-aliasing -pthread -I"$d/include" bench/gdn_prep_host_emu.cpp -o "$d/emu" || { echo "$1: build failed"; rm -rf "$d"; return; }
  echo "== $1"
  GDN_EMU_V10=1 "$d/emu" 2 | sed 's/^/   /'
  rm -rf "$d"
}
# m1: the row conversion without its __syncwarp between a warp's reads and its writes
m m1_no_syncwarp '/^  __syncwarp();$/{N;/#pragma unroll/s/^  __syncwarp();\n//}'
# m2: step 2a's late k8 steps (B = T_10) without the barrier that follows step 1
m m2_no_barrier_after_step1 '/^  __syncthreads();$/{N;s/^  __syncthreads();\n  if (warp >= 2 \&\& warp < 6) {/  if (warp >= 2 \&\& warp < 6) {/}'
# m3: no barrier between step 2b (T_BA) and the conversion of rows 32..63
m m3_no_barrier_before_rows_hi '/tcinv10_rows_to_io<T, 0>(Lf, warp, lane);/{n;d}'
# m4: the io rows without the -16 B shift (W's A operand still reads the shifted layout)
m m4_no_shift_in_conversion 's/\*reinterpret_cast<u32\*>(&tb\[tcinv10_tb_row(r) + cc\]) = tv\[u\];/*reinterpret_cast<u32*>(\&tb[(TCINV_LS * 2) * r + cc]) = tv[u];/'
