//! The on-disk layout, and reading and publishing one entry.
//!
//! ```text
//! <root>/v1/<env_hash>/manifest.json                    environment identity (EnvIdentity::to_json)
//! <root>/v1/<env_hash>/<entry_hash>/object-<b3>.<ext>   the stored object, named by its blake3
//!                                                       (ext: `cubin` for compiled plans, `json`
//!                                                       for cuDNN heuristics results)
//! <root>/v1/<env_hash>/<entry_hash>/entry.json          {schema, key, object, object_blake3, object_bytes}
//! ```
//!
//! Publishing writes the object first, then `entry.json` (the full key) last as the commit marker,
//! each to a unique temporary name in the same directory and renamed into place. The object's name
//! carries its digest, so two processes publishing the same entry never overwrite each other's
//! object: whichever `entry.json` lands last names an object that exists and matches. A crash
//! between the two writes leaves an object without a marker: a miss, never a torn hit.
//! Reading validates everything (schema, full key, object name, size, blake3): anything doubtful
//! is reported as [`Lookup::Invalid`], which the cache treats as a miss.

use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::{Value, json};

use super::SCHEMA;
use super::identity::EnvIdentity;
use super::key::CacheKey;

/// The commit marker's file name.
pub const ENTRY_FILE: &str = "entry.json";
/// The environment record's file name.
pub const MANIFEST_FILE: &str = "manifest.json";

/// `<root>/<schema>/<env_hash>`.
pub fn env_dir(root: &Path, identity: &EnvIdentity) -> PathBuf {
    root.join(SCHEMA).join(identity.hash())
}

/// `<root>/<schema>/<env_hash>/<entry_hash>`.
pub fn entry_dir(root: &Path, identity: &EnvIdentity, key: &CacheKey) -> PathBuf {
    env_dir(root, identity).join(key.hash())
}

/// What a lookup found.
#[derive(Debug)]
pub enum Lookup {
    /// A valid entry: the object's bytes.
    Hit(Vec<u8>),
    /// No committed entry.
    Absent,
    /// A committed entry that failed validation (why).
    Invalid(String),
}

/// Reads the entry for `key` under `dir` (an entry directory), validating it fully.
pub fn read_entry(dir: &Path, key: &CacheKey) -> Lookup {
    let text = match fs::read(dir.join(ENTRY_FILE)) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Lookup::Absent,
        Err(e) => return Lookup::Invalid(format!("entry.json unreadable: {e}")),
    };
    let record: Value = match serde_json::from_slice(&text) {
        Ok(Value::Object(m)) => Value::Object(m),
        Ok(_) => return Lookup::Invalid("entry.json is not an object".into()),
        Err(e) => return Lookup::Invalid(format!("entry.json does not parse: {e}")),
    };
    if record.get("schema").and_then(Value::as_str) != Some(SCHEMA) {
        return Lookup::Invalid("entry.json has another schema".into());
    }
    if record.get("key") != Some(&key.to_json()) {
        return Lookup::Invalid("entry.json holds another key".into());
    }
    let Some(object) = record.get("object").and_then(Value::as_str) else {
        return Lookup::Invalid("entry.json names no object".into());
    };
    if !is_object_name(object) {
        return Lookup::Invalid(format!("entry.json names an invalid object `{object}`"));
    }
    let (Some(digest), Some(size)) = (
        record.get("object_blake3").and_then(Value::as_str),
        record.get("object_bytes").and_then(Value::as_u64),
    ) else {
        return Lookup::Invalid("entry.json lacks the object's digest or size".into());
    };
    let bytes = match fs::read(dir.join(object)) {
        Ok(b) => b,
        Err(e) => return Lookup::Invalid(format!("object {object} unreadable: {e}")),
    };
    if bytes.len() as u64 != size || blake3::hash(&bytes).to_hex().as_str() != digest {
        return Lookup::Invalid(format!("object {object} does not match its record"));
    }
    Lookup::Hit(bytes)
}

/// `object-<16 hex>.<ext>` with a 1-8 character lowercase alphanumeric extension, nothing else
/// (no path separators, no dot files).
fn is_object_name(name: &str) -> bool {
    let Some((hex, ext)) = name.strip_prefix("object-").and_then(|r| r.split_once('.')) else {
        return false;
    };
    hex.len() == 16
        && hex.bytes().all(|b| b.is_ascii_hexdigit())
        && (1..=8).contains(&ext.len())
        && ext
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
}

/// Writes `bytes` to `dir/name` atomically: a unique temporary file in `dir`, synced, renamed.
pub fn write_atomic(dir: &Path, name: &str, bytes: &[u8]) -> std::io::Result<()> {
    static SEQ: AtomicU64 = AtomicU64::new(0);
    let thread: String = format!("{:?}", std::thread::current().id())
        .chars()
        .filter(char::is_ascii_digit)
        .collect();
    let tmp = dir.join(format!(
        ".{name}.{}.{thread}.{}.tmp",
        std::process::id(),
        SEQ.fetch_add(1, Ordering::Relaxed)
    ));
    let result = (|| {
        let mut f = fs::File::create(&tmp)?;
        f.write_all(bytes)?;
        f.sync_all()?;
        fs::rename(&tmp, dir.join(name))
    })();
    if result.is_err() {
        let _ = fs::remove_file(&tmp);
    }
    result
}

/// Removes the entry for `key` (its `entry.json` first, so readers see a miss at once, then the
/// directory). An absent entry is not an error.
pub fn remove_entry(root: &Path, identity: &EnvIdentity, key: &CacheKey) -> std::io::Result<()> {
    let dir = entry_dir(root, identity, key);
    match fs::remove_file(dir.join(ENTRY_FILE)) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(e),
    }
    match fs::remove_dir_all(&dir) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => Err(e),
        _ => Ok(()),
    }
}

/// Publishes `bytes` for `key` as `object-<digest>.<ext>`: environment record if absent, object,
/// then `entry.json` last. Returns the entry directory.
pub fn publish(
    root: &Path,
    identity: &EnvIdentity,
    key: &CacheKey,
    bytes: &[u8],
    ext: &str,
) -> std::io::Result<PathBuf> {
    let env = env_dir(root, identity);
    let dir = env.join(key.hash());
    fs::create_dir_all(&dir)?;
    if !env.join(MANIFEST_FILE).is_file() {
        let record =
            serde_json::to_vec_pretty(&identity.to_json()).map_err(std::io::Error::other)?;
        write_atomic(&env, MANIFEST_FILE, &record)?;
    }
    let digest = blake3::hash(bytes).to_hex().to_string();
    let object = format!("object-{}.{ext}", &digest[..16]);
    write_atomic(&dir, &object, bytes)?;
    let record = json!({
        "schema": SCHEMA,
        "key": key.to_json(),
        "object": object,
        "object_blake3": digest,
        "object_bytes": bytes.len(),
    });
    let text = serde_json::to_vec_pretty(&record).map_err(std::io::Error::other)?;
    write_atomic(&dir, ENTRY_FILE, &text)?;
    Ok(dir)
}
