// Gated DeltaNet per-chunk factors, v15 ("prep15", helper prep15, session 11): prep14's tile
// (prep10_tile<..., BAL_DIAG = 2>, gdn_fwd_prep10.cuh) with the triangular inverse's serial pieces
// moved off the block barriers: 10 block barriers per tile instead of 13. Bitwise prep14: every
// element of T, and so of W, Ũᵀ and the backward's T copy, comes from the same fp32 operations and
// mma.sync instructions with the same operands in the same order (prep14_diag_invert_half,
// tcinv8_pair, tcinv8_p, tcinv8_tba's sums, Io<T>::pack); only which warp issues them and which
// barriers separate them differ (checked on the CPU against prep14's whole workspace by
// bench/gdn_prep_host_emu.cpp, GDN_EMU_V15=1).
//
// Session 18 (bprep18): prep18's cuts of the slim prep (gdn_fwd_slim.cuh) in this tile, the same
// values bitwise (checked as above, GDN_EMU_V15=1): phase 1 with compile-time trip counts
// (prep15_load_qkv), phase 2 on half-warps (prep15_norm_row_half), phase 3 K Kᵀ and Q Kᵀ on the same
// warp at or below the diagonal only (prep15_front: 384 mma.sync per tile at K = 128, not 512), L
// and A with one decay per element on every warp (slim_store_la; was L on warps 0-3 and A on 4-7),
// L handed over by bar.arrive, the E rows on half-warps (prep15_e_row_half).
//
// Schedule after phase 3 (prep10_tile with BAL_DIAG = 3; prep14's in brackets):
//  E phase: every warp stores its L and A elements (rows 16 (w mod 4).., columns 32 (w / 4)..,
//    slim_store_la); warp 0 waits on named barrier 1 (64 threads) for warp 1, warp 2 on barrier 2
//    (96 threads) for warps 6, 7 (the producers only arrive: slim_bar<false, ...>), then warp 0 inverts
//    the diagonal blocks 0, 1 and warp 2 the blocks 2, 3 (prep14_diag_invert_half with thread index
//    32 (warp >> 1) + lane: prep14's threads 0..63), __syncwarp, and each runs its step 1 at once
//    (warp 0 T_10 = tcinv8_pair<0>: L_10 from warp 1, T_00, T_11 its own; warp 2 T_32: L_32 from
//    warp 7), while warps 1, 3-7 compute the 64 E rows on 12 half-warps (rows hw + 12 i).
//    [E rows 8 per warp and L / A; barrier; diagonal blocks on threads 0..63;
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
#include "gdn_fwd_prep3.cuh"

