//! The forward's tensor maps (session 36): the one description of the maps of q, k, v and o that
//! the forward's TMA kernels read (`gdn::GdnIoMaps` in `kernels/include/gdn_fwd_fast.cuh`).
//!
//! A plan encodes them at execute only when one of its kernels reads them
//! ([`IO_MAP_READERS`], by entry name); every other plan passes zeros. Each map is the dense
//! `[T, heads, D]` tensor of its port as dims `{D, heads, T}`:
//! - q, k, v: box [`QKV_BOX`] (64 elements = 128 bytes of one head's row x 64 tokens) under the
//!   128-byte swizzle, exactly `slim_wg_elem`'s shared-memory layout of a 64-column atom;
//! - o: box [`O_BOX`] (16 value columns of one head x 64 tokens) under the 32-byte swizzle (the
//!   `w4gxt` scan's staged O tile, `slim_store_o_tma`: conflict-free stmatrix rows).
//!
//! Rows past the tensor's end read zeros; rows past a sequence's end inside the tensor are the
//! next sequence's tokens (a kernel serving a partial chunk clears or skips them itself).
//!
//! The one-pass forward's TQ forms (session 71, `Fused16TmaParams::qk_maps` of
//! `kernels/include/gdn_fwd_fused16.cuh`) read q and k as the same dense tensors with box
//! [`FUSED16_QK_BOX`] (a chunk of 16 tokens) under the 128-byte swizzle
//! ([`FwdIoMapShape::fused16_qk_specs`]).

use crate::cuda::tma::{TensorMap, TiledMapSpec, TmaDtype, TmaSwizzle};
use crate::error::{Error, Result};
use crate::ir::DataType;

use super::analyzer::GdnFacts;
use super::params::{GdnIoMaps, TwRingMaps};

/// A set of the forward's maps (bits in [`GdnIoMaps`]' order: q, k, v, o).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IoMapSet(u8);

impl IoMapSet {
    /// No map.
    pub const NONE: IoMapSet = IoMapSet(0);
    /// The map of q.
    pub const Q: IoMapSet = IoMapSet(1);
    /// The map of k.
    pub const K: IoMapSet = IoMapSet(2);
    /// The map of v.
    pub const V: IoMapSet = IoMapSet(4);
    /// The map of o.
    pub const O: IoMapSet = IoMapSet(8);
    /// q and k.
    pub const QK: IoMapSet = IoMapSet(3);
    /// Every map.
    pub const ALL: IoMapSet = IoMapSet(15);

    /// The maps in either set.
    pub const fn union(self, other: IoMapSet) -> IoMapSet {
        IoMapSet(self.0 | other.0)
    }

    /// Whether every map of `other` is in this set.
    pub const fn contains(self, other: IoMapSet) -> bool {
        self.0 & other.0 == other.0
    }

    /// Whether the set holds no map.
    pub const fn is_empty(self) -> bool {
        self.0 == 0
    }
}

/// Entry-name suffixes of the forward kernels that read maps, with the maps each reads: a plan
/// running any of them encodes those maps at execute (the others stay zero). Session 36 (tp36):
/// the slim prep's `wgt` / `wgtl` read q and k ([`super::engine::SLIM_PREP_WGT`],
/// [`super::engine::SLIM_PREP_WGTL`]).
/// Session 36 (tm36): the uncut 4-warp slim scans `_w4gxt` (O stored by the o map), `_w4gxu`
/// (the same, q and k loaded by their maps too) and `_w4gxv` (w4gxt with the store ahead of its
/// step's tail copies).
pub const IO_MAP_READERS: &[(&str, IoMapSet)] = &[
    ("_wgt", IoMapSet::QK),
    ("_wgtl", IoMapSet::QK),
    ("_wgts", IoMapSet::QK),
    ("_wgtls", IoMapSet::QK),
    ("_w4gxt", IoMapSet::O),
    ("_w4gxu", IoMapSet::QK.union(IoMapSet::O)),
    ("_w4gxv", IoMapSet::O),
];

/// The maps the forward entry `entry` reads ([`IO_MAP_READERS`]; none when it is not listed).
pub fn io_maps_read(entry: &str) -> IoMapSet {
    IO_MAP_READERS
        .iter()
        .filter(|(s, _)| entry.ends_with(s))
        .fold(IoMapSet::NONE, |a, &(_, m)| a.union(m))
}

/// Whether the forward entry `entry` reads any map ([`IO_MAP_READERS`]).
pub fn reads_io_maps(entry: &str) -> bool {
    !io_maps_read(entry).is_empty()
}

