// Session 23 (helper wg23): a standalone check of kernels/include/dnnp_wgmma.cuh as the w4g scan
// uses it (gdn_fwd_slim.cuh, slim_chunk_wg): D (64 x 64) = A (64 x 128, bf16, from registers in
// mma.sync's A layout per warp) · Bᵀ (B: 64 x 128, bf16, staged in the canonical no-swizzle
// K-major layout, LBO 128 B, SBO 2048 B, 8 k16 steps of 256 B; then, as w4gs, in the 128-byte
// swizzle: 64-key atoms of 8 KB, SBO 1024 B, k16 steps at +32 B), against a double reference.
// Build and run on the device: nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -I kernels/include bench/gdn_wgmma_selftest.cu
#include <cstdio>
#include <cstdint>
#include <cmath>
#include <vector>
#include <cuda_bf16.h>
#include "dnnp_wgmma.cuh"

constexpr int M = 64, N = 64, K = 128;

__device__ uint32_t pack2(const __nv_bfloat16* p) {
  return static_cast<uint32_t>(__bfloat16_as_ushort(p[0])) | (static_cast<uint32_t>(__bfloat16_as_ushort(p[1])) << 16);
}

template <bool SW128>
__global__ void selftest(const __nv_bfloat16* A, const __nv_bfloat16* B, float* D) {
  __shared__ __align__(1024) __nv_bfloat16 bs[N * K];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  // The canonical layout (slim_canon_elem): token t, key kd at (t >> 3) 8K + (kd >> 3) 64 + (t & 7) 8 + (kd & 7).
  for (int i = tid; i < N * K; i += 128) {
    const int t = i / K, kd = i % K;
    if (SW128) bs[(kd >> 6) * 64 * N + t * 64 + ((((kd >> 3) & 7) ^ (t & 7)) << 3) + (kd & 7)] = B[i];
    else bs[(t >> 3) * 8 * K + (kd >> 3) * 64 + (t & 7) * 8 + (kd & 7)] = B[i];
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const int r = 16 * warp + (lane >> 2), c = 2 * (lane & 3);
  uint32_t a[K / 16][4];
  for (int kk = 0; kk < K / 16; ++kk) {
    a[kk][0] = pack2(&A[r * K + 16 * kk + c]);
    a[kk][1] = pack2(&A[(r + 8) * K + 16 * kk + c]);
    a[kk][2] = pack2(&A[r * K + 16 * kk + c + 8]);
    a[kk][3] = pack2(&A[(r + 8) * K + 16 * kk + c + 8]);
  }
  float d[32];
  for (int i = 0; i < 32; ++i) {
    d[i] = 0.f;
    dnnp::wgmma_fence_operand(d[i]);
  }
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(bs));
  dnnp::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk)
    dnnp::wgmma_m64n64k16_rs_bf16(d, a[kk], SW128 ? dnnp::wgmma_desc(base + 64 * N * 2 * (kk >> 2) + 32 * (kk & 3), 16, 1024, 1)
                                                  : dnnp::wgmma_desc(base + 256 * kk, 128, 16 * K));
  dnnp::wgmma_commit();
  dnnp::wgmma_wait<0>();
  for (int i = 0; i < 32; ++i) dnnp::wgmma_fence_operand(d[i]);
  for (int j = 0; j < 8; ++j) {
    D[r * N + 8 * j + c] = d[4 * j];
    D[r * N + 8 * j + c + 1] = d[4 * j + 1];
    D[(r + 8) * N + 8 * j + c] = d[4 * j + 2];
    D[(r + 8) * N + 8 * j + c + 1] = d[4 * j + 3];
  }
}

int main() {
  std::vector<__nv_bfloat16> a(M * K), b(N * K);
  std::vector<float> af(M * K), bf(N * K), d(M * N);
  uint32_t s = 12345u;
  auto rnd = [&]() { s = s * 1664525u + 1013904223u; return ((s >> 8) & 0xFFFF) / 32768.f - 1.f; };
  for (int i = 0; i < M * K; ++i) { a[i] = __float2bfloat16(rnd()); af[i] = __bfloat162float(a[i]); }
  for (int i = 0; i < N * K; ++i) { b[i] = __float2bfloat16(rnd()); bf[i] = __bfloat162float(b[i]); }
  __nv_bfloat16 *da, *db;
  float* dd;
  cudaMalloc(&da, M * K * 2);
  cudaMalloc(&db, N * K * 2);
  cudaMalloc(&dd, M * N * 4);
  cudaMemcpy(da, a.data(), M * K * 2, cudaMemcpyHostToDevice);
  cudaMemcpy(db, b.data(), N * K * 2, cudaMemcpyHostToDevice);
  int fails = 0;
  for (int sw = 0; sw < 2; ++sw) {
  if (sw) selftest<true><<<1, 128>>>(da, db, dd);
  else selftest<false><<<1, 128>>>(da, db, dd);
  const cudaError_t e = cudaDeviceSynchronize();
  cudaMemcpy(d.data(), dd, M * N * 4, cudaMemcpyDeviceToHost);
  double maxerr = 0, maxref = 0;
  for (int m = 0; m < M; ++m)
    for (int n = 0; n < N; ++n) {
      double ref = 0;
      for (int k = 0; k < K; ++k) ref += static_cast<double>(af[m * K + k]) * bf[n * K + k];
      maxerr = fmax(maxerr, fabs(ref - d[m * N + n]));
      maxref = fmax(maxref, fabs(ref));
    }
  const bool ok = e == cudaSuccess && maxerr < 1e-3 * (1 + maxref);
  printf("WGMMA SELFTEST %s %s: cuda %s, max |D - ref| %.3e (max |ref| %.3e), D[0] %.6f D[64*64-1] %.6f\n",
         sw ? "sw128" : "canonical", ok ? "OK" : "FAIL", cudaGetErrorString(e), maxerr, maxref, d[0], d[M * N - 1]);
  fails += !ok;
  }
  return fails;
}
