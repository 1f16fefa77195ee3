// gdn_fwd.cu: entry points of the Gated DeltaNet chunked forward (kernels/include/gdn_fwd.cuh).
//
// Per (io dtype, K = V) variant three launches on one stream, all scratch in the caller's
// workspace (layout: src/engines/gdn/params.rs, bench/gdn_fwd_harness.cu):
//   gdn_chunk_offsets                      <<<1, 1024>>>                 chunk table
//   gdn_fwd_prep_{bf16,f16}_k{64,128}      <<<(max_chunks, HO), 128, PrepSmem::bytes>>>
//   gdn_fwd_scan_{bf16,f16}_k{64,128}      <<<(V / 64, HO, N), 128, ScanSmem::bytes>>>
// The single parameter is gdn::FwdParams by value.
//
// Session-4 scan and piece chain (kernels/include/gdn_fwd_fast.cuh; parameter gdn::FwdFastParams,
// whose first member is the FwdParams above, so one parameter block serves every launch):
//   gdn_fwd_scanx_{bf16,f16}_k{64,128}_w4  <<<(V / 64, HO, N·P), 128, FastSmem<K,4,3,true>>>
//   gdn_fwd_scanx_{bf16,f16}_k128_w8       <<<(1, HO, N·P), 256, FastSmem<128,8,2,true>>>
//   gdn_fwd_sum_{bf16,f16}_k{64,128}       <<<(2·V / 64, HO, N·(P−1)), 128, FastSmem<K,4,2,false>>>
//   gdn_fwd_chain_k{64,128}                <<<(V / 32, HO, N), 256>>>  (DNNPLAN_GDN_CHAIN=v1)
//   gdn_fwd_chain2_k{64,128}               <<<(V / 32, HO, N), 256>>>  (M staged; DNNPLAN_GDN_CHAIN=v2)
//   gdn_fwd_chain3_k{64,128}               <<<(V / 16, HO, N), 256>>>  (chain2 on 16 rows per block; v3)
//   gdn_fwd_prep1_{bf16,f16}_k{64,128}     the session-1 prep (serial triangular-inverse loops), for
//                                          the before/after timing (DNNPLAN_GDN_FWD_PREP=v1)
//   gdn_fwd_prep3_{bf16,f16}_k{64,128}     <<<(max_chunks, HO), 256, Prep3Smem::bytes>>> the 8-warp
//                                          prep (kernels/include/gdn_fwd_prep3.cuh; bitwise the
//                                          default prep's outputs; DNNPLAN_GDN_FWD_PREP=v3)
//   gdn_fwd_prep6_{bf16,f16}_k{64,128}     <<<(max_chunks, HO), 256, Prep6Smem::bytes>>> prep3 with
//                                          the one-barrier-per-block-row inverse and A stored
//                                          from registers: 4 blocks per SM (bitwise prep3;
//                                          DNNPLAN_GDN_FWD_PREP=v6)
//   gdn_fwd_prep7_{bf16,f16}_k{64,128}     <<<(max_chunks, HO), 256, Prep7Smem::bytes>>> prep6 with
//                                          the triangular inverse on the tensor cores (TF32 x3
//                                          mma.sync, gdn_fwd_tcinv.cuh; not bitwise;
//                                          DNNPLAN_GDN_FWD_PREP=v7)
//   gdn_fwd_prep9_{bf16,f16}_k{64,128}     <<<(max_chunks, HO), 256, Prep7Smem::bytes>>> prep7 with
//                                          the off-diagonal inverse by 2x2 recursive blocking on
//                                          all 8 warps and ldmatrix.x4 operand loads (the
//                                          session-8 default, DNNPLAN_GDN_FWD_PREP=v9). Its first step
//                                          alone (TCINV = 2, "prep8": bitwise prep9) is not
//                                          bundled; bench/gdn_prep_host_emu.cpp still checks it.
//   gdn_fwd_prep10_{bf16,f16}_k{64,128}    <<<(max_chunks, HO), 256, Prep7Smem::bytes>>> prep9's
//                                          tile in fewer block-wide phases (gdn_fwd_prep10.cuh;
//                                          bitwise prep9; the default, DNNPLAN_GDN_FWD_PREP=v10)
//                                          (prep10 with W and Ũᵀ stored from registers,
//                                          "prep11": bitwise, 0.90-0.95x prep9 on the H200;
//                                          not bundled, the CPU emulation still checks it)
//   gdn_fwd_prep13_{bf16,f16}_k{64,128}    <<<(max_chunks, HO), 256, Prep7Smem::bytes>>> prep10
//                                          with the diagonal substitution on 4 warps
//                                          (gdn_fwd_prep13.cuh; bitwise prep10;
//                                          DNNPLAN_GDN_FWD_PREP=v13)
//   gdn_fwd_prep14_{bf16,f16}_k{64,128}    <<<(max_chunks, HO), 256, Prep7Smem::bytes>>> prep10
//                                          with the diagonal substitution right-looking from
//                                          registers (gdn_fwd_prep13.cuh; bitwise prep10; v14)
//   gdn_fwd_prep15_{bf16,f16}_k{64,128}    <<<(max_chunks, HO), 256, Prep7Smem::bytes>>> prep14
//                                          with the inverse's serial pieces off the block
//                                          barriers (gdn_fwd_prep15.cuh; bitwise prep14; v15)
// Not bundled (session 6, slower than prep3 on the H200; the CPU emulation
// bench/gdn_prep_host_emu.cpp still checks them bitwise): the persistent fwd_prep4_body (0.83x)
// and fwd_prep3_body<.., FEWBAR> alone ("prep5", 0.98x).
// Launch chain (src/engines/gdn/pdl.rs, DNNPLAN_GDN_PDL): every entry's first statement is
// dnnp_pdl_enter (dnnp_overlap.cuh): griddepcontrol.wait in every block before anything else, so
// that the plan may launch each kernel after the first with programmatic dependent launch; with
// FLAG_PDL_TRIGGER the next kernel's launch is triggered right after that wait.
#include "dnnp_overlap.cuh"
#include "gdn_fwd.cuh"
#include "gdn_fwd_fast.cuh"
#include "gdn_fwd_prep3.cuh"
#include "gdn_fwd_prep10.cuh"

