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
//
// Variants of the same tile code (prep3_tile), all bitwise the same outputs (session 6, H200
// times in bench/gdn_results.md):
//  - prep6 (fwd_prep3_body<..., FEWBAR, DIRECT_A>; the default): A leaves straight from the Q Kᵀ
//    accumulators (no staging tile), so Prep6Smem is 53760 B at K = V = 128 and, at 64
//    registers, 4 blocks = 32 warps fit an SM (1.06-1.09x prep3); the inverse as prep5's.
//  - prep5 (FEWBAR alone; not bundled, 0.98x prep3): the off-diagonal inverse with one barrier per block row
//    (prep_offdiag_fewbar: T_II products through shuffles, results stored transposed).
//  - prep4 (fwd_prep4_body; not bundled, the CPU emulation still checks it): persistent, 2 blocks per SM looping over tiles with the next tile's
//    inputs prefetched into a second buffer set (0.83x prep3: 16 warps per SM instead of 24).
#pragma once

#include "gdn_fwd.cuh"
#include "gdn_fwd_tcinv.cuh"

namespace gdn {

// Phase 3's products on ldmatrix.x4 operands (prep9; also the slim prep's): warp (rt, hi) forms
// rows 16·rt + 0..15 of K Kᵀ (hi = 0) or Q Kᵀ (hi = 1), all 64 columns, into acc (n-tile j in
// acc[j]). Lane l addresses row (l & 7) + 8·((l >> 3) & 1) of the A tile, and row
// 8·(2·np + (l >> 4)) + (l & 7), column offset 8·((l >> 3) & 1) of the B pair np, so the four
// matrices are exactly ld_a_frag's a0..a3 and the B fragments of n-tiles 2np, 2np + 1.
template <typename T, int K>
__device__ __forceinline__ void prep_qk_products_ldsm(float (&acc)[8][4], const T* kS, const T* qS, int rt,
                                                      int hi, int lane) {
  using IO = Io<T>;
  constexpr int KP = K + 8;
  const T* as = hi ? qS : kS;
  const int ar = 16 * rt + (lane & 7) + 8 * ((lane >> 3) & 1), ac = 8 * (lane >> 4);
  const int br = 8 * (lane >> 4) + (lane & 7), bc = 8 * ((lane >> 3) & 1);
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    u32 a[4];
    ldsm_x4(a, &as[ar * KP + 16 * kk + ac]);
#pragma unroll
    for (int np = 0; np < 4; ++np) {
      u32 b[4];
      ldsm_x4(b, &kS[(16 * np + br) * KP + 16 * kk + bc]);
      IO::mma(acc[2 * np], a, b);
      IO::mma(acc[2 * np + 1], a, b + 2);
    }
  }
}

constexpr int PREP3_THREADS = 256;
constexpr int PREP3_MIN_BLOCKS = 3;
static_assert(PREP3_THREADS == TCINV_THREADS, "the TC inverse's block");

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

// The off-diagonal inverse's sums of block row I for output row `row` = 16·I + rr, column cc of
// every block J < I: sacc[J] = Σ_{m=16J}^{16I−1} L[row][m] T[m][16J+cc] (m ascending, one fmaf
// chain from +0, zero coefficient for m < 16J + cc). T[m][16J+cc] is read in place (Lf[m][·]);
// TR (prep_offdiag_fewbar): in place only in the diagonal block (mb == J), else stored transposed
// (Lf[16J+cc][m]). Shared by prep_offdiag_fewbar and prep3_tile's four-barrier loop.
template <bool TR>
__device__ __forceinline__ void prep_offdiag_sums(const float* Lf, float (&sacc)[3], int I, int row, int cc) {
  constexpr int FP = CHUNK + 1;
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
        const float t = TR && mb != J ? Lf[colj * FP + m] : Lf[m * FP + colj];
        sacc[J] = fmaf(a, t, sacc[J]);
      }
    }
  }
}

