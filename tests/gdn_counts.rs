//! The benchmark's per-kernel byte and FLOP models (tests/support/gdn_counts.rs) on the CPU:
//! every bundled GDN entry has a model, the benchmark plans launch only modelled kernels (at
//! every schedule tests/gpu_gdn_bench.rs times), one hand-computed case per family, and the
//! models' DRAM reads against the session-18 ncu profile where L2 does not change them.
//! `cargo test --test gdn_counts -- --nocapture` also prints `MODEL` lines (per shape, direction
//! and launch: entry, bytes read, bytes written, FLOPs) for bench/gdn_model_vs_ncu.py.

#[path = "support/gdn_counts.rs"]
mod gdn_counts;

use std::sync::Mutex;

use gdn_counts::{
    BENCH_SHAPES, Cut, H200_SMS, Shape, Span, bench_launches, kernel_counts, label, launch_parts,
    model, overlapped, stem,
};

#[test]
fn every_bundled_gdn_entry_has_a_model() {
    for module in ["gdn_fwd", "gdn_bwd"] {
        let k = dnnplan::cuda::kernels::find(module).expect("bundled module");
        assert!(!k.functions.is_empty(), "{module}: no entries");
        let missing: Vec<&str> = k
            .functions
            .iter()
            .copied()
            .filter(|f| model(f).is_none())
            .collect();
        assert!(missing.is_empty(), "{module}: no model for {missing:?}");
    }
}

#[test]
fn stems_and_overlap_marks() {
    assert_eq!(stem("gdn_fwd_slimscan_bf16_k128_w4ov"), "slimscan_w4ov");
    assert_eq!(stem("gdn_fwd_prep15_f16_k64"), "fwd:prep15");
    assert_eq!(stem("gdn_bwd_prep15_bf16_k128"), "bwd:prep15");
    assert_eq!(label("gdn_bwd_prep15_bf16_k128"), "prep15");
    assert_eq!(label("gdn_fwd_slimscan_bf16_k128_w4d"), "slimscan_w4d");
    assert_eq!(stem("gdn_chunk_offsets"), "chunk_offsets");
    assert_eq!(stem("gdn_bwd_dchain3_k128"), "dchain3");
    assert_eq!(stem("gdn_bwd_tokens_tc12_ov_bf16_k128"), "tokens_tc12_ov");
    assert!(overlapped("gdn_fwd_slimprep_bf16_k128_ov"));
    assert!(overlapped("gdn_fwd_slimscan_bf16_k128_w4ov"));
    assert!(overlapped("gdn_bwd_dscan_ov2_bf16_k128"));
    assert!(overlapped("gdn_bwd_dscanp_ov5_bf16_k128"));
    assert!(model("gdn_bwd_dscan_ov5_bf16_k128").is_some());
    assert!(overlapped("gdn_bwd_tokens_tc12_ov_bf16_k128"));
    assert!(overlapped("gdn_bwd_tokens_tc13_ov_bf16_k128"));
    assert!(overlapped("gdn_bwd_dscanp_ov5dr_bf16_k128"));
    assert!(!overlapped("gdn_bwd_tokens_tc12_bf16_k128"));
    assert!(!overlapped("gdn_fwd_slimscan_bf16_k128_w4"));
    assert!(model("gdn_fwd_nothing_bf16_k128").is_none());
}

