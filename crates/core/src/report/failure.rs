//! An API that could not run, and why: in words for a reader, and as a kind a script can branch
//! on (a compile error, a refused launch, a wrong output, a crash, a hang, ...).

use serde::{Deserialize, Serialize};

use crate::backend::{Api, BackendError, ErrorKind};
use crate::sweep::{RowFault, SweepError};

/// What kind of failure, as the code knows it (docs/json-schema.md lists them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// The API's library or driver is missing, or it has no device.
    Unavailable,
    /// The kernel did not compile or link.
    Compile,
    /// The API refused a launch.
    LaunchRefused,
    /// Not enough device memory, or a buffer above an allocation or binding limit; or the work
    /// is too large for the device.
    Resources,
    /// Not enough host memory for the work.
    HostMemory,
    /// Ran, and an output differs from its reference (the CPU's, the kernel's own first size,
    /// or the other APIs').
    WrongOutput,
    /// Ran, and left elements of an output unwritten.
    Unwritten,
    /// Ran, and wrote outside a buffer (into a guard band).
    OutOfBounds,
    /// Ran, and wrote NaN or Inf where the spec does not allow them.
    Nan,
    /// The kernel took its process down (a worker killed by a signal).
    Crash,
    /// The kernel did not finish within the deadline.
    Hang,
    /// The driver reported the device lost, or an illegal address that ends the context.
    DeviceLost,
    /// The API's checking layer (Vulkan's validation layers) reported messages.
    Validation,
    /// Any other driver error.
    Driver,
    /// Not recorded (a file written before failures had kinds).
    #[default]
    Other,
}

/// An API that could not run, and why.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Failure {
    pub api: Api,
    /// What kind of failure; `other` in files written before failures had kinds.
    #[serde(default)]
    pub kind: FailureKind,
    pub message: String,
}

impl Failure {
    pub fn new(api: Api, kind: FailureKind, message: impl Into<String>) -> Failure {
        Failure {
            api,
            kind,
            message: message.into(),
        }
    }
}

impl FailureKind {
    /// The kind of a backend's error: its class, and for a fault or a driver error what its
    /// words say it was.
    pub fn of_backend(e: &BackendError) -> FailureKind {
        let m = e.message.to_ascii_lowercase();
        match e.kind {
            ErrorKind::Unavailable => FailureKind::Unavailable,
            ErrorKind::Build => FailureKind::Compile,
            ErrorKind::LaunchRejected => FailureKind::LaunchRefused,
            ErrorKind::OutOfMemory => FailureKind::Resources,
            ErrorKind::Fault if m.contains("did not finish within") => FailureKind::Hang,
            ErrorKind::Fault => FailureKind::Crash,
            ErrorKind::Driver if lost(&m) => FailureKind::DeviceLost,
            ErrorKind::Driver if m.contains("did not finish within") => FailureKind::Hang,
            ErrorKind::Driver => FailureKind::Driver,
        }
    }

    /// The kind of a sweep's error.
    pub fn of_sweep(e: &SweepError) -> FailureKind {
        match e {
            SweepError::Mismatch { .. } | SweepError::Output { .. } => FailureKind::WrongOutput,
            SweepError::Row { fault, .. } => match fault {
                RowFault::OutOfBounds => FailureKind::OutOfBounds,
                RowFault::Unwritten => FailureKind::Unwritten,
                RowFault::NonFinite => FailureKind::Nan,
            },
            SweepError::Backend(b) => FailureKind::of_backend(b),
            SweepError::HostMemory(_) => FailureKind::HostMemory,
        }
    }
}

/// Words a driver uses for a device it has lost (Vulkan's VK_ERROR_DEVICE_LOST, CUDA's illegal
/// address or launch failure, OpenCL's out-of-resources after a fault).
fn lost(m: &str) -> bool {
    [
        "device_lost",
        "device lost",
        "illegal address",
        "illegal_address",
        "launch_failed",
    ]
    .iter()
    .any(|w| m.contains(w))
}
