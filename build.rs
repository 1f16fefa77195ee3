//! Build script: generates the C header into OUT_DIR (never into the source tree), exposes its
//! path to tests as `DNNPLAN_GENERATED_HEADER`, sets the shared library's SONAME and marks it never
//! unloaded (`-z nodelete`), and lists the C test programs for `tests/c_abi.rs`. Also turns
//! `kernels/manifest.toml` into `OUT_DIR/kernels.rs`, the static table of bundled kernels (sources
//! embedded with `include_str!`, cubins with `include_bytes!`); never runs nvcc.

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
        // Never unloaded (DF_1_NODELETE): `dlclose` by an integrator that dlopened the library
        // leaves it mapped, so its process-wide state (the manifest, the plan and heuristics
        // caches, the CUDA modules it loaded, its handles on libcuda / libcudnn / NVRTC) stays
        // valid and is not leaked, and a later `dlopen` returns the same instance. Unloading a
        // Rust library frees none of its statics (ffi-tests/t_dlopen_integrator.c).
        println!("cargo:rustc-cdylib-link-arg=-Wl,-z,nodelete");
    }

    kernel_table::generate(&crate_dir, &out_dir);
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

/// `kernels/manifest.toml` -> `OUT_DIR/kernels.rs` (the format is documented in kernels/README.md).
mod kernel_table {
    use std::fmt::Write as _;
    use std::path::Path;

    #[derive(serde::Deserialize)]
    struct Manifest {
        schema: u32,
        #[serde(default)]
        kernel: Vec<Kernel>,
    }

    #[derive(serde::Deserialize)]
    struct Kernel {
        name: String,
        source: String,
        #[serde(default)]
        defines: Vec<String>,
        #[serde(default)]
        ptxas: Vec<String>,
        arch: String,
        sources: Vec<String>,
        nvcc_flags: Vec<String>,
        toolkit: String,
        sources_blake3: String,
        cubin: String,
        cubin_blake3: String,
        functions: Vec<String>,
    }

    pub fn generate(crate_dir: &Path, out_dir: &Path) {
        let kernels_dir = crate_dir.join("kernels");
        let manifest_path = kernels_dir.join("manifest.toml");
        println!("cargo:rerun-if-changed={}", manifest_path.display());
        println!("cargo:rerun-if-changed={}", kernels_dir.display());
        let kernels = match std::fs::read_to_string(&manifest_path) {
            Ok(text) => {
                let manifest: Manifest = toml::from_str(&text)
                    .unwrap_or_else(|e| panic!("{}: {e}", manifest_path.display()));
                assert_eq!(manifest.schema, 1, "kernels/manifest.toml: unknown schema");
                manifest.kernel
            }
            Err(_) => Vec::new(),
        };
        let mut code = String::from(
            "// Generated by build.rs from kernels/manifest.toml. Do not edit.\n\
             /// Every kernel module of kernels/manifest.toml, in manifest order.\n\
             pub static KERNELS: &[Kernel] = &[\n",
        );
        for k in &kernels {
            let path = |rel: &str| {
                let p = kernels_dir.join(rel);
                assert!(p.is_file(), "kernels/manifest.toml: {rel} does not exist");
                println!("cargo:rerun-if-changed={}", p.display());
                p.display().to_string()
            };
            let strs = |v: &[String]| {
                v.iter()
                    .map(|s| format!("{s:?}"))
                    .collect::<Vec<_>>()
                    .join(", ")
            };
            let files = k
                .sources
                .iter()
                .map(|rel| {
                    format!(
                        "SourceFile {{ path: {rel:?}, text: include_str!({:?}) }}",
                        path(rel)
                    )
                })
                .collect::<Vec<_>>()
                .join(", ");
            assert!(
                k.sources.contains(&k.source),
                "kernel {}: source not in sources",
                k.name
            );
            let _ = writeln!(
                code,
                "    Kernel {{ name: {name:?}, source: {source:?}, defines: &[{defines}], \
                 ptxas: &[{ptxas}], functions: &[{functions}], files: &[{files}], sources_blake3: {sb:?}, \
                 cubins: &[Cubin {{ arch: {arch:?}, bytes: include_bytes!({cubin:?}), \
                 blake3: {cb:?}, toolkit: {tk:?}, nvcc_flags: &[{flags}] }}] }},",
                name = k.name,
                source = k.source,
                defines = strs(&k.defines),
                ptxas = strs(&k.ptxas),
                functions = strs(&k.functions),
                sb = k.sources_blake3,
                arch = k.arch,
                cubin = path(&k.cubin),
                cb = k.cubin_blake3,
                tk = k.toolkit,
                flags = strs(&k.nvcc_flags),
            );
        }
        code.push_str("];\n");
        std::fs::write(out_dir.join("kernels.rs"), code).expect("write OUT_DIR/kernels.rs");
    }
}

/// While the major version is 0 every minor release may break the ABI, so the ABI is `0.<minor>`.
fn abi_version(major: u32, minor: u32) -> String {
    if major == 0 {
        format!("0.{minor}")
    } else {
        major.to_string()
    }
}
