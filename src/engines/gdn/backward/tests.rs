//! Unit tests of the `gdn_bwd` plan (`super`): kernel names against the bundled cubin, the rules tables, the schedules and workspace layouts the plan builds per shape.

use super::*;
use crate::engines::gdn::analyzer::GdnOp;
use crate::engines::gdn::bwd_select::{PREP16, PREP16C, PREP16L, SPLIT};
use crate::engines::gdn::params::{
    dscan_mma_stages_smem_bytes, dsum_sc_smem_bytes, fast_smem_bytes,
};

fn facts(n: i64, t: i64, ho: i64, d: i64, batch_invariant: bool) -> GdnFacts {
    crate::engines::gdn::analyzer::test_facts(GdnOp::Backward, n, t, ho, d, batch_invariant)
}

#[test]
fn every_kernel_name_is_a_symbol_of_the_bundled_cubin() {
    let bundled = crate::cuda::kernels::find("gdn_bwd").expect("bundled gdn_bwd module");
    let preps = super::super::engine::PREP_VARIANTS
        .iter()
        .map(|r| r.variant);
    for (tag, k, prep) in preps.flat_map(|p| [("bf16", 128, p), ("f16", 64, p)]) {
        for name in kernel_names(tag, k, prep) {
            assert!(bundled.has_function(&name), "{name} is not bundled");
        }
    }
}

#[test]
fn replay_variants_name_their_kernels() {
    let names = kernel_names("bf16", 128, PrepVariant::DEFAULT);
    for (variant, uncut, piece) in [
        (
            ReplayVariant::V1,
            "gdn_bwd_fscan_bf16_k128",
            "gdn_bwd_fscanp_bf16_k128",
        ),
        (
            ReplayVariant::Rows4,
            "gdn_bwd_fscan_r4_bf16_k128",
            "gdn_bwd_fscan_r4_bf16_k128",
        ),
        (
            ReplayVariant::Warpgroup,
            "gdn_bwd_fscan_gx_bf16_k128",
            "gdn_bwd_fscan_gx_bf16_k128",
        ),
        (
            ReplayVariant::Warpgroup3,
            "gdn_bwd_fscan_gx3_bf16_k128",
            "gdn_bwd_fscan_gx3_bf16_k128",
        ),
        (
            ReplayVariant::Warpgroup4,
            "gdn_bwd_fscan_gx4_bf16_k128",
            "gdn_bwd_fscan_gx4_bf16_k128",
        ),
    ] {
        let (i, j, threads, smem) = variant.launch(128);
        assert_eq!(
            (names[i as usize].as_str(), names[j as usize].as_str()),
            (uncut, piece)
        );
        assert!(SM90_BUDGET.allows(smem) && (threads == 128 || threads == 256));
    }
    // One replay block per SM below four waves: (4, 8192, 16) 128 blocks, the ragged mix 320,
    // (1, 32768, 16) in 4 pieces 128; two at (16, 2048, 32), 1024 blocks (132 SMs).
    for (blocks, one) in [
        (128, true),
        (320, true),
        (1024, false),
        (527, true),
        (528, false),
    ] {
        assert_eq!(replay_one_per_sm(blocks, 132), one, "{blocks} blocks");
    }
    // The new replays stage W, Kᴿ, Ũᵀ only: two blocks fit an SM.
    assert!(ReplayVariant::Rows4.launch(128).3 < 113 * 1024);
    // gx: two blocks per SM at K = 128; K = 64 runs r4's kernel at r4's launch.
    assert!(SM90_BUDGET.holds(2, ReplayVariant::Warpgroup.launch(128).3));
    let names64 = kernel_names("f16", 64, PrepVariant::DEFAULT);
    for variant in [
        ReplayVariant::Warpgroup,
        ReplayVariant::Warpgroup3,
        ReplayVariant::Warpgroup4,
        ReplayVariant::WarpgroupRule,
    ] {
        let (i, j, threads, smem) = variant.launch(64);
        assert_eq!(names64[i as usize], "gdn_bwd_fscan_r4_f16_k64");
        assert_eq!(names64[j as usize], "gdn_bwd_fscan_r4_f16_k64");
        assert_eq!((threads, smem), (128, scanx_smem_bytes(64, 4, 2, false, 1)));
        assert_eq!(variant.own_piece_replay(64), None);
    }
    // gxr: gx4 where the replay holds its SM alone, gx (two per SM) elsewhere and per piece.
    let rule = ReplayVariant::WarpgroupRule;
    assert_eq!(rule.uncut_at(true), ReplayVariant::Warpgroup4);
    assert_eq!(rule.uncut_at(false), ReplayVariant::Warpgroup);
    // At the benchmark shapes (132 SMs): gx4 at (4, 8192, 16) (128 blocks) and the ragged
    // mix (320), gx at (16, 2048, 32) (1024).
    for (blocks, want) in [
        (128, ReplayVariant::Warpgroup4),
        (320, ReplayVariant::Warpgroup4),
        (1024, ReplayVariant::Warpgroup),
    ] {
        assert_eq!(
            rule.uncut_at(replay_one_per_sm(blocks, 132)),
            want,
            "{blocks}"
        );
    }
    assert_eq!(
        rule.own_piece_replay(128),
        Some((BwdKernel::FscanGx, fscan_gx_smem_bytes(FSCAN_GX_STAGES)))
    );
    assert!(SM90_BUDGET.allows(ReplayVariant::Warpgroup4.launch(128).3));
}

#[test]
fn backward_schedule_rule_at_the_benchmark_shapes() {
    let pieces = |n, t, ho, d, bi| BwdSchedule::default_for(&facts(n, t, ho, d, bi), 132).pieces;
    // (4, 8192, 16): 64 pairs x 2 value slices = 128 blocks fill the GPU: no cut.
    assert_eq!(pieces(4, 32768, 16, 128, false), 1);
    // (1, 32768, 16): 32 blocks (slices); with the one-stage passes (p1) the overlapped
    // reverse scan's 16 · P blocks bind: 128 ≤ 132 at P = 8 (dsum1 224 ≤ 264, the replay
    // 256 ≤ 396).
    assert_eq!(pieces(1, 32768, 16, 128, false), 8);
    // ... never under batch_invariant (the cut would depend on the batch).
    assert_eq!(pieces(1, 32768, 16, 128, true), 1);
    // (16, 2048, 32) and the ragged mix (10 sequences, H = 16): enough blocks already.
    assert_eq!(pieces(16, 32768, 32, 128, false), 1);
    assert_eq!(pieces(10, 29949, 16, 128, false), 1);
    // Short sequences are never cut; few pairs of long ones get at most 16 pieces.
    assert_eq!(pieces(1, 300, 2, 128, false), 1);
    assert_eq!(pieces(1, 1 << 20, 1, 128, false), 16);
    // The GPU test's long cases: 2048 + 1000 tokens on 2 heads (8 blocks) -> 16 pieces;
    // K = V = 64 has one value slice per pair: 1 x 4096 on 4 heads -> 33 -> 16 pieces.
    assert_eq!(pieces(2, 3048, 2, 128, false), 16);
    assert_eq!(pieces(1, 4096, 4, 64, false), 16);
    // At the edge: 66 blocks fill half of 132 SMs -> cut (4 pieces on p1: the overlapped
    // reverse scan 33 · 4 = 132; 2 on s2); 67 do not.
    // (The reverse-scan kernel at these shapes: reverse_scan_rule_at_the_benchmark_shapes.)
    assert_eq!(pieces(33, 33 * 4096, 1, 128, false), 4);
    assert_eq!(pieces(67, 67 * 4096, 1, 64, false), 1);
    // The two-stage passes (s2) keep the session-13 rule P = ⌊SMs / blocks⌋ at every shape.
    let s2 = &BWD_PIECE_PASSES[1];
    assert_eq!(s2.name, "s2");
    for blocks in 1..=66u64 {
        // K = V = 128 (two value slices per pair) and K = V = 64 (one).
        for pairs in [blocks.div_ceil(2), blocks] {
            let p = s2.max_pieces(blocks, pairs, 132);
            assert_eq!(p, 132 / blocks, "{blocks} blocks");
        }
    }
    // The default passes by K: p1 at K = 128, s2 elsewhere (K = 64).
    let passes = |n, t, ho, d| BwdSchedule::default_for(&facts(n, t, ho, d, false), 132);
    assert_eq!(passes(1, 32768, 16, 128).passes.name, "p1");
    assert_eq!(passes(1, 4096, 4, 64).passes.name, "s2");
}

/// The switches' picks as data: (the switch, its value, K, the row picked): the row the value
/// names where it serves K, else the first that does.
const PICKS: [(&str, &str, u64, &str); 10] = [
    ("DNNPLAN_GDN_BWD_PIECE_PASSES", "", 128, "p1"),
    ("DNNPLAN_GDN_BWD_PIECE_PASSES", "p1", 128, "p1"),
    ("DNNPLAN_GDN_BWD_PIECE_PASSES", "s2", 128, "s2"),
    ("DNNPLAN_GDN_BWD_PIECE_PASSES", "", 64, "s2"),
    ("DNNPLAN_GDN_BWD_PIECE_PASSES", "p1", 64, "s2"),
    ("DNNPLAN_GDN_BWD_PIECE_PASSES", "bogus", 128, "p1"),
    ("DNNPLAN_GDN_BWD_CKPT_REPLAY", "", 128, "p1"),
    ("DNNPLAN_GDN_BWD_CKPT_REPLAY", "r4", 128, "r4"),
    ("DNNPLAN_GDN_BWD_CKPT_REPLAY", "p1", 64, "r4"),
    ("DNNPLAN_GDN_BWD_CKPT_REPLAY", "", 64, "r4"),
];

#[test]
fn switch_picks_by_value_and_k() {
    for (switch, value, k, name) in PICKS {
        let picked = if switch == "DNNPLAN_GDN_BWD_PIECE_PASSES" {
            PiecePasses::pick(value, k).name
        } else {
            CkptReplay::pick(value, k).name
        };
        assert_eq!(picked, name, "{switch}={value:?} at K = {k}");
    }
}

#[test]
fn piece_passes_fit_and_name_their_kernels() {
    // Every row's passes' shared memory fits the blocks per SM the row counts on (228 KB
    // per SM, 1 KB reserved per block); the one-stage kernels' entries are bundled at K = 128.
    let fits = |smem, per_sm| SM90_BUDGET.holds(per_sm, smem);
    for row in &BWD_PIECE_PASSES {
        let k = row.k.unwrap_or(128);
        assert!(fits(row.psum_smem(k), row.psum.per_sm), "{}", row.name);
        if let (Some(pass), Some(smem)) = (row.replay, row.replay_smem(k)) {
            assert!(fits(smem, pass.per_sm), "{}", row.name);
        }
        if let (Some(pass), Some(smem)) = (row.dsum, row.dsum_smem(k)) {
            assert!(fits(smem, pass.per_sm), "{}", row.name);
        }
    }
    // p1: the one-stage layouts (44,032 B, 44,032 B, 79,872 B); the two-stage reverse
    // summaries would not fit two per SM.
    let p1 = &BWD_PIECE_PASSES[0];
    assert_eq!(
        (p1.psum_smem(128), p1.replay_smem(128), p1.dsum_smem(128)),
        (
            fast_smem_bytes(128, 4, 1, false),
            Some(scanx_smem_bytes(128, 4, 1, false, 1)),
            Some(dscan_mma_stages_smem_bytes(128, 1))
        )
    );
    assert!(!fits(dscan_mma_smem_bytes(128), 2));
    let names = kernel_names("bf16", 128, PrepVariant::DEFAULT);
    for (kernel, name) in [
        (BwdKernel::Psum1, "gdn_bwd_psum1_bf16_k128"),
        (BwdKernel::Fscanp1, "gdn_bwd_fscanp1_bf16_k128"),
        (BwdKernel::Dsum1, "gdn_bwd_dsum1_bf16_k128"),
    ] {
        assert_eq!(names[kernel as usize], name);
    }
    // At K = 64 they name the two-stage kernels (bundled; the s2 row runs there).
    let names = kernel_names("f16", 64, PrepVariant::DEFAULT);
    assert_eq!(names[BwdKernel::Psum1 as usize], "gdn_bwd_psum_f16_k64");
    assert_eq!(names[BwdKernel::Dsum1 as usize], "gdn_bwd_dsum_f16_k64");
    // The most pieces of p1 at (1, 32768, 16)'s 32 slices (16 pairs): the overlapped reverse
    // scan (132 / 16) binds, then dsum1 (1 + 8), the replay (12).
    assert_eq!(p1.max_pieces(32, 16, 132), 8);
    assert_eq!(p1.max_pieces(8, 4, 132), 33);
}

