// gdn_host_emu.h: the CPU emulation of a CUDA block shared by bench/gdn_bwd_host_emu.cpp and
// bench/gdn_prep_host_emu.cpp (host code only; never part of a kernel's translation unit).
//
// Contract: include it first, then the kernel header under test (gdn_bwd.cuh, gdn_fwd_prep3.cuh).
// It defines away the CUDA qualifiers, defines GDN_HOST_EMU (the kernel headers then route
// mma.sync, ldmatrix.trans and cp.async to the gdn::emu_* hooks) and provides:
//  - launch(grid, threads, body): one std::thread per CUDA thread, real barriers for
//    __syncthreads and per-warp barriers for __shfl_xor_sync / __shfl_up_sync, shared memory
//    (gdn::smem) refilled with 0xFF bytes per block; g_unwaited counts threads that ended with
//    cp.async copies never waited for;
//  - the warp-collective emulations: mma.sync m16n8k16 (fp64 sums of the io-dtype products onto
//    the fp32 accumulator), mma.sync m16n8k8 .tf32 (likewise), ldmatrix.x4.trans, and cp.async
//    as per-thread copies deferred to the
//    wait that covers their group (GDN_EMU_CP_EAGER=1: landing at issue instead);
//  - the problem helpers uni (a fixed-seed uniform generator), enc / dec (io-dtype bits).
#pragma once

#include <algorithm>
#include <atomic>
#include <barrier>
#include <cmath>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <cstring>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

struct uint4 { unsigned x, y, z, w; };
struct alignas(8) uint2 { unsigned x, y; };
struct float2 { float x, y; };
struct alignas(16) float4 { float x, y, z, w; };
inline uint4 make_uint4(unsigned a, unsigned b, unsigned c, unsigned d) { return {a, b, c, d}; }
inline uint2 make_uint2(unsigned a, unsigned b) { return {a, b}; }
inline float2 make_float2(float a, float b) { return {a, b}; }
inline float4 make_float4(float a, float b, float c, float d) { return {a, b, c, d}; }
struct U3 { unsigned x, y, z; };
thread_local U3 threadIdx, blockIdx;
static U3 gridDim;   // the running launch's grid (persistent kernels stride by it)
static U3 blockDim;  // the running launch's block (1-D: threads, 1, 1)
#define __device__
#define __forceinline__ inline
#define __global__
#define __launch_bounds__(...)
#define __align__(x)
#define __shared__
inline float __expf(float x) { return expf(x); }
inline float __uint_as_float(unsigned u) { float f; memcpy(&f, &u, 4); return f; }
inline unsigned __float_as_uint(float f) { unsigned u; memcpy(&u, &f, 4); return u; }
inline float rsqrtf(float x) { return 1.f / sqrtf(x); }
void __syncthreads();
void __syncwarp();
float __shfl_xor_sync(unsigned, float v, int o);
float __shfl_up_sync(unsigned, float v, int o);
float __shfl_sync(unsigned, float v, int src);
// A 32-bit word through one of the float shuffles above, its bits unchanged (a conversion to
// float would round an integer above 2^24 and change packed io-dtype pairs).
template <typename Shuffle>
inline unsigned emu_shfl_bits(unsigned v, Shuffle shuffle) {
  float f;
  std::memcpy(&f, &v, 4);
  f = shuffle(f);
  std::memcpy(&v, &f, 4);
  return v;
}
// 32-bit words (packed io-dtype pairs: store_state_frags_io16) exchange their bits unchanged
// (session 17: through the float overload they were converted).
inline unsigned __shfl_xor_sync(unsigned m, unsigned v, int o) {
  return emu_shfl_bits(v, [&](float f) { return __shfl_xor_sync(m, f, o); });
}
// Integers exchange their bits unchanged: 32-bit ones (warp_inclusive_sum) whole, 64-bit ones
// (cu_sanitize_body's running maxima) in two halves.
inline unsigned emu_shfl_up_bits(unsigned m, unsigned v, int o) {
  return emu_shfl_bits(v, [&](float f) { return __shfl_up_sync(m, f, o); });
}
inline int __shfl_up_sync(unsigned m, int v, int o) {
  return static_cast<int>(emu_shfl_up_bits(m, static_cast<unsigned>(v), o));
}
inline long long __shfl_up_sync(unsigned m, long long v, int o) {
  unsigned long long u;
  std::memcpy(&u, &v, 8);
  const unsigned lo = emu_shfl_up_bits(m, static_cast<unsigned>(u), o);
  const unsigned hi = emu_shfl_up_bits(m, static_cast<unsigned>(u >> 32), o);
  u = (static_cast<unsigned long long>(hi) << 32) | lo;
  std::memcpy(&v, &u, 8);
  return v;
}
namespace gdn {
extern unsigned char smem[232 * 1024];
extern unsigned char smem_cta1[232 * 1024];
}
extern thread_local unsigned t_tid;
// The calling thread's CTA's shared memory: gdn::smem, or a cluster's second CTA's (t_tid ≥ 1024)
// gdn::smem_cta1 (session 57).
inline unsigned char* emu_cta_smem() { return t_tid >= 1024 ? gdn::smem_cta1 : gdn::smem; }
// The shared-state-space address of p: its offset from its CTA's shared memory (session 29, ps29:
// the slim step's wgmma descriptors are built from tile pointers, not from smem + offsets), as each
// CTA's window starts at 0 on the GPU.
inline unsigned __cvta_generic_to_shared(const void* p) {
  return static_cast<unsigned>(static_cast<const unsigned char*>(p) - emu_cta_smem());
}
#define GDN_HOST_EMU 1
#include "gdn_fwd.cuh"  // declares the emu_* hooks below; the harness includes its kernel header next

