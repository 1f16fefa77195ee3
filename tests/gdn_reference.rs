//! CPU checks of the GDN fp64 reference: the hand-written backward against central finite
//! differences of the forward, the chunked UT/WY forward against the per-token recurrence
//! (full and partial chunks, ragged batches with empty sequences), and state chaining.

use dnnplan::engines::gdn::reference::{
    self, GateDomain, GdnInputs, GdnOptions, GdnShape, rms_ratio,
};
use dnnplan::engines::gdn::{chunked, staged};

/// splitmix64-based deterministic generator.
struct Rng(u64);

impl Rng {
    fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }
    fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * ((self.next_u64() >> 11) as f64 / (1u64 << 53) as f64)
    }
    fn vec(&mut self, n: usize, lo: f64, hi: f64) -> Vec<f64> {
        (0..n).map(|_| self.uniform(lo, hi)).collect()
    }
}

/// Owned inputs of one problem.
struct Problem {
    shape: GdnShape,
    opts: GdnOptions,
    q: Vec<f64>,
    k: Vec<f64>,
    v: Vec<f64>,
    g: Vec<f64>,
    beta: Vec<f64>,
    cu: Vec<usize>,
    init: Option<Vec<f64>>,
    a_log: Option<Vec<f64>>,
    dt_bias: Option<Vec<f64>>,
}

impl Problem {
    fn new(seed: u64, shape: GdnShape, opts: GdnOptions, lens: &[usize], with_init: bool) -> Self {
        let mut rng = Rng(seed);
        let mut cu = vec![0];
        for l in lens {
            cu.push(cu.last().unwrap() + l);
        }
        let t = *cu.last().unwrap();
        let ho = shape.ho();
        // Keys of moderate norm keep the delta rule well conditioned without l2norm.
        let kscale = if opts.use_qk_l2norm {
            1.0
        } else {
            1.0 / (shape.k as f64).sqrt()
        };
        let q = rng.vec(t * shape.h * shape.k, -1.0, 1.0);
        let k: Vec<f64> = rng
            .vec(t * shape.hk * shape.k, -1.0, 1.0)
            .iter()
            .map(|x| x * kscale)
            .collect();
        let v = rng.vec(t * shape.hv * shape.v, -1.0, 1.0);
        let g: Vec<f64> = if opts.safe_gate {
            rng.vec(t * ho, -2.0, 2.0)
        } else {
            match opts.gate_domain {
                GateDomain::Log => rng.vec(t * ho, 0.5, 1.0).iter().map(|x| x.ln()).collect(),
                GateDomain::Linear => rng.vec(t * ho, 0.5, 1.0),
            }
        };
        let beta = if opts.use_beta_sigmoid {
            rng.vec(t * ho, -2.0, 2.0)
        } else {
            rng.vec(t * ho, 0.0, 1.0)
        };
        let n = lens.len();
        let init = with_init.then(|| rng.vec(n * shape.state_len(), -0.5, 0.5));
        let a_log = opts.safe_gate.then(|| rng.vec(ho, -1.0, 0.5));
        let dt_bias = opts.safe_gate.then(|| rng.vec(ho, -0.5, 0.5));
        Self {
            shape,
            opts,
            q,
            k,
            v,
            g,
            beta,
            cu,
            init,
            a_log,
            dt_bias,
        }
    }

    /// Tokens `[lo, hi)` of this problem as a one-sequence problem starting from `init` (the
    /// per-head parameters kept).
    fn tokens(&self, lo: usize, hi: usize, init: Vec<f64>) -> Self {
        let sh = self.shape;
        let (ho, kd, vd) = (sh.ho(), sh.k, sh.v);
        Self {
            shape: sh,
            opts: self.opts,
            q: self.q[lo * sh.h * kd..hi * sh.h * kd].to_vec(),
            k: self.k[lo * sh.hk * kd..hi * sh.hk * kd].to_vec(),
            v: self.v[lo * sh.hv * vd..hi * sh.hv * vd].to_vec(),
            g: self.g[lo * ho..hi * ho].to_vec(),
            beta: self.beta[lo * ho..hi * ho].to_vec(),
            cu: vec![0, hi - lo],
            init: Some(init),
            a_log: self.a_log.clone(),
            dt_bias: self.dt_bias.clone(),
        }
    }

