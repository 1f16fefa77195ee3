//! CPU checks of the `gdn` family: the analyzer's facts, every support rule of `gdn_sm90` (accept
//! on SM90, each decline with its reason), the workspace size, and planning through the real
//! manifest on a hypothetical SM90 target.

use dnnplan::dispatch::backend::default_provider;
use dnnplan::dispatch::engine::{Engine, SupportQuery, decline_reason, is_decline};
use dnnplan::dispatch::facts::FactsRef;
use dnnplan::dispatch::manifest::MANIFEST;
use dnnplan::dispatch::target::Target;
use dnnplan::dispatch::{HeurMode, PlanList, PlanOptions};
use dnnplan::engines::gdn::analyzer::{GdnFacts, GdnOp, analyze};
use dnnplan::engines::gdn::engine::{ENGINE_NAME, GdnSm90};
use dnnplan::ir::{DataType, Graph, GraphContext, NodeBuilder, Tensor};

/// A forward GDN graph: N sequences of `t_per` tokens, H = HV = 2 heads.
struct Spec {
    k: i64,
    v: i64,
    io: DataType,
    state: Option<DataType>,
    checkpoint: i64,
}

impl Default for Spec {
    fn default() -> Self {
        Spec {
            k: 128,
            v: 128,
            io: DataType::Bfloat16,
            state: Some(DataType::Float),
            checkpoint: 0,
        }
    }
}

fn forward_graph(s: &Spec) -> Graph {
    let (t, h, n) = (192, 2, 3);
    let mut g = Graph::new(GraphContext::new(s.io, DataType::Float, DataType::Float));
    let mut add =
        |name: &str, dims: &[i64], dt: DataType| g.add_tensor(Tensor::new(name, dims, dt)).unwrap();
    let q = add("q", &[t, h, s.k], s.io);
    let k = add("k", &[t, h, s.k], s.io);
    let v = add("v", &[t, h, s.v], s.io);
    let gate = add("g", &[t, h], DataType::Float);
    let beta = add("beta", &[t, h], DataType::Float);
    let cu = add("cu_seqlens", &[n + 1], DataType::Int32);
    let mut b = NodeBuilder::by_name("gdn")
        .unwrap()
        .name("gdn0")
        .input("q", q)
        .input("k", k)
        .input("v", v)
        .input("g", gate)
        .input("beta", beta)
        .input("cu_seqlens", cu)
        .bool("use_qk_l2norm", true)
        .bool("output_final_state", true);
    if let Some(sd) = s.state {
        let init = add("initial_state", &[n, h, s.v, s.k], sd);
        b = b.input("initial_state", init);
    }
    if s.checkpoint > 0 {
        b = b.int("checkpoint_every_n_tokens", s.checkpoint);
    }
    g.add_node(b).unwrap();
    g
}

fn facts_of(g: &Graph, target: &Target) -> FactsRef {
    analyze(g, target)
        .unwrap()
        .expect("the analyzer expresses a one-node GDN graph")
}

/// The engine's verdict on `g` after validation (which infers the output dtypes).
fn verdict(g: &Graph, target: &Target) -> Result<(), String> {
    let mut g = g.clone();
    g.validate().expect("the test graph is valid");
    let facts = facts_of(&g, target);
    let q = SupportQuery {
        engine: ENGINE_NAME,
        graph: &g,
        facts: Some(facts.as_ref()),
        target,
    };
    match GdnSm90.check_support(&q) {
        Ok(()) => Ok(()),
        Err(e) => {
            assert!(is_decline(&e), "a support failure must be a decline: {e}");
            Err(decline_reason(&e))
        }
    }
}

