//! The C header and the shared library as a C consumer sees them:
//! - `include/dnnplan.h` is exactly what build.rs generates (drift fails with the fix to apply;
//!   `DNNPLAN_UPDATE_HEADER=1` applies it);
//! - the header compiles, links and runs as C99 and as C++17 with `-Wall -Wextra -Werror
//!   -pedantic`, taking the address of every declared function (C++ linking proves the
//!   `extern "C"` guards);
//! - every name it declares is in the `dnnp_` / `DNNP_` namespace;
//! - the library's exported symbols are exactly the functions the header declares, and its SONAME
//!   is `libdnnplan.so.<ABI>`;
//! - the version macros equal the crate version and the runtime entry points.

mod support;

use std::collections::BTreeSet;
use std::ffi::CStr;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use support::{compile, compiler, have_tool, header_path, lib_dir, lib_path, repo, scratch};

const REGENERATE: &str = "regenerate it with `DNNPLAN_UPDATE_HEADER=1 cargo test --test c_header` \
     (or `cargo build` and copy the newest target/debug/build/dnnplan-*/out/dnnplan.h over \
     include/dnnplan.h), then review and commit the diff";

fn checked_in_header() -> String {
    std::fs::read_to_string(header_path()).expect("read include/dnnplan.h")
}

#[test]
fn header_matches_generated() {
    if !support::built_here("header_matches_generated") {
        return;
    }
    let generated_path = env!("DNNPLAN_GENERATED_HEADER");
    let generated = std::fs::read_to_string(generated_path).expect("read the generated header");
    let checked_in = std::fs::read_to_string(header_path()).unwrap_or_default();
    if generated == checked_in {
        return;
    }
    if std::env::var("DNNPLAN_UPDATE_HEADER").as_deref() == Ok("1") {
        std::fs::write(header_path(), &generated).expect("write include/dnnplan.h");
        eprintln!("include/dnnplan.h updated from {generated_path}");
        return;
    }
    let first_diff = generated
        .lines()
        .zip(checked_in.lines())
        .position(|(a, b)| a != b)
        .unwrap_or_else(|| generated.lines().count().min(checked_in.lines().count()));
    panic!(
        "include/dnnplan.h differs from the header generated from the Rust sources \
         (first difference at line {}):\n  generated:  {:?}\n  checked in: {:?}\n{REGENERATE}",
        first_diff + 1,
        generated.lines().nth(first_diff).unwrap_or("<end of file>"),
        checked_in
            .lines()
            .nth(first_diff)
            .unwrap_or("<end of file>"),
    );
}

/// A program that includes the header twice (include guard), takes the address of every function
/// the header declares (so linking proves each has C linkage and is exported), calls into the
/// library and checks the version macro against the runtime value.
fn consumer_source() -> String {
    let functions = parse_header(&checked_in_header()).functions;
    assert!(!functions.is_empty(), "no functions parsed from the header");
    let table: String = functions
        .iter()
        .map(|f| format!("    (dnnp_any_fn)&{f},\n"))
        .collect();
    format!(
        r#"#include "dnnplan.h"
#include "dnnplan.h"
#include <stdio.h>
/* The generic function pointer type: converting any function pointer to it is well defined. */
typedef void (*dnnp_any_fn)(void);
static const dnnp_any_fn every_function[] = {{
{table}}};
int main(void) {{
    size_t i, needed = 0;
    for (i = 0; i < sizeof every_function / sizeof every_function[0]; ++i) {{
        if (every_function[i] == NULL) return 10;
    }}
    if (dnnp_get_version() != (size_t)DNNP_VERSION) return 1;
    if (dnnp_status_name(DNNP_STATUS_SUCCESS) == NULL) return 2;
    if (dnnp_get_last_error_string(NULL, 0, &needed) != DNNP_STATUS_BUFFER_TOO_SMALL) return 3;
    printf("%u functions linked\n", (unsigned)(sizeof every_function / sizeof every_function[0]));
    return 0;
}}
"#
    )
}

/// Compiles `source` (from the repository root, `-I include`, warnings as errors, pedantic, plus
/// `flags`) into `exe`, linked to the library built for this run.
fn compile_against_library(mut cc: Command, flags: &[&str], source: &Path, exe: &Path, what: &str) {
    let libs = lib_dir();
    cc.current_dir(repo())
        .args(flags)
        .args(["-Wall", "-Wextra", "-Werror", "-pedantic", "-I", "include"])
        .arg(source)
        .arg("-o")
        .arg(exe)
        .arg("-L")
        .arg(libs)
        .arg("-ldnnplan")
        .arg(format!("-Wl,-rpath,{}", libs.display()));
    compile(cc, what);
}

