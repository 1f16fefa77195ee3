//! Gated DeltaNet (GDN) family: the fp64 per-token reference (forward and backward), the
//! chunked UT/WY algorithm on the CPU that our CUDA kernels implement, and (later) the
//! analyzer, validator, heuristics hook and SM90 engine serving `gdn` / `gdn_bwd`.
//!
//! Semantics follow `shared/spec/linear-attention.md` sections 1-4: THD tokens with
//! `cu_seqlens`, head grouping by consecutive groups, states stored V-major `[N, HO, V, K]`.

pub mod chunked;
pub mod reference;
