//! Random sequences of graph-building and query calls through the C ABI: no call may panic (a
//! contained panic is `DNNP_STATUS_INTERNAL_PANIC`, a bug), and every refusal leaves a last-error
//! message.
//!
//! Each sequence starts from `dnnp_graph_create` (data types drawn, invalid codes included) and
//! makes 60 calls drawn by a seeded PRNG: tensors created and edited (dims and strides at the edges
//! of 64 bits, ranks 0..=6, data types and reorderings by raw code, uids, ragged offsets,
//! pass-by-value scalars, virtual flags), op builders begun by catalogue name (or a bogus one) and
//! given ports and attributes from that op's spec (or bogus names, values of the wrong type, lists
//! of any length, NaN and infinities), finished into the graph or dropped, graph flags, validation,
//! and every query (node and tensor counts, kinds, names, port uids, attributes, tensor records
//! with short buffers, JSON, key, clone); the sequence ends by planning the graph.
//!
//! `DNNPLAN_BUILDER_ROBUSTNESS_SEQUENCES` sets the number of sequences (default 400).

use std::ffi::{CString, c_char, c_void};
use std::ptr;

use dnnplan::ffi::graph::*;
use dnnplan::ffi::graph_builder::*;
use dnnplan::ffi::graph_query::*;
use dnnplan::ffi::graph_tensor::*;
use dnnplan::ffi::plan::{
    DNNP_HEUR_MODE_A, dnnp_graph_create_plan_list, dnnp_plan_list_create_execution_plans,
    dnnp_plan_list_destroy, dnnp_plan_list_t,
};
use dnnplan::ffi::{DNNP_STATUS_SUCCESS, dnnp_status_t};
use dnnplan::ir::op::OpSpec;
use dnnplan::ir::tables::all_ops;
use support::fuzz::{Rng, Tally, env_count, rng};

mod support;

const EDGES: [i64; 16] = [
    0,
    1,
    -1,
    2,
    3,
    16,
    64,
    128,
    4096,
    1 << 31,
    1 << 40,
    i64::MAX,
    i64::MIN,
    -64,
    7,
    8,
];

/// Data-type codes: mostly the valid ones (0..=12 hold the common types), some far outside.
fn dtype_code(rng: &mut Rng) -> u32 {
    if rng.chance(8) {
        rng.pick(&[99, 1000, u32::MAX])
    } else {
        rng.below(16) as u32
    }
}

fn c(s: &str) -> CString {
    CString::new(s).expect("no NUL")
}

/// The state of one sequence: the graph, the uids made so far, an open builder and its op.
struct Seq<'a> {
    graph: *mut dnnp_graph_t,
    uids: Vec<i64>,
    builder: *mut dnnp_op_builder_t,
    op: Option<&'a OpSpec>,
    /// This sequence's index (the context of its bugs).
    n: usize,
    tally: &'a mut Tally,
}

impl Seq<'_> {
    fn check(&mut self, call: &str, status: dnnp_status_t) {
        self.tally
            .record(format_args!("sequence {}", self.n), call, status);
    }

    fn uid(&mut self, rng: &mut Rng) -> i64 {
        if self.uids.is_empty() || rng.chance(6) {
            rng.pick(&EDGES)
        } else {
            rng.pick(&self.uids)
        }
    }
}

fn dims(rng: &mut Rng) -> Vec<i64> {
    let rank = rng.pick(&[0usize, 1, 2, 3, 3, 4, 4, 6]);
    (0..rank)
        .map(|_| {
            if rng.chance(3) {
                rng.pick(&EDGES)
            } else {
                rng.pick(&[1, 2, 4, 16, 64, 128])
            }
        })
        .collect()
}

