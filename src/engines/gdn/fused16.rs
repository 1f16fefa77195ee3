//! The one-pass chunk-16 forward of `gdn_sm90` (sessions 48-49; `kernels/src/gdn_fused16.cu`,
//! `kernels/include/gdn_fwd_fused16.cuh`): its launch forms as data ([`FUSED16_FORMS`]), the rule
//! that runs it instead of the two-pass forward ([`fused16_form`]) and its plan
//! ([`GdnFused16Plan`]: one launch, no workspace).
//!
//! Contract: a form row states its entry's threads and dynamic shared memory exactly as the
//! kernel module declares them (the module's `static_assert`s pin the same numbers; the CPU tests
//! check every row's entries against the bundled cubin). The rule takes the one-pass forward only
//! where it serves every option the node asks for (K = V = 128, no state checkpoints, no saved
//! chunk factors, not `batch_invariant`), where the two-pass forward would run uncut (no piece
//! chain: the one pass has one block per (sequence, head, value half) and no pieces), and for at
//! most [`FUSED16_MAX_SEQS`] sequences (each block finds its rows by a running maximum over the
//! offsets before it, as the two-pass forward's sanitizer defines them). Its outputs differ from
//! the two-pass forward's only by rounding (both exact algorithms, spec §4.2; fp32 state carry);
//! the forms of one [`Fused16Chain`] give bitwise the same outputs (the chains differ only in the
//! order the tensor cores sum the step's products: within the fp64 reference's tolerance).

use super::analyzer::{GdnFacts, GdnOp};
use super::engine::{FwdChoice, PortUids, fwd_template};
use super::params::FwdParams;
use super::pdl::{GdnPlan, Launch};
use super::tma_maps::FwdIoMapShape;
use crate::cuda::Function;
use crate::cuda::tma::{EncodedMaps, TensorMap};
use crate::error::Result;
use crate::pack::{GuardTable, VariantPack};
use std::sync::OnceLock;

/// `gdn::Fused16Params` of `kernels/include/gdn_fwd_fused16.cuh`: the forward's block, the THD
/// tensors' token rows (the kernel clamps the offsets into them) and the state pool's rows; every
/// form's entry but the TQ forms' takes it (224 bytes).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fused16Params {
    /// The forward's parameters (no workspace regions: the one pass has none).
    pub f: FwdParams,
    /// Token rows `T` of the THD tensors.
    pub total_t: i64,
    /// Rows of the `state_indices` pool (0 without one): an index outside `[0, pool_rows)` names
    /// no row (a zero initial state, no final state stored).
    pub pool_rows: i32,
    /// 1: block z serves the z-th longest sequence (ties by index), 0: sequence z.
    pub longest_first: i32,
}

/// `gdn::Fused16TmaParams`: [`Fused16Params`], then the TQ forms' tensor maps of q and k at offset
/// 256 (512 bytes). The plan binds this block for every form: a TQ entry declares all of it, every
/// other entry its prefix [`Fused16Params`] (the driver copies each kernel's declared size).
/// Keeping the maps out of the other entries' block keeps their code: a 128-byte aligned block moves
/// every field in the parameter bank, and ptxas then compiled w8c's entries otherwise, +0.9..+1.2 %
/// through the product (session 72, H100).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Fused16TmaParams {
    /// Every form's block.
    pub p: Fused16Params,
    /// The maps of q and k ([`FwdIoMapShape::fused16_qk_specs`]) for a form with
    /// [`Fused16Form::tma_qk`]; zeros for the others.
    pub qk_maps: [TensorMap; 2],
}

/// One launch form of the one-pass forward, as data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fused16Form {
    /// The `DNNPLAN_GDN_FWD_FUSED` value that forces it, also its entry's suffix:
    /// `gdn_fwd_fused16_<tag>_k128_<switch>`.
    pub switch: &'static str,
    /// Producer warps (beside the four chain warps).
    pub producer_warps: u32,
    /// Threads per block.
    pub threads: u32,
    /// Dynamic shared memory per block (`gdn::fused16_smem_bytes<T, 64, Form>()`).
    pub smem: u32,
    /// Blocks per SM its launch bounds and shared memory allow.
    pub per_sm: u64,
    /// Blocks per thread-block cluster along x: 1, or 2 for the forms whose two value halves of a
    /// (sequence, head) run as one cluster (each CTA builds every other chunk's factors and
    /// pushes them into its peer's stage; `gdn_fused16_cluster.cuh`).
    pub cluster: u32,
    /// How its chain warps run the step's products (its outputs' bits).
    pub chain: Fused16Chain,
    /// How its chain carries the state's decay (its outputs' bits too).
    pub state: Fused16State,
    /// Whether a full chunk's q, k rows arrive as tensor-map boxes multicast into both CTAs of the
    /// pair (the kernels' TQ, session 71; the plan encodes [`Fused16TmaParams::qk_maps`] at execute).
    /// Only how the rows reach shared memory: the same bits as the copies.
    pub tma_qk: bool,
}

