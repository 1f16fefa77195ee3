//! Typed node attributes: the value type ([`AttrValue`]) and the declared type of an attribute in
//! the op tables ([`AttrType`]), with the conversion rules between them (an integer is accepted
//! where a float is declared; enum values are stored by reference name and checked against the
//! table's list).

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// A node attribute value. In JSON: booleans, numbers, strings and arrays as themselves; a
/// non-finite float is written as the string `"Infinity"`, `"-Infinity"` or `"NaN"` (JSON has no
/// such numbers), which float-typed attributes read back as the float.
#[derive(Clone, Debug, PartialEq)]
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

/// Parses the JSON spelling of a non-finite float.
pub fn nonfinite_from_str(s: &str) -> Option<f64> {
    match s {
        "Infinity" | "inf" => Some(f64::INFINITY),
        "-Infinity" | "-inf" => Some(f64::NEG_INFINITY),
        "NaN" | "nan" => Some(f64::NAN),
        _ => None,
    }
}

/// A float as JSON (non-finite values as strings).
pub fn float_to_json(f: f64) -> Value {
    if f.is_finite() {
        serde_json::Number::from_f64(f).map_or(Value::Null, Value::Number)
    } else if f.is_nan() {
        Value::String("NaN".into())
    } else if f > 0.0 {
        Value::String("Infinity".into())
    } else {
        Value::String("-Infinity".into())
    }
}

fn json_float(v: &Value) -> Option<f64> {
    match v {
        Value::Number(n) => n.as_f64(),
        Value::String(s) => nonfinite_from_str(s),
        _ => None,
    }
}

impl Serialize for AttrValue {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for AttrValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        AttrValue::from_json(&v)
            .ok_or_else(|| serde::de::Error::custom(format!("`{v}` is not an attribute value")))
    }
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
            (AttrType::Float, AttrValue::Str(s)) if nonfinite_from_str(&s).is_some() => {
                Ok(AttrValue::Float(nonfinite_from_str(&s).unwrap_or(f64::NAN)))
            }
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

    /// The value as JSON (non-finite floats as strings).
    pub fn to_json(&self) -> Value {
        match self {
            AttrValue::Bool(b) => Value::Bool(*b),
            AttrValue::Int(i) => Value::from(*i),
            AttrValue::Float(f) => float_to_json(*f),
            AttrValue::Str(s) => Value::String(s.clone()),
            AttrValue::Ints(v) => Value::Array(v.iter().map(|i| Value::from(*i)).collect()),
            AttrValue::Floats(v) => Value::Array(v.iter().map(|f| float_to_json(*f)).collect()),
        }
    }

    /// Reads a JSON value: integers as `Int`, other numbers as `Float`, arrays of integers as
    /// `Ints`, other numeric arrays (non-finite strings allowed) as `Floats`.
    pub fn from_json(v: &Value) -> Option<AttrValue> {
        Some(match v {
            Value::Bool(b) => AttrValue::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) if !n.is_f64() => AttrValue::Int(i),
                _ => AttrValue::Float(n.as_f64()?),
            },
            Value::String(s) => AttrValue::Str(s.clone()),
            Value::Array(items) => {
                let ints: Option<Vec<i64>> = items
                    .iter()
                    .map(|x| {
                        x.as_number()
                            .filter(|n| !n.is_f64())
                            .and_then(|n| n.as_i64())
                    })
                    .collect();
                match ints {
                    Some(v) => AttrValue::Ints(v),
                    None => AttrValue::Floats(items.iter().map(json_float).collect::<Option<_>>()?),
                }
            }
            _ => return None,
        })
    }
}
