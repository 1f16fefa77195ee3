//! Table-driven tests of the normalization rules (spec 5.5 worked examples, fp4, scales, holes,
//! overrides, guards).

use std::ffi::c_void;

use super::*;

const P: *mut c_void = 0x10000 as *mut c_void;

fn layout(decls: &[TensorDecl]) -> DeclaredLayout {
    let order = OperandOrder::from_wired_ports(decls.iter().map(|d| (d.uid, None)));
    DeclaredLayout::new(order, decls).unwrap()
}

fn backend_layout(decls: &[TensorDecl]) -> DeclaredLayout {
    let order = OperandOrder::from_backend_template(decls.iter().map(|d| d.uid)).unwrap();
    DeclaredLayout::new(order, decls).unwrap()
}

fn view<'a>(shape: &'a [i64], strides: Option<&'a [i64]>, dtype: DlDtype) -> Buffer<'a> {
    Buffer::View(BufferView {
        ptr: P,
        shape,
        strides,
        dtype,
        device: Device::cuda(0),
    })
}

/// One row: caller buffer -> expected slot.
struct Row {
    case: &'static str,
    shape: Option<&'static [i64]>, // None = bare address
    strides: Option<&'static [i64]>,
    dtype: DlDtype,
    slot_shape: &'static [i64],
    slot_strides: &'static [i64],
    slot_dtype: DlDtype,
    described: bool,
    observed: Option<u64>,
}

fn run_rows(decl: TensorDecl, rows: &[Row]) {
    let l = layout(std::slice::from_ref(&decl));
    for r in rows {
        let buffer = match r.shape {
            Some(s) => view(s, r.strides, r.dtype),
            None => Buffer::Address(P),
        };
        let pack = normalize::from_bindings(&l, [(decl.uid, buffer)], &[])
            .unwrap_or_else(|e| panic!("{}: {e}", r.case));
        assert_eq!(pack.shape(0), Some(r.slot_shape), "{}: shape", r.case);
        assert_eq!(pack.strides(0), Some(r.slot_strides), "{}: strides", r.case);
        assert_eq!(pack.dtype(0), r.slot_dtype, "{}: dtype", r.case);
        assert_eq!(
            pack.is_graph_described(0),
            r.described,
            "{}: described",
            r.case
        );
        assert_eq!(pack.observed_bytes(0), r.observed, "{}: observed", r.case);
        assert_eq!(pack.ptr(0), P, "{}: ptr", r.case);
        assert!(pack.is_filled(0));
        assert!(!pack.is_overridden(0));
    }
}

#[test]
fn worked_examples_bf16_matmul_a() {
    const D: &[i64] = &[1, 128, 64];
    const DS: &[i64] = &[8192, 64, 1];
    let bf = DlDtype::BF16;
    let row = |case,
               shape,
               strides,
               dtype,
               ss: &'static [i64],
               st: &'static [i64],
               sd,
               described,
               observed| Row {
        case,
        shape,
        strides,
        dtype,
        slot_shape: ss,
        slot_strides: st,
        slot_dtype: sd,
        described,
        observed,
    };
    // case; the caller's buffer (shape, strides, dtype); the slot's (shape, strides, dtype);
    // graph-described; observed bytes.
    #[rustfmt::skip]
    let rows = [
        row("N5(i) equal",                               Some(D),             Some(DS),               bf,                     D,             DS,               bf,           false, Some(16384)),
        row("N5(i) strides absent = row-major",          Some(D),             None,                   bf,                     D,             DS,               bf,           false, Some(16384)),
        row("N5(ii) 2-D matrix",                         Some(&[128, 64]),    Some(&[64, 1]),         bf,                     D,             DS,               bf,           true,  Some(16384)),
        row("N3 bare address",                           None,                None,                   bf,                     D,             DS,               bf,           true,  None),
        row("N5(ii) larger dense",                       Some(&[1, 256, 64]), Some(&[16384, 64, 1]),  bf,                     D,             DS,               bf,           true,  Some(32768)),
        row("N5(ii) raw uint8 blob",                     Some(&[16384]),      Some(&[1]),             DlDtype::U8,            D,             DS,               bf,           true,  Some(16384)),
        row("N5(iii) pitched view",                      Some(D),             Some(&[16384, 128, 1]), bf,                     D,             &[16384, 128, 1], bf,           false, Some(32640)),
        row("N5(iv) transposed view",                    Some(&[1, 64, 128]), Some(&[8192, 1, 64]),   bf,                     &[1, 64, 128], &[8192, 1, 64],   bf,           false, Some(16384)),
        row("N5(iv) strided view of other extents",      Some(&[1, 128, 32]), Some(&[8192, 64, 1]),   bf,                     &[1, 128, 32], &[8192, 64, 1],   bf,           false, Some(16320)),
        row("N5(v) too small",                           Some(&[64, 64]),     Some(&[64, 1]),         bf,                     &[64, 64],     &[64, 1],         bf,           false, Some(8192)),
        row("N5(v) too small uint8 blob",                Some(&[100]),        None,                   DlDtype::U8,            &[100],        &[1],             DlDtype::U8,  false, Some(100)),
        row("N5(i)+N6 fp16 same width",                  Some(D),             Some(DS),               DlDtype::F16,           D,             DS,               bf,           false, Some(16384)),
        row("N5(i)+N6 fp32 other width keeps its dtype", Some(D),             Some(DS),               DlDtype::F32,           D,             DS,               DlDtype::F32, false, Some(32768)),
        row("N5(iii)+N6 uint16 same width",              Some(D),             Some(&[8192, 1, 128]),  DlDtype::new(1, 16, 1), D,             &[8192, 1, 128],  bf,           false, Some(16384)),
    ];
    run_rows(TensorDecl::new(1, "A", D, DS, bf), &rows);
}

