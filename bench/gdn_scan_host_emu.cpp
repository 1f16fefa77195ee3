// Runs the GDN forward-direction state scans on the CPU (one std::thread per CUDA thread, real
// barriers; the warp-collective primitives of bench/gdn_host_emu.h) over random chunk factors
// (W, Q⁺, Kᴿ, Ũᵀ, A, Γ_last as the prep would store them: io dtype, rows past a sequence's end
// zero), and checks:
//   forward output scan: gdn_fwd_scan (v1), gdn_fwd_scanx w4, w8 (K = 128) and, with the
//     session-6 headers, t8 (two warps per 16 value rows): O and the final state bitwise equal to
//     v1's, and within tolerance of an fp64 chunk recurrence over the same factors;
//   forward piece chain (P = 3): gdn_fwd_sum + gdn_fwd_chain + scanx w4 (and t8 per piece:
//     bitwise w4's), within tolerance of the fp64 recurrence;
//   session 13 (GDN_SCANX_PHASED): the one-stage loops w4s1 / w4p (whole and per piece) and the
//     one-stage summary sum1 (H_j, M_j), bitwise w4's / gdn_fwd_sum's;
//   the backward's forward-state replay: gdn_bwd_fscan (fwd_scan_body BWD) in fp32 and in the io
//     dtype (FLAG_BWD_S_IO); with the session-6 headers gdn_bwd_fscan_r4 / _r8 (P = 1): ws_s
//     bitwise fscan's; the backward piece chain (P = 3): psum + pchain + fscanp (and r4 / r8 per
//     piece: bitwise fscanp's), psum's H_j / M_j bitwise gdn_fwd_sum's, states within tolerance
//     of the fp64 recurrence.
//   session 17 (-DGDN_BWD_CKPT=1): the replay seeded from state checkpoints every 1, 2, 3 chunks
//     (gdn_bwd_fscanc r4 / p1): fp32 rows of the replay's carry give fscan_r4's S_c bitwise, io
//     rows each row's chunk exactly and the states within 2e-2 of fp64; psumt / psumt1 Mᵀ_j
//     bitwise psum's with H_j / M_j untouched.
// Every kernel runs twice (outputs refilled with NaN / 0xFFFF) and must repeat bitwise. Each case
// prints FNV-1a hashes of the outputs of the kernels that exist before and after session 6, so a
// build against the older headers (git archive of the parent commit) shows the refactored kernels
// (scanx w4 / w8, sum, psum, fscanp) unchanged: `diff` the "hash" lines.
//
// GDN_EMU_FWD_ONLY=1 skips the backward replays. Build and run (CPU machine), from the repository root:
//   g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -Ikernels/include bench/gdn_scan_host_emu.cpp -o /tmp/gdn_scan_host_emu
//   /tmp/gdn_scan_host_emu [case 0..3]
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <string>

#include "gdn_host_emu.h"
#include "gdn_bwd.cuh"
#include "gdn_bwd_chain.cuh"

#ifdef GDN_FSCAN_CHUNKS
constexpr bool kSession6 = true;
#else
constexpr bool kSession6 = false;
#endif

static unsigned long long fnv(const void* p, size_t n) {
  unsigned long long h = 1469598103934665603ULL;
  for (size_t i = 0; i < n; ++i) h = (h ^ static_cast<const unsigned char*>(p)[i]) * 1099511628211ULL;
  return h;
}
template <typename V>
static unsigned long long fnv(const V& v) { return fnv(v.data(), v.size() * sizeof(v[0])); }
template <typename V>
static bool same(const V& a, const V& b) { return a.size() == b.size() && memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0; }

static int g_fails = 0;
static void check(bool ok, const char* what) {
  printf("  %-60s %s\n", what, ok ? "ok" : "FAIL");
  if (!ok) ++g_fails;
}

