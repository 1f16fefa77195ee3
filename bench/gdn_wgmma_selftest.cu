// Session 23 (helper wg23): a standalone check of kernels/include/dnnp_wgmma.cuh as the w4g scan
// uses it (gdn_fwd_slim.cuh, slim_chunk_wg): D (64 x 64) = A (64 x 128, bf16, from registers in
// mma.sync's A layout per warp) · Bᵀ (B: 64 x 128, bf16, staged in the canonical no-swizzle
// K-major layout, LBO 128 B, SBO 2048 B, 8 k16 steps of 256 B; then, as w4gs, in the 128-byte
// swizzle: 64-key atoms of 8 KB, SBO 1024 B, k16 steps at +32 B), against a double reference.
// Session 24 (helper wgx24), the w4gx products: (3) the state update's form, D (64 x 128) = 0.5 D0 +
// U (64 x 64, registers) · Kt (64 tokens x 128 keys) with Kt staged [token][key] in the scan's
// slim_wg_elem 128-byte swizzle (keys contiguous: MN-major B, tnspB = 1): m64n128k16 with LBO
// 8,192 B (the second 64-key atom), SBO 1,024 B, token step kk at +2,048 B; and as 2 x m64n64k16
// (atom 1 at +8,192 B); (4) the Uᵀ = Z Tᵀ form, D (64 x 64) = Z (64 x 64) · Tᵀ with T (64 x 64) one
// K-major swizzle atom, k step kk at +32 B, full N = 64.
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
    dnnp::wgmma_m64n64k16_rs_bf16_t<0>(d, a[kk], SW128 ? dnnp::wgmma_desc(base + 64 * N * 2 * (kk >> 2) + 32 * (kk & 3), 16, 1024, 1)
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


// (3) / (4): see the header. mode 0: n128 tnspB; 1: 2 x n64 tnspB; 2: T tile K-major.
__global__ void selftest_wgx(const __nv_bfloat16* U, const __nv_bfloat16* Kt, const float* D0, float* D, int mode) {
  __shared__ __align__(1024) __nv_bfloat16 bs[64 * 128];
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int ncol = mode == 2 ? 64 : 128;
  for (int i = tid; i < 64 * ncol; i += 128) {
    const int t = i / ncol, kd = i % ncol;  // row t (token / T row i), column kd (key / T column j)
    bs[(kd >> 6) * 64 * 64 + t * 64 + ((((kd >> 3) & 7) ^ (t & 7)) << 3) + (kd & 7)] = Kt[i];
  }
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  __syncthreads();
  const int r = 16 * warp + (lane >> 2), c = 2 * (lane & 3);
  uint32_t a[4][4];
  for (int kk = 0; kk < 4; ++kk) {
    a[kk][0] = pack2(&U[r * 64 + 16 * kk + c]);
    a[kk][1] = pack2(&U[(r + 8) * 64 + 16 * kk + c]);
    a[kk][2] = pack2(&U[r * 64 + 16 * kk + c + 8]);
    a[kk][3] = pack2(&U[(r + 8) * 64 + 16 * kk + c + 8]);
  }
  float d[64];
  for (int j = 0; j < 16; ++j) {
    d[4 * j] = 0.5f * D0[r * 128 + 8 * j + c];
    d[4 * j + 1] = 0.5f * D0[r * 128 + 8 * j + c + 1];
    d[4 * j + 2] = 0.5f * D0[(r + 8) * 128 + 8 * j + c];
    d[4 * j + 3] = 0.5f * D0[(r + 8) * 128 + 8 * j + c + 1];
  }
  if (mode == 2)
    for (int i = 0; i < 64; ++i) d[i] = 0.f;
  for (int i = 0; i < 64; ++i) dnnp::wgmma_fence_operand(d[i]);
  const uint32_t base = static_cast<uint32_t>(__cvta_generic_to_shared(bs));
  dnnp::wgmma_fence();
  if (mode == 0) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) dnnp::wgmma_m64n128k16_rs_bf16_t<1>(d, a[kk], dnnp::wgmma_desc(base + 2048 * kk, 8192, 1024, 1));
  } else if (mode == 1) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      dnnp::wgmma_m64n64k16_rs_bf16_t<1>(d, a[kk], dnnp::wgmma_desc(base + 2048 * kk, 8192, 1024, 1));
      dnnp::wgmma_m64n64k16_rs_bf16_t<1>(d + 32, a[kk], dnnp::wgmma_desc(base + 8192 + 2048 * kk, 8192, 1024, 1));
    }
  } else {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) dnnp::wgmma_m64n64k16_rs_bf16_t<0>(d, a[kk], dnnp::wgmma_desc(base + 32 * kk, 16, 1024, 1));
  }
  dnnp::wgmma_commit();
  dnnp::wgmma_wait<0>();
  for (int i = 0; i < 64; ++i) dnnp::wgmma_fence_operand(d[i]);
  for (int j = 0; j < ncol / 8; ++j) {
    const int jj = mode == 1 ? (j & 7) + 8 * (j >> 3) : j;  // 2 x n64: tiles 0..7 then 8..15 (same order)
    D[r * ncol + 8 * jj + c] = d[4 * j];
    D[r * ncol + 8 * jj + c + 1] = d[4 * j + 1];
    D[(r + 8) * ncol + 8 * jj + c] = d[4 * j + 2];
    D[(r + 8) * ncol + 8 * jj + c + 1] = d[4 * j + 3];
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
  // (3), (4): U (64 x 64), Kt (64 x 128; mode 2: T = its first 64 columns, lower triangular), D0.
  {
    std::vector<__nv_bfloat16> u(64 * 64), kt(64 * 128);
    std::vector<float> uf(64 * 64), kf(64 * 128), d0(64 * 128), dw(64 * 128);
    for (int i = 0; i < 64 * 64; ++i) { u[i] = __float2bfloat16(rnd()); uf[i] = __bfloat162float(u[i]); }
    for (int i = 0; i < 64 * 128; ++i) { kt[i] = __float2bfloat16(rnd()); kf[i] = __bfloat162float(kt[i]); d0[i] = rnd(); }
    __nv_bfloat16 *du, *dk;
    float *dd0, *ddw;
    cudaMalloc(&du, 64 * 64 * 2);
    cudaMalloc(&dk, 64 * 128 * 2);
    cudaMalloc(&dd0, 64 * 128 * 4);
    cudaMalloc(&ddw, 64 * 128 * 4);
    cudaMemcpy(du, u.data(), 64 * 64 * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(dd0, d0.data(), 64 * 128 * 4, cudaMemcpyHostToDevice);
    for (int mode = 0; mode < 3; ++mode) {
      std::vector<__nv_bfloat16> kin(kt);
      std::vector<float> kfm(kf);
      if (mode == 2)  // T: 64 x 64 lower triangular (unit diagonal) as rows of 64, zeros above
        for (int i = 0; i < 64; ++i)
          for (int j = 0; j < 64; ++j) {
            const float v = j < i ? kf[i * 128 + j] : (j == i ? 1.f : 0.f);
            kin[i * 64 + j] = __float2bfloat16(v);
            kfm[i * 64 + j] = __bfloat162float(kin[i * 64 + j]);
          }
      cudaMemcpy(dk, kin.data(), 64 * 128 * 2, cudaMemcpyHostToDevice);
      selftest_wgx<<<1, 128>>>(du, dk, dd0, ddw, mode);
      const cudaError_t e = cudaDeviceSynchronize();
      cudaMemcpy(dw.data(), ddw, 64 * 128 * 4, cudaMemcpyDeviceToHost);
      const int ncol = mode == 2 ? 64 : 128;
      double maxerr = 0, maxref = 0;
      for (int m = 0; m < 64; ++m)
        for (int n = 0; n < ncol; ++n) {
          double ref = mode == 2 ? 0.0 : 0.5 * d0[m * 128 + n];
          for (int k = 0; k < 64; ++k)
            ref += static_cast<double>(uf[m * 64 + k]) * (mode == 2 ? kfm[n * 64 + k] : kfm[k * 128 + n]);
          maxerr = fmax(maxerr, fabs(ref - dw[m * ncol + n]));
          maxref = fmax(maxref, fabs(ref));
        }
      const bool ok = e == cudaSuccess && maxerr < 1e-3 * (1 + maxref);
      const char* name = mode == 0 ? "tnspB m64n128 (state update)" : mode == 1 ? "tnspB 2 x m64n64" : "T tile K-major n64 (U = Z T^T)";
      printf("WGMMA SELFTEST %s %s: cuda %s, max |D - ref| %.3e (max |ref| %.3e), D[0] %.6f D[last] %.6f\n", name,
             ok ? "OK" : "FAIL", cudaGetErrorString(e), maxerr, maxref, dw[0], dw[64 * ncol - 1]);
      fails += !ok;
    }
  }
  return fails;
}
