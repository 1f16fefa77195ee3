//! The backend (cuDNN) as a provider trait, and the collection of its entries per heuristic mode.
//!
//! A provider lowers a frozen graph into a [`BackendSession`] (once per graph), which answers
//! heuristics queries ONE MODE AT A TIME (each call appends to the session's own config list),
//! builds the config at a backend index, builds the delegating entry, and appends a config for
//! replay. [`collect_entries`] turns those primitives into the backend's plan entries: per-mode
//! spans, dedup by `(engine_id, raw knobs)` first index wins, every entry tagged with its mode,
//! the delegating entry first when OPENSOURCE was asked (or the backend has engines but listed no
//! config), and a verdict per mode for explain. A provider declines only with
//! [`Error::Declined`]; other errors propagate.
//!
//! Without cuDNN, [`default_provider`] returns [`CudnnNotLoaded`], which declines every graph
//! with the loader's reason, so the plan list holds bundled engines only and nothing panics.

use std::sync::Arc;

use serde::Serialize;

use super::engine::{CompiledPlan, decline_reason, is_decline};
use super::graph::Graph;
use super::ids::EngineId;
use super::knobs::RawBackendKnobs;
use super::modes::HeurMode;
use super::target::Target;
use crate::error::{Error, Result};

/// Name used for backend declines and in explain.
pub const BACKEND_NAME: &str = "cudnn_backend";

/// One engine config the backend listed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BackendConfig {
    /// Index in the session's own config list.
    pub cpp_index: usize,
    /// Backend engine id (`[0, 10_000)`).
    pub engine_id: EngineId,
    /// Knobs in the backend's numbering.
    pub knobs: RawBackendKnobs,
}

/// A backend implementation (cuDNN, or a fake in tests).
pub trait BackendProvider: Send + Sync {
    /// Short name for explain (`cudnn 9.19.0`, `fake`...).
    fn describe(&self) -> String;

    /// Lowers the graph (once per graph). [`Error::Declined`] = the backend cannot take it.
    fn lower(&self, graph: &Arc<Graph>, target: &Target) -> Result<Box<dyn BackendSession>>;
}

/// A lowered graph on the backend side.
pub trait BackendSession: Send {
    /// One heuristics query for `mode` (never OPENSOURCE): appends the mode's configs to the
    /// session's list and returns them. [`Error::Declined`] = this mode has nothing.
    fn query(&mut self, mode: HeurMode) -> Result<Vec<BackendConfig>>;

    /// Lets the session list several modes at once before they are asked one by one with
    /// [`BackendSession::query`] (which must then answer from what was listed, with the same
    /// result a sequential listing gives). Never fails: a mode not listed here is listed by
    /// `query`. The default does nothing.
    fn prefetch(&mut self, _modes: &[HeurMode]) {}

    /// How many engines the backend has for the graph (for the delegating-entry rule).
    fn engine_count(&self) -> usize;

    /// Appends the config `(engine_id, knobs)` (replay); returns its backend index.
    fn create_plan(&mut self, engine_id: EngineId, knobs: &RawBackendKnobs) -> Result<usize>;

    /// Builds the config at a backend index.
    fn build_at(&mut self, cpp_index: usize) -> Result<Arc<dyn CompiledPlan>>;

    /// Builds the delegating entry (the backend's own choice among candidates it never lists).
    fn build_delegating(&mut self) -> Result<Arc<dyn CompiledPlan>>;

    /// The lowered graph's caller-filled operand uids (its variant-pack template). When the graph
    /// lowered, this is the ONE source of the execute path's operand order; `None` (the default)
    /// means the IR's wired ports are used.
    fn operand_uids(&self) -> Option<Vec<i64>> {
        None
    }
}

/// A decline of the backend, with a reason.
pub fn backend_decline(reason: impl Into<String>) -> Error {
    Error::Declined {
        engine: BACKEND_NAME.to_owned(),
        reason: reason.into(),
    }
}

/// The provider that declines every graph because cuDNN could not be loaded.
pub struct CudnnNotLoaded {
    /// The loader's reason.
    pub reason: String,
}

