//! Shape inference: the dims (and default strides) of an op output from its inputs and attributes,
//! one function per [`ShapeRule`]. Inference is provisional and row-major except where the
//! reference says otherwise (pointwise copies an input's strides, slice scales input strides,
//! conv_fprop and reshape outputs are NHWC-ordered).

use super::graph::Graph;
use super::node::Node;
use super::op::{OutSpec, ShapeRule};
use super::tensor::{row_major_strides, saturating_element_count};

/// Inferred dims and strides.
pub type Shape = (Vec<i64>, Vec<i64>);

/// Outcome: `Ok(None)` when the rule needs caller-declared dims or an input is not known yet;
/// `Err(reason)` when the inputs are inconsistent.
pub type InferResult = Result<Option<Shape>, String>;

struct Ctx<'a> {
    g: &'a Graph,
    n: &'a Node,
}

impl Ctx<'_> {
    fn dims(&self, port: &str) -> Option<Vec<i64>> {
        let t = self.g.port_tensor(self.n, port)?;
        (!t.dims.is_empty()).then(|| t.dims.clone())
    }

    fn strides(&self, port: &str) -> Option<Vec<i64>> {
        let t = self.g.port_tensor(self.n, port)?;
        (t.strides.len() == t.dims.len() && !t.dims.is_empty()).then(|| t.strides.clone())
    }

    fn dim(&self, port: &str, axis: i64) -> Option<i64> {
        let d = self.dims(port)?;
        let i = if axis < 0 {
            d.len() as i64 + axis
        } else {
            axis
        };
        d.get(usize::try_from(i).ok()?).copied()
    }
}

fn packed(dims: Vec<i64>) -> Option<Shape> {
    let s = row_major_strides(&dims);
    Some((dims, s))
}

/// `x` with every axis `keep` rejects reduced to 1, packed (the statistics shapes).
fn kept_axes(x: &[i64], keep: impl Fn(usize) -> bool) -> Option<Shape> {
    packed(
        x.iter()
            .enumerate()
            .map(|(i, &d)| if keep(i) { d } else { 1 })
            .collect(),
    )
}

/// Strides with dim 1 innermost, then the trailing dims, then dim 0 (NHWC order for NCHW dims).
pub fn nhwc_strides(dims: &[i64]) -> Vec<i64> {
    let r = dims.len();
    if r < 3 {
        return row_major_strides(dims);
    }
    let mut strides = vec![0i64; r];
    // Saturating, as row_major_strides: an output too large for 64 bits is refused by its
    // tensor check, not by an overflow here.
    let mut acc = 1i64;
    strides[1] = acc;
    acc = acc.saturating_mul(dims[1]);
    for i in (2..r).rev() {
        strides[i] = acc;
        acc = acc.saturating_mul(dims[i]);
    }
    strides[0] = acc;
    strides
}

/// numpy broadcast of several shapes, or the first incompatible pair.
pub fn broadcast(shapes: &[Vec<i64>]) -> Result<Vec<i64>, String> {
    let rank = shapes.iter().map(Vec::len).max().unwrap_or(0);
    let mut out = vec![1i64; rank];
    for s in shapes {
        let off = rank - s.len();
        for (i, &d) in s.iter().enumerate() {
            let o = &mut out[off + i];
            if *o == 1 {
                *o = d;
            } else if d != 1 && d != *o {
                return Err(format!(
                    "shapes {:?} do not broadcast (axis {} has {} and {})",
                    shapes,
                    off + i,
                    *o,
                    d
                ));
            }
        }
    }
    Ok(out)
}

/// Infers one output of a node.
pub fn infer_output(g: &Graph, n: &Node, out: &OutSpec) -> InferResult {
    let c = Ctx { g, n };
    infer_rule(&c, &out.shape)
}

