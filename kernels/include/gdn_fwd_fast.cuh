// Gated DeltaNet forward, session-4 state scan and the exact piece chain (spec §5, §7.7).
//
// Contract: the same inputs, outputs, workspace factors (gdn_fwd_prep) and numerics as the scan
// of gdn_fwd.cuh; parameters are FwdFastParams = FwdParams followed by the piece count and three
// fp32 workspace regions. Deterministic, no atomics, no allocation, all scratch in the caller's
// workspace. (gdn_fwd.cuh keeps the session-1 scan fwd_scan_body: the v1 fallbacks of the forward
// and of the backward's replay.)
//
// Every forward-direction scan here and in gdn_bwd_chain.cuh runs ONE chunk loop, fscan_chunks
// (session 6): the output scan and the summary pass below, the backward's piece summaries (psum)
// and its forward-state replays (fscanp, fscan_r4), each a thin body around it (seed, loop,
// epilogue).
// Differences from gdn_fwd_scan:
//  * B fragments (W, Q⁺, A) come in by ldmatrix.x4 (two n-tiles per instruction) instead of
//    four 32-bit shared loads; the accumulation order is unchanged, so O and the states are
//    bitwise those of gdn_fwd_scan.
//  * NW (warps per block, 16 value rows each) is a template parameter: NW = 8 puts all V = 128
//    value rows of a (sequence, head) in one block, so W, Q⁺, Kᴿ, A are staged once per chunk
//    instead of once per value half, with two warps per SM sub-partition.
//  * The exact piece chain for long sequences on few (sequence, head) pairs: each sequence's
//    chunks are cut into P pieces of ceil(chunks / P) chunks.
//      gdn_fwd_sum  (grid 2·V/VS × HO × N·(P−1)): for every piece but the last, from the
//                   factors, H_j = the piece's end state from a zero seed (value-row blocks) and
//                   M_j = its transition, stored domain (X_end = X_0 · M_j + H_j), by the
//                   identity trick: seed X = I, Ũ = 0 (key-row blocks; K = V).
//      gdn_fwd_chain (grid V/32 × HO × N): seed_0 = initial state (or 0), seed_{j+1} =
//                   seed_j · M_j + H_j in fp32, on CUDA cores, fixed order.
//      gdn_fwd_scanx (grid V/VS × HO × N·P): the output pass of every piece from its seed;
//                   the last piece writes the final state.
//    With P = 1 gdn_fwd_scanx alone is the whole scan (seed from the initial state).
#pragma once

#include "dnnp_tma.cuh"
#include "gdn_fwd.cuh"

// Marks the session-6 chunk loop (bench/gdn_scan_host_emu.cpp builds against older headers too).
#define GDN_FSCAN_CHUNKS 1
// Marks fscan_chunks' one-stage loops (STAGES = 1, PHASED; session 13).
#define GDN_SCANX_PHASED 1
// Marks fwd_chain2_body (session 12; the emulations check it against fwd_chain_body when defined).
#define GDN_CHAIN2 1

