//! The op catalogue as JSON, generated from the tables (`dnnplan ops --json`).

use serde_json::{Value, json};

use super::op::{OpKind, OpSpec, Rule};

fn op_json(s: &OpSpec) -> Value {
    json!({
        "name": s.name,
        "node_type": s.node_type.name(),
        "family": s.family.name(),
        "pointwise_mode": s.pointwise_mode,
        "backend_lowering": s.backend_lowering,
        "min_cudnn": s.min_cudnn,
        "doc": s.doc,
        "inputs": s.inputs.iter().map(|p| json!({
            "name": p.name, "required": p.required, "list": p.list,
        })).collect::<Vec<_>>(),
        "outputs": s.outputs.iter().map(|o| json!({
            "name": o.name,
            "tensor_suffix": o.suffix,
            "caller_provided": o.caller_provided,
            "present_when": if o.when.is_empty() { Value::Null } else {
                Value::String(o.when.iter().map(|c| c.describe()).collect::<Vec<_>>().join(" and "))
            },
            "shape": format!("{:?}", o.shape),
            "dtype": format!("{:?}", o.dtype),
        })).collect::<Vec<_>>(),
        "attributes": s.attrs.iter().map(|a| json!({
            "name": a.name,
            "type": a.ty.name(),
            "values": match a.ty { super::attr::AttrType::Enum(v) => json!(v), _ => Value::Null },
            "default": a.default.as_ref().map(|d| d.to_json()),
            "doc": a.doc,
        })).collect::<Vec<_>>(),
        "rules": s.rules.iter().map(Rule::describe).collect::<Vec<_>>(),
    })
}

/// Every op of the catalogue as a JSON array.
pub fn catalogue_json() -> Value {
    Value::Array(OpKind::all().map(|k| op_json(k.spec())).collect())
}

/// One op's catalogue entry as JSON, `None` for an unknown name.
pub fn op_catalogue_json(name: &str) -> Option<Value> {
    OpKind::from_name(name).map(|k| op_json(k.spec()))
}

fn port_list(s: &OpSpec) -> String {
    s.inputs
        .iter()
        .map(|p| {
            let mut n = p.name.to_owned();
            if p.list {
                n.push_str("[]");
            }
            if !p.required {
                n.push('?');
            }
            n
        })
        .collect::<Vec<_>>()
        .join(", ")
}

fn output_list(s: &OpSpec) -> String {
    s.outputs
        .iter()
        .map(|o| {
            if o.caller_provided {
                format!("{}(caller)", o.name)
            } else if o.when.is_empty() {
                o.name.to_owned()
            } else {
                format!("{}?", o.name)
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// The catalogue as text: one line per op (`name  node_type  family  inputs -> outputs`), or the
/// full entry of one op when `name` is given. `None` for an unknown name.
pub fn catalogue_text(name: Option<&str>) -> Option<String> {
    use std::fmt::Write;
    let mut out = String::new();
    match name {
        None => {
            let _ = writeln!(
                out,
                "{} ops (`?` optional or conditional, `[]` list port, `(caller)` out-kwarg; `dnnplan ops <name>` for details)",
                OpKind::all().count()
            );
            for k in OpKind::all() {
                let s = k.spec();
                let _ = writeln!(
                    out,
                    "{:<28} {:<22} {:<16} {}{} -> {}",
                    s.name,
                    s.node_type.name(),
                    s.family.name(),
                    if s.backend_lowering {
                        ""
                    } else {
                        "[python-only] "
                    },
                    port_list(s),
                    output_list(s)
                );
            }
        }
        Some(n) => {
            let s = OpKind::from_name(n)?.spec();
            let _ = writeln!(
                out,
                "{}  ({}, {})",
                s.name,
                s.node_type.name(),
                s.family.name()
            );
            let _ = writeln!(out, "  {}", s.doc);
            if let Some(m) = s.pointwise_mode {
                let _ = writeln!(out, "  pointwise mode: {m}");
            }
            let lowering = if s.backend_lowering {
                "cuDNN backend lowering"
            } else {
                "python-only (no backend lowering)"
            };
            let gate = s
                .min_cudnn
                .map(|v| format!(" (cuDNN >= {v})"))
                .unwrap_or_default();
            let _ = writeln!(out, "  {lowering}{gate}");
            let _ = writeln!(out, "  inputs:");
            for p in &s.inputs {
                let req = if p.required { "required" } else { "optional" };
                let list = if p.list {
                    ", list: <name>_0, <name>_1, ..."
                } else {
                    ""
                };
                let _ = writeln!(out, "    {:<28} {req}{list}", p.name);
            }
            let _ = writeln!(out, "  outputs:");
            for o in &s.outputs {
                let when = if o.caller_provided {
                    "passed by the caller".to_owned()
                } else if o.when.is_empty() {
                    "always".to_owned()
                } else {
                    format!(
                        "when {}",
                        o.when
                            .iter()
                            .map(|c| c.describe())
                            .collect::<Vec<_>>()
                            .join(" and ")
                    )
                };
                let _ = writeln!(
                    out,
                    "    {:<28} {when}; shape {:?}; dtype {:?}",
                    o.name, o.shape, o.dtype
                );
            }
            if !s.attrs.is_empty() {
                let _ = writeln!(out, "  attributes:");
            }
            for a in &s.attrs {
                let ty = match a.ty {
                    super::attr::AttrType::Enum(v) => format!("enum {{{}}}", v.join(", ")),
                    t => t.name().to_owned(),
                };
                let def = a
                    .default
                    .as_ref()
                    .map(|d| format!(" = {}", d.to_json()))
                    .unwrap_or_default();
                let _ = writeln!(out, "    {:<28} {ty}{def}  {}", a.name, a.doc);
            }
            if !s.rules.is_empty() {
                let _ = writeln!(out, "  rules:");
            }
            for r in &s.rules {
                let _ = writeln!(out, "    {}", r.describe());
            }
        }
    }
    Some(out)
}
