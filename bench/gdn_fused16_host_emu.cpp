// Runs the one-pass chunk-16 forward (bench/gdn_fwd_fused16.cuh, session 48) on the CPU
// (bench/gdn_host_emu.h: one std::thread per CUDA thread, real named barriers, the warp-collective
// mma.sync / ldmatrix / cp.async emulations) over random inputs and checks it against the fp64
// token-by-token recurrence of the same inputs (bench/gdn_slim_emu_case.h, spec §3.1):
//   - O and the final state within the slim emulation's tolerances (relative rms: bf16 < 2e-2,
//     fp16 < 1e-2);
//   - a second run bitwise the first (cp.async landing at issue instead of at the wait);
//   - the final state written in place over the initial state (aliasing) equal to the separate one.
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

static int g_fails = 0;
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
  auto run = [&] {
    cs.reset_outputs();
    launch(U3{unsigned(V / VB), unsigned(cs.HO), unsigned(cs.N)}, gdn::F16_THREADS,
           [&] { gdn::fwd_fused16_body<IOT, K, V, VB>(p); });
    std::vector<double> od(cs.o.size()), fd(cs.fs32.size());
    for (size_t i = 0; i < od.size(); ++i) od[i] = dec<IOT>(cs.o[i]);
    for (size_t i = 0; i < fd.size(); ++i) fd[i] = bf16_state ? dec<gdn::gdn_bf16>(cs.fs16[i]) : cs.fs32[i];
    return std::pair{od, fd};
  };
  const auto r1 = run();
  const double tol = is_bf16 ? 2e-2 : 1e-2;
  const double eo = rms_ratio(r1.first, cs.ro), es = rms_ratio(r1.second, cs.rfs);
  printf("  rel rms vs fp64: O %.3e state %.3e (tolerance %.0e)\n", eo, es, tol);
  check(eo < tol && es < tol, "fused16: O and final state within tolerance of the fp64 recurrence");
  setenv("GDN_EMU_CP_EAGER", "1", 1);
  const auto r2 = run();
  unsetenv("GDN_EMU_CP_EAGER");
  check(r1.first == r2.first && r1.second == r2.second, "fused16: a second run (copies landing at issue) bitwise the first");
  // In place: the final state over the initial state's buffer.
  cs.reset_outputs();
  std::vector<float> h0f = cs.h0f;
  std::vector<unsigned short> h0b = cs.h0b;
  p.initial_state = bf16_state ? static_cast<const void*>(h0b.data()) : static_cast<const void*>(h0f.data());
  p.final_state = bf16_state ? static_cast<void*>(h0b.data()) : static_cast<void*>(h0f.data());
  launch(U3{unsigned(V / VB), unsigned(cs.HO), unsigned(cs.N)}, gdn::F16_THREADS, [&] { gdn::fwd_fused16_body<IOT, K, V, VB>(p); });
  bool same = true;
  for (size_t i = 0; i < r1.second.size(); ++i)
    same &= (bf16_state ? dec<gdn::gdn_bf16>(h0b[i]) : double(h0f[i])) == r1.second[i];
  check(same, "fused16: final state in place over the initial state equal to the separate one");
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
  printf("%s\n", g_fails ? "fused16 host emulation: FAILED" : "fused16 host emulation: all checks ok");
  return g_fails ? 1 : 0;
}
