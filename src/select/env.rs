//! The environment a request is judged in (spec section 1.4): device architecture, cuDNN runtime
//! (and compiled) version, SM count, which of our engine rows are available, and explicit policy
//! (the analogue of TE's `NVTE_*` toggles, as fields rather than environment reads).
//!
//! [`Environment::detect`] reads the first CUDA device (through [`crate::cuda::probe::driver`])
//! and the loaded cuDNN (through [`crate::cudnn::loader::info`]); [`EnvironmentSpec`] lets a
//! caller state any part explicitly, the rest being detected. Nothing here panics when CUDA or
//! cuDNN is absent: no device and no stated `sm` is an error, no cuDNN is a value.

use serde::{Deserialize, Serialize};

use super::engines;
use super::version::CudnnVer;
use crate::error::{Error, Result};

/// Explicit policy switches.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Policy {
    /// Target names switched off (e.g. `"cudnn.fp8"`), like `NVTE_FUSED_ATTN=0`.
    pub disabled: Vec<String>,
    /// The unfused reference may emulate FP8 (TE's FP8 emulation switch).
    pub allow_fp8_emulation: bool,
}

/// Where the environment came from.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Every field was detected on this machine.
    Detected,
    /// The caller stated every field.
    Given,
    /// Some fields were stated, the others detected.
    Mixed,
}

/// The environment the rules are evaluated in.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Environment {
    /// Architecture `10*major + minor` (H200 = 90).
    pub sm: u16,
    /// The runtime cuDNN version; `None` = cuDNN not loaded (cuDNN targets are then rejected).
    pub cudnn: Option<CudnnVer>,
    /// The cuDNN version dnnplan was compiled against (`None`: dnnplan loads cuDNN at run time
    /// and compiles against no headers, so the effective version is the runtime one).
    pub cudnn_compiled: Option<CudnnVer>,
    /// CUDA driver version as reported by `cuDriverGetVersion` (informational: no rule uses it).
    pub cuda_driver: Option<i32>,
    /// Streaming multiprocessor count (informational).
    pub sm_count: Option<u32>,
    /// Names of the engine rows available in this build (bundled and enabled).
    pub engines: Vec<String>,
    /// Policy switches.
    pub policy: Policy,
    /// Detected, given or mixed.
    pub origin: Origin,
}

impl Environment {
    /// An environment stated in full: architecture and cuDNN version, the engines this build
    /// bundles, default policy.
    pub fn new(sm: u16, cudnn: Option<CudnnVer>) -> Self {
        Environment {
            sm,
            cudnn,
            cudnn_compiled: None,
            cuda_driver: None,
            sm_count: None,
            engines: engines::bundled_names(),
            policy: Policy::default(),
            origin: Origin::Given,
        }
    }

    /// The environment of this machine: first CUDA device, loaded cuDNN.
    pub fn detect() -> Result<Self> {
        EnvironmentSpec::default().resolve()
    }

    /// `min(compiled, runtime)`: the version cuDNN-frontend gates its newer features on.
    pub fn cudnn_effective(&self) -> Option<CudnnVer> {
        match (self.cudnn, self.cudnn_compiled) {
            (Some(r), Some(c)) => Some(r.min(c)),
            (r, _) => r,
        }
    }
}

/// A cuDNN version or the explicit statement that none is loaded (`"none"`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CudnnSpec {
    /// This version.
    Version(CudnnVer),
    /// No cuDNN.
    Absent,
}

impl<'de> Deserialize<'de> for CudnnSpec {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        match &v {
            serde_json::Value::String(s) if s.eq_ignore_ascii_case("none") => Ok(CudnnSpec::Absent),
            serde_json::Value::Null => Ok(CudnnSpec::Absent),
            _ => serde_json::from_value::<CudnnVer>(v)
                .map(CudnnSpec::Version)
                .map_err(serde::de::Error::custom),
        }
    }
}

/// The JSON form of an environment: every field optional; absent fields are detected.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct EnvironmentSpec {
    /// Architecture (`90`); alias `arch`.
    #[serde(alias = "arch")]
    pub sm: Option<u16>,
    /// Runtime cuDNN: `"9.19.0"`, `91900`, or `"none"`/`null` for no cuDNN; alias `cudnn_runtime`.
    #[serde(alias = "cudnn_runtime", default, deserialize_with = "some_cudnn")]
    pub cudnn: Option<CudnnSpec>,
    /// Compiled-against cuDNN.
    pub cudnn_compiled: Option<CudnnVer>,
    /// SM count.
    pub sm_count: Option<u32>,
    /// Available engine rows (by name); `["all"]` = every row.
    pub engines: Option<Vec<String>>,
    /// Policy.
    pub policy: Option<Policy>,
}

