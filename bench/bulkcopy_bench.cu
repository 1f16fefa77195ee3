// bulkcopy_bench.cu — global -> shared copy paths on Hopper (H200), measured in isolation.
//
// Contract: a standalone microbenchmark (no Rust, no dnnplan code). For each configuration it
// streams a per-block schedule of "stages" (G bytes each) from a global source into a ring of S
// stages in shared memory, consumes every stage (a checksum of all its 32-bit words by 128 threads,
// like a consumer reading the tile), and reports bytes moved, time (CUDA events), GB/s per SM
// (per block: bytes / (%globaltimer ns of its loop); clock64 cycles give the SM clock) and in
// aggregate. Every data point is validated: the sum of all words landed in shared memory must equal
// the sum computed by a plain global-load kernel over the same offsets ("ok" / "BAD").
// Copy paths:
//   cpa  : 16-byte cp.async.cg by 128 threads, one commit group per stage, S groups in flight.
//   bulk : cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes, a stage = G/C copies of
//          C bytes, FULL[s] mbarrier (arrive.expect_tx G, try_wait.parity), EMPTY[s] mbarrier for
//          the refill; issued by lane 0 alone ("thr") or spread over warp 0's lanes ("warp").
//   mc   : the same with .multicast::cluster in a 2-CTA cluster (ctaMask 0b11), each CTA issuing
//          half of the stage's copies; both CTAs receive all G bytes; EMPTY needs both CTAs.
// Scope: one CTA (cluster) alone ("1sm") or one CTA per SM on all SMs ("all"); dynamic shared
// memory >= 120 KB forces one CTA per SM. Source: "L2" = 8 MB re-read (warmed), "DRAM" = 1 GB
// streamed (interleaved across blocks so the whole grid walks it contiguously).
// Latency ("lat"): one copy of C bytes at a time, clock64 from issue to completion (bulk: to the
// mbarrier's try_wait success; cpa: 128 threads, wait_group 0 + bar.sync), median of 64.
//   pc / pcmc : bulk / multicast rings with clus11's structure: a producer warp (warp 4) that only
//          issues, 4 consumer warps that only wait FULL, sum and arrive on EMPTY (no bar.sync).
// Burst ("burst"): N copies of C bytes issued back to back onto one mbarrier (L2 source), clock64
// from the first issue to completion and to the end of the issue loop: the per-copy cost.
// Usage: bulkcopy_bench <family: lat|cpa|bulk|mc|pc|pcmc|burst>; prints one line per data point.
#include <cuda_runtime.h>
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#define CK(x)                                                                              \
  do {                                                                                     \
    cudaError_t e_ = (x);                                                                  \
    if (e_ != cudaSuccess) {                                                               \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", #x, __FILE__, __LINE__,              \
              cudaGetErrorString(e_));                                                     \
      exit(2);                                                                             \
    }                                                                                      \
  } while (0)

static constexpr int kThreads = 128;
static constexpr uint32_t kMinSmem = 120 * 1024;  // > half of 228 KB: one CTA per SM
static constexpr int kBarBytes = 256;              // FULL[8], EMPTY[8] (8 B each) + pad

struct Params {
  const uint8_t* src;
  uint64_t src_bytes;
  uint32_t G;        // stage bytes (received per CTA)
  uint32_t C;        // bytes per copy (bulk)
  uint32_t S;        // stages in flight
  uint32_t iters;    // stages per CTA
  uint32_t units;    // schedule units (blocks, or clusters)
  int warp_issue;    // bulk: 0 = lane 0 issues all copies, 1 = spread over warp 0's lanes
  unsigned long long* sum;
  unsigned long long* cyc;  // per block: clock64 cycles of the loop
  unsigned long long* ns;   // per block: %globaltimer ns of the loop
  unsigned int* hang;       // set when a bounded wait gave up
};

// ------------------------------------------------------------------ PTX helpers
__device__ __forceinline__ uint32_t smem_u32(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}
__device__ __forceinline__ unsigned long long gtimer() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}
__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(bar), "r"(count) : "memory");
}
__device__ __forceinline__ void fence_mbar_init() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}
__device__ __forceinline__ void mbar_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;" ::"r"(bar), "r"(bytes)
               : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];" ::"r"(bar) : "memory");
}
__device__ __forceinline__ void mbar_arrive_remote(uint32_t bar, uint32_t cta) {
  asm volatile(
      "{\n\t.reg .b32 ra;\n\t"
      "mapa.shared::cluster.u32 ra, %0, %1;\n\t"
      "mbarrier.arrive.release.cluster.shared::cluster.b64 _, [ra];\n\t}" ::"r"(bar),
      "r"(cta)
      : "memory");
}
__device__ __forceinline__ uint32_t mbar_try_wait(uint32_t bar, uint32_t parity) {
  uint32_t ok;
  asm volatile(
      "{\n\t.reg .pred p;\n\t"
      "mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n\t"
      "selp.u32 %0, 1, 0, p;\n\t}"
      : "=r"(ok)
      : "r"(bar), "r"(parity)
      : "memory");
  return ok;
}
// Bounded wait: gives up after ~2^20 tries, flags the data point instead of hanging; a thread
// that gave up once (dead) skips its later waits so a broken point ends quickly.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity, unsigned int* hang,
                                          bool& dead) {
  if (dead) return;
  for (uint32_t n = 0; !mbar_try_wait(bar, parity); ++n) {
    if (n > (1u << 20)) {
      atomicExch(hang, 1u);
      dead = true;
      return;
    }
  }
}
__device__ __forceinline__ void bulk_g2s(uint32_t dst, const void* src, uint32_t bytes,
                                         uint32_t bar) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];" ::"r"(
          dst),
      "l"(src), "r"(bytes), "r"(bar)
      : "memory");
}
__device__ __forceinline__ void bulk_g2s_mc(uint32_t dst, const void* src, uint32_t bytes,
                                            uint32_t bar, uint16_t mask) {
  asm volatile(
      "cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes.multicast::cluster "
      "[%0], [%1], %2, [%3], %4;" ::"r"(dst),
      "l"(src), "r"(bytes), "r"(bar), "h"(mask)
      : "memory");
}
__device__ __forceinline__ void cpa16(uint32_t dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(dst), "l"(src) : "memory");
}
__device__ __forceinline__ void cpa_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
template <int N>
__device__ __forceinline__ void cpa_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}
__device__ __forceinline__ void cpa_wait_dyn(uint32_t n) {
  switch (n) {
    case 0: cpa_wait<0>(); break;
    case 1: cpa_wait<1>(); break;
    case 2: cpa_wait<2>(); break;
    case 3: cpa_wait<3>(); break;
    case 4: cpa_wait<4>(); break;
    case 5: cpa_wait<5>(); break;
    case 6: cpa_wait<6>(); break;
    default: cpa_wait<7>(); break;
  }
}
__device__ __forceinline__ uint32_t cluster_rank() {
  uint32_t r;
  asm volatile("mov.u32 %0, %%cluster_ctarank;" : "=r"(r));
  return r;
}
__device__ __forceinline__ void cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\n\tbarrier.cluster.wait.acquire.aligned;" ::
                   : "memory");
}

