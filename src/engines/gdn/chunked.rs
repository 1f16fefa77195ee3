//! The chunked UT/WY form of the GDN forward (spec §4.2), in fp64 on the CPU.
//!
//! This is the exact algebra our CUDA kernels implement, written plainly so that each stage
//! can be checked against the per-token reference: per chunk of `C` tokens (the last chunk of
//! a sequence may be partial; chunks never straddle sequences) it builds the cumulative log
//! decay `Γ`, `L = strict_lower(β_i k_i·k_j e^{Γ_i−Γ_j})`, `T = (I + L)^{-1}`,
//! `A = tril(q̂_i·k_j e^{Γ_i−Γ_j})`, `W = T E`, `Ũ = T Y`, then on the stored-domain state
//! `X = Sᵀ` (V×K): `Uᵀ = Ũᵀ − X Wᵀ`, `Oᵀ = X Q⁺ᵀ + Uᵀ Aᵀ`, `X ← e^{Γ_last} X + Uᵀ Kᴿ`.
//! The backward ([`backward`]) is the chunked reverse pass of §4.5 written on the same factors:
//! per chunk, in reverse, `dU = Aᵀ dO + Kᴿ dS'`, `dR = Tᵀ dU`, `dL = −strict_lower(dR Uᵀ)`,
//! `dS = D dS' + Q⁺ᵀ dO − Eᵀ dR`, then the per-token gradients of `q̂, k̂, v, β, Γ` and the reverse
//! cumulative sum of `dΓ` into `d log α`.
//! Inputs, outputs and transforms are those of [`super::reference`].

// Index loops mirror the matrix formulas of the spec one to one.
#![allow(clippy::needless_range_loop)]

use super::reference::{
    GdnForward, GdnGrads, GdnInputs, GdnOptions, GdnShape, PreparedHead, TokenGrads,
    accumulate_port_grads, load_state_at, prepare_head, store_state_at,
};

/// Per-chunk operands of one (sequence, head, chunk), all fp64 (row = token in the chunk).
#[derive(Clone, Debug, PartialEq)]
pub struct ChunkFactors {
    /// Inclusive cumulative log decay `Γ_i`.
    pub gamma: Vec<f64>,
    /// `T = (I + L)^{-1}`, `C×C` row-major.
    pub t: Vec<f64>,
    /// `A = tril(Q⁺ K⁻ᵀ)` (diagonal included), `C×C`.
    pub a: Vec<f64>,
    /// `W = T E`, `C×K`.
    pub w: Vec<f64>,
    /// `Ũ = T Y`, `C×V`.
    pub u_tilde: Vec<f64>,
    /// `Q⁺_i = scale·q̂_i e^{Γ_i}`, `C×K`.
    pub q_plus: Vec<f64>,
    /// `Kᴿ_i = k̂_i e^{Γ_last−Γ_i}`, `C×K`.
    pub k_restore: Vec<f64>,
}

/// [`chunk_factors`] of tokens `c0..c1` of a prepared head.
fn head_chunk_factors(p: &PreparedHead, c0: usize, c1: usize) -> ChunkFactors {
    let la: Vec<f64> = p.gate[c0..c1].iter().map(|g| g.log_alpha).collect();
    let beta: Vec<f64> = p.gate[c0..c1].iter().map(|g| g.beta).collect();
    chunk_factors(&p.q[c0..c1], &p.k[c0..c1], &p.v[c0..c1], &la, &beta)
}