namespace gdn {

#ifdef GDN_HOST_EMU
void emu_bar_sync(int id, int n);
#endif

// Warp 0 (J = 0) / warp 2 (J = 2): the diagonal blocks J, J + 1 of T (prep14's threads
// 16 J + lane) and then T_{J+1,J} (tcinv8_pair<J>), after the named barrier that made the L rows
// of the other warps it reads visible (slim_bar<true, ...>: warp 1's for warp 0, warps 6, 7's for warp 2).
// FIN: to_tf32<FIN> in step 1 (the slim prep's; the same bits for finite operands).
template <bool FIN = false>
__device__ __forceinline__ void prep15_diag_and_step1(float* Lf, int warp, int lane) {
  prep14_diag_invert_half(Lf, 16 * warp + lane);
  __syncwarp();  // T_JJ, T_II (written by other lanes) are step 1's operands
  if (warp == 0) tcinv8_pair<0, FIN>(Lf, lane);
  else tcinv8_pair<2, FIN>(Lf, lane);
}

// Step 2b for warp w (tcinv8_tba's tile and sums), T_BA written as io pairs at tcinv10_tb_row
// instead of fp32 (the values tcinv10_rows_to_io would pack from it: every column < 32 ≤ row).
template <typename T, bool FIN = false>
__device__ __forceinline__ void prep15_tba_io(float* Lf, int warp, int lane) {
  const int t = lane & 3, nt = warp & 3;
  float c[2][4];
  const int ar = tcinv8_tba_products<FIN>(Lf, warp, lane, c);
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

// Phase 3 of the slim prep and of prep15 (session 18; moved here from gdn_fwd_slim.cuh by bprep18):
// warp (rt, hi) forms rows 16 rt + 0..15, key columns
// 32 hi + 0..31 of K Kᵀ (kacc) and then of Q Kᵀ (qacc), in its first NP 16-column blocks only (the
// others lie above the diagonal: zero in L and A). Each element is prep_qk_products_ldsm's (the
// same mma.sync, operands and k order; prep9's ldmatrix addressing). One product at a time: 32
// accumulators and one A and one B fragment live (the 48-register bound).
template <typename T, int K, int NP>
__device__ __forceinline__ void slim_qk_product(float (&acc)[4][4], const T* as, const T* kS, int rt, int hi, int lane) {
  using IO = Io<T>;
  constexpr int KP = K + 8;
  const int ar = 16 * rt + (lane & 7) + 8 * ((lane >> 3) & 1), ac = 8 * (lane >> 4);
  const int br = 32 * hi + 8 * (lane >> 4) + (lane & 7), bc = 8 * ((lane >> 3) & 1);
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    u32 a[4];
    ldsm_x4(a, &as[ar * KP + 16 * kk + ac]);
#pragma unroll
    for (int np = 0; np < NP; ++np) {
      u32 b[4];
      ldsm_x4(b, &kS[(16 * np + br) * KP + 16 * kk + bc]);
      IO::mma(acc[2 * np], a, b);
      IO::mma(acc[2 * np + 1], a, b + 2);
    }
  }
}
template <typename T, int K, int NP>
__device__ __forceinline__ void slim_qk_products(float (&kacc)[4][4], float (&qacc)[4][4], const T* kS, const T* qS,
                                                 int rt, int hi, int lane) {
  slim_qk_product<T, K, NP>(kacc, kS, kS, rt, hi, lane);
  __syncwarp();  // keeps the second product's loads after the first's (no interleaving: no spills)
  slim_qk_product<T, K, NP>(qacc, qS, kS, rt, hi, lane);
}

// L and A from slim_qk_products' accumulators (session 18): rows r0, r0 + 8, columns 32 hi + 0..31;
// each decay e^{Γi−Γj} computed once for both (prep15 computed it on two warps until session 18).
// L (j < i: β_i (K Kᵀ)_ij e^{Γi−Γj}, tcinv_store_l's expression) to Lf as float2, A (j ≤ i:
// (Q Kᵀ)_ij e^{Γi−Γj}, prep_store_a's) to dst as io pairs; zeros elsewhere, the column blocks from np on
// (above the diagonal) without arithmetic. Without branches per element: a decay past the
// diagonal (possibly inf) is computed and not selected.
//
// The slim factors' packed block-lower-triangular tiles (session 24, tri24): of a 64 x 64 lower
// triangular tile (T, A) only the SLIM_TRI_BLOCKS 16 x 16 blocks (r, c), c ≤ r, in the order
// b = r (r + 1) / 2 + c ((0,0), (1,0), (1,1), (2,0), ...), each row-major (16 rows of 32 bytes):
// 5,120 B per tile instead of 8,192 (the blocks above the diagonal are zeros nobody reads).
constexpr int SLIM_TRI_BLOCKS = 10;
constexpr int SLIM_TRI_ELEMS = SLIM_TRI_BLOCKS * 16 * 16;  // io elements per packed tile
// Block b's 4 r + c (r its block row, c its block column), b < SLIM_TRI_BLOCKS: a nibble table.
__device__ __forceinline__ int slim_tri_rc(int b) { return static_cast<int>((0xFEDCA98540ull >> (4 * b)) & 15u); }
// Element (i, j), j / 16 ≤ i / 16, of the packed tile.
__device__ __forceinline__ int slim_tri_elem(int i, int j) {
  const int r = i >> 4;
  return (r * (r + 1) / 2 + (j >> 4)) * 256 + (i & 15) * 16 + (j & 15);
}
// TRI (session 24, tri24: the slim prep): A to dst in the packed layout (slim_tri_elem), only
// the column blocks below np (at or below the diagonal); else rows of CHUNK, every block.
// ROWS_TOO (session 37, with TRI: the forward's saving prep): also A as rows of CHUNK, every
// block, to rows (the same packed values).
template <typename T, bool TRI = false, bool ROWS_TOO = false>
__device__ __forceinline__ void slim_store_la(float* Lf, T* dst, const float (&kacc)[4][4], const float (&qacc)[4][4],
                                              const float* gam, const float* bet, int r0, int cq, int hi, int np,
                                              T* rows = nullptr) {
  static_assert(TRI || !ROWS_TOO, "ROWS_TOO: beside the packed tile");
  constexpr int LS = TCINV_LS;
  const float gi[2] = {gam[r0], gam[r0 + 8]}, bi[2] = {bet[r0], bet[r0 + 8]};
  T* dst_tri = TRI ? dst + slim_tri_elem(r0, 32 * hi + cq) : nullptr;  // (r0, 32 hi + cq) of the packed tile
#pragma unroll
  for (int n = 0; n < 4; ++n) {
    const int c0 = 32 * hi + 8 * n + cq;
    float lv[2][2] = {{0.f, 0.f}, {0.f, 0.f}}, av[2][2] = {{0.f, 0.f}, {0.f, 0.f}};
    if ((n >> 1) < np) {
      const float2 gj = *reinterpret_cast<const float2*>(&gam[c0]);
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const int i = r0 + 8 * hf;
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int j = c0 + e;
          const float d = exp_ftz(gi[hf] - (e ? gj.y : gj.x));
          const float l = bi[hf] * kacc[n][2 * hf + e] * d, a = qacc[n][2 * hf + e] * d;
          lv[hf][e] = j < i ? l : 0.f;
          av[hf][e] = j <= i ? a : 0.f;
        }
      }
    }
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int i = r0 + 8 * hf;
      *reinterpret_cast<float2*>(&Lf[i * LS + c0]) = make_float2(lv[hf][0], lv[hf][1]);
      if constexpr (TRI) {  // slim_tri_elem(i, c0): block (i / 16, 2 hi + n / 2), 8 (n % 2) + cq in its row
        if ((n >> 1) < np) *reinterpret_cast<u32*>(&dst_tri[(n >> 1) * 256 + hf * 128 + 8 * (n & 1)]) = Io<T>::pack(av[hf][0], av[hf][1]);
        if constexpr (ROWS_TOO) *reinterpret_cast<u32*>(&rows[i * CHUNK + c0]) = Io<T>::pack(av[hf][0], av[hf][1]);
      } else {
        *reinterpret_cast<u32*>(&dst[i * CHUNK + c0]) = Io<T>::pack(av[hf][0], av[hf][1]);
      }
    }
  }
}

