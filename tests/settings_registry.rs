//! The `DNNPLAN_*` variable table (`dnnplan::settings`) against the sources and the READMEs:
//! every full `DNNPLAN_*` name written in `src/`, `python/src/` or `python/setup.py` (a string
//! literal) is a listed setting or a named exception (build-time and test-only variables); every
//! listed setting is read somewhere there outside the table itself, and README.md (the
//! library's) or python/README.md (the PyTorch package's) names it. So a new variable cannot be
//! read without `dnnplan env` knowing it, and the table cannot keep a variable nothing reads.

mod support;

use std::collections::BTreeSet;
use std::path::Path;

use dnnplan::settings;

/// Names in the sources that are not run-time settings of the library, and why.
const NOT_SETTINGS: [(&str, &str); 3] = [
    (
        settings::BUILD_TIME[0],
        "build.rs hands it to rustc (env!), not read at run time",
    ),
    (
        "DNNPLAN_BWD_PLAN_DUMP",
        "the backward plan dump's output file: an ignored unit test",
    ),
    (
        "DNNPLAN_GDN_BWD_FROM",
        "read by gpu-tests builds only (measurement of a stage alone)",
    ),
];

/// The files the table lives in (their own test literals are made-up names).
const TABLE_FILES: [&str; 2] = ["src/settings.rs", "src/engines/gdn/switches.rs"];

fn source_files(dir: &Path, ext: &str, out: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
        let path = entry.expect("dir entry").path();
        if path.is_dir() {
            source_files(&path, ext, out);
        } else if path.extension().is_some_and(|e| e == ext) {
            out.push(path);
        }
    }
}

/// Every `"DNNPLAN_..."` string literal whose name is complete (ends in a letter or digit).
fn literal_names(text: &str) -> BTreeSet<String> {
    let mut names = BTreeSet::new();
    let mut rest = text;
    while let Some(at) = rest.find("\"DNNPLAN_") {
        let tail = &rest[at + 1..];
        let end = tail
            .find(|c: char| !(c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_'))
            .unwrap_or(tail.len());
        let name = &tail[..end];
        if tail[end..].starts_with('"') && !name.ends_with('_') {
            names.insert(name.to_owned());
        }
        rest = &tail[end..];
    }
    names
}

/// (file, text) of every source that reads settings: the Rust sources under `src/` and the
/// PyTorch package's Python under `python/src/`, relative paths.
fn sources() -> Vec<(String, String)> {
    let repo = support::repo();
    let mut files = Vec::new();
    source_files(&repo.join("src"), "rs", &mut files);
    source_files(&repo.join("python/src"), "py", &mut files);
    files.push(repo.join("python/setup.py"));
    files.sort();
    files
        .into_iter()
        .map(|p| {
            let rel = p
                .strip_prefix(repo)
                .expect("under the repository")
                .to_string_lossy()
                .into_owned();
            let text = std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{rel}: {e}"));
            (rel, text)
        })
        .collect()
}

#[test]
fn every_variable_the_sources_name_is_a_setting_or_a_named_exception() {
    let mut unlisted = Vec::new();
    for (file, text) in sources() {
        if TABLE_FILES.contains(&file.as_str()) {
            continue;
        }
        for name in literal_names(&text) {
            let exception = NOT_SETTINGS.iter().any(|(n, _)| *n == name);
            if settings::find(&name).is_none() && !exception {
                unlisted.push(format!("{file}: {name}"));
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "read but not in dnnplan::settings (add a row, or an exception with its reason):\n{}",
        unlisted.join("\n")
    );
}

#[test]
fn every_setting_is_read_and_documented() {
    let read: BTreeSet<String> = sources()
        .into_iter()
        .filter(|(file, _)| !TABLE_FILES.contains(&file.as_str()))
        .flat_map(|(_, text)| literal_names(&text))
        .collect();
    let readme = ["README.md", "python/README.md"]
        .map(|f| std::fs::read_to_string(support::repo().join(f)).expect(f))
        .join("\n");
    let mut stale = Vec::new();
    let mut undocumented = Vec::new();
    for s in settings::all() {
        if !read.contains(s.name) {
            stale.push(s.name);
        }
        let documented = readme.match_indices(s.name).any(|(at, _)| {
            let next = readme[at + s.name.len()..].chars().next();
            !next.is_some_and(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
        });
        if !documented {
            undocumented.push(s.name);
        }
        assert!(!s.effect.is_empty(), "{}: no effect line", s.name);
    }
    assert!(
        stale.is_empty(),
        "listed but read nowhere in src/: {stale:?}"
    );
    assert!(
        undocumented.is_empty(),
        "listed but not in README.md: {undocumented:?}"
    );
    for (name, why) in NOT_SETTINGS {
        assert!(
            settings::find(name).is_none(),
            "{name} is both a setting and an exception ({why})"
        );
        assert!(
            read.contains(name),
            "the exception {name} is named nowhere in src/ any more"
        );
    }
}

#[test]
fn the_literal_scan_reads_names_whole() {
    let names = literal_names(
        r#"env("DNNPLAN_GDN_FWD_SCAN") "DNNPLAN_GDN_" x "DNNPLAN_A1" "DNNPLAN_B x" "not DNNPLAN_C""#,
    );
    let want: BTreeSet<String> = ["DNNPLAN_GDN_FWD_SCAN", "DNNPLAN_A1"]
        .map(String::from)
        .into_iter()
        .collect();
    assert_eq!(names, want);
}
