//! Longest-first dispatch of the uncut scans' sequences (session 34, helper lp34;
//! `DNNPLAN_GDN_SEQ_ORDER=0|1`, read once at plan build, both directions).
//!
//! The uncut scans run one block per (value part, head, sequence) on the grid `(x, HO, N)` with
//! the sequence `b = blockIdx.z`, and the hardware dispatches blocks in linear order (x, then y,
//! then z): on a ragged batch a long sequence late in `cu_seqlens` starts only when earlier short
//! sequences' blocks leave, so the scan's wall time exceeds the longest sequence's chunk count.
//! With [`flags::SEQ_ORDER`] the execute's first kernel (the chunk-table kernel,
//! `chunk_offsets_body` in kernels/include/gdn_fwd.cuh) also writes `seq_order[N]` (the sequences
//! by chunk count descending, ties by index ascending; into the chunk table's region,
//! [`super::params::WorkspaceLayout::seq_order`]), and the uncut scans serve sequence
//! `seq_order[blockIdx.z]` instead (`seq_of_block`): the forward's `gdn_fwd_slimscan_*_w4gx` /
//! `_w8gx`, the backward's scalar / slim uncut replays `gdn_bwd_fscan_gx{,4}{sc,scu,sl}` (P = 1)
//! and reverse scans `gdn_bwd_dscan_ov2gxsc` / `_ov2gxsh`. Every block computes exactly what it
//! computed before (only which block index serves which sequence changes): bitwise by
//! construction, a speed knob. Above [`SEQ_ORDER_MAX_SEQS`] sequences the kernel writes the
//! identity order (one block ranks at most one sequence per thread).
//!
//! By rule ([`SEQ_ORDER_RULE`], session 34) on for 2 ..= 1024 sequences: the ragged benchmark mix's
//! forward −10 % (its scan −16 %) and backward −2.6 %, the uniform shapes unchanged.

use super::params::{OFFSETS_THREADS, flags};

/// At most this many sequences are ranked (one per thread of the chunk-table kernel's block,
/// `gdn::SEQ_ORDER_MAX_SEQS`); beyond it the order is the identity.
pub const SEQ_ORDER_MAX_SEQS: i64 = OFFSETS_THREADS as i64;

/// One row of [`SEQ_ORDER_RULE`]: the order's state for batches of `min_seqs ..= max_seqs`
/// sequences.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SeqOrderRow {
    /// Fewest sequences the row covers.
    pub min_seqs: i64,
    /// Most sequences the row covers.
    pub max_seqs: i64,
    /// Whether the plan sets [`flags::SEQ_ORDER`].
    pub on: bool,
}

/// The rule (the first row covering `N` decides; none: off). One sequence has nothing to
/// reorder; above [`SEQ_ORDER_MAX_SEQS`] the kernel would write the identity. The plan does not
/// know the sequence lengths (the chunk-table kernel ranks them on the device; a uniform batch
/// gets the identity order), so the rule is by `N` only.
/// Session 34 (lp34, bench/gdn_device_lp34_run1.log, one process each, A B B A off / on / on /
/// off): the ragged mix's forward 0.4295 / 0.3859 / 0.3805 / 0.4265 ms (its w4gx scan 0.2751 /
/// 0.2325 / 0.2274 / 0.2724), its backward 1.528 / 1.490 / 1.488 / 1.532 ms (fscan_gx4sl 0.266 /
/// 0.233 / 0.234 / 0.271, dscan_ov2gxsc 0.443 / 0.434 / 0.431 / 0.436); the uniform shapes
/// unchanged: forward (4,8192,16) 0.3870 / 0.3869 / 0.3867 / 0.3887, (16,2048,32) 0.7031 /
/// 0.7058 / 0.7009 / 0.7067, backward (4,8192,16) 1.573 / 1.576 / 1.563 / 1.565. Hashes of
/// forward_parity and backward_parity with the order on equal base 83a5e86's, memcheck clean, the
/// gpu_gdn binary green with it: on from two sequences.
pub const SEQ_ORDER_RULE: &[SeqOrderRow] = &[SeqOrderRow {
    min_seqs: 2,
    max_seqs: SEQ_ORDER_MAX_SEQS,
    on: true,
}];

