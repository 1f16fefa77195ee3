// gdn_bwd.cu: entry points of the Gated DeltaNet chunked backward (kernels/include/gdn_bwd.cuh).
//
// Per (io dtype, K = V) variant, on one stream (the plan: src/engines/gdn/backward.rs):
//   gdn_bwd_chunk_offsets                <<<1, 1024>>> chunk table (+ the longest-first seq_order with
//     FLAG_SEQ_ORDER, session 34, lp34, as gdn_chunk_offsets: then the uncut replays fscan_gx{,4}{sc,scu,sl}
//     and the reverse scans dscan_ov2gxsc / ov2gxsh serve sequence seq_order[blockIdx.z])
//   gdn_bwd_prep15_{bf16,f16}_k{64,128}  <<<(max_chunks, HO), 256, Prep7Smem::bytes>>> (the
//     forward's factor kernel keeping T, E, Γ, β; the default, DNNPLAN_GDN_FWD_PREP=v15)
//   gdn_bwd_prep14_{bf16,f16}_k{64,128}  <<<as prep15>>> (the session-10 default, bitwise prep15:
//     the default's witness, DNNPLAN_GDN_FWD_PREP=v14)
//   gdn_bwd_fscan_{bf16,f16}_k{64,128}   <<<(V / 64, HO, N), 128, ScanSmem::bytes>>> (the session-5
//     forward-state replay, bitwise fscan_r4: the replay's witness, DNNPLAN_GDN_BWD_FSCAN=v1)
//   gdn_bwd_dscan_io_{bf16,f16}_k{64,128} <<<(V / 64, HO, N), 128, DscanMmaSmem::bytes>>>
//     (the 4-warp tensor-core reverse scan writing dS' in the io dtype; below 3/4 of a wave)
//   gdn_bwd_tokens_tc11_{bf16,f16}_k{64,128} <<<(max_chunks, HO), 512, TokSmem9::bytes>>>
//     (session 8's token stage, bitwise tc12: the default's witness, DNNPLAN_GDN_BWD_TOKENS=tc11)
//   gdn_bwd_tokens_tc12_{bf16,f16}_k{64,128} <<<as tokens_tc11, TokSmem12::bytes>>> (the default
//     since session 10: tc11 with the row phase's raw q / k rows of K + 16 and phase A's G tile by
//     tok_gswz with float2 stores)
//   gdn_bwd_fold_{bf16,f16}_k{64,128}    <<<(T, 3), max(K, V)>>>   (grouped heads only)
//   gdn_bwd_params                       <<<HO, 256, 2048>>>   (only with a_log or dt_bias)
// Not bundled since session 12 (no schedule rule picked them; several not bitwise the default):
// the preps before v14 (fwd_prep_body, fwd_prep3_body, fwd_prep10_body levels 0 / 1), the fp32
// CUDA-core reverse scan bwd_dscan_body and its fp32-dS' tensor-core sibling (bwd_dscan_mma_body
// without IO), the token stages bwd_tokens_body (fp32, mma) and bwd_tokens_tc_body levels
// 1-5 (tc, tc2, tc3, tc4, tc5) with tc5's overlapped consumer. Their bodies stay in the headers;
// bench/gdn_bwd_host_emu.cpp and bench/gdn_prep_host_emu.cpp still check them (like the
// never-bundled levels tc6, tc9, tc10, prep4, prep5, prep8, prep11).
// The single parameter is gdn::BwdParams by value; the piece-chain kernels (long sequences on few
// (sequence, head) pairs, kernels/include/gdn_bwd_chain.cuh) take gdn::BwdChainParams (BwdParams
// first; the plan passes that block to every kernel) and replace fscan and dscan_io when P > 1:
//   gdn_bwd_psum_{bf16,f16}_k{64,128}    <<<(V / 64, HO, N·(2P−1)), 128, FastSmem<K,4,2,false>>>
//   gdn_bwd_pchain_k{64,128}             <<<(V / 32, HO, N), 256>>>  (DNNPLAN_GDN_CHAIN=v1)
//   gdn_bwd_pchain2_k{64,128}            <<<(V / 32, HO, N), 256>>>  (fwd_chain2_body: M staged; v2)
//   gdn_bwd_pchain3_k{64,128}            <<<(V / 16, HO, N), 256>>>  (fwd_chain2_body on 16 rows; v3)
//   gdn_bwd_fscanp_{bf16,f16}_k{64,128}  <<<(V / 64, HO, N·P), 128, ScanSmem::bytes>>> (v1 replay)
// The session-6 replay (gdn_bwd_chain.cuh, bwd_fscan_piece_body on fscan_chunks: W, Kᴿ, Ũᵀ only,
// one barrier per chunk, 2 stages; bitwise gdn_bwd_fscan's ws_s), uncut (P = 1: from the initial
// state) or per piece (P > 1: from ws_seed), replacing gdn_bwd_fscan / gdn_bwd_fscanp:
//   gdn_bwd_fscan_r4_{bf16,f16}_k{64,128} <<<(V / 64, HO, N·P), 128, ScanxSmem<K,4,2,false,1>>>
//     (88 KB at K = 128; the plan asks for 116 KB below 4 waves of blocks: one block per SM)
// Not bundled (measured slower on the H200, and its entries perturb the codegen of the other
// kernels of this module): the pairs variant bwd_fscan_piece_body<T, K, K, 8, 2, 2, true>
// (two warps per 16 value rows, "r8"), which bench/gdn_scan_host_emu.cpp still checks.
//   gdn_bwd_dsum_{bf16,f16}_k{64,128}    <<<(V / 64, HO, N·(P−1)), 128, DscanMmaSmem::bytes>>>
//   gdn_bwd_dchain_k{64,128}             <<<(V / 32, HO, N), 256>>>  (DNNPLAN_GDN_CHAIN=v1)
//   gdn_bwd_dchain2_k{64,128}            <<<(V / 32, HO, N), 256>>>  (fwd_chain2_body; v2)
//   gdn_bwd_dchain3_k{64,128}            <<<(V / 16, HO, N), 256>>>  (fwd_chain2_body on 16 rows; v3)
//   gdn_bwd_dscanp_{bf16,f16}_k{64,128}  <<<(V / 64, HO, N·P), 128, DscanMmaSmem::bytes>>>
// and the 8-warp reverse scans (dscan_w8_chunks, bitwise the 4-warp ones' outputs; from 3/4 of a
// wave of blocks, DNNPLAN_GDN_BWD_DSCAN=v1 / w8 forces either):
//   gdn_bwd_dscan_w8_{bf16,f16}_k{64,128}  <<<(V / 64, HO, N), 256, DscanW8Smem::bytes>>>
//   gdn_bwd_dsum_w8_{bf16,f16}_k{64,128}   <<<(V / 64, HO, N·(P−1)), 256, DscanW8Smem::bytes>>>
//   gdn_bwd_dscanp_w8_{bf16,f16}_k{64,128} <<<(V / 64, HO, N·P), 256, DscanW8Smem::bytes>>>
// and the overlapped reverse scan -> token stage (gdn_bwd_overlap.cuh; DNNPLAN_GDN_BWD_OVERLAP):
//   gdn_bwd_chunk_order_rev                      <<<1, OFFSETS_THREADS>>> (replaces gdn_bwd_chunk_offsets; + seq_order)
//   gdn_bwd_dscan_ov_{bf16,f16}_k{64,128}    <<<(1, HO, N), V / 16 warps, DscanMmaSmem<K, V/16, 2>>> (PDL primary)
//   gdn_bwd_dscanp_ov_{bf16,f16}_k{64,128}   <<<(1, HO, N·P), as dscan_ov>>> (PDL primary, pieces)
//   gdn_bwd_dscan_ov2_{bf16,f16}_k{64,128}   <<<as dscan_ov, DscanMmaSmem<K, V/16, 2>::bytes_r2>>> (R2 loop;
//   gdn_bwd_dscanp_ov2_{bf16,f16}_k{64,128}  <<<as dscanp_ov, bytes_r2>>>   bitwise dscan_ov / dscanp_ov)
//   gdn_bwd_dscan_ov5_{bf16,f16}_k{64,128}   <<<as dscan_ov2, V / 16 + 1 warps>>> (session 18: the R2 loop
//   gdn_bwd_dscanp_ov5_{bf16,f16}_k{64,128}  <<<as dscanp_ov2, V / 16 + 1 warps>>> with a publisher warp,
//                                             PUBW; bitwise dscan_ov2 / dscanp_ov2)
//   gdn_bwd_tokens_tc11_ov_{bf16,f16}_k{64,128} <<<as tokens_tc11, programmatic>>>
//   gdn_bwd_tokens_tc12_ov_{bf16,f16}_k{64,128} <<<as tokens_tc12, programmatic>>>
//   gdn_bwd_dscan_ov5dr_{bf16,f16}_k{64,128}  <<<as dscan_ov5>>>  (session 21: DR_IO, dR in the io
//   gdn_bwd_dscanp_ov5dr_{bf16,f16}_k{64,128} <<<as dscanp_ov5>>>  dtype through the dS' staging rows)
//   gdn_bwd_tokens_tc13_ov_{bf16,f16}_k{64,128} <<<as tokens_tc12_ov>>> (REV 13: reads that io dR;
//                                             dv, dβ from the rounded dR, not bitwise tc12)
//   gdn_bwd_tokens_tc16_ov_{bf16,f16}_k128    <<<as tokens_tc13_ov>>> (session 27, REV 16: tc13 loading
//                                             the U tiles of fscan_gx{,4}u instead of W, Ũᵀ and the
//                                             U product; bitwise tc13)
//   gdn_bwd_tokens_tw1_{bf16,f16}_k128       <<<as tokens_tc16_ov, Tw1Smem<128, 128>::bytes>>> (session 30,
//                                             m1t30: td29's M1, REV 30: tc16's tile with the value products
//                                             warp-specialized on wgmma, gdn_bwd_tw.cuh; bitwise tc16 on
//                                             the H200; DNNPLAN_GDN_BWD_TOKENS=tw1)
//   gdn_bwd_tokens_tw7_{bf16,f16}_k128       <<<as tokens_tw1>>> (session 39: tw3 with the ring's S, dS', U, dR
//                                             by tensor maps, BwdTmaParams; DNNPLAN_GDN_BWD_TOKENS=tw7)
//   gdn_bwd_tokens_tw3_{bf16,f16}_k128       <<<as tokens_tw1>>> (session 32, tp32: REV 32, tw1 with the unit's
//                                             flag waited before the tile's first barrier (thread 64) and
//                                             each quarter's dS' / dR copies issued with its S, U, dO; the
//                                             same arithmetic as tw1; DNNPLAN_GDN_BWD_TOKENS=tw3)
//   gdn_bwd_dscan_ov2gx_{bf16,f16}_k128       <<<(1, HO, N), 256, DscanGxSmem<128, 8, 2>::bytes_r2>>>
//     (session 25, dsx25: dscan_ov5dr's outputs with every product on the warpgroup MMA, B tiles in
//     the 128-byte swizzle, no publisher warp (ov2's thread-0 publish), gdn_bwd_dscan_gx.cuh; not
//     bitwise ov5dr; the uncut producer of tc13 at K = 128 by rule since session 25,
//     DNNPLAN_GDN_BWD_DSCAN=ov5dr forces dscan_ov5dr)
//   gdn_bwd_dscanp_ov2gx_{bf16,f16}_k128      <<<(1, HO, N·P), as dscan_ov2gx>>> (the seeded piece
//     pass on the same loop, replacing dscanp_ov5dr under DNNPLAN_GDN_BWD_DSCAN=ov2gx)
// Launch chain (src/engines/gdn/pdl.rs, DNNPLAN_GDN_PDL): every entry but the overlapped token
// stages (gdn_bwd_tokens_tc{11,12,13}_ov) starts with dnnp_pdl_enter (dnnp_overlap.cuh): griddepcontrol.wait
// in every block before anything else, then (FLAG_PDL_TRIGGER) the next kernel's launch trigger.
// The overlapped token stage keeps gdn_bwd_overlap.cuh's contract instead: it reads the prep's and
// the replay's outputs without a wait because its grid starts only after every reverse-scan block
// triggered, which each does after its own dnnp_pdl_enter wait (so after the replay completed);
// its last block's griddepcontrol.wait makes its completion imply the reverse scan's.
#include "dnnp_overlap.cuh"
#include "gdn_bwd.cuh"
#include "gdn_bwd_chain.cuh"
#include "gdn_bwd_overlap.cuh"
#include "gdn_bwd_fscan_gx.cuh"
#include "gdn_bwd_dscan_gx.cuh"
#include "gdn_fwd_prep3.cuh"
#include "gdn_fwd_prep10.cuh"

