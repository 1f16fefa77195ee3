//! The backward plan's prep forms as one table (session 30, helper bt30): which kernels and launch
//! shapes a (prep form, uncut or piece chain, K, prep variant, knob) combination runs in place of
//! the full form's, chosen once per plan.
//!
//! [`GdnBwdPlan::with_form`](super::backward::GdnBwdPlan::with_form) first picks each stage's
//! full-form kernel and launch (the chunk table, the prep, the piece chain's passes, the replays,
//! the reverse scan, the token stage, the fold and the parameter gradients: the rules of
//! `backward.rs`, [`TOKEN_STAGES`](super::backward::TOKEN_STAGES) among them). [`select`] then
//! walks [`FORM_RULES`] once, in order: a row applies where its columns hold (the plan's
//! [`BwdPrepForm`], the path, K = V, the factor kernel, the knob it follows) and the kernels chosen
//! so far include every kernel group it needs (the preconditions, as data); an applied row
//! replaces each of its `from` kernels by its `to` kernel, so a later row sees the earlier rows'
//! kernels (the slim rows need the scalar row's storing replay). Last, the plan builds its step
//! list once, each stage's launch passed through the applied rows' [`Relaunch`] shapes
//! ([`FormRules::relaunch`]).
//!
//! Adding a prep-form kernel: one [`FormSwap`] in its row (its kernel in
//! [`BwdKernel`] and the entry's name as for every kernel). Adding a
//! token-stage kernel is one row of [`TOKEN_STAGES`](super::backward::TOKEN_STAGES) instead
//! (its kernels, threads and shared memory): the forms do not touch the token stage.

use super::backward::{
    BwdKernel, BwdPrepForm, BwdSlimPrep, REPLAY_ONE_PER_SM_SMEM, Step, overlap_scan_launch,
};
use super::engine::{
    BWD_PREP_SLIM, BWD_PREP_SLIM16, BWD_PREP_SLIM16C, BWD_PREP_SLIM16L, PrepPass, PrepVariant,
};
use super::params::{
    FSCAN_GX_STAGES, dscan_ov2gxsh_smem_bytes, dsum_sc_smem_bytes, fscan_gxsl_smem_bytes,
    psum_sl_smem_bytes,
};

/// The path a [`FormRule`] serves: the uncut sequences or the piece chain (`P > 1`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormPath {
    /// The uncut replay and reverse scan (`pieces` ≤ 1).
    Uncut,
    /// The piece chain (`pieces` > 1).
    Pieces,
}

/// The knob a [`FormRule`] follows besides the form (both read at plan build).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FormKnob {
    /// The split reverse scan ([`super::backward::dscan_split`], `DNNPLAN_GDN_BWD_DSCAN_SPLIT`).
    Split,
    /// The plan's slim prep form is at least this one ([`BwdSlimPrep`],
    /// `DNNPLAN_GDN_BWD_SLIMPREP`): each form is the one before it with one more change.
    SlimPrep(BwdSlimPrep),
}

