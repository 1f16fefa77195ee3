//! The IR side of the pack: IR data types as DLPack triples, IR tensors as [`TensorDecl`]s, the
//! wired-ports operand order of a never-lowered graph, and a graph's declared layout.
//!
//! The data-type table is data: one row per [`DataType`]. Types DLPack cannot name (bit-packed
//! boolean, FP8 E5M3, `NotSet`) map to [`DlDtype::UNKNOWN`], so their slots have unknown width.

use crate::error::Result;
use crate::ir::{DataType, Graph, Tensor, TensorReordering};

use super::declared::{DeclaredLayout, TensorDecl};
use super::dtype::{DlDtype, code};
use super::order::OperandOrder;

/// `DataType` -> DLPack `(code, bits, lanes)`.
const DTYPE_TABLE: &[(DataType, DlDtype)] = &[
    (DataType::NotSet, DlDtype::UNKNOWN),
    (DataType::Float, DlDtype::F32),
    (DataType::Double, DlDtype::F64),
    (DataType::Half, DlDtype::F16),
    (DataType::Int8, DlDtype::I8),
    (DataType::Int32, DlDtype::I32),
    (DataType::Int8x4, DlDtype::new(code::INT, 8, 4)),
    (DataType::Uint8, DlDtype::U8),
    (DataType::Uint8x4, DlDtype::new(code::UINT, 8, 4)),
    (DataType::Int8x32, DlDtype::new(code::INT, 8, 32)),
    (DataType::Bfloat16, DlDtype::BF16),
    (DataType::Int64, DlDtype::I64),
    (DataType::Boolean, DlDtype::UNKNOWN),
    (DataType::ByteBoolean, DlDtype::BOOL),
    (DataType::Fp8E4m3, DlDtype::FP8_E4M3),
    (DataType::Fp8E5m2, DlDtype::FP8_E5M2),
    (DataType::FastFloatForFp8, DlDtype::F32),
    (DataType::Fp8E8m0, DlDtype::FP8_E8M0),
    (DataType::Fp8E5m3, DlDtype::UNKNOWN),
    (DataType::Fp4E2m1, DlDtype::FP4_E2M1),
    (DataType::Int4, DlDtype::new(code::INT, 4, 1)),
    (DataType::ComplexFp32, DlDtype::new(code::COMPLEX, 64, 1)),
    (DataType::ComplexFp64, DlDtype::new(code::COMPLEX, 128, 1)),
];

/// The DLPack triple of an IR data type.
pub fn dl_dtype_of(dt: DataType) -> DlDtype {
    DTYPE_TABLE
        .iter()
        .find(|(d, _)| *d == dt)
        .map_or(DlDtype::UNKNOWN, |(_, t)| *t)
}

impl From<&Tensor> for TensorDecl {
    fn from(t: &Tensor) -> Self {
        TensorDecl {
            uid: t.uid,
            name: t.name.clone(),
            dims: t.dims.clone(),
            strides: t.strides.clone(),
            dtype: dl_dtype_of(t.data_type),
            reordered_scale: t.reordering_type == TensorReordering::F8_128x4,
        }
    }
}

/// The operand order of a graph that never lowers: every tensor wired to any port (virtual or
/// not: a python-only op marks its own outputs virtual yet the caller passes them) plus each such
/// tensor's ragged-offset tensor, ascending by uid.
pub fn wired_ports_order(graph: &Graph) -> OperandOrder {
    OperandOrder::from_wired_ports(graph.nodes().iter().flat_map(|n| n.uids()).map(|uid| {
        let ragged = graph.tensor(uid).and_then(|t| t.ragged_offset_uid);
        (uid, ragged)
    }))
}

/// The declared layout of `graph` for `order` (computed once per graph after the freeze).
pub fn declared_layout(graph: &Graph, order: OperandOrder) -> Result<DeclaredLayout> {
    let decls: Vec<TensorDecl> = order
        .uids()
        .iter()
        .filter_map(|&uid| graph.tensor(uid).map(TensorDecl::from))
        .collect();
    DeclaredLayout::new(order, &decls)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::{GraphContext, NodeBuilder};

    #[test]
    fn every_data_type_has_a_row() {
        for d in DataType::ALL {
            assert!(DTYPE_TABLE.iter().any(|(x, _)| x == d), "{d}");
        }
        // Widths agree with the IR's wherever DLPack names the type.
        for (d, t) in DTYPE_TABLE {
            if let Some(b) = t.item_bytes() {
                assert_eq!(b as usize, d.bytes(), "{d}");
            }
        }
    }

    #[test]
    fn layout_of_a_pointwise_graph() {
        let mut g = Graph::new(GraphContext::new(
            DataType::Bfloat16,
            DataType::Float,
            DataType::Float,
        ));
        let a = g
            .add_tensor(Tensor::new("a", &[2, 8], DataType::Bfloat16).with_uid(10))
            .unwrap();
        let b = g
            .add_tensor(Tensor::new("b", &[2, 8], DataType::Bfloat16).with_uid(4))
            .unwrap();
        let n = g
            .add_node(
                NodeBuilder::by_name("add")
                    .unwrap()
                    .input("a", a)
                    .input("b", b),
            )
            .unwrap();
        let out = g.nodes()[n].uids().find(|u| *u != a && *u != b).unwrap();
        g.validate().unwrap();
        let order = wired_ports_order(&g);
        let mut expected = vec![a, b, out];
        expected.sort_unstable();
        assert_eq!(order.uids(), expected.as_slice());
        let layout = declared_layout(&g, order).unwrap();
        let s = layout.slot(layout.slot_of_uid(a).unwrap());
        assert_eq!(s.dtype, DlDtype::BF16);
        assert_eq!(s.declared_bytes, Some(32));
    }
}
