//! Running the lab on opened backends: the shape sweep, the grid sweep and the resource probes,
//! with the sweep's measurement protocol ([`crate::measure::measure`]) and its pixel-by-pixel
//! verification. Every API runs the same launches: on one physical device, the wave is decided
//! once, by the API with an occupancy query (CUDA) where it sees the device.

use crate::backend::{Api, Backend, BackendError, KernelVariant, Launch};
use crate::blocks::BlockSize;
use crate::builtin;
use crate::claim::LaunchOutcome;
use crate::frame::Frame;
use crate::measure::Protocol;
use crate::sweep::{
    checked_dispatch, device_limit_violation, grid_violation, Dispatched, FrameCheck,
    FrameReadback, SweepError,
};

use super::resources::{resolve, ProbeKernel, ResourceResult, RESOURCE_CHECKS};
use super::row::{LabRow, Measured};
use super::shapes::{self, coalescing, ShapeMeasured, ShapeResult, ShapeRow};

/// Why a lab sweep stopped early: its first wrong pixel, or a driver error's message.
struct Stopped(String);

impl From<BackendError> for Stopped {
    fn from(e: BackendError) -> Stopped {
        Stopped(e.message)
    }
}

/// What one sweep's rows are measured with: the protocol, and what the frame's checked
/// dispatches keep from one to the next ([`FrameReadback`]).
struct Bench<'p> {
    protocol: &'p Protocol,
    kept: FrameReadback,
}