#[test]
fn overlap_rule_at_the_benchmark_shapes() {
    // blocks = N · P · HO (one overlapped reverse-scan block per unit row), segments = N · P.
    let ov = |blocks, segments| BWD_OVERLAP_RULE.overlap(blocks, segments, 132);
    // (4, 8192, 16): 64 blocks on 132 SMs leave 68 to the token stage -> overlap.
    assert!(ov(4 * 16, 4));
    // (1, 32768, 16) in 4 pieces: dscanp 64 blocks -> overlap.
    assert!(ov(4 * 16, 4));
    // (16, 2048, 32): 512 blocks (3.9 waves), the ragged mix (10 sequences, H = 16): 160.
    assert!(ov(16 * 32, 16) && ov(10 * 16, 10));
    // The edge: 4 waves of 132 SMs; and never beyond the order table's segments.
    assert!(ov(528, 1) && !ov(529, 1));
    assert!(ov(64, 64) && !ov(65, 65) && !ov(1, 65));
    // Only the token stage of the pair is launched programmatic.
    let programmatic: Vec<_> = BwdKernel::ALL.iter().filter(|k| k.programmatic()).collect();
    assert_eq!(
        programmatic,
        [
            &BwdKernel::TokensTc11Ov,
            &BwdKernel::TokensTc12Ov,
            &BwdKernel::TokensTc13Ov,
            &BwdKernel::TokensTc16Ov,
            &BwdKernel::TokensTw1Ov,
            &BwdKernel::TokensTw3Ov,
            &BwdKernel::TokensTw7Ov
        ]
    );
    assert!(!BwdKernel::TokensTc11.programmatic());
}

#[test]
fn token_stages_by_switch() {
    // (value, batch_invariant, kernel, overlapped consumer, overlap allowed): the named
    // stages with the overlap by rule whatever the graph says; no value the rule's stage
    // (tw1 since session 30, tw3 since session 32, unless batch_invariant); any other value (the retired stages' switches among
    // them) the rule's stage without the overlap, i.e. tc12's kernel.
    let cases = [
        (
            "tc11",
            false,
            BwdKernel::TokensTc11,
            BwdKernel::TokensTc11Ov,
            true,
        ),
        (
            "tc12",
            false,
            BwdKernel::TokensTc12,
            BwdKernel::TokensTc12Ov,
            true,
        ),
        (
            "tc13",
            false,
            BwdKernel::TokensTc12,
            BwdKernel::TokensTc13Ov,
            true,
        ),
        (
            "tc13",
            true,
            BwdKernel::TokensTc12,
            BwdKernel::TokensTc13Ov,
            true,
        ),
        (
            "tc16",
            false,
            BwdKernel::TokensTc12,
            BwdKernel::TokensTc16Ov,
            true,
        ),
        (
            "tw1",
            false,
            BwdKernel::TokensTc12,
            BwdKernel::TokensTw1Ov,
            true,
        ),
        (
            "tw3",
            false,
            BwdKernel::TokensTc12,
            BwdKernel::TokensTw3Ov,
            true,
        ),
        (
            "",
            false,
            BwdKernel::TokensTc12,
            BwdKernel::TokensTw7Ov,
            true,
        ),
        (
            "",
            true,
            BwdKernel::TokensTc12,
            BwdKernel::TokensTc12Ov,
            true,
        ),
        (
            "tc5",
            false,
            BwdKernel::TokensTc12,
            BwdKernel::TokensTw7Ov,
            false,
        ),
        (
            "fp32",
            true,
            BwdKernel::TokensTc12,
            BwdKernel::TokensTc12Ov,
            false,
        ),
        (
            "bogus",
            false,
            BwdKernel::TokensTc12,
            BwdKernel::TokensTw7Ov,
            false,
        ),
    ];
    for (env, invariant, kernel, consumer, allowed) in cases {
        let (stage, ok) = TokenStage::pick(env, invariant, false);
        assert_eq!(
            (stage.kernel, stage.overlapped, ok),
            (kernel, consumer, allowed),
            "DNNPLAN_GDN_BWD_TOKENS={env:?} batch_invariant={invariant}"
        );
    }
    assert_eq!(
        (TokenStage::pick("tc11", false, false).0.smem)(128),
        tokens_tc11_smem_bytes(128)
    );
    assert_eq!(
        (TokenStage::pick("tc12", false, false).0.smem)(64),
        tokens_tc12_smem_bytes(64)
    );
    // Every consumer in the table is a programmatic kernel, every stage kernel is not.
    for s in &TOKEN_STAGES {
        assert!(!s.kernel.programmatic(), "{}", s.name);
        assert!(s.overlapped.programmatic(), "{}", s.name);
    }
}

#[test]
fn token_stage_rule_keeps_batch_invariant_and_forced_scans_on_tc12() {
    // Every row names a stage of the table, and the last row matches every graph.
    for r in &BWD_TOKENS_RULE {
        assert!(TokenStage::named(r.stage).is_some(), "{}", r.stage);
    }
    let last = &BWD_TOKENS_RULE[BWD_TOKENS_RULE.len() - 1];
    assert!(last.batch_invariant.is_none() && last.dscan_forced.is_none());
    // (batch_invariant, DNNPLAN_GDN_BWD_DSCAN set) -> stage. Under batch_invariant the stage
    // must be bitwise the same with and without the overlap (which depends on the batch),
    // and a forced reverse scan must not be replaced by tc13's io-dR producers.
    for (invariant, forced, want) in [
        (false, false, "tw7"),
        (true, false, "tc12"),
        (false, true, "tc12"),
        (true, true, "tc12"),
    ] {
        let stage = TokenStage::by_rule(invariant, forced);
        assert_eq!(
            stage.name, want,
            "batch_invariant={invariant} dscan_forced={forced}"
        );
        assert_eq!(TokenStage::pick("", invariant, forced).0.name, want);
        if invariant || forced {
            assert!(stage.bitwise && stage.ov_scans.is_none());
        }
    }
    // A named stage wins over the rule.
    assert_eq!(TokenStage::pick("tc12", false, false).0.name, "tc12");
    assert_eq!(TokenStage::pick("tc13", true, true).0.name, "tc13");
}

#[test]
fn tc13_pairs_only_with_the_io_dr_producers() {
    // tc13 (session 21): not bitwise tc12 (dv, dBeta from the io-rounded dR); its consumer
    // reads dR in the io dtype, so its overlapped reverse scans are the io-dR ones whatever
    // DNNPLAN_GDN_BWD_DSCAN says, and without the overlap the row runs tc12 (fp32 dR).
    let (tc13, ok) = TokenStage::pick("tc13", false, false);
    assert!(ok && !tc13.bitwise);
    assert_eq!(tc13.kernel, BwdKernel::TokensTc12);
    assert_eq!(tc13.overlapped, BwdKernel::TokensTc13Ov);
    assert_eq!(
        tc13.ov_scans,
        Some((BwdKernel::DscanOv5Dr, BwdKernel::DscanpOv5Dr))
    );
    for env in ["", "ov", "ov2", "ov5", "ov5dr"] {
        for kv in [64, 128] {
            let (u, p, threads, smem) = overlap_scan_kernels(env, tc13.ov_scans, kv, kv);
            if kv == 128 && env != "ov5dr" && IO_DR_UNCUT_WGMMA_BY_RULE {
                // Session 25: the uncut producer on wgmma by rule at K = V = 128.
                assert_eq!((u, p), (BwdKernel::DscanOv2Gx, BwdKernel::DscanpOv5Dr));
                assert_eq!((threads, smem), (256, dscan_ov2gx_smem_bytes(kv, kv)));
                continue;
            }
            assert_eq!((u, p), (BwdKernel::DscanOv5Dr, BwdKernel::DscanpOv5Dr));
            // ov5's shape: a warp per 16 value rows and the publisher warp, R2's smem.
            assert_eq!(u64::from(threads), kv / 16 * 32 + 32);
            assert_eq!(smem, dscan_ov2_smem_bytes(kv, kv));
            assert!(!u.programmatic() && !p.programmatic());
        }
    }
    // Only tc13 and tc16 read the io dR; every other row pairs with the fp32-dR scans.
    for s in &TOKEN_STAGES {
        assert_eq!(
            s.ov_scans.is_some(),
            matches!(
                s.overlapped,
                BwdKernel::TokensTc13Ov
                    | BwdKernel::TokensTc16Ov
                    | BwdKernel::TokensTw1Ov
                    | BwdKernel::TokensTw3Ov
                    | BwdKernel::TokensTw7Ov
            )
        );
        assert_eq!(s.bitwise, s.ov_scans.is_none(), "{}", s.name);
    }
}

#[test]
fn ov2gx_replaces_the_io_dr_producers_at_k128() {
    // Session 25: DNNPLAN_GDN_BWD_DSCAN=ov2gx keeps tc13 by rule (an io-dR producer is no
    // forced fp32-dR scan) and swaps both io-dR producers at K = V = 128 only: 8 warps (no
    // publisher warp), the wgmma loop's shared memory.
    assert_eq!(TokenStage::pick("", false, false).0.name, "tw7");
    assert!(IO_DR_SCAN_SWITCHES.contains(&"ov2gx"));
    let tc13 = TokenStage::pick("tc13", false, false).0;
    let (u, p, threads, smem) = overlap_scan_kernels("ov2gx", tc13.ov_scans, 128, 128);
    assert_eq!((u, p), (BwdKernel::DscanOv2Gx, BwdKernel::DscanpOv2Gx));
    assert_eq!((threads, smem), (256, dscan_ov2gx_smem_bytes(128, 128)));
    assert_eq!(smem, 200_704);
    assert!(SM90_BUDGET.allows(smem) && !u.programmatic() && !p.programmatic());
    let (u, p, ..) = overlap_scan_kernels("ov2gx", tc13.ov_scans, 64, 64);
    assert_eq!((u, p), (BwdKernel::DscanOv5Dr, BwdKernel::DscanpOv5Dr));
    // ov2gxu: the uncut producer only; each kernel launches in its own shape.
    let (u, p, threads, smem) = overlap_scan_kernels("ov2gxu", tc13.ov_scans, 128, 128);
    assert_eq!((u, p), (BwdKernel::DscanOv2Gx, BwdKernel::DscanpOv5Dr));
    assert_eq!((threads, smem), (256, 200_704));
    assert_eq!(
        overlap_scan_launch(p, 128, 128),
        (8 * 32 + 32, dscan_ov2_smem_bytes(128, 128))
    );
    let (u, p, ..) = overlap_scan_kernels("ov2gxu", tc13.ov_scans, 64, 64);
    assert_eq!((u, p), (BwdKernel::DscanOv5Dr, BwdKernel::DscanpOv5Dr));
    // At K = 64 the gx rows name ov5dr's kernels and take their shape.
    for kernel in [BwdKernel::DscanOv2Gx, BwdKernel::DscanpOv2Gx] {
        assert_eq!(
            overlap_scan_launch(kernel, 64, 64),
            overlap_scan_launch(BwdKernel::DscanOv5Dr, 64, 64)
        );
    }
    // Every other pair shares one shape (the uncut one's, which overlap_scan_kernels returns);
    // tc13's at K = V = 128 pairs the wgmma uncut producer with dscanp_ov5dr by rule.
    for env in ["", "ov", "ov2", "ov5"] {
        for (stage, kv) in [(None, 128), (tc13.ov_scans, 128), (None, 64)] {
            if IO_DR_UNCUT_WGMMA_BY_RULE && stage.is_some() && kv == 128 {
                continue;
            }
            let (u, p, threads, smem) = overlap_scan_kernels(env, stage, kv, kv);
            assert_eq!(overlap_scan_launch(p, kv, kv), (threads, smem), "{env}");
            assert_eq!(overlap_scan_launch(u, kv, kv), (threads, smem), "{env}");
        }
    }
    // Without tc13 (fp32 dR) the switch falls back to the default producer.
    let (u, ..) = overlap_scan_kernels("ov2gx", None, 128, 128);
    assert_eq!(u, BWD_OVERLAP_SCAN_DEFAULT.0);
}

/// The (token stage, replay: uncut, or with `P > 1` the seeded one per piece) names a plan of
/// `f` runs, without the piece chain's pairing ([`BwdPrepForm::on_pieces`]), with the token stage `stage`
/// (a [`TOKEN_STAGES`] name) and the replay variant `replay`, `pieces` forced when `Some`
/// (`DNNPLAN_GDN_BWD_PIECES`), `replays` false under state checkpoints: the inputs the plan
/// gives [`token_pair`], from the same rules (132 SMs, the overlap by rule).
fn tc16_pair_at(
    f: &GdnFacts,
    stage: &str,
    replay: ReplayVariant,
    pieces: Option<u64>,
    replays: bool,
) -> (&'static str, String) {
    tc16_pair_form(f, stage, replay, pieces, replays, false)
}

/// [`tc16_pair_at`] with the piece chain's pairing `on_pieces` ([`BwdPrepForm::on_pieces`]):
/// with `P > 1` the replay is the seeded one per piece (`gx` by [`REPLAY_BY_RULE`]).
fn tc16_pair_form(
    f: &GdnFacts,
    stage: &str,
    replay: ReplayVariant,
    pieces: Option<u64>,
    replays: bool,
    on_pieces: bool,
) -> (&'static str, String) {
    let (n, ho, k) = (f.n_seqs as u64, f.heads.3 as u64, f.k as u64);
    let pieces = pieces.unwrap_or(BwdSchedule::default_for(f, 132).pieces);
    let overlap = BWD_OVERLAP_RULE.overlap(n * pieces * ho, n * pieces, 132);
    let one_per_sm = replay_one_per_sm(n * pieces * ho * (k / 64), 132);
    let uncut = replay.uncut_at(one_per_sm).launch(k).0;
    let replay = if pieces > 1 {
        replay.own_piece_replay(k).map_or(uncut, |r| r.0)
    } else {
        uncut
    };
    let stage = TokenStage::named(stage).expect("a stage");
    let (s, r) = token_pair(stage, overlap, pieces, on_pieces, replays, replay, k, k);
    (s.name, r.name("bf16", f.k, PrepVariant::DEFAULT))
}

