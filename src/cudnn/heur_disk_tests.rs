//! The disk tier on the CPU: round trip, key sensitivity (every identity field and key part
//! names another file), corrupt and stale objects ignored and removed, concurrent writers, the
//! switch that turns the tier off.

use std::fs;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::cuda::cache::{CacheConfig, CompiledCache, store};

struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static SEQ: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
        let n = SEQ.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let p = std::env::temp_dir().join(format!(
            "dnnplan-heur-disk-{tag}-{}-{n}",
            std::process::id()
        ));
        let _ = fs::remove_dir_all(&p);
        TempDir(p)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = fs::remove_dir_all(&self.0);
    }
}

fn device() -> DeviceKey {
    DeviceKey {
        ordinal: 0,
        compute_capability: (9, 0),
        sm_count: 132,
    }
}

fn identity() -> EnvIdentity {
    identity_of(
        &device(),
        Some("NVIDIA H200".into()),
        Some(13000),
        91900,
        Some("1234-5678".into()),
    )
}

fn store_at(root: &Path) -> Arc<CompiledCache> {
    Arc::new(CompiledCache::new(CacheConfig::for_spec(
        &CUDNN_HEURISTICS,
        |name| (name == CUDNN_HEURISTICS.root_var).then(|| root.display().to_string()),
    )))
}

fn tier(root: &Path) -> DiskTier {
    DiskTier::new(store_at(root), identity()).expect("complete identity")
}

fn configs() -> Vec<CachedConfig> {
    vec![
        CachedConfig {
            engine_id: 2,
            knobs: vec![(24, 7)],
        },
        CachedConfig {
            engine_id: 0,
            knobs: vec![(2, 1), (14, -3)],
        },
        CachedConfig {
            engine_id: 11,
            knobs: vec![],
        },
    ]
}

const GRAPH: [u8; 32] = [7; 32];

/// The object file of the one entry under `root` (there must be exactly one).
fn object_file(root: &Path) -> PathBuf {
    let mut found = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if p.extension().is_some_and(|x| x == "json")
                && p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("object-"))
            {
                found.push(p);
            }
        }
    }
    assert_eq!(found.len(), 1, "{found:?}");
    found.remove(0)
}

#[test]
fn a_saved_list_loads_back_unchanged() {
    let tmp = TempDir::new("roundtrip");
    let t = tier(&tmp.0);
    assert_eq!(t.load(&GRAPH, HeurMode::A, 12), None, "empty store: a miss");
    assert!(t.save(&GRAPH, HeurMode::A, &configs(), 12));
    assert_eq!(t.load(&GRAPH, HeurMode::A, 12), Some(configs()));
    // A second process (another store instance over the same root) reads it too.
    assert_eq!(tier(&tmp.0).load(&GRAPH, HeurMode::A, 12), Some(configs()));
    // The other mode of the same graph is another entry.
    assert_eq!(t.load(&GRAPH, HeurMode::Fallback, 12), None);
    // Nothing empty is written.
    assert!(!t.save(&GRAPH, HeurMode::B, &[], 12));
    assert_eq!(t.load(&GRAPH, HeurMode::B, 12), None);
    let s = t.stats();
    assert_eq!((s.hits, s.misses, s.invalid), (1, 3, 0));
    assert!(object_file(&tmp.0).exists());
}

