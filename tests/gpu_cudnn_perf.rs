//! GPU checks and the instrumented benchmark of cuDNN plan-list creation (feature `gpu-tests`, H200):
//! * `knob_reads_match_the_full_read`: on the real cuDNN, reading a config's knob choices with the
//!   short array first ([`KNOB_PROBE`]) gives exactly the knobs of a read with the upper bound
//!   (what the count-only query answers is printed);
//! * `heuristics_cache_replays_the_backend_list`: through the C ABI, a second plan list of a graph
//!   is listed from the cache (no heuristics query), names the same plans in the same order, and
//!   its replayed plan builds and computes bit-identical outputs; `DNNPLAN_CUDNN_HEUR_CACHE=0`
//!   bypasses the cache;
//! * `the_disk_tier_lists_a_graph_seen_by_an_earlier_process`: two child processes of this test
//!   binary share a fresh disk tier (`DNNPLAN_CUDNN_HEUR_DISK_CACHE`): the first queries the
//!   backend and writes, the second lists both modes from disk (no heuristics query), names the
//!   same plans, and its replayed plan computes what a queried plan computes, bit for bit;
//! * `concurrent_modes_list_and_run_what_sequential_modes_do`: with
//!   `DNNPLAN_CUDNN_CONCURRENT_MODES=1` and the cache bypassed, a plan list (A and FALLBACK asked
//!   at once, FALLBACK on a side handle) names the plans a sequential listing names, every index
//!   builds (or declines) in both alike, and the selected plans compute the same, bit for bit;
//! * `bench_cudnn_creation` (ignored; run by bench/run_cudnn_bench.sh): where a heuristics query's
//!   time goes, per backend call, and plan-list creation through the C ABI cold (both cache tiers
//!   bypassed), from the disk tier (the in-process map emptied before each creation) and cached
//!   in the process. Prints `DNNP-HEUR |` and `DNNP-CREATE2 |` lines; no timed assertions;
//! * `bench_cudnn_creation_fresh_process` (ignored; run twice by the bench script over one disk
//!   tier): each graph's first creation in a fresh process, then from disk and cached. Prints
//!   `DNNP-FRESH |` lines;
//! * `diag_cudnn_cold_creation` (ignored): why a cold heuristics query costs 2-4x the C++
//!   frontend's: the same cold queries under each hypothesis in one process (test thread vs a
//!   fresh thread, live configs of other / the same graphs, GPU idle vs busy, an SM-count target,
//!   CUDA runtime init, pinned libraries, libcudnn promoted to RTLD_GLOBAL, glibc told to keep
//!   freed memory), the minor page faults per query, which shared objects a query maps and
//!   unmaps, and C ABI cold creation with and without the graph's first list alive. Prints
//!   `DIAG*|` lines; no timed assertions.

#![cfg(feature = "gpu-tests")]

#[path = "support/cudnn_gpu.rs"]
mod cudnn_gpu;

use std::ffi::c_void;

use cudarc::driver::{result as drv, sys as drv_sys};

use cudnn_gpu::{DevBuf, alloc, capi, capi_ok, creation_median_ms, gpu, plan_list, upload};
use dnnplan::cudnn::api::{CudnnApi, RawDescriptor};
use dnnplan::cudnn::consts::*;
use dnnplan::cudnn::emit::{OperationGraph, emit};
use dnnplan::cudnn::heur_cache::{self, DeviceKey, GraphTarget, HEUR_CACHE_ENV, graph_key};
use dnnplan::cudnn::loader;
use dnnplan::cudnn::lower::from_ir::lower_graph;
use dnnplan::cudnn::plan::{EngineConfigEntry, HeurMode, KNOB_PROBE, config_knobs, query_mode};
use dnnplan::cudnn::status::CudnnStatus;
use dnnplan::cudnn::{heur_disk, heur_modes};

#[path = "cudnn_support/bench_graphs.rs"]
mod bench_graphs;

fn plan_names(list: *mut capi::dnnp_plan_list_t) -> Vec<String> {
    let mut n = 0usize;
    capi_ok("count", unsafe {
        capi::dnnp_plan_list_get_count(list, &mut n)
    });
    (0..n)
        .map(|i| {
            let mut buf = vec![0 as std::ffi::c_char; 512];
            let mut needed = 0usize;
            capi_ok("plan name", unsafe {
                capi::dnnp_plan_list_get_plan_name(
                    list,
                    i,
                    buf.as_mut_ptr(),
                    buf.len(),
                    &mut needed,
                )
            });
            unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
                .to_string_lossy()
                .into_owned()
        })
        .collect()
}

/// Points the disk tier at `dir` (`"off"` turns it off).
fn set_disk(dir: &str) {
    // SAFETY: these tests run with --test-threads=1.
    unsafe { std::env::set_var("DNNPLAN_CUDNN_HEUR_DISK_CACHE", dir) }
}

fn set_cache(on: bool) {
    // SAFETY: these tests run with --test-threads=1.
    unsafe {
        if on {
            std::env::remove_var(HEUR_CACHE_ENV)
        } else {
            std::env::set_var(HEUR_CACHE_ENV, "0")
        }
    }
}

/// Deterministic bf16 bytes in [-1, 1).
fn random_bf16_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut s = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(n * 2);
    for _ in 0..n {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        let v = (s >> 11) as f64 / (1u64 << 53) as f64 * 2.0 - 1.0;
        out.extend_from_slice(&half::bf16::from_f64(v).to_le_bytes());
    }
    out
}

/// Builds `list`, runs it once on fixed inputs and returns the bytes of operand `out_uid`.
fn run_once(doc: &str, list: *mut capi::dnnp_plan_list_t, out_uid: i64) -> Vec<u8> {
    let g = gpu();
    let mut handle: *mut capi::dnnp_handle_t = std::ptr::null_mut();
    capi_ok("handle", unsafe {
        capi::dnnp_handle_create(g.stream as *mut c_void, &mut handle)
    });
    capi_ok("build", unsafe {
        capi::dnnp_plan_list_build_plans(list, 0)
    });
    let mut ws_bytes = 0u64;
    capi_ok("workspace", unsafe {
        capi::dnnp_plan_list_get_workspace_size(list, &mut ws_bytes)
    });
    let ws = alloc(ws_bytes as usize);
    let counts = bench_graphs::element_counts(doc);
    let mut uids = vec![0i64; 16];
    let mut n = 0usize;
    capi_ok("operand uids", unsafe {
        capi::dnnp_plan_list_get_operand_uids(list, uids.as_mut_ptr(), uids.len(), &mut n)
    });
    uids.truncate(n);
    let bufs: Vec<(i64, DevBuf, usize)> = uids
        .iter()
        .map(|u| {
            let elems = counts.iter().find(|c| c.0 == *u).unwrap().1;
            let buf = alloc(elems * 2);
            if *u != out_uid {
                let data = random_bf16_bytes(elems, 7 + *u as u64);
                upload(&buf, &data);
            }
            (*u, buf, elems * 2)
        })
        .collect();
    let ptrs: Vec<*mut c_void> = bufs.iter().map(|b| b.1.0 as *mut c_void).collect();
    capi_ok("execute", unsafe {
        capi::dnnp_plan_list_execute(
            list,
            handle,
            ptrs.as_ptr(),
            ptrs.len(),
            ws.0 as *mut c_void,
            ws_bytes.max(256) as usize,
            std::ptr::null(),
            0,
        )
    });
    unsafe { drv::stream::synchronize(g.stream) }.unwrap();
    let (_, buf, bytes) = bufs.iter().find(|b| b.0 == out_uid).unwrap();
    let mut host = vec![0u8; *bytes];
    unsafe { drv::memcpy_dtoh_sync(host.as_mut_slice(), buf.0) }.unwrap();
    unsafe { capi::dnnp_handle_destroy(handle) };
    host
}

