//! Turns a [`BackendGraph`] into backend descriptors: one TENSOR descriptor per tensor used
//! (ragged offsets first, virtual intermediates included), one finalized OPERATION descriptor per
//! primitive op (with its sub-descriptors: POINTWISE, MATMUL, REDUCTION, CONVOLUTION, RNG), then
//! one finalized OPERATIONGRAPH. The descriptor sequence follows the reference frontend's
//! attribute order; it is checked on the CPU with the recording backend.

use std::collections::HashMap;

use crate::cudnn::api::RawHandle;
use crate::cudnn::backend::{AttrValue, BackendApi};
use crate::cudnn::consts::*;
use crate::cudnn::descriptor::Descriptor;
use crate::cudnn::graph::{BackendGraph, ConvKind, OpSpec, PointwiseParams, TensorSpec, Uid};
use crate::error::{Error, Result};

/// Most operations in one operation graph (the frontend's `MAX_OPGRAPH_OPS`).
pub const MAX_OPGRAPH_OPS: usize = 250;

/// A finalized OPERATIONGRAPH plus every descriptor it references (kept alive with it).
pub struct OperationGraph {
    /// The OPERATIONGRAPH descriptor.
    pub desc: Descriptor,
    /// Operation descriptors in order.
    pub ops: Vec<Descriptor>,
    /// Sub-descriptors (pointwise/matmul/... configuration descriptors).
    pub aux: Vec<Descriptor>,
    /// Tensor descriptors by uid.
    pub tensors: HashMap<Uid, Descriptor>,
    /// The graph it was built from.
    pub graph: BackendGraph,
}

impl std::fmt::Debug for OperationGraph {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OperationGraph({} ops)", self.ops.len())
    }
}

struct Emitter<'g> {
    api: &'static dyn BackendApi,
    graph: &'g BackendGraph,
    tensors: HashMap<Uid, Descriptor>,
    aux: Vec<Descriptor>,
}

