// gdn_fwd.cu: entry points of the Gated DeltaNet chunked forward (kernels/include/gdn_fwd.cuh,
// gdn_fwd_fast.cuh, gdn_fwd_prep10.cuh). The parameter is gdn::FwdFastParams by value (whose
// first member is gdn::FwdParams; the chunk table and the prep read that prefix), workspace
// layout: src/engines/gdn/params.rs. Per (io dtype, K = V) variant, on one stream:
//   gdn_chunk_offsets                      <<<1, 1024>>>                 chunk table (+ checkpoint rows; + the
//                                          longest-first seq_order with FLAG_SEQ_ORDER, session 34, lp34:
//                                          then w4gx / w8gx serve sequence seq_order[blockIdx.z])
//   gdn_fwd_prep15_{bf16,f16}_k{64,128}    <<<(max_chunks, HO), 256, Prep7Smem::bytes>>> the
//                                          per-chunk factors (the default, DNNPLAN_GDN_FWD_PREP=v15)
//   gdn_fwd_prep14_{bf16,f16}_k{64,128}    <<<as prep15>>> the session-10 default, bitwise prep15
//                                          (DNNPLAN_GDN_FWD_PREP=v14: the default's bitwise witness)
//   gdn_fwd_scanx_{bf16,f16}_k{64,128}_w4  <<<(V / 64, HO, N·P), 128, FastSmem<K,4,3,true>>>
//   gdn_fwd_scanx_{bf16,f16}_k128_w8       <<<(1, HO, N·P), 256, FastSmem<128,8,2,true>>>
//   gdn_fwd_scanx_{bf16,f16}_k128_w4p      <<<(2, HO, N·P), 128, FastSmem<128,4,1,true>>> (one stage,
//                                          phased; two blocks per SM: the piece path's scan)
//   gdn_fwd_sum_{bf16,f16}_k{64,128}       <<<(2·V / 64, HO, N·(P−1)), 128, FastSmem<K,4,2,false>>>
//   gdn_fwd_sum1_{bf16,f16}_k128           <<<(4, HO, N·(P−1)), 128, FastSmem<128,4,1,false>>> (one
//                                          stage, phased; three blocks per SM)
//   gdn_fwd_chain_k{64,128}                <<<(V / 32, HO, N), 256>>>  (DNNPLAN_GDN_CHAIN=v1)
//   gdn_fwd_chain2_k{64,128}               <<<(V / 32, HO, N), 256>>>  (M staged; DNNPLAN_GDN_CHAIN=v2)
//   gdn_fwd_chain3_k{64,128}               <<<(V / 16, HO, N), 256>>>  (chain2 on 16 rows per block; v3)
//   gdn_fwd_slimprep_{bf16,f16}_k128       <<<(max_chunks, HO), 256, SlimPrepSmem<128>>>  slim factors, 5 blocks/SM
//   gdn_fwd_slimprep_{bf16,f16}_k128_wg    <<<as slimprep>>> (session 28, pp28: K Kᵀ / Q Kᵀ on m64n32k16 SS wgmma,
//                                          the k, q rows in the 128-byte swizzle; DNNPLAN_GDN_FWD_SLIMPREP=wg;
//                                          64 registers: SLIM_PREP_WG_MIN_BLOCKS = 4 per SM)
//   gdn_fwd_slimprep_{bf16,f16}_k128_wgc   <<<(max_chunks, HO), 256, SlimPrepSmem<128>::bytes_l>>> (session 31,
//                                          pw31; landed session 32, pp32: _wg with two block barriers fewer,
//                                          the gates' two merged and the L tile in its own region:
//                                          fwd_slim_prep_tile's G = 1; bitwise _wg; =wgc)
//   gdn_fwd_slimprep_{bf16,f16}_k128_wgl   <<<as _wgc>>> (session 35, pr35: _wgc with the chunk located in one
//                                          round of loads, locate_chunk_warp: G = 2; bitwise _wgc; =wgl)
//   gdn_fwd_slimprep_{bf16,f16}_k128_wgt   <<<as _wgc>>> (session 36, tp36: _wgc with a whole chunk's q, k rows by
//                                          four tensor-map box loads on an mbarrier, G = 3; the parameter is
//                                          gdn::FwdTmaParams (its q, k maps); bitwise _wgc; =wgt)
//   gdn_fwd_slimprep_{bf16,f16}_k128_wgtl  <<<as _wgc>>> (the same on _wgl, G = 4; bitwise _wgl; =wgtl)
//   gdn_fwd_slimprep_{bf16,f16}_k128_wgs   <<<as _wgc>>> (session 37: _wgc that also saves the backward's
//                                          factors — full T, A rows, Γ, β — through FwdFastParams::save,
//                                          beside the packed T, A: a training forward's prep, whose backward
//                                          then skips its own; fwd_slim_prep_tile's KEEP = 2)
//   gdn_fwd_slimprep_{bf16,f16}_k128_wgts  <<<as _wgc>>> (_wgt that saves them too: KEEP = 2, G = 3; FwdTmaParams)
//   gdn_fwd_slimprep_{bf16,f16}_k128_wgtls <<<as _wgc>>> (_wgtl that saves them too: KEEP = 2, G = 4; FwdTmaParams)
//   gdn_fwd_slimprep_{bf16,f16}_k128_wg5   <<<as slimprep>>> (the same at 5 blocks per SM, 48 registers: the two
//                                          chains one after the other; =wg5)
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4    <<<(2, HO, N), 128, SlimScanSmem<128,4,3>>>
//   gdn_fwd_slimscan_{bf16,f16}_k128_w8    <<<(1, HO, N), 256, SlimScanSmem<128,8,2>>>
//                                          (DNNPLAN_GDN_FWD_FACTORS=slim; gdn_fwd_slim.cuh; P = 1)
//   gdn_fwd_slimsum_{bf16,f16}_k128        <<<(4, HO, N·(P−1)), 128, SlimSumSmem<128>>> slim piece summary
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4d   <<<(2, HO, N·P), 128, SlimPieceSmem<128>>> seeded slim scan
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4gs  <<<(2, HO, N), 128, SlimScanSmem<128,4,3>>> slim w4 with
//                                          P', O' by wgmma, q, k in the 128-byte swizzle (not bitwise
//                                          w4 by construction, bitwise on the H200)
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4gx  <<<(2, HO, N), 128, SlimScanSmem<128,4,3>>> w4gs with the
//                                          rest of the step (Uᵀ, O, state update) by wgmma too
//                                          (session 24; the uncut 4-warp default until session 35)
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4gxs <<<(2, HO, N), 128, SlimScanSmem<128,4,3>>> w4gx with T, A,
//                                          v, scalar copies in the tail (session 35, sc35; bitwise
//                                          w4gx; the uncut 4-warp default since session 35;
//                                          DNNPLAN_GDN_FWD_SCAN=w4gxs)
//   gdn_fwd_slimscan_{bf16,f16}_k128_w8gx  <<<(1, HO, N), 256, SlimScanSmem<128,8,2>>> the same on
//                                          two warpgroups (session 24; the uncut 8-warp default)
//   gdn_fwd_slimscan_{bf16,f16}_k128_w8gxs <<<(1, HO, N), 256, SlimScanSmem<128,8,2>>> w8gx with T, A,
//                                          v, scalar copies in the tail (session 35, w8s35; bitwise
//                                          w8gx by construction; DNNPLAN_GDN_FWD_SCAN=w8gxs)
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4gxt <<<(2, HO, N), 128, SlimScanSmem<128,4,3>::bytes_t>>> w4gxs with O stored
//                                          by one tensor-map store per warp and chunk (session 36, tm36;
//                                          parameter gdn::FwdTmaParams, the o map; bitwise w4gxs;
//                                          DNNPLAN_GDN_FWD_SCAN=w4gxt)
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4gxu <<<as w4gxt>>> w4gxt with q, k loaded by the q, k tensor maps
//                                          (session 36, tm36; bitwise w4gxt; DNNPLAN_GDN_FWD_SCAN=w4gxu)
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4gxv <<<as w4gxt>>> w4gxt with the O store ahead of the tail's copies
//                                          (session 36, tm36; bitwise w4gxt; DNNPLAN_GDN_FWD_SCAN=w4gxv)
//   gdn_fwd_slimsum_{bf16,f16}_k128_gs     <<<(4, HO, N·(P−1)), 128, SlimSumSmem<128>>> slimsum with
//                                          P' by wgmma, k swizzled (session 24; the default)
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4dgs <<<(2, HO, N·P), 128, SlimPieceSmem<128>>> w4d with P', O'
//                                          by wgmma, q, k swizzled (session 24; the default)
//   gdn_fwd_slimsum_{bf16,f16}_k128_gx     <<<(4, HO, N·(P−1)), 128, SlimSumSmem<128>>> slimsum_gs with
//                                          the rest of the step (Uᵀ, state update) by wgmma, T swizzled
//                                          (session 24, pwx24; DNNPLAN_GDN_FWD_PIECE=gx)
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4dgx <<<(2, HO, N·P), 128, SlimPieceSmem<128>>> w4dgs with the
//                                          rest of the step (Uᵀ, O, state update) by wgmma, T, A
//                                          swizzled (session 24, pwx24; DNNPLAN_GDN_FWD_PIECE=gx)
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4dgx0 <<<(2, HO, N), 128, SlimPieceSmem<128>>> w4dgx on the first
//                                          piece only (from the initial state; its end state: seed 1)
//                                          (session 32, pc32; DNNPLAN_GDN_FWD_PIECE_FIRST)
//   gdn_fwd_slimsum_{bf16,f16}_k128_gxr    <<<(4, HO, N·(P−2)), 128, SlimSumSmem<128>>> slimsum_gx on pieces
//                                          1 ..= P − 2, beside w4dgx0 (programmatic, no entry wait)
//   gdn_fwd_slimsum_{bf16,f16}_k128_gxr3   <<<(4, HO, N·(P−2)), 128, SlimSumSmem<128,3>>> slimsum_gxr on three
//                                          stages, two blocks per SM (session 35, sm35; bitwise gxr;
//                                          DNNPLAN_GDN_FWD_PIECE_FIRST_SUM=gxr3)
//   gdn_fwd_chain3r_k128                   <<<(V / 16, HO, N), 256>>> chain3 from seed 1 (four M tiles
//                                          in its ring; each thread on 2 rows x 4 columns: bitwise)
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4dgxr <<<(2, HO, N·(P−1)), 128, SlimPieceSmem<128>>> w4dgx on
//                                          pieces 1 ..= P − 1
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4gxr <<<(2, HO, N·(P−1)), 128, SlimScanSmem<128,4,3>>> w4gx on
//                                          pieces 1 ..= P − 1 (one block per SM: the rule's P)
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4gx0 <<<(2, HO, N), 128, SlimScanSmem<128,4,3>>> w4gx on the
//                                          first piece only (session 34, fp34; w4dgx0's seed store)
//   gdn_fwd_chunk_order                    <<<1, 1024>>> chunk table + hand-over flags zeroed + scan order
//   gdn_fwd_slimprep_{bf16,f16}_k128_ov    <<<(blocks beside the scan, 1, 1), 256, SlimPrepSmem<128>>>
//                                          persistent slim prep (producer, DNNPLAN_GDN_FWD_OVERLAP)
//   gdn_fwd_slimscan_{bf16,f16}_k128_w4ov  <<<(2, HO, N), 128, SlimScanSmem<128,4,2>>> its consumer
// (the output scan w4 / w8 by the schedule rule, bitwise each other; the piece summary and chain
// only with P > 1 pieces per sequence).
// Not bundled since session 12 (no schedule rule picked them; src/engines/gdn/engine.rs): the
// session-1 scan fwd_scan_body (bitwise w4) and the earlier preps: fwd_prep_body (v1 / v2),
// fwd_prep3_body (v3, v6, and v7 / v9 with the inverse on the tensor cores, not bitwise v6),
// fwd_prep10_body levels 0 (v10) and 1 (v13), all bitwise v14 but v1-v6 against v7 / v9.
// Their bodies stay in the headers; the CPU emulations (bench/gdn_prep_host_emu.cpp,
// bench/gdn_scan_host_emu.cpp) still check them, like the never-bundled prep4 / prep5 / prep8 /
// prep11 and the pairs scan t8.
// Launch chain (src/engines/gdn/pdl.rs, DNNPLAN_GDN_PDL): every entry's first statement is
// dnnp_pdl_enter (dnnp_overlap.cuh): griddepcontrol.wait in every block before anything else, so
// that the plan may launch each kernel after the first with programmatic dependent launch; with
// FLAG_PDL_TRIGGER the next kernel's launch is triggered right after that wait.
#include "dnnp_overlap.cuh"
#include "gdn_fwd.cuh"
#include "gdn_fwd_fast.cuh"
#include "gdn_fwd_prep3.cuh"
#include "gdn_fwd_prep10.cuh"
#include "gdn_fwd_slim.cuh"

