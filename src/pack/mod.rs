//! Variant-pack normalization: caller buffers checked against the graph's declarations, once per call.
