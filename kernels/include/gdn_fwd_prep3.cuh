// Gated DeltaNet per-chunk factors, v3 ("prep3"): the same math as fwd_prep_body (gdn_fwd.cuh,
// INV_SIDE), bitwise, on 8 warps per chunk instead of 4, with coalesced factor stores.
//
// Contract: identical inputs, outputs and workspace layout to fwd_prep_body<T, K, V, KEEP>
// (forward: W, Q⁺, Kᴿ, Ũᵀ, A, Γ_last; backward's KEEP: T, E, Γ, β as well); grid
// (chunk slots, HO), PREP3_THREADS threads, Prep3Smem<K, V>::bytes of dynamic shared memory.
// Every output element is produced by the same sequence of fp32 operations and mma.sync
// instructions (same operands, same accumulation order) as fwd_prep_body, so the results are
// bitwise equal (checked on the CPU by bench/gdn_prep_host_emu.cpp).
//
// What differs (speed only):
//  - 256 threads: K Kᵀ on warps 0-3 and Q Kᵀ on warps 4-7 (32 accumulators per thread instead of
//    64); the off-diagonal sums of the triangular inverse I per thread instead of 2I (and without
//    their leading zero-coefficient terms, see below); W split in
//    two column halves; Ũᵀ one 16-row value tile per warp; the row phases 8 rows per warp.
//    Fewer registers per thread (launch bound: 3 blocks of 8 warps per SM = 24 warps, vs 16).
//  - A, W and Ũᵀ leave through shared-memory staging tiles as 16-byte row-contiguous stores
//    (fwd_prep_body writes 4-byte fragments that half-fill 32-byte sectors); A (and, for the
//    backward, E) is copied out by warps 2-7 while warps 0-1 solve the diagonal 16x16 blocks.
#pragma once

#include "gdn_fwd.cuh"

