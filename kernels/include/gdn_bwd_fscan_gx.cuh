// gdn_bwd_fscan_gx.cuh: the backward's forward-state replay with its whole chunk step on the
// warpgroup (session 25, helper fsx25; the entries gdn_bwd_fscan_gx{,3,4}_{bf16,f16}_k128,
// DNNPLAN_GDN_BWD_FSCAN=gx|gx3|gx4; the default replay by rule, gxr, since session 25). The replay of gdn_bwd_fscan_r4 (bwd_fscan_piece_body on fscan_chunks,
// gdn_bwd_chain.cuh): per chunk c, with X = Sᵀ (this block's 64 value rows × K keys),
//   S_c → ws_s (the state entering the chunk; fp32 or, FLAG_BWD_S_IO, the io dtype),
//   P = X Wᵀ;  Uᵀ = Ũᵀ − P (rounded to the io dtype);  X ← e^{Γ_last} X + Uᵀ Kᴿ,
// where fscan_r4's 4 warps each read all of W and Kᴿ by ldmatrix (the shared-memory pipe bound that
// session 24 removed from the forward's output scan). Here the block's 4 warps are one warpgroup
// (M = 64 value rows) and both products run as wgmma RS (A from registers, B read once per
// warpgroup from shared memory):
//   P = X Wᵀ          m64n64k16 × K/16, A = X rounded (x_a_frag), B = W [token][key] K-major in
//                     slim_wg_elem's 128-byte swizzle (the forward's P' = X kᵀ, slim_chunk_wg);
//   X += Uᵀ Kᴿ        m64n128k16 × 4 with tnspB, A = Uᵀ packed from P's accumulator (scan_u_frags:
//                     the per-warp m64n64 accumulator is mma.sync's C layout of its 16 rows),
//                     B = Kᴿ [token][key] MN-major in the same swizzle (the forward's state update
//                     on k, slim_chunk_tail_wg: SBO 1,024 B between 8-token groups, LBO 8,192 B
//                     between the 64-key atoms, a 16-token step at +2,048 B), accumulating into X.
// W and Kᴿ are staged by cp.async straight into the swizzle (round it: token 8 it + tid / 16,
// 16-byte chunk tid % 16: K = 128 keys = two 64-key atoms per token row, as the forward stages k),
// Ũᵀ in rows of CHUNK + 8 as fscan_chunks stages it (read into registers, ld32). STAGES-deep
// pipeline with one block barrier per chunk (fscan_chunks' ONEBAR: wait, proxy fence, barrier,
// then refill the stage the previous chunk used, while this chunk's P batch is in flight). The
// dynamic shared memory is 1024-byte aligned (checked: dnnp::trap_unless_swizzle_aligned), every
// swizzled tile at a multiple of 1,024 bytes from it.
// Numerics: the same io-rounded operands as fscan_r4 (X, Uᵀ, W, Kᴿ), fp32 accumulation in the
// tensor core's order over the same k16 steps (on the H200 every backward gradient hash equals
// fscan_r4's, uncut and at 8 pieces: bench/gdn_device_fsx25_run{1,2}.log; the fp64 tests are the
// bar). Uncut (P = 1, from the initial state) or per piece (P > 1, from ws_seed), grid
// (V / 64, HO, N·P), 128 threads: bwd_fscan_piece_body's setup.
#pragma once

#include "gdn_bwd_chain.cuh"
#include "gdn_bwd_dscan_gx.cuh"  // dscan_gx_tile_swizzled (the slim replay's T copy)
#include "gdn_fwd_slim.cuh"

