//! Lossless JSON for graphs, with a schema version, and the graph key.
//!
//! Layout: `{"format": "dnnplan.graph", "schema_version": 1, "context": {...}, "tensors": [...
//! sorted by uid], "nodes": [... in order]}`. Every tensor and node field is written (flags that
//! equal their default may be omitted and read back as the default), so `from_json(to_json(g))`
//! rebuilds an equal graph. Loading re-checks every node against the op tables; a loaded graph is
//! mutable (validation and freezing are not persisted).
//!
//! The graph key is blake3 over the canonical serialization (compact JSON of the same document;
//! object keys in fixed order, tensors by uid), with dims and strides cleared when dynamic shapes
//! are enabled. It is stable across processes and machines.

use serde::{Deserialize, Serialize};

use super::graph::{Graph, GraphContext};
use super::node::Node;
use super::tensor::Tensor;
use crate::error::{Error, Result};

/// The schema version written into every graph JSON; readers refuse newer versions.
pub const GRAPH_SCHEMA_VERSION: u32 = 1;
/// The `format` tag of graph JSON documents.
pub const GRAPH_FORMAT: &str = "dnnplan.graph";

#[derive(Serialize, Deserialize)]
struct GraphDoc {
    format: String,
    schema_version: u32,
    context: GraphContext,
    tensors: Vec<Tensor>,
    nodes: Vec<Node>,
}

fn doc(g: &Graph) -> GraphDoc {
    GraphDoc {
        format: GRAPH_FORMAT.to_owned(),
        schema_version: GRAPH_SCHEMA_VERSION,
        context: g.context().clone(),
        tensors: g.tensors_by_uid().into_iter().cloned().collect(),
        nodes: g.nodes().to_vec(),
    }
}

impl Graph {
    /// The graph as a JSON value.
    pub fn to_json_value(&self) -> serde_json::Value {
        serde_json::to_value(doc(self)).unwrap_or(serde_json::Value::Null)
    }

    /// The graph as pretty JSON text.
    pub fn to_json(&self) -> String {
        serde_json::to_string_pretty(&doc(self)).unwrap_or_default()
    }

    /// Reads a graph written by [`Graph::to_json`] (any schema version up to ours).
    pub fn from_json(text: &str) -> Result<Graph> {
        let value: serde_json::Value = serde_json::from_str(text)?;
        Graph::from_json_value(value)
    }

    /// Reads a graph from a JSON value.
    pub fn from_json_value(value: serde_json::Value) -> Result<Graph> {
        let version = value
            .get("schema_version")
            .and_then(|v| v.as_u64())
            .ok_or_else(|| Error::bad_param("graph JSON", "missing `schema_version`"))?;
        if version == 0 || version > GRAPH_SCHEMA_VERSION as u64 {
            return Err(Error::bad_param(
                "graph JSON",
                format!(
                    "schema_version {version} is not supported (this build reads 1..={GRAPH_SCHEMA_VERSION})"
                ),
            ));
        }
        let d: GraphDoc = serde_json::from_value(value)?;
        if d.format != GRAPH_FORMAT {
            return Err(Error::bad_param(
                "graph JSON",
                format!("format is `{}`, expected `{GRAPH_FORMAT}`", d.format),
            ));
        }
        Graph::from_parts(d.context, d.tensors, d.nodes)
    }

    /// The canonical serialization the key hashes (compact JSON; dims/strides cleared under
    /// dynamic shapes).
    pub fn canonical_bytes(&self) -> Vec<u8> {
        let mut d = doc(self);
        if d.context.is_dynamic_shape_enabled {
            for t in &mut d.tensors {
                t.dims.clear();
                t.strides.clear();
            }
        }
        serde_json::to_vec(&d).unwrap_or_default()
    }

    /// blake3 of [`Graph::canonical_bytes`].
    pub fn key(&self) -> [u8; 32] {
        *blake3::hash(&self.canonical_bytes()).as_bytes()
    }

    /// The key as 64 lowercase hex digits.
    pub fn key_hex(&self) -> String {
        blake3::Hash::from(self.key()).to_hex().to_string()
    }
}
