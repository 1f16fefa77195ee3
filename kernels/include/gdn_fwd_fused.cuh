// Gated DeltaNet forward, fused: the chunk factors are built on chip, next to the state scan, and
// never go through global memory (spec §4.2 / §4.3 "Hopper fused", §7.7).
//
// Contract: the inputs, outputs and numerics of prep (gdn_fwd.cuh / gdn_fwd_prep3.cuh) followed by
// the 4-warp output scan gdn_fwd_scanx_*_w4 (gdn_fwd_fast.cuh) with one piece per sequence: every
// factor element comes from the same fp32 operations and mma.sync sequence as the prep's (the
// workspace's io-dtype rounding included: the factors sit in shared memory in the io dtype), and
// the scan step is scanx's, so O and the final state are bitwise those of prep + scanx_w4 (checked
// on the CPU by bench/gdn_fused_host_emu.cpp). Parameter: FwdParams (only its input / output
// fields; no workspace region is read or written, chunk_offsets included). Grid (V / 64, HO, N):
// one block per (sequence, head, 64 value rows), looping over the sequence's chunks; initial
// state per sequence (state_indices pools, overwrite in place: each thread reads and writes only
// its own state elements). Deterministic, no atomics, no allocation, CUDA-graph capturable.
//
// Per chunk: the K-only factors (gates, Γ, l2norm, K Kᵀ, Q Kᵀ, the fp32 triangular inverse, W, Q⁺,
// Kᴿ, A) are recomputed by every value slice of a head (two for V = 128), Ũᵀ only for the slice.
//
// Two schedules of the same steps:
//  WS = true  (gdn_fwd_fused_*, 256 threads): warp specialisation. Warps 4-7 (producer) build
//             chunk c+1's factors into one of two shared buffers while warps 0-3 (consumer, the
//             fp32 state in registers, 16 value rows each) run chunk c's state step from the other.
//             Hand-over by named barriers: FULL[buf] (producer arrives, consumer waits) and
//             EMPTY[buf] (consumer arrives, producer waits before refilling); the producer's own
//             phases use barrier FUSED_BAR_PROD over its 128 threads. ~194 KB shared, 1 block/SM.
//  WS = false (gdn_fwd_fused_seq_*, 128 threads): the same 4 warps build the factors, then run
//             the state step; one factor buffer, O staged over the dead producer tiles: ~113 KB,
//             two blocks per SM overlap each other's phases.
#pragma once

#include "gdn_fwd.cuh"
#include "gdn_fwd_fast.cuh"

