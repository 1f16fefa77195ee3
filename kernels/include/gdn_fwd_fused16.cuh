// gdn_fwd_fused16.cuh: the GDN forward in ONE pass at chunk 16 (sessions 48-49; issue 8's forward
// target): kernels/src/gdn_fused16.cu's entries. bench/gdn_fused16_host_emu.cpp checks it on the
// CPU against the fp64 recurrence, bench/gdn_fused16_bench.cu times its forms on the GPU.
//
// Why chunk 16: the two-pass forward (slim prep, then the output scan) moves ~1.0 GB at
// (4,8192,16) where q, k, v, g, β in and O out are 0.54 GB (bench/gdn_results.md, session 30), and
// a fused chunk-64 kernel (session 31, w4fx) was 2.5x slower: its 64 × 64 prep tile is
// barrier-bound at one tile in flight per block. At chunk 16 the factors are 16 × 16 (K̂ K̂ᵀ and Q̂ K̂ᵀ
// are 16 mma.sync each, the inverse one lane per column), so producer warps build chunks ahead
// while the chain runs, and nothing but q, k, v, g, β in and O, the final state out touches global
// memory.
//
// Contract (what an entry serves; the caller checks it): io bf16 / fp16, K = V = 128, every gate
// form of the forward (log or linear domain, safe gate with a_log / dt_bias; g and β fp32, bf16 or
// fp16; β through the sigmoid, doubled with negative eigenvalues), l2norm on or off, any H / HK / HV
// grouping (HO = max), cu_seqlens int32 / int64 with empty and partial sequences, initial and final
// state fp32 or bf16 in the stored domain [N, HO, V, K] (final may alias initial), state_indices,
// q, k, v rows of at most 2^27 elements per token (the copies' in-chunk offsets are 32-bit). No
// workspace, no atomics, no global flags. Grid (V / 64, HO, N), Form::threads threads,
// fused16_smem_bytes<T, 64, Form>() dynamic shared memory. Exact: the UT/WY chunk algebra of spec
// §4.2 with X = Sᵀ in fp32 mma accumulators (no truncation, no pieces); deterministic.
//
// Roles. Warps 0-3 (the chain) own value rows v0 + 16 w .. + 16 of the block's slice [v0, v0 + 64);
// per chunk, from the stage the producer filled:
//   P = X k̂ᵀ, Q = X q̂ᵀ (V × 16, one pass over X's A fragments, two channel halves, 32 mma per warp),
//   Rᵀ = diag(β) vᵀ − P diag(β e^Γ),  Uᵀ = Rᵀ Tᵀ,  Oᵀ = Q diag(scale e^Γ) + Uᵀ Aᵀ,
//   X ← e^{Γ_last} X + Uᵀ diag(e^{Γ_last − Γ}) K̂  (16 mma per warp);
// O leaves through the stage's own v tile (one transposing stmatrix per warp after the step's last
// read of vᵀ), stored to global memory by the producer warp that refills the stage (session 58).
// Warps 4.. (the producer, Form::producer_warps of them) each own chunks pw, pw + PW, ...: a warp
// copies its chunk D own chunks ahead by zero-filling cp.async into a free stage, loads that chunk's
// raw g, β bits, then builds its current chunk alone: the per-token scalars, q̂, k̂ (l2 norms in
// place), T = (I + L)⁻¹ (K̂ K̂ᵀ by mma.sync, forward substitution in fp32, one lane per column) and
// A (Q̂ K̂ᵀ). Stages are handed over by mbarriers: full[s] (one arrival: the building warp) and
// empty[s] (four: the chain warps), Form::stages of them.
// Cluster forms (Form::cluster = 2, session 52; launched with cluster (2, 1, 1)): the two value
// halves of a (sequence, head) are one cluster and share the builds. Of each pair of chunks
// (2m, 2m + 1) both CTAs copy q, k, v and normalize q, k (GDN_F16C_PUSH 3, the default); CTA r
// builds chunk 2m + r's scalars, T and A and pushes them (st.async, 16 bytes each) into the peer's
// stage, whose full barrier expects those bytes from the peer's own arrival once its copies
// landed. A stage is free again when both CTAs' chains released it (empty[s]: eight arrivals, four
// of them remote). Remote arrivals keep their default CTA-scope semantics (gdn_fused16_cluster.cuh).
#pragma once

#include "dnnp_async.cuh"
#include "dnnp_tma.cuh"
#include "dnnp_wgmma.cuh"
#include "gdn_fused16_cluster.cuh"
#include "gdn_fwd.cuh"
#include "gdn_fwd_slim.cuh"  // stsm_x4_t

