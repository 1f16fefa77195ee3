//! Element data types (`DataType_t` of the reference, declaration order) and their mapping onto the
//! backend's `cudnnDataType_t` values. `NotSet` is the "fill from the graph context" marker and is
//! written as JSON `null`; every other value is written by its reference name (`"HALF"`, `"INT8x4"`).

use serde::{Deserialize, Deserializer, Serialize, Serializer};

macro_rules! data_types {
    ($($variant:ident = $name:literal, $bits:expr, $backend:expr;)*) => {
        /// Element data type of a tensor or of a node's computation (reference `DataType_t`).
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
        #[repr(u32)]
        pub enum DataType {
            /// Not set: filled from the graph context at validation.
            #[default]
            NotSet = 0,
            $(
                #[doc = concat!("`", $name, "`")]
                $variant,
            )*
        }

        impl DataType {
            /// Every value in declaration order (index = the C value `DNNP_DATA_TYPE_*`).
            pub const ALL: &'static [DataType] = &[DataType::NotSet, $(DataType::$variant,)*];

            /// The reference name (`"NOT_SET"` for [`DataType::NotSet`]).
            pub fn name(self) -> &'static str {
                match self {
                    DataType::NotSet => "NOT_SET",
                    $(DataType::$variant => $name,)*
                }
            }

            /// Size of one element in bits (0 for `NotSet`).
            pub fn bits(self) -> u32 {
                match self {
                    DataType::NotSet => 0,
                    $(DataType::$variant => $bits,)*
                }
            }

            /// The backend's `cudnnDataType_t` value, `None` when the backend has none.
            pub fn backend_value(self) -> Option<i64> {
                match self {
                    DataType::NotSet => None,
                    $(DataType::$variant => $backend,)*
                }
            }
        }
    };
}

data_types! {
    Float = "FLOAT", 32, Some(0);
    Double = "DOUBLE", 64, Some(1);
    Half = "HALF", 16, Some(2);
    Int8 = "INT8", 8, Some(3);
    Int32 = "INT32", 32, Some(4);
    Int8x4 = "INT8x4", 32, Some(5);
    Uint8 = "UINT8", 8, Some(6);
    Uint8x4 = "UINT8x4", 32, Some(7);
    Int8x32 = "INT8x32", 256, Some(8);
    Bfloat16 = "BFLOAT16", 16, Some(9);
    Int64 = "INT64", 64, Some(10);
    Boolean = "BOOLEAN", 1, Some(11);
    ByteBoolean = "BYTE_BOOLEAN", 8, None;
    Fp8E4m3 = "FP8_E4M3", 8, Some(12);
    Fp8E5m2 = "FP8_E5M2", 8, Some(13);
    FastFloatForFp8 = "FAST_FLOAT_FOR_FP8", 32, Some(14);
    Fp8E8m0 = "FP8_E8M0", 8, Some(15);
    Fp8E5m3 = "FP8_E5M3", 8, None;
    Fp4E2m1 = "FP4_E2M1", 4, Some(16);
    Int4 = "INT4", 4, Some(17);
    ComplexFp32 = "COMPLEX_FP32", 64, None;
    ComplexFp64 = "COMPLEX_FP64", 128, None;
}

impl DataType {
    /// Parses a reference name (case-sensitive, `"NOT_SET"` accepted).
    pub fn from_name(name: &str) -> Option<DataType> {
        DataType::ALL.iter().copied().find(|d| d.name() == name)
    }

    /// The value for a C `dnnp_data_type_t` (its declaration index).
    pub fn from_c(value: u32) -> Option<DataType> {
        DataType::ALL.get(value as usize).copied()
    }

    /// The C `dnnp_data_type_t` value (declaration index).
    pub fn to_c(self) -> u32 {
        self as u32
    }

    /// True for [`DataType::NotSet`].
    pub fn is_set(self) -> bool {
        self != DataType::NotSet
    }

    /// Bytes per element rounded up (sub-byte types count as 1).
    pub fn bytes(self) -> usize {
        (self.bits() as usize).div_ceil(8)
    }

    /// True for the 8-bit float formats (E4M3, E5M2, E8M0, E5M3).
    pub fn is_fp8(self) -> bool {
        matches!(
            self,
            DataType::Fp8E4m3 | DataType::Fp8E5m2 | DataType::Fp8E8m0 | DataType::Fp8E5m3
        )
    }

    /// True for integer (and boolean) element types.
    pub fn is_integer(self) -> bool {
        matches!(
            self,
            DataType::Int8
                | DataType::Int32
                | DataType::Int8x4
                | DataType::Uint8
                | DataType::Uint8x4
                | DataType::Int8x32
                | DataType::Int64
                | DataType::Boolean
                | DataType::ByteBoolean
                | DataType::Int4
        )
    }
}

impl std::fmt::Display for DataType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

impl Serialize for DataType {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            DataType::NotSet => s.serialize_none(),
            d => s.serialize_str(d.name()),
        }
    }
}

impl<'de> Deserialize<'de> for DataType {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match Option::<String>::deserialize(d)? {
            None => Ok(DataType::NotSet),
            Some(name) => DataType::from_name(&name)
                .ok_or_else(|| serde::de::Error::custom(format!("unknown data type `{name}`"))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip_and_c_values_are_declaration_order() {
        assert_eq!(DataType::ALL.len(), 23);
        for (i, d) in DataType::ALL.iter().enumerate() {
            assert_eq!(DataType::from_name(d.name()), Some(*d));
            assert_eq!(DataType::from_c(i as u32), Some(*d));
        }
        assert_eq!(DataType::Bfloat16.backend_value(), Some(9));
        assert_eq!(DataType::Fp8E8m0.backend_value(), Some(15));
        assert_eq!(serde_json::to_string(&DataType::NotSet).unwrap(), "null");
        assert_eq!(
            serde_json::to_string(&DataType::Int8x4).unwrap(),
            "\"INT8x4\""
        );
    }
}
