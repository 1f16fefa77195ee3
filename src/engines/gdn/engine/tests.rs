//! Unit tests of the `gdn_sm90` engine (`super`): the forward's kernel selection by rule and switch, launch geometry and shared memory per shape.

use super::*;
use crate::engines::gdn::occupancy::SM90_BUDGET;
use crate::engines::gdn::params::prep7_smem_bytes;

/// The uncut slim scan's suffix by rule at `warps` warps ([`SLIM_SCAN_WGMMA_BY_RULE`]).
fn rule_slim_suffix(warps: u64) -> &'static str {
    match (SLIM_SCAN_WGMMA_BY_RULE, warps) {
        (WgmmaDepth::Step, 4) => "w4gx",
        (WgmmaDepth::StepSplit | WgmmaDepth::StepSplitAll, 4) => "w4gxs",
        (WgmmaDepth::StepTmaO, 4) => "w4gxt",
        (WgmmaDepth::StepTmaIo, 4) => "w4gxu",
        (WgmmaDepth::StepTmaOFirst, 4) => "w4gxv",
        (WgmmaDepth::StepSplitAll, _) => "w8gxs",
        (WgmmaDepth::Step | WgmmaDepth::StepSplit, _) => "w8gx",
        (WgmmaDepth::Products, 4) => "w4gs",
        (_, 4) => "w4",
        _ => "w8",
    }
}

/// The piece path's seeded scan and summary suffixes by rule ([`SLIM_PIECE_WGMMA_BY_RULE`]).
fn rule_piece_suffixes() -> (&'static str, &'static str) {
    match SLIM_PIECE_WGMMA_BY_RULE {
        WgmmaDepth::Step
        | WgmmaDepth::StepSplit
        | WgmmaDepth::StepSplitAll
        | WgmmaDepth::StepTmaO
        | WgmmaDepth::StepTmaIo
        | WgmmaDepth::StepTmaOFirst => ("w4dgx", "_gx"),
        WgmmaDepth::Products => ("w4dgs", "_gs"),
        WgmmaDepth::Off => ("w4d", ""),
    }
}

fn facts(n: i64, t: i64, ho: i64, d: i64, batch_invariant: bool) -> GdnFacts {
    crate::engines::gdn::analyzer::test_facts(GdnOp::Forward, n, t, ho, d, batch_invariant)
}

#[test]
fn forward_overlap_only_when_asked_and_its_bundled_entries() {
    let overlap = |n, t, ho, d, bi| FwdChoice::default_for(&facts(n, t, ho, d, bi), 132);
    // (4, 8192, 16): uncut slim, 128 w4 blocks in one wave: the overlap's best shape, not
    // overlapped by rule since session 19 (fwd_overlap::FWD_OVERLAP_RULE).
    let mut c = overlap(4, 32768, 16, 128, false);
    assert!(!c.overlap && c.scan_warps() == 4);
    assert!(!overlap(4, 32768, 16, 128, true).overlap);
    // (16, 2048, 32) (w8, 512 pairs), the ragged mix (320 w4 blocks), (1, 32768, 16) (the
    // piece path), K = 64 (full factors): not either.
    for (n, t, ho, d) in [
        (16, 32768, 32, 128),
        (10, 29949, 16, 128),
        (1, 32768, 16, 128),
        (4, 32768, 16, 64),
    ] {
        assert!(!overlap(n, t, ho, d, false).overlap, "{n} {t} {ho} {d}");
    }
    // (1, 32768, 16) uncut under batch_invariant: 32 blocks, a quarter wave -> not.
    assert!(!overlap(1, 32768, 16, 128, true).overlap);
    // The overlapped entries (DNNPLAN_GDN_FWD_OVERLAP=1) are bundled, named by the choice.
    c.overlap = true;
    let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
    assert_eq!(c.offsets_name(), "gdn_fwd_chunk_order");
    assert!(fwd.has_function(c.offsets_name()));
    for tag in ["bf16", "f16"] {
        let (prep, scan) = c.kernel_names(tag, 128);
        assert_eq!(prep, format!("gdn_fwd_slimprep_{tag}_k128_ov"));
        assert_eq!(scan, format!("gdn_fwd_slimscan_{tag}_k128_w4ov"));
        assert!(fwd.has_function(&prep) && fwd.has_function(&scan));
    }
    // Without the overlap: the default kernels.
    let mut plain = c;
    plain.overlap = false;
    assert_eq!(plain.offsets_name(), "gdn_chunk_offsets");
    assert_eq!(
        plain.kernel_names("bf16", 128),
        (
            SLIM_PREP_PRODUCTS_BY_RULE
                .pass(SLIM_PREP)
                .pass
                .entry("bf16", 128),
            format!("gdn_fwd_slimscan_bf16_k128_{}", rule_slim_suffix(4))
        )
    );
}

#[test]
fn forward_schedule_rule_at_the_benchmark_shapes() {
    let pick = |n, t, ho, d, bi| {
        let c = FwdChoice::default_for(&facts(n, t, ho, d, bi), 132);
        (c.scan, c.pieces)
    };
    // (4, 8192, 16): 64 pairs, 128 four-warp blocks fill the GPU.
    assert_eq!(pick(4, 32768, 16, 128, false), (ScanVariant::Warps4, 1));
    // (1, 32768, 16): 32 blocks -> the piece path w4p + sum1 in 7 pieces of 74 chunks (one
    // wave each: 224 scan blocks at two per SM, 384 summary blocks at three); with the first
    // piece early (SLIM_PIECE_FIRST_BY_RULE, session 32) 5 pieces of 103 chunks (the other
    // pieces' 128 scan blocks at one per SM).
    assert_eq!(
        pick(1, 32768, 16, 128, false),
        (
            ScanVariant::Warps4Phased,
            if SLIM_PIECE_FIRST_BY_RULE { 5 } else { 7 }
        )
    );
    assert_eq!(
        FwdChoice::default_with(&facts(1, 32768, 16, 128, false), 132, false).pieces,
        7
    );
    // ... but never under batch_invariant (the cut would depend on the batch).
    assert_eq!(pick(1, 32768, 16, 128, true), (ScanVariant::Warps4, 1));
    // (16, 2048, 32): 512 pairs, two or more waves -> 8 warps.
    assert_eq!(pick(16, 32768, 32, 128, false), (ScanVariant::Warps8, 1));
    // The ragged mix: 160 pairs, under two waves -> 4 warps.
    assert_eq!(pick(10, 29949, 16, 128, false), (ScanVariant::Warps4, 1));
    // K = V = 64 has no 8-warp kernel; short sequences are never cut.
    assert_eq!(pick(64, 64 * 4096, 16, 64, false), (ScanVariant::Warps4, 1));
    assert_eq!(pick(1, 300, 2, 128, false), (ScanVariant::Warps4, 1));
    // Few pairs of long sequences: at most 16 pieces; K = 64 cuts on the session-12 path.
    assert_eq!(
        pick(1, 1 << 20, 1, 128, false),
        (ScanVariant::Warps4Phased, 16)
    );
    assert_eq!(pick(1, 32768, 16, 64, false), (ScanVariant::Warps4, 8));
    // The piece count is the one that keeps both piece passes in one wave.
    let path = FWD_PIECE_PATH[0];
    let (sr, mr) = (path.0.row(), path.1.row());
    let p = pick(1, 32768, 16, 128, false).1;
    assert!(32 / (sr.warps / 4) * p <= sr.per_sm * 132);
    assert!(64 * (p - 1) <= mr.per_sm * 132);
    // Session 6 measured a pairs scan (two warps per 16 value rows, `t8`; kept in
    // gdn_fwd_fast.cuh, not bundled) slower than the rule's choice at all four shapes (H200,
    // bench/gdn_device_fscan6_1.log: 0.365 vs 0.327 ms w4 at (4, 8192, 16), 0.770 vs 0.721 at
    // (1, 32768, 16) with 4 pieces, 0.750 vs 0.533 w8 at (16, 2048, 32), 0.440 vs 0.395 on
    // the ragged mix): the rule above stands.
}

#[test]
fn every_forward_scan_and_summary_has_one_row_and_a_bundled_entry() {
    let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
    for row in &FWD_SCANS {
        for k in [64, 128] {
            let found = ScanVariant::from_switch(row.switch, k);
            assert_eq!(found, row.serves(k).then_some(row.variant));
            for tag in ["bf16", "f16"] {
                let name = row.variant.kernel_name(tag, k);
                assert_eq!(fwd.has_function(&name), row.serves(k), "{name}");
            }
        }
        // Blocks per SM by shared memory (228 KB per SM, 1 KB reserved per block).
        let smem = row.pass().smem_bytes(128);
        assert!(SM90_BUDGET.holds(row.per_sm, smem), "{}", row.switch);
    }
    for row in &FWD_SUMS {
        for k in [64, 128] {
            let found = SumVariant::from_switch(row.switch, k);
            assert_eq!(found, row.serves(k).then_some(row.variant));
            for tag in ["bf16", "f16"] {
                let name = row.variant.kernel_name(tag, k);
                assert_eq!(fwd.has_function(&name), row.serves(k), "{name}");
            }
        }
        let smem = row.pass().smem_bytes(128);
        assert!(SM90_BUDGET.holds(row.per_sm, smem), "{}", row.switch);
    }
    assert_eq!(ScanVariant::from_switch("w4p", 64), None);
    assert_eq!(ScanVariant::from_switch("v1", 128), None);
    assert_eq!(
        ScanVariant::Warps4Phased.kernel_name("f16", 128),
        "gdn_fwd_scanx_f16_k128_w4p"
    );
    assert_eq!(
        SumVariant::Phased3.kernel_name("bf16", 128),
        "gdn_fwd_sum1_bf16_k128"
    );
}