// Sum of the 32-bit words of a stage (uint4 per thread-step).
__device__ __forceinline__ unsigned long long stage_sum(const uint8_t* stage, uint32_t G,
                                                        uint32_t nthr = kThreads) {
  unsigned long long s = 0;
  const uint4* p = reinterpret_cast<const uint4*>(stage);
  for (uint32_t i = threadIdx.x; i < G / 16; i += nthr) {
    uint4 v = p[i];
    s += (unsigned long long)v.x + v.y + v.z + v.w;
  }
  return s;
}
__device__ __forceinline__ void block_add(unsigned long long s, unsigned long long* out) {
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, s);
}
__device__ __forceinline__ uint64_t stage_off(const Params& p, uint32_t j, uint32_t unit) {
  return ((uint64_t(j) * p.units + unit) * p.G) & (p.src_bytes - 1);  // sizes are powers of 2
}

// ------------------------------------------------------------------ cp.async (16 B, 128 threads)
__global__ void __launch_bounds__(kThreads) k_cpa(Params p) {
  extern __shared__ __align__(1024) uint8_t smem[];
  uint8_t* ring = smem + kBarBytes;
  const uint32_t unit = blockIdx.x;
  auto issue = [&](uint32_t j) {
    const uint8_t* g = p.src + stage_off(p, j, unit);
    uint32_t d = smem_u32(ring + (j % p.S) * p.G);
    for (uint32_t i = threadIdx.x; i < p.G / 16; i += blockDim.x) cpa16(d + i * 16, g + i * 16);
  };
  __syncthreads();
  unsigned long long c0 = clock64(), t0 = gtimer();
  for (uint32_t j = 0; j < p.S; ++j) {
    if (j < p.iters) issue(j);
    cpa_commit();
  }
  unsigned long long s = 0;
  for (uint32_t i = 0; i < p.iters; ++i) {
    cpa_wait_dyn(p.S - 1);
    __syncthreads();
    s += stage_sum(ring + (i % p.S) * p.G, p.G);
    __syncthreads();
    if (i + p.S < p.iters) issue(i + p.S);
    cpa_commit();
  }
  unsigned long long c1 = clock64(), t1 = gtimer();
  block_add(s, p.sum);
  if (threadIdx.x == 0) {
    p.cyc[blockIdx.x] = c1 - c0;
    p.ns[blockIdx.x] = t1 - t0;
  }
}

