// chain_ksplit_bench.cu: the one-pass forward's chain (kernels/include/gdn_fwd_fused16.cuh,
// fwd_fused16_body's chain warps) in isolation, against two ways of putting more warps on it
// (session 57). The chain alone is ~0.25-0.27 ms at (4,8192,16) (session 51), above issue 8's forward
// target (0.22 ms on the H200) by itself; session 56 found it not issue-bound. Each form here steps
// NCH chunks of 16 tokens from one static shared-memory stage (no producer, no barriers but the
// form's own), one block per SM, and reports the time per chunk per 64 value rows of a head:
//   base:   the landing chain: 4 warps, warp w owns value rows 16 w .. + 15 and all 128 keys
//           (P, Q: 32 mma; U: 2; O: 2; the update: 16);
//   two:    8 warps, two independent base chains per SM sub-partition (128 value rows; the time
//           per chunk is halved to compare per 64 rows): what a second chain per sub-partition buys;
//   ksplit: 8 warps, warp w and w + 4 own the same 16 value rows and keys 0-63 / 64-127 of X
//           (P, Q halves: 16 mma each warp), P and Q partials swapped through shared memory with a
//           64-thread named barrier per pair, U by both (2 mma, bitwise equal: the sum is
//           commutative), O's token half each (1 mma), the update of its key half (8 mma).
// The numbers are the state's; the values are synthetic (timing only). A sum of every form's
// result is stored so nothing is dropped.
//
// Build on the device: nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/chain_ksplit_bench.cu -o /tmp/ksplit
// Run: /tmp/ksplit; prints `<form> nch N: <ns per chunk per 64 value rows>, <cycles> at the max clock`.
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "cuda_launch_timing.h"
#include "gdn_fwd_fused16.cuh"

using namespace gdn;
using T = gdn_bf16;
using IoT = Io<T>;

// The chain's own O staging and store as the kernel had them when this bench was written (session
// 57; removed from gdn_fwd_fused16.cuh in session 59, a91c9f1, when every form took the producer's
// O store): kept here so the forms measure what they measured then.
constexpr int F16_OLD = 24;  // O staging row stride (16 value rows + 8): 48 B rows for stmatrix
// A chain warp's O rows of chunk c (16 tokens × its 16 value rows, staged as [token][value row]) to
// global memory, 16 bytes per lane; tokens at or past eos are not stored.
template <typename T, int V>
__device__ __forceinline__ void fused16_store_o(const T* ost, T* o, long long bos, long long eos, int c, int h, int HO,
                                                int vr0, int lane) {
  __syncwarp();
  const long long tok = bos + static_cast<long long>(c) * F16_C + (lane >> 1);
  const uint4 ov = *reinterpret_cast<const uint4*>(ost + (lane >> 1) * F16_OLD + 8 * (lane & 1));
  if (tok < eos) *reinterpret_cast<uint4*>(o + (tok * HO + h) * static_cast<long long>(V) + vr0 + 8 * (lane & 1)) = ov;
}

constexpr int KB_VB = 128;  // the static stage's value columns (the `two` form's 128 rows)
struct BenchStage {
  T q[F16_C * F16_LD];
  T k[F16_C * F16_LD];
  T v[F16_C * (KB_VB + 8)];
  T t[F16_C * F16_TLD];
  T a[F16_C * F16_TLD];
  float se[F16_C], sq[F16_C], sk[F16_C], be[F16_C];
  float gl;
};
struct BenchSmem {
  T qk[2][32 * 64];  // wgpq: k̂ rows 0-15 and q̂ rows 16-31 by channel half, 128-byte swizzled (1024-aligned)
  BenchStage s;
  float4 xch[4][2][2][4][32];  // ksplit: [pair][chunk parity][key half][P 0-1, Q 2-3][lane]
  T ost[8][2][F16_C * F16_OLD];
  uint4 xu[4][64];
  uint64_t bars[4][4];  // base+bar: each chain warp's own ring of four one-arrival barriers  // pqsplit: [pair][Uᵀ's A fragment by lane, then Uᵀ diag(e^{Γ_last − Γ})'s]
};

