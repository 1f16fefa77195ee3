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
use super::variant::{DECLARED_EXTENT, FILLED, OVERRIDDEN, VariantPack};

/// One per-slot rule a plan settles at build.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum SlotRule {
    /// The caller must bind a buffer.
    Required,
    /// The slot must have the declared storage extents (refuses a smaller buffer or a view of
    /// other extents, rule N5 iv/v).
    DeclaredExtent,
    /// The declared storage extents, unless the call overrides this operand's geometry (plans
    /// that honour execute-time overrides).
    DeclaredOrOverriddenExtent,
    /// The slot's dtype must be this one.
    Dtype(DlDtype),
    /// The innermost axis of extent > 1 must have stride 1.
    DenseLayout,
    /// Row-major compact.
    Compact,
    /// The pointer must be a multiple of this many bytes.
    Align(u32),
    /// When the producer reported its size, it must be at least this many bytes.
    MinObservedBytes(u64),
}

impl SlotRule {
    /// Every rule name, in [`SlotRule::index`] order.
    pub const NAMES: [&'static str; 8] = [
        "required",
        "declared_extent",
        "declared_or_overridden_extent",
        "dtype",
        "dense_layout",
        "compact",
        "alignment",
        "min_bytes",
    ];

    /// Position of this rule's kind in [`SlotRule::NAMES`] (the refusal counter index).
    pub fn index(&self) -> usize {
        match self {
            SlotRule::Required => 0,
            SlotRule::DeclaredExtent => 1,
            SlotRule::DeclaredOrOverriddenExtent => 2,
            SlotRule::Dtype(_) => 3,
            SlotRule::DenseLayout => 4,
            SlotRule::Compact => 5,
            SlotRule::Align(_) => 6,
            SlotRule::MinObservedBytes(_) => 7,
        }
    }

    /// Short stable name of the rule (used as the refusal counter key and in messages).
    pub fn name(&self) -> &'static str {
        Self::NAMES[self.index()]
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

/// The rows of one slot folded into numbers the hot loop compares (settled at build).
#[derive(Copy, Clone, Debug, Default)]
struct SlotCheck {
    slot: u32,
    required: bool,
    /// Slot flags that must all be set (when filled).
    all_flags: u8,
    /// Slot flags of which one must be set (when filled; 0 = no such rule).
    any_flags: u8,
    dtype: Option<DlDtype>,
    /// Pointer bits that must be clear.
    align_mask: usize,
    /// The slot also has geometry rules (dense, compact, min bytes): evaluated row by row.
    geometry_rules: bool,
}

/// A plan's build-time guard table and its refusal counter.
#[derive(Debug, Default)]
pub struct GuardTable {
    rows: Box<[Guard]>,
    checks: Box<[SlotCheck]>,
    /// Refused calls per rule kind (the first broken row's kind), [`SlotRule::index`] order.
    refusals: [AtomicU64; 8],
}

impl GuardTable {
    /// Builds the table: the rows are kept for the checker and folded per slot for the hot
    /// loop. A rule other than `Required` passes on an unbound slot (a hole the plan tolerates).
    pub fn new(rows: impl IntoIterator<Item = Guard>) -> Self {
        let rows: Box<[Guard]> = rows.into_iter().collect();
        let mut checks: Vec<SlotCheck> = Vec::new();
        for g in rows.iter() {
            let k = match checks.iter().position(|c| c.slot == g.slot) {
                Some(k) => k,
                None => {
                    checks.push(SlotCheck {
                        slot: g.slot,
                        ..SlotCheck::default()
                    });
                    checks.len() - 1
                }
            };
            let c = &mut checks[k];
            match g.rule {
                SlotRule::Required => c.required = true,
                SlotRule::DeclaredExtent => c.all_flags |= DECLARED_EXTENT,
                SlotRule::DeclaredOrOverriddenExtent => c.any_flags |= DECLARED_EXTENT | OVERRIDDEN,
                // Two dtype rules on one slot can never both hold: keep the row-by-row path.
                SlotRule::Dtype(t) => match c.dtype {
                    None => c.dtype = Some(t),
                    Some(prev) if prev == t => {}
                    Some(_) => c.geometry_rules = true,
                },
                SlotRule::Align(a) if a.is_power_of_two() => c.align_mask |= a as usize - 1,
                SlotRule::Align(_) => c.geometry_rules = true,
                SlotRule::DenseLayout | SlotRule::Compact | SlotRule::MinObservedBytes(_) => {
                    c.geometry_rules = true
                }
            }
        }
        GuardTable {
            rows,
            checks: checks.into_boxed_slice(),
            refusals: Default::default(),
        }
    }

    /// The rows.
    pub fn rows(&self) -> &[Guard] {
        &self.rows
    }

