//! `gdn_sm90`: the bundled Hopper engine of the `gdn` family, forward and backward.
//!
//! This module holds the engine (support rules, build), the forward's schedule ([`FwdChoice`]) and
//! its plan ([`GdnFwdPlan`]); the forward's kernel rows live in [`super::fwd_rows`] and are
//! re-exported here.
//!
//! Support is decided by the rows of [`SUPPORT_RULES`] (each returns the decline reason or
//! nothing), over the family facts and the target. Build loads the bundled `gdn_fwd` module
//! (sm_90a cubin) and resolves the three entry points of the (io dtype, K) variant (the
//! backward: `gdn_bwd` and its eleven, of which a plan launches up to seven, see
//! [`super::backward`]); execute
//! binds the pack's addresses into one [`FwdParams`] block, carves the caller's workspace and
//! launches chunk table, per-chunk factors and state scan on the context's stream: no
//! allocation on the device, no host synchronisation, deterministic.
//!
//! State checkpoints (`checkpoint_every_n_tokens = c`, spec §3.4; session 16): served when `c` is a
//! positive multiple of the 64-token chunk ([`SUPPORT_RULES`]: the cadence, `state_checkpoints` in
//! the io dtype or fp32, no `state_indices` pool). Every forward output scan (full or slim factors,
//! uncut, overlapped or seeded piece scan) writes the stored-domain state entering chunk `i` of
//! sequence `b` when `i % (c / 64) == 0` to row `rows[b] + i / (c / 64)`: the row table is the chunk
//! table at `c = 64` and otherwise written by the chunk-table kernel into the workspace
//! ([`CkptLayout`]). Same launches, same O and final state bits. A backward binds the input and
//! the backward plan's [`super::backward::BWD_CHECKPOINT_RULE`] decides its use: io rows at
//! `c = 64` replace the forward-state replay, every other cadence and fp32 rows seed it.
//!
//! Forward scan variants ([`ScanVariant`], rows of [`FWD_SCANS`], chosen at build by
//! [`FWD_SCAN_RULE`]): `gdn_fwd_scanx_*_w4` (4 warps, two value halves per head) or `_w8` (8
//! warps, all 128 value rows per block), and for long sequences on few (sequence, head) pairs
//! the exact piece chain of [`FWD_PIECE_PATH`] (a summary pass of [`FWD_SUMS`], the chain kernel
//! of [`super::chain::ChainVariant`] (default `gdn_fwd_chain3_k*`), then the output scan per
//! piece; the piece count from the two passes' blocks per SM; see
//! `kernels/include/gdn_fwd_fast.cuh`). Every output scan and piece summary a schedule launches
//! is a row ([`FwdPass`]: entry, warps, shared-memory layout): the full scans of [`FWD_SCANS`],
//! the summaries of [`FWD_SUMS`], the slim scans of [`SLIM_SCANS`] and [`SLIM_PIECES`];
//! [`FwdChoice::scan_pass`] and [`FwdChoice::sum_pass`] pick them (a configuration is a row).
//! So is every prep ([`PrepPass`]: entry, threads, shared memory, grid): the full factors' of
//! [`PREP_VARIANTS`], the slim [`SLIM_PREP`] and persistent [`SLIM_PREP_OV`] of the
//! [`SLIM_SCANS`] rows; [`FwdChoice::prep_pass`] picks it.
//! Diagnostics read once at build: `DNNPLAN_GDN_FWD_SCAN=w4|w8|w4p|w4gs|w4gx|w4gxs|w4gxt|w4gxu|w4gxv|w8gx|w8gxs` (force
//! an output scan; bitwise the same outputs; `w4gs`: the uncut slim w4 with its P', O' products by
//! wgmma, [`SLIM_SCAN_W4GS`]; `w4gx` / `w8gx`: the whole chunk step by wgmma on 4 / 8 warps,
//! [`SLIM_SCAN_W4GX`] / [`SLIM_SCAN_W8GX`], the uncut defaults by [`SLIM_SCAN_WGMMA_BY_RULE`];
//! `w4gxs`: w4gx with the T, A, v, scalar copies in the step's tail, [`SLIM_SCAN_W4GXS`];
//! `w8gxs`: w8gx with the same split, [`SLIM_SCAN_W8GXS`]; `w4gxt`: w4gxs with O stored by the
//! o tensor map, [`SLIM_SCAN_W4GXT`]; `w4gxu`: w4gxt with q, k loaded by the tensor maps,
//! [`SLIM_SCAN_W4GXU`]; `w4gxv`: w4gxt with the store ahead of the tail's copies, [`SLIM_SCAN_W4GXV`];
//! on the slim factors, else `w4` / `w8`; `w4`, `w8`: the mma.sync scans;
//! the wgmma scans are not bitwise w4 by construction, bitwise on the H200),
//! `DNNPLAN_GDN_FWD_SUM=s2|p3` (force a summary pass; bitwise the same H_j, M_j), `DNNPLAN_GDN_FWD_PIECES=n` (force n pieces per sequence; 1 = off),
//! `DNNPLAN_GDN_FWD_PIECE=gx|gs|d` (the slim piece path's passes: `gx` the summary and seeded
//! scan with the whole chunk step by wgmma, [`SLIM_PIECES_WGX`]; `gs` with their P', O' products
//! by wgmma, [`SLIM_PIECES_WG`]; `d` the mma.sync [`SLIM_PIECES`]; unset:
//! [`SLIM_PIECE_WGMMA_BY_RULE`]; not bitwise by construction),
//! `DNNPLAN_GDN_FWD_PIECE_FIRST=0|1|2` (session 32: the wgmma piece path with its first piece
//! run beside the summary, [`SLIM_PIECES_FIRST`], and its piece count; `2` keeps the other
//! pieces' scan on two blocks per SM; unset: [`SLIM_PIECE_FIRST_BY_RULE`]; seed 1 bitwise
//! without an initial state, another rounding with one),
//! `DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE=s` (there, the first piece s/256 of the even one: another cut;
//! unset: [`FwdChoice::rule_first_scale`]: the summary's or the first scan's row at the piece count),
//! `DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN=w4dgx0|w4gx0` (session 34: the first piece's output scan
//! there, a row of [`SLIM_FIRST_SCANS`]; unset: [`SLIM_FIRST_SCAN_BY_RULE`]; bitwise each other),
//! `DNNPLAN_GDN_FWD_PIECE_FIRST_SUM=gxr|gxr3` (session 35: the summary beside the first piece
//! there, a row of [`SLIM_FIRST_SUMS`]; unset: [`SLIM_FIRST_SUM_BY_RULE`]; bitwise each other)
//! and `DNNPLAN_GDN_FWD_STEPS=n` (launch only the first n kernels: per-kernel timing by
//! differences), `DNNPLAN_GDN_FWD_SLIMPREP=mma|wg|wg5|wgc|wgl|wgt|wgtl` (session 28: the slim prep's K Kᵀ / Q Kᵀ
//! by mma.sync, [`SLIM_PREP`], or on wgmma, [`SLIM_PREP_WG`] / [`SLIM_PREP_WG5`] /
//! [`SLIM_PREP_WGC`] (session 32: two block barriers fewer) / [`SLIM_PREP_WGL`] (session 35: the
//! chunk located in one round of loads) / [`SLIM_PREP_WGT`] / [`SLIM_PREP_WGTL`] (session 36: a
//! whole chunk's q, k rows by tensor-map box loads); the same k16
//! steps in the same order, bitwise on the H200; unset: [`SlimPrepProducts::by_rule`], wgt, or
//! wgtl from 8 to 31 sequences), `DNNPLAN_GDN_FWD_PREP=v14|v15` (the factor kernel, both directions, bitwise the
//! same outputs: a row of [`PREP_VARIANTS`]; the default is [`PrepVariant::DEFAULT`], v15).
//! The kernel switches (`_SCAN`, `_SUM`, `_PREP`) select only kernels bitwise the default (knobs change
//! speed, never numerics); `_PIECES` changes the rounding (the piece chain's fp32 seeds) and
//! `_STEPS` truncates the execute: schedule diagnostics for the benchmarks.
//! `DNNPLAN_GDN_PDL=0|1|early` (both directions): the launch chain, [`super::pdl::PdlMode`].
//! `DNNPLAN_GDN_SEQ_ORDER=0|1` (both directions, session 34): the uncut scans' sequences
//! longest-first ([`super::seq_order`], rule [`super::seq_order::SEQ_ORDER_RULE`]; bitwise).
//! `DNNPLAN_GDN_CHAIN=v1|v2|v3` (both directions): the piece chain's body,
//! [`super::chain::ChainVariant`] (bitwise the same seeds).
//! `DNNPLAN_GDN_FWD_FACTORS=slim|full` (forward): the chunk factors ([`FwdFactors`]): `slim`
//! (`gdn_fwd_slimprep_*` writes T, A and per-token scalars, `gdn_fwd_slimscan_*_w4|w8` rebuilds
//! the products from the raw q, k, v; kernels/include/gdn_fwd_slim.cuh) where it applies (K = V =
//! 128; cut into pieces: [`SLIM_PIECES`], `gdn_fwd_slimsum_*` and `gdn_fwd_slimscan_*_w4d`),
//! else the full factors. A numerics change (a different exact factorisation), validated against
//! the fp64 reference. Unset: [`FwdFactors::UNCUT_DEFAULT`] (slim since session 13) uncut,
//! `batch_invariant` included, and [`FwdFactors::PIECE_DEFAULT`] on the piece path.
//! `DNNPLAN_GDN_FWD_OVERLAP=0|1` (forward, session 15): the uncut slim prep and output scan at the
//! same time ([`super::fwd_overlap`]: `gdn_fwd_chunk_order`, the persistent prep
//! `gdn_fwd_slimprep_*_k128_ov`, the scan `gdn_fwd_slimscan_*_k128_w4ov` launched programmatic;
//! bitwise the non-overlapped slim forward): `0` never, `1` wherever the uncut slim path runs,
//! unset by [`super::fwd_overlap::FWD_OVERLAP_RULE`] (not with a forced `DNNPLAN_GDN_FWD_SCAN`;
//! no rule since session 19: unset never overlaps);
//! diagnostics: `seq` (the same kernels one after the other), `DNNPLAN_GDN_FWD_OVERLAP_PER_SM=n`
//! (the persistent prep's blocks per SM, at most what fits beside the scan).

