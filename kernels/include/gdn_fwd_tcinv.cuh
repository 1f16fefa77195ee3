// The prep's per-chunk triangular inverse T = (I + L)^{-1} on the tensor cores (prep7, helper
// prepinv, session 8): the pieces prep3_tile (gdn_fwd_prep3.cuh) uses when TCINV is set.
//
// Contract: L (64x64, fp32, strictly lower; zeros on and above the diagonal) sits in the fp32 tile
// Lf with rows of TCINV_LS = 72 floats (so that the mma operand loads below, two consecutive
// floats per lane at rows g and columns 2t, are 8-byte accesses without bank conflicts):
//  1. tcinv_store_l: L from the K Kᵀ accumulators (the same fp32 expression per element as
//     prep_store_l, float2 stores);
//  2. prep_diag_solve / _store on rows of TCINV_LS (threads 0..63, one column each of one 16x16
//     diagonal block: v6's forward substitution, so the diagonal blocks of T are bitwise v6's;
//     every reader of a block is in the writer's warp, so a __syncwarp separates solve and store);
//  3. tcinv_col_block<J> (warp J = 0..3 after a block barrier): column block J of T (rows 16J..63,
//     columns 16J..16J+15) by block forward substitution
//        T_IJ = −T_II Σ_{k=J}^{I−1} L_Ik T_kJ     (I = J+1 .. 3),
//     computed transposed, U_JI = T_IJᵀ = −(Σ_k U_Jk L_Ikᵀ) T_IIᵀ, so that every product's left
//     operand is a previous product's accumulator: the m16n8k8 C fragment (rows g, g+8, columns
//     2t, 2t+1) IS an A fragment whose k slots t, t+4 stand for columns 2t, 2t+1; the right
//     operands (L_Ik, T_II) are read from Lf at the matching rows 2t, 2t+1 (one float2).
//     Products on mma.sync m16n8k8 TF32 in three terms (hi·hi + hi·lo + lo·hi, x = hi + lo with
//     hi = tf32(x), lo = tf32(x − hi)): ~2^-21 relative per product, near-fp32; fp32 accumulation.
//     Each block row's result is stored transposed in fp32 at the upper block (J, I) of Lf (the
//     layout of v6's prep_offdiag_fewbar);
//  4. after a block barrier, prep_t_to_io_tr (rows of TCINV_LS) rounds T to the io tile tb (rows
//     of CHUNK + 8, over Lf), as v6 does; it ends with a block barrier before tb is read.
// Not bitwise v6 (other summation order and TF32 terms in the off-diagonal blocks); checked against
// v6 and an fp64 inverse by bench/gdn_prep_host_emu.cpp.
// prep8 (TCINV = 2, helper prepinv2): steps 1 and 2 as above, then the off-diagonal blocks by 2x2
// recursive blocking on all 8 warps instead of step 3 (tcinv8_*, below; T row-major in Lf's lower
// triangle, tcinv8_t_to_io); not bitwise v7, checked against v7, v6 and fp64 likewise. prep9
// (TCINV = 3) runs prep8's inverse (tcinv_phase4<.., 2>); its ldmatrix loads are in prep3_tile.
#pragma once

#include "gdn_fwd.cuh"

