// gdn_chain_c_bench.cu: how fast the one pass's chain would step at chunk 32 against chunk 16 (session
// 55's question; timing only, its outputs are not a forward). The one pass at chunk 16 is bound by
// its chain: one warp per SM sub-partition steps 16 tokens in ~1,000 cycles of dependent mma.sync
// (session 51: issue active 29 %, the HMMA pipe 25 %). At chunk C a step issues ~3.5 C mma per warp
// (P and Q 4 C, U and the readout C² / 32 each, the update 16 C / 16 ... see below) in longer
// independent groups, so a latency-bound chain may step 32 tokens in much less than twice the time.
//
// Both kernels are the chain of kernels/include/gdn_fwd_fused16.cuh (fwd_fused16_body's chain loop)
// written for a chunk of C tokens, with nothing else: no producer, no barriers; each chunk reads
// one of two fixed stages of small pseudo-random values (q̂, k̂ rows, v, T, A, the per-token
// scalars) and stores its O rows, so the chain's instructions, shared-memory reads and O stores are
// the real ones. Per warp (16 value rows) and chunk:
//   P = X K̂ᵀ, Q = X Q̂ᵀ   8 k-steps × C / 8 n8 tiles × 2   (C = 16: 32 mma, C = 32: 64)
//   Uᵀ = Rᵀ Tᵀ            C / 16 k-steps × C / 8 tiles     (2 / 8)
//   Oᵀ += Uᵀ Aᵀ           as U                             (2 / 8)
//   X += Ũᵀ K̂             C / 16 k-steps × 16 tiles        (16 / 32)
// C = 16 keeps the real chain's split of P, Q into two 4-deep chains per tile; C = 32 has eight
// independent tiles per product and keeps one 8-deep chain each.
//
// Build (CPU machine or the device), from the repository root:
//   nvcc -std=c++17 -O3 -arch=sm_90a -Ikernels/include -Ibench bench/gdn_chain_c_bench.cu -o /tmp/chainc
// Run: /tmp/chainc [iterations]; prints `CHAINC C=<c> <shape> <ms>` (median of the launches) and
// each entry's registers / spills.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "gdn_fwd_fused16.cuh"

