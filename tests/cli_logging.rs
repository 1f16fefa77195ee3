//! `DNNPLAN_LOG_INFO` / `DNNPLAN_LOG_FILE` as a user sets them, through the built CLI (the
//! library's own planning path): the log's lines for a planned graph, the warnings for variables
//! the library does not understand, the reference's rule that both variables are needed, and a
//! destination that cannot be opened (one line on stderr, the command still succeeds).

mod support;

use support::cli::{dnnplan_with_env, ok_stdout};

fn gdn_example() -> String {
    support::repo()
        .join("examples/graphs/gdn_forward.json")
        .to_string_lossy()
        .into_owned()
}

fn scratch_log(tag: &str) -> std::path::PathBuf {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("cli_logging");
    std::fs::create_dir_all(&dir).expect("scratch dir");
    let path = dir.join(format!("{tag}-{}.log", std::process::id()));
    let _ = std::fs::remove_file(&path);
    path
}

#[test]
fn planning_is_logged_to_the_file_with_the_settings_it_ignores() {
    let log = scratch_log("file");
    let gdn = gdn_example();
    let envs = [
        ("DNNPLAN_LOG_INFO", "1"),
        ("DNNPLAN_LOG_FILE", log.to_str().unwrap()),
        ("DNNPLAN_GDN_FWD_SACN", "w8"),
        ("DNNPLAN_GDN_BWD_TOKENS", "tw7"),
    ];
    // Twice: the file is appended to.
    for _ in 0..2 {
        ok_stdout(&dnnplan_with_env(&["explain", &gdn, "--arch", "90"], &envs));
    }
    let text = std::fs::read_to_string(&log).expect("the log file was written");
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.iter().all(|l| l.starts_with("[dnnplan][")), "{text}");
    let count = |needle: &str| lines.iter().filter(|l| l.contains(needle)).count();
    assert_eq!(count("] t="), lines.len(), "{text}");
    assert_eq!(
        count(&format!("dnnplan {} (ABI", env!("CARGO_PKG_VERSION"))),
        2,
        "{text}"
    );
    // The misspelt variable is a warning naming the one it meant; a variable it reads is not.
    let typo: Vec<_> = lines
        .iter()
        .filter(|l| l.contains("DNNPLAN_GDN_FWD_SACN"))
        .collect();
    assert_eq!(typo.len(), 2, "{text}");
    assert!(
        typo.iter()
            .all(|l| l.starts_with("[dnnplan][W]") && l.contains("DNNPLAN_GDN_FWD_SCAN"))
    );
    assert_eq!(count("DNNPLAN_GDN_BWD_TOKENS"), 0, "{text}");
    // What planning decided, as explain says it.
    let planned: Vec<_> = lines
        .iter()
        .filter(|l| l.contains(" planned graph "))
        .collect();
    assert_eq!(planned.len(), 2, "{text}");
    for l in planned {
        assert!(
            l.contains("family gdn")
                && l.contains("modes [A, FALLBACK]")
                && l.contains("engines [gdn_sm90 accept]")
                && l.contains(": 1 plans, first gdn_sm90 ("),
            "{l}"
        );
    }
}

#[test]
fn both_variables_are_needed_and_a_bad_destination_is_reported_once() {
    let gdn = gdn_example();
    // LOG_INFO alone: nothing anywhere (the reference's rule).
    let out = dnnplan_with_env(
        &["explain", &gdn, "--arch", "90"],
        &[("DNNPLAN_LOG_INFO", "1")],
    );
    let both =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && !both.contains("[dnnplan]["),
        "{both}"
    );
    // To stderr.
    let out = dnnplan_with_env(
        &["explain", &gdn, "--arch", "90"],
        &[("DNNPLAN_LOG_INFO", "on"), ("DNNPLAN_LOG_FILE", "stderr")],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && err.contains("[dnnplan][I]") && err.contains(" planned graph "),
        "{err}"
    );
    assert!(!String::from_utf8_lossy(&out.stdout).contains("[dnnplan]["));
    // A file that cannot be opened: one line on stderr, logging off, the command succeeds.
    let out = dnnplan_with_env(
        &["explain", &gdn, "--arch", "90"],
        &[
            ("DNNPLAN_LOG_INFO", "1"),
            ("DNNPLAN_LOG_FILE", "/nonexistent-dir/x/dnnplan.log"),
        ],
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{err}");
    assert_eq!(
        err.matches("DNNPLAN_LOG_FILE=/nonexistent-dir/x/dnnplan.log cannot be opened")
            .count(),
        1,
        "{err}"
    );
    assert!(!err.contains("[dnnplan]["), "{err}");
}
