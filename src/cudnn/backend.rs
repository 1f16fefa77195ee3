//! The descriptor-level operations of the cuDNN backend API behind a trait, so that lowering and
//! plan code can run against the real library ([`CudnnApi`]) or against [`Recorder`], a fake that
//! records every call (the CPU tests check descriptor sequences with it).
//!
//! Attribute values are typed ([`AttrValue`]); the real implementation maps each variant to its
//! `cudnnBackendAttributeType_t` and element layout (C `bool` for BOOLEAN, 4-byte enums).

use std::ffi::c_void;
use std::sync::Mutex;

use crate::cudnn::api::{CudnnApi, RawDescriptor, RawHandle};
use crate::cudnn::consts::*;
use crate::cudnn::status::CudnnStatus;
use crate::error::{Error, Result};

/// A typed attribute value for `cudnnBackendSetAttribute`.
#[derive(Clone, Debug, PartialEq)]
pub enum AttrValue {
    /// `CUDNN_TYPE_INT64` elements.
    Int64(Vec<i64>),
    /// `CUDNN_TYPE_INT32` elements.
    Int32(Vec<i32>),
    /// `CUDNN_TYPE_FLOAT` elements.
    Float(Vec<f32>),
    /// `CUDNN_TYPE_DOUBLE` elements.
    Double(Vec<f64>),
    /// `CUDNN_TYPE_BOOLEAN` (C `bool`).
    Bool(bool),
    /// An enum-typed value: (`cudnnBackendAttributeType_t`, value), e.g.
    /// (`CUDNN_TYPE_DATA_TYPE`, `CUDNN_DATA_HALF`).
    Enum(u32, u32),
    /// `CUDNN_TYPE_BACKEND_DESCRIPTOR` elements (ids within the backend: raw pointers).
    Descriptors(Vec<RawDescriptor>),
    /// `CUDNN_TYPE_VOID_PTR` elements.
    Pointers(Vec<*mut c_void>),
    /// `CUDNN_TYPE_HANDLE`.
    Handle(RawHandle),
}

impl AttrValue {
    /// `(cudnnBackendAttributeType_t, element count, pointer to elements)`; the pointer borrows
    /// `self` (and `scratch` for the C-bool conversion).
    fn raw<'a>(&'a self, scratch: &'a mut [u8; 1]) -> (u32, i64, *const c_void) {
        fn p<T>(v: &[T]) -> *const c_void {
            v.as_ptr().cast()
        }
        match self {
            AttrValue::Int64(v) => (CUDNN_TYPE_INT64, v.len() as i64, p(v)),
            AttrValue::Int32(v) => (CUDNN_TYPE_INT32, v.len() as i64, p(v)),
            AttrValue::Float(v) => (CUDNN_TYPE_FLOAT, v.len() as i64, p(v)),
            AttrValue::Double(v) => (CUDNN_TYPE_DOUBLE, v.len() as i64, p(v)),
            AttrValue::Bool(b) => {
                scratch[0] = u8::from(*b);
                (CUDNN_TYPE_BOOLEAN, 1, scratch.as_ptr().cast())
            }
            AttrValue::Enum(ty, v) => (*ty, 1, (v as *const u32).cast()),
            AttrValue::Descriptors(v) => (CUDNN_TYPE_BACKEND_DESCRIPTOR, v.len() as i64, p(v)),
            AttrValue::Pointers(v) => (CUDNN_TYPE_VOID_PTR, v.len() as i64, p(v)),
            AttrValue::Handle(h) => (CUDNN_TYPE_HANDLE, 1, (h as *const RawHandle).cast()),
        }
    }
}

/// Descriptor operations of the backend API.
pub trait BackendApi: Send + Sync {
    /// `cudnnBackendCreateDescriptor`.
    fn create(&self, descriptor_type: u32) -> Result<RawDescriptor>;
    /// `cudnnBackendDestroyDescriptor` (errors are ignored: used from `Drop`).
    fn destroy(&self, descriptor: RawDescriptor);
    /// `cudnnBackendSetAttribute`.
    fn set(&self, descriptor: RawDescriptor, name: u32, value: &AttrValue) -> Result<()>;
    /// `cudnnBackendFinalize`.
    fn finalize(&self, descriptor: RawDescriptor) -> Result<()>;
    /// `cudnnBackendGetAttribute`: up to `requested` elements of `attr_type` into `out`
    /// (which must hold `requested` elements of that type); returns the element count cuDNN
    /// reports.
    ///
    /// # Safety
    /// `out` must be valid for `requested` elements of `attr_type`'s C type.
    unsafe fn get(
        &self,
        descriptor: RawDescriptor,
        name: u32,
        attr_type: u32,
        requested: i64,
        out: *mut c_void,
    ) -> Result<i64>;
    /// The `CudnnApi` when this is the real library (plans execute only there).
    fn real(&self) -> Option<&CudnnApi> {
        None
    }
}