/// How a swapped kernel's launch follows from the launch of the kernel it replaces.
#[derive(Clone, Copy, Debug)]
pub enum Relaunch {
    /// The same grid, threads and shared memory.
    Same,
    /// A slim prep's launch on its [`PrepPass`] over the replaced prep's chunk slots (its grid's
    /// x) and heads (its grid's y), K = 128.
    SlimPrep(&'static PrepPass),
    /// The uncut replay's grid and threads at the kernel's stages' shared memory
    /// (`BwdKernel::form_replay_smem`) raised to the one-block-per-SM floor where the replay
    /// rule wants it ([`FormContext::replay_smem`]).
    UncutReplay,
    /// The same grid and threads at `smem(k, v)` bytes.
    Smem(fn(u64, u64) -> u32),
    /// The same grid and threads at the overlapped scan's shared memory
    /// (`overlap_scan_launch`).
    ScanSmem,
    /// The same grid at the overlapped scan's threads and shared memory
    /// (`overlap_scan_launch`).
    OverlapScan,
    /// The reverse summaries of all `V` value rows per (piece, head): grid `(1, HO, N·(P−1))`,
    /// `V/16` warps, [`dsum_sc_smem_bytes`].
    DsumAllRows,
    /// The split producer: grid `(2, HO, N)`, 128 threads, [`dscan_ov2gxsh_smem_bytes`].
    Split,
}

/// One kernel of a [`FormRule`]: `from` (the kernel chosen so far) runs as `to`, launched by
/// `launch`.
#[derive(Clone, Copy, Debug)]
pub struct FormSwap {
    /// The kernel replaced.
    pub from: BwdKernel,
    /// The kernel in its place.
    pub to: BwdKernel,
    /// Its launch, from the replaced kernel's.
    pub launch: Relaunch,
}

/// One row of [`FORM_RULES`]: where it applies and the kernels it swaps.
#[derive(Debug)]
pub struct FormRule {
    /// The row's name (the session that added it in the module docs).
    pub name: &'static str,
    /// The prep forms that take the row (`None`: every form).
    pub forms: Option<&'static [BwdPrepForm]>,
    /// The path the row serves (`None`: either).
    pub path: Option<FormPath>,
    /// K = V the row serves (`None`: every K).
    pub k: Option<u64>,
    /// The factor kernel the row needs (`None`: any).
    pub prep: Option<PrepVariant>,
    /// The knob the row follows (`None`: none).
    pub knob: Option<FormKnob>,
    /// Kernel groups the plan must have chosen, one kernel of each group (the row's
    /// preconditions: the kernels whose outputs the swapped ones replace).
    pub needs: &'static [&'static [BwdKernel]],
    /// The swaps.
    pub swaps: &'static [FormSwap],
}

/// Shorthand for a [`FormSwap`].
const fn swap(from: BwdKernel, to: BwdKernel, launch: Relaunch) -> FormSwap {
    FormSwap { from, to, launch }
}

/// Index of the scalar form's row in [`FORM_RULES`].
pub const SCALED: usize = 0;
/// Index of the uncut slim form's row.
pub const SLIM: usize = 1;
/// Index of the split producer's row.
pub const SPLIT: usize = 2;
/// Index of the piece chain's slim row.
pub const SLIM_PIECES: usize = 3;
/// Index of the slim prep's `prep16sl` row.
pub const PREP16: usize = 4;
/// Index of the trimmed `prep16slc` row.
pub const PREP16C: usize = 5;
/// Index of the `prep16sll` row.
pub const PREP16L: usize = 6;

/// `psum_sl`'s shared memory (its layout has no K parameter: K = V = 128).
fn psum_sl_smem(_k: u64, _v: u64) -> u32 {
    psum_sl_smem_bytes()
}

/// The seeded slim replay's shared memory: two stages, two blocks per SM as `gx`.
fn fscan_gxsl_piece_smem(_k: u64, _v: u64) -> u32 {
    fscan_gxsl_smem_bytes(FSCAN_GX_STAGES)
}

/// The piece chain's slim swaps ([`BwdPrepForm::SlimPieces`], session 29, helpers ps29 and pr29):
/// the prep `prep15sl`, the slim summaries `psum_sl` (session 38, the saved replay: the
/// transitions-only `psumt_sl` where the plan summarises only `Mᵀ_j`), the slim seeded replay
/// `fscan_gxsl`, the scalar-form reverse summaries `dsum_sc` (one block of all `V` value rows per
/// (piece, head)) and seeded producer `dscanp_ov2gxsc`.
pub const SLIM_PIECES_SWAPS: [FormSwap; 6] = {
    use BwdKernel::*;
    [
        swap(Prep, PrepSl, Relaunch::SlimPrep(&BWD_PREP_SLIM)),
        swap(Psum1, PsumSl, Relaunch::Smem(psum_sl_smem)),
        swap(PsumMt1, PsumMtSl, Relaunch::Smem(psum_sl_smem)),
        swap(FscanGxU, FscanGxSl, Relaunch::Smem(fscan_gxsl_piece_smem)),
        swap(Dsum1, DsumSc, Relaunch::DsumAllRows),
        swap(DscanpOv5Dr, DscanpOv2GxSc, Relaunch::OverlapScan),
    ]
};

