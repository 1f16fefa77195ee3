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
// Session 23 (bprep23): prep23's cuts of the slim prep in the backward's KEEP prep only
// (fwd_prep10_body<T, K, V, KEEP = true, false, 3>; the forward's prep15 entries unchanged), the
// same bytes (checked as above, GDN_EMU_V15=1, and GDN_EMU_DUMP against main's headers): no integer
// divisions without GQA, zero-filling cp.async copies (prep15_load_qkv<..., ZF>), phase 2 and the E
// rows on quarter-warps at K = V = 128 (prep15_norm_row_quarter, prep15_e_row_quarter; rows 4 apart),
// the inverse's TF32 splits by to_tf32<true> (the same bits for finite values), T stored without a
// loop (prep15_store_t), the E copy and the W / Ũᵀ staging stores with compile-time trip counts
// (store_tile16_fixed).
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

// T (io, unit diagonal, at tcinv10_tb_row in tb) to the workspace dt, 16-byte row stores without
// the generic loop (session 23, bprep23: the slim prep's T store of prep23): thread tid the pieces
// of the loop i = tid, tid + NT (row i / 8, columns 8 (i % 8)..): rows r and r + 32, whose io rows
// lie 32 · 2 TCINV_LS elements apart (tcinv10_tb_row's parity term is the same for both).
template <typename T>
__device__ __forceinline__ void prep15_store_t(T* dt, const T* tb, int tid) {
  constexpr int NT = PREP3_THREADS, RH = NT / (CHUNK / 8);  // 32 rows per round
  static_assert(CHUNK * CHUNK / 8 == 2 * NT, "two 16-byte pieces per thread");
  const int r = tid / (CHUNK / 8), c8 = 8 * (tid % (CHUNK / 8));
  const T* st = tb + tcinv10_tb_row(r) + c8;
  const uint4 v0 = *reinterpret_cast<const uint4*>(st);
  const uint4 v1 = *reinterpret_cast<const uint4*>(st + RH * 2 * TCINV_LS);
  *reinterpret_cast<uint4*>(dt + r * CHUNK + c8) = v0;
  *reinterpret_cast<uint4*>(dt + (r + RH) * CHUNK + c8) = v1;
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
template <typename T>
__device__ __forceinline__ void slim_store_la(float* Lf, T* dst, const float (&kacc)[4][4], const float (&qacc)[4][4],
                                              const float* gam, const float* bet, int r0, int cq, int hi, int np) {
  constexpr int LS = TCINV_LS;
  const float gi[2] = {gam[r0], gam[r0 + 8]}, bi[2] = {bet[r0], bet[r0 + 8]};
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
          const float d = __expf(gi[hf] - (e ? gj.y : gj.x));
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
      *reinterpret_cast<u32*>(&dst[i * CHUNK + c0]) = Io<T>::pack(av[hf][0], av[hf][1]);
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
// computed once, then constant strides. ZF (session 23, bprep23: the backward's KEEP prep): each
// piece one zero-filling cp.async (cp_async16_zfill) instead of a cp.async or a 16-byte zero store
// under a branch; the same bytes in the same places.
template <typename T, int K, int NT, bool ZF = false>
__device__ __forceinline__ void load_kq_rows(const FwdParams& p, T* kS, T* qS, long long t0, int len, int qh, int kh,
                                             int tid) {
  constexpr int KP = K + 8, KV = K / 8, RS = NT / KV, IT = CHUNK * KV / NT;  // pieces per row, rows per round, rounds
  static_assert(CHUNK * KV % NT == 0 && NT % KV == 0, "whole rounds of whole rows");
  const int r0 = tid / KV, c8 = 8 * (tid % KV);
  const T* ks = static_cast<const T*>(p.k) + ((t0 + r0) * p.hk + kh) * K + c8;
  const T* qs = static_cast<const T*>(p.q) + ((t0 + r0) * p.h + qh) * K + c8;
  const size_t kstep = static_cast<size_t>(RS) * p.hk * K, qstep = static_cast<size_t>(RS) * p.h * K;
  T* kd = kS + r0 * KP + c8;
  T* qd = qS + r0 * KP + c8;
#pragma unroll
  for (int it = 0; it < IT; ++it) {
    if constexpr (ZF) {
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
// ZF: every piece a zero-filling cp.async (load_kq_rows' ZF; the backward's KEEP prep).
template <typename T, int K, int V, int NT, bool ZF = false>
__device__ __forceinline__ void prep15_load_qkv(const FwdParams& p, T* kS, T* qS, T* yS, long long t0, int len, int qh,
                                                int kh, int vh, int tid) {
  load_kq_rows<T, K, NT, ZF>(p, kS, qS, t0, len, qh, kh, tid);
  {
    constexpr int VP = V + 8, VV = V / 8, RS = NT / VV, IT = CHUNK * VV / NT;
    static_assert(CHUNK * VV % NT == 0 && NT % VV == 0, "whole rounds of whole rows");
    const int r0 = tid / VV, c8 = 8 * (tid % VV);
    const T* vs = static_cast<const T*>(p.v) + ((t0 + r0) * p.hv + vh) * V + c8;
    const size_t vstep = static_cast<size_t>(RS) * p.hv * V;
    T* vd = yS + r0 * VP + c8;
#pragma unroll
    for (int it = 0; it < IT; ++it) {
      if constexpr (ZF) cp_async16_zfill(vd + it * RS * VP, vs, r0 + it * RS < len);
      else if (r0 + it * RS < len) cp_async16(vd + it * RS * VP, vs);
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
template <typename T, int K, int V>
__device__ __forceinline__ void prep15_norm_row_half(const FwdParams& p, T* kS, T* qS, T* yS, T* wq, T* wk,
                                                     const float* gam, const float* bet, float gl, int r, int lane) {
  using IO = Io<T>;
  constexpr int KP = K + 8, VP = V + 8, EK = K / 32, EV = V / 32, HK = K / 2, HV = V / 2;
  const int m = lane & 15;
  T* kp = &kS[r * KP + m * EK];
  T* qp = &qS[r * KP + m * EK];
  T* yp = &yS[r * VP + m * EV];
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
    const Bits<EV> vb = *reinterpret_cast<const Bits<EV>*>(yp + u * HV);
    store_norm_pieces<T, EK, EV>(kx[u], qx[u], kr, qr, eg, er, br, vb, kp + u * HK, qp + u * HK, yp + u * HV,
                                 &wq[r * K + u * HK + m * EK], &wk[r * K + u * HK + m * EK]);
  }
}

// Four 16-bit values (an 8-byte piece of a row) to fp32, as Io<T>::bits_to_f converts each
// (session 23, prep23): for bf16 the high half of each 32-bit word by one mask (the value's bits
// are the word's high 16 bits), not an extract and a shift. Here since bprep23 (was
// gdn_fwd_slim.cuh): the backward's KEEP prep's row phase takes it too.
template <typename T>
struct SlimUnpack4 {
  static __device__ __forceinline__ void run(uint2 w, float (&x)[4]) {
    x[0] = Io<T>::bits_to_f(static_cast<unsigned short>(w.x));
    x[1] = Io<T>::bits_to_f(static_cast<unsigned short>(w.x >> 16));
    x[2] = Io<T>::bits_to_f(static_cast<unsigned short>(w.y));
    x[3] = Io<T>::bits_to_f(static_cast<unsigned short>(w.y >> 16));
  }
};
template <>
struct SlimUnpack4<gdn_bf16> {
  static __device__ __forceinline__ void run(uint2 w, float (&x)[4]) {
    x[0] = __uint_as_float(w.x << 16);
    x[1] = __uint_as_float(w.x & 0xffff0000u);
    x[2] = __uint_as_float(w.y << 16);
    x[3] = __uint_as_float(w.y & 0xffff0000u);
  }
};

// Phase 2 of the backward's KEEP prep for token row r on a quarter-warp (session 23, bprep23:
// prep23's slim_norm_row_quarter; K = V = 128): prep15_norm_row_half's values — k, q normalised in
// place, Y = β v, the rows of Q⁺ and Kᴿ to wq / wk — with lane m of the quarter on
// row_norm_scales' lanes m, m + 8, m + 16, m + 24 (groups g = 0..3 of 4 elements at 32 g + 4 m):
// the butterfly's steps 16 and 8 are this lane's own sums of its four partials
// ((s_m + s_{m+16}) + (s_{m+8} + s_{m+24}), the same sum on lane m + 8 by commutativity), steps
// 4, 2, 1 the same shuffles within the quarter; every other value per element (store_norm_pieces'
// expressions; Io::pack rounds each value of a pair as f_to_bits does). Four rows per warp
// instruction: a quarter of the shuffles, rsqrts, exponentials and loop overhead per row.
template <typename T, int K, int V>
__device__ __forceinline__ void prep15_norm_row_quarter(const FwdParams& p, T* kS, T* qS, T* yS, T* wq, T* wk,
                                                        const float* gam, const float* bet, float gl, int r, int lane) {
  using IO = Io<T>;
  constexpr int KP = K + 8, VP = V + 8, EK = K / 32, G = K / 4;
  static_assert(K == 128 && V == K, "8-byte pieces (K = V = 128)");
  const int m = lane & 7;
  T* kp = &kS[r * KP + m * EK];
  T* qp = &qS[r * KP + m * EK];
  T* yp = &yS[r * VP + m * EK];
  float kx[4][EK], qx[4][EK], ks[4], qs[4];
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    SlimUnpack4<T>::run(*reinterpret_cast<const uint2*>(kp + g * G), kx[g]);
    SlimUnpack4<T>::run(*reinterpret_cast<const uint2*>(qp + g * G), qx[g]);
    ks[g] = 0.f;
    qs[g] = 0.f;
#pragma unroll
    for (int e = 0; e < EK; ++e) {
      ks[g] += kx[g][e] * kx[g][e];
      qs[g] += qx[g][e] * qx[g][e];
    }
  }
  float kr = 1.f, qr = p.scale;
  // row_norm_scales' steps 16 and 8, then 4, 2, 1 by shuffles.
  if (p.flags & FLAG_L2NORM)
    l2norm_scales<4>((ks[0] + ks[2]) + (ks[1] + ks[3]), (qs[0] + qs[2]) + (qs[1] + qs[3]), p.scale, kr, qr);
  const float eg = __expf(gam[r]), er = __expf(gl - gam[r]), br = bet[r];
  T* wqp = &wq[r * K + m * EK];
  T* wkp = &wk[r * K + m * EK];
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    float kn[EK], qn[EK], y[EK];
#pragma unroll
    for (int e = 0; e < EK; ++e) {
      kn[e] = kx[g][e] * kr;
      qn[e] = qx[g][e] * qr;
    }
    SlimUnpack4<T>::run(*reinterpret_cast<const uint2*>(yp + g * G), y);
    *reinterpret_cast<uint2*>(kp + g * G) = make_uint2(IO::pack(kn[0], kn[1]), IO::pack(kn[2], kn[3]));
    *reinterpret_cast<uint2*>(qp + g * G) = make_uint2(IO::pack(qn[0], qn[1]), IO::pack(qn[2], qn[3]));
    *reinterpret_cast<uint2*>(yp + g * G) =
        make_uint2(IO::pack(br * y[0], br * y[1]), IO::pack(br * y[2], br * y[3]));
    *reinterpret_cast<uint2*>(wqp + g * G) =
        make_uint2(IO::pack(qn[0] * eg, qn[1] * eg), IO::pack(qn[2] * eg, qn[3] * eg));
    *reinterpret_cast<uint2*>(wkp + g * G) =
        make_uint2(IO::pack(kn[0] * er, kn[1] * er), IO::pack(kn[2] * er, kn[3] * er));
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

// E = β k e^Γ for token row r on a quarter-warp (session 23, bprep23; the backward's KEEP prep at
// K = 128): prep15_e_row_half's values per element, lane m of the quarter on the 8-byte pieces at
// 32 g + 4 m (g = 0..3), bf16 unpacked by masks (SlimUnpack4), io pairs packed at once (Io::pack:
// each value rounded as f_to_bits does). In place over the normalised k.
template <typename T, int K>
__device__ __forceinline__ void prep15_e_row_quarter(T* kS, const float* gam, const float* bet, int r, int lane) {
  using IO = Io<T>;
  constexpr int KP = K + 8, EK = K / 32, G = K / 4;
  static_assert(EK == 4, "8-byte pieces (K = 128)");
  T* kp = &kS[r * KP + (lane & 7) * EK];
  const float f = bet[r] * __expf(gam[r]);
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    float x[EK];
    SlimUnpack4<T>::run(*reinterpret_cast<const uint2*>(kp + g * G), x);
    *reinterpret_cast<uint2*>(kp + g * G) = make_uint2(IO::pack(f * x[0], f * x[1]), IO::pack(f * x[2], f * x[3]));
  }
}

// Phases 1b-3 of prep15 (session 18, bprep18; prep3_front's values): the gates from their raw bits,
// the q, k, v copies waited for, Γ_last to ws_gl[ch]; phase 2 on half-warps (prep15_norm_row_half);
// phase 3 as the slim prep's: warp (rt, hi) forms K Kᵀ (kacc) and Q Kᵀ (qacc) at rows 16 rt..,
// key columns 32 hi.., when any of its np 16-column blocks is at or below the diagonal (np
// returned; warps 4, 5 none: 384 mma.sync per tile at K = 128 instead of 512; warps 0, 6 (np = 1)
// form both blocks: the one code path keeps the forward's k128 entry free of spills), each element
// prep_qk_products_ldsm's. Ends without a barrier (the caller's, after which qS is dead).
// QTR (session 23, bprep23; the backward's KEEP prep at K = V = 128): phase 2 on quarter-warps
// (prep15_norm_row_quarter), warp w's quarter j on rows (w & 3) + 4 j + 16 (w >> 2) + 32 i: the
// four quarters' rows 4 apart, whose 272-byte rows start 16 banks apart (prep23's ea10cb1).
template <typename T, int K, int V, bool QTR = false>
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
    if constexpr (QTR) {
      static_assert(NT == 256, "8 warps x 4 quarters x 2 rounds = 64 rows");
#pragma unroll 1
      for (int r = (warp & 3) + 4 * (lane >> 3) + 16 * (warp >> 2); r < CHUNK; r += 32)
        prep15_norm_row_quarter<T, K, V>(p, kS, qS, yS, wq, wk, gam, bet, gl, r, lane);
    } else {
      // Warp w's rows w + 8 i as prep3_front's, now two at a time (half-warp lane >> 4).
#pragma unroll 1
      for (int r = warp + RW * (lane >> 4); r < CHUNK; r += 2 * RW)
        prep15_norm_row_half<T, K, V>(p, kS, qS, yS, wq, wk, gam, bet, gl, r, lane);
    }
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
