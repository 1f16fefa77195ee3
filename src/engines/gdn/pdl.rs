//! The launch chain of one GDN execute: programmatic dependent launch (PDL) on the boundaries
//! between the kernels of one forward or backward execute, chosen once at plan build
//! (`DNNPLAN_GDN_PDL`). Both plans list their launches ([`Launch`]: kernel, grid, threads, shared
//! memory, programmatic) and run them as [`GdnPlan`]s.
//!
//! Contract (device side: `dnnp_pdl_enter` in `kernels/include/dnnp_overlap.cuh`, called as the
//! first statement of every `gdn_fwd` / `gdn_bwd` entry):
//! - Every block of every GDN kernel executes `griddepcontrol.wait` before anything else, on
//!   every path (before any early exit), so it reads nothing an earlier kernel of the execute
//!   writes and writes nothing one reads before that kernel completed. Since every block waited,
//!   a kernel's completion implies its predecessor's, so a wait covers the whole chain before it.
//! - The exception is the overlapped token stage (`gdn_bwd_tokens_tc{5,11,12,13}_ov`), which keeps
//!   `kernels/include/gdn_bwd_overlap.cuh`'s contract: it is launched programmatic after the
//!   overlapped reverse scan (always, PDL on or off), its blocks read the prep's and replay's
//!   outputs without a wait because its grid starts only after every reverse-scan block called
//!   `griddepcontrol.launch_dependents`, which each does after its own wait; its last block waits
//!   before it exits, so its completion implies the reverse scan's.
//! - Likewise the forward's summary beside the first piece's output scan
//!   (`gdn_fwd_slimsum_*_k128_gxr` after `gdn_fwd_slimscan_*_k128_w4dgx0` or `_w4gx0`, sessions 32, 34,
//!   [`super::engine::SLIM_PIECES_FIRST`]): launched programmatic always, it starts after every
//!   first-piece block called `griddepcontrol.launch_dependents` right after its own wait, and every
//!   one of its blocks waits before it exits.
//! - The first kernel of an execute is launched normally: the caller's earlier work on the
//!   stream is not ours to reason about. With PDL on, every later kernel is launched with
//!   `LaunchConfig::programmatic`; no memset sits between the kernels of a GDN execute (the
//!   backward's hand-over flags are zeroed by its first kernel).
//! - Numerics do not depend on the mode: it changes when a grid may start, never what any thread
//!   computes (bitwise by construction; the GPU tests' hashes check it). CUDA-graph capture turns
//!   the programmatic launches into programmatic edges.

use std::sync::OnceLock;

use crate::cuda::{Function, LaunchConfig, Launcher};
use crate::dispatch::engine::CompiledPlan;
use crate::dispatch::exec_types::{ExecContext, VariantPack};
use crate::error::Result;
use crate::pack::GuardTable;

use super::engine::ENGINE_NAME;
use super::params::flags;

/// How a plan launches the kernels after the first one of an execute.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PdlMode {
    /// Stream order: each kernel starts after the previous one completed (`DNNPLAN_GDN_PDL=0`).
    Off,
    /// Programmatic launches, the next grid launched as this one's blocks exit (no explicit
    /// trigger): its launch latency hides behind this grid's tail and memory flush
    /// (`DNNPLAN_GDN_PDL=1`, the default: 2-11 µs faster per execute than [`PdlMode::Off`] at the
    /// four benchmark shapes in both directions on the H200, bench/gdn_results.md session 10).
    OnExit,
    /// Programmatic launches; each kernel triggers the next one's launch right after its entry
    /// wait (`FLAG_PDL_TRIGGER`), so the next grid's blocks are resident and waiting when this
    /// one completes (`DNNPLAN_GDN_PDL=early`; measurement only: slower than
    /// [`PdlMode::OnExit`] and than [`PdlMode::Off`] at most shapes, the waiting blocks hold SM
    /// resources during the tail and change where the next grid's blocks land).
    Early,
}

impl PdlMode {
    /// The mode without `DNNPLAN_GDN_PDL`.
    pub const DEFAULT: PdlMode = PdlMode::OnExit;

    /// Reads `DNNPLAN_GDN_PDL` (`0`, `1`, `early`; anything else: [`PdlMode::DEFAULT`]).
    pub fn from_env() -> PdlMode {
        Self::parse(std::env::var("DNNPLAN_GDN_PDL").ok().as_deref())
    }

    /// The mode a value of `DNNPLAN_GDN_PDL` names.
    pub fn parse(value: Option<&str>) -> PdlMode {
        match value {
            Some("0") => PdlMode::Off,
            Some("1") => PdlMode::OnExit,
            Some("early") => PdlMode::Early,
            _ => PdlMode::DEFAULT,
        }
    }

