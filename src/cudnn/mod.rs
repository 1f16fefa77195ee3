//! The cuDNN backend, loaded at run time: loader, integer constants, descriptors, lowering, plans.

pub mod loader;
