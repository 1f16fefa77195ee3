//! Evaluation (spec 8.3): validate and canonicalize once, then for every candidate walk every
//! applicable rule in table order without short-circuiting (except the dtype gates between the
//! two cuDNN sub-backends), collecting each failure with its message, its nearest clause and
//! failing atoms, and a counterfactual unblock hint: the rule is re-run with the cuDNN version set
//! to each threshold that appears in the tables ("requires cuDNN >= 9.6.0"), with excluded
//! versions ("avoid cuDNN 9.10.0/9.10.1"), with older versions ("requires cuDNN < 9.11.0"), and
//! with other architectures ("requires SM 100"; "requires SM 100 and cuDNN >= 9.21.0").

use std::sync::LazyLock;

use serde::Serialize;

use super::env::Environment;
use super::facts::Facts;
use super::predicate::{Cmp, Ctx, P};
use super::request::Request;
use super::rules::{self, Kind, Layer, Rule};
use super::target::Target;
use super::version::CudnnVer;
use crate::error::Result;

/// One unmet (or, for vetoes, matched) condition.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct AtomFail {
    /// What the rule expects (for a veto: the condition that matched, prefixed `matched:`).
    pub expected: String,
    /// The values the condition read.
    pub actual: String,
}

/// What would unblock a rejection.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unblock {
    /// A newer cuDNN.
    CudnnAtLeast(CudnnVer),
    /// An older cuDNN (the rule blocks from this version on).
    CudnnBelow(CudnnVer),
    /// Any cuDNN but these.
    AvoidCudnn(Vec<CudnnVer>),
    /// Another architecture, optionally with a newer cuDNN.
    Arch {
        /// Architectures that pass.
        sms: Vec<u16>,
        /// The cuDNN needed there, when the current one is not enough.
        cudnn_at_least: Option<CudnnVer>,
    },
    /// Any architecture but this one.
    NotOnArch(u16),
    /// A setting.
    Setting(&'static str),
}

impl Unblock {
    /// The hint in words, e.g. `"requires cuDNN >= 9.6.0"`.
    pub fn text(&self) -> String {
        match self {
            Unblock::CudnnAtLeast(v) => format!("requires cuDNN >= {v}"),
            Unblock::CudnnBelow(v) => format!("requires cuDNN < {v}"),
            Unblock::AvoidCudnn(vs) => format!(
                "avoid cuDNN {}",
                vs.iter()
                    .map(|v| v.to_string())
                    .collect::<Vec<_>>()
                    .join("/")
            ),
            Unblock::Arch {
                sms,
                cudnn_at_least,
            } => {
                let list = sms
                    .iter()
                    .map(|s| s.to_string())
                    .collect::<Vec<_>>()
                    .join(", ");
                match cudnn_at_least {
                    Some(v) => format!("requires SM {list} and cuDNN >= {v}"),
                    None => format!("requires SM {list}"),
                }
            }
            Unblock::NotOnArch(sm) => format!("not supported on SM {sm}"),
            Unblock::Setting(s) => (*s).to_owned(),
        }
    }

    /// Kind label: `cudnn_at_least`, `cudnn_below`, `avoid_cudnn`, `arch`, `not_on_arch`, `setting`.
    pub fn kind(&self) -> &'static str {
        match self {
            Unblock::CudnnAtLeast(_) => "cudnn_at_least",
            Unblock::CudnnBelow(_) => "cudnn_below",
            Unblock::AvoidCudnn(_) => "avoid_cudnn",
            Unblock::Arch { .. } => "arch",
            Unblock::NotOnArch(_) => "not_on_arch",
            Unblock::Setting(_) => "setting",
        }
    }
}

impl Serialize for Unblock {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut m = s.serialize_map(None)?;
        m.serialize_entry("kind", self.kind())?;
        m.serialize_entry("text", &self.text())?;
        match self {
            Unblock::CudnnAtLeast(v) | Unblock::CudnnBelow(v) => m.serialize_entry("cudnn", v)?,
            Unblock::AvoidCudnn(vs) => m.serialize_entry("cudnn", vs)?,
            Unblock::Arch {
                sms,
                cudnn_at_least,
            } => {
                m.serialize_entry("sm", sms)?;
                if let Some(v) = cudnn_at_least {
                    m.serialize_entry("cudnn", v)?;
                }
            }
            Unblock::NotOnArch(sm) => m.serialize_entry("sm", sm)?,
            Unblock::Setting(_) => {}
        }
        m.end()
    }
}

