//! Typed node attributes: the value type ([`AttrValue`]) and the declared type of an attribute in
//! the op tables ([`AttrType`]), with the conversion rules between them (an integer is accepted
//! where a float is declared; enum values are stored by reference name and checked against the
//! table's list).

use serde::{Deserialize, Serialize};

/// A node attribute value.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum AttrValue {
    /// Boolean.
    Bool(bool),
    /// Integer.
    Int(i64),
    /// Float.
    Float(f64),
    /// String (also enum values, by reference name).
    Str(String),
    /// Integer list.
    Ints(Vec<i64>),
    /// Float list.
    Floats(Vec<f64>),
}

/// Declared type of an attribute.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum AttrType {
    /// Boolean.
    Bool,
    /// Integer.
    Int,
    /// Float (integers accepted and widened).
    Float,
    /// Free string.
    Str,
    /// Integer list.
    Ints,
    /// Float list.
    Floats,
    /// One of the listed reference names.
    Enum(&'static [&'static str]),
}

impl AttrType {
    /// Short name for catalogues and messages.
    pub fn name(&self) -> &'static str {
        match self {
            AttrType::Bool => "bool",
            AttrType::Int => "int",
            AttrType::Float => "float",
            AttrType::Str => "string",
            AttrType::Ints => "int[]",
            AttrType::Floats => "float[]",
            AttrType::Enum(_) => "enum",
        }
    }

    /// Converts `value` to this type (int → float widening, int list → float list), or explains
    /// why it does not fit.
    pub fn coerce(&self, value: AttrValue) -> Result<AttrValue, String> {
        match (self, value) {
            (AttrType::Bool, v @ AttrValue::Bool(_)) => Ok(v),
            (AttrType::Int, v @ AttrValue::Int(_)) => Ok(v),
            (AttrType::Float, v @ AttrValue::Float(_)) => Ok(v),
            (AttrType::Float, AttrValue::Int(i)) => Ok(AttrValue::Float(i as f64)),
            (AttrType::Str, v @ AttrValue::Str(_)) => Ok(v),
            (AttrType::Ints, v @ AttrValue::Ints(_)) => Ok(v),
            (AttrType::Ints, AttrValue::Int(i)) => Ok(AttrValue::Ints(vec![i])),
            (AttrType::Floats, v @ AttrValue::Floats(_)) => Ok(v),
            (AttrType::Floats, AttrValue::Ints(v)) => {
                Ok(AttrValue::Floats(v.into_iter().map(|i| i as f64).collect()))
            }
            (AttrType::Enum(allowed), AttrValue::Str(s)) => {
                if allowed.contains(&s.as_str()) {
                    Ok(AttrValue::Str(s))
                } else {
                    Err(format!("`{s}` is not one of {}", allowed.join(", ")))
                }
            }
            (t, v) => Err(format!("expects {} but got {}", t.name(), v.type_name())),
        }
    }
}

impl AttrValue {
    /// Short name of the value's type.
    pub fn type_name(&self) -> &'static str {
        match self {
            AttrValue::Bool(_) => "bool",
            AttrValue::Int(_) => "int",
            AttrValue::Float(_) => "float",
            AttrValue::Str(_) => "string",
            AttrValue::Ints(_) => "int[]",
            AttrValue::Floats(_) => "float[]",
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self {
            AttrValue::Bool(b) => Some(*b),
            _ => None,
        }
    }

    /// The integer, if this is one.
    pub fn as_int(&self) -> Option<i64> {
        match self {
            AttrValue::Int(i) => Some(*i),
            _ => None,
        }
    }

    /// The float (integers widened), if numeric.
    pub fn as_float(&self) -> Option<f64> {
        match self {
            AttrValue::Float(f) => Some(*f),
            AttrValue::Int(i) => Some(*i as f64),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            AttrValue::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The integer list, if this is one.
    pub fn as_ints(&self) -> Option<&[i64]> {
        match self {
            AttrValue::Ints(v) => Some(v),
            _ => None,
        }
    }

    /// The float list, if this is one.
    pub fn as_floats(&self) -> Option<&[f64]> {
        match self {
            AttrValue::Floats(v) => Some(v),
            _ => None,
        }
    }

    /// The value as JSON.
    pub fn to_json(&self) -> serde_json::Value {
        serde_json::to_value(self).unwrap_or(serde_json::Value::Null)
    }
}
