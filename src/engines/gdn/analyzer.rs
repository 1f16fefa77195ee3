//! The `gdn` family analyzer: one [`GdnFacts`] record per frozen graph holding exactly one
//! `gdn` or `gdn_bwd` node (spec §2.2). Facts describe (shapes, dtypes, attributes, which
//! optional ports are bound); they judge only graph consistency the IR cannot see on its own
//! (head grouping), through [`Facts::invalid`].

use std::sync::Arc;

use serde_json::json;

use crate::dispatch::facts::{Facts, FactsRef};
use crate::dispatch::graph::Graph;
use crate::dispatch::target::Target;
use crate::error::Result;
use crate::ir::{DataType, Node, Tensor};

/// Which op the node is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GdnOp {
    /// `gdn` (forward).
    Forward,
    /// `gdn_bwd`.
    Backward,
}

/// One bound tensor as the engines need it.
#[derive(Clone, Debug, PartialEq)]
pub struct PortFacts {
    /// Tensor uid.
    pub uid: i64,
    /// Dims.
    pub dims: Vec<i64>,
    /// Element type.
    pub dtype: DataType,
    /// Row-major packed (strides equal the dense strides of `dims`).
    pub packed: bool,
}

/// The analysis of a GDN graph.
#[derive(Clone, Debug)]
pub struct GdnFacts {
    /// Node name (for messages).
    pub node: String,
    /// Forward or backward.
    pub op: GdnOp,
    /// Sequences `N`.
    pub n_seqs: i64,
    /// Tokens `T`.
    pub total_tokens: i64,
    /// Heads `H`, `HK`, `HV`, `HO`.
    pub heads: (i64, i64, i64, i64),
    /// Head dims `K`, `V`.
    pub k: i64,
    /// Value head dim.
    pub v: i64,
    /// The io dtype (q's).
    pub io: DataType,
    /// Ports bound on the node, by port name (inputs and outputs).
    pub ports: Vec<(&'static str, PortFacts)>,
    /// `scale` (None: `1/sqrt(K)`).
    pub scale: Option<f64>,
    /// Boolean attributes that change the math or the schedule.
    pub use_qk_l2norm: bool,
    /// `use_beta_sigmoid`.
    pub use_beta_sigmoid: bool,
    /// `allow_neg_eigval`.
    pub allow_neg_eigval: bool,
    /// `safe_gate`.
    pub safe_gate: bool,
    /// `gate_domain == "linear"`.
    pub linear_gate: bool,
    /// `batch_invariant`.
    pub batch_invariant: bool,
    /// `overwrite_initial_state`.
    pub overwrite_initial_state: bool,
    /// `checkpoint_every_n_tokens`.
    pub checkpoint_every: i64,
    /// Why the graph is inconsistent for every kernel of the family, if it is.
    pub invalid: Option<String>,
}

impl GdnFacts {
    /// The bound tensor of `port`, if any.
    pub fn port(&self, port: &str) -> Option<&PortFacts> {
        self.ports.iter().find(|(p, _)| *p == port).map(|(_, f)| f)
    }

    /// Effective q scale.
    pub fn effective_scale(&self) -> f64 {
        self.scale.unwrap_or(1.0 / (self.k as f64).sqrt())
    }
}

impl Facts for GdnFacts {
    fn describe(&self) -> serde_json::Value {
        let (h, hk, hv, ho) = self.heads;
        json!({
            "node": self.node,
            "op": if self.op == GdnOp::Forward { "gdn" } else { "gdn_bwd" },
            "N": self.n_seqs, "T": self.total_tokens,
            "H": h, "HK": hk, "HV": hv, "HO": ho, "K": self.k, "V": self.v,
            "io": self.io.name(),
            "ports": self.ports.iter().map(|(p, f)| json!({
                "port": p, "dtype": f.dtype.name(), "dims": f.dims, "packed": f.packed,
            })).collect::<Vec<_>>(),
            "scale": self.effective_scale(),
            "use_qk_l2norm": self.use_qk_l2norm,
            "use_beta_sigmoid": self.use_beta_sigmoid,
            "allow_neg_eigval": self.allow_neg_eigval,
            "safe_gate": self.safe_gate,
            "gate_domain": if self.linear_gate { "linear" } else { "log" },
            "batch_invariant": self.batch_invariant,
            "overwrite_initial_state": self.overwrite_initial_state,
            "checkpoint_every_n_tokens": self.checkpoint_every,
        })
    }