// The forward's first kernel: the sanitized cu_seqlens (gdn::cu_sanitize_body) and pool rows
// (gdn::state_rows_sanitize_body), the chunk table, then (with checkpoints at a cadence of more
// than one chunk) their rows.
extern "C" __global__ void __launch_bounds__(gdn::OFFSETS_THREADS) gdn_chunk_offsets(gdn::FwdTableParams p) { dnnp_pdl_enter(p.fp.f.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::cu_sanitize_body(p.cu_src, p.fp.f.n_seqs, gdn::cu_sanitized(p.fp.f));
  gdn::state_rows_sanitize_body(p.st_src, p.fp.f.n_seqs, gdn::state_rows_sanitized(p.fp.f));
  gdn::chunk_offsets_body(p.fp.f);
  gdn::fwd_ckpt_rows_body(p.fp);
}

#define GDN_FWD_FAST_ENTRIES(TAG, T, KD)                                                             \
  extern "C" __global__ void __launch_bounds__(4 * 32)                                              \
      gdn_fwd_scanx_##TAG##_k##KD##_w4(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_scanx_body<T, KD, KD, 4, 3, true>(p);                                                  \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(4 * 32)                                              \
      gdn_fwd_sum_##TAG##_k##KD(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_scanx_body<T, KD, KD, 4, gdn::SUM_STAGES, false>(p);                                   \
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
// Session 13: the one-stage phased kernels (fscan_chunks PHASED: one stage refilled in two
// halves; bitwise w4 / sum): the output scan w4p at two blocks per SM and the summary pass sum1
// at three per SM: the piece path's default at K = 128 (src/engines/gdn/engine.rs FWD_PIECE_PATH).
// Not bundled: sum1 at four blocks per SM (__launch_bounds__(128, 4): 128 registers, 88 bytes of
// spills; bitwise, measured slower than sum1 at P = 7 and no faster at P = 8, session 13).
#define GDN_FWD_PHASED_ENTRIES(TAG, T)                                                               \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::SCANX_S1_MIN_BLOCKS)                    \
      gdn_fwd_scanx_##TAG##_k128_w4p(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_scanx_body<T, 128, 128, 4, gdn::SCANX_S1_STAGES, true, 1, false, true>(p);              \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::SUM1_MIN_BLOCKS)                        \
      gdn_fwd_sum1_##TAG##_k128(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_scanx_body<T, 128, 128, 4, gdn::SCANX_S1_STAGES, false, 1, false, true>(p);             \
  }
