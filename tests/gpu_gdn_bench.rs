//! GDN benchmark, our side (feature `gpu-tests`; runs only when `DNNPLAN_GDN_BENCH` is set, from
//! bench/gdn_bench_run.sh): the `gdn_sm90` forward and backward through the whole stack (IR graph
//! -> plan list -> build -> execute on a caller stream) at the issue's shapes (bf16, K = V = 128,
//! fp32 gates/beta, fp32 initial and final states), per forward scan schedule
//! (`DNNPLAN_GDN_FWD_SCAN` / `DNNPLAN_GDN_FWD_PIECES`), each kernel's time as the difference of
//! whole-execute times cut after every launch (`DNNPLAN_GDN_FWD_STEPS`), with each kernel's
//! achieved bandwidth and TFLOP/s from analytic byte and flop counts; the backward likewise
//! (`DNNPLAN_GDN_BWD_STEPS`). CUDA events, median of 10 executes after 3 warm-ups. Prints
//! `BENCH ours ...` lines for bench/gdn_bench_table.py; asserts nothing about speed.
//!
//! Which kernels ran: the plan's own launch list (`planned_launches` of the engine, read with
//! the same switches the timed plans are built under; tests/support/gdn_counts.rs), never a
//! guess from the times. Each launch's time is the difference of executes cut after it and
//! before it; its counts are its family's model in tests/support/gdn_counts.rs (what it must
//! read and write once, the products its header lists; checked on the CPU by
//! tests/gdn_counts.rs). A part is printed as `<label> <ms> ms <GB/s> GB/s <TFLOP/s> TFLOP/s`
//! (the label: the entry without direction, dtype and K, e.g. `slimscan_w4ov`); an overlapped
//! pair (producer, consumer) also as `<producer>+<consumer>` over both launches' time, since the
//! consumer's cut time is only what it adds after the producer alone.
#![cfg(feature = "gpu-tests")]

#[path = "support/gdn_gpu.rs"]
mod gdn_gpu;

use dnnplan::engines::gdn::fused16::FUSED16_VALUE_SLICES;
use dnnplan::ir::DataType;
use gdn_gpu::gdn_counts::{
    H200_SMS, Shape, bench_launches, kernel_counts, label, launch_parts, part,
};
use gdn_gpu::{
    BENCH_SHAPES, BenchInputs, Caller, env_list, opted_in, set_env, size, stage_times, time_graph,
};

/// Rounds of an alternating A / B benchmark: the count in `var`, else 3.
fn rounds_from_env(var: &str) -> usize {
    std::env::var(var)
        .ok()
        .and_then(|x| x.parse().ok())
        .unwrap_or(3)
}

/// SMs of device 0 (the plans' rules read the device's count at build; the H200's without a
/// driver).
fn device_sms() -> u64 {
    dnnplan::cuda::probe::driver()
        .ok()
        .and_then(|d| d.devices.first())
        .map_or(H200_SMS, |x| x.sm_count.max(1) as u64)
}

/// The kernels of one execute of `op` ("gdn" / "gdn_bwd") under the current switches: its
/// plan's pieces per sequence and one part per launch, timed as differences of executes cut
/// after each launch (`whole`: the uncut execute's time), plus the overlapped pair's part.
fn kernel_parts(
    caller: &Caller,
    inp: &BenchInputs,
    op: &str,
    lens: &[i64],
    whole: f64,
) -> (i64, Vec<String>) {
    let (launches, cut) = bench_launches(op, lens, inp.hh, device_sms());
    let shape = Shape::cut(lens, inp.hh, inp.kd, cut);
    let cum = [
        vec![0.0],
        inp.time_cuts(caller, op, 1..launches.len()),
        vec![whole],
    ]
    .concat();
    (
        cut.pieces,
        launch_parts(&launches, &shape, &stage_times(&cum)),
    )
}

/// Sets (or removes, for "") the forward's schedule overrides.
fn set_schedule(scan: &str, pieces: &str) {
    set_schedule_sum(scan, pieces, "", "", "", "");
    set_env("DNNPLAN_GDN_SEQ_ORDER", None);
}

