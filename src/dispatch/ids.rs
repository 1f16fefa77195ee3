//! The flat engine-id space, shared with the reference (nvidia-cudnn-frontend 1.32.0).
//!
//! Contract: an id is identity, a list position is rank, and the two are independent.
//! `[0, 10_000)` belongs to the cuDNN backend (ids assigned by the backend, read per graph);
//! `[10_000, 20_000)` is reserved for C++ open-source engines (never populated); bundled engines
//! live from 20_000 up, one [`FAMILY_BLOCK`]-wide block per family, engine id = block base + slot.
//! Two negative sentinels exist: [`BACKEND_HEURISTIC_ENGINE_ID`] (the delegating backend entry) and
//! [`BACKEND_BLOCK_ENGINE_ID`] (the placement marker inside a family hook's list, never listed).
//! Anything that is not a bundled id is routed to the backend side. Decoding an id needs nothing
//! registered: [`classify`] is pure arithmetic, the manifest adds family names on top of it.

/// An engine id in the flat id space (signed: the sentinels are negative).
pub type EngineId = i64;

/// First backend engine id.
pub const BACKEND_ENGINE_ID_BASE: EngineId = 0;
/// First id of the reserved C++ open-source band (one past the last backend id).
pub const CPP_OSS_ENGINE_ID_BASE: EngineId = 10_000;
/// First bundled-engine id (one past the last C++ OSS id).
pub const BUNDLED_ENGINE_ID_BASE: EngineId = 20_000;
/// Width of one family's block of bundled-engine ids.
pub const FAMILY_BLOCK: EngineId = 100;
/// The delegating backend entry: the backend picks among candidates it never lists as plans.
pub const BACKEND_HEURISTIC_ENGINE_ID: EngineId = -1;
/// The `BACKEND` placement marker of a family hook; expanded by ranking, never listed.
pub const BACKEND_BLOCK_ENGINE_ID: EngineId = -2;

/// Which side of the id space an id belongs to.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum IdClass {
    /// A cuDNN backend engine, `[0, 10_000)`.
    Backend,
    /// The reserved C++ OSS band `[10_000, 20_000)` (routed to the backend side).
    CppOss,
    /// A bundled engine: family block base and slot within the block.
    Bundled {
        /// The block base (a multiple of [`FAMILY_BLOCK`] at or above 20_000).
        block_base: EngineId,
        /// The slot, `id - block_base`.
        slot: u32,
    },
    /// [`BACKEND_HEURISTIC_ENGINE_ID`].
    Delegating,
    /// [`BACKEND_BLOCK_ENGINE_ID`].
    Marker,
    /// Any other negative id (routed to the backend side, owned by nothing).
    Invalid,
}

/// Decodes an id arithmetically.
pub fn classify(id: EngineId) -> IdClass {
    match id {
        BACKEND_HEURISTIC_ENGINE_ID => IdClass::Delegating,
        BACKEND_BLOCK_ENGINE_ID => IdClass::Marker,
        i if i < 0 => IdClass::Invalid,
        i if i < CPP_OSS_ENGINE_ID_BASE => IdClass::Backend,
        i if i < BUNDLED_ENGINE_ID_BASE => IdClass::CppOss,
        i => {
            let block_base =
                BUNDLED_ENGINE_ID_BASE + (i - BUNDLED_ENGINE_ID_BASE) / FAMILY_BLOCK * FAMILY_BLOCK;
            IdClass::Bundled {
                block_base,
                slot: (i - block_base) as u32,
            }
        }
    }
}

/// True for ids in `[0, 10_000)`.
pub fn is_backend_engine(id: EngineId) -> bool {
    (BACKEND_ENGINE_ID_BASE..CPP_OSS_ENGINE_ID_BASE).contains(&id)
}

/// True for bundled-engine ids (`>= 20_000`).
pub fn is_bundled_engine(id: EngineId) -> bool {
    id >= BUNDLED_ENGINE_ID_BASE
}

/// The reference's family blocks, kept so that every id the reference can emit decodes to a
/// family name even where dnnplan ships no engine for it. Append-only; bases never move.
pub const REFERENCE_BLOCKS: &[(&str, EngineId)] = &[
    ("gdn", 20_100),
    ("kda", 20_200),
    ("gdn2", 20_300),
    ("frost_gemm", 20_400),
    ("frost_sdpa_fwd", 20_500),
    ("frost_sdpa_bwd", 20_600),
    ("gdp", 20_700),
    ("frost_conv", 20_800),
    ("mamba2", 20_900),
    ("frost_norm_fwd", 21_000),
    ("frost_norm_bwd", 21_100),
];

/// Name of the reference family owning `block_base`, if any.
pub fn reference_block_name(block_base: EngineId) -> Option<&'static str> {
    REFERENCE_BLOCKS
        .iter()
        .find(|(_, b)| *b == block_base)
        .map(|(n, _)| *n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classify_covers_every_band_and_both_sentinels() {
        assert_eq!(classify(0), IdClass::Backend);
        assert_eq!(classify(9_999), IdClass::Backend);
        assert_eq!(classify(10_000), IdClass::CppOss);
        assert_eq!(classify(19_999), IdClass::CppOss);
        assert_eq!(
            classify(20_000),
            IdClass::Bundled {
                block_base: 20_000,
                slot: 0
            }
        );
        assert_eq!(
            classify(20_517),
            IdClass::Bundled {
                block_base: 20_500,
                slot: 17
            }
        );
        assert_eq!(
            classify(21_199),
            IdClass::Bundled {
                block_base: 21_100,
                slot: 99
            }
        );
        assert_eq!(classify(-1), IdClass::Delegating);
        assert_eq!(classify(-2), IdClass::Marker);
        assert_eq!(classify(-3), IdClass::Invalid);
        assert!(is_backend_engine(0) && !is_backend_engine(10_000) && !is_backend_engine(-1));
        assert!(is_bundled_engine(20_000) && !is_bundled_engine(19_999));
    }

    #[test]
    fn reference_blocks_are_distinct_aligned_blocks() {
        for (i, (name, base)) in REFERENCE_BLOCKS.iter().enumerate() {
            assert_eq!((base - BUNDLED_ENGINE_ID_BASE) % FAMILY_BLOCK, 0, "{name}");
            assert!(*base >= BUNDLED_ENGINE_ID_BASE);
            for (other, b) in &REFERENCE_BLOCKS[i + 1..] {
                assert_ne!(base, b, "{name} and {other} share a block");
            }
        }
        assert_eq!(reference_block_name(20_500), Some("frost_sdpa_fwd"));
        assert_eq!(reference_block_name(20_000), None);
    }
}
