//! The grid sweep on opened backends: one wave per block, grids from a fraction of it to
//! several, each point measured and verified like a sweep row (a child of `run.rs`, whose
//! measuring it shares).

use crate::backend::{Backend, BackendError, KernelVariant, Launch};
use crate::blocks::BlockSize;
use crate::builtin;
use crate::frame::Frame;
use crate::limits::Limits;
use crate::measure::Protocol;
use crate::sweep::{device_limit_violation, modelled_residency};

use super::super::waves::{
    self, slots_busy, Wave, WaveKernel, WavePoint, WaveResult, WaveRow, WaveSpec,
};
use super::{finish, Bench, Stopped};
use crate::sweep::grid_violation;

/// One wave of `block` on `b`: its occupancy query where it has one, else the core's model,
/// else one block per compute unit.
pub fn wave_of(b: &mut dyn Backend, block: BlockSize) -> Result<Wave, BackendError> {
    load_for_residency(b)?;
    wave_of_loaded(b, block)
}

/// The grid-stride kernel alone, to be asked about: a one-pixel frame's buffers.
pub(crate) fn load_for_residency(b: &mut dyn Backend) -> Result<(), BackendError> {
    builtin::load_kernel(b, KernelVariant::GridStride, 1, 1)
}

/// [`wave_of`] with the grid-stride kernel loaded already.
pub(crate) fn wave_of_loaded(b: &mut dyn Backend, block: BlockSize) -> Result<Wave, BackendError> {
    let residency = match b.residency(block)? {
        Some(r) => Some(r),
        None => modelled_residency(b.limits(), b.kernel_facts(), block),
    };
    let mps = Limits::value(&b.limits().multiprocessors).unwrap_or(1);
    Ok(Wave::new(block, residency.as_ref(), mps, b.identity().kind))
}

/// The grid sweep on one backend: both series, the same `wave` for each. The grid-stride
/// series runs on `frame`; the one-pixel-per-thread series on a frame of grid x threads
/// pixels per point, generated from `seed` and verified against its own reference. `on_row`
/// sees the result after every point, so a caller can save as it goes.
pub fn run_waves(
    b: &mut dyn Backend,
    (frame, reference): (&Frame, &[f32]),
    (spec, wave): (&WaveSpec, &Wave),
    protocol: &Protocol,
    seed: u64,
    on_row: &mut dyn FnMut(&WaveResult),
) -> WaveResult {
    let mut result = WaveResult {
        api: b.api(),
        device: b.identity().clone(),
        wave: wave.clone(),
        frame: frame.info(),
        rows: Vec::new(),
        error: None,
    };
    let mut bench = Bench::new(b.api(), protocol);
    let limits = b.limits().clone();
    let template = result.clone();
    let mut saw = |rows: &[WaveRow]| {
        let mut so_far = template.clone();
        so_far.rows = rows.to_vec();
        so_far.fill_relative();
        on_row(&so_far);
    };
    let outcome = WaveKernel::ALL.into_iter().try_for_each(|series| {
        let points = waves::plan(spec, wave, series, (frame.width, frame.height));
        let series_run = WaveRun {
            limits: &limits,
            wave,
            seed,
        };
        series_run.measure(
            b,
            &mut bench,
            (frame, reference),
            series,
            points,
            (&mut result.rows, &mut saw),
        )
    });
    finish(outcome, &mut result.error);
    result.fill_relative();
    result
}

/// Who sees a series' rows so far after every point (a caller saving as it goes).
type SeesRows<'a> = dyn FnMut(&[WaveRow]) + 'a;

/// What every point of one grid series is measured against.
struct WaveRun<'a> {
    limits: &'a Limits,
    wave: &'a Wave,
    seed: u64,
}

impl WaveRun<'_> {
    /// The points of `series`, each on its frame: the grid-stride series on `input`, the
    /// one-pixel-per-thread series on a frame of its own per point.
    fn measure(
        &self,
        b: &mut dyn Backend,
        bench: &mut Bench,
        input: (&Frame, &[f32]),
        series: WaveKernel,
        points: Vec<WavePoint>,
        (rows, saw): (&mut Vec<WaveRow>, &mut SeesRows),
    ) -> Result<(), Stopped> {
        let variant = match series {
            WaveKernel::GridStride => KernelVariant::GridStride,
            WaveKernel::OnePerThread => KernelVariant::OnePixelPerThread,
        };
        if series == WaveKernel::GridStride {
            builtin::load(b, variant, input.0)?;
        }
        for point in points {
            let grid = u32::try_from(point.grid).unwrap_or(u32::MAX);
            let mut row = WaveRow {
                slots_busy: slots_busy(point.waves),
                point,
                timing: None,
                gbps: None,
                of_best: None,
                verified: false,
                skipped: grid_violation(self.limits, grid as u64, 1)
                    .or_else(|| device_limit_violation(self.limits, self.wave.block)),
            };
            let mut own = None;
            if series == WaveKernel::OnePerThread && row.skipped.is_none() {
                match one_per_thread_frame(self.limits, &row.point, self.seed) {
                    Ok(pair) => {
                        builtin::load(b, variant, &pair.0)?;
                        own = Some(pair);
                    }
                    Err(why) => row.skipped = Some(why),
                }
            }
            let on = own.as_ref().map_or(input, |(f, r)| (f, &r[..]));
            let launch = Launch::linear(self.wave.block, grid);
            bench.measure(b, on, launch, row, rows)?;
            saw(rows);
        }
        Ok(())
    }
}

/// The one-pixel-per-thread point's frame (`grid` rows of one block's width) and its
/// reference, or why it cannot be had (a device limit, host memory).
fn one_per_thread_frame(
    limits: &Limits,
    point: &WavePoint,
    seed: u64,
) -> Result<(Frame, Vec<f32>), String> {
    limits.frame_fits(point.pixels())?;
    let c = crate::frame::CheckedFrame::make(point.width, point.height, seed)?;
    Ok((c.frame, c.reference))
}
