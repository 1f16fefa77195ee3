//! The per-call variant pack: one slot per operand of the declared layout, holding the caller's
//! pointer and the normalized description every plan reads (geometry in storage units, dtype,
//! observed bytes and device, and whether the graph lent the description or an override set it).
//!
//! A pack is built by [`crate::pack::normalize`] at the top of each execute and dropped at its end;
//! it is never shared between calls, so two threads executing one graph with different buffers
//! never see each other's pointers. A slot described by the declaration borrows the declared
//! layout's geometry instead of copying it, which keeps the raw-pointer form to a pointer copy.

use std::ffi::c_void;

use crate::error::{Error, Result};

use super::declared::{DeclaredLayout, DeclaredSlot};
use super::dtype::DlDtype;
use super::geometry::Geometry;

/// A producer's device as DLPack names it: `(device_type, device_id)`; `(-1, -1)` = unknown.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub struct Device {
    /// DLPack device type (1 CPU, 2 CUDA, 3 CUDA host, 13 CUDA managed...), -1 unknown.
    pub device_type: i32,
    /// Device ordinal, -1 unknown.
    pub device_id: i32,
}

impl Device {
    /// Not known (a bare address).
    pub const UNKNOWN: Device = Device {
        device_type: -1,
        device_id: -1,
    };
    /// DLPack `kDLCPU`.
    pub const CPU: Device = Device {
        device_type: 1,
        device_id: 0,
    };
    /// DLPack `kDLCUDA` with ordinal `id`.
    pub const fn cuda(id: i32) -> Device {
        Device {
            device_type: 2,
            device_id: id,
        }
    }
}

/// How a slot's geometry is known.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub(crate) enum Desc {
    /// Pointer only: no geometry (a bare address for a tensor with no declared dims, or a hole).
    None,
    /// The declaration's storage geometry (borrowed from the layout, never copied).
    Declared,
    /// The buffer's own geometry (or an override's), in storage units.
    Own(Geometry),
}

pub(crate) const FILLED: u8 = 1;
pub(crate) const GRAPH_DESCRIBED: u8 = 2;
pub(crate) const OVERRIDDEN: u8 = 4;

/// One normalized slot (everything but the pointer, which lives in the address array).
#[derive(Copy, Clone, Debug)]
pub(crate) struct Slot {
    pub(crate) desc: Desc,
    pub(crate) dtype: DlDtype,
    /// Bytes the producer guarantees addressable, in its own element width; -1 unknown.
    pub(crate) observed_bytes: i64,
    pub(crate) device: Device,
    pub(crate) flags: u8,
}

impl Slot {
    pub(crate) const HOLE: Slot = Slot {
        desc: Desc::None,
        dtype: DlDtype::UNKNOWN,
        observed_bytes: -1,
        device: Device::UNKNOWN,
        flags: 0,
    };
}

/// The normalized buffers of one execute call, in the graph's operand order.
#[derive(Debug)]
pub struct VariantPack<'g> {
    pub(crate) layout: &'g DeclaredLayout,
    pub(crate) address: Vec<*mut c_void>,
    pub(crate) slots: Vec<Slot>,
}

