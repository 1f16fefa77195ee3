// Runs the forward half of the backward's slim piece chain (session 29, helper ps29) on the CPU with
// the emulated warpgroup MMA (bench/gdn_wgmma_emu.h, helper pr29): the slim summaries gdn_bwd_psum_sl
// (H_j, M_j, Mᵀ_j) and the seeded slim replay gdn_bwd_fscan_gxsl per piece (S_c, the U tiles), chained
// on the CPU in fp32 as gdn_bwd_pchain does (seed_{j+1} = seed_j · M_j + H_j), against an fp64
// evaluation of the replay's chunk algebra with the exact (unrounded) factors:
//   per chunk c, X = Sᵀ entering it [V][K]:  S_c = X;  Uᵀ = Ũᵀ − X Wᵀ;  X ← e^{Γ_last} X + Uᵀ Kᴿ,
//   W = T diag(β e^Γ kr) k, Ũᵀ = vᵀ diag(β) Tᵀ, Kᴿ = diag(kr e^{Γ_last−Γ}) k
// (the slim step's algebra: P' = X kᵀ, Z = vᵀ diag(β) − P' diag(ck), Uᵀ = Z Tᵀ, X += (Uᵀ diag(cr)) k);
// H_j = the fp64 replay of piece j from 0, M_j from the identity with v = 0.
// The uncut slim replay gdn_bwd_fscan_gxsl (validated on the H200, session 28) runs on the same
// inputs as the emulator's check. Every kernel runs twice (outputs NaN-refilled; the second time with
// cp.async landing at issue) and must repeat bitwise; every copy and wgmma waited for.
// Reported: relative rms errors against fp64. Checks: every error < 3e-2 (bf16) / 1e-2 (f16); the
// seeded piece replay's S_c / U errors at most 2x the uncut replay's (+1e-4); psum_sl's at most 2x
// those of psum1 (the current chain's summaries on the full form's W, Kᴿ, Ũᵀ, mma.sync) (+1e-4).
//
// Build and run (CPU machine), from the repository root:
//   g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -Ikernels/include bench/gdn_bwd_sl_host_emu.cpp -o /tmp/gdn_bwd_sl_host_emu
//   /tmp/gdn_bwd_sl_host_emu
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gdn_host_emu.h"
#include "gdn_wgmma_emu.h"
#include "gdn_bwd.cuh"
#include "gdn_bwd_chain.cuh"
#include "gdn_bwd_fscan_gx.cuh"

static int g_fails = 0;
static void check(bool ok, const char* what) {
  printf("  %-86s %s\n", what, ok ? "ok" : "FAIL");
  if (!ok) ++g_fails;
}
template <typename V>
static bool same(const V& a, const V& b) { return a.size() == b.size() && memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0; }

