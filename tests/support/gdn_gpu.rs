//! Driver plumbing shared by the `gdn_sm90` GPU tests and benchmark (tests/gpu_gdn.rs,
//! tests/gpu_gdn_bench.rs; included with `#[path]`): the caller's context and stream, device
//! buffers, the dtype byte codec, seeded random device inputs, event-timed medians, timing one
//! planned graph through the whole stack, and the benchmark shapes' inputs and one-node graphs.

#![allow(dead_code)] // each test binary uses a different subset

use cudarc::driver::sys::{self, CUdeviceptr, CUstream};
use dnnplan::dispatch::context::{ExecContext, Handle};
use dnnplan::dispatch::{HeurMode, PlanList, PlanOptions};
use dnnplan::ir::{DataType, Graph};
use dnnplan::pack::VariantPack;
use dnnplan::pack::executor::{PlanChoice, execute};
use dnnplan::pack::normalize::{Buffer, from_bindings};

pub const GDN_SM90_ID: i64 = 20_103;

/// The benchmark's shapes, graphs and per-kernel counts (device-free; tests/gdn_counts.rs checks
/// them on the CPU).
#[path = "gdn_counts.rs"]
pub mod gdn_counts;

pub use gdn_counts::BENCH_SHAPES;

pub fn ok(call: &str, r: sys::CUresult) {
    assert_eq!(r, sys::CUresult::CUDA_SUCCESS, "{call}");
}

/// The test plays the framework: its own context and non-blocking stream.
pub struct Caller {
    pub stream: CUstream,
}

impl Caller {
    pub fn new() -> Caller {
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

    pub fn alloc(&self, bytes: usize, fill: u8) -> CUdeviceptr {
        let mut d: CUdeviceptr = 0;
        // SAFETY: the context is current.
        unsafe { ok("alloc", sys::cuMemAlloc_v2(&mut d, bytes.max(1))) };
        self.fill(d, bytes, fill);
        d
    }

    /// Sets `bytes` bytes at `d` (an allocation of this context) to `byte`, and waits for it.
    pub fn fill(&self, d: CUdeviceptr, bytes: usize, byte: u8) {
        // SAFETY: the context is current; `d` holds at least `max(bytes, 1)` bytes.
        unsafe {
            ok("memset", sys::cuMemsetD8_v2(d, byte, bytes.max(1)));
            // Legacy-stream work is not ordered before the caller's non-blocking stream.
            ok("ctx sync", sys::cuCtxSynchronize());
        }
    }

    pub fn upload(&self, bytes: &[u8]) -> CUdeviceptr {
        let d = self.alloc(bytes.len(), 0);
        // SAFETY: `bytes` is valid for its length; `d` holds as many. The legacy-stream copy is
        // not ordered before launches on the caller's non-blocking stream: wait for it here.
        unsafe {
            ok(
                "htod",
                sys::cuMemcpyHtoD_v2(d, bytes.as_ptr().cast(), bytes.len()),
            );
            ok("ctx sync", sys::cuCtxSynchronize());
        };
        d
    }

    pub fn download(&self, d: CUdeviceptr, bytes: usize) -> Vec<u8> {
        let mut host = vec![0u8; bytes];
        // SAFETY: the stream is synchronized first; `d` holds `bytes`.
        unsafe {
            ok("stream sync", sys::cuStreamSynchronize(self.stream));
            ok(
                "dtoh",
                sys::cuMemcpyDtoH_v2(host.as_mut_ptr().cast(), d, bytes),
            );
        }
        host
    }
}

pub struct Rng(pub u64);
impl Rng {
    pub fn uni(&mut self, lo: f64, hi: f64) -> f64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^= z >> 31;
        lo + (hi - lo) * ((z >> 11) as f64 / (1u64 << 53) as f64)
    }
}

/// Rounds `x` to `dt` and appends its bytes; returns the rounded value.
pub fn put(dt: DataType, x: f64, out: &mut Vec<u8>) -> f64 {
    match dt {
        DataType::Float => {
            out.extend_from_slice(&(x as f32).to_le_bytes());
            f64::from(x as f32)
        }
        DataType::Bfloat16 => {
            let v = half::bf16::from_f64(x);
            out.extend_from_slice(&v.to_bits().to_le_bytes());
            v.to_f64()
        }
        DataType::Half => {
            let v = half::f16::from_f64(x);
            out.extend_from_slice(&v.to_bits().to_le_bytes());
            v.to_f64()
        }
        DataType::Int32 => {
            out.extend_from_slice(&(x as i32).to_le_bytes());
            x
        }
        DataType::Int64 => {
            out.extend_from_slice(&(x as i64).to_le_bytes());
            x
        }
        other => panic!("unsupported dtype {other:?}"),
    }
}

