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

use crate::cuda::{Function, LaunchConfig, Launcher, compile_or_load, probe};
use crate::dispatch::engine::{BuildContext, CompiledPlan, Engine, SupportQuery};
use crate::dispatch::exec_types::{ExecContext, VariantPack};
use crate::dispatch::knobs::Knobs;
use crate::dispatch::target::Target;
use crate::error::{Error, Result};
use crate::ir::DataType;

use super::analyzer::{GdnFacts, GdnOp, PortFacts};
use super::backward::GdnBwdPlan;
use super::params::{
    FwdParams, KernelDtype, OFFSETS_THREADS, PREP_THREADS, SCAN_WARPS, WorkspaceLayout, flags,
    max_chunks, prep_smem_bytes, scan_smem_bytes,
};

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
    no_checkpoints,
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

fn no_checkpoints(f: &GdnFacts, _: &Target) -> Option<String> {
    (f.checkpoint_every > 0)
        .then(|| "state checkpoints (checkpoint_every_n_tokens > 0) are not supported".to_owned())
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
            let names = [
                "gdn_bwd_chunk_offsets".to_owned(),
                format!("gdn_bwd_prep_{tag}_k{k}"),
                format!("gdn_bwd_fscan_{tag}_k{k}"),
                format!("gdn_bwd_dscan_{tag}_k{k}"),
                format!("gdn_bwd_tokens_{tag}_k{k}"),
                format!("gdn_bwd_fold_{tag}_k{k}"),
                "gdn_bwd_params".to_owned(),
                format!("gdn_bwd_dscan_mma_{tag}_k{k}"),
                format!("gdn_bwd_tokens_mma_{tag}_k{k}"),
                format!("gdn_bwd_dscan_io_{tag}_k{k}"),
                format!("gdn_bwd_tokens_tc_{tag}_k{k}"),
            ];
            let mut fns = Vec::with_capacity(names.len());
            for n in &names {
                fns.push(module.function(n)?);
            }
            // SAFETY: the default-stream sentinel is always valid.
            let launcher = unsafe { Launcher::bind(std::ptr::null_mut(), Some(dev.ordinal)) }?;
            for f in &fns {
                launcher.prepare(f)?;
            }
            return Ok(Box::new(GdnBwdPlan::new(facts, fns)?));
        }
        let module = compile_or_load("gdn_fwd", &info, &[])?;
        let offsets = module.function("gdn_chunk_offsets")?;
        let prep = module.function(&format!("gdn_fwd_prep_{tag}_k{}", facts.k))?;
        let scan = module.function(&format!("gdn_fwd_scan_{tag}_k{}", facts.k))?;
        // Resolve the kernels and raise their shared-memory limits once, here, in the context
        // the device's default stream implies (execute re-does it only for another context).
        // SAFETY: the default-stream sentinel is always valid.
        let launcher = unsafe { Launcher::bind(std::ptr::null_mut(), Some(dev.ordinal)) }?;
        for f in [&offsets, &prep, &scan] {
            launcher.prepare(f)?;
        }
        Ok(Box::new(GdnFwdPlan::new(facts, offsets, prep, scan)?))
    }
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
}

/// A built forward plan: shape-specialised parameters, the workspace layout and the kernels.
pub struct GdnFwdPlan {
    template: FwdParams,
    uids: PortUids,
    layout: WorkspaceLayout,
    grid_prep: (u32, u32, u32),
    grid_scan: (u32, u32, u32),
    smem_prep: u32,
    smem_scan: u32,
    offsets: Function,
    prep: Function,
    scan: Function,
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

impl GdnFwdPlan {
    fn new(f: &GdnFacts, offsets: Function, prep: Function, scan: Function) -> Result<GdnFwdPlan> {
        let need = |p: &str| -> Result<&PortFacts> {
            f.port(p)
                .ok_or_else(|| Error::Internal(format!("gdn_sm90: port {p} is not bound")))
        };
        let uid = |p: &str| f.port(p).map(|x| x.uid);
        let ho = f.heads.3;
        let n = f.n_seqs as u64;
        let t = f.total_tokens as u64;
        let chunks = max_chunks(n, t);
        let template = fwd_template(f)?;
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
        };
        let (k, v) = (f.k as u64, f.v as u64);
        Ok(GdnFwdPlan {
            template,
            uids,
            layout: WorkspaceLayout::new(n, t, ho as u64, k, v),
            grid_prep: (chunks as u32, ho as u32, 1),
            grid_scan: (
                (v / (16 * u64::from(SCAN_WARPS))) as u32,
                ho as u32,
                n as u32,
            ),
            smem_prep: prep_smem_bytes(k, v),
            smem_scan: scan_smem_bytes(k),
            offsets,
            prep,
            scan,
        })
    }

    /// The parameter block for one call (addresses from the pack, workspace at `ws`).
    fn bind(&self, pack: &VariantPack, ws: u64) -> Result<FwdParams> {
        let addr = |uid: i64| -> Result<u64> { Ok(pack.ptr(pack.index_of(uid)?) as u64) };
        let opt = |uid: Option<i64>| -> Result<u64> { uid.map_or(Ok(0), addr) };
        let u = &self.uids;
        let mut p = FwdParams {
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
        };
        self.layout.bind(ws, &mut p);
        Ok(p)
    }
}

impl CompiledPlan for GdnFwdPlan {
    fn workspace_size(&self) -> u64 {
        self.layout.total
    }

    fn execute(&self, pack: &VariantPack, ctx: &ExecContext) -> Result<()> {
        let ws = ctx.workspace_region(self.layout.total, ENGINE_NAME)? as u64;
        let mut p = self.bind(pack, ws)?;
        // SAFETY: the stream comes from the caller's handle and outlives this call.
        let launcher = unsafe { Launcher::bind(ctx.stream.cast(), ctx.device) }?;
        let launches = [
            (&self.offsets, (1, 1, 1), OFFSETS_THREADS, 0),
            (&self.prep, self.grid_prep, PREP_THREADS, self.smem_prep),
            (&self.scan, self.grid_scan, SCAN_WARPS * 32, self.smem_scan),
        ];
        // Every kernel takes the one parameter block by value; the driver copies it at launch.
        let mut params = [(&raw mut p).cast::<std::ffi::c_void>()];
        for (f, grid, threads, smem) in launches {
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
            unsafe { launcher.launch_raw(f, &cfg, &mut params) }?;
        }
        Ok(())
    }
}
