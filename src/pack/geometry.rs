//! Tensor geometry stored inline: up to [`MAX_RANK`] extents and strides in elements, with the
//! derived facts normalization needs (compactness, addressed span, fp4 storage geometry).
//!
//! Inline storage keeps a variant pack free of per-slot heap allocations. Strides are in elements
//! of the geometry's own unit (storage slots for fp4). Negative extents or strides are never
//! stored: constructors refuse them.

/// Most axes a tensor may have (the backend's `CUDNN_DIM_MAX`).
pub const MAX_RANK: usize = 8;

/// Shape and strides (elements) of one tensor, rank at most [`MAX_RANK`].
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
pub struct Geometry {
    rank: u8,
    dims: [i64; MAX_RANK],
    strides: [i64; MAX_RANK],
}

impl std::fmt::Debug for Geometry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{:?}/{:?}", self.dims(), self.strides())
    }
}

/// Why a shape/stride pair cannot be stored as a [`Geometry`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum GeometryError {
    /// More than [`MAX_RANK`] axes.
    RankTooHigh(usize),
    /// Shape and strides differ in length.
    RankMismatch {
        /// Shape length.
        dims: usize,
        /// Strides length.
        strides: usize,
    },
    /// An extent or stride is negative.
    Negative,
    /// The element count or addressed span overflows i64.
    Overflow,
}

impl std::fmt::Display for GeometryError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GeometryError::RankTooHigh(r) => {
                write!(f, "rank {r} exceeds the maximum of {MAX_RANK} axes")
            }
            GeometryError::RankMismatch { dims, strides } => write!(
                f,
                "shape has {dims} axes but strides have {strides}; they must have the same rank"
            ),
            GeometryError::Negative => write!(f, "extents and strides must be nonnegative"),
            GeometryError::Overflow => {
                write!(f, "element count or addressed span does not fit in 64 bits")
            }
        }
    }
}

impl Geometry {
    /// The rank-0 geometry (a scalar).
    pub const SCALAR: Geometry = Geometry {
        rank: 0,
        dims: [0; MAX_RANK],
        strides: [0; MAX_RANK],
    };

    /// Builds a geometry; `strides == None` means compact row-major.
    pub fn new(dims: &[i64], strides: Option<&[i64]>) -> Result<Geometry, GeometryError> {
        if dims.len() > MAX_RANK {
            return Err(GeometryError::RankTooHigh(dims.len()));
        }
        let mut g = Geometry {
            rank: dims.len() as u8,
            ..Geometry::SCALAR
        };
        g.dims[..dims.len()].copy_from_slice(dims);
        match strides {
            Some(s) => {
                if s.len() != dims.len() {
                    return Err(GeometryError::RankMismatch {
                        dims: dims.len(),
                        strides: s.len(),
                    });
                }
                g.strides[..s.len()].copy_from_slice(s);
            }
            None => g.fill_row_major(),
        }
        if g.dims().iter().chain(g.strides()).any(|&v| v < 0) {
            return Err(GeometryError::Negative);
        }
        g.span_elems().ok_or(GeometryError::Overflow)?;
        g.numel().ok_or(GeometryError::Overflow)?;
        Ok(g)
    }

    /// Compact row-major geometry of `dims`.
    pub fn row_major(dims: &[i64]) -> Result<Geometry, GeometryError> {
        Geometry::new(dims, None)
    }

    fn fill_row_major(&mut self) {
        let mut acc: i64 = 1;
        for i in (0..self.rank as usize).rev() {
            self.strides[i] = acc;
            acc = acc.saturating_mul(self.dims[i].max(1));
        }
    }

    /// Number of axes.
    #[inline]
    pub fn rank(&self) -> usize {
        self.rank as usize
    }

    /// Extents.
    #[inline]
    pub fn dims(&self) -> &[i64] {
        &self.dims[..self.rank as usize]
    }

    /// Strides in elements.
    #[inline]
    pub fn strides(&self) -> &[i64] {
        &self.strides[..self.rank as usize]
    }

    /// Whether shape and strides equal the given ones.
    #[inline]
    pub fn same_as(&self, dims: &[i64], strides: &[i64]) -> bool {
        self.dims() == dims && self.strides() == strides
    }

    /// Element count (`None` on overflow).
    pub fn numel(&self) -> Option<u64> {
        self.dims()
            .iter()
            .try_fold(1u64, |acc, &d| acc.checked_mul(d as u64))
            .filter(|&n| n <= i64::MAX as u64)
    }

    /// Elements addressed from the base: `1 + sum((size-1)*stride)`, 0 for an empty tensor
    /// (`None` on overflow).
    pub fn span_elems(&self) -> Option<u64> {
        if self.dims().contains(&0) {
            return Some(0);
        }
        let mut span: u64 = 1;
        for (&d, &s) in self.dims().iter().zip(self.strides()) {
            span = span.checked_add((d as u64 - 1).checked_mul(s as u64)?)?;
        }
        (span <= i64::MAX as u64).then_some(span)
    }