/// Builds the state-independent factors of one chunk from prepared token rows.
/// `q` is already scaled; `rows` indexes the chunk's tokens within the prepared head.
pub(super) fn chunk_factors(
    q: &[Vec<f64>],
    k: &[Vec<f64>],
    v: &[Vec<f64>],
    log_alpha: &[f64],
    beta: &[f64],
) -> ChunkFactors {
    let c = k.len();
    let (kd, vd) = (k[0].len(), v[0].len());
    let mut gamma = Vec::with_capacity(c);
    let mut acc = 0.0;
    for la in log_alpha {
        acc += la;
        gamma.push(acc);
    }
    let last = gamma[c - 1];
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let mut l = vec![0.0; c * c];
    let mut a = vec![0.0; c * c];
    for i in 0..c {
        for j in 0..=i {
            let decay = (gamma[i] - gamma[j]).exp();
            if j < i {
                l[i * c + j] = beta[i] * dot(&k[i], &k[j]) * decay;
            }
            a[i * c + j] = dot(&q[i], &k[j]) * decay;
        }
    }
    // T = (I + L)^{-1} by forward substitution, row by row.
    let mut t = vec![0.0; c * c];
    for i in 0..c {
        t[i * c + i] = 1.0;
        for col in 0..i {
            let s: f64 = (col..i).map(|j| l[i * c + j] * t[j * c + col]).sum();
            t[i * c + col] = -s;
        }
    }
    let mut w = vec![0.0; c * kd];
    let mut u_tilde = vec![0.0; c * vd];
    for i in 0..c {
        for j in 0..=i {
            let tij = t[i * c + j];
            let e = beta[j] * gamma[j].exp();
            for d in 0..kd {
                w[i * kd + d] += tij * e * k[j][d];
            }
            for d in 0..vd {
                u_tilde[i * vd + d] += tij * beta[j] * v[j][d];
            }
        }
    }
    let mut q_plus = vec![0.0; c * kd];
    let mut k_restore = vec![0.0; c * kd];
    for i in 0..c {
        for d in 0..kd {
            q_plus[i * kd + d] = q[i][d] * gamma[i].exp();
            k_restore[i * kd + d] = k[i][d] * (last - gamma[i]).exp();
        }
    }
    ChunkFactors {
        gamma,
        t,
        a,
        w,
        u_tilde,
        q_plus,
        k_restore,
    }
}

/// Advances the stored-domain state `x` (`V×K`) over one chunk and returns `O` (`C×V`).
fn chunk_step(f: &ChunkFactors, x: &mut [f64], kd: usize, vd: usize) -> Vec<f64> {
    let c = f.gamma.len();
    // U = Ũ − W S, with S = Xᵀ.
    let mut u = f.u_tilde.clone();
    for i in 0..c {
        for vi in 0..vd {
            let ws: f64 = (0..kd).map(|d| f.w[i * kd + d] * x[vi * kd + d]).sum();
            u[i * vd + vi] -= ws;
        }
    }
    // O = Q⁺ S + A U.
    let mut o = vec![0.0; c * vd];
    for i in 0..c {
        for vi in 0..vd {
            let qs: f64 = (0..kd).map(|d| f.q_plus[i * kd + d] * x[vi * kd + d]).sum();
            let au: f64 = (0..=i).map(|j| f.a[i * c + j] * u[j * vd + vi]).sum();
            o[i * vd + vi] = qs + au;
        }
    }
    // X ← e^{Γ_last} X + Uᵀ Kᴿ.
    let decay = f.gamma[c - 1].exp();
    for vi in 0..vd {
        for d in 0..kd {
            let upd: f64 = (0..c)
                .map(|i| u[i * vd + vi] * f.k_restore[i * kd + d])
                .sum();
            x[vi * kd + d] = decay * x[vi * kd + d] + upd;
        }
    }
    o
}

/// Runs tokens `lo..hi` of a prepared head chunk by chunk ([`chunk_step`]) from the
/// stored-domain state `x` (updated in place), handing each token's output row to
/// `emit(token, row)`.
fn run_span(
    p: &PreparedHead,
    x: &mut [f64],
    (lo, hi): (usize, usize),
    chunk: usize,
    kd: usize,
    vd: usize,
    mut emit: impl FnMut(usize, &[f64]),
) {
    let mut c0 = lo;
    while c0 < hi {
        let c1 = (c0 + chunk).min(hi);
        let o = chunk_step(&head_chunk_factors(p, c0, c1), x, kd, vd);
        for i in 0..c1 - c0 {
            emit(c0 + i, &o[i * vd..][..vd]);
        }
        c0 = c1;
    }
}

/// The forward's outputs over every (sequence, head): `run(seq, h, p, emit)` runs head `h` of
/// sequence `seq` (prepared: `p`), hands each token's output row to `emit(token, row)` (token
/// within the sequence) and returns the final stored-domain state.
fn forward_by_head(
    shape: &GdnShape,
    opts: &GdnOptions,
    inp: &GdnInputs,
    mut run: impl FnMut(usize, usize, &PreparedHead, &mut dyn FnMut(usize, &[f64])) -> Vec<f64>,
) -> GdnForward {
    let (kd, vd, ho) = (shape.k, shape.v, shape.ho());
    let n = inp.num_seqs();
    let mut out = GdnForward {
        o: vec![0.0; inp.total_tokens() * ho * vd],
        final_state: vec![0.0; n * shape.state_len()],
    };
    for seq in 0..n {
        let start = inp.cu_seqlens[seq];
        for h in 0..ho {
            let p = prepare_head(shape, opts, inp, seq, h);
            let o = &mut out.o;
            let x = run(seq, h, &p, &mut |t, row| {
                o[((start + t) * ho + h) * vd..][..vd].copy_from_slice(row)
            });
            out.final_state[(seq * ho + h) * vd * kd..][..vd * kd].copy_from_slice(&x);
        }
    }
    out
}

