// chain_slim64_bench.cu: the chunk-64 wgmma step of the two-pass forward's scan (slim_chunk_wg with
// its warpgroup tail, kernels/include/gdn_fwd_slim.cuh: P' = X kᵀ and O' = X qᵀ as 16 wgmma
// m64n64k16, Uᵀ = Z Tᵀ, O += Uᵀ Aᵀ, X ← e^{Γ_last} X + (Uᵀ diag(cr)) k) in isolation, to price a
// one-pass forward at chunk 64 (session 63). Session 62 found the one pass at chunk 16 (w8c) bound by
// its chain warp's serial step, ~1,000 cycles per 16 tokens in the kernel and ~713 alone
// (bench/chain_ksplit_bench.cu `base`, per 64 value rows); the two-pass scan's step at chunk 64 has
// never been timed without its DRAM traffic (its kernel moves ~4.8 TB/s). Each form steps NCH
// chunks of 64 tokens from one static shared-memory stage (no producer, no barriers), one warpgroup
// (64 value rows of a head) per block, and reports the time per chunk of 64 tokens per 64 value rows
// (per block when NB blocks share an SM: the SM's throughput):
//   step:      the scan's whole step, O staged and stored to global memory as the scan does;
//   step-nost: O computed, not stored (its accumulators kept live by a sum);
//   state:     the summary form (OUT = false: P', Uᵀ, the update; no Q, no O);
// each at NB = 1 (one block per SM, as a one-pass kernel's chain would run beside its producer) and
// NB = 2 (two independent chains per SM). The numbers are the state's; the values are synthetic
// (timing only); a sum of every block's state is stored so nothing is dropped.
//
// Build on the device: nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/chain_slim64_bench.cu -o /tmp/slim64
// Run: /tmp/slim64; prints `<form> nb N nch C: <ns per chunk-64 per 64 value rows>, <cycles>` and the
// same per 16 tokens (to set beside chain_ksplit_bench's `base`).
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "cuda_launch_timing.h"
#include "gdn_fwd_slim.cuh"

using namespace gdn;
using T = gdn_bf16;
using IoT = Io<T>;

// The static stage, byte offsets from the 1024-byte aligned dynamic shared memory (the scan's
// swizzled q, k atoms and T, A tiles at multiples of 1,024 bytes, as SlimScanSmem's WG form).
constexpr int S64_VP = 64 + 8;  // v rows: the block's 64 value columns (+8, SlimScanSmem<.., 4, ..>::VP)
constexpr int S64_OP = 24;      // the O staging rows (SlimScanSmem::OP)
constexpr size_t S64_Q = 0, S64_K = 16384, S64_T = 32768, S64_A = 40960, S64_V = 49152;
constexpr size_t S64_SC = S64_V + CHUNK * S64_VP * 2;
constexpr size_t S64_O = S64_SC + SLIM_SCALARS * CHUNK * 4;
constexpr size_t S64_BYTES = S64_O + 4 * CHUNK * S64_OP * 2;
static_assert(S64_SC % 16 == 0 && S64_BYTES < 100 * 1024, "two blocks per SM fit");

// Sums oacc into a register so the O products are not dropped (step-nost's OSt hook).
struct S64KeepO {
  float* sum;
  __device__ __forceinline__ void operator()(const float (&oacc)[8][4]) const {
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) *sum += oacc[nt][0] + oacc[nt][3];
  }
};

