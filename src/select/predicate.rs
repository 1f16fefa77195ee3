//! Rule predicates as data: a `const`-constructible tree of atoms over [`Facts`] and the
//! environment, with no closures, so every rule can be printed and serialised. Evaluation is
//! pure; the evaluation context carries the architecture and cuDNN version separately so the
//! evaluator can re-run a rule counterfactually ("would this pass on cuDNN 9.6.0?").
//!
//! Besides `eval`, each predicate can `describe` what it expects and report the `actual` values
//! it read, which is how a failing rule names its failing atoms.

use std::fmt::Write as _;

use super::engines::{CapCheck, EngineCaps};
use super::env::Environment;
use super::facts::Facts;
use super::request::{
    BiasShape, BiasType, Dtype, Format, Fp8Recipe, Group, Layout, Mask, SoftmaxType,
};
use super::target::Target;
use super::version::CudnnVer;

/// Comparison operator.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Cmp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `>=`
    Ge,
    /// `>`
    Gt,
}

impl Cmp {
    fn holds<T: PartialOrd>(self, a: T, b: T) -> bool {
        match self {
            Cmp::Lt => a < b,
            Cmp::Le => a <= b,
            Cmp::Eq => a == b,
            Cmp::Ne => a != b,
            Cmp::Ge => a >= b,
            Cmp::Gt => a > b,
        }
    }
    fn symbol(self) -> &'static str {
        match self {
            Cmp::Lt => "<",
            Cmp::Le => "<=",
            Cmp::Eq => "==",
            Cmp::Ne => "!=",
            Cmp::Ge => ">=",
            Cmp::Gt => ">",
        }
    }
}

/// Boolean facts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Flag {
    /// Training (forward with stats and backward).
    Training,
    /// Deterministic training (determinism only matters for the backward).
    DeterministicTraining,
    /// Paged K/V layout.
    Paged,
    /// Q or K/V ragged (THD).
    Thd,
    /// CUDA-graph capture.
    CudaGraph,
    /// Dropout probability > 0.
    DropoutOn,
    /// `return_max_logit`.
    MaxLogit,
    /// Framework KV cache.
    KvCache,
    /// The bias requires a gradient.
    BiasRequiresGrad,
    /// `d_qk != d_v`.
    Mla,
    /// TE would need int64 ragged offsets.
    NeedsInt64Offsets,
    /// Bottom-right alignment that survives lowering.
    BrEffective,
    /// Q is FP8.
    Fp8,
    /// The target is not switched off by policy.
    TargetEnabled,
    /// Policy allows FP8 emulation in the unfused path.
    Fp8Emulation,
}

/// Integer facts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IntField {
    /// Batch.
    B,
    /// Query heads.
    Hq,
    /// K/V heads.
    Hkv,
    /// Max query length.
    Sq,
    /// Max K/V length.
    Skv,
    /// Q/K head dim.
    Dqk,
    /// V head dim.
    Dv,
    /// Canonical left window size (-1 = unbounded).
    Wl,
    /// Canonical right window size (-1 = unbounded).
    Wr,
    /// `b * h_q`.
    BHq,
}

impl IntField {
    fn name(self) -> &'static str {
        match self {
            IntField::B => "b",
            IntField::Hq => "h_q",
            IntField::Hkv => "h_kv",
            IntField::Sq => "s_q",
            IntField::Skv => "s_kv",
            IntField::Dqk => "d_qk",
            IntField::Dv => "d_v",
            IntField::Wl => "wl",
            IntField::Wr => "wr",
            IntField::BHq => "b*h_q",
        }
    }
    fn get(self, f: &Facts) -> i64 {
        let r = &f.request;
        let c = |v: u64| i64::try_from(v).unwrap_or(i64::MAX);
        match self {
            IntField::B => c(r.b),
            IntField::Hq => c(r.h_q),
            IntField::Hkv => c(r.h_kv),
            IntField::Sq => c(r.s_q),
            IntField::Skv => c(r.s_kv),
            IntField::Dqk => c(r.d_qk),
            IntField::Dv => c(r.d_v),
            IntField::Wl => f.window.0,
            IntField::Wr => f.window.1,
            IntField::BHq => c(r.b.saturating_mul(r.h_q)),
        }
    }
}

/// Which format a format atom reads.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Side {
    /// The combined `qkv_format`.
    Qkv,
    /// `q_format`.
    Q,
    /// `kv_format`.
    Kv,
}