/// The (from, to) kernels of `swaps`.
pub const fn swap_pairs<const N: usize>(swaps: &[FormSwap; N]) -> [(BwdKernel, BwdKernel); N] {
    let mut out = [(BwdKernel::Prep, BwdKernel::Prep); N];
    let mut i = 0;
    while i < N {
        out[i] = (swaps[i].from, swaps[i].to);
        i += 1;
    }
    out
}

/// The forms that run the scalar form's kernels uncut.
const SCALAR_FORMS: &[BwdPrepForm] = &[
    BwdPrepForm::Scalars,
    BwdPrepForm::Slim,
    BwdPrepForm::SlimPieces,
];

/// The forms that run the slim kernels.
const SLIM_FORMS: &[BwdPrepForm] = &[BwdPrepForm::Slim, BwdPrepForm::SlimPieces];

/// The prep forms' rows, in the order [`select`] walks them (each sees the kernels the rows
/// before it chose):
/// - `scaled` (session 27, [`BwdPrepForm::Scalars`] and the slim forms): uncut at K = V = 128 with
///   the v15 prep, the `gx` / `gx4` replay (or the `tc16` pair's storing `gxu` / `gx4u`) and the
///   overlapped io-`dR` producer `dscan_ov2gx`: the prep `prep15sc` (the same launch), the
///   replays on raw `q`, `k` (their stages' shared memory, the one-per-SM floor), the producer
///   `dscan_ov2gxsc` (its own shared memory, `dscan_ov2gx`'s threads).
/// - `slim` (session 28, [`BwdPrepForm::Slim`], [`BwdPrepForm::SlimPieces`]): where `scaled` chose
///   the storing replay (`gxscu` / `gx4scu`: with it nothing else reads `W` or `Ũᵀ`), that replay
///   rebuilds `U` (`gxsl` / `gx4sl`) and the prep is `prep15sl` ([`BWD_PREP_SLIM`]).
/// - `split` (session 29, helper dw29, [`FormKnob::Split`]): the scalar form's producer as two
///   half-blocks per unit (`dscan_ov2gxsh`).
/// - `slimp` (session 29, [`BwdPrepForm::SlimPieces`]): the piece chain at K = V = 128 with the v15
///   prep, the `p1` passes (their summaries, or under the saved replay their transitions only),
///   the `tc16` pair's storing seeded replay `gxu` and the io-`dR` producer `dscanp_ov5dr`:
///   [`SLIM_PIECES_SWAPS`].
/// - `prep16` (session 29, helper bp29, [`BwdSlimPrep::V16`]): the slim prep `prep15sl`, uncut or
///   on the piece chain, as `prep16sl` ([`BWD_PREP_SLIM16`], the same grid).
/// - `prep16c` (session 32, helper pp32, [`BwdSlimPrep::V16c`]): that `prep16sl` on its trimmed
///   tile `prep16slc` ([`BWD_PREP_SLIM16C`], the same grid, its own shared memory).
/// - `prep16l` (session 35, helper pr35, [`BwdSlimPrep::V16l`]): that `prep16slc` as `prep16sll`
///   ([`BWD_PREP_SLIM16L`], the chunk located in one round of loads; the same launch).
///
/// Where no row applies the plan runs the full form.
pub const FORM_RULES: [FormRule; 7] = {
    use BwdKernel::*;
    [
        FormRule {
            name: "scaled",
            forms: Some(SCALAR_FORMS),
            path: Some(FormPath::Uncut),
            k: Some(128),
            prep: Some(PrepVariant::V15),
            knob: None,
            needs: &[&[FscanGx, FscanGx4, FscanGxU, FscanGx4U], &[DscanOv2Gx]],
            swaps: &[
                swap(Prep, PrepSc, Relaunch::Same),
                swap(FscanGx, FscanGxSc, Relaunch::UncutReplay),
                swap(FscanGx4, FscanGx4Sc, Relaunch::UncutReplay),
                swap(DscanOv2Gx, DscanOv2GxSc, Relaunch::ScanSmem),
                swap(FscanGxU, FscanGxScU, Relaunch::UncutReplay),
                swap(FscanGx4U, FscanGx4ScU, Relaunch::UncutReplay),
            ],
        },
        FormRule {
            name: "slim",
            forms: Some(SLIM_FORMS),
            path: Some(FormPath::Uncut),
            k: None,
            prep: None,
            knob: None,
            needs: &[&[FscanGxScU, FscanGx4ScU]],
            swaps: &[
                swap(PrepSc, PrepSl, Relaunch::SlimPrep(&BWD_PREP_SLIM)),
                swap(FscanGxScU, FscanGxSl, Relaunch::UncutReplay),
                swap(FscanGx4ScU, FscanGx4Sl, Relaunch::UncutReplay),
            ],
        },
        FormRule {
            name: "split",
            forms: None,
            path: Some(FormPath::Uncut),
            k: None,
            prep: None,
            knob: Some(FormKnob::Split),
            needs: &[&[DscanOv2GxSc]],
            swaps: &[swap(DscanOv2GxSc, DscanOv2GxSh, Relaunch::Split)],
        },
        FormRule {
            name: "slimp",
            forms: Some(&[BwdPrepForm::SlimPieces]),
            path: Some(FormPath::Pieces),
            k: Some(128),
            prep: Some(PrepVariant::V15),
            knob: None,
            needs: &[
                &[Prep],
                &[Psum1, PsumMt1],
                &[FscanGxU],
                &[Dsum1],
                &[DscanpOv5Dr],
            ],
            swaps: &SLIM_PIECES_SWAPS,
        },
        FormRule {
            name: "prep16",
            forms: Some(SLIM_FORMS),
            path: None,
            k: None,
            prep: None,
            knob: Some(FormKnob::SlimPrep(BwdSlimPrep::V16)),
            needs: &[&[PrepSl]],
            swaps: &[swap(PrepSl, PrepSl16, Relaunch::SlimPrep(&BWD_PREP_SLIM16))],
        },
        FormRule {
            name: "prep16c",
            forms: Some(SLIM_FORMS),
            path: None,
            k: None,
            prep: None,
            knob: Some(FormKnob::SlimPrep(BwdSlimPrep::V16c)),
            needs: &[&[PrepSl16]],
            swaps: &[swap(
                PrepSl16,
                PrepSl16c,
                Relaunch::SlimPrep(&BWD_PREP_SLIM16C),
            )],
        },
        FormRule {
            name: "prep16l",
            forms: Some(SLIM_FORMS),
            path: None,
            k: None,
            prep: None,
            knob: Some(FormKnob::SlimPrep(BwdSlimPrep::V16l)),
            needs: &[&[PrepSl16c]],
            swaps: &[swap(
                PrepSl16c,
                PrepSl16l,
                Relaunch::SlimPrep(&BWD_PREP_SLIM16L),
            )],
        },
    ]
};

