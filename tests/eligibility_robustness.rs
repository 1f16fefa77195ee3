//! Random attention-eligibility requests through the C ABI (`dnnp_attention_eligibility`): no
//! call may panic (a contained panic is `DNNP_STATUS_INTERNAL_PANIC`, a bug), every refusal
//! leaves a last-error message, and every answer is a JSON document.
//!
//! A seeded PRNG draws each request field (present or absent): the closed vocabularies from their
//! full lists (`Dtype::ALL`, `Layout::ALL`, ...) or a name outside them, sizes at the edges of 64
//! bits (0, 1, powers of two, `u64::MAX`), windows at the edges of `i64`, dropout and page sizes
//! out of range, and an environment (architecture, cuDNN version or none, SM count, engine rows,
//! policy) given explicitly, so that nothing is detected from this machine.
//!
//! One draw in four is wild (invalid names, absent required sizes, sizes past the request limits:
//! mostly refused before evaluation); the others are tame (valid names, realistic sizes, the
//! defaulted fields mostly absent), so that about a third of all requests are evaluated in full.
//!
//! `DNNPLAN_ELIGIBILITY_ROBUSTNESS_CASES` sets the number of requests (default 8,000);
//! `DNNPLAN_ROBUSTNESS_SHOW=1` prints the tame draws' refusals (to see what the draw reaches).

use std::ffi::{CStr, CString, c_char};
use std::ptr;

use dnnplan::ffi::select::dnnp_attention_eligibility;
use dnnplan::ffi::{DNNP_STATUS_BUFFER_TOO_SMALL, DNNP_STATUS_SUCCESS};
use dnnplan::select::{
    AlibiSlopes, BiasShape, BiasType, Dtype, Fp8Recipe, Layout, Mask, SoftmaxType,
};
use serde_json::{Map, Value, json};
use support::fuzz::{Outcome, Rng, Tally, env_count, last_error, rng};

mod support;

const SIZES: [u64; 16] = [
    0,
    1,
    2,
    3,
    8,
    64,
    96,
    128,
    192,
    256,
    512,
    4096,
    1 << 31,
    1 << 32,
    1 << 53,
    u64::MAX,
];

const WINDOW: [i64; 8] = [-1, 0, 1, 128, 4096, i64::MAX, i64::MIN, -2];

/// A vocabulary value: one of `names`, or (in a wild draw, one time in twelve) a name outside them.
fn word(rng: &mut Rng, wild: bool, names: &[&str]) -> Value {
    if wild && rng.chance(12) {
        Value::from(rng.pick(&["", "nvte_", "bogus", "BSHD_BSHD_BSHD_BSHD"]))
    } else {
        Value::from(rng.pick(names))
    }
}

macro_rules! names {
    ($t:ty) => {
        <$t>::ALL.iter().map(|v| v.name()).collect::<Vec<&str>>()
    };
}

/// Sizes a tame draw takes (what frameworks ask).
const TAME_SIZES: [u64; 9] = [1, 2, 8, 16, 64, 128, 256, 2048, 8192];

/// One request: tame (valid vocabularies, every required size, realistic sizes: the rules are
/// evaluated) or wild (anything above, most of it refused before evaluation).
fn request(rng: &mut Rng, wild: bool) -> Value {
    let (dtypes, layouts, masks) = (names!(Dtype), names!(Layout), names!(Mask));
    let (biases, shapes, alibi) = (names!(BiasType), names!(BiasShape), names!(AlibiSlopes));
    let (softmax, recipes) = (names!(SoftmaxType), names!(Fp8Recipe));
    let mut drawn: Vec<(&str, Value)> = vec![
        ("dtype", word(rng, wild, &dtypes)),
        ("kv_dtype", word(rng, wild, &dtypes)),
        ("o_dtype", word(rng, wild, &dtypes)),
        ("layout", word(rng, wild, &layouts)),
        ("mask", word(rng, wild, &masks)),
        ("window", json!([rng.pick(&WINDOW), rng.pick(&WINDOW)])),
        ("bias", word(rng, wild, &biases)),
        ("bias_shape", word(rng, wild, &shapes)),
        ("bias_requires_grad", Value::from(rng.chance(2))),
        ("alibi_slopes", word(rng, wild, &alibi)),
        ("softmax", word(rng, wild, &softmax)),
        (
            "dropout",
            Value::from(if wild {
                rng.pick(&[0.0, 0.1, 1.0, -1.0, 2.0, 1e308])
            } else {
                rng.pick(&[0.0, 0.1])
            }),
        ),
        ("training", Value::from(rng.chance(2))),
        ("fp8_recipe", word(rng, wild, &recipes)),
    ];
    for key in [
        "b",
        "h_q",
        "h_kv",
        "s_q",
        "s_kv",
        "d_qk",
        "d_v",
        "page_size",
    ] {
        let size = if wild || rng.chance(10) {
            rng.pick(&SIZES)
        } else {
            rng.pick(&TAME_SIZES)
        };
        drawn.push((key, Value::from(size)));
    }
    for key in [
        "return_max_logit",
        "cuda_graph",
        "deterministic",
        "kv_cache",
    ] {
        drawn.push((key, Value::from(rng.chance(2))));
    }
    // Each field absent one time in four (wild: the required sizes too, and a refusal names them)
    // or in eight (tame: the required sizes always there).
    let mut r = Map::new();
    for (key, v) in drawn {
        let required = matches!(key, "h_q" | "s_q" | "d_qk");
        // Tame: K/V and O take Q's dtype, h_kv divides h_q, no KV cache and no window (their
        // defaults) most of the time.
        let defaulted = matches!(
            key,
            "kv_dtype" | "o_dtype" | "h_kv" | "page_size" | "kv_cache" | "window"
        );
        let absent = if wild {
            rng.chance(4)
        } else if defaulted {
            !rng.chance(6)
        } else {
            !required && rng.chance(8)
        };
        if !absent {
            r.insert(key.to_owned(), v);
        }
    }
    Value::Object(r)
}