impl<'p> Bench<'p> {
    fn new(api: Api, protocol: &'p Protocol) -> Bench<'p> {
        Bench {
            protocol,
            kept: FrameReadback::timed(api),
        }
    }

    /// Measures `row`'s launch on `frame` unless a limit skipped it, and keeps the row; a
    /// wrong pixel stops the sweep (the row is kept with it).
    fn measure<R: LabRow>(
        &mut self,
        b: &mut dyn Backend,
        on: (&Frame, &[f32]),
        launch: Launch,
        mut row: R,
        rows: &mut Vec<R>,
    ) -> Result<(), Stopped> {
        let mut wrong = None;
        if row.measurement().skipped.is_none() {
            let m = self.measure_launch(b, on, launch)?;
            wrong = row.record(m);
        }
        rows.push(row);
        wrong.map_or(Ok(()), |why| Err(Stopped(why)))
    }

    /// One checked dispatch ([`checked_dispatch`]), timed, in the lab's words. A refusal by
    /// the API is a result; any other error stops the sweep.
    fn measure_launch(
        &mut self,
        b: &mut dyn Backend,
        (frame, reference): (&Frame, &[f32]),
        launch: Launch,
    ) -> Result<Measured, Stopped> {
        let mut check = FrameCheck::new(&mut self.kept, reference);
        let dispatched = checked_dispatch(b, launch, Some(self.protocol), &mut check);
        let dispatched = dispatched.map_err(|e| match e {
            SweepError::Backend(e) => Stopped(e.message),
            other => Stopped(other.to_string()),
        })?;
        Ok(match dispatched {
            Dispatched::Refused(e) => {
                Measured::Refused(format!("rejected by {}: {}", e.api, e.message))
            }
            Dispatched::Failed(e) => return Err(e.into()),
            Dispatched::Ran(_, Err(m)) => Measured::Wrong(format!(
                "verification failed at {launch}: first bad pixel index {} (got {}, expected {}); \
                 {} of {} pixels wrong",
                m.index,
                m.got,
                m.expected,
                m.bad_pixels,
                frame.pixels()
            )),
            Dispatched::Ran(Some(timing), Ok(())) => {
                let gbps = frame.bytes_per_pass() as f64 / (timing.stats.mean * 1e6);
                Measured::Ran(timing, gbps)
            }
            // The frame's check verifies the timed batch: a dispatch that ran was timed.
            Dispatched::Ran(None, Ok(())) => {
                return Err(Stopped(format!("{launch} ran, but was not timed")))
            }
        })
    }
}

/// How every lab sweep ends: the reason it stopped kept in `error` (whatever runs next loads
/// its own kernel).
fn finish(outcome: Result<(), Stopped>, error: &mut Option<String>) {
    if let Err(Stopped(why)) = outcome {
        *error = Some(why);
    }
}

/// The shape sweep of `rows` (one thread count) on one backend, on `frame`. Stops at the first
/// wrong pixel (recorded in `error`), as the sweep does; refused launches are rows with a reason.
/// `on_row` sees the result after every row, so a caller can save as it goes.
pub fn run_shapes(
    b: &mut dyn Backend,
    frame: &Frame,
    reference: &[f32],
    (threads, rows): (u32, &[ShapeRow]),
    protocol: &Protocol,
    on_row: &mut dyn FnMut(&ShapeResult),
) -> ShapeResult {
    let api = b.api();
    let mut result = ShapeResult {
        api,
        device: b.identity().clone(),
        threads,
        warp: b.limits().warp(),
        kernel: b.kernel_facts().clone(),
        frame: frame.info(),
        rows: Vec::new(),
        error: None,
    };
    let mut bench = Bench::new(api, protocol);
    let outcome = (|| -> Result<(), Stopped> {
        builtin::load(b, KernelVariant::GridStride2D, frame)?;
        result.kernel = b.kernel_facts().clone();
        // Vulkan builds the shapes' pipelines now, in parallel (the others need nothing).
        let blocks: Vec<BlockSize> = rows.iter().map(|r| r.block).collect();
        b.prepare(&blocks);
        for row in rows {
            let limits = b.limits().clone();
            let m = ShapeMeasured {
                row: row.clone(),
                coalescing: result.warp.map(|w| coalescing(row.block, w)),
                beyond_guarantee: shapes::beyond_guarantee(api, row.block, &limits),
                timing: None,
                gbps: None,
                of_best: None,
                verified: false,
                skipped: device_limit_violation(&limits, row.block)
                    .or_else(|| grid_violation(&limits, row.grid.x as u64, row.grid.y as u64)),
            };
            let launch = Launch::new(row.block, row.grid);
            bench.measure(b, (frame, reference), launch, m, &mut result.rows)?;
            let mut so_far = result.clone();
            so_far.fill_relative();
            on_row(&so_far);
        }
        Ok(())
    })();
    finish(outcome, &mut result.error);
    result.fill_relative();
    result
}

/// The resource probes of `validate` on one backend: each check's launch resolved against this
/// device, handed to the API as is, verified where it ran. A failure that is not a refusal is
/// kept as the outcome, and the next check still runs.
pub fn run_resources(
    b: &mut dyn Backend,
    frame: &Frame,
    reference: &[f32],
) -> Result<Vec<ResourceResult>, BackendError> {
    let mut kept = FrameReadback::untimed(b.api());
    let mut results = Vec::new();
    let mut loaded = builtin::Loaded::default();
    for check in RESOURCE_CHECKS {
        let variant = match check.probe.kernel() {
            ProbeKernel::Shared => KernelVariant::SharedProbe,
            ProbeKernel::Registers => KernelVariant::RegisterHeavy,
        };
        loaded.ensure(b, variant, frame)?;
        let facts = b.kernel_facts().clone();
        let registers = facts.registers.as_ref().map(|r| r.value);
        let launch = match resolve(check.probe, b.limits(), &facts) {
            Ok(l) => l,
            Err(why) => {
                results.push(ResourceResult::new(
                    b.api(),
                    check,
                    None,
                    registers,
                    LaunchOutcome::Failed {
                        message: why.to_string(),
                    },
                ));
                continue;
            }
        };
        let l = Launch::linear(launch.block, launch.grid)
            .with_shared(u32::try_from(launch.shared_bytes).unwrap_or(u32::MAX));
        builtin::prepare_launch(b, variant, l)?;
        let mut frame_check = FrameCheck::new(&mut kept, reference);
        let outcome = LaunchOutcome::of_frame(checked_dispatch(b, l, None, &mut frame_check))?;
        results.push(ResourceResult::new(
            b.api(),
            check,
            Some(launch),
            registers,
            outcome,
        ));
    }
    Ok(results)
}

#[path = "run_waves.rs"]
mod run_waves;
pub(crate) use run_waves::{load_for_residency, wave_of_loaded};
pub use run_waves::{run_waves, wave_of};
