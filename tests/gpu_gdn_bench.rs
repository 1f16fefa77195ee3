//! GDN benchmark, our side (feature `gpu-tests`; runs only when `DNNPLAN_GDN_BENCH` is set, from
//! bench/gdn_bench_run.sh): the `gdn_sm90` forward and backward through the whole stack (IR graph
//! -> plan list -> build -> execute on a caller stream) at the issue's shapes (bf16, K = V = 128,
//! fp32 gates/beta, fp32 initial and final states), per forward scan schedule
//! (`DNNPLAN_GDN_FWD_SCAN` / `DNNPLAN_GDN_FWD_PIECES`), each kernel's time as the difference of
//! whole-execute times cut after every launch (`DNNPLAN_GDN_FWD_STEPS`), with each kernel's
//! achieved bandwidth and TFLOP/s from analytic byte and flop counts (below). CUDA events, median of
//! 10 executes after 3 warm-ups. Prints `BENCH ours ...` lines for bench/gdn_bench_table.py; asserts
//! nothing about speed.
//!
//! Counts (d = K = V, C = 64, Nc = chunk slots Σ ceil(T_b / 64), one head's data once, 2-byte io):
//! prep reads q, k, v, g, beta and writes W, Q⁺, Kᴿ, Ũᵀ (64·d each), A (64·64), Γ_last per chunk;
//! flops 2·64·64·d for each of Q Kᵀ, K Kᵀ, T E, T Y and 64³/3 for the inverse. The output scan
//! reads W, Q⁺, Kᴿ, A, Ũᵀ per chunk (once: the value halves share them through L2), the seed state,
//! writes O and the final state; flops 2·64·d² for each of X Wᵀ, X Q⁺ᵀ, Uᵀ Kᴿ plus 2·64·64·d for
//! Uᵀ Aᵀ. The piece summary reads W, Kᴿ (and Ũᵀ) for (P−1)/P of the chunks, writes H and M; flops
//! 2 × 2·2·64·d². The chain reads M, H, the initial state and writes the seeds; flops 2·d³ per step.
#![cfg(feature = "gpu-tests")]

#[path = "support/gdn_gpu.rs"]
mod gdn_gpu;

use dnnplan::ir::DataType;
use gdn_gpu::{BENCH_SHAPES, BenchInputs, Caller, env_list, opted_in, set_env, size, time_graph};

/// Analytic (bytes, flops) of one forward kernel (see the module doc).
fn kernel_counts(kernel: &str, lens: &[i64], ho: i64, d: i64, pieces: i64) -> (f64, f64) {
    let (t, n) = (lens.iter().sum::<i64>() as f64, lens.len() as f64);
    let nc = lens.iter().map(|l| (l + 63) / 64).sum::<i64>() as f64;
    let (h, d, c) = (ho as f64, d as f64, 64f64);
    let p = pieces as f64;
    let state = n * h * d * d * 4.0;
    match kernel {
        "offsets" => ((lens.len() as f64 + 1.0) * 8.0, 0.0),
        "prep" => (
            t * h * (3.0 * d * 2.0 + 8.0) + nc * h * (4.0 * c * d * 2.0 + c * c * 2.0 + 4.0),
            nc * h * (4.0 * 2.0 * c * c * d + c * c * c / 3.0),
        ),
        "sum" => {
            let frac = (p - 1.0) / p;
            (
                frac * nc * h * (2.0 * c * d * 2.0 + d * c * 2.0) + 2.0 * (p - 1.0) * state,
                frac * nc * h * 2.0 * 2.0 * 2.0 * c * d * d,
            )
        }
        "chain" => (
            (3.0 * (p - 1.0) + 1.0 + p) * state,
            (p - 1.0) * n * h * 2.0 * d * d * d,
        ),
        "scan" => (
            nc * h * (3.0 * c * d * 2.0 + c * c * 2.0 + d * c * 2.0 + 4.0)
                + t * h * d * 2.0
                + if p > 1.0 { p * state } else { state }
                + state,
            nc * h * (3.0 * 2.0 * c * d * d + 2.0 * c * c * d),
        ),
        _ => (0.0, 0.0),
    }
}

