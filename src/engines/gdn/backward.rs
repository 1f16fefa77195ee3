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
//! The reverse scan and every product of the token stage run on the tensor cores
//! (`gdn_bwd_dscan_io_*`, writing `dS'` in the io dtype, and `gdn_bwd_tokens_tc4_*`, which reads
//! the states entering the chunks in the io dtype: the replays store them so under `BWD_S_IO`,
//! half of the fp32 traffic; `DNNPLAN_GDN_BWD_TOKENS=tc3` keeps the fp32 states); the token
//! stage writes `dQ` / `dK` / `dV` of a port with `HO` heads itself (flag `BWD_DIRECT`), so the
//! fold runs only for grouped ports (and not at all without head groups). The token kernel
//! `gdn_bwd_tokens_tc3_*` is session 4's `gdn_bwd_tokens_tc_*` with its latency cuts (coalesced
//! `dv` / `dβ` pass, raw gate and `β` loaded up front, one-warp reverse cumsum: `tc2`) and fewer
//! instructions (ldmatrix.x4 fragments, float2-staged fp32 results, each thread's row columns in
//! adjacent pairs for 32/64-bit shared and global accesses). Diagnostics, read once when the plan
//! is built (never in execute), serve the benchmarks (bench/gdn_results.md):
//! `DNNPLAN_GDN_BWD_TOKENS=tc2` / `tc` run the earlier token kernels, `DNNPLAN_GDN_BWD_TOKENS=mma`
//! selects session 3's pair (`gdn_bwd_dscan_mma_*` with fp32 `dS'`, `gdn_bwd_tokens_mma_*` with the
//! CUDA-core tail), `DNNPLAN_GDN_BWD_TOKENS=fp32` the fp32
//! CUDA-core token stage, `DNNPLAN_GDN_BWD_DSCAN=fp32` (with either of those) the fp32 CUDA-core
//! reverse scan, and `DNNPLAN_GDN_BWD_STEPS=n` keeps only the first `n` launches (per-stage timing
//! by differences; the gradients are then incomplete). The factor kernel is the 8-warp
//! `gdn_bwd_prep6_*` (256 threads, one tile per block, 4 blocks per SM); the forward's switch
//! `DNNPLAN_GDN_FWD_PREP=v3|v4|v5` runs `gdn_bwd_prep3_*` / `_prep4_*` / `_prep5_*`, `=v1|v2` the
//! 4-warp `gdn_bwd_prep_*` (all bitwise the same outputs; see [`PrepVariant`]).
//!
//! Long sequences on few (sequence, head) pairs run the two sequential stages (the forward-state
//! replay and the reverse scan) as the exact piece chain (`kernels/include/gdn_bwd_chain.cuh`;
//! the fp64 algebra is [`super::chunked::backward_piece_chain`]): each sequence's chunks are cut
//! into `P` pieces; one summary launch gives every piece's `H_j` and transition (`M_j` for the
//! forward chain, `Mᵀ_j` for the reverse one; `gdn_bwd_psum_*`), the forward's fp32 chain seeds
//! every piece's replay (`gdn_bwd_pchain_k*`, `gdn_bwd_fscanp_*`), then the reverse summaries
//! `G_j` (`gdn_bwd_dsum_*`) and the reverse fp32 chain seed every piece's reverse scan
//! (`gdn_bwd_dchain_k*`, `gdn_bwd_dscanp_*`). [`BwdSchedule`] picks `P`
//! (pinned by `backward_schedule_rule_at_the_benchmark_shapes`); `DNNPLAN_GDN_BWD_PIECES=n`
//! forces `n` pieces (1 = off; read at plan build; only with the default token stage).

use crate::cuda::{Function, LaunchConfig, Launcher};
use crate::dispatch::engine::CompiledPlan;
use crate::dispatch::exec_types::{ExecContext, VariantPack};
use crate::error::{Error, Result};

use super::analyzer::GdnFacts;
use super::engine::{ENGINE_NAME, PrepVariant, fwd_template, kernel_dtype};
use super::params::{
    BwdChainParams, BwdParams, BwdPieceLayout, BwdWorkspaceLayout, CHAIN_ROWS, CHAIN_THREADS,
    DSCAN_MMA_WARPS, DSCAN_THREADS, DSCAN_VS, OFFSETS_THREADS, PARAM_THREADS, SCAN_WARPS,
    SUM_STAGES, TOK_THREADS, dscan_mma_smem_bytes, dscan_smem_bytes, fast_smem_bytes, flags,
    max_chunks, scan_smem_bytes, tokens_smem_bytes, tokens_tc_smem_bytes,
};

/// Ports the backward reads or writes, in [`BwdPlanUids`] order.
const PORTS: [&str; 19] = [
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
];

