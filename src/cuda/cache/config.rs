//! Where a persistent cache lives and its switches, read from the environment. Each cache is
//! described by a [`CacheSpec`] (its variables, directory name, object extension):
//!
//! Compiled plans ([`COMPILED_PLANS`]):
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `DNNPLAN_COMPILED_CACHE` | root directory | `$XDG_CACHE_HOME/dnnplan/compiled_plans`, else `~/.cache/dnnplan/compiled_plans` |
//! | `DNNPLAN_DISABLE_COMPILED_CACHE` | `1`/`true`/`yes`/`on` (any case) disables persistence | off |
//! | `DNNPLAN_COMPILED_CACHE_MAX_BYTES` | prune cap in bytes; `0` or negative never prunes; unparsable = default | 4 GiB |
//!
//! cuDNN heuristics results ([`CUDNN_HEURISTICS`], the disk tier of
//! `crate::cudnn::heur_cache`; `DNNPLAN_CUDNN_HEUR_CACHE=0` bypasses both of its tiers):
//!
//! | variable | meaning | default |
//! |---|---|---|
//! | `DNNPLAN_CUDNN_HEUR_DISK_CACHE` | root directory; `0`/`off`/`false`/`none` (any case) disables the disk tier | `$XDG_CACHE_HOME/dnnplan/cudnn_heuristics`, else `~/.cache/dnnplan/cudnn_heuristics` |
//! | `DNNPLAN_CUDNN_HEUR_DISK_CACHE_MAX_BYTES` | prune cap in bytes (as above) | 64 MiB |
//!
//! With no usable home directory the root is `<temp>/dnnplan_<dir name>-<uid>`, which is also
//! the fallback when the chosen root cannot be created.

use std::path::{Path, PathBuf};

/// Default prune cap of the compiled-plan cache: 4 GiB.
pub const DEFAULT_MAX_BYTES: u64 = 4 * 1024 * 1024 * 1024;

/// The variables, names and defaults of one persistent cache.
#[derive(Debug, PartialEq, Eq)]
pub struct CacheSpec {
    /// The variable naming the root directory.
    pub root_var: &'static str,
    /// A variable whose `1`/`true`/`yes`/`on` disables the cache, if the cache has one.
    pub disable_var: Option<&'static str>,
    /// Whether `0`/`off`/`false`/`none` in [`CacheSpec::root_var`] disables the cache (instead
    /// of naming a directory).
    pub root_var_can_disable: bool,
    /// The variable holding the prune cap in bytes.
    pub max_bytes_var: &'static str,
    /// The prune cap when the variable is unset or unparsable.
    pub default_max_bytes: u64,
    /// The directory under `<cache home>/dnnplan/` (and in the temp-dir fallback's name).
    pub dir_name: &'static str,
    /// The extension of the stored objects (`object-<digest>.<ext>`).
    pub object_ext: &'static str,
}

/// The compiled-plan cache (NVRTC output).
pub const COMPILED_PLANS: CacheSpec = CacheSpec {
    root_var: "DNNPLAN_COMPILED_CACHE",
    disable_var: Some("DNNPLAN_DISABLE_COMPILED_CACHE"),
    root_var_can_disable: false,
    max_bytes_var: "DNNPLAN_COMPILED_CACHE_MAX_BYTES",
    default_max_bytes: DEFAULT_MAX_BYTES,
    dir_name: "compiled_plans",
    object_ext: "cubin",
};

/// The disk tier of the cuDNN heuristics cache (engine configs per lowered graph and mode).
pub const CUDNN_HEURISTICS: CacheSpec = CacheSpec {
    root_var: "DNNPLAN_CUDNN_HEUR_DISK_CACHE",
    disable_var: None,
    root_var_can_disable: true,
    max_bytes_var: "DNNPLAN_CUDNN_HEUR_DISK_CACHE_MAX_BYTES",
    default_max_bytes: 64 * 1024 * 1024,
    dir_name: "cudnn_heuristics",
    object_ext: "json",
};

/// A cache's configuration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CacheConfig {
    /// Root directory (holds `v1/<env>/...`).
    pub root: PathBuf,
    /// False when the environment disables the cache: every request bypasses the disk.
    pub enabled: bool,
    /// Prune cap in bytes; 0 never prunes.
    pub max_bytes: u64,
    /// Which cache this is (its variables, directory name and object extension).
    pub spec: &'static CacheSpec,
}

fn is_word(v: &str, words: &[&str]) -> bool {
    words.contains(&v.trim().to_ascii_lowercase().as_str())
}

impl CacheConfig {
    /// The compiled-plan cache's configuration from the process environment.
    pub fn from_env() -> Self {
        Self::from_vars(|name| std::env::var(name).ok())
    }

    /// The compiled-plan cache's configuration from any variable lookup (tests pass a map).
    pub fn from_vars(var: impl Fn(&str) -> Option<String>) -> Self {
        Self::for_spec(&COMPILED_PLANS, var)
    }

    /// The configuration of the cache `spec` from any variable lookup.
    pub fn for_spec(spec: &'static CacheSpec, var: impl Fn(&str) -> Option<String>) -> Self {
        let nonempty = |name: &str| var(name).filter(|v| !v.trim().is_empty());
        let named = nonempty(spec.root_var);
        let root_off = spec.root_var_can_disable
            && named
                .as_deref()
                .is_some_and(|v| is_word(v, &["0", "off", "false", "none"]));
        let root = named
            .filter(|_| !root_off)
            .map(PathBuf::from)
            .or_else(|| {
                nonempty("XDG_CACHE_HOME")
                    .map(PathBuf::from)
                    .filter(|p| p.is_absolute())
                    .map(|p| p.join("dnnplan").join(spec.dir_name))
            })
            .or_else(|| {
                nonempty("HOME").map(|h| Path::new(&h).join(".cache/dnnplan").join(spec.dir_name))
            })
            .unwrap_or_else(|| fallback_root_for(spec));
        let disabled_by_var = spec
            .disable_var
            .and_then(nonempty)
            .is_some_and(|v| crate::settings::is_on(&v));
        let max_bytes = match nonempty(spec.max_bytes_var).map(|v| v.trim().parse::<i128>()) {
            None | Some(Err(_)) => spec.default_max_bytes,
            Some(Ok(n)) if n <= 0 => 0,
            Some(Ok(n)) => u64::try_from(n).unwrap_or(u64::MAX),
        };
        CacheConfig {
            root,
            enabled: !root_off && !disabled_by_var,
            max_bytes,
            spec,
        }
    }
}

/// `<temp>/dnnplan_compiled_plans-<uid>`: the compiled-plan cache's root when no other is usable.
pub fn fallback_root() -> PathBuf {
    fallback_root_for(&COMPILED_PLANS)
}

/// `<temp>/dnnplan_<dir name>-<uid>`: the root of cache `spec` when no other is usable.
pub fn fallback_root_for(spec: &CacheSpec) -> PathBuf {
    use std::os::unix::fs::MetadataExt;
    let uid = std::fs::metadata("/proc/self")
        .map(|m| m.uid().to_string())
        .unwrap_or_else(|_| "unknown".into());
    std::env::temp_dir().join(format!("dnnplan_{}-{uid}", spec.dir_name))
}
