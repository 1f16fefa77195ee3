// Runs the GDN forward's per-chunk factor kernels on the CPU: the default prep
// (gdn::fwd_prep_body, gdn_fwd.cuh, 4 warps; device-validated) and prep3 (gdn::fwd_prep3_body,
// gdn_fwd_prep3.cuh, 8 warps), forward (KEEP = false) and the backward's variant (KEEP = true),
// one std::thread per CUDA thread with real barriers for __syncthreads and per-warp exchanges for
// shuffles, mma.sync / ldmatrix.trans / cp.async emulated warp-collectively as in
// bench/gdn_bwd_host_emu.cpp (mma: fp64 sums of the io-dtype products onto the fp32
// accumulator; cp.async deferred to the wait that covers it; shared memory NaN-filled per block).
//
// Checks, per case (shapes with partial chunks, empty sequences, head groups, bf16 and fp16,
// K = V = 64 and 128, gate / beta transforms):
//  1. prep3's workspace (W, Q⁺, Kᴿ, Ũᵀ, A, Γ_last; with KEEP also T, E, Γ, β) is bitwise equal to
//     the default prep's, over every valid chunk (the workspace is NaN-filled first, so an
//     unwritten element fails too), and to a second prep3 run (a missing barrier shows up as a
//     difference with real threads); "bitwise diffs" counts both;
//  2. both against an fp64 computation of W = T E, Ũ = T Y and A from the same rounded inputs
//     (relative rms, reported; must stay below 2e-2).
//
// Build and run (CPU machine), from the repository root:
//   g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -Ikernels/include bench/gdn_prep_host_emu.cpp -o /tmp/gdn_prep_host_emu
//   /tmp/gdn_prep_host_emu
#include <barrier>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <algorithm>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

struct uint4 { unsigned x, y, z, w; };
struct float2 { float x, y; };
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
inline float2 make_float2(float a, float b) { return {a, b}; }
struct U3 { unsigned x, y, z; };
thread_local U3 threadIdx, blockIdx;
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(...)
#define __align__(x)
#define __shared__
inline float __expf(float x) { return expf(x); }
inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
inline float rsqrtf(float x) { return 1.f / sqrtf(x); }
void __syncthreads();
inline void __syncwarp() {}
float __shfl_xor_sync(unsigned, float v, int o);
float __shfl_up_sync(unsigned, float v, int o);
inline unsigned __cvta_generic_to_shared(const void*) { return 0; }
#define GDN_HOST_EMU 1
#include "gdn_fwd_prep3.cuh"

namespace gdn {
alignas(16) unsigned char smem[232 * 1024];  // the block's dynamic shared memory
}

// ---- block emulation ----
static std::unique_ptr<std::barrier<>> g_block;
static std::vector<std::unique_ptr<std::barrier<>>> g_warp;
static float g_xchg[32][32];
thread_local unsigned t_tid;
void __syncthreads() { g_block->arrive_and_wait(); }
static float exchange(float v, int src_of_lane_xor, bool up, int o) {
  const unsigned w = t_tid / 32, l = t_tid % 32;
  g_xchg[w][l] = v;
  g_warp[w]->arrive_and_wait();
  float r;
  if (up) r = (static_cast<int>(l) >= o) ? g_xchg[w][l - o] : v;
  else r = g_xchg[w][l ^ src_of_lane_xor];
  g_warp[w]->arrive_and_wait();
  return r;
}
float __shfl_xor_sync(unsigned, float v, int o) { return exchange(v, o, false, 0); }
float __shfl_up_sync(unsigned, float v, int o) { return exchange(v, 0, true, o); }