/// Hand-computed counts, one row per family: (entry, pieces, (read, write, FLOPs)) at one
/// sequence of 130 tokens (chunks of 64, 64 and 2 tokens), one head, K = V = 128; with two
/// pieces, piece 0 = chunks 0, 1 (128 tokens) and piece 1 = chunk 2 (2 tokens). Sizes: a token
/// row 256 B, a [64, 128] io tile 16,384 B, a [64, 64] io tile 8,192 B, a packed slim T or A
/// (its 10 lower 16 × 16 blocks, session 24) 5,120 B, the slim scalars
/// 1,024 B, Γ_last 4 B, an fp32 state 65,536 B, an io state 32,768 B, dR 32,768 B, a [64] fp32
/// row 256 B; 64 × 128 × 128 products 2,097,152 FLOPs, 64 × 64 × 128 ones 1,048,576, the inverse
/// 87,381.33.
const HAND_COUNTS: [(&str, i64, (f64, f64, f64)); 26] = [
    // Chunk tables: cu_seqlens (2 × 4 B) in, its sanitized int64 copy (2 × 8 B) out and read
    // back, the table (2 × 4 B) out; the overlapped plans' also write the chunk order (3 × 4 B)
    // and zero the flags (3 chunks × 1 head × 4 B).
    ("gdn_chunk_offsets", 1, (24.0, 24.0, 0.0)),
    ("gdn_bwd_chunk_order_rev", 1, (24.0, 48.0, 0.0)),
    // Slim prep: q, k (2 × 130 × 256) + g, β (2 × 130 × 4) in; per chunk T, A (packed), scalars,
    // Γ_last (11,268 B) out; per chunk K Kᵀ, Q Kᵀ and the inverse.
    (
        "gdn_fwd_slimprep_bf16_k128",
        1,
        (67_600.0, 33_804.0, 6_553_600.0),
    ),
    // Slim output scan: q, k, v (3 × 33,280) + per chunk T, A (packed), scalars, Γ_last
    // (3 × 11,268) + the initial state in; O (33,280) + the final state out; per chunk 3 d²
    // products + 2.
    (
        "gdn_fwd_slimscan_bf16_k128_w4",
        1,
        (199_180.0, 98_816.0, 25_165_824.0),
    ),
    // Seeded per piece (w4d): two seeds instead of the initial state.
    (
        "gdn_fwd_slimscan_bf16_k128_w4d",
        2,
        (264_716.0, 98_816.0, 25_165_824.0),
    ),
    // Slim summary over piece 0 (2 chunks, 128 tokens): k, v, T, scalars, Γ_last in; H_0, M_0
    // out; for H and M per chunk X kᵀ, the update (d²) and Z Tᵀ (64² d).
    (
        "gdn_fwd_slimsum_bf16_k128",
        2,
        (77_832.0, 131_072.0, 20_971_520.0),
    ),
    // The chain (both directions, every body): M_0, H_0 and the first seed in, two seeds out,
    // one d³ step.
    (
        "gdn_fwd_chain3_k128",
        2,
        (196_608.0, 131_072.0, 4_194_304.0),
    ),
    (
        "gdn_bwd_pchain3_k128",
        2,
        (196_608.0, 131_072.0, 4_194_304.0),
    ),
    (
        "gdn_bwd_dchain_k128",
        2,
        (196_608.0, 131_072.0, 4_194_304.0),
    ),
    // Session 32, the first piece early, at three pieces (one chunk each: 64, 64, 2 tokens):
    // w4dgx0 over chunk 0 (q, k, v, T, A, scalars, Γ_last, the initial state in; O and seed 1
    // out); w4dgxr over chunks 1, 2 (66 tokens, two seeds in, the final state out); slimsum_gxr
    // over chunk 1 (H_1, M_1 out); chain3r: M_1, H_1, seed 1 in, seed 2 out, one d³ step.
    (
        "gdn_fwd_slimscan_bf16_k128_w4dgx0",
        3,
        (125_956.0, 81_920.0, 8_388_608.0),
    ),
    // Session 34: w4gx0, the same first piece on w4gx's three stages (the same bytes and FLOPs).
    (
        "gdn_fwd_slimscan_f16_k128_w4gx0",
        3,
        (125_956.0, 81_920.0, 8_388_608.0),
    ),
    (
        "gdn_fwd_slimscan_bf16_k128_w4dgxr",
        3,
        (204_296.0, 82_432.0, 16_777_216.0),
    ),
    (
        "gdn_fwd_slimsum_bf16_k128_gxr",
        3,
        (38_916.0, 131_072.0, 10_485_760.0),
    ),
    // Session 35: gxr3, the same summary on three stages (the same bytes and FLOPs).
    (
        "gdn_fwd_slimsum_f16_k128_gxr3",
        3,
        (38_916.0, 131_072.0, 10_485_760.0),
    ),
    (
        "gdn_fwd_chain3r_k128",
        3,
        (196_608.0, 65_536.0, 4_194_304.0),
    ),
    // The backward's KEEP prep: q, k, v, g, β in; W, Q⁺, Kᴿ, Ũᵀ, E, A, T, Γ_last, Γ, β out;
    // Q Kᵀ, K Kᵀ, T E, T Y and the inverse.
    (
        "gdn_bwd_prep15_bf16_k128",
        1,
        (100_880.0, 296_460.0, 12_845_056.0),
    ),
    // The forward's full prep writes neither E, T, Γ nor β: 3 × (4 × 16,384 + 8,192 + 4) out.
    (
        "gdn_fwd_prep15_bf16_k128",
        1,
        (100_880.0, 221_196.0, 12_845_056.0),
    ),
    // The replay r4: W, Kᴿ, Ũᵀ, Γ_last per chunk and the initial state in, S_c (io) out.
    (
        "gdn_bwd_fscan_r4_bf16_k128",
        1,
        (213_004.0, 98_304.0, 12_582_912.0),
    ),
    // The storing replay (session 27): also each chunk's U tile out, 3 × 16,384 B more.
    (
        "gdn_bwd_fscan_gx4u_bf16_k128",
        1,
        (213_004.0, 147_456.0, 12_582_912.0),
    ),
    // The reverse scan: dO, A, T, Kᴿ, Q⁺, E, Γ_last, d_final_state in; dS' (io), dR (fp32),
    // d_initial_state out.
    (
        "gdn_bwd_dscan_ov2_bf16_k128",
        1,
        (295_436.0, 262_144.0, 25_165_824.0),
    ),
    // Session 21's io dR (dscan_ov5dr): dR 16,384 B per chunk instead of 32,768.
    (
        "gdn_bwd_dscan_ov5dr_bf16_k128",
        1,
        (295_436.0, 212_992.0, 25_165_824.0),
    ),
    // The reverse summary over piece 1 (chunk 2, 2 tokens): G_1 out.
    (
        "gdn_bwd_dsum1_bf16_k128",
        2,
        (66_052.0, 65_536.0, 8_388_608.0),
    ),
    // The backward's piece summaries: W, Kᴿ, Γ_last over all chunks, Ũᵀ over piece 0; H_0, M_0,
    // Mᵀ_1 out; the transitions over every chunk, H over piece 0.
    (
        "gdn_bwd_psum1_bf16_k128",
        2,
        (131_084.0, 196_608.0, 20_971_520.0),
    ),
    // The token stage: q, k, v, dO, W, Ũᵀ, S_c, dS', dR, Γ, β in; dq, dk, dv, dG, dBeta out.
    (
        "gdn_bwd_tokens_tc12_ov_bf16_k128",
        1,
        (527_872.0, 100_880.0, 47_185_920.0),
    ),
    // tc13 reads the io dR: 3 × 16,384 B less.
    (
        "gdn_bwd_tokens_tc13_ov_bf16_k128",
        1,
        (478_720.0, 100_880.0, 47_185_920.0),
    ),
    // tc16 reads U instead of W and Ũᵀ: 3 × 16,384 B less, and no U product (3 × 64 · 128²
    // multiply-adds, 6,291,456 FLOPs, fewer).
    (
        "gdn_bwd_tokens_tc16_ov_bf16_k128",
        1,
        (429_568.0, 100_880.0, 40_894_464.0),
    ),
];

