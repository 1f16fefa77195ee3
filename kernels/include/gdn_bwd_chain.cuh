// Gated DeltaNet backward: the exact piece chain for long sequences on few (sequence, head)
// pairs (spec §5, §7.7; the CPU algebra is src/engines/gdn/chunked.rs::backward_piece_chain).
//
// Contract: the same inputs, outputs, workspace regions and numerics class as the backward's
// sequential stages of gdn_bwd.cuh (the forward-state replay gdn_bwd_fscan and the reverse scan
// gdn_bwd_dscan_io: the per-chunk entering states S_c in fp32, the per-chunk dS' in the io dtype,
// dR in fp32, d_initial_state), computed with each sequence's chunks cut into P pieces of
// ceil(chunks / P) chunks (piece_range of gdn_fwd_fast.cuh) so that N·HO·P·(V/64) blocks run at
// once. Parameters: BwdChainParams = BwdParams followed by the piece count and three fp32
// workspace regions (the same tail as FwdFastParams). Exact (fp32 chains, no truncation),
// deterministic (fixed orders, no atomics), no allocation, every buffer in the caller's workspace.
//
// Launches (one stream, in order, between gdn_bwd_prep and gdn_bwd_tokens_tc), P > 1:
//   gdn_bwd_psum   (V/64 × HO × N·(2P−1))  every piece summary both chains need (the loop of
//                  gdn_fwd_sum, fwd_scanx_body's summary pass): H_j of pieces 0..P−2 (zero seed)
//                  into ws_h, and each piece's transition by the identity trick (seed I, Ũ = 0,
//                  key rows; K = V): M_j (j ≤ P−2) into ws_m for the forward chain and Mᵀ_j
//                  (j ≥ 1) into ws_mt for the reverse chain (dX_in = dX_out · Mᵀ_j + G_j)
//   gdn_bwd_pchain (V/32 × HO × N)          the forward's fp32 chain (fwd_chain_body):
//                  ws_seed[b·P + j] = the state entering piece j (piece 0: the initial state or 0)
//   gdn_bwd_fscanp (V/64 × HO × N·P)        every piece's forward replay from its seed, writing the
//                  fp32 state entering each chunk to ws_s (what gdn_bwd_fscan writes)
//   gdn_bwd_dsum   (V/64 × HO × N·(P−1))    the reverse scan over pieces 1..P−1 from dX_out = 0:
//                  G_j, the gradient the piece's own dO sends to its entering state; into ws_h
//                  (free again once gdn_bwd_pchain ran)
//   gdn_bwd_dchain (V/32 × HO × N)          the same fp32 chain kernel on the reverse view (its
//                  "initial state" is d_final_state, its transitions Mᵀ, its summaries G):
//                  ws_seed[b·P + (P−1−j)] = dX leaving piece j (ws_seed is free again once
//                  gdn_bwd_fscanp ran)
//   gdn_bwd_dscanp (V/64 × HO × N·P)        every piece's reverse scan from its dX_out seed: the
//                  per-chunk dS' / dR of gdn_bwd_dscan_io, and d_initial_state from piece 0
// gdn_bwd_dsum_w8 / gdn_bwd_dscanp_w8 (256 threads, same grids) are the same passes on the 8-warp
// chunk loop dscan_w8_chunks (bitwise the same G_j, dS', dR, d_initial_state; the engine takes
// them per launch from 3/4 of a wave of blocks up, BWD_DSCAN_RULE).
// The reverse-chain regions use reversed slots, b·(P−1) + (P−1−j) for piece j, so that the
// forward's chain kernel runs the reverse chain unchanged.
// Empty pieces (sequences shorter than P·per chunks, empty sequences) give G = 0, Mᵀ = I and
// M = I, H = 0 exactly, so the chains pass seeds through bitwise.
#pragma once

#include "gdn_bwd.cuh"
#include "gdn_fwd_fast.cuh"

