//! Locating and loading cuDNN at run time (libloading), once per process.
//!
//! Search order: a `libcudnn.so.9` already loaded in the process (a framework such as PyTorch may
//! have loaded it; `RTLD_NOLOAD`), then `$DNNPLAN_CUDNN_LIB_DIR/libcudnn.so.9`, then the standard
//! names through the system loader. The library is never unloaded. A missing or too-old library is
//! a value ([`Error::CudnnUnavailable`] naming every place tried), never a panic.

use std::sync::OnceLock;

use libloading::Library;
use serde::Serialize;

use crate::cudnn::api::CudnnApi;
use crate::error::{Error, Result};

/// Oldest cuDNN version (packed major*10000 + minor*100 + patch) the backend provider accepts.
pub const MIN_CUDNN_VERSION: usize = 9_00_00;

/// Environment variable naming a directory that holds `libcudnn.so.9`.
pub const ENV_CUDNN_LIB_DIR: &str = "DNNPLAN_CUDNN_LIB_DIR";

/// A loaded cuDNN library.
pub struct CudnnLibrary {
    /// The library handle (kept for the process lifetime).
    pub lib: Library,
    /// Where it was found (a path, or how it was found).
    pub origin: String,
    /// `cudnnGetVersion()`, packed major*10000 + minor*100 + patch.
    pub version: usize,
    /// The resolved entry points.
    pub api: CudnnApi,
}

/// Summary of the loaded library for diagnostics.
#[derive(Clone, Debug, Serialize)]
pub struct CudnnInfo {
    /// Where it was found.
    pub origin: String,
    /// Packed version.
    pub version: usize,
    /// Version as "major.minor.patch".
    pub version_string: String,
}

/// Formats a packed cuDNN version (e.g. 91900 -> "9.19.0").
pub fn version_string(packed: usize) -> String {
    format!(
        "{}.{}.{}",
        packed / 10000,
        (packed / 100) % 100,
        packed % 100
    )
}

fn candidates() -> Vec<(String, bool)> {
    let mut out = vec![("libcudnn.so.9".to_owned(), true)];
    if let Some(dir) = std::env::var_os(ENV_CUDNN_LIB_DIR) {
        out.push((
            std::path::Path::new(&dir)
                .join("libcudnn.so.9")
                .display()
                .to_string(),
            false,
        ));
    }
    out.push(("libcudnn.so.9".to_owned(), false));
    out.push(("libcudnn.so".to_owned(), false));
    out
}

/// libloading's error with its sources (its own text is only "dlopen failed"; the source carries
/// the loader's `dlerror()` message, e.g. "cannot open shared object file: No such file...").
fn describe(e: &libloading::Error) -> String {
    let mut text = e.to_string();
    let mut source = std::error::Error::source(e);
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
}

#[cfg(unix)]
fn open(name: &str, no_load: bool) -> std::result::Result<Library, String> {
    use libloading::os::unix::{Library as UnixLibrary, RTLD_LOCAL, RTLD_NOW};
    const RTLD_NOLOAD: i32 = 0x4;
    let flags = RTLD_NOW | RTLD_LOCAL | if no_load { RTLD_NOLOAD } else { 0 };
    // SAFETY: loading cuDNN runs its initialisers, which have no preconditions.
    unsafe { UnixLibrary::open(Some(name), flags) }
        .map(Library::from)
        .map_err(|e| {
            if no_load {
                // With RTLD_NOLOAD, dlerror's "cannot open shared object file" means "not loaded".
                format!("not loaded in this process ({})", describe(&e))
            } else {
                describe(&e)
            }
        })
}

#[cfg(not(unix))]
fn open(name: &str, no_load: bool) -> std::result::Result<Library, String> {
    if no_load {
        return Err("not supported on this OS".into());
    }
    // SAFETY: as above.
    unsafe { Library::new(name) }.map_err(|e| describe(&e))
}

fn load() -> Result<CudnnLibrary> {
    let mut tried = Vec::new();
    for (name, no_load) in candidates() {
        let how = if no_load {
            format!("{name} (already loaded)")
        } else {
            name.clone()
        };
        match open(&name, no_load) {
            Ok(lib) => {
                let api = CudnnApi::resolve(&lib).map_err(|e| {
                    Error::CudnnUnavailable(format!("{how}: missing cuDNN symbol {e}"))
                })?;
                // SAFETY: no arguments, no preconditions.
                let version = unsafe { (api.get_version)() };
                if version < MIN_CUDNN_VERSION {
                    return Err(Error::CudnnUnavailable(format!(
                        "{how} is cuDNN {}, dnnplan needs >= {}",
                        version_string(version),
                        version_string(MIN_CUDNN_VERSION)
                    )));
                }
                // NVRTC unless DNNPLAN_CUDNN_PIN_LIBS says otherwise (see `pin`); never fails.
                crate::cudnn::pin::pin_from_env();
                return Ok(CudnnLibrary {
                    lib,
                    origin: how,
                    version,
                    api,
                });
            }
            Err(e) => tried.push(format!("{how}: {e}")),
        }
    }
    Err(Error::CudnnUnavailable(format!(
        "libcudnn.so.9 not found (set {ENV_CUDNN_LIB_DIR}); tried: {}",
        tried.join("; ")
    )))
}

/// The process-wide cuDNN library, loaded on first use.
pub fn library() -> Result<&'static CudnnLibrary, &'static Error> {
    static LIB: OnceLock<Result<CudnnLibrary>> = OnceLock::new();
    LIB.get_or_init(|| {
        let loaded = load();
        crate::log::info(|| match &loaded {
            Ok(l) => format!(
                "cuDNN {} loaded from {}",
                version_string(l.version),
                l.origin
            ),
            Err(e) => format!("cuDNN not loaded: {e}"),
        });
        loaded
    })
    .as_ref()
}

/// Diagnostic summary of the loaded library.
pub fn info() -> Result<CudnnInfo, &'static Error> {
    library().map(|l| CudnnInfo {
        origin: l.origin.clone(),
        version: l.version,
        version_string: version_string(l.version),
    })
}

/// The resolved cuDNN entry points, or [`Error::CudnnUnavailable`] with the loader's reason.
pub fn api() -> Result<&'static CudnnApi> {
    library().map(|l| &l.api).map_err(|_| unavailable())
}

/// The loaded cuDNN version, or [`Error::CudnnUnavailable`] with the loader's reason.
pub fn version() -> Result<usize> {
    library().map(|l| l.version).map_err(|_| unavailable())
}

/// An owned copy of the loader's failure (for callers that must return `crate::Error`); a
/// generic reason when the library loaded fine.
pub fn unavailable() -> Error {
    match library() {
        Err(Error::CudnnUnavailable(why)) => Error::CudnnUnavailable(why.clone()),
        Err(other) => Error::CudnnUnavailable(other.to_string()),
        Ok(_) => Error::CudnnUnavailable("cuDNN is loaded".into()),
    }
}
