//! The key of one cache entry: everything the compiled object depends on besides the environment.
//!
//! A key is a flat JSON object of strings with sorted keys (canonical form); entries are looked up
//! by the first 24 hex digits of blake3 over that canonical text and confirmed by comparing the
//! full key stored in the entry's `entry.json`.

use std::collections::BTreeMap;

/// The key of one compiled object (kernel, target, options, source digest...).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheKey {
    fields: BTreeMap<String, String>,
}

impl CacheKey {
    /// From `(name, value)` pairs (a repeated name keeps the last value).
    pub fn new<K: Into<String>, V: Into<String>>(fields: impl IntoIterator<Item = (K, V)>) -> Self {
        CacheKey {
            fields: fields
                .into_iter()
                .map(|(k, v)| (k.into(), v.into()))
                .collect(),
        }
    }

    /// The key as a JSON object with sorted keys.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::Value::Object(
            self.fields
                .iter()
                .map(|(k, v)| (k.clone(), serde_json::Value::String(v.clone())))
                .collect(),
        )
    }

    /// The entry directory name: 24 hex digits of blake3 over the canonical JSON.
    pub fn hash(&self) -> String {
        let canonical = serde_json::to_string(&self.to_json()).unwrap_or_default();
        blake3::hash(canonical.as_bytes()).to_hex()[..24].to_owned()
    }
}