extern "C" __global__ void __launch_bounds__(gdn::OFFSETS_THREADS) gdn_chunk_offsets(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::chunk_offsets_body(p);
}

#define GDN_FWD_ENTRIES(TAG, T, KD)                                                                  \
  extern "C" __global__ void __launch_bounds__(gdn::PREP_THREADS)                                   \
      gdn_fwd_prep_##TAG##_k##KD(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_prep_body<T, KD, KD>(p);                                                               \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::SCAN_WARPS * 32)                                \
      gdn_fwd_scan_##TAG##_k##KD(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_scan_body<T, KD, KD, gdn::SCAN_WARPS, gdn::SCAN_STAGES>(p);                           \
  }

GDN_FWD_ENTRIES(bf16, gdn::gdn_bf16, 128)
GDN_FWD_ENTRIES(bf16, gdn::gdn_bf16, 64)
GDN_FWD_ENTRIES(f16, gdn::gdn_f16, 128)
GDN_FWD_ENTRIES(f16, gdn::gdn_f16, 64)

#define GDN_FWD_FAST_ENTRIES(TAG, T, KD)                                                             \
  extern "C" __global__ void __launch_bounds__(4 * 32)                                              \
      gdn_fwd_scanx_##TAG##_k##KD##_w4(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_scanx_body<T, KD, KD, 4, 3, true>(p);                                                  \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(4 * 32)                                              \
      gdn_fwd_sum_##TAG##_k##KD(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_scanx_body<T, KD, KD, 4, gdn::SUM_STAGES, false>(p);                                   \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP_THREADS)                                   \
      gdn_fwd_prep1_##TAG##_k##KD(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_prep_body<T, KD, KD, false, false>(p);                                                 \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::PREP3_MIN_BLOCKS)           \
      gdn_fwd_prep3_##TAG##_k##KD(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_prep3_body<T, KD, KD>(p);                                                              \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::PREP6_MIN_BLOCKS)           \
      gdn_fwd_prep6_##TAG##_k##KD(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_prep3_body<T, KD, KD, false, true, true>(p);                                           \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::PREP6_MIN_BLOCKS)           \
      gdn_fwd_prep7_##TAG##_k##KD(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_prep3_body<T, KD, KD, false, false, true, 1>(p);                                       \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::PREP6_MIN_BLOCKS)           \
      gdn_fwd_prep9_##TAG##_k##KD(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_prep3_body<T, KD, KD, false, false, true, 3>(p);                                       \
  } \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::PREP6_MIN_BLOCKS)           \
      gdn_fwd_prep10_##TAG##_k##KD(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_prep10_body<T, KD, KD>(p);                                                             \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::PREP6_MIN_BLOCKS)           \
      gdn_fwd_prep13_##TAG##_k##KD(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_prep10_body<T, KD, KD, false, false, 1>(p);                                            \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::PREP6_MIN_BLOCKS)           \
      gdn_fwd_prep14_##TAG##_k##KD(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_prep10_body<T, KD, KD, false, false, 2>(p);                                            \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::PREP6_MIN_BLOCKS)           \
      gdn_fwd_prep15_##TAG##_k##KD(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_prep10_body<T, KD, KD, false, false, 3>(p);                                            \
  }

