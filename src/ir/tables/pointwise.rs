//! Op rows: the 54 pointwise builders (node type POINTWISE, one output `OUT_0`, numpy broadcast),
//! each with its `PointwiseMode_t`, its tensor argument names (= port names, in positional
//! order: backend IN_0, IN_1, IN_2) and its mode-specific attributes. Also the `PointwiseMode_t`
//! list with the backend's `cudnnPointwiseMode_t` values.

use super::helpers::*;
use crate::ir::op::{Cond, NodeType, OpFamily, OpSpec, Rule, ShapeRule};

/// `PointwiseMode_t` (reference declaration order, NOT_SET omitted) with `cudnnPointwiseMode_t`.
pub const POINTWISE_MODES: &[(&str, i64)] = &[
    ("ADD", 0),
    ("MUL", 1),
    ("SQRT", 4),
    ("MAX", 3),
    ("MIN", 2),
    ("RELU_FWD", 100),
    ("TANH_FWD", 101),
    ("SIGMOID_FWD", 102),
    ("ELU_FWD", 103),
    ("GELU_FWD", 104),
    ("SOFTPLUS_FWD", 105),
    ("SWISH_FWD", 106),
    ("RELU_BWD", 200),
    ("TANH_BWD", 201),
    ("SIGMOID_BWD", 202),
    ("ELU_BWD", 203),
    ("GELU_BWD", 204),
    ("SOFTPLUS_BWD", 205),
    ("SWISH_BWD", 206),
    ("ERF", 20),
    ("IDENTITY", 21),
    ("GELU_APPROX_TANH_BWD", 207),
    ("GELU_APPROX_TANH_FWD", 107),
    ("GEN_INDEX", 501),
    ("BINARY_SELECT", 601),
    ("EXP", 13),
    ("LOG", 15),
    ("NEG", 16),
    ("MOD", 7),
    ("POW", 8),
    ("ABS", 10),
    ("CEIL", 11),
    ("COS", 12),
    ("FLOOR", 14),
    ("RSQRT", 17),
    ("SIN", 18),
    ("LOGICAL_NOT", 402),
    ("TAN", 19),
    ("SUB", 9),
    ("ADD_SQUARE", 5),
    ("DIV", 6),
    ("CMP_EQ", 300),
    ("CMP_NEQ", 301),
    ("CMP_GT", 302),
    ("CMP_GE", 303),
    ("CMP_LT", 304),
    ("CMP_LE", 305),
    ("LOGICAL_AND", 400),
    ("LOGICAL_OR", 401),
    ("RECIPROCAL", 22),
];

/// The backend `cudnnPointwiseMode_t` value of a `PointwiseMode_t` name.
pub fn pointwise_backend_value(mode: &str) -> Option<i64> {
    POINTWISE_MODES
        .iter()
        .find(|(m, _)| *m == mode)
        .map(|(_, v)| *v)
}

/// Extra attributes of a pointwise builder.
#[derive(Clone, Copy)]
enum Extra {
    None,
    Relu,
    LeakyRelu,
    Swish,
    Elu,
    Softplus,
    GenIndex,
}

const AB: &[&str] = &["a", "b"];
const IN01: &[&str] = &["input0", "input1"];
const CMP: &[&str] = &["input", "comparison"];
const X: &[&str] = &["input"];
const BWD: &[&str] = &["loss", "input"];

