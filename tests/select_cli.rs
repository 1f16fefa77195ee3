//! `dnnplan eligibility` as a user runs it: flags, JSON files, table and JSON output, exit codes.

mod support;

use std::process::{Command, Output};

use serde_json::Value;
use support::cli::binary;

fn dnnplan(args: &[&str]) -> Output {
    Command::new(binary())
        .arg("eligibility")
        .args(args)
        .output()
        .expect("run dnnplan")
}

fn text(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

const ROW7: &[&str] = &[
    "--dtype",
    "bf16",
    "--layout",
    "bshd_bshd_bshd",
    "--mask",
    "padding",
    "--window",
    "-1,-1",
    "--b",
    "2",
    "--hq",
    "32",
    "--hkv",
    "8",
    "--sq",
    "4096",
    "--dqk",
    "128",
    "--arch",
    "90",
    "--cudnn",
    "9.5.1",
];

#[test]
fn table_names_rule_and_hint() {
    let o = dnnplan(ROW7);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let t = text(&o);
    assert!(t.contains("cudnn.f16_arbitrary_seqlen"), "{t}");
    assert!(
        t.contains("[F16.WINDOW] (te_policy) padding mask with window (-1,-1)"),
        "{t}"
    );
    assert!(t.contains("=> requires cuDNN >= 9.6.0"), "{t}");
    assert!(t.contains("TE rule:     NVTE_No_Backend"), "{t}");
    assert!(t.contains("selected:    reference.unfused"), "{t}");
}

#[test]
fn json_output_is_the_c_api_document() {
    let mut args = ROW7.to_vec();
    args.push("--json");
    let o = dnnplan(&args);
    assert!(o.status.success());
    let doc: Value = serde_json::from_str(&text(&o)).expect("JSON");
    assert_eq!(doc["schema"], "dnnplan.attention_eligibility/1");
    let f16 = &doc["verdicts"][0];
    assert_eq!(f16["target"], "cudnn.f16_arbitrary_seqlen");
    assert_eq!(f16["eligible"], false);
    assert_eq!(f16["rejections"][0]["rule"], "F16.WINDOW");
    assert_eq!(f16["rejections"][0]["unblock"]["kind"], "cudnn_at_least");
    assert_eq!(f16["rejections"][0]["unblock"]["cudnn"], "9.6.0");
    assert_eq!(doc["environment"]["sm"], 90);
}

#[test]
fn files_with_flags_overriding() {
    let dir = std::env::temp_dir().join(format!("dnnplan-select-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let req = dir.join("req.json");
    let env = dir.join("env.json");
    std::fs::write(
        &req,
        r#"{"dtype":"fp8_e4m3","mask":"causal","training":true,"h_q":32,"h_kv":8,"s_q":4096,"d_qk":128}"#,
    )
    .unwrap();
    std::fs::write(&env, r#"{"sm":90,"cudnn":"9.8.0"}"#).unwrap();
    let (r, e) = (req.to_str().unwrap(), env.to_str().unwrap());
    let o = dnnplan(&["--request", r, "--env", e, "--json"]);
    assert!(o.status.success());
    let doc: Value = serde_json::from_str(&text(&o)).unwrap();
    assert_eq!(doc["te_backend"], "NVTE_FP8");
    assert_eq!(doc["selected"], "cudnn.fp8");
    // A flag overrides the file: deterministic FP8 training needs cuDNN 9.19.0.
    let o = dnnplan(&["--request", r, "--env", e, "--deterministic"]);
    let t = text(&o);
    assert!(
        t.contains("[FW.DET_FP8]") && t.contains("requires cuDNN >= 9.19.0"),
        "{t}"
    );
    let o = dnnplan(&[
        "--request",
        r,
        "--env",
        e,
        "--deterministic",
        "--cudnn",
        "9.19.0",
    ]);
    assert!(text(&o).contains("selected:    cudnn.fp8"));
    std::fs::remove_dir_all(&dir).ok();
}

#[test]
fn exit_codes() {
    // Ill-formed request: the command fails (1) naming the rule.
    let o = dnnplan(&[
        "--hq", "12", "--hkv", "5", "--sq", "128", "--dqk", "64", "--arch", "90", "--cudnn",
        "9.8.0",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&o.stderr).contains("h_q % h_kv"));
    // Usage errors: 2.
    let o = dnnplan(&["--frobnicate"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--frobnicate"));
    let o = dnnplan(&[
        "--mask", "diagonal", "--hq", "8", "--sq", "8", "--dqk", "64",
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("diagonal"));
}
