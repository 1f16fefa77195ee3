//! Spec 9.1 differential check: an independent, plain nested-`if` transcription of Transformer
//! Engine's sub-backend rule (spec tables 2.2 and 2.3), written without the rule table, its
//! predicates or its layout table, compared with the table-driven selector's TE layers
//! (`TePolicy` + `KnownBug`, reported as `te_backend`) over seeded random requests.
//!
//! The oracle encodes versions as integers `M*10000 + m*100 + p` and derives formats and layout
//! groups from the layout's name, so it shares no code with `src/select/rules` or
//! `Layout::info`. Case count: `DNNPLAN_SELECT_DIFF_CASES` (default 200000 in debug builds);
//! half are drawn on SM90 from the spec's grid, half across every architecture of the spec;
//! half of each are biased toward plain (likely eligible) requests.

// The oracle is a deliberately literal transcription of the spec's conditions: keep it
// unsimplified so it can be reviewed line by line against the tables.
#![allow(
    clippy::nonminimal_bool,
    clippy::if_same_then_else,
    clippy::collapsible_if,
    clippy::manual_range_contains,
    clippy::overly_complex_bool_expr
)]

use dnnplan::select::{
    BiasType, CudnnVer, Dtype, Environment, Layout, Mask, Options, Request, SoftmaxType, TeBackend,
    evaluate_with,
};
use support::fuzz::Rng;

mod support;

#[derive(Copy, Clone, PartialEq, Debug)]
enum Fmt {
    Sbhd,
    Bshd,
    Thd,
    Bhsd,
    Mixed,
}

#[derive(Copy, Clone, PartialEq, Debug)]
enum Grp {
    Qkv3,
    Kv2,
    Separate,
    Paged,
    HeadMajor,
}

/// Formats and group from the layout's name, e.g. `paged_kv_thd_bshd_bshd`.
fn describe_layout(name: &str) -> (Fmt, Fmt, Fmt, Grp) {
    let paged = name.starts_with("paged_kv_");
    let rest = name.trim_start_matches("paged_kv_");
    let parts: Vec<&str> = rest.split('_').collect();
    let fmt_of = |p: &str| {
        if p.starts_with("sb") {
            Fmt::Sbhd
        } else if p.starts_with("bs") {
            Fmt::Bshd
        } else if p.starts_with("bh") {
            Fmt::Bhsd
        } else if p.starts_with('t') {
            Fmt::Thd
        } else {
            panic!("unknown layout part {p}")
        }
    };
    let q = fmt_of(parts[0]);
    let kv = fmt_of(parts[parts.len() - 1]);
    let qkv = if q == kv { q } else { Fmt::Mixed };
    let grp = if paged {
        Grp::Paged
    } else if parts.len() == 1 {
        Grp::Qkv3
    } else if parts.len() == 2 {
        Grp::Kv2
    } else if q == Fmt::Bhsd {
        Grp::HeadMajor
    } else {
        Grp::Separate
    };
    (qkv, q, kv, grp)
}

struct Case {
    sm: u32,
    v: u32,
    r: Request,
}

/// Spec 1.5.1 window canonicalization, independently. `None` = invalid.
fn oracle_window(causal: bool, w: Option<(i64, i64)>) -> Option<(i64, i64)> {
    let (wl, wr) = match w {
        None => return Some(if causal { (-1, 0) } else { (-1, -1) }),
        Some(x) => x,
    };
    if wl < -1 || wr < -1 {
        return None;
    }
    if causal {
        return Some((wl, 0));
    }
    if wl == -1 && wr == -1 {
        Some((-1, -1))
    } else if wl == -1 && wr == 0 {
        Some((-1, -1))
    } else if wl >= 0 && wr >= 0 {
        Some((wl, wr))
    } else {
        None
    }
}

