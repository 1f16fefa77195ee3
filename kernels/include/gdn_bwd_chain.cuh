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
  int pad_;
  float* ws_h;     // [N·(P−1), HO, V, K]: H_j, then G_j (reversed slots)
  float* ws_m;     // [N·(P−1), HO, K, K]: M_j, then Mᵀ_j (reversed slots)
  float* ws_seed;  // [N·P, HO, V, K]: forward seeds, then dX_out seeds (reversed slots)
  float* ws_mt;    // [N·(P−1), HO, K, K]: Mᵀ_j (reversed slots)
};
static_assert(sizeof(BwdChainParams) == 432, "BwdChainParams layout changed: update src/engines/gdn/params.rs");

// The forward's piece-chain parameters over the backward's inputs and factors.
__device__ __forceinline__ FwdFastParams chain_fwd_view(const BwdChainParams& cp) {
  FwdFastParams fp;
  fp.f = cp.b.f;
  fp.pieces = cp.pieces;
  fp.pad_ = 0;
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
template <typename T, int K, int V, int NW, int STAGES>
__device__ __forceinline__ void bwd_psum_body(const BwdChainParams& cp) {
  using S = FastSmem<K, NW, STAGES, false>;
  using IO = Io<T>;
  constexpr int KP = S::KP, CP = S::CP, VS = S::VS;
  extern __shared__ __align__(16) unsigned char smem[];
  const FwdParams& p = cp.b.f;
  const int P = cp.pieces;

  const int h = blockIdx.y;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int HO = p.ho;
  const int b = blockIdx.z / (2 * P - 1), r = blockIdx.z % (2 * P - 1);
  const bool is_m = r >= P - 1;
  const int j = is_m ? r - (P - 1) : r;
  const int xb = blockIdx.x;
  const int v0 = xb * VS + 16 * warp;
  const int vr = v0 + (lane >> 2);  // this thread's rows: vr and vr + 8
  const int cq = 2 * (lane & 3);
  int cb, c_begin, c_end;
  piece_range(p, b, j, P, cb, c_begin, c_end);

  float x[K / 8][4];
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt) {
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int rr = vr + 8 * (e >> 1), c = 8 * nt + cq + (e & 1);
      x[nt][e] = (is_m && rr == c) ? 1.f : 0.f;
    }
  }
  const bool with_u = !is_m;
  auto issue = [&](int c, int st) {
    unsigned char* base = smem + st * S::stage;
    const size_t ch = static_cast<size_t>(c) * HO + h;
    tile_async<T, K>(reinterpret_cast<T*>(base + S::w_off), static_cast<const T*>(p.ws_w) + ch * CHUNK * K, CHUNK, K, tid, NW * 32);
    tile_async<T, K>(reinterpret_cast<T*>(base + S::k_off), static_cast<const T*>(p.ws_kr) + ch * CHUNK * K, CHUNK, K, tid, NW * 32);
    if (with_u)
      tile_async<T, CHUNK>(reinterpret_cast<T*>(base + S::u_off),
                           static_cast<const T*>(p.ws_ut) + (ch * V + xb * VS) * CHUNK, VS, CHUNK, tid, NW * 32);
  };
#pragma unroll
  for (int sidx = 0; sidx < STAGES - 1; ++sidx) {
    if (c_begin + sidx < c_end) issue(c_begin + sidx, sidx);
    cp_async_commit();
  }
  float gl_next = c_begin < c_end ? p.ws_gl[static_cast<size_t>(c_begin) * HO + h] : 0.f;
  const int brow = (lane & 7) + 8 * (lane >> 4), bcol = 8 * ((lane >> 3) & 1);
  for (int c = c_begin; c < c_end; ++c) {
    const int st = (c - c_begin) % STAGES;
    if (c + STAGES - 1 < c_end) issue(c + STAGES - 1, (c - c_begin + STAGES - 1) % STAGES);
    cp_async_commit();
    const float gl = gl_next;
    if (c + 1 < c_end) gl_next = p.ws_gl[static_cast<size_t>(c + 1) * HO + h];
    cp_async_wait<STAGES - 1>();
    __syncthreads();
    unsigned char* base = smem + st * S::stage;
    const T* Ws = reinterpret_cast<const T*>(base + S::w_off);
    const T* Ks = reinterpret_cast<const T*>(base + S::k_off);
    const T* Us = reinterpret_cast<const T*>(base + S::u_off);
    const int ur = 16 * warp + (lane >> 2);
    u32 uraw[8][2];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      uraw[nt][0] = with_u ? ld32(&Us[ur * CP + 8 * nt + cq]) : 0u;
      uraw[nt][1] = with_u ? ld32(&Us[(ur + 8) * CP + 8 * nt + cq]) : 0u;
    }
    float pacc[8][4];
    zero_frags(pacc);
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
      }
    }
    u32 ua[4][4];
    scan_u_frags<T>(ua, uraw, pacc);
    scan_state_update<T, K, KP>(x, ua, Ks, gl, lane);
    __syncthreads();  // this stage is refilled by the next iteration's issue
  }
  cp_async_wait<0>();

  const size_t hk = static_cast<size_t>(HO) * V * K;
  if (!is_m || j <= P - 2) {
    float* dst = (is_m ? cp.ws_m : cp.ws_h) + (static_cast<size_t>(b) * (P - 1) + j) * hk + static_cast<size_t>(h) * V * K;
#pragma unroll
    for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
      for (int hf = 0; hf < 2; ++hf)
        *reinterpret_cast<float2*>(&dst[static_cast<size_t>(vr + 8 * hf) * K + 8 * nt + cq]) =
            make_float2(x[nt][2 * hf], x[nt][2 * hf + 1]);
  }
  if (is_m && j >= 1) {
    float* dst = cp.ws_mt + (static_cast<size_t>(b) * (P - 1) + (P - 1 - j)) * hk + static_cast<size_t>(h) * V * K;
#pragma unroll
    for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        dst[static_cast<size_t>(8 * nt + cq + (e & 1)) * K + vr + 8 * (e >> 1)] = x[nt][e];
  }
}

