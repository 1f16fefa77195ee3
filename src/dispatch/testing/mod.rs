//! A fake backend provider and a no-op compiled plan, so dispatch is testable on a CPU: the fake
//! answers each heuristic mode from a script, appends to its own config list like cuDNN does,
//! and can decline lowering, a mode, or the build of chosen engine ids. No arithmetic anywhere.

pub mod stand_in;

use std::sync::{Arc, Mutex};

use super::backend::{BackendConfig, BackendProvider, BackendSession, backend_decline};
use super::engine::CompiledPlan;
use super::exec_types::{ExecContext, VariantPack};
use super::graph::Graph;
use super::ids::EngineId;
use super::knobs::RawBackendKnobs;
use super::modes::HeurMode;
use super::target::Target;
use crate::error::{Error, Result};

/// A compiled plan that does nothing but count its executions.
#[derive(Debug, Default)]
pub struct NoopPlan {
    /// What it stands for (a plan name).
    pub label: String,
    /// Reported workspace bytes.
    pub workspace: u64,
    /// Executions so far.
    pub runs: std::sync::atomic::AtomicU64,
}

impl NoopPlan {
    /// A no-op plan with a label and a workspace size.
    pub fn new(label: impl Into<String>, workspace: u64) -> NoopPlan {
        NoopPlan {
            label: label.into(),
            workspace,
            runs: Default::default(),
        }
    }
}

impl CompiledPlan for NoopPlan {
    fn workspace_size(&self) -> u64 {
        self.workspace
    }

    fn execute(&self, _: &VariantPack, _: &ExecContext) -> Result<()> {
        self.runs.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        Ok(())
    }
}

/// The scripted answer of one mode: configs `(engine_id, raw knobs)` or a decline reason.
#[derive(Clone, Debug)]
pub enum ModeScript {
    /// The configs the query returns, in heuristic order.
    Configs(Vec<(EngineId, Vec<(u32, i64)>)>),
    /// The query declines with this reason.
    Decline(String),
}

/// A scripted backend.
#[derive(Clone, Debug, Default)]
pub struct FakeBackend {
    /// Decline lowering with this reason.
    pub lower_decline: Option<String>,
    /// Per-mode answers (a mode not listed returns no config).
    pub modes: Vec<(HeurMode, ModeScript)>,
    /// The engine count the backend reports.
    pub engine_count: usize,
    /// Engine ids whose build declines.
    pub build_declines: Vec<EngineId>,
    /// Whether the delegating entry's build declines.
    pub delegating_declines: bool,
    /// Every call the sessions received, in order (`query A`, `build 3`...).
    pub log: Arc<Mutex<Vec<String>>>,
}

impl FakeBackend {
    /// The call log so far.
    pub fn calls(&self) -> Vec<String> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }
}

struct FakeSession {
    script: FakeBackend,
    list: Vec<BackendConfig>,
}

impl FakeSession {
    fn note(&self, s: String) {
        if let Ok(mut l) = self.script.log.lock() {
            l.push(s);
        }
    }
}

impl BackendProvider for FakeBackend {
    fn describe(&self) -> String {
        "fake".to_owned()
    }

    fn lower(&self, _: &Arc<Graph>, _: &Target) -> Result<Box<dyn BackendSession>> {
        if let Some(r) = &self.lower_decline {
            return Err(backend_decline(r.clone()));
        }
        Ok(Box::new(FakeSession {
            script: self.clone(),
            list: Vec::new(),
        }))
    }
}

impl BackendSession for FakeSession {
    fn query(&mut self, mode: HeurMode) -> Result<Vec<BackendConfig>> {
        self.note(format!("query {}", mode.name()));
        let script = self
            .script
            .modes
            .iter()
            .find(|(m, _)| *m == mode)
            .map(|(_, s)| s.clone());
        match script {
            None => Ok(Vec::new()),
            Some(ModeScript::Decline(r)) => Err(backend_decline(r)),
            Some(ModeScript::Configs(cs)) => {
                let mut out = Vec::new();
                for (id, knobs) in cs {
                    let c = BackendConfig {
                        cpp_index: self.list.len(),
                        engine_id: id,
                        knobs: RawBackendKnobs::from_pairs(knobs),
                    };
                    self.list.push(c.clone());
                    out.push(c);
                }
                Ok(out)
            }
        }
    }

    fn engine_count(&self) -> usize {
        self.script.engine_count
    }

    fn create_plan(&mut self, engine_id: EngineId, knobs: &RawBackendKnobs) -> Result<usize> {
        self.note(format!("create {}", knobs.plan_name(engine_id)));
        self.list.push(BackendConfig {
            cpp_index: self.list.len(),
            engine_id,
            knobs: knobs.clone(),
        });
        Ok(self.list.len() - 1)
    }

    fn build_at(&mut self, cpp_index: usize) -> Result<Arc<dyn CompiledPlan>> {
        let c = self
            .list
            .get(cpp_index)
            .cloned()
            .ok_or_else(|| Error::Internal(format!("fake backend: no config {cpp_index}")))?;
        let name = c.knobs.plan_name(c.engine_id);
        self.note(format!("build {name}"));
        if self.script.build_declines.contains(&c.engine_id) {
            return Err(backend_decline(format!("{name} cannot be built here")));
        }
        Ok(Arc::new(NoopPlan::new(
            name,
            1024 * (c.engine_id as u64 + 1),
        )))
    }

    fn build_delegating(&mut self) -> Result<Arc<dyn CompiledPlan>> {
        self.note("build delegating".to_owned());
        if self.script.delegating_declines {
            return Err(backend_decline("no open-source engine and no config built"));
        }
        Ok(Arc::new(NoopPlan::new("backend_heuristics", 0)))
    }
}
