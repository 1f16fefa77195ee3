//! Unit tests of the kernels' parameter blocks and workspace layouts (`super`): sizes, offsets and alignment the CUDA headers state.

use super::*;
use crate::engines::gdn::occupancy::SM90_BUDGET as SM;

#[test]
fn params_layout_matches_the_cuda_struct() {
    // 12 pointers, 14 four-byte fields, 7 pointers: 96 + 56 + 56 bytes, no padding.
    assert_eq!(std::mem::size_of::<FwdParams>(), 208);
    assert_eq!(std::mem::offset_of!(FwdParams, cu_seqlens_i64), 96);
    assert_eq!(std::mem::offset_of!(FwdParams, scale), 96 + 11 * 4);
    assert_eq!(std::mem::offset_of!(FwdParams, chunk_offsets), 152);
    assert_eq!(std::mem::offset_of!(FwdParams, ws_gl), 200);
}

#[test]
fn the_sanitized_cu_seqlens_end_the_chunk_table_and_bind_replaces_the_callers() {
    for n in [1u64, 2, 3, 7, 1000, 1001] {
        for l in [
            WorkspaceLayout::new(n, 300, 2, 128, 128),
            WorkspaceLayout::slim(n, 300, 2),
            WorkspaceLayout::bwd_slim(n, 300, 2, false),
        ] {
            assert_eq!(l.cu_sane % 8, 0, "n = {n}");
            assert!(
                l.cu_sane >= l.seq_order + 4 * n,
                "n = {n}: overlaps the order"
            );
            assert_eq!(l.cu_sane + 8 * (n + 1), l.state_rows);
            assert_eq!(l.state_rows + 4 * n, l.chunk_offsets + chunk_table_bytes(n));
            assert!(l.chunk_offsets + chunk_table_bytes(n) <= l.w, "n = {n}");
            assert_eq!(l.total_tokens, 300);
            let mut p = FwdParams {
                cu_seqlens: 0xdead_0000,
                cu_seqlens_i64: 0,
                ..FwdParams::default()
            };
            let src = l.bind(0x1_0000_0000, &mut p);
            assert_eq!(
                src,
                CuSource {
                    cu_seqlens: 0xdead_0000,
                    total_t: 300,
                    cu_seqlens_i64: 0,
                    reserved: 0,
                }
            );
            assert_eq!(
                (p.cu_seqlens, p.cu_seqlens_i64),
                (0x1_0000_0000 + l.cu_sane, 1)
            );
        }
    }
    let b = BwdWorkspaceLayout::new(3, 500, 2, 64, 64);
    let mut p = BwdParams::default();
    p.f.cu_seqlens = 0xbeef_0000;
    p.f.cu_seqlens_i64 = 1;
    let src = b.bind(0x2_0000_0000, &mut p);
    assert_eq!(
        (src.cu_seqlens, src.cu_seqlens_i64, src.total_t),
        (0xbeef_0000, 1, 500)
    );
    assert_eq!(p.f.cu_seqlens, 0x2_0000_0000 + b.fwd.cu_sane);
}

#[test]
fn a_pool_binds_its_sanitized_rows_and_no_pool_binds_nothing() {
    let l = WorkspaceLayout::slim(3, 300, 2);
    let mut p = FwdParams::default();
    assert_eq!(
        l.bind_pool(0x1_0000_0000, 7, &mut p),
        StateSource::default()
    );
    assert_eq!(p.state_indices, 0);
    p.state_indices = 0xcafe_0000;
    let src = l.bind_pool(0x1_0000_0000, 7, &mut p);
    assert_eq!(
        src,
        StateSource {
            state_indices: 0xcafe_0000,
            pool_rows: 7,
            reserved: 0
        }
    );
    assert_eq!(p.state_indices, 0x1_0000_0000 + l.state_rows);
    // A pool past the int32 indices' range: every index names one of its rows.
    let mut p = FwdParams {
        state_indices: 0xcafe_0000,
        ..FwdParams::default()
    };
    assert_eq!(
        l.bind_pool(0, 1 << 40, &mut p).pool_rows,
        i32::MAX,
        "pool rows saturate"
    );
}