namespace gdn {

struct FwdFastParams {
  FwdParams f;
  int pieces;  // P ≥ 1
  // The first piece's length in 1/256 of the even piece (0: the even cut, piece_range; session 32:
  // only the first-early kernels read it, piece_range_first).
  int first_scale;
  float* ws_h;     // [N·(P−1), HO, V, K]
  float* ws_m;     // [N·(P−1), HO, K, K]
  float* ws_seed;  // [N·P, HO, V, K] (only when P > 1)
  // The overlapped uncut slim forward (gdn_fwd_slim.cuh, prep ∥ output scan; null otherwise):
  unsigned* ov_flags;  // [chunk slots, HO]: unit (c, h) published by the persistent prep
  int* ov_order;       // [chunk slots]: the prep's chunk order (the output scan's)
  // State checkpoints (spec §3.4, session 16; ckpt null: none): every output scan writes the
  // stored-domain state entering chunk i of sequence b (i counted from chunk_offsets[b]) when
  // i % ckpt_every == 0, to row ckpt_rows[b] + i / ckpt_every (ckpt_store).
  void* ckpt;       // [max(T/c + N, 1), HO, V, K], io dtype or fp32 (ckpt_f32)
  int* ckpt_rows;   // [N + 1] first row of each sequence (the chunk table itself when ckpt_every == 1)
  int ckpt_every;   // chunks per checkpoint: c / 64 ≥ 1
  int ckpt_f32;     // 1: fp32 rows, 0: io-dtype rows
  // The chunk factors a training forward saves for its backward (session 37; null unless the plan
  // runs the saving prep gdn_fwd_slimprep_*_k128_wgs): full T and A rows, Γ and β per token, in the
  // caller's chunk_factors buffer (the scalars and Γ_last go there through f.ws_kr, f.ws_gl).
  PrepKeep save;
  // The U tiles a training forward with state checkpoints at every chunk saves for its backward
  // (session 38; null unless the plan runs a U-saving scan, gdn_fwd_slimscan_*_k128_*_su): each
  // chunk's io Uᵀ as the token stage reads it, [slot c·HO + h][64 tokens][V], in chunk_factors.
  void* save_u;
};
static_assert(sizeof(FwdFastParams) == 328, "FwdFastParams layout changed: update src/engines/gdn/params.rs");
#ifndef __CUDACC_RTC__
static_assert(__builtin_offsetof(FwdFastParams, ckpt) == 256 && __builtin_offsetof(FwdFastParams, ckpt_every) == 272,
              "FwdFastParams layout");
#endif

// The forward's tensor maps (session 36; dnnp_tma.cuh): q [T, H, K], k [T, HK, K], v [T, HV, V] and
// o [T, HO, V] as the host encodes them (src/engines/gdn/tma_maps.rs, the one description of their
// dims, boxes and swizzles). Zero (never read) unless the plan runs a kernel that reads them.
struct GdnIoMaps {
  dnnp::TmaDesc q, k, v, o;
};
// The forward's parameter block: FwdFastParams, then the maps. Every forward kernel receives it; an
// entry that reads the maps declares `const __grid_constant__ FwdTmaParams` (the maps must stay in
// parameter space), the others declare the prefix FwdFastParams (the driver copies each entry's
// declared size).
struct FwdTmaParams {
  FwdFastParams fp;
  CuSource cu_src;     // read by the chunk-table entries only (FwdTableParams)
  StateSource st_src;  // likewise
  GdnIoMaps maps;
};
// The prefix the forward's chunk-table entries declare: they also read the caller's cu_seqlens
// and state_indices.
struct FwdTableParams {
  FwdFastParams fp;
  CuSource cu_src;
  StateSource st_src;
};
static_assert(sizeof(FwdTmaParams) == 896, "FwdTmaParams layout changed: update src/engines/gdn/params.rs");
#ifndef __CUDACC_RTC__
static_assert(__builtin_offsetof(FwdTmaParams, maps) == 384, "FwdTmaParams layout");
static_assert(__builtin_offsetof(FwdTmaParams, cu_src) == 328 && __builtin_offsetof(FwdTableParams, cu_src) == 328,
              "FwdTableParams is a prefix of FwdTmaParams");
static_assert(__builtin_offsetof(FwdTmaParams, st_src) == 352 && __builtin_offsetof(FwdTableParams, st_src) == 352,
              "FwdTableParams is a prefix of FwdTmaParams");
#endif

// Seed slot j of (sequence b, head h) in ws_seed ([N·P, HO, V, K] fp32, slot b·P + j): the
// forward's state entering piece j, the backward's too, and its dX seeds in the reversed slot
// P − 1 − j. P and HO as the caller read them (passed in, not re-read from the params: the callers'
// scheduling stays as it was). Every ws_seed address is formed here.
template <int V, int K, typename F>
__device__ __forceinline__ F* seed_slot(F* ws_seed, int P, int HO, int b, int j, int h) {
  return ws_seed + (static_cast<size_t>(b * P + j) * HO + h) * V * K;
}

// The checkpoint sink of sequence b's output scans (none without checkpoints).
__device__ __forceinline__ CkptSink ckpt_sink(const FwdFastParams& fp, int b) {
  return fp.ckpt ? CkptSink{fp.ckpt, fp.ckpt_rows[b], fp.ckpt_every, fp.ckpt_f32} : CkptSink{nullptr, 0, 1, 0};
}

// The forward's checkpoint rows: fp.ckpt_rows[b] = Σ_{b'<b} ceil(T_b' / (64·ckpt_every)) when the
// forward writes checkpoints at a cadence of more than one chunk (at one chunk the chunk table
// serves: ckpt_rows == chunk_offsets). By the chunk-table kernels (one block of OFFSETS_THREADS;
// it reads only cu_seqlens).
__device__ __forceinline__ void fwd_ckpt_rows_body(const FwdFastParams& fp) {
  if (fp.ckpt == nullptr || fp.ckpt_rows == fp.f.chunk_offsets) return;
  seq_span_offsets(fp.f, fp.ckpt_rows, static_cast<long long>(CHUNK) * fp.ckpt_every);
}

// OUT: the output pass (Q⁺, A, Ũ staged, O written). Otherwise the summary pass (W, Kᴿ and,
// for H blocks, Ũ staged; no O).
template <int K, int NW, int STAGES, bool OUT>
struct FastSmem {
  static constexpr int KP = K + 8;
  static constexpr int CP = CHUNK + 8;
  static constexpr int VS = 16 * NW;
  static constexpr size_t w_off = 0;
  static constexpr size_t k_off = w_off + CHUNK * KP * 2;
  static constexpr size_t q_off = k_off + CHUNK * KP * 2;
  static constexpr size_t a_off = q_off + (OUT ? CHUNK * KP * 2 : 0);
  static constexpr size_t u_off = a_off + (OUT ? CHUNK * CP * 2 : 0);
  static constexpr size_t stage = u_off + VS * CP * 2;
  static constexpr int OP = 24;
  static constexpr size_t o_off = STAGES * stage;
  static constexpr size_t bytes = o_off + (OUT ? NW * CHUNK * OP * 2 : 0);
};

// Chunk range [c0, c1) of piece j of sequence b (P pieces of ceil(chunks / P) chunks).
__device__ __forceinline__ void piece_range(const FwdParams& p, int b, int j, int P, int& cb, int& c0,
                                            int& c1) {
  cb = p.chunk_offsets[b];
  const int ce = p.chunk_offsets[b + 1];
  const int per = (ce - cb + P - 1) / P;
  c0 = cb + j * per < ce ? cb + j * per : ce;
  c1 = c0 + per < ce ? c0 + per : ce;
}

// The first-early piece path's cut (session 32: gdn_fwd_slimscan_*_w4dgx0 / _w4dgxr,
// gdn_fwd_slimsum_*_gxr): with fp.first_scale = s > 0, piece 0 spans min(n, ceil(per · s / 256))
// chunks (per = ceil(n / P), n the sequence's chunks) and pieces 1 ..= P − 1 split the rest evenly
// (ceil((n − n_0) / (P − 1)) chunks, trailing pieces possibly empty); s = 0: piece_range.
__device__ __forceinline__ void piece_range_first(const FwdFastParams& fp, int b, int j, int& cb, int& c0, int& c1) {
  const FwdParams& p = fp.f;
  const int P = fp.pieces;
  if (fp.first_scale <= 0 || P < 2) {
    piece_range(p, b, j, P, cb, c0, c1);
    return;
  }
  cb = p.chunk_offsets[b];
  const int ce = p.chunk_offsets[b + 1], n = ce - cb;
  const int per = (n + P - 1) / P;
  const int s0 = (per * fp.first_scale + 255) / 256;
  const int n0 = s0 < n ? s0 : n;
  const int per1 = (n - n0 + P - 2) / (P - 1);
  if (j == 0) {
    c0 = cb;
    c1 = cb + n0;
    return;
  }
  c0 = cb + n0 + (j - 1) * per1 < ce ? cb + n0 + (j - 1) * per1 : ce;
  c1 = c0 + per1 < ce ? c0 + per1 : ce;
}

// State fragments (rows vr, vr + 8; K columns of rows of LD, mma accumulator layout) from / to
// an fp32 [V, LD] state at `src` / `dst` (the piece seeds, summaries and transitions).
template <int K, int LD = K>
__device__ __forceinline__ void load_seed_frags(float (&x)[K / 8][4], const float* src, int vr, int cq) {
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const float2 t = *reinterpret_cast<const float2*>(&src[static_cast<size_t>(vr + 8 * hf) * LD + 8 * nt + cq]);
      x[nt][2 * hf] = t.x;
      x[nt][2 * hf + 1] = t.y;
    }
  }
}
template <int K>
__device__ __forceinline__ void store_fp32_frags(float* dst, const float (&x)[K / 8][4], int vr, int cq) {
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
    for (int hf = 0; hf < 2; ++hf)
      *reinterpret_cast<float2*>(&dst[static_cast<size_t>(vr + 8 * hf) * K + 8 * nt + cq]) =
          make_float2(x[nt][2 * hf], x[nt][2 * hf + 1]);
}
// The summaries' seed: I (is_m: the transition's key-row blocks, K = V) or 0.
template <int K>
__device__ __forceinline__ void identity_frags(float (&x)[K / 8][4], bool is_m, int vr, int cq) {
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int r = vr + 8 * (e >> 1), c = 8 * nt + cq + (e & 1);
      x[nt][e] = (is_m && r == c) ? 1.f : 0.f;
    }
  }
}