namespace gdn {

constexpr int PREP3_THREADS = 256;
constexpr int PREP3_MIN_BLOCKS = 3;

template <int K, int V>
struct Prep3Smem {
  static constexpr int KP = K + 8;
  static constexpr int VP = V + 8;
  static constexpr int CP = CHUNK + 8;
  static constexpr int FP = CHUNK + 1;
  // R1: raw then normalised k -> L, then T in place (fp32) -> T in the io dtype.
  // R2: raw then scaled q -> E = β k e^Γ -> the W staging tile [64][KP].
  // R3: raw v -> Y = β v -> (with RA) the Ũᵀ staging tile [V][CP].
  // RA: the A staging tile [64][CP].
  static constexpr size_t r1_bytes = (CHUNK * KP * 2 > CHUNK * FP * 4) ? CHUNK * KP * 2 : CHUNK * FP * 4;
  static constexpr size_t r1_off = 0;
  static constexpr size_t r2_off = (r1_off + r1_bytes + 15) / 16 * 16;
  static constexpr size_t r3_off = r2_off + CHUNK * KP * 2;
  static constexpr size_t ra_off = r3_off + CHUNK * VP * 2;
  static constexpr size_t gam_off = ra_off + CHUNK * CP * 2;
  static constexpr size_t bet_off = gam_off + CHUNK * 4;
  static constexpr size_t bytes = bet_off + CHUNK * 4;
  static_assert(r3_off + static_cast<size_t>(V) * CP * 2 <= gam_off, "Ũᵀ staging overflows R3 + RA");
};

template <typename T, int K, int V, bool KEEP = false>
__device__ __forceinline__ void fwd_prep3_body(const FwdParams& p, const PrepKeep& keep = PrepKeep{}) {
  static_assert(V == 64 || V == 128, "prep3 serves V = 64 and 128");
  static_assert(K == 64 || K == 128, "prep3 serves K = 64 and 128");
  using S = Prep3Smem<K, V>;
  using IO = Io<T>;
  constexpr int NT = PREP3_THREADS;
  constexpr int KP = S::KP, VP = S::VP, CP = S::CP, FP = S::FP;
  extern __shared__ __align__(16) unsigned char smem[];
  T* kS = reinterpret_cast<T*>(smem + S::r1_off);
  float* Lf = reinterpret_cast<float*>(smem + S::r1_off);  // after kS is dead
  T* tb = reinterpret_cast<T*>(smem + S::r1_off);          // after Lf is dead
  T* qS = reinterpret_cast<T*>(smem + S::r2_off);
  T* eS = reinterpret_cast<T*>(smem + S::r2_off);          // after qS is dead
  T* wS = reinterpret_cast<T*>(smem + S::r2_off);          // after eS is dead
  T* yS = reinterpret_cast<T*>(smem + S::r3_off);
  T* uS = reinterpret_cast<T*>(smem + S::r3_off);          // after yS and aS are dead
  T* aS = reinterpret_cast<T*>(smem + S::ra_off);
  float* gam = reinterpret_cast<float*>(smem + S::gam_off);
  float* bet = reinterpret_cast<float*>(smem + S::bet_off);

  const int c = blockIdx.x, h = blockIdx.y;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  int seq, len;
  long long t0;
  if (!locate_chunk(p, c, seq, t0, len)) return;
  const int HO = p.ho;
  const int qh = h / (HO / p.h), kh = h / (HO / p.hk), vh = h / (HO / p.hv);
  const size_t ch = static_cast<size_t>(c) * HO + h;

  // Phase 1: raw q, k, v rows into smem, in flight while the gates are computed.
  prep_load_qkv<T, K, V, NT>(p, kS, qS, yS, t0, len, qh, kh, vh, tid);
  prep_gates(p, gam, bet, t0, len, h, HO, tid, lane);
  const float gl = prep_finish_gates(p, gam, ch, tid);

  // Phase 2 (warp per row, 8 rows per warp): normalise k, scale q (in place), Y = β v; Q⁺ and
  // Kᴿ go to the workspace (each row one contiguous warp store).
  {
    T* wq = static_cast<T*>(p.ws_q) + ch * CHUNK * K;
    T* wk = static_cast<T*>(p.ws_kr) + ch * CHUNK * K;
#pragma unroll 2
    for (int r = warp; r < CHUNK; r += NT / 32) prep_norm_row<T, K, V>(p, kS, qS, yS, wq, wk, gam, bet, gl, r, lane);
  }
  __syncthreads();

  // Phase 3: warps 0-3 K Kᵀ, warps 4-7 Q Kᵀ (warp owns rows 16·(w mod 4) + 0..15, all 64
  // columns), in registers until kS / qS are dead.
  const int rt = warp & 3, hi = warp >> 2;
  const int r0 = 16 * rt + (lane >> 2), cq = 2 * (lane & 3);
  float acc[8][4];
  zero_frags(acc);
  {
    const T* as = hi ? qS : kS;
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) {
      const int col = 16 * kk + cq;
      u32 a[4];
      ld_a_frag(a, as, KP, r0, col);
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        const int n = 8 * nt + (lane >> 2);
        u32 b[2] = {ld32(&kS[n * KP + col]), ld32(&kS[n * KP + col + 8])};
        IO::mma(acc[nt], a, b);
      }
    }
  }
  __syncthreads();  // qS dead: E takes its place (from the normalised kS)
  {
#pragma unroll 2
    for (int r = warp; r < CHUNK; r += NT / 32) prep_e_row<T, K>(kS, eS, gam, bet, r, lane);
    // A = tril(Q Kᵀ ⊙ decay) into its staging tile.
    if (hi) prep_store_a<T, CP>(aS, acc, gam, r0, cq);
  }
  __syncthreads();  // kS dead: L (fp32) takes its place
  if (!hi) prep_store_l(Lf, acc, gam, bet, r0, cq);
  __syncthreads();

  // Phase 4: T = (I + L)^{-1} in fp32, in place over L. Diagonal 16x16 blocks: thread t < 64
  // solves column (t & 15) of block (t >> 4) in registers; meanwhile warps 2-7 copy A (and the
  // backward's E) out with 16-byte stores.
  {
    float col[16];
    const int base = 16 * (tid >> 4), cl = tid & 15;
    if (tid < CHUNK) {
      prep_diag_solve(Lf, col, base, cl);
    } else {
      const int t2 = tid - CHUNK;
      constexpr int N2 = NT - CHUNK;
      store_tile16<T, CHUNK, CHUNK>(static_cast<T*>(p.ws_a) + ch * CHUNK * CHUNK, aS, t2, N2);
      if (KEEP) store_tile16<T, CHUNK, K>(static_cast<T*>(keep.ws_e) + ch * CHUNK * K, eS, t2, N2);
    }
    __syncthreads();
    if (tid < CHUNK) prep_diag_store(Lf, col, base, cl);
    __syncthreads();
  }
  // Off-diagonal blocks, block row by block row: T_IJ = −T_II Σ_{m=J}^{I−1} L_Im T_mJ, the
  // partial sums stashed in the strictly upper triangle at the transposed place. Thread t owns
  // output (rr, cc) = (t >> 4, t & 15) of every block J < I. Each sum is fwd_prep_body's INV_SIDE
  // sum (m ascending, zero coefficients for m < 16J + cc) without its terms m < 16J: those all
  // have a zero coefficient, and a run of fma(+0, x, +0) over finite x stays +0, so starting at
  // m = 16J from +0 is bitwise the same sum with a third fewer terms (I = 3: 96 instead of 144).