/// The token stage `stage` of [`TOKEN_STAGES`] (a wgmma tile of 512 threads and Tw1Smem's
/// 188,224 B, launching `gdn_bwd_tokens_<stage>_*`) pairs exactly as the stage `like` (the
/// storing replay, else tc13) at the four benchmark shapes, and names tc13 at K = 64.
fn assert_token_stage_pairs_as(stage: &str, kernel: BwdKernel, like: &str) {
    let (s, ok) = TokenStage::pick(stage, false, false);
    assert!(ok);
    assert_eq!(s.name, stage);
    assert_eq!(s.overlapped, kernel);
    assert!(s.loads_u && !s.bitwise);
    assert_eq!((s.smem)(128), 188_224);
    assert!(SM90_BUDGET.holds(1, (s.smem)(128)));
    for tag in ["bf16", "f16"] {
        assert_eq!(
            kernel.name(tag, 128, PrepVariant::DEFAULT),
            format!("gdn_bwd_tokens_{stage}_{tag}_k128")
        );
    }
    let rule = REPLAY_BY_RULE;
    for shape in [
        (4, 32768, 16),
        (1, 32768, 16),
        (16, 32768, 32),
        (10, 29949, 16),
    ] {
        let f = facts(shape.0, shape.1, shape.2, 128, false);
        let base = tc16_pair_at(&f, like, rule, None, true);
        let got = tc16_pair_at(&f, stage, rule, None, true);
        let want = if base.0 == like { stage } else { base.0 };
        assert_eq!((got.0, &got.1), (want, &base.1), "{stage} {shape:?}");
    }
    let f64k = facts(4, 32768, 16, 64, false);
    assert_eq!(tc16_pair_at(&f64k, stage, rule, None, true).0, "tc13");
}

#[test]
fn tw1_runs_where_tc16_runs_with_its_own_entry_and_smem() {
    // Session 30 (m1t30): DNNPLAN_GDN_BWD_TOKENS=tw1 picks the tw1 row (the rule's stage in
    // sessions 30 and 31, tw3 since session 32), which pairs exactly as tc16.
    assert_token_stage_pairs_as("tw1", BwdKernel::TokensTw1Ov, "tc16");
    for invariant in [false, true] {
        for forced in [false, true] {
            assert_ne!(TokenStage::by_rule(invariant, forced).name, "tw1");
        }
    }
}

#[test]
fn tw3_runs_where_tw1_runs_with_its_own_entry() {
    // Session 32 (tp32): DNNPLAN_GDN_BWD_TOKENS=tw3 picks the tw3 row, which pairs exactly as
    // tw1 (tw1 with its copies issued in another order).
    assert_token_stage_pairs_as("tw3", BwdKernel::TokensTw3Ov, "tw1");
}

#[test]
fn tw7_runs_where_tw3_runs_and_alone_reads_the_ring_maps() {
    // Session 39: DNNPLAN_GDN_BWD_TOKENS=tw7 picks the tw7 row, which pairs exactly as tw3
    // (tw3 with the ring by tensor maps); only its kernel reads the maps, so only its plans
    // encode them.
    assert_token_stage_pairs_as("tw7", BwdKernel::TokensTw7Ov, "tw3");
    let readers: Vec<_> = BwdKernel::ALL
        .iter()
        .filter(|k| k.reads_ring_maps())
        .collect();
    assert_eq!(readers, [&BwdKernel::TokensTw7Ov]);
    assert!(BwdKernel::TokensTw7Ov.slim_workspace());
    // The rule's plans (tw7 since session 39) encode the maps; at K = 64 (tc13) none.
    for shape in [(4, 32768, 16), (1, 32768, 16), (16, 32768, 32)] {
        let f =
            crate::engines::gdn::engine::tests::bound(facts(shape.0, shape.1, shape.2, 128, false));
        assert!(named_plan(&f).ring_maps.is_some(), "{shape:?}");
    }
    let f64k = crate::engines::gdn::engine::tests::bound(facts(4, 32768, 16, 64, false));
    assert!(named_plan(&f64k).ring_maps.is_none());
    // Past 2^31 state rows (2^24 chunk-slot units) the box coordinates would not fit 32 bits:
    // the plan runs tw3 in tw7's place.
    let huge = crate::engines::gdn::engine::tests::bound(facts(1, 1 << 27, 16, 128, false));
    let plan = named_plan(&huge);
    assert!(plan.ring_maps.is_none());
    let tokens: Vec<_> = plan
        .steps
        .iter()
        .map(|s| s.0)
        .filter(|k| matches!(k, BwdKernel::TokensTw3Ov | BwdKernel::TokensTw7Ov))
        .collect();
    assert_eq!(tokens, [BwdKernel::TokensTw3Ov]);
}

#[test]
fn tc16_pairs_only_with_the_storing_replay() {
    // Session 27: tc16 loads the U tiles of the storing replay, so it runs only where the
    // overlap runs (U in ws_dr's second half beside the io dR), uncut (P = 1), with the gx
    // replays (gx4 at one block per SM, gx at two) and K = V = 128; elsewhere its row runs
    // tc13 (the same numerics), with the plan's own replay.
    let rule = REPLAY_BY_RULE;
    let gx4u = "gdn_bwd_fscan_gx4u_bf16_k128";
    let gxu = "gdn_bwd_fscan_gxu_bf16_k128";
    let gx4 = "gdn_bwd_fscan_gx4_bf16_k128";
    // The four benchmark shapes: (4, 8192, 16) 128 replay blocks (gx4), (1, 32768, 16) the
    // 8-piece chain (tc13 and its seeded replay gx, without the piece chain's pairing of
    // session 29, below), (16, 2048, 32) 1024 blocks (gx), the ragged mix 320 (gx4).
    let gx = "gdn_bwd_fscan_gx_bf16_k128";
    for (shape, want) in [
        ((4, 32768, 16), ("tc16", gx4u)),
        ((1, 32768, 16), ("tc13", gx)),
        ((16, 32768, 32), ("tc16", gxu)),
        ((10, 29949, 16), ("tc16", gx4u)),
    ] {
        let f = facts(shape.0, shape.1, shape.2, 128, false);
        let got = tc16_pair_at(&f, "tc16", rule, None, true);
        assert_eq!((got.0, got.1.as_str()), want, "{shape:?}");
        // tc13 keeps the plain replay at every shape.
        let tc13 = tc16_pair_at(&f, "tc13", rule, None, true);
        assert_eq!(tc13.0, "tc13");
        assert!(!tc13.1.ends_with("u_bf16_k128"), "{shape:?}: {}", tc13.1);
    }
    let f = facts(4, 32768, 16, 128, false);
    // DNNPLAN_GDN_BWD_PIECES=8: the piece chain (its seeded replay per piece) -> tc13.
    let got = tc16_pair_at(&f, "tc16", rule, Some(8), true);
    assert_eq!(got.0, "tc13");
    // Session 29 (BwdPrepForm::SlimPieces): the piece chain pairs tc16 with its seeded replay
    // storing U (gx -> gxu; gx4 forced -> gx4u), not under checkpoints, not at K = 64.
    let f1 = facts(1, 32768, 16, 128, false);
    let got = tc16_pair_form(&f1, "tc16", rule, None, true, true);
    assert_eq!((got.0, got.1.as_str()), ("tc16", gxu));
    let got = tc16_pair_form(&f, "tc16", rule, Some(8), true, true);
    assert_eq!((got.0, got.1.as_str()), ("tc16", gxu));
    let gx4v = ReplayVariant::Warpgroup4;
    let got = tc16_pair_form(&f1, "tc16", gx4v, None, true, true);
    assert_eq!((got.0, got.1.as_str()), ("tc16", gx4u));
    assert_eq!(
        tc16_pair_form(&f1, "tc16", rule, None, false, true).0,
        "tc13"
    );
    let f1k64 = facts(1, 32768, 16, 64, false);
    assert_eq!(
        tc16_pair_form(&f1k64, "tc16", rule, None, true, true).0,
        "tc13"
    );
    // DNNPLAN_GDN_BWD_FSCAN=r4 (or v1, gx3: no storing entry) -> tc13 with that replay;
    // gx / gx4 forced keep the pair.
    for (variant, want) in [
        (ReplayVariant::Rows4, ("tc13", "gdn_bwd_fscan_r4_bf16_k128")),
        (ReplayVariant::V1, ("tc13", "gdn_bwd_fscan_bf16_k128")),
        (
            ReplayVariant::Warpgroup3,
            ("tc13", "gdn_bwd_fscan_gx3_bf16_k128"),
        ),
        (ReplayVariant::Warpgroup, ("tc16", gxu)),
        (ReplayVariant::Warpgroup4, ("tc16", gx4u)),
    ] {
        let got = tc16_pair_at(&f, "tc16", variant, None, true);
        assert_eq!((got.0, got.1.as_str()), want, "{variant:?}");
    }
    // State checkpoints (no uncut replay from the initial state) -> tc13.
    assert_eq!(tc16_pair_at(&f, "tc16", rule, None, false).0, "tc13");
    // K = V = 64 (r4's replay): tc13.
    let f64 = facts(4, 32768, 16, 64, false);
    let got = tc16_pair_at(&f64, "tc16", rule, None, true);
    assert_eq!(
        (got.0, got.1.as_str()),
        ("tc13", "gdn_bwd_fscan_r4_bf16_k64")
    );
    // Without the overlap (DNNPLAN_GDN_BWD_OVERLAP=0, the v1 / w8 reverse scans): tc13,
    // whose row then runs tc12's kernel.
    let tc16 = TokenStage::pick("tc16", false, false).0;
    let (s, r) = token_pair(tc16, false, 1, false, true, BwdKernel::FscanGx4, 128, 128);
    assert_eq!(
        (s.name, s.kernel, r),
        ("tc13", BwdKernel::TokensTc12, BwdKernel::FscanGx4)
    );
    // batch_invariant: the rule's stage (tc12) never pairs; a forced reverse scan likewise.
    let fbi = facts(4, 32768, 16, 128, true);
    let bi = TokenStage::by_rule(true, false);
    assert!(!bi.loads_u);
    let got = tc16_pair_at(&fbi, bi.name, rule, None, true);
    assert_eq!((got.0, got.1.as_str()), ("tc12", gx4));
    assert!(!TokenStage::by_rule(false, true).loads_u);
    // Only tc16, tw1 (session 30), tw3 (session 32) and tw7 (session 39) load U; their
    // fallback is a stage of the table with the same producers.
    for s in &TOKEN_STAGES {
        assert_eq!(
            s.loads_u,
            matches!(
                s.overlapped,
                BwdKernel::TokensTc16Ov
                    | BwdKernel::TokensTw1Ov
                    | BwdKernel::TokensTw3Ov
                    | BwdKernel::TokensTw7Ov
            ),
            "{}",
            s.name
        );
    }
    let fallback = TokenStage::named(TC16_FALLBACK).expect("tc16's fallback is a stage");
    assert!(!fallback.loads_u && fallback.ov_scans == tc16.ov_scans);
    assert_eq!((fallback.smem)(128), (tc16.smem)(128));
    // The storing entries: the gx bodies only, the same launch shape; named at K = 128,
    // r4 / tc13 at K = 64 (every name is bundled:
    // every_kernel_name_is_a_symbol_of_the_bundled_cubin).
    assert_eq!(
        replay_storing_u(BwdKernel::FscanGx),
        Some(BwdKernel::FscanGxU)
    );
    assert_eq!(
        replay_storing_u(BwdKernel::FscanGx4),
        Some(BwdKernel::FscanGx4U)
    );
    for other in [BwdKernel::FscanGx3, BwdKernel::FscanR4, BwdKernel::Fscan] {
        assert_eq!(replay_storing_u(other), None);
    }
    // (io dtype, K): the storing replays' and tc16's entries (K = 64 names r4 and tc13).
    for ((tag, k), [gxu, gx4u, tc16]) in [
        (
            ("f16", 128),
            [
                "gdn_bwd_fscan_gxu_f16_k128",
                "gdn_bwd_fscan_gx4u_f16_k128",
                "gdn_bwd_tokens_tc16_ov_f16_k128",
            ],
        ),
        (
            ("bf16", 64),
            [
                "gdn_bwd_fscan_r4_bf16_k64",
                "gdn_bwd_fscan_r4_bf16_k64",
                "gdn_bwd_tokens_tc13_ov_bf16_k64",
            ],
        ),
    ] {
        let names = kernel_names(tag, k, PrepVariant::DEFAULT);
        assert_eq!(names[BwdKernel::FscanGxU as usize], gxu);
        assert_eq!(names[BwdKernel::FscanGx4U as usize], gx4u);
        assert_eq!(names[BwdKernel::TokensTc16Ov as usize], tc16);
    }
    // U's tiles fit the second half of ws_dr: [slots][64][V] io = half its fp32 size.
    let l = BwdWorkspaceLayout::new(4, 32768, 16, 128, 128);
    let slots = max_chunks(4, 32768) * 16;
    assert!(l.regions[7] - l.regions[6] >= 2 * slots * CHUNK * 128 * 2);
}

