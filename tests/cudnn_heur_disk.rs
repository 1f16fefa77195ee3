//! The heuristics cache's disk tier through `list_mode_with`, against the recording backend
//! scripted with engine configs: a graph listed by an earlier "process" (the in-process map
//! cleared, the disk kept) is listed from disk with no backend call, then from the map; a config
//! from disk that fails to replay is a decline and drops the entry from both tiers (the next
//! listing asks the backend again); a stale entry (another engine count) is ignored and
//! rewritten; `DNNPLAN_CUDNN_HEUR_CACHE=0` bypasses the disk tier too.

use std::sync::{Arc, Mutex, MutexGuard};

#[path = "cudnn_support/backend_graphs.rs"]
mod backend_graphs;

use backend_graphs::{leaked, matmul};

use dnnplan::cuda::cache::config::CUDNN_HEURISTICS;
use dnnplan::cuda::cache::{CacheConfig, CompiledCache};
use dnnplan::cudnn::backend::{HeuristicsScript, Recorded, Recorder};
use dnnplan::cudnn::consts::*;
use dnnplan::cudnn::emit::{OperationGraph, emit};
use dnnplan::cudnn::heur_cache::{
    self, DeviceKey, GraphTarget, HEUR_CACHE_ENV, Source, graph_key, list_mode_with, materialize,
};
use dnnplan::cudnn::heur_disk::{DiskTier, identity_of};
use dnnplan::cudnn::plan::HeurMode;
use dnnplan::error::Error;

fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn script(engine_count: i64) -> HeuristicsScript {
    HeuristicsScript {
        per_mode: vec![
            (
                CUDNN_HEUR_MODE_A,
                vec![(2, vec![(24, 7)]), (0, vec![(14, 3), (2, 1)])],
            ),
            (CUDNN_HEUR_MODE_FALLBACK, vec![(5, vec![])]),
        ],
        engine_count,
    }
}

fn device() -> DeviceKey {
    DeviceKey {
        ordinal: 0,
        compute_capability: (9, 0),
        sm_count: 132,
    }
}

struct TempRoot(std::path::PathBuf);