/// TE `nvte_get_fused_attn_backend`, transcribed from spec tables 2.2 and 2.3 as plain ifs.
/// Returns -1 (no backend), 1 (F16 arbitrary seqlen) or 2 (FP8).
fn te_oracle(c: &Case, wl: i64, wr: i64) -> i32 {
    let r = &c.r;
    let (sm, v) = (c.sm, c.v);
    let (qkv, qf, kvf, grp) = describe_layout(r.layout.name());
    let paged = grp == Grp::Paged;
    let is_thd = qf == Fmt::Thd || kvf == Fmt::Thd;
    let train = r.training;
    let det = r.deterministic && r.training;
    let (sq, skv, hq, hkv, dqk, dv) = (r.s_q, r.s_kv, r.h_q, r.h_kv, r.d_qk, r.d_v);
    let m = r.mask;
    let nobias = r.bias == BiasType::NoBias;
    let nodrop = r.dropout == 0.0;
    let vanilla = r.softmax == SoftmaxType::Vanilla;
    let bshd_sbhd = qkv == Fmt::Bshd || qkv == Fmt::Sbhd;
    let dense = |f: Fmt| f == Fmt::Sbhd || f == Fmt::Bshd || f == Fmt::Bhsd;
    let padding_family =
        m == Mask::Padding || m == Mask::PaddingCausal || m == Mask::PaddingCausalBottomRight;
    let causal_family = m == Mask::Causal
        || m == Mask::PaddingCausal
        || m == Mask::CausalBottomRight
        || m == Mask::PaddingCausalBottomRight;
    let br = m == Mask::CausalBottomRight || m == Mask::PaddingCausalBottomRight;

    // get_ragged_offset_dtype: offsets from max lengths; O uses d_qk.
    let o = hq * dqk * sq;
    let max_off = match grp {
        Grp::Qkv3 => 3 * hq * dqk * sq,
        Grp::Kv2 => (2 * hkv * dqk * skv).max(o),
        _ => (hkv * dqk * skv).max(hkv * dv * skv).max(o),
    };
    let needs_i64 = qkv == Fmt::Thd && max_off > i32::MAX as u64;

    if r.q_dtype == Dtype::Fp8E4m3 || r.q_dtype == Dtype::Fp8E5m2 {
        let mut ok = sm >= 90 && nobias;
        let d16 = dqk % 16 == 0 && dv % 16 == 0;
        let four = m == Mask::NoMask
            || m == Mask::Causal
            || m == Mask::Padding
            || m == Mask::PaddingCausal;
        let mut shape = false;
        if v >= 90201
            && sm >= 90
            && sm < 100
            && sq % 128 == 0
            && skv % 128 == 0
            && dqk == 128
            && dv == 128
            && (m == Mask::NoMask || m == Mask::Causal)
        {
            shape = true;
        }
        if v >= 90700 && sm < 100 && d16 && four {
            if !train && dqk <= 256 && dv <= 256 {
                shape = true;
            }
            if train && dqk == 128 && dv == 128 {
                shape = true;
            }
        }
        if v >= 90700 && sm >= 100 && dqk <= 128 && dv <= 128 && d16 && four {
            shape = true;
        }
        if v >= 92100
            && sm >= 100
            && dqk <= 192
            && dv <= 128
            && d16
            && (m == Mask::NoMask || m == Mask::Causal || m == Mask::CausalBottomRight)
        {
            shape = true;
        }
        ok = ok && shape;
        let format = if v < 92100 {
            bshd_sbhd && vanilla
        } else {
            bshd_sbhd || qkv == Fmt::Bhsd
        };
        ok = ok && format && !needs_i64 && v != 91000 && !r.return_max_logit;
        return if ok { 2 } else { -1 };
    }
    if !(r.q_dtype == Dtype::Fp16 || r.q_dtype == Dtype::Bf16) {
        return -1;
    }

    // F16 arbitrary seqlen.
    let arch = (v < 80903 && (sm == 80 || sm == 90))
        || (v >= 80903 && (80..100).contains(&sm))
        || (v >= 90700 && sm >= 100);
    if !arch {
        return -1;
    }
    if v < 90000 && (sq % 64 != 0 || skv % 64 != 0) {
        return -1;
    }
    if v < 80907 && hq != hkv {
        return -1;
    }
    if dqk % 8 != 0 || dv % 8 != 0 {
        return -1;
    }
    let mut hdim = dqk <= 128 && dv <= 128;
    if sm == 90 && dqk <= 256 && dv <= 256 && ((!train && v >= 90100) || (train && v >= 90500)) {
        hdim = true;
    }
    if v >= 90900 && sm >= 100 && !train && sq > 1 && !paged {
        hdim = true;
    }
    if v >= 91002 && !train {
        if paged || sq > 1 || (sq == 1 && m != Mask::Causal && m != Mask::PaddingCausal) {
            hdim = true;
        }
    }
    if v >= 91100 && sm >= 100 && train && dqk == 192 && dv == 128 {
        hdim = true;
    }
    if (100..110).contains(&sm) && train && dqk == 256 && dv == 256 {
        let need = if is_thd { 92500 } else { 92300 };
        let win = (wl == -1 && wr == -1) || (causal_family && (wr == -1 || wr == 0));
        if v >= need && !paged && nobias && nodrop && vanilla && win {
            hdim = true;
        }
    }
    if !hdim {
        return -1;
    }
    if v >= 91100
        && sm == 90
        && train
        && dqk >= 128
        && dv >= 128
        && dqk != dv
        && !(dqk == 192 && dv == 128)
    {
        return -1;
    }
    let bias_ok = match r.bias {
        BiasType::NoBias => true,
        BiasType::Alibi => {
            v >= 80906 && (m == Mask::Causal || m == Mask::CausalBottomRight) && sm >= 90
        }
        BiasType::PostScaleBias => (v >= 80906 && sm >= 90) || (v >= 90000 && sm >= 80),
        BiasType::PreScaleBias => false,
    };
    if !bias_ok {
        return -1;
    }
    let s64 = sq % 64 == 0 && skv % 64 == 0;
    let mut mask_ok = false;
    if v < 80906 && m == Mask::Causal {
        mask_ok = true;
    }
    if v >= 80906
        && bshd_sbhd
        && (m == Mask::NoMask
            || m == Mask::Causal
            || m == Mask::Padding
            || m == Mask::PaddingCausal)
    {
        mask_ok = true;
    }
    if v >= 90100 && qkv == Fmt::Thd && (m == Mask::Padding || m == Mask::PaddingCausal) {
        mask_ok = true;
    }
    if v >= 90300
        && bshd_sbhd
        && m == Mask::CausalBottomRight
        && s64
        && sq <= skv
        && nobias
        && nodrop
    {
        mask_ok = true;
    }
    if v >= 90500 && paged && nobias && nodrop {
        if m == Mask::Padding || m == Mask::PaddingCausal {
            mask_ok = true;
        }
        if m == Mask::PaddingCausalBottomRight && s64 && sq <= skv {
            mask_ok = true;
        }
    }
    if v >= 90600 && m == Mask::PaddingCausalBottomRight && s64 && sq <= skv && nobias && nodrop {
        mask_ok = true;
    }
    if v >= 90700 {
        if m == Mask::NoMask || m == Mask::Causal {
            mask_ok = true;
        }
        if padding_family && nobias && nodrop {
            mask_ok = true;
        }
        if br && sq <= skv {
            mask_ok = true;
        }
    }
    if !mask_ok {
        return -1;
    }
    if v >= 80906
        && r.bias == BiasType::PostScaleBias
        && (m == Mask::Padding || m == Mask::PaddingCausal)
    {
        return -1;
    }
    let mut fmt_ok = dense(qkv);
    if qkv == Fmt::Thd && sm >= 90 && ((v >= 90100 && hq == hkv) || v >= 90600) {
        fmt_ok = true;
    }
    if v >= 90700
        && (dense(qf)
            || (qf == Fmt::Thd && sm >= 90)
            || dense(kvf)
            || (kvf == Fmt::Thd && sm >= 90))
    {
        fmt_ok = true;
    }
    if !fmt_ok {
        return -1;
    }
    let mut win_ok = false;
    if v < 90200 && wl == -1 && (wr == -1 || wr == 0) {
        win_ok = true;
    }
    if v >= 90200 {
        if wl == -1 && wr == -1 && m == Mask::NoMask {
            win_ok = true;
        }
        let mask_w2 =
            m == Mask::NoMask || m == Mask::Causal || (m == Mask::CausalBottomRight && sq == skv);
        if wl >= -1 && wr == 0 && mask_w2 && sq <= skv && nodrop && nobias && bshd_sbhd {
            win_ok = true;
        }
    }
    if v >= 90600 {
        if wl == -1 && (wr == -1 || wr == 0) {
            win_ok = true;
        }
        let br_ok = br && (sm < 100 || (sm >= 100 && ((sq == skv && v <= 90700) || v > 90700)));
        let mask_w3 = m == Mask::NoMask || m == Mask::Padding || m == Mask::PaddingCausal || br_ok;
        if wl >= -1 && wr >= -1 && mask_w3 && sq <= skv && nobias && nodrop {
            win_ok = true;
        }
    }
    if !win_ok {
        return -1;
    }
    if needs_i64 && v < 90500 {
        return -1;
    }
    if v == 91000 || v == 91001 {
        return -1;
    }
    if !vanilla && v < 91301 {
        return -1;
    }
    if r.return_max_logit && v < 92100 {
        return -1;
    }
    if sm >= 100 && train {
        if det {
            if !(v >= 91801 && nodrop && nobias) {
                return -1;
            }
        } else if !nodrop && !nobias {
            return -1;
        }
    }
    // Post vetoes.
    if v < 80900 {
        return -1;
    }
    if v == 91400 && skv > 1024 && wl != -1 && m != Mask::Causal && m != Mask::CausalBottomRight {
        return -1;
    }
    if v <= 91500 && train && bshd_sbhd && skv % 128 != 0 && r.cuda_graph && !padding_family {
        return -1;
    }
    if sm == 120 && (v < 91801 || det || r.layout == Layout::T3hd || r.layout == Layout::Th3d) {
        return -1;
    }
    1
}

