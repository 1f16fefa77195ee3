//! The built `gdn_bwd` plan of `gdn_sm90`: up to seven launches (eleven with the piece chain) of the bundled `gdn_bwd` module.
//!
//! Order (kernels/include/gdn_bwd.cuh): chunk table, per-chunk factors (the forward's plus `T`,
//! `E`, `Γ`, `β`), the forward state scan replayed (fp32 state entering each chunk), the reverse
//! state-gradient scan (fp32 `dS` per chunk, `dR`, `d_initial_state`), per-chunk token gradients
//! (`dG`, `dBeta` to their ports; `dq`, `dk`, `dv` per output head to the workspace), the
//! head-group folds into `dQ`, `dK`, `dV`, and (with `a_log` / `dt_bias`) their gradients.
//! Every launch takes one [`BwdParams`] by value; all scratch is the caller's workspace
//! ([`BwdWorkspaceLayout`]); nothing allocates, synchronises or uses atomics.
//!
//! State checkpoints (session 16, spec §3.4, §4.5 "Recompute vs checkpoints"): a node with
//! `checkpoint_every_n_tokens = c > 0` binds `state_checkpoints [max(T/c + N, 1), HO, V, K]`.
//! [`BWD_CHECKPOINT_RULE`] (a table read at plan build, [`checkpoint_use`]) decides: io-dtype
//! checkpoints at `c = 64` (the chunk) are reused, since checkpoint row `j` of sequence `b` (row
//! base `Σ_{b'<b} ceil(T_{b'}/64)`) is exactly the replay's `ws_s` slot `chunk_offsets[b] + j`
//! (the stored-domain state entering chunk `j`, `[HO, V, K]` per slot, the io dtype under
//! `BWD_S_IO`; the chunk table `chunk_offsets_body` counts `ceil(T_b/64)` per sequence, 0 for an
//! empty one): the plan binds `ws_s` to the checkpoint buffer, drops the `ws_s` workspace region
//! and leaves out the forward-state replay (uncut: `gdn_bwd_fscan_r4_*`; piece chain: the forward
//! chain `gdn_bwd_pchain*` and the seeded replay `gdn_bwd_fscanp*`; `gdn_bwd_psum*` stays, since
//! the reverse chain reads its transitions `Mᵀ_j`). Every other cadence `c = 64·m` and fp32 rows
//! seed the replay (session 17, the spec's "coarse" row, [`CheckpointUse::Seed`]; the bundled
//! token stages read `ws_s` only in the io dtype, so fp32 rows at `c = 64` seed it too, `m = 1`):
//! `gdn_bwd_ckrows` writes the rows' table `ckpt_rows[b] = Σ_{b'<b} ceil(T_{b'}/c)` into the
//! workspace (`m > 1`; at `m = 1` the chunk table is that table), then `gdn_bwd_fscanc*`
//! ([`CKPT_REPLAYS`]) runs one block per (value slice, head, checkpoint row `r`): row `r` of
//! sequence `b` (`j = r − ckpt_rows[b]`) seeds chunks `[cb + j·m, min(cb + (j+1)·m, ce))`, each
//! chunk's entering state goes to `ws_s` (io) as the replay writes it, without the last chunk's
//! update (the next row holds its result); no forward chain (`pchain`, `fscanp`), no warmup. Under
//! either use of checkpoints the piece chain's summaries run `gdn_bwd_psumt*` (only the reverse
//! chain's `Mᵀ_j`, `N·(P−1)` block rows instead of `N·(2P−1)`; no `H_j`, no `M_j`, whose workspace
//! region goes: [`BwdPieceLayout::reverse_only`]). fp32 rows holding the replay's fp32 carry give
//! the recompute's `ws_s` bit for bit; io rows differ by their rounding (validated against the fp64
//! reference like the default). The kernels take [`BwdCkptParams`] (the chain block followed by
//! the checkpoint input; the plan passes it to every kernel).
//!
//! The reverse scan and every product of the token stage run on the tensor cores (the reverse
//! scan writing `dS'` in the io dtype; the token stage reading the states entering the chunks in
//! the io dtype, which the replays store so under `BWD_S_IO`); the token stage writes `dQ` /
//! `dK` / `dV` of a port with `HO` heads itself (flag `BWD_DIRECT`), so the fold runs only for
//! grouped ports. Diagnostics, read once when the plan is built (never in execute), serve the
//! benchmarks (bench/gdn_results.md); every one selects kernels bitwise the default's outputs
//! (knobs change speed, never numerics) except `DNNPLAN_GDN_BWD_TOKENS`, whose rows say so
//! ([`TokenStage::bitwise`]), at K = V = 128, `DNNPLAN_GDN_BWD_DSCAN=ov5dr|ov2gx` (the
//! uncut io-`dR` producer in another summation order than the default `dscan_ov2gx`, see
//! [`IO_DR_UNCUT_WGMMA_BY_RULE`]), and `DNNPLAN_GDN_BWD_PREP=full|scaled|slim` (session 27,
//! [`BwdPrepForm`], [`BWD_PREP_FORM_BY_RULE`]: the scalar form, where the prep stores four fp32
//! scalars per token instead of the `Q⁺`, `Kᴿ`, `E` tiles and the uncut replay and reverse scan
//! read the raw `q`, `k` and scale, other roundings; K = V = 128, uncut, `gx` / `gx4` replay,
//! `dscan_ov2gx` producer only, [`BwdPrepForm::scalar_form`]; `slim`, session 28: with `tc16`'s
//! storing replay rebuilding `U` from the raw `k`, `v`, `T` and the scalars and the prep writing no
//! `W`, `Ũᵀ`, [`BwdPrepForm::Slim`]; `slimp`, session 29: also the piece chain's passes on that form,
//! [`BwdPrepForm::SlimPieces`], [`PIECE_SLIM_SWAPS`]): `DNNPLAN_GDN_BWD_TOKENS=tc11|tc12|tc13|tc16|tw1|tw3|tw7` (the token stage,
//! [`TOKEN_STAGES`], instead of [`BWD_TOKENS_RULE`]'s: `tw7` (session 39) unless the graph asks for
//! `batch_invariant` or `DNNPLAN_GDN_BWD_DSCAN` is set, else `tc12`; `tc13`, session 21, the
//! default from session 22 to 26: `dR` in the io dtype between the overlapped reverse scan
//! `dscan_ov5dr` / `dscanp_ov5dr` (since session 25 the uncut one is `dscan_ov2gx` at K = V =
//! 128) and the consumer `tokens_tc13_ov`, with `dv` and `dBeta` from
//! the rounded `dR`: validated against the fp64 reference, not bitwise `tc12`; without the
//! overlap its row runs `tc12`; `tc16`, session 27, the default from session 27 to 29: `tc13` loading the
//! `U` tiles that the uncut replay stores (`gdn_bwd_fscan_gx{,4}u_*`, [`u_pair_replay`]),
//! bitwise `tc13`, which its row runs wherever that pair does not; `tw1`, session 30, the
//! default in sessions 30 and 31: `tc16`'s tile with its value products on wgmma, bitwise `tc16`;
//! `tw3`, session 32, the default from session 32 to 38: `tw1` with its copies issued in another
//! order, bitwise `tw1`; `tw7`, session 39, the default since then: `tw3` with its ring loaded by
//! tensor maps, bitwise `tw3`),
//! `DNNPLAN_GDN_BWD_DSCAN=v1|w8` (the 4-warp reverse scans
//! `gdn_bwd_dscan_io_*`, `gdn_bwd_dsum_*`, `gdn_bwd_dscanp_*` or the 8-warp ones
//! `gdn_bwd_dscan_w8_*`, `gdn_bwd_dsum_w8_*`, `gdn_bwd_dscanp_w8_*` on every launch instead of
//! [`BWD_DSCAN_RULE`]'s per-launch choice; no overlap) or `=ov|ov2|ov5` (the overlapped reverse scan),
//! `DNNPLAN_GDN_BWD_OVERLAP=0|1`, `DNNPLAN_GDN_BWD_FSCAN=v1|r4|gx|gx3|gx4|gxr`, `DNNPLAN_GDN_BWD_PIECES=n`, the
//! forward's `DNNPLAN_GDN_FWD_PREP=v14|v15` ([`super::engine::PREP_VARIANTS`]: `gdn_bwd_prep14_*`
//! / `gdn_bwd_prep15_*`), and `DNNPLAN_GDN_BWD_STEPS=n` keeps only the first `n` launches
//! (per-stage timing by differences; the gradients are then incomplete). The factor kernel is
//! `gdn_bwd_prep15_*` (256 threads, one tile per block, 4 blocks per SM, the triangular inverse on
//! the tensor cores over all 8 warps, its diagonal blocks right-looking from registers and step 1
//! inside the E phase, ldmatrix operand loads, 10 block barriers per tile). The session-3/4/5/6
//! token stages (`fp32`, `mma`, `tc`, `tc2`, `tc3`, `tc4`, `tc5`), the fp32 reverse scans and the
//! factor kernels before `v14` are no longer bundled (session 12: no rule picked them, and
//! several were not bitwise the default).
//!
//! Long sequences on few (sequence, head) pairs run the two sequential stages (the forward-state
//! replay and the reverse scan) as the exact piece chain (`kernels/include/gdn_bwd_chain.cuh`;
//! the fp64 algebra is [`super::chunked::backward_piece_chain`]): each sequence's chunks are cut
//! into `P` pieces; one summary launch gives every piece's `H_j` and transition (`M_j` for the
//! forward chain, `Mᵀ_j` for the reverse one; `gdn_bwd_psum_*`), the forward's fp32 chain seeds
//! every piece's replay (`gdn_bwd_pchain_k*`, `gdn_bwd_fscanp_*`), then the reverse summaries
//! `G_j` (`gdn_bwd_dsum_*`) and the reverse fp32 chain seed every piece's reverse scan
//! (`gdn_bwd_dchain_k*`, `gdn_bwd_dscanp_*`; both chains run the body that
//! [`super::chain::ChainVariant`] picks, `DNNPLAN_GDN_CHAIN`, default `v3` = `gdn_bwd_pchain3_k*` /
//! `gdn_bwd_dchain3_k*`). [`BwdSchedule`] picks `P`
//! (pinned by `backward_schedule_rule_at_the_benchmark_shapes`); `DNNPLAN_GDN_BWD_PIECES=n`
//! forces `n` pieces (1 = off; read at plan build; only with the default token stage). The
//! passes' kernels are a row of [`BWD_PIECE_PASSES`] (session 14: at K = 128 the one-stage phased
//! `gdn_bwd_psum1_*`, `gdn_bwd_fscanp1_*`, `gdn_bwd_dsum1_*`, bitwise the two-stage ones, at more
//! blocks per SM, so that P = 8 pieces keep the reverse passes in one wave);
//! `DNNPLAN_GDN_BWD_PIECE_PASSES=s2` runs the session-13 passes (at the default `P`).
//! Session 29 (helpers ps29, pr29; [`BwdPrepForm::SlimPieces`], `DNNPLAN_GDN_BWD_PREP=slimp`): at
//! K = V = 128 the chain runs the slim form: `prep15sl`, the slim summaries `gdn_bwd_psum_sl_*`,
//! the seeded slim replay `gdn_bwd_fscan_gxsl_*` storing the `U` tiles for `tc16`, the scalar-form
//! reverse summaries `gdn_bwd_dsum_sc_*` and producer `gdn_bwd_dscanp_ov2gxsc_*`
//! ([`PIECE_SLIM_SWAPS`]; where the swap does not apply, the full-form chain, with `tc16` and the
//! seeded replay storing `U` where they pair).
//!
//! The forward-state replay ([`ReplayVariant`], `DNNPLAN_GDN_BWD_FSCAN=v1|r4|gx|gx3|gx4|gxr`, read at plan
//! build): `r4` (the default until session 25) runs `gdn_bwd_fscan_r4_*` (the forward's chunk loop `fscan_chunks`
//! of `kernels/include/gdn_fwd_fast.cuh` staging only `W`, `Kᴿ`, `Ũᵀ`) both uncut (from the
//! initial state) and per piece (from the chain's seeds), one block per SM below
//! [`REPLAY_SHARE_MIN_WAVES`] waves; `v1` the session-5 pair `gdn_bwd_fscan_*` /
//! `gdn_bwd_fscanp_*`. Both write the same `S_c` bits. Session 25: `gx` runs
//! `gdn_bwd_fscan_gx_*` (`kernels/include/gdn_bwd_fscan_gx.cuh`: the same step with both products
//! by wgmma, `W` and `Kᴿ` staged in the 128-byte swizzle; K = 128, K = 64 keeps `r4`; its `S_c`
//! sums in the tensor core's order; the H200 runs gave the same bits as `r4`), `gx3` / `gx4` the
//! same on three / four stages, and `gxr` ([`ReplayVariant::WarpgroupRule`], the default since
//! session 25, [`REPLAY_BY_RULE`]) picks `gx4` or `gx` by the blocks per SM.
//!
//! The reverse scan and the token stage overlapped (session 7, `kernels/include/gdn_bwd_overlap.cuh`,
//! [`BWD_OVERLAP_RULE`], `DNNPLAN_GDN_BWD_OVERLAP=0|1` read at plan build): the chunk table kernel
//! becomes `gdn_bwd_chunk_order_rev` (also zeroes the hand-over flags and writes the token stage's
//! chunk order; no extra launch or memset call), the reverse scan (uncut, or the piece chain's
//! seeded pass) runs as `gdn_bwd_dscan_ov_*` / `gdn_bwd_dscanp_ov_*` (the 4-warp scan's chunk loop
//! on all `V` value rows per block, the PDL primary, publishing each (chunk, head) unit), and the
//! token stage as its overlapped consumer (today `gdn_bwd_tokens_tc12_ov_*`), launched programmatic, taking its chunks in the
//! scan's order and waiting per unit; every output bitwise the sequential plan's.
//! Since session 9 the overlapped scan runs as `gdn_bwd_dscan_ov2_*` / `gdn_bwd_dscanp_ov2_*`
//! ([`BWD_OVERLAP_SCAN_DEFAULT`]; the same chunk loop with the copies issued at compile-time trip
//! counts, `Kᴿ` by ldmatrix, one block barrier per chunk and `dS'` leaving in 16-byte
//! row-contiguous stores staged per warp in shared memory; bitwise the same outputs);
//! `DNNPLAN_GDN_BWD_DSCAN=ov` selects the session-7 kernels, `=ov2` these; `=ov5` session 18's
//! `gdn_bwd_dscan_ov5_*` / `gdn_bwd_dscanp_ov5_*`: the same loop with a publisher warp, so that no
//! compute warp waits on a fence (bitwise ov2; the default since session 20).
//!
//! Session 8 token kernel `tc11` (the default until session 10; bitwise `tc5`'s outputs;
//! with the overlap its consumer `gdn_bwd_tokens_tc11_ov_*`): copies the fp32 `dR` tile by
//! cp.async with `dO` and consumes it after `U` (no synchronous `dR` loads at the tile's start),
//! stages the fp32 results without bank conflicts and phase A's `G` tile with fewer.
//! Session 10's `tc12` (the default since then, consumer `gdn_bwd_tokens_tc12_ov_*`, the same
//! overlap rule): `tc11` with the row phase's raw q / k rows and phase A's `G` tile free of bank
//! conflicts (2 KB more shared memory); bitwise `tc11`; `DNNPLAN_GDN_BWD_TOKENS=tc11` selects the
//! session-8 kernel.
//!
//! The split reverse scan (session 29, helper dw29, [`BwdKernel::DscanOv2GxSh`], [`dscan_split`],
//! `DNNPLAN_GDN_BWD_DSCAN_SPLIT=1|2` read at plan build): the scalar form's uncut producer
//! `dscan_ov2gxsc` as two blocks per (sequence, head) unit, one warpgroup on 64 value rows each,
//! two blocks per SM (the one-block scan's 236 registers × 256 threads fill an SM's register
//! file); bitwise the one-block scan; each half adds 1 to the unit's flag and the consumer waits
//! for `BwdChainParams::ov_need` = 2. By rule ([`DSCAN_SPLIT_BY_RULE`]) from
//! [`DSCAN_SPLIT_MIN_WAVES`] waves of units.
//!
//! How [`GdnBwdPlan::with_form`] builds a plan (session 30, helper bt30): every knob is read
//! once, at plan build; then three phases, each in one place:
//! 1. each stage's full-form kernel and launch by the rules of this module (the token stage
//!    [`TokenStage::pick`] / [`token_pair`], the piece schedule [`BwdSchedule::pick`], the
//!    replay [`ReplayVariant`], the reverse scan [`BWD_DSCAN_RULE`] / `overlap_scan_kernels`,
//!    the overlap [`BWD_OVERLAP_RULE`], the checkpoints [`checkpoint_use`]), gathered as one
//!    `BwdStages` value (the chunk table, the prep, the piece chain's passes or the uncut replay,
//!    the seeded replay, the reverse scan, the token stage, the fold, the parameter gradients);
//! 2. the prep forms' kernels, chosen once from one table, [`super::bwd_select::FORM_RULES`]
//!    (rows `scaled`, `slim`, `split`, `slimp`, `prep16`, `prep16c`, `prep16l`, keyed by the prep form, uncut or piece
//!    chain, K = V, the factor kernel and the knob that applies, with the full-form kernels each
//!    row needs and the kernels and launch shapes it runs instead; [`super::bwd_select::select`]);
//! 3. the step list, built once from the stages, each launch passed through the chosen rows.
//!
//! A token-stage kernel (for example `tw1`, a value of `DNNPLAN_GDN_BWD_TOKENS`) is one row of
//! [`TOKEN_STAGES`] (its kernels, threads, shared memory, bitwise flag, paired scans, whether it
//! loads `U`) plus its [`BwdKernel`] variants and entry names; a prep-form kernel is one
//! [`super::bwd_select::FormSwap`] of a [`super::bwd_select::FORM_RULES`] row. `bwd_plan_dump`
//! (an ignored test) writes every plan of a matrix of shapes and knob values: a restructure
//! diffs its output before and after.
//!
//! Launch chain (session 10, [`super::pdl`], `DNNPLAN_GDN_PDL=0|1|early` read at plan build):
//! every kernel after the first is launched programmatic and waits at its entry; the overlapped
//! token stage keeps its own contract (launched programmatic in every mode).
//!
//! Longest-first dispatch (session 34, [`super::seq_order`], `DNNPLAN_GDN_SEQ_ORDER=0|1` read at
//! plan build): the chunk-table kernel ranks the sequences and the uncut scalar / slim replays and
//! reverse scans serve `seq_order[blockIdx.z]` (bitwise; the token stage's rank order unchanged).

use crate::cuda::Function;
use crate::dispatch::exec_types::VariantPack;
use crate::error::{Error, Result};
use crate::ir::DataType;

use super::analyzer::{GdnFacts, GdnOp};
use super::bwd_select::{
    FORM_RULES, FormContext, SCALED, SLIM, SLIM_PIECES, SLIM_PIECES_SWAPS, select, swap_pairs,
    uncut_replay_smem,
};
#[cfg(test)]
use super::bwd_select::{PREP16, PREP16C, PREP16L, SPLIT};
use super::chain::ChainVariant;
use super::chunk_factors::ChunkFactorsLayout;
use super::engine::{
    BWD_PREP_SLIM, BWD_PREP_SLIM16, BWD_PREP_SLIM16C, BWD_PREP_SLIM16L, ENGINE_NAME, PassSmem,
    PrepPass, PrepVariant, SLIM_PREP_LOCATE_WARP_SEQS, chunk_factors_of, fwd_template,
    kernel_dtype,
};
use super::occupancy::SM90_BUDGET;
use super::params::{
    BwdChainParams, BwdCkptParams, BwdParams, BwdPieceLayout, BwdTmaParams, BwdWorkspaceLayout,
    CHAIN_THREADS, CHUNK, CkptLayout, DSCAN_MMA_WARPS, DSCAN_W8_WARPS, DSUM1_MIN_BLOCKS,
    FSCAN_GX_STAGES, FSCANP1_MIN_BLOCKS, OFFSETS_THREADS, OverlapLayout, PARAM_THREADS,
    PSUM1_MIN_BLOCKS, SCAN_WARPS, SUM_STAGES, SlimRegions, TOK_THREADS, TwRingMaps,
    dscan_mma_smem_bytes, dscan_ov_smem_bytes, dscan_ov2_smem_bytes, dscan_ov2gx_smem_bytes,
    dscan_ov2gxsc_smem_bytes, dscan_w8_smem_bytes, flags, fscan_gx_smem_bytes,
    fscan_gxsc_smem_bytes, fscan_gxsl_smem_bytes, max_chunks, scan_smem_bytes, scanx_smem_bytes,
    tokens_tc11_smem_bytes, tokens_tc12_smem_bytes, tokens_tw1_tile_smem_bytes,
};
use super::pdl::{GdnPlan, Launch, PdlMode};
use super::tma_maps::{BwdRingMapShape, ring_rows_addressable};
use crate::cuda::tma::EncodedMaps;

/// Ports the backward reads or writes, in [`BwdPlanUids`] order.
pub(super) const PORTS: [&str; 20] = [
    "q",
    "k",
    "v",
    "g",
    "beta",
    "cu_seqlens",
    "initial_state",
    "a_log",
    "dt_bias",
    "dO",
    "d_final_state",
    "dQ",
    "dK",
    "dV",
    "dG",
    "dBeta",
    "d_initial_state",
    "d_a_log",
    "d_dt_bias",
    "state_checkpoints",
];

/// Optional ports of [`PORTS`] (the rest are required).
const OPTIONAL: [&str; 8] = [
    "initial_state",
    "a_log",
    "dt_bias",
    "d_final_state",
    "d_initial_state",
    "d_a_log",
    "d_dt_bias",
    "state_checkpoints",
];

/// One launch: kernel, grid, threads, dynamic shared memory.
pub(super) type Step = (BwdKernel, (u32, u32, u32), u32, u32);

/// The kernels of the `gdn_bwd` module a backward plan resolves. The discriminant is the kernel's
/// index in [`kernel_names`] and in [`GdnBwdPlan::new`]'s `kernels`: this enum is the one source
/// of that order (append new kernels at the end, with their name in [`BwdKernel::name`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(usize)]
pub enum BwdKernel {
    /// `gdn_bwd_chunk_offsets`: chunk slot offsets of the sequences.
    ChunkOffsets,
    /// The per-chunk factor kernel (prep, the backward's KEEP variant).
    Prep,
    /// `v1` forward-state replay (the forward scan's loop).
    Fscan,
    /// Head-group folds of the token gradients.
    Fold,
    /// `d_a_log` / `d_dt_bias` sums.
    Params,
    /// Tensor-core reverse scan writing `dS'` in the io dtype (4 warps, `v1`).
    DscanIo,
    /// Piece chain: forward summaries.
    Psum,
    /// Piece chain: fp32 forward chain.
    Pchain,
    /// Piece chain: `v1` seeded forward-state replay.
    Fscanp,
    /// Piece chain: reverse summaries (4 warps).
    Dsum,
    /// Piece chain: fp32 reverse chain.
    Dchain,
    /// Piece chain: seeded reverse scan (4 warps).
    Dscanp,
    /// `r4` forward-state replay (`W`, `Kᴿ`, `Ũᵀ` only), uncut and per piece.
    FscanR4,
    /// 8-warp uncut reverse scan.
    DscanW8,
    /// Piece chain: 8-warp reverse summaries.
    DsumW8,
    /// Piece chain: 8-warp seeded reverse scan.
    DscanpW8,
    /// Overlap: the chunk table, the zeroed hand-over flags and the token stage's chunk order
    /// (replaces [`BwdKernel::ChunkOffsets`]).
    ChunkOrderRev,
    /// Overlap: the uncut reverse scan on all `V` value rows per block, publishing each unit
    /// (the PDL primary).
    DscanOv,
    /// Overlap: the piece chain's seeded reverse scan, likewise.
    DscanpOv,
    /// Token stage `tc11` (session 6's `tc5` with the fp32 `dR` tile copied by cp.async with
    /// `dO` and consumed after `U`, conflict-free fp32 result staging, phase A's `G` tile in rows
    /// of 72 floats; bitwise `tc5`; the default until session 10, kept as the default's bitwise
    /// witness: `DNNPLAN_GDN_BWD_TOKENS=tc11`).
    TokensTc11,
    /// Overlap: `tc11` taking its chunks in the reverse scan's order, each after its unit's flag
    /// (launched programmatic).
    TokensTc11Ov,
    /// Overlap: [`BwdKernel::DscanOv`] on the `R2` chunk loop (copies at compile-time trip
    /// counts, `Kᴿ` by ldmatrix, one barrier per chunk, `dS'` staged into 16-byte row-contiguous
    /// stores; bitwise `DscanOv`): the default from session 9 to 19 (`DNNPLAN_GDN_BWD_DSCAN=ov2`).
    DscanOv2,
    /// Overlap: [`BwdKernel::DscanpOv`] on the `R2` chunk loop, likewise.
    DscanpOv2,
    /// Token stage `tc12` (session 10: `tc11` with the row phase's raw `q` / `k` tiles in rows of
    /// `K + 16` and phase A's `G` tile column-swizzled with pair stores, which removes those
    /// shared-memory bank conflicts; bitwise `tc11`; the default under `batch_invariant` and
    /// without the overlap, [`BWD_TOKENS_RULE`]).
    TokensTc12,
    /// Overlap: `tc12` as the consumer (as [`BwdKernel::TokensTc11Ov`]).
    TokensTc12Ov,
    /// Piece chain: fp32 forward chain with `M_j` staged in shared memory (session 12, bitwise
    /// [`BwdKernel::Pchain`]; the default, [`super::chain::CHAIN_VARIANTS`]).
    Pchain2,
    /// Piece chain: fp32 reverse chain, likewise (bitwise [`BwdKernel::Dchain`]).
    Dchain2,
    /// Piece chain: [`BwdKernel::Pchain2`] on 16 state rows per block (twice the blocks).
    Pchain3,
    /// Piece chain: [`BwdKernel::Dchain2`] on 16 state rows per block.
    Dchain3,
    /// Piece chain: [`BwdKernel::Psum`] on one phased stage (session 14, K = 128: 44 KB, three
    /// blocks per SM; bitwise the same `H_j`, `M_j`, `Mᵀ_j`).
    Psum1,
    /// Piece chain: the seeded replay on one phased stage (session 14, K = 128: 44 KB, three
    /// blocks per SM; bitwise [`BwdKernel::FscanR4`]'s `S_c`).
    Fscanp1,
    /// Piece chain: [`BwdKernel::Dsum`] on one phased stage (session 14, K = 128: 80 KB, two
    /// blocks per SM; bitwise the same `G_j`).
    Dsum1,
    /// State checkpoints (session 17): the rows' table `ckpt_rows[b]` (cadences above one
    /// chunk; `gdn_bwd_ckrows`).
    CkptRows,
    /// State checkpoints: the forward-state replay seeded from the checkpoint rows, one block
    /// per (value slice, head, row) on the `r4` replay's two-stage loop (`gdn_bwd_fscanc_*`).
    Fscanc,
    /// State checkpoints: [`BwdKernel::Fscanc`] on `fscanp1`'s one-stage phased loop (K = 128,
    /// three blocks per SM; bitwise the same `S_c`).
    Fscanc1,
    /// Piece chain under state checkpoints: the summaries' reverse transitions `Mᵀ_j` only
    /// (`gdn_bwd_psumt_*`; bitwise [`BwdKernel::Psum`]'s `Mᵀ_j`).
    PsumMt,
    /// [`BwdKernel::PsumMt`] on [`BwdKernel::Psum1`]'s one-stage loop (K = 128).
    PsumMt1,
    /// Overlap (session 18): [`BwdKernel::DscanOv2`] with a publisher warp (`PUBW`: the units
    /// are published by an extra warp, so that no compute warp waits on a fence; `V / 16 + 1`
    /// warps; bitwise `DscanOv2`; `DNNPLAN_GDN_BWD_DSCAN=ov5`): the default since session 20
    /// ([`BWD_OVERLAP_SCAN_DEFAULT`]).
    DscanOv5,
    /// Overlap: [`BwdKernel::DscanpOv2`] with the publisher warp, likewise.
    DscanpOv5,
    /// Overlap (session 21): [`BwdKernel::DscanOv5`] storing `dR` in the io dtype (`DR_IO`:
    /// `[64][V]` io tiles over the fp32 region, staged per warp through the `dS'` staging rows and
    /// written as 16-byte row pieces), the producer of [`BwdKernel::TokensTc13Ov`]; every other
    /// output bitwise `DscanOv5`'s.
    DscanOv5Dr,
    /// Overlap: [`BwdKernel::DscanpOv5`] with the io `dR`, likewise.
    DscanpOv5Dr,
    /// Overlap (session 21): token stage `tc13`, the consumer of [`BwdKernel::DscanOv5Dr`] /
    /// [`BwdKernel::DscanpOv5Dr`]: `tc12` reading the io `dR` tile (half the bytes, pass 1's
    /// operands by ldmatrix, the same rounding as `tc12`'s operands: `dq`, `dk`, `dG`,
    /// `d_initial_state` bitwise); `dv = β dR` and `dBeta`'s value part from the rounded `dR`
    /// (not bitwise `tc12`: validated against the fp64 reference). `DNNPLAN_GDN_BWD_TOKENS=tc13`.
    TokensTc13Ov,
    /// Session 25 (`kernels/include/gdn_bwd_fscan_gx.cuh`): the forward-state replay with its
    /// chunk step on the warpgroup (`P = X Wᵀ` and the state update by wgmma RS, `W` and `Kᴿ`
    /// staged in the 128-byte swizzle; two stages), uncut and per piece, K = 128 (at K = 64 it
    /// names [`BwdKernel::FscanR4`]'s kernel). `DNNPLAN_GDN_BWD_FSCAN=gx`.
    FscanGx,
    /// [`BwdKernel::FscanGx`] on three stages (one block per SM). `DNNPLAN_GDN_BWD_FSCAN=gx3`.
    FscanGx3,
    /// [`BwdKernel::FscanGx`] on four stages (one block per SM). `DNNPLAN_GDN_BWD_FSCAN=gx4`.
    FscanGx4,
    /// Overlap (session 25; the default by [`IO_DR_UNCUT_WGMMA_BY_RULE`], `DNNPLAN_GDN_BWD_DSCAN=ov5dr`
    /// runs [`BwdKernel::DscanOv5Dr`] instead): the uncut producer of
    /// [`BwdKernel::TokensTc13Ov`] with every product of its step on the warpgroup MMA (two
    /// warpgroups, the B tiles in the 128-byte swizzle, `kernels/include/gdn_bwd_dscan_gx.cuh`),
    /// the units published by thread 0 (`ov2`'s protocol: no publisher warp, whose ninth warp
    /// would cap the step at 168 registers); the same outputs as [`BwdKernel::DscanOv5Dr`] in
    /// another summation order (not bitwise). Bundled at K = V = 128 only: at other K it names
    /// `dscan_ov5dr`, which `overlap_scan_kernels` runs there.
    DscanOv2Gx,
    /// Overlap (session 25, with [`BwdKernel::DscanOv2Gx`]): the piece chain's seeded pass on the
    /// same wgmma loop, replacing [`BwdKernel::DscanpOv5Dr`] under the same switch; at K other
    /// than 128 it names `dscanp_ov5dr`.
    DscanpOv2Gx,
    /// Session 27 (helper tu27): [`BwdKernel::FscanGx`] also writing each chunk's `U` tile
    /// (`[slot][64][V]`, io dtype, the second half of the `ws_dr` region) for
    /// [`BwdKernel::TokensTc16Ov`] (`STORE_U`, the same body; the same `S_c` bits). The uncut
    /// replay of the `tc16` pair ([`u_pair_replay`]); at K other than 128 it names `fscan_r4`.
    FscanGxU,
    /// [`BwdKernel::FscanGx4`] storing the `U` tiles, likewise.
    FscanGx4U,
    /// Overlap (session 27): token stage `tc16`, [`BwdKernel::TokensTc13Ov`] loading the `U`
    /// tiles of [`BwdKernel::FscanGxU`] / [`BwdKernel::FscanGx4U`] instead of `W`, `Ũᵀ` and the
    /// `U` product (bitwise `tc13`). K = V = 128; at other K it names `tokens_tc13_ov`.
    TokensTc16Ov,
    /// Session 27 (the scalar form, [`BwdPrepForm::Scalars`]): the factor kernel `prep15` writing,
    /// instead of the `Q⁺`, `Kᴿ` and `E` tiles, four fp32 scalars per token (`ck = β e^Γ kr`, `β`,
    /// `cq = qr e^Γ`, `cr = kr e^{Γ_last−Γ}`, the slim forward's) into the `Kᴿ` region
    /// (`gdn_bwd_prep15sc_*`, K = 128; at other K it names the full prep).
    PrepSc,
    /// Session 27: [`BwdKernel::FscanGx`] on the raw `k` rows scaled by `cr` (the scalar form's
    /// uncut replay, `gdn_bwd_fscan_gxsc_*`; at K other than 128 it names `fscan_r4`).
    FscanGxSc,
    /// Session 27: [`BwdKernel::FscanGx4`] likewise (`gdn_bwd_fscan_gx4sc_*`).
    FscanGx4Sc,
    /// Session 27: [`BwdKernel::DscanOv2Gx`] on the raw `q`, `k` rows and the scalars (the scalar
    /// form's uncut producer, `gdn_bwd_dscan_ov2gxsc_*`; at K other than 128 it names `dscan_ov5dr`).
    DscanOv2GxSc,
    /// Session 27 (the scalar form with tu27's `tc16` pair): [`BwdKernel::FscanGxSc`] also storing
    /// the (unscaled) `U` tiles as [`BwdKernel::FscanGxU`] does (`gdn_bwd_fscan_gxscu_*`; at K other
    /// than 128 it names `fscan_r4`).
    FscanGxScU,
    /// [`BwdKernel::FscanGx4Sc`] storing the `U` tiles, likewise (`gdn_bwd_fscan_gx4scu_*`).
    FscanGx4ScU,
    /// Session 28 (helper sb28, the slim form [`BwdPrepForm::Slim`]): [`BwdKernel::FscanGxScU`]
    /// rebuilding `U` from the raw `k`, `v` rows, `T` and the prep's scalars by the forward slim
    /// scan's step (`gdn_bwd_fscan_gxsl_*`: no `W`, `Ũᵀ` reads; the same `S_c` and `U` tile outputs
    /// in other roundings; at K other than 128 it names `fscan_r4`).
    FscanGxSl,
    /// [`BwdKernel::FscanGx4ScU`] likewise (`gdn_bwd_fscan_gx4sl_*`).
    FscanGx4Sl,
    /// Session 28 (helper pp28, the slim form): [`BwdKernel::PrepSc`] without the `W` and `Ũᵀ`
    /// tiles and the `v` reads ([`BWD_PREP_SLIM`], `gdn_bwd_prep15sl_*`; every other output
    /// bitwise `prep15sc`'s), beside [`BwdKernel::FscanGxSl`] / [`BwdKernel::FscanGx4Sl`], which
    /// read neither; at K other than 128 it names the full prep.
    PrepSl,
    /// Session 29 (helper dw29): [`BwdKernel::DscanOv2GxSc`] split, two blocks per (sequence,
    /// head) unit, one warpgroup on 64 value rows each (`gdn_bwd_dscan_ov2gxsh_*`, grid
    /// (2, HO, N), 128 threads, [`super::params::dscan_ov2gxsh_smem_bytes`]: two blocks per SM; the same per-element
    /// arithmetic, bitwise; each half adds 1 to the unit's flag, the consumer waits for 2,
    /// `BwdChainParams::ov_need`). [`dscan_split`] picks it; at K other than 128 it names
    /// `dscan_ov5dr`.
    DscanOv2GxSh,
    /// Session 29 (helper bp29): [`BwdKernel::PrepSl`] on the forward slim prep's tile
    /// ([`BWD_PREP_SLIM16`], `gdn_bwd_prep16sl_*`: quarter-warp rows, K Kᵀ / Q Kᵀ on wgmma) with
    /// `prep15sl`'s outputs in its layouts, the same values; [`BwdSlimPrep::V16`] picks it
    /// (the `prep16` row of [`FORM_RULES`]); at K other than 128 it names the full prep.
    PrepSl16,
    /// Session 29 (helper pr29, the piece chain in the scalar / slim form): the reverse summaries
    /// `G_j` (pieces 1..P−1 from `dX = 0`, into `ws_h`'s reversed slots, as [`BwdKernel::Dsum1`])
    /// on [`BwdKernel::DscanOv2GxSc`]'s step without its `dS'` / `dR` stores and publishes
    /// (`gdn_bwd_dsum_sc_*`: raw `q`, `k` and the prep's scalars, no `Q⁺`, `Kᴿ`, `E`; grid
    /// `(1, HO, N·(P−1))`, 256 threads holding all V value rows, `params::dsum_sc_smem_bytes`, one per
    /// SM). K = V = 128; at other K it names `dsum`.
    DsumSc,
    /// Session 29 (helper pr29): the piece chain's publishing seeded reverse scan in the scalar
    /// form, [`BwdKernel::DscanpOv2Gx`] on [`BwdKernel::DscanOv2GxSc`]'s step
    /// (`gdn_bwd_dscanp_ov2gxsc_*`: grid `(1, HO, N·P)`, 256 threads, [`dscan_ov2gxsc_smem_bytes`];
    /// the io `dR` and `dS'` per chunk, units published, `d_initial_state` from piece 0). K = V =
    /// 128; at other K it names `dscanp_ov5dr`.
    DscanpOv2GxSc,
    /// Session 29 (helper ps29, the piece chain on the slim form, [`BwdPrepForm::SlimPieces`]):
    /// the piece summaries `H_j`, `M_j`, `Mᵀ_j` of [`BwdKernel::Psum1`] by the slim chunk step on
    /// the raw `k`, `v` rows, `T` and the prep's scalars (`gdn_bwd_psum_sl_*`: the slim replay's
    /// loop without outputs; other roundings); at K other than 128 it names `psum`.
    PsumSl,
    /// Overlap (session 30, helper m1t30: td29's M1; by rule in sessions 30 and 31): token stage
    /// `tw1`, [`BwdKernel::TokensTc16Ov`]'s tile (the same 512 threads, inputs and chunk-local
    /// phases) with the value products warp-specialized (`gdn_bwd_tokens_tw1_*`,
    /// `kernels/include/gdn_bwd_tw.cuh`): warpgroup 0 copies each value quarter of `S`, `U`,
    /// `dO` (every thread) and, after the unit's flag, `dS'`, `dR` (warpgroups 0 and 3) into a
    /// ring signalled by mbarriers, the four warpgroups run the five products on wgmma (register
    /// accumulators), every thread runs `tc16`'s `dR` pass and `dD` from the ring. Bitwise `tc16`
    /// on every backward hash on the H200 (wgmma's k16 steps give mma.sync's results there;
    /// bench/gdn_results.md, session 30, m1t30). Shared memory [`tokens_tw1_tile_smem_bytes`].
    /// K = V = 128; at other K it names `tokens_tc13_ov` (never run there: [`u_pair_replay`]
    /// needs K = 128).
    TokensTw1Ov,
    /// Overlap (session 32, helper tp32; by rule since session 32): token stage `tw3`,
    /// [`BwdKernel::TokensTw1Ov`] with
    /// the copies issued in another order (`gdn_bwd_tokens_tw3_*`, REV 32, `EARLY` in
    /// `kernels/include/gdn_bwd_tw.cuh`): the unit's flag waited by thread 64 before the tile's
    /// first barrier, and each value quarter's `dS'`, `dR` copies issued right after its `S`,
    /// `U`, `dO` (tw1: after the flag and the `q` / `k` rows); the same copies, products and
    /// passes, so the same values as `tw1`. The same layout and shared memory
    /// ([`tokens_tw1_tile_smem_bytes`]). K = V = 128; at other K it names `tokens_tc13_ov`.
    TokensTw3Ov,
    /// Session 32 (helper pp32): [`BwdKernel::PrepSl16`] on the trimmed tile
    /// ([`BWD_PREP_SLIM16C`], `gdn_bwd_prep16slc_*`: two block barriers fewer, the `L` tile in its
    /// own shared-memory region), the same values; [`BwdSlimPrep::V16c`] picks it (the `prep16c`
    /// row of [`FORM_RULES`]); at K other than 128 it names the full prep.
    PrepSl16c,
    /// Session 35 (helper pr35): [`BwdKernel::PrepSl16c`] with the chunk located in one round of
    /// loads ([`BWD_PREP_SLIM16L`], `gdn_bwd_prep16sll_*`), the same values and launch;
    /// [`BwdSlimPrep::V16l`] picks it (the `prep16l` row of [`FORM_RULES`]); at K other than 128
    /// it names the full prep.
    PrepSl16l,
    /// Session 38 (the saved replay on pieces): [`BwdKernel::PsumSl`]'s `Mᵀ_j` blocks alone
    /// (`gdn_bwd_psumt_sl_*`, grid `(V / 64, HO, N·(P−1))`; the same per-block work, so the same
    /// `Mᵀ_j`), as [`BwdKernel::PsumMt`] is [`BwdKernel::Psum`]'s; at K other than 128 it names
    /// `psumt`.
    PsumMtSl,
    /// Session 39: token stage `tw7`, [`BwdKernel::TokensTw3Ov`] with the quarter ring's `S`,
    /// `dS'`, `U` and `dR` tiles by tensor maps (`gdn_bwd_tokens_tw7_*`, REV 34, `TMA` in
    /// `kernels/include/gdn_bwd_tw.cuh`): one thread issues 28 box copies per tile in place of
    /// every thread's `cp.async`; the same bytes in the same places, so the same values as `tw3`.
    /// It reads the plan's ring maps ([`super::tma_maps::BwdRingMapShape`], encoded at every
    /// execute into [`BwdTmaParams`]). The same layout and shared memory as `tw3`. K = V = 128;
    /// at other K it names `tokens_tc13_ov`.
    TokensTw7Ov,
}

