//! Tensor maps (`CUtensorMap`) for the Hopper tensor-memory accelerator (TMA).
//!
//! A [`TiledMapSpec`] describes one tiled map: element type, dims and byte strides (innermost
//! first), the box a single copy moves, and the shared-memory swizzle. [`TiledMapSpec::check`]
//! states the driver's rules on the host, so a bad map becomes [`Error::BadParam`] naming the
//! operand and the rule instead of the driver's bare `CUDA_ERROR_INVALID_VALUE`;
//! [`TiledMapSpec::encode`] then calls `cuTensorMapEncodeTiled` (host-only work in the driver: no
//! device access, no synchronisation, no allocation) through [`guarded`]. The map is passed by
//! value inside a kernel's parameter block (`kernels/include/dnnp_tma.cuh` is the device side).

use cudarc::driver::sys;

use super::driver::{check, guarded};
use crate::error::{Error, Result};

/// An encoded tensor map: the driver's opaque 128 bytes, 128-byte aligned as CUDA 13 declares
/// `CUtensorMap` (the device side is `dnnp::TmaDesc`).
#[repr(C, align(128))]
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TensorMap(pub [u64; 16]);

impl TensorMap {
    /// All zeros: a map no kernel may read (the slot of a plan whose kernels read no map).
    pub const ZERO: TensorMap = TensorMap([0; 16]);
}

impl Default for TensorMap {
    fn default() -> Self {
        TensorMap::ZERO
    }
}

/// Element type of a tensor map.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmaDtype {
    /// bfloat16.
    Bf16,
    /// IEEE half.
    F16,
    /// IEEE single.
    F32,
}

impl TmaDtype {
    /// Bytes per element.
    pub fn bytes(self) -> u64 {
        match self {
            TmaDtype::Bf16 | TmaDtype::F16 => 2,
            TmaDtype::F32 => 4,
        }
    }

    fn driver(self) -> sys::CUtensorMapDataType {
        use sys::CUtensorMapDataType as D;
        match self {
            TmaDtype::Bf16 => D::CU_TENSOR_MAP_DATA_TYPE_BFLOAT16,
            TmaDtype::F16 => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT16,
            TmaDtype::F32 => D::CU_TENSOR_MAP_DATA_TYPE_FLOAT32,
        }
    }
}

/// How a box is laid out in shared memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TmaSwizzle {
    /// Row-major, dense: the box's innermost extent is one row.
    None,
    /// The 128-byte swizzle: the 16-byte piece `j` of row `r` sits at piece `j ^ (r % 8)` (rows of
    /// at most 128 bytes; destinations 1024-byte aligned): wgmma's and ldmatrix's conflict-free
    /// layout.
    B128,
    /// The 64-byte swizzle: the 16-byte piece `j` (0 ..= 3) of the 64-byte row `r` sits at piece
    /// `j ^ ((r / 2) % 4)` (rows of at most 64 bytes; destinations 512-byte aligned): the
    /// K-major layout of wgmma's 32-column operands (session 39: the backward token tile's U and
    /// dR quarters).
    B64,
    /// The 32-byte swizzle: the 16-byte piece `j` (0 or 1) of the 32-byte row `r` sits at piece
    /// `j ^ ((r / 4) % 2)` (rows of at most 32 bytes; sources and destinations 256-byte aligned):
    /// stmatrix's conflict-free layout of 16-column tiles (session 36: the forward's o staging).
    B32,
}

impl TmaSwizzle {
    fn driver(self) -> sys::CUtensorMapSwizzle {
        use sys::CUtensorMapSwizzle as S;
        match self {
            TmaSwizzle::None => S::CU_TENSOR_MAP_SWIZZLE_NONE,
            TmaSwizzle::B128 => S::CU_TENSOR_MAP_SWIZZLE_128B,
            TmaSwizzle::B64 => S::CU_TENSOR_MAP_SWIZZLE_64B,
            TmaSwizzle::B32 => S::CU_TENSOR_MAP_SWIZZLE_32B,
        }
    }
}

/// Most dimensions of a [`TiledMapSpec`] (the TMA allows 5; dnnplan's maps use 3).
pub const TMA_MAX_RANK: usize = 3;

/// One tiled tensor map, innermost dimension first; the tensor is dense in its innermost
/// dimension (element stride 1).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TiledMapSpec {
    /// The operand, for messages (e.g. `"gdn forward: q"`).
    pub what: &'static str,
    /// Element type.
    pub dtype: TmaDtype,
    /// Extent of each dimension in elements, innermost first.
    pub dims: [u64; TMA_MAX_RANK],
    /// Byte stride of dimensions 1 .. rank (dimension 0 is dense).
    pub strides: [u64; TMA_MAX_RANK - 1],
    /// Elements one copy moves along each dimension.
    pub boxes: [u32; TMA_MAX_RANK],
    /// The box's shared-memory layout.
    pub swizzle: TmaSwizzle,
}

