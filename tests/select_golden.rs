//! Golden rows of the attention-eligibility spec, sections 9.2 (SM90) and 9.3 (cross-arch), plus
//! the section 7 quirks and the engine-row / environment behaviours. Rule ids and unblock hints
//! are asserted.

use dnnplan::select::{
    BiasShape, BiasType, CudnnVer, Dtype, Environment, Layout, Mask, Request, SoftmaxType,
    TeBackend, Unblock, Verdict, Verdicts, evaluate,
};

const F16: &str = "cudnn.f16_arbitrary_seqlen";
const FP8: &str = "cudnn.fp8";
const ENGINE: &str = "engine.sdpa_fwd_prefill_sm90";

fn ver(s: &str) -> CudnnVer {
    CudnnVer::parse(s).expect("valid version")
}

/// Spec 9.2 base: bf16, BSHD_BSHD_BSHD, h 32/8, VANILLA, s 4096/4096, d 128/128, no mask.
fn base() -> Request {
    Request::new(2, 32, 8, 4096, 4096, 128, 128)
}

fn env(sm: u16, cudnn: &str) -> Environment {
    Environment::new(sm, Some(ver(cudnn)))
}

fn run(req: &Request, sm: u16, cudnn: &str) -> Verdicts {
    evaluate(req, &env(sm, cudnn)).expect("well-formed request")
}

fn f16(req: &Request, sm: u16, cudnn: &str) -> Verdict {
    run(req, sm, cudnn)
        .verdict(F16)
        .expect("f16 verdict")
        .clone()
}

fn fp8(req: &Request, sm: u16, cudnn: &str) -> Verdict {
    run(req, sm, cudnn)
        .verdict(FP8)
        .expect("fp8 verdict")
        .clone()
}

#[track_caller]
fn assert_eligible(v: &Verdict) {
    assert!(
        v.eligible,
        "{} expected eligible, rejected by {:?}",
        v.target.name(),
        v.rejections
    );
}

#[track_caller]
fn assert_rejected(v: &Verdict, id: &str) -> Option<Unblock> {
    let r = v.rejected_by(id).unwrap_or_else(|| {
        panic!(
            "{} expected rejection {id}, got {:?}",
            v.target.name(),
            v.rule_ids()
        )
    });
    assert!(!v.eligible);
    r.unblock.clone()
}

#[track_caller]
fn assert_hint(v: &Verdict, id: &str, hint: Unblock, text: &str) {
    let got = assert_rejected(v, id);
    assert_eq!(got.as_ref(), Some(&hint), "hint of {id}");
    assert_eq!(got.map(|u| u.text()).as_deref(), Some(text));
}

fn train(mut r: Request) -> Request {
    r.training = true;
    r
}
fn mask(mut r: Request, m: Mask) -> Request {
    r.mask = m;
    r
}
fn dims(mut r: Request, d_qk: u64, d_v: u64) -> Request {
    r.d_qk = d_qk;
    r.d_v = d_v;
    r
}
fn seqs(mut r: Request, s_q: u64, s_kv: u64) -> Request {
    r.s_q = s_q;
    r.s_kv = s_kv;
    r
}
fn layout(mut r: Request, l: Layout) -> Request {
    r.layout = l;
    r
}

#[test]
fn row01_train_causal_eligible() {
    let mut r = mask(train(base()), Mask::Causal);
    r.window = Some((-1, 0));
    let v = run(&r, 90, "9.8.0");
    assert_eligible(v.verdict(F16).unwrap());
    assert_eq!(v.selected.map(|t| t.name()), Some(F16));
    assert_eq!(v.te_backend, Some(TeBackend::F16ArbitrarySeqlen));
}

#[test]
fn row02_badver() {
    let r = mask(train(base()), Mask::Causal);
    assert_hint(
        &f16(&r, 90, "9.10.1"),
        "F16.BADVER",
        Unblock::AvoidCudnn(vec![ver("9.10.0"), ver("9.10.1")]),
        "avoid cuDNN 9.10.0/9.10.1",
    );
    assert_rejected(&f16(&r, 90, "9.10.0"), "F16.BADVER");
    assert_eligible(&f16(&r, 90, "9.10.2"));
}

