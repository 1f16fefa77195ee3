// gdn_bwd_dscan_gx.cuh: the overlapped backward's reverse scan (the uncut producer beside the token
// stage tc13) with every product of its step on the warpgroup MMA and the B operands staged in the
// 128-byte swizzle: gdn_bwd_dscan_ov2gx_{bf16,f16}_k128 (session 25, helper dsx25; validated on
// the H200, the uncut producer by rule since session 25), and the piece chain's seeded pass on the
// same loop, gdn_bwd_dscanp_ov2gx_{bf16,f16}_k128 (replacing dscanp_ov5dr under
// DNNPLAN_GDN_BWD_DSCAN=ov2gx only: no faster at (1,32768,16)).
//
// Why: dscan_ov5dr (dscan_mma_chunks with R2, PUB, PUBW, DR_IO; 8 compute warps of 16 value rows +
// the publisher warp) reads every B operand of its step (Kᴿ, A, T, Q⁺, E: ~60 KB) once per warp by
// ldmatrix, ~480 KB of shared-memory reads per step and SM: the shared-memory pipe bound that
// session 24 removed from the forward scan with wgmma (w4gx / w8gx), where a B tile is read once
// per warpgroup. Here the 8 warps are two warpgroups (warps 0-3: value rows 0-63, warps 4-7: rows
// 64-127; the m64 rows of warp w of a warpgroup are its 16 rows, so every accumulator and A
// fragment keeps the mma.sync layout the R2 loop uses).
// No publisher warp (ov5's PUBW): with a ninth warp an SM sub-partition holds three warps, which
// caps a thread at 168 registers; this step needs 231 (x 64, X's A fragments 32, dUᵀ 32, dOᵀ 16
// live while batch 1 is in flight), and at 168 ptxas spilled and serialized the wgmma (C7512).
// The units are published as the R2 loop without PUBW does (ov2's protocol: thread 0 after the
// chunk's barrier, gpu-scope fence, release store).
//
// The step (chunk c, last first; X = dSᵀ in x[K / 8][4], the m64n128 accumulator layout):
//   dS' = X stored (R2's dscan_store_ds_staged, io dtype)
//   batch 1  dUᵀ = X Kᴿᵀ + dOᵀ A   m64n64k16 × K/16 (A: x_a_frag; B: Kᴿ [token][key] K-major in
//                                  slim_wg_elem's swizzle, two 64-key atoms, k16 step +32 B within
//                                  an atom) then × 4 (A: dOᵀ by ldmatrix.trans from the dO tile;
//                                  B: A [j][i] MN-major, tnspB: SBO 1,024 B, k16 step +2,048 B;
//                                  the full 64 columns: the tile's upper triangle is zero)
//   batch 2  X ← e^{Γ_last} X + dOᵀ Q⁺   m64n128k16 × 4, B = Q⁺ [token][key] MN-major (the forward
//                                  state update's rule: LBO 8,192 B between the 64-key atoms)
//   batch 3  dRᵀ = dUᵀ T            m64n64k16 × 4, B = T [i][j] MN-major (batches 2 and 3 in flight
//                                  together)
//   batch 4  X += (−dRᵀ) E          m64n128k16 × 4, B = E MN-major
//   (in flight: dR stored in the io dtype, dscan_store_dr_staged)
// (Issuing batch 2 while batch 1 is in flight made ptxas inject a warpgroup wait even at 256
// threads: not done.)
// Numerics: the same io-rounded operands as the R2 loop, fp32 accumulation in the tensor core's
// order, and the state update sums dOᵀ Q⁺ over all tokens before −dRᵀ E (the mma.sync loop
// interleaves them per 16 tokens): not bitwise dscan_ov5dr; the fp64 reference is the bar.
// Copies: the same 16-byte cp.async pieces as dscan_issue_chunk's FIXED rounds, the tiles A, T
// (8 KB, one atom), Kᴿ, Q⁺, E (16 KB, two atoms) written at their swizzled positions, dO as the
// R2 loop's [token][V + 8] tile. Each thread's fence.proxy.async after its group wait, before the
// chunk's barrier (its cp.async writes then visible to the wgmma's async proxy); every wgmma of a
// chunk is complete (wait<0>) before the next chunk's barrier, after which its stage is refilled.
#pragma once

#include "gdn_bwd.cuh"
#include "gdn_bwd_chain.cuh"
#include "gdn_fwd_slim.cuh"
#include "dnnp_wgmma.cuh"

