// dnnp_async_selftest.h (session 29, helper m029, td29's M0): the test kernels of
// kernels/include/dnnp_async.cuh and of dnnp_wgmma.cuh's SS forms, written once and compiled two
// ways: by nvcc for the H200 (bench/dnnp_async_selftest.cu) and by g++ on the CPU emulation
// (bench/dnnp_async_host_emu.cpp: gdn_host_emu.h's threads, gdn_wgmma_emu.h's wgmma / mbarriers).
// The including file provides, before this header: dnnp::* (the wrappers or their emulation),
// __syncthreads, __syncwarp, threadIdx / blockIdx and the CUDA qualifiers.
//
// 1. wg_case_body: D (64 x N) = A (64 x K) · Bᵀ (B: N x K), 16-bit inputs as raw bits, A and B
//    staged into shared memory in the case's layout (K-major or MN-major, 128- or 64-byte swizzle)
//    and multiplied by K / 16 SS wgmmas (m64n32k16 / m64n64k16, tnspA / tnspB as the case says).
// 2. ring_body: a warp-specialized producer / consumer ring over mbarriers, 384 threads: warpgroup
//    0 the producer (setmaxnreg.dec; its warp 0 copies), warpgroups 1-2 the consumers
//    (setmaxnreg.inc). NT tiles of 4 KB go through a ring of RING slots (full / empty mbarrier per
//    slot; parity flips per wrap): mode 0 by cp.async (each of the 32 lanes 8 x 16 B, then
//    cp.async.mbarrier.arrive.noinc: full count 32), mode 1 by one 4 KB bulk copy issued by the
//    elected lane after arrive.expect_tx (full count 1). Each consumer thread copies its 16-byte
//    chunk of the slot to the output, the consumers meet at named barrier 1 (bar.sync, 256), and
//    each consumer warp's elected lane arrives on empty (count 8). At the end warpgroup 1 writes a
//    word per thread and bar.arrive(2, 256), warpgroup 2 bar.sync(2, 256) and reads them
//    (named-barrier hand-off). The output must equal the input bit for bit.
// 3. The ring's release variants (session 31, helper rc31; how the consumers hand a slot back,
//    RingRelease below; the copies and the full side are the same in all four): REL_ELECT is
//    item 2's (M0's), REL_ALL has every consumer thread arrive on empty (count 256, no named
//    barrier), REL_BLOCK replaces the empty mbarriers by one __syncthreads() per tile (all 384
//    threads in one uniform loop: the producer's copy of tile t + RING follows the barrier that
//    ends tile t), REL_WARP is REL_ELECT without the named barrier (__syncwarp, elected arrive).
//    They exist to tell compute-sanitizer racecheck's reports apart (bench/gdn_device_rc31.sh).
#pragma once

#include <cstdint>
#include <cstring>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <vector>

