//! Malformed graph documents through the C ABI: no call may panic (a contained panic is
//! `DNNP_STATUS_INTERNAL_PANIC`, a bug), and every refusal leaves a last-error message.
//!
//! Seeds: the shipped example graphs (`examples/graphs/`, through `named_examples`) and every op's
//! example graph (`ir::examples::example`). Each seed is mutated structurally by a seeded PRNG (a
//! number made extreme, a string swapped for another name or type, an array shortened or
//! lengthened, a key dropped, a value replaced by one of another type; one to three edits per
//! document) and the text is driven through the whole CPU path a framework takes:
//! `dnnp_graph_from_json` → `dnnp_graph_set_target` (the H200: 132 SMs, sm_90, so the bundled
//! engines analyse the graph as they would there) → `dnnp_graph_validate` → `dnnp_graph_explain`
//! → `dnnp_graph_create_plan_list` → `dnnp_plan_list_create_execution_plans` (A, FALLBACK) →
//! per plan its name and workspace size → random selection, deselection and replay calls →
//! `dnnp_plan_list_build_plans` → `dnnp_plan_list_explain`,
//! and `dnnp_plan_list_create_from_json` on the same text, and the cuDNN lowering of the validated
//! graph (`lower_graph`, called directly). The first failing call ends a document;
//! the test fails listing the documents that panicked (first 10, with the message and the edits).
//!
//! `DNNPLAN_JSON_ROBUSTNESS_CASES` sets the number of mutated documents per seed (default 24).

use std::ffi::{CStr, CString, c_char};
use std::ptr;

use dnnplan::cudnn::lower::from_ir::lower_graph;
use dnnplan::ffi::explain::{dnnp_graph_explain, dnnp_plan_list_explain};
use dnnplan::ffi::graph::{
    dnnp_graph_destroy, dnnp_graph_from_json, dnnp_graph_set_target, dnnp_graph_t,
    dnnp_graph_validate,
};
use dnnplan::ffi::plan::{
    DNNP_BUILD_POLICY_ALL, DNNP_HEUR_MODE_A, DNNP_HEUR_MODE_FALLBACK, dnnp_engine_id_describe,
    dnnp_graph_create_plan_list, dnnp_plan_list_build_plan_at_index, dnnp_plan_list_build_plans,
    dnnp_plan_list_create_execution_plan, dnnp_plan_list_create_execution_plans,
    dnnp_plan_list_create_from_json, dnnp_plan_list_deselect_engines,
    dnnp_plan_list_deselect_workspace_greater_than, dnnp_plan_list_destroy,
    dnnp_plan_list_get_count, dnnp_plan_list_get_engine_and_knobs, dnnp_plan_list_get_plan_name,
    dnnp_plan_list_get_selected_index, dnnp_plan_list_get_workspace_size,
    dnnp_plan_list_get_workspace_size_at_index, dnnp_plan_list_select_plan, dnnp_plan_list_t,
};
use dnnplan::ffi::{DNNP_STATUS_SUCCESS, dnnp_status_t};
use dnnplan::ir::Graph;
use dnnplan::ir::examples::{example, named_examples};
use dnnplan::ir::tables::all_ops;
use serde_json::{Number, Value};
use support::fuzz::{Outcome, Rng, Tally, classify, env_count, rng};

mod support;

/// Integers at the edges of every width the IR and the engines compute with.
const EDGE_INTS: [i64; 27] = [
    0,
    1 << 20,
    1 << 31,
    1 << 32,
    3 << 30,
    1 << 62,
    -1,
    1,
    2,
    3,
    7,
    63,
    64,
    65,
    127,
    128,
    129,
    4096,
    65_537,
    i32::MAX as i64,
    i32::MAX as i64 + 1,
    -(i32::MAX as i64) - 1,
    u32::MAX as i64,
    1 << 40,
    1 << 53,
    i64::MAX,
    i64::MIN,
];

/// Strings that are names somewhere in the schema, or nowhere.
const EDGE_STRINGS: [&str; 14] = [
    "",
    "x",
    "BFLOAT16",
    "HALF",
    "FLOAT",
    "INT32",
    "INT64",
    "DOUBLE",
    "BOOLEAN",
    "NOT_SET",
    "sdpa",
    "gdn",
    "dnnplan.graph",
    "\u{0}\u{7f}\u{ffff}",
];

