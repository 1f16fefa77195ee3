//! Lowerings from op-level requests to primitive backend operations on a [`GraphBuilder`]:
//! matmul with fused bias/activation epilogues, pointwise (every backend mode), reductions,
//! layernorm/rmsnorm forward and backward, convolutions, and (in [`attention`]) softmax, masks and
//! SDPA forward/backward. The requests are plain structs so the lowering is independent of how the
//! IR spells ops; `from_ir` maps IR nodes onto them.

pub mod attention;
pub mod from_ir;

use crate::cudnn::consts::*;
use crate::cudnn::graph::{
    ConvGeometry, ConvKind, GraphBuilder, OpSpec, PointwiseParams, ScalarValue, Uid,
};
use crate::error::{Error, Result};

/// How many inputs a pointwise mode takes (1, 2 or 3), or `None` for an unknown mode.
pub fn pointwise_arity(mode: u32) -> Option<usize> {
    POINTWISE_ARITY
        .iter()
        .find(|(m, _)| *m == mode)
        .map(|(_, a)| *a)
}

/// Arity of every backend pointwise mode (rules as data). Backward activation modes take
/// `(dy, x)` and are lowered to the DY/X/DX form.
pub const POINTWISE_ARITY: &[(u32, usize)] = &[
    (CUDNN_POINTWISE_ADD, 2),
    (CUDNN_POINTWISE_ADD_SQUARE, 2),
    (CUDNN_POINTWISE_DIV, 2),
    (CUDNN_POINTWISE_MAX, 2),
    (CUDNN_POINTWISE_MIN, 2),
    (CUDNN_POINTWISE_MOD, 2),
    (CUDNN_POINTWISE_MUL, 2),
    (CUDNN_POINTWISE_POW, 2),
    (CUDNN_POINTWISE_SUB, 2),
    (CUDNN_POINTWISE_ABS, 1),
    (CUDNN_POINTWISE_CEIL, 1),
    (CUDNN_POINTWISE_COS, 1),
    (CUDNN_POINTWISE_EXP, 1),
    (CUDNN_POINTWISE_FLOOR, 1),
    (CUDNN_POINTWISE_LOG, 1),
    (CUDNN_POINTWISE_NEG, 1),
    (CUDNN_POINTWISE_RSQRT, 1),
    (CUDNN_POINTWISE_SIN, 1),
    (CUDNN_POINTWISE_SQRT, 1),
    (CUDNN_POINTWISE_TAN, 1),
    (CUDNN_POINTWISE_ERF, 1),
    (CUDNN_POINTWISE_IDENTITY, 1),
    (CUDNN_POINTWISE_RECIPROCAL, 1),
    (CUDNN_POINTWISE_ATAN2, 2),
    (CUDNN_POINTWISE_RELU_FWD, 1),
    (CUDNN_POINTWISE_TANH_FWD, 1),
    (CUDNN_POINTWISE_SIGMOID_FWD, 1),
    (CUDNN_POINTWISE_ELU_FWD, 1),
    (CUDNN_POINTWISE_GELU_FWD, 1),
    (CUDNN_POINTWISE_SOFTPLUS_FWD, 1),
    (CUDNN_POINTWISE_SWISH_FWD, 1),
    (CUDNN_POINTWISE_GELU_APPROX_TANH_FWD, 1),
    (CUDNN_POINTWISE_RELU_BWD, 2),
    (CUDNN_POINTWISE_TANH_BWD, 2),
    (CUDNN_POINTWISE_SIGMOID_BWD, 2),
    (CUDNN_POINTWISE_ELU_BWD, 2),
    (CUDNN_POINTWISE_GELU_BWD, 2),
    (CUDNN_POINTWISE_SOFTPLUS_BWD, 2),
    (CUDNN_POINTWISE_SWISH_BWD, 2),
    (CUDNN_POINTWISE_GELU_APPROX_TANH_BWD, 2),
    (CUDNN_POINTWISE_CMP_EQ, 2),
    (CUDNN_POINTWISE_CMP_NEQ, 2),
    (CUDNN_POINTWISE_CMP_GT, 2),
    (CUDNN_POINTWISE_CMP_GE, 2),
    (CUDNN_POINTWISE_CMP_LT, 2),
    (CUDNN_POINTWISE_CMP_LE, 2),
    (CUDNN_POINTWISE_LOGICAL_AND, 2),
    (CUDNN_POINTWISE_LOGICAL_OR, 2),
    (CUDNN_POINTWISE_LOGICAL_NOT, 1),
    (CUDNN_POINTWISE_GEN_INDEX, 1),
    (CUDNN_POINTWISE_BINARY_SELECT, 3),
];

/// True for the `*_BWD` activation modes (200..=299).
pub fn is_activation_backward(mode: u32) -> bool {
    (200..300).contains(&mode)
}