/// The tensor-map element type of `f`'s io dtype (bf16 or fp16; `what` names the maps in the
/// error for any other).
fn io_dtype(f: &GdnFacts, what: &str) -> Result<TmaDtype> {
    match f.io {
        DataType::Bfloat16 => Ok(TmaDtype::Bf16),
        DataType::Half => Ok(TmaDtype::F16),
        other => Err(Error::NotSupported(format!(
            "{}: {what} serve bf16 and fp16 io, not {other:?}",
            f.node
        ))),
    }
}

/// The map of a dense `[outer][mid][d]` tensor of `dtype` (innermost first: `{d, mid, outer}`)
/// with box `boxes` and `swizzle`.
fn dense_spec(
    what: &'static str,
    dtype: TmaDtype,
    [d, mid, outer]: [u64; 3],
    boxes: [u32; 3],
    swizzle: TmaSwizzle,
) -> TiledMapSpec {
    let row = d * dtype.bytes();
    TiledMapSpec {
        what,
        dtype,
        dims: [d, mid, outer],
        strides: [row, row * mid],
        boxes,
        swizzle,
    }
}

/// The box of q, k and v: 64 elements (one 128-byte swizzle row) x 1 head x 64 tokens (a chunk).
pub const QKV_BOX: [u32; 3] = [64, 1, 64];

/// The box of the one pass's q, k maps: 64 elements (one 128-byte swizzle row) x 1 head x 16
/// tokens (the one pass's chunk), the swizzled stage's layout of a channel half
/// (`fused16_issue`'s TQ branch in `kernels/include/gdn_fwd_fused16.cuh`).
pub const FUSED16_QK_BOX: [u32; 3] = [64, 1, 16];

/// The box of o: 16 value columns (one warp's rows of the output scan) x 1 head x 64 tokens, under
/// [`O_SWIZZLE`].
pub const O_BOX: [u32; 3] = [16, 1, 64];

/// The o map's shared-memory layout: the 32-byte swizzle (token r's 8-value half j at 16-byte piece
/// `j ^ ((r / 4) % 2)` of its 32-byte row), `slim_store_o_tma`'s staging in
/// `kernels/include/gdn_fwd_slim.cuh`.
pub const O_SWIZZLE: TmaSwizzle = TmaSwizzle::B32;

/// What the maps of one forward plan depend on (the rest is the call's addresses).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FwdIoMapShape {
    dtype: TmaDtype,
    tokens: u64,
    /// `H`, `HK`, `HV`, `HO`.
    heads: (u64, u64, u64, u64),
    k: u64,
    v: u64,
    /// The maps [`FwdIoMapShape::encode`] encodes ([`IoMapSet::ALL`] unless
    /// [`FwdIoMapShape::reading`] narrows it).
    read: IoMapSet,
}

impl FwdIoMapShape {
    /// The maps' shape for the forward `f` (io bf16 or fp16).
    pub fn new(f: &GdnFacts) -> Result<Self> {
        let u = |x: i64| x.max(0) as u64;
        let (h, hk, hv, ho) = f.heads;
        Ok(FwdIoMapShape {
            dtype: io_dtype(f, "the forward's tensor maps")?,
            tokens: u(f.total_tokens),
            heads: (u(h), u(hk), u(hv), u(ho)),
            k: u(f.k),
            v: u(f.v),
            read: IoMapSet::ALL,
        })
    }

    /// The same shape encoding only the maps in `read` (the plan's readers read no other; each
    /// encode costs host time at every execute).
    pub fn reading(self, read: IoMapSet) -> Self {
        FwdIoMapShape { read, ..self }
    }

    /// The map of a dense `[T, heads, d]` tensor with box `boxes` and `swizzle`.
    fn spec(
        &self,
        what: &'static str,
        heads: u64,
        d: u64,
        boxes: [u32; 3],
        swizzle: TmaSwizzle,
    ) -> TiledMapSpec {
        dense_spec(what, self.dtype, [d, heads, self.tokens], boxes, swizzle)
    }

    /// The maps of q, k, v and o, in [`GdnIoMaps`]' order.
    pub fn specs(&self) -> [TiledMapSpec; 4] {
        let (h, hk, hv, ho) = self.heads;
        let b128 = TmaSwizzle::B128;
        [
            self.spec("gdn forward: q", h, self.k, QKV_BOX, b128),
            self.spec("gdn forward: k", hk, self.k, QKV_BOX, b128),
            self.spec("gdn forward: v", hv, self.v, QKV_BOX, b128),
            self.spec("gdn forward: o", ho, self.v, O_BOX, O_SWIZZLE),
        ]
    }

