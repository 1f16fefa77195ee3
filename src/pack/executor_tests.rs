//! Execute tests with the test manifest's engines: execute selected and at an index, unbuilt
//! plans, guard refusals, the backend template as operand order, and 8 threads x 10 000 executes
//! of one graph with no cross-talk.

use std::ffi::c_void;
use std::sync::Arc;

use super::executor::execute;
use super::testing::{NOOP_OP, RECORDING_OP, chain_graph, test_plan_list};
use super::*;
use crate::dispatch::context::ExecContext;

fn ctx() -> ExecContext<'static> {
    ExecContext::detached(std::ptr::null_mut(), None)
}

#[test]
fn executes_selected_and_at_index() {
    let plans = test_plan_list(chain_graph(NOOP_OP, 4).unwrap()).unwrap();
    let layout = plans.declared_layout().unwrap();
    assert_eq!(layout.uids(), &[1, 2, 3, 4]);
    assert!(
        std::ptr::eq(layout, plans.declared_layout().unwrap()),
        "memoized"
    );
    let ptrs = [0x1000 as *mut c_void; 4];
    let pack = normalize::from_addresses(layout, &ptrs, &[]).unwrap();
    execute(&plans, PlanChoice::Selected, &pack, &ctx()).unwrap();
    execute(&plans, PlanChoice::AtIndex(0), &pack, &ctx()).unwrap();
    let e = execute(&plans, PlanChoice::AtIndex(7), &pack, &ctx()).unwrap_err();
    assert!(e.to_string().contains("index 7 is out of range"), "{e}");
}

#[test]
fn unbuilt_plans_and_unplanned_lists_are_state_errors() {
    use crate::dispatch::target::Target;
    use crate::dispatch::testing::FakeBackend;
    use crate::dispatch::{PlanList, PlanOptions};
    let mut g = chain_graph(NOOP_OP, 2).unwrap();
    g.begin_planning().unwrap();
    let opts = || PlanOptions {
        manifest: &testing::EXEC_TEST_MANIFEST,
        backend: Arc::new(FakeBackend {
            lower_decline: Some("no".into()),
            ..FakeBackend::default()
        }),
        target: Target::no_device("test"),
        opt_in: Some(false),
    };
    let mut plans = PlanList::new(Arc::new(g), opts());
    let e = plans.declared_layout().unwrap_err();
    assert!(e.to_string().contains("only after planning"), "{e}");
    plans.create_execution_plans(&[]).unwrap();
    let layout = plans.declared_layout().unwrap();
    let pack = normalize::from_addresses(layout, &[0x100 as *mut c_void; 2], &[]).unwrap();
    let e = execute(&plans, PlanChoice::AtIndex(0), &pack, &ctx()).unwrap_err();
    assert!(e.to_string().contains("plan 0 is not built"), "{e}");
    let e = execute(&plans, PlanChoice::Selected, &pack, &ctx()).unwrap_err();
    assert!(e.to_string().contains("no plan is built"), "{e}");
}

#[test]
fn refusals_name_the_operand_and_launch_nothing() {
    let plans = test_plan_list(chain_graph(RECORDING_OP, 2).unwrap()).unwrap();
    let layout = plans.declared_layout().unwrap();
    // Too small: a 64-element buffer for a [1,128,64] declaration; the recording plan would
    // write into slot 1 if it launched.
    let mut out = [7u64; 1];
    let small_shape = [64i64];
    let small = Buffer::View(BufferView {
        ptr: out.as_mut_ptr().cast(),
        shape: &small_shape,
        strides: None,
        dtype: DlDtype::BF16,
        device: Device::CPU,
    });
    let mut input = [5u64; 1];
    let pack = normalize::from_bindings(
        layout,
        [(1, Buffer::Address(input.as_mut_ptr().cast())), (2, small)],
        &[],
    )
    .unwrap();
    let msg = execute(&plans, PlanChoice::Selected, &pack, &ctx())
        .unwrap_err()
        .to_string();
    assert!(
        msg.contains("operand tensor uid 2 ('y1')") && msg.contains("declared extent"),
        "{msg}"
    );
    assert_eq!(out[0], 7, "a refused call launches nothing");
    // Hole on an operand the plan requires.
    let pack = normalize::from_addresses(
        layout,
        &[input.as_mut_ptr().cast(), std::ptr::null_mut()],
        &[],
    )
    .unwrap();
    let e = execute(&plans, PlanChoice::Selected, &pack, &ctx()).unwrap_err();
    assert!(e.to_string().contains("requires a buffer"), "{e}");
}