namespace gdn {

constexpr int F16_C = 16;          // tokens per chunk
#ifndef GDN_F16_LS_LIMIT
#define GDN_F16_LS_LIMIT 11.f  // LS: the largest |l| kept lazily (e^11 ≈ 2^16)
#endif
constexpr int F16_CHAIN_WARPS = 4; // warps 0-3; the producer warps follow
constexpr int F16_LD = 136;        // q̂ / k̂ row stride in elements: 272 B puts ldmatrix rows on distinct banks
constexpr int F16_TLD = 24;        // T / A row stride: 48 B, conflict-free for ldmatrix

// How a cluster form's builder publishes a chunk in its peer's stage (session 52, measured):
//   0: q̂, k̂ rows and the tail (T, A, scalars) by st.async, each completing its bytes on the peer's
//      full barrier (one expect_tx arrival by the peer's own warp once its v copy landed);
//   1: the same bytes by plain remote stores, then each lane's release arrival on the peer's full
//      barrier (its count: the own warp's arrival + 32);
//   2: both CTAs copy and normalize q, k themselves; the builder pushes only the tail, as 1;
//   3: the tail only (as 2) by st.async (as 0).
#ifndef GDN_F16C_PUSH
#define GDN_F16C_PUSH 3
#endif
// A chunk's rows are copied by zero-filling cp.async, 16 bytes per copy (20 per lane and chunk).
// Session 53 staged the cluster forms' copies as bulk copies (one token row each, completing on a
// per-stage barrier; 1: each CTA its own, 2: q, k multicast to both CTAs); session 54 measured them
// 8-27 % slower on an H100 (a bulk copy's operands sit in uniform registers, so per-lane rows
// compile to a waterfall loop) and they were removed (bench/gdn_results.md, session 53 / 54).
// Full chunks' copies without the zero-fill predicates, row pointers stepped (session 53; ~40
// producer instructions for a chunk's 20 copies against ~116-133): neutral in session 54 (w4c, before
// the producer stored O), on since session 69 (through the product on an H100: (4,8192,16) −1.4 %,
// (16,2048,32) −2.6 %, the ragged mix −0.4 %). 0: every chunk on the predicated copies.
#ifndef GDN_F16_FULL_COPIES
#define GDN_F16_FULL_COPIES 1
#endif
// Bench only (session 66; default 0, every product entry unchanged): 1 drops the chain's readout
// (the Q products, Uᵀ Aᵀ and the O staging) and leaves the state's own path (P, Rᵀ, Uᵀ, the
// update): the bound of what moving the readout off the chain warps could save. O is wrong; timing only.
#ifndef GDN_F16_ABLATE_READOUT
#define GDN_F16_ABLATE_READOUT 0
#endif
constexpr bool F16_READOUT = GDN_F16_ABLATE_READOUT == 0;
constexpr bool F16C_PUSH_ROWS = GDN_F16C_PUSH < 2;                        // q̂, k̂ pushed (else both normalize)
constexpr bool F16C_PUSH_ASYNC = GDN_F16C_PUSH == 0 || GDN_F16C_PUSH == 3;  // st.async (else stores + arrivals)

// A launch form: PW producer warps, S stages, each producer warp's copies D of its own chunks (CL = 1)
// or pairs of chunks (CL = 2) ahead. ET (early test): each chain warp tests chunk c + 1's full
// barrier without blocking right after chunk c's U product and skips the blocking wait at the next
// chunk's top when it had completed (session 54, H100: w4c −1.3 % at (4,8192,16), −0.7 % at
// (16,2048,32) and on the ragged mix, its chain alone −3 %; b2c +1..+2 %: two blocks per SM hide
// the wait already). Outputs are the same bits either way. CL = 2: the block is one CTA of a (2, 1, 1) cluster whose two
// CTAs are the two value halves of one (sequence, head): of each pair of chunks (2m, 2m + 1) CTA r
// builds chunk 2m + r and pushes what its peer needs into the peer's stage (GDN_F16C_PUSH above);
// both copy their own v of both chunks.
// The step (sessions 57-58; every form since session 59): the chain steps its stage by a running
// index and phase instead of c % S (S is not a power of two: a multiply-high chain on the step's
// path) and loads the step's stage-only operands (vᵀ, the per-token scalars, e^{Γ_last}) at the
// step's top, where their latency hides behind the P, Q products (session 57's ncu samples of w4c's
// chain, bench/sass57_w4c.csv.gz: the stage index's division and the branch on it 10 % of the step,
// the wait for vᵀ in R's region); and the producer stores O (session 58): the chain warps stage O in
// the stage's own v tile (after their last read of it) before releasing the stage, and the producer
// warp that refills the stage stores those rows to global memory first, four whole 128-byte token
// rows per instruction, so the chain issues no global store (its O st.global was 13 % of the step,
// ~240 cycles); the last S chunks' rows leave after the producer's loop. (The chain's own O store,
// through a per-warp staging tile during the next chunk (sessions 49-58), measured 3-11 % slower on
// every form (session 58: w8 0.334 against 0.297 ms at (4,8192,16)), and session 57's by a per-lane
// row pointer 3-8 %: neither is built any more; bench/gdn_results.md, sessions 57-59.)
// RF (remote forward, session 58; cluster forms): a chain warp releases a stage on its own
// CTA's empty barrier only; the producer warp that refills the stage (it waits on that barrier
// already) forwards the release to the peer CTA, whose builder pushes into this stage, by one
// arrival on the peer's peer_free barrier of that stage; the builder waits on its own peer_free
// before the push. The chain's remote arrival per chunk is gone.
// SP (staggered prologue, session 59): producer warp 0 issues its prologue copies alone (chunk 0;
// a cluster form's pair 0: chunks 0, 1); the other producer warps issue theirs once those rows
// landed (named barrier 1), so a block's first chunks do not wait behind the CL · PW · D chunks
// (and the initial states) that every block of a generation requests at once (session 59's fixed
// cost per block generation).
// WG (sessions 57, 59; with UW and CR / PR the product's b2c since session 63): the chain's P and
// Q as one wgmma chain of the four chain warps (one warpgroup): [P | Q] (64 value rows × [16 k̂
// tokens | 16 q̂ tokens]) = X [K̂; Q̂]ᵀ over the 8 k16 steps, A from X's registers, B by descriptor
// from the stage's q, k rows stored 128-byte swizzled (Fused16Stage SW): one read of each B tile
// per warpgroup instead of one ldmatrix stream per warp. The update stays on mma.sync (its k̂
// fragments by ldmatrix from the swizzled rows). The producer fences its q, k copies for the async
// proxy. Other bits than the mma.sync chain (the products' summation order), within the tolerance.
// UW (session 61; the product's b2c with WG since session 63): the update X ← e^{Γ_last} X + Uᵀ
// diag(e^{Γ_last − Γ}) K̂ as one wgmma m64n128k16 of the warpgroup (A = the warps' Uᵀ fragments,
// B = K̂ MN-major by descriptor from the same swizzled tile, X its accumulator; the stage is
// swizzled with UW alone too, P and Q then by mma.sync from the swizzled rows): K̂ read once per
// warpgroup instead of by eight transposing ldmatrix per warp (session 61's ncu: b2c is bound by
// the L1 data pipe, 47 % of its wavefronts the chain warps' q̂ / k̂ / K̂ reads).
// CR, PR (session 59's bench/gdn_rg59_setmaxnreg.patch, ported in session 63; 0: none): after the
// role split the chain's warpgroup raises its per-thread register limit to CR (setmaxnreg.inc) and
// the producer's warpgroups lower theirs to PR (.dec), from the launch bound's; 128 · CR + 32 · PW ·
// PR must not exceed the block's registers (b2c with WG + UW: the two-block cap of 128 spilled).
// LS (session 68; the product's b2c since session 69): the lazily scaled state. The chain keeps X =
// e^l X̃ with a running log scale l (l += Γ_last per chunk) instead of scaling X by e^{Γ_last}
// every chunk (64 FMUL per warp and chunk): P and Q come from X̃ with e^l folded into the per-token
// scalars β e^Γ and scale e^Γ, the update adds Uᵀ diag(e^{Γ_last − Γ − l'}) K̂ to X̃ (l' the new
// scale), and once |l'| passes GDN_F16_LS_LIMIT (or is not finite) the chunk scales X̃ by e^{l'} as
// before and restarts at l' = 0. Other bits than the eager forms (the fp64 recurrence's tolerance).
// Through the product on an H100 (session 69): b2c −2.3 % at (16,2048,32), w8c +6-7 % (w8c stays
// eager; A1, one accumulator set for P and Q with LS, harness +5 % against w8c, removed).
// TQ (session 71; the product's b2c): a full chunk's q, k rows arrive as four tensor-map boxes (64
// channels x 1 head x 16 tokens under the 128-byte swizzle, the swizzled stage's own layout; maps
// in Fused16TmaParams::qk_maps) that the CTA building the chunk issues once, multicast into the same
// stage of both CTAs of the pair, completed on each CTA's `landed` barrier of the stage (its
// copying warp announces the bytes); v and a sequence's partial last chunk stay on cp.async. Needs
// the swizzled stage, a cluster form and no RF: a CTA writes into the peer's stage only after the
// stage's empty barrier, which counts both CTAs' chains only without RF (with RF it counts its own
// chains: session 71 measured the race, a harness check failing). Harness on an H100, (16,2048,32):
// b2cl without RF −1.1 %, with TQ −2.7 %; −2.4..−4.4 % at the other shapes. Same bits.
template <int PW, int S, int D, int CL = 1, bool ET = false, bool RF = false, bool SP = false, bool WG = false,
          bool UW = false, int CR = 0, int PR = 0, bool LS = false, bool TQ = false>
struct Fused16Form {
  static_assert((CR == 0) == (PR == 0) && (CR == 0 || PW % 4 == 0), "registers move between whole warpgroups");
  static constexpr int chain_regs = CR, producer_regs = PR;
  static_assert(CL == 1 || CL == 2, "a CTA alone or a pair of value halves");
  static_assert(!RF || CL == 2, "the remote forward: a cluster form");
  static_assert(CL * PW * D <= S, "the prologue's copies need no free stage");
  static_assert(CL == 1 || S % 2 == 0, "a cluster form's stage s always holds chunks of parity s % 2");
  static constexpr int producer_warps = PW, stages = S, ahead = D, cluster = CL;
  static constexpr bool early_test = ET;
  static constexpr bool remote_forward = RF;
  static constexpr bool staggered = SP;
  static constexpr bool wg = WG;
  static constexpr bool wg_update = UW;
  static constexpr bool swizzled = WG || UW;  // the stage's q, k rows 128-byte swizzled (wgmma reads them)
  static constexpr bool lazy_scale = LS;
  static constexpr bool tma_qk = TQ;
  static_assert(!TQ || (CL == 2 && (WG || UW) && !RF), "TQ: a cluster form on the swizzled stage, without RF");
  static constexpr int threads = 32 * (F16_CHAIN_WARPS + PW);
};
// B1: the CPU emulation's reference form (bench only).
using Fused16B1 = Fused16Form<4, 12, 2, 1, true>;
// The product's forms (kernels/src/gdn_fused16.cu; src/engines/gdn/fused16.rs FUSED16_FORMS).
// w8: eight producer warps, one block per SM (session 58, harness on an H100 with the producer's O
// store: 0.297 against 0.334 ms at (4,8192,16)).
using Fused16W8 = Fused16Form<8, 14, 1, 1, true>;
// b2: four producer warps, two blocks per SM.
using Fused16B2 = Fused16Form<4, 8, 1>;
// w4c: four producer warps, clusters of the two value halves, one block per SM (session 58, through
// the product: (4,8192,16) 0.3079 → 0.2962 ms with the producer's O store, ragged 0.3073 → 0.2925).
using Fused16W4C = Fused16Form<4, 14, 1, 2, true>;
// w8c: w8's eight producer warps as clusters, 16 stages; the rule's one-block form since session 58
// (H100, through the product: (4,8192,16) 0.2958 → 0.2819 ms against w4c, ragged 0.2951 → 0.2840).
// With the remote forward (RF) it ran the same (harness 0.2731 against 0.2761 ms at (4,8192,16),
// 0.3430 against 0.3384 on the ragged mix). The staggered prologue (SP): session 59.
using Fused16W8C = Fused16Form<8, 16, 1, 2, true, false, true>;
// b2c's chain on mma.sync (the product's b2c until session 63; the bench's `b2c-mma`): b2 as
// clusters, with the remote forward (session 58, through the product at (16,2048,32): 0.6065 →
// 0.5726 ms with the producer's O store, → 0.5639 with RF) and the early test (session 59, harness on
// an H100: 0.5514 against 0.5570 ms at (16,2048,32), 0.4716 against 0.4810 ragged) and the staggered
// prologue (SP, session 59).
using Fused16B2CMma = Fused16Form<4, 8, 1, 2, true, true, true>;
// b2c (sessions 63-68; the harness's `b2c`, the product's with LS since session 69): that form with
// every q̂ / k̂ / K̂ read of the chain once per warpgroup (WG: P and Q by wgmma m64n32k16; UW: the
// update by wgmma m64n128k16; sessions 59-61) and the registers moved from the producer's warpgroup
// to the chain's (CR 160 / PR 96 by setmaxnreg: at the two-block cap of 128, WG + UW spilled 152 B
// and serialized its wgmma). Two blocks per SM share the L1 data pipe, 83 % busy with b2c-mma
// (session 61), half of it the chain's re-reads: harness on an H100 at (16,2048,32) 0.5016-0.5066
// ms against 0.5562-0.5571 (−9.4 %); other bits than the mma.sync forms, within the fp64
// recurrence's tolerance.
using Fused16B2C = Fused16Form<4, 8, 1, 2, true, true, true, true, true, 160, 96>;
// w8cl (session 68; harness and CPU emulation only): w8c with the lazily scaled state (LS),
// slower (session 69).
using Fused16W8CL = Fused16Form<8, 16, 1, 2, true, false, true, false, false, 0, 0, true>;
// b2cl: b2c with LS, the product's b2c since session 69 (kernels/src/gdn_fused16.cu); since session
// 71 without RF and with TQ (the q, k boxes).
using Fused16B2CL = Fused16Form<4, 8, 1, 2, true, false, true, true, true, 160, 96, true, true>;

// One stage: chunk c's rows and factors. q, k hold the raw rows, then q̂, k̂ in place (SW false:
// rows of F16_LD elements; SW true, the WG forms': `qk`, per channel half the 128-byte-swizzled
// K-major tile of 32 rows, k̂ rows 0-15 and q̂ rows 16-31, 16-byte piece j of row r at j ^ (r & 7)).
// Reach a row's 16-byte piece by fused16_piece. The members after the rows are the same in both.
#define GDN_FUSED16_STAGE_TAIL(T, VB)                                                               \
  T v[F16_C * (VB + 8)];                                                                            \
  T t[F16_C * F16_TLD]; /* T = (I + L)⁻¹, io dtype */                                               \
  T a[F16_C * F16_TLD]; /* A = tril(scale e^{Γi − Γj} q̂i · k̂j) */                                   \
  float se[F16_C], sq[F16_C], sk[F16_C], be[F16_C]; /* β e^Γ, scale e^Γ, e^{Γlast − Γ}, β */        \
  float gm[F16_C];                                  /* Γ (inclusive cumulative log decay) */        \
  float gl;                                         /* e^{Γ_last} */                                \
  float pad[3];
template <typename T, int VB, bool SW = false>
struct Fused16Stage {
  static constexpr bool swizzled = false;
  T q[F16_C * F16_LD];
  T k[F16_C * F16_LD];
  GDN_FUSED16_STAGE_TAIL(T, VB)
};
template <typename T, int VB>
struct alignas(1024) Fused16Stage<T, VB, true> {
  static constexpr bool swizzled = true;
  T qk[2][2 * F16_C * 64];
  GDN_FUSED16_STAGE_TAIL(T, VB)
};
#undef GDN_FUSED16_STAGE_TAIL

// The 16-byte piece of row `row` of q̂ (isq) or k̂ holding channels col .. col + 7 (col % 8 == 0).
template <typename Stage>
__device__ __forceinline__ auto fused16_piece(Stage& s, bool isq, int row, int col) -> decltype(&s.v[0]) {
  if constexpr (Stage::swizzled) return &s.qk[col >> 6][(row + (isq ? F16_C : 0)) * 64 + ((((col >> 3) & 7) ^ (row & 7)) << 3)];
  else return (isq ? s.q : s.k) + row * F16_LD + col;
}

template <typename T, int VB, typename F>
struct Fused16Smem {
  Fused16Stage<T, VB, F::swizzled> st[F::stages];
  uint64_t full[F::stages];    // one arrival: the producer warp that built the stage's chunk
  // Four arrivals: the chain warps, done with it (CL without RF: both CTAs' chains, eight). RF:
  // empty[S + s] is stage s's peer_free (one arrival: the peer's producer forwarding its chains'
  // release of the peer's stage s, into which this CTA pushes). TQ: empty[S + s] is stage s's
  // `landed` (fused16_landed: one arrival, the copying warp's, with the boxes' bytes).
  uint64_t empty[F::stages * (F::remote_forward || F::tma_qk ? 2 : 1)];
  float lt[F::producer_warps][F16_C * 20];  // each producer warp's Lᵀ (fp32; rows 16-byte aligned)
};

template <typename T, int VB, typename F>
constexpr int fused16_smem_bytes() {
  return static_cast<int>(sizeof(Fused16Smem<T, VB, F>));
}

// TQ: stage s's `landed` barrier (its q, k boxes' bytes and the copying warp's arrival).
template <typename T, int VB, typename F>
__device__ __forceinline__ uint64_t* fused16_landed(Fused16Smem<T, VB, F>& sm, int s) {
  static_assert(F::tma_qk && !F::remote_forward, "the landed barriers share empty[]'s second half with RF's");
  return &sm.empty[F::stages + s];
}

// An entry's parameter block: the forward's, and what the kernel needs to keep a malformed call
// inside the caller's buffers (the two-pass plan's first kernel sanitizes into its workspace
// instead; this one has none): the THD tensors' token rows and the state pool's rows. Every form
// but the TQ forms takes it alone (224 bytes).
struct Fused16Params {
  FwdParams f;
  long long total_t;  // rows of the THD token tensors
  int pool_rows;      // rows of the state_indices pool (unused without one)
  int longest_first;  // 1: block z serves the z-th longest sequence (ties by index), 0: sequence z
};
static_assert(sizeof(Fused16Params) == 224, "Fused16Params layout changed: update src/engines/gdn/fused16.rs");

// The TQ forms' block: Fused16Params, then the maps of q [T, H, K] and k [T, HK, K] as {K, heads, T},
// box {64, 1, 16}, the 128-byte swizzle (src/engines/gdn/tma_maps.rs, FwdIoMapShape::fused16_qk_specs)
// at offset 256. Only the TQ entries declare it: the maps' 128-byte alignment moves the block in the
// parameter bank (every field's offset by 0x70), and ptxas then allocates w8c's registers otherwise
// (5,328 SASS instructions against 5,360), +0.9..+1.2 % through the product on an H100 (session 72).
struct Fused16TmaParams {
  Fused16Params p;
  dnnp::TmaDesc qk_maps[2];
};
static_assert(sizeof(Fused16TmaParams) == 512, "Fused16TmaParams layout changed: update src/engines/gdn/fused16.rs");
#ifndef __CUDACC_RTC__  // NVRTC has no offsetof builtin (gdn_fwd.cuh's FwdParams checks likewise)
static_assert(__builtin_offsetof(Fused16TmaParams, qk_maps) == 256, "Fused16TmaParams layout changed: update src/engines/gdn/fused16.rs");
#endif

// The sequence block z serves and its token rows [bos, eos), as the two-pass forward's sanitizer
// makes them (cu_sanitize_body): the running maximum of the offsets clamped into [0, T], so offsets
// that are not well formed (negative, decreasing, past T) address no row outside [0, T) and run as
// that clamped running maximum; well-formed offsets come out unchanged. With longest_first, block z
// serves the sequence of rank z by length (longer first, ties by index): a ragged batch of a few
// waves starts its long sequences first. Every thread of the block; N < THREADS (one thread per
// offset: fused16.rs's FUSED16_MAX_SEQS; past it the block serves no rows); red: scratch of
// fused16_rows_scratch<THREADS>() bytes for THREADS + 1 offsets, one maximum per warp and the pick
// (the first stage, free until the copies start: the function ends with a block barrier after its
// last read of it).
template <int THREADS>
__host__ __device__ constexpr int fused16_rows_scratch() {
  return static_cast<int>((THREADS + 1 + THREADS / 32) * sizeof(long long) + sizeof(int));
}
template <int THREADS>
__device__ __forceinline__ void fused16_rows(const Fused16Params& pp, int z, long long* red, int& b, long long& bos,
                                             long long& eos) {
  const long long t = pp.total_t;
  const int n = pp.f.n_seqs;
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  if (n > THREADS - 1) {  // never launched so (fused16.rs: FUSED16_MAX_SEQS < every form's threads)
    b = z;
    bos = eos = 0;
    return;
  }
  long long* off = red;                    // [n + 1] sanitized offsets
  long long* wmax = red + (THREADS + 1);   // [THREADS / 32] per-warp maxima
  int* pick = reinterpret_cast<int*>(wmax + THREADS / 32);
  long long x = 0;
  if (tid <= n) {
    const long long raw = load_cu(pp.f, tid);
    x = raw < 0 ? 0 : (raw > t ? t : raw);
  }
  x = warp_inclusive_max(x);
  if (lane == 31) wmax[warp] = x;
  if (tid == 0) *pick = z;
  __syncthreads();
  long long before = 0;
  for (int w = 0; w < warp; ++w) before = wmax[w] > before ? wmax[w] : before;
  if (tid <= n) off[tid] = x > before ? x : before;
  __syncthreads();
  if (pp.longest_first && tid < n) {
    const long long len = off[tid + 1] - off[tid];
    int rank = 0;
    for (int j = 0; j < n; ++j) {
      const long long lj = off[j + 1] - off[j];
      rank += lj > len || (lj == len && j < tid);
    }
    if (rank == z) *pick = tid;
  }
  __syncthreads();
  b = *pick;
  bos = off[b];
  eos = off[b + 1];
  __syncthreads();
}

// Sequence b's state row in the stored domain [rows, HO, V, K]: b, or its pool row under
// state_indices; −1 for an index outside [0, pool_rows) (no row: a zero initial state, no final
// state written), as the two-pass forward reads its sanitized copy.
__device__ __forceinline__ long long fused16_state_row(const Fused16Params& pp, int b) {
  if (!pp.f.state_indices) return b;
  const int i = pp.f.state_indices[b];
  return i >= 0 && i < pp.pool_rows ? i : -1;
}

// A producer lane's share of its warp's chunk copies, fixed for the block: q and k rows rq + 2 i
// (i < 8) at column cq, v rows rv + 4 i (i < 4) at column cv of the slice (16 bytes each; one warp
// covers a chunk: 640 pieces, 20 per lane).
template <typename T>
struct Fused16Copies {
  const T *q, *k, *v;         // the lane's column of token row 0
  long long sq, sk, sv;       // row strides (elements per token)
  int oq, ok, ov;             // the lane's first row's offset from the chunk's row 0 (rq · sq, ...)
  int sq2, sk2, sv4;          // the offsets between the lane's rows (2 sq, 2 sk, 4 sv)
  int rq, cq, rv, cv;
};

template <typename T, int K, int V, int VB>
__device__ __forceinline__ Fused16Copies<T> fused16_copies(const FwdParams& p, int qh, int kh, int vh, int v0, int lane) {
  static_assert(K == 128 && VB == 64, "16 pieces per q / k row, 8 per v row");
  Fused16Copies<T> c;
  c.rq = lane >> 4;
  c.cq = (lane & 15) * 8;
  c.rv = lane >> 3;
  c.cv = (lane & 7) * 8;
  c.sq = static_cast<long long>(p.h) * K;
  c.sk = static_cast<long long>(p.hk) * K;
  c.sv = static_cast<long long>(p.hv) * V;
  c.oq = c.rq * static_cast<int>(c.sq);
  c.ok = c.rq * static_cast<int>(c.sk);
  c.ov = c.rv * static_cast<int>(c.sv);
  c.sq2 = 2 * static_cast<int>(c.sq);
  c.sk2 = 2 * static_cast<int>(c.sk);
  c.sv4 = 4 * static_cast<int>(c.sv);
  c.q = static_cast<const T*>(p.q) + qh * K + c.cq;
  c.k = static_cast<const T*>(p.k) + kh * K + c.cq;
  c.v = static_cast<const T*>(p.v) + static_cast<long long>(vh) * V + v0 + c.cv;
  return c;
}

// TQ: where a chunk's q, k boxes come from and land (fused16_issue's `bx`).
struct Fused16Boxes {
  uint64_t* landed;           // the stage's `landed` barrier
  const dnnp::TmaDesc* maps;  // q's and k's maps (Fused16TmaParams::qk_maps)
  int qh, kh;                 // the block's q and k heads
  bool issuer;                // this CTA builds the chunk: it issues the boxes
};

// Chunk [t0, t0 + 16)'s q, k, v rows into stage s by zero-filling cp.async (rows at or past te: zeros;
// their source address is the chunk's first row, never read). Row offsets inside the chunk are
// 32-bit (16 rows of at most 2^31 / 16 elements each: the caller's strides), the chunk's base 64-bit.
// qk false: v only (a cluster form's chunk that the peer builds).
// TQ (with `bx`): a full chunk's q, k rows come as four boxes instead: lane (row 0, column 0) of the
// copying warp announces their bytes on the stage's `landed` barrier (both CTAs receive every box)
// and, in the CTA that builds the chunk (bx.issuer), issues them, multicast into both CTAs' stage; a
// partial chunk's `landed` gets that lane's plain arrival and its rows come by cp.async. (The test
// of `rem` stays the one the copies below branch on: ptxas then drops the full chunk's q, k copies;
// a separately computed test kept them and duplicated the producer's loop, session 71.)
template <typename T, int VB, bool SW, bool TQ = false>
__device__ __forceinline__ void fused16_issue(const Fused16Copies<T>& c, Fused16Stage<T, VB, SW>& s, long long t0, long long te,
                                              bool qk = true, const Fused16Boxes& bx = Fused16Boxes{}) {
  const long long left = te - t0;
  const int rem = left < F16_C ? static_cast<int>(left) : F16_C;
  if constexpr (TQ) {
    static_assert(SW, "the boxes write the 128-byte-swizzled stage");
    const bool boxes = qk && rem == F16_C;
    if (c.rq == 0 && c.cq == 0) {
      if (boxes) {
        dnnp::mbar_arrive_expect_tx(bx.landed, 4 * F16_C * 128);
        if (bx.issuer) {
          const int tok = static_cast<int>(t0);
#pragma unroll
          for (int hh = 0; hh < 2; ++hh) {
            f16c_box_multicast(&s.qk[hh][0], &bx.maps[1], 64 * hh, bx.kh, tok, bx.landed);
            f16c_box_multicast(&s.qk[hh][F16_C * 64], &bx.maps[0], 64 * hh, bx.qh, tok, bx.landed);
          }
        }
      } else {
        dnnp::mbar_arrive(bx.landed);
      }
    }
    if (boxes) qk = false;
  }
  const T* q0 = c.q + t0 * c.sq;
  const T* k0 = c.k + t0 * c.sk;
  const T* v0 = c.v + t0 * c.sv;
#if GDN_F16_FULL_COPIES
  if (rem == F16_C) {  // a full chunk (all but a sequence's last): no predicates, row pointers stepped
    if (qk) {
      const T* qr = q0 + c.oq;
      const T* kr = k0 + c.ok;
#pragma unroll
      for (int i = 0; i < F16_C / 2; ++i) {
        const int r = c.rq + 2 * i;
        cp_async16(fused16_piece(s, true, r, c.cq), qr);
        cp_async16(fused16_piece(s, false, r, c.cq), kr);
        qr += c.sq2;
        kr += c.sk2;
      }
    }
    const T* vr = v0 + c.ov;
#pragma unroll
    for (int i = 0; i < F16_C / 4; ++i) {
      cp_async16(s.v + (c.rv + 4 * i) * (VB + 8) + c.cv, vr);
      vr += c.sv4;
    }
    return;
  }
#endif
  if (qk) {
#pragma unroll
    for (int i = 0; i < F16_C / 2; ++i) {
      const int r = c.rq + 2 * i;
      const bool live = r < rem;
      cp_async16_zfill(fused16_piece(s, true, r, c.cq), q0 + (live ? c.oq + i * c.sq2 : 0), live);
      cp_async16_zfill(fused16_piece(s, false, r, c.cq), k0 + (live ? c.ok + i * c.sk2 : 0), live);
    }
  }
#pragma unroll
  for (int i = 0; i < F16_C / 4; ++i) {
    const int r = c.rv + 4 * i;
    const bool live = r < rem;
    cp_async16_zfill(s.v + r * (VB + 8) + c.cv, v0 + (live ? c.ov + i * c.sv4 : 0), live);
  }
}

// Phase A on one quarter-warp per row: a q or k row scaled to unit norm in place; lane8's two
// 16-byte pieces (channels 16 lane8 .. + 7 at piece[0], + 8 .. + 15 at piece[1]).
template <typename T, int K>
__device__ __forceinline__ void fused16_norm_row(T* const (&piece)[2]) {
  static_assert(K == 128, "a quarter-warp covers 128 elements");
  uint4 w[2];
  float x[16];
  float ss = 0.f;
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    w[i] = *reinterpret_cast<const uint4*>(piece[i]);
    const u32 ws[4] = {w[i].x, w[i].y, w[i].z, w[i].w};
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      x[8 * i + 2 * j] = Io<T>::bits_to_f(static_cast<unsigned short>(ws[j] & 0xffffu));
      x[8 * i + 2 * j + 1] = Io<T>::bits_to_f(static_cast<unsigned short>(ws[j] >> 16));
    }
  }