/// Sets (or removes, for "") the forward's schedule overrides.
fn set_schedule(scan: &str, pieces: &str) {
    set_schedule_sum(scan, pieces, "");
}

/// [`set_schedule`] with the piece summary pass (`DNNPLAN_GDN_FWD_SUM`).
fn set_schedule_sum(scan: &str, pieces: &str, sum: &str) {
    for (k, v) in [
        ("DNNPLAN_GDN_FWD_SCAN", scan),
        ("DNNPLAN_GDN_FWD_PIECES", pieces),
        ("DNNPLAN_GDN_FWD_SUM", sum),
    ] {
        set_env(k, (!v.is_empty()).then_some(v));
    }
}

/// The engine's default piece count at K = V = 128 for `pairs` (sequence, head) pairs on 132 SMs
/// (`FwdChoice::default_for` with the first row of `FWD_PIECE_PATH`: the scan's and the
/// summary's blocks per SM, `ENGINE_PIECE_PER_SM` below).
fn default_pieces(pairs: i64) -> i64 {
    let (scan_warps, scan_per_sm, sum_per_sm) = ENGINE_PIECE_PER_SM;
    let scan_blocks = pairs * (128 / (16 * scan_warps));
    (scan_per_sm * 132 / scan_blocks)
        .min(1 + sum_per_sm * 132 / (4 * pairs))
        .clamp(1, 16)
}

/// (scan warps, scan blocks per SM, summary blocks per SM) of the engine's default piece path.
const ENGINE_PIECE_PER_SM: (i64, i64, i64) = (4, 2, 3);

/// The shape indices `DNNPLAN_GDN_BENCH_SHAPES` (space-separated) keeps (`None`: every shape).
fn kept_shapes() -> Option<Vec<usize>> {
    std::env::var("DNNPLAN_GDN_BENCH_SHAPES").ok().map(|s| {
        s.split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect()
    })
}

