//! The lab's sweeps as tasks of the pipeline: every block shape of some thread counts
//! ([`Shapes`]) and the grid sweep around one wave ([`Tail`]), each on one frame checked
//! against the CPU's reference ([`OnFrame`]).

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

/// One lab sweep, as its task sees it beside the frame.
pub trait LabSweep: Sync {
    type Answer: Send;
    type Plan: Sync;

    /// Readies an opened backend while it opens.
    fn prepare(&self, _b: &mut dyn Backend) -> Result<(), BackendError> {
        Ok(())
    }

    /// The block that picks the planner of a plan every API of one device shares, if any.
    fn shared_plan(&self) -> Option<BlockSize> {
        None
    }

    fn plan(&self, planner: &mut dyn Backend) -> Result<Self::Plan, BackendError>;

    /// One API's sweep of `on`, with the shared plan where there is one; `on_row` sees its
    /// answer so far after every row.
    fn sweep(
        &self,
        b: &mut dyn Backend,
        at: (&CheckedFrame, Option<&Self::Plan>),
        on_row: &mut dyn FnMut(&Self::Answer),
    ) -> Result<Self::Answer, BackendError>;
}

/// A lab sweep on its frame: the pipeline's task.
pub struct OnFrame<S> {
    pub on: CheckedFrame,
    pub sweep: S,
}

impl<S: LabSweep> Task for OnFrame<S> {
    type Answer = S::Answer;
    type Plan = S::Plan;
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

    fn prepare(&self, b: &mut dyn Backend) -> Result<(), BackendError> {
        self.sweep.prepare(b)
    }

    fn shared_plan(&self, _: &()) -> Option<Option<BlockSize>> {
        self.sweep.shared_plan().map(Some)
    }

    fn plan(&self, planner: &mut dyn Backend, _: &()) -> Result<S::Plan, BackendError> {
        self.sweep.plan(planner)
    }

    fn turn(&self, b: &mut dyn Backend, _: bool, turn: Turn<'_, Self>) -> Ran<Self> {
        match self.sweep.sweep(b, (&self.on, turn.shared), turn.on_row) {
            Ok(answer) => (Some(answer), None),
            Err(e) => (None, Some(SweepError::Backend(e))),
        }
    }
}

/// Every shape of each thread count, per API in thread-count order.
pub struct Shapes {
    /// Per thread count, its shapes.
    pub plans: Vec<(u32, Vec<ShapeRow>)>,
    pub protocol: Protocol,
}

impl LabSweep for Shapes {
    type Answer = Vec<ShapeResult>;
    type Plan = ();

    fn plan(&self, _: &mut dyn Backend) -> Result<(), BackendError> {
        Ok(())
    }

    fn sweep(
        &self,
        b: &mut dyn Backend,
        (on, _): (&CheckedFrame, Option<&()>),
        on_row: &mut dyn FnMut(&Vec<ShapeResult>),
    ) -> Result<Vec<ShapeResult>, BackendError> {
        let (frame, reference) = (&on.frame, &on.reference);
        let mut done: Vec<ShapeResult> = Vec::new();
        for (t, rows) in &self.plans {
            // The thread counts done, then this one's rows so far.
            let mut saw = |now: &ShapeResult| {
                let mut so_far = done.clone();
                so_far.push(now.clone());
                on_row(&so_far);
            };
            let r = run_shapes(b, frame, reference, (*t, rows), &self.protocol, &mut saw);
            done.push(r);
        }
        Ok(done)
    }
}

/// The grid sweep of one block around its wave: one wave for every API of one physical
/// device, planned by the one with an occupancy query where there is one.
pub struct Tail {
    pub spec: WaveSpec,
    pub block: BlockSize,
    pub protocol: Protocol,
    /// The seed of the one-pixel-per-thread series' frames.
    pub seed: u64,
}

impl LabSweep for Tail {
    type Answer = WaveResult;
    type Plan = Wave;

    /// The kernel the planner is asked about, loaded while the API opens.
    fn prepare(&self, b: &mut dyn Backend) -> Result<(), BackendError> {
        load_for_residency(b)
    }

    fn shared_plan(&self) -> Option<BlockSize> {
        Some(self.block)
    }

    fn plan(&self, planner: &mut dyn Backend) -> Result<Wave, BackendError> {
        let mut wave = wave_of_loaded(planner, self.block)?;
        wave.source = format!(
            "planned by {} for every API: {}",
            planner.api(),
            wave.source
        );
        Ok(wave)
    }

    fn sweep(
        &self,
        b: &mut dyn Backend,
        (on, shared): (&CheckedFrame, Option<&Wave>),
        on_row: &mut dyn FnMut(&WaveResult),
    ) -> Result<WaveResult, BackendError> {
        let wave = match shared {
            Some(w) => w.clone(),
            None => wave_of(b, self.block)?,
        };
        let (frame, reference) = (&on.frame, &on.reference);
        let (spec, protocol) = (&self.spec, &self.protocol);
        Ok(run_waves(
            b,
            (frame, reference),
            (spec, &wave),
            protocol,
            self.seed,
            on_row,
        ))
    }
}
