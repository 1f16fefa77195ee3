// Gated DeltaNet chunked backward for SM90 (spec linear-attention.md §4.5), chunk 64.
//
// Contract: the forward's inputs (q, k, v, g, beta, cu_seqlens, optional initial_state, a_log,
// dt_bias; no state_indices) plus dO [T,HO,V] (io dtype) and optional d_final_state
// [N,HO,V,K] (the state dtype); outputs dQ/dK/dV like q/k/v, dG like g, dBeta like beta,
// optional d_initial_state (the state dtype), d_a_log, d_dt_bias (their parameters' dtypes).
// All scratch lives in the caller's workspace; no allocation, no host synchronisation, no
// atomics: every sum runs in a fixed order (deterministic, bitwise repeatable).
//
// Launches (one stream, in order; the single parameter is BwdParams by value):
//  1. gdn_chunk_offsets (the forward's, on bwd.f)            chunk table
//  2. gdn_bwd_prep   (chunk slots × HO)                       the forward's per-chunk factors
//     (W, Q⁺, Kᴿ, Ũᵀ, A, Γ_last) plus T, E, Γ, β kept for the backward
//  3. gdn_bwd_fscan  (V/64 × HO × N)                          the forward state scan replayed,
//     writing the state S_c entering every chunk (fp32, or the io dtype with FLAG_BWD_S_IO for
//     gdn_bwd_tokens_tc4, the default)
//  4. gdn_bwd_dscan_w8 (V/64 × HO × N, 8 warps: dscan_w8_chunks, bitwise gdn_bwd_dscan_io's outputs;
//     the engine's choice from 3/4 of a wave of blocks up, BWD_DSCAN_RULE), gdn_bwd_dscan_io
//     (V/64 × HO × N, 4 warps; dS' stored in the io dtype; below that, or DNNPLAN_GDN_BWD_DSCAN=v1), or
//     gdn_bwd_dscan_mma (the same with fp32 dS', with the older token stages) or its fp32
//     CUDA-core variant gdn_bwd_dscan (V/16 × HO × N, 128 threads; DNNPLAN_GDN_BWD_DSCAN=fp32):
//     reverse scan of dX = dSᵀ:
//     per chunk (reverse) stores dX' (the gradient of the state leaving the chunk), then
//     dUᵀ = dOᵀ A + dX' Kᴿᵀ, dRᵀ = dUᵀ T (stored, fp32), dX = e^{Γ_last} dX' + dOᵀ Q⁺ − dRᵀ E;
//     finally d_initial_state = dX
//  5. gdn_bwd_tokens_tc12 (the default since session 10, bwd_tokens_tc_body<.., 12>: tc11 with the
//     row phase's raw q / k rows and phase A's G tile free of bank conflicts; bitwise tc11),
//     gdn_bwd_tokens_tc11 (DNNPLAN_GDN_BWD_TOKENS=tc11, session 8, bwd_tokens_tc_body<.., 11>: tc5 with the
//     fp32 dR tile by cp.async, consumed after U, conflict-free fp32 result staging and phase A's G
//     tile in rows of CHUNK + 8; bitwise tc5; its steps REV 10 and REV 9 are template levels
//     only, not bundled), gdn_bwd_tokens_tc5 (DNNPLAN_GDN_BWD_TOKENS=tc5: every product on the tensor cores, dS' in the
//     io dtype from gdn_bwd_dscan_io, S_c in the io dtype, dq/dk/dv of ungrouped ports written
//     directly; bwd_tokens_tc_body<.., 5>), its earlier
//     revisions gdn_bwd_tokens_tc4 / tc3 / tc2 / tc (DNNPLAN_GDN_BWD_TOKENS=tc4|tc3|tc2|tc), or
//     gdn_bwd_tokens_mma (value-dimension products on the tensor cores, CUDA-core tail;
//     DNNPLAN_GDN_BWD_TOKENS=mma) or gdn_bwd_tokens (fp32 CUDA cores; DNNPLAN_GDN_BWD_TOKENS=fp32),
//     chunk slots × HO, 512 threads: per chunk, all value rows in one block: U = Ũ − W S_c, dQ⁺ = dO S_cᵀ, dE = −dR S_cᵀ, dKᴿ = U dS'ᵀ, dA = dO Uᵀ,
//     dL = −dR Uᵀ, dD = Σ S_c ⊙ dS'; then dq̂, dk̂, dv, dβ, dΓ, the reverse cumulative sum into
//     d log α and the port chain rules (l2norm, beta sigmoid, gate transforms); dq/dk/dv per
//     output head (fp32) to the workspace, dG and dBeta straight to their ports
//  6. gdn_bwd_fold   (T × 3)                                  head-group sums (fixed order) into
//     dQ, dK, dV in the io dtype (with FLAG_BWD_DIRECT only for grouped ports; not launched when
//     no port is grouped)
//  7. gdn_bwd_params (HO, 256 threads, 2 KB dynamic smem)    d_a_log, d_dt_bias: fixed-shape
//     reductions over tokens
#pragma once

#include "gdn_fwd.cuh"
#ifndef GDN_HOST_EMU  // the CPU emulation defines the hand-over primitives (bench/gdn_host_emu.h)
#include "dnnp_overlap.cuh"
#endif
// The next token stage's building blocks (session 29, helper m029: mbarriers, bulk copies, named
// barriers, setmaxnreg; M0 of bench/gdn_results.md's td29 design). No entry uses them yet; under
// GDN_HOST_EMU the header declares nothing (bench/gdn_wgmma_emu.h emulates them).
#include "dnnp_async.cuh"
#include "dnnp_tma.cuh"

namespace gdn {

// The token tile's ring by tensor maps (session 39: `tw7`, tw1_products' TMA form; the host's
// src/engines/gdn/tma_maps.rs BwdRingMapShape describes and encodes them): s, ds over the states
// S and dS′ as rows of K ([chunk slots · HO · V][K], box 64 keys x 32 rows, 128-byte swizzle: one
// key half of a quarter's [32][K] tile, tw_sq_off's layout), u, dr over the U and dR tiles as rows
// of V ([chunk slots · HO · 64][V], box 32 values x 64 tokens, 64-byte swizzle: a quarter's
// [64][32] tile, tw_uq_off's layout). Zero unless the plan runs tw7.
struct TwRingMaps {
  dnnp::TmaDesc s, ds, u, dr;
};

struct BwdParams {
  FwdParams f;  // inputs and the forward's workspace regions (o, final_state: null)
  const void* d_o;            // [T, HO, V] io
  const void* d_final_state;  // [N, HO, V, K] state dtype, may be null
  void* dq;                   // [T, H, K] io
  void* dk;                   // [T, HK, K] io
  void* dv;                   // [T, HV, V] io
  void* dg;                   // [T, HO] g dtype
  void* dbeta;                // [T, HO] beta dtype
  void* d_initial_state;      // [N, HO, V, K] state dtype, may be null
  void* d_a_log;              // [HO] a_log dtype, may be null
  void* d_dt_bias;            // [HO] dt_bias dtype, may be null
  long long total_t;
  // Backward workspace regions.
  void* ws_t;      // [chunks, HO, 64, 64] io
  void* ws_e;      // [chunks, HO, 64, K] io
  float* ws_gam;   // [chunks, HO, 64]
  float* ws_bet;   // [chunks, HO, 64]
  float* ws_s;     // [chunks, HO, V, K]
  float* ws_ds;    // [chunks, HO, V, K]
  float* ws_dr;    // [chunks, HO, 64, V]
  float* ws_dq;    // [T, HO, K]
  float* ws_dk;    // [T, HO, K]
  float* ws_dv;    // [T, HO, V]
  float* ws_pa;    // [T, HO]: d log α · log α (d_a_log terms)
  float* ws_pb;    // [T, HO]: dG (d_dt_bias terms)
  // The U tiles [slot c·HO + h][64 tokens][V] io (bwd_u_tiles; session 38): the second half of the
  // ws_dr region, or the U region of chunk_factors that a U-saving forward filled.
  void* ws_u;
};

// FwdParams::flags bit set by the backward plan with gdn_bwd_tokens_tc: dq / dk / dv of a port
// with HO heads are written by the token stage in the io dtype, and the fold skips that port.
constexpr int FLAG_BWD_DIRECT = 1 << 12;

static_assert(sizeof(BwdParams) == 400, "BwdParams layout changed: update src/engines/gdn/params.rs");

__device__ __forceinline__ void store_any(void* p, int dtype, long long i, float x) {
  if (dtype == DT_F32) static_cast<float*>(p)[i] = x;
  else if (dtype == DT_BF16) static_cast<unsigned short*>(p)[i] = Io<gdn_bf16>::f_to_bits(x);
  else static_cast<unsigned short*>(p)[i] = Io<gdn_f16>::f_to_bits(x);
}

__device__ __forceinline__ float sigmoidf_(float x) { return 1.f / (1.f + __expf(-x)); }

// The gate and beta chain rules (§3.2) of element gi = token · HO + h, from dla = dΓ-derived
// d log α and the β gradient dbeta_i: writes dg, dβ and the d_a_log / d_dt_bias terms.
// gate_beta_grads_raw takes the raw gate and (with use_beta_sigmoid) the raw β already loaded.
__device__ __forceinline__ void gate_beta_grads_raw(const BwdParams& bp, long long gi, int h, float dla, float dbeta_i,
                                                    float graw, float braw) {
  const FwdParams& p = bp.f;
  float dgv, pa = 0.f;
  if (p.flags & FLAG_SAFE_GATE) {
    const float ea = p.a_log ? __expf(load_any(p.a_log, p.a_log_dtype, h)) : 1.f;
    const float x = graw + (p.dt_bias ? load_any(p.dt_bias, p.dt_bias_dtype, h) : 0.f);
    const float sp = x > 20.f ? x : log1pf(__expf(x));
    dgv = dla * (-ea) * sigmoidf_(x);
    pa = dla * (-ea * sp);
  } else if (p.flags & FLAG_LINEAR_GATE) {
    dgv = dla / (graw + 1e-10f);
  } else {
    dgv = dla;
  }
  store_any(bp.dg, p.g_dtype, gi, dgv);
  bp.ws_pa[gi] = pa;
  bp.ws_pb[gi] = dgv;
  float db = dbeta_i;
  if (p.flags & FLAG_BETA_SIGMOID) {
    const float sg = sigmoidf_(braw);
    db *= ((p.flags & FLAG_NEG_EIGVAL) ? 2.f : 1.f) * sg * (1.f - sg);
  }
  store_any(bp.dbeta, p.beta_dtype, gi, db);
}

__device__ __forceinline__ void gate_beta_grads(const BwdParams& bp, long long gi, int h, float dla, float dbeta_i) {
  const FwdParams& p = bp.f;
  const float braw = (p.flags & FLAG_BETA_SIGMOID) ? load_any(p.beta, p.beta_dtype, gi) : 0.f;
  gate_beta_grads_raw(bp, gi, h, dla, dbeta_i, load_any(p.g, p.g_dtype, gi), braw);
}

// ---------------------------------------------------------------------------------------
// Stage 4: reverse state-gradient scan. Block: 16 value rows [v0, v0 + 16) of one (seq, head).
// ---------------------------------------------------------------------------------------
constexpr int DSCAN_THREADS = 128;
constexpr int DSCAN_VS = 16;

template <int K>
struct DscanSmem {
  static constexpr int KF = K + 1;       // fp32 row of a C×K tile (padded)
  static constexpr int CF = CHUNK + 1;   // fp32 row of a C×C tile
  static constexpr size_t a_off = 0;                          // A   [64][CF]
  static constexpr size_t t_off = a_off + CHUNK * CF * 4;     // T   [64][CF]
  static constexpr size_t kr_off = t_off + CHUNK * CF * 4;    // Kᴿ  [64][KF]
  static constexpr size_t qp_off = kr_off + CHUNK * KF * 4;   // Q⁺  [64][KF]
  static constexpr size_t e_off = qp_off + CHUNK * KF * 4;    // E   [64][KF]
  static constexpr size_t do_off = e_off + CHUNK * KF * 4;    // dO  [64][VS + 1]
  static constexpr size_t dx_off = do_off + CHUNK * (DSCAN_VS + 1) * 4;  // dX [VS][KF]
  static constexpr size_t du_off = dx_off + DSCAN_VS * KF * 4;          // dUᵀ [VS][CF]
  static constexpr size_t dr_off = du_off + DSCAN_VS * CF * 4;          // dRᵀ [VS][CF]
  static constexpr size_t bytes = dr_off + DSCAN_VS * CF * 4;
};

// rows × COLS io elements at `src` (row stride COLS) into fp32 smem rows of `ld` floats.
template <typename T, int COLS>
__device__ __forceinline__ void tile_to_f32(float* dst, int ld, const T* src, int rows, int tid, int nthreads) {
  constexpr int VEC = COLS / 8;
  for (int i = tid; i < rows * VEC; i += nthreads) {
    const int r = i / VEC, c8 = i % VEC;
    const uint4 raw = *reinterpret_cast<const uint4*>(&src[static_cast<size_t>(r) * COLS + 8 * c8]);
    // Halves by shifts, never through a pointer of another type (strict aliasing: the host
    // emulation's compiler zeroed the values when they were read through unsigned short*).
    const u32 w[4] = {raw.x, raw.y, raw.z, raw.w};
#pragma unroll
    for (int e = 0; e < 8; ++e)
      dst[r * ld + 8 * c8 + e] = Io<T>::bits_to_f(static_cast<unsigned short>(w[e >> 1] >> (16 * (e & 1))));
  }
}

__device__ __forceinline__ float load_state(const void* p, int dtype, size_t i) {
  return dtype == DT_F32 ? static_cast<const float*>(p)[i] : Io<gdn_bf16>::bits_to_f(static_cast<const unsigned short*>(p)[i]);
}

template <typename T, int K, int V>
__device__ __forceinline__ void bwd_dscan_body(const BwdParams& bp) {
  using S = DscanSmem<K>;
  constexpr int KF = S::KF, CF = S::CF, VS = DSCAN_VS, DF = DSCAN_VS + 1;
  const FwdParams& p = bp.f;
  extern __shared__ __align__(16) unsigned char smem[];
  float* As = reinterpret_cast<float*>(smem + S::a_off);
  float* Ts = reinterpret_cast<float*>(smem + S::t_off);
  float* KRs = reinterpret_cast<float*>(smem + S::kr_off);
  float* QPs = reinterpret_cast<float*>(smem + S::qp_off);
  float* Es = reinterpret_cast<float*>(smem + S::e_off);
  float* dOs = reinterpret_cast<float*>(smem + S::do_off);
  float* dX = reinterpret_cast<float*>(smem + S::dx_off);
  float* dU = reinterpret_cast<float*>(smem + S::du_off);
  float* dR = reinterpret_cast<float*>(smem + S::dr_off);

  const int h = blockIdx.y, b = blockIdx.z, tid = threadIdx.x;
  const int HO = p.ho;
  const int v0 = blockIdx.x * VS;
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  const int c_begin = p.chunk_offsets[b], c_end = p.chunk_offsets[b + 1];
  const size_t sbase = (static_cast<size_t>(b) * HO + h) * V * K;

  for (int i = tid; i < VS * K; i += DSCAN_THREADS) {
    const int r = i / K, kk = i % K;
    dX[r * KF + kk] = bp.d_final_state ? load_state(bp.d_final_state, p.state_dtype, sbase + static_cast<size_t>(v0 + r) * K + kk) : 0.f;
  }
  // Thread mapping: value row tv, token rows ti + 8m (dUᵀ, dRᵀ), key columns ti + 8m (dX).
  const int tv = tid & 15, ti = tid >> 4;
  for (int c = c_end - 1; c >= c_begin; --c) {
    const size_t ch = static_cast<size_t>(c) * HO + h;
    const long long t0 = cs + static_cast<long long>(c - c_begin) * CHUNK;
    const int len = static_cast<int>(min_ll(static_cast<long long>(CHUNK), ce - t0));
    __syncthreads();  // previous iteration done with every tile
    tile_to_f32<T, CHUNK>(As, CF, static_cast<const T*>(p.ws_a) + ch * CHUNK * CHUNK, CHUNK, tid, DSCAN_THREADS);
    tile_to_f32<T, CHUNK>(Ts, CF, static_cast<const T*>(bp.ws_t) + ch * CHUNK * CHUNK, CHUNK, tid, DSCAN_THREADS);
    tile_to_f32<T, K>(KRs, KF, static_cast<const T*>(p.ws_kr) + ch * CHUNK * K, CHUNK, tid, DSCAN_THREADS);
    tile_to_f32<T, K>(QPs, KF, static_cast<const T*>(p.ws_q) + ch * CHUNK * K, CHUNK, tid, DSCAN_THREADS);
    tile_to_f32<T, K>(Es, KF, static_cast<const T*>(bp.ws_e) + ch * CHUNK * K, CHUNK, tid, DSCAN_THREADS);
    for (int i = tid; i < CHUNK * VS; i += DSCAN_THREADS) {
      const int r = i / VS, vv = i % VS;
      dOs[r * DF + vv] = r < len ? Io<T>::to_f(static_cast<const T*>(bp.d_o)[(static_cast<size_t>(t0 + r) * HO + h) * V + v0 + vv]) : 0.f;
    }
    // dS' of this chunk (the gradient of the state leaving it), for the token stage.
    {
      float* ds = bp.ws_ds + ch * V * K;
      for (int i = tid; i < VS * K; i += DSCAN_THREADS) {
        const int r = i / K, kk = i % K;
        ds[static_cast<size_t>(v0 + r) * K + kk] = dX[r * KF + kk];
      }
    }
    __syncthreads();
    // dUᵀ[v][i] = Σ_{j ≥ i} dO[j][v] A[j][i] + Σ_k dX[v][k] Kᴿ[i][k].
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      const int i = ti + 8 * m;
      float s = 0.f;
      for (int j = i; j < CHUNK; ++j) s += dOs[j * DF + tv] * As[j * CF + i];
      for (int kk = 0; kk < K; ++kk) s += dX[tv * KF + kk] * KRs[i * KF + kk];
      dU[tv * CF + i] = s;
    }
    __syncthreads();
    // dRᵀ[v][j] = Σ_{i ≥ j} dUᵀ[v][i] T[i][j].
    {
      float* dr = bp.ws_dr + ch * CHUNK * V;
#pragma unroll
      for (int m = 0; m < 8; ++m) {
        const int j = ti + 8 * m;
        float s = 0.f;
        for (int i = j; i < CHUNK; ++i) s += dU[tv * CF + i] * Ts[i * CF + j];
        dR[tv * CF + j] = s;
        dr[static_cast<size_t>(j) * V + v0 + tv] = s;
      }
    }
    __syncthreads();
    // dX = e^{Γ_last} dX' + dOᵀ Q⁺ − dRᵀ E (each thread its own 16 entries of row tv).
    const float decay = __expf(p.ws_gl[ch]);
    float nx[K / 8];
#pragma unroll
    for (int m = 0; m < K / 8; ++m) nx[m] = decay * dX[tv * KF + ti + 8 * m];
    for (int i = 0; i < CHUNK; ++i) {
      const float a = dOs[i * DF + tv], r = dR[tv * CF + i];
#pragma unroll
      for (int m = 0; m < K / 8; ++m) nx[m] += a * QPs[i * KF + ti + 8 * m] - r * Es[i * KF + ti + 8 * m];
    }
    __syncthreads();
#pragma unroll
    for (int m = 0; m < K / 8; ++m) dX[tv * KF + ti + 8 * m] = nx[m];
  }
  __syncthreads();
  if (bp.d_initial_state) {
    for (int i = tid; i < VS * K; i += DSCAN_THREADS) {
      const int r = i / K, kk = i % K;
      const size_t idx = sbase + static_cast<size_t>(v0 + r) * K + kk;
      if (p.state_dtype == DT_F32) static_cast<float*>(bp.d_initial_state)[idx] = dX[r * KF + kk];
      else static_cast<unsigned short*>(bp.d_initial_state)[idx] = Io<gdn_bf16>::f_to_bits(dX[r * KF + kk]);
    }
  }
}

// ---------------------------------------------------------------------------------------
// Stage 4 on the tensor cores (the default): the same recurrence as bwd_dscan_body, with the
// forward scan's fragment layouts. Block: NW warps, 16 value rows each (VS = 16·NW rows of one
// (seq, head)); a STAGES-deep cp.async pipeline streams A, T, Kᴿ, Q⁺, E and the dO slice of the
// chunks in reverse order. Per warp, dX (16 × K) lives in fp32 mma accumulators; the operands
// dX, dUᵀ, dRᵀ are rounded to the io dtype for the products (as the forward rounds X and Uᵀ),
// every product accumulates in fp32, and dS' / dR leave in fp32 exactly as the fp32 version's.
// ---------------------------------------------------------------------------------------
constexpr int DSCAN_MMA_WARPS = 4;
constexpr int DSCAN_MMA_STAGES = 2;

template <int K, int NW, int STAGES>
struct DscanMmaSmem {
  static constexpr int KP = K + 8;
  static constexpr int CP = CHUNK + 8;
  static constexpr int VS = 16 * NW;
  static constexpr int DP = VS + 8;
  static constexpr size_t a_off = 0;                           // A  [64][CP]
  static constexpr size_t t_off = a_off + CHUNK * CP * 2;      // T  [64][CP]
  static constexpr size_t kr_off = t_off + CHUNK * CP * 2;     // Kᴿ [64][KP]
  static constexpr size_t q_off = kr_off + CHUNK * KP * 2;     // Q⁺ [64][KP]
  static constexpr size_t e_off = q_off + CHUNK * KP * 2;      // E  [64][KP]
  static constexpr size_t do_off = e_off + CHUNK * KP * 2;     // dO [64 tokens][DP]
  static constexpr size_t stage = do_off + CHUNK * DP * 2;
  static constexpr size_t bytes = STAGES * stage;
  // R2 (the overlapped producer dscan_ov2): past the stages, per warp, its 16 value rows of dS'
  // in the io dtype ([16][KP]), staged so that they leave as 16-byte row-contiguous stores.
  static constexpr size_t dss_warp = 16 * KP * 2;
  static constexpr size_t bytes_r2 = bytes + NW * dss_warp;
};

// DS_IO: dS' leaves in the io dtype (read so by gdn_bwd_tokens_tc, which rounds it to the io dtype
// as an operand anyway) instead of fp32.
// X's fragments (this thread's rows vr, vr + 8, columns 8nt + cq + {0, 1}) to d_initial_state at
// sbase ([V][K], stored domain; fp32 or bf16 pairs by the state dtype).
template <int K>
__device__ __forceinline__ void store_d_initial_state(const BwdParams& bp, size_t sbase, const float (&x)[K / 8][4],
                                                      int vr, int cq) {
  store_state_frags<K>(x, bp.d_initial_state, bp.f.state_dtype, sbase, vr, cq);
}

// X fragments (rows vr, vr + 8; columns col0 + 8nt + cq + {0, 1}) from d_final_state ([V][K] at
// sbase, fp32 or bf16 pairs by the state dtype), zero without one: where an uncut reverse scan
// starts (the 4-warp scan holds all K columns, a half of the 8-warp scan K / 2 from col0).
template <int K, int NX>
__device__ __forceinline__ void load_d_final_state_frags(const BwdParams& bp, size_t sbase, float (&x)[NX][4], int vr,
                                                         int cq, int col0) {
  load_state_frags<8 * NX, K>(x, bp.d_final_state, bp.f.state_dtype, sbase + col0, vr, cq);
}

