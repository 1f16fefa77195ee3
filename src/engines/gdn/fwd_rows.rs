//! The forward's kernel rows of `gdn_sm90`, as data (split from [`super::engine`] in session 39):
//! every output scan, piece summary and prep the forward can launch ([`FwdPass`], [`PrepPass`]:
//! entry, warps, shared-memory layout, blocks per SM), the tables the schedule chooses from
//! ([`FWD_SCANS`], [`FWD_SUMS`], [`SLIM_SCANS`], [`SLIM_PIECES`], [`SLIM_PIECES_FIRST`],
//! [`SLIM_FIRST_SCANS`], [`SLIM_FIRST_SUMS`], [`PREP_VARIANTS`], [`FACTOR_VARIANTS`]), the rules
//! by which it chooses (`*_BY_RULE`, [`FWD_SCAN_RULE`], [`FWD_PIECE_PATH`]) and the switches that
//! name a row. [`super::engine::FwdChoice`] picks among them; [`super::engine`] re-exports every
//! item, so its paths stay valid.
//!
//! Contract: a row states a kernel's launch shape and shared memory exactly as its entry in
//! `kernels/src/gdn_fwd.cu` (or `gdn_bwd.cu` for the backward's preps) declares them; the CPU
//! tests of [`super::engine`] check every row's entry against the bundled cubin.

use super::analyzer::GdnFacts;
#[cfg(doc)]
use super::engine::FwdChoice;
use super::fwd_overlap;
use super::occupancy::BlockUse;
#[cfg(doc)]
use super::params::FwdFastParams;
use super::params::{
    BWD_PREP_SLIM_MIN_BLOCKS, CHAIN3_ROWS, PREP3_THREADS, PREP6_MIN_BLOCKS, SCAN_STAGES,
    SCANX_S1_MIN_BLOCKS, SCANX_S1_STAGES, SLIM_OV_STAGES, SLIM_PREP_MIN_BLOCKS,
    SLIM_PREP_OV_MIN_BLOCKS, SLIM_PREP_WG_MIN_BLOCKS, SLIM_SUM_MIN_BLOCKS, SLIM_SUM3_MIN_BLOCKS,
    SLIM_SUM3_STAGES, SLIM_W4_STAGES, SLIM_W4D_MIN_BLOCKS, SLIM_W8_STAGES, SUM_STAGES,
    SUM1_MIN_BLOCKS, WorkspaceLayout, dscan_mma_stages_smem_bytes, fast_smem_bytes,
    prep7_smem_bytes, scanx_smem_bytes, slim_piece_smem_bytes, slim_prep_l_smem_bytes,
    slim_prep_smem_bytes, slim_scan_smem_bytes, slim_scan_tma_smem_bytes, slim_sum_smem_bytes,
    slim_sum_stages_smem_bytes,
};
#[cfg(doc)]
use crate::cuda::Function;

/// Which output-scan kernel the forward runs. Every one gives bitwise the same O and states
/// (bench/gdn_scan_host_emu.cpp; on the H200 the O / state hashes); the discriminant is the row
/// in [`FWD_SCANS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum ScanVariant {
    /// `gdn_fwd_scanx_*_w4`: 4 warps × 16 value rows per block, 3 cp.async stages.
    Warps4,
    /// `gdn_fwd_scanx_*_w8`: 8 warps, all 128 value rows per block (V = 128 only).
    Warps8,
    /// `gdn_fwd_scanx_*_k128_w4p` (session 13): w4 on one stage refilled in two phased halves
    /// (82,944 B: two blocks per SM; K = 128 only).
    Warps4Phased,
}

/// One bundled output scan, as data.
pub struct ScanRow {
    /// The scan this row describes (its discriminant is the row's index).
    pub variant: ScanVariant,
    /// The `DNNPLAN_GDN_FWD_SCAN` value that selects it, also the entry's suffix:
    /// `gdn_fwd_scanx_<tag>_k<K>_<switch>`.
    pub switch: &'static str,
    /// Warps per block (16 value rows each).
    pub warps: u64,
    /// cp.async stages (the shared memory: `fast_smem_bytes(k, warps, stages, true)`).
    pub stages: u64,
    /// Blocks per SM (shared memory and registers; the piece count is set by it).
    pub per_sm: u64,
    /// Bundled for K = V = 128 only.
    pub k128_only: bool,
}

/// Every bundled output scan, in [`ScanVariant`] order: switch <-> entry <-> launch shape.
pub const FWD_SCANS: [ScanRow; 3] = [
    ScanRow {
        variant: ScanVariant::Warps4,
        switch: "w4",
        warps: 4,
        stages: SCAN_STAGES,
        per_sm: 1,
        k128_only: false,
    },
    ScanRow {
        variant: ScanVariant::Warps8,
        switch: "w8",
        warps: 8,
        stages: 2,
        per_sm: 1,
        k128_only: true,
    },
    ScanRow {
        variant: ScanVariant::Warps4Phased,
        switch: "w4p",
        warps: 4,
        stages: SCANX_S1_STAGES,
        per_sm: SCANX_S1_MIN_BLOCKS,
        k128_only: true,
    },
];

/// The uncut scan rule, first row that applies: at least `min_waves` waves of 4-warp blocks
/// (two per (sequence, head) pair at V = 128) on the GPU and the scan serves K -> `scan`.
/// H200, same run: w8 0.556 vs w4 0.685 ms at 512 pairs (8 waves); w4 0.411 vs w8 0.537 ms on a
/// ragged batch of 160 pairs, whose longest sequence then runs at the slower per-block pace;
/// w4p ties w8 where w8 runs and loses to w4 below (session 12, occ12): no row.
pub const FWD_SCAN_RULE: [(u64, ScanVariant); 2] =
    [(4, ScanVariant::Warps8), (0, ScanVariant::Warps4)];

/// The piece path's (scan, summary) pairs, first that serves K: their blocks per SM set the
/// piece count ([`FwdChoice::default_for`]). Session 13 (H200, same run, both orders,
/// bench/gdn_device_occ13_run1.log): at (1, 32768, 16) w4p + sum1 at the rule's P = 7 ran the
/// whole forward in 0.951 / 0.951 ms against 1.027 / 1.004 ms for w4 + the two-stage summary at
/// P = 4 (the session-12 path), and ahead of every other schedule measured (P = 6, 8; sum1 at four
/// blocks per SM; the two-stage summary with w4p). K = 64 keeps the session-12 path (w4p and sum1
/// are K = 128 only).
pub const FWD_PIECE_PATH: [(ScanVariant, SumVariant); 2] = [
    (ScanVariant::Warps4Phased, SumVariant::Phased3),
    (ScanVariant::Warps4, SumVariant::Stages2),
];

/// The piece path on slim factors (session 14, kernels/include/gdn_fwd_slim.cuh), as data: the
/// summary `gdn_fwd_slimsum_<tag>_k128` (two stages, 73,728 B) and the seeded output scan
/// `gdn_fwd_slimscan_<tag>_k128_w4d` (q, k, scalars double-buffered, v, T, A single:
/// 111,616 B), and their blocks per SM (which set the piece count as the full path's rows
/// do). The chain kernel is the full path's (same H_j, M_j, seed formats).
pub struct SlimPieceRow {
    /// The seeded output scan.
    pub scan: FwdPass,
    /// Blocks per SM of the seeded scan.
    pub scan_per_sm: u64,
    /// The summary pass.
    pub sum: FwdPass,
    /// Blocks per SM of the summary.
    pub sum_per_sm: u64,
}

/// The slim piece path (K = V = 128 only).
pub const SLIM_PIECES: SlimPieceRow = SlimPieceRow {
    scan: FwdPass {
        stem: SLIM_SCAN_STEM,
        suffix: "w4d",
        warps: 4,
        smem: PassSmem::SlimPiece,
    },
    scan_per_sm: SLIM_W4D_MIN_BLOCKS,
    sum: FwdPass {
        stem: "slimsum",
        suffix: "",
        warps: 4,
        smem: PassSmem::SlimSum,
    },
    sum_per_sm: SLIM_SUM_MIN_BLOCKS,
};

/// The slim piece path with its products on the warpgroup (session 24, helper pw24;
/// kernels/include/gdn_fwd_slim.cuh, `slim_chunk_wg` with OUT = false and the seeded scan's
/// hooks): the summary `gdn_fwd_slimsum_<tag>_k128_gs` (P' = X kᵀ by wgmma m64n64k16, k in the
/// 128-byte swizzle) and the seeded output scan `gdn_fwd_slimscan_<tag>_k128_w4dgs` (P', O' by
/// wgmma, q, k swizzled); [`SLIM_PIECES`]' grids, threads, shared memory (the same layouts: their
/// q, k regions start at multiples of 1,024 B) and blocks per SM. fp32 accumulation in the tensor
/// core's order: not bitwise [`SLIM_PIECES`] by construction. `DNNPLAN_GDN_FWD_PIECE=gs` forces it,
/// `d` the mma.sync passes.
pub const SLIM_PIECES_WG: SlimPieceRow = SlimPieceRow {
    scan: FwdPass {
        suffix: "w4dgs",
        ..SLIM_PIECES.scan
    },
    sum: FwdPass {
        suffix: "gs",
        ..SLIM_PIECES.sum
    },
    ..SLIM_PIECES
};

/// The slim piece path with its whole chunk step on the warpgroup (session 24, helper pwx24;
/// kernels/include/gdn_fwd_slim.cuh, `slim_chunk_tail_wg` with OUT = false / WITH_V = false for
/// the summary and the seeded scan's MID / UPD hooks): the summary `gdn_fwd_slimsum_<tag>_k128_gx`
/// (P', Uᵀ = Z Tᵀ and the state update by wgmma, k and T in the 128-byte swizzle) and the seeded
/// output scan `gdn_fwd_slimscan_<tag>_k128_w4dgx` (P', O', Uᵀ, O += Uᵀ Aᵀ and the state update by
/// wgmma, q, k, T, A swizzled); [`SLIM_PIECES`]' grids, threads, shared memory (T, A regions start
/// at multiples of 1,024 B: the same layouts and sizes) and blocks per SM.
/// `DNNPLAN_GDN_FWD_PIECE=gx` forces it.
pub const SLIM_PIECES_WGX: SlimPieceRow = SlimPieceRow {
    scan: FwdPass {
        suffix: "w4dgx",
        ..SLIM_PIECES.scan
    },
    sum: FwdPass {
        suffix: "gx",
        ..SLIM_PIECES.sum
    },
    ..SLIM_PIECES
};

