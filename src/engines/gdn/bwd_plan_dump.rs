//! The backward plan dump (session 30, helper bt30): builds [`GdnBwdPlan`] for a matrix of
//! shapes (uncut in one wave and in several, the piece chain, ragged, grouped heads, K = 64 and
//! 128, bf16 and f16, `batch_invariant`, reused and seeding checkpoints, without the parameter
//! gradients, another SM count) under every value of every knob the plan reads (the
//! `DNNPLAN_GDN_BWD_*` switches, `DNNPLAN_GDN_FWD_PREP`, `DNNPLAN_GDN_CHAIN`, `DNNPLAN_GDN_PDL`;
//! the prep form and the piece count crossed with every other knob and every pair of the knobs
//! that choose kernels) and writes each plan's launches and decisions
//! ([`GdnBwdPlan::describe`]) to a text file. A restructure of the plan code dumps before and
//! after and diffs (empty: no launch changed). Ignored by default; the env is process-global, so
//! run it alone:
//!
//! ```text
//! DNNPLAN_BWD_PLAN_DUMP=/tmp/before.txt cargo test --release --lib bwd_plan_dump -- --ignored --test-threads=1
//! ```

use std::fmt::Write as _;

use super::analyzer::{GdnFacts, GdnOp, test_facts};
use super::backward::{GdnBwdPlan, checkpoint_rows, kernel_names};
use super::engine::PrepVariant;
use super::engine::tests::{bound, with_checkpoints};
use crate::ir::DataType;

/// Every environment variable the dump sets (cleared before each plan).
const KNOBS: [&str; 15] = [
    "DNNPLAN_GDN_BWD_PREP",
    "DNNPLAN_GDN_BWD_PIECES",
    "DNNPLAN_GDN_BWD_SLIMPREP",
    "DNNPLAN_GDN_BWD_DSCAN_SPLIT",
    "DNNPLAN_GDN_BWD_DSCAN",
    "DNNPLAN_GDN_BWD_FSCAN",
    "DNNPLAN_GDN_BWD_FSCAN_PER_SM",
    "DNNPLAN_GDN_BWD_TOKENS",
    "DNNPLAN_GDN_BWD_OVERLAP",
    "DNNPLAN_GDN_BWD_PIECE_PASSES",
    "DNNPLAN_GDN_BWD_CKPT_REPLAY",
    "DNNPLAN_GDN_BWD_STEPS",
    "DNNPLAN_GDN_FWD_PREP",
    "DNNPLAN_GDN_CHAIN",
    "DNNPLAN_GDN_PDL",
];

/// The outer knobs, crossed with everything else: the prep form and the piece count.
const OUTER: [(&str, &[&str]); 2] = [
    (
        "DNNPLAN_GDN_BWD_PREP",
        &["", "full", "scaled", "slim", "slimp", "x"],
    ),
    ("DNNPLAN_GDN_BWD_PIECES", &["", "8"]),
];

/// Knobs whose values are set one at a time and, for those of [`PAIRED`], in pairs.
const INNER: [(&str, &[&str]); 14] = [
    ("DNNPLAN_GDN_BWD_SLIMPREP", &["v16", "v15", "x"]),
    ("DNNPLAN_GDN_BWD_DSCAN_SPLIT", &["1", "2", "x"]),
    (
        "DNNPLAN_GDN_BWD_DSCAN",
        &[
            "v1", "w8", "ov", "ov2", "ov5", "ov2gx", "ov2gxu", "ov5dr", "x",
        ],
    ),
    (
        "DNNPLAN_GDN_BWD_FSCAN",
        &["v1", "r4", "gx", "gx3", "gx4", "gxr", "x"],
    ),
    ("DNNPLAN_GDN_BWD_FSCAN_PER_SM", &["1", "2"]),
    (
        "DNNPLAN_GDN_BWD_TOKENS",
        &["tc11", "tc12", "tc13", "tc16", "tw1", "tw3", "tw7", "x"],
    ),
    ("DNNPLAN_GDN_BWD_OVERLAP", &["0", "1"]),
    ("DNNPLAN_GDN_BWD_PIECE_PASSES", &["p1", "s2"]),
    ("DNNPLAN_GDN_FWD_PREP", &["v14", "v15"]),
    ("DNNPLAN_GDN_BWD_PIECES", &["1", "2", "4", "64"]),
    ("DNNPLAN_GDN_BWD_CKPT_REPLAY", &["p1", "r4"]),
    ("DNNPLAN_GDN_BWD_STEPS", &["3", "0"]),
    ("DNNPLAN_GDN_CHAIN", &["v1", "v2", "v3"]),
    ("DNNPLAN_GDN_PDL", &["0", "1", "early"]),
];