namespace gdn {

// The stage of the wgmma reverse scan: A, T (one 8 KB swizzle atom each), Kᴿ, Q⁺, E (two atoms of
// 64 keys each), dO [64 tokens][VS + 8]; the stage rounded to 1,024 bytes (every atom aligned);
// then, past the STAGES stages, R2's per-warp dS' staging rows ([16][K + 8], io dtype), which
// dscan_store_ds_staged / dscan_store_dr_staged address through bytes / dss_warp / KP.
// RAW_K_SCALED (session 27, the backward's scalar form): kr_off holds the raw k rows, q_off the raw
// q rows, e_off the chunk's four fp32 scalar rows ([4][CHUNK]: ck, β, cq, cr; 1 KB) instead of E.
template <int K, int NW, int STAGES, bool RAW_K_SCALED = false>
struct DscanGxSmem {
  static_assert(K == 128, "two 64-key swizzle atoms per token tile");
  static constexpr int KP = K + 8;
  static constexpr int VS = 16 * NW;
  static constexpr int DP = VS + 8;
  static constexpr size_t a_off = 0;                          // A  (swizzled [j][i])
  static constexpr size_t t_off = a_off + CHUNK * CHUNK * 2;  // T  (swizzled [i][j])
  static constexpr size_t kr_off = t_off + CHUNK * CHUNK * 2; // Kᴿ (swizzled [token][key]; raw k)
  static constexpr size_t q_off = kr_off + CHUNK * K * 2;     // Q⁺ (raw q)
  static constexpr size_t e_off = q_off + CHUNK * K * 2;      // E (the scalars)
  static constexpr size_t do_off = e_off + (RAW_K_SCALED ? 4 * CHUNK * 4 : CHUNK * K * 2);  // dO [64 tokens][DP]
  static constexpr size_t stage = (do_off + CHUNK * DP * 2 + 1023) / 1024 * 1024;
  static constexpr size_t bytes = STAGES * stage;
  static constexpr size_t dss_warp = 16 * KP * 2;
  static constexpr size_t bytes_r2 = bytes + NW * dss_warp;
  static_assert(a_off % 1024 == 0 && t_off % 1024 == 0 && kr_off % 1024 == 0 && q_off % 1024 == 0 &&
                    e_off % 1024 == 0 && stage % 1024 == 0,
                "SW128 atoms 1024-byte aligned");
};
// The host mirror: src/engines/gdn/params.rs, dscan_ov2gx_smem_bytes.
static_assert(DscanGxSmem<128, 8, 2>::bytes_r2 == 200704, "DscanGxSmem size changed: update params.rs");
static_assert(DscanGxSmem<128, 8, 2, true>::bytes_r2 == 169984, "DscanGxSmem (scalar form) changed: update params.rs");
// The scalar form's reverse summaries (SUM: no staging rows): params.rs, dsum_sc_smem_bytes.
static_assert(DscanGxSmem<128, 8, 2, true>::bytes == 135168, "DscanGxSmem (summaries) changed: update params.rs");

// SPLIT (session 29, helper dw29: gdn_bwd_dscan_ov2gxsh, the scalar form's reverse scan as two
// blocks per unit, one warpgroup of NW = 4 warps on 64 value rows each, two blocks per SM): the
// tiles read to the chunk's end (A, T, raw k, the four scalar rows) on two stages as above; the raw
// q tile and the block's dO columns (read by batch 2 and before batch 1b) in ONE buffer past them,
// refilled for the next chunk after the chunk's batches 2 and 3 (a block barrier); then the
// per-warp dS' staging rows. 110,592 B: two blocks fit an SM's 228 KB (one block of the 8-warp
// scan holds 236 registers × 256 threads, nearly the whole register file; a warpgroup's 128
// threads half of it).
template <int K, int NW>
struct DscanGxSplitSmem {
  static_assert(K == 128, "two 64-key swizzle atoms per token tile");
  static constexpr int KP = K + 8;
  static constexpr int VS = 16 * NW;
  static constexpr int DP = VS + 8;
  static constexpr size_t a_off = 0;                          // A  (swizzled [j][i]), per stage
  static constexpr size_t t_off = a_off + CHUNK * CHUNK * 2;  // T  (swizzled [i][j]), per stage
  static constexpr size_t kr_off = t_off + CHUNK * CHUNK * 2; // raw k (swizzled), per stage
  static constexpr size_t e_off = kr_off + CHUNK * K * 2;     // the four scalar rows, per stage
  static constexpr size_t stage = (e_off + 4 * CHUNK * 4 + 1023) / 1024 * 1024;
  static constexpr size_t q_off = 2 * stage;                  // raw q (swizzled), one buffer (absolute)
  static constexpr size_t do_off = q_off + CHUNK * K * 2;     // dO [64 tokens][DP], one buffer (absolute)
  static constexpr size_t bytes = (do_off + CHUNK * DP * 2 + 1023) / 1024 * 1024;
  static constexpr size_t dss_warp = 16 * KP * 2;
  static constexpr size_t bytes_r2 = bytes + NW * dss_warp;
  static_assert(t_off % 1024 == 0 && kr_off % 1024 == 0 && q_off % 1024 == 0 && e_off % 1024 == 0 &&
                    stage % 1024 == 0,
                "SW128 atoms 1024-byte aligned");
};
// The host mirror: src/engines/gdn/params.rs, dscan_ov2gxsh_smem_bytes.
static_assert(DscanGxSplitSmem<128, 4>::bytes_r2 == 110592, "DscanGxSplitSmem size changed: update params.rs");

// The reverse scan's shared-memory layout: DscanGxSmem, or with SPLIT DscanGxSplitSmem.
template <int K, int NW, int STAGES, bool RAW_K_SCALED, bool SPLIT>
struct DscanGxLayout {
  using type = DscanGxSmem<K, NW, STAGES, RAW_K_SCALED>;
};
template <int K, int NW, int STAGES, bool RAW_K_SCALED>
struct DscanGxLayout<K, NW, STAGES, RAW_K_SCALED, true> {
  using type = DscanGxSplitSmem<K, NW>;
};

// One stage of the wgmma reverse scan: chunk c's A, T, Kᴿ, Q⁺, E by cp.async into their swizzled
// positions (round it: piece tid + NT·it of the contiguous tile, row (tid + NT·it) / (ROWLEN / 8);
// NT / (ROWLEN / 8) rows per round, a multiple of 8, so a round is the first one's elements plus
// a constant) and the block's VS dO value columns (rows past the chunk's tokens zeroed), as
// dscan_issue_chunk's FIXED branch. NT threads.
template <typename T, int ROWLEN, int NT>
__device__ __forceinline__ void dscan_gx_tile_swizzled(T* dst, const T* src, int tid) {
  constexpr int CV = ROWLEN / 8, RS = NT / CV, N = CHUNK * CV;
  static_assert(N % NT == 0 && NT % CV == 0 && RS % 8 == 0, "whole rounds of whole rows, atom rows unchanged");
  T* d = dst + slim_wg_elem<ROWLEN>(tid / CV, 8 * (tid % CV));
  const T* s = src + 8 * tid;
#pragma unroll
  for (int it = 0; it < N / NT; ++it) cp_async16(d + it * RS * 64, s + it * 8 * NT);
}

// Raw rows (q or k of the graph, head hh of hn, rows of K elements) of the tokens [t0, t0 + len)
// into the swizzled tile dst (dscan_gx_tile_swizzled's pieces and positions), rows past len zeroed
// by the copy (the scalar form, session 27).
template <typename T, int ROWLEN, int NT>
__device__ __forceinline__ void dscan_gx_rows_swizzled(T* dst, const T* src, long long t0, int len, int hn, int hh,
                                                       int tid) {
  constexpr int CV = ROWLEN / 8, RS = NT / CV, N = CHUNK * CV;
  static_assert(N % NT == 0 && NT % CV == 0 && RS % 8 == 0, "whole rounds of whole rows, atom rows unchanged");
  const int r0 = tid / CV;
  T* d = dst + slim_wg_elem<ROWLEN>(r0, 8 * (tid % CV));
  const T* s = src + ((t0 + r0) * hn + hh) * ROWLEN + 8 * (tid % CV);
  const size_t step = static_cast<size_t>(RS) * hn * ROWLEN;
#pragma unroll
  for (int it = 0; it < N / NT; ++it) cp_async16_zfill(d + it * RS * 64, s + it * step, r0 + it * RS < len);
}

// PART (session 29, the split scan SPLIT): 0 every tile; 1 the stage's tiles A, T, raw k and the
// scalars (base: the stage); 2 the single buffer's raw q and dO (base: the shared memory's start,
// S::q_off / S::do_off absolute). PART 1 / 2 with RAW_K_SCALED only.
template <typename T, int K, int V, typename S, int NT, bool RAW_K_SCALED = false, int PART = 0>
__device__ __forceinline__ void dscan_gx_issue_chunk(const BwdParams& bp, unsigned char* base, int c, int h, long long cs,
                                                     long long ce, int c_first, int vb, int tid) {
  static_assert(PART == 0 || RAW_K_SCALED, "the split scan runs the scalar form");
  const FwdParams& p = bp.f;
  constexpr int VS = S::VS, DP = S::DP;
  const int HO = p.ho;
  const size_t ch = static_cast<size_t>(c) * HO + h;
  if constexpr (PART != 2) {
    dscan_gx_tile_swizzled<T, CHUNK, NT>(reinterpret_cast<T*>(base + S::a_off), static_cast<const T*>(p.ws_a) + ch * CHUNK * CHUNK, tid);
    dscan_gx_tile_swizzled<T, CHUNK, NT>(reinterpret_cast<T*>(base + S::t_off), static_cast<const T*>(bp.ws_t) + ch * CHUNK * CHUNK, tid);
  }
  if constexpr (RAW_K_SCALED) {
    const long long t0 = cs + static_cast<long long>(c - c_first) * CHUNK;
    const int len = static_cast<int>(min_ll(static_cast<long long>(CHUNK), ce - t0));
    const int qh = p.h == HO ? h : h / (HO / p.h), kh = p.hk == HO ? h : h / (HO / p.hk);
    if constexpr (PART != 2)
      dscan_gx_rows_swizzled<T, K, NT>(reinterpret_cast<T*>(base + S::kr_off), static_cast<const T*>(p.k), t0, len, p.hk, kh, tid);
    if constexpr (PART != 1)
      dscan_gx_rows_swizzled<T, K, NT>(reinterpret_cast<T*>(base + S::q_off), static_cast<const T*>(p.q), t0, len, p.h, qh, tid);
    static_assert(4 * CHUNK / 4 <= NT, "one 16-byte piece of the scalars per thread");
    if constexpr (PART != 2)
      cp_async16_if(reinterpret_cast<float*>(base + S::e_off) + 4 * tid,
                    static_cast<const float*>(p.ws_kr) + ch * 4 * CHUNK + 4 * tid, tid < CHUNK);
  } else {
    dscan_gx_tile_swizzled<T, K, NT>(reinterpret_cast<T*>(base + S::kr_off), static_cast<const T*>(p.ws_kr) + ch * CHUNK * K, tid);
    dscan_gx_tile_swizzled<T, K, NT>(reinterpret_cast<T*>(base + S::q_off), static_cast<const T*>(p.ws_q) + ch * CHUNK * K, tid);
    dscan_gx_tile_swizzled<T, K, NT>(reinterpret_cast<T*>(base + S::e_off), static_cast<const T*>(bp.ws_e) + ch * CHUNK * K, tid);
  }
  if constexpr (PART != 1) {
    const long long t0 = cs + static_cast<long long>(c - c_first) * CHUNK;
    const int len = static_cast<int>(min_ll(static_cast<long long>(CHUNK), ce - t0));
    dscan_copy_do_rows<T, V, VS, DP, NT>(reinterpret_cast<T*>(base + S::do_off), bp, t0, len, h, HO, vb, tid);
  }
}

// The wgmma reverse scan's chunk loop (the file's top comment): chunks [c_begin, c_end) of the
// sequence whose tokens are [cs, ce) (chunk c_first holds cs), last first, on NW = 2 · 4 warps;
// X = dSᵀ of this warp's 16 value rows (vb + 16 warp ..) in x. Per chunk: dS' (X on entry) to
// ws_ds in the io dtype, dR to ws_dr in the io dtype ([token][value]), then X updated. One block
// barrier per chunk; after it thread 0 publishes the previous chunk's unit in pub_flags (its
// dS' / dR stores precede the barrier), the last one after the closing barrier.
// RAW_K_SCALED (session 27, the backward's scalar form: gdn_bwd_dscan_ov2gxsc): the B tiles are the
// raw k and q rows and the prep's per-token scalars scale the A operands instead:
//   batch 1a dUᵀ = (X kᵀ) diag(cr)      (waited for, the accumulator scaled per token column)
//   batch 1b dUᵀ += dOᵀ A
//   batch 2  X ← e^{Γ_last} X + (dOᵀ diag(cq)) q   (dOᵀ's A fragments scaled and re-rounded)
//   batch 3  dRᵀ = dUᵀ T
//   batch 4  X += (−dRᵀ diag(ck)) k
// (= the full form's products in exact arithmetic; other roundings: the fp64 reference is the bar).
// SPLIT (session 29, helper dw29; RAW_K_SCALED, STAGES = 2): one warpgroup (NW = 4) on the value rows
// vb .. vb + 63 of its unit (the other half is another block's), DscanGxSplitSmem: per chunk the
// same instructions per warp as the 8-warp loop's warpgroup of those rows (bitwise the same dS',
// dR, X), the q / dO buffer refilled after batches 2 and 3 behind a second block barrier, and the
// unit published by adding 1 to its flag (complete at 2: both halves; the consumer waits for
// BwdChainParams::ov_need).
// SUM (session 29, helper pr29: the piece chain's reverse summaries gdn_bwd_dsum_sc): the same step
// without its outputs: no dS' / dR stores (the staging rows past the stages unused: S::bytes
// suffices), no units published (pub_flags unused); X alone leaves the loop.
template <typename T, int K, int V, int NW, int STAGES, bool RAW_K_SCALED = false, bool SPLIT = false,
          bool SUM = false>
__device__ __forceinline__ void dscan_gx_chunks(const BwdParams& bp, float (&x)[K / 8][4], int h, long long cs,
                                                long long ce, int c_first, int c_begin, int c_end, int vb,
                                                unsigned* pub_flags) {
  static_assert(K == 128 && (SPLIT ? NW == 4 && 32 * NW == V : NW == 8 && 16 * NW == V),
                "two warpgroups of 64 value rows at K = V = 128 (SPLIT: one, a block per half)");
  static_assert(STAGES >= 2, "the stage read one chunk earlier is refilled");
  static_assert(!SPLIT || (RAW_K_SCALED && STAGES == 2), "the split scan: the scalar form, two stages");
  using S = typename DscanGxLayout<K, NW, STAGES, RAW_K_SCALED, SPLIT>::type;
  constexpr int DP = S::DP;
  const FwdParams& p = bp.f;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int HO = p.ho;
  const int nch = c_end - c_begin;
  auto issue = [&](int s, int st) {
    dscan_gx_issue_chunk<T, K, V, S, NW * 32, RAW_K_SCALED, SPLIT ? 1 : 0>(bp, smem + st * S::stage, c_end - 1 - s, h, cs,
                                                                           ce, c_first, vb, tid);
  };
  // SPLIT: the single buffer's q and dO of step s.
  auto issue_single = [&](int s) {
    if constexpr (SPLIT)
      dscan_gx_issue_chunk<T, K, V, S, NW * 32, RAW_K_SCALED, 2>(bp, smem, c_end - 1 - s, h, cs, ce, c_first, vb, tid);
  };
  // The unit of a chunk whose stores every thread issued before the barrier just passed.
  auto publish = [&](size_t unit) {
    if constexpr (SPLIT)
      dnnp_flag_add_after_barrier(pub_flags + unit, 1u);
    else
      dnnp_flag_publish_after_barrier(pub_flags + unit, 1u);
  };
#pragma unroll
  for (int sidx = 0; sidx < STAGES - 1; ++sidx) {
    if (sidx < nch) {
      issue(sidx, sidx);
      if constexpr (SPLIT) {
        if (sidx == 0) issue_single(0);
      }
    }
    cp_async_commit();
  }
  const int arow = (lane & 7) + 8 * (lane >> 4);  // ldmatrix.trans rows of dOᵀ's A fragments
  const int acol = 16 * warp + 8 * ((lane >> 3) & 1);
  const uint32_t sm0 = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  // B descriptors: K-major Kᴿ (atom kk / 4, +32 B · (kk % 4)); MN-major tiles (+2,048 B per 16 rows).
  auto kmaj = [](uint32_t b, int kk) {
    return dnnp::wgmma_desc_at<true>(b, 64 * CHUNK * 2 * (kk >> 2) + 32 * (kk & 3), 16, 1024, 1);
  };
  auto mnmaj = [](uint32_t b, int kk) { return dnnp::wgmma_desc_at<true>(b, 2048 * kk, 8192, 1024, 1); };
  float gl_next = nch > 0 ? p.ws_gl[static_cast<size_t>(c_end - 1) * HO + h] : 0.f;
  size_t prev_ch = 0;  // the unit of the previous chunk, published after the next barrier
  for (int s = 0; s < nch; ++s) {
    const int c = c_end - 1 - s;
    const int st = s % STAGES;
    // This chunk's copies landed and are visible to the async proxy (each thread fences its own),
    // every warp is past the previous chunk (its wgmma complete, its stores issued: thread 0
    // publishes its unit after this barrier); then the next chunk's copies.
    cp_async_wait<STAGES - 2>();
    dnnp::fence_proxy_async_shared();
    __syncthreads();
    if constexpr (!SUM)
      if (s > 0) publish(prev_ch);
    if (s + STAGES - 1 < nch) issue(s + STAGES - 1, (s + STAGES - 1) % STAGES);
    cp_async_commit();
    const size_t ch = static_cast<size_t>(c) * HO + h;
    const float decay = __expf(gl_next);
    if (s + 1 < nch) gl_next = p.ws_gl[static_cast<size_t>(c - 1) * HO + h];
    const uint32_t sb = sm0 + static_cast<uint32_t>(st * S::stage);
    uint32_t sq;  // the q tile (SPLIT: the single buffer)
    const T* Ds;  // the dO tile (SPLIT: the single buffer)
    if constexpr (SPLIT) {
      sq = sm0 + static_cast<uint32_t>(S::q_off);
      Ds = reinterpret_cast<const T*>(smem + S::do_off);
    } else {
      sq = sb + S::q_off;
      Ds = reinterpret_cast<const T*>(smem + st * S::stage + S::do_off);
    }
    // dS' of this chunk (X on entry), before batch 1 (its copies' registers are free then).
    if constexpr (!SUM) dscan_store_ds_staged<T, K, V, S>(bp, smem, ch, x, vb + 16 * warp, warp, lane);
    u32 xa[K / 16][4];
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) x_a_frag<T>(xa[kk], x, kk);
    u32 doa[4][4];
    float du[8][4];
    if constexpr (RAW_K_SCALED) {
      // Batch 1a: dUᵀ = X kᵀ (raw k, K-major), then its token columns times cr.
      const float* Sc = reinterpret_cast<const float*>(smem + st * S::stage + S::e_off);
      dnnp::wgmma_fence();
      slim_wg64_chain<T, 0>(&du[0][0], xa, [&](int kk) { return kmaj(sb + S::kr_off, kk); });  // writes du
      dnnp::wgmma_commit();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) ldsm_x4_t(doa[kk], &Ds[(16 * kk + arow) * DP + acol]);
      dnnp::wgmma_wait<0>();  // batch 1a
      dnnp::wgmma_fence_frags(du);
      const int cq = 2 * (lane & 3);
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        const float2 cr = *reinterpret_cast<const float2*>(&Sc[3 * CHUNK + 8 * nt + cq]);
        du[nt][0] *= cr.x;
        du[nt][1] *= cr.y;
        du[nt][2] *= cr.x;
        du[nt][3] *= cr.y;
      }
      // Batch 1b: dUᵀ += dOᵀ A.
      dnnp::wgmma_fence_frags(du);
      dnnp::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) SlimWgN<T>::template mma<64, 1>(&du[0][0], doa[kk], mnmaj(sb + S::a_off, kk));
      dnnp::wgmma_commit();
      // While it runs: dOᵀ diag(cq) as A fragments (tokens 16 kk + cq, + 1 in a[0], a[1]; + 8 in a[2], a[3]).
      u32 doq[4][4];
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const float2 c0 = *reinterpret_cast<const float2*>(&Sc[2 * CHUNK + 16 * kk + cq]);
        const float2 c1 = *reinterpret_cast<const float2*>(&Sc[2 * CHUNK + 16 * kk + 8 + cq]);