impl TiledMapSpec {
    /// The driver's rules for a tiled map at `addr`, checked on the host: the address and every
    /// stride 16-byte aligned, strides below 2^40 and at least the previous dimension's extent,
    /// dims in 1 ..= 2^32, boxes in 1 ..= 256 (a box may reach past the tensor: zeros there), the
    /// box's innermost extent a
    /// multiple of 16 bytes (at most 128 bytes under the 128-byte swizzle).
    pub fn check(&self, addr: u64) -> Result<()> {
        let bad = |why: String| Err(Error::bad_param(self.what, why));
        let e = self.dtype.bytes();
        if !addr.is_multiple_of(16) {
            return bad(format!(
                "a tensor map needs a 16-byte aligned address; got {addr:#x}"
            ));
        }
        for (d, &n) in self.dims.iter().enumerate() {
            if n == 0 || n > 1 << 32 {
                return bad(format!(
                    "dimension {d} is {n}; a tensor map needs 1 ..= 2^32"
                ));
            }
        }
        let mut span = self.dims[0] * e;
        for (i, &s) in self.strides.iter().enumerate() {
            if !s.is_multiple_of(16) || s >= 1 << 40 || s < span {
                return bad(format!(
                    "dimension {}'s stride is {s} bytes; a tensor map needs a multiple of 16 below \
                     2^40 and at least {span} (the dimensions inside it)",
                    i + 1
                ));
            }
            span = s * self.dims[i + 1];
        }
        for (d, &b) in self.boxes.iter().enumerate() {
            if b == 0 || b > 256 {
                return bad(format!(
                    "box dimension {d} is {b}; a tensor map needs 1 ..= 256"
                ));
            }
        }
        let row = u64::from(self.boxes[0]) * e;
        let most = match self.swizzle {
            TmaSwizzle::None => None,
            TmaSwizzle::B128 => Some(128),
            TmaSwizzle::B64 => Some(64),
            TmaSwizzle::B32 => Some(32),
        };
        if !row.is_multiple_of(16) || most.is_some_and(|m| row > m) {
            return bad(format!(
                "the box's rows are {row} bytes; a tensor map needs a multiple of 16{}",
                match most {
                    Some(m) => format!(", at most {m} under the {m}-byte swizzle"),
                    None => String::new(),
                }
            ));
        }
        Ok(())
    }

    /// The map of the tensor at device address `addr` ([`check`](Self::check)ed first; zeros
    /// outside the tensor on loads, nothing written there by stores; L2 promotion of 256 bytes).
    pub fn encode(&self, addr: u64) -> Result<TensorMap> {
        self.check(addr)?;
        guarded("cuTensorMapEncodeTiled", || {
            let mut map = sys::CUtensorMap { opaque: [0; 16] };
            let elem = [1u32; TMA_MAX_RANK];
            // SAFETY: every array holds the rank's entries (strides rank − 1), `map` is a
            // writable, 128-byte aligned CUtensorMap; the driver only encodes (no device access).
            let r = unsafe {
                sys::cuTensorMapEncodeTiled(
                    &mut map,
                    self.dtype.driver(),
                    TMA_MAX_RANK as u32,
                    addr as *mut std::ffi::c_void,
                    self.dims.as_ptr(),
                    self.strides.as_ptr(),
                    self.boxes.as_ptr(),
                    elem.as_ptr(),
                    sys::CUtensorMapInterleave::CU_TENSOR_MAP_INTERLEAVE_NONE,
                    self.swizzle.driver(),
                    sys::CUtensorMapL2promotion::CU_TENSOR_MAP_L2_PROMOTION_L2_256B,
                    sys::CUtensorMapFloatOOBfill::CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE,
                )
            };
            check("cuTensorMapEncodeTiled", r)?;
            Ok(TensorMap(map.opaque))
        })
    }
}

/// The last maps a plan encoded and the addresses they were encoded at (`K`: the addresses,
/// `M`: the maps): an execute whose buffers sit where the previous one's did reuses them instead
/// of asking the driver again (each encode costs host time on every execute). Thread-safe: two
/// threads may execute one plan; a thread that finds the slot busy encodes without caching.
#[derive(Debug, Default)]
pub struct EncodedMaps<K, M> {
    last: std::sync::Mutex<Option<(K, M)>>,
}

impl<K: PartialEq + Copy, M: Copy> EncodedMaps<K, M> {
    /// An empty cache.
    pub fn new() -> Self {
        EncodedMaps {
            last: std::sync::Mutex::new(None),
        }
    }