#[test]
fn hand_computed_counts_per_family() {
    let ok = |a: f64, b: f64| (a - b).abs() <= 1e-9 * b.abs().max(1.0);
    for (entry, pieces, want) in HAND_COUNTS {
        let got = kernel_counts(entry, &Shape::new(&[130], 1, 128, pieces)).expect(entry);
        assert!(
            ok(got.read, want.0) && ok(got.write, want.1) && ok(got.flops, want.2),
            "{entry}: got {got:?}, want {want:?}"
        );
    }
}

/// The session-18 ncu profile (H200, main 2f7c732, /work/wt/prof18): `dram__bytes_read.sum` of
/// the kernels whose inputs are each read once from DRAM (bytes): (shape index, entry, read).
/// The preps (which re-read q / k tiles the scalars' pass evicted, and whose ncu reads exceed
/// the model by 4-15 %) and every write (L2 holds up to ~50 MB of dirty lines at a kernel's
/// end, so DRAM writes fall short of the model by 2-10 %) are compared in bench/gdn_results.md.
/// The slim scan's row: session 18's measurement of the full 64 × 64 T, A tiles less the 6,144 B
/// per (chunk, head) that the packed tiles (session 24) no longer read, 512 × 16 units at shape
/// 0 (not re-profiled).
const NCU_READS: [(usize, &str, f64); 7] = [
    (
        0,
        "gdn_fwd_slimscan_bf16_k128_w4",
        549.57e6 - 8192.0 * 6144.0,
    ),
    (0, "gdn_bwd_fscan_r4_bf16_k128", 406.99e6),
    (0, "gdn_bwd_dscan_ov2_bf16_k128", 675.37e6),
    (0, "gdn_bwd_tokens_tc12_ov_bf16_k128", 1.617011e9),
    (2, "gdn_bwd_fscan_r4_bf16_k128", 846.91e6),
    (2, "gdn_bwd_dscan_ov2_bf16_k128", 1.375846e9),
    (2, "gdn_bwd_tokens_tc12_ov_bf16_k128", 3.233943e9),
];

