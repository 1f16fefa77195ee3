//! Keeping the libraries cuDNN opens on demand resident for the whole process
//! (`DNNPLAN_CUDNN_PIN_LIBS`; NVRTC by default).
//!
//! cuDNN 9 `dlopen`s its sub-libraries (heuristics, engines) and helper libraries (NVRTC,
//! nvJitLink, cuBLASLt) while it answers heuristics queries and builds plans. A process that links
//! those libraries (the reference C++ frontend links NVRTC and the CUDA runtime) keeps them
//! mapped; dnnplan loads cuDNN alone, so a library cuDNN closes again when its last user goes
//! away would be mapped and initialised anew by the next query. Pinning = one extra `dlopen` per
//! library that is never closed, so the reference count cannot drop to zero. Nothing else changes:
//! a library that cannot be found is reported and skipped, never an error.
//!
//! Measured on the H200 (cuDNN 9.19, `diag_cudnn_cold_creation` in tests/gpu_cudnn_perf.rs): every
//! heuristics query opened `libnvrtc.so.13` and the destroy of its configs unmapped it again, so
//! each cold plan-list creation paid NVRTC's load and initialisation (10-15 ms); with NVRTC pinned
//! a cold creation of the tiny SDPA took 5.8 ms instead of 17.7 ms. Hence NVRTC is pinned by
//! default.
//!
//! The variable: unset, `1`, `on`, `true` or `default` = [`NVRTC_LIBS`] (the default); `0`, `off`,
//! `false` or empty = nothing pinned; `all` = every group of [`ALL_PINS`]; anything else = a
//! comma-separated list of library names or paths. Bare names are looked up through the system loader, then in
//! `DNNPLAN_CUDNN_LIB_DIR`; cuDNN's own parts (`libcudnn*`) only in the folder of the loaded
//! `libcudnn.so.9` (else `DNNPLAN_CUDNN_LIB_DIR`), so a second copy is never loaded.

use std::sync::Mutex;

use serde::Serialize;

use crate::cudnn::loader::ENV_CUDNN_LIB_DIR;

/// The environment variable naming the libraries to pin.
pub const PIN_LIBS_ENV: &str = "DNNPLAN_CUDNN_PIN_LIBS";

/// cuDNN's own sub-libraries (loaded on demand by `libcudnn.so.9`).
pub const CUDNN_SUBLIBS: &[&str] = &[
    "libcudnn_graph.so.9",
    "libcudnn_heuristic.so.9",
    "libcudnn_engines_precompiled.so.9",
    "libcudnn_engines_runtime_compiled.so.9",
    "libcudnn_ops.so.9",
    "libcudnn_cnn.so.9",
    "libcudnn_adv.so.9",
];

/// The runtime-compilation libraries cuDNN's runtime-fusion engines use (CUDA 13, then 12).
pub const NVRTC_LIBS: &[&str] = &[
    "libnvrtc.so.13",
    "libnvrtc-builtins.so.13.0",
    "libnvJitLink.so.13",
    "libnvrtc.so.12",
    "libnvJitLink.so.12",
];

/// cuBLAS(Lt), which some matmul engines and heuristics call into.
pub const CUBLAS_LIBS: &[&str] = &[
    "libcublasLt.so.13",
    "libcublas.so.13",
    "libcublasLt.so.12",
    "libcublas.so.12",
];

/// What `all` pins: every group above.
pub const ALL_PINS: &[&[&str]] = &[CUDNN_SUBLIBS, NVRTC_LIBS, CUBLAS_LIBS];

/// The outcome for one requested library.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PinOutcome {
    /// The name or path asked for.
    pub name: String,
    /// Where it was opened from (`None` when it could not be opened).
    pub opened: Option<String>,
    /// Why it could not be opened (every place tried).
    pub error: Option<String>,
}

/// The libraries `value` (the variable's text, `None` when unset) asks to pin; empty when
/// pinning is off.
pub fn requested(value: Option<&str>) -> Vec<String> {
    let v = value.map(str::trim).unwrap_or("default");
    match v.to_ascii_lowercase().as_str() {
        "" | "0" | "off" | "false" => Vec::new(),
        "1" | "on" | "true" | "default" => NVRTC_LIBS.iter().map(|s| (*s).to_owned()).collect(),
        "all" => ALL_PINS
            .iter()
            .flat_map(|g| g.iter().map(|s| (*s).to_owned()))
            .collect(),
        _ => v
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .map(str::to_owned)
            .collect(),
    }
}