namespace gdn {

struct BwdChainParams {
  BwdParams b;
  int pieces;  // P ≥ 1
  int ov_need;  // the overlap's flag value of a complete unit: ≤ 1 one producer block per unit (1);
                // 2 the split reverse scan's two halves (session 29, gdn_bwd_dscan_ov2gxsh)
  float* ws_h;     // [N·(P−1), HO, V, K]: H_j, then G_j (reversed slots)
  float* ws_m;     // [N·(P−1), HO, K, K]: M_j, then Mᵀ_j (reversed slots)
  float* ws_seed;  // [N·P, HO, V, K]: forward seeds, then dX_out seeds (reversed slots)
  float* ws_mt;    // [N·(P−1), HO, K, K]: Mᵀ_j (reversed slots)
  // The overlapped reverse scan -> token stage (gdn_bwd_overlap.cuh; null otherwise):
  unsigned* ov_flags;  // [chunk slots, HO]: unit (c, h) published by the reverse scan
  int* ov_order;       // [chunk slots]: the token stage's chunk order (reverse-scan order)
};
static_assert(sizeof(BwdChainParams) == 456, "BwdChainParams layout changed: update src/engines/gdn/params.rs");

// The forward's piece-chain parameters over the backward's inputs and factors.
__device__ __forceinline__ FwdFastParams chain_fwd_view(const BwdChainParams& cp) {
  FwdFastParams fp;
  fp.f = cp.b.f;
  fp.pieces = cp.pieces;
  fp.first_scale = 0;
  fp.ws_h = cp.ws_h;
  fp.ws_m = cp.ws_m;
  fp.ws_seed = cp.ws_seed;
  return fp;
}

// The reverse chain as the forward's chain kernel sees it: seed_0 = d_final_state (or 0),
// seed_{i+1} = seed_i · M'_i + H'_i with M'_i = Mᵀ_{P−1−i}, H'_i = G_{P−1−i}.
__device__ __forceinline__ FwdFastParams chain_rev_view(const BwdChainParams& cp) {
  FwdFastParams fp = chain_fwd_view(cp);
  fp.ws_m = cp.ws_mt;
  fp.f.initial_state = cp.b.d_final_state;
  fp.f.state_indices = nullptr;
  return fp;
}

// ---------------------------------------------------------------------------------------
// gdn_bwd_psum: the summaries both chains need, in one launch (grid V/VS × HO × N·(2P−1)): for
// z % (2P−1) = r < P−1 the value-row blocks of H_r (piece r from a zero seed), otherwise the
// key-row blocks (K = V) of piece j = r − (P−1)'s transition by the identity trick (seed I,
// Ũ = 0): M_j for the forward chain (j ≤ P−2, slot b·(P−1) + j of ws_m) and its transpose
// Mᵀ_j for the reverse chain (j ≥ 1, slot b·(P−1) + (P−1−j) of ws_mt). The loop is
// fwd_scanx_body's summary pass (gdn_fwd_fast.cuh), so H_j and M_j are bitwise gdn_fwd_sum's.
// ---------------------------------------------------------------------------------------
// PHASED, FIXED: fscan_chunks' knobs (session 14, `gdn_bwd_psum1_*`: one stage refilled in two
// halves with compile-time copies, the forward's sum1 loop; bitwise the same H_j, M_j, Mᵀ_j).
// MT_ONLY (session 17, `gdn_bwd_psumt_*` / `gdn_bwd_psumt1_*`: the backward with state
// checkpoints, whose forward states come without the forward chain): only the transitions the
// reverse chain reads, Mᵀ_j of pieces j = 1..P−1 (grid V/VS × HO × N·(P−1), z = b·(P−1) + j − 1),
// bitwise the full pass's; no H_j, no M_j.
// The summary block's stores (this thread's rows vr, vr + 8 of piece j's H_j or transition, b's
// sequence; P pieces, HO heads): H_j / M_j (j ≤ P−2; not MT_ONLY) to slot b·(P−1) + j of ws_h / ws_m, Mᵀ_j (j ≥ 1) to
// slot b·(P−1) + (P−1−j) of ws_mt. Shared by gdn_bwd_psum* and the slim gdn_bwd_psum_sl.
template <int K, int V, bool MT_ONLY>
__device__ __forceinline__ void bwd_psum_store(const BwdChainParams& cp, const float (&x)[K / 8][4], int b, int j,
                                               bool is_m, int P, int HO, int h, int vr, int cq) {
  const size_t hk = static_cast<size_t>(HO) * V * K;
  if (!MT_ONLY && (!is_m || j <= P - 2))
    store_fp32_frags<K>((is_m ? cp.ws_m : cp.ws_h) + (static_cast<size_t>(b) * (P - 1) + j) * hk + static_cast<size_t>(h) * V * K,
                        x, vr, cq);
  if (is_m && j >= 1) {
    float* dst = cp.ws_mt + (static_cast<size_t>(b) * (P - 1) + (P - 1 - j)) * hk + static_cast<size_t>(h) * V * K;
#pragma unroll
    for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        dst[static_cast<size_t>(8 * nt + cq + (e & 1)) * K + vr + 8 * (e >> 1)] = x[nt][e];
  }
}

template <typename T, int K, int V, int NW, int STAGES, bool PHASED = false, bool FIXED = false, bool MT_ONLY = false>
__device__ __forceinline__ void bwd_psum_body(const BwdChainParams& cp) {
  constexpr int VS = 16 * NW;
  const FwdParams& p = cp.b.f;
  const int P = cp.pieces;

  const int h = blockIdx.y;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int HO = p.ho;
  const int zs = MT_ONLY ? P - 1 : 2 * P - 1;  // blocks per sequence
  const int b = blockIdx.z / zs, r = blockIdx.z % zs + (MT_ONLY ? P : 0);
  const bool is_m = r >= P - 1;
  const int j = is_m ? r - (P - 1) : r;
  const int xb = blockIdx.x;
  const int vr = xb * VS + 16 * warp + (lane >> 2);  // this thread's rows: vr and vr + 8
  const int cq = 2 * (lane & 3);
  int cb, c_begin, c_end;
  piece_range(p, b, j, P, cb, c_begin, c_end);

  float x[K / 8][4];
  identity_frags<K>(x, is_m, vr, cq);
  // The summary pass of fwd_scanx_body (no token positions are used: cs = ce = 0).
  fscan_chunks<T, K, V, NW, STAGES, false, false, 1, false, PHASED, FIXED>(p, x, h, 0, 0, cb, c_begin, c_end, xb * VS, !is_m, nullptr);
  bwd_psum_store<K, V, MT_ONLY>(cp, x, b, j, is_m, P, HO, h, vr, cq);
}

// ---------------------------------------------------------------------------------------
// The backward's forward-state replay on fscan_chunks (REPLAY: W, Kᴿ and Ũᵀ staged, no O, the
// entering state of every chunk to ws_s; fp32 or, with FLAG_BWD_S_IO, the io dtype), over piece
// j = z % P of sequence b = z / P (P = cp.pieces), from its seed in ws_seed, or, with P = 1, from
// the initial state. Grid V/VS × HO × N·P, VS = 16·NW/SPLIT.
//   gdn_bwd_fscanp_*       NW = 4, SPLIT = 1, 3 stages, two barriers per chunk: the piece
//                          replay (P > 1) as in session 5
//   gdn_bwd_fscan_r4_*     NW = 4, SPLIT = 1, 2 stages, one barrier per chunk
//   gdn_bwd_fscan_r8_*     NW = 8, SPLIT = 2 (two warps per 16 value rows), 2 stages, one barrier
// Bitwise gdn_bwd_fscan's ws_s (fwd_scan_body, BWD = true), which also stages Q⁺ and A and runs
// the O products it never stores.
// ---------------------------------------------------------------------------------------
// PHASED, FIXED: fscan_chunks' knobs (session 14, `gdn_bwd_fscanp1_*`: one stage refilled in two
// halves, 44 KB at K = 128, so that P ≈ 8 pieces' replays run in one wave; bitwise the same ws_s).
template <typename T, int K, int V, int NW, int STAGES, int SPLIT = 1, bool ONEBAR = false, bool PHASED = false,
          bool FIXED = false>
__device__ __forceinline__ void bwd_fscan_piece_body(const BwdChainParams& cp) {
  constexpr int VS = 16 * NW / SPLIT, KX = K / SPLIT;
  const FwdParams& p = cp.b.f;
  const int P = cp.pieces;

  const int h = blockIdx.y;
  int b, j;
  piece_of_block(P, true, 0, b, j);
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int HO = p.ho;
  const int vr = blockIdx.x * VS + 16 * (SPLIT > 1 ? warp % (NW / SPLIT) : warp) + (lane >> 2);
  const int key0 = SPLIT > 1 ? KX * (warp / (NW / SPLIT)) : 0;
  const int cq = 2 * (lane & 3);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  int cb, c_begin, c_end;
  piece_range(p, b, j, P, cb, c_begin, c_end);

  float x[KX / 8][4];
  if (P == 1) {
    const int row = state_row(p, b);  // b ≥ 0: the backward binds no pool
    load_state_frags<KX, K>(x, p.initial_state, p.state_dtype, (static_cast<size_t>(row) * HO + h) * V * K + key0, vr, cq);
  } else {
    load_seed_frags<KX, K>(x, seed_slot<V, K>(cp.ws_seed, P, HO, b, j, h) + key0, vr, cq);
  }
  fscan_chunks<T, K, V, NW, STAGES, false, true, SPLIT, ONEBAR, PHASED, FIXED>(p, x, h, cs, ce, cb, c_begin, c_end, blockIdx.x * VS, true,
                                                                 cp.b.ws_s);
}

// ---------------------------------------------------------------------------------------
// Session 17: the forward-state replay seeded from state checkpoints (spec §3.4, §4.5
// "Recompute vs checkpoints", the "coarse" row): checkpoint row r of sequence b (r =
// ckpt_rows[b] + j) holds the stored-domain state entering the sequence's chunk j·m (m =
// ckpt_every chunks per row), in the io dtype or fp32 (ckpt_f32). One block per (value-row
// slice, head, row): the piece of chunks [cb + j·m, min(cb + (j + 1)·m, ce)) from that row, the
// entering state of every chunk to ws_s (what bwd_fscan_piece_body writes), without the state
// update of the piece's last chunk (its result is the next row). Grid V/VS × HO × R with R ≥ the
// rows in use (the plan: max(T/c + N, 1)); blocks past ckpt_rows[N] return. No forward chain,
// no summaries H_j, no seeds region. Rows in fp32 that hold the replay's fp32 carry give ws_s
// bitwise the uncut replay's; io rows differ by their rounding (every entering state of a row's
// first chunk is then the row itself).
// BwdCkptParams = BwdChainParams followed by the checkpoint input (the plan passes this block to
// every kernel of the backward; the others read their prefix).
struct BwdCkptParams {
  BwdChainParams cp;
  const void* ckpt;  // [rows, HO, V, K] io dtype or fp32 (the backward's state_checkpoints; null: none)
  const int* ckpt_rows;  // [N + 1] first row of each sequence (chunk_offsets when ckpt_every == 1)
  int ckpt_every;        // chunks per checkpoint row m ≥ 1
  int ckpt_f32;          // 1: fp32 rows, 0: io-dtype rows
};
static_assert(sizeof(BwdCkptParams) == 480, "BwdCkptParams layout changed: update src/engines/gdn/params.rs");

// The backward's parameter block (session 39): BwdCkptParams, then the token tile's ring maps (the
// tw7 stage's; 128-byte aligned, offset 512). Every backward launch takes it; a kernel reads the
// prefix it declares (tw7 declares the whole block, `const __grid_constant__`: the maps stay in
// parameter space).
struct BwdTmaParams {
  BwdCkptParams c;
  CuSource cu_src;  // read by the chunk-table entries only (BwdTableParams)
  TwRingMaps maps;
};
// The prefix the backward's chunk-table entries declare: they also read the caller's cu_seqlens.
struct BwdTableParams {
  BwdCkptParams c;
  CuSource cu_src;
};
static_assert(sizeof(BwdTmaParams) == 1024, "BwdTmaParams layout changed: update src/engines/gdn/params.rs");
#ifndef __CUDACC_RTC__
static_assert(__builtin_offsetof(BwdTmaParams, maps) == 512, "BwdTmaParams layout");
static_assert(__builtin_offsetof(BwdTmaParams, cu_src) == 480 && __builtin_offsetof(BwdTableParams, cu_src) == 480,
              "BwdTableParams is a prefix of BwdTmaParams");
#endif

// State fragments (rows vr, vr + 8; K columns of rows of LD) of a checkpoint row at element
// `base`: fp32 pairs, or io-dtype pairs widened (T: bf16 or fp16).
template <typename T, int K, int LD = K>
__device__ __forceinline__ void load_ckpt_frags(float (&x)[K / 8][4], const void* src, bool f32, size_t base, int vr,
                                                int cq) {
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const size_t idx = base + static_cast<size_t>(vr + 8 * hf) * LD + 8 * nt + cq;
      if (f32) {
        const float2 t = *reinterpret_cast<const float2*>(static_cast<const float*>(src) + idx);
        x[nt][2 * hf] = t.x;
        x[nt][2 * hf + 1] = t.y;
      } else {
        const u32 t = *reinterpret_cast<const u32*>(static_cast<const unsigned short*>(src) + idx);
        const T* e = reinterpret_cast<const T*>(&t);
        x[nt][2 * hf] = Io<T>::to_f(e[0]);
        x[nt][2 * hf + 1] = Io<T>::to_f(e[1]);
      }
    }
  }
}

