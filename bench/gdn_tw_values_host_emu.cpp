// gdn_tw_values_host_emu.cpp: the CPU check of kernels/include/gdn_bwd_tw.cuh's consumer value
// products (session 29, helper m1w29; M1 of td29's token-stage design, work in progress); the
// test itself is bench/gdn_tw_values_test.h (shared with the H200 driver gdn_tw_values_selftest.cu).
// On the CPU the wgmma and mma.sync emulations share one arithmetic model, so this checks the
// layouts, descriptors, k-order and fragment mapping, not the hardware's rounding (fsx25 showed
// wgmma's k16 step equal to mma.sync's on the H200; the driver repeats this check there).
//
//   g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -Ikernels/include -Ibench \
//       -o /tmp/gdn_tw_values bench/gdn_tw_values_host_emu.cpp && /tmp/gdn_tw_values
#include "gdn_host_emu.h"
#include "gdn_wgmma_emu.h"

#include "gdn_bwd.cuh"
#include "gdn_tw_values_test.h"

template <typename T>
static int run(const char* name, unsigned seed) {
  const bool bf16 = std::is_same_v<T, gdn::gdn_bf16>;
  const m1w29::TwInputs in(seed, bf16);
  std::vector<float> out(m1w29::OUT);
  // launch poisons shared memory with 0xFF bytes (NaN wherever the products read an unfilled byte).
  launch({1, 1, 1}, m1w29::NT, [&] {
    m1w29::tw_values_body<T>(gdn::smem, in.S.data(), in.dS.data(), in.U.data(), in.dO.data(), in.dR.data(), out.data());
    dnnp::emu_wg_thread_end();
  });
  const int unwaited = static_cast<int>(g_wg_unwaited.load());
  if (unwaited) printf("FAIL %s: %d unwaited wgmma\n", name, unwaited);
  return (m1w29::tw_values_check(name, bf16, in, out.data()) != 0) + (unwaited != 0);
}

int main() {
  const int fails = run<gdn::gdn_bf16>("bf16", 29) + run<gdn::gdn_f16>("f16", 2029);
  printf("%s gdn_tw_values host emulation: %d failure(s)\n", fails ? "FAIL" : "PASS", fails);
  return fails;
}