fn some_cudnn<'de, D: serde::Deserializer<'de>>(
    d: D,
) -> std::result::Result<Option<CudnnSpec>, D::Error> {
    CudnnSpec::deserialize(d).map(Some)
}

impl EnvironmentSpec {
    /// Parses the JSON text of an environment.
    pub fn from_json(text: &str) -> Result<Self> {
        serde_json::from_str(text).map_err(|e| Error::bad_param("environment JSON", e.to_string()))
    }

    /// Overlays the fields set in `other` onto `self`.
    pub fn overlay(mut self, other: EnvironmentSpec) -> Self {
        if other.sm.is_some() {
            self.sm = other.sm;
        }
        if other.cudnn.is_some() {
            self.cudnn = other.cudnn;
        }
        if other.cudnn_compiled.is_some() {
            self.cudnn_compiled = other.cudnn_compiled;
        }
        if other.sm_count.is_some() {
            self.sm_count = other.sm_count;
        }
        if other.engines.is_some() {
            self.engines = other.engines;
        }
        if let Some(p) = other.policy {
            let mut base = self.policy.unwrap_or_default();
            if !p.disabled.is_empty() {
                base.disabled = p.disabled;
            }
            base.allow_fp8_emulation |= p.allow_fp8_emulation;
            self.policy = Some(base);
        }
        self
    }

    /// Fills every absent field by detection. Fails only when no `sm` is stated and no CUDA
    /// device can be found; an unknown engine name is a `BadParam`.
    pub fn resolve(self) -> Result<Environment> {
        let stated = [
            self.sm.is_some(),
            self.cudnn.is_some(),
            self.engines.is_some(),
        ];
        let device = crate::cuda::probe::driver()
            .ok()
            .and_then(|d| d.devices.first().map(|dev| (d.driver_version, dev.clone())));
        let sm = match (self.sm, &device) {
            (Some(sm), _) => sm,
            (None, Some((_, dev))) => u16::try_from(dev.arch()).map_err(|_| {
                Error::Internal(format!("device architecture {} out of range", dev.arch()))
            })?,
            (None, None) => {
                let why = match crate::cuda::probe::driver() {
                    Err(e) => e.to_string(),
                    Ok(_) => "no CUDA device is visible".to_owned(),
                };
                return Err(Error::CudaUnavailable(format!(
                    "cannot detect the device architecture ({why}); state it (environment \"sm\", CLI --arch)"
                )));
            }
        };
        let cudnn = match self.cudnn {
            Some(CudnnSpec::Version(v)) => Some(v),
            Some(CudnnSpec::Absent) => None,
            None => crate::cudnn::loader::info()
                .ok()
                .and_then(|i| CudnnVer::from_raw(i.version as u64)),
        };
        let engines = match self.engines {
            None => engines::bundled_names(),
            Some(list) if list.iter().any(|n| n == "all") => {
                engines::ROWS.iter().map(|r| r.name.to_owned()).collect()
            }
            Some(list) => {
                for name in &list {
                    if !engines::ROWS.iter().any(|r| r.name == name) {
                        return Err(Error::bad_param(
                            "environment.engines",
                            format!(
                                "unknown engine `{name}` (known: {})",
                                engines::ROWS
                                    .iter()
                                    .map(|r| r.name)
                                    .collect::<Vec<_>>()
                                    .join(", ")
                            ),
                        ));
                    }
                }
                list
            }
        };
        let origin = if stated.iter().all(|s| *s) {
            Origin::Given
        } else if stated.iter().any(|s| *s) {
            Origin::Mixed
        } else {
            Origin::Detected
        };
        Ok(Environment {
            sm,
            cudnn,
            cudnn_compiled: self.cudnn_compiled,
            cuda_driver: if self.sm.is_none() {
                device.as_ref().map(|(v, _)| *v)
            } else {
                None
            },
            sm_count: self.sm_count.or_else(|| {
                if self.sm.is_none() {
                    device
                        .as_ref()
                        .and_then(|(_, d)| u32::try_from(d.sm_count).ok())
                } else {
                    None
                }
            }),
            engines,
            policy: self.policy.unwrap_or_default(),
            origin,
        })
    }
}