// ---- tensor-core and async-copy primitives (warp-collective emulation) ----
static gdn::u32 g_ma[32][32][4], g_mb[32][32][2];
static const void* g_mp[32][32];
namespace gdn {
template <typename T>
void emu_mma(float* c, const u32* a, const u32* b) {
  const unsigned w = t_tid / 32, l = t_tid % 32;
  for (int i = 0; i < 4; ++i) g_ma[w][l][i] = a[i];
  g_mb[w][l][0] = b[0];
  g_mb[w][l][1] = b[1];
  g_warp[w]->arrive_and_wait();
  auto half = [](u32 x, int k) { return static_cast<unsigned short>((k & 1) ? x >> 16 : x & 0xffffu); };
  auto A = [&](int row, int k) {
    return static_cast<double>(Io<T>::bits_to_f(half(g_ma[w][(row & 7) * 4 + (k & 7) / 2][(row >> 3) + 2 * (k >> 3)], k)));
  };
  auto B = [&](int k, int n) { return static_cast<double>(Io<T>::bits_to_f(half(g_mb[w][n * 4 + (k & 7) / 2][k >> 3], k))); };
  const int g = l >> 2, t = l & 3;
  float out[4];
  for (int e = 0; e < 4; ++e) {
    const int row = g + 8 * (e >> 1), col = 2 * t + (e & 1);
    double s = c[e];
    for (int k = 0; k < 16; ++k) s += A(row, k) * B(k, col);
    out[e] = static_cast<float>(s);
  }
  g_warp[w]->arrive_and_wait();
  for (int e = 0; e < 4; ++e) c[e] = out[e];
}
template void emu_mma<gdn_bf16>(float*, const u32*, const u32*);
template void emu_mma<gdn_f16>(float*, const u32*, const u32*);
void emu_ldsm_x4_t(u32* r, const void* p) {
  const unsigned w = t_tid / 32, l = t_tid % 32;
  g_mp[w][l] = p;
  g_warp[w]->arrive_and_wait();
  for (int m = 0; m < 4; ++m) {
    const auto* r0 = static_cast<const unsigned short*>(g_mp[w][8 * m + 2 * (l & 3)]);
    const auto* r1 = static_cast<const unsigned short*>(g_mp[w][8 * m + 2 * (l & 3) + 1]);
    r[m] = static_cast<u32>(r0[l >> 2]) | (static_cast<u32>(r1[l >> 2]) << 16);
  }
  g_warp[w]->arrive_and_wait();
}
struct PendingCopy {
  void* dst;
  const void* src;
};
thread_local std::vector<PendingCopy> t_open;
thread_local std::vector<std::vector<PendingCopy>> t_groups;
void emu_cp_async16(void* dst, const void* src) { t_open.push_back({dst, src}); }
void emu_cp_async_commit() {
  t_groups.push_back(std::move(t_open));
  t_open.clear();
}
void emu_cp_async_wait(int n) {
  while (static_cast<int>(t_groups.size()) > n) {
    for (auto& x : t_groups.front()) memcpy(x.dst, x.src, 16);
    t_groups.erase(t_groups.begin());
  }
}
}  // namespace gdn
static int g_unwaited = 0;

static void launch(U3 grid, unsigned threads, const std::function<void()>& body) {
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x = 0; x < grid.x; ++x) {
        memset(gdn::smem, 0xFF, sizeof(gdn::smem));
        g_block = std::make_unique<std::barrier<>>(threads);
        g_warp.clear();
        for (unsigned w = 0; w < (threads + 31) / 32; ++w) g_warp.push_back(std::make_unique<std::barrier<>>(32));
        std::vector<std::thread> ts;
        for (unsigned t = 0; t < threads; ++t)
          ts.emplace_back([&, t, x, y, z] {
            threadIdx = {t, 0, 0};
            blockIdx = {x, y, z};
            t_tid = t;
            body();
            if (!gdn::t_open.empty() || !gdn::t_groups.empty()) __atomic_add_fetch(&g_unwaited, 1, __ATOMIC_RELAXED);
            gdn::t_open.clear();
            gdn::t_groups.clear();
            g_block->arrive_and_drop();
            g_warp[t / 32]->arrive_and_drop();
          });
        for (auto& th : ts) th.join();
      }
}

// ---- problem ----
static unsigned long long rng_state = 12345;
static double uni(double lo, double hi) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return lo + (hi - lo) * ((rng_state >> 11) * (1.0 / 9007199254740992.0));
}
template <typename T>
static unsigned short enc(double x) { return gdn::Io<T>::f_to_bits(static_cast<float>(x)); }
template <typename T>
static double dec(unsigned short b) { return gdn::Io<T>::bits_to_f(b); }

struct Ws {  // one workspace (and the backward's KEEP regions)
  std::vector<unsigned short> w, q, kr, ut, a, t, e;
  std::vector<float> gl, gam, bet;
  Ws(size_t chunks, int HO, int K, int V)
      : w(chunks * HO * 64 * K, 0xFFFF), q(w.size(), 0xFFFF), kr(w.size(), 0xFFFF), ut(chunks * HO * V * 64, 0xFFFF),
        a(chunks * HO * 64 * 64, 0xFFFF), t(a.size(), 0xFFFF), e(w.size(), 0xFFFF), gl(chunks * HO, NAN),
        gam(chunks * HO * 64, NAN), bet(gam.size(), NAN) {}
};

