//! fp64 per-token reference of the Gated DeltaNet recurrence, forward and backward.
//!
//! Contract (spec §1.1-§3.4): token tensors are THD and row-major (`q [T,H,K]`, `k [T,HK,K]`,
//! `v [T,HV,V]`, `g [T,HO]`, `beta [T,HO]`, `o`/`dO [T,HO,V]`); sequence `i` owns rows
//! `cu_seqlens[i]..cu_seqlens[i+1]`; output head `h` reads input head `h / (HO / H_in)`;
//! states cross the boundary in the stored domain `[.., HO, V, K]` (`X = Sᵀ`). The gate,
//! beta, l2norm and scale transforms of §1.3 are applied exactly as written there, in fp64.
//! The backward is the hand-written reverse pass of §3.2 with the chain rules back to the
//! ports; tests check it against central finite differences of [`forward`].
//!
//! This is a test oracle: it is O(T·K·V) per head, allocates freely and panics on
//! inconsistent slice lengths (callers are tests and benchmarks, never the C ABI).

/// Domain of the gate input `g`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GateDomain {
    /// `α = exp(g)`.
    Log,
    /// `α = g` (kernels use `log(g + 1e-10)`).
    Linear,
}

/// Epsilon added to the linear-domain gate before the logarithm.
pub const LINEAR_GATE_EPS: f64 = 1e-10;
/// Epsilon of the in-kernel q/k L2 normalisation.
pub const L2_NORM_EPS: f64 = 1e-6;

/// Head counts and head dimensions of one GDN problem.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct GdnShape {
    /// Query heads `H`.
    pub h: usize,
    /// Key heads `HK` (must be `H` or `HV`).
    pub hk: usize,
    /// Value heads `HV`.
    pub hv: usize,
    /// Key head dimension `K`.
    pub k: usize,
    /// Value head dimension `V`.
    pub v: usize,
}

impl GdnShape {
    /// Output / gate / state heads `HO = max(H, HV)`.
    pub fn ho(&self) -> usize {
        self.h.max(self.hv)
    }

    /// Input head feeding output head `h` for an input with `heads_in` heads.
    pub fn source_head(&self, h: usize, heads_in: usize) -> usize {
        h / (self.ho() / heads_in)
    }

    /// Elements of one stored state `[HO, V, K]`.
    pub fn state_len(&self) -> usize {
        self.ho() * self.v * self.k
    }
}

/// Attributes of a `gdn` / `gdn_bwd` node that change the math.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct GdnOptions {
    /// q scale; `None` means `1/sqrt(K)`.
    pub scale: Option<f64>,
    /// In-kernel L2 normalisation of q and k rows.
    pub use_qk_l2norm: bool,
    /// `beta` is a logit: `β = sigmoid(beta)`.
    pub use_beta_sigmoid: bool,
    /// `β = 2·sigmoid(beta)` (requires `use_beta_sigmoid`).
    pub allow_neg_eigval: bool,
    /// `g` is a raw logit: `log α = −exp(a_log)·softplus(g + dt_bias)`.
    pub safe_gate: bool,
    /// Domain of `g` when `safe_gate` is off.
    pub gate_domain: GateDomain,
}

impl Default for GdnOptions {
    fn default() -> Self {
        Self {
            scale: None,
            use_qk_l2norm: false,
            use_beta_sigmoid: false,
            allow_neg_eigval: false,
            safe_gate: false,
            gate_domain: GateDomain::Log,
        }
    }
}

impl GdnOptions {
    /// The effective q scale for head dimension `k`.
    pub fn effective_scale(&self, k: usize) -> f64 {
        self.scale.unwrap_or(1.0 / (k as f64).sqrt())
    }
}

/// Borrowed forward inputs (all fp64, THD row-major).
#[derive(Clone, Copy, Debug)]
pub struct GdnInputs<'a> {
    /// `[T, H, K]`.
    pub q: &'a [f64],
    /// `[T, HK, K]`.
    pub k: &'a [f64],
    /// `[T, HV, V]`.
    pub v: &'a [f64],
    /// `[T, HO]`.
    pub g: &'a [f64],
    /// `[T, HO]`.
    pub beta: &'a [f64],
    /// `[N + 1]`, non-decreasing, starting at 0.
    pub cu_seqlens: &'a [usize],
    /// `[N, HO, V, K]`, or `[N_pool, HO, V, K]` with `state_indices`.
    pub initial_state: Option<&'a [f64]>,
    /// `[N]`: pool row of each sequence's initial state.
    pub state_indices: Option<&'a [usize]>,
    /// `[HO]` (only with `safe_gate`).
    pub a_log: Option<&'a [f64]>,
    /// `[HO]` (only with `safe_gate`).
    pub dt_bias: Option<&'a [f64]>,
}

