//! Kernel freshness (CPU, no nvcc): every bundled cubin was rebuilt after its last source change.
//!
//! kernels/build-cubins.sh records, per kernel, the blake3 of its sources and of its cubin in
//! kernels/manifest.toml. Editing a .cu or .cuh without rerunning the script changes the sources'
//! digest; this test then fails and says which kernel to rebuild. So does editing a kernel's
//! hand-written `defines` or `ptxas` (its recorded `nvcc_flags` keep the old ones). (CI's
//! byte-for-byte rebuild, `kernels/build-cubins.sh --check`, additionally proves the cubins come
//! from these sources.)

mod support;

use std::collections::BTreeSet;

use dnnplan::cuda::kernels::{self, KERNELS};

fn kernels_dir() -> std::path::PathBuf {
    support::repo().join("kernels")
}

#[test]
fn every_kernel_source_matches_the_digest_its_cubin_was_built_from() {
    assert!(!KERNELS.is_empty(), "kernels/manifest.toml lists no kernel");
    for k in KERNELS {
        // Read from disk, not from the embedded copy: this is what the next build will embed.
        let mut files = Vec::new();
        for f in k.files {
            let bytes = std::fs::read(kernels_dir().join(f.path)).unwrap_or_else(|e| {
                panic!("kernel {}: cannot read kernels/{}: {e}", k.name, f.path)
            });
            files.push((f.path, bytes));
        }
        let digest = kernels::sources_digest(files.iter().map(|(p, b)| (*p, b.as_slice())));
        assert_eq!(
            digest,
            k.sources_blake3,
            "kernel `{}`: its sources ({}) changed since its cubin was built; run kernels/build-cubins.sh",
            k.name,
            k.files
                .iter()
                .map(|f| f.path)
                .collect::<Vec<_>>()
                .join(", ")
        );
    }
}

#[test]
fn every_checked_in_cubin_matches_the_manifest() {
    for k in KERNELS {
        assert!(!k.cubins.is_empty(), "kernel `{}` has no cubin", k.name);
        for c in k.cubins {
            let path = kernels_dir().join(c.arch).join(format!("{}.cubin", k.name));
            let bytes = std::fs::read(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert_eq!(
                blake3::hash(&bytes).to_hex().as_str(),
                c.blake3,
                "{} differs from kernels/manifest.toml; run kernels/build-cubins.sh",
                path.display()
            );
            assert!(
                bytes.starts_with(b"\x7fELF"),
                "{} is not a cubin",
                path.display()
            );
        }
    }
}

#[test]
fn every_source_file_on_disk_belongs_to_a_kernel() {
    let listed: BTreeSet<&str> = KERNELS
        .iter()
        .flat_map(|k| k.files.iter().map(|f| f.path))
        .collect();
    let mut unlisted = Vec::new();
    for (dir, ext) in [("src", "cu"), ("include", "cuh")] {
        let Ok(entries) = std::fs::read_dir(kernels_dir().join(dir)) else {
            continue;
        };
        for e in entries.flatten() {
            let name = e.file_name().to_string_lossy().into_owned();
            if name.ends_with(&format!(".{ext}"))
                && !listed.contains(format!("{dir}/{name}").as_str())
            {
                unlisted.push(format!("kernels/{dir}/{name}"));
            }
        }
    }
    assert!(
        unlisted.is_empty(),
        "not in kernels/manifest.toml (add a [[kernel]] or include it, then run kernels/build-cubins.sh): {unlisted:?}"
    );
}

#[test]
fn the_digest_detects_a_one_byte_change() {
    // Guards the test itself: the formula must see edits, renames and moved boundaries.
    let a = kernels::sources_digest([("src/a.cu", &b"x = 1;"[..])]);
    assert_ne!(a, kernels::sources_digest([("src/a.cu", &b"x = 2;"[..])]));
    assert_ne!(a, kernels::sources_digest([("src/b.cu", &b"x = 1;"[..])]));
    assert_ne!(
        kernels::sources_digest([("a", &b"bc"[..]), ("d", &b""[..])]),
        kernels::sources_digest([("a", &b"b"[..]), ("cd", &b""[..])])
    );
}

#[test]
fn every_cubin_was_built_with_its_kernels_hand_written_defines_and_ptxas_options() {
    // build-cubins.sh records the flags it ran nvcc with: the common ones, then `-D` per define,
    // then `-Xptxas` per ptxas option. A hand edit of `defines` or `ptxas` without a rebuild
    // leaves the recorded flags (and the cubin) as they were; this names the kernel to rebuild.
    let mut first_common: Option<Vec<&str>> = None;
    for k in KERNELS {
        let mut inputs: Vec<String> = k.defines.iter().map(|d| format!("-D{d}")).collect();
        for opt in k.ptxas {
            inputs.extend(["-Xptxas".to_owned(), (*opt).to_owned()]);
        }
        for c in k.cubins {
            assert!(
                c.nvcc_flags.len() >= inputs.len()
                    && c.nvcc_flags[c.nvcc_flags.len() - inputs.len()..] == inputs[..],
                "kernel `{}`: its cubin was built with {:?}, not with its manifest's defines {:?} and \
                 ptxas {:?}; run kernels/build-cubins.sh",
                k.name,
                c.nvcc_flags,
                k.defines,
                k.ptxas
            );
            let shared = c.nvcc_flags[..c.nvcc_flags.len() - inputs.len()].to_vec();
            let expected = first_common.get_or_insert_with(|| shared.clone());
            assert_eq!(
                &shared, expected,
                "kernel `{}`: its cubin was built with {:?}, which is not the common flags plus its \
                 manifest's defines {:?} and ptxas {:?}; run kernels/build-cubins.sh",
                k.name, c.nvcc_flags, k.defines, k.ptxas
            );
        }
    }
}
