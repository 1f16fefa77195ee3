//! The built `gdn_bwd` plan of `gdn_sm90`: up to seven launches of the bundled `gdn_bwd` module.
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
//! (`gdn_bwd_dscan_io_*`, writing `dS'` in the io dtype, and `gdn_bwd_tokens_tc3_*`); the token
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
//! `gdn_bwd_prep3_*` (256 threads); `DNNPLAN_GDN_FWD_PREP=v1|v2` (the forward's switch) runs the
//! 4-warp `gdn_bwd_prep_*` instead (bitwise the same outputs).

use crate::cuda::{Function, LaunchConfig, Launcher};
use crate::dispatch::engine::CompiledPlan;
use crate::dispatch::exec_types::{ExecContext, VariantPack};
use crate::error::{Error, Result};

use super::analyzer::GdnFacts;
use super::engine::{ENGINE_NAME, fwd_template, kernel_dtype, prep_v3_selected};
use super::params::{
    BwdParams, BwdWorkspaceLayout, DSCAN_MMA_WARPS, DSCAN_THREADS, DSCAN_VS, OFFSETS_THREADS,
    PARAM_THREADS, PREP_THREADS, PREP3_THREADS, SCAN_WARPS, TOK_THREADS, dscan_mma_smem_bytes,
    dscan_smem_bytes, flags, max_chunks, prep_smem_bytes, prep3_smem_bytes, scan_smem_bytes,
    tokens_smem_bytes, tokens_tc_smem_bytes,
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

/// A built backward plan.
pub struct GdnBwdPlan {
    template: BwdParams,
    /// Uid per entry of [`PORTS`] (`None`: not bound).
    uids: [Option<i64>; 19],
    layout: BwdWorkspaceLayout,
    steps: Vec<Step>,
    kernels: Vec<Function>,
}

impl GdnBwdPlan {
    /// Plans the launches for `f` with the module's kernels in the order
    /// offsets, prep, fscan, dscan (fp32), tokens (fp32), fold, params, dscan (tensor cores, fp32
    /// `dS'`), tokens (tensor-core products, CUDA-core tail), dscan (io `dS'`), tokens (tensor
    /// cores throughout), tokens (the same with the latency cuts, `tc2`), tokens (`tc2` with
    /// ldmatrix fragments and paired row accesses, `tc3`).
    pub fn new(f: &GdnFacts, kernels: Vec<Function>) -> Result<GdnBwdPlan> {
        if kernels.len() != 13 {
            return Err(Error::Internal(format!(
                "{ENGINE_NAME}: the backward needs 13 kernels, got {}",
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
        let (hq, hk, hv) = (f.heads.0 as u64, f.heads.1 as u64, f.heads.2 as u64);
        let fold_needed = !tc || hq != ho || hk != ho || hv != ho;
        let mut steps: Vec<Step> = vec![
            (0, (1, 1, 1), OFFSETS_THREADS, 0),
            if prep_v3_selected() {
                (1, (chunks, ho32, 1), PREP3_THREADS, prep3_smem_bytes(k, v))
            } else {
                (1, (chunks, ho32, 1), PREP_THREADS, prep_smem_bytes(k, v))
            },
            (
                2,
                ((v / (16 * u64::from(SCAN_WARPS))) as u32, ho32, n32),
                SCAN_WARPS * 32,
                scan_smem_bytes(k),
            ),
            if dscan_fp32 {
                (
                    3,
                    ((v / u64::from(DSCAN_VS)) as u32, ho32, n32),
                    DSCAN_THREADS,
                    dscan_smem_bytes(k),
                )
            } else {
                (
                    if tc { 9 } else { 7 },
                    ((v / (16 * u64::from(DSCAN_MMA_WARPS))) as u32, ho32, n32),
                    DSCAN_MMA_WARPS * 32,
                    dscan_mma_smem_bytes(k),
                )
            },
            (
                match tokens_env.as_str() {
                    "fp32" => 4,
                    "mma" => 8,
                    "tc" => 10,
                    "tc2" => 11,
                    _ => 12,
                },
                (chunks, ho32, 1),
                TOK_THREADS,
                if tc {
                    tokens_tc_smem_bytes(k)
                } else {
                    tokens_smem_bytes(k)
                },
            ),
        ];
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
        Ok(GdnBwdPlan {
            template,
            uids,
            layout: BwdWorkspaceLayout::new(n, t, ho, k, v),
            steps,
            kernels,
        })
    }

    fn bind(&self, pack: &VariantPack, ws: u64) -> Result<BwdParams> {
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
        Ok(p)
    }
}

impl CompiledPlan for GdnBwdPlan {
    fn workspace_size(&self) -> u64 {
        self.layout.total
    }

    fn execute(&self, pack: &VariantPack, ctx: &ExecContext) -> Result<()> {
        let ws = ctx.workspace_region(self.layout.total, ENGINE_NAME)? as u64;
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
            // workspace region, and `p` is the kernels' only parameter.
            unsafe { launcher.launch_raw(&self.kernels[kernel], &cfg, &mut params) }?;
        }
        Ok(())
    }
}
