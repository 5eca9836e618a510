//! `validate` as a task of the pipeline: the built-in frame's assumptions, resource rows and
//! subgroup probe on each API ([`Validation`]; a user's kernel's is
//! `workload::KernelValidation`).

use super::{run_api, Check};
use crate::backend::{Backend, BackendError, DeviceIdentity};
use crate::frame::{CheckedFrame, Frame};
use crate::lab::resources::ResourceResult;
use crate::limits::Limits;
use crate::session::{Ran, Task, Turn};
use crate::subgroup::ApiSubgroups;

/// What `validate` learned from one API, with the device it ran on.
pub struct Validated {
    pub device: DeviceIdentity,
    pub checks: Vec<Check>,
    /// The facts of the kernel the assumptions launched, as this API built it.
    pub kernel: crate::limits::KernelFacts,
    /// The resource rows (the built-in frame's only).
    pub resources: Vec<ResourceResult>,
    /// Subgroups claimed against measured (the built-in frame's only).
    pub subgroups: Option<ApiSubgroups>,
}

/// `validate` of the built-in kernels, on a frame of its own.
pub struct Validation(pub CheckedFrame);

/// The built-in validation's frame: small, and not a multiple of any block size, so coverage
/// bugs cannot hide.
pub const FRAME: (u32, u32) = (509, 253);

impl Default for Validation {
    fn default() -> Self {
        Validation(CheckedFrame::new(Frame::generate(FRAME.0, FRAME.1, 3)))
    }
}

impl Task for Validation {
    type Answer = Validated;
    type Plan = ();
    type Settings = ();

    fn describe(&self) -> String {
        self.0.describe()
    }

    fn fits(&self, limits: &Limits) -> Result<(), String> {
        self.0.fits(limits)
    }

    fn plan(&self, _: &mut dyn Backend, _: &()) -> Result<(), BackendError> {
        Ok(())
    }

    fn turn(&self, backend: &mut dyn Backend, _: bool, _: Turn<'_, Self>) -> Ran<Self> {
        match run_api(backend, &self.0.frame, &self.0.reference) {
            Ok(v) => (
                Some(Validated {
                    device: backend.identity().clone(),
                    checks: v.checks,
                    kernel: v.kernel,
                    resources: v.resources,
                    subgroups: Some(v.subgroups),
                }),
                None,
            ),
            Err(e) => (None, Some(e.into())),
        }
    }
}
