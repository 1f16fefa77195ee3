//! Concurrent mode listing (`dnnplan::cudnn::heur_modes::list_modes`) against the recording
//! backend: the lists equal a sequential listing's (same configs, same order), the second mode is
//! asked on an operation graph of its own (emitted in its thread) and its configs are replayed on
//! the caller's graph when built; both answers are stored in the cache; modes the cache holds are
//! not asked; a side thread that fails leaves its mode to the caller; the switch reads the
//! environment.

use std::sync::{Mutex, MutexGuard};

#[path = "cudnn_support/backend_graphs.rs"]
mod backend_graphs;

use backend_graphs::{leaked, matmul};

use dnnplan::cudnn::backend::{HeuristicsScript, Recorded, Recorder};
use dnnplan::cudnn::consts::*;
use dnnplan::cudnn::emit::{OperationGraph, emit};
use dnnplan::cudnn::heur_cache::{
    self, DeviceKey, GraphTarget, HeurKey, ListedConfig, Source, graph_key, list_mode_with,
    materialize,
};
use dnnplan::cudnn::heur_modes::{self, CONCURRENT_MODES_ENV, SideSetup, list_modes};
use dnnplan::cudnn::plan::HeurMode;
use dnnplan::error::Error;

fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    LOCK.lock().unwrap_or_else(|p| p.into_inner())
}

fn script() -> HeuristicsScript {
    HeuristicsScript {
        per_mode: vec![
            (
                CUDNN_HEUR_MODE_A,
                vec![(2, vec![(24, 7)]), (0, vec![(14, 3), (2, 1)])],
            ),
            (CUDNN_HEUR_MODE_B, vec![(3, vec![(1, 1)])]),
            (
                CUDNN_HEUR_MODE_FALLBACK,
                vec![(5, vec![]), (6, vec![(3, 2)])],
            ),
        ],
        engine_count: 12,
    }
}

fn setup(n: i64) -> (&'static Recorder, OperationGraph, GraphTarget) {
    let rec = leaked(Recorder::with_heuristics(script()));
    let opg = emit(rec, matmul(8, n, 16, CUDNN_DATA_HALF), None).unwrap();
    let t = GraphTarget {
        graph: graph_key(&opg.graph),
        device: DeviceKey {
            ordinal: 0,
            compute_capability: (9, 0),
            sm_count: 132,
        },
        cudnn_version: 91900,
    };
    (rec, opg, t)
}

fn no_handle() -> Box<SideSetup<'static>> {
    Box::new(|| Ok((None, Box::new(()) as Box<dyn std::any::Any>)))
}

type Summary = Vec<(i64, Vec<(u32, i64)>, HeurMode)>;

fn summary(list: &[ListedConfig]) -> Summary {
    list.iter()
        .map(|c| (c.engine_id, c.knobs.clone(), c.mode))
        .collect()
}

/// The OPERATIONGRAPH descriptors that an ENGINEHEUR was pointed at, in order.
fn heuristics_graphs(rec: &Recorder) -> Vec<usize> {
    let calls = rec.calls();
    calls
        .iter()
        .filter_map(|c| match c {
            Recorded::Set(
                d,
                CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                dnnplan::cudnn::backend::AttrValue::Descriptors(g),
            ) if rec.type_of(*d) == Some(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR) => {
                Some(g[0] as usize)
            }
            _ => None,
        })
        .collect()
}

#[test]
fn concurrent_lists_equal_sequential_lists() {
    let _s = serial();
    let modes = [HeurMode::A, HeurMode::B, HeurMode::Fallback];
    // Sequential, cache bypassed by another graph size (no sharing with the concurrent one).
    let (_, seq_opg, seq_t) = setup(24);
    let sequential: Vec<Summary> = modes
        .iter()
        .map(|m| summary(&list_mode_with(&seq_opg, Some(&seq_t), *m, None).unwrap().0))
        .collect();

    let (rec, opg, t) = setup(40);
    let side = no_handle();
    let listed = list_modes(&opg, Some(&t), &modes, None, &*side);
    assert_eq!(listed.len(), 3);
    let mut lists: Vec<Vec<ListedConfig>> = Vec::new();
    for (i, (mode, r)) in listed.into_iter().enumerate() {
        assert_eq!(mode, modes[i]);
        let (list, src) = r.expect("listed").expect("ok");
        assert_eq!(src, Source::Queried);
        assert_eq!(summary(&list), sequential[i], "{mode:?}");
        lists.push(list);
    }
    // The first mode was asked on the caller's graph, the others each on a graph of its own.
    let graphs = heuristics_graphs(rec);
    assert_eq!(graphs.len(), 3, "{graphs:?}");
    let own = opg.desc.raw() as usize;
    assert_eq!(graphs.iter().filter(|g| **g == own).count(), 1);
    assert_ne!(graphs[1], graphs[2]);
    assert!(lists[0].iter().all(|c| c.config.is_some()));
    // The others' configs are replayed on the caller's graph when built.
    for c in lists[1..].iter_mut().flatten() {
        assert!(c.config.is_none());
        materialize(&opg, c, Some(12)).unwrap();
    }
    // Every answer is in the cache now: a second listing asks nothing.
    let before = heuristics_graphs(rec).len();
    for (mode, r) in list_modes(&opg, Some(&t), &modes, None, &*side) {
        assert_eq!(r.unwrap().unwrap().1, Source::Cached, "{mode:?}");
    }
    assert_eq!(heuristics_graphs(rec).len(), before);
    for m in modes {
        assert!(
            heur_cache::lookup(&HeurKey {
                target: t.clone(),
                mode: m
            })
            .is_some()
        );
    }
}

#[test]
fn a_failing_side_thread_leaves_its_mode_to_the_caller() {
    let _s = serial();
    let (_, opg, t) = setup(56);
    let failing: Box<SideSetup<'static>> = Box::new(|| Err(Error::Internal("no handle".into())));
    let listed = list_modes(
        &opg,
        Some(&t),
        &[HeurMode::A, HeurMode::Fallback],
        None,
        &*failing,
    );
    assert!(matches!(listed[0].1, Some(Ok(_))));
    assert!(listed[1].1.is_none(), "the caller lists FALLBACK itself");
    assert!(
        heur_cache::lookup(&HeurKey {
            target: t.clone(),
            mode: HeurMode::Fallback
        })
        .is_none()
    );
}

#[test]
fn the_switch_reads_the_environment() {
    let _s = serial();
    // SAFETY: the tests of this file run one at a time (serial()).
    unsafe { std::env::remove_var(CONCURRENT_MODES_ENV) };
    assert!(!heur_modes::enabled(), "off by default");
    for (v, on) in [
        ("1", true),
        ("on", true),
        ("TRUE", true),
        ("0", false),
        ("", false),
    ] {
        // SAFETY: as above.
        unsafe { std::env::set_var(CONCURRENT_MODES_ENV, v) };
        assert_eq!(heur_modes::enabled(), on, "{v:?}");
    }
    // SAFETY: as above.
    unsafe { std::env::remove_var(CONCURRENT_MODES_ENV) };
}