/// One failed rule.
#[derive(Clone, Debug, Serialize)]
pub struct Rejection {
    /// Stable rule id.
    pub rule: &'static str,
    /// Layer.
    pub layer: Layer,
    /// Rendered message.
    pub message: String,
    /// For a `Require` rule: the label of the clause closest to passing.
    pub nearest_clause: Option<&'static str>,
    /// The failing atoms of the nearest clause (or of the check; for vetoes the matched ones).
    pub failing: Vec<AtomFail>,
    /// What would unblock it, when a version, architecture or setting does.
    pub unblock: Option<Unblock>,
    /// Where the rule was transcribed from.
    pub source: &'static str,
}

/// The verdict on one candidate.
#[derive(Clone, Debug, Serialize)]
pub struct Verdict {
    /// The candidate.
    pub target: Target,
    /// `cudnn_backend`, `engine` or `reference`.
    pub kind: &'static str,
    /// Dispatch engine id (engine rows).
    pub engine_id: Option<i64>,
    /// Eligible: no rule failed.
    pub eligible: bool,
    /// Every failed rule.
    pub rejections: Vec<Rejection>,
    /// Remarks (forward-only engines, rules skipped after a gate).
    pub notes: Vec<String>,
}

impl Verdict {
    /// The rejection by rule `id`, if any.
    pub fn rejected_by(&self, id: &str) -> Option<&Rejection> {
        self.rejections.iter().find(|r| r.rule == id)
    }
    /// The ids of every failed rule.
    pub fn rule_ids(&self) -> Vec<&'static str> {
        self.rejections.iter().map(|r| r.rule).collect()
    }
}

/// TE's `NVTE_Fused_Attn_Backend` as its own rule would return it.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub enum TeBackend {
    /// `NVTE_No_Backend = -1`.
    #[serde(rename = "NVTE_No_Backend")]
    NoBackend = -1,
    /// `NVTE_F16_arbitrary_seqlen = 1`.
    #[serde(rename = "NVTE_F16_arbitrary_seqlen")]
    F16ArbitrarySeqlen = 1,
    /// `NVTE_FP8 = 2`.
    #[serde(rename = "NVTE_FP8")]
    Fp8 = 2,
}

/// Everything the selector concluded.
#[derive(Clone, Debug, Serialize)]
pub struct Verdicts {
    /// The request as given.
    pub request: Request,
    /// The environment judged in.
    pub environment: Environment,
    /// The canonical request and derived facts.
    pub facts: Facts,
    /// TE's own sub-backend answer (its C++ rule's layers only); `None` without cuDNN.
    pub te_backend: Option<TeBackend>,
    /// One verdict per candidate, in table order.
    pub verdicts: Vec<Verdict>,
    /// Eligible candidates in preference order.
    pub order: Vec<Target>,
    /// The first of `order`.
    pub selected: Option<Target>,
}

impl Verdicts {
    /// Records a decline found after eligibility (no cuDNN engine config, a failed support
    /// check, a build failure) as a `Runtime` rejection of the candidate named `target`, and
    /// recomputes the order and the selection. Returns false when no candidate has that name.
    pub fn reject_at_runtime(&mut self, target: &str, rule: &'static str, message: String) -> bool {
        let Some(v) = self.verdicts.iter_mut().find(|v| v.target.name() == target) else {
            return false;
        };
        v.rejections.push(Rejection {
            rule,
            layer: Layer::Runtime,
            message,
            nearest_clause: None,
            failing: Vec::new(),
            unblock: None,
            source: "dnnplan: dispatch",
        });
        v.eligible = false;
        self.order = preference_order(&self.verdicts, &self.facts, &self.environment);
        self.selected = self.order.first().copied();
        true
    }

    /// The verdict on the candidate named `name` (e.g. `"cudnn.f16_arbitrary_seqlen"`).
    pub fn verdict(&self, name: &str) -> Option<&Verdict> {
        self.verdicts.iter().find(|v| v.target.name() == name)
    }
    /// The verdict on the F16 cuDNN sub-backend.
    pub fn f16(&self) -> &Verdict {
        &self.verdicts[0]
    }
    /// The verdict on the FP8 cuDNN sub-backend.
    pub fn fp8(&self) -> &Verdict {
        &self.verdicts[1]
    }
}

/// Evaluation switches.
#[derive(Copy, Clone, Debug)]
pub struct Options {
    /// Compute nearest clauses and unblock hints (costly counterfactual runs).
    pub hints: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options { hints: true }
    }
}

