// Gated DeltaNet forward with slim chunk factors (session 13, helper slim13): the prep writes only
// what the scan cannot cheaply rebuild, the output scan rebuilds the products from the raw inputs.
//
// Contract: the inputs, outputs and numerics contract of gdn_fwd.cuh's forward (spec §4.2, K = V =
// 128, one piece per sequence: P = 1), a different but exact factorisation of the same chunk
// recurrence (different roundings: validated against the fp64 reference, not bitwise the full
// factors' forward). Workspace (the host's WorkspaceLayout::slim, src/engines/gdn/params.rs),
// reusing FwdParams' region pointers:
//   ws_w  -> T = (I + L)^{-1}          io   [chunks, HO, SLIM_TRI_ELEMS] (unit lower triangular)
//   ws_a  -> A = tril(scale q̂ k̂ᵀ ⊙ e^{Γi−Γj})  io   [chunks, HO, SLIM_TRI_ELEMS] (the full prep's values)
//            (session 24, tri24: both packed, only the 10 16x16 blocks at or below the diagonal,
//            slim_tri_elem in gdn_fwd_prep15.cuh; until then [chunks, HO, 64, 64] rows)
//   ws_kr -> per-token scalars         fp32 [chunks, HO, SLIM_SCALARS, 64]:
//            row 0: ck = β e^Γ rk, row 1: β, row 2: cq = scale rq e^Γ, row 3: cr = rk e^{Γ_last−Γ}
//            (rk, rq: the l2norm inverse norms, 1 without FLAG_L2NORM; every row 0 past len)
//   ws_gl -> Γ_last                    fp32 [chunks, HO]
//   ws_q, ws_ut: unused.
// Per chunk, with X = Sᵀ (V×K, fp32 mma accumulators), raw k, q, v rows of the chunk (zero past
// len) and P' = X kᵀ, O' = X qᵀ (value rows × tokens):
//   Z  = vᵀ diag(β) − P' diag(ck)                 (rounded to io: the A operand below)
//   Uᵀ = Z Tᵀ                                      (= Ũᵀ − X Wᵀ of the full factors)
//   Oᵀ = O' diag(cq) + Uᵀ Aᵀ
//   X ← e^{Γ_last} X + (Uᵀ diag(cr)) k
// Bytes per (chunk, head) at bf16 K = V = 128: the prep reads q, k, g, β (no v) and writes
// 17 KB (T, A, scalars) instead of ~70 KB; the scan reads q, k, v, T, A, scalars.
//
// Kernels (kernels/src/gdn_fwd.cu): gdn_fwd_slimprep_{bf16,f16}_k128 (grid (chunk slots, HO),
// PREP3_THREADS threads, SlimPrepSmem<128>::bytes; prep15's T and A, bitwise: every element from
// the same operations as prep15's phases 1-4 without v, Y, E, W, Ũᵀ, Q⁺, Kᴿ; session 18 (prep18)
// reassigned the work to fewer instructions: fwd_slim_prep_tile) and gdn_fwd_slimscan_{bf16,f16}_k128_{w4,w8} (grid (V / (16 NW), HO, N),
// 32 NW threads, SlimScanSmem<128, NW, STAGES>::bytes). Deterministic, no atomics, no allocation.
#pragma once

#include "gdn_fwd_fast.cuh"
#include "gdn_fwd_prep10.cuh"
#ifndef GDN_HOST_EMU  // the CPU emulation defines the hand-over primitives (bench/gdn_host_emu.h)
#include "dnnp_async.cuh"
#include "dnnp_overlap.cuh"
#include "dnnp_tma.cuh"
#include "dnnp_wgmma.cuh"
#endif

namespace gdn {

#ifdef GDN_HOST_EMU
void emu_stsm_x4_t(void* smem, const u32* r);  // bench/gdn_host_emu.h
void emu_cp_async16_if(void* smem, const void* gmem, bool on);
#endif
// A 16-byte global store when `on` (a predicated instruction, no branch).
__device__ __forceinline__ void st_global16_if(void* gmem, uint4 v, bool on) {
#ifdef GDN_HOST_EMU
  if (on) *static_cast<uint4*>(gmem) = v;
#else
  asm volatile("{\n .reg .pred p;\n setp.ne.b32 p, %5, 0;\n @p st.global.v4.b32 [%0], {%1,%2,%3,%4};\n}\n" ::"l"(gmem),
               "r"(v.x), "r"(v.y), "r"(v.z), "r"(v.w), "r"(static_cast<int>(on))
               : "memory");
#endif
}
// A 16-byte global store: st.global.wb.v4 (SASS STG.E.128.STRONG.SM). nvcc 13.0 compiles
// `*reinterpret_cast<uint4*>(p) = a[i]` for an array `uint4 a[n]` to four 4-byte stores (session
// 69); the intrinsic, not asm, leaves the compiler free to schedule around it (st_global16_if's
// `memory` clobber cost b2c 1.7 % as the one pass's O store).
__device__ __forceinline__ void st_global16(void* gmem, uint4 v) {
#ifdef GDN_HOST_EMU
  *static_cast<uint4*>(gmem) = v;
#else
  __stwb(static_cast<uint4*>(gmem), v);
#endif
}
// cp.async of 16 bytes when `on`, else nothing (a predicated instruction, no branch).
__device__ __forceinline__ void cp_async16_if(void* smem, const void* gmem, bool on) {
#ifdef GDN_HOST_EMU
  emu_cp_async16_if(smem, gmem, on);
#else
  const u32 a = static_cast<u32>(__cvta_generic_to_shared(smem));
  asm volatile(
      "{\n .reg .pred p;\n setp.ne.b32 p, %2, 0;\n @p cp.async.cg.shared.global [%0], [%1], 16;\n}\n" ::"r"(a),
      "l"(gmem), "r"(static_cast<int>(on)));
#endif
}
// Four 8x8 b16 matrices stored transposed (stmatrix.x4.trans, session 21): lane l holds, per
// matrix m, row l / 4, columns 2 (l % 4) and + 1 of the fragment; column j of matrix m goes to
// the 16-byte row addressed by lane 8m + j (ldsm_x4_t's inverse).
__device__ __forceinline__ void stsm_x4_t(void* smem, const u32* r) {
#ifdef GDN_HOST_EMU
  emu_stsm_x4_t(smem, r);
#else
  const u32 a = static_cast<u32>(__cvta_generic_to_shared(smem));
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1,%2,%3,%4};\n" ::"r"(a), "r"(r[0]), "r"(r[1]),
               "r"(r[2]), "r"(r[3])
               : "memory");
#endif
}

constexpr int SLIM_SCALARS = 4;  // per-token fp32 rows of the slim workspace (ck, β, cq, cr)
constexpr int SLIM_W4_STAGES = 3;
constexpr int SLIM_W8_STAGES = 2;
// The slim prep's blocks per SM (__launch_bounds__ minimum, session 13 round 3, prep16): 5 caps it
// at 48 registers (64 uncapped: 4 blocks; 6 would need 40 and spills ~290 B per thread). Its
// 36,352 B of shared memory fit 6. Speed only: the same arithmetic, bitwise the uncapped kernel.
// Until session 18 it still ran 4 per SM (ncu: "Block Limit Barriers 4", a named barrier with its
// ID in a register reserved all 16; "Block Limit Shared Mem 4" under the driver's 167.9 KB
// carveout): now 3 named barriers per block and the largest carveout (the host's
// PrepPass::max_carveout), 5 per SM by registers.
constexpr int SLIM_PREP_MIN_BLOCKS = 5;
// The wgmma form's (session 28, gdn_fwd_slimprep_*_k128_wg): 64 registers (at 48 ptxas spills and
// serializes the wgmma; the _wg5 entry keeps 5 with the two chains one after the other).
constexpr int SLIM_PREP_WG_MIN_BLOCKS = 4;

// The slim prep's shared memory: r1 raw then normalised k; r2 raw then scaled q -> L (fp32, rows
// of TCINV_LS) -> T (io, tcinv10_tb_row); Γ, β. rs (session 23): each row's (kr, qr) from phase 2
// to phase 3, in r2 past q's rows (L's larger rows take it only in phase 4).
template <int K>
struct SlimPrepSmem {
  static constexpr int KP = K + 8;
  static constexpr size_t r1_off = 0;
  static constexpr size_t r2_off = static_cast<size_t>(CHUNK) * KP * 2;
  static constexpr size_t r2_bytes = (CHUNK * KP * 2 > CHUNK * TCINV_LS * 4) ? CHUNK * KP * 2 : CHUNK * TCINV_LS * 4;
  static constexpr size_t rs_off = r2_off + static_cast<size_t>(CHUNK) * KP * 2;
  static constexpr size_t gam_off = r2_off + r2_bytes;
  static constexpr size_t bet_off = gam_off + CHUNK * 4;
  static constexpr size_t bytes = bet_off + CHUNK * 4;
  // Session 31 (pw31, fwd_slim_prep_tile's G >= 1): the fp32 L tile / io T in its own region.
  static constexpr size_t l_off = bytes;
  static constexpr size_t bytes_l = l_off + static_cast<size_t>(CHUNK) * TCINV_LS * 4;
  // Session 36 (tp36, fwd_slim_prep_tile's G >= 3): the q, k copies' mbarrier in r1's pad past the
  // swizzled k rows (the wgmma form's k takes 2 atoms of 64 rows x 128 B; r1 holds rows of K + 8).
  static constexpr size_t mbar_off = r1_off + 2 * 64 * CHUNK * 2;
  static_assert(mbar_off % 8 == 0 && mbar_off + 8 <= r2_off, "the mbarrier in r1's pad");
  static_assert(rs_off % 8 == 0 && rs_off + CHUNK * 8 <= gam_off, "rs fits in r2 past the q rows");
};
// The host mirrors this (src/engines/gdn/params.rs, slim_prep_smem_bytes).
static_assert(SlimPrepSmem<128>::bytes == 36352, "SlimPrepSmem size changed");
// The host mirrors this too (slim_prep_l_smem_bytes); l_off keeps Lf's bank phase (128-byte aligned).
static_assert(SlimPrepSmem<128>::bytes_l == 54784 && SlimPrepSmem<128>::l_off % 128 == 0, "SlimPrepSmem L region changed");

// Four 16-bit values (an 8-byte piece of a row) to fp32, as Io<T>::bits_to_f converts each
// (session 23, prep23): for bf16 the high half of each 32-bit word by one mask (the value's bits
// are the word's high 16 bits), not an extract and a shift.
template <typename T>
struct SlimUnpack4 {
  static __device__ __forceinline__ void run(uint2 w, float (&x)[4]) {
    x[0] = Io<T>::bits_to_f(static_cast<unsigned short>(w.x));
    x[1] = Io<T>::bits_to_f(static_cast<unsigned short>(w.x >> 16));
    x[2] = Io<T>::bits_to_f(static_cast<unsigned short>(w.y));
    x[3] = Io<T>::bits_to_f(static_cast<unsigned short>(w.y >> 16));
  }
};
template <>
struct SlimUnpack4<gdn_bf16> {
  static __device__ __forceinline__ void run(uint2 w, float (&x)[4]) {
    x[0] = __uint_as_float(w.x << 16);
    x[1] = __uint_as_float(w.x & 0xffff0000u);
    x[2] = __uint_as_float(w.y << 16);
    x[3] = __uint_as_float(w.y & 0xffff0000u);
  }
};

// Phase 2 of the slim prep for token row r on a quarter-warp (session 23, prep23; session 18's
// slim_norm_row_half took a half-warp, session 13's slim_norm_row a warp per row): normalise k,
// scale q in place and, on the quarter's first lane, store the row's key and query scalings
// (kr, qr) to rs[r] for slim_row_scalars. Bitwise row_norm_scales' values: lane m of the quarter
// holds the elements of row_norm_scales' lanes m, m + 8, m + 16, m + 24 (groups g = 0..3 of 4
// elements at 32 g + 4 m), so the butterfly's first two steps (xor 16, then xor 8: lane m's
// (s_m + s_{m+16}) + (s_{m+8} + s_{m+24}), the same sum on lane m + 8 by commutativity) are this
// lane's own sums of its four partials, and steps 4, 2, 1 are the same shuffles within the quarter.
// Four rows per warp instruction: a quarter of the shuffles, rsqrts and loop overhead per row.
// SWZ (session 28, pp28: the wgmma form): the rows in slim_wg_elem<K>'s swizzle, not rows of K + 8.
// (Each warp access still takes the minimum two wavefronts: the quarters' rows 4 apart hold
// complementary halves of the row's 16-byte chunks, rows 8 apart the same ones.)
template <typename T, int K, bool SWZ = false>
__device__ __forceinline__ void slim_norm_row_quarter(const FwdParams& p, T* kS, T* qS, float2* rs, int r, int lane) {
  using IO = Io<T>;
  constexpr int KP = K + 8, EK = K / 32, G = K / 4;
  static_assert(EK == 4, "8-byte pieces (K = 128)");
  const int m = lane & 7;
  T* kp = &kS[r * KP + m * EK];
  T* qp = &qS[r * KP + m * EK];
  // Piece g of this lane (elements g G + m EK .. + 3 of row r) in k's / q's rows.
  auto kat = [&](int g) { if constexpr (SWZ) return kS + slim_wg_elem<K>(r, g * G + m * EK); else return kp + g * G; };
  auto qat = [&](int g) { if constexpr (SWZ) return qS + slim_wg_elem<K>(r, g * G + m * EK); else return qp + g * G; };
  float kx[4][EK], qx[4][EK], ks[4], qs[4];
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    SlimUnpack4<T>::run(*reinterpret_cast<const uint2*>(kat(g)), kx[g]);
    SlimUnpack4<T>::run(*reinterpret_cast<const uint2*>(qat(g)), qx[g]);
    ks[g] = 0.f;
    qs[g] = 0.f;
#pragma unroll
    for (int e = 0; e < EK; ++e) {
      ks[g] += kx[g][e] * kx[g][e];
      qs[g] += qx[g][e] * qx[g][e];
    }
  }
  float kr = 1.f, qr = p.scale;
  // row_norm_scales' steps 16 and 8, then 4, 2, 1 by shuffles.
  if (p.flags & FLAG_L2NORM)
    l2norm_scales<4>((ks[0] + ks[2]) + (ks[1] + ks[3]), (qs[0] + qs[2]) + (qs[1] + qs[3]), p.scale, kr, qr);
  // Io::pack rounds each value as f_to_bits does (the pair in one conversion).
#pragma unroll
  for (int g = 0; g < 4; ++g) {
    *reinterpret_cast<uint2*>(kat(g)) =
        make_uint2(IO::pack(kx[g][0] * kr, kx[g][1] * kr), IO::pack(kx[g][2] * kr, kx[g][3] * kr));
    *reinterpret_cast<uint2*>(qat(g)) =
        make_uint2(IO::pack(qx[g][0] * qr, qx[g][1] * qr), IO::pack(qx[g][2] * qr, qx[g][3] * qr));
  }
  if (m == 0) rs[r] = make_float2(kr, qr);
}

// The four scalars of token row r (one thread per row; session 23, prep23: until then the first
// lane of slim_norm_row_half's half-warp, once per row inside phase 2's loop), zeros past len:
// the same expressions on the same values (kr, qr from rs[r]).
__device__ __forceinline__ void slim_row_scalars(float* sc, const float2* rs, const float* gam, const float* bet,
                                                 float gl, int r, int len) {
  const float2 s = rs[r];
  const float kr = s.x, qr = s.y;
  const float eg = exp_ftz(gam[r]), er = exp_ftz(gl - gam[r]), br = bet[r];
  store_row_scalars(sc, r, r < len, kr, qr, eg, er, br);
}

// Phase 3 and 4's helpers (slim_qk_products, slim_store_la, slim_bar) live in
// gdn_fwd_prep15.cuh since session 18 (bprep18): prep15's tile uses them too.

#ifdef GDN_HOST_EMU
// The CPU emulation has no wgmma: it runs WG's phase 3 as slim_qk_product's mma.sync over the
// swizzled rows (each lane's ldmatrix row at slim_wg_elem), which checks the layout of phases 1-2
// (bench/gdn_slim_host_emu.cpp: the workspace bitwise the default prep's), not the descriptors.
template <typename T, int K>
__device__ __forceinline__ void slim_qk_product_swz(float (&acc)[4][4], const T* as, const T* kS, int rt, int hi,
                                                    int lane) {
  using IO = Io<T>;
  const int ar = 16 * rt + (lane & 7) + 8 * ((lane >> 3) & 1), ac = 8 * (lane >> 4);
  const int br = 32 * hi + 8 * (lane >> 4) + (lane & 7), bc = 8 * ((lane >> 3) & 1);
  for (int kk = 0; kk < K / 16; ++kk) {
    u32 a[4];
    ldsm_x4(a, &as[slim_wg_elem<K>(ar, 16 * kk + ac)]);
    for (int np = 0; np < 2; ++np) {
      u32 b[4];
      ldsm_x4(b, &kS[slim_wg_elem<K>(16 * np + br, 16 * kk + bc)]);
      IO::mma(acc[2 * np], a, b);
      IO::mma(acc[2 * np + 1], a, b + 2);
    }
  }
}
#else
// The io dtype's m64n32k16 SS wgmma (dnnp_wgmma.cuh; A and B K-major by descriptor).
template <typename T>
struct SlimWgSS;
template <>
struct SlimWgSS<gdn_bf16> {
  static __device__ __forceinline__ void n32(float* d, uint64_t a, uint64_t b) { dnnp::wgmma_m64n32k16_ss_bf16(d, a, b); }
};
template <>
struct SlimWgSS<gdn_f16> {
  static __device__ __forceinline__ void n32(float* d, uint64_t a, uint64_t b) { dnnp::wgmma_m64n32k16_ss_f16(d, a, b); }
};
// Phase 3 of the slim prep on wgmma (session 28, pp28; DNNPLAN_GDN_FWD_SLIMPREP=wg): warpgroup hi
// forms K Kᵀ (kacc) and Q Kᵀ (qacc) at all 64 rows, key columns 32 hi + 0..31, by m64n32k16 SS
// wgmma (A = the normalised k / scaled q rows, B = the k rows 32 hi.., both K-major in
// slim_wg_elem<K>'s 128-byte swizzle: each B element read once per warpgroup, not by every warp's
// ldmatrix). Warp w of the warpgroup holds rows 16 w.. in the mma.sync C layout per n8 tile, i.e.
// slim_qk_products' (rt, hi) = (w, hi) accumulators, the same k16 steps in the same order (kk
// ascending, from zero) into each: the values the mma.sync products give where the tensor core
// sums a k16 step alike (checked by the forward's hashes on the H200). Rows above the diagonal
// (warps 4, 5 and the upper blocks) are formed and not used. mid() runs before the last wait
// (warps 4, 5: the rows' scalars). The caller fenced the rows to the async proxy (fence.proxy.async
// + block barrier after phase 2). SPLIT = false: both chains in one batch (interleaved, each in its
// order): 64 registers, no spill (the _wg entry, 4 blocks per SM); SPLIT: K Kᵀ's batch, wait, then
// Q Kᵀ's: at the slim prep's 48-register bound (_wg5, 5 blocks per SM) ptxas then spills 64 B
// and serializes the wgmma (C7512; both chains in one batch: 620 B of spills).
template <typename T, int K, bool SPLIT, typename Mid>
__device__ __forceinline__ void slim_qk_products_wg(float (&kacc)[4][4], float (&qacc)[4][4], const T* kS, const T* qS,
                                                    int hi, Mid&& mid) {
  constexpr uint32_t ATOM = 64 * CHUNK * 2;  // a swizzle atom: 64 keys x CHUNK tokens
  const uint32_t kb = static_cast<uint32_t>(__cvta_generic_to_shared(kS));
  const uint32_t qb = static_cast<uint32_t>(__cvta_generic_to_shared(qS));
  const uint32_t bb = kb + 32 * 128 * hi;  // the k rows 32 hi.. (N = 32: four 8-row groups, 1024-aligned)
  auto desc = [](uint32_t base, int kk) {
    return dnnp::wgmma_desc_at<true>(base, ATOM * (kk >> 2) + 32 * (kk & 3), 16, 1024, 1);
  };
  dnnp::wgmma_fence_frags(kacc);
  dnnp::wgmma_fence_frags(qacc);
  dnnp::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    SlimWgSS<T>::n32(&kacc[0][0], desc(kb, kk), desc(bb, kk));
    if constexpr (!SPLIT) SlimWgSS<T>::n32(&qacc[0][0], desc(qb, kk), desc(bb, kk));
  }
  dnnp::wgmma_commit();
  if constexpr (SPLIT) {
    dnnp::wgmma_wait<0>();
    dnnp::wgmma_fence_frags(kacc);
    dnnp::wgmma_fence_frags(qacc);
    dnnp::wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < K / 16; ++kk) SlimWgSS<T>::n32(&qacc[0][0], desc(qb, kk), desc(bb, kk));
    dnnp::wgmma_commit();
  }
  mid();
  dnnp::wgmma_wait<0>();
  dnnp::wgmma_fence_frags(kacc);
  dnnp::wgmma_fence_frags(qacc);
}
#endif

