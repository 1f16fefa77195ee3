//! The rule vocabulary of the op tables: conditions on a node ([`Cond`]), shape-inference rules
//! ([`ShapeRule`]), dtype-fill rules ([`DtypeRule`]) and validity rules ([`Rule`]), with their
//! readable descriptions. Evaluated by [`super::cond`], [`super::infer`] and [`super::rules`].

use super::dtype::DataType;

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

    /// Every port (`Port`, `Output`) and attribute name the condition mentions.
    pub fn names(&self, ports: &mut Vec<&'static str>, attrs: &mut Vec<&'static str>) {
        match self {
            Cond::Port(p) | Cond::Output(p) => ports.push(p),
            Cond::Set(a)
            | Cond::True(a)
            | Cond::SetFalse(a)
            | Cond::Is(a, _)
            | Cond::Positive(a) => attrs.push(a),
            Cond::Any(cs) | Cond::All(cs) => cs.iter().for_each(|c| c.names(ports, attrs)),
            Cond::Not(c) => c.names(ports, attrs),
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
    /// Mamba-2 summary transition: `[N, HO]`.
    LaTransitionScalar,
    /// Linear attention checkpoints: `[max(T_rows / c + N, 1), HO, V, K]`.
    LaCheckpoints,
    /// GDN's saved chunk factors (dnnplan's own port, not the reference's): `[max(T / 64 + N,
    /// 1), HO, GDN_CHUNK_FACTOR_BYTES]` bytes, one row per possible 64-token chunk slot.
    LaChunkFactors,
}

impl ShapeRule {
    /// True when the rule gives the op's dims exactly, so caller-declared dims must match it
    /// (false for `Given`, for the provisional norm-statistics and block-scale rules, and for
    /// `Scalar4`, whose rank callers may choose).
    pub fn is_exact(&self) -> bool {
        !matches!(
            self,
            ShapeRule::Given
                | ShapeRule::Scalar4
                | ShapeRule::NormStats
                | ShapeRule::InstanceStats
                | ShapeRule::BlockScale
        )
    }
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
    /// The first dim equals the second plus an offset (e.g. `state_indices[0] == cu_seqlens[0] - 1`).
    DimEqOffset(DimRef, DimRef, i64),
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
    /// Every port and attribute name the rule mentions (the generic linear-attention rules name
    /// none: they look up the ports they need).
    pub fn names(&self) -> (Vec<&'static str>, Vec<&'static str>) {
        let (mut ports, mut attrs) = (Vec::new(), Vec::new());
        match self {
            Rule::Msg(inner, _) => return inner.names(),
            Rule::Implies(a, b) | Rule::Excludes(a, b) | Rule::ExactlyOne(a, b) => {
                a.names(&mut ports, &mut attrs);
                b.names(&mut ports, &mut attrs);
            }
            Rule::Rank(p, _) | Rule::RankIn(p, _, _) | Rule::LastStrideOne(p) => ports.push(p),
            Rule::DtypeIn(p, _) | Rule::DtypeNot(p, _) | Rule::OutputVirtual(p) => ports.push(p),
            Rule::DimEq(a, b) | Rule::DimEqOffset(a, b, _) | Rule::DimDivisible(a, b) => {
                ports.extend([a.0, b.0])
            }
            Rule::SameDtype(a, b) | Rule::MatmulShapes(a, b) | Rule::SameElementCount(a, b) => {
                ports.extend([*a, *b])
            }
            Rule::AttrMin(a, _) | Rule::AttrBelow(a, _) => attrs.push(a),
            Rule::ListLenIsRank(a, p) => {
                attrs.push(a);
                ports.push(p);
            }
            Rule::Broadcastable
            | Rule::ConcatShapes
            | Rule::LaHeads
            | Rule::LaRows
            | Rule::LaGradPresence => {}
        }
        (ports, attrs)
    }

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
            Rule::DimEqOffset(a, b, o) => format!("{} == {} + ({o})", dim(a), dim(b)),
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