// gdn_bwd_ckrows (one block of OFFSETS_THREADS): the checkpoint rows' table, ckpt_rows[b] =
// Σ_{b'<b} ceil(T_b' / (64·m)) (the forward's fwd_ckpt_rows_body; at m = 1 the chunk table
// serves and the plan does not launch this).
__device__ __forceinline__ void bwd_ckpt_rows_body(const BwdCkptParams& kp) {
  seq_span_offsets(kp.cp.b.f, const_cast<int*>(kp.ckpt_rows), static_cast<long long>(CHUNK) * kp.ckpt_every);
}

// The seeded replay (see above; NW = 4, SPLIT = 1; the knobs of bwd_fscan_piece_body).
template <typename T, int K, int V, int NW, int STAGES, bool ONEBAR = false, bool PHASED = false, bool FIXED = false>
__device__ __forceinline__ void bwd_fscan_ckpt_body(const BwdCkptParams& kp) {
  constexpr int VS = 16 * NW;
  const BwdChainParams& cp = kp.cp;
  const FwdParams& p = cp.b.f;
  const int r = blockIdx.z, n = p.n_seqs;
  if (r >= kp.ckpt_rows[n]) return;
  // The sequence: the last b with ckpt_rows[b] ≤ r (empty sequences repeat their successor's
  // first row, so it is the one whose rows hold r).
  int lo = 0, hi = n - 1;
  while (lo < hi) {
    const int mid = (lo + hi + 1) >> 1;
    if (kp.ckpt_rows[mid] <= r) lo = mid;
    else hi = mid - 1;
  }
  const int b = lo, j = r - kp.ckpt_rows[b], m = kp.ckpt_every;
  const int h = blockIdx.y;
  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const int HO = p.ho;
  const int vr = blockIdx.x * VS + 16 * warp + (lane >> 2);
  const int cq = 2 * (lane & 3);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  const int cb = p.chunk_offsets[b], c_end = p.chunk_offsets[b + 1];
  const int c0 = cb + j * m, c1 = c0 + m < c_end ? c0 + m : c_end;  // c0 < c1 (j < ceil(chunks / m))

  float x[K / 8][4];
  load_ckpt_frags<T, K>(x, kp.ckpt, kp.ckpt_f32 != 0, (static_cast<size_t>(r) * HO + h) * V * K, vr, cq);
  // Chunks c0 .. c1 − 2 with their updates, then the last chunk's entering state alone.
  fscan_chunks<T, K, V, NW, STAGES, false, true, 1, ONEBAR, PHASED, FIXED>(p, x, h, cs, ce, cb, c0, c1 - 1,
                                                                           blockIdx.x * VS, true, cp.b.ws_s);
  bwd_store_state_frags<T, K, K>(cp.b.ws_s, (static_cast<size_t>(c1 - 1) * HO + h) * V * K, x, vr, cq,
                                 p.flags & FLAG_BWD_S_IO);
}

