//! GPU tests of the cuDNN backend provider (feature `gpu-tests`, run on the H200 with
//! `source .device/device-env.sh`): constants against the real headers, the plan list per
//! heuristic mode, and numerics of built plans against CPU references computed here in f64.

#![cfg(feature = "gpu-tests")]

#[path = "support/cudnn_gpu.rs"]
mod cudnn_gpu;

use std::collections::HashMap;
use std::ffi::c_void;
use std::sync::Arc;

use cudarc::driver::{result as drv, sys as drv_sys};
use half::{bf16, f16};

use cudnn_gpu::{DevBuf, alloc, capi, capi_ok, creation_median_ms, fill, gpu, plan_list, upload};
use dnnplan::cudnn::consts::*;
use dnnplan::cudnn::emit::{OperationGraph, emit};
use dnnplan::cudnn::exec_path::ExecPath;
use dnnplan::cudnn::graph::{
    BackendGraph, GraphBuilder, PointwiseParams, Uid, element_size, packed_strides,
};
use dnnplan::cudnn::loader;
use dnnplan::cudnn::lower::attention::*;
use dnnplan::cudnn::lower::{
    self, MatmulRequest, NormBackwardRequest, NormForwardRequest, NormKind,
};
use dnnplan::cudnn::plan::{
    BackendPlan, HeurMode, build_first, engine_config, query_mode, query_modes,
};

fn tensor_bytes(g: &BackendGraph, uid: Uid) -> usize {
    let t = &g.tensors[&uid];
    let span: i64 = t
        .dims
        .iter()
        .zip(&t.strides)
        .map(|(d, s)| (d - 1) * s)
        .sum::<i64>()
        + 1;
    span as usize * element_size(t.dtype)
}

struct Built {
    plan: BackendPlan,
    opg: Arc<OperationGraph>,
}

fn build(graph: BackendGraph, modes: &[HeurMode]) -> dnnplan::Result<Built> {
    let g = gpu();
    let api = loader::api()?;
    let opg = Arc::new(emit(api, graph, Some(g.handle))?);
    let cands = query_modes(&opg, modes)?;
    let (i, plan) = build_first(&opg, &cands, g.handle)?;
    eprintln!(
        "  built {} (candidate {i} of {}, modes {:?}), workspace {} B",
        plan.name,
        cands.entries.len(),
        cands
            .modes
            .iter()
            .map(|m| (m.mode.name(), m.result.clone()))
            .collect::<Vec<_>>(),
        plan.workspace_size()
    );
    Ok(Built { plan, opg })
}

/// Runs a plan with `inputs` (bytes per uid; missing uids are zero-filled) and returns every
/// user tensor's bytes afterwards.
fn run(b: &Built, inputs: &HashMap<Uid, Vec<u8>>) -> HashMap<Uid, Vec<u8>> {
    let g = gpu();
    let graph = &b.opg.graph;
    let mut bufs = Vec::new();
    let mut ptrs = Vec::new();
    for &u in &b.plan.user_uids {
        let n = tensor_bytes(graph, u);
        let buf = alloc(n);
        if let Some(data) = inputs.get(&u) {
            assert!(
                data.len() <= n.max(256),
                "input {u}: {} bytes for a {n}-byte tensor",
                data.len()
            );
            upload(&buf, data);
        }
        ptrs.push(buf.0 as *mut c_void);
        bufs.push((u, buf, n));
    }
    let ws = alloc(b.plan.workspace_size());
    unsafe {
        b.plan.execute(
            g.handle,
            g.stream as *mut c_void,
            &ptrs,
            ws.0 as *mut c_void,
        )
    }
    .expect("execute");
    unsafe { drv::stream::synchronize(g.stream) }.unwrap();
    let mut out = HashMap::new();
    for (u, buf, n) in bufs {
        let mut host = vec![0u8; n];
        unsafe { drv::memcpy_dtoh_sync(host.as_mut_slice(), buf.0) }.unwrap();
        out.insert(u, host);
    }
    out
}

// ---------------------------------------------------------------- data helpers

/// Deterministic pseudo-random values in [-1, 1).
fn rand_vec(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

/// Encodes `v` in `dtype`, returning the bytes and the values as rounded by that dtype.
fn encode(v: &[f64], dtype: u32) -> (Vec<u8>, Vec<f64>) {
    let mut bytes = Vec::new();
    let mut rounded = Vec::new();
    for &x in v {
        match dtype {
            CUDNN_DATA_BFLOAT16 => {
                let h = bf16::from_f64(x);
                bytes.extend_from_slice(&h.to_bits().to_le_bytes());
                rounded.push(h.to_f64());
            }
            CUDNN_DATA_HALF => {
                let h = f16::from_f64(x);
                bytes.extend_from_slice(&h.to_bits().to_le_bytes());
                rounded.push(h.to_f64());
            }
            CUDNN_DATA_FLOAT => {
                bytes.extend_from_slice(&(x as f32).to_le_bytes());
                rounded.push(x as f32 as f64);
            }
            CUDNN_DATA_INT32 => {
                bytes.extend_from_slice(&(x as i32).to_le_bytes());
                rounded.push(x as i32 as f64);
            }
            CUDNN_DATA_INT64 => {
                bytes.extend_from_slice(&(x as i64).to_le_bytes());
                rounded.push(x as i64 as f64);
            }
            _ => panic!("dtype {dtype}"),
        }
    }
    (bytes, rounded)
}

fn decode(b: &[u8], dtype: u32) -> Vec<f64> {
    match dtype {
        CUDNN_DATA_BFLOAT16 => b
            .chunks_exact(2)
            .map(|c| bf16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f64())
            .collect(),
        CUDNN_DATA_HALF => b
            .chunks_exact(2)
            .map(|c| f16::from_bits(u16::from_le_bytes([c[0], c[1]])).to_f64())
            .collect(),
        CUDNN_DATA_FLOAT => b
            .chunks_exact(4)
            .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f64)
            .collect(),
        _ => panic!("dtype {dtype}"),
    }
}

/// Max |got - want| / (atol + rtol*|want|) over all elements; <= 1 passes. Prints the worst.
fn check(what: &str, got: &[f64], want: &[f64], atol: f64, rtol: f64) {
    assert_eq!(got.len(), want.len(), "{what}: length");
    let mut worst = (0.0f64, 0usize);
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        let r = (g - w).abs() / (atol + rtol * w.abs());
        let r = if r.is_nan() { f64::INFINITY } else { r };
        if r > worst.0 {
            worst = (r, i);
        }
    }
    let i = worst.1;
    let max_err = got
        .iter()
        .zip(want)
        .map(|(g, w)| (g - w).abs())
        .fold(0.0f64, f64::max);
    eprintln!(
        "  {what}: worst ratio {:.3} at {i} (got {}, want {}); max |err| {max_err:.3e}, \
         atol {atol:.1e}, rtol {rtol:.1e}",
        worst.0, got[i], want[i]
    );
    assert!(
        worst.0 <= 1.0,
        "{what}: mismatch at {i}: got {}, want {}",
        got[i],
        want[i]
    );
}

// ---------------------------------------------------------------- constants vs headers

fn parse_header_enums(text: &str) -> HashMap<String, i64> {
    // Strip comments.
    let mut clean = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find('/') {
        clean.push_str(&rest[..i]);
        let r = &rest[i..];
        if r.starts_with("/*") {
            rest = r.find("*/").map(|j| &r[j + 2..]).unwrap_or("");
        } else if r.starts_with("//") {
            rest = r.find('\n').map(|j| &r[j..]).unwrap_or("");
        } else {
            clean.push('/');
            rest = &r[1..];
        }
    }
    clean.push_str(rest);
    let mut out = HashMap::new();
    let mut s = clean.as_str();
    while let Some(i) = s.find("typedef enum") {
        s = &s[i..];
        let (Some(open), Some(close)) = (s.find('{'), s.find('}')) else {
            break;
        };
        let body = &s[open + 1..close];
        let mut next = 0i64;
        for entry in body.split(',') {
            let entry = entry.trim();
            if entry.is_empty() || entry.starts_with('#') {
                continue;
            }
            let (lhs, rhs) = match entry.split_once('=') {
                Some((l, r)) => (l.trim(), Some(r.trim())),
                None => (entry, None),
            };
            let Some(name) = lhs.split_whitespace().next() else {
                continue;
            };
            let value = match rhs {
                None => Some(next),
                Some(r) => {
                    let r = r.trim_matches(|c| c == '(' || c == ')').trim();
                    let lit = r.trim_end_matches(['u', 'U', 'l', 'L']);
                    if let Some(h) = lit.strip_prefix("0x") {
                        i64::from_str_radix(h, 16).ok()
                    } else if let Ok(v) = lit.parse::<i64>() {
                        Some(v)
                    } else {
                        out.get(r).copied()
                    }
                }
            };
            if let Some(v) = value {
                out.insert(name.to_string(), v);
                next = v + 1;
            }
        }
        s = &s[close..];
    }
    out
}

#[test]
fn constants_match_the_cudnn_headers() {
    let dir = std::env::var("CUDNN_INCLUDE_DIR").expect("CUDNN_INCLUDE_DIR (device-env.sh)");
    let mut header = HashMap::new();
    let mut files = Vec::new();
    for e in std::fs::read_dir(&dir).unwrap() {
        let p = e.unwrap().path();
        let name = p.file_name().unwrap().to_string_lossy().to_string();
        if name.starts_with("cudnn") && name.ends_with(".h") {
            header.extend(parse_header_enums(&std::fs::read_to_string(&p).unwrap()));
            files.push(name);
        }
    }
    files.sort();
    eprintln!("parsed {} enumerators from {files:?}", header.len());
    let (mut checked, mut missing, mut mismatched) = (0, Vec::new(), Vec::new());
    for (family, entries) in FAMILIES {
        for (name, value) in *entries {
            match header.get(*name) {
                Some(v) if *v == *value as i64 => checked += 1,
                Some(v) => mismatched.push(format!("{family}::{name}: ours {value}, header {v}")),
                None => missing.push(*name),
            }
        }
    }
    eprintln!(
        "constants: {checked} match, {} not in this cuDNN (newer): {missing:?}",
        missing.len()
    );
    assert!(
        mismatched.is_empty(),
        "mismatched constants: {mismatched:#?}"
    );
    let total: usize = FAMILIES.iter().map(|(_, e)| e.len()).sum();
    assert!(
        checked * 10 >= total * 9,
        "only {checked} of {total} constants found in the headers"
    );
    // Everything the lowering and plan code emits must exist in this cuDNN.
    for name in [
        "CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC",
        "CUDNN_ATTR_OPERATION_NORM_FWD_PHASE",
        "CUDNN_ATTR_OPERATION_MATMUL_GEMM_K_OVERRIDE_DESC",
        "CUDNN_ATTR_TENSOR_RAGGED_OFFSET_DESC",
        "CUDNN_ATTR_OPERATION_RESHAPE_YDESC",
        "CUDNN_ATTR_OPERATION_RNG_OFFSET_DESC",
        "CUDNN_POINTWISE_BINARY_SELECT",
        "CUDNN_HEUR_MODE_A",
    ] {
        assert!(header.contains_key(name), "{name} missing from the headers");
    }
}