namespace gdn {

constexpr int TCINV_LS = 72;        // Lf row stride (floats) of the TC inverse
constexpr int TCINV_THREADS = 256;  // the block (prep3_tile's PREP3_THREADS)

#ifdef GDN_HOST_EMU
void emu_mma_tf32(float* c, const u32* a, const u32* b);
#endif

// x rounded to TF32 (cvt.rna: nearest, ties away from zero), as an fp32 bit pattern with the low
// 13 bits clear. FIN (session 23, prep23; the slim prep's inverse): by integer arithmetic alone,
// half a TF32 ulp added to the bit pattern (a carry into the exponent is the rounding's), which is
// what sm_90's emulation of cvt.rna does for every finite x (VIADD, then SEL back to x when |x| is
// Inf or NaN; 4 SASS instructions with the mask, 2 here): the same bits for every finite x. An
// Inf or NaN x gives another non-finite pattern; the TF32x3 products it feeds are NaN either way
// (its lo part, x − hi, is NaN in both forms).
template <bool FIN = false>
__device__ __forceinline__ u32 to_tf32(float x) {
#ifdef GDN_HOST_EMU
  return (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
#else
  if constexpr (FIN) {
    return (__float_as_uint(x) + 0x1000u) & 0xffffe000u;
  } else {
    u32 r;
    asm("cvt.rna.tf32.f32 %0, %1;" : "=r"(r) : "f"(x));
    return r & 0xffffe000u;
  }
#endif
}
template <bool FIN = false>
__device__ __forceinline__ void tf32_split(float x, u32& hi, u32& lo) {
  hi = to_tf32<FIN>(x);
  lo = to_tf32<FIN>(x - __uint_as_float(hi));
}

// mma.sync m16n8k8, TF32 operands, fp32 accumulators: c += a b. Fragments (PTX ISA, m16n8k8
// .tf32; g = lane / 4, t = lane % 4): a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4);
// b0 (k = t, n = g), b1 (k = t + 4, n = g); c0, c1 (g, 2t / 2t + 1), c2, c3 (g + 8, 2t / 2t + 1).
__device__ __forceinline__ void mma_tf32(float* c, const u32* a, const u32* b) {
#ifdef GDN_HOST_EMU
  emu_mma_tf32(c, a, b);
#else
  asm volatile(
      "mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, "
      "{%0,%1,%2,%3};\n"
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
#endif
}

// c += a b with a, b split into TF32 hi + lo (the small terms first).
template <bool FIN = false>
__device__ __forceinline__ void mma_tf32x3(float* c, const u32 (&ah)[4], const u32 (&al)[4], const float2 bv) {
  u32 bh[2], bl[2];
  tf32_split<FIN>(bv.x, bh[0], bl[0]);
  tf32_split<FIN>(bv.y, bh[1], bl[1]);
  mma_tf32(c, al, bh);
  mma_tf32(c, ah, bl);
  mma_tf32(c, ah, bh);
}

// L = strict_lower(β_i k_i·k_j e^{Γi−Γj}) from a warp's K Kᵀ accumulators (rows r0, r0 + 8) into
// Lf (rows of TCINV_LS): prep_store_l's values, stored as float2.
__device__ __forceinline__ void tcinv_store_l(float* Lf, const float (&acc)[8][4], const float* gam, const float* bet,
                                              int r0, int cq) {
  constexpr int LS = TCINV_LS;
#pragma unroll
  for (int nt = 0; nt < 8; ++nt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int i = r0 + 8 * hf;
      float v[2];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int j = 8 * nt + cq + e;
        v[e] = j < i ? bet[i] * acc[nt][2 * hf + e] * __expf(gam[i] - gam[j]) : 0.f;
      }
      *reinterpret_cast<float2*>(&Lf[i * LS + 8 * nt + cq]) = make_float2(v[0], v[1]);
    }
  }
}

// One block step of column block J (v7's tcinv_col_block, and v8's first step): U_JI = T_IJᵀ =
// −(Σ_{k=J}^{I−1} U_Jk L_Ikᵀ) T_IIᵀ into u (C fragments: u[nt][2h + e] = U_JI[g + 8h][8nt + 2t + e]).
// FIN: to_tf32<FIN> (the same bits for finite operands).
template <int J, int I, bool FIN = false>
__device__ __forceinline__ void tcinv_col_step(const float* Lf, int lane, float (&u)[2][4]) {
  constexpr int LS = TCINV_LS;
  const int g = lane >> 2, t = lane & 3;
  // R = Σ_k U_Jk L_Ikᵀ: B[kk][n] = L[16I + n][16k + kk].
  float r[2][4];
  zero_frags(r);
#pragma unroll
  for (int k = J; k < I; ++k) {
#pragma unroll
    for (int q = 0; q < 2; ++q) {
      float av[4];
      if (k == J) {
#pragma unroll
        for (int i = 0; i < 4; ++i)  // U_JJ[g + 8(i & 1)][8q + 2t + (i >> 1)] = T_JJ[..][..]
          av[i] = Lf[(16 * J + 8 * q + 2 * t + (i >> 1)) * LS + 16 * J + g + 8 * (i & 1)];
      } else {
        const float2 lo = *reinterpret_cast<const float2*>(&Lf[(16 * J + g) * LS + 16 * k + 8 * q + 2 * t]);
        const float2 hi = *reinterpret_cast<const float2*>(&Lf[(16 * J + g + 8) * LS + 16 * k + 8 * q + 2 * t]);
        av[0] = lo.x;
        av[1] = hi.x;
        av[2] = lo.y;
        av[3] = hi.y;
      }
      u32 ah[4], al[4];
#pragma unroll
      for (int i = 0; i < 4; ++i) tf32_split<FIN>(av[i], ah[i], al[i]);
#pragma unroll
      for (int nt = 0; nt < 2; ++nt) {
        const float2 bv = *reinterpret_cast<const float2*>(&Lf[(16 * I + 8 * nt + g) * LS + 16 * k + 8 * q + 2 * t]);
        mma_tf32x3<FIN>(r[nt], ah, al, bv);
      }
    }
  }
  // U_JI = −R T_IIᵀ: B[kk][n] = T_II[n][kk].
  zero_frags(u);
#pragma unroll
  for (int q = 0; q < 2; ++q) {
    u32 ah[4], al[4];
    tf32_split<FIN>(-r[q][0], ah[0], al[0]);
    tf32_split<FIN>(-r[q][2], ah[1], al[1]);
    tf32_split<FIN>(-r[q][1], ah[2], al[2]);
    tf32_split<FIN>(-r[q][3], ah[3], al[3]);
#pragma unroll
    for (int nt = 0; nt < 2; ++nt) {
      const float2 bv = *reinterpret_cast<const float2*>(&Lf[(16 * I + 8 * nt + g) * LS + 16 * I + 8 * q + 2 * t]);
      mma_tf32x3<FIN>(u[nt], ah, al, bv);
    }
  }
}

// Column block J of T below its diagonal block (see the header), U_JI = T_IJᵀ for I = J+1 .. 3,
// stored in fp32 at the upper block (J, I) of Lf (Lf[16J + c][16I + r] = T[16I + r][16J + c]: the
// layout of v6's prep_offdiag_fewbar, read by prep_t_to_io_tr). The A operands are read back from
// there (U_Jk, k > J; a __syncwarp after each store) or from the diagonal block (U_JJ = T_JJᵀ):
// slots (g, t), (g, t + 4) = U[g][8q + 2t], U[g][8q + 2t + 1] (one float2), rows g + 8 likewise.
template <int J>
__device__ __forceinline__ void tcinv_col_block(float* Lf, int lane) {
  constexpr int LS = TCINV_LS;
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int I = J + 1; I < 4; ++I) {
    float u[2][4];
    if (I == J + 1) tcinv_col_step<J, (J + 1 < 4 ? J + 1 : 3)>(Lf, lane, u);
    else if (I == J + 2) tcinv_col_step<J, (J + 2 < 4 ? J + 2 : 3)>(Lf, lane, u);
    else tcinv_col_step<J, 3>(Lf, lane, u);
#pragma unroll
    for (int nt = 0; nt < 2; ++nt)
#pragma unroll
      for (int h = 0; h < 2; ++h)
        *reinterpret_cast<float2*>(&Lf[(16 * J + g + 8 * h) * LS + 16 * I + 8 * nt + 2 * t]) =
            make_float2(u[nt][2 * h], u[nt][2 * h + 1]);
    __syncwarp();  // U_JI is the next block row's A operand (read by other lanes)
  }
}

