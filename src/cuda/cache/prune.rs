//! Pruning: whole dead environment directories, oldest first, down to the cap.
//!
//! Candidates are non-symlink schema directories (`v<digits>`) directly under the root, and in them
//! non-symlink environment directories (24 lowercase hex digits) whose `manifest.json` parses with
//! `schema` equal to the schema directory's name and a non-empty `library_version` (so nothing that
//! dnnplan did not write is ever removed). Size is the sum of regular files; age is the newest file
//! modification time. Environments of other schemas go first, then the oldest; whole directories
//! are removed until the total is at most the cap. The current environment is never removed.
//! Failures are skipped: pruning never fails a compile.

use std::fs;
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use super::SCHEMA;
use super::store::MANIFEST_FILE;

/// One prunable environment directory.
#[derive(Debug)]
pub struct Candidate {
    /// The directory.
    pub path: PathBuf,
    /// Its schema directory's name.
    pub schema: String,
    /// Bytes of regular files under it.
    pub bytes: u64,
    /// Newest modification time under it.
    pub newest: SystemTime,
}

fn is_schema_name(name: &str) -> bool {
    name.len() > 1 && name.starts_with('v') && name[1..].bytes().all(|b| b.is_ascii_digit())
}

fn is_env_name(name: &str) -> bool {
    name.len() == 24 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn real_dirs(dir: &Path) -> Vec<(String, PathBuf)> {
    let Ok(entries) = fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir() && !t.is_symlink()))
        .filter_map(|e| Some((e.file_name().into_string().ok()?, e.path())))
        .collect()
}

/// Size and newest mtime of the regular files under `dir` (symlinks not followed).
fn measure(dir: &Path) -> (u64, SystemTime) {
    let mut bytes = 0;
    let mut newest = SystemTime::UNIX_EPOCH;
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(meta) = fs::symlink_metadata(e.path()) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(e.path());
            } else if meta.is_file() {
                bytes += meta.len();
                if let Ok(m) = meta.modified() {
                    newest = newest.max(m);
                }
            }
        }
    }
    (bytes, newest)
}

fn is_ours(env: &Path, schema: &str) -> bool {
    let Ok(text) = fs::read(env.join(MANIFEST_FILE)) else {
        return false;
    };
    let Ok(record) = serde_json::from_slice::<serde_json::Value>(&text) else {
        return false;
    };
    record.get("schema").and_then(|v| v.as_str()) == Some(schema)
        && record
            .get("library_version")
            .and_then(|v| v.as_str())
            .is_some_and(|v| !v.is_empty())
}

/// Every prunable environment under `root`.
pub fn candidates(root: &Path) -> Vec<Candidate> {
    let mut out = Vec::new();
    for (schema, schema_dir) in real_dirs(root) {
        if !is_schema_name(&schema) {
            continue;
        }
        for (name, env) in real_dirs(&schema_dir) {
            if is_env_name(&name) && is_ours(&env, &schema) {
                let (bytes, newest) = measure(&env);
                out.push(Candidate {
                    path: env,
                    schema: schema.clone(),
                    bytes,
                    newest,
                });
            }
        }
    }
    out
}

/// Removes whole environments (other schemas first, then oldest) until the total size is at most
/// `max_bytes`, never `keep`. Returns the directories removed, in order.
pub fn prune(root: &Path, max_bytes: u64, keep: &Path) -> Vec<PathBuf> {
    if max_bytes == 0 {
        return Vec::new();
    }
    let mut all = candidates(root);
    let mut total: u64 = all.iter().map(|c| c.bytes).sum();
    all.sort_by(|a, b| {
        (a.schema == SCHEMA)
            .cmp(&(b.schema == SCHEMA))
            .then(a.newest.cmp(&b.newest))
            .then(a.path.cmp(&b.path))
    });
    let mut removed = Vec::new();
    for c in all {
        if total <= max_bytes {
            break;
        }
        if c.path == keep {
            continue;
        }
        if fs::remove_dir_all(&c.path).is_ok() {
            total = total.saturating_sub(c.bytes);
            removed.push(c.path);
        }
    }
    removed
}
