//! Rendering verdicts: the JSON document of the C API and `dnnplan eligibility --json` (schema
//! `dnnplan.attention_eligibility/1`, documented on `dnnp_attention_eligibility`), and TE-style
//! text lines (`Disabling <target>: [RULE] message (nearest clause "..."; hint)`).

use std::fmt;

use serde_json::{Value, json};

use super::evaluate::Verdicts;

/// Schema tag of the JSON document.
pub const SCHEMA: &str = "dnnplan.attention_eligibility/1";

impl Verdicts {
    /// The JSON document (see `dnnp_attention_eligibility` for the schema).
    pub fn to_json(&self) -> Value {
        let mut v = serde_json::to_value(self).unwrap_or(Value::Null);
        if let Value::Object(map) = &mut v {
            let mut out = serde_json::Map::new();
            out.insert("schema".to_owned(), json!(SCHEMA));
            out.append(map);
            return Value::Object(out);
        }
        v
    }
}

impl fmt::Display for Verdicts {
    /// One line per candidate, TE-style: `Disabling <target>: [RULE] message (...)` per failed
    /// rule, `Available <target>` for eligible ones, then the order and selection.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for note in &self.facts.notes {
            writeln!(f, "Note: {note}")?;
        }
        for v in &self.verdicts {
            if v.eligible {
                writeln!(f, "Available {}", v.target.name())?;
            }
            for r in &v.rejections {
                let mut extra = Vec::new();
                if let Some(c) = r.nearest_clause {
                    extra.push(format!("nearest clause \"{c}\""));
                }
                if let Some(u) = &r.unblock {
                    extra.push(u.text());
                }
                let tail = if extra.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", extra.join("; "))
                };
                writeln!(
                    f,
                    "Disabling {}: [{}] {}{}",
                    v.target.name(),
                    r.rule,
                    r.message,
                    tail
                )?;
            }
            for n in &v.notes {
                writeln!(f, "Note on {}: {n}", v.target.name())?;
            }
        }
        let order: Vec<&str> = self.order.iter().map(|t| t.name()).collect();
        writeln!(f, "Available backends = [{}]", order.join(", "))?;
        match self.selected {
            Some(t) => write!(f, "Selected backend = {}", t.name()),
            None => write!(f, "Selected backend = none"),
        }
    }
}