impl BwdKernel {
    /// Every kernel, in index order.
    pub const ALL: [BwdKernel; 70] = [
        BwdKernel::ChunkOffsets,
        BwdKernel::Prep,
        BwdKernel::Fscan,
        BwdKernel::Fold,
        BwdKernel::Params,
        BwdKernel::DscanIo,
        BwdKernel::Psum,
        BwdKernel::Pchain,
        BwdKernel::Fscanp,
        BwdKernel::Dsum,
        BwdKernel::Dchain,
        BwdKernel::Dscanp,
        BwdKernel::FscanR4,
        BwdKernel::DscanW8,
        BwdKernel::DsumW8,
        BwdKernel::DscanpW8,
        BwdKernel::ChunkOrderRev,
        BwdKernel::DscanOv,
        BwdKernel::DscanpOv,
        BwdKernel::TokensTc11,
        BwdKernel::TokensTc11Ov,
        BwdKernel::DscanOv2,
        BwdKernel::DscanpOv2,
        BwdKernel::TokensTc12,
        BwdKernel::TokensTc12Ov,
        BwdKernel::Pchain2,
        BwdKernel::Dchain2,
        BwdKernel::Pchain3,
        BwdKernel::Dchain3,
        BwdKernel::Psum1,
        BwdKernel::Fscanp1,
        BwdKernel::Dsum1,
        BwdKernel::CkptRows,
        BwdKernel::Fscanc,
        BwdKernel::Fscanc1,
        BwdKernel::PsumMt,
        BwdKernel::PsumMt1,
        BwdKernel::DscanOv5,
        BwdKernel::DscanpOv5,
        BwdKernel::DscanOv5Dr,
        BwdKernel::DscanpOv5Dr,
        BwdKernel::TokensTc13Ov,
        BwdKernel::FscanGx,
        BwdKernel::FscanGx3,
        BwdKernel::FscanGx4,
        BwdKernel::DscanOv2Gx,
        BwdKernel::DscanpOv2Gx,
        BwdKernel::FscanGxU,
        BwdKernel::FscanGx4U,
        BwdKernel::TokensTc16Ov,
        BwdKernel::PrepSc,
        BwdKernel::FscanGxSc,
        BwdKernel::FscanGx4Sc,
        BwdKernel::DscanOv2GxSc,
        BwdKernel::FscanGxScU,
        BwdKernel::FscanGx4ScU,
        BwdKernel::FscanGxSl,
        BwdKernel::FscanGx4Sl,
        BwdKernel::PrepSl,
        BwdKernel::DscanOv2GxSh,
        BwdKernel::PrepSl16,
        BwdKernel::DsumSc,
        BwdKernel::DscanpOv2GxSc,
        BwdKernel::PsumSl,
        BwdKernel::TokensTw1Ov,
        BwdKernel::TokensTw3Ov,
        BwdKernel::PrepSl16c,
        BwdKernel::PrepSl16l,
        BwdKernel::PsumMtSl,
        BwdKernel::TokensTw7Ov,
    ];

    /// Whether this kernel touches only the backward's slim workspace regions at K = 128
    /// ([`BwdWorkspaceLayout::slim`], session 37): the chunk tables, the slim preps, the slim
    /// replays and summaries, the scalar form's wgmma reverse scans and summaries, the piece
    /// chains (their own layout), the wgmma token stages `tw1` / `tw3`, the folds and the
    /// parameter sums. A plan of these kernels only gets the slim workspace.
    pub fn slim_workspace(self) -> bool {
        matches!(
            self,
            BwdKernel::ChunkOffsets
                | BwdKernel::ChunkOrderRev
                | BwdKernel::PrepSl
                | BwdKernel::PrepSl16
                | BwdKernel::PrepSl16c
                | BwdKernel::PrepSl16l
                | BwdKernel::FscanGxSl
                | BwdKernel::FscanGx4Sl
                | BwdKernel::PsumSl
                | BwdKernel::PsumMtSl
                | BwdKernel::DscanOv2GxSc
                | BwdKernel::DscanOv2GxSh
                | BwdKernel::DscanpOv2GxSc
                | BwdKernel::DsumSc
                | BwdKernel::Pchain
                | BwdKernel::Pchain2
                | BwdKernel::Pchain3
                | BwdKernel::Dchain
                | BwdKernel::Dchain2
                | BwdKernel::Dchain3
                | BwdKernel::TokensTw1Ov
                | BwdKernel::TokensTw3Ov
                | BwdKernel::TokensTw7Ov
                | BwdKernel::Fold
                | BwdKernel::Params
        )
    }

    /// The slim form's prep row this kernel runs at K = 128 ([`BWD_PREP_SLIM`] for
    /// [`BwdKernel::PrepSl`], [`BWD_PREP_SLIM16`] / [`BWD_PREP_SLIM16C`] / [`BWD_PREP_SLIM16L`] for
    /// the `prep16sl` forms); none for every other kernel.
    pub fn slim_prep_pass(self) -> Option<&'static PrepPass> {
        match self {
            BwdKernel::PrepSl => Some(&BWD_PREP_SLIM),
            BwdKernel::PrepSl16 => Some(&BWD_PREP_SLIM16),
            BwdKernel::PrepSl16c => Some(&BWD_PREP_SLIM16C),
            BwdKernel::PrepSl16l => Some(&BWD_PREP_SLIM16L),
            _ => None,
        }
    }

    /// The kernel's symbol in the module (`tag` = `bf16` / `f16`, `k` = K = V; `prep`: the
    /// factor kernel, which the plan must then be built with too). The one-stage piece passes
    /// ([`BwdKernel::Psum1`], [`BwdKernel::Fscanp1`], [`BwdKernel::Dsum1`], and session 17's
    /// [`BwdKernel::PsumMt1`], [`BwdKernel::Fscanc1`]) are bundled at K = 128 only; at other K
    /// they name their two-stage kernels (which [`BWD_PIECE_PASSES`] runs there).
    pub fn name(self, tag: &str, k: i64, prep: PrepVariant) -> String {
        let body = match self {
            BwdKernel::PrepSc if k != 128 => return prep.kernel_name("bwd", tag, k),
            BwdKernel::PrepSc => return format!("gdn_bwd_prep15sc_{tag}_k{k}"),
            // The slim form's preps: their rows' entries at K = 128, the factor kernel elsewhere.
            BwdKernel::PrepSl
            | BwdKernel::PrepSl16
            | BwdKernel::PrepSl16c
            | BwdKernel::PrepSl16l => {
                return match self.slim_prep_pass() {
                    Some(row) if k == 128 => row.pass.entry_in("bwd", tag, k),
                    _ => prep.kernel_name("bwd", tag, k),
                };
            }
            BwdKernel::FscanGxSc
            | BwdKernel::FscanGx4Sc
            | BwdKernel::FscanGxScU
            | BwdKernel::FscanGx4ScU
            | BwdKernel::FscanGxSl
            | BwdKernel::FscanGx4Sl
                if k != 128 =>
            {
                "fscan_r4"
            }
            BwdKernel::PsumSl if k != 128 => "psum",
            BwdKernel::PsumSl => "psum_sl",
            BwdKernel::PsumMtSl if k != 128 => "psumt",
            BwdKernel::PsumMtSl => "psumt_sl",
            BwdKernel::FscanGxSl => "fscan_gxsl",
            BwdKernel::FscanGx4Sl => "fscan_gx4sl",
            BwdKernel::FscanGxSc => "fscan_gxsc",
            BwdKernel::FscanGx4Sc => "fscan_gx4sc",
            BwdKernel::FscanGxScU => "fscan_gxscu",
            BwdKernel::FscanGx4ScU => "fscan_gx4scu",
            BwdKernel::DscanOv2GxSc | BwdKernel::DscanOv2GxSh if k != 128 => "dscan_ov5dr",
            BwdKernel::DscanOv2GxSc => "dscan_ov2gxsc",
            BwdKernel::DscanOv2GxSh => "dscan_ov2gxsh",
            BwdKernel::DsumSc if k != 128 => "dsum",
            BwdKernel::DsumSc => "dsum_sc",
            BwdKernel::DscanpOv2GxSc if k != 128 => "dscanp_ov5dr",
            BwdKernel::DscanpOv2GxSc => "dscanp_ov2gxsc",
            BwdKernel::Psum1 if k != 128 => "psum",
            BwdKernel::Fscanp1 if k != 128 => "fscan_r4",
            BwdKernel::FscanGx
            | BwdKernel::FscanGx3
            | BwdKernel::FscanGx4
            | BwdKernel::FscanGxU
            | BwdKernel::FscanGx4U
                if k != 128 =>
            {
                "fscan_r4"
            }
            BwdKernel::FscanGxU => "fscan_gxu",
            BwdKernel::FscanGx4U => "fscan_gx4u",
            BwdKernel::TokensTc16Ov if k != 128 => "tokens_tc13_ov",
            BwdKernel::TokensTc16Ov => "tokens_tc16_ov",
            BwdKernel::TokensTw1Ov if k != 128 => "tokens_tc13_ov",
            BwdKernel::TokensTw1Ov => "tokens_tw1",
            BwdKernel::TokensTw3Ov if k != 128 => "tokens_tc13_ov",
            BwdKernel::TokensTw3Ov => "tokens_tw3",
            BwdKernel::TokensTw7Ov if k != 128 => "tokens_tc13_ov",
            BwdKernel::TokensTw7Ov => "tokens_tw7",
            BwdKernel::FscanGx => "fscan_gx",
            BwdKernel::FscanGx3 => "fscan_gx3",
            BwdKernel::FscanGx4 => "fscan_gx4",
            BwdKernel::Dsum1 if k != 128 => "dsum",
            BwdKernel::Fscanc1 if k != 128 => "fscanc",
            BwdKernel::PsumMt1 if k != 128 => "psumt",
            BwdKernel::DscanOv2Gx if k != 128 => "dscan_ov5dr",
            BwdKernel::DscanOv2Gx => "dscan_ov2gx",
            BwdKernel::DscanpOv2Gx if k != 128 => "dscanp_ov5dr",
            BwdKernel::DscanpOv2Gx => "dscanp_ov2gx",
            BwdKernel::Fscanc1 => "fscanc1",
            BwdKernel::PsumMt1 => "psumt1",
            BwdKernel::Fscanc => "fscanc",
            BwdKernel::PsumMt => "psumt",
            BwdKernel::CkptRows => return "gdn_bwd_ckrows".to_owned(),
            BwdKernel::Psum1 => "psum1",
            BwdKernel::Fscanp1 => "fscanp1",
            BwdKernel::Dsum1 => "dsum1",
            BwdKernel::ChunkOffsets => return "gdn_bwd_chunk_offsets".to_owned(),
            BwdKernel::ChunkOrderRev => return "gdn_bwd_chunk_order_rev".to_owned(),
            BwdKernel::Params => return "gdn_bwd_params".to_owned(),
            BwdKernel::Pchain => return format!("gdn_bwd_pchain_k{k}"),
            BwdKernel::Dchain => return format!("gdn_bwd_dchain_k{k}"),
            BwdKernel::Pchain2 => return format!("gdn_bwd_pchain2_k{k}"),
            BwdKernel::Dchain2 => return format!("gdn_bwd_dchain2_k{k}"),
            BwdKernel::Pchain3 => return format!("gdn_bwd_pchain3_k{k}"),
            BwdKernel::Dchain3 => return format!("gdn_bwd_dchain3_k{k}"),
            BwdKernel::Prep => return prep.kernel_name("bwd", tag, k),
            BwdKernel::Fscan => "fscan",
            BwdKernel::Fold => "fold",
            BwdKernel::DscanIo => "dscan_io",
            BwdKernel::Psum => "psum",
            BwdKernel::Fscanp => "fscanp",
            BwdKernel::Dsum => "dsum",
            BwdKernel::Dscanp => "dscanp",
            BwdKernel::FscanR4 => "fscan_r4",
            BwdKernel::DscanW8 => "dscan_w8",
            BwdKernel::DsumW8 => "dsum_w8",
            BwdKernel::DscanpW8 => "dscanp_w8",
            BwdKernel::DscanOv => "dscan_ov",
            BwdKernel::DscanpOv => "dscanp_ov",
            BwdKernel::TokensTc11 => "tokens_tc11",
            BwdKernel::TokensTc11Ov => "tokens_tc11_ov",
            BwdKernel::DscanOv2 => "dscan_ov2",
            BwdKernel::DscanpOv2 => "dscanp_ov2",
            BwdKernel::DscanOv5 => "dscan_ov5",
            BwdKernel::DscanpOv5 => "dscanp_ov5",
            BwdKernel::DscanOv5Dr => "dscan_ov5dr",
            BwdKernel::DscanpOv5Dr => "dscanp_ov5dr",
            BwdKernel::TokensTc13Ov => "tokens_tc13_ov",
            BwdKernel::TokensTc12 => "tokens_tc12",
            BwdKernel::TokensTc12Ov => "tokens_tc12_ov",
        };
        format!("gdn_bwd_{body}_{tag}_k{k}")
    }

    /// The scalar form's kernel in place of this one ([`BwdPrepForm::Scalars`], the `scaled` row
    /// of [`FORM_RULES`]): the prep, the uncut `gx` / `gx4` replays (also those storing `U` for
    /// `tc16`) and the uncut producer `dscan_ov2gx`; `None` for the others.
    pub fn scalar_form(self) -> Option<BwdKernel> {
        FORM_RULES[SCALED].swapped(self).map(|s| s.to)
    }

    /// The slim form's kernel in place of this scalar-form one ([`BwdPrepForm::Slim`], the `slim`
    /// row of [`FORM_RULES`]): the storing uncut replays `gxscu` / `gx4scu` and the prep
    /// `prep15sc`; `None` for the others.
    pub fn slim_form(self) -> Option<BwdKernel> {
        FORM_RULES[SLIM].swapped(self).map(|s| s.to)
    }

    /// The piece chain's slim-form kernel in place of this one ([`BwdPrepForm::SlimPieces`],
    /// the `slimp` row of [`FORM_RULES`], [`PIECE_SLIM_SWAPS`]); `None` for the others.
    pub fn piece_slim_form(self) -> Option<BwdKernel> {
        FORM_RULES[SLIM_PIECES].swapped(self).map(|s| s.to)
    }

    /// The dynamic shared memory of the scalar and slim forms' uncut replays at their stages
    /// (`gx*`: [`FSCAN_GX_STAGES`], `gx4*`: 4), before the one-block-per-SM floor; `None` for
    /// every other kernel. The `scaled` and `slim` rows of [`FORM_RULES`] size by it
    /// ([`super::bwd_select::Relaunch::UncutReplay`]).
    pub(super) fn form_replay_smem(self) -> Option<u32> {
        match self {
            BwdKernel::FscanGxSc | BwdKernel::FscanGxScU => {
                Some(fscan_gxsc_smem_bytes(FSCAN_GX_STAGES))
            }
            BwdKernel::FscanGx4Sc | BwdKernel::FscanGx4ScU => Some(fscan_gxsc_smem_bytes(4)),
            BwdKernel::FscanGxSl => Some(fscan_gxsl_smem_bytes(FSCAN_GX_STAGES)),
            BwdKernel::FscanGx4Sl => Some(fscan_gxsl_smem_bytes(4)),
            _ => None,
        }
    }

    /// Whether the kernel is launched with programmatic dependent launch (the consumer of a
    /// producer / consumer pair, `kernels/include/gdn_bwd_overlap.cuh`).
    pub fn programmatic(self) -> bool {
        matches!(
            self,
            BwdKernel::TokensTc11Ov
                | BwdKernel::TokensTc12Ov
                | BwdKernel::TokensTc13Ov
                | BwdKernel::TokensTc16Ov
                | BwdKernel::TokensTw1Ov
                | BwdKernel::TokensTw3Ov
                | BwdKernel::TokensTw7Ov
        )
    }

    /// Whether this kernel reads the ring's tensor maps ([`BwdTmaParams::maps`]): `tw7`.
    pub fn reads_ring_maps(self) -> bool {
        self == BwdKernel::TokensTw7Ov
    }
}

// ALL lists every kernel once, in discriminant order.
rows_in_discriminant_order!(BwdKernel::ALL, k => *k);

/// Kernels of the `gdn_bwd` module a backward plan resolves, in [`BwdKernel`] order
/// (`tag` = `bf16` / `f16`, `k` = K = V; `prep`: the factor kernel, which the plan must then be
/// built with too).
pub fn kernel_names(tag: &str, k: i64, prep: PrepVariant) -> [String; BwdKernel::ALL.len()] {
    BwdKernel::ALL.map(|kernel| kernel.name(tag, k, prep))
}

/// What the backward's prep stores for the scans (session 27; `DNNPLAN_GDN_BWD_PREP=full|scaled|slim`,
/// read at plan build).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BwdPrepForm {
    /// The scaled tiles `Q⁺`, `Kᴿ`, `E` (io, 16 KB each per chunk and head at K = 128), read by the
    /// replay and the reverse scan.
    Full,
    /// `scaled`: four fp32 scalars per token instead (1 KB per chunk and head:
    /// [`BwdKernel::PrepSc`]); the replay and the reverse scan read the graph's raw `q`, `k` and
    /// scale ([`BwdKernel::FscanGxSc`], [`BwdKernel::FscanGx4Sc`], [`BwdKernel::DscanOv2GxSc`]).
    /// Only where [`BwdPrepForm::scalar_form`] holds; elsewhere the plan runs the full form. Not
    /// bitwise the full form (other roundings): validated against the fp64 reference.
    Scalars,
    /// `slim` (session 28, helper sb28): [`BwdPrepForm::Scalars`] with the `tc16` pair's storing
    /// replay rebuilding `U` from the raw `k`, `v` rows, `T` and the scalars as the forward slim
    /// scan does ([`BwdKernel::FscanGxSl`], [`BwdKernel::FscanGx4Sl`]), so that nothing reads `W`
    /// and `Ũᵀ`. Where the scalar form runs without that replay (`tc13`, whose token stage reads
    /// `W` and `Ũᵀ`), the scalar form; elsewhere the full form. Not bitwise the scalar form (`U`
    /// rounds `Z`, then × `T`): validated against the fp64 reference.
    Slim,
    /// `slimp` (session 29, helper ps29): [`BwdPrepForm::Slim`], and the piece chain on the slim
    /// form too: its token stage `tc16` with the seeded replay storing `U` ([`u_pair_replay`] at
    /// `P > 1`), then, where the chain runs the `p1` passes with the io-`dR` producer at
    /// K = V = 128 and the v15 prep, the `slimp` row of [`FORM_RULES`] ([`PIECE_SLIM_SWAPS`]: `prep15sl`, the
    /// slim summaries `psum_sl`, the slim seeded replay `fscan_gxsl`). Where the swap does not
    /// apply the chain runs the full form with `tc16` (bitwise `tc13`). Not bitwise the full
    /// form on the swapped piece chain: validated against the fp64 reference.
    SlimPieces,
}

/// The prep form without `DNNPLAN_GDN_BWD_PREP`: [`BwdPrepForm::SlimPieces`] since session 29
/// (helpers ps29, pr29: the piece chain's passes on the slim form too, [`PIECE_SLIM_SWAPS`]; the
/// whole backward at (1,32768,16) 2.486 / 2.489 → 2.171 / 2.173 ms (−12.7 %), (4,8192,16) the same
/// plan; backward tests pass at the rule's, 8 and 4 pieces against the fp64 reference with every
/// error the same size or smaller but for small moves (long span dG 3.80e-3 → 4.01e-3), memcheck
/// clean; bench/gdn_device_ps29_run1.log). `DNNPLAN_GDN_BWD_PREP=slim` keeps session 28's form (the
/// piece chain in the full form, `tc13`). [`BwdPrepForm::Slim`] since session 28 (helper
/// sb28: the storing replay rebuilds `U` from the raw `k`, `v`, `T` and the scalars, the prep
/// `prep15sl` writes no `W`, `Ũᵀ`; the whole backward −6.0 / −6.9 / −4.2 % at (4,8192,16),
/// (16,2048,32) and the ragged mix against the scalar form, unchanged on the piece chain; tests pass
/// against the fp64 reference with every error the same size or smaller, memcheck clean;
/// bench/gdn_device_sb28_run1.log). Session 27 (helper qke27) made [`BwdPrepForm::Scalars`] the
/// default (−3.2..−3.5 % at (4,8192,16) and (16,2048,32), −1.6..−2.3 % on the ragged mix; with
/// `tc16` −5.2 / −3.7 / −3.0 %; bench/gdn_device_qke27_run{1,2}.log). Where
/// [`BwdPrepForm::scalar_form`] does not hold the plan runs the full form.
/// `DNNPLAN_GDN_BWD_PREP=scaled` keeps session 27's form, `=full` forces the full form (the witnesses).
pub const BWD_PREP_FORM_BY_RULE: BwdPrepForm = BwdPrepForm::SlimPieces;

impl BwdPrepForm {
    /// [`BWD_PREP_FORM_BY_RULE`], then `DNNPLAN_GDN_BWD_PREP=full|scaled|slim|slimp`.
    pub fn pick() -> BwdPrepForm {
        Self::from_switch(
            std::env::var("DNNPLAN_GDN_BWD_PREP")
                .as_deref()
                .unwrap_or(""),
        )
    }

    /// The `DNNPLAN_GDN_BWD_PREP` values and the forms they name.
    pub const NAMED: [(&'static str, BwdPrepForm); 4] = [
        ("full", BwdPrepForm::Full),
        ("scaled", BwdPrepForm::Scalars),
        ("slim", BwdPrepForm::Slim),
        ("slimp", BwdPrepForm::SlimPieces),
    ];

    /// The form a `DNNPLAN_GDN_BWD_PREP` value names (anything else: [`BWD_PREP_FORM_BY_RULE`]).
    pub fn from_switch(value: &str) -> BwdPrepForm {
        super::switches::named(&Self::NAMED, Some(value)).unwrap_or(BWD_PREP_FORM_BY_RULE)
    }

    /// Whether a plan runs the scalar form: this form is [`BwdPrepForm::Scalars`],
    /// [`BwdPrepForm::Slim`] or [`BwdPrepForm::SlimPieces`] (the scalar form with the slim replay,
    /// the `slim` row of [`FORM_RULES`]; the conditions are the `scaled` row's), K = V = 128,
    /// the prep is v15, the sequences are uncut (`pieces` ≤ 1), the uncut replay runs
    /// (`replay`: its kernel, `None` when checkpoints replace it) and is `gx` or `gx4` (or the
    /// `tc16` pair's `U`-storing `gxu` / `gx4u`), and the
    /// uncut reverse scan (`producer`) is the overlapped `dscan_ov2gx` (the defaults at
    /// K = V = 128). Elsewhere the full form runs.
    pub fn scalar_form(
        self,
        k: u64,
        v: u64,
        prep: PrepVariant,
        pieces: u64,
        replay: Option<BwdKernel>,
        producer: BwdKernel,
    ) -> bool {
        let rule = &FORM_RULES[SCALED];
        let ctx = FormContext {
            form: self,
            pieces,
            k,
            v,
            prep,
            sms: 0,
            split: false,
            slim_prep: BwdSlimPrep::V15,
            replay_one_per_sm: false,
        };
        let kernels: Vec<BwdKernel> = replay.into_iter().chain([producer]).collect();
        rule.holds(&ctx) && rule.needs_met(&kernels)
    }

    /// Whether the uncut plan swaps the scalar form for the slim one (the `slim` row of
    /// [`FORM_RULES`] takes this form).
    pub fn slim(self) -> bool {
        matches!(self, BwdPrepForm::Slim | BwdPrepForm::SlimPieces)
    }

    /// Whether the piece chain pairs `tc16` with its seeded replay storing `U` and takes
    /// the `slimp` row of [`FORM_RULES`] where it applies ([`BwdPrepForm::SlimPieces`]).
    pub fn on_pieces(self) -> bool {
        self == BwdPrepForm::SlimPieces
    }
}

/// The piece chain's slim form ([`BwdPrepForm::SlimPieces`], session 29, helper ps29): each
/// kernel of the full-form chain with `tc16` (left) and its slim-form replacement (right), the
/// pairs of the `slimp` row of [`FORM_RULES`] ([`SLIM_PIECES_SWAPS`]). The row applies only where
/// every left kernel is in the plan (K = V = 128, the v15 prep, the `p1` passes, the storing
/// seeded replay `gx` of the `tc16` pair, the overlapped io-`dR` producer), so that no launch
/// reads `W`, `Ũᵀ`, `Q⁺`, `Kᴿ` or `E`, which `prep15sl` does not write.
pub const PIECE_SLIM_SWAPS: [(BwdKernel, BwdKernel); 6] = swap_pairs(&SLIM_PIECES_SWAPS);

/// A [`FormContext`] for the plan tests' view of one row ([`FormRule::apply`] on built steps):
/// `form` on `pieces` pieces at K = `k`, V = `v` with the factor kernel `prep` on `sms` SMs, the
/// knobs on, one uncut replay block per SM where `replay_one_per_sm` says so.
#[cfg(test)]
fn test_context(
    form: BwdPrepForm,
    pieces: u64,
    (k, v, prep, sms): (u64, u64, PrepVariant, u64),
    replay_one_per_sm: bool,
) -> FormContext {
    FormContext {
        form,
        pieces,
        k,
        v,
        prep,
        sms,
        split: true,
        slim_prep: BwdSlimPrep::V16c,
        replay_one_per_sm,
    }
}

/// The `slimp` row ([`SLIM_PIECES`]) on built steps `steps` at `k` = `v` = 128 with the v15
/// prep (`prep`): returns whether it applied (the plan tests' view).
#[cfg(test)]
fn piece_slim_swap(steps: &mut [Step], k: u64, v: u64, prep: PrepVariant, sms: u64) -> bool {
    let ctx = test_context(BwdPrepForm::SlimPieces, 2, (k, v, prep, sms), false);
    FORM_RULES[SLIM_PIECES].apply(steps, &ctx)
}

/// The `slim` row ([`SLIM`]) on built scalar-form steps `steps`, one uncut replay block per SM
/// where `replay_one_per_sm` says so (the plan tests' view).
#[cfg(test)]
fn slim_swap(steps: &mut [Step], replay_one_per_sm: bool, sms: u64) -> bool {
    let ctx = test_context(
        BwdPrepForm::Slim,
        1,
        (128, 128, PrepVariant::V15, sms),
        replay_one_per_sm,
    );
    FORM_RULES[SLIM].apply(steps, &ctx)
}

/// The `prep16` row ([`PREP16`]) on built steps `steps` (the plan tests' view).
#[cfg(test)]
fn prep16_swap(steps: &mut [Step], sms: u64) -> bool {
    let ctx = test_context(
        BwdPrepForm::Slim,
        1,
        (128, 128, PrepVariant::V15, sms),
        false,
    );
    FORM_RULES[PREP16].apply(steps, &ctx)
}

/// The `prep16c` row ([`PREP16C`]) on built steps `steps` (the plan tests' view).
#[cfg(test)]
fn prep16c_swap(steps: &mut [Step], sms: u64) -> bool {
    let ctx = test_context(
        BwdPrepForm::Slim,
        1,
        (128, 128, PrepVariant::V15, sms),
        false,
    );
    FORM_RULES[PREP16C].apply(steps, &ctx)
}

/// The `prep16l` row ([`PREP16L`]) on built steps `steps` (the plan tests' view).
#[cfg(test)]
fn prep16l_swap(steps: &mut [Step], sms: u64) -> bool {
    let mut ctx = test_context(
        BwdPrepForm::Slim,
        1,
        (128, 128, PrepVariant::V15, sms),
        false,
    );
    ctx.slim_prep = BwdSlimPrep::V16l;
    FORM_RULES[PREP16L].apply(steps, &ctx)
}

/// The `split` row ([`SPLIT`]) on built uncut steps `steps` (the plan tests' view).
#[cfg(test)]
fn split_swap(steps: &mut [Step]) -> bool {
    let ctx = test_context(
        BwdPrepForm::Scalars,
        1,
        (128, 128, PrepVariant::V15, 132),
        false,
    );
    FORM_RULES[SPLIT].apply(steps, &ctx)
}

/// The backward slim prep's form (`DNNPLAN_GDN_BWD_SLIMPREP`, read at plan build): each form is
/// the one before it with one more change and computes the same values; the `prep16`, `prep16c`
/// and `prep16l` rows of [`FORM_RULES`] apply up to the plan's form
/// ([`FormKnob::SlimPrep`](super::bwd_select::FormKnob::SlimPrep)).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BwdSlimPrep {
    /// `v15`: `prep15sl` ([`BwdKernel::PrepSl`], session 28).
    V15,
    /// `v16`: on the forward slim prep's tile, `prep16sl` ([`BwdKernel::PrepSl16`]; session 29,
    /// helper bp29: bench/gdn_prep_host_emu.cpp with `GDN_EMU_BP16=1` gives the whole workspace
    /// bitwise; on the H200 the backward's hashes are bitwise base's,
    /// bench/gdn_device_bp29_run1.log; a faster prep).
    V16,
    /// `v16c`: that tile trimmed, `prep16slc` ([`BwdKernel::PrepSl16c`]; session 32, helper pp32:
    /// two block barriers fewer; bench/gdn_device_pp32b_run1.log: backward hashes BITWISE base's
    /// uncut and at 8 pieces, memcheck clean; prep stage −2.0 % at (4,8192,16), −1.5 % at
    /// (16,2048,32)).
    V16c,
    /// `v16l`: that trimmed tile with the chunk located in one round of loads, `prep16sll`
    /// ([`BwdKernel::PrepSl16l`]; session 35, helper pr35: bench/gdn_device_pr35b_run1.log,
    /// backward hashes BITWISE base's uncut and at 8 pieces, memcheck clean; prep stage −2.1 % /
    /// −1.9 % at 16 / 10 sequences).
    V16l,
}