// Shared memory of fscan_chunks: the stage tiles of FastSmem over the block's VS = 16·NW/SPLIT
// value rows, the per-warp O tiles (OUT; 64/SPLIT tokens each) and, with SPLIT = 2, the pair
// exchange areas: X as io-dtype A fragments ([NW/2 groups][K/16 key blocks][32 lanes] uint4)
// and Uᵀ as A fragments ([NW/2][4 token blocks][32 lanes] uint4). SPLIT = 1: FastSmem exactly.
template <int K, int NW, int STAGES, bool OUT, int SPLIT>
struct ScanxSmem {
  using F = FastSmem<K, NW / SPLIT, STAGES, OUT>;
  static constexpr int NG = NW / SPLIT;  // value-row groups of 16
  static constexpr size_t o_off = F::o_off;
  static constexpr size_t x_off = o_off + (OUT ? NW * (CHUNK / SPLIT) * F::OP * 2 : 0);
  static constexpr size_t u_off = x_off + (SPLIT > 1 ? NG * (K / 16) * 512 : 0);
  static constexpr size_t bytes = u_off + (SPLIT > 1 ? NG * 4 * 512 : 0);
};

// Pair barrier of a split scan: the two warps of value-row group g (named barrier 1 + g).
__device__ __forceinline__ void pair_sync(int g) {
#ifdef GDN_HOST_EMU
  emu_bar_sync(1 + g, 64);
#else
  asm volatile("bar.sync %0, 64;\n" ::"r"(1 + g) : "memory");
#endif
}

// One stage tile of fscan_chunks (ROWS rows of ROWLEN elements, global rows of ROWLEN, smem rows
// of ROWLEN + 8): FIXED (session 13 round 4) tile_async_fixed (compile-time trip count), else
// tile_async (tid-strided loop); the same 16-byte copies to the same smem places either way.
template <bool FIXED, typename T, int ROWLEN, int ROWS, int NT>
__device__ __forceinline__ void fscan_tile(T* dst, const T* src, int tid) {
  if constexpr (FIXED) tile_async_fixed<T, ROWLEN, ROWS, ROWLEN, NT>(dst, src, tid);
  else tile_async<T, ROWLEN>(dst, src, ROWS, ROWLEN, tid, NT);
}

// ---------------------------------------------------------------------------------------
// fscan_chunks: the forward-direction chunk loop that every forward-state scan runs, over
// chunks [c_begin, c_end) of one (sequence, head), from the state fragments x (updated in place
// to the state leaving chunk c_end − 1). Per chunk, with X = Sᵀ (value rows × keys):
//   P = X Wᵀ;  Uᵀ = Ũᵀ − P (io dtype);  OUT: O = X Q⁺ᵀ + Uᵀ Aᵀ (stored);  X ← e^{Γ_last} X + Uᵀ Kᴿ;
//   REPLAY: the entering state to ws_s (gdn_bwd_fscan's per-chunk S_c). OUT: the entering state to
//   the checkpoint sink ck when one is due (ckpt_store; the forward's state checkpoints; written
//   right after the update that makes it, session 17). with_u = false (the
//   summary's transition blocks) takes Ũ = 0 and stages no Ũ.
// Template knobs (none changes an fp32 operation or its order; every output is bitwise the
// session-1 scan's):
//   NW warps; SPLIT = 1: each warp owns 16 value rows (all keys, all tokens): the block holds
//     VS = 16·NW rows. SPLIT = 2: a pair of warps shares 16 value rows: warp s of the pair
//     computes P, O for tokens [32s, 32s + 32) with the whole X (read as A fragments from the
//     pair's exchange area) and updates keys [K/2·s, K/2·s + K/2) of X with the whole Uᵀ (its
//     half from the other warp through the exchange area): two warps per 16 rows, the same
//     mma sequence per accumulator.
//   STAGES-deep cp.async pipeline. ONEBAR: one block barrier per chunk (wait, barrier, then
//     refill the stage the previous chunk used) instead of two. STAGES = 1 (session 13): one
//     stage, refilled after the chunk's last read (no copy overlaps the math of its block; the
//     shared memory of one stage lets more blocks share an SM).
//   PHASED (session 13; STAGES = 1, SPLIT = 1, !ONEBAR): the one stage is refilled in two halves:
//     half 1 (W, Ũᵀ and, OUT, Q⁺) as soon as every warp is past this chunk's P / O products
//     (their only readers), half 2 (Kᴿ and, OUT, A) after the state update; the chunk waits for
//     half 1 at its top and for half 2 before the products that read it, so each half's copy
//     overlaps the other half's math (three block barriers per chunk).
//   The block's first value row is vs0; v0 = vs0 + 16·(warp % (NW/SPLIT)).
//   FIXED (session 13 round 4, copy17; default): the stage copies by tile_async_fixed (compile-time
//   trip counts, each thread's first piece address once, constant strides; the same 16-byte
//   copies to the same smem places as tile_async's tid-strided loops: bitwise). The backward's
//   psum / fscan_r4 / fscanp pass false (measured slower there: bench/gdn_results.md, copy17).
// ---------------------------------------------------------------------------------------
template <typename T, int K, int V, int NW, int STAGES, bool OUT, bool REPLAY, int SPLIT, bool ONEBAR,
          bool PHASED = false, bool FIXED = true>
