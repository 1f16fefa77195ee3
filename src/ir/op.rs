//! The op catalogue's schema: what one op-table row says ([`OpSpec`]: ports, outputs with their
//! presence conditions, shape and dtype rules, attributes with types and defaults, validity rules)
//! and the op identity [`OpKind`] (an index into the catalogue, written by name in JSON).
//!
//! The rows themselves live in [`super::tables`]; this module holds only the vocabulary, so that the
//! tables read as data and the evaluators ([`super::infer`], [`super::validate`]) stay generic.

use std::sync::OnceLock;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::attr::{AttrType, AttrValue};
use super::dtype::DataType;

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

/// A condition on a node (presence of outputs, validity rules).
#[derive(Clone, Debug, PartialEq)]
pub enum Cond {
    /// The input port is bound.
    Port(&'static str),
    /// The output port is bound.
    Output(&'static str),
    /// The attribute is explicitly set (any value).
    Set(&'static str),
    /// The attribute (or its default) is `true`.
    True(&'static str),
    /// The attribute is explicitly set to `false`.
    SetFalse(&'static str),
    /// The attribute (or its default) equals the enum/string value.
    Is(&'static str, &'static str),
    /// The attribute (or its default) is a number > 0.
    Positive(&'static str),
    /// Any of the conditions holds.
    Any(Vec<Cond>),
    /// All of the conditions hold.
    All(Vec<Cond>),
    /// The condition does not hold.
    Not(Box<Cond>),
}

impl Cond {
    /// Readable form, e.g. `port q`, `attr generate_stats = true`.
    pub fn describe(&self) -> String {
        match self {
            Cond::Port(p) => format!("input `{p}` bound"),
            Cond::Output(p) => format!("output `{p}` bound"),
            Cond::Set(a) => format!("`{a}` set"),
            Cond::True(a) => format!("`{a}` true"),
            Cond::SetFalse(a) => format!("`{a}` set to false"),
            Cond::Is(a, v) => format!("`{a}` = {v}"),
            Cond::Positive(a) => format!("`{a}` > 0"),
            Cond::Any(cs) => cs
                .iter()
                .map(Cond::describe)
                .collect::<Vec<_>>()
                .join(" or "),
            Cond::All(cs) => cs
                .iter()
                .map(Cond::describe)
                .collect::<Vec<_>>()
                .join(" and "),
            Cond::Not(c) => format!("not ({})", c.describe()),
        }
    }

    /// The first port or attribute name the condition mentions (errors name it).
    pub fn subject(&self) -> Option<&'static str> {
        match self {
            Cond::Port(p) | Cond::Output(p) => Some(p),
            Cond::Set(a)
            | Cond::True(a)
            | Cond::SetFalse(a)
            | Cond::Is(a, _)
            | Cond::Positive(a) => Some(a),
            Cond::Any(cs) | Cond::All(cs) => cs.first().and_then(Cond::subject),
            Cond::Not(c) => c.subject(),
        }
    }
}

/// A dimension reference: a port (input or output) and an axis (negative counts from the end).
pub type DimRef = (&'static str, i64);

/// How an output's dims are inferred when the caller did not declare them.
#[derive(Clone, Debug, PartialEq)]
pub enum ShapeRule {
    /// Must be declared by the caller (bind a tensor with dims to the output port).
    Given,
    /// The dims of an input port.
    SameAs(&'static str),
    /// `[1, 1, 1, 1]`.
    Scalar4,
    /// numpy broadcast of every bound input.
    Broadcast,
    /// `[...batch (elementwise max), A[-2], B[-1]]` of the two ports.
    Matmul(&'static str, &'static str),
    /// Convolution forward output from image, weight and the conv attributes.
    ConvFprop,
    /// Norm statistics: input dims with 1 on every non-batch axis where the scale dim is not 1
    /// (no scale: `[N,1,..]`).
    NormStats,
    /// Instance-norm statistics: `[N, C, 1, ..., 1]` of the input.
    InstanceStats,
    /// Genstats: input dims with every axis but 1 set to 1.
    Genstats,
    /// Slice: `ceil((limit - start) / step)` per axis from `slices`.
    Slice,
    /// Transpose: input dims permuted by `permutation`.
    Transpose,
    /// Concatenate: input 0 dims with `axis` summed over the list inputs.
    Concatenate,
    /// Block-scale quantize scale: input dims with `axis` divided by `block_size` (rounded up).
    BlockScale,
    /// SDPA output: `q.dim[:-1] + [v.dim[-1]]`.
    SdpaO,
    /// SDPA stats: `q.dim[:-1] + [1]`.
    SdpaStats,
    /// MoE grouped matmul: `[1, rows, weight[-1]]`.
    MoeGroupedMatmul,
    /// MoE grouped matmul backward dweight `[E, H, N]`.
    MoeGroupedMatmulBwd,
    /// Softmax stats: input dims with the last set to 1.
    LastDimOne(&'static str),
    /// Linear attention O: `[T, HO, V]` (T from `q`, V from `v`).
    LaOutput,
    /// Linear attention state: `[N, HO, V, K]`.
    LaState,
    /// Linear attention transition: `[N, HO, K, K]`.
    LaTransition,
    /// Linear attention checkpoints: `[max(T_rows / c + N, 1), HO, V, K]`.
    LaCheckpoints,
}

/// How an output's data type is filled when the caller did not set one.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DtypeRule {
    /// From the graph context (intermediate if virtual, else io).
    Context,
    /// Always this type when unset (e.g. SDPA `Stats` is FLOAT).
    Fixed(DataType),
    /// The dtype of an input port (falls back to the context when that port is unbound).
    SameAs(&'static str),
    /// The dtype of the first bound port among the two, else the fixed type.
    SameAsOr(&'static str, DataType),
}

/// A validity rule of an op, checked by [`super::validate`].
#[derive(Clone, Debug, PartialEq)]
pub enum Rule {
    /// The inner rule, reported with the reference's own message.
    Msg(Box<Rule>, &'static str),
    /// When `when` holds, `then` must hold.
    Implies(Cond, Cond),
    /// The two conditions must not both hold.
    Excludes(Cond, Cond),
    /// Exactly one of the two conditions holds.
    ExactlyOne(Cond, Cond),
    /// The port (when bound) has this rank.
    Rank(&'static str, usize),
    /// The port (when bound) has a rank in `min..=max`.
    RankIn(&'static str, usize, usize),
    /// Two dims are equal (checked when both ports are bound).
    DimEq(DimRef, DimRef),
    /// The first dim is a multiple of the second.
    DimDivisible(DimRef, DimRef),
    /// The port's last stride is 1.
    LastStrideOne(&'static str),
    /// The port's dtype is one of these.
    DtypeIn(&'static str, &'static [DataType]),
    /// The port's dtype is not this one.
    DtypeNot(&'static str, DataType),
    /// Two ports have the same dtype.
    SameDtype(&'static str, &'static str),
    /// The attribute (when set) is ≥ the bound.
    AttrMin(&'static str, f64),
    /// The attribute (when set) is < the bound.
    AttrBelow(&'static str, f64),
    /// The attribute (int list) has the rank of the port.
    ListLenIsRank(&'static str, &'static str),
    /// Matmul: A[-1] == B[-2] and batch dims broadcast.
    MatmulShapes(&'static str, &'static str),
    /// Inputs broadcast against each other (numpy rules).
    Broadcastable,
    /// Concatenate: every list input matches input 0 off `axis`.
    ConcatShapes,
    /// The output port's tensor must stay virtual.
    OutputVirtual(&'static str),
    /// Two ports hold the same number of elements.
    SameElementCount(&'static str, &'static str),
    /// Linear attention head grouping (`HK ∈ {H, HV}`, `max % min == 0`, gates at `HO`).
    LaHeads,
    /// Linear attention row counts (GDP expands `k/v/beta` by `num_householder`).
    LaRows,
    /// Linear attention backward: every declared parameter-gradient output matches its input.
    LaGradPresence,
}

impl Rule {
    /// Readable form for catalogues, e.g. "`q` has rank 4".
    pub fn describe(&self) -> String {
        let dim = |r: &DimRef| format!("dim {} of `{}`", r.1, r.0);
        match self {
            Rule::Msg(inner, msg) => format!("{msg} [{}]", inner.describe()),
            Rule::Implies(a, b) => format!("{} requires {}", a.describe(), b.describe()),
            Rule::Excludes(a, b) => format!("not both {} and {}", a.describe(), b.describe()),
            Rule::ExactlyOne(a, b) => format!("exactly one of {} / {}", a.describe(), b.describe()),
            Rule::Rank(p, r) => format!("`{p}` has rank {r}"),
            Rule::RankIn(p, lo, hi) => format!("`{p}` has rank {lo}..={hi}"),
            Rule::DimEq(a, b) => format!("{} == {}", dim(a), dim(b)),
            Rule::DimDivisible(a, b) => format!("{} is a multiple of {}", dim(a), dim(b)),
            Rule::LastStrideOne(p) => format!("`{p}` innermost stride is 1"),
            Rule::DtypeIn(p, ds) => format!(
                "`{p}` dtype in {{{}}}",
                ds.iter().map(|d| d.name()).collect::<Vec<_>>().join(", ")
            ),
            Rule::DtypeNot(p, d) => format!("`{p}` dtype is not {d}"),
            Rule::SameDtype(a, b) => format!("`{a}` dtype == `{b}` dtype"),
            Rule::AttrMin(a, m) => format!("`{a}` >= {m}"),
            Rule::AttrBelow(a, m) => format!("`{a}` < {m}"),
            Rule::ListLenIsRank(a, p) => format!("`{a}` has one entry per axis of `{p}`"),
            Rule::MatmulShapes(a, b) => format!("`{a}`[-1] == `{b}`[-2], batch dims broadcast"),
            Rule::Broadcastable => "inputs broadcast (numpy rules)".into(),
            Rule::ConcatShapes => "list inputs match off the concatenation axis".into(),
            Rule::OutputVirtual(p) => format!("`{p}` stays virtual"),
            Rule::SameElementCount(a, b) => format!("`{a}` and `{b}` hold the same element count"),
            Rule::LaHeads => {
                "HK in {H, HV}; max(H,HV) % min(H,HV) == 0; g, beta (w) carry HO heads".into()
            }
            Rule::LaRows => {
                "g, dO rows = q rows; k, v, beta (w) rows = q rows (GDP: q rows x num_householder)"
                    .into()
            }
            Rule::LaGradPresence => "parameter gradients have their parameter's dims".into(),
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
