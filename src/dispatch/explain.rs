//! Explain: why the plan list of a graph is what it is. The family (or why none), the facts,
//! every slot of the family with accept or decline and the reason, the backend's verdict overall
//! and per mode, the final ranked list, and for SDPA-family graphs the attention eligibility
//! verdicts of [`crate::select`] (the same rule rows `dnnplan eligibility` evaluates, every failing
//! rule with its unblock hint), and the `DNNPLAN_*` variables of the process, each with what the
//! library makes of it ([`crate::settings`]); as JSON and as a readable table.
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
use super::target::Target;
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
                "barred": list.barred(i),
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
        "attention_eligibility": attention_eligibility(list.graph(), target),
        // Read when explained, not when planned: a check of the environment costs ~6 us, too
        // much for every planning (a cached graph's plan list takes ~60 us).
        "settings": crate::settings::check_process().iter().map(crate::settings::Reading::to_named_json).collect::<Vec<_>>(),
        "error": error,
    })
}

/// The selector's verdicts on every SDPA-family node of `graph` for the planning target and the
/// loaded cuDNN; `null` for graphs without such a node. Without a target architecture the section
/// says so instead of guessing one.
fn attention_eligibility(graph: &Graph, target: &Target) -> Value {
    use crate::select::{CudnnVer, Environment, evaluate_graph};
    if !graph
        .nodes()
        .iter()
        .any(|n| n.op.name().starts_with("sdpa"))
    {
        return Value::Null;
    }
    let Some(arch) = target.arch().and_then(|a| u16::try_from(a).ok()) else {
        return json!({ "skipped": format!("no target architecture ({}); pass --arch, e.g. 90", target.describe()) });
    };
    let cudnn = crate::cudnn::loader::info()
        .ok()
        .and_then(|i| CudnnVer::from_raw(i.version as u64));
    match evaluate_graph(graph, &Environment::new(arch, cudnn)) {
        Ok(per_node) => Value::Array(
            per_node
                .into_iter()
                .map(|(node, v)| json!({ "node": node, "log": v.to_string(), "verdicts": v.to_json() }))
                .collect(),
        ),
        Err(e) => json!({ "error": e.to_string() }),
    }
}

fn text(v: &Value) -> String {
    match v {
        Value::Null => "-".to_owned(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// `shown(text(v))`, or nothing when `v` is null (an optional column).
fn when_present(v: &Value, shown: impl FnOnce(String) -> String) -> String {
    if v.is_null() {
        String::new()
    } else {
        shown(text(v))
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
            when_present(&c["reason"], |t| t)
        ));
    }
    line(String::new());
    let b = &e["backend"];
    line(format!(
        "backend:  {}: {}{}",
        text(&b["provider"]),
        text(&b["verdict"]),
        when_present(&b["reason"], |t| format!(" ({t})"))
    ));
    for m in b["modes"].as_array().unwrap_or(&empty) {
        line(format!(
            "  mode {:<10} {:<8} configs {:>3}, new {:>3} {}",
            text(&m["mode"]),
            text(&m["verdict"]),
            text(&m["configs"]),
            text(&m["new_entries"]),
            when_present(&m["reason"], |t| t)
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
            when_present(&p["mode"], |t| format!("mode {t}"))
        ));
    }
    let settings = e["settings"].as_array().map_or(&empty[..], |a| &a[..]);
    if !settings.is_empty() {
        line(String::new());
        line("settings (DNNPLAN_* variables of this process):".to_owned());
        for s in settings {
            let mut l = format!(
                "  {}={}: {}",
                text(&s["name"]),
                text(&s["value"]),
                text(&s["status"])
            );
            if let Some(a) = s["accepts"].as_str() {
                l += &format!("; accepts {a}");
            }
            if let Some(n) = s["did_you_mean"].as_str() {
                l += &format!("; did you mean {n}?");
            }
            line(l);
        }
    }
    let attention = &e["attention_eligibility"];
    if !attention.is_null() {
        line(String::new());
        line("attention eligibility (dnnplan eligibility rules):".to_owned());
        match attention.as_array() {
            Some(nodes) => {
                for n in nodes {
                    line(format!("  node {}:", text(&n["node"])));
                    for l in n["log"].as_str().unwrap_or_default().lines() {
                        line(format!("    {l}"));
                    }
                }
            }
            None => line(format!(
                "  {}",
                text(&attention["skipped"]).replace('-', "")
                    + &text(&attention["error"]).replace('-', "")
            )),
        }
    }
    out
}
