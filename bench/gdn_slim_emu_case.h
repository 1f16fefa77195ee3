// gdn_slim_emu_case.h: one forward case of the slim host emulations (bench/gdn_slim_host_emu.cpp,
// bench/gdn_fwd_gx_host_emu.cpp): the random inputs, the fp64 token-by-token reference of spec
// §4.1 and the forward's parameters with the chunk table, written once for both.
//
// Contract: the constructor draws the inputs from gdn_host_emu.h's uni() in a fixed order (q, k, v,
// gates, β, the initial state), so a harness that seeds rng_state first gets the same case every
// time; `ro` / `rfs` are the reference's O [T][HO][V] and final states [N][HO][V][K]; `fp` points
// into this object's vectors (it is neither copied nor moved) with pieces = 1, no workspace and no
// initial / final state bound until reset_outputs() binds them with the outputs `o`, `fs16`,
// `fs32` (the final state in the initial state's dtype). `offs` holds the chunk table in its first
// N + 1 entries and room for FLAG_SEQ_ORDER's order (N more) after it.
#pragma once

#include <algorithm>
#include <cmath>
#include <type_traits>
#include <vector>

template <typename IOT>
struct SlimEmuCase {
  static constexpr int K = 128, V = 128, C = 64;
  const int H, HK, HV, HO, N;
  const bool l2, bsig, bf16_state;
  const float scale = 1.f / std::sqrt(static_cast<float>(K));
  std::vector<int> lens, cu{0}, offs;
  int T = 0, max_chunks = 0;
  std::vector<unsigned short> qb, kb, vb, h0b;
  std::vector<float> gf, bf, h0f;
  std::vector<double> ro, rfs;
  std::vector<unsigned short> o, fs16;  // O's io bits; the final state's bf16 bits (bf16_state)
  std::vector<float> fs32;              // the final state (fp32 state)
  gdn::FwdFastParams fp{};

  SlimEmuCase(int H_, int HV_, int flags, std::vector<int> lens_, bool bf16_state_, double gate_lo)
      : H(H_), HK(H_), HV(HV_), HO(std::max(H_, HV_)), N(static_cast<int>(lens_.size())),
        l2(flags & gdn::FLAG_L2NORM), bsig(flags & gdn::FLAG_BETA_SIGMOID), bf16_state(bf16_state_),
        lens(std::move(lens_)), offs(2 * N + 1, 0) {
    for (int l : lens) cu.push_back(cu.back() + l);
    T = cu.back();
    max_chunks = T / C + N;
    draw_inputs(gate_lo);
    reference();
    bind_params(flags);
    o.resize(size_t(T) * HO * V);
    fs16.resize(h0f.size());
    fs32.resize(h0f.size());
  }
  SlimEmuCase(const SlimEmuCase&) = delete;
  SlimEmuCase& operator=(const SlimEmuCase&) = delete;

  // Before a run: the initial state and the outputs bound, the outputs refilled with NaN patterns.
  void reset_outputs() {
    gdn::FwdParams& p = fp.f;
    p.o = o.data();
    p.initial_state = bf16_state ? static_cast<const void*>(h0b.data()) : static_cast<const void*>(h0f.data());
    p.final_state = bf16_state ? static_cast<void*>(fs16.data()) : static_cast<void*>(fs32.data());
    std::fill(o.begin(), o.end(), 0xFFFF);
    std::fill(fs16.begin(), fs16.end(), 0xFFFF);
    std::fill(fs32.begin(), fs32.end(), NAN);
  }

