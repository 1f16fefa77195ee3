//! Execute-time overrides (spec 5.7, rule N7): element geometry in the GRAPH's axis order,
//! converted to storage geometry (fp4 packs pairs), re-expressed in the slot's own axis order
//! (rank the override's axes and the slot's axes by descending stride, ties keep axis order, map
//! rank to rank; a rank mismatch applies it as given) and written with the declared dtype.
//! Purpose: a buffer allocated at a cache shape runs a smaller shape; plans reading the pack see
//! the shape about to run.

use crate::error::{Error, Result};

use super::geometry::{Geometry, MAX_RANK};
use super::variant::{Desc, OVERRIDDEN, VariantPack};

/// One override: a tensor uid with its element extents and strides in graph axis order.
#[derive(Copy, Clone, Debug)]
pub struct ShapeOverride<'a> {
    /// Tensor uid (must be an operand).
    pub uid: i64,
    /// Element extents, graph axis order.
    pub dims: &'a [i64],
    /// Element strides, graph axis order.
    pub strides: &'a [i64],
}

/// Axis indices ordered by descending stride; ties keep axis order.
fn by_descending_stride(g: &Geometry) -> [usize; MAX_RANK] {
    let mut order = [0usize; MAX_RANK];
    for (k, o) in order.iter_mut().enumerate().take(g.rank()) {
        *o = k;
    }
    order[..g.rank()].sort_by(|&a, &b| g.strides()[b].cmp(&g.strides()[a]));
    order
}

/// Re-expresses `ov` (graph order) in the axis order of `slot` (rank to rank).
fn in_axis_order_of(ov: &Geometry, slot: &Geometry) -> Geometry {
    if ov.rank() != slot.rank() {
        return *ov;
    }
    let from = by_descending_stride(ov);
    let to = by_descending_stride(slot);
    let mut out = *ov;
    for r in 0..ov.rank() {
        out.set_axis(to[r], ov.dims()[from[r]], ov.strides()[from[r]]);
    }
    out
}

pub(crate) fn apply_overrides(
    pack: &mut VariantPack<'_>,
    overrides: &[ShapeOverride<'_>],
) -> Result<()> {
    for (k, ov) in overrides.iter().enumerate() {
        let Some(i) = pack.layout.slot_of_uid(ov.uid) else {
            return Err(Error::bad_param(
                "override_uids",
                format!(
                    "override_uids names tensor uid {}, which is not an operand of this graph",
                    ov.uid
                ),
            ));
        };
        if overrides[..k].iter().any(|o| o.uid == ov.uid) {
            return Err(Error::bad_param(
                "override_uids",
                format!("tensor uid {} is overridden twice", ov.uid),
            ));
        }
        let decl = pack.layout.slot(i);
        let what = || format!("override for {}", decl.label());
        if !pack.is_filled(i) {
            return Err(Error::bad_param(
                what(),
                "no buffer is bound to this operand",
            ));
        }
        let element = Geometry::new(ov.dims, Some(ov.strides))
            .map_err(|e| Error::bad_param(what(), e.to_string()))?;
        let storage = if decl.dtype.is_fp4() {
            element.fp4_storage().map_err(|rule| {
                Error::bad_param(
                    what(),
                    format!("Override geometry cannot describe the packed storage slots: {rule}"),
                )
            })?
        } else {
            element
        };
        let graph_described = pack.is_graph_described(i);
        let placed = match pack.geometry(i) {
            Some(current) if !graph_described => in_axis_order_of(&storage, current),
            _ => storage,
        };
        let slot = &mut pack.slots[i];
        slot.desc = Desc::Own(placed);
        slot.dtype = decl.storage_dtype;
        slot.flags |= OVERRIDDEN;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reorders_into_slot_axis_order() {
        // Spec 5.7: B declared [b,K,N] with K contiguous; the slot holds the caller's (b,N,K) view.
        let slot = Geometry::new(&[1, 2048, 512], Some(&[4194304, 1024, 1])).unwrap();
        let ov = Geometry::new(&[1, 512, 2048], Some(&[4194304, 1, 1024])).unwrap();
        let out = in_axis_order_of(&ov, &slot);
        assert_eq!(out.dims(), &[1, 2048, 512]);
        assert_eq!(out.strides(), &[4194304, 1024, 1]);
        // Rank mismatch: as given.
        let flat = Geometry::new(&[8], None).unwrap();
        assert_eq!(in_axis_order_of(&flat, &slot), flat);
    }
}