__device__ void fill_stage(BenchStage& s) {
  const int tid = threadIdx.x;
  T* qk = reinterpret_cast<T*>(reinterpret_cast<unsigned char*>(&s) - 2 * 32 * 64 * sizeof(T));
  for (int i = tid; i < 2 * 32 * 64; i += blockDim.x) qk[i] = IoT::from_f(0.01f * ((i * 5) % 11 - 5));
  for (int i = tid; i < F16_C * F16_LD; i += blockDim.x) {
    s.q[i] = IoT::from_f(0.01f * ((i * 7) % 13 - 6));
    s.k[i] = IoT::from_f(0.01f * ((i * 5) % 11 - 5));
  }
  for (int i = tid; i < F16_C * (KB_VB + 8); i += blockDim.x) s.v[i] = IoT::from_f(0.1f * ((i * 3) % 7 - 3));
  for (int i = tid; i < F16_C * F16_TLD; i += blockDim.x) {
    s.t[i] = IoT::from_f((i % F16_TLD) == (i / F16_TLD) ? 1.f : 0.01f);
    s.a[i] = IoT::from_f(0.02f);
  }
  if (tid < F16_C) {
    s.se[tid] = 0.5f;
    s.sq[tid] = 0.08f;
    s.sk[tid] = 0.9f;
    s.be[tid] = 0.5f;
  }
  if (tid == 0) s.gl = 0.95f;
}

// vᵀ of value rows vr .. + 15 in the accumulator layout (fwd_fused16_body's transposing ldmatrix).
__device__ __forceinline__ void load_vt(u32 (&vt)[4], const BenchStage& s, int vr, int lane) {
  ldsm_x4_t(vt, s.v + ((lane & 7) + 8 * ((lane >> 3) & 1)) * (KB_VB + 8) + vr + 8 * (lane >> 4));
}

// Rᵀ = β vᵀ − P diag(β e^Γ) and Q diag(scale e^Γ), in place of pe / pq.
__device__ __forceinline__ void form_r(float (&pe)[2][4], float (&pq)[2][4], const u32 (&vt)[4], const BenchStage& s,
                                       int tg) {
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      const int t = 8 * nt + 2 * tg + (e & 1);
      const u32 w = vt[nt + 2 * (e >> 1)];
      const float vv = IoT::bits_to_f(static_cast<unsigned short>((e & 1) ? w >> 16 : w & 0xffffu));
      pe[nt][e] = s.be[t] * vv - s.se[t] * pe[nt][e];
      pq[nt][e] *= s.sq[t];
    }
}

// The landing chain's step, verbatim but for the barriers and the O store (see fwd_fused16_body).
__device__ __forceinline__ void base_step(float (&x)[16][4], BenchSmem& sm, int vr, int warp, int c, int lane) {
  const BenchStage& s = sm.s;
  const int tg = lane & 3;
  float pe[2][4], pq[2][4], pe2[2][4], pq2[2][4];
  zero_frags(pe);
  zero_frags(pq);
  zero_frags(pe2);
  zero_frags(pq2);
#pragma unroll
  for (int kk = 0; kk < 8; ++kk) {
    u32 a[4], bk[4], bq[4];
    x_a_frag<T>(a, x, kk);
    fused16_b_rows(bk, s.k, F16_LD, kk, lane);
    fused16_b_rows(bq, s.q, F16_LD, kk, lane);
    float(&de)[2][4] = kk < 4 ? pe : pe2;
    float(&dq)[2][4] = kk < 4 ? pq : pq2;
    IoT::mma(de[0], a, bk);
    IoT::mma(de[1], a, bk + 2);
    IoT::mma(dq[0], a, bq);
    IoT::mma(dq[1], a, bq + 2);
  }
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      pe[nt][e] += pe2[nt][e];
      pq[nt][e] += pq2[nt][e];
    }
  u32 vt[4];
  load_vt(vt, s, vr, lane);
  form_r(pe, pq, vt, s, tg);
  u32 ra[4], tb[4];
  x_a_frag<T>(ra, pe, 0);
  fused16_b_rows(tb, s.t, F16_TLD, 0, lane);
  float u[2][4];
  zero_frags(u);
  IoT::mma(u[0], ra, tb);
  IoT::mma(u[1], ra, tb + 2);
  u32 ua[4], ab[4];
  x_a_frag<T>(ua, u, 0);
  fused16_b_rows(ab, s.a, F16_TLD, 0, lane);
  IoT::mma(pq[0], ua, ab);
  IoT::mma(pq[1], ua, ab + 2);
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) u[nt][e] *= s.sk[8 * nt + 2 * tg + (e & 1)];
  x_a_frag<T>(ua, u, 0);
  scale_frags(x, s.gl);
