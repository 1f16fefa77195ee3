//! Evaluation of the op tables' validity rules ([`Rule`]) against a node: each rule kind is one
//! arm of [`check_rule`], which returns the port it concerns and the message when broken. Rules
//! whose ports are unbound do not apply (presence is checked separately).

use super::cond::holds;
use super::graph::Graph;
use super::infer::{broadcast, la_expanded_rows};
use super::node::Node;
use super::op::{DimRef, Rule};

/// A broken rule: the port (or attribute) it concerns, if any, and the message.
pub type Violation = (Option<String>, String);

fn dims_of<'g>(g: &'g Graph, n: &Node, port: &str) -> Option<&'g [i64]> {
    g.port_tensor(n, port)
        .map(|t| t.dims.as_slice())
        .filter(|d| !d.is_empty())
}

fn dim_at(g: &Graph, n: &Node, r: DimRef) -> Option<i64> {
    let d = dims_of(g, n, r.0)?;
    let i = if r.1 < 0 { d.len() as i64 + r.1 } else { r.1 };
    d.get(usize::try_from(i).ok()?).copied()
}

fn axis_name(r: DimRef) -> String {
    format!("dim {} of `{}`", r.1, r.0)
}

/// Checks one rule; `Some(violation)` when broken.
pub fn check_rule(g: &Graph, n: &Node, rule: &Rule) -> Option<Violation> {
    let port = |p: &str| Some(p.to_owned());
    match rule {
        Rule::Msg(inner, msg) => check_rule(g, n, inner).map(|(p, _)| (p, (*msg).to_owned())),
        Rule::Implies(a, b) => (holds(a, n) && !holds(b, n)).then(|| {
            (
                b.subject().or(a.subject()).map(str::to_owned),
                format!("{} requires {}", a.describe(), b.describe()),
            )
        }),
        Rule::Excludes(a, b) => (holds(a, n) && holds(b, n)).then(|| {
            (
                b.subject().map(str::to_owned),
                format!("{} and {} cannot both hold", a.describe(), b.describe()),
            )
        }),
        Rule::ExactlyOne(a, b) => (holds(a, n) == holds(b, n)).then(|| {
            (
                a.subject().map(str::to_owned),
                format!(
                    "exactly one of {} / {} must hold",
                    a.describe(),
                    b.describe()
                ),
            )
        }),
        Rule::Rank(p, r) => {
            let d = dims_of(g, n, p)?;
            (d.len() != *r).then(|| {
                (
                    port(p),
                    format!("must have rank {r} (has rank {})", d.len()),
                )
            })
        }
        Rule::RankIn(p, lo, hi) => {
            let d = dims_of(g, n, p)?;
            (d.len() < *lo || d.len() > *hi).then(|| {
                (
                    port(p),
                    format!("must have rank {lo}..={hi} (has rank {})", d.len()),
                )
            })
        }
        Rule::DimEq(a, b) => {
            let (x, y) = (dim_at(g, n, *a)?, dim_at(g, n, *b)?);
            (x != y).then(|| {
                (
                    port(a.0),
                    format!("{} ({x}) must equal {} ({y})", axis_name(*a), axis_name(*b)),
                )
            })
        }
        Rule::DimEqOffset(a, b, off) => {
            let (x, y) = (dim_at(g, n, *a)?, dim_at(g, n, *b)?);
            (x != y + off).then(|| {
                (
                    port(a.0),
                    format!(
                        "{} ({x}) must equal {} ({y}) + ({off})",
                        axis_name(*a),
                        axis_name(*b)
                    ),
                )
            })
        }
        Rule::DimDivisible(a, b) => {
            let (x, y) = (dim_at(g, n, *a)?, dim_at(g, n, *b)?);
            (y <= 0 || x % y != 0).then(|| {
                (
                    port(a.0),
                    format!(
                        "{} ({x}) must be a multiple of {} ({y})",
                        axis_name(*a),
                        axis_name(*b)
                    ),
                )
            })
        }
        Rule::LastStrideOne(p) => {
            let t = g.port_tensor(n, p)?;
            (t.strides.last() != Some(&1)).then(|| {
                (
                    port(p),
                    format!("innermost stride must be 1 (strides {:?})", t.strides),
                )
            })
        }
        Rule::DtypeIn(p, allowed) => {
            let t = g.port_tensor(n, p)?;
            (!allowed.contains(&t.data_type)).then(|| {
                let names: Vec<&str> = allowed.iter().map(|d| d.name()).collect();
                (
                    port(p),
                    format!(
                        "data type {} is not one of {}",
                        t.data_type,
                        names.join(", ")
                    ),
                )
            })
        }
        Rule::DtypeNot(p, d) => {
            let t = g.port_tensor(n, p)?;
            (t.data_type == *d).then(|| (port(p), format!("data type {d} is not allowed")))
        }
        Rule::SameDtype(a, b) => {
            let (x, y) = (g.port_tensor(n, a)?, g.port_tensor(n, b)?);
            (x.data_type != y.data_type).then(|| {
                (
                    port(a),
                    format!(
                        "data type {} must equal that of `{b}` ({})",
                        x.data_type, y.data_type
                    ),
                )
            })
        }
        Rule::AttrMin(a, min) => {
            let v = n.attr(a)?.as_float()?;
            (v < *min).then(|| {
                (
                    port(a),
                    format!("attribute `{a}` must be >= {min} (got {v})"),
                )
            })
        }
        Rule::AttrBelow(a, max) => {
            let v = n.attr(a)?.as_float()?;
            (v >= *max).then(|| {
                (
                    port(a),
                    format!("attribute `{a}` must be < {max} (got {v})"),
                )
            })
        }
        Rule::ListLenIsRank(a, p) => {
            let v = n.attr_ints(a)?;
            let d = dims_of(g, n, p)?;
            (v.len() != d.len()).then(|| {
                (
                    port(a),
                    format!(
                        "attribute `{a}` must have one entry per axis of `{p}` ({} entries, rank {})",
                        v.len(),
                        d.len()
                    ),
                )
            })
        }
        Rule::MatmulShapes(a, b) => {
            let (x, y) = (dims_of(g, n, a)?, dims_of(g, n, b)?);
            if x.len() < 2 || y.len() < 2 {
                return Some((port(a), "matmul operands need rank >= 2".into()));
            }
            if x[x.len() - 1] != y[y.len() - 2] {
                return Some((
                    port(b),
                    format!(
                        "inner dims differ: `{a}`[-1] = {} but `{b}`[-2] = {}",
                        x[x.len() - 1],
                        y[y.len() - 2]
                    ),
                ));
            }
            broadcast(&[x[..x.len() - 2].to_vec(), y[..y.len() - 2].to_vec()])
                .err()
                .map(|why| (port(b), format!("batch dims: {why}")))
        }
        Rule::Broadcastable => {
            let shapes: Vec<Vec<i64>> = n
                .inputs
                .values()
                .filter_map(|u| g.tensor(*u))
                .map(|t| t.dims.clone())
                .collect();
            broadcast(&shapes).err().map(|why| (None, why))
        }
        Rule::ConcatShapes => {
            let items = n.list_inputs("inputs");
            let first = g.tensor(*items.first()?)?.dims.clone();
            let axis = n.attr_int("axis").unwrap_or(0);
            let a = if axis < 0 {
                first.len() as i64 + axis
            } else {
                axis
            };
            if a < 0 || a as usize >= first.len() {
                return Some((
                    port("axis"),
                    format!("axis {axis} out of range for rank {}", first.len()),
                ));
            }
            for (k, uid) in items.iter().enumerate().skip(1) {
                let d = &g.tensor(*uid)?.dims;
                let same = d.len() == first.len()
                    && d.iter()
                        .zip(&first)
                        .enumerate()
                        .all(|(i, (x, y))| i == a as usize || x == y);
                if !same {
                    return Some((
                        Some(format!("inputs_{k}")),
                        format!("dims {d:?} must match inputs_0 {first:?} off axis {axis}"),
                    ));
                }
            }
            None
        }
        Rule::OutputVirtual(p) => {
            let t = g.port_tensor(n, p)?;
            (!t.is_virtual).then(|| (port(p), "output must stay virtual (an intermediate)".into()))
        }
        Rule::SameElementCount(a, b) => {
            let (x, y) = (g.port_tensor(n, a)?, g.port_tensor(n, b)?);
            (!x.dims.is_empty() && !y.dims.is_empty() && x.element_count() != y.element_count())
                .then(|| {
                    (
                        port(b),
                        format!(
                            "{} elements must equal the {} of `{a}`",
                            y.element_count(),
                            x.element_count()
                        ),
                    )
                })
        }
        Rule::LaHeads => la_heads(g, n),
        Rule::LaRows => la_rows(g, n),
        Rule::LaGradPresence => {
            for (input, grad) in [
                ("initial_state", "d_initial_state"),
                ("a_log", "d_a_log"),
                ("dt_bias", "d_dt_bias"),
                ("a", "dA"),
                ("d", "dD"),
                ("z", "dZ"),
            ] {
                let (Some(i), Some(o)) = (dims_of(g, n, input), dims_of(g, n, grad)) else {
                    continue;
                };
                if i != o {
                    return Some((
                        port(grad),
                        format!("dims {o:?} must equal those of `{input}` {i:?}"),
                    ));
                }
            }
            None
        }
    }
}

