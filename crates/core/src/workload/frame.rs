//! The built-in workload: the grayscale kernel over one frame, every pixel checked against the
//! CPU reference.

use super::{Measured, Workload};
use crate::backend::{Api, Backend, BackendError, DeviceKind};
use crate::frame::Frame;
use crate::limits::Limits;
use crate::sweep::{self, SweepConfig, SweepRun};

/// A frame and its CPU reference.
pub struct FrameWorkload {
    pub frame: Frame,
    pub reference: Vec<f32>,
}

impl FrameWorkload {
    pub fn new(frame: Frame) -> Self {
        let reference = frame.reference();
        FrameWorkload { frame, reference }
    }
}

impl Workload for FrameWorkload {
    fn describe(&self) -> String {
        format!("frame {}x{}", self.frame.width, self.frame.height)
    }

    fn items(&self) -> u64 {
        self.frame.pixels()
    }

    fn fits(&self, limits: &Limits) -> Result<(), String> {
        limits.frame_fits(self.frame.pixels())
    }

    fn device_bytes(&self) -> u64 {
        // Four f32 planes: three in, one out.
        self.frame.pixels().saturating_mul(16)
    }

    fn check_host(&self, apis: &[(Api, DeviceKind)]) -> Result<(), String> {
        crate::hostmem::check_frame(self.frame.width, self.frame.height, apis)
            .map_err(|e| e.to_string())
    }

    fn prepare(&self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        crate::builtin::load(
            backend,
            crate::backend::KernelVariant::GridStride,
            &self.frame,
        )
    }

    fn measure(&self, backend: &mut dyn Backend, prepared: bool, how: SweepRun<'_>) -> Measured {
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
        sweep::run(backend, &self.frame, &self.reference, how)
    }
}