 private:
  void draw_inputs(double gate_lo) {
    qb.resize(size_t(T) * H * K);
    kb.resize(size_t(T) * HK * K);
    vb.resize(size_t(T) * HV * V);
    for (auto& x : qb) x = enc<IOT>(uni(-1, 1));
    for (auto& x : kb) x = enc<IOT>(uni(-1, 1) * (l2 ? 1.0 : 0.15));
    for (auto& x : vb) x = enc<IOT>(uni(-1, 1));
    gf.resize(size_t(T) * HO);
    bf.resize(size_t(T) * HO);
    for (auto& x : gf) x = static_cast<float>(std::log(uni(gate_lo, 1)));
    for (auto& x : bf) x = static_cast<float>(bsig ? uni(-2, 2) : uni(0, 1));
    h0f.resize(size_t(N) * HO * V * K);
    h0b.resize(h0f.size());
    for (size_t i = 0; i < h0f.size(); ++i) {
      h0b[i] = gdn::Io<gdn::gdn_bf16>::f_to_bits(static_cast<float>(uni(-0.5, 0.5)));
      h0f[i] = gdn::Io<gdn::gdn_bf16>::bits_to_f(h0b[i]);
    }
  }

  // X = Sᵀ [V][K]; per token X ← α X; u = β (v − X k̂); X += u k̂ᵀ; o = X q̂ scale.
  void reference() {
    ro.assign(size_t(T) * HO * V, 0);
    rfs.assign(h0f.size(), 0);
    for (int b = 0; b < N; ++b)
      for (int h = 0; h < HO; ++h) {
        const int qh = h / (HO / H), kh = h / (HO / HK), vh = h / (HO / HV);
        std::vector<double> X(V * K);
        for (int x = 0; x < V * K; ++x) X[x] = h0f[(size_t(b) * HO + h) * V * K + x];
        for (int t = cu[b]; t < cu[b + 1]; ++t) {
          std::vector<double> kk(K), qq(K), u(V);
          double kn = 0, qn = 0;
          for (int d = 0; d < K; ++d) {
            kk[d] = dec<IOT>(kb[(size_t(t) * HK + kh) * K + d]);
            qq[d] = dec<IOT>(qb[(size_t(t) * H + qh) * K + d]);
            kn += kk[d] * kk[d];
            qn += qq[d] * qq[d];
          }
          for (int d = 0; d < K; ++d) {
            if (l2) {
              kk[d] /= std::sqrt(kn + 1e-6);
              qq[d] /= std::sqrt(qn + 1e-6);
            }
            qq[d] *= scale;
          }
          const double a = std::exp(double(gf[size_t(t) * HO + h]));
          double be = bf[size_t(t) * HO + h];
          if (bsig) be = 1 / (1 + std::exp(-be));
          for (auto& x : X) x *= a;
          for (int v = 0; v < V; ++v) {
            double s = 0;
            for (int d = 0; d < K; ++d) s += X[v * K + d] * kk[d];
            u[v] = be * (dec<IOT>(vb[(size_t(t) * HV + vh) * V + v]) - s);
          }
          for (int v = 0; v < V; ++v)
            for (int d = 0; d < K; ++d) X[v * K + d] += u[v] * kk[d];
          for (int v = 0; v < V; ++v) {
            double s = 0;
            for (int d = 0; d < K; ++d) s += X[v * K + d] * qq[d];
            ro[(size_t(t) * HO + h) * V + v] = s;
          }
        }
        for (int x = 0; x < V * K; ++x) rfs[(size_t(b) * HO + h) * V * K + x] = X[x];
      }
  }

  void bind_params(int flags) {
    gdn::FwdParams& p = fp.f;
    fp.pieces = 1;
    p.q = qb.data();
    p.k = kb.data();
    p.v = vb.data();
    p.g = gf.data();
    p.beta = bf.data();
    p.cu_seqlens = cu.data();
    p.n_seqs = N;
    p.h = H;
    p.hk = HK;
    p.hv = HV;
    p.ho = HO;
    p.g_dtype = p.beta_dtype = gdn::DT_F32;
    p.state_dtype = bf16_state ? gdn::DT_BF16 : gdn::DT_F32;
    p.scale = scale;
    p.flags = flags;
    p.max_chunks = max_chunks;
    p.chunk_offsets = offs.data();
    // The chunk table on the host (chunk_offsets_body's __shared__ totals are per-thread here).
    for (int b = 0; b < N; ++b) offs[b + 1] = offs[b] + (lens[b] + C - 1) / C;
  }
};