// ---------------------------------------------------------------------------------------
// gdn_bwd_fscanp: fwd_scan_body's backward replay (BWD = true) over piece j of sequence b,
// seeded from ws_seed. Only W, Kᴿ and Ũᵀ are staged (no O).
// ---------------------------------------------------------------------------------------
template <typename T, int K, int V, int NW, int STAGES>
__device__ __forceinline__ void bwd_fscan_piece_body(const BwdChainParams& cp) {
  using S = ScanSmem<K, NW, STAGES>;
  using IO = Io<T>;
  constexpr int KP = S::KP, CP = S::CP, VS = S::VS;
  extern __shared__ __align__(16) unsigned char smem[];
  const FwdParams& p = cp.b.f;
  const int P = cp.pieces;

  const int h = blockIdx.y, b = blockIdx.z / P, j = blockIdx.z % P;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int HO = p.ho;
  const int v0 = blockIdx.x * VS + 16 * warp;
  const int vr = v0 + (lane >> 2);  // this thread's rows: vr and vr + 8
  const int cq = 2 * (lane & 3);
  int cb, c_begin, c_end;
  piece_range(p, b, j, P, cb, c_begin, c_end);

  float x[K / 8][4];
  {
    const float* seed = cp.ws_seed + (static_cast<size_t>(b * P + j) * HO + h) * V * K;
#pragma unroll
    for (int nt = 0; nt < K / 8; ++nt) {
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const float2 t = *reinterpret_cast<const float2*>(&seed[static_cast<size_t>(vr + 8 * hf) * K + 8 * nt + cq]);
        x[nt][2 * hf] = t.x;
        x[nt][2 * hf + 1] = t.y;
      }
    }
  }

  auto issue = [&](int c, int st) {
    unsigned char* base = smem + st * S::stage;
    const size_t ch = static_cast<size_t>(c) * HO + h;
    tile_async<T, K>(reinterpret_cast<T*>(base + S::w_off), static_cast<const T*>(p.ws_w) + ch * CHUNK * K, CHUNK, K, tid, NW * 32);
    tile_async<T, K>(reinterpret_cast<T*>(base + S::k_off), static_cast<const T*>(p.ws_kr) + ch * CHUNK * K, CHUNK, K, tid, NW * 32);
    tile_async<T, CHUNK>(reinterpret_cast<T*>(base + S::u_off),
                         static_cast<const T*>(p.ws_ut) + (ch * V + blockIdx.x * VS) * CHUNK, VS, CHUNK, tid, NW * 32);
  };
#pragma unroll
  for (int sidx = 0; sidx < STAGES - 1; ++sidx) {
    if (c_begin + sidx < c_end) issue(c_begin + sidx, sidx);
    cp_async_commit();
  }
  float gl_next = c_begin < c_end ? p.ws_gl[static_cast<size_t>(c_begin) * HO + h] : 0.f;
  for (int c = c_begin; c < c_end; ++c) {
    const int st = (c - c_begin) % STAGES;
    if (c + STAGES - 1 < c_end) issue(c + STAGES - 1, (c - c_begin + STAGES - 1) % STAGES);
    cp_async_commit();
    const float gl = gl_next;
    if (c + 1 < c_end) gl_next = p.ws_gl[static_cast<size_t>(c + 1) * HO + h];
    cp_async_wait<STAGES - 1>();
    __syncthreads();
    unsigned char* base = smem + st * S::stage;
    const T* Ws = reinterpret_cast<const T*>(base + S::w_off);
    const T* Ks = reinterpret_cast<const T*>(base + S::k_off);
    const T* Us = reinterpret_cast<const T*>(base + S::u_off);
    bwd_store_state_frags<T, K>(cp.b.ws_s, (static_cast<size_t>(c) * HO + h) * V * K, x, vr, cq,
                                cp.b.f.flags & FLAG_BWD_S_IO);
    const int ur = 16 * warp + (lane >> 2);  // row of Ũᵀ within the slice
    u32 uraw[8][2];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      uraw[nt][0] = ld32(&Us[ur * CP + 8 * nt + cq]);
      uraw[nt][1] = ld32(&Us[(ur + 8) * CP + 8 * nt + cq]);
    }
    // P = X Wᵀ (M = 16 value rows, N = 64 tokens, K = key dim).
    float pacc[8][4];
    zero_frags(pacc);
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) {
      u32 a[4];
      x_a_frag<T>(a, x, kk);
      const int col = 16 * kk + cq;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        const int n = 8 * nt + (lane >> 2);
        u32 bw[2] = {ld32(&Ws[n * KP + col]), ld32(&Ws[n * KP + col + 8])};
        IO::mma(pacc[nt], a, bw);
      }
    }
    u32 ua[4][4];
    scan_u_frags<T>(ua, uraw, pacc);
    // X ← e^{Γ_last} X + Uᵀ Kᴿ.
    scan_state_update<T, K, KP>(x, ua, Ks, gl, lane);
    __syncthreads();  // this stage is refilled by the next iteration's issue
  }
  cp_async_wait<0>();
}

