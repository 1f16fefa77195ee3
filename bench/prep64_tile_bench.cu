// prep64_tile_bench.cu: the cost of one chunk-64 factor build (the slim prep's tile,
// fwd_slim_prep_tile<T, 128, WG = 1, KEEP = 0, G = 2>: q, k rows, the l2 norms, the gates, K Kᵀ and
// Q Kᵀ on wgmma, T = (I + L)⁻¹ in fp32, T and A packed to the workspace) with its inputs resident in
// L2, to price a one-pass forward at chunk 64 (session 63; bench/chain_slim64_bench.cu prices its
// chain step). Every block builds chunk 0 of its own head NREP times (a block barrier between
// builds), at the prep kernel's residency (SLIM_PREP_WG_MIN_BLOCKS per SM by its launch bounds);
// the reported time is the SM's time per tile (median launch time × SMs / tiles). The values are
// synthetic (l2norm on, β through the sigmoid, fp32 log gates); timing only.
//
// Build on the device: nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/prep64_tile_bench.cu -o /tmp/prep64
// Run: /tmp/prep64; prints `prep64 blocks/SM B nrep R: <ns per tile per SM>, <cycles>`.
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#include "cuda_launch_timing.h"
#include "gdn_fwd_slim.cuh"

using namespace gdn;
using T = gdn_bf16;

__global__ void __launch_bounds__(PREP3_THREADS, SLIM_PREP_WG_MIN_BLOCKS) prep64_bench(FwdParams p, int nrep) {
  extern __shared__ __align__(1024) unsigned char smem[];
  dnnp::trap_unless_swizzle_aligned(smem);
  p.h = p.hk = p.hv = p.ho = static_cast<int>(gridDim.x);
#pragma unroll 1
  for (int r = 0; r < nrep; ++r) {
    fwd_slim_prep_tile<T, 128, 1, 0, 2>(p, 0, static_cast<int>(blockIdx.x));
    __syncthreads();
  }
}

// The parameters of `heads` one-chunk heads (one sequence of 64 tokens): q, k [64, heads, 128] bf16
// (synthetic values ~0.008..0.06), g, β [64, heads] fp32, the chunk table, the workspace's T, A,
// scalar and gate rows (device allocations, kept for the process).
static FwdParams prep64_params(int heads) {
  std::vector<unsigned short> qk(size_t(64) * heads * 128);
  for (size_t i = 0; i < qk.size(); ++i) qk[i] = static_cast<unsigned short>(0x3c00 + (i * 37) % 512);
  std::vector<float> g(size_t(64) * heads, -0.02f), b(size_t(64) * heads, 0.3f);
  void *dq, *dk, *dg, *db, *dcu, *doff, *wa, *ww, *wkr, *wgl;
  CK(cudaMalloc(&dq, qk.size() * 2));
  CK(cudaMalloc(&dk, qk.size() * 2));
  CK(cudaMalloc(&dg, g.size() * 4));
  CK(cudaMalloc(&db, b.size() * 4));
  CK(cudaMemcpy(dq, qk.data(), qk.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dk, qk.data(), qk.size() * 2, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(dg, g.data(), g.size() * 4, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(db, b.data(), b.size() * 4, cudaMemcpyHostToDevice));
  const int cu[2] = {0, 64}, off[2] = {0, 1};
  CK(cudaMalloc(&dcu, sizeof cu));
  CK(cudaMalloc(&doff, sizeof off));
  CK(cudaMemcpy(dcu, cu, sizeof cu, cudaMemcpyHostToDevice));
  CK(cudaMemcpy(doff, off, sizeof off, cudaMemcpyHostToDevice));
  CK(cudaMalloc(&wa, size_t(2) * heads * SLIM_TRI_ELEMS * 2));
  CK(cudaMalloc(&ww, size_t(2) * heads * SLIM_TRI_ELEMS * 2));
  CK(cudaMalloc(&wkr, size_t(2) * heads * SLIM_SCALARS * CHUNK * 4));
  CK(cudaMalloc(&wgl, size_t(2) * heads * 4));
  FwdParams p{};
  p.q = dq;
  p.k = dk;
  p.g = dg;
  p.beta = db;
  p.cu_seqlens = dcu;
  p.n_seqs = 1;
  p.g_dtype = DT_F32;
  p.beta_dtype = DT_F32;
  p.state_dtype = DT_F32;
  p.scale = 0.08838835f;
  p.flags = FLAG_L2NORM | FLAG_BETA_SIGMOID;
  p.max_chunks = 2;
  p.chunk_offsets = static_cast<int*>(doff);
  p.ws_a = wa;
  p.ws_w = ww;
  p.ws_kr = wkr;
  p.ws_gl = static_cast<float*>(wgl);
  return p;
}

#ifndef BENCH_NO_MAIN  // bench/fused64_corun_bench.cu includes this file for its kernel
int main() {
  const BenchGpu gpu = bench_gpu();
  const int sms = gpu.sms, clock_khz = gpu.clock_khz;
  const int smem = static_cast<int>(SlimPrepSmem<128>::bytes_l);
  CK(cudaFuncSetAttribute(prep64_bench, cudaFuncAttributeMaxDynamicSharedMemorySize, smem));
  int per_sm = 0;
  CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, prep64_bench, PREP3_THREADS, smem));
  const FwdParams p = prep64_params(sms * per_sm);
  cudaStream_t st;
  CK(cudaStreamCreate(&st));
  // The prep's residency (per_sm blocks per SM), then 1 and 2 blocks per SM (one block's tile
  // latency, and two tiles in flight: what a one-pass producer would hold).
  for (int rep = 0; rep < 2; ++rep)
    for (int nb : {per_sm, 1, 2})
      for (int nrep : {64, 256}) {
        const int heads = sms * nb;
        const std::vector<float> ms =
            launch_times_ms(st, 9, [&] { prep64_bench<<<heads, PREP3_THREADS, smem, st>>>(p, nrep); });
        const double med_ns = ms[ms.size() / 2] * 1e6;
        const double per = med_ns * sms / (double(heads) * nrep);  // the SM's time per tile
        printf("prep64 blocks/SM %d nrep %4d: %7.1f ns per tile per SM, %6.0f cycles; one block's tile %6.0f cycles"
               " (median %.4f ms)\n",
               nb, nrep, per, per * clock_khz * 1e-6, per * nb * clock_khz * 1e-6, ms[ms.size() / 2]);
      }
  return 0;
}
#endif
