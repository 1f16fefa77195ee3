//! One small, valid example graph per op of the catalogue, with the output dims expected from it
//! (written by hand, independently of the inference code). Used by the tests (inference, JSON
//! round trip, validation of every op), by `examples/graphs/` generation and as documentation of
//! how each op is wired.

use super::dtype::DataType::{self, *};
use super::enums::TensorReordering;
use super::graph::{Graph, GraphContext};
use super::node::NodeBuilder;
use super::op::{OpFamily, OpKind};
use super::tensor::{ScalarValue, Tensor};
use crate::error::Result;

/// An example graph of one op and the output dims it must infer.
pub struct OpExample {
    /// The graph (one node of the op, plus caller tensors).
    pub graph: Graph,
    /// Index of the node of interest.
    pub node: usize,
    /// Expected dims per output port.
    pub expect: Vec<(&'static str, Vec<i64>)>,
}

/// A graph under construction for an example.
struct Ex {
    g: Graph,
}

impl Ex {
    fn new(io: DataType) -> Ex {
        Ex {
            g: Graph::new(GraphContext::new(io, Float, Float)),
        }
    }

    fn t(&mut self, name: &str, dims: &[i64], dt: DataType) -> Result<i64> {
        self.g.add_tensor(Tensor::new(name, dims, dt))
    }

    /// Adds a caller tensor named after `port` and binds it there.
    fn bind(
        &mut self,
        b: NodeBuilder,
        port: &str,
        dims: &[i64],
        dt: DataType,
    ) -> Result<NodeBuilder> {
        let u = self.t(port, dims, dt)?;
        Ok(b.input(port, u))
    }

    fn scalar(&mut self, name: &str, v: f32) -> Result<i64> {
        self.g
            .add_tensor(Tensor::scalar(name, ScalarValue::Float(v)))
    }

