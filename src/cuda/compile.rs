//! Getting a loaded module for a kernel: the bundled cubin when one fits, else NVRTC.
//!
//! [`compile_or_load`] is what an engine's `build_plan` calls. A bundled cubin fits when the
//! device's architecture has one (sm_90a cubins run on compute capability 9.0 only), the requested
//! knob defines equal the ones it was built with, and the driver is at least as new as the toolkit
//! that built it (a 13.0 cubin needs a 13.0 driver). Anything else (another architecture,
//! a knob specialization that is not bundled) compiles the embedded source with NVRTC for exactly
//! this device, through the compiled-plan cache ([`CompiledCache::global`]), so the compile is paid
//! once per machine. [`compile_nvrtc`] takes the NVRTC path unconditionally.

use std::sync::Arc;

use super::cache::{CacheKey, CompiledCache, EnvIdentity};
use super::kernels::{self, Kernel};
use super::module::Module;
use super::nvrtc;
use super::probe::DeviceInfo;
use crate::error::{Error, Result};

/// A GPU architecture (compute capability).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct GpuArch {
    /// Major version (9 for Hopper).
    pub major: i32,
    /// Minor version.
    pub minor: i32,
}

impl GpuArch {
    /// The architecture of a probed device.
    pub fn of(device: &DeviceInfo) -> Self {
        GpuArch {
            major: device.compute_capability.0,
            minor: device.compute_capability.1,
        }
    }

    /// The bundled-cubin architecture name that runs on this device, if cubins exist for it
    /// (sm_90a cubins are built for compute capability 9.0 exactly).
    pub fn bundled_name(&self) -> Option<&'static str> {
        match (self.major, self.minor) {
            (9, 0) => Some("sm_90a"),
            _ => None,
        }
    }

    /// The NVRTC target: the arch-specific `sm_XYa` from 9.0 on (the object is built for this very
    /// device, so its architecture-specific features are usable), plain `sm_XY` before.
    pub fn nvrtc_target(&self) -> String {
        if self.major >= 9 {
            format!("sm_{}{}a", self.major, self.minor)
        } else {
            format!("sm_{}{}", self.major, self.minor)
        }
    }
}