namespace gdn {

// Stages of gdn_bwd_fscan_gx_* and one stage's bytes at K = 128 (FscanGxSmem; the host mirror:
// src/engines/gdn/params.rs, fscan_gx_smem_bytes).
constexpr int FSCAN_GX_STAGES = 2;
constexpr int FSCAN_GX_STAGE_BYTES = 41984;

// Shared memory of the gx replay, per stage: W and Kᴿ (CHUNK tokens × K keys each, slim_wg_elem<K>'s
// swizzle: K / 64 atoms of 8 KB), Ũᵀ (64 value rows × CHUNK tokens in rows of CHUNK + 8). Every
// offset a multiple of 1,024 bytes.
// RAW_K_SCALED (session 27): the k tile holds the raw k rows, and the chunk's cr row (CHUNK fp32
// scalars of the backward's scalar-form prep) follows Ũᵀ; the stage rounded up to 1,024 bytes.
template <int K, int STAGES, bool RAW_K_SCALED = false>
struct FscanGxSmem {
  static constexpr int CP = CHUNK + 8;
  static constexpr int VS = 64;  // value rows of the block (one warpgroup, 16 per warp)
  static constexpr size_t w_off = 0;
  static constexpr size_t k_off = w_off + static_cast<size_t>(CHUNK) * K * 2;
  static constexpr size_t u_off = k_off + static_cast<size_t>(CHUNK) * K * 2;
  static constexpr size_t s_off = u_off + static_cast<size_t>(VS) * CP * 2;  // cr (RAW_K_SCALED)
  static constexpr size_t stage = RAW_K_SCALED ? (s_off + CHUNK * 4 + 1023) / 1024 * 1024 : s_off;
  static constexpr size_t bytes = STAGES * stage;
};
// The host mirror of the scalar form's stage (src/engines/gdn/params.rs, fscan_gx_smem_bytes).
constexpr int FSCAN_GXSC_STAGE_BYTES = 43008;
static_assert(FscanGxSmem<128, 1, true>::stage == FSCAN_GXSC_STAGE_BYTES, "FSCAN_GXSC_STAGE_BYTES: update params.rs");
static_assert(FscanGxSmem<128, 1>::stage == FSCAN_GX_STAGE_BYTES, "FSCAN_GX_STAGE_BYTES: update params.rs");
static_assert(FscanGxSmem<128, 1>::k_off % 1024 == 0 && FscanGxSmem<128, 1>::u_off % 1024 == 0 &&
                  FscanGxSmem<128, 1>::stage % 1024 == 0,
              "the swizzle atoms 1024-byte aligned in every stage");

// STORE_U (session 27, helper tu27; the entries gdn_bwd_fscan_gx{,4}u_{bf16,f16}_k128): the replay also
// writes each chunk's Uᵀ = Ũᵀ − P as the io-dtype U tile [slot c·HO + h][64 tokens][V] (exactly the
// A fragments of its state update, so exactly the U that the token stage tc13 recomputes from W, Ũᵀ
// and S_c: the same io-rounded operands, the same k16 steps), into the second half of the ws_dr
// region (bwd_u_tiles, gdn_bwd.cuh: its first half holds tc13's io dR tiles, its fp32 size is unused on that
// path), for the token stage tc16 (REV 16), which loads it instead of recomputing it. Staging: each
// warp writes its 16 value rows × 64 tokens by four stmatrix.x4.trans into its own 16 rows of this
// chunk's Ũᵀ tile (already read into registers; only this warp reads those rows, and the stage is
// refilled only after the next chunk's block barrier), 64 token rows of 32 bytes, the two 16-byte
// halves swapped on rows with bit 2 set (conflict-free stmatrix rows and 16-byte reads); then each
// lane stores four 16-byte pieces (whole 32-byte sectors), while the state update's wgmma runs.
#if !defined(GDN_HOST_EMU) || defined(GDN_WGMMA_EMU)  // the CPU emulation's wgmma: bench/gdn_wgmma_emu.h
// The chunk loop of the gx replay over chunks [c_begin, c_end) of one (sequence, head), from the
// state fragments x (this thread's rows vr, vr + 8 of the block's 64; updated in place). STORE_U:
// each chunk's U tile to ws_u (bwd_u_tiles; unused otherwise; with RAW_K_SCALED the unscaled Uᵀ).
// RAW_K_SCALED (session 27, the backward's scalar form: gdn_bwd_fscan_gx{,4}sc): the state update
// reads the raw k rows of the graph's K (head kh, rows past the chunk's tokens zero-filled; the
// sequence's tokens [cs, ce), chunk c_first holding cs) instead of Kᴿ, and the chunk's cr =
// kr e^{Γ_last−Γ} (row 3 of the prep's scalars in ws_kr) scales Uᵀ's token columns before the
// rounding: X += (Uᵀ diag(cr)) k (= Uᵀ Kᴿ in exact arithmetic; other roundings).
template <typename T, int K, int V, int STAGES, bool STORE_U = false, bool RAW_K_SCALED = false>
__device__ __forceinline__ void fscan_gx_chunks(const FwdParams& p, float (&x)[K / 8][4], int h, int c_begin,
                                                int c_end, int vs0, float* ws_s, T* ws_u = nullptr, long long cs = 0,
                                                long long ce = 0, int c_first = 0) {
  static_assert(K == 128 && CHUNK == 64, "two 64-key atoms per token row, one 64-token atom per tile");
  static_assert(STAGES >= 2, "a stage in use and one being filled (one barrier per chunk)");
  using S = FscanGxSmem<K, STAGES, RAW_K_SCALED>;
  constexpr int NT = 128;  // one warpgroup
  constexpr int CP = S::CP, VS = S::VS;
  extern __shared__ __align__(16) unsigned char smem[];
  dnnp::trap_unless_swizzle_aligned(smem);
  const int HO = p.ho;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int vr = vs0 + 16 * warp + (lane >> 2);  // this thread's rows: vr and vr + 8
  const int cq = 2 * (lane & 3);
  const T* wg = static_cast<const T*>(p.ws_w);
  const T* kg = static_cast<const T*>(p.ws_kr);
  const T* ug = static_cast<const T*>(p.ws_ut);
  // W, Kᴿ rows of K keys (16 chunks of 16 B): round it covers tokens 8 it .. 8 it + 7.
  constexpr int KV = K / 8, QRS = NT / KV, QIT = CHUNK / QRS;
  static_assert(NT % KV == 0 && CHUNK % QRS == 0, "whole rounds of whole rows");
  const int qt0 = tid / KV, qc = 8 * (tid % KV);
  const int kh = p.hk == HO ? h : h / (HO / p.hk);
  auto issue = [&](int c, int st) {
    unsigned char* base = smem + st * S::stage;
    const size_t ch = static_cast<size_t>(c) * HO + h;
    const T* ws = wg + ch * CHUNK * K + static_cast<size_t>(qt0) * K + qc;
    if constexpr (RAW_K_SCALED) {
      const long long t0 = cs + static_cast<long long>(c - c_first) * CHUNK;
      const int len = static_cast<int>(min_ll(static_cast<long long>(CHUNK), ce - t0));
      const T* ks = static_cast<const T*>(p.k) + ((t0 + qt0) * p.hk + kh) * K + qc;
#pragma unroll
      for (int it = 0; it < QIT; ++it) {
        const int tok = qt0 + QRS * it;
        cp_async16(reinterpret_cast<T*>(base + S::w_off) + slim_wg_elem<K>(tok, qc), ws + static_cast<size_t>(QRS) * K * it);
        cp_async16_zfill(reinterpret_cast<T*>(base + S::k_off) + slim_wg_elem<K>(tok, qc),
                         ks + static_cast<size_t>(QRS) * it * p.hk * K, tok < len);
      }
      cp_async16_if(reinterpret_cast<float*>(base + S::s_off) + 4 * tid,
                    static_cast<const float*>(p.ws_kr) + ch * 4 * CHUNK + 3 * CHUNK + 4 * tid, tid < CHUNK / 4);
    } else {
      const T* ks = kg + ch * CHUNK * K + static_cast<size_t>(qt0) * K + qc;
#pragma unroll
      for (int it = 0; it < QIT; ++it) {
        const int tok = qt0 + QRS * it;
        cp_async16(reinterpret_cast<T*>(base + S::w_off) + slim_wg_elem<K>(tok, qc), ws + static_cast<size_t>(QRS) * K * it);
        cp_async16(reinterpret_cast<T*>(base + S::k_off) + slim_wg_elem<K>(tok, qc), ks + static_cast<size_t>(QRS) * K * it);
      }
    }
    tile_async_fixed<T, CHUNK, VS, CHUNK, NT>(reinterpret_cast<T*>(base + S::u_off), ug + (ch * V + vs0) * CHUNK, tid);
  };
#pragma unroll
  for (int sidx = 0; sidx < STAGES - 1; ++sidx) {
    if (c_begin + sidx < c_end) issue(c_begin + sidx, sidx);
    cp_async_commit();
  }
  float gl_next = c_begin < c_end ? p.ws_gl[static_cast<size_t>(c_begin) * HO + h] : 0.f;
  constexpr uint32_t ATOM = 64 * CHUNK * 2;  // a swizzle atom: 64 keys x CHUNK tokens
  for (int c = c_begin; c < c_end; ++c) {
    const int st = (c - c_begin) % STAGES;
    const float gl = gl_next;
    if (c + 1 < c_end) gl_next = p.ws_gl[static_cast<size_t>(c + 1) * HO + h];
    cp_async_wait<STAGES - 2>();
    dnnp::fence_proxy_async_shared();  // this thread's landed copies, visible to wgmma
    __syncthreads();                   // ... everyone's; every warp past the previous chunk
    unsigned char* base = smem + st * S::stage;
    const uint32_t wb = static_cast<uint32_t>(__cvta_generic_to_shared(base + S::w_off));
    const uint32_t kb = static_cast<uint32_t>(__cvta_generic_to_shared(base + S::k_off));
    const T* Us = reinterpret_cast<const T*>(base + S::u_off);

    // P = X Wᵀ: one batch of K / 16 wgmma (A: X rounded to the io dtype).
    float pacc[8][4];
    u32 a[K / 16][4];
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) x_a_frag<T>(a[kk], x, kk);
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) pacc[nt][e] = 0.f;
    dnnp::wgmma_fence_frags(pacc);
    dnnp::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk)
      SlimWgN<T>::template mma<64, 0>(&pacc[0][0], a[kk],
                                      dnnp::wgmma_desc_at<true>(wb, ATOM * (kk >> 2) + 32 * (kk & 3), 16, 1024, 1));
    dnnp::wgmma_commit();
    // While P is in flight: S_c out, X scaled, the next stage's copies (into the stage chunk c − 1 used:
    // every warp is past it), this chunk's Ũᵀ into registers.
    bwd_store_state_frags<T, K, K>(ws_s, (static_cast<size_t>(c) * HO + h) * V * K, x, vr, cq, p.flags & FLAG_BWD_S_IO);
    const float decay = __expf(gl);  // X ← e^{Γ_last} X (the state update's scaling), S_c out
    scale_frags(x, decay);
    if (c + STAGES - 1 < c_end) issue(c + STAGES - 1, (c - c_begin + STAGES - 1) % STAGES);
    cp_async_commit();
    const int ur = 16 * warp + (lane >> 2);  // row of Ũᵀ within the slice
    u32 uraw[8][2];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      uraw[nt][0] = ld32(&Us[ur * CP + 8 * nt + cq]);
      uraw[nt][1] = ld32(&Us[(ur + 8) * CP + 8 * nt + cq]);
    }
    float crv[8][2];  // RAW_K_SCALED: cr of this thread's token columns 8 nt + cq, + 1
    if constexpr (RAW_K_SCALED) {
      const float* Ss = reinterpret_cast<const float*>(base + S::s_off);
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        const float2 v = *reinterpret_cast<const float2*>(&Ss[8 * nt + cq]);
        crv[nt][0] = v.x;
        crv[nt][1] = v.y;
      }
    }
    dnnp::wgmma_wait<0>();
    dnnp::wgmma_fence_frags(pacc);
    // Uᵀ = Ũᵀ − P as the A fragments of the 4 token steps (RAW_K_SCALED: times cr per token).
    u32 ua[4][4];
    // RAW_K_SCALED: Uᵀ diag(cr), rounded once (with STORE_U after the unscaled Uᵀ is staged).
    scan_u_frags<T, 8, RAW_K_SCALED && !STORE_U>(ua, uraw, pacc, crv);
    // STORE_U: this warp's 16 rows of the Ũᵀ tile (read above) take its Uᵀ, transposed: token row
    // tok at 32 tok bytes, values 8 hf .. at 16 (hf ^ ((tok >> 2) & 1)) within it.
    T* ust = const_cast<T*>(Us) + 16 * warp * CP;
    if constexpr (STORE_U) {
      __syncwarp();  // every lane's Ũᵀ reads of these rows done
      const int mrow = 8 * (lane >> 4) + (lane & 7), mhf = (lane >> 3) & 1;  // the row lane l addresses
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int tok = 16 * j + mrow;
        stsm_x4_t(ust + 16 * tok + 8 * (mhf ^ ((tok >> 2) & 1)), ua[j]);
      }
    }
    if constexpr (RAW_K_SCALED && STORE_U) scan_u_frags<T, 8, true>(ua, uraw, pacc, crv);  // the update's A scaled
    // X += Uᵀ Kᴿ (X scaled above): one batch of 4 wgmma m64n128k16 (B = Kᴿ MN-major).
    dnnp::wgmma_fence_frags(x);
    dnnp::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      SlimWgN<T>::template mma<128, 1>(&x[0][0], ua[kk], dnnp::wgmma_desc_at<true>(kb, 2048 * kk, 8192, 1024, 1));
    dnnp::wgmma_commit();
    if constexpr (STORE_U) {
      // While the update runs: token rows (lane >> 1) + 16 i, values vs0 + 16 warp + 8 (lane & 1).
      __syncwarp();
      const int tok = lane >> 1, hf = lane & 1;
      T* dst = ws_u + ((static_cast<size_t>(c) * HO + h) * CHUNK + tok) * V + vs0 + 16 * warp + 8 * hf;
#pragma unroll
      for (int i = 0; i < 4; ++i) {
        const int t = tok + 16 * i;
        *reinterpret_cast<uint4*>(dst + static_cast<size_t>(16) * i * V) =
            *reinterpret_cast<const uint4*>(ust + 16 * t + 8 * (hf ^ ((t >> 2) & 1)));
      }
    }
    dnnp::wgmma_wait<0>();
    dnnp::wgmma_fence_frags(x);
  }
  cp_async_wait<0>();
}

