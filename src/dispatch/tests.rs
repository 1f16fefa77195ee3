//! Dispatch tests on a CPU: stand-in engines injected as test manifest families, a scripted
//! backend, and the real planning path. No arithmetic: what is checked is routing and ranking.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use super::backend::CudnnNotLoaded;
use super::explain::{explain, explain_graph, render_table};
use super::graph::Graph;
use super::knobs::{KnobType, Knobs};
use super::manifest::IdOwner;
use super::modes::{BuildPolicy, HeurMode};
use super::plan_list::{PlanList, PlanOptions};
use super::target::Target;
use super::testing::stand_in::*;
use super::testing::{FakeBackend, ModeScript};
use crate::error::Error;

// ---------------------------------------------------------------- backend scripts

/// Backend A = {eng1, eng2}, FALLBACK = {eng3, eng1 (duplicate of A's)}, B = {eng4}.
fn backend() -> FakeBackend {
    FakeBackend {
        modes: vec![
            (
                HeurMode::A,
                ModeScript::Configs(vec![(1, vec![(40, 128)]), (2, vec![])]),
            ),
            (
                HeurMode::Fallback,
                ModeScript::Configs(vec![(3, vec![(0, 2)]), (1, vec![(40, 128)])]),
            ),
            (HeurMode::B, ModeScript::Configs(vec![(4, vec![])])),
        ],
        engine_count: 5,
        ..FakeBackend::default()
    }
}

fn opts_with(backend: FakeBackend, arch: Option<i32>, opt_in: bool) -> PlanOptions {
    PlanOptions {
        manifest: &STAND_IN_MANIFEST,
        backend: Arc::new(backend),
        target: match arch {
            Some(a) => Target::with_arch(a),
            None => Target::no_device("test machine has no GPU"),
        },
        opt_in: Some(opt_in),
    }
}

fn opts() -> PlanOptions {
    opts_with(backend(), Some(90), false)
}

fn g(ops: &[&str]) -> Arc<Graph> {
    frozen_chain(ops).unwrap()
}

fn planned(ops: &[&str], o: PlanOptions, modes: &[HeurMode]) -> PlanList {
    let mut l = PlanList::new(g(ops), o);
    l.create_execution_plans(modes).unwrap();
    l
}

fn names(l: &PlanList) -> Vec<String> {
    (0..l.count()).map(|i| l.name_at(i).unwrap()).collect()
}

const P1: &str = "alpha[TILE_M=128]";
const P2: &str = "beta";
const P3: &str = "alpha[TILE_M=64]";
const B1: &str = "eng1_k40=128";
const B2: &str = "eng2";
const B3: &str = "eng3_k0=2";
const B4: &str = "eng4";

// ---------------------------------------------------------------- ranking

#[test]
fn lead_places_ours_before_each_modes_backend_block() {
    let l = planned(&[ATTN, UNANCHORED], opts(), &[]);
    assert_eq!(names(&l), [P1, P2, B1, B2, P3, B3]);
}

#[test]
fn trail_places_the_backend_block_first_in_each_mode() {
    let l = planned(&[ATTN, TRAIL], opts(), &[HeurMode::A, HeurMode::Fallback]);
    assert_eq!(names(&l), [B1, B2, P1, P2, B3, P3]);
}

#[test]
fn modes_follow_caller_order_and_b_reuses_kind_a() {
    let l = planned(&[ATTN], opts(), &[HeurMode::Fallback, HeurMode::B]);
    // FALLBACK block: ours [beta, alpha64] + backend FALLBACK {eng3, eng1};
    // B block: ours A [alpha128, beta(dup)] + backend B {eng4}
    assert_eq!(names(&l), [P2, P3, B3, B1, P1, B4]);
    let modes: Vec<Option<HeurMode>> = l.entries().iter().map(|e| e.mode).collect();
    assert_eq!(
        modes,
        [
            None,
            None,
            Some(HeurMode::Fallback),
            Some(HeurMode::Fallback),
            None,
            Some(HeurMode::B)
        ]
    );
}