/// Chunked forward with chunk size `chunk` (64 for GDN kernels); same contract as
/// [`super::reference::forward`].
pub fn forward(shape: &GdnShape, opts: &GdnOptions, inp: &GdnInputs, chunk: usize) -> GdnForward {
    assert!(chunk > 0, "chunk size must be positive");
    let (kd, vd) = (shape.k, shape.v);
    forward_by_head(shape, opts, inp, |_, _, p, emit| {
        let mut x = to_stored(&p.s0, kd, vd);
        run_span(p, &mut x, (0, p.k.len()), chunk, kd, vd, emit);
        x
    })
}

/// `rows · Sᵀ` for a math-domain `K×V` state `s`: row `i`, column `d` = `Σ_v rows[i][v] s[d][v]`.
fn rows_by_state_t(rows: &[Vec<f64>], s: &[f64], kd: usize, vd: usize) -> Vec<Vec<f64>> {
    rows.iter()
        .map(|r| {
            (0..kd)
                .map(|d| (0..vd).map(|vi| r[vi] * s[d * vd + vi]).sum())
                .collect()
        })
        .collect()
}

/// Gradients of one chunk w.r.t. its transformed operands.
struct ChunkGrads {
    dq_hat: Vec<Vec<f64>>,
    dk_hat: Vec<Vec<f64>>,
    dv: Vec<Vec<f64>>,
    dlog_alpha: Vec<f64>,
    dbeta: Vec<f64>,
}

