//! The chunked UT/WY form of the GDN forward (spec §4.2), in fp64 on the CPU.
//!
//! This is the exact algebra our CUDA kernels implement, written plainly so that each stage
//! can be checked against the per-token reference: per chunk of `C` tokens (the last chunk of
//! a sequence may be partial; chunks never straddle sequences) it builds the cumulative log
//! decay `Γ`, `L = strict_lower(β_i k_i·k_j e^{Γ_i−Γ_j})`, `T = (I + L)^{-1}`,
//! `A = tril(q̂_i·k_j e^{Γ_i−Γ_j})`, `W = T E`, `Ũ = T Y`, then on the stored-domain state
//! `X = Sᵀ` (V×K): `Uᵀ = Ũᵀ − X Wᵀ`, `Oᵀ = X Q⁺ᵀ + Uᵀ Aᵀ`, `X ← e^{Γ_last} X + Uᵀ Kᴿ`.
//! Inputs, outputs and transforms are those of [`super::reference`].

use super::reference::{GdnForward, GdnInputs, GdnOptions, GdnShape, prepare_head};

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

/// Builds the state-independent factors of one chunk from prepared token rows.
/// `q` is already scaled; `rows` indexes the chunk's tokens within the prepared head.
fn chunk_factors(
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

/// Chunked forward with chunk size `chunk` (64 for GDN kernels); same contract as
/// [`super::reference::forward`].
pub fn forward(shape: &GdnShape, opts: &GdnOptions, inp: &GdnInputs, chunk: usize) -> GdnForward {
    assert!(chunk > 0, "chunk size must be positive");
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
            let mut x = vec![0.0; vd * kd];
            for vi in 0..vd {
                for d in 0..kd {
                    x[vi * kd + d] = p.s0[d * vd + vi];
                }
            }
            let len = p.k.len();
            let mut c0 = 0;
            while c0 < len {
                let c1 = (c0 + chunk).min(len);
                let la: Vec<f64> = p.gate[c0..c1].iter().map(|g| g.log_alpha).collect();
                let beta: Vec<f64> = p.gate[c0..c1].iter().map(|g| g.beta).collect();
                let f = chunk_factors(&p.q[c0..c1], &p.k[c0..c1], &p.v[c0..c1], &la, &beta);
                let o = chunk_step(&f, &mut x, kd, vd);
                for i in 0..c1 - c0 {
                    out.o[((start + c0 + i) * ho + h) * vd..][..vd]
                        .copy_from_slice(&o[i * vd..][..vd]);
                }
                c0 = c1;
            }
            out.final_state[(seq * ho + h) * vd * kd..][..vd * kd].copy_from_slice(&x);
        }
    }
    out
}
