// gdn_fused16_persist.cuh: the persistent form of the one-pass chunk-16 GDN forward (session 60;
// bench only: `b2p` and `b2ph` (HF, the head fixed per cluster) in bench/gdn_fused16_bench.cu,
// which times them beside b2c, and bench/gdn_fused16_host_emu.cpp, which checks them on the CPU
// bitwise the product's forms at one to several units per cluster). Not in the product: measured
// on an H100 (bench/gdn_results.md, session 60) they save the fixed cost per block generation
// (−5.7 % at (16,512,32)) but their turn costs 3-4.5 % more per chunk than b2c's (one unit per
// cluster: (4,8192,16) b2p 0.328, b2ph 0.328 against 0.317 ms), so the rule's shape (16,2048,32)
// gains −1.5 % at best (b2ph) and (16,4096,32), (33,2048,16) lose; and their static round-robin of
// units would serialize a long sequence's heads behind short ones in a ragged batch (the product's
// b2c relies on the hardware's block scheduler there).
//
// Why: a non-persistent launch pays a fixed cost per block generation (session 59, H100 linear fits
// over the sequence length: b2c ~16 µs per generation with states, ~9 µs without): the fill (the
// first chunks' copies and builds before a chain can step), the drain (the last chunks' O after
// the chain's last step), the launch of the next generation's blocks and the states' load and
// store bursts at its edges. At (16,2048,32) b2c runs ~3.9 generations, up to ~9 % of its time.
// Here each cluster steps through its (sequence, head) units with ONE stage ring: the producers
// copy and build the next unit's first chunks while the chains finish the current one, the O
// rows of a unit's last chunks leave under the next unit's steps, and the next unit's initial state
// is prefetched into L2 when its first chunks are copied; only the chain's own state store and
// load stay on its path at a unit's edge.
//
// Contract: fwd_fused16_body's (kernels/include/gdn_fwd_fused16.cuh: every option of the forward, the same
// arithmetic per chunk, hence bitwise the same outputs), for a cluster form F (CL = 2) whose ring
// holds exactly the chunks in flight (S = 2 · PW · D: the refill of a stage belongs to the
// producer warp that built the chunk it held, which stores that chunk's O first). Grid (2, C, 1)
// with cluster (2, 1, 1), C ≥ 1 clusters (the host: min(units, the clusters the SMs hold at
// once)); cluster y serves units y, y + C, y + 2C, ... of the N · HO units in index order, unit
// u = z · HO + h being head h of the sequence of rank z (rank by length, longer first, under
// Fused16Params::longest_first; else sequence z). F::threads threads,
// fused16_persist_smem_bytes<T, 64, F>() dynamic shared memory. No workspace, no atomics. N at most
// F::threads − 1 (as src/engines/gdn/fused16.rs FUSED16_MAX_SEQS); a launch with more returns
// without writing.
//
// The ring across units. A unit of nch chunks takes nch rounded up to even ring slots (a cluster
// form's stage s holds chunks of parity s % 2, CTA r building the unit's chunks of parity r): an
// odd unit's last slot is a phantom chunk that both CTAs publish without copies, build or push
// (the builder arrives on its own full barrier, its peer arrives without expecting bytes) and the
// chains release without a step, so every barrier keeps its phase rule (chunk g of the ring in
// stage g % S, phase (g / S) & 1). Producer warp pw owns the ring's pairs pw, pw + PW, ... and
// walks the units by pair (Fused16Walk); the chains walk them by unit.
#pragma once

#include "gdn_fwd_fused16.cuh"

