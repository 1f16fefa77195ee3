// dnnp_wgmma.cuh: a minimal wrapper of Hopper's warpgroup MMA (sm_90a, PTX wgmma.*), session 23
// (helper wg23; session 24, wgx24: N = 128 and MN-major B). Only what the slim scans use: the RS
// form (A from registers, B from shared memory through a matrix descriptor) of m64n64k16 and
// m64n128k16 with fp32 accumulators and 16-bit inputs (bf16 or f16), B K-major (tnspB = 0) or
// MN-major (tnspB = 1) by descriptor: the no-swizzle canonical layout below or the 128-byte
// swizzle (wgmma_desc's swz = 1; the scans' layout: gdn_fwd_slim.cuh, slim_wg_elem).
//
// The canonical no-swizzle K-major layout of a B operand (N x K, K contiguous): core matrices of
// 8 rows (N) x 16 bytes (8 elements of K), each 128 contiguous bytes (row r at r · 16 B); the
// descriptor's leading byte offset (LBO) is the distance between core matrices adjacent in K, its
// stride byte offset (SBO) the distance between core matrices adjacent in N (PTX ISA, "Matrix
// Descriptor Format": start address >> 4 in bits 0-13, LBO >> 4 in bits 16-29, SBO >> 4 in bits
// 32-45, base offset 0 in bits 49-51, swizzle mode 0 (none) in bits 62-63).
//
// A (64 x 16, registers): warp w of the warpgroup holds rows 16 w .. 16 w + 15 in mma.sync
// m16n8k16's A layout (a[0]: row l / 4, columns 2 (l % 4) + {0, 1}; a[1]: row + 8; a[2], a[3]:
// columns + 8). D (64 x 64, 32 fp32 per thread): warp w's rows 16 w ..; per n8 tile j the mma.sync
// C layout (d[4 j + 0, 1]: row l / 4, columns 8 j + 2 (l % 4) + {0, 1}; d[4 j + 2, 3]: row + 8).
//
// Ordering rules (PTX ISA, wgmma): wgmma_fence() before the first wgmma of a batch and after any
// register write of its A or accumulator registers; wgmma_commit() closes a batch;
// wgmma_wait<N>() waits until at most N batches are pending; wgmma_fence_operand() pins an
// accumulator read after the wait (and a write before the fence) for the compiler. Shared memory
// written through the generic proxy (st.shared, cp.async) needs fence_proxy_async_shared() by the
// writing thread after the write completed, then a barrier, before a wgmma reads it.
#pragma once

#include "dnnp_int.cuh"

