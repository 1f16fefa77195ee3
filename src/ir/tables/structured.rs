//! Op rows: reduction and the structured ops (norms forward/backward, matmul and matmul_fp8,
//! convolutions, block-scale quantize/dequantize, MoE grouped matmul, layout ops, rope, rng,
//! genstats, resample, paged cache load, diagonal band mask, softmax, bn_finalize, dbn_weight).
//! Port names are the reference kwarg names; output tensor suffixes follow the reference renames
//! (`mean → MEAN`, `inv_var → INV_VARIANCE`, `DScale → DSCALE`, ...).

use super::helpers::*;
use crate::ir::dtype::DataType;
use crate::ir::enums::*;
use crate::ir::op::{
    AttrSpec, Cond, DtypeRule, NodeType as T, OpFamily as F, OpSpec, OutSpec, PortSpec, Rule,
    ShapeRule as S,
};

fn training() -> Cond {
    Cond::Is("norm_forward_phase", "TRAINING")
}

fn phase() -> AttrSpec {
    a_enum("norm_forward_phase", NORM_FWD_PHASES, None)
        .doc("INFERENCE or TRAINING (TRAINING emits the statistics)")
}

fn stats(name: &'static str, suffix: &'static str) -> OutSpec {
    out(name, S::NormStats).suffix(suffix).fp32()
}

fn stats_as(name: &'static str, suffix: &'static str, shape: S) -> OutSpec {
    out(name, shape).suffix(suffix).fp32()
}

/// A norm forward's inputs (rmsnorm and the layernorm-like rows).
fn norm_fwd_ins() -> Vec<PortSpec> {
    vec![req("input"), req("scale"), opt("bias"), req("epsilon")]
}

/// A norm backward's gradient of `scale` or `bias` (`DScale`, `DBias`), shaped like `scale`.
fn param_grad(name: &'static str, suffix: &'static str) -> OutSpec {
    out(name, S::SameAs("scale")).suffix(suffix)
}

/// `param_grad` of a row whose `scale` is optional: emitted only when `scale` is bound.
fn opt_param_grad(name: &'static str, suffix: &'static str) -> OutSpec {
    param_grad(name, suffix).when(Cond::Port("scale"))
}

/// layernorm-like forward (layernorm, adalayernorm, instancenorm) with mean and inv_var.
fn norm_fwd(name: &'static str, t: T, doc: &'static str) -> OpSpec {
    let shape = if t == T::Instancenorm {
        S::InstanceStats
    } else {
        S::NormStats
    };
    op(name, t, F::Norm, doc)
        .ins(norm_fwd_ins())
        .outs(vec![
            out("Y", S::SameAs("input")),
            stats_as("mean", "MEAN", shape.clone()).when(training()),
            stats_as("inv_var", "INV_VARIANCE", shape).when(training()),
        ])
        .attrs(vec![phase()])
        .rules(vec![required_attr("norm_forward_phase")])
}

/// layernorm-like backward with mean and inv_variance inputs.
fn norm_bwd(name: &'static str, t: T, doc: &'static str) -> OpSpec {
    op(name, t, F::Norm, doc)
        .ins(vec![
            req("grad"),
            req("input"),
            opt("scale"),
            req("mean"),
            req("inv_variance"),
        ])
        .outs(vec![
            out("DX", S::SameAs("input")),
            opt_param_grad("DScale", "DSCALE"),
            opt_param_grad("DBias", "DBIAS"),
        ])
        .rules(vec![Rule::DimEq(("grad", 0), ("input", 0))])
}

fn conv_attrs() -> Vec<AttrSpec> {
    vec![
        a_ints("padding").doc("symmetric padding per spatial axis (sets pre and post)"),
        a_ints("pre_padding").doc("padding before, per spatial axis"),
        a_ints("post_padding").doc("padding after, per spatial axis"),
        a_ints("stride").doc("filter stride per spatial axis (default 1)"),
        a_ints("dilation").doc("dilation per spatial axis (default 1)"),
        a_enum(
            "convolution_mode",
            CONVOLUTION_MODES,
            Some("CROSS_CORRELATION"),
        ),
    ]
}

