//! The manifest: a static table of engine families (no registration call exists).
//!
//! A family is keyed by its anchor node types; a graph whose node types name exactly one family
//! belongs to it, zero or two-plus families means the backend is the only candidate
//! (classification is a necessary condition only: the analyzer and engines may still decline).
//! Per family: an id block (reference families keep the reference's base), an analyzer, an
//! optional validator, an optional heuristics hook, an optional backend guard, and the slots.
//! A slot is fixed forever (append only, retired slots never reused): engine id = base + slot.
//! An opt-in slot is offered only when `DNNPLAN_ENABLE_OPT_IN_ENGINES` is truthy (read live).
//! No arch filtering here: suitability for the device is each engine's `check_support`.
//!
//! Adding a family = one [`Family`] row in [`MANIFEST`] plus its module under `src/engines/`.
//! A family the reference also has keeps the reference's block base and slot numbers
//! ([`super::ids::REFERENCE_BLOCKS`]; [`Manifest::check`] enforces the base); dnnplan's own engines
//! take slots the reference never used. For example (the engine is a unit struct implementing
//! [`Engine`], the analyzer and hook are plain functions of the family module):
//!
//! ```ignore
//! Family {
//!     name: "gdn",
//!     base: 20_100,
//!     anchors: &["GDN", "GDN_BWD"],
//!     analyzer: Some(crate::engines::gdn::analyze),
//!     validator: Some(crate::engines::gdn::validate),
//!     heuristics: Some(crate::engines::gdn::recommend),
//!     backend_guard: None,
//!     slots: &[Slot { slot: 10, name: "gdn_sm90", opt_in: false, engine: &crate::engines::gdn::GDN_SM90 }],
//! },
//! ```

use super::engine::Engine;
use super::facts::{Analyzer, Facts};
use super::graph::{Graph, node_anchor_keys};
use super::ids::{self, EngineId, FAMILY_BLOCK, IdClass};
use super::rank::HeuristicsHook;
use crate::error::Result;

/// Environment variable gating opt-in slots (`1`, `true`, `yes`, `on`, case-insensitive).
pub const ENV_ENABLE_OPT_IN_ENGINES: &str = "DNNPLAN_ENABLE_OPT_IN_ENGINES";

/// A family validator: `Ok(true)` = validated natively, `Ok(false)` = a node it does not cover
/// (validate classically), `Err` = a semantic violation.
pub type Validator = fn(&Graph) -> Result<bool>;

/// A backend guard: `Some(reason)` = the backend must not be consulted for this graph
/// (a documented backend defect on a measured domain, never placement policy).
pub type BackendGuard = fn(&Graph, Option<&dyn Facts>) -> Option<String>;

/// One engine slot of a family.
pub struct Slot {
    /// Slot number within the family block (`< FAMILY_BLOCK`); id = base + slot.
    pub slot: u32,
    /// Stable engine name (never renamed or reused; the plan-name prefix).
    pub name: &'static str,
    /// Offered only when opt-in engines are enabled.
    pub opt_in: bool,
    /// The engine (one stateless instance for every graph).
    pub engine: &'static dyn Engine,
}

/// One engine family.
pub struct Family {
    /// Family name.
    pub name: &'static str,
    /// First id of the family's block.
    pub base: EngineId,
    /// Node op types that name this family.
    pub anchors: &'static [&'static str],
    /// Facts analyzer.
    pub analyzer: Option<Analyzer>,
    /// Native validator.
    pub validator: Option<Validator>,
    /// Heuristics hook (absent = the unranked path: accepting engines, then the backend).
    pub heuristics: Option<HeuristicsHook>,
    /// Backend guard.
    pub backend_guard: Option<BackendGuard>,
    /// Engine slots, in candidate order.
    pub slots: &'static [Slot],
}

impl std::fmt::Debug for Family {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Family({} @ {})", self.name, self.base)
    }
}

/// A static table of families.
pub struct Manifest {
    /// The families.
    pub families: &'static [Family],
}

/// dnnplan's manifest. Engine families add their row here.
pub static MANIFEST: Manifest = Manifest {
    families: &[crate::engines::gdn::FAMILY],
};

/// An engine offered for a graph: its family, slot name, id and instance.
#[derive(Clone, Copy)]
pub struct Candidate {
    /// Owning family.
    pub family: &'static Family,
    /// Manifest name.
    pub name: &'static str,
    /// Engine id (base + slot).
    pub id: EngineId,
    /// The engine.
    pub engine: &'static dyn Engine,
    /// Whether the slot is opt-in.
    pub opt_in: bool,
}

impl std::fmt::Debug for Candidate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}({})", self.name, self.id)
    }
}

