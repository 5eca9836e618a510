//! What a sweep runs on each API ([`Workload`]): the built-in grayscale frame, or a user's
//! kernel from a spec file ([`ProgramWorkload`]). The session's pipeline opens, plans,
//! measures and closes the APIs the same way for both; the workload, the pipeline's task
//! (`sweeping.rs`), says only what is its own: whether an API can hold it, how to ready a
//! backend for it, and how to run and check a row.

mod diagnosis;
mod dispatch;
pub mod guard;
mod hints;
pub mod own;
mod program;
mod references;
mod sweeping;
mod validate;
mod work;

pub use program::ProgramWorkload;
pub use sweeping::{sweep, sweep_device, Ended, SweepJob, WorkloadSource};
pub use validate::KernelValidation;
pub use work::{Making, Work};

use crate::frame::{CheckedFrame, Frame};
use crate::sweep::{SweepError, SweepResult};

/// One workload of a sweep, made, shared by every API of the run (each measured in turn): the
/// frame and its CPU reference, or a user's kernel with its buffers' contents.
pub enum Workload {
    Frame(CheckedFrame),
    Kernel(Box<ProgramWorkload>),
}

impl Workload {
    /// The built-in sweep's workload on `frame`, its reference computed here.
    pub fn frame(frame: Frame) -> Self {
        Workload::Frame(CheckedFrame::new(frame))
    }

    /// The user's kernel, where it is one.
    pub fn program(&self) -> Option<&ProgramWorkload> {
        match self {
            Workload::Kernel(w) => Some(w),
            Workload::Frame(_) => None,
        }
    }
}

impl From<ProgramWorkload> for Workload {
    fn from(w: ProgramWorkload) -> Self {
        Workload::Kernel(Box::new(w))
    }
}

/// One API's result, and the error that stopped it where one did.
pub type Swept = (SweepResult, Option<SweepError>);