#[test]
fn every_key_part_names_another_file() {
    let base = identity();
    let d = device();
    let variants = [
        (
            "device name",
            identity_of(
                &d,
                Some("NVIDIA H100".into()),
                Some(13000),
                91900,
                Some("1234-5678".into()),
            ),
        ),
        (
            "driver",
            identity_of(
                &d,
                Some("NVIDIA H200".into()),
                Some(13010),
                91900,
                Some("1234-5678".into()),
            ),
        ),
        (
            "cuDNN version",
            identity_of(
                &d,
                Some("NVIDIA H200".into()),
                Some(13000),
                91901,
                Some("1234-5678".into()),
            ),
        ),
        (
            "cuDNN build",
            identity_of(
                &d,
                Some("NVIDIA H200".into()),
                Some(13000),
                91900,
                Some("1234-5679".into()),
            ),
        ),
        (
            "compute capability",
            identity_of(
                &DeviceKey {
                    compute_capability: (10, 0),
                    ..d.clone()
                },
                Some("NVIDIA H200".into()),
                Some(13000),
                91900,
                Some("1234-5678".into()),
            ),
        ),
        (
            "SM count",
            identity_of(
                &DeviceKey {
                    sm_count: 114,
                    ..d.clone()
                },
                Some("NVIDIA H200".into()),
                Some(13000),
                91900,
                Some("1234-5678".into()),
            ),
        ),
    ];
    let root = Path::new("/r");
    for (what, id) in &variants {
        assert!(id.is_complete());
        assert_ne!(
            store::env_dir(root, id),
            store::env_dir(root, &base),
            "{what} must change the environment"
        );
    }
    // The two fields that are not arguments: dnnplan's version and this tier's format.
    for field in ["library_version", "format"] {
        let changed = EnvIdentity::with_fields(
            &FIELDS,
            FIELDS.iter().map(|f| {
                let v = base.get(f).map(str::to_owned);
                (*f, if *f == field { Some("other".into()) } else { v })
            }),
        );
        assert_ne!(changed.hash(), base.hash(), "{field}");
    }
    // The device ordinal is not part of the machine's identity (same device model = same answer).
    let other_ordinal = identity_of(
        &DeviceKey { ordinal: 3, ..d },
        Some("NVIDIA H200".into()),
        Some(13000),
        91900,
        Some("1234-5678".into()),
    );
    assert_eq!(other_ordinal.hash(), base.hash());
    // Entry keys: the graph and the mode.
    let k = entry_key(&GRAPH, HeurMode::A);
    assert_ne!(k.hash(), entry_key(&[8; 32], HeurMode::A).hash());
    assert_ne!(k.hash(), entry_key(&GRAPH, HeurMode::Fallback).hash());
    assert_ne!(k.hash(), entry_key(&GRAPH, HeurMode::B).hash());
    // And a store written in one environment is not read in another.
    let tmp = TempDir::new("keys");
    assert!(tier(&tmp.0).save(&GRAPH, HeurMode::A, &configs(), 12));
    for (what, id) in variants {
        let other = DiskTier::new(store_at(&tmp.0), id).expect("complete");
        assert_eq!(other.load(&GRAPH, HeurMode::A, 12), None, "{what}");
    }
}

#[test]
fn an_unreadable_field_makes_the_tier_unusable() {
    for (name, driver, build) in [
        (None, Some(13000), Some("b".to_owned())),
        (Some("H200".to_owned()), None, Some("b".to_owned())),
        (Some("H200".to_owned()), Some(13000), None),
    ] {
        let id = identity_of(&device(), name, driver, 91900, build);
        assert!(!id.is_complete());
        assert!(DiskTier::new(store_at(Path::new("/nonexistent")), id).is_none());
    }
}

#[test]
fn corrupt_and_stale_objects_are_ignored_and_removed() {
    let tmp = TempDir::new("corrupt");
    let t = tier(&tmp.0);
    let stale_or_bad: Vec<(&str, Vec<u8>)> = vec![
        ("not JSON", b"{\"format\": \"1\", \"engine_co".to_vec()),
        ("another format", encode(&configs(), 12).replace_format()),
        ("engine id past the count", encode(&configs(), 12)),
        (
            "knob type out of range",
            encode(
                &[CachedConfig {
                    engine_id: 1,
                    knobs: vec![(999, 1)],
                }],
                12,
            ),
        ),
        (
            "knobs out of order",
            encode(
                &[CachedConfig {
                    engine_id: 1,
                    knobs: vec![(14, 1), (2, 1)],
                }],
                12,
            ),
        ),
        ("empty list", encode(&[], 12)),
    ];
    for (what, bytes) in stale_or_bad {
        // Published through the store (valid record, digest matching), content wrong.
        let key = entry_key(&GRAPH, HeurMode::A);
        assert!(t.cache.store(&t.identity, &key, &bytes), "{what}");
        // "engine id past the count": the graph now has 10 engines, the entry names 11.
        let count = if what.starts_with("engine id") {
            10
        } else {
            12
        };
        let invalid = t.stats().invalid;
        assert_eq!(t.load(&GRAPH, HeurMode::A, count), None, "{what}");
        assert_eq!(t.stats().invalid, invalid + 1, "{what}");
        assert!(
            matches!(
                store::read_entry(&store::entry_dir(&tmp.0, &t.identity, &key), &key),
                store::Lookup::Absent
            ),
            "{what}: the entry is removed"
        );
    }
    // Bytes changed on disk behind the record: the store's digest check rejects them.
    assert!(t.save(&GRAPH, HeurMode::A, &configs(), 12));
    let object = object_file(&tmp.0);
    let mut bytes = fs::read(&object).expect("read");
    bytes[10] ^= 1;
    fs::write(&object, bytes).expect("write");
    assert_eq!(t.load(&GRAPH, HeurMode::A, 12), None);
    let key = entry_key(&GRAPH, HeurMode::A);
    assert!(
        !store::entry_dir(&tmp.0, &t.identity, &key).exists(),
        "the rejected entry is removed"
    );
    // Rewritten by the next save and trusted again.
    assert!(t.save(&GRAPH, HeurMode::A, &configs(), 12));
    assert_eq!(t.load(&GRAPH, HeurMode::A, 12), Some(configs()));
}

