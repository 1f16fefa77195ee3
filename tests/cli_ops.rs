//! `dnnplan ops` as a user runs it: the catalogue table, one op's details, JSON, unknown ops.

mod support;

use serde_json::Value;
use support::cli::{dnnplan, ok_stdout};

#[test]
fn ops_lists_every_op_of_the_tables() {
    let text = ok_stdout(&dnnplan(&["ops"]));
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
    let v: Value = serde_json::from_str(&ok_stdout(&dnnplan(&["ops", "--json"]))).expect("json");
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
        serde_json::from_str(&ok_stdout(&dnnplan(&["ops", "--json", "gdn_bwd"]))).expect("json");
    assert_eq!(one["backend_lowering"], false);
}

#[test]
fn ops_details_and_errors() {
    let text = ok_stdout(&dnnplan(&["ops", "layernorm"]));
    assert!(
        text.contains("norm_forward_phase") && text.contains("INFERENCE, TRAINING"),
        "{text}"
    );
    let out = dnnplan(&["ops", "no_such_op"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown op `no_such_op`"));
    assert_eq!(dnnplan(&["ops", "--bogus"]).status.code(), Some(2));
}