#[test]
fn model_reads_match_the_ncu_profile() {
    for (si, entry, dram) in NCU_READS {
        let (_, lens, hh) = BENCH_SHAPES[si];
        let got = kernel_counts(entry, &Shape::new(lens, hh, 128, 1)).expect(entry);
        let rel = got.read / dram - 1.0;
        assert!(
            rel.abs() < 0.02,
            "{entry} at {}: model reads {:.1} MB, ncu {:.1} MB",
            BENCH_SHAPES[si].0,
            got.read / 1e6,
            dram / 1e6
        );
    }
}

/// The forward schedules tests/gpu_gdn_bench.rs times (`DNNPLAN_GDN_FWD_SCAN`,
/// `DNNPLAN_GDN_FWD_PIECES`; "" = the rule).
const SCHEDULES: [(&str, &str, &str); 9] = [
    ("default", "", ""),
    ("w4", "w4", "1"),
    ("w8", "w8", "1"),
    ("w8gxs", "w8gxs", "1"),
    ("w4gxt", "w4gxt", "1"),
    ("w4gxu", "w4gxu", "1"),
    ("w4gxv", "w4gxv", "1"),
    ("w4-p4", "w4", "4"),
    ("w4-p8", "w4", "8"),
];

/// Held by every test of this binary that reads or sets the GDN switches.
static SWITCHES: Mutex<()> = Mutex::new(());

/// Sets (Some) or removes (None) an environment variable (under [`SWITCHES`]).
fn set_env(name: &str, value: Option<&str>) {
    // SAFETY: every test of this binary that reads the GDN switches holds SWITCHES.
    unsafe {
        match value {
            Some(v) => std::env::set_var(name, v),
            None => std::env::remove_var(name),
        }
    }
}