    /// The parameter-block flag bits the mode sets (`FwdParams::flags`).
    pub fn param_flags(self) -> i32 {
        match self {
            PdlMode::Early => flags::PDL_TRIGGER,
            PdlMode::Off | PdlMode::OnExit => 0,
        }
    }

    /// Whether the launch after `launched` earlier launches of the same execute is programmatic
    /// (never the first one).
    pub fn programmatic(self, launched: usize) -> bool {
        self != PdlMode::Off && launched > 0
    }
}

/// One launch of an execute, as a plan lists it: the kernel, grid, threads per block, dynamic
/// shared memory, and whether it is launched programmatic (the mode's chain, or an overlapped
/// pair's consumer).
pub type Launch<'a, F> = (&'a F, (u32, u32, u32), u32, u32, bool);

/// A built GDN plan as one execute runs it: its workspace bytes, its parameter block for a call
/// and its launches. Every such plan is a [`CompiledPlan`]: execute carves the workspace from the
/// caller's, binds the block there, then runs the launches in order on the context's stream,
/// every kernel taking the block by value (the driver copies each kernel's declared size, a
/// prefix of the block, at launch).
///
/// # Safety
/// `bind` must put only device buffers of the pack and of the workspace region it is given into
/// the block, and `Params` must start with every launched kernel's only parameter.
pub unsafe trait GdnPlan: Send + Sync {
    /// The kernels' parameter block.
    type Params;

    /// Workspace bytes the plan needs.
    fn workspace(&self) -> u64;

    /// The parameter block for one call: the pack's addresses, the workspace region at `ws`.
    fn bind(&self, pack: &VariantPack, ws: u64) -> Result<Self::Params>;

    /// The launches of one execute, in order.
    fn launch_list(&self) -> impl Iterator<Item = Launch<'_, Function>>;

    /// The bound ports (name, uid) whose base addresses the first execute settles into
    /// [`GdnPlan::guards`] ([`super::port_guards`]).
    fn bound_ports(&self) -> Vec<(&'static str, i64)>;

    /// The plan's port guards, settled at its first execute.
    fn guards(&self) -> &OnceLock<GuardTable>;

    /// The thread-block cluster shape of every launch (each divides its grid), or none.
    fn cluster(&self) -> Option<(u32, u32, u32)> {
        None
    }
}

impl<T: GdnPlan> CompiledPlan for T {
    fn workspace_size(&self) -> u64 {
        self.workspace()
    }