impl GdnInputs<'_> {
    /// Number of sequences `N`.
    pub fn num_seqs(&self) -> usize {
        self.cu_seqlens.len() - 1
    }

    /// Total tokens `T`.
    pub fn total_tokens(&self) -> usize {
        *self.cu_seqlens.last().unwrap_or(&0)
    }
}

/// Forward results.
#[derive(Clone, Debug, PartialEq)]
pub struct GdnForward {
    /// `[T, HO, V]`.
    pub o: Vec<f64>,
    /// `[N, HO, V, K]` (one row per sequence, also under `state_indices`).
    pub final_state: Vec<f64>,
}

/// Backward results: gradients w.r.t. what the caller passed.
#[derive(Clone, Debug, PartialEq)]
pub struct GdnGrads {
    /// Like q.
    pub dq: Vec<f64>,
    /// Like k.
    pub dk: Vec<f64>,
    /// Like v.
    pub dv: Vec<f64>,
    /// Like g.
    pub dg: Vec<f64>,
    /// Like beta.
    pub dbeta: Vec<f64>,
    /// `[N, HO, V, K]` iff `initial_state` was given.
    pub d_initial_state: Option<Vec<f64>>,
    /// `[HO]` iff `a_log` was given.
    pub d_a_log: Option<Vec<f64>>,
    /// `[HO]` iff `dt_bias` was given.
    pub d_dt_bias: Option<Vec<f64>>,
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

fn softplus(x: f64) -> f64 {
    if x > 20.0 { x } else { x.exp().ln_1p() }
}

/// One token's effective scalars for one output head (§1.3).
#[derive(Clone, Copy, Debug)]
pub(crate) struct TokenGate {
    pub log_alpha: f64,
    pub alpha: f64,
    pub beta: f64,
}

/// Applies the gate and beta transforms for output head `h` at token `t`.
pub(crate) fn token_gate(
    opts: &GdnOptions,
    inp: &GdnInputs,
    ho: usize,
    t: usize,
    h: usize,
) -> TokenGate {
    let g = inp.g[t * ho + h];
    let log_alpha = if opts.safe_gate {
        let ea = inp.a_log.map_or(1.0, |a| a[h].exp());
        let b = inp.dt_bias.map_or(0.0, |b| b[h]);
        -ea * softplus(g + b)
    } else {
        match opts.gate_domain {
            GateDomain::Log => g,
            GateDomain::Linear => (g + LINEAR_GATE_EPS).ln(),
        }
    };
    let alpha = match (opts.safe_gate, opts.gate_domain) {
        (false, GateDomain::Linear) => g + LINEAR_GATE_EPS,
        _ => log_alpha.exp(),
    };
    let raw = inp.beta[t * ho + h];
    let beta = if opts.use_beta_sigmoid {
        let c = if opts.allow_neg_eigval { 2.0 } else { 1.0 };
        c * sigmoid(raw)
    } else {
        raw
    };
    TokenGate {
        log_alpha,
        alpha,
        beta,
    }
}

/// Returns `(x·r, r)` with `r = (Σx² + ε)^{-½}` when `l2norm`, else `(x, 1)`.
fn normalize(x: &[f64], l2norm: bool) -> (Vec<f64>, f64) {
    if !l2norm {
        return (x.to_vec(), 1.0);
    }
    let r = 1.0 / (x.iter().map(|a| a * a).sum::<f64>() + L2_NORM_EPS).sqrt();
    (x.iter().map(|a| a * r).collect(), r)
}

/// The transformed per-token operands of one (sequence, output head).
pub(crate) struct PreparedHead {
    /// `scale · q̂_t` per token (`[len][K]`).
    pub q: Vec<Vec<f64>>,
    /// `k̂_t` per token.
    pub k: Vec<Vec<f64>>,
    /// `v_t` per token.
    pub v: Vec<Vec<f64>>,
    /// Gates per token.
    pub gate: Vec<TokenGate>,
    /// `r` of the q normalisation per token.
    pub q_rnorm: Vec<f64>,
    /// `r` of the k normalisation per token.
    pub k_rnorm: Vec<f64>,
    /// Initial state in the math domain, `S[k][v]`.
    pub s0: Vec<f64>,
}

pub(crate) fn prepare_head(
    shape: &GdnShape,
    opts: &GdnOptions,
    inp: &GdnInputs,
    seq: usize,
    h: usize,
) -> PreparedHead {
    let (kd, vd, ho) = (shape.k, shape.v, shape.ho());
    let scale = opts.effective_scale(kd);
    let (qh, kh, vh) = (
        shape.source_head(h, shape.h),
        shape.source_head(h, shape.hk),
        shape.source_head(h, shape.hv),
    );
    let (start, end) = (inp.cu_seqlens[seq], inp.cu_seqlens[seq + 1]);
    let mut p = PreparedHead {
        q: Vec::new(),
        k: Vec::new(),
        v: Vec::new(),
        gate: Vec::new(),
        q_rnorm: Vec::new(),
        k_rnorm: Vec::new(),
        s0: vec![0.0; kd * vd],
    };
    for t in start..end {
        let qrow = &inp.q[(t * shape.h + qh) * kd..][..kd];
        let krow = &inp.k[(t * shape.hk + kh) * kd..][..kd];
        let (qn, qr) = normalize(qrow, opts.use_qk_l2norm);
        let (kn, kr) = normalize(krow, opts.use_qk_l2norm);
        p.q.push(qn.iter().map(|x| x * scale).collect());
        p.k.push(kn);
        p.v.push(inp.v[(t * shape.hv + vh) * vd..][..vd].to_vec());
        p.gate.push(token_gate(opts, inp, ho, t, h));
        p.q_rnorm.push(qr);
        p.k_rnorm.push(kr);
    }
    if let Some(init) = inp.initial_state {
        let row = inp.state_indices.map_or(seq, |idx| idx[seq]);
        let x = &init[(row * ho + h) * vd * kd..][..vd * kd];
        for vi in 0..vd {
            for ki in 0..kd {
                p.s0[ki * vd + vi] = x[vi * kd + ki];
            }
        }
    }
    p
}

/// One token's forward step on `s` (math domain `[K][V]`); returns `o_t = Sᵀ q`.
fn step(
    s: &mut [f64],
    q: &[f64],
    k: &[f64],
    v: &[f64],
    gate: TokenGate,
    kd: usize,
    vd: usize,
) -> Vec<f64> {
    for x in s.iter_mut() {
        *x *= gate.alpha;
    }
    let mut r = v.to_vec();
    for ki in 0..kd {
        for vi in 0..vd {
            r[vi] -= s[ki * vd + vi] * k[ki];
        }
    }
    for ki in 0..kd {
        let bk = gate.beta * k[ki];
        for vi in 0..vd {
            s[ki * vd + vi] += bk * r[vi];
        }
    }
    let mut o = vec![0.0; vd];
    for ki in 0..kd {
        for vi in 0..vd {
            o[vi] += s[ki * vd + vi] * q[ki];
        }
    }
    o
}

fn store_state(dst: &mut [f64], s: &[f64], kd: usize, vd: usize) {
    for vi in 0..vd {
        for ki in 0..kd {
            dst[vi * kd + ki] = s[ki * vd + vi];
        }
    }
}

/// Runs the per-token forward recurrence (§3.1) over every sequence and output head.
pub fn forward(shape: &GdnShape, opts: &GdnOptions, inp: &GdnInputs) -> GdnForward {
    forward_with_checkpoints(shape, opts, inp, 0).0
}

/// The sequence offsets the engine runs for the caller's `cu_seqlens` values `raw` over `total`
/// token rows: `min(total, max(0, raw[0], ..., raw[i]))` for every `i` (session 43; the device's
/// `gdn::cu_sanitize_body`, [`super::params::CuSource`]). Well-formed offsets
/// (`0 <= raw[0] <= ... <= raw[N] <= total`) come back unchanged; any others become offsets that
/// stay inside the tensors, so a malformed call computes these sequences instead of addressing
/// memory outside the caller's buffers.
pub fn sanitized_cu_seqlens(raw: &[i64], total: usize) -> Vec<usize> {
    let mut run = 0usize;
    raw.iter()
        .map(|&x| {
            run = run.max(usize::try_from(x.max(0)).unwrap_or(usize::MAX).min(total));
            run
        })
        .collect()
}

/// Rows of the state checkpoints every `every` tokens (§3.4): `Σ_b ceil(T_b / every)` (0 when
/// `every = 0`).
pub fn checkpoint_rows(cu_seqlens: &[usize], every: usize) -> usize {
    if every == 0 {
        return 0;
    }
    cu_seqlens
        .windows(2)
        .map(|w| (w[1] - w[0]).div_ceil(every))
        .sum()
}

/// [`forward`] and the state series at cadence `every` tokens (§3.4; `every = 0`: none):
/// `[checkpoint_rows, HO, V, K]` in the stored domain, row `j` of sequence `b` (rows of sequence
/// `b` from `Σ_{b'<b} ceil(T_b'/every)`) the state before token `j·every` of that sequence
/// (row 0: the initial state or zero).
pub fn forward_with_checkpoints(
    shape: &GdnShape,
    opts: &GdnOptions,
    inp: &GdnInputs,
    every: usize,
) -> (GdnForward, Vec<f64>) {
    let (kd, vd, ho) = (shape.k, shape.v, shape.ho());
    let n = inp.num_seqs();
    let mut out = GdnForward {
        o: vec![0.0; inp.total_tokens() * ho * vd],
        final_state: vec![0.0; n * shape.state_len()],
    };
    let mut ckpt = vec![0.0; checkpoint_rows(inp.cu_seqlens, every) * ho * vd * kd];
    let mut row0 = 0;
    for seq in 0..n {
        let start = inp.cu_seqlens[seq];
        for h in 0..ho {
            let p = prepare_head(shape, opts, inp, seq, h);
            let mut s = p.s0.clone();
            for i in 0..p.k.len() {
                if every > 0 && i % every == 0 {
                    let row = row0 + i / every;
                    store_state(&mut ckpt[(row * ho + h) * vd * kd..][..vd * kd], &s, kd, vd);
                }
                let o = step(&mut s, &p.q[i], &p.k[i], &p.v[i], p.gate[i], kd, vd);
                out.o[((start + i) * ho + h) * vd..][..vd].copy_from_slice(&o);
            }
            store_state(
                &mut out.final_state[(seq * ho + h) * vd * kd..][..vd * kd],
                &s,
                kd,
                vd,
            );
        }
        if every > 0 {
            row0 += (inp.cu_seqlens[seq + 1] - start).div_ceil(every);
        }
    }
    (out, ckpt)
}

/// Tokens between stored states in the backward's recompute.
const RECOMPUTE_BLOCK: usize = 64;

/// Reverse pass (§3.2): gradients of `Σ dO·O + Σ d_final_state·final_state` w.r.t. every
/// differentiable input. `d_o` is `[T, HO, V]`; `d_final_state` is `[N, HO, V, K]`.
pub fn backward(
    shape: &GdnShape,
    opts: &GdnOptions,
    inp: &GdnInputs,
    d_o: &[f64],
    d_final_state: Option<&[f64]>,
) -> GdnGrads {
    let (kd, vd, ho) = (shape.k, shape.v, shape.ho());
    let n = inp.num_seqs();
    let mut gr = GdnGrads::zeros(shape, inp);
    for seq in 0..n {
        let start = inp.cu_seqlens[seq];
        for h in 0..ho {
            let p = prepare_head(shape, opts, inp, seq, h);
            let len = p.k.len();
            // Forward checkpoints: state before token `b * RECOMPUTE_BLOCK`.
            let mut checkpoints = Vec::new();
            let mut s = p.s0.clone();
            for i in 0..len {
                if i % RECOMPUTE_BLOCK == 0 {
                    checkpoints.push(s.clone());
                }
                step(&mut s, &p.q[i], &p.k[i], &p.v[i], p.gate[i], kd, vd);
            }
            let mut ds = vec![0.0; kd * vd];
            if let Some(dfs) = d_final_state {
                let x = &dfs[(seq * ho + h) * vd * kd..][..vd * kd];
                for vi in 0..vd {
                    for ki in 0..kd {
                        ds[ki * vd + vi] = x[vi * kd + ki];
                    }
                }
            }
            for (b, ckpt) in checkpoints.iter().enumerate().rev() {
                let b0 = b * RECOMPUTE_BLOCK;
                let b1 = (b0 + RECOMPUTE_BLOCK).min(len);
                // states[j] = S before token b0 + j.
                let mut states = vec![ckpt.clone()];
                for i in b0..b1 {
                    let mut next = states.last().cloned().unwrap_or_default();
                    step(&mut next, &p.q[i], &p.k[i], &p.v[i], p.gate[i], kd, vd);
                    states.push(next);
                }
                for i in (b0..b1).rev() {
                    let t = start + i;
                    let s_prev = &states[i - b0];
                    let s_t = &states[i - b0 + 1];
                    let (q, k, v, gate) = (&p.q[i], &p.k[i], &p.v[i], p.gate[i]);
                    let dov = &d_o[(t * ho + h) * vd..][..vd];
                    // Readout o = S_tᵀ q.
                    let mut dq = vec![0.0; kd];
                    for ki in 0..kd {
                        for vi in 0..vd {
                            ds[ki * vd + vi] += q[ki] * dov[vi];
                            dq[ki] += s_t[ki * vd + vi] * dov[vi];
                        }
                    }
                    // S_t = S̃ + β k rᵀ, r = v − S̃ᵀ k, S̃ = α S_prev.
                    let st: Vec<f64> = s_prev.iter().map(|x| x * gate.alpha).collect();
                    let mut r = v.clone();
                    let mut du = vec![0.0; vd];
                    for ki in 0..kd {
                        for vi in 0..vd {
                            r[vi] -= st[ki * vd + vi] * k[ki];
                            du[vi] += ds[ki * vd + vi] * k[ki];
                        }
                    }
                    let dbeta: f64 = (0..vd).map(|vi| r[vi] * du[vi]).sum();
                    let dr: Vec<f64> = du.iter().map(|x| gate.beta * x).collect();
                    let mut dk = vec![0.0; kd];
                    for ki in 0..kd {
                        for vi in 0..vd {
                            dk[ki] +=
                                gate.beta * ds[ki * vd + vi] * r[vi] - st[ki * vd + vi] * dr[vi];
                        }
                    }
                    let mut dlog_alpha = 0.0;
                    for ki in 0..kd {
                        for vi in 0..vd {
                            let d = ds[ki * vd + vi] - k[ki] * dr[vi];
                            dlog_alpha += d * st[ki * vd + vi];
                            ds[ki * vd + vi] = gate.alpha * d;
                        }
                    }
                    let d = TokenGrads {
                        dq_hat: &dq,
                        dk_hat: &dk,
                        dv: &dr,
                        dlog_alpha,
                        dbeta,
                    };
                    accumulate_port_grads(shape, opts, inp, &p, &mut gr, start, i, h, &d);
                }
            }
            if let Some(dis) = gr.d_initial_state.as_mut() {
                store_state(&mut dis[(seq * ho + h) * vd * kd..][..vd * kd], &ds, kd, vd);
            }
        }
    }
    gr
}

/// Gradients of one token (one output head) w.r.t. the transformed operands: `q̂` (already
/// including `scale`), `k̂`, `v`, `log α` and the effective `β`.
pub(crate) struct TokenGrads<'a> {
    pub dq_hat: &'a [f64],
    pub dk_hat: &'a [f64],
    pub dv: &'a [f64],
    pub dlog_alpha: f64,
    pub dbeta: f64,
}