#[test]
fn overlapped_reverse_scan_kernels_by_switch() {
    let (u, p, threads, smem) = overlap_scan_kernels("ov2", None, 128, 128);
    assert_eq!(
        (u, p, threads),
        (BwdKernel::DscanOv2, BwdKernel::DscanpOv2, 256)
    );
    assert_eq!(smem, dscan_ov2_smem_bytes(128, 128));
    let (u, p, threads, smem) = overlap_scan_kernels("ov", None, 64, 64);
    assert_eq!(
        (u, p, threads),
        (BwdKernel::DscanOv, BwdKernel::DscanpOv, 128)
    );
    assert_eq!(smem, dscan_ov_smem_bytes(64, 64));
    let (u, p, threads, smem) = overlap_scan_kernels("", None, 128, 128);
    assert_eq!((u, p), BWD_OVERLAP_SCAN_DEFAULT);
    // The default: the R2 loop with its publisher warp (session 20), within the 227 KB a
    // block may ask for.
    assert_eq!(BWD_OVERLAP_SCAN_DEFAULT.0, BwdKernel::DscanOv5);
    assert_eq!(threads, 8 * 32 + 32);
    assert!(SM90_BUDGET.allows(smem));
    assert!(!BwdKernel::DscanOv2.programmatic() && !BwdKernel::DscanpOv2.programmatic());
    // Session 18's publisher warp: the R2 loop's shared memory, a warp more.
    for kv in [64, 128] {
        let (u, p, threads, smem) = overlap_scan_kernels("ov5", None, kv, kv);
        assert_eq!((u, p), (BwdKernel::DscanOv5, BwdKernel::DscanpOv5));
        assert_eq!(u64::from(threads), kv / 16 * 32 + 32);
        assert_eq!(smem, dscan_ov2_smem_bytes(kv, kv));
        assert!(!u.programmatic() && !p.programmatic());
    }
}

#[test]
fn reverse_scan_rule_at_the_benchmark_shapes() {
    let w8 = |blocks| BWD_DSCAN_RULE.eight_warps(blocks, 132);
    // (4, 8192, 16): 4 x 16 x 2 value slices = 128 blocks -> 8 warps.
    assert!(w8(4 * 16 * 2));
    // (16, 2048, 32) and the ragged mix (10 sequences, H = 16): 1024 and 320 blocks.
    assert!(w8(16 * 32 * 2) && w8(10 * 16 * 2));
    // (1, 32768, 16), P = 4: dscanp 128 blocks -> 8 warps; dsum 96 (pieces 1..3) -> 4;
    // uncut (batch_invariant) 32 -> 4.
    assert!(w8(4 * 16 * 2) && !w8(3 * 16 * 2) && !w8(16 * 2));
    // The edge: 3/4 of 132 SMs.
    assert!(w8(99) && !w8(98));
}

/// Backward facts of `n` sequences, `t` tokens, `ho` heads, K = V = `d` with every port bound
/// (bf16 io, fp32 states), checkpoints every `cadence` tokens in `ckpt` of `rows` rows.
fn ckpt_facts(
    (n, t, ho, d): (i64, i64, i64, i64),
    cadence: i64,
    ckpt: DataType,
    rows: i64,
) -> GdnFacts {
    use super::super::engine::tests::{bound, with_checkpoints};
    let mut f = with_checkpoints(bound(facts(n, t, ho, d, false)), cadence, ckpt, false);
    let (_, port) = f.ports.last_mut().expect("state_checkpoints");
    port.dims = vec![rows, ho, d, d];
    f
}

#[test]
fn checkpoint_rule_table() {
    use CheckpointDtype::{Fp32, Io};
    use CheckpointUse::{Recompute, Reuse, Seed};
    // (cadence, dtype) -> use: io-dtype rows at the chunk cadence are reused, every other
    // cadence and fp32 rows seed the replay, rows of another dtype are ignored.
    for (cadence, dtype, want) in [
        (64, Some(Io), Reuse),
        (64, Some(Fp32), Seed),
        (64, None, Recompute),
        (128, Some(Io), Seed),
        (192, Some(Io), Seed),
        (192, Some(Fp32), Seed),
        (256, None, Recompute),
    ] {
        assert_eq!(checkpoint_rule(cadence, dtype), want, "{cadence} {dtype:?}");
    }
    // The facts: a bound port of at least T/64 + N rows of [HO, V, K] on a backward node.
    let shape = (3, 300, 2, 64);
    let rows = 300 / 64 + 3;
    let at = |cadence, dt, rows| checkpoint_use(&ckpt_facts(shape, cadence, dt, rows));
    assert_eq!(at(64, DataType::Bfloat16, rows), Reuse);
    assert_eq!(at(64, DataType::Bfloat16, rows + 5), Reuse);
    assert_eq!(at(64, DataType::Bfloat16, rows - 1), Recompute);
    assert_eq!(at(64, DataType::Float, rows), Seed);
    assert_eq!(at(64, DataType::Half, rows), Recompute);
    assert_eq!(at(128, DataType::Bfloat16, rows), Seed);
    assert_eq!(at(0, DataType::Bfloat16, rows), Recompute);
    // At c = 128 the spec's max(T/c + N, 1) rows suffice; one fewer is ignored.
    let rows128 = 300 / 128 + 3;
    assert_eq!(checkpoint_rows(3, 300, 128), rows128 as u64);
    assert_eq!(at(128, DataType::Float, rows128), Seed);
    assert_eq!(at(128, DataType::Float, rows128 - 1), Recompute);
    assert_eq!(checkpoint_rows(0, 0, 64), 1);
    // The seeded replay's grid holds at most SEED_MAX_ROWS rows; beyond, recompute (reuse
    // has no such grid).
    let big = |c: i64, dt| {
        let t = 64 * 65_534;
        let rows = t / c + 2;
        checkpoint_use(&ckpt_facts((2, t, 1, 64), c, dt, rows))
    };
    assert_eq!(big(64, DataType::Float), Recompute);
    assert_eq!(big(64, DataType::Bfloat16), Reuse);
    assert_eq!(big(128, DataType::Float), Seed);
    let mut f = ckpt_facts(shape, 64, DataType::Bfloat16, rows);
    f.op = GdnOp::Forward;
    assert_eq!(checkpoint_use(&f), Recompute);
    let mut f = ckpt_facts(shape, 64, DataType::Bfloat16, rows);
    f.ports.retain(|(p, _)| *p != "state_checkpoints");
    assert_eq!(checkpoint_use(&f), Recompute);
    // The engine takes the backward with checkpoints (reused or ignored) and the forward
    // (which writes them).
    let target = crate::dispatch::target::Target::with_arch(90);
    let rules = super::super::engine::SUPPORT_RULES;
    for op in [GdnOp::Backward, GdnOp::Forward] {
        for cadence in [64, 128] {
            let mut f = ckpt_facts((3, 300, 2, 128), cadence, DataType::Bfloat16, rows);
            f.op = op;
            assert!(
                rules.iter().all(|r| r(&f, &target).is_none()),
                "{op:?} {cadence}"
            );
        }
    }
}

#[test]
fn seeding_checkpoints_at_any_cadence_keep_the_chunks_per_row_exact() {
    // fp32 rows at any positive multiple of 64 seed the replay (`gdn_bwd_fscanc*`), whose
    // row r of sequence b seeds chunks [cb + j·m, min(cb + j·m + m, ce)) and stores the last
    // one's entering state, m = `ckpt_every` (an int). Uncapped, c = 64 · 2^32 truncated m
    // to 0 and c = 64 · 2^31 to −2^31 (that store at chunk cb − 1 or far before the
    // workspace), and c = 64 · (2^31 − 1) overflowed cb + m. Past the longest sequence every
    // cadence seeds the same way (one row per sequence), so the layout caps m there.
    let (n, t, ho, d) = (3, 300, 2, 128);
    let chunks = crate::engines::gdn::params::max_chunks(n as u64, t as u64);
    for c in [64 * ((1i64 << 31) - 1), 64 << 31, 64 << 32, 64 << 40] {
        let rows = checkpoint_rows(n as u64, t as u64, c as u64) as i64;
        let f = ckpt_facts((n, t, ho, d), c, DataType::Float, rows);
        assert_eq!(checkpoint_use(&f), CheckpointUse::Seed, "c = {c}");
        let plan = named_plan(&f);
        let mut p = BwdCkptParams::default();
        p.cp.b.f.chunk_offsets = 0x1000;
        plan.ckpt.bind_bwd(0x10_0000, 0xdead_0000, &mut p);
        assert!(
            p.ckpt_every >= 2 && p.ckpt_every as u64 <= chunks.max(2),
            "c = {c}: {} chunks per row",
            p.ckpt_every
        );
        assert!(chunks + p.ckpt_every as u64 <= i32::MAX as u64);
        // The rows' table kernel runs (more than one chunk per row) into the workspace's.
        assert_eq!(p.ckpt_rows, 0x10_0000 + plan.ckpt.rows);
        assert!(plan.steps.iter().any(|s| s.0 == BwdKernel::CkptRows));
    }
}

/// The forward-state replay's kernels (uncut, the piece chain's forward chain and seeded
/// replay) by name prefix.
const REPLAY_KERNELS: [&str; 5] = [
    "gdn_bwd_fscan_r4_",
    "gdn_bwd_fscan_gx",
    "gdn_bwd_fscan_bf16",
    "gdn_bwd_fscanp",
    "gdn_bwd_pchain",
];

/// The plan of `f` with kernels resolved to their names (bf16).
fn named_plan(f: &GdnFacts) -> GdnBwdPlan<String> {
    let names = kernel_names("bf16", f.k, PrepVariant::DEFAULT).to_vec();
    GdnBwdPlan::new(f, names, 132).expect("plan")
}

#[test]
fn the_saved_replay_leaves_out_the_prep_and_the_replay() {
    use crate::engines::gdn::engine::tests::{SAVED_SHAPES, bound, every_chunk, saving};
    for (n, t, ho) in SAVED_SHAPES {
        let factors = saving(bound(facts(n, t, ho, 128, false)));
        let f = saving(every_chunk(bound(facts(n, t, ho, 128, false))));
        let (with, without) = (named_plan(&f), named_plan(&factors));
        assert_eq!(with.checkpoints(), CheckpointUse::Reuse);
        assert!(with.reads_chunk_factors() && with.slim_form());
        assert!(with.factors.is_some_and(|(_, l)| l.holds_u_tiles()));
        let names =
            |p: &GdnBwdPlan<String>| -> Vec<String> { p.launches().map(|l| l.0.clone()).collect() };
        let (a, b) = (names(&with), names(&without));
        // The launches of the plan reading the factors alone, less the replay's.
        let replay = |x: &String| REPLAY_KERNELS.iter().any(|r| x.starts_with(r));
        assert!(b.iter().any(replay), "({n},{t},{ho}): {b:?}");
        // The piece chain's summaries: only the transitions Mᵀ_j.
        let rest: Vec<String> = b
            .iter()
            .filter(|x| !replay(x))
            .map(|x| x.replace("_psum_sl_", "_psumt_sl_"))
            .collect();
        assert_eq!(a, rest, "({n},{t},{ho})");
        let grids = |p: &GdnBwdPlan<String>, entry: &str| -> Vec<(u32, u32, u32)> {
            p.launches()
                .filter(|l| l.0.contains(entry))
                .map(|l| l.1)
                .collect()
        };
        for (g_t, g) in grids(&with, "_psumt_sl_")
            .into_iter()
            .zip(grids(&without, "_psum_sl_"))
        {
            let pieces = with.schedule().pieces as u32;
            assert_eq!(
                g_t.2 / (pieces - 1),
                g.2 / (2 * pieces - 1),
                "one block row per sequence"
            );
            assert_eq!((g_t.0, g_t.1), (g.0, g.1));
        }
        // The U-loading token stage still runs (its U from the factors).
        assert!(a.iter().any(|x| x.contains("tokens_tw7")), "{a:?}");
        // No states region: the checkpoints stand in.
        assert!(with.ckpt.total < without.ckpt.total);
    }
}

#[test]
fn saved_chunk_factors_take_the_slim_prep_out_of_the_launches() {
    use crate::engines::gdn::engine::tests::{SAVED_SHAPES, bound, saving};
    for (n, t, ho) in SAVED_SHAPES {
        let plain = bound(facts(n, t, ho, 128, false));
        let f = saving(plain.clone());
        let (with, without) = (named_plan(&f), named_plan(&plain));
        assert!(with.reads_chunk_factors() && !without.reads_chunk_factors());
        let names =
            |p: &GdnBwdPlan<String>| -> Vec<String> { p.launches().map(|l| l.0.clone()).collect() };
        let (a, b) = (names(&with), names(&without));
        let prep: Vec<&String> = b.iter().filter(|x| x.contains("_prep")).collect();
        assert_eq!(prep.len(), 1, "({n},{t},{ho}): {b:?}");
        assert!(prep[0].contains("prep16sl"), "{}", prep[0]);
        let rest: Vec<String> = b.iter().filter(|x| !x.contains("_prep")).cloned().collect();
        assert_eq!(a, rest, "({n},{t},{ho})");
        // The prep's regions are the buffer's: a smaller workspace.
        assert!(with.ckpt.total < without.ckpt.total);
    }
}