// The backward's first kernel (one of these two): the sanitized cu_seqlens (gdn::cu_sanitize_body),
// then the chunk table (and the overlap's chunk order).
extern "C" __global__ void __launch_bounds__(gdn::OFFSETS_THREADS) gdn_bwd_chunk_offsets(gdn::BwdTableParams p) { dnnp_pdl_enter(p.c.cp.b.f.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::cu_sanitize_body(p.cu_src, p.c.cp.b.f.n_seqs, gdn::cu_sanitized(p.c.cp.b.f));
  gdn::chunk_offsets_body(p.c.cp.b.f);
}

extern "C" __global__ void __launch_bounds__(gdn::OFFSETS_THREADS) gdn_bwd_chunk_order_rev(gdn::BwdTableParams p) { dnnp_pdl_enter(p.c.cp.b.f.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::cu_sanitize_body(p.cu_src, p.c.cp.b.f.n_seqs, gdn::cu_sanitized(p.c.cp.b.f));
  gdn::bwd_chunk_order_body(p.c.cp);
}

extern "C" __global__ void __launch_bounds__(gdn::PARAM_THREADS) gdn_bwd_params(gdn::BwdParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::bwd_params_body(p);
}

#define GDN_BWD_ENTRIES(TAG, T, KD)                                                                 \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::PREP6_MIN_BLOCKS)          \
      gdn_bwd_prep14_##TAG##_k##KD(gdn::BwdParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_prep10_body<T, KD, KD, true, false, 2>(p.f, gdn::PrepKeep{p.ws_t, p.ws_e, p.ws_gam, p.ws_bet}); \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::PREP6_MIN_BLOCKS)          \
      gdn_bwd_prep15_##TAG##_k##KD(gdn::BwdParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_prep10_body<T, KD, KD, true, false, 3>(p.f, gdn::PrepKeep{p.ws_t, p.ws_e, p.ws_gam, p.ws_bet}); \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::SCAN_WARPS * 32)                               \
      gdn_bwd_fscan_##TAG##_k##KD(gdn::BwdParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_scan_body<T, KD, KD, gdn::SCAN_WARPS, gdn::SCAN_STAGES, true>(p.f, p.ws_s);          \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::DSCAN_MMA_WARPS * 32)                          \
      gdn_bwd_dscan_io_##TAG##_k##KD(gdn::BwdParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_mma_body<T, KD, KD, gdn::DSCAN_MMA_WARPS, gdn::DSCAN_MMA_STAGES, true>(p);      \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::TOK_THREADS)                                   \
      gdn_bwd_tokens_tc11_##TAG##_k##KD(gdn::BwdParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_tokens_tc_body<T, KD, KD, 11>(p);                                                     \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::TOK_THREADS)                                   \
      gdn_bwd_tokens_tc12_##TAG##_k##KD(gdn::BwdParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_tokens_tc_body<T, KD, KD, 12>(p);                                                     \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(KD) gdn_bwd_fold_##TAG##_k##KD(gdn::BwdParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_fold_body<T, KD, KD>(p);                                                              \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(4 * 32) gdn_bwd_psum_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_psum_body<T, KD, KD, 4, gdn::SUM_STAGES>(p);                                          \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::SCAN_WARPS * 32)                               \
      gdn_bwd_fscanp_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_fscan_piece_body<T, KD, KD, gdn::SCAN_WARPS, gdn::SCAN_STAGES>(p);                     \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(4 * 32) gdn_bwd_fscan_r4_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_fscan_piece_body<T, KD, KD, 4, 2, 1, true>(p);                                        \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::DSCAN_MMA_WARPS * 32)                          \
      gdn_bwd_dsum_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_piece_body<T, KD, KD, gdn::DSCAN_MMA_WARPS, gdn::DSCAN_MMA_STAGES, true>(p);    \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::DSCAN_MMA_WARPS * 32)                          \
      gdn_bwd_dscanp_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_piece_body<T, KD, KD, gdn::DSCAN_MMA_WARPS, gdn::DSCAN_MMA_STAGES, false>(p);   \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::DSCAN_W8_WARPS * 32, 1)                        \
      gdn_bwd_dscan_w8_##TAG##_k##KD(gdn::BwdParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_w8_body<T, KD, KD, gdn::DSCAN_MMA_STAGES>(p);                                   \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::DSCAN_W8_WARPS * 32, 1)                        \
      gdn_bwd_dsum_w8_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_w8_piece_body<T, KD, KD, gdn::DSCAN_MMA_STAGES, true>(p);                       \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::DSCAN_W8_WARPS * 32, 1)                        \
      gdn_bwd_dscanp_w8_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_w8_piece_body<T, KD, KD, gdn::DSCAN_MMA_STAGES, false>(p);                      \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(KD / 16 * 32, 1)                                    \
      gdn_bwd_dscan_ov_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_mma_body<T, KD, KD, KD / 16, gdn::DSCAN_MMA_STAGES, true, true>(p.b, p.ov_flags); \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(KD / 16 * 32, 1)                                    \
      gdn_bwd_dscanp_ov_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_piece_body<T, KD, KD, KD / 16, gdn::DSCAN_MMA_STAGES, false, true>(p);          \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(KD / 16 * 32, 1)                                    \
      gdn_bwd_dscan_ov2_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_mma_body<T, KD, KD, KD / 16, gdn::DSCAN_MMA_STAGES, true, true, true>(p.b, p.ov_flags); \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(KD / 16 * 32, 1)                                    \
      gdn_bwd_dscanp_ov2_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_piece_body<T, KD, KD, KD / 16, gdn::DSCAN_MMA_STAGES, false, true, true>(p); \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(KD / 16 * 32 + 32, 1)                               \
      gdn_bwd_dscan_ov5_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_mma_body<T, KD, KD, KD / 16, gdn::DSCAN_MMA_STAGES, true, true, true, true>(p.b, p.ov_flags); \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(KD / 16 * 32 + 32, 1)                               \
      gdn_bwd_dscanp_ov5_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_piece_body<T, KD, KD, KD / 16, gdn::DSCAN_MMA_STAGES, false, true, true, false, true>(p); \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::TOK_THREADS)                                   \
      gdn_bwd_tokens_tc11_ov_##TAG##_k##KD(gdn::BwdChainParams p) {                               \
    gdn::bwd_tokens_ov_body<T, KD, KD, 11>(p);                                                     \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::TOK_THREADS)                                   \
      gdn_bwd_tokens_tc12_ov_##TAG##_k##KD(gdn::BwdChainParams p) {                               \
    gdn::bwd_tokens_ov_body<T, KD, KD, 12>(p);                                                     \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(KD / 16 * 32 + 32, 1)                               \
      gdn_bwd_dscan_ov5dr_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_mma_body<T, KD, KD, KD / 16, gdn::DSCAN_MMA_STAGES, true, true, true, true, true>(p.b, p.ov_flags); \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(KD / 16 * 32 + 32, 1)                               \
      gdn_bwd_dscanp_ov5dr_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_piece_body<T, KD, KD, KD / 16, gdn::DSCAN_MMA_STAGES, false, true, true, false, true, true>(p); \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::TOK_THREADS)                                   \
      gdn_bwd_tokens_tc13_ov_##TAG##_k##KD(gdn::BwdChainParams p) {                               \
    gdn::bwd_tokens_ov_body<T, KD, KD, 13>(p);                                                     \
  }