/// Required ports (the rest are optional).
const REQUIRED: [&str; 12] = [
    "q",
    "k",
    "v",
    "g",
    "beta",
    "cu_seqlens",
    "dO",
    "dQ",
    "dK",
    "dV",
    "dG",
    "dBeta",
];

/// One launch: kernel index, grid, threads, dynamic shared memory.
type Step = (usize, (u32, u32, u32), u32, u32);

/// Kernels of the `gdn_bwd` module a backward plan resolves, in the order of
/// [`GdnBwdPlan::new`]'s `kernels` (`tag` = `bf16` / `f16`, `k` = K = V; `prep`: the factor
/// kernel, which the plan must then be built with too).
pub fn kernel_names(tag: &str, k: i64, prep: PrepVariant) -> [String; 20] {
    [
        "gdn_bwd_chunk_offsets".to_owned(),
        prep.kernel_name("bwd", tag, k),
        format!("gdn_bwd_fscan_{tag}_k{k}"),
        format!("gdn_bwd_dscan_{tag}_k{k}"),
        format!("gdn_bwd_tokens_{tag}_k{k}"),
        format!("gdn_bwd_fold_{tag}_k{k}"),
        "gdn_bwd_params".to_owned(),
        format!("gdn_bwd_dscan_mma_{tag}_k{k}"),
        format!("gdn_bwd_tokens_mma_{tag}_k{k}"),
        format!("gdn_bwd_dscan_io_{tag}_k{k}"),
        format!("gdn_bwd_tokens_tc_{tag}_k{k}"),
        format!("gdn_bwd_psum_{tag}_k{k}"),
        format!("gdn_bwd_pchain_k{k}"),
        format!("gdn_bwd_fscanp_{tag}_k{k}"),
        format!("gdn_bwd_dsum_{tag}_k{k}"),
        format!("gdn_bwd_dchain_k{k}"),
        format!("gdn_bwd_dscanp_{tag}_k{k}"),
        format!("gdn_bwd_tokens_tc2_{tag}_k{k}"),
        format!("gdn_bwd_tokens_tc3_{tag}_k{k}"),
        format!("gdn_bwd_tokens_tc4_{tag}_k{k}"),
    ]
}

/// The backward's schedule of its sequential stages.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BwdSchedule {
    /// Pieces per sequence of the forward-state replay and the reverse scan (1 = no piece chain).
    pub pieces: u64,
}

/// When the backward cuts sequences into pieces, as data: the sequential stages run
/// `blocks = N · HO · V/64` blocks; when they fill at most `1 / min_fill_inv` of the GPU and
/// the sequences hold at least `min_avg_chunks` chunks on average (and `batch_invariant` is
/// off: the cut would depend on the batch), `P = ⌊SMs / blocks⌋`, at most `max_pieces`.
pub struct PieceRule {
    /// Cut only when `min_fill_inv · blocks ≤ SMs`.
    pub min_fill_inv: u64,
    /// Cut only sequences of at least this many chunks on average.
    pub min_avg_chunks: u64,
    /// The most pieces per sequence.
    pub max_pieces: u64,
}

/// The backward's rule (the forward's constants; H200, (1, 32768, 16): P = 3, 4 (this rule) and
/// 8 measured 4.942, 4.565 and 4.858 ms against 6.176 ms uncut; bench/gdn_results.md).
pub const BWD_PIECE_RULE: PieceRule = PieceRule {
    min_fill_inv: 2,
    min_avg_chunks: 8,
    max_pieces: 16,
};

impl BwdSchedule {
    /// The schedule without overrides, for `f` on a GPU of `sms` multiprocessors.
    pub fn default_for(f: &GdnFacts, sms: u64) -> BwdSchedule {
        let r = &BWD_PIECE_RULE;
        let blocks = f.n_seqs as u64 * f.heads.3 as u64 * (f.v as u64 / 64);
        let avg_chunks = f.total_tokens as u64 / (64 * (f.n_seqs as u64).max(1));
        let cut = !f.batch_invariant
            && blocks > 0
            && r.min_fill_inv * blocks <= sms
            && avg_chunks >= r.min_avg_chunks;
        BwdSchedule {
            pieces: if cut {
                (sms / blocks).clamp(1, r.max_pieces)
            } else {
                1
            },
        }
    }

    /// [`BwdSchedule::default_for`], then `DNNPLAN_GDN_BWD_PIECES=n` (diagnostics; 1..=64).
    pub fn pick(f: &GdnFacts, sms: u64) -> BwdSchedule {
        let mut s = BwdSchedule::default_for(f, sms);
        if let Some(p) = std::env::var("DNNPLAN_GDN_BWD_PIECES")
            .ok()
            .and_then(|x| x.parse::<u64>().ok())
        {
            s.pieces = p.clamp(1, 64);
        }
        s
    }
}

