//! `gdn_sm90`: the bundled Hopper engine of the `gdn` family, forward and backward.
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
use super::occupancy::BlockUse;
use super::params::{
    BWD_PREP_SLIM_MIN_BLOCKS, CHAIN_THREADS, CHAIN3_ROWS, CkptLayout, FwdFastParams, FwdParams,
    FwdTmaParams, GdnIoMaps, KernelDtype, OFFSETS_THREADS, OverlapLayout, PREP3_THREADS,
    PREP6_MIN_BLOCKS, PieceLayout, SCAN_STAGES, SCANX_S1_MIN_BLOCKS, SCANX_S1_STAGES,
    SLIM_OV_STAGES, SLIM_PREP_MIN_BLOCKS, SLIM_PREP_OV_MIN_BLOCKS, SLIM_PREP_WG_MIN_BLOCKS,
    SLIM_SUM_MIN_BLOCKS, SLIM_SUM3_MIN_BLOCKS, SLIM_SUM3_STAGES, SLIM_W4_STAGES,
    SLIM_W4D_MIN_BLOCKS, SLIM_W8_STAGES, SUM_STAGES, SUM1_MIN_BLOCKS, WorkspaceLayout,
    dscan_mma_stages_smem_bytes, fast_smem_bytes, flags, max_chunks, prep7_smem_bytes,
    scanx_smem_bytes, slim_piece_smem_bytes, slim_prep_l_smem_bytes, slim_prep_smem_bytes,
    slim_scan_smem_bytes, slim_scan_tma_smem_bytes, slim_sum_smem_bytes,
    slim_sum_stages_smem_bytes,
};
use super::pdl::{GdnPlan, Launch, PdlMode};
use super::seq_order::seq_order_flags;
use super::tma_maps::{self, FwdIoMapShape};

/// Manifest name of the engine.
pub const ENGINE_NAME: &str = "gdn_sm90";

/// One support rule: `Some(reason)` declines.
type SupportRule = fn(&GdnFacts, &Target) -> Option<String>;