// The off-diagonal blocks of T = (I + L)^{-1} with one barrier per block row (prep4; prep3's loop
// in prep3_tile takes four): the same sums, bitwise. Thread t owns output (rr, cc) = (t & 15,
// t >> 4) of every block J < I, so the 16 threads of one column cc are 16 lanes of one warp:
//  - S_IJ[rr][cc] = Σ_{m=16J}^{16I−1} L[16I+rr][m] T[m][16J+cc] (m ascending, the same fmaf chain
//    as prep3's: zero coefficient for m < 16J + cc);
//  - T_IJ[rr][cc] = −Σ_{m=0}^{15} T_II[rr][m] S_IJ[m][cc] with T_II[rr][m] = 0 past m = rr and 1 at
//    m = rr (prep3's 16-term chain), S_IJ[m][cc] fetched from lane m of the column's half-warp by a
//    shuffle instead of a shared-memory stash (two barriers fewer);
//  - T_IJ stored transposed, at Lf[16J+cc][16I+rr] in the strictly upper triangle (a third
//    barrier fewer: the in-place store would overwrite L_IJ, which this block row's sums still
//    read). Later block rows read the finished blocks T_mJ (m in block row mb > J) from there; the
//    diagonal blocks stay in place (prep_diag_store). prep_t_to_io_tr reads the result.
// Lf's strictly upper part of the diagonal blocks is +0 (prep_store_l), as prep3 reads it.
__device__ __forceinline__ void prep_offdiag_fewbar(float* Lf, int tid, int lane) {
  constexpr int FP = CHUNK + 1;
  const int rr = tid & 15, cc = tid >> 4, src0 = lane & 16;
#pragma unroll
  for (int I = 1; I < 4; ++I) {
    const int row = 16 * I + rr;
    float sacc[3];
    prep_offdiag_sums<true>(Lf, sacc, I, row, cc);
    float tout[3];
#pragma unroll
    for (int J = 0; J < I; ++J) {
      float s = 0.f;
#pragma unroll
      for (int m = 0; m < 16; ++m) {
        const float tii = m < rr ? Lf[row * FP + 16 * I + m] : (m == rr ? 1.f : 0.f);
        s = fmaf(tii, __shfl_sync(0xffffffffu, sacc[J], src0 + m), s);
      }
      tout[J] = -s;
    }
#pragma unroll
    for (int J = 0; J < I; ++J) Lf[(16 * J + cc) * FP + 16 * I + rr] = tout[J];
    __syncthreads();
  }
}

// The shared-memory regions one prep3 tile works in (see Prep3Smem): r1 (k -> L -> T), r2 (q -> E
// -> W staging), r3 (v -> Y), ra (A staging), us (the Ũᵀ staging tile, V rows of CHUNK + 8, over
// r3 and the part of ra next to it), gam, bet.
template <typename T>
struct Prep3Bufs {
  T* r1;
  T* r2;
  T* r3;
  T* ra;
  T* us;
  float* gam;
  float* bet;
};