// ---- prep8 (v8, helper prepinv2): the off-diagonal blocks by 2x2 recursive blocking ----------
// T = [[T_AA, 0], [T_BA, T_BB]] (A = rows/columns 0..31, B = 32..63):
//  step 1 (warps 0, 1, concurrently): T_10 and T_32, v7's single block steps (tcinv_col_step<0, 1>,
//    <2, 3>: bitwise v7's T_10, T_32), stored row-major at the lower blocks (1, 0), (3, 2) over
//    L_10, L_32 (read only by the same warp's step, a __syncwarp before the store);
//  step 2a (all 8 warps, one m16n8 tile each: rows 32 + 16mb.., columns 8nt..): P = L_BA T_AA
//    (32x32, k over the 8-column blocks kb ≥ nt where T_AA is not zero), stored transposed
//    (Pᵀ, Lf[n][32 + i] = P[i][n]) in the free upper block rows 0..31, columns 32..63;
//  step 2b (all 8 warps, same tiles): T_BA = −T_BB P (k over kb ≤ 2mb + 1), row-major over L_BA.
// A operands from row-major tiles as one float2 per row (k slots t, t + 4 = columns 2t, 2t + 1, as
// v7), B operands T_AA[k][n] as two scalars, Pᵀ rows as one float2. Products TF32x3 (mma_tf32x3),
// even and odd k8 steps into two accumulators (a chain half as long), summed at the end. T ends
// row-major in the lower triangle (diagonal blocks from the substitution, unit diagonal stored),
// read by tcinv8_t_to_io. Longest chain: 16-step substitution, 4 + 4 (step 1) + 4 + 4 (step 2)
// TF32x3 steps, vs v7's 18 dependent block steps on warp 0; barriers: 6 (v7: 4).
template <int J, bool FIN = false>
__device__ __forceinline__ void tcinv8_pair(float* Lf, int lane) {
  constexpr int LS = TCINV_LS, I = J + 1;
  const int g = lane >> 2, t = lane & 3;
  float u[2][4];
  tcinv_col_step<J, I, FIN>(Lf, lane, u);
  __syncwarp();  // every lane's L_IJ reads done before T_IJ replaces it
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int h = 0; h < 2; ++h)
#pragma unroll
      for (int e = 0; e < 2; ++e)  // u[nt][2h + e] = U_JI[g + 8h][8nt + 2t + e] = T_IJ[8nt + 2t + e][g + 8h]
        Lf[(16 * I + 8 * nt + 2 * t + e) * LS + 16 * J + g + 8 * h] = u[nt][2 * h + e];
}