/// How much of a slim scan's chunk step runs on wgmma (the rest on mma.sync): one value per path
/// ([`FwdChoice::scan_wgmma`] uncut, [`FwdChoice::piece_wgmma`] cut into pieces).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WgmmaDepth {
    /// None: the mma.sync scans (`w4`, `w8`; the piece path's `d`).
    Off,
    /// The products with the state, P' and O' ([`SLIM_SCAN_W4GS`]; [`SLIM_PIECES_WG`]).
    Products,
    /// The whole chunk step ([`SLIM_SCAN_W4GX`], [`SLIM_SCAN_W8GX`]; [`SLIM_PIECES_WGX`]).
    Step,
    /// The whole chunk step with the next stage's T, A, v and scalar copies issued in the step's
    /// tail ([`SLIM_SCAN_W4GXS`]: the uncut 4-warp scan only; bitwise [`WgmmaDepth::Step`]'s).
    StepSplit,
    /// [`WgmmaDepth::StepSplit`] on the 8-warp scan too ([`SLIM_SCAN_W4GXS`],
    /// [`SLIM_SCAN_W8GXS`]; bitwise [`WgmmaDepth::Step`]'s).
    StepSplitAll,
    /// [`WgmmaDepth::StepSplit`] with O stored by the o tensor map ([`SLIM_SCAN_W4GXT`]: the uncut
    /// 4-warp scan only, 8 warps keep [`SLIM_SCAN_W8GX`]; bitwise [`WgmmaDepth::Step`]'s).
    StepTmaO,
    /// [`WgmmaDepth::StepTmaO`] with q, k loaded by the q, k tensor maps ([`SLIM_SCAN_W4GXU`]: the
    /// uncut 4-warp scan only, 8 warps keep [`SLIM_SCAN_W8GX`]; bitwise [`WgmmaDepth::Step`]'s).
    StepTmaIo,
    /// [`WgmmaDepth::StepTmaO`] with the O store ahead of the tail's copies ([`SLIM_SCAN_W4GXV`]:
    /// the uncut 4-warp scan only, 8 warps keep [`SLIM_SCAN_W8GX`]; bitwise [`WgmmaDepth::Step`]'s).
    StepTmaOFirst,
}

/// How much of the slim piece path's passes runs on wgmma by rule (unless
/// `DNNPLAN_GDN_FWD_PIECE` says): the whole step, [`SLIM_PIECES_WGX`].
/// H200, session 24: the products only ([`SLIM_PIECES_WG`], helper pw24,
/// bench/gdn_device_pw24_run1.log, processes B T T B, T with `gs`; ms): the whole forward at
/// (1, 32768, 16), P = 7, 0.6336 / 0.6347 vs the mma.sync passes' 0.7184 / 0.7196 (summary 0.188 /
/// 0.194 vs 0.224 / 0.222, seeded scan 0.232 / 0.228 vs 0.285 / 0.286); forced P = 4 at
/// (4, 8192, 16) 0.6072 / 0.6065 vs 0.6764 / 0.6817. The whole step (helper pwx24,
/// bench/gdn_device_pwx24_run1.log, T with `gx`, B `gs`): 0.6023 / 0.6063 vs 0.6376 / 0.6352
/// (summary 0.180 / 0.183 vs 0.193 / 0.192, seeded scan 0.210 / 0.212 vs 0.236 / 0.235); forced
/// P = 4 / 2 at (4, 8192, 16) −4.8 % / −3.8 %; forced P = 2 at (1, 32768, 16) +1.6 % (the
/// summary's 64-block grid). The forward tests' hashes by rule and at 7 and 2 pieces equal the
/// mma.sync passes', memcheck at 7 pieces clean.
pub const SLIM_PIECE_WGMMA_BY_RULE: WgmmaDepth = WgmmaDepth::Step;

/// `DNNPLAN_GDN_FWD_PIECE`'s value as [`FwdChoice::piece_wgmma`]: `gx` ([`SLIM_PIECES_WGX`]'s
/// summary suffix) the whole step, `gs` ([`SLIM_PIECES_WG`]'s) the products, `d` none, else the
/// rule's.
pub(super) fn piece_switch(value: Option<&str>) -> Option<WgmmaDepth> {
    match value {
        Some(x) if x == SLIM_PIECES_WGX.sum.suffix => Some(WgmmaDepth::Step),
        Some(x) if x == SLIM_PIECES_WG.sum.suffix => Some(WgmmaDepth::Products),
        Some("d") => Some(WgmmaDepth::Off),
        _ => None,
    }
}

/// The slim wgmma piece path ([`SLIM_PIECES_WGX`]) with its first piece run early (session 32,
/// helper pc32; kernels/include/gdn_fwd_slim.cuh `PART` / `MID`, gdn_fwd_fast.cuh `FROM1`), as
/// data. The first piece needs no seed but the initial state, so its output scan runs beside the
/// summary instead of after the chain: launches `first` (its end state is piece 1's seed; it lets
/// the next grid start right after its entry wait), `sum` (programmatic, with no entry wait: it
/// starts once every `first` block passed its own wait, and every block waits for `first` before
/// it exits), the chain from seed 1, then `rest`. No summary of the first piece (its `H_0`, `M_0`)
/// and a seeded scan of P − 1 pieces instead of P. The same per-piece arithmetic as
/// [`SLIM_PIECES_WGX`]: without an initial state piece 1's seed is `H_0` bitwise (the chain's
/// `0 · M_0 + H_0`), with one it is the scan's end state instead of `X_0 · M_0 + H_0` (exact
/// algebra, another rounding). Grids, threads, shared memory and blocks per SM of
/// [`SLIM_PIECES`]; the piece count is the same rule's.
pub struct PieceFirstRow {
    /// The first piece's output scan, grid `(V / 64, HO, N)` (w4dgx's two-stage layout: a
    /// summary block fits beside it).
    pub first: FwdPass,
    /// The same on w4gx's three stages at one block per SM (session 34, helper fp34): no summary
    /// block beside it, the same per-warp arithmetic and seed store. The piece count's room
    /// bound below never binds on the piece path (`2 · blocks ≤ SMs`) with either first scan.
    pub first_wave: FwdPass,
    /// The output scan of pieces 1 ..= P − 1, grid `(V / 64, HO, N·(P − 1))`, two blocks per SM.
    pub rest: FwdPass,
    /// The same on three stages at one block per SM (w4gx's layout), where those blocks fit in
    /// one wave (`(P − 1) · blocks per piece ≤ rest_per_sm · SMs`).
    pub rest_wave: FwdPass,
    /// The blocks per SM the piece count gives the other pieces' scan: `P = 1 + ⌊rest_per_sm ·
    /// SMs / scan blocks per piece⌋`, capped by the summary's room beside the first piece (its
    /// [`SLIM_PIECES`]' blocks per SM less what the first piece's blocks take), at most 16.
    pub rest_per_sm: u64,
    /// The summary of pieces 1 ..= P − 2, grid `(2·V / 64, HO, N·(P − 2))` (none at P = 2).
    pub sum: FwdPass,
    /// The chain from seed 1 (entry `<stem>_k<K>`; none at P = 2).
    pub chain_stem: &'static str,
    /// The state rows per block of that chain (its grid is `(V / rows, HO, N)`).
    pub chain_rows: u64,
}

/// [`PieceFirstRow`]'s kernels: `gdn_fwd_slimscan_<tag>_k128_w4dgx0` / `_w4gx0` / `_w4dgxr` /
/// `_w4gxr`, `gdn_fwd_slimsum_<tag>_k128_gxr`, `gdn_fwd_chain3r_k128`.
pub const SLIM_PIECES_FIRST: PieceFirstRow = PieceFirstRow {
    first: FwdPass {
        suffix: "w4dgx0",
        ..SLIM_PIECES.scan
    },
    first_wave: FwdPass {
        suffix: "w4gx0",
        ..SLIM_SCAN_W4GX
    },
    rest: FwdPass {
        suffix: "w4dgxr",
        ..SLIM_PIECES.scan
    },
    rest_wave: FwdPass {
        suffix: "w4gxr",
        ..SLIM_SCAN_W4GX
    },
    rest_per_sm: 1,
    sum: FwdPass {
        suffix: "gxr",
        ..SLIM_PIECES.sum
    },
    chain_stem: "gdn_fwd_chain3r",
    chain_rows: CHAIN3_ROWS,
};

impl PieceFirstRow {
    /// The piece count on `sms` SMs for `blocks` 4-warp scan blocks per piece (see
    /// [`PieceFirstRow::rest_per_sm`]); 1: do not cut.
    pub fn pieces(&self, blocks: u64, sms: u64) -> u64 {
        if blocks == 0 {
            return 1;
        }
        let sum_per_sm = SLIM_PIECES.sum_per_sm;
        let room = (sum_per_sm * sms).saturating_sub((sum_per_sm - 1) * blocks);
        (1 + self.rest_per_sm * sms / blocks)
            .min(2 + room / (2 * blocks))
            .clamp(1, 16)
    }

    /// Whether the other pieces' scan of `pieces` pieces with `blocks` scan blocks per piece fits
    /// in one wave at [`PieceFirstRow::rest_per_sm`] (then [`PieceFirstRow::rest_wave`] runs).
    pub fn rest_in_one_wave(&self, pieces: u64, blocks: u64, sms: u64) -> bool {
        pieces.saturating_sub(1) * blocks <= self.rest_per_sm * sms
    }
}

/// The first piece's output scan on the first-early path ([`SLIM_PIECES_FIRST`]) and the first
/// piece's length with it, as data (session 34, helper fp34): one row per first scan.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstScanRow {
    /// The kernel ([`PieceFirstRow::first`] or [`PieceFirstRow::first_wave`]); its suffix is the
    /// value of `DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN` that forces it.
    pub pass: FwdPass,
    /// The first piece's length by rule with this scan at [`FirstScanRow::scale_pieces`]
    /// pieces, in 1/256 of the even piece `ceil(chunks / P)` (0: the even cut;
    /// `piece_range_first`), unless `DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE` says or the summary's
    /// row has its own ([`FirstSumRow::cuts`], session 35). Another cut is
    /// another rounding of the seeds: set only where measured.
    pub first_scale: i32,
    /// The piece count at which [`FirstScanRow::first_scale`] was measured; at any other count
    /// the even cut.
    pub scale_pieces: u64,
}

impl FirstScanRow {
    /// The first piece's length by rule at `pieces` pieces ([`FirstScanRow::first_scale`] where
    /// measured, else 0: the even cut).
    pub fn scale_at(&self, pieces: u64) -> i32 {
        if pieces == self.scale_pieces {
            self.first_scale
        } else {
            0
        }
    }
}

/// The first scans: w4dgx0 (session 32, two stages, 111,616 B), w4gx0 (session 34, w4gx's three
/// stages, 202,752 B, one block per SM). Bitwise each other at the same cut.
pub const SLIM_FIRST_SCANS: [FirstScanRow; 2] = [
    FirstScanRow {
        pass: SLIM_PIECES_FIRST.first,
        first_scale: 0,
        scale_pieces: 0,
    },
    FirstScanRow {
        pass: SLIM_PIECES_FIRST.first_wave,
        first_scale: 288,
        scale_pieces: 5,
    },
];

/// The row of [`SLIM_FIRST_SCANS`] the first-early path runs by rule (unless
/// `DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN` says): w4gx0, with its first piece 288/256 of the even one
/// at 5 pieces beside the summary `gxr` (beside `gxr3`, the rule's since session 35: 264,
/// [`SLIM_FIRST_SUMS`]).
/// H200, session 34 (helper fp34, bench/gdn_device_fp34_run1.log; one process, ms, whole forward
/// at (1, 32768, 16), P = 5): the rule then (w4dgx0, even cut) 0.5550 0.5549 0.5577 0.5523;
/// w4gx0 even 0.5510 0.5540 0.5498 0.5555 (first piece 0.168-0.172 vs 0.193-0.195; the summary of
/// pieces 1-3 on the other 100 SMs then ends +0.019-0.021 after it); w4gx0 with the first piece
/// at 224 / 272 / 288 / 304 / 320 / 352 / 384 of 256: 0.5567 0.5617 / 0.5430 0.5521 / **0.5437
/// 0.5484** / 0.5541 0.5626 / 0.5748 0.5686 / 0.5760 0.5857 / 0.6037 0.6036; w4dgx0 at 224 / 288
/// / 320 / 352: 0.5574 0.5660 / 0.5584 0.5695 / 0.5784 0.5877 / 0.5989 0.6046. The uncut shapes
/// unchanged. w4gx0's hashes equal w4dgx0's at 2, 3, 5, 7 pieces and by rule; the longer first
/// piece is another cut (another rounding of the seeds): fp64 errors of the forward tests at 5
/// pieces the same size (bench/gdn_results.md, session 34).
pub const SLIM_FIRST_SCAN_BY_RULE: usize = 1;