// R2's dS' store: this warp's X fragments (value rows row0 + (lane >> 2) + {0, 8}, all K columns)
// packed to the io dtype into the warp's [16][KP] staging rows, then the 16 × K values written as
// one contiguous run of 16-byte stores at ws_ds[ch][row0][0] (each lane 16 bytes, lanes
// consecutive). The staging rows are reused by the next chunk only after the loop's closing
// barrier. Bank-conflict-free both ways (KP ≡ 8 mod 64 elements).
template <typename T, int K, int V, typename S>
__device__ __forceinline__ void dscan_store_ds_staged(const BwdParams& bp, unsigned char* smem, size_t ch,
                                                      const float (&x)[K / 8][4], int row0, int warp, int lane) {
  constexpr int KP = S::KP, CPR = K / 8;  // 16-byte pieces per row
  T* sc = reinterpret_cast<T*>(smem + S::bytes + warp * S::dss_warp);
  const int g = lane >> 2, cq = 2 * (lane & 3);
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf)
      *reinterpret_cast<u32*>(&sc[(g + 8 * hf) * KP + 8 * nt + cq]) = Io<T>::pack(x[nt][2 * hf], x[nt][2 * hf + 1]);
  }
  __syncwarp();
  T* dst = reinterpret_cast<T*>(bp.ws_ds) + ch * V * K + static_cast<size_t>(row0) * K;
#pragma unroll
  for (int it = 0; it < K / 16; ++it) {
    const int i = 32 * it + lane, r = i / CPR, c8 = i % CPR;
    *reinterpret_cast<uint4*>(dst + 8 * i) = *reinterpret_cast<const uint4*>(&sc[r * KP + 8 * c8]);
  }
}

// DR_IO's staged dR store (session 21, with R2's dS' staging: the overlapped producers
// dscan_ov5dr / dscanp_ov5dr): this warp's dRᵀ fragments (value rows row0 + g + {0, 8}, tokens
// 8nt + cq + {0, 1}) to ws_dr in the io dtype, [token][value] rows of V, through the warp's dS'
// staging rows (free once its dS' left: 2,048 B of 2,304 / 4,352 at K = 64 / 128): lanes g, g ^ 1
// trade one value per pair (a shuffle), so that each lane holds two adjacent values of one token
// and packs them (the same RN rounding per element as a scalar store), the warp's [64][16] tile
// staged (16-byte halves of a token row swapped by bit 2 of the token: conflict-free both ways),
// then written as 16-byte row pieces: a full 32-byte sector per token row, 4 stores per lane
// instead of 32 scattered 2-byte ones. The staging rows are reused by the next chunk's dS' only
// after the loop's next barrier.
template <typename T, int V, typename S>
__device__ __forceinline__ void dscan_store_dr_staged(const BwdParams& bp, unsigned char* smem, size_t ch,
                                                      const float (&dr)[8][4], int row0, int warp, int lane) {
  static_assert(CHUNK * 16 * 2 <= S::dss_warp, "the dR tile fits the warp's dS' staging rows");
  T* sc = reinterpret_cast<T*>(smem + S::bytes + warp * S::dss_warp);
  const int g = lane >> 2, cq = 2 * (lane & 3), odd = g & 1, v0 = g & ~1;
  __syncwarp();  // every lane's reads of the dS' staging rows are done
#pragma unroll
  for (int nt = 0; nt < 8; ++nt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      // (token j0, value g + 8hf) and (token j0 + 1, the same value); the even lane keeps token j0,
      // the odd one token j0 + 1.
      const float a = dr[nt][2 * hf], b = dr[nt][2 * hf + 1];
      const float r = __shfl_xor_sync(0xffffffffu, odd ? a : b, 4);
      const int j = 8 * nt + cq + odd;
      const u32 w = odd ? Io<T>::pack(r, b) : Io<T>::pack(a, r);
      *reinterpret_cast<u32*>(&sc[16 * j + 8 * (hf ^ ((j >> 2) & 1)) + v0]) = w;
    }
  }
  __syncwarp();
  T* dst = reinterpret_cast<T*>(bp.ws_dr) + ch * CHUNK * V + row0;
#pragma unroll
  for (int it = 0; it < CHUNK * 2 / 32; ++it) {
    const int i = 32 * it + lane, j = i >> 1, hh = i & 1;
    *reinterpret_cast<uint4*>(dst + static_cast<size_t>(j) * V + 8 * hh) =
        *reinterpret_cast<const uint4*>(&sc[16 * j + 8 * (hh ^ ((j >> 2) & 1))]);
  }
}

// PUBW (session 18, the overlapped producers dscan_ov5 / dscanp_ov5): the publisher warp's side of
// dscan_mma_chunks' R2 loop over chunks [c_begin, c_end) of head h, as warp NW of NW + 1 (the NW
// compute warps run the loop): the loop's block barriers (one per chunk, then the closing one),
// after each the unit of the chunk before published by its lane 0 (gpu-scope fence, release store),
// as thread 0 does in the R2 loop (dnnp_flag_publish_after_barrier: every compute thread's stores
// of that chunk precede the barrier). It writes no unit data, so no compute warp ever waits on a
// fence: the R2 loop's thread 0 stalls its warp on MEMBAR.SC.GPU + MEMBAR.ALL.GPU each chunk (ncu,
// main 2f7c732 at (4, 8192, 16): 0.24 membar stalls per issued instruction), right after its warp's
// stores of the chunk before (ptxas schedules every store of the loop body last). H200: the
// producer's step at one wave did not move (the other warps hide that stall), the whole backward
// −0.5 to −1.3 % (bench/gdn_results.md, session 18); ptxas: 168 registers at 9 warps.
__device__ __forceinline__ void dscan_publisher(unsigned* pub_flags, int h, int HO, int c_begin, int c_end) {
  const int nch = c_end - c_begin;
  const bool lead = (threadIdx.x & 31) == 0;
  for (int s = 0; s < nch; ++s) {
    __syncthreads();
    if (s > 0 && lead) {
      __threadfence();
      dnnp_flag_store_release(pub_flags + static_cast<size_t>(c_end - s) * HO + h, 1u);
    }
  }
  if (nch > 0) {
    __syncthreads();
    if (lead) {
      __threadfence();
      dnnp_flag_store_release(pub_flags + static_cast<size_t>(c_begin) * HO + h, 1u);
    }
  }
}

// One tile of a reverse-scan stage (CHUNK rows of ROWLEN elements, rows of ROWLEN + 8 in smem):
// tile_async, or with FIXED (R2) tile_async_fixed (compile-time trip count, the same copies).
template <typename T, int ROWLEN, int NT, bool FIXED>
__device__ __forceinline__ void dscan_tile_async(T* dst, const T* src, int tid) {
  if constexpr (FIXED) tile_async_fixed<T, ROWLEN, CHUNK, ROWLEN, NT>(dst, src, tid);
  else tile_async<T, ROWLEN>(dst, src, CHUNK, ROWLEN, tid, NT);
}

// One reverse-scan pipeline stage: chunk c's A, T, Kᴿ, Q⁺ and E (cp.async) and the block's VS dO
// value columns from vb (rows past the chunk's tokens zeroed) into the stage at `base`, laid out
// as Lay (DscanMmaSmem); NT threads. The sequence's tokens are [cs, ce), chunk c_first holds cs.
// Shared by the 4-warp and the 8-warp chunk loops; FIXED (R2): every copy loop with its trip count
// known at compile time (each thread's first address once, then constant offsets).
// PART (session 14, the PHASED loop): 0 = the whole stage; 1 = the tiles a chunk reads first (A, T,
// Kᴿ, dO); 2 = the ones its state update reads (Q⁺, E).
// The dO rows of a chunk ([token][value], this block's VS value columns from vb, rows of DP
// elements) by cp.async at compile-time trip counts (each thread's first address once, then
// constant offsets); rows past the chunk's `len` tokens zero-filled. Shared by dscan_issue_chunk's
// FIXED copies and the wgmma reverse scan's (gdn_bwd_dscan_gx.cuh).
template <typename T, int V, int VS, int DP, int NT>
__device__ __forceinline__ void dscan_copy_do_rows(T* do_tile, const BwdParams& bp, long long t0, int len, int h, int HO,
                                                   int vb, int tid) {
  constexpr int VEC = VS / 8, RSTEP = NT / VEC;
  static_assert((CHUNK * VEC) % NT == 0 && NT % VEC == 0, "whole rounds of whole dO rows");
  const int r0 = tid / VEC, c8 = tid % VEC;
  T* ds = do_tile + r0 * DP + 8 * c8;
  const T* dog = static_cast<const T*>(bp.d_o) + (static_cast<size_t>(t0 + r0) * HO + h) * V + vb + 8 * c8;
#pragma unroll
  for (int it = 0; it < CHUNK / RSTEP; ++it) {
    if (r0 + it * RSTEP < len)
      cp_async16(ds + it * RSTEP * DP, dog + static_cast<size_t>(it) * RSTEP * HO * V);
    else
      *reinterpret_cast<uint4*>(ds + it * RSTEP * DP) = make_uint4(0u, 0u, 0u, 0u);
  }
}

template <typename T, int K, int V, typename Lay, int NT, bool FIXED = false, int PART = 0>
__device__ __forceinline__ void dscan_issue_chunk(const BwdParams& bp, unsigned char* base, int c, int h, long long cs,
                                                  long long ce, int c_first, int vb, int tid) {
  const FwdParams& p = bp.f;
  constexpr int VS = Lay::VS, DP = Lay::DP;
  const int HO = p.ho;
  const size_t ch = static_cast<size_t>(c) * HO + h;
  if constexpr (PART != 2) {
    dscan_tile_async<T, CHUNK, NT, FIXED>(reinterpret_cast<T*>(base + Lay::a_off), static_cast<const T*>(p.ws_a) + ch * CHUNK * CHUNK, tid);
    dscan_tile_async<T, CHUNK, NT, FIXED>(reinterpret_cast<T*>(base + Lay::t_off), static_cast<const T*>(bp.ws_t) + ch * CHUNK * CHUNK, tid);
    dscan_tile_async<T, K, NT, FIXED>(reinterpret_cast<T*>(base + Lay::kr_off), static_cast<const T*>(p.ws_kr) + ch * CHUNK * K, tid);
  }
  if constexpr (PART != 1) {
    dscan_tile_async<T, K, NT, FIXED>(reinterpret_cast<T*>(base + Lay::q_off), static_cast<const T*>(p.ws_q) + ch * CHUNK * K, tid);
    dscan_tile_async<T, K, NT, FIXED>(reinterpret_cast<T*>(base + Lay::e_off), static_cast<const T*>(bp.ws_e) + ch * CHUNK * K, tid);
  }
  if constexpr (PART == 2) return;
  const long long t0 = cs + static_cast<long long>(c - c_first) * CHUNK;
  const int len = static_cast<int>(min_ll(static_cast<long long>(CHUNK), ce - t0));
  constexpr int VEC = VS / 8;
  if constexpr (FIXED) {
    dscan_copy_do_rows<T, V, VS, DP, NT>(reinterpret_cast<T*>(base + Lay::do_off), bp, t0, len, h, HO, vb, tid);
  } else {
    T* ds = reinterpret_cast<T*>(base + Lay::do_off);
    const T* dog = static_cast<const T*>(bp.d_o);
    for (int i = tid; i < CHUNK * VEC; i += NT) {
      const int r = i / VEC, c8 = i % VEC;
      if (r < len)
        cp_async16(&ds[r * DP + 8 * c8], &dog[(static_cast<size_t>(t0 + r) * HO + h) * V + vb + 8 * c8]);
      else
        *reinterpret_cast<uint4*>(&ds[r * DP + 8 * c8]) = make_uint4(0u, 0u, 0u, 0u);
    }
  }
}

// acc += a · B for a lower-triangular 64-token io tile B (rows of LD; B's 16-blocks (kk, np) zero
// for np > kk): acc[2np], acc[2np + 1] += a[kk] · B[16kk.., 16np..] for np ≤ kk, kk ascending, B
// by ldmatrix.trans (lrow, bcol: this lane's row and column offsets). The reverse scan's dOᵀ A
// and dUᵀ T.
template <typename T, int LD>
__device__ __forceinline__ void mma_tril_b(float (&acc)[8][4], const u32 (&a)[4][4], const T* B, int lrow, int bcol) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
    for (int np = 0; np < 4; ++np) {
      if (np > kk) continue;
      u32 r[4];
      ldsm_x4_t(r, &B[(16 * kk + lrow) * LD + 16 * np + bcol]);
      Io<T>::mma(acc[2 * np], a[kk], r);
      Io<T>::mma(acc[2 * np + 1], a[kk], r + 2);
    }
  }
}

// The reverse scan's state update on NX accumulator tiles of key columns col0 + [0, 8·NX):
// X ← e^{Γ_last} X + dOᵀ Q⁺ − dRᵀ E, i.e. x *= decay, then for k-blocks kk ascending and column
// pairs np: x += doa[kk] · Q⁺[16kk.., col0 + 16np..], x += dra[kk] · E[..] (dra holds −dRᵀ), B
// ([token][key], rows of KP) via ldmatrix.trans. Shared by the 4-warp and 8-warp chunk loops.
template <typename T, int KP, int NX>
__device__ __forceinline__ void dscan_state_update(float (&x)[NX][4], float decay, const u32 (&doa)[4][4],
                                                   const u32 (&dra)[4][4], const T* Qs, const T* Es, int col0, int lrow,
                                                   int bcol) {
  scale_frags(x, decay);
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
    for (int np = 0; np < NX / 2; ++np) {
      u32 r[4];
      ldsm_x4_t(r, &Qs[(16 * kk + lrow) * KP + col0 + 16 * np + bcol]);
      Io<T>::mma(x[2 * np], doa[kk], r);
      Io<T>::mma(x[2 * np + 1], doa[kk], r + 2);
      ldsm_x4_t(r, &Es[(16 * kk + lrow) * KP + col0 + 16 * np + bcol]);
      Io<T>::mma(x[2 * np], dra[kk], r);
      Io<T>::mma(x[2 * np + 1], dra[kk], r + 2);
    }
  }
}

// The tensor-core reverse scan's chunk loop, shared by the uncut scan (bwd_dscan_mma_body) and
// the piece chain's summary and seeded passes (bwd_dscan_piece_body, gdn_bwd_chain.cuh): chunks
// [c_begin, c_end) of the sequence whose tokens are [cs, ce) and whose chunk c_first holds token cs,
// last chunk first, carrying X = dSᵀ (this thread's rows vr, vr + 8 of the block's value slice from
// vb) in x. Per chunk: dS' (X on entry) to ws_ds (DS: 0 not stored, 1 fp32, 2 io dtype), dR to
// ws_dr (STORE_DR), then X ← e^{Γ_last} X + dOᵀ Q⁺ − dRᵀ E. PUB (the overlapped backward's
// producer, gdn_bwd_overlap.cuh; the block then holds all V value rows): after each chunk's
// stores, the closing barrier publishes unit (c, h) in pub_flags[c · HO + h] (release).
// R2 (session 9, the overlapped producer dscan_ov2 / dscanp_ov2; the same mma sequence per
// accumulator, so bitwise the same outputs): the copies issued with compile-time trip counts and
// constant offsets (dscan_issue_chunk with FIXED), Kᴿ's B fragments by ldmatrix.x4 (the 8-warp loop's
// loads: the same operand values, a quarter of the shared-load instructions), Γ_last one chunk
// ahead, one block barrier per chunk instead of two (the copies of the next chunk issued after
// it; the previous chunk's unit published after it, so the publishing thread's fence waits on
// stores issued a chunk earlier), and (DS == 2) dS' staged per warp in shared memory (DscanMmaSmem::bytes_r2) and stored
// as 16-byte row-contiguous writes (the warp's 16 rows × K are one contiguous run of ws_ds):
// 64 × 16-byte instead of 256 × 4-byte stores per warp and chunk at K = 128, a quarter of the
// L1 line requests.
// PHASED (session 14; STAGES = 1, !R2, !PUB: the piece chain's dsum1 at two blocks per SM): the one
// stage is refilled in two halves (dscan_issue_chunk's PART): half 1 (A, T, Kᴿ, dO) of the next
// chunk as soon as every warp is past this chunk's dUᵀ / dRᵀ products (their only readers; dO is
// in registers by then), half 2 (Q⁺, E) after the state update; a chunk waits for its half 1 at
// the top and for its half 2 before the update, so each half's copy overlaps the other half's
// math. The same operations in the same order: bitwise the two-stage loop.
// PUBW (session 18; R2 + PUB only, gdn_bwd_dscan_ov5 / dscanp_ov5): the units are published by a
// publisher warp (dscan_publisher, warp NW of NW + 1), this loop runs on the NW compute warps, whose
// thread 0 then never fences; the same barriers and mma sequence: bitwise the R2 loop's outputs.
// DR_IO (session 20 experiment; session 21: gdn_bwd_dscan_ov5dr / dscanp_ov5dr, the producers of
// the token stage's REV 13, tc13): dR stored in the io dtype ([token][value] over the fp32
// region), the same rounding as the A fragments the token stage packs from the fp32 tile, through
// the warp's dS' staging rows in 16-byte row pieces (dscan_store_dr_staged): only with R2's dS'
// staging (DS == 2). (Session 20's scalar 16-bit stores, which no entry reached once the staged
// store existed, are gone.)
template <typename T, int K, int V, int NW, int STAGES, int DS, bool STORE_DR, bool PUB = false, bool R2 = false,
          bool PHASED = false, bool PUBW = false, bool DR_IO = false>
__device__ __forceinline__ void dscan_mma_chunks(const BwdParams& bp, float (&x)[K / 8][4], int h, long long cs,
                                                 long long ce, int c_first, int c_begin, int c_end, int vb, int vr,
                                                 unsigned* pub_flags = nullptr) {
  static_assert(!DR_IO || (R2 && DS == 2), "DR_IO stores dR through R2's dS' staging rows");
  using S = DscanMmaSmem<K, NW, STAGES>;
  constexpr int KP = S::KP, CP = S::CP, DP = S::DP;
  const FwdParams& p = bp.f;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int HO = p.ho;
  const int cq = 2 * (lane & 3);
  const int nch = c_end - c_begin;

  static_assert(!PHASED || (STAGES == 1 && !R2 && !PUB), "PHASED: one stage, the plain loop");
  static_assert(!PUBW || (R2 && PUB), "PUBW: the publishing R2 loop");
  static_assert(STAGES >= 2 || PHASED, "one stage only phased");
  // Step s handles chunk c_end - 1 - s.
  auto issue = [&](int s, int st) {
    dscan_issue_chunk<T, K, V, S, NW * 32, R2>(bp, smem + st * S::stage, c_end - 1 - s, h, cs, ce, c_first, vb, tid);
  };
  // PHASED: the stage's two halves of step s.
  auto issue_h1 = [&](int s) {
    dscan_issue_chunk<T, K, V, S, NW * 32, false, 1>(bp, smem, c_end - 1 - s, h, cs, ce, c_first, vb, tid);
  };
  auto issue_h2 = [&](int s) {
    dscan_issue_chunk<T, K, V, S, NW * 32, false, 2>(bp, smem, c_end - 1 - s, h, cs, ce, c_first, vb, tid);
  };
  if constexpr (PHASED) {  // groups in flight at a chunk's top: its half 1, then its half 2
    if (nch > 0) issue_h1(0);
    cp_async_commit();
    if (nch > 0) issue_h2(0);
    cp_async_commit();
  } else {
#pragma unroll
    for (int sidx = 0; sidx < STAGES - 1; ++sidx) {
      if (sidx < nch) issue(sidx, sidx);
      cp_async_commit();
    }
  }
  const int lrow = (lane & 7) + 8 * ((lane >> 3) & 1);  // ldmatrix.trans rows of a B operand
  const int bcol = 8 * (lane >> 4);
  const int arow = (lane & 7) + 8 * (lane >> 4);       // ldmatrix.trans rows of an A operand
  const int acol = 16 * warp + 8 * ((lane >> 3) & 1);
  const int brow = (lane & 7) + 8 * (lane >> 4), bcol2 = 8 * ((lane >> 3) & 1);  // ldmatrix (no .trans) of B
  float gl_next = R2 && nch > 0 ? p.ws_gl[static_cast<size_t>(c_end - 1) * HO + h] : 0.f;
  static_assert(!R2 || STAGES >= 2, "R2 refills the stage read one chunk earlier");
  size_t prev_ch = 0;  // R2 + PUB: the unit of the previous chunk, published after the next barrier
  for (int s = 0; s < nch; ++s) {
    const int c = c_end - 1 - s;
    const int st = s % STAGES;
    if constexpr (R2) {
      // One barrier per chunk: this chunk's copies landed (RAW) and every warp is done with the
      // previous chunk (WAR on the stage refilled next; its dS' / dR stores precede the barrier,
      // so its unit is published here, off the stores' own path), then the next chunk's copies.
      cp_async_wait<STAGES - 2>();
      __syncthreads();
      if constexpr (PUB && !PUBW) {
        if (s > 0) dnnp_flag_publish_after_barrier(pub_flags + prev_ch, 1u);
      }
    }
    if constexpr (!PHASED) {
      if (s + STAGES - 1 < nch) issue(s + STAGES - 1, (s + STAGES - 1) % STAGES);
      cp_async_commit();
    }
    const size_t ch = static_cast<size_t>(c) * HO + h;
    const float decay = __expf(R2 ? gl_next : p.ws_gl[ch]);
    if constexpr (R2) {
      if (s + 1 < nch) gl_next = p.ws_gl[static_cast<size_t>(c - 1) * HO + h];
    } else if constexpr (PHASED) {
      cp_async_wait<1>();  // this chunk's half 1 (A, T, Kᴿ, dO); its half 2 may still be in flight
      __syncthreads();
    } else {
      cp_async_wait<STAGES - 1>();
      __syncthreads();
    }
    unsigned char* base = smem + st * S::stage;
    const T* As = reinterpret_cast<const T*>(base + S::a_off);
    const T* Ts = reinterpret_cast<const T*>(base + S::t_off);
    const T* KRs = reinterpret_cast<const T*>(base + S::kr_off);
    const T* Qs = reinterpret_cast<const T*>(base + S::q_off);
    const T* Es = reinterpret_cast<const T*>(base + S::e_off);
    const T* Ds = reinterpret_cast<const T*>(base + S::do_off);
    // dS' of this chunk (the gradient of the state leaving it), for the token stage.
    if constexpr (R2 && DS == 2) {
      dscan_store_ds_staged<T, K, V, S>(bp, smem, ch, x, vb + 16 * warp, warp, lane);
    } else if constexpr (DS != 0) {
      bwd_store_state_frags<T, K>(bp.ws_ds, ch * V * K, x, vr, cq, DS == 2);
    }
    // dOᵀ as A fragments (value rows × tokens), transposed out of the [token][value] tile.
    u32 doa[4][4];
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) ldsm_x4_t(doa[kk], &Ds[(16 * kk + arow) * DP + acol]);
    // dUᵀ = dX Kᴿᵀ + dOᵀ A   (16 value rows × 64 tokens).
    float du[8][4];
    zero_frags(du);
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) {
      u32 a[4];
      x_a_frag<T>(a, x, kk);
      if constexpr (R2) {
#pragma unroll
        for (int np = 0; np < 4; ++np) {  // tokens 16np ..: n-tiles 2np, 2np + 1
          u32 bk[4];
          ldsm_x4(bk, &KRs[(16 * np + brow) * KP + 16 * kk + bcol2]);
          Io<T>::mma(du[2 * np], a, bk);
          Io<T>::mma(du[2 * np + 1], a, bk + 2);
        }
      } else {
        const int col = 16 * kk + cq;
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) {
          const int n = 8 * nt + (lane >> 2);
          u32 bk[2] = {ld32(&KRs[n * KP + col]), ld32(&KRs[n * KP + col + 8])};
          Io<T>::mma(du[nt], a, bk);
        }
      }
    }
    // B[k = j][n = i] = A[j][i]: A is lower triangular, so token block kk ≥ column block np.
    mma_tril_b<T, CP>(du, doa, As, lrow, bcol);
    u32 dua[4][4];
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) x_a_frag<T>(dua[kk], du, kk);
    // dRᵀ = dUᵀ T: B[k = i][n = j] = T[i][j], lower triangular (i ≥ j).
    float dr[8][4];
    zero_frags(dr);
    mma_tril_b<T, CP>(dr, dua, Ts, lrow, bcol);
    // dR (fp32, [token][value]) for the token stage; −dRᵀ as A fragments.
    u32 dra[4][4];
    {
      float* drg = bp.ws_dr + ch * CHUNK * V;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        if constexpr (STORE_DR && !DR_IO) {  // DR_IO: dscan_store_dr_staged after the loop
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int j = 8 * nt + cq + e;
            drg[static_cast<size_t>(j) * V + vr] = dr[nt][e];
            drg[static_cast<size_t>(j) * V + vr + 8] = dr[nt][2 + e];
          }
        }
        dra[nt >> 1][(nt & 1) * 2 + 0] = Io<T>::pack(-dr[nt][0], -dr[nt][1]);
        dra[nt >> 1][(nt & 1) * 2 + 1] = Io<T>::pack(-dr[nt][2], -dr[nt][3]);
      }
      if constexpr (STORE_DR && DR_IO) {
        dscan_store_dr_staged<T, V, S>(bp, smem, ch, dr, vb + 16 * warp, warp, lane);
      }
    }
    if constexpr (PHASED) {
      cp_async_wait<0>();  // this chunk's half 2 (Q⁺, E)
      __syncthreads();     // ... everyone's; and every warp is past its reads of half 1
      if (s + 1 < nch) issue_h1(s + 1);
      cp_async_commit();
    }
    // dX ← e^{Γ_last} dX + dOᵀ Q⁺ − dRᵀ E (B = Q⁺, E [token][key] via ldmatrix.trans).
    dscan_state_update<T, KP>(x, decay, doa, dra, Qs, Es, 0, lrow, bcol);
    // This stage is refilled by the next iteration's issue; PUB: the same barrier publishes the unit.
    // (R2: the next iteration's barrier does both.)
    if constexpr (R2) prev_ch = ch;
    else if constexpr (PUB) dnnp_flag_publish_block(pub_flags + ch, 1u);
    else __syncthreads();
    if constexpr (PHASED) {  // every warp is past its reads of half 2
      if (s + 1 < nch) issue_h2(s + 1);
      cp_async_commit();
    }
  }
  cp_async_wait<0>();
  if constexpr (R2 && PUB && PUBW) {
    if (nch > 0) __syncthreads();  // dscan_publisher publishes the last chunk's unit after it
  } else if constexpr (R2 && PUB) {
    if (nch > 0) dnnp_flag_publish_block(pub_flags + prev_ch, 1u);  // the last chunk's unit
  }
  if constexpr (R2 && !PUB) __syncthreads();  // as the loop's closing barrier (the PUB publish has one)
}