namespace dnnp {

// A shared-memory matrix descriptor: byte address `smem_addr` (shared window, 16-byte aligned),
// `lbo` and `sbo` in bytes (multiples of 16, < 2^18), swizzle mode `swz` (0 none, 1 128-byte,
// 2 64-byte, 3 32-byte; a swizzled operand's pattern atoms 1024-byte aligned: base offset 0).
__host__ __device__ __forceinline__ uint64_t wgmma_desc(uint32_t smem_addr, uint32_t lbo, uint32_t sbo,
                                                        uint32_t swz = 0) {
  uint64_t d = 0;
  d |= static_cast<uint64_t>((smem_addr >> 4) & 0x3FFFu);
  d |= static_cast<uint64_t>((lbo >> 4) & 0x3FFFu) << 16;
  d |= static_cast<uint64_t>((sbo >> 4) & 0x3FFFu) << 32;
  d |= static_cast<uint64_t>(swz & 3u) << 62;
  return d;  // base offset 0
}
// `desc` with its start address advanced by `bytes` (a multiple of 16). The start address field is
// address >> 4 in the descriptor's low 14 bits, so the sum is exact while the advanced address
// stays below 2^18, which every shared-memory address on sm_90 does (at most 228 KB). A loop's
// descriptors built as one base plus offsets cost one 64-bit add each, not the field's shift, mask
// and merge per operand (session 40 in the backward's token tile, session 41 in the scans and preps).
__host__ __device__ __forceinline__ uint64_t wgmma_desc_advance(uint64_t desc, uint32_t bytes) {
  return desc + (bytes >> 4);
}
// The descriptor of `base + off`: built whole from the sum, or (ADVANCE) as `base`'s descriptor
// advanced by `off`. The same value; the two forms only give ptxas different code to schedule,
// and which is faster was measured per kernel (gdn_fwd_slim.cuh's SlimDescForm).
template <bool ADVANCE>
__host__ __device__ __forceinline__ uint64_t wgmma_desc_at(uint32_t base, uint32_t off, uint32_t lbo, uint32_t sbo,
                                                           uint32_t swz) {
  return ADVANCE ? wgmma_desc_advance(wgmma_desc(base, lbo, sbo, swz), off) : wgmma_desc(base + off, lbo, sbo, swz);
}
// The 128-byte swizzle, K-major (session 23, wg23's w4gs): rows of 128 B (64 16-bit keys), the
// 16-byte chunk j of row r at chunk j ^ (r & 7) of its row, 8 rows = one 1024-byte atom; SBO =
// 1024 B (next 8 rows), LBO unused (16); a k16 step inside the row at +32 B of the start address.

#ifndef GDN_HOST_EMU
__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
__device__ __forceinline__ void fence_proxy_async_shared() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void wgmma_fence_operand(float& r) { asm volatile("" : "+f"(r)::"memory"); }
// wgmma_fence_operand on every register of an accumulator array (N n8 tiles of 4 fp32 each).
template <int N>
__device__ __forceinline__ void wgmma_fence_frags(float (&r)[N][4]) {
#pragma unroll
  for (int nt = 0; nt < N; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) wgmma_fence_operand(r[nt][e]);
}
// Zeroes an accumulator array before a wgmma chain that starts from it (scale-d 1), each
// register pinned as it is written (wgmma_fence_operand).
template <int N>
__device__ __forceinline__ void wgmma_zero_frags(float (&r)[N][4]) {
#pragma unroll
  for (int nt = 0; nt < N; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      r[nt][e] = 0.f;
      wgmma_fence_operand(r[nt][e]);
    }
}
// Traps unless the dynamic shared memory at `smem` is 1024-byte aligned: the 128-byte swizzle's
// atoms (a kernel whose swizzled tiles sit at multiples of 1,024 bytes from it checks this once).
__device__ __forceinline__ void trap_unless_swizzle_aligned(const void* smem) {
  if (static_cast<uint32_t>(__cvta_generic_to_shared(smem)) & 1023u) __trap();
}

// d (N / 2 fp32 per thread: N / 8 n8 tiles in the accumulator layout above) += A (4 registers,
// 16-bit pairs) · B (descriptor), m64nNk16 at N = 64 and 128, scale-d 1; TY: "bf16" or "f16";
// B's major-ness a template argument TNSPB (PTX imm-trans-b: 0 K-major, 1 MN-major, "transposed";
// 16-bit inputs only). Session 24 (helper wgx24): the MN-major 128-byte swizzle (cute's canonical
// GMMA MN layout B128, Swizzle<3,4,3> o ((8,n),(8,k)):((1,LBO),(8,SBO)) in 16-byte units): B
// stored [K][N] with N contiguous, 64 N-elements (128 B) per row, 8 K-rows = one 1024-byte atom
// (16-byte chunk j of row r at j ^ (r & 7)); SBO = the distance between 8-row K groups (1,024 B
// for consecutive rows), LBO = the distance between 64-wide N blocks (used only where N > 64); a
// k16 step at +2,048 B (16 rows) of the start address. Proved by bench/gdn_wgmma_selftest.cu.
// The `_zt` forms (session 41) start a chain: d = A · B with scale-d 0, the accumulators written
// only (early-clobber outputs, so none shares a register with A or the descriptor) — no zeroing
// moves before the chain's first k16 step (ptxas applies the same form by itself only where it
// can still see the zeros).
#define DNNP_WGMMA_M64N64K16_RS(NAME, TY, DC, SD)                                                                           \
  template <int TNSPB>                                                                                                      \
  __device__ __forceinline__ void NAME(float* d, const uint32_t* a, uint64_t desc_b) {                                      \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, " SD ", 0;\n"                                                          \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " "                                                \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                                                  \
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "                                       \
                 "{%32,%33,%34,%35}, %36, p, 1, 1, %37;\n}\n"                                                               \
                 : DC(d[0]), DC(d[1]), DC(d[2]), DC(d[3]), DC(d[4]), DC(d[5]), DC(d[6]), DC(d[7]),          \
                   DC(d[8]), DC(d[9]), DC(d[10]), DC(d[11]), DC(d[12]), DC(d[13]), DC(d[14]), DC(d[15]),    \
                   DC(d[16]), DC(d[17]), DC(d[18]), DC(d[19]), DC(d[20]), DC(d[21]), DC(d[22]), DC(d[23]),  \
                   DC(d[24]), DC(d[25]), DC(d[26]), DC(d[27]), DC(d[28]), DC(d[29]), DC(d[30]), DC(d[31])   \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "n"(TNSPB));                                    \
  }
