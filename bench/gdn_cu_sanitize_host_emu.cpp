// gdn_cu_sanitize_host_emu.cpp: CPU check of gdn::cu_sanitize_body (kernels/include/gdn_fwd.cuh,
// session 43), the first step of every GDN plan's first kernel: the caller's cu_seqlens copied
// into the workspace as out[i] = min(T, max(0, cu[0], ..., cu[i])), which every later kernel reads.
//
// The body runs on the block emulation of gdn_host_emu.h (1024 threads, real barriers, warp
// shuffles) and is compared with a scalar loop, for int32 and int64 offsets, at sequence counts
// around the block's run boundaries (0, 1, 31 .. 33, 1023 .. 1025, 2047, 3000, 5000) and totals T
// from 0 to beyond 2^31:
//  - well-formed offsets (0 <= cu[0] <= ... <= cu[N] <= T) are copied unchanged;
//  - malformed ones (random signs and sizes, decreasing runs, past T, INT_MIN / INT_MAX, ±2^62)
//    give exactly the scalar loop's values, which lie in [0, T], never decrease, and whose chunk
//    count sum_b ceil((out[b+1] - out[b]) / 64) is at most T / 64 + N (the workspace's bound);
//  - nothing past out[N] is written (a guard word after it is checked).
//
// Build and run (about 90 s on two cores: 780 launches of 1,024 emulated threads):
//   g++ -std=c++20 -O2 -fno-strict-aliasing -pthread -Ikernels/include -Ibench \
//       bench/gdn_cu_sanitize_host_emu.cpp -o /tmp/cu_sanitize && /tmp/cu_sanitize
// Also state_rows_sanitize_body (session 44): 25 pools × index counts, each index inside, just
// outside, negative or INT_MIN / INT_MAX.
// A mutation check: `GDN_CU_MUTANT=1` feeds the body a source whose total is T - 1; the check must
// then fail on the cases whose last offset is T.
#include "gdn_host_emu.h"

#include <climits>
#include <cstdint>
#include <cstdio>
#include <string>