/// Reverse pass over one chunk. `s` is the math-domain state entering the chunk (`[K][V]`),
/// `ds` the gradient of the state leaving it; on return `ds` holds the gradient of `s`.
#[allow(clippy::too_many_arguments)]
fn chunk_backward(
    f: &ChunkFactors,
    q: &[Vec<f64>],
    k: &[Vec<f64>],
    v: &[Vec<f64>],
    beta: &[f64],
    s: &[f64],
    ds: &mut [f64],
    d_o: &[Vec<f64>],
) -> ChunkGrads {
    let c = k.len();
    let (kd, vd) = (k[0].len(), v[0].len());
    let g = &f.gamma;
    let last = g[c - 1];
    let dot = |a: &[f64], b: &[f64]| a.iter().zip(b).map(|(x, y)| x * y).sum::<f64>();
    let decay = |i: usize, j: usize| (g[i] - g[j]).exp();
    // Recompute U = Ũ − W S and R = Y − E S (C×V).
    let mut u = vec![vec![0.0; vd]; c];
    let mut r = vec![vec![0.0; vd]; c];
    for i in 0..c {
        let e = beta[i] * g[i].exp();
        for vi in 0..vd {
            let ws: f64 = (0..kd).map(|d| f.w[i * kd + d] * s[d * vd + vi]).sum();
            let ks: f64 = (0..kd).map(|d| k[i][d] * s[d * vd + vi]).sum();
            u[i][vi] = f.u_tilde[i * vd + vi] - ws;
            r[i][vi] = beta[i] * v[i][vi] - e * ks;
        }
    }
    // dU = Aᵀ dO + Kᴿ dS', dA = tril(dO Uᵀ), dQ⁺ = dO Sᵀ, dKᴿ = U dS'ᵀ.
    let mut du = vec![vec![0.0; vd]; c];
    for i in 0..c {
        for vi in 0..vd {
            let a: f64 = (i..c).map(|i2| f.a[i2 * c + i] * d_o[i2][vi]).sum();
            let kr: f64 = (0..kd)
                .map(|d| f.k_restore[i * kd + d] * ds[d * vd + vi])
                .sum();
            du[i][vi] = a + kr;
        }
    }
    let mut da = vec![0.0; c * c];
    for i in 0..c {
        for j in 0..=i {
            da[i * c + j] = dot(&d_o[i], &u[j]);
        }
    }
    let dq_plus = rows_by_state_t(&d_o[..c], s, kd, vd);
    let dk_restore = rows_by_state_t(&u, ds, kd, vd);
    // dR = Tᵀ dU; dL = −strict_lower(dR Uᵀ); dE = −dR Sᵀ; dY = dR.
    let mut dr = vec![vec![0.0; vd]; c];
    for j in 0..c {
        for vi in 0..vd {
            dr[j][vi] = (j..c).map(|i| f.t[i * c + j] * du[i][vi]).sum();
        }
    }
    let mut dl = vec![0.0; c * c];
    for i in 0..c {
        for j in 0..i {
            dl[i * c + j] = -dot(&dr[i], &u[j]);
        }
    }
    let mut de = rows_by_state_t(&dr, s, kd, vd);
    de.iter_mut().flatten().for_each(|x| *x = -*x);
    // dD = Σ dS' ⊙ S, then dS = D dS' + Q⁺ᵀ dO − Eᵀ dR.
    let d_decay: f64 = ds.iter().zip(s).map(|(a, b)| a * b).sum();
    let dscale = last.exp();
    for d in 0..kd {
        for vi in 0..vd {
            let mut x = dscale * ds[d * vd + vi];
            for i in 0..c {
                x += f.q_plus[i * kd + d] * d_o[i][vi] - beta[i] * g[i].exp() * k[i][d] * dr[i][vi];
            }
            ds[d * vd + vi] = x;
        }
    }
    // Per-token gradients.
    let mut out = ChunkGrads {
        dq_hat: vec![vec![0.0; kd]; c],
        dk_hat: vec![vec![0.0; kd]; c],
        dv: vec![vec![0.0; vd]; c],
        dlog_alpha: vec![0.0; c],
        dbeta: vec![0.0; c],
    };
    let mut dgam = vec![0.0; c];
    for i in 0..c {
        let eg = g[i].exp();
        let er = (last - g[i]).exp();
        for d in 0..kd {
            out.dq_hat[i][d] += eg * dq_plus[i][d];
            out.dk_hat[i][d] += er * dk_restore[i][d] + beta[i] * eg * de[i][d];
        }
        for vi in 0..vd {
            out.dv[i][vi] = beta[i] * dr[i][vi];
        }
        out.dbeta[i] += eg * dot(&de[i], &k[i]) + dot(&dr[i], &v[i]);
        dgam[i] += eg * beta[i] * dot(&de[i], &k[i]) + dot(&dq_plus[i], &f.q_plus[i * kd..][..kd])
            - dot(&dk_restore[i], &f.k_restore[i * kd..][..kd]);
        dgam[c - 1] += dot(&dk_restore[i], &f.k_restore[i * kd..][..kd]);
        for j in 0..=i {
            let dec = decay(i, j);
            // A[i][j] = q̂_i·k_j e^{Γi−Γj}
            let dav = da[i * c + j];
            let aij = dot(&q[i], &k[j]) * dec;
            for d in 0..kd {
                out.dq_hat[i][d] += dav * dec * k[j][d];
                out.dk_hat[j][d] += dav * dec * q[i][d];
            }
            dgam[i] += dav * aij;
            dgam[j] -= dav * aij;
            if j < i {
                // L[i][j] = β_i k_i·k_j e^{Γi−Γj}
                let dlv = dl[i * c + j];
                let kk = dot(&k[i], &k[j]);
                out.dbeta[i] += dlv * kk * dec;
                for d in 0..kd {
                    out.dk_hat[i][d] += dlv * beta[i] * dec * k[j][d];
                    out.dk_hat[j][d] += dlv * beta[i] * dec * k[i][d];
                }
                let lij = beta[i] * kk * dec;
                dgam[i] += dlv * lij;
                dgam[j] -= dlv * lij;
            }
        }
    }
    dgam[c - 1] += dscale * d_decay;
    let mut acc = 0.0;
    for i in (0..c).rev() {
        acc += dgam[i];
        out.dlog_alpha[i] = acc;
    }
    out
}

/// Chunked backward with chunk size `chunk`; same contract as [`super::reference::backward`].
pub fn backward(
    shape: &GdnShape,
    opts: &GdnOptions,
    inp: &GdnInputs,
    d_o: &[f64],
    d_final_state: Option<&[f64]>,
    chunk: usize,
) -> GdnGrads {
    let (kd, vd) = (shape.k, shape.v);
    let bwd = Backward::new(shape, opts, inp, d_o, chunk);
    bwd.by_spans(d_final_state, |p, _, _, ds| {
        vec![((0, p.k.len()), to_stored(&p.s0, kd, vd), ds)]
    })
}

/// One span's backward as a reference backward runs it ([`Backward::by_spans`]): its tokens
/// `(lo, hi)`, the stored-domain state entering `lo` and the math-domain gradient of the state
/// leaving `hi`.
type SpanRun = ((usize, usize), Vec<f64>, Vec<f64>);

