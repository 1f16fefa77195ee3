//! Bundled engines, one sub-module per family (analyzer, heuristics hook, engines).

pub mod gdn;