// ---------------------------------------------------------------------------------------
// gdn_bwd_dsum (SUM) and gdn_bwd_dscanp (!SUM): bwd_dscan_mma_body<…, DS_IO = true> over one
// piece. SUM: pieces j = 1..P−1 (blockIdx.z = b·(P−1) + j − 1) from dX = 0 with the piece's dO;
// nothing per chunk is stored, the end dX (G_j) goes to ws_h. !SUM: pieces j = 0..P−1 from
// their dX_out seeds, storing dS' (io) and dR (fp32) per chunk like gdn_bwd_dscan_io; piece 0
// writes d_initial_state.
// ---------------------------------------------------------------------------------------
template <typename T, int K, int V, int NW, int STAGES, bool SUM>
__device__ __forceinline__ void bwd_dscan_piece_body(const BwdChainParams& cp) {
  constexpr int VS = DscanMmaSmem<K, NW, STAGES>::VS;
  const BwdParams& bp = cp.b;
  const FwdParams& p = bp.f;
  const int P = cp.pieces;

  const int h = blockIdx.y;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int HO = p.ho;
  int b, j;
  if (SUM) {
    b = blockIdx.z / (P - 1);
    j = blockIdx.z % (P - 1) + 1;
  } else {
    b = blockIdx.z / P;
    j = blockIdx.z % P;
  }
  const int vb = blockIdx.x * VS;               // the block's first value row
  const int vr = vb + 16 * warp + (lane >> 2);  // this thread's rows: vr and vr + 8
  const int cq = 2 * (lane & 3);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  int cb, c_begin, c_end;
  piece_range(p, b, j, P, cb, c_begin, c_end);

  float x[K / 8][4];
  if (SUM) {
    zero_frags(x);
  } else {
    const float* seed = cp.ws_seed + (static_cast<size_t>(b * P + (P - 1 - j)) * HO + h) * V * K;
#pragma unroll
    for (int nt = 0; nt < K / 8; ++nt) {
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const float2 t = *reinterpret_cast<const float2*>(&seed[static_cast<size_t>(vr + 8 * hf) * K + 8 * nt + cq]);
        x[nt][2 * hf] = t.x;
        x[nt][2 * hf + 1] = t.y;
      }
    }
  }

  dscan_mma_chunks<T, K, V, NW, STAGES, SUM ? 0 : 2, !SUM>(bp, x, h, cs, ce, cb, c_begin, c_end, vb, vr);

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
  if (SUM) {
    b = blockIdx.z / (P - 1);
    j = blockIdx.z % (P - 1) + 1;
  } else {
    b = blockIdx.z / P;
    j = blockIdx.z % P;
  }
  const int vb = blockIdx.x * 64;
  const DscanW8Thread t = dscan_w8_thread<K>(vb);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  int cb, c_begin, c_end;
  piece_range(p, b, j, P, cb, c_begin, c_end);

  float x[K / 16][4];
  if (SUM) {
    zero_frags(x);
  } else {
    const float* seed = cp.ws_seed + (static_cast<size_t>(b * P + (P - 1 - j)) * HO + h) * V * K;
#pragma unroll
    for (int nt = 0; nt < K / 16; ++nt) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const float2 v = *reinterpret_cast<const float2*>(&seed[static_cast<size_t>(t.vr + 8 * r) * K + t.col0 + 8 * nt + t.cq]);
        x[nt][2 * r] = v.x;
        x[nt][2 * r + 1] = v.y;
      }
    }
  }

  dscan_w8_run<T, K, V, STAGES, SUM ? 0 : 2, !SUM>(bp, x, t.hf, h, cs, ce, cb, c_begin, c_end, vb, t.vr);

  if (SUM) {
    const size_t slot = static_cast<size_t>(b) * (P - 1) + (P - 1 - j);
    store_frag_cols<T, K>(cp.ws_h, (slot * HO + h) * V * K, x, t.vr, t.cq, t.col0, false);  // fp32 G_j
  } else if (j == 0 && bp.d_initial_state) {
    store_d_initial_state_cols<K>(bp, (static_cast<size_t>(b) * HO + h) * V * K, x, t);
  }
}

}  // namespace gdn