#[test]
fn benchmark_plans_launch_only_modelled_kernels() {
    let _switches = SWITCHES.lock().unwrap_or_else(|e| e.into_inner());
    for (name, lens, hh) in BENCH_SHAPES {
        // The one-pass forward (session 49) where the rule takes it: one modelled launch.
        set_env("DNNPLAN_GDN_FWD_FUSED", None);
        let (launches, cut) = bench_launches("gdn", lens, hh, H200_SMS);
        if launches[0].0.starts_with("gdn_fwd_fused16_") {
            assert_eq!(launches.len(), 1, "{name} one pass: {launches:?}");
            print_models(name, "fwd/one-pass", &launches, lens, hh, cut);
        }
        // The two-pass schedules.
        set_env("DNNPLAN_GDN_FWD_FUSED", Some("0"));
        for (label, scan, pieces) in SCHEDULES {
            set_env("DNNPLAN_GDN_FWD_SCAN", (!scan.is_empty()).then_some(scan));
            set_env(
                "DNNPLAN_GDN_FWD_PIECES",
                (!pieces.is_empty()).then_some(pieces),
            );
            let (launches, cut) = bench_launches("gdn", lens, hh, H200_SMS);
            assert!(launches.len() >= 3, "{name} {label}: {launches:?}");
            if let Ok(forced) = pieces.parse::<i64>() {
                assert_eq!(cut.pieces, forced, "{name} {label}");
            }
            print_models(name, &format!("fwd/{label}"), &launches, lens, hh, cut);
        }
        set_env("DNNPLAN_GDN_FWD_SCAN", None);
        set_env("DNNPLAN_GDN_FWD_PIECES", None);
        // The piece path with its first piece early (session 32), by rule and at 2 and 3 pieces,
        // on both first scans (session 34).
        set_env("DNNPLAN_GDN_FWD_PIECE_FIRST", Some("1"));
        for fscan in ["w4dgx0", "w4gx0"] {
            set_env("DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN", Some(fscan));
            for pieces in [None, Some("2"), Some("3")] {
                set_env("DNNPLAN_GDN_FWD_PIECES", pieces);
                let (launches, cut) = bench_launches("gdn", lens, hh, H200_SMS);
                assert!(launches.len() >= 3, "{name} first: {launches:?}");
                print_models(
                    name,
                    &format!("fwd/first-{fscan}"),
                    &launches,
                    lens,
                    hh,
                    cut,
                );
            }
        }
        set_env("DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN", None);
        // Session 35: the summary beside the first piece on three stages.
        set_env("DNNPLAN_GDN_FWD_PIECE_FIRST_SUM", Some("gxr3"));
        for pieces in [None, Some("3")] {
            set_env("DNNPLAN_GDN_FWD_PIECES", pieces);
            let (launches, p) = bench_launches("gdn", lens, hh, H200_SMS);
            assert!(launches.len() >= 3, "{name} first-sum: {launches:?}");
            print_models(name, "fwd/first-gxr3", &launches, lens, hh, p);
        }
        set_env("DNNPLAN_GDN_FWD_PIECE_FIRST_SUM", None);
        set_env("DNNPLAN_GDN_FWD_PIECE_FIRST", None);
        set_env("DNNPLAN_GDN_FWD_PIECES", None);
        set_env("DNNPLAN_GDN_FWD_FUSED", None);
        let (launches, cut) = bench_launches("gdn_bwd", lens, hh, H200_SMS);
        assert!(launches.len() >= 4, "{name} bwd: {launches:?}");
        print_models(name, "bwd", &launches, lens, hh, cut);
    }
}

/// Asserts every launch has a model with positive bytes and prints its `MODEL` line.
fn print_models(
    name: &str,
    dir: &str,
    launches: &[dnnplan::engines::gdn::pdl::PlannedLaunch],
    lens: &[i64],
    hh: i64,
    cut: Cut,
) {
    let shape = Shape::cut(lens, hh, 128, cut);
    let pieces = cut.pieces;
    for (entry, grid, threads, _, _) in launches {
        let c = kernel_counts(entry, &shape).unwrap_or_else(|| panic!("{name} {dir}: {entry}"));
        assert!(c.read > 0.0 && c.write > 0.0, "{name} {dir}: {entry} {c:?}");
        println!(
            "MODEL {name} {dir} P={pieces} {entry} grid={grid:?}x{threads} read {:.0} write {:.0} flops {:.0}",
            c.read, c.write, c.flops
        );
    }
}