// ---------------------------------------------------------------- plan list per mode

fn matmul_graph(m: i64, n: i64, k: i64, dtype: u32, bias_relu: bool) -> GraphBuilder {
    let mut g = GraphBuilder::new();
    let a = g
        .user_tensor(1, "a", dtype, &[1, m, k], &[m * k, k, 1])
        .unwrap();
    let b = g
        .user_tensor(2, "b", dtype, &[1, k, n], &[k * n, n, 1])
        .unwrap();
    let out = g
        .user_tensor(4, "out", dtype, &[1, m, n], &[m * n, n, 1])
        .unwrap();
    let bias = bias_relu.then(|| {
        g.user_tensor(3, "bias", dtype, &[1, 1, n], &[n, n, 1])
            .unwrap()
    });
    lower::matmul(
        &mut g,
        &MatmulRequest {
            a,
            b,
            bias,
            activation: bias_relu.then_some(CUDNN_POINTWISE_RELU_FWD),
            out,
            ..Default::default()
        },
    )
    .unwrap();
    g
}

#[test]
fn plan_list_per_mode_matches_the_backend() {
    let g = gpu();
    let api = loader::api().unwrap();
    let opg = Arc::new(
        emit(
            api,
            matmul_graph(256, 256, 128, CUDNN_DATA_BFLOAT16, false).finish(),
            Some(g.handle),
        )
        .unwrap(),
    );
    let global = opg
        .desc
        .get_i64(CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT)
        .unwrap();
    let mut per_mode = Vec::new();
    for mode in [HeurMode::A, HeurMode::B, HeurMode::Fallback] {
        let list = query_mode(&opg, mode).unwrap();
        eprintln!(
            "  mode {}: {} configs: {:?}",
            mode.name(),
            list.len(),
            list.iter().map(|e| e.name()).collect::<Vec<_>>()
        );
        for (i, e) in list.iter().enumerate() {
            assert!(
                e.engine_id >= 0 && e.engine_id < global,
                "{} outside [0,{global})",
                e.name()
            );
            assert_eq!(e.mode, mode);
            // Replaying (engine_id, knobs) yields a config the backend accepts; for the first
            // two, building it succeeds exactly when building the listed config does.
            let cfg = engine_config(&opg, e.engine_id, &e.knobs).unwrap();
            if i >= 2 {
                continue;
            }
            let plan = BackendPlan::build(opg.clone(), &cfg, g.handle, e.name());
            let direct = BackendPlan::build(opg.clone(), &e.config, g.handle, e.name());
            assert_eq!(
                plan.is_ok(),
                direct.is_ok(),
                "{}: replay {:?} vs direct {:?}",
                e.name(),
                plan.err(),
                direct.err()
            );
        }
        per_mode.push((mode, list));
    }
    assert!(
        !per_mode[0].1.is_empty(),
        "mode A offers nothing for a bf16 matmul"
    );
    assert!(
        !per_mode[2].1.is_empty(),
        "FALLBACK offers nothing for a bf16 matmul"
    );
    // The merged list: mode order, then rank order, first (engine, knobs) wins.
    let merged = query_modes(
        &opg,
        &[HeurMode::A, HeurMode::Fallback, HeurMode::OpenSource],
    )
    .unwrap();
    let mut expect: Vec<(String, HeurMode)> = Vec::new();
    for (mode, list) in [&per_mode[0], &per_mode[2]].map(|(m, l)| (*m, l)) {
        for e in list {
            if !expect.iter().any(|(n, _)| *n == e.name()) {
                expect.push((e.name(), mode));
            }
        }
    }
    let got: Vec<(String, HeurMode)> = merged.entries.iter().map(|e| (e.name(), e.mode)).collect();
    assert_eq!(got, expect);
    assert!(merged.delegating);
    // An engine id outside the graph's range is a clear NotFound.
    let e = engine_config(&opg, global + 5, &[])
        .unwrap_err()
        .to_string();
    assert!(
        e.contains("engine") && e.contains(&global.to_string()),
        "{e}"
    );
}

// ---------------------------------------------------------------- numerics

#[test]
fn matmul_bias_relu_bf16() {
    let (m, n, k) = (128i64, 96i64, 64i64);
    let dt = CUDNN_DATA_BFLOAT16;
    let b = build(
        matmul_graph(m, n, k, dt, true).finish(),
        &[HeurMode::A, HeurMode::Fallback],
    )
    .unwrap();
    let (a_b, a) = encode(&rand_vec((m * k) as usize, 1), dt);
    let (b_b, bm) = encode(&rand_vec((k * n) as usize, 2), dt);
    let (c_b, bias) = encode(&rand_vec(n as usize, 3), dt);
    let out = run(&b, &HashMap::from([(1, a_b), (2, b_b), (3, c_b)]));
    let got = decode(&out[&4], dt);
    let mut want = vec![0.0; (m * n) as usize];
    for i in 0..m as usize {
        for j in 0..n as usize {
            let mut s = bias[j];
            for l in 0..k as usize {
                s += a[i * k as usize + l] * bm[l * n as usize + j];
            }
            want[i * n as usize + j] = s.max(0.0);
        }
    }
    check("matmul+bias+relu", &got, &want, 2e-2, 1e-2);
}

#[test]
fn pointwise_chain_fp16() {
    // y = tanh(x * w + z) * sigmoid(x), NHWC (channels-last): the backend's pointwise fusion
    // engines take N-spatial-C ordered, fully packed tensors only (NCHW packed is
    // NOT_SUPPORTED_LAYOUT on 9.19).
    let dt = CUDNN_DATA_HALF;
    let (n, c, h, w_) = (4i64, 64i64, 32i64, 32i64);
    let d = [n, c, h, w_];
    let s = [c * h * w_, 1, w_ * c, c];
    let mut g = GraphBuilder::new();
    let x = g.user_tensor(1, "x", dt, &d, &s).unwrap();
    let w = g
        .user_tensor(2, "w", dt, &[1, c, 1, 1], &[c, 1, c, c])
        .unwrap();
    let z = g.user_tensor(3, "z", dt, &d, &s).unwrap();
    let y = g.user_tensor(4, "y", dt, &d, &s).unwrap();
    let f = CUDNN_DATA_FLOAT;
    let xw = g
        .pointwise(
            "xw",
            CUDNN_POINTWISE_MUL,
            &[x, w],
            f,
            PointwiseParams::default(),
        )
        .unwrap();
    let t = g
        .pointwise(
            "t",
            CUDNN_POINTWISE_ADD,
            &[xw, z],
            f,
            PointwiseParams::default(),
        )
        .unwrap();
    let th = g
        .pointwise(
            "tanh",
            CUDNN_POINTWISE_TANH_FWD,
            &[t],
            f,
            PointwiseParams::default(),
        )
        .unwrap();
    let sg = g
        .pointwise(
            "sig",
            CUDNN_POINTWISE_SIGMOID_FWD,
            &[x],
            f,
            PointwiseParams::default(),
        )
        .unwrap();
    // Virtual intermediates follow the inputs' channels-last order.
    for u in [xw, t, th, sg] {
        g.tensor_mut(u).unwrap().strides = s.to_vec();
    }
    g.pointwise_into(
        CUDNN_POINTWISE_MUL,
        f,
        &[th, sg],
        y,
        PointwiseParams::default(),
    )
    .unwrap();
    let b = build(g.finish(), &[HeurMode::A, HeurMode::Fallback]).unwrap();
    let numel = d.iter().product::<i64>() as usize;
    let (xb, xv) = encode(&rand_vec(numel, 4), dt);
    let (wb, wv) = encode(&rand_vec(c as usize, 5), dt);
    let (zb, zv) = encode(&rand_vec(numel, 6), dt);
    let out = run(&b, &HashMap::from([(1, xb), (2, wb), (3, zb)]));
    let got = decode(&out[&4], dt);
    // Memory order is channels-last: the channel of element i is i % c.
    let want: Vec<f64> = (0..numel)
        .map(|i| {
            let ch = i % c as usize;
            (xv[i] * wv[ch] + zv[i]).tanh() * (1.0 / (1.0 + (-xv[i]).exp()))
        })
        .collect();
    check("pointwise chain", &got, &want, 2e-3, 2e-3);
}

#[test]
fn softmax_fp32_with_stats() {
    // Standalone softmax: the unified SOFTMAX op from cuDNN 9.21; before that the composite form
    // has no engine outside attention (NOT_SUPPORTED_GRAPH_PATTERN on 9.19), and the lowering
    // declines. Softmax numerics on 9.19 are covered through SDPA (O and Stats).
    let version = loader::version().unwrap();
    let d = [2i64, 4, 64, 128];
    let mut g = GraphBuilder::new();
    let x = g
        .user_tensor(1, "x", CUDNN_DATA_FLOAT, &d, &packed_strides(&d))
        .unwrap();
    let stats = g
        .user_tensor(
            2,
            "stats",
            CUDNN_DATA_FLOAT,
            &[2, 4, 64, 1],
            &packed_strides(&[2, 4, 64, 1]),
        )
        .unwrap();
    let y = g
        .user_tensor(3, "y", CUDNN_DATA_FLOAT, &d, &packed_strides(&d))
        .unwrap();
    if version < 92100 {
        let p = softmax(&mut g, x, Some(stats), CUDNN_DATA_FLOAT).unwrap();
        g.pointwise_into(
            CUDNN_POINTWISE_IDENTITY,
            CUDNN_DATA_FLOAT,
            &[p],
            y,
            PointwiseParams::default(),
        )
        .unwrap();
        let e = build(g.finish(), &[HeurMode::A, HeurMode::Fallback])
            .err()
            .expect("no engine before 9.21");
        eprintln!(
            "  composite softmax on cuDNN {version}: {}",
            e.to_string().chars().take(300).collect::<String>()
        );
        assert!(e.to_string().contains("GRAPH_PATTERN"), "{e}");
        return;
    }
    g.push(dnnplan::cudnn::graph::OpSpec::Softmax {
        x,
        y,
        stats: Some(stats),
    })
    .unwrap();
    let b = build(g.finish(), &[HeurMode::A, HeurMode::Fallback]).unwrap();
    let (xb, xv) = encode(
        &rand_vec(2 * 4 * 64 * 128, 7)
            .iter()
            .map(|v| v * 4.0)
            .collect::<Vec<_>>(),
        CUDNN_DATA_FLOAT,
    );
    let out = run(&b, &HashMap::from([(1, xb)]));
    let (mut want, mut want_stats) = (Vec::new(), Vec::new());
    for row in xv.chunks(128) {
        let m = row.iter().cloned().fold(f64::MIN, f64::max);
        let s: f64 = row.iter().map(|v| (v - m).exp()).sum();
        want.extend(row.iter().map(|v| (v - m).exp() / s));
        want_stats.push(m + s.ln());
    }
    check(
        "softmax",
        &decode(&out[&3], CUDNN_DATA_FLOAT),
        &want,
        1e-6,
        1e-4,
    );
    check(
        "softmax stats",
        &decode(&out[&2], CUDNN_DATA_FLOAT),
        &want_stats,
        1e-5,
        1e-5,
    );
}

