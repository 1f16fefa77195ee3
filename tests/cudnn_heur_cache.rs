//! The process-wide heuristics cache (`dnnplan::cudnn::heur_cache`) and the config reads of a
//! heuristics query, against the recording backend scripted with engine configs: a second listing
//! of the same graph issues no heuristics query; other shapes, dtypes, modes, devices and cuDNN
//! versions miss; `DNNPLAN_CUDNN_HEUR_CACHE=0` bypasses it; the replayed list equals the queried
//! one (and its replayed ENGINECFGs carry the same engine and knobs); notes are not read while
//! listing; knob choices are read with a short array first.

use std::sync::{Arc, Mutex, MutexGuard};

#[path = "cudnn_support/backend_graphs.rs"]
mod backend_graphs;

use backend_graphs::{leaked, matmul};

use dnnplan::cudnn::backend::{AttrValue, HeuristicsScript, Recorded, Recorder};
use dnnplan::cudnn::consts::*;
use dnnplan::cudnn::emit::{OperationGraph, emit};
use dnnplan::cudnn::heur_cache::{
    self, CAPACITY, CachedConfig, DeviceKey, GraphTarget, HEUR_CACHE_ENV, HeurKey, Source,
    graph_key, list_mode, materialize,
};
use dnnplan::cudnn::plan::{HeurMode, KNOB_PROBE};

/// The cache and the environment variable are process-wide: the tests here run one at a time.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

/// Mode A lists three configs (one with more knobs than the first short read), FALLBACK one.
fn script() -> HeuristicsScript {
    let many: Vec<(u32, i64)> = (0..10).map(|i| (i as u32 + 1, i as i64 * 3)).collect();
    HeuristicsScript {
        per_mode: vec![
            (
                CUDNN_HEUR_MODE_A,
                vec![(2, vec![(24, 7)]), (0, vec![(14, 3), (2, 1)]), (7, many)],
            ),
            (CUDNN_HEUR_MODE_FALLBACK, vec![(5, vec![])]),
        ],
        engine_count: 12,
    }
}

fn recorder(script: HeuristicsScript) -> &'static Recorder {
    leaked(Recorder::with_heuristics(script))
}

fn device(ordinal: i32, sm_count: i32) -> DeviceKey {
    DeviceKey {
        ordinal,
        compute_capability: (9, 0),
        sm_count,
    }
}

fn target_of(opg: &OperationGraph, device: DeviceKey, version: usize) -> GraphTarget {
    GraphTarget {
        graph: graph_key(&opg.graph),
        device,
        cudnn_version: version,
    }
}

/// Heuristics descriptors created so far on `rec`.
fn heuristics_queries(rec: &Recorder) -> usize {
    rec.calls()
        .iter()
        .filter(|c| matches!(c, Recorded::Create(_, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR)))
        .count()
}

type Summary = Vec<(i64, Vec<(u32, i64)>, HeurMode)>;

fn summary(list: &[heur_cache::ListedConfig]) -> Summary {
    list.iter()
        .map(|c| (c.engine_id, c.knobs.clone(), c.mode))
        .collect()
}

#[test]
fn a_second_listing_of_the_same_graph_issues_no_heuristics_query() {
    let _s = serial();
    let rec = recorder(script());
    let first = emit(rec, matmul(8, 24, 16, CUDNN_DATA_HALF), None).unwrap();
    let t = target_of(&first, device(0, 132), 91900);
    let (queried, src) = list_mode(&first, Some(&t), HeurMode::A).unwrap();
    assert_eq!(src, Source::Queried);
    assert_eq!(queried.len(), 3);
    assert!(queried.iter().all(|c| c.config.is_some()));
    assert_eq!(heuristics_queries(rec), 1);

    // A new plan list of the same graph: lowered and emitted again, then listed.
    let second = emit(rec, matmul(8, 24, 16, CUDNN_DATA_HALF), None).unwrap();
    let t2 = target_of(&second, device(0, 132), 91900);
    assert_eq!(t, t2, "the same graph has the same key");
    let calls_before = rec.calls().len();
    let (cached, src) = list_mode(&second, Some(&t2), HeurMode::A).unwrap();
    assert_eq!(src, Source::Cached);
    assert_eq!(heuristics_queries(rec), 1, "no second heuristics query");
    assert_eq!(
        rec.calls().len(),
        calls_before,
        "listing from the cache makes no backend call at all"
    );
    assert!(cached.iter().all(|c| c.config.is_none()));
    assert_eq!(summary(&cached), summary(&queried));
    assert_eq!(
        cached.iter().map(|c| c.name()).collect::<Vec<_>>(),
        ["eng2_k24=7", "eng0_k2=1_k14=3", &queried[2].name()]
    );
}