// ------------------------------------------------------------------ bulk copies (+ multicast)
template <bool MC>
__device__ __forceinline__ void bulk_body(const Params& p) {
  extern __shared__ __align__(1024) uint8_t smem[];
  uint8_t* ring = smem + kBarBytes;
  const uint32_t full0 = smem_u32(smem), empty0 = full0 + 64;
  const uint32_t rank = MC ? cluster_rank() : 0u;
  const uint32_t unit = MC ? blockIdx.x / 2 : blockIdx.x;
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < p.S; ++s) {
      mbar_init(full0 + 8 * s, 1);
      mbar_init(empty0 + 8 * s, MC ? 2 : 1);
    }
    fence_mbar_init();
  }
  __syncthreads();
  if (MC) cluster_sync();
  const uint32_t ncopies = p.G / p.C;
  // Fill stage j (warp 0 only).
  auto fill = [&](uint32_t j) {
    const uint32_t s = j % p.S;
    const uint32_t bar = full0 + 8 * s;
    const uint8_t* g = p.src + stage_off(p, j, unit);
    const uint32_t d = smem_u32(ring + s * p.G);
    if (lane == 0) mbar_expect_tx(bar, p.G);
    __syncwarp();
    if (MC) {
      // this CTA issues copies k = 2m + rank
      const uint32_t mine = ncopies / 2;
      for (uint32_t m = p.warp_issue ? lane : 0; m < mine; m += p.warp_issue ? 32 : 1) {
        if (!p.warp_issue && lane != 0) break;
        const uint32_t k = 2 * m + rank;
        bulk_g2s_mc(d + k * p.C, g + uint64_t(k) * p.C, p.C, bar, (uint16_t)0x3);
      }
    } else {
      for (uint32_t k = p.warp_issue ? lane : 0; k < ncopies; k += p.warp_issue ? 32 : 1) {
        if (!p.warp_issue && lane != 0) break;
        bulk_g2s(d + k * p.C, g + uint64_t(k) * p.C, p.C, bar);
      }
    }
  };
  unsigned long long c0 = clock64(), t0 = gtimer();
  if (warp == 0)
    for (uint32_t j = 0; j < p.S && j < p.iters; ++j) fill(j);
  unsigned long long sum = 0;
  bool dead = false;
  for (uint32_t i = 0; i < p.iters; ++i) {
    const uint32_t s = i % p.S, par = (i / p.S) & 1u;
    mbar_wait(full0 + 8 * s, par, p.hang, dead);
    sum += stage_sum(ring + s * p.G, p.G);
    __syncthreads();  // all local readers done with stage s
    if (threadIdx.x == 0) {
      mbar_arrive(empty0 + 8 * s);
      if (MC) mbar_arrive_remote(empty0 + 8 * s, rank ^ 1u);
    }
    if (warp == 0 && i + p.S < p.iters) {
      mbar_wait(empty0 + 8 * s, par, p.hang, dead);  // both CTAs released stage s (MC), or just us
      fill(i + p.S);
    }
  }
  unsigned long long c1 = clock64(), t1 = gtimer();
  __syncthreads();
  if (MC) cluster_sync();  // no CTA exits while its peer may still arrive / multicast into it
  block_add(sum, p.sum);
  if (threadIdx.x == 0) {
    p.cyc[blockIdx.x] = c1 - c0;
    p.ns[blockIdx.x] = t1 - t0;
  }
}
__global__ void __launch_bounds__(kThreads) k_bulk(Params p) { bulk_body<false>(p); }
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(kThreads) k_mc(Params p) {
  bulk_body<true>(p);
}

// ------------------------------------------------------------------ producer warp + 4 consumer warps
// clus11's structure: warp 4 only issues (waits EMPTY[s], arrive.expect_tx, copies), warps 0-3
// only consume (wait FULL[s], checksum, lane 0 of each warp arrives on EMPTY[s], locally and, in a
// cluster, on the peer's). No block barrier in the loop. EMPTY count = 4 warps x cluster size.
template <bool MC>
__device__ __forceinline__ void pc_body(const Params& p) {
  extern __shared__ __align__(1024) uint8_t smem[];
  uint8_t* ring = smem + kBarBytes;
  const uint32_t full0 = smem_u32(smem), empty0 = full0 + 64;
  const uint32_t rank = MC ? cluster_rank() : 0u;
  const uint32_t unit = MC ? blockIdx.x / 2 : blockIdx.x;
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    for (uint32_t s = 0; s < p.S; ++s) {
      mbar_init(full0 + 8 * s, 1);
      mbar_init(empty0 + 8 * s, MC ? 8 : 4);
    }
    fence_mbar_init();
  }
  __syncthreads();
  if (MC) cluster_sync();
  const uint32_t ncopies = p.G / p.C;
  unsigned long long c0 = clock64(), t0 = gtimer();
  unsigned long long sum = 0;
  bool dead = false;
  if (warp == 4) {
    for (uint32_t j = 0; j < p.iters; ++j) {
      const uint32_t s = j % p.S;
      if (j >= p.S) mbar_wait(empty0 + 8 * s, ((j / p.S) - 1) & 1u, p.hang, dead);
      const uint32_t bar = full0 + 8 * s;
      const uint8_t* g = p.src + stage_off(p, j, unit);
      const uint32_t d = smem_u32(ring + s * p.G);
      if (lane == 0) mbar_expect_tx(bar, p.G);
      __syncwarp();
      const uint32_t step = p.warp_issue ? 32 : 1;
      if (p.warp_issue || lane == 0) {
        if (MC) {
          for (uint32_t m = p.warp_issue ? lane : 0; m < ncopies / 2; m += step) {
            const uint32_t k = 2 * m + rank;
            bulk_g2s_mc(d + k * p.C, g + uint64_t(k) * p.C, p.C, bar, (uint16_t)0x3);
          }
        } else {
          for (uint32_t k = p.warp_issue ? lane : 0; k < ncopies; k += step)
            bulk_g2s(d + k * p.C, g + uint64_t(k) * p.C, p.C, bar);
        }
      }
    }
  } else {
    for (uint32_t i = 0; i < p.iters; ++i) {
      const uint32_t s = i % p.S, par = (i / p.S) & 1u;
      mbar_wait(full0 + 8 * s, par, p.hang, dead);
      sum += stage_sum(ring + s * p.G, p.G, 128);
      __syncwarp();
      if (lane == 0) {
        mbar_arrive(empty0 + 8 * s);
        if (MC) mbar_arrive_remote(empty0 + 8 * s, rank ^ 1u);
      }
    }
  }
  unsigned long long c1 = clock64(), t1 = gtimer();
  __syncthreads();
  if (MC) cluster_sync();
  if (warp < 4) block_add(sum, p.sum);
  if (threadIdx.x == 0) {
    p.cyc[blockIdx.x] = c1 - c0;
    p.ns[blockIdx.x] = t1 - t0;
  }
}
__global__ void __launch_bounds__(160) k_pc(Params p) { pc_body<false>(p); }
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(160) k_pcmc(Params p) {
  pc_body<true>(p);
}