    fn inputs(&self) -> GdnInputs<'_> {
        GdnInputs {
            q: &self.q,
            k: &self.k,
            v: &self.v,
            g: &self.g,
            beta: &self.beta,
            cu_seqlens: &self.cu,
            initial_state: self.init.as_deref(),
            state_indices: None,
            a_log: self.a_log.as_deref(),
            dt_bias: self.dt_bias.as_deref(),
        }
    }
}

fn weights(seed: u64, n: usize) -> Vec<f64> {
    Rng(seed).vec(n, -1.0, 1.0)
}

fn loss(p: &Problem, wo: &[f64], ws: &[f64]) -> f64 {
    let f = reference::forward(&p.shape, &p.opts, &p.inputs());
    f.o.iter().zip(wo).map(|(a, b)| a * b).sum::<f64>()
        + f.final_state
            .iter()
            .zip(ws)
            .map(|(a, b)| a * b)
            .sum::<f64>()
}

/// Compares the analytic gradient of every input against central differences.
fn check_gradients(p: &mut Problem, label: &str) {
    let t = *p.cu.last().unwrap();
    let wo = weights(101, t * p.shape.ho() * p.shape.v);
    let ws = weights(202, (p.cu.len() - 1) * p.shape.state_len());
    let gr = reference::backward(&p.shape, &p.opts, &p.inputs(), &wo, Some(&ws));
    let eps = 1e-6;
    let mut fields: Vec<(&str, Vec<f64>)> = vec![
        ("q", gr.dq.clone()),
        ("k", gr.dk.clone()),
        ("v", gr.dv.clone()),
        ("g", gr.dg.clone()),
        ("beta", gr.dbeta.clone()),
    ];
    if let Some(d) = gr.d_initial_state.clone() {
        fields.push(("initial_state", d));
    }
    if let Some(d) = gr.d_a_log.clone() {
        fields.push(("a_log", d));
    }
    if let Some(d) = gr.d_dt_bias.clone() {
        fields.push(("dt_bias", d));
    }
    for (name, analytic) in fields {
        let mut numeric = vec![0.0; analytic.len()];
        for (i, num) in numeric.iter_mut().enumerate() {
            let orig = get(p, name, i);
            set(p, name, i, orig + eps);
            let lp = loss(p, &wo, &ws);
            set(p, name, i, orig - eps);
            let lm = loss(p, &wo, &ws);
            set(p, name, i, orig);
            *num = (lp - lm) / (2.0 * eps);
        }
        let err = rms_ratio(&analytic, &numeric);
        assert!(
            err < 1e-6,
            "{label}: d{name} vs finite differences: rms ratio {err:e}"
        );
        assert!(
            numeric.iter().any(|x| x.abs() > 1e-8),
            "{label}: d{name} is identically zero"
        );
    }
}

fn get(p: &Problem, name: &str, i: usize) -> f64 {
    match name {
        "q" => p.q[i],
        "k" => p.k[i],
        "v" => p.v[i],
        "g" => p.g[i],
        "beta" => p.beta[i],
        "initial_state" => p.init.as_ref().unwrap()[i],
        "a_log" => p.a_log.as_ref().unwrap()[i],
        _ => p.dt_bias.as_ref().unwrap()[i],
    }
}

fn set(p: &mut Problem, name: &str, i: usize, val: f64) {
    match name {
        "q" => p.q[i] = val,
        "k" => p.k[i] = val,
        "v" => p.v[i] = val,
        "g" => p.g[i] = val,
        "beta" => p.beta[i] = val,
        "initial_state" => p.init.as_mut().unwrap()[i] = val,
        "a_log" => p.a_log.as_mut().unwrap()[i] = val,
        _ => p.dt_bias.as_mut().unwrap()[i] = val,
    }
}

fn shape(h: usize, hk: usize, hv: usize, k: usize, v: usize) -> GdnShape {
    GdnShape { h, hk, hv, k, v }
}