// PUB: the overlapped backward's producer (gdn_bwd_overlap.cuh): lets the token stage launch,
// then publishes every (chunk, head) unit in pub_flags (the block must hold all V value rows).
// R2: dscan_mma_chunks' R2 loop (the publishing producer gdn_bwd_dscan_ov2; smem bytes_r2).
// PUBW: with its publisher warp (gdn_bwd_dscan_ov5: NW + 1 warps, warp NW runs dscan_publisher).
template <typename T, int K, int V, int NW, int STAGES, bool DS_IO = false, bool PUB = false, bool R2 = false,
          bool PUBW = false, bool DR_IO = false>
__device__ __forceinline__ void bwd_dscan_mma_body(const BwdParams& bp, unsigned* pub_flags = nullptr) {
  static_assert(!PUB || 16 * NW == V, "a publishing reverse scan holds all value rows of its unit");
  if constexpr (PUB) dnnp_launch_dependents();
  constexpr int VS = DscanMmaSmem<K, NW, STAGES>::VS;
  const FwdParams& p = bp.f;

  const int h = blockIdx.y, b = blockIdx.z;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int HO = p.ho;
  const int vb = blockIdx.x * VS;        // the block's first value row
  const int vr = vb + 16 * warp + (lane >> 2);  // this thread's rows: vr and vr + 8
  const int cq = 2 * (lane & 3);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  const int c_begin = p.chunk_offsets[b], c_end = p.chunk_offsets[b + 1];
  const size_t sbase = (static_cast<size_t>(b) * HO + h) * V * K;
  if constexpr (PUBW) {
    if (warp == NW) {  // the publisher warp: the loop's barriers and flags only
      dscan_publisher(pub_flags, h, HO, c_begin, c_end);
      return;
    }
  }

  // X = dSᵀ rows vr, vr+8, columns 8nt + cq + {0,1}: starts at d_final_state.
  float x[K / 8][4];
  load_d_final_state_frags<K>(bp, sbase, x, vr, cq, 0);

  dscan_mma_chunks<T, K, V, NW, STAGES, DS_IO ? 2 : 1, true, PUB, R2, false, PUBW, DR_IO>(bp, x, h, cs, ce, c_begin, c_begin,
                                                                                    c_end, vb, vr, pub_flags);

  if (bp.d_initial_state) store_d_initial_state<K>(bp, sbase, x, vr, cq);
}

// ---------------------------------------------------------------------------------------
// The 8-warp reverse scan (session 6, the default; DNNPLAN_GDN_BWD_DSCAN=v1 keeps the 4-warp
// dscan_mma_chunks): the same block slice (64 value rows of one (seq, head)), the same smem
// stages and bitwise the same outputs, with every chunk's work split over a warp pair per 16
// value rows, so that each SM sub-partition runs two warps and each warp's dependent chain per
// chunk is about half as long. Warp w: pair pr = w / 2 (value rows 16·pr of the slice), half
// hf = w % 2 (the two halves sit on different sub-partitions). Per chunk, warp hf
//  * keeps X's key columns [hf·K/2, hf·K/2 + K/2) in fp32 accumulators (x: K/16 n-tiles) and
//    stores those columns of dS';
//  * computes dUᵀ for tokens [32·hf, 32·hf + 32): the full key reduction (X's io-dtype A
//    fragments of both halves, exchanged through smem each chunk) then dOᵀ A, in the order of
//    dscan_mma_chunks (same mma sequence per accumulator: bitwise the same sums);
//  * computes dRᵀ for the same tokens (T is lower triangular: half 1 needs only its own dUᵀ,
//    half 0 also half 1's, handed over by bar.arrive / bar.sync) and stores its dR columns;
//  * updates its X columns with dOᵀ Q⁺ − dRᵀ E over all tokens (−dRᵀ's fragments of both
//    halves exchanged through smem; pair barrier).
// Kᴿ's B fragments come by ldmatrix.x4 (the same operand values as the 32-bit loads). Γ_last
// of the next chunk is loaded one chunk ahead. Barriers per chunk: the stage barrier pair of
// dscan_mma_chunks plus one bar.arrive/bar.sync and one pair bar.sync (named barriers 1..8).
// ---------------------------------------------------------------------------------------
constexpr int DSCAN_W8_WARPS = 8;

template <int K, int STAGES>
struct DscanW8Smem {
  using Base = DscanMmaSmem<K, 4, STAGES>;  // the same stage layout (64 value rows of dO)
  static constexpr size_t xf_bytes = (K / 16) * 32 * 16;  // X's A fragments per key block, per lane
  static constexpr size_t du_bytes = 2 * 32 * 16;         // half 1's dUᵀ A fragments (token blocks 2, 3)
  static constexpr size_t dr_bytes = 4 * 32 * 16;         // −dRᵀ A fragments of the 4 token blocks
  static constexpr size_t pair_bytes = xf_bytes + du_bytes + dr_bytes;
  static constexpr size_t x_off = Base::bytes;
  static constexpr size_t bytes = x_off + 4 * pair_bytes;
};

#ifdef GDN_HOST_EMU
void emu_bar_arrive(int id, int n);
void emu_bar_sync(int id, int n);
__device__ __forceinline__ void named_bar_sync(int id, int n) { emu_bar_sync(id, n); }
__device__ __forceinline__ void named_bar_arrive(int id, int n) { emu_bar_arrive(id, n); }
#else
__device__ __forceinline__ void named_bar_sync(int id, int n) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
__device__ __forceinline__ void named_bar_arrive(int id, int n) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
#endif

// Fragments x (rows vr, vr + 8; columns col0 + 8nt + cq + {0, 1}) to `dst` + elem ([V][K]) as fp32
// pairs or (io) T pairs: bwd_store_state_frags for a column range.
template <typename T, int K, int NX>
__device__ __forceinline__ void store_frag_cols(void* dst, size_t elem, const float (&x)[NX][4], int vr, int cq, int col0,
                                                bool io) {
#pragma unroll
  for (int nt = 0; nt < NX; ++nt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const size_t idx = elem + static_cast<size_t>(vr + 8 * hf) * K + col0 + 8 * nt + cq;
      if (io)
        *reinterpret_cast<u32*>(static_cast<T*>(dst) + idx) = Io<T>::pack(x[nt][2 * hf], x[nt][2 * hf + 1]);
      else
        *reinterpret_cast<float2*>(static_cast<float*>(dst) + idx) = make_float2(x[nt][2 * hf], x[nt][2 * hf + 1]);
    }
  }
}

// The chunk loop of the 8-warp reverse scan for half HF (see above); the arguments as
// dscan_mma_chunks' (vr: this thread's first value row; x: its K/2 columns of X).
template <typename T, int K, int V, int STAGES, int DS, bool STORE_DR, int HF>
__device__ __forceinline__ void dscan_w8_chunks(const BwdParams& bp, float (&x)[K / 16][4], int h, long long cs,
                                                long long ce, int c_first, int c_begin, int c_end, int vb, int vr) {
  using S = DscanW8Smem<K, STAGES>;
  using B = typename S::Base;
  constexpr int KP = B::KP, CP = B::CP, DP = B::DP;
  constexpr int NT = DSCAN_W8_WARPS * 32;
  constexpr int KH = K / 2, KB = K / 32;  // this half's key columns; its key blocks of 16
  const FwdParams& p = bp.f;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int pr = warp >> 1;
  const int HO = p.ho;
  const int cq = 2 * (lane & 3);
  const int nch = c_end - c_begin;
  unsigned char* pair = smem + S::x_off + pr * S::pair_bytes;
  uint4* xf = reinterpret_cast<uint4*>(pair);                              // [K/16][32]
  uint4* duf = reinterpret_cast<uint4*>(pair + S::xf_bytes);               // [2][32]
  uint4* drf = reinterpret_cast<uint4*>(pair + S::xf_bytes + S::du_bytes);  // [4][32]
  const int bar_du = 1 + pr, bar_dr = 5 + pr;

  // This half's X A fragments (key blocks KB·HF ..) to the pair's exchange slots.
  auto publish_x = [&] {
#pragma unroll
    for (int kb = 0; kb < KB; ++kb) {
      u32 a[4];
      x_a_frag<T>(a, x, kb);
      xf[(KB * HF + kb) * 32 + lane] = make_uint4(a[0], a[1], a[2], a[3]);
    }
  };

  auto issue = [&](int s, int st) {
    dscan_issue_chunk<T, K, V, B, NT>(bp, smem + st * B::stage, c_end - 1 - s, h, cs, ce, c_first, vb, tid);
  };
  publish_x();  // read after the first stage barrier
#pragma unroll
  for (int sidx = 0; sidx < STAGES - 1; ++sidx) {
    if (sidx < nch) issue(sidx, sidx);
    cp_async_commit();
  }
  const int lrow = (lane & 7) + 8 * ((lane >> 3) & 1);  // ldmatrix.trans rows of a B operand
  const int bcol = 8 * (lane >> 4);
  const int arow = (lane & 7) + 8 * (lane >> 4);  // ldmatrix.trans rows of an A operand
  const int acol = 16 * pr + 8 * ((lane >> 3) & 1);
  const int brow = (lane & 7) + 8 * (lane >> 4), bcol2 = 8 * ((lane >> 3) & 1);  // ldmatrix (no .trans) of B
  float gl_next = nch > 0 ? p.ws_gl[static_cast<size_t>(c_end - 1) * HO + h] : 0.f;
  for (int s = 0; s < nch; ++s) {
    const int c = c_end - 1 - s;
    const int st = s % STAGES;
    if (s + STAGES - 1 < nch) issue(s + STAGES - 1, (s + STAGES - 1) % STAGES);
    cp_async_commit();
    const size_t ch = static_cast<size_t>(c) * HO + h;
    const float decay = __expf(gl_next);
    if (s + 1 < nch) gl_next = p.ws_gl[static_cast<size_t>(c - 1) * HO + h];
    cp_async_wait<STAGES - 1>();
    __syncthreads();
    unsigned char* base = smem + st * B::stage;
    const T* As = reinterpret_cast<const T*>(base + B::a_off);
    const T* Ts = reinterpret_cast<const T*>(base + B::t_off);
    const T* KRs = reinterpret_cast<const T*>(base + B::kr_off);
    const T* Qs = reinterpret_cast<const T*>(base + B::q_off);
    const T* Es = reinterpret_cast<const T*>(base + B::e_off);
    const T* Ds = reinterpret_cast<const T*>(base + B::do_off);
    // dS' of this chunk, this half's key columns.
    if constexpr (DS != 0) store_frag_cols<T, K>(bp.ws_ds, ch * V * K, x, vr, cq, KH * HF, DS == 2);
    u32 doa[4][4];
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) ldsm_x4_t(doa[kk], &Ds[(16 * kk + arow) * DP + acol]);
    // dUᵀ for tokens 32·HF .. + 32 (n-tiles 4·HF + i): key blocks in order, then dOᵀ A.
    float du[4][4];
    zero_frags(du);
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) {
      const uint4 av = xf[kk * 32 + lane];
      const u32 a[4] = {av.x, av.y, av.z, av.w};
#pragma unroll
      for (int np = 0; np < 2; ++np) {
        u32 bk[4];
        ldsm_x4(bk, &KRs[(32 * HF + 16 * np + brow) * KP + 16 * kk + bcol2]);
        Io<T>::mma(du[2 * np], a, bk);
        Io<T>::mma(du[2 * np + 1], a, bk + 2);
      }
    }
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
      for (int np = 0; np < 2; ++np) {
        if (2 * HF + np > kk) continue;
        u32 r[4];
        ldsm_x4_t(r, &As[(16 * kk + lrow) * CP + 16 * (2 * HF + np) + bcol]);
        Io<T>::mma(du[2 * np], doa[kk], r);
        Io<T>::mma(du[2 * np + 1], doa[kk], r + 2);
      }
    }
    // dUᵀ as A fragments by token block (blocks 2·HF, 2·HF + 1 here; half 0 also takes 2, 3).
    u32 dua[4][4];
#pragma unroll
    for (int nt = 0; nt < 4; ++nt) {
      dua[2 * HF + (nt >> 1)][(nt & 1) * 2 + 0] = Io<T>::pack(du[nt][0], du[nt][1]);
      dua[2 * HF + (nt >> 1)][(nt & 1) * 2 + 1] = Io<T>::pack(du[nt][2], du[nt][3]);
    }
    if constexpr (HF == 1) {
#pragma unroll
      for (int i = 0; i < 2; ++i) duf[i * 32 + lane] = make_uint4(dua[2 + i][0], dua[2 + i][1], dua[2 + i][2], dua[2 + i][3]);
      named_bar_arrive(bar_du, 64);
    } else {
      named_bar_sync(bar_du, 64);
#pragma unroll
      for (int i = 0; i < 2; ++i) {
        const uint4 v = duf[i * 32 + lane];
        dua[2 + i][0] = v.x;
        dua[2 + i][1] = v.y;
        dua[2 + i][2] = v.z;
        dua[2 + i][3] = v.w;
      }
    }
    // dRᵀ for tokens 32·HF .. + 32: B[k = i][n = j] = T[i][j], i ≥ j.
    float dr[4][4];
    zero_frags(dr);
#pragma unroll
    for (int kk = 2 * HF; kk < 4; ++kk) {
#pragma unroll
      for (int np = 0; np < 2; ++np) {
        if (2 * HF + np > kk) continue;
        u32 r[4];
        ldsm_x4_t(r, &Ts[(16 * kk + lrow) * CP + 16 * (2 * HF + np) + bcol]);
        Io<T>::mma(dr[2 * np], dua[kk], r);
        Io<T>::mma(dr[2 * np + 1], dua[kk], r + 2);
      }
    }
    // dR (fp32, [token][value]) for the token stage; −dRᵀ's A fragments to the pair's slots.
    {
      float* drg = bp.ws_dr + ch * CHUNK * V;
#pragma unroll
      for (int nt = 0; nt < 4; ++nt) {
        if constexpr (STORE_DR) {
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int j = 8 * (4 * HF + nt) + cq + e;
            drg[static_cast<size_t>(j) * V + vr] = dr[nt][e];
            drg[static_cast<size_t>(j) * V + vr + 8] = dr[nt][2 + e];
          }
        }
      }
#pragma unroll
      for (int i = 0; i < 2; ++i)
        drf[(2 * HF + i) * 32 + lane] =
            make_uint4(Io<T>::pack(-dr[2 * i][0], -dr[2 * i][1]), Io<T>::pack(-dr[2 * i][2], -dr[2 * i][3]),
                       Io<T>::pack(-dr[2 * i + 1][0], -dr[2 * i + 1][1]), Io<T>::pack(-dr[2 * i + 1][2], -dr[2 * i + 1][3]));
    }
    named_bar_sync(bar_dr, 64);
    u32 dra[4][4];
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      const uint4 v = drf[kk * 32 + lane];
      dra[kk][0] = v.x;
      dra[kk][1] = v.y;
      dra[kk][2] = v.z;
      dra[kk][3] = v.w;
    }
    // X ← e^{Γ_last} X + dOᵀ Q⁺ − dRᵀ E on this half's key columns.
    dscan_state_update<T, KP>(x, decay, doa, dra, Qs, Es, KH * HF, lrow, bcol);
    publish_x();  // read after the next chunk's stage barrier (the partner's reads of this chunk's
                  // fragments precede its arrival at bar_dr above)
    __syncthreads();  // this stage is refilled by the next iteration's issue
  }
  cp_async_wait<0>();
}

// The 8-warp reverse scan's per-thread view of its block: pair rows and key-column half.
struct DscanW8Thread {
  int hf, vr, cq, col0;
};
template <int K>
__device__ __forceinline__ DscanW8Thread dscan_w8_thread(int vb) {
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  const int hf = warp & 1;
  return DscanW8Thread{hf, vb + 16 * (warp >> 1) + (lane >> 2), 2 * (lane & 3), (K / 2) * hf};
}

// dscan_w8_chunks for this warp's half (a warp-uniform choice).
template <typename T, int K, int V, int STAGES, int DS, bool STORE_DR>
__device__ __forceinline__ void dscan_w8_run(const BwdParams& bp, float (&x)[K / 16][4], int hf, int h, long long cs,
                                             long long ce, int c_first, int c_begin, int c_end, int vb, int vr) {
  if (hf)
    dscan_w8_chunks<T, K, V, STAGES, DS, STORE_DR, 1>(bp, x, h, cs, ce, c_first, c_begin, c_end, vb, vr);
  else
    dscan_w8_chunks<T, K, V, STAGES, DS, STORE_DR, 0>(bp, x, h, cs, ce, c_first, c_begin, c_end, vb, vr);
}

// d_initial_state (state dtype: fp32, or bf16 pairs) from this thread's half of X.
template <int K>
__device__ __forceinline__ void store_d_initial_state_cols(const BwdParams& bp, size_t sbase, const float (&x)[K / 16][4],
                                                           const DscanW8Thread& t) {
  if (bp.f.state_dtype == DT_F32)
    store_frag_cols<gdn_bf16, K>(bp.d_initial_state, sbase, x, t.vr, t.cq, t.col0, false);
  else
    store_frag_cols<gdn_bf16, K>(bp.d_initial_state, sbase, x, t.vr, t.cq, t.col0, true);
}

// gdn_bwd_dscan_w8: bwd_dscan_mma_body<…, DS_IO = true> on 8 warps (same grid: V/64 × HO × N).
template <typename T, int K, int V, int STAGES>
__device__ __forceinline__ void bwd_dscan_w8_body(const BwdParams& bp) {
  const FwdParams& p = bp.f;
  const int h = blockIdx.y, b = blockIdx.z;
  const int HO = p.ho;
  const int vb = blockIdx.x * 64;
  const DscanW8Thread t = dscan_w8_thread<K>(vb);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  const int c_begin = p.chunk_offsets[b], c_end = p.chunk_offsets[b + 1];
  const size_t sbase = (static_cast<size_t>(b) * HO + h) * V * K;

  float x[K / 16][4];
  load_d_final_state_frags<K>(bp, sbase, x, t.vr, t.cq, t.col0);

  dscan_w8_run<T, K, V, STAGES, 2, true>(bp, x, t.hf, h, cs, ce, c_begin, c_begin, c_end, vb, t.vr);

  if (bp.d_initial_state) store_d_initial_state_cols<K>(bp, sbase, x, t);
}

// ---------------------------------------------------------------------------------------
// Stage 5: per-chunk token gradients. Block: one (chunk, head), all V.
// ---------------------------------------------------------------------------------------
constexpr int TOK_THREADS = 512;
constexpr int TOK_VT = 16;  // value rows per slice of the V loop

// ldsm_x4 (ldmatrix.x4 without .trans) is in gdn_fwd.cuh with the other shared primitives.

// The m16n8k16 A fragment of rows [m16, m16 + 16) and columns [k16, k16 + 16) of a 16-bit
// shared tile with rows of `stride` elements (16-byte aligned rows): one ldmatrix.x4 (LDSM) or
// four 32-bit loads.
template <bool LDSM, typename T>
__device__ __forceinline__ void a_frag(u32 (&a)[4], const T* s, int stride, int m16, int k16, int lane) {
  if constexpr (LDSM) {
    ldsm_x4(a, &s[(m16 + (lane & 7) + 8 * ((lane >> 3) & 1)) * stride + k16 + 8 * (lane >> 4)]);
  } else {
    ld_a_frag(a, s, stride, m16 + (lane >> 2), k16 + 2 * (lane & 3));
  }
}

// tile_async for a ROWS × ROWLEN tile and TOK_THREADS threads, unrolled with compile-time indices.
template <typename T, int ROWLEN, int ROWS>
__device__ __forceinline__ void tile_async_unrolled(T* dst, const T* src, int tid) {
  constexpr int VEC = ROWLEN / 8;
  static_assert(TOK_THREADS % VEC == 0 && ROWS * VEC % TOK_THREADS == 0, "tile split");
  constexpr int RS = TOK_THREADS / VEC, NU = ROWS * VEC / TOK_THREADS;
  const int r = tid / VEC, c8 = tid % VEC;
#pragma unroll
  for (int u = 0; u < NU; ++u) cp_async16(&dst[(r + RS * u) * (ROWLEN + 8) + 8 * c8], &src[(r + RS * u) * ROWLEN + 8 * c8]);
}