// c += a b in TF32x3 with a = (a01.x, a23.x, a01.y, a23.y) (rows g, g + 8; k slots t, t + 4) and
// b = (bv.x, bv.y) (k slots t, t + 4).
template <bool FIN = false>
__device__ __forceinline__ void tcinv8_mma(float* c, const float2 lo, const float2 hi, const float2 bv) {
  u32 ah[4], al[4];
  tf32_split<FIN>(lo.x, ah[0], al[0]);
  tf32_split<FIN>(hi.x, ah[1], al[1]);
  tf32_split<FIN>(lo.y, ah[2], al[2]);
  tf32_split<FIN>(hi.y, ah[3], al[3]);
  mma_tf32x3<FIN>(c, ah, al, bv);
}

// Step 2a for warp w (mb = w >> 2, nt = w & 3): P tile = L_BA T_AA, stored as Pᵀ.
template <bool FIN = false>
__device__ __forceinline__ void tcinv8_p(float* Lf, int warp, int lane) {
  constexpr int LS = TCINV_LS;
  const int g = lane >> 2, t = lane & 3, mb = warp >> 2, nt = warp & 3;
  const int ar = 32 + 16 * mb + g;  // A rows ar, ar + 8 (L_BA, Lf columns 0..31)
  float c[2][4];
  zero_frags(c);
#pragma unroll
  for (int kb = 0; kb < 4; ++kb) {
    if (kb < nt) continue;  // T_AA[k][n] = 0 for k < n
    const float2 lo = *reinterpret_cast<const float2*>(&Lf[ar * LS + 8 * kb + 2 * t]);
    const float2 hi = *reinterpret_cast<const float2*>(&Lf[(ar + 8) * LS + 8 * kb + 2 * t]);
    const float2 bv = make_float2(Lf[(8 * kb + 2 * t) * LS + 8 * nt + g], Lf[(8 * kb + 2 * t + 1) * LS + 8 * nt + g]);
    tcinv8_mma<FIN>(c[kb & 1], lo, hi, bv);
  }
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int e = 0; e < 2; ++e)  // P[16mb + g + 8h][8nt + 2t + e] -> Pᵀ
      Lf[(8 * nt + 2 * t + e) * LS + 32 + 16 * mb + g + 8 * h] = c[0][2 * h + e] + c[1][2 * h + e];
}