// ---------------------------------------------------------------------------------------
// gdn_bwd_dsum (SUM) and gdn_bwd_dscanp (!SUM): bwd_dscan_mma_body<…, DS_IO = true> over one
// piece. SUM: pieces j = 1..P−1 (blockIdx.z = b·(P−1) + j − 1) from dX = 0 with the piece's dO;
// nothing per chunk is stored, the end dX (G_j) goes to ws_h. !SUM: pieces j = 0..P−1 from
// their dX_out seeds, storing dS' (io) and dR (fp32) per chunk like gdn_bwd_dscan_io; piece 0
// writes d_initial_state.
// ---------------------------------------------------------------------------------------
// PHASED (session 14, `gdn_bwd_dsum1_*`; the seeded pass "dscanp1" was built and measured, not
// bundled): dscan_mma_chunks' one-stage loop refilled in two halves (80 KB at K = 128: two blocks
// per SM; bitwise the same G_j, and for the seeded pass dS', dR and d_initial_state).
// PUBW (session 18, gdn_bwd_dscanp_ov5): the publishing seeded pass with its publisher warp
// (dscan_mma_chunks' PUBW; NW + 1 warps, warp NW runs dscan_publisher).
template <typename T, int K, int V, int NW, int STAGES, bool SUM, bool PUB = false, bool R2 = false, bool PHASED = false,
          bool PUBW = false, bool DR_IO = false>
