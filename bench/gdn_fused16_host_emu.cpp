// Runs the one-pass chunk-16 forward (kernels/include/gdn_fwd_fused16.cuh, sessions 48-49) on the CPU
// (bench/gdn_host_emu.h: one std::thread per CUDA thread, real named barriers, the warp-collective
// mma.sync / ldmatrix / cp.async emulations) over random inputs and checks it against the fp64
// token-by-token recurrence of the same inputs (bench/gdn_slim_emu_case.h, spec §3.1):
//   - O and the final state within the slim emulation's tolerances (relative rms: bf16 < 2e-2,
//     fp16 < 1e-2);
//   - a second run bitwise the first (cp.async landing at issue instead of at the wait);
//   - the final state written in place over the initial state (aliasing) equal to the separate one;
//   - int64 cu_seqlens bitwise int32, and a state pool (state_indices, in place) equal to the batch's rows.
// Cases: partial chunks, an empty and a 1-token sequence, GQA (H = HK = 1 < HV = HO), l2norm on / off,
// beta sigmoid, fp32 / bf16 states, bf16 / fp16, fast and slow decay.
//
// Build and run (CPU machine), from the repository root:
//   g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -Ikernels/include -Ibench bench/gdn_fused16_host_emu.cpp -o /tmp/gdn_fused16_host_emu
//   /tmp/gdn_fused16_host_emu [case]
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gdn_host_emu.h"
#include "gdn_wgmma_emu.h"
#include "gdn_fwd_fast.cuh"  // FwdFastParams (gdn_slim_emu_case.h binds it)
#include "gdn_fwd_fused16.cuh"
#include "gdn_slim_emu_case.h"

// The cluster forms' primitives (kernels/include/gdn_fused16_cluster.cuh) on the emulation's
// threads: CTA rank r's shared memory is gdn::smem (r = 0) or gdn::smem_cta1 (r = 1); st.async
// lands at issue and completes its 16 bytes on the peer's mbarrier at once.
namespace gdn {
unsigned char* fused16_dyn_smem() { return (t_tid >> 10) ? smem_cta1 : smem; }
F16cAddr f16c_peer(const void* p, uint32_t rank) {
  const ptrdiff_t off = static_cast<const unsigned char*>(p) - fused16_dyn_smem();
  if (off < 0 || off >= static_cast<ptrdiff_t>(sizeof(smem)) || rank > 1) {
    fprintf(stderr, "mapa emulation: %p is not in this CTA's shared memory (rank %u)\n", p, rank);
    std::abort();
  }
  return (rank ? smem_cta1 : smem) + off;
}
void f16c_st_async(F16cAddr addr, uint4 v, F16cAddr bar) {
  memcpy(addr, &v, 16);
  std::lock_guard<std::mutex> lk(dnnp::g_mbar_m);
  dnnp::EmuMbar& b = dnnp::emu_mbar(bar);
  b.tx -= 16;
  dnnp::emu_mbar_maybe_complete(b);
}
void f16c_arrive_peer(F16cAddr bar) { dnnp::mbar_arrive(static_cast<uint64_t*>(bar)); }
void f16c_cluster_sync() { g_cluster->arrive_and_wait(); }
// The TQ forms' maps in the emulation (emu_qk_map): opaque[0] the tensor's address, [1] its heads,
// [2] its tokens; a [T, heads, 128] io tensor, boxes of 64 channels x 1 head x 16 tokens. A box lands
// at issue in both CTAs' shared memory, 128-byte swizzled by address as the hardware does (16-byte
// piece bits 4-6 XOR the 128-byte row bits 7-9), and completes its bytes on both CTAs' barriers.
void f16c_box_multicast(void* dst, const dnnp::TmaDesc* map, int c0, int c1, int c2, uint64_t* bar) {
  const unsigned short* base = reinterpret_cast<const unsigned short*>(map->opaque[0]);
  const long long heads = static_cast<long long>(map->opaque[1]), tokens = static_cast<long long>(map->opaque[2]);
  const ptrdiff_t off = static_cast<unsigned char*>(dst) - fused16_dyn_smem();
  const ptrdiff_t boff = reinterpret_cast<unsigned char*>(bar) - fused16_dyn_smem();
  if (off < 0 || off + 16 * 128 > static_cast<ptrdiff_t>(sizeof(smem)) || off % 1024 != 0 || c0 % 64 != 0) {
    fprintf(stderr, "box emulation: destination offset %ld or channel %d not a 128-byte-swizzle box\n", static_cast<long>(off), c0);
    std::abort();
  }
  for (unsigned char* cta : {smem, smem_cta1}) {
    for (int r = 0; r < 16; ++r) {
      const long long t = c2 + r;
      for (int j = 0; j < 8; ++j) {
        const ptrdiff_t a = off + r * 128 + j * 16;
        const ptrdiff_t sw = a ^ (((a >> 7) & 7) << 4);
        if (t < tokens) memcpy(cta + sw, base + (t * heads + c1) * 128 + c0 + 8 * j, 16);
        else memset(cta + sw, 0, 16);
      }
    }
    std::lock_guard<std::mutex> lk(dnnp::g_mbar_m);
    dnnp::EmuMbar& b = dnnp::emu_mbar(cta + boff);
    b.tx -= 16 * 128;
    dnnp::emu_mbar_maybe_complete(b);
  }
}
}  // namespace gdn