#[test]
fn slim_factors_serve_the_uncut_k128_path_only() {
    let f = |n, t, ho, d, bi| facts(n, t, ho, d, bi);
    // The default at every shape (UNCUT_DEFAULT, PIECE_DEFAULT): slim at K = 128 at any block
    // count, cut or not, and under batch_invariant; full at K = 64.
    for (fa, want) in [
        // (4, 8192, 16): w4, 128 blocks.
        (f(4, 32768, 16, 128, false), FwdFactors::Slim),
        // (16, 2048, 32): w8, 512 blocks.
        (f(16, 32768, 32, 128, false), FwdFactors::Slim),
        // The ragged mix: w4, 320 blocks.
        (f(10, 29949, 16, 128, false), FwdFactors::Slim),
        // (1, 32768, 16) under batch_invariant: uncut, slim.
        (f(1, 32768, 16, 128, true), FwdFactors::Slim),
        // ... and (4, 8192, 16) too: batch_invariant never depends on the batch's size.
        (f(4, 32768, 16, 128, true), FwdFactors::Slim),
        // (1, 32768, 16): the piece path (slim since session 14).
        (f(1, 32768, 16, 128, false), FwdFactors::Slim),
        // Short sequences, few blocks (uncut, 4 blocks).
        (f(1, 300, 2, 128, false), FwdFactors::Slim),
        // K = 64: no slim kernel.
        (f(64, 64 * 4096, 16, 64, false), FwdFactors::Full),
    ] {
        let c = FwdChoice::default_for(&fa, 132);
        assert_eq!(c.factors, want, "{} tokens, K = {}", fa.total_tokens, fa.k);
    }
    // (1, 32768, 16) forced uncut (DNNPLAN_GDN_FWD_PIECES=1): 32 blocks, slim; cut, slim.
    let k128 = f(1, 32768, 16, 128, false);
    assert_eq!(FwdFactors::UNCUT_DEFAULT, FwdFactors::Slim);
    assert_eq!(FwdFactors::PIECE_DEFAULT, FwdFactors::Slim);
    for p in [1, 7] {
        assert_eq!(
            FwdFactors::resolve(FwdFactors::default_for(p), &k128),
            FwdFactors::Slim
        );
    }
    // The switch: either where slim applies (cut or not), full at K = 64.
    let (k128, k64) = (f(4, 32768, 16, 128, false), f(4, 32768, 16, 64, false));
    for wanted in [FwdFactors::Slim, FwdFactors::Full] {
        assert_eq!(FwdFactors::resolve(wanted, &k128), wanted);
        assert_eq!(FwdFactors::resolve(wanted, &k64), FwdFactors::Full);
    }
    for row in &FACTOR_VARIANTS {
        assert_eq!(FwdFactors::from_switch(row.switch), Some(row.factors));
    }
    assert_eq!(FwdFactors::from_switch("v2"), None);
    // Every slim entry the schedule can name is bundled (both widths, both io dtypes; the
    // piece path's summary and seeded scan).
    let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
    let mut c = FwdChoice::default_with(&f(1, 32768, 16, 128, false), 132, false);
    assert!(c.slim_pieces());
    for tag in ["bf16", "f16"] {
        let (prep, scan_name) = c.kernel_names(tag, 128);
        let sum = c.sum_kernel_name(tag, 128);
        for name in [&prep, &scan_name, &sum] {
            assert!(fwd.has_function(name), "{name} is not bundled");
        }
    }
    // The rule's piece passes (SLIM_PIECE_WGMMA_BY_RULE).
    let (w4d, sum) = rule_piece_suffixes();
    assert_eq!(
        c.kernel_names("f16", 128).1,
        format!("gdn_fwd_slimscan_f16_k128_{w4d}")
    );
    assert_eq!(
        c.sum_kernel_name("bf16", 128),
        format!("gdn_fwd_slimsum_bf16_k128{sum}")
    );
    assert_eq!(c.scan_warps(), 4);
    // Full factors forced on the piece path: the full passes.
    c.factors = FwdFactors::Full;
    assert_eq!(c.sum_kernel_name("bf16", 128), "gdn_fwd_sum1_bf16_k128");
    assert_eq!(c.kernel_names("bf16", 128).1, "gdn_fwd_scanx_bf16_k128_w4p");
    let mut c = FwdChoice::default_for(&k128, 132);
    c.factors = FwdFactors::Slim;
    c.overlap = false; // the non-overlapped entries (the overlapped ones: fwd_overlap tests)
    assert!(!c.slim_pieces());
    for scan in [ScanVariant::Warps4, ScanVariant::Warps8] {
        c.scan = scan;
        for tag in ["bf16", "f16"] {
            let (prep, scan_name) = c.kernel_names(tag, 128);
            assert!(fwd.has_function(&prep), "{prep} is not bundled");
            assert!(fwd.has_function(&scan_name), "{scan_name} is not bundled");
        }
    }
    assert_eq!(
        c.kernel_names("bf16", 128),
        (
            SLIM_PREP_PRODUCTS_BY_RULE
                .pass(SLIM_PREP)
                .pass
                .entry("bf16", 128),
            format!("gdn_fwd_slimscan_bf16_k128_{}", rule_slim_suffix(8))
        )
    );
    c.factors = FwdFactors::Full;
    assert_eq!(
        c.kernel_names("f16", 128).1,
        "gdn_fwd_scanx_f16_k128_w8".to_owned()
    );
}

/// `facts` with every port of both directions bound (bf16 io, fp32 states, int32 offsets) at
/// the dims the kernels address ([`PORT_DIMS`]).
pub(in crate::engines::gdn) fn bound(mut f: GdnFacts) -> GdnFacts {
    // The backward's ports (the forward's inputs among them) and the forward's outputs;
    // `state_checkpoints` only comes with a cadence (tests add it with its dtype).
    let ports = super::super::backward::PORTS
        .into_iter()
        .filter(|p| *p != "state_checkpoints")
        .chain(["O", "final_state"]);
    for (uid, name) in (1..).zip(ports) {
        let dtype = match name {
            "cu_seqlens" => DataType::Int32,
            n if n.contains("state") => DataType::Float,
            _ => DataType::Bfloat16,
        };
        let (dims, packed) = (expected_dims(&f, name, &[]).unwrap_or_default(), true);
        f.ports.push((
            name,
            PortFacts {
                uid,
                dims,
                dtype,
                packed,
            },
        ));
    }
    f
}

#[test]
fn every_planned_launch_is_bundled_and_within_the_launch_limits() {
    let module = |m| crate::cuda::kernels::find(m).expect("bundled GDN module");
    let (fwd, bwd, fused) = (module("gdn_fwd"), module("gdn_bwd"), module("gdn_fused16"));
    // The four benchmark shapes, K = 128 and 64, batch_invariant off and on, and short
    // sequences on few heads (the piece chain at 16 pieces).
    for (n, t, ho) in [
        (4, 32768, 16),
        (1, 32768, 16),
        (16, 32768, 32),
        (10, 29949, 16),
    ]
    .into_iter()
    .chain([(2, 3048, 2), (1, 300, 2)])
    {
        for (d, bi) in [(128, false), (128, true), (64, false)] {
            for (op, bundled) in [(GdnOp::Forward, fwd), (GdnOp::Backward, bwd)] {
                let f = bound(crate::engines::gdn::analyzer::test_facts(
                    op, n, t, ho, d, bi,
                ));
                let launches = planned_launches(&f, 132, "bf16").expect("plan");
                // The one-pass forward (fused16): one launch, which finds its sequence's rows
                // by the sanitizer's rule itself.
                if launches[0].0.starts_with("gdn_fwd_fused16_") {
                    assert_eq!(op, GdnOp::Forward);
                    assert_eq!(launches.len(), 1, "{op:?} {n} {t} {ho} {d}");
                    let (name, grid, threads, smem, pdl) = &launches[0];
                    assert!(fused.has_function(name), "{name} is not bundled");
                    assert!(
                        SM90_BUDGET.allows(*smem) && *threads <= 1024 && !pdl,
                        "{name}"
                    );
                    assert!(grid.1 <= 65_535 && grid.2 <= 65_535, "{name}: {grid:?}");
                    continue;
                }
                assert!(launches.len() >= 3, "{op:?} {n} {t} {ho} {d}");
                // The first launch writes the sanitized cu_seqlens every later one reads.
                assert!(
                    crate::engines::gdn::params::CU_SANITIZING_ENTRIES
                        .contains(&launches[0].0.as_str()),
                    "{op:?} {n} {t} {ho} {d}: first launch {}",
                    launches[0].0
                );
                for (name, grid, threads, smem, _) in launches {
                    assert!(bundled.has_function(&name), "{name} is not bundled");
                    assert!(threads % 32 == 0 && threads <= 1024, "{name}: {threads}");
                    assert!(SM90_BUDGET.allows(smem), "{name}: {smem} B");
                    assert!(grid.1 <= 65_535 && grid.2 <= 65_535, "{name}: {grid:?}");
                }
            }
        }
    }
}

#[test]
fn every_slim_scan_row_is_bundled_and_picked_where_it_applies() {
    let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
    for row in &SLIM_SCANS {
        for tag in ["bf16", "f16"] {
            let prep = row.prep.pass.entry(tag, 128);
            let scan = row.scan.entry(tag, 128);
            assert!(fwd.has_function(&prep), "{prep} is not bundled");
            assert!(fwd.has_function(&scan), "{scan} is not bundled");
        }
        assert!(
            SM90_BUDGET.allows(row.scan.smem_bytes(128)),
            "{}",
            row.scan.suffix
        );
    }
    // (pieces, overlap, full scan) -> the slim scan's suffix: pieces first, then the overlap,
    // then the full scan's width (w4p: 4 warps; the 4-warp scan is the rule's wgmma scan).
    let mut c = FwdChoice::default_with(&facts(4, 32768, 16, 128, false), 132, false);
    c.factors = FwdFactors::Slim;
    let (w4, w8) = (rule_slim_suffix(4), rule_slim_suffix(8));
    let w4d = rule_piece_suffixes().0;
    for (pieces, overlap, scan, suffix) in [
        (7, false, ScanVariant::Warps4Phased, w4d),
        (1, true, ScanVariant::Warps8, "w4ov"),
        (1, false, ScanVariant::Warps8, w8),
        (1, false, ScanVariant::Warps4Phased, w4),
        (1, false, ScanVariant::Warps4, w4),
    ] {
        (c.pieces, c.overlap, c.scan) = (pieces, overlap, scan);
        assert_eq!(c.scan_pass().suffix, suffix, "{pieces} {overlap} {scan:?}");
        // Only the overlapped scan's prep is the persistent one.
        let persistent = c.prep_pass().grid == PrepGrid::Persistent;
        assert_eq!(persistent, overlap, "{pieces} {overlap} {scan:?}");
    }
}

#[test]
fn wgmma_piece_rows_switch_and_launch() {
    // The switch: `gx` the whole step, `gs` the products, `d` off, anything else the rule's.
    assert_eq!(piece_switch(Some("gx")), Some(WgmmaDepth::Step));
    assert_eq!(piece_switch(Some("gs")), Some(WgmmaDepth::Products));
    assert_eq!(piece_switch(Some("d")), Some(WgmmaDepth::Off));
    assert_eq!(piece_switch(Some("w4gs")), None);
    assert_eq!(piece_switch(Some("w4dgx")), None);
    assert_eq!(piece_switch(None), None);
    let f = facts(1, 32768, 16, 128, false);
    let mut c = FwdChoice::default_with(&f, 132, false);
    assert_eq!(c.piece_wgmma, SLIM_PIECE_WGMMA_BY_RULE);
    assert_eq!((c.pieces, c.factors), (7, FwdFactors::Slim));
    // The rows: the mma.sync passes' shapes, other suffixes; both bundled.
    let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
    for (depth, scan, sum) in [
        (
            WgmmaDepth::Step,
            "gdn_fwd_slimscan_bf16_k128_w4dgx",
            "gdn_fwd_slimsum_bf16_k128_gx",
        ),
        (
            WgmmaDepth::Products,
            "gdn_fwd_slimscan_bf16_k128_w4dgs",
            "gdn_fwd_slimsum_bf16_k128_gs",
        ),
        (
            WgmmaDepth::Off,
            "gdn_fwd_slimscan_bf16_k128_w4d",
            "gdn_fwd_slimsum_bf16_k128",
        ),
    ] {
        c.piece_wgmma = depth;
        assert_eq!(c.scan_pass().entry("bf16", 128), scan);
        assert_eq!(c.sum_kernel_name("bf16", 128), sum);
        assert_eq!(c.scan_pass().smem_bytes(128), 111_616);
        assert_eq!(c.sum_pass().smem_bytes(128), 73_728);
        assert_eq!((c.scan_pass().warps, c.sum_pass().warps), (4, 4));
        for tag in ["bf16", "f16"] {
            assert!(fwd.has_function(&c.scan_pass().entry(tag, 128)));
            assert!(fwd.has_function(&c.sum_kernel_name(tag, 128)));
        }
    }
    // Uncut, the flag changes nothing.
    c.pieces = 1;
    for depth in [WgmmaDepth::Step, WgmmaDepth::Products] {
        c.piece_wgmma = depth;
        assert!(!matches!(c.slim_scan().used, SlimScanUse::PiecesWgmma(_)));
    }
    for row in [&SLIM_PIECES_WG, &SLIM_PIECES_WGX] {
        assert_eq!(
            (row.scan_per_sm, row.sum_per_sm),
            (SLIM_PIECES.scan_per_sm, SLIM_PIECES.sum_per_sm)
        );
    }
}