fn conv_rules(x: &'static str) -> Vec<Rule> {
    vec![
        Rule::RankIn(x, 3, 8),
        excludes(Cond::Set("padding"), Cond::Set("pre_padding")),
        excludes(Cond::Set("padding"), Cond::Set("post_padding")),
    ]
}

fn conv(name: &'static str, t: T, ins: [&'static str; 2], out_port: &'static str) -> OpSpec {
    let shape = if t == T::ConvFprop {
        S::ConvFprop
    } else {
        S::Given
    };
    op(
        name,
        t,
        F::Conv,
        "convolution (NCHW logical dims; NHWC-ordered default output strides)",
    )
    .ins(reqs(&ins))
    .outs(vec![out(out_port, shape)])
    .attrs(conv_attrs())
    .rules(conv_rules(ins[0]))
}

fn rope(name: &'static str, t: T, x: &'static str) -> OpSpec {
    op(
        name,
        t,
        F::Misc,
        "rotary position embedding (OUTPUT_SCALE, ROPE_DIM)",
    )
    .ins(reqs(&[x, "freqs"]))
    .outs(vec![out("OUT_0", S::SameAs(x))])
    .attrs(vec![
        a_float("output_scale", 1.0).doc("scale applied to the output"),
        a_int("rope_dim", 0).doc("rotated head-dim prefix (0 = full head dim)"),
    ])
    .rules(vec![Rule::AttrMin("rope_dim", 0.0)])
}