fn opgraph_of(doc: &str) -> OperationGraph {
    let g = gpu();
    let mut ir = dnnplan::ir::Graph::from_json(doc).unwrap();
    ir.validate().unwrap();
    let bg = lower_graph(&ir, loader::version().unwrap()).unwrap();
    emit(loader::api().unwrap(), bg, Some(g.handle)).unwrap()
}

/// `doc`'s operation graph with its mode A and FALLBACK configs, for the caller to keep alive.
fn anchored(
    doc: &str,
) -> (
    OperationGraph,
    Vec<EngineConfigEntry>,
    Vec<EngineConfigEntry>,
) {
    let o = opgraph_of(doc);
    let a = query_mode(&o, HeurMode::A).unwrap();
    let f = query_mode(&o, HeurMode::Fallback).unwrap();
    (o, a, f)
}

#[test]
fn knob_reads_match_the_full_read() {
    gpu();
    for (name, doc) in [
        (
            "matmul 256x256x128 bf16",
            bench_graphs::matmul_json(256, 256, 128),
        ),
        (
            "tiny sdpa (1,1,64,64)",
            bench_graphs::sdpa_inference_json(1, 1, 64, 64),
        ),
    ] {
        let opg = opgraph_of(&doc);
        for mode in [HeurMode::A, HeurMode::Fallback] {
            let list = query_mode(&opg, mode).unwrap();
            for e in &list {
                let full = e
                    .config
                    .get_descs(
                        CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                        CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR,
                        CUDNN_KNOB_TYPE_COUNTS as usize,
                    )
                    .unwrap();
                let mut want: Vec<(u32, i64)> = full
                    .iter()
                    .map(|c| {
                        (
                            c.get_enums(CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE, CUDNN_TYPE_KNOB_TYPE, 1)
                                .unwrap()[0],
                            c.get_i64(CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE).unwrap(),
                        )
                    })
                    .collect();
                want.sort_unstable();
                assert_eq!(
                    config_knobs(&e.config).unwrap(),
                    want,
                    "{name} {}",
                    e.name()
                );
                assert_eq!(e.knobs, want, "{name} {}", e.name());
                let counted = e
                    .config
                    .count(
                        CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                        CUDNN_TYPE_BACKEND_DESCRIPTOR,
                    )
                    .map_err(|e| e.to_string());
                // Notes on demand read the same engine the listing named.
                let notes = e.numerical_notes().map_err(|e| e.to_string());
                eprintln!(
                    "  {name} {} {}: {} knobs; count-only query answers {counted:?}; numerical notes {notes:?}",
                    mode.name(),
                    e.name(),
                    want.len()
                );
            }
        }
    }
    eprintln!("  (short knob read: {KNOB_PROBE} descriptors)");
}

#[test]
fn heuristics_cache_replays_the_backend_list() {
    gpu();
    set_cache(true);
    heur_cache::clear();
    let doc = bench_graphs::matmul_json(256, 256, 192);
    let (first, _) = plan_list(&doc);
    let s1 = heur_cache::stats();
    assert_eq!(
        (s1.hits, s1.misses),
        (0, 2),
        "A and FALLBACK asked the backend"
    );
    let (second, _) = plan_list(&doc);
    let s2 = heur_cache::stats();
    assert_eq!(
        (s2.hits, s2.misses),
        (2, 2),
        "the second list comes from the cache"
    );
    let (n1, n2) = (plan_names(first), plan_names(second));
    eprintln!("  queried: {n1:?}\n  cached:  {n2:?}");
    assert!(!n1.is_empty());
    assert_eq!(n1, n2, "the replayed list equals the queried list");
    // The replayed plan builds and computes what the queried one computes, bit for bit.
    let (a, b) = (run_once(&doc, first, 3), run_once(&doc, second, 3));
    assert!(a.iter().any(|x| *x != 0), "the matmul wrote its output");
    assert_eq!(a, b);
    // Bypassed: a third list asks the backend again.
    set_cache(false);
    let (third, _) = plan_list(&doc);
    set_cache(true);
    let s3 = heur_cache::stats();
    assert_eq!(
        (s3.hits, s3.misses),
        (2, 2),
        "disabled: neither hit nor stored"
    );
    assert_eq!(plan_names(third), n1);
    for l in [first, second, third] {
        unsafe { capi::dnnp_plan_list_destroy(l) };
    }
}

fn set_concurrent(on: bool) {
    // SAFETY: these tests run with --test-threads=1.
    unsafe {
        if on {
            std::env::set_var(heur_modes::CONCURRENT_MODES_ENV, "1")
        } else {
            std::env::remove_var(heur_modes::CONCURRENT_MODES_ENV)
        }
    }
}

#[test]
fn concurrent_modes_list_and_run_what_sequential_modes_do() {
    gpu();
    set_cache(false);
    for doc in [
        bench_graphs::matmul_json(256, 256, 96),
        bench_graphs::sdpa_inference_json(1, 2, 128, 64),
    ] {
        let out = if doc.contains("matmul") { 3 } else { 4 };
        let (sequential, _) = plan_list(&doc);
        set_concurrent(true);
        let (concurrent, _) = plan_list(&doc);
        set_concurrent(false);
        let names = plan_names(sequential);
        assert!(!names.is_empty());
        assert_eq!(plan_names(concurrent), names);
        // Every index builds (or declines) alike: this includes the configs FALLBACK listed on
        // the side handle, replayed on the list's own operation graph.
        for (i, name) in names.iter().enumerate() {
            let build = |l| unsafe { dnnplan::ffi::plan::dnnp_plan_list_build_plan_at_index(l, i) };
            assert_eq!(build(sequential), build(concurrent), "{name}");
        }
        // And the selected plans compute the same.
        let (a, b) = (
            run_once(&doc, sequential, out),
            run_once(&doc, concurrent, out),
        );
        assert!(a.iter().any(|x| *x != 0));
        assert_eq!(a, b);
        for l in [sequential, concurrent] {
            unsafe { capi::dnnp_plan_list_destroy(l) };
        }
    }
    set_cache(true);
}

