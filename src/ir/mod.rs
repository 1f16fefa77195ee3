//! Graph IR: tensors, nodes, op tables, shape inference, validation, JSON and the graph key.