use crate::cuda::tma::EncodedMaps;
use crate::cuda::{Function, Launcher, compile_or_load, probe};
use crate::dispatch::engine::{BuildContext, CompiledPlan, Engine, SupportQuery};
use crate::dispatch::exec_types::VariantPack;
use crate::dispatch::knobs::Knobs;
use crate::dispatch::target::Target;
use crate::error::{Error, Result};
use crate::ir::DataType;
use crate::ir::infer::{GDN_CHUNK_FACTOR_BYTES, gdn_chunk_factor_bytes, gdn_chunk_factor_rows};

use super::analyzer::{GdnFacts, GdnOp, PortFacts};
use super::backward::GdnBwdPlan;
use super::chain::ChainVariant;
use super::chunk_factors::ChunkFactorsLayout;
use super::fwd_overlap;
use super::params::{
    CHAIN_THREADS, CkptLayout, FwdFastParams, FwdParams, FwdTmaParams, GdnIoMaps, KernelDtype,
    OFFSETS_THREADS, OverlapLayout, PieceLayout, WorkspaceLayout, flags, max_chunks,
};
use super::pdl::{GdnPlan, Launch, PdlMode};
use super::seq_order::seq_order_flags;
use super::tma_maps::{self, FwdIoMapShape};

// The forward's kernel rows live in their own module; every path through this one stays valid.
pub use super::fwd_rows::*;

/// Manifest name of the engine.
pub const ENGINE_NAME: &str = "gdn_sm90";

/// One support rule: `Some(reason)` declines.
type SupportRule = fn(&GdnFacts, &Target) -> Option<String>;

/// Every condition the kernels need, in the order the reasons are reported.
/// The index limits come early: every later rule may then compute on the shape's counts without
/// overflow.
pub const SUPPORT_RULES: &[SupportRule] = &[
    needs_sm90,
    head_dims,
    index_range,
    io_dtype,
    state_dtype,
    gradient_dtypes,
    checkpoint_cadence,
    checkpoint_dtype,
    checkpoints_without_pool,
    chunk_factors_port,
    packed_ports,
    port_dims,
];

fn needs_sm90(_: &GdnFacts, t: &Target) -> Option<String> {
    match t.arch() {
        Some(90) => None,
        Some(a) => Some(format!(
            "needs an SM90 GPU (sm_90a cubin); the target is SM{a}"
        )),
        None => Some(format!("needs an SM90 GPU; {}", t.describe())),
    }
}

fn head_dims(f: &GdnFacts, _: &Target) -> Option<String> {
    (f.k != f.v || !(f.k == 64 || f.k == 128))
        .then(|| format!("needs K = V in {{64, 128}}; got K = {}, V = {}", f.k, f.v))
}

fn io_dtype(f: &GdnFacts, _: &Target) -> Option<String> {
    (!matches!(f.io, DataType::Bfloat16 | DataType::Half))
        .then(|| format!("io dtype must be BFLOAT16 or HALF; got {}", f.io.name()))
}

/// Every state port; all present ones share the state dtype (the first present one decides).
const STATE_PORTS: [&str; 4] = [
    "initial_state",
    "final_state",
    "d_final_state",
    "d_initial_state",
];

fn state_dtype(f: &GdnFacts, _: &Target) -> Option<String> {
    let first = STATE_PORTS.iter().find_map(|p| f.port(p))?.dtype;
    STATE_PORTS.iter().find_map(|p| {
        f.port(p)
            .filter(|s| {
                !matches!(s.dtype, DataType::Float | DataType::Bfloat16) || s.dtype != first
            })
            .map(|s| {
                format!(
                    "{p} must be FLOAT or BFLOAT16 and equal the other state ports' dtype; got {}",
                    s.dtype.name()
                )
            })
    })
}

/// Gradient ports the kernels write in their primal's dtype.
const GRADIENT_OF: [(&str, &str); 8] = [
    ("dQ", "q"),
    ("dK", "k"),
    ("dV", "v"),
    ("dO", "q"),
    ("dG", "g"),
    ("dBeta", "beta"),
    ("d_a_log", "a_log"),
    ("d_dt_bias", "dt_bias"),
];

fn gradient_dtypes(f: &GdnFacts, _: &Target) -> Option<String> {
    GRADIENT_OF.iter().find_map(|(grad, of)| {
        let (g, p) = (f.port(grad)?, f.port(of)?);
        (g.dtype != p.dtype).then(|| {
            format!(
                "{grad} must have {of}'s dtype {}; got {}",
                p.dtype.name(),
                g.dtype.name()
            )
        })
    })
}

/// The kernels' chunk: state checkpoints come at chunk boundaries (the state entering a chunk).
const CKPT_GRAIN: i64 = super::params::CHUNK as i64;

/// State checkpoints (spec §3.4; both directions: the forward writes them, the backward binds
/// them): the cadence `checkpoint_every_n_tokens = c` is 0 (none) or a positive multiple of the
/// chunk.
fn checkpoint_cadence(f: &GdnFacts, _: &Target) -> Option<String> {
    let c = f.checkpoint_every;
    (c > 0 && c % CKPT_GRAIN != 0).then(|| {
        format!(
            "checkpoint_every_n_tokens must be a positive multiple of {CKPT_GRAIN} (the kernels' \
             chunk: checkpoints are the states entering chunks); got {c}"
        )
    })
}

/// `state_checkpoints` is in the io dtype or fp32 (spec §2.2).
fn checkpoint_dtype(f: &GdnFacts, _: &Target) -> Option<String> {
    let p = f.port("state_checkpoints")?;
    (p.dtype != f.io && p.dtype != DataType::Float).then(|| {
        format!(
            "state_checkpoints must be FLOAT or the io dtype {}; got {}",
            f.io.name(),
            p.dtype.name()
        )
    })
}

/// Checkpoints with a `state_indices` pool are refused (spec §9.4 item 7).
fn checkpoints_without_pool(f: &GdnFacts, _: &Target) -> Option<String> {
    (f.checkpoint_every > 0 && f.port("state_indices").is_some()).then(|| {
        "state checkpoints (checkpoint_every_n_tokens > 0) with a state_indices pool are not \
         supported"
            .to_owned()
    })
}

/// `chunk_factors` (dnnplan's saved factors, session 37, [`super::chunk_factors`]): the slim
/// factors' path (K = V = 128), UINT8 bytes of `[rows ≥ max(T / 64 + N, 1), HO,
/// gdn_chunk_factor_bytes(V, c)]`; a backward's state checkpoints beside them only as the
/// forward writes them at `c = 64` (the saved replay, session 38: reused, io dtype).
fn chunk_factors_port(f: &GdnFacts, _: &Target) -> Option<String> {
    let p = f.port("chunk_factors")?;
    if !FwdFactors::applies(f) {
        return Some(format!(
            "chunk_factors needs K = V = 128 (the slim factors it saves); got K = {}, V = {}",
            f.k, f.v
        ));
    }
    if f.batch_invariant {
        return Some(
            "chunk_factors is not served with batch_invariant (the batch-invariant backward runs \
             the full form's prep, which the saved slim factors do not replace)"
                .to_owned(),
        );
    }
    let rows = gdn_chunk_factor_rows(f.total_tokens, f.n_seqs);
    let bytes = gdn_chunk_factor_bytes(f.v, f.checkpoint_every);
    let fits =
        p.dims.len() == 3 && p.dims[0] >= rows && p.dims[1] == f.heads.3 && p.dims[2] == bytes;
    if p.dtype != DataType::Uint8 || !fits {
        return Some(format!(
            "chunk_factors must be UINT8 [{rows}, {}, {bytes}] (max(T / 64 + N, 1) chunk slots, \
             HO heads, bytes per slot and head at checkpoint_every_n_tokens = {}); got {} {:?}",
            f.heads.3,
            f.checkpoint_every,
            p.dtype.name(),
            p.dims
        ));
    }
    // The plan lays the regions out over the declared rows ([`chunk_factors_of`]): a buffer of more
    // bytes than an i64 holds would wrap their offsets.
    if factor_buffer_bytes(p.dims[0], f.heads.3, bytes).is_none() {
        return Some(format!(
            "chunk_factors {:?} holds more than 2^63 - 1 bytes (its regions' offsets would \
             overflow)",
            p.dims
        ));
    }
    // The saved replay's rows are the io states entering every chunk: a forward writing them in
    // another dtype beside the factors would save U tiles no backward can pair with them.
    let rows_io = f.port("state_checkpoints").is_none_or(|c| c.dtype == f.io);
    let pairs = match f.op {
        GdnOp::Backward => {
            f.port("state_checkpoints").is_none()
                || super::backward::checkpoint_use(f) == super::backward::CheckpointUse::Reuse
        }
        _ => f.checkpoint_every != 64 || rows_io,
    };
    if !pairs {
        return Some(format!(
            "chunk_factors with state_checkpoints needs the forward's own checkpoints: the io \
             dtype ({}) at checkpoint_every_n_tokens = 64 with a row per chunk (the saved \
             replay); got checkpoint_every_n_tokens = {}, {} rows {:?}",
            f.io.name(),
            f.checkpoint_every,
            f.port("state_checkpoints").map_or("no", |c| c.dtype.name()),
            f.port("state_checkpoints")
                .map(|c| c.dims.clone())
                .unwrap_or_default()
        ));
    }
    None
}

/// The bytes of a `chunk_factors` buffer of `rows` chunk slots, `ho` heads and `per_unit` bytes
/// per (slot, head) (`None` beyond `i64::MAX`, the most bytes the pack layer binds).
fn factor_buffer_bytes(rows: i64, ho: i64, per_unit: i64) -> Option<u64> {
    let bytes = rows.checked_mul(ho)?.checked_mul(per_unit)?;
    u64::try_from(bytes).ok()
}

fn packed_ports(f: &GdnFacts, _: &Target) -> Option<String> {
    f.ports
        .iter()
        .find(|(_, p)| !p.packed)
        .map(|(name, _)| format!("port {name} must be packed row-major"))
}

/// One bound of the kernels' 32-bit index arithmetic: a count of the node's shape and the largest
/// value every kernel addresses without overflow ([`INDEX_LIMITS`]).
#[derive(Clone, Copy, Debug)]
pub struct IndexLimit {
    /// The count (the decline names it).
    pub what: &'static str,
    /// Its value for the facts (saturating: a shape beyond `u64` exceeds, never wraps).
    pub value: fn(&GdnFacts) -> u64,
    /// The largest value served.
    pub max: u64,
    /// The kernel arithmetic that bounds it.
    pub why: &'static str,
}

