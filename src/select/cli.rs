//! The `dnnplan eligibility` command's argument handling and table rendering (kept here, not in
//! the binary, so the binary stays a thin match arm and the parsing is unit-tested).
//!
//! Arguments: `--json`, `--request FILE` and `--env FILE` (JSON documents as for the C API),
//! request flags (`--dtype bf16 --layout bshd --mask causal --window -1,0 --b 2 --sq 4096
//! --skv 4096 --hq 16 --hkv 16 --dqk 128 --dv 128 --bias post_scale_bias --dropout 0.1
//! --training --deterministic ...`) and environment flags (`--arch 90 --cudnn 9.19.0
//! --engines all --disable cudnn.fp8 --allow-fp8-emulation`). Flags override the files' fields.

use serde_json::{Map, Value, json};

use super::env::EnvironmentSpec;
use super::evaluate::Verdicts;
use super::request::RequestSpec;
use crate::error::{Error, Result};

/// How a flag's value is read.
#[derive(Copy, Clone)]
enum Arg {
    Text,
    Int,
    Float,
    Switch,
    Pair,
    List,
}

/// `(flag, JSON field, kind)` for request flags.
const REQUEST_FLAGS: &[(&str, &str, Arg)] = &[
    ("dtype", "dtype", Arg::Text),
    ("kv-dtype", "kv_dtype", Arg::Text),
    ("o-dtype", "o_dtype", Arg::Text),
    ("layout", "layout", Arg::Text),
    ("mask", "mask", Arg::Text),
    ("window", "window", Arg::Pair),
    ("bias", "bias", Arg::Text),
    ("bias-shape", "bias_shape", Arg::Text),
    ("bias-grad", "bias_requires_grad", Arg::Switch),
    ("alibi-slopes", "alibi_slopes", Arg::Text),
    ("softmax", "softmax", Arg::Text),
    ("dropout", "dropout", Arg::Float),
    ("training", "training", Arg::Switch),
    ("train", "training", Arg::Switch),
    ("b", "b", Arg::Int),
    ("hq", "h_q", Arg::Int),
    ("hkv", "h_kv", Arg::Int),
    ("sq", "s_q", Arg::Int),
    ("skv", "s_kv", Arg::Int),
    ("dqk", "d_qk", Arg::Int),
    ("dv", "d_v", Arg::Int),
    ("max-logit", "return_max_logit", Arg::Switch),
    ("cuda-graph", "cuda_graph", Arg::Switch),
    ("deterministic", "deterministic", Arg::Switch),
    ("kv-cache", "kv_cache", Arg::Switch),
    ("page-size", "page_size", Arg::Int),
    ("fp8-recipe", "fp8_recipe", Arg::Text),
];

/// `(flag, JSON field, kind)` for environment flags.
const ENV_FLAGS: &[(&str, &str, Arg)] = &[
    ("arch", "sm", Arg::Int),
    ("sm", "sm", Arg::Int),
    ("cudnn", "cudnn", Arg::Text),
    ("cudnn-compiled", "cudnn_compiled", Arg::Text),
    ("sm-count", "sm_count", Arg::Int),
    ("engines", "engines", Arg::List),
];

/// Parsed `dnnplan eligibility` arguments.
#[derive(Debug)]
pub struct EligibilityArgs {
    /// Print JSON instead of the table.
    pub json: bool,
    /// The request (file fields overlaid by flags).
    pub request: RequestSpec,
    /// The environment (file fields overlaid by flags; absent fields detected).
    pub env: EnvironmentSpec,
}

fn value(kind: Arg, flag: &str, text: Option<&str>) -> Result<Value> {
    let need = || text.ok_or_else(|| Error::bad_param(format!("--{flag}"), "needs a value"));
    let bad = |why: &str| Error::bad_param(format!("--{flag}"), why.to_owned());
    Ok(match kind {
        Arg::Switch => Value::Bool(true),
        Arg::Text => Value::String(need()?.to_owned()),
        Arg::Int => json!(
            need()?
                .parse::<u64>()
                .map_err(|_| bad("expects a non-negative integer"))?
        ),
        Arg::Float => json!(
            need()?
                .parse::<f64>()
                .map_err(|_| bad("expects a number"))?
        ),
        Arg::Pair => {
            let t = need()?;
            let parts: Vec<&str> = t.split(',').map(str::trim).collect();
            let nums: std::result::Result<Vec<i64>, _> =
                parts.iter().map(|p| p.parse::<i64>()).collect();
            match nums {
                Ok(v) if v.len() == 2 => json!([v[0], v[1]]),
                _ => return Err(bad("expects two integers `wl,wr` (e.g. -1,0)")),
            }
        }
        Arg::List => json!(need()?.split(',').map(str::trim).collect::<Vec<_>>()),
    })
}

