//! The per-plan fast path (spec 6): everything a call would re-derive is settled at build into a
//! flat [`GuardTable`] of `(slot, rule)` rows; execute runs [`GuardTable::admits`], one loop over
//! the rows that only compares numbers and never formats. A refused call goes to
//! [`GuardTable::explain`], the cold checker that walks the same rows with readable checks and
//! names the operand, the rule and both numbers; the plan launches nothing. The set of refused
//! calls equals the set of illegal calls: if the checker finds nothing to explain, that is an
//! internal error ("the guards and the diagnostics have drifted apart").

use std::sync::atomic::{AtomicU64, Ordering};

use crate::error::{Error, Result};

use super::dtype::DlDtype;
use super::variant::VariantPack;

/// One per-slot rule a plan settles at build.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SlotRule {
    /// The caller must bind a buffer.
    Required,
    /// The slot must have the declared storage extents (refuses a smaller buffer or a view of
    /// other extents, rule N5 iv/v).
    DeclaredExtent,
    /// The slot's dtype must be this one.
    Dtype(DlDtype),
    /// The innermost axis of extent > 1 must have stride 1.
    DenseLayout,
    /// Row-major compact.
    Compact,
    /// The pointer must be aligned to this many bytes (a power of two).
    Align(u32),
    /// When the producer reported its size, it must be at least this many bytes.
    MinObservedBytes(u64),
}

impl SlotRule {
    /// Short stable name of the rule (used as the refusal counter key and in messages).
    pub fn name(&self) -> &'static str {
        match self {
            SlotRule::Required => "required",
            SlotRule::DeclaredExtent => "declared_extent",
            SlotRule::Dtype(_) => "dtype",
            SlotRule::DenseLayout => "dense_layout",
            SlotRule::Compact => "compact",
            SlotRule::Align(_) => "alignment",
            SlotRule::MinObservedBytes(_) => "min_bytes",
        }
    }
}

/// One row: a rule on one slot.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Guard {
    /// Slot index in the operand order.
    pub slot: u32,
    /// The rule.
    pub rule: SlotRule,
}

/// A plan's build-time guard table and its refusal counter.
#[derive(Debug, Default)]
pub struct GuardTable {
    rows: Box<[Guard]>,
    refusals: AtomicU64,
}

impl GuardTable {
    /// Builds the table. Rows on a filled-or-hole slot skip a hole unless `Required` is listed.
    pub fn new(rows: impl IntoIterator<Item = Guard>) -> Self {
        GuardTable {
            rows: rows.into_iter().collect(),
            refusals: AtomicU64::new(0),
        }
    }

    /// The rows.
    pub fn rows(&self) -> &[Guard] {
        &self.rows
    }

    /// How many calls this table has refused.
    pub fn refusals(&self) -> u64 {
        self.refusals.load(Ordering::Relaxed)
    }

    /// The hot check: one flat loop, no formatting, no allocation.
    #[inline]
    pub fn admits(&self, pack: &VariantPack<'_>) -> bool {
        self.rows
            .iter()
            .all(|g| holds(pack, g.slot as usize, g.rule))
    }

    /// Hot check, then on refusal the cold explanation (and the refusal counted).
    #[inline]
    pub fn check(&self, pack: &VariantPack<'_>) -> Result<()> {
        if self.admits(pack) {
            Ok(())
        } else {
            self.refusals.fetch_add(1, Ordering::Relaxed);
            Err(self.explain(pack))
        }
    }

    /// The cold checker: the first broken row, with the operand, the rule and both numbers.
    #[cold]
    pub fn explain(&self, pack: &VariantPack<'_>) -> Error {
        for g in self.rows.iter() {
            let i = g.slot as usize;
            if holds(pack, i, g.rule) {
                continue;
            }
            let d = pack.declared(i);
            let what = format!("operand {}", d.label());
            let have = match pack.geometry(i) {
                Some(geo) => format!("{geo:?}"),
                None => "a bare address".to_owned(),
            };
            let why = match g.rule {
                SlotRule::Required => "this plan requires a buffer for it; none was bound".into(),
                SlotRule::DeclaredExtent => format!(
                    "this plan needs the declared extent {:?} (storage units) but the buffer is {have}",
                    d.storage.map(|s| s.dims().to_vec()).unwrap_or_default()
                ),
                SlotRule::Dtype(t) => format!(
                    "this plan needs dtype {} but the buffer is {}",
                    t.name(),
                    pack.dtype(i).name()
                ),
                SlotRule::DenseLayout => {
                    format!(
                        "this plan needs the innermost non-singleton axis at stride 1; got {have}"
                    )
                }
                SlotRule::Compact => {
                    format!("this plan needs a compact row-major buffer; got {have}")
                }
                SlotRule::Align(a) => format!(
                    "this plan needs a {a}-byte aligned address; got {:p} ({} bytes past alignment)",
                    pack.ptr(i),
                    pack.ptr(i) as usize % a as usize
                ),
                SlotRule::MinObservedBytes(n) => format!(
                    "this plan needs at least {n} bytes but the buffer holds {}",
                    pack.observed_bytes(i).unwrap_or(0)
                ),
            };
            return Error::bad_param(what, format!("{why} (rule {})", g.rule.name()));
        }
        Error::Internal("a call was refused but no rule explains it: the per-call guards and the diagnostics have drifted apart".into())
    }
}

#[inline]
fn holds(pack: &VariantPack<'_>, i: usize, rule: SlotRule) -> bool {
    if !pack.is_filled(i) {
        return rule != SlotRule::Required;
    }
    match rule {
        SlotRule::Required => true,
        SlotRule::DeclaredExtent => pack.has_declared_extent(i),
        SlotRule::Dtype(t) => pack.dtype(i) == t,
        SlotRule::DenseLayout => pack.geometry(i).is_none_or(|g| g.is_dense_layout()),
        SlotRule::Compact => pack.geometry(i).is_none_or(|g| g.is_compact()),
        SlotRule::Align(a) => (pack.ptr(i) as usize) & (a as usize - 1) == 0,
        SlotRule::MinObservedBytes(n) => pack.observed_bytes(i).is_none_or(|b| b >= n),
    }
}