#[test]
fn row03_hopper_mla_bwd() {
    let r = dims(mask(train(base()), Mask::Causal), 256, 128);
    let v = f16(&r, 90, "9.12.0");
    assert_hint(
        &v,
        "F16.HOPPER_MLA_BWD",
        Unblock::CudnnBelow(ver("9.11.0")),
        "requires cuDNN < 9.11.0",
    );
    assert_eq!(v.rule_ids(), vec!["F16.HOPPER_MLA_BWD"]);
    assert_eligible(&f16(&r, 90, "9.10.2"));
}

#[test]
fn row04_hopper_192_128_training_eligible() {
    let r = dims(mask(train(base()), Mask::Causal), 192, 128);
    assert_eligible(&f16(&r, 90, "9.12.0"));
}

#[test]
fn row05_decode_top_left_causal_large_d_rejected_nearest_d4() {
    let r = dims(seqs(mask(base(), Mask::Causal), 1, 4096), 512, 512);
    let v = f16(&r, 90, "9.12.0");
    assert_rejected(&v, "F16.HDIM");
    let rej = v.rejected_by("F16.HDIM").unwrap();
    assert!(
        rej.nearest_clause.unwrap().starts_with("d4"),
        "nearest clause {:?}",
        rej.nearest_clause
    );
    assert_eq!(rej.failing.len(), 1, "{:?}", rej.failing);
}

#[test]
fn row06_decode_bottom_right_large_d_eligible_and_needs_9_10_2() {
    let r = dims(
        seqs(mask(base(), Mask::CausalBottomRight), 1, 4096),
        512,
        512,
    );
    assert_eligible(&f16(&r, 90, "9.12.0"));
    assert_hint(
        &f16(&r, 90, "9.9.0"),
        "F16.HDIM",
        Unblock::CudnnAtLeast(ver("9.10.2")),
        "requires cuDNN >= 9.10.2",
    );
}

#[test]
fn row07_padding_rejected_on_9_5_x() {
    let mut r = mask(base(), Mask::Padding);
    r.window = Some((-1, -1));
    let v = f16(&r, 90, "9.5.1");
    assert_hint(
        &v,
        "F16.WINDOW",
        Unblock::CudnnAtLeast(ver("9.6.0")),
        "requires cuDNN >= 9.6.0",
    );
    assert_eq!(v.rule_ids(), vec!["F16.WINDOW"]);
    let rej = v.rejected_by("F16.WINDOW").unwrap();
    assert!(rej.nearest_clause.unwrap().starts_with("w3"));
}

#[test]
fn row08_paged_needs_9_6_0_in_practice() {
    let r = layout(
        mask(base(), Mask::PaddingCausal),
        Layout::PagedKvBshdBshdBshd,
    );
    assert_hint(
        &f16(&r, 90, "9.5.0"),
        "F16.WINDOW",
        Unblock::CudnnAtLeast(ver("9.6.0")),
        "requires cuDNN >= 9.6.0",
    );
    assert_eligible(&f16(&r, 90, "9.6.0"));
}

#[test]
fn row09_thd_gqa_format_and_window() {
    let r = layout(mask(train(base()), Mask::PaddingCausal), Layout::ThdThdThd);
    let v = f16(&r, 90, "9.5.0");
    let hint = Unblock::CudnnAtLeast(ver("9.6.0"));
    assert_hint(&v, "F16.FORMAT", hint.clone(), "requires cuDNN >= 9.6.0");
    assert_hint(&v, "F16.WINDOW", hint, "requires cuDNN >= 9.6.0");
    let mut mha = r.clone();
    mha.h_kv = 32;
    assert_eq!(f16(&mha, 90, "9.5.0").rule_ids(), vec!["F16.WINDOW"]);
}

