//! Normalization: caller buffers -> [`VariantPack`], once at the top of every execute, following
//! spec 5.4 in order. N1/N2 (reading producers) happen in the caller's form (raw pointers, DLPack
//! records) and arrive here as [`Buffer`]s; this module applies N3 (bare address lends the
//! declaration), N4 (holes), N5 (`describe_from` the declaration), N6 (dtype) and N7 (overrides).
//!
//! Rule N5 for a described buffer, against the slot's declared storage geometry `D`:
//! (i) geometry equal to `D` -> unchanged; (iii) `D`'s extents with other strides -> keeps its
//! strides; (vi) reordered-scale declaration -> keeps its physical extents; (ii) a compact buffer of
//! other extents covering `D`'s bytes -> re-described as `D` and listed graph-described; (iv) a
//! strided view of other extents -> keeps its description; (v) a smaller buffer -> keeps its
//! description (a plan that needs the declared extent refuses it at execute, naming the operand).
//! "Covers" compares the producer's observed bytes with the bytes `D` addresses (its span), a
//! port decision noted in spec 10.1.

use std::ffi::c_void;

use crate::error::{Error, Result};

use super::declared::{DeclaredLayout, DeclaredSlot};
use super::dtype::DlDtype;
use super::geometry::Geometry;
use super::overrides::{ShapeOverride, apply_overrides};
use super::variant::{Desc, Device, FILLED, GRAPH_DESCRIBED, Slot, VariantPack};

/// A producer's self-description (a DLPack record, already read).
#[derive(Copy, Clone, Debug)]
pub struct BufferView<'c> {
    /// Address of the first element (DLPack `data + byte_offset`).
    pub ptr: *mut c_void,
    /// Extents in the producer's element units.
    pub shape: &'c [i64],
    /// Strides in elements; `None` = compact row-major.
    pub strides: Option<&'c [i64]>,
    /// The producer's element type.
    pub dtype: DlDtype,
    /// The producer's device.
    pub device: Device,
}

/// What a caller may bind to one operand.
#[derive(Copy, Clone, Debug)]
pub enum Buffer<'c> {
    /// A bare device address: the slot borrows the declaration (N3).
    Address(*mut c_void),
    /// A described buffer (DLPack).
    View(BufferView<'c>),
}

/// Normalizes the ordered raw-pointer form: `addresses[i]` fills slot `i`; NULL leaves a hole.
pub fn from_addresses<'g>(
    layout: &'g DeclaredLayout,
    addresses: &[*mut c_void],
    overrides: &[ShapeOverride<'_>],
) -> Result<VariantPack<'g>> {
    if addresses.len() != layout.len() {
        return Err(Error::bad_param(
            "device_ptrs",
            format!(
                "the graph has {} operands (in ascending uid order) but {} pointers were given",
                layout.len(),
                addresses.len()
            ),
        ));
    }
    let mut slots = Vec::with_capacity(addresses.len());
    for (i, &p) in addresses.iter().enumerate() {
        slots.push(if p.is_null() {
            Slot::HOLE
        } else {
            lent(layout.slot(i))
        });
    }
    finish(
        VariantPack {
            layout,
            address: addresses.to_vec(),
            slots,
        },
        overrides,
    )
}

/// Normalizes the by-uid form: each `(uid, buffer)` fills that operand's slot, in any order.
/// Duplicates are refused; a uid that is not an operand is refused naming it.
pub fn from_bindings<'g, 'c>(
    layout: &'g DeclaredLayout,
    bindings: impl IntoIterator<Item = (i64, Buffer<'c>)>,
    overrides: &[ShapeOverride<'_>],
) -> Result<VariantPack<'g>> {
    let mut pack = empty(layout);
    for (uid, buffer) in bindings {
        let i = layout.slot_of_uid(uid).ok_or_else(|| {
            Error::bad_param(
                "tensor_uids",
                format!("tensor uid {uid} is not an operand of this graph"),
            )
        })?;
        if pack.slots[i].flags & FILLED != 0 {
            return Err(Error::bad_param(
                "tensor_uids",
                format!("Duplicate tensor uid {uid}"),
            ));
        }
        bind(&mut pack, i, buffer)?;
    }
    finish(pack, overrides)
}

/// Normalizes the ordered form with a (possibly described) buffer per slot; `None` is a hole.
pub fn from_ordered<'g, 'c>(
    layout: &'g DeclaredLayout,
    buffers: impl ExactSizeIterator<Item = Option<Buffer<'c>>>,
    overrides: &[ShapeOverride<'_>],
) -> Result<VariantPack<'g>> {
    if buffers.len() != layout.len() {
        return Err(Error::bad_param(
            "tensors",
            format!(
                "the graph has {} operands (in ascending uid order) but {} buffers were given",
                layout.len(),
                buffers.len()
            ),
        ));
    }
    let mut pack = empty(layout);
    for (i, b) in buffers.enumerate() {
        if let Some(b) = b {
            bind(&mut pack, i, b)?;
        }
    }
    finish(pack, overrides)
}

fn empty(layout: &DeclaredLayout) -> VariantPack<'_> {
    VariantPack {
        layout,
        address: vec![std::ptr::null_mut(); layout.len()],
        slots: vec![Slot::HOLE; layout.len()],
    }
}