impl Emitter<'_> {
    fn tensor(&mut self, uid: Uid) -> Result<&Descriptor> {
        if !self.tensors.contains_key(&uid) {
            let spec = self.graph.tensor(uid)?.clone();
            if let Some(r) = spec.ragged_offset {
                self.tensor(r)?;
            }
            let d = self.make_tensor(&spec)?;
            self.tensors.insert(uid, d);
        }
        self.tensors
            .get(&uid)
            .ok_or_else(|| Error::Internal("tensor vanished".into()))
    }

    fn make_tensor(&self, t: &TensorSpec) -> Result<Descriptor> {
        let mut d = Descriptor::new(self.api, CUDNN_BACKEND_TENSOR_DESCRIPTOR)?;
        d.set_data_type(CUDNN_ATTR_TENSOR_DATA_TYPE, t.dtype)?
            .set(
                CUDNN_ATTR_TENSOR_DIMENSIONS,
                AttrValue::Int64(t.dims.clone()),
            )?
            .set(
                CUDNN_ATTR_TENSOR_STRIDES,
                AttrValue::Int64(t.strides.clone()),
            )?
            .set_i64(CUDNN_ATTR_TENSOR_UNIQUE_ID, t.uid)?
            .set_i64(CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, t.alignment)?;
        if t.is_virtual {
            d.set(CUDNN_ATTR_TENSOR_IS_VIRTUAL, AttrValue::Bool(true))?;
        }
        if t.by_value.is_some() {
            d.set(CUDNN_ATTR_TENSOR_IS_BY_VALUE, AttrValue::Bool(true))?;
        }
        if let Some(r) = t.ragged_offset {
            let rd = self
                .tensors
                .get(&r)
                .ok_or_else(|| Error::Internal("ragged offset not emitted".into()))?;
            d.set_desc(CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC, rd)?;
        }
        d.finalize().map_err(|e| with_tensor(e, t))?;
        Ok(d)
    }

    fn t(&mut self, uid: Uid) -> Result<crate::cudnn::api::RawDescriptor> {
        Ok(self.tensor(uid)?.raw())
    }

    fn set_t(&mut self, op: &mut Descriptor, name: u32, uid: Uid) -> Result<()> {
        let raw = self.t(uid)?;
        op.set_raw_desc(name, raw)?;
        Ok(())
    }

    fn set_opt(&mut self, op: &mut Descriptor, name: u32, uid: Option<Uid>) -> Result<()> {
        match uid {
            Some(u) => self.set_t(op, name, u),
            None => Ok(()),
        }
    }

    fn finalized(&mut self, mut d: Descriptor) -> Result<crate::cudnn::api::RawDescriptor> {
        d.finalize()?;
        let raw = d.raw();
        self.aux.push(d);
        Ok(raw)
    }

    fn pointwise_desc(
        &mut self,
        mode: u32,
        compute: u32,
        p: &PointwiseParams,
    ) -> Result<crate::cudnn::api::RawDescriptor> {
        let mut pw = Descriptor::new(self.api, CUDNN_BACKEND_POINTWISE_DESCRIPTOR)?;
        pw.set_enum(CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, mode)?
            .set_data_type(CUDNN_ATTR_POINTWISE_MATH_PREC, compute)?;
        // Clip/alpha/beta parameters are DOUBLE for DOUBLE math, else FLOAT (as the frontend).
        let real = |v: f64| {
            if compute == CUDNN_DATA_DOUBLE {
                AttrValue::Double(vec![v])
            } else {
                AttrValue::Float(vec![v as f32])
            }
        };
        if mode == CUDNN_POINTWISE_RELU_FWD || mode == CUDNN_POINTWISE_RELU_BWD {
            let upper = p.relu_upper_clip.map(|u| {
                if compute == CUDNN_DATA_FLOAT {
                    u.min(f32::MAX as f64)
                } else {
                    u
                }
            });
            for (name, v) in [
                (CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP, p.relu_lower_clip),
                (CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, upper),
                (
                    CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP_SLOPE,
                    p.relu_lower_clip_slope,
                ),
            ] {
                if let Some(v) = v {
                    pw.set(name, real(v))?;
                }
            }
        }
        if let Some(a) = p.elu_alpha {
            pw.set(CUDNN_ATTR_POINTWISE_ELU_ALPHA, real(a))?;
        }
        if let Some(b) = p.softplus_beta {
            pw.set(CUDNN_ATTR_POINTWISE_SOFTPLUS_BETA, real(b))?;
        }
        if let Some(b) = p.swish_beta {
            pw.set(CUDNN_ATTR_POINTWISE_SWISH_BETA, real(b))?;
        }
        if let Some(a) = p.axis {
            pw.set_i64(CUDNN_ATTR_POINTWISE_AXIS, a)?;
        }
        self.finalized(pw)
    }

    /// The OPERATION_POINTWISE descriptor (forward or backward) with its POINTWISE sub-descriptor
    /// set; the caller sets the tensors.
    fn pointwise_op(&mut self, mode: u32, compute: u32, p: &PointwiseParams) -> Result<Descriptor> {
        let pw = self.pointwise_desc(mode, compute, p)?;
        let mut d = Descriptor::new(self.api, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR)?;
        d.set_raw_desc(CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pw)?;
        Ok(d)
    }

    fn op(&mut self, op: &OpSpec) -> Result<Descriptor> {
        let api = self.api;
        let desc = |ty| Descriptor::new(api, ty);
        let d = match op {
            OpSpec::Pointwise {
                mode,
                compute,
                x,
                b,
                t,
                y,
                params,
            } => {
                let mut d = self.pointwise_op(*mode, *compute, params)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, *x)?;
                self.set_opt(&mut d, CUDNN_ATTR_OPERATION_POINTWISE_BDESC, *b)?;
                self.set_opt(&mut d, CUDNN_ATTR_OPERATION_POINTWISE_TDESC, *t)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_POINTWISE_YDESC, *y)?;
                d.set(
                    CUDNN_ATTR_OPERATION_POINTWISE_ALPHA1,
                    AttrValue::Float(vec![1.0]),
                )?;
                if b.is_some() {
                    d.set(
                        CUDNN_ATTR_OPERATION_POINTWISE_ALPHA2,
                        AttrValue::Float(vec![1.0]),
                    )?;
                }
                d
            }
            OpSpec::PointwiseBackward {
                mode,
                compute,
                dy,
                x,
                dx,
                params,
            } => {
                let mut d = self.pointwise_op(*mode, *compute, params)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_POINTWISE_DYDESC, *dy)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_POINTWISE_XDESC, *x)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_POINTWISE_DXDESC, *dx)?;
                d
            }
            OpSpec::Matmul {
                a,
                b,
                c,
                compute,
                m_override,
                n_override,
                k_override,
                padding_value,
            } => {
                let mut mm = desc(CUDNN_BACKEND_MATMUL_DESCRIPTOR)?;
                mm.set_data_type(CUDNN_ATTR_MATMUL_COMP_TYPE, *compute)?;
                if let Some(p) = padding_value.filter(|p| *p != 0.0) {
                    mm.set(CUDNN_ATTR_MATMUL_PADDING_VALUE, AttrValue::Double(vec![p]))?;
                }
                let mm = self.finalized(mm)?;
                let mut d = desc(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_MATMUL_ADESC, *a)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_MATMUL_BDESC, *b)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_MATMUL_CDESC, *c)?;
                d.set_raw_desc(CUDNN_ATTR_OPERATION_MATMUL_DESC, mm)?;
                self.set_opt(
                    &mut d,
                    CUDNN_ATTR_OPERATION_MATMUL_GEMM_M_OVERRIDE_DESC,
                    *m_override,
                )?;
                self.set_opt(
                    &mut d,
                    CUDNN_ATTR_OPERATION_MATMUL_GEMM_N_OVERRIDE_DESC,
                    *n_override,
                )?;
                self.set_opt(
                    &mut d,
                    CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC,
                    *k_override,
                )?;
                d
            }
            OpSpec::Reduction {
                mode,
                compute,
                x,
                y,
                deterministic,
            } => {
                let mut r = desc(CUDNN_BACKEND_REDUCTION_DESCRIPTOR)?;
                r.set_enum(
                    CUDNN_ATTR_REDUCTION_OPERATOR,
                    CUDNN_TYPE_REDUCTION_OPERATOR_TYPE,
                    *mode,
                )?
                .set_data_type(CUDNN_ATTR_REDUCTION_COMP_TYPE, *compute)?;
                if let Some(det) = deterministic {
                    r.set(CUDNN_ATTR_REDUCTION_IS_DETERMINISTIC, AttrValue::Bool(*det))?;
                }
                let r = self.finalized(r)?;
                let mut d = desc(CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_REDUCTION_XDESC, *x)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_REDUCTION_YDESC, *y)?;
                d.set_raw_desc(CUDNN_ATTR_OPERATION_REDUCTION_DESC, r)?;
                d
            }
            OpSpec::NormForward {
                mode,
                phase,
                x,
                scale,
                bias,
                epsilon,
                mean,
                inv_variance,
                y,
            } => {
                let mut d = desc(CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR)?;
                d.set_enum(
                    CUDNN_ATTR_OPERATION_NORM_FWD_MODE,
                    CUDNN_TYPE_NORM_MODE,
                    *mode,
                )?
                .set_enum(
                    CUDNN_ATTR_OPERATION_NORM_FWD_PHASE,
                    CUDNN_TYPE_NORM_FWD_PHASE,
                    *phase,
                )?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_NORM_FWD_XDESC, *x)?;
                self.set_opt(&mut d, CUDNN_ATTR_OPERATION_NORM_FWD_MEAN_DESC, *mean)?;
                self.set_opt(
                    &mut d,
                    CUDNN_ATTR_OPERATION_NORM_FWD_INV_VARIANCE_DESC,
                    *inv_variance,
                )?;
                self.set_opt(&mut d, CUDNN_ATTR_OPERATION_NORM_FWD_SCALE_DESC, *scale)?;
                self.set_opt(&mut d, CUDNN_ATTR_OPERATION_NORM_FWD_BIAS_DESC, *bias)?;
                self.set_opt(&mut d, CUDNN_ATTR_OPERATION_NORM_FWD_EPSILON_DESC, *epsilon)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_NORM_FWD_YDESC, *y)?;
                d
            }
            OpSpec::NormBackward {
                mode,
                x,
                dy,
                scale,
                mean,
                inv_variance,
                epsilon,
                dx,
                dscale,
                dbias,
            } => {
                let mut d = desc(CUDNN_BACKEND_OPERATION_NORM_BACKWARD_DESCRIPTOR)?;
                d.set_enum(
                    CUDNN_ATTR_OPERATION_NORM_BWD_MODE,
                    CUDNN_TYPE_NORM_MODE,
                    *mode,
                )?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_NORM_BWD_XDESC, *x)?;
                self.set_opt(&mut d, CUDNN_ATTR_OPERATION_NORM_BWD_MEAN_DESC, *mean)?;
                self.set_opt(
                    &mut d,
                    CUDNN_ATTR_OPERATION_NORM_BWD_INV_VARIANCE_DESC,
                    *inv_variance,
                )?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_NORM_BWD_DYDESC, *dy)?;
                self.set_opt(&mut d, CUDNN_ATTR_OPERATION_NORM_BWD_SCALE_DESC, *scale)?;
                self.set_opt(&mut d, CUDNN_ATTR_OPERATION_NORM_BWD_EPSILON_DESC, *epsilon)?;
                self.set_opt(&mut d, CUDNN_ATTR_OPERATION_NORM_BWD_DSCALE_DESC, *dscale)?;
                self.set_opt(&mut d, CUDNN_ATTR_OPERATION_NORM_BWD_DBIAS_DESC, *dbias)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_NORM_BWD_DXDESC, *dx)?;
                d
            }
            OpSpec::Convolution {
                kind,
                compute,
                geometry: g,
                x,
                w,
                y,
            } => {
                let mut c = desc(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR)?;
                c.set_data_type(CUDNN_ATTR_CONVOLUTION_COMP_TYPE, *compute)?
                    .set_enum(
                        CUDNN_ATTR_CONVOLUTION_CONV_MODE,
                        CUDNN_TYPE_CONVOLUTION_MODE,
                        g.mode,
                    )?
                    .set_i64(CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, g.stride.len() as i64)?
                    .set(
                        CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
                        AttrValue::Int64(g.pre_padding.clone()),
                    )?
                    .set(
                        CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
                        AttrValue::Int64(g.post_padding.clone()),
                    )?
                    .set(
                        CUDNN_ATTR_CONVOLUTION_DILATIONS,
                        AttrValue::Int64(g.dilation.clone()),
                    )?
                    .set(
                        CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                        AttrValue::Int64(g.stride.clone()),
                    )?;
                let c = self.finalized(c)?;
                let (ty, names) = match kind {
                    ConvKind::Fprop => (
                        CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR,
                        [
                            CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                            CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                            CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                            CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
                            CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA,
                            CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA,
                        ],
                    ),
                    ConvKind::Dgrad => (
                        CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_DATA_DESCRIPTOR,
                        [
                            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DX,
                            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_W,
                            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_DY,
                            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_CONV_DESC,
                            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_ALPHA,
                            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_DATA_BETA,
                        ],
                    ),
                    ConvKind::Wgrad => (
                        CUDNN_BACKEND_OPERATION_CONVOLUTION_BACKWARD_FILTER_DESCRIPTOR,
                        [
                            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_X,
                            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DW,
                            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_DY,
                            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_CONV_DESC,
                            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_ALPHA,
                            CUDNN_ATTR_OPERATION_CONVOLUTION_BWD_FILTER_BETA,
                        ],
                    ),
                };
                let mut d = desc(ty)?;
                self.set_t(&mut d, names[0], *x)?;
                self.set_t(&mut d, names[1], *w)?;
                self.set_t(&mut d, names[2], *y)?;
                d.set_raw_desc(names[3], c)?;
                let (alpha, beta) = if *compute == CUDNN_DATA_DOUBLE {
                    (AttrValue::Double(vec![1.0]), AttrValue::Double(vec![0.0]))
                } else {
                    (AttrValue::Float(vec![1.0]), AttrValue::Float(vec![0.0]))
                };
                d.set(names[4], alpha)?.set(names[5], beta)?;
                d
            }
            OpSpec::Rng {
                probability,
                y,
                seed,
                offset,
            } => {
                let mut r = desc(CUDNN_BACKEND_RNG_DESCRIPTOR)?;
                r.set_enum(
                    CUDNN_ATTR_RNG_DISTRIBUTION,
                    CUDNN_TYPE_RNG_DISTRIBUTION,
                    CUDNN_RNG_DISTRIBUTION_BERNOULLI,
                )?
                .set(
                    CUDNN_ATTR_RNG_BERNOULLI_DIST_PROBABILITY,
                    AttrValue::Double(vec![*probability]),
                )?;
                let r = self.finalized(r)?;
                let mut d = desc(CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_RNG_YDESC, *y)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_RNG_SEED, *seed)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_RNG_OFFSET_DESC, *offset)?;
                d.set_raw_desc(CUDNN_ATTR_OPERATION_RNG_DESC, r)?;
                d
            }
            OpSpec::Softmax { x, y, stats } => {
                let mut d = desc(CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_SOFTMAX_XDESC, *x)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_SOFTMAX_YDESC, *y)?;
                self.set_opt(&mut d, CUDNN_ATTR_OPERATION_SOFTMAX_STATS_DESC, *stats)?;
                d
            }
            OpSpec::Reshape { x, y } => {
                let mut d = desc(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_RESHAPE_XDESC, *x)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_RESHAPE_YDESC, *y)?;
                d
            }
            OpSpec::SdpaForward {
                q,
                k,
                v,
                o,
                stats,
                scale,
                seq_len_q,
                seq_len_kv,
            } => {
                let mut d = desc(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, *q)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_SDPA_FWD_KDESC, *k)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_SDPA_FWD_VDESC, *v)?;
                self.set_t(&mut d, CUDNN_ATTR_OPERATION_SDPA_FWD_ODESC, *o)?;
                self.set_opt(&mut d, CUDNN_ATTR_OPERATION_SDPA_FWD_STATSDESC, *stats)?;
                self.set_opt(&mut d, CUDNN_ATTR_OPERATION_SDPA_FWD_SCALEDESC, *scale)?;
                self.set_opt(
                    &mut d,
                    CUDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_QDESC,
                    *seq_len_q,
                )?;
                self.set_opt(
                    &mut d,
                    CUDNN_ATTR_OPERATION_SDPA_FWD_SEQ_LEN_KVDESC,
                    *seq_len_kv,
                )?;
                d
            }
        };
        Ok(d)
    }
}

