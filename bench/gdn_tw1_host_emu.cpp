// gdn_tw1_host_emu.cpp: the CPU check of the token stage tw1 (session 30, helper m1t30; REV 30 of
// bwd_tokens_tc_tile, gdn_bwd_tw.cuh's tw1_products) against tc16 (REV 16) on the same random
// workspace: both tiles run on the emulation's threads (512 per block, the wgmma / mbarrier /
// named-barrier emulation of gdn_wgmma_emu.h), one block per (chunk, head), flags already set.
// The emulation's wgmma and mma.sync share one arithmetic model, so dQ⁺ … dL agree here and the
// check is of the ring's copies (swizzle, zero rows past len), the descriptors, the hand-off
// layouts and the dR pass / dD on tc16's maps (run 3): every output must be bitwise tc16's
// (runs 1 and 2 summed dD and Σ_v dR·v in another order: dg / dβ then moved by ~1e-7).
//
//   g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -Ikernels/include -Ibench \
//       -o /tmp/gdn_tw1 bench/gdn_tw1_host_emu.cpp && /tmp/gdn_tw1
#include "gdn_host_emu.h"
#include "gdn_wgmma_emu.h"

#include "gdn_bwd.cuh"
#include "gdn_bwd_overlap.cuh"

#include <cmath>

// The flag hook with every flag set: tc16 calls it on every thread (its block barrier), tw1 on
// warpgroup 0's thread 0 only (thread_wait).
struct EmuFlagSet {
  void operator()() const { __syncthreads(); }
  void thread_wait() const {}
};

template <typename T>
struct Case {
  int HO, HV;
  bool l2, direct;
  std::vector<int> lens;
  // buffers
  std::vector<long long> cu;
  std::vector<int> choff;
  int T_, nch, maxch;
  std::vector<unsigned short> q, k, v, d_o, ws_s, ws_ds;
  std::vector<float> g, beta, gam, bet, ws_dr;  // ws_dr: io dR then io U (bwd_u_tiles)
};

struct Out {
  std::vector<unsigned short> dq, dk, dv;
  std::vector<float> dg, db, wdq, wdk, wdv, pa, pb;
};

template <typename T, int REV>
static Out run_tiles(Case<T>& c) {
  constexpr int K = 128, V = 128;
  const int HO = c.HO, T_ = c.T_;
  Out o;
  o.dq.assign(size_t(T_) * HO * K, 0);
  o.dk.assign(size_t(T_) * HO * K, 0);
  o.dv.assign(size_t(T_) * c.HV * V, 0);
  o.dg.assign(size_t(T_) * HO, 0.f);
  o.db.assign(size_t(T_) * HO, 0.f);
  o.wdq.assign(size_t(T_) * HO * K, 0.f);
  o.wdk.assign(size_t(T_) * HO * K, 0.f);
  o.wdv.assign(size_t(T_) * HO * V, 0.f);
  o.pa.assign(size_t(T_) * HO, 0.f);
  o.pb.assign(size_t(T_) * HO, 0.f);
  gdn::BwdParams bp{};
  gdn::FwdParams& p = bp.f;
  p.q = c.q.data();
  p.k = c.k.data();
  p.v = c.v.data();
  p.g = c.g.data();
  p.beta = c.beta.data();
  p.cu_seqlens = c.cu.data();
  p.cu_seqlens_i64 = 1;
  p.n_seqs = static_cast<int>(c.lens.size());
  p.h = p.hk = HO;
  p.hv = c.HV;
  p.ho = HO;
  p.g_dtype = p.beta_dtype = gdn::DT_F32;
  p.scale = 1.f / std::sqrt(float(K));
  p.flags = (c.l2 ? gdn::FLAG_L2NORM : 0) | gdn::FLAG_BETA_SIGMOID | (c.direct ? gdn::FLAG_BWD_DIRECT : 0);
  p.max_chunks = c.maxch;
  p.chunk_offsets = c.choff.data();
  bp.d_o = c.d_o.data();
  bp.dq = o.dq.data();
  bp.dk = o.dk.data();
  bp.dv = o.dv.data();
  bp.dg = o.dg.data();
  bp.dbeta = o.db.data();
  bp.total_t = T_;
  bp.ws_gam = c.gam.data();
  bp.ws_bet = c.bet.data();
  bp.ws_s = reinterpret_cast<float*>(c.ws_s.data());
  bp.ws_ds = reinterpret_cast<float*>(c.ws_ds.data());
  bp.ws_dr = c.ws_dr.data();
  // The U tiles in the second half of the region (BwdParams::ws_u since session 38; the host's
  // layout without saved factors): io elements past the slots' io dR tiles.
  bp.ws_u = reinterpret_cast<unsigned short*>(c.ws_dr.data()) + c.ws_dr.size();
  bp.ws_dq = o.wdq.data();
  bp.ws_dk = o.wdk.data();
  bp.ws_dv = o.wdv.data();
  bp.ws_pa = o.pa.data();
  bp.ws_pb = o.pb.data();
  for (int ch = 0; ch < c.nch; ++ch)
    for (int h = 0; h < HO; ++h) {
      launch({1, 1, 1}, gdn::TOK_THREADS, [&] {
        gdn::bwd_tokens_tc_tile<T, K, V, REV>(bp, ch, h, -1, 0, false, EmuFlagSet{});
        dnnp::emu_wg_thread_end();
      });
    }
  return o;
}