namespace gdn {

#ifdef GDN_HOST_EMU
void emu_bar_sync(int id, int n);
void emu_bar_arrive(int id, int n);
#endif
// Named barrier `id` over n threads (a multiple of 32): wait, or arrive without waiting. Both
// order this thread's prior shared-memory accesses before the barrier's completion.
__device__ __forceinline__ void named_bar_sync(int id, int n) {
#ifdef GDN_HOST_EMU
  emu_bar_sync(id, n);
#else
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
#endif
}
__device__ __forceinline__ void named_bar_arrive(int id, int n) {
#ifdef GDN_HOST_EMU
  emu_bar_arrive(id, n);
#else
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
#endif
}

constexpr int FUSED_VS = 64;         // value rows per block (4 consumer warps × 16)
constexpr int FUSED_BAR_PROD = 1;    // the producer warps' own phases (128 threads)
constexpr int FUSED_BAR_FULL = 2;    // + buffer: factors of a chunk ready (256 threads)
constexpr int FUSED_BAR_EMPTY = 4;   // + buffer: a buffer's factors consumed (256 threads)

struct FusedProdBarrier {
  static __device__ __forceinline__ void sync() { named_bar_sync(FUSED_BAR_PROD, 128); }
};

template <int K, bool WS>
struct FusedSmem {
  static constexpr int KP = K + 8;
  static constexpr int CP = CHUNK + 8;
  static constexpr int FP = CHUNK + 1;
  static constexpr int YP = FUSED_VS + 8;
  static constexpr int OP = 24;
  // Producer tiles (as PrepSmem): R1 raw / normalised k -> L, T (fp32) -> T (io); R2 raw / scaled
  // q -> E; R3 this slice's raw v -> Y = β v.
  static constexpr size_t r1_bytes = (CHUNK * KP * 2 > CHUNK * FP * 4) ? CHUNK * KP * 2 : CHUNK * FP * 4;
  static constexpr size_t r1_off = 0;
  static constexpr size_t r2_off = (r1_off + r1_bytes + 15) / 16 * 16;
  static constexpr size_t r3_off = r2_off + CHUNK * KP * 2;
  static constexpr size_t gam_off = r3_off + CHUNK * YP * 2;
  static constexpr size_t bet_off = gam_off + CHUNK * 4;
  static constexpr size_t gl_off = bet_off + CHUNK * 4;  // Γ_last per buffer
  // Factor buffers (io dtype, padded rows): W, Q⁺, Kᴿ [64][KP], A [64][CP], this slice's Ũᵀ [64][CP].
  static constexpr int NBUF = WS ? 2 : 1;
  static constexpr size_t w_off = 0;
  static constexpr size_t q_off = w_off + CHUNK * KP * 2;
  static constexpr size_t k_off = q_off + CHUNK * KP * 2;
  static constexpr size_t a_off = k_off + CHUNK * KP * 2;
  static constexpr size_t u_off = a_off + CHUNK * CP * 2;
  static constexpr size_t buf_bytes = u_off + FUSED_VS * CP * 2;
  static constexpr size_t buf_off = gl_off + 16;
  // Per-warp O staging: its own region with WS; over R1 (dead during the state step) without.
  static constexpr size_t o_off = WS ? buf_off + NBUF * buf_bytes : r1_off;
  static constexpr size_t bytes = WS ? o_off + 4 * CHUNK * OP * 2 : buf_off + NBUF * buf_bytes;
  static_assert(WS || 4 * CHUNK * OP * 2 <= r1_bytes, "O staging overflows R1");
};

// Phase 1 of the fused producer: chunk (t0, len)'s raw q, k rows and this slice's 64 v columns
// (from v0) into kS, qS (rows of K + 8) and yS (rows of 72), padded rows zero-filled; one group.
template <typename T, int K, int V>
__device__ __forceinline__ void fused_load_qkv(const FwdParams& p, T* kS, T* qS, T* yS, long long t0, int len, int qh,
                                               int kh, int vh, int v0, int ptid) {
  constexpr int KP = K + 8, YP = FUSED_VS + 8, KV = K / 8, YV = FUSED_VS / 8;
  const T* qg = static_cast<const T*>(p.q);
  const T* kg = static_cast<const T*>(p.k);
  const T* vg = static_cast<const T*>(p.v);
  for (int i = ptid; i < CHUNK * KV; i += 128) {
    const int r = i / KV, c8 = i % KV;
    if (r < len) {
      cp_async16(&kS[r * KP + 8 * c8], &kg[((t0 + r) * p.hk + kh) * K + 8 * c8]);
      cp_async16(&qS[r * KP + 8 * c8], &qg[((t0 + r) * p.h + qh) * K + 8 * c8]);
    } else {
      *reinterpret_cast<uint4*>(&kS[r * KP + 8 * c8]) = make_uint4(0, 0, 0, 0);
      *reinterpret_cast<uint4*>(&qS[r * KP + 8 * c8]) = make_uint4(0, 0, 0, 0);
    }
  }
  for (int i = ptid; i < CHUNK * YV; i += 128) {
    const int r = i / YV, c8 = i % YV;
    if (r < len) cp_async16(&yS[r * YP + 8 * c8], &vg[((t0 + r) * p.hv + vh) * V + v0 + 8 * c8]);
    else *reinterpret_cast<uint4*>(&yS[r * YP + 8 * c8]) = make_uint4(0, 0, 0, 0);
  }
  cp_async_commit();
}

template <typename T, int K, int V, bool WS>
__device__ __forceinline__ void fwd_fused_body(const FwdParams& p) {
  static_assert(K == V && (K == 64 || K == 128), "the fused forward serves K = V in {64, 128}");
  using S = FusedSmem<K, WS>;
  using IO = Io<T>;
  using PB = FusedProdBarrier;
  constexpr int KP = S::KP, CP = S::CP, FP = S::FP, YP = S::YP;
  extern __shared__ __align__(16) unsigned char smem[];
  T* kS = reinterpret_cast<T*>(smem + S::r1_off);
  float* Lf = reinterpret_cast<float*>(smem + S::r1_off);  // after kS is dead
  T* tb = reinterpret_cast<T*>(smem + S::r1_off);          // after Lf is dead
  T* qS = reinterpret_cast<T*>(smem + S::r2_off);
  T* eS = reinterpret_cast<T*>(smem + S::r2_off);          // after qS is dead
  T* yS = reinterpret_cast<T*>(smem + S::r3_off);
  float* gam = reinterpret_cast<float*>(smem + S::gam_off);
  float* bet = reinterpret_cast<float*>(smem + S::bet_off);
  float* gls = reinterpret_cast<float*>(smem + S::gl_off);

  const int xb = blockIdx.x, h = blockIdx.y, b = blockIdx.z;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int HO = p.ho;
  const int qh = h / (HO / p.h), kh = h / (HO / p.hk), vh = h / (HO / p.hv);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  const int nch = ce > cs ? static_cast<int>((ce - cs + CHUNK - 1) / CHUNK) : 0;
  const int cq = 2 * (lane & 3);

  // ---- producer: chunk i's factors into buffer i mod NBUF (threads ptid 0..127) ----
  auto produce = [&](int i, int ptid) {
    const int pw = ptid >> 5;
    const int buf = i % S::NBUF;
    unsigned char* fb = smem + S::buf_off + buf * S::buf_bytes;
    T* Wb = reinterpret_cast<T*>(fb + S::w_off);
    T* Qb = reinterpret_cast<T*>(fb + S::q_off);
    T* Kb = reinterpret_cast<T*>(fb + S::k_off);
    T* Ab = reinterpret_cast<T*>(fb + S::a_off);
    T* Ub = reinterpret_cast<T*>(fb + S::u_off);
    const long long t0 = cs + static_cast<long long>(i) * CHUNK;
    const int len = static_cast<int>(min_ll(static_cast<long long>(CHUNK), ce - t0));

    // Phase 1: raw rows in flight while the gates are computed (prep_finish_gates on PB).
    fused_load_qkv<T, K, V>(p, kS, qS, yS, t0, len, qh, kh, vh, xb * FUSED_VS, ptid);
    prep_gates(p, gam, bet, t0, len, h, HO, ptid, lane);
    PB::sync();
    if (ptid >= 32 && ptid < CHUNK) gam[ptid] += gam[31];
    cp_async_wait<0>();
    PB::sync();
    const float gl = gam[CHUNK - 1];
    // The buffer's previous chunk (i - 2) must be consumed before Q⁺ / Kᴿ land in it.
    if (WS && i >= 2) named_bar_sync(FUSED_BAR_EMPTY + buf, 256);
    if (ptid == 0) gls[buf] = gl;

    // Phase 2 (warp per row): normalise k, scale q, Y = β v; Q⁺, Kᴿ into the buffer.
    for (int r = pw; r < CHUNK; r += 4) prep_norm_row<T, K, FUSED_VS, KP>(p, kS, qS, yS, Qb, Kb, gam, bet, gl, r, lane);
    PB::sync();

    // Phase 3: K Kᵀ and Q Kᵀ (warp pw owns rows 16pw..16pw+15), as fwd_prep_body.
    const int r0 = 16 * pw + (lane >> 2);
    {
      float akk[8][4], aqk[8][4];
      zero_frags(akk);
      zero_frags(aqk);
#pragma unroll
      for (int kk = 0; kk < K / 16; ++kk) {
        const int col = 16 * kk + cq;
        u32 ak[4];
        ld_a_frag(ak, kS, KP, r0, col);
        u32 aq[4];
        ld_a_frag(aq, qS, KP, r0, col);
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) {
          const int n = 8 * nt + (lane >> 2);
          u32 bb[2] = {ld32(&kS[n * KP + col]), ld32(&kS[n * KP + col + 8])};
          IO::mma(akk[nt], ak, bb);
          IO::mma(aqk[nt], aq, bb);
        }
      }
      PB::sync();  // qS dead: E takes its place
      for (int r = pw; r < CHUNK; r += 4) prep_e_row<T, K>(kS, eS, gam, bet, r, lane);
      prep_store_a<T, CP>(Ab, aqk, gam, r0, cq);
      PB::sync();  // kS dead: L (fp32) takes its place
      prep_store_l(Lf, akk, gam, bet, r0, cq);
      PB::sync();
    }

    // Phase 4: T = (I + L)^{-1} in fp32 over L (fwd_prep_body's INV_SIDE sums, bitwise).
    {
      float col[16];
      const int base = 16 * (ptid >> 4), cl = ptid & 15;
      if (ptid < CHUNK) prep_diag_solve(Lf, col, base, cl);
      PB::sync();
      if (ptid < CHUNK) prep_diag_store(Lf, col, base, cl);
      PB::sync();
    }
#pragma unroll
    for (int I = 1; I < 4; ++I) {
      const int outs = I * 256;
      float sacc[6];
#pragma unroll
      for (int u = 0; u < 6; ++u) sacc[u] = 0.f;
#pragma unroll 4
      for (int m = 0; m < 16 * I; ++m) {
#pragma unroll
        for (int u = 0; u < 2 * I; ++u) {
          const int o = ptid + 128 * u;
          const int J = o >> 8, rr = (o >> 4) & 15, cc = o & 15;
          const int row = 16 * I + rr, colj = 16 * J + cc;
          const float a = m >= colj ? Lf[row * FP + m] : 0.f;
          sacc[u] = fmaf(a, Lf[m * FP + colj], sacc[u]);
        }
      }
      PB::sync();
#pragma unroll
      for (int u = 0; u < 6; ++u) {
        const int o = ptid + 128 * u;
        if (o < outs) {
          const int J = o >> 8, rr = (o >> 4) & 15, cc = o & 15;
          Lf[(16 * J + cc) * FP + 16 * I + rr] = sacc[u];
        }
      }
      PB::sync();
#pragma unroll
      for (int u = 0; u < 6; ++u) {
        const int o = ptid + 128 * u;
        if (o < outs) {
          const int J = o >> 8, rr = (o >> 4) & 15, cc = o & 15;
          const int row = 16 * I + rr, colj = 16 * J + cc;
          float s = 0.f;
#pragma unroll
          for (int m = 0; m < 16; ++m) {
            const float tii = m < rr ? Lf[row * FP + 16 * I + m] : (m == rr ? 1.f : 0.f);
            s = fmaf(tii, Lf[colj * FP + 16 * I + m], s);
          }
          sacc[u] = -s;
        }
      }
      PB::sync();
#pragma unroll
      for (int u = 0; u < 6; ++u) {
        const int o = ptid + 128 * u;
        if (o < outs) {
          const int J = o >> 8, rr = (o >> 4) & 15, cc = o & 15;
          Lf[(16 * I + rr) * FP + 16 * J + cc] = sacc[u];
        }
      }
      PB::sync();
    }
    prep_t_to_io<T, 128, PB>(Lf, tb, ptid);

    // Phase 5: W = T E into the buffer (A = T row-major, B = E by ldmatrix.trans).
    {
      float acc[K / 8][4];
      zero_frags(acc);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        if (kk > pw) break;  // T is lower triangular
        const int col = 16 * kk + cq;
        u32 a[4];
        ld_a_frag(a, tb, CP, r0, col);
        const int lrow = 16 * kk + (lane & 7) + 8 * ((lane >> 3) & 1);
#pragma unroll
        for (int np = 0; np < K / 16; ++np) {
          u32 r[4];
          ldsm_x4_t(r, &eS[lrow * KP + 16 * np + 8 * (lane >> 4)]);
          IO::mma(acc[2 * np], a, r);
          IO::mma(acc[2 * np + 1], a, r + 2);
        }
      }
#pragma unroll
      for (int nt = 0; nt < K / 8; ++nt) {
        *reinterpret_cast<u32*>(&Wb[r0 * KP + 8 * nt + cq]) = IO::pack(acc[nt][0], acc[nt][1]);
        *reinterpret_cast<u32*>(&Wb[(r0 + 8) * KP + 8 * nt + cq]) = IO::pack(acc[nt][2], acc[nt][3]);
      }
    }
    // Ũᵀ = Yᵀ Tᵀ for this slice: warp pw owns its value rows 16pw..16pw+15.
    {
      const int d0 = 16 * pw;
      float acc[8][4];
      zero_frags(acc);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        u32 a[4];
        const int mi = lane >> 3;
        ldsm_x4_t(a, &yS[(16 * kk + (lane & 7) + 8 * (mi >> 1)) * YP + d0 + 8 * (mi & 1)]);
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) {
          if (kk > (nt >> 1)) continue;  // Tᵀ[j][i] = 0 for j > i
          const int n = 8 * nt + (lane >> 2);
          u32 bb[2] = {ld32(&tb[n * CP + 16 * kk + cq]), ld32(&tb[n * CP + 16 * kk + cq + 8])};
          IO::mma(acc[nt], a, bb);
        }
      }
      const int d = d0 + (lane >> 2);
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        *reinterpret_cast<u32*>(&Ub[d * CP + 8 * nt + cq]) = IO::pack(acc[nt][0], acc[nt][1]);
        *reinterpret_cast<u32*>(&Ub[(d + 8) * CP + 8 * nt + cq]) = IO::pack(acc[nt][2], acc[nt][3]);
      }
    }
    if (WS) named_bar_arrive(FUSED_BAR_FULL + buf, 256);
    PB::sync();  // T, E, Y reads done (and, without WS, the buffer complete): R1-R3 may be refilled
  };

  // ---- consumer: the state step of chunk i from buffer i mod NBUF (warps 0-3) ----
  const int v0 = xb * FUSED_VS + 16 * warp;  // consumer warps only
  const int vr = v0 + (lane >> 2);
  const int row = p.state_indices ? p.state_indices[b] : b;
  const size_t sbase = (static_cast<size_t>(row) * HO + h) * V * K;
  const int brow = (lane & 7) + 8 * (lane >> 4), bcol = 8 * ((lane >> 3) & 1);
  auto consume = [&](int i, float (&x)[K / 8][4]) {
    const int buf = i % S::NBUF;
    if (WS) named_bar_sync(FUSED_BAR_FULL + buf, 256);
    const unsigned char* fb = smem + S::buf_off + buf * S::buf_bytes;
    const T* Ws = reinterpret_cast<const T*>(fb + S::w_off);
    const T* Qs = reinterpret_cast<const T*>(fb + S::q_off);
    const T* Ks = reinterpret_cast<const T*>(fb + S::k_off);
    const T* As = reinterpret_cast<const T*>(fb + S::a_off);
    const T* Us = reinterpret_cast<const T*>(fb + S::u_off);
    const float gl = gls[buf];
    const long long t0 = cs + static_cast<long long>(i) * CHUNK;
    const int len = static_cast<int>(min_ll(static_cast<long long>(CHUNK), ce - t0));
    const int ur = 16 * warp + (lane >> 2);
    u32 uraw[8][2];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      uraw[nt][0] = ld32(&Us[ur * CP + 8 * nt + cq]);
      uraw[nt][1] = ld32(&Us[(ur + 8) * CP + 8 * nt + cq]);
    }
    // As fwd_scanx_body<OUT = true>: P = X Wᵀ, O = X Q⁺ᵀ, Uᵀ = Ũᵀ − P, O += Uᵀ Aᵀ, X update.
    float pacc[8][4], oacc[8][4];
    zero_frags(pacc);
    zero_frags(oacc);
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) {
      u32 a[4];
      x_a_frag<T>(a, x, kk);
#pragma unroll
      for (int np = 0; np < 4; ++np) {
        u32 bw[4];
        ldsm_x4(bw, &Ws[(16 * np + brow) * KP + 16 * kk + bcol]);
        IO::mma(pacc[2 * np], a, bw);
        IO::mma(pacc[2 * np + 1], a, bw + 2);
        u32 bq[4];
        ldsm_x4(bq, &Qs[(16 * np + brow) * KP + 16 * kk + bcol]);
        IO::mma(oacc[2 * np], a, bq);
        IO::mma(oacc[2 * np + 1], a, bq + 2);
      }
    }
    u32 ua[4][4];
    scan_u_frags<T>(ua, uraw, pacc);
