// gdn_tw_values_test.h (session 29, helper m1w29; M1 of td29's token-stage design, WIP): the check
// of kernels/include/gdn_bwd_tw.cuh's consumer value products, written once and compiled two
// ways, as m029's dnnp_async_selftest.h: by g++ on the CPU emulation
// (bench/gdn_tw_values_host_emu.cpp) and by nvcc for the H200 (bench/gdn_tw_values_selftest.cu,
// not yet run on the device). The including file provides, before this header: gdn_bwd.cuh (with
// dnnp_wgmma.cuh's forms or their emulation), __syncthreads, threadIdx and the CUDA qualifiers.
//
// tw_values_body (256 threads = the two consumer warpgroups): every thread helps fill the V / 32
// quarter slots of a TwSmem<128, 128> ring (slots 0 .. 3) through tw_sq_off / tw_uq_off from
// row-major io bits (S, dS′ [V][K]; U, dO, dR [64][V]); then each warpgroup runs tw_value_zero and
// tw_value_quarter over the quarters in order (one commit / wait per quarter, as the tile will)
// and writes its fragments: out = dQ⁺ [64][K], dE [64][K], dKᴿ [64][K], dA [64][64], dL [64][64].
// tw_values_check compares them bit for bit with tc16's arithmetic for the same inputs: each
// accumulator starts at 0 and adds the V / 16 k16 steps in value order, each step an fp64 sum of
// the 16 io products onto the fp32 value rounded once (gdn_host_emu.h's emu_mma, the mma.sync
// m16n8k16 of tokens_products_mma; dE and dL negated after the sum, as tc16 does: exact).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