namespace m029 {

// Case description: N (32 / 64), K (multiple of 16), the operands' majors (0 K-major, 1 MN-major)
// and swizzle modes (1: 128-byte, 2: 64-byte; wgmma_desc's swz).
struct WgCase {
  int n, k, ta, sa, tb, sb;
};

// Byte offset of element (row r of the N / M side, column c of the K side) of an operand stored
// in the given major / swizzle with `rows` rows: the layouts of dnnp_wgmma.cuh's header comments.
__host__ __device__ inline uint32_t wg_operand_offset(int major, int swz, int r, int c) {
  const uint32_t W = 256u >> swz;  // bytes per swizzled row; rows (K-major) / K-rows (MN-major) of W / 2 elements
  const uint32_t lin = major == 0 ? r * W + 2 * c  // [rows][K], K contiguous: (r / 8) SBO + (r % 8) W, SBO = 8 W
                                  : c * W + 2 * r;  // [K][rows], rows contiguous (rows <= W / 2): (c / 8) SBO + (c % 8) W
  return lin ^ (((lin >> 7) & (W / 16 - 1)) << 4);
}
// The descriptor of the k16 step kk of an operand (see wg_operand_offset): K-major +32 B per step,
// SBO 8 rows; MN-major +16 rows (16 W) per step, SBO 8 rows (8 W), LBO unused at <= W / 2 rows.
__host__ __device__ inline uint64_t wg_operand_desc(uint32_t base, int major, int swz, int kk) {
  const uint32_t W = 256u >> swz;
  return major == 0 ? dnnp::wgmma_desc(base + 32 * kk, 16, 8 * W, swz) : dnnp::wgmma_desc(base + 16 * W * kk, 16, 8 * W, swz);
}

template <int N, int TA, int TB, bool BF16>
__device__ inline void wg_issue(float* d, uint64_t a, uint64_t b) {
  if constexpr (N == 64) {
    if constexpr (BF16) dnnp::wgmma_m64n64k16_ss_bf16_t<TA, TB>(d, a, b);
    else dnnp::wgmma_m64n64k16_ss_f16_t<TA, TB>(d, a, b);
  } else {
    if constexpr (BF16) dnnp::wgmma_m64n32k16_ss_bf16_t<TA, TB>(d, a, b);
    else dnnp::wgmma_m64n32k16_ss_f16_t<TA, TB>(d, a, b);
  }
}

// 128 threads. A: [64][k] bits (m, k), B: [n][k] bits (n, k), D: [64][n] fp32. smem 1024-aligned.
template <int N, int TA, int TB, bool BF16>
__device__ inline void wg_case_body(unsigned char* smem, const WgCase c, const uint16_t* A, const uint16_t* B, float* D) {
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  unsigned char* as = smem;
  unsigned char* bs = smem + 16384;
  for (int i = tid; i < 64 * c.k; i += 128) {
    const int m = i / c.k, kk = i % c.k;
    *reinterpret_cast<uint16_t*>(as + wg_operand_offset(c.ta, c.sa, m, kk)) = A[i];
  }
  for (int i = tid; i < N * c.k; i += 128) {
    const int n = i / c.k, kk = i % c.k;
    *reinterpret_cast<uint16_t*>(bs + wg_operand_offset(c.tb, c.sb, n, kk)) = B[i];
  }
  dnnp::fence_proxy_async_shared();
  __syncthreads();
  float d[N / 2];
  for (int i = 0; i < N / 2; ++i) {
    d[i] = 0.f;
    dnnp::wgmma_fence_operand(d[i]);
  }
  const uint32_t abase = dnnp::smem_u32(as), bbase = dnnp::smem_u32(bs);
  dnnp::wgmma_fence();
  for (int kk = 0; kk < c.k / 16; ++kk)
    wg_issue<N, TA, TB, BF16>(d, wg_operand_desc(abase, TA, c.sa, kk), wg_operand_desc(bbase, TB, c.sb, kk));
  dnnp::wgmma_commit();
  dnnp::wgmma_wait<0>();
  for (int i = 0; i < N / 2; ++i) dnnp::wgmma_fence_operand(d[i]);
  const int r = 16 * warp + (lane >> 2), cc = 2 * (lane & 3);
  for (int j = 0; j < N / 8; ++j) {
    D[r * N + 8 * j + cc] = d[4 * j];
    D[r * N + 8 * j + cc + 1] = d[4 * j + 1];
    D[(r + 8) * N + 8 * j + cc] = d[4 * j + 2];
    D[(r + 8) * N + 8 * j + cc + 1] = d[4 * j + 3];
  }
}

constexpr int RING = 4, TILE = 4096, RING_THREADS = 384;
// Shared memory of ring_body: RING tiles, then 2 x RING mbarriers, then 128 words.
constexpr int RING_SMEM = RING * TILE + 2 * RING * 8 + 128 * 4;

// How the consumers release a slot to the producer (item 3 of the header).
enum RingRelease : int {
  REL_ELECT = 0,  // named_bar_sync(1, 256); __syncwarp(); the elected lane arrives on empty (count 8)
  REL_ALL = 1,    // every consumer thread arrives on empty (count 256); no named barrier
  REL_BLOCK = 2,  // one __syncthreads() (all 384 threads) per tile; the empty mbarriers are unused
  REL_WARP = 3,   // __syncwarp(); the elected lane arrives on empty (count 8); no named barrier
};
constexpr int REL_COUNT = 4;
inline const char* ring_release_name(int rel) {
  return rel == REL_ELECT  ? "elected lane after bar.sync(1, 256) + __syncwarp"
         : rel == REL_ALL  ? "every consumer thread arrives (count 256)"
         : rel == REL_BLOCK ? "__syncthreads() per tile, no empty mbarrier"
                            : "elected lane after __syncwarp only";
}

// The producer warp's copy of tile t (global offset g) into slot s: mode 0 by 32 lanes' cp.async
// then cp.async.mbarrier.arrive.noinc on full[s]; mode 1 by one bulk copy from the elected lane.
__device__ inline void ring_issue(unsigned char* slot, const unsigned char* g, uint64_t* full_s, int mode, int lane) {
  if (mode == 0) {
    for (int i = 0; i < TILE / 16 / 32; ++i) dnnp::cp_async16(slot + 16 * (32 * i + lane), g + 16 * (32 * i + lane));
    dnnp::cp_async_mbar_arrive_noinc(full_s);
  } else if (dnnp::elect_one()) {
    dnnp::mbar_arrive_expect_tx(full_s, TILE);
    dnnp::bulk_copy_g2s(slot, g, TILE, full_s);
  }
}

// 384 threads per block; block b moves tiles [b NT, b NT + NT) of src to dst; flag[b] gets the
// named-barrier hand-off's result per warpgroup-2 thread (flag[128 b + j]: 1 ok, 2 mismatch).
// rel: the release variant (RingRelease).
__device__ inline void ring_body(unsigned char* smem, const unsigned char* src, unsigned char* dst, int nt, int mode,
                                 unsigned* flag, int rel = REL_ELECT) {
  const int tid = threadIdx.x, wg = tid / 128, warp = tid / 32, lane = tid % 32;
  uint64_t* full = reinterpret_cast<uint64_t*>(smem + RING * TILE);
  uint64_t* empty = full + RING;
  unsigned* words = reinterpret_cast<unsigned*>(empty + RING);
  const size_t off = static_cast<size_t>(blockIdx.x) * nt * TILE;
  if (tid == 0) {
    for (int s = 0; s < RING; ++s) {
      dnnp::mbar_init(&full[s], mode == 0 ? 32 : 1);
      dnnp::mbar_init(&empty[s], rel == REL_ALL ? 256 : 8);
    }
    dnnp::mbar_init_fence();
  }
  __syncthreads();
  const int ct = tid - 128;  // consumers: 0..255, the 16-byte chunk of each tile this thread moves
  if (rel == REL_BLOCK) {
    // One loop for all 384 threads, so that its __syncthreads() is reached uniformly: tile t's
    // slot is read before the barrier that ends iteration t, and refilled (tile t + RING) after it.
    if (wg == 0) dnnp::setmaxnreg_dec<40>();
    else dnnp::setmaxnreg_inc<232>();
    if (warp == 0)
      for (int t = 0; t < nt && t < RING; ++t) ring_issue(smem + t * TILE, src + off + static_cast<size_t>(t) * TILE, &full[t], mode, lane);
    for (int t = 0; t < nt; ++t) {
      const int s = t % RING;
      if (wg > 0) {
        dnnp::mbar_wait(&full[s], (t / RING) & 1);
        const uint4 v = *reinterpret_cast<const uint4*>(smem + s * TILE + 16 * ct);
        *reinterpret_cast<uint4*>(dst + off + static_cast<size_t>(t) * TILE + 16 * ct) = v;
      }
      __syncthreads();
      if (warp == 0 && t + RING < nt)
        ring_issue(smem + s * TILE, src + off + static_cast<size_t>(t + RING) * TILE, &full[s], mode, lane);
    }
  } else if (wg == 0) {
    dnnp::setmaxnreg_dec<40>();
    if (warp == 0) {
      for (int t = 0; t < nt; ++t) {
        const int s = t % RING;
        const uint32_t par = ((t / RING) & 1) ^ 1;  // a fresh slot's first wait passes
        dnnp::mbar_wait(&empty[s], par);
        // Keeps the 32 lanes within one phase of each other: in bulk mode lanes 1-31 only wait,
        // and a lane two phases behind would alias the parity (try_wait.parity is valid for the
        // current and the immediately preceding phase only). Session 31: the CPU emulation, whose
        // lanes are threads, hung on it with REL_ALL (consumers without a named barrier run ahead).
        __syncwarp();
        ring_issue(smem + s * TILE, src + off + static_cast<size_t>(t) * TILE, &full[s], mode, lane);
      }
    }
  } else {
    dnnp::setmaxnreg_inc<232>();
    for (int t = 0; t < nt; ++t) {
      const int s = t % RING;
      dnnp::mbar_wait(&full[s], (t / RING) & 1);
      const uint4 v = *reinterpret_cast<const uint4*>(smem + s * TILE + 16 * ct);
      *reinterpret_cast<uint4*>(dst + off + static_cast<size_t>(t) * TILE + 16 * ct) = v;
      if (rel == REL_ALL) {
        dnnp::mbar_arrive(&empty[s]);
      } else {
        if (rel == REL_ELECT) dnnp::named_bar_sync(1, 256);
        __syncwarp();
        if (dnnp::elect_one()) dnnp::mbar_arrive(&empty[s]);
      }
    }
  }
  if (wg > 0) {
    // Named-barrier hand-off: warpgroup 1 writes, bar.arrive; warpgroup 2 bar.sync, reads.
    if (wg == 1) {
      words[ct] = 0x9E3779B9u * (ct + 1) + static_cast<unsigned>(blockIdx.x);
      dnnp::named_bar_arrive(2, 256);
    } else {
      dnnp::named_bar_sync(2, 256);
      const int j = ct - 128;
      flag[128 * blockIdx.x + j] = words[j] == 0x9E3779B9u * (j + 1) + static_cast<unsigned>(blockIdx.x) ? 1u : 2u;
    }
  }
}

// ---- host side: exact test values and their bits ----
// Values k / 64, k in [-64, 64]: exact in bf16 and f16, and every sum of K <= 64 products is exact
// in fp32 (multiples of 2^-12 below 2^6), so the wgmma result must equal the reference exactly.
inline uint16_t exact_bits(int k, bool bf16) {
  if (k == 0) return 0;
  const float f = k / 64.f;
  uint32_t u;
  memcpy(&u, &f, 4);
  if (bf16) return static_cast<uint16_t>(u >> 16);
  const uint32_t sign = (u >> 16) & 0x8000u, e = ((u >> 23) & 0xFF) - 127 + 15, m = (u >> 13) & 0x3FF;
  return static_cast<uint16_t>(sign | (e << 10) | m);
}


// ---- the driver shared by the GPU self-test and the emulation: one PASS / FAIL line per check ----
struct NamedCase {
  WgCase c;
  const char* what;
};
inline const NamedCase kCases[] = {
    {{64, 32, 0, 2, 1, 1}, "m64n64k16 A K-major sw64 x B MN-major sw128 (dKR = U dS', dQ+ = dO S quarter), K 32"},
    {{32, 32, 0, 2, 0, 2}, "m64n32k16 A K-major sw64 x B K-major sw64 (dA = dO U^T quarter), K 32"},
    {{64, 64, 1, 1, 1, 1}, "m64n64k16 A MN-major (tnspA) sw128 x B MN-major sw128 (dA'^T Q^), K 64"},
    {{32, 64, 1, 1, 0, 1}, "m64n32k16 A MN-major (tnspA) sw128 x B K-major sw128, K 64"},
    {{64, 64, 1, 1, 0, 1}, "m64n64k16 A MN-major (tnspA) sw128 x B K-major sw128, K 64"},
    {{32, 64, 0, 1, 0, 1}, "m64n32k16 A K-major sw128 x B K-major sw128 (phase A, Q^ K^T), K 64"},
    {{64, 64, 0, 1, 0, 1}, "m64n64k16 A K-major sw128 x B K-major sw128, K 64"},
    {{64, 32, 0, 2, 0, 2}, "m64n64k16 A K-major sw64 x B K-major sw64, K 32"},
};
template <class BK, bool BF16>
bool wg_dispatch(BK& bk, const WgCase& c, const uint16_t* A, const uint16_t* B, float* D) {
  if (c.n == 64 && c.ta == 0 && c.tb == 0) return bk.template wg<64, 0, 0, BF16>(c, A, B, D);
  if (c.n == 64 && c.ta == 0 && c.tb == 1) return bk.template wg<64, 0, 1, BF16>(c, A, B, D);
  if (c.n == 64 && c.ta == 1 && c.tb == 0) return bk.template wg<64, 1, 0, BF16>(c, A, B, D);
  if (c.n == 64 && c.ta == 1 && c.tb == 1) return bk.template wg<64, 1, 1, BF16>(c, A, B, D);
  if (c.n == 32 && c.ta == 0 && c.tb == 0) return bk.template wg<32, 0, 0, BF16>(c, A, B, D);
  if (c.n == 32 && c.ta == 0 && c.tb == 1) return bk.template wg<32, 0, 1, BF16>(c, A, B, D);
  if (c.n == 32 && c.ta == 1 && c.tb == 0) return bk.template wg<32, 1, 0, BF16>(c, A, B, D);
  return bk.template wg<32, 1, 1, BF16>(c, A, B, D);
}
// The ring checks on backend `bk` (ring(src, dst, nt, mode, grid, flags, rel), false on a launch /
// runtime error) for release variant `rel` and copy modes [mode_lo, mode_hi]: two PASS / FAIL lines
// per mode (the bytes, the named-barrier hand-off); returns the failures. REL_ELECT's lines are the
// session-29 wording; the other variants add "[release: ...]".
template <class BK>
int run_ring(BK& bk, int ring_grid, int ring_nt, int rel, int mode_lo, int mode_hi) {
  int fails = 0;
  char tag[96] = "";
  if (rel != REL_ELECT) snprintf(tag, sizeof tag, " [release: %s]", ring_release_name(rel));
  for (int mode = mode_lo; mode <= mode_hi; ++mode) {
    const size_t bytes = static_cast<size_t>(ring_grid) * ring_nt * TILE;
    std::vector<unsigned char> src(bytes), dst(bytes, 0);
    for (size_t i = 0; i < bytes; ++i) src[i] = static_cast<unsigned char>((i * 2654435761u) >> 13);
    std::vector<unsigned> flags(128 * ring_grid, 0);
    const bool run = bk.ring(src.data(), dst.data(), ring_nt, mode, ring_grid, flags.data(), rel);
    size_t bad = 0;
    for (size_t i = 0; i < bytes; ++i) bad += src[i] != dst[i];
    size_t fbad = 0;
    for (unsigned f : flags) fbad += f != 1u;
    const bool ok = run && bad == 0;
    printf("%s mbarrier ring (%s): %d blocks x %d tiles x %d B through %d slots, 1 producer warp + 2 consumer warpgroups, "
           "setmaxnreg 40 / 232: %zu bytes differ%s\n",
           ok ? "PASS" : "FAIL", mode == 0 ? "cp.async + cp.async.mbarrier.arrive.noinc" : "elect + arrive.expect_tx + bulk copy",
           ring_grid, ring_nt, TILE, RING, bad, tag);
    printf("%s named barriers (bar.sync 1 per tile; bar.arrive / bar.sync 2 hand-off, %s mode): %zu of %d words wrong%s\n",
           run && fbad == 0 ? "PASS" : "FAIL", mode == 0 ? "cp.async" : "bulk", fbad, 128 * ring_grid, tag);
    fflush(stdout);
    fails += !ok;
    fails += !(run && fbad == 0);
  }
  return fails;
}

// Runs every check on backend `bk` (wg<N, TA, TB, BF16>(case, A, B, D) and the ring as run_ring
// says, each returning false on a launch / runtime error); returns the failures. The ring runs
// REL_ELECT (the session-29 checks).
template <class BK>
int run_all(BK& bk, int ring_grid, int ring_nt) {
  int fails = 0;
  uint32_t st = 20261203u;
  auto rnd = [&]() {
    st = st * 1664525u + 1013904223u;
    return static_cast<int>((st >> 8) % 129) - 64;
  };
  for (int bf = 1; bf >= 0; --bf)
    for (const NamedCase& nc : kCases) {
      const WgCase& c = nc.c;
      std::vector<int> ai(64 * c.k), bi(c.n * c.k);
      std::vector<uint16_t> a(64 * c.k), b(c.n * c.k);
      for (size_t i = 0; i < a.size(); ++i) a[i] = exact_bits(ai[i] = rnd(), bf);
      for (size_t i = 0; i < b.size(); ++i) b[i] = exact_bits(bi[i] = rnd(), bf);
      std::vector<float> d(64 * c.n, -1.f);
      const bool run = bf ? wg_dispatch<BK, true>(bk, c, a.data(), b.data(), d.data())
                          : wg_dispatch<BK, false>(bk, c, a.data(), b.data(), d.data());
      double maxerr = 0, maxref = 0;
      for (int m = 0; m < 64; ++m)
        for (int n = 0; n < c.n; ++n) {
          double ref = 0;
          for (int k = 0; k < c.k; ++k) ref += (ai[m * c.k + k] / 64.0) * (bi[n * c.k + k] / 64.0);
          maxerr = std::max(maxerr, std::fabs(ref - d[m * c.n + n]));
          maxref = std::max(maxref, std::fabs(ref));
        }
      const bool ok = run && maxerr == 0.0;
      printf("%s wgmma SS %s %s: max |D - ref| %.3e (exact expected), max |ref| %.3f\n", ok ? "PASS" : "FAIL",
             bf ? "bf16" : "f16 ", nc.what, maxerr, maxref);
      fflush(stdout);
      fails += !ok;
    }
  fails += run_ring(bk, ring_grid, ring_nt, REL_ELECT, 0, 1);
  printf("%s dnnp_async selftest: %d failure(s)\n", fails ? "FAIL" : "PASS", fails);
  return fails;
}
}  // namespace m029