/// The backward slim prep's form by rule: `v16l` where the batch's sequence count lies in
/// [`SLIM_PREP_LOCATE_WARP_SEQS`] (the forward's `wgl` rule), `v16c` elsewhere
/// ([`BwdSlimPrep::by_rule`]).
pub const BWD_SLIM_PREP_BY_RULE: BwdSlimPrep = BwdSlimPrep::V16l;

impl BwdSlimPrep {
    /// Every form with its `DNNPLAN_GDN_BWD_SLIMPREP` value, in order.
    pub const NAMED: [(&'static str, BwdSlimPrep); 4] = [
        ("v15", BwdSlimPrep::V15),
        ("v16", BwdSlimPrep::V16),
        ("v16c", BwdSlimPrep::V16c),
        ("v16l", BwdSlimPrep::V16l),
    ];

    /// The form by rule for a batch of `n_seqs` sequences: [`BWD_SLIM_PREP_BY_RULE`], whose `v16l`
    /// holds only where `n_seqs` lies in [`SLIM_PREP_LOCATE_WARP_SEQS`] (`v16c` elsewhere).
    pub fn by_rule(n_seqs: i64) -> BwdSlimPrep {
        let (lo, hi) = SLIM_PREP_LOCATE_WARP_SEQS;
        if BWD_SLIM_PREP_BY_RULE == BwdSlimPrep::V16l && !(lo..=hi).contains(&n_seqs) {
            BwdSlimPrep::V16c
        } else {
            BWD_SLIM_PREP_BY_RULE
        }
    }

    /// The form for a `DNNPLAN_GDN_BWD_SLIMPREP` value: a value of [`BwdSlimPrep::NAMED`] forces
    /// its form; anything else or unset: [`BwdSlimPrep::by_rule`].
    pub fn from_switch(value: Option<&str>, n_seqs: i64) -> BwdSlimPrep {
        super::switches::named(&Self::NAMED, value).unwrap_or_else(|| Self::by_rule(n_seqs))
    }

    /// The form for a batch of `n_seqs` sequences, `DNNPLAN_GDN_BWD_SLIMPREP` read now.
    pub fn from_env(n_seqs: i64) -> BwdSlimPrep {
        Self::from_switch(
            std::env::var("DNNPLAN_GDN_BWD_SLIMPREP").as_deref().ok(),
            n_seqs,
        )
    }

    /// The prep kernel this form runs where the slim form's prep runs.
    pub fn kernel(self) -> BwdKernel {
        match self {
            BwdSlimPrep::V15 => BwdKernel::PrepSl,
            BwdSlimPrep::V16 => BwdKernel::PrepSl16,
            BwdSlimPrep::V16c => BwdKernel::PrepSl16c,
            BwdSlimPrep::V16l => BwdKernel::PrepSl16l,
        }
    }
}

/// `BwdChainParams::ov_need` of a plan's steps: 2 where the split producer's two halves publish
/// each unit ([`BwdKernel::DscanOv2GxSh`]), else 0 (the consumers wait for 1).
fn ov_need(steps: &[Step]) -> i32 {
    if steps.iter().any(|s| s.0 == BwdKernel::DscanOv2GxSh) {
        2
    } else {
        0
    }
}

/// Which forward-state replay the backward runs (`DNNPLAN_GDN_BWD_FSCAN`, read at plan build).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReplayVariant {
    /// `v1`: `gdn_bwd_fscan_*` (the forward scan's loop, also staging `Q⁺` and `A` and running
    /// the `O` products it never stores) and, per piece, `gdn_bwd_fscanp_*`.
    V1,
    /// `r4`: `gdn_bwd_fscan_r4_*` (4 warps × 16 value rows; `W`, `Kᴿ`, `Ũᵀ` only; 2 stages, one
    /// barrier per chunk), uncut and per piece.
    Rows4,
    /// `gx` (session 25): `gdn_bwd_fscan_gx_*` ([`BwdKernel::FscanGx`]: `r4`'s step on the
    /// warpgroup, wgmma with `W`, `Kᴿ` in the 128-byte swizzle; 84 KB, two blocks per SM), uncut
    /// and per piece; K = 64 runs `r4`. The default replay is [`ReplayVariant::WarpgroupRule`].
    Warpgroup,
    /// `gx3`: [`ReplayVariant::Warpgroup`] on three stages (126 KB, one block per SM).
    Warpgroup3,
    /// `gx4`: [`ReplayVariant::Warpgroup`] on four stages (164 KB, one block per SM).
    Warpgroup4,
    /// `gxr`: the warpgroup replay by [`REPLAY_SHARE_MIN_WAVES`]: below it (one block per SM
    /// anyway) the uncut replay runs `gx4` (its shared memory is the one-per-SM reservation's:
    /// deeper copies instead of idle bytes), from it `gx` (two per SM); the per-piece replay runs
    /// `gx` at two per SM. K = 64 runs `r4`.
    WarpgroupRule,
}

/// The `r4` replay stages so little (88 KB at K = 128) that two blocks fit an SM.
/// That pays off only in the throughput regime, with many waves of blocks (H200, (16, 2048, 32),
/// 1024 blocks: 0.613 ms vs 0.790 for `v1`); with fewer, the longest sequence's block shares its
/// SM for most of its chunks and the whole replay waits on it (ragged mix, 320 blocks: 0.525 ms vs
/// 0.448 for `v1`, whose 224 KB hold an SM alone). Below this many waves (blocks per SM) the launch
/// asks for [`REPLAY_ONE_PER_SM_SMEM`] bytes, so that each block holds its SM alone.
pub const REPLAY_SHARE_MIN_WAVES: u64 = 4;
/// Dynamic shared memory that keeps one replay block per SM (over half of the H200's 228 KB).
pub const REPLAY_ONE_PER_SM_SMEM: u32 = 116 * 1024;
// Two blocks do not fit an SM, one may ask for it.
const _: () = assert!(
    !SM90_BUDGET.holds(2, REPLAY_ONE_PER_SM_SMEM) && SM90_BUDGET.allows(REPLAY_ONE_PER_SM_SMEM)
);

/// Whether a replay of `blocks` blocks on `sms` SMs runs one block per SM (see
/// [`REPLAY_SHARE_MIN_WAVES`]); `DNNPLAN_GDN_BWD_FSCAN_PER_SM=1|2` forces one or allows two.
fn replay_one_per_sm(blocks: u64, sms: u64) -> bool {
    match std::env::var("DNNPLAN_GDN_BWD_FSCAN_PER_SM").as_deref() {
        Ok("1") => true,
        Ok("2") => false,
        _ => blocks < REPLAY_SHARE_MIN_WAVES * sms,
    }
}

/// The replay the backward runs without `DNNPLAN_GDN_BWD_FSCAN`: since session 25 (helper
/// fsx25) [`ReplayVariant::WarpgroupRule`] (`gxr`: the whole backward −3.0 / −0.9 / −1.1 / −4.3 %
/// at the four benchmark shapes against `r4`, gradients bitwise `r4`'s,
/// bench/gdn_device_fsx25_run2.log); the piece chain's replay is then `gx` too
/// (`ReplayVariant::own_piece_replay`). `DNNPLAN_GDN_BWD_FSCAN=r4` forces the session-6
/// replay (15-23 % faster than `v1`, bench/gdn_device_fscan6_*.log).
pub const REPLAY_BY_RULE: ReplayVariant = ReplayVariant::WarpgroupRule;

impl ReplayVariant {
    /// The `DNNPLAN_GDN_BWD_FSCAN` values and the replays they name.
    pub const NAMED: [(&'static str, ReplayVariant); 6] = [
        ("v1", ReplayVariant::V1),
        ("r4", ReplayVariant::Rows4),
        ("gx", ReplayVariant::Warpgroup),
        ("gx3", ReplayVariant::Warpgroup3),
        ("gx4", ReplayVariant::Warpgroup4),
        ("gxr", ReplayVariant::WarpgroupRule),
    ];

    /// [`REPLAY_BY_RULE`], then `DNNPLAN_GDN_BWD_FSCAN=v1|r4|gx|gx3|gx4|gxr`.
    pub fn pick() -> ReplayVariant {
        Self::from_switch(std::env::var("DNNPLAN_GDN_BWD_FSCAN").as_deref().ok())
    }

    /// The replay a `DNNPLAN_GDN_BWD_FSCAN` value names (anything else or unset:
    /// [`REPLAY_BY_RULE`]).
    pub fn from_switch(value: Option<&str>) -> ReplayVariant {
        super::switches::named(&Self::NAMED, value).unwrap_or(REPLAY_BY_RULE)
    }

    /// (kernel of the uncut replay, of the per-piece replay,
    /// threads, dynamic shared memory at K).
    fn launch(self, k: u64) -> (BwdKernel, BwdKernel, u32, u32) {
        match self {
            ReplayVariant::V1 => (
                BwdKernel::Fscan,
                BwdKernel::Fscanp,
                SCAN_WARPS * 32,
                scan_smem_bytes(k),
            ),
            ReplayVariant::Rows4 => (
                BwdKernel::FscanR4,
                BwdKernel::FscanR4,
                128,
                scanx_smem_bytes(k, 4, 2, false, 1),
            ),
            ReplayVariant::Warpgroup
            | ReplayVariant::Warpgroup3
            | ReplayVariant::Warpgroup4
            | ReplayVariant::WarpgroupRule
                if k != 128 =>
            {
                ReplayVariant::Rows4.launch(k)
            }
            ReplayVariant::Warpgroup => (
                BwdKernel::FscanGx,
                BwdKernel::FscanGx,
                128,
                fscan_gx_smem_bytes(FSCAN_GX_STAGES),
            ),
            ReplayVariant::Warpgroup3 => (
                BwdKernel::FscanGx3,
                BwdKernel::FscanGx3,
                128,
                fscan_gx_smem_bytes(3),
            ),
            ReplayVariant::Warpgroup4 => (
                BwdKernel::FscanGx4,
                BwdKernel::FscanGx4,
                128,
                fscan_gx_smem_bytes(4),
            ),
            ReplayVariant::WarpgroupRule => ReplayVariant::Warpgroup.launch(k),
        }
    }

    /// The variant the uncut replay runs: [`ReplayVariant::WarpgroupRule`]'s pick by
    /// `one_per_sm` ([`replay_one_per_sm`]), else the variant itself.
    fn uncut_at(self, one_per_sm: bool) -> ReplayVariant {
        match self {
            ReplayVariant::WarpgroupRule if one_per_sm => ReplayVariant::Warpgroup4,
            ReplayVariant::WarpgroupRule => ReplayVariant::Warpgroup,
            other => other,
        }
    }

    /// The per-piece replay (kernel, dynamic shared memory) at the variant's own blocks per SM
    /// instead of [`REPLAY_ONE_PER_SM_SMEM`] below [`REPLAY_SHARE_MIN_WAVES`] waves: `gx` and
    /// `gxr` at K = 128 run `gx`, whose two blocks per SM keep the piece chain's `P · slices`
    /// replay blocks in one wave (the piece chain's own `fscanp1` runs three per SM); `None`:
    /// the uncut replay's kernel and shared memory.
    fn own_piece_replay(self, k: u64) -> Option<(BwdKernel, u32)> {
        match self {
            ReplayVariant::Warpgroup | ReplayVariant::WarpgroupRule if k == 128 => {
                let (_, piece, _, smem) = ReplayVariant::Warpgroup.launch(k);
                Some((piece, smem))
            }
            _ => None,
        }
    }
}

/// When the reverse scan and the token stage run at the same time
/// (`kernels/include/gdn_bwd_overlap.cuh`), as data. The overlapped reverse scan runs one block per
/// (sequence or piece, head) unit row (all `V` value rows, 172 KB of shared memory at K = V = 128,
/// 206 KB with the default `R2` loop: one per SM), and a `tc11` / `tc5` token block needs a whole
/// SM (512 threads × 128 registers); so the token stage runs beside the scan on the SMs the scan
/// leaves free, and on every SM a finished scan block frees (the short sequences of a ragged
/// batch). Overlap when the scan's blocks fill at most `max_fill_num / max_fill_den` waves of the
/// SMs and the scan segments (sequences × pieces) are at most [`BWD_OVERLAP_MAX_SEGMENTS`] (the
/// chunk-order kernel's table).
pub struct OverlapRule {
    /// Numerator of the largest fill of the SMs by the reverse scan's blocks.
    pub max_fill_num: u64,
    /// Denominator of the largest fill.
    pub max_fill_den: u64,
}

/// The backward's overlap rule: up to 4 waves of scan blocks, the range measured. H200, bf16,
/// K = V = 128, whole backward off / on (bench/gdn_results.md, session 7, ovbwd): (4, 8192, 16),
/// 64 blocks, 2.562 / 2.492 ms; (1, 32768, 16) at P = 4, 64, 3.422 / 3.367; ragged mix, 160,
/// 2.600 / 2.399; (16, 2048, 32), 512 blocks (3.9 waves), 5.081 / 5.027. The overlapped scan
/// alone is slower than the 8-warp one where the GPU is full (0.93 against 0.53 ms at
/// (4, 8192, 16): twice the value rows per SM), which the token blocks beside it more than repay.
pub const BWD_OVERLAP_RULE: OverlapRule = OverlapRule {
    max_fill_num: 4,
    max_fill_den: 1,
};

/// One row of the token stage's default rule ([`BWD_TOKENS_RULE`]): the stage (a
/// [`TOKEN_STAGES`] name) a backward without `DNNPLAN_GDN_BWD_TOKENS` runs when the graph's
/// `batch_invariant` and whether `DNNPLAN_GDN_BWD_DSCAN` names a reverse scan match the row
/// (`None`: either value).
pub struct TokenStageRow {
    /// The graph's `batch_invariant`, or `None` for either.
    pub batch_invariant: Option<bool>,
    /// Whether `DNNPLAN_GDN_BWD_DSCAN` is set, or `None` for either.
    pub dscan_forced: Option<bool>,
    /// The [`TokenStage::name`] the row picks.
    pub stage: &'static str,
}

/// The token stage of the tensor-core backward by rule, first matching row (read at plan build):
/// - `batch_invariant`: `tc12`. Its outputs are bitwise the same with and without the overlap,
///   which depends on the batch (`tc13` exists only as the overlapped consumer, so it would make
///   `dV` / `dBeta`'s bits depend on the other sequences; spec linear-attention.md §5.4).
/// - a reverse scan forced by `DNNPLAN_GDN_BWD_DSCAN`: `tc12`, which pairs with every reverse
///   scan (`tc13` pairs only with its io-`dR` producers and would override the switch).
/// - otherwise `tc13` (session 22): `tc12` with `dR` in the io dtype between the overlapped
///   reverse scan and the token stage; `dQ`, `dK`, `dG`, `d_initial_state` bitwise `tc12`'s,
///   `dV` and `dBeta` from the io-rounded `dR` (fp64 errors +5-15 % / +1-19 % at the spec's
///   tolerance 4e-2, bench/gdn_results.md session 21 drio21); without the overlap its row runs
///   `tc12`. Whole backward against `tc12`, H200, bf16, K = V = 128, one process in both orders
///   (session 21's final run): (4, 8192, 16) 2.022 / 2.017 → 1.961 / 1.963 ms (−3.0 %),
///   (1, 32768, 16) 2.574 / 2.568 → 2.530 / 2.534 (−1.5 %), (16, 2048, 32) 4.014 / 4.046 →
///   3.947 / 3.936 (−2.2 %), ragged mix 1.954 / 1.950 → 1.894 / 1.922 (−2.2 %).
/// - since session 27 (helper tu27) that row names `tc16`: `tc13` loading the `U` tiles that the
///   uncut replay stores (`gdn_bwd_fscan_gx{,4}u_*`) where [`u_pair_replay`] pairs them (the
///   overlap, no piece chain, the gx replays, K = V = 128), and `tc13` itself everywhere else
///   ([`TC16_FALLBACK`]); bitwise `tc13` (every backward hash on the H200,
///   bench/gdn_device_tu27.log). Whole backward against `tc13`, one process, a b b a:
///   (4, 8192, 16) 1.855 / 1.879 → 1.840 / 1.843 ms (−1.4 %), (1, 32768, 16) the same plan
///   (8 pieces), (16, 2048, 32) 3.896 / 3.884 → 3.846 / 3.843 (−1.2 %), ragged mix
///   1.759 / 1.760 → 1.739 / 1.735 (−1.3 %).
/// - since session 30 (helper m1t30, td29's milestone M1) that row names `tw1`: `tc16`'s tile and
///   pairing with the value products on wgmma from a cp.async / mbarrier ring of value quarters
///   (`gdn_bwd_tokens_tw1_*`); bitwise `tc16` on every backward hash on the H200 (uncut and at 8
///   pieces, bench/gdn_device_m1t30_run3.log); `tc13` where `tc16` falls back. Whole backward
///   against `tc16`, one process, a b b a (m1t30's call 2): (4, 8192, 16) 1.642 / 1.657 →
///   1.619 / 1.632 ms (−1.3 %), (1, 32768, 16) 2.136 / 2.133 → 2.101 / 2.090 (−1.8 %),
///   (16, 2048, 32) 3.383 / 3.368 → 3.305 / 3.319 (−1.9 %), ragged mix 1.589 / 1.593 →
///   1.569 / 1.574 (−1.2 %). `DNNPLAN_GDN_BWD_TOKENS=tc16` keeps the previous stage.
/// - since session 32 (helper tp32) that row names `tw3`: `tw1`'s tile and pairing with the
///   unit's flag waited before the tile's first barrier and each value quarter's `dS'` / `dR`
///   copies issued with its `S`, `U`, `dO` (`gdn_bwd_tokens_tw3_*`); the same arithmetic, bitwise
///   `tw1` on every backward hash on the H200 (uncut and at 8 pieces,
///   bench/gdn_device_tp32_run2.log); the tile 15.57 → 14.96 µs (mean, tokens alone, (4, 8192,
///   16)). Whole backward against `tw1`, one process, a b b a then b a a b: (4, 8192, 16)
///   1.616 / 1.608 → 1.567 / 1.573 ms and 1.614 / 1.629 → 1.570 / 1.587 (−2.6 %),
///   (1, 32768, 16) 2.103 / 2.101 → 2.068 / 2.064 and 2.100 / 2.099 → 2.054 / 2.048 (−2.0 %),
///   (16, 2048, 32) 3.308 / 3.308 → 3.238 / 3.236 and 3.310 / 3.318 → 3.238 / 3.236 (−2.2 %),
///   ragged mix 1.569 / 1.588 → 1.531 / 1.546 and 1.581 / 1.572 → 1.535 / 1.533 (−2.6 %).
///   `DNNPLAN_GDN_BWD_TOKENS=tw1` keeps the previous stage.
/// - since session 39 that row names `tw7`: `tw3` with the ring's `S`, `dS'`, `U`, `dR` quarters
///   by tensor maps (`gdn_bwd_tokens_tw7_*`: 28 box copies by one thread per tile in place of
///   every thread's `cp.async`); bitwise `tw3` on every backward hash on the H200 (uncut and at 8
///   pieces, all eight ports; bench/gdn_device_tw7.sh). Whole backward against `tw3`, one process,
///   a b b a b a... (tw3 / tw7 / tw7 / tw3 / tw3 / tw7): (4, 8192, 16) 1.577 1.574 1.572 →
///   1.553 1.546 1.549 ms (−1.6 %), (1, 32768, 16) 2.057 2.075 2.068 → 2.049 2.043 2.043
///   (−0.8 %), (16, 2048, 32) 3.259 3.264 3.238 → 3.203 3.201 3.179 (−1.9 %), ragged mix 1.493
///   1.488 1.500 → 1.469 1.474 1.465 (−1.6 %); the token stage alone (every flag set, all SMs)
///   0.951 → 0.919 ms at (4, 8192, 16). `DNNPLAN_GDN_BWD_TOKENS=tw3` keeps the previous stage.
///
/// `tc12` (session 10) was the only default before: `tc11` (= `tc5`'s outputs) with the row
/// phase's bank conflicts removed, faster at all four benchmark shapes (whole backward, tc11 →
/// tc12, means of four runs in ABBA / BAAB order, session 10 tok12): (4, 8192, 16) 2.154 →
/// 2.136 ms, (1, 32768, 16) 3.034 → 3.013, (16, 2048, 32) 4.405 → 4.339, ragged mix 2.102 →
/// 2.087. `DNNPLAN_GDN_BWD_TOKENS=tc11|tc12|tc13|tc16|tw1|tw3|tw7` selects a stage whatever the rule
/// says.
pub const BWD_TOKENS_RULE: [TokenStageRow; 3] = [
    TokenStageRow {
        batch_invariant: Some(true),
        dscan_forced: None,
        stage: "tc12",
    },
    TokenStageRow {
        batch_invariant: None,
        dscan_forced: Some(true),
        stage: "tc12",
    },
    TokenStageRow {
        batch_invariant: None,
        dscan_forced: None,
        stage: "tw7",
    },
];

/// One token-stage kernel family the backward can run, as data: the `DNNPLAN_GDN_BWD_TOKENS`
/// value that names it, its kernel, its overlapped consumer, its dynamic shared memory at
/// K = V = `k`, whether its outputs are bitwise the default's and the overlapped reverse scans
/// its consumer needs. Every stage is a tensor-core stage writing `dQ` / `dK` / `dV` of ports
/// with `HO` heads directly (`FLAG_BWD_DIRECT`) and reading the per-chunk states in the io dtype
/// (`FLAG_BWD_S_IO`).
pub struct TokenStage {
    /// The `DNNPLAN_GDN_BWD_TOKENS` value.
    pub name: &'static str,
    /// The kernel without the overlap.
    pub kernel: BwdKernel,
    /// The consumer beside the overlapped reverse scan.
    pub overlapped: BwdKernel,
    /// Dynamic shared memory for head dims `k = v`.
    pub smem: fn(u64) -> u32,
    /// Threads per block (both kernels; the grid is one block per (chunk slot, head)).
    pub threads: u32,
    /// Whether every output is bitwise the default stage's (`tc11`, `tc12`); `false`: a stage
    /// with other roundings, validated against the fp64 reference like the default (`tc13`:
    /// `dv`, `dBeta` from the io-rounded `dR`) and never the default without a rule row that
    /// says so (knobs change speed, never numerics silently).
    pub bitwise: bool,
    /// The overlapped reverse scans (uncut, seeded piece pass) the consumer must pair with,
    /// whatever `DNNPLAN_GDN_BWD_DSCAN` says (`tc13`: the io-`dR` producers); `None`: any of
    /// `overlap_scan_kernels`' choices (they all store the fp32 `dR`).
    pub ov_scans: Option<(BwdKernel, BwdKernel)>,
    /// Whether the consumer loads the `U` tiles of the storing replay (`tc16`, session 27)
    /// instead of recomputing `U`: it runs only where [`u_pair_replay`] gives that replay; every
    /// other plan runs [`TC16_FALLBACK`] (the stage of the same numerics that recomputes `U`).
    pub loads_u: bool,
}

/// Every token stage, by `DNNPLAN_GDN_BWD_TOKENS` value; the default by [`BWD_TOKENS_RULE`].
/// A new token-stage kernel is one row here (session 30: the plan launches the row's kernel on
/// one block per (chunk slot, head) at its `threads` and `smem`; the prep forms' rows leave the
/// token stage alone), plus its [`BwdKernel`] variants and names; a stage of other numerics also
/// needs a [`BWD_TOKENS_RULE`] row before it may be a default.
/// `tc13` (session 21) exists only as an overlapped consumer: without the overlap
/// (`DNNPLAN_GDN_BWD_OVERLAP=0`, `DNNPLAN_GDN_BWD_DSCAN=v1|w8`, or a reverse scan the overlap
/// rule leaves sequential) its row runs `tc12` after the fp32-`dR` reverse scans, so the
/// io `dR` never meets an fp32-`dR` kernel (there are no io-`dR` variants of `dscan_io`, `w8`,
/// `dscanp*`). (The earlier stages `fp32`, `mma`, `tc`, `tc2`, `tc3` (not bitwise:
/// fp32 `dS'` or fp32 states), `tc4` and `tc5` (bitwise) are no longer bundled since session 12;
/// their template levels stay in `kernels/include/gdn_bwd.cuh` for the CPU emulation.)
///
/// `tc16` (session 27, helper tu27): `tc13` with `U` loaded from the uncut replay
/// ([`BwdKernel::FscanGxU`] / [`BwdKernel::FscanGx4U`] store it, the tile `tc13` recomputes
/// from `W`, `Ũᵀ` and `S_c`, bit for bit), so bitwise `tc13`; only where [`u_pair_replay`] pairs
/// it (the overlap, no piece chain, the gx replays, K = V = 128), else its row runs `tc13`.
///
/// `tw1` (session 30, helper m1t30, td29's milestone M1; the rule's stage in sessions 30, 31,
/// [`BWD_TOKENS_RULE`]): `tc16`'s pairing (the storing replay, the io-`dR` producers,
/// [`TC16_FALLBACK`] elsewhere) with [`BwdKernel::TokensTw1Ov`] as the consumer, launched like
/// `tc16`'s (grid, 512 threads, PDL) with [`tokens_tw1_tile_smem_bytes`]; its `kernel` (never
/// launched: without the overlap its row runs the fallback) is `tc12`'s. Bitwise `tc16` on every
/// backward hash on the H200; whole backward −1.2..−2.0 % at the four benchmark shapes (one
/// process, a b b a, bench/gdn_results.md session 30 m1t30): (4, 8192, 16) 1.642 / 1.657 →
/// 1.619 / 1.632 ms, (1, 32768, 16) 2.136 / 2.133 → 2.101 / 2.090, (16, 2048, 32)
/// 3.383 / 3.368 → 3.305 / 3.319, ragged mix 1.589 / 1.593 → 1.569 / 1.574.
///
/// `tw3` (session 32, helper tp32; the rule's stage since session 32): `tw1`'s row with
/// [`BwdKernel::TokensTw3Ov`] as the consumer (the flag before the tile's first barrier, each
/// quarter's `dS'` / `dR` copies with its `S`, `U`, `dO`; the same values, bitwise `tw1` on the
/// H200); the same pairing, threads and shared memory as `tw1`.
///
/// `tw7` (session 39): `tw3`'s row with [`BwdKernel::TokensTw7Ov`] (the ring by tensor maps; the
/// same values as `tw3`).
pub const TOKEN_STAGES: [TokenStage; 7] = {
    use BwdKernel::*;
    [
        TokenStage {
            name: "tc11",
            kernel: TokensTc11,
            overlapped: TokensTc11Ov,
            smem: tokens_tc11_smem_bytes,
            threads: TOK_THREADS,
            bitwise: true,
            ov_scans: None,
            loads_u: false,
        },
        TokenStage {
            name: "tc12",
            kernel: TokensTc12,
            overlapped: TokensTc12Ov,
            smem: tokens_tc12_smem_bytes,
            threads: TOK_THREADS,
            bitwise: true,
            ov_scans: None,
            loads_u: false,
        },
        TokenStage {
            name: "tc13",
            kernel: TokensTc12,
            overlapped: TokensTc13Ov,
            smem: tokens_tc12_smem_bytes,
            threads: TOK_THREADS,
            bitwise: false,
            ov_scans: Some((DscanOv5Dr, DscanpOv5Dr)),
            loads_u: false,
        },
        TokenStage {
            name: "tc16",
            kernel: TokensTc12,
            overlapped: TokensTc16Ov,
            smem: tokens_tc12_smem_bytes,
            threads: TOK_THREADS,
            bitwise: false,
            ov_scans: Some((DscanOv5Dr, DscanpOv5Dr)),
            loads_u: true,
        },
        TokenStage {
            name: "tw1",
            kernel: TokensTc12,
            overlapped: TokensTw1Ov,
            smem: tokens_tw1_tile_smem_bytes,
            threads: TOK_THREADS,
            bitwise: false,
            ov_scans: Some((DscanOv5Dr, DscanpOv5Dr)),
            loads_u: true,
        },
        TokenStage {
            name: "tw3",
            kernel: TokensTc12,
            overlapped: TokensTw3Ov,
            smem: tokens_tw1_tile_smem_bytes,
            threads: TOK_THREADS,
            bitwise: false,
            ov_scans: Some((DscanOv5Dr, DscanpOv5Dr)),
            loads_u: true,
        },
        TokenStage {
            name: "tw7",
            kernel: TokensTc12,
            overlapped: TokensTw7Ov,
            smem: tokens_tw1_tile_smem_bytes,
            threads: TOK_THREADS,
            bitwise: false,
            ov_scans: Some((DscanOv5Dr, DscanpOv5Dr)),
            loads_u: true,
        },
    ]
};

/// The stage a `tc16` row ([`TokenStage::loads_u`]) runs where [`u_pair_replay`] gives no
/// storing replay: `tc13`, the same numerics with `U` recomputed.
pub const TC16_FALLBACK: &str = "tc13";

/// The stage a row reading the ring maps ([`BwdKernel::reads_ring_maps`], `tw7`) runs where the
/// maps' rows would pass 32-bit box coordinates ([`super::tma_maps::ring_rows_addressable`]):
/// `tw3`, the same tile and values by `cp.async`.
pub const RING_MAPS_FALLBACK: &str = "tw3";

/// The uncut replay kernel that also stores the `U` tiles, in place of `replay`
/// (`gdn_bwd_fscan_gx{,4}u_*`, `STORE_U` on the gx body); `None` for a replay without such an
/// entry (`r4`, `v1`, `gx3`, and every replay at K other than 128).
pub fn replay_storing_u(replay: BwdKernel) -> Option<BwdKernel> {
    match replay {
        BwdKernel::FscanGx => Some(BwdKernel::FscanGxU),
        BwdKernel::FscanGx4 => Some(BwdKernel::FscanGx4U),
        _ => None,
    }
}

/// The storing replay of the `tc16` pair (session 27), the one source of the pairing: `Some`
/// exactly where `tc16` runs, i.e. the stage loads `U` ([`TokenStage::loads_u`]), the reverse
/// scan and the token stage overlap (`overlap`: `U` shares the `ws_dr` region with the io `dR` of
/// the overlapped producers, in its second half), no piece chain (`pieces` = 1) or one whose
/// seeded replay `replay` may store `U` too (`on_pieces`: [`BwdPrepForm::on_pieces`], session 29;
/// else the seeded replay per piece stays `gx`), the plan replays the states (`replays`: no reused or seeding
/// checkpoints), its uncut replay `replay` is `gx` or `gx4` ([`replay_storing_u`]; not under
/// `DNNPLAN_GDN_BWD_FSCAN=r4|v1|gx3`) and K = V = 128. `None`: the plan runs
/// [`TC16_FALLBACK`] and its own replay.
#[allow(clippy::too_many_arguments)]
pub fn u_pair_replay(
    stage: &TokenStage,
    overlap: bool,
    pieces: u64,
    on_pieces: bool,
    replays: bool,
    replay: BwdKernel,
    k: u64,
    v: u64,
) -> Option<BwdKernel> {
    let fits =
        stage.loads_u && overlap && (pieces == 1 || on_pieces) && replays && k == 128 && v == 128;
    replay_storing_u(replay).filter(|_| fits)
}

/// The token stage and replay a plan runs (`replay`: the uncut replay, or with `pieces` > 1 the
/// seeded replay per piece): `stage` and `replay`, except that a `tc16` row
/// ([`TokenStage::loads_u`]) runs with the storing replay where [`u_pair_replay`] gives one and as
/// [`TC16_FALLBACK`] (with `replay`) elsewhere.
#[allow(clippy::too_many_arguments)]
pub fn token_pair(
    stage: &'static TokenStage,
    overlap: bool,
    pieces: u64,
    on_pieces: bool,
    replays: bool,
    replay: BwdKernel,
    k: u64,
    v: u64,
) -> (&'static TokenStage, BwdKernel) {
    if !stage.loads_u {
        return (stage, replay);
    }
    match u_pair_replay(stage, overlap, pieces, on_pieces, replays, replay, k, v) {
        Some(storing) => (stage, storing),
        None => (TokenStage::named(TC16_FALLBACK).unwrap_or(stage), replay),
    }
}

impl TokenStage {
    /// The row of [`TOKEN_STAGES`] named `name` (`DNNPLAN_GDN_BWD_TOKENS`' values, the rule's and
    /// the fallbacks' stages), if any.
    pub fn named(name: &str) -> Option<&'static TokenStage> {
        TOKEN_STAGES.iter().find(|s| s.name == name)
    }