impl Drop for TempRoot {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn temp_root(tag: &str) -> TempRoot {
    let p = std::env::temp_dir().join(format!("dnnplan-heur-disk-it-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&p);
    TempRoot(p)
}

fn tier(root: &std::path::Path) -> DiskTier {
    let cache = CompiledCache::new(CacheConfig::for_spec(&CUDNN_HEURISTICS, |n| {
        (n == CUDNN_HEURISTICS.root_var).then(|| root.display().to_string())
    }));
    let id = identity_of(
        &device(),
        Some("Fake GPU".into()),
        Some(13000),
        91900,
        Some("1-2".into()),
    );
    DiskTier::new(Arc::new(cache), id).expect("complete identity")
}

fn heuristics_queries(rec: &Recorder) -> usize {
    rec.calls()
        .iter()
        .filter(|c| matches!(c, Recorded::Create(_, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)))
        .count()
}

fn setup(rec: &'static Recorder, n: i64) -> (OperationGraph, GraphTarget) {
    let opg = emit(rec, matmul(8, n, 16, CUDNN_DATA_HALF), None).unwrap();
    let t = GraphTarget {
        graph: graph_key(&opg.graph),
        device: device(),
        cudnn_version: 91900,
    };
    (opg, t)
}

fn names(list: &[heur_cache::ListedConfig]) -> Vec<String> {
    list.iter().map(|c| c.name()).collect()
}

#[test]
fn a_graph_listed_by_an_earlier_process_is_listed_from_disk() {
    let _s = serial();
    let root = temp_root("earlier");
    let rec: &'static Recorder = leaked(Recorder::with_heuristics(script(12)));
    let (opg, t) = setup(rec, 24);
    let (queried, src) = list_mode_with(&opg, Some(&t), HeurMode::A, Some(&tier(&root.0))).unwrap();
    assert_eq!(src, Source::Queried);
    assert_eq!(heuristics_queries(rec), 1);

    // "A new process": the map is empty, the disk is not.
    heur_cache::clear();
    let calls = rec.calls().len();
    let (mut from_disk, src) =
        list_mode_with(&opg, Some(&t), HeurMode::A, Some(&tier(&root.0))).unwrap();
    assert_eq!(src, Source::Disk);
    assert_eq!(heuristics_queries(rec), 1, "no heuristics query");
    // One backend read: the graph's engine count, to validate the entry.
    let new_calls = rec.calls()[calls..].to_vec();
    assert!(
        new_calls.iter().all(|c| matches!(
            c,
            Recorded::Get(_, CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT, _, _)
        )),
        "{new_calls:?}"
    );
    assert_eq!(names(&from_disk), names(&queried));
    assert_eq!(heur_cache::stats().disk_hits, 1);
    // Copied into the map: the next listing is an in-process hit.
    let (_, src) = list_mode_with(&opg, Some(&t), HeurMode::A, Some(&tier(&root.0))).unwrap();
    assert_eq!(src, Source::Cached);
    // The disk's configs replay.
    for c in from_disk.iter_mut() {
        materialize(&opg, c, Some(12)).unwrap();
        assert!(c.config.is_some());
    }
}

#[test]
fn a_config_from_disk_that_fails_to_replay_drops_the_entry() {
    let _s = serial();
    let root = temp_root("replay");
    let rec: &'static Recorder = leaked(Recorder::with_heuristics(script(12)));
    let (opg, t) = setup(rec, 40);
    list_mode_with(&opg, Some(&t), HeurMode::A, Some(&tier(&root.0))).unwrap();
    heur_cache::clear();
    // The same entry read by a process whose backend rejects the replayed config.
    let mut strict = Recorder::with_heuristics(script(12));
    strict.reject_finalize = vec![CUDNN_BACKEND_ENGINECFG_DESCRIPTOR];
    let strict = leaked(strict);
    let (opg2, t2) = setup(strict, 40);
    assert_eq!(t, t2);
    let (mut listed, src) =
        list_mode_with(&opg2, Some(&t2), HeurMode::A, Some(&tier(&root.0))).unwrap();
    assert_eq!(src, Source::Disk);
    let err = materialize(&opg2, &mut listed[0], Some(12)).unwrap_err();
    assert!(
        matches!(&err, Error::Declined { reason, .. } if reason.contains("dropped")),
        "a decline, so the build walk moves on: {err}"
    );
    assert_eq!(heur_cache::stats().dropped, 1);
    // Gone from both tiers: the next listing (even in a new process) asks the backend.
    let before = heuristics_queries(strict);
    let (_, src) = list_mode_with(&opg2, Some(&t2), HeurMode::A, Some(&tier(&root.0))).unwrap();
    assert_eq!(src, Source::Queried);
    heur_cache::clear();
    let (_, src) = list_mode_with(&opg2, Some(&t2), HeurMode::A, Some(&tier(&root.0))).unwrap();
    assert_eq!(src, Source::Disk, "rewritten by that query");
    assert_eq!(heuristics_queries(strict), before + 1);
}

#[test]
fn a_stale_entry_is_ignored_and_rewritten() {
    let _s = serial();
    let root = temp_root("stale");
    let rec: &'static Recorder = leaked(Recorder::with_heuristics(script(12)));
    let (opg, t) = setup(rec, 56);
    list_mode_with(&opg, Some(&t), HeurMode::A, Some(&tier(&root.0))).unwrap();
    heur_cache::clear();
    // Same key, but the backend now reports another engine count: the entry is not trusted.
    let other: &'static Recorder = leaked(Recorder::with_heuristics(script(13)));
    let (opg2, t2) = setup(other, 56);
    let disk = tier(&root.0);
    let (_, src) = list_mode_with(&opg2, Some(&t2), HeurMode::A, Some(&disk)).unwrap();
    assert_eq!(src, Source::Queried);
    assert_eq!(disk.stats().invalid, 1);
    heur_cache::clear();
    let (_, src) = list_mode_with(&opg2, Some(&t2), HeurMode::A, Some(&tier(&root.0))).unwrap();
    assert_eq!(src, Source::Disk);
}

#[test]
fn the_environment_variable_bypasses_the_disk_tier_too() {
    let _s = serial();
    let root = temp_root("bypass");
    let rec: &'static Recorder = leaked(Recorder::with_heuristics(script(12)));
    let (opg, t) = setup(rec, 72);
    // SAFETY: the tests of this file run one at a time (serial()).
    unsafe { std::env::set_var(HEUR_CACHE_ENV, "0") };
    let a = list_mode_with(&opg, Some(&t), HeurMode::A, Some(&tier(&root.0))).unwrap();
    let b = list_mode_with(&opg, Some(&t), HeurMode::A, Some(&tier(&root.0))).unwrap();
    // SAFETY: as above.
    unsafe { std::env::remove_var(HEUR_CACHE_ENV) };
    assert_eq!((a.1, b.1), (Source::Queried, Source::Queried));
    assert_eq!(heuristics_queries(rec), 2);
    assert!(!root.0.exists(), "nothing written while bypassed");
}
