// Gated DeltaNet chunked forward for SM90 (spec linear-attention.md §4.2), chunk 64.
//
// Contract: THD inputs q [T,H,K], k [T,HK,K], v [T,HV,V] in the io dtype (bf16 or fp16),
// g / beta [T,HO] (fp32, bf16 or fp16), cu_seqlens [N+1] (int32 or int64), optional
// initial_state [N|pool, HO, V, K] (fp32 or bf16, stored domain) with optional int32
// state_indices [N]; outputs O [T,HO,V] and optional final_state in initial_state's dtype.
// All scratch lives in the caller's workspace (gdn_fwd_workspace_bytes); the three launches
// (chunk table, per-chunk factors, state scan) allocate nothing, never synchronise with the
// host, use no atomics and are deterministic. The state is carried in fp32 registers.
//
// Stages:
//  1. gdn_chunk_offsets: chunk_offsets[b] = Σ_{b'<b} ceil(T_b'/64) (one block, a block scan);
//     with FLAG_SEQ_ORDER also seq_order (the sequences longest-first, seq_order_body: session 34).
//  2. gdn_fwd_prep (grid: chunk slots × HO): per chunk, in fp32, gates/β/l2norm/scale, the
//     cumulative log decay Γ, L = strict_lower(β_i k_i·k_j e^{Γi−Γj}) and
//     A = tril(scale q_i·k_j e^{Γi−Γj}) on the tensor cores, T = (I+L)^{-1} by a blocked
//     fp32 substitution, W = T E and Ũᵀ = (T Y)ᵀ on the tensor cores; writes W, Q⁺, Kᴿ,
//     Ũᵀ, A (io dtype) and Γ_last (fp32) to the workspace.
//  3. gdn_fwd_scan (grid: V/VS × HO × N, one warp per 16 value rows): per chunk
//     Uᵀ = Ũᵀ − X Wᵀ, Oᵀ = X Q⁺ᵀ + Uᵀ Aᵀ, X ← e^{Γ_last} X + Uᵀ Kᴿ with X = Sᵀ (V×K) in
//     fp32 mma accumulators.
//
// Self-contained (no toolkit headers): the same text builds the bundled sm_90a cubin with nvcc and
// compiles under NVRTC. 16-bit values are carried as raw bit patterns in the tag types gdn_bf16 /
// gdn_f16 and converted with PTX cvt (round to nearest even). Host code (workspace layout,
// launches) lives with the callers: src/engines/gdn/ (the plans) and tests/gpu_gdn*.rs (the device tests).
#pragma once

namespace gdn {

typedef unsigned int u32;
typedef decltype(sizeof(0)) size_t;

// Storage tags of the two io dtypes (2 bytes, the raw bit pattern).
struct gdn_bf16 {
  unsigned short bits;
};
struct gdn_f16 {
  unsigned short bits;
};

enum DType : int { DT_F32 = 0, DT_BF16 = 1, DT_F16 = 2 };

enum Flags : int {
  FLAG_L2NORM = 1,
  FLAG_BETA_SIGMOID = 2,
  FLAG_NEG_EIGVAL = 4,
  FLAG_SAFE_GATE = 8,
  FLAG_LINEAR_GATE = 16,
  // Longest-first dispatch (session 34, lp34; src/engines/gdn/seq_order.rs, DNNPLAN_GDN_SEQ_ORDER):
  // the chunk-table kernels also write seq_order (seq_order_body) and the uncut scans serve
  // sequence seq_order[blockIdx.z] (seq_of_block). Speed only: every block computes what it did.
  FLAG_SEQ_ORDER = 1 << 11,
  // Launch chain (src/engines/gdn/pdl.rs, DNNPLAN_GDN_PDL): each entry's dnnp_pdl_enter triggers
  // the next kernel's launch right after its griddepcontrol.wait instead of at its exit.
  FLAG_PDL_TRIGGER = 1 << 14,
};

constexpr int CHUNK = 64;

struct FwdParams {
  const void* q;
  const void* k;
  const void* v;
  const void* g;
  const void* beta;
  const void* cu_seqlens;
  const void* initial_state;  // may be null
  const int* state_indices;   // may be null
  const void* a_log;          // may be null
  const void* dt_bias;        // may be null
  void* o;
  void* final_state;  // may be null; may alias initial_state
  int cu_seqlens_i64;
  int n_seqs, h, hk, hv, ho;
  int g_dtype, beta_dtype, state_dtype, a_log_dtype, dt_bias_dtype;
  float scale;
  int flags;
  int max_chunks;  // total_T / 64 + N: upper bound of chunk slots
  // Workspace regions (see gdn_fwd_workspace_layout).
  int* chunk_offsets;  // [N + 1]
  void* ws_w;          // [chunks, HO, 64, K]
  void* ws_q;          // [chunks, HO, 64, K]
  void* ws_kr;         // [chunks, HO, 64, K]
  void* ws_ut;         // [chunks, HO, V, 64]
  void* ws_a;          // [chunks, HO, 64, 64]
  float* ws_gl;        // [chunks, HO]
};

// The host mirrors this block field for field (src/engines/gdn/params.rs, whose tests pin the
// same numbers): 12 pointers, 14 four-byte fields, 7 pointers, no padding.
static_assert(sizeof(FwdParams) == 208, "FwdParams layout changed: update src/engines/gdn/params.rs");
#ifndef __CUDACC_RTC__  // NVRTC has no offsetof builtin; nvcc (the bundled cubin) checks these
static_assert(__builtin_offsetof(FwdParams, cu_seqlens_i64) == 96, "FwdParams layout");
static_assert(__builtin_offsetof(FwdParams, scale) == 140, "FwdParams layout");
static_assert(__builtin_offsetof(FwdParams, chunk_offsets) == 152, "FwdParams layout");
static_assert(__builtin_offsetof(FwdParams, ws_gl) == 200, "FwdParams layout");
#endif

// ---------------------------------------------------------------------------------------
// Element helpers
// ---------------------------------------------------------------------------------------
#ifdef GDN_HOST_EMU  // warp-collective CPU emulations (bench/gdn_bwd_host_emu.cpp, gdn_prep_host_emu.cpp)
template <typename T>
void emu_mma(float* c, const u32* a, const u32* b);
void emu_ldsm_x4_t(u32* r, const void* smem);
void emu_ldsm_x4(u32* r, const void* smem);
void emu_cp_async16(void* smem, const void* gmem);
void emu_cp_async_commit();
void emu_cp_async_wait(int n);
#endif
#ifndef GDN_HOST_EMU
// The device pack (two values converted, `a` in the low half: cvt.rn.TYx2.f32 takes the high one
// first) and mma (m16n8k16, fp32 accumulators) of a 16-bit format of PTX type TY ("bf16", "f16").
#define GDN_IO16_DEVICE(TY)                                                                     \
  static __device__ __forceinline__ u32 pack_dev(float a, float b) {                            \
    u32 r;                                                                                      \
    asm("cvt.rn." TY "x2.f32 %0, %1, %2;" : "=r"(r) : "f"(b), "f"(a));                          \
    return r;                                                                                   \
  }                                                                                             \
  static __device__ __forceinline__ void mma_dev(float* c, const u32* a, const u32* b) {        \
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." TY "." TY ".f32 {%0,%1,%2,%3}, "      \
                 "{%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"                                     \
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                               \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));          \
  }
#else
#define GDN_IO16_DEVICE(TY)
#endif

// What the two 16-bit formats share: Io<T> (the format F) supplies bits_to_f, f_to_bits and its
// device pack / mma (GDN_IO16_DEVICE); the host emulation's pack and mma are the same for both.
template <typename T, typename F>
struct Io16 {
  static __device__ __forceinline__ float to_f(T x) { return F::bits_to_f(x.bits); }
  static __device__ __forceinline__ T from_f(float x) { return T{F::f_to_bits(x)}; }
  // Two values, `a` in the low half.
  static __device__ __forceinline__ u32 pack(float a, float b) {
#ifdef GDN_HOST_EMU
    return static_cast<u32>(F::f_to_bits(a)) | (static_cast<u32>(F::f_to_bits(b)) << 16);
#else
    return F::pack_dev(a, b);
#endif
  }
  static __device__ __forceinline__ void mma(float* c, const u32* a, const u32* b) {
#ifdef GDN_HOST_EMU
    emu_mma<T>(c, a, b);
#else
    F::mma_dev(c, a, b);
#endif
  }
};
template <typename T>
struct Io;
template <>
struct Io<gdn_bf16> : Io16<gdn_bf16, Io<gdn_bf16>> {
  static __device__ __forceinline__ float bits_to_f(unsigned short b) {
    return __uint_as_float(static_cast<u32>(b) << 16);
  }
  static __device__ __forceinline__ unsigned short f_to_bits(float x) {
#ifdef GDN_HOST_EMU  // bench/gdn_bwd_host_emu.cpp runs the backward's CUDA-core stages on the CPU
    const u32 u = __float_as_uint(x);
    return static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
#else
    unsigned short r;
    asm("cvt.rn.bf16.f32 %0, %1;" : "=h"(r) : "f"(x));
    return r;
#endif
  }
  GDN_IO16_DEVICE("bf16")
};
template <>
struct Io<gdn_f16> : Io16<gdn_f16, Io<gdn_f16>> {
  static __device__ __forceinline__ float bits_to_f(unsigned short b) {
#ifdef GDN_HOST_EMU
    _Float16 h;
    __builtin_memcpy(&h, &b, 2);
    return static_cast<float>(h);
#else
    float r;
    asm("cvt.f32.f16 %0, %1;" : "=f"(r) : "h"(b));
    return r;
#endif
  }
  static __device__ __forceinline__ unsigned short f_to_bits(float x) {
#ifdef GDN_HOST_EMU
    const _Float16 h = static_cast<_Float16>(x);
    unsigned short r;
    __builtin_memcpy(&r, &h, 2);
    return r;
#else
    unsigned short r;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(r) : "f"(x));
    return r;
#endif
  }
  GDN_IO16_DEVICE("f16")
};

__device__ __forceinline__ long long min_ll(long long a, long long b) { return a < b ? a : b; }

// e^x as __expf computes it (x·log2e rounded to fp32, then ex2.approx) but with ex2's flush to zero:
// two instructions (FMUL, MUFU.EX2) instead of __expf's five, whose other three only rescale an
// argument below −126 so that a result under 2^−126 comes out subnormal rather than zero. The
// same value bitwise wherever e^x ≥ 2^−126 (x ≥ −87.3); below, 0 instead of a subnormal (session
// 45: the slim prep's decays, slim_store_la, and its row scalars, slim_row_scalars).
__device__ __forceinline__ float exp_ftz(float x) {
#ifdef GDN_HOST_EMU
  const float y = __expf(x);
  return y < 1.17549435e-38f ? 0.f : y;
#else
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x * 1.44269504088896341f));
  return y;
#endif
}

// 1/sqrt(x) as rsqrtf computes it (rsqrt.approx) but without the subnormal-argument fix-up: one
// instruction (MUFU.RSQ) instead of four, whose other three only rescale an x below 2^−126. The
// same value bitwise for every normal x; the callers' arguments are sums of squares plus 1e-6, never
// subnormal (session 46: the preps' and token tiles' l2 norms, l2norm_scales and tok_inv_norms).
__device__ __forceinline__ float rsqrt_ftz(float x) {
#ifdef GDN_HOST_EMU
  return rsqrtf(x);
#else
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#endif
}

__device__ __forceinline__ float load_any(const void* p, int dtype, long long i) {
  if (dtype == DT_F32) return static_cast<const float*>(p)[i];
  const unsigned short b = static_cast<const unsigned short*>(p)[i];
  return dtype == DT_BF16 ? Io<gdn_bf16>::bits_to_f(b) : Io<gdn_f16>::bits_to_f(b);
}

__device__ __forceinline__ long long load_cu(const FwdParams& p, int i) {
  return p.cu_seqlens_i64 ? static_cast<const long long*>(p.cu_seqlens)[i]
                          : static_cast<long long>(static_cast<const int*>(p.cu_seqlens)[i]);
}

