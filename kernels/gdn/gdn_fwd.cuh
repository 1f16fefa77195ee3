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
//  1. gdn_chunk_offsets: chunk_offsets[b] = Σ_{b'<b} ceil(T_b'/64) (one block, a block scan).
//  2. gdn_fwd_prep (grid: chunk slots × HO): per chunk, in fp32, gates/β/l2norm/scale, the
//     cumulative log decay Γ, L = strict_lower(β_i k_i·k_j e^{Γi−Γj}) and
//     A = tril(scale q_i·k_j e^{Γi−Γj}) on the tensor cores, T = (I+L)^{-1} by a blocked
//     fp32 substitution, W = T E and Ũᵀ = (T Y)ᵀ on the tensor cores; writes W, Q⁺, Kᴿ,
//     Ũᵀ, A (io dtype) and Γ_last (fp32) to the workspace.
//  3. gdn_fwd_scan (grid: V/VS × HO × N, one warp per 16 value rows): per chunk
//     Uᵀ = Ũᵀ − X Wᵀ, Oᵀ = X Q⁺ᵀ + Uᵀ Aᵀ, X ← e^{Γ_last} X + Uᵀ Kᴿ with X = Sᵀ (V×K) in
//     fp32 mma accumulators.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <stdint.h>

namespace gdn {

enum DType : int { DT_F32 = 0, DT_BF16 = 1, DT_F16 = 2 };

enum Flags : int {
  FLAG_L2NORM = 1,
  FLAG_BETA_SIGMOID = 2,
  FLAG_NEG_EIGVAL = 4,
  FLAG_SAFE_GATE = 8,
  FLAG_LINEAR_GATE = 16,
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

// ---------------------------------------------------------------------------------------
// Element helpers
// ---------------------------------------------------------------------------------------
template <typename T>
struct Io;
template <>
struct Io<__nv_bfloat16> {
  static __device__ __forceinline__ float to_f(__nv_bfloat16 x) { return __bfloat162float(x); }
  static __device__ __forceinline__ __nv_bfloat16 from_f(float x) { return __float2bfloat16_rn(x); }
  static __device__ __forceinline__ uint32_t pack(float a, float b) {
    __nv_bfloat162 v = __floats2bfloat162_rn(a, b);
    return *reinterpret_cast<uint32_t*>(&v);
  }
  static __device__ __forceinline__ void mma(float* c, const uint32_t* a, const uint32_t* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};
template <>
struct Io<__half> {
  static __device__ __forceinline__ float to_f(__half x) { return __half2float(x); }
  static __device__ __forceinline__ __half from_f(float x) { return __float2half_rn(x); }
  static __device__ __forceinline__ uint32_t pack(float a, float b) {
    __half2 v = __floats2half2_rn(a, b);
    return *reinterpret_cast<uint32_t*>(&v);
  }
  static __device__ __forceinline__ void mma(float* c, const uint32_t* a, const uint32_t* b) {
    asm volatile(
        "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
  }
};

__device__ __forceinline__ float load_any(const void* p, int dtype, long long i) {
  if (dtype == DT_F32) return static_cast<const float*>(p)[i];
  if (dtype == DT_BF16) return __bfloat162float(static_cast<const __nv_bfloat16*>(p)[i]);
  return __half2float(static_cast<const __half*>(p)[i]);
}

__device__ __forceinline__ long long load_cu(const FwdParams& p, int i) {
  return p.cu_seqlens_i64 ? static_cast<const long long*>(p.cu_seqlens)[i]
                          : static_cast<long long>(static_cast<const int*>(p.cu_seqlens)[i]);
}

__device__ __forceinline__ uint32_t ld32(const void* smem) {
  return *reinterpret_cast<const uint32_t*>(smem);
}

// Four 8x8 b16 matrices, transposed on load (see the fragment notes in gdn_fwd_scan).
__device__ __forceinline__ void ldsm_x4_t(uint32_t* r, const void* smem) {
  uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(a));
}

__device__ __forceinline__ void cp_async16(void* smem, const void* gmem) {
  uint32_t a = static_cast<uint32_t>(__cvta_generic_to_shared(smem));
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(a), "l"(gmem));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N>
__device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

// ---------------------------------------------------------------------------------------
// Stage 1: chunk offsets
// ---------------------------------------------------------------------------------------
constexpr int OFFSETS_THREADS = 1024;

__global__ void __launch_bounds__(OFFSETS_THREADS) gdn_chunk_offsets(FwdParams p) {
  __shared__ int part[OFFSETS_THREADS];
  const int tid = threadIdx.x;
  const int n = p.n_seqs;
  const int per = (n + OFFSETS_THREADS - 1) / OFFSETS_THREADS;
  const int b0 = min(n, tid * per), b1 = min(n, b0 + per);
  int local = 0;
  for (int b = b0; b < b1; ++b) {
    long long len = load_cu(p, b + 1) - load_cu(p, b);
    local += static_cast<int>((len + CHUNK - 1) / CHUNK);
  }
  part[tid] = local;
  __syncthreads();
  for (int off = 1; off < OFFSETS_THREADS; off <<= 1) {
    int add = tid >= off ? part[tid - off] : 0;
    __syncthreads();
    part[tid] += add;
    __syncthreads();
  }
  int run = part[tid] - local;  // exclusive prefix
  for (int b = b0; b < b1; ++b) {
    p.chunk_offsets[b] = run;
    long long len = load_cu(p, b + 1) - load_cu(p, b);
    run += static_cast<int>((len + CHUNK - 1) / CHUNK);
  }
  if (tid == OFFSETS_THREADS - 1) p.chunk_offsets[n] = part[tid];
}

// ---------------------------------------------------------------------------------------
// Stage 2: per-chunk factors
// ---------------------------------------------------------------------------------------
template <int K, int V>
struct PrepSmem {
  static constexpr int KP = K + 8;   // padded row (elements)
  static constexpr int VP = V + 8;
  static constexpr int CP = CHUNK + 8;
  static constexpr int FP = CHUNK + 1;  // fp32 rows
  static constexpr size_t k_off = 0;
  static constexpr size_t q_off = k_off + CHUNK * KP * 2;
  static constexpr size_t e_off = q_off + CHUNK * KP * 2;
  static constexpr size_t y_off = e_off + CHUNK * KP * 2;
  static constexpr size_t tb_off = y_off + CHUNK * VP * 2;
  static constexpr size_t l_off = tb_off + CHUNK * CP * 2;
  static constexpr size_t t_off = l_off + CHUNK * FP * 4;
  static constexpr size_t gam_off = t_off + CHUNK * FP * 4;
  static constexpr size_t bet_off = gam_off + CHUNK * 4;
  static constexpr size_t bytes = bet_off + CHUNK * 4 + 16;
};

// Locates chunk slot c: returns false when the slot is past the last chunk.
__device__ __forceinline__ bool locate_chunk(const FwdParams& p, int c, int& seq, long long& t0,
                                             int& len) {
  if (c >= p.chunk_offsets[p.n_seqs]) return false;
  int lo = 0, hi = p.n_seqs - 1;
  while (lo < hi) {
    int mid = (lo + hi + 1) >> 1;
    if (p.chunk_offsets[mid] <= c) lo = mid; else hi = mid - 1;
  }
  seq = lo;
  t0 = load_cu(p, lo) + static_cast<long long>(c - p.chunk_offsets[lo]) * CHUNK;
  len = static_cast<int>(min(static_cast<long long>(CHUNK), load_cu(p, lo + 1) - t0));
  return true;
}

template <typename T, int K, int V>
__global__ void __launch_bounds__(128) gdn_fwd_prep(FwdParams p) {
  using S = PrepSmem<K, V>;
  using IO = Io<T>;
  constexpr int KP = S::KP, VP = S::VP, CP = S::CP, FP = S::FP;
  extern __shared__ __align__(16) unsigned char smem[];
  T* kS = reinterpret_cast<T*>(smem + S::k_off);
  T* qS = reinterpret_cast<T*>(smem + S::q_off);
  T* eS = reinterpret_cast<T*>(smem + S::e_off);
  T* yS = reinterpret_cast<T*>(smem + S::y_off);
  T* tb = reinterpret_cast<T*>(smem + S::tb_off);
  float* Lf = reinterpret_cast<float*>(smem + S::l_off);
  float* Tf = reinterpret_cast<float*>(smem + S::t_off);
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

  // Raw q, k, v rows of the chunk into smem (16-byte cp.async; padded rows zero-filled),
  // in flight while the gates are computed.
  {
    const T* qg = static_cast<const T*>(p.q);
    const T* kg = static_cast<const T*>(p.k);
    const T* vg = static_cast<const T*>(p.v);
    constexpr int KV = K / 8, VV = V / 8;
    for (int i = tid; i < CHUNK * KV; i += 128) {
      const int r = i / KV, c8 = i % KV;
      if (r < len) {
        cp_async16(&kS[r * KP + 8 * c8], &kg[((t0 + r) * p.hk + kh) * K + 8 * c8]);
        cp_async16(&qS[r * KP + 8 * c8], &qg[((t0 + r) * p.h + qh) * K + 8 * c8]);
      } else {
        *reinterpret_cast<uint4*>(&kS[r * KP + 8 * c8]) = make_uint4(0, 0, 0, 0);
        *reinterpret_cast<uint4*>(&qS[r * KP + 8 * c8]) = make_uint4(0, 0, 0, 0);
      }
    }
    for (int i = tid; i < CHUNK * VV; i += 128) {
      const int r = i / VV, c8 = i % VV;
      if (r < len) cp_async16(&yS[r * VP + 8 * c8], &vg[((t0 + r) * p.hv + vh) * V + 8 * c8]);
      else *reinterpret_cast<uint4*>(&yS[r * VP + 8 * c8]) = make_uint4(0, 0, 0, 0);
    }
    cp_async_commit();
  }
  // Gates and beta (threads 0..63), then the inclusive cumulative log decay.
  if (tid < CHUNK) {
    float la = 0.f, b = 0.f;
    if (tid < len) {
      const long long gi = (t0 + tid) * HO + h;
      float g = load_any(p.g, p.g_dtype, gi);
      if (p.flags & FLAG_SAFE_GATE) {
        float ea = p.a_log ? __expf(load_any(p.a_log, p.a_log_dtype, h)) : 1.f;
        float x = g + (p.dt_bias ? load_any(p.dt_bias, p.dt_bias_dtype, h) : 0.f);
        float sp = x > 20.f ? x : log1pf(__expf(x));
        la = -ea * sp;
      } else if (p.flags & FLAG_LINEAR_GATE) {
        la = logf(g + 1e-10f);
      } else {
        la = g;
      }
      b = load_any(p.beta, p.beta_dtype, gi);
      if (p.flags & FLAG_BETA_SIGMOID) {
        b = 1.f / (1.f + __expf(-b));
        if (p.flags & FLAG_NEG_EIGVAL) b *= 2.f;
      }
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
  // Zero the fp32 T, set its diagonal.
  for (int i = tid; i < CHUNK * FP; i += 128) Tf[i] = (i / FP == i % FP) ? 1.f : 0.f;
  __syncthreads();
  if (tid >= 32 && tid < CHUNK) gam[tid] += gam[31];
  cp_async_wait<0>();
  __syncthreads();
  const float gl = gam[CHUNK - 1];
  if (tid == 0) p.ws_gl[ch] = gl;

  // Rows: normalised k, scaled q, E = β k e^Γ, Y = β v; Q⁺ and Kᴿ go to the workspace.
  {
    constexpr int EK = K / 32, EV = V / 32;
    T* wq = static_cast<T*>(p.ws_q) + ch * CHUNK * K;
    T* wk = static_cast<T*>(p.ws_kr) + ch * CHUNK * K;
    for (int r = warp; r < CHUNK; r += 4) {
      float kx[EK], qx[EK], vx[EV];
      float ks = 0.f, qs = 0.f;
#pragma unroll
      for (int e = 0; e < EK; ++e) {
        kx[e] = IO::to_f(kS[r * KP + lane * EK + e]);
        qx[e] = IO::to_f(qS[r * KP + lane * EK + e]);
        ks += kx[e] * kx[e];
        qs += qx[e] * qx[e];
      }
#pragma unroll
      for (int e = 0; e < EV; ++e) vx[e] = IO::to_f(yS[r * VP + lane * EV + e]);
      float kr = 1.f, qr = p.scale;
      if (p.flags & FLAG_L2NORM) {
#pragma unroll
        for (int o = 16; o > 0; o >>= 1) {
          ks += __shfl_xor_sync(0xffffffffu, ks, o);
          qs += __shfl_xor_sync(0xffffffffu, qs, o);
        }
        kr = rsqrtf(ks + 1e-6f);
        qr = p.scale * rsqrtf(qs + 1e-6f);
      }
      const float eg = __expf(gam[r]), er = __expf(gl - gam[r]), br = bet[r];
#pragma unroll
      for (int e = 0; e < EK; ++e) {
        const int d = lane * EK + e;
        const float kn = kx[e] * kr, qn = qx[e] * qr;
        kS[r * KP + d] = IO::from_f(kn);
        qS[r * KP + d] = IO::from_f(qn);
        eS[r * KP + d] = IO::from_f(br * eg * kn);
        wq[r * K + d] = IO::from_f(qn * eg);
        wk[r * K + d] = IO::from_f(kn * er);
      }
#pragma unroll
      for (int e = 0; e < EV; ++e) yS[r * VP + lane * EV + e] = IO::from_f(br * vx[e]);
    }
  }
  __syncthreads();

  // K Kᵀ and Q Kᵀ on the tensor cores: warp w owns rows 16w..16w+15.
  {
    const int r0 = 16 * warp + (lane >> 2), cq = 2 * (lane & 3);
    float akk[8][4], aqk[8][4];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) akk[nt][e] = aqk[nt][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) {
      const int col = 16 * kk + cq;
      uint32_t ak[4] = {ld32(&kS[r0 * KP + col]), ld32(&kS[(r0 + 8) * KP + col]),
                        ld32(&kS[r0 * KP + col + 8]), ld32(&kS[(r0 + 8) * KP + col + 8])};
      uint32_t aq[4] = {ld32(&qS[r0 * KP + col]), ld32(&qS[(r0 + 8) * KP + col]),
                        ld32(&qS[r0 * KP + col + 8]), ld32(&qS[(r0 + 8) * KP + col + 8])};
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        const int n = 8 * nt + (lane >> 2);
        uint32_t b[2] = {ld32(&kS[n * KP + col]), ld32(&kS[n * KP + col + 8])};
        IO::mma(akk[nt], ak, b);
        IO::mma(aqk[nt], aq, b);
      }
    }
    T* wa = static_cast<T*>(p.ws_a) + ch * CHUNK * CHUNK;
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const int i = r0 + 8 * hf;
        float av[2];
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int j = 8 * nt + cq + e;
          const float dec = j <= i ? __expf(gam[i] - gam[j]) : 0.f;
          Lf[i * FP + j] = j < i ? bet[i] * akk[nt][2 * hf + e] * dec : 0.f;
          av[e] = aqk[nt][2 * hf + e] * dec;
        }
        *reinterpret_cast<uint32_t*>(&wa[i * CHUNK + 8 * nt + cq]) = IO::pack(av[0], av[1]);
      }
    }
  }
  __syncthreads();