#[test]
fn row10_post_scale_bias_with_padding() {
    let mut r = layout(mask(base(), Mask::Padding), Layout::SbhdSbhdSbhd);
    r.bias = BiasType::PostScaleBias;
    assert_rejected(&f16(&r, 90, "9.8.0"), "F16.BIAS_PADDING");
}

#[test]
fn row11_alibi_without_causal() {
    let mut r = base();
    r.bias = BiasType::Alibi;
    let v = f16(&r, 90, "9.8.0");
    assert_rejected(&v, "F16.BIAS");
    assert_eligible(&f16(&mask(r, Mask::Causal), 90, "9.8.0"));
}

#[test]
fn row12_window_with_dropout() {
    let mut r = base();
    r.window = Some((128, 128));
    r.dropout = 0.1;
    let v = f16(&r, 90, "9.8.0");
    assert_rejected(&v, "F16.WINDOW");
    assert_rejected(&v, "FW.WINDOW");
    // No version unblocks dropout with a window: the failing atoms say why.
    let rej = v.rejected_by("F16.WINDOW").unwrap();
    assert!(rej.failing.iter().any(|a| a.expected.contains("dropout")));
    r.dropout = 0.0;
    assert_eligible(&f16(&r, 90, "9.8.0"));
}

#[test]
fn row13_bottom_right_with_longer_queries() {
    let r = seqs(mask(base(), Mask::CausalBottomRight), 256, 128);
    assert_rejected(&f16(&r, 90, "9.8.0"), "F16.MASK");
}

#[test]
fn row14_cudnn_9_14_0_swa_bug() {
    let mut r = seqs(base(), 2048, 2048);
    r.window = Some((256, 256));
    assert_hint(
        &f16(&r, 90, "9.14.0"),
        "F16.V91400_SWA",
        Unblock::AvoidCudnn(vec![ver("9.14.0")]),
        "avoid cuDNN 9.14.0",
    );
    assert_eligible(&f16(&r, 90, "9.14.1"));
}

#[test]
fn row15_cuda_graph_training() {
    let mut r = seqs(mask(train(base()), Mask::Causal), 1000, 1000);
    r.cuda_graph = true;
    assert_hint(
        &f16(&r, 90, "9.15.0"),
        "F16.CUDAGRAPH",
        Unblock::CudnnAtLeast(ver("9.15.1")),
        "requires cuDNN >= 9.15.1",
    );
    assert_eligible(&f16(&r, 90, "9.15.1"));
    assert_eligible(&f16(&mask(r, Mask::PaddingCausal), 90, "9.15.0"));
}

#[test]
fn row16_learnable_softmax() {
    let mut r = base();
    r.softmax = SoftmaxType::Learnable;
    assert_hint(
        &f16(&r, 90, "9.13.0"),
        "F16.SOFTMAX",
        Unblock::CudnnAtLeast(ver("9.13.1")),
        "requires cuDNN >= 9.13.1",
    );
    assert_eligible(&f16(&r, 90, "9.13.1"));
    let thd = layout(mask(r, Mask::Padding), Layout::ThdThdThd);
    let v = f16(&thd, 90, "9.13.1");
    assert_hint(
        &v,
        "FW.SOFTMAX_THD",
        Unblock::CudnnAtLeast(ver("9.18.0")),
        "requires cuDNN >= 9.18.0",
    );
    assert_eq!(v.rule_ids(), vec!["FW.SOFTMAX_THD"]);
}

#[test]
fn row17_max_logit() {
    let mut r = base();
    r.return_max_logit = true;
    assert_hint(
        &f16(&r, 90, "9.20.0"),
        "F16.MAXLOGIT",
        Unblock::CudnnAtLeast(ver("9.21.0")),
        "requires cuDNN >= 9.21.0",
    );
    assert_eligible(&f16(&r, 90, "9.21.0"));
}

#[test]
fn row18_hopper_deterministic_training_with_bias_and_dropout() {
    let mut r = mask(train(base()), Mask::Causal);
    r.deterministic = true;
    r.dropout = 0.1;
    r.bias = BiasType::PostScaleBias;
    assert_eligible(&f16(&r, 90, "9.8.0"));
    r.bias_requires_grad = true;
    let v = f16(&r, 90, "9.8.0");
    assert_eq!(v.rule_ids(), vec!["FW.DET_DBIAS"]);
}