impl GdnGrads {
    /// Zeroed gradients shaped like the inputs (and the optional parameters) of `inp`.
    pub(crate) fn zeros(shape: &GdnShape, inp: &GdnInputs) -> Self {
        let n = inp.num_seqs();
        let ho = shape.ho();
        Self {
            dq: vec![0.0; inp.q.len()],
            dk: vec![0.0; inp.k.len()],
            dv: vec![0.0; inp.v.len()],
            dg: vec![0.0; inp.g.len()],
            dbeta: vec![0.0; inp.beta.len()],
            d_initial_state: inp.initial_state.map(|_| vec![0.0; n * shape.state_len()]),
            d_a_log: inp.a_log.map(|_| vec![0.0; ho]),
            d_dt_bias: inp.dt_bias.map(|_| vec![0.0; ho]),
        }
    }
}

/// Applies the §3.2 chain rules (scale, l2norm, head folds, beta sigmoid, gate transforms) to
/// token `start + i` of output head `h` and accumulates into `gr`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn accumulate_port_grads(
    shape: &GdnShape,
    opts: &GdnOptions,
    inp: &GdnInputs,
    p: &PreparedHead,
    gr: &mut GdnGrads,
    start: usize,
    i: usize,
    h: usize,
    d: &TokenGrads,
) {
    let (kd, vd, ho) = (shape.k, shape.v, shape.ho());
    let scale = opts.effective_scale(kd);
    let t = start + i;
    let (qh, kh, vh) = (
        shape.source_head(h, shape.h),
        shape.source_head(h, shape.hk),
        shape.source_head(h, shape.hv),
    );
    let dqn: Vec<f64> = d.dq_hat.iter().map(|x| x * scale).collect();
    let dq_raw = unnormalize(
        &inp.q[(t * shape.h + qh) * kd..][..kd],
        &dqn,
        p.q_rnorm[i],
        opts.use_qk_l2norm,
    );
    let dk_raw = unnormalize(
        &inp.k[(t * shape.hk + kh) * kd..][..kd],
        d.dk_hat,
        p.k_rnorm[i],
        opts.use_qk_l2norm,
    );
    add(&mut gr.dq[(t * shape.h + qh) * kd..][..kd], &dq_raw);
    add(&mut gr.dk[(t * shape.hk + kh) * kd..][..kd], &dk_raw);
    add(&mut gr.dv[(t * shape.hv + vh) * vd..][..vd], d.dv);
    let gi = t * ho + h;
    gr.dbeta[gi] = if opts.use_beta_sigmoid {
        let c = if opts.allow_neg_eigval { 2.0 } else { 1.0 };
        let sg = sigmoid(inp.beta[gi]);
        d.dbeta * c * sg * (1.0 - sg)
    } else {
        d.dbeta
    };
    let g = inp.g[gi];
    gr.dg[gi] = if opts.safe_gate {
        let ea = inp.a_log.map_or(1.0, |a| a[h].exp());
        let x = g + inp.dt_bias.map_or(0.0, |b| b[h]);
        let dg = d.dlog_alpha * (-ea) * sigmoid(x);
        if let Some(da) = gr.d_a_log.as_mut() {
            da[h] += d.dlog_alpha * p.gate[i].log_alpha;
        }
        if let Some(db) = gr.d_dt_bias.as_mut() {
            db[h] += dg;
        }
        dg
    } else {
        match opts.gate_domain {
            GateDomain::Log => d.dlog_alpha,
            GateDomain::Linear => d.dlog_alpha / (g + LINEAR_GATE_EPS),
        }
    };
}

