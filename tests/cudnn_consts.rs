//! CPU checks of the cuDNN constant tables: no duplicate value within an enum family, no duplicate
//! name anywhere, and spot values against the spec's Appendix A (an independent transcription of
//! the cuDNN 9 headers). The GPU test checks every constant against the real headers.

use dnnplan::cudnn::consts::*;

#[test]
fn no_duplicate_values_within_a_family() {
    for (family, entries) in FAMILIES {
        let mut seen = std::collections::HashMap::new();
        for (name, value) in *entries {
            if let Some(other) = seen.insert(*value, *name) {
                panic!("{family}: {name} and {other} share value {value}");
            }
        }
        assert!(!entries.is_empty(), "{family} is empty");
    }
}

#[test]
fn no_duplicate_names() {
    let mut seen = std::collections::HashSet::new();
    for (_, entries) in FAMILIES {
        for (name, _) in *entries {
            assert!(seen.insert(*name), "{name} appears twice");
        }
    }
}

#[test]
fn appendix_a_values() {
    // cudnnBackendHeurMode_t
    assert_eq!(
        [
            CUDNN_HEUR_MODE_INSTANT,
            CUDNN_HEUR_MODE_B,
            CUDNN_HEUR_MODE_FALLBACK,
            CUDNN_HEUR_MODE_A
        ],
        [0, 1, 2, 3]
    );
    // descriptor types
    assert_eq!(CUDNN_BACKEND_POINTWISE_DESCRIPTOR, 0);
    assert_eq!(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR, 3);
    assert_eq!(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, 5);
    assert_eq!(CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, 13);
    assert_eq!(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR, 15);
    assert_eq!(CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, 16);
    assert_eq!(CUDNN_BACKEND_TENSOR_DESCRIPTOR, 17);
    assert_eq!(CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, 19);
    assert_eq!(CUDNN_BACKEND_OPERATION_NORM_FORWARD_DESCRIPTOR, 29);
    assert_eq!(CUDNN_BACKEND_OPERATION_RESHAPE_DESCRIPTOR, 31);
    assert_eq!(CUDNN_BACKEND_OPERATION_RNG_DESCRIPTOR, 33);
    assert_eq!(CUDNN_BACKEND_DEVICEPROP_DESCRIPTOR, 38);
    assert_eq!(CUDNN_BACKEND_OPERATION_SDPA_FWD_DESCRIPTOR, 41);
    assert_eq!(CUDNN_BACKEND_OPERATION_SDPA_BWD_DESCRIPTOR, 43);
    assert_eq!(CUDNN_BACKEND_OPERATION_DIAGONAL_BAND_MASK_DESCRIPTOR, 44);
    assert_eq!(CUDNN_BACKEND_OPERATION_SOFTMAX_DESCRIPTOR, 45);
    // SDPA / softmax / band-mask attributes
    assert_eq!(CUDNN_ATTR_OPERATION_SDPA_FWD_QDESC, 2800);
    assert_eq!(CUDNN_ATTR_OPERATION_SDPA_FWD_UNFUSE_FMA, 2819);
    assert_eq!(
        CUDNN_ATTR_OPERATION_DIAGONAL_BAND_MASK_COMPARISON_MODE,
        3007
    );
    assert_eq!(CUDNN_ATTR_OPERATION_SOFTMAX_SINK_DESC, 3105);
    // pointwise blocks
    assert_eq!(CUDNN_POINTWISE_ATAN2, 23);
    assert_eq!(CUDNN_POINTWISE_RELU_FWD, 100);
    assert_eq!(CUDNN_POINTWISE_GELU_APPROX_TANH_FWD, 107);
    assert_eq!(CUDNN_POINTWISE_GELU_APPROX_TANH_BWD, 207);
    assert_eq!(CUDNN_POINTWISE_CMP_LE, 305);
    assert_eq!(CUDNN_POINTWISE_LOGICAL_NOT, 402);
    assert_eq!(CUDNN_POINTWISE_GEN_INDEX, 501);
    assert_eq!(CUDNN_POINTWISE_BINARY_SELECT, 601);
    // data types
    assert_eq!(CUDNN_DATA_BFLOAT16, 9);
    assert_eq!(CUDNN_DATA_BOOLEAN, 11);
    assert_eq!(CUDNN_DATA_FP8_E5M2, 13);
    assert_eq!(CUDNN_DATA_INT4, 17);
    // norm modes and reorderings
    assert_eq!(CUDNN_RMS_NORM, 4);
    assert_eq!(CUDNN_TENSOR_REORDERING_F8_128x4, 3);
    // knobs (spec §5 backend values)
    assert_eq!(CUDNN_KNOB_TYPE_TILE_SIZE, 2);
    assert_eq!(CUDNN_KNOB_TYPE_STAGES, 14);
    assert_eq!(CUDNN_KNOB_TYPE_WARP_SPEC_CFG, 42);
    assert_eq!(CUDNN_KNOB_TYPE_SWAP_AB, 43);
    // status codes (9.x numbering)
    assert_eq!(CUDNN_STATUS_BAD_PARAM, 2000);
    assert_eq!(CUDNN_STATUS_NOT_SUPPORTED, 3000);
    assert_eq!(CUDNN_STATUS_EXECUTION_FAILED, 5000);
}

#[test]
fn attribute_names_are_grouped_by_hundreds() {
    // Attribute names of one descriptor share a prefix and a numeric block: a value typed into
    // the wrong block (e.g. 2180 for a NORM_BWD attribute) would break this.
    for (name, value) in ATTRIBUTE_NAME {
        if let Some(rest) = name.strip_prefix("CUDNN_ATTR_OPERATION_NORM_BWD_") {
            assert!((2100..2200).contains(value), "{name} ({rest}) = {value}");
        }
        if name.starts_with("CUDNN_ATTR_TENSOR_") {
            assert!((900..1000).contains(value), "{name} = {value}");
        }
        if name.starts_with("CUDNN_ATTR_VARIANT_PACK_") {
            assert!((1000..1100).contains(value), "{name} = {value}");
        }
    }
}