/// Each row (pieces, overlap, scan, factors, suffix): `c` with those fields runs the scan
/// whose entry ends in `suffix`.
fn assert_scan_rows(c: &mut FwdChoice, rows: &[(u64, bool, ScanVariant, FwdFactors, &str)]) {
    for &(pieces, overlap, scan, factors, suffix) in rows {
        (c.pieces, c.overlap, c.scan, c.factors) = (pieces, overlap, scan, factors);
        assert_eq!(c.scan_pass().suffix, suffix, "{pieces} {overlap} {scan:?}");
    }
}

/// A uncut-scan wgmma depth runs only on the uncut slim scan: `c` runs `w4` on 4 warps and `w8`
/// on 8, and the overlapped, piece and full-factor rows keep their mma.sync scans.
fn assert_uncut_scan_rows_only(c: &mut FwdChoice, w4: &str, w8: &str) {
    assert_scan_rows(
        c,
        &[
            (1, false, ScanVariant::Warps4, FwdFactors::Slim, w4),
            (1, false, ScanVariant::Warps8, FwdFactors::Slim, w8),
            (1, true, ScanVariant::Warps4, FwdFactors::Slim, "w4ov"),
            (7, false, ScanVariant::Warps4Phased, FwdFactors::Slim, "w4d"),
            (1, false, ScanVariant::Warps4, FwdFactors::Full, "w4"),
        ],
    );
}

/// The uncut K = 128 scan's launch geometry: (grid, threads, dynamic shared memory).
type ScanGeometry = ((u32, u32, u32), u32, u32);

/// Plans the forward `c` at `f` with io dtype `tag` (K = 128), checks that its last launch, the
/// scan, is the `gdn_fwd` module's entry `gdn_fwd_slimscan_<tag>_k128_<suffix>` and, where given,
/// has `geometry`; returns the plan for further checks.
fn assert_scan_launch(
    f: &GdnFacts,
    c: FwdChoice,
    tag: &str,
    suffix: &str,
    geometry: Option<ScanGeometry>,
) -> GdnFwdPlan<String> {
    let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
    let plan = GdnFwdPlan::new(f, c, FwdKernels::named(&c, tag, 128), 132).expect("plan");
    let scan = plan.launches().last().expect("the scan launch");
    let name = format!("gdn_fwd_slimscan_{tag}_k128_{suffix}");
    assert_eq!(*scan.0, name);
    assert!(fwd.has_function(scan.0), "{name} is bundled");
    if let Some(g) = geometry {
        assert_eq!((scan.1, scan.2, scan.3), g, "{name}'s geometry");
    }
    plan
}

#[test]
fn wgmma_scan_row_switch_and_launch() {
    // The switch: `w4gs` forces the 4-warp scan with the wgmma products (K = 64: the full w4,
    // the slim factors do not apply); any other forced scan turns them off; unset: the rule's.
    assert_eq!(
        scan_switch(Some("w4gs"), 128),
        (Some(ScanVariant::Warps4), WgmmaDepth::Products)
    );
    assert_eq!(
        scan_switch(Some("w4gs"), 64),
        (Some(ScanVariant::Warps4), WgmmaDepth::Products)
    );
    assert_eq!(
        scan_switch(Some("w8"), 128),
        (Some(ScanVariant::Warps8), WgmmaDepth::Off)
    );
    assert_eq!(
        scan_switch(Some("w4"), 128),
        (Some(ScanVariant::Warps4), WgmmaDepth::Off)
    );
    assert_eq!(scan_switch(Some("none"), 128), (None, WgmmaDepth::Off));
    assert_eq!(scan_switch(None, 128), (None, WgmmaDepth::Off));
    for (n, t, ho, d) in [
        (4, 32768, 16, 128),
        (1, 32768, 16, 128),
        (16, 32768, 32, 128),
        (10, 29949, 16, 128),
        (4, 32768, 16, 64),
    ] {
        let c = FwdChoice::default_for(&facts(n, t, ho, d, false), 132);
        assert_eq!(c.scan_wgmma, SLIM_SCAN_WGMMA_BY_RULE, "{n} {t} {ho} {d}");
    }
    // Where it runs: only the uncut slim 4-warp scan (not pieces, not overlapped, not w8,
    // not the full factors).
    let mut c = FwdChoice::default_for(&facts(4, 32768, 16, 128, false), 132);
    (c.scan_wgmma, c.piece_wgmma) = (WgmmaDepth::Products, WgmmaDepth::Off);
    assert_uncut_scan_rows_only(&mut c, "w4gs", "w8");
    // The row: w4's grid (two blocks per pair at V = 128), threads and shared memory, the
    // slim prep; the entry is bundled.
    (c.pieces, c.overlap, c.scan, c.factors) = (1, false, ScanVariant::Warps4, FwdFactors::Slim);
    assert_eq!(c.slim_scan().prep, SLIM_PREP);
    assert_eq!(SLIM_SCAN_W4GS.smem_bytes(128), 202_752);
    let f = bound(facts(4, 32768, 16, 128, false));
    assert_eq!(c.scan_pass().suffix, "w4gs");
    assert_scan_launch(&f, c, "bf16", "w4gs", Some(((2, 16, 4), 128, 202_752)));
}

#[test]
fn wgmma_step_scan_row_switch_and_launch() {
    // `w4gx` / `w8gx` force the 4- / 8-warp scan with the whole step by wgmma; by rule as
    // SLIM_SCAN_WGMMA_BY_RULE says; runs only where w4gs would (the piece path has its own
    // depth: none here, so its row is the mma.sync w4d).
    assert_eq!(
        scan_switch(Some("w4gx"), 128),
        (Some(ScanVariant::Warps4), WgmmaDepth::Step)
    );
    for (n, t, ho, d) in [(4, 32768, 16, 128), (16, 32768, 32, 128)] {
        let c = FwdChoice::default_for(&facts(n, t, ho, d, false), 132);
        assert_eq!(c.scan_wgmma, SLIM_SCAN_WGMMA_BY_RULE, "{n} {t} {ho} {d}");
    }
    let mut c = FwdChoice::default_for(&facts(4, 32768, 16, 128, false), 132);
    assert_eq!(
        scan_switch(Some("w8gx"), 128),
        (Some(ScanVariant::Warps8), WgmmaDepth::Step)
    );
    (c.scan_wgmma, c.piece_wgmma) = (WgmmaDepth::Step, WgmmaDepth::Off);
    assert_uncut_scan_rows_only(&mut c, "w4gx", "w8gx");
    (c.pieces, c.overlap, c.scan, c.factors) = (1, false, ScanVariant::Warps4, FwdFactors::Slim);
    c.scan_wgmma = WgmmaDepth::Off;
    assert_eq!(c.scan_pass().suffix, "w4", "no wgmma: the mma.sync scan");
    c.scan_wgmma = WgmmaDepth::Step;
    assert_eq!(c.slim_scan().prep, SLIM_PREP);
    assert_eq!(SLIM_SCAN_W4GX.smem_bytes(128), 202_752);
    let f = bound(facts(4, 32768, 16, 128, false));
    assert_scan_launch(&f, c, "bf16", "w4gx", Some(((2, 16, 4), 128, 202_752)));
    c.scan = ScanVariant::Warps8;
    assert_scan_launch(&f, c, "bf16", "w8gx", Some(((1, 16, 4), 256, 167_936)));
    // `w4gxs` (session 35): w4gx's launch with the copies split; 8 warps keep w8gx.
    assert_eq!(
        scan_switch(Some("w4gxs"), 128),
        (Some(ScanVariant::Warps4), WgmmaDepth::StepSplit)
    );
    c.scan_wgmma = WgmmaDepth::StepSplit;
    assert_scan_launch(&f, c, "bf16", "w8gx", None);
    c.scan = ScanVariant::Warps4;
    assert_scan_launch(&f, c, "f16", "w4gxs", Some(((2, 16, 4), 128, 202_752)));
    // `w4gxt` (session 36, tm36): w4gxs's launch with 4 KB more shared memory, the plan
    // encodes the maps; 8 warps keep w8gx.
    assert_eq!(
        scan_switch(Some("w4gxt"), 128),
        (Some(ScanVariant::Warps4), WgmmaDepth::StepTmaO)
    );
    // (The rule's prep, wgt / wgtl since session 36, reads the q, k maps: the o map is the
    // scan's.)
    assert!(
        !c.io_maps_read(128).contains(tma_maps::IoMapSet::O),
        "w4gxs reads no map"
    );
    c.scan_wgmma = WgmmaDepth::StepTmaO;
    assert!(
        c.io_maps_read(128).contains(tma_maps::IoMapSet::O),
        "w4gxt reads the o map"
    );
    for tag in ["bf16", "f16"] {
        let plan = assert_scan_launch(&f, c, tag, "w4gxt", Some(((2, 16, 4), 128, 206_848)));
        assert!(plan.io_maps.is_some(), "the plan encodes the maps");
    }
    // `w4gxu` (session 36, tm36): w4gxt's launch, q, k by the maps too.
    assert_eq!(
        scan_switch(Some("w4gxu"), 128),
        (Some(ScanVariant::Warps4), WgmmaDepth::StepTmaIo)
    );
    c.scan_wgmma = WgmmaDepth::StepTmaIo;
    assert!(c.reads_io_maps(128), "w4gxu reads the q, k, o maps");
    for tag in ["bf16", "f16"] {
        let plan = assert_scan_launch(&f, c, tag, "w4gxu", Some(((2, 16, 4), 128, 206_848)));
        assert!(plan.io_maps.is_some(), "the plan encodes the maps");
    }
    // `w4gxv` (session 36, tm36): w4gxt's launch, the store ahead of the tail's copies.
    assert_eq!(
        scan_switch(Some("w4gxv"), 128),
        (Some(ScanVariant::Warps4), WgmmaDepth::StepTmaOFirst)
    );
    c.scan_wgmma = WgmmaDepth::StepTmaOFirst;
    let plan = assert_scan_launch(&f, c, "bf16", "w4gxv", Some(((2, 16, 4), 128, 206_848)));
    assert!(plan.io_maps.is_some(), "the plan encodes the maps");
    c.scan = ScanVariant::Warps8;
    assert!(
        !c.io_maps_read(128).contains(tma_maps::IoMapSet::O),
        "8 warps: w8gx"
    );
    assert_scan_launch(&f, c, "bf16", "w8gx", None);
    c.scan = ScanVariant::Warps4;
    // `w8gxs` (session 35, w8s35): w8gx's launch with the copies split; 4 warps: w4gxs.
    assert_eq!(
        scan_switch(Some("w8gxs"), 128),
        (Some(ScanVariant::Warps8), WgmmaDepth::StepSplitAll)
    );
    c.scan_wgmma = WgmmaDepth::StepSplitAll;
    assert_scan_launch(&f, c, "bf16", "w4gxs", None);
    c.scan = ScanVariant::Warps8;
    for tag in ["bf16", "f16"] {
        assert_scan_launch(&f, c, tag, "w8gxs", Some(((1, 16, 4), 256, 167_936)));
    }
}