    fn invalid(&self) -> Option<&str> {
        self.invalid.as_deref()
    }
}

/// Every port name a GDN node may bind (inputs, then outputs).
pub(super) const PORTS: &[&str] = &[
    "q",
    "k",
    "v",
    "g",
    "beta",
    "cu_seqlens",
    "initial_state",
    "a_log",
    "dt_bias",
    "state_indices",
    "dO",
    "state_checkpoints",
    "chunk_factors",
    "d_final_state",
    "O",
    "final_state",
    "dQ",
    "dK",
    "dV",
    "dG",
    "dBeta",
    "d_initial_state",
    "d_a_log",
    "d_dt_bias",
];

/// Whether `t`'s strides are the dense row-major strides of its dims (saturating as
/// `row_major_strides` does: dims whose product exceeds an i64 must not wrap the expected stride,
/// nor panic).
fn packed(t: &Tensor) -> bool {
    if t.strides.is_empty() {
        return true;
    }
    let mut expect = 1i64;
    for (d, s) in t.dims.iter().zip(&t.strides).rev() {
        if *d > 1 && *s != expect {
            return false;
        }
        expect = expect.saturating_mul(*d);
    }
    true
}

fn port_facts(g: &Graph, node: &Node) -> Vec<(&'static str, PortFacts)> {
    PORTS
        .iter()
        .filter_map(|p| {
            g.port_tensor(node, p).map(|t| {
                (
                    *p,
                    PortFacts {
                        uid: t.uid,
                        dims: t.dims.clone(),
                        dtype: t.data_type,
                        packed: packed(t),
                    },
                )
            })
        })
        .collect()
}

/// The family analyzer: `None` unless the graph holds exactly one `gdn` / `gdn_bwd` node and
/// no other linear-attention op.
pub fn analyze(graph: &Graph, _target: &Target) -> Result<Option<FactsRef>> {
    let la: Vec<&Node> = graph
        .nodes()
        .iter()
        .filter(|n| matches!(n.op.name(), "gdn" | "gdn_bwd"))
        .collect();
    if la.len() != 1 || graph.nodes().len() != 1 {
        return Ok(None);
    }
    let node = la[0];
    let op = if node.op.name() == "gdn" {
        GdnOp::Forward
    } else {
        GdnOp::Backward
    };
    let ports = port_facts(graph, node);
    let dims = |p: &str| {
        ports
            .iter()
            .find(|(n, _)| *n == p)
            .map(|(_, f)| f.dims.clone())
    };
    let (Some(q), Some(k), Some(v), Some(cu)) =
        (dims("q"), dims("k"), dims("v"), dims("cu_seqlens"))
    else {
        return Ok(None);
    };
    if q.len() != 3 || k.len() != 3 || v.len() != 3 || cu.len() != 1 {
        return Ok(None);
    }
    let (h, hk, hv) = (q[1], k[1], v[1]);
    let ho = h.max(hv);
    let mut invalid = None;
    if h <= 0 || hk <= 0 || hv <= 0 || ho % h != 0 || ho % hv != 0 || !(hk == h || hk == hv) {
        invalid = Some(format!(
            "node '{}': heads H={h}, HK={hk}, HV={hv} do not group (need HK in {{H, HV}} and \
             max(H, HV) divisible by both)",
            node.name
        ));
    }
    let io = ports
        .iter()
        .find(|(n, _)| *n == "q")
        .map(|(_, f)| f.dtype)
        .unwrap_or(DataType::NotSet);
    let facts = GdnFacts {
        node: node.name.clone(),
        op,
        n_seqs: cu[0] - 1,
        total_tokens: q[0],
        heads: (h, hk, hv, ho),
        k: q[2],
        v: v[2],
        io,
        scale: node.attr_float("scale"),
        use_qk_l2norm: node.attr_bool("use_qk_l2norm"),
        use_beta_sigmoid: node.attr_bool("use_beta_sigmoid"),
        allow_neg_eigval: node.attr_bool("allow_neg_eigval"),
        safe_gate: node.attr_bool("safe_gate"),
        linear_gate: node.attr_str("gate_domain").as_deref() == Some("linear"),
        batch_invariant: node.attr_bool("batch_invariant"),
        overwrite_initial_state: node.attr_bool("overwrite_initial_state"),
        checkpoint_every: node.attr_int("checkpoint_every_n_tokens").unwrap_or(0),
        ports,
        invalid,
    };
    Ok(Some(Arc::new(facts)))
}

/// Facts of a `gdn` (`op` Forward) or `gdn_bwd` node of `n` sequences, `t` tokens, `ho` heads
/// everywhere and K = V = `d`, bf16, no options: the schedule rules' unit tests use it.
#[cfg(test)]
pub(crate) fn test_facts(
    op: GdnOp,
    n: i64,
    t: i64,
    ho: i64,
    d: i64,
    batch_invariant: bool,
) -> GdnFacts {
    GdnFacts {
        node: if op == GdnOp::Forward {
            "gdn0"
        } else {
            "gdn_bwd0"
        }
        .into(),
        op,
        n_seqs: n,
        total_tokens: t,
        heads: (ho, ho, ho, ho),
        k: d,
        v: d,
        io: crate::ir::DataType::Bfloat16,
        ports: Vec::new(),
        scale: None,
        use_qk_l2norm: false,
        use_beta_sigmoid: false,
        allow_neg_eigval: false,
        safe_gate: false,
        linear_gate: false,
        batch_invariant,
        overwrite_initial_state: false,
        checkpoint_every: 0,
        invalid: None,
    }
}