/// How many of [`INNER`]'s knobs (its first ones) are also set in pairs.
const PAIRED: usize = 9;

/// One shape of the matrix: its name, the facts and the SM count.
struct Case {
    name: String,
    facts: GdnFacts,
    sms: u64,
}

/// Backward facts with every port bound: `n` sequences of `t` tokens in all, heads
/// (q, k, v, out), K = V = `d`, io `io`.
fn shape(n: i64, t: i64, heads: (i64, i64, i64, i64), d: i64, io: DataType, bi: bool) -> GdnFacts {
    let mut f = bound(test_facts(GdnOp::Backward, n, t, heads.3, d, bi));
    f.heads = heads;
    f.io = io;
    for (_, port) in f.ports.iter_mut() {
        if port.dtype == DataType::Bfloat16 {
            port.dtype = io;
        }
    }
    f
}

/// `f` with checkpoints every `cadence` tokens of `dtype` (the spec's row count).
fn ckpt(f: GdnFacts, cadence: i64, dtype: DataType) -> GdnFacts {
    let (n, t, ho, d) = (f.n_seqs, f.total_tokens, f.heads.3, f.k);
    let mut f = with_checkpoints(f, cadence, dtype, false);
    let rows = checkpoint_rows(n as u64, t as u64, cadence as u64) as i64;
    let (_, port) = f.ports.last_mut().expect("state_checkpoints");
    port.dims = vec![rows, ho, d, d];
    f
}

/// The matrix of shapes.
fn cases() -> Vec<Case> {
    use DataType::{Bfloat16 as Bf, Float, Half};
    let h = |x| (x, x, x, x);
    let mut out = Vec::new();
    let mut add = |name: &str, facts: GdnFacts, sms: u64| {
        out.push(Case {
            name: name.into(),
            facts,
            sms,
        })
    };
    add("uncut1w", shape(4, 8192, h(16), 128, Bf, false), 132);
    add("uncut1w_f16", shape(4, 8192, h(16), 128, Half, false), 132);
    add("uncut2w", shape(16, 2048, h(32), 128, Bf, false), 132);
    add("pieces", shape(1, 32768, h(16), 128, Bf, false), 132);
    add("pieces_f16", shape(1, 32768, h(16), 128, Half, false), 132);
    add("ragged", shape(5, 7537, h(16), 128, Bf, false), 132);
    add("ragged32", shape(10, 20011, h(32), 128, Bf, false), 132);
    add(
        "grouped",
        shape(4, 8192, (4, 4, 16, 16), 128, Bf, false),
        132,
    );
    add(
        "grouped_pieces",
        shape(1, 32768, (4, 16, 8, 16), 128, Bf, false),
        132,
    );
    add("k64_uncut1w", shape(4, 8192, h(16), 64, Bf, false), 132);
    add("k64_uncut2w", shape(16, 2048, h(32), 64, Half, false), 132);
    add("k64_pieces", shape(1, 32768, h(16), 64, Bf, false), 132);
    add("bi_uncut", shape(4, 8192, h(16), 128, Bf, true), 132);
    add("bi_long", shape(1, 32768, h(16), 128, Bf, true), 132);
    add(
        "reuse_uncut",
        ckpt(shape(4, 8192, h(16), 128, Bf, false), 64, Bf),
        132,
    );
    add(
        "reuse_pieces",
        ckpt(shape(1, 32768, h(16), 128, Bf, false), 64, Bf),
        132,
    );
    add(
        "seed_uncut",
        ckpt(shape(4, 8192, h(16), 128, Bf, false), 128, Bf),
        132,
    );
    add(
        "seed_uncut_f32",
        ckpt(shape(4, 8192, h(16), 128, Bf, false), 64, Float),
        132,
    );
    add(
        "seed_pieces",
        ckpt(shape(1, 32768, h(16), 128, Bf, false), 256, Float),
        132,
    );
    add(
        "seed_k64",
        ckpt(shape(16, 2048, h(32), 64, Bf, false), 128, Bf),
        132,
    );
    let mut no_params = shape(16, 2048, h(32), 128, Bf, false);
    no_params
        .ports
        .retain(|(p, _)| !matches!(*p, "d_a_log" | "d_dt_bias"));
    add("no_params", no_params, 132);
    add("tiny", shape(1, 100, h(2), 64, Bf, false), 132);
    // The benchmark shapes ((4, 8192, 16) and (16, 2048, 32): tokens per sequence).
    add(
        "bench_4x8192",
        shape(4, 4 * 8192, h(16), 128, Bf, false),
        132,
    );
    add(
        "bench_16x2048",
        shape(16, 16 * 2048, h(32), 128, Bf, false),
        132,
    );
    add("sms66_uncut", shape(4, 8192, h(16), 128, Bf, false), 66);
    add("sms66_pieces", shape(1, 32768, h(16), 128, Bf, false), 66);
    out
}

