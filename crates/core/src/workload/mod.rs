//! What a sweep runs on each API: the built-in grayscale frame ([`FrameWorkload`]) or a user's
//! kernel from a spec file ([`ProgramWorkload`]). The session's pipeline opens, plans,
//! measures and closes the APIs the same way for both; a workload says only what is its own:
//! whether an API can hold it, how to ready a backend for it, and how to run and check a row.

mod diagnosis;
mod dispatch;
mod frame;
pub mod guard;
mod hints;
pub mod own;
mod program;
mod references;
mod sweeping;
mod validate;
mod work;

pub use frame::FrameWorkload;
pub use program::ProgramWorkload;
pub use sweeping::{sweep, sweep_device, Ended, SweepJob, WorkloadSource};
pub use validate::KernelValidation;
pub use work::{Making, Work};

use crate::backend::{Api, Backend, BackendError, DeviceKind};
use crate::limits::Limits;
use crate::report::Failure;
use crate::sweep::{SweepError, SweepResult, SweepRun};

/// One workload of a sweep, shared by every API of the run (each measured in turn).
pub trait Workload: Sync {
    /// What it is, for messages: "frame 3840x2160", "saxpy at n = 16777216".
    fn describe(&self) -> String;

    /// Work items: pixels, or the kernel's work items; grids are planned from it.
    fn items(&self) -> u64;

    /// Whether one API's device can hold it; `Err` names the limit that refuses it.
    fn fits(&self, limits: &Limits) -> Result<(), String>;

    /// The device memory one API's copy holds (the frame's planes, a kernel's buffers with
    /// their guard bands).
    fn device_bytes(&self) -> u64;

    /// Whether the host has the memory for the run with these APIs in it.
    fn check_host(&self, apis: &[(Api, DeviceKind)]) -> Result<(), String>;

    /// Readies an opened backend, untimed, on the API's opening thread (uploads the frame;
    /// builds the user's kernel and fills its buffers). A failure here is not final: `measure`
    /// is told, and tries again so that the error lands in the API's result.
    fn prepare(&self, backend: &mut dyn Backend) -> Result<(), BackendError>;

    /// Measures and checks every planned row on one backend, as `how` says (`prepared`: whether
    /// [`Workload::prepare`] succeeded on it). Returns the rows measured so far and the error
    /// that stopped the API, if one did.
    fn measure(&self, backend: &mut dyn Backend, prepared: bool, how: SweepRun<'_>) -> Swept;

    /// Once every API has been measured: the APIs whose results the others contradict (a
    /// user's kernel whose outputs disagree across APIs), each with why. Nothing by default.
    fn conclude(&self) -> Vec<Failure> {
        Vec::new()
    }
}

/// One API's result, and the error that stopped it where one did.
pub type Swept = (SweepResult, Option<SweepError>);