fn infer_rule(c: &Ctx<'_>, rule: &ShapeRule) -> InferResult {
    Ok(match rule {
        ShapeRule::Given => None,
        ShapeRule::SameAs(p) => match (c.dims(p), c.strides(p)) {
            (Some(d), Some(s)) => Some((d, s)),
            _ => None,
        },
        ShapeRule::Scalar4 => packed(vec![1, 1, 1, 1]),
        ShapeRule::Broadcast => {
            let mut shapes = Vec::new();
            for uid in c.n.inputs.values() {
                match c.g.tensor(*uid) {
                    Some(t) if !t.dims.is_empty() => shapes.push(t.dims.clone()),
                    _ => return Ok(None),
                }
            }
            if shapes.is_empty() {
                return Ok(None);
            }
            let dims = broadcast(&shapes)?;
            let strides =
                c.n.inputs
                    .values()
                    .filter_map(|u| c.g.tensor(*u))
                    .find(|t| t.dims == dims && t.strides.len() == dims.len())
                    .map(|t| t.strides.clone())
                    .unwrap_or_else(|| row_major_strides(&dims));
            Some((dims, strides))
        }
        ShapeRule::Matmul(a, b) => {
            let (Some(a), Some(b)) = (c.dims(a), c.dims(b)) else {
                return Ok(None);
            };
            if a.len() < 2 || b.len() < 2 {
                return Err("matmul operands need rank >= 2".into());
            }
            let mut dims = broadcast(&[a[..a.len() - 2].to_vec(), b[..b.len() - 2].to_vec()])?;
            dims.push(a[a.len() - 2]);
            dims.push(b[b.len() - 1]);
            packed(dims)
        }
        ShapeRule::ConvFprop => {
            let (Some(x), Some(w)) = (c.dims("image"), c.dims("weight")) else {
                return Ok(None);
            };
            let spatial = x.len().saturating_sub(2);
            if x.len() < 3 || w.len() != x.len() {
                return Err("conv_fprop image and weight need the same rank >= 3".into());
            }
            let pre = conv_list(c.n, &["pre_padding", "padding"], spatial, 0);
            let post = conv_list(c.n, &["post_padding", "padding"], spatial, 0);
            let stride = conv_list(c.n, &["stride"], spatial, 1);
            let dil = conv_list(c.n, &["dilation"], spatial, 1);
            let mut dims = vec![x[0], w[0]];
            for i in 0..spatial {
                // x + pre + post − dil·(w − 1) − 1, in 64 bits or refused.
                let eff = dil[i]
                    .checked_mul(w[i + 2] - 1)
                    .and_then(|span| {
                        x[i + 2]
                            .checked_add(pre[i])?
                            .checked_add(post[i])?
                            .checked_sub(span)?
                            .checked_sub(1)
                    })
                    .ok_or_else(|| {
                        format!(
                            "conv_fprop spatial axis {i}: padding, dilation and sizes overflow 64 bits"
                        )
                    })?;
                if eff < 0 || stride[i] <= 0 {
                    return Err(format!(
                        "conv_fprop spatial axis {i} yields an empty output"
                    ));
                }
                dims.push(1 + eff / stride[i]);
            }
            let s = nhwc_strides(&dims);
            Some((dims, s))
        }
        ShapeRule::NormStats => {
            let Some(x) = c.dims("input") else {
                return Ok(None);
            };
            // Axis 0 and the axes `scale` does not span (an unusable `scale`: axis 0 alone).
            match c.dims("scale") {
                Some(s) if s.len() == x.len() => kept_axes(&x, |i| i == 0 || s[i] == 1),
                _ => kept_axes(&x, |i| i == 0),
            }
        }
        ShapeRule::InstanceStats => {
            let Some(x) = c.dims("input") else {
                return Ok(None);
            };
            kept_axes(&x, |i| i < 2)
        }
        ShapeRule::Genstats => {
            let Some(x) = c.dims("input") else {
                return Ok(None);
            };
            kept_axes(&x, |i| i == 1)
        }
        ShapeRule::Slice => {
            let (Some(x), Some(xs)) = (c.dims("input"), c.strides("input")) else {
                return Ok(None);
            };
            let Some(sl) = c.n.attr_ints("slices") else {
                return Ok(None);
            };
            if sl.len() != 3 * x.len() {
                return Err(format!(
                    "slices must hold (start, limit, step) per axis: {} values for rank {}",
                    3 * x.len(),
                    x.len()
                ));
            }
            let mut dims = Vec::new();
            let mut strides = Vec::new();
            for i in 0..x.len() {
                let (start, limit, step) = (sl[3 * i], sl[3 * i + 1].min(x[i]), sl[3 * i + 2]);
                if step <= 0 || start < 0 || limit <= start {
                    return Err(format!(
                        "slice axis {i}: need 0 <= start < limit and step > 0"
                    ));
                }
                // ceil((limit − start) / step) without forming limit − start + step − 1.
                let span = limit - start;
                dims.push(span / step + i64::from(span % step != 0));
                strides.push(xs[i].saturating_mul(step));
            }
            Some((dims, strides))
        }
        ShapeRule::Transpose => {
            let Some(x) = c.dims("input") else {
                return Ok(None);
            };
            let Some(p) = c.n.attr_ints("permutation") else {
                return Ok(None);
            };
            let mut seen = vec![false; x.len()];
            let mut dims = Vec::new();
            for &a in &p {
                let Some(slot) = usize::try_from(a).ok().filter(|&a| a < x.len()) else {
                    return Err(format!("permutation entry {a} out of range"));
                };
                if std::mem::replace(&mut seen[slot], true) {
                    return Err(format!("permutation repeats axis {a}"));
                }
                dims.push(x[slot]);
            }
            if dims.len() != x.len() {
                return Err("permutation must name every axis once".into());
            }
            packed(dims)
        }
        ShapeRule::Concatenate => {
            let items = c.n.list_inputs("inputs");
            let mut dims: Option<Vec<i64>> = None;
            let axis = c.n.attr_int("axis").unwrap_or(0);
            for uid in items {
                let Some(t) = c.g.tensor(uid).filter(|t| !t.dims.is_empty()) else {
                    return Ok(None);
                };
                let a = usize::try_from(if axis < 0 {
                    t.dims.len() as i64 + axis
                } else {
                    axis
                })
                .ok()
                .filter(|&a| a < t.dims.len())
                .ok_or_else(|| format!("axis {axis} out of range"))?;
                match &mut dims {
                    None => dims = Some(t.dims.clone()),
                    Some(d) => {
                        d[a] = d[a].checked_add(t.dims[a]).ok_or_else(|| {
                            format!("the concatenated axis {axis} overflows 64 bits")
                        })?
                    }
                }
            }
            dims.and_then(packed)
        }
        ShapeRule::BlockScale => {
            let Some(x) = c.dims("input") else {
                return Ok(None);
            };
            let Some(bs) = c.n.attr_int("block_size").filter(|b| *b > 0) else {
                return Ok(None);
            };
            let axis = c.n.attr_int("axis").unwrap_or(-1);
            let a = if axis < 0 {
                x.len() as i64 + axis
            } else {
                axis
            };
            let Some(a) = usize::try_from(a).ok().filter(|&a| a < x.len()) else {
                return Err(format!("axis {axis} out of range"));
            };
            let mut dims = x;
            dims[a] = dims[a] / bs + i64::from(dims[a] % bs != 0);
            packed(dims)
        }
        ShapeRule::SdpaO => {
            let (Some(q), Some(vd)) = (c.dims("q"), c.dim("v", -1)) else {
                return Ok(None);
            };
            let mut d = q[..q.len() - 1].to_vec();
            d.push(vd);
            packed(d)
        }
        ShapeRule::SdpaStats | ShapeRule::LastDimOne("q") => {
            let Some(q) = c.dims("q") else {
                return Ok(None);
            };
            let mut d = q[..q.len() - 1].to_vec();
            d.push(1);
            packed(d)
        }
        ShapeRule::LastDimOne(p) => {
            let Some(x) = c.dims(p) else {
                return Ok(None);
            };
            let mut d = x;
            if let Some(l) = d.last_mut() {
                *l = 1;
            }
            packed(d)
        }
        ShapeRule::MoeGroupedMatmul => {
            let Some(n) = c.dim("weight", -1) else {
                return Ok(None);
            };
            let mode = c.n.attr_str("mode").unwrap_or_default();
            let rows_port = match mode.as_str() {
                "GATHER" => "token_index",
                "COMBINE" => "top_k_scores",
                _ => "token",
            };
            let Some(r) = c.dims(rows_port) else {
                return Ok(None);
            };
            let rows = if r.len() >= 3 { r[1] } else { r[0] };
            packed(vec![1, rows, n])
        }
        ShapeRule::MoeGroupedMatmulBwd => {
            let (Some(e), Some(h), Some(nn)) = (
                c.dims("first_token_offset")
                    .map(|d| saturating_element_count(&d)),
                c.dim("token", -1),
                c.dim("doutput", -1),
            ) else {
                return Ok(None);
            };
            packed(vec![e, h, nn])
        }
        ShapeRule::LaOutput => {
            let (Some(t), Some(ho), Some(v)) = (c.dim("q", 0), c.dim("g", 1), la_v(c)) else {
                return Ok(None);
            };
            packed(vec![t, ho, v])
        }
        ShapeRule::LaState => {
            if c.n.input("state_indices").is_some() {
                return infer_rule(c, &ShapeRule::SameAs("initial_state"));
            }
            let (Some(n), Some(ho), Some(v), Some(k)) =
                (la_n(c), c.dim("g", 1), la_v(c), c.dim("k", -1))
            else {
                return Ok(None);
            };
            packed(vec![n, ho, v, k])
        }
        ShapeRule::LaTransition => {
            let (Some(n), Some(ho), Some(k)) = (la_n(c), c.dim("g", 1), c.dim("k", -1)) else {
                return Ok(None);
            };
            packed(vec![n, ho, k, k])
        }
        ShapeRule::LaTransitionScalar => {
            let (Some(n), Some(ho)) = (la_n(c), c.dim("g", 1)) else {
                return Ok(None);
            };
            packed(vec![n, ho])
        }
        ShapeRule::LaCheckpoints => {
            let (Some(n), Some(ho), Some(v), Some(k), Some(kd)) =
                (la_n(c), c.dim("g", 1), la_v(c), c.dim("k", -1), c.dims("k"))
            else {
                return Ok(None);
            };
            let every = c.n.attr_int("checkpoint_every_n_tokens").unwrap_or(0);
            if every <= 0 {
                return Ok(None);
            }
            let rows = la_expanded_rows(&kd);
            packed(vec![(rows / every).saturating_add(n).max(1), ho, v, k])
        }
        ShapeRule::LaChunkFactors => {
            let (Some(n), Some(ho), Some(t), Some(v)) =
                (la_n(c), c.dim("g", 1), c.dim("q", 0), la_v(c))
            else {
                return Ok(None);
            };
            let every = c.n.attr_int("checkpoint_every_n_tokens").unwrap_or(0);
            packed(vec![
                gdn_chunk_factor_rows(t, n),
                ho,
                gdn_chunk_factor_bytes(v, every),
            ])
        }
    })
}