#[test]
fn row19_fp8_training_and_deterministic() {
    let r = mask(train(base()), Mask::Causal).with_dtype(Dtype::Fp8E4m3);
    let v = run(&r, 90, "9.8.0");
    assert_eligible(v.verdict(FP8).unwrap());
    assert_eq!(v.te_backend, Some(TeBackend::Fp8));
    assert_eq!(v.selected.map(|t| t.name()), Some(FP8));
    let mut det = r.clone();
    det.deterministic = true;
    assert_hint(
        &fp8(&det, 90, "9.8.0"),
        "FW.DET_FP8",
        Unblock::CudnnAtLeast(ver("9.19.0")),
        "requires cuDNN >= 9.19.0",
    );
    assert_eligible(&fp8(&det, 90, "9.19.0"));
}

#[test]
fn row20_fp8_training_d256_no_f16_fallback() {
    let r = dims(train(base()), 256, 256).with_dtype(Dtype::Fp8E4m3);
    let v = run(&r, 90, "9.8.0");
    assert_rejected(v.verdict(FP8).unwrap(), "FP8.SHAPE");
    assert_eq!(v.verdict(F16).unwrap().rule_ids(), vec!["F16.DTYPE"]);
    assert_eq!(v.te_backend, Some(TeBackend::NoBackend));
}

#[test]
fn row21_fp8_inference_padding_d256() {
    let r = dims(mask(base(), Mask::Padding), 256, 256).with_dtype(Dtype::Fp8E4m3);
    assert_eligible(&fp8(&r, 90, "9.8.0"));
}

#[test]
fn row22_fp8_unaligned_lengths_need_9_7_0() {
    let r = seqs(mask(base(), Mask::Causal), 1000, 1000).with_dtype(Dtype::Fp8E4m3);
    assert_hint(
        &fp8(&r, 90, "9.5.0"),
        "FP8.SHAPE",
        Unblock::CudnnAtLeast(ver("9.7.0")),
        "requires cuDNN >= 9.7.0",
    );
}

#[test]
fn row23_fp8_badver() {
    let r = base().with_dtype(Dtype::Fp8E4m3);
    assert_hint(
        &fp8(&r, 90, "9.10.0"),
        "FP8.BADVER",
        Unblock::AvoidCudnn(vec![ver("9.10.0")]),
        "avoid cuDNN 9.10.0",
    );
    assert_eligible(&fp8(&r, 90, "9.10.1"));
}

#[test]
fn row24_d72() {
    let r = dims(base(), 72, 72);
    assert_eligible(&f16(&r, 90, "9.8.0"));
    let r8 = r.clone().with_dtype(Dtype::Fp8E4m3);
    assert_rejected(&fp8(&r8, 90, "9.8.0"), "FP8.SHAPE");
    // %16 is the cause: d 80 (a multiple of 16) passes clause p2.
    assert_eligible(&fp8(&dims(r8, 80, 80), 90, "9.8.0"));
}

#[test]
fn row25_mla_needs_separate_tensors() {
    let r = layout(dims(base(), 192, 128), Layout::Bs3hd);
    let v = f16(&r, 90, "9.8.0");
    assert_eq!(v.rule_ids(), vec!["FW.MLA_LAYOUT"]);
}

#[test]
fn row26_gqa_divisibility_is_a_validity_error() {
    let mut r = base();
    r.h_q = 12;
    r.h_kv = 5;
    let err = evaluate(&r, &env(90, "9.8.0")).unwrap_err();
    assert_eq!(err.status(), dnnplan::Status::BadParam);
    assert!(err.to_string().contains("h_kv"), "{err}");
}

