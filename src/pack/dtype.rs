//! Element types as the variant pack records them: the DLPack triple (type code, bits, lanes).
//!
//! The pack speaks DLPack's encoding because that is what producers hand us and what a kernel or
//! the backend reads back; the IR's data-type enum converts into it once per graph (see
//! [`crate::pack::TensorDecl`]). A type with no DLPack name is recorded with [`DlDtype::UNKNOWN`].

/// DLPack type codes (`DLDataTypeCode`, DLPack 1.3).
pub mod code {
    /// Signed integer.
    pub const INT: u8 = 0;
    /// Unsigned integer.
    pub const UINT: u8 = 1;
    /// IEEE float.
    pub const FLOAT: u8 = 2;
    /// Opaque handle.
    pub const OPAQUE_HANDLE: u8 = 3;
    /// bfloat16.
    pub const BFLOAT: u8 = 4;
    /// Complex.
    pub const COMPLEX: u8 = 5;
    /// Boolean.
    pub const BOOL: u8 = 6;
    /// FP8 E3M4.
    pub const FLOAT8_E3M4: u8 = 7;
    /// FP8 E4M3.
    pub const FLOAT8_E4M3: u8 = 8;
    /// FP8 E4M3 B11 FNUZ.
    pub const FLOAT8_E4M3B11FNUZ: u8 = 9;
    /// FP8 E4M3 FN (what frameworks call float8_e4m3fn).
    pub const FLOAT8_E4M3FN: u8 = 10;
    /// FP8 E4M3 FNUZ.
    pub const FLOAT8_E4M3FNUZ: u8 = 11;
    /// FP8 E5M2.
    pub const FLOAT8_E5M2: u8 = 12;
    /// FP8 E5M2 FNUZ.
    pub const FLOAT8_E5M2FNUZ: u8 = 13;
    /// FP8 E8M0 FNU (block-scale exponents).
    pub const FLOAT8_E8M0FNU: u8 = 14;
    /// FP6 E2M3 FN.
    pub const FLOAT6_E2M3FN: u8 = 15;
    /// FP6 E3M2 FN.
    pub const FLOAT6_E3M2FN: u8 = 16;
    /// FP4 E2M1 FN.
    pub const FLOAT4_E2M1FN: u8 = 17;
    /// Not a DLPack code: a type dnnplan cannot name (sub-byte integers and the like).
    pub const UNKNOWN: u8 = 255;
}

/// One element type: DLPack's `(code, bits, lanes)`, laid out exactly like `DLDataType`.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct DlDtype {
    /// Type code (see [`code`]).
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes per element (2 for packed fp4 storage slots).
    pub lanes: u16,
}

impl DlDtype {
    /// A type dnnplan cannot name; its width is unknown.
    pub const UNKNOWN: DlDtype = DlDtype::new(code::UNKNOWN, 0, 1);
    /// fp32.
    pub const F32: DlDtype = DlDtype::new(code::FLOAT, 32, 1);
    /// fp16.
    pub const F16: DlDtype = DlDtype::new(code::FLOAT, 16, 1);
    /// bf16.
    pub const BF16: DlDtype = DlDtype::new(code::BFLOAT, 16, 1);
    /// fp64.
    pub const F64: DlDtype = DlDtype::new(code::FLOAT, 64, 1);
    /// int8.
    pub const I8: DlDtype = DlDtype::new(code::INT, 8, 1);
    /// int32.
    pub const I32: DlDtype = DlDtype::new(code::INT, 32, 1);
    /// int64.
    pub const I64: DlDtype = DlDtype::new(code::INT, 64, 1);
    /// uint8 (raw bytes).
    pub const U8: DlDtype = DlDtype::new(code::UINT, 8, 1);
    /// Boolean stored in a byte.
    pub const BOOL: DlDtype = DlDtype::new(code::BOOL, 8, 1);
    /// fp8 e4m3 (fn).
    pub const FP8_E4M3: DlDtype = DlDtype::new(code::FLOAT8_E4M3FN, 8, 1);
    /// fp8 e5m2.
    pub const FP8_E5M2: DlDtype = DlDtype::new(code::FLOAT8_E5M2, 8, 1);
    /// fp8 e8m0 (block-scale exponents).
    pub const FP8_E8M0: DlDtype = DlDtype::new(code::FLOAT8_E8M0FNU, 8, 1);
    /// One fp4 e2m1 element (four bits).
    pub const FP4_E2M1: DlDtype = DlDtype::new(code::FLOAT4_E2M1FN, 4, 1);
    /// One fp4 storage slot: two packed e2m1 elements in one byte.
    pub const FP4_E2M1_X2: DlDtype = DlDtype::new(code::FLOAT4_E2M1FN, 4, 2);