#[test]
fn bwd_params_layout_matches_the_cuda_struct() {
    // FwdParams, 10 pointers, one i64, 13 pointers (static_assert in gdn_bwd.cuh: 400).
    assert_eq!(std::mem::size_of::<BwdParams>(), 400);
    assert_eq!(std::mem::offset_of!(BwdParams, ws_u), 392);
    assert_eq!(std::mem::offset_of!(BwdParams, d_o), 208);
    assert_eq!(std::mem::offset_of!(BwdParams, total_t), 288);
    assert_eq!(std::mem::offset_of!(BwdParams, ws_pb), 384);
}

#[test]
fn bwd_workspace_follows_the_forward_and_fits_hopper_smem() {
    let l = BwdWorkspaceLayout::new(3, 130, 2, 64, 64);
    assert_eq!(l.regions[0], l.fwd.total);
    for w in l.regions.windows(2) {
        assert!(w[1] > w[0] && w[1] % 256 == 0);
    }
    // dS (slots · V · K fp32) and the token-level fp32 regions.
    assert_eq!(l.regions[6] - l.regions[5], 10 * 64 * 64 * 4);
    // S_c: 2 bytes per element (BWD_S_IO).
    assert_eq!(l.regions[5] - l.regions[4], 10 * 64 * 64 * 2);
    assert_eq!(
        l.total - l.regions[11],
        (130 * 2 * 4u64).div_ceil(256) * 256
    );
    assert!(SM.allows(dscan_mma_smem_bytes(128)));
    assert!(SM.allows(dscan_w8_smem_bytes(128)));
    assert_eq!(dscan_w8_smem_bytes(128), 159_744 + 4 * 7168);
    // gdn::TokSmem9<K, K>::bytes (printed by the CPU emulation's build of the header).
    assert_eq!(tokens_tc11_smem_bytes(128), 213_760);
    assert_eq!(tokens_tc11_smem_bytes(64), 96_000);
    // gdn::TokSmem12<K, K>::bytes, within the 227 KB a block may ask for.
    assert_eq!(tokens_tc12_smem_bytes(128), 215_808);
    assert_eq!(tokens_tc12_smem_bytes(64), 98_048);
    assert!(SM.allows(tokens_tc12_smem_bytes(128)));
}

#[test]
fn tw1_tile_smem_matches_the_cuda_struct() {
    // gdn::Tw1Smem<128, 128>::bytes (its static_assert in gdn_bwd.cuh), under tc12's.
    assert_eq!(tokens_tw1_tile_smem_bytes(128), 188_224);
    assert!(tokens_tw1_tile_smem_bytes(128) < tokens_tc12_smem_bytes(128));
    assert!(SM.allows(tokens_tw1_tile_smem_bytes(128)));
}

#[test]
fn tw_tile_layout_matches_the_cuda_struct_and_fits_hopper_smem() {
    // gdn::TwSmem<128, 128>: the numbers its static_asserts state (gdn_bwd_tw.cuh).
    let l = tokens_tw_smem(128, 128, TW_RING);
    assert_eq!((l.quarter, l.ring, l.q_raw), (28_672, 0, 143_360));
    assert_eq!((l.q_hat, l.x_da, l.vec), (176_128, 208_896, 225_280));
    assert_eq!(
        (l.v_rowp, l.v_dbv, l.bar, l.bytes),
        (226_816, 229_376, 230_464, 230_576)
    );
    assert_eq!(tokens_tw_smem_bytes(128), 230_576);
    // td29's plan, option A: within the 227 KB a block may ask for, 1,872 B spare.
    assert!(SM.allows(tokens_tw_smem_bytes(128)));
    assert_eq!(
        SM.block_smem_max - u64::from(tokens_tw_smem_bytes(128)),
        1_872
    );
    // A sixth quarter slot does not fit (the design's option B would be needed).
    assert!(!SM.allows(tokens_tw_smem(128, 128, TW_RING + 1).bytes));
    // gdn::TwSmem<64, 64>.
    let l = tokens_tw_smem(64, 64, TW_RING);
    assert_eq!((l.quarter, l.q_raw, l.x_da), (20_480, 102_400, 135_168));
    assert_eq!((l.vec, l.bar, l.bytes), (151_552, 156_224, 156_336));
    // Every swizzled tile on a 1 KB boundary.
    for k in [64, 128] {
        let l = tokens_tw_smem(k, k, TW_RING);
        for off in [l.quarter, l.q_raw, l.q_hat, l.x_da, l.vec] {
            assert_eq!(off % 1024, 0, "k = {k}: {off}");
        }
        assert_eq!(l.bar % 16, 0);
    }
}