GDN_FWD_PHASED_ENTRIES(bf16, gdn::gdn_bf16)
GDN_FWD_PHASED_ENTRIES(f16, gdn::gdn_f16)
// Not bundled (session 6, measured slower than w4 / w8 at all four benchmark shapes on the H200,
// and its entries perturb the codegen of the prep kernels in this module): the pairs scan
// fwd_scanx_body<T, K, K, 8, 2, true, 2, true> (two warps per 16 value rows, "t8").
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

// Session 13: the slim factors (gdn_fwd_slim.cuh): the prep writes T, A, per-token scalars; the
// output scan rebuilds the products from the raw q, k, v (K = V = 128, one piece per sequence).
#define GDN_FWD_SLIM_ENTRIES(TAG, T)                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::SLIM_PREP_MIN_BLOCKS)       \
      gdn_fwd_slimprep_##TAG##_k128(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_prep_body<T, 128>(p);                                                             \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::SLIM_PREP_WG_MIN_BLOCKS)    \
      gdn_fwd_slimprep_##TAG##_k128_wg(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_prep_body<T, 128, 1>(p);                                                          \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::SLIM_PREP_WG_MIN_BLOCKS)    \
      gdn_fwd_slimprep_##TAG##_k128_wgc(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_prep_body<T, 128, 1, false, 1>(p);                                                \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::SLIM_PREP_WG_MIN_BLOCKS)    \
      gdn_fwd_slimprep_##TAG##_k128_wgl(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_prep_body<T, 128, 1, false, 2>(p);                                                \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::SLIM_PREP_WG_MIN_BLOCKS)    \
      gdn_fwd_slimprep_##TAG##_k128_wgt(const __grid_constant__ gdn::FwdTmaParams p) {              \
    dnnp_pdl_enter(p.fp.f.flags & gdn::FLAG_PDL_TRIGGER);                                           \
    gdn::fwd_slim_prep_body<T, 128, 1, false, 3>(p.fp.f, gdn::PrepKeep{}, &p.maps);                 \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::SLIM_PREP_WG_MIN_BLOCKS)    \
      gdn_fwd_slimprep_##TAG##_k128_wgtl(const __grid_constant__ gdn::FwdTmaParams p) {             \
    dnnp_pdl_enter(p.fp.f.flags & gdn::FLAG_PDL_TRIGGER);                                           \
    gdn::fwd_slim_prep_body<T, 128, 1, false, 4>(p.fp.f, gdn::PrepKeep{}, &p.maps);                 \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::SLIM_PREP_WG_MIN_BLOCKS)    \
      gdn_fwd_slimprep_##TAG##_k128_wgs(gdn::FwdFastParams p) {                                     \
    dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER);                                              \
    gdn::fwd_slim_prep_body<T, 128, 1, 2, 1>(p.f, p.save);                                          \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::SLIM_PREP_WG_MIN_BLOCKS)    \
      gdn_fwd_slimprep_##TAG##_k128_wgts(const __grid_constant__ gdn::FwdTmaParams p) {             \
    dnnp_pdl_enter(p.fp.f.flags & gdn::FLAG_PDL_TRIGGER);                                           \
    gdn::fwd_slim_prep_body<T, 128, 1, 2, 3>(p.fp.f, p.fp.save, &p.maps);                           \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::SLIM_PREP_WG_MIN_BLOCKS)    \
      gdn_fwd_slimprep_##TAG##_k128_wgtls(const __grid_constant__ gdn::FwdTmaParams p) {            \
    dnnp_pdl_enter(p.fp.f.flags & gdn::FLAG_PDL_TRIGGER);                                           \
    gdn::fwd_slim_prep_body<T, 128, 1, 2, 4>(p.fp.f, p.fp.save, &p.maps);                           \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::SLIM_PREP_MIN_BLOCKS)       \
      gdn_fwd_slimprep_##TAG##_k128_wg5(gdn::FwdParams p) { dnnp_pdl_enter(p.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_prep_body<T, 128, 2>(p);                                                          \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(4 * 32)                                              \
      gdn_fwd_slimscan_##TAG##_k128_w4(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_scan_body<T, 128, 128, 4, gdn::SLIM_W4_STAGES>(p);                                \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(8 * 32)                                              \
      gdn_fwd_slimscan_##TAG##_k128_w8(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_scan_body<T, 128, 128, 8, gdn::SLIM_W8_STAGES>(p);                                \
  }