fn environment(rng: &mut Rng, wild: bool) -> Value {
    let engines = if wild {
        rng.pick(&[
            json!(["all"]),
            json!([]),
            json!(["sdpa_fwd_prefill_sm90"]),
            json!(["bogus"]),
        ])
    } else {
        rng.pick(&[json!(["all"]), json!([]), json!(["sdpa_fwd_prefill_sm90"])])
    };
    json!({
        "sm": rng.pick(&[0u16, 70, 80, 86, 89, 90, 100, 103, 120, u16::MAX]),
        "cudnn": rng.pick(&[json!("9.19.0"), json!("8.9.7"), json!("none"), json!(91900), json!("0.0.0"), json!("99.99.99"), Value::Null]),
        "sm_count": rng.pick(&[0u32, 1, 132, u32::MAX]),
        "engines": engines,
        "policy": {
            "disabled": rng.pick(&[json!([]), json!(["cudnn.fp8"]), json!(["cudnn.f16_arbitrary_seqlen", "reference.unfused"])]),
            "allow_fp8_emulation": rng.chance(2),
        },
    })
}

#[test]
fn random_eligibility_requests_never_panic_and_answer_json_or_say_why() {
    let cases: usize = env_count("DNNPLAN_ELIGIBILITY_ROBUSTNESS_CASES", 8_000);
    let mut rng = rng(0x1319_8a2e_0370_7344);
    let mut tally = Tally::default();
    for case in 0..cases {
        let wild = rng.chance(4);
        let req = request(&mut rng, wild);
        let env = environment(&mut rng, wild);
        let (req_c, env_c) = (
            CString::new(req.to_string()).expect("no NUL"),
            CString::new(env.to_string()).expect("no NUL"),
        );
        let mut needed = 0usize;
        // SAFETY: NUL-terminated strings, `needed` valid for one write, no buffer.
        let mut status = unsafe {
            dnnp_attention_eligibility(
                req_c.as_ptr(),
                env_c.as_ptr(),
                ptr::null_mut(),
                0,
                &mut needed,
            )
        };
        let mut text = String::new();
        if status == DNNP_STATUS_BUFFER_TOO_SMALL {
            let mut buf = vec![0 as c_char; needed];
            // SAFETY: `buf` valid for `needed` bytes.
            status = unsafe {
                dnnp_attention_eligibility(
                    req_c.as_ptr(),
                    env_c.as_ptr(),
                    buf.as_mut_ptr(),
                    buf.len(),
                    &mut needed,
                )
            };
            // SAFETY: written NUL-terminated on success.
            text = unsafe { CStr::from_ptr(buf.as_ptr()) }
                .to_string_lossy()
                .into_owned();
        }
        if status == DNNP_STATUS_SUCCESS && serde_json::from_str::<Value>(&text).is_err() {
            let bug = format!("the answer is not JSON: {text:.200}");
            tally.add(format_args!("case {case}"), Outcome::Bug(bug));
            continue;
        }
        if status != DNNP_STATUS_SUCCESS
            && !wild
            && std::env::var("DNNPLAN_ROBUSTNESS_SHOW").is_ok()
        {
            eprintln!("REFUSED {}", last_error());
        }
        tally.record(
            format_args!("case {case} (request {req}, env {env})"),
            "dnnp_attention_eligibility",
            status,
        );
    }
    assert!(
        tally.passed > 0 && tally.refused > 0,
        "the draw reaches both outcomes"
    );
    tally.assert_clean(&format!("{cases} eligibility requests"));
}