/// How a form's chain applies the chunk's decay e^{Γ_last} to its state X.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fused16State {
    /// X scaled by e^{Γ_last} every chunk (64 multiplies per thread).
    Eager,
    /// X = e^l X̃ with a running log scale l (the kernels' LS, sessions 68-69; b2c's): the scale
    /// folded into the per-token scalars, X̃ scaled only once |l| passes 11 (within the fp64
    /// recurrence's tolerance, other bits than [`Fused16State::Eager`]).
    Lazy,
}

/// The instructions of a form's chain step: the forms of one kind give the same bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fused16Chain {
    /// Every product by warp-level `mma.sync` (each chain warp's 16 value rows).
    MmaSync,
    /// P and Q (m64n32k16) and the state update (m64n128k16) by warpgroup `wgmma` over the stage's
    /// swizzled q̂, k̂ rows, the chain's registers raised by `setmaxnreg` (the kernels' WG, UW, CR
    /// and PR): one read of each operand tile per warpgroup (session 63).
    Wgmma,
}

impl Fused16Form {
    /// The entry for io dtype tag `tag` (`bf16`, `f16`).
    pub fn entry(&self, tag: &str) -> String {
        format!("gdn_fwd_fused16_{tag}_k128_{}", self.switch)
    }

    /// Its launch's cluster shape: `(2, 1, 1)` for a cluster form (the grid's x is the two value
    /// halves of a (sequence, head)), else none.
    pub fn cluster_shape(&self) -> Option<(u32, u32, u32)> {
        (self.cluster > 1).then_some((self.cluster, 1, 1))
    }
}