    /// Row-major compact (axes of extent 1 may carry any stride).
    pub fn is_compact(&self) -> bool {
        let mut expected: i64 = 1;
        for i in (0..self.rank()).rev() {
            let d = self.dims[i];
            if d != 1 && self.strides[i] != expected {
                return false;
            }
            expected = expected.saturating_mul(d);
        }
        true
    }

    /// Dense layout: the innermost axis of extent > 1 has stride 1 (padded or permuted outer
    /// strides pass).
    pub fn is_dense_layout(&self) -> bool {
        match (0..self.rank()).rev().find(|&i| self.dims[i] > 1) {
            Some(i) => self.strides[i] == 1,
            None => true,
        }
    }

    /// Storage geometry of an fp4 tensor (two elements per storage slot, spec 5.6): the first axis
    /// with stride 1, extent > 1 and even is halved, and every stride other than 1 is halved (each
    /// must be even). `Err` carries the rule that is broken.
    pub fn fp4_storage(&self) -> Result<Geometry, &'static str> {
        let odd_stride = |i: usize| self.strides[i] != 1 && self.strides[i] % 2 != 0;
        let Some(axis) = (0..self.rank())
            .find(|&i| self.strides[i] == 1 && self.dims[i] > 1 && self.dims[i] % 2 == 0)
        else {
            return Err(
                "an fp4 tensor packs two elements per storage slot, so its unit-stride extent must be even",
            );
        };
        if (0..self.rank()).any(|i| i != axis && odd_stride(i)) {
            return Err(
                "an fp4 tensor packs two elements per storage slot, so every stride other than 1 must be even",
            );
        }
        let mut g = *self;
        g.dims[axis] /= 2;
        for i in 0..g.rank() {
            if g.strides[i] != 1 {
                g.strides[i] /= 2;
            }
        }
        Ok(g)
    }

    /// Overwrites extents and strides (same rank), used to apply overrides in place.
    pub(crate) fn set_axis(&mut self, axis: usize, dim: i64, stride: i64) {
        self.dims[axis] = dim;
        self.strides[axis] = stride;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compact_span_dense() {
        let g = Geometry::new(&[1, 128, 64], Some(&[8192, 64, 1])).unwrap();
        assert!(g.is_compact());
        assert_eq!(g.span_elems(), Some(8192));
        let pitched = Geometry::new(&[1, 128, 64], Some(&[16384, 128, 1])).unwrap();
        assert!(!pitched.is_compact());
        assert!(pitched.is_dense_layout());
        assert_eq!(pitched.span_elems(), Some(127 * 128 + 64));
        let transposed = Geometry::new(&[1, 64, 128], Some(&[8192, 1, 64])).unwrap();
        assert!(!transposed.is_dense_layout());
        assert_eq!(
            Geometry::row_major(&[2, 0, 3]).unwrap().span_elems(),
            Some(0)
        );
        assert_eq!(Geometry::SCALAR.span_elems(), Some(1));
        assert!(Geometry::SCALAR.is_compact());
    }

    #[test]
    fn refusals() {
        assert_eq!(
            Geometry::new(&[1; 9], None),
            Err(GeometryError::RankTooHigh(9))
        );
        assert!(matches!(
            Geometry::new(&[2, 2], Some(&[1])),
            Err(GeometryError::RankMismatch { .. })
        ));
        assert_eq!(Geometry::new(&[2, -1], None), Err(GeometryError::Negative));
        assert_eq!(
            Geometry::new(&[1 << 40, 1 << 40], None),
            Err(GeometryError::Overflow)
        );
    }

    #[test]
    fn fp4_storage_rules() {
        let g = Geometry::new(&[1, 128, 64], Some(&[8192, 64, 1])).unwrap();
        assert_eq!(
            g.fp4_storage().unwrap(),
            Geometry::new(&[1, 128, 32], Some(&[4096, 32, 1])).unwrap()
        );
        // K-major (unit stride on the middle axis).
        let k = Geometry::new(&[1, 64, 128], Some(&[8192, 1, 64])).unwrap();
        assert_eq!(
            k.fp4_storage().unwrap(),
            Geometry::new(&[1, 32, 128], Some(&[4096, 1, 32])).unwrap()
        );
        // Singleton axis with unit stride keeps it; the packed axis is the first even one.
        let s = Geometry::new(&[1, 4, 6], Some(&[1, 6, 1])).unwrap();
        assert_eq!(
            s.fp4_storage().unwrap(),
            Geometry::new(&[1, 4, 3], Some(&[1, 3, 1])).unwrap()
        );
        let odd = Geometry::new(&[4, 7], None).unwrap();
        assert!(odd.fp4_storage().unwrap_err().contains("must be even"));
        let odd_stride = Geometry::new(&[3, 4], Some(&[5, 1])).unwrap();
        assert!(odd_stride.fp4_storage().is_err());
    }
}