pub fn get(dt: DataType, b: &[u8]) -> f64 {
    match dt {
        DataType::Float => f64::from(f32::from_le_bytes([b[0], b[1], b[2], b[3]])),
        DataType::Bfloat16 => half::bf16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f64(),
        DataType::Half => half::f16::from_bits(u16::from_le_bytes([b[0], b[1]])).to_f64(),
        other => panic!("unsupported dtype {other:?}"),
    }
}

pub fn size(dt: DataType) -> usize {
    (dt.bits() / 8) as usize
}

/// Device bytes of `elems` values of `dt` drawn from `f` (fast, for the timing shapes).
pub fn device_random(
    caller: &Caller,
    dt: DataType,
    elems: usize,
    seed: u64,
    f: impl Fn(f64) -> f64,
) -> CUdeviceptr {
    let mut rng = Rng(seed);
    let mut bytes = Vec::with_capacity(elems * size(dt));
    for _ in 0..elems {
        put(dt, f(rng.uni(0.0, 1.0)), &mut bytes);
    }
    caller.upload(&bytes)
}

/// Device time (ms) of what `run` enqueues on the caller's stream: one interval between two
/// events, waited for.
pub fn event_ms(caller: &Caller, run: impl FnOnce()) -> f64 {
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
    f64::from(ms)
}

/// Median device time (ms) of `run` over 10 event-timed repetitions after 3 warm-ups.
pub fn event_median_ms(caller: &Caller, mut run: impl FnMut()) -> f64 {
    for _ in 0..3 {
        run();
    }
    let mut times: Vec<f64> = (0..10).map(|_| event_ms(caller, &mut run)).collect();
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// A built `gdn_sm90` plan with its bindings, its own output buffers and workspace.
pub struct GdnPlan {
    /// The graph the list was planned from (kept alive with the list).
    pub graph: Graph,
    /// The plan list; `at` is the built `gdn_sm90` entry.
    pub list: PlanList,
    /// Index of the `gdn_sm90` entry in `list`.
    pub at: usize,
    /// (uid, device address): the inputs given, then the outputs allocated here.
    pub bindings: Vec<(i64, CUdeviceptr)>,
    /// How many of `bindings` are the caller's inputs.
    pub inputs: usize,
    /// (device address, bytes) of each output, in `outputs` order.
    pub outputs: Vec<(CUdeviceptr, usize)>,
    /// The workspace and its size.
    pub ws: CUdeviceptr,
    /// Workspace bytes.
    pub ws_bytes: usize,
}

impl GdnPlan {
    /// Plans `graph` (node `node`) with `outputs` marked, builds the `gdn_sm90` entry (the
    /// engine reads its switches now), binds `inputs` and 0xFF-filled (NaN) outputs and workspace.
    pub fn build(
        caller: &Caller,
        mut graph: Graph,
        node: usize,
        inputs: &[(i64, CUdeviceptr)],
        outputs: &[&str],
    ) -> GdnPlan {
        for p in outputs {
            let uid = graph.nodes()[node].output(p).unwrap();
            graph.set_output(uid, true).unwrap();
        }
        let mut list =
            PlanList::plan(&mut graph, PlanOptions::detect(), &[HeurMode::A]).expect("planning");
        let mut bindings = inputs.to_vec();
        let mut outs = Vec::new();
        // Output sizes from the dtypes planning inferred.
        for p in outputs {
            let uid = graph.nodes()[node].output(p).unwrap();
            let t = graph.tensor(uid).unwrap();
            assert!(size(t.data_type) > 0, "{p}: dtype not inferred");
            let bytes = t.dims.iter().product::<i64>() as usize * size(t.data_type);
            let d = caller.alloc(bytes, 0xFF);
            bindings.push((uid, d));
            outs.push((d, bytes));
        }
        let at = list
            .entries()
            .iter()
            .position(|e| e.engine_id == GDN_SM90_ID)
            .expect("gdn_sm90 listed");
        list.build_plan_at_index(at).expect("build");
        let ws_bytes = list.compiled_at(at).expect("compiled").workspace_size() as usize;
        GdnPlan {
            graph,
            list,
            at,
            bindings,
            inputs: inputs.len(),
            outputs: outs,
            ws: caller.alloc(ws_bytes, 0xFF),
            ws_bytes,
        }
    }

    /// The variant pack of the bindings (raw addresses).
    pub fn pack(&self) -> VariantPack<'_> {
        from_bindings(
            self.list.declared_layout().expect("layout"),
            self.bindings
                .iter()
                .map(|(u, d)| (*u, Buffer::Address(*d as *mut std::ffi::c_void))),
            &[],
        )
        .expect("pack")
    }

    /// The execution context on `handle` with this plan's workspace.
    pub fn context<'a>(&self, handle: &'a Handle) -> ExecContext<'a> {
        ExecContext::new(
            handle,
            self.ws as *mut std::ffi::c_void,
            Some(self.ws_bytes as u64),
        )
    }

    /// Runs the built entry once on the context's stream.
    pub fn execute(&self, pack: &VariantPack<'_>, ctx: &ExecContext<'_>) {
        self.try_execute(pack, ctx).expect("execute")
    }

    /// [`GdnPlan::execute`], returning the library's error instead of panicking.
    pub fn try_execute(
        &self,
        pack: &VariantPack<'_>,
        ctx: &ExecContext<'_>,
    ) -> dnnplan::error::Result<()> {
        execute(&self.list, PlanChoice::AtIndex(self.at), pack, ctx)
    }

    /// Frees the outputs and the workspace allocated by [`GdnPlan::build`].
    pub fn free(self) {
        for (_, d) in self
            .bindings
            .iter()
            .skip(self.inputs)
            .chain([&(0, self.ws)])
        {
            // SAFETY: buffers of this plan.
            unsafe { ok("free", sys::cuMemFree_v2(*d)) };
        }
    }
}