#[test]
fn scalar_bound_to_declared_float() {
    run_rows(
        TensorDecl::new(5, "scale", &[1, 1, 1], &[1, 1, 1], DlDtype::F32),
        &[Row {
            case: "0-d fp32 scalar",
            shape: Some(&[]),
            strides: Some(&[]),
            dtype: DlDtype::F32,
            slot_shape: &[1, 1, 1],
            slot_strides: &[1, 1, 1],
            slot_dtype: DlDtype::F32,
            described: true,
            observed: Some(4),
        }],
    );
}

#[test]
fn fp4_and_scale_declarations() {
    const S: &[i64] = &[1, 128, 32];
    const SS: &[i64] = &[4096, 32, 1];
    let x2 = DlDtype::FP4_E2M1_X2;
    let row = |case, shape, strides, dtype, described, observed| Row {
        case,
        shape,
        strides,
        dtype,
        slot_shape: S,
        slot_strides: SS,
        slot_dtype: x2,
        described,
        observed,
    };
    #[rustfmt::skip]
    let rows = [
        row("fp4x2 contiguous",           Some(S),        None, x2,          false, Some(4096)),
        row("uint8 same extents -> fp4",  Some(S),        None, DlDtype::U8, false, Some(4096)),
        row("uint8 flat -> re-described", Some(&[4096]),  None, DlDtype::U8, true,  Some(4096)),
        row("bare address",               None,           None, x2,          true,  None),
    ];
    run_rows(
        TensorDecl::new(2, "A4", &[1, 128, 64], &[8192, 64, 1], DlDtype::FP4_E2M1),
        &rows,
    );
    run_rows(
        TensorDecl::new(3, "SF", &[1, 128, 4], &[512, 4, 1], DlDtype::FP8_E4M3),
        &[Row {
            case: "e4m3 scale bound as uint8",
            shape: Some(&[1, 128, 4]),
            strides: None,
            dtype: DlDtype::U8,
            slot_shape: &[1, 128, 4],
            slot_strides: &[512, 4, 1],
            slot_dtype: DlDtype::FP8_E4M3,
            described: false,
            observed: Some(512),
        }],
    );
}

#[test]
fn reordered_scale_keeps_physical_extents() {
    let mut d = TensorDecl::new(4, "SFr", &[1, 128, 4], &[512, 4, 1], DlDtype::FP8_E4M3);
    d.reordered_scale = true;
    run_rows(
        d,
        &[Row {
            case: "dense blob for a reordered scale",
            shape: Some(&[1024]),
            strides: None,
            dtype: DlDtype::U8,
            slot_shape: &[1024],
            slot_strides: &[1],
            slot_dtype: DlDtype::FP8_E4M3,
            described: false,
            observed: Some(1024),
        }],
    );
}