/// A problem's backward inputs, for the backward of spans of its sequences ([`Backward::span`]).
struct Backward<'a> {
    shape: &'a GdnShape,
    opts: &'a GdnOptions,
    inp: &'a GdnInputs<'a>,
    d_o: &'a [f64],
    chunk: usize,
}

impl<'a> Backward<'a> {
    /// The inputs at chunk size `chunk` (positive).
    fn new(
        shape: &'a GdnShape,
        opts: &'a GdnOptions,
        inp: &'a GdnInputs<'a>,
        d_o: &'a [f64],
        chunk: usize,
    ) -> Backward<'a> {
        assert!(chunk > 0, "chunk size must be positive");
        Backward {
            shape,
            opts,
            inp,
            d_o,
            chunk,
        }
    }

    /// The backward both reference backwards run ([`backward`], [`backward_piece_chain`]): per
    /// sequence and head, `runs(p, seq, h, ds)` (the prepared head, the sequence and head, the
    /// math-domain gradient of the final state, zero without one) lists the spans to run, in
    /// order, each with its entering state and leaving gradient ([`SpanRun`]); every span's
    /// gradients add to the result ([`Backward::span`]) and the first span's entering gradient
    /// is `d_initial_state`.
    fn by_spans(
        &self,
        d_final_state: Option<&[f64]>,
        runs: impl Fn(&PreparedHead, usize, usize, Vec<f64>) -> Vec<SpanRun>,
    ) -> GdnGrads {
        let (shape, inp) = (self.shape, self.inp);
        let (kd, vd, ho) = (shape.k, shape.v, shape.ho());
        let mut gr = GdnGrads::zeros(shape, inp);
        for seq in 0..inp.num_seqs() {
            let start = inp.cu_seqlens[seq];
            for h in 0..ho {
                let p = prepare_head(shape, self.opts, inp, seq, h);
                let dfs = match d_final_state {
                    Some(dfs) => load_state_at(dfs, seq, h, shape),
                    None => vec![0.0; kd * vd],
                };
                for (j, (span, x, mut ds)) in runs(&p, seq, h, dfs).into_iter().enumerate() {
                    self.span(&p, &mut gr, (start, h), span, x, &mut ds);
                    if j == 0
                        && let Some(dis) = gr.d_initial_state.as_mut()
                    {
                        store_state_at(dis, seq, h, shape, &ds);
                    }
                }
            }
        }
        gr
    }

    /// The backward of tokens `lo..hi` (chunks of `chunk` from `lo`) of head `h` of the sequence
    /// starting at token `start` (prepared as `p`): replays the chunks from `x` (stored domain,
    /// the state entering `lo`), then runs their reverse passes from `ds` (math domain, the
    /// gradient of the state leaving `hi`), adding every chunk's gradients to `gr`; `ds` ends as
    /// the gradient of the state entering `lo`. [`backward`] runs it over whole sequences,
    /// [`backward_piece_chain`] per span from the chained seeds.
    fn span(
        &self,
        p: &PreparedHead,
        gr: &mut GdnGrads,
        (start, h): (usize, usize),
        (lo, hi): (usize, usize),
        mut x: Vec<f64>,
        ds: &mut [f64],
    ) {
        let (shape, chunk) = (self.shape, self.chunk);
        let (kd, vd, ho) = (shape.k, shape.v, shape.ho());
        // Forward: the factors and the state entering every chunk (math domain).
        let mut chunks = Vec::new();
        let mut c0 = lo;
        while c0 < hi {
            let c1 = (c0 + chunk).min(hi);
            let f = head_chunk_factors(p, c0, c1);
            let beta: Vec<f64> = p.gate[c0..c1].iter().map(|g| g.beta).collect();
            let s = to_math(&x, kd, vd);
            chunk_step(&f, &mut x, kd, vd);
            chunks.push((c0, c1, f, beta, s));
            c0 = c1;
        }
        for (c0, c1, f, beta, s) in chunks.iter().rev() {
            let dov = d_o_rows(self.d_o, start, *c0, *c1, h, ho, vd);
            let cg = chunk_backward(
                f,
                &p.q[*c0..*c1],
                &p.k[*c0..*c1],
                &p.v[*c0..*c1],
                beta,
                s,
                ds,
                &dov,
            );
            accumulate_chunk_grads(shape, self.opts, self.inp, p, gr, start, *c0, h, &cg);
        }
    }
}