template <typename IOT, int K>
void run_case(const char* name, int HO, std::vector<int> lens, bool bf16_state) {
  constexpr int V = K, C = 64;
  const int N = static_cast<int>(lens.size());
  printf("== %s (K = V = %d, HO = %d, lens", name, K, HO);
  for (int l : lens) printf(" %d", l);
  printf(", %s states)\n", bf16_state ? "bf16" : "fp32");
  std::vector<int> cu{0};
  for (int l : lens) cu.push_back(cu.back() + l);
  const int T = cu.back();
  std::vector<int> coff(N + 1, 0);
  for (int b = 0; b < N; ++b) coff[b + 1] = coff[b] + (lens[b] + C - 1) / C;
  const int chunks = std::max(coff[N], 1);
  // Factors (io dtype): small W, Kᴿ, Q⁺, A so that the state stays bounded over the chunks.
  std::vector<unsigned short> ws_w(size_t(chunks) * HO * C * K), ws_q(ws_w.size()), ws_kr(ws_w.size()), ws_ut(size_t(chunks) * HO * V * C),
      ws_a(size_t(chunks) * HO * C * C);
  std::vector<float> ws_gl(size_t(chunks) * HO);
  for (int b = 0; b < N; ++b)
    for (int c = coff[b]; c < coff[b + 1]; ++c)
      for (int h = 0; h < HO; ++h) {
        const size_t ch = size_t(c) * HO + h;
        const int len = std::min(C, cu[b + 1] - (cu[b] + (c - coff[b]) * C));
        ws_gl[ch] = static_cast<float>(uni(-0.3, -0.01));
        for (int i = 0; i < C; ++i)
          for (int d = 0; d < K; ++d) {
            ws_w[ch * C * K + i * K + d] = enc<IOT>(i < len ? uni(-0.03, 0.03) : 0.0);
            ws_q[ch * C * K + i * K + d] = enc<IOT>(i < len ? uni(-0.1, 0.1) : 0.0);
            ws_kr[ch * C * K + i * K + d] = enc<IOT>(i < len ? uni(-0.1, 0.1) : 0.0);
          }
        for (int i = 0; i < C; ++i)
          for (int j = 0; j < C; ++j) ws_a[ch * C * C + i * C + j] = enc<IOT>(i < len && j <= i ? uni(-0.1, 0.1) : 0.0);
        for (int v = 0; v < V; ++v)
          for (int i = 0; i < C; ++i) ws_ut[ch * V * C + v * C + i] = enc<IOT>(i < len ? uni(-1, 1) : 0.0);
      }
  std::vector<float> h0f(size_t(N) * HO * V * K);
  std::vector<unsigned short> h0b(h0f.size());
  for (size_t i = 0; i < h0f.size(); ++i) {
    h0b[i] = gdn::Io<gdn::gdn_bf16>::f_to_bits(static_cast<float>(uni(-1, 1)));
    h0f[i] = gdn::Io<gdn::gdn_bf16>::bits_to_f(h0b[i]);  // the same values in both dtypes
  }

  // fp64 recurrence over the same (rounded) factors: O per token, the final state, and the
  // state entering every chunk.
  auto W = [&](size_t ch, int i, int d) { return dec<IOT>(ws_w[ch * C * K + i * K + d]); };
  std::vector<double> ro(size_t(T) * HO * V, 0), rfs(h0f.size()), rs(size_t(chunks) * HO * V * K, 0);
  for (int b = 0; b < N; ++b)
    for (int h = 0; h < HO; ++h) {
      std::vector<double> X(V * K);
      for (int x = 0; x < V * K; ++x) X[x] = h0f[(size_t(b) * HO + h) * V * K + x];
      for (int c = coff[b]; c < coff[b + 1]; ++c) {
        const size_t ch = size_t(c) * HO + h;
        const int t0 = cu[b] + (c - coff[b]) * C, len = std::min(C, cu[b + 1] - t0);
        for (int x = 0; x < V * K; ++x) rs[ch * V * K + x] = X[x];
        std::vector<double> U(V * C);
        for (int v = 0; v < V; ++v)
          for (int i = 0; i < C; ++i) {
            double s = 0;
            for (int d = 0; d < K; ++d) s += X[v * K + d] * W(ch, i, d);
            U[v * C + i] = dec<IOT>(ws_ut[ch * V * C + v * C + i]) - s;
          }
        for (int i = 0; i < len; ++i)
          for (int v = 0; v < V; ++v) {
            double s = 0;
            for (int d = 0; d < K; ++d) s += X[v * K + d] * dec<IOT>(ws_q[ch * C * K + i * K + d]);
            for (int j = 0; j <= i; ++j) s += U[v * C + j] * dec<IOT>(ws_a[ch * C * C + i * C + j]);
            ro[(size_t(t0 + i) * HO + h) * V + v] = s;
          }
        const double dec_ = std::exp(static_cast<double>(ws_gl[ch]));
        for (int v = 0; v < V; ++v)
          for (int d = 0; d < K; ++d) {
            double s = dec_ * X[v * K + d];
            for (int i = 0; i < C; ++i) s += U[v * C + i] * dec<IOT>(ws_kr[ch * C * K + i * K + d]);
            X[v * K + d] = s;
          }
      }
      for (int x = 0; x < V * K; ++x) rfs[(size_t(b) * HO + h) * V * K + x] = X[x];
    }

  // ---- parameter blocks ----
  constexpr int PMAX = 3;
  std::vector<unsigned short> o(size_t(T) * HO * V);
  std::vector<float> fs(h0f.size());
  std::vector<unsigned short> fsb(h0f.size());
  std::vector<float> pc_h(size_t(N) * (PMAX - 1) * HO * V * K), pc_m(pc_h.size()), pc_mt(pc_h.size()), pc_seed(size_t(N) * PMAX * HO * V * K);
  std::vector<float> ws_s(size_t(chunks) * HO * V * K);
  gdn::BwdChainParams cp{};
  gdn::FwdParams& p = cp.b.f;
  p.cu_seqlens = cu.data();
  p.initial_state = bf16_state ? static_cast<const void*>(h0b.data()) : h0f.data();
  p.state_dtype = bf16_state ? gdn::DT_BF16 : gdn::DT_F32;
  p.n_seqs = N;
  p.h = p.hk = p.hv = p.ho = HO;
  p.max_chunks = chunks;
  p.chunk_offsets = coff.data();
  p.ws_w = ws_w.data(); p.ws_q = ws_q.data(); p.ws_kr = ws_kr.data(); p.ws_ut = ws_ut.data(); p.ws_a = ws_a.data(); p.ws_gl = ws_gl.data();
  cp.ws_h = pc_h.data(); cp.ws_m = pc_m.data(); cp.ws_mt = pc_mt.data(); cp.ws_seed = pc_seed.data();
  cp.b.ws_s = ws_s.data();
  // chain_fwd_view leaves the overlap and checkpoint fields (sessions 15, 16) unset: none here.
  auto fwd_view = [&] {
    gdn::FwdFastParams v = gdn::chain_fwd_view(cp);
    v.ov_flags = nullptr;
    v.ov_order = nullptr;
    v.ckpt = nullptr;
    v.ckpt_rows = nullptr;
    v.ckpt_every = 1;
    v.ckpt_f32 = 0;
    return v;
  };
  gdn::FwdFastParams fp = fwd_view();

  // ---- forward output scans ----
  struct Out { std::vector<unsigned short> o; std::vector<float> fs; std::vector<unsigned short> fsb; };
  auto fwd = [&](int P, const std::function<void()>& kernels) {
    Out first;
    for (int rep = 0; rep < 2; ++rep) {
      std::fill(o.begin(), o.end(), 0xFFFF);
      std::fill(fs.begin(), fs.end(), NAN);
      std::fill(fsb.begin(), fsb.end(), 0xFFFF);
      for (auto* v : {&pc_h, &pc_m, &pc_seed}) std::fill(v->begin(), v->end(), NAN);
      p.o = o.data();
      p.final_state = bf16_state ? static_cast<void*>(fsb.data()) : fs.data();
      p.flags = 0;
      fp = fwd_view();
      fp.pieces = P;
      kernels();
      if (rep == 0) first = Out{o, fs, fsb};
    }
    if (!(same(first.o, o) && same(first.fs, fs) && same(first.fsb, fsb))) check(false, "repeat bitwise");
    return Out{o, fs, fsb};
  };
  auto fwd_err = [&](const Out& r) {
    std::vector<double> go(r.o.size()), gf(rfs.size());
    for (size_t i = 0; i < go.size(); ++i) go[i] = dec<IOT>(r.o[i]);
    for (size_t i = 0; i < gf.size(); ++i) gf[i] = bf16_state ? dec<gdn::gdn_bf16>(r.fsb[i]) : r.fs[i];
    return std::pair{rms_ratio(go, ro), rms_ratio(gf, rfs)};
  };
  const U3 g64{V / 64, unsigned(HO), unsigned(N)};
  const Out v1 = fwd(1, [&] { launch(g64, 128, [&] { gdn::fwd_scan_body<IOT, K, V, gdn::SCAN_WARPS, gdn::SCAN_STAGES>(p); }); });
  const auto [eo, ef] = fwd_err(v1);
  printf("  v1 scan vs fp64: O %.2e, final state %.2e\n", eo, ef);
  check(eo < 2e-2 && ef < 2e-2, "v1 scan within 2e-2 of the fp64 recurrence");
  const Out w4 = fwd(1, [&] { launch(g64, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, 3, true>(fp); }); });
  check(same(w4.o, v1.o) && same(w4.fs, v1.fs) && same(w4.fsb, v1.fsb), "scanx w4 bitwise v1 (O, final state)");
  printf("  hash scanx_w4 O %016llx fs %016llx %016llx\n", fnv(w4.o), fnv(w4.fs), fnv(w4.fsb));
  if constexpr (K == 128) {
    const Out w8 = fwd(1, [&] { launch({1, unsigned(HO), unsigned(N)}, 256, [&] { gdn::fwd_scanx_body<IOT, 128, 128, 8, 2, true>(fp); }); });
    check(same(w8.o, v1.o) && same(w8.fs, v1.fs) && same(w8.fsb, v1.fsb), "scanx w8 bitwise v1");
  }