    /// The one pass's maps of q and k (the TQ forms), in `Fused16TmaParams::qk_maps`' order: the same
    /// tensors as [`FwdIoMapShape::specs`]' q, k with box [`FUSED16_QK_BOX`].
    pub fn fused16_qk_specs(&self) -> [TiledMapSpec; 2] {
        let (h, hk, _, _) = self.heads;
        let b128 = TmaSwizzle::B128;
        [
            self.spec("gdn forward: q", h, self.k, FUSED16_QK_BOX, b128),
            self.spec("gdn forward: k", hk, self.k, FUSED16_QK_BOX, b128),
        ]
    }

    /// The one pass's maps of one call with q at `q` and k at `k` ([`Self::fused16_qk_specs`]);
    /// zeros when there are no tokens (no chunk runs).
    pub fn encode_fused16_qk(&self, q: u64, k: u64) -> Result<[TensorMap; 2]> {
        if self.tokens == 0 {
            return Ok([TensorMap::ZERO; 2]);
        }
        let [sq, sk] = self.fused16_qk_specs();
        Ok([sq.encode(q)?, sk.encode(k)?])
    }

    /// The maps of one call at the addresses `q`, `k`, `v`, `o`, those this shape reads
    /// ([`FwdIoMapShape::reading`]; the others zero); zeros when there are no tokens (no chunk
    /// runs, and a map needs a non-empty tensor).
    pub fn encode(&self, q: u64, k: u64, v: u64, o: u64) -> Result<GdnIoMaps> {
        let mut maps = GdnIoMaps::default();
        if self.tokens == 0 {
            return Ok(maps);
        }
        let [sq, sk, sv, so] = self.specs();
        for (set, spec, addr, map) in [
            (IoMapSet::Q, sq, q, &mut maps.q),
            (IoMapSet::K, sk, k, &mut maps.k),
            (IoMapSet::V, sv, v, &mut maps.v),
            (IoMapSet::O, so, o, &mut maps.o),
        ] {
            if self.read.contains(set) {
                *map = spec.encode(addr)?;
            }
        }
        Ok(maps)
    }
}

/// The box of the ring's states `S`, `dS'`: 64 keys (one 128-byte swizzle row) x 32 value rows
/// (a value quarter's rows of one key half), `tw_sq_off`'s layout in
/// `kernels/include/gdn_bwd_tw.cuh`.
pub const RING_STATE_BOX: [u32; 3] = [64, 32, 1];

/// The box of the ring's `U`, `dR` tiles: 32 values (one 64-byte swizzle row) x 64 tokens (a value
/// quarter of a chunk), `tw_uq_off`'s layout.
pub const RING_TILE_BOX: [u32; 3] = [32, 64, 1];

/// Whether the ring maps of `units` chunk-slot units (chunk slots times output heads) at V = `v`
/// give every row a 32-bit box coordinate (the kernel's `int` rows and the hardware's signed
/// 32-bit coordinates): the states' `units · V` and the tiles' `units · 64` rows at most 2^31.
/// Beyond, the backward runs `tw3` in `tw7`'s place (`RING_MAPS_FALLBACK` of backward.rs).
pub fn ring_rows_addressable(units: u64, v: u64) -> bool {
    units.saturating_mul(v.max(64)) <= 1 << 31
}

/// What the backward token tile's ring maps depend on (session 39, `tw7`; `gdn::TwRingMaps`):
/// the io dtype, the chunk slots times the output heads (`units`, one state and one tile each)
/// and K, V. The states `S`, `dS'` are `[units · V][K]` (the workspace's regions, or the caller's
/// checkpoint rows: one per chunk slot at a cadence of 64), the tiles `U`, `dR` `[units · 64][V]`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BwdRingMapShape {
    dtype: TmaDtype,
    units: u64,
    k: u64,
    v: u64,
}

impl BwdRingMapShape {
    /// The ring maps' shape for the backward `f` with `slots` chunk slots (io bf16 or fp16).
    pub fn new(f: &GdnFacts, slots: u64) -> Result<Self> {
        let u = |x: i64| x.max(0) as u64;
        Ok(BwdRingMapShape {
            dtype: io_dtype(f, "the token tile's tensor maps")?,
            units: slots * u(f.heads.3),
            k: u(f.k),
            v: u(f.v),
        })
    }

    /// The map of a dense `[rows][d]` region with box `boxes` and `swizzle`.
    fn spec(
        &self,
        what: &'static str,
        rows: u64,
        d: u64,
        boxes: [u32; 3],
        swizzle: TmaSwizzle,
    ) -> TiledMapSpec {
        dense_spec(what, self.dtype, [d, rows, 1], boxes, swizzle)
    }