#pragma unroll
    for (int np = 0; np < 4; ++np) {
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        if (kk > np) break;
        u32 bb[4];
        ldsm_x4(bb, &As[(16 * np + brow) * CP + 16 * kk + bcol]);
        IO::mma(oacc[2 * np], ua[kk], bb);
        IO::mma(oacc[2 * np + 1], ua[kk], bb + 2);
      }
    }
    T* Os = reinterpret_cast<T*>(smem + S::o_off) + warp * CHUNK * S::OP;
    scan_store_o<T, V, S::OP>(Os, oacc, static_cast<T*>(p.o), t0, len, HO, h, v0, lane, cq);
    scan_state_update<T, K, KP>(x, ua, Ks, gl, lane);
    if (WS && i + 2 < nch) named_bar_arrive(FUSED_BAR_EMPTY + buf, 256);
  };

  if (WS && warp >= 4) {
    for (int i = 0; i < nch; ++i) produce(i, tid - 128);
    return;
  }
  float x[K / 8][4];
  load_initial_state_frags<K>(x, p, sbase, vr, cq);
  for (int i = 0; i < nch; ++i) {
    if (!WS) produce(i, tid);
    consume(i, x);
    if (!WS) PB::sync();  // O staging (over R1) read back before the next chunk's loads land there
  }
  if (p.final_state) store_final_state_frags<K>(x, p, sbase, vr, cq);
}

constexpr int FUSED_WS_THREADS = 256;
constexpr int FUSED_SEQ_THREADS = 128;

}  // namespace gdn