/// Bytes per (chunk slot, head) of GDN's `chunk_factors` (a dnnplan extension, session 37): what a
/// training forward saves so that its backward skips recomputing them — the chunk's 64 × 64
/// factors `T` and `A` in the 2-byte io dtype (8,192 B each) and 385 fp32 values (four per-token
/// scalars, `Γ` and `β` per token, `Γ_last`). The layout inside is the engine's own
/// (`engines::gdn::chunk_factors`); only its size is part of the graph.
pub const GDN_CHUNK_FACTOR_BYTES: i64 = 2 * 64 * 64 * 2 + (4 * 64 + 2 * 64 + 1) * 4;

/// Bytes per (chunk slot, head) of the chunk's `U` tile (64 tokens × `v` values in the 2-byte io
/// dtype) that `chunk_factors` also holds when the forward checkpoints every chunk (session 38).
pub fn gdn_chunk_u_bytes(v: i64) -> i64 {
    v.saturating_mul(64 * 2)
}

/// Bytes per (chunk slot, head) of GDN's `chunk_factors` for value dim `v` and
/// `checkpoint_every_n_tokens = every`: [`GDN_CHUNK_FACTOR_BYTES`], plus [`gdn_chunk_u_bytes`]
/// at `every = 64`. A forward that checkpoints the state entering every chunk and saves the
/// factors also saves each chunk's `U` tile, so that a backward given both replays nothing (the
/// forward's states and `U` are the replay's outputs).
pub fn gdn_chunk_factor_bytes(v: i64, every: i64) -> i64 {
    GDN_CHUNK_FACTOR_BYTES.saturating_add(if every == 64 { gdn_chunk_u_bytes(v) } else { 0 })
}