#[test]
fn analyzer_describes_the_graph() {
    let g = forward_graph(&Spec::default());
    let f = facts_of(&g, &Target::with_arch(90));
    let f = f.downcast_ref::<GdnFacts>().unwrap();
    assert_eq!(f.op, GdnOp::Forward);
    assert_eq!((f.n_seqs, f.total_tokens, f.k, f.v), (3, 192, 128, 128));
    assert_eq!(f.heads, (2, 2, 2, 2));
    assert!(f.use_qk_l2norm && !f.safe_gate && !f.linear_gate);
    assert!((f.effective_scale() - 1.0 / 128f64.sqrt()).abs() < 1e-15);
    for p in [
        "q",
        "k",
        "v",
        "g",
        "beta",
        "cu_seqlens",
        "initial_state",
        "O",
        "final_state",
    ] {
        assert!(f.port(p).is_some(), "port {p} bound");
    }
    assert_eq!(f.port("O").unwrap().dims, vec![192, 2, 128]);
    assert!(f.invalid.is_none());
}

#[test]
fn accepts_sm90_bf16_and_fp16_at_both_head_dims() {
    for (k, io) in [
        (128, DataType::Bfloat16),
        (64, DataType::Bfloat16),
        (128, DataType::Half),
        (64, DataType::Half),
    ] {
        let g = forward_graph(&Spec {
            k,
            v: k,
            io,
            ..Spec::default()
        });
        assert_eq!(
            verdict(&g, &Target::with_arch(90)),
            Ok(()),
            "K = V = {k}, {io:?}"
        );
    }
    let g = forward_graph(&Spec {
        state: Some(DataType::Bfloat16),
        ..Spec::default()
    });
    assert_eq!(verdict(&g, &Target::with_arch(90)), Ok(()));
    let g = forward_graph(&Spec {
        state: None,
        ..Spec::default()
    });
    assert_eq!(verdict(&g, &Target::with_arch(90)), Ok(()));
}

#[test]
fn declines_with_reasons() {
    let cases: Vec<(Graph, Target, &str)> = vec![
        (
            forward_graph(&Spec::default()),
            Target::with_arch(80),
            "SM80",
        ),
        (
            forward_graph(&Spec::default()),
            Target::with_arch(100),
            "SM100",
        ),
        (
            forward_graph(&Spec::default()),
            Target::no_device("no driver"),
            "needs an SM90 GPU",
        ),
        (
            forward_graph(&Spec {
                k: 96,
                v: 96,
                ..Spec::default()
            }),
            Target::with_arch(90),
            "K = V in {64, 128}",
        ),
        (
            forward_graph(&Spec {
                k: 64,
                v: 128,
                ..Spec::default()
            }),
            Target::with_arch(90),
            "K = 64, V = 128",
        ),
        (
            forward_graph(&Spec {
                state: Some(DataType::Half),
                ..Spec::default()
            }),
            Target::with_arch(90),
            "initial_state must be FLOAT or BFLOAT16",
        ),
        (
            forward_graph(&Spec {
                checkpoint: 96,
                ..Spec::default()
            }),
            Target::with_arch(90),
            "checkpoint_every_n_tokens must be a positive multiple of 64",
        ),
    ];
    for (g, target, want) in cases {
        let got = verdict(&g, &target).expect_err("must decline");
        assert!(got.contains(want), "reason {got:?} should mention {want:?}");
    }
}

#[test]
fn checkpoints_at_chunk_multiples_are_served() {
    // Session 16: the forward writes state checkpoints at any positive multiple of the chunk.
    for c in [64, 128, 192] {
        let g = forward_graph(&Spec {
            checkpoint: c,
            ..Spec::default()
        });
        assert_eq!(verdict(&g, &Target::with_arch(90)), Ok(()), "c = {c}");
    }
}

#[test]
fn the_backward_is_served_and_declines_only_for_unsupported_shapes() {
    // The shipped example has K = 32, V = 16 and state checkpoints: declined for the head dims
    // (the first failing rule), not for being a backward.
    let ex = dnnplan::ir::examples::example("gdn_bwd").unwrap();
    let got = verdict(&ex.graph, &Target::with_arch(90)).expect_err("K = 32 declines");
    assert!(got.contains("K = V in {64, 128}"), "{got}");
    assert!(!got.contains("backward"), "{got}");
}