/// The inner knob settings: none, each value alone, each pair of values of two [`PAIRED`] knobs.
fn inner_settings() -> Vec<Vec<(&'static str, &'static str)>> {
    let mut out = vec![Vec::new()];
    for (knob, values) in INNER {
        for value in values {
            out.push(vec![(knob, *value)]);
        }
    }
    for (i, (a, av)) in INNER[..PAIRED].iter().enumerate() {
        for (b, bv) in &INNER[i + 1..PAIRED] {
            for x in av.iter() {
                for y in bv.iter() {
                    out.push(vec![(*a, *x), (*b, *y)]);
                }
            }
        }
    }
    out
}

/// Sets the knobs `set` after clearing every knob of [`KNOBS`].
fn set_knobs(set: &[(&str, &str)]) {
    for knob in KNOBS {
        // SAFETY: the dump is an ignored test run alone (one thread, no other test reads env).
        unsafe { std::env::remove_var(knob) };
    }
    for (knob, value) in set {
        if !value.is_empty() {
            // SAFETY: as above.
            unsafe { std::env::set_var(knob, value) };
        }
    }
}

/// Writes the dump (see the module doc) to `DNNPLAN_BWD_PLAN_DUMP` (default
/// `/tmp/bwd_plan_dump.txt`).
#[test]
#[ignore = "diagnostic: run alone, see the module doc"]
fn bwd_plan_dump() {
    let path =
        std::env::var("DNNPLAN_BWD_PLAN_DUMP").unwrap_or_else(|_| "/tmp/bwd_plan_dump.txt".into());
    let inner = inner_settings();
    let mut text = String::new();
    let mut plans = 0usize;
    for case in cases() {
        let tag = if case.facts.io == DataType::Half {
            "f16"
        } else {
            "bf16"
        };
        for prep in OUTER[0].1 {
            for pieces in OUTER[1].1 {
                for set in &inner {
                    let mut all = vec![(OUTER[0].0, *prep), (OUTER[1].0, *pieces)];
                    all.extend(set.iter().copied());
                    // An inner PIECES value replaces the outer one.
                    if set.iter().any(|(k, _)| *k == OUTER[1].0) && !pieces.is_empty() {
                        continue;
                    }
                    set_knobs(&all);
                    let names = kernel_names(tag, case.facts.k, PrepVariant::from_env()).to_vec();
                    let shown: Vec<String> = all
                        .iter()
                        .filter(|(_, v)| !v.is_empty())
                        .map(|(k, v)| format!("{}={v}", k.trim_start_matches("DNNPLAN_GDN_")))
                        .collect();
                    let _ = writeln!(text, "# {} sms={} {}", case.name, case.sms, shown.join(" "));
                    match GdnBwdPlan::<String>::new(&case.facts, names, case.sms) {
                        Ok(plan) => text.push_str(&plan.describe()),
                        Err(e) => {
                            let _ = writeln!(text, "  error: {e}");
                        }
                    }
                    plans += 1;
                }
            }
        }
    }
    set_knobs(&[]);
    let _ = writeln!(text, "# plans: {plans}");
    std::fs::write(&path, text).expect("write the dump");
    eprintln!("bwd_plan_dump: {plans} plans -> {path}");
}