// A thread's KM key columns of one 16-bit shared row, widened and scaled, (x · s1) · s2 (0 when
// !live): columns tk + 8 m, or (PAIRS) 2 tk + 16 mp + {0, 1} for m = 2 mp + {0, 1}, by 32-bit loads.
template <bool PAIRS, typename T, int KM>
__device__ __forceinline__ void row_pairs(float (&x)[KM], const T* row, int tk, bool live, float s1, float s2) {
  if constexpr (PAIRS) {
#pragma unroll
    for (int mp = 0; mp < KM / 2; ++mp) {
      const u32 w = live ? ld32(&row[2 * tk + 16 * mp]) : 0u;
      x[2 * mp] = Io<T>::bits_to_f(static_cast<unsigned short>(w & 0xffffu)) * s1 * s2;
      x[2 * mp + 1] = Io<T>::bits_to_f(static_cast<unsigned short>(w >> 16)) * s1 * s2;
    }
  } else {
#pragma unroll
    for (int m = 0; m < KM; ++m) x[m] = live ? Io<T>::to_f(row[tk + 8 * m]) * s1 * s2 : 0.f;
  }
}

// The B fragments of the n tiles [n16, n16 + 8) (b[0], b[1]) and [n16 + 8, n16 + 16) (b[2], b[3])
// over k columns [k16, k16 + 16) of a tile stored [n][k]: one ldmatrix.x4 (LDSM) or 32-bit loads.
template <bool LDSM, typename T>
__device__ __forceinline__ void b_frag2(u32 (&b)[4], const T* s, int stride, int n16, int k16, int lane) {
  if constexpr (LDSM) {
    ldsm_x4(b, &s[(n16 + (lane & 7) + 8 * (lane >> 4)) * stride + k16 + 8 * ((lane >> 3) & 1)]);
  } else {
    const int g = lane >> 2, cq = 2 * (lane & 3);
    b[0] = ld32(&s[(n16 + g) * stride + k16 + cq]);
    b[1] = ld32(&s[(n16 + g) * stride + k16 + cq + 8]);
    b[2] = ld32(&s[(n16 + 8 + g) * stride + k16 + cq]);
    b[3] = ld32(&s[(n16 + 8 + g) * stride + k16 + cq + 8]);
  }
}

// The inverse L2 norms rk, rq (1 without FLAG_L2NORM) of one k row and one q row from this lane's
// partial sums of squares ks, qs over the row's 8 consecutive lanes (the token kernels' rows).
__device__ __forceinline__ void tok_inv_norms(const FwdParams& p, float ks, float qs, float& rk, float& rq) {
#pragma unroll
  for (int o = 4; o > 0; o >>= 1) {
    ks += __shfl_xor_sync(0xffffffffu, ks, o);
    qs += __shfl_xor_sync(0xffffffffu, qs, o);
  }
  if (p.flags & FLAG_L2NORM) {
    rk = rsqrt_ftz(ks + 1e-6f);
    rq = rsqrt_ftz(qs + 1e-6f);
  } else {
    rk = 1.f;
    rq = 1.f;
  }
}

// Two A fragments times the B operands of token tiles 2gq, 2gq + 1 (k-block kk) of an io tile
// stored [token][k] with rows of `stride`: c0[n] += a0 · B_n, c1[n] += a1 · B_n in the order
// c0[0], c1[0], c0[1], c1[1]. LDSM: B by one ldmatrix.x4 (b_frag2), else two 32-bit loads per tile.
template <bool LDSM, typename T>
__device__ __forceinline__ void mma2_tok_pair(float (&c0)[2][4], float (&c1)[2][4], const u32 (&a0)[4],
                                              const u32 (&a1)[4], const T* s, int stride, int gq, int kk, int lane) {
  if constexpr (LDSM) {
    u32 b[4];
    b_frag2<true>(b, s, stride, 16 * gq, 16 * kk, lane);
    Io<T>::mma(c0[0], a0, b);
    Io<T>::mma(c1[0], a1, b);
    Io<T>::mma(c0[1], a0, b + 2);
    Io<T>::mma(c1[1], a1, b + 2);
  } else {
    const int g = lane >> 2, col = 16 * kk + 2 * (lane & 3);
#pragma unroll
    for (int n = 0; n < 2; ++n) {
      const int nn = 8 * (2 * gq + n) + g;
      u32 b[2] = {ld32(&s[nn * stride + col]), ld32(&s[nn * stride + col + 8])};
      Io<T>::mma(c0[n], a0, b);
      Io<T>::mma(c1[n], a1, b);
    }
  }
}

template <int K>
struct TokSmem {
  static constexpr int KF = K + 1;
  static constexpr int CF = CHUNK + 1;
  static constexpr int VF = TOK_VT + 1;
  // Region R0 (C×K fp32): W during the V loop, then normalised k.
  static constexpr size_t r0_off = 0;
  static constexpr size_t qn_off = r0_off + CHUNK * KF * 4;        // scaled q̂ [64][KF]
  static constexpr size_t x_off = qn_off + CHUNK * KF * 4;         // S_c slice [VT][KF]
  static constexpr size_t dx_off = x_off + TOK_VT * KF * 4;        // dS' slice [VT][KF]
  static constexpr size_t do_off = dx_off + TOK_VT * KF * 4;       // dO slice [64][VF]
  static constexpr size_t dr_off = do_off + CHUNK * VF * 4;        // dR slice [64][VF]
  static constexpr size_t u_off = dr_off + CHUNK * VF * 4;         // U slice  [64][VF]
  static constexpr size_t da_off = u_off + CHUNK * VF * 4;         // dA → dA' [64][CF]
  static constexpr size_t dl_off = da_off + CHUNK * CF * 4;        // dL → dL' [64][CF]
  static constexpr size_t g_off = dl_off + CHUNK * CF * 4;         // G        [64][CF]
  static constexpr size_t vec_off = g_off + CHUNK * CF * 4;        // per-token vectors
  // vectors: gam, bet, qr, kr, dgam, dbeta_v, dbeta_l, red (TOK_THREADS)
  static constexpr size_t bytes = vec_off + (7 * CHUNK + TOK_THREADS) * 4;
};

// The token stage's value-dimension products on the tensor cores (the default; the CUDA-core
// loop in bwd_tokens_body is the DNNPLAN_GDN_BWD_TOKENS=fp32 variant). Per (chunk, head), with
// S = S_c [V][K], dS' [V][K], dO and dR [64][V] (dO zero past len) rounded to the io dtype as
// operands and fp32 accumulation:
//   U = Ũ − W Sᵀ (64 × V, kept in the io dtype), dQ⁺ = dO S, dE = −dR S, dKᴿ = U dS' (64 × K),
//   dA = dO Uᵀ, dL = −dR Uᵀ (64 × 64),
// handed back in the CUDA-core layout of bwd_tokens_body (row ti, columns tk + 8m) through
// shared memory. Also dD = Σ S ⊙ dS' (this thread's part), dβ's value part Σ_v dR v and dv = β dR.
// Uses shared memory [0, TokSmem::vec_off) only; the caller's gam / bet must be loaded (and a
// barrier passed) before the call.
template <int K, int V>
struct TokMmaSmem {
  static constexpr int KP = K + 8, VP = V + 8;
  static constexpr size_t w_off = 0;                          // W   [64][KP]
  static constexpr size_t s_off = w_off + CHUNK * KP * 2;     // S   [V][KP]
  static constexpr size_t ds_off = s_off + V * KP * 2;        // dS' [V][KP]
  static constexpr size_t do_off = ds_off + V * KP * 2;       // dO  [64][VP]
  static constexpr size_t dr_off = do_off + CHUNK * VP * 2;   // dR  [64][VP]
  static constexpr size_t u_off = dr_off + CHUNK * VP * 2;    // U   [64][VP]
  static constexpr size_t bytes = u_off + CHUNK * VP * 2;
  // Results (fp32) over the same region afterwards.
  static constexpr int KF = K + 1, CF = CHUNK + 1;
  static constexpr size_t rq_off = 0, re_off = CHUNK * KF * 4, rk_off = 2 * CHUNK * KF * 4;
  static constexpr size_t ra_off = 3 * CHUNK * KF * 4, rl_off = ra_off + CHUNK * CF * 4;
  static constexpr size_t out_bytes = rl_off + CHUNK * CF * 4;
};

// TC (gdn_bwd_tokens_tc): dS' arrives in the io dtype (DS_IO reverse scan), dv goes straight to
// the dV port when HV = HO (FLAG_BWD_DIRECT), and dA, dL stay in the mma fragment layout (faa,
// fal: token tile warp & 3, token tiles 2 (warp >> 2) + {0, 1}) instead of the da / dl rows.
//
// V2 (gdn_bwd_tokens_tc2, with TC): no barrier is needed before the call (β comes from the
// workspace directly); dv = β dR and dβ's value part come from the coalesced fp32 dR pass (all of
// a thread's dR, v and β loads issued before any use): per row, the warp sums (butterflies) of
// Σ_v dR v land in dbvp[half · CHUNK + row] (half = the row's V/64 warp segments), which the
// caller reads after the products' barriers.
// REV 6 (persistent; not bundled: no faster than REV 5 on the H200, the CPU emulation's set tc6
// still checks it): the value products' operands placed so that the next
// tile's W, S, Ũᵀ and dO can land during this tile's phases A / B and row work: dS', dR, U low
// (they are written at the tile's start), S and W above the chunk-local phases' tiles
// (TokTcSmem::a_bytes) and results, Ũᵀ and the raw q / k where REV 5 has them, dO past the raw
// q / k (TOK6_BYTES in all).
template <int K, int V>
struct TokMmaSmem6 {
  static constexpr int KP = K + 8, VP = V + 8, CP = CHUNK + 8;
  static constexpr size_t ds_off = 0;                          // dS' [V][KP]
  static constexpr size_t dr_off = ds_off + V * KP * 2;        // dR  [64][VP]
  static constexpr size_t u_off = dr_off + CHUNK * VP * 2;     // U   [64][VP]
  static constexpr size_t low_end = u_off + CHUNK * VP * 2;
  // Past the phase-A tiles (k̂, q̂ [64][KP], dA', dA'ᵀ, dL' + dL'ᵀ [64][CP], G fp32 [64][65]) and
  // the phase-B results (2 × [64][K + 8] fp32).
  static constexpr size_t a_end = 2 * CHUNK * KP * 2 + 3 * CHUNK * CP * 2 + CHUNK * (CHUNK + 1) * 4;
  static constexpr size_t b_end = 2 * CHUNK * (K + 8) * 4;
  static constexpr size_t mx = low_end > a_end ? (low_end > b_end ? low_end : b_end) : (a_end > b_end ? a_end : b_end);
  static constexpr size_t s_off = (mx + 127) / 128 * 128;      // S [V][KP]
  static constexpr size_t w_off = s_off + V * KP * 2;          // W [64][KP]
  static constexpr size_t w_end = w_off + CHUNK * KP * 2;
  static constexpr size_t ut_off = TokSmem<K>::bytes;          // Ũᵀ [V][CHUNK + 8] (as REV 5)
  static constexpr size_t do_off = ut_off + V * CP * 2 + 2 * CHUNK * KP * 2;  // dO [64][VP]
  static constexpr size_t bytes = do_off + CHUNK * VP * 2;
  static_assert(w_end <= TokSmem<K>::vec_off, "tc6: S / W overlap the per-token vectors");
  static_assert(3 * CHUNK * (K + 8) * 4 <= TokSmem<K>::vec_off, "tc6: product results overflow");
};

// REV 9 (a template level of tc11, not bundled): the fp32 dR tile comes by cp.async with dO (copy group G1) into its
// own slot and is consumed after U: pass 1 packs its A fragments straight from the fp32 rows
// (the same io-dtype rounding as REV 5's packed dR tile, so the same operands), and the dv = β dR /
// dβ value pass reads it from shared memory after pass 1, while dS' lands. No io dR tile: U takes
// REV 5's dR slot, the fp32 dR [64][V + 8] REV 5's U slot and past it; the per-token vectors, Ũᵀ
// and the raw q / k move up behind it (TokSmem9::bytes in all).
template <int K, int V>
struct TokSmem9 {
  using M = TokMmaSmem<K, V>;
  static constexpr int RP = V + 8;                             // fp32 dR row stride (floats)
  static constexpr size_t u_off = M::dr_off;                   // U io [64][V + 8]
  static constexpr size_t dr_off = M::u_off;                   // dR fp32 [64][RP]
  static constexpr size_t dr_end = dr_off + CHUNK * RP * 4;
  // The chunk-local phases' tiles (TokTcSmem::a_bytes) and the fp32 product / phase-B results
  // stay below vec_off.
  static constexpr size_t a_bytes = 2 * CHUNK * (K + 8) * 2 + 3 * CHUNK * (CHUNK + 8) * 2 + CHUNK * (CHUNK + 8) * 4;  // REV 11's G
  static constexpr size_t r_bytes = 3 * CHUNK * (K + 16) * 4;  // REV 10's rows (REV 9: K + 8)
  static constexpr size_t m1 = dr_end > a_bytes ? dr_end : a_bytes;
  static constexpr size_t vec_off = ((m1 > r_bytes ? m1 : r_bytes) + 15) / 16 * 16;
  static constexpr size_t ut_off = vec_off + (7 * CHUNK + TOK_THREADS) * 4;  // Ũᵀ [V][CHUNK + 8]
  static constexpr size_t qraw_off = ut_off + V * (CHUNK + 8) * 2;           // raw q, k [64][K + 8]
  static constexpr size_t bytes = qraw_off + 2 * CHUNK * (K + 8) * 2;
  static_assert(ut_off % 16 == 0 && qraw_off % 16 == 0, "tc9 layout alignment");
};

// Where the per-token vectors, Ũᵀ and the raw q / k tiles sit for revision REV.
template <int K, int V, int REV>
struct TokVecLayout {
  static constexpr size_t vec_off = TokSmem<K>::vec_off;
  static constexpr size_t ut_off = TokSmem<K>::bytes;
  static constexpr size_t qraw_off = TokSmem<K>::bytes + V * (CHUNK + 8) * 2;
};
template <int K, int V>
struct TokVecLayout<K, V, 9> {
  static constexpr size_t vec_off = TokSmem9<K, V>::vec_off;
  static constexpr size_t ut_off = TokSmem9<K, V>::ut_off;
  static constexpr size_t qraw_off = TokSmem9<K, V>::qraw_off;
};
template <int K, int V>
struct TokVecLayout<K, V, 10> : TokVecLayout<K, V, 9> {};
template <int K, int V>
struct TokVecLayout<K, V, 11> : TokVecLayout<K, V, 9> {};
template <int K, int V>
struct TokVecLayout<K, V, 12> : TokVecLayout<K, V, 9> {};
template <int K, int V>
struct TokVecLayout<K, V, 13> : TokVecLayout<K, V, 9> {};
template <int K, int V>
struct TokVecLayout<K, V, 16> : TokVecLayout<K, V, 9> {};

// REV 30 (session 30, helper m1t30: td29's M1, `tw1`, gdn_bwd_tokens_tw1_*): tc16's tile with its
// value products replaced by tw1_products (gdn_bwd_tw.cuh): a ring of the tile's V / 32 value
// quarters at offset 0 (1 KB-aligned swizzled tiles, TwSmem's quarter layout), filled by warpgroup
// 0 with cp.async signalling mbarriers, and the five products on wgmma with register accumulators;
// the fp32 hand-off tiles (dQ⁺, dE, dKᴿ rows of K + 16 as tc16's, then dA and P_L [64][72]) over
// the ring once it is consumed; tc16's chunk-local phases after it over the same region. Then the
// vectors, the raw q / k tiles (rows of K + 16, as REV 12) and the ring's 2 · V / 32 mbarriers.
template <int K, int V>
struct Tw1Smem {
  static constexpr int NQ = V / 32;                                         // quarters per tile
  static constexpr size_t quarter = 2 * 32 * K * 2 + 3 * CHUNK * 32 * 2;    // S, dS', U, dO, dR
  static constexpr size_t ring = NQ * quarter;
  static constexpr size_t r_bytes = 3 * CHUNK * (K + 16) * 4;               // dQ⁺, dE, dKᴿ (fp32)
  static constexpr size_t ra_off = r_bytes, rl_off = ra_off + CHUNK * (CHUNK + 8) * 4;  // dA, P_L
  static constexpr size_t r_end = rl_off + CHUNK * (CHUNK + 8) * 4;
  static constexpr size_t m0 = ring > r_end ? ring : r_end;
  static constexpr size_t m1 = m0 > TokSmem9<K, V>::a_bytes ? m0 : TokSmem9<K, V>::a_bytes;
  static constexpr size_t vec_off = (m1 + 15) / 16 * 16;
  static constexpr size_t ut_off = vec_off + (7 * CHUNK + TOK_THREADS) * 4;  // (no Ũᵀ tile: qraw)
  static constexpr size_t qraw_off = ut_off;
  static constexpr size_t bar_off = qraw_off + 2 * CHUNK * (K + 16) * 2;    // full_a[NQ], full_b[NQ]
  static constexpr size_t bytes = bar_off + 2 * NQ * 8;
  static_assert(quarter % 1024 == 0 && bar_off % 8 == 0, "tw1 layout alignment");
};
static_assert(Tw1Smem<128, 128>::bytes == 188224, "tw1 bytes at K = V = 128 (params.rs::tokens_tw1_tile_smem_bytes)");
template <int K, int V>
struct TokVecLayout<K, V, 30> {
  static constexpr size_t vec_off = Tw1Smem<K, V>::vec_off;
  static constexpr size_t ut_off = Tw1Smem<K, V>::ut_off;
  static constexpr size_t qraw_off = Tw1Smem<K, V>::qraw_off;
};
// REV 32 (session 32, helper tp32: `tw3`, gdn_bwd_tokens_tw3_*): REV 30 with the unit's flag
// waited before the tile's first barrier and the dS' / dR copies issued with each quarter's S, U,
// dO (tw1_products' EARLY); the same layout (Tw1Smem) and arithmetic.
template <int K, int V>
struct TokVecLayout<K, V, 32> : TokVecLayout<K, V, 30> {};
// REV 34 (session 39: `tw7`, gdn_bwd_tokens_tw7_*): REV 32 with the ring's S, dS', U, dR by tensor
// maps (tw1_products' TMA); the same layout (Tw1Smem) and arithmetic.
template <int K, int V>
struct TokVecLayout<K, V, 34> : TokVecLayout<K, V, 30> {};

// The U tiles of the storing replay (session 27, tu27: gdn_bwd_fscan_gx{,4}u, STORE_U in
// gdn_bwd_fscan_gx.cuh) for the token stage REV 16: [slot c·HO + h][64 tokens][V] in the io dtype.
// The host places them (BwdParams::ws_u): in the second half of the ws_dr region (BwdWorkspaceLayout
// keeps its fp32 size, [slots][64][V] floats; the io dR tiles of the tc13 / tc16 pair take its
// first half; slots = max_chunks · HO), or, session 38, in the chunk_factors a U-saving forward
// filled (no replay then).
template <typename T, int V>
__device__ __forceinline__ T* bwd_u_tiles(const BwdParams& bp) {
  return static_cast<T*>(bp.ws_u);
}
// REV 12: TokSmem9 with the raw q / k tiles in rows of K + 16 (the same offsets, 2 KB more).
template <int K, int V>
struct TokSmem12 {
  static constexpr size_t bytes = TokSmem9<K, V>::qraw_off + 2 * CHUNK * (K + 16) * 2;
};

// REV 10 (a template level of tc11, not bundled): REV 9 with the fp32 result tiles (dQ⁺, dE, dKᴿ after the value
// products, phase B's after it) in rows of K + 16 floats and the columns of rows with bit 1 set
// XOR 8: the fragment-layout float2 stores (rows g = 0..3 of a half-warp) and the row-layout
// float2 loads (rows ti, ti + 1 of a half-warp, 16 columns each) both hit 32 distinct banks
// (REV 5's rows of K + 8 read back with 2-way conflicts). The same values: bitwise tc9.
template <bool SWZ>
__device__ __forceinline__ int tok_swz(int r) {
  return SWZ ? (r & 2) << 2 : 0;
}

// REV 12 (tc12, session 10): the row phase without shared-memory bank conflicts. The raw q / k
// tiles (cp.async rows, read only by the row phase) in rows of K + 16 elements instead of K + 8:
// a warp's 32-bit row reads (rows 4w .. 4w + 3, column pairs 2 tk + 16 mp) hit 32 distinct banks
// at a row stride of ≡ 8 words mod 32 (K + 8: ≡ 4, 2-way), and the cp.async 16-byte writes stay
// conflict-free (8 lanes = 128 contiguous bytes of one row); TokSmem12 places the 2 KB more.
// Phase A's fp32 G tile (rows of CHUNK + 8 floats) keeps its rows with the columns of rows with
// bit 2 set XOR 4 (tok_gswz) and is stored as float2 pairs: the stores and both row-phase reads
// (G_ij, G_ji) are conflict-free (REV 11: 2-way stores and G_ji reads). Tried and dropped: the
// q̂ / k̂ operand tiles in XOR-permuted unpadded rows (their row-layout stores are still 2-way):
// bitwise, but the per-kk ldmatrix addresses of phases A / B cost registers (8-16 bytes of spills
// at 128 registers, K = 128). The same values everywhere: bitwise REV 11.
__device__ __forceinline__ int tok_gswz(int r) { return ((r >> 2) & 1) << 2; }

// The m16n8k16 A fragment of rows [m16, m16 + 16) and columns [k16, k16 + 16) of an fp32 shared
// tile (rows of `stride` floats), rounded to T as packed pairs: the registers ldmatrix.x4 returns
// from the same tile stored in T (a[0] rows g, a[1] rows g + 8, a[2] / a[3] columns + 8).
template <typename T>
__device__ __forceinline__ void a_frag_f32(u32 (&a)[4], const float* s, int stride, int m16, int k16, int lane) {
  const int g = lane >> 2, cq = 2 * (lane & 3);
  const float* r0 = s + (m16 + g) * stride + k16 + cq;
  const float* r1 = r0 + 8 * stride;
  const float2 x0 = *reinterpret_cast<const float2*>(r0);
  const float2 x1 = *reinterpret_cast<const float2*>(r1);
  const float2 x2 = *reinterpret_cast<const float2*>(r0 + 8);
  const float2 x3 = *reinterpret_cast<const float2*>(r1 + 8);
  a[0] = Io<T>::pack(x0.x, x0.y);
  a[1] = Io<T>::pack(x1.x, x1.y);
  a[2] = Io<T>::pack(x2.x, x2.y);
  a[3] = Io<T>::pack(x3.x, x3.y);
}