namespace gdn {
alignas(1024) unsigned char smem[232 * 1024];  // the block's dynamic shared memory
// A 2-CTA cluster launch's second CTA's (launch with cluster_x = 2; its threads' t_tid are 1024 + t).
alignas(1024) unsigned char smem_cta1[232 * 1024];
}

// ---- block emulation ----
static std::unique_ptr<std::barrier<>> g_block[2];  // per CTA of a cluster (t_tid / 1024)
static std::unique_ptr<std::barrier<>> g_cluster;   // barrier.cluster: every thread of the cluster
static std::vector<std::unique_ptr<std::barrier<>>> g_warp;
// Per warpgroup (128 threads; a last partial group its threads): bench/gdn_wgmma_emu.h's wgmma.
static std::vector<std::unique_ptr<std::barrier<>>> g_wgroup;
static float g_xchg[64][32];
thread_local unsigned t_tid;
void __syncthreads() { g_block[t_tid >> 10]->arrive_and_wait(); }
void __syncwarp() { g_warp[t_tid / 32]->arrive_and_wait(); }  // every caller is warp-uniform
// mode 0: lane ^ x; 1: lane − x (up; own value below x); 2: lane x (indexed).
static float exchange(float v, int x, int mode) {
  const unsigned w = t_tid / 32, l = t_tid % 32;
  g_xchg[w][l] = v;
  g_warp[w]->arrive_and_wait();
  float r;
  if (mode == 1) r = (static_cast<int>(l) >= x) ? g_xchg[w][l - x] : v;
  else if (mode == 2) r = g_xchg[w][x & 31];
  else r = g_xchg[w][l ^ x];
  g_warp[w]->arrive_and_wait();
  return r;
}
float __shfl_xor_sync(unsigned, float v, int o) { return exchange(v, o, 0); }
float __shfl_up_sync(unsigned, float v, int o) { return exchange(v, o, 1); }
float __shfl_sync(unsigned, float v, int src) { return exchange(v, src, 2); }