// Step 2b's products for warp w (same tile): c[0] + c[1] = T_BB P for rows ar(w) + 8h of T_BA
// (ar = 32 + 16 (w >> 2) + lane / 4), columns 8 (w & 3) + 2 (lane & 3) + e, as two accumulators
// over alternate k8 steps; the callers store −(c[0] + c[1]) (fp32 here, io in prep15).
template <bool FIN = false>
__device__ __forceinline__ int tcinv8_tba_products(const float* Lf, int warp, int lane, float (&c)[2][4]) {
  constexpr int LS = TCINV_LS;
  const int g = lane >> 2, t = lane & 3, mb = warp >> 2, nt = warp & 3;
  const int ar = 32 + 16 * mb + g;  // A rows (T_BB, Lf columns 32..63)
  zero_frags(c);
#pragma unroll
  for (int kb = 0; kb < 4; ++kb) {
    if (kb > 2 * mb + 1) continue;  // T_BB[i][k] = 0 for k > i
    const float2 lo = *reinterpret_cast<const float2*>(&Lf[ar * LS + 32 + 8 * kb + 2 * t]);
    const float2 hi = *reinterpret_cast<const float2*>(&Lf[(ar + 8) * LS + 32 + 8 * kb + 2 * t]);
    const float2 bv = *reinterpret_cast<const float2*>(&Lf[(8 * nt + g) * LS + 32 + 8 * kb + 2 * t]);
    tcinv8_mma<FIN>(c[kb & 1], lo, hi, bv);
  }
  return ar;
}

// Step 2b for warp w (same tile): T_BA = −T_BB P, row-major over L_BA.
__device__ __forceinline__ void tcinv8_tba(float* Lf, int warp, int lane) {
  constexpr int LS = TCINV_LS;
  const int t = lane & 3, nt = warp & 3;
  float c[2][4];
  const int ar = tcinv8_tba_products(Lf, warp, lane, c);
#pragma unroll
  for (int h = 0; h < 2; ++h)
    *reinterpret_cast<float2*>(&Lf[(ar + 8 * h) * LS + 8 * nt + 2 * t]) =
        make_float2(-(c[0][2 * h] + c[1][2 * h]), -(c[0][2 * h + 1] + c[1][2 * h + 1]));
}

// T's elements (r, cc), (r, cc + 1) (cc even) from Lf's fp32 rows (row-major lower triangle, the
// unit diagonal and the zero upper triangle implied): the pair every conversion of T to io packs.
__device__ __forceinline__ float2 tcinv_t_pair(const float* Lf, int r, int cc) {
  const float2 v = *reinterpret_cast<const float2*>(&Lf[r * TCINV_LS + cc]);
  return make_float2(cc < r ? v.x : (cc == r ? 1.f : 0.f), cc + 1 < r ? v.y : (cc + 1 == r ? 1.f : 0.f));
}