/// What the rows' columns are matched against: the plan's form, path, K, V, factor kernel and
/// knobs, and what its launches need (SMs, whether the uncut replay holds its SM alone).
pub struct FormContext {
    /// The plan's prep form.
    pub form: BwdPrepForm,
    /// Pieces per sequence (1: uncut).
    pub pieces: u64,
    /// K.
    pub k: u64,
    /// V.
    pub v: u64,
    /// The factor kernel.
    pub prep: PrepVariant,
    /// SMs of the GPU.
    pub sms: u64,
    /// Whether the split producer runs ([`super::backward::dscan_split`]).
    pub split: bool,
    /// The slim prep's form ([`BwdSlimPrep::from_env`]).
    pub slim_prep: BwdSlimPrep,
    /// Whether the replay rule wants one uncut replay block per SM
    /// (`replay_one_per_sm` in `backward.rs`).
    pub replay_one_per_sm: bool,
}

/// The uncut replay's shared memory from its stages' `stages_smem`: raised to
/// [`REPLAY_ONE_PER_SM_SMEM`] where one block per SM is wanted (`one_per_sm`), so that a block
/// holds its SM alone.
pub fn uncut_replay_smem(stages_smem: u32, one_per_sm: bool) -> u32 {
    if one_per_sm {
        stages_smem.max(REPLAY_ONE_PER_SM_SMEM)
    } else {
        stages_smem
    }
}

