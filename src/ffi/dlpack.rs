//! DLPack records as the C API takes them: our own `repr(C)` declarations with the exact layout of
//! DLPack 1.3's `DLDevice`, `DLDataType`, `DLTensor`, `DLManagedTensor`, `DLPackVersion` and
//! `DLManagedTensorVersioned` (const size/offset asserts below), emitted into `dnnplan.h` under
//! `dnnp_` names so no third-party header is needed. A caller holding real DLPack structs passes
//! them by casting the pointer; the layouts are identical.
//!
//! Execute borrows a `const dnnp_dltensor*` for the duration of the call and never takes
//! ownership (no deleter is ever called). `view_of` reads one record into a
//! [`crate::pack::BufferView`] (rule N1): pointer plus `byte_offset`, shape, strides in elements
//! (NULL = compact row-major, which pre-1.2 producers send), dtype and device.

#![allow(non_camel_case_types)]

use std::ffi::c_void;

use crate::error::{Error, Result};
use crate::pack::{BufferView, Device, DlDtype, MAX_RANK};

/// DLPack major version these records follow.
pub const DNNP_DLPACK_MAJOR_VERSION: u32 = 1;
/// DLPack minor version these records follow.
pub const DNNP_DLPACK_MINOR_VERSION: u32 = 3;

/// `DLDevice`: device type (`kDLCPU` 1, `kDLCUDA` 2, `kDLCUDAHost` 3, `kDLCUDAManaged` 13...) and
/// ordinal.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct dnnp_dldevice {
    /// `DLDeviceType`.
    pub device_type: i32,
    /// Device ordinal.
    pub device_id: i32,
}

/// `DLDataType`: type code, bits per lane, lanes.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct dnnp_dldatatype {
    /// `DLDataTypeCode` (0 int, 1 uint, 2 float, 4 bfloat, 6 bool, 7..17 fp8/fp6/fp4).
    pub code: u8,
    /// Bits per lane.
    pub bits: u8,
    /// Lanes (1 for scalars).
    pub lanes: u16,
}

/// `DLTensor`: a borrowed tensor description.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct dnnp_dltensor {
    /// Base pointer (device address for CUDA tensors).
    pub data: *mut c_void,
    /// Where the data lives.
    pub device: dnnp_dldevice,
    /// Number of axes.
    pub ndim: i32,
    /// Element type.
    pub dtype: dnnp_dldatatype,
    /// `ndim` extents.
    pub shape: *mut i64,
    /// `ndim` strides in elements, or NULL for compact row-major.
    pub strides: *mut i64,
    /// Bytes from `data` to the first element.
    pub byte_offset: u64,
}

/// `DLManagedTensor` (legacy, unversioned).
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct dnnp_dlmanaged_tensor {
    /// The tensor.
    pub dl_tensor: dnnp_dltensor,
    /// Producer context.
    pub manager_ctx: *mut c_void,
    /// Producer's deleter (never called by dnnplan). DLPack types its argument as the managed
    /// tensor itself; `void*` has the same ABI and lets the header declare the record in one step.
    pub deleter: Option<unsafe extern "C" fn(*mut c_void)>,
}

/// `DLPackVersion`.
#[repr(C)]
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct dnnp_dlpack_version {
    /// Major version.
    pub major: u32,
    /// Minor version.
    pub minor: u32,
}

/// `DLManagedTensorVersioned`.
#[repr(C)]
#[derive(Copy, Clone, Debug)]
pub struct dnnp_dlmanaged_tensor_versioned {
    /// Version of the producer.
    pub version: dnnp_dlpack_version,
    /// Producer context.
    pub manager_ctx: *mut c_void,
    /// Producer's deleter (never called by dnnplan; `void*` argument as in
    /// [`dnnp_dlmanaged_tensor`]).
    pub deleter: Option<unsafe extern "C" fn(*mut c_void)>,
    /// `DLPACK_FLAG_BITMASK_*`.
    pub flags: u64,
    /// The tensor.
    pub dl_tensor: dnnp_dltensor,
}

/// `DLPACK_FLAG_BITMASK_READ_ONLY`.
pub const DNNP_DLPACK_FLAG_READ_ONLY: u64 = 1;
/// `DLPACK_FLAG_BITMASK_IS_COPIED`.
pub const DNNP_DLPACK_FLAG_IS_COPIED: u64 = 2;
/// `DLPACK_FLAG_BITMASK_IS_SUBBYTE_TYPE_PADDED`.
pub const DNNP_DLPACK_FLAG_IS_SUBBYTE_TYPE_PADDED: u64 = 4;