#[test]
fn opensource_puts_the_delegating_entry_after_ours_and_ahead_of_the_backend() {
    let l = planned(&[ATTN], opts(), &[HeurMode::OpenSource, HeurMode::A]);
    assert_eq!(names(&l), [P1, P2, "backend_heuristics", B1, B2]);
    let l = planned(&[ATTN], opts(), &[HeurMode::A, HeurMode::OpenSource]);
    // the delegating entry leads the backend's A block, never ours
    assert_eq!(names(&l), [P1, P2, "backend_heuristics", B1, B2]);
    let l = planned(&[ATTN, TRAIL], opts(), &[HeurMode::A, HeurMode::OpenSource]);
    assert_eq!(names(&l), ["backend_heuristics", B1, B2, P1, P2]);
}

#[test]
fn backend_duplicates_across_modes_keep_the_first_index_and_mode() {
    let l = planned(&[ATTN], opts(), &[HeurMode::A, HeurMode::Fallback]);
    let e1: Vec<_> = l.entries().iter().filter(|e| e.engine_id == 1).collect();
    assert_eq!(e1.len(), 1);
    assert_eq!(e1[0].mode, Some(HeurMode::A));
    let v = &l.trace().backend_modes;
    assert_eq!((v[0].configs, v[0].new_entries), (2, 2));
    assert_eq!((v[1].configs, v[1].new_entries), (2, 1));
}

#[test]
fn repeated_modes_and_dedup_never_use_the_backend_index() {
    // [A, A]: the backend is queried once per distinct mode; ours dedup by (id, knobs)
    let fake = backend();
    let l = planned(
        &[ATTN],
        opts_with(fake.clone(), Some(90), false),
        &[HeurMode::A, HeurMode::A],
    );
    assert_eq!(names(&l), [P1, P2, B1, B2]);
    assert_eq!(fake.calls(), ["query A"]);
}

#[test]
fn family_without_hook_takes_the_unranked_path() {
    let l = planned(&[NORM], opts(), &[HeurMode::Fallback, HeurMode::A]);
    // accepting engines in slot order (the sm100 one declines), then backend entries in backend
    // index order (FALLBACK was queried first), no per-mode interleaving
    assert_eq!(names(&l), ["norm_broken_build", "norm_sm90", B3, B1, B2]);
    let t = l.trace();
    assert!(!t.ranked);
    assert_eq!(
        t.candidates[1].declined.as_deref().unwrap(),
        "requires SM100-109; current device is SM90"
    );
}

#[test]
fn hook_without_facts_lists_backend_entries_only() {
    let l = planned(&[OPAQUE], opts(), &[]);
    assert_eq!(names(&l), [B1, B2, B3]);
    assert!(
        l.trace().candidates[0]
            .declined
            .as_deref()
            .unwrap()
            .contains("cannot express")
    );
}

#[test]
fn no_family_or_two_families_go_to_the_backend() {
    let l = planned(&[UNANCHORED], opts(), &[]);
    assert_eq!(names(&l), [B1, B2, B3]);
    assert!(l.trace().family.is_none());
    let l = planned(&[ATTN, NORM], opts(), &[]);
    assert_eq!(names(&l), [B1, B2, B3]);
    assert_eq!(l.trace().named_families, ["ranked", "unranked"]);
    assert!(
        l.trace()
            .no_family_reason
            .as_deref()
            .unwrap()
            .contains("several families")
    );
}

#[test]
fn hook_proposing_a_declining_engine_is_a_bug_not_a_route() {
    let mut l = PlanList::new(g(&[ATTN, PROPOSE_GAMMA]), opts());
    let e = l.create_execution_plans(&[]).unwrap_err();
    assert!(matches!(e, Error::Internal(_)), "{e}");
    assert!(e.to_string().contains("family ranked"), "{e}");
}

#[test]
fn a_non_decline_error_from_check_support_propagates() {
    let mut l = PlanList::new(g(&[BUGGY_OP]), opts());
    let e = l.create_execution_plans(&[]).unwrap_err();
    assert!(
        matches!(e, Error::Internal(ref m) if m.contains("stand-in engine bug")),
        "{e}"
    );
}

#[test]
fn engines_needing_a_gpu_decline_with_that_reason() {
    let l = planned(&[ATTN], opts_with(backend(), None, false), &[]);
    assert_eq!(names(&l), [B1, B2, B3]);
    for c in l.trace().candidates.iter().filter(|c| c.offered) {
        assert!(
            c.declined
                .as_deref()
                .unwrap()
                .contains("no CUDA device (test machine has no GPU)"),
            "{c:?}"
        );
    }
}

