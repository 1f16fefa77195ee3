//! `dnnplan env` as a user runs it: the built binary, as a table and as JSON. Each component is
//! either found (with its version) or not found with a reason; the expectation for this machine
//! comes from the library's own probes, so the test holds on the CPU-only CI machine (nothing
//! found) and on the GPU machine alike (there the staged `.device/bin/dnnplan` is used). Also the
//! CLI's usage errors.

mod support;

use serde_json::Value;
use support::cli::{dnnplan_with_env, ok_stdout};

fn env_json(envs: &[(&str, &str)]) -> Value {
    let text = ok_stdout(&dnnplan_with_env(&["env", "--json"], envs));
    serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("`dnnplan env --json` is not JSON ({e}):\n{text}"))
}

/// A component object: `found` is a bool; found ones carry `version_key`, missing ones a reason.
fn check_component(report: &Value, key: &str, version_key: &str, expect_found: bool) {
    let c = &report[key];
    assert_eq!(
        c["found"].as_bool(),
        Some(expect_found),
        "{key}.found (this machine's probe says {expect_found}): {c}"
    );
    if expect_found {
        assert!(
            !c[version_key].is_null(),
            "{key} found without {version_key}: {c}"
        );
    } else {
        let reason = c["reason"].as_str().unwrap_or_default();
        assert!(
            reason.len() > 10,
            "{key} not found without a useful reason: {c}"
        );
    }
}

