//! Library and ABI versions, derived from Cargo.toml at build time (never typed by hand).

use std::ffi::CStr;

/// The crate version, e.g. `"0.1.0"`.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");
/// The ABI version (SONAME suffix).
pub const ABI_VERSION: &str = env!("DNNPLAN_ABI_VERSION");

pub(crate) const VERSION_CSTR: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("CARGO_PKG_VERSION"), "\0").as_bytes()) {
        Ok(s) => s,
        Err(_) => panic!("version contains NUL"),
    };
pub(crate) const ABI_CSTR: &CStr =
    match CStr::from_bytes_with_nul(concat!(env!("DNNPLAN_ABI_VERSION"), "\0").as_bytes()) {
        Ok(s) => s,
        Err(_) => panic!("ABI version contains NUL"),
    };

/// Packed version: major*10000 + minor*100 + patch.
pub fn packed() -> usize {
    let part = |s: &str| s.parse::<usize>().unwrap_or(0);
    part(env!("CARGO_PKG_VERSION_MAJOR")) * 10000
        + part(env!("CARGO_PKG_VERSION_MINOR")) * 100
        + part(env!("CARGO_PKG_VERSION_PATCH"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packed_version_matches_string() {
        let parts: Vec<usize> = VERSION.split('.').map(|p| p.parse().unwrap()).collect();
        assert_eq!(packed(), parts[0] * 10000 + parts[1] * 100 + parts[2]);
    }
}