__device__ __forceinline__ void bwd_dscan_piece_body(const BwdChainParams& cp) {
  constexpr int VS = DscanMmaSmem<K, NW, STAGES>::VS;
  static_assert(!PUB || (!SUM && VS == V), "a publishing reverse scan holds all value rows of its unit");
  if constexpr (PUB) dnnp_launch_dependents();
  const BwdParams& bp = cp.b;
  const FwdParams& p = bp.f;
  const int P = cp.pieces;

  const int h = blockIdx.y;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int HO = p.ho;
  int b, j;
  piece_of_block(P, !SUM, 1, b, j);
  const int vb = blockIdx.x * VS;               // the block's first value row
  const int vr = vb + 16 * warp + (lane >> 2);  // this thread's rows: vr and vr + 8
  const int cq = 2 * (lane & 3);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  int cb, c_begin, c_end;
  piece_range(p, b, j, P, cb, c_begin, c_end);
  if constexpr (PUBW) {
    if (warp == NW) {  // the publisher warp: the loop's barriers and flags only
      dscan_publisher(cp.ov_flags, h, HO, c_begin, c_end);
      return;
    }
  }

  float x[K / 8][4];
  if (SUM) {
    zero_frags(x);
  } else {
    load_seed_frags<K>(x, seed_slot<V, K>(cp.ws_seed, P, HO, b, P - 1 - j, h), vr, cq);
  }

  dscan_mma_chunks<T, K, V, NW, STAGES, SUM ? 0 : 2, !SUM, PUB, R2, PHASED, PUBW, DR_IO>(bp, x, h, cs, ce, cb, c_begin, c_end,
                                                                                   vb, vr, cp.ov_flags);

  if (SUM) {
    const size_t slot = static_cast<size_t>(b) * (P - 1) + (P - 1 - j);
    bwd_store_state_frags<T, K>(cp.ws_h, (slot * HO + h) * V * K, x, vr, cq, false);  // fp32 G_j
  } else if (j == 0 && bp.d_initial_state) {
    store_d_initial_state<K>(bp, (static_cast<size_t>(b) * HO + h) * V * K, x, vr, cq);
  }
}