#pragma unroll
  for (int e = 0; e < 16; ++e) ss += x[e] * x[e];
  ss += __shfl_xor_sync(0xffffffffu, ss, 1);
  ss += __shfl_xor_sync(0xffffffffu, ss, 2);
  ss += __shfl_xor_sync(0xffffffffu, ss, 4);
  const float rs = rsqrt_ftz(ss + 1e-6f);
#pragma unroll
  for (int i = 0; i < 2; ++i) {
    uint4 o;
    o.x = Io<T>::pack(x[8 * i] * rs, x[8 * i + 1] * rs);
    o.y = Io<T>::pack(x[8 * i + 2] * rs, x[8 * i + 3] * rs);
    o.z = Io<T>::pack(x[8 * i + 4] * rs, x[8 * i + 5] * rs);
    o.w = Io<T>::pack(x[8 * i + 6] * rs, x[8 * i + 7] * rs);
    *reinterpret_cast<uint4*>(piece[i]) = o;
  }
}

// The m16n8k16 B fragments of two n8 tiles (tokens 0-7, 8-15) over channels 16 kk .. + 15 of a
// [token][channel] tile: B(k = channel, n = token) = rows[token][channel] (ldmatrix, no transpose).
template <typename T>
__device__ __forceinline__ void fused16_b_rows(u32 (&b)[4], const T* rows, int ld, int kk, int lane) {
  ldsm_x4(b, rows + ((lane & 7) + 8 * (lane >> 4)) * ld + 16 * kk + 8 * ((lane >> 3) & 1));
}