__device__ __forceinline__ u32 ld32(const void* smem) {
  return *reinterpret_cast<const u32*>(smem);
}

// Zeroes a block of mma accumulators.
template <int N>
__device__ __forceinline__ void zero_frags(float (&a)[N][4]) {
#pragma unroll
  for (int nt = 0; nt < N; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) a[nt][e] = 0.f;
}

// The m16n8k16 A fragment of rows r0, r0 + 8 and columns col, col + 8 (col = 16·kk + 2·(lane & 3))
// of a 16-bit shared tile with rows of `stride` elements.
template <typename T>
__device__ __forceinline__ void ld_a_frag(u32 (&a)[4], const T* s, int stride, int r0, int col) {
  a[0] = ld32(&s[r0 * stride + col]);
  a[1] = ld32(&s[(r0 + 8) * stride + col]);
  a[2] = ld32(&s[r0 * stride + col + 8]);
  a[3] = ld32(&s[(r0 + 8) * stride + col + 8]);
}

// The m16n8k16 A fragment of column block kk (n8 tiles 2kk, 2kk + 1) of an m16n8 accumulator
// array of this warp's 16 rows, rounded to T: the state x (value rows × keys), or a product's
// result feeding the next product (the reverse scans' dUᵀ).
template <typename T, int NX>
__device__ __forceinline__ void x_a_frag(u32 (&a)[4], const float (&x)[NX][4], int kk) {
  a[0] = Io<T>::pack(x[2 * kk][0], x[2 * kk][1]);
  a[1] = Io<T>::pack(x[2 * kk][2], x[2 * kk][3]);
  a[2] = Io<T>::pack(x[2 * kk + 1][0], x[2 * kk + 1][1]);
  a[3] = Io<T>::pack(x[2 * kk + 1][2], x[2 * kk + 1][3]);
}

// Every register of an m16n8 accumulator array times s (the state's decay X <- e^{Γ_last} X).
template <int NX>
__device__ __forceinline__ void scale_frags(float (&x)[NX][4], float s) {
#pragma unroll
  for (int nt = 0; nt < NX; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) x[nt][e] *= s;
}

// Four 8x8 b16 matrices, transposed on load (see the fragment notes in gdn_fwd_scan).
__device__ __forceinline__ void ldsm_x4_t(u32* r, const void* smem) {
#ifdef GDN_HOST_EMU
  emu_ldsm_x4_t(r, smem);
#else
  u32 a = static_cast<u32>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
#endif
}

// Four 8x8 b16 matrices (ldmatrix.x4 without .trans): lane l receives row l / 4 of matrix m,
// elements 2 (l % 4) and 2 (l % 4) + 1, from the row addresses of lanes 8m .. 8m + 7.
__device__ __forceinline__ void ldsm_x4(u32* r, const void* smem) {
#ifdef GDN_HOST_EMU
  emu_ldsm_x4(r, smem);
#else
  u32 a = static_cast<u32>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
#endif
}

#ifdef GDN_HOST_EMU
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) { emu_cp_async16(smem, gmem); }
__device__ __forceinline__ void cp_async_commit() { emu_cp_async_commit(); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { emu_cp_async_wait(N); }
#else
__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  u32 a = static_cast<u32>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }
#endif

#ifdef GDN_HOST_EMU
void emu_cp_async16_zfill(void* smem, const void* gmem, bool full);  // bench/gdn_host_emu.h
#endif
// cp.async of 16 bytes when `full`, else 16 zero bytes (src-size 0: the source is not read); one
// instruction without a branch (session 21: the output scan's copies between its mma.sync steps;
// here since session 23: the preps' row copies, load_kq_rows, take it too).
__device__ __forceinline__ void cp_async16_zfill(void* smem, const void* gmem, bool full) {
#ifdef GDN_HOST_EMU
  emu_cp_async16_zfill(smem, gmem, full);
#else
  const u32 a = static_cast<u32>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(a), "l"(gmem), "r"(full ? 16 : 0));
#endif
}

// The prologue of both chunk pipelines below: chunks c_begin .. c_begin + STAGES − 2 issued into
// stages 0 .. STAGES − 2, one commit group per stage (empty past c_end); returns Γ_last of c_begin
// (0 without chunks).
template <int STAGES, typename Issue>
__device__ __forceinline__ float chunk_pipeline_prologue(const float* ws_gl, int HO, int h, int c_begin, int c_end,
                                                         Issue& issue) {
#pragma unroll
  for (int sidx = 0; sidx < STAGES - 1; ++sidx) {
    if (c_begin + sidx < c_end) issue(c_begin + sidx, sidx);
    cp_async_commit();
  }
  return c_begin < c_end ? ws_gl[static_cast<size_t>(c_begin) * HO + h] : 0.f;
}

// The STAGES-deep cp.async chunk pipeline of the forward's multi-stage scans (the session-1 output
// scan and replay, the slim output scan, the slim piece summary): issue(c, stage) copies chunk c's
// tiles into a stage; body(c, stage, Γ_last of c) runs once every thread's copies of chunk c have
// landed (group wait and a block barrier); a block barrier after the body precedes the stage's
// refill. Returns with every copy drained.
template <int STAGES, typename Issue, typename Body>
__device__ __forceinline__ void chunk_pipeline(const float* ws_gl, int HO, int h, int c_begin, int c_end, Issue issue,
                                               Body body) {
  float gl_next = chunk_pipeline_prologue<STAGES>(ws_gl, HO, h, c_begin, c_end, issue);
  for (int c = c_begin; c < c_end; ++c) {
    const int st = (c - c_begin) % STAGES;
    if (c + STAGES - 1 < c_end) issue(c + STAGES - 1, (c - c_begin + STAGES - 1) % STAGES);
    cp_async_commit();
    const float gl = gl_next;
    if (c + 1 < c_end) gl_next = ws_gl[static_cast<size_t>(c + 1) * HO + h];
    cp_async_wait<STAGES - 1>();
    __syncthreads();
    body(c, st, gl);
    __syncthreads();  // this stage is refilled by the next iteration's issue
  }
  cp_async_wait<0>();
}

// chunk_pipeline with the refill inside the body (session 21, fscan21: the slim output scan spreads
// the copies over its products): the same prologue; then per chunk c a group wait that leaves only
// chunk c + 1's copies in flight, ONE block barrier (every thread's copies of chunk c landed, every
// warp past chunk c − 1, whose stage nst is the one refilled), body(c, stage, Γ_last of c, nst,
// live) which issues chunk c + STAGES − 1's copies into stage nst (live: that chunk exists; else
// the body may still write the stage, which no chunk reads again), and the group commit. Returns
// with every copy drained. PROXY_FENCE (session 23, wg23: a body whose wgmma reads the stage
// through the async proxy): each thread's fence.proxy.async.shared::cta after its group wait,
// before the barrier (its cp.async writes, generic proxy, then visible to the async proxy).
template <int STAGES, bool PROXY_FENCE = false, typename Issue, typename Body>
__device__ __forceinline__ void chunk_pipeline_in_body(const float* ws_gl, int HO, int h, int c_begin, int c_end,
                                                       Issue issue, Body body) {
  static_assert(STAGES >= 2, "a stage in use and one being filled");
  float gl_next = chunk_pipeline_prologue<STAGES>(ws_gl, HO, h, c_begin, c_end, issue);
  for (int c = c_begin; c < c_end; ++c) {
    const int st = (c - c_begin) % STAGES;
    const float gl = gl_next;
    if (c + 1 < c_end) gl_next = ws_gl[static_cast<size_t>(c + 1) * HO + h];
    cp_async_wait<STAGES - 2>();
#ifndef GDN_HOST_EMU
    if constexpr (PROXY_FENCE) asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
#endif
    __syncthreads();
    body(c, st, gl, (c - c_begin + STAGES - 1) % STAGES, c + STAGES - 1 < c_end);
    cp_async_commit();
  }
  cp_async_wait<0>();
}

// ---------------------------------------------------------------------------------------
// Stage 1: chunk offsets
// ---------------------------------------------------------------------------------------
constexpr int OFFSETS_THREADS = 1024;

// Inclusive prefix sum of `x` over the lanes of a full warp (lane i gets x_0 + ... + x_i).
__device__ __forceinline__ int warp_inclusive_sum(int x) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const int y = __shfl_up_sync(0xffffffffu, x, off);
    if (lane >= off) x += y;
  }
  return x;
}

// Per-sequence span offsets: out[b] = Σ_{b'<b} ceil(T_b' / span), out[n] = the total. One block
// of OFFSETS_THREADS threads: each thread counts the spans of its run of sequences, a warp-shuffle
// inclusive scan per warp, one warp scans the 32 warp totals: two block barriers (integers: the
// same table as any scan order). span = CHUNK is the chunk table (chunk_offsets_body); the
// checkpoint rows (fwd_ckpt_rows_body, bwd_ckpt_rows) use span = CHUNK · (c / 64).
// Sequence b's spans of `span` tokens (the last one partial): its chunk count at span = CHUNK.
__device__ __forceinline__ int seq_span_count(const FwdParams& p, int b, long long span) {
  return static_cast<int>((load_cu(p, b + 1) - load_cu(p, b) + span - 1) / span);
}

__device__ __forceinline__ void seq_span_offsets(const FwdParams& p, int* out, long long span) {
  static_assert(OFFSETS_THREADS == 32 * 32, "one warp scans the warp totals");
  __shared__ int warp_total[OFFSETS_THREADS / 32];
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const int n = p.n_seqs;
  const int per = (n + OFFSETS_THREADS - 1) / OFFSETS_THREADS;
  const int b0 = n < tid * per ? n : tid * per;
  const int b1 = n < b0 + per ? n : b0 + per;
  auto count = [&](int b) { return seq_span_count(p, b, span); };
  int local = 0;
  for (int b = b0; b < b1; ++b) local += count(b);
  const int incl = warp_inclusive_sum(local);
  if (lane == 31) warp_total[warp] = incl;
  __syncthreads();
  if (warp == 0) warp_total[lane] = warp_inclusive_sum(warp_total[lane]);
  __syncthreads();
  const int before = warp > 0 ? warp_total[warp - 1] : 0;
  int run = before + incl - local;
  for (int b = b0; b < b1; ++b) {
    out[b] = run;
    run += count(b);
  }
  if (tid == OFFSETS_THREADS - 1) out[n] = before + incl;
}

// The caller's cu_seqlens as the plan's first kernel reads it (session 43). Every other kernel
// reads FwdParams::cu_seqlens, which the plan points at a sanitized int64 copy in its workspace
// (src/engines/gdn/params.rs WorkspaceLayout::cu_sane); the first kernel of every plan (a chunk-table entry) writes
// that copy from this source (cu_sanitize_body) before it builds its tables from it. The block
// sits in the parameter block's padding before the tensor maps (FwdTableParams, BwdTableParams).
struct CuSource {
  const void* cu_seqlens;  // the caller's [N + 1] offsets
  long long total_t;       // rows of the THD token tensors
  int cu_seqlens_i64;      // 1: int64 offsets, 0: int32
  int reserved;
};
static_assert(sizeof(CuSource) == 24, "CuSource layout changed: update src/engines/gdn/params.rs");

// The caller's state_indices as the forward's first kernel reads it (session 44). Under a pool,
// FwdParams::state_indices points at the plan's copy in its workspace (src/engines/gdn/params.rs
// StateSource), which the forward's first kernel (a chunk-table entry) writes from this source
// (state_rows_sanitize_body): an index inside [0, pool_rows) unchanged, any other −1, which the
// kernels read as "no row" (a zero initial state, no final-state store; state_row). A null
// state_indices: no pool, nothing written. Sits after CuSource in the parameter block's padding.
struct StateSource {
  const int* state_indices;  // the caller's [N] pool rows, or null
  int pool_rows;             // rows of the pool the kernels read and write
  int reserved;
};
static_assert(sizeof(StateSource) == 16, "StateSource layout changed: update src/engines/gdn/params.rs");