/// (builder name, `PointwiseMode_t`, tensor args, extra attributes)
const ROWS: &[(&str, &str, &[&str], Extra)] = &[
    ("add", "ADD", AB, Extra::None),
    ("bias", "ADD", &["input", "bias"], Extra::None),
    ("mul", "MUL", AB, Extra::None),
    ("scale", "MUL", &["input", "scale"], Extra::None),
    ("sub", "SUB", AB, Extra::None),
    ("div", "DIV", AB, Extra::None),
    ("add_square", "ADD_SQUARE", AB, Extra::None),
    ("max", "MAX", IN01, Extra::None),
    ("min", "MIN", IN01, Extra::None),
    ("mod", "MOD", IN01, Extra::None),
    ("pow", "POW", IN01, Extra::None),
    ("cmp_eq", "CMP_EQ", CMP, Extra::None),
    ("cmp_neq", "CMP_NEQ", CMP, Extra::None),
    ("cmp_gt", "CMP_GT", CMP, Extra::None),
    ("cmp_ge", "CMP_GE", CMP, Extra::None),
    ("cmp_lt", "CMP_LT", CMP, Extra::None),
    ("cmp_le", "CMP_LE", CMP, Extra::None),
    ("logical_and", "LOGICAL_AND", AB, Extra::None),
    ("logical_or", "LOGICAL_OR", AB, Extra::None),
    ("logical_not", "LOGICAL_NOT", X, Extra::None),
    (
        "binary_select",
        "BINARY_SELECT",
        &["input0", "input1", "mask"],
        Extra::None,
    ),
    ("sqrt", "SQRT", X, Extra::None),
    ("rsqrt", "RSQRT", X, Extra::None),
    ("exp", "EXP", X, Extra::None),
    ("log", "LOG", X, Extra::None),
    ("neg", "NEG", X, Extra::None),
    ("abs", "ABS", X, Extra::None),
    ("ceil", "CEIL", X, Extra::None),
    ("floor", "FLOOR", X, Extra::None),
    ("sin", "SIN", X, Extra::None),
    ("cos", "COS", X, Extra::None),
    ("tan", "TAN", X, Extra::None),
    ("erf", "ERF", X, Extra::None),
    ("identity", "IDENTITY", X, Extra::None),
    ("reciprocal", "RECIPROCAL", X, Extra::None),
    ("relu", "RELU_FWD", X, Extra::Relu),
    ("leaky_relu", "RELU_FWD", X, Extra::LeakyRelu),
    ("tanh", "TANH_FWD", X, Extra::None),
    ("sigmoid", "SIGMOID_FWD", X, Extra::None),
    ("gelu", "GELU_FWD", X, Extra::None),
    ("gelu_approx_tanh", "GELU_APPROX_TANH_FWD", X, Extra::None),
    ("elu", "ELU_FWD", X, Extra::Elu),
    ("softplus", "SOFTPLUS_FWD", X, Extra::Softplus),
    ("swish", "SWISH_FWD", X, Extra::Swish),
    ("gen_index", "GEN_INDEX", X, Extra::GenIndex),
    ("relu_backward", "RELU_BWD", BWD, Extra::Relu),
    ("leaky_relu_backward", "RELU_BWD", BWD, Extra::LeakyRelu),
    ("tanh_backward", "TANH_BWD", BWD, Extra::None),
    ("sigmoid_backward", "SIGMOID_BWD", BWD, Extra::None),
    ("elu_backward", "ELU_BWD", BWD, Extra::Elu),
    ("gelu_backward", "GELU_BWD", BWD, Extra::None),
    ("softplus_backward", "SOFTPLUS_BWD", BWD, Extra::Softplus),
    (
        "gelu_approx_tanh_backward",
        "GELU_APPROX_TANH_BWD",
        BWD,
        Extra::None,
    ),
    ("swish_backward", "SWISH_BWD", BWD, Extra::Swish),
];

fn relu_attrs() -> Vec<crate::ir::op::AttrSpec> {
    vec![
        a_float("negative_slope", 0.0).doc("slope below the lower clip (lower_clip_slope)"),
        a_float("lower_clip", 0.0).doc("lower clip"),
        a_float("upper_clip", f64::MAX)
            .doc("upper clip (+max double; clamped to FLT_MAX for FLOAT compute)"),
    ]
}

/// The pointwise rows.
pub(crate) fn ops() -> Vec<OpSpec> {
    ROWS.iter()
        .map(|&(name, mode, args, extra)| {
            let mut spec = op(
                name,
                NodeType::Pointwise,
                OpFamily::Pointwise,
                "elementwise op; binary ops compute IN_0 ∘ IN_1",
            )
            .ins(reqs(args))
            .outs(vec![out("OUT_0", ShapeRule::Broadcast)])
            .rules(vec![Rule::Broadcastable]);
            spec.pointwise_mode = Some(mode);
            if mode == "RECIPROCAL" {
                spec = spec.min_cudnn(8900);
            }
            match extra {
                Extra::None => spec,
                Extra::Relu => spec.attrs(relu_attrs()),
                Extra::LeakyRelu => spec.attrs(relu_attrs()).rules(vec![Rule::Msg(
                    Box::new(Rule::Implies(
                        Cond::All(vec![]),
                        Cond::Set("negative_slope"),
                    )),
                    "leaky relu requires `negative_slope`",
                )]),
                Extra::Swish => spec.attrs(vec![a_float("swish_beta", 1.0).doc("swish beta")]),
                Extra::Elu => spec.attrs(vec![a_float("elu_alpha", 1.0).doc("elu alpha")]),
                Extra::Softplus => {
                    spec.attrs(vec![a_float("softplus_beta", 1.0).doc("softplus beta")])
                }
                Extra::GenIndex => spec
                    .attrs(vec![a_int("axis", -1).doc(
                        "axis whose index is generated (CUDNN_ATTR_POINTWISE_AXIS)",
                    )]),
            }
        })
        .collect()
}