// FORM 0: step, 1: step-nost, 2: state.
template <int FORM, int NB>
__global__ void __launch_bounds__(128, NB) slim64_bench(float* out, T* o, int nch) {
  extern __shared__ __align__(1024) unsigned char smem[];
  dnnp::trap_unless_swizzle_aligned(smem);
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  T* q = reinterpret_cast<T*>(smem + S64_Q);
  T* k = reinterpret_cast<T*>(smem + S64_K);
  T* t = reinterpret_cast<T*>(smem + S64_T);
  T* a = reinterpret_cast<T*>(smem + S64_A);
  T* v = reinterpret_cast<T*>(smem + S64_V);
  float* sc = reinterpret_cast<float*>(smem + S64_SC);
  T* os = reinterpret_cast<T*>(smem + S64_O) + warp * CHUNK * S64_OP;
  for (int i = tid; i < CHUNK * 128; i += 128) {
    q[i] = IoT::from_f(0.01f * ((i * 7) % 13 - 6));
    k[i] = IoT::from_f(0.01f * ((i * 5) % 11 - 5));
  }
  for (int i = tid; i < CHUNK * 64; i += 128) {
    t[i] = IoT::from_f(((i >> 6) == (i & 63)) ? 1.f : 0.01f);
    a[i] = IoT::from_f(0.02f);
  }
  for (int i = tid; i < CHUNK * S64_VP; i += 128) v[i] = IoT::from_f(0.1f * ((i * 3) % 7 - 3));
  for (int i = tid; i < SLIM_SCALARS * CHUNK; i += 128) sc[i] = i < CHUNK ? 0.45f : i < 2 * CHUNK ? 0.5f : 0.08f;
  dnnp::fence_proxy_async_shared();
  __syncthreads();

  FwdParams p{};
  p.o = o;
  p.ho = static_cast<int>(gridDim.x);
  const int h = static_cast<int>(blockIdx.x);
  float x[16][4];
#pragma unroll
  for (int nt = 0; nt < 16; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) x[nt][e] = 0.001f * (nt + e + lane);
  const float gl = -0.05f;
  float keep = 0.f;
  auto pre = [](int) {};
#pragma unroll 1
  for (int c = 0; c < nch; ++c) {
    const long long t0 = static_cast<long long>(c & 15) * CHUNK;  // a 1,024-token window of O rows per block
    if constexpr (FORM == 0)
      slim_chunk_wg<T, 128, 128, S64_VP, true, true, true, SlimDescForm::TailOffsets>(x, q, k, v, t, a, sc, os, p, t0, CHUNK, h,
                                                                                      16 * warp, 16 * warp, gl, lane, pre);
    else if constexpr (FORM == 1)
      slim_chunk_wg<T, 128, 128, S64_VP, true, true, true, SlimDescForm::TailOffsets>(
          x, q, k, v, t, a, sc, os, p, t0, CHUNK, h, 16 * warp, 16 * warp, gl, lane, pre, SlimNoHook{}, SlimNoHook{},
          SlimNoHook{}, S64KeepO{&keep});
    else
      slim_chunk_wg<T, 128, 128, S64_VP, false, true, true, SlimDescForm::TailOffsets>(x, nullptr, k, v, t, nullptr, sc, nullptr,
                                                                                       p, 0, 0, h, 16 * warp, 16 * warp, gl,
                                                                                       lane, pre);
  }
  float s = keep;
#pragma unroll
  for (int nt = 0; nt < 16; ++nt) s += x[nt][0] + x[nt][1] + x[nt][2] + x[nt][3];
  out[blockIdx.x * 128 + tid] = s;
}

template <int FORM, int NB>
static void run(const char* name, int sms, int clock_khz, int nch, float* out, T* o, cudaStream_t st) {
  // NB = 1: 120 KB (one block per SM); NB = 2: the stage alone (two fit).
  const int smem = NB == 1 ? 120 * 1024 : static_cast<int>((S64_BYTES + 1023) / 1024 * 1024 + 1024);
  CK(cudaFuncSetAttribute(slim64_bench<FORM, NB>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, slim64_bench<FORM, NB>, 128, smem));
  const int blocks = sms * NB;
  const std::vector<float> ms =
      launch_times_ms(st, 9, [&] { slim64_bench<FORM, NB><<<blocks, 128, smem, st>>>(out, o, nch); });
  const double med_ns = ms[ms.size() / 2] * 1e6;
  const double per = med_ns / nch / NB;  // per chunk of 64 tokens per 64 value rows (the SM's throughput)
  printf("%-10s nb %d (resident %d) nch %5d: %7.1f ns per chunk-64 per 64 value rows, %6.0f cycles; per 16 tokens %6.0f cycles"
         " (median %.4f ms)\n",
         name, NB, per_sm, nch, per, per * clock_khz * 1e-6, per * clock_khz * 1e-6 / 4, ms[ms.size() / 2]);
}

#ifndef BENCH_NO_MAIN  // bench/fused64_corun_bench.cu includes this file for its kernel
int main() {
  const BenchGpu gpu = bench_gpu();
  const int sms = gpu.sms, clock_khz = gpu.clock_khz;
  float* out;
  CK(cudaMalloc(&out, size_t(sms) * 2 * 128 * sizeof(float)));
  T* o;
  CK(cudaMalloc(&o, size_t(sms) * 2 * 16 * CHUNK * 128 * sizeof(T)));
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  for (int rep = 0; rep < 2; ++rep)
    for (int nch : {128, 512}) {
      run<0, 1>("step", sms, clock_khz, nch, out, o, st);
      run<1, 1>("step-nost", sms, clock_khz, nch, out, o, st);
      run<2, 1>("state", sms, clock_khz, nch, out, o, st);
      run<0, 2>("step", sms, clock_khz, nch, out, o, st);
      run<1, 2>("step-nost", sms, clock_khz, nch, out, o, st);
      run<2, 2>("state", sms, clock_khz, nch, out, o, st);
    }
  CK(cudaFree(out));
  CK(cudaFree(o));
  return 0;
}
#endif
