//! The host mirror of the GDN kernels' compile-time constants, checked against the kernel
//! sources.
//!
//! Contract: every value the host writes into a kernel's parameter block or derives a launch
//! shape from is defined twice, once in `kernels/include/*.cuh` (`constexpr int NAME = ...;`,
//! an enumerator `NAME = ...,` or `static_assert(sizeof(T) == N, ...)`) and once in
//! [`super::params`]. This module is test-only: its tests read the headers of the bundled
//! `gdn_fwd` and `gdn_bwd` modules (the texts the library embeds for NVRTC, so exactly what
//! the cubins were built from) and fail naming the constant whose two definitions disagree, or
//! one a header no longer defines. It also parses the sources' entry declarations for the other
//! modules' tests ([`entry_decls`]).

/// One `extern "C" __global__` entry of a kernel source, as the source spells it (macro forms
/// included, e.g. `gdn_fwd_slimprep_##TAG##_k128_wgt`): its name, its parameter list and the
/// first statement of its body. The tests of [`super::pdl`] (every entry's first statement) and
/// [`super::tma_maps`] (every entry taking the maps) read the sources through it.
#[cfg(test)]
pub(super) struct EntryDecl {
    /// The entry's name.
    pub name: String,
    /// Its parameter list, parentheses included.
    pub params: String,
    /// The first statement of its body (up to the first `;`).
    pub first: String,
}