#[test]
fn backward_matches_finite_differences_plain_log_gate() {
    let mut p = Problem::new(
        1,
        shape(2, 2, 2, 4, 3),
        GdnOptions::default(),
        &[3, 0, 5],
        true,
    );
    check_gradients(&mut p, "log gate");
}

#[test]
fn backward_matches_finite_differences_linear_gate_scale() {
    let opts = GdnOptions {
        gate_domain: GateDomain::Linear,
        scale: Some(0.5),
        ..Default::default()
    };
    let mut p = Problem::new(2, shape(1, 1, 1, 3, 4), opts, &[6, 2], true);
    check_gradients(&mut p, "linear gate");
}

#[test]
fn backward_matches_finite_differences_safe_gate_sigmoid_beta() {
    let opts = GdnOptions {
        safe_gate: true,
        use_beta_sigmoid: true,
        allow_neg_eigval: true,
        ..Default::default()
    };
    let mut p = Problem::new(3, shape(1, 1, 2, 3, 3), opts, &[4, 3], true);
    check_gradients(&mut p, "safe gate");
}

#[test]
fn backward_matches_finite_differences_l2norm_gqa() {
    // GQA: H > HV, v and k (HK == HV) shared by two q heads.
    let opts = GdnOptions {
        use_qk_l2norm: true,
        use_beta_sigmoid: true,
        scale: Some(1.0),
        ..Default::default()
    };
    let mut p = Problem::new(4, shape(4, 2, 2, 3, 2), opts, &[2, 5], true);
    check_gradients(&mut p, "l2norm gqa");
    // GVA: HV > H, q/k shared by two v heads; no initial state.
    let mut p = Problem::new(5, shape(1, 1, 2, 4, 3), opts, &[0, 5], false);
    check_gradients(&mut p, "l2norm gva");
}

#[test]
fn backward_matches_finite_differences_across_recompute_blocks() {
    // 70 tokens cross the reference's 64-token recompute block.
    let mut p = Problem::new(6, shape(1, 1, 1, 2, 2), GdnOptions::default(), &[70], true);
    check_gradients(&mut p, "long sequence");
}

#[test]
fn chunked_forward_matches_per_token() {
    let cases: Vec<(GdnShape, GdnOptions, Vec<usize>, bool)> = vec![
        (
            shape(2, 2, 2, 16, 8),
            GdnOptions::default(),
            vec![1, 15, 16, 17, 0, 33],
            true,
        ),
        (
            shape(1, 1, 2, 8, 16),
            GdnOptions {
                use_qk_l2norm: true,
                safe_gate: true,
                ..Default::default()
            },
            vec![64, 65, 127],
            true,
        ),
        (
            shape(4, 4, 2, 8, 8),
            GdnOptions {
                gate_domain: GateDomain::Linear,
                use_beta_sigmoid: true,
                scale: Some(0.5),
                ..Default::default()
            },
            vec![63, 0, 130],
            false,
        ),
    ];
    for (i, (sh, opts, lens, init)) in cases.into_iter().enumerate() {
        let p = Problem::new(10 + i as u64, sh, opts, &lens, init);
        let r = reference::forward(&p.shape, &p.opts, &p.inputs());
        for chunk in [16, 64] {
            let c = chunked::forward(&p.shape, &p.opts, &p.inputs(), chunk);
            let eo = rms_ratio(&c.o, &r.o);
            let es = rms_ratio(&c.final_state, &r.final_state);
            assert!(
                eo < 1e-10 && es < 1e-10,
                "case {i} chunk {chunk}: o {eo:e}, state {es:e}"
            );
        }
    }
}

#[test]
fn empty_sequence_passes_state_through() {
    let p = Problem::new(
        20,
        shape(1, 1, 1, 4, 4),
        GdnOptions::default(),
        &[3, 0, 2],
        true,
    );
    let f = reference::forward(&p.shape, &p.opts, &p.inputs());
    let sl = p.shape.state_len();
    assert_eq!(
        &f.final_state[sl..2 * sl],
        &p.init.as_ref().unwrap()[sl..2 * sl]
    );
    let c = chunked::forward(&p.shape, &p.opts, &p.inputs(), 64);
    assert_eq!(
        &c.final_state[sl..2 * sl],
        &p.init.as_ref().unwrap()[sl..2 * sl]
    );
}