DNNP_WGMMA_M64N64K16_RS(wgmma_m64n64k16_rs_bf16_t, "bf16", "+f", "1")
DNNP_WGMMA_M64N64K16_RS(wgmma_m64n64k16_rs_f16_t, "f16", "+f", "1")
DNNP_WGMMA_M64N64K16_RS(wgmma_m64n64k16_rs_bf16_zt, "bf16", "=&f", "0")
DNNP_WGMMA_M64N64K16_RS(wgmma_m64n64k16_rs_f16_zt, "f16", "=&f", "0")
#undef DNNP_WGMMA_M64N64K16_RS
// Session 57 (the one pass's WG chain, gdn_fwd_fused16.cuh): m64n32k16 RS, 16 fp32 per thread
// (4 n8 tiles), B K-major or MN-major by TNSPB; `_t` scale-d 1, `_zt` scale-d 0 (as above).
#define DNNP_WGMMA_M64N32K16_RS(NAME, TY, DC, SD)                                                                           \
  template <int TNSPB>                                                                                                      \
  __device__ __forceinline__ void NAME(float* d, const uint32_t* a, uint64_t desc_b) {                                      \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, " SD ", 0;\n"                                                          \
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32." TY "." TY " "                                                \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, "                                                \
                 "{%16,%17,%18,%19}, %20, p, 1, 1, %21;\n}\n"                                                               \
                 : DC(d[0]), DC(d[1]), DC(d[2]), DC(d[3]), DC(d[4]), DC(d[5]), DC(d[6]), DC(d[7]),          \
                   DC(d[8]), DC(d[9]), DC(d[10]), DC(d[11]), DC(d[12]), DC(d[13]), DC(d[14]), DC(d[15])     \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "n"(TNSPB));                                    \
  }
DNNP_WGMMA_M64N32K16_RS(wgmma_m64n32k16_rs_bf16_t, "bf16", "+f", "1")
DNNP_WGMMA_M64N32K16_RS(wgmma_m64n32k16_rs_f16_t, "f16", "+f", "1")
DNNP_WGMMA_M64N32K16_RS(wgmma_m64n32k16_rs_bf16_zt, "bf16", "=&f", "0")
DNNP_WGMMA_M64N32K16_RS(wgmma_m64n32k16_rs_f16_zt, "f16", "=&f", "0")
#undef DNNP_WGMMA_M64N32K16_RS
#define DNNP_WGMMA_M64N128K16_RS(NAME, TY, DC, SD)                                                                          \
  template <int TNSPB>                                                                                                      \
  __device__ __forceinline__ void NAME(float* d, const uint32_t* a, uint64_t desc_b) {                                      \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, " SD ", 0;\n"                                                          \
                 "wgmma.mma_async.sync.aligned.m64n128k16.f32." TY "." TY " "                                               \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                                                  \
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31,"                                         \
                 "%32,%33,%34,%35,%36,%37,%38,%39,%40,%41,%42,%43,%44,%45,%46,%47,"                                         \
                 "%48,%49,%50,%51,%52,%53,%54,%55,%56,%57,%58,%59,%60,%61,%62,%63}, "                                       \
                 "{%64,%65,%66,%67}, %68, p, 1, 1, %69;\n}\n"                                                               \
                 : DC(d[0]), DC(d[1]), DC(d[2]), DC(d[3]), DC(d[4]), DC(d[5]), DC(d[6]), DC(d[7]),          \
                   DC(d[8]), DC(d[9]), DC(d[10]), DC(d[11]), DC(d[12]), DC(d[13]), DC(d[14]), DC(d[15]),    \
                   DC(d[16]), DC(d[17]), DC(d[18]), DC(d[19]), DC(d[20]), DC(d[21]), DC(d[22]), DC(d[23]),  \
                   DC(d[24]), DC(d[25]), DC(d[26]), DC(d[27]), DC(d[28]), DC(d[29]), DC(d[30]), DC(d[31]),  \
                   DC(d[32]), DC(d[33]), DC(d[34]), DC(d[35]), DC(d[36]), DC(d[37]), DC(d[38]), DC(d[39]),  \
                   DC(d[40]), DC(d[41]), DC(d[42]), DC(d[43]), DC(d[44]), DC(d[45]), DC(d[46]), DC(d[47]),  \
                   DC(d[48]), DC(d[49]), DC(d[50]), DC(d[51]), DC(d[52]), DC(d[53]), DC(d[54]), DC(d[55]),  \
                   DC(d[56]), DC(d[57]), DC(d[58]), DC(d[59]), DC(d[60]), DC(d[61]), DC(d[62]), DC(d[63])   \
                 : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "n"(TNSPB));                                    \
  }