namespace chainc {
using gdn::gdn_bf16;
using gdn::Io;
using gdn::u32;
using T = gdn_bf16;
constexpr int K = 128, LD = gdn::F16_LD, VB = 64;

template <int C>
struct Stage {
  static constexpr int TLD = C + 8;  // T / A rows: 48 B (C = 16) or 80 B (C = 32), 16-byte aligned
  T q[C * LD];
  T k[C * LD];
  T v[C * (VB + 8)];
  T t[C * TLD];
  T a[C * TLD];
  float se[C], sq[C], sk[C], be[C];
  float gl;
  float pad[3];
};
constexpr int OLD = gdn::F16_OLD;

template <int C>
struct Smem {
  Stage<C> st[2];
  T ost[4][2][C * OLD];
};

__device__ __forceinline__ float hash01(unsigned i) {
  i ^= i >> 16;
  i *= 0x7feb352dU;
  i ^= i >> 15;
  i *= 0x846ca68bU;
  i ^= i >> 16;
  return (i & 0xffffu) * (1.f / 65536.f);
}

// B fragments of two n8 tiles (rows r0 .. r0 + 15 of a [row][col] tile) over columns 16 kk .. + 15.
__device__ __forceinline__ void b_rows(u32 (&b)[4], const T* rows, int ld, int kk, int lane) {
  gdn::ldsm_x4(b, rows + ((lane & 7) + 8 * (lane >> 4)) * ld + 16 * kk + 8 * ((lane >> 3) & 1));
}

template <int C>
__global__ void __launch_bounds__(128, 1) chain_kernel(T* o, int tokens, int HO) {
  constexpr int NT = C / 8, KS = C / 16, TLD = Stage<C>::TLD;
  extern __shared__ __align__(128) unsigned char smem_raw[];
  Smem<C>& sm = *reinterpret_cast<Smem<C>*>(smem_raw);
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int tg = lane & 3;
  const int h = blockIdx.y, n = blockIdx.z, v0 = blockIdx.x * VB;
  // The two fixed stages: small values, T and A lower triangular, decays near 1.
  for (int s = 0; s < 2; ++s) {
    Stage<C>& st = sm.st[s];
    for (int i = tid; i < C * LD; i += 128) {
      st.q[i] = Io<T>::from_f(0.1f * (hash01(i + 7919u * s) - 0.5f));
      st.k[i] = Io<T>::from_f(0.1f * (hash01(i + 104729u + 7919u * s) - 0.5f));
    }
    for (int i = tid; i < C * (VB + 8); i += 128) st.v[i] = Io<T>::from_f(hash01(i + 3u + 31u * s) - 0.5f);
    for (int i = tid; i < C * TLD; i += 128) {
      const int r = i / TLD, c = i % TLD;
      st.t[i] = Io<T>::from_f(r == c ? 1.f : (c < r && c < C ? -0.05f * hash01(i) : 0.f));
      st.a[i] = Io<T>::from_f(c <= r && c < C ? 0.05f * hash01(i + 11u) : 0.f);
    }
    for (int i = tid; i < C; i += 128) {
      st.se[i] = 0.5f;
      st.sq[i] = 0.088f;
      st.sk[i] = 0.99f;
      st.be[i] = 0.5f;
    }
    if (tid == 0) st.gl = 0.995f;
  }
  __syncthreads();
  const int vr0 = v0 + 16 * warp;
  float x[K / 8][4];
  gdn::zero_frags(x);
  const long long bos = static_cast<long long>(n) * tokens;
  const int nch = tokens / C;
  auto store_o = [&](int c) {  // the warp's O rows of chunk c: 16 tokens per 16-byte store round
    __syncwarp();
#pragma unroll
    for (int g = 0; g < KS; ++g) {
      const long long tok = bos + static_cast<long long>(c) * C + 16 * g + (lane >> 1);
      const uint4 ov = *reinterpret_cast<const uint4*>(sm.ost[warp][c & 1] + (16 * g + (lane >> 1)) * OLD + 8 * (lane & 1));
      *reinterpret_cast<uint4*>(o + (tok * HO + h) * static_cast<long long>(128) + vr0 + 8 * (lane & 1)) = ov;
    }
  };
  for (int c = 0; c < nch; ++c) {
    const Stage<C>& s = sm.st[c & 1];
    float pe[NT][4], pq[NT][4];
    gdn::zero_frags(pe);
    gdn::zero_frags(pq);
    if constexpr (C == 16) {
      float pe2[2][4], pq2[2][4];
      gdn::zero_frags(pe2);
      gdn::zero_frags(pq2);
#pragma unroll
      for (int kk = 0; kk < K / 16; ++kk) {
        u32 a[4], bk[4], bq[4];
        gdn::x_a_frag<T>(a, x, kk);
        b_rows(bk, s.k, LD, kk, lane);
        b_rows(bq, s.q, LD, kk, lane);
        float(&de)[2][4] = kk < K / 32 ? pe : pe2;
        float(&dq)[2][4] = kk < K / 32 ? pq : pq2;
        Io<T>::mma(de[0], a, bk);
        Io<T>::mma(de[1], a, bk + 2);
        Io<T>::mma(dq[0], a, bq);
        Io<T>::mma(dq[1], a, bq + 2);
      }
      if (c > 0) store_o(c - 1);
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          pe[nt][e] += pe2[nt][e];
          pq[nt][e] += pq2[nt][e];
        }
    } else {
#pragma unroll
      for (int kk = 0; kk < K / 16; ++kk) {
        u32 a[4];
        gdn::x_a_frag<T>(a, x, kk);
#pragma unroll
        for (int j2 = 0; j2 < NT / 2; ++j2) {
          u32 bk[4], bq[4];
          b_rows(bk, s.k + 16 * j2 * LD, LD, kk, lane);
          b_rows(bq, s.q + 16 * j2 * LD, LD, kk, lane);
          Io<T>::mma(pe[2 * j2], a, bk);
          Io<T>::mma(pe[2 * j2 + 1], a, bk + 2);
          Io<T>::mma(pq[2 * j2], a, bq);
          Io<T>::mma(pq[2 * j2 + 1], a, bq + 2);
        }
      }
      if (c > 0) store_o(c - 1);
    }
    // Rᵀ = diag(β) vᵀ − P diag(β e^Γ), the readout's scale; vᵀ by one transposing ldmatrix per 16 tokens.
    float r[NT][4];
#pragma unroll
    for (int g = 0; g < KS; ++g) {
      u32 vt[4];
      gdn::ldsm_x4_t(vt, s.v + (16 * g + (lane & 7) + 8 * ((lane >> 3) & 1)) * (VB + 8) + 16 * warp + 8 * (lane >> 4));
#pragma unroll
      for (int nt = 0; nt < 2; ++nt)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int t = 16 * g + 8 * nt + 2 * tg + (e & 1);
          const u32 w = vt[nt + 2 * (e >> 1)];
          const float vv = Io<T>::bits_to_f(static_cast<unsigned short>((e & 1) ? w >> 16 : w & 0xffffu));
          r[2 * g + nt][e] = s.be[t] * vv - s.se[t] * pe[2 * g + nt][e];
          pq[2 * g + nt][e] *= s.sq[t];
        }
    }
    // Uᵀ = Rᵀ Tᵀ.
    float u[NT][4];
    gdn::zero_frags(u);
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      u32 ra[4];
      gdn::x_a_frag<T>(ra, r, ks);
#pragma unroll
      for (int j2 = 0; j2 < NT / 2; ++j2) {
        u32 tb[4];
        b_rows(tb, s.t + 16 * j2 * TLD, TLD, ks, lane);
        Io<T>::mma(u[2 * j2], ra, tb);
        Io<T>::mma(u[2 * j2 + 1], ra, tb + 2);
      }
    }
    // Oᵀ += Uᵀ Aᵀ.
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      u32 ua[4];
      gdn::x_a_frag<T>(ua, u, ks);