#[test]
fn first_scan_rows_switch_and_launches() {
    // The switch names a row by its kernel suffix; anything else: the rule's.
    assert_eq!(first_scan_switch(None), SLIM_FIRST_SCAN_BY_RULE);
    assert_eq!(first_scan_switch(Some("x")), SLIM_FIRST_SCAN_BY_RULE);
    assert_eq!(first_scan_switch(Some("w4dgx0")), 0);
    assert_eq!(first_scan_switch(Some("w4gx0")), 1);
    // A row's length only at the piece count where it was measured.
    let row = FirstScanRow {
        first_scale: 320,
        scale_pieces: 5,
        ..SLIM_FIRST_SCANS[1]
    };
    assert_eq!(
        (row.scale_at(5), row.scale_at(4), row.scale_at(9)),
        (320, 0, 0)
    );
    // Both rows bundled in both io dtypes, 4 warps; w4dgx's and w4gx's layouts.
    let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
    let bytes: Vec<u32> = SLIM_FIRST_SCANS
        .iter()
        .map(|r| r.pass.smem_bytes(128))
        .collect();
    assert_eq!(bytes, [111_616, 202_752]);
    for r in &SLIM_FIRST_SCANS {
        assert_eq!(r.pass.warps, 4);
        assert!((0..=4096).contains(&r.first_scale));
        for tag in ["bf16", "f16"] {
            assert!(fwd.has_function(&r.pass.entry(tag, 128)), "{tag} {r:?}");
        }
    }
    // At (1, 32768, 16) each first scan launches on the grid (2, 16, 1) with its own layout,
    // the rest of the launches as the rule's (the same piece count: 5).
    let f = bound(facts(1, 32768, 16, 128, false));
    let rule = FwdChoice::default_with(&f, 132, true);
    assert_eq!(rule.pieces, 5);
    assert_eq!(rule.first_scale, rule.rule_first_scale());
    let plan_of = |c: &FwdChoice| {
        GdnFwdPlan::new(&f, *c, FwdKernels::named(c, "bf16", 128), 132).expect("plan")
    };
    let base: Vec<String> = plan_of(&rule).launches().map(|l| l.0.clone()).collect();
    for (i, r) in SLIM_FIRST_SCANS.iter().enumerate() {
        let mut c = rule;
        (c.first_scan, c.first_scale) = (i, r.scale_at(c.pieces));
        assert_eq!(c.first_scan_row(), r);
        let plan = plan_of(&c);
        let got: Vec<_> = plan
            .launches()
            .map(|l| (l.0.clone(), l.1, l.2, l.3))
            .collect();
        assert_eq!(got.len(), base.len());
        assert_eq!(
            got[2],
            (
                r.pass.entry("bf16", 128),
                (2, 16, 1),
                128,
                r.pass.smem_bytes(128)
            )
        );
        for (k, (g, b)) in got.iter().zip(&base).enumerate() {
            if k != 2 {
                assert_eq!(&g.0, b);
            }
        }
    }
    // Out of range: the rule's row.
    let mut c = rule;
    c.first_scan = 7;
    assert_eq!(
        c.first_scan_row(),
        &SLIM_FIRST_SCANS[SLIM_FIRST_SCAN_BY_RULE]
    );
}

#[test]
fn first_sum_rows_switch_and_launches() {
    // The switch names a row by its kernel suffix; anything else: the rule's.
    assert_eq!(first_sum_switch(None), SLIM_FIRST_SUM_BY_RULE);
    assert_eq!(first_sum_switch(Some("x")), SLIM_FIRST_SUM_BY_RULE);
    assert_eq!(first_sum_switch(Some("gxr")), 0);
    assert_eq!(first_sum_switch(Some("gxr3")), 1);
    assert_eq!(SLIM_FIRST_SUMS[0].pass, SLIM_PIECES_FIRST.sum);
    // Both rows bundled in both io dtypes, 4 warps; two and three stages, each row's blocks
    // per SM fit.
    let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
    let bytes: Vec<u32> = SLIM_FIRST_SUMS
        .iter()
        .map(|r| r.pass.smem_bytes(128))
        .collect();
    assert_eq!(bytes, [73_728, 110_592]);
    for r in &SLIM_FIRST_SUMS {
        assert_eq!(r.pass.warps, 4);
        assert!(super::super::occupancy::SM90_BUDGET.holds(r.per_sm, r.pass.smem_bytes(128)));
        for tag in ["bf16", "f16"] {
            assert!(fwd.has_function(&r.pass.entry(tag, 128)), "{tag} {r:?}");
        }
    }
    // At (1, 32768, 16) each summary launches on the grid (4, 16, 3) with its own layout,
    // programmatic, the rest of the launches as the rule's (the same piece count: 5).
    let f = bound(facts(1, 32768, 16, 128, false));
    let rule = FwdChoice::default_with(&f, 132, true);
    assert_eq!((rule.pieces, rule.first_sum), (5, SLIM_FIRST_SUM_BY_RULE));
    let plan_of = |c: &FwdChoice| {
        GdnFwdPlan::new(&f, *c, FwdKernels::named(c, "bf16", 128), 132).expect("plan")
    };
    let base: Vec<String> = plan_of(&rule).launches().map(|l| l.0.clone()).collect();
    for (i, r) in SLIM_FIRST_SUMS.iter().enumerate() {
        let mut c = rule;
        c.first_sum = i;
        assert_eq!(c.first_sum_row(), r);
        let plan = plan_of(&c);
        let got: Vec<_> = plan
            .launches()
            .map(|l| (l.0.clone(), l.1, l.2, l.3, l.4))
            .collect();
        assert_eq!(got.len(), base.len());
        assert_eq!(
            got[3],
            (
                r.pass.entry("bf16", 128),
                (4, 16, 3),
                128,
                r.pass.smem_bytes(128),
                true
            )
        );
        for (k, (g, b)) in got.iter().zip(&base).enumerate() {
            if k != 3 {
                assert_eq!(&g.0, b);
            }
        }
    }
    // The rows' cuts: gxr3 with w4gx0 at 5 pieces 264 / 256 (the rule's length at
    // (1, 32768, 16)); gxr the first scan rows' own; another scan or count: the scan row's.
    assert_eq!(SLIM_FIRST_SCANS[1].pass.suffix, "w4gx0");
    assert_eq!(SLIM_FIRST_SUMS[1].scale_for(1, 5), Some(264));
    assert_eq!(SLIM_FIRST_SUMS[1].scale_for(0, 5), None);
    assert_eq!(SLIM_FIRST_SUMS[1].scale_for(1, 7), None);
    assert_eq!(SLIM_FIRST_SUMS[0].scale_for(1, 5), None);
    for (i, want) in [(0, 288), (1, 264)] {
        let mut c = rule;
        (c.first_scan, c.first_sum) = (SLIM_FIRST_SCAN_BY_RULE, i);
        assert_eq!(c.rule_first_scale(), want, "summary row {i}");
    }
    assert_eq!(
        rule.first_scale,
        SLIM_FIRST_SUMS[SLIM_FIRST_SUM_BY_RULE]
            .scale_for(SLIM_FIRST_SCAN_BY_RULE, 5)
            .unwrap_or(SLIM_FIRST_SCANS[SLIM_FIRST_SCAN_BY_RULE].scale_at(5))
    );
    // Off the first-early path the row does not apply; out of range: the rule's row.
    let mut c = FwdChoice::default_with(&f, 132, false);
    c.first_sum = 1;
    assert_eq!(c.sum_pass(), SLIM_PIECES_WGX.sum);
    c.first_sum = 7;
    assert_eq!(c.first_sum_row(), &SLIM_FIRST_SUMS[SLIM_FIRST_SUM_BY_RULE]);
}

#[test]
fn first_piece_early_rows_switch_and_launches() {
    // The switch: `1` on, `0` off, else the rule's.
    assert!(piece_first_switch(Some("1")));
    assert!(piece_first_switch(Some("2")));
    assert!(!piece_first_switch(Some("0")));
    assert_eq!(piece_first_switch(None), SLIM_PIECE_FIRST_BY_RULE);
    assert_eq!(piece_first_switch(Some("x")), SLIM_PIECE_FIRST_BY_RULE);
    let f = bound(facts(1, 32768, 16, 128, false));
    let mut c = FwdChoice::default_with(&f, 132, false);
    assert_eq!((c.pieces, c.factors), (7, FwdFactors::Slim));
    c.piece_first = true;
    assert!(c.first_early());
    // Only on the wgmma piece path: not uncut, not on the gs / mma.sync piece passes.
    for (pieces, depth) in [
        (1, WgmmaDepth::Step),
        (7, WgmmaDepth::Products),
        (7, WgmmaDepth::Off),
    ] {
        let mut d = c;
        (d.pieces, d.piece_wgmma) = (pieces, depth);
        assert!(!d.first_early(), "{pieces} {depth:?}");
    }
    // Every row has SLIM_PIECES' shapes and is bundled in both io dtypes.
    let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
    let r = &SLIM_PIECES_FIRST;
    for pass in [r.first, r.rest] {
        assert_eq!((pass.warps, pass.smem_bytes(128)), (4, 111_616));
    }
    assert_eq!((r.sum.warps, r.sum.smem_bytes(128)), (4, 73_728));
    for tag in ["bf16", "f16"] {
        for pass in [r.first, r.rest, r.sum] {
            assert!(fwd.has_function(&pass.entry(tag, 128)), "{tag} {pass:?}");
        }
    }
    assert!(fwd.has_function(&c.chain_kernel_name(128)));
    // The launches at 7 pieces: the first piece before the summary of pieces 1 ..= 5, the
    // summary launched programmatic in every PDL mode (the consumer), the chain from seed 1,
    // the scan of pieces 1 ..= 6.
    type Row = (String, (u32, u32, u32), u32, u32, bool);
    let launches = |c: &FwdChoice| -> Vec<Row> {
        let plan = GdnFwdPlan::new(&f, *c, FwdKernels::named(c, "bf16", 128), 132).expect("plan");
        plan.launches()
            .map(|l| (l.0.clone(), l.1, l.2, l.3, l.4))
            .collect()
    };
    let rule_first = SLIM_FIRST_SCANS[SLIM_FIRST_SCAN_BY_RULE].pass;
    let rule_sum = SLIM_FIRST_SUMS[SLIM_FIRST_SUM_BY_RULE].pass;
    let got = launches(&c);
    let names: Vec<&str> = got.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(
        names,
        [
            "gdn_chunk_offsets",
            "gdn_fwd_slimprep_bf16_k128_wgt",
            rule_first.entry("bf16", 128).as_str(),
            rule_sum.entry("bf16", 128).as_str(),
            "gdn_fwd_chain3r_k128",
            "gdn_fwd_slimscan_bf16_k128_w4dgxr",
        ]
    );
    assert_eq!(
        (got[2].1, got[2].2, got[2].3),
        ((2, 16, 1), 128, rule_first.smem_bytes(128))
    );
    assert_eq!(
        (got[3].1, got[3].2, got[3].3, got[3].4),
        ((4, 16, 5), 128, rule_sum.smem_bytes(128), true)
    );
    assert_eq!((got[4].1, got[4].2), ((8, 16, 1), CHAIN_THREADS));
    assert_eq!((got[5].1, got[5].2, got[5].3), ((2, 16, 6), 128, 111_616));
    // At 2 pieces: no summary, no chain.
    c.pieces = 2;
    let got = launches(&c);
    let names: Vec<&str> = got.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(
        names[2..],
        [
            rule_first.entry("bf16", 128).as_str(),
            "gdn_fwd_slimscan_bf16_k128_w4dgxr"
        ]
    );
    assert_eq!(got[3].1, (2, 16, 1));
    // The first-early piece count: the other pieces' scan at one block per SM (1 + 132 / 32
    // = 5; the summary's room beside the first piece: 2 + (396 − 64) / 64 = 7), then on
    // w4gx's three stages (4 · 32 = 128 blocks ≤ 132).
    assert_eq!(SLIM_PIECES_FIRST.pieces(32, 132), 5);
    assert_eq!(SLIM_PIECES_FIRST.pieces(16, 132), 9);
    assert!(SLIM_PIECES_FIRST.rest_in_one_wave(5, 32, 132));
    assert!(!SLIM_PIECES_FIRST.rest_in_one_wave(7, 32, 132));
    let w = FwdChoice::default_with(&f, 132, true);
    assert!(w.first_early() && w.rest_wave);
    assert_eq!(w.pieces, 5);
    let first = SLIM_FIRST_SCANS[SLIM_FIRST_SCAN_BY_RULE].pass;
    let got = launches(&w);
    let names: Vec<&str> = got.iter().map(|l| l.0.as_str()).collect();
    assert_eq!(
        names[2..],
        [
            first.entry("bf16", 128).as_str(),
            rule_sum.entry("bf16", 128).as_str(),
            "gdn_fwd_chain3r_k128",
            "gdn_fwd_slimscan_bf16_k128_w4gxr"
        ]
    );
    assert_eq!((got[3].1, got[5].1), ((4, 16, 3), (2, 16, 4)));
    assert_eq!((got[5].2, got[5].3), (128, 202_752));
    // The rule's first scan (SLIM_FIRST_SCAN_BY_RULE): w4dgx0 keeps w4dgx's 111,616 B (room
    // for a summary block beside it), w4gx0 w4gx's 202,752 B.
    assert_eq!(got[2].0, first.entry("bf16", 128));
    assert_eq!((got[2].1, got[2].3), ((2, 16, 1), first.smem_bytes(128)));
    for tag in ["bf16", "f16"] {
        assert!(fwd.has_function(&SLIM_PIECES_FIRST.rest_wave.entry(tag, 128)));
    }
    // Uncut shapes stay uncut.
    let u = FwdChoice::default_with(&bound(facts(4, 32768, 16, 128, false)), 132, true);
    assert_eq!((u.pieces, u.first_early()), (1, false));
    // Off: the rule's piece path, unchanged.
    (c.pieces, c.piece_first) = (7, false);
    let names: Vec<String> = launches(&c).into_iter().map(|l| l.0).collect();
    assert_eq!(
        names[2..],
        [
            "gdn_fwd_slimsum_bf16_k128_gx",
            "gdn_fwd_chain3_k128",
            "gdn_fwd_slimscan_bf16_k128_w4dgx"
        ]
    );
}