// SLIM (session 28, helper sb28; the entries gdn_bwd_fscan_gx{,4}sl_{bf16,f16}_k128, the backward's
// slim form BwdPrepForm::Slim): the storing scalar-form replay (gx{,4}scu) without W and Ũᵀ. Per chunk
// it rebuilds Uᵀ from the raw k, v rows, T and the prep's four scalars by the forward slim scan's
// chunk step without its output (slim_chunk_wg, OUT = false, TAIL_WG; gdn_fwd_slim.cuh, top comment):
//   P' = X kᵀ;  Z = vᵀ diag(β) − P' diag(ck) (rounded to io);  Uᵀ = Z Tᵀ;  X ← e^{Γ_last} X + (Uᵀ diag(cr)) k,
// storing S_c (as the gx replay does, while the P' batch is in flight: slim_chunk_wg's PRE, with the
// refill of the stage chunk c − 1 used) and the unscaled io Uᵀ as the U tile tc16 reads (bwd_u_tiles,
// the same layout as STORE_U's; slim_chunk_tail_wg's UOUT hook, while the state update's batch runs):
// each warp writes its 16 value rows × 64 tokens by four stmatrix.x4.trans into its own 16 columns
// of the stage's v tile (rows of VP = 72: conflict-free; only this warp read those columns, for its
// Z, and the stage is refilled only after the next chunk's block barrier), then each lane stores
// four 16-byte rows. T arrives as full [64][64] io rows (ws_t, the rows the reverse scan reads; the
// prep writes zeros above the unit diagonal, so the full N = 64 products add exact zeros), copied
// whole into slim_wg_elem's swizzle (dscan_gx_tile_swizzled: 8 KB, 3 KB more than the forward's
// packed blocks, but no second layout in the prep). Not bitwise gx{,4}scu (Uᵀ rounds Z, then × T):
// validated against the fp64 reference. Shared memory per stage (FscanSlSmem): k (the raw rows,
// swizzled, zero past the chunk's tokens), the block's 64 value columns of v (rows of VP, zero
// past), T (swizzled), the scalars: 34,816 B (gx's 41,984 B). Uncut (P = 1) or, session 29 (helper
// ps29), per piece from the chain's seeds (the same entries on the grid (V / 64, HO, N·P), as
// fscan_gx serves both): the slim piece chain's seeded replay.
// SUMMARY (session 29, helper ps29; gdn_bwd_psum_sl_{bf16,f16}_k128, bwd_psum_sl_body): the same
// loop without its outputs (no S_c, no U tile), the piece chain's slim summaries: H_j from a zero
// seed with v, the transitions M_j / Mᵀ_j from the identity over key rows with v = 0 (with_v =
// false: Z = −P' diag(ck), no v copies) — the forward slim summary's algebra (slimsum_gx,
// gdn_fwd_slim.cuh) on the backward prep's full T rows and scalars.
template <int K, int STAGES>
struct FscanSlSmem {
  static constexpr int VS = 64, VP = VS + 8;
  static constexpr size_t k_off = 0;
  static constexpr size_t v_off = k_off + static_cast<size_t>(CHUNK) * K * 2;
  static constexpr size_t t_off = (v_off + static_cast<size_t>(CHUNK) * VP * 2 + 1023) / 1024 * 1024;
  static constexpr size_t s_off = t_off + static_cast<size_t>(CHUNK) * CHUNK * 2;
  static constexpr size_t stage = (s_off + SLIM_SCALARS * CHUNK * 4 + 1023) / 1024 * 1024;
  static constexpr size_t bytes = STAGES * stage;
};
// The host mirror (src/engines/gdn/params.rs, fscan_gxsl_smem_bytes).
constexpr int FSCAN_GXSL_STAGE_BYTES = 34816;
// gdn_bwd_psum_sl's stages and blocks per SM (the host mirror: params.rs, PSUM_SL_STAGES,
// PSUM_SL_MIN_BLOCKS).
constexpr int PSUM_SL_STAGES = 2;
constexpr int PSUM_SL_MIN_BLOCKS = 3;
static_assert(FscanSlSmem<128, 1>::stage == FSCAN_GXSL_STAGE_BYTES, "FSCAN_GXSL_STAGE_BYTES: update params.rs");
static_assert(FscanSlSmem<128, 1>::k_off % 1024 == 0 && FscanSlSmem<128, 1>::t_off % 1024 == 0,
              "the swizzle atoms 1024-byte aligned in every stage");