/// What `family_for` found.
#[derive(Clone, Debug)]
pub struct Classification {
    /// The family, when exactly one was named.
    pub family: Option<&'static Family>,
    /// Every family named by some node (sorted, distinct).
    pub named: Vec<&'static str>,
}

impl Classification {
    /// Why there is no family (None when there is one).
    pub fn why_none(&self) -> Option<String> {
        match self.named.len() {
            1 => None,
            0 => Some("no node type anchors a bundled-engine family".into()),
            _ => Some(format!(
                "the graph names several families ({}); only the backend can take it",
                self.named.join(", ")
            )),
        }
    }
}

/// What an id decodes to.
#[derive(Clone, Debug)]
pub enum IdOwner {
    /// A backend engine id.
    Backend,
    /// The reserved C++ OSS band (unpopulated).
    CppOss,
    /// The delegating backend entry.
    Delegating,
    /// The placement marker.
    Marker,
    /// A negative id other than the sentinels.
    Invalid,
    /// A bundled engine that is offered.
    Engine(Candidate),
    /// A real slot whose opt-in gate is off.
    GatedOff {
        /// Family name.
        family: &'static str,
        /// Engine name.
        name: &'static str,
    },
    /// A block owned by a family, at a slot that holds no engine (retired or unused).
    UnusedSlot {
        /// Family name.
        family: &'static str,
        /// The slot.
        slot: u32,
    },
    /// A bundled block no manifest family owns (`reference` names the reference's family there).
    UnknownBlock {
        /// Block base.
        base: EngineId,
        /// The reference's family for this block, if any.
        reference: Option<&'static str>,
    },
}

/// `DNNPLAN_ENABLE_OPT_IN_ENGINES` read now.
pub fn opt_in_engines_enabled() -> bool {
    std::env::var(ENV_ENABLE_OPT_IN_ENGINES)
        .map(|v| crate::settings::is_on(&v))
        .unwrap_or(false)
}

impl Manifest {
    /// The family named by the graph's node types (exactly one), else none.
    pub fn family_for(&'static self, graph: &Graph) -> Classification {
        let mut named: Vec<&'static Family> = Vec::new();
        for key in node_anchor_keys(graph) {
            if let Some(f) = self.families.iter().find(|f| f.anchors.contains(&key))
                && !named.iter().any(|n| std::ptr::eq(*n, f))
            {
                named.push(f);
            }
        }
        let mut names: Vec<&'static str> = named.iter().map(|f| f.name).collect();
        names.sort_unstable();
        Classification {
            family: if named.len() == 1 {
                Some(named[0])
            } else {
                None
            },
            named: names,
        }
    }

    /// The family's offered engines in slot order: every slot, minus opt-in ones unless `opt_in`.
    pub fn offered(&'static self, family: &'static Family, opt_in: bool) -> Vec<Candidate> {
        family
            .slots
            .iter()
            .filter(|s| opt_in || !s.opt_in)
            .map(|s| Candidate {
                family,
                name: s.name,
                id: family.base + EngineId::from(s.slot),
                engine: s.engine,
                opt_in: s.opt_in,
            })
            .collect()
    }

    /// Decodes any id (nothing needs to be registered first).
    pub fn engine_for_id(&'static self, id: EngineId, opt_in: bool) -> IdOwner {
        match ids::classify(id) {
            IdClass::Backend => IdOwner::Backend,
            IdClass::CppOss => IdOwner::CppOss,
            IdClass::Delegating => IdOwner::Delegating,
            IdClass::Marker => IdOwner::Marker,
            IdClass::Invalid => IdOwner::Invalid,
            IdClass::Bundled { block_base, slot } => {
                let Some(family) = self.families.iter().find(|f| f.base == block_base) else {
                    return IdOwner::UnknownBlock {
                        base: block_base,
                        reference: ids::reference_block_name(block_base),
                    };
                };
                match family.slots.iter().find(|s| s.slot == slot) {
                    None => IdOwner::UnusedSlot {
                        family: family.name,
                        slot,
                    },
                    Some(s) if s.opt_in && !opt_in => IdOwner::GatedOff {
                        family: family.name,
                        name: s.name,
                    },
                    Some(s) => IdOwner::Engine(Candidate {
                        family,
                        name: s.name,
                        id,
                        engine: s.engine,
                        opt_in: s.opt_in,
                    }),
                }
            }
        }
    }

