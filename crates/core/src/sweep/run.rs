//! Execution: poison, measure, read back and verify each planned row; the copy ceiling.

use std::borrow::Cow;

use super::{
    device_limit_violation, kernel_limit_violation, limit_violation, plan, CopyCeiling, Observer,
    Plan, PlannedRow, SweepConfig, SweepError, SweepResult, SweepRow,
};
use crate::backend::{Api, Backend, BackendError, ErrorKind, Launch, Work};
use crate::frame::{try_zeroed, Frame};
use crate::limits::Limits;
use crate::measure::measure;
use crate::verify::{verify_counted, Mismatch};

/// How one API's sweep runs beside its backend and its work: the configuration, the plan
/// every API on the device runs (`None`: the backend plans its own), and who hears of the rows
/// as they run (`on_row` sees the result after every row, so a caller can save as it goes).
pub struct SweepRun<'a> {
    pub config: &'a SweepConfig,
    pub shared: Option<&'a Plan>,
    pub observer: &'a mut dyn Observer,
    pub on_row: &'a mut dyn FnMut(&SweepResult),
}

impl<'a> SweepRun<'a> {
    /// The shared plan, else the backend's own for `items` work items.
    pub(crate) fn plan(
        &self,
        backend: &mut dyn Backend,
        items: u64,
    ) -> Result<Cow<'a, Plan>, BackendError> {
        match self.shared {
            Some(p) => Ok(Cow::Borrowed(p)),
            None => plan(backend, items, self.config).map(Cow::Owned),
        }
    }

    /// Runs every row of `plan` on `backend` into `result`: tells the observer, shapes the row,
    /// refuses what the limits refuse, and hands the rest to `run_row`, which runs, checks and
    /// times it (see [`skip_rejected`]). `on_row` sees the result after every row.
    pub(crate) fn each_row(
        &mut self,
        backend: &mut dyn Backend,
        plan: &Plan,
        result: &mut SweepResult,
        mut run_row: impl FnMut(&mut dyn Backend, &PlannedRow, &mut SweepRow) -> RowResult,
    ) -> RowResult {
        let api = backend.api();
        result.suggestion = backend.occupancy_suggestion()?;
        let blocks: Vec<_> = plan.rows.iter().map(|r| r.block).collect();
        backend.prepare(&blocks);
        for (i, planned) in plan.rows.iter().enumerate() {
            self.observer
                .row_started(api, i, plan.rows.len(), planned.block);
            let mut row = shape_row(&result.limits, planned);
            row.skipped = launch_refusal(result, planned, self.config.strict_kernel_limit);
            if row.skipped.is_none() {
                run_row(backend, planned, &mut row)?;
            }
            self.observer.row_finished(api, &row);
            result.rows.push(row);
            result.fill_relative();
            (self.on_row)(result);
        }
        Ok(())
    }
}

/// What running a row, or all of them, comes to: done, or the error that stops the sweep.
pub(crate) type RowResult = Result<(), SweepError>;

/// The API's own refusal of a row's launch is a result worth showing (the row skipped, in the
/// API's words), not a reason to stop; any other error stops the sweep.
pub(crate) fn skip_rejected(api: Api, row: &mut SweepRow, e: BackendError) -> RowResult {
    if e.kind != ErrorKind::LaunchRejected {
        return Err(e.into());
    }
    row.skipped = Some(format!("rejected by {api}: {}", e.message));
    Ok(())
}

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
    let mut result = new_result(backend, frame.info(), plan, config);
    let mut run = SweepRun {
        config,
        shared: Some(plan),
        observer,
        on_row,
    };
    let err = frame_rows(backend, frame, reference, plan, &mut run, &mut result).err();
    result.fill_relative();
    if let Some(e) = &err {
        result.error = Some(e.to_string());
    }
    (result, err)
}

