//! The uncut slim forward with its prep and its output scan at the same time (session 15,
//! `kernels/include/gdn_fwd_slim.cuh`, "prep ∥ output scan"): when the plan overlaps them, and how
//! many blocks the persistent prep (the producer) gets.
//!
//! Contract: the overlapped pair is `gdn_fwd_chunk_order` (the chunk table, the hand-over flags
//! zeroed, the scan's chunk order), the persistent prep `gdn_fwd_slimprep_*_k128_ov` launched
//! first and the 4-warp scan `gdn_fwd_slimscan_*_k128_w4ov` launched programmatic after it
//! (`kernels/include/dnnp_overlap.cuh`'s contract: deadlock-free whatever is resident). Its O and
//! final states are bitwise the non-overlapped slim forward's (the same per-tile and per-warp
//! arithmetic; only the order of the prep's tiles and the waits change). The producer's grid is
//! as many blocks as fit beside one scan block on every SM ([`blocks_beside`] over
//! [`SM90_BUDGET`], [`super::occupancy`]; both kernels ask for the largest shared-memory
//! carveout), so that the scan's blocks find room while the prep runs. Overlap on the uncut slim
//! path as `DNNPLAN_GDN_FWD_OVERLAP=0|1` (read at plan build) says, else by [`FWD_OVERLAP_RULE`]
//! (none since session 19: unset never overlaps).

use super::engine::{SLIM_PREP_OV, SLIM_SCAN_OV};
use super::occupancy::{BlockUse, SM90_BUDGET, blocks_beside};
use super::params::FWD_OVERLAP_MAX_SEQS;

/// The overlapped scan's block at K = V = `k` (the row [`SLIM_SCAN_OV`], no launch bounds beyond
/// its threads).
pub fn scan_block(k: u64) -> BlockUse {
    SLIM_SCAN_OV.block(k, 1)
}

/// The persistent prep's block at K = `k` (the row [`SLIM_PREP_OV`], its launch bounds
/// included).
pub fn prep_block(k: u64) -> BlockUse {
    SLIM_PREP_OV.block(k)
}

/// The persistent prep's grid for `units` (chunk slot, head) tiles at K = `k` on `sms` SMs:
/// the blocks that fit beside one scan block per SM (or `per_sm` of them, at least 1, at most
/// what fits: the diagnostic `DNNPLAN_GDN_FWD_OVERLAP_PER_SM`), at most one per unit (0: no
/// room, no overlap).
pub fn prep_grid(k: u64, sms: u64, units: u64, per_sm: Option<u64>) -> u64 {
    let fit = blocks_beside(&SM90_BUDGET, &scan_block(k), &prep_block(k));
    (per_sm.map_or(fit, |n| n.clamp(1, fit.max(1)).min(fit)) * sms).min(units)
}

/// When the uncut slim forward overlaps its prep and output scan, as data: the scan's blocks
/// (2 per (sequence, head) pair at V = 128) fill at least `min_fill_num / min_fill_den` and at
/// most `max_fill_num / max_fill_den` waves of the SMs (one scan block per SM: more would start
/// only as earlier ones finish; far fewer leave the scan, slowed by the prep blocks beside it, as
/// the long pole) and the batch has at most [`FWD_OVERLAP_MAX_SEQS`] sequences (the chunk order's
/// table).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FwdOverlapRule {
    /// Numerator of the smallest fill of the SMs by the scan's blocks.
    pub min_fill_num: u64,
    /// Denominator of the smallest fill.
    pub min_fill_den: u64,
    /// Numerator of the largest fill of the SMs by the scan's blocks.
    pub max_fill_num: u64,
    /// Denominator of the largest fill.
    pub max_fill_den: u64,
}

/// The forward's overlap rule: none (session 19). The window it had (session 15, ovf15: from 3/4
/// to one wave of scan blocks, `FwdOverlapRule { min_fill: 3/4, max_fill: 1/1 }`) paid while the
/// slim prep was the slower of the pair: H200, bf16, K = V = 128, overlap off / on alternating in
/// one process, (4, 8192, 16), 128 blocks (0.97 waves), 0.5843 / 0.5703 ms (1.024x); (1, 32768,
/// 16) uncut (`batch_invariant`), 32 blocks (0.24 waves), 1.5768 / 1.6814 (0.938x); beyond one
/// wave (forced): the ragged mix, 320 blocks, 0.6369 / 0.8013; (16, 2048, 32), 1024 blocks,
/// 1.0517 / 1.4643. Since the slim prep runs 17-18 % faster (session 18, prep18) the overlap loses
/// at its best shape too: (4, 8192, 16) overlap on / off, three H200 runs of session 19 (two
/// processes alternating A B B A A B and rule / off / off / rule, bench/gdn_results.md):
/// 0.5550 / 0.5441 ms, 0.5535 / 0.5395, 0.5501 / 0.5385 (0.980x to 0.975x). The overlapped kernels
/// stay, bitwise the plain ones, behind `DNNPLAN_GDN_FWD_OVERLAP=1`.
pub const FWD_OVERLAP_RULE: Option<FwdOverlapRule> = None;

impl FwdOverlapRule {
    /// Whether a scan of `scan_blocks` blocks over `n_seqs` sequences on `sms` SMs overlaps.
    pub fn overlap(&self, scan_blocks: u64, n_seqs: u64, sms: u64) -> bool {
        scan_blocks > 0
            && n_seqs <= FWD_OVERLAP_MAX_SEQS
            && self.min_fill_den * scan_blocks >= self.min_fill_num * sms
            && self.max_fill_den * scan_blocks <= self.max_fill_num * sms
    }
}