/// How a kernel module will be obtained for a device.
#[derive(Debug)]
pub enum Plan {
    /// Load the checked-in cubin.
    Bundled(&'static kernels::Cubin),
    /// Compile the embedded source with these NVRTC options.
    Nvrtc(Vec<String>),
}

/// Normalizes `NAME=VALUE` defines (sorted, validated: identifier name, printable value without
/// spaces); a bare `NAME` means `NAME=1`.
pub fn normalize_defines(defines: &[(&str, &str)]) -> Result<Vec<String>> {
    let mut out = Vec::with_capacity(defines.len());
    for (name, value) in defines {
        let ident = !name.is_empty()
            && !name.starts_with(|c: char| c.is_ascii_digit())
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !ident {
            return Err(Error::bad_param(
                format!("define `{name}`"),
                "the name must be a C identifier",
            ));
        }
        if !value.chars().all(|c| c.is_ascii_graphic()) {
            return Err(Error::bad_param(
                format!("define `{name}`"),
                "the value must be printable ASCII without spaces",
            ));
        }
        out.push(if value.is_empty() {
            format!("{name}=1")
        } else {
            format!("{name}={value}")
        });
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn kernel(name: &str) -> Result<&'static Kernel> {
    kernels::find(name).ok_or_else(|| Error::NotFound {
        what: "bundled kernel",
        key: name.to_owned(),
    })
}

/// The NVRTC options dnnplan compiles with for `arch` and normalized `defines` (see
/// [`normalize_defines`]): target, C++17, `-DDNNP_NVRTC=1`, the defines, toolkit include dirs.
pub fn nvrtc_options(arch: GpuArch, defines: &[String]) -> Vec<String> {
    let mut options = vec![
        format!("--gpu-architecture={}", arch.nvrtc_target()),
        "--std=c++17".to_owned(),
        "-DDNNP_NVRTC=1".to_owned(),
    ];
    options.extend(defines.iter().map(|d| format!("-D{d}")));
    // Our own headers are served from memory; toolkit headers (cuda_bf16.h...) from the toolkit.
    if let Some(dir) = nvrtc::cuda_include_dir() {
        options.push(format!("-I{}", dir.display()));
        // CUDA 13 keeps libcu++ (<cuda/std/...>) and CUB under include/cccl.
        if dir.join("cccl").is_dir() {
            options.push(format!("-I{}", dir.join("cccl").display()));
        }
    }
    options
}

/// The oldest driver (`cuDriverGetVersion` form, e.g. 13000) that loads cubins of a toolkit
/// version such as "13.0.88"; `None` when the version does not parse.
pub fn driver_needed_for(toolkit: &str) -> Option<i32> {
    let mut parts = toolkit.split('.');
    let major: i32 = parts.next()?.parse().ok()?;
    let minor: i32 = parts.next()?.parse().ok()?;
    Some(major * 1000 + minor * 10)
}

/// Decides, without touching the GPU, how `kernel` is obtained for `arch` with `defines`
/// (assuming a driver new enough for the bundled cubins; see [`plan_for_driver`]).
pub fn plan(kernel_name: &str, arch: GpuArch, defines: &[(&str, &str)]) -> Result<Plan> {
    plan_for_driver(kernel_name, arch, None, defines)
}

/// As [`plan`], and a bundled cubin is used only when `driver_version` (when known) is at least
/// the one its toolkit needs; an older driver gets the NVRTC path.
pub fn plan_for_driver(
    kernel_name: &str,
    arch: GpuArch,
    driver_version: Option<i32>,
    defines: &[(&str, &str)],
) -> Result<Plan> {
    let k = kernel(kernel_name)?;
    let defines = normalize_defines(defines)?;
    let mut bundled_defines: Vec<String> = k.defines.iter().map(|d| (*d).to_owned()).collect();
    bundled_defines.sort();
    let driver_ok = |toolkit: &str| match (driver_version, driver_needed_for(toolkit)) {
        (Some(have), Some(need)) => have >= need,
        _ => true,
    };
    if let Some(cubin) = arch.bundled_name().and_then(|a| k.cubin(a))
        && defines == bundled_defines
        && driver_ok(cubin.toolkit)
    {
        return Ok(Plan::Bundled(cubin));
    }
    Ok(Plan::Nvrtc(nvrtc_options(arch, &defines)))
}

/// The loaded module of `kernel` for `device` with knob `defines`: the bundled cubin when it fits,
/// else NVRTC through the compiled-plan cache (see the module doc).
pub fn compile_or_load(
    kernel_name: &str,
    device: &DeviceInfo,
    defines: &[(&str, &str)],
) -> Result<Arc<Module>> {
    let driver_version = super::probe::driver().ok().map(|d| d.driver_version);
    match plan_for_driver(kernel_name, GpuArch::of(device), driver_version, defines)? {
        Plan::Bundled(cubin) => {
            Module::load(cubin.bytes, &format!("{kernel_name} ({})", cubin.arch))
        }
        Plan::Nvrtc(options) => nvrtc_module(kernel_name, device, options, CompiledCache::global()),
    }
}

/// `kernel` compiled by NVRTC for `device` (never the bundled cubin), through the global cache.
pub fn compile_nvrtc(
    kernel_name: &str,
    device: &DeviceInfo,
    defines: &[(&str, &str)],
) -> Result<Arc<Module>> {
    let options = nvrtc_options(GpuArch::of(device), &normalize_defines(defines)?);
    nvrtc_module(kernel_name, device, options, CompiledCache::global())
}

/// The cache key of an NVRTC build: kernel, its source digest, the target and every option.
pub fn nvrtc_key(kernel: &Kernel, options: &[String]) -> CacheKey {
    CacheKey::new([
        ("kind", "nvrtc-cubin".to_owned()),
        ("kernel", kernel.name.to_owned()),
        ("sources_blake3", kernel.sources_digest()),
        ("options", options.join(" ")),
    ])
}

fn nvrtc_module(
    kernel_name: &str,
    device: &DeviceInfo,
    options: Vec<String>,
    cache: &CompiledCache,
) -> Result<Arc<Module>> {
    let k = kernel(kernel_name)?;
    let main = k.main_file().ok_or_else(|| {
        Error::Internal(format!("kernel {kernel_name}: main source not embedded"))
    })?;
    let identity = EnvIdentity::for_device(device.ordinal);
    let key = nvrtc_key(k, &options);
    let (bytes, outcome) = cache.get_or_compile(&identity, &key, || {
        nvrtc::compile(&nvrtc::Program {
            name: main.path,
            source: main.text,
            headers: k.headers().map(|h| (h.include_name(), h.text)).collect(),
            options: options.clone(),
        })
    })?;
    Module::load(
        &bytes,
        &format!("{kernel_name} (NVRTC {outcome:?}, {})", options.join(" ")),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    const HOPPER: GpuArch = GpuArch { major: 9, minor: 0 };
    const BLACKWELL: GpuArch = GpuArch {
        major: 10,
        minor: 0,
    };

    #[test]
    fn hopper_without_knobs_uses_the_bundled_cubin() {
        assert!(matches!(plan("axpy", HOPPER, &[]), Ok(Plan::Bundled(c)) if c.arch == "sm_90a"));
    }

    #[test]
    fn other_architectures_and_unbundled_knobs_go_to_nvrtc() {
        let Ok(Plan::Nvrtc(opts)) = plan("axpy", BLACKWELL, &[]) else {
            panic!("expected NVRTC for sm_100");
        };
        assert!(opts.contains(&"--gpu-architecture=sm_100a".to_owned()));
        let Ok(Plan::Nvrtc(opts)) = plan("axpy", HOPPER, &[("DNNP_AXPY_UNROLL", "8")]) else {
            panic!("expected NVRTC for an unbundled knob");
        };
        assert!(opts.contains(&"-DDNNP_AXPY_UNROLL=8".to_owned()));
        assert!(opts.contains(&"--gpu-architecture=sm_90a".to_owned()));
        assert_eq!(
            GpuArch { major: 8, minor: 6 }.nvrtc_target(),
            "sm_86",
            "no arch-specific target before Hopper"
        );
    }

    #[test]
    fn a_driver_older_than_the_cubins_toolkit_gets_nvrtc() {
        assert_eq!(driver_needed_for("13.0.88"), Some(13000));
        assert_eq!(driver_needed_for("12.9"), Some(12090));
        assert_eq!(driver_needed_for("garbage"), None);
        assert!(matches!(
            plan_for_driver("axpy", HOPPER, Some(12090), &[]),
            Ok(Plan::Nvrtc(_))
        ));
        assert!(matches!(
            plan_for_driver("axpy", HOPPER, Some(13000), &[]),
            Ok(Plan::Bundled(_))
        ));
    }

    #[test]
    fn bad_defines_and_unknown_kernels_are_clear_errors() {
        assert!(matches!(
            plan("axpy", HOPPER, &[("1X", "2")]),
            Err(Error::BadParam { .. })
        ));
        assert!(matches!(
            plan("axpy", HOPPER, &[("X", "a b")]),
            Err(Error::BadParam { .. })
        ));
        assert!(matches!(
            plan("nope", HOPPER, &[]),
            Err(Error::NotFound { .. })
        ));
        assert_eq!(
            normalize_defines(&[("B", ""), ("A", "2")]).ok(),
            Some(vec!["A=2".to_owned(), "B=1".to_owned()])
        );
    }

    #[test]
    fn the_nvrtc_key_changes_with_options_and_sources() {
        let k = kernel("axpy").expect("bundled axpy");
        let a = nvrtc_key(k, &nvrtc_options(HOPPER, &[]));
        let b = nvrtc_key(k, &nvrtc_options(BLACKWELL, &[]));
        assert_ne!(a.hash(), b.hash());
        assert_eq!(
            k.sources_digest(),
            k.sources_blake3,
            "embedded sources match the manifest"
        );
    }
}