#[test]
fn piece_count_follows_the_piece_passes_blocks_per_sm() {
    // (1, 32768, 16) on 132 SMs: 32 four-warp scan blocks, 64 summary blocks per piece.
    let f = facts(1, 32768, 16, 128, false);
    let p = |scan: ScanVariant, sum: SumVariant| {
        let (sr, mr) = (scan.row(), sum.row());
        (sr.per_sm * 132 / (16 * 128 / (16 * sr.warps)))
            .min(1 + mr.per_sm * 132 / 64)
            .clamp(1, 16)
    };
    // The session-12 path: w4 (one per SM) -> 4 pieces (the summary would allow 5).
    assert_eq!(p(ScanVariant::Warps4, SumVariant::Stages2), 4);
    // w4p (two per SM) with sum1 (three per SM: 6 summary pieces in 396 slots) -> 7 (the
    // default since session 13); w4p with the two-stage summary -> 5.
    assert_eq!(p(ScanVariant::Warps4Phased, SumVariant::Phased3), 7);
    assert_eq!(p(ScanVariant::Warps4Phased, SumVariant::Stages2), 5);
    // The rule computes the same for the shipped path, and the slim piece passes (the
    // default there since session 14) have the same blocks per SM as it: the same 7 pieces
    // whichever factors run (DNNPLAN_GDN_FWD_FACTORS=full keeps the cut).
    let (scan, sum) = FWD_PIECE_PATH[0];
    let c = FwdChoice::default_with(&f, 132, false);
    assert_eq!((c.scan, c.sum, c.pieces), (scan, sum, p(scan, sum)));
    assert_eq!(c.factors, FwdFactors::Slim);
    assert_eq!(
        (
            SLIM_PIECES.scan.warps,
            SLIM_PIECES.scan_per_sm,
            SLIM_PIECES.sum_per_sm
        ),
        (scan.row().warps, scan.row().per_sm, sum.row().per_sm)
    );
    // K = 64: the first path row that serves it (w4p, sum1 are K = 128 only).
    let c = FwdChoice::default_for(&facts(1, 32768, 16, 64, false), 132);
    assert!(c.scan.row().serves(64) && c.sum.row().serves(64));
    assert!(c.pieces > 1);
}

#[test]
fn every_prep_switch_maps_to_a_bundled_entry_of_both_modules() {
    let module = |m| crate::cuda::kernels::find(m).expect("bundled GDN module");
    let (fwd, bwd) = (module("gdn_fwd"), module("gdn_bwd"));
    for row in &PREP_VARIANTS {
        // The switch value selects this row, and the row names entries of both modules.
        assert_eq!(PrepVariant::from_switch(row.switch), row.variant);
        for (dir, bundled) in [("fwd", fwd), ("bwd", bwd)] {
            for tag in ["bf16", "f16"] {
                for k in [64, 128] {
                    let name = row.variant.kernel_name(dir, tag, k);
                    assert_eq!(name, format!("gdn_{dir}_{}_{tag}_k{k}", row.pass.pass.stem));
                    assert!(bundled.has_function(&name), "{name} is not bundled");
                }
            }
        }
    }
    // The retired levels are not bundled and their switch values run the default.
    for (stem, value) in [("prep7", "v7"), ("prep9", "v9"), ("prep10", "v10")] {
        assert!(!fwd.has_function(&format!("gdn_fwd_{stem}_bf16_k128")));
        assert!(!bwd.has_function(&format!("gdn_bwd_{stem}_bf16_k128")));
        assert_eq!(PrepVariant::from_switch(value), PrepVariant::DEFAULT);
    }
    assert_eq!(PrepVariant::from_switch(""), PrepVariant::V15);
    assert_eq!(PrepVariant::DEFAULT.row().switch, "v15");
}

#[test]
fn prep_variants_share_one_launch_shape() {
    // One block of 256 threads per (chunk slot, head), gdn::Prep7Smem's layout.
    for row in &PREP_VARIANTS {
        assert_eq!(
            row.pass.launch_shape(520, 16, 128, 132, None),
            ((520, 16, 1), 256, 54784)
        );
        assert_eq!(
            row.pass.launch_shape(7, 3, 64, 132, None),
            ((7, 3, 1), 256, prep7_smem_bytes(64, 64))
        );
    }
    assert_eq!(
        PrepVariant::V14.kernel_name("bwd", "f16", 64),
        "gdn_bwd_prep14_f16_k64"
    );
}

/// `bound` facts with state checkpoints every `c` tokens (the `state_checkpoints` port of
/// `dtype`; `pool`: a `state_indices` input too).
pub(in crate::engines::gdn) fn with_checkpoints(
    mut f: GdnFacts,
    c: i64,
    dtype: DataType,
    pool: bool,
) -> GdnFacts {
    f.checkpoint_every = c;
    let mut extra = vec![("state_checkpoints", dtype)];
    if pool {
        extra.push(("state_indices", DataType::Int32));
    }
    for (name, dtype) in extra {
        let uid = 1000 + f.ports.len() as i64;
        let port = PortFacts {
            uid,
            dims: Vec::new(),
            dtype,
            packed: true,
        };
        f.ports.push((name, port));
    }
    f
}

/// The dims of `f`'s bound port `name` (tests).
fn dims_mut<'a>(f: &'a mut GdnFacts, name: &str) -> &'a mut Vec<i64> {
    let (_, p) = f.ports.iter_mut().find(|(n, _)| *n == name).expect("bound");
    &mut p.dims
}

#[test]
fn forced_piece_counts_keep_every_grid_within_the_launch_limit() {
    // Within 1..=64 for few sequences.
    assert_eq!(forced_piece_count(0, 4, |p| p), 1);
    assert_eq!(forced_piece_count(8, 4, |p| p), 8);
    assert_eq!(forced_piece_count(500, 4, |p| p), 64);
    // N · P ≤ 65535 (the forward) and N · (2P − 1) ≤ 65535 (the backward's summaries).
    assert_eq!(forced_piece_count(64, 2000, |p| p), 32);
    assert_eq!(forced_piece_count(64, 2000, |p| 2 * p - 1), 16);
    assert_eq!(forced_piece_count(8, 65_535, |p| p), 1);
    assert_eq!(
        forced_piece_count(8, 70_000, |p| p),
        1,
        "the index limits decline these"
    );
}

#[test]
fn a_pools_rows_are_the_fewest_its_states_declare() {
    let port = |dims: Vec<i64>| PortFacts {
        uid: 7,
        dims,
        dtype: DataType::Float,
        packed: true,
    };
    let mut f = bound(facts(3, 300, 2, 128, false));
    f.ports
        .retain(|(n, _)| !matches!(*n, "initial_state" | "final_state" | "state_indices"));
    assert_eq!(pool_rows(&f), 0, "no pool");
    f.ports.push(("initial_state", port(vec![9, 2, 128, 128])));
    assert_eq!(pool_rows(&f), 0, "states without state_indices: no pool");
    f.ports.push(("state_indices", port(vec![3])));
    assert_eq!(pool_rows(&f), 9);
    f.ports.push(("final_state", port(vec![5, 2, 128, 128])));
    assert_eq!(
        pool_rows(&f),
        5,
        "a final state of fewer rows bounds the indices"
    );
}

/// `f` with a `chunk_factors` port of `dims` and `dtype` (the forward's output or the
/// backward's input, session 37).
pub(in crate::engines::gdn) fn with_chunk_factors(
    mut f: GdnFacts,
    dims: Vec<i64>,
    dtype: DataType,
) -> GdnFacts {
    let uid = 1000 + f.ports.len() as i64;
    let port = PortFacts {
        uid,
        dims,
        dtype,
        packed: true,
    };
    f.ports.push(("chunk_factors", port));
    f
}

/// `f` with a `chunk_factors` port of the declared size (with the U tiles at a cadence of 64).
pub(in crate::engines::gdn) fn saving(f: GdnFacts) -> GdnFacts {
    let rows = gdn_chunk_factor_rows(f.total_tokens, f.n_seqs);
    let (ho, bytes) = (f.heads.3, gdn_chunk_factor_bytes(f.v, f.checkpoint_every));
    with_chunk_factors(f, vec![rows, ho, bytes], DataType::Uint8)
}

