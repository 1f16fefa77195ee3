// Runs the backward's wgmma reverse scans (kernels/include/gdn_bwd_dscan_gx.cuh) on the CPU with the
// emulated warpgroup MMA (bench/gdn_wgmma_emu.h; session 29, helper pr29): the piece chain's
// reverse half in the scalar form (gdn_bwd_dsum_sc, gdn_bwd_dscanp_ov2gxsc: raw q, k and the prep's
// four per-token scalars) against the full-form kernels on the same inputs (gdn_bwd_dsum1 and
// gdn_bwd_dscanp_ov5dr on the emulated mma.sync; gdn_bwd_dscanp_ov2gx on the emulated wgmma) and
// against an fp64 evaluation of the reverse scan's chunk algebra with the exact (unrounded)
// factors:
//   per chunk c (last first), X = dSᵀ entering it from the right:  dS'_c = X;
//   dUᵀ = X Kᴿᵀ + dOᵀ A;  dRᵀ = dUᵀ T;  X ← e^{Γ_last} X + dOᵀ Q⁺ − dRᵀ E;
//   Kᴿ = k kr e^{Γ_last−Γ}, Q⁺ = q qr e^Γ, E = β e^Γ kr k (qr carries the scale);
// the pieces' seeds (dX leaving each piece) are the fp64 X at their right boundary (rounded to
// fp32), the summaries G_j the fp64 reverse scan of piece j from X = 0.
// The emulator itself is checked first: the uncut full-form wgmma producer gdn_bwd_dscan_ov2gx
// and the scalar form's gdn_bwd_dscan_ov2gxsc (both validated on the H200, sessions 25 / 27)
// against the same reference and against gdn_bwd_dscan_ov5dr (mma.sync).
// Every kernel runs twice (outputs NaN-refilled; the second time with cp.async landing at issue,
// GDN_EMU_CP_EAGER's model) and must repeat bitwise; the summaries must leave dS', dR and the unit
// flags untouched; the seeded passes must publish every unit of their pieces once.
// Reported per output: the relative rms error against the fp64 reference (rms_ratio). Checks:
// every error < 3e-2 (bf16) / 1e-2 (f16), and each scalar-form kernel's error at most 2x the
// full-form kernel's of the same output (+1e-4).
//
// Build and run (CPU machine), from the repository root:
//   g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -Ikernels/include bench/gdn_bwd_gx_host_emu.cpp -o /tmp/gdn_bwd_gx_host_emu
//   /tmp/gdn_bwd_gx_host_emu
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gdn_host_emu.h"
#include "gdn_wgmma_emu.h"
#include "gdn_bwd.cuh"
#include "gdn_bwd_chain.cuh"
#include "gdn_bwd_dscan_gx.cuh"

