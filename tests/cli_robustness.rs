//! The `dnnplan` CLI under random command lines and a reader that closes the pipe early: it never
//! panics (exit status 101, or "panicked at" on stderr) and never dies by a signal; a bad command
//! line exits 2 with a message, a failed command 1 with a message, and `dnnplan ... | head` ends
//! quietly with status 0.
//!
//! `DNNPLAN_CLI_ROBUSTNESS_RUNS` sets the number of random command lines (default 600).

mod support;

use std::io::Read;
use std::process::{Command, Stdio};

use support::cli::binary;
use support::fuzz::{env_count, rng};

/// Commands, then the tokens a command line is drawn from: every flag the commands know (bare and
/// `--flag=value`), values of every kind, files that exist, do not, or are not graphs.
const COMMANDS: [&str; 9] = [
    "env",
    "eligibility",
    "explain",
    "ops",
    "help",
    "",
    "bogus",
    "--json",
    "-h",
];
const FLAGS: [&str; 27] = [
    "--json",
    "--arch",
    "--modes",
    "--request",
    "--env",
    "--disable",
    "--dtype",
    "--layout",
    "--mask",
    "--window",
    "--bias",
    "--dropout",
    "--training",
    "--b",
    "--hq",
    "--hkv",
    "--sq",
    "--skv",
    "--dqk",
    "--dv",
    "--page-size",
    "--cudnn",
    "--sm-count",
    "--engines",
    "--",
    "-h",
    "--frobnicate",
];
const VALUES: [&str; 22] = [
    "",
    "0",
    "-1",
    "90",
    "100",
    "9.19.0",
    "none",
    "bf16",
    "causal",
    "bshd_bshd_bshd",
    "A,B,FALLBACK",
    "A,,X",
    "1e400",
    "18446744073709551616",
    "-1,0",
    "nan",
    "sdpa",
    "examples/graphs/gdn_forward.json",
    "examples/graphs/sdpa_backward.json",
    "/nonexistent/graph.json",
    "examples",
    "README.md",
];

/// Runs the CLI with `args`; `Err` says what went wrong (a panic, a signal, an unexpected code).
fn run(args: &[String], close_stdout: bool) -> Result<(), String> {
    let mut child = Command::new(binary())
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .map_err(|e| format!("spawn: {e}"))?;
    let stdout = child.stdout.take();
    if close_stdout {
        drop(stdout);
    } else if let Some(mut s) = stdout {
        let mut sink = Vec::new();
        let _ = s.read_to_end(&mut sink);
    }
    let mut err = String::new();
    if let Some(mut e) = child.stderr.take() {
        let _ = e.read_to_string(&mut err);
    }
    let status = child.wait().map_err(|e| format!("wait: {e}"))?;
    let code = status.code();
    if err.contains("panicked at") || code == Some(101) {
        return Err(format!("panic ({code:?}): {err:.600}"));
    }
    match code {
        None => Err(format!("killed by a signal: {status}")),
        Some(0) => Ok(()),
        Some(1 | 2) if err.starts_with("dnnplan") => Ok(()),
        Some(c) => Err(format!("exit {c} with stderr {err:.300}")),
    }
}

#[test]
fn random_command_lines_never_panic_and_a_closed_pipe_ends_quietly() {
    if !support::built_here("random_command_lines_never_panic_and_a_closed_pipe_ends_quietly") {
        return;
    }
    let mut r = rng(0xc0ac_29b7_c97c_50dd);
    let mut bugs = Vec::new();
    let runs = env_count("DNNPLAN_CLI_ROBUSTNESS_RUNS", 600);
    for _ in 0..runs {
        let mut args = vec![r.pick(&COMMANDS).to_owned()];
        for _ in 0..r.below(7) {
            let token = match r.below(4) {
                0 | 1 => r.pick(&FLAGS).to_owned(),
                2 => r.pick(&VALUES).to_owned(),
                _ => format!("{}={}", r.pick(&FLAGS), r.pick(&VALUES)),
            };
            args.push(token);
        }
        if let Err(e) = run(&args, r.chance(5)) {
            bugs.push(format!("dnnplan {args:?}: {e}"));
        }
    }
    // Every command's full output into a pipe its reader has closed.
    for args in [
        &["env"][..],
        &["ops"],
        &["ops", "--json"],
        &["help"],
        &[
            "explain",
            "examples/graphs/gdn_backward.json",
            "--arch",
            "90",
            "--json",
        ],
        &[
            "eligibility",
            "--hq",
            "8",
            "--sq",
            "128",
            "--dqk",
            "64",
            "--arch",
            "90",
            "--cudnn",
            "9.19.0",
        ],
    ] {
        let args: Vec<String> = args.iter().map(|s| (*s).to_owned()).collect();
        if let Err(e) = run(&args, true) {
            bugs.push(format!("dnnplan {args:?} | (closed): {e}"));
        }
    }
    assert!(
        bugs.is_empty(),
        "{} command lines went wrong; the first ten:\n{}",
        bugs.len(),
        bugs.iter().take(10).cloned().collect::<Vec<_>>().join("\n")
    );
}