  // T = (I + L)^{-1}, fp32. Diagonal 16x16 blocks by column substitution (64 threads).
  if (tid < CHUNK) {
    const int base = 16 * (tid >> 4), cl = tid & 15;
    for (int r = cl + 1; r < 16; ++r) {
      float s = 0.f;
      for (int j = cl; j < r; ++j) s += Lf[(base + r) * FP + base + j] * Tf[(base + j) * FP + base + cl];
      Tf[(base + r) * FP + base + cl] = -s;
    }
  }
  __syncthreads();
  // Off-diagonal blocks, block row by block row: T_IJ = −T_II Σ_{m=J}^{I−1} L_Im T_mJ.
  // The partial sums go to the (still zero) upper triangle of Lf's transposed slot... use a
  // scratch area: the strictly-upper part of Tf block (J, I) is unused, so S_IJ is kept in
  // registers instead (each thread owns fixed outputs).
  for (int I = 1; I < 4; ++I) {
    const int outs = I * 256;  // I blocks of 16x16
    float sacc[6];
#pragma unroll
    for (int u = 0; u < 6; ++u) {
      const int o = tid + 128 * u;
      sacc[u] = 0.f;
      if (o < outs) {
        const int J = o >> 8, rr = (o >> 4) & 15, cc = o & 15;
        const int row = 16 * I + rr, col = 16 * J + cc;
        float s = 0.f;
        for (int m = 16 * J; m < 16 * I; ++m) s += Lf[row * FP + m] * Tf[m * FP + col];
        sacc[u] = s;
      }
    }
    __syncthreads();
    // Stash S_IJ in Lf's upper triangle rows (block row I, columns ≥ 16·I are free there:
    // L is strictly lower; we use the transposed position (col, row) which is above the
    // diagonal and never read as L again).
#pragma unroll
    for (int u = 0; u < 6; ++u) {
      const int o = tid + 128 * u;
      if (o < outs) {
        const int J = o >> 8, rr = (o >> 4) & 15, cc = o & 15;
        Lf[(16 * J + cc) * FP + 16 * I + rr] = sacc[u];
      }
    }
    __syncthreads();
#pragma unroll
    for (int u = 0; u < 6; ++u) {
      const int o = tid + 128 * u;
      if (o < outs) {
        const int J = o >> 8, rr = (o >> 4) & 15, cc = o & 15;
        const int row = 16 * I + rr, col = 16 * J + cc;
        float s = 0.f;
        for (int m = 0; m <= rr; ++m)
          s += Tf[row * FP + 16 * I + m] * Lf[col * FP + 16 * I + m];
        Tf[row * FP + col] = -s;
      }
    }
    __syncthreads();
  }
  for (int i = tid; i < CHUNK * CHUNK; i += 128) {
    const int r = i / CHUNK, cc = i % CHUNK;
    tb[r * CP + cc] = IO::from_f(cc <= r ? Tf[r * FP + cc] : 0.f);
  }
  __syncthreads();