    fn execute(&self, pack: &VariantPack, ctx: &ExecContext) -> Result<()> {
        self.guards()
            .get_or_init(|| super::port_guards::settle(pack.layout(), self.bound_ports()))
            .check(pack)?;
        let ws = ctx.workspace_region(self.workspace(), ENGINE_NAME)? as u64;
        let mut p = self.bind(pack, ws)?;
        // SAFETY: the stream comes from the caller's handle and outlives this call.
        let launcher = unsafe { Launcher::bind(ctx.stream.cast(), ctx.device) }?;
        let mut params = [(&raw mut p).cast::<std::ffi::c_void>()];
        for (function, grid, threads, smem, programmatic) in self.launch_list() {
            let cfg = LaunchConfig {
                grid,
                block: (threads, 1, 1),
                shared_mem_bytes: smem,
                cluster: self.cluster(),
                programmatic,
            };
            // SAFETY: `p` holds only the pack's and the region's device buffers and starts with
            // every kernel's only parameter (GdnPlan's contract).
            unsafe { launcher.launch_raw(function, &cfg, &mut params) }?;
        }
        Ok(())
    }
}

/// One launch as the CPU tests and the benchmark see a plan without a device: entry name, grid,
/// threads, dynamic shared memory, programmatic.
pub type PlannedLaunch = (String, (u32, u32, u32), u32, u32, bool);

/// `launches` by entry name (the CPU tests' plans resolve each kernel to its name).
pub(super) fn by_name<'a>(
    launches: impl Iterator<Item = Launch<'a, String>>,
) -> Vec<PlannedLaunch> {
    launches
        .map(|(name, grid, threads, smem, pdl)| (name.clone(), grid, threads, smem, pdl))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn modes_from_values_and_the_first_launch_stays_normal() {
        assert_eq!(PdlMode::parse(Some("0")), PdlMode::Off);
        assert_eq!(PdlMode::parse(Some("1")), PdlMode::OnExit);
        assert_eq!(PdlMode::parse(Some("early")), PdlMode::Early);
        assert_eq!(PdlMode::parse(None), PdlMode::OnExit);
        for m in [PdlMode::Off, PdlMode::OnExit, PdlMode::Early] {
            assert!(!m.programmatic(0));
            assert_eq!(m.programmatic(3), m != PdlMode::Off);
        }
        assert_eq!(PdlMode::Early.param_flags(), flags::PDL_TRIGGER);
        assert_eq!(
            PdlMode::OnExit.param_flags() | PdlMode::Off.param_flags(),
            0
        );
    }

    /// The overlapped token stages (the kernels the backward launches programmatic in every
    /// mode, [`super::super::backward::BwdKernel::programmatic`]): launched after the reverse
    /// scan under `gdn_bwd_overlap.cuh`'s contract; and the forward's overlapped output scan
    /// (the scan an overlapping [`super::super::engine::FwdChoice`] names, launched programmatic
    /// after the persistent prep, session 15): the only entries without `dnnp_pdl_enter`.
    /// `entry` is a name as the modules' entry macros spell it (`..._##TAG##_k##KD`).
    fn is_overlap_consumer(entry: &str) -> bool {
        use super::super::backward::BwdKernel;
        use super::super::engine::{FwdChoice, FwdFactors, PrepVariant};
        let f = crate::engines::gdn::analyzer::test_facts(
            crate::engines::gdn::analyzer::GdnOp::Forward,
            4,
            32768,
            16,
            128,
            false,
        );
        let mut fwd = FwdChoice::default_for(&f, 132);
        (fwd.factors, fwd.pieces, fwd.overlap) = (FwdFactors::Slim, 1, true);
        // The summaries beside the first piece's scan (session 32, SLIM_PIECES_FIRST; every row
        // of SLIM_FIRST_SUMS, session 35).
        let mut first = FwdChoice::default_for(&f, 132);
        (first.factors, first.pieces, first.piece_first) = (FwdFactors::Slim, 7, true);
        let first_sum = |i: usize| {
            let mut c = first;
            c.first_sum = i;
            c.sum_kernel_name("##TAG##", 128) == entry
        };
        fwd.kernel_names("##TAG##", 128).1 == entry
            || (0..super::super::engine::SLIM_FIRST_SUMS.len()).any(first_sum)
            || BwdKernel::ALL.iter().filter(|k| k.programmatic()).any(|k| {
                // Every K (the macros' `_k##KD`), or K = 128 only (tc16's own macro).
                k.name("##TAG##", 0, PrepVariant::DEFAULT)
                    .replace("_k0", "_k##KD")
                    == entry
                    || k.name("##TAG##", 128, PrepVariant::DEFAULT) == entry
            })
    }

    #[test]
    fn the_sanitizing_entries_read_the_callers_offsets_and_write_the_copy_first() {
        let sources = [
            include_str!("../../../kernels/src/gdn_fwd.cu"),
            include_str!("../../../kernels/src/gdn_bwd.cu"),
        ];
        for name in crate::engines::gdn::params::CU_SANITIZING_ENTRIES {
            let (source, decl) = sources
                .iter()
                .find_map(|s| {
                    super::super::mirror::entry_decls(s)
                        .into_iter()
                        .find(|d| d.name == name)
                        .map(|d| (*s, d))
                })
                .unwrap_or_else(|| panic!("no entry {name}"));
            assert!(
                decl.params.contains("TableParams"),
                "{name} must declare the block with the caller's cu_seqlens: {}",
                decl.params
            );
            let at = source.find(&format!(" {name}(")).expect("entry text");
            let body = &source[at..];
            let body = &body[..body.find("\n}").unwrap_or(body.len())];
            let second = body.split(';').nth(1).unwrap_or_default().trim();
            assert!(
                second.starts_with("gdn::cu_sanitize_body("),
                "{name}: the statement after the entry wait must sanitize cu_seqlens: {second:?}"
            );
        }
    }

    #[test]
    fn every_gdn_entry_waits_first_except_the_overlap_consumers() {
        let modules = [
            (
                "gdn_fwd.cu",
                include_str!("../../../kernels/src/gdn_fwd.cu"),
            ),
            (
                "gdn_bwd.cu",
                include_str!("../../../kernels/src/gdn_bwd.cu"),
            ),
        ];
        let mut seen = 0;
        for (file, source) in modules {
            for super::super::mirror::EntryDecl { name, first, .. } in
                super::super::mirror::entry_decls(source)
            {
                assert!(name.starts_with("gdn_"), "{file}: unparsed entry {name:?}");
                seen += 1;
                let waits = first.starts_with("dnnp_pdl_enter(");
                assert_eq!(
                    waits,
                    !is_overlap_consumer(&name),
                    "{file}: entry {name} must {}start with dnnp_pdl_enter (first statement: {first:?})",
                    if waits { "not " } else { "" }
                );
            }
        }
        // 35 entry declarations since session 12 (9 in gdn_fwd.cu, 26 in gdn_bwd.cu), 38 since
        // session 15 (gdn_fwd_chunk_order and the overlapped pair's macro).
        assert!(seen >= 38, "only {seen} entries parsed");
    }
}
