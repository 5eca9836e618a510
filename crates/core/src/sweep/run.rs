//! Execution: poison, dispatch, read back and verify each planned row; the copy ceiling.

use super::{device_limit_violation, kernel_limit_violation, limit_violation};
use super::{
    plan, CopyCeiling, Observer, Plan, PlannedRow, SweepConfig, SweepError, SweepResult, SweepRow,
    TimeStats,
};
use crate::backend::{Backend, BackendError, ErrorKind, Launch};
use crate::frame::{Frame, BYTES_PER_PIXEL};
use crate::limits::Limits;
use crate::verify::verify;

/// Runs a planned sweep on one backend. Returns the result with every row measured so far;
/// an error that stops the sweep is returned beside it (and recorded in `result.error`).
pub fn execute(
    backend: &mut dyn Backend,
    frame: &Frame,
    reference: &[f32],
    plan: &Plan,
    config: &SweepConfig,
    observer: &mut dyn Observer,
) -> (SweepResult, Option<SweepError>) {
    let mut result = new_result(backend, frame, plan, config);
    let err = run_rows(
        backend,
        frame,
        reference,
        plan,
        config,
        observer,
        &mut result,
    )
    .err();
    result.fill_relative();
    if let Some(e) = &err {
        result.error = Some(e.to_string());
    }
    (result, err)
}

fn new_result(
    backend: &dyn Backend,
    frame: &Frame,
    plan: &Plan,
    config: &SweepConfig,
) -> SweepResult {
    SweepResult {
        api: backend.api(),
        device: backend.identity().clone(),
        limits: backend.limits().clone(),
        kernel: backend.kernel_facts().clone(),
        timer: backend.timer(),
        frame: frame.info(),
        policy: plan.policy,
        grid_source: plan.grid_source.clone(),
        warmups: config.warmups,
        reps: config.reps,
        rows: Vec::new(),
        suggestion: None,
        copy: None,
        error: None,
    }
}

fn run_rows(
    backend: &mut dyn Backend,
    frame: &Frame,
    reference: &[f32],
    plan: &Plan,
    config: &SweepConfig,
    observer: &mut dyn Observer,
    result: &mut SweepResult,
) -> Result<(), SweepError> {
    let api = backend.api();
    backend.upload(frame)?;
    result.suggestion = backend.occupancy_suggestion()?;
    let mut output = vec![0f32; frame.pixels() as usize];
    let count = plan.rows.len();
    for (i, planned) in plan.rows.iter().enumerate() {
        observer.row_started(api, i, count, planned.block);
        let mut row = shape_row(&result.limits, planned);
        if config.past_kernel_limit {
            row.skipped = device_limit_violation(&result.limits, planned.block);
            row.note = kernel_limit_violation(&result.kernel, planned.block)
                .map(|v| format!("ran although {v}: the driver accepted it"));
        } else {
            row.skipped = limit_violation(&result.limits, &result.kernel, planned.block);
        }
        if row.skipped.is_none() {
            if let Some(max) = result
                .limits
                .max_grid_dims
                .as_ref()
                .filter(|m| planned.grid > m.value.0[0])
            {
                row.skipped = Some(format!(
                    "grid {} > {}[x] = {}",
                    planned.grid, max.name, max.value.0[0]
                ));
            } else if planned.grid > u32::MAX as u64 {
                row.skipped = Some(format!(
                    "grid {} does not fit the 32-bit launch field",
                    planned.grid
                ));
            }
        }
        if row.skipped.is_none() {
            let launch = Launch {
                block: planned.block,
                grid: planned.grid as u32,
            };
            backend.poison_output()?;
            match backend.dispatch_timed(launch, config.warmups, config.reps) {
                Ok(times) => {
                    backend.read_output(&mut output)?;
                    if let Err(m) = verify(&output, reference) {
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
                    row.stats = TimeStats::of(&times);
                    row.gbps = row
                        .stats
                        .map(|s| frame.pixels() as f64 * BYTES_PER_PIXEL as f64 / (s.mean * 1e6));
                    row.times_ms = times;
                }
                // The API's own refusal is a result worth showing, not a reason to stop.
                Err(e) if e.kind == ErrorKind::LaunchRejected => {
                    row.skipped = Some(format!("rejected by {api}: {}", e.message));
                }
                Err(e) => return Err(e.into()),
            }
        }
        observer.row_finished(api, &row);
        result.rows.push(row);
    }
    Ok(())
}

/// The seed's static columns for one row: warps, idle lanes, residency, occupancy.
fn shape_row(limits: &Limits, planned: &PlannedRow) -> SweepRow {
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
        times_ms: Vec::new(),
        stats: None,
        gbps: None,
        of_best: None,
        of_copy: None,
        verified: false,
        skipped: None,
        note: None,
    }
}

/// Measures the device-to-device copy ceiling: `bytes` copied (read + written counted).
pub fn measure_copy(
    backend: &mut dyn Backend,
    bytes: u64,
    config: &SweepConfig,
) -> Result<Option<CopyCeiling>, BackendError> {
    let Some(times) = backend.copy_timed(bytes, config.warmups, config.reps)? else {
        return Ok(None);
    };
    let Some(stats) = TimeStats::of(&times) else {
        return Ok(None);
    };
    Ok(Some(CopyCeiling {
        method: backend.copy_method(),
        bytes,
        gbps: 2.0 * bytes as f64 / (stats.mean * 1e6),
        times_ms: times,
        stats,
    }))
}

/// Plan, copy ceiling and rows for one backend: the whole single-API sweep.
pub fn run(
    backend: &mut dyn Backend,
    frame: &Frame,
    reference: &[f32],
    config: &SweepConfig,
    plan_override: Option<&Plan>,
    copy_bytes: Option<u64>,
    observer: &mut dyn Observer,
) -> (SweepResult, Option<SweepError>) {
    let owned;
    let plan = match plan_override {
        Some(p) => p,
        None => match plan(backend, frame.pixels(), config) {
            Ok(p) => {
                owned = p;
                &owned
            }
            Err(e) => {
                let p = Plan {
                    rows: Vec::new(),
                    policy: config.grid,
                    grid_source: String::new(),
                };
                let mut r = new_result(backend, frame, &p, config);
                r.error = Some(e.to_string());
                return (r, Some(e.into()));
            }
        },
    };
    let (mut result, err) = execute(backend, frame, reference, plan, config, observer);
    if err.is_none() {
        if let Some(bytes) = copy_bytes {
            match measure_copy(backend, bytes, config) {
                Ok(c) => {
                    result.copy = c;
                    result.fill_relative();
                }
                Err(e) => {
                    result.error = Some(e.to_string());
                    return (result, Some(e.into()));
                }
            }
        }
    }
    (result, err)
}