/// The structured rows.
pub(crate) fn ops() -> Vec<OpSpec> {
    vec![
        op(
            "reduction",
            T::Reduction,
            F::Reduction,
            "reduce `input` onto the declared output dims (reduced axes have dim 1)",
        )
        .ins(vec![req("input"), opt("group_offset")])
        .outs(vec![out("OUT_0", S::Given)])
        .attrs(vec![
            a_enum("mode", REDUCTION_MODES, None).doc("ReductionMode_t"),
            a_bool("is_deterministic", false).doc("deterministic reduction (cuDNN >= 9.11)"),
        ])
        .rules(vec![required_attr("mode")]),
        op(
            "matmul",
            T::Matmul,
            F::Gemm,
            "C = A @ B over broadcast batch dims",
        )
        .ins(reqs(&["A", "B"]))
        .outs(vec![out("C", S::Matmul("A", "B"))])
        .attrs(vec![a_float("padding", 0.0).doc("padding value")])
        .rules(vec![Rule::MatmulShapes("A", "B")]),
        op(
            "matmul_fp8",
            T::MatmulFp8,
            F::Gemm,
            "FP8 matmul with descales, output scale and amax (composite)",
        )
        .ins(reqs(&["A", "B", "descale_A", "descale_B", "scale_C"]))
        .outs(vec![
            out("C", S::Matmul("A", "B")),
            out("amax_C", S::Scalar4).fp32(),
        ])
        .rules(vec![Rule::MatmulShapes("A", "B")]),
        op(
            "rmsnorm",
            T::Rmsnorm,
            F::Norm,
            "RMS normalization (NORM_FORWARD RMS_NORM)",
        )
        .ins(norm_fwd_ins())
        .outs(vec![
            out("Y", S::SameAs("input")),
            stats("inv_var", "INV_VARIANCE").when(training()),
        ])
        .attrs(vec![phase()])
        .rules(vec![required_attr("norm_forward_phase")]),
        op(
            "rmsnorm_backward",
            T::RmsnormBwd,
            F::Norm,
            "RMS normalization backward",
        )
        .ins(vec![
            req("grad"),
            req("input"),
            opt("scale"),
            req("inv_variance"),
        ])
        .outs(vec![
            out("DX", S::SameAs("input")),
            opt_param_grad("DScale", "Dscale"),
            opt_param_grad("DBias", "Dbias").when(Cond::True("has_dbias")),
        ])
        .attrs(vec![a_bool("has_dbias", false).doc("emit DBias")])
        .rules(vec![Rule::DimEq(("grad", 0), ("input", 0))]),
        norm_fwd(
            "layernorm",
            T::Layernorm,
            "layer normalization (NORM_FORWARD LAYER_NORM)",
        ),
        norm_bwd(
            "layernorm_backward",
            T::LayernormBwd,
            "layer normalization backward",
        ),
        norm_fwd(
            "adalayernorm",
            T::Adalayernorm,
            "adaptive layer normalization",
        )
        .min_cudnn(90900),
        norm_bwd(
            "adalayernorm_backward",
            T::AdalayernormBwd,
            "adaptive layer normalization backward",
        )
        .min_cudnn(90900),
        norm_fwd("instancenorm", T::Instancenorm, "instance normalization"),
        norm_bwd(
            "instancenorm_backward",
            T::InstancenormBwd,
            "instance normalization backward",
        ),
        op(
            "batchnorm",
            T::Batchnorm,
            F::Norm,
            "batch normalization, training (EXP_AVG_FACTOR = momentum)",
        )
        .ins(vec![
            req("input"),
            req("scale"),
            req("bias"),
            opt("in_running_mean"),
            opt("in_running_var"),
            req("epsilon"),
            opt("momentum"),
            list("peer_stats", false),
        ])
        .outs(vec![
            out("Y", S::SameAs("input")),
            stats_as("mean", "MEAN", S::SameAs("scale")),
            stats_as("inv_var", "INV_VARIANCE", S::SameAs("scale")),
            stats_as("next_running_mean", "NEXT_RUNNING_MEAN", S::SameAs("scale"))
                .when(Cond::Port("in_running_mean")),
            stats_as("next_running_var", "NEXT_RUNNING_VAR", S::SameAs("scale"))
                .when(Cond::Port("in_running_var")),
        ])
        .rules(vec![
            implies(Cond::Port("in_running_mean"), Cond::Port("in_running_var")),
            implies(Cond::Port("in_running_var"), Cond::Port("in_running_mean")),
            implies(Cond::Port("in_running_mean"), Cond::Port("momentum")),
        ]),
        op(
            "batchnorm_inference",
            T::BatchnormInference,
            F::Norm,
            "batch normalization, inference",
        )
        .ins(reqs(&["input", "mean", "inv_variance", "scale", "bias"]))
        .outs(vec![out("Y", S::SameAs("input"))]),
        op(
            "batchnorm_backward",
            T::BatchnormBwd,
            F::Norm,
            "batch normalization backward",
        )
        .ins(vec![
            req("grad"),
            req("input"),
            req("scale"),
            req("mean"),
            req("inv_variance"),
            list("peer_stats", false),
        ])
        .outs(vec![
            out("DX", S::SameAs("input")),
            param_grad("DScale", "DSCALE"),
            param_grad("DBias", "DBIAS"),
        ]),
        op(
            "genstats",
            T::Genstats,
            F::Misc,
            "per-channel SUM and SQ_SUM (CUDNN_GENSTATS_SUM_SQSUM)",
        )
        .ins(vec![req("input")])
        .outs(vec![
            out("SUM", S::Genstats).fp32(),
            out("SQ_SUM", S::Genstats).fp32(),
        ]),
        op(
            "block_scale_dequantize",
            T::BlockScaleDequantize,
            F::Quantize,
            "dequantize block-scaled input",
        )
        .ins(reqs(&["input", "descale"]))
        .outs(vec![out("OUT_0", S::SameAs("input"))])
        .attrs(vec![
            a_ints("block_size").doc("block extent per trailing axis, e.g. [1, 32]"),
            a_bool("is_negative_scale", false).doc("scales are negated"),
        ])
        .rules(vec![
            required_attr("block_size"),
            Rule::OutputVirtual("OUT_0"),
        ])
        .min_cudnn(90700),
        op(
            "block_scale_quantize",
            T::BlockScaleQuantize,
            F::Quantize,
            "quantize into blocks with one scale per block",
        )
        .ins(vec![req("input"), opt("group_offset")])
        .outs(vec![
            out("Y", S::SameAs("input")),
            out("scale", S::BlockScale),
        ])
        .attrs(vec![
            a_int_opt("block_size").doc("block extent along `axis`"),
            a_int("axis", -1).doc("blocked axis (default last)"),
            a_bool("transpose", false).doc("make the block axis the packed one"),
        ])
        .rules(vec![
            required_attr("block_size"),
            Rule::AttrMin("block_size", 1.0),
        ])
        .min_cudnn(90700),
        op(
            "moe_grouped_matmul",
            T::MoeGroupedMatmul,
            F::Gemm,
            "grouped matmul over experts (COMBINE is frontend-only)",
        )
        .ins(vec![
            req("token"),
            req("weight"),
            req("first_token_offset"),
            opt("token_index"),
            opt("token_ks"),
            opt("top_k_scores"),
        ])
        .outs(vec![out("OUT_0", S::MoeGroupedMatmul)])
        .attrs(vec![
            a_enum("mode", MOE_MODES, Some("NONE")).doc("MoeGroupedMatmulMode_t"),
            a_int_opt("top_k").doc("experts per token"),
        ])
        .rules(vec![
            implies(Cond::Is("mode", "GATHER"), Cond::Port("token_index")),
            implies(Cond::Is("mode", "COMBINE"), Cond::Port("top_k_scores")),
            Rule::AttrMin("top_k", 1.0),
        ])
        .min_cudnn(91500),
        op(
            "moe_grouped_matmul_bwd",
            T::MoeGroupedMatmulBwd,
            F::Gemm,
            "grouped matmul weight gradient dweight [E, H, N]",
        )
        .ins(reqs(&["doutput", "token", "first_token_offset"]))
        .outs(vec![out("dweight", S::MoeGroupedMatmulBwd)])
        .min_cudnn(92200),
        conv("conv_fprop", T::ConvFprop, ["image", "weight"], "Y"),
        conv("conv_dgrad", T::ConvDgrad, ["loss", "filter"], "DX"),
        conv("conv_wgrad", T::ConvWgrad, ["image", "loss"], "DW"),
        op(
            "reshape",
            T::Reshape,
            F::Layout,
            "reshape to the declared output dims",
        )
        .ins(vec![req("input")])
        .outs(vec![out("OUT_0", S::Given).like("input")])
        .attrs(vec![a_enum(
            "reshape_mode",
            RESHAPE_MODES,
            Some("VIEW_ONLY"),
        )])
        .rules(vec![Rule::SameElementCount("input", "OUT_0")]),
        op(
            "slice",
            T::Slice,
            F::Layout,
            "strided slice; `slices` = (start, limit, step) per axis",
        )
        .ins(vec![req("input")])
        .outs(vec![out("OUT_0", S::Slice).like("input")])
        .attrs(vec![
            a_ints("slices").doc("flattened (start, limit, step) per axis"),
        ])
        .rules(vec![required_attr("slices")]),
        op(
            "transpose",
            T::Transpose,
            F::Layout,
            "permute axes: out[i] = in[permutation[i]]",
        )
        .ins(vec![req("input")])
        .outs(vec![out("OUT_0", S::Transpose).like("input")])
        .attrs(vec![a_ints("permutation")])
        .rules(vec![
            required_attr("permutation"),
            Rule::ListLenIsRank("permutation", "input"),
        ])
        .min_cudnn(92200),
        op(
            "concatenate",
            T::Concatenate,
            F::Layout,
            "concatenate the list `inputs` along `axis`",
        )
        .ins(vec![list("inputs", true)])
        .outs(vec![out("OUT_0", S::Concatenate).like("inputs_0")])
        .attrs(vec![
            a_int("axis", 0).doc("concatenation axis"),
            a_int_opt("in_place_index").doc("input already in place in the output"),
        ])
        .rules(vec![Rule::ConcatShapes])
        .min_cudnn(90700),
        rope("rope", T::Rope, "input"),
        rope("rope_backward", T::RopeBwd, "dY"),
        op(
            "rng",
            T::Rng,
            F::Misc,
            "random tensor (backend: BERNOULLI only)",
        )
        .ins(opts(&["seed", "offset"]))
        .outs(vec![out("Y", S::Given)])
        .attrs(vec![
            a_enum("distribution", RNG_DISTRIBUTIONS, Some("BERNOULLI")),
            a_float_opt("bernoulli_probability").doc("P(1) for BERNOULLI"),
            a_int_opt("seed_value").doc("seed as a value instead of the `seed` tensor"),
        ])
        .rules(vec![
            implies(Cond::Port("seed"), Cond::Port("offset")),
            excludes(Cond::Port("seed"), Cond::Set("seed_value")),
            implies(
                Cond::Is("distribution", "BERNOULLI"),
                Cond::Set("bernoulli_probability"),
            ),
        ]),
        op(
            "resample",
            T::Resample,
            F::Misc,
            "pooling / resampling (RESAMPLE_FWD)",
        )
        .ins(vec![req("input")])
        .outs(vec![
            out("Y", S::Given),
            out("Index", S::Given).when(Cond::SetFalse("is_inference")),
        ])
        .attrs(vec![
            a_enum("resampling_mode", RESAMPLE_MODES, None),
            a_enum("padding_mode", PADDING_MODES, Some("ZERO_PAD")),
            a_ints("pre_padding"),
            a_ints("post_padding"),
            a_ints("stride"),
            a_ints("window"),
            a_bool_opt("is_inference").doc("false: also emit the max-pool Index"),
        ])
        .rules(vec![
            required_attr("resampling_mode"),
            required_attr("window"),
        ]),
        op(
            "paged_cache_load",
            T::PagedCacheLoad,
            F::Misc,
            "gather KV pages into a dense tensor",
        )
        .ins(reqs(&["container", "seq_len", "page_table"]))
        .outs(vec![out("Y", S::Given).like("container")])
        .min_cudnn(90500),
        op(
            "diagonal_band_mask",
            T::DiagonalBandMask,
            F::Misc,
            "mask scores outside the diagonal band",
        )
        .ins(vec![req("input"), opt("seq_len_q"), opt("seq_len_kv")])
        .outs(vec![out("OUT_0", S::SameAs("input")).like("input")])
        .attrs(vec![
            a_int_opt("left_bound"),
            a_int_opt("right_bound"),
            a_enum("diagonal_alignment", DIAGONAL_ALIGNMENTS, Some("TOP_LEFT")),
            a_float_opt("mask_value").doc("value of masked scores (default -inf)"),
        ])
        .rules(vec![implies(
            Cond::Port("seq_len_q"),
            Cond::Port("seq_len_kv"),
        )]),
        op(
            "softmax",
            T::Softmax,
            F::Misc,
            "row softmax with optional stats / max and sum-exp",
        )
        .ins(vec![req("input"), opt("sink_token")])
        .outs(vec![
            out("OUT_0", S::SameAs("input")),
            out("Stats", S::LastDimOne("input"))
                .fp32()
                .when(Cond::True("use_stats")),
            out("Max", S::LastDimOne("input"))
                .fp32()
                .when(Cond::True("use_M_Zinv")),
            out("Sum_exp", S::LastDimOne("input"))
                .fp32()
                .when(Cond::True("use_M_Zinv")),
        ])
        .attrs(vec![
            a_bool("use_stats", true).doc("emit Stats = max + log(sum exp)"),
            a_bool("use_M_Zinv", false).doc("emit Max and Sum_exp"),
            a_bool("stats_use_log2", false).doc("Stats in log2 units"),
        ]),
        op(
            "bn_finalize",
            T::BnFinalize,
            F::Norm,
            "batchnorm finalize statistics (C++ primitive)",
        )
        .ins(vec![
            req("sum"),
            req("sq_sum"),
            req("scale"),
            req("bias"),
            req("epsilon"),
            req("accum_count"),
            opt("prev_running_mean"),
            opt("prev_running_var"),
            opt("momentum"),
        ])
        .outs(vec![
            out("equivalent_scale", S::SameAs("scale")),
            out("equivalent_bias", S::SameAs("scale")),
            out("mean", S::SameAs("sum")).fp32(),
            out("inv_variance", S::SameAs("sum")).fp32(),
            out("next_running_mean", S::SameAs("sum"))
                .fp32()
                .when(Cond::Port("prev_running_mean")),
            out("next_running_var", S::SameAs("sum"))
                .fp32()
                .when(Cond::Port("prev_running_var")),
        ]),
        op(
            "dbn_weight",
            T::DbnWeight,
            F::Norm,
            "batchnorm backward weights (C++ primitive)",
        )
        .ins(reqs(&["loss", "input", "mean", "inv_variance", "scale"]))
        .outs(vec![
            out("dscale", S::SameAs("scale")),
            out("dbias", S::SameAs("scale")),
            out("eq_scale_dy", S::SameAs("scale")).dtype(DtypeRule::Fixed(DataType::Float)),
            out("eq_scale_x", S::SameAs("scale")).fp32(),
            out("eq_bias", S::SameAs("scale")).fp32(),
        ]),
    ]
}