// The slim prep's tile: chunk slot c, head h on one block of PREP3_THREADS threads. Phases 1-4
// compute prep15's values (prep10_tile<..., BAL_DIAG = 3>) without v: the same T and A bits; then
// T, the scalars, A and Γ_last to the workspace. Session 18 (prep18; the prep is issue-bound) did
// the same arithmetic in fewer instructions: the phase-1 copy with compile-time trip counts, the
// row phase on half-warps (slim_norm_row_half), K Kᵀ and Q Kᵀ on the same warp for the same
// elements, warps 4 and 5 (all above the diagonal) none (slim_qk_products: 384 mma.sync per tile, not
// 512), each decay e^{Γi−Γj} once for L and A (slim_store_la) and L handed to the diagonal blocks
// by bar.arrive / bar.sync. Checked on the CPU (bench/gdn_slim_host_emu.cpp, GDN_EMU_DUMP): the
// workspace and outputs byte-identical to session 17's. Session 23 (prep23), the same values in
// fewer instructions again (static SASS 3,024 -> 2,640 per entry): no integer divisions without
// GQA, the phase-1 copies as zero-filling cp.async (load_kq_rows<..., true>), the row phase on
// quarter-warps (slim_norm_row_quarter: bf16 unpacked by masks, io pairs packed at once) with the
// rows' four scalars moved to warps 4, 5 in phase 3 (slim_row_scalars: they form no products), the
// inverse's TF32 splits by integer arithmetic (to_tf32<true>: the same bits for finite values) and
// T stored without a loop. Returns at once for a slot past the last chunk. Uses the whole dynamic
// shared memory (SlimPrepSmem); a caller that runs another tile after it must put a block barrier
// in between.
// WG (session 28, pp28: gdn_fwd_slimprep_*_k128_wg / _wg5, DNNPLAN_GDN_FWD_SLIMPREP=wg / wg5):
// the k and q rows in slim_wg_elem's swizzle (phases 1, 2) and phase 3 on wgmma
// (slim_qk_products_wg; WG = 1 both chains in one batch, 2 SPLIT); the same values where wgmma's
// k16 steps sum as mma.sync's (the caller checks the 1024-byte alignment).
// KEEP (session 29, bp29: the backward's slim prep gdn_bwd_prep16sl, in place of prep15sl): the
// outputs in prep15sl's layouts, the same values (bench/gdn_prep_host_emu.cpp, GDN_EMU_BP16=1): A
// as full rows of CHUNK (slim_store_la without TRI: zeros above the diagonal) to ws_a, T as full
// rows of CHUNK to keep.ws_t and the per-token Γ, β to keep.ws_gam / ws_bet (prep10_tile's KEEP
// stores, prep_keep_t_gam_bet) instead of the packed T in ws_w; the scalars to ws_kr and Γ_last to
// ws_gl as the forward's (prep15sl's SC writes the same four rows).
// KEEP = 2 (session 37: the forward's saving prep gdn_fwd_slimprep_*_k128_wgs, for a training
// forward whose backward skips its prep): both — the packed T, A for the forward's scans (ws_w,
// ws_a) and KEEP's full T, A rows, Γ, β (keep.ws_t, keep.ws_a, keep.ws_gam, keep.ws_bet); the
// scalars and Γ_last once, to ws_kr / ws_gl (the caller points them into the saved buffer). The
// same values as either form, so the backward that reads them computes what its own prep would.
// G (session 31, pw31's _wgc; landed in session 32, pp32; the wgmma form only): G >= 1
// (gdn_fwd_slimprep_*_k128_wgc, DNNPLAN_GDN_FWD_SLIMPREP=wgc; KEEP: gdn_bwd_prep16slc) two block
// barriers fewer. prep_finish_gates' two barriers become one (every thread waits for its copies,
// one barrier: the warps' Γ and the q, k rows visible; then warp 1 adds gam[31] to its Γ, the same
// fp32 addition, and its lane 31 stores Γ_last = gam[63] to ws_gl, while phase 2 runs: phase 2
// reads no Γ; phase 3 reads Γ and Γ_last after phase 2's barrier); and the fp32 L tile (then io
// T) lies in its own region past β (SlimPrepSmem<K>::l_off, SlimPrepSmem<K>::bytes_l: 54,784 B at
// K = 128, still 4 blocks per SM) instead of over q and rs, so phase 3's closing block barrier goes
// too (each warp stores its L, A elements after its own wgmma; the named barriers 1, 2 and the
// next block barrier order the rest, as before). KEEP's stores read T, Γ, β after the last block
// barrier, as before. The same values bitwise either way.
// G = 2 (session 35, pr35: gdn_fwd_slimprep_*_k128_wgl, DNNPLAN_GDN_FWD_SLIMPREP=wgl): G = 1 with
// the chunk located in one round of loads (locate_chunk_warp) instead of locate_chunk's chain of
// dependent ones (the chunk table's total, the binary search's log2(n_seqs) steps, then cu_seqlens):
// the tile's copies start that many L2 round trips earlier. The same integers, the same tile.
// G = 3, 4 (session 36, tp36: gdn_fwd_slimprep_*_k128_wgt / _wgtl, DNNPLAN_GDN_FWD_SLIMPREP=wgt / wgtl):
// G = 1, 2 with a whole chunk's q, k rows (len == CHUNK, a block-uniform branch) by four tensor-map
// box loads (maps: the forward's GdnIoMaps, boxes {64, 1, 64} with the 128-byte swizzle, which
// writes slim_wg_elem's layout: atom a of k at kS + 64 a CHUNK, of q at qS + 64 a CHUNK, each 8 KB
// from a 1024-byte aligned address) issued by thread 0 on one mbarrier (SlimPrepSmem::mbar_off,
// expect_tx 32 KB) in place of every thread's 8 zero-filling cp.async; a partial chunk keeps the
// cp.async path (its rows >= len are zeros; a box would bring the next sequence's tokens). Every
// thread waits on the mbarrier after the gates' block barrier (which orders thread 0's init before
// the other threads' waits). The same bytes in the same places, the same tile.
template <typename T, int K, int WG = 0, int KEEP = 0, int G = 0>
__device__ __forceinline__ void fwd_slim_prep_tile(const FwdParams& p, const int c, const int h,
                                                   const PrepKeep& keep = PrepKeep{}, const GdnIoMaps* maps = nullptr) {
  static_assert(K == 128, "the slim forward serves K = V = 128");
  using S = SlimPrepSmem<K>;
  static_assert(!WG || (S::r1_off % 1024 == 0 && S::r2_off % 1024 == 0), "WG: the swizzle atoms 1024-byte aligned");
  static_assert(!WG || S::r2_off + 2 * 64 * CHUNK * 2 <= S::rs_off, "WG: the swizzled q rows before rs");
  static_assert(G == 0 || WG != 0, "G: the wgmma form");
  static_assert(G <= 4 && (G < 3 || KEEP != 1), "G = 3, 4: the forward's tiles (the maps)");
  static_assert(KEEP >= 0 && KEEP <= 2, "KEEP: 0 the forward, 1 the backward, 2 the saving forward");
  constexpr bool PACKED = KEEP != 1;  // T, A packed for the forward's scans
  constexpr bool TMA = G >= 3, LOCATE_WARP = G == 2 || G == 4;
  constexpr size_t L_OFF = G >= 1 ? S::l_off : S::r2_off;
  constexpr int NT = PREP3_THREADS;
  extern __shared__ __align__(16) unsigned char smem[];
  T* kS = reinterpret_cast<T*>(smem + S::r1_off);
  T* qS = reinterpret_cast<T*>(smem + S::r2_off);
  float* Lf = reinterpret_cast<float*>(smem + L_OFF);  // after qS is dead (G: its own region)
  const T* tb = reinterpret_cast<const T*>(smem + L_OFF);  // T (io) at tcinv10_tb_row
  float* gam = reinterpret_cast<float*>(smem + S::gam_off);
  float* bet = reinterpret_cast<float*>(smem + S::bet_off);
  float2* rs = reinterpret_cast<float2*>(smem + S::rs_off);

  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  int seq, len;
  long long t0;
#ifndef GDN_HOST_EMU
  if constexpr (TMA) {
    if (tid == 0) {  // the maps' descriptors while the chunk is located
      dnnp::tma_prefetch(&maps->k);
      dnnp::tma_prefetch(&maps->q);
    }
  }
#endif
  if constexpr (LOCATE_WARP) {
    if (!locate_chunk_warp(p, c, seq, t0, len, lane)) return;
  } else if (!locate_chunk(p, c, seq, t0, len)) {
    return;
  }
  const int HO = p.ho;
  // The q and k heads; without GQA (the usual case, a uniform branch) no integer divisions.
  const int qh = p.h == HO ? h : h / (HO / p.h), kh = p.hk == HO ? h : h / (HO / p.hk);
  const size_t ch = static_cast<size_t>(c) * HO + h;

  // Phase 1: raw q, k rows (zero past len, load_kq_rows<..., true>), in flight while the gates are cooked.
  // TMA: a whole chunk's by four box loads on the mbarrier instead (the same bytes, the same places).
#ifndef GDN_HOST_EMU
  uint64_t* mbar = reinterpret_cast<uint64_t*>(smem + S::mbar_off);
  const bool boxes = TMA && len == CHUNK;  // block-uniform
  if (boxes) {
    if (tid == 0) {
      constexpr uint32_t ATOM = 64 * CHUNK;  // elements of one box (64 tokens x 128 B)
      const int tok = static_cast<int>(t0);
      dnnp::mbar_init(mbar, 1);
      dnnp::mbar_init_fence();
      dnnp::mbar_arrive_expect_tx(mbar, 4 * ATOM * static_cast<uint32_t>(sizeof(T)));
      dnnp::tma_load_3d(kS, &maps->k, 0, kh, tok, mbar);
      dnnp::tma_load_3d(kS + ATOM, &maps->k, 64, kh, tok, mbar);
      dnnp::tma_load_3d(qS, &maps->q, 0, qh, tok, mbar);
      dnnp::tma_load_3d(qS + ATOM, &maps->q, 64, qh, tok, mbar);
    }
  } else
#else
  constexpr bool boxes = false;
#endif
  {
    load_kq_rows<T, K, NT, true, WG != 0>(p, kS, qS, t0, len, qh, kh, tid);
    cp_async_commit();
  }
  prep_gates(p, gam, bet, t0, len, h, HO, tid, lane);
  float gl = 0.f;
  if constexpr (G >= 1) {
    if (!boxes) cp_async_wait<0>();
    __syncthreads();
    if (tid >= 32 && tid < CHUNK) {
      const float g = gam[tid] + gam[31];
      gam[tid] = g;
      if (tid == CHUNK - 1) p.ws_gl[ch] = g;
    }
#ifndef GDN_HOST_EMU
    if (boxes) dnnp::mbar_wait(mbar, 0);  // the boxes landed (visible to this thread's loads)
#endif
  } else {
    gl = prep_finish_gates(p, gam, ch, tid);
  }

  // Phase 2 (quarter-warp per row): normalise k, scale q; each row's (kr, qr) to rs. Warp w's
  // quarter j takes rows (w & 3) + 4 j + 16 (w >> 2) + 32 i: the four quarters' rows 4 apart, whose
  // 272-byte rows start 16 banks apart, so each 8-byte access of the warp takes the minimum two
  // shared-memory wavefronts (rows 8 apart share their banks: four wavefronts).
  static_assert(NT == 256, "8 warps x 4 quarters x 2 rounds = 64 rows");
#pragma unroll 1
  for (int r = (warp & 3) + 4 * (lane >> 3) + 16 * (warp >> 2); r < CHUNK; r += 32)
    slim_norm_row_quarter<T, K, WG != 0>(p, kS, qS, rs, r, lane);
#ifndef GDN_HOST_EMU
  if constexpr (WG) dnnp::fence_proxy_async_shared();  // this thread's k, q rows, for the wgmma
#endif
  __syncthreads();
  if constexpr (G >= 1) gl = gam[CHUNK - 1];  // warp 1's sums landed (G: added during phase 2)

  // Phase 3 (session 18): warp (rt, hi) forms K Kᵀ and Q Kᵀ at rows 16 rt.., columns 32 hi.. when
  // any of its np = min(rt − 2 hi + 1, 2) column blocks is at or below the diagonal (warps 4, 5:
  // none; both blocks either way: one code path, no spills at 48 registers).
  const int rt = warp & 3, hi = warp >> 2;
  const int r0 = 16 * rt + (lane >> 2), cq = 2 * (lane & 3);
  const int np = hi ? (rt < 2 ? 0 : rt - 1) : (rt < 1 ? 1 : 2);
  float kacc[4][4], qacc[4][4];
  zero_frags(kacc);
  zero_frags(qacc);
  // Warps 4, 5 (np = 0: no products) meanwhile store the rows' scalars, one thread per row.
  if constexpr (WG) {
#ifndef GDN_HOST_EMU
    slim_qk_products_wg<T, K, WG == 2>(kacc, qacc, kS, qS, hi, [&] {
      if (np == 0) slim_row_scalars(static_cast<float*>(p.ws_kr) + ch * SLIM_SCALARS * CHUNK, rs, gam, bet, gl, tid - 4 * 32, len);
    });
#else
    if (np > 0) {
      slim_qk_product_swz<T, K>(kacc, kS, kS, rt, hi, lane);
      slim_qk_product_swz<T, K>(qacc, qS, kS, rt, hi, lane);
    } else {
      slim_row_scalars(static_cast<float*>(p.ws_kr) + ch * SLIM_SCALARS * CHUNK, rs, gam, bet, gl, tid - 4 * 32, len);
    }
#endif
  } else if (np > 0) {
    slim_qk_products<T, K, 2>(kacc, qacc, kS, qS, rt, hi, lane);
  } else {
    slim_row_scalars(static_cast<float*>(p.ws_kr) + ch * SLIM_SCALARS * CHUNK, rs, gam, bet, gl, tid - 4 * 32, len);
  }
  if constexpr (G == 0) __syncthreads();  // q and rs dead: L takes their place (G: L apart)

  // Phase 4 (prep15's schedule without the E rows): L to Lf and A straight to the workspace (every
  // warp its rows and columns); warp 0 takes L rows 0..31, columns 0..31 from warps 0, 1 and warp 2
  // rows 32..63, columns 32..63 from warps 6, 7 (named barriers 1, 2; the producers only arrive),
  // the diagonal blocks and step 1 on warps 0 and 2, step 2a, step 2b with T to io.
  if constexpr (KEEP == 2)
    slim_store_la<T, true, true>(Lf, static_cast<T*>(p.ws_a) + ch * SLIM_TRI_ELEMS, kacc, qacc, gam, bet, r0, cq, hi, np,
                                 static_cast<T*>(keep.ws_a) + ch * CHUNK * CHUNK);
  else
    slim_store_la<T, !KEEP>(Lf, static_cast<T*>(p.ws_a) + ch * (KEEP ? CHUNK * CHUNK : SLIM_TRI_ELEMS), kacc, qacc, gam,
                            bet, r0, cq, hi, np);
  if (warp == 0) slim_bar<true, 1, 64>();
  else if (warp == 1) slim_bar<false, 1, 64>();
  else if (warp == 2) slim_bar<true, 2, 96>();
  else if (warp >= 6) slim_bar<false, 2, 96>();
  if (warp == 0 || warp == 2) prep15_diag_and_step1<true>(Lf, warp, lane);
  __syncthreads();
  tcinv8_p<true>(Lf, warp, lane);
  __syncthreads();
  prep15_tba_io<T, true>(Lf, warp, lane);
  tcinv10_rows_to_io<T, 0>(Lf, warp, lane);
  prep15_tbb_to_io<T>(Lf, warp, lane);
  __syncthreads();

  // T (io, unit diagonal) to the workspace's packed tile (session 24, tri24: only its
  // SLIM_TRI_BLOCKS lower blocks, slim_tri_elem), 16-byte pieces: warp w the blocks b = w and
  // (warps 0, 1) w + 8, lane l row l % 16, columns 8 (l / 16).. of the block (each warp stores 512
  // contiguous bytes; the tb rows of lanes 0..7 lie in distinct 16-byte bank groups).
  static_assert(SLIM_TRI_BLOCKS * 32 <= 2 * NT && SLIM_TRI_BLOCKS * 32 > NT, "two rounds of warps");
  if constexpr (KEEP) prep_keep_t_gam_bet<T, NT>(keep, ch, tb, gam, bet, tid);
  if constexpr (PACKED) {
    T* dt = static_cast<T*>(p.ws_w) + ch * SLIM_TRI_ELEMS;
    const int row = lane & 15, c8 = 8 * (lane >> 4);
#pragma unroll
    for (int it = 0; it < 2; ++it) {
      const int b = warp + (NT / 32) * it;
      if (it == 0 || b < SLIM_TRI_BLOCKS) {
        const int rc = slim_tri_rc(b);
        *reinterpret_cast<uint4*>(dt + b * 256 + row * 16 + c8) =
            *reinterpret_cast<const uint4*>(tb + tcinv10_tb_row(4 * (rc & 12) + row) + 16 * (rc & 3) + c8);
      }
    }
  }
}

