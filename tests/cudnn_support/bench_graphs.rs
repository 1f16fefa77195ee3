//! IR documents (the JSON form `dnnp_plan_list_create_from_json` takes) of the graphs the cuDNN
//! benchmark runs on both sides: causal SDPA forward for inference (bf16, packed BHSD) and a
//! bf16 matmul. Shared by the GPU benchmark and the CPU test that checks they lower.

#![allow(dead_code)]

use serde_json::{Value, json};

fn tensor(uid: i64, name: &str, dims: &[i64], dtype: &str) -> Value {
    let mut strides = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1] * dims[i + 1];
    }
    json!({
        "uid": uid, "name": name, "dims": dims, "strides": strides, "dims_assigned": true,
        "data_type": dtype, "is_virtual": false, "is_pass_by_value": false
    })
}

fn document(tensors: Vec<Value>, nodes: Vec<Value>) -> String {
    json!({
        "format": "dnnplan.graph",
        "schema_version": 1,
        "context": {
            "io_data_type": "BFLOAT16",
            "intermediate_data_type": "FLOAT",
            "compute_data_type": "FLOAT",
            "is_dynamic_shape_enabled": false,
            "is_override_shape_enabled": false,
            "is_cuda_graph_replay_expected": false
        },
        "tensors": tensors,
        "nodes": nodes
    })
    .to_string()
}

/// Causal (top-left) SDPA forward for inference, q/k/v/O bf16 `[b,h,s,d]` packed, scale
/// `1/sqrt(d)`; uids q 1, k 2, v 3, O 4.
pub fn sdpa_inference_json(b: i64, h: i64, s: i64, d: i64) -> String {
    let dims = [b, h, s, d];
    document(
        vec![
            tensor(1, "q", &dims, "BFLOAT16"),
            tensor(2, "k", &dims, "BFLOAT16"),
            tensor(3, "v", &dims, "BFLOAT16"),
            tensor(4, "sdpa::O", &dims, "BFLOAT16"),
        ],
        vec![json!({
            "name": "sdpa",
            "op": "sdpa",
            "compute_data_type": "FLOAT",
            "inputs": {"q": 1, "k": 2, "v": 3},
            "outputs": {"O": 4},
            "attrs": {
                "attn_scale": 1.0 / (d as f64).sqrt(),
                "is_inference": true,
                "use_causal_mask": true
            }
        })],
    )
}

/// `C[1,m,n] = A[1,m,k] · B[1,k,n]`, bf16 in and out; uids A 1, B 2, C 3.
pub fn matmul_json(m: i64, n: i64, k: i64) -> String {
    document(
        vec![
            tensor(1, "A", &[1, m, k], "BFLOAT16"),
            tensor(2, "B", &[1, k, n], "BFLOAT16"),
            tensor(3, "mm::C", &[1, m, n], "BFLOAT16"),
        ],
        vec![json!({
            "name": "mm",
            "op": "matmul",
            "compute_data_type": "FLOAT",
            "inputs": {"A": 1, "B": 2},
            "outputs": {"C": 3},
            "attrs": {}
        })],
    )
}

/// The graphs plan-list creation is measured on, by name: the tiny SDPA (1,1,64,64), the bf16
/// matmul 256x256x128 and the causal SDPA (4,16,4096,128).
pub fn creation_cases() -> Vec<(&'static str, String)> {
    vec![
        ("tiny sdpa (1,1,64,64)", sdpa_inference_json(1, 1, 64, 64)),
        ("matmul 256x256x128 bf16", matmul_json(256, 256, 128)),
        (
            "sdpa fwd causal bf16 (4,16,4096,128)",
            sdpa_inference_json(4, 16, 4096, 128),
        ),
    ]
}

/// Element counts per uid of a document made above (every tensor is packed).
pub fn element_counts(doc: &str) -> Vec<(i64, usize)> {
    let v: Value = serde_json::from_str(doc).unwrap_or(Value::Null);
    v["tensors"]
        .as_array()
        .map(|ts| {
            ts.iter()
                .map(|t| {
                    let n = t["dims"]
                        .as_array()
                        .map(|d| d.iter().map(|x| x.as_i64().unwrap_or(0) as usize).product())
                        .unwrap_or(0);
                    (t["uid"].as_i64().unwrap_or(0), n)
                })
                .collect()
        })
        .unwrap_or_default()
}