// The token stage's dO rows [0, len) of head h (of HO) by cp.async into `dOb` ([64][V + 8]), zero
// rows past len (compile-time-unrolled copies); the caller commits.
template <typename T, int V>
__device__ __forceinline__ void tokens_issue_do(T* dOb, const T* dog, long long t0, int len, int h, int HO, int tid) {
  constexpr int VEC = V / 8, VP = V + 8;
  static_assert(TOK_THREADS % VEC == 0 && CHUNK * VEC % TOK_THREADS == 0, "dO copy split");
  constexpr int RS = TOK_THREADS / VEC, NU = CHUNK * VEC / TOK_THREADS;
  const int rq0 = tid / VEC, c8 = tid % VEC;
  const T* src = dog + (static_cast<size_t>(t0 + rq0) * HO + h) * V + 8 * c8;
#pragma unroll
  for (int u = 0; u < NU; ++u) {
    const int r = rq0 + RS * u;
    if (r < len) cp_async16(&dOb[r * VP + 8 * c8], src + static_cast<size_t>(RS) * u * HO * V);
    else *reinterpret_cast<uint4*>(&dOb[r * VP + 8 * c8]) = make_uint4(0u, 0u, 0u, 0u);
  }
}

// The token stage's dR pass, row layout: thread tid owns rows rb + u · RSTEP (u < RN) and value
// columns c2, c2 + 1 of the chunk's CHUNK × V dR tile (tc2..tc5 read the tile from ws_dr, tc11
// from its fp32 copy in shared memory), and the same places of v ([T, HV, V]) and of dv.
template <int V>
struct TokDrRows {
  static_assert(CHUNK * V / 2 % TOK_THREADS == 0 && V % 64 == 0, "dR tile split");
  static constexpr int RN = CHUNK * V / 2 / TOK_THREADS, RSTEP = 2 * TOK_THREADS / V;
  int rb, c2;
  size_t vrow0, vstep;  // this thread's first v element and the step between its rows
  __device__ __forceinline__ TokDrRows(int tid, long long t0, int hv, int vh)
      : rb(tid / (V / 2)),
        c2(2 * (tid % (V / 2))),
        vrow0((static_cast<size_t>(t0 + tid / (V / 2)) * hv + vh) * V + 2 * (tid % (V / 2))),
        vstep(static_cast<size_t>(RSTEP) * hv * V) {}
};

// The dR pass's per-row work: dv = β dR for this thread's rows (into the dV port when the port
// has HO heads and FLAG_BWD_DIRECT is set, else into head h's fp32 ws_dv partial), and each row's
// Σ_v dR v partial into xs (summed over the warp by the caller). Rows past len store nothing.
template <typename T, int V, int RN = TokDrRows<V>::RN>
__device__ __forceinline__ void tokens_dr_rows(const BwdParams& bp, const TokDrRows<V>& d, long long t0, int len,
                                               int h, const float2 (&rv)[RN], const u32 (&vv)[RN],
                                               const float (&bb)[RN], float (&xs)[RN]) {
  using IO = Io<T>;
  constexpr int RSTEP = TokDrRows<V>::RSTEP;
  const FwdParams& p = bp.f;
  const int HO = p.ho;
  const bool direct = (p.flags & FLAG_BWD_DIRECT) && p.hv == HO;
  T* dvd = static_cast<T*>(bp.dv) + d.vrow0;  // direct: the dV port has HV = HO heads
  float* dvo = bp.ws_dv + (static_cast<size_t>(t0 + d.rb) * HO + h) * V + d.c2;
  const size_t ostep = static_cast<size_t>(RSTEP) * HO * V;
#pragma unroll
  for (int u = 0; u < RN; ++u) {
    const int r = d.rb + u * RSTEP;
    xs[u] = rv[u].x * IO::bits_to_f(static_cast<unsigned short>(vv[u] & 0xffffu)) +
            rv[u].y * IO::bits_to_f(static_cast<unsigned short>(vv[u] >> 16));
    if (r < len) {
      const float d0 = bb[u] * rv[u].x, d1 = bb[u] * rv[u].y;
      if (direct) {
        *reinterpret_cast<u32*>(dvd + u * d.vstep) = Io<T>::pack(d0, d1);
      } else {
        *reinterpret_cast<float2*>(dvo + u * ostep) = make_float2(d0, d1);
      }
    }
  }
}

// The token stage's dβ value part: the RN row partials xs of this thread's column pair (rows
// u · RSTEP, u < RN, from the row base `row`) summed over the warp by a reduce-scatter (fixed
// pattern, log2(RN) halving steps, then butterflies over the remaining lane bits: 9 shuffles
// instead of 40 at RN = 8); the lane that ends with a row's sum stores it to row[u · RSTEP].
template <int RN, int RSTEP>
__device__ __forceinline__ void tokens_dbeta_reduce_scatter(float (&xs)[RN], int lane, float* row) {
  static_assert(RN == 4 || RN == 8, "dβ reduce-scatter");
  constexpr int L = RN == 8 ? 3 : 2;
#pragma unroll
  for (int lvl = 0; lvl < L; ++lvl) {
    const int o = 16 >> lvl, half = (RN >> lvl) / 2;
    const bool up = lane & o;
#pragma unroll
    for (int i = 0; i < half; ++i) {
      const float send = up ? xs[i] : xs[i + half];
      const float keep = up ? xs[i + half] : xs[i];
      xs[i] = keep + __shfl_xor_sync(0xffffffffu, send, o);
    }
  }
#pragma unroll
  for (int o = 16 >> L; o > 0; o >>= 1) xs[0] += __shfl_xor_sync(0xffffffffu, xs[0], o);
  if ((lane & ((16 >> (L - 1)) - 1)) == 0) {
    int u = 0;
#pragma unroll
    for (int lvl = 0; lvl < L; ++lvl) u += ((lane >> (4 - lvl)) & 1) * ((RN >> lvl) / 2);
    row[u * RSTEP] = xs[0];
  }
}

// REV 6: the copies of one tile's first group (W, Ũᵀ, S, dO rows [0, len) with zero rows past
// len) into the TokMmaSmem6 layout; the caller commits.
template <typename T, int K, int V>
__device__ __forceinline__ void tokens_issue_g0(const BwdParams& bp, size_t ch, long long t0, int len, int h, int tid) {
  using M6 = TokMmaSmem6<K, V>;
  const FwdParams& p = bp.f;
  extern __shared__ __align__(16) unsigned char smem[];
  T* Wb = reinterpret_cast<T*>(smem + M6::w_off);
  T* Sb = reinterpret_cast<T*>(smem + M6::s_off);
  T* Utb = reinterpret_cast<T*>(smem + M6::ut_off);
  T* dOb = reinterpret_cast<T*>(smem + M6::do_off);
  tile_async_unrolled<T, K, CHUNK>(Wb, static_cast<const T*>(p.ws_w) + ch * CHUNK * K, tid);
  tile_async_unrolled<T, CHUNK, V>(Utb, static_cast<const T*>(p.ws_ut) + ch * V * CHUNK, tid);
  tile_async_unrolled<T, K, V>(Sb, reinterpret_cast<const T*>(bp.ws_s) + ch * V * K, tid);
  tokens_issue_do<T, V>(dOb, static_cast<const T*>(bp.d_o), t0, len, h, p.ho, tid);
}

// The no-op default of tokens_products_mma's issue_qk (REV < 5 issue the q / k copies themselves)
// and of its pre_wait / bwd_tokens_tc_tile's flag_wait (the sequential token stage).
struct TokNoIssue {
  __device__ __forceinline__ void operator()() const {}
};
// Whether a hook is given (anything but TokNoIssue).
template <typename F>
struct TokIsHook {
  static constexpr bool value = true;
};
template <>
struct TokIsHook<TokNoIssue> {
  static constexpr bool value = false;
};

// pre_wait (REV 5 and up without 6; session 22, tstart22): the overlapped consumer's hook, given
// only there (PRE). The copies that do not depend on the reverse scan (W, Ũᵀ, S: prep / replay
// outputs; dO, q, k: the caller's) are issued first, then pre_wait (the caller's scalar loads and
// the unit's flag wait), then dR and dS' (the reverse scan's); five copy groups instead of four.
// The value products' fp32 hand-off read back in tc16's V3 row layout (tc16's products and tw1's,
// session 30): row ti, key column pairs 2 tk + 16 mp + {0, 1} for mp < MP, swizzled by
// tok_swz<SWZ>(ti); element m = 2 mp + e of dqp / de / dkr.
template <int MP, bool SWZ, int KF>
__device__ __forceinline__ void handoff_rows_v3(const float* Rq, const float* Re, const float* Rk, int ti, int tk,
                                                float* dqp, float* de, float* dkr) {
  // The swizzle flips column bit 3, which 16 mp leaves alone (2 tk < 16): one row base, then
  // constant offsets (session 41; the same elements as (2 tk + 16 mp) ^ tok_swz(ti)).
  const int c0 = ti * KF + ((2 * tk) ^ tok_swz<SWZ>(ti));
#pragma unroll
  for (int mp = 0; mp < MP; ++mp) {
    const int c = c0 + 16 * mp;
    const float2 xq = *reinterpret_cast<const float2*>(&Rq[c]);
    const float2 xe = *reinterpret_cast<const float2*>(&Re[c]);
    const float2 xk = *reinterpret_cast<const float2*>(&Rk[c]);
    dqp[2 * mp] = xq.x;
    dqp[2 * mp + 1] = xq.y;
    de[2 * mp] = xe.x;
    de[2 * mp + 1] = xe.y;
    dkr[2 * mp] = xk.x;
    dkr[2 * mp + 1] = xk.y;
  }
}

template <typename T, int K, int V, bool TC = false, int REV = 0, typename IssueQK = TokNoIssue,
          typename PreWait = TokNoIssue>
__device__ __forceinline__ void tokens_products_mma(const BwdParams& bp, size_t ch, long long t0, int len, int h, int vh,
                                                    const float* bet, float* dqp, float* de, float* dkr, float* da,
                                                    float* dl, float& dd, float& dbv_acc, float (&faa)[2][4],
                                                    float (&fal)[2][4], float* dbvp = nullptr,
                                                    const IssueQK& issue_qk = IssueQK(), bool g0_ready = false,
                                                    const PreWait& pre_wait = PreWait()) {
  using M = TokMmaSmem<K, V>;
  using M6 = TokMmaSmem6<K, V>;
  using IO = Io<T>;
  constexpr bool V2 = REV >= 2, V3 = REV >= 3, V4 = REV >= 4, V5 = REV >= 5, V6 = REV == 6, V9 = REV >= 9;
  constexpr bool SWZ = REV >= 10;  // fp32 result rows of K + 16, columns swizzled (tok_swz)
  constexpr bool DRIO = REV >= 13;  // REV 13 (session 20 experiment): dR arrives in the io dtype
  // REV 16 (session 27, tu27): U arrives from the storing replay (bwd_u_tiles) with S in G0, instead
  // of W, Ũᵀ and the U product (the same io values: bitwise REV 13).
  constexpr bool ULD = REV == 16;
  constexpr bool PRE = TokIsHook<PreWait>::value;
  static_assert(!PRE || (V5 && !V6), "pre_wait: the four-group copy order (REV 5, 7 and up)");
  static_assert(!ULD || (V5 && !V6 && DRIO), "REV 16: REV 13's copy order");
  static_assert(M::bytes <= TokSmem<K>::vec_off && M::out_bytes <= TokSmem<K>::vec_off, "token products overflow");
  constexpr int KP = M::KP, VP = M::VP, CF = M::CF;
  // V3: the fp32 results in rows of K + 8 (pairs stored as float2; row reads conflict-free).
  constexpr int KF = V3 ? (SWZ ? K + 16 : K + 8) : M::KF;
  static_assert(!V3 || 3 * CHUNK * (K + 8) * 4 <= TokSmem<K>::vec_off, "token products overflow");
  constexpr int KM = K / 8;
  const FwdParams& p = bp.f;
  extern __shared__ __align__(16) unsigned char smem[];
  T* Wb = reinterpret_cast<T*>(smem + (V6 ? M6::w_off : M::w_off));
  T* Sb = reinterpret_cast<T*>(smem + (V6 ? M6::s_off : M::s_off));
  T* dSb = reinterpret_cast<T*>(smem + (V6 ? M6::ds_off : M::ds_off));
  T* dOb = reinterpret_cast<T*>(smem + (V6 ? M6::do_off : M::do_off));
  T* dRb = reinterpret_cast<T*>(smem + (V6 ? M6::dr_off : M::dr_off));
  T* Ub = reinterpret_cast<T*>(smem + (V6 ? M6::u_off : V9 ? TokSmem9<K, V>::u_off : M::u_off));
  float* dR32 = reinterpret_cast<float*>(smem + TokSmem9<K, V>::dr_off);  // V9: fp32 dR [64][V + 8]
  T* dRio = reinterpret_cast<T*>(smem + TokSmem9<K, V>::dr_off);         // DRIO: io dR [64][V + 8]
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int ti = tid >> 3, tk = tid & 7;
  const int HO = p.ho;

  // Loads: W by cp.async; S, dS' (fp32 → io, dD on the way), dR (fp32 → io), dO (zero past len).
  // TC: Ũᵀ and dS' (io) by cp.async too, S (fp32) into registers before the waits.
  T* Utb = reinterpret_cast<T*>(smem + TokVecLayout<K, V, REV>::ut_off);  // TC: Ũᵀ [V][CHUNK + 8]
  const T* dog = static_cast<const T*>(bp.d_o);
  // dO rows [0, len) by cp.async, zero rows past len (V3 layout: compile-time-unrolled copies).
  static_assert(VP == V + 8, "dO rows as tokens_issue_do lays them out");
  auto issue_do = [&] { tokens_issue_do<T, V>(dOb, dog, t0, len, h, HO, tid); };
  if constexpr (V6) {
    // V6: G0 = W, Ũᵀ, S, dO (prefetched during the previous tile when g0_ready), then dS', then the
    // caller's q, k; the products wait for each in turn.
    if (!g0_ready) {
      tokens_issue_g0<T, K, V>(bp, ch, t0, len, h, tid);
      cp_async_commit();
    }
    tile_async_unrolled<T, K, V>(dSb, reinterpret_cast<const T*>(bp.ws_ds) + ch * V * K, tid);
    cp_async_commit();
    issue_qk();
    cp_async_commit();
  } else if constexpr (V5) {
    // V5: four copy groups in the order of use, every copy issued before the dR pass (whose global
    // loads stall this thread): G0 = W, Ũᵀ, S (for U), G1 = dO (dQ⁺, dE, dA, dL), G2 = dS' (dKᴿ,
    // dD), G3 = the caller's q, k rows (the row phases). The products wait for each in turn.
    if constexpr (ULD) {
      // REV 16: G0 = U (the replay's tile, rows of V + 8 as the products read Ub), S.
      tile_async_unrolled<T, V, CHUNK>(Ub, bwd_u_tiles<T, V>(bp) + ch * CHUNK * V, tid);
    } else {
      tile_async_unrolled<T, K, CHUNK>(Wb, static_cast<const T*>(p.ws_w) + ch * CHUNK * K, tid);
      tile_async_unrolled<T, CHUNK, V>(Utb, static_cast<const T*>(p.ws_ut) + ch * V * CHUNK, tid);
    }
    tile_async_unrolled<T, K, V>(Sb, reinterpret_cast<const T*>(bp.ws_s) + ch * V * K, tid);
    cp_async_commit();
    issue_do();
    if constexpr (PRE) {
      // PRE: G1 = dO, G1q = q, k (issued before the flag wait), G1r = dR, G2 = dS' after it.
      cp_async_commit();
      issue_qk();
      cp_async_commit();
      pre_wait();
    }
    if constexpr (DRIO) {
      // DRIO: G1 = dO and the io dR tile (all 64 rows), rows of V + 8 elements.
      tile_async_unrolled<T, V, CHUNK>(dRio, reinterpret_cast<const T*>(bp.ws_dr) + ch * CHUNK * V, tid);
    } else if constexpr (V9) {
      // V9: G1 = dO and the fp32 dR tile (all 64 rows, as REV 5 reads them), rows of V + 8 floats.
      constexpr int C4 = V / 4, NU = CHUNK * C4 / TOK_THREADS;
      static_assert(CHUNK * C4 % TOK_THREADS == 0 && TOK_THREADS % C4 == 0, "dR copy split");
      const float* drg = bp.ws_dr + ch * CHUNK * V;
      const int r = tid / C4, c4 = tid % C4;
#pragma unroll
      for (int u = 0; u < NU; ++u) {
        const int rr = r + u * (TOK_THREADS / C4);
        cp_async16(&dR32[rr * TokSmem9<K, V>::RP + 4 * c4], &drg[rr * V + 4 * c4]);
      }
    }
    cp_async_commit();
    tile_async_unrolled<T, K, V>(dSb, reinterpret_cast<const T*>(bp.ws_ds) + ch * V * K, tid);
    cp_async_commit();
    if constexpr (!PRE) {
      issue_qk();
      cp_async_commit();
    }
  } else if constexpr (V3) {
    tile_async_unrolled<T, K, CHUNK>(Wb, static_cast<const T*>(p.ws_w) + ch * CHUNK * K, tid);
    tile_async_unrolled<T, CHUNK, V>(Utb, static_cast<const T*>(p.ws_ut) + ch * V * CHUNK, tid);
  } else {
    tile_async<T, K>(Wb, static_cast<const T*>(p.ws_w) + ch * CHUNK * K, CHUNK, K, tid, TOK_THREADS);
    if constexpr (TC) tile_async<T, CHUNK>(Utb, static_cast<const T*>(p.ws_ut) + ch * V * CHUNK, V, CHUNK, tid, TOK_THREADS);
  }
  if constexpr (!V5) cp_async_commit();
  // V4: S_c arrives in the io dtype (FLAG_BWD_S_IO replay) and goes to shared memory by cp.async.
  constexpr int SN = TC && !V4 ? V * K / 2 / TOK_THREADS : 1;
  float2 sreg[SN];
  if constexpr (TC && !V5) {
    if constexpr (V3) tile_async_unrolled<T, K, V>(dSb, reinterpret_cast<const T*>(bp.ws_ds) + ch * V * K, tid);
    else tile_async<T, K>(dSb, reinterpret_cast<const T*>(bp.ws_ds) + ch * V * K, V, K, tid, TOK_THREADS);
    if constexpr (V4) {
      tile_async_unrolled<T, K, V>(Sb, reinterpret_cast<const T*>(bp.ws_s) + ch * V * K, tid);
    } else {
      const float2* xg = reinterpret_cast<const float2*>(bp.ws_s + ch * V * K);
#pragma unroll
      for (int u = 0; u < SN; ++u) sreg[u] = xg[tid + u * TOK_THREADS];
    }
  }
  if constexpr (!TC) {
    const float2* xg = reinterpret_cast<const float2*>(bp.ws_s + ch * V * K);
    const float2* dxg = reinterpret_cast<const float2*>(bp.ws_ds + ch * V * K);
    for (int i = tid; i < V * K / 2; i += TOK_THREADS) {
      const int r = i / (K / 2), c2 = 2 * (i % (K / 2));
      const float2 xv = xg[i], dv2 = dxg[i];
      dd += xv.x * dv2.x + xv.y * dv2.y;
      *reinterpret_cast<u32*>(&Sb[r * KP + c2]) = Io<T>::pack(xv.x, xv.y);
      *reinterpret_cast<u32*>(&dSb[r * KP + c2]) = Io<T>::pack(dv2.x, dv2.y);
    }
  }
  // V9: the same pass over the fp32 dR tile in shared memory, after pass 1 (dr_pass9 below); only
  // the v loads are issued here (β from the caller's bet, the same values as ws_bet).
  using DR = TokDrRows<V>;
  const DR drr(tid, t0, p.hv, vh);
  u32 vv9[V9 ? DR::RN : 1];
  if constexpr (V9) {
    const T* vg = static_cast<const T*>(p.v) + drr.vrow0;
#pragma unroll
    for (int u = 0; u < DR::RN; ++u) vv9[u] = drr.rb + u * DR::RSTEP < len ? ld32(vg + u * drr.vstep) : 0u;
  }
  auto dr_pass9 = [&] {
    if constexpr (V9) {
      float2 rv[DR::RN];
      float bb[DR::RN], xs[DR::RN];
#pragma unroll
      for (int u = 0; u < DR::RN; ++u) {
        const int r = drr.rb + u * DR::RSTEP;
        if constexpr (DRIO) {
          const u32 w = ld32(&dRio[r * VP + drr.c2]);
          rv[u] = make_float2(IO::bits_to_f(static_cast<unsigned short>(w & 0xffffu)),
                              IO::bits_to_f(static_cast<unsigned short>(w >> 16)));
        } else {
          rv[u] = *reinterpret_cast<const float2*>(&dR32[r * TokSmem9<K, V>::RP + drr.c2]);
        }
        bb[u] = bet[r];
      }
      tokens_dr_rows<T, V>(bp, drr, t0, len, h, rv, vv9, bb, xs);
      tokens_dbeta_reduce_scatter<DR::RN, DR::RSTEP>(xs, lane, dbvp + (drr.c2 / 64) * CHUNK + drr.rb);
    }
  };
  if constexpr (V2 && !V9) {
    // dR (fp32), v and β of this thread's rows (TokDrRows): every load first, then dR to the io
    // dtype, dv = β dR (coalesced pairs) and the warp's part of Σ_v dR v.
    constexpr int RN = DR::RN, RSTEP = DR::RSTEP;
    const float2* drg = reinterpret_cast<const float2*>(bp.ws_dr + ch * CHUNK * V);
    const T* vg = static_cast<const T*>(p.v) + drr.vrow0;
    float2 rv[RN];
    u32 vv[RN];
    float bb[RN];
#pragma unroll
    for (int u = 0; u < RN; ++u) {
      const int r = drr.rb + u * RSTEP;
      rv[u] = drg[tid + u * TOK_THREADS];
      vv[u] = r < len ? ld32(vg + u * drr.vstep) : 0u;
      bb[u] = bp.ws_bet[ch * CHUNK + r];
    }
#pragma unroll
    for (int u = 0; u < RN; ++u)
      *reinterpret_cast<u32*>(&dRb[(drr.rb + u * RSTEP) * VP + drr.c2]) = Io<T>::pack(rv[u].x, rv[u].y);
    float xs[RN];  // V3: the row partials, summed over the warp by a reduce-scatter below
    tokens_dr_rows<T, V>(bp, drr, t0, len, h, rv, vv, bb, xs);
    if constexpr (V3) {
      tokens_dbeta_reduce_scatter<RN, RSTEP>(xs, lane, dbvp + (drr.c2 / 64) * CHUNK + drr.rb);
    } else {
#pragma unroll
      for (int u = 0; u < RN; ++u) {
        float x = xs[u];
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
        if (lane == 0) dbvp[(drr.c2 / 64) * CHUNK + drr.rb + u * RSTEP] = x;
      }
    }
  }
  {
    const float2* drg = reinterpret_cast<const float2*>(bp.ws_dr + ch * CHUNK * V);
    for (int i = tid; i < CHUNK * V / 2 && !V2; i += TOK_THREADS) {
      const int r = i / (V / 2), c2 = 2 * (i % (V / 2));
      const float2 rv = drg[i];
      *reinterpret_cast<u32*>(&dRb[r * VP + c2]) = Io<T>::pack(rv.x, rv.y);
    }
    constexpr int VEC = V / 8;
    if constexpr (V3 && !V5) issue_do();
    for (int i = tid; i < CHUNK * VEC && !V3; i += TOK_THREADS) {
      const int r = i / VEC, c8 = i % VEC;
      if (r < len)
        cp_async16(&dOb[r * VP + 8 * c8], &dog[(static_cast<size_t>(t0 + r) * HO + h) * V + 8 * c8]);
      else
        *reinterpret_cast<uint4*>(&dOb[r * VP + 8 * c8]) = make_uint4(0u, 0u, 0u, 0u);
    }
    if constexpr (!V5) cp_async_commit();
  }
  // dβ's value part and dv = β dR (fp32 dR, per row ti; threads of a row split the values).
  if (!V2 && ti < len) {
    const float* drr = bp.ws_dr + ch * CHUNK * V + static_cast<size_t>(ti) * V;
    const T* vg = static_cast<const T*>(p.v) + (static_cast<size_t>(t0 + ti) * p.hv + vh) * V;
    float* dvo = bp.ws_dv + (static_cast<size_t>(t0 + ti) * HO + h) * V;
    T* dvd = static_cast<T*>(bp.dv) + (static_cast<size_t>(t0 + ti) * p.hv + vh) * V;
    const bool direct = TC && (p.flags & FLAG_BWD_DIRECT) && p.hv == HO;
    for (int e = 0; e < V / 8; ++e) {
      const int v = tk + 8 * e;
      const float r = drr[v];
      dbv_acc += r * IO::to_f(vg[v]);
      if (direct) dvd[v] = IO::from_f(bet[ti] * r);
      else dvo[v] = bet[ti] * r;
    }
  }
  // dD = Σ S ⊙ dS', both as stored (io dtype), the same element order as below (V4, V5).
  auto dd_io = [&] {
    constexpr int SN4 = V * K / 2 / TOK_THREADS;
#pragma unroll
    for (int u = 0; u < SN4; ++u) {
      const int r = tid / (K / 2) + u * (2 * TOK_THREADS / K);
      const int c2 = 2 * (tid % (K / 2));
      const u32 sv = ld32(&Sb[r * KP + c2]), dsv = ld32(&dSb[r * KP + c2]);
      dd += IO::bits_to_f(static_cast<unsigned short>(sv & 0xffffu)) * IO::bits_to_f(static_cast<unsigned short>(dsv & 0xffffu)) +
            IO::bits_to_f(static_cast<unsigned short>(sv >> 16)) * IO::bits_to_f(static_cast<unsigned short>(dsv >> 16));
    }
  };
  if constexpr (V6) {
    cp_async_wait<2>();  // G0: W, Ũᵀ, S, dO
  } else if constexpr (V5) {
    cp_async_wait<PRE ? 4 : 3>();  // G0: W, Ũᵀ, S
  } else {
    cp_async_wait<0>();
  }
  __syncthreads();
  if constexpr (V5) {
    // dD after dS' lands (below).
  } else if constexpr (V4) {
    dd_io();
  } else if constexpr (TC) {
    // S (fp32) to the io dtype; dD = Σ S ⊙ dS' with dS' as stored (io dtype).
    static_assert(V * K / 2 % TOK_THREADS == 0, "S tile split");
#pragma unroll
    for (int u = 0; u < SN; ++u) {
      const int i = tid + u * TOK_THREADS;
      // (V3: the same indices with the division by K / 2 split off the loop.)
      const int r = V3 ? tid / (K / 2) + u * (2 * TOK_THREADS / K) : i / (K / 2);
      const int c2 = V3 ? 2 * (tid % (K / 2)) : 2 * (i % (K / 2));
      const float2 xv = sreg[u];
      const u32 dsv = ld32(&dSb[r * KP + c2]);
      dd += xv.x * IO::bits_to_f(static_cast<unsigned short>(dsv & 0xffffu)) +
            xv.y * IO::bits_to_f(static_cast<unsigned short>(dsv >> 16));
      *reinterpret_cast<u32*>(&Sb[r * KP + c2]) = Io<T>::pack(xv.x, xv.y);
    }
    __syncthreads();
  }

  const int g = lane >> 2, cq = 2 * (lane & 3);
  const int mt = warp & 3, gq = warp >> 2;  // token tile, column group
  const int r0 = 16 * mt + g;
  const int lrow = (lane & 7) + 8 * ((lane >> 3) & 1);
  const int bcol = 8 * (lane >> 4);
  // U = Ũ − W Sᵀ: this warp's token tile × value tiles [gq·V/32, (gq+1)·V/32) (REV 16: loaded).
  if constexpr (!ULD) {
    constexpr int VQ = V / 32;
    float acc[VQ][4];
    zero_frags(acc);
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) {
      const int col = 16 * kk + cq;
      u32 a[4];
      a_frag<V3>(a, Wb, KP, 16 * mt, 16 * kk, lane);
      if constexpr (V3) {
        static_assert(VQ % 2 == 0, "U tiles in pairs");
#pragma unroll
        for (int n = 0; n < VQ; n += 2) {
          u32 b[4];
          b_frag2<true>(b, Sb, KP, 8 * (gq * VQ + n), 16 * kk, lane);
          Io<T>::mma(acc[n], a, b);
          Io<T>::mma(acc[n + 1], a, b + 2);
        }
      } else {
#pragma unroll
        for (int n = 0; n < VQ; ++n) {
          const int nn = 8 * (gq * VQ + n) + g;
          u32 b[2] = {ld32(&Sb[nn * KP + col]), ld32(&Sb[nn * KP + col + 8])};
          Io<T>::mma(acc[n], a, b);
        }
      }
    }
    const T* utg = static_cast<const T*>(p.ws_ut) + ch * V * CHUNK;
#pragma unroll
    for (int n = 0; n < VQ; ++n) {
      const int v = 8 * (gq * VQ + n) + cq;
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const int r = r0 + 8 * hf;
        const float ut0 = TC ? IO::to_f(Utb[v * (CHUNK + 8) + r]) : IO::to_f(utg[static_cast<size_t>(v) * CHUNK + r]);
        const float ut1 =
            TC ? IO::to_f(Utb[(v + 1) * (CHUNK + 8) + r]) : IO::to_f(utg[static_cast<size_t>(v + 1) * CHUNK + r]);
        const float u0 = ut0 - acc[n][2 * hf];
        const float u1 = ut1 - acc[n][2 * hf + 1];
        *reinterpret_cast<u32*>(&Ub[r * VP + v]) = Io<T>::pack(u0, u1);
      }
    }
  }
  if constexpr (V5 && !V6) cp_async_wait<PRE ? 1 : 2>();  // G1: dO (with U and dR: after the barrier; PRE: and q, k)
  __syncthreads();
  // Products over the value dimension.
  constexpr int NQ = K / 32;  // key tiles per column group
  float aq[NQ][4], ae[NQ][4], ak[NQ][4], aa[2][4], al[2][4];
  zero_frags(aq);
  zero_frags(ae);
  zero_frags(ak);
  zero_frags(aa);
  zero_frags(al);
  if constexpr (V5) {
    // The same products in two passes (each accumulator still sums the value tiles kk in order,
    // so the results are bitwise REV 4's): dO S, dR S, dO Uᵀ, dR Uᵀ while dS' lands, then U dS'.
#pragma unroll
    for (int kk = 0; kk < V / 16; ++kk) {
      u32 ao[4], ar[4];
      a_frag<true>(ao, dOb, VP, 16 * mt, 16 * kk, lane);
      if constexpr (DRIO) a_frag<true>(ar, dRio, VP, 16 * mt, 16 * kk, lane);
      else if constexpr (V9) a_frag_f32<T>(ar, dR32, TokSmem9<K, V>::RP, 16 * mt, 16 * kk, lane);
      else a_frag<true>(ar, dRb, VP, 16 * mt, 16 * kk, lane);
#pragma unroll
      for (int np = 0; np < NQ / 2; ++np) {
        const int kc = 16 * (gq * (NQ / 2) + np) + bcol;
        u32 rs[4];
        ldsm_x4_t(rs, &Sb[(16 * kk + lrow) * KP + kc]);
        Io<T>::mma(aq[2 * np], ao, rs);
        Io<T>::mma(aq[2 * np + 1], ao, rs + 2);
        Io<T>::mma(ae[2 * np], ar, rs);
        Io<T>::mma(ae[2 * np + 1], ar, rs + 2);
      }
      mma2_tok_pair<true>(aa, al, ao, ar, Ub, VP, gq, kk, lane);
    }
    if constexpr (V9) dr_pass9();  // dv, dβ's value part (fp32 dR from shared memory) while dS' lands
    cp_async_wait<PRE ? 0 : 1>();  // G2: dS' (PRE: the last group)
    __syncthreads();
    dd_io();
#pragma unroll
    for (int kk = 0; kk < V / 16; ++kk) {
      u32 au[4];
      a_frag<true>(au, Ub, VP, 16 * mt, 16 * kk, lane);
#pragma unroll
      for (int np = 0; np < NQ / 2; ++np) {
        const int kc = 16 * (gq * (NQ / 2) + np) + bcol;
        u32 rd[4];
        ldsm_x4_t(rd, &dSb[(16 * kk + lrow) * KP + kc]);
        Io<T>::mma(ak[2 * np], au, rd);
        Io<T>::mma(ak[2 * np + 1], au, rd + 2);
      }
    }
    cp_async_wait<0>();  // G3: the caller's q, k (visible after the barrier below)
  }