#[test]
fn plans_on_a_hypothetical_sm90() {
    let mut g = forward_graph(&Spec::default());
    let opts = options_for_sm(90);
    let list = PlanList::plan(&mut g, opts, &[HeurMode::A]).expect("planning succeeds");
    assert!(
        list.entries().iter().any(|e| e.engine_id == 20_103),
        "gdn_sm90 (20103) is listed: {:?}",
        list.entries()
            .iter()
            .map(|e| e.engine_id)
            .collect::<Vec<_>>()
    );
    // On SM80 the family's only engine declines: no bundled entry.
    plans_without_gdn_sm90_on(forward_graph(&Spec::default()), 80);
}

/// A backward graph like the GPU tests build: bf16 io, fp16 gate, fp32 beta, bf16 states,
/// safe gate with a_log and dt_bias, GVA H = 1 / HV = 2.
fn backward_graph(k: i64) -> (Graph, usize) {
    backward_graph_with(k, &[])
}

/// [`backward_graph`] with the input ports of `dims` declared at those dims instead.
fn backward_graph_with(k: i64, dims: &[(&str, Vec<i64>)]) -> (Graph, usize) {
    let (t, n, io) = (192, 3, DataType::Bfloat16);
    let mut g = Graph::new(GraphContext::new(io, DataType::Float, DataType::Float));
    let mut b = NodeBuilder::by_name("gdn_bwd").unwrap().name("gdn_bwd0");
    for (port, own, dt) in [
        ("q", vec![t, 1, k], io),
        ("k", vec![t, 1, k], io),
        ("v", vec![t, 2, k], io),
        ("g", vec![t, 2], DataType::Half),
        ("beta", vec![t, 2], DataType::Float),
        ("cu_seqlens", vec![n + 1], DataType::Int64),
        ("dO", vec![t, 2, k], io),
        ("initial_state", vec![n, 2, k, k], DataType::Bfloat16),
        ("d_final_state", vec![n, 2, k, k], DataType::Bfloat16),
        ("a_log", vec![2], DataType::Float),
        ("dt_bias", vec![2], DataType::Float),
    ] {
        let dims = (dims.iter().find(|(p, _)| *p == port)).map_or(own, |(_, d)| d.clone());
        let u = g.add_tensor(Tensor::new(port, &dims, dt)).unwrap();
        b = b.input(port, u);
    }
    b = b.bool("safe_gate", true).bool("use_qk_l2norm", true);
    let node = g.add_node(b).unwrap();
    for p in [
        "dQ",
        "dK",
        "dV",
        "dG",
        "dBeta",
        "d_initial_state",
        "d_a_log",
        "d_dt_bias",
    ] {
        let uid = g.nodes()[node].output(p).unwrap_or_else(|| panic!("{p}"));
        g.set_output(uid, true).unwrap();
    }
    (g, node)
}

#[test]
fn serves_the_backward_with_each_gradient_in_its_primals_dtype() {
    for k in [64, 128] {
        let (g, node) = backward_graph(k);
        assert_eq!(verdict(&g, &Target::with_arch(90)), Ok(()), "K = {k}");
        let mut v = g.clone();
        v.validate().unwrap();
        for (grad, want) in [
            ("dQ", DataType::Bfloat16),
            ("dV", DataType::Bfloat16),
            ("dG", DataType::Half),
            ("dBeta", DataType::Float),
            ("d_initial_state", DataType::Bfloat16),
            ("d_a_log", DataType::Float),
        ] {
            let uid = v.nodes()[node].output(grad).unwrap();
            assert_eq!(v.tensor(uid).unwrap().data_type, want, "{grad}");
        }
        let mut g = g;
        let opts = options_for_sm(90);
        let list = PlanList::plan(&mut g, opts, &[HeurMode::A]).expect("planning");
        assert!(list.entries().iter().any(|e| e.engine_id == 20_103));
    }
}