#[test]
fn workspace_regions_are_aligned_and_sized() {
    // N = 3, T = 130 -> 5 chunk slots per head, HO = 2, K = V = 64.
    let l = WorkspaceLayout::new(3, 130, 2, 64, 64);
    assert_eq!(max_chunks(3, 130), 5);
    let slots = 10u64;
    assert_eq!(l.chunk_offsets, 0);
    assert_eq!(l.seq_order, 16);
    assert_eq!(l.w, 256);
    assert_eq!(l.q, l.w + slots * 64 * 64 * 2);
    assert_eq!(l.kr, l.q + slots * 64 * 64 * 2);
    assert_eq!(l.ut, l.kr + slots * 64 * 64 * 2);
    assert_eq!(l.a, l.ut + slots * 64 * 64 * 2);
    assert_eq!(l.gl, l.a + slots * 64 * 64 * 2);
    assert_eq!(l.total, (l.gl + slots * 4).div_ceil(256) * 256);
    for r in [l.w, l.q, l.kr, l.ut, l.a, l.gl, l.total] {
        assert_eq!(r % 256, 0);
    }
}

#[test]
fn seq_order_follows_the_chunk_table_in_its_region() {
    // [N + 1] chunk offsets, then [N] seq_order (gdn::seq_order_table: chunk_offsets + N + 1),
    // both inside the table's region, before the first factor region; full and slim layouts,
    // and the backward's (the forward's first).
    for n in [1u64, 10, 31, 32, 63, 64, 1024, 1500] {
        for l in [
            WorkspaceLayout::new(n, 64 * n, 2, 128, 128),
            WorkspaceLayout::slim(n, 64 * n, 2),
            BwdWorkspaceLayout::new(n, 64 * n, 2, 128, 128).fwd,
        ] {
            assert_eq!(l.seq_order, l.chunk_offsets + 4 * (n + 1));
            assert!(l.seq_order + 4 * n <= l.w, "n = {n}");
            assert_eq!(l.w, chunk_table_bytes(n).div_ceil(256) * 256);
        }
    }
}

#[test]
fn slim_workspace_is_smaller_and_aligned() {
    // N = 3, T = 130 -> 5 chunk slots per head, HO = 2: T (the 10 lower 16x16 blocks of
    // 64x64, io), the scalars (4x64 fp32), A (as T), Γ_last; Q⁺ and Ũᵀ empty.
    let l = WorkspaceLayout::slim(3, 130, 2);
    let slots = 10u64;
    assert_eq!(SLIM_TRI_ELEMS, 2560);
    assert_eq!(l.w, 256);
    assert_eq!(l.kr, l.w + slots * 2560 * 2);
    assert_eq!(l.a, l.kr + slots * 4 * 64 * 4);
    assert_eq!(l.gl, l.a + slots * 2560 * 2);
    assert_eq!((l.q, l.ut), (l.a, l.a));
    assert_eq!(l.total, (l.gl + slots * 4).div_ceil(256) * 256);
    for r in [l.w, l.kr, l.a, l.gl, l.total] {
        assert_eq!(r % 256, 0);
    }
    assert!(l.total < WorkspaceLayout::new(3, 130, 2, 128, 128).total / 3);
}