#if !defined(GDN_HOST_EMU) || defined(GDN_WGMMA_EMU)  // the CPU emulation's wgmma: bench/gdn_wgmma_emu.h
// The slim replay's chunk loop over chunks [c_begin, c_end) of one (sequence, head) (tokens
// [cs, ce), chunk cb holding cs), from the state fragments x (updated in place): S_c to ws_s, the
// U tiles to ws_u, T from ws_t (BwdParams::ws_t). chunk_pipeline_in_body (one block barrier per chunk, the stage fenced for the
// async proxy); chunk c + STAGES − 1's copies issued whole in the P' batch's shadow. SUMMARY: no
// outputs (ws_s, ws_u unused), v read only with with_v (else Z = −P' diag(ck)).
template <typename T, int K, int V, int STAGES, bool SUMMARY = false>
__device__ __forceinline__ void fscan_sl_chunks(const FwdParams& p, float (&x)[K / 8][4], int h, int c_begin, int c_end,
                                                int vs0, float* ws_s, T* ws_u, const T* ws_t, long long cs, long long ce,
                                                int cb, bool with_v = true) {
  static_assert(K == 128 && V == 128 && CHUNK == 64, "the slim forward's step: K = V = 128");
  using S = FscanSlSmem<K, STAGES>;
  constexpr int NT = 128, VS = S::VS, VP = S::VP;
  extern __shared__ __align__(16) unsigned char smem[];
  dnnp::trap_unless_swizzle_aligned(smem);
  const int HO = p.ho;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int vr = vs0 + 16 * warp + (lane >> 2);  // this thread's rows: vr and vr + 8
  const int cq = 2 * (lane & 3);
  const int kh = h / (HO / p.hk), vh = h / (HO / p.hv);
  const T* kg = static_cast<const T*>(p.k);
  const T* vg = static_cast<const T*>(p.v);
  // k rounds: tokens 8 it + tid / 16, 16-byte chunk tid % 16 (the forward's copy_qk); v rounds:
  // tokens 16 it + tid / 8, value columns vs0 + 8 (tid % 8) (its copy_v); T whole; the scalars.
  constexpr int KIT = CHUNK * (K / 8) / NT, VIT = CHUNK * (VS / 8) / NT;
  auto issue = [&](int c, int st) {
    const SlimChunkAt d = slim_chunk_at(c, cb, cs, ce, HO, h);
    unsigned char* base = smem + st * S::stage;
#pragma unroll
    for (int it = 0; it < KIT; ++it) {
      const int tok = 8 * it + (tid >> 4), kd = 8 * (tid & 15);
      cp_async16_zfill(reinterpret_cast<T*>(base + S::k_off) + slim_wg_elem<K>(tok, kd),
                       kg + ((d.t0 + tok) * p.hk + kh) * K + kd, tok < d.len);
    }
    if (!SUMMARY || with_v) {
#pragma unroll
      for (int it = 0; it < VIT; ++it) {
        const int tok = 16 * it + (tid >> 3), vc = 8 * (tid & 7);
        cp_async16_zfill(reinterpret_cast<T*>(base + S::v_off) + tok * VP + vc,
                         vg + ((d.t0 + tok) * p.hv + vh) * V + vs0 + vc, tok < d.len);
      }
    }
    dscan_gx_tile_swizzled<T, CHUNK, NT>(reinterpret_cast<T*>(base + S::t_off),
                                         ws_t + d.ch * CHUNK * CHUNK, tid);
    slim_scalars_piece(reinterpret_cast<float*>(base + S::s_off),
                       static_cast<const float*>(p.ws_kr) + d.ch * SLIM_SCALARS * CHUNK, tid, true);
  };
  chunk_pipeline_in_body<STAGES, true>(p.ws_gl, HO, h, c_begin, c_end, issue, [&](int c, int st, float gl, int nst, bool live) {
    unsigned char* base = smem + st * S::stage;
    const T* Ks = reinterpret_cast<const T*>(base + S::k_off);
    T* Vs = reinterpret_cast<T*>(base + S::v_off);
    const T* Ts = reinterpret_cast<const T*>(base + S::t_off);
    const float* Sc = reinterpret_cast<const float*>(base + S::s_off);
    const size_t ch = static_cast<size_t>(c) * HO + h;
    // Every descriptor as offsets (session 41, H200, bitwise: together with the other backward
    // kernels' offsets, the stages before the pair −1.3..−2.5 %).
    constexpr SlimDescForm kDesc = SlimDescForm::Offsets;
    // While P' is in flight: S_c out, then chunk c + STAGES − 1's copies into stage nst.
    auto pre = [&](int kk) {
      if (kk != 0) return;
      if constexpr (!SUMMARY) bwd_store_state_frags<T, K, K>(ws_s, ch * V * K, x, vr, cq, p.flags & FLAG_BWD_S_IO);
      if (live) issue(c + STAGES - 1, nst);
    };
    if constexpr (SUMMARY) {
      if (with_v)
        slim_chunk_wg<T, K, V, VP, false, true, true, kDesc>(x, nullptr, Ks, Vs, Ts, nullptr, Sc, nullptr, p, 0, 0, h, vs0,
                                                      16 * warp, gl, lane, pre);
      else
        slim_chunk_wg<T, K, V, VP, false, false, true, kDesc>(x, nullptr, Ks, Vs, Ts, nullptr, Sc, nullptr, p, 0, 0, h, vs0,
                                                       16 * warp, gl, lane, pre);
      return;
    }
    // The io Uᵀ (this warp's 16 value rows) through its own v columns to the U tile [token][V].
    auto uout = [&](const u32 (&ua)[4][4]) {
      slim_store_u_tile<T, VP, V>(Vs + 16 * warp, ws_u + ch * CHUNK * V + vs0 + 16 * warp, ua, lane);
    };
    slim_chunk_wg<T, K, V, VP, false, true, true, kDesc>(x, nullptr, Ks, Vs, Ts, nullptr, Sc, nullptr, p, 0, 0, h, vs0,
                                                  16 * warp, gl, lane, pre, SlimNoHook{}, SlimNoHook{}, uout);
  });
}
#endif