#[test]
fn row27_bottom_right_with_bias_is_a_frontend_reject() {
    let mut r = seqs(mask(base(), Mask::CausalBottomRight), 128, 256);
    r.bias = BiasType::PostScaleBias;
    let v = run(&r, 90, "9.8.0");
    let f = v.verdict(F16).unwrap();
    assert_eq!(f.rule_ids(), vec!["FE.BR_FEATURES"]);
    assert_eq!(
        f.rejections[0].layer,
        dnnplan::select::rules::Layer::FrontendSurface
    );
    assert_eq!(v.te_backend, Some(TeBackend::F16ArbitrarySeqlen));
}

#[test]
fn row28_thd_without_padding() {
    let r = layout(base(), Layout::ThdThdThd);
    let v = f16(&r, 90, "9.8.0");
    assert_eq!(v.rule_ids(), vec!["F16.THD_NEEDS_PADDING"]);
}

#[test]
fn row29_blackwell_deterministic_needs_9_18_1() {
    let mut r = train(base());
    r.deterministic = true;
    let v = f16(&r, 100, "9.18.0");
    assert_hint(
        &v,
        "F16.BW_TRAIN",
        Unblock::CudnnAtLeast(ver("9.18.1")),
        "requires cuDNN >= 9.18.1",
    );
    assert!(
        v.rejected_by("F16.BW_TRAIN")
            .unwrap()
            .nearest_clause
            .unwrap()
            .starts_with("deterministic")
    );
    assert_eligible(&f16(&r, 100, "9.18.1"));
}

#[test]
fn row30_blackwell_deterministic_dropout() {
    let mut r = train(base());
    r.deterministic = true;
    r.dropout = 0.1;
    assert_rejected(&f16(&r, 100, "9.18.1"), "F16.BW_TRAIN");
}

#[test]
fn row31_blackwell_dropout_and_bias() {
    let mut r = train(base());
    r.dropout = 0.1;
    r.bias = BiasType::PostScaleBias;
    assert_rejected(&f16(&r, 100, "9.8.0"), "F16.BW_TRAIN");
    r.dropout = 0.0;
    assert!(f16(&r, 100, "9.8.0").rejected_by("F16.BW_TRAIN").is_none());
}

#[test]
fn row32_sm120_deterministic_training() {
    let mut r = train(base());
    r.deterministic = true;
    let v = f16(&r, 120, "9.18.1");
    assert_hint(
        &v,
        "F16.SM120",
        Unblock::NotOnArch(120),
        "not supported on SM 120",
    );
}

#[test]
fn row33_sm120_t3hd() {
    let mut r = layout(mask(base(), Mask::Padding), Layout::T3hd);
    r.h_kv = r.h_q;
    let v = f16(&r, 120, "9.18.1");
    assert_rejected(&v, "F16.SM120");
    assert_rejected(&v, "FW.SM120_THD");
}

#[test]
fn row34_sm80_thd() {
    let r = layout(mask(base(), Mask::Padding), Layout::ThdThdThd);
    let v = f16(&r, 80, "9.8.0");
    assert_rejected(&v, "F16.FORMAT");
    assert!(matches!(
        v.rejected_by("F16.FORMAT").unwrap().unblock,
        Some(Unblock::Arch { .. })
    ));
}

#[test]
fn row35_sm80_deterministic_training() {
    let mut r = train(base());
    r.deterministic = true;
    let v = f16(&r, 80, "9.8.0");
    assert_eq!(v.rule_ids(), vec!["FW.DET_ARCH"]);
}

#[test]
fn row36_sm89_kv_cache() {
    let mut r = mask(base(), Mask::Padding);
    r.kv_cache = true;
    let v = f16(&r, 89, "9.8.0");
    assert_eq!(v.rule_ids(), vec!["FW.KV_CACHE_ARCH"]);
    assert_eligible(&f16(&r, 90, "9.8.0"));
}

#[test]
fn row37_sm75() {
    for cudnn in ["8.9.0", "9.8.0", "9.19.0"] {
        let v = f16(&base(), 75, cudnn);
        assert_rejected(&v, "F16.ARCH");
        assert_rejected(&v, "FW.ARCH");
    }
}

// Section 7 quirks.

