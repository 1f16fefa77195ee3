//! The effective attention mask of an SDPA-family node, from its mask kwargs under the
//! reference's precedence: `use_causal_mask` ⇒ TOP_LEFT alignment and right bound 0;
//! `use_causal_mask_bottom_right` ⇒ BOTTOM_RIGHT and right bound 0; a sliding window sets the
//! left bound; otherwise the explicit bounds and `diagonal_alignment`. The kwarg names differ
//! across the family (`sliding_window_length` / `sliding_window`, `diagonal_band_*_bound` /
//! `*_bound`); this is the one place that reads them. Validation has already rejected the
//! conflicting combinations.

use super::node::Node;
use super::op::OpFamily;

/// The band mask an SDPA node applies.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SdpaMask {
    /// `"TOP_LEFT"` or `"BOTTOM_RIGHT"`.
    pub alignment: String,
    /// Keys more than this many positions left of the diagonal are masked.
    pub left_bound: Option<i64>,
    /// Keys more than this many positions right of the diagonal are masked (0 = causal).
    pub right_bound: Option<i64>,
    /// Per-batch lengths apply (`use_padding_mask`).
    pub padding: bool,
    /// ALiBi bias applies.
    pub alibi: bool,
}

impl SdpaMask {
    /// True for a causal mask (right bound 0).
    pub fn is_causal(&self) -> bool {
        self.right_bound == Some(0)
    }
}

/// The effective mask of an SDPA-family node (`None` for other ops).
pub fn sdpa_mask(node: &Node) -> Option<SdpaMask> {
    if node.op.family() != OpFamily::Sdpa {
        return None;
    }
    let spec = node.spec();
    let pick = |names: &[&'static str]| -> Option<&'static str> {
        names.iter().copied().find(|n| spec.attr(n).is_some())
    };
    let left_name = pick(&["diagonal_band_left_bound", "left_bound"])?;
    let right_name = pick(&["diagonal_band_right_bound", "right_bound"])?;
    let sliding = pick(&["sliding_window_length", "sliding_window"]).and_then(|n| node.attr_int(n));
    let mut alignment = node
        .attr_str("diagonal_alignment")
        .unwrap_or_else(|| "TOP_LEFT".to_owned());
    let mut right_bound = node.attr_int(right_name);
    if node.attr_bool("use_causal_mask") {
        alignment = "TOP_LEFT".into();
        right_bound = Some(0);
    } else if node.attr_bool("use_causal_mask_bottom_right") {
        alignment = "BOTTOM_RIGHT".into();
        right_bound = Some(0);
    }
    Some(SdpaMask {
        alignment,
        left_bound: sliding.or_else(|| node.attr_int(left_name)),
        right_bound,
        padding: node.attr_bool("use_padding_mask"),
        alibi: node.attr_bool("use_alibi_mask"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ir::AttrValue;
    use crate::ir::examples::example;

    #[test]
    fn precedence_of_the_mask_kwargs() {
        let mut ex = example("sdpa").unwrap();
        let m = sdpa_mask(&ex.graph.nodes()[0]).unwrap();
        assert_eq!(
            (m.alignment.as_str(), m.right_bound, m.left_bound),
            ("TOP_LEFT", Some(0), None)
        );
        assert!(m.is_causal());
        let g = &mut ex.graph;
        g.set_attr(0, "use_causal_mask", AttrValue::Bool(false))
            .unwrap();
        g.set_attr(0, "use_causal_mask_bottom_right", AttrValue::Bool(true))
            .unwrap();
        g.set_attr(0, "sliding_window_length", AttrValue::Int(128))
            .unwrap();
        let m = sdpa_mask(&g.nodes()[0]).unwrap();
        assert_eq!(
            (m.alignment.as_str(), m.right_bound, m.left_bound),
            ("BOTTOM_RIGHT", Some(0), Some(128))
        );
        // The fp8 family spells the bounds left_bound / right_bound and the window sliding_window.
        let mut f = example("sdpa_fp8").unwrap();
        f.graph
            .set_attr(0, "use_causal_mask", AttrValue::Bool(false))
            .unwrap();
        f.graph
            .set_attr(0, "left_bound", AttrValue::Int(7))
            .unwrap();
        f.graph
            .set_attr(0, "right_bound", AttrValue::Int(3))
            .unwrap();
        let m = sdpa_mask(&f.graph.nodes()[0]).unwrap();
        assert_eq!(
            (m.left_bound, m.right_bound, m.is_causal()),
            (Some(7), Some(3), false)
        );
        assert!(sdpa_mask(&example("matmul").unwrap().graph.nodes()[0]).is_none());
    }
}
