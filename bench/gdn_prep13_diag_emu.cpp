// The prep's diagonal 16x16 inverses alone, on the CPU: prep10's prep_diag_invert_warp (threads
// 0..63, gdn_fwd.cuh) against prep13_diag_invert_warp (warps 0..3) and prep14_diag_invert_half
// (threads 0..63, gdn_fwd_prep13.cuh) over random L tiles (64 x TCINV_LS fp32, strictly lower,
// magnitudes 2^-12 .. 2^2 per element), every fp32 element of the tile compared bitwise (the whole
// workspace check of bench/gdn_prep_host_emu.cpp sees T only after its io / TF32 rounding). One
// std::thread per CUDA thread (bench/gdn_host_emu.h: real warp barriers and shuffles).
// Build and run from the repository root:
//   g++ -std=c++20 -O1 -fno-strict-aliasing -pthread -Ikernels/include bench/gdn_prep13_diag_emu.cpp -o /tmp/gdn_prep13_diag_emu
//   /tmp/gdn_prep13_diag_emu [trials]
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "gdn_host_emu.h"
#include "gdn_fwd_prep13.cuh"

int main(int argc, char** argv) {
  constexpr int LS = gdn::TCINV_LS, N = 64 * LS;
  const int trials = argc > 1 ? atoi(argv[1]) : 40;
  size_t d13 = 0, d14 = 0, changed = 0;
  for (int tr = 0; tr < trials; ++tr) {
    std::vector<float> l(N, 0.f);
    const double amp = tr % 4 == 0 ? 0.1 : (tr % 4 == 1 ? 0.5 : (tr % 4 == 2 ? 1.0 : 2.0));
    for (int r = 0; r < 64; ++r) {
      for (int c = 0; c < r; ++c) l[r * LS + c] = static_cast<float>(uni(-amp, amp) * (tr % 8 >= 4 ? std::ldexp(1.0, static_cast<int>(uni(-12, 1))) : 1.0));
      for (int c = 64; c < LS; ++c) l[r * LS + c] = NAN;  // padding: never read
    }
    std::vector<float> a = l, b = l, c = l;
    launch(U3{1, 1, 1}, 256, [&] {
      const int tid = threadIdx.x;
      if (tid < 64) gdn::prep_diag_invert_warp<LS>(a.data(), tid);
    });
    launch(U3{1, 1, 1}, 256, [&] {
      const int tid = threadIdx.x;
      if (tid < 128) gdn::prep13_diag_invert_warp(b.data(), tid >> 5, tid & 31);
    });
    launch(U3{1, 1, 1}, 256, [&] {
      const int tid = threadIdx.x;
      if (tid < 64) gdn::prep14_diag_invert_half(c.data(), tid);
    });
    for (int i = 0; i < N; ++i) {
      d13 += memcmp(&a[i], &b[i], 4) != 0;
      d14 += memcmp(&a[i], &c[i], 4) != 0;
      changed += memcmp(&a[i], &l[i], 4) != 0;
    }
  }
  printf("diagonal 16x16 inverses, %d random L tiles (%zu fp32 elements written by prep10): prep13 vs prep10 diffs %zu, prep14 vs prep10 diffs %zu  %s\n",
         trials, changed, d13, d14, d13 == 0 && d14 == 0 && changed > 0 ? "ok" : "FAIL");
  return d13 == 0 && d14 == 0 && changed > 0 ? 0 : 1;
}