    /// The maps for `key`: the cached ones when `key` is the last one encoded, else `encode()`'s
    /// (remembered when it succeeds). An error is returned as `encode` gave it, nothing cached.
    pub fn get_or_encode(&self, key: K, encode: impl FnOnce() -> Result<M>) -> Result<M> {
        let Ok(mut slot) = self.last.try_lock() else {
            return encode();
        };
        if let Some((k, m)) = slot.as_ref()
            && *k == key
        {
            return Ok(*m);
        }
        let m = encode()?;
        *slot = Some((key, m));
        Ok(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn encoded_maps_are_reused_only_at_the_same_addresses() {
        let cache: EncodedMaps<[u64; 2], u32> = EncodedMaps::new();
        let mut calls = 0;
        let mut enc = |v: u32| {
            calls += 1;
            Ok(v)
        };
        assert_eq!(cache.get_or_encode([1, 2], || enc(7)).ok(), Some(7));
        assert_eq!(cache.get_or_encode([1, 2], || enc(8)).ok(), Some(7));
        assert_eq!(cache.get_or_encode([1, 3], || enc(9)).ok(), Some(9));
        assert_eq!(calls, 2);
        // A failed encode is returned and not cached: the next call at those addresses encodes.
        let err = cache.get_or_encode([4, 4], || Err(Error::bad_param("x", "bad")));
        assert!(err.is_err());
        assert_eq!(cache.get_or_encode([4, 4], || Ok(5)).ok(), Some(5));
    }

    fn q_map() -> TiledMapSpec {
        TiledMapSpec {
            what: "gdn forward: q",
            dtype: TmaDtype::Bf16,
            dims: [128, 16, 8192],
            strides: [256, 16 * 256],
            boxes: [64, 1, 64],
            swizzle: TmaSwizzle::B128,
        }
    }

    #[test]
    fn layout_is_the_drivers() {
        assert_eq!(std::mem::size_of::<TensorMap>(), 128);
        assert_eq!(std::mem::align_of::<TensorMap>(), 128);
        assert_eq!(
            std::mem::size_of::<TensorMap>(),
            std::mem::size_of::<sys::CUtensorMap>()
        );
    }

    #[test]
    fn check_names_the_operand_and_the_rule() {
        assert!(q_map().check(0x1000).is_ok());
        let msg = |m: TiledMapSpec, addr: u64| m.check(addr).unwrap_err().to_string();
        let e = msg(q_map(), 0x1008);
        assert!(
            e.contains("gdn forward: q") && e.contains("16-byte aligned"),
            "{e}"
        );
        let e = msg(
            TiledMapSpec {
                boxes: [128, 1, 64],
                ..q_map()
            },
            0x1000,
        );
        assert!(
            e.contains("256 bytes") && e.contains("128-byte swizzle"),
            "{e}"
        );
        let e = msg(
            TiledMapSpec {
                strides: [200, 3200],
                ..q_map()
            },
            0x1000,
        );
        assert!(e.contains("dimension 1's stride is 200"), "{e}");
        let e = msg(
            TiledMapSpec {
                dims: [128, 16, 0],
                ..q_map()
            },
            0x1000,
        );
        assert!(e.contains("dimension 2 is 0"), "{e}");
        let e = msg(
            TiledMapSpec {
                boxes: [64, 1, 512],
                ..q_map()
            },
            0x1000,
        );
        assert!(e.contains("box dimension 2 is 512"), "{e}");
        // A box may reach past a short tensor (20 tokens, boxes of 64).
        let short = TiledMapSpec {
            dims: [128, 16, 20],
            ..q_map()
        };
        assert!(short.check(0x1000).is_ok());
        // Without the swizzle a 32-byte row is fine; 24 bytes is not.
        let none = TiledMapSpec {
            boxes: [16, 1, 64],
            swizzle: TmaSwizzle::None,
            ..q_map()
        };
        assert!(none.check(0x1000).is_ok());
        let e = msg(
            TiledMapSpec {
                boxes: [12, 1, 64],
                ..none
            },
            0x1000,
        );
        assert!(e.contains("24 bytes"), "{e}");
        // The 32-byte swizzle takes rows of at most 32 bytes (the forward's o box).
        let b32 = TiledMapSpec {
            boxes: [16, 1, 64],
            swizzle: TmaSwizzle::B32,
            ..q_map()
        };
        assert!(b32.check(0x1000).is_ok());
        let e = msg(
            TiledMapSpec {
                boxes: [32, 1, 64],
                ..b32
            },
            0x1000,
        );
        assert!(
            e.contains("64 bytes") && e.contains("32-byte swizzle"),
            "{e}"
        );
    }

    #[test]
    fn encode_without_a_driver_is_unavailable_not_a_panic() {
        if crate::cuda::probe::driver().is_ok() {
            return; // a machine with a driver encodes; the GPU tests cover that
        }
        let e = q_map().encode(0x1000).unwrap_err();
        assert!(matches!(e, Error::CudaUnavailable(_)), "{e}");
    }
}
