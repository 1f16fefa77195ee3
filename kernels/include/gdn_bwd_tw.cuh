// Gated DeltaNet backward: the next token stage, `tw` (session 29: helper td29's design, §4 of
// bench/gdn_results.md's "Session 29 (helper td29 …)" section; M0's building blocks are
// dnnp_async.cuh and dnnp_wgmma.cuh's SS forms). Work in progress: milestone M1 (`tw1`, the
// non-persistent tile, one (chunk, head) tile per CTA of TW_THREADS threads) starts here.
//
// Contract (for M1; nothing below is used by an entry yet, so the cubins do not change):
//   * one producer warpgroup (warps 0-3: the copies into the ring, the mbarriers, dD's partials,
//     the dR pass dv = β dR and Σ_v dR·v) and two consumer warpgroups (warps 4-11: the wgmma
//     products with register accumulators; consumer warpgroup w owns key columns
//     [K/2·w, K/2·w + K/2) of dQ⁺ / dE / dKᴿ / dq̂ / dk̂ and token columns [32w, 32w + 32) of
//     dA / dL / Q̂K̂ᵀ / K̂K̂ᵀ);
//   * the tile's value dimension is cut into quarters of TW_QV = 32 values; a ring of RING quarter
//     slots, each slot holding the quarter's S and dS′ rows (the wgmma B operands, [32][K], N = key
//     contiguous: MN-major, 128-byte swizzle) and its U, dO and dR columns (the A operands,
//     [64][32], K-major, 64-byte swizzle; U is also dA / dL's K-major B operand);
//   * option A numerics of the design: the phase A / B operands are today's q̂ / k̂ tiles.
// Shared memory (TwSmem, mirrored on the host by src/engines/gdn/params.rs::tokens_tw_smem):
// every swizzled tile starts at a multiple of 1 KB from the dynamic shared memory's base (the
// entry must check the base with dnnp::trap_unless_swizzle_aligned, as the slim kernels do).
#pragma once

#include "gdn_fwd.cuh"  // gdn_bf16 / gdn_f16, size_t

namespace gdn {

// Token rows of a tile (gdn_fwd.cuh's CHUNK; gdn_bwd.cuh checks the two agree).
constexpr int TW_ROWS = 64;

// Threads of the tw token tile: one producer and two consumer warpgroups.
constexpr int TW_THREADS = 384;
// Values per ring quarter (the unit of the producer's copies and of the consumers' k-loop).
constexpr int TW_QV = 32;
// Quarter slots of the ring (td29 §4: with 4 quarters per tile at V = 128, one always fills ahead).
constexpr int TW_RING = 5;

// The tw tile's dynamic shared memory for head dims K, V (16-bit io), RING quarter slots. Offsets
// in bytes from the dynamic shared memory's base, in this order:
//   ring    RING × quarter: per slot S (s_off), dS′ (ds_off), U (u_off), dO (do_off), dR (dr_off)
//   q_raw, k_raw   [64][K] each, 128-byte swizzle (the cp.async landing tiles; later dq / dk's
//                  staging for the coalesced stores)
//   q_hat, k_hat   [64][K] each, the phase A / B operands (option A)
//   x_da, x_m      [64][64] each: dA′ and M = dL′ + dL′ᵀ (phase B reads dA′ᵀ by tnspA)
//   vectors (fp32, 64 each): Γ, β, raw g, raw β, rq, rk; the consumers' row partials
//                  [2 WG][4][64]; G's column partials [2 WG][64]; Σ_v dR·v per quarter
//                  [V / 32][64]; dD's partials (16 floats)
//   mbarriers (8 B each): full[RING], empty[RING], qk_full, qk_empty, xchg
template <int K, int V, int RING = TW_RING>
struct TwSmem {
  static_assert((K == 64 || K == 128) && (V == 64 || V == 128), "head dims");
  static_assert(RING >= V / TW_QV, "the ring holds at least one tile's quarters");
  static constexpr size_t E = 2;  // bytes of an io element (bf16 / f16)
  static constexpr size_t ALIGN = 1024;  // a 128-byte-swizzle atom (8 rows of 128 B)
  static constexpr size_t up(size_t x, size_t a) { return (x + a - 1) / a * a; }

  // One quarter slot.
  static constexpr size_t s_tile = TW_QV * K * E;     // S rows [32q, 32q + 32): [32][K]
  static constexpr size_t u_tile = TW_ROWS * TW_QV * E;  // U / dO / dR columns: [64][32]
  static constexpr size_t s_off = 0, ds_off = s_tile, u_off = 2 * s_tile, do_off = u_off + u_tile,
                          dr_off = do_off + u_tile;
  static constexpr size_t quarter = dr_off + u_tile;
  static constexpr int quarters_per_tile = V / TW_QV;