#[test]
fn undeclared_dims_and_unknown_dtype() {
    let l = layout(&[TensorDecl::new(7, "raw", &[], &[], DlDtype::F32)]);
    let p = normalize::from_addresses(&l, &[P], &[]).unwrap();
    assert_eq!(
        p.geometry(0),
        None,
        "bare address without declared dims is pointer-only"
    );
    assert!(p.is_graph_described(0));
    let shape = [3i64];
    let p = normalize::from_bindings(&l, [(7, view(&shape, None, DlDtype::UNKNOWN))], &[]).unwrap();
    assert_eq!(p.shape(0), Some(&[3i64][..]));
    assert_eq!(p.observed_bytes(0), None, "unknown width: unknown bytes");
}

fn two_operands() -> [TensorDecl; 2] {
    [
        TensorDecl::new(1, "A", &[1, 128, 64], &[8192, 64, 1], DlDtype::BF16),
        TensorDecl::new(2, "B", &[1, 64, 32], &[2048, 32, 1], DlDtype::BF16),
    ]
}

#[test]
fn holes_and_binding_errors() {
    let d = two_operands();
    let python_only = layout(&d);
    let p = normalize::from_addresses(&python_only, &[P, std::ptr::null_mut()], &[]).unwrap();
    assert!(p.is_filled(0) && !p.is_filled(1));
    assert!(
        p.index_of(2)
            .unwrap_err()
            .to_string()
            .contains("tensor uid 2 ('B')")
    );
    assert_eq!(p.index_of(1).unwrap(), 0);

    let lowered = backend_layout(&d);
    let e = normalize::from_addresses(&lowered, &[P, std::ptr::null_mut()], &[]).unwrap_err();
    assert!(
        e.to_string()
            .contains("missing a buffer for tensor uid 2 ('B')"),
        "{e}"
    );

    let e = normalize::from_addresses(&lowered, &[P], &[]).unwrap_err();
    assert!(e.to_string().contains("2 operands"), "{e}");

    let e = normalize::from_bindings(
        &lowered,
        [(1, Buffer::Address(P)), (1, Buffer::Address(P))],
        &[],
    )
    .unwrap_err();
    assert!(e.to_string().contains("Duplicate tensor uid 1"), "{e}");
    let e = normalize::from_bindings(
        &python_only,
        [
            (2, Buffer::Address(std::ptr::null_mut())),
            (2, Buffer::Address(P)),
        ],
        &[],
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("Duplicate tensor uid 2"),
        "a NULL binding still names the uid: {e}"
    );
    let e = normalize::from_bindings(&lowered, [(9, Buffer::Address(P))], &[]).unwrap_err();
    assert!(
        e.to_string().contains("tensor uid 9 is not an operand"),
        "{e}"
    );

    let neg = [-1i64, 64, 1];
    let e = normalize::from_bindings(
        &python_only,
        [(1, view(&[1, 128, 64], Some(&neg), DlDtype::BF16))],
        &[],
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("operand tensor uid 1 ('A')")
            && e.to_string().contains("nonnegative"),
        "{e}"
    );
}

#[test]
fn overrides_written_in_buffer_axis_order() {
    // B declared [b,K,N] with K contiguous; caller passes a (b,N,K) view of a cache.
    let decl = TensorDecl::new(3, "B", &[1, 512, 2048], &[1048576, 1, 512], DlDtype::BF16);
    let l = layout(std::slice::from_ref(&decl));
    let shape = [1i64, 2048, 512];
    let strides = [4194304i64, 1024, 1];
    let ov = ShapeOverride {
        uid: 3,
        dims: &[1, 512, 2048],
        strides: &[4194304, 1, 1024],
    };
    let p = normalize::from_bindings(
        &l,
        [(3, view(&shape, Some(&strides), DlDtype::BF16))],
        &[ov],
    )
    .unwrap();
    assert_eq!(p.shape(0), Some(&[1i64, 2048, 512][..]));
    assert_eq!(p.strides(0), Some(&[4194304i64, 1024, 1][..]));
    assert!(p.is_overridden(0));
    assert_eq!(p.overridden().collect::<Vec<_>>(), vec![0]);

    // Graph-described slot: identity permutation, declared dtype.
    let p = normalize::from_addresses(
        &l,
        &[P],
        &[ShapeOverride {
            uid: 3,
            dims: &[1, 256, 1024],
            strides: &[262144, 1, 256],
        }],
    )
    .unwrap();
    assert_eq!(p.shape(0), Some(&[1i64, 256, 1024][..]));
    assert_eq!(p.strides(0), Some(&[262144i64, 1, 256][..]));
    assert_eq!(p.dtype(0), DlDtype::BF16);
}