/// A port or attribute name: the op's own (usually) or another.
fn name_from(rng: &mut Rng, own: &[&'static str]) -> CString {
    if own.is_empty() || rng.chance(6) {
        c(rng.pick(&["", "x", "q", "input", "Y", "bogus", "padding"]))
    } else {
        c(rng.pick(own))
    }
}

/// One drawn call.
fn step<'a>(s: &mut Seq<'a>, rng: &mut Rng, ops: &'a [OpSpec]) {
    let g = s.graph;
    // SAFETY (every call below): `g` and the builder are live or NULL; every array passed is as
    // long as the count beside it; out-pointers are valid for their writes.
    unsafe {
        match rng.below(20) {
            0..=3 => {
                let d = dims(rng);
                let strides: Option<Vec<i64>> = rng
                    .chance(2)
                    .then(|| d.iter().map(|_| rng.pick(&EDGES)).collect());
                let name = c(rng.pick(&["t", "", "q", "a b"]));
                let uid = if rng.chance(3) { rng.pick(&EDGES) } else { -1 };
                let mut out = 0i64;
                let st = dnnp_graph_tensor_create(
                    g,
                    name.as_ptr(),
                    dtype_code(rng),
                    d.len(),
                    d.as_ptr(),
                    strides.as_ref().map_or(ptr::null(), |v| v.as_ptr()),
                    uid,
                    &mut out,
                );
                if st == DNNP_STATUS_SUCCESS {
                    s.uids.push(out);
                }
                s.check("dnnp_graph_tensor_create", st);
            }
            4 => {
                let (uid, d) = (s.uid(rng), dims(rng));
                let st = if rng.chance(2) {
                    dnnp_graph_tensor_set_dims(g, uid, d.len(), d.as_ptr())
                } else {
                    dnnp_graph_tensor_set_strides(g, uid, d.len(), d.as_ptr())
                };
                s.check("dnnp_graph_tensor_set_dims/strides", st);
            }
            5 => {
                let uid = s.uid(rng);
                let st = match rng.below(6) {
                    0 => dnnp_graph_tensor_set_data_type(g, uid, dtype_code(rng)),
                    1 => dnnp_graph_tensor_set_virtual(g, uid, rng.chance(2)),
                    2 => {
                        let new_uid = rng.pick(&EDGES);
                        let st = dnnp_graph_tensor_set_uid(g, uid, new_uid);
                        if st == DNNP_STATUS_SUCCESS {
                            s.uids.push(new_uid);
                        }
                        st
                    }
                    3 => {
                        let other = s.uid(rng);
                        dnnp_graph_tensor_set_ragged_offset(g, uid, other, rng.pick(&EDGES))
                    }
                    4 => dnnp_graph_tensor_set_reordering(g, uid, rng.pick(&[0, 1, 2, 3, 77])),
                    _ => {
                        let value = [0x3c00_3c00_3c00_3c00u64, 0];
                        let p = if rng.chance(2) {
                            ptr::null()
                        } else {
                            value.as_ptr() as *const c_void
                        };
                        dnnp_graph_tensor_set_pass_by_value(g, uid, p)
                    }
                };
                s.check("dnnp_graph_tensor_set_*", st);
            }
            6 | 7 => {
                if !s.builder.is_null() {
                    dnnp_op_builder_destroy(s.builder);
                    s.builder = ptr::null_mut();
                }
                let op = rng.pick(&(0..ops.len()).collect::<Vec<_>>());
                let name = if rng.chance(10) {
                    c("bogus_op")
                } else {
                    c(ops[op].name)
                };
                s.op = Some(&ops[op]);
                let mut b = ptr::null_mut();
                let st = dnnp_op_builder_begin(name.as_ptr(), &mut b);
                if st == DNNP_STATUS_SUCCESS {
                    s.builder = b;
                }
                s.check("dnnp_op_builder_begin", st);
            }
            8..=10 if !s.builder.is_null() => {
                let op = s.op.expect("a builder has its op");
                let ins: Vec<&'static str> = op.inputs.iter().map(|p| p.name).collect();
                let outs: Vec<&'static str> = op.outputs.iter().map(|p| p.name).collect();
                let uid = s.uid(rng);
                let st = if rng.chance(2) {
                    let port = name_from(rng, &ins);
                    dnnp_op_builder_set_input(s.builder, port.as_ptr(), uid)
                } else {
                    let port = name_from(rng, &outs);
                    dnnp_op_builder_set_output(s.builder, port.as_ptr(), uid)
                };
                s.check("dnnp_op_builder_set_input/output", st);
            }
            11 | 12 if !s.builder.is_null() => {
                let op = s.op.expect("a builder has its op");
                let names: Vec<&'static str> = op.attrs.iter().map(|a| a.name).collect();
                let name = name_from(rng, &names);
                let b = s.builder;
                let ints: Vec<i64> = (0..rng.below(5)).map(|_| rng.pick(&EDGES)).collect();
                let floats = [f64::NAN, f64::INFINITY, -0.0, 1e300, 0.5];
                let st = match rng.below(6) {
                    0 => dnnp_op_builder_set_attr_int(b, name.as_ptr(), rng.pick(&EDGES)),
                    1 => dnnp_op_builder_set_attr_ints(b, name.as_ptr(), ints.as_ptr(), ints.len()),
                    2 => dnnp_op_builder_set_attr_float(b, name.as_ptr(), rng.pick(&floats)),
                    3 => {
                        let n = rng.below(4);
                        dnnp_op_builder_set_attr_floats(b, name.as_ptr(), floats.as_ptr(), n)
                    }
                    4 => dnnp_op_builder_set_attr_bool(b, name.as_ptr(), rng.chance(2)),
                    _ => {
                        let v = c(rng.pick(&["", "CAUSAL", "log", "linear", "NOT_SET", "bogus"]));
                        dnnp_op_builder_set_attr_string(b, name.as_ptr(), v.as_ptr())
                    }
                };
                s.check("dnnp_op_builder_set_attr_*", st);
            }
            13 if !s.builder.is_null() => {
                let st = if rng.chance(2) {
                    dnnp_op_builder_set_compute_data_type(s.builder, dtype_code(rng))
                } else {
                    let name = c(rng.pick(&["n", "", "node 1"]));
                    dnnp_op_builder_set_name(s.builder, name.as_ptr())
                };
                s.check("dnnp_op_builder_set_name/compute", st);
            }
            14 if !s.builder.is_null() => {
                let mut node = 0usize;
                // A builder finishes once; it is destroyed later either way (its contract).
                let st = dnnp_op_builder_finish(s.builder, g, &mut node);
                s.check("dnnp_op_builder_finish", st);
            }
            15 => {
                let st = if rng.chance(2) {
                    dnnp_graph_set_flag(g, rng.pick(&[0, 1, 2, 3, 99]), rng.chance(2))
                } else {
                    dnnp_graph_validate(g)
                };
                s.check("dnnp_graph_set_flag/validate", st);
            }
            _ => query(s, rng),
        }
    }
}