#[test]
fn facts_are_analyzed_once_per_graph() {
    let mut l = planned(&[COUNTED_OP], opts(), &[]);
    assert_eq!(COUNTED.load(Ordering::SeqCst), 1);
    l.build_plans(BuildPolicy::All).unwrap();
    let j = l.create_execution_plan(21_601, &Knobs::none()).unwrap();
    l.build_plan_at_index(j).unwrap();
    assert_eq!(
        COUNTED.load(Ordering::SeqCst),
        1,
        "two checks, three builds, one analysis"
    );
    assert_eq!(l.trace().facts.as_ref().unwrap()["wide"], false);
}

// ---------------------------------------------------------------- opt-in gate

#[test]
fn opt_in_slots_are_offered_only_behind_the_gate() {
    let off = planned(
        &[ATTN],
        opts_with(backend(), Some(90), false),
        &[HeurMode::A],
    );
    assert!(!names(&off).iter().any(|n| n == "delta"));
    let gated = off
        .trace()
        .candidates
        .iter()
        .find(|c| c.name == "delta")
        .unwrap();
    assert!(!gated.offered);
    assert!(
        gated
            .declined
            .as_deref()
            .unwrap()
            .contains("DNNPLAN_ENABLE_OPT_IN_ENGINES")
    );
    let on = planned(
        &[ATTN],
        opts_with(backend(), Some(90), true),
        &[HeurMode::A],
    );
    assert_eq!(names(&on), [P1, P2, "delta", B1, B2]);
    assert_eq!(
        on.engine_and_knobs_at(2).unwrap(),
        (DELTA_ID, Knobs::none())
    );
}

// ---------------------------------------------------------------- id decoding

#[test]
fn any_id_decodes_without_registration() {
    let m = &STAND_IN_MANIFEST;
    assert!(matches!(m.engine_for_id(7, false), IdOwner::Backend));
    assert!(matches!(m.engine_for_id(12_345, false), IdOwner::CppOss));
    assert!(matches!(m.engine_for_id(-1, false), IdOwner::Delegating));
    assert!(matches!(m.engine_for_id(-2, false), IdOwner::Marker));
    assert!(matches!(m.engine_for_id(-9, false), IdOwner::Invalid));
    assert!(matches!(m.engine_for_id(BETA_ID, false), IdOwner::Engine(c) if c.name == "beta"));
    assert!(matches!(
        m.engine_for_id(DELTA_ID, false),
        IdOwner::GatedOff { name: "delta", .. }
    ));
    assert!(matches!(m.engine_for_id(DELTA_ID, true), IdOwner::Engine(c) if c.name == "delta"));
    assert!(matches!(
        m.engine_for_id(RANKED_BASE + 3, true),
        IdOwner::UnusedSlot {
            family: "ranked",
            slot: 3
        }
    ));
    assert!(matches!(
        m.engine_for_id(20_517, true),
        IdOwner::UnknownBlock {
            base: 20_500,
            reference: Some("frost_sdpa_fwd")
        }
    ));
    assert!(matches!(
        m.engine_for_id(29_900, true),
        IdOwner::UnknownBlock {
            reference: None,
            ..
        }
    ));
    assert_eq!(m.check(), Vec::<String>::new());
}

// ---------------------------------------------------------------- at-index API and walk

#[test]
fn engine_and_knobs_at_index_in_public_form() {
    let l = planned(&[ATTN], opts(), &[HeurMode::OpenSource, HeurMode::A]);
    assert_eq!(l.engine_and_knobs_at(0).unwrap(), (ALPHA_ID, tile(128)));
    assert_eq!(l.engine_and_knobs_at(1).unwrap(), (BETA_ID, Knobs::none()));
    let e = l.engine_and_knobs_at(2).unwrap_err();
    assert!(
        matches!(e, Error::NotSupported(ref m) if m.contains("delegating")),
        "{e}"
    );
    // backend raw knob 40 is TILE_M publicly
    assert_eq!(l.engine_and_knobs_at(3).unwrap(), (1, tile(128)));
    assert!(l.engine_and_knobs_at(5).is_err());
    assert!(matches!(l.name_at(5).unwrap_err(), Error::BadParam { .. }));
}