  // The tile.
  static constexpr size_t ring = RING * quarter;
  static constexpr size_t qk_tile = TW_ROWS * K * E;
  static constexpr size_t q_raw = ring, k_raw = q_raw + qk_tile;
  static constexpr size_t q_hat = k_raw + qk_tile, k_hat = q_hat + qk_tile;
  static constexpr size_t x_tile = TW_ROWS * TW_ROWS * E;
  static constexpr size_t x_da = k_hat + qk_tile, x_m = x_da + x_tile;
  // fp32 vectors of 64.
  static constexpr size_t vec = x_m + x_tile;
  static constexpr size_t v_gam = vec, v_beta = v_gam + TW_ROWS * 4, v_graw = v_beta + TW_ROWS * 4,
                          v_braw = v_graw + TW_ROWS * 4, v_rq = v_braw + TW_ROWS * 4, v_rk = v_rq + TW_ROWS * 4;
  static constexpr size_t v_rowp = v_rk + TW_ROWS * 4;             // [2][4][64]
  static constexpr size_t v_gcol = v_rowp + 2 * 4 * TW_ROWS * 4;   // [2][64]
  static constexpr size_t v_dbv = v_gcol + 2 * TW_ROWS * 4;        // [V / 32][64]
  static constexpr size_t v_dd = v_dbv + quarters_per_tile * TW_ROWS * 4;  // [16]
  static constexpr size_t bar = up(v_dd + 16 * 4, 16);
  static constexpr int n_bars = 2 * RING + 3;
  static constexpr size_t bar_full = bar, bar_empty = bar + 8 * RING, bar_qk_full = bar + 16 * RING,
                          bar_qk_empty = bar_qk_full + 8, bar_xchg = bar_qk_empty + 8;
  static constexpr size_t bytes = up(bar + 8 * n_bars, 16);

  static_assert(s_tile % ALIGN == 0 && u_tile % ALIGN == 0 && quarter % ALIGN == 0, "swizzled quarter tiles");
  static_assert(q_raw % ALIGN == 0 && q_hat % ALIGN == 0 && x_da % ALIGN == 0 && x_m % ALIGN == 0, "swizzled tiles");
  static_assert(bytes <= 232448, "the tw tile fits an H200 block's shared memory (227 KB)");
};

// The sizes the host mirror (params.rs::tokens_tw_smem, its unit test) states: K = V = 128 keeps
// 1,872 B spare (td29's plan, option A); K = V = 64 halves the q / k tiles and the S / dS′ rows.
static_assert(TwSmem<128, 128>::quarter == 28672 && TwSmem<128, 128>::ring == 143360, "tw quarter, K = 128");
static_assert(TwSmem<128, 128>::q_raw == 143360 && TwSmem<128, 128>::q_hat == 176128 &&
                  TwSmem<128, 128>::x_da == 208896 && TwSmem<128, 128>::vec == 225280 &&
                  TwSmem<128, 128>::v_rowp == 226816 && TwSmem<128, 128>::v_dbv == 229376 &&
                  TwSmem<128, 128>::bar == 230464,
              "tw offsets, K = 128");
static_assert(TwSmem<128, 128>::bytes == 230576, "tw bytes, K = 128");
static_assert(TwSmem<64, 64>::quarter == 20480 && TwSmem<64, 64>::q_raw == 102400 &&
                  TwSmem<64, 64>::x_da == 135168 && TwSmem<64, 64>::vec == 151552 &&
                  TwSmem<64, 64>::bar == 156224 && TwSmem<64, 64>::bytes == 156336,
              "tw offsets, K = 64");

}  // namespace gdn

// The value products need the wgmma forms: on the CPU only with bench/gdn_wgmma_emu.h included
// first (GDN_WGMMA_EMU); the other host emulations see the layout alone.
#if !defined(GDN_HOST_EMU) || defined(GDN_WGMMA_EMU)
#include "dnnp_int.cuh"

#include "dnnp_wgmma.cuh"

