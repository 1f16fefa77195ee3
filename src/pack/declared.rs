//! The declared layout: per operand slot, the storage geometry, dtype and byte size the graph's
//! tensor declaration promises. Computed once per graph (after the freeze) for the operand order;
//! every call's normalization compares caller buffers against it ("the declaration is the
//! contract": the backend reads only pointers, so the graph says what the bytes mean).
//!
//! Storage geometry equals the declared geometry for every dtype but fp4, which packs two elements
//! per one-byte storage slot along its unit-stride axis (spec 5.6). An fp4 declaration that cannot
//! be packed (odd unit-stride extent, odd outer stride) is refused when the layout is built.

use std::collections::HashMap;

use crate::error::{Error, Result};

use super::dtype::DlDtype;
use super::geometry::Geometry;
use super::order::OperandOrder;

/// What the pack needs to know about one IR tensor. The IR's tensor converts into this; it is
/// also the standalone form tests and the bench use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorDecl {
    /// Tensor uid.
    pub uid: i64,
    /// Tensor name (for messages).
    pub name: String,
    /// Declared extents, element units, graph axis order; empty = not declared.
    pub dims: Vec<i64>,
    /// Declared strides in elements; empty = compact row-major.
    pub strides: Vec<i64>,
    /// Declared element type.
    pub dtype: DlDtype,
    /// Declared as a reordered block-scale tensor (`F8_128x4`): its physical extent is the
    /// capacity engines check, so a dense blob is never re-described (rule N5 vi).
    pub reordered_scale: bool,
}

impl TensorDecl {
    /// A plain declaration (not a reordered scale).
    pub fn new(
        uid: i64,
        name: impl Into<String>,
        dims: &[i64],
        strides: &[i64],
        dtype: DlDtype,
    ) -> Self {
        TensorDecl {
            uid,
            name: name.into(),
            dims: dims.to_vec(),
            strides: strides.to_vec(),
            dtype,
            reordered_scale: false,
        }
    }
}

/// One slot's declaration, in storage units.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DeclaredSlot {
    /// Tensor uid.
    pub uid: i64,
    /// Tensor name.
    pub name: Box<str>,
    /// Declared element type (fp4 = one 4-bit element).
    pub dtype: DlDtype,
    /// Storage-slot type recorded in the pack (fp4 = a packed pair).
    pub storage_dtype: DlDtype,
    /// Declared element geometry in graph axis order (`None` = no declared dims).
    pub element: Option<Geometry>,
    /// Storage geometry (`None` = no declared dims: a bare address gives a pointer-only slot).
    pub storage: Option<Geometry>,
    /// Bytes per storage slot (1 for fp4, element width otherwise; `None` for unnamed types).
    pub slot_bytes: Option<u64>,
    /// Bytes the declaration addresses (span of the storage geometry times the slot width).
    pub declared_bytes: Option<u64>,
    /// Reordered block-scale declaration (rule N5 vi).
    pub reordered_scale: bool,
}

impl DeclaredSlot {
    fn from_decl(d: &TensorDecl) -> Result<Self> {
        let label = || format!("tensor uid {} ('{}')", d.uid, d.name);
        let element = if d.dims.is_empty() {
            None
        } else {
            let strides = (!d.strides.is_empty()).then_some(d.strides.as_slice());
            Some(
                Geometry::new(&d.dims, strides)
                    .map_err(|e| Error::bad_param(label(), format!("declaration: {e}")))?,
            )
        };
        let storage =
            match element {
                Some(g) if d.dtype.is_fp4() => Some(g.fp4_storage().map_err(|rule| {
                    Error::bad_param(label(), format!("{rule} (declared {g:?})"))
                })?),
                other => other,
            };
        let storage_dtype = d.dtype.storage();
        let slot_bytes = storage_dtype.item_bytes();
        let declared_bytes = match (storage, slot_bytes) {
            (Some(g), Some(w)) => g.span_elems().and_then(|s| s.checked_mul(w)),
            _ => None,
        };
        Ok(DeclaredSlot {
            uid: d.uid,
            name: d.name.clone().into_boxed_str(),
            dtype: d.dtype,
            storage_dtype,
            element,
            storage,
            slot_bytes,
            declared_bytes,
            reordered_scale: d.reordered_scale,
        })
    }