/// One drawn query with an index or uid that may be out of range and buffers that may be short.
fn query(s: &mut Seq<'_>, rng: &mut Rng) {
    let g = s.graph;
    let index = rng.pick(&[0usize, 1, 2, 5, usize::MAX]);
    let mut buf = vec![0 as c_char; rng.pick(&[0usize, 1, 8, 4096])];
    let (bp, cap) = if buf.is_empty() {
        (ptr::null_mut(), 0)
    } else {
        (buf.as_mut_ptr(), buf.len())
    };
    let mut needed = 0usize;
    // SAFETY: `g` live; `buf` valid for `cap` bytes; out-pointers valid for their writes.
    let (call, st) = unsafe {
        match rng.below(10) {
            0 => {
                let mut n = 0usize;
                ("node_count", dnnp_graph_node_count(g, &mut n))
            }
            1 => {
                let mut k = 0u32;
                ("node_op_kind", dnnp_graph_node_op_kind(g, index, &mut k))
            }
            2 => (
                "node_op_name",
                dnnp_graph_node_op_name(g, index, bp, cap, &mut needed),
            ),
            3 => (
                "node_name",
                dnnp_graph_node_name(g, index, bp, cap, &mut needed),
            ),
            4 => {
                let port = c(rng.pick(&["q", "input", "Y", "O", ""]));
                let mut u = 0i64;
                (
                    "node_port_uid",
                    dnnp_graph_node_port_uid(g, index, port.as_ptr(), &mut u),
                )
            }
            5 => (
                "node_attributes_json",
                dnnp_graph_node_attributes_json(g, index, bp, cap, &mut needed),
            ),
            6 => {
                let mut u = 0i64;
                ("tensor_uid_at", dnnp_graph_tensor_uid_at(g, index, &mut u))
            }
            7 => {
                let uid = s.uid(rng);
                let cap = rng.pick(&[0usize, 1, 3, 8]);
                let (mut d, mut st_) = (vec![0i64; cap], vec![0i64; cap]);
                let (mut dt, mut rank, mut v, mut p, mut ro) = (0u32, 0usize, false, false, 0i64);
                (
                    "tensor_get",
                    dnnp_graph_tensor_get(
                        g,
                        uid,
                        &mut dt,
                        &mut rank,
                        if cap == 0 {
                            ptr::null_mut()
                        } else {
                            d.as_mut_ptr()
                        },
                        if cap == 0 {
                            ptr::null_mut()
                        } else {
                            st_.as_mut_ptr()
                        },
                        cap,
                        &mut v,
                        &mut p,
                        &mut ro,
                    ),
                )
            }
            8 => {
                let uid = s.uid(rng);
                (
                    "tensor_json",
                    dnnp_graph_tensor_json(g, uid, bp, cap, &mut needed),
                )
            }
            _ => {
                if rng.chance(2) {
                    ("to_json", dnnp_graph_to_json(g, bp, cap, &mut needed))
                } else {
                    let mut key = [0u8; 32];
                    let st = dnnp_graph_key(g, key.as_mut_ptr());
                    let mut copy = ptr::null_mut();
                    if st == DNNP_STATUS_SUCCESS
                        && dnnp_graph_clone(g, &mut copy) == DNNP_STATUS_SUCCESS
                    {
                        dnnp_graph_destroy(copy);
                    }
                    ("key", st)
                }
            }
        }
    };
    // A short buffer is a refusal that says so; it counts as handled.
    s.check(call, st);
}