    /// The maps of `S`, `dS'`, `U` and `dR`, in [`TwRingMaps`]' order.
    pub fn specs(&self) -> [TiledMapSpec; 4] {
        let (states, tiles) = (self.units * self.v, self.units * 64);
        let (b128, b64) = (TmaSwizzle::B128, TmaSwizzle::B64);
        [
            self.spec("gdn backward: S", states, self.k, RING_STATE_BOX, b128),
            self.spec("gdn backward: dS'", states, self.k, RING_STATE_BOX, b128),
            self.spec("gdn backward: U", tiles, self.v, RING_TILE_BOX, b64),
            self.spec("gdn backward: dR", tiles, self.v, RING_TILE_BOX, b64),
        ]
    }

    /// The maps of one call at the addresses `s`, `ds`, `u`, `dr`; zeros when there are no chunk
    /// slots (no tile runs, and a map needs a non-empty tensor).
    pub fn encode(&self, s: u64, ds: u64, u: u64, dr: u64) -> Result<TwRingMaps> {
        if self.units == 0 {
            return Ok(TwRingMaps::default());
        }
        let [ss, sds, su, sdr] = self.specs();
        Ok(TwRingMaps {
            s: ss.encode(s)?,
            ds: sds.encode(ds)?,
            u: su.encode(u)?,
            dr: sdr.encode(dr)?,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engines::gdn::analyzer::{GdnOp, test_facts};

    #[test]
    fn maps_describe_the_dense_ports_and_pass_the_drivers_rules() {
        // (4, 8192, 16) bf16, K = V = 128.
        let f = test_facts(GdnOp::Forward, 4, 32768, 16, 128, false);
        let s = FwdIoMapShape::new(&f).expect("shape");
        let [q, k, v, o] = s.specs();
        assert_eq!(q.dims, [128, 16, 32768]);
        assert_eq!(q.strides, [256, 16 * 256]);
        assert_eq!((q.boxes, q.swizzle), (QKV_BOX, TmaSwizzle::B128));
        assert_eq!((k.dims, v.dims), (q.dims, q.dims));
        assert_eq!((o.boxes, o.swizzle), (O_BOX, TmaSwizzle::B32));
        assert_eq!((o.dims, o.strides), ([128, 16, 32768], [256, 16 * 256]));
        for m in [q, k, v, o] {
            m.check(0x10000)
                .unwrap_or_else(|e| panic!("{}: {e}", m.what));
        }
        // A misaligned port names itself.
        let e = o.check(0x10002).unwrap_err().to_string();
        assert!(e.contains("gdn forward: o"), "{e}");
    }

    #[test]
    fn the_one_pass_maps_are_q_and_k_by_chunks_of_16_tokens() {
        // (16, 2048, 32) bf16 and a GQA shape (H = HK = 4 < HV = HO = 16), K = 128.
        let mut gqa = test_facts(GdnOp::Forward, 3, 5000, 16, 128, false);
        gqa.heads = (4, 4, 16, 16);
        for (f, h, hk) in [
            (
                test_facts(GdnOp::Forward, 16, 32768, 32, 128, false),
                32,
                32,
            ),
            (gqa, 4, 4),
        ] {
            let s = FwdIoMapShape::new(&f).expect("shape");
            let [q, k] = s.fused16_qk_specs();
            let t = f.total_tokens as u64;
            assert_eq!((q.dims, q.strides), ([128, h, t], [256, h * 256]));
            assert_eq!((k.dims, k.strides), ([128, hk, t], [256, hk * 256]));
            for m in [q, k] {
                assert_eq!((m.boxes, m.swizzle), (FUSED16_QK_BOX, TmaSwizzle::B128));
                m.check(0x10000)
                    .unwrap_or_else(|e| panic!("{}: {e}", m.what));
            }
            assert!(q.what.ends_with(": q") && k.what.ends_with(": k"));
        }
        // No tokens: zeros, nothing asked of the driver.
        let empty = test_facts(GdnOp::Forward, 2, 0, 16, 128, false);
        let s = FwdIoMapShape::new(&empty).expect("shape");
        assert_eq!(
            s.encode_fused16_qk(0, 0).expect("zeros"),
            [TensorMap::ZERO; 2]
        );
    }

    #[test]
    fn ring_maps_cover_the_states_and_tiles_in_the_tiles_layouts() {
        // (4, 8192, 16) bf16 backward, K = V = 128: 512 + 4 chunk slots x 16 heads.
        let f = test_facts(GdnOp::Backward, 4, 32768, 16, 128, false);
        let slots = 32768 / 64 + 4;
        let shape = BwdRingMapShape::new(&f, slots).expect("shape");
        let [s, ds, u, dr] = shape.specs();
        let units = slots * 16;
        for m in [s, ds] {
            assert_eq!(m.dims, [128, units * 128, 1]);
            assert_eq!(m.strides, [256, units * 128 * 256]);
            // A key half of a quarter's 32 rows, in the 128-byte swizzle (tw_sq_off).
            assert_eq!((m.boxes, m.swizzle), (RING_STATE_BOX, TmaSwizzle::B128));
        }
        for m in [u, dr] {
            assert_eq!(m.dims, [128, units * 64, 1]);
            // A quarter's 32 values of 64 tokens, in the 64-byte swizzle (tw_uq_off).
            assert_eq!((m.boxes, m.swizzle), (RING_TILE_BOX, TmaSwizzle::B64));
        }
        for m in [s, ds, u, dr] {
            m.check(0x20000)
                .unwrap_or_else(|e| panic!("{}: {e}", m.what));
        }
        // A misaligned region names its operand.
        let e = u.check(0x20008).unwrap_err().to_string();
        assert!(e.contains("gdn backward: U"), "{e}");
        assert!(ring_rows_addressable(units, 128));
        // 2^31 state rows at V = 128 are 2^24 chunk-slot units; one more is not addressable.
        assert!(ring_rows_addressable(1 << 24, 128) && !ring_rows_addressable((1 << 24) + 1, 128));
        // At V = 64 the tiles' 64 rows per unit bound it the same way.
        assert!(ring_rows_addressable(1 << 25, 64) && !ring_rows_addressable((1 << 25) + 1, 64));
        // No chunk slots: no map encoded (zeros), nothing asked of the driver.
        let none = BwdRingMapShape::new(&f, 0).expect("shape");
        assert_eq!(
            none.encode(0, 0, 0, 0).expect("zeros"),
            TwRingMaps::default()
        );
    }

    /// Every forward entry that receives the maps (declares `const __grid_constant__
    /// gdn::FwdTmaParams`) is listed, so that its plan encodes them: an entry missing here would
    /// issue its box loads on zero descriptors (an illegal instruction on the device).
    #[test]
    fn every_entry_taking_the_maps_is_listed() {
        let source = include_str!("../../../kernels/src/gdn_fwd.cu");
        let mut seen = 0;
        for e in super::super::mirror::entry_decls(source) {
            // The TMA scans' macro (`_##NAME`: w4gxt, w4gxu, w4gxv) is checked by name below.
            if e.params.contains("FwdTmaParams") && !e.name.ends_with("##NAME") {
                seen += 1;
                assert!(
                    reads_io_maps(&e.name),
                    "{} takes the maps but is not in IO_MAP_READERS",
                    e.name
                );
            }
        }
        // wgt, wgtl, wgts, wgtls (one macro line each; the TMA scans are `_##NAME`).
        assert!(seen >= 4, "only {seen} map-taking entries parsed");
    }

    #[test]
    fn no_kernel_reads_the_maps_unless_listed() {
        assert!(!reads_io_maps("gdn_fwd_slimscan_bf16_k128_w4gxs"));
        assert!(!reads_io_maps("gdn_fwd_slimprep_bf16_k128_wgc"));
        assert_eq!(
            io_maps_read("gdn_fwd_slimscan_bf16_k128_w4gxt"),
            IoMapSet::O
        );
        assert_eq!(
            io_maps_read("gdn_fwd_slimscan_f16_k128_w4gxu"),
            IoMapSet::QK.union(IoMapSet::O)
        );
        for (s, read) in IO_MAP_READERS {
            assert!(reads_io_maps(&format!("gdn_fwd_x_bf16_k128{s}")));
            assert!(!read.is_empty(), "{s}");
        }
        // Session 36 (tp36): the slim prep's box forms read q and k only.
        for e in [
            "gdn_fwd_slimprep_bf16_k128_wgt",
            "gdn_fwd_slimprep_f16_k128_wgtl",
        ] {
            assert_eq!(io_maps_read(e), IoMapSet::QK, "{e}");
        }
        assert_eq!(
            io_maps_read("gdn_fwd_slimprep_bf16_k128_wgl"),
            IoMapSet::NONE
        );
        assert!(IoMapSet::ALL.contains(IoMapSet::QK) && !IoMapSet::QK.contains(IoMapSet::V));
        assert_eq!(IoMapSet::Q.union(IoMapSet::K), IoMapSet::QK);
        assert_eq!(
            IoMapSet::QK.union(IoMapSet::V).union(IoMapSet::O),
            IoMapSet::ALL
        );
    }
}