/// Every bundled form: eight producer warps at one block per SM (`w8`), four at two (`b2`), and
/// their cluster twins (session 52): `w4c`, four producer warps at one block per SM, and `b2c`,
/// each pair of value-half blocks one 2-CTA cluster that shares the chunks' builds (every CTA
/// copies and normalizes q, k and copies its v; the CTA of rank r builds T, A and the scalars of
/// chunks 2m + r and pushes them into both stages). On an H100 `w4c` runs (4, 8192, 16) in 0.320 ms
/// against `w8`'s 0.344 and `b2c` (16, 2048, 32) in 0.601 against `b2`'s 0.625 (session 52). The
/// one-block forms (`w8`, `w4c`, `w8c`) test the next chunk's full barrier early (the kernels'
/// `Fused16Form` ET, session 55: `w4c` 0.309-0.312 ms against 0.314 without), `b2c` too since
/// session 59 (harness on an H100: (16, 2048, 32) 0.551 against 0.557 ms, the ragged mix 0.472
/// against 0.481); `b2` keeps the blocking wait. Every form takes the lean step (sessions 57-59,
/// the same bits): the chain steps its stage by a running index and loads the step's stage-only
/// operands at its top (session 57: `w4c` 0.303 against 0.313 ms at (4, 8192, 16) on an H100), and
/// it stages its O rows in the stage's v tile, where the warp that refills the stage stores them,
/// whole 128-byte token rows (session 58: through the product (4, 8192, 16) 0.296 against 0.308 ms,
/// (16, 2048, 32) 0.573 against 0.607, the ragged mix 0.293 against 0.307; `w8` in the harness
/// 0.297 against 0.334). `w8c` (session 58): `w8`'s eight producer warps as clusters with 16
/// stages: with the O rows on the producer, more producer warps pay off (harness, H100: (4, 8192,
/// 16) 0.278 ms against `w4c`'s 0.295, the ragged mix 0.341 against 0.350); the rule's one-block
/// form since. `b2c` forwarded its chains' stage releases to the peer CTA through the producer
/// from session 58 to 70 (the kernels' RF: then −0.7 % at (16, 2048, 32) on the `mma.sync` chain);
/// on today's chain it is 1.1 % slower than both CTAs' chains releasing each stage (session 71,
/// harness on an H100), and without it a CTA may write into the peer's stage once its own empty
/// barrier completes: `b2c`'s q, k rows of a full chunk arrive as four tensor-map boxes that the
/// building CTA issues once, multicast into both CTAs ([`Fused16Form::tma_qk`]; −2.7 % at (16,
/// 2048, 32) with RF dropped, −2.4..−4.4 % at the other shapes). `w8c` and `b2c` stagger their prologue
/// (the kernels' SP, session 59: one producer warp copies the first chunks alone, so a block's first
/// step does not wait behind every block's first requests): `w8c` −2.6..−4.2 % where it runs
/// several block generations ((16, L, 32) in the harness on an H100), the rule's shapes the same.
/// `b2c` runs its chain's products on `wgmma` (session 63, [`Fused16Chain::Wgmma`]: sessions 59
/// and 61's WG and UW with session 59's `setmaxnreg`, the chain at 160 registers; harness on an
/// H100 at (16, 2048, 32) 0.502-0.507 ms against 0.556-0.557 on `mma.sync`, two blocks per SM
/// sharing the L1 data pipe that the chain's re-reads of q̂, k̂ had kept 83 % busy), and carries
/// its state lazily (session 69, [`Fused16State::Lazy`]: through the product on an H100 (16, 2048,
/// 32) −2.3 %; on `w8c` +6-7 %, so `w8c` stays eager).
/// (Measured and dropped, bench/gdn_results.md: session 49's lazy decay `X = λ X̃`, session 50's
/// lookahead (P_c from chunk c − 1's state and a cross Gram) and its chain on wgmma, session 51's
/// chain stepping pairs of chunks on mma.sync and on wgmma (branches `s51-pair`, `s51-wgp`:
/// correct, the chain alone 4-6 % faster, the whole kernel not), session 57's chain with P and Q on
/// wgmma (`bench/gdn_wg57_chain.patch`: w4c +8 %) and its O rows by bulk copies
/// (`bench/gdn_lt3_57_bulk_o.patch`: 1.3-1.8x slower) and session 58's prefetch of the next chunk's
/// q̂, k̂ fragments during the update (`bench/gdn_pf58_prefetch.patch`: w4c +9 %); session 59's
/// producer waits with a suspend-time hint (no change), registers moved to the chain's warpgroup
/// by `setmaxnreg` on the `mma.sync` `b2c` (`bench/gdn_rg59_setmaxnreg.patch`: +2..+9 % at (16,
/// 2048, 32)) and the chain's P and Q on wgmma over swizzled rows with the lean step
/// (`bench/gdn_wg59_chain.patch`: its chain alone −7 %, but `w8c` +3 %, `b2c` at 128 registers
/// +5 %); session 62's WG + UW on `w8c` (`bench/gdn_wg61_chain.patch`: +0..+1.6 %); sessions
/// 66-68's readout on warps of its own (`w8cr` +25 %, `w8crx` +49 % at (4, 8192, 16) on an H100) and
/// chain split over the channels (`w8ck` +31 %; all three in `bench/gdn_ro_rx_ks68.patch`).)
pub const FUSED16_FORMS: [Fused16Form; 5] = [
    Fused16Form {
        switch: "w8",
        producer_warps: 8,
        threads: 384,
        smem: 190_784,
        per_sm: 1,
        cluster: 1,
        chain: Fused16Chain::MmaSync,
        state: Fused16State::Eager,
        tma_qk: false,
    },
    Fused16Form {
        switch: "b2",
        producer_warps: 4,
        threads: 256,
        smem: 108_288,
        per_sm: 2,
        cluster: 1,
        chain: Fused16Chain::MmaSync,
        state: Fused16State::Eager,
        tma_qk: false,
    },
    Fused16Form {
        switch: "w4c",
        producer_warps: 4,
        threads: 256,
        smem: 185_664,
        per_sm: 1,
        cluster: 2,
        chain: Fused16Chain::MmaSync,
        state: Fused16State::Eager,
        tma_qk: false,
    },
    Fused16Form {
        switch: "b2c",
        producer_warps: 4,
        threads: 256,
        smem: 112_640,
        per_sm: 2,
        cluster: 2,
        chain: Fused16Chain::Wgmma,
        state: Fused16State::Lazy,
        tma_qk: true,
    },
    Fused16Form {
        switch: "w8c",
        producer_warps: 8,
        threads: 384,
        smem: 216_576,
        per_sm: 1,
        cluster: 2,
        chain: Fused16Chain::MmaSync,
        state: Fused16State::Eager,
        tma_qk: false,
    },
];