GDN_FWD_SLIM_ENTRIES(bf16, gdn::gdn_bf16)
GDN_FWD_SLIM_ENTRIES(f16, gdn::gdn_f16)

// Session 15 (ovf15): the uncut slim forward with the prep and the output scan at the same time
// (gdn_fwd_slim.cuh, dnnp_overlap.cuh's contract): the chunk table with the hand-over flags zeroed
// and the scan's chunk order, the persistent prep (the producer: dnnp_pdl_enter(true) waits, then
// lets the consumer start) and the 4-warp scan on SLIM_OV_STAGES stages (the consumer, launched
// programmatic in every mode: no wait at its entry, one per unit before its copies and one
// before it exits; src/engines/gdn/pdl.rs lists it as an exception of the entry rule).
extern "C" __global__ void __launch_bounds__(gdn::OFFSETS_THREADS) gdn_fwd_chunk_order(gdn::FwdTableParams p) { dnnp_pdl_enter(p.fp.f.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::cu_sanitize_body(p.cu_src, p.fp.f.n_seqs, gdn::cu_sanitized(p.fp.f));
  gdn::state_rows_sanitize_body(p.st_src, p.fp.f.n_seqs, gdn::state_rows_sanitized(p.fp.f));
  gdn::fwd_chunk_order_body(p.fp);
}
#define GDN_FWD_SLIM_OV_ENTRIES(TAG, T)                                                             \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::SLIM_PREP_OV_MIN_BLOCKS)    \
      gdn_fwd_slimprep_##TAG##_k128_ov(gdn::FwdFastParams p) { dnnp_pdl_enter(true);               \
    gdn::fwd_slim_prep_ov_body<T, 128>(p);                                                          \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(4 * 32)                                              \
      gdn_fwd_slimscan_##TAG##_k128_w4ov(gdn::FwdFastParams p) {                                    \
    gdn::fwd_slim_scan_body<T, 128, 128, 4, gdn::SLIM_OV_STAGES, true>(p);                          \
  }