// ------------------------------------------------------------------ burst: N copies, one mbarrier
// Per rep: thread 0 reads clock64, arrive.expect_tx(N*C), the copies are issued (by lane 0, or
// spread over warp 0's lanes; MC: each CTA of the cluster issues N/2 copies multicast to both),
// clock64 after lane 0's issue loop (+__syncwarp), wait, clock64. A burst starts at
// (r*N*C + unit*192 KB) mod 4 MB of the 8 MB buffer, so N*C <= 192 KB never reads past its end
// (run 2 used mod 8 MB and read past the end on all SMs: fixed after the run, not re-run).
template <bool MC>
__device__ __forceinline__ void burst_body(const uint8_t* src, uint64_t mask, uint32_t C,
                                           uint32_t N, uint32_t reps, int warp_issue,
                                           unsigned long long* cyc, unsigned long long* iss,
                                           unsigned long long* sum, unsigned int* hang) {
  extern __shared__ __align__(1024) uint8_t smem[];
  uint8_t* buf = smem + kBarBytes;
  const uint32_t bar = smem_u32(smem);
  const uint32_t rank = MC ? cluster_rank() : 0u;
  const uint32_t warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  if (threadIdx.x == 0) {
    mbar_init(bar, 1);
    fence_mbar_init();
  }
  __syncthreads();
  if (MC) cluster_sync();
  unsigned long long s = 0;
  bool dead = false;
  const uint32_t unit = MC ? blockIdx.x / 2 : blockIdx.x;
  for (uint32_t r = 0; r < reps; ++r) {
    const uint8_t* g = src + ((uint64_t(r) * N * C + uint64_t(unit) * 3 * 65536) & mask);
    unsigned long long c0 = clock64(), ci = 0;
    if (warp == 0) {
      if (lane == 0) mbar_expect_tx(bar, N * C);
      __syncwarp();
      const uint32_t step = warp_issue ? 32 : 1;
      if (warp_issue || lane == 0) {
        if (MC) {
          for (uint32_t m = warp_issue ? lane : 0; m < N / 2; m += step) {
            const uint32_t k = 2 * m + rank;
            bulk_g2s_mc(smem_u32(buf) + k * C, g + uint64_t(k) * C, C, bar, (uint16_t)0x3);
          }
        } else {
          for (uint32_t k = warp_issue ? lane : 0; k < N; k += step)
            bulk_g2s(smem_u32(buf) + k * C, g + uint64_t(k) * C, C, bar);
        }
      }
      __syncwarp();
      ci = clock64();
    }
    mbar_wait(bar, r & 1u, hang, dead);
    unsigned long long c1 = clock64();
    if (threadIdx.x == 0) {
      cyc[blockIdx.x * reps + r] = c1 - c0;
      iss[blockIdx.x * reps + r] = ci - c0;
    }
    s += stage_sum(buf, N * C);
    __syncthreads();
    if (MC) cluster_sync();  // the peer multicasts the next rep only after both summed this one
  }
  block_add(s, sum);
}
__global__ void __launch_bounds__(kThreads) k_burst(const uint8_t* src, uint64_t mask, uint32_t C,
                                                    uint32_t N, uint32_t reps, int warp_issue,
                                                    unsigned long long* cyc,
                                                    unsigned long long* iss,
                                                    unsigned long long* sum, unsigned int* hang) {
  burst_body<false>(src, mask, C, N, reps, warp_issue, cyc, iss, sum, hang);
}
__global__ void __cluster_dims__(2, 1, 1) __launch_bounds__(kThreads)
    k_burstmc(const uint8_t* src, uint64_t mask, uint32_t C, uint32_t N, uint32_t reps,
              int warp_issue, unsigned long long* cyc, unsigned long long* iss,
              unsigned long long* sum, unsigned int* hang) {
  burst_body<true>(src, mask, C, N, reps, warp_issue, cyc, iss, sum, hang);
}

