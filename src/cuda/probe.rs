//! Probing the CUDA driver and NVRTC without ever letting cudarc panic: each library's presence is
//! checked first (cudarc panics on a missing library or symbol), then queried. Results are cached
//! per process. Absence is a value ([`Error::CudaUnavailable`] with the reason), never a crash.

use std::ffi::c_int;
use std::sync::OnceLock;

use cudarc::driver::{result as drv, sys as drv_sys};
use cudarc::nvrtc::sys as nvrtc_sys;
use serde::Serialize;

use crate::error::{Error, Result};

/// One visible CUDA device.
#[derive(Clone, Debug, Serialize)]
pub struct DeviceInfo {
    /// Device ordinal.
    pub ordinal: i32,
    /// Marketing name, e.g. "NVIDIA H200".
    pub name: String,
    /// Compute capability (major, minor).
    pub compute_capability: (i32, i32),
    /// Number of streaming multiprocessors.
    pub sm_count: i32,
    /// L2 cache size in bytes.
    pub l2_bytes: i64,
    /// Global memory in bytes.
    pub total_memory: u64,
}

impl DeviceInfo {
    /// Architecture as major*10 + minor (90 for Hopper H100/H200).
    pub fn arch(&self) -> i32 {
        self.compute_capability.0 * 10 + self.compute_capability.1
    }
}

/// What the CUDA driver reports.
#[derive(Clone, Debug, Serialize)]
pub struct DriverInfo {
    /// `cuDriverGetVersion`, e.g. 13000.
    pub driver_version: i32,
    /// Every visible device.
    pub devices: Vec<DeviceInfo>,
}

fn driver_err(call: &'static str) -> impl Fn(drv::DriverError) -> Error {
    move |e| Error::Cuda {
        call,
        message: format!("{e:?}"),
    }
}

fn query_driver() -> Result<DriverInfo> {
    // SAFETY: only checks whether the library can be opened.
    if !unsafe { drv_sys::is_culib_present() } {
        return Err(Error::CudaUnavailable(
            "the CUDA driver library (libcuda.so) was not found".into(),
        ));
    }
    drv::init().map_err(driver_err("cuInit"))?;
    let mut version: c_int = 0;
    // SAFETY: writes one int.
    unsafe { drv_sys::cuDriverGetVersion(&mut version) }
        .result()
        .map_err(driver_err("cuDriverGetVersion"))?;
    let count = drv::device::get_count().map_err(driver_err("cuDeviceGetCount"))?;
    let mut devices = Vec::with_capacity(count as usize);
    for ordinal in 0..count {
        let dev = drv::device::get(ordinal).map_err(driver_err("cuDeviceGet"))?;
        let attr = |a| {
            // SAFETY: `dev` is a valid device handle from cuDeviceGet.
            unsafe { drv::device::get_attribute(dev, a) }
                .map_err(driver_err("cuDeviceGetAttribute"))
        };
        use drv_sys::CUdevice_attribute_enum as A;
        devices.push(DeviceInfo {
            ordinal,
            name: drv::device::get_name(dev).map_err(driver_err("cuDeviceGetName"))?,
            compute_capability: (
                attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR)?,
                attr(A::CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR)?,
            ),
            sm_count: attr(A::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)?,
            l2_bytes: i64::from(attr(A::CU_DEVICE_ATTRIBUTE_L2_CACHE_SIZE)?),
            // SAFETY: valid device handle.
            total_memory: unsafe { drv::device::total_mem(dev) }
                .map_err(driver_err("cuDeviceTotalMem"))? as u64,
        });
    }
    Ok(DriverInfo {
        driver_version: version,
        devices,
    })
}

/// The CUDA driver's version and devices, probed once per process.
pub fn driver() -> Result<&'static DriverInfo, &'static Error> {
    static DRIVER: OnceLock<Result<DriverInfo>> = OnceLock::new();
    DRIVER
        .get_or_init(|| {
            std::panic::catch_unwind(query_driver).unwrap_or_else(|_| {
                Err(Error::CudaUnavailable(
                    "the CUDA driver could not be queried (a symbol is missing)".into(),
                ))
            })
        })
        .as_ref()
}

fn query_nvrtc() -> Result<(i32, i32)> {
    // Finds the library (search path, then $CUDA_HOME/lib64 and friends) without panicking.
    super::nvrtc::ensure_library()?;
    let (mut major, mut minor): (c_int, c_int) = (0, 0);
    // SAFETY: writes two ints.
    let rc = unsafe { nvrtc_sys::nvrtcVersion(&mut major, &mut minor) };
    if rc != nvrtc_sys::nvrtcResult::NVRTC_SUCCESS {
        return Err(Error::Cuda {
            call: "nvrtcVersion",
            message: format!("{rc:?}"),
        });
    }
    Ok((major, minor))
}

/// NVRTC's version (major, minor), probed once per process.
pub fn nvrtc_version() -> Result<(i32, i32), &'static Error> {
    static NVRTC: OnceLock<Result<(i32, i32)>> = OnceLock::new();
    NVRTC
        .get_or_init(|| {
            std::panic::catch_unwind(query_nvrtc).unwrap_or_else(|_| {
                Err(Error::CudaUnavailable(
                    "NVRTC could not be queried (a symbol is missing)".into(),
                ))
            })
        })
        .as_ref()
        .map(|v| *v)
}
