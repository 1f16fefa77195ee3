//! The candidates the selector judges: the two cuDNN sub-backends of Transformer Engine's rule
//! (`NVTE_F16_arbitrary_seqlen = 1`, `NVTE_FP8 = 2`), every engine capability row, and the
//! unfused reference math.

use serde::Serialize;

use super::engines::{self, EngineCaps};

/// One candidate.
#[derive(Copy, Clone, Debug)]
pub enum Target {
    /// cuDNN SDPA for FP16/BF16 (TE `NVTE_F16_arbitrary_seqlen`).
    CudnnF16,
    /// cuDNN SDPA for FP8 (TE `NVTE_FP8`).
    CudnnFp8,
    /// An engine capability row.
    Engine(&'static EngineCaps),
    /// Unfused attention math (TE `UnfusedDotProductAttention`).
    Reference,
}

impl PartialEq for Target {
    fn eq(&self, other: &Self) -> bool {
        self.name() == other.name()
    }
}
impl Eq for Target {}

impl Target {
    /// Every candidate, in table order: the cuDNN sub-backends, the engine rows, the reference.
    pub fn all() -> Vec<Target> {
        let mut v = vec![Target::CudnnF16, Target::CudnnFp8];
        v.extend(engines::ROWS.iter().map(Target::Engine));
        v.push(Target::Reference);
        v
    }

    /// Stable name (part of the C ABI's JSON): `cudnn.f16_arbitrary_seqlen`, `cudnn.fp8`,
    /// `engine.<row name>`, `reference.unfused`.
    pub fn name(&self) -> &'static str {
        match self {
            Target::CudnnF16 => "cudnn.f16_arbitrary_seqlen",
            Target::CudnnFp8 => "cudnn.fp8",
            Target::Engine(row) => row.target_name,
            Target::Reference => "reference.unfused",
        }
    }

    /// Kind label: `cudnn_backend`, `engine` or `reference`.
    pub fn kind(&self) -> &'static str {
        match self {
            Target::CudnnF16 | Target::CudnnFp8 => "cudnn_backend",
            Target::Engine(_) => "engine",
            Target::Reference => "reference",
        }
    }

    /// A cuDNN sub-backend.
    pub fn is_cudnn(&self) -> bool {
        matches!(self, Target::CudnnF16 | Target::CudnnFp8)
    }

    /// The dispatch engine id of an engine row.
    pub fn engine_id(&self) -> Option<i64> {
        match self {
            Target::Engine(row) => Some(row.engine_id),
            _ => None,
        }
    }

    /// Scope bit of this target (see [`super::rules::Scope`]).
    pub fn scope_bit(&self) -> u8 {
        match self {
            Target::CudnnF16 => super::rules::F16,
            Target::CudnnFp8 => super::rules::FP8,
            Target::Engine(_) => super::rules::ENGINES,
            Target::Reference => super::rules::REF,
        }
    }
}

impl Serialize for Target {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}