/// The headroom below 2^31 that [`MAX_UNITS`] leaves: the kernels' grid-stride loops over
/// (chunk slot, head) units (the overlap's flag zeroing in `gdn_fwd_chunk_order` /
/// `gdn_bwd_chunk_order_rev`, 1,024 threads; the persistent slim prep, its grid) step their
/// 32-bit `int` index once past the last unit before the loop test, so the last unit plus the step
/// must stay below 2^31.
pub const UNIT_LOOP_HEADROOM: u64 = 1 << 20;

/// The most (chunk slot, output head) units `(T / 64 + N) · HO` a plan serves: every kernel
/// indexes a unit `c · HO + h` in 32-bit `int` somewhere (the overlap's flags, the persistent
/// prep's tiles, the token stage's grid), with [`UNIT_LOOP_HEADROOM`] to spare.
pub const MAX_UNITS: u64 = (1 << 31) - UNIT_LOOP_HEADROOM;

/// The largest total token count `T` (spec §6: `total_T < 2^31`): token offsets into the chunk
/// table and the tensor maps' token coordinates are signed 32-bit.
pub const MAX_TOKENS: u64 = (1 << 31) - 1;

/// The largest launch-grid y / z dimension: output heads and sequences each index one.
pub const MAX_GRID_YZ: u64 = 65_535;

/// A forced piece count (`DNNPLAN_GDN_FWD_PIECES`, `DNNPLAN_GDN_BWD_PIECES`: diagnostics) as a
/// plan may launch it: within 1..=64, and at most the count whose widest grid z — `blocks(P)`
/// of `n_seqs` sequences per piece layer (the forward's passes `N·P`, the backward's summaries
/// `N·(2P − 1)`) — stays within [`MAX_GRID_YZ`], so that a forced cut never fails at launch.
pub fn forced_piece_count(value: u64, n_seqs: i64, blocks: impl Fn(u64) -> u64) -> u64 {
    let n = count(n_seqs).max(1);
    (1..=value.clamp(1, 64))
        .rev()
        .find(|&p| n.saturating_mul(blocks(p)) <= MAX_GRID_YZ)
        .unwrap_or(1)
}

/// A count of the facts (0 for a negative one).
fn count(x: i64) -> u64 {
    x.max(0) as u64
}

/// The chunk-slot units `(T / 64 + N) · HO` of `f` (saturating).
pub fn chunk_units(f: &GdnFacts) -> u64 {
    max_chunks(count(f.n_seqs), count(f.total_tokens)).saturating_mul(count(f.heads.3))
}

/// The kernels' index limits, in the order their reasons are reported (rules as data: the support
/// rule `index_range`'s and every plan's own check's, [`index_limits`]).
pub const INDEX_LIMITS: [IndexLimit; 4] = [
    IndexLimit {
        what: "T (total tokens)",
        value: |f| count(f.total_tokens),
        max: MAX_TOKENS,
        why: "token offsets and the tensor maps' token coordinates are signed 32-bit",
    },
    IndexLimit {
        what: "(T / 64 + N) · HO (chunk-slot units)",
        value: chunk_units,
        max: MAX_UNITS,
        why: "the kernels index (chunk slot, head) units in 32-bit int, with 2^20 of headroom \
              for the grid-stride loops over them",
    },
    IndexLimit {
        what: "HO (output heads)",
        value: |f| count(f.heads.3),
        max: MAX_GRID_YZ,
        why: "the heads index a launch grid's y dimension",
    },
    IndexLimit {
        what: "N (sequences)",
        value: |f| count(f.n_seqs),
        max: MAX_GRID_YZ,
        why: "the sequences index a launch grid's y or z dimension",
    },
];

/// The first of [`INDEX_LIMITS`] that `f` exceeds, as a reason naming the count and the limit.
pub fn index_limits(f: &GdnFacts) -> Option<String> {
    INDEX_LIMITS.iter().find_map(|l| {
        let value = (l.value)(f);
        (value > l.max).then(|| {
            format!(
                "{} = {value} exceeds the kernels' limit {} ({})",
                l.what, l.max, l.why
            )
        })
    })
}

fn index_range(f: &GdnFacts, _: &Target) -> Option<String> {
    index_limits(f)
}

/// [`index_limits`] as a plan's own check: every count a plan puts into the kernels' 32-bit
/// fields and grids fits (the support rules checked it before a build; a plan made without them,
/// as [`planned_launches`] makes one, is refused here instead of truncating a count).
pub(super) fn check_index_limits(f: &GdnFacts) -> Result<()> {
    match index_limits(f) {
        Some(why) => Err(Error::NotSupported(format!(
            "{ENGINE_NAME}: node {}: {why}",
            f.node
        ))),
        None => Ok(()),
    }
}

/// One dim of a port as the kernels address it ([`PORT_DIMS`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PortDim {
    /// Total tokens `T`.
    T,
    /// Sequences `N`.
    N,
    /// `N + 1` (the offsets).
    NPlus1,
    /// q heads `H`.
    H,
    /// k heads `HK`.
    Hk,
    /// v heads `HV`.
    Hv,
    /// Output heads `HO`.
    Ho,
    /// Key head dim `K`.
    K,
    /// Value head dim `V`.
    V,
    /// A state tensor's rows: `N`, or any count under a `state_indices` pool (its rows are named
    /// by the indices, spec §6).
    StateRows,
}

/// Every port the kernels address by the node's shape alone, with the dims they address (spec
/// §2.2; the analyzer takes `T`, `H`, `K` from q, `HK` from k, `HV`, `V` from v, `N` from
/// `cu_seqlens`): a port declared smaller would be read or written past its end, so any other
/// dims decline (the support rule `port_dims`). The IR infers the outputs' dims from the inputs'
/// (a gradient is declared like its primal), so the inputs' rows here also bound what the
/// backward writes. `state_checkpoints` and `chunk_factors` have their own rules
/// (`checkpoint_use` of the backward, `chunk_factors_port`).
pub const PORT_DIMS: [(&str, &[PortDim]); 22] = {
    use PortDim::*;
    [
        ("q", &[T, H, K]),
        ("k", &[T, Hk, K]),
        ("v", &[T, Hv, V]),
        ("g", &[T, Ho]),
        ("beta", &[T, Ho]),
        ("cu_seqlens", &[NPlus1]),
        ("initial_state", &[StateRows, Ho, V, K]),
        ("state_indices", &[N]),
        ("a_log", &[Ho]),
        ("dt_bias", &[Ho]),
        ("dO", &[T, Ho, V]),
        ("d_final_state", &[N, Ho, V, K]),
        ("O", &[T, Ho, V]),
        ("final_state", &[StateRows, Ho, V, K]),
        ("dQ", &[T, H, K]),
        ("dK", &[T, Hk, K]),
        ("dV", &[T, Hv, V]),
        ("dG", &[T, Ho]),
        ("dBeta", &[T, Ho]),
        ("d_initial_state", &[N, Ho, V, K]),
        ("d_a_log", &[Ho]),
        ("d_dt_bias", &[Ho]),
    ]
};

impl PortDim {
    /// The dim's name in a decline.
    pub fn name(self) -> &'static str {
        match self {
            PortDim::T => "T",
            PortDim::N => "N",
            PortDim::NPlus1 => "N + 1",
            PortDim::H => "H",
            PortDim::Hk => "HK",
            PortDim::Hv => "HV",
            PortDim::Ho => "HO",
            PortDim::K => "K",
            PortDim::V => "V",
            PortDim::StateRows => "N (or the pool's rows)",
        }
    }

    /// The extent the kernels address for `f` (`None`: any, a pool's rows).
    fn extent(self, f: &GdnFacts) -> Option<i64> {
        let (h, hk, hv, ho) = f.heads;
        match self {
            PortDim::T => Some(f.total_tokens),
            PortDim::N => Some(f.n_seqs),
            PortDim::NPlus1 => Some(f.n_seqs + 1),
            PortDim::H => Some(h),
            PortDim::Hk => Some(hk),
            PortDim::Hv => Some(hv),
            PortDim::Ho => Some(ho),
            PortDim::K => Some(f.k),
            PortDim::V => Some(f.v),
            PortDim::StateRows if f.port("state_indices").is_some() => None,
            PortDim::StateRows => Some(f.n_seqs),
        }
    }
}

/// The dims the kernels address `port` at for `f` (a pool's rows: the declared ones), `None`
/// when [`PORT_DIMS`] has no row for it.
pub fn expected_dims(f: &GdnFacts, port: &str, declared: &[i64]) -> Option<Vec<i64>> {
    Some(extents(f, port_dim_row(port)?, declared))
}

/// `port`'s row of [`PORT_DIMS`].
fn port_dim_row(port: &str) -> Option<&'static [PortDim]> {
    PORT_DIMS.iter().find(|(p, _)| *p == port).map(|(_, d)| *d)
}

/// The extents of `dims` for `f`, a pool's rows as `declared` has them.
fn extents(f: &GdnFacts, dims: &[PortDim], declared: &[i64]) -> Vec<i64> {
    dims.iter()
        .enumerate()
        .map(|(i, d)| {
            d.extent(f)
                .unwrap_or_else(|| declared.get(i).copied().unwrap_or(1).max(1))
        })
        .collect()
}

/// Every bound port has the dims the kernels address ([`PORT_DIMS`]).
fn port_dims(f: &GdnFacts, _: &Target) -> Option<String> {
    f.ports.iter().find_map(|(name, p)| {
        let dims = port_dim_row(name)?;
        let want = extents(f, dims, &p.dims);
        (p.dims != want).then(|| {
            let names = dims.iter().map(|x| x.name()).collect::<Vec<_>>().join(", ");
            format!(
                "port {name} must have the dims the kernels address, [{names}] = {want:?}; got \
                 {:?} (a smaller port would be read or written past its end)",
                p.dims
            )
        })
    })
}

/// The engine (stateless).
pub struct GdnSm90;

impl Engine for GdnSm90 {
    fn check_support(&self, q: &SupportQuery<'_>) -> Result<()> {
        let f = q.facts_as::<GdnFacts>()?;
        match SUPPORT_RULES.iter().find_map(|rule| rule(f, q.target)) {
            Some(reason) => Err(q.decline(reason)),
            None => Ok(()),
        }
    }