// Inclusive maximum of `x` over the lanes of a full warp (lane i gets max(x_0, ..., x_i)).
__device__ __forceinline__ long long warp_inclusive_max(long long x) {
  const int lane = threadIdx.x & 31;
#pragma unroll
  for (int off = 1; off < 32; off <<= 1) {
    const long long y = __shfl_up_sync(0xffffffffu, x, off);
    if (lane >= off && y > x) x = y;
  }
  return x;
}

// out[i] = min(T, max(0, cu[0], ..., cu[i])) for i = 0 .. n: the caller's offsets unchanged when
// they are well formed (0 <= cu[0] <= ... <= cu[n] <= T), and otherwise offsets that keep every
// sequence's token rows inside [0, T) and the chunk slots within T / 64 + n, the bound the
// workspace and the chunk-factor and checkpoint buffers are sized for; so malformed offsets can
// never make a kernel address memory outside the caller's buffers or the workspace. One block of
// OFFSETS_THREADS threads, each a run of entries: a warp-shuffle inclusive maximum per warp, one
// warp over the warps' maxima; ends with a block barrier (the block reads `out` next).
__device__ __forceinline__ void cu_sanitize_body(const CuSource& src, int n, long long* out) {
#ifdef GDN_HOST_EMU
  static long long warp_max[OFFSETS_THREADS / 32];  // the emulation runs one block at a time
#else
  __shared__ long long warp_max[OFFSETS_THREADS / 32];
#endif
  const int tid = threadIdx.x, lane = tid & 31, warp = tid >> 5;
  const long long m = static_cast<long long>(n) + 1;
  const long long per = (m + OFFSETS_THREADS - 1) / OFFSETS_THREADS;
  const long long i0 = min_ll(m, tid * per), i1 = min_ll(m, i0 + per);
  const long long t = src.total_t;
  auto entry = [&](long long i) {
    const long long raw = src.cu_seqlens_i64 ? static_cast<const long long*>(src.cu_seqlens)[i]
                                             : static_cast<long long>(static_cast<const int*>(src.cu_seqlens)[i]);
    return raw < 0 ? 0 : (raw > t ? t : raw);
  };
  long long local = 0;
  for (long long i = i0; i < i1; ++i) {
    const long long x = entry(i);
    local = x > local ? x : local;
  }
  const long long incl = warp_inclusive_max(local);
  const long long below = __shfl_up_sync(0xffffffffu, incl, 1);  // the lanes before this one
  if (lane == 31) warp_max[warp] = incl;
  __syncthreads();
  if (warp == 0) warp_max[lane] = warp_inclusive_max(warp_max[lane]);
  __syncthreads();
  long long run = warp > 0 ? warp_max[warp - 1] : 0;
  if (lane > 0 && below > run) run = below;
  for (long long i = i0; i < i1; ++i) {
    const long long x = entry(i);
    run = x > run ? x : run;
    out[i] = run;
  }
  __syncthreads();
}

// The sanitized copy the plan's other kernels read (FwdParams::cu_seqlens, int64 by the plan).
__device__ __forceinline__ long long* cu_sanitized(const FwdParams& p) {
  return static_cast<long long*>(const_cast<void*>(p.cu_seqlens));
}

// out[i] = src.state_indices[i] when it names a pool row (0 <= it < src.pool_rows), else −1, for
// i < n (nothing without a pool): the rows every later kernel of the forward reads (state_row),
// so an index outside the pool can never make a kernel read or write outside the caller's pool.
// Any block size; no barrier (the block does not read `out`).
__device__ __forceinline__ void state_rows_sanitize_body(const StateSource& src, int n, int* out) {
  if (!src.state_indices) return;
  for (int i = threadIdx.x; i < n; i += blockDim.x) {
    const int r = src.state_indices[i];
    out[i] = r >= 0 && r < src.pool_rows ? r : -1;
  }
}

// The copy the forward's other kernels read (FwdParams::state_indices, null without a pool).
__device__ __forceinline__ int* state_rows_sanitized(const FwdParams& p) {
  return const_cast<int*>(p.state_indices);
}

// Sequence b's state row: b, or under a pool its row in the plan's sanitized copy (−1: the
// caller's index was outside the pool; load_initial_state_frags then loads zeros and
// store_final_state_frags stores nothing).
__device__ __forceinline__ int state_row(const FwdParams& p, int b) {
  return p.state_indices ? p.state_indices[b] : b;
}

// The longest-first sequence order (session 34, lp34): seq_order[r] = the sequence of rank r, the
// sequences by chunk count descending, ties by index ascending (stable, deterministic). It lies
// right after the chunk table, in the same workspace region ([2N + 1] int32 in all;
// src/engines/gdn/params.rs WorkspaceLayout::seq_order).
constexpr int SEQ_ORDER_MAX_SEQS = 1024;
static_assert(SEQ_ORDER_MAX_SEQS == OFFSETS_THREADS, "one sequence per thread of the chunk-table block");
__device__ __forceinline__ int* seq_order_table(const FwdParams& p) { return p.chunk_offsets + p.n_seqs + 1; }

// With FLAG_SEQ_ORDER: the order, by the chunk-table kernel's block (OFFSETS_THREADS threads): for
// N <= SEQ_ORDER_MAX_SEQS thread b stages sequence b's chunk count in shared memory and ranks it by
// counting (O(N) shared reads); above that the identity (correct, just not reordered; the plan's
// rule leaves the flag off there). Reads only cu_seqlens: independent of the chunk table's writes.
__device__ __forceinline__ void seq_order_body(const FwdParams& p) {
  if (!(p.flags & FLAG_SEQ_ORDER)) return;
  const int n = p.n_seqs, tid = threadIdx.x;
  int* order = seq_order_table(p);
  if (n > SEQ_ORDER_MAX_SEQS) {
    for (int b = tid; b < n; b += OFFSETS_THREADS) order[b] = b;
    return;
  }
#ifdef GDN_HOST_EMU
  static int cnt[SEQ_ORDER_MAX_SEQS];  // the emulation runs one block at a time
#else
  __shared__ int cnt[SEQ_ORDER_MAX_SEQS];
#endif
  int mine = 0;
  if (tid < n) {
    mine = seq_span_count(p, tid, CHUNK);
    cnt[tid] = mine;
  }
  __syncthreads();
  if (tid < n) {
    int rank = 0;
    for (int b = 0; b < n; ++b) {
      const int c = cnt[b];
      rank += (c > mine || (c == mine && b < tid)) ? 1 : 0;
    }
    order[rank] = tid;
  }
}

// The sequence block z of an uncut scan serves: seq_order[z] with FLAG_SEQ_ORDER, else z. Read
// after the entry wait (the chunk-table kernel wrote it).
__device__ __forceinline__ int seq_of_block(const FwdParams& p, int z) {
  return (p.flags & FLAG_SEQ_ORDER) ? seq_order_table(p)[z] : z;
}

// The chunk table: p.chunk_offsets[b] = chunk slots of the sequences before b, [n] = the total;
// then, with FLAG_SEQ_ORDER, the longest-first order after it (seq_order_body).
__device__ __forceinline__ void chunk_offsets_body(const FwdParams& p) {
  seq_span_offsets(p, p.chunk_offsets, CHUNK);
  seq_order_body(p);
}

// ---------------------------------------------------------------------------------------
// Stage 2: per-chunk factors
// ---------------------------------------------------------------------------------------
template <int K, int V>
struct PrepSmem {
  static constexpr int KP = K + 8;   // padded bf16/f16 row (elements)
  static constexpr int VP = V + 8;
  static constexpr int CP = CHUNK + 8;
  static constexpr int FP = CHUNK + 1;  // fp32 row of L / T
  // R1: raw then normalised k  ->  L, then T in place (fp32)  ->  T in the io dtype.
  // R2: raw then scaled q      ->  E = β k e^Γ.
  // R3: raw v                  ->  Y = β v.
  static constexpr size_t r1_bytes = (CHUNK * KP * 2 > CHUNK * FP * 4) ? CHUNK * KP * 2 : CHUNK * FP * 4;
  static constexpr size_t r1_off = 0;
  static constexpr size_t r2_off = (r1_off + r1_bytes + 15) / 16 * 16;
  static constexpr size_t r3_off = r2_off + CHUNK * KP * 2;
  static constexpr size_t gam_off = r3_off + CHUNK * VP * 2;
  static constexpr size_t bet_off = gam_off + CHUNK * 4;
  static constexpr size_t bytes = bet_off + CHUNK * 4;
};

// The sequence holding live chunk slot c (c < p.chunk_offsets[p.n_seqs]): binary search of the
// chunk table.
__device__ __forceinline__ int seq_of_chunk(const FwdParams& p, int c) {
  int lo = 0, hi = p.n_seqs - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) >> 1;
    if (p.chunk_offsets[mid] <= c) lo = mid; else hi = mid - 1;
  }
  return lo;
}

// The rank of unit (s, g0) in the overlapped pairs' hand-over order (the forward's prep ∥ scan,
// gdn_fwd_slim.cuh; the backward's reverse scan ∥ tokens, gdn_bwd_overlap.cuh): units (s, g) of
// G scan segments (seg_len(g) chunks each; s = the chunk's step within its segment) ordered by s,
// then g, i.e. the number of units (s', g) with s' < min(s, seg_len(g)), or s' = s and g < g0.
template <typename SegLen>
__device__ __forceinline__ int overlap_unit_rank(int s, int g0, int G, SegLen seg_len) {
  int rank = 0;
  for (int g = 0; g < G; ++g) {
    const int len = seg_len(g);
    rank += (len < s ? len : s) + (g < g0 && len > s ? 1 : 0);
  }
  return rank;
}

// Locates chunk slot c: returns false when the slot is past the last chunk.
__device__ __forceinline__ bool locate_chunk(const FwdParams& p, int c, int& seq, long long& t0,
                                             int& len) {
  if (c >= p.chunk_offsets[p.n_seqs]) return false;
  const int lo = seq_of_chunk(p, c);
  seq = lo;
  t0 = load_cu(p, lo) + static_cast<long long>(c - p.chunk_offsets[lo]) * CHUNK;
  len = static_cast<int>(min_ll(static_cast<long long>(CHUNK), load_cu(p, lo + 1) - t0));
  return true;
}

// locate_chunk in one round of loads (session 35, pr35: the slim prep's wgl, fwd_slim_prep_tile's
// G = 2): with fewer than 32 sequences lane i of each warp loads chunk_offsets[i] and cu_seqlens[i]
// (i <= n_seqs) at once; the total is lane n's offset, the sequence the count of lanes i < n_seqs
// with chunk_offsets[i] <= c, less one (the binary search's result: the table is a prefix sum of
// chunk counts, nondecreasing from 0, so those lanes are 0..seq), t0 and len from lanes seq and
// seq + 1 by shuffles. The same integers as locate_chunk, which took up to 2 + log2(n_seqs)
// dependent loads before the tile's copies could start; with 32 sequences or more (and in the CPU
// emulation) it is locate_chunk. Every lane of the warp calls it (warp-uniform result).
__device__ __forceinline__ bool locate_chunk_warp(const FwdParams& p, int c, int& seq, long long& t0, int& len,
                                                  int lane) {
#ifndef GDN_HOST_EMU
  const int n = p.n_seqs;
  if (n < 32) {
    const bool in = lane <= n;
    const int off = in ? p.chunk_offsets[lane] : 0;
    const long long cu = in ? load_cu(p, lane) : 0;
    if (c >= __shfl_sync(0xffffffffu, off, n)) return false;
    const int lo = __popc(__ballot_sync(0xffffffffu, lane < n && off <= c)) - 1;
    seq = lo;
    t0 = __shfl_sync(0xffffffffu, cu, lo) + static_cast<long long>(c - __shfl_sync(0xffffffffu, off, lo)) * CHUNK;
    len = static_cast<int>(min_ll(static_cast<long long>(CHUNK), __shfl_sync(0xffffffffu, cu, lo + 1) - t0));
    return true;
  }
#endif
  return locate_chunk(p, c, seq, t0, len);
}

