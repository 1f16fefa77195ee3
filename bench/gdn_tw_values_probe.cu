// gdn_tw_values_probe.cu (session 29, m1w29): a compile probe of gdn_bwd_tw.cuh's value products
// under nvcc (register count, wgmma serialization): nvcc -gencode=arch=compute_90a,code=sm_90a
// --cubin -O3 -std=c++17 -Ikernels/include -Xptxas -v -o /tmp/p.cubin bench/gdn_tw_values_probe.cu
// → "Used 154 registers" (nvcc 13.0), no C7512 (serialized) / C7517 / C7519 (injected wait / arrive). Not a test: it never runs.
#include "gdn_bwd.cuh"
extern "C" __global__ void __launch_bounds__(256) tw_values_probe(float* out) {
  extern __shared__ __align__(1024) unsigned char smem[];
  const int w = threadIdx.x / 128;
  gdn::TwValueAcc a;
  gdn::tw_value_zero(a);
  for (int q = 0; q < 4; ++q) {
    dnnp::wgmma_fence();
    gdn::tw_value_quarter<gdn::gdn_bf16, 128, 128, 5>(a, dnnp::smem_u32(smem + q * gdn::TwSmem<128, 128>::quarter), w);
    dnnp::wgmma_commit();
    dnnp::wgmma_wait<0>();
    gdn::tw_value_fence(a);
  }
  float s = 0.f;
  for (int i = 0; i < 32; ++i) s += a.dqp[i] + a.pe[i] + a.dkr[i];
  for (int i = 0; i < 16; ++i) s += a.da[i] + a.pl[i];
  out[threadIdx.x] = s;
}