/// Heads of a linear-attention token tensor (`[T, H, D]` or `[T, n, H, D]`).
fn la_heads_of(d: &[i64]) -> i64 {
    d[d.len().saturating_sub(2)]
}

fn la_heads(g: &Graph, n: &Node) -> Option<Violation> {
    let port = |p: &str| Some(p.to_owned());
    let ho = dim_at(g, n, ("g", 1))?;
    let hk = dims_of(g, n, "k").map(la_heads_of);
    let hq = dims_of(g, n, "q").map(la_heads_of);
    let hv = dims_of(g, n, "v").map(la_heads_of);
    // Summaries lack q (forward) or v (backward): k stands for the query side when q is absent.
    let (q_port, h) = match (hq, hk) {
        (Some(h), _) => ("q", h),
        (None, Some(k)) => ("k", k),
        (None, None) => return None,
    };
    match hv {
        Some(v) => {
            let (lo, hi) = (h.min(v), h.max(v));
            if h != v && (lo <= 0 || hi % lo != 0) {
                return Some((
                    port("v"),
                    format!("heads of {q_port} ({h}) and v ({v}) must divide one another"),
                ));
            }
            if ho != hi {
                return Some((
                    port("g"),
                    format!("gates must carry HO = max(H, HV) = {hi} heads (g has {ho})"),
                ));
            }
        }
        None if h <= 0 || ho % h != 0 => {
            return Some((
                port("g"),
                format!("gate heads ({ho}) must be a multiple of the heads of {q_port} ({h})"),
            ));
        }
        None => {}
    }
    if let (Some(k), Some(_)) = (hk, hq) {
        let v_side = hv.unwrap_or(ho);
        if k != h && k != v_side {
            return Some((
                port("k"),
                format!("heads of k ({k}) must equal those of q ({h}) or v ({v_side})"),
            ));
        }
    }
    let is_gdp = n.op.name().starts_with("gdp");
    for p in ["beta", "w"] {
        let Some(d) = dims_of(g, n, p) else { continue };
        let axis = if is_gdp && p == "beta" && d.len() == 3 {
            2
        } else {
            1
        };
        // A tensor without that axis breaks its rank rule, which names it.
        let Some(&heads) = d.get(axis) else { continue };
        if heads != ho {
            return Some((port(p), format!("must carry HO = {ho} heads (has {heads})")));
        }
    }
    None
}

