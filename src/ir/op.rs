//! The op catalogue's schema: what one op-table row says ([`OpSpec`]: ports, outputs with their
//! presence conditions, shape and dtype rules, attributes with types and defaults, validity rules)
//! and the op identity [`OpKind`] (an index into the catalogue, written by name in JSON).
//!
//! The rows themselves live in [`super::tables`]; this module holds only the vocabulary, so that the
//! tables read as data and the evaluators ([`super::infer`], [`super::validate`]) stay generic.

use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::attr::{AttrType, AttrValue};
pub use super::op_rules::{Cond, DimRef, DtypeRule, Rule, ShapeRule};

macro_rules! node_types {
    ($($variant:ident = $name:literal,)*) => {
        /// The reference's node type (Python `NodeType`, plus the C++-only primitives).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum NodeType {
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
        }

        impl NodeType {
            /// Every node type.
            pub const ALL: &'static [NodeType] = &[$(NodeType::$variant,)*];

            /// The reference name, e.g. `"SDPA_BWD"`.
            pub fn name(self) -> &'static str {
                match self {
                    $(NodeType::$variant => $name,)*
                }
            }
        }
    };
}

node_types! {
    ConvFprop = "CONV_FPROP",
    ConvDgrad = "CONV_DGRAD",
    ConvWgrad = "CONV_WGRAD",
    Genstats = "GENSTATS",
    Reshape = "RESHAPE",
    Slice = "SLICE",
    Concatenate = "CONCATENATE",
    Transpose = "TRANSPOSE",
    Rope = "ROPE",
    RopeBwd = "ROPE_BWD",
    Matmul = "MATMUL",
    MatmulFp8 = "MATMUL_FP8",
    Pointwise = "POINTWISE",
    Reduction = "REDUCTION",
    Rmsnorm = "RMSNORM",
    RmsnormBwd = "RMSNORM_BWD",
    Layernorm = "LAYERNORM",
    LayernormBwd = "LAYERNORM_BWD",
    Adalayernorm = "ADALAYERNORM",
    AdalayernormBwd = "ADALAYERNORM_BWD",
    Instancenorm = "INSTANCENORM",
    InstancenormBwd = "INSTANCENORM_BWD",
    Batchnorm = "BATCHNORM",
    BatchnormInference = "BATCHNORM_INFERENCE",
    BatchnormBwd = "BATCHNORM_BWD",
    Sdpa = "SDPA",
    SdpaBwd = "SDPA_BWD",
    SdpaFp8 = "SDPA_FP8",
    SdpaFp8Bwd = "SDPA_FP8_BWD",
    SdpaMxfp8 = "SDPA_MXFP8",
    SdpaMxfp8Bwd = "SDPA_MXFP8_BWD",
    Gdn = "GDN",
    GdnBwd = "GDN_BWD",
    Kda = "KDA",
    KdaBwd = "KDA_BWD",
    Gdn2 = "GDN2",
    Gdn2Bwd = "GDN2_BWD",
    Gdp = "GDP",
    GdpBwd = "GDP_BWD",
    GdnSummary = "GDN_SUMMARY",
    KdaSummary = "KDA_SUMMARY",
    Gdn2Summary = "GDN2_SUMMARY",
    GdpSummary = "GDP_SUMMARY",
    GdnSummaryBwd = "GDN_SUMMARY_BWD",
    KdaSummaryBwd = "KDA_SUMMARY_BWD",
    Gdn2SummaryBwd = "GDN2_SUMMARY_BWD",
    GdpSummaryBwd = "GDP_SUMMARY_BWD",
    MoeGroupedMatmul = "MOE_GROUPED_MATMUL",
    MoeGroupedMatmulBwd = "MOE_GROUPED_MATMUL_BWD",
    BlockScaleQuantize = "BLOCK_SCALE_QUANTIZE",
    BlockScaleDequantize = "BLOCK_SCALE_DEQUANTIZE",
    Rng = "RNG",
    Resample = "RESAMPLE",
    PagedCacheLoad = "PAGED_CACHE_LOAD",
    DiagonalBandMask = "DIAGONAL_BAND_MASK",
    Softmax = "SOFTMAX",
    Mamba2 = "MAMBA2",
    Mamba2Bwd = "MAMBA2_BWD",
    Mamba2Summary = "MAMBA2_SUMMARY",
    Mamba2SummaryBwd = "MAMBA2_SUMMARY_BWD",
    BnFinalize = "BN_FINALIZE",
    DbnWeight = "DBN_WEIGHT",
}

