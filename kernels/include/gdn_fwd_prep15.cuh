// Gated DeltaNet per-chunk factors, v15 ("prep15", helper prep15, session 11): prep14's tile
// (prep10_tile<..., BAL_DIAG = 2>, gdn_fwd_prep10.cuh) with the triangular inverse's serial pieces
// moved off the block barriers: 10 block barriers per tile instead of 13. Bitwise prep14: every
// element of T, and so of W, Ũᵀ and the backward's T copy, comes from the same fp32 operations and
// mma.sync instructions with the same operands in the same order (prep14_diag_invert_half,
// tcinv8_pair, tcinv8_p, tcinv8_tba's sums, Io<T>::pack); only which warp issues them and which
// barriers separate them differ (checked on the CPU against prep14's whole workspace by
// bench/gdn_prep_host_emu.cpp, GDN_EMU_V15=1).
//
// Schedule after phase 3 (prep10_tile with BAL_DIAG = 3; prep14's in brackets):
//  E phase: warps 0-3 store their L rows (tcinv_store_l) and meet in pairs on named barriers
//    (warps 0, 1 on barrier 1; warps 2, 3 on barrier 2; 64 threads each), then warp 0 inverts the
//    diagonal blocks 0, 1 and warp 2 the blocks 2, 3 (prep14_diag_invert_half with thread index
//    32 (warp >> 1) + lane: prep14's threads 0..63), __syncwarp, and each runs its step 1 at once
//    (warp 0 T_10 = tcinv8_pair<0>: L_10 from warp 1, T_00, T_11 its own; warp 2 T_32 likewise),
//    while warps 1, 3 (after their L rows) and 4-7 (after A) compute the 64 E rows, ~11 each
//    (rows ew + 6i). [E rows 8 per warp and L / A; barrier; diagonal blocks on threads 0..63;
//    barrier; step 1 beside step 2a's early k8 steps; barrier]
//  block barrier; step 2a: P = L_BA T_AA on all 8 warps, prep9's tcinv8_p (each tile's k8 steps in
//    tcinv8_p's order into its two accumulators: prep10's early / late split keeps that order, so
//    P is prep14's); the backward's E copy on the warps with the short P tiles (nt = 2, 3: warps 2,
//    3, 6, 7). [late k8 steps on warps 2-5; barrier]
//  block barrier; step 2b: T_BA = −T_BB P with each warp's tile leaving straight from its
//    accumulators as io pairs (prep15_tba_io), beside the io conversion of T's rows 0..31
//    (tcinv10_rows_to_io) and of T_BB (rows 32..63, columns 32..63, prep15_tbb_to_io): in step 2b
//    nothing reads columns 0..31 of rows 32..63, and those rows' io bytes (tcinv10_tb_row) lie in
//    exactly those columns (and in the unused padding columns 68..71 of the row above).
//    [T_BA in fp32; rows 0..31 to io; barrier; rows 32..63 to io; barrier]
//  block barrier; phase 5 as prep10's.
#pragma once

#include "gdn_fwd_prep13.cuh"

namespace gdn {

#ifdef GDN_HOST_EMU
void emu_bar_sync(int id, int n);
#endif

// bar.sync id, 64: warps 2 (id − 1) and 2 (id − 1) + 1 meet (id 1, 2; 0 is __syncthreads').
// The ID is an immediate in each branch (session 18, prep18): with an ID in a register ptxas
// reserves all 16 named barriers per block (EIATTR_NUM_BARRIERS 0x10), and the SM's barrier
// pool then held only 4 blocks ("Block Limit Barriers 4"); with immediates the block takes 3.
__device__ __forceinline__ void prep15_pair_barrier(int id) {
#ifdef GDN_HOST_EMU
  emu_bar_sync(id, 64);
#else
  if (id == 1) asm volatile("bar.sync 1, 64;\n" ::: "memory");
  else asm volatile("bar.sync 2, 64;\n" ::: "memory");
#endif
}

// Warp 0 (J = 0) / warp 2 (J = 2): the diagonal blocks J, J + 1 of T (prep14's threads
// 16 J + lane) and then T_{J+1,J} (tcinv8_pair<J>), after the pair barrier that made warp J + 1's
// L rows visible.
__device__ __forceinline__ void prep15_diag_and_step1(float* Lf, int warp, int lane) {
  prep14_diag_invert_half(Lf, 16 * warp + lane);
  __syncwarp();  // T_JJ, T_II (written by other lanes) are step 1's operands
  if (warp == 0) tcinv8_pair<0>(Lf, lane);
  else tcinv8_pair<2>(Lf, lane);
}

// Step 2b for warp w (tcinv8_tba's tile and sums), T_BA written as io pairs at tcinv10_tb_row
// instead of fp32 (the values tcinv10_rows_to_io would pack from it: every column < 32 ≤ row).
template <typename T>
__device__ __forceinline__ void prep15_tba_io(float* Lf, int warp, int lane) {
  const int t = lane & 3, nt = warp & 3;
  float c[2][4];
  const int ar = tcinv8_tba_products(Lf, warp, lane, c);
  T* tb = reinterpret_cast<T*>(Lf);
#pragma unroll
  for (int h = 0; h < 2; ++h)
    *reinterpret_cast<u32*>(&tb[tcinv10_tb_row(ar + 8 * h) + 8 * nt + 2 * t]) =
        Io<T>::pack(-(c[0][2 * h] + c[1][2 * h]), -(c[0][2 * h + 1] + c[1][2 * h + 1]));
}

// T_BB (rows warp + 8u, u = 4..7, columns 32..63) to the io dtype (tcinv10_rows_to_io's values):
// half-warp h converts the rows u = 4 + 2i + h. Reads fp32 columns 32..63, writes io columns
// 32..63, i.e. fp32 columns 12..31 of the row: no lane reads what another writes.
template <typename T>
__device__ __forceinline__ void prep15_tbb_to_io(float* Lf, int warp, int lane) {
  T* tb = reinterpret_cast<T*>(Lf);
  const int cc = 32 + 2 * (lane & 15);
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    const int r = warp + 8 * (4 + 2 * i + (lane >> 4));
    const float2 v = tcinv_t_pair(Lf, r, cc);
    *reinterpret_cast<u32*>(&tb[tcinv10_tb_row(r) + cc]) = Io<T>::pack(v.x, v.y);
  }
}

}  // namespace gdn