    fn build_plan(&self, cx: &BuildContext<'_>, _knobs: &Knobs) -> Result<Box<dyn CompiledPlan>> {
        let facts = cx
            .facts
            .and_then(|f| f.downcast_ref::<GdnFacts>())
            .ok_or_else(|| Error::Internal(format!("{}: built without GDN facts", cx.engine)))?;
        let Some(dev) = cx.target.device.as_ref().filter(|d| d.ordinal >= 0) else {
            return Err(
                cx.decline("building needs a real CUDA device (the target is hypothetical)")
            );
        };
        let info = probe::driver()
            .map_err(|e| Error::CudaUnavailable(e.to_string()))?
            .devices
            .iter()
            .find(|d| d.ordinal == dev.ordinal)
            .cloned()
            .ok_or_else(|| Error::NotFound {
                what: "CUDA device",
                key: dev.ordinal.to_string(),
            })?;
        let tag = if facts.io == DataType::Bfloat16 {
            "bf16"
        } else {
            "f16"
        };
        if facts.op == GdnOp::Backward {
            let module = compile_or_load("gdn_bwd", &info, &[])?;
            let k = facts.k;
            let names = super::backward::kernel_names(tag, k, PrepVariant::from_env());
            let mut fns = Vec::with_capacity(names.len());
            for n in &names {
                fns.push(module.function(n)?);
            }
            // SAFETY: the default-stream sentinel is always valid.
            let launcher = unsafe { Launcher::bind(std::ptr::null_mut(), Some(dev.ordinal)) }?;
            for f in &fns {
                launcher.prepare(f)?;
            }
            // The slim form's preps (sessions 28, 29, 32, 35; K = 128): each whose row asks for
            // the largest carveout gets it (prep15sl: 5 blocks per SM; the prep16sl forms).
            for kernel in super::backward::BwdKernel::ALL {
                if let (Some(row), Some(f)) = (kernel.slim_prep_pass(), fns.get(kernel as usize))
                    && k == 128
                    && row.max_carveout
                {
                    f.prefer_max_shared_memory(dev.ordinal)?;
                }
            }
            // The split reverse scan (session 29, K = 128): two blocks of 110,592 B per SM need
            // the largest carveout.
            if let Some(split) = fns.get(super::backward::BwdKernel::DscanOv2GxSh as usize)
                && k == 128
            {
                split.prefer_max_shared_memory(dev.ordinal)?;
            }
            return Ok(Box::new(GdnBwdPlan::new(
                facts,
                fns,
                info.sm_count.max(1) as u64,
            )?));
        }
        let k = facts.k;
        let sms = info.sm_count.max(1) as u64;
        let choice = FwdChoice::pick(facts, sms);
        if let Some(form) = super::fused16::fused16_form(facts, sms, &choice) {
            // The one-pass forward (sessions 48-49): one kernel, no workspace.
            let module = compile_or_load("gdn_fused16", &info, &[])?;
            let kernel = module.function(&form.entry(tag))?;
            // SAFETY: the default-stream sentinel is always valid.
            let launcher = unsafe { Launcher::bind(std::ptr::null_mut(), Some(dev.ordinal)) }?;
            launcher.prepare(&kernel)?;
            if form.per_sm > 1 {
                kernel.prefer_max_shared_memory(dev.ordinal)?;
            }
            return Ok(Box::new(super::fused16::GdnFused16Plan::new(
                facts, form, kernel,
            )?));
        }
        let module = compile_or_load("gdn_fwd", &info, &[])?;
        let kernels = FwdKernels::named(&choice, tag, k).try_map(|n| module.function(n))?;
        // Resolve the kernels and raise their shared-memory limits once, here, in the context
        // the device's default stream implies (execute re-does it only for another context).
        // SAFETY: the default-stream sentinel is always valid.
        let launcher = unsafe { Launcher::bind(std::ptr::null_mut(), Some(dev.ordinal)) }?;
        for f in kernels.all() {
            launcher.prepare(f)?;
        }
        if choice.prep_pass().max_carveout {
            // The slim preps: the blocks of their launch bounds (uncut and piece path), and with
            // the overlap two prep blocks beside one scan block on every SM the prep reaches first
            // (fwd_overlap).
            kernels.prep.prefer_max_shared_memory(dev.ordinal)?;
        }
        if choice.overlap {
            kernels.scan.prefer_max_shared_memory(dev.ordinal)?;
        }
        Ok(Box::new(GdnFwdPlan::new(facts, choice, kernels, sms)?))
    }
}

/// The forward's schedule: scan kernel, pieces per sequence, launches kept.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FwdChoice {
    /// State-scan kernel.
    pub scan: ScanVariant,
    /// The piece summary pass (runs only with `pieces > 1`).
    pub sum: SumVariant,
    /// Pieces per sequence (1 = no piece chain).
    pub pieces: u64,
    /// Launch only the first `steps` kernels (diagnostics; `usize::MAX` = all).
    pub steps: usize,
    /// The per-chunk factor kernel.
    pub prep: PrepVariant,
    /// The piece chain's body (`DNNPLAN_GDN_CHAIN`).
    pub chain: ChainVariant,
    /// The chunk factors (`DNNPLAN_GDN_FWD_FACTORS`).
    pub factors: FwdFactors,
    /// The uncut slim prep and output scan at the same time ([`super::fwd_overlap`],
    /// `DNNPLAN_GDN_FWD_OVERLAP`): `gdn_fwd_chunk_order`, the persistent prep `..._ov`, the scan
    /// `..._w4ov` launched programmatic.
    pub overlap: bool,
    /// The overlapped kernels one after the other, the scan launched normally
    /// (`DNNPLAN_GDN_FWD_OVERLAP=seq`, a diagnostic; only with `overlap`).
    pub sequential: bool,
    /// How much of the uncut slim scan's step runs on wgmma ([`SLIM_SCAN_W4GS`]: the products,
    /// 4 warps; [`SLIM_SCAN_W4GX`], [`SLIM_SCAN_W8GX`]: the whole step): [`SLIM_SCAN_WGMMA_BY_RULE`],
    /// or what `DNNPLAN_GDN_FWD_SCAN` forces (any other forced scan: none).
    pub scan_wgmma: WgmmaDepth,
    /// How much of the slim piece path's passes runs on wgmma ([`SLIM_PIECES_WG`]: the products,
    /// [`SLIM_PIECES_WGX`]: the whole step): [`SLIM_PIECE_WGMMA_BY_RULE`], or
    /// `DNNPLAN_GDN_FWD_PIECE` (`gx`, `gs`, `d`).
    pub piece_wgmma: WgmmaDepth,
    /// How the uncut slim prep forms its products (`DNNPLAN_GDN_FWD_SLIMPREP`; default
    /// [`SlimPrepProducts::by_rule`] of the batch's sequence count).
    pub slim_prep: SlimPrepProducts,
    /// Whether the slim wgmma piece path runs its first piece early ([`SLIM_PIECES_FIRST`]:
    /// [`SLIM_PIECE_FIRST_BY_RULE`] or `DNNPLAN_GDN_FWD_PIECE_FIRST`); it applies only there
    /// ([`FwdChoice::first_early`]).
    pub piece_first: bool,
    /// The first piece's length there, in 1/256 of the even piece (0: the even cut;
    /// [`FwdChoice::rule_first_scale`] or `DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE`).
    pub first_scale: i32,
    /// There, the first piece's output scan: a row of [`SLIM_FIRST_SCANS`]
    /// ([`SLIM_FIRST_SCAN_BY_RULE`] or `DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN`).
    pub first_scan: usize,
    /// There, the summary beside the first piece: a row of [`SLIM_FIRST_SUMS`]
    /// ([`SLIM_FIRST_SUM_BY_RULE`] or `DNNPLAN_GDN_FWD_PIECE_FIRST_SUM`).
    pub first_sum: usize,
    /// There, whether the other pieces' scan fits in one wave at one block per SM
    /// ([`PieceFirstRow::rest_in_one_wave`]: [`PieceFirstRow::rest_wave`] runs, else
    /// [`PieceFirstRow::rest`]).
    pub rest_wave: bool,
    /// Whether the output scans also save each chunk's `U` tile into `chunk_factors` (session
    /// 38: the node saves the factors and checkpoints every chunk; [`FwdChoice::saves_u_tiles`]).
    pub save_u: bool,
}

impl FwdChoice {
    /// The default schedule for `f` on a GPU of `sms` multiprocessors, then the diagnostics'
    /// overrides (`DNNPLAN_GDN_FWD_PIECES`: the scan then follows the cut as in
    /// [`FwdChoice::default_for`]; `DNNPLAN_GDN_FWD_SCAN`, `DNNPLAN_GDN_FWD_SUM`,
    /// `DNNPLAN_GDN_FWD_STEPS`).
    pub fn pick(f: &GdnFacts, sms: u64) -> FwdChoice {
        let env = |name: &str| std::env::var(name).ok();
        let first_switch = env("DNNPLAN_GDN_FWD_PIECE_FIRST");
        let first = piece_first_switch(first_switch.as_deref());
        let mut c = FwdChoice::default_with(f, sms, first);
        let forced_pieces = env("DNNPLAN_GDN_FWD_PIECES").is_some();
        if let Some(p) = env("DNNPLAN_GDN_FWD_PIECES").and_then(|x| x.parse::<u64>().ok()) {
            c.pieces = forced_piece_count(p, f.n_seqs, |p| p);
            c.scan = if c.pieces > 1 {
                piece_path(f).0
            } else {
                uncut_scan(f, sms)
            };
        }
        let (forced_scan, depth) = scan_switch(env("DNNPLAN_GDN_FWD_SCAN").as_deref(), f.k);
        if let Some(scan) = forced_scan {
            (c.scan, c.scan_wgmma) = (scan, depth);
        }
        if let Some(depth) = piece_switch(env("DNNPLAN_GDN_FWD_PIECE").as_deref()) {
            c.piece_wgmma = depth;
        }
        if let Some(sum) = env("DNNPLAN_GDN_FWD_SUM").and_then(|x| SumVariant::from_switch(&x, f.k))
        {
            c.sum = sum;
        }
        if let Some(n) = env("DNNPLAN_GDN_FWD_STEPS").and_then(|x| x.parse::<usize>().ok()) {
            c.steps = n;
        }
        c.prep = PrepVariant::from_env();
        c.chain = ChainVariant::from_env();
        c.slim_prep =
            SlimPrepProducts::from_switch_at(env("DNNPLAN_GDN_FWD_SLIMPREP").as_deref(), f.n_seqs);
        c.first_scan = first_scan_switch(env("DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN").as_deref());
        c.first_sum = first_sum_switch(env("DNNPLAN_GDN_FWD_PIECE_FIRST_SUM").as_deref());
        c.first_scale = c.rule_first_scale();
        if let Some(s) =
            env("DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE").and_then(|x| x.parse::<i32>().ok())
        {
            c.first_scale = s.clamp(0, 4096);
        }
        let wanted = env("DNNPLAN_GDN_FWD_FACTORS")
            .as_deref()
            .and_then(FwdFactors::from_switch)
            .unwrap_or(FwdFactors::default_for(c.pieces));
        c.factors = FwdFactors::resolve(wanted, f);
        // A forced piece pass (`DNNPLAN_GDN_FWD_PIECE=gs|d`, full factors) leaves the first-early
        // path: the piece count then is the default path's (unless forced).
        if first && !c.first_early() && c.pieces > 1 && !forced_pieces {
            c.pieces = FwdChoice::default_with(f, sms, false).pieces;
        }
        // `2`: the other pieces' scan always on PieceFirstRow::rest (a diagnostic).
        c.rest_wave = first_switch.as_deref() != Some("2") && c.rest_in_one_wave(f, sms);
        // A forced output scan runs as asked unless the overlap is forced too.
        let overlap_switch = env("DNNPLAN_GDN_FWD_OVERLAP");
        c.overlap = c.overlap_pick(f, sms, overlap_switch.as_deref(), forced_scan.is_none());
        c.sequential = c.overlap && fwd_overlap::sequential(overlap_switch.as_deref());
        if f.port("chunk_factors").is_some() {
            c.save_chunk_factors();
            // With the state entering every chunk checkpointed, the replay's other output too.
            c.save_u = f.checkpoint_every == super::params::CHUNK as i64;
        }
        c
    }