/// A switch's row of a table of passes: the index of the row in `rows` whose kernel suffix
/// (`pass(row).suffix`) `value` names, else `by_rule`.
fn switch_row<R>(
    rows: &[R],
    pass: impl Fn(&R) -> &FwdPass,
    value: Option<&str>,
    by_rule: usize,
) -> usize {
    value
        .and_then(|x| rows.iter().position(|r| pass(r).suffix == x))
        .unwrap_or(by_rule)
}

/// `DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN`'s value: the row of [`SLIM_FIRST_SCANS`] whose kernel suffix
/// it names, else the rule's.
pub(super) fn first_scan_switch(value: Option<&str>) -> usize {
    switch_row(
        &SLIM_FIRST_SCANS,
        |r| &r.pass,
        value,
        SLIM_FIRST_SCAN_BY_RULE,
    )
}

/// A first piece's length measured with one summary of [`SLIM_FIRST_SUMS`] (session 35): with
/// the first scan `scan` (an index of [`SLIM_FIRST_SCANS`]) at `pieces` pieces, the first piece
/// `first_scale` / 256 of the even one (it replaces that scan row's [`FirstScanRow::scale_at`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstCut {
    /// The first scan's row.
    pub scan: usize,
    /// The piece count where measured.
    pub pieces: u64,
    /// The first piece's length in 1/256 of the even piece.
    pub first_scale: i32,
}

/// The summary of pieces 1 ..= P − 2 beside the first piece on the first-early path
/// ([`SLIM_PIECES_FIRST`]), as data (session 35, helper sm35): one row per summary kernel. The
/// same H_j, M_j arithmetic in the same order; only the cp.async stages and blocks per SM differ.
/// A faster summary moves the balance of the first stage (the first piece against the summary),
/// so a row may carry its own first-piece lengths (`cuts`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FirstSumRow {
    /// The kernel (grid `(2·V / 64, HO, N·(P − 2))`); its suffix is the value of
    /// `DNNPLAN_GDN_FWD_PIECE_FIRST_SUM` that forces it.
    pub pass: FwdPass,
    /// Blocks per SM (its launch bounds).
    pub per_sm: u64,
    /// The first piece's lengths measured with this summary (none: the first scan row's).
    pub cuts: &'static [FirstCut],
}

impl FirstSumRow {
    /// The first piece's length with this summary, first scan row `scan` and `pieces` pieces,
    /// where measured.
    pub fn scale_for(&self, scan: usize, pieces: u64) -> Option<i32> {
        self.cuts
            .iter()
            .find(|c| c.scan == scan && c.pieces == pieces)
            .map(|c| c.first_scale)
    }
}

/// The summaries beside the first piece: `gxr` (session 32, [`PieceFirstRow::sum`]: two stages,
/// 73,728 B, launch bounds of three blocks per SM; the first scan rows' lengths) and `gxr3`
/// (session 35: three stages, 110,592 B, two blocks per SM: the copies two chunks ahead; with
/// w4gx0 at 5 pieces the first piece 264/256 of the even one).
pub const SLIM_FIRST_SUMS: [FirstSumRow; 2] = [
    FirstSumRow {
        pass: SLIM_PIECES_FIRST.sum,
        per_sm: SLIM_SUM_MIN_BLOCKS,
        cuts: &[],
    },
    FirstSumRow {
        pass: FwdPass {
            suffix: "gxr3",
            smem: PassSmem::SlimSumStages {
                stages: SLIM_SUM3_STAGES,
            },
            ..SLIM_PIECES_FIRST.sum
        },
        per_sm: SLIM_SUM3_MIN_BLOCKS,
        cuts: &[FirstCut {
            scan: 1,
            pieces: 5,
            first_scale: 264,
        }],
    },
];

/// The row of [`SLIM_FIRST_SUMS`] the first-early path runs by rule (unless
/// `DNNPLAN_GDN_FWD_PIECE_FIRST_SUM` says): `gxr3`, with its first piece 264/256 of the even one
/// at 5 pieces (w4gx0).
/// H200, session 35 (helper sm35; bench/gdn_device_sm35_run1.log, _run2.log; one process each,
/// ms, whole forward at (1, 32768, 16), P = 5, w4gx0). Call 1: the rule then (gxr, 288) 0.5465
/// 0.5480 0.5449 0.5446 against gxr3 at 288 0.5396 0.5400 0.5384 0.5400 (then 0.5379 0.5389
/// against 0.5410 0.5412: at 288 the first piece is the first stage's path either way); gxr3 at
/// 256 / 288 / 320 / 352: 0.5295 / 0.5477 / 0.5592 / 0.5747, gxr at the same: 0.5476 / 0.5408 /
/// 0.5575 / 0.5723 (the summary of pieces 1-3 ends ~0.011 ms earlier on three stages). Call 2
/// (R = the rule then): R 0.5411 0.5442 0.5365 0.5377 (mean 0.5399); gxr3 at 256 0.5313 0.5299
/// 0.5246 0.5253 0.5266 0.5252 (0.5272), at 272 0.5292 0.5309 0.5252 0.5249 (0.5276), **at 264
/// 0.5259 0.5248 0.5216 0.5209 (0.5233: −3.1 %)**; gxr at 256 0.5461 0.5449. The uncut shapes
/// never run it. gxr3's hashes equal gxr's by rule and at 3, 5, 7 pieces (same cut); the shorter
/// first piece is another cut (another rounding of the seeds at 5 pieces).
pub const SLIM_FIRST_SUM_BY_RULE: usize = 1;

/// `DNNPLAN_GDN_FWD_PIECE_FIRST_SUM`'s value: the row of [`SLIM_FIRST_SUMS`] whose kernel suffix
/// it names, else the rule's.
pub(super) fn first_sum_switch(value: Option<&str>) -> usize {
    switch_row(&SLIM_FIRST_SUMS, |r| &r.pass, value, SLIM_FIRST_SUM_BY_RULE)
}

/// Whether the slim wgmma piece path runs its first piece early ([`SLIM_PIECES_FIRST`]) by rule,
/// unless `DNNPLAN_GDN_FWD_PIECE_FIRST=0|1` says.
pub const SLIM_PIECE_FIRST_BY_RULE: bool = true;

/// `DNNPLAN_GDN_FWD_PIECE_FIRST`'s value: `1` on (`2`: on, the other pieces' scan always
/// [`PieceFirstRow::rest`], a diagnostic), `0` off, else the rule's.
pub(super) fn piece_first_switch(value: Option<&str>) -> bool {
    match value {
        Some("1" | "2") => true,
        Some("0") => false,
        _ => SLIM_PIECE_FIRST_BY_RULE,
    }
}

/// The shared-memory layout of a pass's kernel, as data (the byte counts of params.rs): the
/// forward's passes, the preps of both directions and the backward's piece passes
/// ([`super::backward::PiecePass`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PassSmem {
    /// `gdn::FastSmem` on `stages` cp.async stages: the full output scans (`out`) and the full
    /// piece summaries ([`fast_smem_bytes`]).
    Fast {
        /// cp.async stages.
        stages: u64,
        /// The output pass (the summaries: `false`).
        out: bool,
    },
    /// The uncut slim output scans on `stages` stages ([`slim_scan_smem_bytes`]).
    SlimScan {
        /// cp.async stages.
        stages: u64,
    },
    /// The uncut slim output scan storing O by the o tensor map, on `stages` stages
    /// ([`slim_scan_tma_smem_bytes`]: two dense O staging tiles per warp; session 36).
    SlimScanTma {
        /// cp.async stages.
        stages: u64,
    },
    /// The seeded slim output scan ([`slim_piece_smem_bytes`]).
    SlimPiece,
    /// The slim piece summary ([`slim_sum_smem_bytes`]).
    SlimSum,
    /// The slim piece summary on `stages` stages ([`slim_sum_stages_smem_bytes`]; session 35).
    SlimSumStages {
        /// cp.async stages.
        stages: u64,
    },
    /// `gdn::Prep7Smem`: the full factors' preps of [`PREP_VARIANTS`], both directions
    /// ([`prep7_smem_bytes`]).
    Prep,
    /// `gdn::SlimPrepSmem`: the slim preps ([`slim_prep_smem_bytes`]).
    SlimPrep,
    /// `gdn::SlimPrepSmem::bytes_l`: the slim prep with its L tile apart ([`slim_prep_l_smem_bytes`],
    /// session 31).
    SlimPrepL,
    /// `gdn::ScanxSmem` on `stages` stages, no output area, no split: the backward's seeded
    /// piece replay ([`scanx_smem_bytes`]).
    Scanx {
        /// cp.async stages.
        stages: u64,
    },
    /// `gdn::DscanMmaSmem` on `stages` stages: the backward's 4-warp reverse summaries
    /// ([`dscan_mma_stages_smem_bytes`]; the layout is the 4-warp one whatever `warps` says).
    DscanMma {
        /// cp.async stages.
        stages: u64,
    },
}

impl PassSmem {
    /// Dynamic shared memory at K = V = `k` for blocks of `warps` warps.
    pub fn bytes(self, k: u64, warps: u64) -> u32 {
        match self {
            PassSmem::Fast { stages, out } => fast_smem_bytes(k, warps, stages, out),
            PassSmem::SlimScan { stages } => slim_scan_smem_bytes(k, warps, stages),
            PassSmem::SlimScanTma { stages } => slim_scan_tma_smem_bytes(k, warps, stages),
            PassSmem::SlimPiece => slim_piece_smem_bytes(k),
            PassSmem::SlimSum => slim_sum_smem_bytes(k),
            PassSmem::SlimSumStages { stages } => slim_sum_stages_smem_bytes(k, stages),
            PassSmem::Prep => prep7_smem_bytes(k, k),
            PassSmem::SlimPrep => slim_prep_smem_bytes(k),
            PassSmem::SlimPrepL => slim_prep_l_smem_bytes(k),
            PassSmem::Scanx { stages } => scanx_smem_bytes(k, warps, stages, false, 1),
            PassSmem::DscanMma { stages } => dscan_mma_stages_smem_bytes(k, stages),
        }
    }
}

/// One forward pass (output scan, piece summary or prep) as a schedule launches it, as data: its
/// entry `gdn_fwd_<stem>_<tag>_k<K>[_<suffix>]` (the full factors' preps are in `gdn_bwd` too:
/// [`FwdPass::entry_in`]), its warps (16 value rows each for the scans and summaries; `32 · warps`
/// threads) and its shared-memory layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FwdPass {
    /// The entry's stem.
    pub stem: &'static str,
    /// The entry's suffix (empty: none).
    pub suffix: &'static str,
    /// Warps per block.
    pub warps: u64,
    /// Shared-memory layout.
    pub smem: PassSmem,
}

impl FwdPass {
    /// The entry point in the `gdn_fwd` module for io dtype `tag` and K = `k`.
    pub fn entry(&self, tag: &str, k: i64) -> String {
        self.entry_in("fwd", tag, k)
    }