/// (N, T, HO) of the saved-output plan tests (sessions 37, 38), both directions: uncut
/// (4,8192,16), one sequence cut into pieces, 16 sequences (the preps that locate the chunk by
/// warp), a ragged-sized batch, small ones, a long sequence on one head.
pub(in crate::engines::gdn) const SAVED_SHAPES: [(i64, i64, i64); 8] = [
    (4, 32768, 16),
    (1, 32768, 16),
    (16, 32768, 32),
    (10, 4000, 4),
    (3, 300, 2),
    (1, 64, 1),
    (2, 100, 3),
    (1, 200_000, 1),
];

/// `f` with io-dtype state checkpoints at every chunk, rows as the forward writes them.
pub(in crate::engines::gdn) fn every_chunk(f: GdnFacts) -> GdnFacts {
    let rows = gdn_chunk_factor_rows(f.total_tokens, f.n_seqs);
    let (ho, v, k) = (f.heads.3, f.v, f.k);
    let io = f.io;
    let mut f = with_checkpoints(f, 64, io, false);
    let (_, port) = f.ports.last_mut().expect("state_checkpoints");
    port.dims = vec![rows, ho, v, k];
    f
}

#[test]
fn a_forward_checkpointing_every_chunk_saves_the_u_tiles_on_every_cut() {
    use crate::engines::gdn::analyzer::test_facts;
    for (n, t, ho) in SAVED_SHAPES {
        let ckpt = every_chunk(bound(test_facts(GdnOp::Forward, n, t, ho, 128, false)));
        let f = saving(ckpt.clone());
        assert_eq!(verdict(&f), None, "({n},{t},{ho})");
        let c = FwdChoice::pick(&f, 132);
        assert!(c.save_u && c.saves_u_tiles() && c.saves_chunk_factors());
        let base = FwdChoice::pick(&ckpt, 132);
        let (with, without) = (
            FwdKernels::named(&c, "bf16", 128),
            FwdKernels::named(&base, "bf16", 128),
        );
        // The output scans run their U-saving twins; the rest as the factors alone.
        assert_eq!(with.scan, format!("{}_su", without.scan), "({n},{t},{ho})");
        assert_eq!(with.first, format!("{}_su", without.first));
        assert_eq!(with.prep, format!("{}s", without.prep));
        let plan = GdnFwdPlan::new(&f, c, FwdKernels::named(&c, "bf16", 128), 132).expect("plan");
        let (_, layout) = plan.factors.expect("bound");
        assert!(layout.holds_u_tiles());
        let rows = gdn_chunk_factor_rows(t, n) as u64;
        assert_eq!(
            layout.total,
            rows * ho as u64 * gdn_chunk_factor_bytes(128, 64) as u64
        );
        let launched: Vec<String> = plan.launches().map(|l| l.0.clone()).collect();
        assert!(
            launched
                .iter()
                .any(|x| x.contains("slimscan") && x.ends_with("_su")),
            "{launched:?}"
        );
        // A schedule whose scan has no twin (the overlap's consumer) cannot save them.
        let mut odd = c;
        odd.overlap = true;
        assert!(!odd.saves_u_tiles() && !odd.saves_chunk_factors());
        let err = GdnFwdPlan::new(&f, odd, FwdKernels::named(&odd, "bf16", 128), 132)
            .err()
            .expect("refused")
            .to_string();
        assert!(
            err.contains("chunk_factors") && err.contains("U-saving twin"),
            "{err}"
        );
    }
    // At another cadence the factors alone: the plain scans.
    let mut f = bound(test_facts(GdnOp::Forward, 4, 32768, 16, 128, false));
    f = with_checkpoints(f, 128, DataType::Bfloat16, false);
    let c = FwdChoice::pick(&saving(f), 132);
    assert!(!c.save_u && c.saves_chunk_factors());
    assert!(!FwdKernels::named(&c, "bf16", 128).scan.ends_with("_su"));
}

#[test]
fn every_save_u_twin_is_a_symbol_of_the_bundled_cubin() {
    let bundled = crate::cuda::kernels::find("gdn_fwd").expect("bundled gdn_fwd module");
    for tag in ["bf16", "f16"] {
        for suffix in SAVE_U_SCANS {
            let name = format!("gdn_fwd_slimscan_{tag}_k128_{suffix}_{SAVE_U_SUFFIX}");
            assert!(bundled.has_function(&name), "{name} is not bundled");
        }
    }
}

#[test]
fn a_backward_takes_chunk_factors_beside_the_forwards_own_checkpoints_only() {
    use crate::engines::gdn::analyzer::test_facts;
    let plain = bound(test_facts(GdnOp::Backward, 3, 300, 2, 128, false));
    // The forward's own: io rows at every chunk, factors with the U tiles.
    assert_eq!(verdict(&saving(every_chunk(plain.clone()))), None);
    // The factors without the U tiles beside them: the size names the cadence.
    let rows = gdn_chunk_factor_rows(300, 3);
    let short = with_chunk_factors(
        every_chunk(plain.clone()),
        vec![rows, 2, GDN_CHUNK_FACTOR_BYTES],
        DataType::Uint8,
    );
    let why = verdict(&short).expect("declined");
    assert!(
        why.contains(&format!("[{rows}, 2, {}]", gdn_chunk_factor_bytes(128, 64)))
            && why.contains("checkpoint_every_n_tokens = 64"),
        "{why}"
    );
    // Coarse or fp32 rows seed a replay the factors do not serve.
    for (cadence, dtype) in [(128, DataType::Bfloat16), (64, DataType::Float)] {
        let mut f = with_checkpoints(plain.clone(), cadence, dtype, false);
        let (_, port) = f.ports.last_mut().expect("state_checkpoints");
        port.dims = vec![rows, 2, 128, 128];
        let why = verdict(&saving(f)).expect("declined");
        assert!(
            why.contains("chunk_factors with state_checkpoints needs the forward's own"),
            "{cadence} {dtype:?}: {why}"
        );
    }
    // A forward saving the factors beside fp32 rows at every chunk: no backward could pair
    // them; at another cadence the factors alone are saved.
    let fwd = bound(test_facts(GdnOp::Forward, 3, 300, 2, 128, false));
    let f32_rows = with_checkpoints(fwd.clone(), 64, DataType::Float, false);
    let why = verdict(&saving(f32_rows)).expect("declined");
    assert!(why.contains("needs the forward's own"), "{why}");
    let coarse = with_checkpoints(fwd, 128, DataType::Float, false);
    assert_eq!(verdict(&saving(coarse)), None);
}

#[test]
fn chunk_factors_are_served_on_the_slim_path_at_their_declared_size() {
    for op in [GdnOp::Forward, GdnOp::Backward] {
        let f = |d| {
            bound(crate::engines::gdn::analyzer::test_facts(
                op, 3, 300, 2, d, false,
            ))
        };
        let rows = gdn_chunk_factor_rows(300, 3);
        assert_eq!(rows, 300 / 64 + 3);
        assert_eq!(verdict(&saving(f(128))), None, "{op:?}");
        let more = with_chunk_factors(
            f(128),
            vec![rows + 5, 2, GDN_CHUNK_FACTOR_BYTES],
            DataType::Uint8,
        );
        assert_eq!(verdict(&more), None, "{op:?}: room for more slots");
        for (dims, dtype) in [
            (vec![rows - 1, 2, GDN_CHUNK_FACTOR_BYTES], DataType::Uint8),
            (vec![rows, 3, GDN_CHUNK_FACTOR_BYTES], DataType::Uint8),
            (vec![rows, 2, GDN_CHUNK_FACTOR_BYTES - 1], DataType::Uint8),
            (vec![rows * 2 * GDN_CHUNK_FACTOR_BYTES], DataType::Uint8),
            (vec![rows, 2, GDN_CHUNK_FACTOR_BYTES], DataType::Int8),
        ] {
            let why = verdict(&with_chunk_factors(f(128), dims.clone(), dtype)).expect("declined");
            assert!(
                why.contains(&format!(
                    "chunk_factors must be UINT8 [{rows}, 2, {GDN_CHUNK_FACTOR_BYTES}]"
                )) && why.contains(&format!("{dims:?}")),
                "{op:?}: {why}"
            );
        }
        let why = verdict(&saving(f(64))).expect("declined at K = 64");
        assert!(
            why.contains("chunk_factors needs K = V = 128") && why.contains("K = 64"),
            "{why}"
        );
        // Accept means run: the batch-invariant backward has no slim prep to skip.
        let bi = saving(bound(crate::engines::gdn::analyzer::test_facts(
            op, 3, 300, 2, 128, true,
        )));
        let why = verdict(&bi).expect("declined under batch_invariant");
        assert!(
            why.contains("chunk_factors is not served with batch_invariant"),
            "{why}"
        );
    }
}

#[test]
fn a_forward_with_chunk_factors_runs_the_saving_prep_on_every_cut() {
    use crate::engines::gdn::analyzer::test_facts;
    for (n, t, ho) in SAVED_SHAPES {
        let plain = bound(test_facts(GdnOp::Forward, n, t, ho, 128, false));
        let f = saving(plain.clone());
        let c = FwdChoice::pick(&f, 132);
        assert!(c.saves_chunk_factors(), "({n},{t},{ho})");
        let base = FwdChoice::pick(&plain, 132);
        assert!(!base.saves_chunk_factors());
        // Only the prep differs from the plan without the port.
        let (with, without) = (
            FwdKernels::named(&c, "bf16", 128),
            FwdKernels::named(&base, "bf16", 128),
        );
        for (a, b) in with.all().into_iter().zip(without.all()) {
            if a.contains("slimprep") {
                // The rule's tile (wgt, or wgtl from 8 sequences) with its saving stores.
                assert_eq!(*a, format!("{b}s"));
                assert!(a.ends_with("_wgts") || a.ends_with("_wgtls"), "{a}");
            } else {
                assert_eq!(a, b);
            }
        }
        let plan = GdnFwdPlan::new(&f, c, FwdKernels::named(&c, "bf16", 128), 132).expect("plan");
        let (uid, layout) = plan.factors.expect("bound");
        assert_eq!(uid, f.port("chunk_factors").unwrap().uid);
        let rows = gdn_chunk_factor_rows(t, n) as u64;
        assert_eq!(
            layout.total,
            rows * ho as u64 * GDN_CHUNK_FACTOR_BYTES as u64
        );
        assert!(
            plan.launches()
                .any(|l| l.0.contains("slimprep_bf16_k128_wgt"))
        );
        // The saving tensor-map tiles read the q, k maps.
        assert!(plan.io_maps.is_some());
    }
}

fn verdict(f: &GdnFacts) -> Option<String> {
    let t = Target::with_arch(90);
    SUPPORT_RULES.iter().find_map(|rule| rule(f, &t))
}