namespace gdn {

// ---------------------------------------------------------------------------------------------
// The consumers' value products (M1, step 2). Per quarter q (values [32q, 32q + 32)) of the tile,
// consumer warpgroup w issues, for each of the quarter's two k16 steps kk (value 32q + 16kk):
//   dQ⁺ += dO_q S_q       m64n64k16, A dO  [64][32] K-major 64 B swizzle, B S   key columns [64w, 64w + 64)
//   P_E += dR_q S_q       m64n64k16, A dR,                                  B S   (dE = −P_E, the sign as tc16)
//   dKᴿ += U_q dS′_q      m64n64k16, A U,                                   B dS′ key columns [64w, 64w + 64)
//   dA  += dO_q U_qᵀ      m64n32k16, A dO,  B U   token columns [32w, 32w + 32), K-major 64 B swizzle
//   P_L += dR_q U_qᵀ      m64n32k16, A dR,  B U                             (dL = −P_L, the sign as tc16)
// Every accumulator starts at zero and runs the V / 16 k16 steps in value order, as tc16's
// mma.sync products do (tokens_products_mma: one warp per accumulator tile, kk = 0 .. V/16 − 1, no
// split of the value sum): so the five are expected bitwise tc16's (fsx25: wgmma's k16 step
// rounds as mma.sync's). K = 128 only (at K = 64 a warpgroup's 32 key columns would be an MN-major
// operand 32 wide in the 128-byte swizzle, not a canonical layout: M1 must split K = 64 otherwise).

// Byte offset of S / dS′ element (value v in [0, 32) of the quarter, key) within its quarter tile:
// MN-major, 128-byte swizzle, keys in blocks of 64 ([K / 64][32][64]; block w is warpgroup w's B).
__host__ __device__ constexpr uint32_t tw_sq_off(int v, int key) {
  const uint32_t lin = static_cast<uint32_t>((key / 64) * (TW_QV * 128) + v * 128 + 2 * (key % 64));
  return lin ^ (((lin >> 7) & 7u) << 4);
}
// Byte offset of U / dO / dR element (token row, value v in [0, 32) of the quarter) within its
// quarter tile: K-major, 64-byte swizzle ([64][32], rows of 64 B, Swizzle<2,4,3>).
__host__ __device__ constexpr uint32_t tw_uq_off(int row, int v) {
  const uint32_t lin = static_cast<uint32_t>(row * 64 + 2 * v);
  return lin ^ (((lin >> 7) & 3u) << 4);
}

// The io dtype's SS forms the value products use (dnnp_wgmma.cuh).
template <typename T>
struct TwWgSS;
template <>
struct TwWgSS<gdn_bf16> {
  static __device__ __forceinline__ void n64_b_mn(float* d, uint64_t a, uint64_t b) { dnnp::wgmma_m64n64k16_ss_bf16_t<0, 1>(d, a, b); }
  static __device__ __forceinline__ void n32_b_k(float* d, uint64_t a, uint64_t b) { dnnp::wgmma_m64n32k16_ss_bf16_t<0, 0>(d, a, b); }
  static __device__ __forceinline__ void n64_b_k(float* d, uint64_t a, uint64_t b) { dnnp::wgmma_m64n64k16_ss_bf16_t<0, 0>(d, a, b); }
};
template <>
struct TwWgSS<gdn_f16> {
  static __device__ __forceinline__ void n64_b_mn(float* d, uint64_t a, uint64_t b) { dnnp::wgmma_m64n64k16_ss_f16_t<0, 1>(d, a, b); }
  static __device__ __forceinline__ void n32_b_k(float* d, uint64_t a, uint64_t b) { dnnp::wgmma_m64n32k16_ss_f16_t<0, 0>(d, a, b); }
  static __device__ __forceinline__ void n64_b_k(float* d, uint64_t a, uint64_t b) { dnnp::wgmma_m64n64k16_ss_f16_t<0, 0>(d, a, b); }
};

// A consumer warpgroup's value accumulators (wgmma fragment order: n8 tile j, element e at row
// 16·warp + lane / 4 + 8·(e / 2), column 8j + 2·(lane % 4) + e % 2 of the warpgroup's columns).
struct TwValueAcc {
  float dqp[32], pe[32], dkr[32];  // key columns [64w, 64w + 64)
  float da[16], pl[16];            // token columns [32w, 32w + 32)
};

// wgmma_fence_operand on every accumulator register: after writing them (tw_value_zero) and
// after a wgmma_wait before reading them, so that ptxas does not inject warpgroup.arrive / wait.
__device__ __forceinline__ void tw_value_fence(TwValueAcc& a) {
#pragma unroll
  for (int i = 0; i < 32; ++i) {
    dnnp::wgmma_fence_operand(a.dqp[i]);
    dnnp::wgmma_fence_operand(a.pe[i]);
    dnnp::wgmma_fence_operand(a.dkr[i]);
  }
#pragma unroll
  for (int i = 0; i < 16; ++i) {
    dnnp::wgmma_fence_operand(a.da[i]);
    dnnp::wgmma_fence_operand(a.pl[i]);
  }
}

// Zero the accumulators (before the tile's first quarter).
__device__ __forceinline__ void tw_value_zero(TwValueAcc& a) {
#pragma unroll
  for (int i = 0; i < 32; ++i) a.dqp[i] = a.pe[i] = a.dkr[i] = 0.f;
#pragma unroll
  for (int i = 0; i < 16; ++i) a.da[i] = a.pl[i] = 0.f;
  tw_value_fence(a);
}

// Issue the 10 wgmmas of one quarter slot (shared address `slot`, 1 KB-aligned) for consumer
// warpgroup w (0 / 1). The caller brackets them: wgmma_fence before (and fence_proxy_async_shared
// after the slot's full wait), wgmma_commit after, wgmma_wait before the slot is released.
template <typename T, int K, int V, int RING>
__device__ __forceinline__ void tw_value_quarter(TwValueAcc& a, uint32_t slot, int w) {
  static_assert(K == 128, "tw value products: K = 128 (see above)");
  using L = TwSmem<K, V, RING>;
  using W = TwWgSS<T>;
  const uint32_t s = slot + L::s_off + w * (TW_QV * 128), ds = slot + L::ds_off + w * (TW_QV * 128);
  const uint32_t u = slot + L::u_off, o = slot + L::do_off, r = slot + L::dr_off, ub = u + w * 32 * 64;
#pragma unroll
  for (int kk = 0; kk < 2; ++kk) {
    // A K-major sw64: +32 B per k16 step, SBO 8 rows of 64 B. B MN-major sw128: +16 rows of 128 B
    // per k16 step, SBO 8 rows of 128 B. B K-major sw64 (U rows = tokens): as A.
    const uint64_t ao = dnnp::wgmma_desc(o + 32 * kk, 16, 512, 2), ar = dnnp::wgmma_desc(r + 32 * kk, 16, 512, 2),
                   au = dnnp::wgmma_desc(u + 32 * kk, 16, 512, 2);
    const uint64_t bs = dnnp::wgmma_desc(s + 2048 * kk, 16, 1024, 1), bd = dnnp::wgmma_desc(ds + 2048 * kk, 16, 1024, 1),
                   bu = dnnp::wgmma_desc(ub + 32 * kk, 16, 512, 2);
    W::n64_b_mn(a.dqp, ao, bs);
    W::n64_b_mn(a.pe, ar, bs);
    W::n64_b_mn(a.dkr, au, bd);
    W::n32_b_k(a.da, ao, bu);
    W::n32_b_k(a.pl, ar, bu);
  }
}


// ---------------------------------------------------------------------------------------------
// M1 (session 30, helper m1t30): `tw1`, REV 30 of bwd_tokens_tc_tile (gdn_bwd_tokens_tw1_*, K = V =
// 128, the overlapped consumer). tc16's block of TOK_THREADS = 512 threads and its chunk-local
// phases unchanged; the value products (tokens_products_mma's part) are warp-specialized:
//   every thread: per quarter q one chunk of the S, U or dO copies (cp.async into the ring slot
//     through tw_sq_off / tw_uq_off, dO zero-filled past len; cp.async.mbarrier.arrive.noinc on
//     full_a[q], TOK_THREADS arrivals); then the q / k rows (tc16's issue_qk);
//   warpgroups 0 and 3: the unit's flag (thread 0 polls, a named barrier of the 256), then the
//     dS' and dR copies (full_b[q], 256 arrivals); warpgroup 0 then dKᴿ = U dS'
//     (2 × m64n64k16 per k16 step, B MN-major);
//   warpgroup 1: dQ⁺ = dO S;  warpgroup 2: P_E = dR S (dE = −P_E);
//   warpgroup 3: dA = dO Uᵀ (before the flag) and P_L = dR Uᵀ (m64n64k16, B = U K-major);
//   every thread, while its warpgroup's products run: tc16's dR pass (dv = β dR to its port,
//   Σ_v dR·v by tc16's reduce-scatter into dbvp) and tc16's dD partial, from the ring.
// (Run 1 on the H200 had warpgroup 0 issue every copy and warpgroup 3 run the dR pass and dD:
// 7 % slower than tc16 in the stage, barrier stalls 3.0 vs 1.7 per instruction.)
// Each accumulator runs the V / 16 k16 steps in value order from zero (as tc16's mma.sync ones);
// on the H200 that gives mma.sync's results (call 1: dQ, dK hashes = tc16's), and the dR pass and
// dD repeat tc16's element maps and reductions (run 3), so every output is expected bitwise tc16. The accumulators go
// to the fp32 hand-off tiles over the consumed ring and come back in tc16's row / fragment layouts.
//
// EARLY (REV 32, `tw3`, session 32, helper tp32): the same copies, products, passes and hand-off
// (so the same values bit for bit), in another issue order. tw1's tile, timed by phase on the H200
// (bench/gdn_results.md, session 32, tp32), spends ~1 µs with warpgroups 0 and 3 parked on the
// named barrier while thread 0's acquire poll waits behind the block's ~6,000 queued copies, and
// its dS' / dR copies (issued after the poll and after the q / k rows, so full_b also tracks those)
// land last, ~1.7 µs after S / U / dO: warpgroups 0, 2 and 3's products and every pass wait for
// them. Under EARLY thread 64 (warp 2: no mbarrier or scalar duty) waits for the flag before the
// tile's first barrier, concurrently with the scalar rows' loads; after that barrier warpgroups 0
// and 3 issue each quarter's dS' / dR copies right after its S and U / dO (full_b[q] then tracks
// quarters ≤ q only), the q / k rows last; no named barrier.
//
// TMA (REV 34, `tw7`, session 39; with EARLY): the ring's S, dS′, U and dR quarters by tensor maps
// (maps: TwRingMaps) instead of every thread's cp.async: after the tile's first barrier (which
// also orders them after the unit's flag) thread 0 issues per quarter two boxes of S and one of U
// on full_a[q], two of dS′ and one of dR on full_b[q] (expect_tx), 28 copies per tile in place of
// ~4,600 LDGSTS; dO stays with threads 256 .. 511 (zero-filled past len), arriving on full_a[q]
// (which then counts 1 + 256), the q / k rows with every thread. The same bytes in the same
// places (tw_sq_off / tw_uq_off are the 128- / 64-byte swizzles the boxes write), so the same
// products, passes and hand-off: bitwise tw3.
// (Declared with its default arguments in gdn_bwd.cuh, before bwd_tokens_tc_tile.)
template <typename T, int K, int V, bool EARLY, bool TMA, typename Scalars, typename IssueQK, typename FlagWait>
__device__ __forceinline__ void tw1_products(const BwdParams& bp, size_t ch, long long t0, int len, int h, int vh,
                                             const float* bet, float* dqp, float* de, float* dkr, float& dd,
                                             float (&faa)[2][4], float (&fal)[2][4], float* dbvp,
                                             const Scalars& load_scalars, const IssueQK& issue_qk,
                                             const FlagWait& flag_wait, const TwRingMaps* maps) {
  static_assert(!TMA || EARLY, "tw7: tw3's order with the ring by tensor maps");
  static_assert(K == 128 && V == 128, "tw1: K = V = 128");
  static_assert(TOK_THREADS == 512, "tw1: four warpgroups");
  using L = Tw1Smem<K, V>;
  using Q = TwSmem<K, V, 4>;  // the quarter slot's layout (s_off, ds_off, u_off, do_off, dr_off)
  using W = TwWgSS<T>;
  using IO = Io<T>;
  static_assert(L::quarter == Q::quarter, "tw1 quarter = TwSmem's");
  constexpr int NQ = L::NQ, KF = K + 16, CF = CHUNK + 8;
  const FwdParams& p = bp.f;
  extern __shared__ __align__(16) unsigned char smem[];
  const int tid = threadIdx.x, wg = tid >> 7, t = tid & 127, lane = tid & 31, warp = tid >> 5;
  const int HO = p.ho;
  uint64_t* full_a = reinterpret_cast<uint64_t*>(smem + L::bar_off);
  uint64_t* full_b = full_a + NQ;
  const uint32_t ring = dnnp::smem_u32(smem);
  if (tid == 0) {
    dnnp::trap_unless_swizzle_aligned(smem);
#pragma unroll
    for (int q = 0; q < NQ; ++q) {
      dnnp::mbar_init(&full_a[q], TMA ? 1 + 256 : TOK_THREADS);
      dnnp::mbar_init(&full_b[q], TMA ? 1 : 256);
    }
    dnnp::mbar_init_fence();
  }
  if constexpr (EARLY) {
    if (tid == 64) flag_wait.thread_wait();  // every dS' / dR copy comes after the barrier below
  }
  load_scalars();
  __syncthreads();  // the mbarriers; gam, bet (EARLY: and the unit's flag)

  const T* sg = reinterpret_cast<const T*>(bp.ws_s) + ch * V * K;
  const T* dsg = reinterpret_cast<const T*>(bp.ws_ds) + ch * V * K;
  const T* ug = bwd_u_tiles<T, V>(bp) + ch * CHUNK * V;
  const T* drg = reinterpret_cast<const T*>(bp.ws_dr) + ch * CHUNK * V;
  const T* dog = static_cast<const T*>(bp.d_o);
  // Producer copies of quarter q: a [32][K] S-like tile (4 chunks of 16 B per thread) and a
  // [64][32] U-like tile (2 chunks per thread).
  // Quarter q's dS' and dR copies, by warpgroups 0 and 3 (256 threads, pt): two 16-byte chunks of
  // dS' and one of dR each, then full_b[q]'s arrival (it counts 256). tw1 issues them after the
  // unit's flag (post_flag), EARLY right after the quarter's S, U, dO.
  const auto issue_dsdr = [&](int q) {
    const int pt = wg == 0 ? t : 128 + t;
#pragma unroll
    for (int u = 0; u < 2; ++u) {
      const int x = pt + 256 * u, v = x >> 4, kc = 8 * (x & 15);
      cp_async16(smem + q * L::quarter + Q::ds_off + tw_sq_off(v, kc), dsg + static_cast<size_t>(32 * q + v) * K + kc);
    }
    const int r = pt >> 2, vc = 8 * (pt & 3);
    cp_async16(smem + q * L::quarter + Q::dr_off + tw_uq_off(r, vc), drg + static_cast<size_t>(r) * V + 32 * q + vc);
    dnnp::cp_async_mbar_arrive_noinc(&full_b[q]);
  };
  // Quarter q's dO chunk at token row r, values vc .. vc + 7 of the quarter (threads 256 .. 511:
  // r = x / 4, vc = 8 (x % 4), x = tid % 256), zero-filled past len; the caller arrives on full_a[q].
  const auto issue_do = [&](int q, int r, int vc) {
    const bool live = r < len;
    const T* src = dog + (static_cast<size_t>(t0 + (live ? r : 0)) * HO + h) * V + 32 * q + vc;
    cp_async16_zfill(smem + q * L::quarter + Q::do_off + tw_uq_off(r, vc), src, live);
  };
#ifndef GDN_HOST_EMU
  if constexpr (TMA) {
    if (tid == 0) {
      // The replay's and the reverse scan's generic stores (the latter acquired before the
      // barrier above) before the async proxy reads them.
      dnnp::fence_proxy_async_global();
      const int ys = static_cast<int>(ch) * V, yu = static_cast<int>(ch) * CHUNK;
      constexpr uint32_t SB = TW_QV * 64 * sizeof(T), UB = CHUNK * TW_QV * sizeof(T);  // one box each
#pragma unroll
      for (int q = 0; q < NQ; ++q) {
        unsigned char* sl = smem + q * L::quarter;
        dnnp::mbar_arrive_expect_tx(&full_a[q], 2 * SB + UB);
        dnnp::tma_load_3d(sl + Q::s_off, &maps->s, 0, ys + TW_QV * q, 0, &full_a[q]);
        dnnp::tma_load_3d(sl + Q::s_off + TW_QV * 128, &maps->s, 64, ys + TW_QV * q, 0, &full_a[q]);
        dnnp::tma_load_3d(sl + Q::u_off, &maps->u, TW_QV * q, yu, 0, &full_a[q]);
        dnnp::mbar_arrive_expect_tx(&full_b[q], 2 * SB + UB);
        dnnp::tma_load_3d(sl + Q::ds_off, &maps->ds, 0, ys + TW_QV * q, 0, &full_b[q]);
        dnnp::tma_load_3d(sl + Q::ds_off + TW_QV * 128, &maps->ds, 64, ys + TW_QV * q, 0, &full_b[q]);
        dnnp::tma_load_3d(sl + Q::dr_off, &maps->dr, TW_QV * q, yu, 0, &full_b[q]);
      }
    }
    if (tid >= 256) {  // dO, zero-filled past len
      const int x = tid & 255, r = x >> 2, vc = 8 * (x & 3);
#pragma unroll
      for (int q = 0; q < NQ; ++q) {
        issue_do(q, r, vc);
        dnnp::cp_async_mbar_arrive_noinc(&full_a[q]);
      }
    }
  }
#endif
  // Pre-flag copies, every thread of the block (session 30, run 2: run 1 issued them from
  // warpgroup 0 alone): per quarter one 16-byte chunk of S, then one of U (threads < 256) or of
  // dO (the others, zero-filled past len); full_a[q] counts all TOK_THREADS arrivals.
  if constexpr (!TMA) {
#pragma unroll
    for (int q = 0; q < NQ; ++q) {
      {
        const int v = tid >> 4, kc = 8 * (tid & 15);
        cp_async16(smem + q * L::quarter + Q::s_off + tw_sq_off(v, kc), sg + static_cast<size_t>(32 * q + v) * K + kc);
      }
      const int x = tid & 255, r = x >> 2, vc = 8 * (x & 3);
      if (tid < 256) {
        cp_async16(smem + q * L::quarter + Q::u_off + tw_uq_off(r, vc), ug + static_cast<size_t>(r) * V + 32 * q + vc);
      } else {
        issue_do(q, r, vc);
      }
      dnnp::cp_async_mbar_arrive_noinc(&full_a[q]);
      if constexpr (EARLY) {
        // The quarter's dS' and dR, warpgroups 0 and 3.
        if (wg == 0 || wg == 3) issue_dsdr(q);
      }
    }
  }
  issue_qk();  // every thread: raw q, k (rows of K + 16), waited before the hand-off
  cp_async_commit();
  // The unit's flag, then the dS' and dR copies: warpgroups 0 and 3 (256 threads; warpgroup 3
  // after issuing its pre-flag products), per quarter two chunks of dS' and one of dR each;
  // full_b[q] counts 256 arrivals.
  auto post_flag = [&] {
    if (tid == 0) flag_wait.thread_wait();
    dnnp::named_bar_sync(1, 256);
#pragma unroll
    for (int q = 0; q < NQ; ++q) issue_dsdr(q);
  };
  if (!EARLY && wg == 0) post_flag();
  // The products: warpgroup wg's accumulators (n8 tile j, element e: row 16 (warp % 4) + lane / 4
  // + 8 (e / 2), column 8 j + 2 (lane % 4) + e % 2; acc[32 b + 4 j + e] for key block b).
  float acc[64];
#pragma unroll
  for (int i = 0; i < 64; ++i) {
    acc[i] = 0.f;
    dnnp::wgmma_fence_operand(acc[i]);
  }
  // The products' descriptors: one per operand tile of the first quarter slot, then advanced by
  // byte offsets (dnnp::wgmma_desc_advance, exact while addresses stay below 2^18: checked here).
  static_assert(L::bytes + 1024 < (1u << 18), "descriptor start addresses: 14 bits of address >> 4");
  auto desc_a = [&](uint32_t tile) { return dnnp::wgmma_desc(tile, 16, 512, 2); };  // [64][32] K-major sw64
  auto desc_bmn = [&](uint32_t tile) { return dnnp::wgmma_desc(tile, 16, 1024, 1); };  // [32][K] MN-major sw128
  // Quarter q's k16 step kk: +32 B (A and the K-major B), +2048 B (the MN-major B); key block b of
  // the MN-major B at +4096 B.
  auto at_a = [&](uint64_t d, int q, int kk) {
    return dnnp::wgmma_desc_advance(d, static_cast<uint32_t>(q * L::quarter + 32 * kk));
  };
  auto at_bmn = [&](uint64_t d, int q, int b, int kk) {
    return dnnp::wgmma_desc_advance(d, static_cast<uint32_t>(q * L::quarter + b * (32 * 128) + 2048 * kk));
  };
  // tc16's dR pass and dD, on every thread while its warpgroup's products run (session 30, run 3):
  // the same thread → element maps, expressions and reductions as tokens_products_mma's REV 16
  // (dr_pass9 with DRIO: TokDrRows, tokens_dr_rows, tokens_dbeta_reduce_scatter; dd_io), with the
  // operands read from the ring, so dv, Σ_v dR·v and dD are tc16's bit for bit.
  using DR = TokDrRows<V>;
  const DR drr(tid, t0, p.hv, vh);
  u32 vv[DR::RN];
  {
    const T* vg = static_cast<const T*>(p.v) + drr.vrow0;
#pragma unroll
    for (int u = 0; u < DR::RN; ++u) vv[u] = drr.rb + u * DR::RSTEP < len ? ld32(vg + u * drr.vstep) : 0u;
  }
  auto tc16_passes = [&] {
#pragma unroll
    for (int q = 0; q < NQ; ++q) {
      dnnp::mbar_wait(&full_a[q], 0);
      dnnp::mbar_wait(&full_b[q], 0);
    }
    {
      float2 rv[DR::RN];
      float bb[DR::RN], xs[DR::RN];
      const int c2 = drr.c2;
      // Rows rb + RSTEP u: tw_uq_off's XOR reads row bits 1..2 only, so every row sits RSTEP rows
      // of 64 B after the first (the same addresses as tw_uq_off(rb + RSTEP u, ·)).
      static_assert(DR::RSTEP % 8 == 0, "dR rows: the swizzle term of the first row");
      const unsigned char* drq = smem + (c2 / 32) * L::quarter + Q::dr_off + tw_uq_off(drr.rb, c2 % 32);
#pragma unroll
      for (int u = 0; u < DR::RN; ++u) {
        const int r = drr.rb + u * DR::RSTEP;
        const u32 w = ld32(reinterpret_cast<const T*>(drq + u * DR::RSTEP * 64));
        rv[u] = make_float2(IO::bits_to_f(static_cast<unsigned short>(w & 0xffffu)),
                            IO::bits_to_f(static_cast<unsigned short>(w >> 16)));
        bb[u] = bet[r];
      }
      tokens_dr_rows<T, V>(bp, drr, t0, len, h, rv, vv, bb, xs);
      tokens_dbeta_reduce_scatter<DR::RN, DR::RSTEP>(xs, lane, dbvp + (drr.c2 / 64) * CHUNK + drr.rb);
    }
    // dd_io: rows tid / (K / 2) + u · 2 TOK_THREADS / K, key pair 2 (tid % (K / 2)).
    // Rows r0 + 8 u (r0 = tid / (K / 2) < 8): quarter u / 4, value row r0 + 8 (u % 4) of it, whose
    // tw_sq_off XOR term is r0's (it reads row bits 0..2 only): 1 KB per 8 rows.
    constexpr int SN4 = V * K / 2 / TOK_THREADS;
    static_assert(2 * TOK_THREADS / K == 8 && TOK_THREADS / (K / 2) == 8 && TW_QV == 32, "dD rows");
    const uint32_t o0 = tw_sq_off(tid / (K / 2), 2 * (tid % (K / 2)));
#pragma unroll
    for (int u = 0; u < SN4; ++u) {
      const size_t o = (u / 4) * L::quarter + o0 + (u % 4) * 1024;
      const u32 sv = ld32(reinterpret_cast<const T*>(smem + Q::s_off + o)), dsv = ld32(reinterpret_cast<const T*>(smem + Q::ds_off + o));
      dd += IO::bits_to_f(static_cast<unsigned short>(sv & 0xffffu)) * IO::bits_to_f(static_cast<unsigned short>(dsv & 0xffffu)) +
            IO::bits_to_f(static_cast<unsigned short>(sv >> 16)) * IO::bits_to_f(static_cast<unsigned short>(dsv >> 16));
    }
  };
  if (wg <= 2) {
    // 0: dKᴿ = U dS';  1: dQ⁺ = dO S;  2: P_E = dR S.
    const uint64_t da = desc_a(ring + (wg == 0 ? Q::u_off : wg == 1 ? Q::do_off : Q::dr_off));
    const uint64_t db = desc_bmn(ring + (wg == 0 ? Q::ds_off : Q::s_off));
    for (int q = 0; q < NQ; ++q) {
      dnnp::mbar_wait(&full_a[q], 0);                  // S, U, dO
      if (wg != 1) dnnp::mbar_wait(&full_b[q], 0);     // dS', dR
      dnnp::fence_proxy_async_shared();
      dnnp::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 2; ++kk) {
        const uint64_t a = at_a(da, q, kk);
        W::n64_b_mn(acc, a, at_bmn(db, q, 0, kk));
        W::n64_b_mn(acc + 32, a, at_bmn(db, q, 1, kk));
      }
      dnnp::wgmma_commit();
    }
    tc16_passes();
    dnnp::wgmma_wait<0>();
  } else {
    // dA = dO Uᵀ (acc[0, 32)), P_L = dR Uᵀ (acc[32, 64)): B = the quarter's U, K-major, 64 tokens.
    const uint64_t dO = desc_a(ring + Q::do_off), dU = desc_a(ring + Q::u_off), dR = desc_a(ring + Q::dr_off);
    for (int q = 0; q < NQ; ++q) {
      dnnp::mbar_wait(&full_a[q], 0);
      dnnp::fence_proxy_async_shared();
      dnnp::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 2; ++kk) W::n64_b_k(acc, at_a(dO, q, kk), at_a(dU, q, kk));
      dnnp::wgmma_commit();
    }
    if constexpr (!EARLY) post_flag();
    for (int q = 0; q < NQ; ++q) {
      dnnp::mbar_wait(&full_b[q], 0);
      dnnp::fence_proxy_async_shared();
      dnnp::wgmma_fence();
#pragma unroll
      for (int kk = 0; kk < 2; ++kk) W::n64_b_k(acc + 32, at_a(dR, q, kk), at_a(dU, q, kk));
      dnnp::wgmma_commit();
    }
    tc16_passes();
    dnnp::wgmma_wait<0>();
  }
