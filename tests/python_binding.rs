//! Runs the Python package's CPU tests (`python/tests`, marker `not gpu`) against the debug
//! library this test build links: the ctypes binding (loading, version, status/error mapping,
//! lifetimes, execute on the host-memory test engine) and the package's SDPA/GDN graphs through
//! planning and explain. Needs `python3` with `pytest`; without them it prints a SKIPPED line
//! (CI installs pytest: `python3 -m pip install pytest`).

use std::path::{Path, PathBuf};
use std::process::Command;

/// The cdylib of this build: `target/<profile>/libdnnplan.so` (or `deps/`), next to this test's
/// executable directory.
fn library() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let deps = exe.parent()?;
    let profile = deps.parent()?;
    [profile.join("libdnnplan.so"), deps.join("libdnnplan.so")]
        .into_iter()
        .find(|p| p.exists())
}

fn python_with_pytest() -> Option<String> {
    let python = std::env::var("PYTHON").unwrap_or_else(|_| "python3".to_owned());
    let ok = Command::new(&python)
        .args(["-c", "import pytest"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    ok.then_some(python)
}

#[test]
fn python_binding_cpu_tests() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    if !root.join("python/tests").is_dir() {
        // e.g. a staged test executable on another machine
        println!(
            "SKIPPED python_binding: {} has no python/tests",
            root.display()
        );
        return;
    }
    let Some(python) = python_with_pytest() else {
        println!("SKIPPED python_binding: python3 with pytest not found (pip install pytest)");
        return;
    };
    let Some(lib) = library() else {
        println!("SKIPPED python_binding: libdnnplan.so not built next to the test executable");
        return;
    };
    let out = Command::new(&python)
        .current_dir(root)
        .env("DNNPLAN_LIBRARY", &lib)
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .args([
            "-m",
            "pytest",
            "python/tests",
            "-q",
            "-m",
            "not gpu",
            "-p",
            "no:cacheprovider",
        ])
        .output()
        .expect("run pytest");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    println!("{text}");
    assert!(
        out.status.success(),
        "python/tests failed against {}:\n{text}",
        lib.display()
    );
}