namespace gdn {

// ---- Helpers (fwd_fused16_body's pieces in kernels/include/gdn_fwd_fused16.cuh, factored here
// for this body only: the product's body keeps its own inline code, byte-identical to main; session
// 60 measured that calling them from it reorders w8c / b2c and, with the lane offsets recomputed
// inside the step, lengthens b2c's step 270 -> 301 instructions).

// The sanitized offsets off[0 .. n] (n = N ≤ THREADS − 1; every thread of the block, one per
// offset), ending with a block barrier; wmax: THREADS / 32 scratch maxima.
template <int THREADS>
__device__ __forceinline__ void fused16_offsets(const Fused16Params& pp, long long* off, long long* wmax) {
  const long long t = pp.total_t;
  const int n = pp.f.n_seqs;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  long long x = 0;
  if (tid <= n) {
    const long long raw = load_cu(pp.f, tid);
    x = raw < 0 ? 0 : (raw > t ? t : raw);
  }
  x = warp_inclusive_max(x);
  if (lane == 31) wmax[warp] = x;
  __syncthreads();
  long long before = 0;
  for (int w = 0; w < warp; ++w) before = wmax[w] > before ? wmax[w] : before;
  if (tid <= n) off[tid] = x > before ? x : before;
  __syncthreads();
}

// Sequence tid's rank by length among off's n sequences (longer first, ties by index; tid < n).
__device__ __forceinline__ int fused16_length_rank(const long long* off, int n, int tid) {
  const long long len = off[tid + 1] - off[tid];
  int rank = 0;
  for (int j = 0; j < n; ++j) {
    const long long lj = off[j + 1] - off[j];
    rank += lj > len || (lj == len && j < tid);
  }
  return rank;
}

// One chain warp's step over the chunk in stage s (the lean step, sessions 57-58): its stage-only
// operands (vᵀ, the per-token scalars, e^{Γ_last}) loaded at the top, where their latency hides
// behind the P, Q products; Rᵀ, Uᵀ, Oᵀ; X ← e^{Γ_last} X + Uᵀ diag(e^{Γ_last − Γ}) K̂; O staged in
// the warp's 16 value columns of the stage's v tile (after the step's last read of vᵀ), where the
// producer warp that refills the stage stores it. t0 = 2 (lane & 3): this lane's tokens t0, t0 + 1,
// t0 + 8, t0 + 9 (the caller's, computed once: a step that recomputes its lane offsets measured 30
// instructions longer on b2c, whose chain is at the register cap). after_u runs right after the U
// product (the early test of the next chunk's full barrier, Fused16Form ET).
template <typename T, int K, int VB, typename AfterU>
__device__ __forceinline__ void fused16_chain_step(float (&x)[K / 8][4], Fused16Stage<T, VB>& s, int warp, int lane, int t0,
                                                   AfterU after_u) {
  u32 vt[4];
  ldsm_x4_t(vt, s.v + ((lane & 7) + 8 * ((lane >> 3) & 1)) * (VB + 8) + 16 * warp + 8 * (lane >> 4));
  const float2 be0 = *reinterpret_cast<const float2*>(&s.be[t0]), be1 = *reinterpret_cast<const float2*>(&s.be[t0 + 8]);
  const float2 se0 = *reinterpret_cast<const float2*>(&s.se[t0]), se1 = *reinterpret_cast<const float2*>(&s.se[t0 + 8]);
  const float2 sq0 = *reinterpret_cast<const float2*>(&s.sq[t0]), sq1 = *reinterpret_cast<const float2*>(&s.sq[t0 + 8]);
  const float2 sk0 = *reinterpret_cast<const float2*>(&s.sk[t0]), sk1 = *reinterpret_cast<const float2*>(&s.sk[t0 + 8]);
  const float gl = s.gl;
  float pe[2][4], pq[2][4], pe2[2][4], pq2[2][4];
  fused16_chain_pq<T, K>(pe, pq, pe2, pq2, x, s, lane);
  // Rᵀ = β vᵀ − P diag(β e^Γ); the readout Q diag(scale e^Γ) (per-token scalars by nt, e & 1).
  const float beq[2][2] = {{be0.x, be0.y}, {be1.x, be1.y}}, seq[2][2] = {{se0.x, se0.y}, {se1.x, se1.y}};
  const float sqq[2][2] = {{sq0.x, sq0.y}, {sq1.x, sq1.y}}, skq[2][2] = {{sk0.x, sk0.y}, {sk1.x, sk1.y}};
  float r[2][4];
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      pe[nt][e] += pe2[nt][e];
      pq[nt][e] += pq2[nt][e];
      const u32 w = vt[nt + 2 * (e >> 1)];
      const float vv = Io<T>::bits_to_f(static_cast<unsigned short>((e & 1) ? w >> 16 : w & 0xffffu));
      r[nt][e] = beq[nt][e & 1] * vv - seq[nt][e & 1] * pe[nt][e];
      pq[nt][e] *= sqq[nt][e & 1];
    }
  float u[2][4];
  fused16_chain_u<T>(u, r, s, lane);
  after_u();
  u32 ua[4];
  fused16_chain_o<T>(pq, ua, u, s, lane);
  // X ← e^{Γ_last} X + Uᵀ diag(e^{Γ_last − Γ}) K̂.
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) u[nt][e] *= skq[nt][e & 1];
  x_a_frag<T>(ua, u, 0);
  scale_frags(x, gl);
  fused16_chain_update<T, K>(x, ua, s, lane);
  fused16_stage_o<T, VB + 8>(s.v + 16 * warp, pq, lane);
}

