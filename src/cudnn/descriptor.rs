//! RAII owner of one backend descriptor: create, set attributes, finalize, get attributes,
//! destroy on drop. Works over any [`BackendApi`] (the real library or the recording fake).

use std::ffi::c_void;

use crate::cudnn::api::RawDescriptor;
use crate::cudnn::backend::{
    AttrValue, BackendApi, annotate, attribute_name, descriptor_type_name,
};
use crate::cudnn::consts::*;
use crate::error::{Error, Result};

/// One backend descriptor, destroyed when dropped.
pub struct Descriptor {
    api: &'static dyn BackendApi,
    raw: RawDescriptor,
    ty: u32,
}

// SAFETY: a descriptor is only mutated through `&mut self`; finalized descriptors are read-only
// for cuDNN (plans and variant packs may be used from several threads, as the frontend does).
unsafe impl Send for Descriptor {}
// SAFETY: as above.
unsafe impl Sync for Descriptor {}

impl std::fmt::Debug for Descriptor {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{:p}", descriptor_type_name(self.ty), self.raw)
    }
}

impl Descriptor {
    /// `cudnnBackendCreateDescriptor(ty)`.
    pub fn new(api: &'static dyn BackendApi, ty: u32) -> Result<Descriptor> {
        let raw = api
            .create(ty)
            .map_err(|e| annotate(e, format!("creating {}", descriptor_type_name(ty))))?;
        Ok(Descriptor { api, raw, ty })
    }

    /// The raw `cudnnBackendDescriptor_t`.
    pub fn raw(&self) -> RawDescriptor {
        self.raw
    }

    /// The descriptor type.
    pub fn descriptor_type(&self) -> u32 {
        self.ty
    }

    /// The backend this descriptor lives in.
    pub fn api(&self) -> &'static dyn BackendApi {
        self.api
    }

    /// Sets one attribute.
    pub fn set(&mut self, name: u32, value: AttrValue) -> Result<&mut Self> {
        self.api
            .set(self.raw, name, &value)
            .map_err(|e| annotate(e, format!("setting on {}", descriptor_type_name(self.ty))))?;
        Ok(self)
    }

    /// Sets an INT64 scalar.
    pub fn set_i64(&mut self, name: u32, v: i64) -> Result<&mut Self> {
        self.set(name, AttrValue::Int64(vec![v]))
    }

    /// Sets an enum-typed scalar.
    pub fn set_enum(&mut self, name: u32, attr_type: u32, v: u32) -> Result<&mut Self> {
        self.set(name, AttrValue::Enum(attr_type, v))
    }

    /// Sets a `CUDNN_TYPE_DATA_TYPE` scalar.
    pub fn set_data_type(&mut self, name: u32, dtype: u32) -> Result<&mut Self> {
        self.set_enum(name, CUDNN_TYPE_DATA_TYPE, dtype)
    }

    /// Sets one descriptor-typed attribute.
    pub fn set_desc(&mut self, name: u32, d: &Descriptor) -> Result<&mut Self> {
        self.set_raw_desc(name, d.raw)
    }

    /// Sets a one-descriptor attribute from a raw handle (a sub-descriptor kept alive elsewhere).
    pub fn set_raw_desc(&mut self, name: u32, raw: RawDescriptor) -> Result<&mut Self> {
        self.set(name, AttrValue::Descriptors(vec![raw]))
    }

    /// Sets a descriptor array attribute.
    pub fn set_descs(&mut self, name: u32, ds: &[&Descriptor]) -> Result<&mut Self> {
        self.set(
            name,
            AttrValue::Descriptors(ds.iter().map(|d| d.raw).collect()),
        )
    }

    /// `cudnnBackendFinalize`.
    pub fn finalize(&mut self) -> Result<()> {
        self.api
            .finalize(self.raw)
            .map_err(|e| annotate(e, format!("finalizing {}", descriptor_type_name(self.ty))))
    }

    /// Reads up to `out.len()` elements of `attr_type` (whose C type must be `T`); returns the
    /// count cuDNN reports (may exceed `out.len()` when called with an empty buffer).
    ///
    /// # Safety
    /// `T` must be the C element type of `attr_type`.
    pub unsafe fn get_raw<T>(&self, name: u32, attr_type: u32, out: &mut [T]) -> Result<i64> {
        // SAFETY: `out` holds `out.len()` elements of the caller-guaranteed type.
        unsafe {
            self.api.get(
                self.raw,
                name,
                attr_type,
                out.len() as i64,
                out.as_mut_ptr().cast::<c_void>(),
            )
        }
    }

    /// Reads one INT64.
    pub fn get_i64(&self, name: u32) -> Result<i64> {
        let mut v = [0i64; 1];
        // SAFETY: INT64 is i64.
        let n = unsafe { self.get_raw(name, CUDNN_TYPE_INT64, &mut v) }?;
        if n < 1 {
            return Err(Error::Internal(format!(
                "{} returned no value",
                attribute_name(name)
            )));
        }
        Ok(v[0])
    }

    /// Reads up to `cap` enum-typed values.
    pub fn get_enums(&self, name: u32, attr_type: u32, cap: usize) -> Result<Vec<u32>> {
        let mut v = vec![0u32; cap];
        // SAFETY: every cuDNN enum is a 4-byte C enum.
        let n = unsafe { self.get_raw(name, attr_type, &mut v) }?;
        v.truncate((n.max(0) as usize).min(cap));
        Ok(v)
    }

    /// Reads a descriptor-typed attribute into `count` freshly created descriptors of `ty`
    /// (cuDNN fills caller-created descriptors, e.g. heuristics RESULTS, ENGINE_KNOB_INFO).
    pub fn get_descs(&self, name: u32, ty: u32, count: usize) -> Result<Vec<Descriptor>> {
        let mut out = Vec::with_capacity(count);
        for _ in 0..count {
            out.push(Descriptor::new(self.api, ty)?);
        }
        let mut raws: Vec<RawDescriptor> = out.iter().map(|d| d.raw).collect();
        // SAFETY: BACKEND_DESCRIPTOR elements are descriptor pointers.
        let n = unsafe { self.get_raw(name, CUDNN_TYPE_BACKEND_DESCRIPTOR, &mut raws) }?;
        out.truncate((n.max(0) as usize).min(count));
        Ok(out)
    }

    /// The element count of an attribute (a get with an empty buffer).
    /// cuDNN reports the available count only when the element pointer is NULL (a non-NULL
    /// pointer with zero requested elements reports zero), so this passes NULL, as the
    /// reference frontend does.
    pub fn count(&self, name: u32, attr_type: u32) -> Result<i64> {
        // SAFETY: zero elements requested with a NULL array; nothing is written.
        unsafe {
            self.api
                .get(self.raw, name, attr_type, 0, std::ptr::null_mut())
        }
    }
}

impl Drop for Descriptor {
    fn drop(&mut self) {
        self.api.destroy(self.raw);
    }
}