#[test]
fn gdn_benchmark_ours() {
    if !opted_in("DNNPLAN_GDN_BENCH") {
        return;
    }
    let caller = Caller::new();
    // (label, DNNPLAN_GDN_FWD_SCAN, DNNPLAN_GDN_FWD_PIECES, DNNPLAN_GDN_FWD_SUM): "" = the
    // engine's default. (The session-1 prep and scan, "v1", are no longer bundled since session
    // 12.) DNNPLAN_GDN_BENCH_SCHEDULES=label:scan:pieces[:sum],... replaces the list (in order).
    let fixed: [(&str, &str, &str, &str); 5] = [
        ("default", "", "", ""),
        ("w4", "w4", "1", ""),
        ("w8", "w8", "1", ""),
        ("w4-p4", "w4", "4", ""),
        ("w4-p8", "w4", "8", ""),
    ];
    let listed = std::env::var("DNNPLAN_GDN_BENCH_SCHEDULES").unwrap_or_default();
    let schedules: Vec<(&str, &str, &str, &str)> = if listed.is_empty() {
        fixed.to_vec()
    } else {
        listed
            .split(',')
            .map(|e| {
                let mut f = e.split(':');
                let mut next = || f.next().unwrap_or("");
                (next(), next(), next(), next())
            })
            .collect()
    };
    // DNNPLAN_GDN_BENCH_SHAPES="0 2" keeps those shapes only (e.g. under a profiler).
    let keep = kept_shapes();
    for (si, (name, lens, hh)) in BENCH_SHAPES.into_iter().enumerate() {
        if keep.as_ref().is_some_and(|k| !k.contains(&si)) {
            continue;
        }
        let inp = BenchInputs::new(&caller, lens, hh);
        let (t, n, kd) = (inp.t, inp.n, inp.kd);
        // Minimum memory traffic: q, k, v, O, g, beta and the states once.
        let min_bytes =
            (t * hh) as f64 * (4.0 * kd as f64 * 2.0 + 8.0) + 2.0 * (n * hh * kd * kd) as f64 * 4.0;
        let mut default_fwd = 0.0;
        for &(label, scan, pieces, sum) in &schedules {
            set_schedule_sum(scan, pieces, sum);
            let whole = inp.time(&caller, "gdn");
            if label == "default" || default_fwd == 0.0 {
                default_fwd = whole;
            }
            // The kernels this schedule launches: with pieces > 1 the summary and the chain run
            // between prep and the output scan. The default's pieces are read back from the
            // cumulative times (5 launches differ from 3).
            let p: i64 = pieces.parse().unwrap_or(0);
            let mut cum = vec![0.0];
            for steps in 1..=5 {
                cum.push(inp.time_cut(&caller, "gdn", Some(steps)));
            }
            let launches = if p > 1 || (p == 0 && whole - cum[3] > 0.05 * whole) {
                5
            } else {
                3
            };
            // The default's piece count by the engine's rule (FwdChoice::default_for, 132 SMs,
            // the first FWD_PIECE_PATH row at K = 128).
            let pieces_used = match (launches, p) {
                (3, _) => 1,
                (_, 0) => default_pieces(n * hh),
                _ => p,
            };
            let names: &[&str] = if launches == 5 {
                &["offsets", "prep", "sum", "chain", "scan"]
            } else {
                &["offsets", "prep", "scan"]
            };
            let mut parts = Vec::new();
            for (i, kname) in names.iter().enumerate() {
                let ms = if i + 1 == names.len() {
                    whole - cum[i]
                } else {
                    cum[i + 1] - cum[i]
                };
                let (bytes, flops) = kernel_counts(kname, lens, hh, kd, pieces_used);
                parts.push(format!(
                    "{kname} {ms:.4} ms {:.0} GB/s {:.1} TFLOP/s",
                    bytes / (ms * 1e-3) / 1e9,
                    flops / (ms * 1e-3) / 1e12
                ));
            }
            println!(
                "BENCH ours fwd {name} {whole:.4} sched={label} pieces={pieces_used} min-traffic {:.0} GB/s | {}",
                min_bytes / (whole * 1e-3) / 1e9,
                parts.join(" | ")
            );
        }
        set_schedule("", "");
        let bwd = inp.time(&caller, "gdn_bwd");
        println!("BENCH ours bwd {name} {bwd:.4}");
        println!(
            "BENCH ours fwdbwd {name} {:.4} (fwd {default_fwd:.4} + bwd {bwd:.4}, timed apart)",
            default_fwd + bwd
        );
        inp.free();
    }
}

