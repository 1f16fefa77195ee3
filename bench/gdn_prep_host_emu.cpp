// Runs the GDN forward's per-chunk factor kernels on the CPU: the 4-warp prep
// (gdn::fwd_prep_body, gdn_fwd.cuh; device-validated), prep3, prep5 and prep6
// (gdn::fwd_prep3_body, gdn_fwd_prep3.cuh, 8 warps) and the persistent prep4
// (gdn::fwd_prep4_body), forward (KEEP = false) and the backward's variant (KEEP = true),
// one std::thread per CUDA thread with real barriers for __syncthreads and per-warp exchanges for
// shuffles, mma.sync / ldmatrix.trans / cp.async emulated warp-collectively by
// bench/gdn_host_emu.h, shared with bench/gdn_bwd_host_emu.cpp (mma: fp64 sums of the io-dtype
// products onto the fp32 accumulator; cp.async deferred to the wait that covers it; shared memory
// NaN-filled per block).
//
// Checks, per case (shapes with partial chunks, empty sequences, head groups, bf16 and fp16,
// K = V = 64 and 128, gate / beta transforms):
//  1. prep3's workspace (W, Q⁺, Kᴿ, Ũᵀ, A, Γ_last; with KEEP also T, E, Γ, β) is bitwise equal to
//     the 4-warp prep's, over every valid chunk (the workspace is NaN-filled first, so an
//     unwritten element fails too), and to a second prep3 run (a missing barrier shows up as a
//     difference with real threads); "bitwise diffs" counts both; likewise prep4 ("prep4": on 1
//     block (every tile in one block), 3 blocks (several tiles each) and more blocks than tiles,
//     each with cp.async copies landing at their wait and, again, at issue: the two ends of when a
//     prefetch may land) and prep5 / prep6 (twice each; "prep5/6"), all also against prep3's
//     workspace in full (slots past the last chunk stay unwritten);
//  2. both against an fp64 computation of W = T E, Ũ = T Y and A from the same rounded inputs
//     (relative rms, reported; must stay below 2e-2).
//
// Build and run (CPU machine), from the repository root:
//   g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -Ikernels/include bench/gdn_prep_host_emu.cpp -o /tmp/gdn_prep_host_emu
//   /tmp/gdn_prep_host_emu [n]   (n: only the first n cases; GDN_EMU_FIRST=m skips the first m; the mutation checks of
//   bench/gdn_results.md, session 6, run 2)
//   GDN_EMU_V15=1 GDN_EMU_DUMP=FILE /tmp/gdn_prep_host_emu: also appends prep15's whole workspace per case to
//   FILE (session 23, bprep23), to compare two builds of the headers byte for byte
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <string>

#include "gdn_host_emu.h"
#include "gdn_fwd_prep3.cuh"
#include "gdn_fwd_prep10.cuh"
#include "gdn_fwd_slim.cuh"

struct Ws {  // one workspace (and the backward's KEEP regions)
  std::vector<unsigned short> w, q, kr, ut, a, t, e;
  std::vector<float> gl, gam, bet;
  Ws(size_t chunks, int HO, int K, int V)
      : w(chunks * HO * 64 * K, 0xFFFF), q(w.size(), 0xFFFF), kr(w.size(), 0xFFFF), ut(chunks * HO * V * 64, 0xFFFF),
        a(chunks * HO * 64 * 64, 0xFFFF), t(a.size(), 0xFFFF), e(w.size(), 0xFFFF), gl(chunks * HO, NAN),
        gam(chunks * HO * 64, NAN), bet(gam.size(), NAN) {}
};