/// Every path (object keys and array indices) to a value in `v`, the root included.
fn paths(v: &Value, at: &mut Vec<PathStep>, out: &mut Vec<Vec<PathStep>>) {
    out.push(at.clone());
    match v {
        Value::Object(m) => {
            for (k, child) in m {
                at.push(PathStep::Key(k.clone()));
                paths(child, at, out);
                at.pop();
            }
        }
        Value::Array(a) => {
            for (i, child) in a.iter().enumerate() {
                at.push(PathStep::Index(i));
                paths(child, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

#[derive(Clone, Debug)]
enum PathStep {
    Key(String),
    Index(usize),
}

fn at_path<'a>(v: &'a mut Value, path: &[PathStep]) -> &'a mut Value {
    path.iter().fold(v, |v, step| match step {
        PathStep::Key(k) => &mut v[k.as_str()],
        PathStep::Index(i) => &mut v[*i],
    })
}

/// One structural edit of the value at a random path; returns what it did.
fn mutate(doc: &mut Value, rng: &mut Rng) -> String {
    let mut all = Vec::new();
    paths(doc, &mut Vec::new(), &mut all);
    let path = rng.pick(&all).clone();
    let target = at_path(doc, &path);
    let what = match target {
        Value::Number(old) => {
            let old = old.as_i64();
            let n = match (rng.below(8), old) {
                (0, _) => Value::from(rng.pick(&[0.5, -0.0, 1e300, -1e-300, f64::MAX])),
                // Near the old value: a graph that stays almost valid reaches the engines.
                (1..=3, Some(v)) => Value::from(match rng.below(4) {
                    0 => v.wrapping_add(1),
                    1 => v.wrapping_sub(1),
                    2 => v.wrapping_mul(2),
                    _ => v.wrapping_mul(1 << 20),
                }),
                _ => Value::Number(Number::from(rng.pick(&EDGE_INTS))),
            };
            *target = n.clone();
            format!("number -> {n}")
        }
        Value::String(_) => {
            let s = rng.pick(&EDGE_STRINGS);
            *target = Value::from(s);
            format!("string -> {s:?}")
        }
        Value::Bool(b) => {
            *target = Value::Bool(!*b);
            "bool flipped".to_owned()
        }
        Value::Array(a) => match rng.below(4) {
            0 if !a.is_empty() => {
                let i = rng.below(a.len());
                a.remove(i);
                format!("array: element {i} removed")
            }
            1 if !a.is_empty() => {
                let i = rng.below(a.len());
                let dup = a[i].clone();
                a.push(dup);
                format!("array: element {i} appended again")
            }
            2 => {
                a.clear();
                "array emptied".to_owned()
            }
            _ => {
                a.push(Value::from(rng.pick(&EDGE_INTS)));
                "array: an integer appended".to_owned()
            }
        },
        Value::Object(m) => {
            if !m.is_empty() && rng.below(2) == 0 {
                let keys: Vec<String> = m.keys().cloned().collect();
                let k = rng.pick(&keys).clone();
                m.remove(&k);
                format!("key {k:?} removed")
            } else {
                m.insert("unexpected".to_owned(), Value::from(1));
                "key \"unexpected\" added".to_owned()
            }
        }
        Value::Null => {
            *target = Value::from(0);
            "null -> 0".to_owned()
        }
    };
    // Sometimes a value of another type altogether.
    if rng.below(10) == 0 && !path.is_empty() {
        let target = at_path(doc, &path);
        let other = match rng.below(4) {
            0 => Value::Null,
            1 => Value::from("x"),
            2 => Value::Array(vec![]),
            _ => Value::Object(Default::default()),
        };
        *target = other.clone();
        return format!("{path:?}: replaced by {other}");
    }
    format!("{path:?}: {what}")
}

/// Checks one call's status: success goes on; a refusal with a message ends the walk; a panic or
/// a silent refusal is a bug.
fn check(call: &str, status: dnnp_status_t) -> Result<(), Outcome> {
    match classify(call, status) {
        Outcome::Passed => Ok(()),
        other => Err(other),
    }
}

/// As [`check`], but a refusal with a message goes on (only a bug ends the walk).
fn bugs_only(call: &str, status: dnnp_status_t) -> Result<(), Outcome> {
    match classify(call, status) {
        Outcome::Bug(b) => Err(Outcome::Bug(b)),
        _ => Ok(()),
    }
}

/// Text output of a `(buf, cap, needed)` call: asks for the size first, then reads.
fn text_call(
    call: &str,
    f: impl Fn(*mut c_char, usize, *mut usize) -> dnnp_status_t,
) -> Result<(), Outcome> {
    let mut needed = 0usize;
    let status = f(ptr::null_mut(), 0, &mut needed);
    if status != DNNP_STATUS_SUCCESS && needed == 0 {
        return check(call, status);
    }
    let mut buf = vec![0 as c_char; needed + 1];
    check(call, f(buf.as_mut_ptr(), buf.len(), &mut needed))
}

/// The graph half of the walk: parse, target, validate, explain, plan list.
fn walk_graph(text: &CStr, rng: &mut Rng) -> Result<(), Outcome> {
    let mut graph: *mut dnnp_graph_t = ptr::null_mut();
    // SAFETY: NUL-terminated text, `graph` valid for one write.
    check("dnnp_graph_from_json", unsafe {
        dnnp_graph_from_json(text.as_ptr(), &mut graph)
    })?;
    let result = walk_parsed(graph, rng);
    // SAFETY: a live graph from dnnp_graph_from_json.
    unsafe { dnnp_graph_destroy(graph) };
    result
}

fn walk_parsed(graph: *mut dnnp_graph_t, rng: &mut Rng) -> Result<(), Outcome> {
    // SAFETY: `graph` is live for the whole function; every out-pointer is valid for its writes.
    unsafe {
        check(
            "dnnp_graph_set_target",
            dnnp_graph_set_target(graph, ptr::null(), 132, 90),
        )?;
        check("dnnp_graph_validate", dnnp_graph_validate(graph))?;
        // Heuristic modes: usually A and FALLBACK; one walk in eight any list (repeats, unknown
        // values, none), which a refusal then names.
        let modes: Vec<u32> = if rng.chance(8) {
            (0..rng.below(4))
                .map(|_| rng.pick(&[0u32, 1, 2, 3, 4, 77, u32::MAX]))
                .collect()
        } else {
            vec![DNNP_HEUR_MODE_A, DNNP_HEUR_MODE_FALLBACK]
        };
        text_call("dnnp_graph_explain", |b, c, n| {
            dnnp_graph_explain(graph, modes.as_ptr(), modes.len(), b, c, n)
        })?;
        let mut list: *mut dnnp_plan_list_t = ptr::null_mut();
        check(
            "dnnp_graph_create_plan_list",
            dnnp_graph_create_plan_list(graph, &mut list),
        )?;
        let result = walk_list(list, &modes, rng);
        dnnp_plan_list_destroy(list);
        result
    }
}

/// The plan-list half: execution plans, names, workspace sizes, random selection, deselection
/// and replay calls ([`poke_list`]), build, explain.
///
/// # Safety
/// `list` live.
unsafe fn walk_list(
    list: *mut dnnp_plan_list_t,
    modes: &[u32],
    rng: &mut Rng,
) -> Result<(), Outcome> {
    // SAFETY: per the contract; every out-pointer is valid for its writes.
    unsafe {
        check(
            "dnnp_plan_list_create_execution_plans",
            dnnp_plan_list_create_execution_plans(list, modes.as_ptr(), modes.len()),
        )?;
        let mut count = 0usize;
        check(
            "dnnp_plan_list_get_count",
            dnnp_plan_list_get_count(list, &mut count),
        )?;
        for i in 0..count {
            text_call("dnnp_plan_list_get_plan_name", |b, c, n| {
                dnnp_plan_list_get_plan_name(list, i, b, c, n)
            })?;
            let mut bytes = 0u64;
            // A refusal here is one plan's; the others are still asked.
            bugs_only(
                "dnnp_plan_list_get_workspace_size_at_index",
                dnnp_plan_list_get_workspace_size_at_index(list, i, &mut bytes),
            )?;
        }
        for _ in 0..4 {
            poke_list(list, count, rng)?;
        }
        bugs_only(
            "dnnp_plan_list_build_plans",
            dnnp_plan_list_build_plans(list, DNNP_BUILD_POLICY_ALL),
        )?;
        text_call("dnnp_plan_list_explain", |b, c, n| {
            dnnp_plan_list_explain(list, b, c, n)
        })
    }
}

/// One random call of the plan-list API on a list of `count` plans: select, read an entry's engine
/// and knobs (into a buffer that may be short), deselect by name or workspace, replay an
/// (engine id, knobs) pair drawn at random or read from an entry, build one index, read the
/// selection and the workspace, describe an engine id. Indices may be out of range.
///
/// # Safety
/// `list` live.
unsafe fn poke_list(
    list: *mut dnnp_plan_list_t,
    count: usize,
    rng: &mut Rng,
) -> Result<(), Outcome> {
    let index = rng.pick(&[0, 1, count, count.saturating_sub(1), count + 5, usize::MAX]);
    let ids = [20_103i64, 0, -1, 7, 1 << 40, i64::MAX, i64::MIN];
    // SAFETY: `list` live; every array is as long as the count beside it; out-pointers valid.
    unsafe {
        match rng.below(8) {
            0 => bugs_only(
                "dnnp_plan_list_select_plan",
                dnnp_plan_list_select_plan(list, index),
            ),
            1 => {
                let cap = rng.pick(&[0usize, 1, 16]);
                let (mut types, mut values) = (vec![0u32; cap], vec![0i64; cap]);
                let (mut id, mut n) = (0i64, 0usize);
                bugs_only(
                    "dnnp_plan_list_get_engine_and_knobs",
                    dnnp_plan_list_get_engine_and_knobs(
                        list,
                        index,
                        &mut id,
                        types.as_mut_ptr(),
                        values.as_mut_ptr(),
                        cap,
                        &mut n,
                    ),
                )
            }
            2 => {
                let names: Vec<CString> = (0..rng.below(3))
                    .map(|_| c_text(rng.pick(&["gdn_sm90", "", "eng0", "bogus", "cudnn_backend"])))
                    .collect();
                let ptrs: Vec<*const c_char> = names.iter().map(|n| n.as_ptr()).collect();
                bugs_only(
                    "dnnp_plan_list_deselect_engines",
                    dnnp_plan_list_deselect_engines(list, ptrs.as_ptr(), ptrs.len()),
                )
            }
            3 => bugs_only(
                "dnnp_plan_list_deselect_workspace_greater_than",
                dnnp_plan_list_deselect_workspace_greater_than(
                    list,
                    rng.pick(&[0u64, 1 << 20, u64::MAX]),
                ),
            ),
            4 => {
                let n = rng.below(4);
                let types: Vec<u32> = (0..n).map(|_| rng.pick(&[0u32, 1, 24, 30, 999])).collect();
                let values: Vec<i64> = (0..n).map(|_| rng.pick(&EDGE_INTS)).collect();
                let mut at = 0usize;
                bugs_only(
                    "dnnp_plan_list_create_execution_plan",
                    dnnp_plan_list_create_execution_plan(
                        list,
                        rng.pick(&ids),
                        types.as_ptr(),
                        values.as_ptr(),
                        n,
                        &mut at,
                    ),
                )
            }
            5 => bugs_only(
                "dnnp_plan_list_build_plan_at_index",
                dnnp_plan_list_build_plan_at_index(list, index),
            ),
            6 => {
                let (mut at, mut bytes) = (0usize, 0u64);
                bugs_only(
                    "dnnp_plan_list_get_selected_index",
                    dnnp_plan_list_get_selected_index(list, &mut at),
                )?;
                bugs_only(
                    "dnnp_plan_list_get_workspace_size",
                    dnnp_plan_list_get_workspace_size(list, &mut bytes),
                )
            }
            _ => {
                let id = rng.pick(&ids);
                text_call("dnnp_engine_id_describe", |b, c, n| {
                    dnnp_engine_id_describe(id, b, c, n)
                })
                .or_else(|e| match e {
                    Outcome::Bug(b) => Err(Outcome::Bug(b)),
                    _ => Ok(()),
                })
            }
        }
    }
}

fn c_text(s: &str) -> CString {
    CString::new(s).expect("no NUL")
}

/// `dnnp_plan_list_create_from_json` on the same text (its own parse and planning path).
fn walk_list_from_json(text: &CStr) -> Result<(), Outcome> {
    let mut list: *mut dnnp_plan_list_t = ptr::null_mut();
    // SAFETY: NUL-terminated text, `list` valid for one write.
    check("dnnp_plan_list_create_from_json", unsafe {
        dnnp_plan_list_create_from_json(text.as_ptr(), &mut list)
    })?;
    // SAFETY: a live list from the call above.
    unsafe { dnnp_plan_list_destroy(list) };
    Ok(())
}

/// The cuDNN lowering of the validated graph (`lower_graph`, pure: no library needed) at three
/// backend versions; it runs under the C ABI only where cuDNN is loaded, so it is called here
/// directly and a panic is caught and reported.
fn walk_lowering(text: &str) -> Result<(), Outcome> {
    let lowered = std::panic::catch_unwind(|| {
        let Ok(mut g) = Graph::from_json(text) else {
            return;
        };
        if g.validate().is_ok() {
            for version in [90_000, 91_900, 92_100] {
                let _ = lower_graph(&g, version);
            }
        }
    });
    lowered.map_err(|p| {
        let what = p
            .downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| (*s).to_owned()))
            .unwrap_or_default();
        Outcome::Bug(format!("lower_graph: panic: {what}"))
    })
}

/// The seed documents: the shipped examples and every op's example graph.
fn seeds() -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = named_examples()
        .expect("the shipped examples build")
        .into_iter()
        .map(|(stem, g)| (stem.to_owned(), g.to_json_value()))
        .collect();
    for op in all_ops() {
        let ex = example(op.name).unwrap_or_else(|e| panic!("example of {}: {e}", op.name));
        out.push((op.name.to_owned(), ex.graph.to_json_value()));
    }
    out
}