#pragma unroll
  for (int I = 1; I < 4; ++I) {
    const int rr = tid >> 4, cc = tid & 15;
    const int row = 16 * I + rr;
    float sacc[3];
#pragma unroll
    for (int u = 0; u < 3; ++u) sacc[u] = 0.f;
#pragma unroll
    for (int mb = 0; mb < I; ++mb) {
#pragma unroll 4
      for (int mi = 0; mi < 16; ++mi) {
        const int m = 16 * mb + mi;
        const float lrow = Lf[row * FP + m];
#pragma unroll
        for (int J = 0; J <= mb; ++J) {
          const int colj = 16 * J + cc;
          const float a = m >= colj ? lrow : 0.f;
          sacc[J] = fmaf(a, Lf[m * FP + colj], sacc[J]);
        }
      }
    }
    __syncthreads();
#pragma unroll
    for (int J = 0; J < I; ++J) Lf[(16 * J + cc) * FP + 16 * I + rr] = sacc[J];
    __syncthreads();
#pragma unroll
    for (int J = 0; J < I; ++J) {
      const int colj = 16 * J + cc;
      float s = 0.f;
#pragma unroll
      for (int m = 0; m < 16; ++m) {  // terms past m = rr have a zero coefficient
        const float tii = m < rr ? Lf[row * FP + 16 * I + m] : (m == rr ? 1.f : 0.f);
        s = fmaf(tii, Lf[colj * FP + 16 * I + m], s);
      }
      sacc[J] = -s;
    }
    __syncthreads();
#pragma unroll
    for (int J = 0; J < I; ++J) Lf[(16 * I + rr) * FP + 16 * J + cc] = sacc[J];
    __syncthreads();
  }
  // T to the io dtype, over the same region (through registers).
  prep_t_to_io<T, NT>(Lf, tb, tid);

  // Phase 5: W = T E (64×K): warp (rt, hi) owns rows 16·rt + 0..15 and key columns
  // [hi·K/2, (hi+1)·K/2). A = T (row-major), B = E via ldmatrix.trans.
  {
    constexpr int NPW = K / 32;  // 16-column pairs per warp
    float wacc[2 * NPW][4];
    zero_frags(wacc);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      if (kk > rt) break;  // T is lower triangular
      const int col = 16 * kk + cq;
      u32 a[4];
      ld_a_frag(a, tb, CP, r0, col);
      const int lrow = 16 * kk + (lane & 7) + 8 * ((lane >> 3) & 1);
#pragma unroll
      for (int npl = 0; npl < NPW; ++npl) {
        const int np = hi * NPW + npl;
        u32 r[4];
        ldsm_x4_t(r, &eS[lrow * KP + 16 * np + 8 * (lane >> 4)]);
        IO::mma(wacc[2 * npl], a, r);
        IO::mma(wacc[2 * npl + 1], a, r + 2);
      }
    }
    __syncthreads();  // every warp's E reads done: the W staging tile takes E's place