/// Plans `graph` (node `node`), binds `inputs` and NaN-filled outputs, and returns the median
/// time of one execute (the plan list and buffers live only for the call).
pub fn time_graph(
    caller: &Caller,
    graph: Graph,
    node: usize,
    inputs: &[(i64, CUdeviceptr)],
    outputs: &[&str],
) -> f64 {
    let plan = GdnPlan::build(caller, graph, node, inputs, outputs);
    let handle = Handle::new(caller.stream.cast()).expect("handle");
    let pack = plan.pack();
    let ctx = plan.context(&handle);
    let ms = event_median_ms(caller, || plan.execute(&pack, &ctx));
    plan.free();
    ms
}

/// Sets (or removes, for `None`) one environment variable the engine reads at plan build.
pub fn set_env(name: &str, value: Option<&str>) {
    // SAFETY: the GPU tests and the benchmark run single-threaded (--test-threads=1); nothing
    // else reads the environment meanwhile.
    unsafe {
        match value {
            Some(v) => std::env::set_var(name, v),
            None => std::env::remove_var(name),
        }
    }
}

/// Whether an opt-in test (timing, benchmark) runs: `var` is set. Otherwise prints how to enable
/// it and returns false, so the test returns at once.
pub fn opted_in(var: &str) -> bool {
    let on = std::env::var_os(var).is_some();
    if !on {
        println!("skipped (set {var}=1)");
    }
    on
}

/// The comma list in the environment variable `name`, else the one in `default`.
pub fn env_list(name: &str, default: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_else(|_| default.to_owned())
        .split(',')
        .map(|x| x.trim().to_owned())
        .collect()
}

/// Whether [`BENCH_SHAPES`]`[index]` runs: `DNNPLAN_GDN_TIMING_SHAPES` is a comma list of
/// shape indices (unset: every shape).
pub fn timing_shape_selected(index: usize) -> bool {
    std::env::var("DNNPLAN_GDN_TIMING_SHAPES").map_or(true, |x| {
        x.split(',')
            .filter_map(|i| i.trim().parse::<usize>().ok())
            .any(|i| i == index)
    })
}

/// The benchmark's device inputs for one shape (bf16, K = V = 128, fp32 gates, beta and states).
pub struct BenchInputs {
    pub t: i64,
    pub n: i64,
    pub hh: i64,
    pub kd: i64,
    pub bufs: [CUdeviceptr; 9],
}