/// Reverse summary of one chunk (the backward's transition, stored domain):
/// `dX_in = dX_out · Mᵀ + G` with `Mᵀ = D_C − Kᴿᵀ W` (`K×K`: the forward's `M_buf` transposed)
/// and `G = dOᵀ (Q⁺ − A W)` (`V×K`), the gradient reaching the chunk's entering state from its
/// own outputs. Both follow from [`chunk_backward`]'s `dS = D dS' + Q⁺ᵀ dO − Eᵀ dR`,
/// `dR = Tᵀ (Aᵀ dO + Kᴿ dS')` and `W = T E`; neither depends on the forward state.
fn chunk_reverse_summary(f: &ChunkFactors, d_o: &[Vec<f64>], kd: usize, vd: usize) -> SpanSummary {
    let c = f.gamma.len();
    let fwd = chunk_summary(f, kd, vd);
    let mut m = vec![0.0; kd * kd];
    for i in 0..kd {
        for j in 0..kd {
            m[i * kd + j] = fwd.m[j * kd + i];
        }
    }
    // Q⁺ − A W (C×K), then G = dOᵀ (Q⁺ − A W).
    let mut qa = vec![0.0; c * kd];
    for i in 0..c {
        for d in 0..kd {
            let aw: f64 = (0..=i).map(|j| f.a[i * c + j] * f.w[j * kd + d]).sum();
            qa[i * kd + d] = f.q_plus[i * kd + d] - aw;
        }
    }
    let mut h = vec![0.0; vd * kd];
    for vi in 0..vd {
        for d in 0..kd {
            h[vi * kd + d] = (0..c).map(|i| d_o[i][vi] * qa[i * kd + d]).sum();
        }
    }
    SpanSummary { m, h }
}

/// `dO` rows of tokens `c0..c1` of sequence-start `start`, head `h`.
fn d_o_rows(
    d_o: &[f64],
    start: usize,
    c0: usize,
    c1: usize,
    h: usize,
    ho: usize,
    vd: usize,
) -> Vec<Vec<f64>> {
    (c0..c1)
        .map(|i| d_o[((start + i) * ho + h) * vd..][..vd].to_vec())
        .collect()
}

/// Stored-domain `V×K` from a math-domain `K×V` state.
pub(super) fn to_stored(s: &[f64], kd: usize, vd: usize) -> Vec<f64> {
    let mut x = vec![0.0; vd * kd];
    for vi in 0..vd {
        for d in 0..kd {
            x[vi * kd + d] = s[d * vd + vi];
        }
    }
    x
}

/// Math-domain `K×V` from a stored-domain `V×K` state.
fn to_math(x: &[f64], kd: usize, vd: usize) -> Vec<f64> {
    let mut s = vec![0.0; kd * vd];
    for vi in 0..vd {
        for d in 0..kd {
            s[d * vd + vi] = x[vi * kd + d];
        }
    }
    s
}

/// The backward's exact piece chain (the GPU's long-sequence schedule): each sequence is cut
/// into `pieces` chunk-aligned spans ([`piece_spans`]).
/// 1. Forward states: the spans' forward summaries (`H_j`, `M_j`, zero seed) chain the seeds
///    `X_{j+1} = X_j M_j + H_j` from the initial state; each span's chunk-entering states are
///    replayed from its seed.
/// 2. State gradients: every span's reverse summary (`G_j` from `dX_out = 0` and its own `dO`,
///    `Mᵀ_j` its transition; `chunk_reverse_summary` composed from the last chunk to the first)
///    chains `dX_out_{j−1} = dX_out_j · Mᵀ_j + G_j` from `d_final_state`, from the last span to
///    the first; each span's reverse pass then runs from its exact `dX_out_j`, and the first
///    span's result is `d_initial_state`.
///
/// Same contract as [`backward`]; equal to it up to rounding.
#[allow(clippy::too_many_arguments)]
pub fn backward_piece_chain(
    shape: &GdnShape,
    opts: &GdnOptions,
    inp: &GdnInputs,
    d_o: &[f64],
    d_final_state: Option<&[f64]>,
    chunk: usize,
    pieces: usize,
) -> GdnGrads {
    let (kd, vd, ho) = (shape.k, shape.v, shape.ho());
    let bwd = Backward::new(shape, opts, inp, d_o, chunk);
    bwd.by_spans(d_final_state, |p, seq, h, dfs| {
        let start = inp.cu_seqlens[seq];
        let len = inp.cu_seqlens[seq + 1] - start;
        let spans = piece_spans(len, chunk, pieces);
        // 1. Forward seeds of every span.
        let fsums = span_summaries(shape, opts, inp, chunk, seq, h, &spans);
        let mut seeds = Vec::with_capacity(spans.len());
        let mut x = to_stored(&p.s0, kd, vd);
        for s in &fsums {
            seeds.push(x.clone());
            x = s.apply(&x, kd, vd);
        }
        // 2. Reverse summaries and the reverse chain of dX_out per span.
        let rsums: Vec<SpanSummary> = spans
            .iter()
            .map(|&(lo, hi)| {
                let mut acc = SpanSummary::identity(kd, vd);
                let mut bounds = Vec::new();
                let mut c0 = lo;
                while c0 < hi {
                    let c1 = (c0 + chunk).min(hi);
                    bounds.push((c0, c1));
                    c0 = c1;
                }
                for &(c0, c1) in bounds.iter().rev() {
                    let f = head_chunk_factors(p, c0, c1);
                    let dov = d_o_rows(d_o, start, c0, c1, h, ho, vd);
                    acc = acc.then(&chunk_reverse_summary(&f, &dov, kd, vd), kd, vd);
                }
                acc
            })
            .collect();
        let mut dx_out = vec![Vec::new(); spans.len()];
        let last = spans.len() - 1;
        dx_out[last] = to_stored(&dfs, kd, vd);
        for j in (1..spans.len()).rev() {
            dx_out[j - 1] = rsums[j].apply(&dx_out[j], kd, vd);
        }
        // 3. Replay every span from its exact seeds.
        spans
            .into_iter()
            .zip(seeds)
            .zip(dx_out)
            .map(|((span, x), dx)| (span, x, to_math(&dx, kd, vd)))
            .collect()
    })
}