#pragma unroll
    for (int ntl = 0; ntl < 2 * NPW; ++ntl) {
      const int nt = 2 * hi * NPW + ntl;
      *reinterpret_cast<u32*>(&wS[r0 * KP + 8 * nt + cq]) = IO::pack(wacc[ntl][0], wacc[ntl][1]);
      *reinterpret_cast<u32*>(&wS[(r0 + 8) * KP + 8 * nt + cq]) = IO::pack(wacc[ntl][2], wacc[ntl][3]);
    }
  }
  // Ũᵀ = Yᵀ Tᵀ (V×64): warp w owns value rows 16·(w mod V/16) + 0..15 and token columns
  // [8·nt0, 8·(nt0 + NTU)); A = Yᵀ via ldmatrix.trans, B = Tᵀ read from T row-major.
  {
    constexpr int VT = V / 16;             // 16-row value tiles: 8 or 4
    constexpr int NTU = 8 * VT / (NT / 32);  // token n-tiles per warp: 8 or 4
    const int d0 = 16 * (warp % VT), nt0 = (warp / VT) * NTU;
    float uacc[NTU][4];
    zero_frags(uacc);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      u32 a[4];
      const int mi = lane >> 3;
      ldsm_x4_t(a, &yS[(16 * kk + (lane & 7) + 8 * (mi >> 1)) * VP + d0 + 8 * (mi & 1)]);
#pragma unroll
      for (int ntl = 0; ntl < NTU; ++ntl) {
        const int nt = nt0 + ntl;
        if (kk > (nt >> 1)) continue;  // Tᵀ[j][i] = 0 for j > i
        const int n = 8 * nt + (lane >> 2);
        u32 b[2] = {ld32(&tb[n * CP + 16 * kk + cq]), ld32(&tb[n * CP + 16 * kk + cq + 8])};
        IO::mma(uacc[ntl], a, b);
      }
    }
    __syncthreads();  // Y reads done, W staged: Ũᵀ staging takes Y's (and A's) place
    store_tile16<T, CHUNK, K>(static_cast<T*>(p.ws_w) + ch * CHUNK * K, wS, tid, NT);
    const int d = d0 + (lane >> 2);
#pragma unroll
    for (int ntl = 0; ntl < NTU; ++ntl) {
      const int nt = nt0 + ntl;
      *reinterpret_cast<u32*>(&uS[d * CP + 8 * nt + cq]) = IO::pack(uacc[ntl][0], uacc[ntl][1]);
      *reinterpret_cast<u32*>(&uS[(d + 8) * CP + 8 * nt + cq]) = IO::pack(uacc[ntl][2], uacc[ntl][3]);
    }
  }
  __syncthreads();
  store_tile16<T, V, CHUNK>(static_cast<T*>(p.ws_ut) + ch * V * CHUNK, uS, tid, NT);
  if (KEEP) {
    // T (io, unit diagonal) and the per-token Γ, β for the backward (E left in phase 4).
    store_tile16<T, CHUNK, CHUNK>(static_cast<T*>(keep.ws_t) + ch * CHUNK * CHUNK, tb, tid, NT);
    if (tid < CHUNK) {
      keep.ws_gam[ch * CHUNK + tid] = gam[tid];
      keep.ws_bet[ch * CHUNK + tid] = bet[tid];
    }
  }
}

}  // namespace gdn