// E 16-bit values packed for one vector access (E = 2 or 4).
template <int E>
struct alignas(2 * E) Bits {
  unsigned short h[E];
};

// What the backward's prep additionally keeps (all null in the forward): T (io, [chunks, HO, 64,
// 64]), E = β k e^Γ (io, [chunks, HO, 64, K]), Γ and β per token (fp32, [chunks, HO, 64]).
// ws_a (session 37): where the forward's saving slim prep (fwd_slim_prep_tile's KEEP = 2,
// gdn_fwd_slimprep_*_k128_wgs) writes A as full rows ([chunks, HO, 64, 64] io) beside the packed A
// its scan reads; null elsewhere (the backward's prep writes its full A rows to FwdParams::ws_a).
struct PrepKeep {
  void* ws_t;
  void* ws_e;
  float* ws_gam;
  float* ws_bet;
  void* ws_a;
};

// Phase 1 of the preps: chunk (t0, len)'s raw q, k, v rows into shared rows of K + 8 / V + 8
// elements (16-byte cp.async, NT threads; padded rows zero-filled); commits one cp.async group.
template <typename T, int K, int V, int NT>
__device__ __forceinline__ void prep_load_qkv(const FwdParams& p, T* kS, T* qS, T* yS, long long t0, int len,
                                              int qh, int kh, int vh, int tid) {
  constexpr int KP = K + 8, VP = V + 8;
  const T* qg = static_cast<const T*>(p.q);
  const T* kg = static_cast<const T*>(p.k);
  const T* vg = static_cast<const T*>(p.v);
  constexpr int KV = K / 8, VV = V / 8;
  for (int i = tid; i < CHUNK * KV; i += NT) {
    const int r = i / KV, c8 = i % KV;
    if (r < len) {
      cp_async16(&kS[r * KP + 8 * c8], &kg[((t0 + r) * p.hk + kh) * K + 8 * c8]);
      cp_async16(&qS[r * KP + 8 * c8], &qg[((t0 + r) * p.h + qh) * K + 8 * c8]);
    } else {
      *reinterpret_cast<uint4*>(&kS[r * KP + 8 * c8]) = make_uint4(0, 0, 0, 0);
      *reinterpret_cast<uint4*>(&qS[r * KP + 8 * c8]) = make_uint4(0, 0, 0, 0);
    }
  }
  for (int i = tid; i < CHUNK * VV; i += NT) {
    const int r = i / VV, c8 = i % VV;
    if (r < len) cp_async16(&yS[r * VP + 8 * c8], &vg[((t0 + r) * p.hv + vh) * V + 8 * c8]);
    else *reinterpret_cast<uint4*>(&yS[r * VP + 8 * c8]) = make_uint4(0, 0, 0, 0);
  }
  cp_async_commit();
}

// The raw gate and β bits of one token (threads 0..63 of a prep: token tid of the chunk), as
// loaded from their ports; converted by prep_gates_cook exactly as load_any converts them. Split
// from the arithmetic so a persistent prep can load the next chunk's while it works on this one.
struct PrepGateRaw {
  u32 g, b;
};
__device__ __forceinline__ u32 load_raw_bits(const void* p, int dtype, long long i) {
  if (dtype == DT_F32) return static_cast<const u32*>(p)[i];
  return static_cast<u32>(static_cast<const unsigned short*>(p)[i]);
}
__device__ __forceinline__ float raw_bits_to_f(u32 x, int dtype) {
  if (dtype == DT_F32) return __uint_as_float(x);
  const unsigned short b = static_cast<unsigned short>(x);
  return dtype == DT_BF16 ? Io<gdn_bf16>::bits_to_f(b) : Io<gdn_f16>::bits_to_f(b);
}
// A token's log decay from its gate port's value g (head h): safe gate −e^{a_log} softplus(g +
// dt_bias), linear gate log(g + 1e-10), else g itself (spec §2).
__device__ __forceinline__ float gate_log_decay(const FwdParams& p, float g, int h) {
  if (p.flags & FLAG_SAFE_GATE) {
    float ea = p.a_log ? __expf(load_any(p.a_log, p.a_log_dtype, h)) : 1.f;
    float x = g + (p.dt_bias ? load_any(p.dt_bias, p.dt_bias_dtype, h) : 0.f);
    float sp = x > 20.f ? x : log1pf(__expf(x));
    return -ea * sp;
  }
  if (p.flags & FLAG_LINEAR_GATE) return logf(g + 1e-10f);
  return g;
}
// A token's β from its port's value b: through the sigmoid (doubled with the negative eigenvalues)
// when asked for.
__device__ __forceinline__ float gate_beta(const FwdParams& p, float b) {
  if (p.flags & FLAG_BETA_SIGMOID) {
    b = 1.f / (1.f + __expf(-b));
    if (p.flags & FLAG_NEG_EIGVAL) b *= 2.f;
  }
  return b;
}
__device__ __forceinline__ PrepGateRaw prep_gates_raw(const FwdParams& p, long long t0, int len, int h, int HO,
                                                      int tid) {
  PrepGateRaw r{0u, 0u};
  if (tid < CHUNK && tid < len) {
    const long long gi = (t0 + tid) * HO + h;
    r.g = load_raw_bits(p.g, p.g_dtype, gi);
    r.b = load_raw_bits(p.beta, p.beta_dtype, gi);
  }
  return r;
}

// The preps' gates and β from their raw bits (threads 0..63: token tid of a chunk of len tokens,
// head h), then the inclusive cumulative log decay Γ within each warp: gam[tid] (the second warp
// still lacks gam[31]), bet[tid].
__device__ __forceinline__ void prep_gates_cook(const FwdParams& p, float* gam, float* bet, int len, int h,
                                                const PrepGateRaw& raw, int tid, int lane) {
  if (tid < CHUNK) {
    float la = 0.f, b = 0.f;
    if (tid < len) {
      la = gate_log_decay(p, raw_bits_to_f(raw.g, p.g_dtype), h);
      b = gate_beta(p, raw_bits_to_f(raw.b, p.beta_dtype));
    }
    float s = la;
#pragma unroll
    for (int o = 1; o < 32; o <<= 1) {
      float t = __shfl_up_sync(0xffffffffu, s, o);
      if (lane >= o) s += t;
    }
    gam[tid] = s;
    bet[tid] = b;
  }
}

// The preps' gates and β (threads 0..63: token tid of chunk (t0, len), head h), then the
// inclusive cumulative log decay Γ within each warp: gam[tid] (the second warp still lacks
// gam[31]), bet[tid].
__device__ __forceinline__ void prep_gates(const FwdParams& p, float* gam, float* bet, long long t0, int len, int h,
                                           int HO, int tid, int lane) {
  prep_gates_cook(p, gam, bet, len, h, prep_gates_raw(p, t0, len, h, HO, tid), tid, lane);
}

// Completes prep_gates and phase 1 (block-wide barriers): adds the first warp's total to the
// second warp's Γ, waits for the q, k, v copies (`next_in_flight`: the newest cp.async group, the
// next tile's, is left in flight), and returns Γ_last (also stored to ws_gl[ch]).
__device__ __forceinline__ float prep_finish_gates(const FwdParams& p, float* gam, size_t ch, int tid,
                                                   bool next_in_flight = false) {
  __syncthreads();
  if (tid >= 32 && tid < CHUNK) gam[tid] += gam[31];
  if (next_in_flight) cp_async_wait<1>();
  else cp_async_wait<0>();
  __syncthreads();
  const float gl = gam[CHUNK - 1];
  if (tid == 0) p.ws_gl[ch] = gl;
  return gl;
}

// A row's key / query scalings with use_qk_l2norm from this lane's partial sums of squares ks, qs:
// a butterfly over the lanes FIRST, FIRST / 2, ..., 1 apart, then kr = 1 / ‖k‖ and
// qr = scale / ‖q‖ (ε = 1e-6). Shared by row_norm_scales (a warp per row, FIRST = 16) and
// slim_norm_row_half (a half-warp per row, FIRST = 8).
template <int FIRST>
__device__ __forceinline__ void l2norm_scales(float ks, float qs, float scale, float& kr, float& qr) {
#pragma unroll
  for (int o = FIRST; o > 0; o >>= 1) {
    ks += __shfl_xor_sync(0xffffffffu, ks, o);
    qs += __shfl_xor_sync(0xffffffffu, qs, o);
  }
  kr = rsqrt_ftz(ks + 1e-6f);
  qr = scale * rsqrt_ftz(qs + 1e-6f);
}

// One lane's pieces of a token row after the l2 norm (phase 2 of the preps): k·kr and q·qr in place
// (kd, qd), Y = β v (yd, from v's bits vb), Q⁺ = q·qr·e^Γ (wqd) and Kᴿ = k·kr·e^{Γlast−Γ} (wkd).
// Shared by prep_norm_row (a warp per row) and prep15_norm_row_half (each half of a row).
// WQK = false (the backward's scalar-form prep, session 27): no Q⁺ / Kᴿ pieces (wqd, wkd unused).
// WY = false (its slim form gdn_bwd_prep15sl, session 28): no Y piece (vb, yd unused).
template <typename T, int EK, int EV, bool WQK = true, bool WY = true>
__device__ __forceinline__ void store_norm_pieces(const float (&kx)[EK], const float (&qx)[EK], float kr, float qr,
                                                  float eg, float er, float br, const Bits<EV>& vb, T* kd, T* qd, T* yd,
                                                  T* wqd, T* wkd) {
  using IO = Io<T>;
  Bits<EK> ko, qo, qpo, kro;
  Bits<EV> yo;
#pragma unroll
  for (int e = 0; e < EK; ++e) {
    const float kn = kx[e] * kr, qn = qx[e] * qr;
    ko.h[e] = IO::f_to_bits(kn);
    qo.h[e] = IO::f_to_bits(qn);
    qpo.h[e] = IO::f_to_bits(qn * eg);
    kro.h[e] = IO::f_to_bits(kn * er);
  }
  if constexpr (WY) {
#pragma unroll
    for (int e = 0; e < EV; ++e) yo.h[e] = IO::f_to_bits(br * IO::bits_to_f(vb.h[e]));
  }
  *reinterpret_cast<Bits<EK>*>(kd) = ko;
  *reinterpret_cast<Bits<EK>*>(qd) = qo;
  if constexpr (WY) *reinterpret_cast<Bits<EV>*>(yd) = yo;
  if constexpr (WQK) {
    *reinterpret_cast<Bits<EK>*>(wqd) = qpo;
    *reinterpret_cast<Bits<EK>*>(wkd) = kro;
  }
}

// The preps' phase 2 for token row r (one warp): normalise k, scale q (in place), Y = β v; the
// row of Q⁺ and of Kᴿ goes to wq / wk (rows of WSTR elements: dense K in the workspace, padded in
// the fused forward's shared tiles). Vector accesses of EK / EV 16-bit values per lane.
// Token row r's raw k / q values of this lane (EK = K / 32 of each, from the shared rows kS / qS
// of K + 8 elements) in kx / qx, and the row's key / query scalings: kr = 1 / ‖k‖ and
// qr = scale / ‖q‖ with use_qk_l2norm (a warp butterfly of the squares; ε = 1e-6), else 1 and
// scale. Shared by the preps' normalisation phase (prep_norm_row, slim_norm_row).
template <typename T, int K>
__device__ __forceinline__ void row_norm_scales(const FwdParams& p, const T* kS, const T* qS, int r, int lane,
                                                float (&kx)[K / 32], float (&qx)[K / 32], float& kr, float& qr) {
  using IO = Io<T>;
  constexpr int KP = K + 8, EK = K / 32;
  const Bits<EK> kb = *reinterpret_cast<const Bits<EK>*>(&kS[r * KP + lane * EK]);
  const Bits<EK> qb = *reinterpret_cast<const Bits<EK>*>(&qS[r * KP + lane * EK]);
  float ks = 0.f, qs = 0.f;
#pragma unroll
  for (int e = 0; e < EK; ++e) {
    kx[e] = IO::bits_to_f(kb.h[e]);
    qx[e] = IO::bits_to_f(qb.h[e]);
    ks += kx[e] * kx[e];
    qs += qx[e] * qx[e];
  }
  kr = 1.f;
  qr = p.scale;
  if (p.flags & FLAG_L2NORM) l2norm_scales<16>(ks, qs, p.scale, kr, qr);
}