#pragma unroll
  for (int i = 0; i < 64; ++i) dnnp::wgmma_fence_operand(acc[i]);
  cp_async_wait<0>();  // q, k
  __syncthreads();     // every ring read done: the hand-off tiles go over it
  float* Rq = reinterpret_cast<float*>(smem);
  float* Re = Rq + CHUNK * KF;
  float* Rk = Re + CHUNK * KF;
  float* Ra = reinterpret_cast<float*>(smem + L::ra_off);
  float* Rl = reinterpret_cast<float*>(smem + L::rl_off);
  {
    const int g = lane >> 2, cq = 2 * (lane & 3), wr = 16 * (warp & 3);
    if (wg <= 2) {
      // Re takes P_E itself (−dE: bwd_tokens_tc_tile's DE_NEG negates it where it is read).
      float* R = wg == 0 ? Rk : wg == 1 ? Rq : Re;
      // Row r0 + 8 hf, column c = 64 b + 8 j + cq at c ^ tok_swz(r0) (the swizzle reads row bit 1,
      // which 8 hf leaves alone, and flips column bit 3, which is j's low bit): c + s for even j,
      // c − s for odd j. Two row bases, then constant offsets (session 41).
      const int r0 = wr + g, s = tok_swz<true>(r0);
      float* const even = R + r0 * KF + cq + s;
      float* const odd = R + r0 * KF + cq - s;
#pragma unroll
      for (int b = 0; b < 2; ++b)
#pragma unroll
        for (int j = 0; j < 8; ++j)
#pragma unroll
          for (int hf = 0; hf < 2; ++hf)
            *reinterpret_cast<float2*>((j & 1 ? odd : even) + 8 * hf * KF + 64 * b + 8 * j) =
                make_float2(acc[32 * b + 4 * j + 2 * hf], acc[32 * b + 4 * j + 2 * hf + 1]);
    } else {
#pragma unroll
      for (int j = 0; j < 8; ++j)
#pragma unroll
        for (int hf = 0; hf < 2; ++hf) {
          const int r = wr + g + 8 * hf, c = 8 * j + cq;
          *reinterpret_cast<float2*>(&Ra[r * CF + c]) = make_float2(acc[4 * j + 2 * hf], acc[4 * j + 2 * hf + 1]);
          *reinterpret_cast<float2*>(&Rl[r * CF + c]) = make_float2(acc[32 + 4 * j + 2 * hf], acc[32 + 4 * j + 2 * hf + 1]);
        }
    }
  }
  __syncthreads();
  {
    // tc16's row layout (V3, SWZ): row ti, key column pairs 2 tk + 16 mp + {0, 1}.
    const int ti = tid >> 3, tk = tid & 7;
    handoff_rows_v3<K / 16, true, KF>(Rq, Re, Rk, ti, tk, dqp, de, dkr);
    // tc16's fragment layout of dA, dL (faa, fal: token tile warp & 3, columns 8 (2 (warp >> 2) + n)).
    const int g = lane >> 2, cq = 2 * (lane & 3), r0 = 16 * (warp & 3) + g, gq = warp >> 2;
#pragma unroll
    for (int n = 0; n < 2; ++n)
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const int o = (r0 + 8 * hf) * CF + 8 * (2 * gq + n) + cq;
        faa[n][2 * hf] = Ra[o];
        faa[n][2 * hf + 1] = Ra[o + 1];
        fal[n][2 * hf] = Rl[o];
        fal[n][2 * hf + 1] = Rl[o + 1];
      }
  }
  // The region is the caller's again after its next barrier (as tokens_products_mma's V5).
}

}  // namespace gdn
#endif  // the value products
