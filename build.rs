//! Build script: generates the C header into OUT_DIR (never into the source tree), exposes its
//! path to tests as `DNNPLAN_GENERATED_HEADER`, sets the shared library's SONAME, and lists the C
//! test programs for `tests/c_abi.rs`.

use std::env;
use std::path::PathBuf;

fn main() {
    let crate_dir = PathBuf::from(env::var("CARGO_MANIFEST_DIR").expect("CARGO_MANIFEST_DIR"));
    let out_dir = PathBuf::from(env::var("OUT_DIR").expect("OUT_DIR"));
    let major: u32 = env::var("CARGO_PKG_VERSION_MAJOR")
        .unwrap()
        .parse()
        .unwrap();
    let minor: u32 = env::var("CARGO_PKG_VERSION_MINOR")
        .unwrap()
        .parse()
        .unwrap();
    let patch: u32 = env::var("CARGO_PKG_VERSION_PATCH")
        .unwrap()
        .parse()
        .unwrap();
    let abi = abi_version(major, minor);

    println!("cargo:rerun-if-changed=cbindgen.toml");
    println!("cargo:rerun-if-changed=src");
    println!("cargo:rerun-if-changed=build.rs");

    let mut config = cbindgen::Config::from_file(crate_dir.join("cbindgen.toml"))
        .expect("cbindgen.toml must parse");
    config.after_includes = Some(format!(
        "\n#define DNNP_VERSION_MAJOR {major}\n#define DNNP_VERSION_MINOR {minor}\n#define DNNP_VERSION_PATCH {patch}\n\
         /** Packed version: major*10000 + minor*100 + patch (compare with dnnp_get_version()). */\n\
         #define DNNP_VERSION {packed}\n\
         /** ABI version string: the SONAME suffix (libdnnplan.so.<ABI>). */\n\
         #define DNNP_ABI_VERSION \"{abi}\"\n",
        packed = major * 10000 + minor * 100 + patch,
    ));
    let header = out_dir.join("dnnplan.h");
    // Only the C ABI module tree (src/ffi/ and its submodules) is scanned, so public items of
    // other modules (constants, repr(C) types) never leak into the C header.
    cbindgen::Builder::new()
        .with_src(crate_dir.join("src/ffi/mod.rs"))
        .with_config(config)
        .generate()
        .expect("cbindgen failed to generate the C header")
        .write_to_file(&header);
    println!(
        "cargo:rustc-env=DNNPLAN_GENERATED_HEADER={}",
        header.display()
    );
    println!("cargo:rustc-env=DNNPLAN_ABI_VERSION={abi}");

    if env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-cdylib-link-arg=-Wl,-soname,libdnnplan.so.{abi}");
    }

    write_ffi_test_list(&crate_dir, &out_dir);
}

/// Writes `$OUT_DIR/ffi_tests.rs`: one `ffi_test!(name, "path")` line per `ffi-tests/t_*.c`, which
/// `tests/c_abi.rs` turns into one named `#[test]` per C program (new files are picked up because
/// cargo reruns this script when the directory changes).
fn write_ffi_test_list(crate_dir: &std::path::Path, out_dir: &std::path::Path) {
    let dir = crate_dir.join("ffi-tests");
    println!("cargo:rerun-if-changed=ffi-tests");
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|entries| {
            entries
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| n.starts_with("t_") && n.ends_with(".c"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut list = String::new();
    for file in names {
        let ident: String = file
            .trim_end_matches(".c")
            .chars()
            .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
            .collect();
        list.push_str(&format!("ffi_test!({ident}, {file:?});\n"));
    }
    std::fs::write(out_dir.join("ffi_tests.rs"), list).expect("write ffi_tests.rs");
}

/// While the major version is 0 every minor release may break the ABI, so the ABI is `0.<minor>`.
fn abi_version(major: u32, minor: u32) -> String {
    if major == 0 {
        format!("0.{minor}")
    } else {
        major.to_string()
    }
}