GDN_FWD_SLIM_OV_ENTRIES(bf16, gdn::gdn_bf16)
GDN_FWD_SLIM_OV_ENTRIES(f16, gdn::gdn_f16)

// Session 14 (fpiece14): the piece path on slim factors (gdn_fwd_slim.cuh): the summary pass
// slimsum (two stages, three blocks per SM) and the seeded output scan w4d (q, k, scalars double-
// buffered, v, T, A single; two blocks per SM); the chain is fwd_chain2_body's (same H_j, M_j,
// seed formats).
#define GDN_FWD_SLIM_PIECE_ENTRIES(TAG, T)                                                          \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::SLIM_SUM_MIN_BLOCKS)                    \
      gdn_fwd_slimsum_##TAG##_k128(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_sum_body<T, 128, 128>(p);                                                         \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::SLIM_W4D_MIN_BLOCKS)                    \
      gdn_fwd_slimscan_##TAG##_k128_w4d(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_piece_scan_body<T, 128, 128>(p);                                                  \
  }

GDN_FWD_SLIM_PIECE_ENTRIES(bf16, gdn::gdn_bf16)
GDN_FWD_SLIM_PIECE_ENTRIES(f16, gdn::gdn_f16)

// Session 23 (wg23): the uncut slim output scan with its P' = X kᵀ and O' = X qᵀ products on the
// warpgroup (wgmma m64n64k16, A = X from registers, B = k, q by descriptor; gdn_fwd_slim.cuh,
// slim_chunk_wg), q, k staged in the 128-byte swizzle; w4's grid, shared memory and copy schedule
// (the uncut 4-warp default by rule; DNNPLAN_GDN_FWD_SCAN=w4 forces the mma.sync w4).
#define GDN_FWD_SLIM_WG_ENTRIES(TAG, T)                                                             \
  extern "C" __global__ void __launch_bounds__(4 * 32)                                              \
      gdn_fwd_slimscan_##TAG##_k128_w4gs(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_scan_body<T, 128, 128, 4, gdn::SLIM_W4_STAGES, false, true>(p);                  \
  }

GDN_FWD_SLIM_WG_ENTRIES(bf16, gdn::gdn_bf16)
GDN_FWD_SLIM_WG_ENTRIES(f16, gdn::gdn_f16)

// Session 24 (pw24): the slim piece path with its products on the warpgroup (gdn_fwd_slim.cuh,
// slim_chunk_wg: wgmma m64n64k16, A = X from registers, B = k (and q) by descriptor, staged in the
// 128-byte swizzle): the summary slimsum_gs (P' only) and the seeded output scan w4dgs (P', O');
// the grids, threads, shared memory and copy schedules of slimsum and w4d (DNNPLAN_GDN_FWD_PIECE=gs).
#define GDN_FWD_SLIM_PIECE_WG_ENTRIES(TAG, T)                                                       \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::SLIM_SUM_MIN_BLOCKS)                    \
      gdn_fwd_slimsum_##TAG##_k128_gs(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_sum_body<T, 128, 128, true>(p);                                                   \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::SLIM_W4D_MIN_BLOCKS)                    \
      gdn_fwd_slimscan_##TAG##_k128_w4dgs(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_piece_scan_body<T, 128, 128, true>(p);                                            \
  }

GDN_FWD_SLIM_PIECE_WG_ENTRIES(bf16, gdn::gdn_bf16)
GDN_FWD_SLIM_PIECE_WG_ENTRIES(f16, gdn::gdn_f16)

// Session 24 (wgx24): w4gs with the rest of the chunk step on the warpgroup too (Uᵀ = Z Tᵀ and
// O += Uᵀ Aᵀ by wgmma with T, A staged in the 128-byte swizzle, full N = 64: the zero blocks above
// the diagonal are exact zeros; the state update by wgmma m64n128k16 with k MN-major, tnspB;
// gdn_fwd_slim.cuh, slim_chunk_tail_wg): w4gx on w4gs's grid, shared memory and copy schedule, and
// w8gx on 8 warps = two warpgroups (128 value rows; w8's grid, shared memory and stages): the uncut
// 4- and 8-warp defaults by rule (SLIM_SCAN_WGMMA_BY_RULE; DNNPLAN_GDN_FWD_SCAN=w4gs forces the
// P', O'-only scan, =w4 / =w8 the mma.sync ones).
#define GDN_FWD_SLIM_WGX_ENTRY(TAG, T, NW, STAGES)                                                  \
  extern "C" __global__ void __launch_bounds__(NW * 32)                                             \
      gdn_fwd_slimscan_##TAG##_k128_w##NW##gx(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_scan_body<T, 128, 128, NW, STAGES, false, true, true>(p);                        \
  }