#ifdef GDN_HOST_EMU
void emu_bar_arrive(int id, int n);
#endif
// The slim prep's and prep15's hand-over of L before the diagonal blocks (session 18; compile-time
// IDs): bar.arrive ID, N (SYNC = false: a producer warp) / bar.sync ID, N (SYNC = true: the consumer).
template <bool SYNC, int ID, int N>
__device__ __forceinline__ void slim_bar() {
#ifdef GDN_HOST_EMU
  if (SYNC) emu_bar_sync(ID, N);
  else emu_bar_arrive(ID, N);
#else
  if constexpr (SYNC) asm volatile("bar.sync %0, %1;\n" ::"n"(ID), "n"(N) : "memory");
  else asm volatile("bar.arrive %0, %1;\n" ::"n"(ID), "n"(N) : "memory");
#endif
}

// The raw k and q rows of a chunk (rows of K + 8 elements; zeros past len) by cp.async, no commit:
// the slim prep's and prep15's phase 1 (session 18). Compile-time trip counts: each thread's
// 16-byte pieces are fixed (the same pieces and layout as a tid-strided loop), its first addresses
// computed once, then constant strides. ZFILL (the slim prep, session 23, prep23): each piece one
// zero-filling cp.async (cp_async16_zfill) instead of a cp.async or a 16-byte zero store under a
// branch; the same bytes in the same places. SWZ (session 28, pp28: the slim prep's wgmma form):
// into the 128-byte swizzle K-major layout of the wgmma operands (slim_wg_elem<K>: 64-key atoms of
// CHUNK rows of 128 B) instead of rows of K + 8; the same values.
// The wgmma scan's q, k staging (session 23, wg23; here since session 28 for load_kq_rows' SWZ: fwd_slim_scan_body's WG, the w4gs scan): the
// 128-byte swizzle K-major layout of dnnp_wgmma.cuh: keys 64 a .. 64 a + 63 of token t in the
// 128 B row t of atom a (CHUNK rows, 8 KB), 16 B chunk j at j ^ (t & 7). (wg23 measured the
// canonical no-swizzle layout 36-45 % slower than w4 and the swizzle 3-6 % faster: only it is kept.)
template <int K>
__device__ __forceinline__ int slim_wg_elem(int tok, int kd) {
  return (kd >> 6) * 64 * CHUNK + tok * 64 + ((((kd >> 3) & 7) ^ (tok & 7)) << 3) + (kd & 7);
}
template <typename T, int K, int NT, bool ZFILL = false, bool SWZ = false>
__device__ __forceinline__ void load_kq_rows(const FwdParams& p, T* kS, T* qS, long long t0, int len, int qh, int kh,
                                             int tid) {
  constexpr int KV = K / 8, RS = NT / KV, IT = CHUNK * KV / NT;  // pieces per row, rows per round, rounds
  static_assert(CHUNK * KV % NT == 0 && NT % KV == 0, "whole rounds of whole rows");
  static_assert(!SWZ || RS % 8 == 0, "SWZ: each thread's rows share their swizzle phase (tok & 7)");
  // Row stride in elements: +RS rows per round (the swizzle's rows are 64 elements within an atom).
  constexpr int KP = SWZ ? 64 : K + 8;
  const int r0 = tid / KV, c8 = 8 * (tid % KV);
  const T* ks = static_cast<const T*>(p.k) + ((t0 + r0) * p.hk + kh) * K + c8;
  const T* qs = static_cast<const T*>(p.q) + ((t0 + r0) * p.h + qh) * K + c8;
  const size_t kstep = static_cast<size_t>(RS) * p.hk * K, qstep = static_cast<size_t>(RS) * p.h * K;
  T* kd = kS + r0 * KP + c8;
  T* qd = qS + r0 * KP + c8;
  if constexpr (SWZ) kd = kS + slim_wg_elem<K>(r0, c8), qd = qS + slim_wg_elem<K>(r0, c8);
#pragma unroll
  for (int it = 0; it < IT; ++it) {
    if constexpr (ZFILL) {
      const bool full = r0 + it * RS < len;
      cp_async16_zfill(kd + it * RS * KP, ks, full);
      cp_async16_zfill(qd + it * RS * KP, qs, full);
    } else if (r0 + it * RS < len) {
      cp_async16(kd + it * RS * KP, ks);
      cp_async16(qd + it * RS * KP, qs);
    } else {
      *reinterpret_cast<uint4*>(kd + it * RS * KP) = make_uint4(0, 0, 0, 0);
      *reinterpret_cast<uint4*>(qd + it * RS * KP) = make_uint4(0, 0, 0, 0);
    }
    ks += kstep;
    qs += qstep;
  }
}

