//! `dnnplan env` reports the compiled-plan cache and the cuDNN heuristics disk cache as
//! configured by the environment.

mod support;

use std::process::Command;

fn env_json(vars: &[(&str, &str)]) -> serde_json::Value {
    let mut cmd = Command::new(support::cli::binary());
    cmd.args(["env", "--json"])
        .env_remove("DNNPLAN_COMPILED_CACHE")
        .env_remove("DNNPLAN_DISABLE_COMPILED_CACHE")
        .env_remove("DNNPLAN_COMPILED_CACHE_MAX_BYTES")
        .env_remove("DNNPLAN_CUDNN_HEUR_DISK_CACHE")
        .env_remove("DNNPLAN_CUDNN_HEUR_DISK_CACHE_MAX_BYTES");
    for (k, v) in vars {
        cmd.env(k, v);
    }
    let out = cmd.output().expect("run dnnplan env");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("JSON")
}

#[test]
fn env_reports_the_configured_cache() {
    let report = env_json(&[
        ("DNNPLAN_COMPILED_CACHE", "/tmp/dnnplan-cli-cache-test"),
        ("DNNPLAN_DISABLE_COMPILED_CACHE", "on"),
        ("DNNPLAN_COMPILED_CACHE_MAX_BYTES", "12345"),
    ]);
    let c = &report["compiled_cache"];
    assert_eq!(c["dir"], "/tmp/dnnplan-cli-cache-test");
    assert_eq!(c["enabled"], false);
    assert_eq!(c["max_bytes"], 12345);
    assert_eq!(c["variables"]["DNNPLAN_DISABLE_COMPILED_CACHE"], "on");
    for counter in [
        "hits",
        "misses",
        "bypassed",
        "invalid",
        "pruned",
        "export_failed",
        "memo_hits",
    ] {
        assert_eq!(c["stats"][counter], 0, "{counter}");
    }
}

#[test]
fn env_reports_the_defaults() {
    let report = env_json(&[("XDG_CACHE_HOME", "/tmp/dnnplan-cli-xdg")]);
    let c = &report["compiled_cache"];
    assert_eq!(c["dir"], "/tmp/dnnplan-cli-xdg/dnnplan/compiled_plans");
    assert_eq!(c["enabled"], true);
    assert_eq!(c["max_bytes"], 4u64 * 1024 * 1024 * 1024);
}

#[test]
fn env_reports_the_heuristics_disk_cache() {
    let report = env_json(&[
        ("XDG_CACHE_HOME", "/tmp/dnnplan-cli-xdg"),
        ("DNNPLAN_CUDNN_HEUR_DISK_CACHE_MAX_BYTES", "777"),
    ]);
    let c = &report["cudnn_heuristics_cache"];
    assert_eq!(c["dir"], "/tmp/dnnplan-cli-xdg/dnnplan/cudnn_heuristics");
    assert_eq!(c["enabled"], true);
    assert_eq!(c["max_bytes"], 777);
    assert_eq!(
        c["variables"]["DNNPLAN_CUDNN_HEUR_DISK_CACHE_MAX_BYTES"],
        "777"
    );
    assert_eq!(c["stats"]["hits"], 0);
    // The compiled-plan cache is not affected.
    assert_eq!(
        report["compiled_cache"]["dir"],
        "/tmp/dnnplan-cli-xdg/dnnplan/compiled_plans"
    );

    let report = env_json(&[
        ("DNNPLAN_CUDNN_HEUR_DISK_CACHE", "off"),
        ("HOME", "/tmp/dnnplan-cli-home"),
    ]);
    let c = &report["cudnn_heuristics_cache"];
    assert_eq!(c["enabled"], false);
    assert_eq!(c["variables"]["DNNPLAN_CUDNN_HEUR_DISK_CACHE"], "off");
    assert_eq!(report["compiled_cache"]["enabled"], true);
}
