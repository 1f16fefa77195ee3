// gdn_bwd_overlap.cuh: the backward's reverse scan and token stage running at the same time
// (programmatic dependent launch + per-unit flags, kernels/include/dnnp_overlap.cuh).
//
// Launch sequence (one stream; src/engines/gdn/backward.rs, DNNPLAN_GDN_BWD_OVERLAP):
//  1. gdn_bwd_chunk_order_rev (1 block, OFFSETS_THREADS; replaces gdn_bwd_chunk_offsets): the chunk
//     table (and with FLAG_SEQ_ORDER the longest-first seq_order, chunk_offsets_body), ov_flags
//     zeroed (stream order: before the producer, on every execute and graph replay), and ov_order =
//     the live chunk slots in the order the reverse scan produces them.
//  2. prep, replay (unchanged), [piece chain up to dchain, unchanged]
//  3. the producer, launched normally: gdn_bwd_dscan_ov (1 × HO × N) or, with pieces,
//     gdn_bwd_dscanp_ov (1 × HO × N·P): the 4-warp reverse scan's chunk loop (dscan_mma_chunks) on
//     V / 16 warps, so that one block holds all V value rows of its (sequence or piece, head) and
//     is the unit's only writer; each warp runs exactly the 4-warp kernel's instructions for its
//     16 rows (bitwise the same dS', dR, d_initial_state). Every block calls
//     dnnp_launch_dependents() first and publishes unit (c, h) after its chunk's stores.
//     Since session 9 the default producer is gdn_bwd_dscan_ov2 / gdn_bwd_dscanp_ov2: the same
//     loop's R2 form (dscan_mma_chunks: copies at compile-time trip counts, Kᴿ by ldmatrix.x4,
//     one block barrier per chunk that also publishes the previous chunk's unit, dS' staged per
//     warp into 16-byte stores; the same mma sequence, bitwise); DNNPLAN_GDN_BWD_DSCAN=ov keeps
//     the session-7 kernels.
//  4. the consumer, launched with LaunchConfig::programmatic: gdn_bwd_tokens_tc5_ov (chunk slots ×
//     HO, as tc5): block b (linear index, x fastest) takes rank r = b / HO, head b % HO, i.e. the
//     slot ov_order[r] (tokens_ov_unit), waits for its unit's flag (TokUnitFlagWait; REV >= 12 inside
//     the tile, after the copies that do not depend on the scan) and runs tc5's tile unchanged. Only
//     the grid's last block calls dnnp_wait_prerequisites() before it exits: the kernel completes
//     only after that block, i.e. after the producer (so the next launch and the caller see
//     d_initial_state), while every other block leaves its SM as soon as its tile is done (a
//     griddepcontrol.wait in every block would hold each SM until the scan ends).
// Deadlock freedom (dnnp_overlap.cuh's contract): the producer never waits on anything but its
// own copies; the consumer grid starts only once every producer block is resident (PDL), so every
// unit a consumer waits for is being produced. The plan overlaps only when the producer's blocks
// (one per unit row: N·P·HO) fill at most 4 waves of the SMs (BWD_OVERLAP_RULE): a tc5 block
// takes a whole SM (512 threads × 128 registers = the register file), so token blocks run only on
// SMs that hold no reverse-scan block (at first the ones the scan leaves free, then each one a
// finished scan block frees).
// Rank order: units (s, g), s = the chunk's position from the END of its scan segment g
// (a sequence, or a piece of one), ordered by s, then g; so the consumer takes chunks in the order
// the producer's blocks, all advancing one chunk per step, publish them (ragged batches and pieces
// included). Any order would be correct; this one makes the consumer rarely wait. With FLAG_SEQ_ORDER
// (session 34) the producer's blocks take the sequences longest-first; the ranks stay (s, g): the
// flags are per (chunk, head), so the hand-over is unchanged, only which SM runs which unit row.
#pragma once

#include "gdn_bwd_chain.cuh"
#ifndef GDN_HOST_EMU  // the CPU emulation defines the hand-over primitives (bench/gdn_host_emu.h)
#include "dnnp_overlap.cuh"
#endif

