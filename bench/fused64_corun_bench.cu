// fused64_corun_bench.cu: would a one-pass forward at chunk 64 keep its chain step fast with the
// factor builds beside it on the same SM? (session 63). Runs bench/chain_slim64_bench.cu's step
// (one warpgroup, 64 value rows, one block per SM) and bench/prep64_tile_bench.cu's factor build
// (two blocks of 256 threads per SM: two tiles in flight, what a producer would hold) at the same
// time on two streams, so each SM holds one chain block and two build blocks (58 K registers,
// ~183 KB of shared memory: what one CTA of such a kernel would hold), and reports
//   chain under load: the step's time per chunk-64 per 64 value rows with the builds running for
//                     all of it (the builds run 2x longer than the chain);
//   builds under load: the SM's time per tile with the chain running for all of it;
// beside each alone. A one-pass CTA pair (the two value halves of a head, as w8c) steps one chunk
// when its chain steps and each CTA builds every other chunk: the design keeps up if the builds
// under load take at most two chain steps under load per tile. Timing only (synthetic values).
//
// Build on the device: nvcc -std=c++17 -O3 -gencode arch=compute_90a,code=sm_90a -Ikernels/include -Ibench bench/fused64_corun_bench.cu -o /tmp/corun
// Run: /tmp/corun
#include <cuda_runtime.h>

#include <cstdio>
#include <vector>

#define BENCH_NO_MAIN
#include "chain_slim64_bench.cu"
#include "prep64_tile_bench.cu"

// Both kernels' times (ms) when launched together: the build kernel first on sa, the chain on sb.
struct Corun {
  float chain_ms, prep_ms;
};
static Corun corun(int sms, float* out, T* o, int nch, const FwdParams& p, int nrep, int chain_smem, int prep_smem,
                   cudaStream_t sa, cudaStream_t sb) {
  cudaEvent_t a0, a1, b0, b1;
  CK(cudaEventCreate(&a0));
  CK(cudaEventCreate(&a1));
  CK(cudaEventCreate(&b0));
  CK(cudaEventCreate(&b1));
  CK(cudaDeviceSynchronize());
  CK(cudaEventRecord(a0, sa));
  prep64_bench<<<2 * sms, PREP3_THREADS, prep_smem, sa>>>(p, nrep);
  CK(cudaEventRecord(a1, sa));
  CK(cudaEventRecord(b0, sb));
  slim64_bench<0, 2><<<sms, 128, chain_smem, sb>>>(out, o, nch);
  CK(cudaEventRecord(b1, sb));
  CK(cudaDeviceSynchronize());
  Corun r{};
  CK(cudaEventElapsedTime(&r.prep_ms, a0, a1));
  CK(cudaEventElapsedTime(&r.chain_ms, b0, b1));
  for (cudaEvent_t e : {a0, a1, b0, b1}) CK(cudaEventDestroy(e));
  return r;
}

int main() {
  const BenchGpu gpu = bench_gpu();
  const int sms = gpu.sms, clock_khz = gpu.clock_khz;
  const double cyc = clock_khz * 1e-6;  // cycles per ns
  const int chain_smem = static_cast<int>((S64_BYTES + 1023) / 1024 * 1024 + 1024);
  const int prep_smem = static_cast<int>(SlimPrepSmem<128>::bytes_l);
  CK(cudaFuncSetAttribute(slim64_bench<0, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize, chain_smem));
  CK(cudaFuncSetAttribute(prep64_bench, cudaFuncAttributeMaxDynamicSharedMemorySize, prep_smem));
  float* out;
  CK(cudaMalloc(&out, size_t(sms) * 2 * 128 * sizeof(float)));
  T* o;
  CK(cudaMalloc(&o, size_t(sms) * 2 * 16 * CHUNK * 128 * sizeof(T)));
  const FwdParams p = prep64_params(2 * sms);
  cudaStream_t sa, sb;
  CK(cudaStreamCreateWithFlags(&sa, cudaStreamNonBlocking));
  CK(cudaStreamCreateWithFlags(&sb, cudaStreamNonBlocking));
  // Alone: the chain (nch chunks) and the builds (nrep tiles per block, two blocks per SM).
  const int nch = 256;
  const std::vector<float> chain_alone =
      launch_times_ms(sb, 7, [&] { slim64_bench<0, 2><<<sms, 128, chain_smem, sb>>>(out, o, nch); });
  const double chain_ns = chain_alone[chain_alone.size() / 2] * 1e6 / nch;
  const int nrep0 = 64;
  const std::vector<float> prep_alone =
      launch_times_ms(sa, 7, [&] { prep64_bench<<<2 * sms, PREP3_THREADS, prep_smem, sa>>>(p, nrep0); });
  const double prep_ns = prep_alone[prep_alone.size() / 2] * 1e6 / (2.0 * nrep0);  // per tile per SM
  printf("alone: chain %7.1f ns (%6.0f cycles) per chunk-64 per 64 value rows; builds %7.1f ns (%6.0f cycles) per tile per SM"
         " at 2 blocks/SM\n",
         chain_ns, chain_ns * cyc, prep_ns, prep_ns * cyc);
  for (int rep = 0; rep < 3; ++rep) {
    // (a) the chain under load: the builds sized to run ~2x the chain's time alone.
    const int nrep_a = static_cast<int>(2.0 * nch * chain_ns / (2.0 * prep_ns)) + 1;
    const Corun a = corun(sms, out, o, nch, p, nrep_a, chain_smem, prep_smem, sa, sb);
    const double chain_load = a.chain_ms * 1e6 / nch;
    // (b) the builds under load: the chain sized to run ~2x the builds' time alone.
    const int nrep_b = 32;
    const int nch_b = static_cast<int>(2.0 * 2.0 * nrep_b * prep_ns / chain_ns) + 1;
    const Corun b = corun(sms, out, o, nch_b, p, nrep_b, chain_smem, prep_smem, sa, sb);
    const double prep_load = b.prep_ms * 1e6 / (2.0 * nrep_b);
    printf("round %d: chain under load %7.1f ns (%6.0f cycles, x%.2f alone; builds ran %.3f ms, chain %.3f ms); builds under"
           " load %7.1f ns (%6.0f cycles) per tile per SM (x%.2f alone; chain ran %.3f ms, builds %.3f ms); tiles per"
           " chain step under load %.2f\n",
           rep, chain_load, chain_load * cyc, chain_load / chain_ns, a.prep_ms, a.chain_ms, prep_load, prep_load * cyc,
           prep_load / prep_ns, b.chain_ms, b.prep_ms, chain_load / prep_load);
  }
  return 0;
}