// The gx replay's block: bwd_fscan_piece_body's setup (piece j = z % P of sequence b = z / P, from
// its seed or, P = 1, the initial state) on fscan_gx_chunks. VS = 64 value rows per block.
// RAW_K_SCALED: the scalar form's uncut replay (P = 1 only). SLIM (with STORE_U, RAW_K_SCALED): the
// slim form's (fscan_sl_chunks).
template <typename T, int K, int V, int STAGES, bool STORE_U = false, bool RAW_K_SCALED = false, bool SLIM = false>
__device__ __forceinline__ void bwd_fscan_gx_body(const BwdChainParams& cp) {
  static_assert(!SLIM || (STORE_U && RAW_K_SCALED), "the slim replay stores U and reads raw k");
  constexpr int VS = 64;
  const FwdParams& p = cp.b.f;
  const int P = cp.pieces;
  const int h = blockIdx.y;
  int b, j;
  piece_of_block(P, true, 0, b, j);
  // The scalar / slim forms' uncut replay (P = 1): the longest-first order (session 34, lp34).
  if constexpr (RAW_K_SCALED) {
    if (P == 1) b = seq_of_block(p, b);
  }
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int HO = p.ho;
  const int vr = blockIdx.x * VS + 16 * warp + (lane >> 2);
  const int cq = 2 * (lane & 3);
  int cb, c_begin, c_end;
  piece_range(p, b, j, P, cb, c_begin, c_end);
  float x[K / 8][4];
  if (P == 1) {
    const int row = state_row(p, b);  // b ≥ 0: the backward binds no pool
    load_state_frags<K, K>(x, p.initial_state, p.state_dtype, (static_cast<size_t>(row) * HO + h) * V * K, vr, cq);
  } else {
    load_seed_frags<K, K>(x, seed_slot<V, K>(cp.ws_seed, P, HO, b, j, h), vr, cq);
  }
  // The sequence's token range only where the raw k rows are read (RAW_K_SCALED).
  if constexpr (SLIM) {
    fscan_sl_chunks<T, K, V, STAGES>(p, x, h, c_begin, c_end, blockIdx.x * VS, cp.b.ws_s, bwd_u_tiles<T, V>(cp.b),
                                     static_cast<const T*>(cp.b.ws_t), load_cu(p, b), load_cu(p, b + 1), cb);
    return;
  }
  fscan_gx_chunks<T, K, V, STAGES, STORE_U, RAW_K_SCALED>(
      p, x, h, c_begin, c_end, blockIdx.x * VS, cp.b.ws_s, STORE_U ? bwd_u_tiles<T, V>(cp.b) : nullptr,
      RAW_K_SCALED ? load_cu(p, b) : 0, RAW_K_SCALED ? load_cu(p, b + 1) : 0, RAW_K_SCALED ? cb : 0);
}