template <typename T, int K, int V, int WSTR = K>
__device__ __forceinline__ void prep_norm_row(const FwdParams& p, T* kS, T* qS, T* yS, T* wq, T* wk,
                                              const float* gam, const float* bet, float gl, int r, int lane) {
  constexpr int KP = K + 8, VP = V + 8;
  constexpr int EK = K / 32, EV = V / 32;
  const Bits<EV> vb = *reinterpret_cast<const Bits<EV>*>(&yS[r * VP + lane * EV]);
  float kx[EK], qx[EK], kr, qr;
  row_norm_scales<T, K>(p, kS, qS, r, lane, kx, qx, kr, qr);
  const float eg = __expf(gam[r]), er = __expf(gl - gam[r]), br = bet[r];
  store_norm_pieces<T, EK, EV>(kx, qx, kr, qr, eg, er, br, vb, &kS[r * KP + lane * EK], &qS[r * KP + lane * EK],
                               &yS[r * VP + lane * EV], &wq[r * WSTR + lane * EK], &wk[r * WSTR + lane * EK]);
}

// E = β k e^Γ for token row r (one warp): the normalised k row of kS, scaled, to eS.
template <typename T, int K>
__device__ __forceinline__ void prep_e_row(const T* kS, T* eS, const float* gam, const float* bet, int r, int lane) {
  using IO = Io<T>;
  constexpr int KP = K + 8, EK = K / 32;
  const Bits<EK> kb = *reinterpret_cast<const Bits<EK>*>(&kS[r * KP + lane * EK]);
  const float f = bet[r] * __expf(gam[r]);
  Bits<EK> eo;
#pragma unroll
  for (int e = 0; e < EK; ++e) eo.h[e] = IO::f_to_bits(f * IO::bits_to_f(kb.h[e]));
  *reinterpret_cast<Bits<EK>*>(&eS[r * KP + lane * EK]) = eo;
}

// A = tril(Q Kᵀ ⊙ decay) from this warp's Q Kᵀ accumulators (rows r0, r0 + 8; all 64 columns) to
// `dst` (rows of STRIDE elements) as packed pairs.
template <typename T, int STRIDE>
__device__ __forceinline__ void prep_store_a(T* dst, const float (&acc)[8][4], const float* gam, int r0, int cq) {
#pragma unroll
  for (int nt = 0; nt < 8; ++nt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int i = r0 + 8 * hf;
      float av[2];
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int j = 8 * nt + cq + e;
        av[e] = j <= i ? acc[nt][2 * hf + e] * __expf(gam[i] - gam[j]) : 0.f;
      }
      *reinterpret_cast<u32*>(&dst[i * STRIDE + 8 * nt + cq]) = Io<T>::pack(av[0], av[1]);
    }
  }
}

// N accumulator tiles acc[i] (mma layout: rows r, r + 8, columns 8·(nt0 + i) + cq, + 1) to `dst`
// (rows of LD elements) as packed io pairs: the preps' W and Ũᵀ stores.
template <typename T, int LD, int N>
__device__ __forceinline__ void store_acc_pairs(T* dst, const float (&acc)[N][4], int r, int nt0, int cq) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    const int nt = nt0 + i;
    *reinterpret_cast<u32*>(&dst[r * LD + 8 * nt + cq]) = Io<T>::pack(acc[i][0], acc[i][1]);
    *reinterpret_cast<u32*>(&dst[(r + 8) * LD + 8 * nt + cq]) = Io<T>::pack(acc[i][2], acc[i][3]);
  }
}

// Phase 5 of the preps, W = T E, for one warp's 16 rows 16·rt + 0..15: acc[2i], acc[2i + 1] (key
// n-tiles 2(np0 + i), + 1) += T[rows][16kk..] · E[16kk..][16(np0 + i)..] for kk = 0..rt (T is lower
// triangular), kk ascending; load_a(kk, a) gives T's A fragment of k-block kk, B = E (rows of KP)
// via ldmatrix.trans.
template <typename T, int KP, int NP, typename LoadA>
__device__ __forceinline__ void prep_w_products(float (&acc)[2 * NP][4], const T* eS, int rt, int np0, int lane,
                                                LoadA load_a) {
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    if (kk > rt) break;  // T is lower triangular
    u32 a[4];
    load_a(kk, a);
    const int lrow = 16 * kk + (lane & 7) + 8 * ((lane >> 3) & 1);
#pragma unroll
    for (int i = 0; i < NP; ++i) {
      u32 r[4];
      ldsm_x4_t(r, &eS[lrow * KP + 16 * (np0 + i) + 8 * (lane >> 4)]);
      Io<T>::mma(acc[2 * i], a, r);
      Io<T>::mma(acc[2 * i + 1], a, r + 2);
    }
  }
}

// The backward's per-token Γ, β of chunk slot ch (KEEP preps; threads tid < CHUNK).
__device__ __forceinline__ void prep_keep_gam_bet(const PrepKeep& keep, size_t ch, const float* gam,
                                                  const float* bet, int tid) {
  if (tid < CHUNK) {
    keep.ws_gam[ch * CHUNK + tid] = gam[tid];
    keep.ws_bet[ch * CHUNK + tid] = bet[tid];
  }
}

// L = strict_lower(β_i k_i·k_j e^{Γi−Γj}) from this warp's K Kᵀ accumulators (rows r0, r0 + 8) to
// the fp32 tile Lf (rows of CHUNK + 1).
__device__ __forceinline__ void prep_store_l(float* Lf, const float (&acc)[8][4], const float* gam, const float* bet,
                                             int r0, int cq) {
  constexpr int FP = CHUNK + 1;
#pragma unroll
  for (int nt = 0; nt < 8; ++nt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const int i = r0 + 8 * hf;
#pragma unroll
      for (int e = 0; e < 2; ++e) {
        const int j = 8 * nt + cq + e;
        Lf[i * FP + j] = j < i ? bet[i] * acc[nt][2 * hf + e] * __expf(gam[i] - gam[j]) : 0.f;
      }
    }
  }
}

// Column cl of the inverse of diagonal block (I + L)[base.., base..] (16x16, unit lower
// triangular) by forward substitution, into col; prep_diag_store writes it back over L. Lf rows of
// FP floats (CHUNK + 1; the tensor-core inverse's TCINV_LS).
template <int FP = CHUNK + 1>
__device__ __forceinline__ void prep_diag_solve(const float* Lf, float (&col)[16], int base, int cl) {
#pragma unroll
  for (int r = 0; r < 16; ++r) {
    float s = 0.f;
#pragma unroll
    for (int j = 0; j < r; ++j)
      if (j >= cl) s += Lf[(base + r) * FP + base + j] * col[j];
    col[r] = r < cl ? 0.f : (r == cl ? 1.f : -s);
  }
}
template <int FP = CHUNK + 1>
__device__ __forceinline__ void prep_diag_store(float* Lf, const float (&col)[16], int base, int cl) {
#pragma unroll
  for (int r = 0; r < 16; ++r)
    if (r >= cl) Lf[(base + r) * FP + base + cl] = col[r];
}

// The diagonal 16x16 blocks of T = (I + L)^{-1} in place over L, by threads 0..CHUNK-1 (thread t
// column t & 15 of block t >> 4); a block's 16 columns, all the readers of its L, are one warp's
// half, so a warp barrier orders the reads before the writes (rows of FP floats).
template <int FP = CHUNK + 1>
__device__ __forceinline__ void prep_diag_invert_warp(float* Lf, int tid) {
  float col[16];
  const int base = 16 * (tid >> 4), cl = tid & 15;
  prep_diag_solve<FP>(Lf, col, base, cl);
  __syncwarp();
  prep_diag_store<FP>(Lf, col, base, cl);
}

// The whole block's barrier (the default of the helpers below that take a barrier type; the fused
// forward passes its producer warps' named barrier instead).
// The (sequence b, piece j) a block of a piece pass serves, from blockIdx.z: a pass over every
// piece (all: z = b·P + j) or over P − 1 of them, pieces first .. first + P − 2
// (z = b·(P − 1) + j − first).
__device__ __forceinline__ void piece_of_block(int P, bool all, int first, int& b, int& j) {
  const unsigned n = static_cast<unsigned>(all ? P : P - 1);
  b = static_cast<int>(blockIdx.z / n);
  j = static_cast<int>(blockIdx.z % n) + (all ? 0 : first);
}

struct BlockBarrier {
  static __device__ __forceinline__ void sync() { __syncthreads(); }
};

// T (unit lower triangular, fp32 in shared memory where the inverse left it) to the io dtype over
// the same region (tb, rows of CHUNK + 8), through registers, NT threads; barriers (Bar) after the
// reads and the writes. pair(r, cc) returns T[r][cc], T[r][cc + 1] (cc even) from the inverse's
// layout: the one place that knows it.
template <typename T, int NT, typename Bar, typename Pair>
__device__ __forceinline__ void prep_t_pairs_to_io(T* tb, int tid, Pair pair) {
  constexpr int CP = CHUNK + 8;
  constexpr int PAIRS = CHUNK * CHUNK / 2 / NT;
  u32 tv[PAIRS];
#pragma unroll
  for (int u = 0; u < PAIRS; ++u) {
    const int i2 = tid + NT * u;  // pair index
    const int r = i2 / (CHUNK / 2), cc = 2 * (i2 % (CHUNK / 2));
    const float2 ab = pair(r, cc);
    tv[u] = Io<T>::pack(ab.x, ab.y);
  }
  Bar::sync();
#pragma unroll
  for (int u = 0; u < PAIRS; ++u) {
    const int i2 = tid + NT * u;
    const int r = i2 / (CHUNK / 2), cc = 2 * (i2 % (CHUNK / 2));
    *reinterpret_cast<u32*>(&tb[r * CP + cc]) = tv[u];
  }
  Bar::sync();
}

// T with its strictly lower part in place (Lf rows of CHUNK + 1) to the io dtype.
template <typename T, int NT, typename Bar = BlockBarrier>
__device__ __forceinline__ void prep_t_to_io(const float* Lf, T* tb, int tid) {
  constexpr int FP = CHUNK + 1;
  prep_t_pairs_to_io<T, NT, Bar>(tb, tid, [&](int r, int cc) {
    const float a = cc < r ? Lf[r * FP + cc] : (cc == r ? 1.f : 0.f);
    const float b = cc + 1 < r ? Lf[r * FP + cc + 1] : (cc + 1 == r ? 1.f : 0.f);
    return make_float2(a, b);
  });
}

// T with its diagonal blocks in place and its off-diagonal blocks transposed in the upper triangle
// (prep_offdiag_fewbar's and the tensor-core inverse's layout; Lf rows of FP floats) to the io
// dtype: the same io values at the same places.
template <typename T, int NT, int FP = CHUNK + 1>
__device__ __forceinline__ void prep_t_to_io_tr(const float* Lf, T* tb, int tid) {
  prep_t_pairs_to_io<T, NT, BlockBarrier>(tb, tid, [&](int r, int cc) {
    // cc, cc + 1 lie in one 16-column block: in place when it is r's diagonal block.
    const bool diag = (cc >> 4) == (r >> 4);
    const float a = cc < r ? (diag ? Lf[r * FP + cc] : Lf[cc * FP + r]) : (cc == r ? 1.f : 0.f);
    const float b = cc + 1 < r ? (diag ? Lf[r * FP + cc + 1] : Lf[(cc + 1) * FP + r]) : (cc + 1 == r ? 1.f : 0.f);
    return make_float2(a, b);
  });
}

