//! GPU tests of the `gdn_sm90` engine (feature `gpu-tests`, run on the H200 machine), through the
//! whole stack: IR graph -> plan list (real manifest) -> build -> variant pack -> execute on a
//! caller stream. Outputs are compared with the fp64 per-token reference
//! (`engines::gdn::reference`) over the very values the GPU read (inputs rounded to their device
//! dtypes first), with the spec's §9.2 tolerances (rms ratio: bf16 2e-2, fp16 1e-2).
//! Coverage (§9.4): 1 forward parity (dtypes, K = V ∈ {64, 128}, GQA/GVA, gate modes, l2norm,
//! scale, initial state fp32/bf16, int64 cu_seqlens, ragged lengths with partial chunks and empty
//! sequences); 5 batch invariance (a sequence alone == the same sequence in a batch, bitwise);
//! 7 a permuted `state_indices` pool in a NaN-filled buffer, overwritten in place, spare rows
//! untouched; 8 NaN-filled workspace and outputs before execute, a non-blocking side stream,
//! repeated runs bitwise identical. The backward is declined (tests/gdn_engine.rs).
#![cfg(feature = "gpu-tests")]

#[path = "support/gdn_gpu.rs"]
mod gdn_gpu;

use cudarc::driver::sys::{self, CUdeviceptr};
use dnnplan::dispatch::context::{ExecContext, Handle};
use dnnplan::dispatch::{HeurMode, PlanList, PlanOptions};
use dnnplan::engines::gdn::chunk_factors::ChunkFactorsLayout;
use dnnplan::engines::gdn::reference::{
    self, GateDomain, GdnInputs, GdnOptions, GdnShape, rms_ratio,
};
use dnnplan::ir::infer::{gdn_chunk_factor_bytes, gdn_chunk_factor_rows, gdn_chunk_u_bytes};
use dnnplan::ir::{DataType, Graph, GraphContext, NodeBuilder, Tensor};
use dnnplan::pack::executor::{PlanChoice, execute};
use dnnplan::pack::normalize::{Buffer, from_bindings};
use gdn_gpu::{
    BENCH_SHAPES, BenchInputs, Caller, GDN_SM90_ID, GdnPlan, Rng, env_list, event_ms, get, ok,
    opted_in, put, set_env, size, stage_parts, stage_times, timing_shape_selected,
};

/// One configuration.
#[derive(Clone)]
struct Case {
    name: &'static str,
    lens: Vec<usize>,
    shape: GdnShape,
    opts: GdnOptions,
    io: DataType,
    g_dt: DataType,
    beta_dt: DataType,
    state: Option<DataType>,
    params: bool,
    pool: bool,
    cu64: bool,
    /// Also measure the host time per execute against bare launches (printed, never asserted).
    host_timing: bool,
    /// Log gates with α ∈ [0.995, 1) instead of [0.5, 1): state and state gradients then carry
    /// across chunks and pieces (a 64-token chunk otherwise decays them by ~e^−20).
    long_span: bool,
    /// Keys drawn around one shared direction (cos ≈ 0.5 between tokens) instead of independently:
    /// L = β k kᵀ ⊙ decay is then far from zero, so the per-chunk triangular inverse T = (I + L)⁻¹
    /// is far from the identity (the prep's inverse numerics: TF32x3 products on the tensor cores).
    aligned_keys: bool,
    /// State checkpoints: (`checkpoint_every_n_tokens`, the `state_checkpoints` dtype).
    ckpt: Option<(usize, DataType)>,
    /// The forward saves its chunk factors (`output_chunk_factors`, session 37; [`Outcome::factors`]).
    save_factors: bool,
    /// The backward reads these saved chunk factors (a forward's [`Outcome::factors`]).
    chunk_factors: Option<Vec<u8>>,
    /// `cu_seqlens` values uploaded in place of the drawn offsets: malformed on purpose
    /// (decreasing, negative, past `T`). The engine runs them as their clamped running maximum
    /// ([`reference::sanitized_cu_seqlens`], session 43), which must be the drawn offsets.
    cu_device: Option<Vec<i64>>,
    /// Under a pool, the sequences whose `state_indices` entry is an index outside the pool
    /// (−1, the pool's rows, `i32::MAX`, `i32::MIN` in turn; session 44): the engine runs them
    /// from a zero state and stores no final state for them (`gdn::StateSource`).
    pool_outside: Vec<usize>,
}

fn base(name: &'static str, lens: &[usize], k: usize) -> Case {
    Case {
        name,
        lens: lens.to_vec(),
        shape: GdnShape {
            h: 2,
            hk: 2,
            hv: 2,
            k,
            v: k,
        },
        opts: GdnOptions::default(),
        io: DataType::Bfloat16,
        g_dt: DataType::Float,
        beta_dt: DataType::Float,
        state: Some(DataType::Float),
        params: false,
        pool: false,
        cu64: false,
        host_timing: false,
        long_span: false,
        aligned_keys: false,
        ckpt: None,
        save_factors: false,
        chunk_factors: None,
        cu_device: None,
        pool_outside: Vec::new(),
    }
}

/// A case the default rule cuts into pieces (summaries, the fp32 chain, seeded output passes):
/// 1500 + 900 tokens on two heads at K = V = 128, with slowly decaying gates (α ≥ 0.995) so that
/// the chained seeds reach O, the final state and the gradients.
fn piece_chain_case(name: &'static str) -> Case {
    let mut c = base(name, &[1500, 900], 128);
    c.long_span = true;
    c
}

/// Bytes of each guard band around the outputs and the workspace.
const GUARD: usize = 4096;
/// The guard bands' byte (the outputs and the workspace are filled with 0xFF).
const GUARD_BYTE: u8 = 0xA5;

/// A device buffer of `bytes` between two [`GUARD`]-byte bands of [`GUARD_BYTE`]: a kernel that
/// writes just outside the buffer changes a band ([`Guarded::check`]); farther writes land in
/// other allocations or unmapped memory, which compute-sanitizer's memcheck reports.
struct Guarded {
    base: CUdeviceptr,
    bytes: usize,
}

impl Guarded {
    /// A buffer of `bytes` filled with `fill`, between its bands.
    fn new(caller: &Caller, bytes: usize, fill: u8) -> Guarded {
        let base = caller.alloc(bytes + 2 * GUARD, GUARD_BYTE);
        if bytes > 0 {
            caller.fill(base + GUARD as u64, bytes, fill);
        }
        Guarded { base, bytes }
    }

    /// The buffer's device address (256-byte aligned, as the allocation).
    fn at(&self) -> CUdeviceptr {
        self.base + GUARD as u64
    }

    /// Panics naming `what` when a byte of either band changed.
    fn check(&self, caller: &Caller, what: &str) {
        let all = caller.download(self.base, self.bytes + 2 * GUARD);
        let (head, rest) = all.split_at(GUARD);
        let tail = &rest[self.bytes..];
        for (band, bytes) in [("before", head), ("after", tail)] {
            if let Some(i) = bytes.iter().position(|&b| b != GUARD_BYTE) {
                panic!(
                    "{what}: written {band} the buffer (guard byte {i} is {:#04x})",
                    bytes[i]
                );
            }
        }
    }
}

/// Host copies (rounded values) and device bytes of one tensor.
struct Host {
    vals: Vec<f64>,
    bytes: Vec<u8>,
    dims: Vec<i64>,
    dt: DataType,
}

fn host(dt: DataType, dims: &[i64], mut f: impl FnMut(usize) -> f64) -> Host {
    let n: i64 = dims.iter().product();
    let mut bytes = Vec::new();
    let vals = (0..n as usize).map(|i| put(dt, f(i), &mut bytes)).collect();
    Host {
        vals,
        bytes,
        dims: dims.to_vec(),
        dt,
    }
}

struct Outcome {
    o: Vec<u8>,
    state: Vec<u8>,
    /// The specified checkpoint rows (empty without checkpoints).
    ckpt: Vec<u8>,
    /// The whole `chunk_factors` buffer (empty unless [`Case::save_factors`]).
    factors: Vec<u8>,
}

/// The rounded inputs of one case (see [`draw`]).
struct Gen {
    sh: GdnShape,
    t: i64,
    n: i64,
    ho: i64,
    k: i64,
    v: i64,
    cu: Vec<usize>,
    q: Host,
    kk: Host,
    vv: Host,
    g: Host,
    beta: Host,
    cuh: Host,
    a_log: Option<Host>,
    dt_bias: Option<Host>,
    /// Elements of one state row (`HO·V·K`).
    sl: usize,
    /// Pool row of each sequence (`None`: its index is outside the pool, [`Case::pool_outside`]).
    rows: Vec<Option<usize>>,
    npool: i64,
    init: Option<Host>,
    idx: Option<Host>,
}

impl Gen {
    /// The ports every node binds, in binding order, with their tensors.
    fn required(&self) -> [(&'static str, &Host); 6] {
        [
            ("q", &self.q),
            ("k", &self.kk),
            ("v", &self.vv),
            ("g", &self.g),
            ("beta", &self.beta),
            ("cu_seqlens", &self.cuh),
        ]
    }

    /// The reference's inputs: the drawn tensors' rounded values, with `initial_state` the
    /// states in sequence order (`None`: none) and no pool.
    fn inputs<'a>(&'a self, initial_state: Option<&'a [f64]>) -> GdnInputs<'a> {
        GdnInputs {
            q: &self.q.vals,
            k: &self.kk.vals,
            v: &self.vv.vals,
            g: &self.g.vals,
            beta: &self.beta.vals,
            cu_seqlens: &self.cu,
            initial_state,
            state_indices: None,
            a_log: self.a_log.as_ref().map(|h| h.vals.as_slice()),
            dt_bias: self.dt_bias.as_ref().map(|h| h.vals.as_slice()),
        }
    }
}

/// Draws the inputs of `c` (deterministic in `seed`).
fn draw(c: &Case, seed: u64) -> Gen {
    // One generator per tensor: a batch whose first sequence equals another problem draws the
    // same values for that sequence (token-major prefixes).
    let rng_for = |tag: u64| Rng(seed.wrapping_mul(1_000_003).wrapping_add(tag << 40));
    let sh = c.shape;
    let (t, n, ho) = (
        c.lens.iter().sum::<usize>() as i64,
        c.lens.len() as i64,
        sh.ho() as i64,
    );
    let (k, v) = (sh.k as i64, sh.v as i64);
    let mut cu = vec![0usize];
    for l in &c.lens {
        cu.push(cu.last().unwrap() + l);
    }
    let l2 = c.opts.use_qk_l2norm;
    let dir: Vec<f64> = {
        let mut r = rng_for(7);
        (0..k).map(|_| r.uni(-1.0, 1.0)).collect()
    };
    let unit = |rng: &mut Rng, heads: i64, mix: f64| -> Vec<f64> {
        let mut out = Vec::new();
        for _ in 0..t * heads {
            let row: Vec<f64> = (0..k as usize)
                .map(|d| mix * dir[d] + rng.uni(-1.0, 1.0))
                .collect();
            let s = if l2 {
                1.0
            } else {
                1.0 / row.iter().map(|x| x * x).sum::<f64>().sqrt()
            };
            out.extend(row.iter().map(|x| x * s));
        }
        out
    };
    let qv = unit(&mut rng_for(1), sh.h as i64, 0.0);
    let kv = unit(
        &mut rng_for(2),
        sh.hk as i64,
        if c.aligned_keys { 1.0 } else { 0.0 },
    );
    let mut rng = rng_for(3);
    let q = host(c.io, &[t, sh.h as i64, k], |i| qv[i]);
    let kk = host(c.io, &[t, sh.hk as i64, k], |i| kv[i]);
    let vv = host(c.io, &[t, sh.hv as i64, v], |_| rng.uni(-1.0, 1.0));
    let mut rng = rng_for(4);
    let g = host(c.g_dt, &[t, ho], |_| {
        if c.opts.safe_gate {
            rng.uni(-3.0, 1.0)
        } else if c.opts.gate_domain == GateDomain::Linear {
            rng.uni(0.5, 1.0)
        } else {
            rng.uni(if c.long_span { 0.995 } else { 0.5 }, 1.0).ln()
        }
    });
    let mut rng = rng_for(5);
    let beta = host(c.beta_dt, &[t, ho], |_| {
        if c.opts.use_beta_sigmoid {
            rng.uni(-2.0, 2.0)
        } else {
            rng.uni(0.0, 1.0)
        }
    });
    let cu_dt = if c.cu64 {
        DataType::Int64
    } else {
        DataType::Int32
    };
    let cuh = match &c.cu_device {
        Some(raw) => {
            assert_eq!(
                reference::sanitized_cu_seqlens(raw, t as usize),
                cu,
                "{}: the offsets the engine runs for the uploaded ones",
                c.name
            );
            host(cu_dt, &[n + 1], |i| raw[i] as f64)
        }
        None => host(cu_dt, &[n + 1], |i| cu[i] as f64),
    };
    let mut rng = rng_for(6);
    let a_log = c
        .params
        .then(|| host(DataType::Float, &[ho], |_| rng.uni(-1.0, 0.5)));
    let dt_bias = c
        .params
        .then(|| host(DataType::Float, &[ho], |_| rng.uni(-0.5, 0.5)));
    let sl = (ho * v * k) as usize;
    let rows: Vec<Option<usize>> = if c.pool {
        (0..n as usize)
            .map(|i| (!c.pool_outside.contains(&i)).then_some((2 * i + 1) % (n as usize + 3)))
            .collect()
    } else {
        (0..n as usize).map(Some).collect()
    };
    let npool = if c.pool { n + 3 } else { n };
    let mut rng = rng_for(7);
    let init = c.state.map(|sd| {
        let mut vals = vec![f64::NAN; npool as usize * sl];
        for &r in rows.iter().flatten() {
            for e in 0..sl {
                vals[r * sl + e] = rng.uni(-0.1, 0.1);
            }
        }
        let mut h = host(sd, &[npool, ho, v, k], |i| vals[i]);
        for (i, x) in vals.iter().enumerate() {
            if x.is_nan() {
                h.bytes[i * size(sd)..(i + 1) * size(sd)].fill(0xFF);
            }
        }
        h
    });
    let idx = c.pool.then(|| {
        let outside = [-1.0, npool as f64, f64::from(i32::MAX), f64::from(i32::MIN)];
        host(DataType::Int32, &[n], |i| match rows[i] {
            Some(r) => r as f64,
            None => outside[c.pool_outside.iter().position(|&o| o == i).unwrap_or(0) % 4],
        })
    });

    Gen {
        sh,
        t,
        n,
        ho,
        k,
        v,
        cu,
        q,
        kk,
        vv,
        g,
        beta,
        cuh,
        a_log,
        dt_bias,
        sl,
        rows,
        npool,
        init,
        idx,
    }
}

/// Runs `c` on the GPU through the plan list and checks it against the reference; returns the
/// raw output bytes (for bitwise comparisons).
fn run(c: &Case, seed: u64, caller: &Caller) -> Outcome {
    let drawn = draw(c, seed);
    let Gen {
        sh,
        t,
        n,
        ho,
        v,
        ref cu,
        ref a_log,
        ref dt_bias,
        sl,
        ref rows,
        npool,
        ref init,
        ref idx,
        ..
    } = drawn;

    // The graph.
    let mut graph = Graph::new(GraphContext::new(c.io, DataType::Float, DataType::Float));
    let uid = |name: &str, h: &Host, graph: &mut Graph| {
        graph.add_tensor(Tensor::new(name, &h.dims, h.dt)).unwrap()
    };
    let mut b = NodeBuilder::by_name("gdn").unwrap().name("gdn0");
    let mut bound: Vec<(i64, &Host)> = Vec::new();
    let required = drawn.required().map(|(port, h)| (port, Some(h)));
    for (port, h) in required.into_iter().chain([
        ("initial_state", init.as_ref()),
        ("a_log", a_log.as_ref()),
        ("dt_bias", dt_bias.as_ref()),
        ("state_indices", idx.as_ref()),
    ]) {
        if let Some(h) = h {
            let u = uid(port, h, &mut graph);
            b = b.input(port, u);
            bound.push((u, h));
        }
    }
    b = b
        .bool("output_final_state", true)
        .bool("use_qk_l2norm", c.opts.use_qk_l2norm)
        .bool("use_beta_sigmoid", c.opts.use_beta_sigmoid)
        .bool("allow_neg_eigval", c.opts.allow_neg_eigval)
        .bool("safe_gate", c.opts.safe_gate)
        .bool("overwrite_initial_state", c.pool)
        .bool("output_chunk_factors", c.save_factors);
    if c.opts.gate_domain == GateDomain::Linear {
        b = b.attr("gate_domain", dnnplan::ir::AttrValue::Str("linear".into()));
    }
    if let Some(s) = c.opts.scale {
        b = b.attr("scale", dnnplan::ir::AttrValue::Float(s));
    }
    if let Some((every, _)) = c.ckpt {
        b = b.int("checkpoint_every_n_tokens", every as i64);
    }
    let node = graph.add_node(b).unwrap();
    let o_uid = graph.nodes()[node].output("O").unwrap();
    let fs_uid = graph.nodes()[node].output("final_state").unwrap();
    graph.set_output(o_uid, true).unwrap();
    graph.set_output(fs_uid, true).unwrap();
    let ck_uid = c.ckpt.map(|(_, dt)| {
        let u = graph.nodes()[node].output("state_checkpoints").unwrap();
        graph.set_data_type(u, dt).unwrap();
        graph.set_output(u, true).unwrap();
        u
    });
    let factors_uid = c.save_factors.then(|| {
        let u = graph.nodes()[node].output("chunk_factors").unwrap();
        graph.set_output(u, true).unwrap();
        u
    });

    let mut list =
        PlanList::plan(&mut graph, PlanOptions::detect(), &[HeurMode::A]).expect("planning");
    let at = list
        .entries()
        .iter()
        .position(|e| e.engine_id == GDN_SM90_ID)
        .unwrap_or_else(|| panic!("{}: gdn_sm90 not listed", c.name));
    list.build_plan_at_index(at).expect("build");
    let plan = list.compiled_at(at).expect("compiled");
    let ws_bytes = plan.workspace_size() as usize;

    // Device buffers: inputs, NaN-filled outputs and workspace.
    let mut bindings: Vec<(i64, CUdeviceptr)> = bound
        .iter()
        .map(|(u, h)| (*u, caller.upload(&h.bytes)))
        .collect();
    let o_bytes = (t * ho * v) as usize * size(c.io);
    // Every output and the workspace between guard bands (checked after the last execute).
    let mut guarded: Vec<(&str, Guarded)> = Vec::new();
    let mut guarded_alloc = |what: &'static str, bytes: usize| {
        let g = Guarded::new(caller, bytes, 0xFF);
        let at = g.at();
        guarded.push((what, g));
        at
    };
    let o_dev = guarded_alloc("O", o_bytes);
    bindings.push((o_uid, o_dev));
    let sdt = c.state.unwrap_or(DataType::Float);
    let init_uid = bindings
        .iter()
        .find(|(u, _)| Some(*u) == graph.tensor_by_name("initial_state").map(|x| x.uid))
        .map(|(_, d)| *d);
    let fs_dev = match (c.pool, init_uid) {
        (true, Some(d)) => d, // overwrite in place
        _ => guarded_alloc("final_state", n as usize * sl * size(sdt)),
    };
    bindings.push((fs_uid, fs_dev));
    // Checkpoints: the allocation bound max(T/c + N, 1) rows, NaN-filled; only the specified
    // Σ ceil(T_b/c) rows are read back.
    let (ck_every, ck_dt) = c.ckpt.unwrap_or((0, DataType::Float));
    let ck_rows = reference::checkpoint_rows(cu, ck_every);
    let ck_bytes = ck_rows * sl * size(ck_dt);
    let ck_dev = ck_uid.map(|u| {
        let alloc = (t as usize / ck_every + n as usize).max(1) * sl * size(ck_dt);
        let d = guarded_alloc("state_checkpoints", alloc);
        bindings.push((u, d));
        d
    });
    let read_ckpt = || ck_dev.map_or(Vec::new(), |d| caller.download(d, ck_bytes));
    // Saved chunk factors: the declared buffer, 0xFF-filled (slots no chunk uses stay so).
    // With checkpoints at every chunk it holds the U tiles too (session 38).
    let every = c.ckpt.map_or(0, |(e, _)| e as i64);
    let factor_bytes =
        (gdn_chunk_factor_rows(t, n) * ho * gdn_chunk_factor_bytes(v, every)) as usize;
    let factors_dev = factors_uid.map(|u| {
        let d = guarded_alloc("chunk_factors", factor_bytes);
        bindings.push((u, d));
        d
    });
    let read_factors = || factors_dev.map_or(Vec::new(), |d| caller.download(d, factor_bytes));
    let ws = guarded_alloc("workspace", ws_bytes);

