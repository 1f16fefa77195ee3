//! Running the `dnnplan` binary as a user does, for the CLI tests.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// The `dnnplan` binary cargo built, or, for a test executable staged for the GPU machine
/// (`.device/tests/`), the staged one in `.device/bin/`.
pub fn binary() -> PathBuf {
    let built = PathBuf::from(env!("CARGO_BIN_EXE_dnnplan"));
    if built.is_file() {
        return built;
    }
    let exe = std::env::current_exe().expect("current_exe");
    let staged = exe
        .parent()
        .and_then(Path::parent)
        .map(|dir| dir.join("bin").join("dnnplan"));
    match staged {
        Some(path) if path.is_file() => path,
        _ => panic!(
            "the dnnplan binary is neither at {} nor staged next to {}",
            built.display(),
            exe.display()
        ),
    }
}

/// Runs `dnnplan args...`.
pub fn dnnplan(args: &[&str]) -> Output {
    dnnplan_with_env(args, &[])
}

/// Runs `dnnplan args...` with extra environment variables.
pub fn dnnplan_with_env(args: &[&str], envs: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(binary());
    cmd.args(args);
    for (k, v) in envs {
        cmd.env(k, v);
    }
    cmd.output().expect("run the dnnplan binary")
}

/// The stdout of a successful run; a failed run panics showing its status and both streams.
pub fn ok_stdout(out: &Output) -> String {
    assert!(
        out.status.success(),
        "dnnplan failed ({}):\nstdout:\n{}\nstderr:\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}