#pragma unroll
  for (int np = 0; np < 8; ++np) {
    u32 kb[4];
    ldsm_x4_t(kb, s.k + ((lane & 7) + 8 * ((lane >> 3) & 1)) * F16_LD + 16 * np + 8 * (lane >> 4));
    IoT::mma(x[2 * np], ua, kb);
    IoT::mma(x[2 * np + 1], ua, kb + 2);
  }
  const u32 r[4] = {IoT::pack(pq[0][0], pq[0][1]), IoT::pack(pq[0][2], pq[0][3]), IoT::pack(pq[1][0], pq[1][1]),
                    IoT::pack(pq[1][2], pq[1][3])};
  stsm_x4_t(sm.ost[warp][c & 1] + ((lane & 7) + 8 * (lane >> 4)) * F16_OLD + 8 * ((lane >> 3) & 1), r);
}

// wgmma m64n32k16 RS (bf16, fp32 accumulate, B K-major by descriptor); scale-d 0 when !ACC.
__device__ __forceinline__ void wgmma_n32(float* d, const u32 (&a)[4], uint64_t desc, int acc) {
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %21, 0;\n"
      "wgmma.mma_async.sync.aligned.m64n32k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, "
      "{%16,%17,%18,%19}, %20, p, 1, 1, 0;\n}\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]),
        "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc), "r"(acc));
}

// The base step with P and Q as one wgmma chain of the warpgroup (warps 0-3): D (64 value rows ×
// 32: k̂ tokens, then q̂ tokens) = X [k̂; q̂]ᵀ over 8 k16 steps, B from the 128-byte-swizzled tile; the
// rest as base_step, the update's k̂ fragments by ldmatrix from the swizzled rows.
__device__ __forceinline__ void wg_step(float (&x)[16][4], BenchSmem& sm, int vr, int warp, int c, int lane) {
  const BenchStage& s = sm.s;
  const int tg = lane & 3;
  u32 af[8][4];
  dnnp::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < 8; ++kk) x_a_frag<T>(af[kk], x, kk);
  float d[16];
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(&sm.qk[0][0]));
#pragma unroll
  for (int kk = 0; kk < 8; ++kk)
    wgmma_n32(d, af[kk], dnnp::wgmma_desc(base + (kk >> 2) * 4096 + (kk & 3) * 32, 16, 1024, 1), kk > 0);
  dnnp::wgmma_commit();
  dnnp::wgmma_wait<0>();
  float pe[2][4], pq[2][4];
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      dnnp::wgmma_fence_operand(d[4 * nt + e]);
      dnnp::wgmma_fence_operand(d[8 + 4 * nt + e]);
      pe[nt][e] = d[4 * nt + e];
      pq[nt][e] = d[8 + 4 * nt + e];
    }
  u32 vt[4];
  load_vt(vt, s, vr, lane);
  form_r(pe, pq, vt, s, tg);
  u32 ra[4], tb[4];
  x_a_frag<T>(ra, pe, 0);
  fused16_b_rows(tb, s.t, F16_TLD, 0, lane);
  float u[2][4];
  zero_frags(u);
  IoT::mma(u[0], ra, tb);
  IoT::mma(u[1], ra, tb + 2);
  u32 ua[4], ab[4];
  x_a_frag<T>(ua, u, 0);
  fused16_b_rows(ab, s.a, F16_TLD, 0, lane);
  IoT::mma(pq[0], ua, ab);
  IoT::mma(pq[1], ua, ab + 2);
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) u[nt][e] *= s.sk[8 * nt + 2 * tg + (e & 1)];
  x_a_frag<T>(ua, u, 0);
  scale_frags(x, s.gl);
  const int row = (lane & 7) + 8 * ((lane >> 3) & 1);