// T (row-major in Lf's lower triangle, unit diagonal) to the io dtype over the same region (tb,
// rows of CHUNK + 8), through registers: one float2 per pair (a warp reads one contiguous row);
// barriers after the reads and after the writes.
template <typename T>
__device__ __forceinline__ void tcinv8_t_to_io(const float* Lf, T* tb, int tid) {
  prep_t_pairs_to_io<T, TCINV_THREADS, BlockBarrier>(tb, tid, [&](int r, int cc) { return tcinv_t_pair(Lf, r, cc); });
}

// Phase 4 of prep7 (VER = 1) / prep8 and prep9 (VER = 2) (after the barrier that follows tcinv_store_l):
// T = (I + L)^{-1} from Lf into tb (over Lf), TCINV_THREADS threads; threads 64.. first run
// `side(t2, n2)` (the backward's E copy) while threads 0..63 solve the diagonal blocks; then the
// off-diagonal blocks on the tensor cores (v7: warps 0..2 column blocks 0..2; v8: the 2x2 blocking
// on all warps); then T to the io dtype. Ends with a block barrier.
template <typename T, int VER, typename Side>
__device__ __forceinline__ void tcinv_phase4(float* Lf, T* tb, int tid, Side side) {
  const int warp = tid >> 5, lane = tid & 31;
  if (tid < CHUNK) {
    prep_diag_invert_warp<TCINV_LS>(Lf, tid);
  } else {
    side(tid - CHUNK, TCINV_THREADS - CHUNK);
  }
  __syncthreads();
  if (VER == 2) {
    // prep8: 2x2 recursive blocking (see tcinv8_pair).
    if (warp == 0) tcinv8_pair<0>(Lf, lane);
    else if (warp == 1) tcinv8_pair<2>(Lf, lane);
    __syncthreads();
    tcinv8_p(Lf, warp, lane);
    __syncthreads();
    tcinv8_tba(Lf, warp, lane);
    __syncthreads();
    tcinv8_t_to_io<T>(Lf, tb, tid);
  } else {
    if (warp == 0) tcinv_col_block<0>(Lf, lane);
    else if (warp == 1) tcinv_col_block<1>(Lf, lane);
    else if (warp == 2) tcinv_col_block<2>(Lf, lane);
    __syncthreads();
    prep_t_to_io_tr<T, TCINV_THREADS, TCINV_LS>(Lf, tb, tid);
  }
}

// ---- prep10 (helper prep10, session 9): T in the io dtype inside its own fp32 rows ----------

// Element offset of T's io row r in the fp32 tile's region (gdn_fwd_prep10.cuh's header): 144 r − 8 ((r >> 2) & 1).
__device__ __forceinline__ int tcinv10_tb_row(int r) { return (TCINV_LS * 2) * r - 8 * ((r >> 2) & 1); }

// T's rows warp + 8u, u = U0 .. U0 + 3, from fp32 (Lf, row-major lower triangle, unit diagonal
// implied) to the io dtype at tcinv10_tb_row: tcinv8_t_to_io's values; one warp per row, its reads
// before its writes (__syncwarp). Other warps may meanwhile read anything but these rows' columns
// 0..31 and the padding of the rows above them.
template <typename T, int U0>
__device__ __forceinline__ void tcinv10_rows_to_io(float* Lf, int warp, int lane) {
  T* tb = reinterpret_cast<T*>(Lf);
  const int cc = 2 * lane;
  u32 tv[4];
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    const float2 v = tcinv_t_pair(Lf, warp + 8 * (U0 + u), cc);
    tv[u] = Io<T>::pack(v.x, v.y);
  }
  __syncwarp();
#pragma unroll
  for (int u = 0; u < 4; ++u) {
    const int r = warp + 8 * (U0 + u);
    *reinterpret_cast<u32*>(&tb[tcinv10_tb_row(r) + cc]) = tv[u];
  }
}

}  // namespace gdn
