//! An optional process-lifetime anchor of heuristics results (`DNNPLAN_CUDNN_HEUR_ANCHOR`, off by
//! default): the first operation graph queried per (device, mode) and the ENGINECFGs the backend
//! returned for it are kept alive until the process exits.
//!
//! Why: the reference frontends measure plan-list creation while an earlier graph's configs are
//! alive; cuDNN may keep state (engine objects, loaded helper libraries) only while some config
//! refers to it, so a process whose every config died pays to set that state up again on the
//! next query. The anchor is one graph and its configs per (device, mode): a bounded cost.
//!
//! Taking the anchor moves the ENGINECFGs out of the listing session (its entries become replays
//! by `(engine_id, knobs)`, materialized when built, as cached listings are), so no extra backend
//! call is made. Nothing changes while the variable is off.

use std::sync::{Arc, Mutex};

use crate::cudnn::descriptor::Descriptor;
use crate::cudnn::emit::OperationGraph;
use crate::cudnn::heur_cache::ListedConfig;
use crate::cudnn::plan::HeurMode;

/// The environment variable that turns the anchor on (`1`, `on` or `true`).
pub const HEUR_ANCHOR_ENV: &str = "DNNPLAN_CUDNN_HEUR_ANCHOR";

/// Whether anchoring is on.
pub fn enabled() -> bool {
    std::env::var(HEUR_ANCHOR_ENV)
        .is_ok_and(|v| matches!(v.trim().to_ascii_lowercase().as_str(), "1" | "on" | "true"))
}

struct Anchor {
    ordinal: i32,
    mode: HeurMode,
    _graph: Arc<OperationGraph>,
    _configs: Vec<Descriptor>,
}

fn anchors() -> &'static Mutex<Vec<Anchor>> {
    static ANCHORS: Mutex<Vec<Anchor>> = Mutex::new(Vec::new());
    &ANCHORS
}

/// When anchoring is on and `(ordinal, mode)` has no anchor yet: keeps `graph` and the ENGINECFGs
/// of `listed` (moved out; the entries keep their engine and knobs and are replayed when built)
/// for the process. Returns whether it anchored. Listings without a live ENGINECFG (from the
/// heuristics cache) are not taken.
pub fn offer(
    ordinal: i32,
    mode: HeurMode,
    graph: &Arc<OperationGraph>,
    listed: &mut [ListedConfig],
) -> bool {
    if !listed.iter().any(|c| c.config.is_some()) || !enabled() {
        return false;
    }
    let Ok(mut all) = anchors().lock() else {
        return false;
    };
    if all.iter().any(|a| a.ordinal == ordinal && a.mode == mode) {
        return false;
    }
    all.push(Anchor {
        ordinal,
        mode,
        _graph: graph.clone(),
        _configs: listed.iter_mut().filter_map(|c| c.config.take()).collect(),
    });
    true
}

/// `(device ordinal, mode)` of every anchor held (diagnostics).
pub fn held() -> Vec<(i32, HeurMode)> {
    anchors()
        .lock()
        .map(|a| a.iter().map(|x| (x.ordinal, x.mode)).collect())
        .unwrap_or_default()
}
