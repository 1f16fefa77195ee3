// dnnp_async.cuh: Hopper (sm_90a) asynchronous building blocks for a warp-specialized kernel
// (session 29, helper m029; milestone M0 of td29's token-stage design, bench/gdn_results.md
// "Session 29 (helper td29 ...)" §4): shared-memory mbarriers, cp.async / bulk copies that signal
// an mbarrier, named barriers, setmaxnreg and elect.sync. Each is one small PTX wrapper.
//
// Contract:
//  - An mbarrier is a 64-bit word in shared memory (8-byte aligned). mbar_init(bar, count) by one
//    thread, then mbar_init_fence() by that thread and a block barrier before any other use. A
//    phase completes when `count` arrivals (arrive, arrive_expect_tx, cp.async's arrive.noinc,
//    each counting one) have happened AND the phase's transaction count (bytes announced by
//    arrive_expect_tx minus bytes completed by bulk copies on it) is zero; the barrier then moves
//    to the next phase (parity flips) and the pending count is reset to `count`.
//  - mbar_wait(bar, parity) blocks until the phase of parity `parity` has completed, i.e. until the
//    barrier's current phase parity differs from `parity`. The ring idiom: a consumer waits
//    full[s] with parity p starting at 0, a producer waits empty[s] with parity p ^ 1 (a fresh
//    barrier counts as having completed the phase "before" phase 0, so the first wait passes); p
//    flips each time the ring wraps.
//  - mbar_test_wait(bar, parity): whether that phase has completed, without blocking (test_wait:
//    acquire at CTA scope when true, as a completed wait); a thread that saw true may read what
//    the phase published without waiting again.
//  - cp_async_mbar_arrive_noinc(bar): an arrive on `bar` triggered once every cp.async issued
//    before it by this thread has landed (.noinc: it counts against the init count, so `count`
//    must include one per signalling thread). No cp.async.commit / wait_group is needed for these.
//  - bulk_copy_g2s(dst, src, bytes, bar): a 1D TMA copy (cp.async.bulk, 16-byte aligned, bytes a
//    multiple of 16) completing `bytes` transactions on `bar`; pair it with
//    mbar_arrive_expect_tx(bar, bytes) by the issuing thread. Global data written by generic
//    stores of another kernel / block before a flag needs fence_proxy_async_global() after the
//    flag's acquire (design §4, M3).
//  - Data landed in shared memory by cp.async (or a bulk copy) and observed through an mbarrier
//    wait is visible to the waiting thread's generic loads; before a wgmma reads it (async proxy),
//    the waiting threads issue dnnp::fence_proxy_async_shared() (dnnp_wgmma.cuh) after the wait,
//    as for st.shared data (the self-test bench/dnnp_async_selftest.cu does so).
//  - named_bar_sync(id, n) / named_bar_arrive(id, n): bar.sync / bar.arrive on hardware barrier id
//    (1..15; 0 is __syncthreads') with n threads (a multiple of 32) participating.
//  - setmaxnreg_inc<N>() / setmaxnreg_dec<N>(): the whole warpgroup executes it (.sync.aligned);
//    N in [24, 256], a multiple of 8; the kernel's register allocation must leave room.
//  - elect_one(): true in exactly one lane of a fully active warp (elect.sync with mask ~0).
// Under GDN_HOST_EMU nothing is declared here: bench/gdn_wgmma_emu.h supplies the same functions
// on the emulation's threads (blocking mbarrier waits, the named barriers of gdn_host_emu.h).
#pragma once

#include "dnnp_int.cuh"

