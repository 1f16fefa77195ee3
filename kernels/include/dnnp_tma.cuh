// TEMP STUB (helper tp36): the interface the lead lands on main ("cuda: tensor maps ..."); reverted
// before merging main.
#pragma once
#include <cstdint>
namespace dnnp {
struct alignas(64) TmaDesc {
  unsigned long long opaque[16];
};
#ifndef GDN_HOST_EMU
__device__ __forceinline__ void tma_prefetch(const TmaDesc* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}
__device__ __forceinline__ void tma_load_3d(void* smem_dst, const TmaDesc* map, int c0, int c1, int c2, uint64_t* mbar) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.tile.mbarrier::complete_tx::bytes [%0], [%1, {%2, %3, %4}], [%5];\n" ::"r"(
          static_cast<uint32_t>(__cvta_generic_to_shared(smem_dst))),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(c0), "r"(c1), "r"(c2), "r"(static_cast<uint32_t>(__cvta_generic_to_shared(mbar)))
      : "memory");
}
#endif
}  // namespace dnnp
