//! Ports to slots: which slot of the operand order each node port reads or writes, so a plan can
//! join ports to slots once (at build, from the layout) and afterwards only move addresses.
//!
//! [`port_slots`] answers from the layout alone (a port whose tensor is not an operand, such as a
//! virtual intermediate of a lowered graph, has no slot). [`bind_ports`] answers for one call: a
//! port is bound when its slot is filled; an unfilled virtual port is absent, an unfilled
//! non-virtual port is an error naming the node, the port and the tensor (spec 5.1).

use crate::error::{Error, Result};
use crate::ir::Graph;

use super::declared::DeclaredLayout;
use super::variant::VariantPack;

/// One node's ports and their slots.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct NodePorts {
    /// `(input port, slot)`, in port-name order.
    pub inputs: Vec<(String, usize)>,
    /// `(output port, slot)`, in port-name order.
    pub outputs: Vec<(String, usize)>,
}

impl NodePorts {
    /// The slot of input `port`, if bound.
    pub fn input(&self, port: &str) -> Option<usize> {
        self.inputs.iter().find(|(p, _)| p == port).map(|(_, s)| *s)
    }

    /// The slot of output `port`, if bound.
    pub fn output(&self, port: &str) -> Option<usize> {
        self.outputs
            .iter()
            .find(|(p, _)| p == port)
            .map(|(_, s)| *s)
    }
}

/// Per node (graph order), every port whose tensor is an operand, with its slot.
pub fn port_slots(graph: &Graph, layout: &DeclaredLayout) -> Vec<NodePorts> {
    let slots = |ports: &std::collections::BTreeMap<String, i64>| {
        ports
            .iter()
            .filter_map(|(p, uid)| layout.slot_of_uid(*uid).map(|s| (p.clone(), s)))
            .collect()
    };
    graph
        .nodes()
        .iter()
        .map(|n| NodePorts {
            inputs: slots(&n.inputs),
            outputs: slots(&n.outputs),
        })
        .collect()
}

/// Per node, every port bound in this call's pack. An unfilled non-virtual port is an error
/// ("node X: no buffer for input port P (tensor T)"); an unfilled virtual port is absent.
pub fn bind_ports(graph: &Graph, pack: &VariantPack<'_>) -> Result<Vec<NodePorts>> {
    let layout = pack.layout();
    let mut out = Vec::with_capacity(graph.nodes().len());
    for n in graph.nodes() {
        let mut bound = NodePorts::default();
        for (direction, ports, into) in [
            ("input", &n.inputs, &mut bound.inputs),
            ("output", &n.outputs, &mut bound.outputs),
        ] {
            for (port, &uid) in ports {
                match layout.slot_of_uid(uid) {
                    Some(s) if pack.is_filled(s) => into.push((port.clone(), s)),
                    _ => {
                        let virtual_tensor = graph.tensor(uid).is_none_or(|t| t.is_virtual);
                        if !virtual_tensor {
                            let name = graph.tensor(uid).map_or("", |t| t.name.as_str());
                            return Err(Error::invalid_graph(
                                &n.name,
                                Some(port),
                                format!(
                                    "no buffer for {direction} port {port} (tensor uid {uid} '{name}')"
                                ),
                            ));
                        }
                    }
                }
            }
        }
        out.push(bound);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use std::ffi::c_void;

    use super::*;
    use crate::pack::from_ir::{declared_layout, wired_ports_order};
    use crate::pack::normalize;
    use crate::pack::testing::{NOOP_OP, chain_graph};

    #[test]
    fn ports_join_slots_and_unbound_ports_are_named() {
        let mut g = chain_graph(NOOP_OP, 3).unwrap();
        g.begin_planning().unwrap();
        let layout = declared_layout(&g, wired_ports_order(&g)).unwrap();
        let ports = port_slots(&g, &layout);
        assert_eq!(ports.len(), 2);
        assert_eq!(ports[0].input("input"), Some(0));
        assert_eq!(ports[0].output("OUT_0"), Some(1));
        assert_eq!(ports[1].input("input"), Some(1));
        assert_eq!(ports[1].output("OUT_0"), Some(2));

        let p = [0x100 as *mut c_void; 3];
        let pack = normalize::from_addresses(&layout, &p, &[]).unwrap();
        assert_eq!(bind_ports(&g, &pack).unwrap(), ports);

        // y1 (uid 2) is a virtual intermediate: unbound, it is simply absent.
        let pack =
            normalize::from_addresses(&layout, &[p[0], std::ptr::null_mut(), p[2]], &[]).unwrap();
        let bound = bind_ports(&g, &pack).unwrap();
        assert_eq!(bound[0].output("OUT_0"), None);
        // The input x (uid 1) is not virtual: unbound, it is an error naming node and port.
        let pack =
            normalize::from_addresses(&layout, &[std::ptr::null_mut(), p[1], p[2]], &[]).unwrap();
        let e = bind_ports(&g, &pack).unwrap_err().to_string();
        assert!(
            e.contains("port `input`")
                && e.contains("no buffer for input port input (tensor uid 1 'x')"),
            "{e}"
        );
    }
}
