//! Execution: poison, measure, read back and verify each planned row; the copy ceiling.

use super::check::{checked_dispatch, Dispatched, FrameCheck, FrameReadback};
use super::rows::{new_result, skip_rejected, RowResult, SweepRun};
use super::{CopyCeiling, Observer, Plan, SweepConfig, SweepError, SweepResult};
use crate::backend::{Backend, BackendError, ErrorKind, KernelVariant, Launch, Work};
use crate::builtin;
use crate::frame::Frame;
use crate::measure::measure;

/// Runs a planned sweep on one backend. Returns the result with every row measured so far;
/// an error that stops the sweep is returned beside it (and recorded in `result.error`).
/// `on_row` sees the result after every row, so a caller can save as it goes.
pub fn execute(
    backend: &mut dyn Backend,
    frame: &Frame,
    reference: &[f32],
    plan: &Plan,
    config: &SweepConfig,
    observer: &mut dyn Observer,
    on_row: &mut dyn FnMut(&SweepResult),
) -> (SweepResult, Option<SweepError>) {
    let mut run = SweepRun {
        config,
        shared: Some(plan),
        observer,
        on_row,
        clock: None,
    };
    execute_with(backend, (frame, reference), plan, &mut run)
}

/// [`execute`] with the run's own observer, saving and clock.
fn execute_with(
    backend: &mut dyn Backend,
    (frame, reference): (&Frame, &[f32]),
    plan: &Plan,
    run: &mut SweepRun<'_>,
) -> (SweepResult, Option<SweepError>) {
    let mut result = new_result(backend, frame.info(), plan, run.config);
    let err = frame_rows(backend, frame, reference, plan, run, &mut result).err();
    result.fill_relative();
    if let Some(e) = &err {
        result.error = Some(e.to_string());
    }
    (result, err)
}

/// The frame's rows of `plan`: the frame uploaded (unless it is on the device already), then
/// each row one checked dispatch ([`checked_dispatch`]: poisoned, measured, read back and
/// verified).
fn frame_rows(
    backend: &mut dyn Backend,
    frame: &Frame,
    reference: &[f32],
    plan: &Plan,
    run: &mut SweepRun<'_>,
    result: &mut SweepResult,
) -> RowResult {
    let api = backend.api();
    let config = run.config;
    if !config.frame_on_device {
        load(backend, frame)?;
    }
    let mut kept = FrameReadback::timed(api);
    run.each_row(backend, plan, result, |backend, planned, row| {
        // The plan checked that the grid fits 32 bits.
        let launch = Launch::linear(planned.block, planned.grid as u32);
        let mut check = FrameCheck::new(&mut kept, reference);
        match checked_dispatch(backend, launch, Some(&config.protocol), &mut check)? {
            Dispatched::Refused(e) => skip_rejected(api, row, e),
            Dispatched::Failed(e) => Err(e.into()),
            Dispatched::Ran(_, Err(m)) => Err(SweepError::Mismatch {
                api,
                block: planned.block,
                grid: planned.grid,
                index: m.index,
                got: m.got,
                expected: m.expected,
                bad_pixels: m.bad_pixels,
                pixels: frame.pixels(),
            }),
            Dispatched::Ran(timing, Ok(())) => {
                row.verified = true;
                let per_pass = frame.bytes_per_pass() as f64;
                row.gbps = timing.as_ref().map(|t| per_pass / (t.stats.mean * 1e6));
                row.timing = timing;
                Ok(())
            }
        }
    })
}

/// The grid-stride kernel built for `frame`, its planes uploaded.
fn load(backend: &mut dyn Backend, frame: &Frame) -> Result<(), BackendError> {
    let _busy = crate::trace::activity(backend.api().key(), "uploading the frame", 0);
    builtin::load(backend, KernelVariant::GridStride, frame)
}

/// Measures the device-to-device copy ceiling under the same protocol as the rows: `bytes`
/// copied, read + written counted as traffic.
pub fn measure_copy(
    backend: &mut dyn Backend,
    bytes: u64,
    config: &SweepConfig,
) -> Result<CopyCeiling, BackendError> {
    let timing = measure(backend, Work::Copy { bytes }, &config.protocol)?;
    Ok(CopyCeiling {
        method: backend.copy_method(),
        bytes,
        gbps: 2.0 * bytes as f64 / (timing.stats.mean * 1e6),
        timing,
    })
}

/// Plan (unless one is shared), rows and copy ceiling for one backend: the whole single-API
/// sweep. The copy moves the kernel's traffic: half the bytes read, half written.
pub fn run(
    backend: &mut dyn Backend,
    frame: &Frame,
    reference: &[f32],
    how: SweepRun<'_>,
) -> (SweepResult, Option<SweepError>) {
    let SweepRun {
        config,
        shared,
        observer,
        on_row,
        clock,
    } = how;
    // Built before planning, so that the plan asks the kernel's own residency and facts.
    let loaded = match config.frame_on_device {
        true => Ok(()),
        false => load(backend, frame),
    };
    let config = &SweepConfig {
        frame_on_device: true,
        ..config.clone()
    };
    let planned = loaded.and_then(|()| match shared {
        Some(p) => Ok(std::borrow::Cow::Borrowed(p)),
        None => super::plan(backend, frame.pixels(), config).map(std::borrow::Cow::Owned),
    });
    let plan = match planned {
        Ok(p) => p,
        Err(e) => {
            let p = Plan {
                rows: Vec::new(),
                policy: config.grid,
                grid_source: String::new(),
            };
            let mut r = new_result(backend, frame.info(), &p, config);
            r.error = Some(e.to_string());
            return (r, Some(e.into()));
        }
    };
    let mut run = SweepRun {
        config,
        shared: Some(&plan),
        observer,
        on_row,
        clock,
    };
    let (mut result, err) = execute_with(backend, (frame, reference), &plan, &mut run);
    let SweepRun {
        observer, on_row, ..
    } = run;
    if err.is_some() {
        return (result, err);
    }
    let bytes = frame.bytes_per_pass() / 2;
    match copy_ceiling(
        backend,
        &result,
        bytes,
        frame.pixels().saturating_mul(16),
        config,
        observer,
    ) {
        Ok(None) => (result, None),
        Ok(Some(c)) => {
            result.copy = Some(c);
            result.fill_relative();
            on_row(&result);
            (result, None)
        }
        Err(e) => {
            result.error = Some(e.to_string());
            (result, Some(e.into()))
        }
    }
}

/// The copy ceiling of one API's sweep, the one policy for every workload: none unless asked
/// (`config.copy`) and a row ran; two buffers of `bytes` checked against the device's limits
/// beside the `resident` bytes the workload holds, then timed under the sweep's protocol.
pub fn copy_ceiling(
    backend: &mut dyn Backend,
    result: &SweepResult,
    bytes: u64,
    resident: u64,
    config: &SweepConfig,
    observer: &mut dyn Observer,
) -> Result<Option<CopyCeiling>, BackendError> {
    if !config.copy || result.rows_run() == 0 || bytes == 0 {
        return Ok(None);
    }
    observer.status(Some(backend.api()), "timing the copy ceiling");
    if let Err(why) = result.limits.copy_fits(bytes, resident) {
        let message = format!("copy ceiling: {why}");
        return Err(BackendError::new(
            backend.api(),
            ErrorKind::OutOfMemory,
            message,
        ));
    }
    crate::trace::time(backend.api().key(), "copy ceiling", || {
        measure_copy(backend, bytes, config).map(Some)
    })
}
