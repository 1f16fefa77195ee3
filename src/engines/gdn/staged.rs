//! The SM90 backward's stage decomposition (kernels/include/gdn_bwd.cuh), mirrored in fp64.
//!
//! The kernels split the chunked backward (spec §4.5) differently from [`super::chunked`]:
//! chunks are padded to the full chunk length (zero q, k, v, β and a zero log gate on the
//! padded rows), the reverse scan works on the stored-domain `dX = dSᵀ` and hands the token
//! stage `dS'` and `dR` per chunk, and the token stage forms `G = dA⊙a + dL⊙l`,
//! `dA' = dA·decay`, `dL' = dL·β·decay` and row dots instead of per-pair loops. This module
//! computes exactly that arrangement (same index conventions, same padding, same placement of
//! the `dD` and `Σ dKᴿ·Kᴿ` terms on the last real row) so that a test can hold it against the
//! per-token reference; the port chain rules are the reference's.

// Index loops mirror the kernel's array indexing one to one.
#![allow(clippy::needless_range_loop)]

use super::chunked::{chunk_factors, to_stored};
use super::reference::{
    GdnGrads, GdnInputs, GdnOptions, GdnShape, TokenGrads, accumulate_port_grads, load_state_at,
    prepare_head, store_state_at,
};

/// Per-chunk operands as the bwd prep keeps them (padded to `c` rows).
struct Prep {
    gam: Vec<f64>,
    bet: Vec<f64>,
    t: Vec<f64>,
    a: Vec<f64>,
    w: Vec<f64>,
    ut: Vec<f64>,
    qp: Vec<f64>,
    kr: Vec<f64>,
    e: Vec<f64>,
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// The factors of one chunk from its rows padded to the chunk length (the forward's
/// [`chunk_factors`]) plus the prep's `E = β e^{Γ} k̂` rows.
fn prep(q: &[Vec<f64>], k: &[Vec<f64>], v: &[Vec<f64>], la: &[f64], beta: &[f64]) -> Prep {
    let f = chunk_factors(q, k, v, la, beta);
    let kd = k[0].len();
    let mut e = vec![0.0; k.len() * kd];
    for (i, row) in k.iter().enumerate() {
        for d in 0..kd {
            e[i * kd + d] = beta[i] * f.gamma[i].exp() * row[d];
        }
    }
    Prep {
        gam: f.gamma,
        bet: beta.to_vec(),
        t: f.t,
        a: f.a,
        w: f.w,
        ut: f.u_tilde,
        qp: f.q_plus,
        kr: f.k_restore,
        e,
    }
}

/// The backward through the kernels' stages with chunk length `c` (64 on the GPU); same
/// contract as [`super::reference::backward`].
pub fn backward(
    shape: &GdnShape,
    opts: &GdnOptions,
    inp: &GdnInputs,
    d_o: &[f64],
    d_final_state: Option<&[f64]>,
    c: usize,
) -> GdnGrads {
    let (kd, vd, ho) = (shape.k, shape.v, shape.ho());
    let mut gr = GdnGrads::zeros(shape, inp);
    for seq in 0..inp.num_seqs() {
        let start = inp.cu_seqlens[seq];
        for h in 0..ho {
            let p = prepare_head(shape, opts, inp, seq, h);
            let len = p.k.len();
            let nch = len.div_ceil(c);
            // Padded chunk rows.
            let pad = |rows: &[Vec<f64>], c0: usize, dim: usize| -> Vec<Vec<f64>> {
                (0..c)
                    .map(|i| rows.get(c0 + i).cloned().unwrap_or(vec![0.0; dim]))
                    .collect()
            };
            let mut chunks = Vec::new();
            for ci in 0..nch {
                let c0 = ci * c;
                let la: Vec<f64> = (0..c)
                    .map(|i| p.gate.get(c0 + i).map_or(0.0, |g| g.log_alpha))
                    .collect();
                let be: Vec<f64> = (0..c)
                    .map(|i| p.gate.get(c0 + i).map_or(0.0, |g| g.beta))
                    .collect();
                let (q, k, v) = (pad(&p.q, c0, kd), pad(&p.k, c0, kd), pad(&p.v, c0, vd));
                let f = prep(&q, &k, &v, &la, &be);
                let cl = (len - c0).min(c);
                let dov: Vec<Vec<f64>> = (0..c)
                    .map(|i| {
                        if i < cl {
                            d_o[((start + c0 + i) * ho + h) * vd..][..vd].to_vec()
                        } else {
                            vec![0.0; vd]
                        }
                    })
                    .collect();
                chunks.push((c0, cl, q, k, v, f, dov));
            }
            // fscan: X = Sᵀ (V×K) entering each chunk.
            let mut x = to_stored(&p.s0, kd, vd);
            let mut xs = Vec::new();
            for (_, _, _, _, _, f, _) in &chunks {
                xs.push(x.clone());
                let mut u = vec![0.0; c * vd];
                for i in 0..c {
                    for vi in 0..vd {
                        u[i * vd + vi] =
                            f.ut[i * vd + vi] - dot(&f.w[i * kd..][..kd], &x[vi * kd..][..kd]);
                    }
                }
                let decay = f.gam[c - 1].exp();
                for vi in 0..vd {
                    for d in 0..kd {
                        let upd: f64 = (0..c).map(|i| u[i * vd + vi] * f.kr[i * kd + d]).sum();
                        x[vi * kd + d] = decay * x[vi * kd + d] + upd;
                    }
                }
            }
            // dscan: dX from d_final_state, reverse.
            let mut dx = match d_final_state {
                Some(dfs) => to_stored(&load_state_at(dfs, seq, h, shape), kd, vd),
                None => vec![0.0; vd * kd],
            };
            let mut dss = vec![Vec::new(); nch];
            let mut drs = vec![Vec::new(); nch];
            for ci in (0..nch).rev() {
                let (_, _, _, _, _, f, dov) = &chunks[ci];
                dss[ci] = dx.clone();
                let mut du = vec![0.0; vd * c]; // [v][i]
                for vi in 0..vd {
                    for i in 0..c {
                        let mut s: f64 = (i..c).map(|j| dov[j][vi] * f.a[j * c + i]).sum();
                        s += dot(&dx[vi * kd..][..kd], &f.kr[i * kd..][..kd]);
                        du[vi * c + i] = s;
                    }
                }
                let mut dr = vec![0.0; c * vd]; // [j][v]
                for vi in 0..vd {
                    for j in 0..c {
                        dr[j * vd + vi] = (j..c).map(|i| du[vi * c + i] * f.t[i * c + j]).sum();
                    }
                }
                let decay = f.gam[c - 1].exp();
                let mut nx = vec![0.0; vd * kd];
                for vi in 0..vd {
                    for d in 0..kd {
                        let mut s = decay * dx[vi * kd + d];
                        for i in 0..c {
                            s += dov[i][vi] * f.qp[i * kd + d] - dr[i * vd + vi] * f.e[i * kd + d];
                        }
                        nx[vi * kd + d] = s;
                    }
                }
                dx = nx;
                drs[ci] = dr;
            }
            if let Some(dis) = gr.d_initial_state.as_mut() {
                let mut s = vec![0.0; kd * vd];
                for vi in 0..vd {
                    for d in 0..kd {
                        s[d * vd + vi] = dx[vi * kd + d];
                    }
                }
                store_state_at(dis, seq, h, shape, &s);
            }
            // tokens.
            for ci in 0..nch {
                let (c0, len_c, q, k, v, f, dov) = &chunks[ci];
                let (xc, dsc, dr) = (&xs[ci], &dss[ci], &drs[ci]);
                let mut u = vec![0.0; c * vd];
                for i in 0..c {
                    for vi in 0..vd {
                        u[i * vd + vi] =
                            f.ut[i * vd + vi] - dot(&f.w[i * kd..][..kd], &xc[vi * kd..][..kd]);
                    }
                }
                let mut dqp = vec![0.0; c * kd];
                let mut de = vec![0.0; c * kd];
                let mut dkr = vec![0.0; c * kd];
                let mut da = vec![0.0; c * c];
                let mut dl = vec![0.0; c * c];
                let dd: f64 = dot(xc, dsc);
                let mut dbv = vec![0.0; c];
                for i in 0..c {
                    for vi in 0..vd {
                        let (o, r, uu) = (dov[i][vi], dr[i * vd + vi], u[i * vd + vi]);
                        for d in 0..kd {
                            dqp[i * kd + d] += o * xc[vi * kd + d];
                            de[i * kd + d] -= r * xc[vi * kd + d];
                            dkr[i * kd + d] += uu * dsc[vi * kd + d];
                        }
                        for j in 0..c {
                            da[i * c + j] += o * u[j * vd + vi];
                            dl[i * c + j] -= r * u[j * vd + vi];
                        }
                        if i < *len_c {
                            dbv[i] += r * v[i][vi];
                        }
                    }
                }
                let (gam, bet) = (&f.gam, &f.bet);
                let mut dap = vec![0.0; c * c];
                let mut dlp = vec![0.0; c * c];
                let mut gm = vec![0.0; c * c];
                let mut dbl = vec![0.0; c];
                for i in 0..c {
                    for j in 0..=i {
                        let qk = dot(&q[i], &k[j]);
                        let kk2 = dot(&k[i], &k[j]);
                        let dec = (gam[i] - gam[j]).exp();
                        dap[i * c + j] = da[i * c + j] * dec;
                        gm[i * c + j] = da[i * c + j] * qk * dec;
                        if j < i {
                            dlp[i * c + j] = dl[i * c + j] * bet[i] * dec;
                            gm[i * c + j] += dl[i * c + j] * bet[i] * kk2 * dec;
                            dbl[i] += dl[i * c + j] * kk2 * dec;
                        }
                    }
                }
                let mut dgam = vec![0.0; c];
                let mut red = 0.0;
                let mut toks = Vec::new();
                for i in 0..c {
                    let eg = gam[i].exp();
                    let er = (gam[c - 1] - gam[i]).exp();
                    let bi = bet[i];
                    let mut dq: Vec<f64> = (0..kd).map(|d| eg * dqp[i * kd + d]).collect();
                    let mut dk: Vec<f64> = (0..kd)
                        .map(|d| er * dkr[i * kd + d] + bi * eg * de[i * kd + d])
                        .collect();
                    for j in 0..c {
                        let (a_ij, a_ji) = (dap[i * c + j], dap[j * c + i]);
                        let (l_ij, l_ji) = (dlp[i * c + j], dlp[j * c + i]);
                        for d in 0..kd {
                            dq[d] += a_ij * k[j][d];
                            dk[d] += a_ji * q[j][d] + (l_ij + l_ji) * k[j][d];
                        }
                    }
                    let dek = dot(&de[i * kd..][..kd], &k[i]);
                    let dqq = dot(&dqp[i * kd..][..kd], &q[i]);
                    let dkk = dot(&dkr[i * kd..][..kd], &k[i]);
                    let gsum: f64 = (0..c).map(|j| gm[i * c + j] - gm[j * c + i]).sum();
                    let dbeta = eg * dek + dbv[i] + dbl[i];
                    if i < *len_c {
                        dgam[i] = eg * bi * dek + eg * dqq - er * dkk + gsum;
                        red += er * dkk;
                        let dv: Vec<f64> = (0..vd).map(|vi| bi * dr[i * vd + vi]).collect();
                        toks.push((dq, dk, dv, dbeta));
                    }
                }
                dgam[len_c - 1] += red + gam[c - 1].exp() * dd;
                let mut acc = 0.0;
                for t in (0..*len_c).rev() {
                    acc += dgam[t];
                    dgam[t] = acc;
                }
                for (i, (dq, dk, dv, dbeta)) in toks.iter().enumerate() {
                    let d = TokenGrads {
                        dq_hat: dq,
                        dk_hat: dk,
                        dv,
                        dlog_alpha: dgam[i],
                        dbeta: *dbeta,
                    };
                    accumulate_port_grads(shape, opts, inp, &p, &mut gr, start, c0 + i, h, &d);
                }
            }
        }
    }
    gr
}