#[test]
fn declines_ports_the_kernels_would_run_past() {
    // The IR checks the heads and rows of the token ports but not every dim the kernels address;
    // the gradients are declared like their primals, so a short primal means a short gradient the
    // backward would write past: the engine declines naming the port and the dims it needs.
    for (port, dims, want) in [
        // d_initial_state (like initial_state) would get 3 sequences' rows.
        (
            "initial_state",
            vec![1, 2, 128, 128],
            "port initial_state must have the dims the kernels address, \
             [N (or the pool's rows), HO, V, K] = [3, 2, 128, 128]; got [1, 2, 128, 128]",
        ),
        (
            "d_final_state",
            vec![3, 2, 128, 64],
            "[N, HO, V, K] = [3, 2, 128, 128]",
        ),
        // d_a_log, d_dt_bias (like their parameters) would get HO = 2 values.
        (
            "a_log",
            vec![1],
            "port a_log must have the dims the kernels address, [HO] = [2]",
        ),
        ("dt_bias", vec![1], "port dt_bias must have"),
        // dK (like k) would get rows of q's K = 128.
        (
            "k",
            vec![192, 1, 64],
            "port k must have the dims the kernels address, [T, HK, K]",
        ),
        (
            "dO",
            vec![192, 1, 128],
            "port dO must have the dims the kernels address, [T, HO, V]",
        ),
    ] {
        let (g, _) = backward_graph_with(128, &[(port, dims)]);
        let got = verdict(&g, &Target::with_arch(90)).expect_err("must decline");
        assert!(got.contains(want), "{port}: {got}");
    }
    // The forward reads initial_state at N rows too.
    let mut g = forward_graph(&Spec::default());
    let init = g
        .tensors()
        .iter()
        .find(|t| t.name == "initial_state")
        .map(|t| t.uid)
        .unwrap();
    g.set_dims(init, &[2, 2, 128, 128]).unwrap();
    let got = verdict(&g, &Target::with_arch(90)).expect_err("must decline");
    assert!(got.contains("port initial_state must have"), "{got}");
}

/// A forward graph of one sequence of `t` tokens on `h` heads at K = V = 128 (bf16 io, fp32
/// gates), the dims as given whatever their product.
fn forward_graph_at(t: i64, h: i64) -> Graph {
    forward_graph_with(t, h, 1, |b| b)
}

/// [`forward_graph_at`] for `n` sequences, the node's attributes set by `attrs`.
fn forward_graph_with(
    t: i64,
    h: i64,
    n: i64,
    attrs: impl FnOnce(NodeBuilder) -> NodeBuilder,
) -> Graph {
    let d = 128;
    let mut g = Graph::new(GraphContext::new(
        DataType::Bfloat16,
        DataType::Float,
        DataType::Float,
    ));
    let mut b = NodeBuilder::by_name("gdn").unwrap().name("gdn0");
    for (port, dims, dt) in [
        ("q", vec![t, h, d], DataType::Bfloat16),
        ("k", vec![t, h, d], DataType::Bfloat16),
        ("v", vec![t, h, d], DataType::Bfloat16),
        ("g", vec![t, h], DataType::Float),
        ("beta", vec![t, h], DataType::Float),
        ("cu_seqlens", vec![n.saturating_add(1)], DataType::Int32),
    ] {
        let u = g.add_tensor(Tensor::new(port, &dims, dt)).unwrap();
        b = b.input(port, u);
    }
    g.add_node(attrs(b)).unwrap();
    g
}

