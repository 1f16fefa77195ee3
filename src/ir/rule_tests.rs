//! Every validity rule of every op, broken on purpose: starting from the op's valid example, a
//! mutation derived from the rule itself makes it fail; the rule must then report a message (the
//! reference's own text for `Msg` rules) and `validate()` must fail naming the node.

use super::attr::{AttrType, AttrValue};
use super::dtype::DataType;
use super::examples::example;
use super::graph::Graph;
use super::op::{Cond, OpKind, Rule};
use super::tensor::Tensor;
use super::validate::check_rule;

fn fresh(g: &mut Graph, rank: usize) -> i64 {
    g.add_tensor(Tensor::new("probe", &vec![1; rank], DataType::Float))
        .expect("probe tensor")
}

fn typed_value(g: &Graph, n: usize, name: &str, truthy: bool) -> Option<AttrValue> {
    let spec = g.nodes()[n].spec().attr(name)?;
    Some(match spec.ty {
        AttrType::Bool => AttrValue::Bool(truthy),
        AttrType::Int => AttrValue::Int(if truthy { 1 } else { 0 }),
        AttrType::Float => AttrValue::Float(if truthy { 0.5 } else { 0.0 }),
        AttrType::Str => AttrValue::Str("x".into()),
        AttrType::Ints => AttrValue::Ints(vec![1]),
        AttrType::Floats => AttrValue::Floats(vec![1.0]),
        AttrType::Enum(values) => AttrValue::Str(values[0].to_owned()),
    })
}

fn set(g: &mut Graph, n: usize, name: &str, v: AttrValue) -> bool {
    g.set_attr(n, name, v).is_ok()
}

fn make_hold(g: &mut Graph, n: usize, c: &Cond) -> bool {
    let node = g.nodes()[n].clone();
    match c {
        Cond::Port(p) => {
            if node.input(p).is_some() {
                return true;
            }
            let u = fresh(g, 4);
            g.bind_input(n, p, u).is_ok()
        }
        Cond::Output(p) => {
            if node.output(p).is_some() {
                return true;
            }
            let u = fresh(g, 4);
            g.bind_output(n, p, u).is_ok()
        }
        Cond::Set(a) | Cond::True(a) => match typed_value(g, n, a, true) {
            Some(v) => set(g, n, a, v),
            None => false,
        },
        Cond::SetFalse(a) => set(g, n, a, AttrValue::Bool(false)),
        Cond::Is(a, v) => set(g, n, a, AttrValue::Str((*v).to_owned())),
        Cond::Positive(a) => match typed_value(g, n, a, true) {
            Some(v) => set(g, n, a, v),
            None => false,
        },
        Cond::Any(cs) => cs.iter().any(|c| make_hold(g, n, c)),
        Cond::All(cs) => cs.iter().all(|c| make_hold(g, n, c)),
        Cond::Not(c) => make_fail(g, n, c),
    }
}

fn make_fail(g: &mut Graph, n: usize, c: &Cond) -> bool {
    match c {
        Cond::Port(p) => g.unbind_input(n, p).is_ok(),
        Cond::Output(_) => false,
        Cond::Set(a) => g.clear_attr(n, a).is_ok(),
        Cond::True(a) => set(g, n, a, AttrValue::Bool(false)),
        Cond::SetFalse(a) => set(g, n, a, AttrValue::Bool(true)),
        Cond::Is(a, v) => {
            let Some(AttrType::Enum(values)) = g.nodes()[n].spec().attr(a).map(|s| s.ty) else {
                return false;
            };
            match values.iter().find(|x| *x != v) {
                Some(other) => set(g, n, a, AttrValue::Str((*other).to_owned())),
                None => false,
            }
        }
        Cond::Positive(a) => match typed_value(g, n, a, false) {
            Some(v) => set(g, n, a, v),
            None => false,
        },
        Cond::Any(cs) => cs.iter().all(|c| make_fail(g, n, c)),
        Cond::All(cs) => cs.first().is_some_and(|c| make_fail(g, n, c)),
        Cond::Not(c) => make_hold(g, n, c),
    }
}

/// The tensor at a port, binding a probe of `rank` to an unbound input port.
fn port_uid(g: &mut Graph, n: usize, p: &str, rank: usize) -> Option<i64> {
    if let Some(u) = g.nodes()[n].port(p) {
        return Some(u);
    }
    g.nodes()[n].spec().input(p)?;
    let u = fresh(g, rank);
    g.bind_input(n, p, u).ok()?;
    Some(u)
}

fn dims(g: &Graph, uid: i64) -> Vec<i64> {
    g.tensor(uid).map(|t| t.dims.clone()).unwrap_or_default()
}

fn axis(d: &[i64], a: i64) -> usize {
    if a < 0 {
        (d.len() as i64 + a) as usize
    } else {
        a as usize
    }
}