// The slim prep: grid (chunk slots, HO), one tile per block (WG: fwd_slim_prep_tile's wgmma form;
// KEEP: its backward form, gdn_bwd_prep16sl; G: its barrier trims).
// maps: the forward's tensor maps (G >= 3 only).
template <typename T, int K, int WG = 0, int KEEP = 0, int G = 0>
__device__ __forceinline__ void fwd_slim_prep_body(const FwdParams& p, const PrepKeep& keep = PrepKeep{},
                                                   const GdnIoMaps* maps = nullptr) {
#ifndef GDN_HOST_EMU
  if constexpr (WG) {
    extern __shared__ __align__(16) unsigned char smem[];
    dnnp::trap_unless_swizzle_aligned(smem);
  }
#endif
  fwd_slim_prep_tile<T, K, WG, KEEP, G>(p, blockIdx.x, blockIdx.y, keep, maps);
}

// The slim scan's shared memory per pipeline stage: raw q, k rows (K + 8), the block's VS value
// columns of v (VS + 8), T and A (CHUNK + 8), the scalars; then the per-warp O staging tiles.
template <int K, int NW, int STAGES>
struct SlimScanSmem {
  static constexpr int KP = K + 8;
  static constexpr int CP = CHUNK + 8;
  static constexpr int VS = 16 * NW;
  static constexpr int VP = VS + 8;
  static constexpr size_t q_off = 0;
  static constexpr size_t k_off = q_off + CHUNK * KP * 2;
  static constexpr size_t v_off = k_off + CHUNK * KP * 2;
  static constexpr size_t t_off = v_off + CHUNK * VP * 2;
  static constexpr size_t a_off = t_off + CHUNK * CP * 2;
  static constexpr size_t s_off = a_off + CHUNK * CP * 2;
  static constexpr size_t stage = s_off + SLIM_SCALARS * CHUNK * 4;
  static constexpr int OP = 24;
  static constexpr size_t o_off = STAGES * stage;
  static constexpr size_t bytes = o_off + NW * CHUNK * OP * 2;
  // w4gxt (session 36, tm36): the o region as two dense [CHUNK][16] staging tiles per warp (the
  // tensor-map store's source, slim_store_o_tma; chunk c in tile c & 1).
  static constexpr size_t bytes_t = o_off + NW * 2 * CHUNK * 16 * 2;
};
// The host mirrors these (src/engines/gdn/params.rs, slim_scan_smem_bytes).
static_assert(SlimScanSmem<128, 4, SLIM_W4_STAGES>::bytes == 202752 &&
                  SlimScanSmem<128, 8, SLIM_W8_STAGES>::bytes == 167936 &&
                  SlimScanSmem<128, 4, SLIM_W4_STAGES>::bytes_t == 206848,
              "SlimScanSmem size changed");

// Where chunk c's copies come from (every slim pass's copy schedule): its first token, its length
// (≤ CHUNK), its (chunk, head) row of the workspace; cb = the first chunk of the sequence (or of
// the piece's sequence), [cs, ce) its tokens.
struct SlimChunkAt {
  long long t0;
  size_t ch;
  int len;
};
__device__ __forceinline__ SlimChunkAt slim_chunk_at(int c, int cb, long long cs, long long ce, int HO, int h) {
  const long long t0 = cs + static_cast<long long>(c - cb) * CHUNK;
  return SlimChunkAt{t0, static_cast<size_t>(c) * HO + h, static_cast<int>(min_ll(static_cast<long long>(CHUNK), ce - t0))};
}

// The copies of the packed lower-triangular tiles T and A (session 24, tri24; the prep writes
// only their SLIM_TRI_BLOCKS blocks, slim_tri_elem) into the scans' unchanged smem tiles (rows of
// CHUNK + 8): a warp copies one whole block per call (512 contiguous bytes), lane l its row l % 16,
// columns 8 (l / 16).. (the smem rows of lanes 0..7 start 16 bytes apart modulo 128: no bank
// conflict). The smem blocks above the diagonal are never written: slim_chunk_tail's T and A
// products skip them (kk > np). DST(i, j): the smem element of tile element (i, j) (here rows of
// CP; a swizzled staging composes another).
struct SlimTileRows {
  __device__ __forceinline__ int operator()(int i, int j) const { return i * (CHUNK + 8) + j; }
};
template <typename T, typename Dst = SlimTileRows>
__device__ __forceinline__ void slim_tri_piece(T* dst, const T* src, int b, int lane, bool live, Dst at = {}) {
  const int rc = slim_tri_rc(b);
  const int row = lane & 15, c8 = 8 * (lane >> 4);
  cp_async16_zfill(dst + at(4 * (rc & 12) + row, 16 * (rc & 3) + c8), src + b * 256 + row * 16 + c8, live);
}
// Rounds of the blocks of NTILE packed tiles (T, then A) on NW warps: round `it` copies block
// g = warp + NW it of the NTILE · SLIM_TRI_BLOCKS (tile g / SLIM_TRI_BLOCKS); a warp past the
// last block copies nothing (only in the last round, a warp-uniform branch). Each round is one
// cp.async per thread: the T + A copy of 4 warps 5 rounds (8 warps 3), T alone 3 (2).
template <int NW, int NTILE>
struct SlimTriRounds {
  static constexpr int n = (NTILE * SLIM_TRI_BLOCKS + NW - 1) / NW;
};
template <typename T, int NW, int NTILE, typename Dst = SlimTileRows>
__device__ __forceinline__ void slim_tri_round(T* tdst, T* adst, const T* tsrc, const T* asrc, int warp, int lane, int it,
                                               bool live, Dst at = {}) {
  static_assert(NTILE == 1 || NTILE == 2, "T, or T and A");
  const int g = warp + NW * it;
  if (NW * (it + 1) <= NTILE * SLIM_TRI_BLOCKS || g < NTILE * SLIM_TRI_BLOCKS) {
    const bool is_a = NTILE == 2 && g >= SLIM_TRI_BLOCKS;
    slim_tri_piece<T, Dst>(is_a ? adst : tdst, is_a ? asrc : tsrc, is_a ? g - SLIM_TRI_BLOCKS : g, lane, live, at);
  }
}

// scan_store_o's stores for the slim output scans (session 21, fscan21): the same O values to the
// same addresses, in fewer instructions: the warp's 16 value rows x 64 tokens staged by four
// stmatrix.x4.trans (matrix m of step j: tokens 16 j + 8 (m >> 1) .., values 8 (m & 1) ..; lane l
// gives row l & 7 of matrix l >> 3) instead of 32 two-byte stores, then each lane's four 16-byte
// rows (token (lane >> 1) + 16 i, values 8 (lane & 1) ..) read unconditionally and stored under
// the predicate token < len from one base address (no branch per row). Rounding: IO::pack rounds
// each fp32 to the io dtype as IO::from_f does.
// The warp's O accumulators (16 value rows x 64 tokens) rounded to the io dtype (IO::pack, as
// IO::from_f) and staged by four stmatrix.x4.trans: step j's matrices at `row` + 16 j rows of
// RS elements (matrix m: tokens 16 j + 8 (m >> 1) .., values 8 (m & 1) ..; lane l gives row l & 7
// of matrix l >> 3). slim_store_o's and slim_store_o_tma's staging.
template <typename T, int RS>
__device__ __forceinline__ void slim_stage_o(T* row, const float (&oacc)[8][4]) {
  using IO = Io<T>;
#pragma unroll
  for (int j = 0; j < 4; ++j) {
    u32 r[4];
    r[0] = IO::pack(oacc[2 * j][0], oacc[2 * j][1]);
    r[1] = IO::pack(oacc[2 * j][2], oacc[2 * j][3]);
    r[2] = IO::pack(oacc[2 * j + 1][0], oacc[2 * j + 1][1]);
    r[3] = IO::pack(oacc[2 * j + 1][2], oacc[2 * j + 1][3]);
    stsm_x4_t(row + 16 * j * RS, r);
  }
}

// The staged O tile's rows to global memory under the predicate token < len (slim_store_o's, and
// slim_store_o_tma's for a partial chunk): lane l stores token (l >> 1) + 16 i's 8-value half l & 1
// as one 16-byte store, read from src (that lane's row of token l >> 1 and its half; the tile's rows
// RS elements apart).
template <typename T, int V, int RS>
__device__ __forceinline__ void slim_store_o_rows(const T* src, T* o, long long t0, int len, int HO, int h, int v0,
                                                  int lane) {
  const int tok = lane >> 1, hf = lane & 1;
  const size_t step = static_cast<size_t>(16) * HO * V;
  T* dst = o + (static_cast<size_t>(t0 + tok) * HO + h) * V + v0 + 8 * hf;
#pragma unroll
  for (int i = 0; i < 4; ++i)
    st_global16_if(dst + i * step, *reinterpret_cast<const uint4*>(src + 16 * i * RS), tok + 16 * i < len);
}

template <typename T, int V, int OP>
__device__ __forceinline__ void slim_store_o(T* Os, const float (&oacc)[8][4], T* o, long long t0, int len, int HO,
                                             int h, int v0, int lane) {
  T* row = Os + (8 * (lane >> 4) + (lane & 7)) * OP + 8 * ((lane >> 3) & 1);
  slim_stage_o<T, OP>(row, oacc);
  __syncwarp();
  slim_store_o_rows<T, V, OP>(Os + (lane >> 1) * OP + 8 * (lane & 1), o, t0, len, HO, h, v0, lane);
  __syncwarp();
}

#ifndef GDN_HOST_EMU
// slim_store_o by the o tensor map (session 36, helper tm36: the w4gxt scan): the same O values
// (IO::pack of the same fp32) staged by the same four stmatrix.x4.trans into one of this warp's two
// dense [CHUNK][16] tiles, Od (the caller alternates them by chunk), in the 32-byte swizzle (the o
// map's CU_TENSOR_MAP_SWIZZLE_32B, box {16, 1, CHUNK}: token r's 8-value half hf at byte 32 r + 16
// (hf ^ ((r >> 2) & 1)); conflict-free: the 8 rows of one matrix land on 8 distinct 16-byte bank
// groups), then ONE tensor-map store of the box (values v0 .., head h, tokens t0 ..) issued by lane
// 0 after every lane's fence.proxy.async and a warp barrier. A chunk shorter than CHUNK (a
// sequence's last) keeps slim_store_o's predicated 16-byte stores from the staged tile (the box
// would write the next sequence's rows). Before Od is rewritten, lane 0 waits until at most its
// latest store group (the other tile's, one chunk step ago) still reads shared memory, i.e. the
// store from Od two steps ago is read (wait_group.read 1: on sm_90a the bulk groups and cp.async
// groups share the SB0 scoreboard, so a wait for 0 here would also wait for the cp.async group
// committed at the end of the previous step; 1 leaves it in flight, as the step's top wait did).
// The caller waits for the writes (tma_store_wait<0>) before the block ends.
template <typename T, int V>
__device__ __forceinline__ void slim_store_o_tma(T* Od, const float (&oacc)[8][4], const dnnp::TmaDesc* omap, T* o,
                                                 long long t0, int len, int HO, int h, int v0, int lane) {
  if (lane == 0) dnnp::tma_store_wait_read<1>();
  __syncwarp();
  const int r0 = 8 * (lane >> 4) + (lane & 7), hf0 = (lane >> 3) & 1;  // the row lane l addresses (+16 j)
  T* row = Od + r0 * 16 + 8 * (hf0 ^ ((r0 >> 2) & 1));
  slim_stage_o<T, 16>(row, oacc);
  if (len == CHUNK) {
    dnnp::fence_proxy_async_shared();
    __syncwarp();
    if (lane == 0) {
      dnnp::tma_store_3d(omap, v0, h, static_cast<int>(t0), Od);
      dnnp::tma_store_commit();
    }
    return;
  }
  __syncwarp();
  // Token (lane >> 1) + 16 i keeps token lane >> 1's swizzle phase ((tok >> 2) & 1): 16 i / 4 is even.
  const int tok = lane >> 1, hf = lane & 1;
  slim_store_o_rows<T, V, 16>(Od + tok * 16 + 8 * (hf ^ ((tok >> 2) & 1)), o, t0, len, HO, h, v0, lane);
  __syncwarp();
}
#endif

// One chunk of the slim update for one warp (16 value rows), the one body of every slim pass (the
// uncut output scan, the piece summary, the seeded piece scan): P' = X kᵀ (and, OUT, O' = X qᵀ);
// Z = vᵀ diag(β) − P' diag(ck) (WITH_V; else −P' diag(ck)); Uᵀ = Z Tᵀ; OUT: O = O' diag(cq) + Uᵀ Aᵀ,
// stored; X ← e^{Γ_last} X + (Uᵀ diag(cr)) k.
// MID (OUT only) runs between the last read of Vs / Ts / As and the O store (the seeded scan's
// barrier and refill of the single-buffered tiles). PRE(kk) runs at the top of each of the K / 16
// key steps of the P', O' products (session 21, fscan21: the output scan issues its next stage's
// copies there, in the tensor pipe's issue gaps; the others pass none).
// UPD(kk) runs at the top of each of the state update's 4 token steps (session 21, fscan21b: the
// seeded piece scan issues its v, T, A refill there).
using SlimNoHook = StepNoHook;

// Z = vᵀ diag(β) − P' diag(ck) (WITH_V; else −P' diag(ck)) of this warp's 16 value rows x 64 tokens,
// rounded to the io dtype in the mma A layout per token step kk (the A operand of Uᵀ = Z Tᵀ): the
// one Z build of slim_chunk_tail and slim_chunk_tail_wg.
template <typename T, int VP, bool WITH_V>
__device__ __forceinline__ void slim_build_z(u32 (&za)[4][4], const float (&pacc)[8][4], const T* Vs, const float* Sc,
                                             int vcol, int lane) {
  using IO = Io<T>;
  const int cq = 2 * (lane & 3);
  const int mi = lane >> 3;
#pragma unroll
  for (int kk = 0; kk < 4; ++kk) {
    u32 vv[4] = {0u, 0u, 0u, 0u};
    if constexpr (WITH_V) ldsm_x4_t(vv, &Vs[(16 * kk + (lane & 7) + 8 * (mi >> 1)) * VP + vcol + 8 * (mi & 1)]);
#pragma unroll
    for (int m = 0; m < 4; ++m) {
      const int nt = 2 * kk + (m >> 1), hf = m & 1;
      const int tok = 8 * nt + cq;
      const float2 ck = *reinterpret_cast<const float2*>(&Sc[0 * CHUNK + tok]);
      if constexpr (WITH_V) {
        const float2 bt = *reinterpret_cast<const float2*>(&Sc[1 * CHUNK + tok]);
        const T* vp = reinterpret_cast<const T*>(&vv[m]);
        const float z0 = fmaf(bt.x, IO::to_f(vp[0]), -ck.x * pacc[nt][2 * hf]);
        const float z1 = fmaf(bt.y, IO::to_f(vp[1]), -ck.y * pacc[nt][2 * hf + 1]);
        za[kk][m] = IO::pack(z0, z1);
      } else {
        za[kk][m] = IO::pack(-ck.x * pacc[nt][2 * hf], -ck.y * pacc[nt][2 * hf + 1]);
      }
    }
  }
}

// The packed lower-triangular T, A (slim_tri_round) staged for the wgmma consumers (session 24,
// trix24: w4gx, w8gx, slimsum_gx, w4dgx read T, A as wgmma B operands over whole 64-column tiles):
// tile element (i, j) at slim_wg_elem<CHUNK>(i, j) (row i = the N index). The 6 blocks above the
// diagonal are never copied (the workspace holds only the 10 lower ones): slim_tri_zero_upper
// writes their zeros once per kernel into every stage's tile, before the first cp.async group wait,
// whose fence.proxy.async + block barrier makes them visible to the wgmma (async proxy) too.
struct SlimTileWg {
  __device__ __forceinline__ int operator()(int i, int j) const { return slim_wg_elem<CHUNK>(i, j); }
};
// The smem destination of the packed copies: WG (the wgmma tail) the swizzle, else rows of CHUNK + 8.
template <bool WG>
struct SlimTileDst {
  using type = SlimTileRows;
};
template <>
struct SlimTileDst<true> {
  using type = SlimTileWg;
};
// Zeros into the 6 blocks (r, c), c > r, of NTILE staged tiles (Dst's positions) at base +
// tile_off[t] bytes: 192 16-byte pieces per tile, piece q = 32 u + 2 i + half of upper block u
// ((0,1), (0,2), (0,3), (1,2), (1,3), (2,3): 4 r + c by a nibble table), row i, columns 8 half.. of
// the block; NTH threads, thread tid the pieces tid, tid + NTH, .. (each position computed once
// for all tiles), plain shared stores.
template <typename T, int NTH, typename Dst, int NTILE>
__device__ __forceinline__ void slim_tri_zero_upper(unsigned char* base, const unsigned (&tile_off)[NTILE], int tid,
                                                    Dst at = {}) {
  constexpr int PIECES = (16 - SLIM_TRI_BLOCKS) * 16 * 2;
#pragma unroll
  for (int q0 = 0; q0 < PIECES; q0 += NTH) {
    const int q = q0 + tid;
    if (q0 + NTH <= PIECES || q < PIECES) {
      const int rc = static_cast<int>((0xB76321u >> (4 * (q >> 5))) & 15u);
      const int e = at(4 * (rc & 12) + ((q >> 1) & 15), 16 * (rc & 3) + 8 * (q & 1));
#pragma unroll
      for (int t = 0; t < NTILE; ++t)
        *reinterpret_cast<uint4*>(reinterpret_cast<T*>(base + tile_off[t]) + e) = make_uint4(0u, 0u, 0u, 0u);
    }
  }
}
// Everything of slim_chunk_warp after the P', O' products (pacc, oacc: this warp's 16 value rows x
// 64 tokens): Z, Uᵀ, O, the state update. WG_K: k in slim_wg_elem's layout (the w4gs
// scan; false: rows of KP).
template <typename T, int K, int V, int KP, int VP, bool OUT, bool WITH_V, bool WG_K, typename Mid, typename Upd>
__device__ __forceinline__ void slim_chunk_tail(float (&x)[K / 8][4], float (&pacc)[8][4], float (&oacc)[8][4],
                                                const T* Ks, const T* Vs, const T* Ts, const T* As, const float* Sc,
                                                T* Os, const FwdParams& p, long long t0, int len, int h, int v0,
                                                int vcol, float gl, int lane, Mid& mid, Upd& upd) {
  using IO = Io<T>;
  constexpr int CP = CHUNK + 8;
  const int cq = 2 * (lane & 3);
  const int brow = (lane & 7) + 8 * (lane >> 4), bcol = 8 * ((lane >> 3) & 1);
  if constexpr (OUT) mid(0);  // the seeded scan: wait for v, T, A
  u32 za[4][4];
  slim_build_z<T, VP, WITH_V>(za, pacc, Vs, Sc, vcol, lane);
  float (&uacc)[8][4] = pacc;
  zero_frags(uacc);
#pragma unroll
  for (int np = 0; np < 4; ++np) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) {
      if (kk > np) break;
      u32 bt4[4];
      ldsm_x4(bt4, &Ts[(16 * np + brow) * CP + 16 * kk + bcol]);
      IO::mma(uacc[2 * np], za[kk], bt4);
      IO::mma(uacc[2 * np + 1], za[kk], bt4 + 2);
    }
  }
  u32 ua[4][4], ur[4][4];
