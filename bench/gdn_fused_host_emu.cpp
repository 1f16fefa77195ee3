// Runs the fused GDN forward (gdn::fwd_fused_body, kernels/include/gdn_fwd_fused.cuh) on the CPU,
// both schedules (warp-specialised WS and sequential), next to the device-validated two-kernel
// path it replaces (prep3 = gdn::fwd_prep3_body, then the 4-warp output scan
// gdn::fwd_scanx_body<.., 4, 3, true> with one piece), one std::thread per CUDA thread
// (bench/gdn_host_emu.h: real barriers, named barriers, warp-collective mma.sync / ldmatrix /
// cp.async emulation, NaN-filled shared memory per block).
//
// Checks, per case (ragged batches with partial chunks, empty and 1-token sequences, GQA / GVA,
// bf16 / fp16, K = V = 64 / 128, gate and beta transforms, fp32 / bf16 states, a state_indices
// pool, final state aliasing the initial state):
//  1. O and the final state of each fused schedule are bitwise those of prep3 + scanx_w4 (O is
//     NaN-filled first, so an unwritten element fails), and a second WS run equals the first;
//  2. O against an fp64 per-token recurrence from the same rounded inputs (relative rms, spec
//     §9.2 tolerance: 2e-2 bf16, 1e-2 fp16), and the final state likewise.
//
// Build and run (CPU machine), from the repository root:
//   g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -Ikernels/include bench/gdn_fused_host_emu.cpp -o /tmp/gdn_fused_host_emu
//   /tmp/gdn_fused_host_emu
#include <cstdio>
#include <cstdlib>
#include <algorithm>
#include <string>
#include <type_traits>

#include "gdn_host_emu.h"
#include "gdn_fwd_prep3.cuh"
#include "gdn_fwd_fused.cuh"

template <typename T>
static size_t count_diff(const std::vector<T>& a, const std::vector<T>& b) {
  size_t d = 0;
  for (size_t i = 0; i < a.size(); ++i) d += memcmp(&a[i], &b[i], sizeof(T)) != 0;
  return d;
}