// Descriptor pointers reach these methods only from `Descriptor`, which owns them (created by
// `create`, destroyed once on drop); cuDNN validates them itself.
#[allow(clippy::not_unsafe_ptr_arg_deref)]
impl BackendApi for CudnnApi {
    fn create(&self, descriptor_type: u32) -> Result<RawDescriptor> {
        let mut d: RawDescriptor = std::ptr::null_mut();
        // SAFETY: writes one descriptor pointer.
        let st = unsafe { (self.backend_create_descriptor)(descriptor_type, &mut d) };
        self.check("cudnnBackendCreateDescriptor", st)?;
        Ok(d)
    }

    fn destroy(&self, descriptor: RawDescriptor) {
        // SAFETY: `descriptor` came from `create` and is destroyed once (RAII owner).
        let _ = unsafe { (self.backend_destroy_descriptor)(descriptor) };
    }

    fn set(&self, descriptor: RawDescriptor, name: u32, value: &AttrValue) -> Result<()> {
        let mut scratch = [0u8; 1];
        let (ty, n, ptr) = value.raw(&mut scratch);
        // SAFETY: `ptr` points to `n` elements of type `ty`, alive for the call.
        let st = unsafe { (self.backend_set_attribute)(descriptor, name, ty, n, ptr) };
        self.check("cudnnBackendSetAttribute", st)
            .map_err(|e| annotate(e, format!("attribute {} ({name})", attribute_name(name))))
    }

    fn finalize(&self, descriptor: RawDescriptor) -> Result<()> {
        // SAFETY: valid descriptor.
        let st = unsafe { (self.backend_finalize)(descriptor) };
        self.check("cudnnBackendFinalize", st)
    }

    unsafe fn get(
        &self,
        descriptor: RawDescriptor,
        name: u32,
        attr_type: u32,
        requested: i64,
        out: *mut c_void,
    ) -> Result<i64> {
        let mut count = 0i64;
        // SAFETY: the caller guarantees `out` holds `requested` elements.
        let st = unsafe {
            (self.backend_get_attribute)(descriptor, name, attr_type, requested, &mut count, out)
        };
        self.check("cudnnBackendGetAttribute", st)
            .map_err(|e| annotate(e, format!("attribute {} ({name})", attribute_name(name))))?;
        Ok(count)
    }

    fn real(&self) -> Option<&CudnnApi> {
        Some(self)
    }
}

/// Prefixes the message of an [`Error::Cudnn`] with context.
pub fn annotate(e: Error, context: String) -> Error {
    match e {
        Error::Cudnn {
            call,
            status,
            message,
        } => Error::Cudnn {
            call,
            status,
            message: format!("{context}: {message}"),
        },
        other => other,
    }
}

/// The C name of an attribute (`CUDNN_ATTR_...`), or `?` when unknown to this build.
pub fn attribute_name(name: u32) -> &'static str {
    ATTRIBUTE_NAME
        .iter()
        .find(|(_, v)| *v == name)
        .map(|(n, _)| *n)
        .unwrap_or("?")
}

/// The C name of a descriptor type (`CUDNN_BACKEND_..._DESCRIPTOR`), or `?`.
pub fn descriptor_type_name(ty: u32) -> &'static str {
    DESCRIPTOR_TYPE
        .iter()
        .find(|(_, v)| *v == ty)
        .map(|(n, _)| *n)
        .unwrap_or("?")
}

/// One recorded call of the fake backend.
#[derive(Clone, Debug, PartialEq)]
pub enum Recorded {
    /// A descriptor was created: (descriptor id, descriptor type).
    Create(usize, u32),
    /// An attribute was set: (descriptor id, attribute name, value with descriptor pointers
    /// replaced by ids).
    Set(usize, u32, AttrValue),
    /// A descriptor was finalized.
    Finalize(usize),
    /// A descriptor was destroyed.
    Destroy(usize),
    /// An attribute was read: (descriptor id, attribute name, requested count, NULL array?).
    Get(usize, u32, i64, bool),
}