#[test]
fn quirk1_causal_bias_rejected_between_9_2_and_9_5() {
    let mut r = mask(base(), Mask::Causal);
    r.bias = BiasType::PostScaleBias;
    assert_eligible(&f16(&r, 90, "9.1.0"));
    assert_hint(
        &f16(&r, 90, "9.4.0"),
        "F16.WINDOW",
        Unblock::CudnnAtLeast(ver("9.6.0")),
        "requires cuDNN >= 9.6.0",
    );
    assert_eligible(&f16(&r, 90, "9.6.0"));
}

#[test]
fn quirk3_hopper_mla_backward_shapes() {
    for (d, blocked) in [
        ((256, 128), true),
        ((160, 128), true),
        ((192, 128), false),
        ((128, 64), false),
    ] {
        let r = dims(mask(train(base()), Mask::Causal), d.0, d.1);
        let v = f16(&r, 90, "9.12.0");
        assert_eq!(
            v.rejected_by("F16.HOPPER_MLA_BWD").is_some(),
            blocked,
            "{d:?}"
        );
    }
}

#[test]
fn quirk4_ragged_offsets_from_max_lengths() {
    // 32 heads x 128 dims x 2^20 max tokens = 2^32 elements > i32::MAX.
    let r = layout(
        seqs(mask(base(), Mask::Padding), 1 << 20, 1 << 20),
        Layout::ThdThdThd,
    );
    let v = f16(&r, 90, "9.4.0");
    assert_hint(
        &v,
        "F16.RAGGED64",
        Unblock::CudnnAtLeast(ver("9.5.0")),
        "requires cuDNN >= 9.5.0",
    );
    assert!(f16(&r, 90, "9.5.0").rejected_by("F16.RAGGED64").is_none());
    let facts = run(&r, 90, "9.8.0").facts;
    assert_eq!(facts.max_ragged_offset, 32 * 128 * (1 << 20));
    // Interleaved 3hd: 3 * h_q * d_qk * s_q.
    let mut packed = layout(seqs(mask(base(), Mask::Padding), 1000, 1000), Layout::T3hd);
    packed.h_kv = 32;
    assert_eq!(
        run(&packed, 90, "9.8.0").facts.max_ragged_offset,
        3 * 32 * 128 * 1000
    );
}

// Engines, environment, ordering.

fn env_all_engines(sm: u16, cudnn: &str) -> Environment {
    let mut e = env(sm, cudnn);
    e.engines = vec!["sdpa_fwd_prefill_sm90".to_owned()];
    e
}

#[test]
fn engine_not_bundled_by_default() {
    let r = dims(mask(base(), Mask::Causal), 512, 512);
    let v = run(&r, 90, "9.12.0");
    let e = v.verdict(ENGINE).unwrap();
    assert_eq!(e.rule_ids(), vec!["ENGINE.AVAILABLE"]);
    assert!(matches!(e.rejections[0].unblock, Some(Unblock::Setting(_))));
    assert_eq!(e.engine_id, Some(20517));
}

#[test]
fn engine_row_leads_for_dense_512() {
    let r = dims(mask(base(), Mask::Causal), 512, 512);
    let v = evaluate(&r, &env_all_engines(90, "9.12.0")).unwrap();
    assert_eligible(v.verdict(ENGINE).unwrap());
    assert_eligible(v.verdict(F16).unwrap());
    let order: Vec<&str> = v.order.iter().map(|t| t.name()).collect();
    assert_eq!(order, vec![ENGINE, F16, "reference.unfused"]);
    // Decode with b*h_q < 512 trails the cuDNN block.
    let dec = seqs(mask(base(), Mask::CausalBottomRight), 1, 4096);
    let v = evaluate(&dims(dec, 512, 512), &env_all_engines(90, "9.12.0")).unwrap();
    let order: Vec<&str> = v.order.iter().map(|t| t.name()).collect();
    assert_eq!(order, vec![F16, ENGINE, "reference.unfused"]);
}