#[test]
fn decline_walk_advances_and_records_failures() {
    let mut fake = backend();
    fake.build_declines = vec![1];
    let mut l = planned(&[NORM], opts_with(fake.clone(), Some(90), false), &[]);
    // [norm_broken_build, norm_sm90, eng1, eng2, eng3]
    l.build_plans(BuildPolicy::HeuristicsChoice).unwrap();
    assert_eq!((l.selected(), l.is_built()), (1, true));
    assert_eq!(l.workspace_size().unwrap(), 0);
    // from a selected backend index the walk passes eng1's decline to eng2
    l.select_plan(3).unwrap();
    l.build_plans(BuildPolicy::HeuristicsChoice).unwrap();
    assert_eq!(l.selected(), 3);
    let mut l2 = planned(&[NORM], opts_with(fake.clone(), Some(90), false), &[]);
    l2.build_plan_at_index(1).unwrap();
    l2.build_plan_at_index(2).unwrap_err();
    assert_eq!(
        l2.selected(),
        1,
        "a failed build_plan_at_index keeps the selection"
    );
}

#[test]
fn pinned_decline_is_an_error_and_unpinned_walk_skips() {
    let mut l = planned(&[NORM], opts(), &[]);
    l.select_plan(0).unwrap();
    assert!(l.is_pinned());
    let e = l.build_plans(BuildPolicy::HeuristicsChoice).unwrap_err();
    assert!(
        matches!(e, Error::NotSupported(ref m) if m.contains("pinned") && m.contains("kernel module unavailable")),
        "{e}"
    );
    assert!(!l.is_built());
    l.select_plan(1).unwrap();
    l.build_plans(BuildPolicy::HeuristicsChoice).unwrap();
    assert_eq!(l.selected(), 1);
}

#[test]
fn walk_reports_every_failure_and_the_backend_decline() {
    let mut fake = backend();
    fake.build_declines = vec![1, 2, 3];
    let mut l = planned(&[UNANCHORED], opts_with(fake, Some(90), false), &[]);
    let e = l.build_plans(BuildPolicy::HeuristicsChoice).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, Error::NotSupported(_)));
    assert!(m.contains("no plan in the list could be built"), "{m}");
    for i in 0..3 {
        assert!(m.contains(&format!("[{i}] eng")), "{m}");
    }
    assert!(!l.is_built());
}

#[test]
fn build_all_keeps_the_first_success_or_the_built_selection() {
    let mut l = planned(&[NORM], opts(), &[]);
    l.build_plans(BuildPolicy::All).unwrap();
    assert_eq!(l.selected(), 1);
    l.select_plan(3).unwrap();
    l.build_plans(BuildPolicy::All).unwrap();
    assert_eq!(l.selected(), 3);
}

#[test]
fn backend_decline_alone_is_reported_as_such() {
    let mut fake = backend();
    fake.lower_decline = Some("no lowering for test_norm".into());
    let mut l = PlanList::new(g(&[NORM]), opts_with(fake, Some(90), false));
    l.create_execution_plans(&[]).unwrap();
    // the backend declined: the list holds bundled engines only, and the walk passes the decline
    assert_eq!(names(&l), ["norm_broken_build", "norm_sm90"]);
    l.build_plans(BuildPolicy::HeuristicsChoice).unwrap();
    assert_eq!(l.selected(), 1);

    let mut fake = backend();
    fake.lower_decline = Some("no lowering for this graph".into());
    let mut l = PlanList::new(g(&[UNANCHORED]), opts_with(fake, Some(90), false));
    let e = l.create_execution_plans(&[]).unwrap_err();
    let m = e.to_string();
    assert!(matches!(e, Error::NotSupported(_)));
    assert!(
        m.contains("the backend declined: no lowering for this graph"),
        "{m}"
    );
    assert!(m.contains("no node type anchors"), "{m}");
}

#[test]
fn every_mode_failing_declines_the_backend_one_failing_is_tolerated() {
    let mut fake = backend();
    fake.modes[1].1 = ModeScript::Decline("FALLBACK has nothing".into());
    let l = planned(&[UNANCHORED], opts_with(fake.clone(), Some(90), false), &[]);
    assert_eq!(names(&l), [B1, B2]);
    assert_eq!(
        l.trace().backend_modes[1].declined.as_deref(),
        Some("FALLBACK has nothing")
    );
    fake.modes[0].1 = ModeScript::Decline("A has nothing".into());
    let mut l = PlanList::new(g(&[UNANCHORED]), opts_with(fake, Some(90), false));
    let e = l.create_execution_plans(&[]).unwrap_err();
    assert!(e.to_string().contains("FALLBACK has nothing"), "{e}");
}