/// A fake backend that records every call; descriptor "pointers" are ids `1, 2, 3, ...` in
/// creation order. Finalizing descriptors of a type listed in `reject_finalize` fails with
/// `CUDNN_STATUS_NOT_SUPPORTED`; `get` fails (there is no engine behind the fake) unless the
/// recorder was made [`Recorder::with_heuristics`], which answers heuristics reads from a script.
#[derive(Default)]
pub struct Recorder {
    log: Mutex<Vec<Recorded>>,
    types: Mutex<Vec<u32>>,
    /// Descriptor types whose finalize fails with NOT_SUPPORTED.
    pub reject_finalize: Vec<u32>,
    /// Scripted heuristics answers (see [`Recorder::with_heuristics`]); `None` = every get fails.
    script: Option<HeuristicsScript>,
    /// What the script filled into caller-created descriptors, by fake id.
    filled: Mutex<std::collections::HashMap<usize, Filled>>,
}

/// The engine configs a scripted [`Recorder`] returns per backend heuristic mode, and the
/// operation graph's engine count.
#[derive(Clone, Debug, Default)]
pub struct HeuristicsScript {
    /// `(cudnnBackendHeurMode_t, configs)`, configs in rank order.
    pub per_mode: Vec<(u32, Vec<ScriptedConfig>)>,
    /// `CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT`.
    pub engine_count: i64,
}

/// `(engine_id, raw knobs)` of one scripted engine config.
pub type ScriptedConfig = (i64, Vec<(u32, i64)>);

/// A value the scripted recorder put into a caller-created descriptor.
#[derive(Clone, Debug)]
enum Filled {
    Config(i64, Vec<(u32, i64)>),
    Engine(i64),
    Knob(u32, i64),
}

// SAFETY: the fake never dereferences its fake pointers; state is behind mutexes.
unsafe impl Send for Recorder {}
// SAFETY: as above.
unsafe impl Sync for Recorder {}

impl Recorder {
    /// A recorder whose finalize fails with NOT_SUPPORTED for these descriptor types.
    pub fn rejecting(types: Vec<u32>) -> Recorder {
        Recorder {
            reject_finalize: types,
            ..Recorder::default()
        }
    }

    /// A recorder that also answers heuristics queries from `script`: ENGINEHEUR results (count
    /// with a NULL array, then the configs), each config's ENGINE and global index, its knob
    /// choices, and the operation graph's engine count. Other reads fail as usual.
    pub fn with_heuristics(script: HeuristicsScript) -> Recorder {
        Recorder {
            script: Some(script),
            ..Recorder::default()
        }
    }

    /// The last value set for `name` on fake descriptor `id`.
    fn last_set(&self, id: usize, name: u32) -> Option<AttrValue> {
        let log = self.log.lock().ok()?;
        log.iter().rev().find_map(|c| match c {
            Recorded::Set(d, n, v) if *d == id && *n == name => Some(v.clone()),
            _ => None,
        })
    }