  // W = T E (64×K): warp w rows 16w.., A = T (row-major), B = E via ldmatrix.trans.
  {
    const int r0 = 16 * warp + (lane >> 2), cq = 2 * (lane & 3);
    T* ww = static_cast<T*>(p.ws_w) + ch * CHUNK * K;
    float acc[K / 8][4];
#pragma unroll
    for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) acc[nt][e] = 0.f;
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      if (kk > warp) break;  // T is lower triangular
      const int col = 16 * kk + cq;
      uint32_t a[4] = {ld32(&tb[r0 * CP + col]), ld32(&tb[(r0 + 8) * CP + col]),
                       ld32(&tb[r0 * CP + col + 8]), ld32(&tb[(r0 + 8) * CP + col + 8])};
      const int lrow = 16 * kk + (lane & 7) + 8 * ((lane >> 3) & 1);
#pragma unroll
      for (int np = 0; np < K / 16; ++np) {
        uint32_t r[4];
        ldsm_x4_t(r, &eS[lrow * KP + 16 * np + 8 * (lane >> 4)]);
        IO::mma(acc[2 * np], a, r);
        IO::mma(acc[2 * np + 1], a, r + 2);
      }
    }
#pragma unroll
    for (int nt = 0; nt < K / 8; ++nt) {
      *reinterpret_cast<uint32_t*>(&ww[r0 * K + 8 * nt + cq]) = IO::pack(acc[nt][0], acc[nt][1]);
      *reinterpret_cast<uint32_t*>(&ww[(r0 + 8) * K + 8 * nt + cq]) = IO::pack(acc[nt][2], acc[nt][3]);
    }
  }
  // Ũᵀ = Yᵀ Tᵀ (V×64): warp w owns value rows [w·V/4, (w+1)·V/4); A = Yᵀ via ldmatrix.trans,
  // B = Tᵀ read from T row-major.
  {
    constexpr int MT = V / 64;  // m-tiles per warp
    T* wu = static_cast<T*>(p.ws_ut) + ch * V * CHUNK;
    const int cq = 2 * (lane & 3);
#pragma unroll
    for (int mt = 0; mt < MT; ++mt) {
      const int d0 = (warp * MT + mt) * 16;
      float acc[8][4];
#pragma unroll
      for (int nt = 0; nt < 8; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) acc[nt][e] = 0.f;
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        uint32_t a[4];
        const int mi = lane >> 3;
        ldsm_x4_t(a, &yS[(16 * kk + (lane & 7) + 8 * (mi >> 1)) * VP + d0 + 8 * (mi & 1)]);
#pragma unroll
        for (int nt = 0; nt < 8; ++nt) {
          const int n = 8 * nt + (lane >> 2);
          uint32_t b[2] = {ld32(&tb[n * CP + 16 * kk + cq]), ld32(&tb[n * CP + 16 * kk + cq + 8])};
          IO::mma(acc[nt], a, b);
        }
      }
      const int d = d0 + (lane >> 2);
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        *reinterpret_cast<uint32_t*>(&wu[d * CHUNK + 8 * nt + cq]) = IO::pack(acc[nt][0], acc[nt][1]);
        *reinterpret_cast<uint32_t*>(&wu[(d + 8) * CHUNK + 8 * nt + cq]) = IO::pack(acc[nt][2], acc[nt][3]);
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Stage 3: the state scan
// ---------------------------------------------------------------------------------------
template <int K, int NW>
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
  static constexpr size_t o_off = 2 * stage;             // per-warp O staging tiles
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

template <typename T, int K, int V, int NW>
__global__ void __launch_bounds__(NW * 32) gdn_fwd_scan(FwdParams p) {
  using S = ScanSmem<K, NW>;
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
  const int row = p.state_indices ? p.state_indices[b] : b;

  // X = Sᵀ rows vr, vr+8, columns 8nt + cq + {0,1}.
  float x[K / 8][4];
  {
    const size_t base = (static_cast<size_t>(row) * HO + h) * V * K;
#pragma unroll
    for (int nt = 0; nt < K / 8; ++nt) {
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const size_t idx = base + static_cast<size_t>(vr + 8 * hf) * K + 8 * nt + cq;
        float a0 = 0.f, a1 = 0.f;
        if (p.initial_state) {
          if (p.state_dtype == DT_F32) {
            float2 t = *reinterpret_cast<const float2*>(static_cast<const float*>(p.initial_state) + idx);
            a0 = t.x; a1 = t.y;
          } else {
            __nv_bfloat162 t = *reinterpret_cast<const __nv_bfloat162*>(
                static_cast<const __nv_bfloat16*>(p.initial_state) + idx);
            a0 = __low2float(t); a1 = __high2float(t);
          }
        }
        x[nt][2 * hf] = a0;
        x[nt][2 * hf + 1] = a1;
      }
    }
  }

  // Two-stage cp.async pipeline: chunk c+1's tiles load while chunk c computes.
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
  if (c_begin < c_end) issue(c_begin, 0);
  cp_async_commit();
  for (int c = c_begin; c < c_end; ++c) {
    const int st = (c - c_begin) & 1;
    if (c + 1 < c_end) issue(c + 1, st ^ 1);
    cp_async_commit();
    cp_async_wait<1>();
    __syncthreads();
    unsigned char* base = smem + st * S::stage;
    const T* Ws = reinterpret_cast<const T*>(base + S::w_off);
    const T* Qs = reinterpret_cast<const T*>(base + S::q_off);
    const T* Ks = reinterpret_cast<const T*>(base + S::k_off);
    const T* As = reinterpret_cast<const T*>(base + S::a_off);
    const T* Us = reinterpret_cast<const T*>(base + S::u_off);
    const size_t ch = static_cast<size_t>(c) * HO + h;
    const long long t0 = cs + static_cast<long long>(c - c_begin) * CHUNK;
    const int len = static_cast<int>(min(static_cast<long long>(CHUNK), ce - t0));
    const float gl = p.ws_gl[ch];
    const int ur = 16 * warp + (lane >> 2);  // row of Ũᵀ within the slice
    uint32_t uraw[8][2];
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
      uint32_t a[4] = {IO::pack(x[2 * kk][0], x[2 * kk][1]), IO::pack(x[2 * kk][2], x[2 * kk][3]),
                       IO::pack(x[2 * kk + 1][0], x[2 * kk + 1][1]),
                       IO::pack(x[2 * kk + 1][2], x[2 * kk + 1][3])};
      const int col = 16 * kk + cq;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
        const int n = 8 * nt + (lane >> 2);
        uint32_t bw[2] = {ld32(&Ws[n * KP + col]), ld32(&Ws[n * KP + col + 8])};
        uint32_t bq[2] = {ld32(&Qs[n * KP + col]), ld32(&Qs[n * KP + col + 8])};
        IO::mma(pacc[nt], a, bw);
        IO::mma(oacc[nt], a, bq);
      }
    }
    // Uᵀ = Ũᵀ − P, as A fragments (tokens are the reduction dim below).
    uint32_t ua[4][4];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      const T* u0 = reinterpret_cast<const T*>(&uraw[nt][0]);
      const T* u1 = reinterpret_cast<const T*>(&uraw[nt][1]);
      const uint32_t lo = IO::pack(IO::to_f(u0[0]) - pacc[nt][0], IO::to_f(u0[1]) - pacc[nt][1]);
      const uint32_t hi = IO::pack(IO::to_f(u1[0]) - pacc[nt][2], IO::to_f(u1[1]) - pacc[nt][3]);
      ua[nt >> 1][(nt & 1) * 2 + 0] = lo;
      ua[nt >> 1][(nt & 1) * 2 + 1] = hi;
    }
    // O += Uᵀ Aᵀ: B[k = j][n = i] = A[i][j]; A is lower triangular (j ≤ i).
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      const int n = 8 * nt + (lane >> 2);
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        if (kk > (nt >> 1)) break;
        uint32_t bb[2] = {ld32(&As[n * CP + 16 * kk + cq]), ld32(&As[n * CP + 16 * kk + cq + 8])};
        IO::mma(oacc[nt], ua[kk], bb);
      }
    }
    // Store O rows (tokens) < len, staged through this warp's smem tile so that each
    // token's 16 values leave as two 16-byte stores.
    {
      T* Os = reinterpret_cast<T*>(smem + S::o_off) + warp * CHUNK * S::OP;
      const int vl = lane >> 2;
#pragma unroll
      for (int nt = 0; nt < 8; ++nt) {
#pragma unroll
        for (int e = 0; e < 2; ++e) {
          const int tok = 8 * nt + cq + e;
          Os[tok * S::OP + vl] = IO::from_f(oacc[nt][e]);
          Os[tok * S::OP + vl + 8] = IO::from_f(oacc[nt][2 + e]);
        }
      }
      __syncwarp();
      T* o = static_cast<T*>(p.o);
#pragma unroll
      for (int i = lane; i < 2 * CHUNK; i += 32) {
        const int tok = i >> 1, hf = i & 1;
        if (tok < len)
          *reinterpret_cast<uint4*>(&o[(static_cast<size_t>(t0 + tok) * HO + h) * V + v0 + 8 * hf]) =
              *reinterpret_cast<const uint4*>(&Os[tok * S::OP + 8 * hf]);
      }
      __syncwarp();
    }
    // X ← e^{Γ_last} X + Uᵀ Kᴿ (B = Kᴿ [token][key] via ldmatrix.trans).
    const float decay = __expf(gl);