__device__ __forceinline__ void fscan_chunks(const FwdParams& p, float (&x)[K / 8 / SPLIT][4], int h, long long cs,
                                             long long ce, int cb, int c_begin, int c_end, int vs0, bool with_u,
                                             float* ws_s, const CkptSink& ck = CkptSink{nullptr, 0, 1, 0}) {
  using SX = ScanxSmem<K, NW, STAGES, OUT, SPLIT>;
  using S = typename SX::F;
  using IO = Io<T>;
  constexpr int KP = S::KP, CP = S::CP, VS = S::VS, NG = SX::NG;
  constexpr int NT = NW * 32;     // threads of the block
  constexpr int KX = K / SPLIT;  // keys of X this warp updates
  constexpr int NPT = 4 / SPLIT; // 16-token blocks of P / O this warp computes
  static_assert(SPLIT == 1 || SPLIT == 2, "SPLIT is 1 or 2");
  static_assert(STAGES >= 2 || (STAGES == 1 && !ONEBAR), "one stage: refilled after its last read (no ONEBAR)");
  static_assert(!PHASED || (STAGES == 1 && SPLIT == 1 && !ONEBAR), "PHASED: one stage, unsplit");
  extern __shared__ __align__(16) unsigned char smem[];
  const int HO = p.ho;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int g = SPLIT > 1 ? warp % NG : warp, s = SPLIT > 1 ? warp / NG : 0;  // group, share
  const int v0 = vs0 + 16 * g;
  const int vr = v0 + (lane >> 2);  // this thread's rows: vr and vr + 8
  const int cq = 2 * (lane & 3);
  const int tok0 = 16 * NPT * s, key0 = KX * s;
  uint4* xx = reinterpret_cast<uint4*>(smem + SX::x_off) + g * (K / 16) * 32;
  uint4* ux = reinterpret_cast<uint4*>(smem + SX::u_off) + g * 4 * 32;
  // SPLIT: this warp's key blocks of X, as io-dtype A fragments, to the pair's exchange area.
  auto put_x = [&] {
#pragma unroll
    for (int kk = 0; kk < KX / 16; ++kk) {
      u32 a[4];
      x_a_frag<T>(a, x, kk);
      xx[(KX / 16 * s + kk) * 32 + lane] = make_uint4(a[0], a[1], a[2], a[3]);
    }
  };
  if (SPLIT > 1) put_x();  // read after the first chunk's barrier

  auto issue = [&](int c, int st) {
    unsigned char* base = smem + st * S::stage;
    const size_t ch = static_cast<size_t>(c) * HO + h;
    fscan_tile<FIXED, T, K, CHUNK, NT>(reinterpret_cast<T*>(base + S::w_off), static_cast<const T*>(p.ws_w) + ch * CHUNK * K, tid);
    fscan_tile<FIXED, T, K, CHUNK, NT>(reinterpret_cast<T*>(base + S::k_off), static_cast<const T*>(p.ws_kr) + ch * CHUNK * K, tid);
    if (OUT) {
      fscan_tile<FIXED, T, K, CHUNK, NT>(reinterpret_cast<T*>(base + S::q_off), static_cast<const T*>(p.ws_q) + ch * CHUNK * K, tid);
      fscan_tile<FIXED, T, CHUNK, CHUNK, NT>(reinterpret_cast<T*>(base + S::a_off), static_cast<const T*>(p.ws_a) + ch * CHUNK * CHUNK, tid);
    }
    if (with_u)
      fscan_tile<FIXED, T, CHUNK, VS, NT>(reinterpret_cast<T*>(base + S::u_off), static_cast<const T*>(p.ws_ut) + (ch * V + vs0) * CHUNK, tid);
  };
  // PHASED: the stage's two halves (issue = both).
  auto issue_h1 = [&](int c) {
    const size_t ch = static_cast<size_t>(c) * HO + h;
    fscan_tile<FIXED, T, K, CHUNK, NT>(reinterpret_cast<T*>(smem + S::w_off), static_cast<const T*>(p.ws_w) + ch * CHUNK * K, tid);
    if (OUT)
      fscan_tile<FIXED, T, K, CHUNK, NT>(reinterpret_cast<T*>(smem + S::q_off), static_cast<const T*>(p.ws_q) + ch * CHUNK * K, tid);
    if (with_u)
      fscan_tile<FIXED, T, CHUNK, VS, NT>(reinterpret_cast<T*>(smem + S::u_off), static_cast<const T*>(p.ws_ut) + (ch * V + vs0) * CHUNK, tid);
  };
  auto issue_h2 = [&](int c) {
    const size_t ch = static_cast<size_t>(c) * HO + h;
    fscan_tile<FIXED, T, K, CHUNK, NT>(reinterpret_cast<T*>(smem + S::k_off), static_cast<const T*>(p.ws_kr) + ch * CHUNK * K, tid);
    if (OUT)
      fscan_tile<FIXED, T, CHUNK, CHUNK, NT>(reinterpret_cast<T*>(smem + S::a_off), static_cast<const T*>(p.ws_a) + ch * CHUNK * CHUNK, tid);
  };
  if constexpr (PHASED) {  // groups in flight at a chunk's top: its half 1, then its half 2
    if (c_begin < c_end) issue_h1(c_begin);
    cp_async_commit();
    if (c_begin < c_end) issue_h2(c_begin);
    cp_async_commit();
  } else {
#pragma unroll
    for (int sidx = 0; sidx < STAGES - 1; ++sidx) {
      if (c_begin + sidx < c_end) issue(c_begin + sidx, sidx);
      cp_async_commit();
    }
  }
  float gl_next = c_begin < c_end ? p.ws_gl[static_cast<size_t>(c_begin) * HO + h] : 0.f;
  // ldmatrix row / column offsets of this lane (non-transposed B fragments, two n-tiles).
  const int brow = (lane & 7) + 8 * (lane >> 4), bcol = 8 * ((lane >> 3) & 1);
  // OUT: the checkpoints (ckpt_store): the state entering chunk c_begin here, that entering chunk
  // c + 1 right after chunk c's state update (off the next chunk's first products).
  if constexpr (OUT) {
    if (c_begin < c_end) ckpt_store<T, KX, K, V>(ck, c_begin - cb, HO, h, key0, x, vr, cq);
  }
  for (int c = c_begin; c < c_end; ++c) {
    const int st = (c - c_begin) % STAGES;
    if (!ONEBAR && !PHASED) {
      if (c + STAGES - 1 < c_end) issue(c + STAGES - 1, (c - c_begin + STAGES - 1) % STAGES);
      cp_async_commit();
    }
    const float gl = gl_next;
    if (c + 1 < c_end) gl_next = p.ws_gl[static_cast<size_t>(c + 1) * HO + h];
    if constexpr (PHASED) {
      cp_async_wait<1>();  // this chunk's half 1 (W, Q⁺, Ũᵀ); its half 2 may still be in flight
    } else if (ONEBAR) {
      cp_async_wait<STAGES - 2>();
    } else {
      cp_async_wait<STAGES - 1>();
    }
    __syncthreads();
    if (ONEBAR) {  // every warp is past the previous chunk: refill its stage
      if (c + STAGES - 1 < c_end) issue(c + STAGES - 1, (c - c_begin + STAGES - 1) % STAGES);
      cp_async_commit();
    }
    unsigned char* base = smem + st * S::stage;
    const T* Ws = reinterpret_cast<const T*>(base + S::w_off);
    const T* Ks = reinterpret_cast<const T*>(base + S::k_off);
    const T* Qs = reinterpret_cast<const T*>(base + S::q_off);
    const T* As = reinterpret_cast<const T*>(base + S::a_off);
    const T* Us = reinterpret_cast<const T*>(base + S::u_off);
    if (REPLAY)
      bwd_store_state_frags<T, KX, K>(ws_s, (static_cast<size_t>(c) * HO + h) * V * K + key0, x, vr, cq,
                                      p.flags & FLAG_BWD_S_IO);
    const long long t0 = cs + static_cast<long long>(c - cb) * CHUNK;
    const int len = static_cast<int>(min_ll(static_cast<long long>(CHUNK), ce - t0));
    const int ur = 16 * g + (lane >> 2);  // row of Ũᵀ within the slice
    u32 uraw[2 * NPT][2];
#pragma unroll
    for (int nt = 0; nt < 2 * NPT; ++nt) {
      uraw[nt][0] = with_u ? ld32(&Us[ur * CP + tok0 + 8 * nt + cq]) : 0u;
      uraw[nt][1] = with_u ? ld32(&Us[(ur + 8) * CP + tok0 + 8 * nt + cq]) : 0u;
    }

    // P = X Wᵀ and (OUT) O = X Q⁺ᵀ (M = 16 value rows, N = this warp's tokens, K = key dim).
    float pacc[2 * NPT][4], oacc[2 * NPT][4];
#pragma unroll
    for (int nt = 0; nt < 2 * NPT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) pacc[nt][e] = oacc[nt][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) {
      u32 a[4];
      if (SPLIT == 1) {
        x_a_frag<T>(a, x, kk);
      } else {
        const uint4 t = xx[kk * 32 + lane];
        a[0] = t.x;
        a[1] = t.y;
        a[2] = t.z;
        a[3] = t.w;
      }
#pragma unroll
      for (int np = 0; np < NPT; ++np) {
        u32 bw[4];
        ldsm_x4(bw, &Ws[(tok0 + 16 * np + brow) * KP + 16 * kk + bcol]);
        IO::mma(pacc[2 * np], a, bw);
        IO::mma(pacc[2 * np + 1], a, bw + 2);
        if (OUT) {
          u32 bq[4];
          ldsm_x4(bq, &Qs[(tok0 + 16 * np + brow) * KP + 16 * kk + bcol]);
          IO::mma(oacc[2 * np], a, bq);
          IO::mma(oacc[2 * np + 1], a, bq + 2);
        }
      }
    }
    if constexpr (PHASED) {
      cp_async_wait<0>();  // this chunk's half 2 (Kᴿ, A)
      __syncthreads();     // ... everyone's; and every warp is past its reads of half 1
      if (c + 1 < c_end) issue_h1(c + 1);
      cp_async_commit();
    }
    // Uᵀ = Ũᵀ − P, as A fragments (tokens are the reduction dim below).
    u32 ua[4][4];
    if (SPLIT == 1) {
      scan_u_frags<T, 2 * NPT>(reinterpret_cast<u32(&)[NPT][4]>(ua), uraw, pacc);
    } else {
      u32 uo[NPT][4];
      scan_u_frags<T, 2 * NPT>(uo, uraw, pacc);
#pragma unroll
      for (int i = 0; i < NPT; ++i) ux[(NPT * s + i) * 32 + lane] = make_uint4(uo[i][0], uo[i][1], uo[i][2], uo[i][3]);
      pair_sync(g);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        const uint4 t = ux[kk * 32 + lane];
        ua[kk][0] = t.x;
        ua[kk][1] = t.y;
        ua[kk][2] = t.z;
        ua[kk][3] = t.w;
      }
    }
    if (OUT) {
      // O += Uᵀ Aᵀ: B[k = j][n = i] = A[i][j]; A is lower triangular (j ≤ i).
#pragma unroll
      for (int np = 0; np < NPT; ++np) {
        const int npg = NPT * s + np;  // the token block's index in the chunk
#pragma unroll
        for (int kk = 0; kk < 4; ++kk) {
          if (kk > npg) break;
          u32 bb[4];
          ldsm_x4(bb, &As[(16 * npg + brow) * CP + 16 * kk + bcol]);
          IO::mma(oacc[2 * np], ua[kk], bb);
          IO::mma(oacc[2 * np + 1], ua[kk], bb + 2);
        }
      }
      // Store O rows (tokens) < len through this warp's smem tile.
      T* Os = reinterpret_cast<T*>(smem + S::o_off) + warp * (CHUNK / SPLIT) * S::OP;
      scan_store_o<T, V, S::OP, 2 * NPT>(Os, oacc, static_cast<T*>(p.o), t0 + tok0, len - tok0, HO, h, v0, lane, cq);
    }
    // X ← e^{Γ_last} X + Uᵀ Kᴿ (this warp's keys).
    scan_state_update<T, KX, KP>(x, ua, Ks + key0, gl, lane);
    if (SPLIT > 1) put_x();  // read after the next chunk's barrier (the pair barrier orders reuse)
    if constexpr (OUT) {
      if (c + 1 < c_end) ckpt_store<T, KX, K, V>(ck, c + 1 - cb, HO, h, key0, x, vr, cq);
    }
    if (!ONEBAR) __syncthreads();  // this stage is refilled by the next iteration's issue
    if constexpr (PHASED) {  // every warp is past its reads of half 2
      if (c + 1 < c_end) issue_h2(c + 1);
      cp_async_commit();
    }
  }
  cp_async_wait<0>();
}