#pragma unroll
  for (int np = 0; np < 8; ++np) {
    u32 kb[4];
    const int j = (2 * np + (lane >> 4)) & 7;  // the 16-byte chunk of the row within its 64-channel half
    ldsm_x4_t(kb, &sm.qk[np >> 2][row * 64 + 8 * (j ^ (row & 7))]);
    IoT::mma(x[2 * np], ua, kb);
    IoT::mma(x[2 * np + 1], ua, kb + 2);
  }
  const u32 r[4] = {IoT::pack(pq[0][0], pq[0][1]), IoT::pack(pq[0][2], pq[0][3]), IoT::pack(pq[1][0], pq[1][1]),
                    IoT::pack(pq[1][2], pq[1][3])};
  stsm_x4_t(sm.ost[warp][c & 1] + ((lane & 7) + 8 * (lane >> 4)) * F16_OLD + 8 * ((lane >> 3) & 1), r);
}

// XCH: 0 swaps P and Q at once after the products; 1 swaps P first (the recurrence's path), Q after
// U's product (off the path); both by the pair's named barrier, once (0) or twice (1) per chunk.
template <int XCH>
__device__ __forceinline__ void ksplit_step(float (&x)[8][4], BenchSmem& sm, int pair, int half, int warp, int c,
                                            int lane) {
  const BenchStage& s = sm.s;
  const int tg = lane & 3;
  float pe[2][4], pq[2][4], pe2[2][4], pq2[2][4];
  zero_frags(pe);
  zero_frags(pq);
  zero_frags(pe2);
  zero_frags(pq2);
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    u32 a[4], bk[4], bq[4];
    x_a_frag<T>(a, x, kk);
    fused16_b_rows(bk, s.k, F16_LD, 4 * half + kk, lane);
    fused16_b_rows(bq, s.q, F16_LD, 4 * half + kk, lane);
    float(&de)[2][4] = kk < 2 ? pe : pe2;
    float(&dq)[2][4] = kk < 2 ? pq : pq2;
    IoT::mma(de[0], a, bk);
    IoT::mma(de[1], a, bk + 2);
    IoT::mma(dq[0], a, bq);
    IoT::mma(dq[1], a, bq + 2);
  }
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      pe[nt][e] += pe2[nt][e];
      pq[nt][e] += pq2[nt][e];
    }
  float4(&mine)[4][32] = sm.xch[pair][c & 1][half];
  const float4(&theirs)[4][32] = sm.xch[pair][c & 1][half ^ 1];
  auto swap = [&](float(&f)[2][4], int off) {
    mine[off][lane] = make_float4(f[0][0], f[0][1], f[0][2], f[0][3]);
    mine[off + 1][lane] = make_float4(f[1][0], f[1][1], f[1][2], f[1][3]);
  };
  auto take = [&](float(&f)[2][4], int off) {
    const float4 a = theirs[off][lane], b = theirs[off + 1][lane];
    // lo + hi in both warps (the same bits in each: IEEE addition commutes).
    f[0][0] += a.x, f[0][1] += a.y, f[0][2] += a.z, f[0][3] += a.w;
    f[1][0] += b.x, f[1][1] += b.y, f[1][2] += b.z, f[1][3] += b.w;
  };
  auto pair_bar = [&] { asm volatile("bar.sync %0, 64;\n" ::"r"(1 + pair) : "memory"); };
  swap(pe, 0);
  if (XCH == 0) swap(pq, 2);
  pair_bar();
  take(pe, 0);
  if (XCH == 0) take(pq, 2);
  u32 vt[4];
  load_vt(vt, s, 16 * pair, lane);
  float u[2][4];
  {
    float r[2][4];
#pragma unroll
    for (int nt = 0; nt < 2; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int t = 8 * nt + 2 * tg + (e & 1);
        const u32 w = vt[nt + 2 * (e >> 1)];
        const float vv = IoT::bits_to_f(static_cast<unsigned short>((e & 1) ? w >> 16 : w & 0xffffu));
        r[nt][e] = s.be[t] * vv - s.se[t] * pe[nt][e];
      }
    u32 ra[4], tb[4];
    x_a_frag<T>(ra, r, 0);
    fused16_b_rows(tb, s.t, F16_TLD, 0, lane);
    zero_frags(u);
    IoT::mma(u[0], ra, tb);
    IoT::mma(u[1], ra, tb + 2);
  }
  u32 ua[4], ab[4];
  x_a_frag<T>(ua, u, 0);
  if (XCH == 1) {
    swap(pq, 2);
    pair_bar();
    take(pq, 2);
  }
  // O's token half `half`: Q diag(scale e^Γ) + Uᵀ Aᵀ over tokens 8 half .. + 7.
  float o[4];
