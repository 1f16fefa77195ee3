//! NVRTC: finding the library robustly and compiling CUDA C++ to a cubin.
//!
//! Loading ([`ensure_library`], once per process, never panics):
//! 1. `$DNNPLAN_NVRTC_LIB_DIR`, when set, wins: NVRTC is loaded by full path from there;
//! 2. else cudarc's own name search (`libnvrtc.so`, `libnvrtc.so.13`, ... on the loader's path);
//! 3. else by full path from `$CUDA_HOME/lib64`, `$CUDA_PATH/lib64`, `/usr/local/cuda/lib64`.
//!
//! Names tried in a directory: `libnvrtc.so.13`, `libnvrtc.so`; `libnvrtc-builtins` from the same
//! directory is preloaded first. A library opened by full path is what a later `dlopen` of its
//! SONAME returns, so cudarc's lazy loader (which panics when it finds nothing) resolves to our
//! copy. The preloaded handles stay open for the life of the process.

use std::ffi::{CStr, CString, c_char, c_int};
use std::path::{Path, PathBuf};
use std::sync::OnceLock;

use cudarc::nvrtc::sys as nvrtc_sys;

use crate::error::{Error, Result};

/// Where NVRTC was found.
#[derive(Clone, Debug)]
pub enum NvrtcOrigin {
    /// Found by cudarc's own name search (the loader's search path).
    SearchPath,
    /// Loaded by full path by dnnplan (the file).
    Preloaded(PathBuf),
}

fn candidate_dirs() -> Vec<PathBuf> {
    let mut dirs = Vec::new();
    if let Some(d) = std::env::var_os("DNNPLAN_NVRTC_LIB_DIR") {
        dirs.push(PathBuf::from(d));
    }
    for var in ["CUDA_HOME", "CUDA_PATH"] {
        if let Some(d) = std::env::var_os(var) {
            dirs.push(Path::new(&d).join("lib64"));
        }
    }
    dirs.push(PathBuf::from("/usr/local/cuda/lib64"));
    dirs
}

/// The CUDA toolkit's include directory (for kernels that include toolkit headers such as
/// `cuda_bf16.h`): the first of `$CUDA_HOME/include`, `$CUDA_PATH/include`,
/// `/usr/local/cuda/include` that holds `cuda.h`.
pub fn cuda_include_dir() -> Option<PathBuf> {
    let mut dirs: Vec<PathBuf> = ["CUDA_HOME", "CUDA_PATH"]
        .iter()
        .filter_map(|v| std::env::var_os(v).map(|d| Path::new(&d).join("include")))
        .collect();
    dirs.push(PathBuf::from("/usr/local/cuda/include"));
    dirs.into_iter().find(|d| d.join("cuda.h").is_file())
}

fn preload_from(dir: &Path) -> Option<PathBuf> {
    static KEEP: OnceLock<std::sync::Mutex<Vec<libloading::Library>>> = OnceLock::new();
    let keep = KEEP.get_or_init(Default::default);
    for name in ["libnvrtc.so.13", "libnvrtc.so"] {
        let path = dir.join(name);
        if !path.is_file() {
            continue;
        }
        // The builtins library first: NVRTC opens it by name when compiling.
        if let Ok(entries) = std::fs::read_dir(dir) {
            for e in entries.flatten() {
                if e.file_name()
                    .to_string_lossy()
                    .starts_with("libnvrtc-builtins.so")
                {
                    // SAFETY: loading a CUDA library runs only its ELF initializers.
                    if let Ok(lib) = unsafe { libloading::Library::new(e.path()) }
                        && let Ok(mut k) = keep.lock()
                    {
                        k.push(lib);
                    }
                    break;
                }
            }
        }
        // SAFETY: as above.
        if let Ok(lib) = unsafe { libloading::Library::new(&path) } {
            if let Ok(mut k) = keep.lock() {
                k.push(lib);
            }
            return Some(path);
        }
    }
    None
}