#ifdef GDN_SCANX_PHASED
  // Session 13: the one-stage loops (plain w4s1; w4p refilled in two phased halves), bitwise w4.
  // Mutant (a check below must then fail): build against a copy of kernels/include whose
  // fscan_chunks lacks the PHASED mid-chunk cp_async_wait<0>() (bench/gdn_scan_emu_occ13.sh).
  const Out w4s1 = fwd(1, [&] { launch(g64, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, 1, true>(fp); }); });
  check(same(w4s1.o, w4.o) && same(w4s1.fs, w4.fs) && same(w4s1.fsb, w4.fsb), "scanx w4s1 (one stage) bitwise w4");
  const Out w4p = fwd(1, [&] { launch(g64, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, 1, true, 1, false, true>(fp); }); });
  check(same(w4p.o, w4.o) && same(w4p.fs, w4.fs) && same(w4p.fsb, w4.fsb), "scanx w4p (one stage, two halves) bitwise w4");
#endif
#ifdef GDN_FSCAN_CHUNKS
  const Out t8 = fwd(1, [&] { launch(g64, 256, [&] { gdn::fwd_scanx_body<IOT, K, V, 8, 2, true, 2, true>(fp); }); });
  check(same(t8.o, v1.o) && same(t8.fs, v1.fs) && same(t8.fsb, v1.fsb), "scanx t8 (split pairs) bitwise v1");