// Phase 5's Ũᵀ = Yᵀ Tᵀ for one warp (prep3_tile, prep10_tile): value rows d0 + 0..15, token
// n-tiles nt0 + [0, N) into uacc, k-blocks kk ascending; A = Yᵀ via ldmatrix.trans (Y in rows of
// VP), B = Tᵀ read from T row-major (row r of T at element t_row(r) of tb; the blocks with
// Tᵀ[j][i] = 0 for j > i skipped). LDSM (prep9): n-tiles nt, nt + 1 by one ldmatrix.x4, else
// 32-bit loads per n-tile: the same operand bits into the same mma.sync.
template <typename T, int VP, bool LDSM, int N, typename TRow>
__device__ __forceinline__ void prep_ut_products(float (&uacc)[N][4], const T* yS, const T* tb, int d0, int nt0,
                                                 int lane, TRow t_row) {
  const int cq = 2 * (lane & 3);
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    u32 a[4];
    const int mi = lane >> 3;
    ldsm_x4_t(a, &yS[(16 * kk + (lane & 7) + 8 * (mi >> 1)) * VP + d0 + 8 * (mi & 1)]);
    if (LDSM) {
#pragma unroll
      for (int ntl = 0; ntl < N; ntl += 2) {
        const int nt = nt0 + ntl;
        if (kk > (nt >> 1)) continue;  // Tᵀ[j][i] = 0 for j > i
        u32 b[4];
        ldsm_x4(b, &tb[t_row(8 * nt + 8 * (lane >> 4) + (lane & 7)) + 16 * kk + 8 * ((lane >> 3) & 1)]);
        Io<T>::mma(uacc[ntl], a, b);
        Io<T>::mma(uacc[ntl + 1], a, b + 2);
      }
    } else {
#pragma unroll
      for (int ntl = 0; ntl < N; ++ntl) {
        const int nt = nt0 + ntl;
        if (kk > (nt >> 1)) continue;  // Tᵀ[j][i] = 0 for j > i
        const int n = 8 * nt + (lane >> 2);
        u32 b[2] = {ld32(&tb[t_row(n) + 16 * kk + cq]), ld32(&tb[t_row(n) + 16 * kk + cq + 8])};
        Io<T>::mma(uacc[ntl], a, b);
      }
    }
  }
}