#[test]
fn slim_plans_get_only_the_regions_their_kernels_touch() {
    use crate::engines::gdn::engine::tests::bound;
    const PLAIN: SlimRegions = SlimRegions {
        states: true,
        prep_outputs: true,
        u_tiles: true,
        head_sums: false,
    };
    let full = |n: i64, t: i64, ho: i64| {
        BwdWorkspaceLayout::with_states(n as u64, t as u64, ho as u64, 128, 128, true).total
    };
    // The rule's plans at the benchmark shapes (uncut, 8 pieces, the split scan): slim, about
    // a third of the full layout.
    for (n, t, ho) in [(4, 32768, 16), (1, 32768, 16), (16, 32768, 32), (3, 300, 2)] {
        let plan = named_plan(&bound(facts(n, t, ho, 128, false)));
        assert!(plan.steps.iter().all(|s| s.0.slim_workspace()));
        let slim = BwdWorkspaceLayout::slim(n as u64, t as u64, ho as u64, 128, 128, PLAIN);
        assert_eq!(plan.layout, slim, "({n},{t},{ho})");
        assert!(
            3 * slim.total < 4 * full(n, t, ho) / 2,
            "({n},{t},{ho}): {} of {}",
            slim.total,
            full(n, t, ho)
        );
    }
    // (4,8192,16): 0.97 GB instead of 2.7.
    let s = BwdWorkspaceLayout::slim(4, 32768, 16, 128, 128, PLAIN);
    assert!(s.total < 1_000_000_000 && full(4, 32768, 16) > 2_700_000_000);
    // Empty regions alias the next one; every region stays aligned and in order.
    let r = s.regions;
    assert_eq!(r[1], r[2], "E is empty");
    assert_eq!(
        (r[7], r[8], r[9]),
        (r[10], r[10], r[10]),
        "no per-head sums ungrouped"
    );
    for w in r.windows(2) {
        assert!(w[0] <= w[1] && w[1] % 256 == 0);
    }
    assert_eq!((s.fwd.w, s.fwd.q), (s.fwd.kr, s.fwd.kr), "W, Q⁺ empty");
    assert_eq!(s.fwd.ut, s.fwd.a, "Ũᵀ empty");
    // Grouped heads keep the per-head sums (the fold reads them).
    let g = BwdWorkspaceLayout::slim(
        4,
        32768,
        16,
        128,
        128,
        SlimRegions {
            head_sums: true,
            ..PLAIN
        },
    );
    assert_eq!(g.regions[8] - g.regions[7], 32768 * 16 * 128 * 4);
    // The saved replay's U tiles stand in for dR's second half.
    let plain = BwdWorkspaceLayout::slim(4, 32768, 16, 128, 128, PLAIN);
    let saved = BwdWorkspaceLayout::slim(
        4,
        32768,
        16,
        128,
        128,
        SlimRegions {
            u_tiles: false,
            ..PLAIN
        },
    );
    let slots = 516 * 16;
    assert_eq!(plain.regions[7] - plain.regions[6], slots * 64 * 128 * 4);
    assert_eq!(saved.regions[7] - saved.regions[6], slots * 64 * 128 * 2);
    assert_eq!(plain.u_tiles, Some(plain.regions[6] + slots * 64 * 128 * 2));
    assert_eq!(saved.u_tiles, None);
    // A plan with a kernel outside the slim set (batch_invariant: the fp32-dR token stage)
    // keeps the full layout.
    let bi = named_plan(&bound(facts(2, 300, 2, 128, true)));
    assert!(!bi.steps.iter().all(|s| s.0.slim_workspace()));
    assert_eq!(
        bi.layout,
        BwdWorkspaceLayout::with_states(2, 300, 2, 128, 128, true)
    );
}

/// [`named_plan`] under `form` (instead of the switch / rule). The checkpoint tests compare
/// plans with checkpoints against the recompute plan of session 28's form
/// ([`BwdPrepForm::Slim`]): the piece chain's slim form ([`BwdPrepForm::SlimPieces`], the rule
/// since session 29) needs the storing seeded replay, so with checkpoints the chain runs the
/// full form, as under `Slim`.
fn named_plan_form(f: &GdnFacts, form: BwdPrepForm) -> GdnBwdPlan<String> {
    let names = kernel_names("bf16", f.k, PrepVariant::DEFAULT).to_vec();
    GdnBwdPlan::with_form(f, names, 132, form).expect("plan")
}

/// The launches of `p`: (entry, grid).
fn planned(p: &GdnBwdPlan<String>) -> Vec<(String, (u32, u32, u32))> {
    p.launches().map(|l| (l.0.clone(), l.1)).collect()
}

/// A launch's entry with the scalar form's kernels named as the full form's (plans with
/// checkpoints run the full form: [`BwdPrepForm::scalar_form`] needs the uncut replay).
fn full_form(x: &str) -> String {
    [
        ("prep15sc_", "prep15_"),
        ("prep15sl_", "prep15_"),
        ("prep16sl_", "prep15_"),
        ("prep16slc_", "prep15_"),
        ("prep16sll_", "prep15_"),
        ("gx4sl_", "gx4u_"),
        ("gxsl_", "gxu_"),
        ("ov2gxsc_", "ov2gx_"),
        ("ov2gxsh_", "ov2gx_"),
        ("gx4scu_", "gx4u_"),
        ("gxscu_", "gxu_"),
        ("gx4sc_", "gx4_"),
        ("gxsc_", "gx_"),
    ]
    .iter()
    .fold(x.to_owned(), |n, (a, b)| n.replace(a, b))
}

/// The checkpoint tests' shapes (N, T, HO, K): the four benchmark shapes (uncut, and
/// (1, 32768, 16) as the 8-piece chain), K = 64 (1 x 4096 on 4 heads: 16 pieces) and a short
/// ragged batch.
const CKPT_SHAPES: [(i64, i64, i64, i64); 6] = [
    (4, 32768, 16, 128),
    (1, 32768, 16, 128),
    (16, 32768, 32, 128),
    (10, 29949, 16, 128),
    (1, 4096, 4, 64),
    (3, 300, 2, 64),
];

/// The entry-name prefix of the rule's `U`-loading consumer (`gdn_bwd_tokens_tw3_` since
/// session 32, `gdn_bwd_tokens_tw1_` in sessions 30 and 31, `gdn_bwd_tokens_tc16_ov_` before): what the plan tests look for where the
/// storing replay pairs with the token stage.
fn rule_u_consumer() -> String {
    let stage = TokenStage::by_rule(false, false);
    assert!(stage.loads_u, "{}", stage.name);
    let name = stage.overlapped.name("bf16", 128, PrepVariant::DEFAULT);
    name.strip_suffix("bf16_k128")
        .expect("an io suffix")
        .to_string()
}

#[test]
fn default_plans_pair_tc16_with_the_storing_replay() {
    // The rule's stage (tc16 since session 27) in whole plans (no switches set): the token
    // stage and uncut replay [`tc16_pair_at`] gives, at the four benchmark shapes and K = 64.
    for (n, t, ho, d) in [
        (4, 32768, 16, 128),
        (1, 32768, 16, 128),
        (16, 32768, 32, 128),
        (10, 29949, 16, 128),
        (4, 32768, 16, 64),
    ] {
        let f = ckpt_facts((n, t, ho, d), 0, DataType::Bfloat16, 1);
        // Named in the full form: where the scalar form runs, its replay is the storing one
        // too (gx{,4}scu for gx{,4}u).
        let names: Vec<String> = planned(&named_plan(&f))
            .into_iter()
            .map(|l| full_form(&l.0))
            .collect();
        let on_pieces = BWD_PREP_FORM_BY_RULE.on_pieces();
        let rule_stage = TokenStage::by_rule(false, false).name;
        let (stage, replay) = tc16_pair_form(&f, rule_stage, REPLAY_BY_RULE, None, true, on_pieces);
        let consumer = TokenStage::named(stage).expect("a stage").overlapped.name(
            "bf16",
            d,
            PrepVariant::DEFAULT,
        );
        assert!(names.contains(&consumer), "{names:?}");
        let pieces = BwdSchedule::default_for(&f, 132).pieces;
        assert!(pieces > 1 || names.contains(&replay), "{replay}: {names:?}");
        let storing = names
            .iter()
            .any(|x| x.starts_with("gdn_bwd_fscan_gx") && x.contains("u_bf16"));
        assert_eq!(storing, stage == rule_stage, "{names:?}");
        // Since session 29 (BwdPrepForm::SlimPieces) the piece chain pairs too.
        assert_eq!(
            stage == rule_stage,
            (pieces == 1 || on_pieces) && d == 128,
            "{names:?}"
        );
        if pieces > 1 && stage == rule_stage {
            assert!(names.contains(&replay), "{replay}: {names:?}");
        }
    }
}

#[test]
fn reused_checkpoints_leave_out_the_replay() {
    let replay_kernels = REPLAY_KERNELS;
    let plan = named_plan;
    for (n, t, ho, d) in CKPT_SHAPES {
        let rows = t / 64 + n;
        let with = plan(&ckpt_facts((n, t, ho, d), 64, DataType::Bfloat16, rows));
        let without = named_plan_form(
            &ckpt_facts((n, t, ho, d), 0, DataType::Bfloat16, rows),
            BwdPrepForm::Slim,
        );
        assert_eq!(with.checkpoints(), CheckpointUse::Reuse);
        assert_eq!(without.checkpoints(), CheckpointUse::Recompute);
        let names =
            |p: &GdnBwdPlan<String>| p.launches().map(|l| l.0.clone()).collect::<Vec<String>>();
        let (w, wo) = (names(&with), names(&without));
        let is_replay = |x: &String| replay_kernels.iter().any(|r| x.starts_with(r));
        let is_psum = |x: &String| x.starts_with("gdn_bwd_psum");
        assert!(!w.iter().any(is_replay), "{w:?}");
        // Without checkpoints: one replay uncut, the forward chain and the seeded replay
        // with pieces; every other launch but the summaries is the same, in the same order.
        let replays = wo.iter().filter(|x| is_replay(x)).count();
        let pieces = with.schedule().pieces;
        assert_eq!(replays, if pieces > 1 { 2 } else { 1 }, "{wo:?}");
        // The token stage: tc16 without checkpoints where it pairs (uncut, K = V = 128), its
        // fallback tc13 with them (no storing replay to pair with).
        let u_consumer = rule_u_consumer();
        let loads_u = wo.iter().any(|x| x.starts_with(&u_consumer));
        assert_eq!(loads_u, pieces == 1 && d == 128, "{wo:?}");
        assert!(!w.iter().any(|x| x.starts_with(&u_consumer)));
        let kept = |v: &[String], drop: &dyn Fn(&String) -> bool| -> Vec<String> {
            v.iter()
                .filter(|x| !drop(x) && !is_psum(x))
                .map(|x| full_form(x).replace(&u_consumer, "gdn_bwd_tokens_tc13_ov_"))
                .collect()
        };
        assert_eq!(kept(&w, &|_| false), kept(&wo, &is_replay));
        // The reverse chain reads the summaries' transitions Mᵀ_j: only those are summed
        // (psumt, N·(P − 1) block rows instead of N·(2P − 1)); no M_j region.
        let psum = |p: &GdnBwdPlan<String>| {
            planned(p)
                .into_iter()
                .filter(|(x, _)| is_psum(x))
                .map(|(x, g)| (x, g.2))
                .collect::<Vec<_>>()
        };
        let m_bytes = if pieces > 1 {
            let (name, z) = &psum(&with)[0];
            assert!(name.starts_with("gdn_bwd_psumt"), "{name}");
            assert_eq!(u64::from(*z), n as u64 * (pieces - 1));
            assert_eq!(u64::from(psum(&without)[0].1), n as u64 * (2 * pieces - 1));
            n as u64 * (pieces - 1) * (ho * d * d) as u64 * 4
        } else {
            assert!(psum(&with).is_empty());
            0
        };
        // The states' region leaves the workspace: slots · V · K io elements (aligned); the
        // piece chain's M_j region too. (The recompute plan may run the slim form, whose
        // layout is smaller still: compare with the layout that keeps the states.)
        let slots = max_chunks(n as u64, t as u64) * ho as u64;
        let ws_s = slots * (d * d) as u64 * 2;
        let (nn, tt, hh, dd) = (n as u64, t as u64, ho as u64, d as u64);
        assert_eq!(
            with.layout,
            BwdWorkspaceLayout::with_states(nn, tt, hh, dd, dd, false)
        );
        let saved =
            BwdWorkspaceLayout::with_states(nn, tt, hh, dd, dd, true).total - with.layout.total;
        assert!(saved >= ws_s && saved < ws_s + 512, "{saved} vs {ws_s}");
        let piece_bytes = |p: &GdnBwdPlan<String>| p.pieces.total - p.layout.total;
        assert_eq!(piece_bytes(&without) - piece_bytes(&with), m_bytes);
        assert_eq!(with.layout.regions[5], with.layout.regions[4]);
    }
}