    /// The entry point `gdn_<dir>_<stem>_<tag>_k<K>[_<suffix>]` in the `gdn_fwd` (`dir` = `fwd`)
    /// or `gdn_bwd` (`bwd`) module.
    pub fn entry_in(&self, dir: &str, tag: &str, k: i64) -> String {
        let sep = if self.suffix.is_empty() { "" } else { "_" };
        format!("gdn_{dir}_{}_{tag}_k{k}{sep}{}", self.stem, self.suffix)
    }

    /// Threads per block.
    pub fn threads(&self) -> u32 {
        32 * self.warps as u32
    }

    /// Dynamic shared memory at K = V = `k`.
    pub fn smem_bytes(&self, k: u64) -> u32 {
        self.smem.bytes(k, self.warps)
    }

    /// One block's claim on an SM at K = V = `k` with launch bounds of `min_blocks` blocks per
    /// SM (1: none), for the occupancy sums of [`super::occupancy`].
    pub fn block(&self, k: u64, min_blocks: u64) -> BlockUse {
        BlockUse {
            smem: u64::from(self.smem_bytes(k)),
            threads: u64::from(self.threads()),
            min_blocks,
        }
    }
}

/// How a prep launch covers its (chunk slot, head) tiles, as data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PrepGrid {
    /// One block per tile: grid `(chunks, HO, 1)`.
    PerTile,
    /// Persistent blocks taking the tiles in turn, as many as fit beside one overlapped scan
    /// block per SM, at most one per tile ([`fwd_overlap::prep_grid`]): grid `(blocks, 1, 1)`.
    Persistent,
}

/// One prep ("per-chunk factor kernel") launch as a schedule makes it, as data: the kernel
/// (entry, warps, shared memory, the blocks per SM of its launch bounds) and how its blocks cover
/// the tiles. The full factors' preps are
/// the rows of [`PREP_VARIANTS`] (both directions), the slim ones [`SLIM_PREP`] and
/// [`SLIM_PREP_OV`] (rows of [`SLIM_SCANS`]); [`FwdChoice::prep_pass`] is the forward's only
/// chooser.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PrepPass {
    /// The kernel.
    pub pass: FwdPass,
    /// Blocks per SM of the kernel's launch bounds (`__launch_bounds__(threads, min_blocks)`).
    pub min_blocks: u64,
    /// How its blocks cover the tiles.
    pub grid: PrepGrid,
    /// Whether the build asks the driver for the largest shared-memory carveout for it
    /// ([`Function::prefer_max_shared_memory`]): where the driver's own pick holds fewer blocks
    /// than its launch bounds (session 18, prep18: the slim prep's 5 blocks of 37.4 KB need more
    /// than the 167.9 KB carveout the driver picked for it, which held 4).
    pub max_carveout: bool,
}

impl PrepPass {
    /// One block's claim on an SM at K = V = `k` ([`FwdPass::block`] at [`PrepPass::min_blocks`]).
    pub fn block(&self, k: u64) -> BlockUse {
        self.pass.block(k, self.min_blocks)
    }

    /// Grid, threads and dynamic shared memory for `chunks` chunk slots, `ho` output heads at
    /// K = V = `k` on `sms` SMs (`per_sm`: a persistent grid's blocks per SM,
    /// `DNNPLAN_GDN_FWD_OVERLAP_PER_SM`; unused by a grid per tile).
    pub fn launch_shape(
        &self,
        chunks: u64,
        ho: u64,
        k: u64,
        sms: u64,
        per_sm: Option<u64>,
    ) -> ((u32, u32, u32), u32, u32) {
        let grid = match self.grid {
            PrepGrid::PerTile => (chunks as u32, ho as u32, 1),
            PrepGrid::Persistent => (
                fwd_overlap::prep_grid(k, sms, chunks * ho, per_sm) as u32,
                1,
                1,
            ),
        };
        (grid, self.pass.threads(), self.pass.smem_bytes(k))
    }
}

/// Warps of every prep ([`PREP3_THREADS`]).
const PREP_WARPS: u64 = PREP3_THREADS as u64 / 32;

/// The slim prep (`gdn_fwd_slimprep_<tag>_k128`, kernels/include/gdn_fwd_slim.cuh): one block
/// per (chunk slot, head), [`SLIM_PREP_MIN_BLOCKS`] per SM.
pub const SLIM_PREP: PrepPass = PrepPass {
    pass: FwdPass {
        stem: "slimprep",
        suffix: "",
        warps: PREP_WARPS,
        smem: PassSmem::SlimPrep,
    },
    min_blocks: SLIM_PREP_MIN_BLOCKS,
    grid: PrepGrid::PerTile,
    max_carveout: true,
};

/// The slim prep with its K Kᵀ / Q Kᵀ products on wgmma (`gdn_fwd_slimprep_<tag>_k128_wg`,
/// session 28, helper pp28; `DNNPLAN_GDN_FWD_SLIMPREP=wg`): the k, q rows in the 128-byte swizzle
/// and m64n32k16 SS wgmma (each `k` element read once per warpgroup instead of by every warp's
/// ldmatrix), the same k16 steps in the same order; [`SLIM_PREP_WG_MIN_BLOCKS`] per SM (64
/// registers).
pub const SLIM_PREP_WG: PrepPass = PrepPass {
    pass: FwdPass {
        suffix: "wg",
        ..SLIM_PREP.pass
    },
    min_blocks: SLIM_PREP_WG_MIN_BLOCKS,
    ..SLIM_PREP
};

/// [`SLIM_PREP_WG`] at [`SLIM_PREP_MIN_BLOCKS`] per SM (`gdn_fwd_slimprep_<tag>_k128_wg5`,
/// `DNNPLAN_GDN_FWD_SLIMPREP=wg5`): the two products' wgmma chains one after the other (at 48
/// registers ptxas spills 64 B and serializes the wgmma).
pub const SLIM_PREP_WG5: PrepPass = PrepPass {
    pass: FwdPass {
        suffix: "wg5",
        ..SLIM_PREP.pass
    },
    ..SLIM_PREP
};

/// [`SLIM_PREP_WG`] with two block barriers fewer (`gdn_fwd_slimprep_<tag>_k128_wgc`, session 31,
/// helper pw31, landed in session 32, helper pp32; `DNNPLAN_GDN_FWD_SLIMPREP=wgc`;
/// `fwd_slim_prep_tile`'s `G = 1`): the gates' two barriers merged into one (warp 1's Γ sums
/// finished during phase 2) and the fp32 `L` tile in its own shared-memory region
/// ([`PassSmem::SlimPrepL`], still [`SLIM_PREP_WG_MIN_BLOCKS`] per SM), so phase 3's closing block
/// barrier goes too; the same values (bitwise on the H200, bench/gdn_device_pw31_run1.log).
pub const SLIM_PREP_WGC: PrepPass = PrepPass {
    pass: FwdPass {
        suffix: "wgc",
        smem: PassSmem::SlimPrepL,
        ..SLIM_PREP.pass
    },
    ..SLIM_PREP_WG
};

/// [`SLIM_PREP_WGC`] with the chunk located in one round of loads (`gdn_fwd_slimprep_<tag>_k128_wgl`,
/// session 35, helper pr35; `DNNPLAN_GDN_FWD_SLIMPREP=wgl`; `fwd_slim_prep_tile`'s `G = 2`):
/// `locate_chunk_warp` loads the chunk table and `cu_seqlens` entries of up to 31 sequences in one
/// round (lane i entry i) instead of `locate_chunk`'s dependent chain (the total, the binary
/// search's steps, then `cu_seqlens`), so the tile's copies start earlier; the same integers, the
/// same tile, the same shared memory and blocks per SM.
pub const SLIM_PREP_WGL: PrepPass = PrepPass {
    pass: FwdPass {
        suffix: "wgl",
        ..SLIM_PREP_WGC.pass
    },
    ..SLIM_PREP_WGC
};

/// [`SLIM_PREP_WGC`] with a whole chunk's q, k rows by four tensor-map box loads
/// (`gdn_fwd_slimprep_<tag>_k128_wgt`, session 36, helper tp36; `DNNPLAN_GDN_FWD_SLIMPREP=wgt`;
/// `fwd_slim_prep_tile`'s `G = 3`): thread 0 issues the boxes `{64, 1, 64}` of the forward's q and
/// k maps ([`super::tma_maps`], the 128-byte swizzle: `slim_wg_elem`'s layout) on one mbarrier in
/// place of every thread's eight 16-byte `cp.async` and their address arithmetic; a partial chunk
/// keeps the `cp.async` path. The same bytes in the same places, the same tile, launch and shared
/// memory; the plan encodes the maps ([`super::tma_maps::IO_MAP_READERS`]).
pub const SLIM_PREP_WGT: PrepPass = PrepPass {
    pass: FwdPass {
        suffix: "wgt",
        ..SLIM_PREP_WGC.pass
    },
    ..SLIM_PREP_WGC
};

/// [`SLIM_PREP_WGC`] that also writes the backward's factors (`gdn_fwd_slimprep_<tag>_k128_wgs`,
/// session 37; `fwd_slim_prep_tile`'s `KEEP = 2`): beside the packed `T`, `A` its scans read, the
/// full `T`, `A` rows and the per-token `Γ`, `β` into the graph's `chunk_factors`
/// ([`super::chunk_factors`]), the same values the backward's slim prep writes. The same launch,
/// shared memory and blocks per SM as `wgc`; the plan runs it when the forward saves the factors.
pub const SLIM_PREP_WGS: PrepPass = PrepPass {
    pass: FwdPass {
        suffix: "wgs",
        ..SLIM_PREP_WGC.pass
    },
    ..SLIM_PREP_WGC
};

/// [`SLIM_PREP_WGT`] that saves the backward's factors as [`SLIM_PREP_WGS`] does
/// (`gdn_fwd_slimprep_<tag>_k128_wgts`, session 37; `KEEP = 2`, `G = 3`).
pub const SLIM_PREP_WGTS: PrepPass = PrepPass {
    pass: FwdPass {
        suffix: "wgts",
        ..SLIM_PREP_WGT.pass
    },
    ..SLIM_PREP_WGT
};

/// [`SLIM_PREP_WGTL`] that saves the backward's factors as [`SLIM_PREP_WGS`] does
/// (`gdn_fwd_slimprep_<tag>_k128_wgtls`, session 37; `KEEP = 2`, `G = 4`).
pub const SLIM_PREP_WGTLS: PrepPass = PrepPass {
    pass: FwdPass {
        suffix: "wgtls",
        ..SLIM_PREP_WGTL.pass
    },
    ..SLIM_PREP_WGTL
};

/// [`SLIM_PREP_WGL`] with [`SLIM_PREP_WGT`]'s box loads (`gdn_fwd_slimprep_<tag>_k128_wgtl`,
/// session 36, helper tp36; `DNNPLAN_GDN_FWD_SLIMPREP=wgtl`; `fwd_slim_prep_tile`'s `G = 4`).
pub const SLIM_PREP_WGTL: PrepPass = PrepPass {
    pass: FwdPass {
        suffix: "wgtl",
        ..SLIM_PREP_WGL.pass
    },
    ..SLIM_PREP_WGL
};