// An emulated map of a [tokens, heads, 128] io tensor at `base` (f16c_box_multicast decodes it).
static dnnp::TmaDesc emu_qk_map(const void* base, int heads, long long tokens) {
  dnnp::TmaDesc m{};
  m.opaque[0] = reinterpret_cast<unsigned long long>(base);
  m.opaque[1] = static_cast<unsigned long long>(heads);
  m.opaque[2] = static_cast<unsigned long long>(tokens);
  return m;
}

static int g_fails = 0;
static int g_order = 0;  // Fused16Params::longest_first of run_form's launches
static void check(bool ok, const char* what) {
  printf("  %-66s %s\n", what, ok ? "ok" : "FAIL");
  if (!ok) ++g_fails;
}

template <typename IOT>
static void run_case(const char* name, int H, int HV, int flags, std::vector<int> lens, bool bf16_state, double gate_lo = 0.5) {
  SlimEmuCase<IOT> cs(H, HV, flags, lens, bf16_state, gate_lo);
  constexpr int K = SlimEmuCase<IOT>::K, V = SlimEmuCase<IOT>::V, VB = 64;
  const bool is_bf16 = std::is_same_v<IOT, gdn::gdn_bf16>;
  printf("== %s (%s, H %d HV %d, flags %d, lens", name, is_bf16 ? "bf16" : "fp16", H, HV, flags);
  for (int l : lens) printf(" %d", l);
  printf(", %s state)\n", bf16_state ? "bf16" : "fp32");
  gdn::FwdParams& p = cs.fp.f;
  const U3 grid{unsigned(V / VB), unsigned(cs.HO), unsigned(cs.N)};
  using B1 = gdn::Fused16B1;
  // The last launch's O and final state, decoded.
  auto decoded = [&] {
    std::vector<double> od(cs.o.size()), fd(cs.fs32.size());
    for (size_t i = 0; i < od.size(); ++i) od[i] = dec<IOT>(cs.o[i]);
    for (size_t i = 0; i < fd.size(); ++i) fd[i] = bf16_state ? dec<gdn::gdn_bf16>(cs.fs16[i]) : cs.fs32[i];
    return std::pair{od, fd};
  };
  // One launch of form F; its O and final state decoded.
  auto run_form = [&](auto form) {
    using F = decltype(form);
    cs.reset_outputs();
    const gdn::Fused16TmaParams pp{{p, cs.cu.back(), cs.N + 2, g_order},
                                   {emu_qk_map(p.q, cs.H, cs.cu.back()), emu_qk_map(p.k, cs.HK, cs.cu.back())}};
    launch(grid, F::threads, [&] { gdn::fwd_fused16_body<IOT, K, V, VB, F>(pp.p, pp.qk_maps); }, F::cluster);
    return decoded();
  };
  auto run = [&] { return run_form(B1{}); };
  // A form run with the copies landing at issue (gdn_host_emu.h reads GDN_EMU_CP_EAGER once, at
  // start-up; this flag flips it per run).
  auto run_eager = [&](auto form) {
    g_cp_eager = true;
    const auto r = run_form(form);
    g_cp_eager = false;
    return r;
  };
  auto bitwise = [](const auto& a, const auto& b) { return a.first == b.first && a.second == b.second; };
  const double tol = is_bf16 ? 2e-2 : 1e-2;
  const auto r1 = run();
  const double eo = rms_ratio(r1.first, cs.ro), es = rms_ratio(r1.second, cs.rfs);
  printf("  rel rms vs fp64: O %.3e state %.3e (tolerance %.0e)\n", eo, es, tol);
  check(eo < tol && es < tol, "fused16: O and final state within tolerance of the fp64 recurrence");
  // Another chain kind's form against the fp64 recurrence: the relative rms printed and checked.
  auto within_fp64 = [&](const auto& r, const char* form, const char* what) {
    const double o = rms_ratio(r.first, cs.ro), st = rms_ratio(r.second, cs.rfs);
    printf("  %s: rel rms vs fp64: O %.3e state %.3e\n", form, o, st);
    check(o < tol && st < tol, what);
  };
  check(bitwise(r1, run_eager(B1{})), "fused16: a second run (copies landing at issue) bitwise the first");
  // The other launch forms run the same arithmetic per chunk: bitwise the first form.
  check(bitwise(r1, run_form(gdn::Fused16B2{})), "fused16: form B2 (8 stages, copies 1 own chunk ahead) bitwise B1");
  g_order = 1;
  const auto rlf = run_form(B1{});
  g_order = 0;
  check(bitwise(r1, rlf), "fused16: longest-first block order bitwise batch order");
  check(bitwise(r1, run_form(gdn::Fused16W8{})), "fused16: form W8 (8 producer warps) bitwise B1");
  // The cluster forms: each CTA builds every other chunk and pushes it into its peer's stage; RF:
  // the chains' release forwarded to the peer CTA by the producer warp that refills the stage.
  check(bitwise(r1, run_form(gdn::Fused16W8C{})), "fused16: form W8C (clusters of the value halves) bitwise B1");
  check(bitwise(r1, run_form(gdn::Fused16W4C{})), "fused16: form W4C (4 producer warps, clusters) bitwise B1");
  check(bitwise(r1, run_form(gdn::Fused16Form<8, 14, 1, 1, true, false, true>{})), "fused16: form W8 with the staggered prologue bitwise B1");
  check(bitwise(r1, run_form(gdn::Fused16Form<8, 16, 1, 2, true>{})), "fused16: form W8C without the staggered prologue bitwise B1");
  check(bitwise(r1, run_form(gdn::Fused16Form<8, 16, 1, 2, true, true>{})), "fused16: form W8C with the remote forward bitwise B1");
  check(bitwise(r1, run_eager(gdn::Fused16Form<4, 8, 1, 2, false>{})), "fused16: form B2C without RF and ET (copies at issue) bitwise B1");
  check(bitwise(r1, run_eager(gdn::Fused16B2CMma{})), "fused16: form B2C-mma (RF, ET, copies landing at issue) bitwise B1");
  // The WG chain (P, Q by wgmma over the swizzled rows): other bits, within the tolerance; its forms
  // bitwise each other.
  const auto rw8cg = run_form(gdn::Fused16Form<8, 16, 1, 2, true, false, true, true>{});
  within_fp64(rw8cg, "W8C WG", "fused16: form W8C with the WG chain within tolerance of the fp64 recurrence");
  check(bitwise(run_eager(gdn::Fused16Form<4, 8, 1, 2, true, true, true, true>{}), rw8cg), "fused16: form B2C with the WG chain bitwise W8C's");
  check(bitwise(run_form(gdn::Fused16Form<8, 14, 1, 1, true, false, false, true>{}), rw8cg), "fused16: form W8 with the WG chain bitwise W8C's");
  // The update by wgmma too (UW, session 61): within the tolerance; its forms bitwise each other.
  const auto rw8cu = run_form(gdn::Fused16Form<8, 16, 1, 2, true, false, true, true, true>{});
  within_fp64(rw8cu, "W8C WG UW", "fused16: form W8C with the WG chain and the update by wgmma within tolerance of the fp64 recurrence");
  // (the product's b2c: CR / PR are no-ops here)
  check(bitwise(run_eager(gdn::Fused16B2C{}), rw8cu), "fused16: form B2C (the product's: WG, UW) bitwise W8C's");
  check(bitwise(run_form(gdn::Fused16Form<8, 14, 1, 1, true, false, false, true, true>{}), rw8cu), "fused16: form W8 with WG and UW bitwise W8C's");
  // UW alone (P, Q by mma.sync from the swizzled rows): within the tolerance; B2C bitwise W8C.
  const auto rw8co = run_form(gdn::Fused16Form<8, 16, 1, 2, true, false, true, false, true>{});
  within_fp64(rw8co, "W8C UW", "fused16: form W8C with the update alone by wgmma within tolerance of the fp64 recurrence");
  check(bitwise(run_eager(gdn::Fused16Form<4, 8, 1, 2, true, true, true, false, true>{}), rw8co), "fused16: form B2C with UW alone bitwise W8C's");
  // LS (session 68): the lazily scaled state, other bits: within the tolerance (GDN_F16_LS_LIMIT < 0:
  // every chunk eager, the eager forms' arithmetic: bitwise B1 / the UW forms).
  const auto rw8cl = run_form(gdn::Fused16W8CL{});
  const auto rb2cl = run_form(gdn::Fused16B2CL{});
  if (GDN_F16_LS_LIMIT < 0) {
    check(bitwise(r1, rw8cl), "fused16: form W8CL, every chunk eager, bitwise B1");
    check(bitwise(rw8cu, rb2cl), "fused16: form B2CL, every chunk eager, bitwise W8C WG UW");
  } else {
    within_fp64(rw8cl, "W8C LS", "fused16: form W8CL (the lazily scaled state) within tolerance of the fp64 recurrence");
    within_fp64(rb2cl, "B2C LS", "fused16: form B2CL (the lazily scaled state) within tolerance of the fp64 recurrence");
  }
  check(bitwise(run_eager(gdn::Fused16W8CL{}), rw8cl), "fused16: form W8CL (copies landing at issue) bitwise itself");
  // TQ (session 71): the product's b2c takes a full chunk's q, k as multicast boxes; only how the
  // rows arrive differs from its cp.async twin (with RF, the product's b2c before): the same bits.
  check(bitwise(rb2cl, run_form(gdn::Fused16Form<4, 8, 1, 2, true, true, true, true, true, 160, 96, true>{})),
        "fused16: form B2CL (TQ: q, k by multicast boxes) bitwise its cp.async twin");
  // In place: the final state over the initial state's buffer.
  cs.reset_outputs();
  std::vector<float> h0f = cs.h0f;
  std::vector<unsigned short> h0b = cs.h0b;
  p.initial_state = bf16_state ? static_cast<const void*>(h0b.data()) : static_cast<const void*>(h0f.data());
  p.final_state = bf16_state ? static_cast<void*>(h0b.data()) : static_cast<void*>(h0f.data());
  launch(U3{unsigned(V / VB), unsigned(cs.HO), unsigned(cs.N)}, B1::threads, [&] {
    const gdn::Fused16Params pp{p, cs.cu.back(), cs.N + 2, 0};
    gdn::fwd_fused16_body<IOT, K, V, VB, B1>(pp);
  });
  bool same = true;
  for (size_t i = 0; i < r1.second.size(); ++i)
    same &= (bf16_state ? dec<gdn::gdn_bf16>(h0b[i]) : double(h0f[i])) == r1.second[i];
  check(same, "fused16: final state in place over the initial state equal to the separate one");
  // int64 cu_seqlens: the same outputs bit for bit.
  std::vector<long long> cu64(cs.cu.begin(), cs.cu.end());
  p.cu_seqlens = cu64.data();
  p.cu_seqlens_i64 = 1;
  const auto r3 = run();
  check(bitwise(r1, r3), "fused16: int64 cu_seqlens bitwise int32");
  p.cu_seqlens = cs.cu.data();
  p.cu_seqlens_i64 = 0;
  // A state pool: sequence b's state in pool row N + 1 − b (two spare rows), in place.
  const size_t row = size_t(cs.HO) * V * K;
  std::vector<int> idx(cs.N);
  std::vector<float> pool32(size_t(cs.N + 2) * row, 0.f);
  std::vector<unsigned short> pool16(pool32.size(), 0);
  for (int bq = 0; bq < cs.N; ++bq) {
    idx[bq] = cs.N + 1 - bq;
    for (size_t i = 0; i < row; ++i) {
      pool32[idx[bq] * row + i] = cs.h0f[bq * row + i];
      pool16[idx[bq] * row + i] = cs.h0b[bq * row + i];
    }
  }
  cs.reset_outputs();
  p.state_indices = idx.data();
  p.initial_state = bf16_state ? static_cast<const void*>(pool16.data()) : static_cast<const void*>(pool32.data());
  p.final_state = bf16_state ? static_cast<void*>(pool16.data()) : static_cast<void*>(pool32.data());
  launch(U3{unsigned(V / VB), unsigned(cs.HO), unsigned(cs.N)}, B1::threads, [&] {
    const gdn::Fused16Params pp{p, cs.cu.back(), cs.N + 2, 0};
    gdn::fwd_fused16_body<IOT, K, V, VB, B1>(pp);
  });
  p.state_indices = nullptr;
  bool pooled = true;
  for (int bq = 0; bq < cs.N; ++bq)
    for (size_t i = 0; i < row; ++i)
      pooled &= (bf16_state ? dec<gdn::gdn_bf16>(pool16[idx[bq] * row + i]) : double(pool32[idx[bq] * row + i])) == r1.second[bq * row + i];
  for (size_t i = 0; i < row; ++i) pooled &= pool32[i] == 0.f && pool16[i] == 0;  // row 0 is nobody's
  check(pooled && decoded().first == r1.first, "fused16: state_indices (a pool, in place) equal to the batch's rows");
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const int only = argc > 1 ? atoi(argv[1]) : -1;
  const int L2S = gdn::FLAG_L2NORM | gdn::FLAG_BETA_SIGMOID;
  if (only < 0 || only == 0) run_case<gdn::gdn_bf16>("bf16 l2norm", 2, 2, L2S, {130, 64, 0, 5, 1}, false);
  if (only < 0 || only == 1) run_case<gdn::gdn_f16>("fp16 GQA l2norm", 1, 2, L2S, {65, 190}, true);
  if (only < 0 || only == 2) run_case<gdn::gdn_bf16>("bf16 GQA no l2norm", 1, 2, 0, {200, 3}, false);
  if (only < 0 || only == 3) run_case<gdn::gdn_f16>("fp16 no l2norm", 2, 2, gdn::FLAG_BETA_SIGMOID, {256, 100}, false);
  if (only < 0 || only == 4) run_case<gdn::gdn_bf16>("bf16 l2norm slow decay", 2, 2, L2S, {900, 250, 0, 40}, false, 0.995);
  if (only < 0 || only == 5) run_case<gdn::gdn_f16>("fp16 GQA slow decay", 1, 2, gdn::FLAG_BETA_SIGMOID, {700, 130}, true, 0.995);
  // Fast decay (g = ln U(0.02, 1): e^{Γ_last} ≈ 2^-21 per chunk), bf16 state (session 56).
  if (only < 0 || only == 6) run_case<gdn::gdn_bf16>("bf16 fast decay", 2, 2, gdn::FLAG_BETA_SIGMOID, {600, 200, 17}, true, 0.02);
  printf("%s\n", g_fails ? "fused16 host emulation: FAILED" : "fused16 host emulation: all checks ok");
  return g_fails ? 1 : 0;
}