template <typename IOT, int K, bool KEEP>
static void run_prep(bool v3, gdn::FwdParams p, Ws& ws, int chunks, int HO) {
  p.ws_w = ws.w.data();
  p.ws_q = ws.q.data();
  p.ws_kr = ws.kr.data();
  p.ws_ut = ws.ut.data();
  p.ws_a = ws.a.data();
  p.ws_gl = ws.gl.data();
  gdn::PrepKeep keep{ws.t.data(), ws.e.data(), ws.gam.data(), ws.bet.data()};
  const U3 grid{static_cast<unsigned>(p.max_chunks), static_cast<unsigned>(HO), 1};
  (void)chunks;
  if (v3) launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_prep3_body<IOT, K, K, KEEP>(p, keep); });
  else launch(grid, gdn::PREP_THREADS, [&] { gdn::fwd_prep_body<IOT, K, K, KEEP>(p, keep); });
}

template <typename T>
static size_t count_diff(const std::vector<T>& a, const std::vector<T>& b, size_t n) {
  size_t d = 0;
  for (size_t i = 0; i < n; ++i) d += memcmp(&a[i], &b[i], sizeof(T)) != 0;
  return d;
}

template <typename IOT, int K, bool KEEP>
static int run_case(const char* name, int H, int HV, int flags, int g_dt, int beta_dt, std::vector<int> lens) {
  constexpr int V = K, C = 64;
  const int HK = H, HO = std::max(H, HV), N = static_cast<int>(lens.size());
  std::vector<int> cu{0}, offs{0};
  for (int l : lens) {
    cu.push_back(cu.back() + l);
    offs.push_back(offs.back() + (l + C - 1) / C);
  }
  const int T = cu.back(), chunks = offs.back(), max_chunks = T / C + N;
  const bool l2 = flags & gdn::FLAG_L2NORM, safe = flags & gdn::FLAG_SAFE_GATE, bsig = flags & gdn::FLAG_BETA_SIGMOID;
  std::vector<unsigned short> qb(T * H * K), kb(T * HK * K), vb(T * HV * V);
  for (auto& x : qb) x = enc<IOT>(uni(-1, 1));
  for (auto& x : kb) x = enc<IOT>(uni(-1, 1) * (l2 ? 1.0 : 0.2));
  for (auto& x : vb) x = enc<IOT>(uni(-1, 1));
  // g / beta in their port dtypes (0 fp32, 1 bf16, 2 fp16), decoded values kept for the reference.
  std::vector<float> gf(T * HO), bf(T * HO), alog(HO), dtb(HO);
  std::vector<unsigned char> graw(T * HO * 4), braw(T * HO * 4);
  auto put = [](std::vector<unsigned char>& raw, int dt, int i, double x) -> float {
    if (dt == gdn::DT_F32) {
      const float f = static_cast<float>(x);
      memcpy(&raw[4 * i], &f, 4);
      return f;
    }
    const unsigned short b = dt == gdn::DT_BF16 ? enc<gdn::gdn_bf16>(x) : enc<gdn::gdn_f16>(x);
    memcpy(&raw[2 * i], &b, 2);
    return static_cast<float>(dt == gdn::DT_BF16 ? dec<gdn::gdn_bf16>(b) : dec<gdn::gdn_f16>(b));
  };
  for (int i = 0; i < T * HO; ++i) {
    gf[i] = put(graw, g_dt, i, safe ? uni(-3, 1) : std::log(uni(0.5, 1)));
    bf[i] = put(braw, beta_dt, i, bsig ? uni(-2, 2) : uni(0, 1));
  }
  for (auto& x : alog) x = static_cast<float>(uni(-1, 0.5));
  for (auto& x : dtb) x = static_cast<float>(uni(-0.5, 0.5));
  const float scale = 1.f / std::sqrt(static_cast<float>(K));

  gdn::FwdParams p{};
  p.q = qb.data();
  p.k = kb.data();
  p.v = vb.data();
  p.g = graw.data();
  p.beta = braw.data();
  p.cu_seqlens = cu.data();
  p.a_log = safe ? alog.data() : nullptr;
  p.dt_bias = safe ? dtb.data() : nullptr;
  p.cu_seqlens_i64 = 0;
  p.n_seqs = N;
  p.h = H;
  p.hk = HK;
  p.hv = HV;
  p.ho = HO;
  p.g_dtype = g_dt;
  p.beta_dtype = beta_dt;
  p.a_log_dtype = p.dt_bias_dtype = gdn::DT_F32;
  p.scale = scale;
  p.flags = flags;
  p.max_chunks = max_chunks;
  p.chunk_offsets = offs.data();

  Ws w1(max_chunks, HO, K, V), w3(max_chunks, HO, K, V);
  run_prep<IOT, K, KEEP>(false, p, w1, chunks, HO);
  run_prep<IOT, K, KEEP>(true, p, w3, chunks, HO);
  Ws w3b(max_chunks, HO, K, V);  // a second prep3 run: with real threads a race shows as a difference
  run_prep<IOT, K, KEEP>(true, p, w3b, chunks, HO);

  // 1. bitwise, over the valid chunks (slots >= chunks are never written by either).
  const size_t c = chunks;
  size_t diff = count_diff(w1.w, w3.w, c * HO * C * K) + count_diff(w1.q, w3.q, c * HO * C * K) +
                count_diff(w1.kr, w3.kr, c * HO * C * K) + count_diff(w1.ut, w3.ut, c * HO * V * C) +
                count_diff(w1.a, w3.a, c * HO * C * C) + count_diff(w1.gl, w3.gl, c * HO);
  if (KEEP)
    diff += count_diff(w1.t, w3.t, c * HO * C * C) + count_diff(w1.e, w3.e, c * HO * C * K) +
            count_diff(w1.gam, w3.gam, c * HO * C) + count_diff(w1.bet, w3.bet, c * HO * C);
  diff += count_diff(w3.w, w3b.w, w3.w.size()) + count_diff(w3.ut, w3b.ut, w3.ut.size()) +
          count_diff(w3.a, w3b.a, w3.a.size()) + count_diff(w3.t, w3b.t, w3.t.size()) +
          count_diff(w3.e, w3b.e, w3.e.size());
  size_t nan3 = 0;
  for (size_t i = 0; i < c * HO * C * K; ++i) nan3 += std::isnan(dec<IOT>(w3.w[i])) || std::isnan(dec<IOT>(w3.q[i]));
  for (size_t i = 0; i < c * HO * V * C; ++i) nan3 += std::isnan(dec<IOT>(w3.ut[i]));
  for (size_t i = 0; i < c * HO * C * C; ++i) nan3 += std::isnan(dec<IOT>(w3.a[i]));

  // 2. fp64 W, Ũᵀ, A per (chunk, head) from the rounded inputs.
  double nw = 0, dw = 0, nu = 0, du = 0, na = 0, da = 0;
  for (int b = 0; b < N; ++b)
    for (int ci = offs[b]; ci < offs[b + 1]; ++ci)
      for (int h = 0; h < HO; ++h) {
        const int t0 = cu[b] + (ci - offs[b]) * C, len = std::min(C, cu[b + 1] - t0);
        const int qh = h / (HO / H), kh = h / (HO / HK), vh = h / (HO / HV);
        std::vector<double> kn(C * K, 0), qn(C * K, 0), y(C * V, 0), gam(C, 0), be(C, 0);
        double run = 0;
        for (int i = 0; i < C; ++i) {
          double la = 0, bb = 0;
          if (i < len) {
            const int gi = (t0 + i) * HO + h;
            const double g = gf[gi];
            la = safe ? -std::exp(alog[h]) * (g + dtb[h] > 20 ? g + dtb[h] : std::log1p(std::exp(g + dtb[h]))) : g;
            bb = bsig ? 1 / (1 + std::exp(-static_cast<double>(bf[gi]))) : bf[gi];
            if (bsig && (flags & gdn::FLAG_NEG_EIGVAL)) bb *= 2;
            double ks = 0, qs = 0;
            for (int d = 0; d < K; ++d) {
              ks += dec<IOT>(kb[((t0 + i) * HK + kh) * K + d]) * dec<IOT>(kb[((t0 + i) * HK + kh) * K + d]);
              qs += dec<IOT>(qb[((t0 + i) * H + qh) * K + d]) * dec<IOT>(qb[((t0 + i) * H + qh) * K + d]);
            }
            const double rk = l2 ? 1 / std::sqrt(ks + 1e-6) : 1, rq = l2 ? scale / std::sqrt(qs + 1e-6) : scale;
            for (int d = 0; d < K; ++d) {
              kn[i * K + d] = rk * dec<IOT>(kb[((t0 + i) * HK + kh) * K + d]);
              qn[i * K + d] = rq * dec<IOT>(qb[((t0 + i) * H + qh) * K + d]);
            }
            for (int d = 0; d < V; ++d) y[i * V + d] = bb * dec<IOT>(vb[((t0 + i) * HV + vh) * V + d]);
          }
          run += la;
          gam[i] = run;
          be[i] = bb;
        }
        // T = (I + L)^{-1} by forward substitution; W = T E, Ũ = T Y, A = tril(Q Kᵀ decay).
        std::vector<double> L(C * C, 0), Tm(C * C, 0);
        for (int i = 0; i < C; ++i)
          for (int j = 0; j < i; ++j) {
            double s = 0;
            for (int d = 0; d < K; ++d) s += kn[i * K + d] * kn[j * K + d];
            L[i * C + j] = be[i] * s * std::exp(gam[i] - gam[j]);
          }
        for (int j = 0; j < C; ++j) {
          Tm[j * C + j] = 1;
          for (int i = j + 1; i < C; ++i) {
            double s = 0;
            for (int m = j; m < i; ++m) s += L[i * C + m] * Tm[m * C + j];
            Tm[i * C + j] = -s;
          }
        }
        const size_t chh = static_cast<size_t>(ci) * HO + h;
        for (int i = 0; i < C; ++i) {
          for (int d = 0; d < K; ++d) {
            double s = 0;
            for (int m = 0; m <= i; ++m) s += Tm[i * C + m] * be[m] * kn[m * K + d] * std::exp(gam[m]);
            const double got = dec<IOT>(w3.w[chh * C * K + i * K + d]);
            nw += (got - s) * (got - s);
            dw += s * s;
          }
          for (int d = 0; d < V; ++d) {
            double s = 0;
            for (int m = 0; m <= i; ++m) s += Tm[i * C + m] * y[m * V + d];
            const double got = dec<IOT>(w3.ut[chh * V * C + d * C + i]);
            nu += (got - s) * (got - s);
            du += s * s;
          }
          for (int j = 0; j < C; ++j) {
            double s = 0;
            if (j <= i)
              for (int d = 0; d < K; ++d) s += qn[i * K + d] * kn[j * K + d] * std::exp(gam[i] - gam[j]);
            const double got = dec<IOT>(w3.a[chh * C * C + i * C + j]);
            na += (got - s) * (got - s);
            da += s * s;
          }
        }
      }
  const double rw = std::sqrt(nw / std::max(dw, 1e-300)), ru = std::sqrt(nu / std::max(du, 1e-300)),
               ra = std::sqrt(na / std::max(da, 1e-300));
  const bool ok = diff == 0 && nan3 == 0 && rw < 2e-2 && ru < 2e-2 && ra < 2e-2;
  printf("%-44s %s K=%3d keep=%d chunks=%3d: prep3 vs prep bitwise diffs %zu, NaN %zu; vs fp64 rms W %.2e Ut %.2e A %.2e  %s\n",
         name, sizeof(IOT) == 2 && std::is_same_v<IOT, gdn::gdn_bf16> ? "bf16" : "fp16", K, KEEP ? 1 : 0, chunks, diff,
         nan3, rw, ru, ra, ok ? "ok" : "FAIL");
  fflush(stdout);
  return ok ? 0 : 1;
}

