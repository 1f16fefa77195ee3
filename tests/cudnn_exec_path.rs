//! Execution paths of backend plans on the CPU, against the recording backend: the plain path
//! builds and destroys a variant pack per call; the reuse path keeps one finalized descriptor per
//! (thread, plan), reuses it as is for repeated pointers, re-points it for new ones, and never
//! shares it with another thread; state of dropped plans is pruned. Without the real cuDNN every
//! path declines cleanly.

use std::ffi::c_void;
use std::sync::Arc;

#[path = "cudnn_support/backend_graphs.rs"]
mod backend_graphs;

use backend_graphs::{matmul, recorder};
use dnnplan::cudnn::backend::{AttrValue, Recorded, Recorder};
use dnnplan::cudnn::consts::*;
use dnnplan::cudnn::emit::emit;
use dnnplan::cudnn::exec_cache;
use dnnplan::cudnn::exec_path::ExecPath;
use dnnplan::cudnn::plan::{BackendPlan, engine_config};

fn matmul_plan(rec: &'static Recorder) -> BackendPlan {
    let opg = Arc::new(emit(rec, matmul(64, 16, 32, CUDNN_DATA_BFLOAT16), None).unwrap());
    let cfg = engine_config(&opg, 0, &[]).unwrap();
    BackendPlan::build(opg, &cfg, std::ptr::null_mut(), "eng0".into()).unwrap()
}

fn ptrs(base: usize) -> Vec<*mut c_void> {
    (0..3).map(|i| (base + i * 0x1000) as *mut c_void).collect()
}

/// The descriptor a call of `path` uses, and the recorded calls it made.
fn pack_of(
    rec: &Recorder,
    plan: &BackendPlan,
    path: ExecPath,
    p: &[*mut c_void],
) -> (usize, Vec<Recorded>) {
    let before = rec.calls().len();
    let id = plan
        .with_variant_pack(path, p, std::ptr::null_mut(), |d| Ok(d.raw() as usize))
        .unwrap();
    (id, rec.calls()[before..].to_vec())
}

fn creates(calls: &[Recorded]) -> usize {
    calls
        .iter()
        .filter(
            |c| matches!(c, Recorded::Create(_, t) if *t == CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR),
        )
        .count()
}

fn pointers_set(calls: &[Recorded], desc: usize) -> Option<Vec<usize>> {
    calls.iter().rev().find_map(|c| match c {
        Recorded::Set(d, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, AttrValue::Pointers(v))
            if *d == desc =>
        {
            Some(v.iter().map(|p| *p as usize).collect())
        }
        _ => None,
    })
}

#[test]
fn plain_path_builds_and_destroys_a_pack_per_call() {
    let rec = recorder();
    let plan = matmul_plan(rec);
    let (d1, c1) = pack_of(rec, &plan, ExecPath::Plain, &ptrs(0x10000));
    let (_d2, c2) = pack_of(rec, &plan, ExecPath::Plain, &ptrs(0x10000));
    for c in [&c1, &c2] {
        assert_eq!(creates(c), 1, "{c:?}");
        assert!(c.iter().any(|r| matches!(r, Recorded::Finalize(_))));
    }
    assert!(c1.contains(&Recorded::Destroy(d1)), "{c1:?}");
}