#pragma unroll
  for (int kk = 0; kk < V / 16 && !V5; ++kk) {
    u32 ao[4];
    a_frag<V3>(ao, dOb, VP, 16 * mt, 16 * kk, lane);
    u32 ar[4];
    a_frag<V3>(ar, dRb, VP, 16 * mt, 16 * kk, lane);
    u32 au[4];
    a_frag<V3>(au, Ub, VP, 16 * mt, 16 * kk, lane);
    // B[k = v][n = key] = S[v][key], dS'[v][key] ([k][n]: ldmatrix.trans, two key tiles each).
#pragma unroll
    for (int np = 0; np < NQ / 2; ++np) {
      const int kc = 16 * (gq * (NQ / 2) + np) + bcol;
      u32 rs[4], rd[4];
      ldsm_x4_t(rs, &Sb[(16 * kk + lrow) * KP + kc]);
      ldsm_x4_t(rd, &dSb[(16 * kk + lrow) * KP + kc]);
      Io<T>::mma(aq[2 * np], ao, rs);
      Io<T>::mma(aq[2 * np + 1], ao, rs + 2);
      Io<T>::mma(ae[2 * np], ar, rs);
      Io<T>::mma(ae[2 * np + 1], ar, rs + 2);
      Io<T>::mma(ak[2 * np], au, rd);
      Io<T>::mma(ak[2 * np + 1], au, rd + 2);
    }
    // B[k = v][n = j] = U[j][v] ([n][k]); token tiles 2gq, 2gq + 1.
    mma2_tok_pair<V3>(aa, al, ao, ar, Ub, VP, gq, kk, lane);
  }
  __syncthreads();  // every operand read: the region takes the fp32 results
  float* Rq = reinterpret_cast<float*>(smem + M::rq_off);
  float* Re = reinterpret_cast<float*>(smem + (V3 ? CHUNK * KF * 4 : M::re_off));
  float* Rk = reinterpret_cast<float*>(smem + (V3 ? 2 * CHUNK * KF * 4 : M::rk_off));
  float* Ra = reinterpret_cast<float*>(smem + M::ra_off);
  float* Rl = reinterpret_cast<float*>(smem + M::rl_off);
  if constexpr (TC) {
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        faa[n][e] = aa[n][e];
        fal[n][e] = al[n][e];
      }
  }
#pragma unroll
  for (int hf = 0; hf < 2 && V3; ++hf) {
    const int r = r0 + 8 * hf;
#pragma unroll
    for (int n = 0; n < NQ; ++n) {
      const int c = 8 * (gq * NQ + n) + cq;
      const int rc = r * KF + (c ^ tok_swz<SWZ>(r));
      *reinterpret_cast<float2*>(&Rq[rc]) = make_float2(aq[n][2 * hf], aq[n][2 * hf + 1]);
      *reinterpret_cast<float2*>(&Re[rc]) = make_float2(-ae[n][2 * hf], -ae[n][2 * hf + 1]);
      *reinterpret_cast<float2*>(&Rk[rc]) = make_float2(ak[n][2 * hf], ak[n][2 * hf + 1]);
    }
  }
#pragma unroll
  for (int hf = 0; hf < 2 && !V3; ++hf) {
    const int r = r0 + 8 * hf;
#pragma unroll
    for (int e = 0; e < 2; ++e) {
#pragma unroll
      for (int n = 0; n < NQ; ++n) {
        const int c = 8 * (gq * NQ + n) + cq + e;
        Rq[r * KF + c] = aq[n][2 * hf + e];
        Re[r * KF + c] = -ae[n][2 * hf + e];
        Rk[r * KF + c] = ak[n][2 * hf + e];
      }
#pragma unroll
      for (int n = 0; n < 2 && !TC; ++n) {
        const int c = 8 * (2 * gq + n) + cq + e;
        Ra[r * CF + c] = aa[n][2 * hf + e];
        Rl[r * CF + c] = -al[n][2 * hf + e];
      }
    }
  }
  __syncthreads();
  if constexpr (V3) {
    // V3 row layout: this thread's key columns are the pairs 2 tk + 16 mp + {0, 1} (m = 2 mp + e).
    handoff_rows_v3<KM / 2, SWZ, KF>(Rq, Re, Rk, ti, tk, dqp, de, dkr);
  } else {
#pragma unroll
    for (int m = 0; m < KM; ++m) {
      dqp[m] = Rq[ti * KF + tk + 8 * m];
      de[m] = Re[ti * KF + tk + 8 * m];
      dkr[m] = Rk[ti * KF + tk + 8 * m];
    }
  }
#pragma unroll
  for (int m = 0; m < 8 && !TC; ++m) {
    da[m] = Ra[ti * CF + tk + 8 * m];
    dl[m] = Rl[ti * CF + tk + 8 * m];
  }
  // The region is the caller's again (V5: the caller's next barrier, before any write to it).
  if constexpr (!V5) __syncthreads();
}

template <typename T, int K, int V, bool MMA = false>
__device__ __forceinline__ void bwd_tokens_body(const BwdParams& bp) {
  using S = TokSmem<K>;
  using IO = Io<T>;
  constexpr int KF = S::KF, CF = S::CF, VF = S::VF, VT = TOK_VT;
  constexpr int KM = K / 8;  // key columns per thread
  const FwdParams& p = bp.f;
  extern __shared__ __align__(16) unsigned char smem[];
  float* Ws = reinterpret_cast<float*>(smem + S::r0_off);
  float* Kn = reinterpret_cast<float*>(smem + S::r0_off);  // after the V loop
  float* Qn = reinterpret_cast<float*>(smem + S::qn_off);
  float* Xs = reinterpret_cast<float*>(smem + S::x_off);
  float* dXs = reinterpret_cast<float*>(smem + S::dx_off);
  float* dOs = reinterpret_cast<float*>(smem + S::do_off);
  float* dRs = reinterpret_cast<float*>(smem + S::dr_off);
  float* Us = reinterpret_cast<float*>(smem + S::u_off);
  float* dAs = reinterpret_cast<float*>(smem + S::da_off);
  float* dLs = reinterpret_cast<float*>(smem + S::dl_off);
  float* Gs = reinterpret_cast<float*>(smem + S::g_off);
  float* gam = reinterpret_cast<float*>(smem + S::vec_off);
  float* bet = gam + CHUNK;
  float* qr = bet + CHUNK;
  float* kr = qr + CHUNK;
  float* dgam = kr + CHUNK;
  float* dbv = dgam + CHUNK;
  float* dbl = dbv + CHUNK;
  float* red = dbl + CHUNK;

  const int c = blockIdx.x, h = blockIdx.y;
  const int tid = threadIdx.x;
  int seq, len;
  long long t0;
  if (!locate_chunk(p, c, seq, t0, len)) return;
  const int HO = p.ho;
  const int qh = h / (HO / p.h), kh = h / (HO / p.hk), vh = h / (HO / p.hv);
  const size_t ch = static_cast<size_t>(c) * HO + h;
  // Thread mapping: token row ti (8 threads per row, consecutive lanes), key columns tk + 8m,
  // chunk columns tk + 8m.
  const int ti = tid >> 3, tk = tid & 7;

  if (!MMA) tile_to_f32<T, K>(Ws, KF, static_cast<const T*>(p.ws_w) + ch * CHUNK * K, CHUNK, tid, TOK_THREADS);
  if (tid < CHUNK) {
    gam[tid] = bp.ws_gam[ch * CHUNK + tid];
    bet[tid] = bp.ws_bet[ch * CHUNK + tid];
  }
  float dqp[KM], de[KM], dkr[KM], da[8], dl[8];
#pragma unroll
  for (int m = 0; m < KM; ++m) dqp[m] = de[m] = dkr[m] = 0.f;
#pragma unroll
  for (int m = 0; m < 8; ++m) da[m] = dl[m] = 0.f;
  float dd = 0.f, dbv_acc = 0.f;
  const float* xg = bp.ws_s + ch * V * K;
  const float* dxg = bp.ws_ds + ch * V * K;
  const float* drg = bp.ws_dr + ch * CHUNK * V;
  const T* utg = static_cast<const T*>(p.ws_ut) + ch * V * CHUNK;

  if constexpr (MMA) {
    __syncthreads();  // gam, bet
    float faa[2][4], fal[2][4];
    tokens_products_mma<T, K, V>(bp, ch, t0, len, h, vh, bet, dqp, de, dkr, da, dl, dd, dbv_acc, faa, fal);
  } else
  for (int vt = 0; vt < V; vt += VT) {
    __syncthreads();  // previous slice consumed
    for (int i = tid; i < VT * K; i += TOK_THREADS) {
      const int r = i / K, kk = i % K;
      const float xv = xg[static_cast<size_t>(vt + r) * K + kk], dxv = dxg[static_cast<size_t>(vt + r) * K + kk];
      Xs[r * KF + kk] = xv;
      dXs[r * KF + kk] = dxv;
      dd += xv * dxv;
    }
    for (int i = tid; i < CHUNK * VT; i += TOK_THREADS) {
      const int r = i / VT, vv = i % VT;
      const bool live = r < len;
      dOs[r * VF + vv] = live ? IO::to_f(static_cast<const T*>(bp.d_o)[(static_cast<size_t>(t0 + r) * HO + h) * V + vt + vv]) : 0.f;
      dRs[r * VF + vv] = drg[static_cast<size_t>(r) * V + vt + vv];
      Us[r * VF + vv] = IO::to_f(utg[static_cast<size_t>(vt + vv) * CHUNK + r]);
    }
    __syncthreads();
    // U = Ũ − W S_c on this slice (2 entries per thread).
    float unew[2];
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int idx = tid + TOK_THREADS * e, r = idx / VT, vv = idx % VT;
      float s = 0.f;
      for (int kk = 0; kk < K; ++kk) s += Ws[r * KF + kk] * Xs[vv * KF + kk];
      unew[e] = Us[r * VF + vv] - s;
    }
    __syncthreads();
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int idx = tid + TOK_THREADS * e, r = idx / VT, vv = idx % VT;
      Us[r * VF + vv] = unew[e];
    }
    __syncthreads();
    // Accumulate over the slice's value rows.
    for (int vv = 0; vv < VT; ++vv) {
      const float o = dOs[ti * VF + vv], r = dRs[ti * VF + vv], u = Us[ti * VF + vv];
#pragma unroll
      for (int m = 0; m < KM; ++m) {
        const float xv = Xs[vv * KF + tk + 8 * m];
        dqp[m] += o * xv;
        de[m] -= r * xv;
        dkr[m] += u * dXs[vv * KF + tk + 8 * m];
      }
#pragma unroll
      for (int m = 0; m < 8; ++m) {
        const float uj = Us[(tk + 8 * m) * VF + vv];
        da[m] += o * uj;
        dl[m] -= r * uj;
      }
    }
    // dβ from Y = β v: Σ_v dR · v (threads of row ti split the slice's 16 values).
    if (ti < len) {
      const T* vg = static_cast<const T*>(p.v) + (static_cast<size_t>(t0 + ti) * p.hv + vh) * V + vt;
#pragma unroll
      for (int e = 0; e < 2; ++e) dbv_acc += dRs[ti * VF + tk + 8 * e] * IO::to_f(vg[tk + 8 * e]);
    }
    // dv = β dR (per output head, fp32, to the workspace).
    if (ti < len) {
#pragma unroll
      for (int e = 0; e < 2; ++e)
        bp.ws_dv[(static_cast<size_t>(t0 + ti) * HO + h) * V + vt + tk + 8 * e] = bet[ti] * dRs[ti * VF + tk + 8 * e];
    }
  }
  // dD = Σ S_c ⊙ dS' (fixed-order block reduction).
  red[tid] = dd;
  __syncthreads();
  for (int off = TOK_THREADS / 2; off > 0; off >>= 1) {
    if (tid < off) red[tid] += red[tid + off];
    __syncthreads();
  }
  const float dD = red[0];
  // Normalised k (over W) and scaled q̂, with their inverse norms.
  {
    const T* qg = static_cast<const T*>(p.q);
    const T* kg = static_cast<const T*>(p.k);
    float kx[KM], qx[KM];
    float ks = 0.f, qs = 0.f;
    const bool live = ti < len;
#pragma unroll
    for (int m = 0; m < KM; ++m) {
      kx[m] = live ? IO::to_f(kg[(static_cast<size_t>(t0 + ti) * p.hk + kh) * K + tk + 8 * m]) : 0.f;
      qx[m] = live ? IO::to_f(qg[(static_cast<size_t>(t0 + ti) * p.h + qh) * K + tk + 8 * m]) : 0.f;
      ks += kx[m] * kx[m];
      qs += qx[m] * qx[m];
    }
    float rk, rq;
    tok_inv_norms(p, ks, qs, rk, rq);
    if (tk == 0) {
      qr[ti] = rq;
      kr[ti] = rk;
      dbv[ti] = 0.f;
    }
#pragma unroll
    for (int m = 0; m < KM; ++m) {
      Kn[ti * KF + tk + 8 * m] = kx[m] * rk;
      Qn[ti * KF + tk + 8 * m] = qx[m] * rq * p.scale;
    }
  }
  // dβ (value part): reduce the 8 threads of the row.
#pragma unroll
  for (int o = 4; o > 0; o >>= 1) dbv_acc += __shfl_xor_sync(0xffffffffu, dbv_acc, o);
  if (tk == 0) dbv[ti] = dbv_acc;
  __syncthreads();
  // Phase A: per (i, j): a = q·k dec (j ≤ i), l = β_i k·k dec (j < i); G = dA a + dL l;
  // dA' = dA dec, dL' = dL β_i dec; the L part of dβ.
  {
    float dbl_acc = 0.f;
#pragma unroll
    for (int m = 0; m < 8; ++m) {
      const int i = ti, j = tk + 8 * m;
      float g = 0.f, dap = 0.f, dlp = 0.f;
      if (j <= i) {
        float qk = 0.f, kk2 = 0.f;
        for (int d = 0; d < K; ++d) {
          const float kj = Kn[j * KF + d];
          qk += Qn[i * KF + d] * kj;
          kk2 += Kn[i * KF + d] * kj;
        }
        const float dec = __expf(gam[i] - gam[j]);
        dap = da[m] * dec;
        g = da[m] * qk * dec;
        if (j < i) {
          dlp = dl[m] * bet[i] * dec;
          g += dl[m] * bet[i] * kk2 * dec;
          dbl_acc += dl[m] * kk2 * dec;
        }
      }
      dAs[i * CF + j] = dap;
      dLs[i * CF + j] = dlp;
      Gs[i * CF + j] = g;
    }
#pragma unroll
    for (int o = 4; o > 0; o >>= 1) dbl_acc += __shfl_xor_sync(0xffffffffu, dbl_acc, o);
    if (tk == 0) dbl[ti] = dbl_acc;
  }
  __syncthreads();
  // Phase B: dq̂, dk̂ and the row dots for dΓ and dβ.
  const int i = ti;
  const float eg = __expf(gam[i]), er = __expf(gam[CHUNK - 1] - gam[i]), bi = bet[i];
  float dq[KM], dk[KM];
