//! Status codes returned across the C ABI, grouped by thousands like cuDNN 9's:
//! 0 success, 1xxx not initialized / unavailable, 2xxx bad parameter, 3xxx not supported,
//! 4xxx internal, 5xxx execution failed. The numeric values are ABI: never renumber, only append.

use std::ffi::CStr;

/// A dnnplan status code (the value every C entry point returns).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
#[repr(i32)]
pub enum Status {
    /// Success.
    Success = 0,
    /// The CUDA driver or NVRTC is not available on this machine.
    CudaUnavailable = 1001,
    /// cuDNN is not available (missing, too old or failed to load).
    CudnnUnavailable = 1002,
    /// A parameter is out of its domain.
    BadParam = 2000,
    /// A required pointer argument was NULL.
    NullParameter = 2001,
    /// A caller-provided buffer is too small; the needed size was written where asked.
    BufferTooSmall = 2002,
    /// The graph failed validation.
    InvalidGraph = 2003,
    /// The call is not allowed in the object's current state (frozen graph, second planning...).
    InvalidState = 2004,
    /// A lookup found nothing (unknown uid, port, op, engine id, plan index...).
    NotFound = 2005,
    /// The request is valid but no engine or backend supports it.
    NotSupported = 3000,
    /// A bug in dnnplan.
    Internal = 4000,
    /// A panic was caught at the C boundary (a bug in dnnplan).
    InternalPanic = 4001,
    /// A filesystem operation failed.
    IoError = 4002,
    /// Execution failed or was refused.
    ExecutionFailed = 5000,
    /// A CUDA driver call failed.
    CudaError = 5001,
    /// A cuDNN call failed.
    CudnnError = 5002,
}

impl Status {
    /// Every status, in numeric order.
    pub const ALL: [Status; 16] = [
        Status::Success,
        Status::CudaUnavailable,
        Status::CudnnUnavailable,
        Status::BadParam,
        Status::NullParameter,
        Status::BufferTooSmall,
        Status::InvalidGraph,
        Status::InvalidState,
        Status::NotFound,
        Status::NotSupported,
        Status::Internal,
        Status::InternalPanic,
        Status::IoError,
        Status::ExecutionFailed,
        Status::CudaError,
        Status::CudnnError,
    ];

    /// The C macro name of this status (`DNNP_STATUS_...`).
    pub fn name(self) -> &'static str {
        self.cname().to_str().unwrap_or("DNNP_STATUS_UNKNOWN")
    }

    /// The C macro name as a static C string.
    pub fn cname(self) -> &'static CStr {
        match self {
            Status::Success => c"DNNP_STATUS_SUCCESS",
            Status::CudaUnavailable => c"DNNP_STATUS_CUDA_UNAVAILABLE",
            Status::CudnnUnavailable => c"DNNP_STATUS_CUDNN_UNAVAILABLE",
            Status::BadParam => c"DNNP_STATUS_BAD_PARAM",
            Status::NullParameter => c"DNNP_STATUS_NULL_PARAMETER",
            Status::BufferTooSmall => c"DNNP_STATUS_BUFFER_TOO_SMALL",
            Status::InvalidGraph => c"DNNP_STATUS_INVALID_GRAPH",
            Status::InvalidState => c"DNNP_STATUS_INVALID_STATE",
            Status::NotFound => c"DNNP_STATUS_NOT_FOUND",
            Status::NotSupported => c"DNNP_STATUS_NOT_SUPPORTED",
            Status::Internal => c"DNNP_STATUS_INTERNAL",
            Status::InternalPanic => c"DNNP_STATUS_INTERNAL_PANIC",
            Status::IoError => c"DNNP_STATUS_IO_ERROR",
            Status::ExecutionFailed => c"DNNP_STATUS_EXECUTION_FAILED",
            Status::CudaError => c"DNNP_STATUS_CUDA_ERROR",
            Status::CudnnError => c"DNNP_STATUS_CUDNN_ERROR",
        }
    }

    /// The status with this numeric value, if any.
    pub fn from_code(code: i32) -> Option<Status> {
        Status::ALL.iter().copied().find(|s| *s as i32 == code)
    }
}