#pragma unroll
  for (int e = 0; e < 4; ++e) o[e] = pq[half][e] * s.sq[8 * half + 2 * tg + (e & 1)];
  fused16_b_rows(ab, s.a, F16_TLD, 0, lane);
  IoT::mma(o, ua, ab + 2 * half);
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) u[nt][e] *= s.sk[8 * nt + 2 * tg + (e & 1)];
  x_a_frag<T>(ua, u, 0);
  scale_frags(x, s.gl);
#pragma unroll
  for (int np = 0; np < 4; ++np) {
    u32 kb[4];
    ldsm_x4_t(kb, s.k + ((lane & 7) + 8 * ((lane >> 3) & 1)) * F16_LD + 16 * (4 * half + np) + 8 * (lane >> 4));
    IoT::mma(x[2 * np], ua, kb);
    IoT::mma(x[2 * np + 1], ua, kb + 2);
  }
  // The token half's O tile [8 tokens][16 value rows] (stmatrix of two transposed matrices).
  const u32 r2[4] = {IoT::pack(o[0], o[1]), IoT::pack(o[2], o[3]), IoT::pack(o[0], o[1]), IoT::pack(o[2], o[3])};
  stsm_x4_t(sm.ost[warp][c & 1] + ((lane & 7) + 8 * (lane >> 4)) * F16_OLD + 8 * ((lane >> 3) & 1), r2);
}

