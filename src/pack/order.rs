//! Operand order: the one list of uids that fixes which slot of a variant pack holds which tensor.
//!
//! It has exactly one source per graph (spec 5.2): the backend's variant-pack template when the
//! graph lowers (every slot required), or the IR's wired ports for ops that never lower (every
//! tensor wired to a port plus its ragged-offset tensor; a hole means "optional port not
//! requested"). Either way the uids are ascending and unique, so the backend's raw-pointer execute
//! takes the pack's address array with no copy, and a uid finds its slot by binary search.

use crate::error::{Error, Result};

/// Where an [`OperandOrder`] came from; decides whether holes are allowed (rule N4).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum OrderSource {
    /// The lowered backend graph's caller-filled uid list: every slot is required.
    BackendTemplate,
    /// The IR's wired ports (python-only / never-lowered ops): holes are optional ports.
    WiredPorts,
}

/// The graph's operand order: ascending unique uids and the source that produced them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OperandOrder {
    uids: Box<[i64]>,
    source: OrderSource,
}

impl OperandOrder {
    /// From the backend's variant-pack template (the caller-filled uids of the lowered graph).
    /// The list is sorted; a duplicate uid is a bug in the lowering.
    pub fn from_backend_template(uids: impl IntoIterator<Item = i64>) -> Result<Self> {
        let mut v: Vec<i64> = uids.into_iter().collect();
        v.sort_unstable();
        if let Some(w) = v.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::Internal(format!(
                "the backend's variant-pack template lists tensor uid {} twice",
                w[0]
            )));
        }
        Ok(OperandOrder {
            uids: v.into_boxed_slice(),
            source: OrderSource::BackendTemplate,
        })
    }

    /// From the IR's wired ports: each item is a tensor wired to some port (virtual or not) and
    /// its ragged-offset tensor if any. Duplicates (one tensor on several ports) collapse.
    pub fn from_wired_ports(ports: impl IntoIterator<Item = (i64, Option<i64>)>) -> Self {
        let mut v: Vec<i64> = Vec::new();
        for (uid, ragged) in ports {
            v.push(uid);
            v.extend(ragged);
        }
        v.sort_unstable();
        v.dedup();
        OperandOrder {
            uids: v.into_boxed_slice(),
            source: OrderSource::WiredPorts,
        }
    }

    /// The uids, ascending: slot `i` holds tensor `uids()[i]`.
    #[inline]
    pub fn uids(&self) -> &[i64] {
        &self.uids
    }

    /// Number of slots.
    #[inline]
    pub fn len(&self) -> usize {
        self.uids.len()
    }

    /// Whether the order is empty (the graph has no caller-filled operand).
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.uids.is_empty()
    }

    /// The source of this order.
    #[inline]
    pub fn source(&self) -> OrderSource {
        self.source
    }

    /// Whether an unfilled slot is allowed (rule N4: only for never-lowered graphs).
    #[inline]
    pub fn holes_allowed(&self) -> bool {
        self.source == OrderSource::WiredPorts
    }

    /// The slot of `uid`, if it is an operand.
    #[inline]
    pub fn slot_of(&self, uid: i64) -> Option<usize> {
        self.uids.binary_search(&uid).ok()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backend_template_sorted_and_unique() {
        let o = OperandOrder::from_backend_template([7, 2, 5]).unwrap();
        assert_eq!(o.uids(), &[2, 5, 7]);
        assert!(!o.holes_allowed());
        assert_eq!(o.slot_of(5), Some(1));
        assert_eq!(o.slot_of(6), None);
        assert!(OperandOrder::from_backend_template([1, 1]).is_err());
    }

    #[test]
    fn wired_ports_include_ragged_offsets() {
        let o = OperandOrder::from_wired_ports([(10, Some(3)), (4, None), (10, Some(3))]);
        assert_eq!(o.uids(), &[3, 4, 10]);
        assert!(o.holes_allowed());
        assert_eq!(o.source(), OrderSource::WiredPorts);
    }
}
