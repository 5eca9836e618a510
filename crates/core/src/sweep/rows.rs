//! The row loop every workload's sweep shares: how one API's sweep runs ([`SweepRun`]), each
//! planned row shaped, refused where the limits refuse it, else run by the workload; and the
//! result an API starts from.

use std::borrow::Cow;

use super::{
    device_limit_violation, kernel_limit_violation, limit_violation, plan, Observer, Plan,
    PlannedRow, SweepConfig, SweepError, SweepResult, SweepRow,
};
use crate::backend::{Api, Backend, BackendError, ErrorKind};
use crate::clocks::Clocks;
use crate::limits::Limits;

/// How one API's sweep runs beside its backend and its work: the configuration, the plan
/// every API on the device runs (`None`: the backend plans its own), and who hears of the rows
/// as they run (`on_row` sees the result after every row, so a caller can save as it goes).
pub struct SweepRun<'a> {
    pub config: &'a SweepConfig,
    pub shared: Option<&'a Plan>,
    pub observer: &'a mut dyn Observer,
    pub on_row: &'a mut dyn FnMut(&SweepResult),
    /// Reads the device's clocks after each row, where the caller has a reader
    /// ([`crate::clocks`]): a row timed below [`crate::clocks::SLOW_FRACTION`] of the SM clock
    /// runs again.
    pub clock: Option<&'a ReadClock<'a>>,
}

/// A reading of the device's clocks now.
pub type ReadClock<'a> = dyn Fn() -> Option<Clocks> + 'a;

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
        let mut blocks: Vec<_> = Vec::new();
        for r in &plan.rows {
            // A grid axis repeats each block: its launch shapes are built once.
            if !blocks.contains(&r.block) {
                blocks.push(r.block);
            }
        }
        backend.prepare(&blocks);
        for (i, planned) in plan.rows.iter().enumerate() {
            self.observer
                .row_started(api, i, plan.rows.len(), planned.block);
            let mut row = shape_row(&result.limits, planned);
            row.skipped = launch_refusal(result, planned, self.config.strict_kernel_limit);
            if row.skipped.is_none() {
                run_row(backend, planned, &mut row)?;
                if let Some(read) = self.clock {
                    slow_clock_rule(read, &mut row, || {
                        let mut again = shape_row(&result.limits, planned);
                        run_row(backend, planned, &mut again).map(|()| again)
                    })?;
                }
                note_above_kernel_limit(result, &mut row);
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
        protocol: config.protocol.clone(),
        rows: Vec::new(),
        suggestion: None,
        copy: None,
        error: None,
        program: None,
        clocks: None,
        clocks_moved: None,
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
    block.or_else(|| grid_violation(&result.limits, planned.grid, 1))
}

/// A grid of `x` by `y` blocks above the device's limit in either axis (naming it), or one
/// that does not fit the 32-bit launch field: the one grid check of every command.
pub fn grid_violation(limits: &Limits, x: u64, y: u64) -> Option<String> {
    if let Some(d) = limits.max_grid_dims.as_ref() {
        for (axis, want, max) in [("x", x, d.value.0[0]), ("y", y, d.value.0[1])] {
            if want > max {
                return Some(match axis {
                    "x" if y == 1 => format!("grid {want} > {}[x] = {max}", d.name),
                    _ => format!("grid {axis} = {want} > {}[{axis}] = {max}", d.name),
                });
            }
        }
    }
    (x > u32::MAX as u64 || y > u32::MAX as u64)
        .then(|| format!("grid {x}x{y} does not fit the 32-bit launch field"))
}

/// The static columns of one row: warps, idle lanes, residency, occupancy.
pub(crate) fn shape_row(limits: &Limits, planned: &PlannedRow) -> SweepRow {
    let threads = planned.block.threads();
    let warp = limits.warp();
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
        policy: planned.policy,
        ..SweepRow::new(planned.block)
    }
}

/// A row that ran above the kernel's own stated limit (not refused: `--strict-kernel-limit`
/// is off) says so with the limit, after any note the workload gave it.
/// The clock beside a row that ran: read after it; where it reads below
/// [`crate::clocks::SLOW_FRACTION`] of
/// the stated SM clock, the row is measured again once (`again`) and keeps the second
/// measurement, noted, and marked where the clock was still slow.
pub(crate) fn slow_clock_rule(
    read: &ReadClock<'_>,
    row: &mut SweepRow,
    again: impl FnOnce() -> Result<SweepRow, SweepError>,
) -> RowResult {
    let first = read();
    let Some(why) = first.as_ref().filter(|_| row.ran()).and_then(Clocks::slow) else {
        row.sm_mhz = first.map(|c| c.sm_mhz);
        return Ok(());
    };
    *row = again()?;
    let second = read();
    let still = second.as_ref().and_then(Clocks::slow);
    row.sm_mhz = second.map(|c| c.sm_mhz);
    row.slow_clock = still.is_some();
    add_note(
        row,
        match still {
            None => format!("measured again: the first measurement ran at {why}"),
            Some(now) => format!("measured twice on a slowed GPU: {why}, then {now}"),
        },
    );
    Ok(())
}

fn add_note(row: &mut SweepRow, note: String) {
    row.note = Some(match row.note.take() {
        Some(n) => format!("{n}; {note}"),
        None => note,
    });
}

fn note_above_kernel_limit(result: &SweepResult, row: &mut SweepRow) {
    let Some(v) = row
        .ran()
        .then(|| kernel_limit_violation(&result.kernel, row.block))
        .flatten()
    else {
        return;
    };
    add_note(row, format!("ran although {v}: the driver accepted it"));
}