/// Every condition the kernels need, in the order the reasons are reported.
pub const SUPPORT_RULES: &[SupportRule] = &[
    needs_sm90,
    head_dims,
    io_dtype,
    state_dtype,
    gradient_dtypes,
    checkpoint_cadence,
    checkpoint_dtype,
    checkpoints_without_pool,
    chunk_factors_port,
    packed_ports,
    index_range,
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

fn packed_ports(f: &GdnFacts, _: &Target) -> Option<String> {
    f.ports
        .iter()
        .find(|(_, p)| !p.packed)
        .map(|(name, _)| format!("port {name} must be packed row-major"))
}

fn index_range(f: &GdnFacts, _: &Target) -> Option<String> {
    let slots = max_chunks(f.n_seqs as u64, f.total_tokens as u64) * (f.heads.3 as u64);
    if f.total_tokens >= (1i64 << 31) || slots >= (1u64 << 31) {
        return Some(format!(
            "T = {} tokens exceeds the kernels' 32-bit chunk indexing",
            f.total_tokens
        ));
    }
    // Grid y / z dimensions: heads and sequences.
    (f.heads.3 > 65_535 || f.n_seqs > 65_535).then(|| {
        format!(
            "at most 65535 heads and sequences per launch; got HO = {}, N = {}",
            f.heads.3, f.n_seqs
        )
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
        let module = compile_or_load("gdn_fwd", &info, &[])?;
        let k = facts.k;
        let sms = info.sm_count.max(1) as u64;
        let choice = FwdChoice::pick(facts, sms);
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
fn piece_switch(value: Option<&str>) -> Option<WgmmaDepth> {
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
fn first_scan_switch(value: Option<&str>) -> usize {
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
fn first_sum_switch(value: Option<&str>) -> usize {
    switch_row(&SLIM_FIRST_SUMS, |r| &r.pass, value, SLIM_FIRST_SUM_BY_RULE)
}

/// Whether the slim wgmma piece path runs its first piece early ([`SLIM_PIECES_FIRST`]) by rule,
/// unless `DNNPLAN_GDN_FWD_PIECE_FIRST=0|1` says.
pub const SLIM_PIECE_FIRST_BY_RULE: bool = true;

/// `DNNPLAN_GDN_FWD_PIECE_FIRST`'s value: `1` on (`2`: on, the other pieces' scan always
/// [`PieceFirstRow::rest`], a diagnostic), `0` off, else the rule's.
fn piece_first_switch(value: Option<&str>) -> bool {
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

    /// The form a `DNNPLAN_GDN_FWD_SLIMPREP` value names, if it names one.
    fn named(value: Option<&str>) -> Option<SlimPrepProducts> {
        Some(match value {
            Some("mma") => SlimPrepProducts::Mma,
            Some("wg") => SlimPrepProducts::Wg,
            Some("wg5") => SlimPrepProducts::Wg5,
            Some("wgc") => SlimPrepProducts::Wgc,
            Some("wgl") => SlimPrepProducts::Wgl,
            Some("wgt") => SlimPrepProducts::Wgt,
            Some("wgtl") => SlimPrepProducts::Wgtl,
            _ => return None,
        })
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
            c.pieces = p.clamp(1, 64);
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
    if f.op == GdnOp::Backward {
        let names = super::backward::kernel_names(tag, f.k, PrepVariant::from_env()).to_vec();
        return Ok(super::pdl::by_name(
            GdnBwdPlan::new(f, names, sms)?.launches(),
        ));
    }
    let choice = FwdChoice::pick(f, sms);
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

/// Uids of the ports execute reads (0 = not bound).
#[derive(Clone, Copy, Debug, Default)]
struct PortUids {
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

/// A built forward plan: shape-specialised parameters, the workspace layout and the kernels
/// (`F`: the resolved kernels; any type in the CPU tests, which plan without a device).
pub struct GdnFwdPlan<F = Function> {
    template: FwdParams,
    uids: PortUids,
    layout: WorkspaceLayout,
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
    let rows = p.dims.first().copied().unwrap_or(0).max(0) as u64;
    let u_bytes = gdn_chunk_factor_bytes(f.v, f.checkpoint_every) - GDN_CHUNK_FACTOR_BYTES;
    Ok(Some((
        p.uid,
        ChunkFactorsLayout::new(rows, f.heads.3 as u64, u_bytes as u64),
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
        let need = |p: &str| -> Result<&PortFacts> {
            f.port(p)
                .ok_or_else(|| Error::Internal(format!("gdn_sm90: port {p} is not bound")))
        };
        let uid = |p: &str| f.port(p).map(|x| x.uid);
        let ho = f.heads.3;
        let n = f.n_seqs as u64;
        let t = f.total_tokens as u64;
        let chunks = max_chunks(n, t);
        let pdl = PdlMode::from_env();
        let mut template = fwd_template(f)?;
        template.flags |= pdl.param_flags() | seq_order_flags(f.n_seqs);
        let uids = PortUids {
            q: need("q")?.uid,
            k: need("k")?.uid,
            v: need("v")?.uid,
            g: need("g")?.uid,
            beta: need("beta")?.uid,
            cu: need("cu_seqlens")?.uid,
            init: uid("initial_state"),
            idx: uid("state_indices"),
            a_log: uid("a_log"),
            dt_bias: uid("dt_bias"),
            o: need("O")?.uid,
            final_state: uid("final_state"),
            checkpoints: uid("state_checkpoints"),
        };
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
            pieces,
            overlap,
            ckpt: CkptLayout::new(overlap.total, n, every, ckpt_f32),
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
            f: FwdParams {
                q: addr(u.q)?,
                k: addr(u.k)?,
                v: addr(u.v)?,
                g: addr(u.g)?,
                beta: addr(u.beta)?,
                cu_seqlens: addr(u.cu)?,
                initial_state: opt(u.init)?,
                state_indices: opt(u.idx)?,
                a_log: opt(u.a_log)?,
                dt_bias: opt(u.dt_bias)?,
                o: addr(u.o)?,
                final_state: opt(u.final_state)?,
                ..self.template
            },
            ..FwdFastParams::default()
        };
        self.layout.bind(ws, &mut fp.f);
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
        Ok(FwdTmaParams { fp, maps })
    }

    fn launch_list(&self) -> impl Iterator<Item = Launch<'_, Function>> {
        self.launches()
    }

    fn bound_ports(&self) -> Vec<(&'static str, i64)> {
        let u = &self.uids;
        [
            ("q", Some(u.q)),
            ("k", Some(u.k)),
            ("v", Some(u.v)),
            ("g", Some(u.g)),
            ("beta", Some(u.beta)),
            ("cu_seqlens", Some(u.cu)),
            ("initial_state", u.init),
            ("state_indices", u.idx),
            ("a_log", u.a_log),
            ("dt_bias", u.dt_bias),
            ("O", Some(u.o)),
            ("final_state", u.final_state),
            ("state_checkpoints", u.checkpoints),
            ("chunk_factors", self.factors.map(|(uid, _)| uid)),
        ]
        .into_iter()
        .filter_map(|(name, uid)| Some((name, uid?)))
        .collect()
    }

    fn guards(&self) -> &std::sync::OnceLock<crate::pack::GuardTable> {
        &self.guards
    }
}

#[cfg(test)]
pub(super) mod tests {
    use super::*;
    use crate::engines::gdn::occupancy::SM90_BUDGET;

    /// The uncut slim scan's suffix by rule at `warps` warps ([`SLIM_SCAN_WGMMA_BY_RULE`]).
    fn rule_slim_suffix(warps: u64) -> &'static str {
        match (SLIM_SCAN_WGMMA_BY_RULE, warps) {
            (WgmmaDepth::Step, 4) => "w4gx",
            (WgmmaDepth::StepSplit | WgmmaDepth::StepSplitAll, 4) => "w4gxs",
            (WgmmaDepth::StepTmaO, 4) => "w4gxt",
            (WgmmaDepth::StepTmaIo, 4) => "w4gxu",
            (WgmmaDepth::StepTmaOFirst, 4) => "w4gxv",
            (WgmmaDepth::StepSplitAll, _) => "w8gxs",
            (WgmmaDepth::Step | WgmmaDepth::StepSplit, _) => "w8gx",
            (WgmmaDepth::Products, 4) => "w4gs",
            (_, 4) => "w4",
            _ => "w8",
        }
    }

    /// The piece path's seeded scan and summary suffixes by rule ([`SLIM_PIECE_WGMMA_BY_RULE`]).
    fn rule_piece_suffixes() -> (&'static str, &'static str) {
        match SLIM_PIECE_WGMMA_BY_RULE {
            WgmmaDepth::Step
            | WgmmaDepth::StepSplit
            | WgmmaDepth::StepSplitAll
            | WgmmaDepth::StepTmaO
            | WgmmaDepth::StepTmaIo
            | WgmmaDepth::StepTmaOFirst => ("w4dgx", "_gx"),
            WgmmaDepth::Products => ("w4dgs", "_gs"),
            WgmmaDepth::Off => ("w4d", ""),
        }
    }

    fn facts(n: i64, t: i64, ho: i64, d: i64, batch_invariant: bool) -> GdnFacts {
        crate::engines::gdn::analyzer::test_facts(GdnOp::Forward, n, t, ho, d, batch_invariant)
    }

    #[test]
    fn forward_overlap_only_when_asked_and_its_bundled_entries() {
        let overlap = |n, t, ho, d, bi| FwdChoice::default_for(&facts(n, t, ho, d, bi), 132);
        // (4, 8192, 16): uncut slim, 128 w4 blocks in one wave: the overlap's best shape, not
        // overlapped by rule since session 19 (fwd_overlap::FWD_OVERLAP_RULE).
        let mut c = overlap(4, 32768, 16, 128, false);
        assert!(!c.overlap && c.scan_warps() == 4);
        assert!(!overlap(4, 32768, 16, 128, true).overlap);
        // (16, 2048, 32) (w8, 512 pairs), the ragged mix (320 w4 blocks), (1, 32768, 16) (the
        // piece path), K = 64 (full factors): not either.
        for (n, t, ho, d) in [
            (16, 32768, 32, 128),
            (10, 29949, 16, 128),
            (1, 32768, 16, 128),
            (4, 32768, 16, 64),
        ] {
            assert!(!overlap(n, t, ho, d, false).overlap, "{n} {t} {ho} {d}");
        }
        // (1, 32768, 16) uncut under batch_invariant: 32 blocks, a quarter wave -> not.
        assert!(!overlap(1, 32768, 16, 128, true).overlap);
        // The overlapped entries (DNNPLAN_GDN_FWD_OVERLAP=1) are bundled, named by the choice.
        c.overlap = true;
        let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
        assert_eq!(c.offsets_name(), "gdn_fwd_chunk_order");
        assert!(fwd.has_function(c.offsets_name()));
        for tag in ["bf16", "f16"] {
            let (prep, scan) = c.kernel_names(tag, 128);
            assert_eq!(prep, format!("gdn_fwd_slimprep_{tag}_k128_ov"));
            assert_eq!(scan, format!("gdn_fwd_slimscan_{tag}_k128_w4ov"));
            assert!(fwd.has_function(&prep) && fwd.has_function(&scan));
        }
        // Without the overlap: the default kernels.
        let mut plain = c;
        plain.overlap = false;
        assert_eq!(plain.offsets_name(), "gdn_chunk_offsets");
        assert_eq!(
            plain.kernel_names("bf16", 128),
            (
                SLIM_PREP_PRODUCTS_BY_RULE
                    .pass(SLIM_PREP)
                    .pass
                    .entry("bf16", 128),
                format!("gdn_fwd_slimscan_bf16_k128_{}", rule_slim_suffix(4))
            )
        );
    }

    #[test]
    fn forward_schedule_rule_at_the_benchmark_shapes() {
        let pick = |n, t, ho, d, bi| {
            let c = FwdChoice::default_for(&facts(n, t, ho, d, bi), 132);
            (c.scan, c.pieces)
        };
        // (4, 8192, 16): 64 pairs, 128 four-warp blocks fill the GPU.
        assert_eq!(pick(4, 32768, 16, 128, false), (ScanVariant::Warps4, 1));
        // (1, 32768, 16): 32 blocks -> the piece path w4p + sum1 in 7 pieces of 74 chunks (one
        // wave each: 224 scan blocks at two per SM, 384 summary blocks at three); with the first
        // piece early (SLIM_PIECE_FIRST_BY_RULE, session 32) 5 pieces of 103 chunks (the other
        // pieces' 128 scan blocks at one per SM).
        assert_eq!(
            pick(1, 32768, 16, 128, false),
            (
                ScanVariant::Warps4Phased,
                if SLIM_PIECE_FIRST_BY_RULE { 5 } else { 7 }
            )
        );
        assert_eq!(
            FwdChoice::default_with(&facts(1, 32768, 16, 128, false), 132, false).pieces,
            7
        );
        // ... but never under batch_invariant (the cut would depend on the batch).
        assert_eq!(pick(1, 32768, 16, 128, true), (ScanVariant::Warps4, 1));
        // (16, 2048, 32): 512 pairs, two or more waves -> 8 warps.
        assert_eq!(pick(16, 32768, 32, 128, false), (ScanVariant::Warps8, 1));
        // The ragged mix: 160 pairs, under two waves -> 4 warps.
        assert_eq!(pick(10, 29949, 16, 128, false), (ScanVariant::Warps4, 1));
        // K = V = 64 has no 8-warp kernel; short sequences are never cut.
        assert_eq!(pick(64, 64 * 4096, 16, 64, false), (ScanVariant::Warps4, 1));
        assert_eq!(pick(1, 300, 2, 128, false), (ScanVariant::Warps4, 1));
        // Few pairs of long sequences: at most 16 pieces; K = 64 cuts on the session-12 path.
        assert_eq!(
            pick(1, 1 << 20, 1, 128, false),
            (ScanVariant::Warps4Phased, 16)
        );
        assert_eq!(pick(1, 32768, 16, 64, false), (ScanVariant::Warps4, 8));
        // The piece count is the one that keeps both piece passes in one wave.
        let path = FWD_PIECE_PATH[0];
        let (sr, mr) = (path.0.row(), path.1.row());
        let p = pick(1, 32768, 16, 128, false).1;
        assert!(32 / (sr.warps / 4) * p <= sr.per_sm * 132);
        assert!(64 * (p - 1) <= mr.per_sm * 132);
        // Session 6 measured a pairs scan (two warps per 16 value rows, `t8`; kept in
        // gdn_fwd_fast.cuh, not bundled) slower than the rule's choice at all four shapes (H200,
        // bench/gdn_device_fscan6_1.log: 0.365 vs 0.327 ms w4 at (4, 8192, 16), 0.770 vs 0.721 at
        // (1, 32768, 16) with 4 pieces, 0.750 vs 0.533 w8 at (16, 2048, 32), 0.440 vs 0.395 on
        // the ragged mix): the rule above stands.
    }

    #[test]
    fn every_forward_scan_and_summary_has_one_row_and_a_bundled_entry() {
        let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
        for row in &FWD_SCANS {
            for k in [64, 128] {
                let found = ScanVariant::from_switch(row.switch, k);
                assert_eq!(found, row.serves(k).then_some(row.variant));
                for tag in ["bf16", "f16"] {
                    let name = row.variant.kernel_name(tag, k);
                    assert_eq!(fwd.has_function(&name), row.serves(k), "{name}");
                }
            }
            // Blocks per SM by shared memory (228 KB per SM, 1 KB reserved per block).
            let smem = row.pass().smem_bytes(128);
            assert!(SM90_BUDGET.holds(row.per_sm, smem), "{}", row.switch);
        }
        for row in &FWD_SUMS {
            for k in [64, 128] {
                let found = SumVariant::from_switch(row.switch, k);
                assert_eq!(found, row.serves(k).then_some(row.variant));
                for tag in ["bf16", "f16"] {
                    let name = row.variant.kernel_name(tag, k);
                    assert_eq!(fwd.has_function(&name), row.serves(k), "{name}");
                }
            }
            let smem = row.pass().smem_bytes(128);
            assert!(SM90_BUDGET.holds(row.per_sm, smem), "{}", row.switch);
        }
        assert_eq!(ScanVariant::from_switch("w4p", 64), None);
        assert_eq!(ScanVariant::from_switch("v1", 128), None);
        assert_eq!(
            ScanVariant::Warps4Phased.kernel_name("f16", 128),
            "gdn_fwd_scanx_f16_k128_w4p"
        );
        assert_eq!(
            SumVariant::Phased3.kernel_name("bf16", 128),
            "gdn_fwd_sum1_bf16_k128"
        );
    }

    #[test]
    fn slim_factors_serve_the_uncut_k128_path_only() {
        let f = |n, t, ho, d, bi| facts(n, t, ho, d, bi);
        // The default at every shape (UNCUT_DEFAULT, PIECE_DEFAULT): slim at K = 128 at any block
        // count, cut or not, and under batch_invariant; full at K = 64.
        for (fa, want) in [
            // (4, 8192, 16): w4, 128 blocks.
            (f(4, 32768, 16, 128, false), FwdFactors::Slim),
            // (16, 2048, 32): w8, 512 blocks.
            (f(16, 32768, 32, 128, false), FwdFactors::Slim),
            // The ragged mix: w4, 320 blocks.
            (f(10, 29949, 16, 128, false), FwdFactors::Slim),
            // (1, 32768, 16) under batch_invariant: uncut, slim.
            (f(1, 32768, 16, 128, true), FwdFactors::Slim),
            // ... and (4, 8192, 16) too: batch_invariant never depends on the batch's size.
            (f(4, 32768, 16, 128, true), FwdFactors::Slim),
            // (1, 32768, 16): the piece path (slim since session 14).
            (f(1, 32768, 16, 128, false), FwdFactors::Slim),
            // Short sequences, few blocks (uncut, 4 blocks).
            (f(1, 300, 2, 128, false), FwdFactors::Slim),
            // K = 64: no slim kernel.
            (f(64, 64 * 4096, 16, 64, false), FwdFactors::Full),
        ] {
            let c = FwdChoice::default_for(&fa, 132);
            assert_eq!(c.factors, want, "{} tokens, K = {}", fa.total_tokens, fa.k);
        }
        // (1, 32768, 16) forced uncut (DNNPLAN_GDN_FWD_PIECES=1): 32 blocks, slim; cut, slim.
        let k128 = f(1, 32768, 16, 128, false);
        assert_eq!(FwdFactors::UNCUT_DEFAULT, FwdFactors::Slim);
        assert_eq!(FwdFactors::PIECE_DEFAULT, FwdFactors::Slim);
        for p in [1, 7] {
            assert_eq!(
                FwdFactors::resolve(FwdFactors::default_for(p), &k128),
                FwdFactors::Slim
            );
        }
        // The switch: either where slim applies (cut or not), full at K = 64.
        let (k128, k64) = (f(4, 32768, 16, 128, false), f(4, 32768, 16, 64, false));
        for wanted in [FwdFactors::Slim, FwdFactors::Full] {
            assert_eq!(FwdFactors::resolve(wanted, &k128), wanted);
            assert_eq!(FwdFactors::resolve(wanted, &k64), FwdFactors::Full);
        }
        for row in &FACTOR_VARIANTS {
            assert_eq!(FwdFactors::from_switch(row.switch), Some(row.factors));
        }
        assert_eq!(FwdFactors::from_switch("v2"), None);
        // Every slim entry the schedule can name is bundled (both widths, both io dtypes; the
        // piece path's summary and seeded scan).
        let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
        let mut c = FwdChoice::default_with(&f(1, 32768, 16, 128, false), 132, false);
        assert!(c.slim_pieces());
        for tag in ["bf16", "f16"] {
            let (prep, scan_name) = c.kernel_names(tag, 128);
            let sum = c.sum_kernel_name(tag, 128);
            for name in [&prep, &scan_name, &sum] {
                assert!(fwd.has_function(name), "{name} is not bundled");
            }
        }
        // The rule's piece passes (SLIM_PIECE_WGMMA_BY_RULE).
        let (w4d, sum) = rule_piece_suffixes();
        assert_eq!(
            c.kernel_names("f16", 128).1,
            format!("gdn_fwd_slimscan_f16_k128_{w4d}")
        );
        assert_eq!(
            c.sum_kernel_name("bf16", 128),
            format!("gdn_fwd_slimsum_bf16_k128{sum}")
        );
        assert_eq!(c.scan_warps(), 4);
        // Full factors forced on the piece path: the full passes.
        c.factors = FwdFactors::Full;
        assert_eq!(c.sum_kernel_name("bf16", 128), "gdn_fwd_sum1_bf16_k128");
        assert_eq!(c.kernel_names("bf16", 128).1, "gdn_fwd_scanx_bf16_k128_w4p");
        let mut c = FwdChoice::default_for(&k128, 132);
        c.factors = FwdFactors::Slim;
        c.overlap = false; // the non-overlapped entries (the overlapped ones: fwd_overlap tests)
        assert!(!c.slim_pieces());
        for scan in [ScanVariant::Warps4, ScanVariant::Warps8] {
            c.scan = scan;
            for tag in ["bf16", "f16"] {
                let (prep, scan_name) = c.kernel_names(tag, 128);
                assert!(fwd.has_function(&prep), "{prep} is not bundled");
                assert!(fwd.has_function(&scan_name), "{scan_name} is not bundled");
            }
        }
        assert_eq!(
            c.kernel_names("bf16", 128),
            (
                SLIM_PREP_PRODUCTS_BY_RULE
                    .pass(SLIM_PREP)
                    .pass
                    .entry("bf16", 128),
                format!("gdn_fwd_slimscan_bf16_k128_{}", rule_slim_suffix(8))
            )
        );
        c.factors = FwdFactors::Full;
        assert_eq!(
            c.kernel_names("f16", 128).1,
            "gdn_fwd_scanx_f16_k128_w8".to_owned()
        );
    }

    /// `facts` with every port of both directions bound (bf16 io, fp32 states, int32 offsets).
    pub(in crate::engines::gdn) fn bound(mut f: GdnFacts) -> GdnFacts {
        // The backward's ports (the forward's inputs among them) and the forward's outputs;
        // `state_checkpoints` only comes with a cadence (tests add it with its dtype).
        let ports = super::super::backward::PORTS
            .into_iter()
            .filter(|p| *p != "state_checkpoints")
            .chain(["O", "final_state"]);
        for (uid, name) in (1..).zip(ports) {
            let dtype = match name {
                "cu_seqlens" => DataType::Int32,
                n if n.contains("state") => DataType::Float,
                _ => DataType::Bfloat16,
            };
            let (dims, packed) = (Vec::new(), true);
            f.ports.push((
                name,
                PortFacts {
                    uid,
                    dims,
                    dtype,
                    packed,
                },
            ));
        }
        f
    }

    #[test]
    fn every_planned_launch_is_bundled_and_within_the_launch_limits() {
        let module = |m| crate::cuda::kernels::find(m).expect("bundled GDN module");
        let (fwd, bwd) = (module("gdn_fwd"), module("gdn_bwd"));
        // The four benchmark shapes, K = 128 and 64, batch_invariant off and on, and short
        // sequences on few heads (the piece chain at 16 pieces).
        for (n, t, ho) in [
            (4, 32768, 16),
            (1, 32768, 16),
            (16, 32768, 32),
            (10, 29949, 16),
        ]
        .into_iter()
        .chain([(2, 3048, 2), (1, 300, 2)])
        {
            for (d, bi) in [(128, false), (128, true), (64, false)] {
                for (op, bundled) in [(GdnOp::Forward, fwd), (GdnOp::Backward, bwd)] {
                    let f = bound(crate::engines::gdn::analyzer::test_facts(
                        op, n, t, ho, d, bi,
                    ));
                    let launches = planned_launches(&f, 132, "bf16").expect("plan");
                    assert!(launches.len() >= 3, "{op:?} {n} {t} {ho} {d}");
                    for (name, grid, threads, smem, _) in launches {
                        assert!(bundled.has_function(&name), "{name} is not bundled");
                        assert!(threads % 32 == 0 && threads <= 1024, "{name}: {threads}");
                        assert!(SM90_BUDGET.allows(smem), "{name}: {smem} B");
                        assert!(grid.1 <= 65_535 && grid.2 <= 65_535, "{name}: {grid:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn every_slim_scan_row_is_bundled_and_picked_where_it_applies() {
        let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
        for row in &SLIM_SCANS {
            for tag in ["bf16", "f16"] {
                let prep = row.prep.pass.entry(tag, 128);
                let scan = row.scan.entry(tag, 128);
                assert!(fwd.has_function(&prep), "{prep} is not bundled");
                assert!(fwd.has_function(&scan), "{scan} is not bundled");
            }
            assert!(
                SM90_BUDGET.allows(row.scan.smem_bytes(128)),
                "{}",
                row.scan.suffix
            );
        }
        // (pieces, overlap, full scan) -> the slim scan's suffix: pieces first, then the overlap,
        // then the full scan's width (w4p: 4 warps; the 4-warp scan is the rule's wgmma scan).
        let mut c = FwdChoice::default_with(&facts(4, 32768, 16, 128, false), 132, false);
        c.factors = FwdFactors::Slim;
        let (w4, w8) = (rule_slim_suffix(4), rule_slim_suffix(8));
        let w4d = rule_piece_suffixes().0;
        for (pieces, overlap, scan, suffix) in [
            (7, false, ScanVariant::Warps4Phased, w4d),
            (1, true, ScanVariant::Warps8, "w4ov"),
            (1, false, ScanVariant::Warps8, w8),
            (1, false, ScanVariant::Warps4Phased, w4),
            (1, false, ScanVariant::Warps4, w4),
        ] {
            (c.pieces, c.overlap, c.scan) = (pieces, overlap, scan);
            assert_eq!(c.scan_pass().suffix, suffix, "{pieces} {overlap} {scan:?}");
            // Only the overlapped scan's prep is the persistent one.
            let persistent = c.prep_pass().grid == PrepGrid::Persistent;
            assert_eq!(persistent, overlap, "{pieces} {overlap} {scan:?}");
        }
    }

    #[test]
    fn wgmma_piece_rows_switch_and_launch() {
        // The switch: `gx` the whole step, `gs` the products, `d` off, anything else the rule's.
        assert_eq!(piece_switch(Some("gx")), Some(WgmmaDepth::Step));
        assert_eq!(piece_switch(Some("gs")), Some(WgmmaDepth::Products));
        assert_eq!(piece_switch(Some("d")), Some(WgmmaDepth::Off));
        assert_eq!(piece_switch(Some("w4gs")), None);
        assert_eq!(piece_switch(Some("w4dgx")), None);
        assert_eq!(piece_switch(None), None);
        let f = facts(1, 32768, 16, 128, false);
        let mut c = FwdChoice::default_with(&f, 132, false);
        assert_eq!(c.piece_wgmma, SLIM_PIECE_WGMMA_BY_RULE);
        assert_eq!((c.pieces, c.factors), (7, FwdFactors::Slim));
        // The rows: the mma.sync passes' shapes, other suffixes; both bundled.
        let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
        for (depth, scan, sum) in [
            (
                WgmmaDepth::Step,
                "gdn_fwd_slimscan_bf16_k128_w4dgx",
                "gdn_fwd_slimsum_bf16_k128_gx",
            ),
            (
                WgmmaDepth::Products,
                "gdn_fwd_slimscan_bf16_k128_w4dgs",
                "gdn_fwd_slimsum_bf16_k128_gs",
            ),
            (
                WgmmaDepth::Off,
                "gdn_fwd_slimscan_bf16_k128_w4d",
                "gdn_fwd_slimsum_bf16_k128",
            ),
        ] {
            c.piece_wgmma = depth;
            assert_eq!(c.scan_pass().entry("bf16", 128), scan);
            assert_eq!(c.sum_kernel_name("bf16", 128), sum);
            assert_eq!(c.scan_pass().smem_bytes(128), 111_616);
            assert_eq!(c.sum_pass().smem_bytes(128), 73_728);
            assert_eq!((c.scan_pass().warps, c.sum_pass().warps), (4, 4));
            for tag in ["bf16", "f16"] {
                assert!(fwd.has_function(&c.scan_pass().entry(tag, 128)));
                assert!(fwd.has_function(&c.sum_kernel_name(tag, 128)));
            }
        }
        // Uncut, the flag changes nothing.
        c.pieces = 1;
        for depth in [WgmmaDepth::Step, WgmmaDepth::Products] {
            c.piece_wgmma = depth;
            assert!(!matches!(c.slim_scan().used, SlimScanUse::PiecesWgmma(_)));
        }
        for row in [&SLIM_PIECES_WG, &SLIM_PIECES_WGX] {
            assert_eq!(
                (row.scan_per_sm, row.sum_per_sm),
                (SLIM_PIECES.scan_per_sm, SLIM_PIECES.sum_per_sm)
            );
        }
    }

    /// Each row (pieces, overlap, scan, factors, suffix): `c` with those fields runs the scan
    /// whose entry ends in `suffix`.
    fn assert_scan_rows(c: &mut FwdChoice, rows: &[(u64, bool, ScanVariant, FwdFactors, &str)]) {
        for &(pieces, overlap, scan, factors, suffix) in rows {
            (c.pieces, c.overlap, c.scan, c.factors) = (pieces, overlap, scan, factors);
            assert_eq!(c.scan_pass().suffix, suffix, "{pieces} {overlap} {scan:?}");
        }
    }

    #[test]
    fn wgmma_scan_row_switch_and_launch() {
        // The switch: `w4gs` forces the 4-warp scan with the wgmma products (K = 64: the full w4,
        // the slim factors do not apply); any other forced scan turns them off; unset: the rule's.
        assert_eq!(
            scan_switch(Some("w4gs"), 128),
            (Some(ScanVariant::Warps4), WgmmaDepth::Products)
        );
        assert_eq!(
            scan_switch(Some("w4gs"), 64),
            (Some(ScanVariant::Warps4), WgmmaDepth::Products)
        );
        assert_eq!(
            scan_switch(Some("w8"), 128),
            (Some(ScanVariant::Warps8), WgmmaDepth::Off)
        );
        assert_eq!(
            scan_switch(Some("w4"), 128),
            (Some(ScanVariant::Warps4), WgmmaDepth::Off)
        );
        assert_eq!(scan_switch(Some("none"), 128), (None, WgmmaDepth::Off));
        assert_eq!(scan_switch(None, 128), (None, WgmmaDepth::Off));
        for (n, t, ho, d) in [
            (4, 32768, 16, 128),
            (1, 32768, 16, 128),
            (16, 32768, 32, 128),
            (10, 29949, 16, 128),
            (4, 32768, 16, 64),
        ] {
            let c = FwdChoice::default_for(&facts(n, t, ho, d, false), 132);
            assert_eq!(c.scan_wgmma, SLIM_SCAN_WGMMA_BY_RULE, "{n} {t} {ho} {d}");
        }
        // Where it runs: only the uncut slim 4-warp scan (not pieces, not overlapped, not w8,
        // not the full factors).
        let mut c = FwdChoice::default_for(&facts(4, 32768, 16, 128, false), 132);
        (c.scan_wgmma, c.piece_wgmma) = (WgmmaDepth::Products, WgmmaDepth::Off);
        assert_scan_rows(
            &mut c,
            &[
                (1, false, ScanVariant::Warps4, FwdFactors::Slim, "w4gs"),
                (1, false, ScanVariant::Warps8, FwdFactors::Slim, "w8"),
                (1, true, ScanVariant::Warps4, FwdFactors::Slim, "w4ov"),
                (7, false, ScanVariant::Warps4Phased, FwdFactors::Slim, "w4d"),
                (1, false, ScanVariant::Warps4, FwdFactors::Full, "w4"),
            ],
        );
        // The row: w4's grid (two blocks per pair at V = 128), threads and shared memory, the
        // slim prep; the entry is bundled.
        (c.pieces, c.overlap, c.scan, c.factors) =
            (1, false, ScanVariant::Warps4, FwdFactors::Slim);
        assert_eq!(c.slim_scan().prep, SLIM_PREP);
        assert_eq!(SLIM_SCAN_W4GS.smem_bytes(128), 202_752);
        let f = bound(facts(4, 32768, 16, 128, false));
        let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
        assert_eq!(c.scan_pass().suffix, "w4gs");
        let plan = GdnFwdPlan::new(&f, c, FwdKernels::named(&c, "bf16", 128), 132).expect("plan");
        let scan = plan.launches().last().expect("the scan launch");
        assert_eq!(scan.0.as_str(), "gdn_fwd_slimscan_bf16_k128_w4gs");
        assert_eq!((scan.1, scan.2, scan.3), ((2, 16, 4), 128, 202_752));
        assert!(fwd.has_function(scan.0));
    }

    #[test]
    fn wgmma_step_scan_row_switch_and_launch() {
        // `w4gx` / `w8gx` force the 4- / 8-warp scan with the whole step by wgmma; by rule as
        // SLIM_SCAN_WGMMA_BY_RULE says; runs only where w4gs would (the piece path has its own
        // depth: none here, so its row is the mma.sync w4d).
        assert_eq!(
            scan_switch(Some("w4gx"), 128),
            (Some(ScanVariant::Warps4), WgmmaDepth::Step)
        );
        for (n, t, ho, d) in [(4, 32768, 16, 128), (16, 32768, 32, 128)] {
            let c = FwdChoice::default_for(&facts(n, t, ho, d, false), 132);
            assert_eq!(c.scan_wgmma, SLIM_SCAN_WGMMA_BY_RULE, "{n} {t} {ho} {d}");
        }
        let mut c = FwdChoice::default_for(&facts(4, 32768, 16, 128, false), 132);
        assert_eq!(
            scan_switch(Some("w8gx"), 128),
            (Some(ScanVariant::Warps8), WgmmaDepth::Step)
        );
        (c.scan_wgmma, c.piece_wgmma) = (WgmmaDepth::Step, WgmmaDepth::Off);
        assert_scan_rows(
            &mut c,
            &[
                (1, false, ScanVariant::Warps4, FwdFactors::Slim, "w4gx"),
                (1, false, ScanVariant::Warps8, FwdFactors::Slim, "w8gx"),
                (1, true, ScanVariant::Warps4, FwdFactors::Slim, "w4ov"),
                (7, false, ScanVariant::Warps4Phased, FwdFactors::Slim, "w4d"),
                (1, false, ScanVariant::Warps4, FwdFactors::Full, "w4"),
            ],
        );
        (c.pieces, c.overlap, c.scan, c.factors) =
            (1, false, ScanVariant::Warps4, FwdFactors::Slim);
        c.scan_wgmma = WgmmaDepth::Off;
        assert_eq!(c.scan_pass().suffix, "w4", "no wgmma: the mma.sync scan");
        c.scan_wgmma = WgmmaDepth::Step;
        assert_eq!(c.slim_scan().prep, SLIM_PREP);
        assert_eq!(SLIM_SCAN_W4GX.smem_bytes(128), 202_752);
        let f = bound(facts(4, 32768, 16, 128, false));
        let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
        let plan = GdnFwdPlan::new(&f, c, FwdKernels::named(&c, "bf16", 128), 132).expect("plan");
        let scan = plan.launches().last().expect("the scan launch");
        assert_eq!(scan.0.as_str(), "gdn_fwd_slimscan_bf16_k128_w4gx");
        assert_eq!((scan.1, scan.2, scan.3), ((2, 16, 4), 128, 202_752));
        assert!(fwd.has_function(scan.0));
        c.scan = ScanVariant::Warps8;
        let plan = GdnFwdPlan::new(&f, c, FwdKernels::named(&c, "bf16", 128), 132).expect("plan");
        let scan = plan.launches().last().expect("the scan launch");
        assert_eq!(scan.0.as_str(), "gdn_fwd_slimscan_bf16_k128_w8gx");
        assert_eq!((scan.1, scan.2, scan.3), ((1, 16, 4), 256, 167_936));
        assert!(fwd.has_function(scan.0));
        // `w4gxs` (session 35): w4gx's launch with the copies split; 8 warps keep w8gx.
        assert_eq!(
            scan_switch(Some("w4gxs"), 128),
            (Some(ScanVariant::Warps4), WgmmaDepth::StepSplit)
        );
        c.scan_wgmma = WgmmaDepth::StepSplit;
        let plan = GdnFwdPlan::new(&f, c, FwdKernels::named(&c, "bf16", 128), 132).expect("plan");
        let scan = plan.launches().last().expect("the scan launch");
        assert_eq!(scan.0.as_str(), "gdn_fwd_slimscan_bf16_k128_w8gx");
        c.scan = ScanVariant::Warps4;
        let plan = GdnFwdPlan::new(&f, c, FwdKernels::named(&c, "f16", 128), 132).expect("plan");
        let scan = plan.launches().last().expect("the scan launch");
        assert_eq!(scan.0.as_str(), "gdn_fwd_slimscan_f16_k128_w4gxs");
        assert_eq!((scan.1, scan.2, scan.3), ((2, 16, 4), 128, 202_752));
        assert!(fwd.has_function(scan.0));
        // `w4gxt` (session 36, tm36): w4gxs's launch with 4 KB more shared memory, the plan
        // encodes the maps; 8 warps keep w8gx.
        assert_eq!(
            scan_switch(Some("w4gxt"), 128),
            (Some(ScanVariant::Warps4), WgmmaDepth::StepTmaO)
        );
        // (The rule's prep, wgt / wgtl since session 36, reads the q, k maps: the o map is the
        // scan's.)
        assert!(
            !c.io_maps_read(128).contains(tma_maps::IoMapSet::O),
            "w4gxs reads no map"
        );
        c.scan_wgmma = WgmmaDepth::StepTmaO;
        assert!(
            c.io_maps_read(128).contains(tma_maps::IoMapSet::O),
            "w4gxt reads the o map"
        );
        for tag in ["bf16", "f16"] {
            let plan = GdnFwdPlan::new(&f, c, FwdKernels::named(&c, tag, 128), 132).expect("plan");
            assert!(plan.io_maps.is_some(), "the plan encodes the maps");
            let scan = plan.launches().last().expect("the scan launch");
            assert_eq!(*scan.0, format!("gdn_fwd_slimscan_{tag}_k128_w4gxt"));
            assert_eq!((scan.1, scan.2, scan.3), ((2, 16, 4), 128, 206_848));
            assert!(fwd.has_function(scan.0));
        }
        // `w4gxu` (session 36, tm36): w4gxt's launch, q, k by the maps too.
        assert_eq!(
            scan_switch(Some("w4gxu"), 128),
            (Some(ScanVariant::Warps4), WgmmaDepth::StepTmaIo)
        );
        c.scan_wgmma = WgmmaDepth::StepTmaIo;
        assert!(c.reads_io_maps(128), "w4gxu reads the q, k, o maps");
        for tag in ["bf16", "f16"] {
            let plan = GdnFwdPlan::new(&f, c, FwdKernels::named(&c, tag, 128), 132).expect("plan");
            assert!(plan.io_maps.is_some(), "the plan encodes the maps");
            let scan = plan.launches().last().expect("the scan launch");
            assert_eq!(*scan.0, format!("gdn_fwd_slimscan_{tag}_k128_w4gxu"));
            assert_eq!((scan.1, scan.2, scan.3), ((2, 16, 4), 128, 206_848));
            assert!(fwd.has_function(scan.0));
        }
        // `w4gxv` (session 36, tm36): w4gxt's launch, the store ahead of the tail's copies.
        assert_eq!(
            scan_switch(Some("w4gxv"), 128),
            (Some(ScanVariant::Warps4), WgmmaDepth::StepTmaOFirst)
        );
        c.scan_wgmma = WgmmaDepth::StepTmaOFirst;
        let plan = GdnFwdPlan::new(&f, c, FwdKernels::named(&c, "bf16", 128), 132).expect("plan");
        assert!(plan.io_maps.is_some(), "the plan encodes the maps");
        let scan = plan.launches().last().expect("the scan launch");
        assert_eq!(scan.0.as_str(), "gdn_fwd_slimscan_bf16_k128_w4gxv");
        assert_eq!((scan.1, scan.2, scan.3), ((2, 16, 4), 128, 206_848));
        assert!(fwd.has_function(scan.0));
        c.scan = ScanVariant::Warps8;
        assert!(
            !c.io_maps_read(128).contains(tma_maps::IoMapSet::O),
            "8 warps: w8gx"
        );
        let plan = GdnFwdPlan::new(&f, c, FwdKernels::named(&c, "bf16", 128), 132).expect("plan");
        let scan = plan.launches().last().expect("the scan launch");
        assert_eq!(scan.0.as_str(), "gdn_fwd_slimscan_bf16_k128_w8gx");
        c.scan = ScanVariant::Warps4;
        // `w8gxs` (session 35, w8s35): w8gx's launch with the copies split; 4 warps: w4gxs.
        assert_eq!(
            scan_switch(Some("w8gxs"), 128),
            (Some(ScanVariant::Warps8), WgmmaDepth::StepSplitAll)
        );
        c.scan_wgmma = WgmmaDepth::StepSplitAll;
        let plan = GdnFwdPlan::new(&f, c, FwdKernels::named(&c, "bf16", 128), 132).expect("plan");
        let scan = plan.launches().last().expect("the scan launch");
        assert_eq!(scan.0.as_str(), "gdn_fwd_slimscan_bf16_k128_w4gxs");
        c.scan = ScanVariant::Warps8;
        for tag in ["bf16", "f16"] {
            let plan = GdnFwdPlan::new(&f, c, FwdKernels::named(&c, tag, 128), 132).expect("plan");
            let scan = plan.launches().last().expect("the scan launch");
            assert_eq!(*scan.0, format!("gdn_fwd_slimscan_{tag}_k128_w8gxs"));
            assert_eq!((scan.1, scan.2, scan.3), ((1, 16, 4), 256, 167_936));
            assert!(fwd.has_function(scan.0));
        }
    }

    #[test]
    fn first_scan_rows_switch_and_launches() {
        // The switch names a row by its kernel suffix; anything else: the rule's.
        assert_eq!(first_scan_switch(None), SLIM_FIRST_SCAN_BY_RULE);
        assert_eq!(first_scan_switch(Some("x")), SLIM_FIRST_SCAN_BY_RULE);
        assert_eq!(first_scan_switch(Some("w4dgx0")), 0);
        assert_eq!(first_scan_switch(Some("w4gx0")), 1);
        // A row's length only at the piece count where it was measured.
        let row = FirstScanRow {
            first_scale: 320,
            scale_pieces: 5,
            ..SLIM_FIRST_SCANS[1]
        };
        assert_eq!(
            (row.scale_at(5), row.scale_at(4), row.scale_at(9)),
            (320, 0, 0)
        );
        // Both rows bundled in both io dtypes, 4 warps; w4dgx's and w4gx's layouts.
        let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
        let bytes: Vec<u32> = SLIM_FIRST_SCANS
            .iter()
            .map(|r| r.pass.smem_bytes(128))
            .collect();
        assert_eq!(bytes, [111_616, 202_752]);
        for r in &SLIM_FIRST_SCANS {
            assert_eq!(r.pass.warps, 4);
            assert!((0..=4096).contains(&r.first_scale));
            for tag in ["bf16", "f16"] {
                assert!(fwd.has_function(&r.pass.entry(tag, 128)), "{tag} {r:?}");
            }
        }
        // At (1, 32768, 16) each first scan launches on the grid (2, 16, 1) with its own layout,
        // the rest of the launches as the rule's (the same piece count: 5).
        let f = bound(facts(1, 32768, 16, 128, false));
        let rule = FwdChoice::default_with(&f, 132, true);
        assert_eq!(rule.pieces, 5);
        assert_eq!(rule.first_scale, rule.rule_first_scale());
        let plan_of = |c: &FwdChoice| {
            GdnFwdPlan::new(&f, *c, FwdKernels::named(c, "bf16", 128), 132).expect("plan")
        };
        let base: Vec<String> = plan_of(&rule).launches().map(|l| l.0.clone()).collect();
        for (i, r) in SLIM_FIRST_SCANS.iter().enumerate() {
            let mut c = rule;
            (c.first_scan, c.first_scale) = (i, r.scale_at(c.pieces));
            assert_eq!(c.first_scan_row(), r);
            let plan = plan_of(&c);
            let got: Vec<_> = plan
                .launches()
                .map(|l| (l.0.clone(), l.1, l.2, l.3))
                .collect();
            assert_eq!(got.len(), base.len());
            assert_eq!(
                got[2],
                (
                    r.pass.entry("bf16", 128),
                    (2, 16, 1),
                    128,
                    r.pass.smem_bytes(128)
                )
            );
            for (k, (g, b)) in got.iter().zip(&base).enumerate() {
                if k != 2 {
                    assert_eq!(&g.0, b);
                }
            }
        }
        // Out of range: the rule's row.
        let mut c = rule;
        c.first_scan = 7;
        assert_eq!(
            c.first_scan_row(),
            &SLIM_FIRST_SCANS[SLIM_FIRST_SCAN_BY_RULE]
        );
    }

    #[test]
    fn first_sum_rows_switch_and_launches() {
        // The switch names a row by its kernel suffix; anything else: the rule's.
        assert_eq!(first_sum_switch(None), SLIM_FIRST_SUM_BY_RULE);
        assert_eq!(first_sum_switch(Some("x")), SLIM_FIRST_SUM_BY_RULE);
        assert_eq!(first_sum_switch(Some("gxr")), 0);
        assert_eq!(first_sum_switch(Some("gxr3")), 1);
        assert_eq!(SLIM_FIRST_SUMS[0].pass, SLIM_PIECES_FIRST.sum);
        // Both rows bundled in both io dtypes, 4 warps; two and three stages, each row's blocks
        // per SM fit.
        let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
        let bytes: Vec<u32> = SLIM_FIRST_SUMS
            .iter()
            .map(|r| r.pass.smem_bytes(128))
            .collect();
        assert_eq!(bytes, [73_728, 110_592]);
        for r in &SLIM_FIRST_SUMS {
            assert_eq!(r.pass.warps, 4);
            assert!(super::super::occupancy::SM90_BUDGET.holds(r.per_sm, r.pass.smem_bytes(128)));
            for tag in ["bf16", "f16"] {
                assert!(fwd.has_function(&r.pass.entry(tag, 128)), "{tag} {r:?}");
            }
        }
        // At (1, 32768, 16) each summary launches on the grid (4, 16, 3) with its own layout,
        // programmatic, the rest of the launches as the rule's (the same piece count: 5).
        let f = bound(facts(1, 32768, 16, 128, false));
        let rule = FwdChoice::default_with(&f, 132, true);
        assert_eq!((rule.pieces, rule.first_sum), (5, SLIM_FIRST_SUM_BY_RULE));
        let plan_of = |c: &FwdChoice| {
            GdnFwdPlan::new(&f, *c, FwdKernels::named(c, "bf16", 128), 132).expect("plan")
        };
        let base: Vec<String> = plan_of(&rule).launches().map(|l| l.0.clone()).collect();
        for (i, r) in SLIM_FIRST_SUMS.iter().enumerate() {
            let mut c = rule;
            c.first_sum = i;
            assert_eq!(c.first_sum_row(), r);
            let plan = plan_of(&c);
            let got: Vec<_> = plan
                .launches()
                .map(|l| (l.0.clone(), l.1, l.2, l.3, l.4))
                .collect();
            assert_eq!(got.len(), base.len());
            assert_eq!(
                got[3],
                (
                    r.pass.entry("bf16", 128),
                    (4, 16, 3),
                    128,
                    r.pass.smem_bytes(128),
                    true
                )
            );
            for (k, (g, b)) in got.iter().zip(&base).enumerate() {
                if k != 3 {
                    assert_eq!(&g.0, b);
                }
            }
        }
        // The rows' cuts: gxr3 with w4gx0 at 5 pieces 264 / 256 (the rule's length at
        // (1, 32768, 16)); gxr the first scan rows' own; another scan or count: the scan row's.
        assert_eq!(SLIM_FIRST_SCANS[1].pass.suffix, "w4gx0");
        assert_eq!(SLIM_FIRST_SUMS[1].scale_for(1, 5), Some(264));
        assert_eq!(SLIM_FIRST_SUMS[1].scale_for(0, 5), None);
        assert_eq!(SLIM_FIRST_SUMS[1].scale_for(1, 7), None);
        assert_eq!(SLIM_FIRST_SUMS[0].scale_for(1, 5), None);
        for (i, want) in [(0, 288), (1, 264)] {
            let mut c = rule;
            (c.first_scan, c.first_sum) = (SLIM_FIRST_SCAN_BY_RULE, i);
            assert_eq!(c.rule_first_scale(), want, "summary row {i}");
        }
        assert_eq!(
            rule.first_scale,
            SLIM_FIRST_SUMS[SLIM_FIRST_SUM_BY_RULE]
                .scale_for(SLIM_FIRST_SCAN_BY_RULE, 5)
                .unwrap_or(SLIM_FIRST_SCANS[SLIM_FIRST_SCAN_BY_RULE].scale_at(5))
        );
        // Off the first-early path the row does not apply; out of range: the rule's row.
        let mut c = FwdChoice::default_with(&f, 132, false);
        c.first_sum = 1;
        assert_eq!(c.sum_pass(), SLIM_PIECES_WGX.sum);
        c.first_sum = 7;
        assert_eq!(c.first_sum_row(), &SLIM_FIRST_SUMS[SLIM_FIRST_SUM_BY_RULE]);
    }

    #[test]
    fn first_piece_early_rows_switch_and_launches() {
        // The switch: `1` on, `0` off, else the rule's.
        assert!(piece_first_switch(Some("1")));
        assert!(piece_first_switch(Some("2")));
        assert!(!piece_first_switch(Some("0")));
        assert_eq!(piece_first_switch(None), SLIM_PIECE_FIRST_BY_RULE);
        assert_eq!(piece_first_switch(Some("x")), SLIM_PIECE_FIRST_BY_RULE);
        let f = bound(facts(1, 32768, 16, 128, false));
        let mut c = FwdChoice::default_with(&f, 132, false);
        assert_eq!((c.pieces, c.factors), (7, FwdFactors::Slim));
        c.piece_first = true;
        assert!(c.first_early());
        // Only on the wgmma piece path: not uncut, not on the gs / mma.sync piece passes.
        for (pieces, depth) in [
            (1, WgmmaDepth::Step),
            (7, WgmmaDepth::Products),
            (7, WgmmaDepth::Off),
        ] {
            let mut d = c;
            (d.pieces, d.piece_wgmma) = (pieces, depth);
            assert!(!d.first_early(), "{pieces} {depth:?}");
        }
        // Every row has SLIM_PIECES' shapes and is bundled in both io dtypes.
        let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
        let r = &SLIM_PIECES_FIRST;
        for pass in [r.first, r.rest] {
            assert_eq!((pass.warps, pass.smem_bytes(128)), (4, 111_616));
        }
        assert_eq!((r.sum.warps, r.sum.smem_bytes(128)), (4, 73_728));
        for tag in ["bf16", "f16"] {
            for pass in [r.first, r.rest, r.sum] {
                assert!(fwd.has_function(&pass.entry(tag, 128)), "{tag} {pass:?}");
            }
        }
        assert!(fwd.has_function(&c.chain_kernel_name(128)));
        // The launches at 7 pieces: the first piece before the summary of pieces 1 ..= 5, the
        // summary launched programmatic in every PDL mode (the consumer), the chain from seed 1,
        // the scan of pieces 1 ..= 6.
        type Row = (String, (u32, u32, u32), u32, u32, bool);
        let launches = |c: &FwdChoice| -> Vec<Row> {
            let plan =
                GdnFwdPlan::new(&f, *c, FwdKernels::named(c, "bf16", 128), 132).expect("plan");
            plan.launches()
                .map(|l| (l.0.clone(), l.1, l.2, l.3, l.4))
                .collect()
        };
        let rule_first = SLIM_FIRST_SCANS[SLIM_FIRST_SCAN_BY_RULE].pass;
        let rule_sum = SLIM_FIRST_SUMS[SLIM_FIRST_SUM_BY_RULE].pass;
        let got = launches(&c);
        let names: Vec<&str> = got.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "gdn_chunk_offsets",
                "gdn_fwd_slimprep_bf16_k128_wgt",
                rule_first.entry("bf16", 128).as_str(),
                rule_sum.entry("bf16", 128).as_str(),
                "gdn_fwd_chain3r_k128",
                "gdn_fwd_slimscan_bf16_k128_w4dgxr",
            ]
        );
        assert_eq!(
            (got[2].1, got[2].2, got[2].3),
            ((2, 16, 1), 128, rule_first.smem_bytes(128))
        );
        assert_eq!(
            (got[3].1, got[3].2, got[3].3, got[3].4),
            ((4, 16, 5), 128, rule_sum.smem_bytes(128), true)
        );
        assert_eq!((got[4].1, got[4].2), ((8, 16, 1), CHAIN_THREADS));
        assert_eq!((got[5].1, got[5].2, got[5].3), ((2, 16, 6), 128, 111_616));
        // At 2 pieces: no summary, no chain.
        c.pieces = 2;
        let got = launches(&c);
        let names: Vec<&str> = got.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(
            names[2..],
            [
                rule_first.entry("bf16", 128).as_str(),
                "gdn_fwd_slimscan_bf16_k128_w4dgxr"
            ]
        );
        assert_eq!(got[3].1, (2, 16, 1));
        // The first-early piece count: the other pieces' scan at one block per SM (1 + 132 / 32
        // = 5; the summary's room beside the first piece: 2 + (396 − 64) / 64 = 7), then on
        // w4gx's three stages (4 · 32 = 128 blocks ≤ 132).
        assert_eq!(SLIM_PIECES_FIRST.pieces(32, 132), 5);
        assert_eq!(SLIM_PIECES_FIRST.pieces(16, 132), 9);
        assert!(SLIM_PIECES_FIRST.rest_in_one_wave(5, 32, 132));
        assert!(!SLIM_PIECES_FIRST.rest_in_one_wave(7, 32, 132));
        let w = FwdChoice::default_with(&f, 132, true);
        assert!(w.first_early() && w.rest_wave);
        assert_eq!(w.pieces, 5);
        let first = SLIM_FIRST_SCANS[SLIM_FIRST_SCAN_BY_RULE].pass;
        let got = launches(&w);
        let names: Vec<&str> = got.iter().map(|l| l.0.as_str()).collect();
        assert_eq!(
            names[2..],
            [
                first.entry("bf16", 128).as_str(),
                rule_sum.entry("bf16", 128).as_str(),
                "gdn_fwd_chain3r_k128",
                "gdn_fwd_slimscan_bf16_k128_w4gxr"
            ]
        );
        assert_eq!((got[3].1, got[5].1), ((4, 16, 3), (2, 16, 4)));
        assert_eq!((got[5].2, got[5].3), (128, 202_752));
        // The rule's first scan (SLIM_FIRST_SCAN_BY_RULE): w4dgx0 keeps w4dgx's 111,616 B (room
        // for a summary block beside it), w4gx0 w4gx's 202,752 B.
        assert_eq!(got[2].0, first.entry("bf16", 128));
        assert_eq!((got[2].1, got[2].3), ((2, 16, 1), first.smem_bytes(128)));
        for tag in ["bf16", "f16"] {
            assert!(fwd.has_function(&SLIM_PIECES_FIRST.rest_wave.entry(tag, 128)));
        }
        // Uncut shapes stay uncut.
        let u = FwdChoice::default_with(&bound(facts(4, 32768, 16, 128, false)), 132, true);
        assert_eq!((u.pieces, u.first_early()), (1, false));
        // Off: the rule's piece path, unchanged.
        (c.pieces, c.piece_first) = (7, false);
        let names: Vec<String> = launches(&c).into_iter().map(|l| l.0).collect();
        assert_eq!(
            names[2..],
            [
                "gdn_fwd_slimsum_bf16_k128_gx",
                "gdn_fwd_chain3_k128",
                "gdn_fwd_slimscan_bf16_k128_w4dgx"
            ]
        );
    }

    #[test]
    fn piece_count_follows_the_piece_passes_blocks_per_sm() {
        // (1, 32768, 16) on 132 SMs: 32 four-warp scan blocks, 64 summary blocks per piece.
        let f = facts(1, 32768, 16, 128, false);
        let p = |scan: ScanVariant, sum: SumVariant| {
            let (sr, mr) = (scan.row(), sum.row());
            (sr.per_sm * 132 / (16 * 128 / (16 * sr.warps)))
                .min(1 + mr.per_sm * 132 / 64)
                .clamp(1, 16)
        };
        // The session-12 path: w4 (one per SM) -> 4 pieces (the summary would allow 5).
        assert_eq!(p(ScanVariant::Warps4, SumVariant::Stages2), 4);
        // w4p (two per SM) with sum1 (three per SM: 6 summary pieces in 396 slots) -> 7 (the
        // default since session 13); w4p with the two-stage summary -> 5.
        assert_eq!(p(ScanVariant::Warps4Phased, SumVariant::Phased3), 7);
        assert_eq!(p(ScanVariant::Warps4Phased, SumVariant::Stages2), 5);
        // The rule computes the same for the shipped path, and the slim piece passes (the
        // default there since session 14) have the same blocks per SM as it: the same 7 pieces
        // whichever factors run (DNNPLAN_GDN_FWD_FACTORS=full keeps the cut).
        let (scan, sum) = FWD_PIECE_PATH[0];
        let c = FwdChoice::default_with(&f, 132, false);
        assert_eq!((c.scan, c.sum, c.pieces), (scan, sum, p(scan, sum)));
        assert_eq!(c.factors, FwdFactors::Slim);
        assert_eq!(
            (
                SLIM_PIECES.scan.warps,
                SLIM_PIECES.scan_per_sm,
                SLIM_PIECES.sum_per_sm
            ),
            (scan.row().warps, scan.row().per_sm, sum.row().per_sm)
        );
        // K = 64: the first path row that serves it (w4p, sum1 are K = 128 only).
        let c = FwdChoice::default_for(&facts(1, 32768, 16, 64, false), 132);
        assert!(c.scan.row().serves(64) && c.sum.row().serves(64));
        assert!(c.pieces > 1);
    }

    #[test]
    fn every_prep_switch_maps_to_a_bundled_entry_of_both_modules() {
        let module = |m| crate::cuda::kernels::find(m).expect("bundled GDN module");
        let (fwd, bwd) = (module("gdn_fwd"), module("gdn_bwd"));
        for row in &PREP_VARIANTS {
            // The switch value selects this row, and the row names entries of both modules.
            assert_eq!(PrepVariant::from_switch(row.switch), row.variant);
            for (dir, bundled) in [("fwd", fwd), ("bwd", bwd)] {
                for tag in ["bf16", "f16"] {
                    for k in [64, 128] {
                        let name = row.variant.kernel_name(dir, tag, k);
                        assert_eq!(name, format!("gdn_{dir}_{}_{tag}_k{k}", row.pass.pass.stem));
                        assert!(bundled.has_function(&name), "{name} is not bundled");
                    }
                }
            }
        }
        // The retired levels are not bundled and their switch values run the default.
        for (stem, value) in [("prep7", "v7"), ("prep9", "v9"), ("prep10", "v10")] {
            assert!(!fwd.has_function(&format!("gdn_fwd_{stem}_bf16_k128")));
            assert!(!bwd.has_function(&format!("gdn_bwd_{stem}_bf16_k128")));
            assert_eq!(PrepVariant::from_switch(value), PrepVariant::DEFAULT);
        }
        assert_eq!(PrepVariant::from_switch(""), PrepVariant::V15);
        assert_eq!(PrepVariant::DEFAULT.row().switch, "v15");
    }

    #[test]
    fn prep_variants_share_one_launch_shape() {
        // One block of 256 threads per (chunk slot, head), gdn::Prep7Smem's layout.
        for row in &PREP_VARIANTS {
            assert_eq!(
                row.pass.launch_shape(520, 16, 128, 132, None),
                ((520, 16, 1), 256, 54784)
            );
            assert_eq!(
                row.pass.launch_shape(7, 3, 64, 132, None),
                ((7, 3, 1), 256, prep7_smem_bytes(64, 64))
            );
        }
        assert_eq!(
            PrepVariant::V14.kernel_name("bwd", "f16", 64),
            "gdn_bwd_prep14_f16_k64"
        );
    }

    /// `bound` facts with state checkpoints every `c` tokens (the `state_checkpoints` port of
    /// `dtype`; `pool`: a `state_indices` input too).
    pub(in crate::engines::gdn) fn with_checkpoints(
        mut f: GdnFacts,
        c: i64,
        dtype: DataType,
        pool: bool,
    ) -> GdnFacts {
        f.checkpoint_every = c;
        let mut extra = vec![("state_checkpoints", dtype)];
        if pool {
            extra.push(("state_indices", DataType::Int32));
        }
        for (name, dtype) in extra {
            let uid = 1000 + f.ports.len() as i64;
            let port = PortFacts {
                uid,
                dims: Vec::new(),
                dtype,
                packed: true,
            };
            f.ports.push((name, port));
        }
        f
    }

    /// `f` with a `chunk_factors` port of `dims` and `dtype` (the forward's output or the
    /// backward's input, session 37).
    pub(in crate::engines::gdn) fn with_chunk_factors(
        mut f: GdnFacts,
        dims: Vec<i64>,
        dtype: DataType,
    ) -> GdnFacts {
        let uid = 1000 + f.ports.len() as i64;
        let port = PortFacts {
            uid,
            dims,
            dtype,
            packed: true,
        };
        f.ports.push(("chunk_factors", port));
        f
    }

    /// `f` with a `chunk_factors` port of the declared size (with the U tiles at a cadence of 64).
    pub(in crate::engines::gdn) fn saving(f: GdnFacts) -> GdnFacts {
        let rows = gdn_chunk_factor_rows(f.total_tokens, f.n_seqs);
        let (ho, bytes) = (f.heads.3, gdn_chunk_factor_bytes(f.v, f.checkpoint_every));
        with_chunk_factors(f, vec![rows, ho, bytes], DataType::Uint8)
    }

    /// (N, T, HO) of the saved-output plan tests (sessions 37, 38), both directions: uncut
    /// (4,8192,16), one sequence cut into pieces, 16 sequences (the preps that locate the chunk by
    /// warp), a ragged-sized batch, small ones, a long sequence on one head.
    pub(in crate::engines::gdn) const SAVED_SHAPES: [(i64, i64, i64); 8] = [
        (4, 32768, 16),
        (1, 32768, 16),
        (16, 32768, 32),
        (10, 4000, 4),
        (3, 300, 2),
        (1, 64, 1),
        (2, 100, 3),
        (1, 200_000, 1),
    ];

    /// `f` with io-dtype state checkpoints at every chunk, rows as the forward writes them.
    pub(in crate::engines::gdn) fn every_chunk(f: GdnFacts) -> GdnFacts {
        let rows = gdn_chunk_factor_rows(f.total_tokens, f.n_seqs);
        let (ho, v, k) = (f.heads.3, f.v, f.k);
        let io = f.io;
        let mut f = with_checkpoints(f, 64, io, false);
        let (_, port) = f.ports.last_mut().expect("state_checkpoints");
        port.dims = vec![rows, ho, v, k];
        f
    }

    #[test]
    fn a_forward_checkpointing_every_chunk_saves_the_u_tiles_on_every_cut() {
        use crate::engines::gdn::analyzer::test_facts;
        for (n, t, ho) in SAVED_SHAPES {
            let ckpt = every_chunk(bound(test_facts(GdnOp::Forward, n, t, ho, 128, false)));
            let f = saving(ckpt.clone());
            assert_eq!(verdict(&f), None, "({n},{t},{ho})");
            let c = FwdChoice::pick(&f, 132);
            assert!(c.save_u && c.saves_u_tiles() && c.saves_chunk_factors());
            let base = FwdChoice::pick(&ckpt, 132);
            let (with, without) = (
                FwdKernels::named(&c, "bf16", 128),
                FwdKernels::named(&base, "bf16", 128),
            );
            // The output scans run their U-saving twins; the rest as the factors alone.
            assert_eq!(with.scan, format!("{}_su", without.scan), "({n},{t},{ho})");
            assert_eq!(with.first, format!("{}_su", without.first));
            assert_eq!(with.prep, format!("{}s", without.prep));
            let plan =
                GdnFwdPlan::new(&f, c, FwdKernels::named(&c, "bf16", 128), 132).expect("plan");
            let (_, layout) = plan.factors.expect("bound");
            assert!(layout.holds_u_tiles());
            let rows = gdn_chunk_factor_rows(t, n) as u64;
            assert_eq!(
                layout.total,
                rows * ho as u64 * gdn_chunk_factor_bytes(128, 64) as u64
            );
            let launched: Vec<String> = plan.launches().map(|l| l.0.clone()).collect();
            assert!(
                launched
                    .iter()
                    .any(|x| x.contains("slimscan") && x.ends_with("_su")),
                "{launched:?}"
            );
            // A schedule whose scan has no twin (the overlap's consumer) cannot save them.
            let mut odd = c;
            odd.overlap = true;
            assert!(!odd.saves_u_tiles() && !odd.saves_chunk_factors());
            let err = GdnFwdPlan::new(&f, odd, FwdKernels::named(&odd, "bf16", 128), 132)
                .err()
                .expect("refused")
                .to_string();
            assert!(
                err.contains("chunk_factors") && err.contains("U-saving twin"),
                "{err}"
            );
        }
        // At another cadence the factors alone: the plain scans.
        let mut f = bound(test_facts(GdnOp::Forward, 4, 32768, 16, 128, false));
        f = with_checkpoints(f, 128, DataType::Bfloat16, false);
        let c = FwdChoice::pick(&saving(f), 132);
        assert!(!c.save_u && c.saves_chunk_factors());
        assert!(!FwdKernels::named(&c, "bf16", 128).scan.ends_with("_su"));
    }

    #[test]
    fn every_save_u_twin_is_a_symbol_of_the_bundled_cubin() {
        let bundled = crate::cuda::kernels::find("gdn_fwd").expect("bundled gdn_fwd module");
        for tag in ["bf16", "f16"] {
            for suffix in SAVE_U_SCANS {
                let name = format!("gdn_fwd_slimscan_{tag}_k128_{suffix}_{SAVE_U_SUFFIX}");
                assert!(bundled.has_function(&name), "{name} is not bundled");
            }
        }
    }

    #[test]
    fn a_backward_takes_chunk_factors_beside_the_forwards_own_checkpoints_only() {
        use crate::engines::gdn::analyzer::test_facts;
        let plain = bound(test_facts(GdnOp::Backward, 3, 300, 2, 128, false));
        // The forward's own: io rows at every chunk, factors with the U tiles.
        assert_eq!(verdict(&saving(every_chunk(plain.clone()))), None);
        // The factors without the U tiles beside them: the size names the cadence.
        let rows = gdn_chunk_factor_rows(300, 3);
        let short = with_chunk_factors(
            every_chunk(plain.clone()),
            vec![rows, 2, GDN_CHUNK_FACTOR_BYTES],
            DataType::Uint8,
        );
        let why = verdict(&short).expect("declined");
        assert!(
            why.contains(&format!("[{rows}, 2, {}]", gdn_chunk_factor_bytes(128, 64)))
                && why.contains("checkpoint_every_n_tokens = 64"),
            "{why}"
        );
        // Coarse or fp32 rows seed a replay the factors do not serve.
        for (cadence, dtype) in [(128, DataType::Bfloat16), (64, DataType::Float)] {
            let mut f = with_checkpoints(plain.clone(), cadence, dtype, false);
            let (_, port) = f.ports.last_mut().expect("state_checkpoints");
            port.dims = vec![rows, 2, 128, 128];
            let why = verdict(&saving(f)).expect("declined");
            assert!(
                why.contains("chunk_factors with state_checkpoints needs the forward's own"),
                "{cadence} {dtype:?}: {why}"
            );
        }
        // A forward saving the factors beside fp32 rows at every chunk: no backward could pair
        // them; at another cadence the factors alone are saved.
        let fwd = bound(test_facts(GdnOp::Forward, 3, 300, 2, 128, false));
        let f32_rows = with_checkpoints(fwd.clone(), 64, DataType::Float, false);
        let why = verdict(&saving(f32_rows)).expect("declined");
        assert!(why.contains("needs the forward's own"), "{why}");
        let coarse = with_checkpoints(fwd, 128, DataType::Float, false);
        assert_eq!(verdict(&saving(coarse)), None);
    }

    #[test]
    fn chunk_factors_are_served_on_the_slim_path_at_their_declared_size() {
        for op in [GdnOp::Forward, GdnOp::Backward] {
            let f = |d| {
                bound(crate::engines::gdn::analyzer::test_facts(
                    op, 3, 300, 2, d, false,
                ))
            };
            let rows = gdn_chunk_factor_rows(300, 3);
            assert_eq!(rows, 300 / 64 + 3);
            assert_eq!(verdict(&saving(f(128))), None, "{op:?}");
            let more = with_chunk_factors(
                f(128),
                vec![rows + 5, 2, GDN_CHUNK_FACTOR_BYTES],
                DataType::Uint8,
            );
            assert_eq!(verdict(&more), None, "{op:?}: room for more slots");
            for (dims, dtype) in [
                (vec![rows - 1, 2, GDN_CHUNK_FACTOR_BYTES], DataType::Uint8),
                (vec![rows, 3, GDN_CHUNK_FACTOR_BYTES], DataType::Uint8),
                (vec![rows, 2, GDN_CHUNK_FACTOR_BYTES - 1], DataType::Uint8),
                (vec![rows * 2 * GDN_CHUNK_FACTOR_BYTES], DataType::Uint8),
                (vec![rows, 2, GDN_CHUNK_FACTOR_BYTES], DataType::Int8),
            ] {
                let why =
                    verdict(&with_chunk_factors(f(128), dims.clone(), dtype)).expect("declined");
                assert!(
                    why.contains(&format!(
                        "chunk_factors must be UINT8 [{rows}, 2, {GDN_CHUNK_FACTOR_BYTES}]"
                    )) && why.contains(&format!("{dims:?}")),
                    "{op:?}: {why}"
                );
            }
            let why = verdict(&saving(f(64))).expect("declined at K = 64");
            assert!(
                why.contains("chunk_factors needs K = V = 128") && why.contains("K = 64"),
                "{why}"
            );
            // Accept means run: the batch-invariant backward has no slim prep to skip.
            let bi = saving(bound(crate::engines::gdn::analyzer::test_facts(
                op, 3, 300, 2, 128, true,
            )));
            let why = verdict(&bi).expect("declined under batch_invariant");
            assert!(
                why.contains("chunk_factors is not served with batch_invariant"),
                "{why}"
            );
        }
    }

    #[test]
    fn a_forward_with_chunk_factors_runs_the_saving_prep_on_every_cut() {
        use crate::engines::gdn::analyzer::test_facts;
        for (n, t, ho) in SAVED_SHAPES {
            let plain = bound(test_facts(GdnOp::Forward, n, t, ho, 128, false));
            let f = saving(plain.clone());
            let c = FwdChoice::pick(&f, 132);
            assert!(c.saves_chunk_factors(), "({n},{t},{ho})");
            let base = FwdChoice::pick(&plain, 132);
            assert!(!base.saves_chunk_factors());
            // Only the prep differs from the plan without the port.
            let (with, without) = (
                FwdKernels::named(&c, "bf16", 128),
                FwdKernels::named(&base, "bf16", 128),
            );
            for (a, b) in with.all().into_iter().zip(without.all()) {
                if a.contains("slimprep") {
                    // The rule's tile (wgt, or wgtl from 8 sequences) with its saving stores.
                    assert_eq!(*a, format!("{b}s"));
                    assert!(a.ends_with("_wgts") || a.ends_with("_wgtls"), "{a}");
                } else {
                    assert_eq!(a, b);
                }
            }
            let plan =
                GdnFwdPlan::new(&f, c, FwdKernels::named(&c, "bf16", 128), 132).expect("plan");
            let (uid, layout) = plan.factors.expect("bound");
            assert_eq!(uid, f.port("chunk_factors").unwrap().uid);
            let rows = gdn_chunk_factor_rows(t, n) as u64;
            assert_eq!(
                layout.total,
                rows * ho as u64 * GDN_CHUNK_FACTOR_BYTES as u64
            );
            assert!(
                plan.launches()
                    .any(|l| l.0.contains("slimprep_bf16_k128_wgt"))
            );
            // The saving tensor-map tiles read the q, k maps.
            assert!(plan.io_maps.is_some());
        }
    }

    fn verdict(f: &GdnFacts) -> Option<String> {
        let t = Target::with_arch(90);
        SUPPORT_RULES.iter().find_map(|rule| rule(f, &t))
    }

    #[test]
    fn checkpoints_at_multiples_of_the_chunk_are_served_both_directions() {
        for op in [GdnOp::Forward, GdnOp::Backward] {
            let f = || {
                bound(crate::engines::gdn::analyzer::test_facts(
                    op, 3, 300, 2, 128, false,
                ))
            };
            assert_eq!(verdict(&f()), None, "{op:?} without checkpoints");
            for c in [64, 128, 192, 4096] {
                for dt in [DataType::Bfloat16, DataType::Float] {
                    let g = with_checkpoints(f(), c, dt, false);
                    assert_eq!(verdict(&g), None, "{op:?} c = {c} {dt:?}");
                }
            }
            for c in [1, 32, 63, 65, 96, 100] {
                let why = verdict(&with_checkpoints(f(), c, DataType::Bfloat16, false))
                    .expect("declined");
                assert!(
                    why.contains("checkpoint_every_n_tokens")
                        && why.contains("multiple of 64")
                        && why.contains(&format!("got {c}")),
                    "{why}"
                );
            }
            // fp16 rows under bf16 io: neither the io dtype nor fp32.
            let why = verdict(&with_checkpoints(f(), 64, DataType::Half, false)).expect("declined");
            assert!(
                why.contains("state_checkpoints must be FLOAT or the io dtype"),
                "{why}"
            );
            // A pool with checkpoints (spec §9.4 item 7).
            let why =
                verdict(&with_checkpoints(f(), 64, DataType::Bfloat16, true)).expect("declined");
            assert!(why.contains("state_indices pool"), "{why}");
        }
    }

    #[test]
    fn checkpoints_add_only_their_row_table_and_keep_the_launches() {
        // The four benchmark shapes and a short one, K = 128 and 64: the same launches with and
        // without checkpoints (the output scans write them), the workspace grows by the [N + 1]
        // row table at a cadence of more than one chunk only, and the binding follows.
        for (n, t, ho) in [
            (4, 32768, 16),
            (1, 32768, 16),
            (16, 32768, 32),
            (10, 29949, 16),
            (3, 300, 2),
        ] {
            for d in [128, 64] {
                let f = || bound(facts(n, t, ho, d, false));
                let plan = |f: &GdnFacts| {
                    let choice = FwdChoice::pick(f, 132);
                    GdnFwdPlan::new(f, choice, FwdKernels::named(&choice, "bf16", f.k), 132)
                        .expect("plan")
                };
                let plain = plan(&f());
                let names = |p: &GdnFwdPlan<String>| super::super::pdl::by_name(p.launches());
                for (c, dt) in [
                    (64, DataType::Bfloat16),
                    (128, DataType::Float),
                    (192, DataType::Bfloat16),
                ] {
                    let g = with_checkpoints(f(), c, dt, false);
                    let p = plan(&g);
                    assert_eq!(names(&p), names(&plain), "{n} {t} {ho} {d} c = {c}");
                    assert_eq!(p.ckpt.every, c as u64 / 64);
                    assert_eq!(p.ckpt.f32, dt == DataType::Float);
                    let table = if c > 64 {
                        (4 * (n as u64 + 1)).div_ceil(256) * 256
                    } else {
                        0
                    };
                    assert_eq!(
                        p.ckpt.total,
                        plain.ckpt.total + table,
                        "{n} {t} {ho} c = {c}"
                    );
                }
                assert_eq!(plain.ckpt.every, 0);
                assert_eq!(plain.ckpt.total, plain.overlap.total);
                // Checkpoints set on the node but no buffer bound: none written.
                let mut unbound = f();
                unbound.checkpoint_every = 64;
                assert_eq!(plan(&unbound).ckpt.every, 0);
            }
        }
    }

    #[test]
    fn the_backward_slim_prep_is_bundled_with_the_slim_preps_shape() {
        // Session 28 (pp28): gdn_bwd_prep15sl_* in gdn_bwd, 8 warps, the slim prep's 36,352 B,
        // 5 blocks per SM with the largest carveout, one block per (chunk slot, head).
        let bwd = crate::cuda::kernels::find("gdn_bwd").expect("bundled GDN backward module");
        for tag in ["bf16", "f16"] {
            let entry = BWD_PREP_SLIM.pass.entry_in("bwd", tag, 128);
            assert_eq!(entry, format!("gdn_bwd_prep15sl_{tag}_k128"));
            assert!(bwd.has_function(&entry), "{entry}");
        }
        assert_eq!(
            BWD_PREP_SLIM.launch_shape(130, 16, 128, 132, None),
            ((130, 16, 1), 256, 36_352)
        );
        assert_eq!(BWD_PREP_SLIM.min_blocks, 5);
        const { assert!(BWD_PREP_SLIM.max_carveout) };
        // Session 29 (bp29): gdn_bwd_prep16sl_* likewise, 4 blocks per SM (the wgmma form's 64
        // registers), the same launch.
        for tag in ["bf16", "f16"] {
            let entry = BWD_PREP_SLIM16.pass.entry_in("bwd", tag, 128);
            assert_eq!(entry, format!("gdn_bwd_prep16sl_{tag}_k128"));
            assert!(bwd.has_function(&entry), "{entry}");
        }
        assert_eq!(
            BWD_PREP_SLIM16.launch_shape(130, 16, 128, 132, None),
            BWD_PREP_SLIM.launch_shape(130, 16, 128, 132, None)
        );
        assert_eq!(BWD_PREP_SLIM16.min_blocks, SLIM_PREP_WG.min_blocks);
        const { assert!(BWD_PREP_SLIM16.max_carveout) };
        // Session 32 (pp32): gdn_bwd_prep16slc_* on the same grid, 4 blocks per SM, 54,784 B.
        for tag in ["bf16", "f16"] {
            let entry = BWD_PREP_SLIM16C.pass.entry_in("bwd", tag, 128);
            assert_eq!(entry, format!("gdn_bwd_prep16slc_{tag}_k128"));
            assert!(bwd.has_function(&entry), "{entry}");
        }
        assert_eq!(
            BWD_PREP_SLIM16C.launch_shape(130, 16, 128, 132, None),
            ((130, 16, 1), 256, 54_784)
        );
        assert_eq!(BWD_PREP_SLIM16C.min_blocks, SLIM_PREP_WGC.min_blocks);
        const { assert!(BWD_PREP_SLIM16C.max_carveout) };
        // Session 35 (pr35): gdn_bwd_prep16sll_* as prep16slc's launch.
        for tag in ["bf16", "f16"] {
            let entry = BWD_PREP_SLIM16L.pass.entry_in("bwd", tag, 128);
            assert_eq!(entry, format!("gdn_bwd_prep16sll_{tag}_k128"));
            assert!(bwd.has_function(&entry), "{entry}");
        }
        assert_eq!(
            BWD_PREP_SLIM16L.launch_shape(130, 16, 128, 132, None),
            BWD_PREP_SLIM16C.launch_shape(130, 16, 128, 132, None)
        );
        assert_eq!(BWD_PREP_SLIM16L.min_blocks, SLIM_PREP_WGL.min_blocks);
        const { assert!(BWD_PREP_SLIM16L.max_carveout) };
    }

    #[test]
    fn the_slim_prep_switch_swaps_only_the_uncut_slim_prep() {
        // Session 28 (pp28): DNNPLAN_GDN_FWD_SLIMPREP=wg / wg5 name the bundled wgmma forms of
        // gdn_fwd_slimprep_*_k128 (4 / 5 blocks per SM, the slim prep's shared memory); the
        // persistent prep and the full preps stay.
        let fwd = crate::cuda::kernels::find("gdn_fwd").expect("bundled GDN module");
        // Session 36 (tp36): wgt by the rule (session 32, pp32: wgc).
        assert_eq!(SlimPrepProducts::from_switch(None), SlimPrepProducts::Wgt);
        assert_eq!(
            SlimPrepProducts::from_switch(Some("x")),
            SlimPrepProducts::Wgt
        );
        assert_eq!(
            SlimPrepProducts::from_switch(Some("mma")),
            SlimPrepProducts::Mma
        );
        assert_eq!(SlimPrepProducts::Mma.pass(SLIM_PREP), SLIM_PREP);
        // Session 35 (pr35): wgl in place of wgc from 8 to 31 sequences by the rule (session 36:
        // wgtl in place of wgt); a named value wins at every count.
        let (lo, hi) = SLIM_PREP_LOCATE_WARP_SEQS;
        for (n, rule) in [
            (1, SlimPrepProducts::Wgt),
            (4, SlimPrepProducts::Wgt),
            (lo - 1, SlimPrepProducts::Wgt),
            (lo, SlimPrepProducts::Wgtl),
            (16, SlimPrepProducts::Wgtl),
            (hi, SlimPrepProducts::Wgtl),
            (hi + 1, SlimPrepProducts::Wgt),
        ] {
            assert_eq!(SlimPrepProducts::by_rule(n), rule, "{n}");
            assert_eq!(SlimPrepProducts::from_switch_at(None, n), rule, "{n}");
            assert_eq!(SlimPrepProducts::from_switch_at(Some("x"), n), rule, "{n}");
            for (value, form) in [
                ("wgc", SlimPrepProducts::Wgc),
                ("wgl", SlimPrepProducts::Wgl),
                ("wgt", SlimPrepProducts::Wgt),
                ("wgtl", SlimPrepProducts::Wgtl),
            ] {
                assert_eq!(SlimPrepProducts::from_switch_at(Some(value), n), form);
            }
        }
        for (form, located) in [
            (SlimPrepProducts::Wgc, SlimPrepProducts::Wgl),
            (SlimPrepProducts::Wgt, SlimPrepProducts::Wgtl),
            (SlimPrepProducts::Wgl, SlimPrepProducts::Wgl),
            (SlimPrepProducts::Wgtl, SlimPrepProducts::Wgtl),
            (SlimPrepProducts::Wg, SlimPrepProducts::Wg),
        ] {
            assert_eq!(form.located_by_warp(), located, "{form:?}");
        }
        // The uncut slim forward at (16, 2048, 32) runs wgtl by the rule and encodes the maps.
        let f = facts(16, 32768, 32, 128, false);
        assert_eq!(FwdChoice::default_for(&f, 132).prep_pass(), SLIM_PREP_WGTL);
        assert!(FwdChoice::default_for(&f, 132).reads_io_maps(128));
        for (value, form, entry, blocks, smem) in [
            (
                "wg",
                SlimPrepProducts::Wg,
                "gdn_fwd_slimprep_bf16_k128_wg",
                4,
                36_352,
            ),
            (
                "wg5",
                SlimPrepProducts::Wg5,
                "gdn_fwd_slimprep_bf16_k128_wg5",
                5,
                36_352,
            ),
            (
                "wgc",
                SlimPrepProducts::Wgc,
                "gdn_fwd_slimprep_bf16_k128_wgc",
                4,
                54_784,
            ),
            (
                "wgl",
                SlimPrepProducts::Wgl,
                "gdn_fwd_slimprep_bf16_k128_wgl",
                4,
                54_784,
            ),
            (
                "wgt",
                SlimPrepProducts::Wgt,
                "gdn_fwd_slimprep_bf16_k128_wgt",
                4,
                54_784,
            ),
            (
                "wgtl",
                SlimPrepProducts::Wgtl,
                "gdn_fwd_slimprep_bf16_k128_wgtl",
                4,
                54_784,
            ),
        ] {
            assert_eq!(SlimPrepProducts::from_switch(Some(value)), form);
            let pass = form.pass(SLIM_PREP);
            assert_eq!(pass.pass.entry("bf16", 128), entry);
            assert_eq!(
                (
                    pass.min_blocks,
                    pass.pass.smem_bytes(128),
                    pass.max_carveout
                ),
                (blocks, smem, true)
            );
            for tag in ["bf16", "f16"] {
                assert!(fwd.has_function(&pass.pass.entry(tag, 128)));
            }
            assert_eq!(form.pass(SLIM_PREP_OV), SLIM_PREP_OV);
            assert_eq!(form.pass(PREP_VARIANTS[1].pass), PREP_VARIANTS[1].pass);
            // The uncut slim forward at (4, 8192, 16) runs it (wgt by the rule).
            let f = facts(4, 32768, 16, 128, false);
            let mut c = FwdChoice::default_for(&f, 132);
            assert_eq!(c.prep_pass(), SLIM_PREP_WGT);
            assert!(c.reads_io_maps(128), "the rule's plan encodes the maps");
            c.slim_prep = SlimPrepProducts::Mma;
            assert_eq!(c.prep_pass(), SLIM_PREP);
            c.slim_prep = form;
            assert_eq!(c.prep_pass(), pass);
            // Session 36 (tp36): only the box-loading forms make the plan encode the maps.
            let boxes = matches!(form, SlimPrepProducts::Wgt | SlimPrepProducts::Wgtl);
            assert_eq!(c.reads_io_maps(128), boxes, "{value}");
            let read = if boxes {
                tma_maps::IoMapSet::QK
            } else {
                tma_maps::IoMapSet::NONE
            };
            assert_eq!(c.io_maps_read(128), read, "{value}: q, k only");
            assert_eq!(tma_maps::reads_io_maps(entry), boxes, "{entry}");
        }
    }
}
