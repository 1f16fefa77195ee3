//! The crate's one error type and its exhaustive mapping onto C status codes.
//!
//! Every fallible function in dnnplan returns [`Result<T>`]. Messages name the node, port, operand,
//! argument or rule involved, because they reach C callers verbatim through
//! `dnnp_get_last_error_string`. [`Error::status`] is an exhaustive `match` (no wildcard arm), so a
//! new variant cannot be added without choosing its status code.

use crate::status::Status;

/// Result alias used throughout dnnplan.
pub type Result<T, E = Error> = std::result::Result<T, E>;

/// Every way a dnnplan operation can fail.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A required pointer argument was NULL (the payload names the argument).
    #[error("argument `{0}` must not be NULL")]
    NullArgument(&'static str),

    /// An argument or attribute value is out of its domain.
    #[error("{what}: {why}")]
    BadParam {
        /// The argument, attribute, operand or field.
        what: String,
        /// The rule that was broken.
        why: String,
    },

    /// An integer passed for an enum-like input is not one of its defined values.
    #[error("{what}: unknown value {value}")]
    UnknownEnumValue {
        /// The parameter name.
        what: &'static str,
        /// The value received.
        value: i64,
    },

    /// A caller-provided output buffer is too small.
    #[error("{what}: buffer too small ({needed} needed, {given} given)")]
    BufferTooSmall {
        /// The buffer argument.
        what: &'static str,
        /// Bytes or elements needed.
        needed: usize,
        /// Bytes or elements provided.
        given: usize,
    },

    /// A graph fails validation: the node, the port (if any) and the rule.
    #[error("node `{node}`{}: {rule}", port.as_ref().map(|p| format!(", port `{p}`")).unwrap_or_default())]
    InvalidGraph {
        /// Node name (or op name when unnamed).
        node: String,
        /// Port name, when the rule concerns one port.
        port: Option<String>,
        /// The rule that was broken.
        rule: String,
    },

    /// An operation is not allowed in the object's current lifecycle state
    /// (mutation of a frozen graph, a second planning call, execute before build...).
    #[error("invalid state: {0}")]
    InvalidState(String),

    /// A lookup by name, uid, index or id found nothing.
    #[error("{what} not found: {key}")]
    NotFound {
        /// What was looked up (tensor, node, port, engine, plan index...).
        what: &'static str,
        /// The key that was used.
        key: String,
    },

    /// The request is well-formed but nothing available can serve it.
    #[error("not supported: {0}")]
    NotSupported(String),

    /// An engine declined the graph (the only routing outcome of support checks).
    #[error("engine `{engine}` declined: {reason}")]
    Declined {
        /// Engine name.
        engine: String,
        /// Why it declined.
        reason: String,
    },

    /// The CUDA driver (libcuda) or NVRTC is missing or unusable.
    #[error("CUDA unavailable: {0}")]
    CudaUnavailable(String),

    /// The cuDNN library is missing, too old or unusable.
    #[error("cuDNN unavailable: {0}")]
    CudnnUnavailable(String),

    /// A CUDA driver call failed.
    #[error("CUDA error in {call}: {message}")]
    Cuda {
        /// The driver call.
        call: &'static str,
        /// The driver's error name/description.
        message: String,
    },

    /// A cuDNN call failed; `message` carries `cudnnGetLastErrorString`.
    #[error("cuDNN error {status} in {call}: {message}")]
    Cudnn {
        /// The cuDNN call.
        call: &'static str,
        /// The raw `cudnnStatus_t` value.
        status: u32,
        /// cuDNN's own message.
        message: String,
    },

    /// Execution was refused or failed on the device.
    #[error("execution failed: {0}")]
    ExecutionFailed(String),

    /// JSON (de)serialization failed.
    #[error("JSON: {0}")]
    Json(#[from] serde_json::Error),

    /// A filesystem operation failed.
    #[error("I/O error on {path}: {source}")]
    Io {
        /// The path involved.
        path: String,
        /// The OS error.
        source: std::io::Error,
    },

    /// A bug in dnnplan (an invariant did not hold).
    #[error("internal error: {0}")]
    Internal(String),

    /// A panic was caught at the C boundary.
    #[error("internal panic: {0}")]
    Panic(String),
}

impl Error {
    /// Shorthand for [`Error::BadParam`].
    pub fn bad_param(what: impl Into<String>, why: impl Into<String>) -> Self {
        Error::BadParam {
            what: what.into(),
            why: why.into(),
        }
    }

    /// Shorthand for [`Error::InvalidGraph`].
    pub fn invalid_graph(
        node: impl Into<String>,
        port: Option<&str>,
        rule: impl Into<String>,
    ) -> Self {
        Error::InvalidGraph {
            node: node.into(),
            port: port.map(str::to_owned),
            rule: rule.into(),
        }
    }

    /// The C status code for this error (exhaustive: every variant chooses one).
    pub fn status(&self) -> Status {
        match self {
            Error::NullArgument(_) => Status::NullParameter,
            Error::BadParam { .. } => Status::BadParam,
            Error::UnknownEnumValue { .. } => Status::BadParam,
            Error::BufferTooSmall { .. } => Status::BufferTooSmall,
            Error::InvalidGraph { .. } => Status::InvalidGraph,
            Error::InvalidState(_) => Status::InvalidState,
            Error::NotFound { .. } => Status::NotFound,
            Error::NotSupported(_) => Status::NotSupported,
            Error::Declined { .. } => Status::NotSupported,
            Error::CudaUnavailable(_) => Status::CudaUnavailable,
            Error::CudnnUnavailable(_) => Status::CudnnUnavailable,
            Error::Cuda { .. } => Status::CudaError,
            Error::Cudnn { .. } => Status::CudnnError,
            Error::ExecutionFailed(_) => Status::ExecutionFailed,
            Error::Json(_) => Status::BadParam,
            Error::Io { .. } => Status::IoError,
            Error::Internal(_) => Status::Internal,
            Error::Panic(_) => Status::InternalPanic,
        }
    }
}