#[test]
fn env_json_reports_every_component() {
    let report = env_json(&[]);
    assert_eq!(report["dnnplan"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(report["dnnplan"]["abi"], dnnplan::version::ABI_VERSION);
    assert_eq!(report["os"]["os"], std::env::consts::OS);
    assert_eq!(report["os"]["arch"], std::env::consts::ARCH);

    let cuda_found = dnnplan::cuda::probe::driver().is_ok();
    check_component(&report, "cuda", "driver_version", cuda_found);
    if cuda_found {
        let devices = report["cuda"]["devices"]
            .as_array()
            .expect("cuda.devices array");
        for d in devices {
            for key in ["name", "compute_capability", "arch", "sm_count"] {
                assert!(!d[key].is_null(), "device without {key}: {d}");
            }
        }
    } else {
        assert!(
            report["cuda"]["reason"]
                .as_str()
                .unwrap()
                .contains("libcuda"),
            "the CUDA reason names the missing driver library: {}",
            report["cuda"]
        );
    }
    check_component(
        &report,
        "cudnn",
        "version",
        dnnplan::cudnn::loader::info().is_ok(),
    );
    check_component(
        &report,
        "nvrtc",
        "version",
        dnnplan::cuda::probe::nvrtc_version().is_ok(),
    );
    assert!(
        report["environment"]
            .as_object()
            .is_some_and(|m| m.contains_key("DNNPLAN_CUDNN_LIB_DIR")),
        "environment lists DNNPLAN_CUDNN_LIB_DIR: {}",
        report["environment"]
    );
}

#[test]
fn env_reports_every_cudnn_location_tried() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("no-cudnn-here");
    let dir = dir.to_str().expect("UTF-8 path");
    let report = env_json(&[("DNNPLAN_CUDNN_LIB_DIR", dir)]);
    assert_eq!(report["environment"]["DNNPLAN_CUDNN_LIB_DIR"], dir);
    let cudnn = &report["cudnn"];
    if cudnn["found"] == Value::Bool(true) {
        eprintln!(
            "cuDNN is installed system-wide here ({cudnn}); the not-found path is not exercised"
        );
        return;
    }
    let reason = cudnn["reason"].as_str().expect("cudnn.reason");
    // The configured directory is tried, and the loader's own message is kept.
    assert!(reason.contains(&format!("{dir}/libcudnn.so.9")), "{reason}");
    assert!(
        reason.contains("cannot open shared object file"),
        "{reason}"
    );
    assert!(reason.contains("DNNPLAN_CUDNN_LIB_DIR"), "{reason}");
}

#[test]
fn env_table_matches_json() {
    let table = ok_stdout(&dnnplan_with_env(&["env"], &[]));
    let report = env_json(&[]);
    for section in [
        "dnnplan:",
        "os:",
        "cuda:",
        "cudnn:",
        "nvrtc:",
        "environment:",
    ] {
        assert!(
            table.lines().any(|l| l == section),
            "missing section {section}:\n{table}"
        );
    }
    assert!(
        table.contains(&format!("  version: {}", env!("CARGO_PKG_VERSION"))),
        "{table}"
    );
    for key in ["cuda", "cudnn", "nvrtc"] {
        let c = &report[key];
        if let Some(reason) = c["reason"].as_str() {
            assert!(
                table.contains(&format!("  reason: {reason}")),
                "{key} reason missing:\n{table}"
            );
        }
        assert!(
            table.contains(&format!("{key}:\n  found: {}", c["found"])),
            "{table}"
        );
    }
}

#[test]
fn usage_errors_exit_2_with_usage() {
    for args in [
        &[][..],
        &["frobnicate"][..],
        &["env", "--bogus"][..],
        &["env", "extra"][..],
    ] {
        let out = dnnplan_with_env(args, &[]);
        assert_eq!(
            out.status.code(),
            Some(2),
            "dnnplan {args:?}: {}",
            out.status
        );
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert!(
            stderr.contains("usage: dnnplan"),
            "dnnplan {args:?} stderr: {stderr}"
        );
    }
    let help = ok_stdout(&dnnplan_with_env(&["help"], &[]));
    assert!(help.contains("env [--json]"), "{help}");
}

/// `settings`: every `DNNPLAN_*` variable set, with what the library makes of it: a value its
/// reader understands, one it does not (with what it accepts), a name it does not read (with
/// the name a typo meant).
#[test]
fn env_reports_each_dnnplan_variable_and_flags_typos() {
    let report = env_json(&[
        ("DNNPLAN_GDN_BWD_TOKENS", "tw7"),
        ("DNNPLAN_GDN_FWD_SCAN", "w9"),
        ("DNNPLAN_GDN_FWD_SACN", "w8"),
        ("DNNPLAN_NOT_A_SETTING_AT_ALL", "1"),
    ]);
    let s = &report["settings"];
    assert_eq!(s["DNNPLAN_GDN_BWD_TOKENS"]["status"], "ok", "{s:#}");
    let scan = &s["DNNPLAN_GDN_FWD_SCAN"];
    assert_eq!(scan["value"], "w9");
    assert!(
        scan["status"]
            .as_str()
            .unwrap_or("")
            .starts_with("not understood"),
        "{s:#}"
    );
    let accepts = scan["accepts"].as_str().unwrap_or("");
    assert!(
        accepts.contains("w4gx") && accepts.contains("w8"),
        "{accepts}"
    );
    let typo = &s["DNNPLAN_GDN_FWD_SACN"];
    assert!(
        typo["status"].as_str().unwrap_or("").starts_with("unknown"),
        "{s:#}"
    );
    assert_eq!(typo["did_you_mean"], "DNNPLAN_GDN_FWD_SCAN");
    let unknown = &s["DNNPLAN_NOT_A_SETTING_AT_ALL"];
    assert!(
        unknown["status"]
            .as_str()
            .unwrap_or("")
            .starts_with("unknown")
    );
    assert!(unknown.get("did_you_mean").is_none(), "{s:#}");

    let table = ok_stdout(&dnnplan_with_env(
        &["env"],
        &[("DNNPLAN_GDN_FWD_SACN", "w8")],
    ));
    assert!(
        table.contains("  DNNPLAN_GDN_FWD_SACN:\n    value: w8\n    status: unknown")
            && table.contains("    did_you_mean: DNNPLAN_GDN_FWD_SCAN"),
        "{table}"
    );
}
