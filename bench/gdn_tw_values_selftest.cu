// gdn_tw_values_selftest.cu (session 29, helper m1w29; M1 of td29's design, WIP): the H200 driver
// of bench/gdn_tw_values_test.h (the tw consumers' value products vs tc16's arithmetic, bitwise
// expected). NOT RUN YET (no device budget in session 29): built here only (static cudart; on
// this machine add -L$NVCC_VENV/lib/python3.11/site-packages/nvidia/cu13/lib), and it runs from
// bench/gdn_device_m1w29.sh (not yet called).
//
//   nvcc -gencode=arch=compute_90a,code=sm_90a -O3 -std=c++17 -Ikernels/include -Ibench \
//        -o /tmp/gdn_tw_values_selftest bench/gdn_tw_values_selftest.cu && /tmp/gdn_tw_values_selftest
// Exit status: the number of failures (a CUDA error counts as one).
#include <cstdio>
#include <type_traits>
#include <vector>

#include "gdn_bwd.cuh"
#include "gdn_tw_values_test.h"

template <typename T>
__global__ void __launch_bounds__(m1w29::NT) tw_values_kernel(const uint16_t* S, const uint16_t* dS, const uint16_t* U,
                                                              const uint16_t* dO, const uint16_t* dR, float* out) {
  extern __shared__ __align__(1024) unsigned char sm[];
  // The swizzle atoms need 1024-byte alignment in the shared window: pad up to it (the launch asks
  // for TwSmem::bytes + 1 KB).
  const uint32_t pad = (1024u - (dnnp::smem_u32(sm) & 1023u)) & 1023u;
  m1w29::tw_values_body<T>(sm + pad, S, dS, U, dO, dR, out);
}

template <typename T>
static int run(const char* name, unsigned seed) {
  const bool bf16 = std::is_same<T, gdn::gdn_bf16>::value;
  const m1w29::TwInputs in(seed, bf16);
  const std::vector<uint16_t>* src[5] = {&in.S, &in.dS, &in.U, &in.dO, &in.dR};
  uint16_t* d[5];
  float* dout;
  for (int i = 0; i < 5; ++i) {
    cudaMalloc(&d[i], src[i]->size() * 2);
    cudaMemcpy(d[i], src[i]->data(), src[i]->size() * 2, cudaMemcpyHostToDevice);
  }
  cudaMalloc(&dout, m1w29::OUT * 4);
  cudaMemset(dout, 0xFF, m1w29::OUT * 4);
  const int smem = static_cast<int>(m1w29::L::bytes) + 1024;
  cudaFuncSetAttribute(tw_values_kernel<T>, cudaFuncAttributeMaxDynamicSharedMemorySize, smem);
  tw_values_kernel<T><<<1, m1w29::NT, smem>>>(d[0], d[1], d[2], d[3], d[4], dout);
  const cudaError_t e = cudaDeviceSynchronize();
  std::vector<float> out(m1w29::OUT);
  cudaMemcpy(out.data(), dout, m1w29::OUT * 4, cudaMemcpyDeviceToHost);
  for (int i = 0; i < 5; ++i) cudaFree(d[i]);
  cudaFree(dout);
  if (e != cudaSuccess) {
    printf("FAIL %s: %s\n", name, cudaGetErrorString(e));
    return 1;
  }
  return m1w29::tw_values_check(name, bf16, in, out.data()) != 0;
}

int main() {
  const int fails = run<gdn::gdn_bf16>("bf16", 29) + run<gdn::gdn_f16>("f16", 2029);
  printf("%s gdn_tw_values selftest (H200): %d failure(s)\n", fails ? "FAIL" : "PASS", fails);
  return fails;
}