/// Judges `req` in `env`: every candidate, every failing rule, with hints.
pub fn evaluate(req: &Request, env: &Environment) -> Result<Verdicts> {
    evaluate_with(req, env, Options::default())
}

/// [`evaluate`] with explicit options.
pub fn evaluate_with(req: &Request, env: &Environment, opts: Options) -> Result<Verdicts> {
    let facts = Facts::canonicalize(req)?;
    let mut verdicts = Vec::new();
    for target in Target::all() {
        verdicts.push(judge(target, &facts, env, opts));
    }
    let te_backend = env.cudnn.map(|_| {
        let te_clean = |v: &Verdict| {
            !v.rejections
                .iter()
                .any(|r| matches!(r.layer, Layer::TePolicy | Layer::KnownBug))
        };
        if te_clean(&verdicts[1]) {
            TeBackend::Fp8
        } else if te_clean(&verdicts[0]) {
            TeBackend::F16ArbitrarySeqlen
        } else {
            TeBackend::NoBackend
        }
    });
    let order = preference_order(&verdicts, &facts, env);
    Ok(Verdicts {
        request: req.clone(),
        environment: env.clone(),
        selected: order.first().copied(),
        facts,
        te_backend,
        verdicts,
        order,
    })
}

fn ctx<'a>(facts: &'a Facts, env: &'a Environment, target: Target) -> Ctx<'a> {
    Ctx {
        facts,
        env,
        sm: env.sm,
        cudnn: env.cudnn.unwrap_or(CudnnVer::new(0, 0, 0)),
        target,
    }
}

fn judge(target: Target, facts: &Facts, env: &Environment, opts: Options) -> Verdict {
    let mut v = Verdict {
        target,
        kind: target.kind(),
        engine_id: target.engine_id(),
        eligible: true,
        rejections: Vec::new(),
        notes: Vec::new(),
    };
    if target.is_cudnn() && env.cudnn.is_none() {
        v.rejections.push(Rejection {
            rule: "ENV.CUDNN",
            layer: Layer::Environment,
            message: "cuDNN is not loaded; its rules were not evaluated".to_owned(),
            nearest_clause: None,
            failing: Vec::new(),
            unblock: Some(Unblock::Setting(
                "load cuDNN 9 (DNNPLAN_CUDNN_LIB_DIR) or state a version (environment \"cudnn\", CLI --cudnn)",
            )),
            source: "dnnplan: src/cudnn/loader.rs",
        });
        v.eligible = false;
        return v;
    }
    let cx = ctx(facts, env, target);
    for rule in rules::all().iter().filter(|r| r.scope.covers(&target)) {
        if passes(rule, &cx) {
            continue;
        }
        v.rejections.push(reject(rule, &cx, opts));
        if rule.gate {
            v.notes.push(format!(
                "the remaining rules of {} were not evaluated after {} failed",
                target.name(),
                rule.id
            ));
            break;
        }
    }
    if let Target::Engine(row) = target
        && row.forward_only
        && facts.request.training
    {
        v.notes.push(format!(
            "{} serves the forward pass only; the backward runs on another target",
            row.name
        ));
    }
    v.eligible = v.rejections.is_empty();
    v
}

/// Whether `rule` passes in `cx`.
pub fn passes(rule: &Rule, cx: &Ctx<'_>) -> bool {
    if !rule.applies.eval(cx) {
        return true;
    }
    match rule.kind {
        Kind::Require(clauses) => clauses.iter().any(|c| c.when.eval(cx)),
        Kind::Check(p) => p.eval(cx),
        Kind::Veto(p) => !p.eval(cx),
    }
}

fn reject(rule: &'static Rule, cx: &Ctx<'_>, opts: Options) -> Rejection {
    let message = super::predicate::render(rule.message, cx);
    let (nearest_clause, failing) = if opts.hints {
        explain(rule, cx)
    } else {
        (None, Vec::new())
    };
    Rejection {
        rule: rule.id,
        layer: rule.layer,
        message,
        nearest_clause,
        failing,
        unblock: if opts.hints { unblock(rule, cx) } else { None },
        source: rule.source,
    }
}

fn unmet(p: &'static P, cx: &Ctx<'_>) -> Vec<AtomFail> {
    p.conjuncts()
        .into_iter()
        .filter(|a| !a.eval(cx))
        .map(|a| AtomFail {
            expected: a.describe(),
            actual: a.actual(cx),
        })
        .collect()
}