/// The output scans with a U-saving twin (session 38; kernels/src/gdn_fwd.cu,
/// `GDN_FWD_SLIM_SAVE_U_ENTRIES`): the suffixes of the rule's uncut (`w4gx`, `w4gxs`, `w8gx`) and
/// first-early (`w4gx0`, `w4gxr`) slim scans. The twin `gdn_fwd_slimscan_<tag>_k128_<suffix>_su`
/// runs the same step and also stores each chunk's io `U` tile into `chunk_factors`
/// ([`FwdFastParams::save_u`]): a forward that saves the factors and checkpoints every chunk
/// thereby saves everything its backward's replay would compute.
pub const SAVE_U_SCANS: &[&str] = &["w4gx", "w4gxs", "w8gx", "w4gx0", "w4gxr"];

/// The suffix of a [`SAVE_U_SCANS`] twin's entry.
pub const SAVE_U_SUFFIX: &str = "su";

/// How the uncut slim prep [`SLIM_PREP`] forms its K Kᵀ / Q Kᵀ products
/// (`DNNPLAN_GDN_FWD_SLIMPREP`, read at plan build; session 28): a speed knob, the same
/// operands and k16 steps in the same order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlimPrepProducts {
    /// `mma`: mma.sync with ldmatrix fragments per warp ([`SLIM_PREP`]; the witness).
    Mma,
    /// `wg`: m64n32k16 SS wgmma, 4 blocks per SM ([`SLIM_PREP_WG`]).
    Wg,
    /// `wg5`: the same at 5 blocks per SM ([`SLIM_PREP_WG5`]).
    Wg5,
    /// `wgc`: `wg` with two block barriers fewer ([`SLIM_PREP_WGC`], session 32).
    Wgc,
    /// `wgl`: `wgc` with the chunk located in one round of loads ([`SLIM_PREP_WGL`], session 35).
    Wgl,
    /// `wgt`: `wgc` with a whole chunk's q, k rows by tensor-map box loads ([`SLIM_PREP_WGT`],
    /// session 36).
    Wgt,
    /// `wgtl`: `wgl` with the same box loads ([`SLIM_PREP_WGTL`], session 36).
    Wgtl,
    /// `wgs`: `wgc` that also saves the backward's factors into the graph's `chunk_factors`
    /// ([`SLIM_PREP_WGS`], session 37). Not a speed knob: the plan runs a saving form exactly
    /// when the forward binds `chunk_factors` ([`SlimPrepProducts::saving`]).
    Wgs,
    /// `wgts`: `wgt` that saves them too ([`SLIM_PREP_WGTS`], session 37).
    Wgts,
    /// `wgtls`: `wgtl` that saves them too ([`SLIM_PREP_WGTLS`], session 37).
    Wgtls,
}

/// The slim prep's products without `DNNPLAN_GDN_FWD_SLIMPREP`: [`SlimPrepProducts::Wgt`]
/// (session 36, helper tp36; bench/gdn_device_tp36_run1.log: forward hashes BITWISE with `wgt` /
/// `wgtl` forced and at 7 pieces, memcheck clean; in two processes (A B B A, then B A A B) the
/// prep −1.3..−1.7 % against `wgc` at (4,8192,16) and (1,32768,16), `wgtl` −1.1 % against `wgl`
/// at (16,2048,32) and −0.8..−2.1 % on the ragged mix; the whole forward −0.2..−0.6 %). Until then
/// [`SlimPrepProducts::Wgc`] (session 32, helper pp32; session 31's
/// bench/gdn_device_pw31_run1.log: forward hashes BITWISE with `wgc` forced and at 7 pieces,
/// memcheck clean, the prep −0.8..−1.5 % against `wg` at the four benchmark shapes in one
/// process), before it [`SlimPrepProducts::Wg`] (session 28, helper pp28,
/// bench/gdn_device_pp28_run1.log: BITWISE the mma.sync form's, the prep −1.3..−2.1 %).
pub const SLIM_PREP_PRODUCTS_BY_RULE: SlimPrepProducts = SlimPrepProducts::Wgt;

/// The sequence counts at which the rule locates the slim prep's chunk in one round of loads
/// (session 35, helper pr35): [`SlimPrepProducts::Wgl`] in place of [`SlimPrepProducts::Wgc`]
/// and [`SlimPrepProducts::Wgtl`] in place of [`SlimPrepProducts::Wgt`] (session 36,
/// [`SlimPrepProducts::located_by_warp`]; and the backward's `prep16sll` in place of
/// `prep16slc`) for a batch of `n_seqs` sequences in
/// this range. `locate_chunk_warp` serves up to 31 sequences (a lane per sequence, the total in
/// lane `n_seqs`); from 8 the binary search it replaces takes 3 or more dependent steps. In one
/// process on the H200 (bench/gdn_device_pr35b_run1.log, wgc / wgl A B B A A B and B A A B) the
/// forward's prep with `wgl`: −2.3 % at (16,2048,32) (16 sequences), −1.2..−1.6 % ragged (10),
/// ±0.4 % at (4,8192,16) (4), +1.1 % at (1,32768,16) (1); the backward's prep stage −2.1 % / −1.9 %
/// at 16 / 10 sequences, −0.6 % at 4.
pub const SLIM_PREP_LOCATE_WARP_SEQS: (i64, i64) = (8, 31);

impl SlimPrepProducts {
    /// The rule's form for a batch of `n_seqs` sequences: [`SLIM_PREP_PRODUCTS_BY_RULE`], as
    /// [`SlimPrepProducts::located_by_warp`] where `n_seqs` lies in
    /// [`SLIM_PREP_LOCATE_WARP_SEQS`].
    pub fn by_rule(n_seqs: i64) -> SlimPrepProducts {
        let (lo, hi) = SLIM_PREP_LOCATE_WARP_SEQS;
        if (lo..=hi).contains(&n_seqs) {
            SLIM_PREP_PRODUCTS_BY_RULE.located_by_warp()
        } else {
            SLIM_PREP_PRODUCTS_BY_RULE
        }
    }

    /// This form with the chunk located in one round of loads (`locate_chunk_warp`): `wgc` →
    /// `wgl`, `wgt` → `wgtl`; the others (and `wgl`, `wgtl`) as they are.
    pub fn located_by_warp(self) -> SlimPrepProducts {
        match self {
            SlimPrepProducts::Wgc => SlimPrepProducts::Wgl,
            SlimPrepProducts::Wgt => SlimPrepProducts::Wgtl,
            form => form,
        }
    }

    /// The form a `DNNPLAN_GDN_FWD_SLIMPREP` value names for a batch of `n_seqs` sequences:
    /// [`SlimPrepProducts::from_switch`]'s named forms, else (anything else or unset)
    /// [`SlimPrepProducts::by_rule`].
    pub fn from_switch_at(value: Option<&str>, n_seqs: i64) -> SlimPrepProducts {
        SlimPrepProducts::named(value).unwrap_or_else(|| SlimPrepProducts::by_rule(n_seqs))
    }

    /// The form a `DNNPLAN_GDN_FWD_SLIMPREP` value names (`mma`, `wg`, `wg5`, `wgc`, `wgl`, `wgt`,
    /// `wgtl`; anything else
    /// or unset: [`SLIM_PREP_PRODUCTS_BY_RULE`]).
    pub fn from_switch(value: Option<&str>) -> SlimPrepProducts {
        SlimPrepProducts::named(value).unwrap_or(SLIM_PREP_PRODUCTS_BY_RULE)
    }

