// Gated DeltaNet per-chunk factors, v10 ("prep10", helper prep10, session 9): prep9's tile
// (prep3_tile<..., DIRECT_A, TCINV = 3>: the inverse on the tensor cores by 2x2 recursive blocking,
// ldmatrix operand loads) with the same math in fewer block-wide phases, so fewer warps wait at
// barriers while two of them work. Bitwise prep9: every output element comes from the same fp32
// operations and mma.sync instructions with the same operands in the same order; only which warp
// issues them, where the intermediate tiles live and which barriers separate them differ (checked
// on the CPU against prep9's whole workspace by bench/gdn_prep_host_emu.cpp).
//
// Contract: prep9's (fwd_prep3_body<T, K, V, KEEP, false, true, 3>): inputs, outputs (forward: W,
// Q⁺, Kᴿ, Ũᵀ, A, Γ_last; the backward's KEEP variant also T, E, Γ, β), workspace layout, grid
// (chunk slots, HO), PREP3_THREADS threads, Prep7Smem<K, V>::bytes of dynamic shared memory
// (Prep10Smem has the same size, regions assigned differently).
//
// prep15 (BAL_DIAG = 3, gdn_fwd_prep15.cuh) reschedules phase 4 once more (10 block barriers).
// Since session 18 (bprep18) its phases 1-4 also take prep18's instruction cuts of the slim prep
// (prep15_load_qkv, prep15_front, slim_store_la, prep15_e_row_half; bitwise, gdn_fwd_prep15.cuh).
//
// prep11 (DIRECT_WU) also stores W and Ũᵀ from the accumulators (packed pairs, as A) instead of
// through staging tiles: no barrier after phase 4 (10 per tile), 4-byte global stores.
//
// What differs from prep9 (13 block barriers per tile instead of 15):
//  - r1 and r2 swap roles after phase 3: E = β k e^Γ is computed in place over the normalised k
//    (each lane rewrites the elements it read), L (fp32) goes over the dead q in r2, so the E rows,
//    the L store (warps 0-3) and the A store (warps 4-7) run between the same two barriers (prep9:
//    E rows and A, barrier, L, barrier). W is staged over E (r1), T over L (r2).
//  - Step 1 of the inverse (T_10, T_32 on warps 0 and 1) runs beside the parts of step 2a
//    (P = L_BA T_AA) that need only the diagonal blocks T_00, T_11: warps 2-7 compute the k8 steps
//    kb with kb >> 1 == nt >> 1 of the P tiles (the tiles with nt = 2, 3 completely), so after the
//    barrier each P tile has at most 2 k8 steps left (prep9: up to 4). The steps of each of a
//    tile's two accumulators keep their order (kb ascending), so the sums are prep9's.
//  - T leaves fp32 for the io dtype row by row within its own fp32 row: io row r at byte offset
//    288 r − 16 ((r >> 2) & 1) of the fp32 tile (rows of TCINV_LS = 72 floats = 288 B), i.e. over
//    fp32 columns 0..27 / 0..31 of row r and the unused padding columns 68..71 of row r − 1, so a
//    warp converts its rows (r = warp + 8u) with a __syncwarp between its reads and its writes and
//    no block barrier; the rows 0..31 (final after step 1) are converted beside step 2b (T_BA),
//    which reads only columns 32..63 of those rows; rows 32..63 after it. 288 B is an even multiple
//    of 16 B: the −16 B shift of rows 4..7 (mod 8) keeps ldmatrix's 8 row addresses on 8 distinct
//    4-bank groups (conflict-free, as prep9's odd-multiple stride of 144 B).
#pragma once

#include "gdn_fwd_prep3.cuh"
#include "gdn_fwd_prep13.cuh"
#include "gdn_fwd_prep15.cuh"