/// The rule's forms: (the one-block-per-SM form, the two-blocks-per-SM form): the cluster forms.
pub const FUSED16_BY_RULE: (usize, usize) = (4, 3);

/// The two-blocks-per-SM form from this many blocks per SM on; the one-block form below. The plan
/// does not know the lengths, and each form has its own worst case: equal lengths leave the
/// one-block form's last wave part-empty, a long sequence among shorter ones shares its SM in the
/// two-blocks form. Measured through the product on an H100 (session 64,
/// `gdn_benchmark_fused_switch`, ms), from 1.03 to 2.9 waves of single blocks b2c leads w8c by
/// 10-16 % at equal lengths (N × 4,096 tokens: 136 blocks 0.242 against 0.287, 256 blocks 0.250
/// against 0.291, 384 blocks 0.387 against 0.430) and trails it by up to 25 % at ragged lengths
/// (the benchmark's mix at H = 16, 320 blocks: 0.348 against 0.281; one 8,192-token sequence
/// among nine of 4,096 at H = 8, 160 blocks: 0.357 against 0.286): below three blocks per SM the
/// one-block form is never more than 19 % off the faster form, the two-blocks form up to 25 %.
/// From 3.6 waves on b2c leads at both (the mix at H = 24: 0.385 against 0.392; at H = 32 0.442
/// against 0.518; 16 × 4,096: 0.484 against 0.568). The two passes lost to one form or the other
/// at every one of these shapes (by 5-62 %), so an uncut shape no longer falls back to them
/// (sessions 50-52 kept the one-block form to waves at least 80 % full against them, with `w4c`).
pub const FUSED16_TWO_PER_SM_WAVES: u64 = 3;

/// The most sequences the rule (and the switch) hands to the one pass: each block reads the N + 1
/// offsets one per thread and ranks the lengths (`fused16_rows`), so N stays below the smallest
/// form's threads (b2: 256 threads, 255 sequences; a block of a larger batch serves no rows).
pub const FUSED16_MAX_SEQS: i64 = min_threads(&FUSED16_FORMS) as i64 - 1;

/// The fewest threads of any form in `forms`.
const fn min_threads(forms: &[Fused16Form]) -> u32 {
    let mut least = u32::MAX;
    let mut i = 0;
    while i < forms.len() {
        if forms[i].threads < least {
            least = forms[i].threads;
        }
        i += 1;
    }
    least
}

/// Value slices per (sequence, head): the grid's x (64 value rows each); a launch runs
/// `FUSED16_VALUE_SLICES · HO · N` blocks.
pub const FUSED16_VALUE_SLICES: u64 = 2;

/// Whether the one-pass forward serves every option `f` asks for.
pub fn fused16_serves(f: &GdnFacts) -> bool {
    f.op == GdnOp::Forward
        && f.k == 128
        && f.v == 128
        && !f.batch_invariant
        && f.port("state_checkpoints").is_none()
        && f.port("chunk_factors").is_none()
        && (1..=FUSED16_MAX_SEQS).contains(&f.n_seqs)
}

/// The form of the one-pass forward that runs `f` on `sms` SMs, or `None` for the two-pass
/// forward (`two_pass`: the schedule the two-pass forward would run). `DNNPLAN_GDN_FWD_FUSED`:
/// `0` never, a form's switch that form wherever it serves `f` (also cut shapes); unset or any
/// other value the rule: where [`fused16_serves`] and the two-pass forward would run uncut, the
/// one-block form below [`FUSED16_TWO_PER_SM_WAVES`] blocks per SM, else the two-blocks-per-SM
/// form.
pub fn fused16_form(f: &GdnFacts, sms: u64, two_pass: &FwdChoice) -> Option<&'static Fused16Form> {
    fused16_form_at(
        f,
        sms,
        two_pass,
        std::env::var("DNNPLAN_GDN_FWD_FUSED").ok().as_deref(),
    )
}

