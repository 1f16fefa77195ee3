//! Op rows: structured.

use crate::ir::op::OpSpec;

/// The rows of this family.
pub(crate) fn ops() -> Vec<OpSpec> {
    Vec::new()
}