#[test]
fn seeded_checkpoints_replace_the_forward_chain() {
    let is_replay = |x: &String| REPLAY_KERNELS.iter().any(|r| x.starts_with(r));
    let is_seed = |x: &String| x.starts_with("gdn_bwd_fscanc") || x == "gdn_bwd_ckrows";
    let is_psum = |x: &String| x.starts_with("gdn_bwd_psum");
    // [`CKPT_SHAPES`]; cadences of 2, 4 and 3 chunks in the io dtype and fp32, and fp32 rows
    // every chunk.
    for (n, t, ho, d) in CKPT_SHAPES {
        let without = named_plan_form(
            &ckpt_facts((n, t, ho, d), 0, DataType::Bfloat16, 1),
            BwdPrepForm::Slim,
        );
        let wo: Vec<_> = planned(&without);
        for (c, dt) in [
            (128, DataType::Bfloat16),
            (256, DataType::Bfloat16),
            (192, DataType::Float),
            (64, DataType::Float),
        ] {
            let rows = checkpoint_rows(n as u64, t as u64, c as u64);
            let plan = named_plan(&ckpt_facts((n, t, ho, d), c, dt, rows as i64));
            assert_eq!(plan.checkpoints(), CheckpointUse::Seed, "c = {c} {dt:?}");
            let got = planned(&plan);
            let names: Vec<String> = got.iter().map(|l| l.0.clone()).collect();
            let what = format!("({n}, {t}, {ho}, {d}) c = {c} {dt:?}: {names:?}");
            // No forward chain, no replay from the initial state.
            assert!(!names.iter().any(is_replay), "{what}");
            // The rows' table above one chunk per row, then one replay block per (value
            // slice, head, row).
            let seeds: Vec<_> = got.iter().filter(|l| is_seed(&l.0)).cloned().collect();
            let replay = CkptReplay::pick("", d as u64);
            let kernel = replay.kernel.name("bf16", d, PrepVariant::DEFAULT);
            let fscanc = (kernel, ((d / 64) as u32, ho as u32, rows as u32));
            if c > 64 {
                assert_eq!(
                    seeds,
                    [("gdn_bwd_ckrows".to_owned(), (1, 1, 1)), fscanc],
                    "{what}"
                );
            } else {
                assert_eq!(seeds, [fscanc], "{what}");
            }
            let at = names.iter().position(is_seed).expect("seeded replay");
            assert!(
                got[at..at + seeds.len()].iter().all(|l| is_seed(&l.0)),
                "{what}"
            );
            // Every other launch is the recompute's, in order (the summaries: Mᵀ_j only).
            // (tc16 without checkpoints runs as tc13 with them: no storing replay; the split
            // producer, session 29, on grid (2, HO, N) as the one-block one on (1, HO, N).)
            let rest = |v: &[(String, (u32, u32, u32))], drop: &dyn Fn(&String) -> bool| {
                v.iter()
                    .filter(|l| !drop(&l.0) && !is_psum(&l.0))
                    .map(|l| {
                        let grid = if l.0.contains("_ov2gxsh_") {
                            (1, l.1.1, l.1.2)
                        } else {
                            l.1
                        };
                        let name =
                            full_form(&l.0).replace(&rule_u_consumer(), "gdn_bwd_tokens_tc13_ov_");
                        (name, grid)
                    })
                    .collect::<Vec<_>>()
            };
            assert!(!names.iter().any(|x| x.starts_with(&rule_u_consumer())));
            assert_eq!(rest(&got, &is_seed), rest(&wo, &is_replay), "{what}");
            let pieces = plan.schedule().pieces;
            let psum: Vec<_> = got.iter().filter(|l| is_psum(&l.0)).collect();
            if pieces > 1 {
                assert_eq!(psum.len(), 1, "{what}");
                assert!(psum[0].0.starts_with("gdn_bwd_psumt"), "{what}");
                assert_eq!(u64::from(psum[0].1.2), n as u64 * (pieces - 1), "{what}");
                // The seeded replay follows the summaries (the reverse chain's passes after).
                assert!(is_psum(&names[at - 1]), "{what}");
            } else {
                assert!(psum.is_empty(), "{what}");
            }
            // The states' region stays; the rows' table comes after the other regions.
            assert!(plan.layout.regions[5] > plan.layout.regions[4]);
            let table = plan.ckpt.total - plan.overlap.total;
            if c > 64 {
                assert!(table >= 4 * (n as u64 + 1) && table <= 4 * (n as u64 + 1) + 512);
            } else {
                assert_eq!(table, 0);
            }
            assert_eq!(
                (plan.ckpt.every, plan.ckpt.f32),
                (c as u64 / 64, dt == DataType::Float)
            );
        }
    }
    // The seeded replays ([`PICKS`]) each fit the blocks per SM they are meant for.
    assert!(SM90_BUDGET.holds(FSCANP1_MIN_BLOCKS, CKPT_REPLAYS[0].smem_bytes(128)));
    assert!(SM90_BUDGET.holds(2, CKPT_REPLAYS[1].smem_bytes(128)));
    let names = kernel_names("f16", 64, PrepVariant::DEFAULT);
    assert_eq!(names[BwdKernel::Fscanc1 as usize], "gdn_bwd_fscanc_f16_k64");
    assert_eq!(names[BwdKernel::PsumMt1 as usize], "gdn_bwd_psumt_f16_k64");
    let names = kernel_names("bf16", 128, PrepVariant::DEFAULT);
    assert_eq!(
        names[BwdKernel::Fscanc1 as usize],
        "gdn_bwd_fscanc1_bf16_k128"
    );
    assert_eq!(
        names[BwdKernel::PsumMt1 as usize],
        "gdn_bwd_psumt1_bf16_k128"
    );
    assert_eq!(names[BwdKernel::CkptRows as usize], "gdn_bwd_ckrows");
}

#[test]
fn scalar_prep_form_rule() {
    use BwdKernel::*;
    // The switch, and the rule's default.
    assert_eq!(BwdPrepForm::from_switch("scaled"), BwdPrepForm::Scalars);
    assert_eq!(BwdPrepForm::from_switch("full"), BwdPrepForm::Full);
    assert_eq!(BwdPrepForm::from_switch("slim"), BwdPrepForm::Slim);
    assert_eq!(BwdPrepForm::from_switch(""), BWD_PREP_FORM_BY_RULE);
    assert_eq!(BwdPrepForm::from_switch("other"), BWD_PREP_FORM_BY_RULE);
    // Only K = V = 128, prep v15, uncut, the gx / gx4 replay, the dscan_ov2gx producer.
    let sc = BwdPrepForm::Scalars;
    let v15 = PrepVariant::V15;
    assert!(sc.scalar_form(128, 128, v15, 1, Some(FscanGx), DscanOv2Gx));
    assert!(sc.scalar_form(128, 128, v15, 1, Some(FscanGx4), DscanOv2Gx));
    assert!(sc.scalar_form(128, 128, v15, 1, Some(FscanGxU), DscanOv2Gx));
    assert!(sc.scalar_form(128, 128, v15, 1, Some(FscanGx4U), DscanOv2Gx));
    assert!(!BwdPrepForm::Full.scalar_form(128, 128, v15, 1, Some(FscanGx), DscanOv2Gx));
    // The slim form runs the scalar form's swaps (then slim_swap's), where it does.
    let sl = BwdPrepForm::Slim;
    assert!(sl.scalar_form(128, 128, v15, 1, Some(FscanGx4U), DscanOv2Gx));
    assert!(!sl.scalar_form(128, 128, v15, 8, Some(FscanGx4U), DscanOv2Gx));
    assert!(!sc.scalar_form(64, 64, v15, 1, Some(FscanGx), DscanOv2Gx));
    assert!(!sc.scalar_form(128, 64, v15, 1, Some(FscanGx), DscanOv2Gx));
    assert!(!sc.scalar_form(128, 128, PrepVariant::V14, 1, Some(FscanGx), DscanOv2Gx));
    assert!(!sc.scalar_form(128, 128, v15, 8, Some(FscanGx), DscanOv2Gx));
    assert!(!sc.scalar_form(128, 128, v15, 1, None, DscanOv2Gx));
    assert!(!sc.scalar_form(128, 128, v15, 1, Some(FscanGx3), DscanOv2Gx));
    assert!(!sc.scalar_form(128, 128, v15, 1, Some(FscanR4), DscanOv2Gx));
    assert!(!sc.scalar_form(128, 128, v15, 1, Some(FscanGx), DscanOv5Dr));
    // The replaced kernels and their names (K = 128 bundled; other K name the full form's).
    let replaced: Vec<_> = BwdKernel::ALL
        .iter()
        .filter_map(|k| k.scalar_form().map(|s| (*k, s)))
        .collect();
    assert_eq!(
        replaced,
        [
            (Prep, PrepSc),
            (FscanGx, FscanGxSc),
            (FscanGx4, FscanGx4Sc),
            (DscanOv2Gx, DscanOv2GxSc),
            (FscanGxU, FscanGxScU),
            (FscanGx4U, FscanGx4ScU)
        ]
    );
    let names = kernel_names("bf16", 128, PrepVariant::DEFAULT);
    assert_eq!(names[PrepSc as usize], "gdn_bwd_prep15sc_bf16_k128");
    assert_eq!(names[FscanGxSc as usize], "gdn_bwd_fscan_gxsc_bf16_k128");
    assert_eq!(names[FscanGx4Sc as usize], "gdn_bwd_fscan_gx4sc_bf16_k128");
    assert_eq!(
        names[DscanOv2GxSc as usize],
        "gdn_bwd_dscan_ov2gxsc_bf16_k128"
    );
    assert_eq!(names[FscanGxScU as usize], "gdn_bwd_fscan_gxscu_bf16_k128");
    assert_eq!(
        names[FscanGx4ScU as usize],
        "gdn_bwd_fscan_gx4scu_bf16_k128"
    );
    // The slim form's replays (session 28).
    let slim: Vec<_> = BwdKernel::ALL
        .iter()
        .filter_map(|k| k.slim_form().map(|s| (*k, s)))
        .collect();
    assert_eq!(
        slim,
        [
            (PrepSc, PrepSl),
            (FscanGxScU, FscanGxSl),
            (FscanGx4ScU, FscanGx4Sl)
        ]
    );
    assert_eq!(names[PrepSl as usize], "gdn_bwd_prep15sl_bf16_k128");
    assert_eq!(names[FscanGxSl as usize], "gdn_bwd_fscan_gxsl_bf16_k128");
    assert_eq!(names[FscanGx4Sl as usize], "gdn_bwd_fscan_gx4sl_bf16_k128");
    let names = kernel_names("f16", 64, PrepVariant::DEFAULT);
    assert_eq!(names[FscanGx4Sl as usize], "gdn_bwd_fscan_r4_f16_k64");
    assert_eq!(names[PrepSl as usize], names[Prep as usize]);
    assert_eq!(names[PrepSc as usize], names[Prep as usize]);
    assert_eq!(names[FscanGxSc as usize], "gdn_bwd_fscan_r4_f16_k64");
    assert_eq!(names[DscanOv2GxSc as usize], "gdn_bwd_dscan_ov5dr_f16_k64");
    // The scalar form's producer takes its own shared memory and dscan_ov2gx's threads.
    assert_eq!(
        overlap_scan_launch(DscanOv2GxSc, 128, 128),
        (256, dscan_ov2gxsc_smem_bytes(128, 128))
    );
    assert_eq!(
        overlap_scan_launch(DscanOv2GxSc, 64, 64),
        overlap_scan_launch(DscanOv5Dr, 64, 64)
    );
    // The piece chain's reverse half in the scalar form (session 29): K = 128 bundled, other
    // K name the full form's kernels; the seeded pass takes the scalar producer's shape.
    assert_eq!(names[DsumSc as usize], "gdn_bwd_dsum_f16_k64");
    assert_eq!(
        names[DscanpOv2GxSc as usize],
        "gdn_bwd_dscanp_ov5dr_f16_k64"
    );
    let names = kernel_names("bf16", 128, PrepVariant::DEFAULT);
    assert_eq!(names[DsumSc as usize], "gdn_bwd_dsum_sc_bf16_k128");
    assert_eq!(
        names[DscanpOv2GxSc as usize],
        "gdn_bwd_dscanp_ov2gxsc_bf16_k128"
    );
    assert_eq!(
        overlap_scan_launch(DscanpOv2GxSc, 128, 128),
        overlap_scan_launch(DscanOv2GxSc, 128, 128)
    );
    assert_eq!(
        overlap_scan_launch(DscanpOv2GxSc, 64, 64),
        overlap_scan_launch(DscanpOv5Dr, 64, 64)
    );
    assert_eq!(dsum_sc_smem_bytes(128, 128), 135_168);
}