#[test]
fn shared_memory_fits_hopper() {
    // The slim prep (gdn::SlimPrepSmem<128>): 6 blocks per SM; the slim scans one block.
    assert_eq!(slim_prep_smem_bytes(128), 36352);
    assert_eq!(slim_prep_l_smem_bytes(128), 54784);
    assert!(SM.holds(SLIM_PREP_WG_MIN_BLOCKS, slim_prep_l_smem_bytes(128)));
    assert!(SM.holds(6, slim_prep_smem_bytes(128)));
    // The backward's slim prep (gdn::Prep10Smem<128, 128, true>: the slim prep's bytes).
    assert!(SM.holds(BWD_PREP_SLIM_MIN_BLOCKS, slim_prep_smem_bytes(128)));
    assert_eq!(slim_scan_smem_bytes(128, 4, SLIM_W4_STAGES), 202_752);
    assert_eq!(slim_scan_smem_bytes(128, 8, SLIM_W8_STAGES), 167_936);
    assert_eq!(slim_scan_tma_smem_bytes(128, 4, SLIM_W4_STAGES), 206_848);
    assert!(SM.allows(slim_scan_tma_smem_bytes(128, 4, SLIM_W4_STAGES)));
    assert!(SM.allows(slim_scan_smem_bytes(128, 4, SLIM_W4_STAGES)));
    // The slim piece passes (gdn::SlimSumSmem<128>, gdn::SlimPieceSmem<128>): three and two
    // blocks per SM, as the full piece path's sum1 / w4p.
    assert_eq!(slim_sum_smem_bytes(128), 73_728);
    assert_eq!(slim_piece_smem_bytes(128), 111_616);
    assert!(SM.holds(SLIM_SUM_MIN_BLOCKS, slim_sum_smem_bytes(128)));
    assert_eq!(slim_sum_stages_smem_bytes(128, SLIM_SUM3_STAGES), 110_592);
    assert!(SM.holds(
        SLIM_SUM3_MIN_BLOCKS,
        slim_sum_stages_smem_bytes(128, SLIM_SUM3_STAGES)
    ));
    assert!(SM.holds(SLIM_W4D_MIN_BLOCKS, slim_piece_smem_bytes(128)));
    // Prep7Smem (the bundled preps): 4 blocks per SM fit (1 KB reserved per block); the
    // scan's 219 KB one block.
    assert_eq!(prep7_smem_bytes(128, 128), 54784);
    assert_eq!(prep7_smem_bytes(64, 64), 37376);
    assert!(SM.holds(4, prep7_smem_bytes(128, 128)));
    assert_eq!(
        scan_smem_bytes(128),
        3 * (3 * 17408 + 9216 + 9216) + 4 * 64 * 48
    );
    assert!(SM.allows(scan_smem_bytes(128)));
}

#[test]
fn bwd_ckpt_params_layout_and_the_reverse_only_pieces() {
    // BwdChainParams (456), two pointers, two i32 (static_assert in gdn_bwd_chain.cuh: 480).
    assert_eq!(std::mem::size_of::<BwdCkptParams>(), 480);
    assert_eq!(std::mem::offset_of!(BwdCkptParams, ckpt), 456);
    assert_eq!(std::mem::offset_of!(BwdCkptParams, ckpt_every), 472);
    // The rows' table: the chunk table at one chunk per row, a region of its own beyond.
    let mut p = BwdCkptParams::default();
    p.cp.b.f.chunk_offsets = 4096;
    CkptLayout::new(1000, 3, 1000, 64, true).bind_bwd(1 << 20, 77, &mut p);
    assert_eq!(
        (p.ckpt, p.ckpt_rows, p.ckpt_every, p.ckpt_f32),
        (77, 4096, 1, 1)
    );
    let l = CkptLayout::new(1000, 3, 1000, 192, false);
    l.bind_bwd(1 << 20, 77, &mut p);
    assert_eq!(
        (p.ckpt_rows, p.ckpt_every, p.ckpt_f32),
        ((1 << 20) + l.rows, 3, 0)
    );
    assert!(l.rows >= 1000 && l.total >= l.rows + 4 * 4);
    // Without M_j: the same H / seeds / Mᵀ sizes, less the transitions.
    let (n, ho, k, p8) = (2, 4, 128, 8);
    let full = BwdPieceLayout::new(512, n, ho, k, k, p8);
    let rev = BwdPieceLayout::reverse_only(512, n, ho, k, k, p8);
    assert_eq!(full.total - rev.total, n * (p8 - 1) * ho * k * k * 4);
    assert!(rev.fwd.seed >= rev.fwd.h + n * (p8 - 1) * ho * k * k * 4);
    assert!(rev.mt >= rev.fwd.seed + n * p8 * ho * k * k * 4);
    assert_eq!(rev.total, rev.mt + n * (p8 - 1) * ho * k * k * 4);
    assert_eq!(
        BwdPieceLayout::reverse_only(512, n, ho, k, k, 1),
        BwdPieceLayout::new(512, n, ho, k, k, 1)
    );
}