// Phase 1 of prep15 (session 18, bprep18): prep_load_qkv's copies (the same 16-byte pieces into the
// same places, k and q (load_kq_rows) then v, one cp.async group) with compile-time trip counts.
// SL (the backward's slim prep gdn_bwd_prep15sl, session 28): k and q only (no v; yS unused).
template <typename T, int K, int V, int NT, bool SL = false>
__device__ __forceinline__ void prep15_load_qkv(const FwdParams& p, T* kS, T* qS, T* yS, long long t0, int len, int qh,
                                                int kh, int vh, int tid) {
  load_kq_rows<T, K, NT>(p, kS, qS, t0, len, qh, kh, tid);
  if constexpr (!SL) {
    constexpr int VP = V + 8, VV = V / 8, RS = NT / VV, IT = CHUNK * VV / NT;
    static_assert(CHUNK * VV % NT == 0 && NT % VV == 0, "whole rounds of whole rows");
    const int r0 = tid / VV, c8 = 8 * (tid % VV);
    const T* vs = static_cast<const T*>(p.v) + ((t0 + r0) * p.hv + vh) * V + c8;
    const size_t vstep = static_cast<size_t>(RS) * p.hv * V;
    T* vd = yS + r0 * VP + c8;
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      if (r0 + it * RS < len) cp_async16(vd + it * RS * VP, vs);
      else *reinterpret_cast<uint4*>(vd + it * RS * VP) = make_uint4(0, 0, 0, 0);
      vs += vstep;
    }
  }
  cp_async_commit();
}