    let handle = Handle::new(caller.stream.cast()).expect("handle");
    let layout = list.declared_layout().expect("layout");
    let pack = from_bindings(
        layout,
        bindings
            .iter()
            .map(|(u, d)| (*u, Buffer::Address(*d as *mut std::ffi::c_void))),
        &[],
    )
    .expect("pack");
    let ctx = ExecContext::new(&handle, ws as *mut std::ffi::c_void, Some(ws_bytes as u64));
    execute(&list, PlanChoice::AtIndex(at), &pack, &ctx).expect("execute");
    let o = caller.download(o_dev, o_bytes);
    let state = caller.download(fs_dev, npool as usize * sl * size(sdt));
    let ckpt = read_ckpt();
    let factors = read_factors();
    // Repeated run: bitwise identical (the pool is re-uploaded first). The copy runs on the
    // legacy stream, which the caller's non-blocking stream does not wait for, and a pageable
    // copy may return before its DMA lands: synchronise the context before the next launch (a
    // one-launch forward reads the initial state at once and caught this).
    if let (true, Some(h)) = (c.pool, init.as_ref()) {
        // SAFETY: same size as the first upload.
        unsafe {
            ok(
                "htod",
                sys::cuMemcpyHtoD_v2(fs_dev, h.bytes.as_ptr().cast(), h.bytes.len()),
            );
            ok("ctx sync", sys::cuCtxSynchronize());
        };
    }
    // O and the final state on the device equal the first execute's, bit for bit.
    let expect_first_outputs = |how: &str| {
        let o_now = caller.download(o_dev, o_bytes);
        assert_eq!(o_now, o, "{}: O differs {how}", c.name);
        let state_now = caller.download(fs_dev, state.len());
        assert_eq!(state_now, state, "{}: final state differs {how}", c.name);
        assert!(read_ckpt() == ckpt, "{}: checkpoints differ {how}", c.name);
        assert!(
            read_factors() == factors,
            "{}: chunk factors differ {how}",
            c.name
        );
    };
    execute(&list, PlanChoice::AtIndex(at), &pack, &ctx).expect("execute again");
    expect_first_outputs("in a repeated run");

    // Replayed from a CUDA graph over poisoned outputs: bitwise the direct execute (not for a
    // pool overwritten in place, whose input the first runs consumed).
    let launches = (!c.pool).then(|| {
        caller.fill(o_dev, o_bytes, 0xFF);
        caller.fill(fs_dev, state.len(), 0xFF);
        if let Some(d) = ck_dev {
            caller.fill(d, ck_bytes, 0xFF);
        }
        if let Some(d) = factors_dev {
            caller.fill(d, factor_bytes, 0xFF);
        }
        let launches = capture_and_replay(caller, || {
            execute(&list, PlanChoice::AtIndex(at), &pack, &ctx).expect("captured execute")
        });
        expect_first_outputs("when replayed from a CUDA graph");
        println!(
            "{}: captured into a CUDA graph ({launches} kernels), replay bitwise equal",
            c.name
        );
        launches
    });

    if c.host_timing {
        let launches = launches.expect("host timing runs on a case without an in-place pool");
        host_time_report(caller, launches, || {
            execute(&list, PlanChoice::AtIndex(at), &pack, &ctx).expect("timed execute")
        });
    }
    for (what, g) in &guarded {
        g.check(caller, &format!("{}: {what}", c.name));
    }

    // Reference over the rounded values.
    // A sequence whose index is outside the pool starts from a zero state.
    let packed_init: Option<Vec<f64>> = init.as_ref().map(|h| {
        rows.iter()
            .flat_map(|r| r.map_or(vec![0.0; sl], |r| h.vals[r * sl..(r + 1) * sl].to_vec()))
            .collect()
    });
    let inp = drawn.inputs(packed_init.as_deref());
    let (r, r_ckpt) = reference::forward_with_checkpoints(&sh, &c.opts, &inp, ck_every);
    let og: Vec<f64> = o.chunks(size(c.io)).map(|b| get(c.io, b)).collect();
    // The final states of the sequences that name a row (the others store none).
    let fg: Vec<f64> = rows
        .iter()
        .flatten()
        .flat_map(|&row| (0..sl).map(move |e| (row, e)))
        .map(|(row, e)| get(sdt, &state[(row * sl + e) * size(sdt)..]))
        .collect();
    let rf: Vec<f64> = r
        .final_state
        .chunks(sl)
        .zip(rows)
        .filter(|(_, row)| row.is_some())
        .flat_map(|(s, _)| s.iter().copied())
        .collect();
    let tol = if c.io == DataType::Bfloat16 {
        2e-2
    } else {
        1e-2
    };
    let (eo, es) = (rms_ratio(&og, &r.o), rms_ratio(&fg, &rf));
    if std::env::var_os("DNNPLAN_GDN_TEST_HASHES").is_some() {
        // Equal lines across forward schedules mean bitwise-equal outputs.
        println!(
            "{:48} O #{:016x}  state #{:016x}",
            c.name,
            fnv1a(&o),
            fnv1a(&state)
        );
        if !ckpt.is_empty() {
            // A line of its own, so that the lines of a run without checkpoints stay as they were.
            println!("{:48} checkpoints #{:016x}", c.name, fnv1a(&ckpt));
        }
    }
    println!("{:48} O rms {eo:.3e}  state rms {es:.3e}", c.name);
    assert!(
        og.iter().all(|x| x.is_finite()),
        "{}: unwritten or non-finite O",
        c.name
    );
    assert!(
        eo <= tol && es <= tol,
        "{}: O {eo:e}, state {es:e} over {tol:e}",
        c.name
    );
    if ck_dev.is_some() {
        // Row j of sequence b: the stored-domain state before token j·c (§3.4), at the state
        // tolerance of the io dtype (the rows' dtype adds at most its rounding).
        let cg: Vec<f64> = ckpt.chunks(size(ck_dt)).map(|b| get(ck_dt, b)).collect();
        let ec = rms_ratio(&cg, &r_ckpt);
        println!(
            "{:48} checkpoints every {ck_every}, {ck_rows} rows {}: rms {ec:.3e}",
            c.name,
            ck_dt.name()
        );
        assert!(
            cg.iter().all(|x| x.is_finite()),
            "{}: unwritten or non-finite checkpoint rows",
            c.name
        );
        assert!(ec <= tol, "{}: checkpoints {ec:e} over {tol:e}", c.name);
        // Each sequence's first row is its initial state (fp32 or bf16, or zero), exactly in fp32
        // rows.
        if ck_dt == DataType::Float {
            let mut row = 0;
            for (b, w) in cu.windows(2).enumerate() {
                if w[1] > w[0] {
                    let want = &r_ckpt[row * sl..(row + 1) * sl];
                    let got = &cg[row * sl..(row + 1) * sl];
                    assert!(
                        got == want,
                        "{}: row 0 of sequence {b} is not the initial state",
                        c.name
                    );
                }
                row += (w[1] - w[0]).div_ceil(ck_every);
            }
        }
    }
    if c.pool {
        let spare: Vec<usize> = (0..npool as usize)
            .filter(|&r| !rows.contains(&Some(r)))
            .collect();
        let h = init.as_ref().unwrap();
        for r in spare {
            let span = r * sl * size(sdt)..(r + 1) * sl * size(sdt);
            assert_eq!(
                state[span.clone()],
                h.bytes[span],
                "{}: spare pool row {r} touched",
                c.name
            );
        }
    }
    Outcome {
        o,
        state,
        ckpt,
        factors,
    }
}

/// Captures one `exec` on the caller's stream into a CUDA graph (the plan must neither allocate
/// nor synchronize while executing, and its programmatic launches must be capturable), replays
/// the graph once and waits for it. Returns the number of kernel nodes the capture recorded.
fn capture_and_replay(caller: &Caller, exec: impl FnOnce()) -> usize {
    let mut graph: sys::CUgraph = std::ptr::null_mut();
    // SAFETY: the caller's live, non-legacy stream; the capture ends below on the same thread.
    unsafe {
        ok(
            "begin capture",
            sys::cuStreamBeginCapture_v2(
                caller.stream,
                sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL,
            ),
        )
    };
    exec();
    // SAFETY: ends the capture begun above; writes one graph handle.
    unsafe {
        ok(
            "end capture",
            sys::cuStreamEndCapture(caller.stream, &mut graph),
        )
    };
    let mut count = 0usize;
    // SAFETY: a null node array asks for the count only.
    unsafe {
        ok(
            "graph nodes",
            sys::cuGraphGetNodes(graph, std::ptr::null_mut(), &mut count),
        )
    };
    let mut nodes = vec![std::ptr::null_mut(); count];
    // SAFETY: `nodes` holds `count` slots.
    unsafe {
        ok(
            "graph nodes",
            sys::cuGraphGetNodes(graph, nodes.as_mut_ptr(), &mut count),
        )
    };
    let kernels = nodes
        .iter()
        .filter(|&&node| {
            let mut ty = sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_EMPTY;
            // SAFETY: a node of `graph`; writes its type.
            unsafe { ok("node type", sys::cuGraphNodeGetType(node, &mut ty)) };
            ty == sys::CUgraphNodeType::CU_GRAPH_NODE_TYPE_KERNEL
        })
        .count();
    let mut exec_graph: sys::CUgraphExec = std::ptr::null_mut();
    // SAFETY: instantiates, launches, waits for and destroys the captured graph.
    unsafe {
        ok(
            "instantiate",
            sys::cuGraphInstantiateWithFlags(&mut exec_graph, graph, 0),
        );
        ok(
            "graph launch",
            sys::cuGraphLaunch(exec_graph, caller.stream),
        );
        ok("sync", sys::cuStreamSynchronize(caller.stream));
        ok("destroy exec", sys::cuGraphExecDestroy(exec_graph));
        ok("destroy graph", sys::cuGraphDestroy(graph));
    }
    kernels
}

