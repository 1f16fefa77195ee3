//! The op catalogue as JSON, generated from the tables (`dnnplan ops --json`).

use serde_json::{Value, json};

use super::op::{OpKind, OpSpec};

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
        "rules": s.rules.iter().map(|r| format!("{r:?}")).collect::<Vec<_>>(),
    })
}

/// Every op of the catalogue as a JSON array.
pub fn catalogue_json() -> Value {
    Value::Array(OpKind::all().map(|k| op_json(k.spec())).collect())
}
