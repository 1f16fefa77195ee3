//! The GDN engine's `DNNPLAN_GDN_*` diagnostics as data, for [`crate::settings`].
//!
//! Contract: one [`Setting`] per variable the GDN plans read; a word list comes from the table
//! its reader consults (the scan, summary, prep, chain, token-stage, piece-pass and replay rows,
//! the `NAMED` tables) or, for the few readers that match literals, lists those literals (the
//! unit tests below feed each word to its reader). The readers are unchanged: an unknown value
//! still means the rule's choice, and `dnnplan env` says so.

use super::backward::{
    BWD_PIECE_PASSES, BwdPrepForm, BwdSlimPrep, CKPT_REPLAYS, DSCAN_SWITCHES, IO_DR_SCAN_SWITCHES,
    ReplayVariant, TOKEN_STAGES,
};
use super::chain::CHAIN_VARIANTS;
use super::fused16::FUSED16_FORMS;
use super::fwd_rows::{
    FACTOR_VARIANTS, FWD_SCANS, FWD_SUMS, PREP_VARIANTS, SLIM_FIRST_SCANS, SLIM_FIRST_SUMS,
    SLIM_PIECES_WG, SLIM_PIECES_WGX, SLIM_SCANS, SlimPrepProducts, SlimScanUse,
};
use crate::settings::{Accepts, Setting};

/// A fixed word list.
macro_rules! words {
    ($($w:literal),+ $(,)?) => {
        Accepts::Words { list: || vec![$($w),+], fold: false }
    };
}

/// A word list from a function.
const fn words(list: fn() -> Vec<&'static str>) -> Accepts {
    Accepts::Words { list, fold: false }
}