#endif
  // The forward piece chain, P = 3.
  constexpr int P = 3;
  auto fwd_pieces = [&](const std::function<void()>& scan) {
    return fwd(P, [&] {
      launch({2 * V / 64, unsigned(HO), unsigned(N * (P - 1))}, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, gdn::SUM_STAGES, false>(fp); });
      launch({V / 32, unsigned(HO), unsigned(N)}, gdn::CHAIN_THREADS, [&] { gdn::fwd_chain_body<K>(fp); });
      scan();
    });
  };
  const Out pw4 = fwd_pieces([&] { launch({V / 64, unsigned(HO), unsigned(N * P)}, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, 3, true>(fp); }); });
  const std::vector<float> fsum_h = pc_h, fsum_m = pc_m;
  {
    const auto [po, pf] = fwd_err(pw4);
    printf("  pieces (P = 3) w4 vs fp64: O %.2e, final state %.2e\n", po, pf);
    check(po < 2e-2 && pf < 2e-2, "forward piece chain within 2e-2 of fp64");
  }
  printf("  hash fwd_pieces_w4 O %016llx fs %016llx %016llx seed %016llx\n", fnv(pw4.o), fnv(pw4.fs), fnv(pw4.fsb), fnv(pc_seed));
#ifdef GDN_CHAIN2
  {
    // Session 12: the chain with M staged in shared memory (fwd_chain2_body) must give the same
    // seeds, hence the same O and final state, bitwise.
    const std::vector<float> seed_v1 = pc_seed;
    const Out pc2 = fwd(P, [&] {
      launch({2 * V / 64, unsigned(HO), unsigned(N * (P - 1))}, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, gdn::SUM_STAGES, false>(fp); });
      launch({V / 32, unsigned(HO), unsigned(N)}, gdn::CHAIN_THREADS, [&] { gdn::fwd_chain2_body<K>(fp); });
      launch({V / 64, unsigned(HO), unsigned(N * P)}, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, 3, true>(fp); });
    });
    check(same(pc_seed, seed_v1), "pieces: chain2 seeds bitwise chain v1");
    check(same(pc2.o, pw4.o) && same(pc2.fs, pw4.fs) && same(pc2.fsb, pw4.fsb), "pieces: chain2 O / final state bitwise chain v1");
    printf("  chain2 (fwd, P = 3): seeds %016llx (v1 %016llx)\n", fnv(pc_seed), fnv(seed_v1));
    const Out pc3 = fwd(P, [&] {
      launch({2 * V / 64, unsigned(HO), unsigned(N * (P - 1))}, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, gdn::SUM_STAGES, false>(fp); });
      launch({V / gdn::CHAIN3_ROWS, unsigned(HO), unsigned(N)}, gdn::CHAIN_THREADS, [&] { gdn::fwd_chain2_body<K, gdn::CHAIN3_ROWS>(fp); });
      launch({V / 64, unsigned(HO), unsigned(N * P)}, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, 3, true>(fp); });
    });
    check(same(pc_seed, seed_v1), "pieces: chain3 (16 rows per block) seeds bitwise chain v1");
    check(same(pc3.o, pw4.o) && same(pc3.fs, pw4.fs) && same(pc3.fsb, pw4.fsb), "pieces: chain3 O / final state bitwise chain v1");
  }