fn pinned() -> &'static Mutex<Vec<PinOutcome>> {
    static PINNED: Mutex<Vec<PinOutcome>> = Mutex::new(Vec::new());
    &PINNED
}

#[cfg(unix)]
fn open_forever(path: &str) -> std::result::Result<(), String> {
    use libloading::os::unix::{Library, RTLD_LAZY, RTLD_LOCAL};
    // SAFETY: loading a shared library runs its initialisers; the libraries named here are CUDA
    // and cuDNN libraries whose initialisers have no preconditions.
    let lib = unsafe { Library::open(Some(path), RTLD_LAZY | RTLD_LOCAL) }.map_err(|e| {
        let mut text = e.to_string();
        if let Some(s) = std::error::Error::source(&e) {
            text.push_str(": ");
            text.push_str(&s.to_string());
        }
        text
    })?;
    // Never closed: the whole point is one reference that outlives every cuDNN user.
    std::mem::forget(lib);
    Ok(())
}

#[cfg(not(unix))]
fn open_forever(_path: &str) -> std::result::Result<(), String> {
    Err("pinning is implemented for unix only".into())
}

/// The folder of the `libcudnn.so.9` mapped in this process (Linux: from /proc/self/maps).
fn loaded_cudnn_dir() -> Option<std::path::PathBuf> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| p.ends_with("/libcudnn.so.9") || p.contains("/libcudnn.so.9."))
        .and_then(|p| std::path::Path::new(p).parent().map(|d| d.to_path_buf()))
}

/// Opens each library in `names` once more and never closes it (a name already pinned by this
/// process is not opened again). Returns what happened to each; never fails.
pub fn pin_libraries(names: &[String]) -> Vec<PinOutcome> {
    let mut out = Vec::with_capacity(names.len());
    let lib_dir = std::env::var_os(ENV_CUDNN_LIB_DIR);
    for name in names {
        if let Some(done) = pinned().lock().ok().and_then(|p| {
            p.iter()
                .find(|o| &o.name == name && o.opened.is_some())
                .cloned()
        }) {
            out.push(done);
            continue;
        }
        let mut places = Vec::new();
        if name.contains('/') {
            places.push(name.clone());
        } else if name.starts_with("libcudnn") {
            // cuDNN's own parts only from the loaded cuDNN's folder: never a second copy.
            if let Some(dir) = loaded_cudnn_dir().or_else(|| lib_dir.clone().map(Into::into)) {
                places.push(dir.join(name).display().to_string());
            }
        } else {
            places.push(name.clone());
            if let Some(dir) = &lib_dir {
                places.push(std::path::Path::new(dir).join(name).display().to_string());
            }
        }
        let mut errors = Vec::new();
        if places.is_empty() {
            errors.push(format!(
                "{name}: no libcudnn.so.9 is loaded and {ENV_CUDNN_LIB_DIR} is unset"
            ));
        }
        let mut opened = None;
        for p in places {
            match open_forever(&p) {
                Ok(()) => {
                    opened = Some(p);
                    break;
                }
                Err(e) => errors.push(format!("{p}: {e}")),
            }
        }
        let outcome = PinOutcome {
            name: name.clone(),
            error: opened.is_none().then(|| errors.join("; ")),
            opened,
        };
        if let Ok(mut p) = pinned().lock() {
            p.push(outcome.clone());
        }
        out.push(outcome);
    }
    out
}

/// Pins what [`PIN_LIBS_ENV`] asks for (called once by the loader after cuDNN loaded).
pub fn pin_from_env() -> Vec<PinOutcome> {
    let value = std::env::var(PIN_LIBS_ENV).ok();
    pin_libraries(&requested(value.as_deref()))
}

/// Every pin attempt of this process so far (diagnostics).
pub fn outcomes() -> Vec<PinOutcome> {
    pinned().lock().map(|p| p.clone()).unwrap_or_default()
}