#[test]
fn delegating_entry_when_the_backend_lists_nothing_but_has_engines() {
    let fake = FakeBackend {
        engine_count: 3,
        ..FakeBackend::default()
    };
    let mut l = planned(&[UNANCHORED], opts_with(fake.clone(), Some(90), false), &[]);
    assert_eq!(names(&l), ["backend_heuristics"]);
    l.build_plans(BuildPolicy::HeuristicsChoice).unwrap();
    assert!(fake.calls().contains(&"build delegating".to_owned()));
}

#[test]
fn guard_declines_the_backend_without_consulting_it() {
    let fake = backend();
    let mut l = PlanList::new(g(&[GUARDED]), opts_with(fake.clone(), Some(90), false));
    let e = l.create_execution_plans(&[]).unwrap_err();
    assert!(
        e.to_string()
            .contains("backend guard: documented backend defect"),
        "{e}"
    );
    assert!(fake.calls().is_empty());
}

#[test]
fn cudnn_not_loaded_declines_with_the_loader_reason() {
    let o = PlanOptions {
        backend: Arc::new(CudnnNotLoaded {
            reason: "libcudnn.so.9 not found".into(),
        }),
        ..opts()
    };
    let l = planned(&[NORM], o, &[]);
    assert_eq!(names(&l), ["norm_broken_build", "norm_sm90"]);
    assert_eq!(
        l.trace().backend_declined.as_deref(),
        Some("cuDNN is not loaded: libcudnn.so.9 not found")
    );
}

// ---------------------------------------------------------------- one-shot and replay

#[test]
fn planning_is_one_shot_and_state_errors_are_clear() {
    let mut l = PlanList::new(g(&[ATTN]), opts());
    assert_eq!(l.count(), 0);
    assert!(matches!(
        l.select_plan(0).unwrap_err(),
        Error::InvalidState(_)
    ));
    assert!(matches!(
        l.workspace_size().unwrap_err(),
        Error::InvalidState(_)
    ));
    l.create_execution_plans(&[]).unwrap();
    let e = l.create_execution_plans(&[]).unwrap_err();
    assert!(
        matches!(e, Error::InvalidState(ref m) if m.contains("one-shot")),
        "{e}"
    );
    assert!(matches!(
        l.workspace_size().unwrap_err(),
        Error::InvalidState(_)
    ));
    assert!(matches!(
        l.select_plan(99).unwrap_err(),
        Error::BadParam { .. }
    ));
}

#[test]
fn replay_appends_the_exact_entry_and_marks_planning_done() {
    let fake = backend();
    let mut l = PlanList::new(g(&[ATTN]), opts_with(fake.clone(), Some(90), false));
    let i = l.create_execution_plan(ALPHA_ID, &tile(64)).unwrap();
    assert_eq!((i, l.count()), (0, 1));
    assert_eq!(l.name_at(0).unwrap(), P3);
    assert!(matches!(
        l.create_execution_plans(&[]).unwrap_err(),
        Error::InvalidState(_)
    ));
    let j = l.create_execution_plan(1, &tile(128)).unwrap();
    assert_eq!(l.name_at(j).unwrap(), B1);
    assert_eq!(fake.calls(), ["create eng1_k40=128"]);
    l.build_plan_at_index(j).unwrap();
    assert_eq!(l.workspace_size().unwrap(), 2048);
    // a replayed bundled pin is checked before it is built
    let g = l.create_execution_plan(GAMMA_ID, &Knobs::none()).unwrap();
    let e = l.build_plan_at_index(g).unwrap_err();
    assert!(
        matches!(e, Error::Declined { ref reason, .. } if reason.contains("requires SM100")),
        "{e}"
    );
}

#[test]
fn replay_round_trips_every_listed_entry() {
    let mut l = planned(&[ATTN], opts(), &[]);
    let n = l.count();
    for i in 0..n {
        let (id, knobs) = l.engine_and_knobs_at(i).unwrap();
        if knobs.get(KnobType::NOT_SET).is_some() {
            // a backend knob with no public name (eng3's raw SPLIT_K) cannot be replayed
            let e = l.create_execution_plan(id, &knobs).unwrap_err();
            assert!(matches!(e, Error::BadParam { .. }), "{e}");
            continue;
        }
        let j = l.create_execution_plan(id, &knobs).unwrap();
        assert_eq!(l.name_at(j).unwrap(), l.name_at(i).unwrap());
        assert_eq!(l.engine_and_knobs_at(j).unwrap(), (id, knobs));
    }
}