impl FormContext {
    /// The uncut replay's shared memory from its stages' ([`uncut_replay_smem`] at this plan's
    /// [`FormContext::replay_one_per_sm`]).
    pub fn replay_smem(&self, stages_smem: u32) -> u32 {
        uncut_replay_smem(stages_smem, self.replay_one_per_sm)
    }
}

impl FormRule {
    /// Whether the row's columns hold for `ctx` (the form, path, K = V, factor kernel, knob).
    pub fn holds(&self, ctx: &FormContext) -> bool {
        let path = match self.path {
            Some(FormPath::Uncut) => ctx.pieces <= 1,
            Some(FormPath::Pieces) => ctx.pieces > 1,
            None => true,
        };
        path && self.forms.is_none_or(|f| f.contains(&ctx.form))
            && self.k.is_none_or(|k| ctx.k == k && ctx.v == k)
            && self.prep.is_none_or(|p| ctx.prep == p)
            && self.knob.is_none_or(|knob| match knob {
                FormKnob::Split => ctx.split,
                FormKnob::SlimPrep(at_least) => ctx.slim_prep >= at_least,
            })
    }

    /// Whether `kernels` (the kernels chosen so far) hold one kernel of each group of
    /// [`FormRule::needs`].
    pub fn needs_met(&self, kernels: &[BwdKernel]) -> bool {
        self.needs
            .iter()
            .all(|group| kernels.iter().any(|k| group.contains(k)))
    }

    /// The kernel the row runs in place of `kernel` (`None`: the row leaves it).
    pub fn swapped(&self, kernel: BwdKernel) -> Option<&'static FormSwap> {
        self.swaps.iter().find(|s| s.from == kernel)
    }

    /// The row applied to the built steps `steps` where its columns hold for `ctx` and its needs
    /// are met: each `from` step relaunched as its `to` kernel. Returns whether it applied (the
    /// plan tests' view of one row).
    pub fn apply(&self, steps: &mut [Step], ctx: &FormContext) -> bool {
        let kernels: Vec<BwdKernel> = steps.iter().map(|s| s.0).collect();
        if !self.holds(ctx) || !self.needs_met(&kernels) {
            return false;
        }
        for step in steps.iter_mut() {
            if let Some(swap) = self.swapped(step.0) {
                *step = swap.relaunch(step, ctx);
            }
        }
        true
    }
}

