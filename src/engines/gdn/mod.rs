//! Gated DeltaNet (GDN) family: the fp64 per-token reference (forward and backward), the
//! chunked UT/WY algorithm on the CPU that our CUDA kernels implement, the family analyzer and
//! the SM90 engine `gdn_sm90` serving `gdn` and `gdn_bwd`.
//!
//! Semantics follow `shared/spec/linear-attention.md` sections 1-4: THD tokens with
//! `cu_seqlens`, head grouping by consecutive groups, states stored V-major `[N, HO, V, K]`.
//! The family keeps the reference's id block (GDN, 20100); slots 0-2 are the reference's
//! engines (`gdn_frost`, `gdn_cutile`, `gdn_summary_frost`), so ours starts at slot 3.

/// Asserts at compile time that every row of the table `$table` sits at the index that
/// `$index` (an expression of the row `$row`, a fieldless enum) converts to: the tables indexed by
/// their variants' discriminants state that order once here instead of a loop each.
macro_rules! rows_in_discriminant_order {
    ($table:expr, $row:ident => $index:expr) => {
        const _: () = {
            let mut i = 0;
            while i < $table.len() {
                let $row = &$table[i];
                assert!($index as usize == i);
                i += 1;
            }
        };
    };
}

pub mod analyzer;
pub mod backward;
#[cfg(test)]
mod bwd_plan_dump;
pub mod bwd_select;
pub mod chain;
pub mod chunk_factors;
pub mod chunked;
pub mod engine;
pub mod fused16;
pub mod fwd_overlap;
pub mod fwd_rows;
#[cfg(test)]
mod mirror;
pub mod occupancy;
pub mod params;
pub mod pdl;
pub mod port_guards;
pub mod reference;
pub mod seq_order;
pub mod staged;
pub mod switches;
pub mod tma_maps;

use crate::dispatch::manifest::{Family, Slot};

/// The family's manifest row.
pub const FAMILY: Family = Family {
    name: "gdn",
    base: 20_100,
    anchors: &["GDN", "GDN_BWD"],
    analyzer: Some(analyzer::analyze),
    validator: None,
    heuristics: None,
    backend_guard: None,
    slots: &[Slot {
        slot: 3,
        name: engine::ENGINE_NAME,
        opt_in: false,
        engine: &engine::GdnSm90,
    }],
};
