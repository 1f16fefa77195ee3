//! The op tables: one row per op of the reference's surface, written with the compact
//! constructors below. [`all_ops`] concatenates the families in catalogue order.

mod helpers;
mod linear_attention;
mod pointwise;
mod sdpa;
mod structured;

pub use pointwise::{POINTWISE_MODES, pointwise_backend_value};

use super::op::OpSpec;

/// Every op, in catalogue order: pointwise, reduction and structured ops, SDPA family, linear
/// attention.
pub fn all_ops() -> Vec<OpSpec> {
    let mut ops = pointwise::ops();
    ops.extend(structured::ops());
    ops.extend(sdpa::ops());
    ops.extend(linear_attention::ops());
    ops
}