// variant 2: the 4-warp prep; 3: prep3; 4: prep4 (persistent) on `blocks` blocks; 5: prep5 (prep3,
// one barrier per inverse block row); 6: prep6 (prep5 with A stored from registers); 7: prep7 (prep6
// with the triangular inverse on the tensor cores, gdn_fwd_tcinv.cuh; not bitwise); 8: prep8 (prep7
// with the off-diagonal inverse by 2x2 recursive blocking on all 8 warps; not bitwise); 9: prep9 (prep8
// with ldmatrix.x4 operand loads; must be bitwise prep8); 10: prep10 (prep9's tile in fewer phases,
// gdn_fwd_prep10.cuh; must be bitwise prep9); 11: prep11 (prep10 with W and Ũᵀ stored from
// registers; must be bitwise prep9); 13: prep13 (prep10 with the diagonal substitution on 4 warps,
// gdn_fwd_prep13.cuh; must be bitwise prep10); 14: prep14 (prep10 with the diagonal substitution
// right-looking from registers, gdn_fwd_prep13.cuh; must be bitwise prep10); 15: prep15 (prep14 with
// the inverse's serial pieces off the block barriers, gdn_fwd_prep15.cuh; must be bitwise prep14).
template <typename IOT, int K, bool KEEP>
static void run_prep(int variant, gdn::FwdParams p, Ws& ws, int chunks, int HO, unsigned blocks = 0) {
  p.ws_w = ws.w.data();
  p.ws_q = ws.q.data();
  p.ws_kr = ws.kr.data();
  p.ws_ut = ws.ut.data();
  p.ws_a = ws.a.data();
  p.ws_gl = ws.gl.data();
  gdn::PrepKeep keep{ws.t.data(), ws.e.data(), ws.gam.data(), ws.bet.data()};
  const U3 grid{static_cast<unsigned>(p.max_chunks), static_cast<unsigned>(HO), 1};
  (void)chunks;
  if (variant == 4) launch(U3{blocks, 1, 1}, gdn::PREP3_THREADS, [&] { gdn::fwd_prep4_body<IOT, K, K, KEEP>(p, keep); });
  else if (variant == 5) launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_prep3_body<IOT, K, K, KEEP, true>(p, keep); });
  else if (variant == 6) launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_prep3_body<IOT, K, K, KEEP, true, true>(p, keep); });
  else if (variant == 7)
    launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_prep3_body<IOT, K, K, KEEP, false, true, 1>(p, keep); });
  else if (variant == 8)
    launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_prep3_body<IOT, K, K, KEEP, false, true, 2>(p, keep); });
  else if (variant == 9)
    launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_prep3_body<IOT, K, K, KEEP, false, true, 3>(p, keep); });
  else if (variant == 10)
    launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_prep10_body<IOT, K, K, KEEP>(p, keep); });
  else if (variant == 11)
    launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_prep10_body<IOT, K, K, KEEP, true>(p, keep); });
  else if (variant == 13)
    launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_prep10_body<IOT, K, K, KEEP, false, 1>(p, keep); });
  else if (variant == 14)
    launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_prep10_body<IOT, K, K, KEEP, false, 2>(p, keep); });
  else if (variant == 15)
    launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_prep10_body<IOT, K, K, KEEP, false, 3>(p, keep); });
  else if (variant == 16 || variant == 17 || variant == 18 || variant == 19) {
    // 16: the backward's scalar-form prep gdn_bwd_prep15sc (session 27); 17: its slim form
    // gdn_bwd_prep15sl (session 28: no v, W, Ũᵀ); 18: gdn_bwd_prep16sl (session 29, bp29: the forward
    // slim prep's tile, wgmma form, KEEP; the emulation runs its phase 3 as mma.sync over the
    // swizzled rows); 19: gdn_bwd_prep16slc (session 32, pp32: that tile's G = 1, two block barriers
    // fewer, L in its own region). KEEP and K = 128 only.
    if constexpr (KEEP && K == 128) {
      if (variant == 16) launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_prep10_body<IOT, K, K, KEEP, false, 3, true>(p, keep); });
      else if (variant == 18) launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_slim_prep_body<IOT, K, 1, true>(p, keep); });
      else if (variant == 19) launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_slim_prep_body<IOT, K, 1, true, 1>(p, keep); });
      else launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_prep10_body<IOT, K, K, KEEP, false, 3, true, true>(p, keep); });
    } else {
      fprintf(stderr, "variant %d: KEEP and K = 128 only\n", variant);
      abort();
    }
  } else if (variant == 3) launch(grid, gdn::PREP3_THREADS, [&] { gdn::fwd_prep3_body<IOT, K, K, KEEP>(p, keep); });
  else launch(grid, gdn::PREP_THREADS, [&] { gdn::fwd_prep_body<IOT, K, K, KEEP>(p, keep); });
}

template <typename T>
static size_t count_diff(const std::vector<T>& a, const std::vector<T>& b, size_t n) {
  size_t d = 0;
  for (size_t i = 0; i < n; ++i) d += memcmp(&a[i], &b[i], sizeof(T)) != 0;
  return d;
}

// Elements that differ between two whole workspaces (every region, KEEP's included).
static size_t ws_diff(const Ws& a, const Ws& b) {
  return count_diff(a.w, b.w, a.w.size()) + count_diff(a.q, b.q, a.q.size()) + count_diff(a.kr, b.kr, a.kr.size()) +
         count_diff(a.ut, b.ut, a.ut.size()) + count_diff(a.a, b.a, a.a.size()) + count_diff(a.gl, b.gl, a.gl.size()) +
         count_diff(a.t, b.t, a.t.size()) + count_diff(a.e, b.e, a.e.size()) + count_diff(a.gam, b.gam, a.gam.size()) +
         count_diff(a.bet, b.bet, a.bet.size());
}

// NaN elements among the valid chunks' W and Ũᵀ (and T with `keep_t`): every prep writes them, so
// the NaN fill left there means a store was lost.
template <typename IOT>
static size_t ws_unwritten(const Ws& ws, int chunks, int HO, int K, int V, bool keep_t = false) {
  const size_t c = static_cast<size_t>(chunks) * HO * 64;  // valid rows of 64-token chunks
  size_t n = 0;
  for (size_t i = 0; i < c * K; ++i) n += std::isnan(dec<IOT>(ws.w[i]));
  for (size_t i = 0; i < c * V; ++i) n += std::isnan(dec<IOT>(ws.ut[i]));
  if (keep_t)
    for (size_t i = 0; i < c * 64; ++i) n += std::isnan(dec<IOT>(ws.t[i]));
  return n;
}