// ------------------------------------------------------------------ reference checksum
// off(j, unit) = (base + j * a + unit * b) % src_bytes, G bytes each, plain global loads.
__global__ void k_ref(const uint8_t* src, uint64_t src_bytes, uint64_t base, uint64_t a,
                      uint64_t b, uint32_t G, uint32_t iters, unsigned long long* out) {
  unsigned long long s = 0;
  for (uint32_t j = 0; j < iters; ++j) {
    const uint4* g = reinterpret_cast<const uint4*>(
        src + (base + uint64_t(j) * a + uint64_t(blockIdx.x) * b) % src_bytes);
    for (uint32_t i = threadIdx.x; i < G / 16; i += blockDim.x) {
      uint4 v = g[i];
      s += (unsigned long long)v.x + v.y + v.z + v.w;
    }
  }
  for (int o = 16; o > 0; o >>= 1) s += __shfl_xor_sync(0xffffffffu, s, o);
  if ((threadIdx.x & 31) == 0) atomicAdd(out, s);
}

__global__ void k_init(uint32_t* p, uint64_t n) {
  for (uint64_t i = blockIdx.x * uint64_t(blockDim.x) + threadIdx.x; i < n;
       i += uint64_t(gridDim.x) * blockDim.x) {
    uint32_t x = uint32_t(i) * 2654435761u ^ uint32_t(i >> 32) * 40503u;
    x ^= x >> 15;
    x *= 2246822519u;
    x ^= x >> 13;
    p[i] = x;
  }
}

// ------------------------------------------------------------------ latency of a single copy
// mode 0: one bulk copy of C bytes by thread 0 (mbarrier complete_tx, try_wait.parity)
// mode 1: C bytes by 16-byte cp.async over 128 threads, wait_group 0 + bar.sync
// mode 2: the mbarrier handshake alone (arrive, try_wait.parity), no copy
// Copy r reads src + (base + r * stride) % src_bytes. cyc[r] = clock64 delta seen by thread 0.
__global__ void __launch_bounds__(kThreads) k_lat(const uint8_t* src, uint64_t src_bytes,
                                                  uint64_t base, uint64_t stride, uint32_t C,
                                                  uint32_t reps, int mode,
                                                  unsigned long long* cyc,
                                                  unsigned long long* sum, unsigned int* hang) {
  extern __shared__ __align__(1024) uint8_t smem[];
  uint8_t* buf = smem + kBarBytes;
  const uint32_t bar = smem_u32(smem);
  if (threadIdx.x == 0) {
    mbar_init(bar, 1);
    fence_mbar_init();
  }
  __syncthreads();
  unsigned long long s = 0;
  bool dead = false;
  for (uint32_t r = 0; r < reps; ++r) {
    const uint8_t* g = src + (base + uint64_t(r) * stride) % src_bytes;
    __syncthreads();
    unsigned long long c0 = clock64();
    if (mode == 1) {
      for (uint32_t i = threadIdx.x; i < C / 16; i += blockDim.x)
        cpa16(smem_u32(buf) + i * 16, g + i * 16);
      cpa_commit();
      cpa_wait<0>();
      __syncthreads();
    } else {
      if (threadIdx.x == 0) {
        if (mode == 0) {
          mbar_expect_tx(bar, C);
          bulk_g2s(smem_u32(buf), g, C, bar);
        } else {
          mbar_arrive(bar);
        }
      }
      mbar_wait(bar, r & 1u, hang, dead);
    }
    unsigned long long c1 = clock64();
    if (threadIdx.x == 0) cyc[r] = c1 - c0;
    if (mode != 2) s += stage_sum(buf, C);
    __syncthreads();
  }
  block_add(s, sum);
}

// ------------------------------------------------------------------ host
struct Dev {
  uint8_t* l2 = nullptr;    // 8 MB
  uint8_t* dram = nullptr;  // 1 GB
  unsigned long long *sum, *ref, *cyc, *ns;
  unsigned int* hang;
  int sms = 0;
  double clock_ghz = 0;
};
static const uint64_t kL2Bytes = 8ull << 20, kDramBytes = 1ull << 30;

static void init_dev(Dev& d) {
  CK(cudaSetDevice(0));
  CK(cudaDeviceGetAttribute(&d.sms, cudaDevAttrMultiProcessorCount, 0));
  int khz = 0;
  CK(cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, 0));
  d.clock_ghz = khz / 1e6;
  CK(cudaMalloc(&d.l2, kL2Bytes));
  CK(cudaMalloc(&d.dram, kDramBytes));
  CK(cudaMalloc(&d.sum, 8));
  CK(cudaMalloc(&d.ref, 8));
  CK(cudaMalloc(&d.cyc, 4096 * 8));
  CK(cudaMalloc(&d.ns, 4096 * 8));
  CK(cudaMalloc(&d.hang, 4));
  k_init<<<1024, 256>>>((uint32_t*)d.l2, kL2Bytes / 4);
  k_init<<<4096, 256>>>((uint32_t*)d.dram, kDramBytes / 4);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  for (auto f : {(const void*)k_cpa, (const void*)k_bulk, (const void*)k_mc, (const void*)k_lat,
                 (const void*)k_pc, (const void*)k_pcmc, (const void*)k_burst,
                 (const void*)k_burstmc})
    CK(cudaFuncSetAttribute(f, cudaFuncAttributeMaxDynamicSharedMemorySize, 227 * 1024));
}