fn build_and_run_consumer(source_name: &str, cc: Command, std_flags: &[&str]) {
    let dir = scratch("c_header");
    let source = dir.join(source_name);
    std::fs::write(&source, consumer_source()).expect("write consumer source");
    let exe = dir.join(format!("{source_name}.bin"));
    compile_against_library(
        cc,
        std_flags,
        &source,
        &exe,
        &format!("header consumer {source_name}"),
    );
    let outcome = support::run_with_limit(Command::new(&exe), Duration::from_secs(60));
    assert!(
        outcome.success(),
        "{source_name}: {}\n{}",
        outcome.describe(),
        outcome.transcript()
    );
}

#[test]
fn header_compiles_links_and_runs_as_c99() {
    if !support::built_here("header_compiles_links_and_runs_as_c99") {
        return;
    }
    build_and_run_consumer(
        "consumer.c",
        compiler("CC", "cc"),
        &["-std=c99", "-Wstrict-prototypes", "-Wmissing-prototypes"],
    );
}

#[test]
fn header_compiles_links_and_runs_as_cxx17() {
    if !support::built_here("header_compiles_links_and_runs_as_cxx17") {
        return;
    }
    build_and_run_consumer("consumer.cpp", compiler("CXX", "c++"), &["-std=c++17"]);
}

/// The C++ layer (`include/dnnplan.hpp`) as a user compiles it: `examples-c/dnnplan_plan.cpp`
/// (C++17, -Wall -Wextra -Werror -pedantic, with the header included twice through the example
/// and this test's flags) linked to the built library, run on the GDN example graph: it plans for
/// SM 9.0, walks the list and checks the errors `dnnplan::Error` carries.
#[test]
fn cpp_layer_compiles_links_and_runs() {
    if !support::built_here("cpp_layer_compiles_links_and_runs") {
        return;
    }
    let dir = scratch("c_header");
    let exe = dir.join("dnnplan_plan.bin");
    compile_against_library(
        compiler("CXX", "c++"),
        &["-std=c++17", "-include", "dnnplan.hpp"],
        Path::new("examples-c/dnnplan_plan.cpp"),
        &exe,
        "examples-c/dnnplan_plan.cpp",
    );
    let mut run = Command::new(&exe);
    run.current_dir(repo())
        .arg("examples/graphs/gdn_forward.json");
    let outcome = support::run_with_limit(run, Duration::from_secs(60));
    assert!(
        outcome.success()
            && outcome.stdout.contains("[0] gdn_sm90")
            && outcome.stdout.ends_with("ok\n"),
        "dnnplan_plan: {}\n{}",
        outcome.describe(),
        outcome.transcript()
    );
}

/// Names declared by a C header (comments, preprocessor lines and `extern "C"` guards removed).
#[derive(Default, Debug)]
struct Declarations {
    macros: Vec<(String, String)>,
    functions: BTreeSet<String>,
    variables: BTreeSet<String>,
    types: BTreeSet<String>,
}

fn strip_comments(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix("/*") {
            let end = after.find("*/").map_or(after.len(), |i| i + 2);
            rest = &after[end..];
            out.push(' ');
        } else if let Some(after) = rest.strip_prefix("//") {
            rest = &after[after.find('\n').unwrap_or(after.len())..];
        } else {
            let c = rest.chars().next().expect("non-empty");
            out.push(c);
            rest = &rest[c.len_utf8()..];
        }
    }
    out
}

fn tokenize(text: &str) -> Vec<String> {
    let mut tokens = Vec::new();
    let mut chars = text.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
        } else if c.is_ascii_alphanumeric() || c == '_' {
            let mut ident = String::new();
            while let Some(&c) = chars
                .peek()
                .filter(|c| c.is_ascii_alphanumeric() || **c == '_')
            {
                ident.push(c);
                chars.next();
            }
            tokens.push(ident);
        } else if c == '"' {
            chars.next();
            let mut s = String::from("\"");
            for c in chars.by_ref() {
                s.push(c);
                if c == '"' {
                    break;
                }
            }
            tokens.push(s);
        } else {
            tokens.push(c.to_string());
            chars.next();
        }
    }
    tokens
}

fn is_ident(t: &str) -> bool {
    t.starts_with(|c: char| c.is_ascii_alphabetic() || c == '_')
}