impl FormSwap {
    /// The `to` kernel's launch in place of `step` (the `from` kernel's).
    pub fn relaunch(&self, step: &Step, ctx: &FormContext) -> Step {
        let (_, grid, threads, smem) = *step;
        let to = self.to;
        match self.launch {
            Relaunch::Same => (to, grid, threads, smem),
            Relaunch::SlimPrep(pass) => {
                let (grid, threads, smem) =
                    pass.launch_shape(u64::from(grid.0), u64::from(grid.1), 128, ctx.sms, None);
                (to, grid, threads, smem)
            }
            Relaunch::UncutReplay => {
                let smem = to.form_replay_smem().map_or(smem, |s| ctx.replay_smem(s));
                (to, grid, threads, smem)
            }
            Relaunch::Smem(bytes) => (to, grid, threads, bytes(ctx.k, ctx.v)),
            Relaunch::ScanSmem => (to, grid, threads, overlap_scan_launch(to, ctx.k, ctx.v).1),
            Relaunch::OverlapScan => {
                let (threads, smem) = overlap_scan_launch(to, ctx.k, ctx.v);
                (to, grid, threads, smem)
            }
            Relaunch::DsumAllRows => (
                to,
                (1, grid.1, grid.2),
                (ctx.v / 16) as u32 * 32,
                dsum_sc_smem_bytes(ctx.k, ctx.v),
            ),
            Relaunch::Split => (
                to,
                (2, grid.1, grid.2),
                128,
                dscan_ov2gxsh_smem_bytes(128, 128),
            ),
        }
    }
}

/// The rows of [`FORM_RULES`] a plan applies, chosen once: walking the table in order, a row
/// applies where its columns hold for `ctx` and the kernels chosen so far (`kernels`, the plan's
/// full-form choice, then each applied row's swaps) meet its needs.
pub struct FormRules {
    /// The applied rows, in table order.
    pub rows: Vec<&'static FormRule>,
}

/// Chooses the rows of [`FORM_RULES`] for a plan whose full-form kernels are `kernels`.
pub fn select(kernels: &[BwdKernel], ctx: &FormContext) -> FormRules {
    let mut chosen: Vec<BwdKernel> = kernels.to_vec();
    let mut rows = Vec::new();
    for rule in &FORM_RULES {
        if rule.holds(ctx) && rule.needs_met(&chosen) {
            for k in chosen.iter_mut() {
                if let Some(s) = rule.swapped(*k) {
                    *k = s.to;
                }
            }
            rows.push(rule);
        }
    }
    FormRules { rows }
}

impl FormRules {
    /// A full-form step as the chosen rows launch it: through each row's swap of its kernel, in
    /// table order.
    pub fn relaunch(&self, step: Step, ctx: &FormContext) -> Step {
        self.rows.iter().fold(step, |s, rule| {
            rule.swapped(s.0).map_or(s, |swap| swap.relaunch(&s, ctx))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The row indices name their rows, and every row swaps each kernel at most once (a row is a
    /// function from the kernels chosen before it).
    #[test]
    fn rows_by_index_and_one_swap_per_kernel() {
        let names: Vec<_> = FORM_RULES.iter().map(|r| r.name).collect();
        assert_eq!(
            names,
            [
                "scaled", "slim", "split", "slimp", "prep16", "prep16c", "prep16l"
            ]
        );
        assert_eq!(
            [SCALED, SLIM, SPLIT, SLIM_PIECES, PREP16, PREP16C, PREP16L]
                .map(|i| FORM_RULES[i].name),
            [
                "scaled", "slim", "split", "slimp", "prep16", "prep16c", "prep16l"
            ]
        );
        for rule in &FORM_RULES {
            for (i, a) in rule.swaps.iter().enumerate() {
                assert!(
                    rule.swaps[i + 1..].iter().all(|b| b.from != a.from),
                    "{}: {:?} swapped twice",
                    rule.name,
                    a.from
                );
                assert_ne!(a.from, a.to, "{}", rule.name);
            }
            // Each group a row needs holds a kernel the row swaps.
            for group in rule.needs {
                assert!(
                    group.iter().any(|k| rule.swapped(*k).is_some()),
                    "{}: {group:?}",
                    rule.name
                );
            }
        }
        assert_eq!(
            super::super::backward::PIECE_SLIM_SWAPS,
            swap_pairs(&SLIM_PIECES_SWAPS)
        );
    }
}
