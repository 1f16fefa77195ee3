//! The GDN launch chain (`DNNPLAN_GDN_PDL`, src/engines/gdn/pdl.rs) at the benchmark
//! shapes (feature `gpu-tests`; runs only when `DNNPLAN_GDN_TIMING_PDL` is set): one plan per
//! mode (`DNNPLAN_GDN_TIMING_PDL_MODES`, default `0,1,early`) for the forward and the backward,
//! timed alternating (each sample: one mode's `PDL_BATCH` back-to-back executes between two
//! events, the modes in rotating order), median / 10th / 90th percentile of the per-execute times
//! over `DNNPLAN_GDN_TIMING_PDL_SAMPLES` (default 30) samples per mode; then every mode's outputs
//! compared bitwise with the first mode's (asserted: the mode must not change a bit). Times are
//! printed, never asserted.
#![cfg(feature = "gpu-tests")]

#[path = "support/gdn_gpu.rs"]
mod gdn_gpu;

use dnnplan::dispatch::context::Handle;
use gdn_gpu::{
    BENCH_SHAPES, BenchInputs, Caller, GdnPlan, env_list, event_ms, opted_in, set_env,
    timing_shape_selected,
};

/// Executes per timed sample.
const PDL_BATCH: usize = 4;

/// The plan of `op` built under `DNNPLAN_GDN_PDL=mode` (read at plan build).
fn build(caller: &Caller, inp: &BenchInputs, op: &str, mode: &str) -> GdnPlan {
    set_env("DNNPLAN_GDN_PDL", Some(mode));
    let (graph, node, ins) = inp.graph(op);
    let plan = GdnPlan::build(caller, graph, node, &ins, BenchInputs::outputs(op));
    set_env("DNNPLAN_GDN_PDL", None);
    plan
}

/// (median, 10th, 90th percentile) of `v`.
fn spread(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let at = |q: f64| v[((v.len() - 1) as f64 * q).round() as usize];
    (at(0.5), at(0.1), at(0.9))
}

/// Times every mode's plan of `op` alternating; prints one line per mode and checks the outputs.
fn time_modes(caller: &Caller, inp: &BenchInputs, shape: &str, op: &str, modes: &[String]) {
    let samples: usize = std::env::var("DNNPLAN_GDN_TIMING_PDL_SAMPLES")
        .ok()
        .and_then(|x| x.parse().ok())
        .unwrap_or(30);
    let plans: Vec<GdnPlan> = modes.iter().map(|m| build(caller, inp, op, m)).collect();
    let handle = Handle::new(caller.stream.cast()).expect("handle");
    let packs: Vec<_> = plans.iter().map(GdnPlan::pack).collect();
    let ctxs: Vec<_> = plans.iter().map(|p| p.context(&handle)).collect();
    let run = |i: usize| plans[i].execute(&packs[i], &ctxs[i]);
    for i in 0..plans.len() {
        for _ in 0..3 {
            run(i);
        }
    }
    let mut times = vec![Vec::new(); plans.len()];
    for s in 0..samples {
        for j in 0..plans.len() {
            let i = (s + j) % plans.len();
            let ms = event_ms(caller, || {
                for _ in 0..PDL_BATCH {
                    run(i);
                }
            });
            times[i].push(ms / PDL_BATCH as f64);
        }
    }
    let base = spread(times[0].clone()).0;
    for (m, t) in modes.iter().zip(&times) {
        let (med, p10, p90) = spread(t.clone());
        println!(
            "gdn_sm90 pdl {op:7} {shape:16} PDL={m:4} median {med:.4} ms (p10 {p10:.4} p90 {p90:.4}, \
             {} samples x {PDL_BATCH}) vs PDL={}: {:+.2} us ({:.4}x)",
            t.len(),
            modes[0],
            (med - base) * 1e3,
            base / med
        );
    }
    // The last execute of every mode left its outputs: bitwise the first mode's.
    let first: Vec<Vec<u8>> = plans[0]
        .outputs
        .iter()
        .map(|&(d, n)| caller.download(d, n))
        .collect();
    for (m, p) in modes.iter().zip(&plans).skip(1) {
        for (k, &(d, n)) in p.outputs.iter().enumerate() {
            assert!(
                caller.download(d, n) == first[k],
                "{op} {shape}: output {} of PDL={m} differs from PDL={}",
                BenchInputs::outputs(op)[k],
                modes[0]
            );
        }
    }
    println!(
        "gdn_sm90 pdl {op:7} {shape:16} outputs of PDL={} bitwise equal",
        modes.join(",")
    );
    drop(ctxs);
    drop(packs);
    for p in plans {
        p.free();
    }
}

/// The forward and backward per launch-chain mode at the benchmark shapes
/// (`DNNPLAN_GDN_TIMING_SHAPES` selects shape indices).
#[test]
fn timing_launch_chain_modes() {
    if !opted_in("DNNPLAN_GDN_TIMING_PDL") {
        return;
    }
    let caller = Caller::new();
    let modes = env_list("DNNPLAN_GDN_TIMING_PDL_MODES", "0,1,early");
    for (si, (name, lens, hh)) in BENCH_SHAPES.into_iter().enumerate() {
        if !timing_shape_selected(si) {
            continue;
        }
        let inp = BenchInputs::new(&caller, lens, hh);
        for op in ["gdn", "gdn_bwd"] {
            time_modes(&caller, &inp, name, op, &modes);
        }
        inp.free();
    }
}