/// Random norm inputs: x (scaled, shifted) in `dt`, scale and bias in FLOAT; rounded values.
fn norm_inputs(rows: i64, feat: i64, dt: u32) -> [(Vec<u8>, Vec<f64>); 3] {
    [
        encode(
            &rand_vec((rows * feat) as usize, 8)
                .iter()
                .map(|v| v * 3.0 + 0.5)
                .collect::<Vec<_>>(),
            dt,
        ),
        encode(&rand_vec(feat as usize, 9), CUDNN_DATA_FLOAT),
        encode(&rand_vec(feat as usize, 10), CUDNN_DATA_FLOAT),
    ]
}

/// Per-row f64 mean (0 for rmsnorm) and inverse standard deviation.
fn norm_stats(kind: NormKind, x: &[f64], feat: usize, eps: f64) -> (Vec<f64>, Vec<f64>) {
    x.chunks(feat)
        .map(|row| {
            let n = feat as f64;
            let mu = if kind == NormKind::Layer {
                row.iter().sum::<f64>() / n
            } else {
                0.0
            };
            let var = row.iter().map(|v| (v - mu) * (v - mu)).sum::<f64>() / n;
            (mu, 1.0 / (var + eps).sqrt())
        })
        .unzip()
}

fn norm_label(dt: u32) -> &'static str {
    if dt == CUDNN_DATA_HALF {
        "fp16"
    } else {
        "bf16"
    }
}

/// Output tolerance (atol, rtol) of a norm in `dt`.
fn norm_tol(dt: u32) -> (f64, f64) {
    if dt == CUDNN_DATA_HALF {
        (4e-3, 4e-3)
    } else {
        (3e-2, 1e-2)
    }
}

fn norm_case(kind: NormKind, training: bool, dt: u32) {
    let (rows, feat) = (256i64, 1024i64);
    let mut g = GraphBuilder::new();
    let xd = [rows, feat, 1, 1];
    let xs = [feat, 1, feat, feat];
    let x = g.user_tensor(1, "x", dt, &xd, &xs).unwrap();
    let scale = g
        .user_tensor(
            2,
            "scale",
            CUDNN_DATA_FLOAT,
            &[1, feat, 1, 1],
            &[feat, 1, feat, feat],
        )
        .unwrap();
    let bias = (kind == NormKind::Layer).then(|| {
        g.user_tensor(
            3,
            "bias",
            CUDNN_DATA_FLOAT,
            &[1, feat, 1, 1],
            &[feat, 1, feat, feat],
        )
        .unwrap()
    });
    let y = g.user_tensor(4, "y", dt, &xd, &xs).unwrap();
    let stat = |g: &mut GraphBuilder, uid, name| {
        g.user_tensor(uid, name, CUDNN_DATA_FLOAT, &[rows, 1, 1, 1], &[1, 1, 1, 1])
            .unwrap()
    };
    let mean = (training && kind == NormKind::Layer).then(|| stat(&mut g, 5, "mean"));
    let inv = training.then(|| stat(&mut g, 6, "inv_var"));
    let eps = 1e-5;
    lower::norm_forward(
        &mut g,
        &NormForwardRequest {
            kind,
            x,
            scale: Some(scale),
            bias,
            epsilon: eps as f32,
            y,
            mean,
            inv_variance: inv,
        },
    )
    .unwrap();
    let b = build(g.finish(), &[HeurMode::A, HeurMode::Fallback]).unwrap();
    let [(xb, xv), (sb, sv), (bb, bv)] = norm_inputs(rows, feat, dt);
    let mut inputs = HashMap::from([(1, xb), (2, sb)]);
    if bias.is_some() {
        inputs.insert(3, bb);
    }
    let out = run(&b, &inputs);
    let (want_mean, want_inv) = norm_stats(kind, &xv, feat as usize, eps);
    let mut want = Vec::new();
    for (r, row) in xv.chunks(feat as usize).enumerate() {
        for (j, v) in row.iter().enumerate() {
            let b = if kind == NormKind::Layer { bv[j] } else { 0.0 };
            want.push((v - want_mean[r]) * want_inv[r] * sv[j] + b);
        }
    }
    let label = format!("{kind:?}norm fwd {} (training {training})", norm_label(dt));
    let (atol, rtol) = norm_tol(dt);
    check(&label, &decode(&out[&4], dt), &want, atol, rtol);
    if training {
        check(
            &format!("{label} inv_var"),
            &decode(&out[&6], CUDNN_DATA_FLOAT),
            &want_inv,
            1e-4,
            1e-3,
        );
        if kind == NormKind::Layer {
            check(
                &format!("{label} mean"),
                &decode(&out[&5], CUDNN_DATA_FLOAT),
                &want_mean,
                1e-4,
                1e-3,
            );
        }
    }
}

#[test]
fn layernorm_forward_training_bf16() {
    norm_case(NormKind::Layer, true, CUDNN_DATA_BFLOAT16);
}

#[test]
fn rmsnorm_forward_inference_bf16() {
    norm_case(NormKind::Rms, false, CUDNN_DATA_BFLOAT16);
}

#[test]
fn layernorm_forward_inference_fp16() {
    norm_case(NormKind::Layer, false, CUDNN_DATA_HALF);
}

#[test]
fn rmsnorm_forward_training_fp16() {
    norm_case(NormKind::Rms, true, CUDNN_DATA_HALF);
}

/// Norm backward with FLOAT saved statistics: dX in `dt`, dScale (and dBias for layernorm) in
/// FLOAT, against the f64 gradients of y = (x - mean)·inv_var·scale (+ bias).
fn norm_backward_case(kind: NormKind, dt: u32) {
    let (rows, feat) = (192i64, 768i64);
    let f = CUDNN_DATA_FLOAT;
    let layer = kind == NormKind::Layer;
    let xd = [rows, feat, 1, 1];
    let xs = [feat, 1, feat, feat];
    let pd = [1, feat, 1, 1];
    let ps = [feat, 1, feat, feat];
    let sd = [rows, 1, 1, 1];
    let ss = [1, 1, 1, 1];
    let mut g = GraphBuilder::new();
    let x = g.user_tensor(1, "x", dt, &xd, &xs).unwrap();
    let dy = g.user_tensor(2, "dy", dt, &xd, &xs).unwrap();
    let scale = g.user_tensor(3, "scale", f, &pd, &ps).unwrap();
    let mean = layer.then(|| g.user_tensor(4, "mean", f, &sd, &ss).unwrap());
    let inv_variance = g.user_tensor(5, "inv_var", f, &sd, &ss).unwrap();
    let dx = g.user_tensor(6, "dx", dt, &xd, &xs).unwrap();
    let dscale = g.user_tensor(7, "dscale", f, &pd, &ps).unwrap();
    let dbias = layer.then(|| g.user_tensor(8, "dbias", f, &pd, &ps).unwrap());
    lower::norm_backward(
        &mut g,
        &NormBackwardRequest {
            kind,
            x,
            dy,
            scale,
            mean,
            inv_variance,
            dx,
            dscale,
            dbias,
        },
    )
    .unwrap();
    let label = format!("{kind:?}norm bwd {}", norm_label(dt));
    let b = build(g.finish(), &[HeurMode::A, HeurMode::Fallback])
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    // Scale near 1 and dy correlated with x, so that both mean terms of dX matter.
    let [(xb, xv), _, _] = norm_inputs(rows, feat, dt);
    let (sb, sv) = encode(
        &rand_vec(feat as usize, 9)
            .iter()
            .map(|v| 1.0 + 0.5 * v)
            .collect::<Vec<_>>(),
        f,
    );
    let (dyb, dyv) = encode(
        &rand_vec((rows * feat) as usize, 11)
            .iter()
            .zip(&xv)
            .map(|(r, x)| r + 0.3 * x)
            .collect::<Vec<_>>(),
        dt,
    );
    let (mean64, inv64) = norm_stats(kind, &xv, feat as usize, 1e-5);
    let (mb, mv) = encode(&mean64, f);
    let (ib, iv) = encode(&inv64, f);
    let mut inputs = HashMap::from([(1, xb), (2, dyb), (3, sb), (5, ib)]);
    if layer {
        inputs.insert(4, mb);
    }
    let out = run(&b, &inputs);
    let n = feat as usize;
    let (mut want_dx, mut want_ds, mut want_db) = (Vec::new(), vec![0.0; n], vec![0.0; n]);
    for r in 0..rows as usize {
        let (x, dy) = (&xv[r * n..(r + 1) * n], &dyv[r * n..(r + 1) * n]);
        let mu = if layer { mv[r] } else { 0.0 };
        let xhat: Vec<f64> = x.iter().map(|v| (v - mu) * iv[r]).collect();
        let gy: Vec<f64> = (0..n).map(|j| dy[j] * sv[j]).collect();
        let mean_g = if layer {
            gy.iter().sum::<f64>() / n as f64
        } else {
            0.0
        };
        let mean_gx = (0..n).map(|j| gy[j] * xhat[j]).sum::<f64>() / n as f64;
        for j in 0..n {
            want_dx.push(iv[r] * (gy[j] - mean_g - xhat[j] * mean_gx));
            want_ds[j] += dy[j] * xhat[j];
            want_db[j] += dy[j];
        }
    }
    let (atol, rtol) = norm_tol(dt);
    check(
        &format!("{label}: dX"),
        &decode(&out[&6], dt),
        &want_dx,
        atol,
        rtol,
    );
    check(
        &format!("{label}: dScale"),
        &decode(&out[&7], f),
        &want_ds,
        1e-3,
        1e-3,
    );
    if layer {
        check(
            &format!("{label}: dBias"),
            &decode(&out[&8], f),
            &want_db,
            1e-3,
            1e-3,
        );
    }
}

#[test]
fn layernorm_backward_bf16() {
    norm_backward_case(NormKind::Layer, CUDNN_DATA_BFLOAT16);
}

#[test]
fn layernorm_backward_fp16() {
    norm_backward_case(NormKind::Layer, CUDNN_DATA_HALF);
}

#[test]
fn rmsnorm_backward_bf16() {
    norm_backward_case(NormKind::Rms, CUDNN_DATA_BFLOAT16);
}

