//! Loader and error-text checks that hold on any machine, plus the "absent cuDNN" path on CPU
//! machines (skipped when built for the GPU tests, where cuDNN is present).

use dnnplan::cudnn::status::{CudnnStatus, cudnn_error};
use dnnplan::cudnn::{consts, loader};

#[test]
fn status_names_and_unknown_subcodes() {
    assert_eq!(
        CudnnStatus(consts::CUDNN_STATUS_BAD_PARAM).describe(),
        "CUDNN_STATUS_BAD_PARAM"
    );
    assert!(CudnnStatus(3001).is_not_supported());
    assert!(!CudnnStatus(2000).is_not_supported());
    assert!(CudnnStatus::SUCCESS.is_ok());
    // A sub-code this build does not know still names its category.
    assert_eq!(
        CudnnStatus(3999).describe(),
        "CUDNN_STATUS_NOT_SUPPORTED (3999)"
    );
    assert_eq!(CudnnStatus(7).describe(), "cudnnStatus 7");
}

#[test]
fn backend_errors_carry_the_last_error_text() {
    let e = cudnn_error(
        "cudnnBackendFinalize",
        CudnnStatus(3000),
        Some("CUDNN_STATUS_NOT_SUPPORTED".into()),
        Some("CUDNN_BACKEND_OPERATION: No engine supports this graph\n".into()),
    );
    let text = e.to_string();
    assert!(text.contains("cudnnBackendFinalize"), "{text}");
    assert!(text.contains("3000"), "{text}");
    assert!(
        text.contains("last error: CUDNN_BACKEND_OPERATION: No engine supports this graph"),
        "{text}"
    );
    assert_eq!(e.status(), dnnplan::Status::CudnnError);
    let none = cudnn_error("cudnnCreate", CudnnStatus(1001), None, Some(String::new())).to_string();
    assert!(
        none.contains("CUDNN_STATUS_NOT_INITIALIZED") && none.contains("(none reported)"),
        "{none}"
    );
}

#[test]
fn version_strings() {
    assert_eq!(loader::version_string(91900), "9.19.0");
    assert_eq!(loader::version_string(92101), "9.21.1");
}

#[cfg(not(feature = "gpu-tests"))]
#[test]
fn absent_cudnn_is_a_reason_not_a_panic() {
    // CPU machines and CI have no cuDNN: every entry point answers with the loader's reason.
    match loader::library() {
        Ok(lib) => eprintln!(
            "cuDNN present here ({}); skipping the absent path",
            lib.origin
        ),
        Err(e) => {
            let text = e.to_string();
            assert!(text.contains("libcudnn.so.9"), "{text}");
            assert!(text.contains(loader::ENV_CUDNN_LIB_DIR), "{text}");
            let owned = loader::api()
                .err()
                .map(|e| e.to_string())
                .unwrap_or_default();
            assert_eq!(owned, text);
            assert_eq!(
                loader::version().unwrap_err().status(),
                dnnplan::Status::CudnnUnavailable
            );
            assert!(dnnplan::cudnn::handle::handle_for(0, std::ptr::null_mut()).is_err());
        }
    }
}

#[test]
fn pin_list_follows_the_variable() {
    use dnnplan::cudnn::pin::{CUBLAS_LIBS, CUDNN_SUBLIBS, NVRTC_LIBS, requested};
    for off in [Some(""), Some("0"), Some(" off "), Some("FALSE")] {
        assert!(requested(off).is_empty(), "{off:?} must pin nothing");
    }
    let nvrtc: Vec<String> = NVRTC_LIBS.iter().map(|s| (*s).to_owned()).collect();
    for default in [None, Some("1"), Some("default"), Some(" ON ")] {
        assert_eq!(requested(default), nvrtc, "{default:?} pins NVRTC");
    }
    let all = requested(Some("all"));
    assert_eq!(
        all.len(),
        CUDNN_SUBLIBS.len() + NVRTC_LIBS.len() + CUBLAS_LIBS.len()
    );
    assert!(all.iter().any(|n| n == "libnvrtc.so.13"));
    assert!(all.iter().any(|n| n == "libcublasLt.so.13"));
    assert_eq!(
        requested(Some(" libnvrtc.so.13 ,, /opt/x/libfoo.so ")),
        vec!["libnvrtc.so.13".to_owned(), "/opt/x/libfoo.so".to_owned()]
    );
}

#[cfg(target_os = "linux")]
#[test]
fn pinning_reports_missing_libraries_and_keeps_found_ones() {
    use dnnplan::cudnn::pin::{outcomes, pin_libraries};
    let names = vec![
        "libdnnplan_no_such_library.so.7".to_owned(),
        "libm.so.6".to_owned(),
    ];
    let got = pin_libraries(&names);
    assert_eq!(got.len(), 2);
    assert!(got[0].opened.is_none());
    let why = got[0].error.as_deref().unwrap_or_default();
    assert!(why.contains("libdnnplan_no_such_library.so.7"), "{why}");
    assert_eq!(got[1].opened.as_deref(), Some("libm.so.6"));
    assert!(got[1].error.is_none());
    // A second request for a pinned library reuses the first outcome.
    assert_eq!(pin_libraries(&names[1..])[0], got[1]);
    assert!(outcomes().iter().any(|o| o.name == "libm.so.6"));
}

/// cuDNN's own parts are looked for only beside the loaded cuDNN (or in DNNPLAN_CUDNN_LIB_DIR),
/// never through the system search, so no second copy can be loaded.
#[cfg(all(target_os = "linux", not(feature = "gpu-tests")))]
#[test]
fn cudnn_parts_are_pinned_only_from_the_cudnn_folder() {
    use dnnplan::cudnn::pin::pin_libraries;
    if std::env::var_os(loader::ENV_CUDNN_LIB_DIR).is_some() {
        return; // a configured folder: covered on the GPU machine
    }
    let got = pin_libraries(&["libcudnn_graph.so.9".to_owned()]);
    assert!(got[0].opened.is_none());
    let why = got[0].error.as_deref().unwrap_or_default();
    assert!(why.contains("no libcudnn.so.9 is loaded"), "{why}");
}
