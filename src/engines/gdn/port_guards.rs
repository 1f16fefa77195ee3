//! The base-address rules of a GDN plan's ports (session 38), checked once per execute.
//!
//! Contract: the kernels move the token tensors (`q`, `k`, `v`, `O`, `dO`, `dQ`, `dK`, `dV`), the
//! states, the checkpoints and the saved chunk factors in 16-byte pieces (cp.async, vector
//! loads and stores, tensor maps), and read or write every other port element by element. A plan
//! lists its bound ports by name ([`PORT_WIDTHS`] says which are which); its first execute
//! settles them into the pack layer's [`GuardTable`] (one flat check per call), so a caller
//! buffer at a misaligned address gets `BadParam` naming the operand, the rule and the address,
//! instead of a misaligned-address fault that would poison the caller's CUDA context.

use crate::pack::{DeclaredLayout, Guard, GuardTable, SlotRule};

/// The alignment of the ports the kernels move in 16-byte pieces.
pub const WIDE_ALIGN: u32 = 16;

/// How a kernel touches a port's memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// In 16-byte pieces: the base address must be [`WIDE_ALIGN`]-byte aligned.
    Wide,
    /// Element by element: the base address must be aligned to the element's width.
    Element,
}

/// Every port of `gdn` and `gdn_bwd` with the access its kernels make (a unit test checks that
/// these are exactly the analyzer's ports).
pub const PORT_WIDTHS: [(&str, Access); 24] = {
    use Access::{Element, Wide};
    [
        ("q", Wide),
        ("k", Wide),
        ("v", Wide),
        ("O", Wide),
        ("initial_state", Wide),
        ("final_state", Wide),
        ("state_checkpoints", Wide),
        ("chunk_factors", Wide),
        ("dO", Wide),
        ("d_final_state", Wide),
        ("dQ", Wide),
        ("dK", Wide),
        ("dV", Wide),
        ("d_initial_state", Wide),
        ("g", Element),
        ("beta", Element),
        ("cu_seqlens", Element),
        ("state_indices", Element),
        ("a_log", Element),
        ("dt_bias", Element),
        ("dG", Element),
        ("dBeta", Element),
        ("d_a_log", Element),
        ("d_dt_bias", Element),
    ]
};

/// The access of port `name` (`None`: not a GDN port).
pub fn access(name: &str) -> Option<Access> {
    PORT_WIDTHS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, a)| *a)
}

/// The guard table of a plan whose bound ports are `ports` (name, uid) on `layout`: an alignment
/// row per port the layout holds (wide ports [`WIDE_ALIGN`], the others their element width).
pub fn settle<'a>(
    layout: &DeclaredLayout,
    ports: impl IntoIterator<Item = (&'a str, i64)>,
) -> GuardTable {
    GuardTable::new(ports.into_iter().filter_map(|(name, uid)| {
        let slot = layout.slot_of_uid(uid)?;
        let align = match access(name).unwrap_or(Access::Element) {
            Access::Wide => WIDE_ALIGN,
            Access::Element => layout.slot(slot).slot_bytes.unwrap_or(1).max(1) as u32,
        };
        Some(Guard {
            slot: slot as u32,
            rule: SlotRule::Align(align),
        })
    }))
}

#[cfg(test)]
mod tests {
    use std::ffi::c_void;

    use super::*;
    use crate::pack::normalize;
    use crate::pack::{DlDtype, OperandOrder, TensorDecl};

    fn layout() -> DeclaredLayout {
        let decls = [
            TensorDecl::new(1, "q", &[64, 2, 128], &[256, 128, 1], DlDtype::BF16),
            TensorDecl::new(2, "g", &[64, 2], &[2, 1], DlDtype::F32),
            TensorDecl::new(
                3,
                "factors",
                &[3, 2, 17924],
                &[35848, 17924, 1],
                DlDtype::U8,
            ),
        ];
        let order = OperandOrder::from_wired_ports(decls.iter().map(|d| (d.uid, None)));
        DeclaredLayout::new(order, &decls).unwrap()
    }

    #[test]
    fn misaligned_ports_are_refused_with_the_operand_and_the_rule() {
        let l = layout();
        let table = settle(&l, [("q", 1), ("g", 2), ("chunk_factors", 3), ("v", 99)]);
        let at = |q: usize, g: usize, f: usize| {
            normalize::from_addresses(
                &l,
                &[q as *mut c_void, g as *mut c_void, f as *mut c_void],
                &[],
            )
            .unwrap()
        };
        assert!(table.admits(&at(0x10000, 0x20004, 0x30010)));
        for (pack, operand, align) in [
            (at(0x10008, 0x20004, 0x30010), "'q'", 16),
            (at(0x10000, 0x20002, 0x30010), "'g'", 4),
            (at(0x10000, 0x20004, 0x30008), "'factors'", 16),
        ] {
            let e = table.check(&pack).unwrap_err().to_string();
            assert!(
                e.contains(operand) && e.contains(&format!("{align}-byte aligned")),
                "{e}"
            );
        }
    }

    #[test]
    fn every_port_a_gdn_node_binds_has_an_access() {
        // The analyzer's list of every port of `gdn` and `gdn_bwd` (both plans' ports among them)
        // and the table name the same ports.
        let ports = super::super::analyzer::PORTS;
        for p in ports.iter().chain(&super::super::backward::PORTS) {
            assert!(access(p).is_some(), "{p}");
        }
        assert_eq!(PORT_WIDTHS.len(), ports.len());
    }
}