/// [`set_schedule`] with the piece summary pass (`DNNPLAN_GDN_FWD_SUM`) and the first piece
/// early (`DNNPLAN_GDN_FWD_PIECE_FIRST`, `DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE`; session 32; its scan
/// `DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN`, session 34).
fn set_schedule_sum(scan: &str, pieces: &str, sum: &str, first: &str, scale: &str, fscan: &str) {
    set_env("DNNPLAN_GDN_FWD_PIECE_FIRST_SUM", None);
    for (k, v) in [
        ("DNNPLAN_GDN_FWD_SCAN", scan),
        ("DNNPLAN_GDN_FWD_PIECES", pieces),
        ("DNNPLAN_GDN_FWD_SUM", sum),
        ("DNNPLAN_GDN_FWD_PIECE_FIRST", first),
        ("DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE", scale),
        ("DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN", fscan),
    ] {
        set_env(k, (!v.is_empty()).then_some(v));
    }
}

/// A shape beside the benchmark's from `DNNPLAN_GDN_BENCH_EXTRA` = `NAME:LEN,LEN,...:HEADS` (e.g.
/// `equal-10x2995:2995,2995,...:16`, the ragged mix's wave fill at equal lengths); `None` when unset
/// or malformed.
fn extra_shape() -> Option<(String, Vec<i64>, i64)> {
    parse_shape(&std::env::var("DNNPLAN_GDN_BENCH_EXTRA").ok()?)
}

