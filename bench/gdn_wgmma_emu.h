// gdn_wgmma_emu.h: the CPU emulation of kernels/include/dnnp_wgmma.cuh's warpgroup MMA (session 29,
// helper pr29), for the host emulations (bench/gdn_host_emu.h: one std::thread per CUDA thread).
// Include it after gdn_host_emu.h and before any kernel header that issues wgmma
// (gdn_bwd_dscan_gx.cuh, gdn_fwd_slim.cuh's SlimWgN and, session 42, its wgmma output scans
// w4gx / w4gxs / w8gx: bench/gdn_fwd_gx_host_emu.cpp): under GDN_HOST_EMU dnnp_wgmma.cuh declares
// only wgmma_desc, and these stand in for the rest.
//
// Model (the PTX ISA's, the far end of what the hardware may do):
//  - wgmma.mma_async RS m64nNk16 (N = 32 (session 57), 64, 128; bf16 / f16 in, fp32 accumulators) is recorded at
//    issue with a copy of the thread's A registers and a pointer to its accumulators, and runs only
//    at the wgmma_wait<n> that retires its commit group: an accumulator read before that wait sees
//    the value before the product, shared memory (B) is read at the wait (a stage refilled while a
//    wgmma on it is pending shows up), and an issue without a later commit / wait is counted
//    (g_wg_unwaited).
//  - The retired op is warpgroup-collective (every thread of the 128 retires the same ops in the
//    same order: the instructions are .sync.aligned): A is gathered from the four warps' registers
//    (warp w of the warpgroup: rows 16 w .. 16 w + 15 in mma.sync m16n8k16's A layout), B is read
//    through the descriptor, each thread's accumulator elements (per n8 tile j: rows l / 4 and + 8 of
//    its warp's 16, columns 8 j + 2 (l % 4) + {0, 1}) += fp64 sums of the io-dtype products, rounded
//    once to fp32 (as emu_mma).
//  - The descriptor: start address (bits 0-13, << 4), LBO (16-29), SBO (32-45), swizzle (62-63;
//    only 1 = the 128-byte swizzle, the kernels' layout, is emulated; others abort). Offsets are
//    relative to the CTA's shared memory (gdn::smem, a cluster's second CTA's gdn::smem_cta1;
//    __cvta_generic_to_shared is 0 there in the emulation; the kernels' swizzled
//    tiles sit at multiples of 1,024 bytes from it). B element (k, n) at the linear byte address
//      K-major (tnspB 0):  start + (n / 8) SBO + (n % 8) 128 + 2 k
//      MN-major (tnspB 1): start + (n / 64) LBO + (k / 8) SBO + (k % 8) 128 + 2 (n % 64)
//    and the swizzle moves its 16-byte chunk: addr ^ (((addr >> 7) & 7) << 4) (cute's
//    Swizzle<3,4,3>, dnnp_wgmma.cuh's layouts).
//  - Session 29 (helper m029): the SS forms m64n32k16 / m64n64k16 (A by descriptor too, K-major or
//    MN-major: tnspA), recorded and retired the same way; A element (m, k) is addressed as B's
//    (k, n) with n → m. The swizzle modes 1 (128-byte), 2 (64-byte) and 3 (32-byte) are emulated:
//    with W = 128 / 64 / 32 bytes per row, K-major (n, k) at start + (n / 8) SBO + (n % 8) W + 2 k,
//    MN-major at start + (n / (W / 2)) LBO + (k / 8) SBO + (k % 8) W + 2 (n % (W / 2)), and the
//    chunk moved by addr ^ (((addr >> 7) & (W / 16 - 1)) << 4) (Swizzle<3,4,3>, <2,4,3>, <1,4,3>).
//    Mode 0 (no swizzle) still aborts.
//  - Session 29 (helper m029): kernels/include/dnnp_async.cuh's mbarriers, cp.async / bulk copies
//    signalling them, named barriers, setmaxnreg and elect.sync (below, after the wgmma part).
//  - wgmma_fence, fence.proxy.async: no-ops (the emulation has one proxy); trap_unless_swizzle_aligned
//    aborts unless the address is 1,024-byte aligned relative to the CTA's shared memory.
#pragma once

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#ifndef __host__
#define __host__
#endif
#define GDN_WGMMA_EMU 1  // gdn_fwd_slim.cuh then declares SlimWgN on these
#include "dnnp_wgmma.cuh"
#include "dnnp_async.cuh"
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <unordered_map>