#pragma unroll
  for (int m = 0; m < KM; ++m) {
    dq[m] = eg * dqp[m];
    dk[m] = er * dkr[m] + bi * eg * de[m];
  }
  for (int j = 0; j < CHUNK; ++j) {
    const float a_ij = dAs[i * CF + j];   // zero for j > i
    const float a_ji = dAs[j * CF + i];   // zero for j < i
    const float l_ij = dLs[i * CF + j];   // zero for j ≥ i
    const float l_ji = dLs[j * CF + i];   // zero for j ≤ i
#pragma unroll
    for (int m = 0; m < KM; ++m) {
      const float kj = Kn[j * KF + tk + 8 * m];
      dq[m] += a_ij * kj;
      dk[m] += a_ji * Qn[j * KF + tk + 8 * m] + (l_ij + l_ji) * kj;
    }
  }
  float dek = 0.f, dqq = 0.f, dkk = 0.f, gsum = 0.f;
#pragma unroll
  for (int m = 0; m < KM; ++m) {
    const float kv = Kn[i * KF + tk + 8 * m], qv = Qn[i * KF + tk + 8 * m];
    dek += de[m] * kv;
    dqq += dqp[m] * qv;
    dkk += dkr[m] * kv;
  }
#pragma unroll
  for (int m = 0; m < 8; ++m) {
    const int j = tk + 8 * m;
    gsum += Gs[i * CF + j] - Gs[j * CF + i];
  }
#pragma unroll
  for (int o = 4; o > 0; o >>= 1) {
    dek += __shfl_xor_sync(0xffffffffu, dek, o);
    dqq += __shfl_xor_sync(0xffffffffu, dqq, o);
    dkk += __shfl_xor_sync(0xffffffffu, dkk, o);
    gsum += __shfl_xor_sync(0xffffffffu, gsum, o);
  }
  // dΓ_i = eg β (dE·k) + eg (dQ⁺·q) − er (dKᴿ·k) + Σ_j G_ij − Σ_j G_ji; dβ_i.
  const float dbeta_i = eg * dek + dbv[i] + dbl[i];
  if (tk == 0) dgam[i] = i < len ? eg * bi * dek + eg * dqq - er * dkk + gsum : 0.f;
  // Σ_i er_i (dKᴿ_i·k_i) goes to the last row, with e^{Γ_last} dD.
  red[tid] = (tk == 0 && i < len) ? er * dkk : 0.f;
  __syncthreads();
  for (int off = TOK_THREADS / 2; off > 0; off >>= 1) {
    if (tid < off) red[tid] += red[tid + off];
    __syncthreads();
  }
  if (tid == 0) {
    dgam[len - 1] += red[0] + __expf(gam[CHUNK - 1]) * dD;
    float acc = 0.f;  // reverse cumulative sum: d log α_t = Σ_{i ≥ t} dΓ_i
    for (int t = len - 1; t >= 0; --t) {
      acc += dgam[t];
      dgam[t] = acc;
    }
  }
  __syncthreads();
  const bool live = i < len;  // no early return: the row groups below still shuffle
  const long long t = t0 + i;
  // l2norm backward: dx = r (dy − y (y·dy)), y the normalised row, dy w.r.t. y.
  {
    const float sc = p.scale;
    float yq = 0.f, yk = 0.f;
#pragma unroll
    for (int m = 0; m < KM; ++m) {
      yq += (Qn[i * KF + tk + 8 * m] / sc) * (sc * dq[m]);
      yk += Kn[i * KF + tk + 8 * m] * dk[m];
    }
#pragma unroll
    for (int o = 4; o > 0; o >>= 1) {
      yq += __shfl_xor_sync(0xffffffffu, yq, o);
      yk += __shfl_xor_sync(0xffffffffu, yk, o);
    }
    const bool l2 = p.flags & FLAG_L2NORM;
    float* dqo = bp.ws_dq + (static_cast<size_t>(t) * HO + h) * K;
    float* dko = bp.ws_dk + (static_cast<size_t>(t) * HO + h) * K;
#pragma unroll
    for (int m = 0; m < KM && live; ++m) {
      const float dyq = sc * dq[m], dyk = dk[m];
      const float yqv = Qn[i * KF + tk + 8 * m] / sc, ykv = Kn[i * KF + tk + 8 * m];
      dqo[tk + 8 * m] = l2 ? qr[i] * (dyq - yqv * yq) : dyq;
      dko[tk + 8 * m] = l2 ? kr[i] * (dyk - ykv * yk) : dyk;
    }
  }
  if (tk != 0 || !live) return;
  // Gate and beta chain rules (§3.2), per (token, output head).
  gate_beta_grads(bp, t * HO + h, h, dgam[i], dbeta_i);
}

// ---------------------------------------------------------------------------------------
// Stage 5, all products on the tensor cores (gdn_bwd_tokens_tc*, REV 4 the default): the value-dimension
// products of tokens_products_mma (dS' read in the io dtype), then the two chunk-local phases of
// bwd_tokens_body as mma.sync products with the io dtype as operands and fp32 accumulation:
//   phase A: Q̂ K̂ᵀ and K̂ K̂ᵀ (64 × 64 × K) in the fragment layout of dA, dL, giving
//            dA' = dA ⊙ dec, dL' = dL ⊙ β_i dec, G and the L part of dβ;
//   phase B: dq̂ += dA' K̂, dk̂ += dA'ᵀ Q̂ + (dL' + dL'ᵀ) K̂ (64 × K × 64).
// The row work (dots for dΓ / dβ, reverse cumulative sum, l2norm and the port chain rules) is
// bwd_tokens_body's, per (token row, 8 threads). With FLAG_BWD_DIRECT, dq / dk / dv of a port
// whose head count is HO go straight to the port in the io dtype (no fold for it).
// Revisions (the same algebra; REV is the template argument):
//   REV 0 (gdn_bwd_tokens_tc, session 4);
//   REV 2 (gdn_bwd_tokens_tc2): latency cuts — dv = β dR and dβ's value part from one coalesced
//     fp32 dR pass whose loads are all issued first (session 4 read dR again per row with a
//     load → store chain of 16 dependent global round trips), the raw gate and β loaded at the
//     start, no barrier before the products, the reverse cumulative sum on one warp (suffix scan
//     by shuffles) instead of thread 0;
//   REV 3 (gdn_bwd_tokens_tc3, the default): REV 2 with about a third fewer instructions —
//     ldmatrix.x4 A and B fragments, fp32 result tiles in rows of K + 8 written as float2, each
//     row thread's key columns as adjacent pairs (2 tk + 16 mp + {0, 1}: 32-bit shared loads and
//     stores of q/k rows, 32/64-bit global stores of dq/dk), compile-time-unrolled cp.async
//     copies, no fp32 division in the l2norm backward (q · r instead of (q · r · scale) / scale),
//     no integer division for ungrouped head indices, a 9-shuffle reduce-scatter for dβ;
//   REV 4 (gdn_bwd_tokens_tc4): REV 3 reading S_c in the io dtype (the replay ran with
//     FLAG_BWD_S_IO): S goes to shared memory by cp.async (half the traffic, no 16 float2
//     registers, no conversion pass and one barrier less); dD = Σ S ⊙ dS' from the io-dtype S
//     (the products already used S rounded to the io dtype, bitwise the same operands);
//   REV 5 (gdn_bwd_tokens_tc5, the default): REV 4 with every copy issued before the dR pass and
//     in four groups consumed in the order of use (W, Ũᵀ, S → U; dO → dO S, dR S, dO Uᵀ, dR Uᵀ;
//     dS' → U dS' and dD; q, k → the row phases), the value products in two passes (each
//     accumulator still sums the value tiles in order), dΓ and the Σ er (dKᴿ·k) parts published by
//     the phase-B result barrier, the products' closing barrier dropped (11 barriers, REV 4: 12);
//     bitwise REV 4's outputs (the fp32 expressions and their FMA contraction unchanged);
//   REV 6 (not bundled, see above): REV 5 as a persistent block per SM over the live tiles, each
//     next tile's W, S, Ũᵀ and dO copied during this tile's phases (TokMmaSmem6 layout, 215 KB).
//   REV 9 (not bundled; emulation set tc9): REV 5 with the fp32 dR tile copied by cp.async in G1 (with dO)
//     into its own slot (TokSmem9 layout, 213,760 B at K = 128), pass 1's dR fragments packed
//     from it, the dv / dβ pass after pass 1 (while dS' lands): no synchronous dR loads at the
//     tile's start; the same fp32 operations (PTX fp-op multiset equal to REV 5's);
//   REV 10 (not bundled; emulation set tc10): REV 9 with the fp32 result tiles in rows of
//     K + 16, columns swizzled (tok_swz): conflict-free float2 stores and loads;
//   REV 11 (gdn_bwd_tokens_tc11, the default): REV 10 with phase A's fp32 G tile in rows of CHUNK + 8 (fewer
//     bank conflicts in its stores and the Σ_j G_ij − G_ji reads);
//   REV 12 (gdn_bwd_tokens_tc12, session 10; DNNPLAN_GDN_BWD_TOKENS=tc12): REV 11 with the raw q / k
//     tiles in rows of K + 16 (TokSmem12) and the G tile's stores (float2) and reads by tok_gswz:
//     the row phase's 2-way bank conflicts gone except the q̂ / k̂ stores; bitwise REV 11.
//   REV 13 (session 20's experiment; session 21: gdn_bwd_tokens_tc13_ov, DNNPLAN_GDN_BWD_TOKENS=tc13,
//     the consumer of dscan_ov5dr / dscanp_ov5dr; the emulation's GDN_EMU_OV_DRIO): REV 12 reading
//     dR in the io dtype (the producer's DR_IO): the
//     [64][V] io tile by cp.async with dO (G1) into the fp32 slot, pass 1's A fragments by ldmatrix
//     (the operands REV 12 packs from the fp32 tile with the same rounding: dQ⁺, dE, dKᴿ, dA, dL and
//     so dq, dk, dG bitwise), dv = β dR and dβ's value part from the rounded dR (not bitwise).
// ---------------------------------------------------------------------------------------
template <int K>
struct TokTcSmem {
  static constexpr int KP = K + 8, CP = CHUNK + 8, KF = K + 1, CF = CHUNK + 1;
  static constexpr size_t kb_off = 0;                          // k̂  io [64][KP]
  static constexpr size_t qb_off = kb_off + CHUNK * KP * 2;    // q̂ (scaled) io [64][KP]
  static constexpr size_t pa_off = qb_off + CHUNK * KP * 2;    // dA'  io [64][CP]
  static constexpr size_t pt_off = pa_off + CHUNK * CP * 2;    // dA'ᵀ io [64][CP]
  static constexpr size_t ml_off = pt_off + CHUNK * CP * 2;    // dL' + dL'ᵀ io [64][CP]
  static constexpr size_t g_off = ml_off + CHUNK * CP * 2;     // G fp32 [64][CF]
  static constexpr size_t a_bytes = g_off + CHUNK * CF * 4;
  // Phase B results (fp32), over the same region after its operands are consumed.
  static constexpr size_t rq_off = 0, rk_off = CHUNK * KF * 4;
  static constexpr size_t b_bytes = 2 * CHUNK * KF * 4;
};

// REV 30's value products (gdn_bwd_tw.cuh, defined after gdn_bwd_tw.cuh's layout): the outputs of
// tokens_products_mma for bwd_tokens_tc_tile (dqp / de / dkr rows, faa / fal fragments, dD's
// partial dd, Σ_v dR·v halves in dbvp, dv to its port), the scalar rows and q / k copies by the
// caller's hooks, the unit's flag waited by warpgroup 0 only (EARLY, REV 32: by thread 64 before
// the tile's first barrier; TMA, REV 34: the ring by the tensor maps `maps`).
template <typename T, int K, int V, bool EARLY, bool TMA = false, typename Scalars, typename IssueQK,
          typename FlagWait>
__device__ __forceinline__ void tw1_products(const BwdParams& bp, size_t ch, long long t0, int len, int h, int vh,
                                             const float* bet, float* dqp, float* de, float* dkr, float& dd,
                                             float (&faa)[2][4], float (&fal)[2][4], float* dbvp,
                                             const Scalars& load_scalars, const IssueQK& issue_qk,
                                             const FlagWait& flag_wait, const TwRingMaps* maps = nullptr);

// One (chunk slot c, head h) tile. REV 6: g0_ready says that the previous tile issued this tile's
// first copy group; with next_c >= 0 this tile issues tile (next_c, next_h)'s (after its product
// results are read, into TokMmaSmem6's S / W / Ũᵀ / dO slots, which its later phases leave alone).
// flag_wait (the overlapped consumer, REV >= 12; session 22, tstart22): called by every thread
// once, after the copies of W, Ũᵀ, S, dO, q, k are issued and the Γ / β / raw-gate rows stored,
// before any read of ws_ds / ws_dr (tokens_products_mma's pre_wait).
// maps (REV 34, tw7): the ring's tensor maps (tw1_products' TMA form); null otherwise.
template <typename T, int K, int V, int REV = 0, typename FlagWait = TokNoIssue>
__device__ __forceinline__ void bwd_tokens_tc_tile(const BwdParams& bp, int c, int h, int next_c = -1, int next_h = 0,
                                                   bool g0_ready = false, const FlagWait& flag_wait = FlagWait(),
                                                   const TwRingMaps* maps = nullptr) {
  constexpr bool V2 = REV >= 2, V3 = REV >= 3, V5 = REV >= 5, V6 = REV == 6;
  using S = TokSmem<K>;
  using Z = TokTcSmem<K>;
  using IO = Io<T>;
  static_assert(Z::a_bytes <= S::vec_off && Z::b_bytes <= S::vec_off, "token tail overflows");
  static_assert(S::bytes % 16 == 0 && 4 * CHUNK + TOK_THREADS / 32 <= TOK_THREADS, "token smem layout");
  // REV 11: G in rows of CHUNK + 8 floats (Z::CF = CHUNK + 1 gives its stores and both reads
  // 4-way bank conflicts; + 8: reads Gs[i][j] conflict-free, stores and Gs[j][i] 2-way).
  constexpr int CP = Z::CP, CF = REV >= 11 ? CHUNK + 8 : Z::CF;
  constexpr bool SWZ = REV >= 10;  // phase B's results as the products' (rows of K + 16, tok_swz)
  constexpr bool TW1 = REV == 30 || REV == 32 || REV == 34;  // tw1 / tw3 / tw7: tw1_products' tile
  constexpr bool QSW = REV >= 12;  // raw q / k rows of K + 16; G by tok_gswz, float2 stores
  constexpr int KF = V3 ? (SWZ ? K + 16 : K + 8) : Z::KF;  // V3: phase B's fp32 results in rows of K + 8 (float2 pairs)
  static_assert(2 * CHUNK * (K + 8) * 4 <= S::vec_off, "token tail overflows");
  constexpr int KM = K / 8;  // key columns per thread (row layout)
  static_assert(!V6 || (TokMmaSmem6<K, V>::a_end == Z::a_bytes && TokMmaSmem6<K, V>::b_end >= 2 * CHUNK * KF * 4),
                "tc6: the prefetched operands overlap the chunk-local phases");
  const FwdParams& p = bp.f;
  extern __shared__ __align__(16) unsigned char smem[];
  T* Kb = reinterpret_cast<T*>(smem + Z::kb_off);
  T* Qb = reinterpret_cast<T*>(smem + Z::qb_off);
  T* Pa = reinterpret_cast<T*>(smem + Z::pa_off);
  T* Pt = reinterpret_cast<T*>(smem + Z::pt_off);
  T* Ml = reinterpret_cast<T*>(smem + Z::ml_off);
  float* Gs = reinterpret_cast<float*>(smem + Z::g_off);
  // G_ij's place: row i, column j (QSW: columns XOR tok_gswz(i)).
  auto g_at = [](int i, int j) { return i * CF + (QSW ? j ^ tok_gswz(i) : j); };
  float* Rq = reinterpret_cast<float*>(smem + Z::rq_off);
  float* Rk = reinterpret_cast<float*>(smem + (V3 ? CHUNK * KF * 4 : Z::rk_off));
  using VL = TokVecLayout<K, V, REV>;
  static_assert(REV < 9 || (Z::g_off + CHUNK * CF * 4 <= VL::vec_off && Z::a_bytes <= VL::vec_off && 2 * CHUNK * KF * 4 <= VL::vec_off), "tc9: token tail overflows");
  float* gam = reinterpret_cast<float*>(smem + VL::vec_off);
  float* bet = gam + CHUNK;
  float* qr = bet + CHUNK;
  float* kr = qr + CHUNK;
  float* dgam = kr + CHUNK;
  float* dbv = dgam + CHUNK;
  float* dbl = dbv + CHUNK;
  float* red = dbl + CHUNK;

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  int seq, len;
  long long t0;
  if (!locate_chunk(p, c, seq, t0, len)) return;
  const int HO = p.ho;
  // V3: no integer division for ports without head groups (the common case).
  const int qh = V3 && p.h == HO ? h : h / (HO / p.h);
  const int kh = V3 && p.hk == HO ? h : h / (HO / p.hk);
  const int vh = V3 && p.hv == HO ? h : h / (HO / p.hv);
  const size_t ch = static_cast<size_t>(c) * HO + h;
  // Row layout: token row ti (8 threads per row, consecutive lanes), key columns tk + 8m.
  const int ti = tid >> 3, tk = tid & 7;
  // Fragment layout: token tile mt, column group gq.
  const int g = lane >> 2, cq = 2 * (lane & 3);
  const int mt = warp & 3, gq = warp >> 2;
  const int r0 = 16 * mt + g;
  const int lrow = (lane & 7) + 8 * ((lane >> 3) & 1);
  const int bcol = 8 * (lane >> 4);

  float dqp[KM], de[KM], dkr[KM], da_unused[8], dl_unused[8];
#pragma unroll
  for (int m = 0; m < KM; ++m) dqp[m] = de[m] = dkr[m] = 0.f;
  float dd = 0.f, dbv_acc = 0.f;
  float faa[2][4], fal[2][4];
  // q and k rows of the chunk (zero past len) by cp.async, after the Ũᵀ tile; they land during the
  // products (whose final wait covers this group).
  constexpr int KP = Z::KP;
  T* Qraw = reinterpret_cast<T*>(smem + VL::qraw_off);  // raw q [64][KP]
  constexpr int KRW = QSW ? K + 16 : KP;  // raw q / k row stride
  T* Kraw = Qraw + CHUNK * KRW;                                             // raw k [64][KRW]
  // V5: the products issue these copies themselves (their last copy group, after dS').
  auto issue_qk = [&] {
    const T* qg = static_cast<const T*>(p.q);
    const T* kg = static_cast<const T*>(p.k);
    constexpr int VEC = K / 8;
    if constexpr (V3) {
      // The same copies unrolled: rows r0q + RS u of q and of k, 16-byte column c8.
      static_assert(TOK_THREADS % VEC == 0 && CHUNK * VEC % TOK_THREADS == 0, "q/k copy split");
      constexpr int RS = TOK_THREADS / VEC, NU = CHUNK * VEC / TOK_THREADS;
      const int r0q = tid / VEC, c8 = tid % VEC;
      const T* qrow = qg + (static_cast<size_t>(t0 + r0q) * p.h + qh) * K + 8 * c8;
      const T* krow = kg + (static_cast<size_t>(t0 + r0q) * p.hk + kh) * K + 8 * c8;
      const size_t qs = static_cast<size_t>(RS) * p.h * K, ks = static_cast<size_t>(RS) * p.hk * K;
#pragma unroll
      for (int u = 0; u < NU; ++u) {
        const int r = r0q + RS * u;
        T* dq_ = Qraw + r * KRW + 8 * c8;
        T* dk_ = Kraw + r * KRW + 8 * c8;
        if (r < len) {
          cp_async16(dq_, qrow + u * qs);
          cp_async16(dk_, krow + u * ks);
        } else {
          *reinterpret_cast<uint4*>(dq_) = make_uint4(0u, 0u, 0u, 0u);
          *reinterpret_cast<uint4*>(dk_) = make_uint4(0u, 0u, 0u, 0u);
        }
      }
    }
    for (int x = tid; x < 2 * CHUNK * VEC && !V3; x += TOK_THREADS) {
      const int which = x / (CHUNK * VEC), r = (x / VEC) % CHUNK, c8 = x % VEC;
      T* dst = (which ? Kraw : Qraw) + r * KP + 8 * c8;
      if (r < len) {
        const T* src = which ? kg + (static_cast<size_t>(t0 + r) * p.hk + kh) * K : qg + (static_cast<size_t>(t0 + r) * p.h + qh) * K;
        cp_async16(dst, src + 8 * c8);
      } else {
        *reinterpret_cast<uint4*>(dst) = make_uint4(0u, 0u, 0u, 0u);
      }
    }
  };
  if constexpr (!V5) {
    issue_qk();
    cp_async_commit();
  }
  // V2: the raw gate and β of the chain rules, loaded now (slots of red past the reductions').
  float* graw_s = red + 5 * CHUNK;
  float* braw_s = red + 6 * CHUNK;
  static_assert(7 * CHUNK <= TOK_THREADS, "red slots");
  auto load_scalars = [&] {
    if (tid < CHUNK) {
      gam[tid] = bp.ws_gam[ch * CHUNK + tid];
      bet[tid] = bp.ws_bet[ch * CHUNK + tid];
      if (V2 && tid < len) {
        const long long gi = (t0 + tid) * HO + h;
        graw_s[tid] = load_any(p.g, p.g_dtype, gi);
        braw_s[tid] = (p.flags & FLAG_BETA_SIGMOID) ? load_any(p.beta, p.beta_dtype, gi) : 0.f;
      }
    }
  };
  constexpr bool PRE = TokIsHook<FlagWait>::value;
  static_assert(!PRE || (REV >= 12 && !V6), "flag_wait: the overlapped REV 12 / 13 tile");
  if constexpr (!PRE) load_scalars();
  if (!V2) __syncthreads();  // gam, bet (V2: the products' first barrier covers them)
  if constexpr (TW1) {
    static_assert(PRE, "tw1 / tw3 / tw7: the overlapped consumer only");
    static_assert(VL::vec_off == Tw1Smem<K, V>::vec_off && VL::qraw_off == Tw1Smem<K, V>::qraw_off,
                  "tw1 / tw3 / tw7: the vectors and raw q / k rows in Tw1Smem (TokVecLayout<K, V, REV>)");
    tw1_products<T, K, V, REV >= 32, REV == 34>(bp, ch, t0, len, h, vh, bet, dqp, de, dkr, dd, faa, fal, dbv,
                                                load_scalars, issue_qk, flag_wait, maps);
  } else if constexpr (PRE) {
    // The scalar rows after the copy issue (their loads no longer hold the copies back), then the
    // unit's flag (its block barrier also covers them).
    auto pre_wait = [&] {
      load_scalars();
      flag_wait();
    };
    tokens_products_mma<T, K, V, true, REV>(bp, ch, t0, len, h, vh, bet, dqp, de, dkr, da_unused, dl_unused, dd, dbv_acc,
                                           faa, fal, dbv, issue_qk, g0_ready, pre_wait);
  } else if constexpr (V5) {
    tokens_products_mma<T, K, V, true, REV>(bp, ch, t0, len, h, vh, bet, dqp, de, dkr, da_unused, dl_unused, dd, dbv_acc,
                                           faa, fal, dbv, issue_qk, g0_ready);
  } else {
    tokens_products_mma<T, K, V, true, REV>(bp, ch, t0, len, h, vh, bet, dqp, de, dkr, da_unused, dl_unused, dd, dbv_acc,
                                           faa, fal, dbv);
  }
  // dD = Σ S_c ⊙ dS' (fixed order: warp butterflies, then the 16 warps in order).
  constexpr int NWARPS = TOK_THREADS / 32;
#pragma unroll
  for (int o = 16; o > 0; o >>= 1) dd += __shfl_xor_sync(0xffffffffu, dd, o);
  if (lane == 0) red[warp] = dd;
  __syncthreads();
  if constexpr (V6) {
    // The next tile's first copy group, landing during this tile's phases (every operand slot
    // it fills was last read by this tile's products, before the barrier above).
    int nseq, nlen;
    long long nt0;
    if (next_c >= 0 && locate_chunk(p, next_c, nseq, nt0, nlen)) {
      tokens_issue_g0<T, K, V>(bp, static_cast<size_t>(next_c) * HO + next_h, nt0, nlen, next_h, tid);
      cp_async_commit();
    }
  }
  float dD = 0.f;
#pragma unroll
  for (int w = 0; w < NWARPS; ++w) dD += red[w];
  const int i = ti;
  const bool live = i < len;  // no early return: the row groups below still shuffle
  const float eg = exp_ftz(gam[i]), er = exp_ftz(gam[CHUNK - 1] - gam[i]), bi = bet[i];
  // Normalised k and scaled q̂ (io dtype operands), their inverse norms, and the row dots
  // dE·k̂, dQ⁺·q̂, dKᴿ·k̂ (fp32, before the chunk-local products).
  float dq[KM], dk[KM];
  float dek = 0.f, dqq = 0.f, dkk = 0.f;
  // tw1 / tw3 / tw7 hand over P_E = −dE unsigned (tw1_products' Re tile; session 41: its per-element
  // sign multiply was 64 FMUL per thread of warpgroups 0-2): de holds −dE, negated at its two uses.
  constexpr bool DE_NEG = TW1;
  {
    float kx[KM], qx[KM];
    float ks = 0.f, qs = 0.f;
    row_pairs<V3, T, KM>(kx, Kraw + ti * KRW, tk, live, 1.f, 1.f);
    row_pairs<V3, T, KM>(qx, Qraw + ti * KRW, tk, live, 1.f, 1.f);
#pragma unroll
    for (int m = 0; m < KM; ++m) {
      ks += kx[m] * kx[m];
      qs += qx[m] * qx[m];
    }
    float rk, rq;
    tok_inv_norms(p, ks, qs, rk, rq);
    if (tk == 0) {
      qr[ti] = rq;
      kr[ti] = rk;
    }
#pragma unroll
    for (int m = 0; m < KM; ++m) {
      const float kn = kx[m] * rk, qn = qx[m] * rq * p.scale;
      if constexpr (V3) {
        if (m & 1) {
          const int c = ti * KP + 2 * tk + 16 * (m >> 1);
          *reinterpret_cast<u32*>(&Kb[c]) = Io<T>::pack(kx[m - 1] * rk, kn);
          *reinterpret_cast<u32*>(&Qb[c]) = Io<T>::pack(qx[m - 1] * rq * p.scale, qn);
        }
      } else {
        Kb[ti * KP + tk + 8 * m] = IO::from_f(kn);
        Qb[ti * KP + tk + 8 * m] = IO::from_f(qn);
      }
      if constexpr (DE_NEG) de[m] = -de[m];  // folded into its two uses' operand sign
      dek += de[m] * kn;
      dqq += dqp[m] * qn;
      dkk += dkr[m] * kn;
      dq[m] = eg * dqp[m];
      dk[m] = er * dkr[m] + bi * eg * de[m];
    }
  }
#pragma unroll
  for (int o = 4; o > 0; o >>= 1) {
    dbv_acc += __shfl_xor_sync(0xffffffffu, dbv_acc, o);
    dek += __shfl_xor_sync(0xffffffffu, dek, o);
    dqq += __shfl_xor_sync(0xffffffffu, dqq, o);
    dkk += __shfl_xor_sync(0xffffffffu, dkk, o);
  }
  if (!V2 && tk == 0) dbv[ti] = dbv_acc;
  // Σ_i er_i (dKᴿ_i·k_i), this warp's part (after phase B; slots red[4 CHUNK + warp], past the dβ
  // partials, which every row has read before the phase-B barriers).
  auto er_dkk_part = [&] {
    float x = (tk == 0 && live) ? er * dkk : 0.f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) x += __shfl_xor_sync(0xffffffffu, x, o);
    if (lane == 0) red[4 * CHUNK + warp] = x;
  };
  __syncthreads();  // Kb, Qb
  // Phase A (fragment layout): this warp's token tile × chunk columns 8 (2gq + n) + [0, 8).
  {
    float sqk[2][4], skk[2][4];
    zero_frags(sqk);
    zero_frags(skk);
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) {
      u32 aq[4];
      a_frag<V3>(aq, Qb, KP, 16 * mt, 16 * kk, lane);
      u32 ak[4];
      a_frag<V3>(ak, Kb, KP, 16 * mt, 16 * kk, lane);
      mma2_tok_pair<V3>(sqk, skk, aq, ak, Kb, KP, gq, kk, lane);
    }
    float dblp[2] = {0.f, 0.f};
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int ri = r0 + 8 * hf;
      const float gi = gam[ri], bri = bet[ri];
