//! The lab's sweeps as tasks of the pipeline: every block shape of some thread counts
//! ([`Shapes`]) and the grid sweep around one wave ([`Tail`]), each on one frame checked
//! against the CPU's reference.

use super::run::{load_for_residency, run_shapes, run_waves, wave_of, wave_of_loaded};
use super::shapes::{ShapeResult, ShapeRow};
use super::waves::{Wave, WaveResult, WaveSpec};
use crate::backend::{Api, Backend, BackendError, DeviceKind};
use crate::blocks::BlockSize;
use crate::frame::Frame;
use crate::limits::Limits;
use crate::measure::Protocol;
use crate::session::{Ran, Task, Turn};

/// The frame a lab sweep measures, and its CPU reference.
pub struct LabFrame {
    pub frame: Frame,
    pub reference: Vec<f32>,
}

impl LabFrame {
    /// Generates the frame and its reference, or says why the host cannot hold them.
    pub fn make(width: u32, height: u32, seed: u64) -> Result<LabFrame, String> {
        let frame = Frame::try_generate(width, height, seed).map_err(|e| e.to_string())?;
        let reference = frame.try_reference().map_err(|e| e.to_string())?;
        Ok(LabFrame { frame, reference })
    }

    fn describe(&self) -> String {
        format!("frame {}x{}", self.frame.width, self.frame.height)
    }

    fn fits(&self, limits: &Limits) -> Result<(), String> {
        limits.frame_fits(self.frame.pixels())
    }

    fn check_host(&self, apis: &[(Api, DeviceKind)]) -> Result<(), String> {
        crate::hostmem::check_frame(self.frame.width, self.frame.height, apis)
            .map_err(|e| e.to_string())
    }
}

/// Every shape of each thread count, per API in thread-count order.
pub struct Shapes {
    pub on: LabFrame,
    /// Per thread count, its shapes.
    pub plans: Vec<(u32, Vec<ShapeRow>)>,
    pub protocol: Protocol,
}

impl Task for Shapes {
    type Answer = Vec<ShapeResult>;
    type Plan = ();
    type Settings = ();

    fn describe(&self) -> String {
        self.on.describe()
    }

    fn fits(&self, limits: &Limits) -> Result<(), String> {
        self.on.fits(limits)
    }

    fn check_host(&self, apis: &[(Api, DeviceKind)]) -> Result<(), String> {
        self.on.check_host(apis)
    }

    fn plan(&self, _: &mut dyn Backend, _: &()) -> Result<(), BackendError> {
        Ok(())
    }

    fn turn(&self, b: &mut dyn Backend, _: bool, _: Turn<'_, Self>) -> Ran<Self> {
        let (frame, reference) = (&self.on.frame, &self.on.reference);
        let results = (self.plans.iter())
            .map(|(t, rows)| run_shapes(b, frame, reference, *t, rows, &self.protocol))
            .collect();
        (Some(results), None)
    }
}

/// The grid sweep of one block around its wave: one wave for every API of one physical
/// device, planned by the one with an occupancy query where there is one.
pub struct Tail {
    pub on: LabFrame,
    pub spec: WaveSpec,
    pub block: BlockSize,
    pub protocol: Protocol,
    /// The seed of the one-pixel-per-thread series' frames.
    pub seed: u64,
}

impl Task for Tail {
    type Answer = WaveResult;
    type Plan = Wave;
    type Settings = ();

    fn describe(&self) -> String {
        self.on.describe()
    }

    fn fits(&self, limits: &Limits) -> Result<(), String> {
        self.on.fits(limits)
    }

    fn check_host(&self, apis: &[(Api, DeviceKind)]) -> Result<(), String> {
        self.on.check_host(apis)
    }

    /// The kernel the planner is asked about, loaded while the API opens.
    fn prepare(&self, b: &mut dyn Backend) -> Result<(), BackendError> {
        load_for_residency(b)
    }

    fn shared_plan(&self, _: &()) -> Option<Option<BlockSize>> {
        Some(Some(self.block))
    }

    fn plan(&self, planner: &mut dyn Backend, _: &()) -> Result<Wave, BackendError> {
        let mut wave = wave_of_loaded(planner, self.block)?;
        wave.source = format!(
            "planned by {} for every API: {}",
            planner.api(),
            wave.source
        );
        Ok(wave)
    }

    fn turn(&self, b: &mut dyn Backend, _: bool, turn: Turn<'_, Self>) -> Ran<Self> {
        let wave = match turn.shared {
            Some(w) => w.clone(),
            None => match wave_of(b, self.block) {
                Ok(w) => w,
                Err(e) => return (None, Some(e.into())),
            },
        };
        let (frame, reference) = (&self.on.frame, &self.on.reference);
        let spec = &self.spec;
        let result = run_waves(b, frame, reference, spec, &wave, &self.protocol, self.seed);
        (Some(result), None)
    }
}
