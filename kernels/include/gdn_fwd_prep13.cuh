// Gated DeltaNet per-chunk factors, v13 ("prep13", helper sub13, session 10): prep10's tile
// (gdn_fwd_prep10.cuh) with the inverse's diagonal 16x16 blocks balanced over 4 warps (one block
// per warp, two lanes per column) instead of 2 (one lane per column), the operands of the
// substitution's dependent chain in registers and shuffles instead of dependent shared loads.
// Bitwise prep10: every element of T's diagonal blocks is the same fp32 sum, in the same order,
// of the same products (checked on the CPU against prep10's whole workspace by
// bench/gdn_prep_host_emu.cpp, GDN_EMU_V13=1).
//
// Contract of prep13_diag_invert_warp (the template flag BAL_DIAG of prep10_tile): called by warps
// 0..3 after the block barrier that follows tcinv_store_l; warp w inverts diagonal block w of
// (I + L) in place over L (rows of TCINV_LS floats), exactly as prep_diag_invert_warp's threads
// 16w .. 16w + 15 would. Its only readers and writers are the warp's lanes (a __syncwarp between
// the last read and the first write); the other warps may meanwhile touch anything but rows
// 16w .. 16w + 15, columns 16w .. 16w + 15.
//
// prep_diag_solve computes column c of the block by forward substitution, left-looking:
//   T[r][c] = 0 (r < c), 1 (r = c), −s_rc with s_rc = ((0 + L[r][c]·1) + L[r][c+1]·T[c+1][c]) + ...
//             + L[r][r−1]·T[r−1][c]   (r > c; fp32, j ascending, one rounding per product and add
//             as the compiler contracts `s += a * b`).
// Here the same sums run right-looking: at step j = 0..15 every lane whose element (r, c) has
// c ≤ j < r adds its term j, L[r][j]·T[j][c], so each element still receives its terms in j
// ascending order onto s = 0 (bitwise the same sum). Lane l owns column c = l & 15 and the rows
// r = 2i + (l >> 4), i = 0..7 (s[i]); T[j][c] = −s of the owner lane c + 16 (j & 1), slot j >> 1,
// final once step j − 1 is done: one __shfl_sync per step. The diagonal element's s starts at −1
// (it receives no term: r = c), so −s is T[c][c] = 1 with no select on the chain; the term with
// j = c is then L[r][c]·(−(−1)) = L[r][c]·1, as prep_diag_solve's first term. Each step's L operands
// (two steps per float2 row load) do not depend on the chain.
#pragma once

#include "gdn_fwd_tcinv.cuh"

namespace gdn {

__device__ __forceinline__ void prep13_diag_invert_warp(float* Lf, int warp, int lane) {
  constexpr int LS = TCINV_LS;
  const int base = 16 * warp, c = lane & 15, h = lane >> 4;
  const float* lrow = Lf + (base + h) * LS + base;  // the lane's row 2i + h at lrow + 2i·LS
  float s[8];
#pragma unroll
  for (int i = 0; i < 8; ++i) s[i] = 2 * i + h == c ? -1.f : 0.f;
#pragma unroll
  for (int jp = 0; jp < 16; jp += 2) {
    float2 lv[8];
#pragma unroll
    for (int i = jp / 2; i < 8; ++i) lv[i] = *reinterpret_cast<const float2*>(&lrow[2 * i * LS + jp]);
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int j = jp + e;
      const float tj = -__shfl_sync(0xffffffffu, s[j >> 1], c + 16 * (j & 1));  // T[j][c] for j ≥ c
#pragma unroll
      for (int i = jp / 2; i < 8; ++i) {
        // rows r = 2i + h > j: every i with 2i > j; i = j / 2 only for h = 1 and j even.
        const bool row = 2 * i > j || (2 * i == j && h == 1);
        if (row && j >= c) s[i] += (e ? lv[i].y : lv[i].x) * tj;
      }
    }
  }
  __syncwarp();  // every lane's L reads done before T replaces the block
#pragma unroll
  for (int i = 0; i < 8; ++i) {
    const int r = 2 * i + h;
    if (r >= c) Lf[(base + r) * LS + base + c] = -s[i];
  }
}

// prep14 (BAL_DIAG = 2): the same right-looking sums on prep10's threads 0..63 (thread t: column
// c = t & 15 of block t >> 4, all 16 rows in s[0..15], as prep_diag_solve's one lane per column),
// so the chain T[j][c] -> row j + 1 is one FFMA per step with no shuffle and no select, and the L
// operands are float2 row loads (two steps each, 64 per thread instead of 120 scalar loads). The
// backward's E copy keeps its threads 64..255.
__device__ __forceinline__ void prep14_diag_invert_half(float* Lf, int tid) {
  constexpr int LS = TCINV_LS;
  const int base = 16 * (tid >> 4), c = tid & 15;
  const float* lrow = Lf + base * LS + base;  // row r of the block at lrow + r·LS
  float s[16];
#pragma unroll
  for (int r = 0; r < 16; ++r) s[r] = r == c ? -1.f : 0.f;
#pragma unroll
  for (int jp = 0; jp < 16; jp += 2) {
#pragma unroll
    for (int r = jp + 1; r < 16; ++r) {
      const float2 lv = *reinterpret_cast<const float2*>(&lrow[r * LS + jp]);
      if (jp >= c) s[r] += lv.x * -s[jp];
      if (r > jp + 1 && jp + 1 >= c) s[r] += lv.y * -s[jp + 1];
    }
  }
  __syncwarp();  // every lane's L reads done before T replaces the block
#pragma unroll
  for (int r = 0; r < 16; ++r)
    if (r >= c) Lf[(base + r) * LS + base + c] = -s[r];
}

}  // namespace gdn
