// Runs the slim forward's wgmma output scans (session 42, helper emu42) on the CPU: the slim prep
// (gdn_fwd_slim.cuh, fwd_slim_prep_body) and then, on its workspace, the scans the forward runs by
// rule on the H200 (SLIM_SCAN_WGMMA_BY_RULE) with the emulated warpgroup MMA (bench/gdn_wgmma_emu.h,
// one std::thread per CUDA thread: bench/gdn_host_emu.h), template arguments exactly as
// kernels/src/gdn_fwd.cu's entries instantiate them:
//   w4    fwd_slim_scan_body<T, 128, 128, 4, SLIM_W4_STAGES>                       (mma.sync; GDN_FWD_SLIM_ENTRIES)
//   w4gx  fwd_slim_scan_body<T, 128, 128, 4, SLIM_W4_STAGES, false, true, true>    (GDN_FWD_SLIM_WGX_ENTRY)
//   w4gxs fwd_slim_scan_body<T, 128, 128, 4, SLIM_W4_STAGES, false, true, true, false, false, true>
//                                                                                   (GDN_FWD_SLIM_WGXS_ENTRY)
//   w8gx  fwd_slim_scan_body<T, 128, 128, 8, SLIM_W8_STAGES, false, true, true>    (GDN_FWD_SLIM_WGX_ENTRY)
// on grid (V / (16 NW), HO, N), 32 NW threads, SlimScanSmem<128, NW, STAGES>::bytes of dynamic
// shared memory (the host's slim_scan_smem_bytes; the emulation's gdn::smem is 232 KB, a write past
// the entry's size is caught below), each run twice (cp.async landing at its wait, then at issue).
// Checks, one line each (ok / FAIL):
//   - every scan's O and final state within the slim emulator's tolerance of an fp64 token-by-token
//     recurrence (spec §4.1) of the same inputs (relative rms: bf16 < 2e-2, fp16 < 1e-2);
//   - w4gxs bitwise w4gx (the same copies in another order within the same commit group);
//   - w8gx bitwise w4gx (each warpgroup's arithmetic is the same at either width);
//   - w4gx bitwise the mma.sync w4 scan: true in this emulation, whose wgmma and mma.sync share one
//     arithmetic model (per k16 step the fp64 sum of the 16 io-dtype products onto the fp32
//     accumulator, rounded once: gdn_host_emu.h emu_mma, gdn_wgmma_emu.h emu_wg_retire) and the
//     wgmma tail's extra products over T's, A's zero blocks above the diagonal add exact zeros. On
//     the H200 they are not bitwise by construction (the tensor core's accumulation order), though
//     session 23 found w4gs's hashes equal w4's on every forward test case;
//   - w4gx with FLAG_SEQ_ORDER (the longest-first block order of its SEQ_ORDER, the table built by
//     seq_order_body) bitwise w4gx without (case 0 only);
//   - each scan repeats bitwise (cp.async eager), every cp.async and wgmma waited for, no write
//     into shared memory past the entry's SlimScanSmem::bytes, and the wgmma scans' steps ran on
//     the emulated wgmma (its retired ops counted, g_wg_retired; none for w4).
// Cases (as bench/gdn_slim_host_emu.cpp's; the inputs, the fp64 reference and the parameters are
// bench/gdn_slim_emu_case.h's, shared with it): partial chunks and an empty sequence, GQA (H = HK =
// 1 < HV = HO), l2norm on / off, beta sigmoid, fp32 / bf16 initial state, bf16 / fp16, slow decay.
//
// Needs the GDN_WGMMA_EMU branches of kernels/include/gdn_fwd_slim.cuh's fwd_slim_scan_body
// (session 42: without them the emulation compiles only the mma.sync step); the GPU code of those
// headers is unchanged by them (cubins' .text identical).
//
// Build and run (CPU machine), from the repository root:
//   g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -Ikernels/include -Ibench bench/gdn_fwd_gx_host_emu.cpp -o /tmp/gdn_fwd_gx_host_emu
//   /tmp/gdn_fwd_gx_host_emu            all cases (1.5 to 3 minutes on 2 shared cores)
//   /tmp/gdn_fwd_gx_host_emu quick      cases 0 and 1 only (about 20 s)
//   /tmp/gdn_fwd_gx_host_emu 3          case 3 only
//
// Cross-revision comparison (GDN_FWD_GX_DUMP=FILE appends, per case and scan (w4, w4gx, w4gxs,
// w8gx), a tag, O's io bits and the final state's bits to FILE): build against the two revisions'
// headers, run both with a dump, compare with cmp (a revision before session 42's GDN_WGMMA_EMU
// branches in fwd_slim_scan_body does not compile here: its static_assert(!WG) under GDN_HOST_EMU):
//   mkdir -p /tmp/inc_old && git archive <rev> kernels/include | tar x -C /tmp/inc_old
//   g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -I/tmp/inc_old/kernels/include -Ibench bench/gdn_fwd_gx_host_emu.cpp -o /tmp/gx_old
//   g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -Ikernels/include -Ibench bench/gdn_fwd_gx_host_emu.cpp -o /tmp/gx_new
//   rm -f /tmp/gx_old.bin /tmp/gx_new.bin
//   GDN_FWD_GX_DUMP=/tmp/gx_old.bin /tmp/gx_old && GDN_FWD_GX_DUMP=/tmp/gx_new.bin /tmp/gx_new
//   cmp /tmp/gx_old.bin /tmp/gx_new.bin && echo bitwise
// An older revision: first apply session 42's emulation branches to its copy (preprocessor lines
// only; they may need a hand where the body moved), e.g.
//   git diff <session 42's commit>^ <session 42's commit> -- kernels/include | patch -d /tmp/inc_old -p1
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include "gdn_host_emu.h"
#include "gdn_wgmma_emu.h"
#include "gdn_fwd_slim.cuh"
#include "gdn_slim_emu_case.h"