/// Whether the plan runs the overlapped kernels: never where they do not apply (`applies`: the
/// uncut slim path with room for the producer); else `switch` (`DNNPLAN_GDN_FWD_OVERLAP`) `"0"`
/// never, `"1"` (and the diagnostic `"seq"`, [`sequential`]) always, anything else
/// [`FWD_OVERLAP_RULE`] (if any) where `by_rule_allowed` (no other switch forced the scan).
pub fn pick(
    applies: bool,
    switch: Option<&str>,
    by_rule_allowed: bool,
    scan_blocks: u64,
    n_seqs: u64,
    sms: u64,
) -> bool {
    if !applies {
        return false;
    }
    match switch {
        Some("0") => false,
        Some("1" | "seq") => true,
        _ => {
            by_rule_allowed
                && FWD_OVERLAP_RULE.is_some_and(|rule| rule.overlap(scan_blocks, n_seqs, sms))
        }
    }
}

/// Whether `switch` (`DNNPLAN_GDN_FWD_OVERLAP`) asks for the overlapped kernels run one after the
/// other (`"seq"`: the scan launched normally, so it starts once the persistent prep completed;
/// a diagnostic for the scan alone and the prep alone at the overlap's shapes: same outputs).
pub fn sequential(switch: Option<&str>) -> bool {
    switch == Some("seq")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::gdn::params::slim_scan_smem_bytes;

    #[test]
    fn two_prep_blocks_fit_beside_one_scan_block() {
        // The scan: 139,264 B, 128 threads of at most 256 registers (32,768); the prep: 36,352 B,
        // 256 threads of at most 64 registers (16,384).
        let (scan, prep) = (scan_block(128), prep_block(128));
        assert_eq!((scan.smem, scan.regs(&SM90_BUDGET)), (139_264, 32_768));
        assert_eq!((prep.smem, prep.regs(&SM90_BUDGET)), (36_352, 16_384));
        // Shared memory leaves 2 (93,184 B / 37,376), registers exactly 2, threads 7.
        assert_eq!(blocks_beside(&SM90_BUDGET, &scan, &prep), 2);
        // The default 3-stage w4 scan (202,752 B) leaves no room for a prep block.
        let w4 = BlockUse {
            smem: u64::from(slim_scan_smem_bytes(128, 4, 3)),
            ..scan
        };
        assert_eq!(blocks_beside(&SM90_BUDGET, &w4, &prep), 0);
        // A block that alone does not fit leaves nothing.
        let huge = BlockUse {
            smem: 300_000,
            ..scan
        };
        assert_eq!(blocks_beside(&SM90_BUDGET, &huge, &prep), 0);
        // The persistent grid: 2 per SM, at most one block per unit.
        assert_eq!(prep_grid(128, 132, 8192, None), 264);
        assert_eq!(prep_grid(128, 132, 100, None), 100);
        // The diagnostic per-SM count: 1, or at most what fits.
        assert_eq!(prep_grid(128, 132, 8192, Some(1)), 132);
        assert_eq!(prep_grid(128, 132, 8192, Some(5)), 264);
        assert_eq!(prep_grid(128, 132, 8192, Some(0)), 132);
    }

    /// Session 15's window (3/4 to one wave), the shape of any future rule.
    const WINDOW: FwdOverlapRule = FwdOverlapRule {
        min_fill_num: 3,
        min_fill_den: 4,
        max_fill_num: 1,
        max_fill_den: 1,
    };

    #[test]
    fn an_overlap_window_at_the_benchmark_shapes() {
        let sms = 132;
        // (4, 8192, 16): 4 · 16 · 2 = 128 scan blocks, one wave -> inside.
        assert!(WINDOW.overlap(128, 4, sms));
        // (16, 2048, 32): 1024 blocks, 7.8 waves -> not.
        assert!(!WINDOW.overlap(1024, 16, sms));
        // (1, 32768, 16) uncut (batch_invariant): 32 blocks, a quarter wave -> not.
        assert!(!WINDOW.overlap(32, 1, sms));
        // At the edges: 99 to 132 blocks are inside, 98 and 134 are not; more sequences than the
        // order table ranks are not; an empty scan is not.
        assert!(WINDOW.overlap(132, 64, sms));
        assert!(WINDOW.overlap(99, 33, sms));
        assert!(!WINDOW.overlap(98, 49, sms));
        assert!(!WINDOW.overlap(132, 66, sms));
        assert!(!WINDOW.overlap(134, 4, sms));
        assert!(!WINDOW.overlap(0, 0, sms));
    }

    #[test]
    fn by_rule_the_forward_does_not_overlap() {
        // Session 19: no shape overlaps unless the switch asks (the window's best shape included).
        assert_eq!(FWD_OVERLAP_RULE, None);
        for blocks in [32, 99, 128, 132, 1024] {
            assert!(!pick(true, None, true, blocks, 4, 132), "{blocks} blocks");
        }
    }

    #[test]
    fn the_switch_forces_either_way_only_where_it_applies() {
        // (applies, switch, by_rule_allowed, blocks) -> overlap, at 4 sequences on 132 SMs.
        let cases = [
            (true, None, true, 128, false),
            (true, None, false, 128, false),
            (true, Some("1"), true, 128, true),
            (true, None, true, 1024, false),
            (true, Some("1"), false, 1024, true),
            (true, Some("0"), true, 128, false),
            (true, Some("seq"), false, 1024, true),
            (true, Some("x"), true, 128, false),
            (false, Some("1"), true, 128, false),
            (false, None, true, 128, false),
        ];
        for (applies, switch, allowed, blocks, want) in cases {
            assert_eq!(
                pick(applies, switch, allowed, blocks, 4, 132),
                want,
                "{applies} {switch:?} {allowed} {blocks}"
            );
        }
        assert!(sequential(Some("seq")) && !sequential(Some("1")) && !sequential(None));
    }
}