fn set_dim(g: &mut Graph, uid: i64, a: i64, v: i64) -> bool {
    let mut d = dims(g, uid);
    if d.is_empty() {
        return false;
    }
    let i = axis(&d, a);
    if i >= d.len() {
        return false;
    }
    d[i] = v;
    g.set_dims(uid, &d).is_ok()
}

fn other_dtype(not: &[DataType]) -> DataType {
    *DataType::ALL
        .iter()
        .find(|d| d.is_set() && !not.contains(d))
        .expect("some data type")
}

/// Mutates the graph so `rule` is broken; false when this rule shape is not mechanically breakable.
fn violate(g: &mut Graph, n: usize, rule: &Rule) -> bool {
    match rule {
        Rule::Msg(inner, _) => violate(g, n, inner),
        Rule::Implies(a, b) => make_hold(g, n, a) && make_fail(g, n, b),
        Rule::Excludes(a, b) | Rule::ExactlyOne(a, b) => make_hold(g, n, a) && make_hold(g, n, b),
        Rule::Rank(p, r) => {
            port_uid(g, n, p, r + 1).is_some_and(|u| g.set_dims(u, &vec![2; r + 1]).is_ok())
        }
        Rule::RankIn(p, _, hi) => {
            port_uid(g, n, p, hi + 1).is_some_and(|u| g.set_dims(u, &vec![2; hi + 1]).is_ok())
        }
        Rule::DimEq((a, ax), (b, bx)) | Rule::DimEqOffset((a, ax), (b, bx), _) => {
            let off = if let Rule::DimEqOffset(_, _, o) = rule {
                *o
            } else {
                0
            };
            let (Some(ua), Some(ub)) = (port_uid(g, n, a, 4), port_uid(g, n, b, 4)) else {
                return false;
            };
            let db = dims(g, ub);
            let y = db[axis(&db, *bx)];
            set_dim(g, ua, *ax, y + off + 1)
        }
        Rule::DimDivisible((a, ax), (b, bx)) => {
            let (Some(ua), Some(ub)) = (port_uid(g, n, a, 4), port_uid(g, n, b, 4)) else {
                return false;
            };
            let (da, db) = (dims(g, ua), dims(g, ub));
            let (x, y) = (da[axis(&da, *ax)], db[axis(&db, *bx)]);
            if y > 1 {
                set_dim(g, ua, *ax, y + 1)
            } else {
                set_dim(g, ub, *bx, x + 1)
            }
        }
        Rule::LastStrideOne(p) => port_uid(g, n, p, 4).is_some_and(|u| {
            let s: Vec<i64> = super::tensor::row_major_strides(&dims(g, u))
                .iter()
                .map(|s| s * 2)
                .collect();
            g.set_strides(u, &s).is_ok()
        }),
        Rule::DtypeIn(p, allowed) => {
            port_uid(g, n, p, 4).is_some_and(|u| g.set_data_type(u, other_dtype(allowed)).is_ok())
        }
        Rule::DtypeNot(p, d) => {
            port_uid(g, n, p, 4).is_some_and(|u| g.set_data_type(u, *d).is_ok())
        }
        Rule::SameDtype(a, b) => {
            let (Some(ua), Some(ub)) = (port_uid(g, n, a, 4), port_uid(g, n, b, 4)) else {
                return false;
            };
            let tb = g.tensor(ub).map(|t| t.data_type).unwrap_or_default();
            g.set_data_type(ua, other_dtype(&[tb])).is_ok()
        }
        Rule::AttrMin(a, m) => match g.nodes()[n].spec().attr(a).map(|s| s.ty) {
            Some(AttrType::Int) => set(g, n, a, AttrValue::Int(*m as i64 - 1)),
            Some(AttrType::Float) => set(g, n, a, AttrValue::Float(m - 1.0)),
            _ => false,
        },
        Rule::AttrBelow(a, m) => set(g, n, a, AttrValue::Float(*m)),
        Rule::ListLenIsRank(a, p) => {
            let Some(u) = port_uid(g, n, p, 3) else {
                return false;
            };
            let r = dims(g, u).len();
            set(g, n, a, AttrValue::Ints((0..=r as i64).collect()))
        }
        Rule::MatmulShapes(a, b) => {
            let (Some(ua), Some(ub)) = (port_uid(g, n, a, 3), port_uid(g, n, b, 3)) else {
                return false;
            };
            let k = *dims(g, ua).last().unwrap_or(&1);
            set_dim(g, ub, -2, k + 1)
        }
        Rule::Broadcastable => {
            let uids: Vec<i64> = g.nodes()[n].inputs.values().copied().collect();
            if uids.len() < 2 {
                return false;
            }
            g.set_dims(uids[0], &[2, 3]).is_ok() && g.set_dims(uids[1], &[5, 3]).is_ok()
        }
        Rule::ConcatShapes => {
            let Some(u) = g.nodes()[n].input("inputs_1") else {
                return false;
            };
            let d0 = dims(g, u)[0];
            set_dim(g, u, 0, d0 + 1)
        }
        Rule::OutputVirtual(p) => {
            let Some(u) = g.nodes()[n].output(p) else {
                return false;
            };
            g.set_output(u, true).is_ok()
        }
        Rule::SameElementCount(_, b) => {
            let Some(u) = g.nodes()[n].port(b) else {
                return false;
            };
            let d0 = dims(g, u)[0];
            set_dim(g, u, 0, d0 + 1)
        }
        Rule::LaHeads => {
            let Some(u) = g.nodes()[n].input("k") else {
                return false;
            };
            set_dim(g, u, -2, 3)
        }
        Rule::LaRows => {
            let Some(u) = g.nodes()[n].input("k") else {
                return false;
            };
            let d0 = dims(g, u)[0];
            set_dim(g, u, 0, d0 + 1)
        }
        Rule::LaGradPresence => {
            let node = g.nodes()[n].clone();
            let Some(u) = ["d_initial_state", "d_a_log", "d_dt_bias", "dA", "dD", "dZ"]
                .iter()
                .find_map(|p| node.output(p))
            else {
                return false;
            };
            set_dim(g, u, 0, 9)
        }
    }
}