#[test]
fn the_replayed_list_equals_the_queried_list() {
    let _s = serial();
    let rec = recorder(script());
    let opg = emit(rec, matmul(8, 40, 16, CUDNN_DATA_HALF), None).unwrap();
    let t = target_of(&opg, device(0, 132), 91900);
    let (queried, _) = list_mode(&opg, Some(&t), HeurMode::A).unwrap();
    // What the backend said, read back through the fake.
    let expect: Summary = script().per_mode[0]
        .1
        .iter()
        .map(|(e, k)| {
            let mut k = k.clone();
            k.sort_unstable();
            (*e, k, HeurMode::A)
        })
        .collect();
    assert_eq!(summary(&queried), expect);

    let (mut cached, src) = list_mode(&opg, Some(&t), HeurMode::A).unwrap();
    assert_eq!(src, Source::Cached);
    assert_eq!(summary(&cached), expect);
    // Each replayed ENGINECFG names the same engine and carries the same knob choices.
    for c in cached.iter_mut() {
        let before = rec.calls().len();
        let cfg = materialize(&opg, c, Some(12)).unwrap().raw() as usize;
        let calls = rec.calls()[before..].to_vec();
        let set = |id: usize, name: u32| {
            calls.iter().find_map(|x| match x {
                Recorded::Set(d, n, v) if *d == id && *n == name => Some(v.clone()),
                _ => None,
            })
        };
        let Some(AttrValue::Descriptors(engine)) = set(cfg, CUDNN_ATTR_ENGINECFG_ENGINE) else {
            panic!("replayed ENGINECFG without ENGINE");
        };
        assert_eq!(
            set(engine[0] as usize, CUDNN_ATTR_ENGINE_GLOBAL_INDEX),
            Some(AttrValue::Int64(vec![c.engine_id]))
        );
        let mut knobs: Vec<(u32, i64)> = match set(cfg, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES) {
            Some(AttrValue::Descriptors(ks)) => ks
                .iter()
                .map(|k| {
                    let id = *k as usize;
                    let Some(AttrValue::Enum(_, t)) = set(id, CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE)
                    else {
                        panic!("knob without type")
                    };
                    let Some(AttrValue::Int64(v)) = set(id, CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE)
                    else {
                        panic!("knob without value")
                    };
                    (t, v[0])
                })
                .collect(),
            _ => Vec::new(),
        };
        knobs.sort_unstable();
        assert_eq!(knobs, c.knobs, "{}", c.name());
        assert!(c.config.is_some());
    }
}

#[test]
fn other_shapes_dtypes_modes_devices_and_versions_miss() {
    let _s = serial();
    let rec = recorder(script());
    let base = emit(rec, matmul(8, 56, 16, CUDNN_DATA_HALF), None).unwrap();
    let t = target_of(&base, device(0, 132), 91900);
    assert_eq!(
        list_mode(&base, Some(&t), HeurMode::A).unwrap().1,
        Source::Queried
    );
    assert_eq!(
        list_mode(&base, Some(&t), HeurMode::A).unwrap().1,
        Source::Cached
    );
    let shape = emit(rec, matmul(8, 56, 32, CUDNN_DATA_HALF), None).unwrap();
    let dtype = emit(rec, matmul(8, 56, 16, CUDNN_DATA_BFLOAT16), None).unwrap();
    let misses: Vec<(&str, &OperationGraph, GraphTarget, HeurMode)> = vec![
        (
            "shape",
            &shape,
            target_of(&shape, device(0, 132), 91900),
            HeurMode::A,
        ),
        (
            "dtype",
            &dtype,
            target_of(&dtype, device(0, 132), 91900),
            HeurMode::A,
        ),
        ("mode", &base, t.clone(), HeurMode::Fallback),
        (
            "device ordinal",
            &base,
            target_of(&base, device(1, 132), 91900),
            HeurMode::A,
        ),
        (
            "SM count",
            &base,
            target_of(&base, device(0, 114), 91900),
            HeurMode::A,
        ),
        (
            "compute capability",
            &base,
            GraphTarget {
                device: DeviceKey {
                    compute_capability: (10, 0),
                    ..device(0, 132)
                },
                ..t.clone()
            },
            HeurMode::A,
        ),
        (
            "cuDNN version",
            &base,
            target_of(&base, device(0, 132), 92000),
            HeurMode::A,
        ),
    ];
    assert_ne!(graph_key(&shape.graph), graph_key(&base.graph));
    assert_ne!(graph_key(&dtype.graph), graph_key(&base.graph));
    for (what, opg, target, mode) in misses {
        let before = heuristics_queries(rec);
        let (_, src) = list_mode(opg, Some(&target), mode).unwrap();
        assert_eq!(src, Source::Queried, "a different {what} must miss");
        assert_eq!(heuristics_queries(rec), before + 1, "{what}");
    }
    // Without a target (no key) the cache is not used either.
    assert_eq!(
        list_mode(&base, None, HeurMode::A).unwrap().1,
        Source::Queried
    );
}