namespace gdn {

// prep10's shared memory: prep7's regions with r1 and r2 exchanged in size (r1: k -> E -> the W
// staging tile, CHUNK rows of K + 8; r2: q -> L (fp32, rows of TCINV_LS) -> T (io, tcinv10_tb_row));
// r3: v -> Y -> the Ũᵀ staging tile, as prep7's. The same total as Prep7Smem.
// NO_R3 (session 28, the backward's slim prep gdn_bwd_prep15sl: no v, no Y, no Ũᵀ): r3 empty, Γ and
// β right after r2 (36,352 B at K = V = 128).
template <int K, int V, bool NO_R3 = false>
struct Prep10Smem {
  using S3 = Prep3Smem<K, V>;
  static constexpr size_t r1_bytes = static_cast<size_t>(CHUNK) * S3::KP * 2;
  static constexpr size_t r2_bytes = (CHUNK * S3::KP * 2 > CHUNK * TCINV_LS * 4) ? CHUNK * S3::KP * 2 : CHUNK * TCINV_LS * 4;
  static constexpr size_t r1_off = 0;
  static constexpr size_t r2_off = (r1_off + r1_bytes + 15) / 16 * 16;
  static constexpr size_t r3_off = r2_off + r2_bytes;
  static constexpr size_t r3_bytes = NO_R3 ? 0 : Prep6Smem<K, V>::r3_bytes;
  static constexpr size_t gam_off = r3_off + r3_bytes;
  static constexpr size_t bet_off = gam_off + CHUNK * 4;
  static constexpr size_t bytes = bet_off + CHUNK * 4;
};
static_assert(Prep10Smem<128, 128>::bytes == Prep7Smem<128, 128>::bytes &&
                  Prep10Smem<64, 64>::bytes == Prep7Smem<64, 64>::bytes,
              "prep10 launches with prep7's shared memory size (params::prep7_smem_bytes)");
// The host mirrors it (src/engines/gdn/params.rs, bwd_prep_slim_smem_bytes).
static_assert(Prep10Smem<128, 128, true>::bytes == 36352, "the slim backward prep's shared memory changed");
// Blocks per SM of gdn_bwd_prep15sl's launch bounds (the host's BWD_PREP_SLIM_MIN_BLOCKS).
constexpr int PREP15SL_MIN_BLOCKS = 5;

// The backward's KEEP outputs of a prep tile: T (io, unit diagonal, rows of CHUNK from the io rows
// at tcinv10_tb_row of tb) and the per-token Γ, β (prep_keep_gam_bet), NT threads. prep10_tile's
// KEEP stores; since session 29 (bp29) also the slim prep tile's KEEP form (fwd_slim_prep_tile,
// gdn_bwd_prep16sl). After the block barrier that ends T's io conversion.
template <typename T, int NT>
__device__ __forceinline__ void prep_keep_t_gam_bet(const PrepKeep& keep, size_t ch, const T* tb, const float* gam,
                                                    const float* bet, int tid) {
  T* dt = static_cast<T*>(keep.ws_t) + ch * CHUNK * CHUNK;
  for (int i = tid; i < CHUNK * CHUNK / 8; i += NT) {
    const int r = i / (CHUNK / 8), c8 = i % (CHUNK / 8);
    *reinterpret_cast<uint4*>(&dt[r * CHUNK + 8 * c8]) = *reinterpret_cast<const uint4*>(&tb[tcinv10_tb_row(r) + 8 * c8]);
  }
  prep_keep_gam_bet(keep, ch, gam, bet, tid);
}

// k8 steps kb of P tile (mb, nt) = L_BA T_AA (tcinv8_p's, in its order, into its two accumulators)
// with kb ≥ nt and EARLY ? kb >> 1 == nt >> 1 (B operand a diagonal block of T_AA, final after the
// diagonal solve) : kb >> 1 != nt >> 1 (B operand T_10, final after step 1).
template <bool EARLY>
__device__ __forceinline__ void tcinv10_p_steps(const float* Lf, int mb, int nt, int lane, float (&c)[2][4]) {
  constexpr int LS = TCINV_LS;
  const int g = lane >> 2, t = lane & 3;
  const int ar = 32 + 16 * mb + g;
#pragma unroll
  for (int kb = 0; kb < 4; ++kb) {
    if (kb < nt || ((kb >> 1) == (nt >> 1)) != EARLY) continue;
    const float2 lo = *reinterpret_cast<const float2*>(&Lf[ar * LS + 8 * kb + 2 * t]);
    const float2 hi = *reinterpret_cast<const float2*>(&Lf[(ar + 8) * LS + 8 * kb + 2 * t]);
    const float2 bv = make_float2(Lf[(8 * kb + 2 * t) * LS + 8 * nt + g], Lf[(8 * kb + 2 * t + 1) * LS + 8 * nt + g]);
    tcinv8_mma(c[kb & 1], lo, hi, bv);
  }
}

// P tile (mb, nt) stored as Pᵀ (tcinv8_p's store).
__device__ __forceinline__ void tcinv10_p_store(float* Lf, int mb, int nt, int lane, const float (&c)[2][4]) {
  constexpr int LS = TCINV_LS;
  const int g = lane >> 2, t = lane & 3;
#pragma unroll
  for (int h = 0; h < 2; ++h)
#pragma unroll
    for (int e = 0; e < 2; ++e)
      Lf[(8 * nt + 2 * t + e) * LS + 32 + 16 * mb + g + 8 * h] = c[0][2 * h + e] + c[1][2 * h + e];
}

// Phases 1b-5 of prep10 for chunk slot c (tokens t0 .. t0 + len − 1), output head h (the q, k, v
// copies in flight into b.r2, b.r1, b.r3; the gates' raw bits in `raw`). Ends with the stores.
// SC (session 27, BAL_DIAG = 3 with KEEP only: gdn_bwd_prep15sc): the backward's scalar form, the
// rows' four fp32 scalars (prep15_front<..., true>) to ws_kr instead of Q⁺ and Kᴿ, and no E tile
// (the scans read raw q, k and scale by the scalars); every other output bitwise prep15's.
// SL (session 28, with SC: gdn_bwd_prep15sl): the scalar form without W and Ũᵀ (for a replay that
// rebuilds U from raw k, v, T and the scalars): no v, no Y, no E rows, no phase 5; T, A, the
// scalars, Γ, β, Γ_last bitwise prep15sc's. b.r3, b.us unused.
template <typename T, int K, int V, bool KEEP, bool DIRECT_WU = false, int BAL_DIAG = 0, bool SC = false,
          bool SL = false>
__device__ __forceinline__ void prep10_tile(const FwdParams& p, const PrepKeep& keep, const Prep3Bufs<T>& b, int c,
                                            int h, int len, const PrepGateRaw& raw) {
  static_assert(V == 64 || V == 128, "prep10 serves V = 64 and 128");
  static_assert(K == 64 || K == 128, "prep10 serves K = 64 and 128");
  using S = Prep3Smem<K, V>;
  using IO = Io<T>;
  constexpr int NT = PREP3_THREADS;
  constexpr int KP = S::KP, VP = S::VP, CP = S::CP;
  T* kS = b.r1;
  T* eS = b.r1;  // E in place over the normalised k
  T* wS = b.r1;  // after E is dead
  T* qS = b.r2;
  float* Lf = reinterpret_cast<float*>(b.r2);  // after qS is dead
  const T* tb = b.r2;                          // T (io) at tcinv10_tb_row, after L is dead
  T* yS = b.r3;
  T* uS = b.us;  // after yS is dead
  float* gam = b.gam;
  float* bet = b.bet;

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int HO = p.ho;
  const size_t ch = static_cast<size_t>(c) * HO + h;
  const int rt = warp & 3, hi = warp >> 2;
  const int r0 = 16 * rt + (lane >> 2), cq = 2 * (lane & 3);
  if constexpr (BAL_DIAG == 3) {
    // prep15 (gdn_fwd_prep15.cuh): the diagonal blocks and step 1 inside the E phase, P on all
    // warps, T_BA to io from the accumulators: 3 block barriers from here to phase 5 (prep14: 6).
    // Session 18 (bprep18, prep18's cuts of the slim prep): phase 1 with compile-time trip counts,
    // phase 2 on half-warps, phase 3 at or below the diagonal only (prep15_front), each decay once
    // for L and A on every warp (slim_store_la), L handed to warps 0 and 2 by bar.arrive / bar.sync
    // (warp 0 takes rows 0..31, columns 0..31 from warps 0, 1; warp 2 rows 32..63, columns 32..63
    // from warps 6, 7), the E rows on the other 6 warps' half-warps.
    float kacc[4][4], qacc[4][4];
    static_assert(!SC || KEEP, "the scalar form is the backward's");
    static_assert(!SL || SC, "the slim form is the scalar form's");
    const int np = prep15_front<T, K, V, SC, SL>(p, kS, qS, yS, gam, bet, ch, h, len, raw, kacc, qacc);
    __syncthreads();  // phase 3's reads done: q dead, k rewritten as E in place
    slim_store_la<T>(Lf, static_cast<T*>(p.ws_a) + ch * CHUNK * CHUNK, kacc, qacc, gam, bet, r0, cq, hi, np);
    if (warp == 0) slim_bar<true, 1, 64>();
    else if (warp == 1) slim_bar<false, 1, 64>();
    else if (warp == 2) slim_bar<true, 2, 96>();
    else if (warp >= 6) slim_bar<false, 2, 96>();
    if (warp == 0 || warp == 2) {
      prep15_diag_and_step1(Lf, warp, lane);
    } else if (!SL) {  // E feeds W only (and the full form's E tile)
      const int ew = warp == 1 ? 0 : (warp == 3 ? 1 : warp - 2);  // the 6 E-row warps: 12 half-warps
#pragma unroll 2
      for (int r = 2 * ew + (lane >> 4); r < CHUNK; r += 12) prep15_e_row_half<T, K>(kS, gam, bet, r, lane);
    }
    __syncthreads();
    tcinv8_p(Lf, warp, lane);
    if (KEEP && !SC && (warp & 2)) {
      store_tile16<T, CHUNK, K>(static_cast<T*>(keep.ws_e) + ch * CHUNK * K, eS, (2 * hi + (warp & 1)) * 32 + lane,
                                4 * 32);
    }
    __syncthreads();
    prep15_tba_io<T>(Lf, warp, lane);
    tcinv10_rows_to_io<T, 0>(Lf, warp, lane);
    prep15_tbb_to_io<T>(Lf, warp, lane);
    __syncthreads();
  } else {
    static_assert(!SC && !SL, "the scalar form is prep15's (BAL_DIAG = 3)");
    float acc[8][4];
    prep3_front<T, K, V, true>(p, kS, qS, yS, gam, bet, ch, h, len, raw, false, acc);
    __syncthreads();  // phase 3's reads done: q dead, k rewritten as E in place
    {
#pragma unroll 2
      for (int r = warp; r < CHUNK; r += NT / 32) prep_e_row<T, K>(kS, eS, gam, bet, r, lane);
      if (hi) prep_store_a<T, CHUNK>(static_cast<T*>(p.ws_a) + ch * CHUNK * CHUNK, acc, gam, r0, cq);
      else tcinv_store_l(Lf, acc, gam, bet, r0, cq);
    }
    __syncthreads();

    // Phase 4: T = (I + L)^{-1} (prep9's tcinv_phase4<T, 2>, rescheduled). Diagonal blocks by
    // substitution on threads 0..63 (prep13, BAL_DIAG = 1: on warps 0..3, one block per warp;
    // prep14, BAL_DIAG = 2: right-looking from registers; gdn_fwd_prep13.cuh); the backward's E
    // copy on the others meanwhile.
    constexpr int DIAG_THREADS = BAL_DIAG == 1 ? 4 * 32 : CHUNK;  // the diagonal blocks' threads
    if (tid < DIAG_THREADS) {
      if (BAL_DIAG == 1) prep13_diag_invert_warp(Lf, warp, lane);
      else if (BAL_DIAG == 2) prep14_diag_invert_half(Lf, tid);
      else prep_diag_invert_warp<TCINV_LS>(Lf, tid);
    } else if (KEEP) {
      store_tile16<T, CHUNK, K>(static_cast<T*>(keep.ws_e) + ch * CHUNK * K, eS, tid - DIAG_THREADS,
                                NT - DIAG_THREADS);
    }
    __syncthreads();
    // Step 1 (warps 0, 1: T_10, T_32) beside step 2a's early k8 steps (warps 2-7). Warp 2 + i
    // (i < 4) owns P tile (mb, nt) = (i >> 1, i & 1) (early steps now, late ones after the barrier);
    // warp 6 owns tiles (0, 2), (0, 3), warp 7 tiles (1, 2), (1, 3) (early steps only: complete).
    float pc[2][4];
    zero_frags(pc);
    const int pmb = (warp - 2) >> 1, pnt = (warp - 2) & 1;
    if (warp == 0) {
      tcinv8_pair<0>(Lf, lane);
    } else if (warp == 1) {
      tcinv8_pair<2>(Lf, lane);
    } else if (warp < 6) {
      tcinv10_p_steps<true>(Lf, pmb, pnt, lane, pc);
    } else {
      const int mb = warp - 6;
#pragma unroll
      for (int nt = 2; nt < 4; ++nt) {
        float c2[2][4];
        zero_frags(c2);
        tcinv10_p_steps<true>(Lf, mb, nt, lane, c2);
        tcinv10_p_store(Lf, mb, nt, lane, c2);
      }
    }
    __syncthreads();
    if (warp >= 2 && warp < 6) {
      tcinv10_p_steps<false>(Lf, pmb, pnt, lane, pc);
      tcinv10_p_store(Lf, pmb, pnt, lane, pc);
    }
    __syncthreads();
    // Step 2b (T_BA = −T_BB P over L_BA; reads T_BB and Pᵀ = columns 32..63) beside the io
    // conversion of T's rows 0..31 (final, columns 0..31); then rows 32..63.
    tcinv8_tba(Lf, warp, lane);
    tcinv10_rows_to_io<T, 0>(Lf, warp, lane);
    __syncthreads();
    tcinv10_rows_to_io<T, 4>(Lf, warp, lane);
    __syncthreads();
  }

  // Phase 5: W = T E (64×K): warp (rt, hi) owns rows 16·rt + 0..15 and key columns
  // [hi·K/2, (hi+1)·K/2). A = T by ldmatrix.x4, B = E via ldmatrix.trans (prep9's). Not with SL.
  if constexpr (!SL) {
    constexpr int NPW = K / 32;  // 16-column pairs per warp
    float wacc[2 * NPW][4];
    zero_frags(wacc);
    const int arow = tcinv10_tb_row(16 * rt + (lane & 7) + 8 * ((lane >> 3) & 1)) + 8 * (lane >> 4);
    prep_w_products<T, KP, NPW>(wacc, eS, rt, hi * NPW, lane,
                                [&](int kk, u32(&a)[4]) { ldsm_x4(a, &tb[arow + 16 * kk]); });
    if (DIRECT_WU) {
      // prep11: W leaves from the accumulators as packed pairs (no staging tile, no barrier).
      store_acc_pairs<T, K>(static_cast<T*>(p.ws_w) + ch * CHUNK * K, wacc, r0, 2 * hi * NPW, cq);
    } else {
      __syncthreads();  // every warp's E reads done: the W staging tile takes E's place
      store_acc_pairs<T, KP>(wS, wacc, r0, 2 * hi * NPW, cq);
    }
  }
  // Ũᵀ = Yᵀ Tᵀ (V×64): warp w owns value rows 16·(w mod V/16) + 0..15 and token columns
  // [8·nt0, 8·(nt0 + NTU)); A = Yᵀ via ldmatrix.trans, B = Tᵀ (n-tiles nt, nt + 1) by ldmatrix.x4.
  if constexpr (!SL) {
    constexpr int VT = V / 16;
    constexpr int NTU = 8 * VT / (NT / 32);
    const int d0 = 16 * (warp % VT), nt0 = (warp / VT) * NTU;
    float uacc[NTU][4];
    zero_frags(uacc);
    prep_ut_products<T, VP, true>(uacc, yS, tb, d0, nt0, lane, [](int r) { return tcinv10_tb_row(r); });
    const int d = d0 + (lane >> 2);
    if (DIRECT_WU) {
      // prep11: Ũᵀ leaves from the accumulators as packed pairs.
      store_acc_pairs<T, CHUNK>(static_cast<T*>(p.ws_ut) + ch * V * CHUNK, uacc, d, nt0, cq);
    } else {
      __syncthreads();  // Y reads done, W staged: Ũᵀ staging takes Y's place
      store_tile16<T, CHUNK, K>(static_cast<T*>(p.ws_w) + ch * CHUNK * K, wS, tid, NT);
      store_acc_pairs<T, CP>(uS, uacc, d, nt0, cq);
    }
  }
  if (!DIRECT_WU && !SL) {
    __syncthreads();
    store_tile16<T, V, CHUNK>(static_cast<T*>(p.ws_ut) + ch * V * CHUNK, uS, tid, NT);
  }
  if (KEEP) prep_keep_t_gam_bet<T, NT>(keep, ch, tb, gam, bet, tid);  // E left in phase 4
}

// The prep10 (DIRECT_WU = false) and prep11 (DIRECT_WU: W and Ũᵀ stored from the accumulators as
// packed pairs instead of through staging tiles, as A is since prep6: 10 block barriers per tile)
// and prep13 / prep14 (BAL_DIAG = 1 / 2: the diagonal substitution on 4 warps / from registers,
// gdn_fwd_prep13.cuh) and prep15 (BAL_DIAG = 3: prep14 with the inverse's serial pieces off the
// block barriers, gdn_fwd_prep15.cuh) kernels' body: grid (chunk slots, HO), one (chunk, head) tile per block, PREP3_THREADS threads,
// Prep10Smem<K, V>::bytes (= Prep7Smem's) of dynamic shared memory (SL: Prep10Smem<K, V, true>::bytes).
template <typename T, int K, int V, bool KEEP = false, bool DIRECT_WU = false, int BAL_DIAG = 0, bool SC = false,
          bool SL = false>
__device__ __forceinline__ void fwd_prep10_body(const FwdParams& p, const PrepKeep& keep = PrepKeep{}) {
  using S = Prep10Smem<K, V, SL>;
  extern __shared__ __align__(16) unsigned char smem[];
  const Prep3Bufs<T> b{reinterpret_cast<T*>(smem + S::r1_off),
                       reinterpret_cast<T*>(smem + S::r2_off),
                       SL ? nullptr : reinterpret_cast<T*>(smem + S::r3_off),
                       nullptr,
                       SL ? nullptr : reinterpret_cast<T*>(smem + S::r3_off),
                       reinterpret_cast<float*>(smem + S::gam_off),
                       reinterpret_cast<float*>(smem + S::bet_off)};
  const int c = blockIdx.x, h = blockIdx.y, tid = threadIdx.x;
  int seq, len;
  long long t0;
  if (!locate_chunk(p, c, seq, t0, len)) return;
  const int HO = p.ho;
  const int qh = h / (HO / p.h), kh = h / (HO / p.hk), vh = h / (HO / p.hv);
  // Phase 1: raw q, k, v rows into smem (k into r1, q into r2, v into r3), in flight while the
  // gates are computed.
  if constexpr (BAL_DIAG == 3) prep15_load_qkv<T, K, V, PREP3_THREADS, SL>(p, b.r1, b.r2, b.r3, t0, len, qh, kh, vh, tid);
  else prep_load_qkv<T, K, V, PREP3_THREADS>(p, b.r1, b.r2, b.r3, t0, len, qh, kh, vh, tid);
  prep10_tile<T, K, V, KEEP, DIRECT_WU, BAL_DIAG, SC, SL>(p, keep, b, c, h, len, prep_gates_raw(p, t0, len, h, HO, tid));
}

}  // namespace gdn
