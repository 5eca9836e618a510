//! Why one API's sweep stopped: a wrong output (the frame's pixel, a user kernel's buffer or its
//! own checks), the driver's error, or the host's memory.

use crate::backend::{Api, BackendError};
use crate::blocks::BlockSize;

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(
        "verification failed at block {block}, grid {grid}: first bad pixel index {index} \
         (got {got}, expected {expected}); {bad_pixels} of {pixels} pixels wrong"
    )]
    Mismatch {
        api: Api,
        block: BlockSize,
        grid: u64,
        index: u64,
        got: f32,
        expected: f32,
        bad_pixels: u64,
        pixels: u64,
    },
    /// A user's kernel wrote something other than its reference: its own output at the first
    /// size that ran, or another API's at the same size (`against` says which).
    #[error("output '{buffer}' at block {block}, grid {grid} differs from {against}: {detail}")]
    Output {
        api: Api,
        block: BlockSize,
        grid: String,
        buffer: String,
        against: String,
        detail: String,
    },
    /// A row's output failed a check of its own, before any comparison: a write in a guard
    /// band, elements never written, NaN or Inf.
    #[error("block {block}, grid {grid} {detail}")]
    Row {
        api: Api,
        block: BlockSize,
        grid: String,
        fault: RowFault,
        detail: String,
    },
    #[error("{0}")]
    Backend(#[from] BackendError),
    #[error("{0}")]
    HostMemory(#[from] crate::frame::HostAllocError),
}

/// What a row's own checks found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowFault {
    /// A write in a guard band: outside a buffer.
    OutOfBounds,
    /// Elements never written.
    Unwritten,
    /// NaN or Inf where the spec does not allow them.
    NonFinite,
}

impl SweepError {
    /// The error without the API's name in front, for places that already name the API.
    pub fn detail(&self) -> String {
        match self {
            SweepError::Backend(e) => e.message.clone(),
            other => other.to_string(),
        }
    }
}