// Phase 2 of prep15 for token row r on a half-warp (session 18, bprep18; prep_norm_row took a warp
// per row): normalise k, scale q (in place), Y = β v; the row of Q⁺ and of Kᴿ to wq / wk (rows of K).
// Bitwise prep_norm_row's values, by slim_norm_row_half's lane mapping: lane m of the half holds the
// elements of prep_norm_row's lanes m and m + 16, so row_norm_scales' first butterfly step (xor 16)
// is this lane's own sum of its two partials and steps 8, 4, 2, 1 are the same shuffles within the
// half; every other value is per element. Two rows per warp instruction.
// Row r's four fp32 scalars of the slim factors into sc ([4][CHUNK]): ck = β e^Γ kr, β, cq = qr e^Γ,
// cr = kr e^{Γ_last−Γ} (eg = e^Γ, er = e^{Γ_last−Γ}, br = β); zeros for rows past the chunk's tokens
// (live false). The slim forward's prep (slim_row_scalars) and the backward's scalar form.
__device__ __forceinline__ void store_row_scalars(float* sc, int r, bool live, float kr, float qr, float eg, float er,
                                                  float br) {
  sc[0 * CHUNK + r] = live ? br * eg * kr : 0.f;
  sc[1 * CHUNK + r] = live ? br : 0.f;
  sc[2 * CHUNK + r] = live ? qr * eg : 0.f;
  sc[3 * CHUNK + r] = live ? kr * er : 0.f;
}

// SC (the backward's scalar-form prep gdn_bwd_prep15sc, session 27): no Q⁺ / Kᴿ rows; instead the
// half's first lane stores the row's four fp32 scalars (the slim forward's, slim_row_scalars:
// ck = β e^Γ kr, β, cq = qr e^Γ, cr = kr e^{Γ_last−Γ}; zeros past len) to sc ([4][CHUNK], rows of
// the chunk); wq, wk unused.
// SL (with SC: the backward's slim prep gdn_bwd_prep15sl, session 28): no Y = β v (yS unused).
template <typename T, int K, int V, bool SC = false, bool SL = false>
__device__ __forceinline__ void prep15_norm_row_half(const FwdParams& p, T* kS, T* qS, T* yS, T* wq, T* wk,
                                                     const float* gam, const float* bet, float gl, int r, int lane,
                                                     float* sc = nullptr, int len = CHUNK) {
  using IO = Io<T>;
  constexpr int KP = K + 8, VP = V + 8, EK = K / 32, EV = V / 32, HK = K / 2, HV = V / 2;
  const int m = lane & 15;
  T* kp = &kS[r * KP + m * EK];
  T* qp = &qS[r * KP + m * EK];
  T* yp = SL ? nullptr : &yS[r * VP + m * EV];
  float kx[2][EK], qx[2][EK], ks[2] = {0.f, 0.f}, qs[2] = {0.f, 0.f};
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    const Bits<EK> kb = *reinterpret_cast<const Bits<EK>*>(kp + u * HK);
    const Bits<EK> qb = *reinterpret_cast<const Bits<EK>*>(qp + u * HK);
#pragma unroll
    for (int e = 0; e < EK; ++e) {
      kx[u][e] = IO::bits_to_f(kb.h[e]);
      qx[u][e] = IO::bits_to_f(qb.h[e]);
      ks[u] += kx[u][e] * kx[u][e];
      qs[u] += qx[u][e] * qx[u][e];
    }
  }
  float kr = 1.f, qr = p.scale;
  // ks[0] + ks[1]: row_norm_scales' step 16.
  if (p.flags & FLAG_L2NORM) l2norm_scales<8>(ks[0] + ks[1], qs[0] + qs[1], p.scale, kr, qr);
  const float eg = __expf(gam[r]), er = __expf(gl - gam[r]), br = bet[r];
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    Bits<EV> vb;
    if constexpr (!SL) vb = *reinterpret_cast<const Bits<EV>*>(yp + u * HV);
    store_norm_pieces<T, EK, EV, !SC, !SL>(kx[u], qx[u], kr, qr, eg, er, br, vb, kp + u * HK, qp + u * HK,
                                           SL ? nullptr : yp + u * HV, SC ? nullptr : &wq[r * K + u * HK + m * EK],
                                           SC ? nullptr : &wk[r * K + u * HK + m * EK]);
  }
  if constexpr (SC) {
    if (m == 0) store_row_scalars(sc, r, r < len, kr, qr, eg, er, br);
  }
}