// Session 27 (tu27): tc13 loading the replay's U tiles (REV 16, K = V = 128; the pair of
// gdn_bwd_fscan_gx{,4}u, DNNPLAN_GDN_BWD_TOKENS=tc16).
#define GDN_BWD_TC16_ENTRY(TAG, T)                                                                  \
  extern "C" __global__ void __launch_bounds__(gdn::TOK_THREADS)                                   \
      gdn_bwd_tokens_tc16_ov_##TAG##_k128(gdn::BwdChainParams p) {                                \
    gdn::bwd_tokens_ov_body<T, 128, 128, 16>(p);                                                   \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::TOK_THREADS)                                   \
      gdn_bwd_tokens_tw1_##TAG##_k128(gdn::BwdChainParams p) {                                     \
    gdn::bwd_tokens_ov_body<T, 128, 128, 30>(p);                                                   \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::TOK_THREADS)                                   \
      gdn_bwd_tokens_tw3_##TAG##_k128(gdn::BwdChainParams p) {                                     \
    gdn::bwd_tokens_ov_body<T, 128, 128, 32>(p);                                                   \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::TOK_THREADS)                                   \
      gdn_bwd_tokens_tw7_##TAG##_k128(const __grid_constant__ gdn::BwdTmaParams p) {               \
    gdn::bwd_tokens_ov_body<T, 128, 128, 34>(p.c.cp, &p.maps);                                     \
  }