fn with_tensor(e: Error, t: &TensorSpec) -> Error {
    crate::cudnn::backend::annotate(
        e,
        format!(
            "tensor `{}` (uid {}, dims {:?}, strides {:?})",
            t.name, t.uid, t.dims, t.strides
        ),
    )
}

/// Emits every descriptor of `graph` and finalizes the OPERATIONGRAPH (with `handle` when given).
pub fn emit(
    api: &'static dyn BackendApi,
    graph: BackendGraph,
    handle: Option<RawHandle>,
) -> Result<OperationGraph> {
    if graph.ops.is_empty() {
        return Err(Error::invalid_graph(
            "graph",
            None,
            "no backend operations to lower",
        ));
    }
    if graph.ops.len() > MAX_OPGRAPH_OPS {
        return Err(Error::invalid_graph(
            "graph",
            None,
            format!(
                "{} backend operations exceed the limit of {MAX_OPGRAPH_OPS}",
                graph.ops.len()
            ),
        ));
    }
    let mut em = Emitter {
        api,
        graph: &graph,
        tensors: HashMap::new(),
        aux: Vec::new(),
    };
    let mut ops = Vec::with_capacity(graph.ops.len());
    for (i, op) in graph.ops.iter().enumerate() {
        for u in op.tensors() {
            em.tensor(u)?;
        }
        let mut d = em.op(op)?;
        d.finalize().map_err(|e| {
            crate::cudnn::backend::annotate(e, format!("operation #{i} ({})", op_name(op)))
        })?;
        ops.push(d);
    }
    let mut g = Descriptor::new(api, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR)?;
    if let Some(h) = handle {
        g.set(CUDNN_ATTR_OPERATIONGRAPH_HANDLE, AttrValue::Handle(h))?;
    }
    g.set(
        CUDNN_ATTR_OPERATIONGRAPH_OPS,
        AttrValue::Descriptors(ops.iter().map(|d| d.raw()).collect()),
    )?;
    g.finalize()?;
    let Emitter { tensors, aux, .. } = em;
    Ok(OperationGraph {
        desc: g,
        ops,
        aux,
        tensors,
        graph,
    })
}

/// A short name of an operation for messages.
pub fn op_name(op: &OpSpec) -> String {
    let mode_name = |fam: &[(&'static str, u32)], m: u32| {
        fam.iter()
            .find(|(_, v)| *v == m)
            .map(|(n, _)| *n)
            .unwrap_or("?")
    };
    match op {
        OpSpec::Pointwise { mode, .. } | OpSpec::PointwiseBackward { mode, .. } => {
            mode_name(POINTWISE_MODE, *mode).to_owned()
        }
        OpSpec::Matmul { .. } => "MATMUL".into(),
        OpSpec::Reduction { mode, .. } => mode_name(REDUCE_OP, *mode).to_owned(),
        OpSpec::NormForward { .. } => "NORM_FORWARD".into(),
        OpSpec::NormBackward { .. } => "NORM_BACKWARD".into(),
        OpSpec::Convolution { kind, .. } => format!("CONVOLUTION_{kind:?}"),
        OpSpec::Rng { .. } => "RNG".into(),
        OpSpec::Reshape { .. } => "RESHAPE".into(),
        OpSpec::Softmax { .. } => "SOFTMAX".into(),
        OpSpec::SdpaForward { .. } => "SDPA_FWD".into(),
    }
}