#endif
#ifdef GDN_SCANX_PHASED
  {
    // Session 13: the piece path on the one-stage phased kernels: sum1 (the summary pass) gives
    // H_j, M_j bitwise gdn_fwd_sum's; w4p per piece O / final state bitwise w4's; and both
    // together (the session-13 piece path) bitwise the session-12 one.
    const Out ps1 = fwd(P, [&] {
      launch({2 * V / 64, unsigned(HO), unsigned(N * (P - 1))}, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, 1, false, 1, false, true>(fp); });
      launch({V / 32, unsigned(HO), unsigned(N)}, gdn::CHAIN_THREADS, [&] { gdn::fwd_chain_body<K>(fp); });
      launch({V / 64, unsigned(HO), unsigned(N * P)}, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, 3, true>(fp); });
    });
    check(same(pc_h, fsum_h) && same(pc_m, fsum_m), "pieces: sum1 (one stage, two halves) H_j, M_j bitwise sum");
    check(same(ps1.o, pw4.o) && same(ps1.fs, pw4.fs) && same(ps1.fsb, pw4.fsb), "pieces: sum1 O / final state bitwise sum");
    const Out pp = fwd_pieces([&] { launch({V / 64, unsigned(HO), unsigned(N * P)}, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, 1, true, 1, false, true>(fp); }); });
    check(same(pp.o, pw4.o) && same(pp.fs, pw4.fs) && same(pp.fsb, pw4.fsb), "pieces: scanx w4p bitwise w4");
    const Out pboth = fwd(P, [&] {
      launch({2 * V / 64, unsigned(HO), unsigned(N * (P - 1))}, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, 1, false, 1, false, true>(fp); });
      launch({V / gdn::CHAIN3_ROWS, unsigned(HO), unsigned(N)}, gdn::CHAIN_THREADS, [&] { gdn::fwd_chain2_body<K, gdn::CHAIN3_ROWS>(fp); });
      launch({V / 64, unsigned(HO), unsigned(N * P)}, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, 1, true, 1, false, true>(fp); });
    });
    check(same(pboth.o, pw4.o) && same(pboth.fs, pw4.fs) && same(pboth.fsb, pw4.fsb), "pieces: sum1 + chain3 + w4p bitwise sum + chain + w4");
    const Out ps1p = fwd(P, [&] {
      launch({2 * V / 64, unsigned(HO), unsigned(N * (P - 1))}, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, 1, false>(fp); });
      launch({V / 32, unsigned(HO), unsigned(N)}, gdn::CHAIN_THREADS, [&] { gdn::fwd_chain_body<K>(fp); });
      launch({V / 64, unsigned(HO), unsigned(N * P)}, 128, [&] { gdn::fwd_scanx_body<IOT, K, V, 4, 1, true>(fp); });
    });
    check(same(pc_h, fsum_h) && same(pc_m, fsum_m) && same(ps1p.o, pw4.o) && same(ps1p.fs, pw4.fs) && same(ps1p.fsb, pw4.fsb),
          "pieces: plain one-stage sum + scan bitwise sum + w4");
  }
#endif
#ifdef GDN_FSCAN_CHUNKS
  const Out pt8 = fwd_pieces([&] { launch({V / 64, unsigned(HO), unsigned(N * P)}, 256, [&] { gdn::fwd_scanx_body<IOT, K, V, 8, 2, true, 2, true>(fp); }); });
  check(same(pt8.o, pw4.o) && same(pt8.fs, pw4.fs) && same(pt8.fsb, pw4.fsb), "pieces: scanx t8 bitwise w4");