// ---- tensor-core and async-copy primitives (warp-collective emulation) ----
static gdn::u32 g_ma[64][32][4], g_mb[64][32][2];
static const void* g_mp[64][32];
namespace gdn {
template <typename T>
void emu_mma(float* c, const u32* a, const u32* b) {
  const unsigned w = t_tid / 32, l = t_tid % 32;
  for (int i = 0; i < 4; ++i) g_ma[w][l][i] = a[i];
  g_mb[w][l][0] = b[0];
  g_mb[w][l][1] = b[1];
  g_warp[w]->arrive_and_wait();
  auto half = [](u32 x, int k) { return static_cast<unsigned short>((k & 1) ? x >> 16 : x & 0xffffu); };
  // A (16 x 16, row-major fragments): a0 (g, 2t..), a1 (g + 8, 2t..), a2 (g, 2t + 8..), a3 (g + 8, 2t + 8..).
  auto A = [&](int row, int k) {
    return static_cast<double>(Io<T>::bits_to_f(half(g_ma[w][(row & 7) * 4 + (k & 7) / 2][(row >> 3) + 2 * (k >> 3)], k)));
  };
  // B (16 x 8, column fragments): b0 (k = 2t.., n = g), b1 (k = 2t + 8.., n = g).
  auto B = [&](int k, int n) { return static_cast<double>(Io<T>::bits_to_f(half(g_mb[w][n * 4 + (k & 7) / 2][k >> 3], k))); };
  const int g = l >> 2, t = l & 3;
  float out[4];
  for (int e = 0; e < 4; ++e) {
    const int row = g + 8 * (e >> 1), col = 2 * t + (e & 1);
    double s = c[e];
    for (int k = 0; k < 16; ++k) s += A(row, k) * B(k, col);
    out[e] = static_cast<float>(s);
  }
  g_warp[w]->arrive_and_wait();
  for (int e = 0; e < 4; ++e) c[e] = out[e];
}
template void emu_mma<gdn_bf16>(float*, const u32*, const u32*);
template void emu_mma<gdn_f16>(float*, const u32*, const u32*);
// mma.sync m16n8k8 .tf32 (PTX ISA fragment layouts, g = lane / 4, t = lane % 4): A (16 x 8, row)
// a0 (g, t), a1 (g + 8, t), a2 (g, t + 4), a3 (g + 8, t + 4); B (8 x 8, col) b0 (k = t, n = g),
// b1 (k = t + 4, n = g); C / D c0, c1 (g, 2t / 2t + 1), c2, c3 (g + 8, 2t / 2t + 1). Operands are
// read as TF32 (the low 13 bits of each 32-bit register ignored); fp64 sums of the products onto
// the fp32 accumulator, as emu_mma.
void emu_mma_tf32(float* c, const u32* a, const u32* b) {
  const unsigned w = t_tid / 32, l = t_tid % 32;
  for (int i = 0; i < 4; ++i) g_ma[w][l][i] = a[i];
  g_mb[w][l][0] = b[0];
  g_mb[w][l][1] = b[1];
  g_warp[w]->arrive_and_wait();
  auto tf = [](u32 x) { return static_cast<double>(__uint_as_float(x & 0xffffe000u)); };
  auto A = [&](int row, int k) { return tf(g_ma[w][(row & 7) * 4 + (k & 3)][(row >> 3) + 2 * (k >> 2)]); };
  auto B = [&](int k, int n) { return tf(g_mb[w][n * 4 + (k & 3)][k >> 2]); };
  const int g = l >> 2, t = l & 3;
  float out[4];
  for (int e = 0; e < 4; ++e) {
    const int row = g + 8 * (e >> 1), col = 2 * t + (e & 1);
    double s = c[e];
    for (int k = 0; k < 8; ++k) s += A(row, k) * B(k, col);
    out[e] = static_cast<float>(s);
  }
  g_warp[w]->arrive_and_wait();
  for (int e = 0; e < 4; ++e) c[e] = out[e];
}
// ldmatrix.x4.trans: lanes 8m..8m+7 address the rows of matrix m; lane l receives, per matrix,
// (row 2(l%4), column l/4) in the low half and (row 2(l%4) + 1, column l/4) in the high half.
void emu_ldsm_x4_t(u32* r, const void* p) {
  const unsigned w = t_tid / 32, l = t_tid % 32;
  g_mp[w][l] = p;
  g_warp[w]->arrive_and_wait();
  for (int m = 0; m < 4; ++m) {
    const auto* r0 = static_cast<const unsigned short*>(g_mp[w][8 * m + 2 * (l & 3)]);
    const auto* r1 = static_cast<const unsigned short*>(g_mp[w][8 * m + 2 * (l & 3) + 1]);
    r[m] = static_cast<u32>(r0[l >> 2]) | (static_cast<u32>(r1[l >> 2]) << 16);
  }
  g_warp[w]->arrive_and_wait();
}
// ldmatrix.x4 without .trans: lane l gets row l / 4 of matrix m, elements 2 (l % 4) and + 1.
void emu_ldsm_x4(u32* r, const void* p) {
  const unsigned w = t_tid / 32, l = t_tid % 32;
  g_mp[w][l] = p;
  g_warp[w]->arrive_and_wait();
  for (int m = 0; m < 4; ++m) {
    const auto* row = static_cast<const unsigned short*>(g_mp[w][8 * m + (l >> 2)]);
    r[m] = static_cast<u32>(row[2 * (l & 3)]) | (static_cast<u32>(row[2 * (l & 3) + 1]) << 16);
  }
  g_warp[w]->arrive_and_wait();
}
// stmatrix.x4.trans: lane l holds, per matrix m, (row l / 4, columns 2 (l % 4), + 1); column j of
// matrix m is written to the 8 b16 elements at the address of lane 8m + j.
void emu_stsm_x4_t(void* p, const u32* r) {
  const unsigned w = t_tid / 32, l = t_tid % 32;
  g_mp[w][l] = p;
  for (int m = 0; m < 4; ++m) g_ma[w][l][m] = r[m];
  g_warp[w]->arrive_and_wait();
  if (l == 0)
    for (int m = 0; m < 4; ++m)
      for (int j = 0; j < 8; ++j) {
        auto* row = static_cast<unsigned short*>(const_cast<void*>(g_mp[w][8 * m + j]));
        for (int i = 0; i < 8; ++i) {  // fragment row i, column j: lane 4 i + j / 2, half j % 2
          const u32 x = g_ma[w][4 * i + j / 2][m];
          row[i] = static_cast<unsigned short>((j & 1) ? x >> 16 : x & 0xffffu);
        }
      }
  g_warp[w]->arrive_and_wait();
}
struct PendingCopy {
  void* dst;
  const void* src;
};
thread_local std::vector<PendingCopy> t_open;                 // issued, not yet committed
thread_local std::vector<std::vector<PendingCopy>> t_groups;  // committed, oldest first
}  // namespace gdn
// Eager cp.async (a copy lands when issued) instead of at the wait that covers it: the two ends
// of when a real copy may land; a buffer reused too early shows up under one or the other.
// GDN_EMU_CP_EAGER=1 starts a harness in the eager mode; the prep harness switches per run.
static bool g_cp_eager = getenv("GDN_EMU_CP_EAGER") != nullptr;
namespace gdn {
void emu_cp_async16(void* dst, const void* src) {
  if (g_cp_eager) memcpy(dst, src, 16);
  else t_open.push_back({dst, src});
}
void emu_cp_async_commit() {
  t_groups.push_back(std::move(t_open));
  t_open.clear();
}
// src-size 0 (zero fill) is a pending copy from nullptr: 16 zero bytes when it lands.
void emu_cp_async16_zfill(void* dst, const void* src, bool full) {
  if (full) emu_cp_async16(dst, src);
  else if (g_cp_eager) memset(dst, 0, 16);
  else t_open.push_back({dst, nullptr});
}
void emu_cp_async16_if(void* dst, const void* src, bool on) {
  if (on) emu_cp_async16(dst, src);
}
void emu_cp_async_wait(int n) {
  while (static_cast<int>(t_groups.size()) > n) {
    for (auto& x : t_groups.front())
      if (x.src) memcpy(x.dst, x.src, 16);
      else memset(x.dst, 0, 16);
    t_groups.erase(t_groups.begin());
  }
}
}  // namespace gdn
// Named barriers (bar.sync / bar.arrive id, n): a phase completes at the n-th arrival.
struct NamedBarrier {
  std::mutex m;
  std::condition_variable cv;
  int count = 0;
  unsigned long gen = 0;
};
static NamedBarrier g_named[2][16];  // per CTA of a cluster
namespace gdn {
void emu_bar_arrive(int id, int n) {
  NamedBarrier& b = g_named[t_tid >> 10][id];
  std::lock_guard<std::mutex> lk(b.m);
  if (++b.count == n) {
    b.count = 0;
    ++b.gen;
    b.cv.notify_all();
  }
}
void emu_bar_sync(int id, int n) {
  NamedBarrier& b = g_named[t_tid >> 10][id];
  std::unique_lock<std::mutex> lk(b.m);
  const unsigned long g = b.gen;
  if (++b.count == n) {
    b.count = 0;
    ++b.gen;
    b.cv.notify_all();
  } else {
    b.cv.wait(lk, [&] { return b.gen != g; });
  }
}
}  // namespace gdn
static std::atomic<int> g_unwaited{0};  // threads that ended with copies never waited for