// Chunk c's O rows of the block's VB value rows, staged by the chain warps in the stage's
// v tile ([token][value], VB + 8 apart), to global memory by one producer warp, four whole token
// rows of 128 bytes per instruction; tokens at or past eos are not stored. After the wait on the
// stage's empty barrier, before any copy refills the stage (the closing __syncwarp: every lane's
// loads are consumed before a lane's cp.async may overwrite the tile).
template <typename T, int V, int VB, bool SW>
__device__ __forceinline__ void fused16_store_stage_o(const Fused16Stage<T, VB, SW>& s, T* o, long long bos, long long eos, int c,
                                                      int h, int HO, int v0, int lane) {
  static_assert(VB * sizeof(T) == 8 * 16, "a token row is eight lanes of 16 bytes");
  const int r0 = lane >> 3;  // this lane's tokens r0, r0 + 4, r0 + 8, r0 + 12
  const long long t0 = bos + static_cast<long long>(c) * F16_C + r0;
  uint4 ov[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) ov[i] = *reinterpret_cast<const uint4*>(s.v + (r0 + 4 * i) * (VB + 8) + 8 * (lane & 7));
  T* row = o + (t0 * HO + h) * static_cast<long long>(V) + v0 + 8 * (lane & 7);
  const long long step = 4LL * HO * V;
#pragma unroll
  for (int i = 0; i < 4; ++i)
    if (t0 + 4 * i < eos) st_global16(row + i * step, ov[i]);  // one 16-byte store per row
  __syncwarp();
}

// A cluster form's push of a built chunk into the peer's stage: every byte from t to the stage's end
// (T, A, the per-token scalars, e^{Γ_last}) and, when F16C_PUSH_ROWS, the 32 rows of q̂ and k̂ (k
// follows q; their 128 channels, not the pad columns); 16 bytes per store, by st.async completing
// its bytes on the peer's full barrier of that stage or (F16C_PUSH_ASYNC false) by plain remote
// stores and each lane's arrival. One warp, after fused16_build's last __syncwarp.
template <typename T, int VB, bool SW = false>
struct Fused16Push {
  using Stage = Fused16Stage<T, VB, SW>;
  static constexpr int row_pieces = 128 * static_cast<int>(sizeof(T)) / 16;  // 16 per q̂ / k̂ row
  static constexpr int tail_at = static_cast<int>(offsetof(Stage, t));
  // The tail ends at the last member (an SW stage's alignment padding follows it).
  static constexpr int tail_end = static_cast<int>(offsetof(Stage, pad) + sizeof(Stage::pad));
  static constexpr int tail_pieces = (tail_end - tail_at) / 16;
  static constexpr int bytes = 16 * ((F16C_PUSH_ROWS ? 2 * F16_C * row_pieces : 0) + tail_pieces);
  static constexpr bool k_follows_q() {
    if constexpr (SW) return true;
    else return offsetof(Stage, k) == F16_C * F16_LD * sizeof(T);
  }
  static_assert(sizeof(T) == 2 && k_follows_q(), "k̂ rows follow q̂ rows");
  static_assert(!SW || !F16C_PUSH_ROWS, "swizzled rows are not pushed (each CTA copies its own)");
  static_assert(tail_at % 16 == 0 && tail_end % 16 == 0, "16-byte pieces");
};
template <typename T, int VB, bool SW>
__device__ __forceinline__ void fused16_push(const Fused16Stage<T, VB, SW>& s, F16cAddr peer_stage, F16cAddr peer_full, int lane) {
  using P = Fused16Push<T, VB, SW>;
  static_assert(P::row_pieces == 16, "two rows per warp pass");
  const unsigned char* base = reinterpret_cast<const unsigned char*>(&s);
  auto put = [&](int off) {
    const uint4 v = *reinterpret_cast<const uint4*>(base + off);
    if constexpr (F16C_PUSH_ASYNC) f16c_st_async(f16c_add(peer_stage, off), v, peer_full);
    else f16c_st(f16c_add(peer_stage, off), v);
  };
  if constexpr (F16C_PUSH_ROWS) {
#pragma unroll
    for (int i = 0; i < F16_C; ++i) put(((lane >> 4) + 2 * i) * F16_LD * static_cast<int>(sizeof(T)) + 16 * (lane & 15));
  }
#pragma unroll
  for (int i = 0; i < (P::tail_pieces + 31) / 32; ++i) {
    const int piece = lane + 32 * i;
    if (piece < P::tail_pieces) put(P::tail_at + 16 * piece);
  }
  if constexpr (!F16C_PUSH_ASYNC) f16c_arrive_peer(peer_full);  // each lane publishes its own stores
}

// Timing diagnostics (bench/gdn_fused16_bench.cu; their outputs are not the forward's): the chain
// with the producer's copies but none of its arithmetic (F16_CHAIN_COPIES), the producer alone with
// a chain that only takes and releases the stages (F16_PRODUCER), the chain alone on zeroed stages
// that the producer hands over without copying or computing anything (F16_CHAIN_ONLY).
enum Fused16Mode : int { F16_FULL = 0, F16_CHAIN_COPIES = 1, F16_PRODUCER = 2, F16_CHAIN_ONLY = 3 };

// One warp: q̂, k̂ in place of the stage's raw q, k rows under l2norm (else nothing).
template <typename T, int K, int VB, bool SW>
__device__ __forceinline__ void fused16_norm_rows(const FwdParams& p, Fused16Stage<T, VB, SW>& s, int lane) {
  if (p.flags & FLAG_L2NORM) {
#pragma unroll
    for (int round = 0; round < 8; ++round) {
      const int r = 4 * round + (lane >> 3), c0 = 16 * (lane & 7);
      T* const piece[2] = {fused16_piece(s, r < 16, r & 15, c0), fused16_piece(s, r < 16, r & 15, c0 + 8)};
      fused16_norm_row<T, K>(piece);
    }
  }
}

// The m16n8k16 B fragments of two n8 tiles (tokens 0-7, 8-15) over channels 16 kk .. + 15 of the
// stage's q̂ (isq) or k̂ rows: B(k = channel, n = token).
template <typename Stage>
__device__ __forceinline__ void fused16_qk_b(u32 (&b)[4], Stage& s, bool isq, int kk, int lane) {
  ldsm_x4(b, fused16_piece(s, isq, (lane & 7) + 8 * (lane >> 4), 16 * kk + 8 * ((lane >> 3) & 1)));
}
// The update's B fragments: K̂ (k = token, n = channel) over channels 16 np .. + 15, transposed on load.
template <typename Stage>
__device__ __forceinline__ void fused16_k_bt(u32 (&b)[4], Stage& s, int np, int lane) {
  ldsm_x4_t(b, fused16_piece(s, false, (lane & 7) + 8 * ((lane >> 3) & 1), 16 * np + 8 * (lane >> 4)));
}