// The forward output scan (OUT; grid V/VS × HO × N·P, P = fp.pieces: piece j of sequence b from
// its seed, or P = 1 from the initial state; the last piece writes the final state) and the
// piece summary pass (!OUT; grid 2·V/VS × HO × N·(P−1): H_j from a zero seed, and M_j over key
// rows by the identity trick, seed X = I, Ũ = 0; K = V).
// PHASED: fscan_chunks' one-stage loop refilled in two halves (STAGES = 1; the w4p output scan
// and the sum1 summary pass, session 13).
template <typename T, int K, int V, int NW, int STAGES, bool OUT, int SPLIT = 1, bool ONEBAR = false, bool PHASED = false>
__device__ __forceinline__ void fwd_scanx_body(const FwdFastParams& fp) {
  static_assert(OUT || SPLIT == 1, "the summary pass runs unsplit");
  constexpr int VS = 16 * NW / SPLIT;
  constexpr int XB = V / VS;  // value-row blocks per (sequence, head)
  constexpr int KX = K / SPLIT;
  const FwdParams& p = fp.f;
  const int P = fp.pieces;

  const int h = blockIdx.y;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int HO = p.ho;
  int b, j;
  piece_of_block(P, OUT, 0, b, j);
  // Summary blocks with blockIdx.x ≥ XB compute M (seed I, Ũ = 0) over key rows (K = V).
  const bool is_m = !OUT && static_cast<int>(blockIdx.x) >= XB;
  const int xb = static_cast<int>(blockIdx.x) % XB;
  const int v0 = xb * VS + 16 * (SPLIT > 1 ? warp % (NW / SPLIT) : warp);
  const int key0 = SPLIT > 1 ? KX * (warp / (NW / SPLIT)) : 0;
  const int vr = v0 + (lane >> 2);  // this thread's rows: vr and vr + 8
  const int cq = 2 * (lane & 3);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  int cb, c_begin, c_end;
  piece_range(p, b, j, P, cb, c_begin, c_end);
  const int row = state_row(p, b);

  float x[KX / 8][4];
  if constexpr (OUT) {
    if (P == 1) {
      load_initial_state_frags<KX, K>(x, p, row, (static_cast<size_t>(row) * HO + h) * V * K + key0, vr, cq);
    } else {
      load_seed_frags<KX, K>(x, seed_slot<V, K>(fp.ws_seed, P, HO, b, j, h) + key0, vr, cq);
    }
  } else {
    identity_frags<K>(x, is_m, vr, cq);
  }

  fscan_chunks<T, K, V, NW, STAGES, OUT, false, SPLIT, ONEBAR, PHASED>(p, x, h, cs, ce, cb, c_begin, c_end, xb * VS,
                                                                        OUT || !is_m, nullptr,
                                                                        OUT ? ckpt_sink(fp, b) : CkptSink{nullptr, 0, 1, 0});

  if constexpr (!OUT) {
    const int pc = b * (P - 1) + j;
    store_fp32_frags<K>((is_m ? fp.ws_m : fp.ws_h) + (static_cast<size_t>(pc) * HO + h) * V * K, x, vr, cq);
  } else {
    if (j == P - 1 && p.final_state)
      store_final_state_frags<KX, K>(x, p, row, (static_cast<size_t>(row) * HO + h) * V * K + key0, vr, cq);
  }
}