// pqsplit: warp ROLE 0 of a pair computes P, R, U and hands U's two A fragments (Uᵀ and
// Uᵀ diag(e^{Γ_last − Γ})) to its partner through shared memory (named barrier 1 + 2 pair: U
// written; 2 + 2 pair: U read, so the next chunk's U may be written); ROLE 1 computes Q and O. Both
// hold all of X and apply the same update (bitwise the same X).
template <int ROLE>
__device__ __forceinline__ void pqsplit_step(float (&x)[16][4], BenchSmem& sm, int pair, int warp, int c, int lane) {
  const BenchStage& s = sm.s;
  const int tg = lane & 3;
  const T* b = ROLE == 0 ? s.k : s.q;
  float pe[2][4], pe2[2][4];
  zero_frags(pe);
  zero_frags(pe2);
#pragma unroll
  for (int kk = 0; kk < 8; ++kk) {
    u32 a[4], bk[4];
    x_a_frag<T>(a, x, kk);
    fused16_b_rows(bk, b, F16_LD, kk, lane);
    float(&de)[2][4] = kk < 4 ? pe : pe2;
    IoT::mma(de[0], a, bk);
    IoT::mma(de[1], a, bk + 2);
  }
#pragma unroll
  for (int nt = 0; nt < 2; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) pe[nt][e] += pe2[nt][e];
  uint4* slot = sm.xu[pair];
  u32 ua[4], uk[4];
  if constexpr (ROLE == 0) {
    u32 vt[4];
    load_vt(vt, s, 16 * pair, lane);
    float q0[2][4];
    form_r(pe, q0, vt, s, tg);
    u32 ra[4], tb[4];
    x_a_frag<T>(ra, pe, 0);
    fused16_b_rows(tb, s.t, F16_TLD, 0, lane);
    float u[2][4];
    zero_frags(u);
    IoT::mma(u[0], ra, tb);
    IoT::mma(u[1], ra, tb + 2);
    x_a_frag<T>(ua, u, 0);
#pragma unroll
    for (int nt = 0; nt < 2; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) u[nt][e] *= s.sk[8 * nt + 2 * tg + (e & 1)];
    x_a_frag<T>(uk, u, 0);
    if (c > 0) asm volatile("bar.sync %0, 64;\n" ::"r"(2 + 2 * pair) : "memory");
    slot[lane] = make_uint4(ua[0], ua[1], ua[2], ua[3]);
    slot[32 + lane] = make_uint4(uk[0], uk[1], uk[2], uk[3]);
    asm volatile("bar.arrive %0, 64;\n" ::"r"(1 + 2 * pair) : "memory");
  } else {
#pragma unroll
    for (int nt = 0; nt < 2; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) pe[nt][e] *= s.sq[8 * nt + 2 * tg + (e & 1)];
    asm volatile("bar.sync %0, 64;\n" ::"r"(1 + 2 * pair) : "memory");
    const uint4 a0 = slot[lane], a1 = slot[32 + lane];
    asm volatile("bar.arrive %0, 64;\n" ::"r"(2 + 2 * pair) : "memory");
    ua[0] = a0.x, ua[1] = a0.y, ua[2] = a0.z, ua[3] = a0.w;
    uk[0] = a1.x, uk[1] = a1.y, uk[2] = a1.z, uk[3] = a1.w;
    u32 ab[4];
    fused16_b_rows(ab, s.a, F16_TLD, 0, lane);
    IoT::mma(pe[0], ua, ab);
    IoT::mma(pe[1], ua, ab + 2);
    const u32 r[4] = {IoT::pack(pe[0][0], pe[0][1]), IoT::pack(pe[0][2], pe[0][3]), IoT::pack(pe[1][0], pe[1][1]),
                      IoT::pack(pe[1][2], pe[1][3])};
    stsm_x4_t(sm.ost[warp][c & 1] + ((lane & 7) + 8 * (lane >> 4)) * F16_OLD + 8 * ((lane >> 3) & 1), r);
  }
  scale_frags(x, s.gl);
#pragma unroll
  for (int np = 0; np < 8; ++np) {
    u32 kb[4];
    ldsm_x4_t(kb, s.k + ((lane & 7) + 8 * ((lane >> 3) & 1)) * F16_LD + 16 * np + 8 * (lane >> 4));
    IoT::mma(x[2 * np], uk, kb);
    IoT::mma(x[2 * np + 1], uk, kb + 2);
  }
}