const THRESHOLDS: &[u32] = &[
    80900, 80903, 80905, 80906, 80907, 90000, 90100, 90200, 90201, 90300, 90500, 90600, 90700,
    90701, 90900, 91000, 91001, 91002, 91100, 91300, 91301, 91400, 91401, 91500, 91501, 91800,
    91801, 91900, 92100, 92300, 92301, 92500, 92600,
];

fn version_pool() -> Vec<u32> {
    let mut v = vec![80600, 92700];
    for &t in THRESHOLDS {
        v.push(t);
        // One patch below (x.y.0 - 1 patch is written as the previous minor's .99).
        if t % 100 > 0 {
            v.push(t - 1);
        } else if (t / 100) % 100 > 0 {
            v.push(t - 100 + 99);
        } else {
            v.push(80999);
        }
    }
    v.sort();
    v.dedup();
    v
}

fn to_ver(code: u32) -> CudnnVer {
    CudnnVer::new(
        (code / 10000) as u8,
        ((code / 100) % 100) as u8,
        (code % 100) as u8,
    )
}

const SEQS: &[(u64, u64)] = &[
    (1, 1),
    (1, 2048),
    (127, 127),
    (128, 128),
    (128, 256),
    (256, 128),
    (1000, 1000),
    (2048, 2048),
    (4096, 1024),
];
const DIMS: &[(u64, u64)] = &[
    (64, 64),
    (72, 72),
    (128, 128),
    (128, 64),
    (160, 128),
    (192, 128),
    (256, 128),
    (256, 256),
    (512, 512),
    (100, 100),
];
const HEADS: &[(u64, u64)] = &[(16, 16), (16, 4), (16, 1)];
const WINDOWS: &[(i64, i64)] = &[(-1, -1), (-1, 0), (128, 0), (128, 128)];
const MASKS: &[Mask] = &[
    Mask::NoMask,
    Mask::Padding,
    Mask::Causal,
    Mask::PaddingCausal,
    Mask::CausalBottomRight,
    Mask::PaddingCausalBottomRight,
];
const DTYPES: &[Dtype] = &[
    Dtype::Fp16,
    Dtype::Bf16,
    Dtype::Fp8E4m3,
    Dtype::Fp8E5m2,
    Dtype::Fp32,
];
const BIASES: &[BiasType] = &[
    BiasType::NoBias,
    BiasType::PreScaleBias,
    BiasType::PostScaleBias,
    BiasType::Alibi,
];
const SOFTMAXES: &[SoftmaxType] = &[
    SoftmaxType::Vanilla,
    SoftmaxType::OffByOne,
    SoftmaxType::Learnable,
];
const ARCHS: &[u32] = &[75, 80, 86, 89, 90, 100, 103, 110, 120];