    /// The `DNNPLAN_GDN_FWD_SLIMPREP` values and the forms they name.
    pub const NAMED: [(&'static str, SlimPrepProducts); 7] = [
        ("mma", SlimPrepProducts::Mma),
        ("wg", SlimPrepProducts::Wg),
        ("wg5", SlimPrepProducts::Wg5),
        ("wgc", SlimPrepProducts::Wgc),
        ("wgl", SlimPrepProducts::Wgl),
        ("wgt", SlimPrepProducts::Wgt),
        ("wgtl", SlimPrepProducts::Wgtl),
    ];

    /// The form a `DNNPLAN_GDN_FWD_SLIMPREP` value names, if it names one.
    fn named(value: Option<&str>) -> Option<SlimPrepProducts> {
        super::switches::named(&Self::NAMED, value)
    }

    /// The prep launch in place of `prep`: this form's for [`SLIM_PREP`], `prep` itself for any
    /// other (the persistent [`SLIM_PREP_OV`] and the full factors' preps are kept).
    pub fn pass(self, prep: PrepPass) -> PrepPass {
        if prep != SLIM_PREP {
            return prep;
        }
        match self {
            SlimPrepProducts::Mma => SLIM_PREP,
            SlimPrepProducts::Wg => SLIM_PREP_WG,
            SlimPrepProducts::Wg5 => SLIM_PREP_WG5,
            SlimPrepProducts::Wgc => SLIM_PREP_WGC,
            SlimPrepProducts::Wgl => SLIM_PREP_WGL,
            SlimPrepProducts::Wgt => SLIM_PREP_WGT,
            SlimPrepProducts::Wgtl => SLIM_PREP_WGTL,
            SlimPrepProducts::Wgs => SLIM_PREP_WGS,
            SlimPrepProducts::Wgts => SLIM_PREP_WGTS,
            SlimPrepProducts::Wgtls => SLIM_PREP_WGTLS,
        }
    }

    /// This form's twin that also saves the backward's factors (session 37): `wgt` → `wgts`,
    /// `wgtl` → `wgtls` (the rule's forms, on their tensor-map tiles), any other → `wgs`
    /// (`wgc`'s tile).
    pub fn saving(self) -> SlimPrepProducts {
        match self {
            SlimPrepProducts::Wgt | SlimPrepProducts::Wgts => SlimPrepProducts::Wgts,
            SlimPrepProducts::Wgtl | SlimPrepProducts::Wgtls => SlimPrepProducts::Wgtls,
            _ => SlimPrepProducts::Wgs,
        }
    }

    /// Whether this form saves the backward's factors (it is its own saving twin).
    pub fn saves(self) -> bool {
        self.saving() == self
    }
}

/// The backward's slim prep `gdn_bwd_prep15sl_<tag>_k128` (session 28, helper pp28; entry in the
/// `gdn_bwd` module: [`FwdPass::entry_in`] with `dir` = `bwd`): the scalar-form prep
/// (`gdn_bwd_prep15sc_*`, [`super::backward::BwdKernel::PrepSc`]) without the `W` and `Ũᵀ` tiles
/// (no `v` reads), for a replay that rebuilds `U` from the raw `k`, `v`, `T` and the scalars. Its
/// other outputs (`T`, `A`, the four scalars, `Γ`, `β`, `Γ_last`) are bitwise prep15sc's. K = V =
/// 128 only; one block per (chunk slot, head), [`BWD_PREP_SLIM_MIN_BLOCKS`] per SM, the slim
/// prep's shared memory (`gdn::Prep10Smem<128, 128, true>`) and the largest carveout (5 blocks of
/// 36.4 KB).
pub const BWD_PREP_SLIM: PrepPass = PrepPass {
    pass: FwdPass {
        stem: "prep15sl",
        suffix: "",
        warps: PREP_WARPS,
        smem: PassSmem::SlimPrep,
    },
    min_blocks: BWD_PREP_SLIM_MIN_BLOCKS,
    grid: PrepGrid::PerTile,
    max_carveout: true,
};

/// The backward's slim prep on the forward slim prep's tile `gdn_bwd_prep16sl_<tag>_k128`
/// (session 29, helper bp29; `fwd_slim_prep_tile`'s KEEP form in the `gdn_bwd` module): the
/// wgmma form [`SLIM_PREP_WG`]'s phases with [`BWD_PREP_SLIM`]'s outputs in its layouts (full `T`
/// and `A` rows, `Γ`, `β`, the four scalars, `Γ_last`), the same values. K = V = 128 only; one
/// block per (chunk slot, head), [`SLIM_PREP_WG_MIN_BLOCKS`] per SM (64 registers), the slim
/// prep's shared memory (`gdn::SlimPrepSmem<128>`, 1024-byte aligned) and the largest carveout.
pub const BWD_PREP_SLIM16: PrepPass = PrepPass {
    pass: FwdPass {
        stem: "prep16sl",
        ..BWD_PREP_SLIM.pass
    },
    min_blocks: SLIM_PREP_WG_MIN_BLOCKS,
    ..BWD_PREP_SLIM
};

/// [`BWD_PREP_SLIM16`] on the trimmed tile `gdn_bwd_prep16slc_<tag>_k128` (session 32, helper
/// pp32; `fwd_slim_prep_tile`'s `G = 1`, as the forward's [`SLIM_PREP_WGC`]: two block barriers
/// fewer, the fp32 `L` tile in its own region, [`PassSmem::SlimPrepL`]), the same values; still
/// [`SLIM_PREP_WG_MIN_BLOCKS`] per SM and the largest carveout.
pub const BWD_PREP_SLIM16C: PrepPass = PrepPass {
    pass: FwdPass {
        stem: "prep16slc",
        smem: PassSmem::SlimPrepL,
        ..BWD_PREP_SLIM16.pass
    },
    ..BWD_PREP_SLIM16
};

/// [`BWD_PREP_SLIM16C`] with the chunk located in one round of loads
/// (`gdn_bwd_prep16sll_<tag>_k128`, session 35, helper pr35; `fwd_slim_prep_tile`'s `G = 2`, as
/// the forward's [`SLIM_PREP_WGL`]), the same values, launch and shared memory.
pub const BWD_PREP_SLIM16L: PrepPass = PrepPass {
    pass: FwdPass {
        stem: "prep16sll",
        ..BWD_PREP_SLIM16C.pass
    },
    ..BWD_PREP_SLIM16C
};

/// The persistent slim prep `gdn_fwd_slimprep_<tag>_k128_ov`, the producer beside the
/// overlapped output scan [`SLIM_SCAN_OV`] ([`super::fwd_overlap`] sizes its grid by its block),
/// [`SLIM_PREP_OV_MIN_BLOCKS`] per SM.
pub const SLIM_PREP_OV: PrepPass = PrepPass {
    pass: FwdPass {
        suffix: "ov",
        ..SLIM_PREP.pass
    },
    min_blocks: SLIM_PREP_OV_MIN_BLOCKS,
    grid: PrepGrid::Persistent,
    max_carveout: true,
};

/// The overlapped uncut slim output scan `gdn_fwd_slimscan_<tag>_k128_w4ov` (4 warps,
/// [`SLIM_OV_STAGES`], no launch bounds beyond its threads), the consumer beside
/// [`SLIM_PREP_OV`].
pub const SLIM_SCAN_OV: FwdPass = FwdPass {
    stem: SLIM_SCAN_STEM,
    suffix: "w4ov",
    warps: 4,
    smem: PassSmem::SlimScan {
        stages: SLIM_OV_STAGES,
    },
};

/// The uncut slim output scan on 4 warps, `gdn_fwd_slimscan_<tag>_k128_w4` (mma.sync; two blocks
/// per (sequence, head) pair at V = 128, [`SLIM_W4_STAGES`]).
pub const SLIM_SCAN_W4: FwdPass = FwdPass {
    stem: SLIM_SCAN_STEM,
    suffix: "w4",
    warps: 4,
    smem: PassSmem::SlimScan {
        stages: SLIM_W4_STAGES,
    },
};

/// The uncut slim output scan with its P' = X kᵀ and O' = X qᵀ products on the warpgroup
/// `gdn_fwd_slimscan_<tag>_k128_w4gs` (session 23, helper wg23; kernels/include/gdn_fwd_slim.cuh,
/// `slim_chunk_wg`): wgmma m64n64k16 with X's fragments from registers and k, q by descriptor,
/// staged in the 128-byte swizzle (B read once per warpgroup instead of once per warp: the slim
/// scan is bound by the shared-memory pipe), w4's grid, threads, stages and shared memory; the
/// rest of the step as w4. fp32 accumulation in the tensor core's order: not bitwise w4 by
/// construction (the H200's hashes equal w4's on every forward test case). Its suffix is also the
/// `DNNPLAN_GDN_FWD_SCAN` value that forces it (the full factors' `w4` where the slim factors do
/// not run).
pub const SLIM_SCAN_W4GS: FwdPass = FwdPass {
    suffix: "w4gs",
    ..SLIM_SCAN_W4
};

/// [`SLIM_SCAN_W4GS`] with the rest of the chunk step on the warpgroup too,
/// `gdn_fwd_slimscan_<tag>_k128_w4gx` (session 24, helper wgx24; kernels/include/gdn_fwd_slim.cuh,
/// `slim_chunk_tail_wg`): Uᵀ = Z Tᵀ and O += Uᵀ Aᵀ by wgmma m64n64k16 with T, A staged in the
/// 128-byte swizzle, the state update by wgmma m64n128k16 with k MN-major (tnspB); w4gs's grid,
/// threads, stages and shared memory. The uncut 4-warp default until session 35 (now [`SLIM_SCAN_W4GXS`]).
pub const SLIM_SCAN_W4GX: FwdPass = FwdPass {
    suffix: "w4gx",
    ..SLIM_SCAN_W4
};

/// [`SLIM_SCAN_W4GX`] with chunk c + 2's copies split over the step,
/// `gdn_fwd_slimscan_<tag>_k128_w4gxs` (session 35, helper sc35; kernels/include/gdn_fwd_slim.cuh
/// `SPLIT`): the 16 q, k rounds stay beside the P', O' batch (one per key step), the T, A, v and
/// scalar rounds (10) go to the tail's 4 token steps after the O batch's wait, while the state
/// update runs (w4gx issues all 26 beside the P', O' batch, whose issue outlasts it on the H200:
/// ncu, session 35). The same copies into the same stage within the same group: bitwise w4gx.
/// w4gx's grid, threads, stages and shared memory; `DNNPLAN_GDN_FWD_SCAN=w4gxs`
/// ([`WgmmaDepth::StepSplit`]).
pub const SLIM_SCAN_W4GXS: FwdPass = FwdPass {
    suffix: "w4gxs",
    ..SLIM_SCAN_W4
};

/// [`SLIM_SCAN_W4GXS`] with each warp's O tile stored by ONE tensor-map store,
/// `gdn_fwd_slimscan_<tag>_k128_w4gxt` (session 36, helper tm36; kernels/include/gdn_fwd_slim.cuh
/// `TMA_O`, `slim_store_o_tma`): the same stmatrix values staged dense in the 32-byte swizzle (two
/// tiles per warp, alternating by chunk), then one `cp.async.bulk.tensor` store of the o map's box
/// (16 values x 64 tokens, [`super::tma_maps::O_BOX`]) by lane 0, instead of 4 x (ld.shared +
/// st.global) per lane (the phase ncu found bound by short_scoreboard, session 35); a sequence's
/// partial last chunk keeps the 16-byte stores. The same values to the same addresses: bitwise
/// w4gxs. Parameter `gdn::FwdTmaParams` (the plan encodes the maps:
/// [`super::tma_maps::IO_MAP_READERS`]); w4gxs's grid, threads and stages, 4 KB more shared
/// memory ([`PassSmem::SlimScanTma`], 206,848 B); `DNNPLAN_GDN_FWD_SCAN=w4gxt`
/// ([`WgmmaDepth::StepTmaO`]).
pub const SLIM_SCAN_W4GXT: FwdPass = FwdPass {
    suffix: "w4gxt",
    smem: PassSmem::SlimScanTma {
        stages: SLIM_W4_STAGES,
    },
    ..SLIM_SCAN_W4
};

/// [`SLIM_SCAN_W4GXT`] with chunk c + 2's q, k tiles loaded by the q, k tensor maps,
/// `gdn_fwd_slimscan_<tag>_k128_w4gxu` (session 36, helper tm36; kernels/include/gdn_fwd_slim.cuh
/// `TMA_QK`): four boxes {64, 1, 64} in the 128-byte swizzle (slim_wg_elem's atoms), one per
/// warp's lane 0, onto a per-stage mbarrier (in the q slot's unused tail), instead of 16 rounds of
/// 16-byte cp.async per thread; a partial chunk zeroes its rows past the sequence's end after the
/// wait. The same values in the same places: bitwise w4gxt. w4gxt's launch;
/// `DNNPLAN_GDN_FWD_SCAN=w4gxu` ([`WgmmaDepth::StepTmaIo`]).
pub const SLIM_SCAN_W4GXU: FwdPass = FwdPass {
    suffix: "w4gxu",
    ..SLIM_SCAN_W4GXT
};

/// [`SLIM_SCAN_W4GXT`] with the O store (stmatrix, the proxy fence, the tensor-map store) issued
/// ahead of the tail's T, A, v, scalar copies instead of after them,
/// `gdn_fwd_slimscan_<tag>_k128_w4gxv` (session 36, helper tm36; kernels/include/gdn_fwd_slim.cuh
/// `O_FIRST`): the same copies in the same group, the same stores: bitwise w4gxt. w4gxt's launch;
/// `DNNPLAN_GDN_FWD_SCAN=w4gxv` ([`WgmmaDepth::StepTmaOFirst`]).
pub const SLIM_SCAN_W4GXV: FwdPass = FwdPass {
    suffix: "w4gxv",
    ..SLIM_SCAN_W4GXT
};

/// [`SLIM_SCAN_W4GX`]'s chunk step on 8 warps = two warpgroups (128 value rows),
/// `gdn_fwd_slimscan_<tag>_k128_w8gx` (session 24, wgx24): w8's grid, threads, stages and shared
/// memory. The uncut 8-warp default ([`SLIM_SCAN_WGMMA_BY_RULE`]).
pub const SLIM_SCAN_W8GX: FwdPass = FwdPass {
    stem: SLIM_SCAN_STEM,
    suffix: "w8gx",
    warps: 8,
    smem: PassSmem::SlimScan {
        stages: SLIM_W8_STAGES,
    },
};

/// [`SLIM_SCAN_W8GX`] with chunk c + 1's copies split over the step as [`SLIM_SCAN_W4GXS`]'s,
/// `gdn_fwd_slimscan_<tag>_k128_w8gxs` (session 35, helper w8s35; kernels/include/gdn_fwd_slim.cuh
/// `SPLIT` at NW = 8): the 4 q, k rounds beside the P', O' batch (key steps 0 .. 3), the 3 T, A
/// rounds, 4 v rounds and the scalars in the tail's 4 token steps. The same copies into the same
/// stage within the same group: bitwise w8gx. w8gx's grid, threads, stages and shared memory;
/// `DNNPLAN_GDN_FWD_SCAN=w8gxs` ([`WgmmaDepth::StepSplitAll`]); unmeasured: not by rule.
pub const SLIM_SCAN_W8GXS: FwdPass = FwdPass {
    suffix: "w8gxs",
    ..SLIM_SCAN_W8GX
};

/// How much of the uncut slim scan's chunk step runs on wgmma by rule (unless
/// `DNNPLAN_GDN_FWD_SCAN` forces a scan: `w4gs` the products, `w4` / `w8` the mma.sync scans,
/// `w4gx` the whole step with the copies beside the P', O' batch): the whole step with the copies
/// split, [`SLIM_SCAN_W4GXS`] where the rule picks 4 warps, [`SLIM_SCAN_W8GX`] where it picks 8. H200, session 23 (the lead's final call, wg23's probe, processes B T T B; the scan kernel,
/// ms): the products ([`SLIM_SCAN_W4GS`]) 0.2668 / 0.2655 vs w4's 0.2757 / 0.2735 at
/// (4, 8192, 16), 1.020 / 1.018 vs 1.060 / 1.058 at (1, 32768, 16) uncut, 0.3161 / 0.3158 vs
/// 0.3327 / 0.3324 on the ragged mix; hashes equal to w4's, memcheck clean (the canonical
/// no-swizzle layout was 36-45 % slower: not bundled). Session 24 (wgx24, four processes): the
/// whole step, w4gx 0.2031-0.2090 vs w4gs 0.2626-0.2672 at (4, 8192, 16), 0.2538-0.2552 vs
/// 0.3143-0.3180 on the ragged mix; w8gx 0.3709 / 0.3749 vs w8 0.4964-0.5097 at (16, 2048, 32)
/// (w4gx there 0.4408-0.4458); forward tests pass with hashes equal to w4gs's, memcheck clean.
/// Session 35 (helper sc35, bench/gdn_device_sc35b_run1.log, one process each, w4gx w4gxs w4gxs
/// w4gx then the other order; the scan kernel, ms): [`WgmmaDepth::StepSplit`] ([`SLIM_SCAN_W4GXS`],
/// the copies split) 0.2133 / 0.2159 vs 0.2243 / 0.2242 and 0.2137 / 0.2152 vs 0.2242 / 0.2237 at
/// (4, 8192, 16) (−4.3 %; whole forward 0.3783 vs 0.3885), 0.2148 / 0.2162 vs 0.2263 / 0.2243 and
/// 0.2155 / 0.2143 vs 0.2231 / 0.2266 on the ragged mix (−4.3 %; whole 0.3685 vs 0.3772); 8 warps
/// keep w8gx, the piece path its own scans (unchanged). Forward tests by rule and at 7 pieces
/// bitwise main's, memcheck clean.
pub const SLIM_SCAN_WGMMA_BY_RULE: WgmmaDepth = WgmmaDepth::StepSplit;

/// When a slim output scan runs (the first row of [`SLIM_SCANS`] that applies).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SlimScanUse {
    /// Cut into pieces with this much of the step by wgmma (the seeded scans of
    /// [`SLIM_PIECES_WGX`], [`SLIM_PIECES_WG`]) where the schedule asks for it
    /// ([`FwdChoice::piece_wgmma`]).
    PiecesWgmma(WgmmaDepth),
    /// Cut into pieces (the seeded scan of [`SLIM_PIECES`]).
    Pieces,
    /// Uncut, beside the persistent prep ([`super::fwd_overlap`]).
    Overlap,
    /// Uncut, with this much of the step by wgmma, where the scan of this many warps runs and
    /// the schedule asks for it ([`FwdChoice::scan_wgmma`]).
    Wgmma(WgmmaDepth, u64),
    /// Uncut, for the full output scans of this many warps ([`ScanRow::warps`]).
    Uncut(u64),
}