GDN_FWD_FAST_ENTRIES(bf16, gdn::gdn_bf16, 128)
GDN_FWD_FAST_ENTRIES(bf16, gdn::gdn_bf16, 64)
GDN_FWD_FAST_ENTRIES(f16, gdn::gdn_f16, 128)
GDN_FWD_FAST_ENTRIES(f16, gdn::gdn_f16, 64)

extern "C" __global__ void __launch_bounds__(8 * 32) gdn_fwd_scanx_bf16_k128_w8(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::fwd_scanx_body<gdn::gdn_bf16, 128, 128, 8, 2, true>(p);
}
extern "C" __global__ void __launch_bounds__(8 * 32) gdn_fwd_scanx_f16_k128_w8(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::fwd_scanx_body<gdn::gdn_f16, 128, 128, 8, 2, true>(p);
}
// Not bundled (session 6, measured slower than w4 / w8 at all four benchmark shapes on the H200,
// and its entries perturb the codegen of the prep kernels in this module): the pairs scan
// fwd_scanx_body<T, K, K, 8, 2, true, 2, true> (two warps per 16 value rows, "t8"), which
// bench/gdn_scan_host_emu.cpp still checks bitwise against the bundled scans.
extern "C" __global__ void __launch_bounds__(gdn::CHAIN_THREADS) gdn_fwd_chain_k128(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::fwd_chain_body<128>(p);
}
extern "C" __global__ void __launch_bounds__(gdn::CHAIN_THREADS) gdn_fwd_chain_k64(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::fwd_chain_body<64>(p);
}
// Session 12: the chain with M streamed through shared memory (fwd_chain2_body, bitwise
// fwd_chain_body; the default, DNNPLAN_GDN_CHAIN=v1 selects gdn_fwd_chain_k*).
extern "C" __global__ void __launch_bounds__(gdn::CHAIN_THREADS) gdn_fwd_chain2_k128(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::fwd_chain2_body<128>(p);
}
extern "C" __global__ void __launch_bounds__(gdn::CHAIN_THREADS) gdn_fwd_chain2_k64(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::fwd_chain2_body<64>(p);
}
// chain2 on CHAIN3_ROWS = 16 state rows per block (twice the blocks; DNNPLAN_GDN_CHAIN=v3).
extern "C" __global__ void __launch_bounds__(gdn::CHAIN_THREADS) gdn_fwd_chain3_k128(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::fwd_chain2_body<128, gdn::CHAIN3_ROWS>(p);
}
extern "C" __global__ void __launch_bounds__(gdn::CHAIN_THREADS) gdn_fwd_chain3_k64(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::fwd_chain2_body<64, gdn::CHAIN3_ROWS>(p);
}