#pragma unroll
    for (int nt = 0; nt < K / 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) x[nt][e] *= decay;
    const int lrow = (lane & 7) + 8 * ((lane >> 3) & 1);
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
#pragma unroll
      for (int np = 0; np < K / 16; ++np) {
        uint32_t r[4];
        ldsm_x4_t(r, &Ks[(16 * kk + lrow) * KP + 16 * np + 8 * (lane >> 4)]);
        IO::mma(x[2 * np], ua[kk], r);
        IO::mma(x[2 * np + 1], ua[kk], r + 2);
      }
    }
    __syncthreads();  // this stage is refilled by the next iteration's issue
  }
  cp_async_wait<0>();

  if (p.final_state) {
    const size_t base = (static_cast<size_t>(row) * HO + h) * V * K;
#pragma unroll
    for (int nt = 0; nt < K / 8; ++nt) {
#pragma unroll
      for (int hf = 0; hf < 2; ++hf) {
        const size_t idx = base + static_cast<size_t>(vr + 8 * hf) * K + 8 * nt + cq;
        if (p.state_dtype == DT_F32) {
          *reinterpret_cast<float2*>(static_cast<float*>(p.final_state) + idx) =
              make_float2(x[nt][2 * hf], x[nt][2 * hf + 1]);
        } else {
          *reinterpret_cast<__nv_bfloat162*>(static_cast<__nv_bfloat16*>(p.final_state) + idx) =
              __floats2bfloat162_rn(x[nt][2 * hf], x[nt][2 * hf + 1]);
        }
      }
    }
  }
}