fn read_json_file(path: &str) -> Result<String> {
    std::fs::read_to_string(path).map_err(|source| Error::Io {
        path: path.to_owned(),
        source,
    })
}

/// Parses the command's arguments (everything after `eligibility`).
pub fn parse_args(args: &[String]) -> Result<EligibilityArgs> {
    let mut json_out = false;
    let mut req = Map::new();
    let mut env = Map::new();
    let mut policy = Map::new();
    let mut disabled: Vec<Value> = Vec::new();
    let mut request_file = None;
    let mut env_file = None;
    let mut i = 0;
    while i < args.len() {
        let a = args[i].as_str();
        let Some(flag) = a.strip_prefix("--") else {
            return Err(Error::bad_param(
                a,
                "unexpected argument (flags start with --)",
            ));
        };
        let (flag, inline) = match flag.split_once('=') {
            Some((f, v)) => (f, Some(v)),
            None => (flag, None),
        };
        let next = || inline.or_else(|| args.get(i + 1).map(String::as_str));
        let takes_value = |kind: Arg| !matches!(kind, Arg::Switch) && inline.is_none();
        if flag == "json" {
            json_out = true;
        } else if flag == "allow-fp8-emulation" {
            policy.insert("allow_fp8_emulation".into(), Value::Bool(true));
        } else if flag == "request" || flag == "env" || flag == "disable" {
            let v = next().ok_or_else(|| Error::bad_param(format!("--{flag}"), "needs a value"))?;
            match flag {
                "request" => request_file = Some(v.to_owned()),
                "env" => env_file = Some(v.to_owned()),
                _ => disabled.extend(v.split(',').map(|s| Value::String(s.trim().to_owned()))),
            }
            if inline.is_none() {
                i += 1;
            }
        } else if let Some(&(_, field, kind)) = REQUEST_FLAGS.iter().find(|(f, ..)| *f == flag) {
            req.insert(field.into(), value(kind, flag, next())?);
            if takes_value(kind) {
                i += 1;
            }
        } else if let Some(&(_, field, kind)) = ENV_FLAGS.iter().find(|(f, ..)| *f == flag) {
            env.insert(field.into(), value(kind, flag, next())?);
            if takes_value(kind) {
                i += 1;
            }
        } else {
            return Err(Error::bad_param(a, "unknown option"));
        }
        i += 1;
    }
    if !disabled.is_empty() {
        policy.insert("disabled".into(), Value::Array(disabled));
    }
    if !policy.is_empty() {
        env.insert("policy".into(), Value::Object(policy));
    }
    let from_flags = |map: Map<String, Value>, what: &str| {
        serde_json::to_string(&Value::Object(map))
            .map_err(|e| Error::Internal(format!("{what} flags: {e}")))
    };
    let mut request = match request_file {
        Some(p) => RequestSpec::from_json(&read_json_file(&p)?)?,
        None => RequestSpec::default(),
    };
    request = request.overlay(RequestSpec::from_json(&from_flags(req, "request")?)?);
    let mut env_spec = match env_file {
        Some(p) => EnvironmentSpec::from_json(&read_json_file(&p)?)?,
        None => EnvironmentSpec::default(),
    };
    env_spec = env_spec.overlay(EnvironmentSpec::from_json(&from_flags(
        env,
        "environment",
    )?)?);
    Ok(EligibilityArgs {
        json: json_out,
        request,
        env: env_spec,
    })
}