// A chain warp's 16 value rows vr0 + gi, vr0 + gi + 8 of the state at sbase ([V, K] in the stored
// domain, fp32 or bf16) into X's accumulator layout, and back.
template <int K>
__device__ __forceinline__ void fused16_load_state(float (&x)[K / 8][4], const FwdParams& p, long long sbase, int vr0, int lane) {
  const int gi = lane >> 2, tg = lane & 3;
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e)
      x[nt][e] = load_any(p.initial_state, p.state_dtype,
                          sbase + static_cast<long long>(vr0 + gi + 8 * (e >> 1)) * K + 8 * nt + 2 * tg + (e & 1));
}
template <int K>
__device__ __forceinline__ void fused16_store_state(const float (&x)[K / 8][4], const FwdParams& p, long long sbase, int vr0,
                                                    int lane) {
  const int gi = lane >> 2, tg = lane & 3;
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const long long i = sbase + static_cast<long long>(vr0 + gi + 8 * (e >> 1)) * K + 8 * nt + 2 * tg + (e & 1);
      if (p.state_dtype == DT_F32) static_cast<float*>(p.final_state)[i] = x[nt][e];
      else static_cast<gdn_bf16*>(p.final_state)[i] = Io<gdn_bf16>::from_f(x[nt][e]);
    }
}

// A hint (cp.async.bulk.prefetch.L2): `bytes` (a multiple of 16) at `src` (16-byte aligned) into
// L2; nothing waits for it (the CPU emulation: a no-op).
#ifndef GDN_HOST_EMU
__device__ __forceinline__ void fused16_prefetch_l2(const void* src, uint32_t bytes) {
  asm volatile("cp.async.bulk.prefetch.L2.global [%0], %1;\n" ::"l"(src), "r"(bytes) : "memory");
}
#else
inline void fused16_prefetch_l2(const void*, uint32_t) {}
#endif

// The persistent form's shared memory: the stage ring, the sanitized offsets, the units' order.
template <typename T, int VB, typename F>
struct Fused16PSmem {
  Fused16Smem<T, VB, F> ring;
  long long off[F::threads];  // off[0 .. N]: the sanitized offsets (N ≤ threads − 1)
  int order[F::threads];      // order[z]: the sequence of rank z
};

template <typename T, int VB, typename F>
constexpr int fused16_persist_smem_bytes() {
  return static_cast<int>(sizeof(Fused16PSmem<T, VB, F>));
}

// One (sequence, head) unit: its sequence b, head h, token rows [bos, eos) and chunks.
struct Fused16Unit {
  long long bos, eos;
  int b, h, nch;
};

// HF (head fixed): u is the sequence rank z of head `hf`; else u = z · ho + h.
template <bool HF>
__device__ __forceinline__ Fused16Unit fused16_unit(int u, int ho, int hf, const long long* off, const int* order) {
  Fused16Unit w;
  const int z = HF ? u : u / ho;
  w.h = HF ? hf : u - z * ho;
  w.b = order[z];
  w.bos = off[w.b];
  w.eos = off[w.b + 1];
  w.nch = static_cast<int>((w.eos - w.bos + F16_C - 1) / F16_C);
  return w;
}