/// Coarse grouping of ops (catalogue sections; engines pick families).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum OpFamily {
    /// Elementwise ops (one per builder name).
    Pointwise,
    /// Reductions.
    Reduction,
    /// Normalizations, forward and backward.
    Norm,
    /// Convolutions.
    Conv,
    /// Matmul, matmul_fp8, MoE grouped matmul.
    Gemm,
    /// Shape/layout ops: reshape, slice, transpose, concatenate.
    Layout,
    /// Quantization: block-scale quantize/dequantize.
    Quantize,
    /// Everything else structured: rope, rng, genstats, resample, paged cache load, masks, softmax.
    Misc,
    /// The SDPA family.
    Sdpa,
    /// Linear attention (GDN, KDA, GDN-2, GDP and summaries).
    LinearAttention,
}

impl OpFamily {
    /// Lower-case name.
    pub fn name(self) -> &'static str {
        match self {
            OpFamily::Pointwise => "pointwise",
            OpFamily::Reduction => "reduction",
            OpFamily::Norm => "norm",
            OpFamily::Conv => "conv",
            OpFamily::Gemm => "gemm",
            OpFamily::Layout => "layout",
            OpFamily::Quantize => "quantize",
            OpFamily::Misc => "misc",
            OpFamily::Sdpa => "sdpa",
            OpFamily::LinearAttention => "linear_attention",
        }
    }
}

/// One input port.
#[derive(Clone, Debug, PartialEq)]
pub struct PortSpec {
    /// Port name (= the reference kwarg name).
    pub name: &'static str,
    /// Must be bound.
    pub required: bool,
    /// A list port: bound as `<name>_0`, `<name>_1`, ...
    pub list: bool,
}

/// One output port.
#[derive(Clone, Debug, PartialEq)]
pub struct OutSpec {
    /// Port name.
    pub name: &'static str,
    /// Suffix of the automatic tensor name `<node>::<suffix>`.
    pub suffix: &'static str,
    /// The output exists iff every condition holds (empty: always).
    pub when: Vec<Cond>,
    /// The caller passes this output's tensor (reference out-kwargs); never created automatically.
    pub caller_provided: bool,
    /// Dims inference.
    pub shape: ShapeRule,
    /// Dtype fill.
    pub dtype: DtypeRule,
}

/// One attribute.
#[derive(Clone, Debug, PartialEq)]
pub struct AttrSpec {
    /// Attribute name (= the reference kwarg / param name).
    pub name: &'static str,
    /// Declared type.
    pub ty: AttrType,
    /// Default applied by engines/lowering when unset (`None`: none or computed, see `doc`).
    pub default: Option<AttrValue>,
    /// One-line meaning (catalogue).
    pub doc: &'static str,
}