GDN_FWD_SLIM_WGX_ENTRY(bf16, gdn::gdn_bf16, 4, gdn::SLIM_W4_STAGES)
GDN_FWD_SLIM_WGX_ENTRY(f16, gdn::gdn_f16, 4, gdn::SLIM_W4_STAGES)
GDN_FWD_SLIM_WGX_ENTRY(bf16, gdn::gdn_bf16, 8, gdn::SLIM_W8_STAGES)
GDN_FWD_SLIM_WGX_ENTRY(f16, gdn::gdn_f16, 8, gdn::SLIM_W8_STAGES)

// Session 35 (sc35): w4gx with the next stage's copies split (gdn_fwd_slim.cuh SPLIT): the q, k
// rounds in the P', O' batch's key steps, T, A, v and the scalars in the tail after the O batch's
// wait (while the state update runs) instead of all 26 rounds beside the P', O' batch, whose
// issue outlasted it (ncu, session 35). The same copies in the same group: bitwise w4gx
// (DNNPLAN_GDN_FWD_SCAN=w4gxs).
// Session 35 (helper w8s35): w8gxs, w8gx (8 warps, SLIM_W8_STAGES = 2) with the same split: the 4
// q, k rounds in key steps 0 .. 3, the 3 T, A rounds, 4 v rounds and the scalars in the tail, the
// same group as w8gx's (bitwise w8gx; DNNPLAN_GDN_FWD_SCAN=w8gxs; unmeasured, not by rule).
#define GDN_FWD_SLIM_WGXS_ENTRY(TAG, T, NW, STAGES)                                                 \
  extern "C" __global__ void __launch_bounds__(NW * 32)                                             \
      gdn_fwd_slimscan_##TAG##_k128_w##NW##gxs(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_scan_body<T, 128, 128, NW, STAGES, false, true, true, false, false, true>(p);     \
  }

GDN_FWD_SLIM_WGXS_ENTRY(bf16, gdn::gdn_bf16, 4, gdn::SLIM_W4_STAGES)
GDN_FWD_SLIM_WGXS_ENTRY(f16, gdn::gdn_f16, 4, gdn::SLIM_W4_STAGES)
GDN_FWD_SLIM_WGXS_ENTRY(bf16, gdn::gdn_bf16, 8, gdn::SLIM_W8_STAGES)
GDN_FWD_SLIM_WGXS_ENTRY(f16, gdn::gdn_f16, 8, gdn::SLIM_W8_STAGES)

// Session 36 (helper tm36): w4gxt, w4gxs with each warp's O tile (16 values x 64 tokens) stored by
// ONE tensor-map store (the o map of gdn::FwdTmaParams, box {16, 1, 64}, 32-byte swizzle) from a
// dense staging (two tiles per warp, SlimScanSmem::bytes_t = 206,848 B) instead of 4 x (ld.shared + st.global) per lane (gdn_fwd_slim.cuh,
// slim_store_o_tma; a chunk shorter than 64 tokens keeps the 16-byte stores). The same values to
// the same addresses: bitwise w4gxs (DNNPLAN_GDN_FWD_SCAN=w4gxt). The parameter is the whole
// FwdTmaParams, __grid_constant__: the map's address stays in parameter space. The body reads a
// local copy of p.fp: with the address of p.maps.o passed to the stores' asm (memory clobber),
// reads through p.fp itself would be reloaded after every asm statement and the loop's copy
// addresses recomputed (+172 instructions per chunk step and spills at 255 registers, measured on
// the SASS); with the copy the step has 1,645 instructions (w4gxs 1,617, mostly the kept 16-byte
// path for a sequence's last, partial chunk) and no local memory.
// The three TMA scans' entries (w4gxt, w4gxu, w4gxv): NAME's fwd_slim_scan_body with the template
// tail (the macro's trailing arguments) after the first ten, the block's maps passed beside the local
// copy of p.fp.
#define GDN_FWD_SLIM_WGXT_ENTRY(TAG, T, NAME, ...)                                                   \
  extern "C" __global__ void __launch_bounds__(4 * 32)                                              \
      gdn_fwd_slimscan_##TAG##_k128_##NAME(const __grid_constant__ gdn::FwdTmaParams p) {           \
    dnnp_pdl_enter(p.fp.f.flags & gdn::FLAG_PDL_TRIGGER);                                           \
    const gdn::FwdFastParams fp = p.fp; /* a local copy: &p.maps escapes into the stores' asm */     \
    gdn::fwd_slim_scan_body<T, 128, 128, 4, gdn::SLIM_W4_STAGES, false, true, true, false, false, __VA_ARGS__>(fp,  \
                                                                                                     &p.maps);    \
  }

GDN_FWD_SLIM_WGXT_ENTRY(bf16, gdn::gdn_bf16, w4gxt, true, true)
GDN_FWD_SLIM_WGXT_ENTRY(f16, gdn::gdn_f16, w4gxt, true, true)

