// Standalone device test + benchmark of the GDN chunked forward (gdn_fwd.cuh).
//
// Correctness: for each configuration it draws fresh random inputs, rounds them to the
// device dtypes, runs an fp64 per-token recurrence on the CPU over exactly those rounded
// values (spec §3.1, the same math as src/engines/gdn/reference.rs) and compares O and the
// final state by rms ratio against the §9.2 tolerances. O and the workspace are NaN-poisoned
// before each run (every output element must be written; no read-before-write of scratch),
// a state pool checks untouched spare rows, and two runs must agree bitwise.
// Timing: bf16, K = V = 128, CUDA events, median of repeated launches, printed as a table.
//
// Build (repository root): nvcc -O3 -std=c++17 -gencode=arch=compute_90a,code=sm_90a
//   -Ikernels/include -o gdn_fwd_harness bench/gdn_fwd_harness.cu
// It compiles the bundled module's source (kernels/src/gdn_fwd.cu) into itself and launches its
// extern "C" entry points with the same workspace layout as the engine (src/engines/gdn/params.rs).
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "../kernels/src/gdn_fwd.cu"

using namespace gdn;

// ---------------------------------------------------------------------------------------
// Host side: workspace layout (mirrors src/engines/gdn/params.rs) and launches.
// ---------------------------------------------------------------------------------------
inline size_t align256(size_t x) { return (x + 255) & ~static_cast<size_t>(255); }

template <typename T, int K, int V>
inline size_t gdn_fwd_workspace_layout(FwdParams& p, void* ws) {
  const size_t slots = static_cast<size_t>(p.max_chunks) * p.ho;
  size_t off = 0;
  auto take = [&](size_t bytes) {
    size_t o = off;
    off = align256(off + bytes);
    return ws ? static_cast<void*>(static_cast<char*>(ws) + o) : nullptr;
  };
  p.chunk_offsets = static_cast<int*>(take(sizeof(int) * (p.n_seqs + 1)));
  p.ws_w = take(slots * CHUNK * K * sizeof(T));
  p.ws_q = take(slots * CHUNK * K * sizeof(T));
  p.ws_kr = take(slots * CHUNK * K * sizeof(T));
  p.ws_ut = take(slots * V * CHUNK * sizeof(T));
  p.ws_a = take(slots * CHUNK * CHUNK * sizeof(T));
  p.ws_gl = static_cast<float*>(take(slots * sizeof(float)));
  return off;
}

typedef void (*Entry)(FwdParams);
template <typename T, int K>
struct Entries;
template <>
struct Entries<__nv_bfloat16, 128> {
  static constexpr Entry prep = gdn_fwd_prep_bf16_k128, scan = gdn_fwd_scan_bf16_k128;
};
template <>
struct Entries<__nv_bfloat16, 64> {
  static constexpr Entry prep = gdn_fwd_prep_bf16_k64, scan = gdn_fwd_scan_bf16_k64;
};
template <>
struct Entries<__half, 128> {
  static constexpr Entry prep = gdn_fwd_prep_f16_k128, scan = gdn_fwd_scan_f16_k128;
};
template <>
struct Entries<__half, 64> {
  static constexpr Entry prep = gdn_fwd_prep_f16_k64, scan = gdn_fwd_scan_f16_k64;
};

// Extra scan schedules for the benchmark only (same per-warp math: outputs bitwise equal).
template <int NW, int STAGES>
__global__ void __launch_bounds__(NW * 32) bench_scan_bf16_k128(FwdParams p) {
  fwd_scan_body<gdn_bf16, 128, 128, NW, STAGES>(p);
}

template <typename T, int K, int V>
inline cudaError_t gdn_fwd_prepare_attributes() {
  cudaError_t e = cudaFuncSetAttribute(Entries<T, K>::prep, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                       static_cast<int>(PrepSmem<K, V>::bytes));
  if (e != cudaSuccess) return e;
  return cudaFuncSetAttribute(Entries<T, K>::scan, cudaFuncAttributeMaxDynamicSharedMemorySize,
                              static_cast<int>(ScanSmem<K, SCAN_WARPS, SCAN_STAGES>::bytes));
}

template <typename T, int K, int V>
inline cudaError_t gdn_fwd_launch(const FwdParams& p, cudaStream_t stream) {
  gdn_chunk_offsets<<<1, OFFSETS_THREADS, 0, stream>>>(p);
  if (p.max_chunks > 0)
    Entries<T, K>::prep<<<dim3(p.max_chunks, p.ho), PREP_THREADS, PrepSmem<K, V>::bytes, stream>>>(p);
  Entries<T, K>::scan<<<dim3(V / (16 * SCAN_WARPS), p.ho, p.n_seqs), SCAN_WARPS * 32,
                        ScanSmem<K, SCAN_WARPS, SCAN_STAGES>::bytes, stream>>>(p);
  return cudaGetLastError();
}

