//! The planning target: the device (if any) and the cuDNN version the plan list is made for.
//!
//! Facts and support checks read the target, never ambient state, so a plan list can be
//! explained for a machine other than this one (`--arch 90` on a CPU box) and tests pin it.

use serde::Serialize;

/// The device a plan list is made for.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct TargetDevice {
    /// CUDA ordinal (`-1` for a hypothetical device given only by its arch).
    pub ordinal: i32,
    /// Device name (empty when hypothetical).
    pub name: String,
    /// Compute capability `(major, minor)`.
    pub compute_capability: (i32, i32),
    /// Streaming multiprocessors (0 when unknown).
    pub sm_count: i32,
}

impl TargetDevice {
    /// The arch number `major*10 + minor` (H200 = 90).
    pub fn arch(&self) -> i32 {
        self.compute_capability.0 * 10 + self.compute_capability.1
    }
}

/// Where planning happens: the device (`None` = no usable CUDA device) and why there is none.
#[derive(Clone, Debug, Serialize)]
pub struct Target {
    /// The device, or `None`.
    pub device: Option<TargetDevice>,
    /// Why there is no device (the probe's message), when `device` is `None`.
    pub no_device_reason: Option<String>,
}

impl Target {
    /// Device 0 of this machine as the CUDA probe sees it; no driver or no GPU gives `device: None`.
    pub fn detect() -> Target {
        match crate::cuda::probe::driver() {
            Ok(info) => match info.devices.first() {
                Some(d) => Target {
                    device: Some(TargetDevice {
                        ordinal: d.ordinal,
                        name: d.name.clone(),
                        compute_capability: d.compute_capability,
                        sm_count: d.sm_count,
                    }),
                    no_device_reason: None,
                },
                None => Target::no_device("the CUDA driver reports no device"),
            },
            Err(e) => Target::no_device(&e.to_string()),
        }
    }

    /// No device, with the reason engines that need one report.
    pub fn no_device(reason: &str) -> Target {
        Target {
            device: None,
            no_device_reason: Some(reason.to_owned()),
        }
    }

    /// A hypothetical device of arch `major*10 + minor` (e.g. 90), for explaining elsewhere.
    pub fn with_arch(arch: i32) -> Target {
        Target {
            device: Some(TargetDevice {
                ordinal: -1,
                name: String::new(),
                compute_capability: (arch / 10, arch % 10),
                sm_count: 0,
            }),
            no_device_reason: None,
        }
    }

    /// The arch number, or `None` without a device.
    pub fn arch(&self) -> Option<i32> {
        self.device.as_ref().map(TargetDevice::arch)
    }

    /// "current device is SM90" or "no CUDA device (reason)".
    pub fn describe(&self) -> String {
        match (&self.device, &self.no_device_reason) {
            (Some(d), _) => format!("current device is SM{}", d.arch()),
            (None, Some(r)) => format!("no CUDA device ({r})"),
            (None, None) => "no CUDA device".to_owned(),
        }
    }
}