#pragma unroll
        for (int r = 0; r < 4; ++r) {
          const float2 cs2 = r < 2 ? c0 : c1;
          const T* d2 = reinterpret_cast<const T*>(&doa[kk][r]);
          doq[kk][r] = Io<T>::pack(Io<T>::to_f(d2[0]) * cs2.x, Io<T>::to_f(d2[1]) * cs2.y);
        }
      }
      dnnp::wgmma_wait<0>();  // batch 1b
      dnnp::wgmma_fence_frags(du);
      // Batch 2: X ← e^{Γ_last} X + (dOᵀ diag(cq)) q.
      scale_frags(x, decay);
      dnnp::wgmma_fence_frags(x);
      dnnp::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) SlimWgN<T>::template mma<128, 1>(&x[0][0], doq[kk], mnmaj(sq, kk));
      dnnp::wgmma_commit();
    } else {
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) ldsm_x4_t(doa[kk], &Ds[(16 * kk + arow) * DP + acol]);
      // Batch 1: dUᵀ = X Kᴿᵀ + dOᵀ A.
      dnnp::wgmma_fence();
      slim_wg64_chain<T, 0>(&du[0][0], xa, [&](int kk) { return kmaj(sb + S::kr_off, kk); });  // writes du
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) SlimWgN<T>::template mma<64, 1>(&du[0][0], doa[kk], mnmaj(sb + S::a_off, kk));
      dnnp::wgmma_commit();
      dnnp::wgmma_wait<0>();  // batch 1
      dnnp::wgmma_fence_frags(du);
      // Batch 2: X ← e^{Γ_last} X + dOᵀ Q⁺.
      scale_frags(x, decay);
      dnnp::wgmma_fence_frags(x);
      dnnp::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) SlimWgN<T>::template mma<128, 1>(&x[0][0], doa[kk], mnmaj(sq, kk));
      dnnp::wgmma_commit();
    }
    u32 dua[4][4];
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) x_a_frag<T>(dua[kk], du, kk);
    // Batch 3: dRᵀ = dUᵀ T.
    float dr[8][4];
    dnnp::wgmma_fence();
    slim_wg64_chain<T, 1>(&dr[0][0], dua, [&](int kk) { return mnmaj(sb + S::t_off, kk); });  // writes dr
    dnnp::wgmma_commit();
    dnnp::wgmma_wait<0>();  // batches 2, 3
    dnnp::wgmma_fence_frags(dr);
    dnnp::wgmma_fence_frags(x);
    if constexpr (SPLIT) {
      // Every warp of the block is past its reads of q (batch 2 complete) and dO (its fragments
      // taken before batch 1b): the next chunk's q and dO into the single buffer.
      __syncthreads();
      if (s + 1 < nch) issue_single(s + 1);
      cp_async_commit();
    }
    u32 dra[4][4];
    if constexpr (RAW_K_SCALED) {  // −dRᵀ diag(ck)
      const float* Sc = reinterpret_cast<const float*>(smem + st * S::stage + S::e_off);
      const int cq = 2 * (lane & 3);
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        const float2 ck = *reinterpret_cast<const float2*>(&Sc[8 * nt + cq]);
        dra[nt >> 1][(nt & 1) * 2 + 0] = Io<T>::pack(-dr[nt][0] * ck.x, -dr[nt][1] * ck.y);
        dra[nt >> 1][(nt & 1) * 2 + 1] = Io<T>::pack(-dr[nt][2] * ck.x, -dr[nt][3] * ck.y);
      }
    } else {
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        dra[nt >> 1][(nt & 1) * 2 + 0] = Io<T>::pack(-dr[nt][0], -dr[nt][1]);
        dra[nt >> 1][(nt & 1) * 2 + 1] = Io<T>::pack(-dr[nt][2], -dr[nt][3]);
      }
    }
    // Batch 4: X += (−dRᵀ) E (RAW_K_SCALED: (−dRᵀ diag(ck)) k, the raw k tile).
    dnnp::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < 4; ++kk)
      SlimWgN<T>::template mma<128, 1>(&x[0][0], dra[kk], mnmaj(sb + (RAW_K_SCALED ? S::kr_off : S::e_off), kk));
    dnnp::wgmma_commit();
    // dR (io dtype, [token][value]) for the token stage while batch 4 runs.
    if constexpr (!SUM) dscan_store_dr_staged<T, V, S>(bp, smem, ch, dr, vb + 16 * warp, warp, lane);
    dnnp::wgmma_wait<0>();
    dnnp::wgmma_fence_frags(x);
    prev_ch = ch;
  }
  cp_async_wait<0>();
  if constexpr (!SUM) {
    if (nch > 0) {  // the last chunk's unit
      __syncthreads();
      publish(prev_ch);
    }
  }
  (void)prev_ch;
}