/// An API's result before its first row: who it is, its limits and kernel, how it will be
/// timed, and what it runs (`frame`: the frame's, or a user kernel's work).
pub(crate) fn new_result(
    backend: &dyn Backend,
    frame: crate::frame::FrameInfo,
    plan: &Plan,
    config: &SweepConfig,
) -> SweepResult {
    SweepResult {
        api: backend.api(),
        device: backend.identity().clone(),
        limits: backend.limits().clone(),
        kernel: backend.kernel_facts().clone(),
        timer: backend.timer(),
        frame,
        policy: plan.policy,
        grid_source: plan.grid_source.clone(),
        protocol: config.protocol,
        rows: Vec::new(),
        suggestion: None,
        copy: None,
        error: None,
        program: None,
    }
}

/// The frame's rows of `plan`: the frame uploaded (unless it is on the device already), then
/// each row poisoned, measured, read back and verified.
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
        let _busy = crate::trace::activity(api.key(), "uploading the frame", 0);
        backend.upload(frame)?;
    }
    let kernel = result.kernel.clone();
    // The core's own read-back buffer (33 MB at 4K), made only for a backend that lends none.
    let mut own_output = None;
    let mut phases = RowPhases::new(api);
    run.each_row(backend, plan, result, |backend, planned, row| {
        if !config.strict_kernel_limit {
            row.note = kernel_limit_violation(&kernel, planned.block)
                .map(|v| format!("ran although {v}: the driver accepted it"));
        }
        // The plan checked that the grid fits 32 bits.
        let launch = Launch::linear(planned.block, planned.grid as u32);
        phases.time(0, || backend.poison_output())?;
        let timing = match phases.time(1, || {
            measure(backend, Work::Kernel(launch), &config.protocol)
        }) {
            Ok(timing) => timing,
            Err(e) => return skip_rejected(api, row, e),
        };
        let checked = read_and_verify(backend, &mut own_output, reference, &mut phases)?;
        if let Err(m) = checked {
            return Err(SweepError::Mismatch {
                api,
                block: planned.block,
                grid: planned.grid,
                index: m.index,
                got: m.got,
                expected: m.expected,
                bad_pixels: m.bad_pixels,
                pixels: frame.pixels(),
            });
        }
        row.verified = true;
        row.gbps = Some(frame.bytes_per_pass() as f64 / (timing.stats.mean * 1e6));
        row.timing = Some(timing);
        Ok(())
    })
}

/// Reads a row's output back and verifies it: in place, in the host memory the backend lends
/// (pinned or mapped: no copy on the host), else through `read_output` into `own`, allocated
/// at the first row that needs it. Read-back and verify are traced as phases 2 and 3.
fn read_and_verify(
    backend: &mut dyn Backend,
    own: &mut Option<Vec<f32>>,
    reference: &[f32],
    phases: &mut RowPhases,
) -> Result<Result<(), Mismatch>, SweepError> {
    let started = phases.start();
    let api = backend.api();
    let reading = crate::trace::activity(api.key(), "reading back", 0);
    let lent = backend.read_output_lent()?;
    let output: &[f32] = match lent {
        Some(view) if view.len() != reference.len() => {
            let message = format!(
                "the lent output holds {} values; the frame has {} pixels",
                view.len(),
                reference.len()
            );
            return Err(BackendError::new(api, ErrorKind::Driver, message).into());
        }
        Some(view) => view,
        None => {
            let out = match own {
                Some(out) => out,
                None => own.insert(try_zeroed(reference.len() as u64, "the read-back buffer")?),
            };
            backend.read_output(out)?;
            out
        }
    };
    phases.stop(2, started);
    drop(reading);
    let busy = crate::trace::activity(api.key(), "verifying", reference.len() as u64);
    Ok(phases.time(3, || {
        verify_counted(output, reference, &|n| busy.advance(n))
    }))
}

/// Where a sweep's row time goes, summed over the rows and traced once at the end
/// (`BLOCKSWEEP_TRACE=1`; nothing is timed otherwise).
struct RowPhases {
    api: crate::Api,
    took: Option<[std::time::Duration; 4]>,
}