namespace {

long long reference_at(const std::vector<long long>& cu, long long t, size_t i) {
  long long run = 0;
  for (size_t j = 0; j <= i; ++j) run = std::max(run, std::min(t, std::max(0LL, cu[j])));
  return run;
}

unsigned long long rng = 0x9e3779b97f4a7c15ULL;
long long next(long long lo, long long hi) {  // uniform in [lo, hi]
  rng ^= rng << 13;
  rng ^= rng >> 7;
  rng ^= rng << 17;
  const unsigned long long span = static_cast<unsigned long long>(hi - lo) + 1;
  return lo + static_cast<long long>(span == 0 ? rng : rng % span);
}

struct Case {
  std::string name;
  std::vector<long long> cu;
  long long t;
  bool well_formed;
};

std::vector<long long> well_formed(int n, long long t) {
  std::vector<long long> cu(n + 1);
  cu[0] = n > 0 ? next(0, t / (n + 1)) : next(0, t);
  for (int i = 1; i <= n; ++i) cu[i] = std::min(t, cu[i - 1] + next(0, 2 * (t / (n + 1)) + 1));
  if (n > 0 && next(0, 1)) cu[n] = t;  // often the last offset is exactly T
  return cu;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  const int ns[] = {0, 1, 2, 31, 32, 33, 1023, 1024, 1025, 2047, 3000, 5000};
  const long long ts[] = {0, 1, 100, 64 * 1000 + 17, 1LL << 20, INT_MAX, (1LL << 33) + 5};
  for (int n : ns)
    for (long long t : ts) {
      const std::string at = "n=" + std::to_string(n) + " T=" + std::to_string(t);
      out.push_back({"well-formed " + at, well_formed(n, t), t, true});
      std::vector<long long> bad(n + 1);
      for (auto& x : bad) x = next(-2 * t - 5, 2 * t + 5);
      out.push_back({"random " + at, bad, t, false});
      auto dec = well_formed(n, t);
      std::reverse(dec.begin(), dec.end());
      out.push_back({"decreasing " + at, dec, t, n == 0 || dec.front() == dec.back()});
      auto past = well_formed(n, t);
      for (int i = n / 2; i <= n; ++i) past[i] += t + 1 + i;
      out.push_back({"past T " + at, past, t, false});
      std::vector<long long> extreme(n + 1);
      for (int i = 0; i <= n; ++i) {
        const long long pick[] = {INT_MIN, INT_MAX, -(1LL << 62), 1LL << 62, -1, 0, t};
        extreme[i] = pick[next(0, 6)];
      }
      out.push_back({"extreme " + at, extreme, t, false});
    }
  return out;
}

// Runs cu_sanitize_body on `c` as int64 (i64) or int32 (the values truncated to 32 bits, as a
// caller's int32 array holds them); returns the number of mismatches (printing the first).
int run(const Case& c, bool i64, bool mutant) {
  const int n = static_cast<int>(c.cu.size()) - 1;
  std::vector<long long> src64 = c.cu;
  std::vector<int> src32(c.cu.size());
  for (size_t i = 0; i < c.cu.size(); ++i) src32[i] = static_cast<int>(static_cast<uint32_t>(c.cu[i]));
  std::vector<long long> as_read(c.cu.size());
  for (size_t i = 0; i < c.cu.size(); ++i) as_read[i] = i64 ? src64[i] : static_cast<long long>(src32[i]);
  constexpr long long guard = 0x5a5a5a5a5a5a5a5aLL;
  std::vector<long long> out(c.cu.size() + 1, guard);
  gdn::CuSource src{};
  src.cu_seqlens = i64 ? static_cast<const void*>(src64.data()) : static_cast<const void*>(src32.data());
  src.cu_seqlens_i64 = i64 ? 1 : 0;
  src.total_t = mutant ? c.t - 1 : c.t;
  launch({1, 1, 1}, gdn::OFFSETS_THREADS, [&] { gdn::cu_sanitize_body(src, n, out.data()); });
  int bad = 0;
  long long chunks = 0;
  for (int i = 0; i <= n; ++i) {
    const long long want = reference_at(as_read, c.t, i);
    if (out[i] != want && bad++ == 0)
      printf("  MISMATCH %s (%s) at %d: got %lld, want %lld\n", c.name.c_str(), i64 ? "int64" : "int32", i,
             out[i], want);
    if (i > 0) chunks += (out[i] - out[i - 1] + 63) / 64;
  }
  const bool unchanged_input = i64 || std::all_of(c.cu.begin(), c.cu.end(), [](long long x) { return x == static_cast<int>(x); });
  if (c.well_formed && unchanged_input)
    for (int i = 0; i <= n; ++i)
      if (out[i] != c.cu[i] && bad++ == 0)
        printf("  CHANGED %s (%s) at %d: got %lld, caller's %lld\n", c.name.c_str(), i64 ? "int64" : "int32", i,
               out[i], c.cu[i]);
  if (chunks > c.t / 64 + n && bad++ == 0)
    printf("  CHUNKS %s: %lld chunks > T/64 + N = %lld\n", c.name.c_str(), chunks, c.t / 64 + n);
  if (out[n + 1] != guard && bad++ == 0) printf("  OVERRUN %s: out[N + 1] written\n", c.name.c_str());
  return bad;
}

// Runs state_rows_sanitize_body on n random pool indices (inside, just outside, negative,
// INT_MIN / INT_MAX) for a pool of `pool_rows`: every index inside [0, pool_rows) copied, every
// other −1, nothing past out[n − 1] written; without a source nothing at all. Returns the number
// of mismatches (printing the first).
int run_state_rows(int n, int pool_rows) {
  std::vector<int> idx(n);
  for (auto& x : idx) {
    const long long pick[] = {next(0, pool_rows > 0 ? pool_rows - 1 : 0), next(-3, -1), pool_rows,
                              static_cast<long long>(pool_rows) + next(1, 3), INT_MIN, INT_MAX};
    x = static_cast<int>(std::clamp<long long>(pick[next(0, 5)], INT_MIN, INT_MAX));
  }
  constexpr int guard = 0x5a5a5a5a;
  std::vector<int> out(n + 1, guard);
  gdn::StateSource src{idx.data(), pool_rows, 0};
  launch({1, 1, 1}, gdn::OFFSETS_THREADS, [&] { gdn::state_rows_sanitize_body(src, n, out.data()); });
  int bad = 0;
  for (int i = 0; i < n; ++i) {
    const int want = idx[i] >= 0 && idx[i] < pool_rows ? idx[i] : -1;
    if (out[i] != want && bad++ == 0)
      printf("  STATE ROWS n=%d pool=%d at %d: index %d gave %d, want %d\n", n, pool_rows, i, idx[i], out[i], want);
  }
  if (out[n] != guard && bad++ == 0) printf("  STATE ROWS n=%d: out[N] written\n", n);
  std::vector<int> none(n + 1, guard);
  gdn::StateSource null_src{nullptr, pool_rows, 0};
  launch({1, 1, 1}, gdn::OFFSETS_THREADS, [&] { gdn::state_rows_sanitize_body(null_src, n, none.data()); });
  if (std::any_of(none.begin(), none.end(), [](int x) { return x != guard; }) && bad++ == 0)
    printf("  STATE ROWS n=%d: written without a pool\n", n);
  return bad;
}

}  // namespace

int main() {
  const bool mutant = std::getenv("GDN_CU_MUTANT") != nullptr;
  int failed = 0, ran = 0;
  for (const Case& c : cases())
    for (bool i64 : {true, false}) {
      if (!i64 && c.t > INT_MAX) continue;  // int32 offsets address at most 2^31 - 1 rows
      ++ran;
      if (run(c, i64, mutant) > 0) ++failed;
    }
  int rows_ran = 0, rows_failed = 0;
  for (int n : {1, 31, 1024, 1025, 5000})
    for (int pool : {0, 1, 7, 1000, INT_MAX}) {
      ++rows_ran;
      if (run_state_rows(n, pool) > 0) ++rows_failed;
    }
  printf("gdn_cu_sanitize_host_emu: state rows %d cases, %d failed\n", rows_ran, rows_failed);
  failed += rows_failed;
  printf("gdn_cu_sanitize_host_emu: %d cases, %d failed%s\n", ran, failed, mutant ? " (mutant)" : "");
  printf("%s\n", failed == 0 ? "all ok" : "FAILED");
  return failed == 0 ? 0 : 1;
}
