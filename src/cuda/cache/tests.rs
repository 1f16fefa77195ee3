//! CPU tests of the compiled-plan cache with fake artifacts (no GPU, no NVRTC).

use std::cell::Cell;
use std::fs;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Barrier};
use std::time::{Duration, SystemTime};

use super::store::{self, ENTRY_FILE, MANIFEST_FILE};
use super::*;
use crate::error::Error;

/// A fresh directory under the system temp dir, removed on drop.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> Self {
        use std::sync::atomic::{AtomicU32, Ordering};
        static N: AtomicU32 = AtomicU32::new(0);
        let p = std::env::temp_dir().join(format!(
            "dnnplan-cache-test-{}-{tag}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        let _ = fs::remove_dir_all(&p);
        fs::create_dir_all(&p).expect("temp dir");
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn identity(version: &str) -> EnvIdentity {
    EnvIdentity::from_fields([
        ("library_version", Some(version.to_owned())),
        ("kernel_sources", Some("sources-digest".to_owned())),
        ("nvrtc", Some("13.0".to_owned())),
        ("cuda_driver", Some("13000".to_owned())),
        ("device_name", Some("Fake GPU".to_owned())),
        ("compute_capability", Some("9.0".to_owned())),
        ("sm_count", Some("132".to_owned())),
        ("l2_bytes", Some("62914560".to_owned())),
    ])
}

fn key(name: &str) -> CacheKey {
    CacheKey::new([("kernel", name), ("options", "--gpu-architecture=sm_90a")])
}

fn cache_at(root: &Path) -> CompiledCache {
    CompiledCache::new(CacheConfig {
        root: root.to_path_buf(),
        enabled: true,
        max_bytes: config::DEFAULT_MAX_BYTES,
        spec: &config::COMPILED_PLANS,
    })
}

/// A fake artifact: an ELF-looking blob derived from `seed`.
fn artifact(seed: &str, len: usize) -> Vec<u8> {
    let mut v = b"\x7fELF".to_vec();
    v.extend(seed.bytes().cycle().take(len));
    v
}

/// Runs `get_or_compile` with a compile closure that records whether it ran.
fn fetch(
    cache: &CompiledCache,
    id: &EnvIdentity,
    k: &CacheKey,
    bytes: &[u8],
) -> (Vec<u8>, Outcome, bool) {
    let ran = Cell::new(false);
    let (got, outcome) = cache
        .get_or_compile(id, k, || {
            ran.set(true);
            Ok(bytes.to_vec())
        })
        .expect("get_or_compile");
    (got.to_vec(), outcome, ran.get())
}

#[test]
fn a_miss_publishes_and_a_second_process_hits_without_compiling() {
    let tmp = TempDir::new("roundtrip");
    let (id, k, obj) = (identity("rt"), key("axpy"), artifact("rt", 1000));
    let first = cache_at(&tmp.0);
    assert_eq!(
        fetch(&first, &id, &k, &obj),
        (obj.clone(), Outcome::Miss, true)
    );
    assert_eq!(fetch(&first, &id, &k, &obj).1, Outcome::Memo);
    let s = first.stats();
    assert_eq!((s.misses, s.hits, s.memo_hits, s.invalid), (1, 0, 1, 0));

    let env = store::env_dir(&tmp.0, &id);
    let manifest: serde_json::Value =
        serde_json::from_slice(&fs::read(env.join(MANIFEST_FILE)).expect("manifest"))
            .expect("json");
    assert_eq!(manifest["library_version"], "rt");
    assert_eq!(manifest["schema"], SCHEMA);

    let second = cache_at(&tmp.0); // a fresh process: empty memo
    assert_eq!(
        fetch(&second, &id, &k, b"never"),
        (obj.clone(), Outcome::Hit, false)
    );
    assert_eq!(second.stats().hits, 1);
    second.clear_memo();
    assert_eq!(fetch(&second, &id, &k, b"never").1, Outcome::Hit);
}

#[test]
fn a_crash_between_object_and_entry_is_a_miss_never_a_hit() {
    let tmp = TempDir::new("crash");
    let (id, k, obj) = (identity("crash"), key("axpy"), artifact("crash", 500));
    // What a crash leaves: the object (and a stray temp marker) but no committed entry.json.
    let dir = store::entry_dir(&tmp.0, &id, &k);
    fs::create_dir_all(&dir).expect("mkdir");
    store::write_atomic(&dir, "object-0123456789abcdef.cubin", &obj).expect("object");
    fs::write(dir.join(".entry.json.1.1.0.tmp"), b"{\"schema\":").expect("torn temp");
    let cache = cache_at(&tmp.0);
    assert_eq!(cache.lookup(&id, &k), None);
    assert_eq!(
        cache.stats().invalid,
        0,
        "an uncommitted entry is simply absent"
    );
    assert_eq!(
        fetch(&cache, &id, &k, &obj),
        (obj.clone(), Outcome::Miss, true)
    );
    assert_eq!(fetch(&cache_at(&tmp.0), &id, &k, b"x").1, Outcome::Hit);
}

#[test]
fn a_corrupted_entry_or_object_is_invalid_and_recompiled() {
    let tmp = TempDir::new("corrupt");
    let (id, k, obj) = (identity("corrupt"), key("axpy"), artifact("corrupt", 300));
    fetch(&cache_at(&tmp.0), &id, &k, &obj);
    let dir = store::entry_dir(&tmp.0, &id, &k);

    for garbage in [&b"{not json"[..], b"[1,2,3]", b"{\"schema\":\"v0\"}"] {
        fs::write(dir.join(ENTRY_FILE), garbage).expect("corrupt entry");
        let cache = cache_at(&tmp.0);
        assert_eq!(
            fetch(&cache, &id, &k, &obj),
            (obj.clone(), Outcome::Miss, true)
        );
        let s = cache.stats();
        assert_eq!((s.invalid, s.misses, s.hits), (1, 1, 0));
    }
    // The republished entry is good again.
    assert_eq!(fetch(&cache_at(&tmp.0), &id, &k, b"x").1, Outcome::Hit);

    // A flipped byte in the object.
    let object = fs::read_dir(&dir)
        .expect("entry dir")
        .flatten()
        .map(|e| e.path())
        .find(|p| p.extension().is_some_and(|x| x == "cubin"))
        .expect("object file");
    let mut bytes = fs::read(&object).expect("object");
    bytes[10] ^= 0xff;
    fs::write(&object, &bytes).expect("flip");
    let cache = cache_at(&tmp.0);
    assert_eq!(
        fetch(&cache, &id, &k, &obj),
        (obj.clone(), Outcome::Miss, true)
    );
    assert_eq!(cache.stats().invalid, 1);

    // A missing object.
    fs::remove_file(&object).ok();
    for e in fs::read_dir(&dir).expect("dir").flatten() {
        if e.path().extension().is_some_and(|x| x == "cubin") {
            fs::remove_file(e.path()).ok();
        }
    }
    let cache = cache_at(&tmp.0);
    assert_eq!(fetch(&cache, &id, &k, &obj).1, Outcome::Miss);
    assert_eq!(cache.stats().invalid, 1);
}

#[test]
fn an_entry_holding_another_key_is_invalid() {
    let tmp = TempDir::new("mismatch");
    let id = identity("mismatch");
    let (a, b) = (key("kernel_a"), key("kernel_b"));
    let cache = cache_at(&tmp.0);
    fetch(&cache, &id, &a, &artifact("a", 100));
    // Put a's committed entry where b's belongs (e.g. a hash collision or a copied directory).
    let (dir_a, dir_b) = (
        store::entry_dir(&tmp.0, &id, &a),
        store::entry_dir(&tmp.0, &id, &b),
    );
    fs::create_dir_all(&dir_b).expect("mkdir");
    for e in fs::read_dir(&dir_a).expect("dir a").flatten() {
        fs::copy(e.path(), dir_b.join(e.file_name())).expect("copy");
    }
    let cache = cache_at(&tmp.0);
    let obj_b = artifact("b", 100);
    assert_eq!(
        fetch(&cache, &id, &b, &obj_b),
        (obj_b.clone(), Outcome::Miss, true)
    );
    assert_eq!(cache.stats().invalid, 1);
    // And a key that differs only in one field is another entry.
    let other = CacheKey::new([
        ("kernel", "kernel_a"),
        ("options", "--gpu-architecture=sm_100a"),
    ]);
    assert_ne!(other.hash(), a.hash());
    assert_eq!(cache_at(&tmp.0).lookup(&id, &other), None);
}

#[test]
fn concurrent_writers_never_leave_a_torn_entry() {
    let tmp = TempDir::new("concurrent");
    let id = identity("concurrent");
    let k = key("axpy");
    let writers = 8;
    let barrier = Arc::new(Barrier::new(writers));
    let root = tmp.0.clone();
    let handles: Vec<_> = (0..writers)
        .map(|i| {
            let (barrier, root, id, k) = (barrier.clone(), root.clone(), id.clone(), k.clone());
            std::thread::spawn(move || {
                // One cache per writer: separate processes share nothing but the directory.
                let cache = cache_at(&root);
                // Different bytes per writer: the worst case (a non-deterministic compiler).
                let obj = artifact(&format!("writer{i}"), 20_000 + i);
                barrier.wait();
                let (got, _) = cache
                    .get_or_compile(&id, &k, || Ok(obj.clone()))
                    .expect("ok");
                (obj, got.to_vec())
            })
        })
        .collect();
    let results: Vec<(Vec<u8>, Vec<u8>)> = handles
        .into_iter()
        .map(|h| h.join().expect("join"))
        .collect();
    let written: Vec<&Vec<u8>> = results.iter().map(|(o, _)| o).collect();
    for (_, got) in &results {
        assert!(
            written.contains(&got),
            "every writer gets a complete object"
        );
    }
    let reader = cache_at(&tmp.0);
    let (got, outcome, ran) = fetch(&reader, &id, &k, b"never");
    assert_eq!((outcome, ran), (Outcome::Hit, false));
    assert!(written.contains(&&got));
    assert_eq!(reader.stats().invalid, 0);
    // No temporary file survives.
    let dir = store::entry_dir(&tmp.0, &id, &k);
    assert!(
        fs::read_dir(&dir)
            .expect("dir")
            .flatten()
            .all(|e| !e.file_name().to_string_lossy().ends_with(".tmp"))
    );
}

/// A fake environment of `bytes` bytes whose files are `age` old.
fn fake_env(root: &Path, schema: &str, version: &str, bytes: usize, age: Duration) -> PathBuf {
    let id = identity(version);
    let env = root.join(schema).join(id.hash());
    let entry = env.join("0123456789abcdef01234567");
    fs::create_dir_all(&entry).expect("mkdir");
    let mut manifest = id.to_json();
    manifest["schema"] = serde_json::Value::String(schema.to_owned());
    fs::write(
        env.join(MANIFEST_FILE),
        serde_json::to_vec(&manifest).expect("json"),
    )
    .expect("manifest");
    fs::write(
        entry.join("object-0000000000000000.cubin"),
        vec![0u8; bytes],
    )
    .expect("object");
    let when = SystemTime::now() - age;
    for f in [
        env.join(MANIFEST_FILE),
        entry.join("object-0000000000000000.cubin"),
    ] {
        fs::File::options()
            .write(true)
            .open(&f)
            .and_then(|h| h.set_modified(when))
            .expect("mtime");
    }
    env
}

#[test]
fn prune_removes_other_schemas_then_oldest_whole_environments_down_to_the_cap() {
    let tmp = TempDir::new("prune");
    let root = &tmp.0;
    let hour = Duration::from_secs(3600);
    let old_schema = fake_env(root, "v0", "old-schema", 10_000, hour); // newest of all, other schema
    let oldest = fake_env(root, SCHEMA, "oldest", 10_000, 50 * hour);
    let middle = fake_env(root, SCHEMA, "middle", 10_000, 20 * hour);
    let newest = fake_env(root, SCHEMA, "newest", 10_000, 2 * hour);
    // Not ours: wrong name, no manifest, a symlink: never touched.
    let stranger = root.join(SCHEMA).join("not-an-env");
    fs::create_dir_all(&stranger).expect("mkdir");
    fs::write(stranger.join("big"), vec![0u8; 50_000]).expect("big");
    let unmarked = root.join(SCHEMA).join("abcdefabcdefabcdefabcdef");
    fs::create_dir_all(&unmarked).expect("mkdir");
    std::os::unix::fs::symlink(&oldest, root.join(SCHEMA).join("fedcbafedcbafedcbafedcba"))
        .expect("symlink");

    // The current environment writes ~1 KB; cap 25 KB: total 41 KB must lose 2 environments.
    let cache = CompiledCache::new(CacheConfig {
        root: root.clone(),
        enabled: true,
        max_bytes: 25_000,
        spec: &config::COMPILED_PLANS,
    });
    let id = identity("current");
    fetch(&cache, &id, &key("axpy"), &artifact("cur", 1000));
    assert_eq!(cache.stats().pruned, 2);
    assert!(!old_schema.exists(), "other schemas go first");
    assert!(!oldest.exists(), "then the oldest");
    assert!(middle.exists() && newest.exists());
    assert!(
        store::env_dir(root, &id).exists(),
        "never the current environment"
    );
    assert!(stranger.exists() && unmarked.exists());
    assert!(fs::symlink_metadata(root.join(SCHEMA).join("fedcbafedcbafedcbafedcba")).is_ok());

    // Pruning happens once per cache (after its first write), not on every write.
    fetch(&cache, &id, &key("other"), &artifact("x", 30_000));
    assert_eq!(cache.stats().pruned, 2);

    // A tiny cap in a new process removes everything but the current environment.
    let cache = CompiledCache::new(CacheConfig {
        root: root.clone(),
        enabled: true,
        max_bytes: 1,
        spec: &config::COMPILED_PLANS,
    });
    fetch(&cache, &id, &key("third"), &artifact("y", 10));
    assert_eq!(cache.stats().pruned, 2);
    assert!(!middle.exists() && !newest.exists());
    assert!(store::env_dir(root, &id).exists());
}

#[test]
fn a_zero_cap_never_prunes() {
    let tmp = TempDir::new("nocap");
    let env = fake_env(
        &tmp.0,
        SCHEMA,
        "ancient",
        100_000,
        Duration::from_secs(10_000_000),
    );
    let cache = CompiledCache::new(CacheConfig {
        root: tmp.0.clone(),
        enabled: true,
        max_bytes: 0,
        spec: &config::COMPILED_PLANS,
    });
    fetch(&cache, &identity("now"), &key("axpy"), &artifact("z", 10));
    assert!(env.exists());
    assert_eq!(cache.stats().pruned, 0);
}

#[test]
fn the_disabled_cache_and_an_unidentified_environment_bypass_the_disk() {
    let tmp = TempDir::new("disabled");
    let root = tmp.0.join("root");
    let disabled = CompiledCache::new(CacheConfig {
        root: root.clone(),
        enabled: false,
        max_bytes: config::DEFAULT_MAX_BYTES,
        spec: &config::COMPILED_PLANS,
    });
    let obj = artifact("d", 10);
    assert_eq!(
        fetch(&disabled, &identity("d"), &key("axpy"), &obj),
        (obj.clone(), Outcome::Bypassed, true)
    );
    assert_eq!(disabled.stats().bypassed, 1);
    assert!(!root.exists(), "nothing is written when disabled");

    let unknown_driver = EnvIdentity::from_fields([("library_version", Some("u".to_owned()))]);
    assert!(!unknown_driver.is_complete());
    assert_eq!(unknown_driver.get("cuda_driver"), Some(identity::UNKNOWN));
    let cache = cache_at(&root);
    assert_eq!(
        fetch(&cache, &unknown_driver, &key("axpy"), &obj).1,
        Outcome::Bypassed
    );
    assert!(!root.exists());
}

#[test]
fn compile_errors_propagate_and_nothing_is_published() {
    let tmp = TempDir::new("compile-error");
    let cache = cache_at(&tmp.0);
    let (id, k) = (identity("err"), key("axpy"));
    let err = cache.get_or_compile(&id, &k, || Err(Error::NotSupported("no".into())));
    assert!(matches!(err, Err(Error::NotSupported(_))));
    assert_eq!(cache.lookup(&id, &k), None);
}

#[test]
fn an_unwritable_root_falls_back_to_the_temp_dir_and_still_returns_the_object() {
    let tmp = TempDir::new("unwritable");
    let file_root = tmp.0.join("a-file");
    fs::write(&file_root, b"not a directory").expect("file");
    let cache = cache_at(&file_root);
    let id = identity(&format!("fallback-{}", std::process::id()));
    let obj = artifact("f", 10);
    assert_eq!(fetch(&cache, &id, &key("axpy"), &obj).0, obj);
    assert_eq!(cache.dir(), config::fallback_root());
    let _ = fs::remove_dir_all(store::env_dir(&config::fallback_root(), &id));
}

#[test]
fn the_identity_hash_covers_every_field_and_unknowns_are_hashed() {
    let base = identity("h");
    let mut seen = std::collections::HashSet::new();
    assert!(seen.insert(base.hash()));
    for field in identity::FIELDS {
        let changed = EnvIdentity::from_fields(identity::FIELDS.iter().map(|f| {
            let v = base.get(f).map(str::to_owned);
            (
                *f,
                if *f == field {
                    Some("changed".to_owned())
                } else {
                    v
                },
            )
        }));
        assert!(seen.insert(changed.hash()), "{field} is part of the hash");
        let unknown = EnvIdentity::from_fields(identity::FIELDS.iter().map(|f| {
            (
                *f,
                if *f == field {
                    None
                } else {
                    base.get(f).map(str::to_owned)
                },
            )
        }));
        assert!(
            seen.insert(unknown.hash()),
            "unknown {field} is hashed, not skipped"
        );
    }
    assert_eq!(base.hash().len(), 24);
}

#[test]
fn configuration_comes_from_the_documented_variables() {
    let vars = |pairs: &'static [(&'static str, &'static str)]| {
        move |name: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == name)
                .map(|(_, v)| (*v).to_owned())
        }
    };
    let c = CacheConfig::from_vars(vars(&[
        ("DNNPLAN_COMPILED_CACHE", "/x/cache"),
        ("XDG_CACHE_HOME", "/xdg"),
    ]));
    assert_eq!(c.root, PathBuf::from("/x/cache"));
    assert!(c.enabled);
    assert_eq!(c.max_bytes, 4 * 1024 * 1024 * 1024);
    let c = CacheConfig::from_vars(vars(&[("XDG_CACHE_HOME", "/xdg"), ("HOME", "/home/u")]));
    assert_eq!(c.root, PathBuf::from("/xdg/dnnplan/compiled_plans"));
    let c = CacheConfig::from_vars(vars(&[("XDG_CACHE_HOME", "relative"), ("HOME", "/home/u")]));
    assert_eq!(
        c.root,
        PathBuf::from("/home/u/.cache/dnnplan/compiled_plans")
    );
    assert_eq!(
        CacheConfig::from_vars(vars(&[])).root,
        config::fallback_root()
    );
    for on in ["1", "true", "YES", "On"] {
        let c = CacheConfig::from_vars(move |n: &str| {
            (n == "DNNPLAN_DISABLE_COMPILED_CACHE").then(|| on.to_owned())
        });
        assert!(!c.enabled, "{on}");
    }
    for off in ["0", "false", "", "no"] {
        let c = CacheConfig::from_vars(move |n: &str| {
            (n == "DNNPLAN_DISABLE_COMPILED_CACHE").then(|| off.to_owned())
        });
        assert!(c.enabled, "{off}");
    }
    let cap = |v: &'static str| {
        CacheConfig::from_vars(move |n: &str| {
            (n == "DNNPLAN_COMPILED_CACHE_MAX_BYTES").then(|| v.to_owned())
        })
        .max_bytes
    };
    assert_eq!(cap("1000"), 1000);
    assert_eq!(cap("0"), 0);
    assert_eq!(cap("-5"), 0);
    assert_eq!(cap("lots"), config::DEFAULT_MAX_BYTES);
}
