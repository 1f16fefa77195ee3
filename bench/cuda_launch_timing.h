// cuda_launch_timing.h: the GPU benches' CUDA error check (CK), launch timing — a kernel's
// launches timed one by one with CUDA events on one stream, after warm-ups — and the GPU line they
// print first (bench_gpu: name, SMs, clock). Host code of the .cu benches (bench/gdn_fused16_bench.cu,
// bench/gdn_chain_c_bench.cu, ...); include it instead of defining CK again.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <vector>

// Exits with status 2 and the failing call's location when a CUDA runtime call fails.
#define CK(x)                                                                                 \
  do {                                                                                        \
    cudaError_t e_ = (x);                                                                     \
    if (e_ != cudaSuccess) {                                                                  \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_));     \
      exit(2);                                                                                \
    }                                                                                         \
  } while (0)

// Runs launch() `warmups` times, then `iters` times each between two events on `stream`; returns
// the launches' times in ms, sorted (median at [size / 2], minimum at [0]). launch() enqueues on
// `stream`; a failed launch exits through CK.
template <typename Launch>
std::vector<float> launch_times_ms(cudaStream_t stream, int iters, Launch launch, int warmups = 3) {
  for (int w = 0; w < warmups; ++w) launch();
  CK(cudaStreamSynchronize(stream));
  std::vector<float> ms;
  for (int it = 0; it < iters; ++it) {
    cudaEvent_t a, b;
    CK(cudaEventCreate(&a));
    CK(cudaEventCreate(&b));
    CK(cudaEventRecord(a, stream));
    launch();
    CK(cudaEventRecord(b, stream));
    CK(cudaEventSynchronize(b));
    float t;
    CK(cudaEventElapsedTime(&t, a, b));
    ms.push_back(t);
    cudaEventDestroy(a);
    cudaEventDestroy(b);
  }
  CK(cudaGetLastError());
  std::sort(ms.begin(), ms.end());
  return ms;
}

// The GPU a bench times: its SM count and maximum SM clock (kHz, the clock the benches convert
// times to cycles at), after one line naming it (stdout line-buffered first).
struct BenchGpu {
  int sms;
  int clock_khz;
};
inline BenchGpu bench_gpu() {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  cudaDeviceProp pr;
  CK(cudaGetDeviceProperties(&pr, 0));
  int clock_khz = 0;
  CK(cudaDeviceGetAttribute(&clock_khz, cudaDevAttrClockRate, 0));
  printf("%s, %d SMs, %d MHz\n", pr.name, pr.multiProcessorCount, clock_khz / 1000);
  return BenchGpu{pr.multiProcessorCount, clock_khz};
}
