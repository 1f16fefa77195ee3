//! `dnnplan explain` as a user runs it: the built binary on graph JSON files, as a table and as
//! JSON; every graph shipped in `examples/graphs/`; usage and input errors. The expectations are
//! derived from the library (the backend's verdict depends on whether cuDNN is on this machine),
//! so the test holds on the CPU-only CI machine and on the GPU machine alike.

#[path = "support/ir.rs"]
mod ir_support;

mod support;

use std::path::{Path, PathBuf};

use dnnplan::ir::{DataType, Graph, GraphContext};
use ir_support::{add, op, output, tensor};
use serde_json::Value;
use support::cli::{dnnplan, ok_stdout};

fn temp_dir(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("dnnplan-cli-explain-{tag}-{}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

/// A relu(x + b) graph, written as JSON.
fn pointwise_graph_file(dir: &Path) -> PathBuf {
    let mut g = Graph::new(GraphContext::new(
        DataType::Half,
        DataType::Float,
        DataType::Float,
    ));
    let x = tensor(&mut g, "x", &[4, 16], DataType::Half);
    let b = tensor(&mut g, "b", &[1, 16], DataType::Half);
    let n = add(&mut g, op("add").input("a", x).input("b", b));
    let s = output(&g, n, "OUT_0");
    let r = add(&mut g, op("relu").input("input", s));
    let y = output(&g, r, "OUT_0");
    g.set_output(y, true).unwrap();
    let path = dir.join("pointwise.json");
    std::fs::write(&path, g.to_json()).unwrap();
    path
}

fn check_explanation(e: &Value, what: &str) {
    for key in [
        "target",
        "modes",
        "family",
        "candidates",
        "backend",
        "plans",
    ] {
        assert!(!e[key].is_null(), "{what}: no `{key}` in {e:#}");
    }
    let backend = &e["backend"];
    assert!(
        backend["verdict"] == "ok" || backend["verdict"] == "decline",
        "{what}: {backend}"
    );
    if backend["verdict"] == "decline" {
        assert!(
            backend["reason"].as_str().is_some_and(|r| !r.is_empty()),
            "{what}: {backend}"
        );
    }
    for c in e["candidates"].as_array().unwrap() {
        if c["verdict"] == "decline" {
            assert!(
                c["reason"].as_str().is_some_and(|r| !r.is_empty()),
                "{what}: {c}"
            );
        }
    }
    let plans = e["plans"].as_array().unwrap();
    if plans.is_empty() {
        assert!(
            e["error"].as_str().is_some_and(|m| m.contains("no engine")),
            "{what}: {e:#}"
        );
    }
    for (i, p) in plans.iter().enumerate() {
        assert_eq!(p["index"], i, "{what}");
        assert!(
            p["name"].as_str().is_some_and(|n| !n.is_empty()),
            "{what}: {p}"
        );
    }
}

#[test]
fn explain_a_pointwise_graph_as_table_and_json() {
    let dir = temp_dir("pw");
    let path = pointwise_graph_file(&dir);
    let path = path.to_str().unwrap();
    let e: Value =
        serde_json::from_str(&ok_stdout(&dnnplan(&["explain", path, "--json"]))).unwrap();
    check_explanation(&e, path);
    assert!(
        e["family"]["name"].is_null(),
        "no bundled family anchors pointwise ops: {e:#}"
    );
    assert_eq!(e["modes"], serde_json::json!(["A", "FALLBACK"]));
    // without the cuDNN provider in this library the backend declines, with a reason
    if dnnplan::cudnn::loader::library().is_err() {
        assert!(
            e["backend"]["reason"]
                .as_str()
                .unwrap()
                .contains("cuDNN is not loaded"),
            "{e:#}"
        );
    }
    let table = ok_stdout(&dnnplan(&["explain", path]));
    assert!(table.contains("family:   none"), "{table}");
    assert!(table.contains("backend:"), "{table}");
    assert!(table.contains("plans:"), "{table}");
    let e: Value = serde_json::from_str(&ok_stdout(&dnnplan(&[
        "explain",
        path,
        "--json",
        "--arch",
        "90",
        "--modes",
        "a,opensource",
    ])))
    .unwrap();
    assert_eq!(e["modes"], serde_json::json!(["A", "OPENSOURCE"]));
    assert_eq!(e["target"]["arch"], 90);
    std::fs::remove_dir_all(dir).ok();
}

#[test]
fn explain_runs_on_every_example_graph() {
    let dir = support::repo().join("examples/graphs");
    let entries = std::fs::read_dir(&dir).expect("examples/graphs/ exists");
    let mut n = 0;
    for entry in entries {
        let path = entry.unwrap().path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let p = path.to_str().unwrap();
        let e: Value =
            serde_json::from_str(&ok_stdout(&dnnplan(&["explain", p, "--json"]))).unwrap();
        check_explanation(&e, p);
        let table = ok_stdout(&dnnplan(&["explain", p, "--arch", "90"]));
        assert!(table.contains("plans:"), "{p}: {table}");
        // the linear-attention ops have no backend lowering: the backend declines them statically
        let graph =
            dnnplan::ir::Graph::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
        if graph.has_python_only_ops() {
            assert!(
                e["backend"]["reason"]
                    .as_str()
                    .unwrap()
                    .contains("no cuDNN backend lowering"),
                "{p}: {e:#}"
            );
        }
        n += 1;
    }
    assert!(n > 0, "examples/graphs/ holds no .json graph");
}

#[test]
fn usage_and_input_errors() {
    let out = dnnplan(&["explain"]);
    assert_eq!(out.status.code(), Some(2));
    let out = dnnplan(&["explain", "g.json", "--modes", "C"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown heuristic mode `C`"));
    let out = dnnplan(&["explain", "g.json", "--arch"]);
    assert_eq!(out.status.code(), Some(2));
    let out = dnnplan(&["explain", "/nonexistent/graph.json"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/nonexistent/graph.json"));
    let dir = temp_dir("bad");
    let bad = dir.join("bad.json");
    std::fs::write(&bad, "{\"format\": \"nope\"}").unwrap();
    let out = dnnplan(&["explain", bad.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    std::fs::remove_dir_all(dir).ok();
}

/// An SDPA graph's explanation carries the attention eligibility verdicts of the selector (the
/// same rule rows as `dnnplan eligibility`), per SDPA node, in the table and in the JSON; a graph
/// without SDPA has none; without a target architecture the section says how to give one.
#[test]
fn sdpa_graph_explanation_includes_attention_eligibility() {
    let repo = support::repo;
    let sdpa = repo().join("examples/graphs/sdpa_forward.json");
    let sdpa = sdpa.to_str().unwrap();
    let doc: Value = serde_json::from_str(&ok_stdout(&dnnplan(&[
        "explain", sdpa, "--arch", "90", "--json",
    ])))
    .unwrap();
    let nodes = doc["attention_eligibility"]
        .as_array()
        .expect("an array of per-node verdicts");
    assert_eq!(nodes.len(), 1, "{doc:#}");
    let verdicts = &nodes[0]["verdicts"];
    assert_eq!(verdicts["schema"], "dnnplan.attention_eligibility/1");
    // Independent of this machine: the selector's verdicts for the same request and environment.
    let graph = Graph::from_json(&std::fs::read_to_string(sdpa).unwrap()).unwrap();
    let cudnn = dnnplan::cudnn::loader::info()
        .ok()
        .and_then(|i| dnnplan::select::CudnnVer::from_raw(i.version as u64));
    let expected =
        dnnplan::select::evaluate_graph(&graph, &dnnplan::select::Environment::new(90, cudnn))
            .unwrap();
    assert_eq!(nodes[0]["node"], expected[0].0.as_str());
    assert_eq!(verdicts, &expected[0].1.to_json());
    let table = ok_stdout(&dnnplan(&["explain", sdpa, "--arch", "90"]));
    assert!(table.contains("attention eligibility"), "{table}");
    assert!(
        table.contains(&format!("node {}:", expected[0].0)),
        "{table}"
    );
    for line in expected[0].1.to_string().lines() {
        assert!(
            table.contains(line.trim_end()),
            "missing `{line}` in:\n{table}"
        );
    }

    let matmul = repo().join("examples/graphs/matmul_bias_relu.json");
    let doc: Value = serde_json::from_str(&ok_stdout(&dnnplan(&[
        "explain",
        matmul.to_str().unwrap(),
        "--arch",
        "90",
        "--json",
    ])))
    .unwrap();
    assert!(doc["attention_eligibility"].is_null(), "{doc:#}");
}

/// An explanation names the process's `DNNPLAN_*` variables, each with what the library makes of
/// it (the GDN example under one diagnostic it reads and one misspelt).
#[test]
fn explanation_names_the_dnnplan_variables_of_the_process() {
    use support::cli::dnnplan_with_env;
    let gdn = support::repo().join("examples/graphs/gdn_forward.json");
    let gdn = gdn.to_str().unwrap();
    let envs = [
        ("DNNPLAN_GDN_FWD_SCAN", "w8"),
        ("DNNPLAN_GDN_FWD_SACN", "w4"),
    ];
    let doc: Value = serde_json::from_str(&ok_stdout(&dnnplan_with_env(
        &["explain", gdn, "--arch", "90", "--json"],
        &envs,
    )))
    .unwrap();
    let settings = doc["settings"].as_array().expect("a settings array");
    let by_name = |n: &str| {
        settings
            .iter()
            .find(|s| s["name"] == n)
            .unwrap_or_else(|| panic!("{n} missing: {doc:#}"))
    };
    assert_eq!(by_name("DNNPLAN_GDN_FWD_SCAN")["status"], "ok");
    assert_eq!(
        by_name("DNNPLAN_GDN_FWD_SACN")["did_you_mean"],
        "DNNPLAN_GDN_FWD_SCAN"
    );
    let table = ok_stdout(&dnnplan_with_env(&["explain", gdn, "--arch", "90"], &envs));
    assert!(
        table.contains("settings (DNNPLAN_* variables of this process):")
            && table.contains("  DNNPLAN_GDN_FWD_SCAN=w8: ok")
            && table.contains("did you mean DNNPLAN_GDN_FWD_SCAN?"),
        "{table}"
    );
}