#[test]
fn state_chaining_equals_one_run() {
    let sh = shape(2, 1, 2, 8, 4);
    let opts = GdnOptions {
        use_qk_l2norm: true,
        ..Default::default()
    };
    let whole = Problem::new(30, sh, opts, &[50], true);
    let full = reference::forward(&sh, &opts, &whole.inputs());
    let split = 21;
    let (ho, vd) = (sh.ho(), sh.v);
    let part = |lo: usize, hi: usize, init: Vec<f64>| whole.tokens(lo, hi, init);
    let first = part(0, split, whole.init.clone().unwrap());
    let f1 = reference::forward(&sh, &opts, &first.inputs());
    let second = part(split, 50, f1.final_state.clone());
    let f2 = reference::forward(&sh, &opts, &second.inputs());
    let mut o = f1.o.clone();
    o.extend_from_slice(&f2.o);
    assert!(rms_ratio(&o, &full.o) < 1e-13);
    assert!(rms_ratio(&f2.final_state, &full.final_state) < 1e-13);
    // The backward chains the same way: d_initial_state of the second half is the
    // d_final_state of the first.
    let wo = weights(7, full.o.len());
    let ws = weights(8, full.final_state.len());
    let gfull = reference::backward(&sh, &opts, &whole.inputs(), &wo, Some(&ws));
    let g2 = reference::backward(
        &sh,
        &opts,
        &second.inputs(),
        &wo[split * ho * vd..],
        Some(&ws),
    );
    let g1 = reference::backward(
        &sh,
        &opts,
        &first.inputs(),
        &wo[..split * ho * vd],
        g2.d_initial_state.as_deref(),
    );
    let mut dq = g1.dq.clone();
    dq.extend_from_slice(&g2.dq);
    assert!(rms_ratio(&dq, &gfull.dq) < 1e-12);
    let dis = g1.d_initial_state.unwrap();
    assert!(rms_ratio(&dis, gfull.d_initial_state.as_ref().unwrap()) < 1e-12);
}

#[test]
fn state_pool_reads_indexed_rows() {
    let sh = shape(1, 1, 1, 4, 4);
    let p = Problem::new(40, sh, GdnOptions::default(), &[3, 5], true);
    let sl = sh.state_len();
    let packed = p.init.clone().unwrap();
    // Pool of 4 rows; sequence 0 reads row 3, sequence 1 reads row 1.
    let mut pool = vec![f64::NAN; 4 * sl];
    pool[3 * sl..4 * sl].copy_from_slice(&packed[..sl]);
    pool[sl..2 * sl].copy_from_slice(&packed[sl..]);
    let idx = [3usize, 1];
    let mut inp = p.inputs();
    let direct = reference::forward(&sh, &p.opts, &inp);
    inp.initial_state = Some(&pool);
    inp.state_indices = Some(&idx);
    let pooled = reference::forward(&sh, &p.opts, &inp);
    assert_eq!(direct, pooled);
}