fn explain(rule: &'static Rule, cx: &Ctx<'_>) -> (Option<&'static str>, Vec<AtomFail>) {
    match &rule.kind {
        Kind::Require(clauses) => {
            let best =
                clauses
                    .iter()
                    .map(|c| (c, unmet(&c.when, cx)))
                    .min_by(|(ca, fa), (cb, fb)| {
                        fa.len()
                            .cmp(&fb.len())
                            .then_with(|| cb.when.newest_gate().cmp(&ca.when.newest_gate()))
                    });
            match best {
                Some((c, f)) => (Some(c.label), f),
                None => (None, Vec::new()),
            }
        }
        Kind::Check(p) => (None, unmet(p, cx)),
        Kind::Veto(p) => (
            None,
            p.conjuncts()
                .into_iter()
                .filter(|a| a.eval(cx))
                .map(|a| AtomFail {
                    expected: format!("matched: {}", a.describe()),
                    actual: a.actual(cx),
                })
                .collect(),
        ),
    }
}

/// Every cuDNN version that can change a rule's outcome, ascending.
fn version_candidates() -> &'static [CudnnVer] {
    static V: LazyLock<Vec<CudnnVer>> = LazyLock::new(|| {
        let mut v = Vec::new();
        for r in rules::all() {
            for p in r.predicates() {
                p.visit_versions(&mut |c, t| {
                    v.push(t);
                    if matches!(c, None | Some(Cmp::Gt | Cmp::Le | Cmp::Eq)) {
                        v.push(t.next_patch());
                    }
                });
            }
        }
        v.sort();
        v.dedup();
        v
    });
    &V
}

/// Every architecture that can change a rule's outcome, ascending.
fn arch_candidates() -> &'static [u16] {
    static A: LazyLock<Vec<u16>> = LazyLock::new(|| {
        let mut v = vec![75, 80, 86, 89, 90, 100, 103, 110, 120];
        for r in rules::all() {
            for p in r.predicates() {
                p.visit_archs(&mut |s| v.push(s));
            }
        }
        v.sort();
        v.dedup();
        v
    });
    &A
}

fn unblock(rule: &'static Rule, cx: &Ctx<'_>) -> Option<Unblock> {
    if let Some(s) = rule.setting_hint {
        return Some(Unblock::Setting(s));
    }
    let at = |sm: u16, cudnn: CudnnVer| Ctx { sm, cudnn, ..*cx };
    if let Kind::Veto(p) = rule.kind
        && let Some(vs) = p.excluded_versions(cx)
    {
        return Some(Unblock::AvoidCudnn(vs.to_vec()));
    }
    let versions = version_candidates();
    if cx.target.is_cudnn() {
        // The first newer version at which the rule passes and no known-bug veto of the same
        // candidate blocks the request (so "requires >= 9.10.0" becomes ">= 9.10.2").
        if let Some(v) = versions.iter().find(|&&v| {
            v > cx.cudnn && passes(rule, &at(cx.sm, v)) && !known_bug_blocks(&at(cx.sm, v))
        }) {
            return Some(Unblock::CudnnAtLeast(*v));
        }
        // A downgrade is offered only for known defects introduced at a version.
        if rule.layer == Layer::KnownBug
            && let Some(older) = versions
                .iter()
                .rev()
                .find(|&&v| v < cx.cudnn && passes(rule, &at(cx.sm, v)))
        {
            let blocked_from = versions.iter().find(|&&v| v > *older).copied();
            if let Some(b) = blocked_from {
                return Some(Unblock::CudnnBelow(b));
            }
        }
    }
    let archs: Vec<u16> = arch_candidates()
        .iter()
        .copied()
        .filter(|&s| s != cx.sm && passes(rule, &at(s, cx.cudnn)))
        .collect();
    if !archs.is_empty() {
        let others = arch_candidates().iter().filter(|&&s| s != cx.sm).count();
        return Some(if archs.len() == others {
            Unblock::NotOnArch(cx.sm)
        } else {
            Unblock::Arch {
                sms: archs,
                cudnn_at_least: None,
            }
        });
    }
    if cx.target.is_cudnn() {
        for &s in arch_candidates().iter().filter(|&&s| s != cx.sm) {
            if let Some(v) = versions
                .iter()
                .find(|&&v| v > cx.cudnn && passes(rule, &at(s, v)))
            {
                return Some(Unblock::Arch {
                    sms: vec![s],
                    cudnn_at_least: Some(*v),
                });
            }
        }
    }
    None
}