    /// This schedule saving the backward's factors (the forward binds `chunk_factors`, session
    /// 37): the slim prep's saving twin ([`SlimPrepProducts::saving`]); the scans and the cut
    /// stay as chosen. Only the slim factors without the prep ∥ scan overlap run it
    /// ([`FwdChoice::saves_chunk_factors`]; the overlap's persistent prep and the full factors'
    /// preps do not save them).
    pub fn save_chunk_factors(&mut self) {
        self.slim_prep = self.slim_prep.saving();
    }

    /// Whether this schedule's prep saves the backward's factors (and, with
    /// [`FwdChoice::save_u`], its output scans the `U` tiles: [`FwdChoice::saves_u_tiles`]).
    pub fn saves_chunk_factors(&self) -> bool {
        self.slim_prep.saves()
            && self.prep_pass() == self.slim_prep.pass(SLIM_PREP)
            && (!self.save_u || self.saves_u_tiles())
    }

    /// Whether every output scan this schedule launches has its U-saving twin
    /// ([`SAVE_U_SCANS`]) and [`FwdChoice::save_u`] asks for them.
    pub fn saves_u_tiles(&self) -> bool {
        let has_twin = |p: FwdPass| p.stem == "slimscan" && SAVE_U_SCANS.contains(&p.suffix);
        self.save_u
            && self.factors == FwdFactors::Slim
            && !self.overlap
            && has_twin(self.scan_pass())
            && self.first_pass().is_none_or(has_twin)
    }

    /// Whether this schedule runs its prep and output scan at the same time
    /// ([`fwd_overlap::pick`]): only on the uncut slim path with room for the producer beside the
    /// scan, by `switch` (`DNNPLAN_GDN_FWD_OVERLAP`) or the rule.
    fn overlap_pick(&self, f: &GdnFacts, sms: u64, switch: Option<&str>, by_rule: bool) -> bool {
        let applies = self.factors == FwdFactors::Slim
            && self.pieces == 1
            && fwd_overlap::prep_grid(f.k as u64, sms, 1, None) > 0;
        let (n, ho) = (f.n_seqs as u64, f.heads.3 as u64);
        let scan_blocks = n * ho * (f.v as u64 / 64);
        fwd_overlap::pick(applies, switch, by_rule, scan_blocks, n, sms)
    }

    /// Whether a kernel of this schedule reads the tensor maps ([`tma_maps::IO_MAP_READERS`]) at
    /// K = `k`.
    pub fn reads_io_maps(&self, k: i64) -> bool {
        !self.io_maps_read(k).is_empty()
    }

    /// The tensor maps this schedule's kernels read at K = `k` (the plan encodes only these).
    pub fn io_maps_read(&self, k: i64) -> tma_maps::IoMapSet {
        FwdKernels::named(self, "bf16", k)
            .all()
            .into_iter()
            .fold(tma_maps::IoMapSet::NONE, |a, e| {
                a.union(tma_maps::io_maps_read(e))
            })
    }

    /// The chunk-table entry: `gdn_fwd_chunk_order` (also zeroes the hand-over flags and writes
    /// the scan's chunk order) when the schedule overlaps, else `gdn_chunk_offsets`.
    pub fn offsets_name(&self) -> &'static str {
        if self.overlap {
            "gdn_fwd_chunk_order"
        } else {
            "gdn_chunk_offsets"
        }
    }

    /// The (prep, output scan) entries of this schedule for io dtype `tag` and K = `k`.
    pub fn kernel_names(&self, tag: &str, k: i64) -> (String, String) {
        (
            self.prep_pass().pass.entry(tag, k),
            self.scan_pass().entry(tag, k),
        )
    }

    /// The prep this schedule runs: the [`PREP_VARIANTS`] row on the full factors, else the
    /// slim prep of its [`SLIM_SCANS`] row.
    pub fn prep_pass(&self) -> PrepPass {
        match self.factors {
            FwdFactors::Full => self.prep.row().pass,
            FwdFactors::Slim => self.slim_prep.pass(self.slim_scan().prep),
        }
    }

    /// Whether this schedule runs the slim piece path ([`SLIM_PIECES`]).
    pub fn slim_pieces(&self) -> bool {
        self.factors == FwdFactors::Slim && self.pieces > 1
    }

    /// Whether this schedule runs the slim wgmma piece path with its first piece early
    /// ([`SLIM_PIECES_FIRST`]): asked for ([`FwdChoice::piece_first`]) on [`SLIM_PIECES_WGX`].
    pub fn first_early(&self) -> bool {
        self.piece_first && self.slim_pieces() && self.piece_wgmma == WgmmaDepth::Step
    }

    /// The slim piece passes this schedule runs when cut, by [`FwdChoice::piece_wgmma`]:
    /// [`SLIM_PIECES_WGX`], [`SLIM_PIECES_WG`] or [`SLIM_PIECES`].
    pub fn slim_piece_row(&self) -> &'static SlimPieceRow {
        match self.piece_wgmma {
            WgmmaDepth::Step
            | WgmmaDepth::StepSplit
            | WgmmaDepth::StepSplitAll
            | WgmmaDepth::StepTmaO
            | WgmmaDepth::StepTmaIo
            | WgmmaDepth::StepTmaOFirst => &SLIM_PIECES_WGX,
            WgmmaDepth::Products => &SLIM_PIECES_WG,
            WgmmaDepth::Off => &SLIM_PIECES,
        }
    }

    /// The row of [`SLIM_SCANS`] this schedule runs on slim factors: the first that applies.
    pub fn slim_scan(&self) -> &'static SlimScanRow {
        let warps = self.scan.row().warps;
        SLIM_SCANS
            .iter()
            .find(|r| match r.used {
                SlimScanUse::PiecesWgmma(d) => self.pieces > 1 && self.piece_wgmma == d,
                SlimScanUse::Pieces => self.pieces > 1,
                SlimScanUse::Overlap => self.overlap,
                SlimScanUse::Wgmma(d, w) => self.scan_wgmma == d && w == warps,
                SlimScanUse::Uncut(w) => w == warps,
            })
            .unwrap_or(&SLIM_SCANS[SLIM_SCANS.len() - 1])
    }

    /// The output scan this schedule runs: the full factors' [`FWD_SCANS`] row, else the slim
    /// row of [`SLIM_SCANS`].
    pub fn scan_pass(&self) -> FwdPass {
        match self.factors {
            FwdFactors::Full => self.scan.row().pass(),
            FwdFactors::Slim if self.first_early() && self.rest_wave => SLIM_PIECES_FIRST.rest_wave,
            FwdFactors::Slim if self.first_early() => SLIM_PIECES_FIRST.rest,
            FwdFactors::Slim => self.slim_scan().scan,
        }
    }

    /// The output scan of the first piece alone, launched before the summary
    /// ([`SLIM_PIECES_FIRST`]), when [`FwdChoice::first_early`].
    pub fn first_pass(&self) -> Option<FwdPass> {
        self.first_early().then_some(self.first_scan_row().pass)
    }

    /// The row of [`SLIM_FIRST_SCANS`] named by [`FwdChoice::first_scan`] (out of range: the
    /// rule's).
    pub fn first_scan_row(&self) -> &'static FirstScanRow {
        SLIM_FIRST_SCANS
            .get(self.first_scan)
            .unwrap_or(&SLIM_FIRST_SCANS[SLIM_FIRST_SCAN_BY_RULE])
    }

    /// The first piece's length by rule for this schedule's first scan, summary and piece count:
    /// the summary row's [`FirstSumRow::scale_for`] where measured, else the first scan row's
    /// [`FirstScanRow::scale_at`].
    pub fn rule_first_scale(&self) -> i32 {
        self.first_sum_row()
            .scale_for(self.first_scan, self.pieces)
            .unwrap_or_else(|| self.first_scan_row().scale_at(self.pieces))
    }

    /// The row of [`SLIM_FIRST_SUMS`] named by [`FwdChoice::first_sum`] (out of range: the
    /// rule's).
    pub fn first_sum_row(&self) -> &'static FirstSumRow {
        SLIM_FIRST_SUMS
            .get(self.first_sum)
            .unwrap_or(&SLIM_FIRST_SUMS[SLIM_FIRST_SUM_BY_RULE])
    }

    /// The piece chain's entry for K = `k` (it runs only with `pieces > 1`): from seed 1 when
    /// [`FwdChoice::first_early`], else the [`ChainVariant`]'s.
    pub fn chain_kernel_name(&self, k: i64) -> String {
        if self.first_early() {
            format!("{}_k{k}", SLIM_PIECES_FIRST.chain_stem)
        } else {
            self.chain.fwd_name(k)
        }
    }

    /// The state rows per block of [`FwdChoice::chain_kernel_name`]'s chain.
    pub fn chain_rows(&self) -> u64 {
        if self.first_early() {
            SLIM_PIECES_FIRST.chain_rows
        } else {
            self.chain.rows
        }
    }

    /// The piece summary this schedule runs (with `pieces > 1`): the [`SLIM_FIRST_SUMS`] row
    /// when [`FwdChoice::first_early`], [`SLIM_PIECES`]' on the slim piece path, else the
    /// [`FWD_SUMS`] row.
    pub fn sum_pass(&self) -> FwdPass {
        if self.first_early() {
            self.first_sum_row().pass
        } else if self.slim_pieces() {
            self.slim_piece_row().sum
        } else {
            self.sum.row().pass()
        }
    }

    /// The piece summary's entry for io dtype `tag` and K = `k` (loaded with every plan; it runs
    /// only with `pieces > 1`).
    pub fn sum_kernel_name(&self, tag: &str, k: i64) -> String {
        self.sum_pass().entry(tag, k)
    }

    /// Warps per block of the output scan this schedule runs.
    pub fn scan_warps(&self) -> u64 {
        self.scan_pass().warps
    }

    /// The schedule without overrides: the uncut scan by [`FWD_SCAN_RULE`]; when the 4-warp
    /// blocks of the (sequence, head) pairs fill less than half the GPU, the sequences are long
    /// (≥ 8 chunks each on average) and `batch_invariant` is off, the piece path of
    /// [`FWD_PIECE_PATH`] with as many pieces as keep both of its passes in one wave:
    /// `P = min(⌊scan per_sm · SMs / scan blocks per piece⌋, 1 + ⌊sum per_sm · SMs / summary
    /// blocks per piece⌋)`, at most 16, with the blocks per SM of the passes that run (the slim
    /// ones of [`SLIM_PIECES`] where [`FwdFactors::PIECE_DEFAULT`] is slim and applies); the
    /// factors [`FwdFactors::default_for`] the piece count where they apply.
    /// With the first piece early ([`SLIM_PIECE_FIRST_BY_RULE`]) on the slim wgmma piece path,
    /// the piece count of [`SLIM_PIECES_FIRST`] ([`PieceFirstRow::pieces`]) instead.
    pub fn default_for(f: &GdnFacts, sms: u64) -> FwdChoice {
        FwdChoice::default_with(f, sms, SLIM_PIECE_FIRST_BY_RULE)
    }

    /// Whether this schedule runs its first piece early and the other pieces' scan fits in one
    /// wave ([`PieceFirstRow::rest_in_one_wave`], at [`uncut_scan_blocks`] blocks per piece).
    fn rest_in_one_wave(&self, f: &GdnFacts, sms: u64) -> bool {
        self.first_early()
            && SLIM_PIECES_FIRST.rest_in_one_wave(self.pieces, uncut_scan_blocks(f), sms)
    }

    /// [`FwdChoice::default_for`] with the first piece early or not (`first`).
    fn default_with(f: &GdnFacts, sms: u64, first: bool) -> FwdChoice {
        let pairs = f.n_seqs as u64 * f.heads.3 as u64;
        let blocks = uncut_scan_blocks(f);
        let avg_chunks = f.total_tokens as u64 / (64 * (f.n_seqs as u64).max(1));
        // batch_invariant: the pieces would depend on the batch (N), so never cut then.
        let cut = !f.batch_invariant && blocks > 0 && 2 * blocks <= sms && avg_chunks >= 8;
        let (piece_scan, piece_sum) = piece_path(f);
        let pieces = if cut {
            let slim = FwdFactors::resolve(FwdFactors::PIECE_DEFAULT, f) == FwdFactors::Slim;
            let (warps, scan_per_sm, sum_per_sm) = if slim {
                let r = &SLIM_PIECES;
                (r.scan.warps, r.scan_per_sm, r.sum_per_sm)
            } else {
                let (sr, mr) = (piece_scan.row(), piece_sum.row());
                (sr.warps, sr.per_sm, mr.per_sm)
            };
            let scan_blocks = pairs * (f.v as u64 / (16 * warps)); // per piece
            let sum_blocks = 2 * blocks; // per piece but the last: H and M blocks
            (scan_per_sm * sms / scan_blocks)
                .min(1 + sum_per_sm * sms / sum_blocks)
                .clamp(1, 16)
        } else {
            1
        };
        let scan = if pieces > 1 {
            piece_scan
        } else {
            uncut_scan(f, sms)
        };
        let mut c = FwdChoice {
            scan,
            sum: piece_sum,
            pieces,
            steps: usize::MAX,
            prep: PrepVariant::DEFAULT,
            chain: ChainVariant::DEFAULT,
            factors: FwdFactors::resolve(FwdFactors::default_for(pieces), f),
            overlap: false,
            sequential: false,
            scan_wgmma: SLIM_SCAN_WGMMA_BY_RULE,
            piece_wgmma: SLIM_PIECE_WGMMA_BY_RULE,
            slim_prep: SlimPrepProducts::by_rule(f.n_seqs),
            piece_first: first,
            first_scale: 0,
            first_scan: SLIM_FIRST_SCAN_BY_RULE,
            first_sum: SLIM_FIRST_SUM_BY_RULE,
            rest_wave: false,
            save_u: false,
        };
        if c.first_early() {
            c.pieces = SLIM_PIECES_FIRST.pieces(blocks, sms);
            if c.pieces < 2 {
                // Not cut after all: the uncut schedule.
                return FwdChoice::default_with(f, sms, false);
            }
            c.first_scale = c.rule_first_scale();
            c.rest_wave = c.rest_in_one_wave(f, sms);
        }
        c.overlap = c.overlap_pick(f, sms, None, true);
        c
    }
}

