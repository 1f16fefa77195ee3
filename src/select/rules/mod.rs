//! The eligibility rules, as data. Each [`Rule`] has a stable id (part of the C ABI's JSON), the
//! candidates it applies to, its layer, an applicability precondition, and a kind:
//! - `Require(clauses)`: an all-of group member that passes when ANY clause holds (the spec's
//!   "group" rows; each clause keeps its label, e.g. `"w3: cuDNN >= 9.6.0, SWA with padding/BR"`);
//! - `Check(p)`: passes when `p` holds (a single-clause requirement);
//! - `Veto(p)`: fails when `p` holds.
//!
//! Tables: [`te_f16`] (spec 2.2), [`te_fp8`] (2.3), [`frontend`] (cuDNN-frontend surface,
//! section 5, where it differs from TE per section 6), [`framework`] (TE's framework selector,
//! sections 3 and 4), plus the engine rows of [`super::engines`] through `caps_to_rules`.
//! [`all`] is the concatenation in that order; the evaluator walks it in order.

pub mod framework;
pub mod frontend;
pub mod te_f16;
pub mod te_fp8;

use std::sync::LazyLock;

use serde::Serialize;

use super::engines::{self, EngineCaps};
use super::predicate::{Cmp, Flag, P};
use super::target::Target;
use super::version::CudnnVer;

/// Scope bit: the cuDNN F16/BF16 arbitrary-seqlen sub-backend.
pub const F16: u8 = 1;
/// Scope bit: the cuDNN FP8 sub-backend.
pub const FP8: u8 = 2;
/// Scope bit: the unfused reference.
pub const REF: u8 = 4;
/// Scope bit: every engine row.
pub const ENGINES: u8 = 8;
/// Both cuDNN sub-backends (TE's FusedAttention).
pub const FUSED: u8 = F16 | FP8;
/// Every candidate.
pub const ALL: u8 = F16 | FP8 | REF | ENGINES;

/// Which candidates a rule applies to.
#[derive(Copy, Clone, Debug)]
pub enum Scope {
    /// Candidates whose scope bit is set.
    Targets(u8),
    /// One engine row.
    Engine(&'static EngineCaps),
}

impl Scope {
    /// Whether the rule applies to `target`.
    pub fn covers(&self, target: &Target) -> bool {
        match (self, target) {
            (Scope::Targets(bits), t) => bits & t.scope_bit() != 0,
            (Scope::Engine(row), Target::Engine(t)) => row.name == t.name,
            (Scope::Engine(_), _) => false,
        }
    }
}

/// Where a rule comes from (spec 8.1).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Layer {
    /// Transformer Engine's cuDNN sub-backend rule (`nvte_get_fused_attn_backend`).
    TePolicy,
    /// A version- or shape-specific known defect (vetoes in TE's rule).
    KnownBug,
    /// cuDNN-frontend's support surface where it is stricter than TE's rule.
    FrontendSurface,
    /// TE's framework selector (`get_attention_backend`) filters.
    Framework,
    /// An engine capability row.
    EngineCaps,
    /// What this machine or build provides (cuDNN loaded, engine bundled).
    Environment,
    /// Declines found at plan time (no engine config, check_support, build); appended by dispatch.
    Runtime,
}

impl Layer {
    /// The snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Layer::TePolicy => "te_policy",
            Layer::KnownBug => "known_bug",
            Layer::FrontendSurface => "frontend_surface",
            Layer::Framework => "framework",
            Layer::EngineCaps => "engine_caps",
            Layer::Environment => "environment",
            Layer::Runtime => "runtime",
        }
    }
}

/// A labelled alternative of a `Require` rule.
#[derive(Copy, Clone, Debug)]
pub struct Clause {
    /// Short label, e.g. `"d4: cuDNN >= 9.10.2, inference, any d"`.
    pub label: &'static str,
    /// The condition.
    pub when: P,
}