#[test]
fn checkpoints_at_multiples_of_the_chunk_are_served_both_directions() {
    for op in [GdnOp::Forward, GdnOp::Backward] {
        let f = || {
            bound(crate::engines::gdn::analyzer::test_facts(
                op, 3, 300, 2, 128, false,
            ))
        };
        assert_eq!(verdict(&f()), None, "{op:?} without checkpoints");
        for c in [64, 128, 192, 4096] {
            for dt in [DataType::Bfloat16, DataType::Float] {
                let g = with_checkpoints(f(), c, dt, false);
                assert_eq!(verdict(&g), None, "{op:?} c = {c} {dt:?}");
            }
        }
        for c in [1, 32, 63, 65, 96, 100] {
            let why =
                verdict(&with_checkpoints(f(), c, DataType::Bfloat16, false)).expect("declined");
            assert!(
                why.contains("checkpoint_every_n_tokens")
                    && why.contains("multiple of 64")
                    && why.contains(&format!("got {c}")),
                "{why}"
            );
        }
        // fp16 rows under bf16 io: neither the io dtype nor fp32.
        let why = verdict(&with_checkpoints(f(), 64, DataType::Half, false)).expect("declined");
        assert!(
            why.contains("state_checkpoints must be FLOAT or the io dtype"),
            "{why}"
        );
        // A pool with checkpoints (spec §9.4 item 7).
        let why = verdict(&with_checkpoints(f(), 64, DataType::Bfloat16, true)).expect("declined");
        assert!(why.contains("state_indices pool"), "{why}");
    }
}

#[test]
fn checkpoints_add_only_their_row_table_and_keep_the_launches() {
    // The four benchmark shapes and a short one, K = 128 and 64: the same launches with and
    // without checkpoints (the output scans write them), the workspace grows by the [N + 1]
    // row table at a cadence of more than one chunk only, and the binding follows.
    for (n, t, ho) in [
        (4, 32768, 16),
        (1, 32768, 16),
        (16, 32768, 32),
        (10, 29949, 16),
        (3, 300, 2),
    ] {
        for d in [128, 64] {
            let f = || bound(facts(n, t, ho, d, false));
            let plan = |f: &GdnFacts| {
                let choice = FwdChoice::pick(f, 132);
                GdnFwdPlan::new(f, choice, FwdKernels::named(&choice, "bf16", f.k), 132)
                    .expect("plan")
            };
            let plain = plan(&f());
            let names = |p: &GdnFwdPlan<String>| super::super::pdl::by_name(p.launches());
            for (c, dt) in [
                (64, DataType::Bfloat16),
                (128, DataType::Float),
                (192, DataType::Bfloat16),
            ] {
                let g = with_checkpoints(f(), c, dt, false);
                let p = plan(&g);
                assert_eq!(names(&p), names(&plain), "{n} {t} {ho} {d} c = {c}");
                assert_eq!(p.ckpt.every, c as u64 / 64);
                assert_eq!(p.ckpt.f32, dt == DataType::Float);
                let table = if c > 64 {
                    (4 * (n as u64 + 1)).div_ceil(256) * 256
                } else {
                    0
                };
                assert_eq!(
                    p.ckpt.total,
                    plain.ckpt.total + table,
                    "{n} {t} {ho} c = {c}"
                );
            }
            assert_eq!(plain.ckpt.every, 0);
            assert_eq!(plain.ckpt.total, plain.overlap.total);
            // Checkpoints set on the node but no buffer bound: none written.
            let mut unbound = f();
            unbound.checkpoint_every = 64;
            assert_eq!(plan(&unbound).ckpt.every, 0);
        }
    }
}

/// The forward plan of `f` with kernels resolved to their names (bf16).
fn named_fwd(f: &GdnFacts) -> Result<GdnFwdPlan<String>> {
    let choice = FwdChoice::pick(f, 132);
    GdnFwdPlan::new(f, choice, FwdKernels::named(&choice, "bf16", f.k), 132)
}

#[test]
fn index_limits_decline_every_shape_past_the_kernels_32_bit_arithmetic() {
    let fwd = |n, t, ho| bound(facts(n, t, ho, 128, false));
    let t_max = MAX_TOKENS as i64;
    // The largest served shapes: T = 2^31 − 1 tokens of one sequence (2^25 chunk slots) on
    // 63 heads (2,113,929,216 units), and 65,535 sequences and heads at the unit limit.
    for f in [fwd(1, t_max, 63), fwd(65_535, 64 * 32_000, 64)] {
        assert_eq!(
            verdict(&f),
            None,
            "({}, {}, {:?})",
            f.n_seqs,
            f.total_tokens,
            f.heads
        );
        let units = chunk_units(&f);
        assert!(units <= MAX_UNITS);
        // The kernels' grid-stride loops over units step at most this far past the last one
        // (the chunk-order kernels' 1,024 threads, the persistent prep's grid on 132 SMs).
        let prep = fwd_overlap::prep_grid(128, 132, units, None);
        assert!(u64::from(OFFSETS_THREADS).max(prep) <= UNIT_LOOP_HEADROOM);
        assert!(units - 1 + UNIT_LOOP_HEADROOM <= i32::MAX as u64);
        // The plans' 32-bit fields hold the counts exactly.
        let plan = named_fwd(&f).expect("plan");
        let chunks = max_chunks(f.n_seqs as u64, f.total_tokens as u64);
        assert_eq!(plan.template.max_chunks as u64, chunks);
        assert_eq!(plan.template.n_seqs as i64, f.n_seqs);
        assert_eq!(plan.template.ho as i64, f.heads.3);
        let mut b = f.clone();
        b.op = GdnOp::Backward;
        assert!(planned_launches(&b, 132, "bf16").is_ok());
    }
    // One past each limit declines with the count, the limit and the reason; so does the
    // plan built without the support rules. (N = 1, T = 2^31 − 128, HO = 64) is 2^31 − 64
    // units: below 2^31, but the chunk-order kernels' flag loop (i += 1,024 while
    // i < max_chunks · HO) would step its int index past 2^31 and store at a negative one.
    let cases = [
        (
            fwd(1, t_max + 1, 1),
            "T (total tokens) = 2147483648",
            "2147483647",
        ),
        (
            fwd(1, (1 << 31) - 128, 64),
            "(T / 64 + N) · HO (chunk-slot units) = 2147483584",
            "2146435072",
        ),
        (
            fwd(1, t_max, 64),
            "chunk-slot units) = 2147483648",
            "2146435072",
        ),
        (fwd(1, 64, 65_536), "HO (output heads) = 65536", "65535"),
        (fwd(65_536, 64, 1), "N (sequences) = 65536", "65535"),
        // Counts beyond u64 saturate: declined, never wrapped into range (nor a panic).
        (
            fwd(i64::MAX - 1, i64::MAX, i64::MAX),
            "T (total tokens) = 9223372036854775807",
            "2147483647",
        ),
    ];
    for (f, what, limit) in cases {
        let why = verdict(&f).expect("declined");
        assert!(
            why.contains(what) && why.contains(&format!("limit {limit}")),
            "{why}"
        );
        for op in [GdnOp::Forward, GdnOp::Backward] {
            let mut g = f.clone();
            g.op = op;
            let e = planned_launches(&g, 132, "bf16")
                .expect_err("refused")
                .to_string();
            assert!(e.contains(what) && e.contains("gdn0"), "{op:?}: {e}");
        }
    }
    // A huge head count saturates the units instead of wrapping them below the limit.
    let mut f = fwd(2, 128, 1);
    f.heads.3 = i64::MAX;
    assert_eq!(chunk_units(&f), u64::MAX);
}

#[test]
fn cadences_beyond_every_sequence_keep_the_kernels_chunks_per_row_exact() {
    // checkpoint_every_n_tokens is an i64 attribute: any positive multiple of 64 is valid.
    // Its chunks per row reach the kernels as an int (`ckpt_every`): uncapped, 64 · 2^31
    // truncated to −2^31, 64 · 2^32 to 0 (the rows' table divides by it, the rows are
    // i / every), and 64 · (2^31 − 1) overflowed the seeded replay's `cb + m`. Past the
    // longest sequence every cadence writes the same rows (one per sequence), so the layout
    // caps it there.
    for (n, t, ho) in [(3, 300, 2), (1, 64, 1), (2, 100_000, 4)] {
        let chunks = max_chunks(n as u64, t as u64);
        for c in [
            64 * ((1i64 << 31) - 1),
            64 << 31,
            64 << 32,
            64 << 40,
            i64::MAX / 64 * 64,
        ] {
            for dt in [DataType::Bfloat16, DataType::Float] {
                let f = with_checkpoints(bound(facts(n, t, ho, 128, false)), c, dt, false);
                assert_eq!(verdict(&f), None, "c = {c}");
                let plan = named_fwd(&f).expect("plan");
                let mut p = FwdFastParams::default();
                p.f.chunk_offsets = 0x1000;
                plan.ckpt.bind(0x10_0000, 0xdead_0000, &mut p);
                assert!(
                    p.ckpt_every >= 2 && p.ckpt_every as u64 <= chunks.max(2),
                    "c = {c}: {} chunks per row",
                    p.ckpt_every
                );
                // The row table is the workspace's (more than one chunk per row).
                assert_eq!(p.ckpt_rows, 0x10_0000 + plan.ckpt.rows);
                assert!(chunks + p.ckpt_every as u64 <= i32::MAX as u64);
            }
        }
        // Below the cap the cadence is the node's.
        let f = with_checkpoints(
            bound(facts(n, t, ho, 128, false)),
            128,
            DataType::Float,
            false,
        );
        assert_eq!(named_fwd(&f).expect("plan").ckpt.every, 2);
    }
}

#[test]
fn a_first_piece_past_the_kernels_32_bit_cut_is_refused() {
    // One sequence of 2^26 tokens on one head (q, k, v, O: 16 GB each at K = V = 128) cut
    // into 2 first-early pieces: per = 2^19 chunks, so a first piece of 4096/256 (the most
    // DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE asks for) is per · 4096 = 2^31 in the kernels' int
    // cut (`piece_range_first`): a negative first piece, the other pieces starting before
    // the sequence (O stored before its first token).
    let f = bound(facts(1, 1 << 26, 1, 128, false));
    let mut c = FwdChoice::default_for(&f, 132);
    assert!(c.first_early(), "{c:?}");
    c.pieces = 2;
    assert_eq!(max_first_scale(1 << 26, 2), 4095);
    c.first_scale = 4096;
    let plan = |c: FwdChoice| GdnFwdPlan::new(&f, c, FwdKernels::named(&c, "bf16", 128), 132);
    let e = plan(c).err().expect("refused").to_string();
    assert!(
        e.contains("gdn0")
            && e.contains("4096/256")
            && e.contains("4095/256")
            && e.contains("DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE")
            && e.contains("32-bit"),
        "{e}"
    );
    c.first_scale = 4095;
    assert!(plan(c).is_ok());
    // Off the first-early path the scale is unused.
    c.piece_first = false;
    c.first_scale = 4096;
    assert!(plan(c).is_ok());
    // The rule's lengths fit at every served T (the longest sequence: 2^25 chunks).
    for row in SLIM_FIRST_SCANS {
        let p = row.scale_pieces.max(2);
        assert!(row.first_scale <= max_first_scale(MAX_TOKENS, p), "{row:?}");
    }
    for row in SLIM_FIRST_SUMS {
        for cut in row.cuts {
            assert!(cut.first_scale <= max_first_scale(MAX_TOKENS, cut.pieces));
        }
    }
}