/// The largest first-piece length (in 1/256 of the even piece, [`FwdChoice::first_scale`]) the
/// first-early cut serves for `total_tokens` tokens in `pieces` pieces: the kernels'
/// `piece_range_first` forms `per · scale + 255` in 32-bit `int`, `per = ceil(n / P)` for a
/// sequence of `n ≤ ceil(T / 64)` chunks.
pub fn max_first_scale(total_tokens: u64, pieces: u64) -> i32 {
    let per = total_tokens
        .div_ceil(super::params::CHUNK)
        .div_ceil(pieces.max(1))
        .max(1);
    i32::try_from((i32::MAX as u64 - 255) / per).unwrap_or(i32::MAX)
}

/// The 4-warp output-scan blocks of one piece (or of the uncut scan): one per 64 value columns of
/// each (sequence, output head) pair.
fn uncut_scan_blocks(f: &GdnFacts) -> u64 {
    f.n_seqs as u64 * f.heads.3 as u64 * (f.v as u64 / 64)
}

/// `DNNPLAN_GDN_FWD_SCAN`'s value `value` at K = `k`: the forced scan (none: not forced) and how
/// much of its step runs on wgmma. A wgmma scan's suffix ([`SLIM_SCAN_W4GS`], [`SLIM_SCAN_W4GX`],
/// [`SLIM_SCAN_W4GXS`], [`SLIM_SCAN_W8GX`], [`SLIM_SCAN_W8GXS`], [`SLIM_SCAN_W4GXT`], ...) forces
/// the depth and width of the first uncut wgmma row of [`SLIM_SCANS`] that runs it (the full
/// scan of that many warps); any other scan's: that scan, no wgmma.
fn scan_switch(value: Option<&str>, k: i64) -> (Option<ScanVariant>, WgmmaDepth) {
    let Some(x) = value else {
        return (None, WgmmaDepth::Off);
    };
    let wgmma = SLIM_SCANS.iter().find_map(|r| match r.used {
        SlimScanUse::Wgmma(depth, warps) if r.scan.suffix == x => Some((depth, warps)),
        _ => None,
    });
    match wgmma {
        Some((depth, warps)) => {
            let full = FWD_SCANS.iter().find(|r| r.warps == warps);
            (
                full.and_then(|r| ScanVariant::from_switch(r.switch, k)),
                depth,
            )
        }
        None => (ScanVariant::from_switch(x, k), WgmmaDepth::Off),
    }
}

/// The uncut output scan of `f` by [`FWD_SCAN_RULE`] (4-warp blocks: two per pair at V = 128).
fn uncut_scan(f: &GdnFacts, sms: u64) -> ScanVariant {
    let blocks = f.n_seqs as u64 * f.heads.3 as u64 * (f.v as u64 / 64);
    FWD_SCAN_RULE
        .iter()
        .find(|(waves, scan)| blocks >= waves * sms && scan.row().serves(f.k))
        .map_or(ScanVariant::Warps4, |r| r.1)
}

/// The first row of [`FWD_PIECE_PATH`] whose kernels serve `f`'s K.
fn piece_path(f: &GdnFacts) -> (ScanVariant, SumVariant) {
    FWD_PIECE_PATH
        .iter()
        .copied()
        .find(|(scan, sum)| scan.row().serves(f.k) && sum.row().serves(f.k))
        .unwrap_or((ScanVariant::Warps4, SumVariant::Stages2))
}

/// The forward's resolved kernels (`F`: [`Function`] on the device; any type in the CPU tests).
struct FwdKernels<F = Function> {
    offsets: F,
    prep: F,
    /// The first piece's output scan ([`FwdChoice::first_pass`]; else the output scan again,
    /// resolved but not launched).
    first: F,
    scan: F,
    sum: F,
    chain: F,
}

impl FwdKernels<String> {
    /// The entries `choice` runs for io dtype `tag` and K = `k` (the summary and the chain are
    /// resolved with every plan; they run only with `pieces > 1`); the output scans' U-saving
    /// twins where [`FwdChoice::saves_u_tiles`].
    fn named(choice: &FwdChoice, tag: &str, k: i64) -> FwdKernels<String> {
        let (prep, scan) = choice.kernel_names(tag, k);
        let twin = |name: String| {
            if choice.saves_u_tiles() {
                format!("{name}_{SAVE_U_SUFFIX}")
            } else {
                name
            }
        };
        let scan = twin(scan);
        FwdKernels {
            offsets: choice.offsets_name().to_owned(),
            prep,
            first: choice
                .first_pass()
                .map_or_else(|| scan.clone(), |f| twin(f.entry(tag, k))),
            scan,
            sum: choice.sum_kernel_name(tag, k),
            chain: choice.chain_kernel_name(k),
        }
    }
}

impl<F> FwdKernels<F> {
    /// Every kernel, in launch order.
    fn all(&self) -> [&F; 6] {
        [
            &self.offsets,
            &self.prep,
            &self.first,
            &self.scan,
            &self.sum,
            &self.chain,
        ]
    }