impl BackendProvider for CudnnNotLoaded {
    fn describe(&self) -> String {
        "cudnn (not loaded)".to_owned()
    }

    fn lower(&self, _: &Arc<Graph>, _: &Target) -> Result<Box<dyn BackendSession>> {
        Err(backend_decline(format!(
            "cuDNN is not loaded: {}",
            self.reason
        )))
    }
}

/// The provider planning uses by default: cuDNN when the loader found it, else [`CudnnNotLoaded`].
pub fn default_provider() -> Arc<dyn BackendProvider> {
    crate::cudnn::provider::provider()
}

/// The backend's answer for one mode.
#[derive(Clone, Debug, Serialize)]
pub struct ModeVerdict {
    /// The mode.
    pub mode: HeurMode,
    /// Configs the query returned (before dedup), or 0.
    pub configs: usize,
    /// Entries first listed by this mode (after dedup).
    pub new_entries: usize,
    /// Why the mode produced nothing, if it failed.
    pub declined: Option<String>,
}

/// One backend entry before ranking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum BackendEntry {
    /// A concrete config, tagged with the mode that listed it first.
    Config {
        /// The config.
        config: BackendConfig,
        /// The mode (None when listed outside any mode span).
        mode: Option<HeurMode>,
    },
    /// The delegating entry (no mode).
    Delegating,
}

/// Everything the backend said about a graph.
#[derive(Clone, Debug, Default)]
pub struct BackendOutcome {
    /// Entries: delegating first if present, then backend index order.
    pub entries: Vec<BackendEntry>,
    /// Per queried mode (OPENSOURCE is never queried).
    pub modes: Vec<ModeVerdict>,
    /// The backend's decline for the whole graph, if it declined.
    pub declined: Option<String>,
}

/// Queries the session one mode at a time and assembles the backend's entries.
/// A mode that declines is tolerated; if every queried mode declines the backend declines.
pub fn collect_entries(
    session: &mut dyn BackendSession,
    modes: &[HeurMode],
) -> Result<BackendOutcome> {
    let mut out = BackendOutcome::default();
    let mut seen: Vec<(EngineId, RawBackendKnobs)> = Vec::new();
    let mut configs: Vec<BackendEntry> = Vec::new();
    let mut last_decline = None;
    let mut queried = Vec::new();
    let mut to_ask: Vec<HeurMode> = Vec::new();
    for &mode in modes {
        if mode != HeurMode::OpenSource && !to_ask.contains(&mode) {
            to_ask.push(mode);
        }
    }
    session.prefetch(&to_ask);
    for &mode in modes {
        if mode == HeurMode::OpenSource || queried.contains(&mode) {
            continue;
        }
        queried.push(mode);
        match session.query(mode) {
            Ok(list) => {
                let mut fresh = 0;
                for c in &list {
                    let key = (c.engine_id, c.knobs.clone());
                    if !seen.contains(&key) {
                        seen.push(key);
                        configs.push(BackendEntry::Config {
                            config: c.clone(),
                            mode: Some(mode),
                        });
                        fresh += 1;
                    }
                }
                out.modes.push(ModeVerdict {
                    mode,
                    configs: list.len(),
                    new_entries: fresh,
                    declined: None,
                });
            }
            Err(e) if is_decline(&e) => {
                let reason = decline_reason(&e);
                out.modes.push(ModeVerdict {
                    mode,
                    configs: 0,
                    new_entries: 0,
                    declined: Some(reason.clone()),
                });
                last_decline = Some(reason);
            }
            Err(e) => return Err(e),
        }
    }
    let all_failed = !queried.is_empty() && out.modes.iter().all(|m| m.declined.is_some());
    if all_failed {
        out.declined = last_decline;
        return Ok(out);
    }
    configs.sort_by_key(|e| match e {
        BackendEntry::Config { config, .. } => config.cpp_index,
        BackendEntry::Delegating => 0,
    });
    let wants_delegating =
        modes.contains(&HeurMode::OpenSource) || (configs.is_empty() && session.engine_count() > 0);
    if wants_delegating {
        out.entries.push(BackendEntry::Delegating);
    }
    out.entries.extend(configs);
    Ok(out)
}