// The fp32 chain over pieces, per (32 state rows, head, sequence): seed_0 = initial state (or
// 0), seed_{j+1}[r][c] = Σ_m seed_j[r][m] · M_j[m][c] + H_j[r][c] (m ascending). K = V.
constexpr int CHAIN_THREADS = 256;
constexpr int CHAIN_ROWS = 32;

// A chain block's place: sequence b (blockIdx.z), head h (blockIdx.y), first state row r0 of its
// ROWS (blockIdx.x · ROWS). Every chain body's grid is (K / ROWS, HO, N).
struct ChainAt {
  int b, h, r0;
};
template <int ROWS>
__device__ __forceinline__ ChainAt chain_at() {
  return ChainAt{static_cast<int>(blockIdx.z), static_cast<int>(blockIdx.y), static_cast<int>(blockIdx.x) * ROWS};
}

// The chain's seed_0 for state rows [r0, r0 + ROWS) of (sequence b, head h): the initial state's
// rows (fp32 or bf16 per state_dtype, state row `row`; 0 without one) into xs (rows of XP floats)
// and into seed slot b·P of ws_seed (P = fp.pieces, HO = p.ho, as the caller read them). Shared by fwd_chain_body and fwd_chain2_body.
template <int K, int ROWS, int XP>
__device__ __forceinline__ void fwd_chain_seed0(const FwdFastParams& fp, float (&xs)[ROWS][XP], int P, int HO, int row,
                                                int h, int b, int r0, int tid) {
  const FwdParams& p = fp.f;
  const size_t base = (static_cast<size_t>(row) * HO + h) * K * K + static_cast<size_t>(r0) * K;
  float* seed = seed_slot<K, K>(fp.ws_seed, P, HO, b, 0, h) + static_cast<size_t>(r0) * K;
  for (int i = tid; i < ROWS * K; i += CHAIN_THREADS) {
    const int r = i / K, cc = i % K;
    float val = 0.f;
    if (p.initial_state && row >= 0) {
      if (p.state_dtype == DT_F32) {
        val = static_cast<const float*>(p.initial_state)[base + i];
      } else {
        val = Io<gdn_bf16>::bits_to_f(static_cast<const unsigned short*>(p.initial_state)[base + i]);
      }
    }
    xs[r][cc] = val;
    seed[i] = val;
  }
}

template <int K>
__device__ __forceinline__ void fwd_chain_body(const FwdFastParams& fp) {
#ifdef GDN_HOST_EMU
  static float xs[CHAIN_ROWS][K + 1];  // the CPU emulation runs one block at a time
#else
  __shared__ float xs[CHAIN_ROWS][K + 1];
#endif
  const FwdParams& p = fp.f;
  const int P = fp.pieces, HO = p.ho;
  const ChainAt at = chain_at<CHAIN_ROWS>();
  const int h = at.h, b = at.b, r0 = at.r0;
  const int tid = threadIdx.x;
  constexpr int G = CHAIN_THREADS / K;  // row groups
  constexpr int R = CHAIN_ROWS / G;     // rows per thread
  const int c = tid % K, grp = tid / K;
  const int row = state_row(p, b);
  fwd_chain_seed0<K>(fp, xs, P, HO, row, h, b, r0, tid);
  __syncthreads();
  for (int jj = 0; jj + 1 < P; ++jj) {
    const size_t pc = static_cast<size_t>(b * (P - 1) + jj) * HO + h;
    const float* M = fp.ws_m + pc * K * K;
    const float* H = fp.ws_h + pc * K * K + static_cast<size_t>(r0) * K;
    float* seed = seed_slot<K, K>(fp.ws_seed, P, HO, b, jj + 1, h) + static_cast<size_t>(r0) * K;
    float acc[R];
#pragma unroll
    for (int r = 0; r < R; ++r) acc[r] = 0.f;
    for (int m = 0; m < K; ++m) {
      const float mv = M[static_cast<size_t>(m) * K + c];
#pragma unroll
      for (int r = 0; r < R; ++r) acc[r] += xs[grp * R + r][m] * mv;
    }
    __syncthreads();
#pragma unroll
    for (int r = 0; r < R; ++r) {
      const int rr = grp * R + r;
      const float val = acc[r] + H[static_cast<size_t>(rr) * K + c];
      xs[rr][c] = val;
      seed[static_cast<size_t>(rr) * K + c] = val;
    }
    __syncthreads();
  }
}