/// The value `value` names in a switch's `NAMED` table (`(word, value)` rows), if any: the one
/// lookup of every such table (the readers fall back to their rule on `None`).
pub fn named<T: Copy>(table: &[(&'static str, T)], value: Option<&str>) -> Option<T> {
    let value = value?;
    table
        .iter()
        .find(|(word, _)| *word == value)
        .map(|&(_, v)| v)
}

/// The words of a `NAMED` table.
fn words_of<T>(table: &[(&'static str, T)]) -> Vec<&'static str> {
    table.iter().map(|&(word, _)| word).collect()
}

/// `DNNPLAN_GDN_FWD_SCAN`: a full scan row's switch, or a wgmma slim scan's suffix (several rows
/// share a suffix; `Accepts::describe` lists each word once).
fn fwd_scan_words() -> Vec<&'static str> {
    let wgmma = SLIM_SCANS
        .iter()
        .filter(|r| matches!(r.used, SlimScanUse::Wgmma(..)))
        .map(|r| r.scan.suffix);
    FWD_SCANS.iter().map(|r| r.switch).chain(wgmma).collect()
}

/// `DNNPLAN_GDN_FWD_FUSED`: a one-pass form's switch, or `0`.
fn fused_words() -> Vec<&'static str> {
    std::iter::once("0")
        .chain(FUSED16_FORMS.iter().map(|r| r.switch))
        .collect()
}

/// `DNNPLAN_GDN_FWD_PIECE`: the two wgmma piece summaries' suffixes, or `d`.
fn fwd_piece_words() -> Vec<&'static str> {
    vec![SLIM_PIECES_WGX.sum.suffix, SLIM_PIECES_WG.sum.suffix, "d"]
}

/// `DNNPLAN_GDN_BWD_DSCAN`: the reverse scans and the io-`dR` producers.
fn bwd_dscan_words() -> Vec<&'static str> {
    DSCAN_SWITCHES
        .iter()
        .chain(&IO_DR_SCAN_SWITCHES)
        .copied()
        .collect()
}

/// Every `DNNPLAN_GDN_*` variable the GDN plans read (at plan build; README, "GDN diagnostics").
pub static SWITCHES: [Setting; 30] = [
    Setting {
        name: "DNNPLAN_GDN_FWD_PIECES",
        accepts: Accepts::Unsigned,
        effect: "forward: force n pieces per sequence (1 = none; within the launch grid)",
    },
    Setting {
        name: "DNNPLAN_GDN_FWD_FUSED",
        accepts: words(fused_words),
        effect: "forward: the one-pass forward's form wherever it serves the node, or never (0)",
    },
    Setting {
        name: "DNNPLAN_GDN_FWD_SCAN",
        accepts: words(fwd_scan_words),
        effect: "forward: the output scan instead of the rule's",
    },
    Setting {
        name: "DNNPLAN_GDN_FWD_PIECE",
        accepts: words(fwd_piece_words),
        effect: "forward: how much of the piece passes' step runs on wgmma",
    },
    Setting {
        name: "DNNPLAN_GDN_FWD_SUM",
        accepts: words(|| FWD_SUMS.iter().map(|r| r.switch).collect()),
        effect: "forward: the piece summary pass",
    },
    Setting {
        name: "DNNPLAN_GDN_FWD_STEPS",
        accepts: Accepts::Unsigned,
        effect: "forward: launch only the first n kernels (measurement; results are incomplete)",
    },
    Setting {
        name: "DNNPLAN_GDN_FWD_PREP",
        accepts: words(|| PREP_VARIANTS.iter().map(|r| r.switch).collect()),
        effect: "the factor kernel (forward and the backward's full form)",
    },
    Setting {
        name: "DNNPLAN_GDN_FWD_SLIMPREP",
        accepts: words(|| words_of(&SlimPrepProducts::NAMED)),
        effect: "forward: the slim prep's form",
    },
    Setting {
        name: "DNNPLAN_GDN_FWD_PIECE_FIRST",
        accepts: words!["0", "1", "2"],
        effect: "forward: the piece path's first piece early (1), not (0), 2: with the rest's scan always",
    },
    Setting {
        name: "DNNPLAN_GDN_FWD_PIECE_FIRST_SCAN",
        accepts: words(|| SLIM_FIRST_SCANS.iter().map(|r| r.pass.suffix).collect()),
        effect: "forward: the first piece's scan",
    },
    Setting {
        name: "DNNPLAN_GDN_FWD_PIECE_FIRST_SUM",
        accepts: words(|| SLIM_FIRST_SUMS.iter().map(|r| r.pass.suffix).collect()),
        effect: "forward: the summary beside the first piece",
    },
    Setting {
        name: "DNNPLAN_GDN_FWD_PIECE_FIRST_SCALE",
        accepts: Accepts::Integer,
        effect: "forward: the first piece's length in 256ths of an even piece (clamped to 0..=4096)",
    },
    Setting {
        name: "DNNPLAN_GDN_FWD_FACTORS",
        accepts: words(|| FACTOR_VARIANTS.iter().map(|r| r.switch).collect()),
        effect: "forward: the chunk factors' layout",
    },
    Setting {
        name: "DNNPLAN_GDN_FWD_OVERLAP",
        accepts: words!["0", "1", "seq"],
        effect: "forward: the prep beside the scan (1), never (0), or one after the other (seq)",
    },
    Setting {
        name: "DNNPLAN_GDN_FWD_OVERLAP_PER_SM",
        accepts: Accepts::Unsigned,
        effect: "forward: the overlapped prep's blocks per SM",
    },
    Setting {
        name: "DNNPLAN_GDN_CHAIN",
        accepts: words(|| CHAIN_VARIANTS.iter().map(|r| r.switch).collect()),
        effect: "the piece chain's body (forward and backward)",
    },
    Setting {
        name: "DNNPLAN_GDN_PDL",
        accepts: words!["0", "1", "early"],
        effect: "programmatic dependent launch: off, on at exit, or early",
    },
    Setting {
        name: "DNNPLAN_GDN_SEQ_ORDER",
        accepts: words!["0", "1"],
        effect: "longest-first dispatch of the uncut scans: off or on",
    },
    Setting {
        name: "DNNPLAN_GDN_BWD_PREP",
        accepts: words(|| words_of(&BwdPrepForm::NAMED)),
        effect: "backward: the prep's form",
    },
    Setting {
        name: "DNNPLAN_GDN_BWD_SLIMPREP",
        accepts: words(|| words_of(&BwdSlimPrep::NAMED)),
        effect: "backward: the slim prep's kernel",
    },
    Setting {
        name: "DNNPLAN_GDN_BWD_FSCAN",
        accepts: words(|| words_of(&ReplayVariant::NAMED)),
        effect: "backward: the forward-state replay",
    },
    Setting {
        name: "DNNPLAN_GDN_BWD_FSCAN_PER_SM",
        accepts: words!["1", "2"],
        effect: "backward: the replay at one block per SM (1) or two (2)",
    },
    Setting {
        name: "DNNPLAN_GDN_BWD_DSCAN",
        accepts: words(bwd_dscan_words),
        effect: "backward: the reverse scan",
    },
    Setting {
        name: "DNNPLAN_GDN_BWD_DSCAN_SPLIT",
        accepts: words!["1", "2"],
        effect: "backward: the overlapped reverse scan as one block per unit (1) or two halves (2)",
    },
    Setting {
        name: "DNNPLAN_GDN_BWD_OVERLAP",
        accepts: words!["0", "1"],
        effect: "backward: the reverse scan beside the token stage: off or on",
    },
    Setting {
        name: "DNNPLAN_GDN_BWD_TOKENS",
        accepts: words(|| TOKEN_STAGES.iter().map(|s| s.name).collect()),
        effect: "backward: the token stage",
    },
    Setting {
        name: "DNNPLAN_GDN_BWD_PIECES",
        accepts: Accepts::Unsigned,
        effect: "backward: force n pieces per sequence (1 = none; within the launch grid)",
    },
    Setting {
        name: "DNNPLAN_GDN_BWD_PIECE_PASSES",
        accepts: words(|| BWD_PIECE_PASSES.iter().map(|r| r.name).collect()),
        effect: "backward: the piece chain's summary, replay and reverse passes",
    },
    Setting {
        name: "DNNPLAN_GDN_BWD_CKPT_REPLAY",
        accepts: words(|| CKPT_REPLAYS.iter().map(|r| r.name).collect()),
        effect: "backward: the replay seeded from checkpoint rows",
    },
    Setting {
        name: "DNNPLAN_GDN_BWD_STEPS",
        accepts: Accepts::Unsigned,
        effect: "backward: launch only the first n kernels (measurement; results are incomplete)",
    },
];

#[cfg(test)]
mod tests {
    use super::super::backward::{PiecePasses, TokenStage};
    use super::super::chain::ChainVariant;
    use super::super::fwd_rows::{FwdFactors, PrepVariant, ScanVariant, SumVariant};
    use super::*;
    use crate::settings::find;

    fn words_for(name: &str) -> Vec<&'static str> {
        match find(name).map(|s| s.accepts) {
            Some(Accepts::Words { list, .. }) => list(),
            other => panic!("{name}: {other:?}"),
        }
    }

    /// Each word of a table-backed switch names a row its reader finds (not the fallback).
    #[test]
    fn table_words_are_what_the_readers_find() {
        for w in words_for("DNNPLAN_GDN_FWD_SCAN") {
            let full = ScanVariant::from_switch(w, 128).is_some();
            let wgmma = SLIM_SCANS
                .iter()
                .any(|r| r.scan.suffix == w && matches!(r.used, SlimScanUse::Wgmma(..)));
            assert!(full || wgmma, "FWD_SCAN {w}");
        }
        for w in words_for("DNNPLAN_GDN_FWD_PIECE") {
            assert!(
                super::super::fwd_rows::piece_switch(Some(w)).is_some(),
                "{w}"
            );
        }
        for w in words_for("DNNPLAN_GDN_FWD_SUM") {
            assert!(
                SumVariant::from_switch(w, 128).is_some()
                    || SumVariant::from_switch(w, 64).is_some(),
                "{w}"
            );
        }
        for w in words_for("DNNPLAN_GDN_FWD_FACTORS") {
            assert!(FwdFactors::from_switch(w).is_some(), "{w}");
        }
        let preps: Vec<_> = words_for("DNNPLAN_GDN_FWD_PREP")
            .into_iter()
            .map(PrepVariant::from_switch)
            .collect();
        assert_eq!(preps.len(), PREP_VARIANTS.len());
        for (w, r) in words_for("DNNPLAN_GDN_FWD_PREP")
            .into_iter()
            .zip(&PREP_VARIANTS)
        {
            assert_eq!(PrepVariant::from_switch(w), r.variant);
        }
        for (w, c) in words_for("DNNPLAN_GDN_CHAIN")
            .into_iter()
            .zip(&CHAIN_VARIANTS)
        {
            assert_eq!(ChainVariant::pick(w).switch, c.switch);
        }
        for w in words_for("DNNPLAN_GDN_FWD_SLIMPREP") {
            let named = SlimPrepProducts::NAMED
                .iter()
                .find(|r| r.0 == w)
                .map(|r| r.1);
            assert_eq!(Some(SlimPrepProducts::from_switch(Some(w))), named, "{w}");
        }
        for w in words_for("DNNPLAN_GDN_BWD_TOKENS") {
            assert!(TokenStage::named(w).is_some(), "{w}");
        }
        for w in words_for("DNNPLAN_GDN_BWD_PIECE_PASSES") {
            assert!(
                PiecePasses::pick(w, 128).name == w || PiecePasses::pick(w, 64).name == w,
                "{w}"
            );
        }
        for (w, (_, form)) in words_for("DNNPLAN_GDN_BWD_PREP")
            .into_iter()
            .zip(&BwdPrepForm::NAMED)
        {
            assert_eq!(BwdPrepForm::from_switch(w), *form);
        }
        for (w, (_, v)) in words_for("DNNPLAN_GDN_BWD_FSCAN")
            .into_iter()
            .zip(&ReplayVariant::NAMED)
        {
            assert_eq!(ReplayVariant::from_switch(Some(w)), *v);
        }
        // DNNPLAN_GDN_FWD_FUSED: a form's word runs that form where the rule takes the two
        // passes ((1, 32768, 16): cut); 0 the two passes where the rule takes the one pass.
        use super::super::analyzer::{GdnOp, test_facts};
        use super::super::engine::FwdChoice;
        use super::super::fused16::fused16_form_at;
        let cut = test_facts(GdnOp::Forward, 1, 32768, 16, 128, false);
        let uncut = test_facts(GdnOp::Forward, 4, 4 * 8192, 16, 128, false);
        let at = |f: &_, v: Option<&str>| {
            fused16_form_at(f, 132, &FwdChoice::default_for(f, 132), v).map(|r| r.switch)
        };
        assert!(at(&cut, None).is_none() && at(&uncut, None).is_some());
        for w in words_for("DNNPLAN_GDN_FWD_FUSED") {
            if w == "0" {
                assert_eq!(at(&uncut, Some(w)), None);
            } else {
                assert_eq!(at(&cut, Some(w)), Some(w));
            }
        }
        for w in words_for("DNNPLAN_GDN_BWD_SLIMPREP") {
            let form = BwdSlimPrep::NAMED.iter().find(|r| r.0 == w).map(|r| r.1);
            assert_eq!(Some(BwdSlimPrep::from_switch(Some(w), 1)), form, "{w}");
            assert_eq!(Some(BwdSlimPrep::from_switch(Some(w), 1000)), form, "{w}");
        }
    }

    /// The literal-matching readers: each word changes what the reader returns against an
    /// unknown value somewhere (so the list names no word the reader ignores).
    #[test]
    fn literal_words_are_what_the_readers_match() {
        use super::super::{fwd_overlap, fwd_rows, pdl::PdlMode, seq_order};
        let modes: Vec<_> = words_for("DNNPLAN_GDN_PDL")
            .into_iter()
            .map(|w| PdlMode::parse(Some(w)))
            .collect();
        assert!(modes.windows(2).all(|m| m[0] != m[1]), "{modes:?}");
        for w in words_for("DNNPLAN_GDN_SEQ_ORDER") {
            let differs = [1, 10, 1000].iter().any(|&n| {
                seq_order::seq_order_on(Some(w), n) != seq_order::seq_order_on(Some("x"), n)
            });
            assert!(differs || w == "1" || w == "0", "{w}");
        }
        assert!(!seq_order::seq_order_on(Some("0"), 1000) && seq_order::seq_order_on(Some("1"), 1));
        assert!(!fwd_rows::piece_first_switch(Some("0")));
        assert!(fwd_rows::piece_first_switch(Some("1")) && fwd_rows::piece_first_switch(Some("2")));
        for w in words_for("DNNPLAN_GDN_FWD_OVERLAP") {
            let on = fwd_overlap::pick(true, Some(w), false, 1, 1, 132);
            assert_eq!(on, w != "0", "{w}");
        }
        assert_eq!(
            words_for("DNNPLAN_GDN_FWD_PIECE_FIRST"),
            ["0", "1", "2"],
            "piece_first_switch reads 0, 1 and 2"
        );
    }
}