/// One shape from `NAME:LEN,LEN,...:HEADS`, where a length may repeat as `LEN*COUNT` (e.g.
/// `eq6:4096*6:16`); `None` when malformed.
fn parse_shape(spec: &str) -> Option<(String, Vec<i64>, i64)> {
    let mut parts = spec.trim().split(':');
    let name = parts.next()?.to_string();
    let mut lens = Vec::new();
    for item in parts.next()?.split(',') {
        let (len, count) = item.split_once('*').unwrap_or((item, "1"));
        let (len, count): (i64, usize) = (len.trim().parse().ok()?, count.trim().parse().ok()?);
        lens.extend(std::iter::repeat_n(len, count));
    }
    let heads = parts.next()?.trim().parse().ok()?;
    (!lens.is_empty() && heads > 0).then_some((name, lens, heads))
}

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
    // 12.) DNNPLAN_GDN_BENCH_SCHEDULES=label:scan:pieces[:sum[:first[:scale[:fscan[:seq[:fsum]]]]]],...
    // replaces the list (in order; `first`, `scale`, `fscan`: DNNPLAN_GDN_FWD_PIECE_FIRST,
    // _FIRST_SCALE, _FIRST_SCAN; `seq`: DNNPLAN_GDN_SEQ_ORDER, session 34's longest-first dispatch;
    // `fsum`: DNNPLAN_GDN_FWD_PIECE_FIRST_SUM, session 35).
    // The nine fields, in order: label, scan, pieces, sum, first, scale, fscan, seq, fsum.
    type Sched<'a> = [&'a str; 9];
    let fixed: [Sched; 5] = [
        ["default", "", "", "", "", "", "", "", ""],
        ["w4", "w4", "1", "", "", "", "", "", ""],
        ["w8", "w8", "1", "", "", "", "", "", ""],
        ["w4-p4", "w4", "4", "", "", "", "", "", ""],
        ["w4-p8", "w4", "8", "", "", "", "", "", ""],
    ];
    let listed = std::env::var("DNNPLAN_GDN_BENCH_SCHEDULES").unwrap_or_default();
    let schedules: Vec<Sched> = if listed.is_empty() {
        fixed.to_vec()
    } else {
        listed
            .split(',')
            .map(|e| {
                let mut f = e.split(':');
                std::array::from_fn(|_| f.next().unwrap_or(""))
            })
            .collect()
    };
    // DNNPLAN_GDN_BENCH_SHAPES="0 2" keeps those shapes only (e.g. under a profiler); an extra
    // shape from DNNPLAN_GDN_BENCH_EXTRA takes the next index.
    let keep = kept_shapes();
    let shapes: Vec<(String, Vec<i64>, i64)> = BENCH_SHAPES
        .iter()
        .map(|(name, lens, hh)| (name.to_string(), lens.to_vec(), *hh))
        .chain(extra_shape())
        .collect();
    for (si, (name, lens, hh)) in shapes.iter().enumerate() {
        if keep.as_ref().is_some_and(|k| !k.contains(&si)) {
            continue;
        }
        let (lens, hh) = (lens.as_slice(), *hh);
        let inp = BenchInputs::new(&caller, lens, hh);
        let (t, n, kd) = (inp.t, inp.n, inp.kd);
        // Minimum memory traffic: q, k, v, O, g, beta and the states once.
        let min_bytes =
            (t * hh) as f64 * (4.0 * kd as f64 * 2.0 + 8.0) + 2.0 * (n * hh * kd * kd) as f64 * 4.0;
        let mut default_fwd = 0.0;
        for &[label, scan, pieces, sum, first, scale, fscan, seq, fsum] in &schedules {
            set_schedule_sum(scan, pieces, sum, first, scale, fscan);
            set_env("DNNPLAN_GDN_SEQ_ORDER", (!seq.is_empty()).then_some(seq));
            set_env(
                "DNNPLAN_GDN_FWD_PIECE_FIRST_SUM",
                (!fsum.is_empty()).then_some(fsum),
            );
            let whole = inp.time(&caller, "gdn");
            if label == "default" || default_fwd == 0.0 {
                default_fwd = whole;
            }
            let (pieces_used, parts) = kernel_parts(&caller, &inp, "gdn", lens, whole);
            println!(
                "BENCH ours fwd {name} {whole:.4} sched={label} pieces={pieces_used} min-traffic {:.0} GB/s | {}",
                min_bytes / (whole * 1e-3) / 1e9,
                parts.join(" | ")
            );
        }
        set_schedule("", "");
        let bwd = inp.time(&caller, "gdn_bwd");
        let (bwd_pieces, parts) = kernel_parts(&caller, &inp, "gdn_bwd", lens, bwd);
        println!(
            "BENCH ours bwd {name} {bwd:.4} pieces={bwd_pieces} | {}",
            parts.join(" | ")
        );
        println!(
            "BENCH ours fwdbwd {name} {:.4} (fwd {default_fwd:.4} + bwd {bwd:.4}, timed apart)",
            default_fwd + bwd
        );
        // The training step with saved chunk factors (session 37): the saving forward (it fills
        // the buffer first), then the backward reading them.
        let buf = caller.alloc(inp.factor_dims().iter().product::<i64>() as usize, 0);
        let saving = inp.time_saved(&caller, "gdn", buf);
        let reading = inp.time_saved(&caller, "gdn_bwd", buf);
        println!(
            "BENCH ours train {name} {:.4} (fwd saving chunk factors {saving:.4} + bwd reading them {reading:.4}, timed apart)",
            saving + reading
        );
        // The saved replay (session 38): the factors with the U tiles and the checkpoints every
        // chunk; the backward runs neither prep nor replay.
        let rbuf = caller.alloc(inp.factor_dims_at(64).iter().product::<i64>() as usize, 0);
        let ckpt = caller.alloc(inp.checkpoint_bytes(), 0);
        let saving_r = inp.time_saved_replay(&caller, "gdn", rbuf, Some(ckpt));
        let reading_r = inp.time_saved_replay(&caller, "gdn_bwd", rbuf, Some(ckpt));
        println!(
            "BENCH ours replay {name} {:.4} (fwd saving the replay {saving_r:.4} + bwd reading it {reading_r:.4}, timed apart; held {:.1} MB)",
            saving_r + reading_r,
            (inp.factor_dims_at(64).iter().product::<i64>() as usize + inp.checkpoint_bytes())
                as f64
                / 1e6
        );
        for d in [rbuf, ckpt] {
            // SAFETY: allocated above, no plan holds them any more.
            unsafe { gdn_gpu::ok("free", cudarc::driver::sys::cuMemFree_v2(d)) };
        }
        // Memory: each plan's workspace (and the saved factors' buffer).
        let mb = |b: usize| b as f64 / 1e6;
        println!(
            "BENCH ours ws {name} {:.1} (MB of workspace: bwd; fwd {:.1}, fwd saving {:.1}, bwd reading {:.1}; the chunk factors {:.1})",
            mb(inp.workspace_bytes(&caller, "gdn_bwd", None)),
            mb(inp.workspace_bytes(&caller, "gdn", None)),
            mb(inp.workspace_bytes(&caller, "gdn", Some(buf))),
            mb(inp.workspace_bytes(&caller, "gdn_bwd", Some(buf))),
            mb(inp.factor_dims().iter().product::<i64>() as usize)
        );
        // SAFETY: allocated above, no plan holds it any more.
        unsafe { gdn_gpu::ok("free", cudarc::driver::sys::cuMemFree_v2(buf)) };
        inp.free();
    }
}