// ---------------------------------------------------------------------------------------
// Host side: workspace layout and launch
// ---------------------------------------------------------------------------------------
inline size_t align256(size_t x) { return (x + 255) & ~static_cast<size_t>(255); }

// Fills the workspace pointers of `p` from `ws` (null: only computes the size) and returns
// the bytes needed. Requires p.n_seqs, p.ho, p.max_chunks.
template <typename T, int K, int V>
inline size_t gdn_fwd_workspace_layout(FwdParams& p, void* ws) {
  const size_t slots = static_cast<size_t>(p.max_chunks) * p.ho;
  size_t off = 0;
  auto take = [&](size_t bytes) {
    size_t o = off;
    off = align256(off + bytes);
    return ws ? static_cast<void*>(static_cast<char*>(ws) + o) : nullptr;
  };
  p.chunk_offsets = static_cast<int*>(take(sizeof(int) * (p.n_seqs + 1)));
  p.ws_w = take(slots * CHUNK * K * sizeof(T));
  p.ws_q = take(slots * CHUNK * K * sizeof(T));
  p.ws_kr = take(slots * CHUNK * K * sizeof(T));
  p.ws_ut = take(slots * V * CHUNK * sizeof(T));
  p.ws_a = take(slots * CHUNK * CHUNK * sizeof(T));
  p.ws_gl = static_cast<float*>(take(slots * sizeof(float)));
  return off;
}

