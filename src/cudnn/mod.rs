//! The cuDNN backend, loaded at run time: loader, integer constants, descriptors, lowering, plans.
//!
//! Layers, bottom up: [`loader`] finds the library and resolves [`api`]; [`consts`] holds the
//! backend's integer constants; [`backend`] abstracts descriptor calls (the real library or a
//! recording fake for tests); [`descriptor`] is the RAII wrapper; [`graph`] describes a backend
//! operation graph (tensors + primitive ops) and [`emit`] turns it into descriptors; [`lower`]
//! builds such graphs from ops (composite expansions included); [`plan`] runs heuristics, builds
//! plans and executes them ([`exec_path`]: plain, per-thread variant-pack reuse or a CUDA graph;
//! [`exec_cache`] holds the per-thread state); [`handle`] caches cuDNN handles per (device,
//! stream); [`heur_cache`] caches heuristics results per (graph, device, cuDNN version, mode),
//! in the process and on disk ([`heur_disk`]); [`heur_modes`] can list several modes at once;
//! [`pin`] keeps the libraries cuDNN opens on demand (NVRTC) resident (`DNNPLAN_CUDNN_PIN_LIBS`).

pub mod api;
pub mod backend;
pub mod consts;
pub mod descriptor;
pub mod emit;
pub mod exec_cache;
pub mod exec_path;
pub mod graph;
pub mod handle;
pub mod heur_cache;
pub mod heur_disk;
pub mod heur_modes;
pub mod loader;
pub mod lower;
pub mod pin;
pub mod plan;
pub mod provider;
pub mod status;