namespace dnnp {

#ifndef GDN_HOST_EMU
// The shared-window address of a pointer into shared memory.
__device__ __forceinline__ uint32_t smem_u32(const void* p) { return static_cast<uint32_t>(__cvta_generic_to_shared(p)); }
// Initializes the mbarrier at `bar` with `count` expected arrivals per phase (one thread).
__device__ __forceinline__ void mbar_init(uint64_t* bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(smem_u32(bar)), "r"(count) : "memory");
}
// Makes the initializing thread's mbar_init visible to the async proxy (then a block barrier).
__device__ __forceinline__ void mbar_init_fence() { asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory"); }
// One arrival on `bar` (release, CTA scope).
__device__ __forceinline__ void mbar_arrive(uint64_t* bar) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.shared::cta.b64 st, [%0];\n}\n" ::"r"(smem_u32(bar)) : "memory");
}
// One arrival on `bar` that also announces `bytes` of transactions for the current phase.
__device__ __forceinline__ void mbar_arrive_expect_tx(uint64_t* bar, uint32_t bytes) {
  asm volatile("{\n .reg .b64 st;\n mbarrier.arrive.expect_tx.shared::cta.b64 st, [%0], %1;\n}\n" ::"r"(smem_u32(bar)),
               "r"(bytes)
               : "memory");
}
// Whether the phase of parity `parity` has completed (one try_wait; it may block for a while).
__device__ __forceinline__ bool mbar_try_wait(uint64_t* bar, uint32_t parity) {
  uint32_t ok;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.try_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(smem_u32(bar)), "r"(parity)
      : "memory");
  return ok != 0;
}
// Whether the phase of parity `parity` has completed, without blocking (acquire, CTA scope, when true).
__device__ __forceinline__ bool mbar_test_wait(uint64_t* bar, uint32_t parity) {
  uint32_t ok;
  asm volatile(
      "{\n .reg .pred p;\n mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(ok)
      : "r"(smem_u32(bar)), "r"(parity)
      : "memory");
  return ok != 0;
}
// Blocks until the phase of parity `parity` of `bar` has completed (acquire, CTA scope).
__device__ __forceinline__ void mbar_wait(uint64_t* bar, uint32_t parity) {
  while (!mbar_try_wait(bar, parity)) {
  }
}
// An arrival on `bar` once all of this thread's earlier cp.async copies have landed (.noinc).
__device__ __forceinline__ void cp_async_mbar_arrive_noinc(uint64_t* bar) {
  asm volatile("cp.async.mbarrier.arrive.noinc.shared::cta.b64 [%0];\n" ::"r"(smem_u32(bar)) : "memory");
}
// cp.async of 16 bytes global → shared (.cg, L2 only), to be signalled by cp_async_mbar_arrive_noinc.
__device__ __forceinline__ void cp_async16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(smem_u32(dst)), "l"(src) : "memory");
}
// 1D bulk copy (TMA) of `bytes` global → shared completing its bytes as transactions on `bar`.
__device__ __forceinline__ void bulk_copy_g2s(void* dst, const void* src, uint32_t bytes, uint64_t* bar) {
  asm volatile("cp.async.bulk.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1], %2, [%3];\n" ::"r"(smem_u32(dst)),
               "l"(src), "r"(bytes), "r"(smem_u32(bar))
               : "memory");
}
// Orders earlier generic-proxy global accesses before later async-proxy ones (bulk copies).
__device__ __forceinline__ void fence_proxy_async_global() { asm volatile("fence.proxy.async.global;\n" ::: "memory"); }
// bar.sync on named barrier `id` with `n` participating threads.
__device__ __forceinline__ void named_bar_sync(int id, int n) { asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(n) : "memory"); }
// bar.arrive on named barrier `id` with `n` participating threads (does not wait).
__device__ __forceinline__ void named_bar_arrive(int id, int n) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(n) : "memory");
}
// Raises this warpgroup's per-thread register limit to N (blocks until registers are free).
template <int N>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(N));
}
// Lowers this warpgroup's per-thread register limit to N, releasing the rest.
template <int N>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(N));
}
// True in exactly one lane of the (fully active) warp: elect.sync with mask 0xffffffff.
__device__ __forceinline__ bool elect_one() {
  uint32_t pred;
  asm volatile(
      "{\n .reg .b32 lane;\n .reg .pred p;\n elect.sync lane|p, 0xffffffff;\n selp.u32 %0, 1, 0, p;\n}\n"
      : "=r"(pred));
  return pred != 0;
}
#endif

}  // namespace dnnp