impl BenchInputs {
    pub fn new(caller: &Caller, lens: &[i64], hh: i64) -> BenchInputs {
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
    pub fn graph(&self, op: &str) -> (Graph, usize, Vec<(i64, CUdeviceptr)>) {
        self.graph_with(op, 0, None)
    }

    /// Rows of the backward's bf16 state checkpoints every 64 tokens (`T/64 + N`).
    pub fn checkpoint_rows(&self) -> i64 {
        self.t / 64 + self.n
    }

    /// [`BenchInputs::graph`] with `checkpoint_every_n_tokens = every` (0: none). The forward's
    /// `state_checkpoints` then comes out in the io dtype; a "gdn_bwd" binds `ckpt` as its
    /// `state_checkpoints` input (bf16, [`BenchInputs::checkpoint_rows`] rows of `[H, K, K]`,
    /// meant for `every = 64`).
    pub fn graph_with(
        &self,
        op: &str,
        every: i64,
        ckpt: Option<CUdeviceptr>,
    ) -> (Graph, usize, Vec<(i64, CUdeviceptr)>) {
        self.graph_ckpt(
            op,
            every,
            ckpt.map(|c| (c, DataType::Bfloat16, self.checkpoint_rows())),
        )
    }

    /// [`BenchInputs::graph_with`] with the backward's `state_checkpoints` given as (buffer,
    /// dtype, rows) (session 17: any cadence, io or fp32 rows).
    pub fn graph_ckpt(
        &self,
        op: &str,
        every: i64,
        ckpt: Option<(CUdeviceptr, DataType, i64)>,
    ) -> (Graph, usize, Vec<(i64, CUdeviceptr)>) {
        let [q, k, v, d_o, g, beta, h0, dfs, cud] = self.bufs;
        let ports = gdn_counts::bench_ports(
            op,
            self.t,
            self.n,
            self.hh,
            self.kd,
            ckpt.map(|(_, dt, rows)| (dt, rows)),
        );
        let (graph, node, uids) = gdn_counts::bench_graph(op, &ports, every);
        let ins = ports
            .iter()
            .zip(uids)
            .map(|((p, _, _), u)| {
                let d = match *p {
                    "q" => q,
                    "k" => k,
                    "v" => v,
                    "g" => g,
                    "beta" => beta,
                    "cu_seqlens" => cud,
                    "initial_state" => h0,
                    "dO" => d_o,
                    "d_final_state" => dfs,
                    _ => ckpt.map_or(0, |c| c.0),
                };
                (u, d)
            })
            .collect();
        (graph, node, ins)
    }

    /// Dims of the saved chunk factors of these inputs (session 37): `[max(T/64 + N, 1), H,
    /// GDN_CHUNK_FACTOR_BYTES]` bytes.
    pub fn factor_dims(&self) -> Vec<i64> {
        self.factor_dims_at(0)
    }

    /// [`BenchInputs::factor_dims`] at `checkpoint_every_n_tokens = every` (at 64 with the U
    /// tiles, session 38).
    pub fn factor_dims_at(&self, every: i64) -> Vec<i64> {
        use dnnplan::ir::infer::{gdn_chunk_factor_bytes, gdn_chunk_factor_rows};
        vec![
            gdn_chunk_factor_rows(self.t, self.n),
            self.hh,
            gdn_chunk_factor_bytes(self.kd, every),
        ]
    }

    /// [`BenchInputs::graph`] with the saved chunk factors at `buf` ([`BenchInputs::factor_dims`]
    /// bytes): the forward's output `chunk_factors` (`output_chunk_factors = true`), the
    /// backward's input.
    pub fn graph_saved(
        &self,
        op: &str,
        buf: CUdeviceptr,
    ) -> (Graph, usize, Vec<(i64, CUdeviceptr)>) {
        self.graph_saved_replay(op, buf, None)
    }

    /// [`BenchInputs::graph_saved`], with `ckpt` the saved replay (session 38): checkpoints
    /// every 64 tokens (the forward's output, the backward's input at `ckpt`) and the factors
    /// with the U tiles ([`BenchInputs::factor_dims_at`] 64).
    pub fn graph_saved_replay(
        &self,
        op: &str,
        buf: CUdeviceptr,
        ckpt: Option<CUdeviceptr>,
    ) -> (Graph, usize, Vec<(i64, CUdeviceptr)>) {
        use dnnplan::ir::{AttrValue, Tensor};
        let every = if ckpt.is_some() { 64 } else { 0 };
        let bwd_rows = ckpt.filter(|_| op == "gdn_bwd");
        let (mut g, node, mut ins) = self.graph_with(op, every, bwd_rows);
        if let Some(c) = ckpt.filter(|_| op != "gdn_bwd") {
            // The forward's rows into the buffer the backward reads.
            let u = g.nodes()[node]
                .output("state_checkpoints")
                .expect("checkpoints");
            g.set_output(u, true).expect("mark output");
            ins.push((u, c));
        }
        let u = g
            .add_tensor(Tensor::new(
                "chunk_factors",
                &self.factor_dims_at(every),
                DataType::Uint8,
            ))
            .expect("tensor");
        if op == "gdn_bwd" {
            g.bind_input(node, "chunk_factors", u).expect("input");
        } else {
            g.set_attr(node, "output_chunk_factors", AttrValue::Bool(true))
                .expect("attr");
            g.bind_output(node, "chunk_factors", u).expect("output");
            g.set_output(u, true).expect("mark output");
        }
        ins.push((u, buf));
        (g, node, ins)
    }

    /// [`BenchInputs::time`] of [`BenchInputs::graph_saved`]: the saving forward, or the backward
    /// reading the factors a saving forward left at `buf`.
    pub fn time_saved(&self, caller: &Caller, op: &str, buf: CUdeviceptr) -> f64 {
        self.time_saved_replay(caller, op, buf, None)
    }

    /// [`BenchInputs::time_saved`] of [`BenchInputs::graph_saved_replay`] (`ckpt`: the saved
    /// replay's checkpoint rows, [`BenchInputs::checkpoint_rows`] of `[H, K, K]` bf16).
    pub fn time_saved_replay(
        &self,
        caller: &Caller,
        op: &str,
        buf: CUdeviceptr,
        ckpt: Option<CUdeviceptr>,
    ) -> f64 {
        let (g, n, ins) = self.graph_saved_replay(op, buf, ckpt);
        time_graph(caller, g, n, &ins, Self::outputs(op))
    }

    /// Bytes of the saved replay's checkpoint rows ([`BenchInputs::checkpoint_rows`] of `[H, K,
    /// K]` bf16).
    pub fn checkpoint_bytes(&self) -> usize {
        (self.checkpoint_rows() * self.hh * self.kd * self.kd * 2) as usize
    }

    /// Workspace bytes of `op`'s plan on these inputs (`saved`: with the chunk factors at that
    /// buffer bound, [`BenchInputs::graph_saved`]).
    pub fn workspace_bytes(&self, caller: &Caller, op: &str, saved: Option<CUdeviceptr>) -> usize {
        let (g, n, ins) = match saved {
            Some(buf) => self.graph_saved(op, buf),
            None => self.graph(op),
        };
        let plan = GdnPlan::build(caller, g, n, &ins, Self::outputs(op));
        let bytes = plan.ws_bytes;
        plan.free();
        bytes
    }

    /// The outputs a timing of `op` binds.
    pub fn outputs(op: &str) -> &'static [&'static str] {
        if op == "gdn_bwd" {
            &["dQ", "dK", "dV", "dG", "dBeta", "d_initial_state"]
        } else {
            &["O", "final_state"]
        }
    }