/// One slim output scan configuration, as data: when it runs, the scan, and the slim prep it
/// pairs with.
pub struct SlimScanRow {
    /// When it runs.
    pub used: SlimScanUse,
    /// The output scan.
    pub scan: FwdPass,
    /// The slim prep launched before it.
    pub prep: PrepPass,
}

/// The slim scans' entry stem ([`FACTOR_VARIANTS`]' slim row).
const SLIM_SCAN_STEM: &str = FACTOR_VARIANTS[FwdFactors::Slim as usize].scan_stem;

/// Every slim output scan configuration, the first that applies runs: the seeded scan of
/// [`SLIM_PIECES`] on the piece path; uncut, `w4ov` beside the persistent prep `_ov` (4 warps,
/// [`SLIM_OV_STAGES`]), `w4gx` / `w8gx` ([`SLIM_SCAN_W4GX`], [`SLIM_SCAN_W8GX`]) where the 4- or
/// 8-warp scan runs with the whole step by wgmma, `w4gxs` ([`SLIM_SCAN_W4GXS`]; 8 warps: `w8gx`)
/// where it runs with the copies split, `w4gxs` / `w8gxs` ([`SLIM_SCAN_W8GXS`]) where both widths
/// do, `w4gxt` ([`SLIM_SCAN_W4GXT`]; 8 warps: `w8gx`) where it stores O by the tensor map, `w4gxu`
/// ([`SLIM_SCAN_W4GXU`]; 8 warps: `w8gx`) where it also loads q, k by the tensor maps, `w4gxv`
/// ([`SLIM_SCAN_W4GXV`]; 8 warps: `w8gx`) where it stores O ahead of the tail's copies, `w4gs`
/// ([`SLIM_SCAN_W4GS`]) where the 4-warp scan runs with wgmma, else
/// the width of the full scan the rule picked: `w8` ([`SLIM_W8_STAGES`]) or `w4`
/// ([`SLIM_W4_STAGES`]; a forced `w4p` runs it too).
pub const SLIM_SCANS: [SlimScanRow; 19] = [
    SlimScanRow {
        used: SlimScanUse::PiecesWgmma(WgmmaDepth::Step),
        scan: SLIM_PIECES_WGX.scan,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::PiecesWgmma(WgmmaDepth::Products),
        scan: SLIM_PIECES_WG.scan,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Pieces,
        scan: SLIM_PIECES.scan,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Overlap,
        scan: SLIM_SCAN_OV,
        prep: SLIM_PREP_OV,
    },
    SlimScanRow {
        used: SlimScanUse::Wgmma(WgmmaDepth::Step, 4),
        scan: SLIM_SCAN_W4GX,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Wgmma(WgmmaDepth::StepSplit, 4),
        scan: SLIM_SCAN_W4GXS,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Wgmma(WgmmaDepth::Step, 8),
        scan: SLIM_SCAN_W8GX,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Wgmma(WgmmaDepth::StepSplit, 8),
        scan: SLIM_SCAN_W8GX,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Wgmma(WgmmaDepth::StepSplitAll, 4),
        scan: SLIM_SCAN_W4GXS,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Wgmma(WgmmaDepth::StepSplitAll, 8),
        scan: SLIM_SCAN_W8GXS,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Wgmma(WgmmaDepth::StepTmaO, 4),
        scan: SLIM_SCAN_W4GXT,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Wgmma(WgmmaDepth::StepTmaO, 8),
        scan: SLIM_SCAN_W8GX,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Wgmma(WgmmaDepth::StepTmaIo, 4),
        scan: SLIM_SCAN_W4GXU,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Wgmma(WgmmaDepth::StepTmaIo, 8),
        scan: SLIM_SCAN_W8GX,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Wgmma(WgmmaDepth::StepTmaOFirst, 4),
        scan: SLIM_SCAN_W4GXV,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Wgmma(WgmmaDepth::StepTmaOFirst, 8),
        scan: SLIM_SCAN_W8GX,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Wgmma(WgmmaDepth::Products, 4),
        scan: SLIM_SCAN_W4GS,
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Uncut(8),
        scan: FwdPass {
            stem: SLIM_SCAN_STEM,
            suffix: "w8",
            warps: 8,
            smem: PassSmem::SlimScan {
                stages: SLIM_W8_STAGES,
            },
        },
        prep: SLIM_PREP,
    },
    SlimScanRow {
        used: SlimScanUse::Uncut(4),
        scan: SLIM_SCAN_W4,
        prep: SLIM_PREP,
    },
];

rows_in_discriminant_order!(FWD_SCANS, r => r.variant);
rows_in_discriminant_order!(FWD_SUMS, r => r.variant);

impl ScanVariant {
    /// The variant's row in [`FWD_SCANS`].
    pub fn row(self) -> &'static ScanRow {
        &FWD_SCANS[self as usize]
    }

    /// The row whose switch is `value` and that serves K = `k`, else `None`.
    pub fn from_switch(value: &str, k: i64) -> Option<ScanVariant> {
        FWD_SCANS
            .iter()
            .find(|r| r.switch == value && r.serves(k))
            .map(|r| r.variant)
    }

    /// The entry point in the `gdn_fwd` module for io dtype `tag` and K = `k`.
    pub fn kernel_name(self, tag: &str, k: i64) -> String {
        self.row().pass().entry(tag, k)
    }
}

impl ScanRow {
    /// Whether the row's kernel is bundled for K = V = `k`.
    pub fn serves(&self, k: i64) -> bool {
        k == 128 || !self.k128_only
    }

    /// The scan as a pass on the full factors: `gdn_fwd_scanx_<tag>_k<K>_<switch>`.
    pub fn pass(&self) -> FwdPass {
        FwdPass {
            stem: FACTOR_VARIANTS[FwdFactors::Full as usize].scan_stem,
            suffix: self.switch,
            warps: self.warps,
            smem: PassSmem::Fast {
                stages: self.stages,
                out: true,
            },
        }
    }
}

/// Which piece summary pass (`gdn_fwd_sum*`) the piece path runs. Every one writes bitwise the
/// same H_j, M_j; the discriminant is the row in [`FWD_SUMS`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum SumVariant {
    /// `gdn_fwd_sum_*`: two cp.async stages (88,064 B at K = 128: two blocks per SM).
    Stages2,
    /// `gdn_fwd_sum1_*_k128` (session 13): one stage refilled in two phased halves (44,032 B),
    /// three blocks per SM by its registers. (The same body at four per SM, 128 registers with
    /// spills, was measured and is not bundled: bench/gdn_results.md, session 13, occ13.)
    Phased3,
}

/// One bundled summary pass, as data.
pub struct SumRow {
    /// The pass this row describes (its discriminant is the row's index).
    pub variant: SumVariant,
    /// The `DNNPLAN_GDN_FWD_SUM` value that selects it.
    pub switch: &'static str,
    /// The entry's stem: `gdn_fwd_<stem>_<tag>_k<K>`.
    pub stem: &'static str,
    /// cp.async stages (the shared memory: `fast_smem_bytes(k, 4, stages, false)`).
    pub stages: u64,
    /// Blocks per SM.
    pub per_sm: u64,
    /// Bundled for K = V = 128 only.
    pub k128_only: bool,
}

/// Every bundled summary pass, in [`SumVariant`] order.
pub const FWD_SUMS: [SumRow; 2] = [
    SumRow {
        variant: SumVariant::Stages2,
        switch: "s2",
        stem: "sum",
        stages: SUM_STAGES,
        per_sm: 2,
        k128_only: false,
    },
    SumRow {
        variant: SumVariant::Phased3,
        switch: "p3",
        stem: "sum1",
        stages: SCANX_S1_STAGES,
        per_sm: SUM1_MIN_BLOCKS,
        k128_only: true,
    },
];

impl SumRow {
    /// Whether the row's kernel is bundled for K = V = `k`.
    pub fn serves(&self, k: i64) -> bool {
        k == 128 || !self.k128_only
    }

    /// The summary as a pass: `gdn_fwd_<stem>_<tag>_k<K>`, 4 warps.
    pub fn pass(&self) -> FwdPass {
        FwdPass {
            stem: self.stem,
            suffix: "",
            warps: 4,
            smem: PassSmem::Fast {
                stages: self.stages,
                out: false,
            },
        }
    }
}