#define GDN_BWD_CHAIN_ENTRIES(KD)                                                                   \
  extern "C" __global__ void __launch_bounds__(gdn::CHAIN_THREADS) gdn_bwd_pchain_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_chain_body<KD>(gdn::chain_fwd_view(p));                                               \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::CHAIN_THREADS) gdn_bwd_dchain_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_chain_body<KD>(gdn::chain_rev_view(p));                                               \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::CHAIN_THREADS) gdn_bwd_pchain2_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_chain2_body<KD>(gdn::chain_fwd_view(p));                                              \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::CHAIN_THREADS) gdn_bwd_dchain2_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_chain2_body<KD>(gdn::chain_rev_view(p));                                              \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::CHAIN_THREADS) gdn_bwd_pchain3_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_chain2_body<KD, gdn::CHAIN3_ROWS>(gdn::chain_fwd_view(p));                            \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::CHAIN_THREADS) gdn_bwd_dchain3_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_chain2_body<KD, gdn::CHAIN3_ROWS>(gdn::chain_rev_view(p));                            \
  }

GDN_BWD_CHAIN_ENTRIES(128)
GDN_BWD_CHAIN_ENTRIES(64)
GDN_BWD_ENTRIES(bf16, gdn::gdn_bf16, 128)
GDN_BWD_ENTRIES(bf16, gdn::gdn_bf16, 64)
GDN_BWD_ENTRIES(f16, gdn::gdn_f16, 128)
GDN_BWD_ENTRIES(f16, gdn::gdn_f16, 64)