/// One op of the catalogue.
#[derive(Clone, Debug, PartialEq)]
pub struct OpSpec {
    /// Builder name, e.g. `"sdpa"`, `"add"`, `"layernorm_backward"` (the op's identity).
    pub name: &'static str,
    /// Reference node type.
    pub node_type: NodeType,
    /// Catalogue family.
    pub family: OpFamily,
    /// Pointwise mode (`PointwiseMode_t` name) for pointwise ops.
    pub pointwise_mode: Option<&'static str>,
    /// Inputs in reference (positional) order.
    pub inputs: Vec<PortSpec>,
    /// Outputs in reference return order.
    pub outputs: Vec<OutSpec>,
    /// Attributes.
    pub attrs: Vec<AttrSpec>,
    /// Validity rules beyond required ports and attribute types.
    pub rules: Vec<Rule>,
    /// False for python-only ops (no cuDNN backend lowering).
    pub backend_lowering: bool,
    /// A node of a lowerable op becomes python-only when any of these holds (a set python-only
    /// attribute, a bound python-only input, a requested python-only output).
    pub python_only_when: Vec<Cond>,
    /// Minimum cuDNN version (frontend integer form) for the backend lowering, when gated.
    pub min_cudnn: Option<u32>,
    /// One-line description.
    pub doc: &'static str,
}

impl OpSpec {
    /// True when every port and attribute the rule names belongs to this op.
    pub fn rule_applies(&self, rule: &Rule) -> bool {
        let (ports, attrs) = rule.names();
        ports
            .iter()
            .all(|p| self.input(p).is_some() || self.output(p).is_some())
            && attrs.iter().all(|a| self.attr(a).is_some())
    }

    /// Drops the rules of a shared rule set that name a kwarg this op does not have (such a rule
    /// cannot be broken on this op). Used by families that share rule sets across ops.
    pub fn retain_applicable_rules(mut self) -> Self {
        let rules = std::mem::take(&mut self.rules);
        self.rules = rules.into_iter().filter(|r| self.rule_applies(r)).collect();
        self
    }

    /// The input port spec named `port` (list ports match `<name>_<i>`).
    pub fn input(&self, port: &str) -> Option<&PortSpec> {
        self.inputs.iter().find(|p| {
            p.name == port
                || (p.list
                    && port
                        .strip_prefix(p.name)
                        .and_then(|r| r.strip_prefix('_'))
                        .is_some_and(|i| !i.is_empty() && i.bytes().all(|b| b.is_ascii_digit())))
        })
    }

    /// The output port spec named `port`.
    pub fn output(&self, port: &str) -> Option<&OutSpec> {
        self.outputs.iter().find(|o| o.name == port)
    }

    /// The attribute spec named `name`.
    pub fn attr(&self, name: &str) -> Option<&AttrSpec> {
        self.attrs.iter().find(|a| a.name == name)
    }
}

/// The op identity: an index into the catalogue. Written by name in JSON; stable within a build
/// (the C API's op kind values are these indices and are also queryable by name).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct OpKind(u16);

fn catalogue() -> &'static [OpSpec] {
    static CATALOGUE: OnceLock<Vec<OpSpec>> = OnceLock::new();
    CATALOGUE.get_or_init(super::tables::all_ops)
}

impl OpKind {
    /// Every op of the catalogue, in catalogue order.
    pub fn all() -> impl Iterator<Item = OpKind> {
        (0..catalogue().len()).map(|i| OpKind(i as u16))
    }

    /// The op with this builder name.
    pub fn from_name(name: &str) -> Option<OpKind> {
        catalogue()
            .iter()
            .position(|s| s.name == name)
            .map(|i| OpKind(i as u16))
    }

    /// The op at this catalogue index.
    pub fn from_index(index: u32) -> Option<OpKind> {
        ((index as usize) < catalogue().len()).then_some(OpKind(index as u16))
    }

    /// Catalogue index.
    pub fn index(self) -> u32 {
        self.0 as u32
    }

    /// The table row.
    pub fn spec(self) -> &'static OpSpec {
        &catalogue()[self.0 as usize]
    }

    /// Builder name.
    pub fn name(self) -> &'static str {
        self.spec().name
    }

    /// Reference node type.
    pub fn node_type(self) -> NodeType {
        self.spec().node_type
    }

    /// Family.
    pub fn family(self) -> OpFamily {
        self.spec().family
    }
}

impl std::fmt::Display for OpKind {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for OpKind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for OpKind {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = String::deserialize(d)?;
        OpKind::from_name(&name)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown op `{name}`")))
    }
}