fn la_rows(g: &Graph, n: &Node) -> Option<Violation> {
    let port = |p: &str| Some(p.to_owned());
    let is_gdp = n.op.name().starts_with("gdp");
    let hh = if is_gdp {
        n.attr_int("num_householder").unwrap_or(1)
    } else {
        1
    };
    let q_rows = dims_of(g, n, "q")
        .map(|d| d[0])
        .or_else(|| dims_of(g, n, "g").map(|d| d[0]))?;
    for p in ["g", "dO"] {
        if let Some(d) = dims_of(g, n, p)
            && d[0] != q_rows
        {
            return Some((
                port(p),
                format!("rows ({}) must equal the token rows ({q_rows})", d[0]),
            ));
        }
    }
    for p in ["k", "v", "beta", "w"] {
        let Some(d) = dims_of(g, n, p) else { continue };
        let ok = if is_gdp {
            Some(la_expanded_rows(d)) == q_rows.checked_mul(hh)
                && (d.len() < 4 || d[1] == hh || p == "beta")
                || (p == "beta" && d.len() == 3 && d[0] == q_rows && d[1] == hh)
        } else {
            d[0] == q_rows
        };
        if !ok {
            let want = if is_gdp {
                format!("{q_rows}·{hh} expanded rows or [{q_rows}, {hh}, ...]")
            } else {
                q_rows.to_string()
            };
            return Some((port(p), format!("rows {:?} must be {want}", d)));
        }
    }
    None
}