/// Writes the math-domain `s` (`[K][V]`) of (sequence, head) into a stored-domain buffer.
pub(crate) fn store_state_at(dst: &mut [f64], seq: usize, h: usize, shape: &GdnShape, s: &[f64]) {
    let (kd, vd, ho) = (shape.k, shape.v, shape.ho());
    store_state(&mut dst[(seq * ho + h) * vd * kd..][..vd * kd], s, kd, vd);
}

/// Reads a stored-domain `[N, HO, V, K]` row into the math domain `[K][V]`.
pub(crate) fn load_state_at(src: &[f64], seq: usize, h: usize, shape: &GdnShape) -> Vec<f64> {
    let (kd, vd, ho) = (shape.k, shape.v, shape.ho());
    let x = &src[(seq * ho + h) * vd * kd..][..vd * kd];
    let mut s = vec![0.0; kd * vd];
    for vi in 0..vd {
        for ki in 0..kd {
            s[ki * vd + vi] = x[vi * kd + ki];
        }
    }
    s
}

/// Maps the gradient w.r.t. a normalised row back to the raw row: `r (dy − y (y·dy))`.
fn unnormalize(raw: &[f64], dy: &[f64], r: f64, l2norm: bool) -> Vec<f64> {
    if !l2norm {
        return dy.to_vec();
    }
    let y: Vec<f64> = raw.iter().map(|x| x * r).collect();
    let ydy: f64 = y.iter().zip(dy).map(|(a, b)| a * b).sum();
    y.iter()
        .zip(dy)
        .map(|(yi, di)| r * (di - yi * ydy))
        .collect()
}

fn add(dst: &mut [f64], src: &[f64]) {
    for (d, s) in dst.iter_mut().zip(src) {
        *d += s;
    }
}

/// `RMS(out − ref) / RMS(ref)` (spec §9.2), with an absolute short-circuit when both are tiny.
pub fn rms_ratio(out: &[f64], reference: &[f64]) -> f64 {
    assert_eq!(out.len(), reference.len(), "rms_ratio: length mismatch");
    let num: f64 = out
        .iter()
        .zip(reference)
        .map(|(a, b)| (a - b) * (a - b))
        .sum();
    let den: f64 = reference.iter().map(|b| b * b).sum();
    if num.sqrt() <= 1e-12 {
        return 0.0;
    }
    (num / den.max(1e-300)).sqrt()
}