static std::atomic<int> g_wg_unwaited{0};  // threads that ended with wgmma ops never retired
// wgmma ops retired, counted once per thread (session 42: a harness can tell a wgmma path ran).
static std::atomic<long> g_wg_retired{0};

namespace dnnp {

struct EmuWgOp {
  float* d;
  uint32_t a[4];
  uint64_t desc;
  int n, tnspb;
  bool bf16;
  bool ss = false;          // A by descriptor (desc_a), not registers
  uint64_t desc_a = 0;
  int tnspa = 0;
};
inline thread_local std::vector<EmuWgOp> t_wg_open;
inline thread_local std::vector<std::vector<EmuWgOp>> t_wg_groups;
// Per warpgroup (8 per CTA, two CTAs of a cluster: t_tid / 128), per thread: the retiring op's A
// registers and descriptors.
inline uint32_t g_wg_a[16][128][4];
inline uint64_t g_wg_desc[16][128];
inline uint64_t g_wg_desc_a[16][128];
// The 16-bit element (k, n) of a descriptor's operand (B; A with n → m), as a double; see the header.
inline double emu_wg_elem(uint64_t desc, int tnsp, int k, int n, bool bf16) {
  const uint32_t swz = static_cast<uint32_t>(desc >> 62);
  if (swz == 0) {
    fprintf(stderr, "wgmma emulation: the no-swizzle layout is not emulated\n");
    std::abort();
  }
  const uint32_t W = 256u >> swz;  // 1: 128, 2: 64, 3: 32 bytes per row
  const uint32_t start = static_cast<uint32_t>(desc & 0x3FFFu) << 4, lbo = static_cast<uint32_t>((desc >> 16) & 0x3FFFu) << 4,
                 sbo = static_cast<uint32_t>((desc >> 32) & 0x3FFFu) << 4;
  const uint32_t per = W / 2;  // 16-bit elements per row
  const uint32_t lin = tnsp ? start + (n / per) * lbo + (k / 8) * sbo + (k % 8) * W + 2 * (n % per)
                            : start + (n / 8) * sbo + (n % 8) * W + 2 * k;
  const uint32_t phys = lin ^ (((lin >> 7) & (W / 16 - 1)) << 4);
  if (phys + 2 > sizeof(gdn::smem)) {
    fprintf(stderr, "wgmma emulation: operand address %u past shared memory\n", phys);
    std::abort();
  }
  unsigned short bits;
  memcpy(&bits, emu_cta_smem() + phys, 2);  // offsets from the CTA's own shared memory
  return bf16 ? static_cast<double>(gdn::Io<gdn::gdn_bf16>::bits_to_f(bits)) : static_cast<double>(gdn::Io<gdn::gdn_f16>::bits_to_f(bits));
}

inline void emu_wg_retire(const EmuWgOp& op) {
  const unsigned wg = t_tid / 128, lt = t_tid % 128;
  g_wg_retired.fetch_add(1, std::memory_order_relaxed);
  for (int i = 0; i < 4; ++i) g_wg_a[wg][lt][i] = op.a[i];
  g_wg_desc[wg][lt] = op.desc;
  g_wg_desc_a[wg][lt] = op.desc_a;
  g_wgroup[wg]->arrive_and_wait();
  const uint64_t desc = op.desc;
  if (g_wg_desc[wg][0] != desc || (op.ss && g_wg_desc_a[wg][0] != op.desc_a)) {
    fprintf(stderr, "wgmma emulation: descriptors differ within warpgroup %u\n", wg);
    std::abort();
  }
  auto bval = [&](int k, int n) { return emu_wg_elem(desc, op.tnspb, k, n, op.bf16); };
  // A (64 x 16): row r of warp r / 16 in the m16n8k16 A layout.
  auto aval = [&](int row, int k) {
    if (op.ss) return emu_wg_elem(op.desc_a, op.tnspa, k, row, op.bf16);
    const int w = row / 16, rr = row % 16;
    const uint32_t x = g_wg_a[wg][32 * w + (rr & 7) * 4 + (k & 7) / 2][(rr >> 3) + 2 * (k >> 3)];
    const unsigned short h = static_cast<unsigned short>((k & 1) ? x >> 16 : x & 0xffffu);
    return op.bf16 ? static_cast<double>(gdn::Io<gdn::gdn_bf16>::bits_to_f(h))
                   : static_cast<double>(gdn::Io<gdn::gdn_f16>::bits_to_f(h));
  };
  const int w = lt / 32, l = lt % 32, g = l >> 2, t = l & 3;
  std::vector<float> out(op.n / 2);
  for (int j = 0; j < op.n / 8; ++j)
    for (int e = 0; e < 4; ++e) {
      const int row = 16 * w + g + 8 * (e >> 1), col = 8 * j + 2 * t + (e & 1);
      double s = op.d[4 * j + e];
      for (int k = 0; k < 16; ++k) s += aval(row, k) * bval(k, col);
      out[4 * j + e] = static_cast<float>(s);
    }
  g_wgroup[wg]->arrive_and_wait();
  for (int i = 0; i < op.n / 2; ++i) op.d[i] = out[i];
}

inline void wgmma_fence() {}
inline void wgmma_commit() {
  t_wg_groups.push_back(std::move(t_wg_open));
  t_wg_open.clear();
}
template <int N>
inline void wgmma_wait() {
  while (static_cast<int>(t_wg_groups.size()) > N) {
    for (const auto& op : t_wg_groups.front()) emu_wg_retire(op);
    t_wg_groups.erase(t_wg_groups.begin());
  }
}
inline void fence_proxy_async_shared() {}
inline void wgmma_fence_operand(float&) {}
template <int N>
inline void wgmma_fence_frags(float (&)[N][4]) {}
template <int N>
inline void wgmma_zero_frags(float (&r)[N][4]) {
  for (int nt = 0; nt < N; ++nt)
    for (int e = 0; e < 4; ++e) r[nt][e] = 0.f;
}
inline void trap_unless_swizzle_aligned(const void* p) {
  if (__cvta_generic_to_shared(p) % 1024 != 0) {
    fprintf(stderr, "wgmma emulation: swizzled shared memory not 1024-byte aligned\n");
    std::abort();
  }
}
inline void emu_wg_issue(float* d, const uint32_t* a, uint64_t desc, int n, int tnspb, bool bf16) {
  t_wg_open.push_back({d, {a[0], a[1], a[2], a[3]}, desc, n, tnspb, bf16});
}
// Every thread must have retired its ops when it ends (the harness checks g_wg_unwaited).
inline void emu_wg_thread_end() {
  if (!t_wg_open.empty() || !t_wg_groups.empty()) ++g_wg_unwaited;
  t_wg_open.clear();
  t_wg_groups.clear();
}
inline void emu_wg_issue_ss(float* d, uint64_t desc_a, uint64_t desc_b, int n, int tnspa, int tnspb, bool bf16) {
  EmuWgOp op{d, {0, 0, 0, 0}, desc_b, n, tnspb, bf16};
  op.ss = true;
  op.desc_a = desc_a;
  op.tnspa = tnspa;
  t_wg_open.push_back(op);
}
template <int TNSPA, int TNSPB>
inline void wgmma_m64n32k16_ss_bf16_t(float* d, uint64_t a, uint64_t b) { emu_wg_issue_ss(d, a, b, 32, TNSPA, TNSPB, true); }
template <int TNSPA, int TNSPB>
inline void wgmma_m64n32k16_ss_f16_t(float* d, uint64_t a, uint64_t b) { emu_wg_issue_ss(d, a, b, 32, TNSPA, TNSPB, false); }
inline void wgmma_m64n32k16_ss_bf16(float* d, uint64_t a, uint64_t b) { wgmma_m64n32k16_ss_bf16_t<0, 0>(d, a, b); }
inline void wgmma_m64n32k16_ss_f16(float* d, uint64_t a, uint64_t b) { wgmma_m64n32k16_ss_f16_t<0, 0>(d, a, b); }
template <int TNSPA, int TNSPB>
inline void wgmma_m64n64k16_ss_bf16_t(float* d, uint64_t a, uint64_t b) { emu_wg_issue_ss(d, a, b, 64, TNSPA, TNSPB, true); }
template <int TNSPA, int TNSPB>
inline void wgmma_m64n64k16_ss_f16_t(float* d, uint64_t a, uint64_t b) { emu_wg_issue_ss(d, a, b, 64, TNSPA, TNSPB, false); }
template <int TNSPB>
inline void wgmma_m64n64k16_rs_bf16_t(float* d, const uint32_t* a, uint64_t b) { emu_wg_issue(d, a, b, 64, TNSPB, true); }
template <int TNSPB>
inline void wgmma_m64n64k16_rs_f16_t(float* d, const uint32_t* a, uint64_t b) { emu_wg_issue(d, a, b, 64, TNSPB, false); }
// The scale-d-0 forms (d = A · B): the accumulators (N / 2 fp32 per thread) zeroed at issue
// (retire reads them).
inline void emu_wg_issue_zeroed(float* d, const uint32_t* a, uint64_t b, int n, int tnspb, bool bf) {
  for (int i = 0; i < n / 2; ++i) d[i] = 0.f;
  emu_wg_issue(d, a, b, n, tnspb, bf);
}
template <int TNSPB>
inline void wgmma_m64n64k16_rs_bf16_zt(float* d, const uint32_t* a, uint64_t b) { emu_wg_issue_zeroed(d, a, b, 64, TNSPB, true); }
template <int TNSPB>
inline void wgmma_m64n64k16_rs_f16_zt(float* d, const uint32_t* a, uint64_t b) { emu_wg_issue_zeroed(d, a, b, 64, TNSPB, false); }
template <int TNSPB>
inline void wgmma_m64n32k16_rs_bf16_t(float* d, const uint32_t* a, uint64_t b) { emu_wg_issue(d, a, b, 32, TNSPB, true); }
template <int TNSPB>
inline void wgmma_m64n32k16_rs_f16_t(float* d, const uint32_t* a, uint64_t b) { emu_wg_issue(d, a, b, 32, TNSPB, false); }
template <int TNSPB>
inline void wgmma_m64n32k16_rs_bf16_zt(float* d, const uint32_t* a, uint64_t b) { emu_wg_issue_zeroed(d, a, b, 32, TNSPB, true); }
template <int TNSPB>
inline void wgmma_m64n32k16_rs_f16_zt(float* d, const uint32_t* a, uint64_t b) { emu_wg_issue_zeroed(d, a, b, 32, TNSPB, false); }
template <int TNSPB>
inline void wgmma_m64n128k16_rs_bf16_t(float* d, const uint32_t* a, uint64_t b) { emu_wg_issue(d, a, b, 128, TNSPB, true); }
template <int TNSPB>
inline void wgmma_m64n128k16_rs_f16_t(float* d, const uint32_t* a, uint64_t b) { emu_wg_issue(d, a, b, 128, TNSPB, false); }


// ---- kernels/include/dnnp_async.cuh on the emulation's threads (session 29, helper m029) ----
// An mbarrier's state lives in a side table keyed by its shared-memory address (mbar_init creates
// it; any other use of an uninitialised barrier aborts), under one mutex and condition variable:
// a phase completes when its pending arrivals reach 0 and its transaction count is 0, then the
// phase counter increments (parity flips) and the pending count is reset. mbar_wait blocks
// (aborting after GDN_EMU_MBAR_TIMEOUT_S seconds, default 30: a deadlock). cp.async copies are
// gdn_host_emu.h's (deferred to their landing point, or eager under GDN_EMU_CP_EAGER=1); the
// landing point of cp_async_mbar_arrive_noinc is the arrive itself: every earlier copy of the
// thread lands, then it arrives. A bulk copy lands at issue and completes its bytes at once.
struct EmuMbar {
  uint32_t count = 0, pending = 0, phase = 0;
  int64_t tx = 0;
};
inline std::mutex g_mbar_m;
inline std::condition_variable g_mbar_cv;
inline std::unordered_map<const void*, EmuMbar> g_mbar;
inline EmuMbar& emu_mbar(const void* bar) {
  auto it = g_mbar.find(bar);
  if (it == g_mbar.end()) {
    fprintf(stderr, "mbarrier emulation: barrier at smem offset %ld used before mbar_init\n",
            static_cast<long>(static_cast<const unsigned char*>(bar) - gdn::smem));
    std::abort();
  }
  return it->second;
}
// Completes the current phase if nothing is pending (caller holds g_mbar_m).
inline void emu_mbar_maybe_complete(EmuMbar& b) {
  if (b.pending == 0 && b.tx == 0) {
    ++b.phase;
    b.pending = b.count;
    g_mbar_cv.notify_all();
  }
}
inline uint32_t smem_u32(const void* p) { return __cvta_generic_to_shared(p); }
inline void mbar_init(uint64_t* bar, uint32_t count) {
  std::lock_guard<std::mutex> lk(g_mbar_m);
  g_mbar[bar] = EmuMbar{count, count, 0, 0};
}
inline void mbar_init_fence() {}
inline void emu_mbar_arrive_tx(uint64_t* bar, int64_t tx) {
  std::lock_guard<std::mutex> lk(g_mbar_m);
  EmuMbar& b = emu_mbar(bar);
  if (b.pending == 0) {
    fprintf(stderr, "mbarrier emulation: arrival past the expected count\n");
    std::abort();
  }
  b.tx += tx;
  --b.pending;
  emu_mbar_maybe_complete(b);
}
inline void mbar_arrive(uint64_t* bar) { emu_mbar_arrive_tx(bar, 0); }
inline void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) { emu_mbar_arrive_tx(bar, bytes); }
inline bool mbar_try_wait(uint64_t* bar, uint32_t parity) {
  std::lock_guard<std::mutex> lk(g_mbar_m);
  return (emu_mbar(bar).phase & 1u) != (parity & 1u);
}
inline bool mbar_test_wait(uint64_t* bar, uint32_t parity) { return mbar_try_wait(bar, parity); }
inline void mbar_wait(uint64_t* bar, uint32_t parity) {
  static const int limit = getenv("GDN_EMU_MBAR_TIMEOUT_S") ? atoi(getenv("GDN_EMU_MBAR_TIMEOUT_S")) : 30;
  std::unique_lock<std::mutex> lk(g_mbar_m);
  if (!g_mbar_cv.wait_for(lk, std::chrono::seconds(limit), [&] { return (emu_mbar(bar).phase & 1u) != (parity & 1u); })) {
    fprintf(stderr, "mbarrier emulation: thread %u waited %d s on parity %u (deadlock)\n", t_tid, limit, parity);
    std::abort();
  }
}
inline void cp_async16(void* dst, const void* src) { gdn::emu_cp_async16(dst, src); }
inline void cp_async_mbar_arrive_noinc(uint64_t* bar) {
  gdn::emu_cp_async_commit();
  gdn::emu_cp_async_wait(0);  // every earlier copy of this thread lands, then the arrive
  mbar_arrive(bar);
}
inline void bulk_copy_g2s(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  memcpy(dst, src, bytes);
  std::lock_guard<std::mutex> lk(g_mbar_m);
  EmuMbar& b = emu_mbar(bar);
  b.tx -= bytes;
  emu_mbar_maybe_complete(b);
}
inline void fence_proxy_async_global() {}
inline void named_bar_sync(int id, int n) { gdn::emu_bar_sync(id, n); }
inline void named_bar_arrive(int id, int n) { gdn::emu_bar_arrive(id, n); }
template <int N>
inline void setmaxnreg_inc() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg: N in [24, 256], a multiple of 8");
}
template <int N>
inline void setmaxnreg_dec() {
  static_assert(N >= 24 && N <= 256 && N % 8 == 0, "setmaxnreg: N in [24, 256], a multiple of 8");
}
inline bool elect_one() { return t_tid % 32 == 0; }
}  // namespace dnnp