// gdn_bwd_dsum_w8 (SUM) / gdn_bwd_dscanp_w8 (!SUM): bwd_dscan_piece_body on the 8-warp chunk loop
// (dscan_w8_chunks; same grids, bitwise the same G_j, dS', dR and d_initial_state).
template <typename T, int K, int V, int STAGES, bool SUM>
__device__ __forceinline__ void bwd_dscan_w8_piece_body(const BwdChainParams& cp) {
  const BwdParams& bp = cp.b;
  const FwdParams& p = bp.f;
  const int P = cp.pieces;
  const int h = blockIdx.y;
  const int HO = p.ho;
  int b, j;
  piece_of_block(P, !SUM, 1, b, j);
  const int vb = blockIdx.x * 64;
  const DscanW8Thread t = dscan_w8_thread<K>(vb);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  int cb, c_begin, c_end;
  piece_range(p, b, j, P, cb, c_begin, c_end);

  float x[K / 16][4];
  if (SUM) {
    zero_frags(x);
  } else {
    // This thread's K / 2 key columns from t.col0 (rows of K).
    load_seed_frags<K / 2, K>(x, seed_slot<V, K>(cp.ws_seed, P, HO, b, P - 1 - j, h) + t.col0, t.vr,
                              t.cq);
  }

  dscan_w8_run<T, K, V, STAGES, SUM ? 0 : 2, !SUM>(bp, x, t.hf, h, cs, ce, cb, c_begin, c_end, vb, t.vr);

  if (SUM) {
    const size_t slot = static_cast<size_t>(b) * (P - 1) + (P - 1 - j);
    store_frag_cols<T, K>(cp.ws_h, (slot * HO + h) * V * K, x, t.vr, t.cq, t.col0, false);  // fp32 G_j
  } else if (j == 0 && bp.d_initial_state) {
    store_d_initial_state_cols<K>(bp, (static_cast<size_t>(b) * HO + h) * V * K, x, t);
  }
}

// Session 14: the piece chain's one-stage phased passes (the forward's occ13 lever, backward
// side) and the blocks per SM their launch bounds ask for (K = 128): psum1 (FastSmem<128,4,1,false>
// = 44,032 B, the forward's sum1 loop: three per SM by registers), fscanp1 (the replay on the same
// one-stage loop, 44,032 B) and dsum1 (the reverse summaries on dscan_mma_chunks' PHASED loop,
// DscanMmaSmem<128,4,1>::bytes = 79,872 B: two per SM).
constexpr int PSUM1_MIN_BLOCKS = 3;
constexpr int FSCANP1_MIN_BLOCKS = 3;
constexpr int DSUM1_MIN_BLOCKS = 2;

}  // namespace gdn