#pragma unroll
      for (int n = 0; n < 2; ++n) {
        float dap[2], dlp[2], gvs[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int j = 8 * (2 * gq + n) + cq + e;
          const float a = faa[n][2 * hf + e], l = -fal[n][2 * hf + e];
          float gv = 0.f, ap = 0.f, lp = 0.f;
          if (j <= ri) {
            const float dec = exp_ftz(gi - gam[j]);
            ap = a * dec;
            gv = a * sqk[n][2 * hf + e] * dec;
            if (j < ri) {
              lp = l * bri * dec;
              gv += l * bri * skk[n][2 * hf + e] * dec;
              dblp[hf] += l * skk[n][2 * hf + e] * dec;
            }
          }
          dap[e] = ap;
          dlp[e] = lp;
          gvs[e] = gv;
          if constexpr (!QSW) Gs[g_at(ri, j)] = gv;
          Pt[j * CP + ri] = IO::from_f(ap);
          if (j < ri) {
            Ml[ri * CP + j] = IO::from_f(lp);
            Ml[j * CP + ri] = IO::from_f(lp);
          } else if (j == ri) {
            Ml[ri * CP + j] = IO::from_f(0.f);
          }
        }
        *reinterpret_cast<u32*>(&Pa[ri * CP + 8 * (2 * gq + n) + cq]) = Io<T>::pack(dap[0], dap[1]);
        if constexpr (QSW)
          *reinterpret_cast<float2*>(&Gs[g_at(ri, 8 * (2 * gq + n) + cq)]) = make_float2(gvs[0], gvs[1]);
      }
    }
    // The L part of dβ: the row's 16 columns of this warp (4 lanes), then the 4 column groups.
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      dblp[hf] += __shfl_xor_sync(0xffffffffu, dblp[hf], 1);
      dblp[hf] += __shfl_xor_sync(0xffffffffu, dblp[hf], 2);
    }
    if ((lane & 3) == 0) {
      red[gq * CHUNK + r0] = dblp[0];
      red[gq * CHUNK + r0 + 8] = dblp[1];
    }
  }
  __syncthreads();  // Pa, Pt, Ml, G, red
  float gsum = 0.f;
#pragma unroll
  for (int m = 0; m < 8; ++m) {
    const int j = tk + 8 * m;
    gsum += Gs[g_at(i, j)] - Gs[g_at(j, i)];
  }
  const float dbl_i = ((red[i] + red[CHUNK + i]) + red[2 * CHUNK + i]) + red[3 * CHUNK + i];
  // dΓ_i = eg β (dE·k) + eg (dQ⁺·q) − er (dKᴿ·k) + Σ_j G_ij − Σ_j G_ji (V5: with the phase-B
  // result stores, so that their barrier publishes it and the one-warp cumsum needs no other;
  // the same expressions next to each other as in REV < 5, whose FMA contraction they keep).
  auto dgam_row = [&] {
#pragma unroll
    for (int o = 4; o > 0; o >>= 1) gsum += __shfl_xor_sync(0xffffffffu, gsum, o);
    if (tk == 0) dgam[i] = live ? eg * bi * dek + eg * dqq - er * dkk + gsum : 0.f;
  };
  // Phase B (fragment layout): this warp's token tile × key tiles gq·NQ + [0, NQ).
  constexpr int NQ = K / 32;
  float bq[NQ][4], bk[NQ][4];
  zero_frags(bq);
  zero_frags(bk);
#pragma unroll
  for (int kk = 0; kk < CHUNK / 16; ++kk) {
    u32 apa[4];
    a_frag<V3>(apa, Pa, CP, 16 * mt, 16 * kk, lane);
    u32 apt[4];
    a_frag<V3>(apt, Pt, CP, 16 * mt, 16 * kk, lane);
    u32 aml[4];
    a_frag<V3>(aml, Ml, CP, 16 * mt, 16 * kk, lane);
    // B[k = j][n = d] = K̂[j][d], Q̂[j][d] ([k][n]: ldmatrix.trans, two key tiles each).
#pragma unroll
    for (int np = 0; np < NQ / 2; ++np) {
      const int kc = 16 * (gq * (NQ / 2) + np) + bcol;
      u32 rk4[4], rq4[4];
      ldsm_x4_t(rk4, &Kb[(16 * kk + lrow) * KP + kc]);
      ldsm_x4_t(rq4, &Qb[(16 * kk + lrow) * KP + kc]);
      Io<T>::mma(bq[2 * np], apa, rk4);
      Io<T>::mma(bq[2 * np + 1], apa, rk4 + 2);
      Io<T>::mma(bk[2 * np], apt, rq4);
      Io<T>::mma(bk[2 * np + 1], apt, rq4 + 2);
      Io<T>::mma(bk[2 * np], aml, rk4);
      Io<T>::mma(bk[2 * np + 1], aml, rk4 + 2);
    }
  }
  __syncthreads();  // every operand read: the region takes the fp32 results
  // V3: row r0 + 8 hf, column cc = 8 (gq NQ + n) + cq at cc ^ tok_swz(r0) (the swizzle reads row
  // bit 1, which 8 hf leaves alone, and flips column bit 3, which is n's low bit: gq NQ is even):
  // cc + s for even n, cc − s for odd n. Two row bases, then constant offsets (session 42).
  const int rs = tok_swz<SWZ>(r0), rb = r0 * KF + 8 * gq * NQ + cq;
#pragma unroll
  for (int hf = 0; hf < 2; ++hf) {
    const int r = r0 + 8 * hf;
#pragma unroll
    for (int n = 0; n < NQ; ++n) {
      const int cc = 8 * (gq * NQ + n) + cq;
      if constexpr (V3) {
        static_assert(NQ % 2 == 0, "gq NQ even: column bit 3 is n's low bit");
        const int rc = (n & 1 ? rb - rs : rb + rs) + 8 * hf * KF + 8 * n;
        *reinterpret_cast<float2*>(&Rq[rc]) = make_float2(bq[n][2 * hf], bq[n][2 * hf + 1]);
        *reinterpret_cast<float2*>(&Rk[rc]) = make_float2(bk[n][2 * hf], bk[n][2 * hf + 1]);
      } else {  // KF is odd: scalar stores
        Rq[r * KF + cc] = bq[n][2 * hf];
        Rq[r * KF + cc + 1] = bq[n][2 * hf + 1];
        Rk[r * KF + cc] = bk[n][2 * hf];
        Rk[r * KF + cc + 1] = bk[n][2 * hf + 1];
      }
    }
  }
  if constexpr (V5) {
    dgam_row();
    er_dkk_part();
  }
  __syncthreads();
  // V3: column 2 tk + 16 mp + e at (2 tk ^ tok_swz(ti)) + 16 mp + e (the swizzle flips only column
  // bit 3, which 16 mp leaves alone): one row base, then constant offsets (session 42).
  const int rb3 = ti * KF + ((2 * tk) ^ tok_swz<SWZ>(ti));
#pragma unroll
  for (int m = 0; m < KM; ++m) {
    const int c = V3 ? rb3 + 16 * (m >> 1) + (m & 1) : ti * KF + tk + 8 * m;
    dq[m] += Rq[c];
    dk[m] += Rk[c];
  }
  if constexpr (!V5) dgam_row();
  // dβ_i.
  const float dbv_i = V2 && V == 128 ? dbv[i] + dbv[CHUNK + i] : dbv[i];
  const float dbeta_i = eg * dek + dbv_i + dbl_i;
  // Σ_i er_i (dKᴿ_i·k_i) goes to the last row, with e^{Γ_last} dD (fixed order as for dD).
  if constexpr (!V5) {
    er_dkk_part();
    __syncthreads();
  }
  if (V2 && warp == 0) {
    // The same on one warp: two tokens per lane, a suffix scan over the lanes (fixed shuffle
    // order); rows past len hold 0 and leave the sums of the live rows unchanged.
    static_assert(CHUNK == 64 && NWARPS <= 32, "warp scan layout");
    float sk = lane < NWARPS ? red[4 * CHUNK + lane] : 0.f;
#pragma unroll
    for (int o = 16; o > 0; o >>= 1) sk += __shfl_xor_sync(0xffffffffu, sk, o);
    const int rl = 31 - lane;  // lane l holds tokens 2 (31 − l) and 2 (31 − l) + 1
    float a0 = dgam[2 * rl], a1 = dgam[2 * rl + 1];
    const float tail = sk + exp_ftz(gam[CHUNK - 1]) * dD;
    if (2 * rl == len - 1) a0 += tail;
    if (2 * rl + 1 == len - 1) a1 += tail;
    float s2 = a0 + a1;  // inclusive prefix over lanes = suffix over tokens
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      const float y = __shfl_up_sync(0xffffffffu, s2, o);
      if (lane >= o) s2 += y;
    }
    float after = __shfl_up_sync(0xffffffffu, s2, 1);
    if (lane == 0) after = 0.f;
    const float d1 = a1 + after;
    dgam[2 * rl + 1] = d1;
    dgam[2 * rl] = a0 + d1;
  } else if (!V2 && tid == 0) {
    float sk = 0.f;
#pragma unroll
    for (int w = 0; w < NWARPS; ++w) sk += red[4 * CHUNK + w];
    dgam[len - 1] += sk + exp_ftz(gam[CHUNK - 1]) * dD;
    float acc = 0.f;  // reverse cumulative sum: d log α_t = Σ_{i ≥ t} dΓ_i
    for (int t = len - 1; t >= 0; --t) {
      acc += dgam[t];
      dgam[t] = acc;
    }
  }
  __syncthreads();
  const long long t = t0 + i;
  // l2norm backward: dx = r (dy − y (y·dy)), y the normalised row, dy w.r.t. y; the normalised
  // rows again from the raw q, k tiles (the same fp32 arithmetic as above).
  {
    const float sc = p.scale, rq = qr[i], rk = kr[i];
    float kn[KM], qn[KM];
    float yq = 0.f, yk = 0.f;
    row_pairs<V3, T, KM>(kn, Kraw + ti * KRW, tk, live, rk, 1.f);
    // V3: the normalised q row itself (x · r), instead of (x · r · scale) / scale.
    row_pairs<V3, T, KM>(qn, Qraw + ti * KRW, tk, live, rq, V3 ? 1.f : sc);
#pragma unroll
    for (int m = 0; m < KM; ++m) {
      yq += (V3 ? qn[m] : qn[m] / sc) * (sc * dq[m]);
      yk += kn[m] * dk[m];
    }
#pragma unroll
    for (int o = 4; o > 0; o >>= 1) {
      yq += __shfl_xor_sync(0xffffffffu, yq, o);
      yk += __shfl_xor_sync(0xffffffffu, yk, o);
    }
    const bool l2 = p.flags & FLAG_L2NORM;
    const bool direct = p.flags & FLAG_BWD_DIRECT;
    const bool dq_direct = direct && p.h == HO, dk_direct = direct && p.hk == HO;
    float* dqo = bp.ws_dq + (static_cast<size_t>(t) * HO + h) * K;
    float* dko = bp.ws_dk + (static_cast<size_t>(t) * HO + h) * K;
    T* dqd = static_cast<T*>(bp.dq) + (static_cast<size_t>(t) * p.h + qh) * K;
    T* dkd = static_cast<T*>(bp.dk) + (static_cast<size_t>(t) * p.hk + kh) * K;
    float xqs[KM], xks[KM];
#pragma unroll
    for (int m = 0; m < KM; ++m) {
      const float dyq = sc * dq[m], dyk = dk[m];
      const float yqv = V3 ? qn[m] : qn[m] / sc, ykv = kn[m];
      xqs[m] = l2 ? qr[i] * (dyq - yqv * yq) : dyq;
      xks[m] = l2 ? kr[i] * (dyk - ykv * yk) : dyk;
    }
    if constexpr (V3) {
      // Pairs of adjacent columns: one 32-bit (io) or 64-bit (fp32) store each.
#pragma unroll
      for (int mp = 0; mp < KM / 2 && live; ++mp) {
        const int c = 2 * tk + 16 * mp;
        if (dq_direct) *reinterpret_cast<u32*>(&dqd[c]) = Io<T>::pack(xqs[2 * mp], xqs[2 * mp + 1]);
        else *reinterpret_cast<float2*>(&dqo[c]) = make_float2(xqs[2 * mp], xqs[2 * mp + 1]);
        if (dk_direct) *reinterpret_cast<u32*>(&dkd[c]) = Io<T>::pack(xks[2 * mp], xks[2 * mp + 1]);
        else *reinterpret_cast<float2*>(&dko[c]) = make_float2(xks[2 * mp], xks[2 * mp + 1]);
      }
    } else {
#pragma unroll
      for (int m = 0; m < KM && live; ++m) {
        if (dq_direct) dqd[tk + 8 * m] = IO::from_f(xqs[m]);
        else dqo[tk + 8 * m] = xqs[m];
        if (dk_direct) dkd[tk + 8 * m] = IO::from_f(xks[m]);
        else dko[tk + 8 * m] = xks[m];
      }
    }
  }
  if (tk != 0 || !live) return;
  // Gate and beta chain rules (§3.2), per (token, output head).
  if constexpr (V2) gate_beta_grads_raw(bp, t * HO + h, h, dgam[i], dbeta_i, graw_s[i], braw_s[i]);
  else gate_beta_grads(bp, t * HO + h, h, dgam[i], dbeta_i);
}

// The token kernels' body: one tile per block (REV < 6, grid chunk slots × HO), or (REV 6,
// gdn_bwd_tokens_tc6) a persistent block walking the live tiles t = blockIdx.x + j · gridDim.x
// (chunk t / HO, head t % HO) and prefetching each next tile's first copy group.
template <typename T, int K, int V, int REV = 0>
__device__ __forceinline__ void bwd_tokens_tc_body(const BwdParams& bp) {
  if constexpr (REV == 6) {
    const int HO = bp.f.ho;
    const int ntiles = bp.f.chunk_offsets[bp.f.n_seqs] * HO;
    bool ready = false;
    for (int t = blockIdx.x; t < ntiles; t += gridDim.x) {
      const int nt = t + static_cast<int>(gridDim.x);
      const bool more = nt < ntiles;
      bwd_tokens_tc_tile<T, K, V, REV>(bp, t / HO, t % HO, more ? nt / HO : -1, more ? nt % HO : 0, ready);
      ready = more;
      __syncthreads();  // the tile's last shared reads before the next tile's first writes
    }
  } else {
    bwd_tokens_tc_tile<T, K, V, REV>(bp, blockIdx.x, blockIdx.y);
  }
}

// ---------------------------------------------------------------------------------------
// Stage 6: head-group folds. grid (T, 3): y = 0 dQ, 1 dK, 2 dV; block = max(K, V) threads.
// ---------------------------------------------------------------------------------------
template <typename T, int K, int V>
__device__ __forceinline__ void bwd_fold_body(const BwdParams& bp) {
  const FwdParams& p = bp.f;
  const long long t = blockIdx.x;
  const int which = blockIdx.y, HO = p.ho;
  const int heads = which == 0 ? p.h : (which == 1 ? p.hk : p.hv);
  const int dim = which == 2 ? V : K;
  const float* src = which == 0 ? bp.ws_dq : (which == 1 ? bp.ws_dk : bp.ws_dv);
  T* dst = static_cast<T*>(which == 0 ? bp.dq : (which == 1 ? bp.dk : bp.dv));
  const int r = HO / heads;
  const int d = threadIdx.x;
  if (d >= dim) return;
  if ((p.flags & FLAG_BWD_DIRECT) && heads == HO) return;  // written by gdn_bwd_tokens_tc
  for (int hi = 0; hi < heads; ++hi) {
    float s = 0.f;
    for (int j = 0; j < r; ++j) s += src[(static_cast<size_t>(t) * HO + hi * r + j) * dim + d];
    dst[(static_cast<size_t>(t) * heads + hi) * dim + d] = Io<T>::from_f(s);
  }
}

// ---------------------------------------------------------------------------------------
// Stage 7: d_a_log[h] = Σ_t ws_pa[t, h], d_dt_bias[h] = Σ_t ws_pb[t, h] (fixed shape tree).
// ---------------------------------------------------------------------------------------
constexpr int PARAM_THREADS = 256;

// Dynamic shared memory: PARAM_SMEM_BYTES.
constexpr int PARAM_SMEM_BYTES = 2 * PARAM_THREADS * 4;

__device__ __forceinline__ void bwd_params_body(const BwdParams& bp) {
  extern __shared__ __align__(16) unsigned char smem[];
  float* ra = reinterpret_cast<float*>(smem);
  float* rb = ra + PARAM_THREADS;
  const FwdParams& p = bp.f;
  const int h = blockIdx.x, tid = threadIdx.x, HO = p.ho;
  float a = 0.f, b = 0.f;
  for (long long t = tid; t < bp.total_t; t += PARAM_THREADS) {
    a += bp.ws_pa[t * HO + h];
    b += bp.ws_pb[t * HO + h];
  }
  ra[tid] = a;
  rb[tid] = b;
  __syncthreads();
  for (int off = PARAM_THREADS / 2; off > 0; off >>= 1) {
    if (tid < off) {
      ra[tid] += ra[tid + off];
      rb[tid] += rb[tid + off];
    }
    __syncthreads();
  }
  if (tid == 0) {
    if (bp.d_a_log) store_any(bp.d_a_log, p.a_log_dtype, h, ra[0]);
    if (bp.d_dt_bias) store_any(bp.d_dt_bias, p.dt_bias_dtype, h, rb[0]);
  }
}

}  // namespace gdn

// The next token stage's tile layout (session 29, helper m1w29: M1 of bench/gdn_results.md's td29
// design, work in progress): its layout and the consumers' value products. No entry uses them yet.
#include "gdn_bwd_tw.cuh"
static_assert(gdn::TW_ROWS == gdn::CHUNK, "gdn_bwd_tw.cuh's tile rows are a chunk");
