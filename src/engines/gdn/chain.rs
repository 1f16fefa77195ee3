//! The fp32 piece-chain kernel of both directions (`seed_{j+1} = seed_j · M_j + H_j`, the
//! forward's `gdn_fwd_chain*`, the backward's `gdn_bwd_pchain*` / `gdn_bwd_dchain*`): which
//! bundled body runs it, as one table of rows (switch value, forward entry stem, backward
//! kernels).
//!
//! Contract: every row is bitwise the default (same FMA order; only where `M_j` is read from
//! differs), so `DNNPLAN_GDN_CHAIN` (read at plan build, both directions) changes speed, never
//! numerics. An unknown or empty value selects the default. Every row launches
//! `(V / rows, HO, N)` blocks of `CHAIN_THREADS` with static shared memory only.

use super::backward::BwdKernel;
use super::params::{CHAIN_ROWS, CHAIN3_ROWS};

/// One piece-chain body.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ChainVariant {
    /// `DNNPLAN_GDN_CHAIN` value selecting it.
    pub switch: &'static str,
    /// Forward entry stem (`<stem>_k<K>` in `gdn_fwd`).
    pub fwd_stem: &'static str,
    /// The backward's forward-direction chain.
    pub pchain: BwdKernel,
    /// The backward's reverse chain.
    pub dchain: BwdKernel,
    /// State rows per block (the grid is `(V / rows, HO, N)`).
    pub rows: u64,
}

/// Every bundled chain body. `v1`: `fwd_chain_body` (each thread reads `M_j[m][c]` from
/// global memory in the FMA loop, a dependent load per 16 FMAs; the default until session 12).
/// `v2`: `fwd_chain2_body` (session 12: `M_j` streamed into shared memory by cp.async in
/// 16-row tiles, three in flight across pieces, the seed rows read by 16-byte broadcast loads,
/// `H_j` loaded before the piece's first tile; `kernels/include/gdn_fwd_fast.cuh`).
/// `v3`: `v2` on 16 state rows per block (twice the blocks: 128 instead of 64 at
/// (1, 32768, 16) on 132 SMs).
pub const CHAIN_VARIANTS: [ChainVariant; 3] = [
    ChainVariant {
        switch: "v1",
        fwd_stem: "gdn_fwd_chain",
        pchain: BwdKernel::Pchain,
        dchain: BwdKernel::Dchain,
        rows: CHAIN_ROWS,
    },
    ChainVariant {
        switch: "v2",
        fwd_stem: "gdn_fwd_chain2",
        pchain: BwdKernel::Pchain2,
        dchain: BwdKernel::Dchain2,
        rows: CHAIN_ROWS,
    },
    ChainVariant {
        switch: "v3",
        fwd_stem: "gdn_fwd_chain3",
        pchain: BwdKernel::Pchain3,
        dchain: BwdKernel::Dchain3,
        rows: CHAIN3_ROWS,
    },
];

impl ChainVariant {
    /// The body a plan runs unless `DNNPLAN_GDN_CHAIN` names another (`v3`).
    pub const DEFAULT: ChainVariant = CHAIN_VARIANTS[2];

    /// The row `value` names, else [`ChainVariant::DEFAULT`].
    pub fn pick(value: &str) -> ChainVariant {
        CHAIN_VARIANTS
            .iter()
            .copied()
            .find(|c| c.switch == value)
            .unwrap_or(ChainVariant::DEFAULT)
    }

    /// The row `DNNPLAN_GDN_CHAIN` names (read now: at plan build).
    pub fn from_env() -> ChainVariant {
        ChainVariant::pick(&std::env::var("DNNPLAN_GDN_CHAIN").unwrap_or_default())
    }

    /// The forward module's entry at `K` (= V).
    pub fn fwd_name(self, k: i64) -> String {
        format!("{}_k{k}", self.fwd_stem)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_and_every_switch_selects_its_row() {
        assert_eq!(ChainVariant::pick("").switch, "v3");
        assert_eq!(ChainVariant::pick("nonsense"), ChainVariant::DEFAULT);
        assert_eq!(ChainVariant::DEFAULT.switch, "v3");
        assert_eq!(
            ChainVariant::pick("v2").fwd_name(128),
            "gdn_fwd_chain2_k128"
        );
        for row in CHAIN_VARIANTS {
            assert_eq!(ChainVariant::pick(row.switch), row);
        }
    }

    #[test]
    fn every_row_names_entries_of_both_bundled_modules() {
        use crate::cuda::kernels;
        let fwd = kernels::find("gdn_fwd").expect("bundled gdn_fwd module");
        let bwd = kernels::find("gdn_bwd").expect("bundled gdn_bwd module");
        let prep = crate::engines::gdn::engine::PrepVariant::DEFAULT;
        for row in CHAIN_VARIANTS {
            for k in [64, 128] {
                let name = row.fwd_name(k);
                assert!(fwd.has_function(&name), "{name} is not bundled in gdn_fwd");
                for kernel in [row.pchain, row.dchain] {
                    let name = kernel.name("bf16", k, prep);
                    assert!(bwd.has_function(&name), "{name} is not bundled in gdn_bwd");
                }
            }
        }
    }
}