/// Like [`sample`], but each dimension keeps its plain value (bf16/fp16/e4m3, dense layout, the
/// mask's default window, no bias, vanilla softmax, no dropout, no flags) three times in four, so
/// that eligible requests and the boundaries around them are well covered.
fn sample_near_plain(rng: &mut Rng, versions: &[u32], sm90: bool) -> Case {
    let mut c = sample(rng, versions, sm90);
    let r = &mut c.r;
    if !rng.chance(4) {
        *r = r
            .clone()
            .with_dtype(rng.pick(&[Dtype::Bf16, Dtype::Fp16, Dtype::Fp8E4m3]));
    }
    if !rng.chance(4) {
        r.layout = rng.pick(&[
            Layout::BshdBshdBshd,
            Layout::SbhdSbhdSbhd,
            Layout::Bs3hd,
            Layout::BshdBs2hd,
        ]);
    }
    if !rng.chance(4) {
        r.window = None;
    }
    if !rng.chance(4) {
        r.bias = BiasType::NoBias;
    }
    if !rng.chance(4) {
        r.softmax = SoftmaxType::Vanilla;
    }
    if !rng.chance(4) {
        r.dropout = 0.0;
    }
    if !rng.chance(4) {
        r.return_max_logit = false;
    }
    if !rng.chance(4) {
        r.cuda_graph = false;
    }
    if !rng.chance(4) {
        r.deterministic = false;
    }
    if !rng.chance(4) && c.v < 90000 {
        c.v = rng.pick(&versions[versions.len() / 2..]);
    }
    c
}