// Phases 1b-3 of a prep3-family tile (prep3_tile and prep10_tile, gdn_fwd_prep10.cuh): the gates
// from their raw bits, the q, k, v copies waited for (`next_in_flight`: the newest cp.async group is
// left in flight), Γ_last to ws_gl[ch]; phase 2 (normalised k, scaled q in place, Y = β v; Q⁺, Kᴿ to
// the workspace); phase 3: warps 0-3 K Kᵀ, warps 4-7 Q Kᵀ into acc (warp owns rows 16·(w mod 4) +
// 0..15, all 64 columns; LDSM: operands by ldmatrix.x4, bitwise the 32-bit loads). Ends without a
// barrier (the caller's, after which qS is dead).
template <typename T, int K, int V, bool LDSM>
__device__ __forceinline__ void prep3_front(const FwdParams& p, T* kS, T* qS, T* yS, float* gam, float* bet,
                                            size_t ch, int h, int len, const PrepGateRaw& raw, bool next_in_flight,
                                            float (&acc)[8][4]) {
  using IO = Io<T>;
  constexpr int NT = PREP3_THREADS;
  constexpr int KP = K + 8;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;

  // Phase 1b: the gates from their raw bits; then (prep_finish_gates) the q, k, v copies.
  prep_gates_cook(p, gam, bet, len, h, raw, tid, lane);
  const float gl = prep_finish_gates(p, gam, ch, tid, next_in_flight);

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
  zero_frags(acc);
  if (LDSM) {
    // prep9: the same operands through ldmatrix.x4 (4 LDSM instead of 16 LDS.32 per k-step for B,
    // 1 instead of 4 for A).
    prep_qk_products_ldsm<T, K>(acc, kS, qS, rt, hi, lane);
  } else {
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
}

// Phases 1b-5 of prep3 for chunk slot c (tokens t0 .. t0 + len − 1), output head h: the q, k, v
// rows are (or are being) copied into b.r2, b.r1, b.r3 by this thread's cp.async groups, the
// gates' raw bits are in `raw` (threads 0..63). `next_in_flight`: the newest cp.async group is the
// next tile's (left in flight), else every group is waited for. Ends without a barrier (the
// caller's, before any region is rewritten).
template <typename T, int K, int V, bool KEEP, bool FEWBAR = false, bool DIRECT_A = false, int TCINV = 0>
__device__ __forceinline__ void prep3_tile(const FwdParams& p, const PrepKeep& keep, const Prep3Bufs<T>& b, int c,
                                           int h, int len, const PrepGateRaw& raw, bool next_in_flight) {
  static_assert(V == 64 || V == 128, "prep3 serves V = 64 and 128");
  static_assert(K == 64 || K == 128, "prep3 serves K = 64 and 128");
  using S = Prep3Smem<K, V>;
  using IO = Io<T>;
  constexpr int NT = PREP3_THREADS;
  // prep9 (TCINV = 3): prep8's tile with the K Kᵀ / Q Kᵀ, W (A = T) and Ũᵀ (B = Tᵀ) fragments
  // loaded by ldmatrix.x4: the same operand bits into the same mma.sync, so bitwise prep8.
  constexpr bool LDSM = TCINV == 3;
  constexpr int KP = S::KP, VP = S::VP, CP = S::CP, FP = S::FP;
  T* kS = b.r1;
  float* Lf = reinterpret_cast<float*>(b.r1);  // after kS is dead
  T* tb = b.r1;                                // after Lf is dead
  T* qS = b.r2;
  T* eS = b.r2;  // after qS is dead
  T* wS = b.r2;  // after eS is dead
  T* yS = b.r3;
  T* uS = b.us;  // after yS and aS are dead
  T* aS = b.ra;
  float* gam = b.gam;
  float* bet = b.bet;

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int HO = p.ho;
  const size_t ch = static_cast<size_t>(c) * HO + h;
  const int rt = warp & 3, hi = warp >> 2;
  const int r0 = 16 * rt + (lane >> 2), cq = 2 * (lane & 3);
  float acc[8][4];
  prep3_front<T, K, V, LDSM>(p, kS, qS, yS, gam, bet, ch, h, len, raw, next_in_flight, acc);
  __syncthreads();  // qS dead: E takes its place (from the normalised kS)
  {
#pragma unroll 2
    for (int r = warp; r < CHUNK; r += NT / 32) prep_e_row<T, K>(kS, eS, gam, bet, r, lane);
    // A = tril(Q Kᵀ ⊙ decay) into its staging tile.
    if (hi) {
      if (DIRECT_A) prep_store_a<T, CHUNK>(static_cast<T*>(p.ws_a) + ch * CHUNK * CHUNK, acc, gam, r0, cq);
      else prep_store_a<T, CP>(aS, acc, gam, r0, cq);
    }
  }
  __syncthreads();  // kS dead: L (fp32) takes its place
  if (!hi) {
    if (TCINV) tcinv_store_l(Lf, acc, gam, bet, r0, cq);
    else prep_store_l(Lf, acc, gam, bet, r0, cq);
  }
  __syncthreads();

  // Phase 4: T = (I + L)^{-1} in fp32, in place over L. Diagonal 16x16 blocks: thread t < 64
  // solves column (t & 15) of block (t >> 4) in registers; meanwhile warps 2-7 copy A (and the
  // backward's E) out with 16-byte stores.
  if (TCINV) {
    // prep7 / prep8 / prep9: the off-diagonal blocks on the tensor cores (gdn_fwd_tcinv.cuh), T
    // into tb; threads 64.. copy the backward's E meanwhile (A left from registers already).
    static_assert(!TCINV || DIRECT_A, "prep7 stores A from registers");
    tcinv_phase4<T, (TCINV >= 2 ? 2 : 1)>(Lf, tb, tid, [&](int t2, int n2) {
      if (KEEP) store_tile16<T, CHUNK, K>(static_cast<T*>(keep.ws_e) + ch * CHUNK * K, eS, t2, n2);
    });
  } else {
    float col[16];
    const int base = 16 * (tid >> 4), cl = tid & 15;
    if (tid < CHUNK) {
      prep_diag_solve(Lf, col, base, cl);
    } else {
      const int t2 = tid - CHUNK;
      constexpr int N2 = NT - CHUNK;
      if (!DIRECT_A) store_tile16<T, CHUNK, CHUNK>(static_cast<T*>(p.ws_a) + ch * CHUNK * CHUNK, aS, t2, N2);
      if (KEEP) store_tile16<T, CHUNK, K>(static_cast<T*>(keep.ws_e) + ch * CHUNK * K, eS, t2, N2);
    }
    __syncthreads();
    if (tid < CHUNK) prep_diag_store(Lf, col, base, cl);
    __syncthreads();
    // The off-diagonal blocks on the CUDA cores (the TCINV branch does them on the tensor cores).
    if (FEWBAR) {
      prep_offdiag_fewbar(Lf, tid, lane);
      prep_t_to_io_tr<T, NT>(Lf, tb, tid);
    } else {
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
        prep_offdiag_sums<false>(Lf, sacc, I, row, cc);
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
    }
  }

  // Phase 5: W = T E (64×K): warp (rt, hi) owns rows 16·rt + 0..15 and key columns
  // [hi·K/2, (hi+1)·K/2). A = T (row-major), B = E via ldmatrix.trans.
  {
    constexpr int NPW = K / 32;  // 16-column pairs per warp
    float wacc[2 * NPW][4];
    zero_frags(wacc);
    prep_w_products<T, KP, NPW>(wacc, eS, rt, hi * NPW, lane, [&](int kk, u32(&a)[4]) {
      if (LDSM) ldsm_x4(a, &tb[(16 * rt + (lane & 7) + 8 * ((lane >> 3) & 1)) * CP + 16 * kk + 8 * (lane >> 4)]);
      else ld_a_frag(a, tb, CP, r0, 16 * kk + cq);
    });
    __syncthreads();  // every warp's E reads done: the W staging tile takes E's place
    store_acc_pairs<T, KP>(wS, wacc, r0, 2 * hi * NPW, cq);
  }
  // Ũᵀ = Yᵀ Tᵀ (V×64): warp w owns value rows 16·(w mod V/16) + 0..15 and token columns
  // [8·nt0, 8·(nt0 + NTU)); A = Yᵀ via ldmatrix.trans, B = Tᵀ read from T row-major.
  {
    constexpr int VT = V / 16;             // 16-row value tiles: 8 or 4
    constexpr int NTU = 8 * VT / (NT / 32);  // token n-tiles per warp: 8 or 4
    const int d0 = 16 * (warp % VT), nt0 = (warp / VT) * NTU;
    float uacc[NTU][4];
    zero_frags(uacc);
    prep_ut_products<T, VP, LDSM>(uacc, yS, tb, d0, nt0, lane, [&](int r) { return r * CP; });
    __syncthreads();  // Y reads done, W staged: Ũᵀ staging takes Y's (and A's) place
    store_tile16<T, CHUNK, K>(static_cast<T*>(p.ws_w) + ch * CHUNK * K, wS, tid, NT);
    store_acc_pairs<T, CP>(uS, uacc, d0 + (lane >> 2), nt0, cq);
  }
  __syncthreads();
  store_tile16<T, V, CHUNK>(static_cast<T*>(p.ws_ut) + ch * V * CHUNK, uS, tid, NT);
  if (KEEP) {
    // T (io, unit diagonal) and the per-token Γ, β for the backward (E left in phase 4).
    store_tile16<T, CHUNK, CHUNK>(static_cast<T*>(keep.ws_t) + ch * CHUNK * CHUNK, tb, tid, NT);
    prep_keep_gam_bet(keep, ch, gam, bet, tid);
  }
}

// prep6's shared memory: prep3's r1, r2, r3 without the A staging tile (A leaves from the Q Kᵀ
// accumulators as packed pairs, like the 4-warp prep), r3 large enough for the Ũᵀ staging tile;
// 53760 B at K = V = 128, so 4 blocks (32 warps) fit an SM.
template <int K, int V>
struct Prep6Smem {
  using S3 = Prep3Smem<K, V>;
  static constexpr size_t r1_off = S3::r1_off;
  static constexpr size_t r2_off = S3::r2_off;
  static constexpr size_t r3_off = S3::r3_off;
  static constexpr size_t r3_bytes = static_cast<size_t>(CHUNK * S3::VP > V * S3::CP ? CHUNK * S3::VP : V * S3::CP) * 2;
  static constexpr size_t gam_off = r3_off + r3_bytes;
  static constexpr size_t bet_off = gam_off + CHUNK * 4;
  static constexpr size_t bytes = bet_off + CHUNK * 4;
};
constexpr int PREP6_MIN_BLOCKS = 4;
// The host mirrors these (src/engines/gdn/params.rs, prep6_smem_bytes).
static_assert(Prep6Smem<128, 128>::bytes == 53760 && Prep6Smem<64, 64>::bytes == 35584, "Prep6Smem size changed");

// prep7's shared memory: prep6's layout with r1 large enough for the TC inverse's fp32 L tile
// (rows of TCINV_LS = 72 floats: 18432 B); 54784 B at K = V = 128 (4 blocks per SM still fit).
template <int K, int V>
struct Prep7Smem {
  using S3 = Prep3Smem<K, V>;
  static constexpr size_t r1_bytes = (CHUNK * S3::KP * 2 > CHUNK * TCINV_LS * 4) ? CHUNK * S3::KP * 2 : CHUNK * TCINV_LS * 4;
  static constexpr size_t r1_off = 0;
  static constexpr size_t r2_off = (r1_off + r1_bytes + 15) / 16 * 16;
  static constexpr size_t r3_off = r2_off + CHUNK * S3::KP * 2;
  static constexpr size_t r3_bytes = Prep6Smem<K, V>::r3_bytes;
  static constexpr size_t gam_off = r3_off + r3_bytes;
  static constexpr size_t bet_off = gam_off + CHUNK * 4;
  static constexpr size_t bytes = bet_off + CHUNK * 4;
  static_assert(CHUNK * S3::CP * 2 <= r1_bytes, "T (io) over L in r1");
};
// The host mirrors these (src/engines/gdn/params.rs, prep7_smem_bytes).
static_assert(Prep7Smem<128, 128>::bytes == 54784 && Prep7Smem<64, 64>::bytes == 37376, "Prep7Smem size changed");

// The one-chunk prep kernels: grid (chunk slots, HO), one (chunk, head) tile per block.
//  prep3: FEWBAR = DIRECT_A = false (Prep3Smem, 3 blocks per SM);
//  prep5: FEWBAR (the off-diagonal inverse with one barrier per block row, prep_offdiag_fewbar);
//  prep6: FEWBAR and DIRECT_A (A stored from registers, Prep6Smem: 4 blocks per SM, 64 registers);
//  prep7: DIRECT_A and TCINV = 1 (prep6 with the triangular inverse on the tensor cores,
//         gdn_fwd_tcinv.cuh; Prep7Smem);
//  prep8: DIRECT_A and TCINV = 2 (prep7 with the off-diagonal inverse by 2x2 recursive blocking
//         on all 8 warps, tcinv8_* in gdn_fwd_tcinv.cuh; Prep7Smem);
//  prep9: DIRECT_A and TCINV = 3 (prep8 with the K Kᵀ / Q Kᵀ, W and Ũᵀ fragments loaded by
//         ldmatrix.x4; bitwise prep8; Prep7Smem).
template <typename T, int K, int V, bool KEEP = false, bool FEWBAR = false, bool DIRECT_A = false, int TCINV = 0>
__device__ __forceinline__ void fwd_prep3_body(const FwdParams& p, const PrepKeep& keep = PrepKeep{}) {
  using S = Prep3Smem<K, V>;
  using S6 = Prep6Smem<K, V>;
  using S7 = Prep7Smem<K, V>;
  extern __shared__ __align__(16) unsigned char smem[];
  const size_t r2 = TCINV ? S7::r2_off : S::r2_off, r3 = TCINV ? S7::r3_off : S::r3_off;
  const size_t go = TCINV ? S7::gam_off : (DIRECT_A ? S6::gam_off : S::gam_off);
  const size_t bo = TCINV ? S7::bet_off : (DIRECT_A ? S6::bet_off : S::bet_off);
  const Prep3Bufs<T> b{reinterpret_cast<T*>(smem + S::r1_off),
                       reinterpret_cast<T*>(smem + r2),
                       reinterpret_cast<T*>(smem + r3),
                       DIRECT_A ? nullptr : reinterpret_cast<T*>(smem + S::ra_off),
                       reinterpret_cast<T*>(smem + r3),
                       reinterpret_cast<float*>(smem + go),
                       reinterpret_cast<float*>(smem + bo)};
  const int c = blockIdx.x, h = blockIdx.y, tid = threadIdx.x;
  int seq, len;
  long long t0;
  if (!locate_chunk(p, c, seq, t0, len)) return;
  const int HO = p.ho;
  const int qh = h / (HO / p.h), kh = h / (HO / p.hk), vh = h / (HO / p.hv);
  // Phase 1: raw q, k, v rows into smem, in flight while the gates are computed.
  prep_load_qkv<T, K, V, PREP3_THREADS>(p, b.r1, b.r2, b.r3, t0, len, qh, kh, vh, tid);
  prep3_tile<T, K, V, KEEP, FEWBAR, DIRECT_A, TCINV>(p, keep, b, c, h, len, prep_gates_raw(p, t0, len, h, HO, tid),
                                                     false);
}

// ---------------------------------------------------------------------------------------------
// prep4: the persistent prep3. Grid = PREP4_BLOCKS_PER_SM × SMs blocks (at most the tiles); block
// b runs the (chunk, head) tiles b, b + gridDim.x, ... (tile = chunk · HO + head, so a tile's
// index is its workspace slot ch) through prep3_tile, bitwise the same outputs. Two sets of the
// input regions r1, r2, r3 (ping-pong): while tile i is computed in one set, tile i + 1's q, k, v
// rows stream into the other with cp.async and its gates' raw bits into registers, so a tile's
// load latency (and the block launch, the chunk search) hide behind the previous tile's work.
// Shared memory (Prep4Smem): set 0's r1, r2, r3, the A staging tile ra, set 1's r3, r2, r1, Γ, β;
// a set's Ũᵀ staging tile covers its r3 and the end of ra next to it (A is dead by then; the other
// set's prefetch never writes ra). 114176 B at K = V = 128: 2 blocks (16 warps) per SM.
// ---------------------------------------------------------------------------------------------
constexpr int PREP4_BLOCKS_PER_SM = 2;

template <int K, int V>
struct Prep4Smem {
  using S3 = Prep3Smem<K, V>;
  static constexpr size_t r1_bytes = S3::r1_bytes;
  static constexpr size_t r2_bytes = static_cast<size_t>(CHUNK) * S3::KP * 2;
  static constexpr size_t r3_bytes = static_cast<size_t>(CHUNK) * S3::VP * 2;
  static constexpr size_t ra_bytes = static_cast<size_t>(CHUNK) * S3::CP * 2;
  static constexpr size_t us_bytes = static_cast<size_t>(V) * S3::CP * 2;
  // set 0
  static constexpr size_t r1_off0 = 0;
  static constexpr size_t r2_off0 = S3::r2_off;
  static constexpr size_t r3_off0 = S3::r3_off;
  static constexpr size_t ra_off = S3::ra_off;
  // set 1, mirrored around ra
  static constexpr size_t r3_off1 = ra_off + ra_bytes;
  static constexpr size_t r2_off1 = r3_off1 + r3_bytes;
  static constexpr size_t r1_off1 = r2_off1 + r2_bytes;
  static constexpr size_t gam_off = (r1_off1 + r1_bytes + 15) / 16 * 16;
  static constexpr size_t bet_off = gam_off + CHUNK * 4;
  static constexpr size_t bytes = bet_off + CHUNK * 4;
  // Ũᵀ staging: set 0 from r3_off0 up, set 1 down to the end of its r3.
  static constexpr size_t us_off0 = r3_off0;
  static constexpr size_t us_off1 = r3_off1 + r3_bytes - us_bytes;
  static_assert(r3_off0 + r3_bytes == ra_off, "ra follows set 0's r3");
  static_assert(us_off0 + us_bytes <= us_off1, "the two sets' Ũᵀ staging tiles overlap in ra");
  static_assert(us_bytes >= r3_bytes && us_off1 >= ra_off, "Ũᵀ staging layout");
  static_assert(r2_off0 % 16 == 0 && r3_off0 % 16 == 0 && ra_off % 16 == 0 && r3_off1 % 16 == 0 &&
                    r2_off1 % 16 == 0 && r1_off1 % 16 == 0 && us_off1 % 16 == 0,
                "16-byte aligned regions");
};

// Set `odd` (0 or 1) of prep4's shared memory as prep3_tile's regions.
template <typename T, int K, int V>
__device__ __forceinline__ Prep3Bufs<T> prep4_set(unsigned char* smem, int odd) {
  using S = Prep4Smem<K, V>;
  return Prep3Bufs<T>{reinterpret_cast<T*>(smem + (odd ? S::r1_off1 : S::r1_off0)),
                      reinterpret_cast<T*>(smem + (odd ? S::r2_off1 : S::r2_off0)),
                      reinterpret_cast<T*>(smem + (odd ? S::r3_off1 : S::r3_off0)),
                      reinterpret_cast<T*>(smem + S::ra_off),
                      reinterpret_cast<T*>(smem + (odd ? S::us_off1 : S::us_off0)),
                      reinterpret_cast<float*>(smem + S::gam_off),
                      reinterpret_cast<float*>(smem + S::bet_off)};
}

// The host mirrors these (src/engines/gdn/params.rs, prep4_smem_bytes).
static_assert(Prep4Smem<128, 128>::bytes == 114176 && Prep4Smem<64, 64>::bytes == 79872, "Prep4Smem size changed");

template <typename T, int K, int V, bool KEEP = false>
__device__ __forceinline__ void fwd_prep4_body(const FwdParams& p, const PrepKeep& keep = PrepKeep{}) {
  using S = Prep4Smem<K, V>;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x;
  const int HO = p.ho;
  const int gq = HO / p.h, gk = HO / p.hk, gv = HO / p.hv;
  const int stride = static_cast<int>(gridDim.x);
  // Prologue: the block's first tile into set 0.
  int tile = static_cast<int>(blockIdx.x);
  int c = tile / HO, h = tile % HO, seq, len;
  long long t0;
  if (!locate_chunk(p, c, seq, t0, len)) return;
  {
    const Prep3Bufs<T> set0 = prep4_set<T, K, V>(smem, 0);
    prep_load_qkv<T, K, V, PREP3_THREADS>(p, set0.r1, set0.r2, set0.r3, t0, len, h / gq, h / gk, h / gv, tid);
  }
  PrepGateRaw raw = prep_gates_raw(p, t0, len, h, HO, tid);
  for (int it = 0;; ++it) {
    // Tile i + 1 into the other set (free: tile i − 1 ended with a barrier).
    const int ntile = tile + stride;
    const int nc = ntile / HO, nh = ntile % HO;
    int nseq, nlen = 0;
    long long nt0 = 0;
    const bool more = locate_chunk(p, nc, nseq, nt0, nlen);
    const Prep3Bufs<T> cur = prep4_set<T, K, V>(smem, it & 1);
    const Prep3Bufs<T> nxt = prep4_set<T, K, V>(smem, (it & 1) ^ 1);
    PrepGateRaw nraw{0u, 0u};
    if (more) {
      prep_load_qkv<T, K, V, PREP3_THREADS>(p, nxt.r1, nxt.r2, nxt.r3, nt0, nlen, nh / gq, nh / gk, nh / gv, tid);
      nraw = prep_gates_raw(p, nt0, nlen, nh, HO, tid);
    }
    prep3_tile<T, K, V, KEEP, true>(p, keep, cur, c, h, len, raw, more);
    if (!more) break;
    __syncthreads();  // every read of tile i's set, ra, Γ and β done before they are rewritten
    tile = ntile;
    c = nc;
    h = nh;
    len = nlen;
    raw = nraw;
  }
}

}  // namespace gdn