// cluster_x = 2: the blocks x = 2i, 2i + 1 run together as one cluster (CTA rank x % 2), each with
// its own shared memory (gdn::smem, gdn::smem_cta1), block, named and warp barriers; t_tid is
// 1024 · rank + threadIdx.x (the warp-collective scratch is indexed by t_tid / 32).
static void launch(U3 grid, unsigned threads, const std::function<void()>& body, unsigned cluster_x = 1) {
  gridDim = grid;
  blockDim = {threads, 1, 1};
  if (threads > 1024 || (cluster_x != 1 && cluster_x != 2) || grid.x % cluster_x != 0) {
    fprintf(stderr, "launch emulation: %u threads, cluster %u over grid.x %u\n", threads, cluster_x, grid.x);
    std::abort();
  }
  for (unsigned z = 0; z < grid.z; ++z)
    for (unsigned y = 0; y < grid.y; ++y)
      for (unsigned x0 = 0; x0 < grid.x; x0 += cluster_x) {
        memset(gdn::smem, 0xFF, sizeof(gdn::smem));  // no read-before-write of shared memory
        memset(gdn::smem_cta1, 0xFF, sizeof(gdn::smem_cta1));
        g_cluster = std::make_unique<std::barrier<>>(threads * cluster_x);
        g_warp.clear();
        g_warp.resize(64);
        g_wgroup.clear();
        g_wgroup.resize(16);
        for (unsigned r = 0; r < cluster_x; ++r) {
          g_block[r] = std::make_unique<std::barrier<>>(threads);
          for (auto& nb : g_named[r]) {
            nb.count = 0;
            nb.gen = 0;
          }
          for (unsigned w = 0; w < (threads + 31) / 32; ++w) g_warp[32 * r + w] = std::make_unique<std::barrier<>>(32);
          for (unsigned w = 0; w < (threads + 127) / 128; ++w)
            g_wgroup[8 * r + w] = std::make_unique<std::barrier<>>(std::min(128u, threads - 128 * w));
        }
        std::vector<std::thread> ts;
        for (unsigned r = 0; r < cluster_x; ++r)
          for (unsigned t = 0; t < threads; ++t)
            ts.emplace_back([&, t, r, x0, y, z] {
              threadIdx = {t, 0, 0};
              blockIdx = {x0 + r, y, z};
              t_tid = 1024 * r + t;
              body();
              if (!gdn::t_open.empty() || !gdn::t_groups.empty()) ++g_unwaited;
              gdn::t_open.clear();
              gdn::t_groups.clear();
              // A thread that returned early leaves the barriers of its block, warp and cluster.
              g_block[r]->arrive_and_drop();
              g_warp[32 * r + t / 32]->arrive_and_drop();
              g_wgroup[8 * r + t / 128]->arrive_and_drop();
              g_cluster->arrive_and_drop();
            });
        for (auto& th : ts) th.join();
      }
}