#endif

  // ---- the backward's forward-state replay ----
  // GDN_EMU_FWD_ONLY=1: the forward scans only (the replays below are another module's kernels).
  if (getenv("GDN_EMU_FWD_ONLY")) {
    if (g_unwaited.exchange(0) != 0) check(false, "cp.async copies never waited for");
    return;
  }
  p.o = nullptr;
  p.final_state = nullptr;
  std::vector<unsigned short> ws_s_io(ws_s.size());
  auto replay = [&](bool s_io, int pieces, const std::function<void()>& kernels) {
    std::vector<float> first;
    std::vector<unsigned short> first_io;
    for (int rep = 0; rep < 2; ++rep) {
      std::fill(ws_s.begin(), ws_s.end(), NAN);
      std::fill(ws_s_io.begin(), ws_s_io.end(), 0xFFFF);
      for (auto* v : {&pc_h, &pc_m, &pc_mt, &pc_seed}) std::fill(v->begin(), v->end(), NAN);
      p.flags = s_io ? gdn::FLAG_BWD_S_IO : 0;
      cp.b.ws_s = s_io ? reinterpret_cast<float*>(ws_s_io.data()) : ws_s.data();
      cp.pieces = pieces;
      kernels();
      if (rep == 0) {
        first = ws_s;
        first_io = ws_s_io;
      }
    }
    if (!(same(first, ws_s) && same(first_io, ws_s_io))) check(false, "replay repeat bitwise");
    return std::pair{ws_s, ws_s_io};
  };
  auto states_err = [&](const std::vector<float>& s) {
    return rms_ratio(std::vector<double>(s.begin(), s.end()), rs);
  };
  for (bool s_io : {false, true}) {
    const char* tag = s_io ? "io-dtype S_c" : "fp32 S_c";
    const auto old = replay(s_io, 1, [&] { launch(g64, 128, [&] { gdn::fwd_scan_body<IOT, K, V, gdn::SCAN_WARPS, gdn::SCAN_STAGES, true>(p, cp.b.ws_s); }); });
    if (!s_io) {
      const double e = states_err(old.first);
      printf("  fscan vs fp64 states: %.2e\n", e);
      check(e < 2e-2, "fscan within 2e-2 of the fp64 states");
    }
    printf("  hash fscan %s %016llx %016llx\n", tag, fnv(old.first), fnv(old.second));
#ifdef GDN_FSCAN_CHUNKS
    const auto r4 = replay(s_io, 1, [&] { launch(g64, 128, [&] { gdn::bwd_fscan_piece_body<IOT, K, V, 4, 2, 1, true>(cp); }); });
    check(same(r4.first, old.first) && same(r4.second, old.second), s_io ? "fscan_r4 bitwise fscan (io S_c)" : "fscan_r4 bitwise fscan (fp32 S_c)");
    const auto r8 = replay(s_io, 1, [&] { launch(g64, 256, [&] { gdn::bwd_fscan_piece_body<IOT, K, V, 8, 2, 2, true>(cp); }); });
    check(same(r8.first, old.first) && same(r8.second, old.second), s_io ? "fscan_r8 bitwise fscan (io S_c)" : "fscan_r8 bitwise fscan (fp32 S_c)");
#endif
    // The backward piece chain's forward side, P = 3.
    auto chain = [&](const std::function<void()>& scan) {
      return replay(s_io, P, [&] {
        launch({V / 64, unsigned(HO), unsigned(N * (2 * P - 1))}, 128, [&] { gdn::bwd_psum_body<IOT, K, V, 4, gdn::SUM_STAGES>(cp); });
        launch({V / 32, unsigned(HO), unsigned(N)}, gdn::CHAIN_THREADS, [&] { gdn::fwd_chain_body<K>(gdn::chain_fwd_view(cp)); });
        scan();
      });
    };
    const auto pold = chain([&] { launch({V / 64, unsigned(HO), unsigned(N * P)}, 128, [&] { gdn::bwd_fscan_piece_body<IOT, K, V, gdn::SCAN_WARPS, gdn::SCAN_STAGES>(cp); }); });
#ifdef GDN_CHAIN2
    {
      const std::vector<float> seed_v1 = pc_seed;
      const auto pc2 = replay(s_io, P, [&] {
        launch({V / 64, unsigned(HO), unsigned(N * (2 * P - 1))}, 128, [&] { gdn::bwd_psum_body<IOT, K, V, 4, gdn::SUM_STAGES>(cp); });
        launch({V / 32, unsigned(HO), unsigned(N)}, gdn::CHAIN_THREADS, [&] { gdn::fwd_chain2_body<K>(gdn::chain_fwd_view(cp)); });
        launch({V / 64, unsigned(HO), unsigned(N * P)}, 128, [&] { gdn::bwd_fscan_piece_body<IOT, K, V, gdn::SCAN_WARPS, gdn::SCAN_STAGES>(cp); });
      });
      check(same(pc_seed, seed_v1), "bwd pieces: pchain2 seeds bitwise pchain");
      check(same(pc2.first, pold.first) && same(pc2.second, pold.second), "bwd pieces: pchain2 states bitwise pchain");
      printf("  pchain2 (bwd, P = 3, %s): seeds %016llx (v1 %016llx)\n", s_io ? "io" : "fp32", fnv(pc_seed), fnv(seed_v1));
    }
#endif
    if (!s_io) {
      const double e = states_err(pold.first);
      printf("  pieces (P = 3) fscanp vs fp64 states: %.2e\n", e);
      check(e < 2e-2, "fscanp within 2e-2 of the fp64 states");
      check(same(fsum_h, pc_h) && same(fsum_m, pc_m), "psum's H_j, M_j bitwise gdn_fwd_sum's");
    }
    printf("  hash psum+fscanp %s h %016llx m %016llx mt %016llx seed %016llx s %016llx %016llx\n", tag, fnv(pc_h), fnv(pc_m), fnv(pc_mt), fnv(pc_seed),
           fnv(pold.first), fnv(pold.second));
#ifdef GDN_FSCAN_CHUNKS
    const auto p4 = chain([&] { launch({V / 64, unsigned(HO), unsigned(N * P)}, 128, [&] { gdn::bwd_fscan_piece_body<IOT, K, V, 4, 2, 1, true>(cp); }); });
    check(same(p4.first, pold.first) && same(p4.second, pold.second), "pieces: fscan_r4 bitwise fscanp");
    const auto p8 = chain([&] { launch({V / 64, unsigned(HO), unsigned(N * P)}, 256, [&] { gdn::bwd_fscan_piece_body<IOT, K, V, 8, 2, 2, true>(cp); }); });
    check(same(p8.first, pold.first) && same(p8.second, pold.second), "pieces: fscan_r8 bitwise fscanp");
#endif
#ifdef GDN_BWD_PHASED
    {  // Session 14: psum1 (one phased stage, fixed copies) and fscanp1 (one phased stage).
      const std::vector<float> h0 = pc_h, m0 = pc_m, mt0 = pc_mt, seed0 = pc_seed;
      const auto ph = replay(s_io, P, [&] {
        launch({V / 64, unsigned(HO), unsigned(N * (2 * P - 1))}, 128, [&] { gdn::bwd_psum_body<IOT, K, V, 4, 1, true, true>(cp); });
        launch({V / 32, unsigned(HO), unsigned(N)}, gdn::CHAIN_THREADS, [&] { gdn::fwd_chain_body<K>(gdn::chain_fwd_view(cp)); });
        launch({V / 64, unsigned(HO), unsigned(N * P)}, 128, [&] { gdn::bwd_fscan_piece_body<IOT, K, V, 4, 1, 1, false, true, false>(cp); });
      });
      check(same(pc_h, h0) && same(pc_m, m0) && same(pc_mt, mt0) && same(pc_seed, seed0),
            "bwd pieces: psum1 (one stage, two halves) H_j, M_j, Mt_j and the seeds bitwise psum");
      check(same(ph.first, pold.first) && same(ph.second, pold.second), "bwd pieces: psum1 + fscanp1 S_c bitwise psum + fscanp");
    }
#endif
#ifdef GDN_BWD_CKPT
    {  // Session 17: the replay seeded from state checkpoints (fscanc r4 / p1) and the
      // transitions-only summaries (psumt / psumt1). Rows every m chunks (m = 1, 2, 3) of the
      // uncut replay's fp32 states: fp32 rows (the replay's carry) must give its S_c bitwise;
      // io rows (those states rounded) each row's chunk exactly and the rest within tolerance.
      const auto base32 = replay(false, 1, [&] { launch(g64, 128, [&] { gdn::bwd_fscan_piece_body<IOT, K, V, 4, 2, 1, true>(cp); }); });
      const std::vector<float> s32 = base32.first;
      const auto want = replay(s_io, 1, [&] { launch(g64, 128, [&] { gdn::bwd_fscan_piece_body<IOT, K, V, 4, 2, 1, true>(cp); }); });
      for (int m : {1, 2, 3}) {
        std::vector<int> rows(N + 1, 0);
        for (int b = 0; b < N; ++b) rows[b + 1] = rows[b] + (lens[b] + C * m - 1) / (C * m);
        const int R = std::max(T / (C * m) + N, 1);
        const size_t sl = size_t(V) * K;
        std::vector<float> ck32(size_t(R) * HO * sl, NAN);
        std::vector<unsigned short> ckio(ck32.size(), 0xFFFF);
        for (int b = 0; b < N; ++b)
          for (int j = 0; j < rows[b + 1] - rows[b]; ++j)
            for (int h = 0; h < HO; ++h)
              for (size_t x = 0; x < sl; ++x) {
                const float v = s32[(size_t(coff[b] + j * m) * HO + h) * sl + x];
                ck32[(size_t(rows[b] + j) * HO + h) * sl + x] = v;
                ckio[(size_t(rows[b] + j) * HO + h) * sl + x] = gdn::Io<IOT>::f_to_bits(v);
              }
        gdn::BwdCkptParams kp{};
        kp.ckpt_rows = rows.data();
        kp.ckpt_every = m;
        auto seeded = [&](bool f32, bool p1) {
          kp.ckpt = f32 ? static_cast<const void*>(ck32.data()) : ckio.data();
          kp.ckpt_f32 = f32 ? 1 : 0;
          return replay(s_io, 1, [&] {
            kp.cp = cp;
            launch({V / 64, unsigned(HO), unsigned(R)}, 128, [&] {
              if (p1) gdn::bwd_fscan_ckpt_body<IOT, K, V, 4, 1, false, true, false>(kp);
              else gdn::bwd_fscan_ckpt_body<IOT, K, V, 4, 2, true>(kp);
            });
          });
        };
        char what[128];
        const auto r4 = seeded(true, false);
        snprintf(what, sizeof what, "fscanc r4, fp32 rows every %d chunks: S_c bitwise fscan_r4 (%s)", m, tag);
        check(same(r4.first, want.first) && same(r4.second, want.second), what);
        if (K == 128) {
          const auto p1 = seeded(true, true);
          snprintf(what, sizeof what, "fscanc p1, fp32 rows every %d chunks: S_c bitwise fscan_r4 (%s)", m, tag);
          check(same(p1.first, want.first) && same(p1.second, want.second), what);
        }
        const auto io = seeded(false, false);
        bool rows_exact = true;
        for (int b = 0; b < N; ++b)
          for (int j = 0; j < rows[b + 1] - rows[b]; ++j)
            for (int h = 0; h < HO; ++h)
              for (size_t x = 0; x < sl; ++x) {
                const size_t at = (size_t(coff[b] + j * m) * HO + h) * sl + x;
                const unsigned short row = ckio[(size_t(rows[b] + j) * HO + h) * sl + x];
                rows_exact &= s_io ? io.second[at] == row : io.first[at] == gdn::Io<IOT>::bits_to_f(row);
              }
        snprintf(what, sizeof what, "fscanc r4, io rows every %d chunks: each row's chunk is the row (%s)", m, tag);
        check(rows_exact, what);
        if (!s_io) {
          const double e = states_err(io.first);
          printf("  fscanc io rows every %d chunks vs fp64 states: %.2e\n", m, e);
          check(e < 2e-2, "fscanc (io rows) within 2e-2 of the fp64 states");
        }
      }
      // psumt / psumt1 (P = 3): Mᵀ_j bitwise psum's, nothing else written.
      const auto full = replay(s_io, P, [&] {
        launch({V / 64, unsigned(HO), unsigned(N * (2 * P - 1))}, 128, [&] { gdn::bwd_psum_body<IOT, K, V, 4, gdn::SUM_STAGES>(cp); });
      });
      (void)full;
      const std::vector<float> mt0 = pc_mt;
      for (bool one : {false, true}) {
        if (one && K != 128) continue;
        replay(s_io, P, [&] {
          launch({V / 64, unsigned(HO), unsigned(N * (P - 1))}, 128, [&] {
            if (one) gdn::bwd_psum_body<IOT, K, V, 4, 1, true, true, true>(cp);
            else gdn::bwd_psum_body<IOT, K, V, 4, gdn::SUM_STAGES, false, false, true>(cp);
          });
        });
        bool untouched = true;
        for (float x : pc_h) untouched &= std::isnan(x);
        for (float x : pc_m) untouched &= std::isnan(x);
        check(same(pc_mt, mt0) && untouched, one ? "psumt1: Mt_j bitwise psum's, no H_j / M_j written" : "psumt: Mt_j bitwise psum's, no H_j / M_j written");
      }
    }
#endif
  }
  if (g_unwaited.exchange(0) != 0) check(false, "cp.async copies never waited for");
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  // Argument: the case to run (0..3), default all.
  const int only = argc > 1 ? atoi(argv[1]) : -1;
  printf("headers: %s\n", kSession6 ? "session 6 (fscan_chunks)" : "before session 6");
  if (only < 0 || only == 0) run_case<gdn::gdn_bf16, 64>("bf16", 2, {130, 0, 200, 5}, false);
  if (only < 0 || only == 1) run_case<gdn::gdn_bf16, 128>("bf16", 1, {200, 64, 0, 70}, false);
  if (only < 0 || only == 2) run_case<gdn::gdn_f16, 128>("fp16", 2, {65, 190}, true);
  if (only < 0 || only == 3) run_case<gdn::gdn_f16, 64>("fp16", 1, {260, 3}, true);
  printf("%s\n", g_fails ? "scan host emulation: FAILED" : "scan host emulation: all checks ok");
  return g_fails ? 1 : 0;
}