static int g_fails = 0;
static void check(bool ok, const char* what) {
  printf("  %-78s %s\n", what, ok ? "ok" : "FAIL");
  if (!ok) ++g_fails;
}
static void check(bool ok, const std::string& what) { check(ok, what.c_str()); }
template <typename V>
static bool same(const V& a, const V& b) { return a.size() == b.size() && memcmp(a.data(), b.data(), a.size() * sizeof(a[0])) == 0; }
template <typename V>
static size_t ndiff(const V& a, const V& b) {
  size_t n = 0;
  for (size_t i = 0; i < std::min(a.size(), b.size()); ++i) n += memcmp(&a[i], &b[i], sizeof(a[0])) != 0;
  return n + (a.size() > b.size() ? a.size() - b.size() : b.size() - a.size());
}

// One scan's outputs: O's io bits, the final state's bits (fp32, or bf16 in the low halves).
struct ScanOut {
  std::vector<unsigned short> o;
  std::vector<float> fs32;
  std::vector<unsigned short> fs16;
};

template <typename IOT>
static void run_case(int idx, const char* name, int H, int HV, int flags, std::vector<int> lens, bool bf16_state,
                     double gate_lo = 0.5) {
  constexpr int K = SlimEmuCase<IOT>::K, V = SlimEmuCase<IOT>::V, C = SlimEmuCase<IOT>::C;
  const int HO = std::max(H, HV), N = static_cast<int>(lens.size());
  const bool l2 = flags & gdn::FLAG_L2NORM;
  const bool is_bf16 = std::is_same_v<IOT, gdn::gdn_bf16>;
  printf("== case %d: %s (%s, H %d HV %d, l2norm %d, lens", idx, name, is_bf16 ? "bf16" : "fp16", H, HV, l2 ? 1 : 0);
  for (int l : lens) printf(" %d", l);
  printf(", %s state)\n", bf16_state ? "bf16" : "fp32");
  const auto t_start = std::chrono::steady_clock::now();
  rng_state = 12345 + 1000003ULL * idx;  // each case's inputs independent of which cases run
  // The inputs, the fp64 reference and the parameters (bench/gdn_slim_emu_case.h, shared with
  // bench/gdn_slim_host_emu.cpp).
  SlimEmuCase<IOT> cs(H, HV, flags, lens, bf16_state, gate_lo);
  const int T = cs.T, max_chunks = cs.max_chunks;
  auto& offs = cs.offs;
  auto &h0b = cs.h0b, &h0f = cs.h0f;
  auto &ro = cs.ro, &rfs = cs.rfs;
  gdn::FwdFastParams& fp = cs.fp;
  gdn::FwdParams& p = fp.f;
  // ---- the slim prep ----
  const size_t slots = size_t(max_chunks) * HO;
  std::vector<unsigned short> ts(slots * gdn::SLIM_TRI_ELEMS, 0xFFFF), as(ts.size(), 0xFFFF);
  std::vector<float> gl(slots, NAN), sc(slots * gdn::SLIM_SCALARS * C, NAN);
  p.ws_w = ts.data();
  p.ws_a = as.data();
  p.ws_kr = sc.data();
  p.ws_gl = gl.data();
  p.ws_q = nullptr;
  p.ws_ut = nullptr;
  launch(U3{unsigned(max_chunks), unsigned(HO), 1}, gdn::PREP3_THREADS, [&] { gdn::fwd_slim_prep_body<IOT, K>(p); });

  // ---- the scans ----
  auto &o = cs.o, &fs16 = cs.fs16;
  auto& fs32 = cs.fs32;
  auto set_state = [&] { cs.reset_outputs(); };
  // Runs a scan twice (cp.async at the wait, then eager) on NaN-refilled outputs; checks the repeat,
  // the waits and the shared-memory bound (smem_bytes: the entry's dynamic shared memory; each
  // block's last barrier, then thread 0 finds gdn::smem past it still holding launch's 0xFF fill).
  // wgmma: whether the scan is a wgmma one (its emulated wgmma ops retired, counted once per thread,
  // reported per thread and live chunk; none for the mma.sync scan).
  const int live = offs[N];
  auto run_scan = [&](const char* kname, U3 grid, unsigned threads, size_t smem_bytes, bool wgmma,
                      const std::function<void()>& body) {
    ScanOut r[2];
    std::atomic<int> past{0};
    g_unwaited = 0;
    g_wg_unwaited = 0;
    g_wg_retired = 0;
    for (int rep = 0; rep < 2; ++rep) {
      set_state();
      g_cp_eager = rep == 1;
      launch(grid, threads, [&] {
        body();
        dnnp::emu_wg_thread_end();
        __syncthreads();
        if (threadIdx.x == 0)
          for (size_t i = smem_bytes; i < sizeof(gdn::smem); ++i)
            if (gdn::smem[i] != 0xFF) {
              ++past;
              break;
            }
      });
      r[rep] = ScanOut{o, fs32, fs16};
    }
    g_cp_eager = false;
    check(same(r[0].o, r[1].o) && same(r[0].fs32, r[1].fs32) && same(r[0].fs16, r[1].fs16),
          std::string(kname) + ": repeats bitwise (cp.async eager)");
    check(g_unwaited.load() == 0 && g_wg_unwaited.load() == 0 && past.load() == 0,
          std::string(kname) + ": every cp.async / wgmma waited for, no smem write past its size");
    const long ops = g_wg_retired.load() / 2;  // per run
    const double per = live > 0 ? double(ops) / (double(grid.x) * threads * HO * live) : 0.0;
    char what[160];
    snprintf(what, sizeof what, "%s: %s (%ld retired, %.2f per thread and chunk)", kname,
             wgmma ? "its steps ran on the emulated wgmma" : "no wgmma", ops, per);
    check(wgmma ? (ops > 0 || live == 0) : ops == 0, what);
    return r[0];
  };
  using S4 = gdn::SlimScanSmem<K, 4, gdn::SLIM_W4_STAGES>;
  using S8 = gdn::SlimScanSmem<K, 8, gdn::SLIM_W8_STAGES>;
  static_assert(S4::bytes <= sizeof(gdn::smem) && S8::bytes <= sizeof(gdn::smem), "the entries' shared memory");
  const U3 g4{unsigned(V / 64), unsigned(HO), unsigned(N)}, g8{unsigned(V / 128), unsigned(HO), unsigned(N)};
  const ScanOut w4 = run_scan("w4 (mma.sync)", g4, 128, S4::bytes, false,
                              [&] { gdn::fwd_slim_scan_body<IOT, K, V, 4, gdn::SLIM_W4_STAGES>(fp); });
  const ScanOut w4gx = run_scan("w4gx", g4, 128, S4::bytes, true,
                                [&] { gdn::fwd_slim_scan_body<IOT, K, V, 4, gdn::SLIM_W4_STAGES, false, true, true>(fp); });
  const ScanOut w4gxs = run_scan("w4gxs", g4, 128, S4::bytes, true, [&] {
    gdn::fwd_slim_scan_body<IOT, K, V, 4, gdn::SLIM_W4_STAGES, false, true, true, false, false, true>(fp);
  });
  const ScanOut w8gx = run_scan("w8gx", g8, 256, S8::bytes, true,
                                [&] { gdn::fwd_slim_scan_body<IOT, K, V, 8, gdn::SLIM_W8_STAGES, false, true, true>(fp); });
  const std::pair<const char*, const ScanOut*> scans[] = {{"w4", &w4}, {"w4gx", &w4gx}, {"w4gxs", &w4gxs}, {"w8gx", &w8gx}};
  // GDN_FWD_GX_DUMP=FILE: every scan's outputs, raw, for cmp across two builds of the headers.
  if (const char* dump = getenv("GDN_FWD_GX_DUMP")) {
    if (FILE* f = fopen(dump, "ab")) {
      for (const auto& [sn, s] : scans) {
        char tag[64];
        snprintf(tag, sizeof tag, "case %d %s", idx, sn);
        fwrite(tag, 1, strlen(tag) + 1, f);
        fwrite(s->o.data(), 2, s->o.size(), f);
        if (bf16_state) fwrite(s->fs16.data(), 2, s->fs16.size(), f);
        else fwrite(s->fs32.data(), 4, s->fs32.size(), f);
      }
      fclose(f);
    }
  }
  auto decoded = [&](const ScanOut& s) {
    std::vector<double> od(s.o.size()), fd(s.fs32.size());
    for (size_t i = 0; i < od.size(); ++i) od[i] = dec<IOT>(s.o[i]);
    for (size_t i = 0; i < fd.size(); ++i) fd[i] = bf16_state ? dec<gdn::gdn_bf16>(s.fs16[i]) : s.fs32[i];
    return std::pair{od, fd};
  };
  auto bits_same = [&](const ScanOut& a, const ScanOut& b) { return same(a.o, b.o) && same(a.fs32, b.fs32) && same(a.fs16, b.fs16); };
  auto diff_count = [&](const ScanOut& a, const ScanOut& b) {
    return std::pair{ndiff(a.o, b.o), bf16_state ? ndiff(a.fs16, b.fs16) : ndiff(a.fs32, b.fs32)};
  };
  const double tol = is_bf16 ? 2e-2 : 1e-2;
  printf("  rel rms vs fp64 (O, final state):");
  for (const auto& [sn, s] : scans) {
    const auto d = decoded(*s);
    printf(" %s %.3e %.3e%s", sn, rms_ratio(d.first, ro), rms_ratio(d.second, rfs), sn == scans[3].first ? "\n" : " |");
  }
  for (const auto& [sn, s] : scans) {
    const auto d = decoded(*s);
    const double eo = rms_ratio(d.first, ro), es = rms_ratio(d.second, rfs);
    char what[120];
    snprintf(what, sizeof what, "%s: O and final state within %.0e of the fp64 reference", sn, tol);
    check(eo < tol && es < tol, what);
  }
  auto bitwise = [&](const char* what, const ScanOut& a, const ScanOut& b) {
    const auto [no, ns] = diff_count(a, b);
    char line[160];
    if (no + ns == 0) snprintf(line, sizeof line, "%s", what);
    else snprintf(line, sizeof line, "%s (O %zu, state %zu values differ)", what, no, ns);
    check(bits_same(a, b), line);
  };
  bitwise("w4gxs bitwise w4gx", w4gxs, w4gx);
  bitwise("w8gx bitwise w4gx", w8gx, w4gx);
  bitwise("w4gx bitwise w4 (mma.sync; the emulation's one arithmetic model)", w4gx, w4);
  if (idx == 0) {  // FLAG_SEQ_ORDER: the wgmma scans' longest-first block order (SEQ_ORDER)
    p.flags = flags | gdn::FLAG_SEQ_ORDER;
    // seq_order_body (chunk_offsets_body's second half; its first, the table, is the host's here:
    // its __shared__ totals would be per-thread) after the host's table.
    std::fill(offs.begin() + N + 1, offs.end(), -1);
    launch(U3{1, 1, 1}, gdn::OFFSETS_THREADS, [&] { gdn::seq_order_body(p); });
    std::vector<int> order(offs.begin() + N + 1, offs.end()), want(N);
    for (int b = 0; b < N; ++b) want[b] = b;
    auto nch = [&](int b) { return offs[b + 1] - offs[b]; };  // by chunk count, longest first, ties by index
    std::stable_sort(want.begin(), want.end(), [&](int a, int b) { return nch(a) > nch(b); });
    check(order == want, "seq_order_body: the sequences by chunk count, longest first");
    printf("  FLAG_SEQ_ORDER block order:");
    for (int b : order) printf(" %d (len %d)", b, lens[b]);
    printf("\n");
    const ScanOut so = run_scan("w4gx FLAG_SEQ_ORDER", g4, 128, S4::bytes, true,
                                [&] { gdn::fwd_slim_scan_body<IOT, K, V, 4, gdn::SLIM_W4_STAGES, false, true, true>(fp); });
    bitwise("w4gx FLAG_SEQ_ORDER bitwise w4gx", so, w4gx);
    p.flags = flags;
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t_start).count();
  printf("  case %d: %.1f s\n", idx, secs);
}