// Session 14 (gdn_bwd_chain.cuh): the piece chain's passes on one-stage phased loops, K = V = 128,
// each bitwise its two-stage kernel's outputs (the backward's piece path at P ≈ 8 in one wave):
//   gdn_bwd_psum1_{bf16,f16}_k128   <<<as psum, FastSmem<128,4,1,false>>>  (three per SM)
//   gdn_bwd_fscanp1_{bf16,f16}_k128 <<<as fscan_r4, ScanxSmem<128,4,1,false,1>>> (bitwise fscan_r4)
//   gdn_bwd_dsum1_{bf16,f16}_k128   <<<as dsum, DscanMmaSmem<128,4,1>::bytes>>> (two per SM)
// Not bundled (session 14: bitwise dscanp on the H200, but the token stage after it instead of
// beside it made the backward slower: bench/gdn_results.md, bocc14): the seeded reverse scan on
// the same loop, bwd_dscan_piece_body<T, 128, 128, 4, 1, false, false, false, true> ("dscanp1").
#define GDN_BWD_PHASED_ENTRIES(TAG, T)                                                              \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::PSUM1_MIN_BLOCKS)                       \
      gdn_bwd_psum1_##TAG##_k128(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_psum_body<T, 128, 128, 4, 1, true, true>(p);                                          \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::FSCANP1_MIN_BLOCKS)                     \
      gdn_bwd_fscanp1_##TAG##_k128(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_fscan_piece_body<T, 128, 128, 4, 1, 1, false, true, false>(p);                        \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(gdn::DSCAN_MMA_WARPS * 32, gdn::DSUM1_MIN_BLOCKS)    \
      gdn_bwd_dsum1_##TAG##_k128(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_piece_body<T, 128, 128, gdn::DSCAN_MMA_WARPS, 1, true, false, false, true>(p);  \
  }
GDN_BWD_PHASED_ENTRIES(bf16, gdn::gdn_bf16)
GDN_BWD_PHASED_ENTRIES(f16, gdn::gdn_f16)

// Session 17 (gdn_bwd_chain.cuh): state checkpoints of any cadence c = 64·m and fp32 rows seed the
// forward-state replay (spec §4.5, the "coarse" row), and the piece chain's summaries under any
// checkpoint use give only the reverse chain's transitions:
//   gdn_bwd_ckrows                      <<<1, OFFSETS_THREADS>>> (the rows' table; m > 1 only)
//   gdn_bwd_fscanc_{bf16,f16}_k{64,128} <<<(V / 64, HO, max(T/c + N, 1)), 128, ScanxSmem<K,4,2,false,1>>>
//     (one block per checkpoint row: its m chunks from the row, the r4 replay's 2-stage loop)
//   gdn_bwd_fscanc1_{bf16,f16}_k128     <<<as fscanc, ScanxSmem<128,4,1,false,1>>> (fscanp1's one-stage
//     phased loop, three per SM; bitwise fscanc)
//   gdn_bwd_psumt_{bf16,f16}_k{64,128}  <<<(V / 64, HO, N·(P−1)), 128, FastSmem<K,4,2,false>>> (Mᵀ_j only)
//   gdn_bwd_psumt1_{bf16,f16}_k128      <<<as psumt, FastSmem<128,4,1,false>>> (psum1's loop; Mᵀ_j only)
extern "C" __global__ void __launch_bounds__(gdn::OFFSETS_THREADS) gdn_bwd_ckrows(gdn::BwdCkptParams p) { dnnp_pdl_enter(p.cp.b.f.flags & gdn::FLAG_PDL_TRIGGER);
  gdn::bwd_ckpt_rows_body(p);
}

#define GDN_BWD_CKPT_ENTRIES(TAG, T, KD)                                                            \
  extern "C" __global__ void __launch_bounds__(4 * 32) gdn_bwd_fscanc_##TAG##_k##KD(gdn::BwdCkptParams p) { dnnp_pdl_enter(p.cp.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_fscan_ckpt_body<T, KD, KD, 4, 2, true>(p);                                            \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(4 * 32) gdn_bwd_psumt_##TAG##_k##KD(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_psum_body<T, KD, KD, 4, gdn::SUM_STAGES, false, false, true>(p);                      \
  }
GDN_BWD_CKPT_ENTRIES(bf16, gdn::gdn_bf16, 128)
GDN_BWD_CKPT_ENTRIES(bf16, gdn::gdn_bf16, 64)
GDN_BWD_CKPT_ENTRIES(f16, gdn::gdn_f16, 128)
GDN_BWD_CKPT_ENTRIES(f16, gdn::gdn_f16, 64)

#define GDN_BWD_CKPT_PHASED_ENTRIES(TAG, T)                                                         \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::FSCANP1_MIN_BLOCKS)                     \
      gdn_bwd_fscanc1_##TAG##_k128(gdn::BwdCkptParams p) { dnnp_pdl_enter(p.cp.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_fscan_ckpt_body<T, 128, 128, 4, 1, false, true, false>(p);                            \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::PSUM1_MIN_BLOCKS)                       \
      gdn_bwd_psumt1_##TAG##_k128(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_psum_body<T, 128, 128, 4, 1, true, true, true>(p);                                    \
  }
GDN_BWD_CKPT_PHASED_ENTRIES(bf16, gdn::gdn_bf16)
GDN_BWD_CKPT_PHASED_ENTRIES(f16, gdn::gdn_f16)

// One replay entry (gdn_bwd_fscan_gx.cuh's bwd_fscan_gx_body, one warpgroup): gdn_bwd_NAME_TAG_k128
// on the body's template arguments after <T, K = 128, V = 128> (STAGES, STORE_U, RAW_K_SCALED, SLIM).
#define GDN_BWD_REPLAY_ENTRY(NAME, TAG, T, ...)                                                     \
  extern "C" __global__ void __launch_bounds__(4 * 32)                                             \
      gdn_bwd_##NAME##_##TAG##_k128(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_fscan_gx_body<T, 128, 128, __VA_ARGS__>(p);                                           \
  }
