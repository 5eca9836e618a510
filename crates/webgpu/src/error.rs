//! `WebGpuError`: what can go wrong through wgpu, and the core's class of each. wgpu reports a
//! validation error through an error scope, not a return value: `context.rs` opens one around
//! every call that can fail and turns what it caught into one of these.

use blocksweep_core::{BackendError, ErrorKind};

#[derive(Debug, thiserror::Error)]
pub enum WebGpuError {
    /// No wgpu adapter, or the Vulkan loader or driver under it is missing.
    #[error("{0}")]
    Unavailable(String),
    /// WGSL that naga refuses (parse or validation), or a kernel its arguments contradict.
    #[error("{origin}: {log}")]
    Build { origin: String, log: String },
    /// wgpu's validation refused a launch: its own message, which names the limit.
    #[error("{0}")]
    LaunchRejected(String),
    /// An allocation wgpu or the driver refused, or a buffer past a binding limit.
    #[error("{0}")]
    OutOfMemory(String),
    /// Any other error wgpu reported, with the call it came from.
    #[error("{call}: {message}")]
    Driver { call: &'static str, message: String },
    /// The device was lost (a fault in a kernel, a driver reset).
    #[error("the WebGPU device was lost: {0}")]
    DeviceLost(String),
    /// A submission still running when the deadline passed
    /// (`blocksweep_core::program::deadline`).
    #[error(
        "the {what} did not finish within {seconds} s (BLOCKSWEEP_DEADLINE_S); this WebGPU \
         device is not used again in this process"
    )]
    Deadline { what: &'static str, seconds: f64 },
    /// A call that the backend's state does not allow (no program loaded, a bad argument).
    #[error("{0}")]
    Usage(String),
    /// A call after a [`WebGpuError::Deadline`] or a lost device.
    #[error("WebGPU backend unusable: {0}")]
    Unusable(String),
}

impl WebGpuError {
    /// Which of the core's classes this error falls in.
    pub fn kind(&self) -> ErrorKind {
        match self {
            WebGpuError::Unavailable(_) => ErrorKind::Unavailable,
            WebGpuError::Build { .. } => ErrorKind::Build,
            WebGpuError::LaunchRejected(_) => ErrorKind::LaunchRejected,
            WebGpuError::OutOfMemory(_) => ErrorKind::OutOfMemory,
            WebGpuError::Driver { .. }
            | WebGpuError::DeviceLost(_)
            | WebGpuError::Deadline { .. }
            | WebGpuError::Usage(_)
            | WebGpuError::Unusable(_) => ErrorKind::Driver,
        }
    }

    /// A build error of the source from `origin`.
    pub(crate) fn build(origin: &str, log: impl Into<String>) -> WebGpuError {
        WebGpuError::Build {
            origin: origin.to_string(),
            log: log.into(),
        }
    }

    /// What an error scope caught during `call`, classed by wgpu's own kind.
    pub(crate) fn caught(call: &'static str, error: wgpu::Error) -> WebGpuError {
        match error {
            wgpu::Error::OutOfMemory { .. } => {
                WebGpuError::OutOfMemory(format!("{call}: out of memory"))
            }
            wgpu::Error::Validation { description, .. } => WebGpuError::Driver {
                call,
                message: one_line(&description),
            },
            wgpu::Error::Internal { description, .. } => WebGpuError::Driver {
                call,
                message: one_line(&description),
            },
        }
    }
}

/// wgpu's multi-line validation report on one line: its lines joined, blank ones dropped.
pub(crate) fn one_line(text: &str) -> String {
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty())
        .collect();
    lines.join(" ")
}

impl From<WebGpuError> for BackendError {
    fn from(e: WebGpuError) -> Self {
        let kind = e.kind();
        BackendError::with_source(crate::API, kind, e)
    }
}

pub type WebGpuResult<T> = Result<T, WebGpuError>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_fold_onto_one_line() {
        assert_eq!(
            one_line("Validation Error\n\n  Caused by:\n    x > y\n"),
            "Validation Error Caused by: x > y"
        );
    }

    #[test]
    fn each_error_has_the_core_class_it_means() {
        assert_eq!(WebGpuError::build("k.wgsl", "bad").kind(), ErrorKind::Build);
        assert_eq!(
            WebGpuError::LaunchRejected("x".into()).kind(),
            ErrorKind::LaunchRejected
        );
        let deadline = WebGpuError::Deadline {
            what: "kernel",
            seconds: 0.5,
        };
        assert!(deadline
            .to_string()
            .starts_with("the kernel did not finish within 0.5 s"));
    }
}