/// The readable report: a summary of request and environment, one block per candidate (each
/// failed rule with its layer, message, nearest clause, unmet conditions and unblock hint), the
/// preference order and the selection.
pub fn render_table(v: &Verdicts) -> String {
    let r = &v.facts.request;
    let e = &v.environment;
    let mut s = String::new();
    let window = v.facts.window;
    s.push_str(&format!(
        "request:     {} {} mask={} window=({},{}) bias={} softmax={} dropout={} b={} h={}/{} s={}/{} d={}/{} {}{}{}{}\n",
        r.q_dtype,
        r.layout,
        r.mask,
        window.0,
        window.1,
        r.bias,
        r.softmax,
        r.dropout,
        r.b,
        r.h_q,
        r.h_kv,
        r.s_q,
        r.s_kv,
        r.d_qk,
        r.d_v,
        if r.training { "training" } else { "inference" },
        if r.deterministic { " deterministic" } else { "" },
        if r.return_max_logit { " max-logit" } else { "" },
        if r.cuda_graph { " cuda-graph" } else { "" },
    ));
    s.push_str(&format!(
        "environment: SM{} cuDNN {} engines=[{}] ({})\n",
        e.sm,
        e.cudnn.map_or("none".to_owned(), |c| c.to_string()),
        e.engines.join(", "),
        serde_json::to_value(e.origin)
            .ok()
            .and_then(|x| x.as_str().map(str::to_owned))
            .unwrap_or_default()
    ));
    let te = match v.te_backend {
        Some(b) => serde_json::to_value(b)
            .ok()
            .and_then(|x| x.as_str().map(str::to_owned))
            .unwrap_or_default(),
        None => "n/a (no cuDNN)".to_owned(),
    };
    s.push_str(&format!("TE rule:     {te}\n"));
    for n in &v.facts.notes {
        s.push_str(&format!("note:        {n}\n"));
    }
    s.push('\n');
    let width = v
        .verdicts
        .iter()
        .map(|x| x.target.name().len())
        .max()
        .unwrap_or(0);
    for verdict in &v.verdicts {
        let status = if verdict.eligible {
            "ELIGIBLE"
        } else {
            "rejected"
        };
        s.push_str(&format!(
            "{:width$}  {status}\n",
            verdict.target.name(),
            width = width
        ));
        for rej in &verdict.rejections {
            s.push_str(&format!(
                "    [{}] ({}) {}\n",
                rej.rule,
                rej.layer.name(),
                rej.message
            ));
            if let Some(c) = rej.nearest_clause {
                s.push_str(&format!("        nearest clause: {c}\n"));
            }
            for a in &rej.failing {
                s.push_str(&format!("        unmet: {}  [{}]\n", a.expected, a.actual));
            }
            if let Some(u) = &rej.unblock {
                s.push_str(&format!("        => {}\n", u.text()));
            }
        }
        for n in &verdict.notes {
            s.push_str(&format!("    note: {n}\n"));
        }
    }
    let order: Vec<&str> = v.order.iter().map(|t| t.name()).collect();
    s.push_str(&format!("\norder:       [{}]\n", order.join(", ")));
    s.push_str(&format!(
        "selected:    {}\n",
        v.selected.map_or("none", |t| t.name())
    ));
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    fn args(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_owned).collect()
    }

    #[test]
    fn flags_build_request_and_environment() {
        let a = parse_args(&args(
            "--dtype bf16 --layout bshd --b 2 --sq 4096 --skv 4096 --hq 16 --hkv 16 --dqk 128 \
             --dv 128 --mask causal --window=-1,0 --training --arch 90 --cudnn 9.19.0 --json \
             --disable cudnn.fp8 --engines all",
        ))
        .unwrap();
        assert!(a.json);
        let r = a.request.into_request().unwrap();
        assert_eq!((r.h_q, r.s_kv, r.d_v), (16, 4096, 128));
        assert!(r.training);
        assert_eq!(r.window, Some((-1, 0)));
        let e = a.env.resolve().unwrap();
        assert_eq!(e.sm, 90);
        assert_eq!(e.cudnn.unwrap().to_string(), "9.19.0");
        assert_eq!(e.policy.disabled, vec!["cudnn.fp8".to_owned()]);
        assert_eq!(e.engines.len(), super::super::engines::ROWS.len());
    }

    #[test]
    fn bad_flags_are_named() {
        for (line, needle) in [
            ("--hq x", "--hq"),
            ("--window 1", "--window"),
            ("--frobnicate", "--frobnicate"),
            ("stray", "stray"),
            ("--dtype", "--dtype"),
        ] {
            let err = parse_args(&args(line)).unwrap_err().to_string();
            assert!(err.contains(needle), "{line}: {err}");
        }
    }
}
