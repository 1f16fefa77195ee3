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

use cudarc::driver::sys::{self, CUdeviceptr, CUstream};
use dnnplan::dispatch::context::{ExecContext, Handle};
use dnnplan::dispatch::{HeurMode, PlanList, PlanOptions};
use dnnplan::ir::{DataType, Graph, GraphContext, NodeBuilder, Tensor};
use dnnplan::pack::executor::{PlanChoice, execute};
use dnnplan::pack::normalize::{Buffer, from_bindings};

const GDN_SM90_ID: i64 = 20_103;

fn ok(call: &str, r: sys::CUresult) {
    assert_eq!(r, sys::CUresult::CUDA_SUCCESS, "{call}");
}

struct Caller {
    stream: CUstream,
}

impl Caller {
    fn new() -> Caller {
        dnnplan::cuda::probe::driver().expect("CUDA driver");
        let mut ctx = std::ptr::null_mut();
        let mut stream = std::ptr::null_mut();
        // SAFETY: plain driver calls with valid out pointers.
        unsafe {
            ok("retain", sys::cuDevicePrimaryCtxRetain(&mut ctx, 0));
            ok("set current", sys::cuCtxSetCurrent(ctx));
            ok("stream", sys::cuStreamCreate(&mut stream, 1));
        }
        Caller { stream }
    }

    fn alloc(&self, bytes: usize, fill: u8) -> CUdeviceptr {
        let mut d: CUdeviceptr = 0;
        // SAFETY: the context is current.
        unsafe {
            ok("alloc", sys::cuMemAlloc_v2(&mut d, bytes.max(1)));
            ok("memset", sys::cuMemsetD8_v2(d, fill, bytes.max(1)));
        }
        d
    }

    fn upload(&self, bytes: &[u8]) -> CUdeviceptr {
        let d = self.alloc(bytes.len(), 0);
        // SAFETY: `bytes` is valid for its length; `d` holds as many.
        unsafe {
            ok(
                "htod",
                sys::cuMemcpyHtoD_v2(d, bytes.as_ptr().cast(), bytes.len()),
            )
        };
        d
    }
}

/// Uploads `elems` values `f(u)`, `u` uniform in [0, 1), as bf16 or fp32.
fn device_random(
    caller: &Caller,
    dt: DataType,
    elems: usize,
    seed: u64,
    f: impl Fn(f64) -> f64,
) -> CUdeviceptr {
    let mut s = seed;
    let mut bytes = Vec::with_capacity(elems * (dt.bits() / 8) as usize);
    for _ in 0..elems {
        s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = s;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        let x = f((z >> 11) as f64 / (1u64 << 53) as f64);
        match dt {
            DataType::Bfloat16 => {
                bytes.extend_from_slice(&half::bf16::from_f64(x).to_bits().to_le_bytes())
            }
            _ => bytes.extend_from_slice(&(x as f32).to_le_bytes()),
        }
    }
    caller.upload(&bytes)
}