#[test]
fn engine_row_every_unmet_capability() {
    let e = |r: &Request, sm: u16| {
        evaluate(r, &env_all_engines(sm, "9.12.0"))
            .unwrap()
            .verdict(ENGINE)
            .unwrap()
            .clone()
    };
    let ok = dims(base(), 512, 512);
    assert_eligible(&e(&ok, 90));
    // Envelope edges: floor 256 excluded, 264 included, 512 included, 520 excluded, %8.
    assert_rejected(&e(&dims(base(), 256, 256), 90), "ENGINE.HDIM");
    assert_eligible(&e(&dims(base(), 264, 264), 90));
    assert_rejected(&e(&dims(base(), 520, 520), 90), "ENGINE.HDIM");
    assert_rejected(&e(&dims(base(), 300, 300), 90), "ENGINE.HDIM");
    // Arch edges.
    assert_hint(
        &e(&ok, 89),
        "ENGINE.ARCH",
        Unblock::Arch {
            sms: vec![90],
            cudnn_at_least: None,
        },
        "requires SM 90",
    );
    assert_rejected(&e(&ok, 100), "ENGINE.ARCH");
    // One failing feature each.
    let mut d = ok.clone();
    d.dropout = 0.1;
    assert_eq!(e(&d, 90).rule_ids(), vec!["ENGINE.DROPOUT"]);
    let mut b = ok.clone();
    b.bias = BiasType::PostScaleBias;
    assert_eq!(e(&b, 90).rule_ids(), vec!["ENGINE.BIAS"]);
    let mut a = mask(ok.clone(), Mask::Causal);
    a.bias = BiasType::Alibi;
    assert_eq!(e(&a, 90).rule_ids(), vec!["ENGINE.ALIBI"]);
    let p = layout(mask(ok.clone(), Mask::Padding), Layout::PagedKvBshdBshdBshd);
    assert_eq!(e(&p, 90).rule_ids(), vec!["ENGINE.LAYOUT", "ENGINE.PAGED"]);
    let mut m = ok.clone();
    m.return_max_logit = true;
    assert_eq!(e(&m, 90).rule_ids(), vec!["ENGINE.MAX_LOGIT"]);
    let f = ok.clone().with_dtype(Dtype::Fp8E4m3);
    assert_eq!(e(&f, 90).rule_ids(), vec!["ENGINE.DTYPE"]);
    // Every unmet capability at once, not only the first.
    let mut many = dims(ok.clone(), 64, 64);
    many.dropout = 0.1;
    many.bias = BiasType::PostScaleBias;
    assert_eq!(
        e(&many, 100).rule_ids(),
        vec![
            "ENGINE.ARCH",
            "ENGINE.HDIM",
            "ENGINE.BIAS",
            "ENGINE.DROPOUT"
        ]
    );
    // Supported features pass: THD with padding, sink, window, decode.
    let mut rich = layout(mask(ok.clone(), Mask::PaddingCausal), Layout::ThdThdThd);
    rich.softmax = SoftmaxType::Learnable;
    rich.window = Some((128, 0));
    assert_eligible(&e(&rich, 90));
    // Training: eligible for the forward, with a note.
    let t = e(&train(ok), 90);
    assert_eligible(&t);
    assert!(t.notes.iter().any(|n| n.contains("forward pass only")));
}

#[test]
fn no_cudnn_rejects_cudnn_targets_only() {
    let v = evaluate(&base(), &Environment::new(90, None)).unwrap();
    assert_eq!(v.verdict(F16).unwrap().rule_ids(), vec!["ENV.CUDNN"]);
    assert_eq!(v.verdict(FP8).unwrap().rule_ids(), vec!["ENV.CUDNN"]);
    assert_eligible(v.verdict("reference.unfused").unwrap());
    assert_eq!(v.te_backend, None);
    assert_eq!(v.selected.map(|t| t.name()), Some("reference.unfused"));
}

