// The one-pass chunk-16 GDN forward (kernels/include/gdn_fwd_fused16.cuh, sessions 48-49) on the GPU:
// checked against an fp64 token-by-token recurrence at small ragged shapes, then timed at the
// issue's benchmark shapes with the benchmark's inputs (tests/gpu_gdn_bench.rs: bf16, K = V = 128,
// fp32 g = log U(0.5, 1), β = U(0, 1), fp32 initial and final state, no l2norm in the graph; q, k
// rows of unit norm).
//
// Build (CPU machine, nvcc from ../shared/scripts/install-nvcc.sh), from the repository root:
//   nvcc -std=c++17 -O3 -arch=sm_90a -Ikernels/include -Ibench bench/gdn_fused16_bench.cu -o bench/gdn_fused16_bench.bin
// Run on the device: bench/gdn_fused16_bench.bin [iterations]; prints `CHECK ...` lines (rel rms of O
// and the final state against fp64; FAIL past bf16's 2e-2) and `FUSED16 <shape> <ms> ...` lines
// (median of the iterations, CUDA events around each launch), and the entries' registers / spills.
#include <cuda.h>
#include <cuda_runtime.h>
#include <cudaTypedefs.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "cuda_launch_timing.h"
#include "gdn_fwd_fused16.cuh"

using gdn::gdn_bf16;

// The harness's entries: the product's entry macros (gdn_fwd_fused16.cuh), bf16; a TQ form's entry
// takes gdn::Fused16TmaParams, every other gdn::Fused16Params (launch() passes the TQ block to both,
// as the product does: each entry reads its declared prefix).
#define FUSED16_ENTRY(name, FORM, BLOCKS, MODE) GDN_FUSED16_ENTRY(name, gdn_bf16, FORM, BLOCKS, MODE)
#define FUSED16_TQ_ENTRY(name, FORM, BLOCKS, MODE) GDN_FUSED16_TQ_ENTRY(name, gdn_bf16, FORM, BLOCKS, MODE)
namespace gdn {
// Bench-only forms beside the product's (Fused16B1, Fused16B2, Fused16W8, Fused16W4C, Fused16W8C,
// Fused16B2C in kernels/include/gdn_fwd_fused16.cuh).
using Fused16W6C = Fused16Form<6, 12, 1, 2, true>;      // six producer warps, clusters
using Fused16W4C2 = Fused16Form<4, 16, 2, 2>;           // w4c copying two pairs ahead
using Fused16W4CS16 = Fused16Form<4, 16, 1, 2, true>;   // w4c on 16 stages
// w4c and w8 without the early test of the next chunk's full barrier (Fused16Form's ET).
using Fused16W4CLate = Fused16Form<4, 14, 1, 2, false>;
using Fused16W8Late = Fused16Form<8, 14, 1, 1, false>;
// RF (the chains' release forwarded to the peer by the refilling producer warp, session 58) on w8c;
// b2c without RF, and without the early test.
using Fused16W8CRf = Fused16Form<8, 16, 1, 2, true, true>;
using Fused16B2CNoRf = Fused16Form<4, 8, 1, 2, true>;
using Fused16B2CLate = Fused16Form<4, 8, 1, 2, false, true>;
// The product's w8c and b2c before the staggered prologue (SP, session 59).
using Fused16W8CNoSp = Fused16Form<8, 16, 1, 2, true>;
using Fused16B2CNoSp = Fused16Form<4, 8, 1, 2, true, true>;
// Session 59's WG chain (the chain's P and Q by wgmma over swizzled q, k rows; Fused16Form WG),
// ported onto the staggered prologue (session 61): the product's w8c, b2c, w4c and w8's chain alone.
using Fused16W8CWg = Fused16Form<8, 16, 1, 2, true, false, true, true>;
using Fused16B2CWg = Fused16Form<4, 8, 1, 2, true, true, true, true>;
using Fused16W4CWg = Fused16Form<4, 14, 1, 2, true, false, false, true>;
using Fused16W8Wg = Fused16Form<8, 14, 1, 1, true, false, false, true>;
// Session 61: the update by wgmma too (Fused16Form UW): every q̂ / k̂ / K̂ read of the chain once per
// warpgroup.
using Fused16W8CWgu = Fused16Form<8, 16, 1, 2, true, false, true, true, true>;
using Fused16B2CWgu = Fused16Form<4, 8, 1, 2, true, true, true, true, true>;
using Fused16W8Wgu = Fused16Form<8, 14, 1, 1, true, false, false, true, true>;
// The update alone by wgmma (UW without WG: P, Q by mma.sync from the swizzled rows; b2c's
// registers do not hold WG's eight A fragments).
using Fused16B2CU = Fused16Form<4, 8, 1, 2, true, true, true, false, true>;
using Fused16W8CU = Fused16Form<8, 16, 1, 2, true, false, true, false, true>;
// Session 63: b2c's WG / UW forms with the registers moved from the producer's warpgroup to the
// chain's (CR / PR, session 59's setmaxnreg): the chain no longer capped at 128. WG + UW at 160 /
// 96 is the product's b2c since (Fused16B2C; the mma.sync form before it: b2c-mma).
using Fused16B2CWguR176 = Fused16Form<4, 8, 1, 2, true, true, true, true, true, 176, 80>;
using Fused16B2CWgR160 = Fused16Form<4, 8, 1, 2, true, true, true, true, false, 160, 96>;
using Fused16B2CUR160 = Fused16Form<4, 8, 1, 2, true, true, true, false, true, 160, 96>;
// Session 71: the product's b2c before session 71 (b2cl with the remote forward, q, k by cp.async),
// and b2cl without TQ (no RF, cp.async).
using Fused16B2CLRf = Fused16Form<4, 8, 1, 2, true, true, true, true, true, 160, 96, true>;
using Fused16B2CLCp = Fused16Form<4, 8, 1, 2, true, false, true, true, true, 160, 96, true>;
}  // namespace gdn