/// A built backward plan.
pub struct GdnBwdPlan {
    template: BwdParams,
    /// Uid per entry of [`PORTS`] (`None`: not bound).
    uids: [Option<i64>; 19],
    layout: BwdWorkspaceLayout,
    pieces: BwdPieceLayout,
    schedule: BwdSchedule,
    steps: Vec<Step>,
    kernels: Vec<Function>,
}

impl GdnBwdPlan {
    /// Plans the launches for `f` on a GPU of `sms` multiprocessors with the module's kernels in
    /// the order of [`kernel_names`]: offsets, prep, fscan, dscan (fp32), tokens (fp32), fold,
    /// params, dscan (tensor cores, fp32 `dS'`), tokens (tensor-core products, CUDA-core tail),
    /// dscan (io `dS'`), tokens (tensor cores throughout, `tc`), the piece chain's psum, pchain,
    /// fscanp, dsum, dchain, dscanp, then tokens `tc2` (the latency cuts), `tc3` (`tc2` with
    /// ldmatrix fragments and paired row accesses) and `tc4` (`tc3` reading the io-dtype `S_c`
    /// that the replays write under `S_IO`; the default).
    pub fn new(f: &GdnFacts, kernels: Vec<Function>, sms: u64) -> Result<GdnBwdPlan> {
        if kernels.len() != 20 {
            return Err(Error::Internal(format!(
                "{ENGINE_NAME}: the backward needs 20 kernels, got {}",
                kernels.len()
            )));
        }
        for p in REQUIRED {
            if f.port(p).is_none() {
                return Err(Error::Internal(format!(
                    "{ENGINE_NAME}: port {p} is not bound"
                )));
            }
        }
        let mut uids = [None; 19];
        for (u, p) in uids.iter_mut().zip(PORTS) {
            *u = f.port(p).map(|x| x.uid);
        }
        let (n, t, ho) = (f.n_seqs as u64, f.total_tokens as u64, f.heads.3 as u64);
        let (k, v) = (f.k as u64, f.v as u64);
        let chunks = max_chunks(n, t) as u32;
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
        let tc = tokens_env != "fp32" && tokens_env != "mma";
        let dscan_fp32 = !tc && std::env::var("DNNPLAN_GDN_BWD_DSCAN").is_ok_and(|x| x == "fp32");
        if tc {
            template.f.flags |= flags::BWD_DIRECT;
        }
        // The default token kernel (tc4) reads the states entering the chunks in the io dtype.
        let s_io = tc && !matches!(tokens_env.as_str(), "tc" | "tc2" | "tc3");
        if s_io {
            template.f.flags |= flags::BWD_S_IO;
        }
        let (hq, hk, hv) = (f.heads.0 as u64, f.heads.1 as u64, f.heads.2 as u64);
        let fold_needed = !tc || hq != ho || hk != ho || hv != ho;
        // The piece chain replaces fscan and the io reverse scan (default token stage only).
        let mut schedule = BwdSchedule::pick(f, sms);
        if !tc {
            schedule.pieces = 1;
        }
        let pieces = schedule.pieces;
        let (np, np1) = ((n * pieces) as u32, (n * pieces.saturating_sub(1)) as u32);
        let np2 = (n * (2 * pieces).saturating_sub(1)) as u32;
        let scan_x = (v / (16 * u64::from(SCAN_WARPS))) as u32;
        let dscan_x = (v / (16 * u64::from(DSCAN_MMA_WARPS))) as u32;
        let chain_grid = ((v / CHAIN_ROWS) as u32, ho32, n32);
        let mut steps: Vec<Step> = vec![(0, (1, 1, 1), OFFSETS_THREADS, 0), {
            let (grid, threads, smem) =
                PrepVariant::from_env().launch_shape(chunks, ho32, k, v, sms);
            (1, grid, threads, smem)
        }];
        if pieces > 1 {
            steps.extend([
                (
                    11,
                    ((v / 64) as u32, ho32, np2),
                    128,
                    fast_smem_bytes(k, 4, SUM_STAGES, false),
                ),
                (12, chain_grid, CHAIN_THREADS, 0),
                (13, (scan_x, ho32, np), SCAN_WARPS * 32, scan_smem_bytes(k)),
                (
                    14,
                    (dscan_x, ho32, np1),
                    DSCAN_MMA_WARPS * 32,
                    dscan_mma_smem_bytes(k),
                ),
                (15, chain_grid, CHAIN_THREADS, 0),
                (
                    16,
                    (dscan_x, ho32, np),
                    DSCAN_MMA_WARPS * 32,
                    dscan_mma_smem_bytes(k),
                ),
            ]);
        } else {
            steps.push((2, (scan_x, ho32, n32), SCAN_WARPS * 32, scan_smem_bytes(k)));
            steps.push(if dscan_fp32 {
                (
                    3,
                    ((v / u64::from(DSCAN_VS)) as u32, ho32, n32),
                    DSCAN_THREADS,
                    dscan_smem_bytes(k),
                )
            } else {
                (
                    if tc { 9 } else { 7 },
                    (dscan_x, ho32, n32),
                    DSCAN_MMA_WARPS * 32,
                    dscan_mma_smem_bytes(k),
                )
            });
        }
        steps.push((
            match tokens_env.as_str() {
                "fp32" => 4,
                "mma" => 8,
                "tc" => 10,
                "tc2" => 17,
                "tc3" => 18,
                _ => 19,
            },
            (chunks, ho32, 1),
            TOK_THREADS,
            if tc {
                tokens_tc_smem_bytes(k)
            } else {
                tokens_smem_bytes(k)
            },
        ));
        if fold_needed {
            steps.push((5, (t as u32, 3, 1), k.max(v) as u32, 0));
        }
        if f.port("d_a_log").is_some() || f.port("d_dt_bias").is_some() {
            steps.push((6, (ho32, 1, 1), PARAM_THREADS, 2 * PARAM_THREADS * 4));
        }
        if let Some(n) = std::env::var("DNNPLAN_GDN_BWD_STEPS")
            .ok()
            .and_then(|x| x.parse::<usize>().ok())
        {
            steps.truncate(n);
        }
        let layout = BwdWorkspaceLayout::new(n, t, ho, k, v, s_io);
        Ok(GdnBwdPlan {
            template,
            uids,
            layout,
            pieces: BwdPieceLayout::new(layout.total, n, ho, k, v, pieces),
            schedule,
            steps,
            kernels,
        })
    }