// A ROWS x COLS tile from shared rows of COLS + 8 elements to dense global rows, 16 bytes per
// access, threads tid, tid + nthreads, ...
template <typename T, int ROWS, int COLS>
__device__ __forceinline__ void store_tile16(T* dst, const T* src, int tid, int nthreads) {
  for (int i = tid; i < ROWS * COLS / 8; i += nthreads) {
    const int r = i / (COLS / 8), c8 = i % (COLS / 8);
    *reinterpret_cast<uint4*>(&dst[r * COLS + 8 * c8]) = *reinterpret_cast<const uint4*>(&src[r * (COLS + 8) + 8 * c8]);
  }
}

// fwd_prep_body's off-diagonal inverse, block row I: runs f(u, J, rr, cc) for each output
// o = tid + 128u < outs (u < 6) of a 128-thread block, output (rr, cc) of block J = o / 256.
template <typename F>
__device__ __forceinline__ void prep_for_outs(int tid, int outs, F f) {
#pragma unroll
  for (int u = 0; u < 6; ++u) {
    const int o = tid + 128 * u;
    if (o < outs) f(u, o >> 8, (o >> 4) & 15, o & 15);
  }
}

template <typename T, int K, int V, bool KEEP = false, bool INV_SIDE = true>
__device__ __forceinline__ void fwd_prep_body(const FwdParams& p, const PrepKeep& keep = PrepKeep{}) {
  using S = PrepSmem<K, V>;
  using IO = Io<T>;
  constexpr int KP = S::KP, VP = S::VP, CP = S::CP, FP = S::FP;
  extern __shared__ __align__(16) unsigned char smem[];
  T* kS = reinterpret_cast<T*>(smem + S::r1_off);
  float* Lf = reinterpret_cast<float*>(smem + S::r1_off);  // after kS is dead
  T* tb = reinterpret_cast<T*>(smem + S::r1_off);          // after Lf is dead
  T* qS = reinterpret_cast<T*>(smem + S::r2_off);
  T* eS = reinterpret_cast<T*>(smem + S::r2_off);          // after qS is dead
  T* yS = reinterpret_cast<T*>(smem + S::r3_off);
  float* gam = reinterpret_cast<float*>(smem + S::gam_off);
  float* bet = reinterpret_cast<float*>(smem + S::bet_off);

  const int c = blockIdx.x, h = blockIdx.y;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  int seq, len;
  long long t0;
  if (!locate_chunk(p, c, seq, t0, len)) return;
  const int HO = p.ho;
  const int qh = h / (HO / p.h), kh = h / (HO / p.hk), vh = h / (HO / p.hv);
  const size_t ch = static_cast<size_t>(c) * HO + h;

  // Phase 1: raw q, k, v rows into smem, in flight while the gates are computed.
  prep_load_qkv<T, K, V, 128>(p, kS, qS, yS, t0, len, qh, kh, vh, tid);
  prep_gates(p, gam, bet, t0, len, h, HO, tid, lane);
  const float gl = prep_finish_gates(p, gam, ch, tid);

  // Phase 2 (warp per row): normalise k, scale q (in place), Y = β v; Q⁺ and Kᴿ go to the
  // workspace.
  {
    T* wq = static_cast<T*>(p.ws_q) + ch * CHUNK * K;
    T* wk = static_cast<T*>(p.ws_kr) + ch * CHUNK * K;
    for (int r = warp; r < CHUNK; r += 4) prep_norm_row<T, K, V>(p, kS, qS, yS, wq, wk, gam, bet, gl, r, lane);
  }
  __syncthreads();

  // Phase 3: K Kᵀ and Q Kᵀ on the tensor cores (warp w owns rows 16w..16w+15), kept in
  // registers until kS / qS are dead.
  const int r0 = 16 * warp + (lane >> 2), cq = 2 * (lane & 3);
  float akk[8][4], aqk[8][4];
  zero_frags(akk);
  zero_frags(aqk);
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    const int col = 16 * kk + cq;
    u32 ak[4];
    ld_a_frag(ak, kS, KP, r0, col);
    u32 aq[4];
    ld_a_frag(aq, qS, KP, r0, col);
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      const int n = 8 * nt + (lane >> 2);
      u32 b[2] = {ld32(&kS[n * KP + col]), ld32(&kS[n * KP + col + 8])};
      IO::mma(akk[nt], ak, b);
      IO::mma(aqk[nt], aq, b);
    }
  }
  __syncthreads();  // qS dead: E takes its place (from the normalised kS)
  {
    for (int r = warp; r < CHUNK; r += 4) prep_e_row<T, K>(kS, eS, gam, bet, r, lane);
    // A = tril(Q Kᵀ ⊙ decay) straight to the workspace.
    prep_store_a<T, CHUNK>(static_cast<T*>(p.ws_a) + ch * CHUNK * CHUNK, aqk, gam, r0, cq);
  }
  __syncthreads();  // kS dead: L (fp32) takes its place
  prep_store_l(Lf, akk, gam, bet, r0, cq);
  __syncthreads();

  // Phase 4: T = (I + L)^{-1} in fp32, in place over L.
  // Diagonal 16x16 blocks: thread t < 64 solves column (t & 15) of block (t >> 4) in registers.
  {
    float col[16];
    const int base = 16 * (tid >> 4), cl = tid & 15;
    if (tid < CHUNK) prep_diag_solve(Lf, col, base, cl);
    __syncthreads();
    if (tid < CHUNK) prep_diag_store(Lf, col, base, cl);
    __syncthreads();
  }
  // Off-diagonal blocks, block row by block row: T_IJ = −T_II Σ_{m=J}^{I−1} L_Im T_mJ. The
  // partial sums are stashed in the (unused) strictly upper triangle at the transposed place.
  // INV_SIDE (default): every thread's 2I sums run side by side over a fixed range of m (the I
  // loop is unrolled, so trip counts are compile-time); terms before a sum's first index get a
  // zero coefficient, fma(0, x, 0) = 0, so each sum is bitwise the plain loop from its first index
  // (all entries are finite) without a serial chain of shared loads per output. Otherwise the
  // session-1 loops (kept for the before/after timing, gdn_fwd_prep1_*).
#pragma unroll
  for (int I = 1; I < 4; ++I) {
    const int outs = I * 256;
    float sacc[6];
    if constexpr (INV_SIDE) {
#pragma unroll
      for (int u = 0; u < 6; ++u) sacc[u] = 0.f;
#pragma unroll 4
      for (int m = 0; m < 16 * I; ++m) {
#pragma unroll
        for (int u = 0; u < 2 * I; ++u) {
          const int o = tid + 128 * u;  // < outs for u < 2I (tid < 128)
          const int J = o >> 8, rr = (o >> 4) & 15, cc = o & 15;
          const int row = 16 * I + rr, colj = 16 * J + cc;
          const float a = m >= colj ? Lf[row * FP + m] : 0.f;
          sacc[u] = fmaf(a, Lf[m * FP + colj], sacc[u]);
        }
      }
    } else {
#pragma unroll
      for (int u = 0; u < 6; ++u) {
        const int o = tid + 128 * u;
        sacc[u] = 0.f;
        if (o < outs) {
          const int J = o >> 8, rr = (o >> 4) & 15, cc = o & 15;
          const int row = 16 * I + rr, colj = 16 * J + cc;
          float s = 0.f;
          for (int m = 16 * J + cc; m < 16 * I; ++m) s += Lf[row * FP + m] * Lf[m * FP + colj];
          sacc[u] = s;
        }
      }
    }
    __syncthreads();
    prep_for_outs(tid, outs, [&](int u, int J, int rr, int cc) {
      Lf[(16 * J + cc) * FP + 16 * I + rr] = sacc[u];
    });
    __syncthreads();
    prep_for_outs(tid, outs, [&](int u, int J, int rr, int cc) {
      const int row = 16 * I + rr, colj = 16 * J + cc;
      float s = 0.f;
      if constexpr (INV_SIDE) {
#pragma unroll
        for (int m = 0; m < 16; ++m) {  // terms past m = rr have a zero coefficient
          const float tii = m < rr ? Lf[row * FP + 16 * I + m] : (m == rr ? 1.f : 0.f);
          s = fmaf(tii, Lf[colj * FP + 16 * I + m], s);
        }
      } else {
        for (int m = 0; m <= rr; ++m) {
          const float tii = (m == rr) ? 1.f : Lf[row * FP + 16 * I + m];
          s += tii * Lf[colj * FP + 16 * I + m];
        }
      }
      sacc[u] = -s;
    });
    __syncthreads();
    prep_for_outs(tid, outs, [&](int u, int J, int rr, int cc) {
      Lf[(16 * I + rr) * FP + 16 * J + cc] = sacc[u];
    });
    __syncthreads();
  }
  // T to the io dtype, over the same region (through registers).
  prep_t_to_io<T, 128>(Lf, tb, tid);

  // Phase 5: W = T E (64×K): A = T (row-major), B = E via ldmatrix.trans.
  {
    T* ww = static_cast<T*>(p.ws_w) + ch * CHUNK * K;
    float acc[K / 8][4];
    zero_frags(acc);
    prep_w_products<T, KP, K / 16>(acc, eS, warp, 0, lane,
                                   [&](int kk, u32(&a)[4]) { ld_a_frag(a, tb, CP, r0, 16 * kk + cq); });
    store_acc_pairs<T, K>(ww, acc, r0, 0, cq);
  }
  // Ũᵀ = Yᵀ Tᵀ (V×64): warp w owns value rows [w·V/4, (w+1)·V/4); A = Yᵀ via ldmatrix.trans,
  // B = Tᵀ read from T row-major.
  {
    constexpr int MT = V / 64;
    T* wu = static_cast<T*>(p.ws_ut) + ch * V * CHUNK;
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const int d0 = (warp * MT + mt) * 16;
      float acc[8][4];
      zero_frags(acc);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        u32 a[4];
        const int mi = lane >> 3;
        ldsm_x4_t(a, &yS[(16 * kk + (lane & 7) + 8 * (mi >> 1)) * VP + d0 + 8 * (mi & 1)]);
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) {
          if (kk > (nt >> 1)) continue;  // Tᵀ[j][i] = 0 for j > i
          const int n = 8 * nt + (lane >> 2);
          u32 b[2] = {ld32(&tb[n * CP + 16 * kk + cq]), ld32(&tb[n * CP + 16 * kk + cq + 8])};
          IO::mma(acc[nt], a, b);
        }
      }
      store_acc_pairs<T, CHUNK>(wu, acc, d0 + (lane >> 2), 0, cq);
    }
  }
  if (KEEP) {
    // T (io, unit diagonal), E and the per-token Γ, β for the backward.
    store_tile16<T, CHUNK, CHUNK>(static_cast<T*>(keep.ws_t) + ch * CHUNK * CHUNK, tb, tid, 128);
    store_tile16<T, CHUNK, K>(static_cast<T*>(keep.ws_e) + ch * CHUNK * K, eS, tid, 128);
    prep_keep_gam_bet(keep, ch, gam, bet, tid);
  }
}

// ---------------------------------------------------------------------------------------
// Stage 3: the state scan
// ---------------------------------------------------------------------------------------
template <int K, int NW, int STAGES>
struct ScanSmem {
  static constexpr int KP = K + 8;
  static constexpr int CP = CHUNK + 8;
  static constexpr int VS = 16 * NW;
  static constexpr size_t w_off = 0;
  static constexpr size_t q_off = w_off + CHUNK * KP * 2;
  static constexpr size_t k_off = q_off + CHUNK * KP * 2;
  static constexpr size_t a_off = k_off + CHUNK * KP * 2;
  static constexpr size_t u_off = a_off + CHUNK * CP * 2;
  static constexpr size_t stage = u_off + VS * CP * 2;  // bytes per pipeline stage
  static constexpr int OP = 24;                          // O staging row (16 values + pad)
  static constexpr size_t o_off = STAGES * stage;        // per-warp O staging tiles
  static constexpr size_t bytes = o_off + NW * CHUNK * OP * 2;
};