FUSED16_ENTRY(fused16_bf16_b1, Fused16B1, 1, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_b2, Fused16B2, 2, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w8, Fused16W8, 1, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w8c, Fused16W8C, 1, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w8cl, Fused16W8CL, 1, gdn::F16_FULL)
FUSED16_TQ_ENTRY(fused16_bf16_b2cl, Fused16B2CL, 2, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w4c, Fused16W4C, 1, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_b2c, Fused16B2C, 2, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w6c, Fused16W6C, 1, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w4c2, Fused16W4C2, 1, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w4c_s16, Fused16W4CS16, 1, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w4c_late, Fused16W4CLate, 1, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w8_late, Fused16W8Late, 1, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w8c_rf, Fused16W8CRf, 1, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_b2c_norf, Fused16B2CNoRf, 2, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_b2c_late, Fused16B2CLate, 2, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w8c_nosp, Fused16W8CNoSp, 1, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_b2c_nosp, Fused16B2CNoSp, 2, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w8c_wg, Fused16W8CWg, 1, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_b2c_wg, Fused16B2CWg, 2, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w4c_wg, Fused16W4CWg, 1, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w8_wg_chainonly, Fused16W8Wg, 1, gdn::F16_CHAIN_ONLY)
FUSED16_ENTRY(fused16_bf16_w8c_wgu, Fused16W8CWgu, 1, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_b2c_wgu, Fused16B2CWgu, 2, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w8_wgu_chainonly, Fused16W8Wgu, 1, gdn::F16_CHAIN_ONLY)
FUSED16_ENTRY(fused16_bf16_b2c_u, Fused16B2CU, 2, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_w8c_u, Fused16W8CU, 1, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_b2cl_rf, Fused16B2CLRf, 2, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_b2cl_cp, Fused16B2CLCp, 2, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_b2c_mma, Fused16B2CMma, 2, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_b2c_wgu_r176, Fused16B2CWguR176, 2, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_b2c_wg_r160, Fused16B2CWgR160, 2, gdn::F16_FULL)
FUSED16_ENTRY(fused16_bf16_b2c_u_r160, Fused16B2CUR160, 2, gdn::F16_FULL)
// Timing diagnostics (Fused16Mode).
FUSED16_ENTRY(fused16_bf16_b1_chain, Fused16B1, 1, gdn::F16_CHAIN_COPIES)
FUSED16_ENTRY(fused16_bf16_b1_prod, Fused16B1, 1, gdn::F16_PRODUCER)
FUSED16_ENTRY(fused16_bf16_b1_chainonly, Fused16B1, 1, gdn::F16_CHAIN_ONLY)
FUSED16_ENTRY(fused16_bf16_w8_prod, Fused16W8, 1, gdn::F16_PRODUCER)
FUSED16_ENTRY(fused16_bf16_w8_chainonly, Fused16W8, 1, gdn::F16_CHAIN_ONLY)
FUSED16_ENTRY(fused16_bf16_b2_chainonly, Fused16B2, 2, gdn::F16_CHAIN_ONLY)
FUSED16_ENTRY(fused16_bf16_b2_prod, Fused16B2, 2, gdn::F16_PRODUCER)
FUSED16_ENTRY(fused16_bf16_w8c_prod, Fused16W8C, 1, gdn::F16_PRODUCER)
FUSED16_ENTRY(fused16_bf16_w4c_prod, Fused16W4C, 1, gdn::F16_PRODUCER)
FUSED16_ENTRY(fused16_bf16_b2c_prod, Fused16B2C, 2, gdn::F16_PRODUCER)

