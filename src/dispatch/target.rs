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

    /// The graph context's target statements win over the detected device (the reference's
    /// `sm_version` skips the device query; `sm_count` is the heuristics' SM count).
    pub fn with_graph_context(mut self, ctx: &crate::ir::GraphContext) -> Target {
        if let Some(v) = ctx.sm_version {
            let v = v as i32;
            let mut d = self.device.take().unwrap_or(TargetDevice {
                ordinal: -1,
                name: String::new(),
                compute_capability: (0, 0),
                sm_count: 0,
            });
            d.compute_capability = (v / 10, v % 10);
            self.device = Some(d);
            self.no_device_reason = None;
        }
        if let (Some(n), Some(d)) = (ctx.sm_count, self.device.as_mut()) {
            d.sm_count = n as i32;
        }
        self
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{DataType, GraphContext};

    #[test]
    fn graph_context_target_overrides_the_device() {
        let mut ctx = GraphContext::new(DataType::Half, DataType::Float, DataType::Float);
        let t = Target::no_device("none").with_graph_context(&ctx);
        assert_eq!(t.arch(), None);
        ctx.sm_version = Some(90);
        ctx.sm_count = Some(132);
        let t = Target::no_device("none").with_graph_context(&ctx);
        assert_eq!(t.arch(), Some(90));
        assert_eq!(t.device.as_ref().unwrap().sm_count, 132);
        assert!(t.no_device_reason.is_none());
        let t = Target::with_arch(100).with_graph_context(&ctx);
        assert_eq!(t.arch(), Some(90));
    }
}