#[test]
fn chunked_backward_matches_per_token() {
    let cases: Vec<(GdnShape, GdnOptions, Vec<usize>, bool)> = vec![
        (
            shape(2, 2, 2, 8, 6),
            GdnOptions::default(),
            vec![1, 15, 16, 17, 0, 33],
            true,
        ),
        (
            shape(1, 1, 2, 6, 8),
            GdnOptions {
                use_qk_l2norm: true,
                safe_gate: true,
                use_beta_sigmoid: true,
                ..Default::default()
            },
            vec![64, 65, 70],
            true,
        ),
        (
            shape(4, 2, 2, 8, 4),
            GdnOptions {
                gate_domain: GateDomain::Linear,
                use_beta_sigmoid: true,
                allow_neg_eigval: true,
                scale: Some(0.5),
                ..Default::default()
            },
            vec![63, 0, 68],
            false,
        ),
    ];
    for (ci, (sh, opts, lens, init)) in cases.into_iter().enumerate() {
        let p = Problem::new(50 + ci as u64, sh, opts, &lens, init);
        let t = *p.cu.last().unwrap();
        let wo = weights(60 + ci as u64, t * sh.ho() * sh.v);
        let ws = weights(70 + ci as u64, lens.len() * sh.state_len());
        let r = reference::backward(&sh, &opts, &p.inputs(), &wo, Some(&ws));
        for chunk in [16, 64] {
            let chunked_run = chunked::backward(&sh, &opts, &p.inputs(), &wo, Some(&ws), chunk);
            let staged_run = staged::backward(&sh, &opts, &p.inputs(), &wo, Some(&ws), chunk);
            for (what, c) in [("chunked", &chunked_run), ("staged", &staged_run)] {
                let pairs = [
                    ("dq", &c.dq, &r.dq),
                    ("dk", &c.dk, &r.dk),
                    ("dv", &c.dv, &r.dv),
                    ("dg", &c.dg, &r.dg),
                    ("dbeta", &c.dbeta, &r.dbeta),
                ];
                for (name, a, b) in pairs {
                    let e = rms_ratio(a, b);
                    assert!(
                        e < 1e-9,
                        "{what} case {ci} chunk {chunk}: {name} rms ratio {e:e}"
                    );
                }
                for (name, a, b) in [
                    ("d_initial_state", &c.d_initial_state, &r.d_initial_state),
                    ("d_a_log", &c.d_a_log, &r.d_a_log),
                    ("d_dt_bias", &c.d_dt_bias, &r.d_dt_bias),
                ] {
                    assert_eq!(a.is_some(), b.is_some(), "case {ci}: {name} presence");
                    if let (Some(a), Some(b)) = (a, b) {
                        let e = rms_ratio(a, b);
                        assert!(
                            e < 1e-9,
                            "{what} case {ci} chunk {chunk}: {name} rms ratio {e:e}"
                        );
                    }
                }
            }
        }
    }
}

#[test]
fn piece_chain_equals_the_uncut_run() {
    let sh = shape(2, 2, 2, 8, 6);
    let opts = GdnOptions {
        use_qk_l2norm: true,
        use_beta_sigmoid: true,
        ..Default::default()
    };
    let p = Problem::new(80, sh, opts, &[300, 0, 17, 129, 64], true);
    let r = reference::forward(&sh, &opts, &p.inputs());
    for (chunk, pieces) in [(16, 1), (16, 3), (64, 2), (64, 5), (16, 40)] {
        let c = chunked::forward_piece_chain(&sh, &opts, &p.inputs(), chunk, pieces);
        let eo = rms_ratio(&c.o, &r.o);
        let es = rms_ratio(&c.final_state, &r.final_state);
        assert!(
            eo < 1e-10 && es < 1e-10,
            "chunk {chunk} pieces {pieces}: o {eo:e}, state {es:e}"
        );
    }
    assert_eq!(chunked::piece_spans(130, 64, 2), vec![(0, 128), (128, 130)]);
    assert_eq!(chunked::piece_spans(0, 64, 3), vec![(0, 0), (0, 0), (0, 0)]);
}