/// How a rule judges.
#[derive(Copy, Clone, Debug)]
pub enum Kind {
    /// Passes when any clause holds.
    Require(&'static [Clause]),
    /// Passes when the predicate holds.
    Check(P),
    /// Fails when the predicate holds.
    Veto(P),
}

/// One rule.
#[derive(Copy, Clone, Debug)]
pub struct Rule {
    /// Stable id, e.g. `"F16.WINDOW"`.
    pub id: &'static str,
    /// Candidates it applies to.
    pub scope: Scope,
    /// Layer.
    pub layer: Layer,
    /// Precondition: when false the rule does not apply (passes silently).
    pub applies: P,
    /// The judgement.
    pub kind: Kind,
    /// A gate: when it fails, the candidate's remaining rules are not evaluated (used for the
    /// dtype split between the F16 and FP8 sub-backends, which TE never crosses).
    pub gate: bool,
    /// An unblock hint that is a setting rather than a version or architecture.
    pub setting_hint: Option<&'static str>,
    /// Message template (see [`super::predicate::render`]).
    pub message: &'static str,
    /// Where it was transcribed from.
    pub source: &'static str,
}

impl Rule {
    /// A table row with the defaults the tables share: no gate and no setting hint (a row that
    /// needs either sets it with struct-update syntax). Each table's own `rule` fixes its scope,
    /// layer and source.
    const fn row(
        id: &'static str,
        (scope, layer, source): (Scope, Layer, &'static str),
        applies: P,
        kind: Kind,
        message: &'static str,
    ) -> Rule {
        Rule {
            id,
            scope,
            layer,
            applies,
            kind,
            gate: false,
            setting_hint: None,
            message,
            source,
        }
    }

    /// Calls `f` on every predicate of the rule (precondition, clauses or check/veto).
    pub fn predicates(&self) -> Vec<&P> {
        let mut v = vec![&self.applies];
        match &self.kind {
            Kind::Require(cs) => v.extend(cs.iter().map(|c| &c.when)),
            Kind::Check(p) | Kind::Veto(p) => v.push(p),
        }
        v
    }
}

// Building blocks the rule tables share.

/// cuDNN version `major.minor.patch`.
const fn v(major: u8, minor: u8, patch: u8) -> CudnnVer {
    CudnnVer::new(major, minor, patch)
}

/// cuDNN is at least `major.minor.patch`.
const fn ge(major: u8, minor: u8, patch: u8) -> P {
    P::Ver(Cmp::Ge, v(major, minor, patch))
}

/// cuDNN is older than `major.minor.patch`.
const fn lt(major: u8, minor: u8, patch: u8) -> P {
    P::Ver(Cmp::Lt, v(major, minor, patch))
}

/// A training request.
const TRAIN: P = P::Is(Flag::Training);

/// An inference request.
const INF: P = P::Not(&TRAIN);

/// Source of TE's C++ rule.
pub const TE_SRC: &str = "NVIDIA/TransformerEngine d0067d0: transformer_engine/common/fused_attn/fused_attn.cpp (nvte_get_fused_attn_backend)";
/// Source of TE's framework selector.
pub const FW_SRC: &str = "NVIDIA/TransformerEngine d0067d0: transformer_engine/pytorch/attention/dot_product_attention/utils.py (get_attention_backend)";
/// Source of the frontend surface.
pub const FE_SRC: &str = "nvidia-cudnn-frontend 1.32.0: include/cudnn_frontend/node/sdpa_support_surface.h, scaled_dot_product_flash_attention.h";

/// Every rule, in evaluation order (TE F16, TE FP8, frontend, framework, engine rows).
pub fn all() -> &'static [Rule] {
    static ALL_RULES: LazyLock<Vec<Rule>> = LazyLock::new(|| {
        let mut v = Vec::new();
        v.extend_from_slice(te_f16::RULES);
        v.extend_from_slice(te_fp8::RULES);
        v.extend_from_slice(frontend::RULES);
        v.extend_from_slice(framework::RULES);
        for row in engines::ROWS {
            v.extend(engines::caps_to_rules(row));
        }
        v
    });
    &ALL_RULES
}

/// The rule table as a markdown table (id, layer, scope, kind, message), for review and docs.
pub fn dump_markdown() -> String {
    let mut s = String::from(
        "| id | layer | scope | kind | clauses / predicate | message |\n|---|---|---|---|---|---|\n",
    );
    for r in all() {
        let scope = match r.scope {
            Scope::Targets(bits) => {
                let mut names = Vec::new();
                for (bit, n) in [
                    (F16, "f16"),
                    (FP8, "fp8"),
                    (REF, "reference"),
                    (ENGINES, "engines"),
                ] {
                    if bits & bit != 0 {
                        names.push(n);
                    }
                }
                names.join("+")
            }
            Scope::Engine(row) => row.name.to_owned(),
        };
        let (kind, body) = match r.kind {
            Kind::Require(cs) => (
                "require",
                cs.iter()
                    .map(|c| format!("{}: {}", c.label, c.when.describe()))
                    .collect::<Vec<_>>()
                    .join("; "),
            ),
            Kind::Check(p) => ("check", p.describe()),
            Kind::Veto(p) => ("veto", p.describe()),
        };
        let applies = match r.applies {
            P::True => String::new(),
            p => format!("when {}: ", p.describe()),
        };
        s.push_str(&format!(
            "| {} | {} | {} | {} | {}{} | {} |\n",
            r.id,
            r.layer.name(),
            scope,
            kind,
            applies,
            body.replace('|', "\\|"),
            r.message.replace('|', "\\|")
        ));
    }
    s
}