/// The child of [`the_disk_tier_lists_a_graph_seen_by_an_earlier_process`]; does nothing unless
/// `DNNP_DISK_CHILD` is `write` or `read`.
#[test]
#[ignore]
fn disk_tier_child() {
    let Ok(role) = std::env::var("DNNP_DISK_CHILD") else {
        return;
    };
    gpu();
    set_cache(true);
    heur_cache::clear();
    let doc = bench_graphs::matmul_json(256, 256, 160);
    let (list, _) = plan_list(&doc);
    let s = heur_cache::stats();
    let names = plan_names(list);
    println!("DISK-CHILD | {role} | {s:?} | {names:?}");
    match role.as_str() {
        "write" => assert_eq!((s.misses, s.disk_hits), (2, 0), "an empty disk tier"),
        _ => {
            assert_eq!(
                (s.misses, s.disk_hits),
                (2, 2),
                "both modes listed from disk"
            );
            // The same list as the backend's own answer now, and the same numbers.
            set_cache(false);
            let (queried, _) = plan_list(&doc);
            assert_eq!(plan_names(queried), names);
            let (a, b) = (run_once(&doc, list, 3), run_once(&doc, queried, 3));
            assert!(a.iter().any(|x| *x != 0), "the matmul wrote its output");
            assert_eq!(
                a, b,
                "replayed from disk and queried plans agree bit for bit"
            );
            unsafe { capi::dnnp_plan_list_destroy(queried) };
        }
    }
    unsafe { capi::dnnp_plan_list_destroy(list) };
}