/// Lowers one pointwise op into `y` (a tensor already in the builder), checking arity; backward
/// activation modes take `inputs = [dy, x]`.
pub fn pointwise(
    g: &mut GraphBuilder,
    mode: u32,
    compute: u32,
    inputs: &[Uid],
    y: Uid,
    params: PointwiseParams,
) -> Result<()> {
    let arity = pointwise_arity(mode).ok_or_else(|| {
        Error::NotSupported(format!("pointwise mode {mode} is not known to this build"))
    })?;
    if inputs.len() != arity {
        return Err(Error::invalid_graph(
            g.tensor(y)?.name.clone(),
            None,
            format!(
                "pointwise mode {mode} takes {arity} inputs, {} given",
                inputs.len()
            ),
        ));
    }
    if is_activation_backward(mode) {
        return g.push(OpSpec::PointwiseBackward {
            mode,
            compute,
            dy: inputs[0],
            x: inputs[1],
            dx: y,
            params,
        });
    }
    g.pointwise_into(mode, compute, inputs, y, params)
}

/// A matmul request `out = act(a · b + bias)`.
#[derive(Clone, Debug, Default)]
pub struct MatmulRequest {
    /// A `[..., M, K]`.
    pub a: Uid,
    /// B `[..., K, N]`.
    pub b: Uid,
    /// Optional bias broadcast over `[..., M, N]` (e.g. `[1, 1, N]`).
    pub bias: Option<Uid>,
    /// Optional activation (a forward pointwise mode such as `CUDNN_POINTWISE_RELU_FWD`).
    pub activation: Option<u32>,
    /// Activation parameters.
    pub activation_params: PointwiseParams,
    /// Output `[..., M, N]`.
    pub out: Uid,
    /// Compute type (FLOAT by default).
    pub compute: Option<u32>,
}

/// Lowers a matmul with its epilogue: MATMUL into a FLOAT virtual intermediate, then ADD bias and
/// the activation as fused pointwise ops (the last writes `out`). Without epilogue the MATMUL
/// writes `out` directly.
pub fn matmul(g: &mut GraphBuilder, r: &MatmulRequest) -> Result<()> {
    let compute = r.compute.unwrap_or(g.compute);
    let (a, b) = (g.tensor(r.a)?.clone(), g.tensor(r.b)?.clone());
    let out = g.tensor(r.out)?.clone();
    if a.dims.len() != b.dims.len() || a.dims.len() < 2 {
        return Err(Error::invalid_graph(
            &out.name,
            Some("A"),
            "A and B must have equal rank >= 2",
        ));
    }
    let n = a.dims.len();
    if a.dims[n - 1] != b.dims[n - 2] {
        return Err(Error::invalid_graph(
            &out.name,
            Some("B"),
            format!(
                "A[-1] = {} must equal B[-2] = {}",
                a.dims[n - 1],
                b.dims[n - 2]
            ),
        ));
    }
    let mut steps: Vec<(u32, Option<Uid>, PointwiseParams)> = Vec::new();
    if let Some(bias) = r.bias {
        steps.push((CUDNN_POINTWISE_ADD, Some(bias), PointwiseParams::default()));
    }
    if let Some(act) = r.activation {
        if pointwise_arity(act) != Some(1) {
            return Err(Error::invalid_graph(
                &out.name,
                None,
                format!("activation mode {act} is not unary"),
            ));
        }
        steps.push((act, None, r.activation_params.clone()));
    }
    let mut cur = if steps.is_empty() {
        r.out
    } else {
        g.virtual_tensor(&format!("{}::matmul", out.name), g.intermediate, &out.dims)
    };
    g.push(OpSpec::Matmul {
        a: r.a,
        b: r.b,
        c: cur,
        compute,
        m_override: None,
        n_override: None,
        k_override: None,
        padding_value: None,
    })?;
    let last = steps.len();
    for (i, (mode, other, params)) in steps.into_iter().enumerate() {
        let y = if i + 1 == last {
            r.out
        } else {
            g.virtual_tensor(
                &format!("{}::epilogue{i}", out.name),
                g.intermediate,
                &out.dims,
            )
        };
        let mut inputs = vec![cur];
        inputs.extend(other);
        g.pointwise_into(mode, g.compute, &inputs, y, params)?;
        cur = y;
    }
    Ok(())
}

/// A reduction request: `y = reduce(x)` over the axes where `y`'s dim is 1.
pub fn reduction(
    g: &mut GraphBuilder,
    mode: u32,
    x: Uid,
    y: Uid,
    deterministic: Option<bool>,
) -> Result<()> {
    if !REDUCE_OP.iter().any(|(_, v)| *v == mode) {
        return Err(Error::NotSupported(format!(
            "reduction mode {mode} is not known to this build"
        )));
    }
    let (xd, yd) = (g.tensor(x)?.dims.clone(), g.tensor(y)?.clone());
    if xd.len() != yd.dims.len() || xd.iter().zip(&yd.dims).any(|(a, b)| *b != 1 && a != b) {
        return Err(Error::invalid_graph(
            &yd.name,
            None,
            format!(
                "reduction output dims {:?} must equal input dims {xd:?} or be 1",
                yd.dims
            ),
        ));
    }
    let compute = g.compute;
    g.push(OpSpec::Reduction {
        mode,
        compute,
        x,
        y,
        deterministic,
    })
}

/// Which normalization.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NormKind {
    /// Layer norm (mean and variance).
    Layer,
    /// RMS norm (no mean).
    Rms,
}

