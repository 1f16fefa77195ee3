//! The environment identity that names a cache environment directory.
//!
//! Each cache has its own field set ([`FIELDS`] for compiled plans; the cuDNN heuristics cache
//! passes its own to [`EnvIdentity::with_fields`]); every set must include `library_version`
//! (pruning only removes environments whose manifest has one).
//! Compiled-plan fields: library version, digest of all kernel sources, NVRTC version, CUDA driver
//! version, and the build device's name, compute capability, SM count and L2 size. A field that
//! cannot be read is recorded (and hashed) as `"unknown"`, never skipped; an identity with an
//! unknown field is incomplete and the cache bypasses it (an environment that cannot identify
//! itself shares nothing). The directory name is the first 24 hex digits of blake3 over the
//! canonical JSON (sorted keys, compact) of the fields plus the schema.

use std::collections::BTreeMap;

use super::SCHEMA;

/// The value of a field that could not be read.
pub const UNKNOWN: &str = "unknown";

/// Every field, in canonical (sorted) order.
pub const FIELDS: [&str; 8] = [
    "compute_capability",
    "cuda_driver",
    "device_name",
    "kernel_sources",
    "l2_bytes",
    "library_version",
    "nvrtc",
    "sm_count",
];

/// The identity of one build environment (library, toolchain, driver, device).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct EnvIdentity {
    fields: BTreeMap<&'static str, String>,
}

impl EnvIdentity {
    /// From explicit values of the compiled-plan [`FIELDS`]; a `None` or empty value becomes
    /// `"unknown"`, a field not in [`FIELDS`] is ignored, a missing one is `"unknown"`.
    pub fn from_fields<'a>(values: impl IntoIterator<Item = (&'a str, Option<String>)>) -> Self {
        Self::with_fields(&FIELDS, values)
    }

    /// As [`EnvIdentity::from_fields`], over the field set `names`.
    pub fn with_fields<'a>(
        names: &'static [&'static str],
        values: impl IntoIterator<Item = (&'a str, Option<String>)>,
    ) -> Self {
        let mut fields: BTreeMap<&'static str, String> =
            names.iter().map(|f| (*f, UNKNOWN.to_owned())).collect();
        for (name, value) in values {
            if let Some(field) = names.iter().find(|f| **f == name)
                && let Some(v) = value.filter(|v| !v.is_empty())
            {
                fields.insert(field, v);
            }
        }
        EnvIdentity { fields }
    }

    /// The identity of this process building for device `ordinal` (each field probed; failures
    /// become `"unknown"`).
    pub fn for_device(ordinal: i32) -> Self {
        use crate::cuda::{kernels, probe};
        let driver = probe::driver().ok();
        let device = driver.and_then(|d| d.devices.iter().find(|x| x.ordinal == ordinal));
        Self::from_fields([
            ("library_version", Some(crate::version::VERSION.to_owned())),
            (
                "kernel_sources",
                Some(kernels::all_sources_digest().to_owned()),
            ),
            (
                "nvrtc",
                probe::nvrtc_version().ok().map(|(a, b)| format!("{a}.{b}")),
            ),
            ("cuda_driver", driver.map(|d| d.driver_version.to_string())),
            ("device_name", device.map(|d| d.name.clone())),
            (
                "compute_capability",
                device.map(|d| format!("{}.{}", d.compute_capability.0, d.compute_capability.1)),
            ),
            ("sm_count", device.map(|d| d.sm_count.to_string())),
            ("l2_bytes", device.map(|d| d.l2_bytes.to_string())),
        ])
    }

    /// One field's value (`"unknown"` when unreadable).
    pub fn get(&self, field: &str) -> Option<&str> {
        self.fields.get(field).map(String::as_str)
    }

    /// True when every field was read.
    pub fn is_complete(&self) -> bool {
        self.fields.values().all(|v| v != UNKNOWN)
    }

    /// The manifest record: schema plus every field, keys sorted.
    pub fn to_json(&self) -> serde_json::Value {
        let mut map = serde_json::Map::new();
        let mut all: Vec<(&str, &str)> =
            self.fields.iter().map(|(k, v)| (*k, v.as_str())).collect();
        all.push(("schema", SCHEMA));
        all.sort();
        for (k, v) in all {
            map.insert(k.to_owned(), serde_json::Value::String(v.to_owned()));
        }
        serde_json::Value::Object(map)
    }

    /// The environment directory name: 24 hex digits of blake3 over the canonical record.
    pub fn hash(&self) -> String {
        let canonical = serde_json::to_string(&self.to_json()).unwrap_or_default();
        blake3::hash(canonical.as_bytes()).to_hex()[..24].to_owned()
    }
}