// Copies `rows` rows of ROWLEN elements (global row stride `gstride`) into smem rows of
// ROWLEN + 8 elements with 16-byte cp.async.
template <typename T, int ROWLEN>
__device__ __forceinline__ void tile_async(T* dst, const T* src, int rows, size_t gstride, int tid,
                                           int nthreads) {
  constexpr int VEC = ROWLEN / 8;
  for (int i = tid; i < rows * VEC; i += nthreads) {
    const int r = i / VEC, c8 = i % VEC;
    cp_async16(&dst[r * (ROWLEN + 8) + 8 * c8], &src[r * gstride + 8 * c8]);
  }
}

// tile_async with the trip count known at compile time (ROWS × ROWLEN / 8 pieces of 16 bytes, a
// multiple of NT): each thread's first piece address once, then constant offsets (the
// reverse scan's R2 issue, and since session 13 round 4 fscan_chunks' stage copies; the same
// copies as tile_async, in the same smem layout).
template <typename T, int ROWLEN, int ROWS, int GSTRIDE, int NT>
__device__ __forceinline__ void tile_async_fixed(T* dst, const T* src, int tid) {
  constexpr int VEC = ROWLEN / 8, N = ROWS * VEC;
  static_assert(N % NT == 0 && NT % VEC == 0, "whole rounds of whole rows");
  constexpr int RSTEP = NT / VEC;  // rows per round
  T* d = dst + (tid / VEC) * (ROWLEN + 8) + 8 * (tid % VEC);
  const T* s = src + static_cast<size_t>(tid / VEC) * GSTRIDE + 8 * (tid % VEC);
#pragma unroll
  for (int it = 0; it < N / NT; ++it) cp_async16(d + it * RSTEP * (ROWLEN + 8), s + static_cast<size_t>(it) * RSTEP * GSTRIDE);
}

// X's fragments (rows vr, vr + 8; K columns 8nt + cq + {0, 1} of rows of LD) from / to a [V, LD]
// state `st` at element `base`, fp32 or bf16 pairs by `dtype`; a null `st` (or a load with
// `in_pool` false: a pool index outside the pool, state_row) loads zeros. Shared by
// the forward's initial / final state and the backward's d_final_state / d_initial_state. `st` and
// `dtype` by reference: the parameter fields, read where they are used (as the callers did; by
// value, nvcc hoists the reads and the scans' machine code changes).
template <int K, int LD = K>
__device__ __forceinline__ void load_state_frags(float (&x)[K / 8][4], const void* const& st, const int& dtype, size_t base,
                                                 int vr, int cq, bool in_pool = true) {
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const size_t idx = base + static_cast<size_t>(vr + 8 * hf) * LD + 8 * nt + cq;
      float a0 = 0.f, a1 = 0.f;
      if (st && in_pool) {
        if (dtype == DT_F32) {
          float2 t = *reinterpret_cast<const float2*>(static_cast<const float*>(st) + idx);
          a0 = t.x; a1 = t.y;
        } else {
          const u32 t = *reinterpret_cast<const u32*>(static_cast<const unsigned short*>(st) + idx);
          a0 = __uint_as_float(t << 16);
          a1 = __uint_as_float(t & 0xffff0000u);
        }
      }
      x[nt][2 * hf] = a0;
      x[nt][2 * hf + 1] = a1;
    }
  }
}
template <int K, int LD = K>
__device__ __forceinline__ void store_state_frags(const float (&x)[K / 8][4], void* const& st, const int& dtype,
                                                  size_t base, int vr, int cq) {
#pragma unroll
  for (int nt = 0; nt < K / 8; ++nt) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const size_t idx = base + static_cast<size_t>(vr + 8 * hf) * LD + 8 * nt + cq;
      if (dtype == DT_F32) {
        *reinterpret_cast<float2*>(static_cast<float*>(st) + idx) = make_float2(x[nt][2 * hf], x[nt][2 * hf + 1]);
      } else {
        *reinterpret_cast<u32*>(static_cast<unsigned short*>(st) + idx) = Io<gdn_bf16>::pack(x[nt][2 * hf], x[nt][2 * hf + 1]);
      }
    }
  }
}

// X = Sᵀ rows vr, vr + 8, columns 8nt + cq + {0, 1} (mma accumulator layout) of the [V, K]
// initial state at `base` (fp32 or bf16, stored domain) in state row `row` (state_row); zeros
// without an initial state or for row −1 (an index outside the pool). LD: the state's row length
// (K columns of a row of LD; a key-split scan holds K = LD / 2 of them).
template <int K, int LD = K>
__device__ __forceinline__ void load_initial_state_frags(float (&x)[K / 8][4], const FwdParams& p, int row, size_t base,
                                                         int vr, int cq) {
  load_state_frags<K, LD>(x, p.initial_state, p.state_dtype, base, vr, cq, row >= 0);
}

// The inverse of load_initial_state_frags: X's fragments to the [V, LD] final state at `base` in
// state row `row`; nothing for row −1.
template <int K, int LD = K>
__device__ __forceinline__ void store_final_state_frags(const float (&x)[K / 8][4], const FwdParams& p, int row, size_t base,
                                                        int vr, int cq) {
  if (row >= 0) store_state_frags<K, LD>(x, p.final_state, p.state_dtype, base, vr, cq);
}

// Uᵀ = Ũᵀ − P as A fragments (tokens are the reduction dim): uraw holds this thread's raw Ũᵀ
// pairs (rows ur, ur + 8), pacc the P = X Wᵀ accumulators, of NT token tiles of 8 (all 64 tokens,
// or a token-split scan's share). SCALED (the backward's scalar-form replay, session 27): Uᵀ's
// token columns 8 nt + cq, + 1 times scale[nt][0], [1] before the rounding (Uᵀ diag(cr)).
template <typename T, int NT = 8, bool SCALED = false>
__device__ __forceinline__ void scan_u_frags(u32 (&ua)[NT / 2][4], const u32 (&uraw)[NT][2], const float (&pacc)[NT][4],
                                             const float (*scale)[2] = nullptr) {
  using IO = Io<T>;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
    const T* u0 = reinterpret_cast<const T*>(&uraw[nt][0]);
    const T* u1 = reinterpret_cast<const T*>(&uraw[nt][1]);
    auto u = [&](T raw, float pa, int col) {  // one element of Uᵀ (SCALED: times its token's scale)
      if constexpr (SCALED) return (IO::to_f(raw) - pa) * scale[nt][col];
      else return IO::to_f(raw) - pa;
    };
    const u32 lo = IO::pack(u(u0[0], pacc[nt][0], 0), u(u0[1], pacc[nt][1], 1));
    const u32 hi = IO::pack(u(u1[0], pacc[nt][2], 0), u(u1[1], pacc[nt][3], 1));
    ua[nt >> 1][(nt & 1) * 2 + 0] = lo;
    ua[nt >> 1][(nt & 1) * 2 + 1] = hi;
  }
}

// Stores O rows (tokens) < len of this warp's 16 value rows [v0, v0 + 16) through its smem tile
// Os (8·NT rows of OP), so that each token's 16 values leave as two 16-byte stores. NT token
// tiles of 8 from token t0 (all 64 tokens of the chunk, or a token-split scan's share).
template <typename T, int V, int OP, int NT = 8>
__device__ __forceinline__ void scan_store_o(T* Os, const float (&oacc)[NT][4], T* o, long long t0, int len, int HO,
                                             int h, int v0, int lane, int cq) {
  using IO = Io<T>;
  const int vl = lane >> 2;
#pragma unroll
  for (int nt = 0; nt < NT; ++nt) {
#pragma unroll
    for (int e = 0; e < 2; ++e) {
      const int tok = 8 * nt + cq + e;
      Os[tok * OP + vl] = IO::from_f(oacc[nt][e]);
      Os[tok * OP + vl + 8] = IO::from_f(oacc[nt][2 + e]);
    }
  }
  __syncwarp();
#pragma unroll
  for (int i = lane; i < 16 * NT; i += 32) {
    const int tok = i >> 1, hf = i & 1;
    if (tok < len)
      *reinterpret_cast<uint4*>(&o[(static_cast<size_t>(t0 + tok) * HO + h) * V + v0 + 8 * hf]) =
          *reinterpret_cast<const uint4*>(&Os[tok * OP + 8 * hf]);
  }
  __syncwarp();
}

// A per-step hook that does nothing (the default of the scans' step hooks).
struct StepNoHook {
  __device__ __forceinline__ void operator()(int) const {}
};

// The element index of key kd of token tok in Kᴿ stored as rows of KP elements (scan_state_update's
// default layout).
template <int KP>
struct KeyRows {
  __device__ __forceinline__ int operator()(int tok, int kd) const { return tok * KP + kd; }
};

// X ← e^{Γ_last} X + Uᵀ Kᴿ (B = Kᴿ [token][key], via ldmatrix.trans; element (tok, kd) at
// Ks[at(tok, kd)]: rows of KP elements, or since session 23 the wgmma scan's swizzled layout).
// hook(kk) runs at the top of each of the 4 token steps (session 21, fscan21b: the seeded slim
// scan issues its v, T, A refill there; the others pass none).
template <typename T, int K, int KP, typename Hook = StepNoHook, typename At = KeyRows<KP>>
__device__ __forceinline__ void scan_state_update(float (&x)[K / 8][4], const u32 (&ua)[4][4], const T* Ks, float gl,
                                                  int lane, Hook hook = {}, At at = {}) {
  using IO = Io<T>;
  const float decay = __expf(gl);
  scale_frags(x, decay);
  const int lrow = (lane & 7) + 8 * ((lane >> 3) & 1);
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    hook(kk);
#pragma unroll
    for (int np = 0; np < K / 16; ++np) {
      u32 r[4];
      ldsm_x4_t(r, &Ks[at(16 * kk + lrow, 16 * np + 8 * (lane >> 4))]);
      IO::mma(x[2 * np], ua[kk], r);
      IO::mma(x[2 * np + 1], ua[kk], r + 2);
    }
  }
}

// Backward only (the forward never sets it): the forward-state replays (gdn_bwd_fscan,
// gdn_bwd_fscanp) store the state entering every chunk in the io dtype T instead of fp32
// (read by gdn_bwd_tokens_tc4).
constexpr int FLAG_BWD_S_IO = 1 << 13;

// The backward's replay: this thread's fragments of the state entering a chunk (X = Sᵀ rows vr,
// vr + 8, columns 8nt + cq + {0, 1}) to ws_s + elem ([V][LD], stored domain), as fp32 pairs or, with
// FLAG_BWD_S_IO, as io-dtype pairs (ws_s then holds T elements). LD: the state's row length (a
// key-split scan holds K = LD / 2 columns).
// Picks v[i] (i in 0..3, warp-lane dependent) by selects, so v stays in registers.
__device__ __forceinline__ u32 sel4(const u32 (&v)[4], int i) {
  const u32 lo = (i & 1) ? v[1] : v[0];
  const u32 hi = (i & 1) ? v[3] : v[2];
  return (i & 2) ? hi : lo;
}

// bwd_store_state_frags' io layout with 16-byte stores: for every group of four n-tiles and each
// row half, the quad (lanes 4r .. 4r + 3, column pairs q = cq / 2) transposes its 4 × 4 packed
// pairs by three xor shuffles (lane q sends its pair of tile q ^ s to lane q ^ s), so lane q holds
// the 8 consecutive columns of tile 4g + q and stores them as one uint4 (the quad: 64 contiguous
// bytes of the row). The same values to the same addresses as the 4-byte stores. Needs the whole
// warp converged, xs 16-byte aligned and (K / 8) % 4 == 0.
template <typename T, int K, int LD>
__device__ __forceinline__ void store_state_frags_io16(T* xs, const float (&x)[K / 8][4], int vr, int cq) {
  static_assert((K / 8) % 4 == 0, "store_state_frags_io16: four n-tiles per group");
  const int q = cq >> 1;
#pragma unroll
  for (int g = 0; g < K / 32; ++g) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      u32 in[4];
#pragma unroll
      for (int t = 0; t < 4; ++t) in[t] = Io<T>::pack(x[4 * g + t][2 * hf], x[4 * g + t][2 * hf + 1]);
      u32 v[4];  // v[s]: column pair q ^ s of tile 4g + q (from lane q ^ s); v[0] is this lane's
      v[0] = sel4(in, q);
#pragma unroll
      for (int s = 1; s < 4; ++s) v[s] = __shfl_xor_sync(0xffffffffu, sel4(in, q ^ s), s);
      uint4 o;
      o.x = sel4(v, q);
      o.y = sel4(v, q ^ 1);
      o.z = sel4(v, q ^ 2);
      o.w = sel4(v, q ^ 3);
      *reinterpret_cast<uint4*>(&xs[static_cast<size_t>(vr + 8 * hf) * LD + 32 * g + 8 * q]) = o;
    }
  }
}