// T = (I + L)⁻¹ into the stage (io) from the warp's Lᵀ scratch lt (fp32, rows 20 floats apart), by
// forward substitution: column j = lane (lanes 16-31 repeat column lane − 16 and store nothing),
// T[i][j] = −Σ_m L[i][m] T[m][j]. The end of fused16_build and fused16_build_folded.
template <typename T, int VB, bool SW>
__device__ __forceinline__ void fused16_invert_l(Fused16Stage<T, VB, SW>& s, const float* lt, int lane) {
  const int j = lane & 15;
  float acc[F16_C], tc[F16_C];
#pragma unroll
  for (int i = 0; i < F16_C; ++i) acc[i] = 0.f;
#pragma unroll
  for (int m = 0; m < F16_C; ++m) {
    const float tm = m < j ? 0.f : (m == j ? 1.f : -acc[m]);
    tc[m] = tm;
    float lm[F16_C];  // row m of Lᵀ (column m of L) by four 16-byte broadcasts
#pragma unroll
    for (int q4 = 0; q4 < F16_C / 4; ++q4) {
      const float4 w4 = *reinterpret_cast<const float4*>(&lt[m * 20 + 4 * q4]);
      lm[4 * q4] = w4.x;
      lm[4 * q4 + 1] = w4.y;
      lm[4 * q4 + 2] = w4.z;
      lm[4 * q4 + 3] = w4.w;
    }
#pragma unroll
    for (int i = m + 1; i < F16_C; ++i) acc[i] += lm[i] * tm;
  }
  if (lane < 16) {
#pragma unroll
    for (int i = 0; i < F16_C; ++i) s.t[i * F16_TLD + j] = Io<T>::from_f(tc[i]);
  }
  __syncwarp();
}

// Chunk c's per-token gates, lane t = lane & 15 for token t (lanes 16-31 repeat 0-15): gam = Γ_t,
// the inclusive prefix sum of the chunk's log decays, and bet = β_t; both 0 at or past `live`.
// gates: lane t < 16 holds token t's raw g bits, lane 16 + t its β bits (fused16_build's).
__device__ __forceinline__ void fused16_gate_scan(const FwdParams& p, u32 gates, int live, int h, int t, float& gam,
                                                  float& bet) {
  const u32 graw = __shfl_sync(0xffffffffu, gates, t);
  const u32 braw = __shfl_sync(0xffffffffu, gates, 16 + t);
  gam = 0.f;
  bet = 0.f;
  if (t < live) {
    gam = gate_log_decay(p, raw_bits_to_f(graw, p.g_dtype), h);
    bet = gate_beta(p, raw_bits_to_f(braw, p.beta_dtype));
  }
#pragma unroll
  for (int d = 1; d < 16; d <<= 1) {
    const float up = __shfl_up_sync(0xffffffffu, gam, d);
    if (t >= d) gam += up;
  }
}

// One producer warp turns chunk c's raw rows in stage s into q̂, k̂ (l2 norms in place), the per-token
// scalars, T = (I + L)⁻¹ and A. gates: lane t < 16 holds token t's g, lane 16 + t its β (0 past the
// sequence); live: the chunk's tokens inside the sequence; lt: the warp's Lᵀ scratch.
template <typename T, int K, int VB, bool SW>
__device__ __forceinline__ void fused16_build(const FwdParams& p, Fused16Stage<T, VB, SW>& s, float* lt, u32 gates, int live,
                                              int h, int lane) {
  const int gi = lane >> 2, tg = lane & 3;
  {
    const int t = lane & 15;
    float gam, bet;
    fused16_gate_scan(p, gates, live, h, t, gam, bet);
    const float glast = __shfl_sync(0xffffffffu, gam, 15);
    if (lane < 16) {
      const float eg = __expf(gam);
      s.se[t] = bet * eg;
      s.sq[t] = p.scale * eg;
      s.sk[t] = __expf(glast - gam);
      s.be[t] = bet;
      s.gm[t] = gam;
      if (t == 15) s.gl = __expf(glast);
    }
  }
  fused16_norm_rows<T, K>(p, s, lane);
  __syncwarp();
  // K̂ K̂ᵀ and Q̂ K̂ᵀ over one set of K̂ fragments: ldmatrix of a [token][channel] tile gives the B
  // fragments of both n8 tiles, and the same four registers in the order {0, 2, 1, 3} are its A
  // fragment (rows 0-7 / 8-15 × channels 0-7 / 8-15).
  float gk[2][4], gq[2][4];
  zero_frags(gk);
  zero_frags(gq);
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    u32 bk[4], bq[4];
    fused16_qk_b(bk, s, false, kk, lane);
    fused16_qk_b(bq, s, true, kk, lane);
    const u32 ak[4] = {bk[0], bk[2], bk[1], bk[3]};
    const u32 aq[4] = {bq[0], bq[2], bq[1], bq[3]};
    Io<T>::mma(gk[0], ak, bk);
    Io<T>::mma(gk[1], ak, bk + 2);
    Io<T>::mma(gq[0], aq, bk);
    Io<T>::mma(gq[1], aq, bk + 2);
  }
  // L = strict tril(β_i e^{Γi − Γj} k̂i · k̂j) (fp32, as Lᵀ) and A = tril(scale e^{Γi − Γj} q̂i · k̂j),
  // one exponential per element for both.
  float gmi[2], bei[2], gmj[2][2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    gmi[r] = s.gm[gi + 8 * r];
    bei[r] = s.be[gi + 8 * r];
    gmj[r][0] = s.gm[8 * r + 2 * tg];
    gmj[r][1] = s.gm[8 * r + 2 * tg + 1];
  }
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int e = 0; e < 4; e += 2) {
      const int i = gi + 8 * (e >> 1), j = 8 * nt + 2 * tg;
      float av[2];
#pragma unroll
      for (int d = 0; d < 2; ++d) {
        const float ex = j + d <= i ? __expf(gmi[e >> 1] - gmj[nt][d]) : 0.f;
        lt[(j + d) * 20 + i] = j + d < i ? bei[e >> 1] * ex * gk[nt][e + d] : 0.f;
        av[d] = p.scale * ex * gq[nt][e + d];
      }
      *reinterpret_cast<u32*>(&s.a[i * F16_TLD + j]) = Io<T>::pack(av[0], av[1]);
    }
  __syncwarp();
  fused16_invert_l<T, VB>(s, lt, lane);
}

// GDN_F16_FOLD 1 (session 52; the default since session 54). Under l2norm the stage keeps the raw
// q, k rows and the norms fold into per-token scalars instead of a pass that rewrites q̂, k̂ in place:
// with rk_t, rq_t the reciprocal norms (from the diagonals of K Kᵀ and Q Qᵀ, which the Gram products
// give), P̂ = P diag(rk), Q̂ = Q diag(rq) and K̂ = diag(rk) K reach the chain through β e^Γ rk,
// scale e^Γ rq and e^{Γ_last − Γ} rk, and L, A take rk_i rk_j and rq_i rk_j. The chain is unchanged;
// q̂, k̂ are never rounded to the io dtype (closer to the fp64 recurrence, other bits than
// GDN_F16_FOLD 0). Measured on an H100 with l2norm in the kernel: w4c 0.318 ms against 0.369 at
// (4,8192,16), b2c 0.608 against 0.756 at (16,2048,32), w4c 0.391 against 0.446 on the ragged mix.
// Without l2norm a call runs fused16_build unchanged (session 53 measured a first form that folded
// there too 0.5-1.5 % slower: it removes nothing).
#ifndef GDN_F16_FOLD
#define GDN_F16_FOLD 1
#endif

// fused16_build under l2norm with the norms folded (GDN_F16_FOLD 1; the caller picks it when
// p.flags has FLAG_L2NORM): the stage's raw q, k rows stay, the scalars and L, A carry the norms.
template <typename T, int K, int VB, bool SW>
__device__ __forceinline__ void fused16_build_folded(const FwdParams& p, Fused16Stage<T, VB, SW>& s, float* lt, u32 gates, int live,
                                              int h, int lane) {
  const int gi = lane >> 2, tg = lane & 3;
  const int t = lane & 15;  // the token whose scalars this lane computes (lanes 16-31 repeat 0-15)
  float gam, bet;
  fused16_gate_scan(p, gates, live, h, t, gam, bet);
  const float glast = __shfl_sync(0xffffffffu, gam, 15);
  const float eg = __expf(gam), decay_to_end = __expf(glast - gam);
  if (lane < 16) {
    s.be[t] = bet;
    s.gm[t] = gam;
    if (t == 15) s.gl = __expf(glast);
  }
  __syncwarp();
  // K̂ K̂ᵀ and Q̂ K̂ᵀ over one set of K̂ fragments: ldmatrix of a [token][channel] tile gives the B
  // fragments of both n8 tiles, and the same four registers in the order {0, 2, 1, 3} are its A
  // fragment (rows 0-7 / 8-15 × channels 0-7 / 8-15). Folded: K Kᵀ, Q Kᵀ and Q Qᵀ of the raw rows.
  float gk[2][4], gq[2][4], gqq[2][4];
  zero_frags(gk);
  zero_frags(gq);
  zero_frags(gqq);
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    u32 bk[4], bq[4];
    fused16_qk_b(bk, s, false, kk, lane);
    fused16_qk_b(bq, s, true, kk, lane);
    const u32 ak[4] = {bk[0], bk[2], bk[1], bk[3]};
    const u32 aq[4] = {bq[0], bq[2], bq[1], bq[3]};
    Io<T>::mma(gk[0], ak, bk);
    Io<T>::mma(gk[1], ak, bk + 2);
    Io<T>::mma(gq[0], aq, bk);
    Io<T>::mma(gq[1], aq, bk + 2);
    Io<T>::mma(gqq[0], aq, bq);
    Io<T>::mma(gqq[1], aq, bq + 2);
  }
  // The reciprocal norms: lane t < 16 (and t + 16) gets rk_t, rq_t from the lane holding the
  // diagonal elements (t, t) (rows gi, cols 2 tg + d of n8 tile 0, and 8 + both of tile 1, when
  // d = gi − 2 tg is 0 or 1), then every lane its rows' and columns' factors.
  float rki[2], rqi[2], rkj[2][2], rk_t, rq_t;
  {
    const int dg = gi - 2 * tg;
    const bool holds = dg == 0 || dg == 1;
    const float k_lo = holds ? (dg ? gk[0][1] : gk[0][0]) : 0.f, k_hi = holds ? (dg ? gk[1][3] : gk[1][2]) : 0.f;
    const float q_lo = holds ? (dg ? gqq[0][1] : gqq[0][0]) : 0.f, q_hi = holds ? (dg ? gqq[1][3] : gqq[1][2]) : 0.f;
    const int src = 4 * (t & 7) + ((t & 7) >> 1);
    const float kl = __shfl_sync(0xffffffffu, k_lo, src), kh = __shfl_sync(0xffffffffu, k_hi, src);
    const float ql = __shfl_sync(0xffffffffu, q_lo, src), qh = __shfl_sync(0xffffffffu, q_hi, src);
    rk_t = rsqrt_ftz((t < 8 ? kl : kh) + 1e-6f);
    rq_t = rsqrt_ftz((t < 8 ? ql : qh) + 1e-6f);
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      rki[r] = __shfl_sync(0xffffffffu, rk_t, gi + 8 * r);
      rqi[r] = __shfl_sync(0xffffffffu, rq_t, gi + 8 * r);
      rkj[r][0] = __shfl_sync(0xffffffffu, rk_t, 8 * r + 2 * tg);
      rkj[r][1] = __shfl_sync(0xffffffffu, rk_t, 8 * r + 2 * tg + 1);
    }
  }
  if (lane < 16) {
    s.se[t] = bet * eg * rk_t;
    s.sq[t] = p.scale * eg * rq_t;
    s.sk[t] = decay_to_end * rk_t;
  }
  // L and A as fused16_build's, with k̂i · k̂j = (ki · kj) rk_i rk_j and q̂i · k̂j = (qi · kj) rq_i rk_j.
  float gmi[2], bei[2], gmj[2][2];
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    gmi[r] = s.gm[gi + 8 * r];
    bei[r] = s.be[gi + 8 * r];
    gmj[r][0] = s.gm[8 * r + 2 * tg];
    gmj[r][1] = s.gm[8 * r + 2 * tg + 1];
  }
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int e = 0; e < 4; e += 2) {
      const int i = gi + 8 * (e >> 1), j = 8 * nt + 2 * tg;
      float av[2];
#pragma unroll
      for (int d = 0; d < 2; ++d) {
        const float ex = j + d <= i ? __expf(gmi[e >> 1] - gmj[nt][d]) : 0.f;
        const float kdot = gk[nt][e + d] * (rki[e >> 1] * rkj[nt][d]);
        const float qdot = gq[nt][e + d] * (rqi[e >> 1] * rkj[nt][d]);
        lt[(j + d) * 20 + i] = j + d < i ? bei[e >> 1] * ex * kdot : 0.f;
        av[d] = p.scale * ex * qdot;
      }
      *reinterpret_cast<u32*>(&s.a[i * F16_TLD + j]) = Io<T>::pack(av[0], av[1]);
    }
  __syncwarp();
  fused16_invert_l<T, VB>(s, lt, lane);
}