#pragma unroll
  for (int nt = 0; nt < 8; ++nt) {
    const int tok = 8 * nt + cq;
    float2 cqs = make_float2(0.f, 0.f);
    if constexpr (OUT) cqs = *reinterpret_cast<const float2*>(&Sc[2 * CHUNK + tok]);
    const float2 cr = *reinterpret_cast<const float2*>(&Sc[3 * CHUNK + tok]);
    if constexpr (OUT) {
      oacc[nt][0] *= cqs.x;
      oacc[nt][1] *= cqs.y;
      oacc[nt][2] *= cqs.x;
      oacc[nt][3] *= cqs.y;
      ua[nt >> 1][(nt & 1) * 2 + 0] = IO::pack(uacc[nt][0], uacc[nt][1]);
      ua[nt >> 1][(nt & 1) * 2 + 1] = IO::pack(uacc[nt][2], uacc[nt][3]);
    }
    ur[nt >> 1][(nt & 1) * 2 + 0] = IO::pack(uacc[nt][0] * cr.x, uacc[nt][1] * cr.y);
    ur[nt >> 1][(nt & 1) * 2 + 1] = IO::pack(uacc[nt][2] * cr.x, uacc[nt][3] * cr.y);
  }
  if constexpr (OUT) {
#pragma unroll
    for (int np = 0; np < 4; ++np) {
#pragma unroll
      for (int kk = 0; kk < 4; ++kk) {
        if (kk > np) break;
        u32 bb[4];
        ldsm_x4(bb, &As[(16 * np + brow) * CP + 16 * kk + bcol]);
        IO::mma(oacc[2 * np], ua[kk], bb);
        IO::mma(oacc[2 * np + 1], ua[kk], bb + 2);
      }
    }
    mid(1);  // every warp past its reads of v, T, A: the seeded scan refills them
    slim_store_o<T, V, 24>(Os, oacc, static_cast<T*>(p.o), t0, len, p.ho, h, v0, lane);
  }
  if constexpr (WG_K)
    scan_state_update<T, K, KP>(x, ur, Ks, gl, lane, upd, [](int tok, int kd) { return slim_wg_elem<K>(tok, kd); });
  else
    scan_state_update<T, K, KP>(x, ur, Ks, gl, lane, upd);
}

template <typename T, int K, int V, int KP, int VP, bool OUT, bool WITH_V, typename Mid, typename Pre = SlimNoHook,
          typename Upd = SlimNoHook>
__device__ __forceinline__ void slim_chunk_warp(float (&x)[K / 8][4], const T* Qs, const T* Ks, const T* Vs, const T* Ts,
                                                const T* As, const float* Sc, T* Os, const FwdParams& p, long long t0,
                                                int len, int h, int v0, int vcol, float gl, int lane, Mid mid,
                                                Pre pre = {}, Upd upd = {}) {
  using IO = Io<T>;
  const int brow = (lane & 7) + 8 * (lane >> 4), bcol = 8 * ((lane >> 3) & 1);
  float pacc[8][4], oacc[8][4];
#pragma unroll
  for (int nt = 0; nt < 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) pacc[nt][e] = oacc[nt][e] = 0.f;
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    pre(kk);
    u32 a[4];
    x_a_frag<T>(a, x, kk);
#pragma unroll
    for (int np = 0; np < 4; ++np) {
      u32 bk[4];
      ldsm_x4(bk, &Ks[(16 * np + brow) * KP + 16 * kk + bcol]);
      IO::mma(pacc[2 * np], a, bk);
      IO::mma(pacc[2 * np + 1], a, bk + 2);
      if constexpr (OUT) {
        u32 bq[4];
        ldsm_x4(bq, &Qs[(16 * np + brow) * KP + 16 * kk + bcol]);
        IO::mma(oacc[2 * np], a, bq);
        IO::mma(oacc[2 * np + 1], a, bq + 2);
      }
    }
  }
  slim_chunk_tail<T, K, V, KP, VP, OUT, WITH_V, false>(x, pacc, oacc, Ks, Vs, Ts, As, Sc, Os, p, t0, len, h, v0, vcol, gl,
                                                       lane, mid, upd);
}

#if !defined(GDN_HOST_EMU) || defined(GDN_WGMMA_EMU)  // the CPU emulation's wgmma: bench/gdn_wgmma_emu.h
// The io dtype's wgmma (dnnp_wgmma.cuh): m64nNk16 RS (A from registers) at N = 64 or 128, B by
// descriptor, K-major (TNSPB = 0: P', O', Uᵀ, O) or MN-major (TNSPB = 1: the state update's k).
// How the slim chunk step forms its wgmma descriptors (session 41; the same descriptors either way,
// so the same results): each built whole from its address, or one per operand tile advanced by
// offsets (dnnp::wgmma_desc_at) in the tail (Uᵀ, O, the state update) or in the whole step.
// Fewer instructions, but where ptxas then keeps the offsets' descriptors live it holds more of
// the step in registers: the fastest form was measured per scan on the H200 (fwd_slim_scan_body,
// gdn_bwd_fscan_gx.cuh).
enum class SlimDescForm { Whole, TailOffsets, Offsets };

template <typename T>
struct SlimWgN;
template <>
struct SlimWgN<gdn_bf16> {
  template <int N, int TNSPB>
  static __device__ __forceinline__ void mma(float* d, const u32* a, uint64_t b) {
    static_assert(N == 32 || N == 64 || N == 128, "the wrapped widths");
    if constexpr (N == 32) dnnp::wgmma_m64n32k16_rs_bf16_t<TNSPB>(d, a, b);
    else if constexpr (N == 64) dnnp::wgmma_m64n64k16_rs_bf16_t<TNSPB>(d, a, b);
    else dnnp::wgmma_m64n128k16_rs_bf16_t<TNSPB>(d, a, b);
  }
  // d = A · B, the first k16 step of a chain (scale-d 0: d's old values are not read).
  template <int N, int TNSPB>
  static __device__ __forceinline__ void mma_first(float* d, const u32* a, uint64_t b) {
    static_assert(N == 32 || N == 64, "the wrapped widths");
    if constexpr (N == 32) dnnp::wgmma_m64n32k16_rs_bf16_zt<TNSPB>(d, a, b);
    else dnnp::wgmma_m64n64k16_rs_bf16_zt<TNSPB>(d, a, b);
  }
};
template <>
struct SlimWgN<gdn_f16> {
  template <int N, int TNSPB>
  static __device__ __forceinline__ void mma(float* d, const u32* a, uint64_t b) {
    static_assert(N == 32 || N == 64 || N == 128, "the wrapped widths");
    if constexpr (N == 32) dnnp::wgmma_m64n32k16_rs_f16_t<TNSPB>(d, a, b);
    else if constexpr (N == 64) dnnp::wgmma_m64n64k16_rs_f16_t<TNSPB>(d, a, b);
    else dnnp::wgmma_m64n128k16_rs_f16_t<TNSPB>(d, a, b);
  }
  // d = A · B, the first k16 step of a chain (scale-d 0: d's old values are not read).
  template <int N, int TNSPB>
  static __device__ __forceinline__ void mma_first(float* d, const u32* a, uint64_t b) {
    static_assert(N == 32 || N == 64, "the wrapped widths");
    if constexpr (N == 32) dnnp::wgmma_m64n32k16_rs_f16_zt<TNSPB>(d, a, b);
    else dnnp::wgmma_m64n64k16_rs_f16_zt<TNSPB>(d, a, b);
  }
};
// A chain d = Σ_kk A_kk · B_kk over STEPS k16 steps at N = 64 (desc(kk): step kk's B descriptor),
// its first step on the scale-d-0 form (session 41): d's old values are never read, so the chain
// needs no zeroed accumulators. Uᵀ here, the reverse scan's dUᵀ and dRᵀ (gdn_bwd_dscan_gx.cuh).
template <typename T, int TNSPB, int STEPS, typename Desc>
__device__ __forceinline__ void slim_wg64_chain(float* d, const u32 (&a)[STEPS][4], Desc desc) {
#pragma unroll
  for (int kk = 0; kk < STEPS; ++kk) {
    if (kk == 0) SlimWgN<T>::template mma_first<64, TNSPB>(d, a[kk], desc(kk));
    else SlimWgN<T>::template mma<64, TNSPB>(d, a[kk], desc(kk));
  }
}

// slim_chunk_tail on the warpgroup (session 24, wgx24; the w4gx scan): the same Z, then
//   Uᵀ = Z Tᵀ       wgmma K-major, B = T staged in slim_wg_elem's 128-byte swizzle (row i = N index,
//                   64 columns j = K index = one 128-byte swizzle row; the tile is one 8 KB atom);
//   O += Uᵀ Aᵀ      the same with B = A;
//   X ← e^{Γ_last} X + (Uᵀ diag(cr)) k   wgmma m64n128k16 with B = k MN-major (tnspB = 1; k staged
//                   [token][key] in slim_wg_elem's layout: K = tokens, N = keys, SBO 1,024 B between
//                   8-token groups, LBO 8,192 B between the 64-key atoms), accumulating into X itself
//                   (the per-warp m64n128 accumulator layout is x[K / 8][4]'s mma.sync C layout).
// Triangular T, A: full N = 64 products; the blocks above the diagonal that slim_chunk_tail's
// mma.sync loops skip (kk > np) are exact zeros in the workspace (the prep writes every element:
// tcinv_t_pair's 0 above T's unit diagonal, slim_store_la's 0 above A's), so they add exact zeros.
// (N sub-ranges per token step, 64 − 16 kk columns from row 16 kk, made ptxas serialize every
// wgmma of the kernel, C7511 "insufficient register resources": not used.) Batches: Uᵀ (4 wgmma)
// → wait (meanwhile X scaled by e^{Γ_last}, O' by diag(cq)) → ua, ur → {O (4 wgmma)}, {state update (4 wgmma)} as
// two commit groups → wait for O, store it (the state update in flight) → wait. The caller makes
// k, T, A visible to the async proxy (chunk_pipeline_in_body's PROXY_FENCE). Numerics: the same
// io-rounded operands as slim_chunk_tail, fp32 accumulation in the tensor core's order.
// Session 24 (pwx24: the piece path's slimsum_gx / w4dgx) with slim_chunk_tail's parameters: OUT =
// false (the summary: no O batch, As, Os unused), WITH_V = false (the M_j blocks: Z = −P' diag(ck)),
// MID (OUT only: mid(0) before the Z build, the seeded scan's wait for v, T, A; mid(1) after the
// wait for the O batch, the last read of v, T, A, its barrier) and UPD (the seeded scan's v, T, A
// refill: all four token steps' copies right after mid(1), while the state update batch flies;
// the refilled tiles are read by no wgmma in flight: the Uᵀ and O batches are complete). The
// uncut scan's call (OUT, WITH_V, no hooks) is wgx24's code.
// UOUT (session 28, helper sb28: the backward's slim replay gdn_bwd_fscan_gx{,4}sl, OUT = false):
// uout(ua) gets this warp's io-rounded Uᵀ (unscaled: the A fragments the O batch would take) right
// after the state update's batch is issued (SlimNoHook: none, ua not formed). With OUT (session 38:
// the forward's U-saving scans, fwd_slim_scan_body's SAVE_U) after the O batch's wait and the UPD
// steps, before O's store: the same fragments the replay would hand over.
// OST (session 36, helper tm36: the w4gxt scan, OUT only): ost(oacc) stores O in place of
// slim_store_o (SlimNoHook: slim_store_o), at the same point (after the O batch's wait and the UPD
// steps, while the state update's batch flies).
// One warp's io Uᵀ (16 value rows × 64 tokens, the A fragments ua of slim_chunk_tail_wg's UOUT
// hook) to the U tile the backward's token stage reads ([64 tokens][V] io, bwd_u_tiles), through
// shared memory: four stmatrix.x4.trans into `stage` (this warp's own 16 columns of a [token][VP]
// tile nothing else reads until the next block barrier), then four 16-byte stores per lane
// (token rows lane / 2 + 16 i, value columns 8 · (lane % 2) of the warp's 16). `tile` points at
// the chunk's U tile, column of the warp's first value row. Shared by the backward's slim replay
// (fscan_sl_chunks, session 28) and the forward's U-saving scans (session 38).
template <typename T, int VP, int V>
__device__ __forceinline__ void slim_store_u_tile(T* stage, T* tile, const u32 (&ua)[4][4], int lane) {
  __syncwarp();  // every lane's reads of these columns (the Z build) done
  const int mrow = 8 * (lane >> 4) + (lane & 7), mhf = (lane >> 3) & 1;  // the row lane l addresses
#pragma unroll
  for (int j = 0; j < 4; ++j) stsm_x4_t(stage + (16 * j + mrow) * VP + 8 * mhf, ua[j]);
  __syncwarp();
  const int tok = lane >> 1, hf = lane & 1;
  T* dst = tile + static_cast<size_t>(tok) * V + 8 * hf;
#pragma unroll
  for (int i = 0; i < 4; ++i)
    *reinterpret_cast<uint4*>(dst + static_cast<size_t>(16) * i * V) =
        *reinterpret_cast<const uint4*>(stage + (tok + 16 * i) * VP + 8 * hf);
}

template <typename H>
struct SlimHookLive {
  static constexpr bool value = true;
};
template <>
struct SlimHookLive<SlimNoHook> {
  static constexpr bool value = false;
};
template <typename T, int K, int V, int VP, bool OUT = true, bool WITH_V = true, bool DESC_OFFSETS = false,
          typename Mid = SlimNoHook, typename Upd = SlimNoHook, typename UOut = SlimNoHook, typename OSt = SlimNoHook>
__device__ __forceinline__ void slim_chunk_tail_wg(float (&x)[K / 8][4], float (&pacc)[8][4], float (&oacc)[8][4],
                                                   const T* Ks, const T* Vs, const T* Ts, const T* As, const float* Sc,
                                                   T* Os, const FwdParams& p, long long t0, int len, int h, int v0,
                                                   int vcol, float gl, int lane, Mid mid = {}, Upd upd = {},
                                                   UOut uout = {}, OSt ost = {}) {
  static_assert(K == 128 && CHUNK == 64, "one 64-token atom per tile, two key atoms");
  constexpr bool U_OUT = SlimHookLive<UOut>::value;
  using IO = Io<T>;
  const int cq = 2 * (lane & 3);
  if constexpr (OUT) mid(0);  // the seeded scan: wait for v, T, A (and make T, A visible to wgmma)
  u32 za[4][4];
  slim_build_z<T, VP, WITH_V>(za, pacc, Vs, Sc, vcol, lane);
  float (&uacc)[8][4] = pacc;  // written by the chain's first k16 step (scale-d 0)
  const uint32_t tb = static_cast<uint32_t>(__cvta_generic_to_shared(Ts));
  uint32_t ab = 0;
  if constexpr (OUT) ab = static_cast<uint32_t>(__cvta_generic_to_shared(As));
  const uint32_t kb = static_cast<uint32_t>(__cvta_generic_to_shared(Ks));
  // Token step kk of a T or A tile: all 64 rows (N), columns (K) 16 kk .. (+32 B in the swizzle row).
  // DESC_OFFSETS: one descriptor per tile advanced by offsets, else each built whole (SlimDescForm).
  auto tile = [](uint32_t base, int kk) { return dnnp::wgmma_desc_at<DESC_OFFSETS>(base, 32 * kk, 16, 1024, 1); };
  auto kcol = [](uint32_t base, int kk) {  // the state update's B: k MN-major, 16 tokens per k16 step
    return dnnp::wgmma_desc_at<DESC_OFFSETS>(base, 2048 * kk, 8192, 1024, 1);
  };
  dnnp::wgmma_fence();
  slim_wg64_chain<T, 0>(&uacc[0][0], za, [&](int kk) { return tile(tb, kk); });
  dnnp::wgmma_commit();
  // While Uᵀ is in flight: X ← e^{Γ_last} X (scan_state_update's scaling), O' diag(cq).
  const float decay = __expf(gl);
  scale_frags(x, decay);
  if constexpr (OUT) {
#pragma unroll
    for (int nt = 0; nt < 8; ++nt) {
      const float2 cqs = *reinterpret_cast<const float2*>(&Sc[2 * CHUNK + 8 * nt + cq]);
      oacc[nt][0] *= cqs.x;
      oacc[nt][1] *= cqs.y;
      oacc[nt][2] *= cqs.x;
      oacc[nt][3] *= cqs.y;
    }
  }
  dnnp::wgmma_wait<0>();
  dnnp::wgmma_fence_frags(uacc);
  u32 ua[4][4], ur[4][4];
#pragma unroll
  for (int nt = 0; nt < 8; ++nt) {
    const float2 cr = *reinterpret_cast<const float2*>(&Sc[3 * CHUNK + 8 * nt + cq]);
    if constexpr (OUT || U_OUT) {
      ua[nt >> 1][(nt & 1) * 2 + 0] = IO::pack(uacc[nt][0], uacc[nt][1]);
      ua[nt >> 1][(nt & 1) * 2 + 1] = IO::pack(uacc[nt][2], uacc[nt][3]);
    }
    ur[nt >> 1][(nt & 1) * 2 + 0] = IO::pack(uacc[nt][0] * cr.x, uacc[nt][1] * cr.y);
    ur[nt >> 1][(nt & 1) * 2 + 1] = IO::pack(uacc[nt][2] * cr.x, uacc[nt][3] * cr.y);
  }
  if constexpr (OUT) dnnp::wgmma_fence_frags(oacc);
  dnnp::wgmma_fence_frags(x);
  dnnp::wgmma_fence();
  if constexpr (OUT) {
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) SlimWgN<T>::template mma<64, 0>(&oacc[0][0], ua[kk], tile(ab, kk));
    dnnp::wgmma_commit();
  }
