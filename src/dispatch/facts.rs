//! Facts: one analysis of a frozen graph per family analyzer, memoized, read by every engine of
//! the family and by its heuristics hook.
//!
//! An analyzer is a pure function `(graph, target) -> Option<facts>`; `None` means "this family
//! cannot express the graph". Facts DESCRIBE, never judge, except [`Facts::invalid`]: a
//! graph-consistency error valid for every kernel of the family (every engine declines with it).
//! Facts are framework-neutral (no tensors, no pointers), and describe themselves as JSON for
//! explain. An analyzer error is a bug and propagates.

use std::any::Any;
use std::collections::HashMap;
use std::fmt::Debug;
use std::sync::{Arc, Mutex};

use super::graph::Graph;
use super::target::Target;
use crate::error::{Error, Result};

/// A family's analysis record.
pub trait Facts: Any + Send + Sync + Debug {
    /// The record as JSON (explain prints it).
    fn describe(&self) -> serde_json::Value;

    /// A graph-consistency error every engine of the family declines with, if any.
    fn invalid(&self) -> Option<&str> {
        None
    }
}

impl dyn Facts {
    /// The concrete record, when it is a `T`.
    pub fn downcast_ref<T: Facts>(&self) -> Option<&T> {
        (self as &dyn Any).downcast_ref::<T>()
    }
}

/// Shared facts record.
pub type FactsRef = Arc<dyn Facts>;

/// A family analyzer.
pub type Analyzer = fn(&Graph, &Target) -> Result<Option<FactsRef>>;

/// Memo of analyses for ONE frozen graph, keyed by family name.
#[derive(Default, Debug)]
pub struct FactsCache {
    memo: Mutex<HashMap<&'static str, Option<FactsRef>>>,
}

impl FactsCache {
    /// The facts of `family` for `graph`, analyzing on first use only.
    pub fn get_or_analyze(
        &self,
        family: &'static str,
        analyzer: Analyzer,
        graph: &Graph,
        target: &Target,
    ) -> Result<Option<FactsRef>> {
        {
            let memo = self.lock()?;
            if let Some(hit) = memo.get(family) {
                return Ok(hit.clone());
            }
        }
        let facts = analyzer(graph, target)?;
        let mut memo = self.lock()?;
        Ok(memo.entry(family).or_insert(facts).clone())
    }

    /// Already-computed facts of `family` (no analysis).
    pub fn peek(&self, family: &'static str) -> Option<FactsRef> {
        self.lock()
            .ok()
            .and_then(|m| m.get(family).cloned().flatten())
    }

    fn lock(&self) -> Result<std::sync::MutexGuard<'_, HashMap<&'static str, Option<FactsRef>>>> {
        self.memo
            .lock()
            .map_err(|_| Error::Internal("facts memo poisoned".into()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    #[derive(Debug)]
    struct Count(usize);
    impl Facts for Count {
        fn describe(&self) -> serde_json::Value {
            serde_json::json!({ "nodes": self.0 })
        }
    }

    static CALLS: AtomicUsize = AtomicUsize::new(0);
    fn analyze(g: &Graph, _: &Target) -> Result<Option<FactsRef>> {
        CALLS.fetch_add(1, Ordering::SeqCst);
        Ok(Some(Arc::new(Count(g.nodes().len()))))
    }

    #[test]
    fn one_analysis_per_graph_and_family() {
        let cache = FactsCache::default();
        let g = Graph::default();
        let t = Target::no_device("test");
        let a = cache
            .get_or_analyze("fam", analyze, &g, &t)
            .unwrap()
            .unwrap();
        let b = cache
            .get_or_analyze("fam", analyze, &g, &t)
            .unwrap()
            .unwrap();
        assert!(Arc::ptr_eq(&a, &b));
        assert_eq!(CALLS.load(Ordering::SeqCst), 1);
        assert_eq!(a.downcast_ref::<Count>().unwrap().0, 0);
        assert!(cache.peek("other").is_none());
    }
}