/// The slim form's swap (session 28) on the benchmark shapes' plans by rule: exactly the plans
/// running the scalar form's storing replay (uncut, K = 128, tc16) take the slim one, on the
/// same grid and threads, at its stages' shared memory or the one-block-per-SM floor.
#[test]
fn slim_swap_replaces_the_storing_scalar_replay() {
    if std::env::var_os("DNNPLAN_GDN_BWD_PREP").is_some() {
        return;
    }
    for (n, t, ho, d) in CKPT_SHAPES {
        let f = super::super::engine::tests::bound(facts(n, t, ho, d, false));
        let plan = named_plan(&f);
        // The plan in the scalar form (the rule's slim kernels named back, session 28's flip;
        // prep16sl as prep15sl, session 29), the prep's launch as the scalar form's (its own
        // shared memory: prep15sc's).
        let unswapped = |k: BwdKernel| {
            if matches!(
                k,
                BwdKernel::PrepSl16 | BwdKernel::PrepSl16c | BwdKernel::PrepSl16l
            ) {
                BwdKernel::PrepSl
            } else {
                k
            }
        };
        let scalar_steps: Vec<Step> = plan
            .steps
            .iter()
            .map(|s| {
                match BwdKernel::ALL
                    .iter()
                    .find(|k| k.slim_form() == Some(unswapped(s.0)))
                {
                    Some(&k) if k == BwdKernel::PrepSc => {
                        let (grid, threads, smem) = PrepVariant::V15.row().pass.launch_shape(
                            u64::from(s.1.0),
                            u64::from(s.1.1),
                            128,
                            132,
                            None,
                        );
                        (k, grid, threads, smem)
                    }
                    Some(&k) => (k, s.1, s.2, s.3),
                    None => *s,
                }
            })
            .collect();
        let plan = GdnBwdPlan {
            steps: scalar_steps,
            ..plan
        };
        let mut steps = plan.steps.clone();
        let storing: Vec<_> = steps
            .iter()
            .filter(|s| s.0.slim_form().is_some())
            .copied()
            .collect();
        // The prep and the storing replay.
        assert_eq!(
            storing.len(),
            2 * usize::from(plan.scalar_form()),
            "{n} {t} {ho} {d}"
        );
        let one_per_sm = |x: u32| x.max(REPLAY_ONE_PER_SM_SMEM);
        assert_eq!(slim_swap(&mut steps, true, 132), plan.scalar_form());
        for (a, b) in plan.steps.iter().zip(&steps) {
            if !plan.scalar_form() || a.0.slim_form().is_none() {
                assert_eq!(a, b);
                continue;
            }
            assert_eq!((Some(b.0), b.1, b.2), (a.0.slim_form(), a.1, a.2));
            let smem = match b.0 {
                BwdKernel::PrepSl => 36_352,
                BwdKernel::FscanGxSl => one_per_sm(fscan_gxsl_smem_bytes(2)),
                _ => one_per_sm(fscan_gxsl_smem_bytes(4)),
            };
            assert_eq!(b.3, smem);
        }
        // Without the storing replay (tc13's scalar form) nothing is swapped.
        let mut tc13: Vec<Step> = plan.steps.clone();
        tc13.retain(|s| !matches!(s.0, BwdKernel::FscanGxScU | BwdKernel::FscanGx4ScU));
        let before = tc13.clone();
        assert!(!slim_swap(&mut tc13, true, 132));
        assert_eq!(tc13, before);
    }
}

/// The prep form the benchmark shapes' plans run by rule (without DNNPLAN_GDN_BWD_PREP):
/// the slim form (session 28) uncut at K = 128, since session 29 also on the piece chain
/// ((1, 32768, 16): prep15sl, psum_sl, fscan_gxsl, dsum_sc, dscanp_ov2gxsc), the full form at
/// K = 64.
#[test]
fn default_plans_run_the_scalar_form_where_it_applies() {
    if std::env::var_os("DNNPLAN_GDN_BWD_PREP").is_some() {
        return;
    }
    for (n, t, ho, d) in CKPT_SHAPES {
        let f = super::super::engine::tests::bound(facts(n, t, ho, d, false));
        let plan = named_plan(&f);
        let names: Vec<String> = plan.launches().map(|l| l.0.clone()).collect();
        let pieces = plan.schedule().pieces > 1;
        let scalar = d == 128 && (!pieces || BWD_PREP_FORM_BY_RULE.on_pieces());
        // The scalar form's uncut producer split (session 29) from DSCAN_SPLIT_MIN_WAVES waves
        // of units where DSCAN_SPLIT_BY_RULE holds: dscan_ov2gxsh instead of dscan_ov2gxsc.
        let split = !pieces && dscan_split_by_rule((n * ho) as u64, 132);
        assert_eq!(plan.scalar_form(), scalar, "{names:?}");
        // Since session 28 the slim form (BWD_PREP_FORM_BY_RULE): prep15sl, the slim replay,
        // the scalar form's producer; no prep15sc, no gx{,4}scu.
        assert_eq!(plan.slim_form(), scalar, "{names:?}");
        let slim = |x: &String| {
            x.contains("prep15sl_")
                || x.contains("sl_bf16")
                || x.contains("slc_bf16")
                || x.contains("sll_bf16")
        };
        // Uncut: prep15sl, fscan_gx{,4}sl, dscan_ov2gxsc (or the split dscan_ov2gxsh); the
        // piece chain: prep15sl, psum_sl, fscan_gxsl, dsum_sc, dscanp_ov2gxsc.
        let (n_sl, n_sc) = match (scalar, pieces) {
            (false, _) => (0, 0),
            (true, false) => (2, 1),
            (true, true) => (3, 2),
        };
        assert_eq!(names.iter().filter(|x| slim(x)).count(), n_sl, "{names:?}");
        assert_eq!(
            names.iter().filter(|x| x.contains("sc_")).count(),
            n_sc - usize::from(scalar && split),
            "{names:?}"
        );
        let producer = match (pieces, split) {
            (true, _) => "gdn_bwd_dscanp_ov2gxsc_",
            (false, true) => "gdn_bwd_dscan_ov2gxsh_",
            (false, false) => "gdn_bwd_dscan_ov2gxsc_",
        };
        assert_eq!(
            names.iter().any(|x| x.starts_with(producer)),
            scalar,
            "{names:?}"
        );
        assert!(!names.iter().any(|x| x.contains("scu_")), "{names:?}");
        // The slim prep (session 29): the rule's form's kernel (BwdSlimPrep::by_rule: prep16sl,
        // session 32 on its trimmed tile prep16slc, session 35 as prep16sll at this sequence
        // count) and no other slim prep, uncut and on the piece chain.
        if std::env::var_os("DNNPLAN_GDN_BWD_SLIMPREP").is_none() {
            let rule = BwdSlimPrep::by_rule(n);
            for (stem, form) in [
                ("gdn_bwd_prep16sl_", BwdSlimPrep::V16),
                ("gdn_bwd_prep16slc_", BwdSlimPrep::V16c),
                ("gdn_bwd_prep16sll_", BwdSlimPrep::V16l),
                ("gdn_bwd_prep15sl_", BwdSlimPrep::V15),
            ] {
                let runs = scalar && form == rule;
                assert_eq!(names.iter().any(|x| x.starts_with(stem)), runs, "{names:?}");
            }
        }
    }
}

/// A [`FormContext`] for the plan tests' view of one row ([`FormRule::apply`] on built steps):
/// `form` on `pieces` pieces at K = `k`, V = `v` with the factor kernel `prep` on `sms` SMs, the
/// knobs on, one uncut replay block per SM where `replay_one_per_sm` says so.
fn test_context(
    form: BwdPrepForm,
    pieces: u64,
    (k, v, prep, sms): (u64, u64, PrepVariant, u64),
    replay_one_per_sm: bool,
) -> FormContext {
    FormContext {
        form,
        pieces,
        k,
        v,
        prep,
        sms,
        split: true,
        slim_prep: BwdSlimPrep::V16c,
        replay_one_per_sm,
    }
}

/// The `slimp` row ([`SLIM_PIECES`]) on built steps `steps` at `k` = `v` = 128 with the v15
/// prep (`prep`): returns whether it applied.
fn piece_slim_swap(steps: &mut [Step], k: u64, v: u64, prep: PrepVariant, sms: u64) -> bool {
    let ctx = test_context(BwdPrepForm::SlimPieces, 2, (k, v, prep, sms), false);
    FORM_RULES[SLIM_PIECES].apply(steps, &ctx)
}

/// The `slim` row ([`SLIM`]) on built scalar-form steps `steps`, one uncut replay block per SM
/// where `replay_one_per_sm` says so.
fn slim_swap(steps: &mut [Step], replay_one_per_sm: bool, sms: u64) -> bool {
    let ctx = test_context(
        BwdPrepForm::Slim,
        1,
        (128, 128, PrepVariant::V15, sms),
        replay_one_per_sm,
    );
    FORM_RULES[SLIM].apply(steps, &ctx)
}

/// The slim prep's row `row` of [`FORM_RULES`] ([`PREP16`], [`PREP16C`] or [`PREP16L`]) on
/// built slim-form steps `steps`, with the plan's slim prep form at `v16c`, or at `v16l` for the
/// `prep16l` row (a row applies only up to the plan's form).
fn slim_prep_swap(row: usize, steps: &mut [Step], sms: u64) -> bool {
    let mut ctx = test_context(
        BwdPrepForm::Slim,
        1,
        (128, 128, PrepVariant::V15, sms),
        false,
    );
    if row == PREP16L {
        ctx.slim_prep = BwdSlimPrep::V16l;
    }
    FORM_RULES[row].apply(steps, &ctx)
}

/// The `split` row ([`SPLIT`]) on built uncut steps `steps`.
fn split_swap(steps: &mut [Step]) -> bool {
    let ctx = test_context(
        BwdPrepForm::Scalars,
        1,
        (128, 128, PrepVariant::V15, 132),
        false,
    );
    FORM_RULES[SPLIT].apply(steps, &ctx)
}

/// `after` is `before` with every step of kernel `from` replaced by `to` of it, and every other
/// step as it was.
fn assert_swapped_only(
    before: &[Step],
    after: &[Step],
    from: BwdKernel,
    to: impl Fn(&Step) -> Step,
) {
    assert_eq!(before.len(), after.len(), "a swap keeps the step count");
    for (a, b) in before.iter().zip(after) {
        if a.0 == from {
            assert_eq!(*b, to(a), "{a:?} swapped");
        } else {
            assert_eq!(a, b, "only {from:?} is swapped");
        }
    }
}

/// Session 29 (helper bp29): `DNNPLAN_GDN_BWD_SLIMPREP`'s values, and `slim_prep_swap` on the
/// benchmark shapes' plans: exactly the slim form's prep `prep15sl` becomes `prep16sl` on the
/// same grid, threads and shared memory (36,352 B); nothing else changes; plans without the
/// slim form (the piece chain, K = 64) are left alone.
#[test]
fn slim_prep16_switch_and_swap() {
    // Each value forces its form, whatever the sequence count; anything else is the rule.
    let (lo, hi) = SLIM_PREP_LOCATE_WARP_SEQS;
    for n in [1, lo - 1, lo, hi, hi + 1] {
        for (name, form) in BwdSlimPrep::NAMED {
            assert_eq!(BwdSlimPrep::from_switch(Some(name), n), form, "{name}");
        }
        for value in [None, Some("x")] {
            assert_eq!(BwdSlimPrep::from_switch(value, n), BwdSlimPrep::by_rule(n));
        }
        // Session 35 (pr35): v16l by rule only within the forward's wgl range, else v16c.
        let want = if (lo..=hi).contains(&n) {
            BwdSlimPrep::V16l
        } else {
            BwdSlimPrep::V16c
        };
        assert_eq!(BwdSlimPrep::by_rule(n), want, "{n}");
    }
    // The forms in order (FormKnob::SlimPrep compares them), each with its kernel.
    let forms = BwdSlimPrep::NAMED.map(|(_, f)| f);
    assert!(forms.windows(2).all(|w| w[0] < w[1]));
    assert_eq!(
        forms.map(BwdSlimPrep::kernel),
        [
            BwdKernel::PrepSl,
            BwdKernel::PrepSl16,
            BwdKernel::PrepSl16c,
            BwdKernel::PrepSl16l
        ]
    );
    assert_eq!(
        BwdKernel::PrepSl16l.name("f16", 64, PrepVariant::DEFAULT),
        BwdKernel::Prep.name("f16", 64, PrepVariant::DEFAULT)
    );
    assert_eq!(
        BwdKernel::PrepSl16c.name("f16", 64, PrepVariant::DEFAULT),
        BwdKernel::Prep.name("f16", 64, PrepVariant::DEFAULT)
    );
    assert_eq!(
        BwdKernel::PrepSl16.name("f16", 64, PrepVariant::DEFAULT),
        BwdKernel::Prep.name("f16", 64, PrepVariant::DEFAULT)
    );
    if std::env::var_os("DNNPLAN_GDN_BWD_PREP").is_some() {
        return;
    }
    for (n, t, ho, d) in CKPT_SHAPES {
        let f = super::super::engine::tests::bound(facts(n, t, ho, d, false));
        let plan = named_plan(&f);
        // The plan with prep15sl (prep16sl / prep16slc named back where the rule or switch
        // ran it).
        let v15: Vec<Step> = plan
            .steps
            .iter()
            .map(|s| {
                if matches!(
                    s.0,
                    BwdKernel::PrepSl16 | BwdKernel::PrepSl16c | BwdKernel::PrepSl16l
                ) {
                    (BwdKernel::PrepSl, s.1, s.2, 36_352)
                } else {
                    *s
                }
            })
            .collect();
        let mut steps = v15.clone();
        assert_eq!(
            slim_prep_swap(PREP16, &mut steps, 132),
            plan.slim_form(),
            "{n} {t} {ho} {d}"
        );
        assert_swapped_only(&v15, &steps, BwdKernel::PrepSl, |a| {
            assert_eq!((a.2, a.3), (256, 36_352));
            (BwdKernel::PrepSl16, a.1, a.2, a.3)
        });
        // Session 32 (pp32): then the prep16c row, prep16sl to prep16slc on the same grid and
        // threads at 54,784 B; nothing else changes.
        let v16 = steps.clone();
        assert_eq!(
            slim_prep_swap(PREP16C, &mut steps, 132),
            plan.slim_form(),
            "{n} {t} {ho} {d}"
        );
        assert_swapped_only(&v16, &steps, BwdKernel::PrepSl16, |a| {
            (BwdKernel::PrepSl16c, a.1, a.2, 54_784)
        });
        // Session 35 (pr35): then the prep16l row, prep16slc to prep16sll, the same launch.
        let v16c = steps.clone();
        assert_eq!(
            slim_prep_swap(PREP16L, &mut steps, 132),
            plan.slim_form(),
            "{n} {t} {ho} {d}"
        );
        assert_swapped_only(&v16c, &steps, BwdKernel::PrepSl16c, |a| {
            (BwdKernel::PrepSl16l, a.1, a.2, a.3)
        });
    }
}

