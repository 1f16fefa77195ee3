//! Scalar types and constants shared by every C entry point (status codes as integer constants;
//! a unit test pins each to its [`crate::Status`] value).

#![allow(non_camel_case_types)]

/// Status code returned by every fallible dnnplan function (`DNNP_STATUS_*`).
pub type dnnp_status_t = i32;

/// Success.
pub const DNNP_STATUS_SUCCESS: dnnp_status_t = 0;
/// The CUDA driver or NVRTC is not available on this machine.
pub const DNNP_STATUS_CUDA_UNAVAILABLE: dnnp_status_t = 1001;
/// cuDNN is not available (missing, too old or failed to load).
pub const DNNP_STATUS_CUDNN_UNAVAILABLE: dnnp_status_t = 1002;
/// A parameter is out of its domain (including unknown enum values).
pub const DNNP_STATUS_BAD_PARAM: dnnp_status_t = 2000;
/// A required pointer argument was NULL.
pub const DNNP_STATUS_NULL_PARAMETER: dnnp_status_t = 2001;
/// A caller buffer is too small; the needed size was written where asked.
pub const DNNP_STATUS_BUFFER_TOO_SMALL: dnnp_status_t = 2002;
/// The graph failed validation (the message names the node, the port and the rule).
pub const DNNP_STATUS_INVALID_GRAPH: dnnp_status_t = 2003;
/// The call is not allowed in the object's current state.
pub const DNNP_STATUS_INVALID_STATE: dnnp_status_t = 2004;
/// A lookup found nothing.
pub const DNNP_STATUS_NOT_FOUND: dnnp_status_t = 2005;
/// The request is valid but nothing available supports it.
pub const DNNP_STATUS_NOT_SUPPORTED: dnnp_status_t = 3000;
/// A bug in dnnplan.
pub const DNNP_STATUS_INTERNAL: dnnp_status_t = 4000;
/// A panic was caught at the C boundary (a bug in dnnplan).
pub const DNNP_STATUS_INTERNAL_PANIC: dnnp_status_t = 4001;
/// A filesystem operation failed.
pub const DNNP_STATUS_IO_ERROR: dnnp_status_t = 4002;
/// Execution failed or was refused.
pub const DNNP_STATUS_EXECUTION_FAILED: dnnp_status_t = 5000;
/// A CUDA driver call failed.
pub const DNNP_STATUS_CUDA_ERROR: dnnp_status_t = 5001;
/// A cuDNN call failed.
pub const DNNP_STATUS_CUDNN_ERROR: dnnp_status_t = 5002;

#[cfg(test)]
mod tests {
    use super::*;
    use crate::status::Status;

    #[test]
    fn c_constants_equal_status_values() {
        let pairs = [
            (DNNP_STATUS_SUCCESS, Status::Success),
            (DNNP_STATUS_CUDA_UNAVAILABLE, Status::CudaUnavailable),
            (DNNP_STATUS_CUDNN_UNAVAILABLE, Status::CudnnUnavailable),
            (DNNP_STATUS_BAD_PARAM, Status::BadParam),
            (DNNP_STATUS_NULL_PARAMETER, Status::NullParameter),
            (DNNP_STATUS_BUFFER_TOO_SMALL, Status::BufferTooSmall),
            (DNNP_STATUS_INVALID_GRAPH, Status::InvalidGraph),
            (DNNP_STATUS_INVALID_STATE, Status::InvalidState),
            (DNNP_STATUS_NOT_FOUND, Status::NotFound),
            (DNNP_STATUS_NOT_SUPPORTED, Status::NotSupported),
            (DNNP_STATUS_INTERNAL, Status::Internal),
            (DNNP_STATUS_INTERNAL_PANIC, Status::InternalPanic),
            (DNNP_STATUS_IO_ERROR, Status::IoError),
            (DNNP_STATUS_EXECUTION_FAILED, Status::ExecutionFailed),
            (DNNP_STATUS_CUDA_ERROR, Status::CudaError),
            (DNNP_STATUS_CUDNN_ERROR, Status::CudnnError),
        ];
        assert_eq!(pairs.len(), Status::ALL.len());
        for (c, s) in pairs {
            assert_eq!(c, s as i32, "{}", s.name());
        }
    }
}