// Layout assertions (64-bit, DLPack 1.3; see rust-ffi-and-build.md section 8).
#[cfg(target_pointer_width = "64")]
const _: () = {
    use std::mem::{offset_of, size_of};
    assert!(size_of::<dnnp_dldevice>() == 8);
    assert!(size_of::<dnnp_dldatatype>() == 4);
    assert!(size_of::<dnnp_dltensor>() == 48);
    assert!(offset_of!(dnnp_dltensor, data) == 0);
    assert!(offset_of!(dnnp_dltensor, device) == 8);
    assert!(offset_of!(dnnp_dltensor, ndim) == 16);
    assert!(offset_of!(dnnp_dltensor, dtype) == 20);
    assert!(offset_of!(dnnp_dltensor, shape) == 24);
    assert!(offset_of!(dnnp_dltensor, strides) == 32);
    assert!(offset_of!(dnnp_dltensor, byte_offset) == 40);
    assert!(size_of::<dnnp_dlmanaged_tensor>() == 64);
    assert!(offset_of!(dnnp_dlmanaged_tensor, manager_ctx) == 48);
    assert!(offset_of!(dnnp_dlmanaged_tensor, deleter) == 56);
    assert!(size_of::<dnnp_dlpack_version>() == 8);
    assert!(size_of::<dnnp_dlmanaged_tensor_versioned>() == 80);
    assert!(offset_of!(dnnp_dlmanaged_tensor_versioned, version) == 0);
    assert!(offset_of!(dnnp_dlmanaged_tensor_versioned, manager_ctx) == 8);
    assert!(offset_of!(dnnp_dlmanaged_tensor_versioned, deleter) == 16);
    assert!(offset_of!(dnnp_dlmanaged_tensor_versioned, flags) == 24);
    assert!(offset_of!(dnnp_dlmanaged_tensor_versioned, dl_tensor) == 32);
    // The pack's dtype has DLDataType's layout, so a record's dtype is read without conversion.
    assert!(size_of::<DlDtype>() == size_of::<dnnp_dldatatype>());
};

/// Reads one DLPack record (N1): entry `index` of the caller's `tensors` array, which a refusal
/// names (`tensors[2]: ...`).
///
/// # Safety
/// `t.shape` must point to `t.ndim` values and `t.strides` be NULL or point to `t.ndim` values,
/// both valid for `'a`.
#[inline]
pub(crate) unsafe fn view_of(t: &dnnp_dltensor, index: usize) -> Result<BufferView<'_>> {
    let what = || format!("tensors[{index}]");
    let ndim = t.ndim;
    if ndim < 0 || ndim as usize > MAX_RANK {
        return Err(Error::bad_param(
            what(),
            format!("ndim {ndim} is outside 0..={MAX_RANK}"),
        ));
    }
    let n = ndim as usize;
    let shape: &[i64] = if n == 0 {
        &[]
    } else if t.shape.is_null() {
        return Err(Error::bad_param(what(), "shape is NULL but ndim > 0"));
    } else {
        // SAFETY: `shape` holds `ndim` values per the contract.
        unsafe { std::slice::from_raw_parts(t.shape, n) }
    };
    let strides = if t.strides.is_null() || n == 0 {
        None
    } else {
        // SAFETY: `strides` holds `ndim` values per the contract.
        Some(unsafe { std::slice::from_raw_parts(t.strides.cast_const(), n) })
    };
    let ptr = if t.data.is_null() {
        t.data
    } else {
        t.data.wrapping_byte_add(t.byte_offset as usize)
    };
    Ok(BufferView {
        ptr,
        shape,
        strides,
        dtype: DlDtype::new(t.dtype.code, t.dtype.bits, t.dtype.lanes),
        device: Device {
            device_type: t.device.device_type,
            device_id: t.device.device_id,
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_record() {
        let mut shape = [2i64, 3];
        let t = dnnp_dltensor {
            data: 0x1000 as *mut c_void,
            device: dnnp_dldevice {
                device_type: 2,
                device_id: 1,
            },
            ndim: 2,
            dtype: dnnp_dldatatype {
                code: 4,
                bits: 16,
                lanes: 1,
            },
            shape: shape.as_mut_ptr(),
            strides: std::ptr::null_mut(),
            byte_offset: 64,
        };
        // SAFETY: shape holds two values, strides is NULL.
        let v = unsafe { view_of(&t, 0) }.unwrap();
        assert_eq!(v.ptr as usize, 0x1040);
        assert_eq!(v.shape, &[2, 3]);
        assert!(v.strides.is_none());
        assert_eq!(v.dtype, DlDtype::BF16);
        assert_eq!(v.device, Device::cuda(1));
        let bad = dnnp_dltensor { ndim: 9, ..t };
        // SAFETY: refused before reading.
        let err = unsafe { view_of(&bad, 3) }.unwrap_err().to_string();
        assert!(err.contains("tensors[3]"), "{err}");
        let null_shape = dnnp_dltensor {
            shape: std::ptr::null_mut(),
            ..t
        };
        // SAFETY: refused before reading.
        let err = unsafe { view_of(&null_shape, 0) }.unwrap_err().to_string();
        assert!(
            err.contains("tensors[0]") && err.contains("shape is NULL"),
            "{err}"
        );
    }
}