// A producer warp's copies but its latest D − 1 groups landed; a swizzled stage's rows then made
// visible to the chain's wgmma (async proxy).
template <int D, bool SW>
__device__ __forceinline__ void fused16_copies_landed() {
  cp_async_wait<D - 1>();
  if constexpr (SW) dnnp::fence_proxy_async_shared();
}

// The build a call takes: folded under l2norm with GDN_F16_FOLD 1, else fused16_build. A swizzled
// stage's q̂, k̂ rewritten in place by generic stores (fused16_build under l2norm) are then made
// visible to the chain's wgmma (async proxy).
template <typename T, int K, int VB, bool SW>
__device__ __forceinline__ void fused16_build_any(const FwdParams& p, Fused16Stage<T, VB, SW>& s, float* lt, u32 gates, int live,
                                                  int h, int lane) {
  if (GDN_F16_FOLD && (p.flags & FLAG_L2NORM)) fused16_build_folded<T, K, VB>(p, s, lt, gates, live, h, lane);
  else fused16_build<T, K, VB>(p, s, lt, gates, live, h, lane);
  if constexpr (SW) {
    if (!GDN_F16_FOLD && (p.flags & FLAG_L2NORM)) {
      dnnp::fence_proxy_async_shared();
      __syncwarp();
    }
  }
}

// The chain step's pieces (fwd_fused16_body's step loop).
// One channel step kk of P or Q: A fragment a times the step's B fragments b (both n8 tiles), into d
// (steps below K / 32) or d2: the channel halves' two accumulator sets, which every P / Q product
// sums the same way (the forms' bits depend on it).
template <typename T, int K>
__device__ __forceinline__ void fused16_mma_step(float (&d)[2][4], float (&d2)[2][4], int kk, const u32 (&a)[4], const u32 (&b)[4]) {
  float(&dd)[2][4] = kk < K / 32 ? d : d2;
  Io<T>::mma(dd[0], a, b);
  Io<T>::mma(dd[1], a, b + 2);
}
// P = X K̂ᵀ and Q = X Q̂ᵀ (V × 16, the warp's 16 value rows): one pass over X's A fragments, the
// channel halves into two accumulator sets each, zeroed here (two 4-deep mma chains instead of one
// 8-deep; the caller sums pe + pe2, pq + pq2).
// WQ: the Q product (false: GDN_F16_ABLATE_READOUT).
template <typename T, int K, int VB, bool SW, bool WQ = F16_READOUT>
__device__ __forceinline__ void fused16_chain_pq(float (&pe)[2][4], float (&pq)[2][4], float (&pe2)[2][4], float (&pq2)[2][4],
                                                 const float (&x)[K / 8][4], const Fused16Stage<T, VB, SW>& s, int lane) {
  zero_frags(pe);
  zero_frags(pq);
  zero_frags(pe2);
  zero_frags(pq2);
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    u32 a[4], bk[4], bq[4];
    x_a_frag<T>(a, x, kk);
    fused16_qk_b(bk, s, false, kk, lane);
    if constexpr (WQ) fused16_qk_b(bq, s, true, kk, lane);
    fused16_mma_step<T, K>(pe, pe2, kk, a, bk);
    if constexpr (WQ) fused16_mma_step<T, K>(pq, pq2, kk, a, bq);
  }
}
// WG forms: [P | Q] (the warp's 16 value rows × 32) = X [K̂; Q̂]ᵀ by the warpgroup (all four chain
// warps, together): 8 k16 steps of wgmma m64n32k16, A = X's fragments, B = the stage's swizzled tile
// of channel half kk / 4 at +32 B per step; n8 tiles 0, 1 are P's tokens, 2, 3 Q's.
template <typename T, int K, int VB>
__device__ __forceinline__ void fused16_chain_pq_wg(float (&pe)[2][4], float (&pq)[2][4], const float (&x)[K / 8][4],
                                                    const Fused16Stage<T, VB, true>& s) {
  u32 af[K / 16][4];
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) x_a_frag<T>(af[kk], x, kk);
  dnnp::wgmma_fence();
  float d[16];
  const uint32_t tile = dnnp::smem_u32(&s.qk[0][0]);
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    const uint64_t desc = dnnp::wgmma_desc(tile + (kk >> 2) * 4096 + (kk & 3) * 32, 16, 1024, 1);
    if (kk == 0) SlimWgN<T>::template mma_first<32, 0>(d, af[kk], desc);  // d = A B (scale-d 0)
    else SlimWgN<T>::template mma<32, 0>(d, af[kk], desc);
  }
  dnnp::wgmma_commit();
  dnnp::wgmma_wait<0>();
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      dnnp::wgmma_fence_operand(d[4 * nt + e]);
      dnnp::wgmma_fence_operand(d[8 + 4 * nt + e]);
      pe[nt][e] = d[4 * nt + e];
      pq[nt][e] = d[8 + 4 * nt + e];
    }
}
// Uᵀ = Rᵀ Tᵀ (the warp's 16 value rows × 16 tokens; r in the accumulator layout).
template <typename T, int VB, bool SW>
__device__ __forceinline__ void fused16_chain_u(float (&u)[2][4], const float (&r)[2][4], const Fused16Stage<T, VB, SW>& s, int lane) {
  u32 ra[4], tb[4];
  x_a_frag<T>(ra, r, 0);
  fused16_b_rows(tb, s.t, F16_TLD, 0, lane);
  zero_frags(u);
  Io<T>::mma(u[0], ra, tb);
  Io<T>::mma(u[1], ra, tb + 2);
}
// Oᵀ += Uᵀ Aᵀ (pq: the readout Q diag(scale e^Γ)); ua: Uᵀ's A fragment, left for the caller.
template <typename T, int VB, bool SW>
__device__ __forceinline__ void fused16_chain_o(float (&pq)[2][4], u32 (&ua)[4], const float (&u)[2][4], const Fused16Stage<T, VB, SW>& s,
                                                int lane) {
  u32 ab[4];
  x_a_frag<T>(ua, u, 0);
  fused16_b_rows(ab, s.a, F16_TLD, 0, lane);
  Io<T>::mma(pq[0], ua, ab);
  Io<T>::mma(pq[1], ua, ab + 2);
}
// X += ua K̂: the update's 16 mma (ua: Uᵀ diag(e^{Γ_last − Γ})'s A fragment; K̂'s B fragments by
// transposing ldmatrix of the [token][channel] rows).
template <typename T, int K, int VB, bool SW>
__device__ __forceinline__ void fused16_chain_update(float (&x)[K / 8][4], const u32 (&ua)[4], const Fused16Stage<T, VB, SW>& s,
                                                     int lane) {
#pragma unroll
  for (int np = 0; np < K / 16; ++np) {
    u32 kb[4];
    fused16_k_bt(kb, s, np, lane);
    Io<T>::mma(x[2 * np], ua, kb);
    Io<T>::mma(x[2 * np + 1], ua, kb + 2);
  }
}
// UW: X += ua K̂ by the warpgroup (the caller has applied the decay to X): one wgmma m64n128k16 RS,
// B = K̂ (k = token, n = channel) MN-major from the swizzled tile (channel half n / 64 at +4096 B:
// LBO; tokens 8-15 at +1024 B: SBO), X the accumulator (the wgmma D layout is X's mma.sync C
// layout); waited for before the caller releases the stage (the wgmma reads it asynchronously).
template <typename T, int K, int VB>
__device__ __forceinline__ void fused16_chain_update_wg(float (&x)[K / 8][4], const u32 (&ua)[4], const Fused16Stage<T, VB, true>& s) {
  static_assert(K == 128, "one m64n128 update");
  dnnp::wgmma_fence_frags(x);
  dnnp::wgmma_fence();
  SlimWgN<T>::template mma<128, 1>(&x[0][0], ua, dnnp::wgmma_desc(dnnp::smem_u32(&s.qk[0][0]), 4096, 1024, 1));
  dnnp::wgmma_commit();
  dnnp::wgmma_wait<0>();
  dnnp::wgmma_fence_frags(x);
}
// O: the warp's 16 value rows × 16 tokens (pq, accumulator layout) into its 16 value columns of the
// stage's v tile by one transposing stmatrix ([token][value], row stride LD = VB + 8), where the
// producer warp that refills the stage stores them (fused16_store_stage_o).
template <typename T, int LD>
__device__ __forceinline__ void fused16_stage_o(T* tile, const float (&pq)[2][4], int lane) {
  const u32 r[4] = {Io<T>::pack(pq[0][0], pq[0][1]), Io<T>::pack(pq[0][2], pq[0][3]), Io<T>::pack(pq[1][0], pq[1][1]),
                    Io<T>::pack(pq[1][2], pq[1][3])};
  stsm_x4_t(tile + ((lane & 7) + 8 * (lane >> 4)) * LD + 8 * ((lane >> 3) & 1), r);
}

