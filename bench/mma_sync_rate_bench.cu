// mma_sync_rate_bench.cu: the SM90 tensor pipe's rate for mma.sync m16n8k16 (bf16 in, fp32
// accumulate), the instruction every product of the one-pass forward's chain issues
// (kernels/include/gdn_fwd_fused16.cuh). Session 56 asks whether that chain (52 such mma per warp
// and chunk at ~15-17 cycles each, one chain warp per SM sub-partition) is bound by the mma.sync
// rate itself: this measures the rate with W warps per SM (W / 4 per sub-partition), ILP independent
// accumulators per warp, and the B operand either in registers or loaded by ldmatrix.x4 from shared
// memory for every two mma (as the chain's products do); then, for the same question about the
// warpgroup MMA (the lever if mma.sync's rate is the bound), wgmma m64nNk16 RS (A from registers,
// B by descriptor from shared memory, N = 16, 64, 128) in chains of DEPTH k16 steps per batch, one
// or two batches in flight, one or two warpgroups per SM. Timing only; the sums are stored so the
// products are not dropped.
//
// Build on the device: nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/mma_sync_rate_bench.cu -o /tmp/mmarate
// Run: /tmp/mmarate; prints `MMA warps/SM W ilp I b=<reg|ldsm>: <cycles per mma per sub-partition>
// cycles, <TFLOP/s>` and `WGMMA n N depth D inflight F warpgroups/SM G: <cycles per m16n8k16's
// worth per sub-partition>, <TFLOP/s>` per configuration (median of the timed launches; cycles at
// the GPU's maximum clock).
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "cuda_launch_timing.h"
#include "dnnp_wgmma.cuh"
#include "gdn_fwd.cuh"

using gdn::u32;
using Mma = gdn::Io<gdn::gdn_bf16>;  // the chain's own m16n8k16 (gdn_fwd.cuh)

// ILP accumulators per warp, `iters` rounds of ILP mma each. LDSM: every pair of mma takes its two
// B fragments from one ldmatrix.x4 of a 16 x 136 bf16 tile (the chain's k̂ layout), address rotating.
template <int ILP, bool LDSM>
__global__ void mma_rate(float* out, int iters) {
  __shared__ __align__(16) unsigned short tile[16 * 136];
  for (int i = threadIdx.x; i < 16 * 136; i += blockDim.x) tile[i] = static_cast<unsigned short>(0x3f80 + (i & 7));
  __syncthreads();
  const int lane = threadIdx.x & 31;
  u32 a[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = 0x3f803f80u + static_cast<u32>(lane + i);
  u32 b0 = 0x3f803f80u + lane, b1 = 0x3f803f81u + lane;
  float c[ILP][4] = {};
  const unsigned short* row = tile + (lane & 15) * 136 + 8 * (lane >> 4);
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int i = 0; i < ILP; i += 2) {
      u32 b[4] = {b0, b1, b1, b0};
      if constexpr (LDSM) gdn::ldsm_x4(b, row + 16 * ((it * ILP / 2 + i / 2) & 7));
      Mma::mma(c[i], a, b);
      if (i + 1 < ILP) Mma::mma(c[i + 1], a, b + 2);
    }
  }
  float s = 0.f;
#pragma unroll
  for (int i = 0; i < ILP; ++i) s += c[i][0] + c[i][1] + c[i][2] + c[i][3];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <int ILP, bool LDSM>
static void run(int sms, int clock_khz, int warps, float* out, cudaStream_t st) {
  const int iters = 4096 / ILP * 8;  // 32,768 mma per warp
  const std::vector<float> ms =
      launch_times_ms(st, 7, [&] { mma_rate<ILP, LDSM><<<sms, 32 * warps, 0, st>>>(out, iters); });
  const double med = ms[ms.size() / 2] * 1e-3;
  const double mma = double(sms) * warps * iters * ILP;
  const double cycles = med * clock_khz * 1e3;
  // Cycles per mma per SM sub-partition: the sub-partition issues warps / 4 warps' mma.
  printf("MMA warps/SM %2d ilp %2d b=%-4s: %5.2f cycles per mma per sub-partition, %6.1f TFLOP/s\n", warps, ILP,
         LDSM ? "ldsm" : "reg", cycles / (mma / (sms * 4.0)), mma * 4096.0 / med / 1e12);
}