trait ReplaceFormat {
    fn replace_format(self) -> Vec<u8>;
}

impl ReplaceFormat for Vec<u8> {
    fn replace_format(self) -> Vec<u8> {
        String::from_utf8(self)
            .expect("utf8")
            .replace(&format!("\"format\":\"{FORMAT}\""), "\"format\":\"0\"")
            .into_bytes()
    }
}

#[test]
fn concurrent_writers_leave_one_valid_entry() {
    let tmp = TempDir::new("concurrent");
    let lists: Vec<Vec<CachedConfig>> = (0..8)
        .map(|i| {
            vec![CachedConfig {
                engine_id: i,
                knobs: vec![(24, i)],
            }]
        })
        .collect();
    let all = &lists;
    std::thread::scope(|s| {
        for list in all {
            let root = tmp.0.clone();
            s.spawn(move || {
                // Each thread is its own "process": its own store over the same root.
                let t = tier(&root);
                for _ in 0..20 {
                    assert!(t.save(&GRAPH, HeurMode::A, list, 12));
                    let seen = t.load(&GRAPH, HeurMode::A, 12);
                    assert!(
                        seen.as_ref().is_some_and(|s| all.contains(s)),
                        "a reader sees one writer's whole list, never a torn one: {seen:?}"
                    );
                }
            });
        }
    });
    let last = tier(&tmp.0)
        .load(&GRAPH, HeurMode::A, 12)
        .expect("an entry");
    assert!(lists.contains(&last));
    // No temporary files left behind.
    let mut stack = vec![tmp.0.clone()];
    while let Some(d) = stack.pop() {
        for e in fs::read_dir(&d).into_iter().flatten().flatten() {
            if e.path().is_dir() {
                stack.push(e.path());
            } else {
                assert!(
                    !e.file_name().to_string_lossy().ends_with(".tmp"),
                    "{:?}",
                    e.path()
                );
            }
        }
    }
}

#[test]
fn the_location_variable_places_or_turns_off_the_tier() {
    let with = |pairs: &'static [(&'static str, &'static str)]| {
        CacheConfig::for_spec(&CUDNN_HEURISTICS, move |n: &str| {
            pairs
                .iter()
                .find(|(k, _)| *k == n)
                .map(|(_, v)| (*v).to_owned())
        })
    };
    let c = with(&[("DNNPLAN_CUDNN_HEUR_DISK_CACHE", "/somewhere")]);
    assert_eq!(
        (c.root.as_path(), c.enabled),
        (Path::new("/somewhere"), true)
    );
    for off in ["0", "off", "FALSE", "none"] {
        let pairs: &'static [(&str, &str)] = Box::leak(Box::new([
            ("DNNPLAN_CUDNN_HEUR_DISK_CACHE", off),
            ("HOME", "/home/u"),
        ]));
        assert!(!with(pairs).enabled, "{off}");
    }
    let c = with(&[("HOME", "/home/u")]);
    assert_eq!(
        (c.root.as_path(), c.enabled, c.max_bytes),
        (
            Path::new("/home/u/.cache/dnnplan/cudnn_heuristics"),
            true,
            CUDNN_HEURISTICS.default_max_bytes
        )
    );
    let c = with(&[
        ("XDG_CACHE_HOME", "/xdg"),
        ("DNNPLAN_CUDNN_HEUR_DISK_CACHE_MAX_BYTES", "1000"),
    ]);
    assert_eq!(
        (c.root.as_path(), c.max_bytes),
        (Path::new("/xdg/dnnplan/cudnn_heuristics"), 1000)
    );
    // The compiled-plan cache's variables do not touch this tier, and vice versa.
    let c = with(&[
        ("DNNPLAN_COMPILED_CACHE", "/compiled"),
        ("DNNPLAN_DISABLE_COMPILED_CACHE", "1"),
        ("HOME", "/h"),
    ]);
    assert_eq!(
        (c.root.as_path(), c.enabled),
        (Path::new("/h/.cache/dnnplan/cudnn_heuristics"), true)
    );
    let compiled =
        CacheConfig::from_vars(|n| (n == "DNNPLAN_CUDNN_HEUR_DISK_CACHE").then(|| "0".into()));
    assert!(compiled.enabled);
}