#[test]
fn random_builder_and_query_calls_never_panic_and_every_refusal_says_why() {
    let sequences: usize = env_count("DNNPLAN_BUILDER_ROBUSTNESS_SEQUENCES", 400);
    let ops = all_ops();
    let mut rng = rng(0xa409_3822_299f_31d0);
    let mut tally = Tally::default();
    for n in 0..sequences {
        let mut graph = ptr::null_mut();
        // SAFETY: `graph` valid for one write.
        let st = unsafe {
            dnnp_graph_create(
                dtype_code(&mut rng),
                dtype_code(&mut rng),
                dtype_code(&mut rng),
                &mut graph,
            )
        };
        if !tally.record(format_args!("sequence {n}"), "dnnp_graph_create", st) {
            continue;
        }
        let mut s = Seq {
            graph,
            uids: Vec::new(),
            builder: ptr::null_mut(),
            op: None,
            n,
            tally: &mut tally,
        };
        for _ in 0..60 {
            step(&mut s, &mut rng, &ops);
        }
        // SAFETY: live objects; out-pointers valid.
        unsafe {
            if !s.builder.is_null() {
                dnnp_op_builder_destroy(s.builder);
            }
            let mut list: *mut dnnp_plan_list_t = ptr::null_mut();
            let st = dnnp_graph_create_plan_list(graph, &mut list);
            s.check("dnnp_graph_create_plan_list", st);
            if st == DNNP_STATUS_SUCCESS {
                let modes = [DNNP_HEUR_MODE_A];
                let st = dnnp_plan_list_create_execution_plans(list, modes.as_ptr(), 1);
                s.check("dnnp_plan_list_create_execution_plans", st);
                dnnp_plan_list_destroy(list);
            }
            dnnp_graph_destroy(graph);
        }
    }
    tally.assert_clean(&format!("{sequences} builder sequences (calls)"));
}
