//! cuDNN version encodings: the 8.x (`M*1000 + m*100 + p`) and 9.x (`M*10000 + m*100 + p`)
//! forms of `cudnnGetVersion()`, parsing, ordering, and the edges where raw-integer or string
//! comparison would go wrong.

use dnnplan::select::{CudnnVer, EnvironmentSpec};

fn v(major: u8, minor: u8, patch: u8) -> CudnnVer {
    CudnnVer::new(major, minor, patch)
}

#[test]
fn decodes_both_encodings() {
    assert_eq!(CudnnVer::from_raw(8906), Some(v(8, 9, 6)));
    assert_eq!(CudnnVer::from_raw(8000), Some(v(8, 0, 0)));
    assert_eq!(CudnnVer::from_raw(7605), Some(v(7, 6, 5)));
    assert_eq!(CudnnVer::from_raw(91002), Some(v(9, 10, 2)));
    assert_eq!(CudnnVer::from_raw(90000), Some(v(9, 0, 0)));
    assert_eq!(CudnnVer::from_raw(91900), Some(v(9, 19, 0)));
    assert_eq!(CudnnVer::from_raw(100203), Some(v(10, 2, 3)));
    // 9999 is below 10000, hence the 8.x form: 9.9.99 (the boundary of the two encodings).
    assert_eq!(CudnnVer::from_raw(9999), Some(v(9, 9, 99)));
    assert_eq!(CudnnVer::from_raw(0), Some(v(0, 0, 0)));
    assert_eq!(CudnnVer::from_raw(u64::MAX), None);
}

#[test]
fn encodes_both_forms_and_round_trips() {
    for ver in [
        v(8, 9, 6),
        v(8, 0, 0),
        v(9, 0, 0),
        v(9, 10, 2),
        v(9, 19, 0),
        v(10, 2, 3),
    ] {
        assert_eq!(CudnnVer::from_raw(ver.to_raw()), Some(ver), "{ver}");
    }
    assert_eq!(v(8, 9, 6).to_raw(), 8906);
    assert_eq!(v(9, 10, 2).to_raw(), 91002);
}

#[test]
fn orders_as_tuples() {
    // The raw 8.x and 9.x encodings are not comparable digit by digit; tuples are.
    assert!(v(8, 9, 7) < v(9, 0, 0));
    assert!(v(9, 9, 99) < v(9, 10, 0));
    // String comparison would get this wrong ("9.10.0" < "9.9.0").
    assert!(v(9, 10, 0) > v(9, 9, 0));
    assert!(v(9, 2, 1) > v(9, 2, 0));
    assert_eq!(v(9, 15, 0).next_patch(), v(9, 15, 1));
}

#[test]
fn parses_text() {
    assert_eq!(CudnnVer::parse("9.10.2"), Some(v(9, 10, 2)));
    assert_eq!(CudnnVer::parse(" 9.19 "), Some(v(9, 19, 0)));
    assert_eq!(CudnnVer::parse("91002"), Some(v(9, 10, 2)));
    assert_eq!(CudnnVer::parse("8906"), Some(v(8, 9, 6)));
    for bad in [
        "", "9", "9.", "9.100.0", "8.10.0", "9.1.2.3", "9.-1.0", "abc", "9.1.x", "9.1.100",
    ] {
        let parsed = CudnnVer::parse(bad);
        // "9" alone is the raw integer 9 (= 0.0.9), which is a valid decoding; all else fails.
        if bad == "9" {
            assert_eq!(parsed, Some(v(0, 0, 9)));
        } else {
            assert_eq!(parsed, None, "{bad:?}");
        }
    }
    assert_eq!(v(9, 10, 2).to_string(), "9.10.2");
}

#[test]
fn agrees_with_the_loader_packing() {
    for packed in [90000usize, 90100, 91002, 91900, 92100] {
        assert_eq!(
            CudnnVer::from_raw(packed as u64).unwrap().to_string(),
            dnnplan::cudnn::loader::version_string(packed)
        );
    }
}

#[test]
fn environment_json_accepts_text_raw_and_none() {
    let e = EnvironmentSpec::from_json(r#"{"sm": 90, "cudnn": "9.10.2", "engines": []}"#)
        .unwrap()
        .resolve()
        .unwrap();
    assert_eq!(e.cudnn, Some(v(9, 10, 2)));
    let e = EnvironmentSpec::from_json(r#"{"arch": 80, "cudnn_runtime": 8906, "engines": []}"#)
        .unwrap()
        .resolve()
        .unwrap();
    assert_eq!((e.sm, e.cudnn), (80, Some(v(8, 9, 6))));
    let e = EnvironmentSpec::from_json(r#"{"sm": 90, "cudnn": "none", "engines": []}"#)
        .unwrap()
        .resolve()
        .unwrap();
    assert_eq!(e.cudnn, None);
    let e = EnvironmentSpec::from_json(r#"{"sm": 90, "cudnn": null}"#)
        .unwrap()
        .resolve()
        .unwrap();
    assert_eq!(e.cudnn, None);
    assert!(EnvironmentSpec::from_json(r#"{"sm": 90, "cudnn": "9.100"}"#).is_err());
    assert!(EnvironmentSpec::from_json(r#"{"sm": 90, "cuddn": "9.1"}"#).is_err());
    let err = EnvironmentSpec::from_json(r#"{"sm": 90, "engines": ["nope"]}"#)
        .unwrap()
        .resolve()
        .unwrap_err();
    assert!(err.to_string().contains("nope"));
}