int main() {
  using gdn::gdn_bf16;
  using gdn::gdn_f16;
  int fails = 0;
  // name, H, HV, flags, g dtype, beta dtype, lengths
  fails += run_case<gdn_bf16, 128, false>("ragged + partial + empty, fp32 gates", 2, 2, 0, 0, 0, {64, 37, 0, 130});
  fails += run_case<gdn_bf16, 128, true>("bwd KEEP, l2norm + beta sigmoid, bf16 g/beta", 1, 2,
                                         gdn::FLAG_L2NORM | gdn::FLAG_BETA_SIGMOID, 1, 1, {70, 5});
  fails += run_case<gdn_f16, 128, false>("fp16, GQA H=2 HV=1, safe gate, fp16 beta", 2, 1,
                                         gdn::FLAG_SAFE_GATE | gdn::FLAG_L2NORM, 0, 2, {100, 64});
  fails += run_case<gdn_f16, 128, true>("fp16 bwd KEEP, neg eigval", 1, 1,
                                        gdn::FLAG_BETA_SIGMOID | gdn::FLAG_NEG_EIGVAL | gdn::FLAG_L2NORM, 2, 0, {129});
  fails += run_case<gdn_bf16, 64, false>("K=V=64 bf16, GVA H=1 HV=2", 1, 2, gdn::FLAG_L2NORM, 0, 0, {90, 1});
  fails += run_case<gdn_bf16, 64, true>("K=V=64 bf16 bwd KEEP, safe gate", 2, 2, gdn::FLAG_SAFE_GATE, 1, 0, {64, 0, 33});
  fails += run_case<gdn_f16, 64, true>("K=V=64 fp16 bwd KEEP", 1, 1, gdn::FLAG_L2NORM, 2, 2, {150});
  if (g_unwaited) {
    printf("threads ended with un-waited cp.async copies: %d\n", g_unwaited);
    ++fails;
  }
  printf("%s: %d case(s) failed\n", fails ? "FAIL" : "PASS", fails);
  return fails ? 1 : 0;
}