// The generic address of TQ entry NAME's pp.qk_maps (its only parameter, a __grid_constant__
// Fused16TmaParams) into `ptr`, by inline PTX: taking &pp.qk_maps in C++ makes the compiler address
// the whole parameter block through a pointer, and ptxas then duplicated b2c's producer loop (+1,600
// instructions, session 71); the asm keeps every other field a constant-bank operand.
#define GDN_FUSED16_QK_MAPS(NAME, ptr)                                                                          \
  asm("{\n\t.reg .b64 t;\n\tmov.b64 t, " #NAME "_param_0;\n\tcvta.param.u64 t, t;\n\tadd.u64 %0, t, 256;\n}" \
      : "=l"(ptr))

// Entry NAME of one-pass form FORM (io T, MODE; kernels/src/gdn_fused16.cu, the harness): the block
// Fused16Params by value. A TQ form's entry (GDN_FUSED16_TQ_ENTRY) takes Fused16TmaParams instead and
// hands its maps' address to the body. The host launches both with the TQ block, whose prefix each
// entry's own block is (src/engines/gdn/fused16.rs).
#define GDN_FUSED16_ENTRY(NAME, T, FORM, BLOCKS, MODE)                                       \
  extern "C" __global__ void __launch_bounds__(gdn::FORM::threads, BLOCKS)                   \
      NAME(const __grid_constant__ gdn::Fused16Params p) {                                   \
    static_assert(!gdn::FORM::tma_qk, "a TQ form's entry is GDN_FUSED16_TQ_ENTRY");          \
    gdn::fwd_fused16_body<T, 128, 128, 64, gdn::FORM, MODE>(p);                              \
  }
#define GDN_FUSED16_TQ_ENTRY(NAME, T, FORM, BLOCKS, MODE)                                    \
  extern "C" __global__ void __launch_bounds__(gdn::FORM::threads, BLOCKS)                   \
      NAME(const __grid_constant__ gdn::Fused16TmaParams pp) {                               \
    static_assert(gdn::FORM::tma_qk, "GDN_FUSED16_TQ_ENTRY is a TQ form's entry");           \
    const dnnp::TmaDesc* qk_maps;                                                            \
    GDN_FUSED16_QK_MAPS(NAME, qk_maps);                                                      \
    gdn::fwd_fused16_body<T, 128, 128, 64, gdn::FORM, MODE>(pp.p, qk_maps);                  \
  }