    /// The stage `DNNPLAN_GDN_BWD_TOKENS` = `value` selects and whether it may run beside the
    /// overlapped reverse scan: a named stage, or no value [`BWD_TOKENS_RULE`]'s stage for a
    /// graph with `batch_invariant` and `dscan_forced` (`DNNPLAN_GDN_BWD_DSCAN` set), with the
    /// overlap by rule; a value the table does not name runs the rule's stage without the
    /// overlap (so `tc12`'s kernel).
    pub fn pick(
        value: &str,
        batch_invariant: bool,
        dscan_forced: bool,
    ) -> (&'static TokenStage, bool) {
        match Self::named(value) {
            Some(stage) => (stage, true),
            None => (
                Self::by_rule(batch_invariant, dscan_forced),
                value.is_empty(),
            ),
        }
    }

    /// [`BWD_TOKENS_RULE`]'s stage: its first row matching `batch_invariant` and `dscan_forced`
    /// (the last row matches everything; a unit test checks that every row names a stage).
    pub fn by_rule(batch_invariant: bool, dscan_forced: bool) -> &'static TokenStage {
        let fits = |want: Option<bool>, have: bool| want.is_none_or(|w| w == have);
        // The last row matches every graph and every row names a stage (unit test); "tc12", the
        // stage that pairs with every reverse scan, is only the fallback of an edited table.
        let name = BWD_TOKENS_RULE
            .iter()
            .find(|r| {
                fits(r.batch_invariant, batch_invariant) && fits(r.dscan_forced, dscan_forced)
            })
            .map_or("tc12", |r| r.stage);
        Self::named(name).unwrap_or(&TOKEN_STAGES[0])
    }
}

/// The overlapped reverse scan's default kernels: (uncut, piece chain's seeded pass), the `R2`
/// loop with its publisher warp (`dscan_ov5`, `dscanp_ov5`, session 18), bitwise `dscan_ov2`'s
/// outputs (and so the session-7 kernels') and faster at all four benchmark shapes in one
/// process, order ov2 ov5 ov5 ov2 (H200, bf16, K = V = 128, whole backward with the overlap by
/// rule, bench/gdn_results.md session 20 bwd20): (4, 8192, 16) 2.010 / 2.010 → 2.003 / 2.000 ms,
/// (1, 32768, 16) 2.589 / 2.608 → 2.570 / 2.572, (16, 2048, 32) 4.052 / 4.048 → 4.029 / 4.035,
/// ragged mix 1.960 / 1.955 → 1.940 / 1.940. Before it, `dscan_ov2` / `dscanp_ov2` (session 9,
/// ov → ov2, rscan9): (4, 8192, 16) 2.323 / 2.311 → 2.185 / 2.190 ms, (1, 32768, 16)
/// 3.197 / 3.189 → 3.062 / 3.052, (16, 2048, 32) 4.769 / 4.756 → 4.431 / 4.440, ragged mix
/// 2.250 / 2.241 → 2.130 / 2.131. `DNNPLAN_GDN_BWD_DSCAN=ov` / `=ov2` / `=ov5` selects the
/// session-7 kernels (`dscan_ov`, `dscanp_ov`), the R2 loop without the publisher warp, or these,
/// and keeps the overlap rule (read at plan build).
pub const BWD_OVERLAP_SCAN_DEFAULT: (BwdKernel, BwdKernel) =
    (BwdKernel::DscanOv5, BwdKernel::DscanpOv5);

/// The overlapped reverse scan's kernels (uncut, seeded piece pass), threads per block and
/// dynamic shared memory for `DNNPLAN_GDN_BWD_DSCAN` = `dscan_env` at K = `k`, V = `v`, unless
/// the token stage's consumer needs its own (`stage_scans`, [`TokenStage::ov_scans`]): a warp
/// per 16 value rows, plus the publisher warp of `ov5` / `ov5dr` (which run the `R2` loop's
/// shared memory).
fn overlap_scan_kernels(
    dscan_env: &str,
    stage_scans: Option<(BwdKernel, BwdKernel)>,
    k: u64,
    v: u64,
) -> (BwdKernel, BwdKernel, u32, u32) {
    let (uncut, piece) = match (stage_scans, dscan_env) {
        (Some((BwdKernel::DscanOv5Dr, BwdKernel::DscanpOv5Dr)), "ov2gx")
            if k == 128 && v == 128 =>
        {
            (BwdKernel::DscanOv2Gx, BwdKernel::DscanpOv2Gx)
        }
        (Some((BwdKernel::DscanOv5Dr, piece)), "ov2gxu") if k == 128 && v == 128 => {
            (BwdKernel::DscanOv2Gx, piece)
        }
        (Some((BwdKernel::DscanOv5Dr, piece)), "ov5dr") => (BwdKernel::DscanOv5Dr, piece),
        (Some((BwdKernel::DscanOv5Dr, piece)), _)
            if IO_DR_UNCUT_WGMMA_BY_RULE && k == 128 && v == 128 =>
        {
            (BwdKernel::DscanOv2Gx, piece)
        }
        (Some(scans), _) => scans,
        (None, "ov") => (BwdKernel::DscanOv, BwdKernel::DscanpOv),
        (None, "ov2") => (BwdKernel::DscanOv2, BwdKernel::DscanpOv2),
        (None, "ov5") => (BwdKernel::DscanOv5, BwdKernel::DscanpOv5),
        _ => BWD_OVERLAP_SCAN_DEFAULT,
    };
    let (threads, smem) = overlap_scan_launch(uncut, k, v);
    (uncut, piece, threads, smem)
}

/// An overlapped reverse scan's (threads per block, dynamic shared memory) at K = `k`,
/// V = `v`: a warp per 16 value rows, plus the publisher warp of `ov5` / `ov5dr` (which run the
/// `R2` loop's shared memory); `ov`: its two stages only; the wgmma loop `ov2gx` (session 25):
/// no publisher warp, [`dscan_ov2gx_smem_bytes`] (at K = V = 128, where it is bundled; elsewhere
/// its rows name `ov5dr`'s kernels and take their shape). Per kernel, so that an uncut producer
/// and a piece pass of different shapes can pair (`DNNPLAN_GDN_BWD_DSCAN=ov2gxu`).
pub(super) fn overlap_scan_launch(kernel: BwdKernel, k: u64, v: u64) -> (u32, u32) {
    use BwdKernel::*;
    let gx = k == 128 && v == 128;
    let (publisher, smem) = match kernel {
        DscanOv | DscanpOv => (false, dscan_ov_smem_bytes(k, v)),
        DscanOv2Gx | DscanpOv2Gx if gx => (false, dscan_ov2gx_smem_bytes(k, v)),
        DscanOv2GxSc | DscanpOv2GxSc if gx => (false, dscan_ov2gxsc_smem_bytes(k, v)),
        DscanOv5 | DscanpOv5 | DscanOv5Dr | DscanpOv5Dr | DscanOv2Gx | DscanpOv2Gx
        | DscanOv2GxSc | DscanpOv2GxSc => (true, dscan_ov2_smem_bytes(k, v)),
        _ => (false, dscan_ov2_smem_bytes(k, v)),
    };
    ((v / 16 + u64::from(publisher)) as u32 * 32, smem)
}

/// `DNNPLAN_GDN_BWD_DSCAN` values that name producers of the io `dR` (`tc13`'s pair): they do
/// not count as a forced reverse scan for [`BWD_TOKENS_RULE`] (which would pick `tc12`, the
/// fp32-`dR` stage, and so never run them). `ov2gx` (session 25): both producers on the wgmma
/// loop at K = V = 128 ([`BwdKernel::DscanOv2Gx`], [`BwdKernel::DscanpOv2Gx`]); `ov2gxu`: the
/// uncut one only (the piece pass stays `dscanp_ov5dr`).
/// `ov5dr`: the session-21 producers (`dscan_ov5dr`, `dscanp_ov5dr`) also at K = V = 128.
pub const IO_DR_SCAN_SWITCHES: [&str; 3] = ["ov2gx", "ov2gxu", "ov5dr"];

/// The other `DNNPLAN_GDN_BWD_DSCAN` values the plan reads: `v1` / `w8` (the 4- or 8-warp reverse
/// scan on every launch), `ov` / `ov2` / `ov5` (the overlapped producer's kernels,
/// `overlap_scan_kernels`).
pub const DSCAN_SWITCHES: [&str; 5] = ["v1", "w8", "ov", "ov2", "ov5"];

/// Whether tc13's uncut producer at K = V = 128 is the wgmma loop [`BwdKernel::DscanOv2Gx`]
/// by rule (session 25, helper dsx25: the scan 0.60 → 0.42 ms, the whole backward −2.5 % at
/// (4,8192,16), −2.7 % on the ragged mix, neutral at (16,2048,32); tests pass, memcheck clean;
/// not bitwise `dscan_ov5dr`). The piece pass stays `dscanp_ov5dr` (its wgmma form was no
/// faster at (1,32768,16)); `DNNPLAN_GDN_BWD_DSCAN=ov5dr` forces the old producer,
/// `=ov2gx` both wgmma producers.
pub const IO_DR_UNCUT_WGMMA_BY_RULE: bool = true;

/// Whether the scalar form's uncut producer runs split by rule ([`BwdKernel::DscanOv2GxSh`]: two
/// blocks per (sequence, head) unit of 64 value rows each, two blocks per SM) from
/// [`DSCAN_SPLIT_MIN_WAVES`] waves of units (session 29, helper dw29); below it (and with `false`)
/// [`BwdKernel::DscanOv2GxSc`] (one block of all 128 value rows per unit, one per SM: its 236
/// registers × 256 threads fill the register file). H200, one process, A B B A B A A B
/// (bench/gdn_device_dw29_run1.log): (16, 2048, 32) whole backward 3.470 → 3.417 ms (−1.5 %; the
/// producer alone 0.610 → 0.555), gradients bitwise; forced below the threshold it loses
/// ((4, 8192, 16) 1.681 → 1.820 ms, ragged mix 1.626 → 1.693: the halves take twice the SMs, which
/// the token stage then lacks).
pub const DSCAN_SPLIT_BY_RULE: bool = true;

/// From this many waves of units (`N · HO` sequence-head pairs per SM) the split reverse scan
/// (where [`DSCAN_SPLIT_BY_RULE`] holds): (16, 2048, 32) has 512 units on 132 SMs (3.9 waves),
/// the ragged mix 160 (1.2), (4, 8192, 16) 64 (0.5). Below it the one-block scan's units leave SMs
/// free for the token stage beside them (the overlap hides most of the scan), and a unit's two
/// halves only double its tile reads.
pub const DSCAN_SPLIT_MIN_WAVES: u64 = 2;

/// Whether the scalar form's uncut producer runs split ([`BwdKernel::DscanOv2GxSh`]) over `units`
/// (sequence, head) units on `sms` SMs: [`DSCAN_SPLIT_BY_RULE`] from [`DSCAN_SPLIT_MIN_WAVES`]
/// waves; `DNNPLAN_GDN_BWD_DSCAN_SPLIT=1|2` (read at plan build) forces one block per unit or the
/// two halves (bitwise either way).
pub fn dscan_split(units: u64, sms: u64) -> bool {
    match std::env::var("DNNPLAN_GDN_BWD_DSCAN_SPLIT").as_deref() {
        Ok("1") => false,
        Ok("2") => true,
        _ => dscan_split_by_rule(units, sms),
    }
}

/// [`dscan_split`] without the switch.
pub fn dscan_split_by_rule(units: u64, sms: u64) -> bool {
    DSCAN_SPLIT_BY_RULE && units >= DSCAN_SPLIT_MIN_WAVES * sms
}

/// The most scan segments (sequences × pieces) the overlapped token stage orders
/// (`gdn::OVERLAP_MAX_SEGMENTS`).
pub const BWD_OVERLAP_MAX_SEGMENTS: u64 = 64;

impl OverlapRule {
    /// Whether the overlapped kernels can run a reverse scan of `blocks` blocks over `segments`
    /// scan segments at all (the chunk-order table's size), whatever the rule or switch says.
    pub fn supported(blocks: u64, segments: u64) -> bool {
        segments <= BWD_OVERLAP_MAX_SEGMENTS && blocks > 0
    }

    /// Whether a reverse scan of `blocks` overlapped blocks (`segments` scan segments) on `sms`
    /// SMs runs beside the token stage.
    pub fn overlap(&self, blocks: u64, segments: u64, sms: u64) -> bool {
        Self::supported(blocks, segments) && self.max_fill_den * blocks <= self.max_fill_num * sms
    }
}

/// Whether the plan overlaps the reverse scan and the token stage: [`BWD_OVERLAP_RULE`], or
/// `DNNPLAN_GDN_BWD_OVERLAP=0` (never) / `=1` (whenever the segments fit the order table); only
/// with a token stage that has an overlapped consumer ([`TOKEN_STAGES`], [`TokenStage::pick`])
/// and the default reverse-scan choice (read at plan build).
fn overlap_pick(supported: bool, blocks: u64, segments: u64, sms: u64) -> bool {
    if !supported || !OverlapRule::supported(blocks, segments) {
        return false;
    }
    match std::env::var("DNNPLAN_GDN_BWD_OVERLAP").as_deref() {
        Ok("0") => false,
        Ok("1") => true,
        _ => BWD_OVERLAP_RULE.overlap(blocks, segments, sms),
    }
}

/// The backward's schedule of its sequential stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BwdSchedule {
    /// Pieces per sequence of the forward-state replay and the reverse scan (1 = no piece chain).
    pub pieces: u64,
    /// The piece passes' kernel set: a row of [`BWD_PIECE_PASSES`].
    pub passes: &'static PiecePasses,
}

/// When the backward cuts sequences into pieces, as data: the sequential stages run
/// `blocks = N · HO · V/64` blocks; when they fill at most `1 / min_fill_inv` of the GPU and
/// the sequences hold at least `min_avg_chunks` chunks on average (and `batch_invariant` is
/// off: the cut would depend on the batch), `P` = the most pieces (at most `max_pieces`) whose
/// latency-bound piece passes each fit one wave ([`PiecePasses::max_pieces`]; with the two-stage
/// passes `⌊SMs / blocks⌋`).
pub struct PieceRule {
    /// Cut only when `min_fill_inv · blocks ≤ SMs`.
    pub min_fill_inv: u64,
    /// Cut only sequences of at least this many chunks on average.
    pub min_avg_chunks: u64,
    /// The most pieces per sequence.
    pub max_pieces: u64,
}

/// The backward's rule (the forward's constants; H200, (1, 32768, 16): P = 3, 4 and 8 measured
/// 4.942, 4.565 and 4.858 ms against 6.176 ms uncut in session 5; since session 14 the one-stage
/// passes `p1` at P = 8: 2.733 ms against 2.845 for the session-13 passes at P = 4,
/// [`BWD_PIECE_PASSES`]; bench/gdn_results.md).
pub const BWD_PIECE_RULE: PieceRule = PieceRule {
    min_fill_inv: 2,
    min_avg_chunks: 8,
    max_pieces: 16,
};

/// One set of the piece chain's pass kernels, as data: the `DNNPLAN_GDN_BWD_PIECE_PASSES` value
/// that names it, the K its kernels serve (`None`: every K), and per pass its kernel, the blocks
/// per SM it runs at and its shared-memory layout ([`PiecePasses::psum_smem`],
/// [`PiecePasses::replay_smem`], [`PiecePasses::dsum_smem`]). The passes' grids: the summaries `psum` `slices · (2P − 1)` blocks
/// (`H_j` of pieces 0..P−2 and every piece's transition), the seeded replay `slices · P`, the
/// reverse summaries `dsum` `slices · (P − 1)` (`slices = N · HO · V/64`); the seeded reverse
/// scan is [`BWD_OVERLAP_SCAN_DEFAULT`]'s, overlapped with the token stage by
/// [`BWD_OVERLAP_RULE`] (`N · HO · P` blocks of all `V` value rows, one per SM).
#[derive(Debug, PartialEq, Eq)]
pub struct PiecePasses {
    /// The `DNNPLAN_GDN_BWD_PIECE_PASSES` value.
    pub name: &'static str,
    /// K = V the kernels serve (`None`: every K).
    pub k: Option<u64>,
    /// The summary pass (4 warps on the forward summary's loop, `gdn::FastSmem`).
    pub psum: PiecePass,
    /// The summary pass under state checkpoints (session 17; the forward states need no chain):
    /// the same loop, per SM and stages, giving only the reverse transitions `Mᵀ_j`
    /// (`slices · (P − 1)` blocks).
    pub psum_mt: BwdKernel,
    /// The seeded replay (4 warps on the `r4` replay's loop, `gdn::ScanxSmem`; `None`:
    /// [`ReplayVariant`]'s piece replay, one block per SM below [`REPLAY_SHARE_MIN_WAVES`] waves).
    pub replay: Option<PiecePass>,
    /// The reverse summaries (the 4-warp reverse scan's loop, `gdn::DscanMmaSmem`; `None`:
    /// [`BWD_DSCAN_RULE`]'s `dsum` / `dsum_w8`, one block per SM).
    pub dsum: Option<PiecePass>,
}

/// One pass of a [`PiecePasses`] row (4 warps): its kernel, the blocks per SM it runs at and its
/// shared-memory layout.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PiecePass {
    /// The kernel.
    pub kernel: BwdKernel,
    /// Blocks per SM (its launch bounds; [`PiecePasses::max_pieces`] counts on them).
    pub per_sm: u64,
    /// Shared-memory layout on the cp.async stages of its chunk loop (1: the session-14 phased
    /// kernels).
    pub smem: PassSmem,
}

impl PiecePass {
    /// Dynamic shared memory at K = V = `k`.
    pub fn smem_bytes(&self, k: u64) -> u32 {
        self.smem.bytes(k, 4)
    }
}

/// Every piece-pass set, the default first where its K matches ([`PiecePasses::pick`]):
/// `p1` (session 14, K = 128): the one-stage phased passes `gdn_bwd_psum1_*` (three per SM),
/// `gdn_bwd_fscanp1_*` (three per SM), `gdn_bwd_dsum1_*` (two per SM), each bitwise its two-stage
/// kernel's outputs; `s2` (the session-13 passes): `gdn_bwd_psum_*` (two per SM), the replay of
/// [`ReplayVariant`] and the reverse summaries of [`BWD_DSCAN_RULE`] (one per SM each). Both run
/// the seeded reverse scan overlapped with the token stage. H200, bf16, (1, 32768, 16), whole
/// backward (bench/gdn_results.md, session 14, bocc14): s2 at its P = 4 2.856 / 2.834 ms, p1 at
/// P = 8 (this rule) 2.733 / 2.734 (same call; 2.757 in the second call), p1 at P = 4 / 6 / 7
/// 2.81 / 2.83 / 2.80; p1 at P = 8 with the seeded reverse scan on the same one-stage loop
/// (two per SM, bitwise) and the token stage after it instead of beside it 2.88.
pub const BWD_PIECE_PASSES: [PiecePasses; 2] = [
    PiecePasses {
        name: "p1",
        k: Some(128),
        psum: PiecePass {
            kernel: BwdKernel::Psum1,
            per_sm: PSUM1_MIN_BLOCKS,
            smem: PassSmem::Fast {
                stages: 1,
                out: false,
            },
        },
        psum_mt: BwdKernel::PsumMt1,
        replay: Some(PiecePass {
            kernel: BwdKernel::Fscanp1,
            per_sm: FSCANP1_MIN_BLOCKS,
            smem: PassSmem::Scanx { stages: 1 },
        }),
        dsum: Some(PiecePass {
            kernel: BwdKernel::Dsum1,
            per_sm: DSUM1_MIN_BLOCKS,
            smem: PassSmem::DscanMma { stages: 1 },
        }),
    },
    PiecePasses {
        name: "s2",
        k: None,
        psum: PiecePass {
            kernel: BwdKernel::Psum,
            per_sm: 2,
            smem: PassSmem::Fast {
                stages: SUM_STAGES,
                out: false,
            },
        },
        psum_mt: BwdKernel::PsumMt,
        replay: None,
        dsum: None,
    },
];

impl PiecePasses {
    /// Whether the set's kernels serve K = V = `k`.
    pub fn serves(&self, k: u64) -> bool {
        self.k.is_none_or(|x| x == k)
    }

    /// Dynamic shared memory of the summary pass at K = V = `k`.
    pub fn psum_smem(&self, k: u64) -> u32 {
        self.psum.smem_bytes(k)
    }

    /// Dynamic shared memory of the set's seeded replay at K = V = `k` (`None`: the replay
    /// variant's).
    pub fn replay_smem(&self, k: u64) -> Option<u32> {
        self.replay.map(|r| r.smem_bytes(k))
    }

    /// Dynamic shared memory of the set's reverse summaries at K = V = `k` (`None`: the reverse
    /// scan rule's).
    pub fn dsum_smem(&self, k: u64) -> Option<u32> {
        self.dsum.map(|r| r.smem_bytes(k))
    }

    /// The set `DNNPLAN_GDN_BWD_PIECE_PASSES` = `value` names where it serves `k`, else the
    /// first row of [`BWD_PIECE_PASSES`] that serves `k`.
    pub fn pick(value: &str, k: u64) -> &'static PiecePasses {
        pick_serving(&BWD_PIECE_PASSES, value, |r| r.name, |r| r.serves(k))
    }

    /// The most pieces (≥ 1) for which the replay (`slices · P` blocks), the reverse summaries
    /// (`slices · (P − 1)`) and the overlapped seeded reverse scan (`pairs · P` at one per SM;
    /// `pairs = N · HO`) each fit one wave on `sms` SMs at their blocks per SM.
    /// The summaries `psum` do not bound it: their time follows their bytes, not their waves
    /// (H200, (1, 32768, 16), psum1: 0.25 ms at P = 4 in one wave, 0.28 at P = 8 in 1.2 waves,
    /// while the reverse passes halve; bench/gdn_results.md, session 14).
    pub fn max_pieces(&self, slices: u64, pairs: u64, sms: u64) -> u64 {
        let slots = |per_sm: u64| per_sm * sms / slices.max(1);
        let replay = slots(self.replay.map_or(1, |r| r.per_sm));
        let dsum = 1 + slots(self.dsum.map_or(1, |r| r.per_sm));
        let dscanp = sms / pairs.max(1);
        replay.min(dsum).min(dscanp).max(1)
    }
}

/// When the backward's reverse scan (uncut, or a piece chain's `dsum` / `dscanp` launch) runs
/// the 8-warp kernels (`gdn_bwd_dscan_w8_*`, `dsum_w8`, `dscanp_w8`; bitwise the same outputs as
/// the 4-warp ones), as data: when the launch has at least `min_fill_num / min_fill_den` blocks
/// per SM. H200, bf16, K = V = 128 (bench/gdn_results.md, session 6): at 128 blocks ((4, 8192, 16))
/// 0.514 ms against 0.547, at 1024 blocks ((16, 2048, 32)) 1.050 against 1.097, at 320 (ragged
/// mix) and 96 / 128 (dsum / dscanp at (1, 32768, 16), P = 4) equal; at 32 blocks (the same shape
/// uncut) 2.076 against 1.900: a lone block's chunk takes longer on 8 warps.
pub struct DscanRule {
    /// Numerator of the least blocks per SM.
    pub min_fill_num: u64,
    /// Denominator of the least blocks per SM.
    pub min_fill_den: u64,
}

/// The backward's reverse-scan rule: the 8-warp kernels from 3/4 of a wave up.
pub const BWD_DSCAN_RULE: DscanRule = DscanRule {
    min_fill_num: 3,
    min_fill_den: 4,
};

impl DscanRule {
    /// Whether a reverse-scan launch of `blocks` blocks on `sms` SMs takes the 8-warp kernel.
    pub fn eight_warps(&self, blocks: u64, sms: u64) -> bool {
        self.min_fill_den * blocks >= self.min_fill_num * sms
    }
}

impl BwdSchedule {
    /// The schedule without overrides, for `f` on a GPU of `sms` multiprocessors.
    pub fn default_for(f: &GdnFacts, sms: u64) -> BwdSchedule {
        Self::with_passes(f, sms, PiecePasses::pick("", f.k as u64))
    }

    /// The schedule of [`BWD_PIECE_RULE`] for `f` on `sms` SMs with the piece passes `passes`.
    fn with_passes(f: &GdnFacts, sms: u64, passes: &'static PiecePasses) -> BwdSchedule {
        let r = &BWD_PIECE_RULE;
        let blocks = f.n_seqs as u64 * f.heads.3 as u64 * (f.v as u64 / 64);
        let avg_chunks = f.total_tokens as u64 / (64 * (f.n_seqs as u64).max(1));
        let cut = !f.batch_invariant
            && blocks > 0
            && r.min_fill_inv * blocks <= sms
            && avg_chunks >= r.min_avg_chunks;
        BwdSchedule {
            pieces: if cut {
                let pairs = f.n_seqs as u64 * f.heads.3 as u64;
                passes.max_pieces(blocks, pairs, sms).clamp(1, r.max_pieces)
            } else {
                1
            },
            passes,
        }
    }

    /// [`BwdSchedule::default_for`], then the piece passes `DNNPLAN_GDN_BWD_PIECE_PASSES=p1|s2`
    /// names (where they serve K; the default's piece count, so that the switch changes kernels,
    /// never the results), then `DNNPLAN_GDN_BWD_PIECES=n` (diagnostics; 1..=64, within the launch grid:
    /// [`super::engine::forced_piece_count`]).
    pub fn pick(f: &GdnFacts, sms: u64) -> BwdSchedule {
        let value = std::env::var("DNNPLAN_GDN_BWD_PIECE_PASSES").unwrap_or_default();
        let mut s = BwdSchedule::default_for(f, sms);
        s.passes = PiecePasses::pick(&value, f.k as u64);
        if let Some(p) = std::env::var("DNNPLAN_GDN_BWD_PIECES")
            .ok()
            .and_then(|x| x.parse::<u64>().ok())
        {
            s.pieces = super::engine::forced_piece_count(p, f.n_seqs, |p| 2 * p - 1);
        }
        s
    }
}

/// What a backward plan does with a bound `state_checkpoints` input (spec §4.5).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckpointUse {
    /// The forward-state replay regenerates the states entering the chunks (no checkpoints, or
    /// checkpoints the token stage cannot read: the input is ignored; exact).
    Recompute,
    /// The token stage reads the states entering the chunks from the checkpoints (`ws_s` bound
    /// to them): no replay launch, no `ws_s` workspace region.
    Reuse,
    /// The checkpoint rows seed the forward-state replay (session 17, spec §4.5 "coarse"): one
    /// replay item per row (`gdn_bwd_fscanc*`, [`CKPT_REPLAYS`]), its chunks' entering states to
    /// `ws_s`; no forward chain, and the piece chain's summaries give only `Mᵀ_j`.
    Seed,
}

/// A checkpoint dtype as the rule sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CheckpointDtype {
    /// The node's io dtype (q's).
    Io,
    /// fp32.
    Fp32,
}

/// One row of [`BWD_CHECKPOINT_RULE`]: the cadence and checkpoint dtype it matches (`None`:
/// any) and what the plan then does.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CheckpointRow {
    /// `checkpoint_every_n_tokens` (`None`: any cadence).
    pub cadence: Option<u64>,
    /// The checkpoint dtype (`None`: any).
    pub dtype: Option<CheckpointDtype>,
    /// The plan's use of the checkpoints.
    pub action: CheckpointUse,
}

/// When the backward uses state checkpoints, as data; the first matching row decides.
/// io-dtype checkpoints at the chunk cadence are the replay's `ws_s` slots exactly (see the
/// module doc) and are reused; every other cadence (a multiple of the chunk: the engine's
/// support rule) and fp32 rows seed the replay (spec §4.5, the "coarse" row: fp32 rows at the
/// chunk cadence too, since the bundled token stages read `ws_s` only in the io dtype); rows of
/// another dtype (which the engine refuses) are ignored.
pub const BWD_CHECKPOINT_RULE: [CheckpointRow; 4] = [
    CheckpointRow {
        cadence: Some(CHUNK),
        dtype: Some(CheckpointDtype::Io),
        action: CheckpointUse::Reuse,
    },
    CheckpointRow {
        cadence: None,
        dtype: Some(CheckpointDtype::Io),
        action: CheckpointUse::Seed,
    },
    CheckpointRow {
        cadence: None,
        dtype: Some(CheckpointDtype::Fp32),
        action: CheckpointUse::Seed,
    },
    CheckpointRow {
        cadence: None,
        dtype: None,
        action: CheckpointUse::Recompute,
    },
];

/// One kernel of the seeded replay ([`CheckpointUse::Seed`]), as data: the
/// `DNNPLAN_GDN_BWD_CKPT_REPLAY` value that names it, the K it serves (`None`: every K), its
/// kernel and shared-memory layout (4 warps, like the piece chain's [`PiecePass`] rows).
/// Every row writes the same `S_c` bits.
pub struct CkptReplay {
    /// The `DNNPLAN_GDN_BWD_CKPT_REPLAY` value.
    pub name: &'static str,
    /// K = V the kernel serves (`None`: every K).
    pub k: Option<u64>,
    /// The kernel.
    pub kernel: BwdKernel,
    /// Shared-memory layout on its chunk loop's cp.async stages (`gdn::ScanxSmem`).
    pub smem: PassSmem,
}

/// The seeded replays, the default first where its K matches: `p1` (K = 128; the piece
/// chain's one-stage phased replay loop, 44 KB, three blocks per SM: a row's few chunks leave
/// little to pipeline, and more rows run at once) and `r4` (the uncut replay's two-stage loop,
/// every K).
pub const CKPT_REPLAYS: [CkptReplay; 2] = [
    CkptReplay {
        name: "p1",
        k: Some(128),
        kernel: BwdKernel::Fscanc1,
        smem: PassSmem::Scanx { stages: 1 },
    },
    CkptReplay {
        name: "r4",
        k: None,
        kernel: BwdKernel::Fscanc,
        smem: PassSmem::Scanx { stages: 2 },
    },
];

/// The row of `rows` (not empty) whose `name` is `value` among those `serves` accepts, else the
/// first row it accepts, else the last row: a switch's pick of [`PiecePasses`] and [`CkptReplay`].
fn pick_serving<R>(
    rows: &'static [R],
    value: &str,
    name: fn(&R) -> &str,
    serves: impl Fn(&R) -> bool,
) -> &'static R {
    let serving = || rows.iter().filter(|r| serves(r));
    serving()
        .find(|r| name(r) == value)
        .or_else(|| serving().next())
        .unwrap_or(&rows[rows.len() - 1])
}

impl CkptReplay {
    /// The row `DNNPLAN_GDN_BWD_CKPT_REPLAY` = `value` names where it serves `k`, else the
    /// first that serves `k`.
    pub fn pick(value: &str, k: u64) -> &'static CkptReplay {
        pick_serving(
            &CKPT_REPLAYS,
            value,
            |r| r.name,
            |r| r.k.is_none_or(|x| x == k),
        )
    }

    /// Dynamic shared memory at K = V = `k`.
    pub fn smem_bytes(&self, k: u64) -> u32 {
        self.smem.bytes(k, 4)
    }
}