    /// Each kernel through `resolve`, in launch order (the first error ends it).
    fn try_map<G>(&self, mut resolve: impl FnMut(&F) -> Result<G>) -> Result<FwdKernels<G>> {
        Ok(FwdKernels {
            offsets: resolve(&self.offsets)?,
            prep: resolve(&self.prep)?,
            first: resolve(&self.first)?,
            scan: resolve(&self.scan)?,
            sum: resolve(&self.sum)?,
            chain: resolve(&self.chain)?,
        })
    }
}

/// The launches of `f`'s plan (forward or backward) on `sms` SMs as execute makes them, by entry
/// name (grid, threads, dynamic shared memory, programmatic; the diagnostics' switches read as at
/// build; `tag`: the io dtype's entry tag, `bf16` or `f16`): the CPU tests' and the benchmark's
/// read-only view of a plan, without a device (the benchmark's per-kernel bytes and FLOPs follow
/// it, tests/support/gdn_counts.rs). Builds nothing, launches nothing.
pub fn planned_launches(
    f: &GdnFacts,
    sms: u64,
    tag: &str,
) -> Result<Vec<super::pdl::PlannedLaunch>> {
    check_index_limits(f)?;
    if f.op == GdnOp::Backward {
        let names = super::backward::kernel_names(tag, f.k, PrepVariant::from_env()).to_vec();
        return Ok(super::pdl::by_name(
            GdnBwdPlan::new(f, names, sms)?.launches(),
        ));
    }
    let choice = FwdChoice::pick(f, sms);
    if let Some(form) = super::fused16::fused16_form(f, sms, &choice) {
        let plan = super::fused16::GdnFused16Plan::new(f, form, form.entry(tag))?;
        return Ok(super::pdl::by_name(plan.launches()));
    }
    let plan = GdnFwdPlan::new(f, choice, FwdKernels::named(&choice, tag, f.k), sms)?;
    Ok(super::pdl::by_name(plan.launches()))
}

pub(super) fn kernel_dtype(dt: DataType, port: &str) -> Result<i32> {
    match dt {
        DataType::Float => Ok(KernelDtype::F32 as i32),
        DataType::Bfloat16 => Ok(KernelDtype::Bf16 as i32),
        DataType::Half => Ok(KernelDtype::F16 as i32),
        other => Err(Error::Internal(format!(
            "gdn_sm90: port {port} has unsupported dtype {}",
            other.name()
        ))),
    }
}

/// Uids of the ports a forward's execute reads (0 = not bound).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct PortUids {
    q: i64,
    k: i64,
    v: i64,
    g: i64,
    beta: i64,
    cu: i64,
    init: Option<i64>,
    idx: Option<i64>,
    a_log: Option<i64>,
    dt_bias: Option<i64>,
    o: i64,
    final_state: Option<i64>,
    checkpoints: Option<i64>,
}

impl PortUids {
    /// The forward ports of `f` (an internal error when a required one is unbound: the
    /// validator requires them).
    pub(super) fn of(f: &GdnFacts) -> Result<PortUids> {
        let need = |p: &str| -> Result<i64> {
            f.port(p)
                .map(|x| x.uid)
                .ok_or_else(|| Error::Internal(format!("gdn_sm90: port {p} is not bound")))
        };
        let uid = |p: &str| f.port(p).map(|x| x.uid);
        Ok(PortUids {
            q: need("q")?,
            k: need("k")?,
            v: need("v")?,
            g: need("g")?,
            beta: need("beta")?,
            cu: need("cu_seqlens")?,
            init: uid("initial_state"),
            idx: uid("state_indices"),
            a_log: uid("a_log"),
            dt_bias: uid("dt_bias"),
            o: need("O")?,
            final_state: uid("final_state"),
            checkpoints: uid("state_checkpoints"),
        })
    }

    /// `template` with the addresses of this call's buffers (`pack`) in its port fields.
    pub(super) fn addresses(&self, pack: &VariantPack, template: FwdParams) -> Result<FwdParams> {
        let addr = |uid: i64| -> Result<u64> { Ok(pack.ptr(pack.index_of(uid)?) as u64) };
        let opt = |uid: Option<i64>| -> Result<u64> { uid.map_or(Ok(0), addr) };
        Ok(FwdParams {
            q: addr(self.q)?,
            k: addr(self.k)?,
            v: addr(self.v)?,
            g: addr(self.g)?,
            beta: addr(self.beta)?,
            cu_seqlens: addr(self.cu)?,
            initial_state: opt(self.init)?,
            state_indices: opt(self.idx)?,
            a_log: opt(self.a_log)?,
            dt_bias: opt(self.dt_bias)?,
            o: addr(self.o)?,
            final_state: opt(self.final_state)?,
            ..template
        })
    }

    /// The bound ports, by name ([`GdnPlan::bound_ports`]).
    pub(super) fn bound(&self) -> Vec<(&'static str, i64)> {
        [
            ("q", Some(self.q)),
            ("k", Some(self.k)),
            ("v", Some(self.v)),
            ("g", Some(self.g)),
            ("beta", Some(self.beta)),
            ("cu_seqlens", Some(self.cu)),
            ("initial_state", self.init),
            ("state_indices", self.idx),
            ("a_log", self.a_log),
            ("dt_bias", self.dt_bias),
            ("O", Some(self.o)),
            ("final_state", self.final_state),
            ("state_checkpoints", self.checkpoints),
        ]
        .into_iter()
        .filter_map(|(name, uid)| Some((name, uid?)))
        .collect()
    }
}

/// A built forward plan: shape-specialised parameters, the workspace layout and the kernels
/// (`F`: the resolved kernels; any type in the CPU tests, which plan without a device).
pub struct GdnFwdPlan<F = Function> {
    template: FwdParams,
    uids: PortUids,
    layout: WorkspaceLayout,
    /// The rows of a `state_indices` pool ([`pool_rows`]; 0 without one).
    pool_rows: u64,
    pieces: PieceLayout,
    /// The overlapped forward's flags and chunk order (empty without overlap).
    overlap: OverlapLayout,
    /// The state checkpoints' cadence, dtype and row table (empty without checkpoints).
    ckpt: CkptLayout,
    choice: FwdChoice,
    grid_prep: (u32, u32, u32),
    /// The first piece's output scan ([`FwdChoice::first_pass`]; unused otherwise).
    grid_first: (u32, u32, u32),
    grid_scan: (u32, u32, u32),
    grid_sum: (u32, u32, u32),
    grid_chain: (u32, u32, u32),
    smem_prep: u32,
    prep_threads: u32,
    smem_scan: u32,
    /// The first piece's scan ([`FwdChoice::first_pass`]; 0 otherwise).
    smem_first: u32,
    smem_sum: u32,
    sum_threads: u32,
    scan_threads: u32,
    kernels: FwdKernels<F>,
    /// The launch chain (`DNNPLAN_GDN_PDL`, read at build).
    pdl: PdlMode,
    /// The tensor maps' shape when a kernel of the plan reads them ([`tma_maps`]), else `None`
    /// (no map is encoded).
    io_maps: Option<FwdIoMapShape>,
    /// The maps last encoded, by the addresses of q, k, v, o.
    io_cache: EncodedMaps<[u64; 4], GdnIoMaps>,
    /// The `chunk_factors` output's uid and layout when the forward saves them
    /// ([`super::chunk_factors`]), else `None`.
    factors: Option<(i64, ChunkFactorsLayout)>,
    /// The ports' base-address rules, settled at the first execute ([`super::port_guards`]).
    guards: std::sync::OnceLock<crate::pack::GuardTable>,
}

/// The rows of `f`'s `state_indices` pool: the initial state's, or the final state's when that
/// declares fewer (an index past either names no row: the kernels read it as none,
/// [`super::params::StateSource`]); 0 without a pool.
pub(super) fn pool_rows(f: &GdnFacts) -> u64 {
    if f.port("state_indices").is_none() {
        return 0;
    }
    ["initial_state", "final_state"]
        .into_iter()
        .filter_map(|port| f.port(port)?.dims.first().copied())
        .map(count)
        .min()
        .unwrap_or(0)
}

/// The bound `chunk_factors` port of `f` (uid, layout), `None` when unbound; an error naming the
/// port when it is bound but the plan's schedule does not run the kernels that write (`ready`
/// false: a forced overlap or full factors in the forward, another prep form in the backward).
pub(super) fn chunk_factors_of(
    f: &GdnFacts,
    ready: bool,
) -> Result<Option<(i64, ChunkFactorsLayout)>> {
    let Some(p) = f.port("chunk_factors") else {
        return Ok(None);
    };
    if !ready {
        return Err(Error::bad_param(
            "chunk_factors",
            format!(
                "node {}: this plan's schedule cannot use saved chunk factors: it runs another \
                 prep than the slim form's or, with checkpoints at every chunk, an output scan \
                 without a U-saving twin (a diagnostic switch forces the prep ∥ scan overlap, the \
                 full factors, another scan or another prep form: unset DNNPLAN_GDN_FWD_OVERLAP, \
                 DNNPLAN_GDN_FWD_FACTORS, DNNPLAN_GDN_FWD_SCAN, DNNPLAN_GDN_FWD_PIECE*, \
                 DNNPLAN_GDN_BWD_PREP, DNNPLAN_GDN_BWD_SLIMPREP)",
                f.node
            ),
        ));
    }
    let rows = p.dims.first().copied().unwrap_or(0).max(0);
    let per_unit = gdn_chunk_factor_bytes(f.v, f.checkpoint_every);
    if factor_buffer_bytes(rows, f.heads.3, per_unit).is_none() {
        return Err(Error::bad_param(
            "chunk_factors",
            format!(
                "node {}: {rows} chunk slots x {} heads x {per_unit} bytes exceed 2^63 - 1 bytes \
                 (the regions' offsets would overflow)",
                f.node, f.heads.3
            ),
        ));
    }
    let u_bytes = per_unit - GDN_CHUNK_FACTOR_BYTES;
    Ok(Some((
        p.uid,
        ChunkFactorsLayout::new(rows as u64, f.heads.3 as u64, u_bytes as u64),
    )))
}