#[test]
fn shapes_past_the_kernels_32_bit_indices_decline_without_a_panic() {
    // 2^40 tokens of 16 heads (2^51 elements per token tensor: a valid graph): the engine declines
    // on the count and its limit.
    let got =
        verdict(&forward_graph_at(1 << 40, 16), &Target::with_arch(90)).expect_err("must decline");
    assert!(
        got.contains("T (total tokens) = 1099511627776 exceeds the kernels' limit 2147483647"),
        "{got}"
    );
    // One sequence of 2^31 − 128 tokens on 64 heads: 2^31 − 64 chunk-slot units, past the
    // headroom the kernels' loops over units need.
    let got = verdict(
        &forward_graph_at((1 << 31) - 128, 64),
        &Target::with_arch(90),
    )
    .expect_err("must decline");
    assert!(
        got.contains("(T / 64 + N) · HO (chunk-slot units) = 2147483584"),
        "{got}"
    );
}

/// Validation of `g` fails naming one of `ports` and the 64-bit rule; planning it refuses without
/// a panic and lists no `gdn_sm90` plan.
fn refused_past_64_bits(g: Graph, ports: &[&str]) {
    let err = g
        .clone()
        .validate()
        .expect_err("an element count past 64 bits is invalid");
    let text = err.to_string();
    assert!(
        ports.iter().any(|p| text.contains(&format!("port `{p}`")))
            && text.contains("must fit in 64 bits"),
        "{text}"
    );
    plans_without_gdn_sm90(g);
}

#[test]
fn tensors_past_64_bit_element_counts_are_invalid_graphs() {
    // 2^40 tokens of 2^20 heads: q, k, v hold 2^67 elements; validation refuses the first such
    // input before shape inference multiplies its dims.
    refused_past_64_bits(forward_graph_at(1 << 40, 1 << 20), &["q", "k", "v"]);
    // N = 2^63 − 2 sequences with checkpoints and saved chunk factors: the inputs fit, the
    // inferred rows (T / c + N, T / 64 + N) saturate instead of overflowing, and the outputs
    // those rows give are refused.
    for every in [64, 128] {
        let g = forward_graph_with(1 << 40, 1, i64::MAX - 1, |b| {
            b.int("checkpoint_every_n_tokens", every)
                .bool("output_chunk_factors", true)
        });
        refused_past_64_bits(g, &["state_checkpoints", "chunk_factors"]);
    }
    // The backward at such counts: its states [N, HO, V, K] overflow any product.
    let (t, n) = (1i64 << 40, i64::MAX - 1);
    let (g, _) = backward_graph_with(
        128,
        &[
            ("q", vec![t, 1, 128]),
            ("k", vec![t, 1, 128]),
            ("v", vec![t, 2, 128]),
            ("g", vec![t, 2]),
            ("beta", vec![t, 2]),
            ("dO", vec![t, 2, 128]),
            ("cu_seqlens", vec![n + 1]),
            ("initial_state", vec![n, 2, 128, 128]),
            ("d_final_state", vec![n, 2, 128, 128]),
        ],
    );
    refused_past_64_bits(g, &["initial_state", "d_final_state"]);
}

/// Plans `g` for a hypothetical SM90 as the C ABI does (validate, freeze, rank): no panic, and
/// `gdn_sm90` is not listed.
fn plans_without_gdn_sm90(g: Graph) {
    plans_without_gdn_sm90_on(g, 90);
}

/// [`plans_without_gdn_sm90`] for a hypothetical device of compute capability `arch`.
fn plans_without_gdn_sm90_on(mut g: Graph, arch: i32) {
    if let Ok(list) = PlanList::plan(&mut g, options_for_sm(arch), &[HeurMode::A]) {
        assert!(list.entries().iter().all(|e| e.engine_id != 20_103));
    }
}

/// Planning options for a hypothetical device of compute capability `arch`: the shipped manifest,
/// the default backend, opt-in engines off.
fn options_for_sm(arch: i32) -> PlanOptions {
    PlanOptions {
        manifest: &MANIFEST,
        backend: default_provider(),
        target: Target::with_arch(arch),
        opt_in: Some(false),
    }
}
