// dnnp_tma.cuh: Hopper (sm_90a) tensor-map (TMA) copies between global and shared memory
// (session 36). The host encodes each map (src/cuda/tma.rs, `TensorMap`; the GDN forward's maps:
// src/engines/gdn/tma_maps.rs) and passes it inside the kernel's parameter block.
//
// Contract:
//  - A TmaDesc is a CUtensorMap (128 bytes, 128-byte aligned as CUDA 13's cuda.h declares it) encoded by cuTensorMapEncodeTiled. It
//    must live in parameter space (a member of a `const __grid_constant__` kernel parameter), in
//    constant memory or in global memory; never copy it to a local variable (the copy's address
//    is not a valid map address).
//  - Coordinates are element indices, innermost dimension first (c0 = element within the row, c1 =
//    the next dimension, ...), signed: a box partly outside the tensor reads zeros there (OOB fill)
//    and writes nothing there.
//  - tma_load_3d(dst, map, c0, c1, c2, bar): one box global -> shared, completing the box's bytes
//    as transactions on `bar` (dnnp_async.cuh's mbarriers: the issuing thread announces them with
//    mbar_arrive_expect_tx before or after the copy, in the same phase). `dst` is 128-byte aligned,
//    1024-byte aligned with the 128-byte swizzle. Data observed through the mbarrier wait is
//    visible to generic loads; before a wgmma reads it, fence_proxy_async_shared()
//    (dnnp_wgmma.cuh) is NOT needed (the copy itself is in the async proxy), but generic stores
//    into the same tile (e.g. zeroing rows past a sequence's end) need that fence before the wgmma.
//  - tma_store_3d(map, c0, c1, c2, src): one box shared -> global in the bulk-async group of the
//    issuing thread. The shared-memory writes it reads must be ordered before it: every writing
//    thread issues fence_proxy_async_shared(), then a barrier over the writers, then ONE thread
//    issues the store. tma_store_commit() closes the group; tma_store_wait_read<N>() returns once at
//    most N of this thread's committed groups still read their shared source (then the source may
//    be rewritten, after a barrier telling the other writers so); tma_store_wait<N>() once at most
//    N are still writing global memory (before the kernel relies on the stores' completion).
//  - tma_prefetch(map): brings the map into the descriptor cache (optional, once per block).
// Under GDN_HOST_EMU only the TmaDesc type is declared (the CPU emulations run no TMA kernel).
#pragma once

#include "dnnp_int.cuh"

namespace dnnp {

// A CUtensorMap as the driver encodes it (opaque, 128 bytes, 128-byte aligned).
struct alignas(128) TmaDesc {
  unsigned long long opaque[16];
};
static_assert(sizeof(TmaDesc) == 128, "CUtensorMap is 128 bytes");

#ifndef GDN_HOST_EMU
// The generic address of a map (the operand form cp.async.bulk.tensor takes).
__device__ __forceinline__ uint64_t tma_addr(const TmaDesc* map) { return reinterpret_cast<uint64_t>(map); }

// Brings `map` into the descriptor cache.
__device__ __forceinline__ void tma_prefetch(const TmaDesc* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(tma_addr(map)) : "memory");
}

// One 3-D box global -> shared at (c0, c1, c2), its bytes completed as transactions on `bar`.
__device__ __forceinline__ void tma_load_3d(void* dst, const TmaDesc* map, int c0, int c1, int c2, uint64_t* bar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], "
      "[%5];\n" ::"r"(static_cast<uint32_t>(__cvta_generic_to_shared(dst))),
      "l"(tma_addr(map)), "r"(c0), "r"(c1), "r"(c2), "r"(static_cast<uint32_t>(__cvta_generic_to_shared(bar)))
      : "memory");
}

// One 3-D box shared -> global at (c0, c1, c2), in this thread's current bulk-async group.
__device__ __forceinline__ void tma_store_3d(const TmaDesc* map, int c0, int c1, int c2, const void* src) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.tile.bulk_group [%0, {%1, %2, %3}], [%4];\n" ::"l"(
                   tma_addr(map)),
               "r"(c0), "r"(c1), "r"(c2), "r"(static_cast<uint32_t>(__cvta_generic_to_shared(src)))
               : "memory");
}

// Closes this thread's current bulk-async group (the stores issued since the last commit).
__device__ __forceinline__ void tma_store_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }

// Waits until at most N of this thread's committed groups still read their shared source.
template <int N>
__device__ __forceinline__ void tma_store_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}

// Waits until at most N of this thread's committed groups are still in flight (writes done).
template <int N>
__device__ __forceinline__ void tma_store_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
#endif

}  // namespace dnnp
