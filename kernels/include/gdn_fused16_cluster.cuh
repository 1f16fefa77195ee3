// gdn_fused16_cluster.cuh: the thread-block-cluster primitives of the one-pass forward's cluster
// forms (kernels/include/gdn_fwd_fused16.cuh, session 52): the two value halves of a (sequence,
// head) run as one 2-CTA cluster, each CTA builds every other chunk's factors and pushes them into
// its peer's stage.
//
// Contract (sm_90, a launch with cluster dimensions (2, 1, 1)):
//  - f16c_peer(p, rank): the shared::cluster address of the object at `p` (this CTA's shared
//    memory) in CTA `rank` of the cluster (mapa). The type F16cAddr is that address.
//  - f16c_st_async(addr, v, bar): a 16-byte store into the peer's shared memory at `addr` that
//    completes 16 transaction bytes on the peer's mbarrier `bar` (both shared::cluster addresses;
//    st.async ... mbarrier::complete_tx::bytes). The peer announces the bytes by
//    mbar_arrive_expect_tx on that barrier's phase; the data is visible to a thread that observes
//    the phase complete (dnnp::mbar_wait).
//  - f16c_st(addr, v): a plain 16-byte store into the peer's shared memory (st.shared::cluster),
//    published by this thread's next f16c_arrive_peer.
//  - f16c_arrive_peer(bar): one arrival on the peer's mbarrier `bar`, with the instruction's
//    default semantics (release at CTA scope), as CUTLASS's cluster pipelines arrive remotely: this
//    thread's earlier shared-memory reads of the stage are done before the peer may refill it.
//    Cluster scope (.release.cluster, and .acquire.cluster on the waits) compiles to a
//    MEMBAR.ALL.GPU and an L1 invalidation per chunk and made the forms 1.7x slower (session 52);
//    the waits on a cluster form's barriers are dnnp::mbar_wait.
//  - f16c_add(addr, bytes): the address `bytes` further.
//  - fused16_dyn_smem(): the block's dynamic shared memory (the emulation's: its CTA's).
//  - f16c_cluster_sync(): barrier.cluster (arrive.release, wait.acquire) by every thread of both
//    CTAs: after the mbarriers' initialisation (with mbar_init_fence) before any remote use, and
//    before a CTA exits while its peer may still store to or arrive on its shared memory.
//  - f16c_box_multicast(dst, map, c0, c1, c2, bar): one 3-D box of `map` (a dnnp::TmaDesc in
//    parameter space, dnnp_tma.cuh) at element coordinates (c0, c1, c2) into `dst` of both CTAs
//    of the pair (the same shared-memory offset; 1024-byte aligned under the 128-byte swizzle), its
//    bytes completed as transactions on each CTA's mbarrier at `bar`'s offset
//    (cp.async.bulk.tensor ... multicast::cluster, mask 0b11). Each CTA announces the bytes it
//    receives on its own barrier's phase (mbar_arrive_expect_tx); the issuing CTA must know the
//    peer is done with `dst`'s previous contents (the fused16 TQ forms: the stage's empty barrier
//    counts both CTAs' chains).
// Under GDN_HOST_EMU these are declared only: bench/gdn_fused16_host_emu.cpp defines them on the
// emulation's threads (two CTAs' shared memories side by side, the mbarrier side table; the box
// from the emulation's own map encoding).
#pragma once

#include "dnnp_async.cuh"
#include "dnnp_tma.cuh"

namespace gdn {

#ifndef GDN_HOST_EMU
using F16cAddr = uint32_t;

__device__ __forceinline__ unsigned char* fused16_dyn_smem() {
  extern __shared__ __align__(16) unsigned char smem[];
  return smem;
}

__device__ __forceinline__ F16cAddr f16c_add(F16cAddr a, int bytes) { return a + static_cast<uint32_t>(bytes); }

__device__ __forceinline__ F16cAddr f16c_peer(const void* p, uint32_t rank) {
  uint32_t r;
  asm volatile("mapa.shared::cluster.u32 %0, %1, %2;\n" : "=r"(r) : "r"(dnnp::smem_u32(p)), "r"(rank));
  return r;
}

__device__ __forceinline__ void f16c_st_async(F16cAddr addr, uint4 v, F16cAddr bar) {
  asm volatile("st.async.shared::cluster.mbarrier::complete_tx::bytes.v4.b32 [%0], {%1, %2, %3, %4}, [%5];\n" ::"r"(addr),
               "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "r"(bar)
               : "memory");
}

__device__ __forceinline__ void f16c_st(F16cAddr addr, uint4 v) {
  asm volatile("st.shared::cluster.v4.b32 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w) : "memory");
}

__device__ __forceinline__ void f16c_arrive_peer(F16cAddr bar) {
  asm volatile("mbarrier.arrive.shared::cluster.b64 _, [%0];\n" ::"r"(bar) : "memory");
}

__device__ __forceinline__ void f16c_cluster_sync() {
  asm volatile("barrier.cluster.arrive.release.aligned;\nbarrier.cluster.wait.acquire.aligned;\n" ::: "memory");
}

__device__ __forceinline__ void f16c_box_multicast(void* dst, const dnnp::TmaDesc* map, int c0, int c1, int c2, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes.multicast::cluster [%0], [%1, {%2, %3, %4}], "
      "[%5], %6;\n" ::"r"(dnnp::smem_u32(dst)),
      "l"(dnnp::tma_addr(map)), "r"(c0), "r"(c1), "r"(c2), "r"(dnnp::smem_u32(bar)), "h"(static_cast<uint16_t>(3))
      : "memory");
}
#else
using F16cAddr = void*;
unsigned char* fused16_dyn_smem();
inline F16cAddr f16c_add(F16cAddr a, int bytes) { return static_cast<unsigned char*>(a) + bytes; }
F16cAddr f16c_peer(const void* p, uint32_t rank);
void f16c_st_async(F16cAddr addr, uint4 v, F16cAddr bar);
inline void f16c_st(F16cAddr addr, uint4 v) { memcpy(addr, &v, 16); }
void f16c_arrive_peer(F16cAddr bar);
void f16c_cluster_sync();
void f16c_box_multicast(void* dst, const dnnp::TmaDesc* map, int c0, int c1, int c2, uint64_t* bar);
#endif

}  // namespace gdn
