// chain_bench_common.cuh: device helpers the chain benches share (bench/gdn_chain_c_bench.cu,
// bench/gdn_bwd1p_chain_bench.cu). Timing benches only; nothing here is in a bundled kernel.
#pragma once

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

// Issue 8's three uniform benchmark shapes: N sequences of T tokens on H heads (K = V = 128).
struct Shape {
  const char* name;
  int n, t, h;
};
constexpr Shape kIssue8Shapes[] = {{"(4,8192,16)", 4, 8192, 16}, {"(1,32768,16)", 1, 32768, 16}, {"(16,2048,32)", 16, 2048, 32}};

}  // namespace chainbench