/// Whether a plan for `n_seqs` sequences dispatches longest-first: `DNNPLAN_GDN_SEQ_ORDER`'s value
/// (`0` off, `1` on; anything else or unset: [`SEQ_ORDER_RULE`]).
pub fn seq_order_on(value: Option<&str>, n_seqs: i64) -> bool {
    match value {
        Some("0") => false,
        Some("1") => true,
        _ => SEQ_ORDER_RULE
            .iter()
            .find(|r| (r.min_seqs..=r.max_seqs).contains(&n_seqs))
            .is_some_and(|r| r.on),
    }
}

/// The parameter-block flag bits for a plan of `n_seqs` sequences, `DNNPLAN_GDN_SEQ_ORDER` read
/// now (plan build).
pub fn seq_order_flags(n_seqs: i64) -> i32 {
    seq_order_flags_for(
        std::env::var("DNNPLAN_GDN_SEQ_ORDER").ok().as_deref(),
        n_seqs,
    )
}

/// [`seq_order_flags`] for the switch value `value`.
pub fn seq_order_flags_for(value: Option<&str>, n_seqs: i64) -> i32 {
    if seq_order_on(value, n_seqs) {
        flags::SEQ_ORDER
    } else {
        0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn switch_overrides_and_rule_by_sequence_count() {
        assert!(!seq_order_on(Some("0"), 10));
        assert!(seq_order_on(Some("1"), 10));
        assert!(seq_order_on(Some("1"), 1));
        let rule = |n| {
            SEQ_ORDER_RULE
                .iter()
                .find(|r| (r.min_seqs..=r.max_seqs).contains(&n))
                .is_some_and(|r| r.on)
        };
        for n in [1, 2, 10, 1024, 1025] {
            assert_eq!(seq_order_on(None, n), rule(n));
            assert_eq!(seq_order_on(Some("x"), n), rule(n));
        }
        // Never on for one sequence or beyond the ranked range; on in between (session 34).
        assert!(!seq_order_on(None, 1));
        assert!(!seq_order_on(None, SEQ_ORDER_MAX_SEQS + 1));
        assert!(
            seq_order_on(None, 2)
                && seq_order_on(None, 10)
                && seq_order_on(None, SEQ_ORDER_MAX_SEQS)
        );
        assert_eq!(seq_order_flags_for(None, 10), flags::SEQ_ORDER);
        assert_eq!(seq_order_flags_for(Some("0"), 10), 0);
    }

    #[test]
    fn rows_do_not_overlap() {
        for (i, a) in SEQ_ORDER_RULE.iter().enumerate() {
            assert!(a.min_seqs <= a.max_seqs && a.max_seqs <= SEQ_ORDER_MAX_SEQS);
            for b in &SEQ_ORDER_RULE[i + 1..] {
                assert!(a.max_seqs < b.min_seqs || b.max_seqs < a.min_seqs);
            }
        }
    }

    /// The kernel's ranking (seq_order_body) on the host: chunk counts descending, ties by index.
    fn host_order(lens: &[i64]) -> Vec<usize> {
        let cnt: Vec<i64> = lens.iter().map(|l| (l + 63) / 64).collect();
        let mut order = vec![0usize; cnt.len()];
        for (b, &c) in cnt.iter().enumerate() {
            let rank = cnt
                .iter()
                .enumerate()
                .filter(|&(b2, &c2)| c2 > c || (c2 == c && b2 < b))
                .count();
            order[rank] = b;
        }
        order
    }

    #[test]
    fn ranking_is_a_stable_longest_first_permutation() {
        // The ragged benchmark mix (bench/gdn_peers_bench.py).
        let mix = [8192, 100, 4096, 1, 2048, 7000, 0, 3000, 512, 5000];
        assert_eq!(host_order(&mix), vec![0, 5, 9, 2, 7, 4, 8, 1, 3, 6]);
        let mut by_sort: Vec<usize> = (0..mix.len()).collect();
        by_sort.sort_by_key(|&b| std::cmp::Reverse((mix[b] + 63) / 64));
        assert_eq!(host_order(&mix), by_sort);
        // Uniform chunk counts: the identity.
        assert_eq!(host_order(&[8192; 4]), vec![0, 1, 2, 3]);
        assert_eq!(host_order(&[65, 128, 100]), vec![0, 1, 2]);
    }
}