/// Adds one chunk's gradients (tokens `c0..`) to the port gradients.
#[allow(clippy::too_many_arguments)]
fn accumulate_chunk_grads(
    shape: &GdnShape,
    opts: &GdnOptions,
    inp: &GdnInputs,
    p: &PreparedHead,
    gr: &mut GdnGrads,
    start: usize,
    c0: usize,
    h: usize,
    cg: &ChunkGrads,
) {
    for li in 0..cg.dbeta.len() {
        let d = TokenGrads {
            dq_hat: &cg.dq_hat[li],
            dk_hat: &cg.dk_hat[li],
            dv: &cg.dv[li],
            dlog_alpha: cg.dlog_alpha[li],
            dbeta: cg.dbeta[li],
        };
        accumulate_port_grads(shape, opts, inp, p, gr, start, c0 + li, h, &d);
    }
}

/// Affine summary of a span in the stored domain (spec §1.2, §5.5): `X_end = X_0 · m + h`.
#[derive(Clone, Debug, PartialEq)]
pub struct SpanSummary {
    /// `M_buf` (`K×K`, row-major).
    pub m: Vec<f64>,
    /// `H` (`V×K`, row-major): the end state from a zero seed.
    pub h: Vec<f64>,
}

impl SpanSummary {
    /// The identity span (`M = I`, `H = 0`): an empty piece.
    pub fn identity(kd: usize, vd: usize) -> SpanSummary {
        let mut m = vec![0.0; kd * kd];
        for i in 0..kd {
            m[i * kd + i] = 1.0;
        }
        SpanSummary {
            m,
            h: vec![0.0; vd * kd],
        }
    }

    /// `self` followed by `next`: `M = M₁M₂`, `H = H₁M₂ + H₂`.
    pub fn then(&self, next: &SpanSummary, kd: usize, vd: usize) -> SpanSummary {
        let mut m = vec![0.0; kd * kd];
        let mut h = next.h.clone();
        for i in 0..kd {
            for j in 0..kd {
                m[i * kd + j] = (0..kd)
                    .map(|l| self.m[i * kd + l] * next.m[l * kd + j])
                    .sum();
            }
        }
        for vi in 0..vd {
            for j in 0..kd {
                h[vi * kd + j] += (0..kd)
                    .map(|l| self.h[vi * kd + l] * next.m[l * kd + j])
                    .sum::<f64>();
            }
        }
        SpanSummary { m, h }
    }

    /// Applies the span to a stored-domain state: `x · M + H`.
    pub fn apply(&self, x: &[f64], kd: usize, vd: usize) -> Vec<f64> {
        let mut out = self.h.clone();
        for vi in 0..vd {
            for j in 0..kd {
                out[vi * kd + j] += (0..kd)
                    .map(|l| x[vi * kd + l] * self.m[l * kd + j])
                    .sum::<f64>();
            }
        }
        out
    }
}

