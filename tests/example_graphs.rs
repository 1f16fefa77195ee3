//! The example graphs in `examples/graphs/`: every file loads and validates, and each equals what
//! `dnnplan::ir::examples::named_examples` generates (run with `DNNPLAN_UPDATE_EXAMPLES=1` to
//! rewrite them after an intended change).

mod support;

use std::path::PathBuf;

use dnnplan::ir::Graph;
use dnnplan::ir::examples::named_examples;

fn dir() -> PathBuf {
    support::repo().join("examples/graphs")
}

#[test]
fn example_graph_files_are_current() {
    let update = std::env::var_os("DNNPLAN_UPDATE_EXAMPLES").is_some();
    for (stem, graph) in named_examples().expect("examples build") {
        let path = dir().join(format!("{stem}.json"));
        let want = graph.to_json() + "\n";
        if update {
            std::fs::write(&path, &want).expect("write example");
            continue;
        }
        let have = std::fs::read_to_string(&path).unwrap_or_else(|e| {
            panic!(
                "{}: {e} (DNNPLAN_UPDATE_EXAMPLES=1 writes it)",
                path.display()
            )
        });
        assert_eq!(
            have,
            want,
            "{} is stale (DNNPLAN_UPDATE_EXAMPLES=1 rewrites it)",
            path.display()
        );
    }
}

#[test]
fn every_example_graph_file_loads_and_validates() {
    let mut count = 0;
    for entry in std::fs::read_dir(dir()).expect("examples/graphs") {
        let path = entry.expect("entry").path();
        if path.extension().and_then(|e| e.to_str()) != Some("json") {
            continue;
        }
        let text = std::fs::read_to_string(&path).expect("read");
        let mut g = Graph::from_json(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        g.validate()
            .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(!g.nodes().is_empty(), "{}", path.display());
        count += 1;
    }
    assert!(
        count >= 6,
        "expected the six shipped examples, found {count}"
    );
}
