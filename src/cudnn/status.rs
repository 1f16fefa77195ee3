//! `cudnnStatus_t` as a transparent integer, and the conversion of a failed call into
//! [`Error::Cudnn`] carrying `cudnnGetLastErrorString` (and the status's own name/description).
//!
//! A status is never a Rust enum: a newer cuDNN may return sub-codes this build does not know.

use crate::cudnn::consts;
use crate::error::Error;

/// A raw `cudnnStatus_t` (`int`-sized C enum) as returned by every cuDNN call.
#[repr(transparent)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct CudnnStatus(pub u32);

impl CudnnStatus {
    /// `CUDNN_STATUS_SUCCESS`.
    pub const SUCCESS: CudnnStatus = CudnnStatus(consts::CUDNN_STATUS_SUCCESS);

    /// True for `CUDNN_STATUS_SUCCESS`.
    pub fn is_ok(self) -> bool {
        self.0 == consts::CUDNN_STATUS_SUCCESS
    }

    /// True for `CUDNN_STATUS_NOT_SUPPORTED` and its sub-codes (3000..=3999): "skip this config"
    /// rather than an API failure.
    pub fn is_not_supported(self) -> bool {
        (3000..4000).contains(&self.0)
    }

    /// The enumerator name when this build knows it (`CUDNN_STATUS_BAD_PARAM`), else `None`.
    pub fn name(self) -> Option<&'static str> {
        consts::STATUS
            .iter()
            .find(|(_, v)| *v == self.0)
            .map(|(n, _)| *n)
    }

    /// The name, or the category of an unknown sub-code (`CUDNN_STATUS_NOT_SUPPORTED (3042)`).
    pub fn describe(self) -> String {
        if let Some(n) = self.name() {
            return n.to_owned();
        }
        let base = (self.0 / 1000) * 1000;
        match CudnnStatus(base).name().filter(|_| base >= 1000) {
            Some(n) => format!("{n} ({})", self.0),
            None => format!("cudnnStatus {}", self.0),
        }
    }
}

impl std::fmt::Display for CudnnStatus {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.describe())
    }
}

/// Builds the [`Error::Cudnn`] for a failed call: the status's name, cuDNN's description
/// (`cudnnGetErrorString`) and the last error text (`cudnnGetLastErrorString`), any of which may be
/// empty (the latter two are `None` when no library is loaded, e.g. in tests).
pub fn cudnn_error(
    call: &'static str,
    status: CudnnStatus,
    description: Option<String>,
    last_error: Option<String>,
) -> Error {
    let mut message = status.describe();
    if let Some(d) = description.filter(|d| !d.is_empty()) {
        message.push_str(": ");
        message.push_str(&d);
    }
    match last_error
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
    {
        Some(l) => {
            message.push_str("; last error: ");
            message.push_str(&l);
        }
        None => message.push_str("; last error: (none reported)"),
    }
    Error::Cudnn {
        call,
        status: status.0,
        message,
    }
}