namespace gdn {

// At most this many scan segments (sequences × pieces) get the rank order; beyond it
// gdn_bwd_chunk_order_rev writes the identity order (correct, just not the producer's order), and the
// plan does not overlap (src/engines/gdn/backward.rs, BWD_OVERLAP_MAX_SEGMENTS).
constexpr int OVERLAP_MAX_SEGMENTS = 64;

// After the chunk table (p.chunk_offsets) exists: ov_flags zeroed, ov_order written. One block of
// OFFSETS_THREADS threads (the CPU emulation runs it on its own chunk table).
__device__ __forceinline__ void bwd_chunk_order_tail(const BwdChainParams& cp) {
  const FwdParams& p = cp.b.f;
  const int tid = threadIdx.x;
  const int HO = p.ho, n = p.n_seqs;
  for (int i = tid; i < p.max_chunks * HO; i += OFFSETS_THREADS) cp.ov_flags[i] = 0u;
  const int P = cp.pieces > 1 ? cp.pieces : 1;
  const int G = n * P;
  const int live = p.chunk_offsets[n];
#ifdef GDN_HOST_EMU
  static int seg_len[OVERLAP_MAX_SEGMENTS];  // the emulation runs one block at a time
#else
  __shared__ int seg_len[OVERLAP_MAX_SEGMENTS];
#endif
  if (G > OVERLAP_MAX_SEGMENTS) {
    for (int c = tid; c < live; c += OFFSETS_THREADS) cp.ov_order[c] = c;
    return;
  }
  for (int g = tid; g < G; g += OFFSETS_THREADS) {
    int cb, c0, c1;
    piece_range(p, g / P, g % P, P, cb, c0, c1);
    seg_len[g] = c1 - c0;
  }
  __syncthreads();
  for (int c = tid; c < live; c += OFFSETS_THREADS) {
    const int lo = seq_of_chunk(p, c);
    const int cb = p.chunk_offsets[lo], ce = p.chunk_offsets[lo + 1];
    const int per = (ce - cb + P - 1) / P;  // piece_range's cut
    const int j = (c - cb) / per;
    const int c1 = cb + (j + 1) * per < ce ? cb + (j + 1) * per : ce;
    const int s = c1 - 1 - c, g0 = lo * P + j;
    cp.ov_order[overlap_unit_rank(s, g0, G, [&](int g) { return seg_len[g]; })] = c;
  }
}

// gdn_bwd_chunk_order_rev: the chunk table (chunk_offsets_body, as gdn_bwd_chunk_offsets), then the tail.
__device__ __forceinline__ void bwd_chunk_order_body(const BwdChainParams& cp) {
  chunk_offsets_body(cp.b.f);
  __syncthreads();  // the chunk table (global, this block's writes) before the tail reads it
  bwd_chunk_order_tail(cp);
}

// The consumer's unit without the wait: the (chunk slot c, head h) of this block's rank (false: a
// dead block, no tile).
__device__ __forceinline__ bool tokens_ov_unit(const BwdChainParams& cp, int& c, int& h) {
  const int HO = cp.b.f.ho;
  const int b = static_cast<int>(blockIdx.y * gridDim.x + blockIdx.x);
  const int r = b / HO;
  h = b % HO;
  if (r >= cp.b.f.chunk_offsets[cp.b.f.n_seqs]) return false;
  c = cp.ov_order[r];
  return true;
}

// The wait for unit (c, h)'s flag, until the reverse scan has published it: every thread of the
// block calls it once, before any read of ws_ds / ws_dr (REV >= 12: as the tile's flag_wait hook,
// after the copies that do not depend on the reverse scan).
// The unit is complete at BwdChainParams::ov_need (at least 1; 2 under the split reverse scan,
// whose two blocks per unit each add 1).
struct TokUnitFlagWait {
  const unsigned* flag;
  unsigned need;
  __device__ TokUnitFlagWait(const BwdChainParams& cp, int c, int h)
      : flag(cp.ov_flags + static_cast<size_t>(c) * cp.b.f.ho + h),
        need(cp.ov_need > 1 ? static_cast<unsigned>(cp.ov_need) : 1u) {}
  __device__ __forceinline__ void operator()() const { dnnp_flag_wait_block(flag, need); }
  // The same wait on the calling thread only (tw1: warpgroup 0's thread 0, then its named barrier).
  __device__ __forceinline__ void thread_wait() const { dnnp_flag_wait_thread(flag, need); }
};

// Whether this block must execute griddepcontrol.wait before it exits (the grid's last block).
__device__ __forceinline__ bool tokens_ov_last_block() {
  return blockIdx.x == gridDim.x - 1 && blockIdx.y == gridDim.y - 1 && blockIdx.z == gridDim.z - 1;
}

// gdn_bwd_tokens_tc5_ov: tc5's tile in the reverse scan's order, each after its unit's flag.
// REV >= 12 (session 22, tstart22): the tile waits for the flag itself, after issuing the copies
// that do not depend on the reverse scan (bwd_tokens_tc_tile's flag_wait); the same outputs.
template <typename T, int K, int V, int REV>
__device__ __forceinline__ void bwd_tokens_ov_body(const BwdChainParams& cp, const TwRingMaps* maps = nullptr) {
  int c, h;
  if (tokens_ov_unit(cp, c, h)) {
    const TokUnitFlagWait wait(cp, c, h);
    if constexpr (REV >= 12) {
      bwd_tokens_tc_tile<T, K, V, REV>(cp.b, c, h, -1, 0, false, wait, maps);
    } else {
      wait();
      bwd_tokens_tc_tile<T, K, V, REV>(cp.b, c, h);
    }
  }
  if (tokens_ov_last_block()) dnnp_wait_prerequisites();
}

}  // namespace gdn
