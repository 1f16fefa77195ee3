//! cuDNN version numbers as `(major, minor, patch)` tuples.
//!
//! `cudnnGetVersion()` packs 8.x releases as `M*1000 + m*100 + p` (8.9.6 -> `8906`) and 9.x
//! releases as `M*10000 + m*100 + p` (9.10.2 -> `91002`). Comparing the raw integers only works
//! because every 9.x value exceeds every 8.x value; every rule here compares decoded tuples.
//! [`CudnnVer::from_raw`] decodes both encodings (any raw value below 10000 is the 8.x form),
//! [`CudnnVer::to_raw`] re-encodes, and [`CudnnVer::parse`] reads `"9.10.2"`, `"9.10"` or a raw
//! integer written as text.

use std::fmt;

/// A cuDNN version (the runtime library's, or the headers' when compiled against them).
#[derive(Copy, Clone, Eq, PartialEq, Ord, PartialOrd, Hash, Debug)]
pub struct CudnnVer {
    /// Major version (8, 9, ...).
    pub major: u8,
    /// Minor version (0..=99).
    pub minor: u8,
    /// Patch level (0..=99).
    pub patch: u8,
}

impl CudnnVer {
    /// A version from its parts.
    pub const fn new(major: u8, minor: u8, patch: u8) -> Self {
        CudnnVer {
            major,
            minor,
            patch,
        }
    }

    /// Decodes a `cudnnGetVersion()` value: below 10000 it is the 8.x encoding
    /// `M*1000 + m*100 + p`, otherwise the 9.x encoding `M*10000 + m*100 + p`.
    /// Returns `None` when a part does not fit (major above 255).
    pub fn from_raw(raw: u64) -> Option<Self> {
        let (major, minor, patch) = if raw < 10_000 {
            (raw / 1000, (raw % 1000) / 100, raw % 100)
        } else {
            (raw / 10_000, (raw / 100) % 100, raw % 100)
        };
        Some(CudnnVer::new(
            u8::try_from(major).ok()?,
            minor as u8,
            patch as u8,
        ))
    }

    /// The `cudnnGetVersion()` encoding of this version (8.x form for major < 9).
    pub fn to_raw(self) -> u64 {
        let (major, minor, patch) = (
            u64::from(self.major),
            u64::from(self.minor),
            u64::from(self.patch),
        );
        if self.major < 9 {
            major * 1000 + minor * 100 + patch
        } else {
            major * 10_000 + minor * 100 + patch
        }
    }

    /// Parses `"M.m.p"`, `"M.m"` (patch 0) or a raw `cudnnGetVersion()` integer (`"91002"`).
    /// Minor and patch must be at most 99 (8.x: minor at most 9, the encoding's limit).
    pub fn parse(text: &str) -> Option<Self> {
        let t = text.trim();
        if !t.contains('.') {
            return t.parse::<u64>().ok().and_then(CudnnVer::from_raw);
        }
        let parts: Vec<&str> = t.split('.').collect();
        if parts.len() < 2 || parts.len() > 3 {
            return None;
        }
        let num = |s: &str| -> Option<u8> {
            if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
                return None;
            }
            s.parse::<u8>().ok()
        };
        let major = num(parts[0])?;
        let minor = num(parts[1])?;
        let patch = if parts.len() == 3 { num(parts[2])? } else { 0 };
        let minor_limit = if major < 9 { 9 } else { 99 };
        if minor > minor_limit || patch > 99 {
            return None;
        }
        Some(CudnnVer::new(major, minor, patch))
    }

    /// The next patch release (`9.15.0` -> `9.15.1`); used for "strictly greater" thresholds.
    pub fn next_patch(self) -> Self {
        CudnnVer::new(self.major, self.minor, self.patch.saturating_add(1))
    }
}

impl fmt::Display for CudnnVer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}.{}.{}", self.major, self.minor, self.patch)
    }
}

impl serde::Serialize for CudnnVer {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for CudnnVer {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = CudnnVer;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a cuDNN version such as \"9.10.2\" or a cudnnGetVersion() integer")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<CudnnVer, E> {
                CudnnVer::parse(v).ok_or_else(|| E::custom(format!("`{v}` is not a cuDNN version")))
            }
            fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<CudnnVer, E> {
                CudnnVer::from_raw(v)
                    .ok_or_else(|| E::custom(format!("{v} is not a cuDNN version")))
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<CudnnVer, E> {
                u64::try_from(v)
                    .ok()
                    .and_then(CudnnVer::from_raw)
                    .ok_or_else(|| E::custom(format!("{v} is not a cuDNN version")))
            }
        }
        d.deserialize_any(V)
    }
}