int main(int argc, char** argv) {
  setvbuf(stdout, nullptr, _IOLBF, 0);
  const bool quick = argc > 1 && std::string(argv[1]) == "quick";
  const int only = argc > 1 && !quick ? atoi(argv[1]) : -1;
  auto want = [&](int i) { return only < 0 ? (!quick || i < 2) : only == i; };
  const auto t0 = std::chrono::steady_clock::now();
  const int L2S = gdn::FLAG_L2NORM | gdn::FLAG_BETA_SIGMOID;
  if (want(0)) run_case<gdn::gdn_bf16>(0, "bf16 l2norm", 2, 2, L2S, {130, 64, 0, 5}, false);
  if (want(1)) run_case<gdn::gdn_f16>(1, "fp16 GQA l2norm", 1, 2, L2S, {65, 190}, true);
  if (want(2)) run_case<gdn::gdn_bf16>(2, "bf16 GQA no l2norm", 1, 2, 0, {200, 3}, false);
  if (want(3)) run_case<gdn::gdn_f16>(3, "fp16 no l2norm", 2, 2, gdn::FLAG_BETA_SIGMOID, {256, 100}, false);
  // Slow decay (gates in [log 0.995, 0]): the state carries across many chunks.
  if (want(4)) run_case<gdn::gdn_bf16>(4, "bf16 l2norm slow decay", 2, 2, L2S, {900, 250, 0, 40}, false, 0.995);
  if (want(5)) run_case<gdn::gdn_f16>(5, "fp16 GQA slow decay", 1, 2, gdn::FLAG_BETA_SIGMOID, {700, 130}, true, 0.995);
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  printf("%s (%.1f s)\n", g_fails ? "fwd gx host emulation: FAILED" : "fwd gx host emulation: all checks ok", secs);
  return g_fails ? 1 : 0;
}