/// Summary of one chunk from its factors: `M_c = D_C − Wᵀ Kᴿ`, `H_c = Ũᵀ Kᴿ` (stored domain).
fn chunk_summary(f: &ChunkFactors, kd: usize, vd: usize) -> SpanSummary {
    let c = f.gamma.len();
    let decay = f.gamma[c - 1].exp();
    let mut m = vec![0.0; kd * kd];
    for i in 0..kd {
        for j in 0..kd {
            let wk: f64 = (0..c)
                .map(|t| f.w[t * kd + i] * f.k_restore[t * kd + j])
                .sum();
            m[i * kd + j] = if i == j { decay } else { 0.0 } - wk;
        }
    }
    let mut h = vec![0.0; vd * kd];
    for vi in 0..vd {
        for j in 0..kd {
            h[vi * kd + j] = (0..c)
                .map(|t| f.u_tilde[t * vd + vi] * f.k_restore[t * kd + j])
                .sum();
        }
    }
    SpanSummary { m, h }
}

/// Per (sequence, head) summaries of token spans `[lo, hi)` of every sequence, composed from
/// chunk summaries (chunks start at `lo`). `spans[seq]` lists the spans of that sequence.
fn span_summaries(
    shape: &GdnShape,
    opts: &GdnOptions,
    inp: &GdnInputs,
    chunk: usize,
    seq: usize,
    h: usize,
    spans: &[(usize, usize)],
) -> Vec<SpanSummary> {
    let (kd, vd) = (shape.k, shape.v);
    let p = prepare_head(shape, opts, inp, seq, h);
    spans
        .iter()
        .map(|&(lo, hi)| {
            let mut s = SpanSummary::identity(kd, vd);
            let mut c0 = lo;
            while c0 < hi {
                let c1 = (c0 + chunk).min(hi);
                let f = head_chunk_factors(&p, c0, c1);
                s = s.then(&chunk_summary(&f, kd, vd), kd, vd);
                c0 = c1;
            }
            s
        })
        .collect()
}

/// Splits `len` tokens into `pieces` spans whose boundaries are multiples of `chunk`
/// (trailing spans may be empty).
pub fn piece_spans(len: usize, chunk: usize, pieces: usize) -> Vec<(usize, usize)> {
    let chunks = len.div_ceil(chunk);
    let per = chunks.div_ceil(pieces.max(1)).max(1);
    (0..pieces.max(1))
        .map(|j| ((j * per * chunk).min(len), ((j + 1) * per * chunk).min(len)))
        .collect()
}

/// The exact piece chain (spec §5.1): each sequence is cut into `pieces` chunk-aligned spans;
/// every span is summarised from a zero seed (`H_j`, `M_j`), the seeds are chained
/// `X_{j+1} = X_j M_j + H_j` from the initial state, and every span is replayed from its exact
/// seed. Same contract as [`forward`]; equal to it up to rounding.
pub fn forward_piece_chain(
    shape: &GdnShape,
    opts: &GdnOptions,
    inp: &GdnInputs,
    chunk: usize,
    pieces: usize,
) -> GdnForward {
    let (kd, vd) = (shape.k, shape.v);
    forward_by_head(shape, opts, inp, |seq, h, p, emit| {
        let len = inp.cu_seqlens[seq + 1] - inp.cu_seqlens[seq];
        let spans = piece_spans(len, chunk, pieces);
        let sums = span_summaries(shape, opts, inp, chunk, seq, h, &spans);
        let mut x = to_stored(&p.s0, kd, vd);
        for (&span, sum) in spans.iter().zip(&sums) {
            // Replay the span from its exact seed (the chained state), writing O.
            run_span(p, &mut x.clone(), span, chunk, kd, vd, &mut *emit);
            // The chain: the next seed from the summary (not from the replay).
            x = sum.apply(&x, kd, vd);
        }
        x
    })
}

/// Summaries of whole sequences (the `gdn_summary` op's `final_state = X_init·M + H` and
/// `transition = M_buf`), one per (sequence, head), row-major `[N][HO]`.
pub fn sequence_summaries(
    shape: &GdnShape,
    opts: &GdnOptions,
    inp: &GdnInputs,
    chunk: usize,
) -> Vec<SpanSummary> {
    let mut out = Vec::new();
    for seq in 0..inp.num_seqs() {
        let len = inp.cu_seqlens[seq + 1] - inp.cu_seqlens[seq];
        for h in 0..shape.ho() {
            out.extend(span_summaries(shape, opts, inp, chunk, seq, h, &[(0, len)]));
        }
    }
    out
}
