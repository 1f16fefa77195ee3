// dnnp_async_host_emu.cpp (session 29, helper m029, td29's M0): the CPU emulation's run of
// bench/dnnp_async_selftest.h, the same kernels and checks as the GPU self-test
// bench/dnnp_async_selftest.cu, on gdn_host_emu.h's threads with gdn_wgmma_emu.h's wgmma (now the
// SS forms with tnspA / tnspB and the 128- / 64-byte swizzles) and dnnp_async.cuh's emulation
// (mbarrier phases and transaction counts, cp.async landing at its mbarrier arrive, bulk copies,
// named barriers, setmaxnreg as a no-op, elect as lane 0). The ring runs with cp.async deferred to
// its arrive and again eager (landing at issue: GDN_EMU_CP_EAGER's mode). Session 31 (rc31): then
// the ring's release variants 1-3 (dnnp_async_selftest.h's RingRelease), both ways.
// Build: g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -Ikernels/include -Ibench \
//          -o /tmp/dnnp_async_host_emu bench/dnnp_async_host_emu.cpp
#include "gdn_host_emu.h"
#include "gdn_wgmma_emu.h"
#include <cstdio>
#include "dnnp_async_selftest.h"

struct Emu {
  template <int N, int TA, int TB, bool BF16>
  bool wg(const m029::WgCase& c, const uint16_t* A, const uint16_t* B, float* D) {
    launch({1, 1, 1}, 128, [&] {
      m029::wg_case_body<N, TA, TB, BF16>(gdn::smem, c, A, B, D);
      dnnp::emu_wg_thread_end();
    });
    return g_wg_unwaited.load() == 0;
  }
  bool ring(const unsigned char* src, unsigned char* dst, int nt, int mode, int grid, unsigned* flags, int rel) {
    launch({static_cast<unsigned>(grid), 1, 1}, m029::RING_THREADS,
           [&] { m029::ring_body(gdn::smem, src, dst, nt, mode, flags, rel); });
    return g_unwaited.load() == 0;
  }
};

int main() {
  Emu e;
  int fails = m029::run_all(e, 2, 24);
  g_cp_eager = !g_cp_eager;
  printf("(again with cp.async %s)\n", g_cp_eager ? "eager: landing at issue" : "deferred to the arrive");
  fails += m029::run_all(e, 1, 24);
  // Session 31 (rc31): the ring's other release variants (every consumer arrives, __syncthreads per
  // tile, elected lane after __syncwarp only), both copy modes, cp.async deferred and eager.
  for (int eager = 0; eager < 2; ++eager) {
    g_cp_eager = eager != 0;
    for (int rel = 1; rel < m029::REL_COUNT; ++rel) fails += m029::run_ring(e, 2, 13, rel, 0, 1);
  }
  printf("%s dnnp_async host emulation: %d failure(s)\n", fails ? "FAIL" : "PASS", fails);
  return fails;
}
