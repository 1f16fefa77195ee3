//! Ranking: bundled proposals and the backend's per-mode entries merged into ONE plan list.
//!
//! A family's heuristics hook proposes complete `(engine_id, knobs)` entries from facts for a kind
//! ("A" or "FALLBACK"), and may place a [`Proposal::Backend`] marker where the backend's block of
//! that mode belongs. Per requested mode, in caller order: OPENSOURCE = the hook's "A" proposals
//! (markers removed) then the delegating entry; A and B = `place(hook("A"), delegating ++ backend
//! entries of that mode)`; FALLBACK = `place(hook("FALLBACK"), delegating ++ FALLBACK entries)`;
//! then the delegating entry once more; then dedup by `(engine_id, knobs)` keeping the FIRST
//! position (never by backend index). `place` without a marker puts ours first; with markers the
//! first is replaced by the block and the rest dropped. A family without a hook takes the
//! UNRANKED path: accepting engines in slot order, then every backend entry in backend order.

use serde::Serialize;

use super::backend::{BackendConfig, BackendEntry};
use super::facts::Facts;
use super::ids::{BACKEND_HEURISTIC_ENGINE_ID, EngineId};
use super::knobs::{Knobs, RawBackendKnobs};
use super::manifest::Candidate;
use super::modes::HeurMode;
use super::target::Target;
use crate::error::{Error, Result};

/// Which proposals a hook is asked for (`B` reuses `A`).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
pub enum HookKind {
    /// Tuned proposals.
    A,
    /// The least-demanding configs expected to build.
    Fallback,
}

/// One element of a hook's answer.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Proposal {
    /// A complete plan of one of the offered engines.
    Plan {
        /// The engine (must be offered, i.e. accepting).
        engine_id: EngineId,
        /// The complete knob record it will build.
        knobs: Knobs,
    },
    /// Where the backend's block of this mode goes.
    Backend,
}

/// An accepting engine, as a hook sees it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Offered {
    /// Manifest name.
    pub name: &'static str,
    /// Engine id.
    pub id: EngineId,
}

/// A family heuristics hook: `(kind, facts, accepting engines, target) -> proposals`.
pub type HeuristicsHook = fn(HookKind, &dyn Facts, &[Offered], &Target) -> Result<Vec<Proposal>>;

/// Where a plan-list entry runs.
#[derive(Clone, Debug)]
pub enum EntrySource {
    /// A bundled engine.
    Bundled {
        /// The engine.
        candidate: Candidate,
        /// Whether `check_support` accepted it during planning (false for a replayed pin).
        checked: bool,
    },
    /// A backend config.
    Backend {
        /// Index in the backend session's list.
        cpp_index: usize,
        /// Knobs in the backend's numbering.
        raw: RawBackendKnobs,
    },
    /// The delegating backend entry.
    Delegating,
}

/// One entry of the plan list.
#[derive(Clone, Debug)]
pub struct PlanEntry {
    /// Engine id.
    pub engine_id: EngineId,
    /// Native knobs of a bundled entry (empty for backend entries; see `EntrySource::Backend`).
    pub knobs: Knobs,
    /// Where it runs.
    pub source: EntrySource,
    /// The mode that produced a backend entry (assembly bookkeeping and explain).
    pub mode: Option<HeurMode>,
}

impl PlanEntry {
    /// Dedup identity: engine id plus the canonical knob pairs (raw numbering for backend).
    pub fn identity(&self) -> (EngineId, Vec<(u32, i64)>) {
        match &self.source {
            EntrySource::Backend { raw, .. } => (self.engine_id, raw.pairs().to_vec()),
            _ => (
                self.engine_id,
                self.knobs.pairs().iter().map(|(t, v)| (t.0, *v)).collect(),
            ),
        }
    }

    /// The plan name: `engine` / `engine[K=v, ...]`, `engN_kX=Y`, or `backend_heuristics`.
    pub fn name(&self) -> String {
        match &self.source {
            EntrySource::Bundled { candidate, .. } => {
                let public = candidate.engine.knobs_to_public(&self.knobs);
                if public.is_empty() {
                    candidate.name.to_owned()
                } else {
                    format!("{}[{}]", candidate.name, public.public_repr())
                }
            }
            EntrySource::Backend { raw, .. } => raw.plan_name(self.engine_id),
            EntrySource::Delegating => "backend_heuristics".to_owned(),
        }
    }

    /// The public knobs (`None` for the delegating entry, which has no replayable pair).
    pub fn public_knobs(&self) -> Option<Knobs> {
        match &self.source {
            EntrySource::Bundled { candidate, .. } => {
                Some(candidate.engine.knobs_to_public(&self.knobs))
            }
            EntrySource::Backend { raw, .. } => Some(raw.to_public()),
            EntrySource::Delegating => None,
        }
    }

    /// A backend entry from the backend's list.
    pub fn from_backend(entry: &BackendEntry) -> PlanEntry {
        match entry {
            BackendEntry::Delegating => PlanEntry::delegating(),
            BackendEntry::Config { config, mode } => PlanEntry::from_config(config, *mode),
        }
    }