// E = β k e^Γ for token row r on a half-warp (session 18, bprep18; prep_e_row's values per element,
// lane m of the half on prep_e_row's lanes m and m + 16 elements): in place over the normalised k.
template <typename T, int K>
__device__ __forceinline__ void prep15_e_row_half(T* kS, const float* gam, const float* bet, int r, int lane) {
  using IO = Io<T>;
  constexpr int KP = K + 8, EK = K / 32, HK = K / 2;
  T* kp = &kS[r * KP + (lane & 15) * EK];
  const float f = bet[r] * __expf(gam[r]);
#pragma unroll
  for (int u = 0; u < 2; ++u) {
    const Bits<EK> kb = *reinterpret_cast<const Bits<EK>*>(kp + u * HK);
    Bits<EK> eo;
#pragma unroll
    for (int e = 0; e < EK; ++e) eo.h[e] = IO::f_to_bits(f * IO::bits_to_f(kb.h[e]));
    *reinterpret_cast<Bits<EK>*>(kp + u * HK) = eo;
  }
}

// Phases 1b-3 of prep15 (session 18, bprep18; prep3_front's values): the gates from their raw bits,
// the q, k, v copies waited for, Γ_last to ws_gl[ch]; phase 2 on half-warps (prep15_norm_row_half);
// phase 3 as the slim prep's: warp (rt, hi) forms K Kᵀ (kacc) and Q Kᵀ (qacc) at rows 16 rt..,
// key columns 32 hi.., when any of its np 16-column blocks is at or below the diagonal (np
// returned; warps 4, 5 none: 384 mma.sync per tile at K = 128 instead of 512; warps 0, 6 (np = 1)
// form both blocks: the one code path keeps the forward's k128 entry free of spills), each element
// prep_qk_products_ldsm's. Ends without a barrier (the caller's, after which qS is dead).
// SC: the rows' scalars to ws_kr ([chunks, HO, 4, CHUNK] fp32) instead of Q⁺ / Kᴿ (prep15_norm_row_half).
// SL (with SC, session 28): no Y (prep15_norm_row_half's SL).
template <typename T, int K, int V, bool SC = false, bool SL = false>
__device__ __forceinline__ int prep15_front(const FwdParams& p, T* kS, T* qS, T* yS, float* gam, float* bet, size_t ch,
                                            int h, int len, const PrepGateRaw& raw, float (&kacc)[4][4],
                                            float (&qacc)[4][4]) {
  constexpr int NT = PREP3_THREADS, RW = NT / 32;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  prep_gates_cook(p, gam, bet, len, h, raw, tid, lane);
  const float gl = prep_finish_gates(p, gam, ch, tid);
  {
    T* wq = static_cast<T*>(p.ws_q) + ch * CHUNK * K;
    T* wk = static_cast<T*>(p.ws_kr) + ch * CHUNK * K;
    float* sc = static_cast<float*>(p.ws_kr) + ch * 4 * CHUNK;
    // Warp w's rows w + 8 i as prep3_front's, now two at a time (half-warp lane >> 4).
#pragma unroll 1
    for (int r = warp + RW * (lane >> 4); r < CHUNK; r += 2 * RW)
      prep15_norm_row_half<T, K, V, SC, SL>(p, kS, qS, yS, wq, wk, gam, bet, gl, r, lane, sc, len);
  }
  __syncthreads();
  const int rt = warp & 3, hi = warp >> 2;
  const int np = hi ? (rt < 2 ? 0 : rt - 1) : (rt < 1 ? 1 : 2);
  zero_frags(kacc);
  zero_frags(qacc);
  if (np > 0) slim_qk_products<T, K, 2>(kacc, qacc, kS, qS, rt, hi, lane);  // both blocks: no spills (np = 1: 2 warps)
  return np;
}

}  // namespace gdn