fn sample(rng: &mut Rng, versions: &[u32], sm90: bool) -> Case {
    let (h_q, h_kv) = rng.pick(HEADS);
    let (mut s_q, mut s_kv) = rng.pick(SEQS);
    if rng.chance(50) {
        // Large max lengths exercise the int64 ragged-offset row.
        (s_q, s_kv) = rng.pick(&[
            (1u64 << 20, 1u64 << 20),
            (1 << 21, 1 << 19),
            (3 << 19, 1 << 21),
        ]);
    }
    let (d_qk, d_v) = rng.pick(DIMS);
    let mut r = Request::new(2, h_q, h_kv, s_q, s_kv, d_qk, d_v).with_dtype(rng.pick(DTYPES));
    r.layout = rng.pick(Layout::ALL);
    r.mask = rng.pick(MASKS);
    r.bias = rng.pick(BIASES);
    r.softmax = rng.pick(SOFTMAXES);
    r.dropout = rng.pick(&[0.0, 0.1]);
    r.window = Some(rng.pick(WINDOWS));
    r.training = rng.chance(2);
    r.return_max_logit = rng.chance(2);
    r.cuda_graph = rng.chance(2);
    r.deterministic = rng.chance(2);
    Case {
        sm: if sm90 { 90 } else { rng.pick(ARCHS) },
        v: rng.pick(versions),
        r,
    }
}