#[test]
fn rmsnorm_backward_fp16() {
    norm_backward_case(NormKind::Rms, CUDNN_DATA_HALF);
}

// ---------------------------------------------------------------- SDPA

/// How a logical `[b,h,s,d]` attention operand sits in memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Layout {
    /// Packed `[b,h,s,d]`.
    Bhsd,
    /// Packed `[b,s,h,d]` (heads interleaved per token): strides `[s*h*d, d, h*d, 1]`.
    Bshd,
    /// Ragged THD: the valid tokens of all batches back to back, heads interleaved (BSHD
    /// strides); each operand carries a `[b+1,1,1,1]` INT32 ragged offset (element offset of
    /// each batch's first token). Needs sequence lengths.
    Thd,
}

/// Broadcast shape of an additive score bias.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum BiasShape {
    /// `[1,h_q,s_q,s_kv]`.
    Heads,
    /// `[b,1,s_q,s_kv]`.
    Batch,
}

/// One attention problem: shapes, masks, bias and memory layout; `Default` is bf16
/// (b, h, s, d) = (2, 4, 128, 64), no mask, packed BHSD.
#[derive(Clone, Debug)]
struct SdpaCase {
    dt: u32,
    b: i64,
    h_q: i64,
    h_k: i64,
    s_q: i64,
    s_kv: i64,
    d: i64,
    causal: Option<DiagonalAlignment>,
    seq_lens: Option<(Vec<i64>, Vec<i64>)>,
    bias: Option<BiasShape>,
    layout: Layout,
}

impl Default for SdpaCase {
    fn default() -> Self {
        SdpaCase {
            dt: CUDNN_DATA_BFLOAT16,
            b: 2,
            h_q: 4,
            h_k: 4,
            s_q: 128,
            s_kv: 128,
            d: 64,
            causal: None,
            seq_lens: None,
            bias: None,
            layout: Layout::Bhsd,
        }
    }
}

impl SdpaCase {
    /// Valid (query, key) lengths of batch `bi`.
    fn lens(&self, bi: usize) -> (i64, i64) {
        match &self.seq_lens {
            Some((q, kv)) => (q[bi], kv[bi]),
            None => (self.s_q, self.s_kv),
        }
    }

    fn bias_dims(&self) -> Option<[i64; 4]> {
        self.bias.map(|s| match s {
            BiasShape::Heads => [1, self.h_q, self.s_q, self.s_kv],
            BiasShape::Batch => [self.b, 1, self.s_q, self.s_kv],
        })
    }

    fn scale(&self) -> f64 {
        1.0 / (self.d as f64).sqrt()
    }

    fn label(&self, what: &str) -> String {
        format!(
            "sdpa {what} {} d{} b{} hq{} hk{} sq{} skv{} {:?} {:?} pad {} bias {:?}",
            if self.dt == CUDNN_DATA_HALF {
                "fp16"
            } else {
                "bf16"
            },
            self.d,
            self.b,
            self.h_q,
            self.h_k,
            self.s_q,
            self.s_kv,
            self.causal,
            self.layout,
            self.seq_lens.is_some(),
            self.bias,
        )
    }

    /// Placement of a Q-side (`heads = h_q`, `s = s_q`) or KV-side operand.
    fn placement(&self, q_side: bool) -> Placement {
        let (h, s) = if q_side {
            (self.h_q, self.s_q)
        } else {
            (self.h_k, self.s_kv)
        };
        let lens = (0..self.b as usize)
            .map(|bi| {
                let (lq, lkv) = self.lens(bi);
                if q_side { lq } else { lkv }
            })
            .collect();
        Placement::new(self.layout, [self.b, h, s, self.d], lens)
    }

    /// Tolerance factors (atol as a fraction of max |reference|, rtol) for O and gradients.
    fn tol(&self) -> (f64, f64) {
        if self.dt == CUDNN_DATA_HALF {
            (5e-3, 1e-2)
        } else {
            (2e-2, 2e-2)
        }
    }
}

/// Where each element of a logical `[b,h,s,d]` operand lives in its buffer.
struct Placement {
    layout: Layout,
    dims: [i64; 4],
    strides: [i64; 4],
    /// Valid rows per batch (all of `s` unless lengths are given).
    lens: Vec<i64>,
    /// Ragged element offsets per batch (`b+1` entries), THD only.
    offsets: Option<Vec<i64>>,
}

impl Placement {
    fn new(layout: Layout, dims: [i64; 4], lens: Vec<i64>) -> Placement {
        let [b, h, s, d] = dims;
        let strides = match layout {
            Layout::Bhsd => [h * s * d, s * d, d, 1],
            Layout::Bshd | Layout::Thd => [s * h * d, d, h * d, 1],
        };
        let offsets = (layout == Layout::Thd).then(|| {
            let mut o = vec![0i64];
            for bi in 0..b as usize {
                o.push(o[bi] + lens[bi] * h * d);
            }
            o
        });
        Placement {
            layout,
            dims,
            strides,
            lens,
            offsets,
        }
    }

    fn at(&self, b: i64, h: i64, s: i64, t: i64) -> usize {
        let base = match &self.offsets {
            Some(o) => o[b as usize],
            None => b * self.strides[0],
        };
        (base + h * self.strides[1] + s * self.strides[2] + t * self.strides[3]) as usize
    }

    /// Elements the buffer holds data for.
    fn span(&self) -> usize {
        match &self.offsets {
            Some(o) => o[self.dims[0] as usize] as usize,
            None => self.dims.iter().product::<i64>() as usize,
        }
    }

    /// (logical dense-BHSD index, buffer index) of every element: valid rows only when
    /// `valid_only` (ragged buffers hold nothing else), every row otherwise.
    fn positions(&self, valid_only: bool) -> Vec<(usize, usize)> {
        let [b, h, s, d] = self.dims;
        let mut out = Vec::new();
        for bi in 0..b {
            let rows = if valid_only || self.layout == Layout::Thd {
                s.min(self.lens[bi as usize])
            } else {
                s
            };
            for hi in 0..h {
                for si in 0..rows {
                    for t in 0..d {
                        out.push((idx(bi, hi, si, t, self.dims), self.at(bi, hi, si, t)));
                    }
                }
            }
        }
        out
    }

    /// The buffer contents for logical values (unused positions zero).
    fn to_physical(&self, logical: &[f64]) -> Vec<f64> {
        let mut out = vec![0.0; self.span()];
        for (l, p) in self.positions(false) {
            out[p] = logical[l];
        }
        out
    }

    /// (got, want) restricted to valid rows: `got` read from the buffer, `want` logical.
    fn compare(&self, buffer: &[f64], want_logical: &[f64]) -> (Vec<f64>, Vec<f64>) {
        self.positions(true)
            .into_iter()
            .map(|(l, p)| (buffer[p], want_logical[l]))
            .unzip()
    }
}

struct SdpaRef {
    o: Vec<f64>,
    stats: Vec<f64>,
    p: Vec<f64>,
}

fn idx(b: i64, h: i64, s: i64, d: i64, dims: [i64; 4]) -> usize {
    (((b * dims[1] + h) * dims[2] + s) * dims[3] + d) as usize
}

fn keep(c: &SdpaCase, bi: usize, i: i64, j: i64) -> bool {
    let (sq, skv) = c.lens(bi);
    if i >= sq || j >= skv {
        return false;
    }
    match c.causal {
        None => true,
        Some(DiagonalAlignment::TopLeft) => j <= i,
        Some(DiagonalAlignment::BottomRight) => j <= i + (skv - sq),
    }
}

/// Index into a broadcast bias `[b|1, h|1, s_q, s_kv]` (dense).
fn bias_at(dims: [i64; 4], b: i64, h: i64, i: i64, j: i64) -> usize {
    idx(
        if dims[0] == 1 { 0 } else { b },
        if dims[1] == 1 { 0 } else { h },
        i,
        j,
        dims,
    )
}

/// f64 SDPA forward on logical BHSD arrays: s = scale·QKᵀ + bias, masked, softmax, ·V.
/// Fully masked (padded) rows get P = 0, O = 0, Stats = 0.
fn sdpa_reference(c: &SdpaCase, q: &[f64], k: &[f64], v: &[f64], bias: Option<&[f64]>) -> SdpaRef {
    let scale = c.scale();
    let g = c.h_q / c.h_k;
    let qd = [c.b, c.h_q, c.s_q, c.d];
    let kd = [c.b, c.h_k, c.s_kv, c.d];
    let mut o = vec![0.0; (c.b * c.h_q * c.s_q * c.d) as usize];
    let mut stats = vec![0.0; (c.b * c.h_q * c.s_q) as usize];
    let mut p_all = vec![0.0; (c.b * c.h_q * c.s_q * c.s_kv) as usize];
    for b in 0..c.b {
        for h in 0..c.h_q {
            let hk = h / g;
            for i in 0..c.s_q {
                let mut s = vec![f64::NEG_INFINITY; c.s_kv as usize];
                for j in 0..c.s_kv {
                    if keep(c, b as usize, i, j) {
                        let mut acc = 0.0;
                        for t in 0..c.d {
                            acc += q[idx(b, h, i, t, qd)] * k[idx(b, hk, j, t, kd)];
                        }
                        s[j as usize] = acc * scale
                            + match (bias, c.bias_dims()) {
                                (Some(bv), Some(bd)) => bv[bias_at(bd, b, h, i, j)],
                                _ => 0.0,
                            };
                    }
                }
                let m = s.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
                if m == f64::NEG_INFINITY {
                    continue;
                }
                let sum: f64 = s.iter().map(|x| (x - m).exp()).sum();
                stats[((b * c.h_q + h) * c.s_q + i) as usize] = m + sum.ln();
                for j in 0..c.s_kv as usize {
                    let p = (s[j] - m).exp() / sum;
                    p_all[(((b * c.h_q + h) * c.s_q + i) * c.s_kv) as usize + j] = p;
                    for t in 0..c.d {
                        o[idx(b, h, i, t, qd)] += p * v[idx(b, hk, j as i64, t, kd)];
                    }
                }
            }
        }
    }
    SdpaRef { o, stats, p: p_all }
}

struct SdpaGrads {
    dq: Vec<f64>,
    dk: Vec<f64>,
    dv: Vec<f64>,
    /// Summed over the bias's broadcast axes (before the attention scale).
    dbias: Vec<f64>,
}