/// Median device time (ms) of `run` over 10 event-timed repetitions after 3 warm-ups.
fn event_median_ms(caller: &Caller, mut run: impl FnMut()) -> f64 {
    for _ in 0..3 {
        run();
    }
    let mut times = Vec::new();
    for _ in 0..10 {
        let (mut a, mut b) = (std::ptr::null_mut(), std::ptr::null_mut());
        // SAFETY: plain event calls on the caller's stream.
        unsafe {
            ok("event", sys::cuEventCreate(&mut a, 0));
            ok("event", sys::cuEventCreate(&mut b, 0));
            ok("record", sys::cuEventRecord(a, caller.stream));
        }
        run();
        let mut ms = 0f32;
        // SAFETY: as above.
        unsafe {
            ok("record", sys::cuEventRecord(b, caller.stream));
            ok("sync", sys::cuEventSynchronize(b));
            ok("elapsed", sys::cuEventElapsedTime_v2(&mut ms, a, b));
            ok("destroy", sys::cuEventDestroy_v2(a));
            ok("destroy", sys::cuEventDestroy_v2(b));
        }
        times.push(f64::from(ms));
    }
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Plans `graph`, binds `inputs` and 0xFF-filled outputs, and returns the median time of one
/// execute (plan list and buffers live only for the call).
fn time_graph(
    caller: &Caller,
    mut graph: Graph,
    node: usize,
    inputs: &[(i64, CUdeviceptr)],
    outputs: &[&str],
) -> f64 {
    let mut bindings = inputs.to_vec();
    for p in outputs {
        let uid = graph.nodes()[node].output(p).unwrap();
        graph.set_output(uid, true).unwrap();
    }
    let mut list =
        PlanList::plan(&mut graph, PlanOptions::detect(), &[HeurMode::A]).expect("planning");
    for p in outputs {
        let uid = graph.nodes()[node].output(p).unwrap();
        let t = graph.tensor(uid).unwrap();
        let elems: i64 = t.dims.iter().product();
        let bytes = elems as usize * (t.data_type.bits() / 8) as usize;
        bindings.push((uid, caller.alloc(bytes, 0xFF)));
    }
    let at = list
        .entries()
        .iter()
        .position(|e| e.engine_id == GDN_SM90_ID)
        .expect("gdn_sm90 listed");
    list.build_plan_at_index(at).expect("build");
    let ws_bytes = list.compiled_at(at).expect("compiled").workspace_size() as usize;
    let ws = caller.alloc(ws_bytes, 0xFF);
    let handle = Handle::new(caller.stream.cast()).expect("handle");
    let pack = from_bindings(
        list.declared_layout().expect("layout"),
        bindings
            .iter()
            .map(|(u, d)| (*u, Buffer::Address(*d as *mut std::ffi::c_void))),
        &[],
    )
    .expect("pack");
    let ctx = ExecContext::new(&handle, ws as *mut std::ffi::c_void, Some(ws_bytes as u64));
    let ms = event_median_ms(caller, || {
        execute(&list, PlanChoice::AtIndex(at), &pack, &ctx).expect("execute")
    });
    for (_, d) in bindings.iter().skip(inputs.len()).chain([&(0, ws)]) {
        // SAFETY: buffers of this call.
        unsafe { ok("free", sys::cuMemFree_v2(*d)) };
    }
    ms
}

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

/// The benchmark's device inputs for one shape (bf16, K = V = 128, fp32 gates, beta and states).
struct BenchInputs {
    t: i64,
    n: i64,
    hh: i64,
    kd: i64,
    bufs: [CUdeviceptr; 9],
}

impl BenchInputs {
    fn new(caller: &Caller, lens: &[i64], hh: i64) -> BenchInputs {
        let (kd, bf, f32t) = (128i64, DataType::Bfloat16, DataType::Float);
        let t: i64 = lens.iter().sum();
        let n = lens.len() as i64;
        let mut cu = vec![0i64];
        for l in lens {
            cu.push(cu.last().unwrap() + l);
        }
        let unit = (3.0 / kd as f64).sqrt();
        let tok = (t * hh * kd) as usize;
        let q = device_random(caller, bf, tok, 1, |x| (2.0 * x - 1.0) * unit);
        let k = device_random(caller, bf, tok, 2, |x| (2.0 * x - 1.0) * unit);
        let v = device_random(caller, bf, tok, 3, |x| 2.0 * x - 1.0);
        let d_o = device_random(caller, bf, tok, 4, |x| 2.0 * x - 1.0);
        let g = device_random(caller, f32t, (t * hh) as usize, 5, |x| (0.5 + 0.5 * x).ln());
        let beta = device_random(caller, f32t, (t * hh) as usize, 6, |x| x);
        let st = (n * hh * kd * kd) as usize;
        let h0 = device_random(caller, f32t, st, 7, |x| 0.1 * x - 0.05);
        let dfs = device_random(caller, f32t, st, 8, |x| 0.1 * x - 0.05);
        let cu_bytes: Vec<u8> = cu.iter().flat_map(|x| (*x as i32).to_le_bytes()).collect();
        let cud = caller.upload(&cu_bytes);
        BenchInputs {
            t,
            n,
            hh,
            kd,
            bufs: [q, k, v, d_o, g, beta, h0, dfs, cud],
        }
    }

    /// The one-node graph of `op` ("gdn" with a final state, or "gdn_bwd") and its bound inputs.
    fn graph(&self, op: &str) -> (Graph, usize, Vec<(i64, CUdeviceptr)>) {
        let (t, n, hh, kd) = (self.t, self.n, self.hh, self.kd);
        let (bf, f32t) = (DataType::Bfloat16, DataType::Float);
        let [q, k, v, d_o, g, beta, h0, dfs, cud] = self.bufs;
        let mut graph = Graph::new(GraphContext::new(bf, f32t, f32t));
        let mut b = NodeBuilder::by_name(op).unwrap().name("gdn0");
        let mut ins = Vec::new();
        let mut ports: Vec<(&str, Vec<i64>, DataType, CUdeviceptr)> = vec![
            ("q", vec![t, hh, kd], bf, q),
            ("k", vec![t, hh, kd], bf, k),
            ("v", vec![t, hh, kd], bf, v),
            ("g", vec![t, hh], f32t, g),
            ("beta", vec![t, hh], f32t, beta),
            ("cu_seqlens", vec![n + 1], DataType::Int32, cud),
            ("initial_state", vec![n, hh, kd, kd], f32t, h0),
        ];
        if op == "gdn_bwd" {
            ports.push(("dO", vec![t, hh, kd], bf, d_o));
            ports.push(("d_final_state", vec![n, hh, kd, kd], f32t, dfs));
        } else {
            b = b.bool("output_final_state", true);
        }
        for (p, dims, dt, d) in ports {
            let u = graph.add_tensor(Tensor::new(p, &dims, dt)).unwrap();
            b = b.input(p, u);
            ins.push((u, d));
        }
        let node = graph.add_node(b).unwrap();
        (graph, node, ins)
    }

    fn free(self) {
        for d in self.bufs {
            // SAFETY: inputs of this shape.
            unsafe { ok("free", sys::cuMemFree_v2(d)) };
        }
    }
}

/// Sets (or removes, for "") the forward's schedule overrides.
fn set_schedule(scan: &str, pieces: &str, steps: Option<usize>) {
    // "v1" names the whole session-1 forward: its prep and its scan.
    let prep = if scan == "v1" { "v1" } else { "" };
    // SAFETY: the benchmark runs single-threaded (--test-threads=1); nothing else reads the
    // environment meanwhile.
    unsafe {
        for (k, v) in [
            ("DNNPLAN_GDN_FWD_SCAN", scan),
            ("DNNPLAN_GDN_FWD_PIECES", pieces),
            ("DNNPLAN_GDN_FWD_PREP", prep),
        ] {
            if v.is_empty() {
                std::env::remove_var(k);
            } else {
                std::env::set_var(k, v);
            }
        }
        match steps {
            Some(n) => std::env::set_var("DNNPLAN_GDN_FWD_STEPS", n.to_string()),
            None => std::env::remove_var("DNNPLAN_GDN_FWD_STEPS"),
        }
    }
}

#[test]
fn gdn_benchmark_ours() {
    if std::env::var_os("DNNPLAN_GDN_BENCH").is_none() {
        println!("skipped (set DNNPLAN_GDN_BENCH=1)");
        return;
    }
    let caller = Caller::new();
    let shapes: [(&str, Vec<i64>, i64); 4] = [
        ("(4,8192,16)", vec![8192; 4], 16),
        ("(1,32768,16)", vec![32768], 16),
        ("(16,2048,32)", vec![2048; 16], 32),
        (
            "ragged-mix-H16",
            vec![8192, 100, 4096, 1, 2048, 7000, 0, 3000, 512, 5000],
            16,
        ),
    ];
    // (label, DNNPLAN_GDN_FWD_SCAN, DNNPLAN_GDN_FWD_PIECES): "" = the engine's default; "v1" =
    // the session-1 prep and scan (before).
    let schedules: [(&str, &str, &str); 6] = [
        ("default", "", ""),
        ("v1", "v1", ""),
        ("w4", "w4", "1"),
        ("w8", "w8", "1"),
        ("w4-p4", "w4", "4"),
        ("w4-p8", "w4", "8"),
    ];
    // DNNPLAN_GDN_BENCH_SHAPES="0 2" keeps those shapes only (e.g. under a profiler).
    let keep: Option<Vec<usize>> = std::env::var("DNNPLAN_GDN_BENCH_SHAPES").ok().map(|s| {
        s.split_whitespace()
            .filter_map(|x| x.parse().ok())
            .collect()
    });
    for (si, (name, lens, hh)) in shapes.into_iter().enumerate() {
        if keep.as_ref().is_some_and(|k| !k.contains(&si)) {
            continue;
        }
        let inp = BenchInputs::new(&caller, &lens, hh);
        let (t, n, kd) = (inp.t, inp.n, inp.kd);
        let graph_for = |op: &str| inp.graph(op);
        let time_fwd = || {
            let (gf, nf, insf) = graph_for("gdn");
            time_graph(&caller, gf, nf, &insf, &["O", "final_state"])
        };
        // Minimum memory traffic: q, k, v, O, g, beta and the states once.
        let min_bytes =
            (t * hh) as f64 * (4.0 * kd as f64 * 2.0 + 8.0) + 2.0 * (n * hh * kd * kd) as f64 * 4.0;
        let mut default_fwd = 0.0;
        for (label, scan, pieces) in schedules {
            set_schedule(scan, pieces, None);
            let whole = time_fwd();
            if label == "default" {
                default_fwd = whole;
            }
            // The kernels this schedule launches: with pieces > 1 the summary and the chain run
            // between prep and the output scan. The default's pieces are read back from the
            // cumulative times (5 launches differ from 3).
            let p: i64 = pieces.parse().unwrap_or(0);
            let mut cum = vec![0.0];
            for steps in 1..=5 {
                set_schedule(scan, pieces, Some(steps));
                cum.push(time_fwd());
            }
            let launches = if p > 1 || (p == 0 && whole - cum[3] > 0.05 * whole) {
                5
            } else {
                3
            };
            // The default's piece count by the engine's rule (FwdChoice::default_for, 132 SMs).
            let blocks = n * hh * 2;
            let pieces_used = match (launches, p) {
                (3, _) => 1,
                (_, 0) => (132 / blocks).clamp(1, 16),
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
                let (bytes, flops) = kernel_counts(kname, &lens, hh, kd, pieces_used);
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
        set_schedule("", "", None);
        let (gb, nb, insb) = graph_for("gdn_bwd");
        let bwd = time_graph(
            &caller,
            gb,
            nb,
            &insb,
            &["dQ", "dK", "dV", "dG", "dBeta", "d_initial_state"],
        );
        println!("BENCH ours bwd {name} {bwd:.4}");
        println!(
            "BENCH ours fwdbwd {name} {:.4} (fwd {default_fwd:.4} + bwd {bwd:.4}, timed apart)",
            default_fwd + bwd
        );
        inp.free();
    }
}

/// Sets (or removes, for `None`) one environment variable the engine reads at plan build.
fn set_env(name: &str, value: Option<&str>) {
    // SAFETY: the benchmark runs single-threaded (--test-threads=1); nothing else reads the
    // environment meanwhile.
    unsafe {
        match value {
            Some(v) => std::env::set_var(name, v),
            None => std::env::remove_var(name),
        }
    }
}

/// The prep kernels side by side (runs only when `DNNPLAN_GDN_BENCH_PREP` is set): per shape and
/// per prep (`v2` = the 4-warp `gdn_fwd_prep_*` / `gdn_bwd_prep_*`, `v3` = the 8-warp
/// `*_prep3_*`, the default), the forward prep's time (whole-execute time after 2 launches minus
/// after 1, `DNNPLAN_GDN_FWD_STEPS`), the whole forward (default schedule), the backward prep's
/// time (`DNNPLAN_GDN_BWD_STEPS` 2 minus 1) and the whole backward. Prints `BENCH prep ...` lines;
/// asserts nothing about speed.
#[test]
fn gdn_prep_variants() {
    if std::env::var_os("DNNPLAN_GDN_BENCH_PREP").is_none() {
        println!("skipped (set DNNPLAN_GDN_BENCH_PREP=1)");
        return;
    }
    let caller = Caller::new();
    let shapes: [(&str, Vec<i64>, i64); 3] = [
        ("(4,8192,16)", vec![8192; 4], 16),
        ("(16,2048,32)", vec![2048; 16], 32),
        (
            "ragged-mix-H16",
            vec![8192, 100, 4096, 1, 2048, 7000, 0, 3000, 512, 5000],
            16,
        ),
    ];
    set_schedule("", "", None);
    for (name, lens, hh) in shapes {
        let inp = BenchInputs::new(&caller, &lens, hh);
        let time = |op: &str, outs: &[&str]| {
            let (g, n, ins) = inp.graph(op);
            time_graph(&caller, g, n, &ins, outs)
        };
        let fwd_outs = ["O", "final_state"];
        let bwd_outs = ["dQ", "dK", "dV", "dG", "dBeta", "d_initial_state"];
        let (bytes, flops) = kernel_counts("prep", &lens, hh, inp.kd, 1);
        let mut fwd_prep_ms = Vec::new();
        for prep in [Some("v2"), Some("v3")] {
            set_env("DNNPLAN_GDN_FWD_PREP", prep);
            let cut = |var: &str, op: &str, outs: &[&str], steps: Option<&str>| {
                set_env(var, steps);
                let ms = time(op, outs);
                set_env(var, None);
                ms
            };
            let f1 = cut("DNNPLAN_GDN_FWD_STEPS", "gdn", &fwd_outs, Some("1"));
            let f2 = cut("DNNPLAN_GDN_FWD_STEPS", "gdn", &fwd_outs, Some("2"));
            let fw = cut("DNNPLAN_GDN_FWD_STEPS", "gdn", &fwd_outs, None);
            let b1 = cut("DNNPLAN_GDN_BWD_STEPS", "gdn_bwd", &bwd_outs, Some("1"));
            let b2 = cut("DNNPLAN_GDN_BWD_STEPS", "gdn_bwd", &bwd_outs, Some("2"));
            let bw = cut("DNNPLAN_GDN_BWD_STEPS", "gdn_bwd", &bwd_outs, None);
            let fp = f2 - f1;
            fwd_prep_ms.push(fp);
            println!(
                "BENCH prep {name} prep={} fwd-prep {fp:.4} ms {:.0} GB/s {:.1} TFLOP/s | fwd {fw:.4} ms | bwd-prep {:.4} ms | bwd {bw:.4} ms",
                prep.unwrap_or("-"),
                bytes / (fp * 1e-3) / 1e9,
                flops / (fp * 1e-3) / 1e12,
                b2 - b1,
            );
        }
        set_env("DNNPLAN_GDN_FWD_PREP", None);
        println!(
            "BENCH prep {name} speedup fwd-prep v2/v3 {:.2}x",
            fwd_prep_ms[0] / fwd_prep_ms[1]
        );
        inp.free();
    }
}