#[test]
fn bwd_chain_params_layout_matches_the_cuda_struct() {
    // BwdParams (400), two i32, six pointers (static_assert in gdn_bwd_chain.cuh: 456).
    assert_eq!(std::mem::size_of::<BwdChainParams>(), 456);
    assert_eq!(std::mem::offset_of!(BwdChainParams, ov_flags), 440);
    assert_eq!(std::mem::offset_of!(BwdChainParams, ov_order), 448);
    // The overlap regions: flags per (slot, head), the order per slot; none when off.
    let off = OverlapLayout::new(1000, 7, 3, false);
    assert_eq!(off.total, 1000);
    let on = OverlapLayout::new(1000, 7, 3, true);
    assert!(on.flags >= 1000 && on.order >= on.flags + 7 * 3 * 4 && on.total >= on.order + 7 * 4);
    assert_eq!(on.flags % 256, 0);
    // The overlapped reverse scan at K = V = 128: 2 stages of A, T, Kᴿ, Q⁺, E and dO (128 rows).
    assert_eq!(
        dscan_ov_smem_bytes(128, 128),
        2 * 2 * (2 * 64 * 72 + 3 * 64 * 136 + 64 * 136)
    );
    assert!(SM.allows(dscan_ov_smem_bytes(128, 128)));
    assert_eq!(
        dscan_ov2_smem_bytes(128, 128),
        dscan_ov_smem_bytes(128, 128) + 8 * 16 * 136 * 2
    );
    assert!(SM.allows(dscan_ov2_smem_bytes(128, 128)));
    assert_eq!(dscan_ov2_smem_bytes(64, 64), 110_592 + 4 * 16 * 72 * 2);
    assert_eq!(std::mem::offset_of!(BwdChainParams, pieces), 400);
    assert_eq!(std::mem::offset_of!(BwdChainParams, ws_seed), 424);
    assert_eq!(std::mem::offset_of!(BwdChainParams, ws_mt), 432);
    let none = BwdPieceLayout::new(1000, 2, 3, 64, 64, 1);
    assert_eq!(none.total, 1000);
    let l = BwdPieceLayout::new(1000, 2, 3, 64, 64, 4);
    assert_eq!(l.fwd, PieceLayout::new(1000, 2, 3, 64, 64, 4));
    assert_eq!(l.mt, l.fwd.total);
    assert_eq!(l.total, l.mt + 2 * 3 * 3 * 64 * 64 * 4);
}