/// Median host time of `exec` (one execute: `launches` kernel launches) against `launches` bare
/// `cuLaunchKernel` calls of an empty-work kernel, both on the caller's stream, the queue drained
/// between batches.
fn host_time_report(caller: &Caller, launches: usize, mut exec: impl FnMut()) {
    use std::time::Instant;
    let median = |mut v: Vec<f64>| {
        v.sort_by(f64::total_cmp);
        v[v.len() / 2]
    };
    let sync = || {
        // SAFETY: the caller's live stream.
        unsafe { ok("sync", sys::cuStreamSynchronize(caller.stream)) }
    };
    let info = dnnplan::cuda::probe::driver().expect("driver").devices[0].clone();
    let module = dnnplan::cuda::compile_or_load("axpy", &info, &[]).expect("axpy");
    let fill = module
        .function("dnnp_fill_f32")
        .expect("fill")
        .in_current_context()
        .expect("function");
    let d = caller.alloc(4, 0);
    let (mut n, mut val, mut ptr) = (0i64, 0f32, d);
    let mut params = [
        (&raw mut n).cast::<std::ffi::c_void>(),
        (&raw mut val).cast(),
        (&raw mut ptr).cast(),
    ];
    let mut bare = || {
        for _ in 0..launches {
            // SAFETY: dnnp_fill_f32(i64 n = 0, float, float*): writes nothing.
            unsafe {
                ok(
                    "bare launch",
                    sys::cuLaunchKernel(
                        fill,
                        1,
                        1,
                        1,
                        64,
                        1,
                        1,
                        0,
                        caller.stream,
                        params.as_mut_ptr(),
                        std::ptr::null_mut(),
                    ),
                )
            };
        }
    };
    let time = |f: &mut dyn FnMut()| {
        let mut v = Vec::new();
        for _ in 0..10 {
            sync();
            for _ in 0..50 {
                let t0 = Instant::now();
                f();
                v.push(t0.elapsed().as_secs_f64() * 1e6);
            }
        }
        sync();
        median(v)
    };
    for _ in 0..20 {
        exec();
        bare();
    }
    let (e1, b1) = (time(&mut exec), time(&mut bare));
    let (e2, b2) = (time(&mut exec), time(&mut bare));
    println!(
        "host time per execute: {e1:.2} / {e2:.2} us; {launches} bare launches: {b1:.2} / {b2:.2} \
         us; overhead {:.2} us",
        e1.min(e2) - b1.min(b2)
    );
}

const EDGE: &[usize] = &[1, 15, 16, 17, 31, 63, 64, 65, 0, 121, 251, 257];

/// FNV-1a of a buffer's bytes: the tests print it under `DNNPLAN_GDN_TEST_HASHES` so that two
/// runs (kernel variants, schedules) can be compared for bitwise-equal outputs.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325_u64, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x100_0000_01b3)
    })
}

/// Keys around a shared direction, β up to 2 (beta sigmoid, negative eigenvalues), l2norm and
/// slowly decaying gates: the per-chunk triangular inverse far from the identity (GDN-2-like β).
/// fp16, K = V = 64, one head, sequences 0 + 1500 + 700 (an empty one first), bf16 states: the
/// piece chain by the default rule (16 pieces) with empty pieces.
fn one_head_k64_case(name: &'static str) -> Case {
    let mut c = base(name, &[0, 1500, 700], 64);
    c.io = DataType::Half;
    c.shape = GdnShape {
        h: 1,
        hk: 1,
        hv: 1,
        k: 64,
        v: 64,
    };
    c.state = Some(DataType::Bfloat16);
    c
}

fn aligned_case(name: &'static str, lens: &[usize]) -> Case {
    let mut c = base(name, lens, 128);
    c.opts = GdnOptions {
        use_beta_sigmoid: true,
        allow_neg_eigval: true,
        use_qk_l2norm: true,
        ..Default::default()
    };
    c.long_span = true;
    c.aligned_keys = true;
    c
}