    /// The schedule this plan runs.
    pub fn schedule(&self) -> BwdSchedule {
        self.schedule
    }

    fn bind(&self, pack: &VariantPack, ws: u64) -> Result<BwdChainParams> {
        let mut a = [0u64; 19];
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
        self.layout.bind(ws, &mut p);
        let mut cp = BwdChainParams {
            b: p,
            ..BwdChainParams::default()
        };
        self.pieces.bind(ws, self.schedule.pieces as i32, &mut cp);
        Ok(cp)
    }
}

impl CompiledPlan for GdnBwdPlan {
    fn workspace_size(&self) -> u64 {
        self.pieces.total
    }

    fn execute(&self, pack: &VariantPack, ctx: &ExecContext) -> Result<()> {
        let ws = ctx.workspace_region(self.pieces.total, ENGINE_NAME)? as u64;
        let mut p = self.bind(pack, ws)?;
        // SAFETY: the stream comes from the caller's handle and outlives this call.
        let launcher = unsafe { Launcher::bind(ctx.stream.cast(), ctx.device) }?;
        let mut params = [(&raw mut p).cast::<std::ffi::c_void>()];
        for &(kernel, grid, threads, smem) in &self.steps {
            if grid.0 == 0 || grid.1 == 0 || grid.2 == 0 {
                continue;
            }
            let cfg = LaunchConfig {
                grid,
                block: (threads, 1, 1),
                shared_mem_bytes: smem,
                cluster: None,
            };
            // SAFETY: every address in `p` is a device buffer of the pack or of the checked
            // workspace region, and `p` (BwdChainParams, BwdParams first) is the kernels' only
            // parameter (the driver copies each kernel's declared size).
            unsafe { launcher.launch_raw(&self.kernels[kernel], &cfg, &mut params) }?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::gdn::analyzer::GdnOp;

    fn facts(n: i64, t: i64, ho: i64, d: i64, batch_invariant: bool) -> GdnFacts {
        crate::engines::gdn::analyzer::test_facts(GdnOp::Backward, n, t, ho, d, batch_invariant)
    }

    #[test]
    fn backward_schedule_rule_at_the_benchmark_shapes() {
        let pieces =
            |n, t, ho, d, bi| BwdSchedule::default_for(&facts(n, t, ho, d, bi), 132).pieces;
        // (4, 8192, 16): 64 pairs x 2 value slices = 128 blocks fill the GPU: no cut.
        assert_eq!(pieces(4, 32768, 16, 128, false), 1);
        // (1, 32768, 16): 32 blocks -> 4 pieces of 128 chunks (128 blocks per piece pass).
        assert_eq!(pieces(1, 32768, 16, 128, false), 4);
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
        // At the edge: 66 blocks fill half of 132 SMs -> 2 pieces; 67 do not.
        assert_eq!(pieces(33, 33 * 4096, 1, 128, false), 2);
        assert_eq!(pieces(67, 67 * 4096, 1, 64, false), 1);
    }
}
