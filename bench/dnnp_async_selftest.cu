// dnnp_async_selftest.cu (session 29, helper m029, td29's M0): the GPU self-test of
// kernels/include/dnnp_async.cuh (mbarriers, cp.async.mbarrier.arrive.noinc, arrive.expect_tx +
// bulk copy, named barriers, setmaxnreg, elect.sync) and of dnnp_wgmma.cuh's SS forms
// (m64n32k16 / m64n64k16, tnspA / tnspB, 128- and 64-byte swizzles). The kernels and the checks
// are bench/dnnp_async_selftest.h's, shared with the CPU emulation bench/dnnp_async_host_emu.cpp.
// One PASS / FAIL line per check; the exit status is the failure count. The ring runs 264 blocks
// (two waves on 132 SMs) x 64 tiles, 20 launches per mode; argument "small": 4 x 16, one launch
// (for compute-sanitizer). Session 31 (helper rc31): "ring REL MODE GRID NT REPS" runs only the
// ring, release variant REL (0 elected lane after bar.sync + __syncwarp, 1 every consumer thread
// arrives, 2 __syncthreads per tile, 3 elected lane after __syncwarp; dnnp_async_selftest.h's
// RingRelease), copy mode MODE (0 cp.async, 1 bulk, 2 both), GRID blocks x NT tiles, REPS launches
// per mode: the configurations bench/gdn_device_rc31.sh runs under racecheck.
// Build: nvcc -gencode=arch=compute_90a,code=sm_90a -std=c++17 -O2 -I kernels/include \
//          -o dnnp_async_selftest bench/dnnp_async_selftest.cu
//        (add -lineinfo for racecheck reports with source lines, as bench/gdn_device_rc31.sh's binary)
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>
#include "dnnp_wgmma.cuh"
#include "dnnp_async.cuh"
#include "dnnp_async_selftest.h"

template <int N, int TA, int TB, bool BF16>
__global__ void __launch_bounds__(128) wg_case_kernel(m029::WgCase c, const uint16_t* A, const uint16_t* B, float* D) {
  extern __shared__ __align__(1024) unsigned char sm[];
  // The swizzle atoms need 1024-byte alignment in the shared window: pad up to it (no trap, so a
  // misaligned base cannot poison the later cases' context).
  const uint32_t pad = (1024u - (dnnp::smem_u32(sm) & 1023u)) & 1023u;
  m029::wg_case_body<N, TA, TB, BF16>(sm + pad, c, A, B, D);
}
__global__ void __launch_bounds__(384, 1) ring_kernel(const unsigned char* src, unsigned char* dst, int nt, int mode, unsigned* flag,
                                                      int rel) {
  extern __shared__ __align__(1024) unsigned char sm[];
  m029::ring_body(sm, src, dst, nt, mode, flag, rel);
}

static int g_reps = 20;  // ring launches per mode (argument "small": 1, for compute-sanitizer)
struct Gpu {
  template <int N, int TA, int TB, bool BF16>
  bool wg(const m029::WgCase& c, const uint16_t* A, const uint16_t* B, float* D) {
    uint16_t *da, *db;
    float* dd;
    cudaMalloc(&da, 64 * c.k * 2);
    cudaMalloc(&db, N * c.k * 2);
    cudaMalloc(&dd, 64 * N * 4);
    cudaMemcpy(da, A, 64 * c.k * 2, cudaMemcpyHostToDevice);
    cudaMemcpy(db, B, N * c.k * 2, cudaMemcpyHostToDevice);
    cudaMemset(dd, 0xFF, 64 * N * 4);
    wg_case_kernel<N, TA, TB, BF16><<<1, 128, 32768 + 1024>>>(c, da, db, dd);
    const cudaError_t e = cudaDeviceSynchronize();
    cudaMemcpy(D, dd, 64 * N * 4, cudaMemcpyDeviceToHost);
    cudaFree(da);
    cudaFree(db);
    cudaFree(dd);
    if (e != cudaSuccess) printf("cuda error: %s\n", cudaGetErrorString(e));
    return e == cudaSuccess;
  }
  bool ring(const unsigned char* src, unsigned char* dst, int nt, int mode, int grid, unsigned* flags, int rel) {
    const size_t bytes = static_cast<size_t>(grid) * nt * m029::TILE;
    unsigned char *ds, *dd;
    unsigned* df;
    cudaMalloc(&ds, bytes);
    cudaMalloc(&dd, bytes);
    cudaMalloc(&df, 128 * grid * 4);
    cudaMemcpy(ds, src, bytes, cudaMemcpyHostToDevice);
    cudaMemset(dd, 0, bytes);
    cudaMemset(df, 0, 128 * grid * 4);
    cudaFuncSetAttribute(ring_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, m029::RING_SMEM);
    cudaError_t e = cudaSuccess;
    for (int rep = 0; rep < g_reps && e == cudaSuccess; ++rep) {  // repeated: races show up as differences
      ring_kernel<<<grid, m029::RING_THREADS, m029::RING_SMEM>>>(ds, dd, nt, mode, df, rel);
      e = cudaDeviceSynchronize();
    }
    cudaMemcpy(dst, dd, bytes, cudaMemcpyDeviceToHost);
    cudaMemcpy(flags, df, 128 * grid * 4, cudaMemcpyDeviceToHost);
    cudaFree(ds);
    cudaFree(dd);
    cudaFree(df);
    if (e != cudaSuccess) printf("cuda error: %s\n", cudaGetErrorString(e));
    return e == cudaSuccess;
  }
};

int main(int argc, char** argv) {
  if (argc > 1 && std::string(argv[1]) == "ring") {
    // ring REL MODE GRID NT REPS (defaults: 0 2 4 16 1)
    auto arg = [&](int i, int d) { return argc > i ? std::atoi(argv[i]) : d; };
    const int rel = arg(2, 0), mode = arg(3, 2), grid = arg(4, 4), nt = arg(5, 16);
    g_reps = arg(6, 1);
    if (rel < 0 || rel >= m029::REL_COUNT || mode < 0 || mode > 2 || grid < 1 || nt < 1 || g_reps < 1) {
      printf("usage: %s ring REL(0..%d) MODE(0 cp.async, 1 bulk, 2 both) GRID NT REPS\n", argv[0], m029::REL_COUNT - 1);
      return 2;
    }
    Gpu g;
    const int fails = m029::run_ring(g, grid, nt, rel, mode == 2 ? 0 : mode, mode == 2 ? 1 : mode);
    printf("%s ring release %d (%s), %d launch(es) per mode: %d failure(s)\n", fails ? "FAIL" : "PASS", rel,
           m029::ring_release_name(rel), g_reps, fails);
    return fails;
  }
  const bool small = argc > 1 && std::string(argv[1]) == "small";
  if (small) g_reps = 1;
  Gpu g;
  return m029::run_all(g, small ? 4 : 264, small ? 16 : 64);
}