template <typename IOT, int K, bool KEEP>
// stress (prep7's numerics; 0 = the generator of the session-6 cases, unchanged): 1 strong decay
// (gates log(0.02 .. 0.3)); 2 no decay, β in [0.9, 1], keys sharing one direction (cos ~0.9); 3 the
// same with β in [1.5, 2] (GDN-2-like, beyond the neg-eigval range); 4 a long span: no decay, β in
// [0.5, 1], keys sharing a direction (cos ~0.5).
static int run_case(const char* name, int H, int HV, int flags, int g_dt, int beta_dt, std::vector<int> lens,
                    int stress = 0) {
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
  if (stress >= 2) {  // keys = shared direction + noise
    std::vector<double> dir(K);
    for (auto& x : dir) x = uni(-1, 1);
    const double mix = stress == 4 ? 1.0 : 3.0;
    for (int i = 0; i < T * HK; ++i)
      for (int d = 0; d < K; ++d) kb[i * K + d] = enc<IOT>((mix * dir[d] + uni(-1, 1)) * (l2 ? 1.0 : 0.2 / mix));
  } else {
    for (auto& x : kb) x = enc<IOT>(uni(-1, 1) * (l2 ? 1.0 : 0.2));
  }
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
    if (stress == 0) {
      gf[i] = put(graw, g_dt, i, safe ? uni(-3, 1) : std::log(uni(0.5, 1)));
      bf[i] = put(braw, beta_dt, i, bsig ? uni(-2, 2) : uni(0, 1));
    } else {
      gf[i] = put(graw, g_dt, i, stress == 1 ? std::log(uni(0.02, 0.3)) : std::log(uni(0.995, 1)));
      const double b = stress == 3 ? uni(1.5, 2) : (stress == 2 ? uni(0.9, 1) : (stress == 4 ? uni(0.5, 1) : uni(0, 1)));
      bf[i] = put(braw, beta_dt, i, b);
    }
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

  // Every element of the whole workspace (incl. KEEP's T, E, Γ, β and the unwritten slots) of each
  // level of `levels`, run twice (cp.async landing at the wait, then at issue), against level `ref`
  // run once: {summed element differences, the reference's unwritten elements}.
  auto bitwise_levels = [&](int ref, std::initializer_list<int> levels) {
    Ws wr(max_chunks, HO, K, V);
    run_prep<IOT, K, KEEP>(ref, p, wr, chunks, HO);
    size_t diff = 0;
    for (int level : levels)
      for (int run = 0; run < 2; ++run) {
        g_cp_eager = run & 1;
        Ws w(max_chunks, HO, K, V);
        run_prep<IOT, K, KEEP>(level, p, w, chunks, HO);
        g_cp_eager = false;
        diff += ws_diff(wr, w);
      }
    return std::pair<size_t, size_t>{diff, ws_unwritten<IOT>(wr, chunks, HO, K, V)};
  };
  // One line for a bitwise_levels result; 0 when it passed.
  auto report_levels = [&](const char* levels, int ref, std::pair<size_t, size_t> r) {
    const bool ok = r.first == 0 && r.second == 0;
    printf("%-44s %s K=%3d keep=%d chunks=%3d: %s: bitwise v%d (whole workspace incl. KEEP regions, 2 runs each, cp.async late / eager) diffs %zu, v%d NaN %zu  %s\n",
           name, std::is_same_v<IOT, gdn::gdn_bf16> ? "bf16" : "fp16", K, KEEP ? 1 : 0, chunks, levels, ref, r.first,
           ref, r.second, ok ? "ok" : "FAIL");
    fflush(stdout);
    return ok ? 0 : 1;
  };
  // GDN_EMU_DUMP=FILE (session 23, bprep23; with GDN_EMU_V15): append prep15's whole workspace
  // (W, Q⁺, Kᴿ, Ũᵀ, A, Γ_last and KEEP's T, E, Γ, β, unwritten slots included) after the check, to
  // compare two builds of the headers bitwise.
  auto dump15 = [&] {
    const char* dump = getenv("GDN_EMU_DUMP");
    if (!dump) return;
    Ws w(max_chunks, HO, K, V);
    run_prep<IOT, K, KEEP>(15, p, w, chunks, HO);
    if (FILE* f = fopen(dump, "ab")) {
      for (const auto* v : {&w.w, &w.q, &w.kr, &w.ut, &w.a, &w.t, &w.e}) fwrite(v->data(), 2, v->size(), f);
      for (const auto* v : {&w.gl, &w.gam, &w.bet}) fwrite(v->data(), 4, v->size(), f);
      fclose(f);
    }
  };
  // GDN_EMU_SL=1 (session 28, pp28): the slim backward prep gdn_bwd_prep15sl (variant 17) against
  // the scalar-form prep gdn_bwd_prep15sc (16), KEEP K = 128 cases only (the others skipped): every
  // region but W and Ũᵀ (Q⁺, the scalars in the Kᴿ region, A, Γ_last, T, E, Γ, β, unwritten slots
  // included) bitwise, 2 runs (cp.async late / eager); W and Ũᵀ untouched by prep15sl (still the
  // NaN fill); prep15sc's W, Ũᵀ, T of the valid chunks written (no NaN: the check sees real data).
  if (getenv("GDN_EMU_SL")) {
    if (!(KEEP && K == 128)) return 0;
    Ws wr(max_chunks, HO, K, V);
    run_prep<IOT, K, KEEP>(16, p, wr, chunks, HO);
    size_t diff = 0, touched = 0;
    for (int run = 0; run < 2; ++run) {
      g_cp_eager = run & 1;
      Ws w(max_chunks, HO, K, V);
      run_prep<IOT, K, KEEP>(17, p, w, chunks, HO);
      g_cp_eager = false;
      diff += count_diff(wr.q, w.q, w.q.size()) + count_diff(wr.kr, w.kr, w.kr.size()) + count_diff(wr.a, w.a, w.a.size()) +
              count_diff(wr.gl, w.gl, w.gl.size()) + count_diff(wr.t, w.t, w.t.size()) + count_diff(wr.e, w.e, w.e.size()) +
              count_diff(wr.gam, w.gam, w.gam.size()) + count_diff(wr.bet, w.bet, w.bet.size());
      for (auto x : w.w) touched += x != 0xFFFF;
      for (auto x : w.ut) touched += x != 0xFFFF;
    }
    const size_t nan = ws_unwritten<IOT>(wr, chunks, HO, K, V, true);
    const bool ok = diff == 0 && touched == 0 && nan == 0;
    printf("%-44s %s K=%3d keep=1 chunks=%3d: prep15sl vs prep15sc bitwise (all but W, Ut; 2 runs, cp.async late / eager) diffs %zu, "
           "prep15sl W/Ut elements written %zu, prep15sc NaN (W, Ut, T) %zu  %s\n",
           name, std::is_same_v<IOT, gdn::gdn_bf16> ? "bf16" : "fp16", K, chunks, diff, touched, nan, ok ? "ok" : "FAIL");
    fflush(stdout);
    return ok ? 0 : 1;
  }
  // GDN_EMU_BP16=1 (session 29, bp29): gdn_bwd_prep16sl (variant 18) against gdn_bwd_prep15sl (17),
  // KEEP K = 128 cases only (the others skipped): the whole workspace (W, Q⁺, the scalars in the Kᴿ
  // region, Ũᵀ, A, Γ_last, T, E, Γ, β, unwritten slots included) bitwise, 2 runs (cp.async late /
  // eager); prep15sl's T, A of the valid chunks written (no NaN: the check sees real data).
  if (getenv("GDN_EMU_BP16")) {
    if (!(KEEP && K == 128)) return 0;
    Ws wr(max_chunks, HO, K, V);
    run_prep<IOT, K, KEEP>(17, p, wr, chunks, HO);
    size_t diff = 0, diff_c = 0;
    for (int run = 0; run < 2; ++run) {
      g_cp_eager = run & 1;
      Ws w(max_chunks, HO, K, V), wc(max_chunks, HO, K, V);
      run_prep<IOT, K, KEEP>(18, p, w, chunks, HO);
      run_prep<IOT, K, KEEP>(19, p, wc, chunks, HO);  // session 32 (pp32): prep16slc
      g_cp_eager = false;
      diff += ws_diff(wr, w);
      diff_c += ws_diff(wr, wc);
    }
    size_t nan = 0;
    const size_t c = static_cast<size_t>(chunks) * HO * 64 * 64;
    for (size_t i = 0; i < c; ++i) nan += std::isnan(dec<IOT>(wr.t[i])) + std::isnan(dec<IOT>(wr.a[i]));
    const bool ok = diff == 0 && diff_c == 0 && nan == 0;
    printf("%-44s %s K=%3d keep=1 chunks=%3d: prep16sl, prep16slc vs prep15sl bitwise (whole workspace; 2 runs, cp.async late / eager) "
           "diffs %zu, %zu, prep15sl NaN (T, A) %zu  %s\n",
           name, std::is_same_v<IOT, gdn::gdn_bf16> ? "bf16" : "fp16", K, chunks, diff, diff_c, nan, ok ? "ok" : "FAIL");
    fflush(stdout);
    return ok ? 0 : 1;
  }
  // GDN_EMU_V15=1 / GDN_EMU_V13=1: these checks alone, nothing else of the case.
  if (getenv("GDN_EMU_V15")) {
    const int r = report_levels("v15", 14, bitwise_levels(14, {15}));
    dump15();
    return r;
  }
  if (getenv("GDN_EMU_V13")) return report_levels("v13, v14", 10, bitwise_levels(10, {13, 14}));
  // GDN_EMU_FAST=1: only prep3 (the v6 reference, bitwise prep6), prep7 once and prep8 twice (the
  // session-6 bitwise checks, prep4/5/6 and prep7's second run are skipped and count as passed).
  const bool fast = getenv("GDN_EMU_FAST") != nullptr;
  // prep10 and prep11 (run with every mode) against prep9.
  // GDN_EMU_V10=1: this check alone, nothing else of the case.
  const auto [diff10, nan9] = bitwise_levels(9, {10, 11});
  if (getenv("GDN_EMU_V10")) return report_levels("v10, v11", 9, {diff10, nan9});
  Ws w1(max_chunks, HO, K, V), w3(max_chunks, HO, K, V);
  run_prep<IOT, K, KEEP>(3, p, w3, chunks, HO);
  Ws w3b(max_chunks, HO, K, V);  // a second prep3 run: with real threads a race shows as a difference
  if (!fast) {
    run_prep<IOT, K, KEEP>(2, p, w1, chunks, HO);
    run_prep<IOT, K, KEEP>(3, p, w3b, chunks, HO);
  } else {
    w1 = w3;
    w3b = w3;
  }
  // prep4 (persistent, ping-pong inputs): one block for every tile, a few blocks of several tiles
  // each, and more blocks than tiles; cp.async landing at the wait (default) and at issue (eager).
  size_t diff4 = 0;
  const unsigned tiles = static_cast<unsigned>(chunks * HO);
  // Differing elements of every factor over the first n chunks (the KEEP regions too), `ref`
  // against `got`.
  auto diff_chunks = [&](const Ws& ref, const Ws& got, size_t n) {
    size_t d = count_diff(ref.w, got.w, n * HO * C * K) + count_diff(ref.q, got.q, n * HO * C * K) +
               count_diff(ref.kr, got.kr, n * HO * C * K) + count_diff(ref.ut, got.ut, n * HO * V * C) +
               count_diff(ref.a, got.a, n * HO * C * C) + count_diff(ref.gl, got.gl, n * HO);
    if (KEEP)
      d += count_diff(ref.t, got.t, n * HO * C * C) + count_diff(ref.e, got.e, n * HO * C * K) +
           count_diff(ref.gam, got.gam, n * HO * C) + count_diff(ref.bet, got.bet, n * HO * C);
    return d;
  };
  // Differing elements of W, Ũᵀ and A over the whole workspaces (slots past the last chunk too).
  auto diff_whole = [&](const Ws& ref, const Ws& got) {
    return count_diff(ref.w, got.w, got.w.size()) + count_diff(ref.ut, got.ut, got.ut.size()) +
           count_diff(ref.a, got.a, got.a.size());
  };
  for (unsigned blocks : {1u, 3u, tiles + 2}) {
    if (fast) break;
    for (bool eager : {false, true}) {
      g_cp_eager = eager;
      Ws w4(max_chunks, HO, K, V);
      run_prep<IOT, K, KEEP>(4, p, w4, chunks, HO, blocks);
      g_cp_eager = false;
      const size_t n = chunks;
      diff4 += diff_chunks(w1, w4, n);
      // slots past the last chunk stay unwritten (NaN-filled)
      diff4 += diff_whole(w3, w4);
    }
  }

  // 1. bitwise, over the valid chunks (slots >= chunks are never written by either).
  const size_t c = chunks;
  size_t diff = diff_chunks(w1, w3, c);
  diff += diff_whole(w3, w3b) + count_diff(w3.t, w3b.t, w3.t.size()) + count_diff(w3.e, w3b.e, w3.e.size());
  // prep5 and prep6 (one tile per block), each run twice (race check).
  size_t diff56 = 0;
  for (int variant : {5, 6})
    for (int rep = 0; rep < 2 && !fast; ++rep) {
      Ws w5(max_chunks, HO, K, V);
      run_prep<IOT, K, KEEP>(variant, p, w5, chunks, HO);
      const size_t n = chunks;
      diff56 += diff_chunks(w1, w5, n);
      diff56 += diff_whole(w3, w5);
    }
  // prep7 (twice): Q⁺, Kᴿ, A, Γ_last (and KEEP's E, Γ, β) bitwise prep6's (the inverse does not
  // touch them); W, Ũᵀ (and KEEP's T) close to prep6's and to fp64 (below); the two runs bitwise
  // equal (race check) over the whole workspace.
  // Every element of two workspaces (Γ and β of KEEP too when `vectors`), and the factors a
  // tensor-core prep leaves bitwise v6's (Q⁺, Kᴿ, A, Γ_last; KEEP: E, Γ, β) over the valid chunks.
  auto ws_diff = [&](const Ws& a, const Ws& b, bool vectors) {
    size_t d = count_diff(a.w, b.w, a.w.size()) + count_diff(a.q, b.q, a.q.size()) +
               count_diff(a.kr, b.kr, a.kr.size()) + count_diff(a.ut, b.ut, a.ut.size()) +
               count_diff(a.a, b.a, a.a.size()) + count_diff(a.gl, b.gl, a.gl.size()) +
               count_diff(a.t, b.t, a.t.size()) + count_diff(a.e, b.e, a.e.size());
    if (vectors) d += count_diff(a.gam, b.gam, a.gam.size()) + count_diff(a.bet, b.bet, a.bet.size());
    return d;
  };
  auto v6_factors_diff = [&](const Ws& x) {
    const size_t n = chunks;
    size_t d = count_diff(w3.q, x.q, w3.q.size()) + count_diff(w3.kr, x.kr, w3.kr.size()) +
               count_diff(w3.a, x.a, w3.a.size()) + count_diff(w3.gl, x.gl, n * HO);
    if (KEEP)
      d += count_diff(w3.e, x.e, n * HO * C * K) + count_diff(w3.gam, x.gam, n * HO * C) +
           count_diff(w3.bet, x.bet, n * HO * C);
    return d;
  };
  Ws w7(max_chunks, HO, K, V), w7b(max_chunks, HO, K, V);
  run_prep<IOT, K, KEEP>(7, p, w7, chunks, HO);
  if (fast) w7b = w7;
  else run_prep<IOT, K, KEEP>(7, p, w7b, chunks, HO);
  const size_t diff7 = ws_diff(w7, w7b, false) + v6_factors_diff(w7);
  // prep8 (twice): the same bitwise checks as prep7's (run 2; Q⁺, Kᴿ, A, Γ_last (E, Γ, β) vs v6).
  Ws w8(max_chunks, HO, K, V), w8b(max_chunks, HO, K, V);
  run_prep<IOT, K, KEEP>(8, p, w8, chunks, HO);
  run_prep<IOT, K, KEEP>(8, p, w8b, chunks, HO);
  const size_t diff8 = ws_diff(w8, w8b, false) + v6_factors_diff(w8);
  // prep9 (twice): every element of the whole workspace (incl. KEEP's T, E, Γ, β and the unwritten
  // slots) bitwise prep8's, both runs.
  size_t diff9 = 0;
  for (int rep = 0; rep < 2; ++rep) {
    Ws w9(max_chunks, HO, K, V);
    run_prep<IOT, K, KEEP>(9, p, w9, chunks, HO);
    diff9 += ws_diff(w8, w9, true);
  }
  // max |v7 − v6| / max |v6| and ||v7 − v6|| / ||v6|| of one factor over the valid chunks.
  auto rel_v6 = [&](const std::vector<unsigned short>& a6, const std::vector<unsigned short>& a7, size_t n,
                    double& mx, double& rms) {
    double num = 0, den = 0, dmax = 0, amax = 0;
    for (size_t i = 0; i < n; ++i) {
      const double x = dec<IOT>(a6[i]), y = dec<IOT>(a7[i]);
      num += (x - y) * (x - y);
      den += x * x;
      dmax = std::max(dmax, std::fabs(x - y));
      amax = std::max(amax, std::fabs(x));
    }
    mx = dmax / std::max(amax, 1e-300);
    rms = std::sqrt(num / std::max(den, 1e-300));
  };
  double mw7, rw76, mu7, ru76, mt7 = 0, rt76 = 0;
  rel_v6(w3.w, w7.w, static_cast<size_t>(chunks) * HO * C * K, mw7, rw76);
  rel_v6(w3.ut, w7.ut, static_cast<size_t>(chunks) * HO * V * C, mu7, ru76);
  if (KEEP) rel_v6(w3.t, w7.t, static_cast<size_t>(chunks) * HO * C * C, mt7, rt76);
  double mw8, rw87, mu8, ru87, mt8 = 0, rt87 = 0;  // v8 against v7
  rel_v6(w7.w, w8.w, static_cast<size_t>(chunks) * HO * C * K, mw8, rw87);
  rel_v6(w7.ut, w8.ut, static_cast<size_t>(chunks) * HO * V * C, mu8, ru87);
  if (KEEP) rel_v6(w7.t, w8.t, static_cast<size_t>(chunks) * HO * C * C, mt8, rt87);
  const size_t nan8 = ws_unwritten<IOT>(w8, chunks, HO, K, V, KEEP);
  const size_t nan7 = ws_unwritten<IOT>(w7, chunks, HO, K, V);

  size_t nan3 = 0;
  for (size_t i = 0; i < c * HO * C * K; ++i) nan3 += std::isnan(dec<IOT>(w3.w[i])) || std::isnan(dec<IOT>(w3.q[i]));
  for (size_t i = 0; i < c * HO * V * C; ++i) nan3 += std::isnan(dec<IOT>(w3.ut[i]));
  for (size_t i = 0; i < c * HO * C * C; ++i) nan3 += std::isnan(dec<IOT>(w3.a[i]));

  // 2. fp64 W, Ũᵀ, A per (chunk, head) from the rounded inputs.
  double nw = 0, dw = 0, nu = 0, du = 0, na = 0, da = 0;
  double nw7 = 0, nu7 = 0, nt3 = 0, nt7 = 0, dt = 0;  // prep7's W, Ũ; T (KEEP) of prep6 / prep7
  double nw8 = 0, nu8 = 0, nt8 = 0;                    // prep8's
  double tmax = 0;                                      // max |T| (fp64), how far the case stresses T
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
            const double got7 = dec<IOT>(w7.w[chh * C * K + i * K + d]);
            const double got8 = dec<IOT>(w8.w[chh * C * K + i * K + d]);
            nw += (got - s) * (got - s);
            nw7 += (got7 - s) * (got7 - s);
            nw8 += (got8 - s) * (got8 - s);
            dw += s * s;
          }
          for (int d = 0; d < V; ++d) {
            double s = 0;
            for (int m = 0; m <= i; ++m) s += Tm[i * C + m] * y[m * V + d];
            const double got = dec<IOT>(w3.ut[chh * V * C + d * C + i]);
            const double got7 = dec<IOT>(w7.ut[chh * V * C + d * C + i]);
            const double got8 = dec<IOT>(w8.ut[chh * V * C + d * C + i]);
            nu += (got - s) * (got - s);
            nu7 += (got7 - s) * (got7 - s);
            nu8 += (got8 - s) * (got8 - s);
            du += s * s;
          }
          for (int j = 0; j < C; ++j) {
            double s = 0;
            if (j <= i)
              for (int d = 0; d < K; ++d) s += qn[i * K + d] * kn[j * K + d] * std::exp(gam[i] - gam[j]);
            const double got = dec<IOT>(w3.a[chh * C * C + i * C + j]);
            na += (got - s) * (got - s);
            da += s * s;
            const double tr = Tm[i * C + j];
            tmax = std::max(tmax, std::fabs(tr));
            if (KEEP) {
              const double t3 = dec<IOT>(w3.t[chh * C * C + i * C + j]), t7 = dec<IOT>(w7.t[chh * C * C + i * C + j]);
              nt3 += (t3 - tr) * (t3 - tr);
              nt7 += (t7 - tr) * (t7 - tr);
              const double t8 = dec<IOT>(w8.t[chh * C * C + i * C + j]);
              nt8 += (t8 - tr) * (t8 - tr);
              dt += tr * tr;
            }
          }
        }
      }
  const double rw = std::sqrt(nw / std::max(dw, 1e-300)), ru = std::sqrt(nu / std::max(du, 1e-300)),
               ra = std::sqrt(na / std::max(da, 1e-300));
  const bool ok = diff == 0 && diff4 == 0 && diff56 == 0 && nan3 == 0 && rw < 2e-2 && ru < 2e-2 && ra < 2e-2;
  printf("%-44s %s K=%3d keep=%d chunks=%3d: prep3 vs prep bitwise diffs %zu, prep4 %zu, prep5/6 %zu, NaN %zu; vs fp64 rms W %.2e Ut %.2e A %.2e  %s\n",
         name, sizeof(IOT) == 2 && std::is_same_v<IOT, gdn::gdn_bf16> ? "bf16" : "fp16", K, KEEP ? 1 : 0, chunks, diff,
         diff4, diff56, nan3, rw, ru, ra, ok ? "ok" : "FAIL");
  // prep7: bitwise where it must be, W / Ũᵀ (/ T) within 2e-2 of fp64 and not more than 10 % (+ 1e-4)
  // further from it than prep6.
  const double rw7 = std::sqrt(nw7 / std::max(dw, 1e-300)), ru7 = std::sqrt(nu7 / std::max(du, 1e-300));
  const double rt3 = std::sqrt(nt3 / std::max(dt, 1e-300)), rt7 = std::sqrt(nt7 / std::max(dt, 1e-300));
  const bool ok7 = diff7 == 0 && nan7 == 0 && rw7 < 2e-2 && ru7 < 2e-2 && rw7 < 1.1 * rw + 1e-4 &&
                   ru7 < 1.1 * ru + 1e-4 && (!KEEP || (rt7 < 2e-2 && rt7 < 1.1 * rt3 + 1e-4));
  printf("  v7: bitwise (run 2, Q+ Kr A gl [E gam bet] vs v6) diffs %zu, NaN %zu; vs v6 max/rms W %.1e/%.1e Ut %.1e/%.1e T %.1e/%.1e; "
         "vs fp64 rms W %.3e (v6 %.3e) Ut %.3e (v6 %.3e) T %.3e (v6 %.3e); max|T| %.1f  %s\n",
         diff7, nan7, mw7, rw76, mu7, ru76, mt7, rt76, rw7, rw, ru7, ru, rt7, rt3, tmax, ok7 ? "ok" : "FAIL");
  // prep8: as prep7's check, against prep6 / fp64 (and reported against prep7).
  const double rw8 = std::sqrt(nw8 / std::max(dw, 1e-300)), ru8 = std::sqrt(nu8 / std::max(du, 1e-300));
  const double rt8 = std::sqrt(nt8 / std::max(dt, 1e-300));
  const bool ok8 = diff8 == 0 && nan8 == 0 && rw8 < 2e-2 && ru8 < 2e-2 && rw8 < 1.1 * rw + 1e-4 &&
                   ru8 < 1.1 * ru + 1e-4 && (!KEEP || (rt8 < 2e-2 && rt8 < 1.1 * rt3 + 1e-4));
  printf("  v8: bitwise (run 2, Q+ Kr A gl [E gam bet] vs v6) diffs %zu, NaN %zu; vs v7 max/rms W %.1e/%.1e Ut %.1e/%.1e T %.1e/%.1e; "
         "vs fp64 rms W %.3e (v7 %.3e) Ut %.3e (v7 %.3e) T %.3e (v7 %.3e)  %s\n",
         diff8, nan8, mw8, rw87, mu8, ru87, mt8, rt87, rw8, rw7, ru8, ru7, rt8, rt7, ok8 ? "ok" : "FAIL");
  printf("  v9: bitwise v8 (whole workspace incl. KEEP regions, 2 runs) diffs %zu  %s\n", diff9, diff9 == 0 ? "ok" : "FAIL");
  printf("  v10, v11: bitwise v9 (whole workspace incl. KEEP regions, 2 runs each, cp.async late / eager) diffs %zu  %s\n", diff10,
         diff10 == 0 ? "ok" : "FAIL");
  fflush(stdout);
  return (ok ? 0 : 1) + (ok7 ? 0 : 1) + (ok8 ? 0 : 1) + (diff9 == 0 ? 0 : 1) + (diff10 == 0 ? 0 : 1);
}