    /// How many calls this table has refused.
    pub fn refusals(&self) -> u64 {
        self.refusals
            .iter()
            .map(|c| c.load(Ordering::Relaxed))
            .sum()
    }

    /// Refused calls per rule name (only rules that refused something).
    pub fn refusals_by_rule(&self) -> Vec<(&'static str, u64)> {
        SlotRule::NAMES
            .iter()
            .zip(&self.refusals)
            .map(|(n, c)| (*n, c.load(Ordering::Relaxed)))
            .filter(|(_, c)| *c > 0)
            .collect()
    }

    /// The hot check: one flat loop over the per-slot numbers, no formatting, no allocation.
    #[inline]
    pub fn admits(&self, pack: &VariantPack<'_>) -> bool {
        self.checks.iter().all(|c| {
            let i = c.slot as usize;
            let Some(s) = pack.slots.get(i) else {
                return false;
            };
            if s.flags & FILLED == 0 {
                return !c.required;
            }
            s.flags & c.all_flags == c.all_flags
                && (c.any_flags == 0 || s.flags & c.any_flags != 0)
                && c.dtype.is_none_or(|t| t == s.dtype)
                && (pack.address[i] as usize) & c.align_mask == 0
                && (!c.geometry_rules
                    || self
                        .rows
                        .iter()
                        .filter(|g| g.slot == c.slot)
                        .all(|g| holds(pack, i, g.rule)))
        })
    }

    /// Hot check, then on refusal the cold explanation (and the refusal counted by rule).
    #[inline]
    pub fn check(&self, pack: &VariantPack<'_>) -> Result<()> {
        if self.admits(pack) {
            Ok(())
        } else {
            Err(self.refuse(pack))
        }
    }

    #[cold]
    fn refuse(&self, pack: &VariantPack<'_>) -> Error {
        if let Some(g) = self.first_broken(pack) {
            self.refusals[g.rule.index()].fetch_add(1, Ordering::Relaxed);
        }
        self.explain(pack)
    }

    /// The first row that does not hold, row by row (the readable evaluation).
    fn first_broken(&self, pack: &VariantPack<'_>) -> Option<&Guard> {
        self.rows
            .iter()
            .find(|g| (g.slot as usize) >= pack.len() || !holds(pack, g.slot as usize, g.rule))
    }