DNNP_WGMMA_M64N128K16_RS(wgmma_m64n128k16_rs_bf16_t, "bf16", "+f", "1")
DNNP_WGMMA_M64N128K16_RS(wgmma_m64n128k16_rs_f16_t, "f16", "+f", "1")
#undef DNNP_WGMMA_M64N128K16_RS
// Session 28 (helper pp28, the slim prep's K Kᵀ / Q Kᵀ): the SS form (A and B both from shared
// memory by descriptor, both K-major: imm-trans-a = imm-trans-b = 0) of m64n32k16, scale-d 1.
// d: 16 fp32 per thread (4 n8 tiles in the accumulator layout above).
// Session 29 (helper m029, td29's token-stage design M0): the SS forms with the majors as template
// arguments, NAME_t<TNSPA, TNSPB> (PTX imm-trans-a / imm-trans-b: 0 K-major, 1 MN-major; 16-bit
// inputs only), at N = 32 and N = 64 (d: 32 fp32 per thread); NAME(d, a, b) is NAME_t<0, 0>. An
// MN-major A (tnspA) is stored [K][M] with M contiguous, exactly as an MN-major B with N → M: in
// the 128-byte swizzle 64 M-elements per 128-byte row, 8 K-rows per 1024-byte atom (SBO the
// distance between 8-row K groups, LBO between 64-wide M blocks, unused at M = 64), a k16 step at
// +16 rows; the design's dA′ᵀ operand is dA′'s [i][j] tile read so. The 64-byte swizzle
// (wgmma_desc's swz = 2; cute Swizzle<2,4,3>): rows of 64 B, the 16-byte chunk j of row r at
// j ^ ((r >> 1) & 3), 8 rows = one 512-byte atom; K-major: SBO 512 B for consecutive 8-row groups,
// a k16 step at +32 B, 32 keys per row (a [64][32] quarter tile). Proved by
// bench/dnnp_async_selftest.cu (and emulated by bench/gdn_wgmma_emu.h).
#define DNNP_WGMMA_M64N32K16_SS(NAME, TY)                                                                                   \
  template <int TNSPA, int TNSPB>                                                                                           \
  __device__ __forceinline__ void NAME##_t(float* d, uint64_t desc_a, uint64_t desc_b) {                                   \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"                                                               \
                 "wgmma.mma_async.sync.aligned.m64n32k16.f32." TY "." TY " "                                                \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15}, %16, %17, p, 1, 1, %18, %19;\n}\n"              \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),          \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15])     \
                 : "l"(desc_a), "l"(desc_b), "n"(TNSPA), "n"(TNSPB));                                                       \
  }                                                                                                                         \
  __device__ __forceinline__ void NAME(float* d, uint64_t desc_a, uint64_t desc_b) { NAME##_t<0, 0>(d, desc_a, desc_b); }
DNNP_WGMMA_M64N32K16_SS(wgmma_m64n32k16_ss_bf16, "bf16")
DNNP_WGMMA_M64N32K16_SS(wgmma_m64n32k16_ss_f16, "f16")
#undef DNNP_WGMMA_M64N32K16_SS
#define DNNP_WGMMA_M64N64K16_SS(NAME, TY)                                                                                   \
  template <int TNSPA, int TNSPB>                                                                                           \
  __device__ __forceinline__ void NAME##_t(float* d, uint64_t desc_a, uint64_t desc_b) {                                   \
    asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, 1, 0;\n"                                                               \
                 "wgmma.mma_async.sync.aligned.m64n64k16.f32." TY "." TY " "                                                \
                 "{%0,%1,%2,%3,%4,%5,%6,%7,%8,%9,%10,%11,%12,%13,%14,%15,"                                                  \
                 "%16,%17,%18,%19,%20,%21,%22,%23,%24,%25,%26,%27,%28,%29,%30,%31}, "                                       \
                 "%32, %33, p, 1, 1, %34, %35;\n}\n"                                                                        \
                 : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]),          \
                   "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]),    \
                   "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]),  \
                   "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])   \
                 : "l"(desc_a), "l"(desc_b), "n"(TNSPA), "n"(TNSPB));                                                       \
  }
DNNP_WGMMA_M64N64K16_SS(wgmma_m64n64k16_ss_bf16, "bf16")
DNNP_WGMMA_M64N64K16_SS(wgmma_m64n64k16_ss_f16, "f16")
#undef DNNP_WGMMA_M64N64K16_SS
#endif

}  // namespace dnnp