/// Whether a known-bug veto of the candidate rejects the request in `cx`.
fn known_bug_blocks(cx: &Ctx<'_>) -> bool {
    rules::all().iter().any(|r| {
        r.layer == Layer::KnownBug
            && matches!(r.kind, Kind::Veto(_))
            && r.scope.covers(&cx.target)
            && !passes(r, cx)
    })
}

fn preference_order(verdicts: &[Verdict], facts: &Facts, env: &Environment) -> Vec<Target> {
    let eligible: Vec<Target> = verdicts
        .iter()
        .filter(|v| v.eligible)
        .map(|v| v.target)
        .collect();
    let leads = |t: &Target| match t {
        Target::Engine(row) => row.leads_when.eval(&ctx(facts, env, *t)),
        _ => false,
    };
    let of = |pred: &dyn Fn(&Target) -> bool| -> Vec<Target> {
        eligible.iter().copied().filter(|t| pred(t)).collect()
    };
    let cudnn = of(&|t| t.is_cudnn());
    let engines = of(&|t| matches!(t, Target::Engine(_)));
    let reference = of(&|t| matches!(t, Target::Reference));
    let mut order = Vec::new();
    if env.sm >= 90 {
        order.extend(engines.iter().copied().filter(|t| leads(t)));
        order.extend(cudnn);
        order.extend(engines.iter().copied().filter(|t| !leads(t)));
    } else {
        order.extend(engines);
        order.extend(cudnn);
    }
    order.extend(reference);
    order
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::select::engines::{EngineCaps, Feature, LayoutClass};
    use crate::select::request::Dtype;

    static SM80_ROW: EngineCaps = EngineCaps {
        name: "test_row_sm80",
        target_name: "engine.test_row_sm80",
        engine_id: 29999,
        sm_lo: 80,
        sm_hi: 120,
        d_shapes: &[(128, 128)],
        d_floor: 0,
        d_pad_multiple: 8,
        dtypes: &[Dtype::Bf16],
        features: &[Feature::Causal],
        layouts: &[LayoutClass::DenseFlex],
        forward_only: false,
        bundled: false,
        leads_when: P::Is(crate::select::predicate::Flag::Training),
        source: "test",
    };

    fn eligible(t: Target) -> Verdict {
        Verdict {
            target: t,
            kind: t.kind(),
            engine_id: t.engine_id(),
            eligible: true,
            rejections: Vec::new(),
            notes: Vec::new(),
        }
    }

    /// Spec 9.4 ordering: the same eligible set is cuDNN-first on SM90+ (unless the engine's
    /// placement leads) and engine-first below SM90.
    #[test]
    fn preference_order_by_arch_and_placement() {
        let set = vec![
            eligible(Target::CudnnF16),
            eligible(Target::Engine(&SM80_ROW)),
            eligible(Target::Reference),
        ];
        let mut req = Request::new(1, 8, 8, 128, 128, 128, 128);
        let facts = Facts::canonicalize(&req).unwrap();
        let names = |sm: u16, facts: &Facts| -> Vec<&'static str> {
            let env = Environment::new(sm, Some(CudnnVer::new(9, 8, 0)));
            preference_order(&set, facts, &env)
                .iter()
                .map(|t| t.name())
                .collect()
        };
        assert_eq!(
            names(90, &facts),
            [
                "cudnn.f16_arbitrary_seqlen",
                "engine.test_row_sm80",
                "reference.unfused"
            ]
        );
        assert_eq!(
            names(80, &facts),
            [
                "engine.test_row_sm80",
                "cudnn.f16_arbitrary_seqlen",
                "reference.unfused"
            ]
        );
        req.training = true;
        let leading = Facts::canonicalize(&req).unwrap();
        assert_eq!(
            names(90, &leading),
            [
                "engine.test_row_sm80",
                "cudnn.f16_arbitrary_seqlen",
                "reference.unfused"
            ]
        );
    }

    #[test]
    fn runtime_rejection_reorders() {
        let req = Request::new(1, 8, 8, 128, 128, 128, 128);
        let env = Environment::new(90, Some(CudnnVer::new(9, 8, 0)));
        let mut v = evaluate(&req, &env).unwrap();
        assert_eq!(
            v.selected.map(|t| t.name()),
            Some("cudnn.f16_arbitrary_seqlen")
        );
        assert!(v.reject_at_runtime(
            "cudnn.f16_arbitrary_seqlen",
            "RUNTIME.NO_ENGINE_CONFIG",
            "the backend returned no engine config".into()
        ));
        assert_eq!(v.selected.map(|t| t.name()), Some("reference.unfused"));
        assert!(!v.reject_at_runtime("nope", "X", String::new()));
    }
}