// The chain kernels' M-tile copy: tile t = rows [TM·(t mod K/TM), +TM) of piece t / (K/TM)'s
// transition M into stage t mod NS of `ms`; always one commit group per call (empty past the last
// tile) so that the callers' wait counts stay uniform. Shared by fwd_chain2_body and
// fwd_chain4_body_from1.
template <int K, int TM, int NS>
__device__ __forceinline__ void chain_issue_m_tile(const float* ws_m, float (*ms)[TM * K], int t, int tiles, int P,
                                                   int HO, int b, int h, int tid) {
  constexpr int TPP = K / TM;
  if (t < tiles) {
    const int jj = t / TPP, mt = t % TPP;
    const float* src = ws_m + (static_cast<size_t>(b * (P - 1) + jj) * HO + h) * K * K + static_cast<size_t>(mt) * TM * K;
    float* dst = ms[t % NS];
    for (int i = tid; i < TM * K / 4; i += CHAIN_THREADS) cp_async16(dst + 4 * i, src + 4 * i);
  }
  cp_async_commit();
}

// Session 12: fwd_chain_body with M streamed through shared memory (the default, `chain2`
// entries; DNNPLAN_GDN_CHAIN=v1 selects fwd_chain_body). Every piece's M_j (K × K fp32) and H_j
// are the summary pass's outputs, independent of the chain: M_j comes in as tiles of
// CHAIN2_TM rows by 16-byte cp.async, CHAIN2_STAGES tiles in flight, one flat tile sequence
// over all pieces (piece j+1's first tiles land while piece j computes its last); this
// thread's H_j values are loaded before the piece's first tile. The seed rows xs are read four
// columns at a time (16-byte broadcast loads, rows of K + 4 floats). The arithmetic is
// fwd_chain_body's: acc[r] += xs[r][m] · M[m][c] with m ascending, then acc[r] + H[r][c], so
// the seeds are bitwise those of fwd_chain_body. Static shared memory (K = 128: 41,472 bytes),
// the launch shape of fwd_chain_body.
// ROWS: state rows per block (CHAIN_ROWS for the chain2 entries; CHAIN3_ROWS for chain3, the
// same body on twice the blocks: (V / 16, HO, N) = 128 blocks at (1, 32768, 16) instead of 64 on
// 132 SMs). The rows per block change nothing in any element's arithmetic.
constexpr int CHAIN2_TM = 16;
constexpr int CHAIN2_STAGES = 3;
constexpr int CHAIN3_ROWS = 16;
// chain3r's ring (session 32): four 8 KB tiles (three in flight), 41,216 B of static shared memory.
constexpr int CHAIN3R_STAGES = 4;

// The streamed chains' static shared memory (session 34, review item D1): the seed rows xs (rows
// of K + 4 floats: 16-byte rows, read four columns at a time) and the ring ms of NS M tiles of
// CHAIN2_TM rows. K = 128: 41,472 B for chain2 (ROWS 32, NS 3), 41,216 B for chain3r (ROWS 16, NS 4).
template <int K, int ROWS, int NS>
struct ChainSmem {
  alignas(16) float xs[ROWS][K + 4];
  alignas(16) float ms[NS][CHAIN2_TM * K];
};

// The calling kernel's ChainSmem (one static instance per kernel; the CPU emulation runs one
// block at a time, so a static object stands for it there).
template <int K, int ROWS, int NS>
__device__ __forceinline__ ChainSmem<K, ROWS, NS>& chain_smem() {
#ifdef GDN_HOST_EMU
  static ChainSmem<K, ROWS, NS> s;
#else
  __shared__ ChainSmem<K, ROWS, NS> s;
#endif
  return s;
}

// The streamed chains' piece loop (session 34, review item D1): pieces jj = j0 .. P − 2 of the
// block's (sequence, head), M_jj as K / CHAIN2_TM tiles t = jj · TPP + mt through the ring `ms`
// (the caller issued tiles j0 · TPP .. + NS − 2 and `issue(t)` is its chain_issue_m_tile call):
// `begin(H)` before the piece's tiles (H: the block's first row of H_jj), `tile(Mt, mt)` once
// tile t landed for every thread (Mt: its stage), `end(seed)` between the block barriers after
// the piece's last tile (seed: the block's first row of seed slot jj + 1; it may rewrite xs).
// Shared by fwd_chain2_body and fwd_chain4_body_from1: their products differ, the schedule not.
template <int K, int NS, typename Issue, typename Begin, typename Tile, typename End>
__device__ __forceinline__ void chain_piece_loop(const FwdFastParams& fp, const float (*ms)[CHAIN2_TM * K], int j0,
                                                 const ChainAt& at, Issue issue, Begin begin, Tile tile, End end) {
  constexpr int TPP = K / CHAIN2_TM;  // tiles per piece
  const int P = fp.pieces, HO = fp.f.ho;
  for (int jj = j0; jj + 1 < P; ++jj) {
    const size_t pc = static_cast<size_t>(at.b * (P - 1) + jj) * HO + at.h;
    begin(fp.ws_h + pc * K * K + static_cast<size_t>(at.r0) * K);
    for (int mt = 0; mt < TPP; ++mt) {
      const int t = jj * TPP + mt;
      cp_async_wait<NS - 2>();  // this thread's copies of tile t landed
      __syncthreads();          // everyone's did, and stage (t + NS − 1) mod NS was read (tile t − 1)
      issue(t + NS - 1);
      tile(ms[t % NS], mt);
    }
    __syncthreads();
    end(seed_slot<K, K>(fp.ws_seed, P, HO, at.b, jj + 1, at.h) + static_cast<size_t>(at.r0) * K);
    __syncthreads();
  }
  cp_async_wait<0>();  // only the empty groups past the last tile are left: none outstanding at exit
}

