//! Variant-pack normalization: caller buffers checked against the graph's declarations, once per
//! call ("the declaration is the contract", spec dispatch.md section 5).
//!
//! - [`OperandOrder`]: the one list of operand uids (backend template or the IR's wired ports).
//! - [`DeclaredLayout`]: per slot, the declared storage geometry, dtype and bytes; once per graph.
//! - [`normalize`]: caller buffers (raw pointers, by uid, or DLPack records) -> [`VariantPack`],
//!   per call, with overrides ([`ShapeOverride`]).
//! - [`GuardTable`]: a plan's build-time per-slot rules, checked by one flat loop at execute, with
//!   a cold checker that names the operand and the rule broken.
//! - [`executor`]: the declared layout of a plan list (memoized) and running a pack on a plan;
//!   [`ports`]: node ports joined to slots; [`from_ir`]: the IR side (dtypes, wired-ports order);
//!   [`testing`]: no-op/recording test engines for tests and the benchmark.

pub mod declared;
pub mod dtype;
pub mod executor;
pub mod from_ir;
pub mod geometry;
pub mod guard;
pub mod normalize;
pub mod order;
pub mod overrides;
pub mod ports;
pub mod testing;
pub mod variant;

pub use declared::{DeclaredLayout, DeclaredSlot, TensorDecl};
pub use dtype::DlDtype;
pub use executor::PlanChoice;
pub use geometry::{Geometry, MAX_RANK};
pub use guard::{Guard, GuardTable, SlotRule};
pub use normalize::{Buffer, BufferView};
pub use order::{OperandOrder, OrderSource};
pub use overrides::ShapeOverride;
pub use variant::{Device, VariantPack};

#[cfg(test)]
mod executor_tests;
#[cfg(test)]
mod tests;