    /// A backend config entry.
    pub fn from_config(config: &BackendConfig, mode: Option<HeurMode>) -> PlanEntry {
        PlanEntry {
            engine_id: config.engine_id,
            knobs: Knobs::none(),
            source: EntrySource::Backend {
                cpp_index: config.cpp_index,
                raw: config.knobs.clone(),
            },
            mode,
        }
    }

    /// The delegating entry.
    pub fn delegating() -> PlanEntry {
        PlanEntry {
            engine_id: BACKEND_HEURISTIC_ENGINE_ID,
            knobs: Knobs::none(),
            source: EntrySource::Delegating,
            mode: None,
        }
    }

    /// A bundled entry.
    pub fn bundled(candidate: Candidate, knobs: Knobs, checked: bool) -> PlanEntry {
        PlanEntry {
            engine_id: candidate.id,
            knobs,
            source: EntrySource::Bundled { candidate, checked },
            mode: None,
        }
    }

    /// True for backend configs and the delegating entry.
    pub fn is_backend_side(&self) -> bool {
        !matches!(self.source, EntrySource::Bundled { .. })
    }
}

/// The unranked path: accepting engines in slot order, then every backend entry in backend order.
pub fn unranked(accepting: &[Candidate], backend: &[BackendEntry]) -> Vec<PlanEntry> {
    accepting
        .iter()
        .map(|c| PlanEntry::bundled(*c, Knobs::none(), true))
        .chain(backend.iter().map(PlanEntry::from_backend))
        .collect()
}

/// A hook's answer mapped onto entries (`None` = the marker). Unknown or non-accepting ids are
/// an error naming the family (a hook bug, never silently dropped).
fn resolve(
    proposals: Vec<Proposal>,
    accepting: &[Candidate],
    family: &str,
) -> Result<Vec<Option<PlanEntry>>> {
    proposals
        .into_iter()
        .map(|p| match p {
            Proposal::Backend => Ok(None),
            Proposal::Plan { engine_id, knobs } => accepting
                .iter()
                .find(|c| c.id == engine_id)
                .map(|c| Some(PlanEntry::bundled(*c, knobs, true)))
                .ok_or_else(|| {
                    Error::Internal(format!(
                        "family {family}: the heuristics hook proposed engine_id {engine_id}, which is not an accepting engine of the family"
                    ))
                }),
        })
        .collect()
}

/// `place(proposals, block)`: no marker = proposals then block; else the first marker becomes the
/// block and later markers are dropped.
fn place(proposals: Vec<Option<PlanEntry>>, block: Vec<PlanEntry>) -> Vec<PlanEntry> {
    let mut out = Vec::with_capacity(proposals.len() + block.len());
    let mut block = Some(block);
    for p in proposals {
        match p {
            Some(e) => out.push(e),
            None => {
                if let Some(b) = block.take() {
                    out.extend(b);
                }
            }
        }
    }
    if let Some(b) = block {
        out.extend(b);
    }
    out
}

/// Keeps the first occurrence of every `(engine_id, knobs)`.
pub fn dedup(entries: Vec<PlanEntry>) -> Vec<PlanEntry> {
    let mut seen = std::collections::HashSet::new();
    entries
        .into_iter()
        .filter(|e| seen.insert(e.identity()))
        .collect()
}

/// The ranked path: one block per mode in caller order, delegating once more, dedup.
pub fn assemble(
    modes: &[HeurMode],
    mut recommend: impl FnMut(HookKind) -> Result<Vec<Proposal>>,
    accepting: &[Candidate],
    backend: &[BackendEntry],
    family: &str,
) -> Result<Vec<PlanEntry>> {
    let delegating: Vec<PlanEntry> = backend
        .iter()
        .filter(|e| {
            matches!(
                e,
                BackendEntry::Delegating | BackendEntry::Config { mode: None, .. }
            )
        })
        .map(PlanEntry::from_backend)
        .collect();
    let of_mode = |m: HeurMode| -> Vec<PlanEntry> {
        let mut block = delegating.clone();
        block.extend(
            backend
                .iter()
                .filter(|e| matches!(e, BackendEntry::Config { mode: Some(x), .. } if *x == m))
                .map(PlanEntry::from_backend),
        );
        block
    };
    let mut out = Vec::new();
    for &mode in modes {
        match mode {
            HeurMode::OpenSource => {
                let ours = resolve(recommend(HookKind::A)?, accepting, family)?;
                out.extend(ours.into_iter().flatten());
                out.extend(delegating.iter().cloned());
            }
            HeurMode::A | HeurMode::B => {
                let ours = resolve(recommend(HookKind::A)?, accepting, family)?;
                out.extend(place(ours, of_mode(mode)));
            }
            HeurMode::Fallback => {
                let ours = resolve(recommend(HookKind::Fallback)?, accepting, family)?;
                out.extend(place(ours, of_mode(mode)));
            }
        }
    }
    out.extend(delegating.iter().cloned());
    Ok(dedup(out))
}
