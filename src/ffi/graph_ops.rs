//! C API of the graph IR, part 4: typed helpers for the common ops — matmul, pointwise, sdpa,
//! sdpa_backward, gdn, gdn_bwd. Each is one call over the same path as the generic builder
//! (`NodeBuilder` → `Graph::add_node`); anything beyond their parameters uses the builder.
//! Optional tensor arguments take `-1` for "none"; absent conditional outputs are written as `-1`.

use std::ffi::c_char;

use super::boundary::{boundary, c_str};
use super::graph::{data_type, dnnp_data_type_t, dnnp_graph_t, graph_mut, opt_str};
use super::types::dnnp_status_t;
use crate::error::Result;
use crate::ir::{Graph, NodeBuilder};

/// The body of every typed helper: borrows `graph`, builds the node with `build`, adds it (named
/// `name` when not NULL) and writes each requested output's uid (-1 if absent), inside
/// [`boundary`].
///
/// # Safety
/// `graph` NULL or live; `name` NULL or a string; every `outs` pointer NULL (refused) or valid for
/// one write; `build` runs under the entry point's contract.
#[track_caller]
unsafe fn add_node(
    graph: *mut dnnp_graph_t,
    name: *const c_char,
    compute: dnnp_data_type_t,
    outs: &[(&str, &'static str, *mut i64)],
    build: impl FnOnce() -> Result<NodeBuilder>,
) -> dnnp_status_t {
    boundary(|| {
        // SAFETY: per the contract.
        let g = unsafe { graph_mut(graph) }?;
        let b = build()?;
        // SAFETY: per the contract.
        unsafe { add(g, b, name, compute, outs) }
    })
}

/// Adds `b` (named `name` when not NULL) and writes each requested output's uid (-1 if absent).
///
/// # Safety
/// `name` NULL or a string; every `outs` pointer valid for one write (checked non-NULL first).
unsafe fn add(
    g: &mut Graph,
    mut b: NodeBuilder,
    name: *const c_char,
    compute: dnnp_data_type_t,
    outs: &[(&str, &'static str, *mut i64)],
) -> Result<()> {
    if let Some((_, arg, _)) = outs.iter().find(|(_, _, p)| p.is_null()) {
        return Err(crate::Error::NullArgument(arg));
    }
    // SAFETY: per the contract.
    if let Some(n) = unsafe { opt_str(name, "name") }? {
        b = b.name(n);
    }
    b = b.compute(data_type(compute, "compute")?);
    let idx = g.add_node(b)?;
    let node = &g.nodes()[idx];
    for (port, _, p) in outs {
        // SAFETY: checked non-NULL above.
        unsafe { p.write(node.output(port).unwrap_or(-1)) };
    }
    Ok(())
}

/// The op `op` with `uids[i]` bound to `ports[i]`, in order.
fn node_with<const N: usize>(op: &str, ports: [&str; N], uids: [i64; N]) -> Result<NodeBuilder> {
    let nb = NodeBuilder::by_name(op)?;
    let bound = ports.into_iter().zip(uids);
    Ok(bound.fold(nb, |nb, (port, uid)| nb.input(port, uid)))
}

/// The GDN op `op` (`gdn` or `gdn_bwd`) with the inputs both directions take, in port order:
/// `q, k, v, g, beta, cu_seqlens`.
fn gdn_node(op: &str, [q, k, v, g, beta, cu_seqlens]: [i64; 6]) -> Result<NodeBuilder> {
    let ports = ["q", "k", "v", "g", "beta", "cu_seqlens"];
    node_with(op, ports, [q, k, v, g, beta, cu_seqlens])
}

/// Binds `port` unless `uid` is `-1` (none).
fn opt_input(b: NodeBuilder, port: &str, uid: i64) -> NodeBuilder {
    if uid == -1 { b } else { b.input(port, uid) }
}

/// Sets the scale attribute `name` when `value > 0`; `<= 0` leaves it unset (the op's default).
fn opt_scale(b: NodeBuilder, name: &str, value: f64) -> NodeBuilder {
    if value > 0.0 { b.float(name, value) } else { b }
}

/// `C = A @ B` (batch dims broadcast). `compute` may be `DNNP_DATA_TYPE_NOT_SET` (context).
///
/// # Safety
/// `graph` live; `name` NULL or a string; `out_c` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_matmul(
    graph: *mut dnnp_graph_t,
    a: i64,
    b: i64,
    compute: dnnp_data_type_t,
    name: *const c_char,
    out_c: *mut i64,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    unsafe {
        add_node(graph, name, compute, &[("C", "out_c", out_c)], || {
            node_with("matmul", ["A", "B"], [a, b])
        })
    }
}

/// A pointwise op by builder name (`"add"`, `"relu"`, `"cmp_ge"`, `"binary_select"`, ...) with up to
/// three positional tensor inputs (`-1` for unused ones, in the op's port order: `dnnplan ops`).
///
/// # Safety
/// `graph` live; `op` a string; `name` NULL or a string; `out` valid for one write.
#[unsafe(no_mangle)]
pub unsafe extern "C" fn dnnp_graph_pointwise(
    graph: *mut dnnp_graph_t,
    op: *const c_char,
    in0: i64,
    in1: i64,
    in2: i64,
    compute: dnnp_data_type_t,
    name: *const c_char,
    out: *mut i64,
) -> dnnp_status_t {
    // SAFETY: per the contract.
    unsafe {
        add_node(graph, name, compute, &[("OUT_0", "out", out)], || {
            pointwise_node(c_str(op, "op")?, [in0, in1, in2])
        })
    }
}

/// The pointwise op `op` with its positional inputs (`-1`: unused).
fn pointwise_node(op: &str, given: [i64; 3]) -> Result<NodeBuilder> {
    let mut nb = NodeBuilder::by_name(op)?;
    if nb.op.family() != crate::ir::OpFamily::Pointwise {
        return Err(crate::Error::bad_param(
            "op",
            format!("`{op}` is not a pointwise op"),
        ));
    }
    let ports = &nb.op.spec().inputs;
    let given = given.into_iter().enumerate();
    for (i, uid) in given.filter(|&(_, uid)| uid != -1) {
        let port = ports.get(i).ok_or_else(|| {
            crate::Error::bad_param(
                format!("in{i}"),
                format!("`{op}` takes {} inputs", ports.len()),
            )
        })?;
        nb = nb.input(port.name, uid);
    }
    Ok(nb)
}

/// SDPA forward: `q`, `k`, `v` (BHSD), `attn_scale` (> 0; `<= 0` leaves it unset), causal
/// (top-left) mask, `generate_stats`. Writes `O` and `Stats` (-1 when not generated).
///
/// # Safety
/// `graph` live; `name` NULL or a string; outputs valid for one write.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn dnnp_graph_sdpa(
    graph: *mut dnnp_graph_t,
    q: i64,
    k: i64,
    v: i64,
    attn_scale: f64,
    use_causal_mask: bool,
    generate_stats: bool,
    name: *const c_char,
    out_o: *mut i64,
    out_stats: *mut i64,
) -> dnnp_status_t {
    let outs = [("O", "out_o", out_o), ("Stats", "out_stats", out_stats)];
    // SAFETY: per the contract.
    unsafe {
        add_node(graph, name, 0, &outs, || {
            let nb = node_with("sdpa", ["q", "k", "v"], [q, k, v])?
                .bool("generate_stats", generate_stats)
                .bool("use_causal_mask", use_causal_mask);
            Ok(opt_scale(nb, "attn_scale", attn_scale))
        })
    }
}

/// SDPA backward from `q, k, v, o, dO, stats` with the forward's `attn_scale` (`<= 0`: unset) and
/// causal flag. Writes `dQ`, `dK`, `dV`.
///
/// # Safety
/// `graph` live; `name` NULL or a string; outputs valid for one write.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn dnnp_graph_sdpa_backward(
    graph: *mut dnnp_graph_t,
    q: i64,
    k: i64,
    v: i64,
    o: i64,
    d_o: i64,
    stats: i64,
    attn_scale: f64,
    use_causal_mask: bool,
    name: *const c_char,
    out_dq: *mut i64,
    out_dk: *mut i64,
    out_dv: *mut i64,
) -> dnnp_status_t {
    let outs = [
        ("dQ", "out_dq", out_dq),
        ("dK", "out_dk", out_dk),
        ("dV", "out_dv", out_dv),
    ];
    // SAFETY: per the contract.
    unsafe {
        add_node(graph, name, 0, &outs, || {
            let ports = ["q", "k", "v", "o", "dO", "stats"];
            let nb = node_with("sdpa_backward", ports, [q, k, v, o, d_o, stats])?
                .bool("use_causal_mask", use_causal_mask);
            Ok(opt_scale(nb, "attn_scale", attn_scale))
        })
    }
}

/// GDN forward: `q, k, v, g, beta, cu_seqlens` (THD), optional `initial_state` (-1: none),
/// `scale` (`<= 0`: 1/sqrt(K)), `output_final_state`, `use_qk_l2norm`. Writes `O` and
/// `final_state` (-1 when not requested).
///
/// `cu_seqlens` holds `N + 1` offsets into the `T` token rows, `0 <= cu[0] <= ... <= cu[N] <= T`.
/// Its values live on the device and are not checked when executing; the engine runs offsets
/// that break the rule as `min(T, max(0, cu[0], ..., cu[i]))`, so such a call computes those
/// sequences and never touches memory outside the declared tensors.
///
/// # Safety
/// `graph` live; `name` NULL or a string; outputs valid for one write.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn dnnp_graph_gdn(
    graph: *mut dnnp_graph_t,
    q: i64,
    k: i64,
    v: i64,
    g: i64,
    beta: i64,
    cu_seqlens: i64,
    initial_state: i64,
    scale: f64,
    output_final_state: bool,
    use_qk_l2norm: bool,
    name: *const c_char,
    out_o: *mut i64,
    out_final_state: *mut i64,
) -> dnnp_status_t {
    let outs = [
        ("O", "out_o", out_o),
        ("final_state", "out_final_state", out_final_state),
    ];
    // SAFETY: per the contract.
    unsafe {
        add_node(graph, name, 0, &outs, || {
            let nb = gdn_node("gdn", [q, k, v, g, beta, cu_seqlens])?
                .bool("output_final_state", output_final_state)
                .bool("use_qk_l2norm", use_qk_l2norm);
            let nb = opt_input(nb, "initial_state", initial_state);
            Ok(opt_scale(nb, "scale", scale))
        })
    }
}