    /// "tensor uid N ('name')", the operand label used in every message.
    pub fn label(&self) -> String {
        format!("tensor uid {} ('{}')", self.uid, self.name)
    }
}

/// The declared layout of a graph: its operand order and one [`DeclaredSlot`] per slot.
#[derive(Clone, Debug)]
pub struct DeclaredLayout {
    order: OperandOrder,
    slots: Box<[DeclaredSlot]>,
}

impl DeclaredLayout {
    /// Builds the layout for `order` from the graph's tensor declarations (looked up by uid; a
    /// declaration not in the order is ignored, an operand without one is an error).
    pub fn new(order: OperandOrder, decls: &[TensorDecl]) -> Result<Self> {
        let by_uid: HashMap<i64, &TensorDecl> = decls.iter().map(|d| (d.uid, d)).collect();
        let slots = order
            .uids()
            .iter()
            .map(|&uid| {
                let d = by_uid.get(&uid).ok_or_else(|| Error::NotFound {
                    what: "tensor declaration for operand",
                    key: format!("uid {uid}"),
                })?;
                DeclaredSlot::from_decl(d)
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(DeclaredLayout {
            order,
            slots: slots.into_boxed_slice(),
        })
    }

    /// The operand order.
    #[inline]
    pub fn order(&self) -> &OperandOrder {
        &self.order
    }

    /// The uids in slot order.
    #[inline]
    pub fn uids(&self) -> &[i64] {
        self.order.uids()
    }

    /// Number of slots.
    #[inline]
    pub fn len(&self) -> usize {
        self.slots.len()
    }

    /// Whether there is no slot.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.slots.is_empty()
    }

    /// Every slot's declaration.
    #[inline]
    pub fn slots(&self) -> &[DeclaredSlot] {
        &self.slots
    }

    /// Slot `i`'s declaration.
    #[inline]
    pub fn slot(&self, i: usize) -> &DeclaredSlot {
        &self.slots[i]
    }

    /// The slot index of `uid`, if it is an operand.
    #[inline]
    pub fn slot_of_uid(&self, uid: i64) -> Option<usize> {
        self.order.slot_of(uid)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn storage_and_bytes() {
        let decls = [
            TensorDecl::new(1, "A", &[1, 128, 64], &[8192, 64, 1], DlDtype::BF16),
            TensorDecl::new(2, "Q4", &[1, 128, 64], &[8192, 64, 1], DlDtype::FP4_E2M1),
            TensorDecl::new(3, "nodims", &[], &[], DlDtype::F32),
        ];
        let l = DeclaredLayout::new(
            OperandOrder::from_wired_ports([(1, None), (2, None), (3, None)]),
            &decls,
        )
        .unwrap();
        assert_eq!(l.slot(0).declared_bytes, Some(16384));
        let fp4 = l.slot(1);
        assert_eq!(fp4.storage.unwrap().dims(), &[1, 128, 32]);
        assert_eq!(fp4.storage.unwrap().strides(), &[4096, 32, 1]);
        assert_eq!(fp4.storage_dtype, DlDtype::FP4_E2M1_X2);
        assert_eq!(fp4.slot_bytes, Some(1));
        assert_eq!(fp4.declared_bytes, Some(4096));
        assert_eq!(l.slot(2).storage, None);
        assert_eq!(l.slot(2).declared_bytes, None);
    }

    #[test]
    fn odd_fp4_declaration_refused_naming_tensor() {
        let decls = [TensorDecl::new(9, "W", &[4, 7], &[], DlDtype::FP4_E2M1)];
        let e = DeclaredLayout::new(OperandOrder::from_wired_ports([(9, None)]), &decls)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("tensor uid 9 ('W')") && e.contains("must be even"),
            "{e}"
        );
    }

    #[test]
    fn operand_without_declaration() {
        let e = DeclaredLayout::new(OperandOrder::from_wired_ports([(5, None)]), &[]).unwrap_err();
        assert!(e.to_string().contains("uid 5"));
    }
}
