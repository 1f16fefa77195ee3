//! Tensors of the IR: identity (uid), logical shape and element strides, element type, and the
//! flags that say how a tensor travels (virtual intermediate, host scalar passed by value, fused
//! scalar value, ragged offsets for packed layouts, physical reordering).
//!
//! A [`Tensor`] is plain data; the [`super::Graph`] that owns it enforces uid uniqueness and the
//! lifecycle. [`Tensor::check`] holds the tensor validity rules of the reference.

use serde::{Deserialize, Serialize};

use super::dtype::DataType;
use super::enums::{ScalarKind, TensorReordering};

/// A fused scalar value owned by the graph (reference `pass_by_value` variant).
#[derive(Clone, Copy, Debug, PartialEq, Serialize, Deserialize)]
pub enum ScalarValue {
    /// 64-bit integer.
    #[serde(rename = "INT64")]
    Int64(i64),
    /// 32-bit integer.
    #[serde(rename = "INT32")]
    Int32(i32),
    /// IEEE half (stored widened; every half is exact in f32).
    #[serde(rename = "HALF")]
    Half(#[serde(with = "f32_json")] f32),
    /// IEEE single.
    #[serde(rename = "FLOAT")]
    Float(#[serde(with = "f32_json")] f32),
    /// IEEE double.
    #[serde(rename = "DOUBLE")]
    Double(#[serde(with = "f64_json")] f64),
    /// bfloat16 (stored widened; every bf16 is exact in f32).
    #[serde(rename = "BFLOAT16")]
    Bfloat16(#[serde(with = "f32_json")] f32),
}

/// Floats in JSON with non-finite values spelled as strings (see [`super::attr::float_to_json`]).
mod f64_json {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
        super::super::attr::float_to_json(*v).serialize(s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f64, D::Error> {
        let v = serde_json::Value::deserialize(d)?;
        match &v {
            serde_json::Value::Number(n) => n.as_f64(),
            serde_json::Value::String(s) => super::super::attr::nonfinite_from_str(s),
            _ => None,
        }
        .ok_or_else(|| serde::de::Error::custom(format!("`{v}` is not a float")))
    }
}

/// f32 through [`f64_json`] (every f32 is exact in f64).
mod f32_json {
    use serde::{Deserializer, Serializer};

    pub fn serialize<S: Serializer>(v: &f32, s: S) -> Result<S::Ok, S::Error> {
        super::f64_json::serialize(&(*v as f64), s)
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<f32, D::Error> {
        super::f64_json::deserialize(d).map(|v| v as f32)
    }
}

impl ScalarValue {
    /// The data type this value has.
    pub fn data_type(&self) -> DataType {
        match self {
            ScalarValue::Int64(_) => DataType::Int64,
            ScalarValue::Int32(_) => DataType::Int32,
            ScalarValue::Half(_) => DataType::Half,
            ScalarValue::Float(_) => DataType::Float,
            ScalarValue::Double(_) => DataType::Double,
            ScalarValue::Bfloat16(_) => DataType::Bfloat16,
        }
    }

    /// The value as f64 (lossless for every variant but very large i64).
    pub fn as_f64(&self) -> f64 {
        match *self {
            ScalarValue::Int64(v) => v as f64,
            ScalarValue::Int32(v) => v as f64,
            ScalarValue::Half(v) | ScalarValue::Float(v) | ScalarValue::Bfloat16(v) => v as f64,
            ScalarValue::Double(v) => v,
        }
    }

    /// The little-endian bytes of the value in its own type (what a variant pack points at).
    pub fn to_le_bytes(&self) -> Vec<u8> {
        match *self {
            ScalarValue::Int64(v) => v.to_le_bytes().to_vec(),
            ScalarValue::Int32(v) => v.to_le_bytes().to_vec(),
            ScalarValue::Half(v) => half::f16::from_f32(v).to_le_bytes().to_vec(),
            ScalarValue::Float(v) => v.to_le_bytes().to_vec(),
            ScalarValue::Double(v) => v.to_le_bytes().to_vec(),
            ScalarValue::Bfloat16(v) => half::bf16::from_f32(v).to_le_bytes().to_vec(),
        }
    }
}

fn default_multiplier() -> i64 {
    1
}
fn default_alignment() -> i64 {
    16
}
fn is_one(v: &i64) -> bool {
    *v == 1
}
fn is_sixteen(v: &i64) -> bool {
    *v == 16
}
fn is_false(v: &bool) -> bool {
    !*v
}

/// One tensor of a graph.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct Tensor {
    /// Identity and variant-pack key; unique within the graph.
    pub uid: i64,
    /// True when the caller chose the uid (it wins collisions with automatic uids).
    #[serde(default, skip_serializing_if = "is_false")]
    pub uid_assigned: bool,
    /// Debug label (duplicates are legal).
    pub name: String,
    /// Logical shape (every extent > 0 once validated).
    pub dims: Vec<i64>,
    /// Element strides, same rank as `dims`.
    pub strides: Vec<i64>,
    /// True when the caller declared `dims` (shape inference leaves them alone).
    #[serde(default, skip_serializing_if = "is_false")]
    pub dims_assigned: bool,
    /// True when the caller declared `strides`.
    #[serde(default, skip_serializing_if = "is_false")]
    pub strides_assigned: bool,
    /// Element type; `NotSet` is filled from the graph context at validation.
    pub data_type: DataType,
    /// Intermediate tensor: never in the variant pack.
    pub is_virtual: bool,
    /// Host scalar (the caller passes a host pointer unless a value is fused).
    pub is_pass_by_value: bool,
    /// Fused scalar value owned by the graph.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pass_by_value: Option<ScalarValue>,
    /// Delivery of the fused value (runtime parameter or compile-time constant).
    #[serde(default, skip_serializing_if = "is_runtime")]
    pub scalar_kind: ScalarKind,
    /// Physical reordering.
    #[serde(default, skip_serializing_if = "is_no_reordering")]
    pub reordering_type: TensorReordering,
    /// Uid of the per-batch element-offset tensor of a packed (THD) layout.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ragged_offset_uid: Option<i64>,
    /// Unit, in elements, of the ragged offsets (> 0; ≠ 1 requires a ragged offset).
    #[serde(default = "default_multiplier", skip_serializing_if = "is_one")]
    pub ragged_offset_multiplier: i64,
    /// Pointer alignment in bytes the backend may assume.
    #[serde(default = "default_alignment", skip_serializing_if = "is_sixteen")]
    pub alignment: i64,
}

fn is_runtime(k: &ScalarKind) -> bool {
    *k == ScalarKind::RuntimeParam
}
fn is_no_reordering(r: &TensorReordering) -> bool {
    *r == TensorReordering::None
}

/// The product of `dims`, or `None` when it does not fit in 64 bits.
pub fn checked_element_count(dims: &[i64]) -> Option<i64> {
    dims.iter().try_fold(1i64, |n, &d| n.checked_mul(d))
}

/// The product of `dims`, saturating at `i64::MAX` (for counts whose overflow a later check
/// refuses: [`checked_element_count`]).
pub fn saturating_element_count(dims: &[i64]) -> i64 {
    dims.iter().fold(1i64, |n, &d| n.saturating_mul(d))
}

/// The last element's offset in elements, `Σ (dims[i] − 1) · strides[i]`, or `None` when it does
/// not fit in 64 bits.
pub fn checked_last_offset(dims: &[i64], strides: &[i64]) -> Option<i64> {
    dims.iter().zip(strides).try_fold(0i64, |off, (&d, &s)| {
        d.checked_sub(1)?.checked_mul(s)?.checked_add(off)
    })
}

/// Row-major (C-contiguous) element strides for `dims`, saturating at `i64::MAX`.
pub fn row_major_strides(dims: &[i64]) -> Vec<i64> {
    let mut strides = vec![1i64; dims.len()];
    for i in (0..dims.len().saturating_sub(1)).rev() {
        strides[i] = strides[i + 1].saturating_mul(dims[i + 1].max(1));
    }
    strides
}

impl Tensor {
    /// A non-virtual tensor with row-major strides and no uid yet (`uid` = -1).
    pub fn new(name: impl Into<String>, dims: &[i64], data_type: DataType) -> Tensor {
        Tensor {
            uid: -1,
            uid_assigned: false,
            name: name.into(),
            dims: dims.to_vec(),
            strides: row_major_strides(dims),
            dims_assigned: true,
            strides_assigned: false,
            data_type,
            is_virtual: false,
            is_pass_by_value: false,
            pass_by_value: None,
            scalar_kind: ScalarKind::RuntimeParam,
            reordering_type: TensorReordering::None,
            ragged_offset_uid: None,
            ragged_offset_multiplier: 1,
            alignment: 16,
        }
    }

    /// A virtual op-output tensor with unknown shape (filled by shape inference).
    pub fn virtual_output(name: impl Into<String>) -> Tensor {
        let mut t = Tensor::new(name, &[], DataType::NotSet);
        t.dims_assigned = false;
        t.is_virtual = true;
        t
    }

    /// A fused scalar (pass-by-value, dims = strides = `[1]`) holding `value`.
    pub fn scalar(name: impl Into<String>, value: ScalarValue) -> Tensor {
        let mut t = Tensor::new(name, &[1], value.data_type());
        t.is_pass_by_value = true;
        t.pass_by_value = Some(value);
        t
    }

    /// Builder-style: explicit strides (marks them caller-declared).
    pub fn with_strides(mut self, strides: &[i64]) -> Tensor {
        self.strides = strides.to_vec();
        self.strides_assigned = true;
        self
    }

    /// Builder-style: caller-chosen uid.
    pub fn with_uid(mut self, uid: i64) -> Tensor {
        self.uid = uid;
        self.uid_assigned = true;
        self
    }

    /// Builder-style: virtual flag.
    pub fn with_virtual(mut self, is_virtual: bool) -> Tensor {
        self.is_virtual = is_virtual;
        self
    }

    /// Rank (number of dims).
    pub fn rank(&self) -> usize {
        self.dims.len()
    }

    /// Number of elements (product of dims; 0 when unknown), saturating at `i64::MAX` (a
    /// validated tensor's count fits: [`Tensor::check_geometry`]).
    pub fn element_count(&self) -> i64 {
        if self.dims.is_empty() {
            0
        } else {
            saturating_element_count(&self.dims)
        }
    }

    /// The geometry rules alone: dims present, strides of their rank, every dim > 0, every
    /// stride >= 0, and the element count and the last element's offset representable in 64 bits
    /// (so that shape inference and every engine may multiply a tensor's dims and strides without
    /// overflow).
    pub fn check_geometry(&self) -> Result<(), String> {
        if self.dims.is_empty() {
            return Err("dims must not be empty".into());
        }
        if self.strides.len() != self.dims.len() {
            return Err(format!(
                "strides (rank {}) must have the rank of dims (rank {})",
                self.strides.len(),
                self.dims.len()
            ));
        }
        if let Some(d) = self.dims.iter().find(|d| **d <= 0) {
            return Err(format!("every dim must be > 0 (found {d})"));
        }
        if let Some(s) = self.strides.iter().find(|s| **s < 0) {
            return Err(format!("strides must be >= 0 (found {s})"));
        }
        if checked_element_count(&self.dims).is_none() {
            return Err(format!(
                "the element count (the product of dims {:?}) must fit in 64 bits",
                self.dims
            ));
        }
        if checked_last_offset(&self.dims, &self.strides).is_none() {
            return Err(format!(
                "the last element's offset (dims {:?}, strides {:?}) must fit in 64 bits",
                self.dims, self.strides
            ));
        }
        Ok(())
    }

    /// Whether shape inference may read this tensor as an input: it has no dims yet (inference
    /// reads none from it) or its geometry is valid ([`Tensor::check_geometry`]). Validation
    /// checks a node's inputs by this before it infers the node's outputs, and a node added to a
    /// graph gets inferred output dims only when every input passes.
    pub fn check_inference_input(&self) -> Result<(), String> {
        if self.dims.is_empty() {
            Ok(())
        } else {
            self.check_geometry()
        }
    }

    /// The tensor validity rules of the reference; `Err(rule)` names the broken rule.
    pub fn check(&self) -> Result<(), String> {
        self.check_geometry()?;
        if self.is_virtual && self.is_pass_by_value {
            return Err("a tensor cannot be both virtual and pass-by-value".into());
        }
        if self.pass_by_value.is_some() && !self.is_pass_by_value {
            return Err("a fused value requires pass-by-value".into());
        }
        if self.scalar_kind == ScalarKind::CompileTimeConst
            && (self.pass_by_value.is_none() || self.is_virtual)
        {
            return Err(
                "a compile-time constant needs a fused value and must not be virtual".into(),
            );
        }
        if self.ragged_offset_multiplier <= 0 {
            return Err("ragged_offset_multiplier must be > 0".into());
        }
        if self.ragged_offset_multiplier != 1 && self.ragged_offset_uid.is_none() {
            return Err("ragged_offset_multiplier != 1 requires a ragged offset".into());
        }
        if self.alignment <= 0 {
            return Err("alignment must be > 0".into());
        }
        if self.uid < 0 {
            return Err(format!("uid must be >= 0 (found {})", self.uid));
        }
        if !self.data_type.is_set() {
            return Err("data type is not set and the graph context gives none".into());
        }
        Ok(())
    }
}