/// Session 29: the split reverse scan's rule (by waves of (sequence, head) units), and its swap
/// in whole plans at (16, 2048, 32) (512 units: 3.9 waves on 132 SMs), (4, 8192, 16) (64) and the
/// ragged mix (160): the producer `dscan_ov2gxsc` (1, HO, N) × 256 threads becomes
/// `dscan_ov2gxsh` (2, HO, N) × 128 on 110,592 B (two per SM), nothing else changes, and the
/// consumers then wait for 2 (`ov_need`); the piece chain (1, 32768, 16) has no such producer.
#[test]
fn split_reverse_scan_rule_and_swap() {
    for (units, split) in [
        (512, true),
        (264, true),
        (263, false),
        (160, false),
        (64, false),
    ] {
        assert_eq!(units >= DSCAN_SPLIT_MIN_WAVES * 132, split, "{units} units");
        assert_eq!(
            dscan_split_by_rule(units, 132),
            DSCAN_SPLIT_BY_RULE && split,
            "{units} units"
        );
    }
    if [
        "DNNPLAN_GDN_BWD_DSCAN_SPLIT",
        "DNNPLAN_GDN_BWD_PREP",
        "DNNPLAN_GDN_BWD_DSCAN",
    ]
    .iter()
    .any(|v| std::env::var_os(v).is_some())
    {
        return;
    }
    for (n, t, ho) in [
        (16, 32768, 32),
        (4, 32768, 16),
        (10, 29949, 16),
        (1, 32768, 16),
    ] {
        let f = ckpt_facts((n, t, ho, 128), 0, DataType::Bfloat16, 1);
        let plan = named_plan(&f);
        let units = (n * ho) as u64;
        let by_rule = dscan_split_by_rule(units, 132);
        let uncut = plan.schedule().pieces <= 1;
        // The plan's producer by rule; with the swap undone, the one-block scan's launch.
        let mut one = plan.steps.clone();
        for step in one.iter_mut() {
            if step.0 == BwdKernel::DscanOv2GxSh {
                *step = (
                    BwdKernel::DscanOv2GxSc,
                    (1, step.1.1, step.1.2),
                    256,
                    dscan_ov2gxsc_smem_bytes(128, 128),
                );
            }
        }
        assert_eq!(ov_need(&plan.steps), if by_rule && uncut { 2 } else { 0 });
        let producer = (ho as u32, n as u32);
        let sc: Vec<&Step> = one
            .iter()
            .filter(|s| s.0 == BwdKernel::DscanOv2GxSc)
            .collect();
        if !uncut {
            assert!(sc.is_empty(), "{:?}", plan.steps);
            assert!(!split_swap(&mut one), "{:?}", plan.steps);
            continue;
        }
        assert_eq!(
            sc,
            [&(
                BwdKernel::DscanOv2GxSc,
                (1, producer.0, producer.1),
                256,
                169_984
            )]
        );
        let mut two = one.clone();
        assert!(split_swap(&mut two));
        assert_eq!(ov_need(&two), 2);
        assert_eq!(ov_need(&one), 0);
        assert_eq!(one.len(), two.len());
        assert_swapped_only(&one, &two, BwdKernel::DscanOv2GxSc, |a| {
            assert!(!SM90_BUDGET.holds(2, a.3), "one producer per SM before");
            let split = (
                BwdKernel::DscanOv2GxSh,
                (2, producer.0, producer.1),
                128,
                110_592,
            );
            assert!(SM90_BUDGET.holds(2, split.3), "two per SM after");
            split
        });
        // The plan by rule is one of the two; the consumer follows the producer.
        assert_eq!(plan.steps, if by_rule { two.clone() } else { one });
        let at = two
            .iter()
            .position(|s| s.0 == BwdKernel::DscanOv2GxSh)
            .expect("the producer");
        assert_eq!(two[at + 1].0, BwdKernel::TokensTw7Ov);
    }
}

/// One launch by name: (entry, grid, threads, shared memory).
type NamedLaunch = (String, (u32, u32, u32), u32, u32);

/// The launches of `f`'s plan under `form` (bf16).
fn form_launches(f: &GdnFacts, form: BwdPrepForm) -> Vec<NamedLaunch> {
    let names = kernel_names("bf16", f.k, PrepVariant::DEFAULT).to_vec();
    GdnBwdPlan::with_form(f, names, 132, form)
        .expect("plan")
        .launches()
        .map(|l| (l.0.clone(), l.1, l.2, l.3))
        .collect()
}

#[test]
fn slim_pieces_run_the_piece_chain_on_the_slim_form() {
    // Session 29 (ps29 + pr29): DNNPLAN_GDN_BWD_PREP=slimp at (1, 32768, 16), the 8-piece
    // chain: every pass on the slim / scalar form (nothing reads W, Ũᵀ, Q⁺, Kᴿ, E), tc16 with
    // the seeded slim replay storing U; the launches, grids, threads and shared memory.
    if std::env::var_os("DNNPLAN_GDN_BWD_PIECES").is_some()
        || std::env::var_os("DNNPLAN_GDN_BWD_PIECE_PASSES").is_some()
    {
        return;
    }
    use BwdKernel::*;
    let f = super::super::engine::tests::bound(facts(1, 32768, 16, 128, false));
    assert_eq!(BwdSchedule::default_for(&f, 132).pieces, 8);
    let slimp = form_launches(&f, BwdPrepForm::SlimPieces);
    let slim = form_launches(&f, BwdPrepForm::Slim);
    let name = |k: BwdKernel| k.name("bf16", 128, PrepVariant::DEFAULT);
    // The slim prep: the form's kernel (session 29, bp29; session 32, pp32; session 35, pr35).
    let prep_kernel = BwdSlimPrep::from_env(f.n_seqs).kernel();
    let prep_row = prep_kernel.slim_prep_pass().expect("a slim prep");
    let prep = prep_row.launch_shape(u64::from(slim[1].1.0), 16, 128, 132, None);
    let want = [
        (name(ChunkOrderRev), slim[0].1, slim[0].2, slim[0].3),
        (name(prep_kernel), prep.0, prep.1, prep.2),
        (name(PsumSl), (2, 16, 15), 128, 69_632),
        (name(Pchain3), slim[3].1, slim[3].2, slim[3].3),
        (name(FscanGxSl), (2, 16, 8), 128, 69_632),
        (name(DsumSc), (1, 16, 7), 256, 135_168),
        (name(Dchain3), slim[6].1, slim[6].2, slim[6].3),
        (name(DscanpOv2GxSc), (1, 16, 8), 256, 169_984),
        (
            name(TokensTw7Ov),
            slim[8].1,
            slim[8].2,
            tokens_tw1_tile_smem_bytes(128),
        ),
    ];
    assert_eq!(slimp[..9], want);
    // The launches after the token stage (the parameter gradients) as the slim form's.
    assert_eq!(slimp[9..], slim[9..]);
    // Session 28's slim form keeps the full-form chain with tc13 (the witness).
    let full: Vec<String> = [
        ChunkOrderRev,
        Prep,
        Psum1,
        Pchain3,
        FscanGx,
        Dsum1,
        Dchain3,
        DscanpOv5Dr,
        TokensTc13Ov,
    ]
    .map(name)
    .to_vec();
    assert_eq!(
        slim[..9].iter().map(|l| l.0.clone()).collect::<Vec<_>>(),
        full
    );
    for (a, b) in slimp.iter().zip(&slim) {
        // The forward chain, the reverse chain and the token stage's grids are the same.
        if matches!(a.0.as_str(), x if x.contains("chain") || x.contains("tokens")) {
            assert_eq!((a.1, a.2), (b.1, b.2), "{a:?} {b:?}");
        }
    }
    // Every left kernel of PIECE_SLIM_SWAPS is in the full-form chain with tc16, so the swap
    // is all or nothing; the summaries' transitions-only pair (PsumMt1 -> PsumMtSl) runs only
    // under the saved replay (the_saved_replay_leaves_out_the_prep_and_the_replay).
    for (from, to) in PIECE_SLIM_SWAPS {
        assert_eq!(from.piece_slim_form(), Some(to));
        if from == PsumMt1 {
            continue;
        }
        // prep15sl runs as the slim prep form's kernel (the prep16 rows after it).
        let runs = if to == PrepSl { prep_kernel } else { to };
        assert!(slimp.iter().any(|l| l.0 == name(runs)), "{to:?}");
    }
    // The uncut shapes and K = 64: slimp plans exactly as slim.
    for (n, t, ho, d) in [
        (4, 32768, 16, 128),
        (16, 32768, 32, 128),
        (10, 29949, 16, 128),
        (1, 4096, 4, 64),
        (3, 300, 2, 64),
    ] {
        let f = super::super::engine::tests::bound(facts(n, t, ho, d, false));
        assert_eq!(
            form_launches(&f, BwdPrepForm::SlimPieces),
            form_launches(&f, BwdPrepForm::Slim),
            "{:?}",
            (n, t, ho, d)
        );
    }
    // The piece swap's preconditions: K = 64, another prep, a chain without the storing
    // seeded replay or the p1 passes: no swap.
    let mut steps: Vec<Step> = slim
        .iter()
        .map(|l| {
            let k = *BwdKernel::ALL
                .iter()
                .find(|k| name(**k) == l.0)
                .expect("a kernel");
            (k, l.1, l.2, l.3)
        })
        .collect();
    let v15 = PrepVariant::V15;
    assert!(
        !piece_slim_swap(&mut steps.clone(), 128, 128, v15, 132),
        "no storing replay"
    );
    let gxu = steps
        .iter()
        .position(|s| s.0 == FscanGx)
        .expect("the piece replay");
    steps[gxu].0 = FscanGxU;
    assert!(!piece_slim_swap(&mut steps.clone(), 64, 64, v15, 132));
    assert!(!piece_slim_swap(
        &mut steps.clone(),
        128,
        128,
        PrepVariant::V14,
        132
    ));
    let mut s2 = steps.clone();
    s2.retain(|s| s.0 != Dsum1);
    assert!(!piece_slim_swap(&mut s2, 128, 128, v15, 132), "no dsum1");
    assert!(piece_slim_swap(&mut steps, 128, 128, v15, 132));
    assert!(steps.iter().all(|s| s.0.piece_slim_form().is_none()));
}

/// The entry names of the kernels whose name depends on K (a fallback at K other than 128) or
/// that a test names literally: one row per (kernel, dtype tag, K, entry).
#[test]
fn entry_names_by_dtype_and_k() {
    use BwdKernel::*;
    for (kernel, tag, k, entry) in [
        (
            TokensTc11Ov,
            "bf16",
            128,
            "gdn_bwd_tokens_tc11_ov_bf16_k128",
        ),
        (TokensTc12Ov, "f16", 64, "gdn_bwd_tokens_tc12_ov_f16_k64"),
        (
            TokensTc13Ov,
            "bf16",
            128,
            "gdn_bwd_tokens_tc13_ov_bf16_k128",
        ),
        (DscanpOv5Dr, "f16", 64, "gdn_bwd_dscanp_ov5dr_f16_k64"),
        (DscanOv2Gx, "bf16", 128, "gdn_bwd_dscan_ov2gx_bf16_k128"),
        (DscanOv2Gx, "f16", 64, "gdn_bwd_dscan_ov5dr_f16_k64"),
        (DscanpOv2Gx, "f16", 128, "gdn_bwd_dscanp_ov2gx_f16_k128"),
        (DscanpOv2Gx, "bf16", 64, "gdn_bwd_dscanp_ov5dr_bf16_k64"),
        (DscanpOv2, "f16", 64, "gdn_bwd_dscanp_ov2_f16_k64"),
        (DscanpOv5, "bf16", 128, "gdn_bwd_dscanp_ov5_bf16_k128"),
        (PrepSl16, "bf16", 128, "gdn_bwd_prep16sl_bf16_k128"),
        (PrepSl16c, "f16", 128, "gdn_bwd_prep16slc_f16_k128"),
        (PrepSl16l, "bf16", 128, "gdn_bwd_prep16sll_bf16_k128"),
        (DscanOv2GxSh, "bf16", 128, "gdn_bwd_dscan_ov2gxsh_bf16_k128"),
        (DscanOv2GxSh, "f16", 64, "gdn_bwd_dscan_ov5dr_f16_k64"),
        (DsumSc, "bf16", 128, "gdn_bwd_dsum_sc_bf16_k128"),
        (DsumSc, "f16", 64, "gdn_bwd_dsum_f16_k64"),
        (DscanpOv2GxSc, "f16", 128, "gdn_bwd_dscanp_ov2gxsc_f16_k128"),
        (DscanpOv2GxSc, "bf16", 64, "gdn_bwd_dscanp_ov5dr_bf16_k64"),
        (PsumSl, "bf16", 128, "gdn_bwd_psum_sl_bf16_k128"),
        (PsumSl, "f16", 64, "gdn_bwd_psum_f16_k64"),
    ] {
        assert_eq!(
            kernel.name(tag, k, PrepVariant::DEFAULT),
            entry,
            "{kernel:?}"
        );
    }
}