#[test]
fn backward_piece_chain_equals_the_uncut_backward() {
    // Ragged batch with an empty sequence, 1- and 17-token sequences (partial single chunks),
    // 129 (a partial last chunk), 64 and 128 (piece boundaries on the sequence end), with
    // piece counts whose boundaries fall on and off chunk multiples of the lengths, and more
    // pieces than chunks (empty trailing pieces).
    let cases: Vec<(GdnShape, GdnOptions, Vec<usize>, bool, bool)> = vec![
        (
            shape(2, 2, 2, 8, 6),
            GdnOptions {
                use_qk_l2norm: true,
                use_beta_sigmoid: true,
                ..Default::default()
            },
            vec![300, 0, 17, 129, 64, 1, 128],
            true,
            true,
        ),
        (
            shape(1, 1, 2, 6, 8),
            GdnOptions {
                safe_gate: true,
                ..Default::default()
            },
            vec![0, 200, 65],
            true,
            false,
        ),
        (
            shape(2, 2, 2, 4, 4),
            GdnOptions {
                gate_domain: GateDomain::Linear,
                scale: Some(0.5),
                ..Default::default()
            },
            vec![96, 33],
            false,
            true,
        ),
    ];
    for (ci, (sh, opts, lens, init, with_dfs)) in cases.into_iter().enumerate() {
        let p = Problem::new(90 + ci as u64, sh, opts, &lens, init);
        let t = *p.cu.last().unwrap();
        let wo = weights(91 + ci as u64, t * sh.ho() * sh.v);
        let ws = weights(92 + ci as u64, lens.len() * sh.state_len());
        let dfs = with_dfs.then_some(ws.as_slice());
        for (chunk, pieces) in [(16, 1), (16, 2), (16, 3), (64, 2), (64, 5), (16, 40)] {
            let uncut = chunked::backward(&sh, &opts, &p.inputs(), &wo, dfs, chunk);
            let cut =
                chunked::backward_piece_chain(&sh, &opts, &p.inputs(), &wo, dfs, chunk, pieces);
            let pairs = [
                ("dq", &cut.dq, &uncut.dq),
                ("dk", &cut.dk, &uncut.dk),
                ("dv", &cut.dv, &uncut.dv),
                ("dg", &cut.dg, &uncut.dg),
                ("dbeta", &cut.dbeta, &uncut.dbeta),
            ];
            for (name, a, b) in pairs {
                let e = rms_ratio(a, b);
                assert!(
                    e < 1e-9,
                    "case {ci} chunk {chunk} pieces {pieces}: {name} {e:e}"
                );
            }
            for (name, a, b) in [
                (
                    "d_initial_state",
                    &cut.d_initial_state,
                    &uncut.d_initial_state,
                ),
                ("d_a_log", &cut.d_a_log, &uncut.d_a_log),
                ("d_dt_bias", &cut.d_dt_bias, &uncut.d_dt_bias),
            ] {
                assert_eq!(a.is_some(), b.is_some(), "case {ci}: {name} presence");
                if let (Some(a), Some(b)) = (a, b) {
                    let e = rms_ratio(a, b);
                    assert!(
                        e < 1e-9,
                        "case {ci} chunk {chunk} pieces {pieces}: {name} {e:e}"
                    );
                }
            }
        }
    }
}

#[test]
fn transition_matches_the_identity_trick() {
    // M_buf of a sequence equals the final state of a run with v = 0, V = K and
    // initial_state = I (spec §4.2); H equals the final state from a zero seed.
    let kd = 6;
    let sh = shape(1, 1, 1, kd, kd);
    let opts = GdnOptions {
        safe_gate: true,
        ..Default::default()
    };
    let p = Problem::new(90, sh, opts, &[70, 0, 33], false);
    let sums = chunked::sequence_summaries(&sh, &opts, &p.inputs(), 16);
    let zeros = vec![0.0; p.v.len()];
    let mut eye = vec![0.0; 3 * kd * kd];
    for s in 0..3 {
        for i in 0..kd {
            eye[s * kd * kd + i * kd + i] = 1.0;
        }
    }
    let mut inp = p.inputs();
    inp.v = &zeros;
    inp.initial_state = Some(&eye);
    let trick = reference::forward(&sh, &opts, &inp);
    let h_ref = reference::forward(&sh, &opts, &p.inputs());
    for (s, sum) in sums.iter().enumerate() {
        let m_trick = &trick.final_state[s * kd * kd..(s + 1) * kd * kd];
        assert!(rms_ratio(&sum.m, m_trick) < 1e-10, "sequence {s}: M");
        assert!(
            rms_ratio(&sum.h, &h_ref.final_state[s * kd * kd..(s + 1) * kd * kd]) < 1e-10,
            "sequence {s}: H"
        );
    }
    // The empty sequence: M = I exactly, H = 0.
    assert_eq!(sums[1], chunked::SpanSummary::identity(kd, kd));
}