impl CheckpointRow {
    /// Whether the row matches checkpoints every `cadence` tokens of dtype `dtype` (`None`:
    /// neither the io dtype nor fp32).
    fn matches(&self, cadence: u64, dtype: Option<CheckpointDtype>) -> bool {
        self.cadence.is_none_or(|c| c == cadence) && self.dtype.is_none_or(|d| Some(d) == dtype)
    }
}

/// The rule's decision for checkpoints every `cadence` tokens of dtype `dtype`.
pub fn checkpoint_rule(cadence: u64, dtype: Option<CheckpointDtype>) -> CheckpointUse {
    BWD_CHECKPOINT_RULE
        .iter()
        .find(|r| r.matches(cadence, dtype))
        .map_or(CheckpointUse::Recompute, |r| r.action)
}

/// The most checkpoint rows the seeded replay serves: its grid holds one block row per checkpoint
/// row in the z dimension (65,535 on the H200: at `c = 64`, about 4.2 M tokens). Beyond, the
/// checkpoints are ignored (the replay recomputes; exact).
pub const SEED_MAX_ROWS: u64 = 65_535;

/// Rows of the checkpoints every `cadence` tokens of `n` sequences of `t` tokens in all: the
/// spec's allocation bound `max(T/c + N, 1)` (§3.4; at `c = 64` every live chunk slot).
pub fn checkpoint_rows(n: u64, t: u64, cadence: u64) -> u64 {
    (t / cadence.max(1) + n).max(1)
}

/// What the backward plan of `f` does with its checkpoints: [`BWD_CHECKPOINT_RULE`] when
/// `checkpoint_every_n_tokens = c > 0` binds `state_checkpoints` of dims `[rows, HO, V, K]` with
/// at least [`checkpoint_rows`] rows (the spec's count), else [`CheckpointUse::Recompute`] (a
/// forward node, no cadence, or a port a reader could run past: the input is ignored); seeding
/// rows beyond [`SEED_MAX_ROWS`] are ignored too.
pub fn checkpoint_use(f: &GdnFacts) -> CheckpointUse {
    let Some(port) = f.port("state_checkpoints") else {
        return CheckpointUse::Recompute;
    };
    let (n, t, ho) = (f.n_seqs as u64, f.total_tokens as u64, f.heads.3);
    let every = f.checkpoint_every.max(0) as u64;
    let rows_ok = match port.dims.as_slice() {
        [rows, h, v, k] => {
            *rows >= 0
                && *rows as u64 >= checkpoint_rows(n, t, every)
                && (*h, *v, *k) == (ho, f.v, f.k)
        }
        _ => false,
    };
    if f.op != GdnOp::Backward || f.checkpoint_every <= 0 || !rows_ok {
        return CheckpointUse::Recompute;
    }
    let dtype = if port.dtype == f.io {
        Some(CheckpointDtype::Io)
    } else if port.dtype == DataType::Float {
        Some(CheckpointDtype::Fp32)
    } else {
        None
    };
    match checkpoint_rule(every, dtype) {
        CheckpointUse::Seed if checkpoint_rows(n, t, every) > SEED_MAX_ROWS => {
            CheckpointUse::Recompute
        }
        action => action,
    }
}

/// The piece chain's stages of a plan (`P > 1`), each a full-form launch ([`BwdStages`]).
struct PieceStages {
    /// The summaries `psum` (or `psum_mt` under checkpoints).
    psum: Step,
    /// The forward chain and the seeded replay (`None`: checkpoints reused or seeding).
    forward: Option<[Step; 2]>,
    /// The reverse summaries.
    dsum: Step,
    /// The reverse chain.
    dchain: Step,
}

/// Every stage of a plan as its full-form launch (`None`: the plan has no such stage), before the
/// prep forms' rows ([`super::bwd_select::FORM_RULES`]) swap kernels; [`BwdStages::steps`] lays them
/// out in launch order.
struct BwdStages {
    /// The chunk table (`chunk_offsets`, or `chunk_order_rev` with the overlap).
    chunk_table: Step,
    /// The prep.
    prep: Step,
    /// The piece chain's passes (`None`: uncut).
    pieces: Option<PieceStages>,
    /// The uncut forward-state replay (`None`: the piece chain, or checkpoints replace it).
    replay: Option<Step>,
    /// The checkpoint-seeded replay: the rows' table and the replay ([`CheckpointUse::Seed`]).
    seed: Vec<Step>,
    /// The reverse scan (uncut, or the piece chain's seeded one).
    scan: Step,
    /// The token stage.
    tokens: Step,
    /// The head-group fold (grouped ports).
    fold: Option<Step>,
    /// The parameter gradients (`a_log` / `dt_bias`).
    params: Option<Step>,
}

impl BwdStages {
    /// The steps in launch order: the chunk table, the prep, then on the piece chain the
    /// summaries, the seeded replay's rows, the forward chain and the seeded replay, the reverse
    /// summaries, the reverse chain and the reverse scan; uncut the replay, the seeded replay's
    /// rows and the reverse scan; then the token stage, the fold and the parameter gradients;
    /// each step through `launch` (the prep forms' rows).
    fn steps(&self, launch: impl Fn(Step) -> Step) -> Vec<Step> {
        let mut steps = vec![self.chunk_table, self.prep];
        match &self.pieces {
            Some(p) => {
                steps.push(p.psum);
                steps.extend(self.seed.iter().copied());
                steps.extend(p.forward.iter().flatten().copied());
                steps.extend([p.dsum, p.dchain, self.scan]);
            }
            None => {
                steps.extend(self.replay);
                steps.extend(self.seed.iter().copied());
                steps.push(self.scan);
            }
        }
        steps.push(self.tokens);
        steps.extend(self.fold);
        steps.extend(self.params);
        steps.into_iter().map(launch).collect()
    }

    /// The full-form kernels of the plan's stages (what the prep forms' rows match on).
    fn kernels(&self) -> Vec<BwdKernel> {
        self.steps(|s| s).into_iter().map(|s| s.0).collect()
    }
}

/// A built backward plan (`F`: the resolved kernels; any type in the CPU tests, which plan
/// without a device).
pub struct GdnBwdPlan<F = Function> {
    template: BwdParams,
    /// Uid per entry of [`PORTS`] (`None`: not bound).
    uids: [Option<i64>; 20],
    /// What the plan does with `state_checkpoints` ([`checkpoint_use`]).
    checkpoints: CheckpointUse,
    layout: BwdWorkspaceLayout,
    pieces: BwdPieceLayout,
    overlap: OverlapLayout,
    /// The seeding checkpoints' rows table ([`CheckpointUse::Seed`]; empty otherwise).
    ckpt: CkptLayout,
    schedule: BwdSchedule,
    steps: Vec<Step>,
    kernels: Vec<F>,
    /// The launch chain (`DNNPLAN_GDN_PDL`, read at build).
    pdl: PdlMode,
    /// The `chunk_factors` input's uid and layout when the forward saved the factors
    /// ([`super::chunk_factors`]): the slim prep's step is then left out of `steps` and its
    /// regions are the buffer's.
    factors: Option<(i64, ChunkFactorsLayout)>,
    /// The token tile's ring maps' shape when a launch reads them (`tw7`,
    /// [`BwdKernel::reads_ring_maps`]), else `None` (no map is encoded).
    ring_maps: Option<BwdRingMapShape>,
    /// The ring maps last encoded, by the addresses of S, dS', U and dR.
    ring_cache: EncodedMaps<[u64; 4], TwRingMaps>,
    /// The ports' base-address rules, settled at the first execute ([`super::port_guards`]).
    guards: std::sync::OnceLock<crate::pack::GuardTable>,
}

impl<F> GdnBwdPlan<F> {
    /// Plans the launches for `f` on a GPU of `sms` multiprocessors with the module's kernels in
    /// [`BwdKernel`] order (as [`kernel_names`] names them).
    pub fn new(f: &GdnFacts, kernels: Vec<F>, sms: u64) -> Result<GdnBwdPlan<F>> {
        Self::with_form(f, kernels, sms, BwdPrepForm::pick())
    }

    /// [`GdnBwdPlan::new`] with the prep form `form` instead of [`BwdPrepForm::pick`]'s (the plan
    /// tests build every form without the switch).
    pub fn with_form(
        f: &GdnFacts,
        kernels: Vec<F>,
        sms: u64,
        form: BwdPrepForm,
    ) -> Result<GdnBwdPlan<F>> {
        if kernels.len() != BwdKernel::ALL.len() {
            return Err(Error::Internal(format!(
                "{ENGINE_NAME}: the backward needs {} kernels, got {}",
                BwdKernel::ALL.len(),
                kernels.len()
            )));
        }
        for p in PORTS.iter().filter(|p| !OPTIONAL.contains(p)) {
            if f.port(p).is_none() {
                return Err(Error::Internal(format!(
                    "{ENGINE_NAME}: port {p} is not bound"
                )));
            }
        }
        // Every count below fits the kernels' 32-bit fields and grids.
        super::engine::check_index_limits(f)?;
        let mut uids = [None; 20];
        for (u, p) in uids.iter_mut().zip(PORTS) {
            *u = f.port(p).map(|x| x.uid);
        }
        let (n, t, ho) = (f.n_seqs as u64, f.total_tokens as u64, f.heads.3 as u64);
        let (k, v) = (f.k as u64, f.v as u64);
        let chunks = max_chunks(n, t) as u32;
        let pdl = PdlMode::from_env();
        let mut template = BwdParams {
            f: fwd_template(f)?,
            total_t: f.total_tokens,
            ..BwdParams::default()
        };
        // The state dtype comes from whichever state port exists; gradients of parameters use
        // their parameters' dtype codes (already in the forward block).
        if let Some(p) = f
            .port("d_final_state")
            .or_else(|| f.port("d_initial_state"))
        {
            template.f.state_dtype = kernel_dtype(p.dtype, "d_final_state")?;
        }
        let (ho32, n32) = (ho as u32, n as u32);
        let tokens_env = std::env::var("DNNPLAN_GDN_BWD_TOKENS").unwrap_or_default();
        let dscan_env = std::env::var("DNNPLAN_GDN_BWD_DSCAN").unwrap_or_default();
        let dscan_forced =
            !dscan_env.is_empty() && !IO_DR_SCAN_SWITCHES.contains(&dscan_env.as_str());
        let (mut token_stage, token_overlap) =
            TokenStage::pick(&tokens_env, f.batch_invariant, dscan_forced);
        if token_stage.overlapped.reads_ring_maps()
            && !ring_rows_addressable(u64::from(chunks) * ho, v)
        {
            token_stage = TokenStage::named(RING_MAPS_FALLBACK).unwrap_or(token_stage);
        }
        let dscan_smem = |warps: u32| {
            if warps == DSCAN_W8_WARPS {
                dscan_w8_smem_bytes(k)
            } else {
                dscan_mma_smem_bytes(k)
            }
        };
        // The token stage writes dQ / dK / dV of ports with HO heads itself and reads the states
        // entering the chunks in the io dtype: the replays store them so.
        template.f.flags |= flags::BWD_DIRECT
            | flags::BWD_S_IO
            | pdl.param_flags()
            | super::seq_order::seq_order_flags(f.n_seqs);
        let (hq, hk, hv) = (f.heads.0 as u64, f.heads.1 as u64, f.heads.2 as u64);
        let fold_needed = hq != ho || hk != ho || hv != ho;
        // The piece chain replaces the replay and the reverse scan.
        let schedule = BwdSchedule::pick(f, sms);
        let pieces = schedule.pieces;
        let (np, np1) = ((n * pieces) as u32, (n * pieces.saturating_sub(1)) as u32);
        let np2 = (n * (2 * pieces).saturating_sub(1)) as u32;
        let scan_x = (v / (16 * u64::from(SCAN_WARPS))) as u32;
        let dscan_x = (v / (16 * u64::from(DSCAN_MMA_WARPS))) as u32;
        // The reverse scans (kernel index, warps): the 8-warp kernels
        // where [`BWD_DSCAN_RULE`] (or DNNPLAN_GDN_BWD_DSCAN=w8) picks them, else v1's 4 warps.
        let dscan_pick = |w8_index: BwdKernel, v1_index: BwdKernel, blocks: u64| {
            let w8 = match dscan_env.as_str() {
                "v1" => false,
                "w8" => true,
                _ => BWD_DSCAN_RULE.eight_warps(blocks, sms),
            };
            if w8 {
                (w8_index, DSCAN_W8_WARPS)
            } else {
                (v1_index, DSCAN_MMA_WARPS)
            }
        };
        let slices = n * ho * u64::from(dscan_x);
        let dscan_k = dscan_pick(BwdKernel::DscanW8, BwdKernel::DscanIo, slices);
        let passes = schedule.passes;
        // The reverse summaries: the passes' own (4 warps), else by the reverse scan rule.
        let (dsum_kernel, dsum_warps, dsum_smem) = match (passes.dsum, passes.dsum_smem(k)) {
            (Some(pass), Some(smem)) => (pass.kernel, DSCAN_MMA_WARPS, smem),
            _ => {
                let blocks = slices * pieces.saturating_sub(1);
                let (kernel, warps) = dscan_pick(BwdKernel::DsumW8, BwdKernel::Dsum, blocks);
                (kernel, warps, dscan_smem(warps))
            }
        };
        let dscanp_k = dscan_pick(BwdKernel::DscanpW8, BwdKernel::Dscanp, slices * pieces);
        let chain = ChainVariant::from_env();
        let chain_grid = ((v / chain.rows) as u32, ho32, n32);
        let replay_variant = ReplayVariant::pick();
        let one_per_sm = replay_one_per_sm(n * pieces * ho * (v / 64), sms);
        let (replay, replay_piece, replay_threads, replay_smem) =
            replay_variant.uncut_at(one_per_sm).launch(k);
        // The uncut replay's shared memory: its stages', raised so that a block holds its SM
        // alone where the rule wants one per SM.
        let replay_smem = uncut_replay_smem(replay_smem, one_per_sm);
        // The piece replay: the passes' one-stage kernel (its own blocks per SM), else (with
        // DNNPLAN_GDN_BWD_FSCAN set, or a rule variant with its own piece replay: `gx`, `gxr`)
        // the replay variant's (`gx`, `gxr`: `gx` at its own blocks per SM).
        let (replay_piece, replay_piece_smem) = match (passes.replay, passes.replay_smem(k)) {
            (Some(pass), Some(smem))
                if std::env::var_os("DNNPLAN_GDN_BWD_FSCAN").is_none()
                    && replay_variant.own_piece_replay(k).is_none() =>
            {
                (pass.kernel, smem)
            }
            _ => replay_variant
                .own_piece_replay(k)
                .unwrap_or((replay_piece, replay_smem)),
        };
        // The reverse scan beside the token stage (gdn_bwd_overlap.cuh): default kernels only.
        let overlap = overlap_pick(
            token_overlap && !matches!(dscan_env.as_str(), "v1" | "w8"),
            n * pieces * ho,
            n * pieces,
            sms,
        );
        let (ov_uncut, ov_piece, _, _) =
            overlap_scan_kernels(dscan_env.as_str(), token_stage.ov_scans, k, v);
        // The reverse scan's step: the overlapped kernel `ov`, else the scan (`kernel`, `warps`) on
        // `count` blocks (sequences or pieces) per (value slice, head).
        let dscan_step = |ov: BwdKernel, (kernel, warps): (BwdKernel, u32), count: u32| -> Step {
            if overlap {
                let (threads, smem) = overlap_scan_launch(ov, k, v);
                (ov, (1, ho32, np), threads, smem)
            } else {
                (
                    kernel,
                    (dscan_x, ho32, count),
                    warps * 32,
                    dscan_smem(warps),
                )
            }
        };
        // With reused checkpoints the token stage reads the states from them: no replay; with
        // seeding ones the rows seed it: no forward chain.
        let checkpoints = checkpoint_use(f);
        // The saved replay (session 38): reused checkpoints beside saved chunk factors, which then
        // hold the U tiles too (engine.rs, chunk_factors_port). The plan is chosen as if it
        // replayed (the slim form's storing replay and its U-loading token stage), then the replay's
        // launches are left out and the states and U tiles read from the forward's buffers.
        let saved_replay = checkpoints == CheckpointUse::Reuse && f.port("chunk_factors").is_some();
        let replays = checkpoints == CheckpointUse::Recompute || saved_replay;
        if checkpoints == CheckpointUse::Recompute {
            // An ignored checkpoint input is never read, so never looked up either.
            uids[PORTS.len() - 1] = None;
        }
        // tc16 runs beside the replay that stores its U tiles (uncut, or per piece under
        // DNNPLAN_GDN_BWD_PREP=slimp), else its row runs tc13.
        let (token_stage, replay, replay_piece) = if pieces > 1 {
            let (stage, piece) = token_pair(
                token_stage,
                overlap,
                pieces,
                form.on_pieces(),
                replays,
                replay_piece,
                k,
                v,
            );
            (stage, replay, piece)
        } else {
            let (stage, uncut) =
                token_pair(token_stage, overlap, pieces, false, replays, replay, k, v);
            (stage, uncut, replay_piece)
        };
        let cadence = f.checkpoint_every.max(0) as u64;
        let ckpt_f32 = f
            .port("state_checkpoints")
            .is_some_and(|p| p.dtype == DataType::Float);
        // The seeded replay: the rows' table (above one chunk per row), then one block per
        // (value slice, head, row).
        let mut seed_steps: Vec<Step> = Vec::new();
        if checkpoints == CheckpointUse::Seed {
            if cadence > CHUNK {
                seed_steps.push((BwdKernel::CkptRows, (1, 1, 1), OFFSETS_THREADS, 0));
            }
            let env = std::env::var("DNNPLAN_GDN_BWD_CKPT_REPLAY").unwrap_or_default();
            let row = CkptReplay::pick(&env, k);
            seed_steps.push((
                row.kernel,
                (scan_x, ho32, checkpoint_rows(n, t, cadence) as u32),
                128,
                row.smem_bytes(k),
            ));
        }
        // 1. Each stage's full-form kernel and launch (the rules above).
        let prep = PrepVariant::from_env();
        let chunk_table = (
            if overlap {
                BwdKernel::ChunkOrderRev
            } else {
                BwdKernel::ChunkOffsets
            },
            (1, 1, 1),
            OFFSETS_THREADS,
            0,
        );
        let (prep_grid, prep_threads, prep_smem) =
            prep.row()
                .pass
                .launch_shape(u64::from(chunks), ho, k, sms, None);
        let chain_stage = if pieces > 1 {
            // The summaries (the reverse chain reads their Mᵀ_j; with checkpoints, the saved
            // replay's among them, only those), then the forward chain and the seeded replay, or
            // the replay seeded from the rows, unless the checkpoints are reused.
            let psum = if replays && !saved_replay {
                (passes.psum.kernel, np2)
            } else {
                (passes.psum_mt, np1)
            };
            Some(PieceStages {
                psum: (
                    psum.0,
                    ((v / 64) as u32, ho32, psum.1),
                    128,
                    passes.psum_smem(k),
                ),
                forward: replays.then_some([
                    (chain.pchain, chain_grid, CHAIN_THREADS, 0),
                    (
                        replay_piece,
                        (scan_x, ho32, np),
                        replay_threads,
                        replay_piece_smem,
                    ),
                ]),
                dsum: (
                    dsum_kernel,
                    (dscan_x, ho32, np1),
                    dsum_warps * 32,
                    dsum_smem,
                ),
                dchain: (chain.dchain, chain_grid, CHAIN_THREADS, 0),
            })
        } else {
            None
        };
        let stages = BwdStages {
            chunk_table,
            prep: (BwdKernel::Prep, prep_grid, prep_threads, prep_smem),
            pieces: chain_stage,
            replay: (replays && pieces <= 1).then_some((
                replay,
                (scan_x, ho32, n32),
                replay_threads,
                replay_smem,
            )),
            seed: seed_steps,
            scan: if pieces > 1 {
                dscan_step(ov_piece, dscanp_k, np)
            } else {
                dscan_step(ov_uncut, dscan_k, n32)
            },
            tokens: (
                if overlap {
                    token_stage.overlapped
                } else {
                    token_stage.kernel
                },
                (chunks, ho32, 1),
                token_stage.threads,
                (token_stage.smem)(k),
            ),
            fold: fold_needed.then_some((BwdKernel::Fold, (t as u32, 3, 1), k.max(v) as u32, 0)),
            params: (f.port("d_a_log").is_some() || f.port("d_dt_bias").is_some()).then_some((
                BwdKernel::Params,
                (ho32, 1, 1),
                PARAM_THREADS,
                2 * PARAM_THREADS * 4,
            )),
        };
        // 2. The prep forms' rows (bwd_select::FORM_RULES), chosen once on those kernels.
        let ctx = FormContext {
            form,
            pieces,
            k,
            v,
            prep,
            sms,
            split: dscan_split(n * ho, sms),
            slim_prep: BwdSlimPrep::from_env(f.n_seqs),
            replay_one_per_sm: one_per_sm,
        };
        let rules = select(&stages.kernels(), &ctx);
        // 3. The step list, built once: each stage as the chosen rows launch it.
        let mut steps = stages.steps(|step| rules.relaunch(step, &ctx));
        if let Some(n) = std::env::var("DNNPLAN_GDN_BWD_STEPS")
            .ok()
            .and_then(|x| x.parse::<usize>().ok())
        {
            steps.truncate(n);
        }
        // Saved chunk factors stand in for the slim prep's outputs (K = 128, a slim prep step).
        let factors = chunk_factors_of(
            f,
            k == 128 && steps.iter().any(|s| s.0.slim_prep_pass().is_some()),
        )?;
        if factors.is_some() {
            steps.retain(|s| s.0.slim_prep_pass().is_none());
        }
        if saved_replay {
            // The replay's launches as the rows relaunch them: the uncut replay, or the piece
            // chain's forward chain and seeded replay (its summaries stay: the reverse chain reads
            // their Mᵀ_j).
            let replay_kernels: Vec<BwdKernel> = stages
                .replay
                .iter()
                .chain(
                    stages
                        .pieces
                        .iter()
                        .flat_map(|p| p.forward.iter().flatten()),
                )
                .map(|step| rules.relaunch(*step, &ctx).0)
                .collect();
            if !factors.is_some_and(|(_, l)| l.holds_u_tiles()) {
                return Err(Error::Internal(format!(
                    "gdn_sm90: node {}: reused checkpoints beside chunk factors without U tiles",
                    f.node
                )));
            }
            steps.retain(|s| !replay_kernels.contains(&s.0));
        }
        let reused = checkpoints == CheckpointUse::Reuse;
        // Only the regions the kernels touch when every launch is a slim-form kernel (K = 128).
        let layout = if k == 128 && steps.iter().all(|s| s.0.slim_workspace()) {
            let with = SlimRegions {
                states: !reused,
                prep_outputs: factors.is_none(),
                u_tiles: !saved_replay,
                head_sums: fold_needed,
            };
            BwdWorkspaceLayout::slim(n, t, ho, k, v, with)
        } else {
            BwdWorkspaceLayout::with_states(n, t, ho, k, v, !reused)
        };
        // With checkpoints the forward chain's transitions M_j go unused.
        let piece_layout = if replays && !saved_replay {
            BwdPieceLayout::new(layout.total, n, ho, k, v, pieces)
        } else {
            BwdPieceLayout::reverse_only(layout.total, n, ho, k, v, pieces)
        };
        let overlap_layout = OverlapLayout::new(piece_layout.total, u64::from(chunks), ho, overlap);
        // The seeding rows' table (a region above one chunk per row).
        let seed_every = if checkpoints == CheckpointUse::Seed {
            cadence
        } else {
            0
        };
        let ckpt = CkptLayout::new(overlap_layout.total, n, t, seed_every, ckpt_f32);
        let ring_maps = steps
            .iter()
            .any(|s| s.0.reads_ring_maps())
            .then(|| BwdRingMapShape::new(f, u64::from(chunks)))
            .transpose()?;
        // Measurement only, GPU test builds only: `DNNPLAN_GDN_BWD_FROM=n` leaves out the first
        // `n` launches (after the layouts are fixed), so an execute runs a stage alone on what an
        // earlier execute of the same shape left in the same workspace (its chunk table, tiles
        // and set hand-over flags; tests/gpu_gdn_bench.rs `gdn_benchmark_stages_alone`). On a
        // fresh workspace the flags would never be set, so release builds never read it.
        #[cfg(feature = "gpu-tests")]
        if let Some(from) = std::env::var("DNNPLAN_GDN_BWD_FROM")
            .ok()
            .and_then(|x| x.parse::<usize>().ok())
        {
            steps.drain(..from.min(steps.len()));
        }
        Ok(GdnBwdPlan {
            template,
            uids,
            checkpoints,
            layout,
            pieces: piece_layout,
            overlap: overlap_layout,
            ckpt,
            schedule,
            steps,
            kernels,
            pdl,
            factors,
            ring_maps,
            ring_cache: EncodedMaps::new(),
            guards: std::sync::OnceLock::new(),
        })
    }

    /// Whether the plan reads saved chunk factors instead of running its prep.
    pub fn reads_chunk_factors(&self) -> bool {
        self.factors.is_some()
    }

    /// The schedule this plan runs.
    pub fn schedule(&self) -> BwdSchedule {
        self.schedule
    }

    /// What the plan does with `state_checkpoints`.
    pub fn checkpoints(&self) -> CheckpointUse {
        self.checkpoints
    }

    /// Whether the plan runs the backward's scalar form ([`BwdPrepForm::Scalars`], also under
    /// [`BwdPrepForm::Slim`]).
    pub fn scalar_form(&self) -> bool {
        self.slim_form() || self.steps.iter().any(|s| s.0 == BwdKernel::PrepSc)
    }

    /// Whether the plan runs the slim form's prep and replay ([`BwdPrepForm::Slim`], the `slim`
    /// or `slimp` row of [`FORM_RULES`]), or reads saved chunk factors in place of that prep.
    pub fn slim_form(&self) -> bool {
        self.factors.is_some() || self.steps.iter().any(|s| s.0.slim_prep_pass().is_some())
    }

    /// Whether the plan runs the reverse scan and the token stage at the same time.
    pub fn overlapped(&self) -> bool {
        self.steps.iter().any(|s| s.0.programmatic())
    }

    /// The launches execute makes, in order: (resolved kernel, grid, threads, dynamic shared
    /// memory, programmatic); steps with an empty grid are left out.
    pub(super) fn launches(&self) -> impl Iterator<Item = Launch<'_, F>> {
        self.steps
            .iter()
            .filter(|s| s.1.0 > 0 && s.1.1 > 0 && s.1.2 > 0)
            .enumerate()
            .map(|(launched, &(kernel, grid, threads, smem))| {
                // The token stage of an overlapped pair starts while the reverse scan runs; with
                // the launch chain on, every kernel after the first may start early and waits at
                // its entry (pdl.rs).
                let programmatic = kernel.programmatic() || self.pdl.programmatic(launched);
                let function = &self.kernels[kernel as usize];
                (function, grid, threads, smem, programmatic)
            })
    }
}

#[cfg(test)]
impl<F: std::fmt::Display> GdnBwdPlan<F> {
    /// Everything the plan decided, one item a line (the plan dump, `bwd_plan_dump`): each
    /// launch (entry, grid, threads, dynamic shared memory, programmatic), then the schedule,
    /// the checkpoints' use, the split producer's `ov_need`, the parameter block's flags, the
    /// layouts and the forms the plan reports.
    pub(super) fn describe(&self) -> String {
        use std::fmt::Write;
        let mut out = String::new();
        for (function, grid, threads, smem, programmatic) in self.launches() {
            let _ = writeln!(
                out,
                "  {function} grid={grid:?} threads={threads} smem={smem} pdl={programmatic}"
            );
        }
        let _ = writeln!(
            out,
            "  steps={} pieces={} passes={} checkpoints={:?} ov_need={} flags={:#x} pdl={:?}",
            self.steps.len(),
            self.schedule.pieces,
            self.schedule.passes.name,
            self.checkpoints,
            ov_need(&self.steps),
            self.template.f.flags,
            self.pdl,
        );
        let _ = writeln!(
            out,
            "  scalar_form={} slim_form={} overlapped={} uids={:?}",
            self.scalar_form(),
            self.slim_form(),
            self.overlapped(),
            self.uids,
        );
        let _ = writeln!(
            out,
            "  layout={:?}\n  pieces={:?}\n  overlap={:?}\n  ckpt={:?}",
            self.layout, self.pieces, self.overlap, self.ckpt,
        );
        out
    }
}

// SAFETY: `bind` writes the pack's device buffers and the checked workspace region's addresses
// into the block (BwdTmaParams: BwdCkptParams, then the ring maps when the plan runs tw7), which
// starts with every kernel's only parameter.
unsafe impl GdnPlan for GdnBwdPlan {
    type Params = BwdTmaParams;

    fn workspace(&self) -> u64 {
        self.ckpt.total
    }

    fn bind(&self, pack: &VariantPack, ws: u64) -> Result<Self::Params> {
        let mut a = [0u64; 20];
        for (slot, uid) in a.iter_mut().zip(self.uids) {
            if let Some(u) = uid {
                *slot = pack.ptr(pack.index_of(u)?) as u64;
            }
        }
        let [
            q,
            k,
            v,
            g,
            beta,
            cu,
            init,
            a_log,
            dt_bias,
            d_o,
            dfs,
            dq,
            dk,
            dv,
            dg,
            dbeta,
            dis,
            dal,
            ddb,
            ckpt,
        ] = a;
        let mut p = self.template;
        p.f.q = q;
        p.f.k = k;
        p.f.v = v;
        p.f.g = g;
        p.f.beta = beta;
        p.f.cu_seqlens = cu;
        p.f.initial_state = init;
        p.f.a_log = a_log;
        p.f.dt_bias = dt_bias;
        p.d_o = d_o;
        p.d_final_state = dfs;
        p.dq = dq;
        p.dk = dk;
        p.dv = dv;
        p.dg = dg;
        p.dbeta = dbeta;
        p.d_initial_state = dis;
        p.d_a_log = dal;
        p.d_dt_bias = ddb;
        let cu_src = self.layout.bind(ws, &mut p);
        if self.checkpoints == CheckpointUse::Reuse {
            // The states entering the chunks: checkpoint row chunk_offsets[b] + j, [HO, V, K].
            p.ws_s = ckpt;
        }
        if let Some((uid, layout)) = &self.factors {
            layout.bind_bwd(pack.ptr(pack.index_of(*uid)?) as u64, &mut p);
        }
        let mut cp = BwdChainParams {
            b: p,
            ..BwdChainParams::default()
        };
        self.pieces.bind(ws, self.schedule.pieces as i32, &mut cp);
        self.overlap.bind(ws, &mut cp);
        cp.ov_need = ov_need(&self.steps);
        let mut kp = BwdCkptParams {
            cp,
            ..BwdCkptParams::default()
        };
        if self.checkpoints == CheckpointUse::Seed {
            self.ckpt.bind_bwd(ws, ckpt, &mut kp);
        }
        // The token tile's ring maps (tw7) at this call's states, U and dR (the last call's when
        // they sit where its did).
        let maps = match &self.ring_maps {
            Some(shape) => {
                let b = &kp.cp.b;
                let at = [b.ws_s, b.ws_ds, b.ws_u, b.ws_dr];
                self.ring_cache
                    .get_or_encode(at, || shape.encode(at[0], at[1], at[2], at[3]))?
            }
            None => TwRingMaps::default(),
        };
        Ok(BwdTmaParams {
            c: kp,
            cu_src,
            maps,
        })
    }