/// A predicate.
#[derive(Copy, Clone, Debug)]
pub enum P {
    /// Always true.
    True,
    /// Every sub-predicate holds.
    All(&'static [P]),
    /// At least one sub-predicate holds.
    Any(&'static [P]),
    /// The sub-predicate does not hold.
    Not(&'static P),
    /// Runtime cuDNN version compared with a constant.
    Ver(Cmp, CudnnVer),
    /// Runtime cuDNN version is one of these.
    VerIn(&'static [CudnnVer]),
    /// Architecture compared with a constant.
    Sm(Cmp, u16),
    /// A boolean fact.
    Is(Flag),
    /// Mask type in the set.
    Mask(&'static [Mask]),
    /// Bias type in the set.
    Bias(&'static [BiasType]),
    /// Bias shape in the set.
    BiasShape(&'static [BiasShape]),
    /// Softmax type in the set.
    Softmax(&'static [SoftmaxType]),
    /// Q dtype in the set.
    QDtype(&'static [Dtype]),
    /// O dtype in the set.
    ODtype(&'static [Dtype]),
    /// A format in the set.
    Fmt(Side, &'static [Format]),
    /// Layout in the set.
    Layout(&'static [Layout]),
    /// Layout group in the set.
    Group(&'static [Group]),
    /// FP8 recipe in the set.
    Recipe(&'static [Fp8Recipe]),
    /// Integer fact compared with a constant.
    Int(IntField, Cmp, i64),
    /// Two integer facts compared.
    IntCmp(IntField, Cmp, IntField),
    /// Integer fact divisible by a constant.
    DivBy(IntField, i64),
    /// `(d_qk, d_v) == (a, b)`.
    Dims(u64, u64),
    /// An engine capability-row check.
    Engine(&'static EngineCaps, CapCheck),
}

/// What a predicate is evaluated against.
#[derive(Copy, Clone, Debug)]
pub struct Ctx<'a> {
    /// Canonical request and derived facts.
    pub facts: &'a Facts,
    /// Environment (policy, engines).
    pub env: &'a Environment,
    /// Architecture (may differ from `env.sm` in counterfactual runs).
    pub sm: u16,
    /// Runtime cuDNN version (0.0.0 when none is loaded; cuDNN targets are then not evaluated).
    pub cudnn: CudnnVer,
    /// The candidate being judged.
    pub target: Target,
}

fn set_names<T: std::fmt::Display>(xs: &[T]) -> String {
    let v: Vec<String> = xs.iter().map(|x| x.to_string()).collect();
    if v.len() == 1 {
        v[0].clone()
    } else {
        format!("{{{}}}", v.join(", "))
    }
}

fn flag_name(f: Flag) -> &'static str {
    match f {
        Flag::Training => "training",
        Flag::DeterministicTraining => "deterministic training",
        Flag::Paged => "paged K/V",
        Flag::Thd => "ragged (THD) layout",
        Flag::CudaGraph => "CUDA-graph capture",
        Flag::DropoutOn => "dropout",
        Flag::MaxLogit => "return_max_logit",
        Flag::KvCache => "KV cache",
        Flag::BiasRequiresGrad => "bias requires grad",
        Flag::Mla => "d_qk != d_v",
        Flag::NeedsInt64Offsets => "int64 ragged offsets needed",
        Flag::BrEffective => "bottom-right alignment",
        Flag::Fp8 => "FP8 inputs",
        Flag::TargetEnabled => "target enabled by policy",
        Flag::Fp8Emulation => "FP8 emulation allowed",
    }
}

impl P {
    /// Evaluates the predicate.
    pub fn eval(&self, cx: &Ctx<'_>) -> bool {
        let f = cx.facts;
        let r = &f.request;
        match *self {
            P::True => true,
            P::All(xs) => xs.iter().all(|p| p.eval(cx)),
            P::Any(xs) => xs.iter().any(|p| p.eval(cx)),
            P::Not(p) => !p.eval(cx),
            P::Ver(c, v) => c.holds(cx.cudnn, v),
            P::VerIn(vs) => vs.contains(&cx.cudnn),
            P::Sm(c, v) => c.holds(cx.sm, v),
            P::Is(flag) => flag_value(flag, cx),
            P::Mask(ms) => ms.contains(&r.mask),
            P::Bias(bs) => bs.contains(&r.bias),
            P::BiasShape(bs) => bs.contains(&r.bias_shape),
            P::Softmax(ss) => ss.contains(&r.softmax),
            P::QDtype(ds) => ds.contains(&r.q_dtype),
            P::ODtype(ds) => ds.contains(&r.o_dtype),
            P::Fmt(side, fs) => fs.contains(&side_format(side, f)),
            P::Layout(ls) => ls.contains(&r.layout),
            P::Group(gs) => gs.contains(&f.group),
            P::Recipe(rs) => rs.contains(&r.fp8_recipe),
            P::Int(field, c, v) => c.holds(field.get(f), v),
            P::IntCmp(a, c, b) => c.holds(a.get(f), b.get(f)),
            P::DivBy(field, m) => m != 0 && field.get(f) % m == 0,
            P::Dims(a, b) => r.d_qk == a && r.d_v == b,
            P::Engine(row, check) => row.check(check, cx),
        }
    }

    /// What the predicate expects, in words ("cuDNN >= 9.6.0", "mask in {padding, ...}").
    pub fn describe(&self) -> String {
        match *self {
            P::True => "always".to_owned(),
            P::All(xs) => {
                let v: Vec<String> = xs.iter().map(P::describe).collect();
                format!("({})", v.join(" and "))
            }
            P::Any(xs) => {
                let v: Vec<String> = xs.iter().map(P::describe).collect();
                format!("({})", v.join(" or "))
            }
            P::Not(p) => match *p {
                P::Is(flag) => format!("no {}", flag_name(flag)),
                P::Mask(ms) => format!("mask not in {}", set_names(ms)),
                P::Dims(a, b) => format!("(d_qk, d_v) != ({a}, {b})"),
                P::Layout(ls) => format!("layout not in {}", set_names(ls)),
                P::Fmt(side, fs) => format!("{} not in {}", side_name(side), set_names(fs)),
                P::DivBy(field, m) => format!("{} % {m} != 0", field.name()),
                _ => format!("not {}", p.describe()),
            },
            P::Ver(c, v) => format!("cuDNN {} {v}", c.symbol()),
            P::VerIn(vs) => format!("cuDNN in {}", set_names(vs)),
            P::Sm(c, v) => format!("SM {} {v}", c.symbol()),
            P::Is(flag) => flag_name(flag).to_owned(),
            P::Mask(ms) => format!("mask in {}", set_names(ms)),
            P::Bias(bs) => format!("bias in {}", set_names(bs)),
            P::BiasShape(bs) => format!("bias shape in {}", set_names(bs)),
            P::Softmax(ss) => format!("softmax in {}", set_names(ss)),
            P::QDtype(ds) => format!("q_dtype in {}", set_names(ds)),
            P::ODtype(ds) => format!("o_dtype in {}", set_names(ds)),
            P::Fmt(side, fs) => format!("{} in {}", side_name(side), set_names(fs)),
            P::Layout(ls) => format!("layout in {}", set_names(ls)),
            P::Group(gs) => format!("layout group in {}", set_names(gs)),
            P::Recipe(rs) => format!("FP8 recipe in {}", set_names(rs)),
            P::Int(field, c, v) => format!("{} {} {v}", field.name(), c.symbol()),
            P::IntCmp(a, c, b) => format!("{} {} {}", a.name(), c.symbol(), b.name()),
            P::DivBy(field, m) => format!("{} % {m} == 0", field.name()),
            P::Dims(a, b) => format!("(d_qk, d_v) == ({a}, {b})"),
            P::Engine(row, check) => row.describe(check),
        }
    }

    /// The actual values this predicate reads, e.g. `"cuDNN 9.5.1"`, `"mask padding"`.
    pub fn actual(&self, cx: &Ctx<'_>) -> String {
        let mut out = Vec::new();
        self.collect_actual(cx, &mut out);
        out.dedup();
        let mut seen = Vec::new();
        for s in out {
            if !seen.contains(&s) {
                seen.push(s);
            }
        }
        seen.join(", ")
    }

    fn collect_actual(&self, cx: &Ctx<'_>, out: &mut Vec<String>) {
        let f = cx.facts;
        let r = &f.request;
        match *self {
            P::True => {}
            P::All(xs) | P::Any(xs) => xs.iter().for_each(|p| p.collect_actual(cx, out)),
            P::Not(p) => p.collect_actual(cx, out),
            P::Ver(..) | P::VerIn(_) => out.push(format!("cuDNN {}", cx.cudnn)),
            P::Sm(..) => out.push(format!("SM {}", cx.sm)),
            P::Is(flag) => out.push(format!(
                "{}: {}",
                flag_name(flag),
                if flag_value(flag, cx) { "yes" } else { "no" }
            )),
            P::Mask(_) => out.push(format!("mask {}", r.mask)),
            P::Bias(_) => out.push(format!("bias {}", r.bias)),
            P::BiasShape(_) => out.push(format!("bias shape {}", r.bias_shape)),
            P::Softmax(_) => out.push(format!("softmax {}", r.softmax)),
            P::QDtype(_) => out.push(format!("q_dtype {}", r.q_dtype)),
            P::ODtype(_) => out.push(format!("o_dtype {}", r.o_dtype)),
            P::Fmt(side, _) => out.push(format!("{} {}", side_name(side), side_format(side, f))),
            P::Layout(_) => out.push(format!("layout {}", r.layout)),
            P::Group(_) => out.push(format!("layout group {}", f.group)),
            P::Recipe(_) => out.push(format!("FP8 recipe {}", r.fp8_recipe)),
            P::Int(field, ..) | P::DivBy(field, _) => {
                out.push(format!("{} = {}", field.name(), field.get(f)))
            }
            P::IntCmp(a, _, b) => {
                out.push(format!("{} = {}", a.name(), a.get(f)));
                out.push(format!("{} = {}", b.name(), b.get(f)));
            }
            P::Dims(..) => out.push(format!("(d_qk, d_v) = ({}, {})", r.d_qk, r.d_v)),
            P::Engine(row, check) => out.push(row.actual(check, cx)),
        }
    }

    /// The top-level conjuncts (nested `All`s flattened).
    pub fn conjuncts(&'static self) -> Vec<&'static P> {
        match self {
            P::All(xs) => xs.iter().flat_map(P::conjuncts).collect(),
            P::True => Vec::new(),
            other => vec![other],
        }
    }

    /// Calls `f` on every cuDNN version constant in the predicate, with its comparison.
    pub fn visit_versions(&self, f: &mut dyn FnMut(Option<Cmp>, CudnnVer)) {
        match *self {
            P::All(xs) | P::Any(xs) => xs.iter().for_each(|p| p.visit_versions(f)),
            P::Not(p) => p.visit_versions(f),
            P::Ver(c, v) => f(Some(c), v),
            P::VerIn(vs) => vs.iter().for_each(|v| f(None, *v)),
            _ => {}
        }
    }

    /// Calls `f` on every architecture constant in the predicate.
    pub fn visit_archs(&self, f: &mut dyn FnMut(u16)) {
        match *self {
            P::All(xs) | P::Any(xs) => xs.iter().for_each(|p| p.visit_archs(f)),
            P::Not(p) => p.visit_archs(f),
            P::Sm(_, v) => f(v),
            P::Engine(row, CapCheck::Arch) => {
                f(row.sm_lo);
                f(row.sm_hi);
            }
            _ => {}
        }
    }

    /// The newest "at least" version gate in the predicate (ties between clauses go to the
    /// newer gate).
    pub fn newest_gate(&self) -> Option<CudnnVer> {
        let mut best: Option<CudnnVer> = None;
        self.visit_versions(&mut |c, v| {
            if matches!(c, Some(Cmp::Ge | Cmp::Gt)) && best.is_none_or(|b| v > b) {
                best = Some(v);
            }
        });
        best
    }

    /// The version list of a `VerIn` atom holding the current version, if any (for "avoid" hints).
    pub fn excluded_versions(&self, cx: &Ctx<'_>) -> Option<&'static [CudnnVer]> {
        match *self {
            P::VerIn(vs) if vs.contains(&cx.cudnn) => Some(vs),
            P::All(xs) | P::Any(xs) => xs.iter().find_map(|p| p.excluded_versions(cx)),
            _ => None,
        }
    }
}

fn side_name(side: Side) -> &'static str {
    match side {
        Side::Qkv => "qkv_format",
        Side::Q => "q_format",
        Side::Kv => "kv_format",
    }
}

fn side_format(side: Side, f: &Facts) -> Format {
    match side {
        Side::Qkv => f.qkv_format,
        Side::Q => f.q_format,
        Side::Kv => f.kv_format,
    }
}

fn flag_value(flag: Flag, cx: &Ctx<'_>) -> bool {
    let f = cx.facts;
    let r = &f.request;
    match flag {
        Flag::Training => r.training,
        Flag::DeterministicTraining => f.deterministic_training,
        Flag::Paged => f.is_paged,
        Flag::Thd => f.is_thd,
        Flag::CudaGraph => r.cuda_graph,
        Flag::DropoutOn => r.dropout > 0.0,
        Flag::MaxLogit => r.return_max_logit,
        Flag::KvCache => r.kv_cache,
        Flag::BiasRequiresGrad => r.bias_requires_grad,
        Flag::Mla => f.is_mla,
        Flag::NeedsInt64Offsets => f.needs_int64_ragged_offsets,
        Flag::BrEffective => f.br_effective,
        Flag::Fp8 => r.q_dtype.is_fp8(),
        Flag::TargetEnabled => !cx.env.policy.disabled.iter().any(|d| d == cx.target.name()),
        Flag::Fp8Emulation => cx.env.policy.allow_fp8_emulation,
    }
}

/// Renders a message template: `{mask}`, `{wl}`, `{wr}`, `{d_qk}`, `{d_v}`, `{s_q}`, `{s_kv}`,
/// `{h_q}`, `{h_kv}`, `{sm}`, `{cudnn}`, `{layout}`, `{format}`, `{bias}`, `{softmax}`,
/// `{q_dtype}`, `{o_dtype}`, `{dropout}`, `{phase}`, `{recipe}`, `{target}`, plus the engine
/// row's `{engine}`, `{sm_lo}`, `{sm_hi}` for engine targets.
pub fn render(template: &str, cx: &Ctx<'_>) -> String {
    let f = cx.facts;
    let r = &f.request;
    let mut out = String::with_capacity(template.len() + 32);
    let mut rest = template;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let after = &rest[open + 1..];
        let Some(close) = after.find('}') else {
            out.push_str(&rest[open..]);
            return out;
        };
        let key = &after[..close];
        let engine = match cx.target {
            Target::Engine(row) => Some(row),
            _ => None,
        };
        let mut s = String::new();
        let known = match key {
            "mask" => write!(s, "{}", r.mask).is_ok(),
            "wl" => write!(s, "{}", f.window.0).is_ok(),
            "wr" => write!(s, "{}", f.window.1).is_ok(),
            "d_qk" => write!(s, "{}", r.d_qk).is_ok(),
            "d_v" => write!(s, "{}", r.d_v).is_ok(),
            "s_q" => write!(s, "{}", r.s_q).is_ok(),
            "s_kv" => write!(s, "{}", r.s_kv).is_ok(),
            "h_q" => write!(s, "{}", r.h_q).is_ok(),
            "h_kv" => write!(s, "{}", r.h_kv).is_ok(),
            "sm" => write!(s, "{}", cx.sm).is_ok(),
            "cudnn" => write!(s, "{}", cx.cudnn).is_ok(),
            "layout" => write!(s, "{}", r.layout).is_ok(),
            "format" => write!(s, "{}", f.qkv_format).is_ok(),
            "bias" => write!(s, "{}", r.bias).is_ok(),
            "softmax" => write!(s, "{}", r.softmax).is_ok(),
            "q_dtype" => write!(s, "{}", r.q_dtype).is_ok(),
            "o_dtype" => write!(s, "{}", r.o_dtype).is_ok(),
            "dropout" => write!(s, "{}", r.dropout).is_ok(),
            "phase" => write!(s, "{}", if r.training { "training" } else { "inference" }).is_ok(),
            "recipe" => write!(s, "{}", r.fp8_recipe).is_ok(),
            "target" => write!(s, "{}", cx.target.name()).is_ok(),
            "engine" => engine.is_some_and(|e| write!(s, "{}", e.name).is_ok()),
            "sm_lo" => engine.is_some_and(|e| write!(s, "{}", e.sm_lo).is_ok()),
            "sm_hi" => engine.is_some_and(|e| write!(s, "{}", e.sm_hi).is_ok()),
            _ => false,
        };
        if known {
            out.push_str(&s);
        } else {
            out.push('{');
            out.push_str(key);
            out.push('}');
        }
        rest = &after[close + 1..];
    }
    out.push_str(rest);
    out
}
