//! Explain: why the plan list of a graph is what it is. The family (or why none), the facts,
//! every slot of the family with accept or decline and the reason, the backend's verdict overall
//! and per mode, and the final ranked list; as JSON and as a readable table.
//!
//! Explaining plans a frozen SNAPSHOT of the graph with the same code path as planning (the
//! caller's graph is not planned or frozen by it). It needs no GPU: engines that need one decline
//! with that reason, and the backend declines when cuDNN is not loaded. An empty plan list is
//! part of the explanation, not an error; any non-decline error propagates.

use std::sync::Arc;

use serde_json::{Value, json};

use super::graph::Graph;
use super::modes::HeurMode;
use super::plan_list::{PlanList, PlanOptions};
use super::rank::EntrySource;
use crate::error::{Error, Result};

/// Validates and freezes a snapshot of `graph` (the caller's graph is untouched), plans it and
/// explains the result. An invalid graph is an error (naming node, port and rule).
pub fn explain_graph(graph: &Graph, opts: PlanOptions, modes: &[HeurMode]) -> Result<Value> {
    if graph.is_frozen() {
        return explain(Arc::new(graph.clone()), opts, modes);
    }
    let mut snapshot = graph.clone();
    snapshot.begin_planning()?;
    explain(Arc::new(snapshot), opts, modes)
}

/// Plans an already-FROZEN graph and explains the result.
pub fn explain(graph: Arc<Graph>, opts: PlanOptions, modes: &[HeurMode]) -> Result<Value> {
    let mut list = PlanList::new(graph, opts);
    match list.create_execution_plans(modes) {
        Ok(()) | Err(Error::NotSupported(_)) => Ok(explain_list(&list)),
        Err(e) => Err(e),
    }
}

/// The explanation of a list after planning (successful or not); `InvalidState`-free: before
/// planning it explains an empty trace.
pub fn explain_list(list: &PlanList) -> Value {
    let error = list.planning_error();
    let t = list.trace();
    let target = &list.options().target;
    let candidates: Vec<Value> = t
        .candidates
        .iter()
        .map(|c| {
            json!({
                "engine": c.name,
                "engine_id": c.id,
                "offered": c.offered,
                "verdict": if c.declined.is_none() { "accept" } else { "decline" },
                "reason": c.declined,
            })
        })
        .collect();
    let modes: Vec<Value> = t
        .backend_modes
        .iter()
        .map(|m| {
            json!({
                "mode": m.mode.name(),
                "verdict": if m.declined.is_none() { "ok" } else { "decline" },
                "configs": m.configs,
                "new_entries": m.new_entries,
                "reason": m.declined,
            })
        })
        .collect();
    let plans: Vec<Value> = list
        .entries()
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let source = match e.source {
                EntrySource::Bundled { .. } => "bundled",
                EntrySource::Backend { .. } => "backend",
                EntrySource::Delegating => "delegating",
            };
            json!({
                "index": i,
                "name": e.name(),
                "engine_id": e.engine_id,
                "knobs": e.public_knobs().map(|k| k.to_json()),
                "source": source,
                "mode": e.mode.map(HeurMode::name),
            })
        })
        .collect();
    json!({
        "target": {
            "device": target.device,
            "arch": target.arch(),
            "description": target.describe(),
        },
        "modes": t.modes.iter().map(|m| m.name()).collect::<Vec<_>>(),
        "family": {
            "name": t.family,
            "named": t.named_families,
            "reason": t.no_family_reason,
            "natively_validated": t.natively_validated,
            "ranking": if t.family.is_none() { "backend only" } else if t.ranked { "family heuristics" } else { "unranked (accepting engines, then the backend)" },
        },
        "facts": t.facts,
        "candidates": candidates,
        "backend": {
            "provider": t.backend_provider,
            "verdict": if t.backend_declined.is_none() { "ok" } else { "decline" },
            "reason": t.backend_declined,
            "modes": modes,
        },
        "plans": plans,
        "error": error,
    })
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => "-".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A readable rendering of an explanation produced by [`explain`].
pub fn render_table(e: &Value) -> String {
    let mut out = String::new();
    let mut line = |s: String| {
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(format!("target:   {}", text(&e["target"]["description"])));
    let modes: Vec<String> = e["modes"]
        .as_array()
        .map(|a| a.iter().map(text).collect())
        .unwrap_or_default();
    line(format!("modes:    {}", modes.join(", ")));
    let fam = &e["family"];
    match fam["name"].as_str() {
        Some(name) => line(format!("family:   {name} ({})", text(&fam["ranking"]))),
        None => line(format!("family:   none ({})", text(&fam["reason"]))),
    }
    if !e["facts"].is_null() {
        line(format!("facts:    {}", e["facts"]));
    }
    line(String::new());
    line("engines:".to_owned());
    let empty = Vec::new();
    let cands = e["candidates"].as_array().unwrap_or(&empty);
    if cands.is_empty() {
        line("  (none)".to_owned());
    }
    for c in cands {
        line(format!(
            "  {:<32} {:>6}  {:<8} {}",
            text(&c["engine"]),
            text(&c["engine_id"]),
            text(&c["verdict"]),
            if c["reason"].is_null() {
                String::new()
            } else {
                text(&c["reason"])
            }
        ));
    }
    line(String::new());
    let b = &e["backend"];
    line(format!(
        "backend:  {}: {}{}",
        text(&b["provider"]),
        text(&b["verdict"]),
        if b["reason"].is_null() {
            String::new()
        } else {
            format!(" ({})", text(&b["reason"]))
        }
    ));
    for m in b["modes"].as_array().unwrap_or(&empty) {
        line(format!(
            "  mode {:<10} {:<8} configs {:>3}, new {:>3} {}",
            text(&m["mode"]),
            text(&m["verdict"]),
            text(&m["configs"]),
            text(&m["new_entries"]),
            if m["reason"].is_null() {
                String::new()
            } else {
                text(&m["reason"])
            }
        ));
    }
    line(String::new());
    line("plans:".to_owned());
    let plans = e["plans"].as_array().unwrap_or(&empty);
    if plans.is_empty() {
        line("  (empty: nothing above accepted the graph)".to_owned());
    }
    for p in plans {
        line(format!(
            "  [{}] {:<48} id {:>6}  {:<10} {}",
            text(&p["index"]),
            text(&p["name"]),
            text(&p["engine_id"]),
            text(&p["source"]),
            if p["mode"].is_null() {
                String::new()
            } else {
                format!("mode {}", text(&p["mode"]))
            }
        ));
    }
    out
}