    fn launch_list(&self) -> impl Iterator<Item = Launch<'_, Function>> {
        self.launches()
    }

    fn bound_ports(&self) -> Vec<(&'static str, i64)> {
        PORTS
            .into_iter()
            .zip(self.uids)
            .filter_map(|(name, uid)| Some((name, uid?)))
            .chain(self.factors.map(|(uid, _)| ("chunk_factors", uid)))
            .collect()
    }

    fn guards(&self) -> &std::sync::OnceLock<crate::pack::GuardTable> {
        &self.guards
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::gdn::analyzer::GdnOp;
    use crate::engines::gdn::params::{
        dscan_mma_stages_smem_bytes, dsum_sc_smem_bytes, fast_smem_bytes,
    };

    fn facts(n: i64, t: i64, ho: i64, d: i64, batch_invariant: bool) -> GdnFacts {
        crate::engines::gdn::analyzer::test_facts(GdnOp::Backward, n, t, ho, d, batch_invariant)
    }

    #[test]
    fn every_kernel_name_is_a_symbol_of_the_bundled_cubin() {
        let bundled = crate::cuda::kernels::find("gdn_bwd").expect("bundled gdn_bwd module");
        let preps = super::super::engine::PREP_VARIANTS
            .iter()
            .map(|r| r.variant);
        for (tag, k, prep) in preps.flat_map(|p| [("bf16", 128, p), ("f16", 64, p)]) {
            for name in kernel_names(tag, k, prep) {
                assert!(bundled.has_function(&name), "{name} is not bundled");
            }
        }
    }

    #[test]
    fn replay_variants_name_their_kernels() {
        let names = kernel_names("bf16", 128, PrepVariant::DEFAULT);
        for (variant, uncut, piece) in [
            (
                ReplayVariant::V1,
                "gdn_bwd_fscan_bf16_k128",
                "gdn_bwd_fscanp_bf16_k128",
            ),
            (
                ReplayVariant::Rows4,
                "gdn_bwd_fscan_r4_bf16_k128",
                "gdn_bwd_fscan_r4_bf16_k128",
            ),
            (
                ReplayVariant::Warpgroup,
                "gdn_bwd_fscan_gx_bf16_k128",
                "gdn_bwd_fscan_gx_bf16_k128",
            ),
            (
                ReplayVariant::Warpgroup3,
                "gdn_bwd_fscan_gx3_bf16_k128",
                "gdn_bwd_fscan_gx3_bf16_k128",
            ),
            (
                ReplayVariant::Warpgroup4,
                "gdn_bwd_fscan_gx4_bf16_k128",
                "gdn_bwd_fscan_gx4_bf16_k128",
            ),
        ] {
            let (i, j, threads, smem) = variant.launch(128);
            assert_eq!(
                (names[i as usize].as_str(), names[j as usize].as_str()),
                (uncut, piece)
            );
            assert!(SM90_BUDGET.allows(smem) && (threads == 128 || threads == 256));
        }
        // One replay block per SM below four waves: (4, 8192, 16) 128 blocks, the ragged mix 320,
        // (1, 32768, 16) in 4 pieces 128; two at (16, 2048, 32), 1024 blocks (132 SMs).
        for (blocks, one) in [
            (128, true),
            (320, true),
            (1024, false),
            (527, true),
            (528, false),
        ] {
            assert_eq!(replay_one_per_sm(blocks, 132), one, "{blocks} blocks");
        }
        // The new replays stage W, Kᴿ, Ũᵀ only: two blocks fit an SM.
        assert!(ReplayVariant::Rows4.launch(128).3 < 113 * 1024);
        // gx: two blocks per SM at K = 128; K = 64 runs r4's kernel at r4's launch.
        assert!(SM90_BUDGET.holds(2, ReplayVariant::Warpgroup.launch(128).3));
        let names64 = kernel_names("f16", 64, PrepVariant::DEFAULT);
        for variant in [
            ReplayVariant::Warpgroup,
            ReplayVariant::Warpgroup3,
            ReplayVariant::Warpgroup4,
            ReplayVariant::WarpgroupRule,
        ] {
            let (i, j, threads, smem) = variant.launch(64);
            assert_eq!(names64[i as usize], "gdn_bwd_fscan_r4_f16_k64");
            assert_eq!(names64[j as usize], "gdn_bwd_fscan_r4_f16_k64");
            assert_eq!((threads, smem), (128, scanx_smem_bytes(64, 4, 2, false, 1)));
            assert_eq!(variant.own_piece_replay(64), None);
        }
        // gxr: gx4 where the replay holds its SM alone, gx (two per SM) elsewhere and per piece.
        let rule = ReplayVariant::WarpgroupRule;
        assert_eq!(rule.uncut_at(true), ReplayVariant::Warpgroup4);
        assert_eq!(rule.uncut_at(false), ReplayVariant::Warpgroup);
        // At the benchmark shapes (132 SMs): gx4 at (4, 8192, 16) (128 blocks) and the ragged
        // mix (320), gx at (16, 2048, 32) (1024).
        for (blocks, want) in [
            (128, ReplayVariant::Warpgroup4),
            (320, ReplayVariant::Warpgroup4),
            (1024, ReplayVariant::Warpgroup),
        ] {
            assert_eq!(
                rule.uncut_at(replay_one_per_sm(blocks, 132)),
                want,
                "{blocks}"
            );
        }
        assert_eq!(
            rule.own_piece_replay(128),
            Some((BwdKernel::FscanGx, fscan_gx_smem_bytes(FSCAN_GX_STAGES)))
        );
        assert!(SM90_BUDGET.allows(ReplayVariant::Warpgroup4.launch(128).3));
    }

    #[test]
    fn backward_schedule_rule_at_the_benchmark_shapes() {
        let pieces =
            |n, t, ho, d, bi| BwdSchedule::default_for(&facts(n, t, ho, d, bi), 132).pieces;
        // (4, 8192, 16): 64 pairs x 2 value slices = 128 blocks fill the GPU: no cut.
        assert_eq!(pieces(4, 32768, 16, 128, false), 1);
        // (1, 32768, 16): 32 blocks (slices); with the one-stage passes (p1) the overlapped
        // reverse scan's 16 · P blocks bind: 128 ≤ 132 at P = 8 (dsum1 224 ≤ 264, the replay
        // 256 ≤ 396).
        assert_eq!(pieces(1, 32768, 16, 128, false), 8);
        // ... never under batch_invariant (the cut would depend on the batch).
        assert_eq!(pieces(1, 32768, 16, 128, true), 1);
        // (16, 2048, 32) and the ragged mix (10 sequences, H = 16): enough blocks already.
        assert_eq!(pieces(16, 32768, 32, 128, false), 1);
        assert_eq!(pieces(10, 29949, 16, 128, false), 1);
        // Short sequences are never cut; few pairs of long ones get at most 16 pieces.
        assert_eq!(pieces(1, 300, 2, 128, false), 1);
        assert_eq!(pieces(1, 1 << 20, 1, 128, false), 16);
        // The GPU test's long cases: 2048 + 1000 tokens on 2 heads (8 blocks) -> 16 pieces;
        // K = V = 64 has one value slice per pair: 1 x 4096 on 4 heads -> 33 -> 16 pieces.
        assert_eq!(pieces(2, 3048, 2, 128, false), 16);
        assert_eq!(pieces(1, 4096, 4, 64, false), 16);
        // At the edge: 66 blocks fill half of 132 SMs -> cut (4 pieces on p1: the overlapped
        // reverse scan 33 · 4 = 132; 2 on s2); 67 do not.
        // (The reverse-scan kernel at these shapes: reverse_scan_rule_at_the_benchmark_shapes.)
        assert_eq!(pieces(33, 33 * 4096, 1, 128, false), 4);
        assert_eq!(pieces(67, 67 * 4096, 1, 64, false), 1);
        // The two-stage passes (s2) keep the session-13 rule P = ⌊SMs / blocks⌋ at every shape.
        let s2 = &BWD_PIECE_PASSES[1];
        assert_eq!(s2.name, "s2");
        for blocks in 1..=66u64 {
            // K = V = 128 (two value slices per pair) and K = V = 64 (one).
            for pairs in [blocks.div_ceil(2), blocks] {
                let p = s2.max_pieces(blocks, pairs, 132);
                assert_eq!(p, 132 / blocks, "{blocks} blocks");
            }
        }
        // The default passes by K: p1 at K = 128, s2 elsewhere (K = 64).
        let passes = |n, t, ho, d| BwdSchedule::default_for(&facts(n, t, ho, d, false), 132);
        assert_eq!(passes(1, 32768, 16, 128).passes.name, "p1");
        assert_eq!(passes(1, 4096, 4, 64).passes.name, "s2");
    }

    /// The switches' picks as data: (the switch, its value, K, the row picked): the row the value
    /// names where it serves K, else the first that does.
    const PICKS: [(&str, &str, u64, &str); 10] = [
        ("DNNPLAN_GDN_BWD_PIECE_PASSES", "", 128, "p1"),
        ("DNNPLAN_GDN_BWD_PIECE_PASSES", "p1", 128, "p1"),
        ("DNNPLAN_GDN_BWD_PIECE_PASSES", "s2", 128, "s2"),
        ("DNNPLAN_GDN_BWD_PIECE_PASSES", "", 64, "s2"),
        ("DNNPLAN_GDN_BWD_PIECE_PASSES", "p1", 64, "s2"),
        ("DNNPLAN_GDN_BWD_PIECE_PASSES", "bogus", 128, "p1"),
        ("DNNPLAN_GDN_BWD_CKPT_REPLAY", "", 128, "p1"),
        ("DNNPLAN_GDN_BWD_CKPT_REPLAY", "r4", 128, "r4"),
        ("DNNPLAN_GDN_BWD_CKPT_REPLAY", "p1", 64, "r4"),
        ("DNNPLAN_GDN_BWD_CKPT_REPLAY", "", 64, "r4"),
    ];

    #[test]
    fn switch_picks_by_value_and_k() {
        for (switch, value, k, name) in PICKS {
            let picked = if switch == "DNNPLAN_GDN_BWD_PIECE_PASSES" {
                PiecePasses::pick(value, k).name
            } else {
                CkptReplay::pick(value, k).name
            };
            assert_eq!(picked, name, "{switch}={value:?} at K = {k}");
        }
    }

    #[test]
    fn piece_passes_fit_and_name_their_kernels() {
        // Every row's passes' shared memory fits the blocks per SM the row counts on (228 KB
        // per SM, 1 KB reserved per block); the one-stage kernels' entries are bundled at K = 128.
        let fits = |smem, per_sm| SM90_BUDGET.holds(per_sm, smem);
        for row in &BWD_PIECE_PASSES {
            let k = row.k.unwrap_or(128);
            assert!(fits(row.psum_smem(k), row.psum.per_sm), "{}", row.name);
            if let (Some(pass), Some(smem)) = (row.replay, row.replay_smem(k)) {
                assert!(fits(smem, pass.per_sm), "{}", row.name);
            }
            if let (Some(pass), Some(smem)) = (row.dsum, row.dsum_smem(k)) {
                assert!(fits(smem, pass.per_sm), "{}", row.name);
            }
        }
        // p1: the one-stage layouts (44,032 B, 44,032 B, 79,872 B); the two-stage reverse
        // summaries would not fit two per SM.
        let p1 = &BWD_PIECE_PASSES[0];
        assert_eq!(
            (p1.psum_smem(128), p1.replay_smem(128), p1.dsum_smem(128)),
            (
                fast_smem_bytes(128, 4, 1, false),
                Some(scanx_smem_bytes(128, 4, 1, false, 1)),
                Some(dscan_mma_stages_smem_bytes(128, 1))
            )
        );
        assert!(!fits(dscan_mma_smem_bytes(128), 2));
        let names = kernel_names("bf16", 128, PrepVariant::DEFAULT);
        for (kernel, name) in [
            (BwdKernel::Psum1, "gdn_bwd_psum1_bf16_k128"),
            (BwdKernel::Fscanp1, "gdn_bwd_fscanp1_bf16_k128"),
            (BwdKernel::Dsum1, "gdn_bwd_dsum1_bf16_k128"),
        ] {
            assert_eq!(names[kernel as usize], name);
        }
        // At K = 64 they name the two-stage kernels (bundled; the s2 row runs there).
        let names = kernel_names("f16", 64, PrepVariant::DEFAULT);
        assert_eq!(names[BwdKernel::Psum1 as usize], "gdn_bwd_psum_f16_k64");
        assert_eq!(names[BwdKernel::Dsum1 as usize], "gdn_bwd_dsum_f16_k64");
        // The most pieces of p1 at (1, 32768, 16)'s 32 slices (16 pairs): the overlapped reverse
        // scan (132 / 16) binds, then dsum1 (1 + 8), the replay (12).
        assert_eq!(p1.max_pieces(32, 16, 132), 8);
        assert_eq!(p1.max_pieces(8, 4, 132), 33);
    }

    #[test]
    fn overlap_rule_at_the_benchmark_shapes() {
        // blocks = N · P · HO (one overlapped reverse-scan block per unit row), segments = N · P.
        let ov = |blocks, segments| BWD_OVERLAP_RULE.overlap(blocks, segments, 132);
        // (4, 8192, 16): 64 blocks on 132 SMs leave 68 to the token stage -> overlap.
        assert!(ov(4 * 16, 4));
        // (1, 32768, 16) in 4 pieces: dscanp 64 blocks -> overlap.
        assert!(ov(4 * 16, 4));
        // (16, 2048, 32): 512 blocks (3.9 waves), the ragged mix (10 sequences, H = 16): 160.
        assert!(ov(16 * 32, 16) && ov(10 * 16, 10));
        // The edge: 4 waves of 132 SMs; and never beyond the order table's segments.
        assert!(ov(528, 1) && !ov(529, 1));
        assert!(ov(64, 64) && !ov(65, 65) && !ov(1, 65));
        // Only the token stage of the pair is launched programmatic.
        let programmatic: Vec<_> = BwdKernel::ALL.iter().filter(|k| k.programmatic()).collect();
        assert_eq!(
            programmatic,
            [
                &BwdKernel::TokensTc11Ov,
                &BwdKernel::TokensTc12Ov,
                &BwdKernel::TokensTc13Ov,
                &BwdKernel::TokensTc16Ov,
                &BwdKernel::TokensTw1Ov,
                &BwdKernel::TokensTw3Ov,
                &BwdKernel::TokensTw7Ov
            ]
        );
        assert!(!BwdKernel::TokensTc11.programmatic());
    }

    #[test]
    fn token_stages_by_switch() {
        // (value, batch_invariant, kernel, overlapped consumer, overlap allowed): the named
        // stages with the overlap by rule whatever the graph says; no value the rule's stage
        // (tw1 since session 30, tw3 since session 32, unless batch_invariant); any other value (the retired stages' switches among
        // them) the rule's stage without the overlap, i.e. tc12's kernel.
        let cases = [
            (
                "tc11",
                false,
                BwdKernel::TokensTc11,
                BwdKernel::TokensTc11Ov,
                true,
            ),
            (
                "tc12",
                false,
                BwdKernel::TokensTc12,
                BwdKernel::TokensTc12Ov,
                true,
            ),
            (
                "tc13",
                false,
                BwdKernel::TokensTc12,
                BwdKernel::TokensTc13Ov,
                true,
            ),
            (
                "tc13",
                true,
                BwdKernel::TokensTc12,
                BwdKernel::TokensTc13Ov,
                true,
            ),
            (
                "tc16",
                false,
                BwdKernel::TokensTc12,
                BwdKernel::TokensTc16Ov,
                true,
            ),
            (
                "tw1",
                false,
                BwdKernel::TokensTc12,
                BwdKernel::TokensTw1Ov,
                true,
            ),
            (
                "tw3",
                false,
                BwdKernel::TokensTc12,
                BwdKernel::TokensTw3Ov,
                true,
            ),
            (
                "",
                false,
                BwdKernel::TokensTc12,
                BwdKernel::TokensTw7Ov,
                true,
            ),
            (
                "",
                true,
                BwdKernel::TokensTc12,
                BwdKernel::TokensTc12Ov,
                true,
            ),
            (
                "tc5",
                false,
                BwdKernel::TokensTc12,
                BwdKernel::TokensTw7Ov,
                false,
            ),
            (
                "fp32",
                true,
                BwdKernel::TokensTc12,
                BwdKernel::TokensTc12Ov,
                false,
            ),
            (
                "bogus",
                false,
                BwdKernel::TokensTc12,
                BwdKernel::TokensTw7Ov,
                false,
            ),
        ];
        for (env, invariant, kernel, consumer, allowed) in cases {
            let (stage, ok) = TokenStage::pick(env, invariant, false);
            assert_eq!(
                (stage.kernel, stage.overlapped, ok),
                (kernel, consumer, allowed),
                "DNNPLAN_GDN_BWD_TOKENS={env:?} batch_invariant={invariant}"
            );
        }
        assert_eq!(
            (TokenStage::pick("tc11", false, false).0.smem)(128),
            tokens_tc11_smem_bytes(128)
        );
        assert_eq!(
            (TokenStage::pick("tc12", false, false).0.smem)(64),
            tokens_tc12_smem_bytes(64)
        );
        // Every consumer in the table is a programmatic kernel, every stage kernel is not.
        for s in &TOKEN_STAGES {
            assert!(!s.kernel.programmatic(), "{}", s.name);
            assert!(s.overlapped.programmatic(), "{}", s.name);
        }
    }

    #[test]
    fn token_stage_rule_keeps_batch_invariant_and_forced_scans_on_tc12() {
        // Every row names a stage of the table, and the last row matches every graph.
        for r in &BWD_TOKENS_RULE {
            assert!(TokenStage::named(r.stage).is_some(), "{}", r.stage);
        }
        let last = &BWD_TOKENS_RULE[BWD_TOKENS_RULE.len() - 1];
        assert!(last.batch_invariant.is_none() && last.dscan_forced.is_none());
        // (batch_invariant, DNNPLAN_GDN_BWD_DSCAN set) -> stage. Under batch_invariant the stage
        // must be bitwise the same with and without the overlap (which depends on the batch),
        // and a forced reverse scan must not be replaced by tc13's io-dR producers.
        for (invariant, forced, want) in [
            (false, false, "tw7"),
            (true, false, "tc12"),
            (false, true, "tc12"),
            (true, true, "tc12"),
        ] {
            let stage = TokenStage::by_rule(invariant, forced);
            assert_eq!(
                stage.name, want,
                "batch_invariant={invariant} dscan_forced={forced}"
            );
            assert_eq!(TokenStage::pick("", invariant, forced).0.name, want);
            if invariant || forced {
                assert!(stage.bitwise && stage.ov_scans.is_none());
            }
        }
        // A named stage wins over the rule.
        assert_eq!(TokenStage::pick("tc12", false, false).0.name, "tc12");
        assert_eq!(TokenStage::pick("tc13", true, true).0.name, "tc13");
    }

    #[test]
    fn tc13_pairs_only_with_the_io_dr_producers() {
        // tc13 (session 21): not bitwise tc12 (dv, dBeta from the io-rounded dR); its consumer
        // reads dR in the io dtype, so its overlapped reverse scans are the io-dR ones whatever
        // DNNPLAN_GDN_BWD_DSCAN says, and without the overlap the row runs tc12 (fp32 dR).
        let (tc13, ok) = TokenStage::pick("tc13", false, false);
        assert!(ok && !tc13.bitwise);
        assert_eq!(tc13.kernel, BwdKernel::TokensTc12);
        assert_eq!(tc13.overlapped, BwdKernel::TokensTc13Ov);
        assert_eq!(
            tc13.ov_scans,
            Some((BwdKernel::DscanOv5Dr, BwdKernel::DscanpOv5Dr))
        );
        for env in ["", "ov", "ov2", "ov5", "ov5dr"] {
            for kv in [64, 128] {
                let (u, p, threads, smem) = overlap_scan_kernels(env, tc13.ov_scans, kv, kv);
                if kv == 128 && env != "ov5dr" && IO_DR_UNCUT_WGMMA_BY_RULE {
                    // Session 25: the uncut producer on wgmma by rule at K = V = 128.
                    assert_eq!((u, p), (BwdKernel::DscanOv2Gx, BwdKernel::DscanpOv5Dr));
                    assert_eq!((threads, smem), (256, dscan_ov2gx_smem_bytes(kv, kv)));
                    continue;
                }
                assert_eq!((u, p), (BwdKernel::DscanOv5Dr, BwdKernel::DscanpOv5Dr));
                // ov5's shape: a warp per 16 value rows and the publisher warp, R2's smem.
                assert_eq!(u64::from(threads), kv / 16 * 32 + 32);
                assert_eq!(smem, dscan_ov2_smem_bytes(kv, kv));
                assert!(!u.programmatic() && !p.programmatic());
            }
        }
        // Only tc13 and tc16 read the io dR; every other row pairs with the fp32-dR scans.
        for s in &TOKEN_STAGES {
            assert_eq!(
                s.ov_scans.is_some(),
                matches!(
                    s.overlapped,
                    BwdKernel::TokensTc13Ov
                        | BwdKernel::TokensTc16Ov
                        | BwdKernel::TokensTw1Ov
                        | BwdKernel::TokensTw3Ov
                        | BwdKernel::TokensTw7Ov
                )
            );
            assert_eq!(s.bitwise, s.ov_scans.is_none(), "{}", s.name);
        }
    }

    #[test]
    fn ov2gx_replaces_the_io_dr_producers_at_k128() {
        // Session 25: DNNPLAN_GDN_BWD_DSCAN=ov2gx keeps tc13 by rule (an io-dR producer is no
        // forced fp32-dR scan) and swaps both io-dR producers at K = V = 128 only: 8 warps (no
        // publisher warp), the wgmma loop's shared memory.
        assert_eq!(TokenStage::pick("", false, false).0.name, "tw7");
        assert!(IO_DR_SCAN_SWITCHES.contains(&"ov2gx"));
        let tc13 = TokenStage::pick("tc13", false, false).0;
        let (u, p, threads, smem) = overlap_scan_kernels("ov2gx", tc13.ov_scans, 128, 128);
        assert_eq!((u, p), (BwdKernel::DscanOv2Gx, BwdKernel::DscanpOv2Gx));
        assert_eq!((threads, smem), (256, dscan_ov2gx_smem_bytes(128, 128)));
        assert_eq!(smem, 200_704);
        assert!(SM90_BUDGET.allows(smem) && !u.programmatic() && !p.programmatic());
        let (u, p, ..) = overlap_scan_kernels("ov2gx", tc13.ov_scans, 64, 64);
        assert_eq!((u, p), (BwdKernel::DscanOv5Dr, BwdKernel::DscanpOv5Dr));
        // ov2gxu: the uncut producer only; each kernel launches in its own shape.
        let (u, p, threads, smem) = overlap_scan_kernels("ov2gxu", tc13.ov_scans, 128, 128);
        assert_eq!((u, p), (BwdKernel::DscanOv2Gx, BwdKernel::DscanpOv5Dr));
        assert_eq!((threads, smem), (256, 200_704));
        assert_eq!(
            overlap_scan_launch(p, 128, 128),
            (8 * 32 + 32, dscan_ov2_smem_bytes(128, 128))
        );
        let (u, p, ..) = overlap_scan_kernels("ov2gxu", tc13.ov_scans, 64, 64);
        assert_eq!((u, p), (BwdKernel::DscanOv5Dr, BwdKernel::DscanpOv5Dr));
        // At K = 64 the gx rows name ov5dr's kernels and take their shape.
        for kernel in [BwdKernel::DscanOv2Gx, BwdKernel::DscanpOv2Gx] {
            assert_eq!(
                overlap_scan_launch(kernel, 64, 64),
                overlap_scan_launch(BwdKernel::DscanOv5Dr, 64, 64)
            );
        }
        // Every other pair shares one shape (the uncut one's, which overlap_scan_kernels returns);
        // tc13's at K = V = 128 pairs the wgmma uncut producer with dscanp_ov5dr by rule.
        for env in ["", "ov", "ov2", "ov5"] {
            for (stage, kv) in [(None, 128), (tc13.ov_scans, 128), (None, 64)] {
                if IO_DR_UNCUT_WGMMA_BY_RULE && stage.is_some() && kv == 128 {
                    continue;
                }
                let (u, p, threads, smem) = overlap_scan_kernels(env, stage, kv, kv);
                assert_eq!(overlap_scan_launch(p, kv, kv), (threads, smem), "{env}");
                assert_eq!(overlap_scan_launch(u, kv, kv), (threads, smem), "{env}");
            }
        }
        // Without tc13 (fp32 dR) the switch falls back to the default producer.
        let (u, ..) = overlap_scan_kernels("ov2gx", None, 128, 128);
        assert_eq!(u, BWD_OVERLAP_SCAN_DEFAULT.0);
    }

    /// The (token stage, replay: uncut, or with `P > 1` the seeded one per piece) names a plan of
    /// `f` runs, without the piece chain's pairing ([`BwdPrepForm::on_pieces`]), with the token stage `stage`
    /// (a [`TOKEN_STAGES`] name) and the replay variant `replay`, `pieces` forced when `Some`
    /// (`DNNPLAN_GDN_BWD_PIECES`), `replays` false under state checkpoints: the inputs the plan
    /// gives [`token_pair`], from the same rules (132 SMs, the overlap by rule).
    fn tc16_pair_at(
        f: &GdnFacts,
        stage: &str,
        replay: ReplayVariant,
        pieces: Option<u64>,
        replays: bool,
    ) -> (&'static str, String) {
        tc16_pair_form(f, stage, replay, pieces, replays, false)
    }

    /// [`tc16_pair_at`] with the piece chain's pairing `on_pieces` ([`BwdPrepForm::on_pieces`]):
    /// with `P > 1` the replay is the seeded one per piece (`gx` by [`REPLAY_BY_RULE`]).
    fn tc16_pair_form(
        f: &GdnFacts,
        stage: &str,
        replay: ReplayVariant,
        pieces: Option<u64>,
        replays: bool,
        on_pieces: bool,
    ) -> (&'static str, String) {
        let (n, ho, k) = (f.n_seqs as u64, f.heads.3 as u64, f.k as u64);
        let pieces = pieces.unwrap_or(BwdSchedule::default_for(f, 132).pieces);
        let overlap = BWD_OVERLAP_RULE.overlap(n * pieces * ho, n * pieces, 132);
        let one_per_sm = replay_one_per_sm(n * pieces * ho * (k / 64), 132);
        let uncut = replay.uncut_at(one_per_sm).launch(k).0;
        let replay = if pieces > 1 {
            replay.own_piece_replay(k).map_or(uncut, |r| r.0)
        } else {
            uncut
        };
        let stage = TokenStage::named(stage).expect("a stage");
        let (s, r) = token_pair(stage, overlap, pieces, on_pieces, replays, replay, k, k);
        (s.name, r.name("bf16", f.k, PrepVariant::DEFAULT))
    }

    /// The token stage `stage` of [`TOKEN_STAGES`] (a wgmma tile of 512 threads and Tw1Smem's
    /// 188,224 B, launching `gdn_bwd_tokens_<stage>_*`) pairs exactly as the stage `like` (the
    /// storing replay, else tc13) at the four benchmark shapes, and names tc13 at K = 64.
    fn assert_token_stage_pairs_as(stage: &str, kernel: BwdKernel, like: &str) {
        let (s, ok) = TokenStage::pick(stage, false, false);
        assert!(ok);
        assert_eq!(s.name, stage);
        assert_eq!(s.overlapped, kernel);
        assert!(s.loads_u && !s.bitwise);
        assert_eq!((s.smem)(128), 188_224);
        assert!(SM90_BUDGET.holds(1, (s.smem)(128)));
        for tag in ["bf16", "f16"] {
            assert_eq!(
                kernel.name(tag, 128, PrepVariant::DEFAULT),
                format!("gdn_bwd_tokens_{stage}_{tag}_k128")
            );
        }
        let rule = REPLAY_BY_RULE;
        for shape in [
            (4, 32768, 16),
            (1, 32768, 16),
            (16, 32768, 32),
            (10, 29949, 16),
        ] {
            let f = facts(shape.0, shape.1, shape.2, 128, false);
            let base = tc16_pair_at(&f, like, rule, None, true);
            let got = tc16_pair_at(&f, stage, rule, None, true);
            let want = if base.0 == like { stage } else { base.0 };
            assert_eq!((got.0, &got.1), (want, &base.1), "{stage} {shape:?}");
        }
        let f64k = facts(4, 32768, 16, 64, false);
        assert_eq!(tc16_pair_at(&f64k, stage, rule, None, true).0, "tc13");
    }

    #[test]
    fn tw1_runs_where_tc16_runs_with_its_own_entry_and_smem() {
        // Session 30 (m1t30): DNNPLAN_GDN_BWD_TOKENS=tw1 picks the tw1 row (the rule's stage in
        // sessions 30 and 31, tw3 since session 32), which pairs exactly as tc16.
        assert_token_stage_pairs_as("tw1", BwdKernel::TokensTw1Ov, "tc16");
        for invariant in [false, true] {
            for forced in [false, true] {
                assert_ne!(TokenStage::by_rule(invariant, forced).name, "tw1");
            }
        }
    }

    #[test]
    fn tw3_runs_where_tw1_runs_with_its_own_entry() {
        // Session 32 (tp32): DNNPLAN_GDN_BWD_TOKENS=tw3 picks the tw3 row, which pairs exactly as
        // tw1 (tw1 with its copies issued in another order).
        assert_token_stage_pairs_as("tw3", BwdKernel::TokensTw3Ov, "tw1");
    }

    #[test]
    fn tw7_runs_where_tw3_runs_and_alone_reads_the_ring_maps() {
        // Session 39: DNNPLAN_GDN_BWD_TOKENS=tw7 picks the tw7 row, which pairs exactly as tw3
        // (tw3 with the ring by tensor maps); only its kernel reads the maps, so only its plans
        // encode them.
        assert_token_stage_pairs_as("tw7", BwdKernel::TokensTw7Ov, "tw3");
        let readers: Vec<_> = BwdKernel::ALL
            .iter()
            .filter(|k| k.reads_ring_maps())
            .collect();
        assert_eq!(readers, [&BwdKernel::TokensTw7Ov]);
        assert!(BwdKernel::TokensTw7Ov.slim_workspace());
        // The rule's plans (tw7 since session 39) encode the maps; at K = 64 (tc13) none.
        for shape in [(4, 32768, 16), (1, 32768, 16), (16, 32768, 32)] {
            let f = crate::engines::gdn::engine::tests::bound(facts(
                shape.0, shape.1, shape.2, 128, false,
            ));
            assert!(named_plan(&f).ring_maps.is_some(), "{shape:?}");
        }
        let f64k = crate::engines::gdn::engine::tests::bound(facts(4, 32768, 16, 64, false));
        assert!(named_plan(&f64k).ring_maps.is_none());
        // Past 2^31 state rows (2^24 chunk-slot units) the box coordinates would not fit 32 bits:
        // the plan runs tw3 in tw7's place.
        let huge = crate::engines::gdn::engine::tests::bound(facts(1, 1 << 27, 16, 128, false));
        let plan = named_plan(&huge);
        assert!(plan.ring_maps.is_none());
        let tokens: Vec<_> = plan
            .steps
            .iter()
            .map(|s| s.0)
            .filter(|k| matches!(k, BwdKernel::TokensTw3Ov | BwdKernel::TokensTw7Ov))
            .collect();
        assert_eq!(tokens, [BwdKernel::TokensTw3Ov]);
    }

    #[test]
    fn tc16_pairs_only_with_the_storing_replay() {
        // Session 27: tc16 loads the U tiles of the storing replay, so it runs only where the
        // overlap runs (U in ws_dr's second half beside the io dR), uncut (P = 1), with the gx
        // replays (gx4 at one block per SM, gx at two) and K = V = 128; elsewhere its row runs
        // tc13 (the same numerics), with the plan's own replay.
        let rule = REPLAY_BY_RULE;
        let gx4u = "gdn_bwd_fscan_gx4u_bf16_k128";
        let gxu = "gdn_bwd_fscan_gxu_bf16_k128";
        let gx4 = "gdn_bwd_fscan_gx4_bf16_k128";
        // The four benchmark shapes: (4, 8192, 16) 128 replay blocks (gx4), (1, 32768, 16) the
        // 8-piece chain (tc13 and its seeded replay gx, without the piece chain's pairing of
        // session 29, below), (16, 2048, 32) 1024 blocks (gx), the ragged mix 320 (gx4).
        let gx = "gdn_bwd_fscan_gx_bf16_k128";
        for (shape, want) in [
            ((4, 32768, 16), ("tc16", gx4u)),
            ((1, 32768, 16), ("tc13", gx)),
            ((16, 32768, 32), ("tc16", gxu)),
            ((10, 29949, 16), ("tc16", gx4u)),
        ] {
            let f = facts(shape.0, shape.1, shape.2, 128, false);
            let got = tc16_pair_at(&f, "tc16", rule, None, true);
            assert_eq!((got.0, got.1.as_str()), want, "{shape:?}");
            // tc13 keeps the plain replay at every shape.
            let tc13 = tc16_pair_at(&f, "tc13", rule, None, true);
            assert_eq!(tc13.0, "tc13");
            assert!(!tc13.1.ends_with("u_bf16_k128"), "{shape:?}: {}", tc13.1);
        }
        let f = facts(4, 32768, 16, 128, false);
        // DNNPLAN_GDN_BWD_PIECES=8: the piece chain (its seeded replay per piece) -> tc13.
        let got = tc16_pair_at(&f, "tc16", rule, Some(8), true);
        assert_eq!(got.0, "tc13");
        // Session 29 (BwdPrepForm::SlimPieces): the piece chain pairs tc16 with its seeded replay
        // storing U (gx -> gxu; gx4 forced -> gx4u), not under checkpoints, not at K = 64.
        let f1 = facts(1, 32768, 16, 128, false);
        let got = tc16_pair_form(&f1, "tc16", rule, None, true, true);
        assert_eq!((got.0, got.1.as_str()), ("tc16", gxu));
        let got = tc16_pair_form(&f, "tc16", rule, Some(8), true, true);
        assert_eq!((got.0, got.1.as_str()), ("tc16", gxu));
        let gx4v = ReplayVariant::Warpgroup4;
        let got = tc16_pair_form(&f1, "tc16", gx4v, None, true, true);
        assert_eq!((got.0, got.1.as_str()), ("tc16", gx4u));
        assert_eq!(
            tc16_pair_form(&f1, "tc16", rule, None, false, true).0,
            "tc13"
        );
        let f1k64 = facts(1, 32768, 16, 64, false);
        assert_eq!(
            tc16_pair_form(&f1k64, "tc16", rule, None, true, true).0,
            "tc13"
        );
        // DNNPLAN_GDN_BWD_FSCAN=r4 (or v1, gx3: no storing entry) -> tc13 with that replay;
        // gx / gx4 forced keep the pair.
        for (variant, want) in [
            (ReplayVariant::Rows4, ("tc13", "gdn_bwd_fscan_r4_bf16_k128")),
            (ReplayVariant::V1, ("tc13", "gdn_bwd_fscan_bf16_k128")),
            (
                ReplayVariant::Warpgroup3,
                ("tc13", "gdn_bwd_fscan_gx3_bf16_k128"),
            ),
            (ReplayVariant::Warpgroup, ("tc16", gxu)),
            (ReplayVariant::Warpgroup4, ("tc16", gx4u)),
        ] {
            let got = tc16_pair_at(&f, "tc16", variant, None, true);
            assert_eq!((got.0, got.1.as_str()), want, "{variant:?}");
        }
        // State checkpoints (no uncut replay from the initial state) -> tc13.
        assert_eq!(tc16_pair_at(&f, "tc16", rule, None, false).0, "tc13");
        // K = V = 64 (r4's replay): tc13.
        let f64 = facts(4, 32768, 16, 64, false);
        let got = tc16_pair_at(&f64, "tc16", rule, None, true);
        assert_eq!(
            (got.0, got.1.as_str()),
            ("tc13", "gdn_bwd_fscan_r4_bf16_k64")
        );
        // Without the overlap (DNNPLAN_GDN_BWD_OVERLAP=0, the v1 / w8 reverse scans): tc13,
        // whose row then runs tc12's kernel.
        let tc16 = TokenStage::pick("tc16", false, false).0;
        let (s, r) = token_pair(tc16, false, 1, false, true, BwdKernel::FscanGx4, 128, 128);
        assert_eq!(
            (s.name, s.kernel, r),
            ("tc13", BwdKernel::TokensTc12, BwdKernel::FscanGx4)
        );
        // batch_invariant: the rule's stage (tc12) never pairs; a forced reverse scan likewise.
        let fbi = facts(4, 32768, 16, 128, true);
        let bi = TokenStage::by_rule(true, false);
        assert!(!bi.loads_u);
        let got = tc16_pair_at(&fbi, bi.name, rule, None, true);
        assert_eq!((got.0, got.1.as_str()), ("tc12", gx4));
        assert!(!TokenStage::by_rule(false, true).loads_u);
        // Only tc16, tw1 (session 30), tw3 (session 32) and tw7 (session 39) load U; their
        // fallback is a stage of the table with the same producers.
        for s in &TOKEN_STAGES {
            assert_eq!(
                s.loads_u,
                matches!(
                    s.overlapped,
                    BwdKernel::TokensTc16Ov
                        | BwdKernel::TokensTw1Ov
                        | BwdKernel::TokensTw3Ov
                        | BwdKernel::TokensTw7Ov
                ),
                "{}",
                s.name
            );
        }
        let fallback = TokenStage::named(TC16_FALLBACK).expect("tc16's fallback is a stage");
        assert!(!fallback.loads_u && fallback.ov_scans == tc16.ov_scans);
        assert_eq!((fallback.smem)(128), (tc16.smem)(128));
        // The storing entries: the gx bodies only, the same launch shape; named at K = 128,
        // r4 / tc13 at K = 64 (every name is bundled:
        // every_kernel_name_is_a_symbol_of_the_bundled_cubin).
        assert_eq!(
            replay_storing_u(BwdKernel::FscanGx),
            Some(BwdKernel::FscanGxU)
        );
        assert_eq!(
            replay_storing_u(BwdKernel::FscanGx4),
            Some(BwdKernel::FscanGx4U)
        );
        for other in [BwdKernel::FscanGx3, BwdKernel::FscanR4, BwdKernel::Fscan] {
            assert_eq!(replay_storing_u(other), None);
        }
        let names = kernel_names("f16", 128, PrepVariant::DEFAULT);
        assert_eq!(
            names[BwdKernel::FscanGxU as usize],
            "gdn_bwd_fscan_gxu_f16_k128"
        );
        assert_eq!(
            names[BwdKernel::FscanGx4U as usize],
            "gdn_bwd_fscan_gx4u_f16_k128"
        );
        assert_eq!(
            names[BwdKernel::TokensTc16Ov as usize],
            "gdn_bwd_tokens_tc16_ov_f16_k128"
        );
        let names = kernel_names("bf16", 64, PrepVariant::DEFAULT);
        assert_eq!(
            names[BwdKernel::FscanGxU as usize],
            "gdn_bwd_fscan_r4_bf16_k64"
        );
        assert_eq!(
            names[BwdKernel::FscanGx4U as usize],
            "gdn_bwd_fscan_r4_bf16_k64"
        );
        assert_eq!(
            names[BwdKernel::TokensTc16Ov as usize],
            "gdn_bwd_tokens_tc13_ov_bf16_k64"
        );
        // U's tiles fit the second half of ws_dr: [slots][64][V] io = half its fp32 size.
        let l = BwdWorkspaceLayout::new(4, 32768, 16, 128, 128);
        let slots = max_chunks(4, 32768) * 16;
        assert!(l.regions[7] - l.regions[6] >= 2 * slots * CHUNK * 128 * 2);
    }

    #[test]
    fn overlapped_reverse_scan_kernels_by_switch() {
        let (u, p, threads, smem) = overlap_scan_kernels("ov2", None, 128, 128);
        assert_eq!(
            (u, p, threads),
            (BwdKernel::DscanOv2, BwdKernel::DscanpOv2, 256)
        );
        assert_eq!(smem, dscan_ov2_smem_bytes(128, 128));
        let (u, p, threads, smem) = overlap_scan_kernels("ov", None, 64, 64);
        assert_eq!(
            (u, p, threads),
            (BwdKernel::DscanOv, BwdKernel::DscanpOv, 128)
        );
        assert_eq!(smem, dscan_ov_smem_bytes(64, 64));
        let (u, p, threads, smem) = overlap_scan_kernels("", None, 128, 128);
        assert_eq!((u, p), BWD_OVERLAP_SCAN_DEFAULT);
        // The default: the R2 loop with its publisher warp (session 20), within the 227 KB a
        // block may ask for.
        assert_eq!(BWD_OVERLAP_SCAN_DEFAULT.0, BwdKernel::DscanOv5);
        assert_eq!(threads, 8 * 32 + 32);
        assert!(SM90_BUDGET.allows(smem));
        assert!(!BwdKernel::DscanOv2.programmatic() && !BwdKernel::DscanpOv2.programmatic());
        // Session 18's publisher warp: the R2 loop's shared memory, a warp more.
        for kv in [64, 128] {
            let (u, p, threads, smem) = overlap_scan_kernels("ov5", None, kv, kv);
            assert_eq!((u, p), (BwdKernel::DscanOv5, BwdKernel::DscanpOv5));
            assert_eq!(u64::from(threads), kv / 16 * 32 + 32);
            assert_eq!(smem, dscan_ov2_smem_bytes(kv, kv));
            assert!(!u.programmatic() && !p.programmatic());
        }
    }

    #[test]
    fn reverse_scan_rule_at_the_benchmark_shapes() {
        let w8 = |blocks| BWD_DSCAN_RULE.eight_warps(blocks, 132);
        // (4, 8192, 16): 4 x 16 x 2 value slices = 128 blocks -> 8 warps.
        assert!(w8(4 * 16 * 2));
        // (16, 2048, 32) and the ragged mix (10 sequences, H = 16): 1024 and 320 blocks.
        assert!(w8(16 * 32 * 2) && w8(10 * 16 * 2));
        // (1, 32768, 16), P = 4: dscanp 128 blocks -> 8 warps; dsum 96 (pieces 1..3) -> 4;
        // uncut (batch_invariant) 32 -> 4.
        assert!(w8(4 * 16 * 2) && !w8(3 * 16 * 2) && !w8(16 * 2));
        // The edge: 3/4 of 132 SMs.
        assert!(w8(99) && !w8(98));
    }

    /// Backward facts of `n` sequences, `t` tokens, `ho` heads, K = V = `d` with every port bound
    /// (bf16 io, fp32 states), checkpoints every `cadence` tokens in `ckpt` of `rows` rows.
    fn ckpt_facts(
        (n, t, ho, d): (i64, i64, i64, i64),
        cadence: i64,
        ckpt: DataType,
        rows: i64,
    ) -> GdnFacts {
        use super::super::engine::tests::{bound, with_checkpoints};
        let mut f = with_checkpoints(bound(facts(n, t, ho, d, false)), cadence, ckpt, false);
        let (_, port) = f.ports.last_mut().expect("state_checkpoints");
        port.dims = vec![rows, ho, d, d];
        f
    }

    #[test]
    fn checkpoint_rule_table() {
        use CheckpointDtype::{Fp32, Io};
        use CheckpointUse::{Recompute, Reuse, Seed};
        // (cadence, dtype) -> use: io-dtype rows at the chunk cadence are reused, every other
        // cadence and fp32 rows seed the replay, rows of another dtype are ignored.
        for (cadence, dtype, want) in [
            (64, Some(Io), Reuse),
            (64, Some(Fp32), Seed),
            (64, None, Recompute),
            (128, Some(Io), Seed),
            (192, Some(Io), Seed),
            (192, Some(Fp32), Seed),
            (256, None, Recompute),
        ] {
            assert_eq!(checkpoint_rule(cadence, dtype), want, "{cadence} {dtype:?}");
        }
        // The facts: a bound port of at least T/64 + N rows of [HO, V, K] on a backward node.
        let shape = (3, 300, 2, 64);
        let rows = 300 / 64 + 3;
        let at = |cadence, dt, rows| checkpoint_use(&ckpt_facts(shape, cadence, dt, rows));
        assert_eq!(at(64, DataType::Bfloat16, rows), Reuse);
        assert_eq!(at(64, DataType::Bfloat16, rows + 5), Reuse);
        assert_eq!(at(64, DataType::Bfloat16, rows - 1), Recompute);
        assert_eq!(at(64, DataType::Float, rows), Seed);
        assert_eq!(at(64, DataType::Half, rows), Recompute);
        assert_eq!(at(128, DataType::Bfloat16, rows), Seed);
        assert_eq!(at(0, DataType::Bfloat16, rows), Recompute);
        // At c = 128 the spec's max(T/c + N, 1) rows suffice; one fewer is ignored.
        let rows128 = 300 / 128 + 3;
        assert_eq!(checkpoint_rows(3, 300, 128), rows128 as u64);
        assert_eq!(at(128, DataType::Float, rows128), Seed);
        assert_eq!(at(128, DataType::Float, rows128 - 1), Recompute);
        assert_eq!(checkpoint_rows(0, 0, 64), 1);
        // The seeded replay's grid holds at most SEED_MAX_ROWS rows; beyond, recompute (reuse
        // has no such grid).
        let big = |c: i64, dt| {
            let t = 64 * 65_534;
            let rows = t / c + 2;
            checkpoint_use(&ckpt_facts((2, t, 1, 64), c, dt, rows))
        };
        assert_eq!(big(64, DataType::Float), Recompute);
        assert_eq!(big(64, DataType::Bfloat16), Reuse);
        assert_eq!(big(128, DataType::Float), Seed);
        let mut f = ckpt_facts(shape, 64, DataType::Bfloat16, rows);
        f.op = GdnOp::Forward;
        assert_eq!(checkpoint_use(&f), Recompute);
        let mut f = ckpt_facts(shape, 64, DataType::Bfloat16, rows);
        f.ports.retain(|(p, _)| *p != "state_checkpoints");
        assert_eq!(checkpoint_use(&f), Recompute);
        // The engine takes the backward with checkpoints (reused or ignored) and the forward
        // (which writes them).
        let target = crate::dispatch::target::Target::with_arch(90);
        let rules = super::super::engine::SUPPORT_RULES;
        for op in [GdnOp::Backward, GdnOp::Forward] {
            for cadence in [64, 128] {
                let mut f = ckpt_facts((3, 300, 2, 128), cadence, DataType::Bfloat16, rows);
                f.op = op;
                assert!(
                    rules.iter().all(|r| r(&f, &target).is_none()),
                    "{op:?} {cadence}"
                );
            }
        }
    }

    #[test]
    fn seeding_checkpoints_at_any_cadence_keep_the_chunks_per_row_exact() {
        // fp32 rows at any positive multiple of 64 seed the replay (`gdn_bwd_fscanc*`), whose
        // row r of sequence b seeds chunks [cb + j·m, min(cb + j·m + m, ce)) and stores the last
        // one's entering state, m = `ckpt_every` (an int). Uncapped, c = 64 · 2^32 truncated m
        // to 0 and c = 64 · 2^31 to −2^31 (that store at chunk cb − 1 or far before the
        // workspace), and c = 64 · (2^31 − 1) overflowed cb + m. Past the longest sequence every
        // cadence seeds the same way (one row per sequence), so the layout caps m there.
        let (n, t, ho, d) = (3, 300, 2, 128);
        let chunks = crate::engines::gdn::params::max_chunks(n as u64, t as u64);
        for c in [64 * ((1i64 << 31) - 1), 64 << 31, 64 << 32, 64 << 40] {
            let rows = checkpoint_rows(n as u64, t as u64, c as u64) as i64;
            let f = ckpt_facts((n, t, ho, d), c, DataType::Float, rows);
            assert_eq!(checkpoint_use(&f), CheckpointUse::Seed, "c = {c}");
            let plan = named_plan(&f);
            let mut p = BwdCkptParams::default();
            p.cp.b.f.chunk_offsets = 0x1000;
            plan.ckpt.bind_bwd(0x10_0000, 0xdead_0000, &mut p);
            assert!(
                p.ckpt_every >= 2 && p.ckpt_every as u64 <= chunks.max(2),
                "c = {c}: {} chunks per row",
                p.ckpt_every
            );
            assert!(chunks + p.ckpt_every as u64 <= i32::MAX as u64);
            // The rows' table kernel runs (more than one chunk per row) into the workspace's.
            assert_eq!(p.ckpt_rows, 0x10_0000 + plan.ckpt.rows);
            assert!(plan.steps.iter().any(|s| s.0 == BwdKernel::CkptRows));
        }
    }

    /// The forward-state replay's kernels (uncut, the piece chain's forward chain and seeded
    /// replay) by name prefix.
    const REPLAY_KERNELS: [&str; 5] = [
        "gdn_bwd_fscan_r4_",
        "gdn_bwd_fscan_gx",
        "gdn_bwd_fscan_bf16",
        "gdn_bwd_fscanp",
        "gdn_bwd_pchain",
    ];

    /// The plan of `f` with kernels resolved to their names (bf16).
    fn named_plan(f: &GdnFacts) -> GdnBwdPlan<String> {
        let names = kernel_names("bf16", f.k, PrepVariant::DEFAULT).to_vec();
        GdnBwdPlan::new(f, names, 132).expect("plan")
    }

    #[test]
    fn the_saved_replay_leaves_out_the_prep_and_the_replay() {
        use crate::engines::gdn::engine::tests::{SAVED_SHAPES, bound, every_chunk, saving};
        for (n, t, ho) in SAVED_SHAPES {
            let factors = saving(bound(facts(n, t, ho, 128, false)));
            let f = saving(every_chunk(bound(facts(n, t, ho, 128, false))));
            let (with, without) = (named_plan(&f), named_plan(&factors));
            assert_eq!(with.checkpoints(), CheckpointUse::Reuse);
            assert!(with.reads_chunk_factors() && with.slim_form());
            assert!(with.factors.is_some_and(|(_, l)| l.holds_u_tiles()));
            let names = |p: &GdnBwdPlan<String>| -> Vec<String> {
                p.launches().map(|l| l.0.clone()).collect()
            };
            let (a, b) = (names(&with), names(&without));
            // The launches of the plan reading the factors alone, less the replay's.
            let replay = |x: &String| REPLAY_KERNELS.iter().any(|r| x.starts_with(r));
            assert!(b.iter().any(replay), "({n},{t},{ho}): {b:?}");
            // The piece chain's summaries: only the transitions Mᵀ_j.
            let rest: Vec<String> = b
                .iter()
                .filter(|x| !replay(x))
                .map(|x| x.replace("_psum_sl_", "_psumt_sl_"))
                .collect();
            assert_eq!(a, rest, "({n},{t},{ho})");
            let grids = |p: &GdnBwdPlan<String>, entry: &str| -> Vec<(u32, u32, u32)> {
                p.launches()
                    .filter(|l| l.0.contains(entry))
                    .map(|l| l.1)
                    .collect()
            };
            for (g_t, g) in grids(&with, "_psumt_sl_")
                .into_iter()
                .zip(grids(&without, "_psum_sl_"))
            {
                let pieces = with.schedule().pieces as u32;
                assert_eq!(
                    g_t.2 / (pieces - 1),
                    g.2 / (2 * pieces - 1),
                    "one block row per sequence"
                );
                assert_eq!((g_t.0, g_t.1), (g.0, g.1));
            }
            // The U-loading token stage still runs (its U from the factors).
            assert!(a.iter().any(|x| x.contains("tokens_tw7")), "{a:?}");
            // No states region: the checkpoints stand in.
            assert!(with.ckpt.total < without.ckpt.total);
        }
    }

    #[test]
    fn saved_chunk_factors_take_the_slim_prep_out_of_the_launches() {
        use crate::engines::gdn::engine::tests::{SAVED_SHAPES, bound, saving};
        for (n, t, ho) in SAVED_SHAPES {
            let plain = bound(facts(n, t, ho, 128, false));
            let f = saving(plain.clone());
            let (with, without) = (named_plan(&f), named_plan(&plain));
            assert!(with.reads_chunk_factors() && !without.reads_chunk_factors());
            let names = |p: &GdnBwdPlan<String>| -> Vec<String> {
                p.launches().map(|l| l.0.clone()).collect()
            };
            let (a, b) = (names(&with), names(&without));
            let prep: Vec<&String> = b.iter().filter(|x| x.contains("_prep")).collect();
            assert_eq!(prep.len(), 1, "({n},{t},{ho}): {b:?}");
            assert!(prep[0].contains("prep16sl"), "{}", prep[0]);
            let rest: Vec<String> = b.iter().filter(|x| !x.contains("_prep")).cloned().collect();
            assert_eq!(a, rest, "({n},{t},{ho})");
            // The prep's regions are the buffer's: a smaller workspace.
            assert!(with.ckpt.total < without.ckpt.total);
        }
    }

    #[test]
    fn slim_plans_get_only_the_regions_their_kernels_touch() {
        use crate::engines::gdn::engine::tests::bound;
        const PLAIN: SlimRegions = SlimRegions {
            states: true,
            prep_outputs: true,
            u_tiles: true,
            head_sums: false,
        };
        let full = |n: i64, t: i64, ho: i64| {
            BwdWorkspaceLayout::with_states(n as u64, t as u64, ho as u64, 128, 128, true).total
        };
        // The rule's plans at the benchmark shapes (uncut, 8 pieces, the split scan): slim, about
        // a third of the full layout.
        for (n, t, ho) in [(4, 32768, 16), (1, 32768, 16), (16, 32768, 32), (3, 300, 2)] {
            let plan = named_plan(&bound(facts(n, t, ho, 128, false)));
            assert!(plan.steps.iter().all(|s| s.0.slim_workspace()));
            let slim = BwdWorkspaceLayout::slim(n as u64, t as u64, ho as u64, 128, 128, PLAIN);
            assert_eq!(plan.layout, slim, "({n},{t},{ho})");
            assert!(
                3 * slim.total < 4 * full(n, t, ho) / 2,
                "({n},{t},{ho}): {} of {}",
                slim.total,
                full(n, t, ho)
            );
        }
        // (4,8192,16): 0.97 GB instead of 2.7.
        let s = BwdWorkspaceLayout::slim(4, 32768, 16, 128, 128, PLAIN);
        assert!(s.total < 1_000_000_000 && full(4, 32768, 16) > 2_700_000_000);
        // Empty regions alias the next one; every region stays aligned and in order.
        let r = s.regions;
        assert_eq!(r[1], r[2], "E is empty");
        assert_eq!(
            (r[7], r[8], r[9]),
            (r[10], r[10], r[10]),
            "no per-head sums ungrouped"
        );
        for w in r.windows(2) {
            assert!(w[0] <= w[1] && w[1] % 256 == 0);
        }
        assert_eq!((s.fwd.w, s.fwd.q), (s.fwd.kr, s.fwd.kr), "W, Q⁺ empty");
        assert_eq!(s.fwd.ut, s.fwd.a, "Ũᵀ empty");
        // Grouped heads keep the per-head sums (the fold reads them).
        let g = BwdWorkspaceLayout::slim(
            4,
            32768,
            16,
            128,
            128,
            SlimRegions {
                head_sums: true,
                ..PLAIN
            },
        );
        assert_eq!(g.regions[8] - g.regions[7], 32768 * 16 * 128 * 4);
        // The saved replay's U tiles stand in for dR's second half.
        let plain = BwdWorkspaceLayout::slim(4, 32768, 16, 128, 128, PLAIN);
        let saved = BwdWorkspaceLayout::slim(
            4,
            32768,
            16,
            128,
            128,
            SlimRegions {
                u_tiles: false,
                ..PLAIN
            },
        );
        let slots = 516 * 16;
        assert_eq!(plain.regions[7] - plain.regions[6], slots * 64 * 128 * 4);
        assert_eq!(saved.regions[7] - saved.regions[6], slots * 64 * 128 * 2);
        assert_eq!(plain.u_tiles, Some(plain.regions[6] + slots * 64 * 128 * 2));
        assert_eq!(saved.u_tiles, None);
        // A plan with a kernel outside the slim set (batch_invariant: the fp32-dR token stage)
        // keeps the full layout.
        let bi = named_plan(&bound(facts(2, 300, 2, 128, true)));
        assert!(!bi.steps.iter().all(|s| s.0.slim_workspace()));
        assert_eq!(
            bi.layout,
            BwdWorkspaceLayout::with_states(2, 300, 2, 128, 128, true)
        );
    }

    /// [`named_plan`] under `form` (instead of the switch / rule). The checkpoint tests compare
    /// plans with checkpoints against the recompute plan of session 28's form
    /// ([`BwdPrepForm::Slim`]): the piece chain's slim form ([`BwdPrepForm::SlimPieces`], the rule
    /// since session 29) needs the storing seeded replay, so with checkpoints the chain runs the
    /// full form, as under `Slim`.
    fn named_plan_form(f: &GdnFacts, form: BwdPrepForm) -> GdnBwdPlan<String> {
        let names = kernel_names("bf16", f.k, PrepVariant::DEFAULT).to_vec();
        GdnBwdPlan::with_form(f, names, 132, form).expect("plan")
    }

    /// The launches of `p`: (entry, grid).
    fn planned(p: &GdnBwdPlan<String>) -> Vec<(String, (u32, u32, u32))> {
        p.launches().map(|l| (l.0.clone(), l.1)).collect()
    }

    /// A launch's entry with the scalar form's kernels named as the full form's (plans with
    /// checkpoints run the full form: [`BwdPrepForm::scalar_form`] needs the uncut replay).
    fn full_form(x: &str) -> String {
        [
            ("prep15sc_", "prep15_"),
            ("prep15sl_", "prep15_"),
            ("prep16sl_", "prep15_"),
            ("prep16slc_", "prep15_"),
            ("prep16sll_", "prep15_"),
            ("gx4sl_", "gx4u_"),
            ("gxsl_", "gxu_"),
            ("ov2gxsc_", "ov2gx_"),
            ("ov2gxsh_", "ov2gx_"),
            ("gx4scu_", "gx4u_"),
            ("gxscu_", "gxu_"),
            ("gx4sc_", "gx4_"),
            ("gxsc_", "gx_"),
        ]
        .iter()
        .fold(x.to_owned(), |n, (a, b)| n.replace(a, b))
    }

    /// The checkpoint tests' shapes (N, T, HO, K): the four benchmark shapes (uncut, and
    /// (1, 32768, 16) as the 8-piece chain), K = 64 (1 x 4096 on 4 heads: 16 pieces) and a short
    /// ragged batch.
    const CKPT_SHAPES: [(i64, i64, i64, i64); 6] = [
        (4, 32768, 16, 128),
        (1, 32768, 16, 128),
        (16, 32768, 32, 128),
        (10, 29949, 16, 128),
        (1, 4096, 4, 64),
        (3, 300, 2, 64),
    ];

    /// The entry-name prefix of the rule's `U`-loading consumer (`gdn_bwd_tokens_tw3_` since
    /// session 32, `gdn_bwd_tokens_tw1_` in sessions 30 and 31, `gdn_bwd_tokens_tc16_ov_` before): what the plan tests look for where the
    /// storing replay pairs with the token stage.
    fn rule_u_consumer() -> String {
        let stage = TokenStage::by_rule(false, false);
        assert!(stage.loads_u, "{}", stage.name);
        let name = stage.overlapped.name("bf16", 128, PrepVariant::DEFAULT);
        name.strip_suffix("bf16_k128")
            .expect("an io suffix")
            .to_string()
    }

    #[test]
    fn default_plans_pair_tc16_with_the_storing_replay() {
        // The rule's stage (tc16 since session 27) in whole plans (no switches set): the token
        // stage and uncut replay [`tc16_pair_at`] gives, at the four benchmark shapes and K = 64.
        for (n, t, ho, d) in [
            (4, 32768, 16, 128),
            (1, 32768, 16, 128),
            (16, 32768, 32, 128),
            (10, 29949, 16, 128),
            (4, 32768, 16, 64),
        ] {
            let f = ckpt_facts((n, t, ho, d), 0, DataType::Bfloat16, 1);
            // Named in the full form: where the scalar form runs, its replay is the storing one
            // too (gx{,4}scu for gx{,4}u).
            let names: Vec<String> = planned(&named_plan(&f))
                .into_iter()
                .map(|l| full_form(&l.0))
                .collect();
            let on_pieces = BWD_PREP_FORM_BY_RULE.on_pieces();
            let rule_stage = TokenStage::by_rule(false, false).name;
            let (stage, replay) =
                tc16_pair_form(&f, rule_stage, REPLAY_BY_RULE, None, true, on_pieces);
            let consumer = TokenStage::named(stage).expect("a stage").overlapped.name(
                "bf16",
                d,
                PrepVariant::DEFAULT,
            );
            assert!(names.contains(&consumer), "{names:?}");
            let pieces = BwdSchedule::default_for(&f, 132).pieces;
            assert!(pieces > 1 || names.contains(&replay), "{replay}: {names:?}");
            let storing = names
                .iter()
                .any(|x| x.starts_with("gdn_bwd_fscan_gx") && x.contains("u_bf16"));
            assert_eq!(storing, stage == rule_stage, "{names:?}");
            // Since session 29 (BwdPrepForm::SlimPieces) the piece chain pairs too.
            assert_eq!(
                stage == rule_stage,
                (pieces == 1 || on_pieces) && d == 128,
                "{names:?}"
            );
            if pieces > 1 && stage == rule_stage {
                assert!(names.contains(&replay), "{replay}: {names:?}");
            }
        }
    }

    #[test]
    fn reused_checkpoints_leave_out_the_replay() {
        let replay_kernels = REPLAY_KERNELS;
        let plan = named_plan;
        for (n, t, ho, d) in CKPT_SHAPES {
            let rows = t / 64 + n;
            let with = plan(&ckpt_facts((n, t, ho, d), 64, DataType::Bfloat16, rows));
            let without = named_plan_form(
                &ckpt_facts((n, t, ho, d), 0, DataType::Bfloat16, rows),
                BwdPrepForm::Slim,
            );
            assert_eq!(with.checkpoints(), CheckpointUse::Reuse);
            assert_eq!(without.checkpoints(), CheckpointUse::Recompute);
            let names =
                |p: &GdnBwdPlan<String>| p.launches().map(|l| l.0.clone()).collect::<Vec<String>>();
            let (w, wo) = (names(&with), names(&without));
            let is_replay = |x: &String| replay_kernels.iter().any(|r| x.starts_with(r));
            let is_psum = |x: &String| x.starts_with("gdn_bwd_psum");
            assert!(!w.iter().any(is_replay), "{w:?}");
            // Without checkpoints: one replay uncut, the forward chain and the seeded replay
            // with pieces; every other launch but the summaries is the same, in the same order.
            let replays = wo.iter().filter(|x| is_replay(x)).count();
            let pieces = with.schedule().pieces;
            assert_eq!(replays, if pieces > 1 { 2 } else { 1 }, "{wo:?}");
            // The token stage: tc16 without checkpoints where it pairs (uncut, K = V = 128), its
            // fallback tc13 with them (no storing replay to pair with).
            let u_consumer = rule_u_consumer();
            let loads_u = wo.iter().any(|x| x.starts_with(&u_consumer));
            assert_eq!(loads_u, pieces == 1 && d == 128, "{wo:?}");
            assert!(!w.iter().any(|x| x.starts_with(&u_consumer)));
            let kept = |v: &[String], drop: &dyn Fn(&String) -> bool| -> Vec<String> {
                v.iter()
                    .filter(|x| !drop(x) && !is_psum(x))
                    .map(|x| full_form(x).replace(&u_consumer, "gdn_bwd_tokens_tc13_ov_"))
                    .collect()
            };
            assert_eq!(kept(&w, &|_| false), kept(&wo, &is_replay));
            // The reverse chain reads the summaries' transitions Mᵀ_j: only those are summed
            // (psumt, N·(P − 1) block rows instead of N·(2P − 1)); no M_j region.
            let psum = |p: &GdnBwdPlan<String>| {
                planned(p)
                    .into_iter()
                    .filter(|(x, _)| is_psum(x))
                    .map(|(x, g)| (x, g.2))
                    .collect::<Vec<_>>()
            };
            let m_bytes = if pieces > 1 {
                let (name, z) = &psum(&with)[0];
                assert!(name.starts_with("gdn_bwd_psumt"), "{name}");
                assert_eq!(u64::from(*z), n as u64 * (pieces - 1));
                assert_eq!(u64::from(psum(&without)[0].1), n as u64 * (2 * pieces - 1));
                n as u64 * (pieces - 1) * (ho * d * d) as u64 * 4
            } else {
                assert!(psum(&with).is_empty());
                0
            };
            // The states' region leaves the workspace: slots · V · K io elements (aligned); the
            // piece chain's M_j region too. (The recompute plan may run the slim form, whose
            // layout is smaller still: compare with the layout that keeps the states.)
            let slots = max_chunks(n as u64, t as u64) * ho as u64;
            let ws_s = slots * (d * d) as u64 * 2;
            let (nn, tt, hh, dd) = (n as u64, t as u64, ho as u64, d as u64);
            assert_eq!(
                with.layout,
                BwdWorkspaceLayout::with_states(nn, tt, hh, dd, dd, false)
            );
            let saved =
                BwdWorkspaceLayout::with_states(nn, tt, hh, dd, dd, true).total - with.layout.total;
            assert!(saved >= ws_s && saved < ws_s + 512, "{saved} vs {ws_s}");
            let piece_bytes = |p: &GdnBwdPlan<String>| p.pieces.total - p.layout.total;
            assert_eq!(piece_bytes(&without) - piece_bytes(&with), m_bytes);
            assert_eq!(with.layout.regions[5], with.layout.regions[4]);
        }
    }

    #[test]
    fn seeded_checkpoints_replace_the_forward_chain() {
        let is_replay = |x: &String| REPLAY_KERNELS.iter().any(|r| x.starts_with(r));
        let is_seed = |x: &String| x.starts_with("gdn_bwd_fscanc") || x == "gdn_bwd_ckrows";
        let is_psum = |x: &String| x.starts_with("gdn_bwd_psum");
        // [`CKPT_SHAPES`]; cadences of 2, 4 and 3 chunks in the io dtype and fp32, and fp32 rows
        // every chunk.
        for (n, t, ho, d) in CKPT_SHAPES {
            let without = named_plan_form(
                &ckpt_facts((n, t, ho, d), 0, DataType::Bfloat16, 1),
                BwdPrepForm::Slim,
            );
            let wo: Vec<_> = planned(&without);
            for (c, dt) in [
                (128, DataType::Bfloat16),
                (256, DataType::Bfloat16),
                (192, DataType::Float),
                (64, DataType::Float),
            ] {
                let rows = checkpoint_rows(n as u64, t as u64, c as u64);
                let plan = named_plan(&ckpt_facts((n, t, ho, d), c, dt, rows as i64));
                assert_eq!(plan.checkpoints(), CheckpointUse::Seed, "c = {c} {dt:?}");
                let got = planned(&plan);
                let names: Vec<String> = got.iter().map(|l| l.0.clone()).collect();
                let what = format!("({n}, {t}, {ho}, {d}) c = {c} {dt:?}: {names:?}");
                // No forward chain, no replay from the initial state.
                assert!(!names.iter().any(is_replay), "{what}");
                // The rows' table above one chunk per row, then one replay block per (value
                // slice, head, row).
                let seeds: Vec<_> = got.iter().filter(|l| is_seed(&l.0)).cloned().collect();
                let replay = CkptReplay::pick("", d as u64);
                let kernel = replay.kernel.name("bf16", d, PrepVariant::DEFAULT);
                let fscanc = (kernel, ((d / 64) as u32, ho as u32, rows as u32));
                if c > 64 {
                    assert_eq!(
                        seeds,
                        [("gdn_bwd_ckrows".to_owned(), (1, 1, 1)), fscanc],
                        "{what}"
                    );
                } else {
                    assert_eq!(seeds, [fscanc], "{what}");
                }
                let at = names.iter().position(is_seed).expect("seeded replay");
                assert!(
                    got[at..at + seeds.len()].iter().all(|l| is_seed(&l.0)),
                    "{what}"
                );
                // Every other launch is the recompute's, in order (the summaries: Mᵀ_j only).
                // (tc16 without checkpoints runs as tc13 with them: no storing replay; the split
                // producer, session 29, on grid (2, HO, N) as the one-block one on (1, HO, N).)
                let rest = |v: &[(String, (u32, u32, u32))], drop: &dyn Fn(&String) -> bool| {
                    v.iter()
                        .filter(|l| !drop(&l.0) && !is_psum(&l.0))
                        .map(|l| {
                            let grid = if l.0.contains("_ov2gxsh_") {
                                (1, l.1.1, l.1.2)
                            } else {
                                l.1
                            };
                            let name = full_form(&l.0)
                                .replace(&rule_u_consumer(), "gdn_bwd_tokens_tc13_ov_");
                            (name, grid)
                        })
                        .collect::<Vec<_>>()
                };
                assert!(!names.iter().any(|x| x.starts_with(&rule_u_consumer())));
                assert_eq!(rest(&got, &is_seed), rest(&wo, &is_replay), "{what}");
                let pieces = plan.schedule().pieces;
                let psum: Vec<_> = got.iter().filter(|l| is_psum(&l.0)).collect();
                if pieces > 1 {
                    assert_eq!(psum.len(), 1, "{what}");
                    assert!(psum[0].0.starts_with("gdn_bwd_psumt"), "{what}");
                    assert_eq!(u64::from(psum[0].1.2), n as u64 * (pieces - 1), "{what}");
                    // The seeded replay follows the summaries (the reverse chain's passes after).
                    assert!(is_psum(&names[at - 1]), "{what}");
                } else {
                    assert!(psum.is_empty(), "{what}");
                }
                // The states' region stays; the rows' table comes after the other regions.
                assert!(plan.layout.regions[5] > plan.layout.regions[4]);
                let table = plan.ckpt.total - plan.overlap.total;
                if c > 64 {
                    assert!(table >= 4 * (n as u64 + 1) && table <= 4 * (n as u64 + 1) + 512);
                } else {
                    assert_eq!(table, 0);
                }
                assert_eq!(
                    (plan.ckpt.every, plan.ckpt.f32),
                    (c as u64 / 64, dt == DataType::Float)
                );
            }
        }
        // The seeded replays ([`PICKS`]) each fit the blocks per SM they are meant for.
        assert!(SM90_BUDGET.holds(FSCANP1_MIN_BLOCKS, CKPT_REPLAYS[0].smem_bytes(128)));
        assert!(SM90_BUDGET.holds(2, CKPT_REPLAYS[1].smem_bytes(128)));
        let names = kernel_names("f16", 64, PrepVariant::DEFAULT);
        assert_eq!(names[BwdKernel::Fscanc1 as usize], "gdn_bwd_fscanc_f16_k64");
        assert_eq!(names[BwdKernel::PsumMt1 as usize], "gdn_bwd_psumt_f16_k64");
        let names = kernel_names("bf16", 128, PrepVariant::DEFAULT);
        assert_eq!(
            names[BwdKernel::Fscanc1 as usize],
            "gdn_bwd_fscanc1_bf16_k128"
        );
        assert_eq!(
            names[BwdKernel::PsumMt1 as usize],
            "gdn_bwd_psumt1_bf16_k128"
        );
        assert_eq!(names[BwdKernel::CkptRows as usize], "gdn_bwd_ckrows");
    }

    #[test]
    fn scalar_prep_form_rule() {
        use BwdKernel::*;
        // The switch, and the rule's default.
        assert_eq!(BwdPrepForm::from_switch("scaled"), BwdPrepForm::Scalars);
        assert_eq!(BwdPrepForm::from_switch("full"), BwdPrepForm::Full);
        assert_eq!(BwdPrepForm::from_switch("slim"), BwdPrepForm::Slim);
        assert_eq!(BwdPrepForm::from_switch(""), BWD_PREP_FORM_BY_RULE);
        assert_eq!(BwdPrepForm::from_switch("other"), BWD_PREP_FORM_BY_RULE);
        // Only K = V = 128, prep v15, uncut, the gx / gx4 replay, the dscan_ov2gx producer.
        let sc = BwdPrepForm::Scalars;
        let v15 = PrepVariant::V15;
        assert!(sc.scalar_form(128, 128, v15, 1, Some(FscanGx), DscanOv2Gx));
        assert!(sc.scalar_form(128, 128, v15, 1, Some(FscanGx4), DscanOv2Gx));
        assert!(sc.scalar_form(128, 128, v15, 1, Some(FscanGxU), DscanOv2Gx));
        assert!(sc.scalar_form(128, 128, v15, 1, Some(FscanGx4U), DscanOv2Gx));
        assert!(!BwdPrepForm::Full.scalar_form(128, 128, v15, 1, Some(FscanGx), DscanOv2Gx));
        // The slim form runs the scalar form's swaps (then slim_swap's), where it does.
        let sl = BwdPrepForm::Slim;
        assert!(sl.scalar_form(128, 128, v15, 1, Some(FscanGx4U), DscanOv2Gx));
        assert!(!sl.scalar_form(128, 128, v15, 8, Some(FscanGx4U), DscanOv2Gx));
        assert!(!sc.scalar_form(64, 64, v15, 1, Some(FscanGx), DscanOv2Gx));
        assert!(!sc.scalar_form(128, 64, v15, 1, Some(FscanGx), DscanOv2Gx));
        assert!(!sc.scalar_form(128, 128, PrepVariant::V14, 1, Some(FscanGx), DscanOv2Gx));
        assert!(!sc.scalar_form(128, 128, v15, 8, Some(FscanGx), DscanOv2Gx));
        assert!(!sc.scalar_form(128, 128, v15, 1, None, DscanOv2Gx));
        assert!(!sc.scalar_form(128, 128, v15, 1, Some(FscanGx3), DscanOv2Gx));
        assert!(!sc.scalar_form(128, 128, v15, 1, Some(FscanR4), DscanOv2Gx));
        assert!(!sc.scalar_form(128, 128, v15, 1, Some(FscanGx), DscanOv5Dr));
        // The replaced kernels and their names (K = 128 bundled; other K name the full form's).
        let replaced: Vec<_> = BwdKernel::ALL
            .iter()
            .filter_map(|k| k.scalar_form().map(|s| (*k, s)))
            .collect();
        assert_eq!(
            replaced,
            [
                (Prep, PrepSc),
                (FscanGx, FscanGxSc),
                (FscanGx4, FscanGx4Sc),
                (DscanOv2Gx, DscanOv2GxSc),
                (FscanGxU, FscanGxScU),
                (FscanGx4U, FscanGx4ScU)
            ]
        );
        let names = kernel_names("bf16", 128, PrepVariant::DEFAULT);
        assert_eq!(names[PrepSc as usize], "gdn_bwd_prep15sc_bf16_k128");
        assert_eq!(names[FscanGxSc as usize], "gdn_bwd_fscan_gxsc_bf16_k128");
        assert_eq!(names[FscanGx4Sc as usize], "gdn_bwd_fscan_gx4sc_bf16_k128");
        assert_eq!(
            names[DscanOv2GxSc as usize],
            "gdn_bwd_dscan_ov2gxsc_bf16_k128"
        );
        assert_eq!(names[FscanGxScU as usize], "gdn_bwd_fscan_gxscu_bf16_k128");
        assert_eq!(
            names[FscanGx4ScU as usize],
            "gdn_bwd_fscan_gx4scu_bf16_k128"
        );
        // The slim form's replays (session 28).
        let slim: Vec<_> = BwdKernel::ALL
            .iter()
            .filter_map(|k| k.slim_form().map(|s| (*k, s)))
            .collect();
        assert_eq!(
            slim,
            [
                (PrepSc, PrepSl),
                (FscanGxScU, FscanGxSl),
                (FscanGx4ScU, FscanGx4Sl)
            ]
        );
        assert_eq!(names[PrepSl as usize], "gdn_bwd_prep15sl_bf16_k128");
        assert_eq!(names[FscanGxSl as usize], "gdn_bwd_fscan_gxsl_bf16_k128");
        assert_eq!(names[FscanGx4Sl as usize], "gdn_bwd_fscan_gx4sl_bf16_k128");
        let names = kernel_names("f16", 64, PrepVariant::DEFAULT);
        assert_eq!(names[FscanGx4Sl as usize], "gdn_bwd_fscan_r4_f16_k64");
        assert_eq!(names[PrepSl as usize], names[Prep as usize]);
        assert_eq!(names[PrepSc as usize], names[Prep as usize]);
        assert_eq!(names[FscanGxSc as usize], "gdn_bwd_fscan_r4_f16_k64");
        assert_eq!(names[DscanOv2GxSc as usize], "gdn_bwd_dscan_ov5dr_f16_k64");
        // The scalar form's producer takes its own shared memory and dscan_ov2gx's threads.
        assert_eq!(
            overlap_scan_launch(DscanOv2GxSc, 128, 128),
            (256, dscan_ov2gxsc_smem_bytes(128, 128))
        );
        assert_eq!(
            overlap_scan_launch(DscanOv2GxSc, 64, 64),
            overlap_scan_launch(DscanOv5Dr, 64, 64)
        );
        // The piece chain's reverse half in the scalar form (session 29): K = 128 bundled, other
        // K name the full form's kernels; the seeded pass takes the scalar producer's shape.
        assert_eq!(names[DsumSc as usize], "gdn_bwd_dsum_f16_k64");
        assert_eq!(
            names[DscanpOv2GxSc as usize],
            "gdn_bwd_dscanp_ov5dr_f16_k64"
        );
        let names = kernel_names("bf16", 128, PrepVariant::DEFAULT);
        assert_eq!(names[DsumSc as usize], "gdn_bwd_dsum_sc_bf16_k128");
        assert_eq!(
            names[DscanpOv2GxSc as usize],
            "gdn_bwd_dscanp_ov2gxsc_bf16_k128"
        );
        assert_eq!(
            overlap_scan_launch(DscanpOv2GxSc, 128, 128),
            overlap_scan_launch(DscanOv2GxSc, 128, 128)
        );
        assert_eq!(
            overlap_scan_launch(DscanpOv2GxSc, 64, 64),
            overlap_scan_launch(DscanpOv5Dr, 64, 64)
        );
        assert_eq!(dsum_sc_smem_bytes(128, 128), 135_168);
    }

    /// The slim form's swap (session 28) on the benchmark shapes' plans by rule: exactly the plans
    /// running the scalar form's storing replay (uncut, K = 128, tc16) take the slim one, on the
    /// same grid and threads, at its stages' shared memory or the one-block-per-SM floor.
    #[test]
    fn slim_swap_replaces_the_storing_scalar_replay() {
        if std::env::var_os("DNNPLAN_GDN_BWD_PREP").is_some() {
            return;
        }
        for (n, t, ho, d) in CKPT_SHAPES {
            let f = super::super::engine::tests::bound(facts(n, t, ho, d, false));
            let plan = named_plan(&f);
            // The plan in the scalar form (the rule's slim kernels named back, session 28's flip;
            // prep16sl as prep15sl, session 29), the prep's launch as the scalar form's (its own
            // shared memory: prep15sc's).
            let unswapped = |k: BwdKernel| {
                if matches!(
                    k,
                    BwdKernel::PrepSl16 | BwdKernel::PrepSl16c | BwdKernel::PrepSl16l
                ) {
                    BwdKernel::PrepSl
                } else {
                    k
                }
            };
            let scalar_steps: Vec<Step> = plan
                .steps
                .iter()
                .map(|s| {
                    match BwdKernel::ALL
                        .iter()
                        .find(|k| k.slim_form() == Some(unswapped(s.0)))
                    {
                        Some(&k) if k == BwdKernel::PrepSc => {
                            let (grid, threads, smem) = PrepVariant::V15.row().pass.launch_shape(
                                u64::from(s.1.0),
                                u64::from(s.1.1),
                                128,
                                132,
                                None,
                            );
                            (k, grid, threads, smem)
                        }
                        Some(&k) => (k, s.1, s.2, s.3),
                        None => *s,
                    }
                })
                .collect();
            let plan = GdnBwdPlan {
                steps: scalar_steps,
                ..plan
            };
            let mut steps = plan.steps.clone();
            let storing: Vec<_> = steps
                .iter()
                .filter(|s| s.0.slim_form().is_some())
                .copied()
                .collect();
            // The prep and the storing replay.
            assert_eq!(
                storing.len(),
                2 * usize::from(plan.scalar_form()),
                "{n} {t} {ho} {d}"
            );
            let one_per_sm = |x: u32| x.max(REPLAY_ONE_PER_SM_SMEM);
            assert_eq!(slim_swap(&mut steps, true, 132), plan.scalar_form());
            for (a, b) in plan.steps.iter().zip(&steps) {
                if !plan.scalar_form() || a.0.slim_form().is_none() {
                    assert_eq!(a, b);
                    continue;
                }
                assert_eq!((Some(b.0), b.1, b.2), (a.0.slim_form(), a.1, a.2));
                let smem = match b.0 {
                    BwdKernel::PrepSl => 36_352,
                    BwdKernel::FscanGxSl => one_per_sm(fscan_gxsl_smem_bytes(2)),
                    _ => one_per_sm(fscan_gxsl_smem_bytes(4)),
                };
                assert_eq!(b.3, smem);
            }
            // Without the storing replay (tc13's scalar form) nothing is swapped.
            let mut tc13: Vec<Step> = plan.steps.clone();
            tc13.retain(|s| !matches!(s.0, BwdKernel::FscanGxScU | BwdKernel::FscanGx4ScU));
            let before = tc13.clone();
            assert!(!slim_swap(&mut tc13, true, 132));
            assert_eq!(tc13, before);
        }
    }

    /// The prep form the benchmark shapes' plans run by rule (without DNNPLAN_GDN_BWD_PREP):
    /// the slim form (session 28) uncut at K = 128, since session 29 also on the piece chain
    /// ((1, 32768, 16): prep15sl, psum_sl, fscan_gxsl, dsum_sc, dscanp_ov2gxsc), the full form at
    /// K = 64.
    #[test]
    fn default_plans_run_the_scalar_form_where_it_applies() {
        if std::env::var_os("DNNPLAN_GDN_BWD_PREP").is_some() {
            return;
        }
        for (n, t, ho, d) in CKPT_SHAPES {
            let f = super::super::engine::tests::bound(facts(n, t, ho, d, false));
            let plan = named_plan(&f);
            let names: Vec<String> = plan.launches().map(|l| l.0.clone()).collect();
            let pieces = plan.schedule().pieces > 1;
            let scalar = d == 128 && (!pieces || BWD_PREP_FORM_BY_RULE.on_pieces());
            // The scalar form's uncut producer split (session 29) from DSCAN_SPLIT_MIN_WAVES waves
            // of units where DSCAN_SPLIT_BY_RULE holds: dscan_ov2gxsh instead of dscan_ov2gxsc.
            let split = !pieces && dscan_split_by_rule((n * ho) as u64, 132);
            assert_eq!(plan.scalar_form(), scalar, "{names:?}");
            // Since session 28 the slim form (BWD_PREP_FORM_BY_RULE): prep15sl, the slim replay,
            // the scalar form's producer; no prep15sc, no gx{,4}scu.
            assert_eq!(plan.slim_form(), scalar, "{names:?}");
            let slim = |x: &String| {
                x.contains("prep15sl_")
                    || x.contains("sl_bf16")
                    || x.contains("slc_bf16")
                    || x.contains("sll_bf16")
            };
            // Uncut: prep15sl, fscan_gx{,4}sl, dscan_ov2gxsc (or the split dscan_ov2gxsh); the
            // piece chain: prep15sl, psum_sl, fscan_gxsl, dsum_sc, dscanp_ov2gxsc.
            let (n_sl, n_sc) = match (scalar, pieces) {
                (false, _) => (0, 0),
                (true, false) => (2, 1),
                (true, true) => (3, 2),
            };
            assert_eq!(names.iter().filter(|x| slim(x)).count(), n_sl, "{names:?}");
            assert_eq!(
                names.iter().filter(|x| x.contains("sc_")).count(),
                n_sc - usize::from(scalar && split),
                "{names:?}"
            );
            let producer = match (pieces, split) {
                (true, _) => "gdn_bwd_dscanp_ov2gxsc_",
                (false, true) => "gdn_bwd_dscan_ov2gxsh_",
                (false, false) => "gdn_bwd_dscan_ov2gxsc_",
            };
            assert_eq!(
                names.iter().any(|x| x.starts_with(producer)),
                scalar,
                "{names:?}"
            );
            assert!(!names.iter().any(|x| x.contains("scu_")), "{names:?}");
            // The slim prep (session 29): the rule's form's kernel (BwdSlimPrep::by_rule: prep16sl,
            // session 32 on its trimmed tile prep16slc, session 35 as prep16sll at this sequence
            // count) and no other slim prep, uncut and on the piece chain.
            if std::env::var_os("DNNPLAN_GDN_BWD_SLIMPREP").is_none() {
                let rule = BwdSlimPrep::by_rule(n);
                for (stem, form) in [
                    ("gdn_bwd_prep16sl_", BwdSlimPrep::V16),
                    ("gdn_bwd_prep16slc_", BwdSlimPrep::V16c),
                    ("gdn_bwd_prep16sll_", BwdSlimPrep::V16l),
                    ("gdn_bwd_prep15sl_", BwdSlimPrep::V15),
                ] {
                    let runs = scalar && form == rule;
                    assert_eq!(names.iter().any(|x| x.starts_with(stem)), runs, "{names:?}");
                }
            }
        }
    }

    /// Session 29 (helper bp29): `DNNPLAN_GDN_BWD_SLIMPREP`'s values, and `prep16_swap` on the
    /// benchmark shapes' plans: exactly the slim form's prep `prep15sl` becomes `prep16sl` on the
    /// same grid, threads and shared memory (36,352 B); nothing else changes; plans without the
    /// slim form (the piece chain, K = 64) are left alone.
    #[test]
    fn slim_prep16_switch_and_swap() {
        // Each value forces its form, whatever the sequence count; anything else is the rule.
        let (lo, hi) = SLIM_PREP_LOCATE_WARP_SEQS;
        for n in [1, lo - 1, lo, hi, hi + 1] {
            for (name, form) in BwdSlimPrep::NAMED {
                assert_eq!(BwdSlimPrep::from_switch(Some(name), n), form, "{name}");
            }
            for value in [None, Some("x")] {
                assert_eq!(BwdSlimPrep::from_switch(value, n), BwdSlimPrep::by_rule(n));
            }
            // Session 35 (pr35): v16l by rule only within the forward's wgl range, else v16c.
            let want = if (lo..=hi).contains(&n) {
                BwdSlimPrep::V16l
            } else {
                BwdSlimPrep::V16c
            };
            assert_eq!(BwdSlimPrep::by_rule(n), want, "{n}");
        }
        // The forms in order (FormKnob::SlimPrep compares them), each with its kernel.
        let forms = BwdSlimPrep::NAMED.map(|(_, f)| f);
        assert!(forms.windows(2).all(|w| w[0] < w[1]));
        assert_eq!(
            forms.map(BwdSlimPrep::kernel),
            [
                BwdKernel::PrepSl,
                BwdKernel::PrepSl16,
                BwdKernel::PrepSl16c,
                BwdKernel::PrepSl16l
            ]
        );
        assert_eq!(
            BwdKernel::PrepSl16l.name("f16", 64, PrepVariant::DEFAULT),
            BwdKernel::Prep.name("f16", 64, PrepVariant::DEFAULT)
        );
        assert_eq!(
            BwdKernel::PrepSl16c.name("f16", 64, PrepVariant::DEFAULT),
            BwdKernel::Prep.name("f16", 64, PrepVariant::DEFAULT)
        );
        assert_eq!(
            BwdKernel::PrepSl16.name("f16", 64, PrepVariant::DEFAULT),
            BwdKernel::Prep.name("f16", 64, PrepVariant::DEFAULT)
        );
        if std::env::var_os("DNNPLAN_GDN_BWD_PREP").is_some() {
            return;
        }
        for (n, t, ho, d) in CKPT_SHAPES {
            let f = super::super::engine::tests::bound(facts(n, t, ho, d, false));
            let plan = named_plan(&f);
            // The plan with prep15sl (prep16sl / prep16slc named back where the rule or switch
            // ran it).
            let v15: Vec<Step> = plan
                .steps
                .iter()
                .map(|s| {
                    if matches!(
                        s.0,
                        BwdKernel::PrepSl16 | BwdKernel::PrepSl16c | BwdKernel::PrepSl16l
                    ) {
                        (BwdKernel::PrepSl, s.1, s.2, 36_352)
                    } else {
                        *s
                    }
                })
                .collect();
            let mut steps = v15.clone();
            assert_eq!(
                prep16_swap(&mut steps, 132),
                plan.slim_form(),
                "{n} {t} {ho} {d}"
            );
            for (a, b) in v15.iter().zip(&steps) {
                if a.0 == BwdKernel::PrepSl {
                    assert_eq!(*b, (BwdKernel::PrepSl16, a.1, a.2, a.3));
                    assert_eq!((a.2, a.3), (256, 36_352));
                } else {
                    assert_eq!(a, b);
                }
            }
            // Session 32 (pp32): then the prep16c row, prep16sl to prep16slc on the same grid and
            // threads at 54,784 B; nothing else changes.
            let v16 = steps.clone();
            assert_eq!(
                prep16c_swap(&mut steps, 132),
                plan.slim_form(),
                "{n} {t} {ho} {d}"
            );
            for (a, b) in v16.iter().zip(&steps) {
                if a.0 == BwdKernel::PrepSl16 {
                    assert_eq!(*b, (BwdKernel::PrepSl16c, a.1, a.2, 54_784));
                } else {
                    assert_eq!(a, b);
                }
            }
            // Session 35 (pr35): then the prep16l row, prep16slc to prep16sll, the same launch.
            let v16c = steps.clone();
            assert_eq!(
                prep16l_swap(&mut steps, 132),
                plan.slim_form(),
                "{n} {t} {ho} {d}"
            );
            for (a, b) in v16c.iter().zip(&steps) {
                if a.0 == BwdKernel::PrepSl16c {
                    assert_eq!(*b, (BwdKernel::PrepSl16l, a.1, a.2, a.3));
                } else {
                    assert_eq!(a, b);
                }
            }
        }
    }

    /// Session 29: the split reverse scan's rule (by waves of (sequence, head) units), and its swap
    /// in whole plans at (16, 2048, 32) (512 units: 3.9 waves on 132 SMs), (4, 8192, 16) (64) and the
    /// ragged mix (160): the producer `dscan_ov2gxsc` (1, HO, N) × 256 threads becomes
    /// `dscan_ov2gxsh` (2, HO, N) × 128 on 110,592 B (two per SM), nothing else changes, and the
    /// consumers then wait for 2 (`ov_need`); the piece chain (1, 32768, 16) has no such producer.
    #[test]
    fn split_reverse_scan_rule_and_swap() {
        for (units, split) in [
            (512, true),
            (264, true),
            (263, false),
            (160, false),
            (64, false),
        ] {
            assert_eq!(units >= DSCAN_SPLIT_MIN_WAVES * 132, split, "{units} units");
            assert_eq!(
                dscan_split_by_rule(units, 132),
                DSCAN_SPLIT_BY_RULE && split,
                "{units} units"
            );
        }
        if [
            "DNNPLAN_GDN_BWD_DSCAN_SPLIT",
            "DNNPLAN_GDN_BWD_PREP",
            "DNNPLAN_GDN_BWD_DSCAN",
        ]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
        {
            return;
        }
        for (n, t, ho) in [
            (16, 32768, 32),
            (4, 32768, 16),
            (10, 29949, 16),
            (1, 32768, 16),
        ] {
            let f = ckpt_facts((n, t, ho, 128), 0, DataType::Bfloat16, 1);
            let plan = named_plan(&f);
            let units = (n * ho) as u64;
            let by_rule = dscan_split_by_rule(units, 132);
            let uncut = plan.schedule().pieces <= 1;
            // The plan's producer by rule; with the swap undone, the one-block scan's launch.
            let mut one = plan.steps.clone();
            for step in one.iter_mut() {
                if step.0 == BwdKernel::DscanOv2GxSh {
                    *step = (
                        BwdKernel::DscanOv2GxSc,
                        (1, step.1.1, step.1.2),
                        256,
                        dscan_ov2gxsc_smem_bytes(128, 128),
                    );
                }
            }
            assert_eq!(ov_need(&plan.steps), if by_rule && uncut { 2 } else { 0 });
            let producer = (ho as u32, n as u32);
            let sc: Vec<&Step> = one
                .iter()
                .filter(|s| s.0 == BwdKernel::DscanOv2GxSc)
                .collect();
            if !uncut {
                assert!(sc.is_empty(), "{:?}", plan.steps);
                assert!(!split_swap(&mut one), "{:?}", plan.steps);
                continue;
            }
            assert_eq!(
                sc,
                [&(
                    BwdKernel::DscanOv2GxSc,
                    (1, producer.0, producer.1),
                    256,
                    169_984
                )]
            );
            let mut two = one.clone();
            assert!(split_swap(&mut two));
            assert_eq!(ov_need(&two), 2);
            assert_eq!(ov_need(&one), 0);
            assert_eq!(one.len(), two.len());
            for (a, b) in one.iter().zip(&two) {
                if a.0 == BwdKernel::DscanOv2GxSc {
                    assert_eq!(
                        *b,
                        (
                            BwdKernel::DscanOv2GxSh,
                            (2, producer.0, producer.1),
                            128,
                            110_592
                        )
                    );
                    assert!(SM90_BUDGET.holds(2, b.3) && !SM90_BUDGET.holds(2, a.3));
                } else {
                    assert_eq!(a, b);
                }
            }
            // The plan by rule is one of the two; the consumer follows the producer.
            assert_eq!(plan.steps, if by_rule { two.clone() } else { one });
            let at = two
                .iter()
                .position(|s| s.0 == BwdKernel::DscanOv2GxSh)
                .expect("the producer");
            assert_eq!(two[at + 1].0, BwdKernel::TokensTw7Ov);
        }
    }

    /// One launch by name: (entry, grid, threads, shared memory).
    type NamedLaunch = (String, (u32, u32, u32), u32, u32);

    /// The launches of `f`'s plan under `form` (bf16).
    fn form_launches(f: &GdnFacts, form: BwdPrepForm) -> Vec<NamedLaunch> {
        let names = kernel_names("bf16", f.k, PrepVariant::DEFAULT).to_vec();
        GdnBwdPlan::with_form(f, names, 132, form)
            .expect("plan")
            .launches()
            .map(|l| (l.0.clone(), l.1, l.2, l.3))
            .collect()
    }

    #[test]
    fn slim_pieces_run_the_piece_chain_on_the_slim_form() {
        // Session 29 (ps29 + pr29): DNNPLAN_GDN_BWD_PREP=slimp at (1, 32768, 16), the 8-piece
        // chain: every pass on the slim / scalar form (nothing reads W, Ũᵀ, Q⁺, Kᴿ, E), tc16 with
        // the seeded slim replay storing U; the launches, grids, threads and shared memory.
        if std::env::var_os("DNNPLAN_GDN_BWD_PIECES").is_some()
            || std::env::var_os("DNNPLAN_GDN_BWD_PIECE_PASSES").is_some()
        {
            return;
        }
        use BwdKernel::*;
        let f = super::super::engine::tests::bound(facts(1, 32768, 16, 128, false));
        assert_eq!(BwdSchedule::default_for(&f, 132).pieces, 8);
        let slimp = form_launches(&f, BwdPrepForm::SlimPieces);
        let slim = form_launches(&f, BwdPrepForm::Slim);
        let name = |k: BwdKernel| k.name("bf16", 128, PrepVariant::DEFAULT);
        // The slim prep: the form's kernel (session 29, bp29; session 32, pp32; session 35, pr35).
        let prep_kernel = BwdSlimPrep::from_env(f.n_seqs).kernel();
        let prep_row = prep_kernel.slim_prep_pass().expect("a slim prep");
        let prep = prep_row.launch_shape(u64::from(slim[1].1.0), 16, 128, 132, None);
        let want = [
            (name(ChunkOrderRev), slim[0].1, slim[0].2, slim[0].3),
            (name(prep_kernel), prep.0, prep.1, prep.2),
            (name(PsumSl), (2, 16, 15), 128, 69_632),
            (name(Pchain3), slim[3].1, slim[3].2, slim[3].3),
            (name(FscanGxSl), (2, 16, 8), 128, 69_632),
            (name(DsumSc), (1, 16, 7), 256, 135_168),
            (name(Dchain3), slim[6].1, slim[6].2, slim[6].3),
            (name(DscanpOv2GxSc), (1, 16, 8), 256, 169_984),
            (
                name(TokensTw7Ov),
                slim[8].1,
                slim[8].2,
                tokens_tw1_tile_smem_bytes(128),
            ),
        ];
        assert_eq!(slimp[..9], want);
        // The launches after the token stage (the parameter gradients) as the slim form's.
        assert_eq!(slimp[9..], slim[9..]);
        // Session 28's slim form keeps the full-form chain with tc13 (the witness).
        let full: Vec<String> = [
            ChunkOrderRev,
            Prep,
            Psum1,
            Pchain3,
            FscanGx,
            Dsum1,
            Dchain3,
            DscanpOv5Dr,
            TokensTc13Ov,
        ]
        .map(name)
        .to_vec();
        assert_eq!(
            slim[..9].iter().map(|l| l.0.clone()).collect::<Vec<_>>(),
            full
        );
        for (a, b) in slimp.iter().zip(&slim) {
            // The forward chain, the reverse chain and the token stage's grids are the same.
            if matches!(a.0.as_str(), x if x.contains("chain") || x.contains("tokens")) {
                assert_eq!((a.1, a.2), (b.1, b.2), "{a:?} {b:?}");
            }
        }
        // Every left kernel of PIECE_SLIM_SWAPS is in the full-form chain with tc16, so the swap
        // is all or nothing; the summaries' transitions-only pair (PsumMt1 -> PsumMtSl) runs only
        // under the saved replay (the_saved_replay_leaves_out_the_prep_and_the_replay).
        for (from, to) in PIECE_SLIM_SWAPS {
            assert_eq!(from.piece_slim_form(), Some(to));
            if from == PsumMt1 {
                continue;
            }
            // prep15sl runs as the slim prep form's kernel (the prep16 rows after it).
            let runs = if to == PrepSl { prep_kernel } else { to };
            assert!(slimp.iter().any(|l| l.0 == name(runs)), "{to:?}");
        }
        // The uncut shapes and K = 64: slimp plans exactly as slim.
        for (n, t, ho, d) in [
            (4, 32768, 16, 128),
            (16, 32768, 32, 128),
            (10, 29949, 16, 128),
            (1, 4096, 4, 64),
            (3, 300, 2, 64),
        ] {
            let f = super::super::engine::tests::bound(facts(n, t, ho, d, false));
            assert_eq!(
                form_launches(&f, BwdPrepForm::SlimPieces),
                form_launches(&f, BwdPrepForm::Slim),
                "{:?}",
                (n, t, ho, d)
            );
        }
        // The piece swap's preconditions: K = 64, another prep, a chain without the storing
        // seeded replay or the p1 passes: no swap.
        let mut steps: Vec<Step> = slim
            .iter()
            .map(|l| {
                let k = *BwdKernel::ALL
                    .iter()
                    .find(|k| name(**k) == l.0)
                    .expect("a kernel");
                (k, l.1, l.2, l.3)
            })
            .collect();
        let v15 = PrepVariant::V15;
        assert!(
            !piece_slim_swap(&mut steps.clone(), 128, 128, v15, 132),
            "no storing replay"
        );
        let gxu = steps
            .iter()
            .position(|s| s.0 == FscanGx)
            .expect("the piece replay");
        steps[gxu].0 = FscanGxU;
        assert!(!piece_slim_swap(&mut steps.clone(), 64, 64, v15, 132));
        assert!(!piece_slim_swap(
            &mut steps.clone(),
            128,
            128,
            PrepVariant::V14,
            132
        ));
        let mut s2 = steps.clone();
        s2.retain(|s| s.0 != Dsum1);
        assert!(!piece_slim_swap(&mut s2, 128, 128, v15, 132), "no dsum1");
        assert!(piece_slim_swap(&mut steps, 128, 128, v15, 132));
        assert!(steps.iter().all(|s| s.0.piece_slim_form().is_none()));
    }

    /// The entry names of the kernels whose name depends on K (a fallback at K other than 128) or
    /// that a test names literally: one row per (kernel, dtype tag, K, entry).
    #[test]
    fn entry_names_by_dtype_and_k() {
        use BwdKernel::*;
        for (kernel, tag, k, entry) in [
            (
                TokensTc11Ov,
                "bf16",
                128,
                "gdn_bwd_tokens_tc11_ov_bf16_k128",
            ),
            (TokensTc12Ov, "f16", 64, "gdn_bwd_tokens_tc12_ov_f16_k64"),
            (
                TokensTc13Ov,
                "bf16",
                128,
                "gdn_bwd_tokens_tc13_ov_bf16_k128",
            ),
            (DscanpOv5Dr, "f16", 64, "gdn_bwd_dscanp_ov5dr_f16_k64"),
            (DscanOv2Gx, "bf16", 128, "gdn_bwd_dscan_ov2gx_bf16_k128"),
            (DscanOv2Gx, "f16", 64, "gdn_bwd_dscan_ov5dr_f16_k64"),
            (DscanpOv2Gx, "f16", 128, "gdn_bwd_dscanp_ov2gx_f16_k128"),
            (DscanpOv2Gx, "bf16", 64, "gdn_bwd_dscanp_ov5dr_bf16_k64"),
            (DscanpOv2, "f16", 64, "gdn_bwd_dscanp_ov2_f16_k64"),
            (DscanpOv5, "bf16", 128, "gdn_bwd_dscanp_ov5_bf16_k128"),
            (PrepSl16, "bf16", 128, "gdn_bwd_prep16sl_bf16_k128"),
            (PrepSl16c, "f16", 128, "gdn_bwd_prep16slc_f16_k128"),
            (PrepSl16l, "bf16", 128, "gdn_bwd_prep16sll_bf16_k128"),
            (DscanOv2GxSh, "bf16", 128, "gdn_bwd_dscan_ov2gxsh_bf16_k128"),
            (DscanOv2GxSh, "f16", 64, "gdn_bwd_dscan_ov5dr_f16_k64"),
            (DsumSc, "bf16", 128, "gdn_bwd_dsum_sc_bf16_k128"),
            (DsumSc, "f16", 64, "gdn_bwd_dsum_f16_k64"),
            (DscanpOv2GxSc, "f16", 128, "gdn_bwd_dscanp_ov2gxsc_f16_k128"),
            (DscanpOv2GxSc, "bf16", 64, "gdn_bwd_dscanp_ov5dr_bf16_k64"),
            (PsumSl, "bf16", 128, "gdn_bwd_psum_sl_bf16_k128"),
            (PsumSl, "f16", 64, "gdn_bwd_psum_f16_k64"),
        ] {
            assert_eq!(
                kernel.name(tag, k, PrepVariant::DEFAULT),
                entry,
                "{kernel:?}"
            );
        }
    }
}
