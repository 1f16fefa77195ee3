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
use super::variant::{
    DECLARED_EXTENT, Desc, Device, FILLED, GRAPH_DESCRIBED, NAMED, Slot, VariantPack,
};

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
    let mut slots = vec![Slot::HOLE; addresses.len()];
    for (i, (&p, slot)) in addresses.iter().zip(slots.iter_mut()).enumerate() {
        if !p.is_null() {
            lend(layout.slot(i), slot);
        }
    }
    finish(
        VariantPack {
            layout,
            address: addresses.to_vec(),
            slots,
            own: Vec::new(),
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
                "uids",
                format!("tensor uid {uid} is not an operand of this graph"),
            )
        })?;
        if pack.slots[i].flags & (FILLED | NAMED) != 0 {
            return Err(Error::bad_param(
                "uids",
                format!("Duplicate tensor uid {uid}"),
            ));
        }
        bind(&mut pack, i, buffer)?;
        pack.slots[i].flags |= NAMED;
    }
    finish(pack, overrides)
}

/// Normalizes the ordered form: `buffer(i)` gives slot `i`'s buffer (`None` = a hole) for
/// `i < count`; it may fail (reading a producer), which aborts the call.
pub fn from_ordered<'g, 'c>(
    layout: &'g DeclaredLayout,
    count: usize,
    mut buffer: impl FnMut(usize) -> Result<Option<Buffer<'c>>>,
    overrides: &[ShapeOverride<'_>],
) -> Result<VariantPack<'g>> {
    if count != layout.len() {
        return Err(Error::bad_param(
            "tensors",
            format!(
                "the graph has {} operands (in ascending uid order) but {} buffers were given",
                layout.len(),
                count
            ),
        ));
    }
    let mut pack = empty(layout);
    for i in 0..count {
        if let Some(b) = buffer(i)? {
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
        own: Vec::new(),
    }
}

/// N3: a bare address borrows the declaration's storage geometry and dtype.
#[inline]
fn lend(decl: &DeclaredSlot, slot: &mut Slot) {
    let declared = decl.storage.is_some();
    *slot = Slot {
        desc: if declared { Desc::Declared } else { Desc::None },
        dtype: decl.storage_dtype,
        observed_bytes: -1,
        device: Device::UNKNOWN,
        flags: FILLED | GRAPH_DESCRIBED | if declared { DECLARED_EXTENT } else { 0 },
    };
}

#[inline]
fn bind(pack: &mut VariantPack<'_>, i: usize, buffer: Buffer<'_>) -> Result<()> {
    let decl = pack.layout.slot(i);
    let ptr = match buffer {
        Buffer::Address(p) => p,
        Buffer::View(v) => v.ptr,
    };
    if ptr.is_null() {
        return Ok(()); // a NULL pointer is a hole whatever describes it
    }
    match buffer {
        Buffer::Address(_) => lend(decl, &mut pack.slots[i]),
        Buffer::View(v) => {
            if let Some(g) = describe(decl, &v, &mut pack.slots[i])? {
                pack.set_own(i, g);
            }
        }
    }
    pack.address[i] = ptr;
    Ok(())
}

/// N5 + N6 for one described buffer: writes `slot` (left untouched on error) and returns the
/// buffer's own geometry when the slot keeps it (`None` when the declaration describes it).
pub(crate) fn describe(
    decl: &DeclaredSlot,
    v: &BufferView<'_>,
    slot: &mut Slot,
) -> Result<Option<Geometry>> {
    let item = v.dtype.item_bytes();
    // N6 for a buffer with the declared extents: the declared type when the widths agree.
    let same_width_dtype = if item.is_some() && item == decl.slot_bytes {
        decl.storage_dtype
    } else {
        v.dtype
    };
    // Fast path, rule (i): exactly the declared storage geometry (strides given, or absent with
    // a row-major declaration); nothing to validate or copy.
    if let Some(d) = &decl.storage
        && v.shape == d.dims()
        && match v.strides {
            Some(st) => st == d.strides(),
            None => decl.storage_row_major,
        }
    {
        *slot = Slot {
            desc: Desc::Declared,
            dtype: same_width_dtype,
            observed_bytes: observed(decl.storage_span, item),
            device: v.device,
            flags: FILLED | DECLARED_EXTENT,
        };
        return Ok(None);
    }
    let g = Geometry::new(v.shape, v.strides)
        .map_err(|e| Error::bad_param(format!("operand {}", decl.label()), e.to_string()))?;
    let observed = observed(g.span_elems(), item);
    let mut s = Slot {
        desc: Desc::None,
        dtype: v.dtype,
        observed_bytes: observed,
        device: v.device,
        flags: FILLED,
    };
    let keep = match &decl.storage {
        None => Some(g),
        Some(d) if g == *d => {
            // (i) the declaration itself (strides spelled differently, e.g. absent)
            s.desc = Desc::Declared;
            s.dtype = same_width_dtype;
            s.flags |= DECLARED_EXTENT;
            None
        }
        Some(d) if g.dims() == d.dims() => {
            // (iii) declared extents, own strides
            s.dtype = same_width_dtype;
            s.flags |= DECLARED_EXTENT;
            Some(g)
        }
        Some(_) if decl.reordered_scale => {
            // (vi) physical extents retained for the engine's capacity check
            s.dtype = same_width_dtype;
            Some(g)
        }
        Some(_)
            if g.is_compact()
                && observed >= 0
                && decl
                    .declared_bytes
                    .is_some_and(|need| observed as u64 >= need) =>
        {
            // (ii) a dense buffer covering the declared bytes: described from the graph
            s.desc = Desc::Declared;
            s.dtype = decl.storage_dtype;
            s.flags |= GRAPH_DESCRIBED | DECLARED_EXTENT;
            None
        }
        // (iv) a strided view of other extents / (v) smaller: its own description
        Some(_) => Some(g),
    };
    *slot = s;
    Ok(keep)
}

/// Observed bytes: span (elements) times the producer's item width; -1 when either is unknown.
#[inline]
fn observed(span: Option<u64>, item: Option<u64>) -> i64 {
    match (span, item) {
        (Some(s), Some(w)) => s.checked_mul(w).map_or(-1, |b| b as i64),
        _ => -1,
    }
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