fn parse_header(text: &str) -> Declarations {
    let text = strip_comments(text);
    let mut decls = Declarations::default();
    let mut body = String::new();
    let mut in_cplusplus_guard = false;
    for line in text.lines() {
        let trimmed = line.trim();
        if in_cplusplus_guard {
            in_cplusplus_guard = !trimmed.starts_with("#endif");
            continue;
        }
        if trimmed.starts_with("#ifdef __cplusplus") {
            in_cplusplus_guard = true;
        } else if let Some(define) = trimmed.strip_prefix("#define") {
            let mut parts = define.trim().splitn(2, char::is_whitespace);
            let name = parts.next().unwrap_or_default().to_owned();
            let value = parts.next().unwrap_or_default().trim().to_owned();
            decls.macros.push((name, value));
        } else if !trimmed.starts_with('#') {
            body.push_str(line);
            body.push('\n');
        }
    }

    // Split the body into top-level declarations (ending in `;` outside braces).
    let tokens = tokenize(&body);
    let mut statement: Vec<&str> = Vec::new();
    let mut depth = 0usize;
    for token in &tokens {
        match token.as_str() {
            "{" => depth += 1,
            "}" => depth = depth.saturating_sub(1),
            _ => {}
        }
        statement.push(token);
        if token == ";" && depth == 0 {
            classify(&statement, &mut decls);
            statement.clear();
        }
    }
    assert!(
        statement.is_empty(),
        "unterminated declaration in the header: {statement:?}"
    );
    decls
}

fn classify(statement: &[&str], decls: &mut Declarations) {
    // Tags of struct/enum/union definitions and declarations.
    for pair in statement.windows(2) {
        if matches!(pair[0], "struct" | "enum" | "union") && is_ident(pair[1]) {
            decls.types.insert(pair[1].to_owned());
        }
    }
    let outer: Vec<&str> = {
        // Tokens outside any braces (a struct body's fields are not file-scope names).
        let mut depth = 0usize;
        let mut kept = Vec::new();
        for t in statement {
            match *t {
                "{" => depth += 1,
                "}" => depth -= 1,
                _ if depth == 0 => kept.push(*t),
                _ => {}
            }
        }
        kept
    };
    let last_ident = || {
        outer
            .iter()
            .rev()
            .find(|t| is_ident(t))
            .map(|t| t.to_string())
    };
    if outer.first() == Some(&"typedef") {
        // Function-pointer typedef: `typedef R (*name)(...)`; otherwise the last identifier.
        let name = outer
            .windows(3)
            .find(|w| w[0] == "(" && w[1] == "*" && is_ident(w[2]))
            .map(|w| w[2].to_owned())
            .or_else(last_ident);
        decls.types.extend(name);
    } else if let Some(paren) = outer.iter().position(|t| *t == "(") {
        let name = outer[..paren].iter().rev().find(|t| is_ident(t));
        decls.functions.extend(name.map(|n| n.to_string()));
    } else if !matches!(outer.first(), Some(&("struct" | "enum" | "union"))) || outer.len() > 3 {
        decls.variables.extend(last_ident());
    }
}

#[test]
fn header_parser_reads_declarations() {
    // The parser the namespace and symbol checks rely on, on the forms cbindgen emits.
    let d = parse_header(
        "#define DNNP_X 1 /* c */\n#ifdef __cplusplus\nextern \"C\" {\n#endif\n\
         typedef struct dnnp_graph_t dnnp_graph_t;\ntypedef uint32_t dnnp_kind_t;\n\
         typedef struct dnnp_opts_t { uint32_t struct_size; int (*cb)(void); } dnnp_opts_t;\n\
         typedef void (*dnnp_log_fn)(const char *msg);\n\
         // line comment\nconst char *dnnp_name(dnnp_kind_t k);\nvoid dnnp_graph_destroy(dnnp_graph_t *g);\n\
         extern const int dnnp_table;\n#ifdef __cplusplus\n}\n#endif\n",
    );
    assert_eq!(d.macros, vec![("DNNP_X".to_owned(), "1".to_owned())]);
    assert_eq!(
        d.functions.iter().collect::<Vec<_>>(),
        ["dnnp_graph_destroy", "dnnp_name"]
    );
    assert_eq!(d.variables.iter().collect::<Vec<_>>(), ["dnnp_table"]);
    assert_eq!(
        d.types.iter().collect::<Vec<_>>(),
        ["dnnp_graph_t", "dnnp_kind_t", "dnnp_log_fn", "dnnp_opts_t"]
    );
}

#[test]
fn header_names_are_namespaced() {
    if !support::built_here("header_names_are_namespaced") {
        return;
    }
    let d = parse_header(&checked_in_header());
    assert!(
        !d.functions.is_empty(),
        "no functions parsed from the header"
    );
    let mut offenders = Vec::new();
    for (name, _) in &d.macros {
        if !name.starts_with("DNNP_") && name != "DNNPLAN_H" {
            offenders.push(format!("macro {name}"));
        }
    }
    for name in d.functions.iter().chain(&d.variables) {
        if !name.starts_with("dnnp_") {
            offenders.push(format!("function/variable {name}"));
        }
    }
    for name in &d.types {
        if !name.starts_with("dnnp_") {
            offenders.push(format!("type {name}"));
        }
    }
    assert!(
        offenders.is_empty(),
        "names outside the dnnp_/DNNP_ namespace in include/dnnplan.h: {offenders:?}"
    );
}