    /// Builds a dtype from its triple.
    pub const fn new(code: u8, bits: u8, lanes: u16) -> Self {
        DlDtype { code, bits, lanes }
    }

    /// Whether this is an fp4 type (one element or a packed pair).
    pub const fn is_fp4(self) -> bool {
        self.code == code::FLOAT4_E2M1FN
    }

    /// Bytes one element (all lanes) occupies, rounded up; `None` when the type is unknown or has
    /// no width.
    pub const fn item_bytes(self) -> Option<u64> {
        if self.code == code::UNKNOWN || self.bits == 0 || self.lanes == 0 {
            return None;
        }
        Some((self.bits as u64 * self.lanes as u64).div_ceil(8))
    }

    /// The storage-slot type for elements of this type: the packed pair for fp4, itself otherwise.
    pub const fn storage(self) -> DlDtype {
        if self.is_fp4() && self.lanes == 1 {
            DlDtype::FP4_E2M1_X2
        } else {
            self
        }
    }

    /// Readable name used in error messages.
    pub fn name(self) -> String {
        let base = match self.code {
            code::INT => "int",
            code::UINT => "uint",
            code::FLOAT => "float",
            code::OPAQUE_HANDLE => "handle",
            code::BFLOAT => "bfloat",
            code::COMPLEX => "complex",
            code::BOOL => "bool",
            code::FLOAT8_E3M4 => "float8_e3m4",
            code::FLOAT8_E4M3 => "float8_e4m3",
            code::FLOAT8_E4M3B11FNUZ => "float8_e4m3b11fnuz",
            code::FLOAT8_E4M3FN => "float8_e4m3fn",
            code::FLOAT8_E4M3FNUZ => "float8_e4m3fnuz",
            code::FLOAT8_E5M2 => "float8_e5m2",
            code::FLOAT8_E5M2FNUZ => "float8_e5m2fnuz",
            code::FLOAT8_E8M0FNU => "float8_e8m0fnu",
            code::FLOAT6_E2M3FN => "float6_e2m3fn",
            code::FLOAT6_E3M2FN => "float6_e3m2fn",
            code::FLOAT4_E2M1FN => "float4_e2m1fn",
            _ => return "unknown".to_owned(),
        };
        let sized = if self.code >= code::FLOAT8_E3M4 {
            base.to_owned()
        } else {
            format!("{base}{}", self.bits)
        };
        if self.lanes == 1 {
            sized
        } else {
            format!("{sized}x{}", self.lanes)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn widths_and_storage() {
        assert_eq!(DlDtype::BF16.item_bytes(), Some(2));
        assert_eq!(DlDtype::FP4_E2M1.item_bytes(), Some(1));
        assert_eq!(DlDtype::FP4_E2M1_X2.item_bytes(), Some(1));
        assert_eq!(DlDtype::UNKNOWN.item_bytes(), None);
        assert_eq!(DlDtype::FP4_E2M1.storage(), DlDtype::FP4_E2M1_X2);
        assert_eq!(DlDtype::BF16.storage(), DlDtype::BF16);
        assert_eq!(DlDtype::BF16.name(), "bfloat16");
        assert_eq!(DlDtype::FP4_E2M1_X2.name(), "float4_e2m1fnx2");
    }
}