static int g_fails = 0;
static void check(bool ok, const char* what) {
  printf("  %-78s %s\n", what, ok ? "ok" : "FAIL");
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
  const float scale = 1.f / std::sqrt(static_cast<float>(K));
  std::vector<unsigned short> qb(size_t(T) * H * K), kb(size_t(T) * HK * K), dob(size_t(T) * HO * V);
  for (auto& x : qb) x = enc<IOT>(uni(-1, 1));
  for (auto& x : kb) x = enc<IOT>(uni(-1, 1) * (l2norm ? 1.0 : 0.2));
  for (auto& x : dob) x = enc<IOT>(uni(-1, 1));
  std::vector<float> g(T * HO), beta(T * HO), dfs(size_t(N) * HO * V * K);
  for (auto& x : g) x = static_cast<float>(std::log(uni(0.995, 1)));  // long span: dX crosses pieces
  for (auto& x : beta) x = static_cast<float>(uni(0, 1));
  for (auto& x : dfs) x = static_cast<float>(uni(-0.1, 0.1));
  auto qh = [&](int h) { return h / (HO / H); };
  std::vector<double> RQ(T * HO), RK(T * HO);
  for (int t = 0; t < T; ++t)
    for (int h = 0; h < HO; ++h) {
      double qs = 0, ks = 0;
      for (int d = 0; d < K; ++d) {
        const double qv = dec<IOT>(qb[(size_t(t) * H + qh(h)) * K + d]), kv = dec<IOT>(kb[(size_t(t) * HK + qh(h)) * K + d]);
        qs += qv * qv;
        ks += kv * kv;
      }
      RQ[t * HO + h] = scale * (l2norm ? 1 / std::sqrt(qs + 1e-6) : 1);
      RK[t * HO + h] = l2norm ? 1 / std::sqrt(ks + 1e-6) : 1;
    }
  // ---- the prep's workspace (full form and scalar form) and the fp64 factors ----
  std::vector<int> coff(N + 1, 0);
  for (int b = 0; b < N; ++b) coff[b + 1] = coff[b] + (lens[b] + C - 1) / C;
  const int slots = T / C + N;
  std::vector<unsigned short> ws_q(size_t(slots) * HO * C * K), ws_kr(size_t(slots) * HO * C * K), ws_a(size_t(slots) * HO * C * C),
      ws_t(size_t(slots) * HO * C * C), ws_e(size_t(slots) * HO * C * K);
  std::vector<float> ws_sc(size_t(slots) * HO * 4 * C), ws_gl(slots * HO);
  // fp64 factors per (chunk, head): Kᴿ, Q⁺, E [C][K], A, T [C][C], e^{Γ_last}.
  std::vector<double> fKr(size_t(slots) * HO * C * K, 0), fQp(fKr.size(), 0), fE(fKr.size(), 0), fA(size_t(slots) * HO * C * C, 0),
      fT(fA.size(), 0), fDec(slots * HO, 0);
  for (int b = 0; b < N; ++b)
    for (int h = 0; h < HO; ++h)
      for (int c = coff[b]; c < coff[b + 1]; ++c) {
        const size_t ch = size_t(c) * HO + h;
        const int t0 = cu[b] + (c - coff[b]) * C, len = std::min(C, cu[b + 1] - t0);
        std::vector<double> gam(C), bet(C, 0), L(C * C, 0);
        double acc = 0;
        for (int i = 0; i < C; ++i) {
          acc += i < len ? g[(t0 + i) * HO + h] : 0;
          gam[i] = acc;
          bet[i] = i < len ? beta[(t0 + i) * HO + h] : 0;
        }
        auto kraw = [&](int i, int d) { return i < len ? dec<IOT>(kb[(size_t(t0 + i) * HK + qh(h)) * K + d]) : 0.0; };
        auto qraw = [&](int i, int d) { return i < len ? dec<IOT>(qb[(size_t(t0 + i) * H + qh(h)) * K + d]) : 0.0; };
        auto rk = [&](int i) { return i < len ? RK[(t0 + i) * HO + h] : 0.0; };
        auto rq = [&](int i) { return i < len ? RQ[(t0 + i) * HO + h] : 0.0; };
        for (int i = 0; i < C; ++i)
          for (int j = 0; j <= i; ++j) {
            double kd = 0, qd = 0;
            for (int d = 0; d < K; ++d) {
              kd += kraw(i, d) * kraw(j, d);
              qd += qraw(i, d) * kraw(j, d);
            }
            kd *= rk(i) * rk(j);
            qd *= rq(i) * rk(j);
            const double dc = std::exp(gam[i] - gam[j]);
            if (j < i) L[i * C + j] = bet[i] * kd * dc;
            fA[ch * C * C + i * C + j] = qd * dc;
          }
        double* Tm = &fT[ch * C * C];
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
          const double eg = std::exp(gam[i]), er = std::exp(gl - gam[i]);
          // The four scalars as the prep computes them (fp32 from its fp32 row inputs).
          const bool live = i < len;
          const float kr = static_cast<float>(rk(i)), qr = static_cast<float>(rq(i)), egf = std::exp(static_cast<float>(gam[i])),
                      erf = std::exp(static_cast<float>(gl) - static_cast<float>(gam[i])), br = static_cast<float>(bet[i]);
          ws_sc[ch * 4 * C + 0 * C + i] = live ? br * egf * kr : 0.f;
          ws_sc[ch * 4 * C + 1 * C + i] = live ? br : 0.f;
          ws_sc[ch * 4 * C + 2 * C + i] = live ? qr * egf : 0.f;
          ws_sc[ch * 4 * C + 3 * C + i] = live ? kr * erf : 0.f;
          for (int d = 0; d < K; ++d) {
            const size_t e = ch * C * K + size_t(i) * K + d;
            fKr[e] = kraw(i, d) * rk(i) * er;
            fQp[e] = qraw(i, d) * rq(i) * eg;
            fE[e] = bet[i] * eg * rk(i) * kraw(i, d);
            ws_kr[e] = enc<IOT>(fKr[e]);
            ws_q[e] = enc<IOT>(fQp[e]);
            ws_e[e] = enc<IOT>(fE[e]);
          }
          for (int j = 0; j < C; ++j) {
            ws_a[ch * C * C + i * C + j] = enc<IOT>(fA[ch * C * C + i * C + j]);
            ws_t[ch * C * C + i * C + j] = enc<IOT>(Tm[i * C + j]);
          }
        }
      }
  // ---- fp64 reverse scan: dS', dR per chunk, d_initial_state, the piece seeds and summaries ----
  auto dOv = [&](int b, int c, int h, int i, int vi) {
    const int t = cu[b] + (c - coff[b]) * C + i;
    return t < cu[b + 1] ? dec<IOT>(dob[(size_t(t) * HO + h) * V + vi]) : 0.0;
  };
  // One chunk's step on X [V][K]; dS' and dR (if given) of the chunk.
  auto step = [&](std::vector<double>& X, int b, int c, int h, double* ds, double* dr) {
    const size_t ch = size_t(c) * HO + h;
    if (ds) std::copy(X.begin(), X.end(), ds);
    std::vector<double> du(V * C, 0), drt(V * C, 0), dO(C * V);
    for (int i = 0; i < C; ++i)
      for (int vi = 0; vi < V; ++vi) dO[i * V + vi] = dOv(b, c, h, i, vi);
    for (int vi = 0; vi < V; ++vi)
      for (int i = 0; i < C; ++i) {
        double s = 0;
        for (int d = 0; d < K; ++d) s += X[vi * K + d] * fKr[ch * C * K + size_t(i) * K + d];
        for (int j = 0; j < C; ++j) s += dO[j * V + vi] * fA[ch * C * C + j * C + i];
        du[vi * C + i] = s;
      }
    for (int vi = 0; vi < V; ++vi)
      for (int j = 0; j < C; ++j) {
        double s = 0;
        for (int i = 0; i < C; ++i) s += du[vi * C + i] * fT[ch * C * C + i * C + j];
        drt[vi * C + j] = s;
        if (dr) dr[j * V + vi] = s;
      }
    for (int vi = 0; vi < V; ++vi)
      for (int d = 0; d < K; ++d) {
        double s = fDec[ch] * X[vi * K + d];
        for (int i = 0; i < C; ++i)
          s += dO[i * V + vi] * fQp[ch * C * K + size_t(i) * K + d] - drt[vi * C + i] * fE[ch * C * K + size_t(i) * K + d];
        X[vi * K + d] = s;
      }
  };
  std::vector<double> rds(size_t(slots) * HO * V * K, 0), rdr(size_t(slots) * HO * C * V, 0), rdis(size_t(N) * HO * V * K),
      rG(size_t(N) * std::max(P - 1, 1) * HO * V * K, 0);
  std::vector<float> seeds(size_t(N) * P * HO * V * K, 0);
  gdn::FwdParams pr{};
  pr.chunk_offsets = coff.data();
  for (int b = 0; b < N; ++b)
    for (int h = 0; h < HO; ++h) {
      std::vector<double> X(V * K);
      for (int x = 0; x < V * K; ++x) X[x] = dfs[(size_t(b) * HO + h) * V * K + x];
      for (int j = P - 1; j >= 0; --j) {
        int cb, c0, c1;
        gdn::piece_range(pr, b, j, P, cb, c0, c1);
        float* sd = &seeds[(size_t(b * P + (P - 1 - j)) * HO + h) * V * K];
        for (int x = 0; x < V * K; ++x) sd[x] = static_cast<float>(X[x]);
        for (int c = c1 - 1; c >= c0; --c)
          step(X, b, c, h, &rds[(size_t(c) * HO + h) * V * K], &rdr[(size_t(c) * HO + h) * C * V]);
        if (j >= 1) {
          std::vector<double> G(V * K, 0);
          for (int c = c1 - 1; c >= c0; --c) step(G, b, c, h, nullptr, nullptr);
          std::copy(G.begin(), G.end(), &rG[((size_t(b) * (P - 1) + (P - 1 - j)) * HO + h) * V * K]);
        }
      }
      for (int x = 0; x < V * K; ++x) rdis[(size_t(b) * HO + h) * V * K + x] = X[x];
    }
  // ---- kernel parameters ----
  std::vector<unsigned short> ds_io(size_t(slots) * HO * V * K), dr_io(size_t(slots) * HO * C * V * 2);
  std::vector<float> dis(size_t(N) * HO * V * K), Gk(rG.size()), pc_m(1), pc_mt(1);
  std::vector<unsigned> flags(size_t(slots) * HO);
  gdn::BwdChainParams cp{};
  gdn::BwdParams& bp = cp.b;
  gdn::FwdParams& p = bp.f;
  p.q = qb.data(); p.k = kb.data(); p.g = g.data(); p.beta = beta.data();
  p.cu_seqlens = cu.data();
  p.n_seqs = N; p.h = H; p.hk = HK; p.hv = HV; p.ho = HO;
  p.g_dtype = p.beta_dtype = p.state_dtype = p.a_log_dtype = p.dt_bias_dtype = gdn::DT_F32;
  p.scale = scale;
  p.flags = l2norm ? gdn::FLAG_L2NORM : 0;
  p.max_chunks = slots;
  p.chunk_offsets = coff.data();
  p.ws_q = ws_q.data(); p.ws_a = ws_a.data(); p.ws_gl = ws_gl.data();
  bp.d_o = dob.data(); bp.d_final_state = dfs.data(); bp.d_initial_state = dis.data();
  bp.total_t = T;
  bp.ws_t = ws_t.data(); bp.ws_e = ws_e.data(); bp.ws_ds = reinterpret_cast<float*>(ds_io.data()); bp.ws_dr = reinterpret_cast<float*>(dr_io.data());
  cp.pieces = P;
  cp.ws_h = Gk.data(); cp.ws_seed = seeds.data(); cp.ws_m = pc_m.data(); cp.ws_mt = pc_mt.data();
  cp.ov_flags = flags.data();
  auto scalar_form = [&](bool sc) { p.ws_kr = sc ? static_cast<void*>(ws_sc.data()) : static_cast<void*>(ws_kr.data()); };
  auto dvec = [&](const std::vector<unsigned short>& v) {
    std::vector<double> r(v.size());
    for (size_t i = 0; i < v.size(); ++i) r[i] = dec<IOT>(v[i]);
    return r;
  };
  // Runs `body` twice (deferred / eager cp.async) over NaN-refilled outputs; returns the first run's
  // outputs, which the second must repeat bitwise.
  struct Out {
    std::vector<unsigned short> ds, dr;
    std::vector<float> dis, G;
    std::vector<unsigned> flags;
  };
  auto run = [&](const char* kname, U3 grid, unsigned threads, const std::function<void()>& body) {
    Out o[2];
    for (int rep = 0; rep < 2; ++rep) {
      std::fill(ds_io.begin(), ds_io.end(), 0xFFFF);
      std::fill(dr_io.begin(), dr_io.end(), 0xFFFF);
      std::fill(dis.begin(), dis.end(), NAN);
      std::fill(Gk.begin(), Gk.end(), NAN);
      std::fill(flags.begin(), flags.end(), 0u);
      g_cp_eager = rep == 1;
      launch(grid, threads, [&] {
        body();
        dnnp::emu_wg_thread_end();
      });
      o[rep] = Out{ds_io, dr_io, dis, Gk, flags};
    }
    g_cp_eager = false;
    const bool rep_ok = same(o[0].ds, o[1].ds) && same(o[0].dr, o[1].dr) && same(o[0].dis, o[1].dis) && same(o[0].G, o[1].G) &&
                        same(o[0].flags, o[1].flags);
    check(rep_ok, (std::string(kname) + ": repeats bitwise (deferred / eager copies)").c_str());
    check(g_unwaited.load() == 0 && g_wg_unwaited.load() == 0, (std::string(kname) + ": every cp.async / wgmma waited for").c_str());
    return o[0];
  };
  const double tol = is_bf16 ? 3e-2 : 1e-2;
  // Relative rms errors of dS' / dR over the chunks of `pieces` (all), d_initial_state, G.
  // (the chunks in use: slots past coff[N] hold no unit)
  const size_t used_ds = size_t(coff[N]) * HO * V * K, used_dr = size_t(coff[N]) * HO * C * V;
  auto head = [](std::vector<double> v, size_t n) {
    v.resize(n);
    return v;
  };
  auto err_ds = [&](const Out& o) { return rms_ratio(head(dvec(o.ds), used_ds), head(rds, used_ds)); };
  auto err_dr = [&](const Out& o) { return rms_ratio(head(dvec(o.dr), used_dr), head(rdr, used_dr)); };
  auto rel = [&](const Out& a, const Out& b) {  // dS' of a against b's
    return rms_ratio(head(dvec(a.ds), used_ds), head(dvec(b.ds), used_ds));
  };
  auto err_dis = [&](const Out& o) { return rms_ratio(std::vector<double>(o.dis.begin(), o.dis.end()), rdis); };
  auto err_g = [&](const Out& o) { return rms_ratio(std::vector<double>(o.G.begin(), o.G.end()), rG); };
  auto flags_all = [&](const Out& o, unsigned want) {
    for (int b = 0; b < N; ++b)
      for (int c = coff[b]; c < coff[b + 1]; ++c)
        for (int h = 0; h < HO; ++h)
          if (o.flags[size_t(c) * HO + h] != want) return false;
    return true;
  };
  char buf[256];
  using S8 = gdn::DscanGxSmem<128, 8, 2>;
  using S8sc = gdn::DscanGxSmem<128, 8, 2, true>;
  static_assert(S8::bytes_r2 <= sizeof(gdn::smem) && S8sc::bytes_r2 <= sizeof(gdn::smem), "shared memory");
  const U3 g_uncut{1u, unsigned(HO), unsigned(N)}, g_piece{1u, unsigned(HO), unsigned(N * P)},
      g_sum{1u, unsigned(HO), unsigned(N * (P - 1))}, g_sum1{2u, unsigned(HO), unsigned(N * (P - 1))};

  // 1. The emulator against the H200-validated uncut producers.
  scalar_form(false);
  const Out u5 = run("dscan_ov5dr (uncut, mma.sync)", g_uncut, 288,
                     [&] { gdn::bwd_dscan_mma_body<IOT, 128, 128, 8, 2, true, true, true, true, true>(bp, cp.ov_flags); });
  const Out ugx = run("dscan_ov2gx (uncut, wgmma)", g_uncut, 256, [&] { gdn::bwd_dscan_gx_body<IOT, 128, 128, 8, 2>(bp, cp.ov_flags); });
  scalar_form(true);
  const Out usc = run("dscan_ov2gxsc (uncut, wgmma, scalar form)", g_uncut, 256,
                      [&] { gdn::bwd_dscan_gx_body<IOT, 128, 128, 8, 2, true>(bp, cp.ov_flags); });
  printf("  %-34s %10s %10s %10s\n", "rms vs fp64", "dS'", "dR", "dX_init");
  for (auto [nm, o] : {std::pair<const char*, const Out*>{"dscan_ov5dr", &u5}, {"dscan_ov2gx", &ugx}, {"dscan_ov2gxsc", &usc}})
    printf("  %-34s %10.3e %10.3e %10.3e\n", nm, err_ds(*o), err_dr(*o), err_dis(*o));
  for (auto* o : {&u5, &ugx, &usc}) check(err_ds(*o) < tol && err_dr(*o) < tol && err_dis(*o) < tol, "uncut producer within tolerance of fp64");
  check(err_ds(ugx) <= 2 * err_ds(u5) + 1e-4 && err_dr(ugx) <= 2 * err_dr(u5) + 1e-4 && err_dis(ugx) <= 2 * err_dis(u5) + 1e-4,
        "emulated wgmma ov2gx as close to fp64 as mma.sync ov5dr (2x)");
  check(flags_all(u5, 1) && flags_all(ugx, 1) && flags_all(usc, 1), "uncut producers publish every unit");
  snprintf(buf, sizeof buf, "dS' rel rms: ov2gx vs ov5dr %.2e, ov2gxsc vs ov5dr %.2e (not bitwise: other sums)", rel(ugx, u5), rel(usc, u5));
  check(rel(ugx, u5) < tol && rel(usc, u5) < tol, buf);

  // 2. The seeded piece passes: full form (ov5dr, ov2gx) vs the scalar form (ov2gxsc).
  scalar_form(false);
  const Out p5 = run("dscanp_ov5dr (pieces, mma.sync)", g_piece, 288, [&] {
    gdn::bwd_dscan_piece_body<IOT, 128, 128, 8, 2, false, true, true, false, true, true>(cp);
  });
  const Out pgx = run("dscanp_ov2gx (pieces, wgmma)", g_piece, 256, [&] { gdn::bwd_dscanp_gx_body<IOT, 128, 128, 8, 2>(cp); });
  scalar_form(true);
  const Out psc = run("dscanp_ov2gxsc (pieces, wgmma, scalar form)", g_piece, 256,
                      [&] { gdn::bwd_dscanp_gx_body<IOT, 128, 128, 8, 2, true>(cp); });
  for (auto [nm, o] : {std::pair<const char*, const Out*>{"dscanp_ov5dr", &p5}, {"dscanp_ov2gx", &pgx}, {"dscanp_ov2gxsc (new)", &psc}})
    printf("  %-34s %10.3e %10.3e %10.3e\n", nm, err_ds(*o), err_dr(*o), err_dis(*o));
  check(err_ds(psc) < tol && err_dr(psc) < tol && err_dis(psc) < tol, "dscanp_ov2gxsc within tolerance of fp64");
  const double fds = std::max(err_ds(p5), err_ds(pgx)), fdr = std::max(err_dr(p5), err_dr(pgx)), fdi = std::max(err_dis(p5), err_dis(pgx));
  snprintf(buf, sizeof buf, "dscanp_ov2gxsc errors <= 2x the full form's (dS' %.2e/%.2e dR %.2e/%.2e dXi %.2e/%.2e)", err_ds(psc), fds,
           err_dr(psc), fdr, err_dis(psc), fdi);
  check(err_ds(psc) <= 2 * fds + 1e-4 && err_dr(psc) <= 2 * fdr + 1e-4 && err_dis(psc) <= 2 * fdi + 1e-4, buf);
  check(flags_all(p5, 1) && flags_all(pgx, 1) && flags_all(psc, 1), "seeded passes publish every unit of every piece");
  // The seeded pass over all pieces from exact seeds = the uncut scan up to the seeds' rounding.
  snprintf(buf, sizeof buf, "dS' rel rms: dscanp_ov2gxsc vs dscan_ov2gxsc (uncut) %.2e, vs dscanp_ov5dr %.2e", rel(psc, usc), rel(psc, p5));
  check(rel(psc, usc) < tol && rel(psc, p5) < tol, buf);

  // 3. The reverse summaries G_j: dsum1 (mma.sync, full form) vs dsum_sc (wgmma, scalar form).
  if (P > 1) {
    scalar_form(false);
    const Out s1 = run("dsum1 (summaries, mma.sync, one phased stage)", g_sum1, 128,
                       [&] { gdn::bwd_dscan_piece_body<IOT, 128, 128, 4, 1, true, false, false, true>(cp); });
    scalar_form(true);
    const Out ssc = run("dsum_sc (summaries, wgmma, scalar form)", g_sum, 256,
                        [&] { gdn::bwd_dscanp_gx_body<IOT, 128, 128, 8, 2, true, true>(cp); });
    printf("  %-34s %10s\n", "rms vs fp64", "G_j");
    printf("  %-34s %10.3e\n  %-34s %10.3e\n", "dsum1", err_g(s1), "dsum_sc (new)", err_g(ssc));
    check(err_g(ssc) < tol, "dsum_sc G_j within tolerance of fp64");
    snprintf(buf, sizeof buf, "dsum_sc G_j error <= 2x dsum1's (%.2e / %.2e); rel rms dsum_sc vs dsum1 %.2e", err_g(ssc), err_g(s1),
             rms_ratio(std::vector<double>(ssc.G.begin(), ssc.G.end()), std::vector<double>(s1.G.begin(), s1.G.end())));
    check(err_g(ssc) <= 2 * err_g(s1) + 1e-4, buf);
    bool untouched = flags_all(ssc, 0);
    for (auto x : ssc.ds) untouched = untouched && x == 0xFFFF;
    for (auto x : ssc.dr) untouched = untouched && x == 0xFFFF;
    for (auto x : ssc.dis) untouched = untouched && std::isnan(x);
    check(untouched, "dsum_sc writes no dS', dR, d_initial_state, flags");
  }
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