enum Path { CPA = 0, BULK = 1, MC = 2, PC = 3, PCMC = 4 };
struct Cfg {
  Path path;
  uint32_t C, G, S;
  int warp_issue;
};

static void run_point(Dev& d, const Cfg& c, bool all_sms, bool dram) {
  const bool cl = c.path == MC || c.path == PCMC;
  const int ctas = all_sms ? (cl ? d.sms / 2 * 2 : d.sms) : (cl ? 2 : 1);
  const uint32_t units = cl ? ctas / 2 : ctas;
  const uint64_t per_cta = 8ull << 20;  // bytes received per CTA
  Params p{};
  p.src = dram ? d.dram : d.l2;
  p.src_bytes = dram ? kDramBytes : kL2Bytes;
  p.G = c.G;
  p.C = c.path == CPA ? 16 : c.C;
  p.S = c.S;
  p.iters = uint32_t(per_cta / c.G);
  p.units = units;
  p.warp_issue = c.warp_issue;
  p.sum = d.sum;
  p.cyc = d.cyc;
  p.ns = d.ns;
  p.hang = d.hang;
  const uint32_t smem = std::max<uint32_t>(kMinSmem, kBarBytes + c.S * c.G);
  auto launch = [&]() {
    if (c.path == CPA)
      k_cpa<<<ctas, kThreads, smem>>>(p);
    else if (c.path == BULK)
      k_bulk<<<ctas, kThreads, smem>>>(p);
    else if (c.path == MC)
      k_mc<<<ctas, kThreads, smem>>>(p);
    else if (c.path == PC)
      k_pc<<<ctas, 160, smem>>>(p);
    else
      k_pcmc<<<ctas, 160, smem>>>(p);
  };
  CK(cudaMemset(d.hang, 0, 4));
  launch();  // warm-up (L2: brings the 8 MB in)
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaMemset(d.sum, 0, 8));
  cudaEvent_t e0, e1;
  CK(cudaEventCreate(&e0));
  CK(cudaEventCreate(&e1));
  CK(cudaEventRecord(e0));
  launch();
  CK(cudaEventRecord(e1));
  CK(cudaGetLastError());
  CK(cudaEventSynchronize(e1));
  float ms = 0;
  CK(cudaEventElapsedTime(&ms, e0, e1));
  CK(cudaEventDestroy(e0));
  CK(cudaEventDestroy(e1));
  unsigned long long got = 0, want = 0;
  unsigned int hang = 0;
  CK(cudaMemcpy(&got, d.sum, 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&hang, d.hang, 4, cudaMemcpyDeviceToHost));
  std::vector<unsigned long long> cyc(ctas), ns(ctas);
  CK(cudaMemcpy(cyc.data(), d.cyc, ctas * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(ns.data(), d.ns, ctas * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemset(d.ref, 0, 8));
  k_ref<<<units, 256>>>(p.src, p.src_bytes, 0, uint64_t(units) * c.G, c.G, c.G, p.iters, d.ref);
  CK(cudaGetLastError());
  CK(cudaMemcpy(&want, d.ref, 8, cudaMemcpyDeviceToHost));
  if (cl) want *= 2;  // both CTAs of a cluster receive and sum every stage
  double gbs_sm = 0, mhz = 0, ns_max = 0;
  for (int b = 0; b < ctas; ++b) {
    gbs_sm += double(per_cta) / double(ns[b]);
    mhz += double(cyc[b]) / double(ns[b]) * 1e3;
    ns_max = std::max(ns_max, double(ns[b]));
  }
  gbs_sm /= ctas;
  mhz /= ctas;
  const double bytes = double(per_cta) * ctas;
  const char* path = c.path == CPA    ? "cpa"
                     : c.path == BULK ? "bulk"
                     : c.path == MC   ? "mc"
                     : c.path == PC   ? "pc"
                                      : "pcmc";
  const char* iss = c.path == CPA ? "128thr" : c.warp_issue ? "warp" : "thr";
  printf(
      "%-4s %-6s %-4s %-4s C=%6u copies/stage=%3u G=%6u S=%u inflight=%6u | bytes=%11.0f "
      "ms=%8.3f GBps/SM=%7.2f agg_GBps=%8.1f max_block_ms=%7.3f sm_MHz=%5.0f | %s%s\n",
      path, iss, all_sms ? "all" : "1sm", dram ? "DRAM" : "L2", p.C, c.G / p.C, c.G, c.S,
      c.S * c.G, bytes, ms, gbs_sm, bytes / (ms * 1e6), ns_max / 1e6, mhz,
      got == want ? "ok" : "BAD", hang ? " HANG" : "");
  fflush(stdout);
}

static void run_lat(Dev& d) {
  const uint32_t reps = 64;
  unsigned long long* cyc_d;
  CK(cudaMalloc(&cyc_d, reps * 8));
  const char* names[3] = {"bulk1thr", "cpa128thr", "mbar_only"};
  for (int dram = 0; dram < 2; ++dram)
    for (int mode = 0; mode < 3; ++mode)
      for (uint32_t C : {256u, 1024u, 4096u, 16384u, 65536u}) {
        if (mode == 2 && C != 256u) continue;
        const uint8_t* src = dram ? d.dram : d.l2;
        const uint64_t sb = dram ? kDramBytes : kL2Bytes;
        // L2: the same 64 KB region re-read (warm); DRAM: fresh 2 MB steps in the middle of the
        // 1 GB buffer, away from what earlier kernels touched last.
        const uint64_t base = dram ? (512ull << 20) + uint64_t(mode) * (160ull << 20) : 0;
        const uint64_t stride = dram ? (2ull << 20) + 4096 * C / 256 : 0;
        CK(cudaMemset(d.hang, 0, 4));
        if (!dram) {  // warm the L2 copy
          k_lat<<<1, kThreads, kMinSmem>>>(src, sb, base, stride, C, 4, mode, cyc_d, d.sum,
                                           d.hang);
          CK(cudaDeviceSynchronize());
        }
        CK(cudaMemset(d.sum, 0, 8));
        k_lat<<<1, kThreads, kMinSmem>>>(src, sb, base, stride, C, reps, mode, cyc_d, d.sum,
                                         d.hang);
        CK(cudaGetLastError());
        CK(cudaDeviceSynchronize());
        std::vector<unsigned long long> cyc(reps);
        CK(cudaMemcpy(cyc.data(), cyc_d, reps * 8, cudaMemcpyDeviceToHost));
        unsigned long long got = 0, want = 0;
        unsigned int hang = 0;
        CK(cudaMemcpy(&got, d.sum, 8, cudaMemcpyDeviceToHost));
        CK(cudaMemcpy(&hang, d.hang, 4, cudaMemcpyDeviceToHost));
        CK(cudaMemset(d.ref, 0, 8));
        if (mode != 2) {
          k_ref<<<1, 256>>>(src, sb, base, stride, 0, C, reps, d.ref);
          CK(cudaMemcpy(&want, d.ref, 8, cudaMemcpyDeviceToHost));
        }
        std::vector<unsigned long long> srt(cyc.begin() + 1, cyc.end());  // drop the first
        std::sort(srt.begin(), srt.end());
        const double med = double(srt[srt.size() / 2]);
        printf(
            "lat  %-9s %-4s C=%6u | median_cyc=%7.0f min_cyc=%7llu max_cyc=%7llu median_ns=%7.1f "
            "(at %.3f GHz) bytes/cyc=%6.2f | %s%s\n",
            names[mode], dram ? "DRAM" : "L2", C, med, srt.front(), srt.back(),
            med / d.clock_ghz, d.clock_ghz, mode == 2 ? 0.0 : C / med, got == want ? "ok" : "BAD",
            hang ? " HANG" : "");
        fflush(stdout);
      }
  CK(cudaFree(cyc_d));
}


// N copies of C bytes on one mbarrier, L2-resident source; one CTA (cluster) or all SMs.
static void run_burst(Dev& d, bool mc, bool all_sms, uint32_t C, uint32_t N, int warp_issue) {
  const uint32_t reps = 16;
  const int ctas = all_sms ? (mc ? d.sms / 2 * 2 : d.sms) : (mc ? 2 : 1);
  const uint32_t units = mc ? ctas / 2 : ctas;
  unsigned long long *cyc_d, *iss_d;
  CK(cudaMalloc(&cyc_d, ctas * reps * 8));
  CK(cudaMalloc(&iss_d, ctas * reps * 8));
  const uint32_t smem = std::max<uint32_t>(kMinSmem, kBarBytes + N * C);
  auto launch = [&]() {
    if (mc)
      k_burstmc<<<ctas, kThreads, smem>>>(d.l2, kL2Bytes / 2 - 1, C, N, reps, warp_issue, cyc_d,
                                           iss_d, d.sum, d.hang);
    else
      k_burst<<<ctas, kThreads, smem>>>(d.l2, kL2Bytes / 2 - 1, C, N, reps, warp_issue, cyc_d, iss_d,
                                         d.sum, d.hang);
  };
  CK(cudaMemset(d.hang, 0, 4));
  launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  CK(cudaMemset(d.sum, 0, 8));
  launch();
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<unsigned long long> cyc(ctas * reps), iss(ctas * reps);
  CK(cudaMemcpy(cyc.data(), cyc_d, cyc.size() * 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(iss.data(), iss_d, iss.size() * 8, cudaMemcpyDeviceToHost));
  unsigned long long got = 0, want = 0;
  unsigned int hang = 0;
  CK(cudaMemcpy(&got, d.sum, 8, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(&hang, d.hang, 4, cudaMemcpyDeviceToHost));
  CK(cudaMemset(d.ref, 0, 8));
  k_ref<<<units, 256>>>(d.l2, kL2Bytes / 2, 0, uint64_t(N) * C, 3ull * 65536, N * C, reps, d.ref);
  CK(cudaMemcpy(&want, d.ref, 8, cudaMemcpyDeviceToHost));
  if (mc) want *= 2;
  std::vector<unsigned long long> a, b;  // drop rep 0 of every block
  for (int k = 0; k < ctas; ++k)
    for (uint32_t r = 1; r < reps; ++r) {
      a.push_back(cyc[k * reps + r]);
      b.push_back(iss[k * reps + r]);
    }
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  const double med = double(a[a.size() / 2]), imed = double(b[b.size() / 2]);
  const double issued = mc ? N / 2.0 : N;  // copies issued by this CTA
  printf(
      "burst %-4s %-4s %-3s C=%6u N=%3u bytes/CTA=%6u | median_cyc=%7.0f issue_cyc=%7.0f "
      "cyc/copy_issued=%6.1f issue_cyc/copy=%6.1f recv_B/cyc=%6.2f GBps/SM=%6.2f | %s%s\n",
      mc ? "mc" : "bulk", warp_issue ? "warp" : "thr", all_sms ? "all" : "1sm", C, N, N * C, med,
      imed, med / issued, imed / issued, N * C / med, N * C / med * d.clock_ghz,
      got == want ? "ok" : "BAD", hang ? " HANG" : "");
  fflush(stdout);
  CK(cudaFree(cyc_d));
  CK(cudaFree(iss_d));
}

int main(int argc, char** argv) {
  const std::string fam = argc > 1 ? argv[1] : "cpa";
  Dev d;
  init_dev(d);
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("# %s: %s, %d SMs, clock attr %.3f GHz, L2 %d MB\n", fam.c_str(), prop.name, d.sms,
         d.clock_ghz, prop.l2CacheSize >> 20);
  fflush(stdout);
  if (fam == "lat") {
    run_lat(d);
    return 0;
  }
  if (fam == "burst") {
    for (int mc = 0; mc < 2; ++mc)
      for (int all = 0; all < 2; ++all)
        for (uint32_t C : {128u, 256u, 1024u, 4096u, 16384u, 65536u})
          for (uint32_t N : {2u, 8u, 32u, 128u})
            for (int w : {0, 1}) {
              if (uint64_t(N) * C > 192 * 1024) continue;
              if (N == 2 && w == 1) continue;  // same as thr
              run_burst(d, mc != 0, all != 0, C, N, w);
            }
    return 0;
  }
  std::vector<Cfg> cfgs;
  const uint32_t KB = 1024;
  if (fam == "cpa") {
    for (uint32_t G : {8 * KB, 16 * KB, 32 * KB, 64 * KB})
      for (uint32_t S : {2u, 3u, 4u})
        if (S * G <= 192 * KB) cfgs.push_back({CPA, 16, G, S, 1});
  } else if (fam == "bulk") {
    // one copy per stage: 1/2/4/8 copies in flight
    for (uint32_t C : {256u, 1 * KB, 4 * KB, 16 * KB, 64 * KB})
      for (uint32_t S : {1u, 2u, 4u, 8u}) {
        uint32_t s = S;
        if (s * C > 192 * KB) s = 192 * KB / C;
        if (s != S && S != 8u) continue;
        cfgs.push_back({BULK, C, C, s, 0});
      }
    // stages of many copies: in flight 32-192 KB, one thread vs the warp's lanes
    for (uint32_t C : {256u, 1 * KB, 4 * KB})
      for (uint32_t G : {16 * KB, 64 * KB})
        for (uint32_t S : {2u, 3u})
          for (int w : {0, 1}) cfgs.push_back({BULK, C, G, S, w});
    // big copies, deep: 16 KB x 4 per stage
    for (uint32_t S : {2u, 3u}) cfgs.push_back({BULK, 16 * KB, 64 * KB, S, 1});
  } else if (fam == "mc") {
    // a stage = 2 copies, one per CTA (multicast to both): 1/2/4 stages
    for (uint32_t C : {1 * KB, 4 * KB, 16 * KB, 32 * KB})
      for (uint32_t S : {1u, 2u, 3u, 4u})
        if (S * 2 * C <= 192 * KB) cfgs.push_back({MC, C, 2 * C, S, 0});
    // the c2 pattern: 256 B rows, 32 KB stages, each CTA issues 64 rows, by lane 0 / by lanes
    for (uint32_t S : {2u, 3u})
      for (int w : {0, 1}) cfgs.push_back({MC, 256, 32 * KB, S, w});
    // whole tiles: 16 KB copies, 64 KB stages
    for (uint32_t S : {2u, 3u}) cfgs.push_back({MC, 16 * KB, 64 * KB, S, 1});
  } else {
    if (fam == "pc" || fam == "pcmc") {
      const Path pth = fam == "pc" ? PC : PCMC;
      for (uint32_t G : {8 * KB, 16 * KB, 32 * KB, 64 * KB})
        for (uint32_t S : {2u, 3u, 4u}) {
          if (S * G > 192 * KB) continue;
          cfgs.push_back({pth, G / (pth == PCMC ? 2 : 1), G, S, 0});  // whole stage: 1 copy / CTA
          if (G >= 16 * KB) cfgs.push_back({pth, 4 * KB, G, S, 1});
          if (G == 32 * KB) cfgs.push_back({pth, 256, G, S, 1});  // c2's rows
        }
    }
  }
  if (cfgs.empty()) {
    fprintf(stderr, "unknown family %s\n", fam.c_str());
    return 1;
  }
  for (int dram = 0; dram < 2; ++dram)
    for (int all = 0; all < 2; ++all)
      for (const Cfg& c : cfgs) run_point(d, c, all != 0, dram != 0);
  return 0;
}