#[test]
fn eight_threads_ten_thousand_executes_no_cross_talk() {
    const THREADS: usize = 8;
    const CALLS: usize = 10_000;
    const OPERANDS: usize = 4;
    let plans = Arc::new(test_plan_list(chain_graph(RECORDING_OP, OPERANDS).unwrap()).unwrap());
    let workers: Vec<_> = (0..THREADS)
        .map(|t| {
            let plans = plans.clone();
            std::thread::spawn(move || {
                let layout = plans.declared_layout().unwrap();
                let mut bufs = [[0u64; 1]; OPERANDS];
                for call in 0..CALLS {
                    let tag = ((t as u64) << 32) | call as u64;
                    bufs[0][0] = tag;
                    let ptrs: Vec<*mut c_void> =
                        bufs.iter_mut().map(|b| b.as_mut_ptr().cast()).collect();
                    let pack = normalize::from_addresses(layout, &ptrs, &[]).unwrap();
                    execute(&plans, PlanChoice::Selected, &pack, &ctx()).unwrap();
                    for (i, b) in bufs.iter().enumerate().skip(1) {
                        assert_eq!(b[0], tag + i as u64, "thread {t} call {call} slot {i}");
                    }
                }
            })
        })
        .collect();
    for w in workers {
        w.join().unwrap();
    }
}

/// A backend that lowers, offers one config, and publishes a variant-pack template.
struct TemplateBackend;
struct TemplateSession;

impl crate::dispatch::backend::BackendProvider for TemplateBackend {
    fn describe(&self) -> String {
        "template".into()
    }
    fn lower(
        &self,
        _: &Arc<crate::ir::Graph>,
        _: &crate::dispatch::target::Target,
    ) -> crate::Result<Box<dyn crate::dispatch::backend::BackendSession>> {
        Ok(Box::new(TemplateSession))
    }
}

impl crate::dispatch::backend::BackendSession for TemplateSession {
    fn query(
        &mut self,
        _: crate::dispatch::HeurMode,
    ) -> crate::Result<Vec<crate::dispatch::backend::BackendConfig>> {
        Ok(vec![crate::dispatch::backend::BackendConfig {
            cpp_index: 0,
            engine_id: 7,
            knobs: Default::default(),
        }])
    }
    fn engine_count(&self) -> usize {
        1
    }
    fn create_plan(
        &mut self,
        _: crate::dispatch::EngineId,
        _: &crate::dispatch::knobs::RawBackendKnobs,
    ) -> crate::Result<usize> {
        Ok(0)
    }
    fn build_at(&mut self, _: usize) -> crate::Result<Arc<dyn crate::dispatch::CompiledPlan>> {
        Ok(Arc::new(testing::NoopExecPlan::default()))
    }
    fn build_delegating(&mut self) -> crate::Result<Arc<dyn crate::dispatch::CompiledPlan>> {
        Ok(Arc::new(testing::NoopExecPlan::default()))
    }
    fn operand_uids(&self) -> Option<Vec<i64>> {
        Some(vec![3, 1])
    }
}

#[test]
fn lowered_graph_takes_the_backend_template_as_operand_order() {
    use crate::dispatch::{BuildPolicy, PlanList, PlanOptions};
    // "exp" is anchored by no test family: the backend alone plans it.
    let mut g = chain_graph("exp", 3).unwrap();
    let opts = PlanOptions {
        manifest: &testing::EXEC_TEST_MANIFEST,
        backend: Arc::new(TemplateBackend),
        target: crate::dispatch::target::Target::no_device("test"),
        opt_in: Some(false),
    };
    let mut plans = PlanList::plan(&mut g, opts, &[]).unwrap();
    plans.build_plans(BuildPolicy::HeuristicsChoice).unwrap();
    let layout = plans.declared_layout().unwrap();
    assert_eq!(
        layout.uids(),
        &[1, 3],
        "the template, sorted; the virtual y1 is not an operand"
    );
    assert_eq!(layout.order().source(), OrderSource::BackendTemplate);
    // Every slot of a lowered graph is required (N4).
    let e = normalize::from_addresses(layout, &[0x100 as *mut c_void, std::ptr::null_mut()], &[])
        .unwrap_err();
    assert!(
        e.to_string().contains("missing a buffer for tensor uid 3"),
        "{e}"
    );
    let pack = normalize::from_addresses(layout, &[0x100 as *mut c_void; 2], &[]).unwrap();
    execute(&plans, PlanChoice::Selected, &pack, &ctx()).unwrap();
}
