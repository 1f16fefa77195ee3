// chain_bench_common.cuh: device helpers the chain benches share (bench/gdn_chain_c_bench.cu,
// bench/gdn_bwd1p_chain_bench.cu). Timing benches only; nothing here is in a bundled kernel.
#pragma once

#include "gdn_fwd.cuh"  // FwdParams, Io, DT_F32

namespace chainbench {

// A fixed pseudo-random value in [0, 1) from index i (the benches' fixed stages: the same values on
// every run, so two runs issue the same work).
__device__ __forceinline__ float hash01(unsigned i) {
  i ^= i >> 16;
  i *= 0x7feb352dU;
  i ^= i >> 15;
  i *= 0x846ca68bU;
  i ^= i >> 16;
  return (i & 0xffffu) * (1.f / 65536.f);
}

// A producer warp's fixed q, k rows for the factor build: n elements each (lane-strided), salted
// by `salt` (the benches give each warp its own rows).
template <typename T>
__device__ __forceinline__ void fill_build_rows(T* q, T* k, int n, unsigned salt, int lane) {
  for (int i = lane; i < n; i += 32) {
    q[i] = gdn::Io<T>::from_f(0.1f * (hash01(i + salt) - 0.5f));
    k[i] = gdn::Io<T>::from_f(0.1f * (hash01(i + 104729u + salt) - 0.5f));
  }
}

// The factor build's parameters in the benches: fp32 gates and β, the scale 0.088, no l2 norm.
__device__ __forceinline__ gdn::FwdParams build_params() {
  gdn::FwdParams p{};
  p.g_dtype = gdn::DT_F32;
  p.beta_dtype = gdn::DT_F32;
  p.scale = 0.088f;
  p.flags = 0;
  return p;
}

// Chunk c's log decay g (slow, −0.01..−0.02) and β for this lane's token.
__device__ __forceinline__ void chunk_gates(int c, int lane, float& g, float& be) {
  g = -0.01f * (1.f + hash01(c * 32 + lane));
  be = hash01(c * 64 + lane);
}

// Issue 8's three uniform benchmark shapes: N sequences of T tokens on H heads (K = V = 128).
struct Shape {
  const char* name;
  int n, t, h;
};
constexpr Shape kIssue8Shapes[] = {{"(4,8192,16)", 4, 8192, 16}, {"(1,32768,16)", 1, 32768, 16}, {"(16,2048,32)", 16, 2048, 32}};

}  // namespace chainbench