/// The chunk slots a `chunk_factors` tensor has room for: `max(T / 64 + N, 1)` (every sequence's
/// last chunk may be partial), saturating at `i64::MAX` (the engine declines such counts).
pub fn gdn_chunk_factor_rows(total_tokens: i64, n_seqs: i64) -> i64 {
    (total_tokens / 64).saturating_add(n_seqs).max(1)
}

/// Rows of a linear-attention token tensor on the expanded timeline (`[T, n, H, D]` → `T·n`,
/// saturating).
pub fn la_expanded_rows(dims: &[i64]) -> i64 {
    if dims.len() >= 4 {
        dims[0].saturating_mul(dims[1])
    } else {
        dims.first().copied().unwrap_or(0)
    }
}

fn la_n(c: &Ctx<'_>) -> Option<i64> {
    c.dim("cu_seqlens", 0).map(|d| d.saturating_sub(1))
}

fn la_v(c: &Ctx<'_>) -> Option<i64> {
    c.dim("v", -1).or_else(|| c.dim("dO", -1))
}

fn conv_list(n: &Node, names: &[&str], spatial: usize, default: i64) -> Vec<i64> {
    names
        .iter()
        .find_map(|name| n.attr_ints(name))
        .filter(|v| v.len() == spatial)
        .unwrap_or_else(|| vec![default; spatial])
}