/// The shape-specialised forward parameter block of `f` (addresses and workspace left 0).
pub(super) fn fwd_template(f: &GdnFacts) -> Result<FwdParams> {
    let need = |p: &str| -> Result<&PortFacts> {
        f.port(p)
            .ok_or_else(|| Error::Internal(format!("gdn_sm90: port {p} is not bound")))
    };
    let (h, hk, hv, ho) = f.heads;
    let mut fl = 0;
    for (on, bit) in [
        (f.use_qk_l2norm, flags::L2NORM),
        (f.use_beta_sigmoid, flags::BETA_SIGMOID),
        (f.allow_neg_eigval, flags::NEG_EIGVAL),
        (f.safe_gate, flags::SAFE_GATE),
        (f.linear_gate, flags::LINEAR_GATE),
    ] {
        if on {
            fl |= bit;
        }
    }
    let state_dt = STATE_PORTS
        .iter()
        .find_map(|p| f.port(p))
        .map_or(DataType::Float, |s| s.dtype);
    let chunks = max_chunks(f.n_seqs as u64, f.total_tokens as u64);
    Ok(FwdParams {
        cu_seqlens_i64: i32::from(need("cu_seqlens")?.dtype == DataType::Int64),
        n_seqs: f.n_seqs as i32,
        h: h as i32,
        hk: hk as i32,
        hv: hv as i32,
        ho: ho as i32,
        g_dtype: kernel_dtype(need("g")?.dtype, "g")?,
        beta_dtype: kernel_dtype(need("beta")?.dtype, "beta")?,
        state_dtype: kernel_dtype(state_dt, "initial_state")?,
        a_log_dtype: f
            .port("a_log")
            .map_or(Ok(0), |p| kernel_dtype(p.dtype, "a_log"))?,
        dt_bias_dtype: f
            .port("dt_bias")
            .map_or(Ok(0), |p| kernel_dtype(p.dtype, "dt_bias"))?,
        scale: f.effective_scale() as f32,
        flags: fl,
        max_chunks: chunks as i32,
        ..FwdParams::default()
    })
}

impl<F> GdnFwdPlan<F> {
    fn new(
        f: &GdnFacts,
        choice: FwdChoice,
        kernels: FwdKernels<F>,
        sms: u64,
    ) -> Result<GdnFwdPlan<F>> {
        check_index_limits(f)?;
        let ho = f.heads.3;
        let n = f.n_seqs as u64;
        let t = f.total_tokens as u64;
        let chunks = max_chunks(n, t);
        let scale_max = max_first_scale(t, choice.pieces);
        if choice.first_early() && choice.first_scale > scale_max {
            return Err(Error::NotSupported(format!(
                "{ENGINE_NAME}: node {}: the first piece at {}/256 of the even piece \
                 (DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE or the rule) exceeds {scale_max}/256 at T = \
                 {t}, {} pieces: the kernels' cut ceil(chunks / P) · scale + 255 is 32-bit",
                f.node, choice.first_scale, choice.pieces
            )));
        }
        let pdl = PdlMode::from_env();
        let mut template = fwd_template(f)?;
        template.flags |= pdl.param_flags() | seq_order_flags(f.n_seqs);
        let uids = PortUids::of(f)?;
        let (k, v) = (f.k as u64, f.v as u64);
        let p = choice.pieces;
        let (scan, sum) = (choice.scan_pass(), choice.sum_pass());
        let warps = scan.warps;
        let layout = (choice.factors.row().workspace)(n, t, ho as u64, k, v);
        let per_sm = std::env::var("DNNPLAN_GDN_FWD_OVERLAP_PER_SM")
            .ok()
            .and_then(|x| x.parse::<u64>().ok());
        let (grid_prep, prep_threads, smem_prep) = choice
            .prep_pass()
            .launch_shape(chunks, ho as u64, k, sms, per_sm);
        let pieces = PieceLayout::new(layout.total, n, ho as u64, k, v, p);
        let overlap = OverlapLayout::new(pieces.total, chunks, ho as u64, choice.overlap);
        let ckpt_f32 = f
            .port("state_checkpoints")
            .is_some_and(|c| c.dtype == DataType::Float);
        let every = if uids.checkpoints.is_some() {
            f.checkpoint_every.max(0) as u64
        } else {
            0
        };
        // With the first piece early (SLIM_PIECES_FIRST) the seeded scan and the summary skip it.
        let skip = u64::from(choice.first_early());
        Ok(GdnFwdPlan {
            template,
            uids,
            layout,
            pool_rows: pool_rows(f),
            pieces,
            overlap,
            ckpt: CkptLayout::new(overlap.total, n, t, every, ckpt_f32),
            choice,
            grid_prep,
            grid_first: ((v / (16 * warps)) as u32, ho as u32, n as u32),
            grid_scan: (
                (v / (16 * warps)) as u32,
                ho as u32,
                (n * (p - skip)) as u32,
            ),
            grid_sum: (
                (2 * v / 64) as u32,
                ho as u32,
                (n * p.saturating_sub(1 + skip)) as u32,
            ),
            grid_chain: ((v / choice.chain_rows()) as u32, ho as u32, n as u32),
            smem_prep,
            prep_threads,
            smem_scan: scan.smem_bytes(k),
            smem_first: choice.first_pass().map_or(0, |f| f.smem_bytes(k)),
            smem_sum: sum.smem_bytes(k),
            sum_threads: sum.threads(),
            scan_threads: scan.threads(),
            kernels,
            pdl,
            io_maps: {
                let read = choice.io_maps_read(f.k);
                (!read.is_empty())
                    .then(|| FwdIoMapShape::new(f).map(|s| s.reading(read)))
                    .transpose()?
            },
            factors: chunk_factors_of(f, choice.saves_chunk_factors())?,
            io_cache: EncodedMaps::new(),
            guards: std::sync::OnceLock::new(),
        })
    }

    /// The schedule this plan runs.
    pub fn choice(&self) -> FwdChoice {
        self.choice
    }

    /// The launches execute makes, in order: (kernel, grid, threads, dynamic shared memory,
    /// programmatic); the piece passes only on the piece path, the first
    /// `DNNPLAN_GDN_FWD_STEPS` of them, those with an empty grid left out.
    fn launches(&self) -> impl Iterator<Item = Launch<'_, F>> {
        let kn = &self.kernels;
        let chained = self.choice.pieces > 1;
        let first = self.choice.first_early();
        // From seed 1 the chain has P − 2 steps: none at P = 2.
        let chain_runs = chained && !(first && self.choice.pieces == 2);
        // (kernel, grid, threads, shared memory, runs, consumer of an overlapped pair)
        let launches = [
            (&kn.offsets, (1, 1, 1), OFFSETS_THREADS, 0, true, false),
            (
                &kn.prep,
                self.grid_prep,
                self.prep_threads,
                self.smem_prep,
                true,
                false,
            ),
            (
                &kn.first,
                self.grid_first,
                self.scan_threads,
                self.smem_first,
                first,
                false,
            ),
            (
                &kn.sum,
                self.grid_sum,
                self.sum_threads,
                self.smem_sum,
                chained,
                first,
            ),
            (
                &kn.chain,
                self.grid_chain,
                CHAIN_THREADS,
                0,
                chain_runs,
                false,
            ),
            (
                &kn.scan,
                self.grid_scan,
                self.scan_threads,
                self.smem_scan,
                true,
                self.choice.overlap && !self.choice.sequential,
            ),
        ];
        launches
            .into_iter()
            .filter(|l| l.4)
            .take(self.choice.steps)
            .filter(|l| l.1.0 > 0 && l.1.1 > 0 && l.1.2 > 0)
            .enumerate()
            .map(move |(launched, (f, grid, threads, smem, _, consumer))| {
                let f_is_scan = std::ptr::eq(f, &kn.scan);
                // Every kernel after the first may start early and waits at its entry (pdl.rs);
                // the overlapped scan starts while the prep runs (fwd_overlap), in every mode, as
                // the summary beside the first piece's scan does (SLIM_PIECES_FIRST);
                // run one after the other (diagnostic), it has no entry wait: launched normally.
                let programmatic = consumer
                    || (self.pdl.programmatic(launched) && !(self.choice.sequential && f_is_scan));
                (f, grid, threads, smem, programmatic)
            })
    }
}

// SAFETY: `bind` writes the pack's device buffers and the checked workspace region's addresses
// into the block (FwdTmaParams: FwdFastParams, then the tensor maps of the pack's q, k, v, o when a
// kernel reads them), which starts with every kernel's only parameter.
unsafe impl GdnPlan for GdnFwdPlan {
    type Params = FwdTmaParams;

    fn workspace(&self) -> u64 {
        self.ckpt.total
    }

    fn bind(&self, pack: &VariantPack, ws: u64) -> Result<Self::Params> {
        let addr = |uid: i64| -> Result<u64> { Ok(pack.ptr(pack.index_of(uid)?) as u64) };
        let opt = |uid: Option<i64>| -> Result<u64> { uid.map_or(Ok(0), addr) };
        let u = &self.uids;
        let mut fp = FwdFastParams {
            f: u.addresses(pack, self.template)?,
            ..FwdFastParams::default()
        };
        let cu_src = self.layout.bind(ws, &mut fp.f);
        let st_src = self.layout.bind_pool(ws, self.pool_rows, &mut fp.f);
        self.pieces.bind(ws, self.choice.pieces as i32, &mut fp);
        if self.choice.first_early() {
            fp.first_scale = self.choice.first_scale;
        }
        self.overlap.bind_fwd(ws, &mut fp);
        self.ckpt.bind(ws, opt(u.checkpoints)?, &mut fp);
        if let Some((uid, layout)) = &self.factors {
            layout.bind_fwd(addr(*uid)?, &mut fp);
        }
        // The maps of this call's q, k, v, o (the last call's when they sit where its did).
        let maps = match &self.io_maps {
            Some(shape) => {
                let at = [fp.f.q, fp.f.k, fp.f.v, fp.f.o];
                self.io_cache
                    .get_or_encode(at, || shape.encode(at[0], at[1], at[2], at[3]))?
            }
            None => GdnIoMaps::default(),
        };
        Ok(FwdTmaParams {
            fp,
            cu_src,
            st_src,
            maps,
        })
    }

    fn launch_list(&self) -> impl Iterator<Item = Launch<'_, Function>> {
        self.launches()
    }

    fn bound_ports(&self) -> Vec<(&'static str, i64)> {
        let mut ports = self.uids.bound();
        ports.extend(self.factors.map(|(uid, _)| ("chunk_factors", uid)));
        ports
    }

    fn guards(&self) -> &std::sync::OnceLock<crate::pack::GuardTable> {
        &self.guards
    }
}

#[cfg(test)]
pub(super) mod tests;