#[test]
fn policy_disables_a_target() {
    let mut e = env(90, "9.8.0");
    e.policy.disabled = vec![F16.to_owned()];
    let v = evaluate(&base(), &e).unwrap();
    let f = v.verdict(F16).unwrap();
    assert_eq!(f.rule_ids(), vec!["FW.DISABLED"]);
    assert!(matches!(f.rejections[0].unblock, Some(Unblock::Setting(_))));
    // TE's own rule would still pick F16: the policy is a framework layer.
    assert_eq!(v.te_backend, Some(TeBackend::F16ArbitrarySeqlen));
}

#[test]
fn reference_needs_fp8_emulation() {
    let r = base().with_dtype(Dtype::Fp8E4m3);
    let v = run(&r, 90, "9.8.0");
    assert_eq!(
        v.verdict("reference.unfused").unwrap().rule_ids(),
        vec!["FW.REF_FP8"]
    );
    let mut e = env(90, "9.8.0");
    e.policy.allow_fp8_emulation = true;
    assert_eligible(
        evaluate(&r, &e)
            .unwrap()
            .verdict("reference.unfused")
            .unwrap(),
    );
}

#[test]
fn canonicalization_rewrites_and_errors() {
    // Causal (-1,-1) -> (-1,0); non-causal (-1,0) -> (-1,-1); KV cache padding_causal -> BR.
    let mut r = mask(base(), Mask::Causal);
    r.window = Some((-1, -1));
    let f = run(&r, 90, "9.8.0").facts;
    assert_eq!(f.window, (-1, 0));
    assert!(!f.notes.is_empty());
    let mut r = base();
    r.window = Some((-1, 0));
    assert_eq!(run(&r, 90, "9.8.0").facts.window, (-1, -1));
    let mut r = mask(base(), Mask::PaddingCausal);
    r.kv_cache = true;
    assert_eq!(
        run(&r, 90, "9.8.0").facts.request.mask,
        Mask::PaddingCausalBottomRight
    );
    // Invalid windows, KV cache without padding, mismatched dtypes, dropout 1.0.
    let bad = |r: Request| evaluate(&r, &env(90, "9.8.0")).unwrap_err().to_string();
    let mut w = base();
    w.window = Some((-1, 5));
    assert!(bad(w).contains("window"));
    let mut k = base();
    k.kv_cache = true;
    assert!(bad(k).contains("KV cache"));
    let mut d = base();
    d.kv_dtype = Dtype::Fp16;
    assert!(bad(d).contains("kv_dtype"));
    let mut p = base();
    p.dropout = 1.0;
    assert!(bad(p).contains("dropout"));
    // ALiBi with explicit slopes becomes a post-scale bias before the rules.
    let mut a = base();
    a.bias = BiasType::Alibi;
    a.alibi_slopes = dnnplan::select::AlibiSlopes::PerBatchHead;
    let f = run(&a, 90, "9.8.0").facts;
    assert_eq!(f.request.bias, BiasType::PostScaleBias);
    assert_eq!(f.request.bias_shape, BiasShape::Bhss);
}

#[test]
fn display_reads_like_te_logs() {
    let mut r = mask(base(), Mask::Padding);
    r.window = Some((-1, -1));
    let text = run(&r, 90, "9.5.1").to_string();
    assert!(
        text.contains("Disabling cudnn.f16_arbitrary_seqlen: [F16.WINDOW] padding mask with window (-1,-1) is not supported on cuDNN 9.5.1 (nearest clause \"w3"),
        "{text}"
    );
    assert!(text.contains("requires cuDNN >= 9.6.0"));
    assert!(
        text.contains("Selected backend = reference.unfused"),
        "{text}"
    );
}

#[test]
fn rule_ids_are_unique_per_scope_and_documented() {
    use dnnplan::select::rules;
    let all = rules::all();
    let mut seen = std::collections::HashSet::new();
    for r in all {
        let scope = match r.scope {
            rules::Scope::Targets(b) => format!("{b}"),
            rules::Scope::Engine(row) => row.name.to_owned(),
        };
        assert!(seen.insert((r.id, scope)), "duplicate rule id {}", r.id);
        assert!(!r.message.is_empty() && !r.source.is_empty());
    }
    let md = rules::dump_markdown();
    assert!(md.contains("| F16.WINDOW |"));
}