// wgmma m64nNk16 (bf16, fp32 accumulate, RS): per iteration INFL batches of DEPTH k16 steps, each
// batch into its own accumulator, waiting until at most INFL - 1 batches are pending after each
// commit. B: an N x 16 tile in the no-swizzle K-major canonical layout (core matrices of 8 rows x
// 16 B: LBO 128 B between the two K halves, SBO 256 B between 8-row groups), the same tile every step.
template <int N>
__device__ __forceinline__ void wgmma_rs(float* d, const u32 (&a)[4], uint64_t desc) {
  if constexpr (N == 64) dnnp::wgmma_m64n64k16_rs_bf16_t<0>(d, a, desc);
  else if constexpr (N == 128) dnnp::wgmma_m64n128k16_rs_bf16_t<0>(d, a, desc);
  else {
    asm volatile(
        "wgmma.mma_async.sync.aligned.m64n16k16.f32.bf16.bf16 {%0,%1,%2,%3,%4,%5,%6,%7}, {%8,%9,%10,%11}, %12, 1, 1, 1, 0;\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc));
  }
}

template <int N, int DEPTH, int INFL>
__global__ void wgmma_rate(float* out, int iters) {
  __shared__ __align__(1024) unsigned short tile[128 * 16];
  for (int i = threadIdx.x; i < 128 * 16; i += blockDim.x) tile[i] = static_cast<unsigned short>(0x3f80 + (i & 7));
  dnnp::fence_proxy_async_shared();
  __syncthreads();
  const int lane = threadIdx.x & 31;
  u32 a[4];
#pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = 0x3f803f80u + static_cast<u32>(lane + i);
  const uint64_t desc = dnnp::wgmma_desc(static_cast<u32>(__cvta_generic_to_shared(tile)), 128, 256);
  float d[INFL][N / 2];
#pragma unroll
  for (int f = 0; f < INFL; ++f)
#pragma unroll
    for (int i = 0; i < N / 2; ++i) d[f][i] = 0.f;
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int f = 0; f < INFL; ++f) {
      dnnp::wgmma_fence();
#pragma unroll
      for (int k = 0; k < DEPTH; ++k) wgmma_rs<N>(d[f], a, desc);
      dnnp::wgmma_commit();
      dnnp::wgmma_wait<INFL - 1>();
    }
  }
  dnnp::wgmma_wait<0>();
  float s = 0.f;
#pragma unroll
  for (int f = 0; f < INFL; ++f)
#pragma unroll
    for (int i = 0; i < N / 2; ++i) s += d[f][i];
  out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

template <int N, int DEPTH, int INFL>
static void run_wg(int sms, int clock_khz, int groups, float* out, cudaStream_t st) {
  const int iters = 2048 / (DEPTH * INFL) * (128 / N);
  const std::vector<float> ms =
      launch_times_ms(st, 7, [&] { wgmma_rate<N, DEPTH, INFL><<<sms, 128 * groups, 0, st>>>(out, iters); });
  const double med = ms[ms.size() / 2] * 1e-3;
  const double flop = double(sms) * groups * iters * INFL * DEPTH * 2.0 * 64 * N * 16;
  const double cycles = med * clock_khz * 1e3;
  printf("WGMMA n %3d depth %d inflight %d warpgroups/SM %d: %5.2f cycles per m16n8k16's worth per sub-partition, %6.1f TFLOP/s\n",
         N, DEPTH, INFL, groups, cycles / (flop / 4096.0 / (sms * 4.0)), flop / med / 1e12);
}

int main() {
  const BenchGpu gpu = bench_gpu();
  const int clock_khz = gpu.clock_khz;
  float* out;
  CK(cudaMalloc(&out, size_t(gpu.sms) * 1024 * sizeof(float)));
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  for (int warps : {4, 8, 16}) {
    run<1, false>(gpu.sms, clock_khz, warps, out, st);
    run<2, false>(gpu.sms, clock_khz, warps, out, st);
    run<4, false>(gpu.sms, clock_khz, warps, out, st);
    run<8, false>(gpu.sms, clock_khz, warps, out, st);
    run<16, false>(gpu.sms, clock_khz, warps, out, st);
    run<4, true>(gpu.sms, clock_khz, warps, out, st);
    run<8, true>(gpu.sms, clock_khz, warps, out, st);
    run<16, true>(gpu.sms, clock_khz, warps, out, st);
  }
  for (int groups : {1, 2}) {
    run_wg<16, 8, 1>(gpu.sms, clock_khz, groups, out, st);
    run_wg<16, 8, 2>(gpu.sms, clock_khz, groups, out, st);
    run_wg<64, 8, 1>(gpu.sms, clock_khz, groups, out, st);
    run_wg<64, 8, 2>(gpu.sms, clock_khz, groups, out, st);
    run_wg<128, 1, 1>(gpu.sms, clock_khz, groups, out, st);
    run_wg<128, 4, 1>(gpu.sms, clock_khz, groups, out, st);
    run_wg<128, 4, 2>(gpu.sms, clock_khz, groups, out, st);
  }
  CK(cudaFree(out));
  return 0;
}