// The one pass. qk_maps: the TQ forms' &pp.qk_maps (GDN_FUSED16_QK_MAPS; unused by the other forms).
template <typename T, int K, int V, int VB, typename F, int MODE = F16_FULL>
__device__ __forceinline__ void fwd_fused16_body(const Fused16Params& pp, const dnnp::TmaDesc* qk_maps = nullptr) {
  const FwdParams& p = pp.f;
  static_assert(K == 128 && V % VB == 0 && VB == 64, "fused16: K = 128, value slices of 64");
  constexpr int S = F::stages, PW = F::producer_warps, D = F::ahead;
  constexpr bool CL = F::cluster == 2;
  static_assert(!CL || MODE == F16_FULL || MODE == F16_PRODUCER, "a cluster form: the forward or its producer alone");
  Fused16Smem<T, VB, F>& sm = *reinterpret_cast<Fused16Smem<T, VB, F>*>(fused16_dyn_smem());
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int gi = lane >> 2, tg = lane & 3;
  const int v0 = blockIdx.x * VB, h = blockIdx.y;
  const int HO = p.ho;
  const int qh = h / (HO / p.h), kh = h / (HO / p.hk), vh = h / (HO / p.hv);
  int b;
  long long bos, eos;
  static_assert(sizeof(sm.st[0]) >= fused16_rows_scratch<F::threads>(), "fused16_rows' scratch is the first stage");
  fused16_rows<F::threads>(pp, blockIdx.z, reinterpret_cast<long long*>(&sm.st[0]), b, bos, eos);
  const int nch = static_cast<int>((eos - bos + F16_C - 1) / F16_C);
  const long long srow = fused16_state_row(pp, b);
  T* o = static_cast<T*>(p.o);
  if constexpr (F::swizzled) dnnp::trap_unless_swizzle_aligned(&sm.st[0]);
  if constexpr (MODE == F16_CHAIN_ONLY) {
    for (int i = tid; i < static_cast<int>(sizeof(sm.st) / 16); i += F::threads)
      reinterpret_cast<uint4*>(sm.st)[i] = uint4{0u, 0u, 0u, 0u};
    if constexpr (F::swizzled) dnnp::fence_proxy_async_shared();
  }
  if (tid == 0) {
    for (int i = 0; i < S; ++i) {
      // A cluster form's stage of the peer's chunks (i % 2 != rank) also counts the pushing lanes.
      const bool pushed = CL && !F16C_PUSH_ASYNC && (i & 1) != static_cast<int>(blockIdx.x & 1u);
      dnnp::mbar_init(&sm.full[i], pushed ? 33 : 1);
      dnnp::mbar_init(&sm.empty[i], F16_CHAIN_WARPS * (F::remote_forward ? 1 : F::cluster));  // CL: both CTAs' chains
      if constexpr (F::remote_forward || F::tma_qk) dnnp::mbar_init(&sm.empty[S + i], 1);  // RF's peer_free, TQ's landed
    }
    dnnp::mbar_init_fence();
  }
  __syncthreads();
  if constexpr (CL) f16c_cluster_sync();  // the peer's barriers are initialised before any remote use
  const uint32_t rank = blockIdx.x & 1u;    // a cluster form's CTA rank (cluster (2, 1, 1) over x)

  if (warp >= F16_CHAIN_WARPS) {
    // ---------------------------------------------------------------- producer
    // Warp pw owns chunks pw, pw + PW, ...: it copies chunk c + PW·D (its own, D ahead) into a free
    // stage, then builds chunk c alone and hands it over; no barrier among the producer warps.
    if constexpr (F::producer_regs > 0) dnnp::setmaxnreg_dec<F::producer_regs>();
    const int pw = warp - F16_CHAIN_WARPS;
    const Fused16Copies<T> cp = fused16_copies<T, K, V, VB>(p, qh, kh, vh, v0, lane);
    // The raw bits of g (lanes 0-15) or β (16-31) of chunk c's token lane & 15, 0 past the sequence.
    auto gate_load = [&](int c) {
      const long long tok = bos + static_cast<long long>(c) * F16_C + (lane & 15);
      if (MODE == F16_CHAIN_ONLY || c >= nch || tok >= eos) return 0u;
      return lane < 16 ? load_raw_bits(p.g, p.g_dtype, tok * HO + h) : load_raw_bits(p.beta, p.beta_dtype, tok * HO + h);
    };
    u32 gring[D];
    // SP: producer warps 1.. wait (before their prologue copies) for warp 0's prologue rows, which
    // warp 0 announces once they landed (its later cp_async_wait finds nothing pending).
    auto stagger_wait = [&] {
      if constexpr (F::staggered) {
        if (pw > 0) dnnp::named_bar_sync(1, 32 * PW);
      }
    };
    auto stagger_release = [&] {
      if constexpr (F::staggered) {
        if (pw == 0) {
          cp_async_wait<0>();
          dnnp::named_bar_arrive(1, 32 * PW);
        }
      }
    };
    // Chunk c's O rows, staged in stage st, to global memory (after the stage's release).
    auto store_o = [&](int st, int c) { fused16_store_stage_o<T, V, VB>(sm.st[st], o, bos, eos, c, h, HO, v0, lane); };
    // The O rows of the chunks whose stage no later chunk refills (the last S), each by the warp
    // that owns its chunk (CL: its pair), once the chains released it.
    auto drain_o = [&] {
      for (int c = nch > S ? nch - S : 0; c < nch; ++c) {
        if ((CL ? (c >> 1) : c) % PW != pw) continue;
        dnnp::mbar_wait(&sm.empty[c % S], (c / S) & 1);
        store_o(c % S, c);
      }
    };
    if constexpr (CL) {
      // Pairs m = pw, pw + PW, ...: chunk 2m + rank is this CTA's to copy, build and push, chunk
      // 2m + 1 − rank the peer's (copied here too, q, k only unless the peer pushes them; its full
      // barrier then expects the push).
      const F16cAddr peer_st = f16c_peer(&sm.st[0], rank ^ 1u), peer_full = f16c_peer(&sm.full[0], rank ^ 1u);
      const F16cAddr peer_free = f16c_peer(&sm.empty[F::remote_forward ? S : 0], rank ^ 1u);
      const int npair = (nch + 1) >> 1;
      auto issue_pair = [&](int m) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int ch = 2 * m + e;
          if (ch < nch) {
            // The chunk's first token and the q, k flag are written out in each branch, not hoisted:
            // a hoisted pair renamed the registers of the non-TQ forms' loop (w8c's SASS changed,
            // session 72), so the non-TQ call keeps the expression it had before TQ.
            if constexpr (F::tma_qk) {
              fused16_issue<T, VB, true, true>(cp, sm.st[ch % S], bos + static_cast<long long>(ch) * F16_C, eos,
                                               !F16C_PUSH_ROWS || e == static_cast<int>(rank),
                                               Fused16Boxes{fused16_landed(sm, ch % S), qk_maps, qh, kh, e == static_cast<int>(rank)});
            } else {
              fused16_issue(cp, sm.st[ch % S], bos + static_cast<long long>(ch) * F16_C, eos,
                            !F16C_PUSH_ROWS || e == static_cast<int>(rank));
            }
          }
        }
      };
      stagger_wait();
#pragma unroll
      for (int i = 0; i < D; ++i) {
        const int m = pw + PW * i;
        if (m < npair) issue_pair(m);
        cp_async_commit();
        gring[i] = gate_load(2 * m + static_cast<int>(rank));
      }
      stagger_release();
      for (int m = pw; m < npair; m += PW) {
        const int own = 2 * m + static_cast<int>(rank), oth = 2 * m + 1 - static_cast<int>(rank);
        const u32 gates = gring[0];
#pragma unroll
        for (int i = 0; i + 1 < D; ++i) gring[i] = gring[i + 1];
        fused16_copies_landed<D, F::swizzled>();
        if constexpr (F::tma_qk) {
          if (own < nch) dnnp::mbar_wait(fused16_landed(sm, own % S), (own / S) & 1);
          if (oth < nch) dnnp::mbar_wait(fused16_landed(sm, oth % S), (oth / S) & 1);
        }
        __syncwarp();
        if (oth < nch) {
          if constexpr (!F16C_PUSH_ROWS && !GDN_F16_FOLD) {  // folded: the chain reads the raw rows
            fused16_norm_rows<T, K>(p, sm.st[oth % S], lane);
            if constexpr (F::swizzled) dnnp::fence_proxy_async_shared();
            __syncwarp();
          }
          if (lane == 0) {
            if constexpr (F16C_PUSH_ASYNC) dnnp::mbar_arrive_expect_tx(&sm.full[oth % S], Fused16Push<T, VB, F::swizzled>::bytes);
            else dnnp::mbar_arrive(&sm.full[oth % S]);
          }
        }
        if (own < nch) {
          Fused16Stage<T, VB, F::swizzled>& s = sm.st[own % S];
          const long long left = eos - bos - static_cast<long long>(own) * F16_C;
          fused16_build_any<T, K, VB>(p, s, sm.lt[pw], gates, left < F16_C ? static_cast<int>(left) : F16_C, h, lane);
          // RF: the peer's chains released their stage own % S (chunk own − S): the peer's forward.
          if (F::remote_forward && own >= S) dnnp::mbar_wait(&sm.empty[S + own % S], ((own / S) & 1) ^ 1);
          fused16_push(s, f16c_add(peer_st, (own % S) * static_cast<int>(sizeof(Fused16Stage<T, VB, F::swizzled>))),
                       f16c_add(peer_full, 8 * (own % S)), lane);
          if (lane == 0) dnnp::mbar_arrive(&sm.full[own % S]);
        }
        const int mn = m + PW * D;
        if (mn < npair) {
#pragma unroll
          for (int e = 0; e < 2; ++e) {
            const int ch = 2 * mn + e;
            if (ch < nch && ch >= S) {
              dnnp::mbar_wait(&sm.empty[ch % S], ((ch / S) & 1) ^ 1);
              // RF: the peer builds chunk ch (parity ≠ rank) and pushes it into this stage: tell it
              // this CTA's chains are done with the stage.
              if (F::remote_forward && e != static_cast<int>(rank) && lane == 0)
                f16c_arrive_peer(f16c_add(peer_free, 8 * (ch % S)));
              store_o(ch % S, ch - S);
            }
          }
          issue_pair(mn);
        }
        cp_async_commit();
        gring[D - 1] = gate_load(2 * mn + static_cast<int>(rank));
      }
      cp_async_wait<0>();
      drain_o();
      f16c_cluster_sync();  // the peer may still push into this CTA's stages until its last chunk
    } else {
      stagger_wait();
#pragma unroll
      for (int i = 0; i < D; ++i) {
        const int ch = pw + PW * i;
        if (MODE != F16_CHAIN_ONLY && ch < nch) fused16_issue(cp, sm.st[ch], bos + static_cast<long long>(ch) * F16_C, eos);
        cp_async_commit();
        gring[i] = gate_load(ch);
      }
      stagger_release();
      for (int c = pw; c < nch; c += PW) {
        Fused16Stage<T, VB, F::swizzled>& s = sm.st[c % S];
        const u32 gates = gring[0];
#pragma unroll
        for (int i = 0; i + 1 < D; ++i) gring[i] = gring[i + 1];
        fused16_copies_landed<D, F::swizzled>();
        __syncwarp();
        if constexpr (MODE == F16_FULL || MODE == F16_PRODUCER) {
          const long long left = eos - bos - static_cast<long long>(c) * F16_C;
          fused16_build_any<T, K, VB>(p, s, sm.lt[pw], gates, left < F16_C ? static_cast<int>(left) : F16_C, h, lane);
        }
        if (lane == 0) dnnp::mbar_arrive(&sm.full[c % S]);
        const int cn = c + PW * D;
        if (cn < nch) {
          if (cn >= S) {
            dnnp::mbar_wait(&sm.empty[cn % S], ((cn / S) & 1) ^ 1);
            store_o(cn % S, cn - S);
          }
          if (MODE != F16_CHAIN_ONLY) fused16_issue(cp, sm.st[cn % S], bos + static_cast<long long>(cn) * F16_C, eos);
        }
        cp_async_commit();
        gring[D - 1] = gate_load(cn);
      }
      cp_async_wait<0>();
      drain_o();
    }
    return;
  }

  // ------------------------------------------------------------------ chain
  if constexpr (F::chain_regs > 0) dnnp::setmaxnreg_inc<F::chain_regs>();
  const int vr0 = v0 + 16 * warp;  // this warp's value rows vr0 + gi, vr0 + gi + 8
  float x[K / 8][4];
  const long long sbase = (srow * HO + h) * static_cast<long long>(V) * K;
  if (p.initial_state && srow >= 0) {
#pragma unroll
    for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e)
        x[nt][e] = load_any(p.initial_state, p.state_dtype,
                            sbase + static_cast<long long>(vr0 + gi + 8 * (e >> 1)) * K + 8 * nt + 2 * tg + (e & 1));
  } else {
    zero_frags(x);
  }
  F16cAddr peer_empty{};
  if constexpr (CL) peer_empty = f16c_peer(&sm.empty[0], rank ^ 1u);
  // Done with a stage: this CTA's empty barrier and, in a cluster, the peer's (it pushes there).
  auto release = [&](int st) {  // st: the stage's index
    __syncwarp();
    if (lane == 0) {
      dnnp::mbar_arrive(&sm.empty[st]);
      if constexpr (CL && !F::remote_forward) f16c_arrive_peer(f16c_add(peer_empty, 8 * st));
    }
  };
  bool next_full = false;  // F::early_test: chunk c + 1's full barrier seen completed during chunk c
  // Stage si = c % S with phase parity ph = (c / S) & 1, stepped.
  int si = 0;
  uint32_t ph = 0;
  const int t0 = 2 * tg;  // this lane's tokens t0, t0 + 1, t0 + 8, t0 + 9
  [[maybe_unused]] float ls = 0.f;  // LS: X = e^ls X̃ (x holds X̃)
  for (int c = 0; c < nch; ++c) {
    Fused16Stage<T, VB, F::swizzled>& s = sm.st[si];
    if (!(F::early_test && next_full)) dnnp::mbar_wait(&sm.full[si], ph);
    const int sn = si + 1 == S ? 0 : si + 1;
    const uint32_t phn = si + 1 == S ? ph ^ 1u : ph;
    if constexpr (MODE == F16_PRODUCER) {
      release(si);
      si = sn;
      ph = phn;
      continue;
    }
    // The stage's operands that do not depend on X.
    u32 vt[4];
    ldsm_x4_t(vt, s.v + ((lane & 7) + 8 * ((lane >> 3) & 1)) * (VB + 8) + 16 * warp + 8 * (lane >> 4));
    const float2 be0 = *reinterpret_cast<const float2*>(&s.be[t0]), be1 = *reinterpret_cast<const float2*>(&s.be[t0 + 8]);
    float2 se0 = *reinterpret_cast<const float2*>(&s.se[t0]), se1 = *reinterpret_cast<const float2*>(&s.se[t0 + 8]);
    float2 sq0 = *reinterpret_cast<const float2*>(&s.sq[t0]), sq1 = *reinterpret_cast<const float2*>(&s.sq[t0 + 8]);
    float2 sk0 = *reinterpret_cast<const float2*>(&s.sk[t0]), sk1 = *reinterpret_cast<const float2*>(&s.sk[t0 + 8]);
    const float gl = s.gl;
    [[maybe_unused]] float ln = 0.f;    // LS: the scale after this chunk
    [[maybe_unused]] bool eager = true;  // LS: this chunk scales X̃ (|ln| past the limit)
    if constexpr (F::lazy_scale) {
      ln = ls + s.gm[F16_C - 1];
      eager = !(fabsf(ln) <= GDN_F16_LS_LIMIT);
      const float sc = exp_ftz(ls), inv = eager ? 1.f : exp_ftz(-ln);
      se0.x *= sc, se0.y *= sc, se1.x *= sc, se1.y *= sc;
      sq0.x *= sc, sq0.y *= sc, sq1.x *= sc, sq1.y *= sc;
      sk0.x *= inv, sk0.y *= inv, sk1.x *= inv, sk1.y *= inv;
    }
    float pe[2][4], pq[2][4], pe2[2][4], pq2[2][4];
    if constexpr (F::wg) fused16_chain_pq_wg<T, K>(pe, pq, x, s);
    else fused16_chain_pq<T, K, VB, F::swizzled>(pe, pq, pe2, pq2, x, s, lane);
    // Rᵀ = β vᵀ − P diag(β e^Γ); the readout Q diag(scale e^Γ) (per-token scalars by nt, e & 1).
    const float beq[2][2] = {{be0.x, be0.y}, {be1.x, be1.y}}, seq[2][2] = {{se0.x, se0.y}, {se1.x, se1.y}};
    const float sqq[2][2] = {{sq0.x, sq0.y}, {sq1.x, sq1.y}}, skq[2][2] = {{sk0.x, sk0.y}, {sk1.x, sk1.y}};
    float r[2][4];
#pragma unroll
    for (int nt = 0; nt < 2; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        if constexpr (!F::wg) {
          pe[nt][e] += pe2[nt][e];
          pq[nt][e] += pq2[nt][e];
        }
        const u32 w = vt[nt + 2 * (e >> 1)];
        const float vv = Io<T>::bits_to_f(static_cast<unsigned short>((e & 1) ? w >> 16 : w & 0xffffu));
        r[nt][e] = beq[nt][e & 1] * vv - seq[nt][e & 1] * pe[nt][e];
        pq[nt][e] *= sqq[nt][e & 1];
      }
    float u[2][4];
    fused16_chain_u<T>(u, r, s, lane);
    if constexpr (F::early_test) next_full = c + 1 < nch && dnnp::mbar_test_wait(&sm.full[sn], phn);
    u32 ua[4];
    if constexpr (F16_READOUT) fused16_chain_o<T>(pq, ua, u, s, lane);
    // X ← e^{Γ_last} X + Uᵀ diag(e^{Γ_last − Γ}) K̂.
#pragma unroll
    for (int nt = 0; nt < 2; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) u[nt][e] *= skq[nt][e & 1];
    x_a_frag<T>(ua, u, 0);
    // The decay: e^{Γ_last} every chunk, or (LS) e^{ln} on X̃ only when ln left the limit.
    if constexpr (F::lazy_scale) {
      if (eager) {
        scale_frags(x, exp_ftz(ln));
        ln = 0.f;
      }
      ls = ln;
    } else {
      scale_frags(x, gl);
    }
    if constexpr (F::wg_update) fused16_chain_update_wg<T, K>(x, ua, s);
    else fused16_chain_update<T, K>(x, ua, s, lane);
    // O into this warp's 16 value columns of the stage's v tile (vᵀ was read at the top), then
    // the stage goes back: its refilling producer warp stores the rows first.
    if constexpr (F16_READOUT) fused16_stage_o<T, VB + 8>(s.v + 16 * warp, pq, lane);
    release(si);
    si = sn;
    ph = phn;
  }
  if constexpr (F::lazy_scale) scale_frags(x, exp_ftz(ls));
  if (p.final_state && srow >= 0) {
#pragma unroll
    for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const long long i = sbase + static_cast<long long>(vr0 + gi + 8 * (e >> 1)) * K + 8 * nt + 2 * tg + (e & 1);
        if (p.state_dtype == DT_F32) static_cast<float*>(p.final_state)[i] = x[nt][e];
        else static_cast<gdn_bf16*>(p.final_state)[i] = Io<gdn_bf16>::from_f(x[nt][e]);
      }
  }
  if constexpr (CL) f16c_cluster_sync();  // the peer's producer may still push into this CTA's stages
}

}  // namespace gdn