#pragma unroll
  for (int kk = 0; kk < 4; ++kk)
    SlimWgN<T>::template mma<128, 1>(&x[0][0], ur[kk], kcol(kb, kk));
  dnnp::wgmma_commit();
  if constexpr (U_OUT && !OUT) uout(ua);
  if constexpr (OUT) {
    dnnp::wgmma_wait<1>();
    dnnp::wgmma_fence_frags(oacc);
    mid(1);  // every warp past its reads of v, T, A (the O batch complete): the seeded scan refills them
#pragma unroll
    for (int kk = 0; kk < 4; ++kk) upd(kk);
    if constexpr (U_OUT) uout(ua);  // the saving scans (session 38): ua no longer read by the O batch
    if constexpr (SlimHookLive<OSt>::value)
      ost(oacc);  // w4gxt (session 36): the caller's store (staged, then one tensor-map store per warp)
    else
      slim_store_o<T, V, 24>(Os, oacc, static_cast<T*>(p.o), t0, len, p.ho, h, v0, lane);
  }
  dnnp::wgmma_wait<0>();
  dnnp::wgmma_fence_frags(x);
}

// slim_chunk_warp with the P', O' products on the warpgroup (session 23, wg23; the w4gs scan: the
// block's 4 warps are one warpgroup, M = 64 = its value rows): per key step kk, P' += X_kk kᵀ_kk
// and O' += X_kk qᵀ_kk by wgmma m64n64k16 (A: x_a_frag's io-rounded fragments of this warp's 16
// rows, the mma.sync A layout; B: k or q, 64 tokens x 16 keys, in slim_wg_elem's 128-byte swizzle
// K-major layout: descriptors SBO 1,024 B, k16 step kk at atom kk / 4, +32 B · (kk % 4)), read
// once per warpgroup instead of once per warp. The 16 wgmma are one batch; PRE(0..7) (the next
// stage's copies) run while it is in flight. The accumulators' per-warp layout is mma.sync's C
// per n8 tile: the rest of the step is slim_chunk_tail. The caller makes q, k visible to the
// async proxy (chunk_pipeline_in_body's PROXY_FENCE). Numerics: the same io-rounded operands,
// fp32 accumulation in the tensor core's order (not bitwise mma.sync's by construction; the
// H200's hashes equal w4's on every forward test case, session 23).
// Session 24 (pw24): slim_chunk_warp's template parameters and hooks for the piece path: OUT = false
// (the summary: P' only, no O' batch, Qs unused) with WITH_V = false for its M_j blocks, and the
// seeded scan's MID / UPD hooks (passed on to slim_chunk_tail as slim_chunk_warp does); w4gs's
// call (OUT, WITH_V, no MID / UPD) is the session-23 code. TAIL_WG (session 24, wgx24: the w4gx /
// w8gx scans; session 24, pwx24: also the piece path's slimsum_gx / w4dgx with OUT / WITH_V / MID /
// UPD): the rest of the step by slim_chunk_tail_wg. UOUT (session 28, sb28): uout passed on to it;
// OST (session 36, tm36) likewise.
template <typename T, int K, int V, int VP, bool OUT = true, bool WITH_V = true, bool TAIL_WG = false,
          SlimDescForm DESC = SlimDescForm::Whole, typename Pre, typename Mid = SlimNoHook, typename Upd = SlimNoHook,
          typename UOut = SlimNoHook, typename OSt = SlimNoHook>
__device__ __forceinline__ void slim_chunk_wg(float (&x)[K / 8][4], const T* Qs, const T* Ks, const T* Vs, const T* Ts,
                                              const T* As, const float* Sc, T* Os, const FwdParams& p, long long t0,
                                              int len, int h, int v0, int vcol, float gl, int lane, Pre pre, Mid mid = {},
                                              Upd upd = {}, UOut uout = {}, OSt ost = {}) {
  static_assert(K == 128, "one descriptor stride per K");
  float pacc[8][4], oacc[8][4];
  u32 a[K / 16][4];
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) x_a_frag<T>(a[kk], x, kk);
#pragma unroll
  for (int nt = 0; nt < 8; ++nt)
#pragma unroll
    for (int e = 0; e < 4; ++e) {
      pacc[nt][e] = oacc[nt][e] = 0.f;
      dnnp::wgmma_fence_operand(pacc[nt][e]);
      if constexpr (OUT) dnnp::wgmma_fence_operand(oacc[nt][e]);
    }
  const uint32_t kb = static_cast<uint32_t>(__cvta_generic_to_shared(Ks));
  uint32_t qb = 0;
  if constexpr (OUT) qb = static_cast<uint32_t>(__cvta_generic_to_shared(Qs));
  constexpr uint32_t ATOM = 64 * CHUNK * 2;  // a swizzle atom: 64 keys x CHUNK tokens
  auto desc = [&](uint32_t base, int kk) {
    return dnnp::wgmma_desc_at<DESC == SlimDescForm::Offsets>(base, ATOM * (kk >> 2) + 32 * (kk & 3), 16, 1024, 1);
  };
  dnnp::wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) {
    SlimWgN<T>::template mma<64, 0>(&pacc[0][0], a[kk], desc(kb, kk));
    if constexpr (OUT) SlimWgN<T>::template mma<64, 0>(&oacc[0][0], a[kk], desc(qb, kk));
  }
  dnnp::wgmma_commit();
#pragma unroll
  for (int kk = 0; kk < K / 16; ++kk) pre(kk);
  dnnp::wgmma_wait<0>();
  dnnp::wgmma_fence_frags(pacc);
  if constexpr (OUT) dnnp::wgmma_fence_frags(oacc);
  if constexpr (TAIL_WG) {
    constexpr bool TAIL_OFFSETS = DESC != SlimDescForm::Whole;
    slim_chunk_tail_wg<T, K, V, VP, OUT, WITH_V, TAIL_OFFSETS>(x, pacc, oacc, Ks, Vs, Ts, As, Sc, Os, p, t0, len, h, v0,
                                                               vcol, gl, lane, mid, upd, uout, ost);
  } else {
    static_assert(!SlimHookLive<UOut>::value && !SlimHookLive<OSt>::value, "uout, ost: the warpgroup tail only");
    slim_chunk_tail<T, K, V, K + 8, VP, OUT, WITH_V, true>(x, pacc, oacc, Ks, Vs, Ts, As, Sc, Os, p, t0, len, h, v0, vcol,
                                                           gl, lane, mid, upd);
  }
}
#endif

// The first-early piece path's seed of piece 1 (the chain from seed 1, chain3r, reads it; so does
// the rest scan where the chain has no step): the first piece's end state of (sequence b, head h),
// fp32, into seed slot b·P + 1 of ws_seed (P = fp.pieces, HO = p.ho, as the caller read them).
// Shared by w4dgx0 (fwd_slim_piece_scan_body's FIRST part) and w4gx0 (fwd_slim_scan_body's FIRST).
template <int K, int V>
__device__ __forceinline__ void store_piece1_seed(float* ws_seed, int P, int HO, int b, int h,
                                                  const float (&x)[K / 8][4], int vr, int cq) {
  store_fp32_frags<K>(seed_slot<V, K>(ws_seed, P, HO, b, 1, h), x, vr, cq);
}

// The slim output scan: grid (V / VS, HO, N), NW warps of 16 value rows, one piece per sequence
// (initial state in, final state out; the state checkpoints by ckpt_store). STAGES-deep cp.async
// pipeline over the chunks. Since session 21 (fscan21) chunk c + STAGES − 1's copies are issued
// inside chunk c's step, a share at each P', O' key step (chunk_pipeline_in_body, slim_chunk_warp's
// PRE: they fill the tensor pipe's issue gaps instead of ~860 cycles of their own per chunk ahead
// of the barrier), with one block barrier per chunk instead of two and O staged by stmatrix
// (slim_store_o); the same arithmetic in the same order (O and states bitwise session 20's).
// OV: the consumer beside the persistent prep (fwd_slim_prep_ov_body): before it issues the copies
// of chunk c it waits for unit (c, h)'s flag (a block-wide wait: its copies stay whole, at the
// top of the step, chunk_pipeline), and every block waits for the prep grid before it exits.
// WG (session 23, wg23: the w4gs scan, NW = 4 warps = one warpgroup): the P', O' products by
// wgmma (slim_chunk_wg) with q, k staged in the 128-byte swizzle (slim_wg_elem; copy round it:
// tokens 8 it + (tid >> 4), 16 B chunk tid & 15; the dynamic shared memory 1024-byte aligned,
// checked), the stage made visible to the async proxy after each group wait
// (chunk_pipeline_in_body's PROXY_FENCE).
// WGX (session 24, wgx24: the w4gx scan, with WG): the rest of the step on the warpgroup too
// (slim_chunk_tail_wg: Uᵀ, O by wgmma with B = T, A; the state update with B = k MN-major), T and
// A staged in the same 128-byte swizzle (copy round it: row tid / 8 + 16 it, 16 B chunk tid % 8;
// one 8 KB atom each in their 9,216-byte slots, 1024-byte aligned). With NW = 8 (w8gx): two
// warpgroups, each its own 64 value rows' wgmma on the same staged B tiles (q, k copy round it:
// tokens 16 it + (tid >> 4); T, A rows tid / 8 + 32 it).
// SPLIT (session 35, sc35: gdn_fwd_slimscan_*_k128_w4gxs, with WGX, NW = 4): chunk c + 2's copies
// split between the P', O' batch (the q, k rounds, one per key step) and the tail (T, A, v, the
// scalars: slim_chunk_tail_wg's UPD steps, after the O batch's wait while the state update runs):
// the same copies into the same stage within the same group (bitwise w4gx). With NW = 8 (session
// 35, helper w8s35: gdn_fwd_slimscan_*_k128_w8gxs): w8gx's 4 q, k rounds in key steps 0 .. 3, its
// 3 T, A rounds, 4 v rounds and the scalars in the tail; the same group as w8gx's (bitwise w8gx),
// whose 2 stages leave the tail's copies only the rest of the step (the O store) to land.
// REST (session 32, pc32: gdn_fwd_slimscan_*_k128_w4gxr, with WGX, NW = 4): pieces 1 ..= P − 1 of
// the first-early piece path (grid z N·(P−1), piece_range_first's cut) from their fp32 seeds, the
// last piece writing the final state: w4gx's three stages at one block per SM where the pieces'
// blocks fit in one wave (w4dgxr's 111,616-byte layout runs two per SM). The same per-warp
// operations as w4gx and w4dgxr.
// FIRST (session 34, fp34: gdn_fwd_slimscan_*_k128_w4gx0, with WGX, NW = 4): the first piece
// alone (grid z N, piece_range_first's cut) from the initial state, its end state stored fp32 as
// piece 1's seed (w4dgx0's store): w4gx's three stages at one block per SM beside the summary of
// pieces 1 ..= P − 2 (w4dgx0's 111,616-byte layout shares its SM with one summary block). The
// same per-warp operations as w4gx and w4dgx0.
// SAVE_U (session 38: the entries *_su of w4gx, w4gxs, w8gx, w4gx0, w4gxr): a training forward that
// saves its backward's replay — the state checkpoints at every chunk (ckpt_store, the plan's
// cadence of 64) and here each chunk's io Uᵀ, the A fragments of its O batch, to the U tile
// [slot c·HO + h][64 tokens][V] in fp.save_u (slim_store_u_tile through this warp's columns of
// the stage's v tile, after the O batch's wait): the tile the backward's slim replay would store,
// from the same operands in the same order. O, the states and the copies are unchanged.
template <typename T, int K, int V, int NW, int STAGES, bool OV = false, bool WG = false, bool WGX = false,
          bool REST = false, bool FIRST = false, bool SPLIT = false, bool TMA_O = false, bool TMA_QK = false,
          bool O_FIRST = false, bool SAVE_U = false>