// Session 25 (helper fsx25, gdn_bwd_fscan_gx.cuh): the forward-state replay with its chunk step on
// the warpgroup (P = X Wᵀ and X ← e^{Γ_last} X + Uᵀ Kᴿ by wgmma RS, W and Kᴿ staged in the 128-byte
// swizzle), K = V = 128, uncut or per piece as fscan_r4 (DNNPLAN_GDN_BWD_FSCAN=gx / gx3 / gx4 / gxr; K = 64
// keeps fscan_r4; the same io-rounded operands, fp32 sums in the tensor core's order):
//   gdn_bwd_fscan_gx_{bf16,f16}_k128  <<<(V / 64, HO, N·P), 128, FscanGxSmem<128, FSCAN_GX_STAGES>::bytes>>>
//     (two stages, 83,968 B)
//   gdn_bwd_fscan_gx3_{bf16,f16}_k128 <<<as fscan_gx, FscanGxSmem<128, 3>::bytes>>> (125,952 B)
//   gdn_bwd_fscan_gx4_{bf16,f16}_k128 <<<as fscan_gx, FscanGxSmem<128, 4>::bytes>>> (167,936 B;
//     DNNPLAN_GDN_BWD_FSCAN=gx4, and gxr's uncut replay where it holds its SM alone)
//   gdn_bwd_fscan_gxu_{bf16,f16}_k128, gdn_bwd_fscan_gx4u_{bf16,f16}_k128 <<<as fscan_gx / fscan_gx4>>>
//     (session 27, tu27: STORE_U, also writing each chunk's io U tile into ws_dr's second half for
//     the token stage tc16; the uncut replay of the tc16 pair, the same S_c bits)
#define GDN_BWD_FSCAN_GX_ENTRIES(TAG, T)                                                            \
  GDN_BWD_REPLAY_ENTRY(fscan_gx, TAG, T, gdn::FSCAN_GX_STAGES)                                     \
  GDN_BWD_REPLAY_ENTRY(fscan_gx3, TAG, T, 3)                                                       \
  GDN_BWD_REPLAY_ENTRY(fscan_gx4, TAG, T, 4)                                                       \
  GDN_BWD_REPLAY_ENTRY(fscan_gxu, TAG, T, gdn::FSCAN_GX_STAGES, true)                              \
  GDN_BWD_REPLAY_ENTRY(fscan_gx4u, TAG, T, 4, true)
GDN_BWD_FSCAN_GX_ENTRIES(bf16, gdn::gdn_bf16)
GDN_BWD_FSCAN_GX_ENTRIES(f16, gdn::gdn_f16)
GDN_BWD_TC16_ENTRY(bf16, gdn::gdn_bf16)
GDN_BWD_TC16_ENTRY(f16, gdn::gdn_f16)
// Session 25 (dsx25, gdn_bwd_dscan_gx.cuh): the overlapped producers of tc13 on wgmma (two
// warpgroups, thread 0 publishes; 224 registers, no spill), uncut and the seeded piece pass,
// K = V = 128 only (K = 64 keeps dscan_ov5dr / dscanp_ov5dr).
#define GDN_BWD_DSCAN_GX_ENTRY(TAG, T)                                                              \
  extern "C" __global__ void __launch_bounds__(128 / 16 * 32, 1)                                   \
      gdn_bwd_dscan_ov2gx_##TAG##_k128(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_gx_body<T, 128, 128, 128 / 16, gdn::DSCAN_MMA_STAGES>(p.b, p.ov_flags);           \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(128 / 16 * 32, 1)                                   \
      gdn_bwd_dscanp_ov2gx_##TAG##_k128(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscanp_gx_body<T, 128, 128, 128 / 16, gdn::DSCAN_MMA_STAGES>(p);                       \
  }
GDN_BWD_DSCAN_GX_ENTRY(bf16, gdn::gdn_bf16)
GDN_BWD_DSCAN_GX_ENTRY(f16, gdn::gdn_f16)
// Session 27 (helper qke27): the backward's scalar form at K = V = 128, uncut (P = 1) only. The
// prep writes, instead of the Q⁺, Kᴿ and E tiles, the four fp32 per-token scalars of the slim
// forward (ck = β e^Γ kr, β, cq = qr e^Γ, cr = kr e^{Γ_last−Γ}) into ws_kr ([chunks, HO, 4, 64]);
// the replay and the reverse scan read the graph's raw k (and q) and apply the scalars (the same
// bodies with RAW_K_SCALED). Not bitwise the full form (other roundings): the fp64 reference is the bar.
//   gdn_bwd_prep15sc_{bf16,f16}_k128      <<<as prep15>>> (fwd_prep10_body<..., 3, SC = true>)
//   gdn_bwd_fscan_gxsc_{bf16,f16}_k128    <<<(V / 64, HO, N), 128, FscanGxSmem<128, 2, true>::bytes>>>
//   gdn_bwd_fscan_gx4sc_{bf16,f16}_k128   <<<as fscan_gxsc, FscanGxSmem<128, 4, true>::bytes>>>
//   gdn_bwd_fscan_gx{,4}scu_{bf16,f16}_k128 <<<as fscan_gx{,4}sc>>> (with tu27's STORE_U: the scalar
//     form's replay of the tc16 pair, storing the unscaled U tiles)
//   gdn_bwd_fscan_gx{,4}sl_{bf16,f16}_k128 <<<as fscan_gx{,4}scu, FscanSlSmem<128, 2 | 4>::bytes>>>
//     (session 28, helper sb28: the slim form's storing replay, U rebuilt from raw k, v, T and the
//     scalars by the forward slim scan's step: no W, Ũᵀ reads; gdn_bwd_fscan_gx.cuh, SLIM)
//   gdn_bwd_dscan_ov2gxsc_{bf16,f16}_k128 <<<(1, HO, N), 256, DscanGxSmem<128, 8, 2, true>::bytes_r2>>>
#define GDN_BWD_SCALAR_FORM_ENTRIES(TAG, T)                                                         \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::PREP6_MIN_BLOCKS)          \
      gdn_bwd_prep15sc_##TAG##_k128(gdn::BwdParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_prep10_body<T, 128, 128, true, false, 3, true>(p.f, gdn::PrepKeep{p.ws_t, p.ws_e, p.ws_gam, p.ws_bet}); \
  }                                                                                                \
  GDN_BWD_REPLAY_ENTRY(fscan_gxsc, TAG, T, gdn::FSCAN_GX_STAGES, false, true)                      \
  GDN_BWD_REPLAY_ENTRY(fscan_gx4sc, TAG, T, 4, false, true)                                        \
  GDN_BWD_REPLAY_ENTRY(fscan_gxscu, TAG, T, gdn::FSCAN_GX_STAGES, true, true)                      \
  GDN_BWD_REPLAY_ENTRY(fscan_gx4scu, TAG, T, 4, true, true)                                        \
  GDN_BWD_REPLAY_ENTRY(fscan_gxsl, TAG, T, gdn::FSCAN_GX_STAGES, true, true, true)                 \
  GDN_BWD_REPLAY_ENTRY(fscan_gx4sl, TAG, T, 4, true, true, true)                                   \
  extern "C" __global__ void __launch_bounds__(128 / 16 * 32, 1)                                   \
      gdn_bwd_dscan_ov2gxsc_##TAG##_k128(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_gx_body<T, 128, 128, 128 / 16, gdn::DSCAN_MMA_STAGES, true>(p.b, p.ov_flags);     \
  }