#[test]
fn reuse_path_keeps_a_pack_per_pointer_set_up_to_a_bound() {
    let rec = recorder();
    let plan = matmul_plan(rec);
    let (a, p1) = (ptrs(0x10000), ptrs(0x20000));
    let (d1, c1) = pack_of(rec, &plan, ExecPath::ReusePack, &a);
    assert_eq!(creates(&c1), 1);
    assert_eq!(
        pointers_set(&c1, d1).unwrap(),
        a.iter().map(|p| *p as usize).collect::<Vec<_>>()
    );
    // Same pointers: the cached descriptor as is, no backend call at all.
    let (d2, c2) = pack_of(rec, &plan, ExecPath::ReusePack, &a);
    assert_eq!(d2, d1);
    assert!(c2.is_empty(), "{c2:?}");
    // A second pointer set gets its own descriptor; alternating between the two then makes no
    // backend call at all.
    let (d3, c3) = pack_of(rec, &plan, ExecPath::ReusePack, &p1);
    assert_ne!(d3, d1);
    assert_eq!(creates(&c3), 1);
    assert_eq!(
        pointers_set(&c3, d3).unwrap(),
        p1.iter().map(|p| *p as usize).collect::<Vec<_>>()
    );
    for _ in 0..3 {
        let (x, cx) = pack_of(rec, &plan, ExecPath::ReusePack, &a);
        let (y, cy) = pack_of(rec, &plan, ExecPath::ReusePack, &p1);
        assert_eq!((x, y), (d1, d3));
        assert!(cx.is_empty() && cy.is_empty(), "{cx:?} {cy:?}");
    }
    // Up to PACKS_PER_PLAN sets; the next one re-points the least recently used pack (here the
    // one of `a`, used before `p1`'s), re-finalized, never a stale pointer.
    let mut descs = vec![d1, d3];
    for k in 2..exec_cache::PACKS_PER_PLAN {
        let (d, c) = pack_of(rec, &plan, ExecPath::ReusePack, &ptrs(0x10000 * (k + 2)));
        assert_eq!(creates(&c), 1);
        descs.push(d);
    }
    let fresh = ptrs(0x90000);
    let (d4, c4) = pack_of(rec, &plan, ExecPath::ReusePack, &fresh);
    assert_eq!(creates(&c4), 0, "bounded: {c4:?}");
    assert_eq!(d4, d1, "the least recently used pack is re-pointed");
    assert_eq!(
        pointers_set(&c4, d1).unwrap(),
        fresh.iter().map(|p| *p as usize).collect::<Vec<_>>()
    );
    assert!(c4.contains(&Recorded::Finalize(d1)));
    assert_eq!(exec_cache::repoint_supported(), Some(true));
    // `a` is no longer cached: it takes the next least recently used pack (p1's), re-pointed.
    let (d5, c5) = pack_of(rec, &plan, ExecPath::ReusePack, &a);
    assert_eq!((d5, creates(&c5)), (d3, 0));
    assert_eq!(
        pointers_set(&c5, d3).unwrap(),
        a.iter().map(|p| *p as usize).collect::<Vec<_>>()
    );
    // Another thread gets its own descriptor.
    let other = std::thread::scope(|s| {
        s.spawn(|| pack_of(rec, &plan, ExecPath::ReusePack, &ptrs(0x20000)).0)
            .join()
            .unwrap()
    });
    assert_ne!(other, d1);
    // The wrong pointer count is refused with the plan's name, as on the plain path.
    let e = plan
        .with_variant_pack(ExecPath::ReusePack, &a[..2], std::ptr::null_mut(), |_| {
            Ok(())
        })
        .unwrap_err()
        .to_string();
    assert!(e.contains("2 pointers") && e.contains("eng0"), "{e}");
}

#[test]
fn state_of_dropped_plans_is_pruned() {
    let rec = recorder();
    let before = exec_cache::thread_entries().0;
    for i in 0..(exec_cache::CAPACITY + 4) {
        let plan = matmul_plan(rec);
        pack_of(rec, &plan, ExecPath::ReusePack, &ptrs(0x10000 * (i + 1)));
    }
    let (packs, graphs) = exec_cache::thread_entries();
    assert!(packs <= before.max(1) + 1, "{packs} entries kept");
    assert_eq!(graphs, 0);
    // Distinct plans never share ids.
    let (p, q) = (matmul_plan(rec), matmul_plan(rec));
    assert_ne!(p.id(), q.id());
}

#[test]
fn every_path_declines_without_the_real_cudnn() {
    let rec = recorder();
    let plan = matmul_plan(rec);
    assert_eq!(plan.exec_path(), ExecPath::from_env().unwrap());
    for path in ExecPath::ALL {
        plan.set_exec_path(path);
        assert_eq!(plan.exec_path(), path);
        // SAFETY: the recording backend never dereferences pointers; execute refuses first.
        let e = unsafe {
            plan.execute(
                std::ptr::null_mut(),
                std::ptr::null_mut(),
                &ptrs(0x10000),
                std::ptr::null_mut(),
            )
        }
        .unwrap_err();
        assert!(e.to_string().contains("real cuDNN"), "{path:?}: {e}");
    }
    assert_eq!(plan.cuda_graph_unsupported(), None);
}

#[path = "cudnn_support/bench_graphs.rs"]
mod bench_graphs;

#[test]
fn benchmark_graphs_validate_and_lower() {
    use dnnplan::cudnn::lower::from_ir::lower_graph;
    for doc in [
        bench_graphs::sdpa_inference_json(1, 1, 64, 64),
        bench_graphs::sdpa_inference_json(4, 16, 4096, 128),
        bench_graphs::matmul_json(256, 256, 128),
    ] {
        let mut g = dnnplan::ir::Graph::from_json(&doc).unwrap();
        g.validate().unwrap();
        let bg = lower_graph(&g, 91900).unwrap();
        let counts = bench_graphs::element_counts(&doc);
        assert_eq!(
            bg.user_uids(),
            counts.iter().map(|c| c.0).collect::<Vec<_>>()
        );
        emit(recorder(), bg, None).unwrap();
    }
}