// A producer warp's position in its cluster's units by the ring's pair index: unit u (its cluster's
// units u = y, y + C, ...) holds the ring's pairs [p0, pend), pend = p0 + its chunks' pairs; ring
// pair m is its local pair m − p0 (chunks 2 (m − p0) + e). Token rows as 32-bit (T < 2^31: the
// engine's MAX_TOKENS): the producer is at the launch bounds' register cap.
struct Fused16Walk {
  int u, p0, pend, nch, h, bos, eos;
};

// MODE: F16_FULL, or F16_PRODUCER (timing only: the chains take and release the stages without a
// step, as fwd_fused16_body's). HF (head fixed, session 60's last form): gridDim.y = HO · k and
// cluster y serves head y % HO of the sequences of rank y / HO, y / HO + k, ... (the head, hence the
// q / k / v head offsets, is the block's own, as in b2c: uniform registers); else the units
// u = y, y + C, ... of all heads.
template <typename T, int K, int V, int VB, typename F, int MODE = F16_FULL, bool HF = false>
__device__ __forceinline__ void fwd_fused16_persist_body(const Fused16Params& pp) {
  const FwdParams& p = pp.f;
  static_assert(K == 128 && V % VB == 0 && VB == 64, "fused16: K = 128, value slices of 64");
  constexpr int S = F::stages, PW = F::producer_warps, D = F::ahead;
  static_assert(F::cluster == 2, "persistent: a cluster form");
  static_assert(S == 2 * PW * D, "the refill of a pair's stages belongs to the warp that built the pair");
  static_assert(F16C_PUSH_ASYNC, "a phantom chunk's peer arrival expects no pushed bytes (st.async pushes)");
  static_assert(MODE == F16_FULL || MODE == F16_PRODUCER, "the forward or its producer alone");
  using Smem = Fused16PSmem<T, VB, F>;
  Smem& ps = *reinterpret_cast<Smem*>(fused16_dyn_smem());
  Fused16Smem<T, VB, F>& sm = ps.ring;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int v0 = blockIdx.x * VB;
  const int HO = p.ho, n = p.n_seqs;
  if (n > F::threads - 1) return;  // never launched so (fused16.rs: FUSED16_MAX_SEQS); both CTAs alike
  if (HF && (gridDim.y < HO || gridDim.y % HO != 0)) return;  // HF's grid is HO · k clusters (else ustep 0)
  // The cluster's units: u = first_unit, first_unit + ustep, ... < units (HF: sequence ranks of head hf).
  const int units = HF ? n : n * HO;
  const int hf = HF ? static_cast<int>(blockIdx.y) % HO : 0;
  const int ustep = HF ? static_cast<int>(gridDim.y) / HO : static_cast<int>(gridDim.y);
  // The offsets (the first stage as the per-warp maxima's scratch: free until the copies start) and
  // the units' order.
  static_assert(sizeof(sm.st[0]) >= F::threads / 32 * sizeof(long long), "the maxima's scratch");
  fused16_offsets<F::threads>(pp, ps.off, reinterpret_cast<long long*>(&sm.st[0]));
  if (tid < n) ps.order[pp.longest_first ? fused16_length_rank(ps.off, n, tid) : tid] = tid;
  if (tid == 0) {
    for (int i = 0; i < S; ++i) {
      dnnp::mbar_init(&sm.full[i], 1);
      dnnp::mbar_init(&sm.empty[i], F16_CHAIN_WARPS * (F::remote_forward ? 1 : 2));  // without RF: both CTAs' chains
      if constexpr (F::remote_forward) dnnp::mbar_init(&sm.empty[S + i], 1);
    }
    dnnp::mbar_init_fence();
  }
  __syncthreads();
  f16c_cluster_sync();  // the peer's barriers are initialised before any remote use
  const uint32_t rank = blockIdx.x & 1u;
  const int first_unit = HF ? static_cast<int>(blockIdx.y) / HO : static_cast<int>(blockIdx.y);

  if (warp >= F16_CHAIN_WARPS) {
    // ---------------------------------------------------------------- producer
    // Warp pw owns the ring's pairs m = pw, pw + PW, ...: of pair m's chunks (2m, 2m + 1) it copies
    // both, builds and pushes the one of parity rank, then waits for the chains' release of both,
    // stores their O rows and copies pair m + PW into their stages.
    static_assert(D == 1, "the pair being built is the one copied in the warp's previous turn");
    const int pw = warp - F16_CHAIN_WARPS;
    const F16cAddr peer_st = f16c_peer(&sm.st[0], rank ^ 1u), peer_full = f16c_peer(&sm.full[0], rank ^ 1u);
    const F16cAddr peer_free = f16c_peer(&sm.empty[F::remote_forward ? S : 0], rank ^ 1u);
    T* o = static_cast<T*>(p.o);
    Fused16Walk iw{first_unit - ustep, 0, 0, 0, 0, 0, 0};  // the pair being copied
    Fused16Copies<T> cp{};
    if constexpr (HF) {
      // Opaque to the compiler: kept in registers instead of re-derived from the parameter block
      // at every issue (session 60, call j: (16,4096,32) +3.1 % -> +0.3 % against b2c).
      cp = fused16_copies<T, K, V, VB>(p, hf / (HO / p.h), hf / (HO / p.hk), hf / (HO / p.hv), v0, lane);
      asm volatile("" : "+r"(cp.sq2), "+r"(cp.sk2), "+r"(cp.sv4), "+r"(cp.oq), "+r"(cp.ok), "+r"(cp.ov));
      asm volatile("" : "+l"(cp.q), "+l"(cp.k), "+l"(cp.v));
    }
    // The head of iw's unit.
    auto head = [&] { return HF ? hf : iw.h; };
    // iw on to the unit holding pair m (m never decreases; false past the cluster's last unit); on
    // a new unit the copies' rows follow its head, and at its first pair (not the cluster's first
    // unit's) lane 0 brings this CTA's value half of its initial state into L2 (a hint: the chain
    // loads those rows at the unit's first step).
    auto issue_to = [&](int m) {
      bool moved = false, fresh = false;
      int b = 0;
      while (iw.u < units && m >= iw.pend) {
        const int p0 = iw.pend;
        iw.u += ustep;
        if (iw.u < units) {
          const Fused16Unit w = fused16_unit<HF>(iw.u, HO, hf, ps.off, ps.order);
          iw.p0 = p0;
          iw.pend = p0 + ((w.nch + 1) >> 1);
          iw.nch = w.nch;
          iw.h = w.h;
          iw.bos = static_cast<int>(w.bos);
          iw.eos = static_cast<int>(w.eos);
          b = w.b;
          moved = true;
          fresh = m == p0;
        }
      }
      if (iw.u >= units) return false;
      if (moved) {
        const int h = head();
        if constexpr (!HF) cp = fused16_copies<T, K, V, VB>(p, h / (HO / p.h), h / (HO / p.hk), h / (HO / p.hv), v0, lane);
        if (fresh && lane == 0 && iw.u != first_unit && p.initial_state) {
          const long long srow = fused16_state_row(pp, b);
          const int esize = p.state_dtype == DT_F32 ? 4 : 2;
          const unsigned char* rows = static_cast<const unsigned char*>(p.initial_state) +
                                      ((srow * HO + h) * static_cast<long long>(V) + v0) * K * esize;
          if (srow >= 0 && (reinterpret_cast<uintptr_t>(rows) & 15) == 0) fused16_prefetch_l2(rows, VB * K * esize);
        }
      }
      return true;
    };
    // The ring's pair m of iw's unit: its chunks' rows (q, k of the peer's chunk too: both
    // normalize under GDN_F16C_PUSH ≥ 2).
    auto issue_pair = [&](int m) {
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int ch = 2 * (m - iw.p0) + e;
        if (ch < iw.nch)
          fused16_issue(cp, sm.st[(2u * m + e) % S], iw.bos + static_cast<long long>(ch) * F16_C, iw.eos,
                        !F16C_PUSH_ROWS || e == static_cast<int>(rank));
      }
    };
    // The raw bits of g (lanes 0-15) or β (16-31) of iw's unit's chunk c, token lane & 15 (0 past
    // the unit).
    auto gate_load = [&](int c) {
      const int tok = iw.bos + c * F16_C + (lane & 15);
      if (c >= iw.nch || tok >= iw.eos) return 0u;
      return lane < 16 ? load_raw_bits(p.g, p.g_dtype, static_cast<long long>(tok) * HO + head())
                       : load_raw_bits(p.beta, p.beta_dtype, static_cast<long long>(tok) * HO + head());
    };
    if constexpr (F::staggered) {  // fwd_fused16_body's SP: warp 0's prologue rows land first
      if (pw > 0) dnnp::named_bar_sync(1, 32 * PW);
    }
    bool has = issue_to(pw);
    if (has) issue_pair(pw);
    cp_async_commit();
    u32 gates = has ? gate_load(2 * (pw - iw.p0) + static_cast<int>(rank)) : 0u;
    if constexpr (F::staggered) {
      if (pw == 0) {
        cp_async_wait<0>();
        dnnp::named_bar_arrive(1, 32 * PW);
      }
    }
    for (int m = pw; has; m += PW) {
      // iw holds pair m's unit until the copy of pair m + PW at the turn's end.
      const unsigned gown = 2u * m + rank, goth = 2u * m + 1u - rank;  // ring chunks
      const int lp = m - iw.p0;
      const int own = 2 * lp + static_cast<int>(rank), oth = 2 * lp + 1 - static_cast<int>(rank);  // the unit's
      cp_async_wait<0>();
      __syncwarp();
      if (oth < iw.nch) {
        if constexpr (!F16C_PUSH_ROWS && !GDN_F16_FOLD) {  // folded: the chain reads the raw rows
          fused16_norm_rows<T, K>(p, sm.st[goth % S], lane);
          __syncwarp();
        }
        if (lane == 0) dnnp::mbar_arrive_expect_tx(&sm.full[goth % S], Fused16Push<T, VB>::bytes);
      } else if (lane == 0) {
        dnnp::mbar_arrive(&sm.full[goth % S]);  // the peer's phantom: published without bytes
      }
      Fused16Stage<T, VB>& s = sm.st[gown % S];
      if (own < iw.nch) {
        const int left = iw.eos - iw.bos - own * F16_C;
        fused16_build_any<T, K, VB>(p, s, sm.lt[pw], gates, left < F16_C ? left : F16_C, head(), lane);
      }
      // RF: the peer's chains released their stage gown % S (ring chunk gown − S): the peer's forward.
      if (F::remote_forward && gown >= S) dnnp::mbar_wait(&sm.empty[S + gown % S], ((gown / S) & 1u) ^ 1u);
      if (own < iw.nch)
        fused16_push(s, f16c_add(peer_st, (gown % S) * static_cast<int>(sizeof(Fused16Stage<T, VB>))),
                     f16c_add(peer_full, 8 * (gown % S)), lane);
      if (lane == 0) dnnp::mbar_arrive(&sm.full[gown % S]);
      // Pair m's stages: released by the chains, their O rows stored, then refilled by pair m + PW
      // (ring chunks 2m + e + S).
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const unsigned g = 2u * m + e;
        dnnp::mbar_wait(&sm.empty[g % S], (g / S) & 1u);
        // RF: the peer builds ring chunk g + S (parity ≠ rank) into this stage: its chains are done.
        // (Also past the ring's last pair: an arrival nobody waits for, before the closing cluster
        // barrier; the ring's pairs are contiguous, so no later pair reuses the stage.)
        if (F::remote_forward && e != static_cast<int>(rank) && lane == 0) f16c_arrive_peer(f16c_add(peer_free, 8 * (g % S)));
        fused16_store_stage_o<T, V, VB>(sm.st[g % S], o, iw.bos, iw.eos, 2 * lp + e, head(), HO, v0, lane);
      }
      has = issue_to(m + PW);
      if (has) issue_pair(m + PW);
      cp_async_commit();
      gates = has ? gate_load(2 * (m + PW - iw.p0) + static_cast<int>(rank)) : 0u;
    }
    cp_async_wait<0>();
    f16c_cluster_sync();  // the peer may still push into this CTA's stages until its last chunk
    return;
  }

  // ------------------------------------------------------------------ chain
  const int vr0 = v0 + 16 * warp;  // this warp's value rows vr0 + gi, vr0 + gi + 8
  const int t0 = 2 * (lane & 3);   // this lane's tokens t0, t0 + 1, t0 + 8, t0 + 9
  // The lane, opaque to the compiler: the step's lane offsets then stay in registers instead of
  // being re-derived from %tid every step (the step 283 -> 271 instructions, b2c's 270).
  int lane_o = lane;
  asm volatile("" : "+r"(lane_o));
  const F16cAddr peer_empty = f16c_peer(&sm.empty[0], rank ^ 1u);
  auto release = [&](int st) {
    __syncwarp();
    if (lane == 0) {
      dnnp::mbar_arrive(&sm.empty[st]);
      if constexpr (!F::remote_forward) f16c_arrive_peer(f16c_add(peer_empty, 8 * st));
    }
  };
  bool next_full = false;  // F::early_test: the ring's next chunk's full barrier seen completed
  // The ring's chunk g: stage g % S, phase (g / S) & 1 (S a power of two: one register for both,
  // and the unit's chunks counted down: the chain's loop keeps as many registers live as b2c's).
  static_assert((S & (S - 1)) == 0, "the ring's stage and phase from one counter");
  unsigned g = 0;
  float x[K / 8][4];
  // Unit u's state row base in the stored domain (srow < 0: none); recomputed for the final state
  // after the unit's steps (fewer registers live across them).
  auto state_at = [&](int u, long long& srow) {
    const Fused16Unit w = fused16_unit<HF>(u, HO, hf, ps.off, ps.order);
    srow = fused16_state_row(pp, w.b);
    return (srow * HO + w.h) * static_cast<long long>(V) * K;
  };
  for (int u = first_unit; u < units; u += ustep) {
    long long srow;
    const long long sbase = state_at(u, srow);
    if (p.initial_state && srow >= 0) fused16_load_state<K>(x, p, sbase, vr0, lane);
    else zero_frags(x);
    const int nch = fused16_unit<HF>(u, HO, hf, ps.off, ps.order).nch;
    for (int left = nch; left > 0; --left, ++g) {
      const int si = static_cast<int>(g % S);
      if (!(F::early_test && next_full)) dnnp::mbar_wait(&sm.full[si], (g / S) & 1u);
      // (ET tests the ring's next chunk: this unit's, its phantom or the next unit's first.)
      if constexpr (MODE == F16_FULL) {
        fused16_chain_step<T, K, VB>(x, sm.st[si], warp, lane_o, t0, [&] {
          if constexpr (F::early_test) next_full = dnnp::mbar_test_wait(&sm.full[(g + 1) % S], ((g + 1) / S) & 1u);
        });
      }
      release(si);
    }
    if (nch & 1) {  // an odd unit's last slot: the phantom chunk, released without a step
      if (!(F::early_test && next_full)) dnnp::mbar_wait(&sm.full[g % S], (g / S) & 1u);
      next_full = false;
      release(static_cast<int>(g % S));
      ++g;
    }
    if (p.final_state) {
      const long long fbase = state_at(u, srow);
      if (srow >= 0) fused16_store_state<K>(x, p, fbase, vr0, lane);
    }
  }
  f16c_cluster_sync();  // the peer's producer may still push into this CTA's stages
}

}  // namespace gdn