/// Walks `per_seed` mutations of every seed document (and the document itself) from `rng`.
fn walk_all(seeds: &[(String, Value)], per_seed: usize, rng: &mut Rng) -> Tally {
    let mut tally = Tally::default();
    for (name, seed) in seeds {
        // The unmutated seed walks the whole path without a bug as well.
        for case in 0..=per_seed {
            let mut doc = seed.clone();
            let edits: Vec<String> = (0..if case == 0 { 0 } else { 1 + rng.below(3) })
                .map(|_| mutate(&mut doc, rng))
                .collect();
            let text = CString::new(doc.to_string()).expect("JSON text has no NUL byte");
            let lowering = walk_lowering(text.to_str().expect("JSON text is UTF-8"));
            for walk in [walk_graph(&text, rng), walk_list_from_json(&text), lowering] {
                let outcome = walk.err().unwrap_or(Outcome::Passed);
                tally.add(format_args!("{name} {edits:?}"), outcome);
            }
        }
    }
    tally
}

#[test]
fn malformed_graph_documents_never_panic_and_every_refusal_says_why() {
    let per_seed: usize = env_count("DNNPLAN_JSON_ROBUSTNESS_CASES", 24);
    let seeds = seeds();
    assert!(seeds.len() > 100, "every op has an example");
    let tally = walk_all(&seeds, per_seed, &mut rng(0x9e37_79b9_7f4a_7c15));
    tally.assert_clean(&format!("{} seeds, walks to the end", seeds.len()));
}

#[test]
fn the_same_walks_from_four_threads_at_once_never_panic() {
    // The process-wide state the walks share (the engine manifest, the backend provider and its
    // caches, the last-error slots) under concurrent planning: four threads, other streams.
    let per_seed = env_count("DNNPLAN_JSON_ROBUSTNESS_CASES", 24) / 4 + 1;
    let seeds = seeds();
    let tallies: Vec<Tally> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..4u64)
            .map(|t| {
                let seeds = &seeds;
                scope.spawn(move || walk_all(seeds, per_seed, &mut rng(0x5851_f42d_4c95_7f2d + t)))
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a walking thread panicked"))
            .collect()
    });
    let mut all = Tally::default();
    for t in tallies {
        all.passed += t.passed;
        all.refused += t.refused;
        all.bugs.extend(t.bugs);
    }
    all.assert_clean("four threads, walks to the end");
}