/// Makes NVRTC loadable by cudarc (see the module doc); cached per process.
pub fn ensure_library() -> Result<&'static NvrtcOrigin> {
    static ORIGIN: OnceLock<std::result::Result<NvrtcOrigin, String>> = OnceLock::new();
    ORIGIN
        .get_or_init(|| {
            std::panic::catch_unwind(|| {
                let explicit = std::env::var_os("DNNPLAN_NVRTC_LIB_DIR").map(PathBuf::from);
                if let Some(dir) = &explicit
                    && let Some(path) = preload_from(dir)
                    // SAFETY: only tries to open the library; resolves to the preloaded copy.
                    && unsafe { nvrtc_sys::is_culib_present() }
                {
                    return Ok(NvrtcOrigin::Preloaded(path));
                }
                // SAFETY: only tries to open the library by its candidate names.
                if unsafe { nvrtc_sys::is_culib_present() } {
                    return Ok(NvrtcOrigin::SearchPath);
                }
                let dirs = candidate_dirs();
                for dir in &dirs {
                    if let Some(path) = preload_from(dir) {
                        // SAFETY: as above; now resolves to the preloaded copy by SONAME.
                        if unsafe { nvrtc_sys::is_culib_present() } {
                            return Ok(NvrtcOrigin::Preloaded(path));
                        }
                    }
                }
                Err(format!(
                    "NVRTC (libnvrtc.so.13) was not found on the library search path nor in {}",
                    dirs.iter()
                        .map(|d| d.display().to_string())
                        .collect::<Vec<_>>()
                        .join(", ")
                ))
            })
            .unwrap_or_else(|_| Err("NVRTC could not be probed".into()))
        })
        .as_ref()
        .map_err(|why| Error::CudaUnavailable(why.clone()))
}

fn guarded<T>(what: &str, body: impl FnOnce() -> Result<T>) -> Result<T> {
    ensure_library()?;
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(body)).unwrap_or_else(|_| {
        Err(Error::CudaUnavailable(format!(
            "{what}: NVRTC lacks a required entry point"
        )))
    })
}

fn check(call: &'static str, rc: nvrtc_sys::nvrtcResult) -> Result<()> {
    if rc == nvrtc_sys::nvrtcResult::NVRTC_SUCCESS {
        return Ok(());
    }
    // SAFETY: returns a static string for any result value.
    let text = unsafe { nvrtc_sys::nvrtcGetErrorString(rc) };
    let message = if text.is_null() {
        format!("{rc:?}")
    } else {
        // SAFETY: static NUL-terminated string.
        unsafe { CStr::from_ptr(text) }
            .to_string_lossy()
            .into_owned()
    };
    Err(Error::Cuda { call, message })
}

/// The real architectures (`sm_XY` numbers, e.g. 90) this NVRTC can compile for.
pub fn supported_archs() -> Result<Vec<i32>> {
    guarded("NVRTC architectures", || {
        let mut n: c_int = 0;
        // SAFETY: writes one int.
        check("nvrtcGetNumSupportedArchs", unsafe {
            nvrtc_sys::nvrtcGetNumSupportedArchs(&mut n)
        })?;
        let mut archs = vec![0 as c_int; n.max(0) as usize];
        // SAFETY: `archs` holds the `n` ints NVRTC writes.
        check("nvrtcGetSupportedArchs", unsafe {
            nvrtc_sys::nvrtcGetSupportedArchs(archs.as_mut_ptr())
        })?;
        Ok(archs)
    })
}

/// One translation unit for NVRTC: the main source and the headers it includes by name.
#[derive(Clone, Debug)]
pub struct Program<'a> {
    /// File name shown in diagnostics (e.g. "src/axpy.cu").
    pub name: &'a str,
    /// The main source text.
    pub source: &'a str,
    /// `(include name, text)` for every header, served from memory.
    pub headers: Vec<(&'a str, &'a str)>,
    /// Compiler options (e.g. `--gpu-architecture=sm_90a`, `-DNAME=VALUE`).
    pub options: Vec<String>,
}

fn cstring(what: &str, s: &str) -> Result<CString> {
    CString::new(s).map_err(|_| Error::bad_param(what.to_owned(), "contains a NUL byte"))
}

/// Destroys an NVRTC program on every path out of [`compile`].
struct ProgramGuard(nvrtc_sys::nvrtcProgram);

