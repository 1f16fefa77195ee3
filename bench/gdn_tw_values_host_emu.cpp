// gdn_tw_values_host_emu.cpp: the CPU check of kernels/include/gdn_bwd_tw.cuh's consumer value
// products (session 29, helper m1w29; M1 of td29's token-stage design, work in progress).
//
// Two consumer warpgroups (256 emulated threads) run tw_value_zero, then tw_value_quarter over the
// V / 32 quarter slots of a tile (slots 0 .. 3 of the TwSmem<128, 128> ring, filled here through
// tw_sq_off / tw_uq_off with random io values: S, dS′, U, dO, dR), one commit and wait per quarter
// as the tile will. Their fragments are compared bit for bit with tc16's arithmetic for the same
// inputs: each accumulator starts at 0 and adds the V / 16 k16 steps in value order, each step an
// fp64 sum of the 16 io products onto the fp32 accumulator rounded once (gdn_host_emu.h's emu_mma,
// the mma.sync m16n8k16 that tokens_products_mma runs; dE = −P_E and dL = −P_L are negated after,
// as tc16 does). On the CPU the wgmma and mma.sync emulations share that model, so this checks the
// layouts, descriptors, k-order and fragment mapping, not the hardware's rounding (fsx25 showed
// wgmma's k16 step equal to mma.sync's on the H200; the GPU self-test must repeat this there).
//
//   g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -Ikernels/include -Ibench \
//       -o /tmp/gdn_tw_values bench/gdn_tw_values_host_emu.cpp && /tmp/gdn_tw_values
#include "gdn_host_emu.h"
#include "gdn_wgmma_emu.h"
#include <cstdio>
#include <cstring>
#include <random>
#include <vector>

#include "gdn_bwd.cuh"

namespace {

constexpr int K = 128, V = 128, RING = gdn::TW_RING, NQ = V / gdn::TW_QV;
using L = gdn::TwSmem<K, V, RING>;

template <typename T>
int run(const char* name, unsigned seed) {
  using Io = gdn::Io<T>;
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.f, 1.f);
  auto rnd = [&] { return Io::f_to_bits(dist(rng)); };
  // Row-major io bits: S, dS′ [V][K]; U, dO, dR [64][V].
  std::vector<uint16_t> S(V * K), dS(V * K), U(64 * V), dO(64 * V), dR(64 * V);
  for (auto* t : {&S, &dS}) for (auto& x : *t) x = rnd();
  for (auto* t : {&U, &dO, &dR}) for (auto& x : *t) x = rnd();
  // The quarter slots, filled by thread 0 inside the launch (launch poisons shared memory with
  // 0xFF bytes: NaN wherever the products would read an unfilled byte).
  auto put = [&](size_t off, uint16_t b) { std::memcpy(gdn::smem + off, &b, 2); };
  auto fill = [&] {
  for (int q = 0; q < NQ; ++q) {
    const size_t slot = q * L::quarter;
    for (int v = 0; v < gdn::TW_QV; ++v)
      for (int key = 0; key < K; ++key) {
        put(slot + L::s_off + gdn::tw_sq_off(v, key), S[(32 * q + v) * K + key]);
        put(slot + L::ds_off + gdn::tw_sq_off(v, key), dS[(32 * q + v) * K + key]);
      }
    for (int r = 0; r < 64; ++r)
      for (int v = 0; v < gdn::TW_QV; ++v) {
        put(slot + L::u_off + gdn::tw_uq_off(r, v), U[r * V + 32 * q + v]);
        put(slot + L::do_off + gdn::tw_uq_off(r, v), dO[r * V + 32 * q + v]);
        put(slot + L::dr_off + gdn::tw_uq_off(r, v), dR[r * V + 32 * q + v]);
      }
  }
  };
  // Device side: fragments into [64][K] (dQ⁺, dE, dKᴿ) and [64][64] (dA, dL), fp32.
  std::vector<float> gq(64 * K), ge(64 * K), gk(64 * K), ga(64 * 64), gl(64 * 64);
  launch({1, 1, 1}, 256, [&] {
    const int tid = static_cast<int>(t_tid), w = tid / 128, lt = tid % 128, warp = lt / 32, lane = lt % 32;
    if (tid == 0) fill();
    __syncthreads();
    gdn::TwValueAcc a;
    gdn::tw_value_zero(a);
    for (int q = 0; q < NQ; ++q) {
      dnnp::wgmma_fence();
      gdn::tw_value_quarter<T, K, V, RING>(a, dnnp::smem_u32(gdn::smem + q * L::quarter), w);
      dnnp::wgmma_commit();
      dnnp::wgmma_wait<0>();
    }
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
    dnnp::emu_wg_thread_end();
  });
  // tc16's arithmetic: per accumulator, V / 16 k16 steps in order, fp64 sum onto the fp32 value.
  auto f = [](uint16_t b) { return static_cast<double>(Io::bits_to_f(b)); };
  auto k16 = [&](auto A, auto B) {
    float acc = 0.f;
    for (int kk = 0; kk < V / 16; ++kk) {
      double s = acc;
      for (int k = 16 * kk; k < 16 * kk + 16; ++k) s += A(k) * B(k);
      acc = static_cast<float>(s);
    }
    return acc;
  };
  int bad = 0;
  auto cmp = [&](const char* what, float got, float ref, int i, int j) {
    uint32_t x, y;
    std::memcpy(&x, &got, 4);
    std::memcpy(&y, &ref, 4);
    if (x != y && bad++ < 8) fprintf(stderr, "  %s %s [%d][%d]: %.9g vs tc16 %.9g\n", name, what, i, j, got, ref);
  };
  for (int i = 0; i < 64; ++i) {
    for (int n = 0; n < K; ++n) {
      cmp("dQ+", gq[i * K + n], k16([&](int v) { return f(dO[i * V + v]); }, [&](int v) { return f(S[v * K + n]); }), i, n);
      cmp("dE", ge[i * K + n], -k16([&](int v) { return f(dR[i * V + v]); }, [&](int v) { return f(S[v * K + n]); }), i, n);
      cmp("dKR", gk[i * K + n], k16([&](int v) { return f(U[i * V + v]); }, [&](int v) { return f(dS[v * K + n]); }), i, n);
    }
    for (int j = 0; j < 64; ++j) {
      cmp("dA", ga[i * 64 + j], k16([&](int v) { return f(dO[i * V + v]); }, [&](int v) { return f(U[j * V + v]); }), i, j);
      cmp("dL", gl[i * 64 + j], -k16([&](int v) { return f(dR[i * V + v]); }, [&](int v) { return f(U[j * V + v]); }), i, j);
    }
  }
  const bool clean = g_wg_unwaited.load() == 0;
  printf("%s tw value products %s (K = V = 128, %d quarters, 2 consumer warpgroups): %d of %d values differ from tc16's arithmetic%s\n",
         bad || !clean ? "FAIL" : "PASS", name, NQ, bad, 3 * 64 * K + 2 * 64 * 64, clean ? "" : " (unwaited wgmma)");
  return bad || !clean;
}

}  // namespace

int main() {
  int fails = run<gdn::gdn_bf16>("bf16", 29) + run<gdn::gdn_f16>("f16", 2029);
  printf("%s gdn_tw_values host emulation: %d failure(s)\n", fails ? "FAIL" : "PASS", fails);
  return fails;
}