    fn finish(
        mut self,
        b: NodeBuilder,
        expect: Vec<(&'static str, Vec<i64>)>,
    ) -> Result<OpExample> {
        let node = self.g.add_node(b)?;
        Ok(OpExample {
            graph: self.g,
            node,
            expect,
        })
    }
}

/// The example of the op named `op`.
pub fn example(op: &str) -> Result<OpExample> {
    let kind = OpKind::from_name(op).ok_or_else(|| crate::Error::NotFound {
        what: "op",
        key: op.to_owned(),
    })?;
    let b = NodeBuilder::new(kind);
    match kind.family() {
        OpFamily::Pointwise => pointwise(kind, b),
        OpFamily::Sdpa => sdpa(kind, b),
        OpFamily::LinearAttention => linear_attention(op, b),
        _ => structured(op, b),
    }
}

fn pointwise(kind: OpKind, mut b: NodeBuilder) -> Result<OpExample> {
    let mut e = Ex::new(Half);
    let spec = kind.spec();
    for (i, p) in spec.inputs.iter().enumerate() {
        // The second operand broadcasts: [1, 3, 1] against [2, 3, 4].
        let dims: &[i64] = if i == 1 { &[1, 3, 1] } else { &[2, 3, 4] };
        let dt = if p.name == "mask" { Boolean } else { Half };
        let uid = e.t(p.name, dims, dt)?;
        b = b.input(p.name, uid);
    }
    if spec.name.starts_with("leaky_relu") {
        b = b.float("negative_slope", 0.01);
    }
    e.finish(b, vec![("OUT_0", vec![2, 3, 4])])
}

fn structured(op: &str, b: NodeBuilder) -> Result<OpExample> {
    let mut e = Ex::new(Half);
    let x4 = [4, 32, 2, 2];
    let c4 = [1, 32, 1, 1];
    Ok(match op {
        "reduction" => {
            let x = e.t("x", &[2, 3, 4, 5], Half)?;
            let y = e.t("y", &[2, 3, 1, 1], Float)?;
            e.finish(
                b.input("input", x).output("OUT_0", y).str("mode", "ADD"),
                vec![("OUT_0", vec![2, 3, 1, 1])],
            )?
        }
        "matmul" => {
            let a = e.t("A", &[2, 8, 16], Half)?;
            let bb = e.t("B", &[1, 16, 32], Half)?;
            e.finish(b.input("A", a).input("B", bb), vec![("C", vec![2, 8, 32])])?
        }
        "matmul_fp8" => {
            let a = e.t("A", &[2, 8, 16], Fp8E4m3)?;
            let bb = e.t("B", &[2, 16, 32], Fp8E4m3)?;
            let da = e.t("descale_A", &[1, 1, 1], Float)?;
            let db = e.t("descale_B", &[1, 1, 1], Float)?;
            let sc = e.t("scale_C", &[1, 1, 1], Float)?;
            e.finish(
                b.input("A", a)
                    .input("B", bb)
                    .input("descale_A", da)
                    .input("descale_B", db)
                    .input("scale_C", sc),
                vec![("C", vec![2, 8, 32]), ("amax_C", vec![1, 1, 1, 1])],
            )?
        }
        "rmsnorm" | "layernorm" | "adalayernorm" | "instancenorm" => {
            let x = e.t("x", &x4, Half)?;
            let scale_dims: Vec<i64> = if op == "adalayernorm" {
                vec![4, 32, 1, 1]
            } else {
                c4.to_vec()
            };
            let s = e.t("scale", &scale_dims, Float)?;
            let eps = e.scalar("epsilon", 1e-5)?;
            let mut b = b
                .input("input", x)
                .input("scale", s)
                .input("epsilon", eps)
                .str("norm_forward_phase", "TRAINING");
            if op != "rmsnorm" {
                let bias = e.t("bias", &scale_dims, Float)?;
                b = b.input("bias", bias);
            }
            let stats = match op {
                "instancenorm" => vec![4, 32, 1, 1],
                _ => vec![4, 1, 2, 2],
            };
            let mut expect = vec![("Y", x4.to_vec()), ("inv_var", stats.clone())];
            if op != "rmsnorm" {
                expect.push(("mean", stats));
            }
            e.finish(b, expect)?
        }
        "rmsnorm_backward"
        | "layernorm_backward"
        | "adalayernorm_backward"
        | "instancenorm_backward" => {
            let dy = e.t("dy", &x4, Half)?;
            let x = e.t("x", &x4, Half)?;
            let s = e.t("scale", &c4, Float)?;
            let iv = e.t("inv_variance", &[4, 1, 1, 1], Float)?;
            let mut b = b
                .input("grad", dy)
                .input("input", x)
                .input("scale", s)
                .input("inv_variance", iv);
            if op == "rmsnorm_backward" {
                b = b.bool("has_dbias", true);
            } else {
                let m = e.t("mean", &[4, 1, 1, 1], Float)?;
                b = b.input("mean", m);
            }
            e.finish(
                b,
                vec![
                    ("DX", x4.to_vec()),
                    ("DScale", c4.to_vec()),
                    ("DBias", c4.to_vec()),
                ],
            )?
        }
        "batchnorm" => {
            let x = e.t("x", &x4, Half)?;
            let mut b = b.input("input", x);
            for p in ["scale", "bias", "in_running_mean", "in_running_var"] {
                b = e.bind(b, p, &c4, Float)?;
            }
            let eps = e.scalar("epsilon", 1e-5)?;
            let mom = e.scalar("momentum", 0.1)?;
            let peer = e.t("peer_stat", &[2, 32, 1, 1], Float)?;
            e.finish(
                b.input("epsilon", eps)
                    .input("momentum", mom)
                    .input("peer_stats_0", peer),
                vec![
                    ("Y", x4.to_vec()),
                    ("mean", c4.to_vec()),
                    ("inv_var", c4.to_vec()),
                    ("next_running_mean", c4.to_vec()),
                    ("next_running_var", c4.to_vec()),
                ],
            )?
        }
        "batchnorm_inference" => {
            let x = e.t("x", &x4, Half)?;
            let mut b = b.input("input", x);
            for p in ["mean", "inv_variance", "scale", "bias"] {
                b = e.bind(b, p, &c4, Float)?;
            }
            e.finish(b, vec![("Y", x4.to_vec())])?
        }
        "batchnorm_backward" => {
            let dy = e.t("dy", &x4, Half)?;
            let x = e.t("x", &x4, Half)?;
            let mut b = b.input("grad", dy).input("input", x);
            for p in ["scale", "mean", "inv_variance"] {
                b = e.bind(b, p, &c4, Float)?;
            }
            e.finish(
                b,
                vec![
                    ("DX", x4.to_vec()),
                    ("DScale", c4.to_vec()),
                    ("DBias", c4.to_vec()),
                ],
            )?
        }
        "genstats" => {
            let x = e.t("x", &x4, Half)?;
            e.finish(
                b.input("input", x),
                vec![("SUM", c4.to_vec()), ("SQ_SUM", c4.to_vec())],
            )?
        }
        "block_scale_dequantize" => {
            let x = e.t("x", &[4, 64], Fp8E4m3)?;
            let d = e.t("descale", &[4, 2], Fp8E8m0)?;
            e.finish(
                b.input("input", x)
                    .input("descale", d)
                    .ints("block_size", &[1, 32]),
                vec![("OUT_0", vec![4, 64])],
            )?
        }
        "block_scale_quantize" => {
            let x = e.t("x", &[4, 64], Bfloat16)?;
            e.finish(
                b.input("input", x).int("block_size", 32),
                vec![("Y", vec![4, 64]), ("scale", vec![4, 2])],
            )?
        }
        "moe_grouped_matmul" => {
            let tok = e.t("token", &[1, 16, 64], Half)?;
            let w = e.t("weight", &[4, 64, 128], Half)?;
            let off = e.t("first_token_offset", &[4, 1, 1], Int32)?;
            e.finish(
                b.input("token", tok)
                    .input("weight", w)
                    .input("first_token_offset", off)
                    .str("mode", "NONE"),
                vec![("OUT_0", vec![1, 16, 128])],
            )?
        }
        "moe_grouped_matmul_bwd" => {
            let dout = e.t("doutput", &[1, 16, 128], Half)?;
            let tok = e.t("token", &[1, 16, 64], Half)?;
            let off = e.t("first_token_offset", &[4, 1, 1], Int32)?;
            e.finish(
                b.input("doutput", dout)
                    .input("token", tok)
                    .input("first_token_offset", off),
                vec![("dweight", vec![4, 64, 128])],
            )?
        }
        "conv_fprop" => {
            let x = e.t("image", &[2, 8, 16, 16], Half)?;
            let w = e.t("weight", &[16, 8, 3, 3], Half)?;
            e.finish(
                b.input("image", x)
                    .input("weight", w)
                    .ints("padding", &[1, 1])
                    .ints("stride", &[2, 2]),
                vec![("Y", vec![2, 16, 8, 8])],
            )?
        }
        "conv_dgrad" => {
            let dy = e.t("loss", &[2, 16, 16, 16], Half)?;
            let w = e.t("filter", &[16, 8, 3, 3], Half)?;
            let dx = e.t("dx", &[2, 8, 16, 16], Half)?;
            e.finish(
                b.input("loss", dy)
                    .input("filter", w)
                    .output("DX", dx)
                    .ints("padding", &[1, 1]),
                vec![("DX", vec![2, 8, 16, 16])],
            )?
        }
        "conv_wgrad" => {
            let x = e.t("image", &[2, 8, 16, 16], Half)?;
            let dy = e.t("loss", &[2, 16, 16, 16], Half)?;
            let dw = e.t("dw", &[16, 8, 3, 3], Float)?;
            e.finish(
                b.input("image", x)
                    .input("loss", dy)
                    .output("DW", dw)
                    .ints("padding", &[1, 1]),
                vec![("DW", vec![16, 8, 3, 3])],
            )?
        }
        "reshape" => {
            let x = e.t("x", &[2, 3, 4], Half)?;
            let y = e.t("y", &[6, 4], Half)?;
            e.finish(
                b.input("input", x).output("OUT_0", y),
                vec![("OUT_0", vec![6, 4])],
            )?
        }
        "slice" => {
            let x = e.t("x", &[4, 8], Half)?;
            e.finish(
                b.input("input", x).ints("slices", &[0, 2, 1, 1, 8, 2]),
                vec![("OUT_0", vec![2, 4])],
            )?
        }
        "transpose" => {
            let x = e.t("x", &[2, 3, 4], Half)?;
            e.finish(
                b.input("input", x).ints("permutation", &[0, 2, 1]),
                vec![("OUT_0", vec![2, 4, 3])],
            )?
        }
        "concatenate" => {
            let a = e.t("a", &[2, 3], Half)?;
            let c = e.t("c", &[2, 5], Half)?;
            e.finish(
                b.input("inputs_0", a).input("inputs_1", c).int("axis", 1),
                vec![("OUT_0", vec![2, 8])],
            )?
        }
        "rope" | "rope_backward" => {
            let port = if op == "rope" { "input" } else { "dY" };
            let x = e.t(port, &[2, 4, 8, 64], Half)?;
            let f = e.t("freqs", &[1, 1, 8, 64], Float)?;
            e.finish(
                b.input(port, x).input("freqs", f).int("rope_dim", 32),
                vec![("OUT_0", vec![2, 4, 8, 64])],
            )?
        }
        "rng" => {
            let seed = e.t("seed", &[1, 1, 1, 1], Int64)?;
            let off = e.t("offset", &[1, 1, 1, 1], Int64)?;
            let y = e.t("y", &[2, 4, 8, 8], Float)?;
            e.finish(
                b.input("seed", seed)
                    .input("offset", off)
                    .output("Y", y)
                    .float("bernoulli_probability", 0.5),
                vec![("Y", vec![2, 4, 8, 8])],
            )?
        }
        "resample" => {
            let x = e.t("x", &[2, 8, 16, 16], Half)?;
            let y = e.t("y", &[2, 8, 8, 8], Half)?;
            e.finish(
                b.input("input", x)
                    .output("Y", y)
                    .str("resampling_mode", "MAXPOOL")
                    .ints("window", &[2, 2])
                    .ints("stride", &[2, 2])
                    .bool("is_inference", true),
                vec![("Y", vec![2, 8, 8, 8])],
            )?
        }
        "paged_cache_load" => {
            let c = e.t("container", &[8, 4, 16, 64], Half)?;
            let s = e.t("seq_len", &[2, 1, 1, 1], Int32)?;
            let p = e.t("page_table", &[2, 1, 4, 1], Int32)?;
            let y = e.t("y", &[2, 4, 64, 64], Half)?;
            e.finish(
                b.input("container", c)
                    .input("seq_len", s)
                    .input("page_table", p)
                    .output("Y", y),
                vec![("Y", vec![2, 4, 64, 64])],
            )?
        }
        "diagonal_band_mask" => {
            let x = e.t("scores", &[2, 4, 8, 8], Float)?;
            let q = e.t("seq_len_q", &[2, 1, 1, 1], Int32)?;
            let kv = e.t("seq_len_kv", &[2, 1, 1, 1], Int32)?;
            e.finish(
                b.input("input", x)
                    .input("seq_len_q", q)
                    .input("seq_len_kv", kv)
                    .int("left_bound", 2),
                vec![("OUT_0", vec![2, 4, 8, 8])],
            )?
        }
        "softmax" => {
            let x = e.t("scores", &[2, 4, 8, 8], Float)?;
            e.finish(
                b.input("input", x),
                vec![("OUT_0", vec![2, 4, 8, 8]), ("Stats", vec![2, 4, 8, 1])],
            )?
        }
        "bn_finalize" => {
            let mut b = b;
            for p in ["sum", "sq_sum", "scale", "bias"] {
                b = e.bind(b, p, &c4, Float)?;
            }
            let eps = e.scalar("epsilon", 1e-5)?;
            let n =
                e.g.add_tensor(Tensor::scalar("accum_count", ScalarValue::Int64(16)))?;
            e.finish(
                b.input("epsilon", eps).input("accum_count", n),
                vec![
                    ("equivalent_scale", c4.to_vec()),
                    ("mean", c4.to_vec()),
                    ("inv_variance", c4.to_vec()),
                ],
            )?
        }
        "dbn_weight" => {
            let dy = e.t("dy", &x4, Half)?;
            let x = e.t("x", &x4, Half)?;
            let mut b = b.input("loss", dy).input("input", x);
            for p in ["mean", "inv_variance", "scale"] {
                b = e.bind(b, p, &c4, Float)?;
            }
            e.finish(
                b,
                vec![
                    ("dscale", c4.to_vec()),
                    ("dbias", c4.to_vec()),
                    ("eq_bias", c4.to_vec()),
                ],
            )?
        }
        other => {
            return Err(crate::Error::NotFound {
                what: "example for op",
                key: other.to_owned(),
            });
        }
    })
}

const Q: [i64; 4] = [2, 4, 128, 64];
const KV: [i64; 4] = [2, 2, 256, 64];
const STATS: [i64; 4] = [2, 4, 128, 1];
const ONE: [i64; 4] = [1, 1, 1, 1];

fn sdpa(kind: OpKind, mut b: NodeBuilder) -> Result<OpExample> {
    let op = kind.name();
    let mut e = Ex::new(Half);
    let is_fp8 = op.contains("fp8");
    let qdt = if is_fp8 { Fp8E4m3 } else { Half };
    let backward = op.ends_with("backward");
    for (p, d) in [("q", Q), ("k", KV), ("v", KV)] {
        b = e.bind(b, p, &d, qdt)?;
    }
    let mut expect = Vec::new();
    if backward {
        let (o_port, do_port) = if op == "sdpa_mxfp8_backward" {
            ("o_f16", "dO_f16")
        } else {
            ("o", "dO")
        };
        b = e.bind(b, o_port, &Q, Half)?;
        b = e.bind(b, do_port, &Q, Half)?;
        b = e.bind(b, "stats", &STATS, Float)?;
        if op == "sdpa_mxfp8_backward" {
            b = e.bind(b, "dO", &Q, qdt)?;
            for (p, d) in [("q_T", Q), ("k_T", KV), ("dO_T", Q)] {
                b = e.bind(b, p, &d, qdt)?;
            }
        }
        expect.extend([("dQ", Q.to_vec()), ("dK", KV.to_vec()), ("dV", KV.to_vec())]);
        b = b.bool("use_causal_mask", true).float("attn_scale", 0.125);
    } else {
        b = b
            .bool("generate_stats", true)
            .bool("use_causal_mask", true)
            .float("attn_scale", 0.125);
        expect.extend([("O", Q.to_vec()), ("Stats", STATS.to_vec())]);
    }
    match op {
        "sdpa_fp8" | "sdpa_fp8_backward" => {
            // Every descale and scale input of the op, in table order, as a float scalar.
            let scales = kind.spec().inputs.iter().map(|p| p.name);
            for p in scales.filter(|n| n.starts_with("descale_") || n.starts_with("scale_")) {
                b = e.bind(b, p, &ONE, Float)?;
            }
            let amax: &[&'static str] = if backward {
                &["amax_dQ", "amax_dK", "amax_dV", "amax_dP"]
            } else {
                &["Amax_S", "Amax_O"]
            };
            expect.extend(amax.iter().map(|&p| (p, ONE.to_vec())));
        }
        "sdpa_mxfp8" | "sdpa_mxfp8_backward" => {
            let scales: &[(&'static str, [i64; 4])] = if op == "sdpa_mxfp8" {
                &[
                    ("descale_q", [2, 4, 128, 2]),
                    ("descale_k", [2, 2, 256, 2]),
                    ("descale_v", [2, 2, 8, 64]),
                ]
            } else {
                &[
                    ("descale_q", [2, 4, 128, 2]),
                    ("descale_q_T", [2, 4, 4, 64]),
                    ("descale_k", [2, 2, 256, 2]),
                    ("descale_k_T", [2, 2, 8, 64]),
                    ("descale_v", [2, 2, 256, 2]),
                    ("descale_dO", [2, 4, 128, 2]),
                    ("descale_dO_T", [2, 4, 4, 64]),
                ]
            };
            for (p, d) in scales {
                let u = e.g.add_tensor(Tensor {
                    reordering_type: TensorReordering::F8_128x4,
                    ..Tensor::new(*p, d, Fp8E8m0)
                })?;
                b = b.input(p, u);
            }
            if op == "sdpa_mxfp8" {
                expect.push(("Amax_O", ONE.to_vec()));
            } else {
                expect.extend(["amax_dQ", "amax_dK", "amax_dV"].map(|p| (p, ONE.to_vec())));
            }
        }
        _ => {}
    }
    e.finish(b, expect)
}

/// T tokens, H heads, K key dim, V value dim, N sequences.
const T_: i64 = 64;
const H: i64 = 4;
const K: i64 = 32;
const V: i64 = 16;
const N: i64 = 2;

fn mamba2(op: &str, mut b: NodeBuilder) -> Result<OpExample> {
    let mut e = Ex::new(Bfloat16);
    let kind = op.strip_prefix("mamba2").unwrap_or("");
    // C, B with G = 2 groups; x with H = 4 heads.
    if kind != "_summary" {
        b = e.bind(b, "q", &[T_, 2, K], Bfloat16)?;
    }
    b = e.bind(b, "k", &[T_, 2, K], Bfloat16)?;
    if kind != "_summary_bwd" {
        b = e.bind(b, "v", &[T_, H, V], Bfloat16)?;
    }
    b = e.bind(b, "g", &[T_, H], Float)?;
    b = e.bind(b, "a", &[H], Float)?;
    b = e.bind(b, "cu_seqlens", &[N + 1], Int32)?;
    let state = vec![N, H, V, K];
    let expect = match kind {
        "" => {
            b = e.bind(b, "z", &[T_, H, V], Bfloat16)?;
            b = b
                .bool("output_final_state", true)
                .bool("output_pre_gate", true);
            vec![
                ("O", vec![T_, H, V]),
                ("final_state", state),
                ("O_pre", vec![T_, H, V]),
            ]
        }
        "_bwd" => {
            b = e.bind(b, "dO", &[T_, H, V], Bfloat16)?;
            b = e.bind(b, "d", &[H], Float)?;
            vec![
                ("dQ", vec![T_, 2, K]),
                ("dK", vec![T_, 2, K]),
                ("dV", vec![T_, H, V]),
                ("dG", vec![T_, H]),
                ("dA", vec![H]),
                ("dD", vec![H]),
            ]
        }
        "_summary" => {
            b = b.bool("output_transition", true);
            vec![("final_state", state), ("transition", vec![N, H])]
        }
        _ => {
            b = e.bind(b, "dO", &[T_, H, V], Bfloat16)?;
            b = b.bool("output_transition", true);
            vec![("d_initial_state", state), ("transition", vec![N, H])]
        }
    };
    e.finish(b, expect)
}

fn linear_attention(op: &str, mut b: NodeBuilder) -> Result<OpExample> {
    if op.starts_with("mamba2") {
        return mamba2(op, b);
    }
    let mut e = Ex::new(Bfloat16);
    let family = op.split('_').next().unwrap_or(op);
    let channel_gate = matches!(family, "kda" | "gdn2");
    let n_hh: i64 = if family == "gdp" { 2 } else { 1 };
    let kind = op.strip_prefix(family).unwrap_or("");
    let rows = T_ * n_hh;
    let g_dims: Vec<i64> = if channel_gate {
        vec![T_, H, K]
    } else {
        vec![T_, H]
    };
    let beta_dims: Vec<i64> = match family {
        "gdn2" => vec![T_, H, K],
        _ => vec![rows, H],
    };
    let beta_dt = if family == "gdn2" { Bfloat16 } else { Float };
    if kind != "_summary" {
        b = e.bind(b, "q", &[T_, H, K], Bfloat16)?;
    }
    b = e.bind(b, "k", &[rows, H, K], Bfloat16)?;
    if kind != "_summary_bwd" {
        b = e.bind(b, "v", &[rows, H, V], Bfloat16)?;
    }
    b = e.bind(b, "g", &g_dims, Float)?;
    b = e.bind(b, "beta", &beta_dims, beta_dt)?;
    if family == "gdn2" && kind != "_summary_bwd" {
        b = e.bind(b, "w", &[T_, H, V], Bfloat16)?;
    }
    b = e.bind(b, "cu_seqlens", &[N + 1], Int32)?;
    if family == "gdp" {
        b = b.int("num_householder", n_hh);
    }
    let state = vec![N, H, V, K];
    let trans = vec![N, H, K, K];
    let expect = match kind {
        "" => {
            b = b
                .bool("output_final_state", true)
                .int("checkpoint_every_n_tokens", 32);
            vec![
                ("O", vec![T_, H, V]),
                ("final_state", state.clone()),
                ("state_checkpoints", vec![rows / 32 + N, H, V, K]),
            ]
        }
        "_bwd" => {
            b = e.bind(b, "dO", &[T_, H, V], Bfloat16)?;
            b = e.bind(b, "state_checkpoints", &[rows / 32 + N, H, V, K], Bfloat16)?;
            b = e.bind(b, "initial_state", &state, Float)?;
            b = e.bind(b, "d_final_state", &state, Float)?;
            b = b.int("checkpoint_every_n_tokens", 32);
            let mut x = vec![
                ("dQ", vec![T_, H, K]),
                ("dK", vec![rows, H, K]),
                ("dV", vec![rows, H, V]),
                ("dG", g_dims.clone()),
                ("dBeta", beta_dims.clone()),
                ("d_initial_state", state.clone()),
            ];
            if family == "gdn2" {
                x.push(("dW", vec![T_, H, V]));
            }
            x
        }
        "_summary" => {
            b = b.bool("output_transition", true);
            vec![("final_state", state.clone()), ("transition", trans)]
        }
        _ => {
            b = e.bind(b, "dO", &[T_, H, V], Bfloat16)?;
            b = b.bool("output_transition", true);
            vec![("d_initial_state", state.clone()), ("transition", trans)]
        }
    };
    e.finish(b, expect)
}

/// The example graphs shipped in `examples/graphs/` (file stem, graph): SDPA forward and
/// backward, matmul + bias + relu, layernorm, GDN forward and backward. Op outputs that a caller
/// would read are marked as graph outputs.
pub fn named_examples() -> Result<Vec<(&'static str, Graph)>> {
    let mut out = Vec::new();
    for (stem, op, outputs) in [
        ("sdpa_forward", "sdpa", &["O", "Stats"][..]),
        ("sdpa_backward", "sdpa_backward", &["dQ", "dK", "dV"][..]),
        ("layernorm", "layernorm", &["Y", "mean", "inv_var"][..]),
        (
            "gdn_backward",
            "gdn_bwd",
            &["dQ", "dK", "dV", "dG", "dBeta", "d_initial_state"][..],
        ),
    ] {
        let mut ex = example(op)?;
        mark_outputs(&mut ex.graph, ex.node, outputs)?;
        out.push((stem, ex.graph));
    }
    out.push(("matmul_bias_relu", matmul_bias_relu()?));
    out.push(("gdn_forward", gdn_forward_hopper()?));
    for (_, g) in &mut out {
        g.validate()?;
    }
    Ok(out)
}

fn mark_outputs(g: &mut Graph, node: usize, ports: &[&str]) -> Result<()> {
    for p in ports {
        if let Some(uid) = g.nodes()[node].output(p) {
            g.set_output(uid, true)?;
        }
    }
    Ok(())
}

/// A Gated DeltaNet forward at a production shape: two sequences, 2048 tokens in all (THD packed;
/// the split is the caller's `cu_seqlens` at execute),
/// 16 heads, K = V = 128, bf16 io, fp32 log-domain gates and betas, an fp32 initial state and the
/// final state as outputs; what the bundled Hopper engine serves.
fn gdn_forward_hopper() -> Result<Graph> {
    const T: i64 = 2048;
    const N: i64 = 2;
    const HEADS: i64 = 16;
    const D: i64 = 128;
    let mut e = Ex::new(Bfloat16);
    let mut b = NodeBuilder::by_name("gdn")?.name("gdn");
    for (port, dims, dt) in [
        ("q", vec![T, HEADS, D], Bfloat16),
        ("k", vec![T, HEADS, D], Bfloat16),
        ("v", vec![T, HEADS, D], Bfloat16),
        ("g", vec![T, HEADS], Float),
        ("beta", vec![T, HEADS], Float),
        ("cu_seqlens", vec![N + 1], Int32),
        ("initial_state", vec![N, HEADS, D, D], Float),
    ] {
        b = e.bind(b, port, &dims, dt)?;
    }
    let node = e.g.add_node(b.bool("output_final_state", true))?;
    mark_outputs(&mut e.g, node, &["O", "final_state"])?;
    Ok(e.g)
}

/// `relu(A @ B + bias)` in half precision with FLOAT compute.
fn matmul_bias_relu() -> Result<Graph> {
    let mut e = Ex::new(Half);
    let a = e.t("A", &[4, 128, 256], Half)?;
    let b = e.t("B", &[4, 256, 64], Half)?;
    let bias = e.t("bias", &[1, 1, 64], Half)?;
    let mm = e.g.add_node(
        NodeBuilder::by_name("matmul")?
            .name("mm")
            .input("A", a)
            .input("B", b),
    )?;
    let c = e.g.nodes()[mm].output("C").unwrap_or(-1);
    let add = e.g.add_node(
        NodeBuilder::by_name("bias")?
            .name("add_bias")
            .input("input", c)
            .input("bias", bias),
    )?;
    let y = e.g.nodes()[add].output("OUT_0").unwrap_or(-1);
    let relu =
        e.g.add_node(NodeBuilder::by_name("relu")?.name("relu").input("input", y))?;
    mark_outputs(&mut e.g, relu, &["OUT_0"])?;
    Ok(e.g)
}