#[test]
fn the_disk_tier_lists_a_graph_seen_by_an_earlier_process() {
    let dir = std::env::temp_dir().join(format!("dnnplan-gpu-disk-tier-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    let exe = std::env::current_exe().unwrap();
    for role in ["write", "read"] {
        let out = std::process::Command::new(&exe)
            .args([
                "--ignored",
                "--exact",
                "disk_tier_child",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("DNNP_DISK_CHILD", role)
            .env("DNNPLAN_CUDNN_HEUR_DISK_CACHE", &dir)
            .env_remove(HEUR_CACHE_ENV)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        eprintln!(
            "{}",
            text.lines()
                .filter(|l| l.starts_with("DISK-CHILD"))
                .collect::<Vec<_>>()
                .join("\n")
        );
        assert!(
            out.status.success() && text.contains("DISK-CHILD"),
            "{role} child failed:\n{text}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let _ = std::fs::remove_dir_all(&dir);
}

// ---------------------------------------------------------------- instrumented benchmark

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Raw backend calls, timed; descriptors destroyed by the caller.
struct Raw {
    api: &'static CudnnApi,
}

impl Raw {
    fn create(&self, ty: u32) -> RawDescriptor {
        let mut d: RawDescriptor = std::ptr::null_mut();
        let st = unsafe { (self.api.backend_create_descriptor)(ty, &mut d) };
        assert!(st.is_ok(), "create {ty}: {st:?}");
        d
    }
    fn set(&self, d: RawDescriptor, name: u32, ty: u32, n: i64, p: *const c_void) {
        let st = unsafe { (self.api.backend_set_attribute)(d, name, ty, n, p) };
        assert!(st.is_ok(), "set {name}: {st:?}");
    }
    fn get(
        &self,
        d: RawDescriptor,
        name: u32,
        ty: u32,
        req: i64,
        out: *mut c_void,
    ) -> (CudnnStatus, i64) {
        let mut n = 0i64;
        let st = unsafe { (self.api.backend_get_attribute)(d, name, ty, req, &mut n, out) };
        (st, n)
    }
    fn destroy(&self, d: RawDescriptor) {
        unsafe { (self.api.backend_destroy_descriptor)(d) };
    }
    /// An ENGINEHEUR descriptor of `opg` and `mode` (graph and mode set; not finalized).
    fn heuristics(&self, opg: &OperationGraph, mode: u32) -> RawDescriptor {
        let heur = self.create(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
        let og = opg.desc.raw();
        self.set(
            heur,
            CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
            CUDNN_TYPE_BACKEND_DESCRIPTOR,
            1,
            (&og as *const RawDescriptor).cast(),
        );
        self.set(
            heur,
            CUDNN_ATTR_ENGINEHEUR_MODE,
            CUDNN_TYPE_HEUR_MODE,
            1,
            (&mode as *const u32).cast(),
        );
        heur
    }
    /// The count-only results query of a finalized `heur`: its status and the count.
    fn result_count(&self, heur: RawDescriptor) -> (CudnnStatus, i64) {
        self.get(
            heur,
            CUDNN_ATTR_ENGINEHEUR_RESULTS,
            CUDNN_TYPE_BACKEND_DESCRIPTOR,
            0,
            std::ptr::null_mut(),
        )
    }
    /// `n` fresh ENGINECFG descriptors and the results query that fills them: its status, the
    /// descriptors (all `n`, to destroy) and how many it filled.
    fn fetch_configs(&self, heur: RawDescriptor, n: i64) -> (CudnnStatus, Vec<RawDescriptor>, i64) {
        let mut cfgs: Vec<RawDescriptor> = (0..n)
            .map(|_| self.create(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR))
            .collect();
        let (st, got) = self.get(
            heur,
            CUDNN_ATTR_ENGINEHEUR_RESULTS,
            CUDNN_TYPE_BACKEND_DESCRIPTOR,
            n,
            cfgs.as_mut_ptr().cast(),
        );
        (st, cfgs, got)
    }
}

/// Per-query totals in microseconds, by backend call.
#[derive(Default, Clone)]
struct QuerySplit {
    configs: usize,
    heur_setup: f64,
    finalize: f64,
    count: f64,
    fetch: f64,
    engine_get: f64,
    index_get: f64,
    notes_frontend_style: f64,
    notes_cap32: f64,
    notes_cap32_failed: usize,
    knobs_full: f64,
    knobs_probe: f64,
    knob_count_answers: Vec<i64>,
    destroy: f64,
    destroy_heur: f64,
}

fn us(t: std::time::Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e6
}

/// One heuristics query of `mode`, every backend call timed; configs described both ways.
fn split_query(raw: &Raw, opg: &OperationGraph, mode: u32) -> QuerySplit {
    let mut q = QuerySplit::default();
    let t = std::time::Instant::now();
    let heur = raw.heuristics(opg, mode);
    q.heur_setup = us(t);
    let t = std::time::Instant::now();
    let st = unsafe { (raw.api.backend_finalize)(heur) };
    q.finalize = us(t);
    assert!(st.is_ok(), "heuristics finalize: {st:?}");
    let t = std::time::Instant::now();
    let (st, n) = raw.result_count(heur);
    q.count = us(t);
    assert!(st.is_ok());
    let t = std::time::Instant::now();
    let (st, cfgs, got) = raw.fetch_configs(heur, n);
    q.fetch = us(t);
    assert!(st.is_ok());
    q.configs = got as usize;
    let mut garbage = Vec::new();
    for &cfg in cfgs.iter().take(got as usize) {
        let t = std::time::Instant::now();
        let mut engine = raw.create(CUDNN_BACKEND_ENGINE_DESCRIPTOR);
        let (st, _) = raw.get(
            cfg,
            CUDNN_ATTR_ENGINECFG_ENGINE,
            CUDNN_TYPE_BACKEND_DESCRIPTOR,
            1,
            (&mut engine as *mut RawDescriptor).cast(),
        );
        q.engine_get += us(t);
        assert!(st.is_ok());
        let t = std::time::Instant::now();
        let mut id = 0i64;
        raw.get(
            engine,
            CUDNN_ATTR_ENGINE_GLOBAL_INDEX,
            CUDNN_TYPE_INT64,
            1,
            (&mut id as *mut i64).cast(),
        );
        q.index_get += us(t);
        // The frontend's way: count with NULL, then exactly TYPE_COUNT.
        let t = std::time::Instant::now();
        for (attr, ty, cap) in [
            (
                CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                CUDNN_TYPE_NUMERICAL_NOTE,
                CUDNN_NUMERICAL_NOTE_TYPE_COUNT,
            ),
            (
                CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
                CUDNN_TYPE_BEHAVIOR_NOTE,
                CUDNN_BEHAVIOR_NOTE_TYPE_COUNT,
            ),
        ] {
            let mut v = vec![0u32; cap as usize];
            raw.get(engine, attr, ty, cap as i64, std::ptr::null_mut());
            raw.get(engine, attr, ty, cap as i64, v.as_mut_ptr().cast());
        }
        q.notes_frontend_style += us(t);
        // The previous describe_config: 32 elements asked for each note list.
        let t = std::time::Instant::now();
        for (attr, ty) in [
            (CUDNN_ATTR_ENGINE_NUMERICAL_NOTE, CUDNN_TYPE_NUMERICAL_NOTE),
            (CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE, CUDNN_TYPE_BEHAVIOR_NOTE),
        ] {
            let mut v = [0u32; 32];
            let (st, _) = raw.get(engine, attr, ty, 32, v.as_mut_ptr().cast());
            if !st.is_ok() {
                q.notes_cap32_failed += 1;
            }
        }
        q.notes_cap32 += us(t);
        // Knob choices: the upper bound (44 descriptors), as before and as the frontend does.
        let read_knobs = |k: usize| {
            let mut ks: Vec<RawDescriptor> = (0..k)
                .map(|_| raw.create(CUDNN_BACKEND_KNOB_CHOICE_DESCRIPTOR))
                .collect();
            let (st, m) = raw.get(
                cfg,
                CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
                CUDNN_TYPE_BACKEND_DESCRIPTOR,
                k as i64,
                ks.as_mut_ptr().cast(),
            );
            if st.is_ok() {
                for &kd in ks.iter().take(m.max(0) as usize) {
                    let (mut ty, mut v) = (0u32, 0i64);
                    raw.get(
                        kd,
                        CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE,
                        CUDNN_TYPE_KNOB_TYPE,
                        1,
                        (&mut ty as *mut u32).cast(),
                    );
                    raw.get(
                        kd,
                        CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE,
                        CUDNN_TYPE_INT64,
                        1,
                        (&mut v as *mut i64).cast(),
                    );
                }
            }
            ks
        };
        let t = std::time::Instant::now();
        let full = read_knobs(CUDNN_KNOB_TYPE_COUNTS as usize);
        q.knobs_full += us(t);
        let t = std::time::Instant::now();
        let probe = read_knobs(KNOB_PROBE);
        q.knobs_probe += us(t);
        let (_, answered) = raw.get(
            cfg,
            CUDNN_ATTR_ENGINECFG_KNOB_CHOICES,
            CUDNN_TYPE_BACKEND_DESCRIPTOR,
            0,
            std::ptr::null_mut(),
        );
        q.knob_count_answers.push(answered);
        garbage.push(engine);
        garbage.extend(full);
        garbage.extend(probe);
    }
    let _ = raw.api.last_error(); // the cap-32 failures, if any, leave a record
    let t = std::time::Instant::now();
    for d in garbage.into_iter().chain(cfgs) {
        raw.destroy(d);
    }
    q.destroy = us(t);
    let t = std::time::Instant::now();
    raw.destroy(heur);
    q.destroy_heur = us(t);
    q
}

/// Prints one `DNNP-HEUR` row per case and mode: a heuristics query's backend calls, timed.
fn heur_split(raw: &Raw, cases: &[(&str, String)], state: &str) {
    println!(
        "DNNP-HEUR | case ({state}) | mode | configs | setup | finalize | count | fetch | ENGINE get | index get | notes (frontend style) | notes (cap 32; failures) | knobs, 44 descriptors | knobs, {KNOB_PROBE} descriptors | knob count-only answers | destroy configs, engines, knobs | destroy ENGINEHEUR | sum (us, median of 5)"
    );
    for (name, doc) in cases {
        for (mode_name, mode) in [
            ("A", CUDNN_HEUR_MODE_A),
            ("FALLBACK", CUDNN_HEUR_MODE_FALLBACK),
        ] {
            let splits: Vec<QuerySplit> = (0..5)
                .map(|_| split_query(raw, &opgraph_of(doc), mode))
                .collect();
            let m = |f: &dyn Fn(&QuerySplit) -> f64| median(splits.iter().map(f).collect());
            let cols = [
                m(&|q| q.heur_setup),
                m(&|q| q.finalize),
                m(&|q| q.count),
                m(&|q| q.fetch),
                m(&|q| q.engine_get),
                m(&|q| q.index_get),
                m(&|q| q.notes_frontend_style),
            ];
            let s0 = &splits[0];
            println!(
                "DNNP-HEUR | {name} ({state}) | {mode_name} | {} | {} | {:.0}; {} | {:.0} | {:.0} | {:?} | {:.0} | {:.0} | {:.0}",
                s0.configs,
                cols.iter()
                    .map(|v| format!("{v:.0}"))
                    .collect::<Vec<_>>()
                    .join(" | "),
                m(&|q| q.notes_cap32),
                s0.notes_cap32_failed,
                m(&|q| q.knobs_full),
                m(&|q| q.knobs_probe),
                s0.knob_count_answers,
                m(&|q| q.destroy),
                m(&|q| q.destroy_heur),
                m(&|q| q.heur_setup
                    + q.finalize
                    + q.count
                    + q.fetch
                    + q.engine_get
                    + q.index_get
                    + q.knobs_probe
                    + q.destroy
                    + q.destroy_heur)
            );
        }
    }
}

#[test]
#[ignore]
fn bench_cudnn_creation() {
    let g = gpu();
    let raw = Raw {
        api: loader::api().unwrap(),
    };
    let version = loader::version().unwrap();
    let mut cases = bench_graphs::creation_cases();
    cases.extend([
        (
            "sdpa fwd causal bf16 (2,16,8192,128)",
            bench_graphs::sdpa_inference_json(2, 16, 8192, 128),
        ),
        (
            "sdpa fwd causal bf16 (8,16,2048,64)",
            bench_graphs::sdpa_inference_json(8, 16, 2048, 64),
        ),
    ]);
    // The disk tier stays off until the creation rows, which get a fresh one of their own.
    set_disk("off");
    // Warm the library (first heuristics query of each mode).
    let warm = opgraph_of(&cases[1].1);
    let _ = query_mode(&warm, HeurMode::A);
    let _ = query_mode(&warm, HeurMode::Fallback);
    heur_split(&raw, &cases[..3], "before any build");
    // Our query_mode as it lists now, and the phases of a cached creation (ms, median of 5).
    println!(
        "DNNP-PHASES | case | json+validate | lower | graph key | emit | query_mode A (listing) | query_mode FALLBACK | cached list A+FALLBACK (ms, median of 5)"
    );
    for (name, doc) in &cases[..3] {
        let mut t = vec![Vec::new(); 7];
        for _ in 0..5 {
            let s = std::time::Instant::now();
            let mut ir = dnnplan::ir::Graph::from_json(doc).unwrap();
            ir.validate().unwrap();
            t[0].push(s.elapsed().as_secs_f64() * 1e3);
            let s = std::time::Instant::now();
            let bg = lower_graph(&ir, version).unwrap();
            t[1].push(s.elapsed().as_secs_f64() * 1e3);
            let s = std::time::Instant::now();
            let key = graph_key(&bg);
            t[2].push(s.elapsed().as_secs_f64() * 1e3);
            let s = std::time::Instant::now();
            let opg = emit(raw.api, bg, Some(g.handle)).unwrap();
            t[3].push(s.elapsed().as_secs_f64() * 1e3);
            let s = std::time::Instant::now();
            let _ = query_mode(&opg, HeurMode::A).unwrap();
            t[4].push(s.elapsed().as_secs_f64() * 1e3);
            let s = std::time::Instant::now();
            let _ = query_mode(&opg, HeurMode::Fallback).unwrap();
            t[5].push(s.elapsed().as_secs_f64() * 1e3);
            let target = GraphTarget {
                graph: key,
                device: DeviceKey {
                    ordinal: 0,
                    compute_capability: (9, 0),
                    sm_count: 132,
                },
                cudnn_version: version,
            };
            let _ = heur_cache::list_mode(&opg, Some(&target), HeurMode::A).unwrap();
            let _ = heur_cache::list_mode(&opg, Some(&target), HeurMode::Fallback).unwrap();
            let s = std::time::Instant::now();
            let (_, a) = heur_cache::list_mode(&opg, Some(&target), HeurMode::A).unwrap();
            let (_, f) = heur_cache::list_mode(&opg, Some(&target), HeurMode::Fallback).unwrap();
            t[6].push(s.elapsed().as_secs_f64() * 1e3);
            assert_eq!(
                (a, f),
                (heur_cache::Source::Cached, heur_cache::Source::Cached)
            );
        }
        let cols: Vec<String> = t.into_iter().map(|v| format!("{:.3}", median(v))).collect();
        println!("DNNP-PHASES | {name} | {}", cols.join(" | "));
    }
    // Plan-list creation through the C ABI, validate + create with [A, FALLBACK]: cold = the
    // cache bypassed (every creation queries the backend, as for a graph never seen), before
    // this graph's plan was ever built in the process and after it was built and executed once
    // (the state the reference scripts measure their warm creation in); cached = the same graph
    // again. Median of 5 each, ms.
    concurrent_modes(&cases);
    // The same through the C ABI: a never-seen graph's creation with the modes asked one after
    // the other (default) and at once (DNNPLAN_CUDNN_CONCURRENT_MODES=1); both tiers bypassed.
    println!(
        "DNNP-CREATE-CONC | case | never seen, modes in turn | never seen, modes at once (ms, median of 5)"
    );
    set_cache(false);
    for (name, doc) in &cases {
        let (l, _) = plan_list(doc);
        unsafe { capi::dnnp_plan_list_destroy(l) };
        let in_turn = creation_median_ms(doc);
        set_concurrent(true);
        let at_once = creation_median_ms(doc);
        set_concurrent(false);
        println!("DNNP-CREATE-CONC | {name} | {in_turn:.3} | {at_once:.3}");
    }
    set_cache(true);
    // Disk = the in-process map emptied before each creation, the disk tier kept: a graph seen
    // by an earlier process on this machine.
    let disk_dir = std::env::temp_dir().join(format!("dnnplan-bench-heur-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&disk_dir);
    set_disk(disk_dir.to_str().unwrap());
    println!(
        "DNNP-CREATE2 | case | cold, before any build | cold, after build + execute | first with cache (miss) | cached | cache hits | from disk (map emptied) | disk hits (ms, median of 5)"
    );
    let outputs = [4i64, 3, 4, 4, 4];
    for ((name, doc), out) in cases.iter().zip(outputs) {
        heur_cache::clear();
        set_cache(false);
        let (l, _) = plan_list(doc); // one unmeasured creation per case
        unsafe { capi::dnnp_plan_list_destroy(l) };
        let cold_before = creation_median_ms(doc);
        let (l, _) = plan_list(doc);
        let _ = run_once(doc, l, out);
        unsafe { capi::dnnp_plan_list_destroy(l) };
        let cold_after = creation_median_ms(doc);
        set_cache(true);
        let (l, miss) = plan_list(doc);
        unsafe { capi::dnnp_plan_list_destroy(l) };
        let cached = creation_median_ms(doc);
        let hits = heur_cache::stats().hits;
        let (disk, disk_hits) = disk_median_ms(doc);
        println!(
            "DNNP-CREATE2 | {name} | {cold_before:.3} | {cold_after:.3} | {miss:.3} | {cached:.3} | {hits} | {disk:.3} | {disk_hits}"
        );
    }
    let _ = std::fs::remove_dir_all(&disk_dir);
    set_disk("off");
    heur_split(&raw, &cases[..3], "after build + execute");
}

/// Whether asking the two modes of a never-seen graph concurrently would pay: cuDNN allows
/// concurrent calls only on distinct handles, so each thread lowers and emits its own operation
/// graph on its own handle (one per stream) and queries one mode. Sequential = one operation
/// graph, A then FALLBACK (what a plan list does now). Prints `DNNP-CONC |` rows (ms, median of
/// 5, fresh operation graphs every time).
fn concurrent_modes(cases: &[(&str, String)]) {
    let streams: Vec<usize> = (0..2)
        .map(|_| drv::stream::create(drv::stream::StreamKind::NonBlocking).unwrap() as usize)
        .collect();
    let handles: Vec<usize> = streams
        .iter()
        .map(|s| dnnplan::cudnn::handle::handle_for(0, *s as *mut c_void).unwrap() as usize)
        .collect();
    let version = loader::version().unwrap();
    let opg_on = |doc: &str, h: usize| {
        let mut ir = dnnplan::ir::Graph::from_json(doc).unwrap();
        ir.validate().unwrap();
        let bg = lower_graph(&ir, version).unwrap();
        emit(loader::api().unwrap(), bg, Some(h as *mut c_void)).unwrap()
    };
    println!(
        "DNNP-CONC | case | sequential: emit + A + FALLBACK on one graph | concurrent: two threads, each emit + one mode on its own handle | configs equal (ms, median of 5)"
    );
    for (name, doc) in &cases[..3] {
        let (mut seq, mut conc) = (Vec::new(), Vec::new());
        let mut equal = true;
        for _ in 0..5 {
            let t = std::time::Instant::now();
            let o = opg_on(doc, handles[0]);
            let a = query_mode(&o, HeurMode::A).unwrap();
            let f = query_mode(&o, HeurMode::Fallback).unwrap();
            seq.push(t.elapsed().as_secs_f64() * 1e3);
            let ids = |l: &[EngineConfigEntry]| {
                l.iter()
                    .map(|e| (e.engine_id, e.knobs.clone()))
                    .collect::<Vec<_>>()
            };
            let (sa, sf) = (ids(&a), ids(&f));
            drop((a, f, o));
            let t = std::time::Instant::now();
            let (ca, cf) = std::thread::scope(|sc| {
                let run = |mode: HeurMode, h: usize| {
                    let opg_on = &opg_on;
                    sc.spawn(move || {
                        gpu();
                        let o = opg_on(doc, h);
                        ids(&query_mode(&o, mode).unwrap())
                    })
                };
                let ta = run(HeurMode::A, handles[0]);
                let tf = run(HeurMode::Fallback, handles[1]);
                (ta.join().unwrap(), tf.join().unwrap())
            });
            conc.push(t.elapsed().as_secs_f64() * 1e3);
            equal &= ca == sa && cf == sf;
        }
        println!(
            "DNNP-CONC | {name} | {:.3} | {:.3} | {equal}",
            median(seq),
            median(conc)
        );
    }
}

/// Median of 5 creations of `doc` with the in-process map emptied before each (so each lists
/// from the disk tier), ms; and the disk hits of those creations.
fn disk_median_ms(doc: &str) -> (f64, u64) {
    let mut hits = 0;
    let t = (0..5)
        .map(|_| {
            heur_cache::clear();
            let (l, ms) = plan_list(doc);
            unsafe { capi::dnnp_plan_list_destroy(l) };
            hits += heur_cache::stats().disk_hits;
            ms
        })
        .collect();
    (median(t), hits)
}

/// Run twice by the bench script with one `DNNPLAN_CUDNN_HEUR_DISK_CACHE`: the first process
/// finds it empty, the second finds every graph on disk.
#[test]
#[ignore]
fn bench_cudnn_creation_fresh_process() {
    gpu(); // library initialised: driver, context, cuDNN loaded, a handle
    set_cache(true);
    let mut cases = bench_graphs::creation_cases();
    cases.extend([
        (
            "sdpa fwd causal bf16 (2,16,8192,128)",
            bench_graphs::sdpa_inference_json(2, 16, 8192, 128),
        ),
        (
            "sdpa fwd causal bf16 (8,16,2048,64)",
            bench_graphs::sdpa_inference_json(8, 16, 2048, 64),
        ),
    ]);
    println!(
        "DNNP-FRESH | case | first creation in this process | listed from | from disk (map emptied) | cached (ms, median of 5) | dir {}",
        heur_disk::config().root.display()
    );
    for (name, doc) in &cases {
        heur_cache::clear();
        let (l, first) = plan_list(doc);
        unsafe { capi::dnnp_plan_list_destroy(l) };
        let s = heur_cache::stats();
        let source = if s.disk_hits == 2 {
            "disk"
        } else if s.disk_hits == 0 {
            "backend"
        } else {
            "mixed"
        };
        let (disk, _) = disk_median_ms(doc);
        let cached = creation_median_ms(doc);
        println!("DNNP-FRESH | {name} | {first:.3} | {source} | {disk:.3} | {cached:.3}");
    }
}

// ---------------------------------------------------------------------------------------------
// diag_cudnn_cold_creation: why a cold heuristics query costs 2-4x the C++ frontend's.

/// Shared objects mapped in this process (paths from /proc/self/maps).
fn mapped_libs() -> std::collections::BTreeSet<String> {
    std::fs::read_to_string("/proc/self/maps")
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .filter(|p| p.contains(".so"))
        .map(str::to_owned)
        .collect()
}

/// Minor page faults of this process so far (/proc/self/stat field 10).
fn minor_faults() -> u64 {
    let stat = std::fs::read_to_string("/proc/self/stat").unwrap_or_default();
    // Fields after the parenthesised command name (which may contain spaces).
    let rest = stat.rsplit_once(')').map(|(_, r)| r).unwrap_or("");
    rest.split_whitespace()
        .nth(7)
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// Threads of this process.
fn thread_count() -> usize {
    std::fs::read_dir("/proc/self/task")
        .map(|d| d.count())
        .unwrap_or(0)
}

/// One cold query's backend calls, us.
#[derive(Clone, Copy, Default)]
struct Cold {
    configs: i64,
    finalize: f64,
    fetch: f64,
    destroy: f64,
}

/// One heuristics query of `mode` on `opg` as the frontend does it (create, set graph + mode
/// [+ SM count target], finalize, count, fetch every ENGINECFG), `during` called while the
/// configs are alive, then everything destroyed; each part timed.
fn cold_query_on(
    raw: &Raw,
    opg: &OperationGraph,
    mode: u32,
    sm_target: Option<i32>,
    during: &mut dyn FnMut(),
) -> Cold {
    let mut c = Cold::default();
    let heur = raw.heuristics(opg, mode);
    if let Some(sm) = sm_target {
        raw.set(
            heur,
            CUDNN_ATTR_ENGINEHEUR_SM_COUNT_TARGET,
            CUDNN_TYPE_INT32,
            1,
            (&sm as *const i32).cast(),
        );
    }
    let t = std::time::Instant::now();
    let st = unsafe { (raw.api.backend_finalize)(heur) };
    c.finalize = us(t);
    assert!(st.is_ok(), "heuristics finalize: {st:?}");
    let t = std::time::Instant::now();
    let (st, n) = raw.result_count(heur);
    assert!(st.is_ok());
    let (st, cfgs, got) = raw.fetch_configs(heur, n);
    c.fetch = us(t);
    assert!(st.is_ok());
    c.configs = got;
    during();
    let t = std::time::Instant::now();
    for d in cfgs {
        raw.destroy(d);
    }
    raw.destroy(heur);
    c.destroy = us(t);
    c
}

const DIAG_MODES: [(&str, u32); 2] = [
    ("A", CUDNN_HEUR_MODE_A),
    ("FALLBACK", CUDNN_HEUR_MODE_FALLBACK),
];

/// One hypothesis: every (case, mode) queried cold 5 times (a fresh operation graph each time,
/// `before_each` right before each query); prints `DIAG |` rows (medians) and a `DIAG-SUM |` row
/// (the sum over cases and modes of finalize + fetch + destroy medians, ms).
fn diag_measure(
    raw: &Raw,
    label: &str,
    cases: &[(&str, String)],
    sm_target: Option<i32>,
    before_each: &dyn Fn(),
) {
    let mut total = 0.0;
    for (name, doc) in cases {
        for (mode_name, mode) in DIAG_MODES {
            let mut faults = Vec::new();
            let runs: Vec<Cold> = (0..5)
                .map(|_| {
                    let opg = opgraph_of(doc);
                    before_each();
                    let f0 = minor_faults();
                    let c = cold_query_on(raw, &opg, mode, sm_target, &mut || {});
                    faults.push((minor_faults() - f0) as f64);
                    c
                })
                .collect();
            let m = |f: &dyn Fn(&Cold) -> f64| median(runs.iter().map(f).collect());
            let (fin, fetch, destroy) = (m(&|c| c.finalize), m(&|c| c.fetch), m(&|c| c.destroy));
            total += fin + fetch + destroy;
            println!(
                "DIAG | {label} | {name} | {mode_name} | {} | {fin:.0} | {fetch:.0} | {destroy:.0} | {:.3} | {:.0}",
                runs[0].configs,
                (fin + fetch + destroy) / 1e3,
                median(faults)
            );
        }
    }
    println!("DIAG-SUM | {label} | {:.3}", total / 1e3);
}

/// Which shared objects a query maps and its destroy unmaps, and the thread count around it.
/// Returns the libraries that came and went (candidates for pinning).
fn diag_libs(raw: &Raw, label: &str, cases: &[(&str, String)]) -> Vec<String> {
    let mut churned = std::collections::BTreeSet::new();
    for (name, doc) in cases {
        for (mode_name, mode) in DIAG_MODES {
            let opg = opgraph_of(doc);
            let before = mapped_libs();
            let tb = thread_count();
            let mut during = std::collections::BTreeSet::new();
            let mut td = 0;
            cold_query_on(raw, &opg, mode, None, &mut || {
                during = mapped_libs();
                td = thread_count();
            });
            drop(opg);
            let after = mapped_libs();
            let ta = thread_count();
            let opened: Vec<_> = during.difference(&before).cloned().collect();
            let closed: Vec<_> = during.difference(&after).cloned().collect();
            let closed_early: Vec<_> = before.difference(&during).cloned().collect();
            println!(
                "DIAG-LIBS | {label} | {name} | {mode_name} | threads {tb}/{td}/{ta} | mapped {} | opened by the query {opened:?} | unmapped by the destroy {closed:?} | unmapped during the query {closed_early:?}",
                during.len()
            );
            churned.extend(opened);
            churned.extend(closed);
            churned.extend(closed_early);
        }
    }
    churned.into_iter().collect()
}

/// Cold plan-list creation through the C ABI (validate + create [A, FALLBACK], the heuristics
/// cache bypassed), median of 5, ms: with nothing of the graph alive (each list destroyed before
/// the next), and with the first list of the graph kept alive meanwhile (how
/// bench/cudnn_cpp_reference.cpp measures: its first graph lives while the 5 are timed).
fn diag_capi(label: &str, cases: &[(&str, String)]) {
    set_cache(false);
    for (name, doc) in cases {
        let (l, first) = plan_list(doc);
        unsafe { capi::dnnp_plan_list_destroy(l) };
        let alone = creation_median_ms(doc);
        let (kept, _) = plan_list(doc);
        let with_first = creation_median_ms(doc);
        unsafe { capi::dnnp_plan_list_destroy(kept) };
        println!(
            "DIAG-CAPI | {label} | {name} | first {first:.3} | nothing alive {alone:.3} | first list alive (C++ method) {with_first:.3}"
        );
    }
    set_cache(true);
}

/// `dlopen`s the CUDA runtime and calls `cudaSetDevice(0)` + `cudaFree(0)` on this thread (what
/// the C++ reference does first); the library stays loaded. Returns what happened.
fn diag_cudart_init() -> String {
    for name in ["libcudart.so.13", "libcudart.so.12", "libcudart.so"] {
        let Ok(lib) = (unsafe { libloading::Library::new(name) }) else {
            continue;
        };
        type SetDevice = unsafe extern "C" fn(i32) -> i32;
        type Free = unsafe extern "C" fn(*mut c_void) -> i32;
        let rc = unsafe {
            match (
                lib.get::<SetDevice>(b"cudaSetDevice\0"),
                lib.get::<Free>(b"cudaFree\0"),
            ) {
                (Ok(set), Ok(free)) => format!(
                    "{name}: cudaSetDevice(0) = {}, cudaFree(0) = {}",
                    set(0),
                    free(std::ptr::null_mut())
                ),
                _ => format!("{name}: symbols missing"),
            }
        };
        std::mem::forget(lib);
        return rc;
    }
    "no libcudart found".into()
}

/// Promotes the loaded libcudnn.so.9 to RTLD_GLOBAL (as a linked library is).
fn diag_cudnn_global() -> String {
    use libloading::os::unix::{Library, RTLD_GLOBAL, RTLD_NOW};
    const RTLD_NOLOAD: i32 = 0x4;
    let dir = std::env::var("DNNPLAN_CUDNN_LIB_DIR").unwrap_or_default();
    for name in ["libcudnn.so.9".to_owned(), format!("{dir}/libcudnn.so.9")] {
        if let Ok(lib) = unsafe { Library::open(Some(&name), RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD) }
        {
            std::mem::forget(lib);
            return format!("{name} promoted to RTLD_GLOBAL");
        }
    }
    "libcudnn.so.9 not found with RTLD_NOLOAD".into()
}

/// glibc's allocator told to keep freed memory (no trimming, no mmap for chunks up to 32 MiB,
/// 64 MiB top pad), so a query's allocations stop faulting pages in anew.
fn diag_mallopt() -> String {
    const M_TRIM_THRESHOLD: i32 = -1;
    const M_TOP_PAD: i32 = -2;
    const M_MMAP_THRESHOLD: i32 = -3;
    let Ok(lib) = (unsafe { libloading::Library::new("libc.so.6") }) else {
        return "libc.so.6 not found".into();
    };
    type Mallopt = unsafe extern "C" fn(i32, i32) -> i32;
    let r = match unsafe { lib.get::<Mallopt>(b"mallopt\0") } {
        Ok(f) => unsafe {
            format!(
                "mallopt: trim threshold 1 GiB -> {}, top pad 64 MiB -> {}, mmap threshold 32 MiB -> {}",
                f(M_TRIM_THRESHOLD, 1 << 30),
                f(M_TOP_PAD, 64 << 20),
                f(M_MMAP_THRESHOLD, 32 << 20)
            )
        },
        Err(_) => "mallopt not found".into(),
    };
    std::mem::forget(lib);
    r
}

fn diag_pin(raw: &Raw, label: &str, names: &[String], cases: &[(&str, String)]) {
    let got = dnnplan::cudnn::pin::pin_libraries(names);
    let ok: Vec<_> = got.iter().filter_map(|o| o.opened.clone()).collect();
    let missing: Vec<_> = got
        .iter()
        .filter(|o| o.opened.is_none())
        .map(|o| o.name.clone())
        .collect();
    println!("DIAG-STEP | {label} | pinned {ok:?} | not found {missing:?}");
    diag_measure(raw, label, cases, None, &|| {});
}

/// The cold-creation diagnosis (run by the lead on the H200; ~15 s, `DNNPLAN_DIAG_QUICK=1`:
/// ~3 s). Run it with `DNNPLAN_CUDNN_PIN_LIBS=0` to see the unpinned baseline: since this
/// diagnosis found the NVRTC load/unload churn (2026-11-30), the loader pins NVRTC by default. Hypotheses in one process, the reversible ones first; each prints `DIAG |` rows
/// (case, mode, configs, finalize us, fetch us, destroy us, sum ms; medians of 5, a fresh
/// operation graph per query) and a `DIAG-SUM |` row. No timed assertions.
#[test]
#[ignore]
fn diag_cudnn_cold_creation() {
    let g = gpu();
    let raw = Raw {
        api: loader::api().unwrap(),
    };
    let quick = std::env::var("DNNPLAN_DIAG_QUICK").is_ok_and(|v| v == "1");
    let env: Vec<String> = std::env::vars()
        .filter(|(k, _)| {
            [
                "CUDNN",
                "CUDA_",
                "GLIBC_TUNABLES",
                "MALLOC",
                "LD_PRELOAD",
                "DNNPLAN_",
            ]
            .iter()
            .any(|p| k.starts_with(p))
        })
        .map(|(k, v)| format!("{k}={v}"))
        .collect();
    println!(
        "DIAG-ENV | thread {:?} | cuDNN {:?} | pins at load {:?} | {env:?}",
        std::thread::current().name(),
        loader::info().map(|i| (i.version_string, i.origin)).ok(),
        dnnplan::cudnn::pin::outcomes()
            .iter()
            .filter_map(|o| o.opened.clone())
            .collect::<Vec<_>>()
    );
    let cases = bench_graphs::creation_cases();
    // Warm the library (first query of each mode for both op families).
    for (_, doc) in &cases[..2] {
        let o = opgraph_of(doc);
        let _ = query_mode(&o, HeurMode::A);
        let _ = query_mode(&o, HeurMode::Fallback);
    }
    println!(
        "DIAG | hypothesis | case | mode | configs | finalize us | fetch us | destroy us | sum ms | minor page faults (median of 5)"
    );
    let churned = diag_libs(&raw, "baseline", &cases);
    diag_capi("baseline", &cases);
    diag_measure(&raw, "baseline (test thread)", &cases, None, &|| {});
    std::thread::scope(|s| {
        s.spawn(|| diag_measure(&raw, "fresh std::thread", &cases, None, &|| {}))
            .join()
            .unwrap();
    });
    if !quick {
        {
            // Configs of other graphs alive: whatever a live config holds (libraries, engine
            // state) stays loaded.
            let other = [
                bench_graphs::matmul_json(512, 384, 64),
                bench_graphs::sdpa_inference_json(2, 2, 128, 64),
            ];
            let anchors: Vec<_> = other.iter().map(|d| anchored(d)).collect();
            diag_measure(
                &raw,
                "anchor: other graphs' configs alive",
                &cases,
                None,
                &|| {},
            );
            drop(anchors);
        }
        {
            let anchors: Vec<_> = cases.iter().map(|(_, d)| anchored(d)).collect();
            diag_measure(
                &raw,
                "anchor: same graphs' configs alive",
                &cases,
                None,
                &|| {},
            );
            drop(anchors);
        }
        diag_measure(&raw, "after 200 ms idle", &cases, None, &|| {
            std::thread::sleep(std::time::Duration::from_millis(200))
        });
        let busy = alloc(256 << 20);
        diag_measure(&raw, "right after GPU work", &cases, None, &|| {
            for _ in 0..8 {
                unsafe { drv::memset_d8_async(busy.0, 1, 256 << 20, g.stream) }.unwrap();
            }
            unsafe { drv::stream::synchronize(g.stream) }.unwrap();
        });
        drop(busy);
        let sm = drv::device::get(0)
            .and_then(|d| unsafe {
                drv::device::get_attribute(
                    d,
                    drv_sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT,
                )
            })
            .unwrap_or(132);
        let label = format!("ENGINEHEUR_SM_COUNT_TARGET={sm}");
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            diag_measure(&raw, &label, &cases, Some(sm), &|| {})
        }));
        if r.is_err() {
            println!("DIAG-STEP | {label} | failed (see the panic above)");
        }
        // Irreversible steps, cumulative from here on.
        println!("DIAG-STEP | cudart init | {}", diag_cudart_init());
        diag_measure(&raw, "+ cudaSetDevice/cudaFree(0)", &cases, None, &|| {});
        let group = |g: &[&str]| g.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        use dnnplan::cudnn::pin::{CUBLAS_LIBS, CUDNN_SUBLIBS, NVRTC_LIBS};
        diag_pin(
            &raw,
            "+ pin cuDNN sub-libraries",
            &group(CUDNN_SUBLIBS),
            &cases,
        );
        diag_pin(&raw, "+ pin NVRTC/nvJitLink", &group(NVRTC_LIBS), &cases);
        diag_pin(&raw, "+ pin cuBLAS(Lt)", &group(CUBLAS_LIBS), &cases);
        diag_pin(
            &raw,
            "+ pin every library the query mapped/unmapped",
            &churned,
            &cases,
        );
        println!("DIAG-STEP | cudnn global | {}", diag_cudnn_global());
        diag_measure(&raw, "+ libcudnn RTLD_GLOBAL", &cases, None, &|| {});
        println!("DIAG-STEP | allocator | {}", diag_mallopt());
        diag_measure(&raw, "+ mallopt keep memory", &cases, None, &|| {});
        diag_libs(&raw, "after every step", &cases);
        diag_capi("after every step", &cases);
    }
    println!(
        "DIAG-STEP | end | pinned {:?}",
        dnnplan::cudnn::pin::outcomes()
            .iter()
            .filter_map(|o| o.opened.clone())
            .collect::<Vec<_>>()
    );
}