#[test]
fn exported_symbols_equal_header_declarations() {
    if !support::built_here("exported_symbols_equal_header_declarations") {
        return;
    }
    let lib = lib_path();
    let out = match Command::new("nm")
        .args(["-D", "--defined-only"])
        .arg(&lib)
        .output()
    {
        Ok(out) if out.status.success() => out,
        Ok(out) => panic!(
            "nm -D --defined-only {} failed: {}",
            lib.display(),
            String::from_utf8_lossy(&out.stderr)
        ),
        Err(e) => {
            eprintln!(
                "SKIPPED exported_symbols_equal_header_declarations: `nm` not available ({e})"
            );
            return;
        }
    };
    // Global symbols only (upper-case type letters), e.g. `0000000000033130 T dnnp_get_version`.
    let exported: BTreeSet<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter_map(|line| {
            let mut fields = line.split_whitespace().rev();
            let name = fields.next()?;
            let kind = fields.next()?;
            (kind.len() == 1 && kind.chars().all(|c| c.is_ascii_uppercase()) && kind != "U")
                .then(|| name.split('@').next().unwrap_or(name).to_owned())
        })
        .collect();
    let d = parse_header(&checked_in_header());
    let declared: BTreeSet<String> = d.functions.union(&d.variables).cloned().collect();
    let not_declared: Vec<_> = exported.difference(&declared).collect();
    let not_exported: Vec<_> = declared.difference(&exported).collect();
    assert!(
        not_declared.is_empty() && not_exported.is_empty(),
        "the library's exports and include/dnnplan.h disagree:\n  exported but not declared: \
         {not_declared:?}\n  declared but not exported: {not_exported:?}\n(a stale header? {REGENERATE})"
    );
}

#[test]
fn library_soname_is_abi_versioned() {
    if !support::built_here("library_soname_is_abi_versioned") {
        return;
    }
    if !have_tool("readelf") {
        eprintln!("SKIPPED library_soname_is_abi_versioned: `readelf` not available");
        return;
    }
    let out = Command::new("readelf")
        .arg("-d")
        .arg(lib_path())
        .output()
        .expect("readelf -d");
    let text = String::from_utf8_lossy(&out.stdout);
    let want = format!("[{}]", support::soname());
    assert!(
        text.lines()
            .any(|l| l.contains("(SONAME)") && l.contains(&want)),
        "SONAME of {} is not {want}:\n{text}",
        lib_path().display()
    );
}

fn macro_value<'a>(d: &'a Declarations, name: &str) -> &'a str {
    d.macros
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.as_str())
        .unwrap_or_else(|| panic!("include/dnnplan.h does not define {name}"))
}

#[test]
fn version_macros_equal_crate_and_runtime_versions() {
    if !support::built_here("version_macros_equal_crate_and_runtime_versions") {
        return;
    }
    let d = parse_header(&checked_in_header());
    let number = |name: &str| -> usize {
        macro_value(&d, name)
            .parse()
            .unwrap_or_else(|e| panic!("{name} is not a number: {e}"))
    };
    let major = number("DNNP_VERSION_MAJOR");
    let minor = number("DNNP_VERSION_MINOR");
    let patch = number("DNNP_VERSION_PATCH");
    assert_eq!(
        format!("{major}.{minor}.{patch}"),
        env!("CARGO_PKG_VERSION"),
        "version macros vs Cargo.toml ({REGENERATE})"
    );
    assert_eq!(number("DNNP_VERSION"), major * 10000 + minor * 100 + patch);
    assert_eq!(
        number("DNNP_VERSION"),
        dnnplan::ffi::diagnostics::dnnp_get_version()
    );
    // SAFETY: both return static NUL-terminated strings.
    let (runtime_version, runtime_abi) = unsafe {
        (
            CStr::from_ptr(dnnplan::ffi::diagnostics::dnnp_get_version_string()),
            CStr::from_ptr(dnnplan::ffi::diagnostics::dnnp_get_abi_version()),
        )
    };
    assert_eq!(runtime_version.to_str().unwrap(), env!("CARGO_PKG_VERSION"));
    let abi = macro_value(&d, "DNNP_ABI_VERSION");
    assert_eq!(abi, format!("{:?}", runtime_abi.to_str().unwrap()));
    let expected_abi = if major == 0 {
        format!("0.{minor}")
    } else {
        major.to_string()
    };
    assert_eq!(runtime_abi.to_str().unwrap(), expected_abi);
}