    /// What an id is, as JSON: `{"engine_id", "class", "family", "slot", "engine", "offered",
    /// "note"}` (`class` = backend, cpp_oss, bundled, delegating, marker, invalid).
    pub fn describe_id(&'static self, id: EngineId, opt_in: bool) -> serde_json::Value {
        use serde_json::json;
        let (class, family, slot, engine, offered, note): (
            &str,
            Option<&str>,
            Option<u32>,
            Option<&str>,
            bool,
            String,
        ) = match self.engine_for_id(id, opt_in) {
            IdOwner::Backend => (
                "backend",
                None,
                None,
                None,
                false,
                "a cuDNN backend engine (ids are assigned by the backend, per graph)".into(),
            ),
            IdOwner::CppOss => (
                "cpp_oss",
                None,
                None,
                None,
                false,
                "the reserved C++ open-source band (no engines)".into(),
            ),
            IdOwner::Delegating => (
                "delegating",
                None,
                None,
                None,
                false,
                "the delegating backend entry (no replayable knobs)".into(),
            ),
            IdOwner::Marker => (
                "marker",
                None,
                None,
                None,
                false,
                "the BACKEND placement marker (never listed)".into(),
            ),
            IdOwner::Invalid => (
                "invalid",
                None,
                None,
                None,
                false,
                "not an engine id".into(),
            ),
            IdOwner::Engine(c) => (
                "bundled",
                Some(c.family.name),
                Some((c.id - c.family.base) as u32),
                Some(c.name),
                true,
                if c.opt_in {
                    "opt-in engine (enabled)".into()
                } else {
                    String::new()
                },
            ),
            IdOwner::GatedOff { family, name } => {
                let slot = match ids::classify(id) {
                    IdClass::Bundled { slot, .. } => Some(slot),
                    _ => None,
                };
                (
                    "bundled",
                    Some(family),
                    slot,
                    Some(name),
                    false,
                    format!("opt-in engine: set {ENV_ENABLE_OPT_IN_ENGINES}=1"),
                )
            }
            IdOwner::UnusedSlot { family, slot } => (
                "bundled",
                Some(family),
                Some(slot),
                None,
                false,
                "a slot that holds no engine (retired or unused)".into(),
            ),
            IdOwner::UnknownBlock { base, reference } => (
                "bundled",
                reference,
                None,
                None,
                false,
                match reference {
                    Some(r) => format!(
                        "block {base} is the reference's {r} family, which dnnplan does not ship"
                    ),
                    None => format!("no family owns block {base}"),
                },
            ),
        };
        json!({
            "engine_id": id,
            "class": class,
            "family": family,
            "slot": slot,
            "engine": engine,
            "offered": offered,
            "note": if note.is_empty() { None } else { Some(note) },
        })
    }

    /// Checks the table's invariants: aligned distinct blocks at or above 20_000, reference
    /// families at the reference's base, slots inside the block and distinct, engine names and
    /// anchors unique. Returns every violation.
    pub fn check(&self) -> Vec<String> {
        let mut errs = Vec::new();
        let mut names = Vec::new();
        let mut anchors = Vec::new();
        for (i, f) in self.families.iter().enumerate() {
            if f.base < ids::BUNDLED_ENGINE_ID_BASE
                || (f.base - ids::BUNDLED_ENGINE_ID_BASE) % FAMILY_BLOCK != 0
            {
                errs.push(format!(
                    "{}: base {} is not a bundled block base",
                    f.name, f.base
                ));
            }
            if let Some((_, b)) = ids::REFERENCE_BLOCKS.iter().find(|(n, _)| *n == f.name)
                && *b != f.base
            {
                errs.push(format!(
                    "{}: the reference's base is {b}, not {}",
                    f.name, f.base
                ));
            }
            if let Some(other) = ids::reference_block_name(f.base)
                && other != f.name
            {
                errs.push(format!(
                    "{}: block {} is the reference's {other}",
                    f.name, f.base
                ));
            }
            for g in &self.families[i + 1..] {
                if g.base == f.base {
                    errs.push(format!("{} and {} share block {}", f.name, g.name, f.base));
                }
            }
            let mut slots = Vec::new();
            for s in f.slots {
                if EngineId::from(s.slot) >= FAMILY_BLOCK {
                    errs.push(format!("{}: slot {} is outside the block", s.name, s.slot));
                }
                if slots.contains(&s.slot) {
                    errs.push(format!("{}: slot {} is used twice", f.name, s.slot));
                }
                slots.push(s.slot);
                if names.contains(&s.name) {
                    errs.push(format!("engine name {} is used twice", s.name));
                }
                names.push(s.name);
            }
            for a in f.anchors {
                if anchors.contains(a) {
                    errs.push(format!("anchor {a} names two families"));
                }
                anchors.push(*a);
            }
        }
        errs
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn production_manifest_is_consistent() {
        assert_eq!(MANIFEST.check(), Vec::<String>::new());
    }
}