#define CK(...)                                                                           \
  do {                                                                                    \
    cudaError_t e_ = (__VA_ARGS__);                                                                 \
    if (e_ != cudaSuccess) {                                                              \
      fprintf(stderr, "CUDA error %s at %s:%d: %s\n", cudaGetErrorName(e_), __FILE__, __LINE__, \
              cudaGetErrorString(e_));                                                    \
      exit(2);                                                                            \
    }                                                                                     \
  } while (0)

struct Rng {
  uint64_t s;
  uint64_t next() {
    s += 0x9E3779B97F4A7C15ull;
    uint64_t z = s;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double uni(double lo, double hi) { return lo + (hi - lo) * ((next() >> 11) * (1.0 / 9007199254740992.0)); }
};

// Rounds to a storage dtype and returns the rounded value; appends its bytes to `bytes`.
static double round_to(int dt, double x, std::vector<uint8_t>& bytes) {
  if (dt == DT_F32) {
    float f = static_cast<float>(x);
    const uint8_t* b = reinterpret_cast<const uint8_t*>(&f);
    bytes.insert(bytes.end(), b, b + 4);
    return f;
  }
  if (dt == DT_BF16) {
    __nv_bfloat16 v = __float2bfloat16_rn(static_cast<float>(x));
    const uint8_t* b = reinterpret_cast<const uint8_t*>(&v);
    bytes.insert(bytes.end(), b, b + 2);
    return __bfloat162float(v);
  }
  __half v = __float2half_rn(static_cast<float>(x));
  const uint8_t* b = reinterpret_cast<const uint8_t*>(&v);
  bytes.insert(bytes.end(), b, b + 2);
  return __half2float(v);
}

static double from_bytes(int dt, const uint8_t* p) {
  if (dt == DT_F32) { float f; memcpy(&f, p, 4); return f; }
  if (dt == DT_BF16) { __nv_bfloat16 v; memcpy(&v, p, 2); return __bfloat162float(v); }
  __half v; memcpy(&v, p, 2); return __half2float(v);
}
static int dsize(int dt) { return dt == DT_F32 ? 4 : 2; }

struct Cfg {
  std::string name;
  std::vector<int> lens;
  int H, HK, HV, K, V;
  int io;        // DT_BF16 or DT_F16
  int g_dt, beta_dt;
  int state_dt;  // -1: no initial state
  int flags;
  double scale;  // <= 0: default
  bool safe_params;
  bool pool;
  bool out_final;
  bool cu64 = false;  // int64 cu_seqlens
};

struct Tensor {
  std::vector<uint8_t> bytes;
  std::vector<double> val;
  int dt;
  void* dev = nullptr;
  void fill(int dtype, size_t n, Rng& r, double lo, double hi) {
    dt = dtype;
    for (size_t i = 0; i < n; ++i) val.push_back(round_to(dt, r.uni(lo, hi), bytes));
  }
  void upload() {
    if (bytes.empty()) return;
    CK(cudaMalloc(&dev, bytes.size()));
    CK(cudaMemcpy(dev, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
  }
};

static double sigm(double x) { return 1.0 / (1.0 + std::exp(-x)); }

struct Ref {
  std::vector<double> o, fs;
};

// fp64 per-token recurrence (§3.1) over the rounded inputs.
static Ref reference(const Cfg& c, const std::vector<int>& cu, const Tensor& q, const Tensor& k,
                     const Tensor& v, const Tensor& g, const Tensor& beta, const Tensor* init,
                     const std::vector<int>& rows, const Tensor* alog, const Tensor* dtb, double scale) {
  const int HO = std::max(c.H, c.HV), K = c.K, V = c.V, N = static_cast<int>(c.lens.size());
  Ref r;
  r.o.assign(static_cast<size_t>(cu[N]) * HO * V, 0.0);
  r.fs.assign(static_cast<size_t>(N) * HO * V * K, 0.0);
  auto work = [&](int job) {
    const int b = job / HO, h = job % HO;
    const int qh = h / (HO / c.H), kh = h / (HO / c.HK), vh = h / (HO / c.HV);
    std::vector<double> S(static_cast<size_t>(K) * V, 0.0);
    if (init)
      for (int vi = 0; vi < V; ++vi)
        for (int ki = 0; ki < K; ++ki)
          S[ki * V + vi] = init->val[((static_cast<size_t>(rows[b]) * HO + h) * V + vi) * K + ki];
    std::vector<double> qn(K), kn(K), rr(V);
    for (int t = cu[b]; t < cu[b + 1]; ++t) {
      double qs = 0, ks = 0;
      for (int d = 0; d < K; ++d) {
        qn[d] = q.val[(static_cast<size_t>(t) * c.H + qh) * K + d];
        kn[d] = k.val[(static_cast<size_t>(t) * c.HK + kh) * K + d];
        qs += qn[d] * qn[d];
        ks += kn[d] * kn[d];
      }
      double qr = scale, kr = 1.0;
      if (c.flags & FLAG_L2NORM) { qr = scale / std::sqrt(qs + 1e-6); kr = 1.0 / std::sqrt(ks + 1e-6); }
      for (int d = 0; d < K; ++d) { qn[d] *= qr; kn[d] *= kr; }
      const double gv = g.val[static_cast<size_t>(t) * HO + h];
      double alpha;
      if (c.flags & FLAG_SAFE_GATE) {
        double ea = alog ? std::exp(alog->val[h]) : 1.0;
        double x = gv + (dtb ? dtb->val[h] : 0.0);
        double sp = x > 20 ? x : std::log1p(std::exp(x));
        alpha = std::exp(-ea * sp);
      } else if (c.flags & FLAG_LINEAR_GATE) {
        alpha = gv + 1e-10;
      } else {
        alpha = std::exp(gv);
      }
      double bt = beta.val[static_cast<size_t>(t) * HO + h];
      if (c.flags & FLAG_BETA_SIGMOID) bt = ((c.flags & FLAG_NEG_EIGVAL) ? 2.0 : 1.0) * sigm(bt);
      for (auto& s : S) s *= alpha;
      for (int vi = 0; vi < V; ++vi) rr[vi] = v.val[(static_cast<size_t>(t) * c.HV + vh) * V + vi];
      for (int ki = 0; ki < K; ++ki)
        for (int vi = 0; vi < V; ++vi) rr[vi] -= S[ki * V + vi] * kn[ki];
      for (int ki = 0; ki < K; ++ki)
        for (int vi = 0; vi < V; ++vi) S[ki * V + vi] += bt * kn[ki] * rr[vi];
      for (int vi = 0; vi < V; ++vi) {
        double o = 0;
        for (int ki = 0; ki < K; ++ki) o += S[ki * V + vi] * qn[ki];
        r.o[(static_cast<size_t>(t) * HO + h) * V + vi] = o;
      }
    }
    for (int vi = 0; vi < V; ++vi)
      for (int ki = 0; ki < K; ++ki) r.fs[((static_cast<size_t>(b) * HO + h) * V + vi) * K + ki] = S[ki * V + vi];
  };
  const int jobs = N * HO;
  const int nth = std::max(1u, std::thread::hardware_concurrency());
  std::vector<std::thread> th;
  for (int w = 0; w < nth; ++w)
    th.emplace_back([&, w] { for (int j = w; j < jobs; j += nth) work(j); });
  for (auto& t : th) t.join();
  return r;
}

static double rms_ratio(const std::vector<double>& a, const std::vector<double>& b, double* maxabs) {
  double num = 0, den = 0, mx = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double d = a[i] - b[i];
    if (!std::isfinite(a[i])) return INFINITY;
    num += d * d;
    den += b[i] * b[i];
    mx = std::max(mx, std::fabs(d));
  }
  if (maxabs) *maxabs = mx;
  if (std::sqrt(num) <= 1e-12) return 0;
  return std::sqrt(num / std::max(den, 1e-300));
}

template <typename T, int K, int V>
static bool run_cfg(const Cfg& c, uint64_t seed) {
  Rng rng{seed};
  const int N = static_cast<int>(c.lens.size());
  const int HO = std::max(c.H, c.HV);
  std::vector<int> cu(N + 1, 0);
  for (int i = 0; i < N; ++i) cu[i + 1] = cu[i] + c.lens[i];
  const int Tt = cu[N];
  Tensor q, k, v, g, beta, init, alog, dtb;
  // q, k: L2-normalised random when the kernel does not normalise (§9.3), raw otherwise.
  auto fill_rows = [&](Tensor& t, int heads) {
    t.dt = c.io;
    for (int i = 0; i < Tt * heads; ++i) {
      std::vector<double> row(c.K);
      double ss = 0;
      for (auto& x : row) { x = rng.uni(-1, 1); ss += x * x; }
      const double s = (c.flags & FLAG_L2NORM) ? 1.0 : 1.0 / std::sqrt(ss);
      for (auto& x : row) t.val.push_back(round_to(c.io, x * s, t.bytes));
    }
  };
  fill_rows(q, c.H);
  fill_rows(k, c.HK);
  v.fill(c.io, static_cast<size_t>(Tt) * c.HV * c.V, rng, -1, 1);
  g.dt = c.g_dt;
  for (int i = 0; i < Tt * HO; ++i) {
    double x;
    if (c.flags & FLAG_SAFE_GATE) x = rng.uni(-3, 1);
    else if (c.flags & FLAG_LINEAR_GATE) x = rng.uni(0.5, 1.0);
    else x = std::log(rng.uni(0.5, 1.0));
    g.val.push_back(round_to(c.g_dt, x, g.bytes));
  }
  if (c.flags & FLAG_BETA_SIGMOID) beta.fill(c.beta_dt, static_cast<size_t>(Tt) * HO, rng, -2, 2);
  else beta.fill(c.beta_dt, static_cast<size_t>(Tt) * HO, rng, 0, 1);
  if (c.safe_params) {
    alog.fill(DT_F32, HO, rng, -1, 0.5);
    dtb.fill(DT_F32, HO, rng, -0.5, 0.5);
  }
  // Initial state: packed [N,...] or a pool with permuted rows and NaN-filled spares.
  const size_t sl = static_cast<size_t>(HO) * c.V * c.K;
  const int npool = c.pool ? N + 3 : N;
  std::vector<int> rows(N);
  for (int i = 0; i < N; ++i) rows[i] = i;
  if (c.pool) {  // permuted, injective rows
    for (int i = 0; i < N; ++i) rows[i] = (i * 2 + 1) % npool;
    std::vector<int> seen(npool, 0);
    for (int i = 0; i < N; ++i) { while (seen[rows[i]]) rows[i] = (rows[i] + 1) % npool; seen[rows[i]] = 1; }
  }
  const bool has_init = c.state_dt >= 0;
  if (has_init) {
    init.dt = c.state_dt;
    init.val.assign(npool * sl, NAN);
    init.bytes.assign(npool * sl * dsize(c.state_dt), 0xFF);  // NaN pattern in both dtypes
    for (int i = 0; i < N; ++i) {
      for (size_t e = 0; e < sl; ++e) {
        std::vector<uint8_t> one;
        double x = round_to(c.state_dt, rng.uni(-0.1, 0.1), one);
        init.val[rows[i] * sl + e] = x;
        memcpy(&init.bytes[(rows[i] * sl + e) * dsize(c.state_dt)], one.data(), one.size());
      }
    }
  }
  const double scale = c.scale > 0 ? c.scale : 1.0 / std::sqrt(static_cast<double>(c.K));
  Ref ref = reference(c, cu, q, k, v, g, beta, has_init ? &init : nullptr, rows,
                      c.safe_params ? &alog : nullptr, c.safe_params ? &dtb : nullptr, scale);

  for (Tensor* t : {&q, &k, &v, &g, &beta, &init, &alog, &dtb}) t->upload();
  void* dcu;
  int* didx = nullptr;
  if (c.cu64) {
    std::vector<long long> cu64(cu.begin(), cu.end());
    CK(cudaMalloc(&dcu, sizeof(long long) * (N + 1)));
    CK(cudaMemcpy(dcu, cu64.data(), sizeof(long long) * (N + 1), cudaMemcpyHostToDevice));
  } else {
    CK(cudaMalloc(&dcu, sizeof(int) * (N + 1)));
    CK(cudaMemcpy(dcu, cu.data(), sizeof(int) * (N + 1), cudaMemcpyHostToDevice));
  }
  if (c.pool) {
    CK(cudaMalloc(&didx, sizeof(int) * N));
    CK(cudaMemcpy(didx, rows.data(), sizeof(int) * N, cudaMemcpyHostToDevice));
  }
  const int sdt = has_init ? c.state_dt : DT_F32;
  void* dout;
  const size_t obytes = static_cast<size_t>(Tt) * HO * c.V * sizeof(T);
  CK(cudaMalloc(&dout, std::max<size_t>(obytes, 1)));
  void* dfs = nullptr;
  if (c.out_final && !c.pool) CK(cudaMalloc(&dfs, N * sl * dsize(sdt)));

  FwdParams p{};
  p.q = q.dev; p.k = k.dev; p.v = v.dev; p.g = g.dev; p.beta = beta.dev;
  p.cu_seqlens = dcu; p.cu_seqlens_i64 = c.cu64 ? 1 : 0;
  p.initial_state = has_init ? init.dev : nullptr;
  p.state_indices = didx;
  p.a_log = c.safe_params ? alog.dev : nullptr;
  p.dt_bias = c.safe_params ? dtb.dev : nullptr;
  p.o = dout;
  p.final_state = c.pool ? init.dev : dfs;  // pool: overwrite in place
  p.n_seqs = N; p.h = c.H; p.hk = c.HK; p.hv = c.HV; p.ho = HO;
  p.g_dtype = c.g_dt; p.beta_dtype = c.beta_dt; p.state_dtype = sdt;
  p.a_log_dtype = DT_F32; p.dt_bias_dtype = DT_F32;
  p.scale = static_cast<float>(scale);
  p.flags = c.flags;
  p.max_chunks = Tt / CHUNK + N;
  const size_t wsb = gdn_fwd_workspace_layout<T, K, V>(p, nullptr);
  void* ws;
  CK(cudaMalloc(&ws, wsb));
  gdn_fwd_workspace_layout<T, K, V>(p, ws);
  CK(gdn_fwd_prepare_attributes<T, K, V>());

  std::vector<uint8_t> o1(obytes), o2(obytes), f1, f2;
  const size_t fbytes = (c.pool ? npool : N) * sl * dsize(sdt);
  for (int rep = 0; rep < 2; ++rep) {
    if (c.pool) CK(cudaMemcpy(init.dev, init.bytes.data(), init.bytes.size(), cudaMemcpyHostToDevice));
    CK(cudaMemset(dout, 0xFF, std::max<size_t>(obytes, 1)));
    CK(cudaMemset(ws, 0xFF, wsb));
    if (dfs) CK(cudaMemset(dfs, 0xFF, N * sl * dsize(sdt)));
    CK(gdn_fwd_launch<T, K, V>(p, 0));
    CK(cudaDeviceSynchronize());
    auto& ob = rep ? o2 : o1;
    CK(cudaMemcpy(ob.data(), dout, obytes, cudaMemcpyDeviceToHost));
    if (p.final_state) {
      auto& fb = rep ? f2 : f1;
      fb.resize(fbytes);
      CK(cudaMemcpy(fb.data(), p.final_state, fbytes, cudaMemcpyDeviceToHost));
    }
  }
  std::vector<double> og(static_cast<size_t>(Tt) * HO * c.V);
  for (size_t i = 0; i < og.size(); ++i) og[i] = from_bytes(c.io, &o1[i * sizeof(T)]);
  double omax = 0, smax = 0;
  const double eo = rms_ratio(og, ref.o, &omax);
  double es = 0;
  bool spare_ok = true;
  if (p.final_state) {
    std::vector<double> fg(N * sl);
    for (int b = 0; b < N; ++b)
      for (size_t e = 0; e < sl; ++e) fg[b * sl + e] = from_bytes(sdt, &f1[(rows[b] * sl + e) * dsize(sdt)]);
    es = rms_ratio(fg, ref.fs, &smax);
    if (c.pool) {  // spare rows untouched (bitwise)
      std::vector<int> used(npool, 0);
      for (int b = 0; b < N; ++b) used[rows[b]] = 1;
      for (int rw = 0; rw < npool; ++rw)
        if (!used[rw] && memcmp(&f1[rw * sl * dsize(sdt)], &init.bytes[rw * sl * dsize(sdt)], sl * dsize(sdt)) != 0)
          spare_ok = false;
    }
  }
  const bool det = o1 == o2 && f1 == f2;
  const double tol = c.io == DT_BF16 ? 2e-2 : 1e-2;
  const bool ok = eo <= tol && es <= tol && det && spare_ok;
  printf("%-44s O rms %.3e max|d| %.3e | state rms %.3e max|d| %.3e | det %s spare %s => %s\n",
         c.name.c_str(), eo, omax, es, smax, det ? "ok" : "NO", spare_ok ? "ok" : "NO", ok ? "PASS" : "FAIL");
  for (Tensor* t : {&q, &k, &v, &g, &beta, &init, &alog, &dtb})
    if (t->dev) CK(cudaFree(t->dev));
  CK(cudaFree(dcu));
  if (didx) CK(cudaFree(didx));
  CK(cudaFree(dout));
  if (dfs) CK(cudaFree(dfs));
  CK(cudaFree(ws));
  return ok;
}

// ---------------------------------------------------------------------------------------
// Benchmark: bf16, K = V = 128, fp32 g/beta, fp32 initial and final state.
// ---------------------------------------------------------------------------------------
static void bench(const char* name, const std::vector<int>& lens, int H) {
  using T = __nv_bfloat16;
  constexpr int K = 128, V = 128;
  const int N = static_cast<int>(lens.size());
  std::vector<int> cu(N + 1, 0);
  for (int i = 0; i < N; ++i) cu[i + 1] = cu[i] + lens[i];
  const size_t Tt = cu[N];
  Rng rng{77};
  auto dev_rand = [&](size_t n, int dt, double lo, double hi, bool unit_rows = false) {
    std::vector<uint8_t> bytes;
    bytes.reserve(n * dsize(dt));
    for (size_t i = 0; i < n; ++i) {
      double x = rng.uni(lo, hi);
      if (unit_rows) x /= std::sqrt(K / 3.0);
      round_to(dt, x, bytes);
    }
    void* d;
    CK(cudaMalloc(&d, bytes.size()));
    CK(cudaMemcpy(d, bytes.data(), bytes.size(), cudaMemcpyHostToDevice));
    return d;
  };
  FwdParams p{};
  p.q = dev_rand(Tt * H * K, DT_BF16, -1, 1, true);
  p.k = dev_rand(Tt * H * K, DT_BF16, -1, 1, true);
  p.v = dev_rand(Tt * H * V, DT_BF16, -1, 1);
  std::vector<uint8_t> gb;
  for (size_t i = 0; i < Tt * H; ++i) round_to(DT_F32, std::log(rng.uni(0.5, 1.0)), gb);
  void* dg;
  CK(cudaMalloc(&dg, gb.size()));
  CK(cudaMemcpy(dg, gb.data(), gb.size(), cudaMemcpyHostToDevice));
  p.g = dg;
  p.beta = dev_rand(Tt * H, DT_F32, 0, 1);
  int* dcu;
  CK(cudaMalloc(&dcu, sizeof(int) * (N + 1)));
  CK(cudaMemcpy(dcu, cu.data(), sizeof(int) * (N + 1), cudaMemcpyHostToDevice));
  p.cu_seqlens = dcu;
  const size_t sl = static_cast<size_t>(H) * V * K;
  p.initial_state = dev_rand(N * sl, DT_F32, -0.1, 0.1);
  void* dfs;
  CK(cudaMalloc(&dfs, N * sl * 4));
  p.final_state = dfs;
  void* dout;
  CK(cudaMalloc(&dout, Tt * H * V * 2));
  p.o = dout;
  p.n_seqs = N; p.h = p.hk = p.hv = p.ho = H;
  p.g_dtype = DT_F32; p.beta_dtype = DT_F32; p.state_dtype = DT_F32;
  p.scale = 1.0f / std::sqrt(static_cast<float>(K));
  p.flags = 0;
  p.max_chunks = static_cast<int>(Tt / CHUNK) + N;
  const size_t wsb = gdn_fwd_workspace_layout<T, K, V>(p, nullptr);
  void* ws;
  CK(cudaMalloc(&ws, wsb));
  gdn_fwd_workspace_layout<T, K, V>(p, ws);
  CK(gdn_fwd_prepare_attributes<T, K, V>());
  CK(cudaFuncSetAttribute(bench_scan_bf16_k128<4, 2>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          static_cast<int>(ScanSmem<K, 4, 2>::bytes)));
  CK(cudaFuncSetAttribute(bench_scan_bf16_k128<2, 3>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          static_cast<int>(ScanSmem<K, 2, 3>::bytes)));
  CK(cudaFuncSetAttribute(bench_scan_bf16_k128<1, 3>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                          static_cast<int>(ScanSmem<K, 1, 3>::bytes)));
  cudaEvent_t e0, e1, e2;
  CK(cudaEventCreate(&e0)); CK(cudaEventCreate(&e1)); CK(cudaEventCreate(&e2));
  std::vector<float> tot, tprep, tscan, tscan2, tscan1;
  const size_t obytes = Tt * H * V * 2;
  std::vector<uint8_t> ob4(obytes), obx(obytes);
  bool variants_same = true;
  for (int it = 0; it < 25; ++it) {
    CK(cudaEventRecord(e0));
    gdn_chunk_offsets<<<1, OFFSETS_THREADS>>>(p);
    Entries<T, K>::prep<<<dim3(p.max_chunks, H), 128, PrepSmem<K, V>::bytes>>>(p);
    CK(cudaEventRecord(e1));
    Entries<T, K>::scan<<<dim3(V / (16 * SCAN_WARPS), H, N), SCAN_WARPS * 32,
                          ScanSmem<K, SCAN_WARPS, SCAN_STAGES>::bytes>>>(p);
    CK(cudaEventRecord(e2));
    CK(cudaEventSynchronize(e2));
    CK(cudaGetLastError());
    float a, b;
    CK(cudaEventElapsedTime(&a, e0, e1));
    CK(cudaEventElapsedTime(&b, e1, e2));
    if (it >= 5) { tprep.push_back(a); tscan.push_back(b); tot.push_back(a + b); }
    if (it == 0) CK(cudaMemcpy(ob4.data(), dout, obytes, cudaMemcpyDeviceToHost));
  }
  std::vector<float> tscan42;
  for (int nw : {42, 2, 1}) {
    for (int it = 0; it < 15; ++it) {
      CK(cudaEventRecord(e1));
      if (nw == 42) bench_scan_bf16_k128<4, 2><<<dim3(V / 64, H, N), 128, ScanSmem<K, 4, 2>::bytes>>>(p);
      else if (nw == 2) bench_scan_bf16_k128<2, 3><<<dim3(V / 32, H, N), 64, ScanSmem<K, 2, 3>::bytes>>>(p);
      else bench_scan_bf16_k128<1, 3><<<dim3(V / 16, H, N), 32, ScanSmem<K, 1, 3>::bytes>>>(p);
      CK(cudaEventRecord(e2));
      CK(cudaEventSynchronize(e2));
      CK(cudaGetLastError());
      float b;
      CK(cudaEventElapsedTime(&b, e1, e2));
      if (it >= 5) (nw == 42 ? tscan42 : nw == 2 ? tscan2 : tscan1).push_back(b);
    }
    CK(cudaMemcpy(obx.data(), dout, obytes, cudaMemcpyDeviceToHost));
    variants_same = variants_same && obx == ob4;
  }
  auto med = [](std::vector<float> x) { std::sort(x.begin(), x.end()); return x[x.size() / 2]; };
  const double ms = med(tot), mp = med(tprep), msc = med(tscan);
  const double th = static_cast<double>(Tt) * H;
  const double min_bytes = th * (2.0 * K * 2 + V * 2 + V * 2 + 8) + 2.0 * N * sl * 4;
  const double chunks = static_cast<double>(p.max_chunks) * H;
  const double prep_flops = chunks * (2.0 * 64 * 64 * K * 2 + 2.0 * 64 * 64 * K * 0.625 + 2.0 * 64 * 64 * V);
  const double scan_flops = chunks * (2.0 * 2 * V * 64 * K + 2.0 * V * 64 * 64 * 0.625 + 2.0 * V * K * 64);
  const double ws_bytes = chunks * (64.0 * K * 3 + V * 64 + 64 * 64) * 2;
  printf("%-22s N=%-3d T=%-6zu H=%-3d | total %.3f ms (prep %.3f, scan %.3f) | min-traffic %.0f GB/s"
         " | prep %.0f GB/s %.1f TFLOP/s | scan %.0f GB/s %.1f TFLOP/s\n",
         name, N, Tt, H, ms, mp, msc, min_bytes / ms / 1e6,
         (th * (2.0 * K * 2 + V * 2 + 8) + ws_bytes) / mp / 1e6, prep_flops / mp / 1e9,
         (ws_bytes + th * V * 2 + 2.0 * N * sl * 4) / msc / 1e6, scan_flops / msc / 1e9);
  printf("%-22s scan variants (warps x stages): 4x3 %.3f ms, 4x2 %.3f ms, 2x3 %.3f ms, 1x3 %.3f ms; outputs bitwise equal: %s\n",
         name, msc, med(tscan42), med(tscan2), med(tscan1), variants_same ? "yes" : "NO");
  for (const void* d : {p.q, p.k, p.v, p.g, p.beta, p.initial_state, static_cast<const void*>(dfs),
                        static_cast<const void*>(dout), static_cast<const void*>(ws), static_cast<const void*>(dcu)})
    CK(cudaFree(const_cast<void*>(d)));
}

int main(int argc, char** argv) {
  // --no-bench: correctness only; --quick: two small configurations (for the sanitizers).
  const bool quick = argc > 1 && strcmp(argv[1], "--quick") == 0;
  if (argc > 1 && strcmp(argv[1], "--profile") == 0) {  // one shape, for ncu
    bench("(4,8192,16)", std::vector<int>(4, 8192), 16);
    return 0;
  }
  const bool do_bench = argc < 2;
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, 0));
  printf("device: %s, %d SMs, cc %d.%d\n", prop.name, prop.multiProcessorCount, prop.major, prop.minor);
  int fails = 0;
  const int BF = DT_BF16, F16 = DT_F16, F32 = DT_F32;
  const std::vector<int> edge = {1, 15, 16, 17, 31, 63, 64, 65, 0, 121, 251, 257};
  // name, lens, H, HK, HV, K, V, io, g_dt, beta_dt, state_dt, flags, scale, safe_params, pool, out_final
  std::vector<Cfg> c128 = {
      {"bf16 K=V=128 edge lens, init f32, log", edge, 2, 2, 2, 128, 128, BF, F32, F32, F32, 0, 0, false, false, true},
      {"bf16 K=V=128 no init, beta bf16, sc.5, cu64", {96, 32, 160, 1}, 3, 3, 3, 128, 128, BF, F32, BF, -1, 0, 0.5, false, false, true},
      {"bf16 K=V=128 GVA 1/2 l2norm sig safe", {200, 0, 77}, 1, 1, 2, 128, 128, BF, BF, F32, BF,
       FLAG_L2NORM | FLAG_BETA_SIGMOID | FLAG_SAFE_GATE, 0, true, false, true},
      {"bf16 K=V=128 GQA 4/2 linear gate neg-eig", {68, 130}, 4, 2, 2, 128, 128, BF, F32, F32, F32,
       FLAG_LINEAR_GATE | FLAG_BETA_SIGMOID | FLAG_NEG_EIGVAL | FLAG_L2NORM, 1.0, false, false, true},
      {"bf16 K=V=128 pool+overwrite, f32 state", {64, 0, 100, 3}, 2, 2, 2, 128, 128, BF, F32, F32, F32, 0, 0, false, true, true},
      {"bf16 K=V=128 long 2048+511", {2048, 511}, 2, 2, 2, 128, 128, BF, F32, F32, F32, FLAG_L2NORM, 0, false, false, true},
  };
  std::vector<Cfg> c128h = {
      {"f16 K=V=128 edge lens, g f16, init bf16", edge, 2, 2, 2, 128, 128, F16, F16, F16, BF, 0, 0, false, false, true},
      {"f16 K=V=128 safe no-final", {300, 45}, 2, 2, 4, 128, 128, F16, F32, F32, F32, FLAG_SAFE_GATE | FLAG_L2NORM, 0, true, false, false},
  };
  std::vector<Cfg> c64 = {
      {"bf16 K=V=64 edge lens, init f32", edge, 2, 2, 2, 64, 64, BF, F32, F32, F32, 0, 0, false, false, true},
      {"bf16 K=V=64 GQA 6/2 l2norm safe, cu64", {33, 129, 0, 7}, 6, 2, 2, 64, 64, BF, F32, BF, F32, FLAG_L2NORM | FLAG_SAFE_GATE, 0, true, false, true},
  };
  std::vector<Cfg> c64h = {
      {"f16 K=V=64 ragged, pool bf16", {31, 63, 93, 123, 150, 500}, 2, 2, 2, 64, 64, F16, F32, F16, BF, FLAG_BETA_SIGMOID, 0, false, true, true},
  };
  if (quick) {
    c128.resize(1);
    c128h.clear();
    c64.resize(1);
    c64h.clear();
  }
  c128[0].cu64 = false;
  if (c128.size() > 1) c128[1].cu64 = true;
  if (c64.size() > 1) c64[1].cu64 = true;
  uint64_t seed = 1;
  for (auto& c : c128) fails += !run_cfg<__nv_bfloat16, 128, 128>(c, seed++);
  for (auto& c : c128h) fails += !run_cfg<__half, 128, 128>(c, seed++);
  for (auto& c : c64) fails += !run_cfg<__nv_bfloat16, 64, 64>(c, seed++);
  for (auto& c : c64h) fails += !run_cfg<__half, 64, 64>(c, seed++);
  printf("correctness: %d failure(s)\n", fails);
  if (do_bench) {
    bench("(4,8192,16)", std::vector<int>(4, 8192), 16);
    bench("(1,32768,16)", {32768}, 16);
    bench("(16,2048,32)", std::vector<int>(16, 2048), 32);
    bench("ragged mix H=16", {8192, 100, 4096, 1, 2048, 7000, 0, 3000, 512, 5000}, 16);
  }
  return fails ? 1 : 0;
}
