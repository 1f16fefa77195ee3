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
mod tests;