template <typename IOT, int K>
static int run_case(const char* name, int H, int HV, int flags, int g_dt, int beta_dt, int state_dt, bool pool,
                    bool alias, std::vector<int> lens) {
  constexpr int V = K, C = 64;
  const int HK = H, HO = std::max(H, HV), N = static_cast<int>(lens.size());
  std::vector<int> cu{0}, offs{0};
  for (int l : lens) {
    cu.push_back(cu.back() + l);
    offs.push_back(offs.back() + (l + C - 1) / C);
  }
  const int T = cu.back(), max_chunks = T / C + N;
  const bool l2 = flags & gdn::FLAG_L2NORM, safe = flags & gdn::FLAG_SAFE_GATE, bsig = flags & gdn::FLAG_BETA_SIGMOID;
  std::vector<unsigned short> qb(T * H * K), kb(T * HK * K), vb(T * HV * V);
  for (auto& x : qb) x = enc<IOT>(uni(-1, 1));
  for (auto& x : kb) x = enc<IOT>(uni(-1, 1) * (l2 ? 1.0 : 0.15));
  for (auto& x : vb) x = enc<IOT>(uni(-1, 1));
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
  // States: rows [N | pool, HO, V, K]; the pool maps sequence b to row idx[b].
  const int rows = pool ? N + 2 : N;
  std::vector<int> idx(N);
  for (int b = 0; b < N; ++b) idx[b] = pool ? (N + 1 - b) : b;
  const size_t sn = static_cast<size_t>(rows) * HO * V * K;
  std::vector<float> s0f(sn);
  std::vector<unsigned short> s0b(sn);
  for (size_t i = 0; i < sn; ++i) {
    s0f[i] = static_cast<float>(uni(-0.3, 0.3));
    s0b[i] = enc<gdn::gdn_bf16>(s0f[i]);
    if (state_dt == gdn::DT_BF16) s0f[i] = static_cast<float>(dec<gdn::gdn_bf16>(s0b[i]));
  }

  gdn::FwdParams p{};
  p.q = qb.data();
  p.k = kb.data();
  p.v = vb.data();
  p.g = graw.data();
  p.beta = braw.data();
  p.cu_seqlens = cu.data();
  p.state_indices = pool ? idx.data() : nullptr;
  p.a_log = safe ? alog.data() : nullptr;
  p.dt_bias = safe ? dtb.data() : nullptr;
  p.n_seqs = N;
  p.h = H;
  p.hk = HK;
  p.hv = HV;
  p.ho = HO;
  p.g_dtype = g_dt;
  p.beta_dtype = beta_dt;
  p.state_dtype = state_dt;
  p.a_log_dtype = p.dt_bias_dtype = gdn::DT_F32;
  p.scale = scale;
  p.flags = flags;
  p.max_chunks = max_chunks;
  p.chunk_offsets = offs.data();

  // Output buffers: O (NaN-filled bits) and the state (fp32 or bf16 words in a byte vector).
  struct Out {
    std::vector<unsigned short> o;
    std::vector<unsigned char> st;
  };
  const size_t sbytes = sn * (state_dt == gdn::DT_F32 ? 4 : 2);
  auto init_state = [&](std::vector<unsigned char>& st) {
    st.resize(sbytes);
    if (state_dt == gdn::DT_F32) memcpy(st.data(), s0f.data(), sbytes);
    else memcpy(st.data(), s0b.data(), sbytes);
  };
  auto fresh = [&] {
    Out r;
    r.o.assign(static_cast<size_t>(T) * HO * V, 0xFFFF);
    r.st.assign(sbytes, 0xFF);
    return r;
  };
  std::vector<unsigned char> sin;
  init_state(sin);
  const U3 grid{static_cast<unsigned>(V / 64), static_cast<unsigned>(HO), static_cast<unsigned>(N)};

  // 1. the two-kernel path: prep3 into a NaN-filled workspace, then scanx_w4.
  Out old = fresh();
  {
    const size_t slots = static_cast<size_t>(max_chunks) * HO;
    std::vector<unsigned short> w(slots * C * K, 0xFFFF), q(w.size(), 0xFFFF), kr(w.size(), 0xFFFF),
        ut(slots * V * C, 0xFFFF), a(slots * C * C, 0xFFFF);
    std::vector<float> gl(slots, NAN);
    gdn::FwdParams pp = p;
    pp.initial_state = sin.data();
    pp.final_state = old.st.data();
    pp.o = old.o.data();
    pp.ws_w = w.data();
    pp.ws_q = q.data();
    pp.ws_kr = kr.data();
    pp.ws_ut = ut.data();
    pp.ws_a = a.data();
    pp.ws_gl = gl.data();
    launch({static_cast<unsigned>(max_chunks), static_cast<unsigned>(HO), 1}, gdn::PREP3_THREADS,
           [&] { gdn::fwd_prep3_body<IOT, K, K>(pp); });
    gdn::FwdFastParams fp{};
    fp.f = pp;
    fp.pieces = 1;
    launch(grid, 128, [&] { gdn::fwd_scanx_body<IOT, K, K, 4, 3, true>(fp); });
  }
  // 2. fused, both schedules (WS twice; with `alias`, the WS runs update the state in place).
  auto run_fused = [&](bool ws) {
    Out r = fresh();
    gdn::FwdParams pf = p;
    pf.chunk_offsets = nullptr;  // the fused kernel reads no workspace
    pf.ws_w = pf.ws_q = pf.ws_kr = pf.ws_ut = pf.ws_a = nullptr;
    pf.ws_gl = nullptr;
    std::vector<unsigned char> s_in = sin;
    if (ws && alias) {
      r.st = s_in;
      pf.initial_state = r.st.data();
    } else {
      pf.initial_state = s_in.data();
    }
    pf.final_state = r.st.data();
    pf.o = r.o.data();
    if (ws) launch(grid, gdn::FUSED_WS_THREADS, [&] { gdn::fwd_fused_body<IOT, K, K, true>(pf); });
    else launch(grid, gdn::FUSED_SEQ_THREADS, [&] { gdn::fwd_fused_body<IOT, K, K, false>(pf); });
    return r;
  };
  Out fw = run_fused(true), fw2 = run_fused(true), fs = run_fused(false);
  // Rows of the pool no sequence maps to keep the input values in the aliased run only; compare
  // the mapped rows.
  auto state_diff = [&](const Out& a, const Out& b) {
    size_t d = 0;
    const size_t esz = state_dt == gdn::DT_F32 ? 4 : 2, per = static_cast<size_t>(HO) * V * K * esz;
    for (int bq = 0; bq < N; ++bq) {
      const size_t off = static_cast<size_t>(idx[bq]) * per;
      for (size_t i = 0; i < per; i += esz) d += memcmp(&a.st[off + i], &b.st[off + i], esz) != 0;
    }
    return d;
  };
  const size_t d_ws = count_diff(old.o, fw.o) + state_diff(old, fw);
  const size_t d_seq = count_diff(old.o, fs.o) + state_diff(old, fs);
  const size_t d_rep = count_diff(fw.o, fw2.o) + state_diff(fw, fw2);
  size_t nan_o = 0;
  for (auto x : fw.o) nan_o += std::isnan(dec<IOT>(x));
  if (getenv("GDN_EMU_DEBUG")) {
    size_t n_old = 0, n_seq = 0;
    for (auto x : old.o) n_old += std::isnan(dec<IOT>(x));
    for (auto x : fs.o) n_seq += std::isnan(dec<IOT>(x));
    printf("debug: NaN in O old %zu seq %zu ws %zu; O diffs ws %zu seq %zu; state diffs ws %zu seq %zu\n", n_old, n_seq, nan_o,
           count_diff(old.o, fw.o), count_diff(old.o, fs.o), state_diff(old, fw), state_diff(old, fs));
    for (size_t i = 0; i < old.o.size(); ++i)
      if (memcmp(&old.o[i], &fw.o[i], 2)) {
        const size_t v = i % V, hh = (i / V) % HO, t = i / V / HO;
        printf("first O diff at token %zu head %zu v %zu: old %g ws %g seq %g\n", t, hh, v, dec<IOT>(old.o[i]), dec<IOT>(fw.o[i]), dec<IOT>(fs.o[i]));
        break;
      }
  }

  // 3. fp64 per-token recurrence (math domain S = Xᵀ, K×V) from the rounded inputs.
  double no = 0, dno = 0, ns = 0, dns = 0;
  for (int b = 0; b < N; ++b)
    for (int h = 0; h < HO; ++h) {
      const int qh = h / (HO / H), kh = h / (HO / HK), vh = h / (HO / HV);
      std::vector<double> S(K * V);
      const size_t sb = (static_cast<size_t>(idx[b]) * HO + h) * V * K;
      for (int v = 0; v < V; ++v)
        for (int d = 0; d < K; ++d) S[d * V + v] = s0f[sb + v * K + d];
      for (int t = cu[b]; t < cu[b + 1]; ++t) {
        const int gi = t * HO + h;
        const double g = gf[gi];
        const double la =
            safe ? -std::exp(alog[h]) * (g + dtb[h] > 20 ? g + dtb[h] : std::log1p(std::exp(g + dtb[h]))) : g;
        double bb = bsig ? 1 / (1 + std::exp(-static_cast<double>(bf[gi]))) : bf[gi];
        if (bsig && (flags & gdn::FLAG_NEG_EIGVAL)) bb *= 2;
        std::vector<double> kn(K), qn(K), vv(V);
        double ks = 0, qs = 0;
        for (int d = 0; d < K; ++d) {
          kn[d] = dec<IOT>(kb[(t * HK + kh) * K + d]);
          qn[d] = dec<IOT>(qb[(t * H + qh) * K + d]);
          ks += kn[d] * kn[d];
          qs += qn[d] * qn[d];
        }
        const double rk = l2 ? 1 / std::sqrt(ks + 1e-6) : 1, rq = l2 ? scale / std::sqrt(qs + 1e-6) : scale;
        for (int d = 0; d < K; ++d) {
          kn[d] *= rk;
          qn[d] *= rq;
        }
        for (int v = 0; v < V; ++v) vv[v] = dec<IOT>(vb[(t * HV + vh) * V + v]);
        const double al = std::exp(la);
        for (auto& s : S) s *= al;
        for (int v = 0; v < V; ++v) {
          double sk = 0;
          for (int d = 0; d < K; ++d) sk += S[d * V + v] * kn[d];
          const double u = bb * (vv[v] - sk);
          for (int d = 0; d < K; ++d) S[d * V + v] += kn[d] * u;
        }
        for (int v = 0; v < V; ++v) {
          double o = 0;
          for (int d = 0; d < K; ++d) o += S[d * V + v] * qn[d];
          const double got = dec<IOT>(fw.o[(static_cast<size_t>(t) * HO + h) * V + v]);
          no += (got - o) * (got - o);
          dno += o * o;
        }
      }
      for (int v = 0; v < V; ++v)
        for (int d = 0; d < K; ++d) {
          const size_t i = sb + v * K + d;
          double got;
          if (state_dt == gdn::DT_F32) {
            float f;
            memcpy(&f, &fw.st[4 * i], 4);
            got = f;
          } else {
            unsigned short u;
            memcpy(&u, &fw.st[2 * i], 2);
            got = dec<gdn::gdn_bf16>(u);
          }
          ns += (got - S[d * V + v]) * (got - S[d * V + v]);
          dns += S[d * V + v] * S[d * V + v];
        }
    }
  const double ro = std::sqrt(no / std::max(dno, 1e-300)), rs = std::sqrt(ns / std::max(dns, 1e-300));
  const double tol = std::is_same_v<IOT, gdn::gdn_bf16> ? 2e-2 : 1e-2;
  const bool ok = d_ws == 0 && d_seq == 0 && d_rep == 0 && nan_o == 0 && ro < tol && rs < tol;
  printf("%-46s %s K=%3d: fused vs prep3+scanx_w4 bitwise diffs WS %zu seq %zu, WS rerun %zu, NaN %zu; vs fp64 rms O %.2e state %.2e  %s\n",
         name, std::is_same_v<IOT, gdn::gdn_bf16> ? "bf16" : "fp16", K, d_ws, d_seq, d_rep, nan_o, ro, rs,
         ok ? "ok" : "FAIL");
  fflush(stdout);
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  using gdn::gdn_bf16;
  using gdn::gdn_f16;
  const bool quick = argc > 1 && std::string(argv[1]) == "quick";
  int fails = 0;
  // name, H, HV, flags, g dtype, beta dtype, state dtype, pool, alias, lengths
  fails += run_case<gdn_bf16, 128>("ragged + partial + empty + 1-token, fp32", 1, 1, gdn::FLAG_L2NORM, 0, 0, 0, false,
                                   false, {200, 0, 1, 130});
  if (!quick) {
    fails += run_case<gdn_bf16, 128>("GVA H=1 HV=2, beta sigmoid, bf16 g/beta, pool", 1, 2,
                                     gdn::FLAG_L2NORM | gdn::FLAG_BETA_SIGMOID, 1, 1, 0, true, false, {70, 150});
    fails += run_case<gdn_f16, 128>("fp16, GQA H=2 HV=1, safe gate, bf16 state, alias", 2, 1,
                                    gdn::FLAG_SAFE_GATE | gdn::FLAG_L2NORM, 0, 2, 1, false, true, {100, 64});
    fails += run_case<gdn_bf16, 64>("K=V=64 bf16, neg eigval, no l2norm", 1, 1,
                                    gdn::FLAG_BETA_SIGMOID | gdn::FLAG_NEG_EIGVAL, 2, 0, 0, false, false, {190, 5});
    fails += run_case<gdn_f16, 64>("K=V=64 fp16, GVA, pool + alias", 1, 2, gdn::FLAG_L2NORM, 0, 0, 0, true, true,
                                   {64, 0, 129});
  }
  if (g_unwaited) {
    printf("threads ended with un-waited cp.async copies: %d\n", g_unwaited.load());
    ++fails;
  }
  printf("%s: %d case(s) failed\n", fails ? "FAIL" : "PASS", fails);
  return fails ? 1 : 0;
}