GDN_BWD_SCALAR_FORM_ENTRIES(bf16, gdn::gdn_bf16)
GDN_BWD_SCALAR_FORM_ENTRIES(f16, gdn::gdn_f16)
// Session 29 (helper dw29): the scalar form's uncut producer as two blocks per unit, one warpgroup
// on 64 value rows each (bwd_dscan_gx_body with SPLIT, DscanGxSplitSmem: two blocks per SM; the same
// per-element arithmetic as dscan_ov2gxsc, bitwise; each half adds 1 to the unit's flag, the
// consumer waits for BwdChainParams::ov_need = 2).
//   gdn_bwd_dscan_ov2gxsh_{bf16,f16}_k128 <<<(2, HO, N), 128, DscanGxSplitSmem<128, 4>::bytes_r2>>>
#define GDN_BWD_DSCAN_SPLIT_ENTRY(TAG, T)                                                           \
  extern "C" __global__ void __launch_bounds__(4 * 32, 2)                                          \
      gdn_bwd_dscan_ov2gxsh_##TAG##_k128(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscan_gx_body<T, 128, 128, 4, gdn::DSCAN_MMA_STAGES, true, true>(p.b, p.ov_flags);    \
  }
GDN_BWD_DSCAN_SPLIT_ENTRY(bf16, gdn::gdn_bf16)
GDN_BWD_DSCAN_SPLIT_ENTRY(f16, gdn::gdn_f16)
// Session 29 (helper ps29): the piece chain on the slim form (gdn_bwd_fscan_gx.cuh, SUMMARY): the
// summaries H_j, M_j, Mᵀ_j by the slim chunk step on raw k, v, the prep's T rows and scalars (prep15sl's
// outputs; no W, Kᴿ, Ũᵀ); the seeded replay is gdn_bwd_fscan_gxsl on the grid (V / 64, HO, N·P).
//   gdn_bwd_psum_sl_{bf16,f16}_k128 <<<(V / 64, HO, N·(2P−1)), 128, FscanSlSmem<128, PSUM_SL_STAGES>::bytes>>>
//     (two stages, 69,632 B; PSUM_SL_MIN_BLOCKS per SM)
#define GDN_BWD_PSUM_SL_ENTRY(TAG, T)                                                               \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::PSUM_SL_MIN_BLOCKS)                     \
      gdn_bwd_psum_sl_##TAG##_k128(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_psum_sl_body<T, 128, 128, gdn::PSUM_SL_STAGES>(p);                                    \
  }
GDN_BWD_PSUM_SL_ENTRY(bf16, gdn::gdn_bf16)
GDN_BWD_PSUM_SL_ENTRY(f16, gdn::gdn_f16)
// Session 38: the slim summaries' Mᵀ_j blocks alone (the saved replay on pieces: the states and U
// tiles come from the forward, so only the reverse chain's transitions are needed).
//   gdn_bwd_psumt_sl_{bf16,f16}_k128 <<<(V / 64, HO, N·(P−1)), 128, as psum_sl>>>
#define GDN_BWD_PSUMT_SL_ENTRY(TAG, T)                                                              \
  extern "C" __global__ void __launch_bounds__(4 * 32, gdn::PSUM_SL_MIN_BLOCKS)                     \
      gdn_bwd_psumt_sl_##TAG##_k128(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_psum_sl_body<T, 128, 128, gdn::PSUM_SL_STAGES, true>(p);                              \
  }
GDN_BWD_PSUMT_SL_ENTRY(bf16, gdn::gdn_bf16)
GDN_BWD_PSUMT_SL_ENTRY(f16, gdn::gdn_f16)
// Session 28 (helper pp28): the scalar form's prep without W and Ũᵀ, for a replay that rebuilds U
// from the raw k, v, T and the scalars (the forward's slim chunk step): prep15sc's body with SL
// (no v reads, no Y, no E rows, no phase 5); T, A, the four scalars, Γ, β, Γ_last bitwise
// prep15sc's (bench/gdn_prep_host_emu.cpp, GDN_EMU_SL=1). K = V = 128 only.
//   gdn_bwd_prep15sl_{bf16,f16}_k128  <<<(chunk slots, HO), PREP3_THREADS, Prep10Smem<128, 128, true>::bytes>>>
//     (36,352 B; PREP15SL_MIN_BLOCKS = 5 per SM)
#define GDN_BWD_PREP_SLIM_ENTRY(TAG, T)                                                              \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::PREP15SL_MIN_BLOCKS)       \
      gdn_bwd_prep15sl_##TAG##_k128(gdn::BwdParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_prep10_body<T, 128, 128, true, false, 3, true, true>(p.f, gdn::PrepKeep{p.ws_t, p.ws_e, p.ws_gam, p.ws_bet}); \
  }