template <typename IOT>
static void run_case(const char* name, int H, int HV, bool l2norm, std::vector<int> lens, int P) {
  constexpr int K = 128, V = 128, C = 64;
  const bool is_bf16 = std::is_same_v<IOT, gdn::gdn_bf16>;
  const int HK = H, HO = std::max(H, HV), N = static_cast<int>(lens.size());
  printf("== %s (%s, H %d HV %d, l2norm %d, P %d, lens", name, is_bf16 ? "bf16" : "fp16", H, HV, l2norm ? 1 : 0, P);
  for (int l : lens) printf(" %d", l);
  printf(")\n");
  std::vector<int> cu{0};
  for (int l : lens) cu.push_back(cu.back() + l);
  const int T = cu.back();
  std::vector<unsigned short> kb(size_t(T) * HK * K), vb(size_t(T) * HV * V);
  for (auto& x : kb) x = enc<IOT>(uni(-1, 1) * (l2norm ? 1.0 : 0.2));
  for (auto& x : vb) x = enc<IOT>(uni(-1, 1));
  std::vector<float> g(T * HO), beta(T * HO), h0(size_t(N) * HO * V * K);
  for (auto& x : g) x = static_cast<float>(std::log(uni(0.995, 1)));  // long span: the state crosses pieces
  for (auto& x : beta) x = static_cast<float>(uni(0, 1));
  for (auto& x : h0) x = static_cast<float>(uni(-0.1, 0.1));
  auto kh = [&](int h) { return h / (HO / HK); };
  auto vh = [&](int h) { return h / (HO / HV); };
  std::vector<double> RK(T * HO);
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < HO; ++h) {
      double ks = 0;
      for (int d = 0; d < K; ++d) {
        const double kv = dec<IOT>(kb[(size_t(t) * HK + kh(h)) * K + d]);
        ks += kv * kv;
      }
      RK[t * HO + h] = l2norm ? 1 / std::sqrt(ks + 1e-6) : 1;
    }
  // ---- the slim prep's workspace (T rows io, the four scalars, Γ_last) and the fp64 factors ----
  std::vector<int> coff(N + 1, 0);
  for (int b = 0; b < N; ++b) coff[b + 1] = coff[b] + (lens[b] + C - 1) / C;
  const int slots = T / C + N;
  std::vector<unsigned short> ws_t(size_t(slots) * HO * C * C);
  std::vector<float> ws_sc(size_t(slots) * HO * 4 * C), ws_gl(slots * HO);
  std::vector<double> fW(size_t(slots) * HO * C * K, 0), fKr(fW.size(), 0), fUt(size_t(slots) * HO * V * C, 0),
      fDec(slots * HO, 0);
  for (int b = 0; b < N; ++b)
    for (int h = 0; h < HO; ++h)
      for (int c = coff[b]; c < coff[b + 1]; ++c) {
        const size_t ch = size_t(c) * HO + h;
        const int t0 = cu[b] + (c - coff[b]) * C, len = std::min(C, cu[b + 1] - t0);
        std::vector<double> gam(C), bet(C, 0), L(C * C, 0), Tm(C * C, 0);
        double acc = 0;
        for (int i = 0; i < C; ++i) {
          acc += i < len ? g[(t0 + i) * HO + h] : 0;
          gam[i] = acc;
          bet[i] = i < len ? beta[(t0 + i) * HO + h] : 0;
        }
        auto kraw = [&](int i, int d) { return i < len ? dec<IOT>(kb[(size_t(t0 + i) * HK + kh(h)) * K + d]) : 0.0; };
        auto vraw = [&](int i, int d) { return i < len ? dec<IOT>(vb[(size_t(t0 + i) * HV + vh(h)) * V + d]) : 0.0; };
        auto rk = [&](int i) { return i < len ? RK[(t0 + i) * HO + h] : 0.0; };
        for (int i = 0; i < C; ++i)
          for (int j = 0; j < i; ++j) {
            double kd = 0;
            for (int d = 0; d < K; ++d) kd += kraw(i, d) * kraw(j, d);
            L[i * C + j] = bet[i] * kd * rk(i) * rk(j) * std::exp(gam[i] - gam[j]);
          }
        for (int i = 0; i < C; ++i) {
          Tm[i * C + i] = 1;
          for (int col = 0; col < i; ++col) {
            double s = 0;
            for (int j = col; j < i; ++j) s += L[i * C + j] * Tm[j * C + col];
            Tm[i * C + col] = -s;
          }
        }
        const double gl = gam[C - 1];
        fDec[ch] = std::exp(gl);
        ws_gl[ch] = static_cast<float>(gl);
        for (int i = 0; i < C; ++i) {
          const bool live = i < len;
          const float kr = static_cast<float>(rk(i)), egf = std::exp(static_cast<float>(gam[i])),
                      erf = std::exp(static_cast<float>(gl) - static_cast<float>(gam[i])), br = static_cast<float>(bet[i]);
          ws_sc[ch * 4 * C + 0 * C + i] = live ? br * egf * kr : 0.f;
          ws_sc[ch * 4 * C + 1 * C + i] = live ? br : 0.f;
          ws_sc[ch * 4 * C + 2 * C + i] = 0.f;  // cq: not read by the forward half
          ws_sc[ch * 4 * C + 3 * C + i] = live ? kr * erf : 0.f;
          for (int d = 0; d < K; ++d) fKr[ch * C * K + size_t(i) * K + d] = kraw(i, d) * rk(i) * std::exp(gl - gam[i]);
          for (int j = 0; j < C; ++j) ws_t[ch * C * C + i * C + j] = enc<IOT>(Tm[i * C + j]);
        }
        // W = T diag(β e^Γ kr) k, Ũᵀ = vᵀ diag(β) Tᵀ.
        for (int i = 0; i < C; ++i)
          for (int j = 0; j <= i; ++j) {
            const double e = bet[j] * std::exp(gam[j]) * rk(j), tb = Tm[i * C + j];
            for (int d = 0; d < K; ++d) fW[ch * C * K + size_t(i) * K + d] += tb * e * kraw(j, d);
            for (int vi = 0; vi < V; ++vi) fUt[ch * V * C + size_t(vi) * C + i] += tb * bet[j] * vraw(j, vi);
          }
      }
  // ---- fp64: S_c and U per chunk from the initial state, H_j, M_j ----
  // One chunk's step on X [R][K] (R = V value rows, or K key rows for M_j with v = 0).
  auto step = [&](std::vector<double>& X, int c, int h, bool with_v, double* s_c, double* u) {
    const size_t ch = size_t(c) * HO + h;
    if (s_c) std::copy(X.begin(), X.end(), s_c);
    std::vector<double> ut(V * C);
    for (int r = 0; r < V; ++r)
      for (int i = 0; i < C; ++i) {
        double s = with_v ? fUt[ch * V * C + size_t(r) * C + i] : 0;
        for (int d = 0; d < K; ++d) s -= X[r * K + d] * fW[ch * C * K + size_t(i) * K + d];
        ut[r * C + i] = s;
        if (u) u[i * V + r] = s;
      }
    for (int r = 0; r < V; ++r)
      for (int d = 0; d < K; ++d) {
        double s = fDec[ch] * X[r * K + d];
        for (int i = 0; i < C; ++i) s += ut[r * C + i] * fKr[ch * C * K + size_t(i) * K + d];
        X[r * K + d] = s;
      }
  };
  const size_t hk = size_t(HO) * V * K;
  std::vector<double> rS(size_t(slots) * hk, 0), rU(size_t(slots) * HO * C * V, 0), rH(size_t(N) * (P - 1) * hk, 0),
      rM(rH.size(), 0), rMt(rH.size(), 0);
  gdn::FwdParams pr{};
  pr.chunk_offsets = coff.data();
  for (int b = 0; b < N; ++b)
    for (int h = 0; h < HO; ++h) {
      std::vector<double> X(V * K);
      for (int x = 0; x < V * K; ++x) X[x] = h0[(size_t(b) * HO + h) * V * K + x];
      for (int c = coff[b]; c < coff[b + 1]; ++c) step(X, c, h, true, &rS[(size_t(c) * HO + h) * V * K], &rU[(size_t(c) * HO + h) * C * V]);
      for (int j = 0; j < P; ++j) {
        int cb, c0, c1;
        gdn::piece_range(pr, b, j, P, cb, c0, c1);
        std::vector<double> Hj(V * K, 0), Mj(K * K, 0);
        for (int r = 0; r < K; ++r) Mj[r * K + r] = 1;
        for (int c = c0; c < c1; ++c) {
          step(Hj, c, h, true, nullptr, nullptr);
          step(Mj, c, h, false, nullptr, nullptr);
        }
        if (j <= P - 2) {
          std::copy(Hj.begin(), Hj.end(), &rH[(size_t(b) * (P - 1) + j) * hk + size_t(h) * V * K]);
          std::copy(Mj.begin(), Mj.end(), &rM[(size_t(b) * (P - 1) + j) * hk + size_t(h) * V * K]);
        }
        if (j >= 1)
          for (int r = 0; r < K; ++r)
            for (int d = 0; d < K; ++d) rMt[(size_t(b) * (P - 1) + (P - 1 - j)) * hk + size_t(h) * V * K + d * K + r] = Mj[r * K + d];
      }
    }
  // The full form's tiles (W, Kᴿ, Ũᵀ in the io dtype) for psum1, the current chain's summaries.
  std::vector<unsigned short> ws_w(fW.size()), ws_krt(fKr.size()), ws_ut(fUt.size());
  for (size_t i = 0; i < fW.size(); ++i) {
    ws_w[i] = enc<IOT>(fW[i]);
    ws_krt[i] = enc<IOT>(fKr[i]);
  }
  for (size_t i = 0; i < fUt.size(); ++i) ws_ut[i] = enc<IOT>(fUt[i]);
  // ---- kernel parameters ----
  std::vector<unsigned short> s_io(size_t(slots) * hk), dr_io(size_t(slots) * HO * C * V * 2);
  std::vector<float> wh(rH.size()), wm(rH.size()), wmt(rH.size()), seeds(size_t(N) * P * hk);
  gdn::BwdChainParams cp{};
  gdn::BwdParams& bp = cp.b;
  gdn::FwdParams& p = bp.f;
  p.k = kb.data(); p.v = vb.data(); p.g = g.data(); p.beta = beta.data();
  p.cu_seqlens = cu.data();
  p.n_seqs = N; p.h = H; p.hk = HK; p.hv = HV; p.ho = HO;
  p.g_dtype = p.beta_dtype = p.state_dtype = p.a_log_dtype = p.dt_bias_dtype = gdn::DT_F32;
  p.initial_state = h0.data();
  p.flags = gdn::FLAG_BWD_S_IO | (l2norm ? gdn::FLAG_L2NORM : 0);
  p.max_chunks = slots;
  p.chunk_offsets = coff.data();
  p.ws_kr = ws_sc.data(); p.ws_gl = ws_gl.data();
  bp.total_t = T;
  bp.ws_t = ws_t.data(); bp.ws_s = reinterpret_cast<float*>(s_io.data()); bp.ws_dr = reinterpret_cast<float*>(dr_io.data());
  cp.ws_h = wh.data(); cp.ws_m = wm.data(); cp.ws_mt = wmt.data(); cp.ws_seed = seeds.data();
  // The U tiles in the second half of the region (BwdParams::ws_u since session 38; the host's
  // layout without saved factors): io elements past the slots' io dR tiles.
  bp.ws_u = dr_io.data() + dr_io.size() / 2;
  IOT* u_tiles = gdn::bwd_u_tiles<IOT, V>(bp);
  const size_t u_off = reinterpret_cast<unsigned short*>(u_tiles) - dr_io.data();
  auto dvec = [&](const unsigned short* v, size_t n) {
    std::vector<double> r(n);
    for (size_t i = 0; i < n; ++i) r[i] = dec<IOT>(v[i]);
    return r;
  };
  auto fvec = [](const std::vector<float>& v) { return std::vector<double>(v.begin(), v.end()); };
  struct Out {
    std::vector<unsigned short> s, dr;
    std::vector<float> h, m, mt;
  };
  auto run = [&](const char* kname, U3 grid, const std::function<void()>& body) {
    Out o[2];
    for (int rep = 0; rep < 2; ++rep) {
      std::fill(s_io.begin(), s_io.end(), 0xFFFF);
      std::fill(dr_io.begin(), dr_io.end(), 0xFFFF);
      for (auto* w : {&wh, &wm, &wmt}) std::fill(w->begin(), w->end(), NAN);
      g_cp_eager = rep == 1;
      launch(grid, 128, [&] {
        body();
        dnnp::emu_wg_thread_end();
      });
      o[rep] = Out{s_io, dr_io, wh, wm, wmt};
    }
    g_cp_eager = false;
    check(same(o[0].s, o[1].s) && same(o[0].dr, o[1].dr) && same(o[0].h, o[1].h) && same(o[0].m, o[1].m) && same(o[0].mt, o[1].mt),
          (std::string(kname) + ": repeats bitwise (deferred / eager copies)").c_str());
    check(g_unwaited.load() == 0 && g_wg_unwaited.load() == 0, (std::string(kname) + ": every cp.async / wgmma waited for").c_str());
    return o[0];
  };
  const double tol = is_bf16 ? 3e-2 : 1e-2;
  const size_t used_s = size_t(coff[N]) * hk, used_u = size_t(coff[N]) * HO * C * V;
  auto head = [](std::vector<double> v, size_t n) {
    v.resize(n);
    return v;
  };
  auto err_s = [&](const Out& o) { return rms_ratio(dvec(o.s.data(), used_s), head(rS, used_s)); };
  auto err_u = [&](const Out& o) { return rms_ratio(dvec(o.dr.data() + u_off, used_u), head(rU, used_u)); };
  char buf[256];
  static_assert(gdn::FscanSlSmem<128, 2>::bytes <= sizeof(gdn::smem), "shared memory");
  static_assert(gdn::FastSmem<128, 4, 1, false>::bytes <= sizeof(gdn::smem), "shared memory");
  const U3 g_uncut{2u, unsigned(HO), unsigned(N)}, g_piece{2u, unsigned(HO), unsigned(N * P)},
      g_sum{2u, unsigned(HO), unsigned(N * (2 * P - 1))};

  // 1. The emulator against the H200-validated uncut slim replay.
  cp.pieces = 1;
  const Out ou = run("fscan_gxsl (uncut)", g_uncut, [&] { gdn::bwd_fscan_gx_body<IOT, 128, 128, 2, true, true, true>(cp); });
  printf("  %-40s %10s %10s\n", "rms vs fp64", "S_c", "U");
  printf("  %-40s %10.3e %10.3e\n", "fscan_gxsl (uncut)", err_s(ou), err_u(ou));
  check(err_s(ou) < tol && err_u(ou) < tol, "uncut slim replay within tolerance of fp64");

  // 2. The slim summaries H_j, M_j, Mᵀ_j (psum_sl).
  cp.pieces = P;
  const Out os = run("psum_sl (summaries)", g_sum,
                     [&] { gdn::bwd_psum_sl_body<IOT, 128, 128, gdn::PSUM_SL_STAGES>(cp); });
  const double eh = rms_ratio(fvec(os.h), rH), em = rms_ratio(fvec(os.m), rM), emt = rms_ratio(fvec(os.mt), rMt);
  printf("  %-40s %10s %10s %10s\n", "rms vs fp64", "H_j", "M_j", "Mt_j");
  printf("  %-40s %10.3e %10.3e %10.3e\n", "psum_sl (new)", eh, em, emt);
  check(eh < tol && em < tol && emt < tol, "psum_sl H_j, M_j, Mt_j within tolerance of fp64");
  bool mt_is_t = true;
  for (int z = 0; z < N * (P - 1); ++z)
    for (int h = 0; h < HO; ++h) {
      // Mᵀ of slot b(P−1) + (P−1−j) is M_j transposed (j in 1..P−2 appear in both).
      const int b = z / (P - 1), j = z % (P - 1);
      if (j < 1) continue;
      const float* m = &os.m[(size_t(b) * (P - 1) + j) * hk + size_t(h) * V * K];
      const float* mt = &os.mt[(size_t(b) * (P - 1) + (P - 1 - j)) * hk + size_t(h) * V * K];
      for (int r = 0; r < K; ++r)
        for (int d = 0; d < K; ++d) mt_is_t = mt_is_t && m[r * K + d] == mt[d * K + r];
    }
  check(mt_is_t, "psum_sl: Mt_j is M_j transposed bit for bit (j = 1..P-2)");
  bool untouched = true;
  for (auto x : os.s) untouched = untouched && x == 0xFFFF;
  for (auto x : os.dr) untouched = untouched && x == 0xFFFF;
  check(untouched, "psum_sl writes no S_c, no U tiles");

  // 2b. The current chain's summaries psum1 (mma.sync, the full form's W, Kᴿ, Ũᵀ) on the same
  //     inputs, for the size of the errors.
  p.ws_kr = ws_krt.data(); p.ws_w = ws_w.data(); p.ws_ut = ws_ut.data();
  const Out o1 = run("psum1 (summaries, full form)", g_sum,
                     [&] { gdn::bwd_psum_body<IOT, 128, 128, 4, 1, true, true>(cp); });
  p.ws_kr = ws_sc.data(); p.ws_w = nullptr; p.ws_ut = nullptr;
  const double fh = rms_ratio(fvec(o1.h), rH), fm = rms_ratio(fvec(o1.m), rM), fmt = rms_ratio(fvec(o1.mt), rMt);
  printf("  %-40s %10.3e %10.3e %10.3e\n", "psum1 (full form)", fh, fm, fmt);
  snprintf(buf, sizeof buf, "psum_sl errors <= 2x psum1's (H %.2e / %.2e, M %.2e / %.2e, Mt %.2e / %.2e)", eh, fh, em, fm, emt, fmt);
  check(eh <= 2 * fh + 1e-4 && em <= 2 * fm + 1e-4 && emt <= 2 * fmt + 1e-4, buf);

  // 3. The chain in fp32 on the kernel's H_j, M_j (gdn_bwd_pchain's recurrence), then the seeded
  //    slim replay per piece.
  for (int b = 0; b < N; ++b)
    for (int h = 0; h < HO; ++h) {
      std::vector<float> X(h0.begin() + (size_t(b) * HO + h) * V * K, h0.begin() + (size_t(b) * HO + h + 1) * V * K);
      for (int j = 0; j < P; ++j) {
        std::copy(X.begin(), X.end(), &seeds[(size_t(b * P + j) * HO + h) * V * K]);
        if (j == P - 1) break;
        const float* m = &os.m[(size_t(b) * (P - 1) + j) * hk + size_t(h) * V * K];
        const float* hh = &os.h[(size_t(b) * (P - 1) + j) * hk + size_t(h) * V * K];
        std::vector<float> Y(V * K);
        for (int r = 0; r < V; ++r)
          for (int d = 0; d < K; ++d) {
            float s = hh[r * K + d];
            for (int e = 0; e < K; ++e) s += X[r * K + e] * m[e * K + d];
            Y[r * K + d] = s;
          }
        X = Y;
      }
    }
  const Out op = run("fscan_gxsl (seeded per piece)", g_piece, [&] { gdn::bwd_fscan_gx_body<IOT, 128, 128, 2, true, true, true>(cp); });
  printf("  %-40s %10.3e %10.3e\n", "fscan_gxsl per piece (chain seeds)", err_s(op), err_u(op));
  snprintf(buf, sizeof buf, "seeded slim replay within tolerance, <= 2x the uncut one's (S_c %.2e / %.2e, U %.2e / %.2e)", err_s(op),
           err_s(ou), err_u(op), err_u(ou));
  check(err_s(op) < tol && err_u(op) < tol && err_s(op) <= 2 * err_s(ou) + 1e-4 && err_u(op) <= 2 * err_u(ou) + 1e-4, buf);
}

int main(int argc, char** argv) {
  const std::string only = argc > 1 ? argv[1] : "";
  auto want = [&](const char* n) { return only.empty() || only == n; };
  if (want("a")) run_case<gdn::gdn_bf16>("a: two sequences, partial chunks", 2, 2, true, {300, 700}, 3);
  if (want("b")) run_case<gdn::gdn_f16>("b: GVA, empty pieces (3 chunks, P 4)", 1, 2, true, {130, 327}, 4);
  if (want("c")) run_case<gdn::gdn_bf16>("c: no l2norm, one sequence, P 8", 1, 1, false, {1000}, 8);
  printf(g_fails ? "FAILED: %d check(s)\n" : "all ok\n", g_fails);
  return g_fails ? 1 : 0;
}
