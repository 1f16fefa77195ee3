//! `dnnplan ops` as a user runs it: the catalogue table, one op's details, JSON, unknown ops.

mod support;

use std::process::{Command, Output};

use serde_json::Value;

fn dnnplan(args: &[&str]) -> Output {
    Command::new(support::dnnplan_binary())
        .args(args)
        .output()
        .expect("run the dnnplan binary")
}

fn stdout_ok(out: &Output) -> String {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("utf-8")
}

#[test]
fn ops_lists_every_op_of_the_tables() {
    let text = stdout_ok(&dnnplan(&["ops"]));
    let count = dnnplan::ir::OpKind::all().count();
    assert!(text.starts_with(&format!("{count} ops")), "{text}");
    for k in dnnplan::ir::OpKind::all() {
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().next() == Some(k.name())),
            "missing {k}"
        );
    }
    assert!(text.contains("[python-only]"));
}

#[test]
fn ops_json_is_the_catalogue() {
    let v: Value = serde_json::from_str(&stdout_ok(&dnnplan(&["ops", "--json"]))).expect("json");
    let ops = v.as_array().expect("array");
    assert_eq!(ops.len(), dnnplan::ir::OpKind::all().count());
    let sdpa = ops.iter().find(|o| o["name"] == "sdpa").expect("sdpa");
    assert_eq!(sdpa["node_type"], "SDPA");
    assert!(
        sdpa["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|a| a["name"] == "sliding_window_length")
    );
    let one: Value =
        serde_json::from_str(&stdout_ok(&dnnplan(&["ops", "--json", "gdn_bwd"]))).expect("json");
    assert_eq!(one["backend_lowering"], false);
}

#[test]
fn ops_details_and_errors() {
    let text = stdout_ok(&dnnplan(&["ops", "layernorm"]));
    assert!(
        text.contains("norm_forward_phase") && text.contains("INFERENCE, TRAINING"),
        "{text}"
    );
    let out = dnnplan(&["ops", "no_such_op"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown op `no_such_op`"));
    assert_eq!(dnnplan(&["ops", "--bogus"]).status.code(), Some(2));
}