// gdn_bwd_dscan_ov2gx: bwd_dscan_mma_body's PUB producer (NW warps holding all V value rows; lets
// the token stage launch, publishes every (chunk, head) unit) on dscan_gx_chunks.
// RAW_K_SCALED: the scalar form's uncut producer (gdn_bwd_dscan_ov2gxsc). SPLIT (session 29,
// gdn_bwd_dscan_ov2gxsh): grid (2, HO, N), block x on the value rows 64 x .. 64 x + 63 of its unit.
template <typename T, int K, int V, int NW, int STAGES, bool RAW_K_SCALED = false, bool SPLIT = false>
__device__ __forceinline__ void bwd_dscan_gx_body(const BwdParams& bp, unsigned* pub_flags) {
  static_assert((SPLIT ? 32 : 16) * NW == V, "a publishing reverse scan holds all value rows of its unit (SPLIT: two halves)");
  dnnp_launch_dependents();
  const FwdParams& p = bp.f;
  extern __shared__ __align__(16) unsigned char smem[];
  // The scalar form's producers (ov2gxsc, ov2gxsh): the longest-first order (session 34, lp34).
  const int h = blockIdx.y, b = RAW_K_SCALED ? seq_of_block(p, static_cast<int>(blockIdx.z)) : static_cast<int>(blockIdx.z);
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int HO = p.ho;
  const int vb = SPLIT ? 16 * NW * static_cast<int>(blockIdx.x) : 0;  // this block's first value row
  const int vr = vb + 16 * warp + (lane >> 2);                        // this thread's rows: vr and vr + 8
  const int cq = 2 * (lane & 3);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  const int c_begin = p.chunk_offsets[b], c_end = p.chunk_offsets[b + 1];
  const size_t sbase = (static_cast<size_t>(b) * HO + h) * V * K;
  dnnp::trap_unless_swizzle_aligned(smem);
  float x[K / 8][4];
  load_d_final_state_frags<K>(bp, sbase, x, vr, cq, 0);
  dscan_gx_chunks<T, K, V, NW, STAGES, RAW_K_SCALED, SPLIT>(bp, x, h, cs, ce, c_begin, c_begin, c_end, vb, pub_flags);
  if (bp.d_initial_state) store_d_initial_state<K>(bp, sbase, x, vr, cq);
}