#[test]
fn ports_are_addressed_at_the_dims_they_declare() {
    // Every port of both ops but the two with their own rules has a row.
    let ports = super::super::analyzer::PORTS;
    for p in ports {
        let own = matches!(*p, "state_checkpoints" | "chunk_factors");
        assert_eq!(PORT_DIMS.iter().any(|(n, _)| n == p), !own, "{p}");
    }
    assert_eq!(PORT_DIMS.len() + 2, ports.len());
    for op in [GdnOp::Forward, GdnOp::Backward] {
        let f = || {
            let mut f = bound(facts(3, 300, 4, 128, false));
            f.op = op;
            f
        };
        assert_eq!(verdict(&f()), None);
        // Each port one row or one element short (the gradients are declared like their
        // primals: a short initial_state makes a short d_initial_state, a short k a short
        // dK, which the kernels would write past their ends).
        for (port, dims) in PORT_DIMS {
            let mut g = f();
            // `state_indices` (a pool) is not among `bound`'s ports: below.
            let Some((_, p)) = g.ports.iter_mut().find(|(n, _)| *n == port) else {
                assert_eq!(port, "state_indices");
                continue;
            };
            let want = p.dims.clone();
            let last = p.dims.len() - 1;
            p.dims[last] -= 1;
            let why = verdict(&g).expect("declined");
            let names = dims.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ");
            assert!(
                why.contains(&format!("port {port} must have"))
                    && why.contains(&format!("[{names}] = {want:?}")),
                "{op:?}: {why}"
            );
            // A rank of its own declines too.
            *dims_mut(&mut g, port) = [want.clone(), vec![1]].concat();
            assert!(verdict(&g).is_some(), "{port}");
        }
    }
    // Under a state_indices pool the states' rows are the pool's (spec §6).
    let mut f = bound(facts(3, 300, 4, 128, false));
    f.ports.push((
        "state_indices",
        PortFacts {
            uid: 999,
            dims: vec![3],
            dtype: DataType::Int32,
            packed: true,
        },
    ));
    for port in ["initial_state", "final_state"] {
        dims_mut(&mut f, port)[0] = 7;
    }
    assert_eq!(verdict(&f), None);
    dims_mut(&mut f, "initial_state")[1] = 3;
    let why = verdict(&f).expect("declined");
    assert!(
        why.contains("[N (or the pool's rows), HO, V, K] = [7, 4, 128, 128]"),
        "{why}"
    );
    // The indices themselves are [N].
    dims_mut(&mut f, "initial_state")[1] = 4;
    *dims_mut(&mut f, "state_indices") = vec![2];
    let why = verdict(&f).expect("declined");
    assert!(
        why.contains("port state_indices must have") && why.contains("[N] = [3]"),
        "{why}"
    );
}

#[test]
fn chunk_factors_past_an_i64_of_bytes_are_refused_not_wrapped() {
    // A backward accepts a buffer of more rows than the forward writes; the plan lays the
    // regions out over the declared rows (rows · HO · 17,924 bytes), which must not wrap.
    let f = |rows: i64| {
        let mut f = bound(facts(4, 32768, 16, 128, false));
        f.op = GdnOp::Backward;
        let bytes = gdn_chunk_factor_bytes(128, 0);
        with_chunk_factors(f, vec![rows, 16, bytes], DataType::Uint8)
    };
    assert_eq!(verdict(&f(1 << 20)), None);
    let huge = f(1 << 50);
    let why = verdict(&huge).expect("declined");
    assert!(
        why.contains("chunk_factors") && why.contains("2^63 - 1 bytes"),
        "{why}"
    );
    let names = super::super::backward::kernel_names("bf16", 128, PrepVariant::DEFAULT);
    let e = GdnBwdPlan::new(&huge, names.to_vec(), 132)
        .err()
        .expect("refused")
        .to_string();
    assert!(
        e.contains("chunk_factors") && e.contains("2^63 - 1 bytes"),
        "{e}"
    );
}

#[test]
fn the_backward_slim_prep_is_bundled_with_the_slim_preps_shape() {
    // Each row: the prep, its entry's suffix, its launch at (130 chunk slots, 16 heads, K = 128,
    // 132 SMs): one block per (chunk slot, head), 8 warps; and its blocks per SM, all with the
    // largest carveout.
    //   Session 28 (pp28): prep15sl, the slim prep's 36,352 B, 5 blocks per SM.
    //   Session 29 (bp29): prep16sl likewise, 4 blocks per SM (the wgmma form's 64 registers).
    //   Session 32 (pp32): prep16slc on the same grid, 4 blocks per SM, 54,784 B.
    //   Session 35 (pr35): prep16sll as prep16slc's launch.
    let bwd = crate::cuda::kernels::find("gdn_bwd").expect("bundled GDN backward module");
    let slim = ((130, 16, 1), 256, 36_352);
    let slim_c = ((130, 16, 1), 256, 54_784);
    for (prep, suffix, launch, min_blocks) in [
        (BWD_PREP_SLIM, "prep15sl", slim, 5),
        (BWD_PREP_SLIM16, "prep16sl", slim, SLIM_PREP_WG.min_blocks),
        (
            BWD_PREP_SLIM16C,
            "prep16slc",
            slim_c,
            SLIM_PREP_WGC.min_blocks,
        ),
        (
            BWD_PREP_SLIM16L,
            "prep16sll",
            slim_c,
            SLIM_PREP_WGL.min_blocks,
        ),
    ] {
        for tag in ["bf16", "f16"] {
            let entry = prep.pass.entry_in("bwd", tag, 128);
            assert_eq!(entry, format!("gdn_bwd_{suffix}_{tag}_k128"));
            assert!(bwd.has_function(&entry), "{entry}");
        }
        assert_eq!(
            prep.launch_shape(130, 16, 128, 132, None),
            launch,
            "{suffix}"
        );
        assert_eq!(prep.min_blocks, min_blocks, "{suffix}");
        assert!(prep.max_carveout, "{suffix}");
    }
}

#[test]
fn the_slim_prep_switch_swaps_only_the_uncut_slim_prep() {
    // Session 28 (pp28): DNNPLAN_GDN_FWD_SLIMPREP=wg / wg5 name the bundled wgmma forms of
    // gdn_fwd_slimprep_*_k128 (4 / 5 blocks per SM, the slim prep's shared memory); the
    // persistent prep and the full preps stay.
    let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
    // Session 36 (tp36): wgt by the rule (session 32, pp32: wgc).
    assert_eq!(SlimPrepProducts::from_switch(None), SlimPrepProducts::Wgt);
    assert_eq!(
        SlimPrepProducts::from_switch(Some("x")),
        SlimPrepProducts::Wgt
    );
    assert_eq!(
        SlimPrepProducts::from_switch(Some("mma")),
        SlimPrepProducts::Mma
    );
    assert_eq!(SlimPrepProducts::Mma.pass(SLIM_PREP), SLIM_PREP);
    // Session 35 (pr35): wgl in place of wgc from 8 to 31 sequences by the rule (session 36:
    // wgtl in place of wgt); a named value wins at every count.
    let (lo, hi) = SLIM_PREP_LOCATE_WARP_SEQS;
    for (n, rule) in [
        (1, SlimPrepProducts::Wgt),
        (4, SlimPrepProducts::Wgt),
        (lo - 1, SlimPrepProducts::Wgt),
        (lo, SlimPrepProducts::Wgtl),
        (16, SlimPrepProducts::Wgtl),
        (hi, SlimPrepProducts::Wgtl),
        (hi + 1, SlimPrepProducts::Wgt),
    ] {
        assert_eq!(SlimPrepProducts::by_rule(n), rule, "{n}");
        assert_eq!(SlimPrepProducts::from_switch_at(None, n), rule, "{n}");
        assert_eq!(SlimPrepProducts::from_switch_at(Some("x"), n), rule, "{n}");
        for (value, form) in [
            ("wgc", SlimPrepProducts::Wgc),
            ("wgl", SlimPrepProducts::Wgl),
            ("wgt", SlimPrepProducts::Wgt),
            ("wgtl", SlimPrepProducts::Wgtl),
        ] {
            assert_eq!(SlimPrepProducts::from_switch_at(Some(value), n), form);
        }
    }
    for (form, located) in [
        (SlimPrepProducts::Wgc, SlimPrepProducts::Wgl),
        (SlimPrepProducts::Wgt, SlimPrepProducts::Wgtl),
        (SlimPrepProducts::Wgl, SlimPrepProducts::Wgl),
        (SlimPrepProducts::Wgtl, SlimPrepProducts::Wgtl),
        (SlimPrepProducts::Wg, SlimPrepProducts::Wg),
    ] {
        assert_eq!(form.located_by_warp(), located, "{form:?}");
    }
    // The uncut slim forward at (16, 2048, 32) runs wgtl by the rule and encodes the maps.
    let f = facts(16, 32768, 32, 128, false);
    assert_eq!(FwdChoice::default_for(&f, 132).prep_pass(), SLIM_PREP_WGTL);
    assert!(FwdChoice::default_for(&f, 132).reads_io_maps(128));
    for (value, form, entry, blocks, smem) in [
        (
            "wg",
            SlimPrepProducts::Wg,
            "gdn_fwd_slimprep_bf16_k128_wg",
            4,
            36_352,
        ),
        (
            "wg5",
            SlimPrepProducts::Wg5,
            "gdn_fwd_slimprep_bf16_k128_wg5",
            5,
            36_352,
        ),
        (
            "wgc",
            SlimPrepProducts::Wgc,
            "gdn_fwd_slimprep_bf16_k128_wgc",
            4,
            54_784,
        ),
        (
            "wgl",
            SlimPrepProducts::Wgl,
            "gdn_fwd_slimprep_bf16_k128_wgl",
            4,
            54_784,
        ),
        (
            "wgt",
            SlimPrepProducts::Wgt,
            "gdn_fwd_slimprep_bf16_k128_wgt",
            4,
            54_784,
        ),
        (
            "wgtl",
            SlimPrepProducts::Wgtl,
            "gdn_fwd_slimprep_bf16_k128_wgtl",
            4,
            54_784,
        ),
    ] {
        assert_eq!(SlimPrepProducts::from_switch(Some(value)), form);
        let pass = form.pass(SLIM_PREP);
        assert_eq!(pass.pass.entry("bf16", 128), entry);
        assert_eq!(
            (
                pass.min_blocks,
                pass.pass.smem_bytes(128),
                pass.max_carveout
            ),
            (blocks, smem, true)
        );
        for tag in ["bf16", "f16"] {
            assert!(fwd.has_function(&pass.pass.entry(tag, 128)));
        }
        assert_eq!(form.pass(SLIM_PREP_OV), SLIM_PREP_OV);
        assert_eq!(form.pass(PREP_VARIANTS[1].pass), PREP_VARIANTS[1].pass);
        // The uncut slim forward at (4, 8192, 16) runs it (wgt by the rule).
        let f = facts(4, 32768, 16, 128, false);
        let mut c = FwdChoice::default_for(&f, 132);
        assert_eq!(c.prep_pass(), SLIM_PREP_WGT);
        assert!(c.reads_io_maps(128), "the rule's plan encodes the maps");
        c.slim_prep = SlimPrepProducts::Mma;
        assert_eq!(c.prep_pass(), SLIM_PREP);
        c.slim_prep = form;
        assert_eq!(c.prep_pass(), pass);
        // Session 36 (tp36): only the box-loading forms make the plan encode the maps.
        let boxes = matches!(form, SlimPrepProducts::Wgt | SlimPrepProducts::Wgtl);
        assert_eq!(c.reads_io_maps(128), boxes, "{value}");
        let read = if boxes {
            tma_maps::IoMapSet::QK
        } else {
            tma_maps::IoMapSet::NONE
        };
        assert_eq!(c.io_maps_read(128), read, "{value}: q, k only");
        assert_eq!(tma_maps::reads_io_maps(entry), boxes, "{entry}");
    }
}