impl RowPhases {
    const NAMES: [&'static str; 4] = ["poison", "timed batches", "read-back", "verify"];

    fn new(api: crate::Api) -> Self {
        RowPhases {
            api,
            took: crate::trace::enabled().then_some(Default::default()),
        }
    }

    fn time<T>(&mut self, phase: usize, f: impl FnOnce() -> T) -> T {
        let started = self.start();
        let out = f();
        self.stop(phase, started);
        out
    }

    /// The start of a phase timed by hand (where a closure cannot return what it borrows).
    fn start(&self) -> Option<std::time::Instant> {
        self.took.is_some().then(std::time::Instant::now)
    }

    fn stop(&mut self, phase: usize, started: Option<std::time::Instant>) {
        if let (Some(took), Some(started)) = (&mut self.took, started) {
            took[phase] += started.elapsed();
        }
    }
}

impl Drop for RowPhases {
    fn drop(&mut self) {
        for (name, took) in Self::NAMES.iter().zip(self.took.iter().flatten()) {
            crate::trace::record(self.api.key(), &format!("rows: {name}"), *took);
        }
    }
}

/// Why the core will not hand this planned launch to the API: a device limit on the block or
/// the grid (always), or the kernel's own limit (with `strict`).
pub(crate) fn launch_refusal(
    result: &SweepResult,
    planned: &PlannedRow,
    strict: bool,
) -> Option<String> {
    let block = match strict {
        true => limit_violation(&result.limits, &result.kernel, planned.block),
        false => device_limit_violation(&result.limits, planned.block),
    };
    block.or_else(|| grid_violation(&result.limits, planned.grid))
}

/// A grid above the device's x limit, or one that does not fit the 32-bit launch field.
pub fn grid_violation(limits: &Limits, grid: u64) -> Option<String> {
    if let Some(max) = limits
        .max_grid_dims
        .as_ref()
        .filter(|m| grid > m.value.0[0])
    {
        return Some(format!(
            "grid {grid} > {}[x] = {}",
            max.name, max.value.0[0]
        ));
    }
    (grid > u32::MAX as u64).then(|| format!("grid {grid} does not fit the 32-bit launch field"))
}

/// The seed's static columns for one row: warps, idle lanes, residency, occupancy.
pub(crate) fn shape_row(limits: &Limits, planned: &PlannedRow) -> SweepRow {
    let threads = planned.block.threads();
    let warp = limits
        .mp_model
        .as_ref()
        .map(|m| m.warp_size as u64)
        .or_else(|| Limits::value(&limits.warp_size))
        .filter(|&w| w > 0);
    let warps = warp.map(|w| threads.div_ceil(w));
    let idle_lanes = warp.zip(warps).map(|(w, n)| n * w - threads);
    let blocks_per_mp = planned.residency.as_ref().map(|r| r.blocks_per_mp);
    let warps_per_mp = blocks_per_mp.zip(warps).map(|(b, w)| b as u64 * w);
    let occupancy = limits
        .mp_model
        .as_ref()
        .zip(warps_per_mp)
        .map(|(m, w)| w as f64 / m.max_warps.max(1) as f64);
    SweepRow {
        block: planned.block,
        threads,
        warps,
        idle_lanes,
        blocks_per_mp,
        warps_per_mp,
        occupancy,
        grid: planned.grid,
        ..SweepRow::new(planned.block)
    }
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
    let planned = how.plan(backend, frame.pixels());
    let SweepRun {
        config,
        observer,
        on_row,
        ..
    } = how;
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
    let (mut result, err) = execute(backend, frame, reference, &plan, config, observer, on_row);
    if err.is_some() || !config.copy || result.rows_run() == 0 {
        return (result, err);
    }
    observer.status(Some(backend.api()), "timing the copy ceiling");
    let bytes = frame.bytes_per_pass() / 2;
    if let Err(why) = result.limits.copy_fits(bytes, frame.pixels()) {
        let e = BackendError::new(
            backend.api(),
            ErrorKind::OutOfMemory,
            format!("copy ceiling: {why}"),
        );
        result.error = Some(e.to_string());
        return (result, Some(e.into()));
    }
    let copied = crate::trace::time(backend.api().key(), "copy ceiling", || {
        measure_copy(backend, bytes, config)
    });
    match copied {
        Ok(c) => {
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