impl Drop for ProgramGuard {
    fn drop(&mut self) {
        let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            // SAFETY: the program was created by nvrtcCreateProgram and is destroyed once.
            unsafe { nvrtc_sys::nvrtcDestroyProgram(&mut self.0) };
        }));
    }
}

/// Compiles `program` to a cubin (the options must name a real `sm_XY[a]` architecture).
/// A compile error is [`Error::Cuda`] carrying NVRTC's log.
pub fn compile(program: &Program<'_>) -> Result<Vec<u8>> {
    let source = cstring(program.name, program.source)?;
    let name = cstring("program name", program.name)?;
    let header_texts = program
        .headers
        .iter()
        .map(|(n, t)| cstring(n, t))
        .collect::<Result<Vec<_>>>()?;
    let header_names = program
        .headers
        .iter()
        .map(|(n, _)| cstring("header name", n))
        .collect::<Result<Vec<_>>>()?;
    let options = program
        .options
        .iter()
        .map(|o| cstring("NVRTC option", o))
        .collect::<Result<Vec<_>>>()?;
    guarded("NVRTC compile", || {
        let text_ptrs: Vec<*const c_char> = header_texts.iter().map(|c| c.as_ptr()).collect();
        let name_ptrs: Vec<*const c_char> = header_names.iter().map(|c| c.as_ptr()).collect();
        let option_ptrs: Vec<*const c_char> = options.iter().map(|c| c.as_ptr()).collect();
        let mut prog: nvrtc_sys::nvrtcProgram = std::ptr::null_mut();
        // SAFETY: every string is NUL-terminated and outlives the call; the arrays have
        // `headers.len()` entries.
        check("nvrtcCreateProgram", unsafe {
            nvrtc_sys::nvrtcCreateProgram(
                &mut prog,
                source.as_ptr(),
                name.as_ptr(),
                text_ptrs.len() as c_int,
                text_ptrs.as_ptr(),
                name_ptrs.as_ptr(),
            )
        })?;
        let guard = ProgramGuard(prog);
        // SAFETY: the program is live; the option strings outlive the call.
        let rc = unsafe {
            nvrtc_sys::nvrtcCompileProgram(
                guard.0,
                option_ptrs.len() as c_int,
                option_ptrs.as_ptr(),
            )
        };
        if rc != nvrtc_sys::nvrtcResult::NVRTC_SUCCESS {
            let log = program_log(guard.0).unwrap_or_default();
            return Err(Error::Cuda {
                call: "nvrtcCompileProgram",
                message: format!("{} failed to compile: {rc:?}\n{log}", program.name),
            });
        }
        let mut size = 0usize;
        // SAFETY: the program compiled; writes one size.
        check("nvrtcGetCUBINSize", unsafe {
            nvrtc_sys::nvrtcGetCUBINSize(guard.0, &mut size)
        })?;
        if size == 0 {
            return Err(Error::Cuda {
                call: "nvrtcGetCUBIN",
                message: format!(
                    "{}: NVRTC produced no cubin (the architecture option must be a real sm_XY)",
                    program.name
                ),
            });
        }
        let mut cubin = vec![0u8; size];
        // SAFETY: `cubin` holds `size` bytes.
        check("nvrtcGetCUBIN", unsafe {
            nvrtc_sys::nvrtcGetCUBIN(guard.0, cubin.as_mut_ptr().cast())
        })?;
        Ok(cubin)
    })
}

fn program_log(prog: nvrtc_sys::nvrtcProgram) -> Option<String> {
    let mut size = 0usize;
    // SAFETY: live program; writes one size.
    if unsafe { nvrtc_sys::nvrtcGetProgramLogSize(prog, &mut size) }
        != nvrtc_sys::nvrtcResult::NVRTC_SUCCESS
    {
        return None;
    }
    let mut log = vec![0u8; size.max(1)];
    // SAFETY: `log` holds `size` bytes.
    unsafe { nvrtc_sys::nvrtcGetProgramLog(prog, log.as_mut_ptr().cast()) };
    Some(
        String::from_utf8_lossy(&log)
            .trim_end_matches('\0')
            .to_owned(),
    )
}