// fp32 pairs with 16-byte stores (the forward's fp32 checkpoint rows, session 17): for every pair
// of n-tiles (2g, 2g + 1) and each row half, lanes 2m and 2m + 1 of a quad swap one pair by one
// xor shuffle (the even lane sends its pair of tile 2g + 1, the odd lane its pair of tile 2g), so
// the even lane holds columns cq .. cq + 3 of tile 2g and the odd lane columns cq − 2 .. cq + 1 of
// tile 2g + 1: one float4 each (the quad: 32 contiguous bytes of each of the two tiles' rows).
// The same values (bits: shuffles move them) to the same addresses as the 8-byte pair stores.
// Needs the whole warp converged, xs 16-byte aligned, LD % 4 == 0 and (K / 8) % 2 == 0.
template <int K, int LD>
__device__ __forceinline__ void store_state_frags_f32x16(float* xs, const float (&x)[K / 8][4], int vr, int cq) {
  static_assert((K / 8) % 2 == 0 && LD % 4 == 0, "store_state_frags_f32x16: pairs of n-tiles, 16-byte rows");
  const bool odd = (cq & 2) != 0;
  const int col = 8 * odd + (cq & 4);  // within the pair's 16 columns
#pragma unroll
  for (int g = 0; g < K / 16; ++g) {
#pragma unroll
    for (int hf = 0; hf < 2; ++hf) {
      const float a0 = x[2 * g][2 * hf], a1 = x[2 * g][2 * hf + 1];
      const float b0 = x[2 * g + 1][2 * hf], b1 = x[2 * g + 1][2 * hf + 1];
      const float r0 = __uint_as_float(__shfl_xor_sync(0xffffffffu, __float_as_uint(odd ? a0 : b0), 1));
      const float r1 = __uint_as_float(__shfl_xor_sync(0xffffffffu, __float_as_uint(odd ? a1 : b1), 1));
      const float4 o = odd ? make_float4(r0, r1, b0, b1) : make_float4(a0, a1, r0, r1);
      *reinterpret_cast<float4*>(&xs[static_cast<size_t>(vr + 8 * hf) * LD + 16 * g + col]) = o;
    }
  }
}

template <typename T, int K, int LD = K>
__device__ __forceinline__ void bwd_store_state_frags(float* ws_s, size_t elem, const float (&x)[K / 8][4], int vr, int cq,
                                                      bool s_io) {
  if (s_io) {
    T* xs = reinterpret_cast<T*>(ws_s) + elem;
    if constexpr ((K / 8) % 4 == 0 && LD % 8 == 0) {
      if ((reinterpret_cast<size_t>(xs) & 15) == 0) {  // warp-uniform (elem is)
        store_state_frags_io16<T, K, LD>(xs, x, vr, cq);
        return;
      }
    }
#pragma unroll
    for (int nt = 0; nt < K / 8; ++nt) {
#pragma unroll
      for (int hf = 0; hf < 2; ++hf)
        *reinterpret_cast<u32*>(&xs[static_cast<size_t>(vr + 8 * hf) * LD + 8 * nt + cq]) =
            Io<T>::pack(x[nt][2 * hf], x[nt][2 * hf + 1]);
    }
  } else {
    float* xs = ws_s + elem;
#pragma unroll
    for (int nt = 0; nt < K / 8; ++nt) {
#pragma unroll
      for (int hf = 0; hf < 2; ++hf)
        *reinterpret_cast<float2*>(&xs[static_cast<size_t>(vr + 8 * hf) * LD + 8 * nt + cq]) =
            make_float2(x[nt][2 * hf], x[nt][2 * hf + 1]);
    }
  }
}

// Where a forward output scan writes the state checkpoints of one sequence (spec §3.4; the
// forward's FwdFastParams::ckpt*): the stored-domain state entering the sequence's chunk i
// (i = 0, 1, ...) when i % every == 0, to row row0 + i / every of dst ([rows, HO, V, K], io
// dtype or fp32). dst null: none.
struct CkptSink {
  void* dst;
  int row0;
  int every;
  int f32;
};

// Writes this thread's fragments of the state entering chunk i of its sequence when a checkpoint
// is due (x: rows vr, vr + 8, KX key columns from key0, of rows of LD keys; bwd_store_state_frags'
// layouts).
// fp32 rows: 16-byte stores (store_state_frags_f32x16) when the row is 16-byte aligned, else the
// pair stores; io rows: bwd_store_state_frags' (16-byte when aligned).
template <typename T, int KX, int LD, int V>
__device__ __forceinline__ void ckpt_store(const CkptSink& ck, int i, int HO, int h, int key0,
                                           const float (&x)[KX / 8][4], int vr, int cq) {
  if (ck.dst && i % ck.every == 0) {
    const size_t elem = (static_cast<size_t>(ck.row0 + i / ck.every) * HO + h) * V * LD + key0;
    float* xs = static_cast<float*>(ck.dst) + elem;
    if constexpr ((KX / 8) % 2 == 0 && LD % 4 == 0) {
      if (ck.f32 && (reinterpret_cast<size_t>(xs) & 15) == 0) {  // warp-uniform
        store_state_frags_f32x16<KX, LD>(xs, x, vr, cq);
        return;
      }
    }
    bwd_store_state_frags<T, KX, LD>(static_cast<float*>(ck.dst), elem, x, vr, cq, !ck.f32);
  }
}

// BWD: the backward's replay of the forward scan: writes the state entering every chunk to
// ws_s ([chunks, HO, V, K], stored domain; fp32, or the io dtype with FLAG_BWD_S_IO) and neither O
// nor the final state.
template <typename T, int K, int V, int NW, int STAGES, bool BWD = false>
__device__ __forceinline__ void fwd_scan_body(const FwdParams& p, float* ws_s = nullptr) {
  using S = ScanSmem<K, NW, STAGES>;
  using IO = Io<T>;
  constexpr int KP = S::KP, CP = S::CP, VS = S::VS;
  extern __shared__ __align__(16) unsigned char smem[];

  const int h = blockIdx.y, b = blockIdx.z;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int HO = p.ho;
  const int v0 = blockIdx.x * VS + 16 * warp;
  const int vr = v0 + (lane >> 2);  // this thread's rows: vr and vr + 8
  const int cq = 2 * (lane & 3);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  const int c_begin = p.chunk_offsets[b], c_end = p.chunk_offsets[b + 1];
  const int row = state_row(p, b);

  // X = Sᵀ rows vr, vr+8, columns 8nt + cq + {0,1}.
  float x[K / 8][4];
  load_initial_state_frags<K>(x, p, row, (static_cast<size_t>(row) * HO + h) * V * K, vr, cq);

  // STAGES-deep cp.async pipeline: chunks c+1 .. c+STAGES-1 load while chunk c computes.
  auto issue = [&](int c, int st) {
    unsigned char* base = smem + st * S::stage;
    const size_t ch = static_cast<size_t>(c) * HO + h;
    tile_async<T, K>(reinterpret_cast<T*>(base + S::w_off), static_cast<const T*>(p.ws_w) + ch * CHUNK * K, CHUNK, K, tid, NW * 32);
    tile_async<T, K>(reinterpret_cast<T*>(base + S::q_off), static_cast<const T*>(p.ws_q) + ch * CHUNK * K, CHUNK, K, tid, NW * 32);
    tile_async<T, K>(reinterpret_cast<T*>(base + S::k_off), static_cast<const T*>(p.ws_kr) + ch * CHUNK * K, CHUNK, K, tid, NW * 32);
    tile_async<T, CHUNK>(reinterpret_cast<T*>(base + S::a_off), static_cast<const T*>(p.ws_a) + ch * CHUNK * CHUNK, CHUNK, CHUNK, tid, NW * 32);
    tile_async<T, CHUNK>(reinterpret_cast<T*>(base + S::u_off),
                         static_cast<const T*>(p.ws_ut) + (ch * V + blockIdx.x * VS) * CHUNK, VS, CHUNK, tid, NW * 32);
  };
  chunk_pipeline<STAGES>(p.ws_gl, HO, h, c_begin, c_end, issue, [&](int c, int st, float gl) {
    unsigned char* base = smem + st * S::stage;
    const T* Ws = reinterpret_cast<const T*>(base + S::w_off);
    const T* Qs = reinterpret_cast<const T*>(base + S::q_off);
    const T* Ks = reinterpret_cast<const T*>(base + S::k_off);
    const T* As = reinterpret_cast<const T*>(base + S::a_off);
    const T* Us = reinterpret_cast<const T*>(base + S::u_off);
    if (BWD) bwd_store_state_frags<T, K>(ws_s, (static_cast<size_t>(c) * HO + h) * V * K, x, vr, cq, p.flags & FLAG_BWD_S_IO);
    const long long t0 = cs + static_cast<long long>(c - c_begin) * CHUNK;
    const int len = static_cast<int>(min_ll(static_cast<long long>(CHUNK), ce - t0));
    const int ur = 16 * warp + (lane >> 2);  // row of Ũᵀ within the slice
    u32 uraw[8][2];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      uraw[nt][0] = ld32(&Us[ur * CP + 8 * nt + cq]);
      uraw[nt][1] = ld32(&Us[(ur + 8) * CP + 8 * nt + cq]);
    }

    // P = X Wᵀ and O = X Q⁺ᵀ (M = 16 value rows, N = 64 tokens, K = key dim).
    float pacc[8][4], oacc[8][4];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) pacc[nt][e] = oacc[nt][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) {
      u32 a[4];
      x_a_frag<T>(a, x, kk);
      const int col = 16 * kk + cq;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        const int n = 8 * nt + (lane >> 2);
        u32 bw[2] = {ld32(&Ws[n * KP + col]), ld32(&Ws[n * KP + col + 8])};
        u32 bq[2] = {ld32(&Qs[n * KP + col]), ld32(&Qs[n * KP + col + 8])};
        IO::mma(pacc[nt], a, bw);
        IO::mma(oacc[nt], a, bq);
      }
    }
    // Uᵀ = Ũᵀ − P, as A fragments (tokens are the reduction dim below).
    u32 ua[4][4];
    scan_u_frags<T>(ua, uraw, pacc);
    // O += Uᵀ Aᵀ: B[k = j][n = i] = A[i][j]; A is lower triangular (j ≤ i).
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      const int n = 8 * nt + (lane >> 2);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        if (kk > (nt >> 1)) break;
        u32 bb[2] = {ld32(&As[n * CP + 16 * kk + cq]), ld32(&As[n * CP + 16 * kk + cq + 8])};
        IO::mma(oacc[nt], ua[kk], bb);
      }
    }
    // Store O rows (tokens) < len, staged through this warp's smem tile so that each
    // token's 16 values leave as two 16-byte stores.
    if (!BWD) {
      T* Os = reinterpret_cast<T*>(smem + S::o_off) + warp * CHUNK * S::OP;
      scan_store_o<T, V, S::OP>(Os, oacc, static_cast<T*>(p.o), t0, len, HO, h, v0, lane, cq);
    }
    // X ← e^{Γ_last} X + Uᵀ Kᴿ.
    scan_state_update<T, K, KP>(x, ua, Ks, gl, lane);
  });

  if (!BWD && p.final_state) {
    const size_t base = (static_cast<size_t>(row) * HO + h) * V * K;
    store_final_state_frags<K>(x, p, row, base, vr, cq);
  }
}

constexpr int PREP_THREADS = 128;
constexpr int SCAN_WARPS = 4;
constexpr int SCAN_STAGES = 3;

}  // namespace gdn
