//! Backend graphs built directly with `GraphBuilder` and lowered, for the tests that emit them
//! against the recording backend, and the recorder helpers those tests share (tests/cudnn_*.rs;
//! included with `#[path]`).

#![allow(dead_code)]

use dnnplan::cudnn::backend::{AttrValue, Recorded, Recorder};
use dnnplan::cudnn::graph::{BackendGraph, GraphBuilder};
use dnnplan::cudnn::lower::{self, MatmulRequest};

/// A lowered `[1, m, k] x [1, k, n]` matmul of `dtype` (packed; uids a 1, b 2 -> c 3), ready to
/// emit.
pub fn matmul(m: i64, n: i64, k: i64, dtype: u32) -> BackendGraph {
    let mut g = GraphBuilder::new();
    let a = g
        .user_tensor(1, "a", dtype, &[1, m, k], &[m * k, k, 1])
        .unwrap();
    let b = g
        .user_tensor(2, "b", dtype, &[1, k, n], &[k * n, n, 1])
        .unwrap();
    let c = g
        .user_tensor(3, "c", dtype, &[1, m, n], &[m * n, n, 1])
        .unwrap();
    lower::matmul(
        &mut g,
        &MatmulRequest {
            a,
            b,
            out: c,
            ..Default::default()
        },
    )
    .unwrap();
    g.finish()
}

/// `rec` leaked for the `'static` borrow `emit` and the plans keep.
pub fn leaked(rec: Recorder) -> &'static Recorder {
    Box::leak(Box::new(rec))
}

/// A fresh recording backend (no heuristics script).
pub fn recorder() -> &'static Recorder {
    leaked(Recorder::default())
}

/// The attribute names set on any descriptor, in call order.
pub fn attribute_names(rec: &Recorder) -> Vec<u32> {
    rec.calls()
        .iter()
        .filter_map(|c| match c {
            Recorded::Set(_, n, _) => Some(*n),
            _ => None,
        })
        .collect()
}

/// The descriptors `calls` created, as `(id, type)` in call order.
pub fn created(calls: &[Recorded]) -> Vec<(usize, u32)> {
    calls
        .iter()
        .filter_map(|c| match c {
            Recorded::Create(id, ty) => Some((*id, *ty)),
            _ => None,
        })
        .collect()
}

/// The ids of the descriptors of type `ty` that `calls` created, in creation order.
pub fn ids_of_type(calls: &[Recorded], ty: u32) -> Vec<usize> {
    created(calls)
        .into_iter()
        .filter(|&(_, t)| t == ty)
        .map(|(id, _)| id)
        .collect()
}

/// Whether the first descriptor of type `ty` in `calls` had attribute `name` set to `value`.
pub fn first_has(calls: &[Recorded], ty: u32, name: u32, value: AttrValue) -> bool {
    let id = *ids_of_type(calls, ty)
        .first()
        .expect("no descriptor of that type");
    calls.contains(&Recorded::Set(id, name, value))
}