constexpr int SCAN_WARPS = 4;

// Launches the three stages on `stream`. The smem attributes must have been raised once
// (gdn_fwd_prepare_attributes).
template <typename T, int K, int V>
inline cudaError_t gdn_fwd_prepare_attributes() {
  cudaError_t e = cudaFuncSetAttribute(gdn_fwd_prep<T, K, V>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(PrepSmem<K, V>::bytes));
  if (e != cudaSuccess) return e;
  return cudaFuncSetAttribute(gdn_fwd_scan<T, K, V, SCAN_WARPS>,
                              cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(ScanSmem<K, SCAN_WARPS>::bytes));
}

template <typename T, int K, int V>
inline cudaError_t gdn_fwd_launch(const FwdParams& p, cudaStream_t stream) {
  gdn_chunk_offsets<<<1, OFFSETS_THREADS, 0, stream>>>(p);
  if (p.max_chunks > 0) {
    gdn_fwd_prep<T, K, V><<<dim3(p.max_chunks, p.ho), 128, PrepSmem<K, V>::bytes, stream>>>(p);
  }
  constexpr int VS = 16 * SCAN_WARPS;
  static_assert(V % VS == 0, "V must be a multiple of the scan's value slice");
  gdn_fwd_scan<T, K, V, SCAN_WARPS><<<dim3(V / VS, p.ho, p.n_seqs), SCAN_WARPS * 32, ScanSmem<K, SCAN_WARPS>::bytes, stream>>>(p);
  return cudaGetLastError();
}

}  // namespace gdn
