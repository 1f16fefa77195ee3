//! Bundled engines, one sub-module per family (analyzer, heuristics hook, engines).