namespace m1w29 {

constexpr int K = 128, V = 128, NQ = V / gdn::TW_QV, NT = 256;
using L = gdn::TwSmem<K, V>;
constexpr int OUT = 3 * 64 * K + 2 * 64 * 64;  // floats

template <typename T>
__device__ inline void tw_values_body(unsigned char* smem, const uint16_t* S, const uint16_t* dS, const uint16_t* U,
                                      const uint16_t* dO, const uint16_t* dR, float* out) {
  const int tid = static_cast<int>(threadIdx.x), w = tid / 128, lt = tid % 128, warp = lt / 32, lane = lt % 32;
  auto put = [&](uint32_t off, uint16_t b) { *reinterpret_cast<uint16_t*>(smem + off) = b; };
  for (int i = tid; i < V * K; i += NT) {
    const int vv = i / K, key = i % K, q = vv / 32, v = vv % 32;
    put(q * L::quarter + L::s_off + gdn::tw_sq_off(v, key), S[i]);
    put(q * L::quarter + L::ds_off + gdn::tw_sq_off(v, key), dS[i]);
  }
  for (int i = tid; i < 64 * V; i += NT) {
    const int r = i / V, vv = i % V, q = vv / 32, v = vv % 32;
    put(q * L::quarter + L::u_off + gdn::tw_uq_off(r, v), U[i]);
    put(q * L::quarter + L::do_off + gdn::tw_uq_off(r, v), dO[i]);
    put(q * L::quarter + L::dr_off + gdn::tw_uq_off(r, v), dR[i]);
  }
  dnnp::fence_proxy_async_shared();  // generic-proxy stores read by wgmma (async proxy)
  __syncthreads();
  gdn::TwValueAcc a;
  gdn::tw_value_zero(a);
  for (int q = 0; q < NQ; ++q) {
    dnnp::wgmma_fence();
    gdn::tw_value_quarter<T, K, V, gdn::TW_RING>(a, dnnp::smem_u32(smem + q * L::quarter), w);
    dnnp::wgmma_commit();
    dnnp::wgmma_wait<0>();
    gdn::tw_value_fence(a);
  }
  float* gq = out;
  float* ge = gq + 64 * K;
  float* gk = ge + 64 * K;
  float* ga = gk + 64 * K;
  float* gl = ga + 64 * 64;
  const int r = 16 * warp + (lane >> 2), c = 2 * (lane & 3);
  for (int j = 0; j < 8; ++j)
    for (int e = 0; e < 4; ++e) {
      const int row = r + 8 * (e >> 1), col = 64 * w + 8 * j + c + (e & 1);
      gq[row * K + col] = a.dqp[4 * j + e];
      ge[row * K + col] = -a.pe[4 * j + e];
      gk[row * K + col] = a.dkr[4 * j + e];
    }
  for (int j = 0; j < 4; ++j)
    for (int e = 0; e < 4; ++e) {
      const int row = r + 8 * (e >> 1), col = 32 * w + 8 * j + c + (e & 1);
      ga[row * 64 + col] = a.da[4 * j + e];
      gl[row * 64 + col] = -a.pl[4 * j + e];
    }
}

// Host side: io bits and their values without the device's Io<T> (normal numbers only).
inline float tw_bits_to_f(uint16_t b, bool bf16) {
  if (bf16) {
    const uint32_t u = static_cast<uint32_t>(b) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  const int s = b >> 15, e = (b >> 10) & 31, m = b & 1023;
  const float x = std::ldexp(1.f + m / 1024.f, e - 15);
  return s ? -x : x;
}
// Random io bits of magnitude in [1/32, 2): bf16 from a float's top half, f16 built directly.
struct TwInputs {
  std::vector<uint16_t> S, dS, U, dO, dR;
  TwInputs(unsigned seed, bool bf16) : S(V * K), dS(V * K), U(64 * V), dO(64 * V), dR(64 * V) {
    std::mt19937 rng(seed);
    auto rnd = [&]() -> uint16_t {
      const uint32_t s = rng() & 1u, e = 10 + rng() % 5, m = rng();
      if (bf16) return static_cast<uint16_t>((s << 15) | ((e - 15 + 127) << 7) | (m & 127u));
      return static_cast<uint16_t>((s << 15) | (e << 10) | (m & 1023u));
    };
    for (auto* t : {&S, &dS, &U, &dO, &dR})
      for (auto& x : *t) x = rnd();
  }
};

// The number of values of `out` (tw_values_body's) that differ from tc16's arithmetic.
inline int tw_values_check(const char* name, bool bf16, const TwInputs& in, const float* out) {
  auto f = [&](uint16_t b) { return static_cast<double>(tw_bits_to_f(b, bf16)); };
  auto k16 = [&](auto A, auto B) {
    float acc = 0.f;
    for (int kk = 0; kk < V / 16; ++kk) {
      double s = acc;
      for (int k = 16 * kk; k < 16 * kk + 16; ++k) s += A(k) * B(k);
      acc = static_cast<float>(s);
    }
    return acc;
  };
  const float* gq = out;
  const float* ge = gq + 64 * K;
  const float* gk = ge + 64 * K;
  const float* ga = gk + 64 * K;
  const float* gl = ga + 64 * 64;
  int bad = 0;
  auto cmp = [&](const char* what, float got, float ref, int i, int j) {
    uint32_t x, y;
    std::memcpy(&x, &got, 4);
    std::memcpy(&y, &ref, 4);
    if (x != y && bad++ < 8) fprintf(stderr, "  %s %s [%d][%d]: %.9g vs tc16 %.9g\n", name, what, i, j, got, ref);
  };
  for (int i = 0; i < 64; ++i) {
    for (int n = 0; n < K; ++n) {
      cmp("dQ+", gq[i * K + n], k16([&](int v) { return f(in.dO[i * V + v]); }, [&](int v) { return f(in.S[v * K + n]); }), i, n);
      cmp("dE", ge[i * K + n], -k16([&](int v) { return f(in.dR[i * V + v]); }, [&](int v) { return f(in.S[v * K + n]); }), i, n);
      cmp("dKR", gk[i * K + n], k16([&](int v) { return f(in.U[i * V + v]); }, [&](int v) { return f(in.dS[v * K + n]); }), i, n);
    }
    for (int j = 0; j < 64; ++j) {
      cmp("dA", ga[i * 64 + j], k16([&](int v) { return f(in.dO[i * V + v]); }, [&](int v) { return f(in.U[j * V + v]); }), i, j);
      cmp("dL", gl[i * 64 + j], -k16([&](int v) { return f(in.dR[i * V + v]); }, [&](int v) { return f(in.U[j * V + v]); }), i, j);
    }
  }
  printf("%s tw value products %s (K = V = 128, %d quarters, 2 consumer warpgroups): %d of %d values differ from tc16's arithmetic\n",
         bad ? "FAIL" : "PASS", name, NQ, bad, OUT);
  return bad;
}

}  // namespace m1w29