__device__ __forceinline__ void fwd_slim_scan_body(const FwdFastParams& fp, const GdnIoMaps* maps = nullptr) {
  static_assert(K == 128 && V == 128, "the slim forward serves K = V = 128");
  static_assert(!WG || ((NW == 4 || (NW == 8 && WGX)) && !OV),
                "w4gs / w4gx: one warpgroup, w8gx: two, the uncut pipeline");
  static_assert(!REST || (WGX && NW == 4), "w4gxr: w4gx on the first-early path's pieces 1 ..= P - 1");
  static_assert(!FIRST || (WGX && NW == 4 && !REST), "w4gx0: w4gx on the first-early path's first piece");
  static_assert(!WGX || WG, "w4gx: the w4gs scan with its chunk tail on the warpgroup too");
  static_assert(!SPLIT || (WGX && (NW == 4 || NW == 8) && !REST && !FIRST), "w4gxs / w8gxs: w4gx / w8gx with the copies split");
  static_assert(!TMA_O || (SPLIT && NW == 4), "w4gxt: w4gxs with O stored by the tensor map");
  static_assert(!TMA_QK || TMA_O, "w4gxu: w4gxt with q, k loaded by the tensor maps");
  static_assert(!O_FIRST || (TMA_O && !TMA_QK), "w4gxv: w4gxt with the O store ahead of the tail's copies");
  static_assert(!SAVE_U || (WGX && !TMA_O), "the U-saving scans: the uncut and first-early wgmma scans");
#if defined(GDN_HOST_EMU) && !defined(GDN_WGMMA_EMU)
  static_assert(!WG, "the CPU emulation has no wgmma (its copies would stage q, k swizzled for the mma.sync step)");
#elif defined(GDN_HOST_EMU)  // bench/gdn_wgmma_emu.h: the wgmma scans run, the tensor-map ones do not
  static_assert(!TMA_O && !TMA_QK, "the CPU emulation has no tensor-map copies");
#endif
  using S = SlimScanSmem<K, NW, STAGES>;
  constexpr int KP = S::KP, VS = S::VS, VP = S::VP, NTH = NW * 32;
  extern __shared__ __align__(16) unsigned char smem[];
  const FwdParams& p = fp.f;
  const int h = blockIdx.y;
  // SEQ_ORDER (session 34, lp34; w4gx / w8gx): the uncut wgmma scans serve the longest-first order
  // (not the piece path's parts: w4gx0 and w4gxr keep blockIdx.z's sequence, as its summary and chain).
  constexpr bool SEQ_ORDER = WGX && !REST && !FIRST;
  const int b = REST        ? static_cast<int>(blockIdx.z) / (fp.pieces - 1)
                : SEQ_ORDER ? seq_of_block(fp.f, static_cast<int>(blockIdx.z))
                            : static_cast<int>(blockIdx.z);
  const int j = REST ? static_cast<int>(blockIdx.z) % (fp.pieces - 1) + 1 : 0;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  const int HO = p.ho;
  const int qh = h / (HO / p.h), kh = h / (HO / p.hk), vh = h / (HO / p.hv);
  const int vs0 = blockIdx.x * VS;
  const int v0 = vs0 + 16 * warp;
  const int vr = v0 + (lane >> 2);  // this thread's rows: vr and vr + 8
  const int cq = 2 * (lane & 3);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  int cb_, c0_, c1_;  // the sequence's first chunk, this block's chunks
  if constexpr (REST || FIRST) {
    piece_range_first(fp, b, j, cb_, c0_, c1_);
  } else {
    cb_ = c0_ = p.chunk_offsets[b];
    c1_ = p.chunk_offsets[b + 1];
  }
  const int cb = cb_, c_begin = c0_, c_end = c1_;
  const int row = state_row(p, b);

  const CkptSink ck = ckpt_sink(fp, b);

  float x[K / 8][4];
  if constexpr (REST)
    load_seed_frags<K>(x, seed_slot<V, K>(fp.ws_seed, fp.pieces, HO, b, j, h), vr, cq);
  else
    load_initial_state_frags<K>(x, p, row, (static_cast<size_t>(row) * HO + h) * V * K, vr, cq);
#if !defined(GDN_HOST_EMU) || defined(GDN_WGMMA_EMU)  // the CPU emulation's wgmma: bench/gdn_wgmma_emu.h
  if constexpr (WG) {  // the swizzle atoms' 1024-byte alignment (stage offsets: multiples of 1024)
    static_assert(S::q_off % 1024 == 0 && S::k_off % 1024 == 0 && S::stage % 1024 == 0, "SW128 atoms aligned");
    static_assert(!WGX || (S::t_off % 1024 == 0 && S::a_off % 1024 == 0), "w4gx: T, A atoms aligned");
    dnnp::trap_unless_swizzle_aligned(smem);
    if constexpr (TMA_QK) {  // w4gxu: one mbarrier per stage for the q, k boxes (qk_bar), one arrival per warp
      static_assert(S::k_off - S::q_off >= CHUNK * K * 2 + 8, "w4gxu: the mbarrier in the q slot's tail");
      if (tid == 0) {
#pragma unroll
        for (int s2 = 0; s2 < STAGES; ++s2)
          dnnp::mbar_init(reinterpret_cast<uint64_t*>(smem + s2 * S::stage + S::q_off + CHUNK * K * 2), NW);
        dnnp::mbar_init_fence();
      }
      __syncthreads();  // every warp's lane 0 arrives on them in the prologue's issue
    }
    if constexpr (WGX) {  // the packed copies' never-written upper blocks (slim_tri_zero_upper), every stage
      static_assert(STAGES == 2 || STAGES == 3, "the tile offsets below");
      constexpr unsigned so = S::stage, to = S::t_off, ao = S::a_off;
      if constexpr (STAGES == 2) {
        slim_tri_zero_upper<T, NTH, SlimTileWg, 4>(smem, {to, ao, so + to, so + ao}, tid);
      } else {
        slim_tri_zero_upper<T, NTH, SlimTileWg, 6>(smem, {to, ao, so + to, so + ao, 2 * so + to, 2 * so + ao}, tid);
      }
    }
  }
#endif

  const T* qg = static_cast<const T*>(p.q);
  const T* kg = static_cast<const T*>(p.k);
  const T* vg = static_cast<const T*>(p.v);
  // The stage copy with compile-time trip counts (session 13 round 3, slim15): each thread's
  // pieces are fixed (the same 16-byte pieces and smem layout as round 1's tid-strided loops,
  // which the compiler kept as generic loops with per-piece 64-bit index arithmetic): its first
  // source / destination address once per tile, then constant strides.
  constexpr int KV = K / 8, VV = VS / 8;
  constexpr int QIT = CHUNK * KV / NTH, QRS = NTH / KV;  // q, k rows: rounds, rows per round
  constexpr int VIT = CHUNK * VV / NTH, VRS = NTH / VV;  // v columns of the block
  constexpr int TIT = SlimTriRounds<NW, 2>::n;        // T, A (packed tiles, slim_tri_round)
  constexpr int SCN = SLIM_SCALARS * CHUNK / 4;           // 16-byte pieces of the scalars
  static_assert(CHUNK * KV % NTH == 0 && NTH % KV == 0 && CHUNK * VV % NTH == 0 && NTH % VV == 0 && SCN <= NTH,
                "whole rounds of whole rows");
  const int qr0 = tid / KV, qc = 8 * (tid % KV);
  const int vr0 = tid / VV, vc = 8 * (tid % VV);
  const size_t qstep = static_cast<size_t>(QRS) * p.h * K, kstep = static_cast<size_t>(QRS) * p.hk * K;
  const size_t vstep = static_cast<size_t>(VRS) * p.hv * V;
  // The copies of chunk c into stage st in pieces (session 21, fscan21): round r of the q, k rows
  // (r < QIT), of the v columns (r < VIT), of T and A (r < TIT), the scalars, each a single
  // cp.async without a branch (rows past len: zero-filled by the copy, src-size 0; live == false:
  // zeros only, into a stage no chunk reads again, and no scalar copy); `issue` runs them all in
  // session 13's order (q, k; v; T, A; scalars), `issue_step(kk)` the share of key step kk.
  auto at = [&](int c) { return slim_chunk_at(c, cb, cs, ce, HO, h); };
  auto copy_qk = [&](const SlimChunkAt& d, unsigned char* base, int it, bool live) {
    if constexpr (WG) {
      static_assert(QRS == NTH / 16 && KV == 16, "a round = NTH / 16 tokens x 16 chunks");
      const int tok = QRS * it + (tid >> 4), kd = 8 * (tid & 15);
      const bool full = live && tok < d.len;
      cp_async16_zfill(reinterpret_cast<T*>(base + S::q_off) + slim_wg_elem<K>(tok, kd),
                       qg + ((d.t0 + tok) * p.h + qh) * K + kd, full);
      cp_async16_zfill(reinterpret_cast<T*>(base + S::k_off) + slim_wg_elem<K>(tok, kd),
                       kg + ((d.t0 + tok) * p.hk + kh) * K + kd, full);
      return;
    }
    const bool full = live && qr0 + it * QRS < d.len;
    cp_async16_zfill(reinterpret_cast<T*>(base + S::q_off) + (qr0 + it * QRS) * KP + qc,
                     qg + ((d.t0 + qr0) * p.h + qh) * K + qc + it * qstep, full);
    cp_async16_zfill(reinterpret_cast<T*>(base + S::k_off) + (qr0 + it * QRS) * KP + qc,
                     kg + ((d.t0 + qr0) * p.hk + kh) * K + qc + it * kstep, full);
  };
  auto copy_v = [&](const SlimChunkAt& d, unsigned char* base, int it, bool live) {
    cp_async16_zfill(reinterpret_cast<T*>(base + S::v_off) + (vr0 + it * VRS) * VP + vc,
                     vg + ((d.t0 + vr0) * p.hv + vh) * V + vs0 + vc + it * vstep, live && vr0 + it * VRS < d.len);
  };
  auto copy_ta = [&](const SlimChunkAt& d, unsigned char* base, int it, bool live) {  // round it of the packed T, A
    const size_t e = d.ch * SLIM_TRI_ELEMS;
    T* td = reinterpret_cast<T*>(base + S::t_off);
    T* ad = reinterpret_cast<T*>(base + S::a_off);
    const T* ts = static_cast<const T*>(p.ws_w) + e;
    const T* as = static_cast<const T*>(p.ws_a) + e;
    if constexpr (WGX)  // into the 128-byte swizzle (one 8 KB atom each; row = N index i), upper blocks zeroed once
      slim_tri_round<T, NW, 2, SlimTileWg>(td, ad, ts, as, warp, lane, it, live);
    else
      slim_tri_round<T, NW, 2>(td, ad, ts, as, warp, lane, it, live);
  };
  auto copy_sc = [&](const SlimChunkAt& d, unsigned char* base, bool live) {
    cp_async16_if(reinterpret_cast<float*>(base + S::s_off) + 4 * tid,
                  static_cast<const float*>(p.ws_kr) + d.ch * SLIM_SCALARS * CHUNK + 4 * tid, live && tid < SCN);
  };
  // TMA_QK (session 36, tm36: w4gxu): chunk c's q, k tiles as four tensor-map boxes (q, k keys 0 ..
  // 63 and 64 .. 127: {64, 1, 64} each, the 128-byte swizzle = slim_wg_elem's atoms), box w by lane
  // 0 of warp w (an arrive with expect_tx 8 KB each: the mbarrier counts NW = 4 arrivals) onto
  // stage st's mbarrier (in the q slot's unused tail: the swizzled tile is CHUNK · K · 2 = 16 KB of
  // its CHUNK · KP · 2). Rows past the sequence's end hold the next sequence's tokens (or the map's
  // zeros past T): the step zeroes them before its wgmma.
  auto qk_bar = [&](int st) { return reinterpret_cast<uint64_t*>(smem + st * S::stage + S::q_off + CHUNK * K * 2); };
  auto tma_qk = [&](const SlimChunkAt& d, unsigned char* base, int st) {
#ifndef GDN_HOST_EMU
    static_assert(!TMA_QK || NW == 4, "one box per warp");
    uint64_t* bar = qk_bar(st);
    dnnp::mbar_arrive_expect_tx(bar, 64 * CHUNK * 2);
    dnnp::tma_load_3d(base + (warp < 2 ? S::q_off : S::k_off) + (warp & 1) * 64 * CHUNK * 2,
                      warp < 2 ? &maps->q : &maps->k, 64 * (warp & 1), warp < 2 ? qh : kh, static_cast<int>(d.t0), bar);
#endif
  };
  auto issue = [&](int c, int st) {
    // The prep's unit (c, h) before any read of it (T, A, scalars by cp.async.cg; Γ_last by the
    // pipeline's loads, which come after this chunk's issue).
    if constexpr (OV) dnnp_flag_wait_block(fp.ov_flags + static_cast<size_t>(c) * HO + h, 1u);
    const SlimChunkAt d = at(c);
    unsigned char* base = smem + st * S::stage;
    if constexpr (TMA_QK) {
      if (lane == 0) tma_qk(d, base, st);
    } else {
#pragma unroll
      for (int it = 0; it < QIT; ++it) copy_qk(d, base, it, true);
    }
#pragma unroll
    for (int it = 0; it < VIT; ++it) copy_v(d, base, it, true);
#pragma unroll
    for (int it = 0; it < TIT; ++it) copy_ta(d, base, it, true);
    copy_sc(d, base, true);
  };
  // Key step kk's share (K / 16 = 8 steps): q, k round kk; T, A round kk; v round kk − (8 − VIT);
  // the scalars with the last step.
  constexpr int KS = K / 16;
  static_assert(QIT <= KS && TIT <= KS && VIT <= KS, "one round per key step at most");
  auto issue_step = [&](const SlimChunkAt& d, unsigned char* base, int kk, bool live) {
    if (kk < QIT) copy_qk(d, base, kk, live);
    if (kk < TIT) copy_ta(d, base, kk, live);
    if (kk >= KS - VIT) copy_v(d, base, kk - (KS - VIT), live);
    if (kk == KS - 1) copy_sc(d, base, live);
  };
  // SPLIT (session 35, sc35: w4gxs): the q, k rounds stay in the P', O' key steps; T, A, v and the
  // scalars go to the tail's 4 token steps (slim_chunk_tail_wg's UPD, after the O batch's wait,
  // while the state update runs): step u copies T, A rounds u and u + 4, v round u, the scalars last.
  // NW = 8 (session 35, w8s35: w8gxs): the 4 q, k rounds in key steps 0 .. 3; the tail's step u
  // copies T, A round u (TIT = 3), v round u (VIT = 4), the scalars last: w8gx's copies, same group.
  static_assert(!SPLIT || (QIT <= KS && TIT <= 8 && VIT <= 4), "w4gxs / w8gxs: the tail's 4 steps");
  auto issue_tail = [&](const SlimChunkAt& d, unsigned char* base, int u, bool live) {
    if (u < TIT) copy_ta(d, base, u, live);
    if (u + 4 < TIT) copy_ta(d, base, u + 4, live);
    if (u < VIT) copy_v(d, base, u, live);
    if (u == 3) copy_sc(d, base, live);
  };
  // TMA_O (w4gxt): this warp's O staging, two dense [CHUNK][16] tiles in the 32-byte swizzle (2 KB
  // each, 1024-byte aligned: SlimScanSmem::bytes_t); the o map into the descriptor cache.
#ifndef GDN_HOST_EMU
  if constexpr (TMA_O) {
    static_assert(S::o_off % 1024 == 0, "w4gxt: the staging tiles 1024-byte aligned");
    if (lane == 0) dnnp::tma_prefetch(&maps->o);
  }
#endif
  // The checkpoints (ckpt_store): the state entering the first chunk here, that entering chunk
  // c + 1 right after chunk c's state update (off the next chunk's first products). SAVE_U (every
  // chunk's row, session 38): the state entering chunk c while chunk c's P', O' batch is in flight
  // (the replay's S_c store, fscan_sl_chunks), first in its PRE hook.
  if (!SAVE_U && c_begin < c_end) ckpt_store<T, K, K, V>(ck, c_begin - cb, HO, h, 0, x, vr, cq);
  auto body = [&](int c, int st, float gl, auto pre_copies, auto upd) {
    auto pre = [&]() {
      if constexpr (SAVE_U) {
        return [&, pre_copies](int kk) {
          if (kk == 0) ckpt_store<T, K, K, V>(ck, c - cb, HO, h, 0, x, vr, cq);
          pre_copies(kk);
        };
      } else {
        return pre_copies;
      }
    }();
    unsigned char* base = smem + st * S::stage;
    const T* Qs = reinterpret_cast<const T*>(base + S::q_off);
    const T* Ks = reinterpret_cast<const T*>(base + S::k_off);
    const T* Vs = reinterpret_cast<const T*>(base + S::v_off);
    const T* Ts = reinterpret_cast<const T*>(base + S::t_off);
    const T* As = reinterpret_cast<const T*>(base + S::a_off);
    const float* Sc = reinterpret_cast<const float*>(base + S::s_off);
    const SlimChunkAt d = at(c);

    T* Os = reinterpret_cast<T*>(smem + S::o_off) + warp * CHUNK * S::OP;
#if !defined(GDN_HOST_EMU) || defined(GDN_WGMMA_EMU)  // the CPU emulation's wgmma: bench/gdn_wgmma_emu.h
    if constexpr (TMA_QK) {  // w4gxu: chunk c's q, k boxes landed (stage st's use (c − c_begin) / STAGES)
      dnnp::mbar_wait(qk_bar(st), static_cast<uint32_t>((c - c_begin) / STAGES) & 1u);
      if (d.len < CHUNK) {  // rows len .. CHUNK − 1 to zeros (cp.async's zero fill), then visible to wgmma
        for (int i = tid; i < (CHUNK - d.len) * 32; i += NTH) {
          const int r = d.len + (i >> 5), a = (i >> 3) & 3;
          *reinterpret_cast<uint4*>(base + (a < 2 ? S::q_off : S::k_off) + (a & 1) * 64 * CHUNK * 2 + r * 128 +
                                    (i & 7) * 16) = make_uint4(0u, 0u, 0u, 0u);
        }
        dnnp::fence_proxy_async_shared();
        __syncthreads();
      }
    }
    if constexpr (WG) {
      // The descriptor form (session 41, H200, bitwise, against main's whole descriptors): the
      // 4-warp output scans TailOffsets (w4gxs −2.8 %, w4gx0 / w4gxr −1..−3 %; Offsets made them
      // 1..12 % slower), w8gx and the saving scans Offsets (w8gx −1.4..−2.0 %, TailOffsets +1.5 %;
      // the saving forward −0.7..−1.6 %).
      constexpr SlimDescForm DESC =
          NW == 4 && !SAVE_U ? SlimDescForm::TailOffsets : SlimDescForm::Offsets;
#ifndef GDN_HOST_EMU  // the CPU emulation has no tensor-map store
      // TMA_O: this warp's O by the o map, staged in its tile of chunk c (slim_store_o_tma).
      auto store_o = [&](const float (&oacc)[8][4]) {
        slim_store_o_tma<T, V>(reinterpret_cast<T*>(smem + S::o_off) + (2 * warp + (c & 1)) * CHUNK * 16, oacc,
                               &maps->o, static_cast<T*>(p.o), d.t0, d.len, HO, h, v0, lane);
      };
#endif
      // SAVE_U: the chunk's U tile through this warp's 16 columns of the stage's v tile.
      auto uout = [&]() {
        if constexpr (SAVE_U) {
          return [&, base](const u32 (&ua)[4][4]) {
            slim_store_u_tile<T, VP, V>(reinterpret_cast<T*>(base + S::v_off) + 16 * warp,
                                        static_cast<T*>(fp.save_u) + d.ch * CHUNK * V + v0, ua, lane);
          };
        } else {
          return SlimNoHook{};
        }
      }();
#ifndef GDN_HOST_EMU
      if constexpr (O_FIRST)  // w4gxv: the store, then the tail's copies (the same copies, same group)
        slim_chunk_wg<T, K, V, VP, true, true, WGX, DESC>(x, Qs, Ks, Vs, Ts, As, Sc, Os, p, d.t0, d.len, h, v0, 16 * warp, gl,
                                                    lane, pre, SlimNoHook{}, SlimNoHook{}, SlimNoHook{},
                                                    [&](const float (&oacc)[8][4]) {
                                                      store_o(oacc);
#pragma unroll
                                                      for (int u = 0; u < 4; ++u) upd(u);
                                                    });
      else if constexpr (TMA_O)
        slim_chunk_wg<T, K, V, VP, true, true, WGX, DESC>(x, Qs, Ks, Vs, Ts, As, Sc, Os, p, d.t0, d.len, h, v0, 16 * warp, gl,
                                                    lane, pre, SlimNoHook{}, upd, SlimNoHook{}, store_o);
      else
#endif
      if constexpr (SPLIT)
        slim_chunk_wg<T, K, V, VP, true, true, WGX, DESC>(x, Qs, Ks, Vs, Ts, As, Sc, Os, p, d.t0, d.len, h, v0, 16 * warp, gl,
                                                    lane, pre, SlimNoHook{}, upd, uout);
      else
        slim_chunk_wg<T, K, V, VP, true, true, WGX, DESC>(x, Qs, Ks, Vs, Ts, As, Sc, Os, p, d.t0, d.len, h, v0, 16 * warp, gl,
                                                    lane, pre, SlimNoHook{}, SlimNoHook{}, uout);
    } else
#endif
    {
      slim_chunk_warp<T, K, V, KP, VP, true, true>(x, Qs, Ks, Vs, Ts, As, Sc, Os, p, d.t0, d.len, h, v0, 16 * warp, gl,
                                                   lane, [](int) {}, pre);
    }
    if (!SAVE_U && c + 1 < c_end) ckpt_store<T, K, K, V>(ck, c + 1 - cb, HO, h, 0, x, vr, cq);
  };
  if constexpr (OV) {
    chunk_pipeline<STAGES>(p.ws_gl, HO, h, c_begin, c_end, issue,
                           [&](int c, int st, float gl) { body(c, st, gl, SlimNoHook{}, SlimNoHook{}); });
  } else {
    // Chunk c + STAGES − 1's copies spread over chunk c's P', O' key steps (slim_chunk_warp's PRE),
    // after the block barrier that has every warp past chunk c − 1 (whose stage they refill).
    chunk_pipeline_in_body<STAGES, WG>(p.ws_gl, HO, h, c_begin, c_end, issue, [&](int c, int st, float gl, int nst, bool live) {
      const SlimChunkAt d = at(c + STAGES - 1);
      unsigned char* nbase = smem + nst * S::stage;
      if constexpr (SPLIT) {
        body(
            c, st, gl,
            [&](int kk) {
              if constexpr (TMA_QK) {
                if (kk == 0 && live && lane == 0) tma_qk(d, nbase, nst);
              } else if (kk < QIT) {
                copy_qk(d, nbase, kk, live);
              }
            },
            [&](int u) { issue_tail(d, nbase, u, live); });
      } else {
        body(c, st, gl, [&](int kk) { issue_step(d, nbase, kk, live); }, SlimNoHook{});
      }
    });
  }
#ifndef GDN_HOST_EMU
  if constexpr (TMA_O) {  // this warp's tensor-map stores written before the block ends
    if (lane == 0) dnnp::tma_store_wait<0>();
  }
#endif
  if (FIRST && fp.pieces > 1) {  // piece 1's seed (the chain3r input, the rest scan's seed)
    store_piece1_seed<K, V>(fp.ws_seed, fp.pieces, HO, b, h, x, vr, cq);
  } else if ((!REST || j == fp.pieces - 1) && p.final_state) {
    store_final_state_frags<K>(x, p, row, (static_cast<size_t>(row) * HO + h) * V * K, vr, cq);
  }
  if constexpr (OV) dnnp_wait_prerequisites();  // the stream moves on only after the prep too
}