int main(int argc, char** argv) {
  using gdn::gdn_bf16;
  using gdn::gdn_f16;
  int fails = 0;
  // Optional argument: run only the first n cases (the mutation checks run 2).
  const int max_cases = argc > 1 ? atoi(argv[1]) : 1 << 30;
  // GDN_EMU_FIRST=n skips the first n cases (e.g. 7: prep7's stress cases only).
  int cases = 0, first = getenv("GDN_EMU_FIRST") ? atoi(getenv("GDN_EMU_FIRST")) : 0;
  auto skip = [&](int n) { return n < first; };
  // name, H, HV, flags, g dtype, beta dtype, lengths
  if (cases++ < max_cases && !skip(cases - 1)) fails += run_case<gdn_bf16, 128, false>("ragged + partial + empty, fp32 gates", 2, 2, 0, 0, 0, {64, 37, 0, 130});
  if (cases++ < max_cases && !skip(cases - 1)) fails += run_case<gdn_bf16, 128, true>("bwd KEEP, l2norm + beta sigmoid, bf16 g/beta", 1, 2,
                                         gdn::FLAG_L2NORM | gdn::FLAG_BETA_SIGMOID, 1, 1, {70, 5});
  if (cases++ < max_cases && !skip(cases - 1)) fails += run_case<gdn_f16, 128, false>("fp16, GQA H=2 HV=1, safe gate, fp16 beta", 2, 1,
                                         gdn::FLAG_SAFE_GATE | gdn::FLAG_L2NORM, 0, 2, {100, 64});
  if (cases++ < max_cases && !skip(cases - 1)) fails += run_case<gdn_f16, 128, true>("fp16 bwd KEEP, neg eigval", 1, 1,
                                        gdn::FLAG_BETA_SIGMOID | gdn::FLAG_NEG_EIGVAL | gdn::FLAG_L2NORM, 2, 0, {129});
  if (cases++ < max_cases && !skip(cases - 1)) fails += run_case<gdn_bf16, 64, false>("K=V=64 bf16, GVA H=1 HV=2", 1, 2, gdn::FLAG_L2NORM, 0, 0, {90, 1});
  if (cases++ < max_cases && !skip(cases - 1)) fails += run_case<gdn_bf16, 64, true>("K=V=64 bf16 bwd KEEP, safe gate", 2, 2, gdn::FLAG_SAFE_GATE, 1, 0, {64, 0, 33});
  if (cases++ < max_cases && !skip(cases - 1)) fails += run_case<gdn_f16, 64, true>("K=V=64 fp16 bwd KEEP", 1, 1, gdn::FLAG_L2NORM, 2, 2, {150});
  // prep7's numerics (stress generators; the lines above are the session-6 cases, unchanged).
  if (cases++ < max_cases && !skip(cases - 1)) fails += run_case<gdn_bf16, 128, true>("stress: strong decay, KEEP", 1, 1, 0, 0, 0, {64, 100}, 1);
  if (cases++ < max_cases && !skip(cases - 1)) fails += run_case<gdn_bf16, 128, true>("stress: aligned keys, beta ~1, KEEP", 1, 1, 0, 0, 0, {64, 64}, 2);
  if (cases++ < max_cases && !skip(cases - 1)) fails += run_case<gdn_bf16, 128, true>("stress: aligned keys l2, beta 1.5-2, KEEP", 1, 1, gdn::FLAG_L2NORM, 0, 0, {64, 64}, 3);
  if (cases++ < max_cases && !skip(cases - 1)) fails += run_case<gdn_bf16, 128, true>("stress: long span, l2, no decay, KEEP", 1, 1, gdn::FLAG_L2NORM, 0, 0, {128}, 4);
  if (cases++ < max_cases && !skip(cases - 1)) fails += run_case<gdn_f16, 128, true>("stress: fp16 aligned keys l2, beta 1.5-2", 1, 1, gdn::FLAG_L2NORM, 0, 0, {64}, 3);
  // Session 23 (bprep23): the backward's KEEP prep at K = 128 with partial chunks and an empty
  // sequence (no GQA: the division-free heads), and with grouped q / k heads (H = 1, HV = 2) and
  // grouped v heads (H = 2, HV = 1).
  if (cases++ < max_cases && !skip(cases - 1)) fails += run_case<gdn_bf16, 128, true>("bwd KEEP, partial + empty, l2norm", 2, 2, gdn::FLAG_L2NORM, 0, 0, {130, 64, 0, 5});
  if (cases++ < max_cases && !skip(cases - 1)) fails += run_case<gdn_f16, 128, true>("fp16 bwd KEEP, GQA H=2 HV=1, safe gate", 2, 1, gdn::FLAG_SAFE_GATE | gdn::FLAG_L2NORM, 1, 2, {100, 0, 37});
  if (cases++ < max_cases && !skip(cases - 1)) fails += run_case<gdn_bf16, 128, true>("bwd KEEP, GVA H=1 HV=2, no l2norm", 1, 2, 0, 2, 1, {64, 70});
  if (g_unwaited) {
    printf("threads ended with un-waited cp.async copies: %d\n", g_unwaited.load());
    ++fails;
  }
  printf("%s: %d case(s) failed\n", fails ? "FAIL" : "PASS", fails);
  return fails ? 1 : 0;
}