// FORM 0 base (4 warps), 1 two (8 warps, two chains per sub-partition), 2 / 3 ksplit (8 warps, XCH 0 / 1;
// the pair warps w, w + 4 on one sub-partition), 4 ksplit XCH 0 with the pair warps 2 p, 2 p + 1 (two
// sub-partitions), 5 pqsplit (pairs 2 p, 2 p + 1).
template <int FORM>
__global__ void chain_bench(float* out, T* o, int nch) {
  extern __shared__ __align__(1024) unsigned char dyn[];
  BenchSmem& sm = *reinterpret_cast<BenchSmem*>(dyn);
  fill_stage(sm.s);
  if (threadIdx.x < 16) {
    dnnp::mbar_init(&sm.bars[threadIdx.x / 4][threadIdx.x % 4], 1);
    dnnp::mbar_init_fence();
  }
  __syncthreads();
  if (FORM >= 6 && threadIdx.x < 16) dnnp::mbar_arrive(&sm.bars[threadIdx.x / 4][threadIdx.x % 4]);  // phase 0 done
  __syncthreads();
  const int warp = threadIdx.x >> 5, lane = threadIdx.x & 31;
  float acc = 0.f;
  if constexpr (FORM == 5) {
    float x[16][4];
#pragma unroll
    for (int nt = 0; nt < 16; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) x[nt][e] = 0.001f * (nt + e);
    const int pair = warp >> 1;
    if (warp & 1) {
      for (int c = 0; c < nch; ++c) pqsplit_step<1>(x, sm, pair, warp, c, lane);
    } else {
      for (int c = 0; c < nch; ++c) pqsplit_step<0>(x, sm, pair, warp, c, lane);
      asm volatile("bar.sync %0, 64;\n" ::"r"(2 + 2 * pair) : "memory");  // the partner's last read
    }
#pragma unroll
    for (int nt = 0; nt < 16; ++nt) acc += x[nt][0] + x[nt][3];
  } else if constexpr (FORM == 8) {
    if ((static_cast<uint32_t>(__cvta_generic_to_shared(&sm.qk[0][0])) & 1023u) != 0) __trap();
    float x[16][4];
#pragma unroll
    for (int nt = 0; nt < 16; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) x[nt][e] = 0.001f * (nt + e);
    for (int c = 0; c < nch; ++c) wg_step(x, sm, 16 * warp, warp, c, lane);
#pragma unroll
    for (int nt = 0; nt < 16; ++nt) acc += x[nt][0] + x[nt][3];
  } else if constexpr (FORM >= 6 && FORM != 8) {
    // base with the landing chain's per-chunk handshake: a blocking wait on a barrier phase that
    // completed long ago (the full barrier's usual case), lane 0's arrival for that barrier's next
    // use (release), and (FORM 7) the previous chunk's O rows to global memory (fused16_store_o).
    float x[16][4];
#pragma unroll
    for (int nt = 0; nt < 16; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) x[nt][e] = 0.001f * (nt + e);
    uint64_t* bars = sm.bars[warp];
    for (int c = 0; c < nch; ++c) {
      if (FORM != 10) dnnp::mbar_wait(&bars[c & 3], (c >> 2) & 1);
      if (FORM >= 7 && c > 0)
        fused16_store_o<T, 64>(sm.ost[warp][(c - 1) & 1], o + static_cast<long long>(blockIdx.x) * 64 * F16_C * 64, 0,
                               1 << 30, (c - 1) & 63, 0, 1, 16 * warp, lane);
      base_step(x, sm, 16 * warp, warp, c, lane);
      __syncwarp();
      if (FORM == 9) {
        if (lane == 0)
          asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.relaxed.cta.shared::cta.b64 st, [%0];\n}\n" ::"r"(
                           static_cast<uint32_t>(__cvta_generic_to_shared(&bars[c & 3])))
                       : "memory");
      } else if (FORM != 10) {
        if (lane == 0) dnnp::mbar_arrive(&bars[c & 3]);
      }
    }