static unsigned long long rng = 12345;
static double uni(double lo, double hi) {
  rng = rng * 6364136223846793005ULL + 1442695040888963407ULL;
  return lo + (hi - lo) * ((rng >> 11) * (1.0 / 9007199254740992.0));
}
static unsigned short to_bf16(float x) {
  unsigned u;
  memcpy(&u, &x, 4);
  return static_cast<unsigned short>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
static float from_bf16(unsigned short b) {
  unsigned u = static_cast<unsigned>(b) << 16;
  float f;
  memcpy(&f, &u, 4);
  return f;
}

constexpr int K = 128, V = 128;

struct Case {
  std::vector<int> lens, cu{0};
  int H = 0, N = 0, T = 0;
  std::vector<unsigned short> q, k, v;
  std::vector<float> g, beta, h0;
};

static Case make_case(std::vector<int> lens, int H, bool unit_rows) {
  Case c;
  c.lens = lens;
  c.H = H;
  c.N = static_cast<int>(lens.size());
  for (int l : lens) c.cu.push_back(c.cu.back() + l);
  c.T = c.cu.back();
  const size_t rows = size_t(c.T) * H;
  c.q.resize(rows * K);
  c.k.resize(rows * K);
  c.v.resize(rows * V);
  for (int which = 0; which < 2; ++which) {
    auto& x = which ? c.k : c.q;
    std::vector<double> r(K);
    for (size_t i = 0; i < rows; ++i) {
      double n = 0;
      for (int d = 0; d < K; ++d) n += (r[d] = uni(-1, 1)) * r[d];
      const double s = unit_rows ? 1 / std::sqrt(n) : 1.0;
      for (int d = 0; d < K; ++d) x[i * K + d] = to_bf16(static_cast<float>(r[d] * s));
    }
  }
  for (auto& x : c.v) x = to_bf16(static_cast<float>(uni(-1, 1)));
  c.g.resize(rows);
  c.beta.resize(rows);
  for (auto& x : c.g) x = static_cast<float>(std::log(uni(0.5, 1)));
  for (auto& x : c.beta) x = static_cast<float>(uni(0, 1));
  c.h0.resize(size_t(c.N) * H * V * K);
  for (auto& x : c.h0) x = static_cast<float>(uni(-0.05, 0.05));
  return c;
}

// X = Sᵀ [V][K]; per token X ← α X; u = β (v − X k̂); X += u k̂ᵀ; o = X q̂ scale (spec §3.1).
static void reference(const Case& c, int flags, float scale, std::vector<double>& ro, std::vector<double>& rfs) {
  const int H = c.H;
  ro.assign(size_t(c.T) * H * V, 0);
  rfs.assign(c.h0.size(), 0);
  for (int b = 0; b < c.N; ++b)
    for (int h = 0; h < H; ++h) {
      std::vector<double> X(V * K), kk(K), qq(K), u(V);
      for (int x = 0; x < V * K; ++x) X[x] = c.h0[(size_t(b) * H + h) * V * K + x];
      for (int t = c.cu[b]; t < c.cu[b + 1]; ++t) {
        double kn = 0, qn = 0;
        for (int d = 0; d < K; ++d) {
          kk[d] = from_bf16(c.k[(size_t(t) * H + h) * K + d]);
          qq[d] = from_bf16(c.q[(size_t(t) * H + h) * K + d]);
          kn += kk[d] * kk[d];
          qn += qq[d] * qq[d];
        }
        for (int d = 0; d < K; ++d) {
          if (flags & gdn::FLAG_L2NORM) {
            kk[d] /= std::sqrt(kn + 1e-6);
            qq[d] /= std::sqrt(qn + 1e-6);
          }
          qq[d] *= scale;
        }
        const double a = std::exp(double(c.g[size_t(t) * H + h]));
        double be = c.beta[size_t(t) * H + h];
        if (flags & gdn::FLAG_BETA_SIGMOID) be = 1 / (1 + std::exp(-be));
        for (auto& x : X) x *= a;
        for (int vv = 0; vv < V; ++vv) {
          double s = 0;
          for (int d = 0; d < K; ++d) s += X[vv * K + d] * kk[d];
          u[vv] = be * (from_bf16(c.v[(size_t(t) * H + h) * V + vv]) - s);
        }
        for (int vv = 0; vv < V; ++vv)
          for (int d = 0; d < K; ++d) X[vv * K + d] += u[vv] * kk[d];
        for (int vv = 0; vv < V; ++vv) {
          double s = 0;
          for (int d = 0; d < K; ++d) s += X[vv * K + d] * qq[d];
          ro[(size_t(t) * H + h) * V + vv] = s;
        }
      }
      for (int x = 0; x < V * K; ++x) rfs[(size_t(b) * H + h) * V * K + x] = X[x];
    }
}

struct Dev {
  void *q, *k, *v, *g, *beta, *cu, *h0, *o, *fs;
  gdn::FwdParams p{};
  dnnp::TmaDesc qk_maps[2]{};  // the TQ forms' maps of q, k (Fused16TmaParams::qk_maps)
};

// The TQ forms' map of a [T, H, 128] bf16 tensor as {128, H, T}: box {64, 1, 16} under the 128-byte
// swizzle (src/engines/gdn/tma_maps.rs, FwdIoMapShape::fused16_qk_specs), encoded through the runtime's driver entry point.
static dnnp::TmaDesc qk_map(void* base, int H, int T) {
  static PFN_cuTensorMapEncodeTiled_v12000 encode = nullptr;
  if (!encode) {
    cudaDriverEntryPointQueryResult qr;
    CK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", reinterpret_cast<void**>(&encode), 12000, cudaEnableDefault, &qr));
  }
  static_assert(sizeof(CUtensorMap) == sizeof(dnnp::TmaDesc), "a map is 128 bytes");
  CUtensorMap m;
  const cuuint64_t dims[3] = {128, cuuint64_t(H), cuuint64_t(std::max(T, 1))};
  const cuuint64_t strides[2] = {128 * 2, cuuint64_t(H) * 128 * 2};
  const cuuint32_t box[3] = {64, 1, 16}, es[3] = {1, 1, 1};
  const CUresult r = encode(&m, CU_TENSOR_MAP_DATA_TYPE_BFLOAT16, 3, base, dims, strides, box, es, CU_TENSOR_MAP_INTERLEAVE_NONE,
                            CU_TENSOR_MAP_SWIZZLE_128B, CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS) {
    fprintf(stderr, "cuTensorMapEncodeTiled: %d\n", int(r));
    exit(1);
  }
  dnnp::TmaDesc d;
  memcpy(&d, &m, sizeof(d));
  return d;
}

static Dev upload(const Case& c, int flags, float scale) {
  Dev d{};
  auto put = [](void** dst, const void* src, size_t bytes) {
    CK(cudaMalloc(dst, std::max<size_t>(bytes, 16)));
    if (bytes) CK(cudaMemcpy(*dst, src, bytes, cudaMemcpyHostToDevice));
  };
  put(&d.q, c.q.data(), c.q.size() * 2);
  put(&d.k, c.k.data(), c.k.size() * 2);
  put(&d.v, c.v.data(), c.v.size() * 2);
  put(&d.g, c.g.data(), c.g.size() * 4);
  put(&d.beta, c.beta.data(), c.beta.size() * 4);
  put(&d.cu, c.cu.data(), c.cu.size() * 4);
  put(&d.h0, c.h0.data(), c.h0.size() * 4);
  CK(cudaMalloc(&d.o, std::max<size_t>(size_t(c.T) * c.H * V * 2, 16)));
  CK(cudaMalloc(&d.fs, c.h0.size() * 4));
  gdn::FwdParams& p = d.p;
  p.q = d.q;
  p.k = d.k;
  p.v = d.v;
  p.g = d.g;
  p.beta = d.beta;
  p.cu_seqlens = d.cu;
  p.initial_state = d.h0;
  p.o = d.o;
  p.final_state = d.fs;
  p.n_seqs = c.N;
  p.h = p.hk = p.hv = p.ho = c.H;
  p.g_dtype = p.beta_dtype = p.state_dtype = gdn::DT_F32;
  p.scale = scale;
  p.flags = flags;
  d.qk_maps[0] = qk_map(d.q, c.H, c.T);
  d.qk_maps[1] = qk_map(d.k, c.H, c.T);
  return d;
}

static void release(Dev& d) {
  for (void* x : {d.q, d.k, d.v, d.g, d.beta, d.cu, d.h0, d.o, d.fs}) cudaFree(x);
}

// An entry (its own parameter type: gdn::Fused16Params, or gdn::Fused16TmaParams for a TQ form).
typedef const void* EntryFn;
struct Entry {
  EntryFn fn;
  const char* name;
  int threads, smem, cluster;
};
template <typename F, typename P>
static Entry entry(void (*fn)(P), const char* name) {
  static_assert(std::is_same_v<P, gdn::Fused16TmaParams> == F::tma_qk, "a TQ form's entry takes the TQ block");
  return Entry{reinterpret_cast<EntryFn>(fn), name, F::threads, gdn::fused16_smem_bytes<gdn_bf16, 64, F>(), F::cluster};
}

// A cluster form's launch configuration: (e.cluster, 1, 1) clusters over `grid` (not copyable: cfg
// points at its own attribute).
struct ClusterLaunch {
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute at[1];
  ClusterLaunch(const Entry& e, dim3 grid, cudaStream_t s) {
    cfg.gridDim = grid;
    cfg.blockDim = dim3(e.threads);
    cfg.dynamicSmemBytes = e.smem;
    cfg.stream = s;
    at[0].id = cudaLaunchAttributeClusterDimension;
    at[0].val.clusterDim.x = e.cluster;
    at[0].val.clusterDim.y = 1;
    at[0].val.clusterDim.z = 1;
    cfg.attrs = at;
    cfg.numAttrs = 1;
  }
  ClusterLaunch(const ClusterLaunch&) = delete;
  ClusterLaunch& operator=(const ClusterLaunch&) = delete;
};

static void launch(const Entry& e, const Dev& d, const Case& c, cudaStream_t s) {
  static const int order = getenv("FUSED16_ORDER") ? atoi(getenv("FUSED16_ORDER")) : 0;
  gdn::Fused16TmaParams pp{{d.p, c.T, 0, order}, {d.qk_maps[0], d.qk_maps[1]}};
  void* args[] = {&pp};
  if (e.cluster == 1) {
    CK(cudaLaunchKernel(e.fn, dim3(V / 64, c.H, c.N), dim3(e.threads), args, e.smem, s));
    return;
  }
  ClusterLaunch cl(e, dim3(V / 64, c.H, c.N), s);
  CK(cudaLaunchKernelExC(&cl.cfg, e.fn, args));
}

static double rms_ratio(const std::vector<double>& a, const std::vector<double>& b) {
  double num = 0, den = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    num += (a[i] - b[i]) * (a[i] - b[i]);
    den += b[i] * b[i];
  }
  return std::sqrt(num / (den > 0 ? den : 1));
}