#[test]
fn fast_params_and_piece_layout() {
    // FwdParams (208), two i32, seven pointers, two i32, PrepKeep (five pointers), save_u (static_asserts
    // in gdn_fwd_fast.cuh: 328, ckpt at 256, ckpt_every at 272).
    assert_eq!(std::mem::size_of::<FwdFastParams>(), 328);
    assert_eq!(std::mem::offset_of!(FwdFastParams, save_u), 320);
    assert_eq!(std::mem::offset_of!(FwdFastParams, save), 280);
    assert_eq!(std::mem::offset_of!(FwdFastParams, pieces), 208);
    assert_eq!(std::mem::offset_of!(FwdFastParams, ws_seed), 232);
    assert_eq!(std::mem::offset_of!(FwdFastParams, ov_flags), 240);
    assert_eq!(std::mem::offset_of!(FwdFastParams, ov_order), 248);
    assert_eq!(std::mem::offset_of!(FwdFastParams, ckpt), 256);
    assert_eq!(std::mem::offset_of!(FwdFastParams, ckpt_rows), 264);
    assert_eq!(std::mem::offset_of!(FwdFastParams, ckpt_every), 272);
    assert_eq!(std::mem::offset_of!(FwdFastParams, ckpt_f32), 276);
    // The maps after it, 128-byte aligned (gdn_fwd_fast.cuh: 896, maps at 384).
    assert_eq!(std::mem::size_of::<FwdTmaParams>(), 896);
    assert_eq!(std::mem::offset_of!(FwdTmaParams, maps), 384);
    assert_eq!(std::mem::offset_of!(FwdTmaParams, fp), 0);
    assert_eq!(std::mem::offset_of!(FwdTmaParams, cu_src), 328);
    assert_eq!(std::mem::size_of::<CuSource>(), 24);
    assert_eq!(std::mem::offset_of!(FwdTmaParams, st_src), 352);
    assert_eq!(std::mem::size_of::<StateSource>(), 16);
    // The backward's block: BwdCkptParams, then the ring maps 128-byte aligned
    // (gdn_bwd_chain.cuh: 1024, maps at 512).
    assert_eq!(std::mem::size_of::<BwdTmaParams>(), 1024);
    assert_eq!(std::mem::offset_of!(BwdTmaParams, maps), 512);
    assert_eq!(std::mem::offset_of!(BwdTmaParams, c), 0);
    assert_eq!(std::mem::offset_of!(BwdTmaParams, cu_src), 480);
    let none = PieceLayout::new(1000, 2, 3, 64, 64, 1);
    assert_eq!(none.total, 1000);
    let l = PieceLayout::new(1000, 2, 3, 64, 64, 4);
    assert_eq!(l.h, 1024);
    assert_eq!(l.m, l.h + 2 * 3 * 3 * 64 * 64 * 4);
    assert_eq!(l.seed, l.m + 2 * 3 * 3 * 64 * 64 * 4);
    assert_eq!(l.total, l.seed + 2 * 4 * 3 * 64 * 64 * 4);
    // The values ptxas / the launch use for K = V = 128.
    assert_eq!(fast_smem_bytes(128, 4, 3, true), scan_smem_bytes(128));
    assert_eq!(
        fast_smem_bytes(128, 8, 2, true),
        2 * (3 * 17408 + 9216 + 18432) + 8 * 64 * 48
    );
    assert_eq!(fast_smem_bytes(128, 4, 2, false), 2 * (2 * 17408 + 9216));
    assert!(SM.allows(fast_smem_bytes(128, 8, 2, true)));
    // Session 13's one-stage kernels: w4p 82,944 B (two per SM), sum1 44,032 B (four fit).
    assert_eq!(fast_smem_bytes(128, 4, SCANX_S1_STAGES, true), 82_944);
    assert_eq!(fast_smem_bytes(128, 4, SCANX_S1_STAGES, false), 44_032);
    // Session 25's warpgroup replay (gx): W, Kᴿ swizzled (no row padding) + Ũᵀ rows.
    assert_eq!(
        FSCAN_GX_STAGE_BYTES,
        2 * CHUNK * 128 * 2 + 64 * (CHUNK + 8) * 2
    );
    assert_eq!(fscan_gx_smem_bytes(FSCAN_GX_STAGES), 83_968);
    assert!(SM.holds(2, fscan_gx_smem_bytes(FSCAN_GX_STAGES)));
    assert!(SM.allows(fscan_gx_smem_bytes(3)) && SM.allows(fscan_gx_smem_bytes(4)));
    // Session 27's scalar form: the replay's stage + the cr row, the scan's without E.
    assert_eq!(
        FSCAN_GXSC_STAGE_BYTES,
        (FSCAN_GX_STAGE_BYTES + CHUNK * 4).div_ceil(1024) * 1024
    );
    assert!(SM.holds(2, fscan_gxsc_smem_bytes(FSCAN_GX_STAGES)));
    assert!(SM.allows(fscan_gxsc_smem_bytes(4)));
    // Session 28's slim replay: k swizzled, v rows of 72, T swizzled, the scalars.
    assert_eq!(
        FSCAN_GXSL_STAGE_BYTES,
        (CHUNK * 128 * 2
            + (CHUNK * 72 * 2).div_ceil(1024) * 1024
            + CHUNK * CHUNK * 2
            + 4 * CHUNK * 4)
            .div_ceil(1024)
            * 1024
    );
    assert!(SM.holds(2, fscan_gxsl_smem_bytes(FSCAN_GX_STAGES)));
    assert!(SM.allows(fscan_gxsl_smem_bytes(4)));
    // Session 29's slim piece summary: the slim replay's stages, three blocks per SM.
    assert_eq!(psum_sl_smem_bytes(), 69_632);
    assert!(SM.holds(PSUM_SL_MIN_BLOCKS, psum_sl_smem_bytes()));
    assert_eq!(dscan_ov2gxsc_smem_bytes(128, 128), 169_984);
    assert_eq!(dsum_sc_smem_bytes(128, 128), 135_168);
    assert!(SM.allows(dsum_sc_smem_bytes(128, 128)));
    assert!(SM.allows(dscan_ov2gxsc_smem_bytes(128, 128)));
    // Session 29: the split scan, two blocks per SM (the 8-warp one holds an SM alone).
    assert_eq!(dscan_ov2gxsh_smem_bytes(128, 128), 110_592);
    assert!(SM.holds(2, dscan_ov2gxsh_smem_bytes(128, 128)));
    assert!(!SM.holds(2, dscan_ov2gxsc_smem_bytes(128, 128)));
    // The session-6 chunk loop: split = 1 is FastSmem; the pairs' kernels (t8 forward, r8
    // replay) add 4 groups' exchange areas (X: 16 KB at K = 128, Uᵀ: 8 KB).
    assert_eq!(
        scanx_smem_bytes(128, 4, 2, false, 1),
        fast_smem_bytes(128, 4, 2, false)
    );
    assert_eq!(
        scanx_smem_bytes(128, 4, 3, true, 1),
        fast_smem_bytes(128, 4, 3, true)
    );
    assert_eq!(
        scanx_smem_bytes(128, 8, 2, true, 2),
        fast_smem_bytes(128, 4, 2, true) + 16384 + 8192
    );
    assert_eq!(
        scanx_smem_bytes(128, 8, 2, false, 2),
        fast_smem_bytes(128, 4, 2, false) + 16384 + 8192
    );
    // Two replay blocks per SM (228 KB, 1 KB reserved per block).
    assert!(SM.holds(2, scanx_smem_bytes(128, 8, 2, false, 2)));
    assert!(SM.allows(scanx_smem_bytes(128, 8, 2, true, 2)));
}