template <int K, int ROWS = CHAIN_ROWS>
__device__ __forceinline__ void fwd_chain2_body(const FwdFastParams& fp) {
  constexpr int TM = CHAIN2_TM, NS = CHAIN2_STAGES, TPP = K / TM;  // tiles per piece
  static_assert(K % TM == 0 && TM % 4 == 0, "chain2: tile rows");
  ChainSmem<K, ROWS, NS>& sm = chain_smem<K, ROWS, NS>();
  const FwdParams& p = fp.f;
  const int P = fp.pieces, HO = p.ho;
  const ChainAt at = chain_at<ROWS>();
  const int tid = threadIdx.x;
  constexpr int G = CHAIN_THREADS / K;  // row groups
  constexpr int R = ROWS / G;           // rows per thread
  static_assert(ROWS % G == 0, "chain2: rows per block");
  const int c = tid % K, grp = tid / K;
  const int row = state_row(p, at.b);
  const int tiles = (P - 1) * TPP;
  const auto issue = [&](int t) { chain_issue_m_tile<K, TM, NS>(fp.ws_m, sm.ms, t, tiles, P, HO, at.b, at.h, tid); };
#pragma unroll
  for (int t = 0; t < NS - 1; ++t) issue(t);
  fwd_chain_seed0<K>(fp, sm.xs, P, HO, row, at.h, at.b, at.r0, tid);
  __syncthreads();
  float hv[R], acc[R];
  chain_piece_loop<K, NS>(
      fp, sm.ms, 0, at, issue,
      [&](const float* H) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
          hv[r] = H[static_cast<size_t>(grp * R + r) * K + c];
          acc[r] = 0.f;
        }
      },
      [&](const float* Mt, int mt) {
#pragma unroll
        for (int m4 = 0; m4 < TM; m4 += 4) {
          float mv[4];
#pragma unroll
          for (int i = 0; i < 4; ++i) mv[i] = Mt[(m4 + i) * K + c];
#pragma unroll
          for (int r = 0; r < R; ++r) {
            const float4 x4 = *reinterpret_cast<const float4*>(&sm.xs[grp * R + r][mt * TM + m4]);
            acc[r] += x4.x * mv[0];
            acc[r] += x4.y * mv[1];
            acc[r] += x4.z * mv[2];
            acc[r] += x4.w * mv[3];
          }
        }
      },
      [&](float* seed) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const int rr = grp * R + r;
          const float val = acc[r] + hv[r];
          sm.xs[rr][c] = val;
          seed[static_cast<size_t>(rr) * K + c] = val;
        }
      });
}

// Session 32 (pc32; gdn_fwd_chain3r): fwd_chain2_body from seed 1 with each thread on R = 2 state
// rows × 4 adjacent columns (a warp: 2 rows, 128 columns) instead of 8 rows × 1 column, so that a
// key step reads its M row as one 16-byte load per thread and each 16-byte broadcast read of a
// seed row serves 4 columns: 6 instead of 12 shared-memory loads per 4 keys per thread. Every
// element's arithmetic is fwd_chain2_body's (acc += x · M[m][c] with m ascending from 0, then
// acc + H), so the seeds are bitwise chain3's from the same seed 1.
template <int K, int ROWS, int NS>
__device__ __forceinline__ void fwd_chain4_body_from1(const FwdFastParams& fp) {
  constexpr int TM = CHAIN2_TM, TPP = K / TM;  // tiles per piece
  constexpr int CG = K / 4;                    // column groups of 4
  constexpr int RG = CHAIN_THREADS / CG;       // row groups
  constexpr int R = ROWS / RG;                 // rows per thread
  static_assert(K % TM == 0 && TM % 4 == 0 && CHAIN_THREADS % CG == 0 && ROWS % RG == 0, "chain4: shape");
  ChainSmem<K, ROWS, NS>& sm = chain_smem<K, ROWS, NS>();
  const int P = fp.pieces, HO = fp.f.ho;
  const ChainAt at = chain_at<ROWS>();
  const int tid = threadIdx.x;
  const int c0 = 4 * (tid % CG), grp = tid / CG;
  const int tiles = (P - 1) * TPP;
  const auto issue = [&](int t) { chain_issue_m_tile<K, TM, NS>(fp.ws_m, sm.ms, t, tiles, P, HO, at.b, at.h, tid); };
#pragma unroll
  for (int t = 0; t < NS - 1; ++t) issue(TPP + t);
  {
    const float* s1 = seed_slot<K, K>(fp.ws_seed, P, HO, at.b, 1, at.h) + static_cast<size_t>(at.r0) * K;
#ifdef GDN_HOST_EMU
    for (int i = tid; i < ROWS * K; i += CHAIN_THREADS) sm.xs[i / K][i % K] = s1[i];
#else
    for (int i = tid; i < ROWS * K; i += CHAIN_THREADS) sm.xs[i / K][i % K] = __ldcg(s1 + i);
#endif
  }
  __syncthreads();
  float4 hv[R];
  float acc[R][4];
  chain_piece_loop<K, NS>(
      fp, sm.ms, 1, at, issue,
      [&](const float* H) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
          hv[r] = *reinterpret_cast<const float4*>(&H[static_cast<size_t>(grp * R + r) * K + c0]);
#pragma unroll
          for (int q = 0; q < 4; ++q) acc[r][q] = 0.f;
        }
      },
      [&](const float* Mt, int mt) {
#pragma unroll
        for (int m4 = 0; m4 < TM; m4 += 4) {
          float4 mv[4];
#pragma unroll
          for (int i = 0; i < 4; ++i) mv[i] = *reinterpret_cast<const float4*>(&Mt[(m4 + i) * K + c0]);
#pragma unroll
          for (int r = 0; r < R; ++r) {
            const float4 x4 = *reinterpret_cast<const float4*>(&sm.xs[grp * R + r][mt * TM + m4]);
            const float xv[4] = {x4.x, x4.y, x4.z, x4.w};
#pragma unroll
            for (int i = 0; i < 4; ++i) {
              acc[r][0] += xv[i] * mv[i].x;
              acc[r][1] += xv[i] * mv[i].y;
              acc[r][2] += xv[i] * mv[i].z;
              acc[r][3] += xv[i] * mv[i].w;
            }
          }
        }
      },
      [&](float* seed) {
#pragma unroll
        for (int r = 0; r < R; ++r) {
          const int rr = grp * R + r;
          const float4 val =
              make_float4(acc[r][0] + hv[r].x, acc[r][1] + hv[r].y, acc[r][2] + hv[r].z, acc[r][3] + hv[r].w);
          *reinterpret_cast<float4*>(&sm.xs[rr][c0]) = val;
          *reinterpret_cast<float4*>(&seed[static_cast<size_t>(rr) * K + c0]) = val;
        }
      });
}

constexpr int SUM_STAGES = 2;
// Session 13: the one-stage phased kernels and the blocks per SM their launch bounds ask for:
// the output scan w4p (FastSmem<128, 4, 1, true> = 82,944 B: two per SM) and the summary pass
// sum1 (FastSmem<K, 4, 1, false> = 44,032 B at K = 128: three per SM by registers).
constexpr int SCANX_S1_STAGES = 1;
constexpr int SCANX_S1_MIN_BLOCKS = 2;
constexpr int SUM1_MIN_BLOCKS = 3;

}  // namespace gdn