/// GDN backward: `q, k, v, g, beta, cu_seqlens, dO`, optional `initial_state` and `d_final_state`
/// (-1: none), `scale` (`<= 0`: 1/sqrt(K)), `use_qk_l2norm`. Writes `dQ, dK, dV, dG, dBeta` and
/// `d_initial_state` (-1 without `initial_state`).
///
/// `cu_seqlens` as for [`dnnp_graph_gdn`].
///
/// # Safety
/// `graph` live; `name` NULL or a string; outputs valid for one write.
#[unsafe(no_mangle)]
#[allow(clippy::too_many_arguments)]
pub unsafe extern "C" fn dnnp_graph_gdn_bwd(
    graph: *mut dnnp_graph_t,
    q: i64,
    k: i64,
    v: i64,
    g: i64,
    beta: i64,
    cu_seqlens: i64,
    d_o: i64,
    initial_state: i64,
    d_final_state: i64,
    scale: f64,
    use_qk_l2norm: bool,
    name: *const c_char,
    out_dq: *mut i64,
    out_dk: *mut i64,
    out_dv: *mut i64,
    out_dg: *mut i64,
    out_dbeta: *mut i64,
    out_d_initial_state: *mut i64,
) -> dnnp_status_t {
    let outs = [
        ("dQ", "out_dq", out_dq),
        ("dK", "out_dk", out_dk),
        ("dV", "out_dv", out_dv),
        ("dG", "out_dg", out_dg),
        ("dBeta", "out_dbeta", out_dbeta),
        (
            "d_initial_state",
            "out_d_initial_state",
            out_d_initial_state,
        ),
    ];
    // SAFETY: per the contract.
    unsafe {
        add_node(graph, name, 0, &outs, || {
            let nb = gdn_node("gdn_bwd", [q, k, v, g, beta, cu_seqlens])?
                .input("dO", d_o)
                .bool("use_qk_l2norm", use_qk_l2norm);
            let nb = opt_input(nb, "initial_state", initial_state);
            let nb = opt_input(nb, "d_final_state", d_final_state);
            Ok(opt_scale(nb, "scale", scale))
        })
    }
}
