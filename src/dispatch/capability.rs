//! Capability rows: what an engine serves, as data, with the first mismatch as a reason string.
//!
//! A row holds an INCLUSIVE arch range (`major*10 + minor`; a range, not a set, so a later part of
//! the same line is not declined) and an ordered list of requirements over the family's facts.
//! [`Capabilities::mismatch`] returns the FIRST reason or `None`; an engine's `check_support`
//! declines with that reason. Strings, not booleans: explain and the empty-list error show them.

use super::target::Target;

/// An inclusive arch range, `major*10 + minor` (H200 = 90).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ArchRange {
    /// Lowest arch served.
    pub lo: i32,
    /// Highest arch served.
    pub hi: i32,
}

impl ArchRange {
    /// `lo..=hi`.
    pub const fn new(lo: i32, hi: i32) -> ArchRange {
        ArchRange { lo, hi }
    }

    /// `None` when the target's device is in range; else the reason
    /// (`"requires SM90-90; current device is SM80"`, or the missing device's reason).
    pub fn mismatch(&self, target: &Target) -> Option<String> {
        let range = if self.lo == self.hi {
            format!("SM{}", self.lo)
        } else {
            format!("SM{}-{}", self.lo, self.hi)
        };
        match target.arch() {
            Some(a) if (self.lo..=self.hi).contains(&a) => None,
            _ => Some(format!("requires {range}; {}", target.describe())),
        }
    }
}

/// One requirement over facts `F`: `holds` must be true, else `reason` explains why not.
pub struct Requirement<F: 'static> {
    /// Short name of the rule (shown by explain next to the reason).
    pub name: &'static str,
    /// The rule.
    pub holds: fn(&F) -> bool,
    /// The reason when it does not hold (names the offending value).
    pub reason: fn(&F) -> String,
}

/// A capability row: arch range, then requirements in check order.
pub struct Capabilities<F: 'static> {
    /// Inclusive arch range.
    pub arch: ArchRange,
    /// Requirements, checked in order after the arch.
    pub requirements: &'static [Requirement<F>],
}

impl<F> Capabilities<F> {
    /// The first mismatch: requirements (graph rules) first, then the arch (so a graph the
    /// engine could never serve says so even on a machine without a GPU).
    pub fn mismatch(&self, target: &Target, facts: &F) -> Option<String> {
        self.requirements
            .iter()
            .find(|r| !(r.holds)(facts))
            .map(|r| format!("{}: {}", r.name, (r.reason)(facts)))
            .or_else(|| self.arch.mismatch(target))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct F {
        d: i64,
    }

    static ROW: Capabilities<F> = Capabilities {
        arch: ArchRange::new(90, 90),
        requirements: &[Requirement {
            name: "head_dim",
            holds: |f| f.d == 64 || f.d == 128,
            reason: |f| format!("head dim {} is not 64 or 128", f.d),
        }],
    };

    #[test]
    fn arch_range_is_inclusive_and_names_the_device() {
        let r = ArchRange::new(90, 100);
        assert_eq!(r.mismatch(&Target::with_arch(90)), None);
        assert_eq!(r.mismatch(&Target::with_arch(100)), None);
        assert_eq!(
            r.mismatch(&Target::with_arch(80)).unwrap(),
            "requires SM90-100; current device is SM80"
        );
        let none = r
            .mismatch(&Target::no_device("libcuda.so.1 not found"))
            .unwrap();
        assert!(
            none.contains("no CUDA device (libcuda.so.1 not found)"),
            "{none}"
        );
    }

    #[test]
    fn first_mismatch_wins_and_rules_precede_arch() {
        let t = Target::no_device("none");
        assert_eq!(
            ROW.mismatch(&t, &F { d: 96 }).unwrap(),
            "head_dim: head dim 96 is not 64 or 128"
        );
        assert!(
            ROW.mismatch(&t, &F { d: 64 })
                .unwrap()
                .starts_with("requires SM90")
        );
        assert_eq!(ROW.mismatch(&Target::with_arch(90), &F { d: 128 }), None);
    }
}