/// N3: a bare address borrows the declaration's storage geometry and dtype.
#[inline]
fn lent(decl: &DeclaredSlot) -> Slot {
    Slot {
        desc: if decl.storage.is_some() {
            Desc::Declared
        } else {
            Desc::None
        },
        dtype: decl.storage_dtype,
        observed_bytes: -1,
        device: Device::UNKNOWN,
        flags: FILLED | GRAPH_DESCRIBED,
    }
}

fn bind(pack: &mut VariantPack<'_>, i: usize, buffer: Buffer<'_>) -> Result<()> {
    let decl = pack.layout.slot(i);
    let (ptr, slot) = match buffer {
        Buffer::Address(p) => (p, lent(decl)),
        Buffer::View(v) => (v.ptr, describe(decl, &v)?),
    };
    if ptr.is_null() {
        return Ok(()); // a NULL pointer is a hole whatever describes it
    }
    pack.address[i] = ptr;
    pack.slots[i] = slot;
    Ok(())
}

/// N5 + N6 for one described buffer.
pub(crate) fn describe(decl: &DeclaredSlot, v: &BufferView<'_>) -> Result<Slot> {
    let g = Geometry::new(v.shape, v.strides)
        .map_err(|e| Error::bad_param(format!("operand {}", decl.label()), e.to_string()))?;
    let item = v.dtype.item_bytes();
    let observed = match (g.span_elems(), item) {
        (Some(s), Some(w)) => s.checked_mul(w).map_or(-1, |b| b as i64),
        _ => -1,
    };
    let own = |desc: Desc, dtype: DlDtype| Slot {
        desc,
        dtype,
        observed_bytes: observed,
        device: v.device,
        flags: FILLED,
    };
    // N6 for a buffer with the declared extents: the declared type when the widths agree.
    let same_width_dtype = if item.is_some() && item == decl.slot_bytes {
        decl.storage_dtype
    } else {
        v.dtype
    };
    let Some(d) = decl.storage else {
        return Ok(own(Desc::Own(g), v.dtype));
    };
    if g == d {
        return Ok(own(Desc::Declared, same_width_dtype)); // (i)
    }
    if g.dims() == d.dims() {
        return Ok(own(Desc::Own(g), same_width_dtype)); // (iii)
    }
    if decl.reordered_scale {
        return Ok(own(Desc::Own(g), same_width_dtype)); // (vi)
    }
    let covers = match decl.declared_bytes {
        Some(need) => observed >= 0 && observed as u64 >= need,
        None => false,
    };
    if g.is_compact() && covers {
        let mut s = own(Desc::Declared, decl.storage_dtype); // (ii)
        s.flags |= GRAPH_DESCRIBED;
        return Ok(s);
    }
    Ok(own(Desc::Own(g), v.dtype)) // (iv) strided view / (v) smaller
}

/// N4 (holes) then N7 (overrides).
fn finish<'g>(
    mut pack: VariantPack<'g>,
    overrides: &[ShapeOverride<'_>],
) -> Result<VariantPack<'g>> {
    if !pack.layout.order().holes_allowed()
        && let Some(i) = pack.slots.iter().position(|s| s.flags & FILLED == 0)
    {
        return Err(Error::bad_param(
            "variant pack",
            format!(
                "the variant pack is missing a buffer for {}",
                pack.layout.slot(i).label()
            ),
        ));
    }
    if !overrides.is_empty() {
        apply_overrides(&mut pack, overrides)?;
    }
    Ok(pack)
}