static int g_fails = 0;

static void check_case(const char* name, const Entry& e, std::vector<int> lens, int H, int flags, bool unit_rows) {
  const float scale = 1.f / std::sqrt(float(K));
  Case c = make_case(lens, H, unit_rows);
  std::vector<double> ro, rfs;
  reference(c, flags, scale, ro, rfs);
  Dev d = upload(c, flags, scale);
  CK(cudaMemset(d.o, 0xFF, std::max<size_t>(size_t(c.T) * H * V * 2, 16)));
  CK(cudaMemset(d.fs, 0xFF, c.h0.size() * 4));
  launch(e, d, c, 0);
  CK(cudaGetLastError());
  CK(cudaDeviceSynchronize());
  std::vector<unsigned short> ob(size_t(c.T) * H * V);
  std::vector<float> fs(c.h0.size());
  if (!ob.empty()) CK(cudaMemcpy(ob.data(), d.o, ob.size() * 2, cudaMemcpyDeviceToHost));
  CK(cudaMemcpy(fs.data(), d.fs, fs.size() * 4, cudaMemcpyDeviceToHost));
  std::vector<double> od(ob.size()), fd(fs.begin(), fs.end());
  for (size_t i = 0; i < ob.size(); ++i) od[i] = from_bf16(ob[i]);
  const double eo = rms_ratio(od, ro), es = rms_ratio(fd, rfs);
  const bool ok = eo < 2e-2 && es < 2e-2 && std::isfinite(eo) && std::isfinite(es);
  printf("CHECK %-28s flags %d: rel rms O %.3e state %.3e %s\n", name, flags, eo, es, ok ? "ok" : "FAIL");
  g_fails += !ok;
  release(d);
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const int iters = argc > 1 ? atoi(argv[1]) : 20;
  constexpr int NE = 43, NF = 31;  // the first NF compute the forward; the rest are timing diagnostics
  Entry entries[NE] = {
      entry<gdn::Fused16B1>(fused16_bf16_b1, "b1"),
      entry<gdn::Fused16B2>(fused16_bf16_b2, "b2"),
      entry<gdn::Fused16W8>(fused16_bf16_w8, "w8"),
      entry<gdn::Fused16W8C>(fused16_bf16_w8c, "w8c"),
      entry<gdn::Fused16W8CL>(fused16_bf16_w8cl, "w8cl"),
      entry<gdn::Fused16B2CL>(fused16_bf16_b2cl, "b2cl"),
      entry<gdn::Fused16W4C>(fused16_bf16_w4c, "w4c"),
      entry<gdn::Fused16B2C>(fused16_bf16_b2c, "b2c"),
      entry<gdn::Fused16W6C>(fused16_bf16_w6c, "w6c"),
      entry<gdn::Fused16W4C2>(fused16_bf16_w4c2, "w4c2"),
      entry<gdn::Fused16W4CS16>(fused16_bf16_w4c_s16, "w4c-s16"),
      entry<gdn::Fused16W4CLate>(fused16_bf16_w4c_late, "w4c-late"),
      entry<gdn::Fused16W8Late>(fused16_bf16_w8_late, "w8-late"),
      entry<gdn::Fused16W8CRf>(fused16_bf16_w8c_rf, "w8c-rf"),
      entry<gdn::Fused16B2CNoRf>(fused16_bf16_b2c_norf, "b2c-norf"),
      entry<gdn::Fused16B2CLate>(fused16_bf16_b2c_late, "b2c-late"),
      entry<gdn::Fused16W8CNoSp>(fused16_bf16_w8c_nosp, "w8c-nosp"),
      entry<gdn::Fused16B2CNoSp>(fused16_bf16_b2c_nosp, "b2c-nosp"),
      entry<gdn::Fused16W8CWg>(fused16_bf16_w8c_wg, "w8c-wg"),
      entry<gdn::Fused16B2CWg>(fused16_bf16_b2c_wg, "b2c-wg"),
      entry<gdn::Fused16W4CWg>(fused16_bf16_w4c_wg, "w4c-wg"),
      entry<gdn::Fused16W8CWgu>(fused16_bf16_w8c_wgu, "w8c-wgu"),
      entry<gdn::Fused16B2CWgu>(fused16_bf16_b2c_wgu, "b2c-wgu"),
      entry<gdn::Fused16B2CU>(fused16_bf16_b2c_u, "b2c-u"),
      entry<gdn::Fused16W8CU>(fused16_bf16_w8c_u, "w8c-u"),
      entry<gdn::Fused16B2CLRf>(fused16_bf16_b2cl_rf, "b2cl-rf"),
      entry<gdn::Fused16B2CLCp>(fused16_bf16_b2cl_cp, "b2cl-cp"),
      entry<gdn::Fused16B2CMma>(fused16_bf16_b2c_mma, "b2c-mma"),
      entry<gdn::Fused16B2CWguR176>(fused16_bf16_b2c_wgu_r176, "b2c-wgu-r176"),
      entry<gdn::Fused16B2CWgR160>(fused16_bf16_b2c_wg_r160, "b2c-wg-r160"),
      entry<gdn::Fused16B2CUR160>(fused16_bf16_b2c_u_r160, "b2c-u-r160"),
      entry<gdn::Fused16B1>(fused16_bf16_b1_chain, "b1-chain-copies"),
      entry<gdn::Fused16B1>(fused16_bf16_b1_prod, "b1-producer"),
      entry<gdn::Fused16B1>(fused16_bf16_b1_chainonly, "b1-chain-only"),
      entry<gdn::Fused16W8>(fused16_bf16_w8_prod, "w8-producer"),
      entry<gdn::Fused16W8>(fused16_bf16_w8_chainonly, "w8-chain-only"),
      entry<gdn::Fused16B2>(fused16_bf16_b2_chainonly, "b2-chain-only"),
      entry<gdn::Fused16B2>(fused16_bf16_b2_prod, "b2-producer"),
      entry<gdn::Fused16W8C>(fused16_bf16_w8c_prod, "w8c-producer"),
      entry<gdn::Fused16W4C>(fused16_bf16_w4c_prod, "w4c-producer"),
      entry<gdn::Fused16B2C>(fused16_bf16_b2c_prod, "b2c-producer"),
      entry<gdn::Fused16W8Wg>(fused16_bf16_w8_wg_chainonly, "w8-wg-chain-only"),
      entry<gdn::Fused16W8Wgu>(fused16_bf16_w8_wgu_chainonly, "w8-wgu-chain-only"),
  };

  const char* only = getenv("FUSED16_ONLY");  // a comma-separated list of entry names to time
  for (int i = 0; i < NE; ++i) {
    Entry& e = entries[i];
    CK(cudaFuncSetAttribute(e.fn, cudaFuncAttributeMaxDynamicSharedMemorySize, e.smem));
    cudaFuncAttributes fa;
    CK(cudaFuncGetAttributes(&fa, e.fn));
    int per_sm = 0, clusters = 0;
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, e.fn, e.threads, e.smem));
    if (e.cluster > 1) {
      ClusterLaunch cl(e, dim3(2, 64, 1), 0);
      CK(cudaOccupancyMaxActiveClusters(&clusters, e.fn, &cl.cfg));
    }
    printf("ENTRY %s: %d threads, %d registers, %zu B local (spills), %d B dynamic smem, %d blocks per SM, %d clusters of %d at once\n",
           e.name, e.threads, fa.numRegs, static_cast<size_t>(fa.localSizeBytes), e.smem, per_sm, clusters, e.cluster);
  }
  for (int i = 0; i < NF; ++i) {
    check_case((std::string("ragged ") + entries[i].name).c_str(), entries[i], {130, 64, 0, 5, 1}, 2, 0, true);
    check_case((std::string("ragged l2 sigmoid ") + entries[i].name).c_str(), entries[i], {300, 17, 0, 48}, 2,
               gdn::FLAG_L2NORM | gdn::FLAG_BETA_SIGMOID, false);
  }
  struct Shape {
    const char* name;
    std::vector<int> lens;
    int H;
  };
  const std::vector<Shape> benchmark_shapes = {
      {"(4,8192,16)", {8192, 8192, 8192, 8192}, 16},
      {"(1,32768,16)", {32768}, 16},
      {"(16,2048,32)", std::vector<int>(16, 2048), 32},
      {"ragged-mix-H16", {8192, 100, 4096, 1, 2048, 7000, 0, 3000, 512, 5000}, 16},
  };
  // FUSED16_SHAPES=waves (session 59): a form's fixed cost per block and its last wave's, beside
  // (16,2048,32) (1,024 blocks: 3.88 waves of two-block forms): the same blocks at twice and half
  // the length, and 1,056 blocks of the same length (4.00 waves).
  const std::vector<Shape> wave_shapes = {
      {"(16,2048,32)", std::vector<int>(16, 2048), 32},
      {"(16,4096,32)", std::vector<int>(16, 4096), 32},
      {"(16,1024,32)", std::vector<int>(16, 1024), 32},
      {"(33,2048,16)", std::vector<int>(33, 2048), 16},
      {"(16,512,32)", std::vector<int>(16, 512), 32},
  };
  // FUSED16_SHAPES=cross (session 63): where the two-blocks-per-SM form starts to beat the
  // one-block form now that b2c runs the wgmma chain (the rule switches at four waves of single
  // blocks, FUSED16_TWO_PER_SM_WAVES, set against the mma.sync b2c): 128 to 640 blocks of 64 value
  // rows, equal lengths (0.97 to 4.85 waves of single blocks on 132 SMs).
  const std::vector<Shape> cross_shapes = {
      {"(4,4096,16)", std::vector<int>(4, 4096), 16},   {"(6,4096,16)", std::vector<int>(6, 4096), 16},
      {"(8,4096,16)", std::vector<int>(8, 4096), 16},   {"(10,4096,16)", std::vector<int>(10, 4096), 16},
      {"(12,4096,16)", std::vector<int>(12, 4096), 16}, {"(16,4096,16)", std::vector<int>(16, 4096), 16},
      {"(20,4096,16)", std::vector<int>(20, 4096), 16},
  };
  const char* shape_set = getenv("FUSED16_SHAPES");
  const std::vector<Shape>& shapes = shape_set && !strcmp(shape_set, "waves")   ? wave_shapes
                                     : shape_set && !strcmp(shape_set, "cross") ? cross_shapes
                                                                                : benchmark_shapes;
  cudaStream_t s;
  CK(cudaStreamCreate(&s));
  // FUSED16_SHAPE (session 61): time only the shapes whose name contains it (one profiled launch).
  const char* shape_only = getenv("FUSED16_SHAPE");
  for (const Shape& sh : shapes) {
    if (shape_only && !strstr(sh.name, shape_only)) continue;
    Case c = make_case(sh.lens, sh.H, true);
    // FUSED16_FLAGS: the timed forward's flags (default 0: the benchmark's graph, no l2norm; 1: l2norm
    // in the kernel, as use_qk_l2norm — the unit rows stay unit, only the time differs).
    static const int tflags = getenv("FUSED16_FLAGS") ? atoi(getenv("FUSED16_FLAGS")) : 0;
    Dev d = upload(c, tflags, 1.f / std::sqrt(float(K)));
    // FUSED16_STATES (session 59, timing only): none (no initial or final state), init (the initial
    // state only), final (the final state only); unset: both.
    if (const char* st = getenv("FUSED16_STATES")) {
      if (!strcmp(st, "none") || !strcmp(st, "final")) d.p.initial_state = nullptr;
      if (!strcmp(st, "none") || !strcmp(st, "init")) d.p.final_state = nullptr;
    }
    const double bytes = double(c.T) * c.H * (4.0 * 256 + 8) + 2.0 * c.h0.size() * 4;
    for (int i = 0; i < NE; ++i) {
      if (only && !strstr((std::string(",") + only + ",").c_str(), (std::string(",") + entries[i].name + ",").c_str())) continue;
      const std::vector<float> ms = launch_times_ms(s, iters, [&] { launch(entries[i], d, c, s); });
      const double med = ms[ms.size() / 2];
      printf("FUSED16 %-15s %-16s %.4f ms (min %.4f) %.0f GB/s of the minimum traffic (%.0f MB)\n", entries[i].name, sh.name, med, ms[0],
             bytes / (med * 1e-3) / 1e9, bytes / 1e6);
    }
    release(d);
  }
  printf("%s\n", g_fails ? "fused16 bench: CHECK FAILED" : "fused16 bench: all checks ok");
  return g_fails ? 1 : 0;
}