#[test]
fn replay_rejects_unknown_ids_and_bad_knobs_never_a_neighbour() {
    let mut l = planned(&[ATTN], opts(), &[]);
    let n = l.count();
    let bad = |l: &mut PlanList, id, k: Knobs| l.create_execution_plan(id, &k).unwrap_err();
    assert!(
        matches!(bad(&mut l, ALPHA_ID, tile(96)), Error::BadParam { ref why, .. } if why.contains("TILE_M=96"))
    );
    let unknown_type = Knobs::from_arrays(&[4242], &[1]).unwrap();
    assert!(matches!(
        bad(&mut l, ALPHA_ID, unknown_type),
        Error::BadParam { .. }
    ));
    assert!(matches!(
        bad(&mut l, BETA_ID, tile(64)),
        Error::BadParam { .. }
    ));
    assert!(matches!(
        bad(&mut l, RANKED_BASE + 3, Knobs::none()),
        Error::NotFound { .. }
    ));
    assert!(
        matches!(bad(&mut l, 20_517, Knobs::none()), Error::NotFound { ref key, .. } if key.contains("frost_sdpa_fwd"))
    );
    assert!(
        matches!(bad(&mut l, DELTA_ID, Knobs::none()), Error::BadParam { ref why, .. } if why.contains("opt-in"))
    );
    assert!(matches!(
        bad(&mut l, -1, Knobs::none()),
        Error::BadParam { .. }
    ));
    assert!(matches!(
        bad(&mut l, -2, Knobs::none()),
        Error::BadParam { .. }
    ));
    assert!(matches!(
        bad(&mut l, 15_000, Knobs::none()),
        Error::NotFound { .. }
    ));
    let fe_knob = Knobs::from_pairs([(KnobType::SPLIT_KV, 2)]).unwrap();
    assert!(matches!(bad(&mut l, 1, fe_knob), Error::BadParam { .. }));
    assert_eq!(l.count(), n, "failed replays append nothing");
}

#[test]
fn replay_of_a_backend_id_fails_when_the_backend_declined() {
    let o = PlanOptions {
        backend: Arc::new(CudnnNotLoaded {
            reason: "libcudnn.so.9 not found".into(),
        }),
        ..opts()
    };
    let mut l = planned(&[ATTN], o, &[]);
    let e = l.create_execution_plan(3, &Knobs::none()).unwrap_err();
    assert!(
        matches!(e, Error::NotSupported(ref m) if m.contains("libcudnn.so.9 not found")),
        "{e}"
    );
}

#[test]
fn workspace_at_index_builds_without_changing_the_selection() {
    let mut l = planned(&[ATTN], opts(), &[]);
    l.build_plans(BuildPolicy::HeuristicsChoice).unwrap();
    assert_eq!((l.selected(), l.workspace_size().unwrap()), (0, 4096));
    assert_eq!(l.workspace_size_at(3).unwrap(), 3072);
    assert_eq!(l.selected(), 0);
    assert!(l.workspace_size_at(99).is_err());
    let p = l.selected_plan().unwrap();
    assert_eq!(p.workspace_size(), 4096);
}

// ---------------------------------------------------------------- explain

#[test]
fn explain_lists_family_facts_candidates_backend_modes_and_plans() {
    let e = explain(g(&[ATTN, WIDE]), opts(), &[]).unwrap();
    assert_eq!(e["family"]["name"], "ranked");
    assert_eq!(e["facts"]["wide"], true);
    let c = e["candidates"].as_array().unwrap();
    assert_eq!(c.len(), 4);
    assert_eq!(c[0]["verdict"], "accept");
    assert_eq!(c[1]["verdict"], "decline");
    assert!(c[1]["reason"].as_str().unwrap().contains("wide graphs"));
    assert_eq!(c[3]["offered"], false);
    assert_eq!(e["backend"]["verdict"], "ok");
    assert_eq!(e["backend"]["modes"][0]["mode"], "A");
    assert_eq!(e["plans"][0]["name"], P1);
    assert_eq!(e["plans"][0]["knobs"][0]["knob"], "TILE_M");
    let table = render_table(&e);
    assert!(table.contains("family:   ranked"), "{table}");
    assert!(
        table.contains("beta") && table.contains("wide graphs are not served"),
        "{table}"
    );
    assert!(table.contains("[0] alpha[TILE_M=128]"), "{table}");
}