/// The five configurations both parity matrices start with, named by `names` in this order:
/// edge lengths at K = V = 128 and 64 (fp32 states); fp16 GVA 1/2 with l2norm, safe gate, beta
/// sigmoid, `a_log` / `dt_bias`, fp16 gates and bf16 states; K = V = 64 GQA 4/2 with linear gates,
/// negative eigenvalues, scale 1 and int64 `cu_seqlens`; no initial state, scale 0.5, bf16 beta.
fn parity_cases(names: [&'static str; 5]) -> Vec<Case> {
    let mut cases = vec![base(names[0], EDGE, 128), base(names[1], EDGE, 64)];
    let mut c = base(names[2], &[200, 0, 77], 128);
    c.io = DataType::Half;
    c.shape = GdnShape {
        h: 1,
        hk: 1,
        hv: 2,
        k: 128,
        v: 128,
    };
    c.opts = GdnOptions {
        use_qk_l2norm: true,
        safe_gate: true,
        use_beta_sigmoid: true,
        ..Default::default()
    };
    c.params = true;
    c.state = Some(DataType::Bfloat16);
    c.g_dt = DataType::Half;
    c.beta_dt = DataType::Half;
    cases.push(c);
    let mut c = base(names[3], &[68, 130], 64);
    c.shape = GdnShape {
        h: 4,
        hk: 2,
        hv: 2,
        k: 64,
        v: 64,
    };
    c.opts = GdnOptions {
        gate_domain: GateDomain::Linear,
        use_beta_sigmoid: true,
        allow_neg_eigval: true,
        use_qk_l2norm: true,
        scale: Some(1.0),
        ..Default::default()
    };
    c.cu64 = true;
    cases.push(c);
    let mut c = base(names[4], &[96, 32, 160, 1], 128);
    c.state = None;
    c.opts.scale = Some(0.5);
    c.beta_dt = DataType::Bfloat16;
    cases.push(c);
    cases
}

#[test]
fn forward_parity_matrix() {
    let caller = Caller::new();
    let mut cases = parity_cases([
        "bf16 K=V=128 edge lengths, fp32 state",
        "bf16 K=V=64 edge lengths, fp32 state",
        "fp16 K=V=128 GVA 1/2, l2norm, safe gate, bf16 state",
        "bf16 K=V=64 GQA 4/2, linear gate, neg eig, scale 1, int64 cu",
        "bf16 K=V=128 no initial state, scale 0.5, bf16 beta",
    ]);
    let mut c = base("bf16 K=V=128 H=16, 4 x 512 (host timing)", &[512; 4], 128);
    c.shape = GdnShape {
        h: 16,
        hk: 16,
        hv: 16,
        k: 128,
        v: 128,
    };
    c.host_timing = true;
    cases.push(c);
    cases.push(aligned_case(
        "bf16 K=V=128 aligned keys, neg eig, long span",
        &[300, 77],
    ));
    // The piece chain by the default rule (session 12): long sequences on few heads are cut
    // into 16 pieces (summaries, the fp32 chain, seeded output passes); slowly decaying gates
    // carry the chained seeds into O and the final state.
    cases.push(piece_chain_case(
        "bf16 K=V=128 H=2, long span, 1500 + 900 (piece chain)",
    ));
    let mut c = one_head_k64_case("fp16 K=V=64 H=1, 0 + 1500 + 700 (piece chain), bf16 state");
    c.long_span = true;
    cases.push(c);
    for (i, c) in cases.iter().enumerate() {
        run(c, 100 + i as u64, &caller);
    }
}

/// The one-pass forward (sessions 48-49, `DNNPLAN_GDN_FWD_FUSED`) and the two-pass forward on the
/// same K = V = 128 cases, each form forced in turn and the two passes forced by `0`: every run
/// within the fp64 reference's tolerance ([`run`]), every form bitwise the first form of its chain
/// kind and state (`Fused16Chain`, `Fused16State`: the forms of one kind differ in their launch
/// shape and in which warps build a chunk, not in its arithmetic; the kinds in the order the tensor
/// cores sum, the states in how the decay reaches X). The cases: edge
/// lengths with fp32 states; fp16 GVA with l2norm, safe gate, `a_log` / `dt_bias`, fp16 gates and
/// bf16 states; no initial state with bf16 β; a pool with indices outside it; the long sequences
/// of the piece chain (which the rule leaves to the two passes; forced here).
#[test]
fn one_pass_forward_forms_and_the_two_passes_agree() {
    use dnnplan::engines::gdn::fused16::FUSED16_FORMS;
    let caller = Caller::new();
    let mut cases: Vec<Case> = parity_cases([
        "bf16 K=V=128 edge lengths, fp32 state",
        "bf16 K=V=64 edge lengths (unused)",
        "fp16 K=V=128 GVA 1/2, l2norm, safe gate, bf16 state",
        "bf16 K=V=64 GQA 4/2 (unused)",
        "bf16 K=V=128 no initial state, scale 0.5, bf16 beta",
    ])
    .into_iter()
    .filter(|c| c.shape.k == 128)
    .collect();
    let mut c = base("pool, indices outside it", &[64, 0, 100, 3, 130, 70], 128);
    c.pool = true;
    c.pool_outside = vec![1, 4];
    cases.push(c);
    cases.push(piece_chain_case("bf16 K=V=128 H=2, long span, 1500 + 900"));
    for (i, c) in cases.iter().enumerate() {
        let seed = 700 + i as u64;
        let mut outs = Vec::new();
        let forms = std::iter::once("0").chain(FUSED16_FORMS.iter().map(|r| r.switch));
        for form in forms {
            set_env("DNNPLAN_GDN_FWD_FUSED", Some(form));
            eprintln!("DNNPLAN_GDN_FWD_FUSED={form}");
            outs.push(run(c, seed, &caller));
        }
        set_env("DNNPLAN_GDN_FWD_FUSED", None);
        let runs: Vec<_> = FUSED16_FORMS.iter().zip(&outs[1..]).collect();
        for (form, out) in &runs {
            let (first, first_out) = runs
                .iter()
                .find(|(f, _)| f.chain == form.chain && f.state == form.state)
                .expect("a form is the first of its own kind at the latest");
            assert!(
                first_out.o == out.o && first_out.state == out.state,
                "{}: the one-pass forms {} / {} ({:?} chain, {:?} state) differ",
                c.name,
                first.switch,
                form.switch,
                form.chain,
                form.state
            );
        }
    }
}

/// The most sequences the one pass takes (`FUSED16_MAX_SEQS`: each block reads the N + 1 offsets
/// one per thread, and b2 has 256 threads): 255 short ragged sequences (empty ones, partial
/// chunks, odd and even chunk counts) with every one-pass form forced and by rule, each within the
/// fp64 reference's tolerance ([`run`]: every O row and final state written).
#[test]
fn one_pass_forward_serves_its_most_sequences() {
    use dnnplan::engines::gdn::fused16::{FUSED16_FORMS, FUSED16_MAX_SEQS};
    let caller = Caller::new();
    let n = usize::try_from(FUSED16_MAX_SEQS).expect("a positive bound");
    assert_eq!(n, 255);
    let lens: Vec<usize> = (0..n).map(|i| (i * 37) % 53).collect();
    let c = base("255 sequences, 0-52 tokens", &lens, 128);
    let forms = std::iter::once(None).chain(FUSED16_FORMS.iter().map(|r| Some(r.switch)));
    for (i, form) in forms.enumerate() {
        set_env("DNNPLAN_GDN_FWD_FUSED", form);
        eprintln!("DNNPLAN_GDN_FWD_FUSED={form:?}");
        run(&c, 900 + i as u64, &caller);
    }
    set_env("DNNPLAN_GDN_FWD_FUSED", None);
}

#[test]
fn state_pool_overwritten_in_place() {
    let caller = Caller::new();
    let mut c = base("bf16 K=V=128 pool + overwrite", &[64, 0, 100, 3], 128);
    c.pool = true;
    run(&c, 7, &caller);
}

/// `state_indices` outside the pool (session 44): each such sequence runs from a zero state
/// (its O within the fp64 reference's tolerance for that) and stores no final state, every row
/// it does not name stays untouched, and nothing is written outside the caller's buffers (the
/// guard bands; the device steps also run this test under memcheck). −1, the pool's rows,
/// `i32::MAX` and `i32::MIN`; K = V = 128 and 64, fp32 and bf16 states, uncut and on the piece
/// chain (which seeds its chain from the initial state).
#[test]
fn state_indices_outside_the_pool_start_from_zero_and_store_nothing() {
    let caller = Caller::new();
    let mut cases = Vec::new();
    for (k, state) in [
        (128, DataType::Float),
        (64, DataType::Float),
        (128, DataType::Bfloat16),
    ] {
        let name = format!("pool, indices outside it, K=V={k} {} state", state.name());
        let mut c = base(
            Box::leak(name.into_boxed_str()),
            &[64, 0, 100, 3, 130, 70],
            k,
        );
        c.pool = true;
        c.state = Some(state);
        c.pool_outside = vec![0, 1, 3, 4];
        cases.push(c);
    }
    let mut c = piece_chain_case("pool, indices outside it, 1500 + 900 (piece chain)");
    c.pool = true;
    c.pool_outside = vec![1];
    cases.push(c);
    for (i, c) in cases.iter().enumerate() {
        run(c, 400 + i as u64, &caller);
    }
}

#[test]
fn batch_invariant_sequence_alone_equals_in_batch() {
    let caller = Caller::new();
    let alone = run(&base("one sequence of 300", &[300], 128), 11, &caller);
    let batch = run(
        &base("the same sequence + 77 + 0 + 5", &[300, 77, 0, 5], 128),
        11,
        &caller,
    );
    let o_len = alone.o.len();
    assert_eq!(
        batch.o[..o_len],
        alone.o[..],
        "O of the shared sequence differs between batches"
    );
    let s_len = alone.state.len();
    assert_eq!(
        batch.state[..s_len],
        alone.state[..],
        "final state of the shared sequence differs"
    );
}

/// Malformed `cu_seqlens` (session 43): the engine runs them as their clamped running maximum
/// ([`reference::sanitized_cu_seqlens`]; [`Case::cu_device`]), forward and backward: every output
/// within the fp64 reference's tolerance for those offsets, two runs and a CUDA-graph replay
/// bitwise equal, and nothing written outside the caller's buffers or the workspace (the guard
/// bands of [`run`] and [`run_bwd_with`]; the device steps also run this test under memcheck).
/// int32 and int64 offsets, K = V = 128 and 64, uncut and on the piece chain.
#[test]
fn malformed_cu_seqlens_run_as_their_clamped_running_maximum() {
    let caller = Caller::new();
    // T = 294; each raw array sanitizes to [0, 100, 100, 230, 294].
    let raws: [(&str, bool, Vec<i64>); 3] = [
        (
            "decreasing, past T, int32",
            false,
            vec![0, 100, 90, 230, 400],
        ),
        (
            "negative first, INT_MAX last, int32",
            false,
            vec![-7, 100, 100, 230, i64::from(i32::MAX)],
        ),
        (
            "-2^40 first, decreasing, 2^40 last, int64",
            true,
            vec![-(1 << 40), 100, 50, 230, 1 << 40],
        ),
    ];
    let mut cases = Vec::new();
    for (what, cu64, raw) in raws {
        for k in [128, 64] {
            let name = format!("malformed cu_seqlens ({what}) K=V={k}");
            let mut c = base(Box::leak(name.into_boxed_str()), &[100, 0, 130, 64], k);
            c.cu64 = cu64;
            c.cu_device = Some(raw.clone());
            cases.push(c);
        }
    }
    // The piece chain (long sequences on few heads): the last offset past T.
    let mut c = piece_chain_case("malformed cu_seqlens (past T, int32) 1500 + 900 (piece chain)");
    c.cu_device = Some(vec![0, 1500, 7400]);
    cases.push(c);
    let mut failures = Vec::new();
    for (i, c) in cases.iter().enumerate() {
        run(c, 300 + i as u64, &caller);
        failures.extend(run_bwd(c, 300 + i as u64, &caller));
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// Runs the backward of `c` through the plan list (NaN-filled outputs and workspace, two runs
/// bitwise identical) and checks every gradient against the fp64 per-token reference backward
/// with the §9.2 tolerances. Returns the failures (every gradient is checked and printed first).
fn run_bwd(c: &Case, seed: u64, caller: &Caller) -> Vec<String> {
    run_bwd_with(c, seed, caller, None).0
}

/// State checkpoints a backward binds (spec §3.4): every `every` tokens, in `dtype` (`None`: the
/// io dtype).
#[derive(Clone, Copy)]
struct Ckpt<'a> {
    every: i64,
    dtype: Option<DataType>,
    /// Bind zeros in the used rows instead of the states (a reusing backward must then differ).
    zero: bool,
    /// Bind these rows (the specified rows, e.g. our forward's [`Outcome::ckpt`]) instead of the
    /// fp64 reference's series.
    rows: Option<&'a [u8]>,
}

/// One gradient output of a backward run: port, dtype, bytes.
type Grad = (&'static str, DataType, Vec<u8>);

/// [`run_bwd`] with `state_checkpoints` bound when `ckpt` is given: the fp64 reference's state
/// series rounded to the checkpoint dtype (or [`Ckpt::rows`]), in a NaN-filled buffer of
/// `max(T/c + N, 1)` rows.
/// Returns the failures and the gradients.
fn run_bwd_with(
    c: &Case,
    seed: u64,
    caller: &Caller,
    ckpt: Option<Ckpt<'_>>,
) -> (Vec<String>, Vec<Grad>) {
    assert!(!c.pool, "the backward takes no state pool");
    let name = match ckpt {
        None => c.name.to_owned(),
        Some(ck) => format!(
            "{} [ckpt c={} {}{}]",
            c.name,
            ck.every,
            ck.dtype.unwrap_or(c.io).name(),
            if ck.zero { " zeroed" } else { "" }
        ),
    };
    let drawn = draw(c, seed);
    let Gen {
        sh,
        t,
        n,
        ho,
        k,
        v,
        ref a_log,
        ref dt_bias,
        sl,
        ref init,
        ..
    } = drawn;
    let mut rng = Rng(seed ^ 0x5eed_d0d0);
    let d_o = host(c.io, &[t, ho, v], |_| rng.uni(-1.0, 1.0));
    let dfs = c
        .state
        .map(|sd| host(sd, &[n, ho, v, k], |_| rng.uni(-0.1, 0.1)));

    let inp = drawn.inputs(init.as_ref().map(|h| h.vals.as_slice()));
    let ckpt_host = ckpt.map(|ck| {
        let series = reference::forward_with_checkpoints(&sh, &c.opts, &inp, ck.every as usize).1;
        let dt = ck.dtype.unwrap_or(c.io);
        let rows = (t / ck.every + n).max(1);
        let mut h = host(dt, &[rows, ho, v, k], |i| match series.get(i) {
            Some(_) if ck.zero => 0.0,
            Some(x) => *x,
            None => f64::NAN,
        });
        let sz = size(dt);
        if let Some(rows) = ck.rows {
            assert_eq!(rows.len(), series.len() * sz, "{}: checkpoint rows", c.name);
            h.bytes[..rows.len()].copy_from_slice(rows);
        }
        h.bytes[series.len() * sz..].fill(0xFF);
        h
    });
    let factors_host = c.chunk_factors.as_ref().map(|bytes| Host {
        vals: Vec::new(),
        bytes: bytes.clone(),
        dims: vec![
            gdn_chunk_factor_rows(t, n),
            ho,
            gdn_chunk_factor_bytes(v, ckpt.map_or(0, |ck| ck.every)),
        ],
        dt: DataType::Uint8,
    });
    let mut graph = Graph::new(GraphContext::new(c.io, DataType::Float, DataType::Float));
    let mut b = NodeBuilder::by_name("gdn_bwd").unwrap().name("gdn_bwd0");
    let mut bound: Vec<(i64, &Host)> = Vec::new();
    let required = drawn.required().map(|(port, h)| (port, Some(h)));
    for (port, h) in required.into_iter().chain([
        ("dO", Some(&d_o)),
        ("initial_state", init.as_ref()),
        ("d_final_state", dfs.as_ref()),
        ("a_log", a_log.as_ref()),
        ("dt_bias", dt_bias.as_ref()),
        ("state_checkpoints", ckpt_host.as_ref()),
        ("chunk_factors", factors_host.as_ref()),
    ]) {
        if let Some(h) = h {
            let u = graph.add_tensor(Tensor::new(port, &h.dims, h.dt)).unwrap();
            b = b.input(port, u);
            bound.push((u, h));
        }
    }
    b = b
        .bool("use_qk_l2norm", c.opts.use_qk_l2norm)
        .bool("use_beta_sigmoid", c.opts.use_beta_sigmoid)
        .bool("allow_neg_eigval", c.opts.allow_neg_eigval)
        .bool("safe_gate", c.opts.safe_gate);
    if c.opts.gate_domain == GateDomain::Linear {
        b = b.attr("gate_domain", dnnplan::ir::AttrValue::Str("linear".into()));
    }
    if let Some(s) = c.opts.scale {
        b = b.attr("scale", dnnplan::ir::AttrValue::Float(s));
    }
    if let Some(ck) = ckpt {
        b = b.int("checkpoint_every_n_tokens", ck.every);
    }
    let node = graph.add_node(b).unwrap();
    let sd = c.state.unwrap_or(DataType::Float);
    // (port, bytes, dtype) of every gradient output the node has.
    let grads: Vec<(&str, i64, DataType)> = [
        ("dQ", t * sh.h as i64 * k, c.io),
        ("dK", t * sh.hk as i64 * k, c.io),
        ("dV", t * sh.hv as i64 * v, c.io),
        ("dG", t * ho, c.g_dt),
        ("dBeta", t * ho, c.beta_dt),
        ("d_initial_state", n * sl as i64, sd),
        ("d_a_log", ho, DataType::Float),
        ("d_dt_bias", ho, DataType::Float),
    ]
    .into_iter()
    .filter_map(|(p, elems, dt)| graph.nodes()[node].output(p).map(|uid| (p, uid, elems, dt)))
    .collect::<Vec<_>>()
    .into_iter()
    .map(|(p, uid, elems, dt)| {
        graph.set_output(uid, true).unwrap();
        (p, elems, dt)
    })
    .collect();
    let mut list =
        PlanList::plan(&mut graph, PlanOptions::detect(), &[HeurMode::A]).expect("planning");
    // Planning inferred the gradient dtypes (each its primal's).
    for (p, _, dt) in &grads {
        let uid = graph.nodes()[node].output(p).unwrap();
        let got = graph.tensor(uid).unwrap().data_type;
        assert_eq!(got, *dt, "{}: inferred dtype of {p}", name);
    }
    let at = list
        .entries()
        .iter()
        .position(|e| e.engine_id == GDN_SM90_ID)
        .unwrap_or_else(|| panic!("{}: gdn_sm90 not listed for the backward", name));
    list.build_plan_at_index(at).expect("build");
    let ws_bytes = list.compiled_at(at).expect("compiled").workspace_size() as usize;
    let mut bindings: Vec<(i64, CUdeviceptr)> = bound
        .iter()
        .map(|(u, h)| (*u, caller.upload(&h.bytes)))
        .collect();
    let mut outs = Vec::new();
    // Every gradient and the workspace between guard bands (checked after the last execute).
    let mut guarded: Vec<(&str, Guarded)> = Vec::new();
    for (p, elems, dt) in &grads {
        let uid = graph.nodes()[node].output(p).unwrap();
        let bytes = *elems as usize * size(*dt);
        let g = Guarded::new(caller, bytes, 0xFF);
        let d = g.at();
        guarded.push((p, g));
        bindings.push((uid, d));
        outs.push((*p, d, bytes, *dt));
    }
    let ws_guarded = Guarded::new(caller, ws_bytes, 0xFF);
    let ws = ws_guarded.at();
    guarded.push(("workspace", ws_guarded));
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
    execute(&list, PlanChoice::AtIndex(at), &pack, &ctx).expect("execute");
    let first: Vec<Vec<u8>> = outs
        .iter()
        .map(|(_, d, bytes, _)| caller.download(*d, *bytes))
        .collect();
    execute(&list, PlanChoice::AtIndex(at), &pack, &ctx).expect("execute again");
    for ((p, d, bytes, _), f) in outs.iter().zip(&first) {
        assert_eq!(
            &caller.download(*d, *bytes),
            f,
            "{}: {p} differs between two runs",
            name
        );
    }
    // The backward replayed from a CUDA graph (its overlapped stages included) over poisoned
    // outputs equals the direct execute bit for bit.
    for (_, d, bytes, _) in &outs {
        caller.fill(*d, *bytes, 0xFF);
    }
    let launches = capture_and_replay(caller, || {
        execute(&list, PlanChoice::AtIndex(at), &pack, &ctx).expect("captured execute")
    });
    for ((p, d, bytes, _), f) in outs.iter().zip(&first) {
        assert_eq!(
            &caller.download(*d, *bytes),
            f,
            "{}: {p} differs when replayed from a CUDA graph",
            name
        );
    }
    println!(
        "{}: captured into a CUDA graph ({launches} kernels), replay bitwise equal",
        name
    );
    if c.host_timing {
        host_time_report(caller, launches, || {
            execute(&list, PlanChoice::AtIndex(at), &pack, &ctx).expect("timed execute")
        });
    }
    for (what, g) in &guarded {
        g.check(caller, &format!("{name}: {what}"));
    }

    let r = reference::backward(
        &sh,
        &c.opts,
        &inp,
        &d_o.vals,
        dfs.as_ref().map(|h| h.vals.as_slice()),
    );
    let half = c.io == DataType::Half;
    let (bwd_tol, state_tol) = (if half { 3e-2 } else { 4e-2 }, 6e-2);
    let gate_tol = if c.g_dt == DataType::Float {
        bwd_tol
    } else {
        8e-2
    };
    let mut line = format!("{:48}", name);
    let mut failures = Vec::new();
    let hashes = std::env::var_os("DNNPLAN_GDN_TEST_HASHES").is_some();
    for ((p, _, _, dt), bytes) in outs.iter().zip(&first) {
        let got: Vec<f64> = bytes.chunks(size(*dt)).map(|b| get(*dt, b)).collect();
        let (want, tol): (&[f64], f64) = match *p {
            "dQ" => (&r.dq, bwd_tol),
            "dK" => (&r.dk, bwd_tol),
            "dV" => (&r.dv, bwd_tol),
            "dG" => (&r.dg, gate_tol),
            "dBeta" => (&r.dbeta, bwd_tol),
            "d_initial_state" => (r.d_initial_state.as_deref().unwrap(), state_tol),
            "d_a_log" => (r.d_a_log.as_deref().unwrap(), 8e-2),
            _ => (r.d_dt_bias.as_deref().unwrap(), 8e-2),
        };
        let bad = got.iter().filter(|x| !x.is_finite()).count();
        if bad > 0 {
            failures.push(format!(
                "{}: {p} has {bad} unwritten or non-finite entries",
                name
            ));
        }
        let e = rms_ratio(&got, want);
        line += &format!(" {p} {e:.2e}");
        if hashes {
            // FNV-1a of the output bytes: equal lines across DNNPLAN_GDN_BWD_TOKENS variants
            // mean bitwise-equal gradients (bench/device_lib.sh's dev_same compares them).
            line += &format!(" #{:016x}", fnv1a(bytes));
        }
        if e.is_nan() || e > tol {
            failures.push(format!("{}: {p} rms ratio {e:e} over {tol:e}", name));
        }
    }
    println!("{line}");
    let grads = outs
        .iter()
        .zip(first)
        .map(|((p, _, _, dt), bytes)| (*p, *dt, bytes))
        .collect();
    (failures, grads)
}

#[test]
fn backward_parity_matrix() {
    let caller = Caller::new();
    let mut cases = parity_cases([
        "bwd bf16 K=V=128 edge lengths, fp32 state",
        "bwd bf16 K=V=64 edge lengths, fp32 state",
        "bwd fp16 K=V=128 GVA 1/2, l2norm, safe gate, bf16 state",
        "bwd bf16 K=V=64 GQA 4/2, linear gate, neg eig, l2norm, T=68+130",
        "bwd bf16 K=V=128 no initial state, scale 0.5, bf16 beta",
    ]);
    cases[0].host_timing = true;
    let mut c = base("bwd bf16 K=V=128 GVA H=2/HV=4, 1 x 300", &[300], 128);
    c.shape = GdnShape {
        h: 2,
        hk: 2,
        hv: 4,
        k: 128,
        v: 128,
    };
    cases.push(c);
    // Long sequences: the reverse scan carries dX over 32 chunks with rounded operands (the
    // default rule runs them as the piece chain, 16 pieces: 8 blocks on 132 SMs).
    let mut c = base("bwd bf16 K=V=128 H=2, 2048 + 1000", &[2048, 1000], 128);
    c.shape = GdnShape {
        h: 2,
        hk: 2,
        hv: 2,
        k: 128,
        v: 128,
    };
    cases.push(c);
    // Long sequences on one head: the default rule cuts them into 16 pieces (3 blocks), with an
    // empty sequence, empty trailing pieces and a d_final_state in bf16 (K = V = 64, fp16 io).
    cases.push(one_head_k64_case(
        "bwd fp16 K=V=64 H=1, 0 + 1500 + 700 (piece chain), bf16 state",
    ));
    // The same schedule with slowly decaying gates, so that the pieces' transitions (M_j, Mᵀ_j)
    // and the chained seeds reach the gradients (16 pieces by the default rule).
    cases.push(piece_chain_case(
        "bwd bf16 K=V=128 H=2, long span (alpha >= 0.995), 1500 + 900",
    ));
    cases.push(aligned_case(
        "bwd bf16 K=V=128 aligned keys, neg eig, long span",
        &[300, 77],
    ));
    let failures: Vec<String> = cases
        .iter()
        .enumerate()
        .flat_map(|(i, c)| run_bwd(c, 300 + i as u64, &caller))
        .collect();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Engine timings at the issue's benchmark shapes (bf16, K = V = 128, fp32 gates, fp32 states):
/// printed only, never asserted; runs when `DNNPLAN_GDN_TIMING` is set (bench/gdn_device_run.sh).
#[test]
fn timing_at_benchmark_shapes() {
    if !opted_in("DNNPLAN_GDN_TIMING") {
        return;
    }
    let caller = Caller::new();
    // DNNPLAN_GDN_TIMING_SHAPES: comma list of shape indices to run (default all).
    let variants = env_list("DNNPLAN_GDN_TIMING_VARIANTS", "tc11,tc12");
    for (si, (name, lens, hh)) in BENCH_SHAPES.into_iter().enumerate() {
        if !timing_shape_selected(si) {
            continue;
        }
        let inp = BenchInputs::new(&caller, lens, hh);
        let (t, n) = (inp.t, inp.n);
        // DNNPLAN_GDN_TIMING_FWD_SLIMPREP (session 28): instead, the forward under each value of
        // the comma list for DNNPLAN_GDN_FWD_SLIMPREP in order (e.g. "mma,wg,wg,mma"; a value
        // other than wg / wg5 / wgc / wgl runs the default): whole, and the prep as the difference of the
        // executes cut after launches 2 and 1 (offsets, prep).
        let slimpreps = env_list("DNNPLAN_GDN_TIMING_FWD_SLIMPREP", "");
        if slimpreps.iter().any(|x| !x.is_empty()) {
            for v in slimpreps.iter().filter(|x| !x.is_empty()) {
                set_env("DNNPLAN_GDN_FWD_SLIMPREP", Some(v));
                let whole = inp.time(&caller, "gdn");
                let cum = inp.time_cuts(&caller, "gdn", 1..=2);
                println!(
                    "gdn_sm90 fwd slimprep {name:18} {v:4} whole {whole:.4} ms | offsets {:.4} | prep {:.4}",
                    cum[0],
                    cum[1] - cum[0]
                );
            }
            set_env("DNNPLAN_GDN_FWD_SLIMPREP", None);
            inp.free();
            continue;
        }
        let fwd = inp.time(&caller, "gdn");
        // Token-stage variants (DNNPLAN_GDN_BWD_TOKENS; default "tc11,tc12", or the comma list
        // in DNNPLAN_GDN_TIMING_VARIANTS: tc11 = session 8's stage (the fp32 dR by cp.async,
        // conflict-free result staging, phase A's G in rows of 72); tc12 = tc11 with the row
        // phase's raw q / k rows and G tile conflict-free, the default since session 10),
        // each as a whole and cut after every launch (DNNPLAN_GDN_BWD_STEPS, read at build): the
        // stage times are the differences (without head groups the tc plans have no fold: "fold 0").
        // "tokens/dscan" sets DNNPLAN_GDN_BWD_DSCAN apart (e.g. "tc12/v1": the 4-warp reverse scan);
        // a suffix "+replay" sets DNNPLAN_GDN_BWD_FSCAN (session 25: "tc13+gx"; none: unset), a
        // last suffix "@form" DNNPLAN_GDN_BWD_PREP (session 27: "tc13@scaled"; none: unset); before
        // all of them a final "%n" DNNPLAN_GDN_BWD_DSCAN_SPLIT (session 29: "tc16%2" the split
        // reverse scan, "tc16%1" the one-block one; none: unset); before that a final "^v"
        // DNNPLAN_GDN_BWD_SLIMPREP (session 29: "tc16^v16" the slim prep on the forward slim
        // prep's tile, "tc16^v15" prep15sl, session 32: "tc16^v16c" prep16sl's trimmed tile
        // prep16slc, session 35: "tw3^v16l" prep16sll; none: unset); before all of them a final "=v" DNNPLAN_GDN_SEQ_ORDER (session
        // 34: "tw3=1" the longest-first dispatch, "tw3=0" without; none: unset).
        let mut bwd = 0.0;
        for full in variants.iter().map(String::as_str) {
            let (unseq, seq) = full.split_once('=').unwrap_or((full, ""));
            set_env("DNNPLAN_GDN_SEQ_ORDER", (!seq.is_empty()).then_some(seq));
            let (unprep, slimprep) = unseq.split_once('^').unwrap_or((unseq, ""));
            set_env(
                "DNNPLAN_GDN_BWD_SLIMPREP",
                (!slimprep.is_empty()).then_some(slimprep),
            );
            let (unsplit, split) = unprep.split_once('%').unwrap_or((unprep, ""));
            set_env(
                "DNNPLAN_GDN_BWD_DSCAN_SPLIT",
                (!split.is_empty()).then_some(split),
            );
            let (rest, form) = unsplit.split_once('@').unwrap_or((unsplit, ""));
            set_env("DNNPLAN_GDN_BWD_PREP", (!form.is_empty()).then_some(form));
            let (variant, fscan) = rest.split_once('+').unwrap_or((rest, ""));
            set_env(
                "DNNPLAN_GDN_BWD_FSCAN",
                (!fscan.is_empty()).then_some(fscan),
            );
            let (tokens, dscan) = variant.split_once('/').unwrap_or((variant, variant));
            // An empty variant ("=1") leaves both unset: the plan by rule.
            set_env(
                "DNNPLAN_GDN_BWD_DSCAN",
                (!dscan.is_empty()).then_some(dscan),
            );
            set_env(
                "DNNPLAN_GDN_BWD_TOKENS",
                (!tokens.is_empty()).then_some(tokens),
            );
            let cum = [vec![0.0], inp.time_cuts(&caller, "gdn_bwd", 1..=6)].concat();
            let whole = inp.time(&caller, "gdn_bwd");
            let names = ["offsets", "prep", "fscan", "dscan", "tokens", "fold"];
            let stages = stage_parts(&names, &cum, 3);
            println!(
                "gdn_sm90 bwd stages {name:18} {full:4} whole {whole:.3} ms | {}",
                stages.join(" | ")
            );
            bwd = whole;
        }
        set_env("DNNPLAN_GDN_BWD_FSCAN", None);
        set_env("DNNPLAN_GDN_BWD_DSCAN", None);
        set_env("DNNPLAN_GDN_BWD_TOKENS", None);
        set_env("DNNPLAN_GDN_BWD_PREP", None);
        set_env("DNNPLAN_GDN_BWD_DSCAN_SPLIT", None);
        set_env("DNNPLAN_GDN_BWD_SLIMPREP", None);
        set_env("DNNPLAN_GDN_SEQ_ORDER", None);
        // The prep kernel (`DNNPLAN_GDN_FWD_PREP`, read at build; unset = the default).
        let prep = std::env::var("DNNPLAN_GDN_FWD_PREP").unwrap_or_else(|_| "default".to_owned());
        println!(
            "gdn_sm90 timing {name:18} N={n:<3} T={t:<6} H={hh:<3} prep={prep} fwd {fwd:.3} ms  bwd {bwd:.3} ms  fwd+bwd {:.3} ms",
            fwd + bwd
        );
        inp.free();
    }
}

/// The backward with and without the piece chain at the benchmark shapes (bf16, K = V = 128):
/// whole-execute times per piece count (`DNNPLAN_GDN_BWD_PIECES`, 1 = off) and, where marked,
/// per-kernel times as differences of executes cut after each launch (`DNNPLAN_GDN_BWD_STEPS`).
/// Printed only, never asserted; runs when `DNNPLAN_GDN_TIMING_PIECES` is set.
/// `DNNPLAN_GDN_TIMING_PIECE_RUNS` (session 14): instead, only the shape of index
/// `DNNPLAN_GDN_TIMING_PIECE_SHAPE` (default 1: (1, 32768, 16)), each entry of the comma list
/// `passes:pieces` (`DNNPLAN_GDN_BWD_PIECE_PASSES`, `DNNPLAN_GDN_BWD_PIECES`; an empty field = the
/// default) cut into kernels, in the list's order.
#[test]
fn timing_backward_pieces() {
    if !opted_in("DNNPLAN_GDN_TIMING_PIECES") {
        return;
    }
    let caller = Caller::new();
    // (index in BENCH_SHAPES, [(passes, pieces, cut into kernels)]); pieces 0 = the default rule.
    type Runs = Vec<(String, u64, bool)>;
    let shapes: Vec<(usize, Runs)> = if std::env::var("DNNPLAN_GDN_TIMING_PIECE_RUNS").is_ok() {
        let runs = env_list("DNNPLAN_GDN_TIMING_PIECE_RUNS", "")
            .iter()
            .map(|r| {
                let (passes, pieces) = r.split_once(':').unwrap_or((r.as_str(), ""));
                (passes.to_owned(), pieces.parse().unwrap_or(0), true)
            })
            .collect();
        let shape = std::env::var("DNNPLAN_GDN_TIMING_PIECE_SHAPE")
            .ok()
            .and_then(|x| x.parse().ok())
            .unwrap_or(1);
        vec![(shape, runs)]
    } else {
        let d = |pieces, cut| (String::new(), pieces, cut);
        vec![
            (
                1,
                vec![
                    d(1, true),
                    d(0, true),
                    d(2, false),
                    d(3, false),
                    d(8, false),
                ],
            ),
            (0, vec![d(0, false), d(4, false)]),
            (2, vec![d(0, false), d(2, false)]),
            (3, vec![d(0, false), d(4, false)]),
        ]
    };
    for (i, runs) in shapes {
        let (name, lens, hh) = BENCH_SHAPES[i];
        let inp = BenchInputs::new(&caller, lens, hh);
        for (passes, pieces, cut) in runs {
            let forced = (pieces != 0).then(|| pieces.to_string());
            set_env("DNNPLAN_GDN_BWD_PIECES", forced.as_deref());
            set_env(
                "DNNPLAN_GDN_BWD_PIECE_PASSES",
                (!passes.is_empty()).then_some(passes.as_str()),
            );
            let label = match (pieces, passes.as_str()) {
                (0, "") => "default".to_owned(),
                (0, x) => format!("{x}:rule"),
                (p, "") => format!("P={p}"),
                (p, x) => format!("{x}:P={p}"),
            };
            let whole = inp.time(&caller, "gdn_bwd");
            let mut line = format!("gdn_sm90 bwd pieces {name:18} {label:8} whole {whole:.3} ms");
            if cut {
                let stages: &[&str] = if pieces == 1 {
                    &["offsets", "prep", "fscan", "dscan", "tokens"]
                } else {
                    &[
                        "offsets", "prep", "psum", "pchain", "fscanp", "dsum", "dchain", "dscanp",
                        "tokens",
                    ]
                };
                let cum = [
                    vec![0.0],
                    inp.time_cuts(&caller, "gdn_bwd", 1..=stages.len()),
                ]
                .concat();
                for part in stage_parts(stages, &cum, 3) {
                    line.push_str(&format!(" | {part}"));
                }
            }
            println!("{line}");
        }
        set_env("DNNPLAN_GDN_BWD_PIECES", None);
        set_env("DNNPLAN_GDN_BWD_PIECE_PASSES", None);
        inp.free();
    }
}

/// The piece chain's body (`DNNPLAN_GDN_CHAIN` = v1 / v2 / v3, read at build) at the benchmark
/// shapes of `DNNPLAN_GDN_TIMING_SHAPES` (default (1, 32768, 16) and (4, 8192, 16)), both
/// directions, alternating v1, v2, v3 for `DNNPLAN_GDN_TIMING_ROUNDS` rounds (default 2), at the
/// rule's piece count and at the forced counts of `DNNPLAN_GDN_TIMING_CHAIN` (a comma list;
/// `1` = just the rule): whole forward and backward, and the chain kernels alone as differences
/// of executes cut before and after them (forward: offsets, prep, sum, chain, scan; backward:
/// offsets, prep, psum, pchain, fscanp, dsum, dchain, ...). Printed only, never asserted.
#[test]
fn timing_piece_chain() {
    if !opted_in("DNNPLAN_GDN_TIMING_CHAIN") {
        return;
    }
    let caller = Caller::new();
    let forced = env_list("DNNPLAN_GDN_TIMING_CHAIN", "1");
    let rounds: usize = std::env::var("DNNPLAN_GDN_TIMING_ROUNDS")
        .ok()
        .and_then(|x| x.parse().ok())
        .unwrap_or(2);
    let shapes: Vec<usize> = if std::env::var("DNNPLAN_GDN_TIMING_SHAPES").is_ok() {
        (0..BENCH_SHAPES.len())
            .filter(|&i| timing_shape_selected(i))
            .collect()
    } else {
        vec![1, 0]
    };
    for si in shapes {
        let (name, lens, hh) = BENCH_SHAPES[si];
        let inp = BenchInputs::new(&caller, lens, hh);
        for pieces in forced.iter().map(String::as_str) {
            let p = (pieces != "1" && !pieces.is_empty()).then_some(pieces);
            set_env("DNNPLAN_GDN_FWD_PIECES", p);
            set_env("DNNPLAN_GDN_BWD_PIECES", p);
            let label = p.map_or("rule".to_owned(), |x| format!("P={x}"));
            for round in 0..rounds {
                for chain in ["v1", "v2", "v3"] {
                    set_env("DNNPLAN_GDN_CHAIN", Some(chain));
                    let fwd = inp.time(&caller, "gdn");
                    let f = |n| inp.time_cut(&caller, "gdn", Some(n));
                    let fchain = f(4) - f(3);
                    let bwd = inp.time(&caller, "gdn_bwd");
                    let b = |n| inp.time_cut(&caller, "gdn_bwd", Some(n));
                    let pchain = b(4) - b(3);
                    let dchain = b(7) - b(6);
                    println!(
                        "gdn_sm90 chain {name:18} {label:6} round {round} {chain} fwd {fwd:.3} ms (chain {fchain:.3}) | bwd {bwd:.3} ms (pchain {pchain:.3} dchain {dchain:.3})"
                    );
                }
            }
        }
        set_env("DNNPLAN_GDN_CHAIN", None);
        set_env("DNNPLAN_GDN_FWD_PIECES", None);
        set_env("DNNPLAN_GDN_BWD_PIECES", None);
        inp.free();
    }
}

/// The forward-direction scans per variant at the benchmark shapes (bf16, K = V = 128): the
/// forward output scan (`DNNPLAN_GDN_FWD_SCAN` = w4 / w8; with the default piece rule, so at
/// (1, 32768, 16) "scan" is summary + chain + seeded scan) and the backward's forward-state
/// replay (`DNNPLAN_GDN_BWD_FSCAN` = v1 / r4; with pieces psum + pchain + fscanp), each as
/// the difference of executes cut after the prep and after the scan (`DNNPLAN_GDN_FWD_STEPS`,
/// `DNNPLAN_GDN_BWD_STEPS`), with the bytes the scan must move (factor tiles read, O or the io
/// `S_c` written) over that time. Printed only, never asserted; runs when
/// `DNNPLAN_GDN_TIMING_SCANS` is set (`=bwd`: the replays only). `DNNPLAN_GDN_TIMING_REPLAYS`
/// (default `v1,r4`) lists the replays, `r4/1` = `r4` with `DNNPLAN_GDN_BWD_FSCAN_PER_SM=1`;
/// `DNNPLAN_GDN_TIMING_SHAPES` the shape indices.
#[test]
fn timing_forward_scans() {
    if !opted_in("DNNPLAN_GDN_TIMING_SCANS") {
        return;
    }
    let caller = Caller::new();
    let fwd_too = std::env::var("DNNPLAN_GDN_TIMING_SCANS").is_ok_and(|x| x != "bwd");
    let replays = env_list("DNNPLAN_GDN_TIMING_REPLAYS", "v1,r4");
    for (si, (name, lens, hh)) in BENCH_SHAPES.into_iter().enumerate() {
        if !timing_shape_selected(si) {
            continue;
        }
        let inp = BenchInputs::new(&caller, lens, hh);
        let chunks: i64 = lens.iter().map(|l| (l + 63) / 64).sum();
        let tile = (chunks * hh * 64 * 128 * 2) as f64; // one of W, Q⁺, Kᴿ, Ũᵀ (bf16)
        let fwd_bytes = 4.0 * tile + (chunks * hh * 64 * 64 * 2 + inp.t * hh * 128 * 2) as f64;
        let replay_bytes = 3.0 * tile + (chunks * hh * 128 * 128 * 2) as f64;
        let time = |op: &str, steps: Option<usize>| inp.time_cut(&caller, op, steps);
        let fwd_prefix = if fwd_too { time("gdn", Some(2)) } else { 0.0 };
        let scans: &[&str] = if fwd_too { &["w4", "w8"] } else { &[] };
        for &scan in scans {
            set_env("DNNPLAN_GDN_FWD_SCAN", Some(scan));
            let whole = time("gdn", None);
            let ms = whole - fwd_prefix;
            println!(
                "gdn_sm90 fscan {name:18} fwd scan {scan} {ms:.3} ms {:6.0} GB/s | fwd whole {whole:.3} ms",
                fwd_bytes / (ms * 1e6)
            );
        }
        set_env("DNNPLAN_GDN_FWD_SCAN", None);
        let bwd_prefix = time("gdn_bwd", Some(2));
        for replay in replays.iter().map(String::as_str) {
            let (variant, per_sm) = replay.split_once('/').unwrap_or((replay, ""));
            set_env("DNNPLAN_GDN_BWD_FSCAN", Some(variant));
            set_env(
                "DNNPLAN_GDN_BWD_FSCAN_PER_SM",
                (!per_sm.is_empty()).then_some(per_sm),
            );
            // Uncut: offsets, prep, fscan; pieces: offsets, prep, psum, pchain, fscanp.
            let cum = [vec![bwd_prefix], inp.time_cuts(&caller, "gdn_bwd", 3..=5)].concat();
            let whole = time("gdn_bwd", None);
            let stages: Vec<String> = stage_times(&cum)
                .iter()
                .map(|t| format!("{t:.3}"))
                .collect();
            // The replay is step 3 uncut (steps 4, 5 are the reverse scan, tokens) or steps
            // 3..5 with pieces: both printed; the reader picks by the piece rule.
            let uncut = cum[1] - cum[0];
            let cut = cum[3] - cum[0];
            println!(
                "gdn_sm90 fscan {name:18} bwd replay {replay} step3 {uncut:.3} ms {:6.0} GB/s | steps3-5 {cut:.3} ms {:6.0} GB/s | steps {} | bwd whole {whole:.3} ms",
                replay_bytes / (uncut * 1e6),
                replay_bytes / (cut * 1e6),
                stages.join(" ")
            );
        }
        set_env("DNNPLAN_GDN_BWD_FSCAN", None);
        set_env("DNNPLAN_GDN_BWD_FSCAN_PER_SM", None);
        inp.free();
    }
}

/// The forward's chunk factors (`DNNPLAN_GDN_FWD_FACTORS` = full / slim, read at build) at the
/// benchmark shapes of `DNNPLAN_GDN_TIMING_SHAPES`, for `DNNPLAN_GDN_TIMING_FACTORS` rounds
/// (default 3) alternating the order (full first in even rounds, slim first in odd ones): the
/// whole forward and its prep (execute cut after the prep minus cut after the chunk table) and
/// output scan (whole minus cut after the prep; uncut schedules). Each shape at the rule's
/// schedule; (1, 32768, 16) also uncut (`DNNPLAN_GDN_FWD_PIECES=1`), where slim applies. Printed
/// only (per round and the mean per variant), never asserted.
#[test]
fn timing_forward_factors() {
    if !opted_in("DNNPLAN_GDN_TIMING_FACTORS") {
        return;
    }
    let rounds: usize = std::env::var("DNNPLAN_GDN_TIMING_FACTORS")
        .ok()
        .and_then(|x| x.parse().ok())
        .unwrap_or(3)
        .max(1);
    let caller = Caller::new();
    for (si, (name, lens, hh)) in BENCH_SHAPES.into_iter().enumerate() {
        if !timing_shape_selected(si) {
            continue;
        }
        let inp = BenchInputs::new(&caller, lens, hh);
        let forced: &[Option<&str>] = if si == 1 { &[None, Some("1")] } else { &[None] };
        for &pieces in forced {
            set_env("DNNPLAN_GDN_FWD_PIECES", pieces);
            let label = if pieces.is_some() { "P=1" } else { "rule" };
            // [variant][whole, prep, scan] sums over the rounds.
            let mut sums = [[0.0f64; 3]; 2];
            for r in 0..rounds {
                let order: [(usize, &str); 2] = if r % 2 == 0 {
                    [(0, "full"), (1, "slim")]
                } else {
                    [(1, "slim"), (0, "full")]
                };
                for (vi, variant) in order {
                    set_env("DNNPLAN_GDN_FWD_FACTORS", Some(variant));
                    let whole = inp.time(&caller, "gdn");
                    let c = inp.time_cuts(&caller, "gdn", 1..=2);
                    let (prep, scan) = (c[1] - c[0], whole - c[1]);
                    sums[vi][0] += whole;
                    sums[vi][1] += prep;
                    sums[vi][2] += scan;
                    println!(
                        "gdn_sm90 factors {name:18} {label} round {r} {variant} fwd {whole:.3} ms | prep {prep:.3} | after prep {scan:.3}"
                    );
                }
            }
            let n = rounds as f64;
            let [f, s] = sums.map(|v| v.map(|x| x / n));
            println!(
                "gdn_sm90 factors {name:18} {label} mean of {rounds}: full fwd {:.3} (prep {:.3}, after {:.3}) | slim fwd {:.3} (prep {:.3}, after {:.3}) | slim speedup {:.3}x",
                f[0],
                f[1],
                f[2],
                s[0],
                s[1],
                s[2],
                f[0] / s[0]
            );
        }
        set_env("DNNPLAN_GDN_FWD_FACTORS", None);
        set_env("DNNPLAN_GDN_FWD_PIECES", None);
        inp.free();
    }
}

/// One overlapped-forward plan row: (label, `DNNPLAN_GDN_FWD_OVERLAP`, `DNNPLAN_GDN_PDL`,
/// `DNNPLAN_GDN_FWD_OVERLAP_PER_SM`).
type OverlapRow<'a> = (&'a str, &'a str, Option<&'a str>, Option<&'a str>);

/// The overlapped forward's plans at one benchmark shape (session 15, ovf15,
/// src/engines/gdn/fwd_overlap.rs): one plan per row, with `pieces` as `DNNPLAN_GDN_FWD_PIECES`
/// and `steps` as `DNNPLAN_GDN_FWD_STEPS` (all read at plan build).
fn overlap_plans(
    caller: &Caller,
    inp: &BenchInputs,
    rows: &[OverlapRow<'_>],
    pieces: Option<&str>,
    steps: Option<&str>,
) -> Vec<GdnPlan> {
    set_env("DNNPLAN_GDN_FWD_PIECES", pieces);
    set_env("DNNPLAN_GDN_FWD_STEPS", steps);
    let plans = rows
        .iter()
        .map(|&(_, overlap, pdl, per_sm)| {
            set_env("DNNPLAN_GDN_FWD_OVERLAP", Some(overlap));
            set_env("DNNPLAN_GDN_PDL", pdl);
            set_env("DNNPLAN_GDN_FWD_OVERLAP_PER_SM", per_sm);
            let (graph, node, ins) = inp.graph("gdn");
            GdnPlan::build(caller, graph, node, &ins, BenchInputs::outputs("gdn"))
        })
        .collect();
    for var in [
        "DNNPLAN_GDN_FWD_OVERLAP",
        "DNNPLAN_GDN_FWD_OVERLAP_PER_SM",
        "DNNPLAN_GDN_PDL",
        "DNNPLAN_GDN_FWD_PIECES",
        "DNNPLAN_GDN_FWD_STEPS",
    ] {
        set_env(var, None);
    }
    plans
}

/// The benchmark shapes the overlap is checked and timed at: (shape index, pieces switch);
/// (1, 32768, 16) uncut (the overlap serves the uncut slim path only).
const OVERLAP_SHAPES: [(usize, Option<&str>); 4] =
    [(0, None), (1, Some("1")), (2, None), (3, None)];

/// The forward with its prep and output scan overlapped (`DNNPLAN_GDN_FWD_OVERLAP=1`, with the
/// launch chain on and off, with one prep block per SM, and the diagnostic `seq`: the same
/// kernels one after the other) writes bitwise the non-overlapped forward's O and final state at the
/// benchmark shapes (the ragged mix has an empty and a one-token sequence), on a first execute
/// and on a second one into re-poisoned outputs (the hand-over flags reset on every execute).
/// The fp64-reference checks of the overlapped kernels: `forward_parity_matrix` under
/// `DNNPLAN_GDN_FWD_OVERLAP=1` (its hashes equal the non-overlapped build's, bench/gdn_results.md).
#[test]
fn overlap_forward_bitwise_at_benchmark_shapes() {
    let caller = Caller::new();
    let handle = Handle::new(caller.stream.cast()).expect("handle");
    let rows = [
        ("off", "0", None, None),
        ("on", "1", None, None),
        ("on, PDL=0", "1", Some("0"), None),
        ("on, 1 prep block per SM", "1", None, Some("1")),
        ("seq", "seq", None, None),
    ];
    for (si, pieces) in OVERLAP_SHAPES {
        let (name, lens, hh) = BENCH_SHAPES[si];
        let inp = BenchInputs::new(&caller, lens, hh);
        let plans = overlap_plans(&caller, &inp, &rows, pieces, None);
        let mut first: Vec<Vec<u8>> = Vec::new();
        for (i, plan) in plans.iter().enumerate() {
            let (pack, ctx) = (plan.pack(), plan.context(&handle));
            for round in 0..2 {
                for &(d, n) in &plan.outputs {
                    caller.fill(d, n, 0xFF);
                }
                plan.execute(&pack, &ctx);
                let outs: Vec<Vec<u8>> = plan
                    .outputs
                    .iter()
                    .map(|&(d, n)| caller.download(d, n))
                    .collect();
                if i == 0 && round == 0 {
                    first = outs;
                    continue;
                }
                for (k, out) in outs.iter().enumerate() {
                    assert!(
                        *out == first[k],
                        "{name}: output {} of overlap {} (execute {round}) differs from overlap off",
                        BenchInputs::outputs("gdn")[k],
                        rows[i].0
                    );
                }
            }
        }
        println!(
            "gdn_sm90 overlap {name:16} O and final state of overlap off / on / on with PDL=0 / on at 1 per SM / seq bitwise equal"
        );
        for p in plans {
            p.free();
        }
        inp.free();
    }
}

/// The forward with and without the overlap at the benchmark shapes (runs when
/// `DNNPLAN_GDN_TIMING_OVERLAP` is set; its value: samples per plan, default 30): per entry of
/// `DNNPLAN_GDN_TIMING_OVERLAP_ROWS` (default `0,1`; an entry is `DNNPLAN_GDN_FWD_OVERLAP`'s
/// value, optionally `/n` for `DNNPLAN_GDN_FWD_OVERLAP_PER_SM=n`) the whole forward and the
/// forward cut after the prep (`DNNPLAN_GDN_FWD_STEPS=2`: chunk table and prep alone, the
/// persistent prep at its reduced grid), timed alternating (each sample one plan's
/// `OVERLAP_BATCH` back-to-back executes, the plans in rotating order); medians printed, never
/// asserted.
#[test]
fn timing_forward_overlap() {
    if !opted_in("DNNPLAN_GDN_TIMING_OVERLAP") {
        return;
    }
    const OVERLAP_BATCH: usize = 4;
    let samples: usize = std::env::var("DNNPLAN_GDN_TIMING_OVERLAP")
        .ok()
        .and_then(|x| x.parse().ok())
        .unwrap_or(30)
        .max(1);
    let caller = Caller::new();
    let handle = Handle::new(caller.stream.cast()).expect("handle");
    let entries = env_list("DNNPLAN_GDN_TIMING_OVERLAP_ROWS", "0,1");
    let rows: Vec<OverlapRow<'_>> = entries
        .iter()
        .map(|e| {
            let (mode, per_sm) = e
                .split_once('/')
                .map_or((e.as_str(), None), |(m, n)| (m, Some(n)));
            (e.as_str(), mode, None, per_sm)
        })
        .collect();
    for (si, pieces) in OVERLAP_SHAPES {
        if !timing_shape_selected(si) {
            continue;
        }
        let (name, lens, hh) = BENCH_SHAPES[si];
        let inp = BenchInputs::new(&caller, lens, hh);
        let mut plans = overlap_plans(&caller, &inp, &rows, pieces, None);
        plans.extend(overlap_plans(&caller, &inp, &rows, pieces, Some("2")));
        let labels: Vec<String> = ["whole", "prep"]
            .iter()
            .flat_map(|w| rows.iter().map(move |r| format!("{w} {}", r.0)))
            .collect();
        let packs: Vec<_> = plans.iter().map(GdnPlan::pack).collect();
        let ctxs: Vec<_> = plans.iter().map(|p| p.context(&handle)).collect();
        for i in 0..plans.len() {
            for _ in 0..3 {
                plans[i].execute(&packs[i], &ctxs[i]);
            }
        }
        let mut times = vec![Vec::new(); plans.len()];
        for s in 0..samples {
            for j in 0..plans.len() {
                let i = (s + j) % plans.len();
                let ms = event_ms(&caller, || {
                    for _ in 0..OVERLAP_BATCH {
                        plans[i].execute(&packs[i], &ctxs[i]);
                    }
                });
                times[i].push(ms / OVERLAP_BATCH as f64);
            }
        }
        let med: Vec<f64> = times
            .into_iter()
            .map(|mut v| {
                v.sort_by(f64::total_cmp);
                v[v.len() / 2]
            })
            .collect();
        let cells: Vec<String> = labels
            .iter()
            .zip(&med)
            .map(|(l, m)| format!("{l} {m:.4}"))
            .collect();
        println!(
            "gdn_sm90 overlap timing {name:16} {} | {} ms (medians of {samples} x {OVERLAP_BATCH}) | first/second {:.3}x",
            if pieces.is_some() { "P=1" } else { "rule" },
            cells.join(" | "),
            med[0] / med[1.min(rows.len() - 1)]
        );
        drop(ctxs);
        drop(packs);
        for p in plans {
            p.free();
        }
        inp.free();
    }
}

/// The backward with zeroed checkpoint rows (`zeroed`, a [`Ckpt`] with `zero` set) against the
/// same backward with the real rows (`with`): the rows are read, so the first gradient (dQ) must
/// move by more than 10 % rms; prints `label` with the move, pushes a failure otherwise.
fn check_zeroed_rows_move(
    c: &Case,
    seed: u64,
    caller: &Caller,
    zeroed: Option<Ckpt<'_>>,
    with: &[Grad],
    label: &str,
    failures: &mut Vec<String>,
) {
    let (_, zeroed) = run_bwd_with(c, seed, caller, zeroed);
    let (p, dt, a) = &zeroed[0];
    let val = |x: &Vec<u8>| -> Vec<f64> { x.chunks(size(*dt)).map(|e| get(*dt, e)).collect() };
    let e = rms_ratio(&val(a), &val(&with[0].2));
    println!("{:48} {label}: {p} moves {e:.2e}", c.name);
    if e.is_nan() || e <= 0.1 {
        failures.push(format!("{}: {label} move {p} only {e:e}", c.name));
    }
}

/// The gradients of a backward reusing checkpoints (`reused`) against the same backward without
/// them, at the tolerances of the reference comparison: pushes a failure per gradient over its
/// tolerance; returns the per-gradient rms line and whether every gradient is bitwise equal.
fn compare_reuse(
    c: &Case,
    reused: &[Grad],
    without: &[Grad],
    failures: &mut Vec<String>,
) -> (String, bool) {
    let mut line = String::new();
    let mut bitwise = true;
    for ((p, dt, a), (_, _, b)) in reused.iter().zip(without) {
        bitwise &= a == b;
        let val = |x: &Vec<u8>| -> Vec<f64> { x.chunks(size(*dt)).map(|e| get(*dt, e)).collect() };
        let e = rms_ratio(&val(a), &val(b));
        let tol = match *p {
            "d_initial_state" => 6e-2,
            "dG" if c.g_dt != DataType::Float => 8e-2,
            "d_a_log" | "d_dt_bias" => 8e-2,
            _ if c.io == DataType::Half => 3e-2,
            _ => 4e-2,
        };
        line += &format!(" {p} {e:.2e}");
        if e.is_nan() || e > tol {
            failures.push(format!(
                "{}: {p} reuse vs recompute {e:e} over {tol:e}",
                c.name
            ));
        }
    }
    (line, bitwise)
}

/// §9.4 item 3, the backward side (session 16): state checkpoints every 64 tokens in the io dtype
/// are reused (the plan leaves out the forward-state replay; unit test
/// `reused_checkpoints_leave_out_the_replay`): the gradients match the fp64 reference at the
/// §9.2 tolerances and the same backward without checkpoints at those tolerances, and zeroed
/// checkpoint rows change them (the rows are read). (Other cadences and fp32 rows seed the replay
/// since session 17: `backward_checkpoint_seeds`.)
/// Uncut (ragged batches with an empty sequence and partial chunks, K = 128 bf16 and K = 64 fp16)
/// and the piece chain (by the rule: few heads, long sequences; and forced,
/// `DNNPLAN_GDN_BWD_PIECES=3`), each with an initial state and a `d_final_state`.
#[test]
fn backward_checkpoint_reuse() {
    let caller = Caller::new();
    let ck = |every, dtype, zero| {
        Some(Ckpt {
            every,
            dtype,
            zero,
            rows: None,
        })
    };
    // (case, forced pieces, also the recompute rows and the zeroed rows)
    let mut cases: Vec<(Case, Option<&str>, bool)> = Vec::new();
    let mut c = base(
        "ckpt bf16 K=V=128 ragged 200+0+77+64+1+130",
        &[200, 0, 77, 64, 1, 130],
        128,
    );
    c.long_span = true;
    cases.push((c, None, true));
    let mut c = base(
        "ckpt fp16 K=V=64 ragged 68+0+130+5+193, bf16 state",
        &[68, 0, 130, 5, 193],
        64,
    );
    c.io = DataType::Half;
    c.state = Some(DataType::Bfloat16);
    c.long_span = true;
    cases.push((c, None, false));
    // The piece chain by the rule (16 pieces: 8 and 3 blocks on 132 SMs).
    let mut c = base(
        "ckpt bf16 K=V=128 H=2, 2048 + 1000 (pieces)",
        &[2048, 1000],
        128,
    );
    c.long_span = true;
    cases.push((c, None, true));
    let mut c = one_head_k64_case("ckpt fp16 K=V=64 H=1, 0 + 1500 + 700 (pieces), bf16 state");
    c.long_span = true;
    cases.push((c, None, false));
    // Forced pieces on a ragged batch (empty trailing pieces, an empty sequence).
    let mut c = base(
        "ckpt bf16 K=V=128 300+0+500+77, DNNPLAN_GDN_BWD_PIECES=3",
        &[300, 0, 500, 77],
        128,
    );
    c.long_span = true;
    cases.push((c, Some("3"), false));
    // DNNPLAN_GDN_CKPT_CASES=i,j keeps those cases (e.g. under memcheck).
    let keep = env_list("DNNPLAN_GDN_CKPT_CASES", "");
    let mut failures = Vec::new();
    for (i, (c, pieces, extra)) in cases.iter().enumerate() {
        if keep != [""] && !keep.contains(&i.to_string()) {
            continue;
        }
        set_env("DNNPLAN_GDN_BWD_PIECES", *pieces);
        let seed = 700 + i as u64;
        let (f0, without) = run_bwd_with(c, seed, &caller, None);
        let (f1, reused) = run_bwd_with(c, seed, &caller, ck(64, None, false));
        failures.extend(f0);
        failures.extend(f1);
        // Reuse == recompute at the tolerances of the reference comparison.
        let (line, _) = compare_reuse(c, &reused, &without, &mut failures);
        println!("{:48} reuse vs recompute:{line}", c.name);
        if *extra {
            // Zeroed rows: the reusing backward reads them, so dQ moves far off.
            let zeroed = ck(64, None, true);
            let label = "zeroed checkpoints";
            check_zeroed_rows_move(c, seed, &caller, zeroed, &reused, label, &mut failures);
        }
    }
    set_env("DNNPLAN_GDN_BWD_PIECES", None);
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Session 16: state checkpoints (§3.4, §9.4 item 3) on every forward schedule a rule or a
/// switch selects (slim uncut w4 / w8 / overlapped, the slim and full piece paths, the full
/// factors' w4 / w8 / w4p, K = 64 and 128, bf16 and fp16, fp32 / bf16 / no initial state), at
/// cadences of one, two and three chunks in the io dtype and fp32, each against the fp64 state
/// series (`run`); and O and the final state bitwise those of the same schedule without
/// checkpoints.
#[test]
fn forward_state_checkpoints() {
    let caller = Caller::new();
    let ragged: &[usize] = &[200, 0, 64, 333, 1, 130];
    let long: &[usize] = &[3000, 0, 1100];
    let (bf16, f32) = (DataType::Bfloat16, DataType::Float);
    let mut runs: Vec<(Case, &[(&str, &str)])> = Vec::new();
    for (every, dt) in [(64, bf16), (128, f32), (192, bf16), (64, f32)] {
        let mut c = base("ckpt bf16 K=128 ragged (slim, by rule)", ragged, 128);
        c.ckpt = Some((every, dt));
        runs.push((c, &[]));
    }
    for (every, dt) in [(64, DataType::Half), (128, f32)] {
        let mut c = base("ckpt fp16 K=64 ragged, bf16 state", ragged, 64);
        (c.io, c.state, c.ckpt) = (DataType::Half, Some(bf16), Some((every, dt)));
        runs.push((c, &[]));
    }
    let mut c = base("ckpt fp16 K=128 ragged, no state, l2norm", ragged, 128);
    (c.io, c.state, c.ckpt) = (DataType::Half, None, Some((128, DataType::Half)));
    c.opts.use_qk_l2norm = true;
    runs.push((c, &[]));
    // The piece path (cut by the rule: 16 pieces of 3000 tokens' chunks; rows cross the piece
    // boundaries at c = 192).
    for (k, every, dt) in [(128, 64, bf16), (128, 192, f32), (64, 128, bf16)] {
        let mut c = base("ckpt bf16 long span 3000 + 0 + 1100 (pieces)", long, k);
        (c.long_span, c.ckpt) = (true, Some((every, dt)));
        runs.push((c, &[]));
    }
    let mut c = base("ckpt fp16 long span (pieces), full factors", long, 128);
    (c.io, c.long_span, c.ckpt) = (DataType::Half, true, Some((128, DataType::Half)));
    runs.push((c, &[("DNNPLAN_GDN_FWD_FACTORS", "full")]));
    // Forced schedules on the ragged batch.
    let forced: [&[(&str, &str)]; 5] = [
        &[("DNNPLAN_GDN_FWD_OVERLAP", "1")],
        &[("DNNPLAN_GDN_FWD_SCAN", "w8")],
        &[("DNNPLAN_GDN_FWD_FACTORS", "full")],
        &[
            ("DNNPLAN_GDN_FWD_FACTORS", "full"),
            ("DNNPLAN_GDN_FWD_SCAN", "w8"),
        ],
        &[
            ("DNNPLAN_GDN_FWD_FACTORS", "full"),
            ("DNNPLAN_GDN_FWD_SCAN", "w4p"),
        ],
    ];
    for env in forced {
        for (every, dt) in [(64, bf16), (192, f32)] {
            let mut c = base("ckpt bf16 K=128 ragged, forced schedule", ragged, 128);
            c.ckpt = Some((every, dt));
            runs.push((c, env));
        }
    }
    // DNNPLAN_GDN_CKPT_CASES=i,j,... runs only those (e.g. under compute-sanitizer).
    let only: Option<Vec<usize>> = std::env::var("DNNPLAN_GDN_CKPT_CASES")
        .ok()
        .map(|x| x.split(',').filter_map(|i| i.trim().parse().ok()).collect());
    for (i, (c, env)) in runs.iter().enumerate() {
        if only.as_ref().is_some_and(|o| !o.contains(&i)) {
            continue;
        }
        for (var, value) in env.iter() {
            set_env(var, Some(value));
        }
        println!("checkpoint case {i} {env:?}");
        let with = run(c, 300 + i as u64, &caller);
        // Without checkpoints the rule may take the one-pass forward (session 49), whose O rounds
        // differently: the bits are compared with the two passes that checkpointing runs.
        set_env("DNNPLAN_GDN_FWD_FUSED", Some("0"));
        let without = run(
            &Case {
                ckpt: None,
                ..c.clone()
            },
            300 + i as u64,
            &caller,
        );
        set_env("DNNPLAN_GDN_FWD_FUSED", None);
        for (var, _) in env.iter() {
            set_env(var, None);
        }
        assert!(
            with.o == without.o,
            "{}: O differs with checkpoints",
            c.name
        );
        assert!(
            with.state == without.state,
            "{}: final state differs with checkpoints",
            c.name
        );
        assert!(!with.ckpt.is_empty() && without.ckpt.is_empty());
    }
}

/// §9.4 item 3 end to end (session 16): the forward writes io-dtype checkpoints every 64 tokens
/// (the default schedule by rule, and the full factors forced), the backward reuses exactly those
/// rows; its gradients match the fp64 reference at the §9.2 tolerances (`run_bwd_with`) and the
/// backward without checkpoints at the reference comparison's tolerance. Uncut ragged batches
/// (an empty sequence, partial chunks; K = 128 bf16 and K = 64 fp16) and the piece chain (a long
/// sequence on few heads). Prints whether reuse and recompute agree bit for bit (the forward's
/// fp32 carry need not be the replay's: the slim forward rebuilds its products).
#[test]
fn checkpoints_from_the_forward_reused_by_the_backward() {
    let caller = Caller::new();
    let mut cases: Vec<(Case, Option<&str>)> = Vec::new();
    let mut c = base(
        "e2e bf16 K=V=128 ragged 200+0+77+64+1+130",
        &[200, 0, 77, 64, 1, 130],
        128,
    );
    c.long_span = true;
    cases.push((c.clone(), None));
    cases.push((c, Some("full")));
    let mut c = base(
        "e2e fp16 K=V=64 ragged 68+0+130+5+193, bf16 state",
        &[68, 0, 130, 5, 193],
        64,
    );
    (c.io, c.state, c.long_span) = (DataType::Half, Some(DataType::Bfloat16), true);
    cases.push((c, None));
    let mut c = base(
        "e2e bf16 K=V=128 H=2, 2048 + 1000 (pieces)",
        &[2048, 1000],
        128,
    );
    c.long_span = true;
    cases.push((c, None));
    let mut failures = Vec::new();
    for (i, (c, factors)) in cases.iter().enumerate() {
        let seed = 900 + i as u64;
        set_env("DNNPLAN_GDN_FWD_FACTORS", *factors);
        let fwd = run(
            &Case {
                ckpt: Some((64, c.io)),
                ..c.clone()
            },
            seed,
            &caller,
        );
        set_env("DNNPLAN_GDN_FWD_FACTORS", None);
        let ck = Ckpt {
            every: 64,
            dtype: None,
            zero: false,
            rows: Some(&fwd.ckpt),
        };
        let (f0, without) = run_bwd_with(c, seed, &caller, None);
        let (f1, reused) = run_bwd_with(c, seed, &caller, Some(ck));
        failures.extend(f0);
        failures.extend(f1);
        let (line, bitwise) = compare_reuse(c, &reused, &without, &mut failures);
        let rows = factors.unwrap_or("rule");
        println!(
            "{:48} forward rows ({rows}):{line} | bitwise recompute: {bitwise}",
            c.name
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// The cases of the tests whose forward saves outputs for its backward (sessions 37, 38), each
/// with whether it is uncut (else both directions cut it into pieces by rule):
/// ragged batches with an empty sequence and partial chunks (bf16; fp16 with bf16 states, safe
/// gate and grouped value heads), 12 sequences (the preps that locate the chunk by warp), long
/// sequences on few heads.
fn saved_output_cases() -> Vec<(Case, bool)> {
    let mut cases = Vec::new();
    let mut c = base(
        "saved bf16 ragged 200+0+77+64+1+130",
        &[200, 0, 77, 64, 1, 130],
        128,
    );
    c.long_span = true;
    cases.push((c, true));
    let mut c = base(
        "saved fp16 GVA 1/2 ragged 68+0+130+5+193",
        &[68, 0, 130, 5, 193],
        128,
    );
    (c.io, c.state, c.long_span) = (DataType::Half, Some(DataType::Bfloat16), true);
    (c.shape.h, c.shape.hk, c.shape.hv) = (1, 1, 2);
    c.opts.safe_gate = true;
    c.params = true;
    cases.push((c, true));
    let c = base(
        "saved bf16 12 seqs 100..320",
        &[100, 320, 64, 65, 127, 200, 300, 1, 128, 190, 256, 33],
        128,
    );
    cases.push((c, true));
    let mut c = base("saved bf16 H=2 4096 + 3000 (pieces)", &[4096, 3000], 128);
    c.long_span = true;
    cases.push((c, false));
    cases
}

/// The forward of `c` saving its chunk factors (with `ckpt`, the state checkpoints too: the
/// saved replay's U-saving scans), after the plain forward of `c` on the two passes: O and the
/// final state must be the two-pass forward's bit for bit (a saving forward runs the two passes;
/// the one-pass forward the rule may take without saving rounds differently, checked against
/// fp64 by [`run`] first), and the factors non-empty.
fn saving_forward(
    c: &Case,
    ckpt: Option<(usize, DataType)>,
    seed: u64,
    caller: &Caller,
) -> Outcome {
    run(c, seed, caller);
    set_env("DNNPLAN_GDN_FWD_FUSED", Some("0"));
    let plain = run(c, seed, caller);
    set_env("DNNPLAN_GDN_FWD_FUSED", None);
    let saving = Case {
        save_factors: true,
        ckpt,
        ..c.clone()
    };
    let saved = run(&saving, seed, caller);
    assert!(
        saved.o == plain.o && saved.state == plain.state,
        "{}: the saving forward's O / final state differ from the plain forward's",
        c.name
    );
    assert!(!saved.factors.is_empty());
    saved
}

/// The gradients (by port) whose bytes differ between two backward runs of one case.
fn differing(a: &[Grad], b: &[Grad]) -> Vec<&'static str> {
    a.iter()
        .zip(b)
        .filter(|(x, y)| x.2 != y.2)
        .map(|(x, _)| x.0)
        .collect()
}

/// Session 37: a training forward saves its chunk factors (`output_chunk_factors`: the saving
/// slim prep `wgs`) and the backward given them (`chunk_factors`) skips its prep. Against the
/// plain runs: O and the final state bit for bit (the forward's own checks against the fp64
/// reference run too, as do the backward's), every gradient bit for bit (the prep's outputs are
/// the same values), and a zeroed buffer moves the gradients (the backward reads it). Ragged
/// batches with an empty sequence and partial chunks (bf16; fp16 with bf16 states, safe gate and
/// grouped value heads), 12 sequences (the preps that locate the chunk by warp), long sequences
/// on few heads (both directions cut into pieces by rule).
#[test]
fn chunk_factors_saved_by_the_forward_replace_the_backwards_prep() {
    let caller = Caller::new();
    let cases = saved_output_cases();
    let mut failures = Vec::new();
    for (i, (c, _)) in cases.iter().enumerate() {
        let seed = 3700 + i as u64;
        let saved = saving_forward(c, None, seed, &caller);
        let (f0, without) = run_bwd_with(c, seed, &caller, None);
        let reading = Case {
            chunk_factors: Some(saved.factors.clone()),
            ..c.clone()
        };
        let (f1, with) = run_bwd_with(&reading, seed, &caller, None);
        failures.extend(f0);
        failures.extend(f1);
        let differ = differing(&with, &without);
        if !differ.is_empty() {
            failures.push(format!(
                "{}: gradients with saved factors differ from the recompute in {differ:?}",
                c.name
            ));
        }
        let zeroed = Case {
            chunk_factors: Some(vec![0u8; saved.factors.len()]),
            ..c.clone()
        };
        let (_, wrong) = run_bwd_with(&zeroed, seed, &caller, None);
        let moved = !differing(&wrong, &without).is_empty();
        if !moved {
            failures.push(format!(
                "{}: zeroed factors left every gradient unchanged",
                c.name
            ));
        }
        println!(
            "{:48} saved factors: forward bitwise, backward bitwise {}, zeroed moved {moved}",
            c.name,
            differ.is_empty()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Session 38: the saved replay. A training forward that saves its chunk factors and checkpoints
/// every chunk (io rows) also saves each chunk's `U` tile (the U-saving scans `*_su`); a backward
/// given both the checkpoints and those factors runs neither its prep nor its replay. Against the
/// plain runs: O and the final state bit for bit; every gradient bit for bit where the forward's
/// uncut states are the replay's (the uncut cases; on pieces the two directions' chains differ,
/// so there the reference comparison's tolerance, `compare_reuse`, and the fp64 checks of
/// `run_bwd_with`); zeroed U tiles move the gradients (the token stage reads them). Ragged batches
/// with an empty sequence and partial chunks (bf16; fp16 with bf16 states, safe gate and grouped
/// value heads), 12 sequences, long sequences on few heads (both directions cut into pieces).
#[test]
fn the_saved_replay_replaces_the_backwards_prep_and_replay() {
    let caller = Caller::new();
    let cases = saved_output_cases();
    let mut failures = Vec::new();
    for (i, (c, uncut)) in cases.iter().enumerate() {
        let seed = 3800 + i as u64;
        let saved = saving_forward(c, Some((64, c.io)), seed, &caller);
        assert!(!saved.ckpt.is_empty());
        let ck = Ckpt {
            every: 64,
            dtype: None,
            zero: false,
            rows: Some(&saved.ckpt),
        };
        let (f0, without) = run_bwd_with(c, seed, &caller, None);
        let reading = Case {
            chunk_factors: Some(saved.factors.clone()),
            ..c.clone()
        };
        let (f1, with) = run_bwd_with(&reading, seed, &caller, Some(ck));
        failures.extend(f0);
        failures.extend(f1);
        let differ = differing(&with, &without);
        if *uncut && !differ.is_empty() {
            failures.push(format!(
                "{}: gradients with the saved replay differ from the recompute in {differ:?}",
                c.name
            ));
        }
        let (line, _) = compare_reuse(c, &with, &without, &mut failures);
        // The U tiles zeroed, where the buffer's layout puts them.
        let units = (saved.factors.len() / gdn_chunk_factor_bytes(128, 64) as usize) as u64;
        let u_bytes = gdn_chunk_u_bytes(128) as u64;
        let u_at = ChunkFactorsLayout::new(units, 1, u_bytes)
            .u_tiles
            .expect("the U tiles") as usize;
        let mut zeroed = saved.factors.clone();
        zeroed[u_at..u_at + (units * u_bytes) as usize].fill(0);
        let wrong_case = Case {
            chunk_factors: Some(zeroed),
            ..c.clone()
        };
        let (_, wrong) = run_bwd_with(&wrong_case, seed, &caller, Some(ck));
        let moved = !differing(&wrong, &with).is_empty();
        if !moved {
            failures.push(format!(
                "{}: zeroed U tiles left every gradient unchanged",
                c.name
            ));
        }
        println!(
            "{:48} saved replay: forward bitwise, backward bitwise {} ({line}), zeroed U moved {moved}",
            c.name,
            differ.is_empty()
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Session 17, spec §4.5 "Recompute vs checkpoints", the "coarse" row: checkpoints at cadences
/// above the chunk (128, 192, 256) in the io dtype or fp32, and fp32 rows every chunk, seed the
/// forward-state replay (`gdn_bwd_fscanc*`, one block per row; unit test
/// `seeded_checkpoints_replace_the_forward_chain`). Rows from the fp64 reference's state series
/// (rounded to the rows' dtype): the gradients match the fp64 reference at the §9.2 tolerances
/// (`run_bwd_with`) and the backward without checkpoints at those tolerances (`compare_reuse`);
/// zeroed rows move dQ far off (the rows are read); `DNNPLAN_GDN_BWD_CKPT_REPLAY=r4` (the other
/// seeded replay at K = 128) gives the default's gradients bit for bit. Ragged batches with an
/// empty sequence and partial chunks (K = 128 bf16, K = 64 fp16 with bf16 states), long
/// sequences on few heads (the piece chain by rule: its summaries give only `Mᵀ_j`), forced
/// pieces (`DNNPLAN_GDN_BWD_PIECES=3`). End to end: our forward (full factors forced, uncut)
/// writes fp32 rows every 128 tokens and the backward seeds from them (prints whether that equals
/// the recompute bit for bit: the forward's fp32 carry is the replay's there).
/// `DNNPLAN_GDN_CKPT_CASES=i,j` keeps those cases (e.g. under memcheck; the end-to-end case is 5).
#[test]
fn backward_checkpoint_seeds() {
    let caller = Caller::new();
    let (io, f32) = (None, Some(DataType::Float));
    let ck = |every, dtype, zero| {
        Some(Ckpt {
            every,
            dtype,
            zero,
            rows: None,
        })
    };
    // (case, forced pieces, (cadence, dtype) runs, zeroed / switch checks at the first run)
    type Run = (i64, Option<DataType>);
    let mut cases: Vec<(Case, Option<&str>, Vec<Run>, bool)> = Vec::new();
    let mut c = base(
        "seed bf16 K=V=128 ragged 200+0+77+64+1+130",
        &[200, 0, 77, 64, 1, 130],
        128,
    );
    c.long_span = true;
    cases.push((c, None, vec![(128, io), (256, f32), (64, f32)], true));
    let mut c = base(
        "seed fp16 K=V=64 ragged 68+0+130+5+193, bf16 state",
        &[68, 0, 130, 5, 193],
        64,
    );
    (c.io, c.state, c.long_span) = (DataType::Half, Some(DataType::Bfloat16), true);
    cases.push((c, None, vec![(192, io), (128, f32)], true));
    // The piece chain by the rule (16 pieces of 48 / 16 chunks; rows of 4 and 2 chunks).
    let mut c = base(
        "seed bf16 K=V=128 H=2, 2048 + 1000 (pieces)",
        &[2048, 1000],
        128,
    );
    c.long_span = true;
    cases.push((c, None, vec![(256, io), (128, f32)], false));
    let mut c = one_head_k64_case("seed fp16 K=V=64 H=1, 0 + 1500 + 700 (pieces), bf16 state");
    c.long_span = true;
    cases.push((c, None, vec![(192, f32), (128, io)], false));
    // Forced pieces on a ragged batch (empty trailing pieces, an empty sequence).
    let mut c = base(
        "seed bf16 K=V=128 300+0+500+77, DNNPLAN_GDN_BWD_PIECES=3",
        &[300, 0, 500, 77],
        128,
    );
    c.long_span = true;
    cases.push((c, Some("3"), vec![(128, f32), (192, io)], false));
    let keep = env_list("DNNPLAN_GDN_CKPT_CASES", "");
    let kept = |i: usize| keep == [""] || keep.contains(&i.to_string());
    let mut failures = Vec::new();
    for (i, (c, pieces, runs, extra)) in cases.iter().enumerate() {
        if !kept(i) {
            continue;
        }
        set_env("DNNPLAN_GDN_BWD_PIECES", *pieces);
        let seed = 1700 + i as u64;
        let (f0, without) = run_bwd_with(c, seed, &caller, None);
        failures.extend(f0);
        let mut first = None;
        for &(every, dtype) in runs {
            let (f, seeded) = run_bwd_with(c, seed, &caller, ck(every, dtype, false));
            failures.extend(f);
            let (line, bitwise) = compare_reuse(c, &seeded, &without, &mut failures);
            let dt = dtype.unwrap_or(c.io).name();
            println!(
                "{:48} seeded c={every} {dt} vs recompute:{line} | bitwise {bitwise}",
                c.name
            );
            first.get_or_insert(((every, dtype), seeded));
        }
        if let (true, Some(((every, dtype), seeded))) = (*extra, &first) {
            // Zeroed rows: the seeded replay reads them, so dQ moves far off.
            let zeroed = ck(*every, *dtype, true);
            let label = format!("zeroed rows (c={every})");
            check_zeroed_rows_move(c, seed, &caller, zeroed, seeded, &label, &mut failures);
            // The other seeded replay (K = 128: r4 instead of p1) writes the same states.
            set_env("DNNPLAN_GDN_BWD_CKPT_REPLAY", Some("r4"));
            let (f, r4) = run_bwd_with(c, seed, &caller, ck(*every, *dtype, false));
            set_env("DNNPLAN_GDN_BWD_CKPT_REPLAY", None);
            failures.extend(f);
            for ((p, _, a), (_, _, b)) in r4.iter().zip(seeded) {
                if a != b {
                    failures.push(format!(
                        "{}: {p} with DNNPLAN_GDN_BWD_CKPT_REPLAY=r4 differs from the default",
                        c.name
                    ));
                }
            }
        }
    }
    set_env("DNNPLAN_GDN_BWD_PIECES", None);
    // End to end: fp32 rows every 128 tokens from our forward (full factors, uncut ragged batch).
    if kept(cases.len()) {
        let mut c = base(
            "e2e seed bf16 K=V=128 ragged 200+0+77+64+1+130",
            &[200, 0, 77, 64, 1, 130],
            128,
        );
        c.long_span = true;
        let seed = 1790;
        set_env("DNNPLAN_GDN_FWD_FACTORS", Some("full"));
        let fwd = run(
            &Case {
                ckpt: Some((128, DataType::Float)),
                ..c.clone()
            },
            seed,
            &caller,
        );
        set_env("DNNPLAN_GDN_FWD_FACTORS", None);
        let rows = Ckpt {
            every: 128,
            dtype: f32,
            zero: false,
            rows: Some(&fwd.ckpt),
        };
        let (f0, without) = run_bwd_with(&c, seed, &caller, None);
        let (f1, seeded) = run_bwd_with(&c, seed, &caller, Some(rows));
        failures.extend(f0);
        failures.extend(f1);
        let (line, bitwise) = compare_reuse(&c, &seeded, &without, &mut failures);
        println!(
            "{:48} forward fp32 rows (full factors):{line} | bitwise recompute: {bitwise}",
            c.name
        );
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Session 38: the port guards (`src/engines/gdn/port_guards.rs`). A caller buffer at an address
/// the kernels cannot move in 16-byte pieces (a token tensor, a state, the checkpoints or the
/// saved factors 8 bytes off) or at an address off its element width (g 2 bytes off) is refused
/// with `BadParam` naming the operand and the rule, before anything launches; the same plans then
/// run on the aligned buffers (the context is intact) and give the same bytes as before the
/// refusals. Forward and backward, with the saved replay's checkpoints and factors bound.
#[test]
fn misaligned_operands_are_refused_and_the_context_stays_usable() {
    let caller = Caller::new();
    let inp = BenchInputs::new(&caller, &[300, 0, 77], 2);
    let handle = Handle::new(caller.stream.cast()).expect("handle");
    let rows = inp.checkpoint_bytes();
    let factors = caller.alloc(inp.factor_dims_at(64).iter().product::<i64>() as usize, 0);
    let ckpt = caller.alloc(rows, 0);
    let mut failures = Vec::new();
    for (op, off) in [
        (
            "gdn",
            &[
                ("q", 8u64),
                ("O", 8),
                ("g", 2),
                ("initial_state", 8),
                ("chunk_factors", 8),
                ("state_checkpoints", 8),
            ][..],
        ),
        (
            "gdn_bwd",
            &[
                ("dO", 8),
                ("dQ", 8),
                ("k", 8),
                ("beta", 2),
                ("d_initial_state", 8),
                ("chunk_factors", 8),
            ][..],
        ),
    ] {
        let (g, node, ins) = inp.graph_saved_replay(op, factors, Some(ckpt));
        let mut plan = GdnPlan::build(&caller, g, node, &ins, BenchInputs::outputs(op));
        let run = |plan: &GdnPlan| {
            let pack = plan.pack();
            let ctx = plan.context(&handle);
            plan.try_execute(&pack, &ctx)
        };
        run(&plan).expect("aligned");
        let first: Vec<Vec<u8>> = plan
            .outputs
            .iter()
            .map(|&(d, n)| caller.download(d, n))
            .collect();
        for &(port, by) in off {
            let uid = {
                let n = &plan.graph.nodes()[node];
                n.input(port).or_else(|| n.output(port)).expect(port)
            };
            let slot = plan
                .bindings
                .iter()
                .position(|(u, _)| *u == uid)
                .expect("bound");
            plan.bindings[slot].1 += by;
            match run(&plan) {
                Ok(()) => failures.push(format!("{op}: {port} {by} bytes off ran")),
                Err(e) => {
                    // The operand's tensor name (a node-made output's is the node's, `::` a suffix).
                    let name = plan.graph.tensor(uid).expect("tensor").name.clone();
                    let m = e.to_string();
                    if !(m.contains(&format!("'{name}'")) && m.contains("aligned")) {
                        failures.push(format!("{op}: {port}: {m}"));
                    }
                }
            }
            plan.bindings[slot].1 -= by;
        }
        run(&plan).expect("aligned after the refusals");
        let again: Vec<Vec<u8>> = plan
            .outputs
            .iter()
            .map(|&(d, n)| caller.download(d, n))
            .collect();
        if again != first {
            failures.push(format!("{op}: the outputs changed after the refused calls"));
        }
        println!(
            "{op}: {} misaligned operands refused, the plan runs after them",
            off.len()
        );
        plan.free();
    }
    for d in [factors, ckpt] {
        // SAFETY: allocated above, no plan holds them any more.
        unsafe { ok("free", sys::cuMemFree_v2(d)) };
    }
    inp.free();
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