impl<'g> VariantPack<'g> {
    /// The declared layout this pack was normalized against.
    #[inline]
    pub fn layout(&self) -> &'g DeclaredLayout {
        self.layout
    }

    /// Number of slots (= operands of the graph).
    #[inline]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether the graph has no operand.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Operand uids, ascending (slot `i` holds `uids()[i]`).
    #[inline]
    pub fn uids(&self) -> &'g [i64] {
        self.layout.uids()
    }

    /// The pointer array in operand order (NULL for holes), as the backend's raw-pointer execute
    /// takes it.
    #[inline]
    pub fn addresses(&self) -> &[*mut c_void] {
        &self.address
    }

    /// Slot `i`'s pointer (NULL for a hole).
    #[inline]
    pub fn ptr(&self, i: usize) -> *mut c_void {
        self.address[i]
    }

    /// Whether the caller filled slot `i`.
    #[inline]
    pub fn is_filled(&self, i: usize) -> bool {
        self.slots[i].flags & FILLED != 0
    }

    /// Whether slot `i`'s description was lent by the declaration (bare address or rule N5 ii).
    #[inline]
    pub fn is_graph_described(&self, i: usize) -> bool {
        self.slots[i].flags & GRAPH_DESCRIBED != 0
    }

    /// Whether slot `i` carries execute-time override geometry.
    #[inline]
    pub fn is_overridden(&self, i: usize) -> bool {
        self.slots[i].flags & OVERRIDDEN != 0
    }

    /// Indices of the graph-described slots.
    pub fn graph_described(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len()).filter(|&i| self.is_graph_described(i))
    }

    /// Indices of the overridden slots.
    pub fn overridden(&self) -> impl Iterator<Item = usize> + '_ {
        (0..self.len()).filter(|&i| self.is_overridden(i))
    }

    /// Slot `i`'s declaration.
    #[inline]
    pub fn declared(&self, i: usize) -> &'g DeclaredSlot {
        self.layout.slot(i)
    }

    /// Slot `i`'s geometry in storage units (`None` for a pointer-only slot or a hole).
    #[inline]
    pub fn geometry(&self, i: usize) -> Option<&Geometry> {
        match &self.slots[i].desc {
            Desc::None => None,
            Desc::Declared => self.layout.slot(i).storage.as_ref(),
            Desc::Own(g) => Some(g),
        }
    }

    /// Slot `i`'s extents (storage units), if known.
    #[inline]
    pub fn shape(&self, i: usize) -> Option<&[i64]> {
        self.geometry(i).map(Geometry::dims)
    }

    /// Slot `i`'s strides (storage elements), if known.
    #[inline]
    pub fn strides(&self, i: usize) -> Option<&[i64]> {
        self.geometry(i).map(Geometry::strides)
    }

    /// Slot `i`'s dtype (the storage-slot type: fp4 slots read as packed pairs).
    #[inline]
    pub fn dtype(&self, i: usize) -> DlDtype {
        self.slots[i].dtype
    }

    /// Bytes the producer guarantees addressable in its own element width (`None` = unknown, a
    /// bare address). Untouched by re-description and overrides.
    #[inline]
    pub fn observed_bytes(&self, i: usize) -> Option<u64> {
        let b = self.slots[i].observed_bytes;
        (b >= 0).then_some(b as u64)
    }

    /// The producer's device (`Device::UNKNOWN` for a bare address).
    #[inline]
    pub fn observed_device(&self, i: usize) -> Device {
        self.slots[i].device
    }

    /// Whether slot `i` has exactly the declared storage extents (described by the declaration,
    /// or its own geometry with the declared dims).
    #[inline]
    pub fn has_declared_extent(&self, i: usize) -> bool {
        match (&self.slots[i].desc, &self.layout.slot(i).storage) {
            (Desc::Declared, Some(_)) => true,
            (Desc::Own(g), Some(d)) => g.dims() == d.dims(),
            _ => false,
        }
    }

    /// The slot of a tensor uid; `NotFound` when the uid is not an operand or the caller left the
    /// slot empty.
    pub fn index_of(&self, uid: i64) -> Result<usize> {
        match self.layout.slot_of_uid(uid) {
            Some(i) if self.is_filled(i) => Ok(i),
            Some(i) => Err(Error::NotFound {
                what: "buffer in the variant pack for",
                key: self.layout.slot(i).label(),
            }),
            None => Err(Error::NotFound {
                what: "operand",
                key: format!("tensor uid {uid}"),
            }),
        }
    }

    /// `Ok` when every filled slot with geometry is row-major compact, else the first offending
    /// slot.
    pub fn all_contiguous(&self) -> std::result::Result<(), usize> {
        self.first_failing(Geometry::is_compact)
    }

    /// `Ok` when every filled slot with geometry has a dense layout (innermost axis of extent > 1
    /// has stride 1), else the first offending slot.
    pub fn all_dense_layout(&self) -> std::result::Result<(), usize> {
        self.first_failing(Geometry::is_dense_layout)
    }

    fn first_failing(&self, ok: impl Fn(&Geometry) -> bool) -> std::result::Result<(), usize> {
        match (0..self.len()).find(|&i| self.geometry(i).is_some_and(|g| !ok(g))) {
            Some(i) => Err(i),
            None => Ok(()),
        }
    }
}