    /// Median time of one execute of `op`'s plan on these inputs ([`time_graph`]).
    pub fn time(&self, caller: &Caller, op: &str) -> f64 {
        let (g, n, ins) = self.graph(op);
        time_graph(caller, g, n, &ins, Self::outputs(op))
    }

    /// [`BenchInputs::time`] with only the plan's first `steps` launches (`None`: all of them),
    /// through `DNNPLAN_GDN_FWD_STEPS` / `DNNPLAN_GDN_BWD_STEPS` (read at plan build; removed
    /// again after): per-kernel times are differences of these.
    pub fn time_cut(&self, caller: &Caller, op: &str, steps: Option<usize>) -> f64 {
        let var = if op == "gdn_bwd" {
            "DNNPLAN_GDN_BWD_STEPS"
        } else {
            "DNNPLAN_GDN_FWD_STEPS"
        };
        set_env(var, steps.map(|n| n.to_string()).as_deref());
        let ms = self.time(caller, op);
        set_env(var, None);
        ms
    }

    /// [`BenchInputs::time_cut`] after each of `steps` launches, in that order: cumulative
    /// times whose differences ([`stage_times`]) are the launches' times.
    pub fn time_cuts(
        &self,
        caller: &Caller,
        op: &str,
        steps: impl IntoIterator<Item = usize>,
    ) -> Vec<f64> {
        steps
            .into_iter()
            .map(|n| self.time_cut(caller, op, Some(n)))
            .collect()
    }

    pub fn free(self) {
        for d in self.bufs {
            // SAFETY: inputs of this shape.
            unsafe { ok("free", sys::cuMemFree_v2(d)) };
        }
    }
}

/// The differences of consecutive cumulative times (`cum[i + 1] − cum[i]`): each stage's time.
pub fn stage_times(cum: &[f64]) -> Vec<f64> {
    cum.windows(2).map(|w| w[1] - w[0]).collect()
}

/// `"<name> <time>"` per stage of `cum` ([`stage_times`], `prec` decimals), stage `i` named
/// `names[i]`.
pub fn stage_parts(names: &[&str], cum: &[f64], prec: usize) -> Vec<String> {
    names
        .iter()
        .zip(stage_times(cum))
        .map(|(n, t)| format!("{n} {t:.prec$}"))
        .collect()
}