#[test]
fn checkpoint_rows_are_the_states_of_the_prefixes() {
    // Row j of sequence b = the final state of sequence b cut to its first j·every tokens (from
    // the same initial state); a ragged batch with an empty sequence and partial blocks.
    let sh = shape(2, 2, 2, 8, 4);
    let opts = GdnOptions::default();
    let lens = [9, 0, 17, 8, 1];
    let every = 4;
    let whole = Problem::new(41, sh, opts, &lens, true);
    let (full, ckpt) = reference::forward_with_checkpoints(&sh, &opts, &whole.inputs(), every);
    assert_eq!(full, reference::forward(&sh, &opts, &whole.inputs()));
    let rows = reference::checkpoint_rows(&whole.cu, every);
    // ceil(9 / 4) + 0 + ceil(17 / 4) + ceil(8 / 4) + ceil(1 / 4).
    assert_eq!(rows, 11);
    assert_eq!(ckpt.len(), rows * sh.state_len());
    assert_eq!(reference::checkpoint_rows(&whole.cu, 0), 0);
    let sl = sh.state_len();
    let mut row = 0;
    for (b, &len) in lens.iter().enumerate() {
        let init = whole.init.as_ref().unwrap()[b * sl..(b + 1) * sl].to_vec();
        for j in 0..len.div_ceil(every) {
            let (lo, hi) = (whole.cu[b], whole.cu[b] + j * every);
            let p = whole.tokens(lo, hi, init.clone());
            let prefix = reference::forward(&sh, &opts, &p.inputs());
            assert_eq!(
                &ckpt[row * sl..(row + 1) * sl],
                &prefix.final_state[..],
                "sequence {b}, row {j}"
            );
            row += 1;
        }
    }
    assert_eq!(row, rows);
}

#[test]
fn sanitized_offsets_are_the_clamped_running_maximum() {
    // Well-formed offsets come back unchanged, leading and trailing uncovered rows included.
    for raw in [
        vec![0, 100, 100, 230, 294],
        vec![5, 5, 40],
        vec![0],
        vec![294, 294],
    ] {
        let want: Vec<usize> = raw.iter().map(|&x| x as usize).collect();
        assert_eq!(reference::sanitized_cu_seqlens(&raw, 294), want, "{raw:?}");
    }
    // Decreasing, negative and past-the-end values: min(T, max(0, raw[0..=i])).
    let cases: [(&[i64], &[usize]); 5] = [
        (&[0, 100, 90, 230, 400], &[0, 100, 100, 230, 294]),
        (
            &[-7, 100, 100, 230, i32::MAX as i64],
            &[0, 100, 100, 230, 294],
        ),
        (
            &[-(1 << 40), 100, 50, 230, 1 << 40],
            &[0, 100, 100, 230, 294],
        ),
        (&[500, 600, 3, -1], &[294, 294, 294, 294]),
        (&[i64::MIN, i64::MAX, 0], &[0, 294, 294]),
    ];
    for (raw, want) in cases {
        assert_eq!(reference::sanitized_cu_seqlens(raw, 294), want, "{raw:?}");
    }
    // Whatever the values, every sequence lies inside [0, T] and the chunk slots within T/64 + N.
    let mut rng = Rng(43);
    for n in [1usize, 2, 7, 100] {
        for t in [0usize, 1, 63, 64, 1000] {
            let raw: Vec<i64> = (0..=n)
                .map(|_| rng.uniform(-2.0 * t as f64 - 5.0, 2.0 * t as f64 + 5.0) as i64)
                .collect();
            let s = reference::sanitized_cu_seqlens(&raw, t);
            assert!(
                s.windows(2).all(|w| w[0] <= w[1]) && s[n] <= t,
                "{raw:?} -> {s:?}"
            );
            let chunks: usize = s.windows(2).map(|w| (w[1] - w[0]).div_ceil(64)).sum();
            assert!(chunks <= t / 64 + n, "{raw:?} -> {s:?}: {chunks} chunks");
        }
    }
}