/// f64 SDPA backward from the forward's probabilities: dS = P∘(dP − rowsum(dO∘O)),
/// dQ = scale·dS·K, dK = scale·dSᵀ·Q, dV = Pᵀ·dO; K/V gradients summed over each GQA group.
#[allow(clippy::too_many_arguments)]
fn sdpa_backward_reference(
    c: &SdpaCase,
    q: &[f64],
    k: &[f64],
    v: &[f64],
    o: &[f64],
    d_o: &[f64],
    p: &[f64],
) -> SdpaGrads {
    let scale = c.scale();
    let g = c.h_q / c.h_k;
    let (sq, skv, d) = (c.s_q, c.s_kv, c.d);
    let qd = [c.b, c.h_q, sq, d];
    let kd = [c.b, c.h_k, skv, d];
    let mut dq = vec![0.0; q.len()];
    let mut dk = vec![0.0; k.len()];
    let mut dv = vec![0.0; v.len()];
    let bd = c.bias_dims().unwrap_or([1, 1, sq, skv]);
    let mut dbias = vec![0.0; bd.iter().product::<i64>() as usize];
    for b in 0..c.b {
        for h in 0..c.h_q {
            let hk = h / g;
            for i in 0..sq {
                let dsum: f64 = (0..d)
                    .map(|t| d_o[idx(b, h, i, t, qd)] * o[idx(b, h, i, t, qd)])
                    .sum();
                for j in 0..skv {
                    let pij = p[(((b * c.h_q + h) * sq + i) * skv + j) as usize];
                    if pij == 0.0 {
                        continue;
                    }
                    let dp: f64 = (0..d)
                        .map(|t| d_o[idx(b, h, i, t, qd)] * v[idx(b, hk, j, t, kd)])
                        .sum();
                    let ds = pij * (dp - dsum);
                    dbias[bias_at(bd, b, h, i, j)] += ds;
                    for t in 0..d {
                        dv[idx(b, hk, j, t, kd)] += pij * d_o[idx(b, h, i, t, qd)];
                        dq[idx(b, h, i, t, qd)] += scale * ds * k[idx(b, hk, j, t, kd)];
                        dk[idx(b, hk, j, t, kd)] += scale * ds * q[idx(b, h, i, t, qd)];
                    }
                }
            }
        }
    }
    SdpaGrads { dq, dk, dv, dbias }
}

/// `check` with atol = `a`·max|want| (gradients and outputs scale with the problem).
fn check_scaled(what: &str, got: &[f64], want: &[f64], a: f64, rtol: f64) {
    let max = want.iter().fold(0.0f64, |m, w| m.max(w.abs()));
    check(what, got, want, a * max, rtol);
}

/// Rounded logical values and their device bytes for an operand.
fn operand_data(c: &SdpaCase, p: &Placement, seed: u64) -> (Vec<u8>, Vec<f64>) {
    let n = p.dims.iter().product::<i64>() as usize;
    let (_, logical) = encode(&rand_vec(n, seed), c.dt);
    (encode(&p.to_physical(&logical), c.dt).0, logical)
}

fn int32_bytes(v: &[i64]) -> Vec<u8> {
    encode(
        &v.iter().map(|x| *x as f64).collect::<Vec<_>>(),
        CUDNN_DATA_INT32,
    )
    .0
}

/// Declares an attention operand with its placement (and ragged offset tensor `off`).
fn sdpa_operand(
    g: &mut GraphBuilder,
    uid: Uid,
    name: &str,
    dt: u32,
    p: &Placement,
    off: Uid,
) -> Uid {
    let u = g.user_tensor(uid, name, dt, &p.dims, &p.strides).unwrap();
    if p.offsets.is_some() {
        if g.tensor(off).is_err() {
            g.user_tensor(
                off,
                &format!("{name}_ragged_offset"),
                CUDNN_DATA_INT32,
                &[p.dims[0] + 1, 1, 1, 1],
                &[1, 1, 1, 1],
            )
            .unwrap();
        }
        g.set_ragged_offset(u, off).unwrap();
    }
    u
}

/// Sequence-length tensors (uids `uq`, `ukv`) and their bytes, when the case has lengths.
fn seq_len_tensors(
    g: &mut GraphBuilder,
    c: &SdpaCase,
    (uq, ukv): (Uid, Uid),
    inputs: &mut HashMap<Uid, Vec<u8>>,
) -> (Option<Uid>, Option<Uid>) {
    let Some((lq, lkv)) = &c.seq_lens else {
        return (None, None);
    };
    let t = |g: &mut GraphBuilder, u, name| {
        g.user_tensor(u, name, CUDNN_DATA_INT32, &[c.b, 1, 1, 1], &[1, 1, 1, 1])
            .unwrap()
    };
    inputs.insert(uq, int32_bytes(lq));
    inputs.insert(ukv, int32_bytes(lkv));
    (Some(t(g, uq, "seq_q")), Some(t(g, ukv, "seq_kv")))
}

/// The bias tensor (uid `u`) with random values in [-2, 2), when the case has one.
fn bias_tensor(
    g: &mut GraphBuilder,
    c: &SdpaCase,
    u: Uid,
    inputs: &mut HashMap<Uid, Vec<u8>>,
) -> Option<(Uid, Vec<f64>)> {
    let dims = c.bias_dims()?;
    let n = dims.iter().product::<i64>() as usize;
    let (bytes, vals) = encode(
        &rand_vec(n, 31).iter().map(|x| 2.0 * x).collect::<Vec<_>>(),
        c.dt,
    );
    inputs.insert(u, bytes);
    let uid = g
        .user_tensor(u, "bias", c.dt, &dims, &packed_strides(&dims))
        .unwrap();
    Some((uid, vals))
}

/// Ragged offsets of the placements, keyed by their offset uids.
fn ragged_inputs(inputs: &mut HashMap<Uid, Vec<u8>>, pairs: &[(Uid, &Placement)]) {
    for (u, p) in pairs {
        if let Some(o) = &p.offsets {
            inputs.insert(*u, int32_bytes(o));
        }
    }
}

fn sdpa_forward_case(c: SdpaCase, implementation: SdpaImplementation) {
    let version = loader::version().unwrap();
    let (pq, pk) = (c.placement(true), c.placement(false));
    let mut g = GraphBuilder::new();
    let q = sdpa_operand(&mut g, 1, "q", c.dt, &pq, 10);
    let k = sdpa_operand(&mut g, 2, "k", c.dt, &pk, 11);
    let v = sdpa_operand(&mut g, 3, "v", c.dt, &pk, 12);
    let o = sdpa_operand(&mut g, 4, "o", c.dt, &pq, 13);
    let sd = [c.b, c.h_q, c.s_q, 1];
    let stats = g
        .user_tensor(5, "stats", CUDNN_DATA_FLOAT, &sd, &packed_strides(&sd))
        .unwrap();
    let (qb, qv) = operand_data(&c, &pq, 11);
    let (kb, kv) = operand_data(&c, &pk, 12);
    let (vb, vv) = operand_data(&c, &pk, 13);
    let mut inputs = HashMap::from([(1, qb), (2, kb), (3, vb)]);
    ragged_inputs(&mut inputs, &[(10, &pq), (11, &pk), (12, &pk), (13, &pq)]);
    let (seq_len_q, seq_len_kv) = seq_len_tensors(&mut g, &c, (6, 7), &mut inputs);
    let bias = bias_tensor(&mut g, &c, 8, &mut inputs);
    let used = sdpa_forward(
        &mut g,
        &SdpaForwardRequest {
            q,
            k,
            v,
            o,
            stats: Some(stats),
            options: ScoreOptions {
                attn_scale: Some(AttnScale::Value(c.scale() as f32)),
                bias: bias.as_ref().map(|b| b.0),
                causal: c.causal,
                seq_len_q,
                seq_len_kv,
                ..Default::default()
            },
            implementation,
        },
        version,
    )
    .unwrap();
    let label = format!("{} {used:?}", c.label("fwd"));
    eprintln!("{label}");
    let b = build(g.finish(), &[HeurMode::A, HeurMode::Fallback])
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    let out = run(&b, &inputs);
    let r = sdpa_reference(&c, &qv, &kv, &vv, bias.as_ref().map(|b| b.1.as_slice()));
    let (got_o, want_o) = pq.compare(&decode(&out[&4], c.dt), &r.o);
    // Stats rows of padded queries are unspecified: compare valid rows only.
    let rows = Placement::new(Layout::Bhsd, sd, pq.lens.clone());
    let (got_s, want_s) = rows.compare(&decode(&out[&5], CUDNN_DATA_FLOAT), &r.stats);
    let (a, rtol) = c.tol();
    check_scaled(&format!("{label}: O"), &got_o, &want_o, a, rtol);
    check(&format!("{label}: Stats"), &got_s, &want_s, 2e-3, 1e-3);
}

/// SDPA backward (composite) against the f64 reference: dQ, dK, dV (and dBias when asked).
fn sdpa_backward_case(c: SdpaCase, with_dbias: bool) {
    let version = loader::version().unwrap();
    let dt = c.dt;
    let (pq, pk) = (c.placement(true), c.placement(false));
    let (qb, qv) = operand_data(&c, &pq, 21);
    let (kb, kv) = operand_data(&c, &pk, 22);
    let (vb, vv) = operand_data(&c, &pk, 23);
    let (dob, dov) = operand_data(&c, &pq, 24);
    let mut g = GraphBuilder::new();
    let mut inputs = HashMap::from([(1, qb), (2, kb), (3, vb), (5, dob)]);
    let bias = bias_tensor(&mut g, &c, 12, &mut inputs);
    let r = sdpa_reference(&c, &qv, &kv, &vv, bias.as_ref().map(|b| b.1.as_slice()));
    // O as the forward would have written it (rounded to the I/O type).
    let (_, ov) = encode(&r.o, dt);
    inputs.insert(4, encode(&pq.to_physical(&ov), dt).0);
    inputs.insert(6, encode(&r.stats, CUDNN_DATA_FLOAT).0);
    let q = sdpa_operand(&mut g, 1, "q", dt, &pq, 20);
    let k = sdpa_operand(&mut g, 2, "k", dt, &pk, 21);
    let v = sdpa_operand(&mut g, 3, "v", dt, &pk, 22);
    let o = sdpa_operand(&mut g, 4, "o", dt, &pq, 23);
    let d_o = sdpa_operand(&mut g, 5, "dO", dt, &pq, 23);
    let sd = [c.b, c.h_q, c.s_q, 1];
    let stats = g
        .user_tensor(6, "stats", CUDNN_DATA_FLOAT, &sd, &packed_strides(&sd))
        .unwrap();
    let dq = sdpa_operand(&mut g, 7, "dQ", dt, &pq, 20);
    let dk = sdpa_operand(&mut g, 8, "dK", dt, &pk, 21);
    let dv = sdpa_operand(&mut g, 9, "dV", dt, &pk, 22);
    ragged_inputs(&mut inputs, &[(20, &pq), (21, &pk), (22, &pk), (23, &pq)]);
    let (seq_len_q, seq_len_kv) = seq_len_tensors(&mut g, &c, (10, 11), &mut inputs);
    let dbias = with_dbias.then(|| {
        let dims = c.bias_dims().expect("dBias needs a bias");
        g.user_tensor(13, "dBias", dt, &dims, &packed_strides(&dims))
            .unwrap()
    });
    sdpa_backward(
        &mut g,
        &SdpaBackwardRequest {
            q,
            k,
            v,
            o,
            d_o,
            stats,
            dq,
            dk,
            dv,
            dbias,
            options: ScoreOptions {
                attn_scale: Some(AttnScale::Value(c.scale() as f32)),
                bias: bias.as_ref().map(|b| b.0),
                causal: c.causal,
                seq_len_q,
                seq_len_kv,
                ..Default::default()
            },
            deterministic: false,
        },
        version,
    )
    .unwrap();
    let label = format!(
        "{}{}",
        c.label("bwd"),
        if with_dbias { " +dBias" } else { "" }
    );
    eprintln!("{label}");
    let b = build(g.finish(), &[HeurMode::A, HeurMode::Fallback])
        .unwrap_or_else(|e| panic!("{label}: {e}"));
    let out = run(&b, &inputs);
    let want = sdpa_backward_reference(&c, &qv, &kv, &vv, &ov, &dov, &r.p);
    let (a, rtol) = c.tol();
    for (uid, name, p, w) in [
        (9, "dV", &pk, &want.dv),
        (8, "dK", &pk, &want.dk),
        (7, "dQ", &pq, &want.dq),
    ] {
        let (got, want) = p.compare(&decode(&out[&uid], dt), w);
        check_scaled(&format!("{label}: {name}"), &got, &want, a, rtol);
    }
    if with_dbias {
        check_scaled(
            &format!("{label}: dBias"),
            &decode(&out[&13], dt),
            &want.dbias,
            a,
            rtol,
        );
    }
}

