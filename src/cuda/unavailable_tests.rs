//! Without a CUDA driver (CPU CI), every entry point of the CUDA layer answers
//! `Error::CudaUnavailable` with a reason, and nothing panics. On a machine with a driver the
//! tests check the opposite side: the probe succeeds and reports devices.

use std::sync::Arc;

use super::probe::{self, DeviceInfo};
use super::*;
use crate::error::Error;

fn driver_absent() -> bool {
    // SAFETY: only tries to open the library.
    !unsafe { cudarc::driver::sys::is_culib_present() }
}

fn fake_device(cc: (i32, i32)) -> DeviceInfo {
    DeviceInfo {
        ordinal: 0,
        name: "Fake".into(),
        compute_capability: cc,
        sm_count: 1,
        l2_bytes: 1,
        total_memory: 1,
    }
}

#[test]
fn the_probe_reports_the_driver_or_its_absence() {
    match probe::driver() {
        Err(Error::CudaUnavailable(why)) => {
            assert!(
                driver_absent(),
                "the probe failed although libcuda loads: {why}"
            );
            assert!(why.contains("libcuda"), "{why}");
        }
        Err(other) => panic!("unexpected probe error: {other}"),
        Ok(d) => {
            assert!(!driver_absent());
            assert!(d.driver_version > 0);
        }
    }
}

#[test]
fn every_driver_entry_point_is_cuda_unavailable_without_a_driver() {
    if !driver_absent() {
        eprintln!("libcuda is present: the no-driver paths are exercised on CPU machines only");
        return;
    }
    let unavailable = |r: Result<(), Error>, what: &str| {
        assert!(matches!(r, Err(Error::CudaUnavailable(_))), "{what}: {r:?}");
    };
    let bundled = kernels::find("axpy")
        .and_then(|k| k.cubin("sm_90a"))
        .expect("bundled axpy");
    unavailable(
        Module::load(bundled.bytes, "axpy").map(drop),
        "Module::load",
    );
    unavailable(
        CurrentContext::current().map(drop),
        "CurrentContext::current",
    );
    // SAFETY: a default-stream sentinel.
    unavailable(
        unsafe { ContextGuard::for_stream(std::ptr::null_mut(), Some(0)) }.map(drop),
        "ContextGuard::for_stream",
    );
    unavailable(context::device_properties(0).map(drop), "device_properties");
    let hopper = fake_device((9, 0));
    unavailable(
        compile_or_load("axpy", &hopper, &[]).map(drop),
        "compile_or_load (bundled)",
    );
}

#[test]
fn nvrtc_absence_is_cuda_unavailable_and_the_cache_is_bypassed() {
    if nvrtc::ensure_library().is_ok() {
        eprintln!("NVRTC is present: the no-NVRTC paths are exercised on CPU machines only");
        return;
    }
    assert!(matches!(
        probe::nvrtc_version(),
        Err(Error::CudaUnavailable(_))
    ));
    let program = nvrtc::Program {
        name: "t.cu",
        source: "extern \"C\" __global__ void k() {}",
        headers: vec![],
        options: vec!["--gpu-architecture=sm_90a".into()],
    };
    assert!(matches!(
        nvrtc::compile(&program),
        Err(Error::CudaUnavailable(_))
    ));
    // An architecture with no bundled cubin goes to NVRTC; the identity has unknown fields, so the
    // cache is bypassed and the compile's own error comes back.
    let blackwell = fake_device((10, 0));
    let r: Result<Arc<Module>, Error> = compile_or_load("axpy", &blackwell, &[]);
    assert!(matches!(r, Err(Error::CudaUnavailable(_))), "{r:?}");
}