/// Every `extern "C" __global__` entry of the kernel source `source`, in order.
#[cfg(test)]
pub(super) fn entry_decls(source: &str) -> Vec<EntryDecl> {
    let mut out = Vec::new();
    for decl in source.split("extern \"C\" __global__").skip(1) {
        let Some(open) = decl.find('{') else { continue };
        let head = &decl[..open];
        let Some(paren) = head.rfind('(') else {
            continue;
        };
        let name = head[..paren]
            .trim_end()
            .rsplit(|c: char| c.is_whitespace() || c == ')' || c == '\\')
            .next()
            .unwrap_or_default()
            .to_owned();
        let first = decl[open + 1..]
            .trim_start_matches(|c: char| c.is_whitespace() || c == '\\')
            .split(';')
            .next()
            .unwrap_or_default()
            .to_owned();
        out.push(EntryDecl {
            name,
            params: head[paren..].to_owned(),
            first,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::super::params::{self, flags};
    use crate::cuda::kernels;
    use std::collections::BTreeMap;

    /// The GDN modules' source files, each once (both modules include the forward's headers).
    fn gdn_sources() -> BTreeMap<&'static str, &'static str> {
        ["gdn_fwd", "gdn_bwd"]
            .iter()
            .flat_map(|m| kernels::find(m).expect("bundled GDN module").files)
            .map(|f| (f.path, f.text))
            .collect()
    }

    /// Every `NAME = value` (a decimal literal or `1 << n`) at the start of a statement or an
    /// enumerator in the GDN modules' sources, with every value it is given.
    fn header_constants() -> BTreeMap<String, Vec<i64>> {
        let mut out: BTreeMap<String, Vec<i64>> = BTreeMap::new();
        for text in gdn_sources().into_values() {
            for line in text.lines() {
                let line = line.trim_start();
                let line = line.strip_prefix("constexpr int ").unwrap_or(line);
                let Some((name, rest)) = line.split_once('=') else {
                    continue;
                };
                let name = name.trim();
                if name.is_empty()
                    || !name
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
                {
                    continue;
                }
                let expr = rest.split([';', ',']).next().unwrap_or_default().trim();
                if let Some(value) = eval(expr) {
                    out.entry(name.to_owned()).or_default().push(value);
                }
            }
        }
        out
    }

    /// `N` or `A << B` with decimal literals; anything else is not a mirrored constant.
    fn eval(expr: &str) -> Option<i64> {
        match expr.split_once("<<") {
            Some((a, b)) => Some(a.trim().parse::<i64>().ok()? << b.trim().parse::<u32>().ok()?),
            None => expr.parse().ok(),
        }
    }

    /// `static_assert(sizeof(T) == N` in the GDN modules' sources: T -> N.
    fn header_struct_sizes() -> BTreeMap<String, usize> {
        let mut out = BTreeMap::new();
        for text in gdn_sources().into_values() {
            for piece in text.split("static_assert(sizeof(").skip(1) {
                let Some((ty, rest)) = piece.split_once(')') else {
                    continue;
                };
                let size = rest.trim_start().strip_prefix("==").and_then(|r| {
                    r.trim_start()
                        .split(|c: char| !c.is_ascii_digit())
                        .next()?
                        .parse()
                        .ok()
                });
                if let Some(size) = size {
                    out.insert(ty.trim().to_owned(), size);
                }
            }
        }
        out
    }

    #[test]
    fn host_constants_equal_the_kernel_headers() {
        let mirrored: [(&str, i64); 50] = [
            ("FLAG_L2NORM", flags::L2NORM.into()),
            ("FLAG_BETA_SIGMOID", flags::BETA_SIGMOID.into()),
            ("FLAG_NEG_EIGVAL", flags::NEG_EIGVAL.into()),
            ("FLAG_SAFE_GATE", flags::SAFE_GATE.into()),
            ("FLAG_LINEAR_GATE", flags::LINEAR_GATE.into()),
            ("FLAG_SEQ_ORDER", flags::SEQ_ORDER.into()),
            ("FLAG_BWD_DIRECT", flags::BWD_DIRECT.into()),
            ("FLAG_BWD_S_IO", flags::BWD_S_IO.into()),
            ("FLAG_PDL_TRIGGER", flags::PDL_TRIGGER.into()),
            (
                "SEQ_ORDER_MAX_SEQS",
                super::super::seq_order::SEQ_ORDER_MAX_SEQS,
            ),
            ("CHUNK", params::CHUNK as i64),
            ("DSCAN_MMA_WARPS", params::DSCAN_MMA_WARPS.into()),
            ("DSCAN_MMA_STAGES", params::DSCAN_MMA_STAGES as i64),
            ("DSCAN_W8_WARPS", params::DSCAN_W8_WARPS.into()),
            ("TOK_THREADS", params::TOK_THREADS.into()),
            ("PARAM_THREADS", params::PARAM_THREADS.into()),
            ("SCAN_WARPS", params::SCAN_WARPS.into()),
            ("SCAN_STAGES", params::SCAN_STAGES as i64),
            ("PREP3_THREADS", params::PREP3_THREADS.into()),
            ("OFFSETS_THREADS", params::OFFSETS_THREADS.into()),
            ("SUM_STAGES", params::SUM_STAGES as i64),
            ("CHAIN_THREADS", params::CHAIN_THREADS.into()),
            ("CHAIN_ROWS", params::CHAIN_ROWS as i64),
            ("CHAIN3_ROWS", params::CHAIN3_ROWS as i64),
            ("SCANX_S1_STAGES", params::SCANX_S1_STAGES as i64),
            ("SCANX_S1_MIN_BLOCKS", params::SCANX_S1_MIN_BLOCKS as i64),
            ("SUM1_MIN_BLOCKS", params::SUM1_MIN_BLOCKS as i64),
            ("PSUM1_MIN_BLOCKS", params::PSUM1_MIN_BLOCKS as i64),
            ("FSCANP1_MIN_BLOCKS", params::FSCANP1_MIN_BLOCKS as i64),
            ("DSUM1_MIN_BLOCKS", params::DSUM1_MIN_BLOCKS as i64),
            ("FSCAN_GX_STAGES", params::FSCAN_GX_STAGES as i64),
            ("FSCAN_GX_STAGE_BYTES", params::FSCAN_GX_STAGE_BYTES as i64),
            (
                "FSCAN_GXSC_STAGE_BYTES",
                params::FSCAN_GXSC_STAGE_BYTES as i64,
            ),
            (
                "FSCAN_GXSL_STAGE_BYTES",
                params::FSCAN_GXSL_STAGE_BYTES as i64,
            ),
            ("PSUM_SL_STAGES", params::PSUM_SL_STAGES as i64),
            ("PSUM_SL_MIN_BLOCKS", params::PSUM_SL_MIN_BLOCKS as i64),
            ("SLIM_SCALARS", params::SLIM_SCALARS as i64),
            ("SLIM_TRI_BLOCKS", params::SLIM_TRI_BLOCKS as i64),
            ("SLIM_W4_STAGES", params::SLIM_W4_STAGES as i64),
            ("SLIM_W8_STAGES", params::SLIM_W8_STAGES as i64),
            ("SLIM_SUM_STAGES", params::SLIM_SUM_STAGES as i64),
            ("SLIM_SUM_MIN_BLOCKS", params::SLIM_SUM_MIN_BLOCKS as i64),
            ("SLIM_W4D_MIN_BLOCKS", params::SLIM_W4D_MIN_BLOCKS as i64),
            ("SLIM_SUM3_STAGES", params::SLIM_SUM3_STAGES as i64),
            ("SLIM_SUM3_MIN_BLOCKS", params::SLIM_SUM3_MIN_BLOCKS as i64),
            ("SLIM_PREP_MIN_BLOCKS", params::SLIM_PREP_MIN_BLOCKS as i64),
            (
                "SLIM_PREP_OV_MIN_BLOCKS",
                params::SLIM_PREP_OV_MIN_BLOCKS as i64,
            ),
            ("SLIM_OV_STAGES", params::SLIM_OV_STAGES as i64),
            ("FWD_OVERLAP_MAX_SEQS", params::FWD_OVERLAP_MAX_SEQS as i64),
            ("PREP6_MIN_BLOCKS", params::PREP6_MIN_BLOCKS as i64),
        ];
        let headers = header_constants();
        for (name, host) in mirrored {
            let defined = headers.get(name).unwrap_or_else(|| {
                panic!("{name}: no definition in the gdn_fwd / gdn_bwd sources")
            });
            assert!(
                defined.iter().all(|&v| v == host),
                "{name}: the kernels define {defined:?}, src/engines/gdn/params.rs {host}"
            );
        }
        // The flag bits are distinct: a new flag cannot silently alias an existing one.
        let bits: Vec<i64> = mirrored[..9].iter().map(|&(_, v)| v).collect();
        for (i, a) in bits.iter().enumerate() {
            assert_eq!(a.count_ones(), 1, "{}: not a single bit", mirrored[i].0);
            for (j, b) in bits.iter().enumerate().skip(i + 1) {
                assert_ne!(a, b, "{} and {} share a bit", mirrored[i].0, mirrored[j].0);
            }
        }
    }

    #[test]
    fn host_param_blocks_have_the_kernel_struct_sizes() {
        let sizes = header_struct_sizes();
        let mirrored = [
            ("FwdParams", std::mem::size_of::<params::FwdParams>()),
            ("BwdParams", std::mem::size_of::<params::BwdParams>()),
            (
                "FwdFastParams",
                std::mem::size_of::<params::FwdFastParams>(),
            ),
            (
                "BwdChainParams",
                std::mem::size_of::<params::BwdChainParams>(),
            ),
            (
                "BwdCkptParams",
                std::mem::size_of::<params::BwdCkptParams>(),
            ),
            ("BwdTmaParams", std::mem::size_of::<params::BwdTmaParams>()),
            ("FwdTmaParams", std::mem::size_of::<params::FwdTmaParams>()),
            ("CuSource", std::mem::size_of::<params::CuSource>()),
            ("StateSource", std::mem::size_of::<params::StateSource>()),
        ];
        for (ty, host) in mirrored {
            let device = sizes.get(ty).unwrap_or_else(|| {
                panic!("{ty}: no static_assert(sizeof({ty}) == ...) in the sources")
            });
            assert_eq!(
                *device, host,
                "{ty}: kernels assert {device} bytes, the host struct has {host}"
            );
        }
    }

    #[test]
    fn the_parser_reads_both_spellings_and_rejects_expressions() {
        assert_eq!(eval("1 << 14"), Some(16384));
        assert_eq!(eval("256"), Some(256));
        assert_eq!(eval("K + 8"), None);
        let headers = header_constants();
        // One enumerator (`FLAG_L2NORM = 1,`) and one constexpr (`constexpr int CHUNK = 64;`).
        assert_eq!(headers.get("FLAG_L2NORM"), Some(&vec![1]));
        assert!(headers.get("CHUNK").is_some_and(|v| v.contains(&64)));
    }
}