/// The f64 references themselves (no GPU): the backward reference is the gradient of
/// L = Σ O∘dO of the forward reference (central differences), with GQA, a bias, bottom-right
/// causal and padding; THD placement puts batch b's token s of head h at offset[b] + s·h·d + h·d.
#[test]
fn sdpa_references_agree_with_finite_differences() {
    for bias in [BiasShape::Heads, BiasShape::Batch] {
        let c = SdpaCase {
            b: 2,
            h_q: 4,
            h_k: 2,
            s_q: 5,
            s_kv: 7,
            d: 8,
            causal: Some(DiagonalAlignment::BottomRight),
            seq_lens: Some((vec![5, 3], vec![7, 6])),
            bias: Some(bias),
            ..Default::default()
        };
        let (nq, nk) = (
            (c.b * c.h_q * c.s_q * c.d) as usize,
            (c.b * c.h_k * c.s_kv * c.d) as usize,
        );
        let nb = c.bias_dims().unwrap().iter().product::<i64>() as usize;
        let mut ins = [
            rand_vec(nq, 1),
            rand_vec(nk, 2),
            rand_vec(nk, 3),
            rand_vec(nb, 4),
        ];
        let d_o = rand_vec(nq, 5);
        let loss = |ins: &[Vec<f64>; 4]| -> f64 {
            let r = sdpa_reference(&c, &ins[0], &ins[1], &ins[2], Some(&ins[3]));
            r.o.iter().zip(&d_o).map(|(o, g)| o * g).sum()
        };
        let r = sdpa_reference(&c, &ins[0], &ins[1], &ins[2], Some(&ins[3]));
        let gr = sdpa_backward_reference(&c, &ins[0], &ins[1], &ins[2], &r.o, &d_o, &r.p);
        let grads = [&gr.dq, &gr.dk, &gr.dv, &gr.dbias];
        let mut checked = 0;
        for (t, grad) in grads.iter().enumerate() {
            for e in (0..ins[t].len()).step_by(7) {
                let h = 1e-5;
                let x0 = ins[t][e];
                ins[t][e] = x0 + h;
                let up = loss(&ins);
                ins[t][e] = x0 - h;
                let down = loss(&ins);
                ins[t][e] = x0;
                let fd = (up - down) / (2.0 * h);
                assert!(
                    (fd - grad[e]).abs() <= 1e-6 + 1e-5 * fd.abs(),
                    "{bias:?} input {t} element {e}: finite difference {fd}, reference {}",
                    grad[e]
                );
                checked += usize::from(fd != 0.0);
            }
        }
        assert!(checked > 50, "only {checked} non-zero gradients probed");
    }
    let p = Placement::new(Layout::Thd, [2, 3, 4, 8], vec![4, 2]);
    assert_eq!(p.offsets, Some(vec![0, 96, 144]));
    assert_eq!(p.at(1, 2, 1, 5), 96 + 24 + 16 + 5);
    let logical = rand_vec(2 * 3 * 4 * 8, 6);
    let (got, want) = p.compare(&p.to_physical(&logical), &logical);
    assert_eq!(got, want);
    assert_eq!(got.len(), p.span());
}

#[test]
fn sdpa_forward_causal_bf16_fp16_d64_d128() {
    for dt in [CUDNN_DATA_BFLOAT16, CUDNN_DATA_HALF] {
        for d in [64, 128] {
            sdpa_forward_case(
                SdpaCase {
                    dt,
                    d,
                    causal: Some(DiagonalAlignment::TopLeft),
                    ..Default::default()
                },
                SdpaImplementation::Auto,
            );
        }
    }
}

#[test]
fn sdpa_forward_bottom_right_causal_gqa() {
    sdpa_forward_case(
        SdpaCase {
            h_q: 8,
            h_k: 2,
            s_q: 64,
            s_kv: 192,
            d: 128,
            causal: Some(DiagonalAlignment::BottomRight),
            ..Default::default()
        },
        SdpaImplementation::Auto,
    );
}

#[test]
fn sdpa_forward_padding_unified_and_composite() {
    for imp in [SdpaImplementation::Auto, SdpaImplementation::Composite] {
        sdpa_forward_case(
            SdpaCase {
                dt: CUDNN_DATA_HALF,
                b: 3,
                seq_lens: Some((vec![128, 77, 5], vec![128, 100, 64])),
                ..Default::default()
            },
            imp,
        );
    }
}

/// Additive bias broadcast over the batch (`[1,h,s_q,s_kv]`, with a top-left causal mask) and
/// over the heads (`[b,1,s_q,s_kv]`), at s_q != s_kv with an odd s_q.
#[test]
fn sdpa_forward_bias_broadcast_shapes() {
    sdpa_forward_case(
        SdpaCase {
            dt: CUDNN_DATA_HALF,
            s_q: 77,
            s_kv: 136,
            d: 128,
            causal: Some(DiagonalAlignment::TopLeft),
            bias: Some(BiasShape::Heads),
            ..Default::default()
        },
        SdpaImplementation::Auto,
    );
    sdpa_forward_case(
        SdpaCase {
            b: 3,
            h_q: 3,
            h_k: 3,
            s_q: 96,
            s_kv: 72,
            bias: Some(BiasShape::Batch),
            ..Default::default()
        },
        SdpaImplementation::Auto,
    );
}

/// Ragged THD Q/K/V/O (packed tokens, per-batch offsets) with GQA, through the default choice
/// and the composite form.
#[test]
fn sdpa_forward_thd_ragged_gqa() {
    for imp in [SdpaImplementation::Auto, SdpaImplementation::Composite] {
        sdpa_forward_case(
            SdpaCase {
                b: 3,
                h_q: 4,
                h_k: 2,
                s_q: 64,
                s_kv: 96,
                d: 128,
                seq_lens: Some((vec![37, 64, 5], vec![50, 96, 91])),
                layout: Layout::Thd,
                ..Default::default()
            },
            imp,
        );
    }
}

#[test]
fn sdpa_backward_causal_bf16() {
    sdpa_backward_case(
        SdpaCase {
            causal: Some(DiagonalAlignment::TopLeft),
            ..Default::default()
        },
        false,
    );
}

#[test]
fn sdpa_backward_causal_fp16_d64_d128_bf16_d128() {
    for (dt, d) in [
        (CUDNN_DATA_HALF, 64),
        (CUDNN_DATA_HALF, 128),
        (CUDNN_DATA_BFLOAT16, 128),
    ] {
        sdpa_backward_case(
            SdpaCase {
                dt,
                d,
                s_q: 77,
                s_kv: 133,
                causal: Some(DiagonalAlignment::TopLeft),
                ..Default::default()
            },
            false,
        );
    }
}

#[test]
fn sdpa_backward_bottom_right_causal_fp16_bf16() {
    for dt in [CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16] {
        sdpa_backward_case(
            SdpaCase {
                dt,
                s_q: 64,
                s_kv: 160,
                causal: Some(DiagonalAlignment::BottomRight),
                ..Default::default()
            },
            false,
        );
    }
}

#[test]
fn sdpa_backward_padding_mask() {
    sdpa_backward_case(
        SdpaCase {
            dt: CUDNN_DATA_HALF,
            b: 3,
            s_q: 96,
            s_kv: 128,
            seq_lens: Some((vec![96, 41, 7], vec![128, 100, 33])),
            ..Default::default()
        },
        false,
    );
}

/// Bias `[1,h,s_q,s_kv]` with dBias (the dP-workspace dQ path), and `[b,1,s_q,s_kv]` without.
#[test]
fn sdpa_backward_bias_and_dbias() {
    sdpa_backward_case(
        SdpaCase {
            dt: CUDNN_DATA_HALF,
            s_q: 64,
            s_kv: 136,
            bias: Some(BiasShape::Heads),
            ..Default::default()
        },
        true,
    );
    sdpa_backward_case(
        SdpaCase {
            s_q: 96,
            s_kv: 72,
            causal: Some(DiagonalAlignment::TopLeft),
            bias: Some(BiasShape::Batch),
            ..Default::default()
        },
        false,
    );
}

/// GQA: dK/dV summed over each group of query heads; BSHD (interleaved) strides.
#[test]
fn sdpa_backward_gqa_bshd() {
    sdpa_backward_case(
        SdpaCase {
            h_q: 8,
            h_k: 2,
            s_q: 80,
            s_kv: 144,
            d: 128,
            causal: Some(DiagonalAlignment::TopLeft),
            layout: Layout::Bshd,
            ..Default::default()
        },
        false,
    );
}

/// Ragged THD backward with GQA: without a causal mask, and bottom-right causal (per-batch
/// diagonal from the lengths).
#[test]
fn sdpa_backward_thd_ragged_gqa() {
    for causal in [None, Some(DiagonalAlignment::BottomRight)] {
        sdpa_backward_case(
            SdpaCase {
                dt: CUDNN_DATA_HALF,
                b: 3,
                h_q: 4,
                h_k: 2,
                s_q: 64,
                s_kv: 96,
                causal,
                seq_lens: Some((vec![37, 64, 5], vec![50, 96, 91])),
                layout: Layout::Thd,
                ..Default::default()
            },
            false,
        );
    }
}