#[test]
fn te_layers_match_independent_oracle() {
    let n: usize = std::env::var("DNNPLAN_SELECT_DIFF_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000);
    let versions = version_pool();
    let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
    let mut seen = [0usize; 3];
    let mut errors = 0usize;
    for i in 0..n {
        let c = if i % 4 < 2 {
            sample(&mut rng, &versions, i % 2 == 0)
        } else {
            sample_near_plain(&mut rng, &versions, i % 2 == 0)
        };
        let env = Environment::new(c.sm as u16, Some(to_ver(c.v)));
        let causal = c.r.mask.is_causal();
        let window = oracle_window(causal, c.r.window);
        let got = evaluate_with(&c.r, &env, Options { hints: false });
        let Some((wl, wr)) = window else {
            assert!(
                got.is_err(),
                "case {i}: oracle says invalid window, selector accepted {:?}",
                c.r
            );
            errors += 1;
            continue;
        };
        if c.r.h_q % c.r.h_kv != 0 {
            assert!(got.is_err());
            errors += 1;
            continue;
        }
        let got = got.unwrap_or_else(|e| panic!("case {i}: unexpected error {e} for {:?}", c.r));
        let expected = te_oracle(&c, wl, wr);
        let table = match got.te_backend {
            Some(TeBackend::NoBackend) => -1,
            Some(TeBackend::F16ArbitrarySeqlen) => 1,
            Some(TeBackend::Fp8) => 2,
            None => panic!("cuDNN was given"),
        };
        if expected != table {
            let v = got.verdicts[if expected == 2 || table == 2 { 1 } else { 0 }].clone();
            panic!(
                "case {i}: oracle {expected}, table {table} (sm {}, cuDNN {}, window ({wl},{wr}))\nrequest {:?}\nrejections {:?}",
                c.sm,
                to_ver(c.v),
                c.r,
                v.rule_ids()
            );
        }
        seen[match expected {
            -1 => 0,
            1 => 1,
            _ => 2,
        }] += 1;
    }
    eprintln!(
        "differential: {n} cases: {} no backend, {} F16, {} FP8, {errors} validity errors",
        seen[0], seen[1], seen[2]
    );
    // The sample must exercise every outcome, or the check proves little.
    assert!(seen.iter().all(|&k| k > n / 200), "outcome counts {seen:?}");
}

#[test]
fn oracle_layout_description_matches_spec_table() {
    // Spot checks of the oracle's own layout derivation against spec section 1.3.
    assert_eq!(
        describe_layout("sb3hd"),
        (Fmt::Sbhd, Fmt::Sbhd, Fmt::Sbhd, Grp::Qkv3)
    );
    assert_eq!(
        describe_layout("thd_th2d"),
        (Fmt::Thd, Fmt::Thd, Fmt::Thd, Grp::Kv2)
    );
    assert_eq!(
        describe_layout("thd_bshd_bshd"),
        (Fmt::Mixed, Fmt::Thd, Fmt::Bshd, Grp::Separate)
    );
    assert_eq!(
        describe_layout("paged_kv_sbhd_bshd_bshd"),
        (Fmt::Mixed, Fmt::Sbhd, Fmt::Bshd, Grp::Paged)
    );
    assert_eq!(
        describe_layout("bhsd_bhsd_bhsd"),
        (Fmt::Bhsd, Fmt::Bhsd, Fmt::Bhsd, Grp::HeadMajor)
    );
}

/// Spec 9.4: the frontend-surface rows (spec sections 5.1-5.4 where they differ from TE, plus
/// the two execution-time preconditions), transcribed independently. Returns the ids expected to
/// fail for the cuDNN sub-backend matching the request's dtype.
fn fe_oracle(c: &Case, wl: i64) -> Vec<&'static str> {
    let r = &c.r;
    let (sm, v) = (c.sm, c.v);
    let (_, qf, kvf, grp) = describe_layout(r.layout.name());
    let paged = grp == Grp::Paged;
    let thd = qf == Fmt::Thd || kvf == Fmt::Thd;
    let m = r.mask;
    let padding = matches!(
        m,
        Mask::Padding | Mask::PaddingCausal | Mask::PaddingCausalBottomRight
    );
    let fp8 = matches!(r.q_dtype, Dtype::Fp8E4m3 | Dtype::Fp8E5m2);
    let (sq, skv, dqk, dv) = (r.s_q, r.s_kv, r.d_qk, r.d_v);
    let vanilla = r.softmax == SoftmaxType::Vanilla;
    let mut out = Vec::new();
    if !fp8 {
        if paged && !padding {
            out.push("F16.PAGED_NEEDS_PADDING");
        }
        if thd && !padding {
            out.push("F16.THD_NEEDS_PADDING");
        }
    }
    let br = m == Mask::CausalBottomRight || m == Mask::PaddingCausalBottomRight;
    let br_lowered_to_tl = m == Mask::CausalBottomRight && sq == skv;
    if br && !br_lowered_to_tl && (r.bias != BiasType::NoBias || r.dropout > 0.0) {
        out.push("FE.BR_FEATURES");
    }
    if !padding && (m == Mask::CausalBottomRight || wl >= 0) && sq > skv {
        out.push("FE.SEQ_ORDER");
    }
    if !fp8 {
        let capped = if (80..90).contains(&sm) && v < 91000 {
            dqk > 128 || dv > 128
        } else if (90..100).contains(&sm) && v < 91000 {
            dqk > 256 || dv > 256
        } else if (100..110).contains(&sm) && v < 90900 {
            dqk > 128 || dv > 128
        } else {
            false
        };
        if capped {
            out.push("FE.F16_HDIM_CAP");
        }
        if paged
            && (v < 90500
                || (v < 91000 && (dqk > 128 || dv > 128))
                || (qf == Fmt::Thd && v < 90700))
        {
            out.push("FE.PAGED");
        }
        if r.training {
            let small = dqk <= 128 && dv <= 128;
            let ok = if small {
                true
            } else if (90..100).contains(&sm) {
                let band =
                    v >= 91100 && v < 91300 && dqk > 128 && dqk <= 192 && dv > 64 && dv <= 128;
                dqk <= 256 && dv <= 256 && !(band && dv != 128 && dqk != 192)
            } else if (100..110).contains(&sm) {
                (v >= 91100 && dqk == 192 && dv == 128) || (v >= 92300 && dqk == 256 && dv == 256)
            } else {
                false
            };
            if !ok {
                out.push("FE.F16_BWD_HDIM");
            }
        }
    }
    if r.training && sq == 1 && skv == 1 {
        out.push("FE.BWD_SEQ1");
    }
    if !fp8 {
        if r.training && thd && !vanilla && v < 92600 {
            out.push("FE.BWD_RAGGED_SINK");
        }
        if !vanilla && sq == 1 {
            out.push("FE.SINK_DECODE");
        }
    }
    if fp8 && matches!(r.o_dtype, Dtype::Fp16 | Dtype::Bf16) && !(sm >= 100 && v >= 91300) {
        out.push("FE.FP8_O_DTYPE");
    }
    out.sort();
    out
}