GDN_BWD_PREP_SLIM_ENTRY(bf16, gdn::gdn_bf16)
GDN_BWD_PREP_SLIM_ENTRY(f16, gdn::gdn_f16)
// Session 29 (helper bp29): the backward's slim prep on the forward slim prep's tile
// (fwd_slim_prep_tile<T, 128, 1, KEEP>: the wgmma form of gdn_fwd_slimprep_*_k128_wg, quarter-warp
// rows) with prep15sl's outputs in prep15sl's layouts (full T and A rows, Γ, β, the four scalars,
// Γ_last), the same values (bench/gdn_prep_host_emu.cpp, GDN_EMU_BP16=1). K = V = 128 only.
//   gdn_bwd_prep16sl_{bf16,f16}_k128  <<<(chunk slots, HO), PREP3_THREADS, SlimPrepSmem<128>::bytes>>>
//     (36,352 B, 1024-byte aligned; SLIM_PREP_WG_MIN_BLOCKS = 4 per SM)
// GDN_BWD_PREP16_SLIM_ENTRY(NAME, G, TAG, T): gdn_bwd_NAME_TAG_k128, fwd_slim_prep_tile's KEEP form
// with its G (0: prep16sl, 1: prep16slc, 2: prep16sll below).
#define GDN_BWD_PREP16_SLIM_ENTRY(NAME, G, TAG, T)                                                   \
  extern "C" __global__ void __launch_bounds__(gdn::PREP3_THREADS, gdn::SLIM_PREP_WG_MIN_BLOCKS)   \
      gdn_bwd_##NAME##_##TAG##_k128(gdn::BwdParams p) { dnnp_pdl_enter(p.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::fwd_slim_prep_body<T, 128, 1, true, G>(p.f, gdn::PrepKeep{p.ws_t, p.ws_e, p.ws_gam, p.ws_bet}); \
  }
GDN_BWD_PREP16_SLIM_ENTRY(prep16sl, 0, bf16, gdn::gdn_bf16)
GDN_BWD_PREP16_SLIM_ENTRY(prep16sl, 0, f16, gdn::gdn_f16)
// Session 32 (helper pp32): prep16sl on the trimmed tile (fwd_slim_prep_tile's G = 1, as the forward's
// _wgc: the gates' two block barriers merged, the L tile in its own region; two block barriers fewer),
// the same values:
//   gdn_bwd_prep16slc_{bf16,f16}_k128 <<<(chunk slots, HO), PREP3_THREADS, SlimPrepSmem<128>::bytes_l>>>
//     (54,784 B, 1024-byte aligned; SLIM_PREP_WG_MIN_BLOCKS = 4 per SM)
GDN_BWD_PREP16_SLIM_ENTRY(prep16slc, 1, bf16, gdn::gdn_bf16)
GDN_BWD_PREP16_SLIM_ENTRY(prep16slc, 1, f16, gdn::gdn_f16)
// Session 35 (helper pr35): prep16slc with the chunk located in one round of loads
// (fwd_slim_prep_tile's G = 2, as the forward's _wgl: locate_chunk_warp), the same values:
//   gdn_bwd_prep16sll_{bf16,f16}_k128 <<<as prep16slc>>>
GDN_BWD_PREP16_SLIM_ENTRY(prep16sll, 2, bf16, gdn::gdn_bf16)
GDN_BWD_PREP16_SLIM_ENTRY(prep16sll, 2, f16, gdn::gdn_f16)
// Session 29 (helper pr29, gdn_bwd_dscan_gx.cuh): the piece chain's reverse half in the scalar form
// (raw q, k and the prep's four per-token scalars in ws_kr, as gdn_bwd_dscan_ov2gxsc; for the
// scalar / slim preps prep15sc / prep15sl, no Q⁺, Kᴿ, E), K = V = 128:
//   gdn_bwd_dsum_sc_{bf16,f16}_k128      <<<(1, HO, N·(P−1)), 256, DscanGxSmem<128, 8, 2, true>::bytes>>>
//     (135,168 B: the reverse summaries G_j on dscan_ov2gxsc's step without its dS' / dR stores,
//     bwd_dscanp_gx_body's SUM; replaces gdn_bwd_dsum1 / dsum / dsum_w8)
//   gdn_bwd_dscanp_ov2gxsc_{bf16,f16}_k128 <<<(1, HO, N·P), 256, DscanGxSmem<128, 8, 2, true>::bytes_r2>>>
//     (169,984 B: the publishing seeded pass, dscanp_ov2gx on the scalar-form step; the producer
//     of tc13 / tc16 in place of dscanp_ov5dr)
// Not bitwise the full form (other roundings, as dscan_ov2gxsc): the fp64 reference is the bar.
#define GDN_BWD_PIECE_SCALAR_ENTRIES(TAG, T)                                                        \
  extern "C" __global__ void __launch_bounds__(128 / 16 * 32, 1)                                   \
      gdn_bwd_dsum_sc_##TAG##_k128(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscanp_gx_body<T, 128, 128, 128 / 16, gdn::DSCAN_MMA_STAGES, true, true>(p);          \
  }                                                                                                \
  extern "C" __global__ void __launch_bounds__(128 / 16 * 32, 1)                                   \
      gdn_bwd_dscanp_ov2gxsc_##TAG##_k128(gdn::BwdChainParams p) { dnnp_pdl_enter(p.b.f.flags & gdn::FLAG_PDL_TRIGGER); \
    gdn::bwd_dscanp_gx_body<T, 128, 128, 128 / 16, gdn::DSCAN_MMA_STAGES, true>(p);                \
  }
GDN_BWD_PIECE_SCALAR_ENTRIES(bf16, gdn::gdn_bf16)
GDN_BWD_PIECE_SCALAR_ENTRIES(f16, gdn::gdn_f16)