#pragma unroll
      for (int j2 = 0; j2 < NT / 2; ++j2) {
        u32 ab[4];
        b_rows(ab, s.a + 16 * j2 * TLD, TLD, ks, lane);
        Io<T>::mma(pq[2 * j2], ua, ab);
        Io<T>::mma(pq[2 * j2 + 1], ua, ab + 2);
      }
    }
    // X ← e^{Γ_last} X + Uᵀ diag(e^{Γ_last − Γ}) K̂.
#pragma unroll
    for (int nt = 0; nt < NT; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) u[nt][e] *= s.sk[8 * nt + 2 * tg + (e & 1)];
    gdn::scale_frags(x, s.gl);
#pragma unroll
    for (int ks = 0; ks < KS; ++ks) {
      u32 ua[4];
      gdn::x_a_frag<T>(ua, u, ks);
#pragma unroll
      for (int np = 0; np < K / 16; ++np) {
        u32 kb[4];
        gdn::ldsm_x4_t(kb, s.k + (16 * ks + (lane & 7) + 8 * ((lane >> 3) & 1)) * LD + 16 * np + 8 * (lane >> 4));
        Io<T>::mma(x[2 * np], ua, kb);
        Io<T>::mma(x[2 * np + 1], ua, kb + 2);
      }
    }
    // O into the staging tile ([token][value row]) by one transposing stmatrix per 16 tokens.
#pragma unroll
    for (int g = 0; g < KS; ++g) {
      const u32 rr[4] = {Io<T>::pack(pq[2 * g][0], pq[2 * g][1]), Io<T>::pack(pq[2 * g][2], pq[2 * g][3]),
                         Io<T>::pack(pq[2 * g + 1][0], pq[2 * g + 1][1]), Io<T>::pack(pq[2 * g + 1][2], pq[2 * g + 1][3])};
      gdn::stsm_x4_t(sm.ost[warp][c & 1] + (16 * g + (lane & 7) + 8 * (lane >> 4)) * OLD + 8 * ((lane >> 3) & 1), rr);
    }
  }
  if (nch > 0) store_o(nch - 1);
  // Keep X live: one value per lane into the O tensor's first row (a race is harmless here).
  if (x[0][0] == 12345.f) o[vr0] = Io<T>::from_f(x[1][1]);
}
}  // namespace chainc

#define CK(x)                                                                                                  \
  do {                                                                                                         \
    cudaError_t e_ = (x);                                                                                      \
    if (e_ != cudaSuccess) {                                                                                   \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));                      \
      exit(2);                                                                                                 \
    }                                                                                                          \
  } while (0)

int main(int argc, char** argv) {
  const int iters = argc > 1 ? atoi(argv[1]) : 20;
  struct Entry {
    const char* name;
    void (*fn)(chainc::T*, int, int);
    int c;
  } entries[] = {{"c16", chainc::chain_kernel<16>, 16}, {"c32", chainc::chain_kernel<32>, 32}};
  // One block per SM, as the one pass's one-block forms (w4c: ~188 KB).
  const int smem = 160 * 1024;
  for (const Entry& e : entries) {
    CK(cudaFuncSetAttribute(reinterpret_cast<const void*>(e.fn), cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, reinterpret_cast<const void*>(e.fn)));
    printf("ENTRY %s: %d registers, %zu B local (spills)\n", e.name, fa.numRegs, static_cast<size_t>(fa.localSizeBytes));
  }
  struct Shape {
    const char* name;
    int n, t, h;
  } shapes[] = {{"(4,8192,16)", 4, 8192, 16}, {"(1,32768,16)", 1, 32768, 16}, {"(16,2048,32)", 16, 2048, 32}};
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  for (const Shape& sh : shapes) {
    chainc::T* o;
    CK(cudaMalloc(&o, static_cast<size_t>(sh.n) * sh.t * sh.h * 128 * sizeof(chainc::T)));
    for (int rep = 0; rep < 2; ++rep)
      for (const Entry& e : entries) {
        const dim3 grid(2, sh.h, sh.n);
        for (int w = 0; w < 3; ++w) e.fn<<<grid, 128, smem, st>>>(o, sh.t, sh.h);
        CK(cudaStreamSynchronize(st));
        std::vector<float> ms;
        for (int it = 0; it < iters; ++it) {
          cudaEvent_t a, b;
          CK(cudaEventCreate(&a));
          CK(cudaEventCreate(&b));
          CK(cudaEventRecord(a, st));
          e.fn<<<grid, 128, smem, st>>>(o, sh.t, sh.h);
          CK(cudaEventRecord(b, st));
          CK(cudaEventSynchronize(b));
          float t;
          CK(cudaEventElapsedTime(&t, a, b));
          ms.push_back(t);
          cudaEventDestroy(a);
          cudaEventDestroy(b);
        }
        CK(cudaGetLastError());
        std::sort(ms.begin(), ms.end());
        printf("CHAINC C=%d %-14s round %d %.4f ms (min %.4f)\n", e.c, sh.name, rep + 1, ms[ms.size() / 2], ms[0]);
      }
    CK(cudaFree(o));
  }
  return 0;
}