/// The forward's one-pass switch at the product level (runs only when `DNNPLAN_GDN_BENCH_SWITCH`
/// is set: `;`-separated shapes as [`parse_shape`] reads them): per shape, the forward under the
/// rule and under each `DNNPLAN_GDN_FWD_FUSED` value of `DNNPLAN_GDN_BENCH_SWITCH_FORMS`
/// (comma list, default `0,w8c,b2c`: the two passes and the rule's two forms), alternately
/// `DNNPLAN_GDN_BENCH_SWITCH_ROUNDS` times (default 3), with the rule's launches. Measurement only
/// (where the rule's w8c → b2c switch sits); nothing asserted about speed.
#[test]
fn gdn_benchmark_fused_switch() {
    let Ok(list) = std::env::var("DNNPLAN_GDN_BENCH_SWITCH") else {
        return;
    };
    let caller = Caller::new();
    let forms = env_list("DNNPLAN_GDN_BENCH_SWITCH_FORMS", "0,w8c,b2c");
    let rounds = rounds_from_env("DNNPLAN_GDN_BENCH_SWITCH_ROUNDS");
    let sms = device_sms();
    for spec in list.split(';').filter(|s| !s.trim().is_empty()) {
        let Some((name, lens, hh)) = parse_shape(spec) else {
            println!("BENCH switch malformed shape {spec:?}");
            continue;
        };
        let inp = BenchInputs::new(&caller, &lens, hh);
        set_env("DNNPLAN_GDN_FWD_FUSED", None);
        let (launches, _) = bench_launches("gdn", &lens, hh, sms);
        let rule: Vec<String> = launches.iter().map(|l| label(&l.0)).collect();
        let blocks = FUSED16_VALUE_SLICES * hh as u64 * lens.len() as u64;
        for round in 0..rounds {
            let mut line = format!(
                "BENCH switch {name} blocks {blocks} ({:.2} waves) round {round} | rule [{}] {:.4}",
                blocks as f64 / sms as f64,
                rule.join(" "),
                inp.time(&caller, "gdn")
            );
            for form in &forms {
                set_env("DNNPLAN_GDN_FWD_FUSED", Some(form));
                line += &format!(" | {form} {:.4}", inp.time(&caller, "gdn"));
                set_env("DNNPLAN_GDN_FWD_FUSED", None);
            }
            println!("{line}");
        }
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
        let mut fwd_prep_ms = Vec::new();
        let mut bwd_prep_ms = Vec::new();
        for prep in preps.iter().map(|p| Some(p.as_str())) {
            set_env("DNNPLAN_GDN_FWD_PREP", prep);
            // The forward's second launch is its prep (the slim prep on the slim paths, which
            // this switch does not change; the full prep where a rule picks full factors).
            let (launches, cut) = bench_launches("gdn", lens, hh, device_sms());
            let entry = &launches[1].0;
            let prep_counts = kernel_counts(entry, &Shape::cut(lens, hh, inp.kd, cut));
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
                "BENCH prep {name} prep={} fwd-{} | fwd {fw:.4} ms | bwd-prep {bp:.4} ms | bwd {bw:.4} ms",
                prep.unwrap_or("-"),
                part(&label(entry), fp, prep_counts),
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

/// Session 37: the training step with saved chunk factors. Per benchmark shape, in one process:
/// the forward without and with `output_chunk_factors` (the rule's saving prep), the backward
/// without and with `chunk_factors` (its prep skipped; the buffer the saving forward filled),
/// and (session 38) the saved replay: the forward with the factors and checkpoints every chunk
/// (the U-saving scans), the backward reading both (no prep, no replay). Each the median of
/// `DNNPLAN_GDN_BENCH_FACTORS_ROUNDS` (default 3) rounds, the order within each direction rotated
/// round by round. Prints `BENCH factors ...` and `BENCH replay ...` lines; asserts nothing about
/// speed.
#[test]
fn gdn_benchmark_saved_factors() {
    if !opted_in("DNNPLAN_GDN_BENCH_FACTORS") {
        return;
    }
    let caller = Caller::new();
    let rounds = rounds_from_env("DNNPLAN_GDN_BENCH_FACTORS_ROUNDS");
    set_schedule("", "");
    for (name, lens, hh) in BENCH_SHAPES {
        let inp = BenchInputs::new(&caller, lens, hh);
        let bytes = |d: Vec<i64>| d.iter().product::<i64>() as usize;
        let buf = caller.alloc(bytes(inp.factor_dims()), 0);
        let rbuf = caller.alloc(bytes(inp.factor_dims_at(64)), 0);
        let ckpt = caller.alloc(inp.checkpoint_bytes(), 0);
        // 0: plain, 1: the factors, 2: the saved replay.
        let time = |op: &str, mode: usize| match mode {
            0 => inp.time(&caller, op),
            1 => inp.time_saved(&caller, op, buf),
            _ => inp.time_saved_replay(&caller, op, rbuf, Some(ckpt)),
        };
        // The saving forwards fill the buffers before any backward reads them.
        time("gdn", 1);
        time("gdn", 2);
        let mut t: [[Vec<f64>; 3]; 2] = Default::default();
        for r in 0..rounds {
            for (d, op) in ["gdn", "gdn_bwd"].into_iter().enumerate() {
                for i in 0..3 {
                    let mode = (i + r) % 3;
                    t[d][mode].push(time(op, mode));
                }
            }
        }
        let [[f0, f1, f2], [b0, b1, b2]] = t.map(|d| {
            d.map(|mut v| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            })
        });
        let pct = |a: f64, b: f64| 100.0 * (b / a - 1.0);
        println!(
            "BENCH factors {name} fwd {f0:.4} saving {f1:.4} ({:+.1} %) | bwd {b0:.4} reading {b1:.4} ({:+.1} %) | fwd+bwd {:.4} -> {:.4} ({:+.1} %)",
            pct(f0, f1),
            pct(b0, b1),
            f0 + b0,
            f1 + b1,
            pct(f0 + b0, f1 + b1)
        );
        println!(
            "BENCH replay {name} fwd {f0:.4} saving replay {f2:.4} ({:+.1} %) | bwd {b0:.4} reading replay {b2:.4} ({:+.1} %) | fwd+bwd {:.4} -> {:.4} ({:+.1} %; factors alone {:.4})",
            pct(f0, f2),
            pct(b0, b2),
            f0 + b0,
            f2 + b2,
            pct(f0 + b0, f2 + b2),
            f1 + b1
        );
        for d in [buf, rbuf, ckpt] {
            // SAFETY: allocated above, no plan holds them any more.
            unsafe { gdn_gpu::ok("free", cudarc::driver::sys::cuMemFree_v2(d)) };
        }
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
    let rounds = rounds_from_env("DNNPLAN_GDN_BENCH_CKPT_ROUNDS");
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

/// The backward's reverse scan and token stage alone and as the overlapped pair, at the
/// benchmark shapes (runs when `DNNPLAN_GDN_BENCH_ALONE` is set; `DNNPLAN_GDN_TIMING_SHAPES` as
/// elsewhere; measurement only, nothing asserted about speed). A full backward executes first on
/// a workspace; plans built with `DNNPLAN_GDN_BWD_FROM` (GPU test builds only) then run from a
/// later launch on that same workspace, whose chunk table, tiles and hand-over flags the full
/// execute left (every flag set: the consumer never waits). Prints, ms: the whole backward, the
/// stages before the reverse scan (cut), the reverse scan alone, the token stage alone (every SM
/// to itself), the pair alone, and the pair's share of the whole (the whole less the cut).
#[test]
fn gdn_benchmark_stages_alone() {
    use dnnplan::dispatch::context::{ExecContext, Handle};
    use gdn_gpu::{GdnPlan, event_median_ms, timing_shape_selected};
    if !opted_in("DNNPLAN_GDN_BENCH_ALONE") {
        return;
    }
    let caller = Caller::new();
    let handle = Handle::new(caller.stream.cast()).expect("handle");
    for (si, (name, lens, hh)) in BENCH_SHAPES.into_iter().enumerate() {
        if !timing_shape_selected(si) {
            continue;
        }
        let inp = BenchInputs::new(&caller, lens, hh);
        let (launches, _) = bench_launches("gdn_bwd", lens, hh, device_sms());
        let names: Vec<String> = launches.iter().map(|l| label(&l.0)).collect();
        let Some(tok) = names.iter().position(|n| n.starts_with("tokens")) else {
            println!("BENCH alone {name} no token stage in {names:?}");
            continue;
        };
        let scan = tok - 1;
        let build = |from: Option<usize>, steps: Option<usize>| {
            set_env(
                "DNNPLAN_GDN_BWD_FROM",
                from.map(|x| x.to_string()).as_deref(),
            );
            set_env(
                "DNNPLAN_GDN_BWD_STEPS",
                steps.map(|x| x.to_string()).as_deref(),
            );
            let (g, n, ins) = inp.graph("gdn_bwd");
            let plan = GdnPlan::build(&caller, g, n, &ins, BenchInputs::outputs("gdn_bwd"));
            set_env("DNNPLAN_GDN_BWD_FROM", None);
            set_env("DNNPLAN_GDN_BWD_STEPS", None);
            plan
        };
        let full = build(None, None);
        let (pack, ctx) = (full.pack(), full.context(&handle));
        let whole = event_median_ms(&caller, || full.execute(&pack, &ctx));
        // Each partial plan on the full plan's workspace, right after a full execute.
        let alone = |from: usize, steps: Option<usize>| {
            let part = build(Some(from), steps);
            assert_eq!(part.ws_bytes, full.ws_bytes, "the same workspace layout");
            let ppack = part.pack();
            let pctx = ExecContext::new(
                &handle,
                full.ws as *mut std::ffi::c_void,
                Some(full.ws_bytes as u64),
            );
            full.execute(&pack, &ctx);
            let ms = event_median_ms(&caller, || part.execute(&ppack, &pctx));
            drop(ppack);
            part.free();
            ms
        };
        let before = inp.time_cut(&caller, "gdn_bwd", Some(scan));
        let scan_ms = alone(scan, Some(scan + 1));
        let tokens_ms = alone(tok, None);
        let pair_ms = alone(scan, None);
        println!(
            "BENCH alone {name} whole {whole:.4} | before the pair {before:.4} ({}) | {} alone {scan_ms:.4} | {} alone {tokens_ms:.4} | pair alone {pair_ms:.4} | pair in the whole {:.4}",
            names[..scan].join(" "),
            names[scan],
            names[tok],
            whole - before
        );
        drop(pack);
        full.free();
        inp.free();
    }
}
