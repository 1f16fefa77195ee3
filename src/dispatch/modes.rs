//! Heuristic modes and build policies (the reference's `HeurMode_t` and `BuildPlanPolicy_t`,
//! same enumerator values; both cross the C ABI as integers).

use serde::Serialize;

use crate::error::{Error, Result};

/// A heuristic mode.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, Serialize)]
pub enum HeurMode {
    /// The backend's decision-tree heuristic (the family's tuned proposals).
    A = 0,
    /// The backend's slower heuristic (families reuse their "A" proposals).
    B = 1,
    /// Functional fallbacks.
    Fallback = 2,
    /// Open-source engines: never sent to cuDNN; brings in the delegating entry.
    OpenSource = 3,
}

/// Modes used when the caller passes none: `[A, FALLBACK]`.
pub const DEFAULT_MODES: [HeurMode; 2] = [HeurMode::A, HeurMode::Fallback];

impl HeurMode {
    /// Every mode, in enumerator order.
    pub const ALL: [HeurMode; 4] = [
        HeurMode::A,
        HeurMode::B,
        HeurMode::Fallback,
        HeurMode::OpenSource,
    ];

    /// The mode for an integer from C.
    pub fn from_u32(v: u32) -> Result<HeurMode> {
        HeurMode::ALL
            .get(v as usize)
            .copied()
            .ok_or(Error::UnknownEnumValue {
                what: "heur_mode",
                value: i64::from(v),
            })
    }

    /// The reference's spelling (`A`, `B`, `FALLBACK`, `OPENSOURCE`).
    pub fn name(self) -> &'static str {
        match self {
            HeurMode::A => "A",
            HeurMode::B => "B",
            HeurMode::Fallback => "FALLBACK",
            HeurMode::OpenSource => "OPENSOURCE",
        }
    }

    /// Parses a name (case-insensitive).
    pub fn from_name(s: &str) -> Option<HeurMode> {
        HeurMode::ALL
            .into_iter()
            .find(|m| m.name().eq_ignore_ascii_case(s.trim()))
    }
}

/// How `build_plans` walks the list.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BuildPolicy {
    /// From the selected index, stop at the first success.
    HeuristicsChoice = 0,
    /// Build every entry; keep the first success (or the previous selection if it built).
    All = 1,
}

impl BuildPolicy {
    /// The policy for an integer from C.
    pub fn from_u32(v: u32) -> Result<BuildPolicy> {
        match v {
            0 => Ok(BuildPolicy::HeuristicsChoice),
            1 => Ok(BuildPolicy::All),
            _ => Err(Error::UnknownEnumValue {
                what: "build_policy",
                value: i64::from(v),
            }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn enumerator_values_match_the_reference() {
        for (i, m) in HeurMode::ALL.iter().enumerate() {
            assert_eq!(*m as usize, i);
            assert_eq!(HeurMode::from_u32(i as u32).unwrap(), *m);
            assert_eq!(HeurMode::from_name(m.name()), Some(*m));
        }
        assert!(HeurMode::from_u32(4).is_err());
        assert_eq!(HeurMode::from_name("fallback"), Some(HeurMode::Fallback));
        assert!(BuildPolicy::from_u32(2).is_err());
    }
}