#[test]
fn the_environment_variable_bypasses_the_cache() {
    let _s = serial();
    let rec = recorder(script());
    let opg = emit(rec, matmul(8, 72, 16, CUDNN_DATA_HALF), None).unwrap();
    let t = target_of(&opg, device(0, 132), 91900);
    // SAFETY: the tests of this file run one at a time (serial()); nothing else reads it here.
    unsafe { std::env::set_var(HEUR_CACHE_ENV, "0") };
    assert!(!heur_cache::enabled());
    let a = list_mode(&opg, Some(&t), HeurMode::A).unwrap();
    let b = list_mode(&opg, Some(&t), HeurMode::A).unwrap();
    // SAFETY: as above.
    unsafe { std::env::remove_var(HEUR_CACHE_ENV) };
    assert_eq!((a.1, b.1), (Source::Queried, Source::Queried));
    assert_eq!(heuristics_queries(rec), 2);
    assert_eq!(summary(&a.0), summary(&b.0));
    // Nothing was stored while disabled.
    assert!(heur_cache::enabled());
    assert_eq!(
        heur_cache::lookup(&HeurKey {
            target: t.clone(),
            mode: HeurMode::A
        }),
        None
    );
    assert_eq!(
        list_mode(&opg, Some(&t), HeurMode::A).unwrap().1,
        Source::Queried
    );
    assert_eq!(
        list_mode(&opg, Some(&t), HeurMode::A).unwrap().1,
        Source::Cached
    );
}

#[test]
fn an_empty_answer_is_not_cached() {
    let _s = serial();
    let mut s = script();
    s.per_mode.retain(|(m, _)| *m == CUDNN_HEUR_MODE_A);
    let rec = recorder(s);
    let opg = emit(rec, matmul(8, 88, 16, CUDNN_DATA_HALF), None).unwrap();
    let t = target_of(&opg, device(0, 132), 91900);
    for _ in 0..2 {
        let (list, src) = list_mode(&opg, Some(&t), HeurMode::Fallback).unwrap();
        assert!(list.is_empty());
        assert_eq!(src, Source::Queried);
    }
    assert_eq!(heuristics_queries(rec), 2);
}

#[test]
fn the_cache_is_bounded_least_recently_used_first() {
    let _s = serial();
    heur_cache::clear();
    let key = |i: usize| HeurKey {
        target: GraphTarget {
            graph: *blake3::hash(&i.to_le_bytes()).as_bytes(),
            device: device(0, 132),
            cudnn_version: 91900,
        },
        mode: HeurMode::A,
    };
    let value: Arc<[CachedConfig]> = vec![CachedConfig {
        engine_id: 1,
        knobs: vec![],
    }]
    .into();
    for i in 0..CAPACITY {
        heur_cache::insert(key(i), value.clone());
    }
    // Key 0 is used again, so key 1 is now the least recently used.
    assert!(heur_cache::lookup(&key(0)).is_some());
    heur_cache::insert(key(CAPACITY), value.clone());
    assert_eq!(heur_cache::stats().entries, CAPACITY);
    assert!(heur_cache::lookup(&key(0)).is_some());
    assert!(heur_cache::lookup(&key(1)).is_none());
    assert!(heur_cache::lookup(&key(CAPACITY)).is_some());
    heur_cache::clear();
    assert_eq!(heur_cache::stats().entries, 0);
}

#[test]
fn listing_reads_no_notes_and_sizes_knob_reads_to_the_answer() {
    let _s = serial();
    // SAFETY: serial; make sure the cache is on so this listing queries once.
    unsafe { std::env::remove_var(HEUR_CACHE_ENV) };
    let rec = recorder(script());
    let opg = emit(rec, matmul(8, 104, 16, CUDNN_DATA_HALF), None).unwrap();
    let (list, _) = list_mode(&opg, None, HeurMode::A).unwrap();
    assert_eq!(
        list[2].knobs.len(),
        10,
        "a config with more knobs than the short read"
    );
    let gets: Vec<Recorded> = rec
        .calls()
        .into_iter()
        .filter(|c| matches!(c, Recorded::Get(..)))
        .collect();
    assert!(
        !gets.iter().any(|g| matches!(
            g,
            Recorded::Get(
                _,
                CUDNN_ATTR_ENGINE_NUMERICAL_NOTE | CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
                ..
            )
        )),
        "notes are read on demand, not while listing"
    );
    let knob_reads: Vec<i64> = gets
        .iter()
        .filter_map(|g| match g {
            Recorded::Get(_, CUDNN_ATTR_ENGINECFG_KNOB_CHOICES, n, _) => Some(*n),
            _ => None,
        })
        .collect();
    // Three configs: two answer within the short read; the third fills it and is read again
    // with the upper bound.
    assert_eq!(
        knob_reads,
        [
            KNOB_PROBE as i64,
            KNOB_PROBE as i64,
            KNOB_PROBE as i64,
            CUDNN_KNOB_TYPE_COUNTS as i64
        ]
    );
    // Knob-choice descriptors created: 8 per config plus the re-read of the third.
    let knob_descs = rec
        .calls()
        .iter()
        .filter(|c| matches!(c, Recorded::Create(_, CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR)))
        .count();
    assert_eq!(knob_descs, 3 * KNOB_PROBE + CUDNN_KNOB_TYPE_COUNTS as usize);
}