// ---- problem helpers ----
static unsigned long long rng_state = 12345;
static double uni(double lo, double hi) {
  rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
  return lo + (hi - lo) * ((rng_state >> 11) * (1.0 / 9007199254740992.0));
}
template <typename T>
static unsigned short enc(double x) { return gdn::Io<T>::f_to_bits(static_cast<float>(x)); }
template <typename T>
static double dec(unsigned short b) { return gdn::Io<T>::bits_to_f(b); }

// ---- the hand-over primitives of kernels/include/dnnp_overlap.cuh, on the CPU (helper ovbwd) ----
// The kernel headers include dnnp_overlap.cuh only outside GDN_HOST_EMU; these stand in for it
// with the same structure (publish: block barrier, then thread 0 fences and release-stores; wait:
// thread 0 acquire-loads until the flag is set, then a block barrier) on C++ atomics, whose
// flags may live in a MAP_SHARED mapping that a forked producer process writes
// (gdn_bwd_host_emu.cpp, sets ov / piece4ov). griddepcontrol.launch_dependents / .wait: nothing
// (the harness starts the consumer first and waits for the producer process). A poll that finds
// the flag unset sleeps 20 us (the 2-core machine runs both sides).
#include <unistd.h>
inline void __threadfence() { __atomic_thread_fence(__ATOMIC_SEQ_CST); }
inline void dnnp_launch_dependents() {}
inline void dnnp_wait_prerequisites() {}
inline unsigned dnnp_flag_load_acquire(const unsigned* flag) { return __atomic_load_n(flag, __ATOMIC_ACQUIRE); }
inline void dnnp_flag_store_release(unsigned* flag, unsigned value) { __atomic_store_n(flag, value, __ATOMIC_RELEASE); }
inline void dnnp_flag_publish_after_barrier(unsigned* flag, unsigned value) {
  if (threadIdx.x == 0) {
    __threadfence();
    dnnp_flag_store_release(flag, value);
  }
}
// dnnp_overlap.cuh's add (a unit written by several blocks: the split reverse scan's halves).
inline void dnnp_flag_add_after_barrier(unsigned* flag, unsigned value) {
  if (threadIdx.x == 0) {
    __threadfence();
    __atomic_fetch_add(flag, value, __ATOMIC_RELEASE);
  }
}
inline void dnnp_flag_publish_block(unsigned* flag, unsigned value) {
  __syncthreads();
  dnnp_flag_publish_after_barrier(flag, value);
}
inline void dnnp_flag_wait_thread(const unsigned* flag, unsigned value) {
  while (dnnp_flag_load_acquire(flag) < value) usleep(20);
}
inline void dnnp_flag_wait_block(const unsigned* flag, unsigned value) {
  if (threadIdx.x == 0) dnnp_flag_wait_thread(flag, value);
  __syncthreads();
}

// ---- harness utilities shared by the emulations ----
// Relative rms error of `a` against the reference `b` (|a - b| / |b|, 2-norms; |b| = 0 counts as 1).
inline double rms_ratio(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}