/// The prep kernels side by side (runs only when `DNNPLAN_GDN_BENCH_PREP` is set): per benchmark
/// shape and per prep in `DNNPLAN_GDN_BENCH_PREP_VARIANTS` (comma list, default `v14,v15`: the
/// bundled ones, `PREP_VARIANTS` in src/engines/gdn/engine.rs; `v15` = v14 with the inverse's
/// serial pieces off the block barriers, bitwise, the default), the forward prep's time (whole-execute time after 2
/// launches minus after 1, `DNNPLAN_GDN_FWD_STEPS`) with its bandwidth and TFLOP/s, the whole
/// forward (default schedule), the backward prep's time (`DNNPLAN_GDN_BWD_STEPS` 2 minus 1) and
/// the whole backward; then each prep's speedup over the first. Prints `BENCH prep ...` lines;
/// asserts nothing about speed.
#[test]
fn gdn_prep_variants() {
    if !opted_in("DNNPLAN_GDN_BENCH_PREP") {
        return;
    }
    let caller = Caller::new();
    let preps = env_list("DNNPLAN_GDN_BENCH_PREP_VARIANTS", "v14,v15");
    set_schedule("", "");
    for (name, lens, hh) in BENCH_SHAPES {
        let inp = BenchInputs::new(&caller, lens, hh);
        let (bytes, flops) = kernel_counts("prep", lens, hh, inp.kd, 1);
        let mut fwd_prep_ms = Vec::new();
        let mut bwd_prep_ms = Vec::new();
        for prep in preps.iter().map(|p| Some(p.as_str())) {
            set_env("DNNPLAN_GDN_FWD_PREP", prep);
            let cut = |op: &str, steps: Option<usize>| inp.time_cut(&caller, op, steps);
            let (f1, f2, fw) = (cut("gdn", Some(1)), cut("gdn", Some(2)), cut("gdn", None));
            let (b1, b2, bw) = (
                cut("gdn_bwd", Some(1)),
                cut("gdn_bwd", Some(2)),
                cut("gdn_bwd", None),
            );
            let (fp, bp) = (f2 - f1, b2 - b1);
            fwd_prep_ms.push(fp);
            bwd_prep_ms.push(bp);
            println!(
                "BENCH prep {name} prep={} fwd-prep {fp:.4} ms {:.0} GB/s {:.1} TFLOP/s | fwd {fw:.4} ms | bwd-prep {bp:.4} ms | bwd {bw:.4} ms",
                prep.unwrap_or("-"),
                bytes / (fp * 1e-3) / 1e9,
                flops / (fp * 1e-3) / 1e12,
            );
        }
        set_env("DNNPLAN_GDN_FWD_PREP", None);
        for i in 1..preps.len() {
            println!(
                "BENCH prep {name} speedup {}/{}: fwd-prep {:.2}x bwd-prep {:.2}x",
                preps[0],
                preps[i],
                fwd_prep_ms[0] / fwd_prep_ms[i],
                bwd_prep_ms[0] / bwd_prep_ms[i]
            );
        }
        inp.free();
    }
}

/// The backward with state checkpoints against the backward without them (sessions 16, 17; runs
/// only when `DNNPLAN_GDN_BENCH_CKPT` is set): per benchmark shape, the whole backward without
/// checkpoints (`recompute`), with bf16 rows every 64 tokens (`reuse64-io`: no forward-state
/// replay), and with rows that seed the replay (session 17: `seed128-io`, `seed256-io`,
/// `seed64-f32`, `seed256-f32`), timed in that order and then in the reverse order (each a fresh
/// plan, median of 10 executes after 3 warm-ups; same run); prints
/// `BENCH ckpt <shape> <variant> a / b ms ...` with each variant's mean over the recompute's.
/// The rows hold a constant (the timing does not depend on their values); asserts nothing about
/// speed.
#[test]
fn gdn_backward_checkpoints() {
    if !opted_in("DNNPLAN_GDN_BENCH_CKPT") {
        return;
    }
    let caller = Caller::new();
    let keep = kept_shapes();
    let (bf, f32t) = (DataType::Bfloat16, DataType::Float);
    // (name, cadence, rows' dtype; cadence 0: no checkpoints)
    let variants: [(&str, i64, DataType); 6] = [
        ("recompute", 0, bf),
        ("reuse64-io", 64, bf),
        ("seed128-io", 128, bf),
        ("seed256-io", 256, bf),
        ("seed64-f32", 64, f32t),
        ("seed256-f32", 256, f32t),
    ];
    for (si, (name, lens, hh)) in BENCH_SHAPES.into_iter().enumerate() {
        if keep.as_ref().is_some_and(|k| !k.contains(&si)) {
            continue;
        }
        let inp = BenchInputs::new(&caller, lens, hh);
        // The most bytes any variant binds: fp32 rows every 64 tokens.
        let bytes = (inp.checkpoint_rows() * hh * inp.kd * inp.kd) as usize * size(f32t);
        // 0x3C bytes: bf16 0.0115, fp32 0.0115 everywhere.
        let ckpt = caller.alloc(bytes, 0x3C);
        let outs = BenchInputs::outputs("gdn_bwd");
        let time = |every: i64, dt: DataType| {
            let rows = (inp.t / every.max(1) + inp.n).max(1);
            let bound = (every > 0).then_some((ckpt, dt, rows));
            let (g, n, ins) = inp.graph_ckpt("gdn_bwd", every, bound);
            time_graph(&caller, g, n, &ins, outs)
        };
        let mut ms = vec![[0.0f64; 2]; variants.len()];
        for (i, &(_, every, dt)) in variants.iter().enumerate() {
            ms[i][0] = time(every, dt);
        }
        for (i, &(_, every, dt)) in variants.iter().enumerate().rev() {
            ms[i][1] = time(every, dt);
        }
        let base = ms[0][0] + ms[0][1];
        let mut line = format!("BENCH ckpt {name}");
        for (v, m) in variants.iter().zip(&ms) {
            line += &format!(
                " | {} {:.4} / {:.4} ms ({:.3})",
                v.0,
                m[0],
                m[1],
                (m[0] + m[1]) / base
            );
        }
        println!("{line}");
        // SAFETY: the checkpoint buffer of this shape.
        unsafe { gdn_gpu::ok("free", cudarc::driver::sys::cuMemFree_v2(ckpt)) };
        inp.free();
    }
}