// With GDN_TW1_DUMP=FILE, every output of both tiles is appended to FILE as raw bytes: two builds
// against two revisions of kernels/include compare bitwise with cmp (the check below compares the
// two tiles of one revision only, so it cannot see a change common to both).
static void dump_outputs(const char* name, const Out& a, const Out& b) {
  const char* path = std::getenv("GDN_TW1_DUMP");
  if (!path) return;
  FILE* f = std::fopen(path, "ab");
  if (!f) return;
  auto put = [&](const auto& x) { std::fwrite(x.data(), sizeof(x[0]), x.size(), f); };
  std::fwrite(name, 1, std::strlen(name), f);
  for (const Out* o : {&a, &b}) {
    put(o->dq), put(o->dk), put(o->dv), put(o->dg), put(o->db);
    put(o->wdq), put(o->wdk), put(o->wdv), put(o->pa), put(o->pb);
  }
  std::fclose(f);
}

template <typename T>
static int check(const char* name, int HO, int HV, bool l2, std::vector<int> lens) {
  constexpr int K = 128, V = 128;
  Case<T> c;
  c.HO = HO;
  c.HV = HV;
  c.l2 = l2;
  c.direct = true;
  c.lens = lens;
  c.cu.push_back(0);
  c.choff.push_back(0);
  for (int L : lens) {
    c.cu.push_back(c.cu.back() + L);
    c.choff.push_back(c.choff.back() + (L + 63) / 64);
  }
  c.T_ = static_cast<int>(c.cu.back());
  c.nch = c.choff.back();
  c.maxch = c.nch + 1;
  const size_t slots = size_t(c.maxch) * HO;
  auto rnd_io = [&](std::vector<unsigned short>& x, size_t n, double a) {
    x.resize(n);
    for (auto& e : x) e = enc<T>(uni(-a, a));
  };
  rnd_io(c.q, size_t(c.T_) * HO * K, 1.0);
  rnd_io(c.k, size_t(c.T_) * HO * K, 1.0);
  rnd_io(c.v, size_t(c.T_) * HV * V, 1.0);
  rnd_io(c.d_o, size_t(c.T_) * HO * V, 1.0);
  rnd_io(c.ws_s, slots * V * K, 0.5);
  rnd_io(c.ws_ds, slots * V * K, 0.5);
  c.g.resize(size_t(c.T_) * HO);
  c.beta.resize(size_t(c.T_) * HO);
  for (auto& e : c.g) e = static_cast<float>(uni(-0.1, 0.0));
  for (auto& e : c.beta) e = static_cast<float>(uni(-1.0, 1.0));
  c.gam.resize(slots * 64);
  c.bet.resize(slots * 64);
  for (size_t s = 0; s < slots; ++s) {
    float acc = 0.f;
    for (int i = 0; i < 64; ++i) {
      acc -= static_cast<float>(uni(0.0, 0.08));
      c.gam[s * 64 + i] = acc;
      c.bet[s * 64 + i] = static_cast<float>(uni(0.05, 0.95));
    }
  }
  c.ws_dr.assign(slots * 64 * V, 0.f);  // fp32-sized region: io dR, then io U
  auto* drio = reinterpret_cast<unsigned short*>(c.ws_dr.data());
  for (size_t i = 0; i < 2 * slots * 64 * V; ++i) drio[i] = enc<T>(uni(-0.5, 0.5));
  const Out a = run_tiles<T, 16>(c);
  const Out b = run_tiles<T, 30>(c);
  dump_outputs(name, a, b);
  const int unwaited = static_cast<int>(g_wg_unwaited.load()) + static_cast<int>(g_unwaited.load());
  int fails = 0;
  // dv: bitwise.
  size_t dv_diff = 0;
  for (size_t i = 0; i < a.dv.size(); ++i) dv_diff += a.dv[i] != b.dv[i];
  for (size_t i = 0; i < a.wdv.size(); ++i) dv_diff += std::memcmp(&a.wdv[i], &b.wdv[i], 4) != 0;
  // The rest: max |a − b| / max |a|.
  auto rel_io = [&](const std::vector<unsigned short>& x, const std::vector<unsigned short>& y, size_t& nd) {
    double m = 0, d = 0;
    nd = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      const double xa = dec<T>(x[i]), ya = dec<T>(y[i]);
      m = std::max(m, std::fabs(xa));
      d = std::max(d, std::fabs(xa - ya));
      nd += x[i] != y[i];
    }
    return m > 0 ? d / m : d;
  };
  auto rel_f = [&](const std::vector<float>& x, const std::vector<float>& y, size_t& nd) {
    double m = 0, d = 0;
    nd = 0;
    for (size_t i = 0; i < x.size(); ++i) {
      m = std::max(m, double(std::fabs(x[i])));
      d = std::max(d, double(std::fabs(x[i] - y[i])));
      nd += std::memcmp(&x[i], &y[i], 4) != 0;
      if (!std::isfinite(y[i])) d = INFINITY;
    }
    return m > 0 ? d / m : d;
  };
  size_t nq, nk, ng, nb, npa;
  const double eq = rel_io(a.dq, b.dq, nq), ek = rel_io(a.dk, b.dk, nk), eg = rel_f(a.dg, b.dg, ng),
               eb = rel_f(a.db, b.db, nb), epa = rel_f(a.pb, b.pb, npa);
  const bool ok = dv_diff == 0 && nq == 0 && nk == 0 && ng == 0 && nb == 0 && npa == 0 && unwaited == 0 && eq == 0 &&
                  ek == 0 && eg == 0 && eb == 0 && epa == 0;
  printf("%s %s (bitwise tc16 expected): dv differing %zu; rel max diff dq %.2e (%zu differ) dk %.2e (%zu) dg %.2e (%zu) "
         "dbeta %.2e (%zu) pb %.2e; unwaited %d\n",
         ok ? "PASS" : "FAIL", name, dv_diff, eq, nq, ek, nk, eg, ng, eb, nb, epa, unwaited);
  fails += !ok;
  return fails;
}

int main() {
  int fails = 0;
  fails += check<gdn::gdn_bf16>("bf16 HO=HV=2, l2norm, lens 100,64,5", 2, 2, true, {100, 64, 5});
  fails += check<gdn::gdn_f16>("f16 HO=2 HV=1 (dv to ws_dv), lens 70,128", 2, 1, false, {70, 128});
  printf("%s gdn_tw1 host emulation: %d failure(s)\n", fails ? "FAIL" : "PASS", fails);
  return fails;
}