// ---------------------------------------------------------------------------------------
// The uncut slim forward with the prep and the output scan at the same time (session 15, helper
// ovf15; dnnp_overlap.cuh's contract, the backward's gdn_bwd_overlap.cuh pattern). Launches on one
// stream (src/engines/gdn/engine.rs, FWD_OVERLAP_RULE, DNNPLAN_GDN_FWD_OVERLAP):
//  1. gdn_fwd_chunk_order (1 block, OFFSETS_THREADS; replaces gdn_chunk_offsets): the chunk table,
//     ov_flags zeroed (stream order: before the producer, on every execute and graph replay),
//     ov_order = the live chunk slots in the order the output scan consumes them.
//  2. the producer, launched normally (or programmatic under the launch chain): the persistent
//     prep gdn_fwd_slimprep_*_k128_ov, a grid of as many blocks as fit beside one scan block per SM
//     (the host sizes it, fwd_prep_blocks_beside): every block calls dnnp_launch_dependents() right
//     after its entry wait, then takes the units (rank r = u / HO, head u % HO; slot ov_order[r])
//     u = blockIdx.x, + gridDim.x, ..., runs fwd_slim_prep_tile unchanged (bitwise the default
//     prep's T, A, scalars, Γ_last) and publishes unit (c, h).
//  3. the consumer, launched with LaunchConfig::programmatic in every mode: the slim scan on 4 warps
//     with SLIM_OV_STAGES stages (gdn_fwd_slimscan_*_k128_w4ov: one block and two prep blocks per
//     SM), which waits for unit (c, h) before it issues chunk c's copies, and waits for the prep
//     grid (griddepcontrol.wait) before it exits. It starts only after every producer block
//     passed its own entry wait, so it reads the chunk table without a wait. The same per-warp
//     arithmetic as the w4 / w8 scans: bitwise their O and final states.
// Deadlock freedom: a producer block waits on nothing but its own copies; every producer block is
// resident before any consumer block exists (PDL), so every unit a consumer waits for is produced.
// Rank order: units (s, b), s = the chunk's position in its sequence b, ordered by s, then b: the
// order in which the scan's blocks, all advancing one chunk per step, consume them (any order is
// correct; beyond FWD_OVERLAP_MAX_SEQS sequences the identity order, slot by slot).
// ---------------------------------------------------------------------------------------
constexpr int SLIM_OV_STAGES = 2;
constexpr int FWD_OVERLAP_MAX_SEQS = 64;
// The persistent prep's launch bounds: at most 64 registers (65,536 / (256 · 4)): 20 bytes of
// spills in the tile loop (at the default prep's 5 blocks, 48 registers, 108 bytes).
// Two of its blocks (2 · 16,384 registers, 2 · 36,352 B) fit beside one w4ov scan block
// (128 threads ≤ 256 registers each: 32,768; 139,264 B) on an SM of 65,536 registers and
// 228 KB of shared memory (src/engines/gdn/fwd_overlap.rs, blocks_beside).
constexpr int SLIM_PREP_OV_MIN_BLOCKS = 4;

// After the chunk table (p.chunk_offsets) exists: ov_flags zeroed, ov_order written. One block of
// OFFSETS_THREADS threads; reads the table this block wrote (after a block barrier).
__device__ __forceinline__ void fwd_chunk_order_tail(const FwdFastParams& fp) {
  const FwdParams& p = fp.f;
  const int tid = threadIdx.x, HO = p.ho, n = p.n_seqs;
  for (int i = tid; i < p.max_chunks * HO; i += OFFSETS_THREADS) fp.ov_flags[i] = 0u;
  const int live = p.chunk_offsets[n];
  for (int c = tid; c < live; c += OFFSETS_THREADS) {
    int rank = c;
    if (n <= FWD_OVERLAP_MAX_SEQS) {
      const int b = seq_of_chunk(p, c);
      rank = overlap_unit_rank(c - p.chunk_offsets[b], b, n,
                               [&](int g) { return p.chunk_offsets[g + 1] - p.chunk_offsets[g]; });
    }
    fp.ov_order[rank] = c;
  }
}

// gdn_fwd_chunk_order: the chunk table (chunk_offsets_body, as gdn_chunk_offsets), then the tail and
// the checkpoint rows (fwd_ckpt_rows_body).
__device__ __forceinline__ void fwd_chunk_order_body(const FwdFastParams& fp) {
  chunk_offsets_body(fp.f);
  __syncthreads();  // the chunk table (global, this block's writes) before the tail reads it
  fwd_chunk_order_tail(fp);
  fwd_ckpt_rows_body(fp);
}

// The persistent slim prep (the producer): units u = blockIdx.x, + gridDim.x, ... in rank order,
// each fwd_slim_prep_tile then its flag (dnnp_flag_publish_block: a block barrier, which also
// separates the tile's last shared-memory reads from the next tile's writes). The entry calls
// dnnp_pdl_enter(true) first (its wait, then dnnp_launch_dependents()).
template <typename T, int K>
__device__ __forceinline__ void fwd_slim_prep_ov_body(const FwdFastParams& fp) {
  const FwdParams& p = fp.f;
  const int HO = p.ho;
  const int units = p.chunk_offsets[p.n_seqs] * HO;
  for (int u = blockIdx.x; u < units; u += gridDim.x) {
    const int c = fp.ov_order[u / HO], h = u % HO;
    fwd_slim_prep_tile<T, K>(p, c, h);
    dnnp_flag_publish_block(fp.ov_flags + static_cast<size_t>(c) * HO + h, 1u);
  }
}

// ---------------------------------------------------------------------------------------
// The piece path on slim factors (session 14, helper fpiece14): the exact piece chain of
// gdn_fwd_fast.cuh (summary pass -> chain -> seeded output scan) with the slim scan's algebra.
// The chunk update is linear in X:  X ← X·(e^{Γ_last} I − kᵀ diag(ck) Tᵀ diag(cr) k) + vᵀ diag(β) Tᵀ
// diag(cr) k, so the summary's H_j (zero seed, with v) and M_j (seed I over key rows, v = 0: Z =
// −P' diag(ck)) are the slim scan's update run from those seeds; fwd_chain2_body chains them
// unchanged (same ws_h / ws_m / ws_seed formats) and the seeded output scan starts each piece from
// its fp32 seed. Numerics: the slim scan's roundings per chunk (Z, Uᵀ diag(cr) and X to io for
// the products); the chain's fp32 seeds as the full piece path's. At P = 1 the output scan is
// bitwise fwd_slim_scan_body (the same operations per warp; only the copy schedule differs).
//
//   gdn_fwd_slimsum_{bf16,f16}_k128     <<<(2·V/64, HO, N·(P−1)), 128, SlimSumSmem<128>::bytes>>>
//       two cp.async stages of {k, v (H blocks), T, scalars}: 73,728 B, three blocks per SM; one
//       block barrier per chunk (session 21: the next chunk's copies inside the step)
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4d <<<(V/64, HO, N·P), 128, SlimPieceSmem<128>::bytes>>>
//       q, k, scalars double-buffered, v, T, A single (refilled after the chunk's O product,
//       during its state update since session 21): 111,616 B, two blocks per SM; three block
//       barriers per chunk.
// ---------------------------------------------------------------------------------------
constexpr int SLIM_SUM_STAGES = 2;
// fwd_slim_piece_scan_body's parts (session 32, pc32): the first piece alone, pieces 1 ..= P − 1.
constexpr int SLIM_PART_FIRST = 1;
constexpr int SLIM_PART_REST = 2;
constexpr int SLIM_SUM_MIN_BLOCKS = 3;
constexpr int SLIM_W4D_MIN_BLOCKS = 2;
// The summary beside the first piece on three stages (session 35, sm35: slimsum_gxr3): two blocks
// per SM (110,592 B each), the copies two chunks ahead.
constexpr int SLIM_SUM3_STAGES = 3;
constexpr int SLIM_SUM3_MIN_BLOCKS = 2;

// The slim summary's stage: raw k rows (K + 8), the block's 64 value columns of v (H blocks), T,
// the scalars; ST stages (SLIM_SUM_STAGES; slimsum_gxr3: SLIM_SUM3_STAGES).
template <int K, int ST = SLIM_SUM_STAGES>
struct SlimSumSmem {
  static constexpr int KP = K + 8;
  static constexpr int CP = CHUNK + 8;
  static constexpr int VS = 64;
  static constexpr int VP = VS + 8;
  static constexpr size_t k_off = 0;
  static constexpr size_t v_off = k_off + CHUNK * KP * 2;
  static constexpr size_t t_off = v_off + CHUNK * VP * 2;
  static constexpr size_t s_off = t_off + CHUNK * CP * 2;
  static constexpr size_t stage = s_off + SLIM_SCALARS * CHUNK * 4;
  static constexpr size_t bytes = ST * stage;
};
// The seeded output scan's shared memory: two slots of {q, k, scalars}, one of {v, T, A}, the
// per-warp O staging tiles.
template <int K>
struct SlimPieceSmem {
  static constexpr int KP = K + 8;
  static constexpr int CP = CHUNK + 8;
  static constexpr int VS = 64;
  static constexpr int VP = VS + 8;
  static constexpr size_t q_off = 0;
  static constexpr size_t k_off = q_off + CHUNK * KP * 2;
  static constexpr size_t s_off = k_off + CHUNK * KP * 2;
  static constexpr size_t slot = s_off + SLIM_SCALARS * CHUNK * 4;
  static constexpr size_t v_off = 2 * slot;
  static constexpr size_t t_off = v_off + CHUNK * VP * 2;
  static constexpr size_t a_off = t_off + CHUNK * CP * 2;
  static constexpr int OP = 24;
  static constexpr size_t o_off = a_off + CHUNK * CP * 2;
  static constexpr size_t bytes = o_off + 4 * CHUNK * OP * 2;
};
// The host mirrors these (src/engines/gdn/params.rs, slim_sum_smem_bytes, slim_piece_smem_bytes).
static_assert(SlimSumSmem<128>::bytes == 73728 && SlimPieceSmem<128>::bytes == 111616, "slim piece smem changed");
static_assert(SlimSumSmem<128, SLIM_SUM3_STAGES>::bytes == 110592, "slimsum_gxr3 smem changed");

// Copies of one chunk's slim tiles by NT = 128 threads in rounds (slim15's copy shape: each
// thread's pieces fixed, compile-time trip counts; session 21, fscan21b: one round per call, a
// single cp.async without a branch, so the passes can spread them over their mma steps): round
// `it` of raw q or k rows (K + 8 per smem row; zero-filled past len), of the block's VS value
// columns of v (the same with K = VS), of a CHUNK x CHUNK factor tile (T or A), the scalars.
// live == false: zeros only (rows, tiles) or nothing (scalars), the source not read (src-size 0):
// the copy of a chunk past the piece into a buffer no chunk reads again.
template <int K>
struct SlimRows {
  static constexpr int NTH = 128, KV = K / 8, RS = NTH / KV, ROUNDS = CHUNK * KV / NTH;
  static_assert(CHUNK * KV % NTH == 0 && NTH % KV == 0, "whole rounds of whole rows");
};
template <typename T, int K, int KP>
__device__ __forceinline__ void slim_rows_piece(T* dst, const T* src, size_t row_stride, int len, int tid, int it,
                                                bool live) {
  using R = SlimRows<K>;
  const int r = tid / R::KV + it * R::RS, c0 = 8 * (tid % R::KV);
  cp_async16_zfill(dst + r * KP + c0, src + static_cast<size_t>(r) * row_stride + c0, live && r < len);
}
// slim_rows_piece's round `it` of q or k rows (token tid / 16 + 8 it, keys 8 (tid % 16) ..) into
// slim_wg_elem's 128-byte swizzle K-major layout (session 24, pw24: the piece path's wgmma passes,
// slimsum gs and w4dgs; the same pieces as w4gs's copy_qk rounds).
template <typename T, int K>
__device__ __forceinline__ void slim_rows_piece_wg(T* dst, const T* src, size_t row_stride, int len, int tid, int it,
                                                   bool live) {
  using R = SlimRows<K>;
  static_assert(R::KV == 16 && R::RS == 8, "a round = 8 tokens x 16 chunks of 16 B");
  const int r = tid / R::KV + it * R::RS, c0 = 8 * (tid % R::KV);
  cp_async16_zfill(dst + slim_wg_elem<K>(r, c0), src + static_cast<size_t>(r) * row_stride + c0, live && r < len);
}
constexpr int SLIM_TILE_ROUNDS = CHUNK * (CHUNK / 8) / 128;
template <typename T>
__device__ __forceinline__ void slim_tile_piece(T* dst, const T* src, int tid, int it, bool live) {
  constexpr int CV = CHUNK / 8, RS = 128 / CV, CP = CHUNK + 8;
  const int r = tid / CV + it * RS, c0 = 8 * (tid % CV);
  cp_async16_zfill(dst + r * CP + c0, src + r * CHUNK + c0, live);
}
// slim_tile_piece's round `it` (row tid / 8 + 16 it, 16 B chunk tid % 8) into slim_wg_elem's
// 128-byte swizzle (one 8 KB atom; row = the wgmma's N index; session 24, pwx24: the piece path's
// T, A as wgmma B operands, slimsum_gx and w4dgx; the layout of w4gx's copy_ta).
template <typename T>
__device__ __forceinline__ void slim_tile_piece_wg(T* dst, const T* src, int tid, int it, bool live) {
  constexpr int CV = CHUNK / 8, RS = 128 / CV;
  const int r = tid / CV + it * RS, c0 = 8 * (tid % CV);
  cp_async16_zfill(dst + slim_wg_elem<CHUNK>(r, c0), src + r * CHUNK + c0, live);
}
__device__ __forceinline__ void slim_scalars_piece(float* dst, const float* src, int tid, bool live) {
  cp_async16_if(dst + 4 * tid, src + 4 * tid, live && tid < SLIM_SCALARS * CHUNK / 4);
}