impl SumVariant {
    /// The variant's row in [`FWD_SUMS`].
    pub fn row(self) -> &'static SumRow {
        &FWD_SUMS[self as usize]
    }

    /// The row whose switch is `value` and that serves K = `k`, else `None`.
    pub fn from_switch(value: &str, k: i64) -> Option<SumVariant> {
        FWD_SUMS
            .iter()
            .find(|r| r.switch == value && r.serves(k))
            .map(|r| r.variant)
    }

    /// The entry point in the `gdn_fwd` module for io dtype `tag` and K = `k`.
    pub fn kernel_name(self, tag: &str, k: i64) -> String {
        self.row().pass().entry(tag, k)
    }
}

/// Which chunk factors the forward's prep writes and its output scan reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum FwdFactors {
    /// W, Q⁺, Kᴿ, Ũᵀ, A, Γ_last ([`PrepVariant`]'s prep, `gdn_fwd_scanx_*`): every path.
    Full,
    /// T, A, per-token scalars, Γ_last (`gdn_fwd_slimprep_*`, `gdn_fwd_slimscan_*`,
    /// kernels/include/gdn_fwd_slim.cuh): the prep stops after the triangular inverse and skips
    /// v, the scan reads the raw q, k, v and rebuilds Uᵀ = (vᵀ diag(β) − X kᵀ diag(ck)) Tᵀ. K = V
    /// = 128 only ([`FwdFactors::applies`]); cut into pieces (session 14) it runs [`SLIM_PIECES`].
    Slim,
}

/// One factor layout, as data: the switch value, the entry stem of its scans and its workspace.
pub struct FactorRow {
    /// The layout this row describes (its discriminant is the row's index).
    pub factors: FwdFactors,
    /// The `DNNPLAN_GDN_FWD_FACTORS` value that selects it.
    pub switch: &'static str,
    /// The scan entry's stem: `gdn_fwd_<stem>_<tag>_k<K>_w4|w8`.
    pub scan_stem: &'static str,
    /// The factors' workspace regions for (sequences, tokens, heads, K, V).
    pub workspace: fn(u64, u64, u64, u64, u64) -> WorkspaceLayout,
}

/// Every factor layout, in [`FwdFactors`] order.
pub const FACTOR_VARIANTS: [FactorRow; 2] = [
    FactorRow {
        factors: FwdFactors::Full,
        switch: "full",
        scan_stem: "scanx",
        workspace: WorkspaceLayout::new,
    },
    FactorRow {
        factors: FwdFactors::Slim,
        switch: "slim",
        scan_stem: "slimscan",
        workspace: |n, t, ho, _, _| WorkspaceLayout::slim(n, t, ho),
    },
];

rows_in_discriminant_order!(FACTOR_VARIANTS, r => r.factors);

impl FwdFactors {
    /// The factors of the path slim applies to when `DNNPLAN_GDN_FWD_FACTORS` is unset: slim, at
    /// every shape of that path and under `batch_invariant` alike (one variant, so results never
    /// depend on the batch). H200, slim vs full forward in one run with slim15's scan (session 13,
    /// bench/gdn_device_slim15_run1*.log): 1.183x at (4, 8192, 16) (w4, 128 blocks: 0.97 waves),
    /// 1.156x on the ragged mix (w4, 320 blocks), 1.203x at (16, 2048, 32) (w8, 512 blocks) and
    /// 1.064x at (1, 32768, 16) run uncut (w4, 32 blocks: 0.24 waves, the batch_invariant
    /// schedule). (Before slim15's copy fix the slim scan lost at 0.24 waves, 0.884x, and the rule
    /// was a table of wave thresholds.)
    pub const UNCUT_DEFAULT: FwdFactors = FwdFactors::Slim;

    /// The factors of the piece path (more than one piece per sequence) when
    /// `DNNPLAN_GDN_FWD_FACTORS` is unset, where slim applies: slim ([`SLIM_PIECES`], session 14,
    /// helper fpiece14). H200, same binary, alternating (bench/gdn_device_fpiece14_run1.log): at
    /// (1, 32768, 16), P = 7, the whole forward 0.863 vs 0.921 ms (1.067x; prep 0.244 vs 0.366,
    /// summary 0.250 vs 0.213, seeded scan 0.331 vs 0.302).
    pub const PIECE_DEFAULT: FwdFactors = FwdFactors::Slim;

    /// The default factors of a forward cut into `pieces` pieces per sequence.
    pub fn default_for(pieces: u64) -> FwdFactors {
        if pieces > 1 {
            FwdFactors::PIECE_DEFAULT
        } else {
            FwdFactors::UNCUT_DEFAULT
        }
    }

    /// Whether the slim factors serve a forward of `f` (K = V = 128, cut or not).
    pub fn applies(f: &GdnFacts) -> bool {
        f.k == 128 && f.v == 128
    }

    /// The row whose switch is `value`, if any.
    pub fn from_switch(value: &str) -> Option<FwdFactors> {
        FACTOR_VARIANTS
            .iter()
            .find(|r| r.switch == value)
            .map(|r| r.factors)
    }

    /// The layout's row in [`FACTOR_VARIANTS`].
    pub fn row(self) -> &'static FactorRow {
        &FACTOR_VARIANTS[self as usize]
    }

    /// `wanted` where it applies to a forward of `f`, else the full factors.
    pub fn resolve(wanted: FwdFactors, f: &GdnFacts) -> FwdFactors {
        if FwdFactors::applies(f) {
            wanted
        } else {
            FwdFactors::Full
        }
    }
}

/// Which per-chunk factor kernel ("prep") a plan runs, forward and backward alike. Every bundled
/// one writes bitwise the same workspace (bench/gdn_prep_host_emu.cpp; on the H200 the
/// gradient / O hashes); they differ in speed only. The discriminant is the row in
/// [`PREP_VARIANTS`], the one table of switch value, kernel stem and launch shape.
///
/// History (bench/gdn_results.md): the earlier levels (`v1` the session-1 prep, `v2` the 4-warp
/// prep, `v3` the 8-warp prep3, `v6` one barrier per block row: an fp32 inverse on the CUDA
/// cores; `v7` the inverse on the tensor cores on 3 warps; `v9` on all 8 warps, `v10` in fewer
/// block phases, `v13` the diagonal substitution on 4 warps) are no longer bundled since session
/// 12: no rule picked them, and the switches `v1` to `v7` changed the numerics (`v9`, `v10` and
/// `v13` are bitwise `v14`). Their template levels stay in the headers, checked by the CPU
/// emulation; their switch values now select the default.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum PrepVariant {
    /// prep10 with the inverse's diagonal 16x16 blocks right-looking from registers on prep10's
    /// threads (one lane per column, all 16 rows in registers: the chain is one FFMA per step,
    /// the L operands float2 row loads; `gdn_fwd_prep14_*`, `gdn_bwd_prep14_*`,
    /// kernels/include/gdn_fwd_prep13.cuh). Bitwise prep10 and prep15. The default in session
    /// 10: forward prep 1.008-1.064x and backward prep 1.005-1.024x v10 at the four benchmark
    /// shapes in both run orders on the H200 (bench/gdn_device_sub13_run1_summary.log). Kept as
    /// the bitwise witness of the default (`DNNPLAN_GDN_FWD_PREP=v14`).
    V14,
    /// prep14 with the inverse's serial pieces off the block barriers (`gdn_fwd_prep15_*`,
    /// `gdn_bwd_prep15_*`, kernels/include/gdn_fwd_prep15.cuh): the diagonal blocks and step 1
    /// inside the E phase on warps 0 and 2 (pair named barriers after the L stores), step 2a on
    /// all 8 warps at once, T_BA stored to the io dtype from step 2b's accumulators beside the
    /// rest of T's conversion: 10 block barriers per tile instead of 13. Bitwise prep14 (the same
    /// operations in the same order); same shared memory size and launch. The default
    /// since session 11: on the H200 (bench/gdn_device_prep15_run{1,2}_summary.log, five
    /// rounds, both orders) faster than v14 on the mean of the rounds at all four benchmark shapes
    /// in both directions (forward prep 1.006-1.022x, backward prep 1.002-1.009x, whole forward
    /// 1.006-1.011x, whole backward 1.001-1.004x; single comparisons at most 1.4 % slower, inside
    /// the rounds' spread), O / state / gradient hashes bitwise v14's and the session-9
    /// defaults', memcheck 0 errors.
    V15,
}

/// One bundled factor kernel, as data.
pub struct PrepRow {
    /// The kernel this row describes (its discriminant is the row's index).
    pub variant: PrepVariant,
    /// The `DNNPLAN_GDN_FWD_PREP` value that selects it.
    pub switch: &'static str,
    /// Its launch in both modules (`gdn_fwd_<stem>_<tag>_k<K>`, `gdn_bwd_<stem>_<tag>_k<K>`; one
    /// block per (chunk slot, head)).
    pub pass: PrepPass,
}

/// The full factors' prep launch of the kernel stem `stem` (8 warps, `gdn::Prep7Smem`,
/// [`PREP6_MIN_BLOCKS`] per SM, one block per (chunk slot, head)).
const fn full_prep(stem: &'static str) -> PrepPass {
    PrepPass {
        pass: FwdPass {
            stem,
            suffix: "",
            warps: PREP_WARPS,
            smem: PassSmem::Prep,
        },
        min_blocks: PREP6_MIN_BLOCKS,
        grid: PrepGrid::PerTile,
        max_carveout: false,
    }
}

/// Every bundled factor kernel, in [`PrepVariant`] order: switch value <-> kernel stem <->
/// launch shape, the one source of that mapping (`gdn::Prep7Smem` is the layout of both).
pub const PREP_VARIANTS: [PrepRow; 2] = [
    PrepRow {
        variant: PrepVariant::V14,
        switch: "v14",
        pass: full_prep("prep14"),
    },
    PrepRow {
        variant: PrepVariant::V15,
        switch: "v15",
        pass: full_prep("prep15"),
    },
];

rows_in_discriminant_order!(PREP_VARIANTS, r => r.variant);

impl PrepVariant {
    /// The prep a plan runs unless `DNNPLAN_GDN_FWD_PREP` names another (every shape: prep15
    /// serves K = 64 and 128, bf16 and fp16, and compiles for sm_80 / sm_100a through NVRTC).
    pub const DEFAULT: PrepVariant = PrepVariant::V15;

    /// The row of [`PREP_VARIANTS`] whose switch is `DNNPLAN_GDN_FWD_PREP`, else
    /// [`PrepVariant::DEFAULT`] (an unknown value too); read at plan build.
    pub fn from_env() -> PrepVariant {
        Self::from_switch(
            std::env::var("DNNPLAN_GDN_FWD_PREP")
                .as_deref()
                .unwrap_or(""),
        )
    }

    /// The variant whose [`PrepRow::switch`] is `value`, else [`PrepVariant::DEFAULT`].
    pub fn from_switch(value: &str) -> PrepVariant {
        PREP_VARIANTS
            .iter()
            .find(|r| r.switch == value)
            .map_or(PrepVariant::DEFAULT, |r| r.variant)
    }

    /// The variant's row in [`PREP_VARIANTS`].
    pub fn row(self) -> &'static PrepRow {
        &PREP_VARIANTS[self as usize]
    }

    /// The entry point in the `gdn_fwd` (`dir` = `fwd`) or `gdn_bwd` (`bwd`) module for io dtype
    /// `tag` and K = `k`.
    pub fn kernel_name(self, dir: &str, tag: &str, k: i64) -> String {
        self.row().pass.pass.entry_in(dir, tag, k)
    }
}