/// [`fused16_form`] with the switch's value given.
pub fn fused16_form_at(
    f: &GdnFacts,
    sms: u64,
    two_pass: &FwdChoice,
    switch: Option<&str>,
) -> Option<&'static Fused16Form> {
    if !fused16_serves(f) {
        return None;
    }
    match switch.map(str::trim) {
        Some("0") => return None,
        Some(word) => {
            if let Some(form) = FUSED16_FORMS.iter().find(|r| r.switch == word) {
                return Some(form);
            }
        }
        None => {}
    }
    if two_pass.pieces > 1 {
        return None;
    }
    let blocks = fused16_grid(f).0 as u64 * f.heads.3 as u64 * f.n_seqs as u64;
    let (one, two) = FUSED16_BY_RULE;
    let one_block = blocks < FUSED16_TWO_PER_SM_WAVES * sms.max(1);
    Some(&FUSED16_FORMS[if one_block { one } else { two }])
}

/// The grid of `f`'s launch: (value slices, HO, N).
pub fn fused16_grid(f: &GdnFacts) -> (u32, u32, u32) {
    (
        FUSED16_VALUE_SLICES as u32,
        f.heads.3 as u32,
        f.n_seqs as u32,
    )
}

/// A built one-pass forward: the parameter template, the ports, the form and its kernel.
pub struct GdnFused16Plan<F = Function> {
    template: Fused16Params,
    uids: PortUids,
    form: &'static Fused16Form,
    grid: (u32, u32, u32),
    kernel: F,
    guards: OnceLock<GuardTable>,
    /// The q, k maps' shape where the form reads them ([`Fused16Form::tma_qk`]).
    qk_maps: Option<FwdIoMapShape>,
    /// The last q, k maps encoded, by (q, k) address.
    qk_cache: EncodedMaps<[u64; 2], [TensorMap; 2]>,
}

impl<F> GdnFused16Plan<F> {
    /// The plan of `f` in `form` with its resolved `kernel`.
    pub fn new(f: &GdnFacts, form: &'static Fused16Form, kernel: F) -> Result<GdnFused16Plan<F>> {
        super::engine::check_index_limits(f)?;
        let pool_rows = super::engine::pool_rows(f);
        Ok(GdnFused16Plan {
            template: Fused16Params {
                f: fwd_template(f)?,
                total_t: f.total_tokens,
                pool_rows: i32::try_from(pool_rows).unwrap_or(i32::MAX),
                longest_first: 1,
            },
            uids: PortUids::of(f)?,
            form,
            grid: fused16_grid(f),
            kernel,
            guards: OnceLock::new(),
            qk_maps: form.tma_qk.then(|| FwdIoMapShape::new(f)).transpose()?,
            qk_cache: EncodedMaps::new(),
        })
    }

    /// Its one launch: (kernel, grid, threads, dynamic shared memory, not programmatic).
    pub fn launches(&self) -> impl Iterator<Item = Launch<'_, F>> {
        let grid = self.grid;
        (grid.0 > 0 && grid.1 > 0 && grid.2 > 0)
            .then_some((&self.kernel, grid, self.form.threads, self.form.smem, false))
            .into_iter()
    }
}

// SAFETY: `bind` writes the pack's device buffers into the forward block and the plan's token and
// pool rows after it (gdn::Fused16Params), then the TQ forms' maps: gdn::Fused16TmaParams, whose
// prefix is every other entry's only parameter.
unsafe impl GdnPlan for GdnFused16Plan {
    type Params = Fused16TmaParams;

    fn workspace(&self) -> u64 {
        0
    }

    fn bind(&self, pack: &VariantPack, _ws: u64) -> Result<Fused16TmaParams> {
        let f = self.uids.addresses(pack, self.template.f)?;
        let qk_maps = match &self.qk_maps {
            Some(shape) => self
                .qk_cache
                .get_or_encode([f.q, f.k], || shape.encode_fused16_qk(f.q, f.k))?,
            None => [TensorMap::ZERO; 2],
        };
        Ok(Fused16TmaParams {
            p: Fused16Params { f, ..self.template },
            qk_maps,
        })
    }