#[test]
fn checkpoint_layout_and_binding() {
    let mut p = FwdFastParams::default();
    p.f.chunk_offsets = 0x1000;
    // None: no region, nothing bound.
    let none = CkptLayout::new(1000, 3, 1000, 0, false);
    assert_eq!((none.every, none.total), (0, 1000));
    none.bind(0x10_0000, 0xdead_0000, &mut p);
    assert_eq!((p.ckpt, p.ckpt_rows, p.ckpt_every), (0, 0, 0));
    // One chunk: the chunk table is the row table, no region.
    let one = CkptLayout::new(1000, 3, 1000, 64, false);
    assert_eq!((one.every, one.total), (1, 1000));
    one.bind(0x10_0000, 0xdead_0000, &mut p);
    assert_eq!(
        (p.ckpt, p.ckpt_rows, p.ckpt_every, p.ckpt_f32),
        (0xdead_0000, 0x1000, 1, 0)
    );
    // Three chunks, fp32 rows: an aligned [N + 1] i32 row table after `after`.
    let three = CkptLayout::new(1000, 3, 1000, 192, true);
    assert_eq!((three.every, three.rows, three.total), (3, 1024, 1280));
    three.bind(0x10_0000, 0xbeef_0000, &mut p);
    assert_eq!(
        (p.ckpt, p.ckpt_rows, p.ckpt_every, p.ckpt_f32),
        (0xbeef_0000, 0x10_0000 + 1024, 3, 1)
    );
    // A bound layout without a buffer binds nothing.
    let mut q = FwdFastParams::default();
    three.bind(0x10_0000, 0, &mut q);
    assert_eq!(q.ckpt, 0);
    // A cadence past every sequence's chunks (1000 / 64 + 3 = 18 slots) writes one row per
    // sequence, as 18 chunks per row do: capped there, the kernels' int stays exact.
    for every_tokens in [64 * 18, 64 * 19, 64 << 31, 64 << 32, u64::MAX] {
        let l = CkptLayout::new(1000, 3, 1000, every_tokens, false);
        assert_eq!((l.every, l.total), (18, 1280), "{every_tokens}");
        l.bind(0x10_0000, 0xbeef_0000, &mut p);
        assert_eq!(p.ckpt_every, 18);
    }
    // The cap keeps a cadence above one chunk on its row table.
    let tiny = CkptLayout::new(1000, 1, 10, 64 << 32, false);
    assert_eq!((tiny.every, tiny.total), (2, 1280));
}