#pragma unroll
    for (int nt = 0; nt < 16; ++nt) acc += x[nt][0] + x[nt][3];
  } else if constexpr (FORM <= 1) {
    float x[16][4];
#pragma unroll
    for (int nt = 0; nt < 16; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) x[nt][e] = 0.001f * (nt + e);
    for (int c = 0; c < nch; ++c) base_step(x, sm, 16 * warp, warp, c, lane);
#pragma unroll
    for (int nt = 0; nt < 16; ++nt) acc += x[nt][0] + x[nt][3];
  } else {
    float x[8][4];
#pragma unroll
    for (int nt = 0; nt < 8; ++nt)
#pragma unroll
      for (int e = 0; e < 4; ++e) x[nt][e] = 0.001f * (nt + e);
    const int pair = FORM == 4 ? warp >> 1 : warp & 3, half = FORM == 4 ? warp & 1 : warp >> 2;
    for (int c = 0; c < nch; ++c) ksplit_step<FORM == 3 ? 1 : 0>(x, sm, pair, half, warp, c, lane);
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) acc += x[nt][0] + x[nt][3];
  }
  __syncthreads();
  acc += IoT::to_f(sm.ost[warp][1][lane]);
  out[blockIdx.x * blockDim.x + threadIdx.x] = acc;
}

template <int FORM>
static void run(const char* name, int sms, int clock_khz, int nch, float* out, T* o, cudaStream_t st) {
  const int warps = FORM == 0 || FORM >= 6 ? 4 : 8;  // 8 (wgpq): one warpgroup; 9: relaxed arrive; 10: the O store, no barrier
  // 120 KB of dynamic shared memory: one block per SM, as the one pass's forms run.
  const int smem = 120 * 1024;
  static_assert(sizeof(BenchSmem) <= 120 * 1024, "the stage fits");
  CK(cudaFuncSetAttribute(chain_bench<FORM>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  const std::vector<float> ms = launch_times_ms(st, 9, [&] { chain_bench<FORM><<<sms, 32 * warps, smem, st>>>(out, o, nch); });
  const double med_ns = ms[ms.size() / 2] * 1e6;
  const double per = med_ns / nch / (FORM == 1 ? 2.0 : 1.0);  // per chunk per 64 value rows
  printf("%-12s nch %5d: %7.1f ns per chunk per 64 value rows, %6.0f cycles at %d MHz (median %.4f ms)\n", name, nch,
         per, per * clock_khz * 1e-6, clock_khz / 1000, ms[ms.size() / 2]);
}

int main() {
  const BenchGpu gpu = bench_gpu();
  const int clock_khz = gpu.clock_khz;
  float* out;
  CK(cudaMalloc(&out, size_t(gpu.sms) * 256 * sizeof(float)));
  T* o;
  CK(cudaMalloc(&o, size_t(gpu.sms) * 64 * F16_C * 64 * sizeof(T)));
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  for (int rep = 0; rep < 2; ++rep)
    for (int nch : {512, 2048}) {
      run<0>("base", gpu.sms, clock_khz, nch, out, o, st);
      run<1>("two", gpu.sms, clock_khz, nch, out, o, st);
      run<2>("ksplit-pq", gpu.sms, clock_khz, nch, out, o, st);
      run<3>("ksplit-p,q", gpu.sms, clock_khz, nch, out, o, st);
      run<4>("ksplit-2sp", gpu.sms, clock_khz, nch, out, o, st);
      run<5>("pqsplit", gpu.sms, clock_khz, nch, out, o, st);
      run<6>("base+bar", gpu.sms, clock_khz, nch, out, o, st);
      run<7>("base+bar+o", gpu.sms, clock_khz, nch, out, o, st);
      run<8>("wgpq", gpu.sms, clock_khz, nch, out, o, st);
      run<9>("base+bar+o rlx", gpu.sms, clock_khz, nch, out, o, st);
      run<10>("base+o", gpu.sms, clock_khz, nch, out, o, st);
    }
  CK(cudaFree(out));
  CK(cudaFree(o));
  return 0;
}
