//! The built-in workload: the grayscale kernel over one frame, every pixel checked against the
//! CPU reference.

use super::{Swept, Workload};
use crate::backend::{Api, Backend, BackendError, DeviceKind};
use crate::frame::{CheckedFrame, Frame};
use crate::limits::Limits;
use crate::sweep::{self, SweepConfig, SweepRun};

/// The built-in sweep's workload: a frame and its CPU reference.
pub struct FrameWorkload(pub CheckedFrame);

impl FrameWorkload {
    pub fn new(frame: Frame) -> Self {
        FrameWorkload(CheckedFrame::new(frame))
    }
}

impl Workload for FrameWorkload {
    fn describe(&self) -> String {
        self.0.describe()
    }

    fn items(&self) -> u64 {
        self.0.frame.pixels()
    }

    fn fits(&self, limits: &Limits) -> Result<(), String> {
        self.0.fits(limits)
    }

    fn device_bytes(&self) -> u64 {
        self.0.device_bytes()
    }

    fn check_host(&self, apis: &[(Api, DeviceKind)]) -> Result<(), String> {
        self.0.check_host(apis)
    }

    fn prepare(&self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        crate::builtin::load(
            backend,
            crate::backend::KernelVariant::GridStride,
            &self.0.frame,
        )
    }

    fn measure(&self, backend: &mut dyn Backend, prepared: bool, how: SweepRun<'_>) -> Swept {
        let SweepRun {
            config,
            shared,
            observer,
            on_row,
            clock,
        } = how;
        let config = SweepConfig {
            frame_on_device: prepared,
            ..config.clone()
        };
        let how = SweepRun {
            config: &config,
            shared,
            observer,
            on_row,
            clock,
        };
        sweep::run(backend, &self.0.frame, &self.0.reference, how)
    }
}