// The slim piece summary (grid 2·V/64 × HO × N·(P−1), 4 warps): blocks x < V/64 compute H_j (zero
// seed, with v) over value rows, the others M_j (seed I, v = 0) over key rows (K = V); two
// cp.async stages over the piece's chunks; ws_h / ws_m as gdn_fwd_sum's. Since session 21
// (fscan21b, the output scan's fscan21 cut) chunk c + 1's copies are issued inside chunk c's step,
// a share at each P' key step (chunk_pipeline_in_body, slim_chunk_warp's PRE), one block barrier
// per chunk; the same arithmetic in the same order.
// WG (session 24, pw24: gdn_fwd_slimsum_*_k128_gs): P' = X kᵀ by wgmma (slim_chunk_wg, OUT = false)
// with k staged in the 128-byte swizzle (slim_rows_piece_wg) in SlimSumSmem's k region (stage and
// k offsets multiples of 1,024: the same layout and size), the stage made visible to the async proxy
// after each group wait (chunk_pipeline_in_body's PROXY_FENCE); the dynamic shared memory
// 1024-byte aligned (checked).
// WGX (session 24, pwx24: gdn_fwd_slimsum_*_k128_gx, with WG): the rest of the step on the
// warpgroup too (slim_chunk_tail_wg, OUT = false: Uᵀ = Z Tᵀ with T staged in the 128-byte swizzle
// by slim_tile_piece_wg at t_off (1024-aligned in both stages), the state update with B = k
// MN-major); the stage fence covers T too (its copies are in the waited group).
// MID (session 32, pc32: gdn_fwd_slimsum_*_k128_gxr, with WGX): pieces 1 ..= P − 2 only (grid 4 × HO
// × N·(P−2); piece_range_first's cut), the consumer beside the first piece's output scan (w4dgx0,
// launched before it; the piece chain's first seed is that scan's end state): launched
// programmatic, it starts once every
// w4dgx0 block passed its entry wait (the prep complete) and has none of its own; every block waits
// for the w4dgx0 grid (griddepcontrol.wait) before it exits, so the chain after it sees seed 1.
// The same H_j, M_j arithmetic, into the same ws_h / ws_m slots.
// ST (session 35, sm35: gdn_fwd_slimsum_*_k128_gxr3, with MID): the same on ST = 3 cp.async stages
// (chunk c + 2's copies issued inside chunk c's step), two blocks per SM: the same arithmetic in
// the same order, only the copies' lead and the stage count differ.
template <typename T, int K, int V, bool WG = false, bool WGX = false, bool MID = false, int ST = SLIM_SUM_STAGES>
__device__ __forceinline__ void fwd_slim_sum_body(const FwdFastParams& fp) {
  static_assert(K == 128 && V == 128, "the slim forward serves K = V = 128");
  static_assert(!WGX || WG, "slimsum_gx: slimsum_gs with its chunk tail on the warpgroup too");
  static_assert(!MID || WGX, "slimsum_gxr: slimsum_gx on pieces 1 ..= P - 2");
  static_assert(ST == SLIM_SUM_STAGES || MID, "slimsum_gxr3: slimsum_gxr on three stages");
#ifdef GDN_HOST_EMU
  static_assert(!WG, "the CPU emulation has no wgmma");
#endif
  using S = SlimSumSmem<K, ST>;
  constexpr int KP = S::KP, VP = S::VP, VS = S::VS, XB = V / VS;
  extern __shared__ __align__(16) unsigned char smem[];
  const FwdParams& p = fp.f;
  const int P = fp.pieces, HO = p.ho, h = blockIdx.y;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  int b, j;
  if constexpr (MID) {  // pieces 1 ..= P − 2 (P ≥ 3)
    b = static_cast<int>(blockIdx.z) / (P - 2);
    j = static_cast<int>(blockIdx.z) % (P - 2) + 1;
  } else {
    piece_of_block(P, false, 0, b, j);
  }
  const bool is_m = static_cast<int>(blockIdx.x) >= XB;
  const int xb = static_cast<int>(blockIdx.x) % XB;
  const int vs0 = xb * VS, v0 = vs0 + 16 * warp, vr = v0 + (lane >> 2), cq = 2 * (lane & 3);
  const int kh = h / (HO / p.hk), vh = h / (HO / p.hv);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  int cb, c_begin, c_end;
  if constexpr (MID) piece_range_first(fp, b, j, cb, c_begin, c_end);
  else piece_range(p, b, j, P, cb, c_begin, c_end);
  float x[K / 8][4];
  identity_frags<K>(x, is_m, vr, cq);
#ifndef GDN_HOST_EMU
  if constexpr (WG) {  // the swizzle atoms' 1024-byte alignment
    static_assert(S::k_off % 1024 == 0 && S::stage % 1024 == 0, "SW128 atoms aligned");
    static_assert(!WGX || S::t_off % 1024 == 0, "slimsum_gx: T atom aligned");
    dnnp::trap_unless_swizzle_aligned(smem);
    if constexpr (WGX) {  // the packed copy's never-written upper blocks (slim_tri_zero_upper), every stage
      static_assert(ST == 2 || ST == 3, "the tile offsets below");
      constexpr unsigned to = S::t_off, so = S::stage;
      if constexpr (ST == 2) {
        slim_tri_zero_upper<T, 128, SlimTileWg, 2>(smem, {to, so + to}, tid);
      } else {
        slim_tri_zero_upper<T, 128, SlimTileWg, 3>(smem, {to, so + to, 2 * so + to}, tid);
      }
    }
  }
#endif
  const T* kg = static_cast<const T*>(p.k);
  const T* vg = static_cast<const T*>(p.v);
  // Key step kk's share of a chunk's copy (K / 16 = 8 steps): k round kk; T round kk (first TR
  // steps: the packed tile, slim_tri_round); v round kk − (8 − VR) (H blocks); the scalars with
  // the last step.
  constexpr int KS = K / 16, KR = SlimRows<K>::ROUNDS, VR = SlimRows<VS>::ROUNDS, TR = SlimTriRounds<4, 1>::n;
  static_assert(KR == KS && TR <= KS && VR <= KS, "one round per key step at most");
  auto issue_step = [&](const SlimChunkAt& d, int st, int kk, bool live) {
    unsigned char* base = smem + st * S::stage;
    if constexpr (WG)
      slim_rows_piece_wg<T, K>(reinterpret_cast<T*>(base + S::k_off), kg + (d.t0 * p.hk + kh) * K,
                               static_cast<size_t>(p.hk) * K, d.len, tid, kk, live);
    else
      slim_rows_piece<T, K, KP>(reinterpret_cast<T*>(base + S::k_off), kg + (d.t0 * p.hk + kh) * K,
                                static_cast<size_t>(p.hk) * K, d.len, tid, kk, live);
    if (kk < TR) {
      T* td = reinterpret_cast<T*>(base + S::t_off);
      const T* ts = static_cast<const T*>(p.ws_w) + d.ch * SLIM_TRI_ELEMS;
      if constexpr (WGX)  // into the 128-byte swizzle, upper blocks zeroed once
        slim_tri_round<T, 4, 1, SlimTileWg>(td, nullptr, ts, nullptr, warp, lane, kk, live);
      else
        slim_tri_round<T, 4, 1>(td, nullptr, ts, nullptr, warp, lane, kk, live);
    }
    if (kk >= KS - VR && !is_m)
      slim_rows_piece<T, VS, VP>(reinterpret_cast<T*>(base + S::v_off), vg + (d.t0 * p.hv + vh) * V + vs0,
                                 static_cast<size_t>(p.hv) * V, d.len, tid, kk - (KS - VR), live);
    if (kk == KS - 1)
      slim_scalars_piece(reinterpret_cast<float*>(base + S::s_off),
                         static_cast<const float*>(p.ws_kr) + d.ch * SLIM_SCALARS * CHUNK, tid, live);
  };
  auto issue = [&](int c, int st) {
    const SlimChunkAt d = slim_chunk_at(c, cb, cs, ce, HO, h);
#pragma unroll
    for (int kk = 0; kk < KS; ++kk) issue_step(d, st, kk, true);
  };
  chunk_pipeline_in_body<ST, WG>(p.ws_gl, HO, h, c_begin, c_end, issue, [&](int c, int st, float gl, int nst, bool live) {
    unsigned char* base = smem + st * S::stage;
    const T* Ks = reinterpret_cast<const T*>(base + S::k_off);
    const T* Vs = reinterpret_cast<const T*>(base + S::v_off);
    const T* Ts = reinterpret_cast<const T*>(base + S::t_off);
    const float* Sc = reinterpret_cast<const float*>(base + S::s_off);
    const SlimChunkAt d = slim_chunk_at(c + ST - 1, cb, cs, ce, HO, h);
    auto none = [](int) {};
    auto pre = [&](int kk) { issue_step(d, nst, kk, live); };
#ifndef GDN_HOST_EMU
    if constexpr (WG) {
      if (is_m)
        slim_chunk_wg<T, K, V, VP, false, false, WGX>(x, nullptr, Ks, Vs, Ts, nullptr, Sc, nullptr, p, 0, 0, h, v0,
                                                      16 * warp, gl, lane, pre, none);
      else
        slim_chunk_wg<T, K, V, VP, false, true, WGX>(x, nullptr, Ks, Vs, Ts, nullptr, Sc, nullptr, p, 0, 0, h, v0,
                                                     16 * warp, gl, lane, pre, none);
      return;
    }
#endif
    if (is_m)
      slim_chunk_warp<T, K, V, KP, VP, false, false>(x, nullptr, Ks, Vs, Ts, nullptr, Sc, nullptr, p, 0, 0, h, v0, 16 * warp,
                                                     gl, lane, none, pre);
    else
      slim_chunk_warp<T, K, V, KP, VP, false, true>(x, nullptr, Ks, Vs, Ts, nullptr, Sc, nullptr, p, 0, 0, h, v0, 16 * warp,
                                                    gl, lane, none, pre);
  });
  const int pc = b * (P - 1) + j;
  store_fp32_frags<K>((is_m ? fp.ws_m : fp.ws_h) + (static_cast<size_t>(pc) * HO + h) * V * K, x, vr, cq);
#ifndef GDN_HOST_EMU
  if constexpr (MID) dnnp_wait_prerequisites();  // the first piece's scan (seed 1) before this grid completes
#endif
}

// The seeded slim output scan (grid V/64 × HO × N·P, 4 warps): piece j of sequence b from its
// fp32 seed (P > 1) or the initial state (P = 1); the last piece writes the final state. q, k and
// the scalars in two slots, v, T, A in one. Since session 21 (fscan21b, the output scan's fscan21
// cut) chunk c + 1's q, k, scalars are issued inside chunk c's step, a share at each P', O' key
// step (slim_chunk_warp's PRE, after the top barrier that has every warp past chunk c − 1, whose
// slot they refill) and committed before the wait for chunk c's v, T, A; chunk c + 1's v, T, A a
// share at each of chunk c's state-update token steps (UPD, after the barrier that has every warp
// past its reads of them). Three block barriers per chunk; the same arithmetic in the same order.
// WG (session 24, pw24: gdn_fwd_slimscan_*_k128_w4dgs): P', O' by wgmma (slim_chunk_wg with the
// MID / UPD hooks) with q, k staged in the 128-byte swizzle (slim_rows_piece_wg) in SlimPieceSmem's
// q, k regions (q, k and slot offsets multiples of 1,024: the same layout and size); each thread's
// q, k copies made visible to the async proxy after the group wait at the top of the step, before
// its barrier (v, T, A, the scalars are read by ld.shared / ldmatrix only: no fence for the UPD
// refill); the dynamic shared memory 1024-byte aligned (checked).
// WGX (session 24, pwx24: gdn_fwd_slimscan_*_k128_w4dgx, with WG): the rest of the step on the
// warpgroup too (slim_chunk_tail_wg with MID / UPD: Uᵀ = Z Tᵀ, O += Uᵀ Aᵀ with T, A staged in the
// 128-byte swizzle by slim_tile_piece_wg at t_off, a_off (1024-aligned), the state update with
// B = k MN-major). T, A are wgmma operands: MID(0) makes this thread's v, T, A copies visible to
// the async proxy after their group wait, before the barrier; the refill (UPD) is issued after
// MID(1), the barrier that follows every warp's wait for the O batch (the last wgmma reading T, A),
// while the state update batch (reading k of this slot) flies.
// PART (session 32, pc32; with WGX): 0 every piece (grid z N·P); SLIM_PART_FIRST the first piece only
// (gdn_fwd_slimscan_*_k128_w4dgx0, grid z N: from the initial state like P = 1, its end state
// stored fp32 as piece 1's seed in ws_seed, run beside the summary of pieces 1 ..= P − 2:
// slimsum_gxr); SLIM_PART_REST pieces 1 ..= P − 1 (w4dgxr, grid z N·(P−1), seeds from the chain
// gdn_fwd_chain3r); both on piece_range_first's cut. The same arithmetic per piece.
template <typename T, int K, int V, bool WG = false, bool WGX = false, int PART = 0>
__device__ __forceinline__ void fwd_slim_piece_scan_body(const FwdFastParams& fp) {
  static_assert(K == 128 && V == 128, "the slim forward serves K = V = 128");
  static_assert(!WGX || WG, "w4dgx: w4dgs with its chunk tail on the warpgroup too");
  static_assert(PART == 0 || WGX, "w4dgx0 / w4dgxr: w4dgx's parts");
#ifdef GDN_HOST_EMU
  static_assert(!WG, "the CPU emulation has no wgmma");
#endif
  using S = SlimPieceSmem<K>;
  constexpr int KP = S::KP, VP = S::VP, VS = S::VS;
  extern __shared__ __align__(16) unsigned char smem[];
  const FwdParams& p = fp.f;
  const int P = fp.pieces, HO = p.ho, h = blockIdx.y;
  const int tid = threadIdx.x, warp = tid >> 5, lane = tid & 31;
  int b, j;
  if constexpr (PART == SLIM_PART_FIRST) {
    b = static_cast<int>(blockIdx.z);
    j = 0;
  } else {
    piece_of_block(P, PART == 0, 1, b, j);
  }
  const int vs0 = blockIdx.x * VS, v0 = vs0 + 16 * warp, vr = v0 + (lane >> 2), cq = 2 * (lane & 3);
  const int qh = h / (HO / p.h), kh = h / (HO / p.hk), vh = h / (HO / p.hv);
  const long long cs = load_cu(p, b), ce = load_cu(p, b + 1);
  int cb, c_begin, c_end;
  if constexpr (PART != 0) piece_range_first(fp, b, j, cb, c_begin, c_end);
  else piece_range(p, b, j, P, cb, c_begin, c_end);
  const int row = state_row(p, b);
  const CkptSink ck = ckpt_sink(fp, b);
  float x[K / 8][4];
  if (P == 1 || PART == SLIM_PART_FIRST) load_initial_state_frags<K>(x, p, row, (static_cast<size_t>(row) * HO + h) * V * K, vr, cq);
  else load_seed_frags<K>(x, seed_slot<V, K>(fp.ws_seed, P, HO, b, j, h), vr, cq);
#ifndef GDN_HOST_EMU
  if constexpr (WG) {  // the swizzle atoms' 1024-byte alignment
    static_assert(S::q_off % 1024 == 0 && S::k_off % 1024 == 0 && S::slot % 1024 == 0, "SW128 atoms aligned");
    static_assert(!WGX || (S::t_off % 1024 == 0 && S::a_off % 1024 == 0), "w4dgx: T, A atoms aligned");
    dnnp::trap_unless_swizzle_aligned(smem);
    if constexpr (WGX) {  // the packed copies' never-written upper blocks (slim_tri_zero_upper), one buffer
      constexpr unsigned to = S::t_off, ao = S::a_off;
      slim_tri_zero_upper<T, 128, SlimTileWg, 2>(smem, {to, ao}, tid);
    }
  }
#endif
  const T* qg = static_cast<const T*>(p.q);
  const T* kg = static_cast<const T*>(p.k);
  const T* vg = static_cast<const T*>(p.v);
  // Key step kk's share of the q, k, scalars copy (K / 16 = 8 steps): q, k round kk, the scalars
  // with the last step; token step kk's share of the v, T, A copy (4 steps): v round kk, the
  // packed T, A rounds kk (slim_tri_round) and, with the last step, the rest.
  constexpr int KS = K / 16, US = 4, TR = SlimTriRounds<4, 2>::n;
  static_assert(SlimRows<K>::ROUNDS == KS && SlimRows<VS>::ROUNDS == US && TR >= US, "one round per step");
  auto step_d = [&](const SlimChunkAt& d, int slot, int kk, bool live) {  // q, k, scalars
    unsigned char* base = smem + slot * S::slot;
    if constexpr (WG) {
      slim_rows_piece_wg<T, K>(reinterpret_cast<T*>(base + S::q_off), qg + (d.t0 * p.h + qh) * K,
                               static_cast<size_t>(p.h) * K, d.len, tid, kk, live);
      slim_rows_piece_wg<T, K>(reinterpret_cast<T*>(base + S::k_off), kg + (d.t0 * p.hk + kh) * K,
                               static_cast<size_t>(p.hk) * K, d.len, tid, kk, live);
    } else {
      slim_rows_piece<T, K, KP>(reinterpret_cast<T*>(base + S::q_off), qg + (d.t0 * p.h + qh) * K,
                                static_cast<size_t>(p.h) * K, d.len, tid, kk, live);
      slim_rows_piece<T, K, KP>(reinterpret_cast<T*>(base + S::k_off), kg + (d.t0 * p.hk + kh) * K,
                                static_cast<size_t>(p.hk) * K, d.len, tid, kk, live);
    }
    if (kk == KS - 1)
      slim_scalars_piece(reinterpret_cast<float*>(base + S::s_off),
                         static_cast<const float*>(p.ws_kr) + d.ch * SLIM_SCALARS * CHUNK, tid, live);
  };
  auto step_s = [&](const SlimChunkAt& d, int kk, bool live) {  // v, T, A
    slim_rows_piece<T, VS, VP>(reinterpret_cast<T*>(smem + S::v_off), vg + (d.t0 * p.hv + vh) * V + vs0,
                               static_cast<size_t>(p.hv) * V, d.len, tid, kk, live);
    T* td = reinterpret_cast<T*>(smem + S::t_off);
    T* ad = reinterpret_cast<T*>(smem + S::a_off);
    const T* ts = static_cast<const T*>(p.ws_w) + d.ch * SLIM_TRI_ELEMS;
    const T* as = static_cast<const T*>(p.ws_a) + d.ch * SLIM_TRI_ELEMS;
    // WGX: into the 128-byte swizzle (SlimTileWg), the upper blocks zeroed once at the start.
    using Dst = typename SlimTileDst<WGX>::type;
    slim_tri_round<T, 4, 2, Dst>(td, ad, ts, as, warp, lane, kk, live);
    if (kk == US - 1) {
#pragma unroll
      for (int it = US; it < TR; ++it) slim_tri_round<T, 4, 2, Dst>(td, ad, ts, as, warp, lane, it, live);
    }
  };
  if (c_begin < c_end) {
    const SlimChunkAt d = slim_chunk_at(c_begin, cb, cs, ce, HO, h);
#pragma unroll
    for (int kk = 0; kk < KS; ++kk) step_d(d, 0, kk, true);
    cp_async_commit();
#pragma unroll
    for (int kk = 0; kk < US; ++kk) step_s(d, kk, true);
    cp_async_commit();
  }
  float gl_next = c_begin < c_end ? p.ws_gl[static_cast<size_t>(c_begin) * HO + h] : 0.f;
  const T* Vs = reinterpret_cast<const T*>(smem + S::v_off);
  const T* Ts = reinterpret_cast<const T*>(smem + S::t_off);
  const T* As = reinterpret_cast<const T*>(smem + S::a_off);
  T* Os = reinterpret_cast<T*>(smem + S::o_off) + warp * CHUNK * S::OP;
  // The checkpoints as in fwd_slim_scan_body: the state entering the piece's first chunk here (due
  // when its index in the sequence is), the others right after the state update that makes them.
  if (c_begin < c_end) ckpt_store<T, K, K, V>(ck, c_begin - cb, HO, h, 0, x, vr, cq);
  for (int c = c_begin; c < c_end; ++c) {
    const int slot = (c - c_begin) & 1;
    const float gl = gl_next;
    if (c + 1 < c_end) gl_next = p.ws_gl[static_cast<size_t>(c + 1) * HO + h];
    // In flight: this chunk's q, k, scalars, then its v, T, A.
    cp_async_wait<1>();
#ifndef GDN_HOST_EMU
    if constexpr (WG) dnnp::fence_proxy_async_shared();  // this thread's q, k copies, for the wgmma
#endif
    __syncthreads();  // everyone's q, k, scalars landed; every warp is past chunk c − 1
    unsigned char* base = smem + slot * S::slot;
    const SlimChunkAt d = slim_chunk_at(c, cb, cs, ce, HO, h);
    const SlimChunkAt dn = slim_chunk_at(c + 1, cb, cs, ce, HO, h);
    const bool live = c + 1 < c_end;  // else zeros into buffers no chunk reads again
    auto mid = [&](int phase) {
      if (phase == 0) {
        cp_async_commit();   // chunk c + 1's q, k, scalars (PRE)
        cp_async_wait<1>();  // this chunk's v, T, A (chunk c + 1's q, k, scalars may fly)
#ifndef GDN_HOST_EMU
        if constexpr (WGX) dnnp::fence_proxy_async_shared();  // this thread's T, A copies, for the wgmma
#endif
      }
      __syncthreads();  // 1: every warp is past its reads of v, T, A (UPD refills them)
    };
    auto pre = [&](int kk) { step_d(dn, slot ^ 1, kk, live); };
    auto upd = [&](int kk) { step_s(dn, kk, live); };
#ifndef GDN_HOST_EMU
    if constexpr (WG)
      slim_chunk_wg<T, K, V, VP, true, true, WGX>(
          x, reinterpret_cast<const T*>(base + S::q_off), reinterpret_cast<const T*>(base + S::k_off), Vs, Ts, As,
          reinterpret_cast<const float*>(base + S::s_off), Os, p, d.t0, d.len, h, v0, 16 * warp, gl, lane, pre, mid, upd);
    else
#endif
      slim_chunk_warp<T, K, V, KP, VP, true, true>(
          x, reinterpret_cast<const T*>(base + S::q_off), reinterpret_cast<const T*>(base + S::k_off), Vs, Ts, As,
          reinterpret_cast<const float*>(base + S::s_off), Os, p, d.t0, d.len, h, v0, 16 * warp, gl, lane, mid, pre, upd);
    cp_async_commit();  // chunk c + 1's v, T, A (UPD)
    if (c + 1 < c_end) ckpt_store<T, K, K, V>(ck, c + 1 - cb, HO, h, 0, x, vr, cq);
  }
  cp_async_wait<0>();
  if (PART == SLIM_PART_FIRST && P > 1) {  // piece 1's seed (the chain3r input, the w4dgxr seed)
    store_piece1_seed<K, V>(fp.ws_seed, P, HO, b, h, x, vr, cq);
  } else if (j == P - 1 && p.final_state) {
    store_final_state_frags<K>(x, p, row, (static_cast<size_t>(row) * HO + h) * V * K, vr, cq);
  }
}

}  // namespace gdn