#[test]
fn every_rule_of_every_op_fails_with_its_message() {
    let mut checked = 0;
    let mut skipped = Vec::new();
    for k in OpKind::all() {
        for rule in &k.spec().rules {
            let mut ex = example(k.name()).expect("example");
            ex.graph.validate().expect("valid example");
            let n = ex.node;
            assert_eq!(
                check_rule(&ex.graph, &ex.graph.nodes()[n].clone(), rule),
                None,
                "{k}: the valid example already breaks {}",
                rule.describe()
            );
            let mut g = ex.graph.clone();
            if !violate(&mut g, n, rule) {
                skipped.push(format!("{k}: {}", rule.describe()));
                continue;
            }
            let node = g.nodes()[n].clone();
            let (port, msg) = check_rule(&g, &node, rule)
                .unwrap_or_else(|| panic!("{k}: breaking `{}` was not reported", rule.describe()));
            assert!(!msg.is_empty(), "{k}: empty message");
            if let Rule::Msg(_, text) = rule {
                assert_eq!(msg, *text, "{k}: reference message");
            }
            if let Some(p) = &port {
                let spec = node.spec();
                assert!(
                    spec.input(p).is_some() || spec.output(p).is_some() || spec.attr(p).is_some(),
                    "{k}: message names `{p}`, which is no port or attribute of the op"
                );
            }
            let err = g.validate().expect_err(&format!(
                "{k}: validate must fail for `{}`",
                rule.describe()
            ));
            assert!(
                err.to_string().contains(&format!("node `{}`", node.name)),
                "{k}: {err}"
            );
            checked += 1;
        }
    }
    assert!(
        skipped.is_empty(),
        "rules not broken by the generic mutations: {skipped:#?}"
    );
    eprintln!("broke {checked} rules of {} ops", OpKind::all().count());
    assert!(checked > 300, "checked {checked} rules");
}

#[test]
fn every_name_in_the_tables_belongs_to_its_op() {
    for k in OpKind::all() {
        let s = k.spec();
        for r in &s.rules {
            assert!(
                s.rule_applies(r),
                "{k}: rule `{}` names a kwarg the op lacks",
                r.describe()
            );
        }
        for o in &s.outputs {
            let (mut ports, mut attrs) = (Vec::new(), Vec::new());
            o.when.iter().for_each(|c| c.names(&mut ports, &mut attrs));
            for p in ports {
                assert!(
                    s.input(p).is_some() || s.output(p).is_some(),
                    "{k}: output `{}` presence names `{p}`",
                    o.name
                );
            }
            for a in attrs {
                assert!(
                    s.attr(a).is_some(),
                    "{k}: output `{}` presence names attribute `{a}`",
                    o.name
                );
            }
            let dep = match &o.shape {
                super::op::ShapeRule::SameAs(p) | super::op::ShapeRule::LastDimOne(p) => Some(*p),
                super::op::ShapeRule::Matmul(a, _) => Some(*a),
                _ => None,
            };
            if let Some(p) = dep {
                assert!(
                    s.input(p).is_some(),
                    "{k}: output `{}` shape reads `{p}`",
                    o.name
                );
            }
            if let super::op::DtypeRule::SameAs(p) | super::op::DtypeRule::SameAsOr(p, _) = o.dtype
            {
                assert!(
                    s.input(p).is_some(),
                    "{k}: output `{}` dtype reads `{p}`",
                    o.name
                );
            }
        }
        for c in &s.python_only_when {
            let (mut ports, mut attrs) = (Vec::new(), Vec::new());
            c.names(&mut ports, &mut attrs);
            assert!(
                ports
                    .iter()
                    .all(|p| s.input(p).is_some() || s.output(p).is_some()),
                "{k}"
            );
            assert!(attrs.iter().all(|a| s.attr(a).is_some()), "{k}");
        }
    }
}