// Session 36 (helper tm36): w4gxu, w4gxt with chunk c + 2's q, k tiles loaded by the q, k tensor
// maps (four {64, 1, 64} boxes in the 128-byte swizzle = slim_wg_elem's atoms, one per warp's
// lane 0, onto a per-stage mbarrier; gdn_fwd_slim.cuh TMA_QK) instead of 16 rounds of 16-byte
// cp.async per thread; a partial chunk zeroes its rows past the sequence's end after the wait
// (the cp.async zero fill's values). The same q, k values in the same places: bitwise w4gxt
// (DNNPLAN_GDN_FWD_SCAN=w4gxu).
GDN_FWD_SLIM_WGXT_ENTRY(bf16, gdn::gdn_bf16, w4gxu, true, true, true)
GDN_FWD_SLIM_WGXT_ENTRY(f16, gdn::gdn_f16, w4gxu, true, true, true)

// Session 36 (helper tm36): w4gxv, w4gxt with the O store (stmatrix, fence.proxy.async, the
// tensor-map store) ahead of the tail's T, A, v, scalar copies instead of after them (call 1:
// w4gxt's scan +2.5 % against w4gxs; does the proxy fence wait behind the fresh cp.async?). The same
// copies in the same group, the same stores: bitwise w4gxt (DNNPLAN_GDN_FWD_SCAN=w4gxv).
GDN_FWD_SLIM_WGXT_ENTRY(bf16, gdn::gdn_bf16, w4gxv, true, true, false, true)
GDN_FWD_SLIM_WGXT_ENTRY(f16, gdn::gdn_f16, w4gxv, true, true, false, true)

// Session 24 (pwx24): the piece path's whole chunk step on the warpgroup (slimsum_gs / w4dgs with
// slim_chunk_tail_wg: Uᵀ = Z Tᵀ, O += Uᵀ Aᵀ with T, A in the 128-byte swizzle, the state update with
// k MN-major); the grids, threads, shared memory and copy schedules of slimsum and w4d
// (the piece path's default by rule, SLIM_PIECE_WGMMA_BY_RULE; DNNPLAN_GDN_FWD_PIECE=gs / =d force the others).
#define GDN_FWD_SLIM_PIECE_WGX_ENTRIES(TAG, T)                                                      \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::SLIM_SUM_MIN_BLOCKS)                    \
      gdn_fwd_slimsum_##TAG##_k128_gx(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_sum_body<T, 128, 128, true, true>(p);                                             \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::SLIM_W4D_MIN_BLOCKS)                    \
      gdn_fwd_slimscan_##TAG##_k128_w4dgx(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_piece_scan_body<T, 128, 128, true, true>(p);                                      \
  }

GDN_FWD_SLIM_PIECE_WGX_ENTRIES(bf16, gdn::gdn_bf16)
GDN_FWD_SLIM_PIECE_WGX_ENTRIES(f16, gdn::gdn_f16)

// Session 32 (pc32): the piece path with its first piece run early (gdn_fwd_slim.cuh, PART / MID,
// gdn_fwd_fast.cuh FROM1): w4dgx0 (the first piece from the initial state; its end state is piece
// 1's seed; it lets the next grid start right after its entry wait, always), then slimsum_gxr
// (pieces 1 ..= P − 2, launched programmatic beside it, no entry wait: it starts after every
// w4dgx0 block passed its wait; each block waits for w4dgx0 before it exits), chain3r (seeds 2 ..
// P − 1 from seed 1), w4dgxr (pieces 1 ..= P − 1). The same per-piece arithmetic as slimsum_gx /
// w4dgx / chain3 (DNNPLAN_GDN_FWD_PIECE_FIRST; src/engines/gdn/engine.rs SLIM_PIECES_FIRST).
#define GDN_FWD_SLIM_PIECE_FIRST_ENTRIES(TAG, T)                                                    \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::SLIM_W4D_MIN_BLOCKS)                    \
      gdn_fwd_slimscan_##TAG##_k128_w4dgx0(gdn::FwdFastParams p) { dnnp_pdl_enter(true);           \
    gdn::fwd_slim_piece_scan_body<T, 128, 128, true, true, gdn::SLIM_PART_FIRST>(p);                 \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::SLIM_W4D_MIN_BLOCKS)                    \
      gdn_fwd_slimscan_##TAG##_k128_w4dgxr(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_piece_scan_body<T, 128, 128, true, true, gdn::SLIM_PART_REST>(p);                  \
  }                                                                                                 \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::SLIM_SUM_MIN_BLOCKS)                    \
      gdn_fwd_slimsum_##TAG##_k128_gxr(gdn::FwdFastParams p) {                                      \
    if (p.f.flags & gdn::FLAG_PDL_TRIGGER) dnnp_launch_dependents();                                \
    gdn::fwd_slim_sum_body<T, 128, 128, true, true, true>(p);                                       \
  }

GDN_FWD_SLIM_PIECE_FIRST_ENTRIES(bf16, gdn::gdn_bf16)
GDN_FWD_SLIM_PIECE_FIRST_ENTRIES(f16, gdn::gdn_f16)

// w4gx on pieces 1 ..= P − 1 (gdn_fwd_slim.cuh REST): three stages, one block per SM, where the first-
// early path's other pieces fit in one wave (SLIM_PIECES_FIRST's piece count).
#define GDN_FWD_SLIM_PIECE_REST3_ENTRY(TAG, T)                                                      \
  extern "C" __global__ void __launch_bounds__(4 * 32)                                              \
      gdn_fwd_slimscan_##TAG##_k128_w4gxr(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_scan_body<T, 128, 128, 4, gdn::SLIM_W4_STAGES, false, true, true, true>(p);      \
  }