/// The forward with state checkpoints against the same forward without (runs only when
/// `DNNPLAN_GDN_BENCH_CKPT` is set; session 16): per benchmark shape, the default schedule's whole
/// forward with `checkpoint_every_n_tokens` = 64 (io dtype: every chunk's entering state,
/// `HO·V·K` bf16 per chunk slot, the rows the backward's replay would write) and without, timed
/// alternately `DNNPLAN_GDN_BENCH_CKPT_ROUNDS` times (default 3; same run), median of each.
/// Prints `BENCH ckpt ...` lines; asserts nothing about speed.
#[test]
fn gdn_checkpoint_forward() {
    if !opted_in("DNNPLAN_GDN_BENCH_CKPT") {
        return;
    }
    let caller = Caller::new();
    let rounds: usize = std::env::var("DNNPLAN_GDN_BENCH_CKPT_ROUNDS")
        .ok()
        .and_then(|x| x.parse().ok())
        .unwrap_or(3);
    set_schedule("", "");
    for (name, lens, hh) in BENCH_SHAPES {
        let inp = BenchInputs::new(&caller, lens, hh);
        let time = |every: i64| {
            let (g, node, ins) = inp.graph_with("gdn", every, None);
            let outs: &[&str] = if every > 0 {
                &["O", "final_state", "state_checkpoints"]
            } else {
                &["O", "final_state"]
            };
            time_graph(&caller, g, node, &ins, outs)
        };
        let (mut plain, mut ckpt) = (Vec::new(), Vec::new());
        for r in 0..rounds {
            // Alternate the order round by round.
            if r % 2 == 0 {
                plain.push(time(0));
                ckpt.push(time(64));
            } else {
                ckpt.push(time(64));
                plain.push(time(0));
            }
        }
        let med = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (p, c) = (med(&mut plain), med(&mut ckpt));
        // Checkpoint bytes: one HO·V·K bf16 state per chunk of each sequence.
        let rows: i64 = lens.iter().map(|l| (l + 63) / 64).sum();
        let bytes = (rows * hh * inp.kd * inp.kd * 2) as f64;
        println!(
            "BENCH ckpt fwd {name} plain {p:.4} ms ckpt64-io {c:.4} ms ratio {:.3} (+{:.4} ms for {:.0} MB of rows, {:.0} GB/s)",
            c / p,
            c - p,
            bytes / 1e6,
            bytes / ((c - p).max(1e-6) * 1e-3) / 1e9
        );
        inp.free();
    }
}