/// The benchmark's printed parts (tests/gpu_gdn_bench.rs) of the default plans at every shape,
/// with made-up times (launch i: 0.1 · (i + 1) ms): one part per launch, labelled without
/// direction / dtype / K, with the model's GB/s and TFLOP/s, plus one part per overlapped pair
/// over both launches. Prints the `BENCH ours` lines they make (bench/gdn_bench_table.py's input).
#[test]
fn benchmark_parts_of_the_default_plans() {
    let _switches = SWITCHES.lock().unwrap_or_else(|e| e.into_inner());
    for (name, lens, hh) in BENCH_SHAPES {
        for (op, dir) in [("gdn", "fwd"), ("gdn_bwd", "bwd")] {
            let (launches, cut) = bench_launches(op, lens, hh, H200_SMS);
            let shape = Shape::cut(lens, hh, 128, cut);
            let times: Vec<f64> = (1..=launches.len()).map(|i| 0.1 * i as f64).collect();
            let parts = launch_parts(&launches, &shape, &times);
            let pairs: Vec<usize> = (1..launches.len())
                .filter(|&i| overlapped(&launches[i - 1].0) && overlapped(&launches[i].0))
                .collect();
            assert_eq!(parts.len(), launches.len() + pairs.len(), "{name} {dir}");
            let mut k = 0;
            for (i, (entry, ..)) in launches.iter().enumerate() {
                let c = kernel_counts(entry, &shape).expect(entry);
                let want = format!(
                    "{} {:.4} ms {:.0} GB/s {:.1} TFLOP/s",
                    label(entry),
                    times[i],
                    c.bytes() / (times[i] * 1e-3) / 1e9,
                    c.flops / (times[i] * 1e-3) / 1e12
                );
                assert_eq!(parts[k], want, "{name} {dir}");
                k += 1;
                if pairs.contains(&i) {
                    let prev = &launches[i - 1].0;
                    let both = kernel_counts(prev, &shape).expect(prev).plus(c);
                    let ms = times[i - 1] + times[i];
                    assert!(
                        parts[k].starts_with(&format!(
                            "{}+{} {ms:.4} ms ",
                            label(prev),
                            label(entry)
                        )),
                        "{name} {dir}: {}",
                        parts[k]
                    );
                    assert!(
                        parts[k]
                            .contains(&format!(" {:.0} GB/s ", both.bytes() / (ms * 1e-3) / 1e9)),
                        "{name} {dir}: {}",
                        parts[k]
                    );
                    k += 1;
                }
            }
            let whole: f64 = times.iter().sum();
            let head = if dir == "fwd" {
                format!(
                    "{whole:.4} sched=default pieces={} min-traffic 0 GB/s",
                    cut.pieces
                )
            } else {
                format!("{whole:.4} pieces={}", cut.pieces)
            };
            println!("BENCH ours {dir} {name} {head} | {}", parts.join(" | "));
        }
    }
}

/// The model's pieces (`Shape::piece`) tile each sequence's chunks in order, the first piece
/// `ceil(per · s / 256)` chunks under a first scale s (the even cut's otherwise), and the spans
/// the models add up are unions of those pieces.
#[test]
fn model_pieces_tile_every_sequence_under_every_cut() {
    for p in 1..=9i64 {
        for s in [0i64, 200, 256, 288, 512] {
            for nc in 0..=300i64 {
                let lens = [nc * 64];
                let shape = Shape::cut(
                    &lens,
                    1,
                    128,
                    Cut {
                        pieces: p,
                        first_scale: s,
                    },
                );
                let mut at = 0;
                for j in 0..p {
                    let (a, b) = shape.piece(nc, j);
                    assert_eq!(
                        a,
                        at,
                        "P={p} s={s} nc={nc} piece {j} starts where {} ended",
                        j - 1
                    );
                    assert!(b >= a, "P={p} s={s} nc={nc} piece {j}");
                    at = b;
                }
                assert_eq!(at, nc, "P={p} s={s} nc={nc}: the pieces cover every chunk");
                let per = (nc + p - 1) / p;
                let first = shape.piece(nc, 0).1;
                let want_first = if s > 0 && p >= 2 {
                    nc.min((per * s + 255) / 256)
                } else {
                    nc.min(per)
                };
                assert_eq!(first, want_first, "P={p} s={s} nc={nc}: piece 0");
                let chunks = |span| shape.span(span).0 as i64;
                let last = nc - shape.piece(nc, p - 1).0;
                assert_eq!(chunks(Span::All), nc);
                assert_eq!(
                    chunks(Span::First) + chunks(Span::Tail),
                    nc,
                    "P={p} s={s} nc={nc}"
                );
                if p >= 2 {
                    assert_eq!(chunks(Span::Head) + last, nc, "P={p} s={s} nc={nc}");
                    assert_eq!(
                        chunks(Span::First) + chunks(Span::Mid) + last,
                        nc,
                        "P={p} s={s} nc={nc}"
                    );
                }
            }
        }
    }
}
