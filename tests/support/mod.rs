//! Shared helpers for the integration tests that drive C/C++ compilers and the built
//! `libdnnplan.so`: locating the cdylib cargo built for this test run (and giving it its SONAME
//! link), the compiler commands (`$CC`, `$CXX`, `FFI_TEST_CFLAGS`), running a program with a
//! time limit (optionally through `FFI_TEST_RUNNER`) and reading the checked-in header.

#![allow(dead_code)] // each test binary uses a different subset

pub mod cli;
pub mod fuzz;

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitStatus, Stdio};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// Whether this test executable runs where cargo built it (in `target/<profile>/deps/`, with the
/// source tree present). Test executables copied to another machine (the GPU machine's
/// `.device/tests/`) have neither the C sources nor a compiler setup, so the tests that compile C
/// against the tree skip there, saying so; on the build machine they always run.
pub fn built_here(test: &str) -> bool {
    let exe = std::env::current_exe().expect("current_exe");
    let in_deps = exe
        .parent()
        .and_then(Path::file_name)
        .is_some_and(|name| name == "deps");
    let here = in_deps && repo().join("include").join("dnnplan.h").is_file();
    if !here {
        eprintln!(
            "SKIPPED {test}: {} was moved off the build machine (needs {} and target/<profile>/deps/)",
            exe.display(),
            repo().display()
        );
    }
    here
}

/// The repository root: the tree cargo built the tests from or, for a test executable staged on
/// the GPU machine (`.device/tests/`, run from the repository root by `.device/run-tests.sh`), the
/// current directory.
pub fn repo() -> &'static Path {
    static ROOT: OnceLock<PathBuf> = OnceLock::new();
    ROOT.get_or_init(|| {
        let built = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
        if built.is_dir() {
            built
        } else {
            std::env::current_dir().unwrap_or(built)
        }
    })
}

/// The checked-in header.
pub fn header_path() -> PathBuf {
    repo().join("include").join("dnnplan.h")
}

/// Splits an environment variable into whitespace-separated words (empty when unset).
pub fn env_words(name: &str) -> Vec<String> {
    std::env::var(name)
        .unwrap_or_default()
        .split_whitespace()
        .map(str::to_owned)
        .collect()
}

/// A command for the compiler named by `var` (`CC`, `CXX`), or `default`. The variable may hold
/// several words (`ccache gcc`).
pub fn compiler(var: &str, default: &str) -> Command {
    let mut words = env_words(var);
    if words.is_empty() {
        words.push(default.to_owned());
    }
    let mut cmd = Command::new(&words[0]);
    cmd.args(&words[1..]);
    cmd
}

/// Whether a program can be started (`tool --version` runs).
pub fn have_tool(tool: &str) -> bool {
    Command::new(tool)
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok()
}

/// The directory holding the `libdnnplan.so` that cargo built for this test run
/// (`target/<profile>/deps/`, next to the test executable; `cargo test` does not copy it up).
/// Creates the SONAME link `libdnnplan.so.<ABI>` there once, since programs linked against the
/// library record that name as `NEEDED`.
pub fn lib_dir() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let exe = std::env::current_exe().expect("current_exe");
        let deps = exe
            .parent()
            .expect("test executable has a directory")
            .to_path_buf();
        let lib = deps.join("libdnnplan.so");
        assert!(
            lib.is_file(),
            "{} does not exist: the cdylib should be built by `cargo test`",
            lib.display()
        );
        let soname = deps.join(soname());
        if std::fs::symlink_metadata(&soname).is_err() {
            match std::os::unix::fs::symlink("libdnnplan.so", &soname) {
                Ok(()) => {}
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
                Err(e) => panic!("cannot create {}: {e}", soname.display()),
            }
        }
        deps
    })
}

/// The built library itself.
pub fn lib_path() -> PathBuf {
    lib_dir().join("libdnnplan.so")
}

/// `libdnnplan.so.<ABI>`.
pub fn soname() -> String {
    format!("libdnnplan.so.{}", dnnplan::version::ABI_VERSION)
}

/// A scratch directory for this test binary's build products (under cargo's `CARGO_TARGET_TMPDIR`).
pub fn scratch(sub: &str) -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join(sub);
    std::fs::create_dir_all(&dir).expect("create scratch dir");
    dir
}

/// What a finished program did.
pub struct Outcome {
    /// Exit status (None when it was killed for running past the limit).
    pub status: Option<ExitStatus>,
    /// Captured standard output.
    pub stdout: String,
    /// Captured standard error.
    pub stderr: String,
    /// Wall time.
    pub elapsed: Duration,
}

impl Outcome {
    /// True when the program exited with status 0.
    pub fn success(&self) -> bool {
        self.status.is_some_and(|s| s.success())
    }

    /// "exit status 3", "killed by signal 11", "timed out".
    pub fn describe(&self) -> String {
        use std::os::unix::process::ExitStatusExt;
        match self.status {
            None => format!("timed out after {:.0?}", self.elapsed),
            Some(s) => match (s.code(), s.signal()) {
                (Some(code), _) => format!("exit status {code}"),
                (None, Some(sig)) => format!("killed by signal {sig}"),
                _ => format!("{s}"),
            },
        }
    }

    /// The program's output, framed, for failure messages.
    pub fn transcript(&self) -> String {
        format!(
            "--- stdout ---\n{}--- stderr ---\n{}--------------",
            with_newline(&self.stdout),
            with_newline(&self.stderr)
        )
    }
}

fn with_newline(s: &str) -> String {
    if s.is_empty() || s.ends_with('\n') {
        s.to_owned()
    } else {
        format!("{s}\n")
    }
}

/// Runs `cmd` to completion, capturing its output, killing it after `limit`.
pub fn run_with_limit(mut cmd: Command, limit: Duration) -> Outcome {
    let start = Instant::now();
    let mut child = cmd
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("cannot start {cmd:?}: {e}"));
    let drain = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let out = drain(Box::new(child.stdout.take().expect("piped stdout")));
    let err = drain(Box::new(child.stderr.take().expect("piped stderr")));
    let status = loop {
        if let Some(status) = child.try_wait().expect("wait for child") {
            break Some(status);
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(10));
    };
    Outcome {
        status,
        stdout: out.join().unwrap_or_default(),
        stderr: err.join().unwrap_or_default(),
        elapsed: start.elapsed(),
    }
}

/// Runs a compiler command; panics with its diagnostics when it fails.
pub fn compile(cmd: Command, what: &str) {
    let shown = format!("{cmd:?}");
    let outcome = run_with_limit(cmd, Duration::from_secs(300));
    assert!(
        outcome.success(),
        "{what}: compiler {}\ncommand: {shown}\n{}",
        outcome.describe(),
        outcome.transcript()
    );
}