// gdn_bwd_psum_sl (session 29, helper ps29): the piece chain's summaries in the slim form, grid
// (V / 64, HO, N·(2P−1)) as gdn_bwd_psum: bwd_psum_body's blocks (H_j of pieces 0..P−2 from a zero
// seed, every piece's transition from the identity over key rows, K = V) on fscan_sl_chunks'
// SUMMARY loop (raw k, v, the prep's full T rows and scalars: the slim prep prep15sl's outputs),
// stored by bwd_psum_store (ws_h, ws_m, ws_mt as gdn_bwd_psum's). Numerics: the forward slim
// summary's per-chunk roundings (not bitwise psum1: other roundings; the chains are fp32).
template <typename T, int K, int V, int STAGES, bool MT_ONLY = false>
__device__ __forceinline__ void bwd_psum_sl_body(const BwdChainParams& cp) {
  constexpr int VS = 64;
  const FwdParams& p = cp.b.f;
  const int P = cp.pieces;
  const int h = blockIdx.y;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  // MT_ONLY (session 38: gdn_bwd_psumt_sl, the saved replay on pieces): the blocks of Mᵀ_j, j ≥ 1,
  // only (as bwd_psum_body's MT_ONLY; the same per-block work, so the same Mᵀ_j).
  const int zs = MT_ONLY ? P - 1 : 2 * P - 1;  // blocks per sequence
  const int b = blockIdx.z / zs, r = blockIdx.z % zs + (MT_ONLY ? P : 0);
  const bool is_m = r >= P - 1;
  const int j = is_m ? r - (P - 1) : r;
  const int vs0 = blockIdx.x * VS;
  const int vr = vs0 + 16 * warp + (lane >> 2);
  const int cq = 2 * (lane & 3);
  int cb, c_begin, c_end;
  piece_range(p, b, j, P, cb, c_begin, c_end);
  float x[K / 8][4];
  identity_frags<K>(x, is_m, vr, cq);
  fscan_sl_chunks<T, K, V, STAGES, true>(p, x, h, c_begin, c_end, vs0, nullptr, nullptr,
                                         static_cast<const T*>(cp.b.ws_t), load_cu(p, b), load_cu(p, b + 1), cb,
                                         !is_m);
  bwd_psum_store<K, V, MT_ONLY>(cp, x, b, j, is_m, P, p.ho, h, vr, cq);
}
#endif

}  // namespace gdn