/// Inference SDPA (no Stats output): the composite softmax still writes a virtual Stats, which
/// the backend's SDPA pattern needs; numerics against the f64 reference.
#[test]
fn sdpa_forward_inference_without_stats_bf16() {
    let c = SdpaCase {
        h_q: 3,
        h_k: 3,
        causal: Some(DiagonalAlignment::TopLeft),
        ..Default::default()
    };
    let n = (c.b * c.h_q * c.s_q * c.d) as usize;
    let (qb, qv) = encode(&rand_vec(n, 21), c.dt);
    let (kb, kv) = encode(&rand_vec(n, 22), c.dt);
    let (vb, vv) = encode(&rand_vec(n, 23), c.dt);
    let built = build(
        sdpa_fwd_graph(c.b, c.h_q, c.s_q, c.d),
        &[HeurMode::A, HeurMode::Fallback],
    )
    .unwrap();
    assert_eq!(built.plan.user_uids, vec![1, 2, 3, 4], "no Stats operand");
    let out = run(&built, &HashMap::from([(1, qb), (2, kb), (3, vb)]));
    let r = sdpa_reference(&c, &qv, &kv, &vv, None);
    check(
        "sdpa inference (no Stats) O",
        &decode(&out[&4], c.dt),
        &r.o,
        2e-2,
        2e-2,
    );
}

// ---------------------------------------------------------------- execution paths

/// Fills `n` bf16 values, uniform in [-1, 1), from `seed`.
fn random_bf16_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    let mut out = Vec::with_capacity(n * 2);
    for _ in 0..n {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let f = ((x >> 40) as f32 / (1u64 << 24) as f32) * 2.0 - 1.0;
        out.extend_from_slice(&bf16::from_f32(f).to_bits().to_le_bytes());
    }
    out
}

/// One set of device buffers for a plan's user uids, inputs random, outputs poisoned.
struct BufSet {
    bufs: Vec<(Uid, DevBuf, usize)>,
    ptrs: Vec<*mut c_void>,
}

fn buf_set(b: &Built, outputs: &[Uid], seed: u64) -> BufSet {
    let graph = &b.opg.graph;
    let mut bufs = Vec::new();
    for &u in &b.plan.user_uids {
        let n = tensor_bytes(graph, u);
        let buf = alloc(n);
        if !outputs.contains(&u) {
            let data = random_bf16_bytes(n / 2, seed * 31 + u as u64);
            upload(&buf, &data);
        }
        bufs.push((u, buf, n));
    }
    let ptrs = bufs.iter().map(|(_, d, _)| d.0 as *mut c_void).collect();
    BufSet { bufs, ptrs }
}

impl BufSet {
    fn poison(&self, outputs: &[Uid]) {
        for (u, d, n) in &self.bufs {
            if outputs.contains(u) {
                fill(d, 0xFF, *n);
            }
        }
    }
    fn read(&self, uid: Uid) -> Vec<u8> {
        let (_, d, n) = self.bufs.iter().find(|(u, _, _)| *u == uid).unwrap();
        let mut host = vec![0u8; *n];
        unsafe { drv::memcpy_dtoh_sync(host.as_mut_slice(), d.0) }.unwrap();
        host
    }
}

/// Every execution path computes bit-identical outputs to the plain path, also when the pointers
/// change between calls (the reuse path re-points its descriptor, the graph path updates its
/// graph): knobs of how work is submitted never change numerics.
fn paths_match_plain(name: &str, b: &Built, output: Uid) {
    let g = gpu();
    let outs = [output];
    let sets = [buf_set(b, &outs, 1), buf_set(b, &outs, 2)];
    let ws = alloc(b.plan.workspace_size());
    let run = |path: ExecPath, set: &BufSet| {
        set.poison(&outs);
        unsafe {
            b.plan.execute_via(
                path,
                g.handle,
                g.stream as *mut c_void,
                &set.ptrs,
                ws.0 as *mut c_void,
            )
        }
        .unwrap_or_else(|e| panic!("{name} via {path:?}: {e}"));
        unsafe { drv::stream::synchronize(g.stream) }.unwrap();
        set.read(output)
    };
    let want: Vec<Vec<u8>> = sets.iter().map(|s| run(ExecPath::Plain, s)).collect();
    assert_ne!(want[0], want[1], "{name}: the two input sets must differ");
    assert!(
        want[0].chunks_exact(2).all(|c| c != [0xFF, 0xFF]),
        "{name}: plain path left poisoned output"
    );
    // Both ways of changing pointers: a fresh descriptor per change, then re-pointing in place
    // (probed; where the backend refuses, it falls back to fresh descriptors).
    for allow_repoint in [false, true] {
        dnnplan::cudnn::exec_cache::force_repoint(allow_repoint);
        for path in [ExecPath::ReusePack, ExecPath::CudaGraph] {
            for round in 0..5 {
                let k = round % 2;
                let got = run(path, &sets[k]);
                assert!(
                    got == want[k],
                    "{name}: {path:?} round {round} (set {k}, re-pointing allowed: \
                     {allow_repoint}) differs from the plain path"
                );
            }
        }
    }
    eprintln!(
        "  {name} ({}): reuse and graph paths bit-identical to plain over alternating pointer sets; \
         re-pointing a finalized variant pack: {:?}; CUDA graph: {}",
        b.plan.name,
        dnnplan::cudnn::exec_cache::repoint_supported(),
        b.plan
            .cuda_graph_unsupported()
            .map(|r| format!("unsupported ({})", r.chars().take(160).collect::<String>()))
            .unwrap_or_else(|| "native".into())
    );
}

#[test]
fn execution_paths_match_the_plain_path() {
    let modes = [HeurMode::A, HeurMode::Fallback];
    let mm = build(
        matmul_graph(128, 96, 64, CUDNN_DATA_BFLOAT16, false).finish(),
        &modes,
    )
    .unwrap();
    paths_match_plain("matmul 128x96x64 bf16", &mm, 4);
    let sdpa = build(sdpa_fwd_graph(1, 2, 128, 64), &modes).unwrap();
    paths_match_plain("sdpa fwd causal (1,2,128,64)", &sdpa, 4);
}

// ---------------------------------------------------------------- benchmark (ignored; no assertions)
//
// bench/run_cudnn_bench.sh runs this (`--ignored --nocapture bench_cudnn_backend`) and
// bench/cudnn_reference.py (nvidia-cudnn-frontend 1.32.0) in the same device session, then
// bench/cudnn_table.py joins the two into the table recorded in bench/RESULTS.md.

fn sdpa_fwd_graph(b: i64, h: i64, s: i64, d: i64) -> BackendGraph {
    let mut g = GraphBuilder::new();
    let dims = [b, h, s, d];
    let st = packed_strides(&dims);
    let dt = CUDNN_DATA_BFLOAT16;
    let q = g.user_tensor(1, "q", dt, &dims, &st).unwrap();
    let k = g.user_tensor(2, "k", dt, &dims, &st).unwrap();
    let v = g.user_tensor(3, "v", dt, &dims, &st).unwrap();
    let o = g.user_tensor(4, "o", dt, &dims, &st).unwrap();
    sdpa_forward(
        &mut g,
        &SdpaForwardRequest {
            q,
            k,
            v,
            o,
            stats: None,
            options: ScoreOptions {
                attn_scale: Some(AttnScale::Value(1.0 / (d as f32).sqrt())),
                causal: Some(DiagonalAlignment::TopLeft),
                ..Default::default()
            },
            implementation: SdpaImplementation::Auto,
        },
        loader::version().unwrap(),
    )
    .unwrap();
    g.finish()
}

#[path = "cudnn_support/bench_graphs.rs"]
mod bench_graphs;

/// A built plan list whose backend plans use `path`, with its plan name and workspace bytes.
fn built_list(doc: &str, path: ExecPath) -> (*mut capi::dnnp_plan_list_t, String, u64) {
    // SAFETY: the benchmark is single-threaded; the variable is read when plans are built.
    unsafe { std::env::set_var(dnnplan::cudnn::exec_path::EXEC_PATH_ENV, path.name()) };
    let (list, _) = plan_list(doc);
    capi_ok("build_plans", unsafe {
        capi::dnnp_plan_list_build_plans(list, 0)
    });
    unsafe { std::env::remove_var(dnnplan::cudnn::exec_path::EXEC_PATH_ENV) };
    let mut idx = 0usize;
    capi_ok("selected", unsafe {
        capi::dnnp_plan_list_get_selected_index(list, &mut idx)
    });
    let mut buf = vec![0 as std::ffi::c_char; 256];
    let mut needed = 0usize;
    capi_ok("plan name", unsafe {
        capi::dnnp_plan_list_get_plan_name(list, idx, buf.as_mut_ptr(), buf.len(), &mut needed)
    });
    let name = unsafe { std::ffi::CStr::from_ptr(buf.as_ptr()) }
        .to_string_lossy()
        .into_owned();
    let mut ws = 0u64;
    capi_ok("workspace", unsafe {
        capi::dnnp_plan_list_get_workspace_size(list, &mut ws)
    });
    (list, name, ws)
}

/// Device buffers for a document's operands, in the plan list's operand order (inputs random).
fn operand_buffers(doc: &str, list: *mut capi::dnnp_plan_list_t, seed: u64) -> Vec<DevBuf> {
    let counts = bench_graphs::element_counts(doc);
    let mut uids = vec![0i64; 16];
    let mut n = 0usize;
    capi_ok("operand uids", unsafe {
        capi::dnnp_plan_list_get_operand_uids(list, uids.as_mut_ptr(), uids.len(), &mut n)
    });
    uids.truncate(n);
    uids.iter()
        .map(|u| {
            let elems = counts.iter().find(|c| c.0 == *u).unwrap().1;
            let buf = alloc(elems * 2);
            let data = random_bf16_bytes(elems, seed * 131 + *u as u64);
            upload(&buf, &data);
            buf
        })
        .collect()
}

struct Timing {
    /// Mean host us per execute call over all bursts (the reference script's statistic).
    mean_us: f64,
    /// Fastest burst's mean.
    min_us: f64,
}

/// Host wall time of execute calls alone (enqueue only), in bursts of 50 with a synchronize
/// between bursts; `calls` cycles through the pointer sets.
fn host_time(total: usize, mut exec: impl FnMut(usize)) -> Timing {
    let g = gpu();
    for i in 0..100 {
        exec(i);
    }
    let burst = 50;
    let rounds = total.div_ceil(burst);
    let (mut sum, mut best) = (0.0f64, f64::INFINITY);
    let mut i = 0;
    for _ in 0..rounds {
        unsafe { drv::stream::synchronize(g.stream) }.unwrap();
        let t = std::time::Instant::now();
        for _ in 0..burst {
            exec(i);
            i += 1;
        }
        let s = t.elapsed().as_secs_f64();
        sum += s;
        best = best.min(s / burst as f64);
    }
    unsafe { drv::stream::synchronize(g.stream) }.unwrap();
    Timing {
        mean_us: sum * 1e6 / (rounds * burst) as f64,
        min_us: best * 1e6,
    }
}

