//! The lab's sweeps as tasks of the pipeline, each on one frame checked against the CPU's
//! reference: every block shape of some thread counts ([`Shapes`]) and the grid sweep around
//! one wave ([`Tail`]).

use super::run::{load_for_residency, run_shapes, run_waves, wave_of, wave_of_loaded};
use super::shapes::{ShapeResult, ShapeRow};
use super::waves::{Wave, WaveResult, WaveSpec};
use crate::backend::{Api, Backend, BackendError, DeviceKind};
use crate::blocks::BlockSize;
use crate::frame::CheckedFrame;
use crate::limits::Limits;
use crate::measure::Protocol;
use crate::session::{Ran, Task, Turn};
use crate::sweep::SweepError;

/// Every shape of each thread count on the frame, per API in thread-count order.
pub struct Shapes {
    pub on: CheckedFrame,
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

    /// Each thread count's shapes in turn (each loads its own kernel); the answer after every
    /// row is the thread counts done, then this one's rows so far.
    fn turn(&self, b: &mut dyn Backend, _: bool, turn: Turn<'_, Self>) -> Ran<Self> {
        let (frame, reference) = (&self.on.frame, &self.on.reference);
        let mut done: Vec<ShapeResult> = Vec::new();
        for (t, rows) in &self.plans {
            let mut saw = |now: &ShapeResult| {
                let mut so_far = done.clone();
                so_far.push(now.clone());
                (turn.on_row)(&so_far);
            };
            let r = run_shapes(b, frame, reference, (*t, rows), &self.protocol, &mut saw);
            done.push(r);
        }
        (Some(done), None)
    }
}

/// The grid sweep of one block around its wave on the frame: one wave for every API of one
/// physical device, planned by the one with an occupancy query where there is one.
pub struct Tail {
    pub on: CheckedFrame,
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

    /// The sweep's block picks the planner: an API that answers its residency.
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

    /// The grids around the shared wave, else around this API's own.
    fn turn(&self, b: &mut dyn Backend, _: bool, turn: Turn<'_, Self>) -> Ran<Self> {
        let wave = match turn.shared {
            Some(w) => w.clone(),
            None => match wave_of(b, self.block) {
                Ok(w) => w,
                Err(e) => return (None, Some(SweepError::Backend(e))),
            },
        };
        let (frame, reference) = (&self.on.frame, &self.on.reference);
        let (spec, protocol) = (&self.spec, &self.protocol);
        let answer = run_waves(
            b,
            (frame, reference),
            (spec, &wave),
            protocol,
            self.seed,
            turn.on_row,
        );
        (Some(answer), None)
    }
}