    fn launch_list(&self) -> impl Iterator<Item = Launch<'_, Function>> {
        self.launches()
    }

    fn cluster(&self) -> Option<(u32, u32, u32)> {
        self.form.cluster_shape()
    }

    fn bound_ports(&self) -> Vec<(&'static str, i64)> {
        self.uids.bound()
    }

    fn guards(&self) -> &OnceLock<GuardTable> {
        &self.guards
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::gdn::analyzer::test_facts;

    fn facts(n: i64, t: i64, ho: i64, d: i64, batch_invariant: bool) -> GdnFacts {
        test_facts(GdnOp::Forward, n, t, ho, d, batch_invariant)
    }

    fn rule(f: &GdnFacts) -> Option<&'static str> {
        let two_pass = FwdChoice::default_for(f, 132);
        fused16_form_at(f, 132, &two_pass, None).map(|r| r.switch)
    }

    #[test]
    fn params_match_the_kernel_block() {
        // gdn::Fused16Params: FwdParams (208 bytes), total_t at 208, pool_rows at 216, 224 bytes;
        // gdn::Fused16TmaParams: it, then the two maps at 256 (128-byte aligned), 512 bytes.
        assert_eq!(std::mem::size_of::<Fused16Params>(), 224);
        assert_eq!(std::mem::offset_of!(Fused16Params, total_t), 208);
        assert_eq!(std::mem::offset_of!(Fused16Params, pool_rows), 216);
        assert_eq!(std::mem::offset_of!(Fused16Params, longest_first), 220);
        assert_eq!(std::mem::size_of::<Fused16TmaParams>(), 512);
        assert_eq!(std::mem::offset_of!(Fused16TmaParams, p), 0);
        assert_eq!(std::mem::offset_of!(Fused16TmaParams, qk_maps), 256);
    }

    #[test]
    fn only_the_tma_forms_encode_maps() {
        // b2c (the two-blocks form) reads q, k by boxes; no other form does.
        for form in &FUSED16_FORMS {
            assert_eq!(form.tma_qk, form.switch == "b2c", "{form:?}");
            // TQ is a cluster form on the wgmma chain's swizzled stage.
            assert!(!form.tma_qk || (form.cluster == 2 && form.chain == Fused16Chain::Wgmma));
        }
        // The maps' shape the TQ plan encodes from: the forward's q, k at 16-token boxes.
        let f = facts(16, 16 * 2048, 32, 128, false);
        let [q, k] = FwdIoMapShape::new(&f).expect("shape").fused16_qk_specs();
        assert_eq!((q.boxes, k.boxes), ([64, 1, 16], [64, 1, 16]));
    }

    #[test]
    fn the_rule_takes_uncut_shapes_and_leaves_cut_ones_to_the_two_passes() {
        // The benchmark's uncut shapes: (4, 8192, 16) 128 blocks, one wave -> one block per SM;
        // (16, 2048, 32) 1024 blocks -> two per SM; the ragged mix's 320 (2.4 waves) -> one
        // block per SM.
        assert_eq!(rule(&facts(4, 4 * 8192, 16, 128, false)), Some("w8c"));
        assert_eq!(rule(&facts(16, 16 * 2048, 32, 128, false)), Some("b2c"));
        assert_eq!(rule(&facts(10, 29949, 16, 128, false)), Some("w8c"));
        // Below three blocks per SM one block per SM, whatever the fill; from three on two.
        assert_eq!(rule(&facts(66, 66 * 300, 1, 128, false)), Some("w8c")); // one wave
        assert_eq!(rule(&facts(67, 67 * 300, 1, 128, false)), Some("w8c")); // 134 of 264
        assert_eq!(rule(&facts(133, 133 * 300, 1, 128, false)), Some("w8c")); // 266 of 396
        assert_eq!(rule(&facts(197, 197 * 300, 1, 128, false)), Some("w8c")); // 394 blocks
        assert_eq!(rule(&facts(198, 198 * 300, 1, 128, false)), Some("b2c")); // 396: three waves
        assert_eq!(rule(&facts(99, 99 * 300, 2, 128, false)), Some("b2c"));
        assert_eq!(rule(&facts(264, 264 * 300, 1, 128, false)), None); // 255 sequences at most
        // (1, 32768, 16): the two-pass forward cuts it into pieces -> two passes.
        assert_eq!(rule(&facts(1, 32768, 16, 128, false)), None);
        // Options the one pass does not serve.
        assert_eq!(rule(&facts(4, 4 * 8192, 16, 64, false)), None);
        assert_eq!(rule(&facts(4, 4 * 8192, 16, 128, true)), None);
        let most = FUSED16_MAX_SEQS;
        assert_eq!(rule(&facts(most, most * 300, 4, 128, false)), Some("b2c"));
        assert_eq!(rule(&facts(most + 1, most * 300, 4, 128, false)), None);
    }

    #[test]
    fn the_switch_forces_a_form_or_the_two_passes() {
        let f = facts(1, 32768, 16, 128, false);
        let two_pass = FwdChoice::default_for(&f, 132);
        for form in &FUSED16_FORMS {
            let got = fused16_form_at(&f, 132, &two_pass, Some(form.switch));
            assert_eq!(got.map(|r| r.switch), Some(form.switch));
        }
        let g = facts(4, 4 * 8192, 16, 128, false);
        let two_pass = FwdChoice::default_for(&g, 132);
        assert_eq!(fused16_form_at(&g, 132, &two_pass, Some("0")), None);
        // An unknown word: the rule.
        let got = fused16_form_at(&g, 132, &two_pass, Some("w9"));
        assert_eq!(got.map(|r| r.switch), Some("w8c"));
        // Never where the one pass does not serve the node.
        let k64 = facts(4, 4 * 8192, 16, 64, false);
        let two_pass = FwdChoice::default_for(&k64, 132);
        assert_eq!(fused16_form_at(&k64, 132, &two_pass, Some("w8")), None);
    }

    #[test]
    fn every_form_reads_the_offsets_of_the_most_sequences() {
        // fused16_rows: one thread per offset, N + 1 of them.
        for form in &FUSED16_FORMS {
            assert!(FUSED16_MAX_SEQS < i64::from(form.threads), "{form:?}");
        }
        assert_eq!(FUSED16_MAX_SEQS, 255);
    }

    #[test]
    fn every_form_fits_its_blocks_per_sm() {
        for form in &FUSED16_FORMS {
            assert_eq!(form.threads, 32 * (4 + form.producer_warps));
            // 228 KiB of shared memory per SM, 1 KiB reserved per block.
            assert!(
                form.per_sm * (u64::from(form.smem) + 1024) <= 228 * 1024,
                "{form:?}"
            );
            // 64 K registers per SM at the launch bounds' blocks.
            assert!(form.per_sm * u64::from(form.threads) * 128 <= 65_536 || form.per_sm == 1);
        }
    }

    #[test]
    fn cluster_forms_launch_pairs_of_value_halves() {
        let (x, _, _) = fused16_grid(&facts(4, 4 * 8192, 16, 128, false));
        for form in &FUSED16_FORMS {
            match form.cluster_shape() {
                None => assert_eq!(form.cluster, 1, "{form:?}"),
                Some((cx, cy, cz)) => {
                    assert_eq!((cx, cy, cz), (form.cluster, 1, 1), "{form:?}");
                    assert_eq!(x % cx, 0, "the value halves pair up: {form:?}");
                }
            }
        }
        let (one, two) = FUSED16_BY_RULE;
        assert_eq!(FUSED16_FORMS[one].per_sm, 1);
        assert_eq!(FUSED16_FORMS[two].per_sm, 2);
    }

    #[test]
    fn only_the_tma_forms_entries_declare_the_maps_block() {
        // kernels/src/gdn_fused16.cu writes a TQ form's entry with GDN_FUSED16_TQ_ENTRY (its
        // parameter gdn::Fused16TmaParams, the block bind fills), every other with
        // GDN_FUSED16_ENTRY (gdn::Fused16Params, that block's prefix).
        let source = include_str!("../../../kernels/src/gdn_fused16.cu");
        for form in &FUSED16_FORMS {
            for tag in ["bf16", "f16"] {
                let entry = form.entry(tag);
                let line = source
                    .lines()
                    .find(|l| l.contains(&format!("({entry},")))
                    .unwrap_or_else(|| panic!("no entry line for {entry}"));
                let tq = line.starts_with("GDN_FUSED16_TQ_ENTRY(");
                assert!(tq || line.starts_with("GDN_FUSED16_ENTRY("), "{line}");
                assert_eq!(tq, form.tma_qk, "{entry}: {line}");
            }
        }
    }

    #[test]
    fn every_entry_is_in_the_bundled_cubin() {
        let module = crate::cuda::kernels::KERNELS
            .iter()
            .find(|k| k.name == "gdn_fused16")
            .expect("gdn_fused16 is bundled");
        for form in &FUSED16_FORMS {
            for tag in ["bf16", "f16"] {
                let entry = form.entry(tag);
                assert!(
                    module.functions.contains(&entry.as_str()),
                    "{entry} missing from the gdn_fused16 cubin"
                );
            }
        }
    }
}