#[test]
fn override_refusals() {
    let d = two_operands();
    let l = layout(&d);
    let cases: [(&[ShapeOverride<'_>], &str); 5] = [
        (
            &[ShapeOverride {
                uid: 9,
                dims: &[1],
                strides: &[1],
            }],
            "names tensor uid 9, which is not an operand",
        ),
        (
            &[
                ShapeOverride {
                    uid: 1,
                    dims: &[1],
                    strides: &[1],
                },
                ShapeOverride {
                    uid: 1,
                    dims: &[1],
                    strides: &[1],
                },
            ],
            "overridden twice",
        ),
        (
            &[ShapeOverride {
                uid: 1,
                dims: &[1, 2],
                strides: &[1],
            }],
            "same rank",
        ),
        (
            &[ShapeOverride {
                uid: 1,
                dims: &[1, -2],
                strides: &[2, 1],
            }],
            "nonnegative",
        ),
        (
            &[ShapeOverride {
                uid: 2,
                dims: &[1],
                strides: &[1],
            }],
            "no buffer is bound",
        ),
    ];
    for (ovs, needle) in cases {
        let e = normalize::from_addresses(&l, &[P, std::ptr::null_mut()], ovs).unwrap_err();
        assert!(e.to_string().contains(needle), "{needle}: {e}");
    }
}

#[test]
fn fp4_overrides() {
    let decl = TensorDecl::new(2, "A4", &[1, 128, 64], &[8192, 64, 1], DlDtype::FP4_E2M1);
    let l = layout(std::slice::from_ref(&decl));
    let p = normalize::from_addresses(
        &l,
        &[P],
        &[ShapeOverride {
            uid: 2,
            dims: &[1, 64, 64],
            strides: &[4096, 64, 1],
        }],
    )
    .unwrap();
    assert_eq!(p.shape(0), Some(&[1i64, 64, 32][..]));
    assert_eq!(p.strides(0), Some(&[2048i64, 32, 1][..]));
    assert_eq!(p.dtype(0), DlDtype::FP4_E2M1_X2);
    let e = normalize::from_addresses(
        &l,
        &[P],
        &[ShapeOverride {
            uid: 2,
            dims: &[1, 64, 63],
            strides: &[4032, 63, 1],
        }],
    )
    .unwrap_err();
    assert!(
        e.to_string()
            .contains("Override geometry cannot describe the packed storage slots"),
        "{e}"
    );
}

#[test]
fn guard_table_refuses_naming_operand_and_rule() {
    let d = two_operands();
    let l = layout(&d);
    let table = GuardTable::new([
        Guard {
            slot: 0,
            rule: SlotRule::Required,
        },
        Guard {
            slot: 0,
            rule: SlotRule::DeclaredExtent,
        },
        Guard {
            slot: 0,
            rule: SlotRule::Dtype(DlDtype::BF16),
        },
        Guard {
            slot: 0,
            rule: SlotRule::Align(16),
        },
        Guard {
            slot: 1,
            rule: SlotRule::DeclaredExtent,
        },
    ]);
    // Legal: bare addresses (slot 1 is an optional hole on this never-lowered graph).
    let ok = normalize::from_addresses(&l, &[P, std::ptr::null_mut()], &[]).unwrap();
    assert!(table.admits(&ok));
    // Too small: named operand, both extents.
    let small =
        normalize::from_bindings(&l, [(1, view(&[64, 64], None, DlDtype::BF16))], &[]).unwrap();
    assert!(!table.admits(&small));
    let e = table.check(&small).unwrap_err().to_string();
    assert!(
        e.contains("operand tensor uid 1 ('A')")
            && e.contains("[1, 128, 64]")
            && e.contains("[64, 64]"),
        "{e}"
    );
    assert!(e.contains("declared_extent"), "{e}");
    // Wrong dtype.
    let f32 =
        normalize::from_bindings(&l, [(1, view(&[1, 128, 64], None, DlDtype::F32))], &[]).unwrap();
    let e = table.check(&f32).unwrap_err().to_string();
    assert!(
        e.contains("needs dtype bfloat16 but the buffer is float32"),
        "{e}"
    );
    // Misaligned.
    let mis = normalize::from_addresses(&l, &[0x10008 as *mut c_void, std::ptr::null_mut()], &[])
        .unwrap();
    let e = table.check(&mis).unwrap_err().to_string();
    assert!(e.contains("16-byte aligned"), "{e}");
    // Missing required.
    let hole = normalize::from_addresses(&l, &[std::ptr::null_mut(), P], &[]).unwrap();
    let e = table.check(&hole).unwrap_err().to_string();
    assert!(e.contains("requires a buffer"), "{e}");
    assert_eq!(table.refusals(), 4);
}

#[test]
fn guard_geometry_rules_and_folded_checks_agree() {
    let d = two_operands();
    let l = layout(&d);
    let table = GuardTable::new([
        Guard {
            slot: 0,
            rule: SlotRule::DenseLayout,
        },
        Guard {
            slot: 0,
            rule: SlotRule::MinObservedBytes(16384),
        },
        Guard {
            slot: 1,
            rule: SlotRule::Compact,
        },
        Guard {
            slot: 1,
            rule: SlotRule::DeclaredOrOverriddenExtent,
        },
    ]);
    let transposed = normalize::from_bindings(
        &l,
        [(1, view(&[1, 64, 128], Some(&[8192, 1, 64]), DlDtype::BF16))],
        &[],
    )
    .unwrap();
    let e = table.check(&transposed).unwrap_err().to_string();
    assert!(e.contains("stride 1") && e.contains("dense_layout"), "{e}");
    let short = normalize::from_bindings(
        &l,
        [(1, view(&[1, 128, 32], Some(&[8192, 64, 1]), DlDtype::BF16))],
        &[],
    )
    .unwrap();
    let e = table.check(&short).unwrap_err().to_string();
    assert!(
        e.contains("at least 16384 bytes but the buffer holds 16320"),
        "{e}"
    );
    let pitched = normalize::from_bindings(
        &l,
        [(2, view(&[1, 64, 32], Some(&[4096, 64, 1]), DlDtype::BF16))],
        &[],
    )
    .unwrap();
    let e = table.check(&pitched).unwrap_err().to_string();
    assert!(e.contains("compact row-major"), "{e}");
    // An override makes a non-declared extent acceptable to DeclaredOrOverriddenExtent.
    let small = normalize::from_bindings(
        &l,
        [(2, view(&[32, 32], None, DlDtype::BF16))],
        &[ShapeOverride {
            uid: 2,
            dims: &[1, 32, 32],
            strides: &[1024, 32, 1],
        }],
    )
    .unwrap();
    assert!(table.admits(&small));
    let no_override =
        normalize::from_bindings(&l, [(2, view(&[32, 32], None, DlDtype::BF16))], &[]).unwrap();
    let e = table.check(&no_override).unwrap_err().to_string();
    assert!(e.contains("declared_or_overridden_extent"), "{e}");
    // Two different dtype rules on one slot: never admitted, explained.
    let contradictory = GuardTable::new([
        Guard {
            slot: 0,
            rule: SlotRule::Dtype(DlDtype::BF16),
        },
        Guard {
            slot: 0,
            rule: SlotRule::Dtype(DlDtype::F16),
        },
    ]);
    let bare = normalize::from_addresses(&l, &[P, P], &[]).unwrap();
    assert!(!contradictory.admits(&bare));
    assert!(
        contradictory
            .check(&bare)
            .unwrap_err()
            .to_string()
            .contains("float16")
    );
    // A guard on a slot the graph does not have is refused, not a panic.
    let beyond = GuardTable::new([Guard {
        slot: 9,
        rule: SlotRule::Required,
    }]);
    assert!(!beyond.admits(&bare));
    assert!(
        beyond
            .check(&bare)
            .unwrap_err()
            .to_string()
            .contains("guards slot 9")
    );
}

#[test]
fn described_and_fast_path_agree() {
    // Rule (i) reached with strides absent on a row-major declaration and with strides spelled
    // out gives the same slot; a declaration with padded strides does not match absent strides.
    let padded = TensorDecl::new(1, "P", &[2, 4], &[8, 1], DlDtype::F32);
    let l = layout(std::slice::from_ref(&padded));
    let p = normalize::from_bindings(&l, [(1, view(&[2, 4], None, DlDtype::F32))], &[]).unwrap();
    assert_eq!(
        p.strides(0),
        Some(&[4i64, 1][..]),
        "own compact strides kept (iii)"
    );
    assert!(p.has_declared_extent(0) && !p.is_graph_described(0));
    let p = normalize::from_bindings(&l, [(1, view(&[2, 4], Some(&[8, 1]), DlDtype::F32))], &[])
        .unwrap();
    assert_eq!(p.strides(0), Some(&[8i64, 1][..]));
    assert_eq!(p.observed_bytes(0), Some(48));
}
