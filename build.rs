//! Build script: generates the C header into OUT_DIR (never into the source tree), exposes its
//! path to tests as `DNNPLAN_GENERATED_HEADER`, and sets the shared library's SONAME.

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
    cbindgen::Builder::new()
        .with_crate(&crate_dir)
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
}

/// While the major version is 0 every minor release may break the ABI, so the ABI is `0.<minor>`.
fn abi_version(major: u32, minor: u32) -> String {
    if major == 0 {
        format!("0.{minor}")
    } else {
        major.to_string()
    }
}