/// Kernel time per execute in ms: median over 5 rounds of CUDA events around `iters` executes.
fn kernel_time(iters: usize, mut exec: impl FnMut()) -> f64 {
    let g = gpu();
    for _ in 0..3 {
        exec();
    }
    unsafe { drv::stream::synchronize(g.stream) }.unwrap();
    let (e0, e1) = (
        drv::event::create(drv_sys::CUevent_flags::CU_EVENT_DEFAULT).unwrap(),
        drv::event::create(drv_sys::CUevent_flags::CU_EVENT_DEFAULT).unwrap(),
    );
    let mut rounds = Vec::new();
    for _ in 0..5 {
        unsafe { drv::event::record(e0, g.stream) }.unwrap();
        for _ in 0..iters {
            exec();
        }
        unsafe { drv::event::record(e1, g.stream) }.unwrap();
        unsafe { drv::event::synchronize(e1) }.unwrap();
        rounds.push(unsafe { drv::event::elapsed(e0, e1) }.unwrap() as f64 / iters as f64);
    }
    rounds.sort_by(f64::total_cmp);
    rounds[2]
}

/// Plan-list creation: the first call and the median of 5 more, in ms.
fn creation_ms(doc: &str) -> (f64, f64) {
    let (first_list, first) = plan_list(doc);
    unsafe { capi::dnnp_plan_list_destroy(first_list) };
    (first, creation_median_ms(doc))
}

#[test]
#[ignore]
fn bench_cudnn_backend() {
    let g = gpu();
    let mut handle: *mut capi::dnnp_handle_t = std::ptr::null_mut();
    capi_ok("handle", unsafe {
        capi::dnnp_handle_create(g.stream as *mut c_void, &mut handle)
    });
    println!(
        "DNNP | columns: case | plan | kernel ms | creation ms (first; median of 5) | host us/execute mean (min burst) per path"
    );
    let cases: Vec<(String, String, usize, usize)> = vec![
        (
            "sdpa fwd causal bf16 (4,16,4096,128)".into(),
            bench_graphs::sdpa_inference_json(4, 16, 4096, 128),
            20,
            200,
        ),
        (
            "sdpa fwd causal bf16 (2,16,8192,128)".into(),
            bench_graphs::sdpa_inference_json(2, 16, 8192, 128),
            20,
            200,
        ),
        (
            "sdpa fwd causal bf16 (8,16,2048,64)".into(),
            bench_graphs::sdpa_inference_json(8, 16, 2048, 64),
            20,
            200,
        ),
        (
            "tiny sdpa (1,1,64,64)".into(),
            bench_graphs::sdpa_inference_json(1, 1, 64, 64),
            200,
            5000,
        ),
        (
            "matmul 256x256x128 bf16".into(),
            bench_graphs::matmul_json(256, 256, 128),
            200,
            5000,
        ),
    ];
    for (name, doc, kernel_iters, host_iters) in cases {
        let outcome = isolated(|| {
            let (first, warm) = creation_ms(&doc);
            let mut row = format!("DNNP | {name}");
            let mut kernel = None;
            let mut hosts = Vec::new();
            let mut sets: Option<[Vec<DevBuf>; 2]> = None;
            for path in ExecPath::ALL {
                let outcome = isolated(|| {
                    let (list, plan, ws_bytes) = built_list(&doc, path);
                    let ws = alloc(ws_bytes as usize);
                    // One pair of operand sets per case (the operand order is the same for every path).
                    let sets = sets.get_or_insert_with(|| {
                        [
                            operand_buffers(&doc, list, 1),
                            operand_buffers(&doc, list, 2),
                        ]
                    });
                    let ptrs: Vec<Vec<*mut c_void>> = sets
                        .iter()
                        .map(|s| s.iter().map(|d| d.0 as *mut c_void).collect())
                        .collect();
                    let exec = |k: usize| {
                        let p = &ptrs[k];
                        capi_ok(&format!("{name} execute ({})", path.name()), unsafe {
                            capi::dnnp_plan_list_execute(
                                list,
                                handle,
                                p.as_ptr(),
                                p.len(),
                                ws.0 as *mut c_void,
                                ws_bytes.max(256) as usize,
                                std::ptr::null(),
                                0,
                            )
                        });
                    };
                    if kernel.is_none() {
                        row.push_str(&format!(" | {plan}"));
                        kernel = Some(kernel_time(kernel_iters, || exec(0)));
                    }
                    let same = host_time(host_iters, |_| exec(0));
                    let alternating = host_time(host_iters, |i| exec(i % 2));
                    hosts.push(format!(
                        "{} same ptrs {:.2} ({:.2}), alternating {:.2} ({:.2})",
                        path.name(),
                        same.mean_us,
                        same.min_us,
                        alternating.mean_us,
                        alternating.min_us
                    ));
                    unsafe { drv::stream::synchronize(g.stream) }.unwrap();
                    unsafe { capi::dnnp_plan_list_destroy(list) };
                });
                if let Err(why) = outcome {
                    hosts.push(format!("{} failed: {why}", path.name()));
                }
            }
            row.push_str(&format!(
                " | {:.4} | {first:.1}; {warm:.3} | {}",
                kernel.unwrap_or(f64::NAN),
                hosts.join("; ")
            ));
            println!("{row}");
        });
        if let Err(why) = outcome {
            println!("DNNP | {name} | failed: {why}");
        }
    }
    unsafe { capi::dnnp_handle_destroy(handle) };
    if let Err(why) = isolated(creation_breakdown) {
        println!("DNNP-CREATE | failed: {why}");
    }
    if let Err(why) = isolated(raw_backend_host_time) {
        println!("DNNP-RAW | failed: {why}");
    }
}

/// Runs one benchmark part; a panic becomes its message, so one failing case or path does not
/// lose the others.
fn isolated(f: impl FnOnce()) -> Result<(), String> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(f)).map_err(|p| {
        p.downcast_ref::<String>()
            .cloned()
            .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
            .unwrap_or_default()
            .chars()
            .take(400)
            .collect::<String>()
            .replace(['\n', '|'], " ")
    })
}

/// Where plan-list creation time goes (warm, median of 5, ms): IR JSON -> validated graph, the
/// lowering, the backend operation graph (emit), and each heuristic mode's query.
fn creation_breakdown() {
    use dnnplan::cudnn::lower::from_ir::lower_graph;
    let g = gpu();
    let api = loader::api().unwrap();
    let version = loader::version().unwrap();
    println!(
        "DNNP-CREATE | case | json+validate | lower | emit | heuristics A | heuristics FALLBACK (ms, median of 5)"
    );
    for (name, doc) in bench_graphs::creation_cases() {
        let mut t = vec![Vec::new(); 5];
        for _ in 0..5 {
            let s = std::time::Instant::now();
            let mut ir = dnnplan::ir::Graph::from_json(&doc).unwrap();
            ir.validate().unwrap();
            t[0].push(s.elapsed().as_secs_f64() * 1e3);
            let s = std::time::Instant::now();
            let bg = lower_graph(&ir, version).unwrap();
            t[1].push(s.elapsed().as_secs_f64() * 1e3);
            let s = std::time::Instant::now();
            let opg = emit(api, bg, Some(g.handle)).unwrap();
            t[2].push(s.elapsed().as_secs_f64() * 1e3);
            let s = std::time::Instant::now();
            let a = query_mode(&opg, HeurMode::A).unwrap();
            t[3].push(s.elapsed().as_secs_f64() * 1e3);
            let s = std::time::Instant::now();
            let f = query_mode(&opg, HeurMode::Fallback).unwrap();
            t[4].push(s.elapsed().as_secs_f64() * 1e3);
            assert!(!a.is_empty() || !f.is_empty());
        }
        let med: Vec<String> = t
            .iter_mut()
            .map(|v| {
                v.sort_by(f64::total_cmp);
                format!("{:.3}", v[2])
            })
            .collect();
        println!("DNNP-CREATE | {name} | {}", med.join(" | "));
    }
}

/// Host time per execute of the backend plan itself (`BackendPlan::execute_via`, no C ABI, no
/// variant-pack normalization), per path: what the C ABI adds is the difference.
fn raw_backend_host_time() {
    let g = gpu();
    let modes = [HeurMode::A, HeurMode::Fallback];
    println!("DNNP-RAW | case | plan | per path: same ptrs mean (min), alternating mean (min) us");
    let scratch = alloc(1 << 16);
    let memset = host_time(5000, |_| {
        unsafe { drv::memset_d8_async(scratch.0, 0, 1 << 16, g.stream) }.unwrap()
    });
    println!(
        "DNNP-RAW | floor: cuMemsetD8Async 64 KiB | - | {:.2} ({:.2})",
        memset.mean_us, memset.min_us
    );
    for (name, graph, out) in [
        ("tiny sdpa (1,1,64,64)", sdpa_fwd_graph(1, 1, 64, 64), 4),
        (
            "matmul 256x256x128 bf16",
            matmul_graph(256, 256, 128, CUDNN_DATA_BFLOAT16, false).finish(),
            4,
        ),
    ] {
        let b = build(graph, &modes).unwrap();
        let sets = [buf_set(&b, &[out], 1), buf_set(&b, &[out], 2)];
        let ws = alloc(b.plan.workspace_size());
        let mut parts = Vec::new();
        for path in ExecPath::ALL {
            let exec = |k: usize| {
                unsafe {
                    b.plan.execute_via(
                        path,
                        g.handle,
                        g.stream as *mut c_void,
                        &sets[k].ptrs,
                        ws.0 as *mut c_void,
                    )
                }
                .unwrap()
            };
            let same = host_time(5000, |_| exec(0));
            if path != ExecPath::Plain {
                dnnplan::cudnn::exec_cache::force_repoint(false);
                let fresh = host_time(5000, |i| exec(i % 2));
                dnnplan::cudnn::exec_cache::force_repoint(true);
                parts.push(format!(
                    "{} alternating with fresh descriptors {:.2} ({:.2})",
                    path.name(),
                    fresh.mean_us,
                    fresh.min_us
                ));
            }
            let alt = host_time(5000, |i| exec(i % 2));
            parts.push(format!(
                "{} same ptrs {:.2} ({:.2}), alternating {:.2} ({:.2})",
                path.name(),
                same.mean_us,
                same.min_us,
                alt.mean_us,
                alt.min_us
            ));
        }
        println!(
            "DNNP-RAW | {name} | {} | {} | graph: {}",
            b.plan.name,
            parts.join("; "),
            b.plan.cuda_graph_unsupported().unwrap_or("native")
        );
    }
}