#[test]
fn explain_of_an_unplannable_graph_is_an_explanation_not_an_error() {
    let o = PlanOptions {
        backend: Arc::new(CudnnNotLoaded {
            reason: "libcudnn.so.9 not found".into(),
        }),
        ..opts_with(backend(), None, false)
    };
    let e = explain(g(&[ATTN]), o, &[]).unwrap();
    assert_eq!(e["plans"].as_array().unwrap().len(), 0);
    assert!(e["error"].as_str().unwrap().contains("no engine"));
    assert_eq!(e["backend"]["verdict"], "decline");
    assert!(
        e["target"]["description"]
            .as_str()
            .unwrap()
            .contains("no CUDA device")
    );
    assert!(render_table(&e).contains("(empty"));
}

#[test]
fn scripted_plan_list_reads_its_script() {
    let mut l = scripted_plan_list(
        r#"{"ops": ["exp"], "arch": 90,
            "backend": {"modes": {"A": [[1, [[40, 128]]], [2, []]], "FALLBACK": "nothing"}}}"#,
    )
    .unwrap();
    l.create_execution_plans(&[]).unwrap();
    assert_eq!(names(&l), [P1, P2, B1, B2, P3]);
    assert_eq!(
        l.trace().backend_modes[1].declined.as_deref(),
        Some("nothing")
    );
    assert!(scripted_plan_list(r#"{"ops": ["exp"], "bogus": 1}"#).is_err());
    assert!(scripted_plan_list(r#"{"ops": ["no_such_op"]}"#).is_err());
    let mut l = scripted_plan_list(r#"{"ops": ["exp"]}"#).unwrap();
    let e = l.create_execution_plans(&[]).unwrap_err();
    assert!(e.to_string().contains("names no backend"), "{e}");
}

#[test]
fn family_validator_runs_and_its_violation_is_an_error() {
    let l = planned(&[NORM], opts(), &[]);
    assert_eq!(l.trace().natively_validated, Some(true));
    let l = planned(&[NORM, "reciprocal"], opts(), &[]);
    assert_eq!(l.trace().natively_validated, Some(false));
    let l = planned(&[ATTN], opts(), &[]);
    assert_eq!(l.trace().natively_validated, None);
    let mut l = PlanList::new(g(&[NORM, "rsqrt"]), opts());
    let e = l.create_execution_plans(&[]).unwrap_err();
    assert!(
        matches!(e, Error::InvalidGraph { ref rule, .. } if rule.contains("forbids rsqrt")),
        "{e}"
    );
}

#[test]
fn plan_lists_are_shareable_across_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<PlanList>();
}

#[test]
fn a_graph_without_backend_lowering_is_declined_without_asking_the_backend() {
    // Embedded at compile time, so the test also runs where only the test executable is staged.
    let text = include_str!(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/examples/graphs/gdn_forward.json"
    ));
    let graph = crate::ir::Graph::from_json(text).unwrap();
    assert!(graph.has_python_only_ops());
    let fake = backend();
    let o = opts_with(fake.clone(), Some(90), false);
    let e = explain_graph(&graph, o, &[]).unwrap();
    let reason = e["backend"]["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("No valid engine configs for GDN: node"),
        "{reason}"
    );
    assert!(reason.contains("no cuDNN backend lowering"), "{reason}");
    assert!(
        fake.calls().is_empty(),
        "the backend was consulted: {:?}",
        fake.calls()
    );
    assert!(
        !graph.is_frozen(),
        "explain plans a snapshot, not the caller's graph"
    );
}

#[test]
fn deselected_plans_keep_their_index_and_are_skipped_or_refused() {
    let mut l = planned(&[NORM], opts(), &[]);
    // [norm_broken_build, norm_sm90, eng1_k40=128, eng2, eng3_k0=2]
    l.deselect_engines(&["norm_sm90", "k40="]);
    assert_eq!(l.count(), 5);
    assert_eq!(l.barred(1), Some("norm_sm90"));
    assert_eq!(l.barred(2), Some("k40="));
    assert_eq!(l.barred(3), None);
    l.build_plans(BuildPolicy::HeuristicsChoice).unwrap();
    assert_eq!(l.selected(), 3, "declining 0 and barred 1, 2 are passed");
    let e = l.build_plan_at_index(1).unwrap_err();
    assert!(
        matches!(e, Error::BadParam { ref why, .. } if why.contains("deselect_engines(\"norm_sm90\")")),
        "{e}"
    );
    assert!(l.workspace_size_at(2).is_err());
    assert!(l.plan_at(2).is_err());
    l.select_plan(2).unwrap();
    let e = l.build_plans(BuildPolicy::HeuristicsChoice).unwrap_err();
    assert!(
        e.to_string().contains("drop one of the two instructions"),
        "{e}"
    );
    // barring the built selection un-builds it
    l.build_plan_at_index(3).unwrap();
    l.deselect_engines(&["eng2"]);
    assert!(!l.is_built());
}

#[test]
fn workspace_limit_declines_plans_over_it() {
    let mut l = planned(&[ATTN], opts(), &[]);
    // [alpha128 (4096), beta (0), eng1 (2048), eng2 (3072), alpha64 (4096), eng3 (4096)]
    l.build_plans(BuildPolicy::HeuristicsChoice).unwrap();
    assert_eq!(l.selected(), 0);
    l.deselect_workspace_greater_than(2048);
    assert!(!l.is_built(), "the built selection is over the limit");
    l.build_plans(BuildPolicy::HeuristicsChoice).unwrap();
    assert_eq!(l.selected(), 1);
    let e = l.build_plan_at_index(3).unwrap_err();
    assert!(
        matches!(e, Error::Declined { ref reason, .. } if reason.contains("needs 3072 workspace bytes, over the 2048-byte limit")),
        "{e}"
    );
    l.select_plan(0).unwrap();
    let e = l.build_plans(BuildPolicy::HeuristicsChoice).unwrap_err();
    assert!(e.to_string().contains("pinned"), "{e}");
    let x = super::explain::explain_list(&l);
    assert_eq!(x["plans"][0]["barred"], serde_json::Value::Null);
}

#[test]
fn the_backend_is_queried_once_even_when_planning_is_retried() {
    // nothing accepts (no device) and the backend lists nothing: planning fails, a retry (the
    // build walk plans again) must not append the same configs to the backend's list again
    let fake = FakeBackend {
        modes: vec![(HeurMode::A, ModeScript::Configs(vec![]))],
        ..FakeBackend::default()
    };
    let mut l = PlanList::new(g(&[UNANCHORED]), opts_with(fake.clone(), None, false));
    assert!(l.create_execution_plans(&[]).is_err());
    assert!(l.build_plans(BuildPolicy::HeuristicsChoice).is_err());
    assert_eq!(fake.calls(), ["query A", "query FALLBACK"]);
}

#[test]
fn describe_id_names_every_class() {
    let m = &STAND_IN_MANIFEST;
    let d = |id| m.describe_id(id, false);
    assert_eq!(d(7)["class"], "backend");
    assert_eq!(d(10_001)["class"], "cpp_oss");
    assert_eq!(d(-1)["class"], "delegating");
    assert_eq!(d(-2)["class"], "marker");
    assert_eq!(d(-5)["class"], "invalid");
    let beta = d(BETA_ID);
    assert_eq!(
        (
            beta["family"].as_str(),
            beta["slot"].as_u64(),
            beta["engine"].as_str()
        ),
        (Some("ranked"), Some(1), Some("beta"))
    );
    assert_eq!(beta["offered"], true);
    let delta = d(DELTA_ID);
    assert_eq!(
        (delta["engine"].as_str(), delta["offered"].as_bool()),
        (Some("delta"), Some(false))
    );
    assert!(
        delta["note"]
            .as_str()
            .unwrap()
            .contains("DNNPLAN_ENABLE_OPT_IN_ENGINES")
    );
    assert_eq!(m.describe_id(DELTA_ID, true)["offered"], true);
    assert_eq!(d(RANKED_BASE + 3)["slot"], 3);
    assert_eq!(d(20_517)["family"], "frost_sdpa_fwd");
    assert_eq!(d(20_517)["offered"], false);
}