GDN_FWD_SLIM_PIECE_REST3_ENTRY(bf16, gdn::gdn_bf16)
GDN_FWD_SLIM_PIECE_REST3_ENTRY(f16, gdn::gdn_f16)

// Session 34 (fp34): the first piece on w4gx's three stages too (gdn_fwd_slim.cuh FIRST), one block
// per SM beside the summary of pieces 1 ..= P − 2 (it lets the next grid start right after its
// entry wait, always, as w4dgx0 does); its end state stored fp32 as piece 1's seed. The same
// per-warp arithmetic as w4gx / w4dgx0 (DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN; SLIM_PIECES_FIRST).
#define GDN_FWD_SLIM_PIECE_FIRST3_ENTRY(TAG, T)                                                     \
  extern "C" __global__ void __launch_bounds__(4 * 32)                                              \
      gdn_fwd_slimscan_##TAG##_k128_w4gx0(gdn::FwdFastParams p) { dnnp_pdl_enter(true);            \
    gdn::fwd_slim_scan_body<T, 128, 128, 4, gdn::SLIM_W4_STAGES, false, true, true, false, true>(p); \
  }

GDN_FWD_SLIM_PIECE_FIRST3_ENTRY(bf16, gdn::gdn_bf16)
GDN_FWD_SLIM_PIECE_FIRST3_ENTRY(f16, gdn::gdn_f16)

// Session 38: the U-saving twins of the rule's uncut and first-early scans (gdn_fwd_slim.cuh
// SAVE_U; src/engines/gdn/engine.rs, SAVE_U_SCANS): a training forward with state checkpoints at
// every chunk also stores each chunk's io Uᵀ tile into chunk_factors (FwdFastParams::save_u), so
// its backward replays nothing. NAME's template arguments after SAVE_U's (REST, FIRST, SPLIT), the
// entry wait as NAME's.
#define GDN_FWD_SLIM_SAVE_U_ENTRY(TAG, T, NAME, NW, STAGES, ENTER, REST, FIRST, SPLIT)               \
  extern "C" __global__ void __launch_bounds__(NW * 32)                                             \
      gdn_fwd_slimscan_##TAG##_k128_##NAME##_su(gdn::FwdFastParams p) { dnnp_pdl_enter(ENTER);      \
    gdn::fwd_slim_scan_body<T, 128, 128, NW, STAGES, false, true, true, REST, FIRST, SPLIT, false, false, false, \
                            true>(p);                                                               \
  }
#define GDN_FWD_SLIM_SAVE_U_ENTRIES(TAG, T)                                                          \
  GDN_FWD_SLIM_SAVE_U_ENTRY(TAG, T, w4gx, 4, gdn::SLIM_W4_STAGES, p.f.flags & gdn::FLAG_PDL_TRIGGER, false, false, \
                            false)                                                                  \
  GDN_FWD_SLIM_SAVE_U_ENTRY(TAG, T, w4gxs, 4, gdn::SLIM_W4_STAGES, p.f.flags & gdn::FLAG_PDL_TRIGGER, false, false, \
                            true)                                                                   \
  GDN_FWD_SLIM_SAVE_U_ENTRY(TAG, T, w8gx, 8, gdn::SLIM_W8_STAGES, p.f.flags & gdn::FLAG_PDL_TRIGGER, false, false, \
                            false)                                                                  \
  GDN_FWD_SLIM_SAVE_U_ENTRY(TAG, T, w4gxr, 4, gdn::SLIM_W4_STAGES, p.f.flags & gdn::FLAG_PDL_TRIGGER, true, false, \
                            false)                                                                  \
  GDN_FWD_SLIM_SAVE_U_ENTRY(TAG, T, w4gx0, 4, gdn::SLIM_W4_STAGES, true, false, true, false)

GDN_FWD_SLIM_SAVE_U_ENTRIES(bf16, gdn::gdn_bf16)
GDN_FWD_SLIM_SAVE_U_ENTRIES(f16, gdn::gdn_f16)

// Session 35 (sm35): the summary beside the first piece (slimsum_gxr) on three cp.async stages, two
// blocks per SM (110,592 B each): chunk c + 2's copies issued inside chunk c's step. The same
// arithmetic in the same order (DNNPLAN_GDN_FWD_PIECE_FIRST_SUM; SLIM_FIRST_SUMS).
#define GDN_FWD_SLIM_PIECE_SUM3_ENTRY(TAG, T)                                                       \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::SLIM_SUM3_MIN_BLOCKS)                   \
      gdn_fwd_slimsum_##TAG##_k128_gxr3(gdn::FwdFastParams p) {                                     \
    if (p.f.flags & gdn::FLAG_PDL_TRIGGER) dnnp_launch_dependents();                                \
    gdn::fwd_slim_sum_body<T, 128, 128, true, true, true, gdn::SLIM_SUM3_STAGES>(p);               \
  }

GDN_FWD_SLIM_PIECE_SUM3_ENTRY(bf16, gdn::gdn_bf16)
GDN_FWD_SLIM_PIECE_SUM3_ENTRY(f16, gdn::gdn_f16)

extern "C" __global__ void __launch_bounds__(gdn::CHAIN_THREADS) gdn_fwd_chain3r_k128(gdn::FwdFastParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::fwd_chain4_body_from1<128, gdn::CHAIN3_ROWS, gdn::CHAIN3R_STAGES>(p);
}
