//! Unit tests of the IR (lifecycle, uid rules, inference, validation, JSON).

use super::*;

fn ctx() -> GraphContext {
    GraphContext::new(DataType::Half, DataType::Float, DataType::Float)
}

#[test]
fn pointwise_add_infers_broadcast_and_validates() {
    let mut g = Graph::new(ctx());
    let a = g
        .add_tensor(Tensor::new("a", &[2, 3, 4], DataType::Half))
        .unwrap();
    let b = g
        .add_tensor(Tensor::new("b", &[1, 3, 1], DataType::Half))
        .unwrap();
    let n = g
        .add_node(
            NodeBuilder::by_name("add")
                .unwrap()
                .input("a", a)
                .input("b", b),
        )
        .unwrap();
    let out = g.nodes()[n].output("OUT_0").unwrap();
    assert_eq!(g.tensor(out).unwrap().dims, vec![2, 3, 4]);
    g.validate().unwrap();
    assert_eq!(g.tensor(out).unwrap().data_type, DataType::Float);
}