    /// The cold checker: the first broken row, with the operand, the rule and both numbers.
    #[cold]
    pub fn explain(&self, pack: &VariantPack<'_>) -> Error {
        if let Some(g) = self.first_broken(pack) {
            let i = g.slot as usize;
            if i >= pack.len() {
                return Error::Internal(format!(
                    "a plan guards slot {i} but the graph has {} operands",
                    pack.len()
                ));
            }
            let d = pack.declared(i);
            let what = format!("operand {}", d.label());
            let have = match pack.geometry(i) {
                Some(geo) => format!("{geo:?}"),
                None => "a bare address".to_owned(),
            };
            let why = match g.rule {
                SlotRule::Required => "this plan requires a buffer for it; none was bound".into(),
                SlotRule::DeclaredExtent | SlotRule::DeclaredOrOverriddenExtent => format!(
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
        SlotRule::DeclaredOrOverriddenExtent => {
            pack.is_overridden(i) || pack.has_declared_extent(i)
        }
        SlotRule::Dtype(t) => pack.dtype(i) == t,
        SlotRule::DenseLayout => pack.geometry(i).is_none_or(|g| g.is_dense_layout()),
        SlotRule::Compact => pack.geometry(i).is_none_or(|g| g.is_compact()),
        SlotRule::Align(a) => (pack.ptr(i) as usize).is_multiple_of(a.max(1) as usize),
        SlotRule::MinObservedBytes(n) => pack.observed_bytes(i).is_none_or(|b| b >= n),
    }
}

#[cfg(test)]
mod tests {
    use std::ffi::c_void;

    use super::*;
    use crate::pack::{
        Buffer, BufferView, DeclaredLayout, Device, OperandOrder, ShapeOverride, TensorDecl,
        normalize,
    };

    /// A small deterministic generator (no dependency needed).
    struct Lcg(u64);
    impl Lcg {
        fn next(&mut self, n: usize) -> usize {
            self.0 = self
                .0
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((self.0 >> 33) % n as u64) as usize
        }
    }

    const SHAPES: [(&[i64], Option<&[i64]>); 6] = [
        (&[1, 128, 64], None),
        (&[128, 64], None),
        (&[64, 64], None),
        (&[1, 64, 128], Some(&[8192, 1, 64])),
        (&[1, 128, 64], Some(&[16384, 128, 1])),
        (&[1, 128, 32], Some(&[8192, 64, 1])),
    ];
    const DTYPES: [DlDtype; 4] = [DlDtype::BF16, DlDtype::F16, DlDtype::F32, DlDtype::U8];

    fn random_rule(r: &mut Lcg) -> SlotRule {
        match r.next(9) {
            0 => SlotRule::Required,
            1 => SlotRule::DeclaredExtent,
            2 => SlotRule::DeclaredOrOverriddenExtent,
            3 => SlotRule::Dtype(DTYPES[r.next(4)]),
            4 => SlotRule::DenseLayout,
            5 => SlotRule::Compact,
            6 => SlotRule::Align([1, 16, 48, 256][r.next(4)]),
            7 => SlotRule::MinObservedBytes([8192, 16384, 40000][r.next(3)]),
            _ => SlotRule::Align(0),
        }
    }

    /// The folded hot check and the row-by-row evaluation agree on every call, and the checker
    /// explains every refusal (refused calls = illegal calls).
    #[test]
    fn folded_checks_agree_with_rows_on_random_calls() {
        let decls: Vec<TensorDecl> = (1..=3)
            .map(|u| {
                TensorDecl::new(
                    u,
                    format!("t{u}"),
                    &[1, 128, 64],
                    &[8192, 64, 1],
                    DlDtype::BF16,
                )
            })
            .collect();
        let layout = DeclaredLayout::new(
            OperandOrder::from_wired_ports(decls.iter().map(|d| (d.uid, None))),
            &decls,
        )
        .unwrap();
        let mut r = Lcg(7);
        let (mut admitted, mut refused) = (0, 0);
        for _ in 0..4000 {
            let rows: Vec<Guard> = (0..1 + r.next(6))
                .map(|_| Guard {
                    slot: r.next(3) as u32,
                    rule: random_rule(&mut r),
                })
                .collect();
            let table = GuardTable::new(rows.iter().copied());
            let mut bindings = Vec::new();
            for uid in 1..=3i64 {
                let ptr = [0x10000usize, 0x10008, 0x10030][r.next(3)] as *mut c_void;
                match r.next(4) {
                    0 => {}
                    1 => bindings.push((uid, Buffer::Address(ptr))),
                    _ => {
                        let (shape, strides) = SHAPES[r.next(SHAPES.len())];
                        bindings.push((
                            uid,
                            Buffer::View(BufferView {
                                ptr,
                                shape,
                                strides,
                                dtype: DTYPES[r.next(4)],
                                device: Device::cuda(0),
                            }),
                        ));
                    }
                }
            }
            let bound: Vec<i64> = bindings.iter().map(|(u, _)| *u).collect();
            let overrides: Vec<ShapeOverride<'_>> = if !bound.is_empty() && r.next(3) == 0 {
                vec![ShapeOverride {
                    uid: bound[r.next(bound.len())],
                    dims: &[1, 32, 64],
                    strides: &[2048, 64, 1],
                }]
            } else {
                Vec::new()
            };
            let pack = normalize::from_bindings(&layout, bindings, &overrides).unwrap();
            let row_by_row = rows.iter().all(|g| holds(&pack, g.slot as usize, g.rule));
            assert_eq!(table.admits(&pack), row_by_row, "rows {rows:?}");
            if row_by_row {
                admitted += 1;
                assert!(table.check(&pack).is_ok());
            } else {
                refused += 1;
                let e = table.check(&pack).unwrap_err();
                assert!(matches!(e, Error::BadParam { .. }), "{e}");
            }
        }
        assert!(
            admitted > 200 && refused > 200,
            "{admitted} admitted, {refused} refused"
        );
    }

    #[test]
    fn refusals_are_counted_by_rule() {
        let decls = [TensorDecl::new(1, "a", &[4], &[1], DlDtype::F32)];
        let layout =
            DeclaredLayout::new(OperandOrder::from_wired_ports([(1, None)]), &decls).unwrap();
        let table = GuardTable::new([
            Guard {
                slot: 0,
                rule: SlotRule::Required,
            },
            Guard {
                slot: 0,
                rule: SlotRule::Align(64),
            },
        ]);
        let hole = normalize::from_addresses(&layout, &[std::ptr::null_mut()], &[]).unwrap();
        let odd = normalize::from_addresses(&layout, &[0x1008 as *mut c_void], &[]).unwrap();
        let good = normalize::from_addresses(&layout, &[0x1040 as *mut c_void], &[]).unwrap();
        assert!(table.check(&hole).is_err());
        assert!(table.check(&odd).is_err());
        assert!(table.check(&odd).is_err());
        assert!(table.check(&good).is_ok());
        assert_eq!(table.refusals(), 3);
        assert_eq!(
            table.refusals_by_rule(),
            vec![("required", 1), ("alignment", 2)]
        );
    }
}
