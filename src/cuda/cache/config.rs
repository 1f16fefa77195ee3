//! Where the compiled-plan cache lives and its switches, read from the environment.
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `DNNPLAN_COMPILED_CACHE` | root directory | `$XDG_CACHE_HOME/dnnplan/compiled_plans`, else `~/.cache/dnnplan/compiled_plans` |
//! | `DNNPLAN_DISABLE_COMPILED_CACHE` | `1`/`true`/`yes`/`on` (any case) disables persistence | off |
//! | `DNNPLAN_COMPILED_CACHE_MAX_BYTES` | prune cap in bytes; `0` or negative never prunes; unparsable = default | 4 GiB |
//!
//! With no usable home directory the root is `<temp>/dnnplan_compiled_plans-<uid>`, which is also
//! the fallback when the chosen root cannot be created.

use std::path::{Path, PathBuf};

/// Default prune cap: 4 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// The cache's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    /// Root directory (holds `v1/<env>/...`).
    pub root: PathBuf,
    /// False when `DNNPLAN_DISABLE_COMPILED_CACHE` is set: every compile bypasses the cache.
    pub enabled: bool,
    /// Prune cap in bytes; 0 never prunes.
    pub max_bytes: u64,
}

impl CacheConfig {
    /// From the process environment.
    pub fn from_env() -> Self {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// From any variable lookup (tests pass a map).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Self {
        let nonempty = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let root = nonempty("DNNPLAN_COMPILED_CACHE")
            .map(PathBuf::from)
            .or_else(|| {
                nonempty("XDG_CACHE_HOME")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .map(|p| p.join("dnnplan").join("compiled_plans"))
            })
            .or_else(|| {
                nonempty("HOME").map(|h| Path::new(&h).join(".cache/dnnplan/compiled_plans"))
            })
            .unwrap_or_else(fallback_root);
        let enabled = !nonempty("DNNPLAN_DISABLE_COMPILED_CACHE").is_some_and(|v| {
            matches!(
                v.trim().to_ascii_lowercase().as_str(),
                "1" | "true" | "yes" | "on"
            )
        });
        let max_bytes =
            match nonempty("DNNPLAN_COMPILED_CACHE_MAX_BYTES").map(|v| v.trim().parse::<i128>()) {
                None | Some(Err(_)) => DEFAULT_MAX_BYTES,
                Some(Ok(n)) if n <= 0 => 0,
                Some(Ok(n)) => u64::try_from(n).unwrap_or(u64::MAX),
            };
        CacheConfig {
            root,
            enabled,
            max_bytes,
        }
    }
}

/// `<temp>/dnnplan_compiled_plans-<uid>`: the root when no other is usable.
pub fn fallback_root() -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata("/proc/self")
        .map(|m| m.uid().to_string())
        .unwrap_or_else(|_| "unknown".into());
    std::env::temp_dir().join(format!("dnnplan_compiled_plans-{uid}"))
}