// gdn_bwd_dscanp_ov2gx: the piece chain's publishing seeded pass (bwd_dscan_piece_body with PUB,
// !SUM: piece j from its dX_out seed, dS' / dR per chunk, piece 0 writes d_initial_state) on
// dscan_gx_chunks; grid (1, HO, N·P), NW warps.
// Session 29 (helper pr29), the piece chain in the scalar form (raw q, k and the prep's four
// per-token scalars in ws_kr, as gdn_bwd_dscan_ov2gxsc):
//   RAW_K_SCALED, !SUM: gdn_bwd_dscanp_ov2gxsc, the same pass on dscan_gx_chunks' scalar-form step;
//   RAW_K_SCALED, SUM:  gdn_bwd_dsum_sc, the reverse summaries (bwd_dscan_piece_body's SUM: pieces
//     j = 1..P−1, blockIdx.z = b·(P−1) + j − 1, from dX = 0 with the piece's dO; nothing per chunk
//     stored, no unit published, no launch trigger for a consumer; G_j in fp32 to ws_h's reversed
//     slot b·(P−1) + (P−1−j)); grid (1, HO, N·(P−1)), NW warps holding all V value rows.
template <typename T, int K, int V, int NW, int STAGES, bool RAW_K_SCALED = false, bool SUM = false>
__device__ __forceinline__ void bwd_dscanp_gx_body(const BwdChainParams& cp) {
  static_assert(16 * NW == V, "a publishing reverse scan holds all value rows of its unit");
  if constexpr (!SUM) dnnp_launch_dependents();
  const BwdParams& bp = cp.b;
  const FwdParams& p = bp.f;
  const int P = cp.pieces;
  extern __shared__ __align__(16) unsigned char smem[];
  const int h = blockIdx.y;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int HO = p.ho;
  int b, j;
  piece_of_block(P, !SUM, 1, b, j);
  const int vr = 16 * warp + (lane >> 2);  // this thread's rows: vr and vr + 8
  const int cq = 2 * (lane & 3);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  int cb, c_begin, c_end;
  piece_range(p, b, j, P, cb, c_begin, c_end);
  dnnp::trap_unless_swizzle_aligned(smem);
  float x[K / 8][4];
  if constexpr (SUM) zero_frags(x);
  else load_seed_frags<K>(x, seed_slot<V, K>(cp.ws_seed, P, HO, b, P - 1 - j, h), vr, cq);
  dscan_gx_chunks<T, K, V, NW, STAGES, RAW_K_SCALED, false, SUM>(bp, x, h, cs, ce, cb, c_begin, c_end, 0, cp.ov_flags);
  if constexpr (SUM) {
    const size_t slot = static_cast<size_t>(b) * (P - 1) + (P - 1 - j);
    bwd_store_state_frags<T, K>(cp.ws_h, (slot * HO + h) * V * K, x, vr, cq, false);  // fp32 G_j
  } else if (j == 0 && bp.d_initial_state) {
    store_d_initial_state<K>(bp, (static_cast<size_t>(b) * HO + h) * V * K, x, vr, cq);
  }
}

}  // namespace gdn
