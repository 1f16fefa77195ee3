//! CUDA driver layer over cudarc (probed first), module loading, NVRTC and the compiled-plan cache.

pub mod probe;