impl NormKind {
    fn mode(self) -> u32 {
        match self {
            NormKind::Layer => CUDNN_LAYER_NORM,
            NormKind::Rms => CUDNN_RMS_NORM,
        }
    }
}

/// A layernorm/rmsnorm forward request.
#[derive(Clone, Debug)]
pub struct NormForwardRequest {
    /// Which norm.
    pub kind: NormKind,
    /// Input `[rows..., features...]`.
    pub x: Uid,
    /// Scale (dims = 1 on the non-normalized axes).
    pub scale: Option<Uid>,
    /// Bias (layernorm only).
    pub bias: Option<Uid>,
    /// Epsilon value (a by-value FLOAT scalar is created).
    pub epsilon: f32,
    /// Output.
    pub y: Uid,
    /// Training outputs: saved mean (layernorm) and inverse variance, FLOAT `[rows..., 1...]`.
    pub mean: Option<Uid>,
    /// Saved inverse variance.
    pub inv_variance: Option<Uid>,
}

/// Lowers a norm forward: one NORM_FORWARD operation (TRAINING when stats are requested).
pub fn norm_forward(g: &mut GraphBuilder, r: &NormForwardRequest) -> Result<()> {
    let name = g.tensor(r.y)?.name.clone();
    if r.kind == NormKind::Rms && r.mean.is_some() {
        return Err(Error::invalid_graph(
            name,
            Some("mean"),
            "rmsnorm has no mean output",
        ));
    }
    if r.bias.is_some() && r.scale.is_none() {
        return Err(Error::invalid_graph(
            name,
            Some("bias"),
            "a bias requires a scale",
        ));
    }
    let training = r.inv_variance.is_some();
    if r.kind == NormKind::Layer && training != r.mean.is_some() {
        return Err(Error::invalid_graph(
            name,
            Some("mean"),
            "layernorm training needs both mean and inv_variance",
        ));
    }
    let rank = g.tensor(r.x)?.dims.len();
    let eps = g.scalar("epsilon", ScalarValue::F32(r.epsilon), rank);
    g.push(OpSpec::NormForward {
        mode: r.kind.mode(),
        phase: if training {
            CUDNN_NORM_FWD_TRAINING
        } else {
            CUDNN_NORM_FWD_INFERENCE
        },
        x: r.x,
        scale: r.scale,
        bias: r.bias,
        epsilon: Some(eps),
        mean: r.mean,
        inv_variance: r.inv_variance,
        y: r.y,
    })
}

/// A layernorm/rmsnorm backward request.
#[derive(Clone, Debug)]
pub struct NormBackwardRequest {
    /// Which norm.
    pub kind: NormKind,
    /// Forward input.
    pub x: Uid,
    /// Incoming gradient.
    pub dy: Uid,
    /// Scale.
    pub scale: Uid,
    /// Saved mean (layernorm).
    pub mean: Option<Uid>,
    /// Saved inverse variance.
    pub inv_variance: Uid,
    /// dx.
    pub dx: Uid,
    /// dscale.
    pub dscale: Uid,
    /// dbias (layernorm; rmsnorm only when it has a bias).
    pub dbias: Option<Uid>,
}

/// Lowers a norm backward: one NORM_BACKWARD operation.
pub fn norm_backward(g: &mut GraphBuilder, r: &NormBackwardRequest) -> Result<()> {
    if r.kind == NormKind::Layer && r.mean.is_none() {
        let name = g.tensor(r.dx)?.name.clone();
        return Err(Error::invalid_graph(
            name,
            Some("mean"),
            "layernorm backward needs the saved mean",
        ));
    }
    g.push(OpSpec::NormBackward {
        mode: r.kind.mode(),
        x: r.x,
        dy: r.dy,
        scale: Some(r.scale),
        mean: if r.kind == NormKind::Layer {
            r.mean
        } else {
            None
        },
        inv_variance: Some(r.inv_variance),
        epsilon: None,
        dx: r.dx,
        dscale: Some(r.dscale),
        dbias: r.dbias,
    })
}

/// Lowers a convolution (fprop: x, w -> y; dgrad: dy, w -> dx; wgrad: x, dy -> dw). Operands are
/// always passed as (x-side, w-side, y-side) tensors.
pub fn convolution(
    g: &mut GraphBuilder,
    kind: ConvKind,
    geometry: ConvGeometry,
    x: Uid,
    w: Uid,
    y: Uid,
) -> Result<()> {
    let spatial = g.tensor(x)?.dims.len().saturating_sub(2);
    for (what, v) in [
        ("pre_padding", &geometry.pre_padding),
        ("post_padding", &geometry.post_padding),
        ("stride", &geometry.stride),
        ("dilation", &geometry.dilation),
    ] {
        if v.len() != spatial {
            let name = g.tensor(y)?.name.clone();
            return Err(Error::invalid_graph(
                name,
                Some(what),
                format!("{} values for {spatial} spatial dims", v.len()),
            ));
        }
    }
    let compute = g.compute;
    g.push(OpSpec::Convolution {
        kind,
        compute,
        geometry,
        x,
        w,
        y,
    })
}