    /// The scripted answer of a get, `None` when the script has none.
    ///
    /// # Safety
    /// As [`BackendApi::get`].
    unsafe fn scripted_get(
        &self,
        id: usize,
        name: u32,
        requested: i64,
        out: *mut c_void,
    ) -> Option<i64> {
        let script = self.script.as_ref()?;
        let mut filled = self.filled.lock().ok()?;
        let fill_descs =
            |filled: &mut std::collections::HashMap<usize, Filled>, values: Vec<Filled>| -> i64 {
                if out.is_null() {
                    return values.len() as i64;
                }
                let n = values.len().min(requested.max(0) as usize);
                for (i, v) in values.into_iter().take(n).enumerate() {
                    // SAFETY: the caller gave `requested` descriptor slots.
                    let slot = unsafe { *out.cast::<RawDescriptor>().add(i) };
                    filled.insert(id_of(slot), v);
                }
                n as i64
            };
        match name {
            CUDNN_ATTR_ENGINEHEUR_RESULTS => {
                let mode = match self.last_set(id, CUDNN_ATTR_ENGINEHEUR_MODE)? {
                    AttrValue::Enum(_, m) => m,
                    _ => return None,
                };
                let list = script
                    .per_mode
                    .iter()
                    .find(|(m, _)| *m == mode)
                    .map(|(_, l)| l.clone())
                    .unwrap_or_default();
                let values = list
                    .into_iter()
                    .map(|(e, k)| Filled::Config(e, k))
                    .collect();
                Some(fill_descs(&mut filled, values))
            }
            CUDNN_ATTR_ENGINECFG_ENGINE => match filled.get(&id)?.clone() {
                Filled::Config(e, _) => Some(fill_descs(&mut filled, vec![Filled::Engine(e)])),
                _ => None,
            },
            CUDNN_ATTR_ENGINECFG_KNOB_CHOICES => match filled.get(&id)?.clone() {
                Filled::Config(_, knobs) => {
                    let values = knobs.into_iter().map(|(t, v)| Filled::Knob(t, v)).collect();
                    Some(fill_descs(&mut filled, values))
                }
                _ => None,
            },
            CUDNN_ATTR_ENGINE_GLOBAL_INDEX => match filled.get(&id)? {
                // SAFETY: an INT64 slot.
                Filled::Engine(e) if !out.is_null() => unsafe {
                    *out.cast::<i64>() = *e;
                    Some(1)
                },
                _ => None,
            },
            CUDNN_ATTR_KNOB_CHOICE_KNOB_TYPE => match filled.get(&id)? {
                // SAFETY: a 4-byte enum slot.
                Filled::Knob(t, _) if !out.is_null() => unsafe {
                    *out.cast::<u32>() = *t;
                    Some(1)
                },
                _ => None,
            },
            CUDNN_ATTR_KNOB_CHOICE_KNOB_VALUE => match filled.get(&id)? {
                // SAFETY: an INT64 slot.
                Filled::Knob(_, v) if !out.is_null() => unsafe {
                    *out.cast::<i64>() = *v;
                    Some(1)
                },
                _ => None,
            },
            CUDNN_ATTR_OPERATIONGRAPH_ENGINE_GLOBAL_COUNT if !out.is_null() => {
                // SAFETY: an INT64 slot.
                unsafe { *out.cast::<i64>() = script.engine_count };
                Some(1)
            }
            _ => None,
        }
    }

    /// A copy of the calls recorded so far.
    pub fn calls(&self) -> Vec<Recorded> {
        self.log.lock().map(|l| l.clone()).unwrap_or_default()
    }

    /// The descriptor type of a fake descriptor id.
    pub fn type_of(&self, id: usize) -> Option<u32> {
        self.types
            .lock()
            .ok()
            .and_then(|t| t.get(id.wrapping_sub(1)).copied())
    }

    fn push(&self, r: Recorded) {
        if let Ok(mut l) = self.log.lock() {
            l.push(r);
        }
    }
}

fn id_of(d: RawDescriptor) -> usize {
    d as usize
}

impl BackendApi for Recorder {
    fn create(&self, descriptor_type: u32) -> Result<RawDescriptor> {
        let id = {
            let mut t = self
                .types
                .lock()
                .map_err(|_| Error::Internal("recorder poisoned".into()))?;
            t.push(descriptor_type);
            t.len()
        };
        self.push(Recorded::Create(id, descriptor_type));
        Ok(id as RawDescriptor)
    }

    fn destroy(&self, descriptor: RawDescriptor) {
        self.push(Recorded::Destroy(id_of(descriptor)));
    }

    fn set(&self, descriptor: RawDescriptor, name: u32, value: &AttrValue) -> Result<()> {
        self.push(Recorded::Set(id_of(descriptor), name, value.clone()));
        Ok(())
    }

    fn finalize(&self, descriptor: RawDescriptor) -> Result<()> {
        let id = id_of(descriptor);
        self.push(Recorded::Finalize(id));
        if self
            .type_of(id)
            .is_some_and(|t| self.reject_finalize.contains(&t))
        {
            return Err(crate::cudnn::status::cudnn_error(
                "cudnnBackendFinalize",
                CudnnStatus(CUDNN_STATUS_NOT_SUPPORTED),
                None,
                None,
            ));
        }
        Ok(())
    }

    unsafe fn get(
        &self,
        descriptor: RawDescriptor,
        name: u32,
        _attr_type: u32,
        requested: i64,
        out: *mut c_void,
    ) -> Result<i64> {
        self.push(Recorded::Get(
            id_of(descriptor),
            name,
            requested,
            out.is_null(),
        ));
        // SAFETY: forwarded contract.
        if let Some(n) = unsafe { self.scripted_get(id_of(descriptor), name, requested, out) } {
            return Ok(n);
        }
        Err(Error::NotSupported(format!(
            "the recording backend has no value for {}",
            attribute_name(name)
        )))
    }
}