#[test]
fn frontend_layer_matches_independent_oracle() {
    use dnnplan::select::rules::Layer;
    let n: usize = std::env::var("DNNPLAN_SELECT_DIFF_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(200_000)
        / 2;
    let versions = version_pool();
    let mut rng = Rng(0xD1B5_4A32_D192_ED03);
    let mut nonempty = 0usize;
    for i in 0..n {
        let mut c = if i % 2 == 0 {
            sample(&mut rng, &versions, i % 4 == 0)
        } else {
            sample_near_plain(&mut rng, &versions, i % 4 == 1)
        };
        if c.r.q_dtype == Dtype::Fp32 {
            continue;
        }
        if c.r.q_dtype.is_fp8() && rng.chance(3) {
            c.r.o_dtype = rng.pick(&[Dtype::Bf16, Dtype::Fp16]);
        }
        let causal = c.r.mask.is_causal();
        let Some((wl, _)) = oracle_window(causal, c.r.window) else {
            continue;
        };
        let env = Environment::new(c.sm as u16, Some(to_ver(c.v)));
        let got = evaluate_with(&c.r, &env, Options { hints: false }).expect("valid");
        let verdict = if c.r.q_dtype.is_fp8() {
            &got.verdicts[1]
        } else {
            &got.verdicts[0]
        };
        let mut ids: Vec<&str> = verdict
            .rejections
            .iter()
            .filter(|r| r.layer == Layer::FrontendSurface)
            .map(|r| r.rule)
            .collect();
        ids.sort();
        let expected = fe_oracle(&c, wl);
        assert_eq!(
            ids,
            expected,
            "case {i}: sm {}, cuDNN {}, request {:?}",
            c.sm,
            to_ver(c.v),
            c.r
        );
        if !expected.is_empty() {
            nonempty += 1;
        }
    }
    assert!(
        nonempty > n / 20,
        "only {nonempty} cases exercised the frontend layer"
    );
}
