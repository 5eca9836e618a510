//! The sweep driver, written once for every API.
//!
//! A sweep is planned (block sizes, each with its grid and residency) and then executed on a
//! backend. Splitting the two lets a merged sweep plan once, from the best residency source
//! for the device (CUDA's occupancy API where CUDA sees it), and run the identical
//! (block, grid) pairs on every API.
//!
//! Per row: poison the output with NaN, run the warm-ups and timed dispatches, read the
//! output back and compare every pixel with the CPU reference. A mismatch stops the sweep.

use serde::{Deserialize, Serialize};

use crate::backend::{
    Api, Backend, BackendError, DeviceIdentity, ErrorKind, KernelFacts, Launch,
    OccupancySuggestion, Residency, TimerInfo,
};
use crate::blocks::BlockSize;
use crate::frame::{Frame, FrameInfo, BYTES_PER_PIXEL};
use crate::grid::{model_blocks_per_mp, GridPolicy};
use crate::limits::Limits;
use crate::verify::verify;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepConfig {
    pub blocks: Vec<BlockSize>,
    pub grid: GridPolicy,
    pub warmups: u32,
    pub reps: u32,
    /// Launch blocks above the compiled kernel's own limit (CL_KERNEL_WORK_GROUP_SIZE,
    /// CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK) and let the API accept or reject them. Device
    /// limits are always enforced. Off by default: the specifications say such launches fail.
    #[serde(default)]
    pub past_kernel_limit: bool,
}

impl Default for SweepConfig {
    fn default() -> Self {
        SweepConfig {
            blocks: crate::blocks::default_blocks(),
            grid: GridPolicy::Wave,
            warmups: 3,
            reps: 10,
            past_kernel_limit: false,
        }
    }
}

/// One planned row: the launch every API will run for this block size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedRow {
    pub block: BlockSize,
    pub grid: u64,
    pub residency: Option<Residency>,
}

/// A planned sweep and who decided its grids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub rows: Vec<PlannedRow>,
    pub policy: GridPolicy,
    /// e.g. "CUDA cuOccupancyMaxActiveBlocksPerMultiprocessor on NVIDIA H200".
    pub grid_source: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimeStats {
    pub mean: f64,
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl TimeStats {
    pub fn of(times: &[f64]) -> Option<TimeStats> {
        if times.is_empty() {
            return None;
        }
        let mut s = times.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        };
        Some(TimeStats {
            mean: s.iter().sum::<f64>() / n as f64,
            min: s[0],
            median,
            max: s[n - 1],
        })
    }
}

/// One row of the seed's table, for one API.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepRow {
    pub block: BlockSize,
    pub threads: u64,
    /// Warps (subgroups) per block: ceil(threads / warp size).
    pub warps: Option<u64>,
    /// Lanes of the last warp that never run: warps * warp size - threads.
    pub idle_lanes: Option<u64>,
    pub blocks_per_mp: Option<u32>,
    pub warps_per_mp: Option<u64>,
    /// warps_per_mp / max resident warps per multiprocessor.
    pub occupancy: Option<f64>,
    pub grid: u64,
    /// Every timed dispatch, in milliseconds on the device's clock.
    pub times_ms: Vec<f64>,
    pub stats: Option<TimeStats>,
    /// 16 bytes per pixel / mean time, in 10^9 bytes per second.
    pub gbps: Option<f64>,
    /// Best mean time / this row's mean time (1.00 for the fastest row).
    pub of_best: Option<f64>,
    /// This row's GB/s over the same API's device-to-device copy GB/s.
    pub of_copy: Option<f64>,
    pub verified: bool,
    /// Why this row did not run, where it did not.
    pub skipped: Option<String>,
    /// Anything a reader must know about a row that ran (e.g. above the kernel's own limit).
    #[serde(default)]
    pub note: Option<String>,
}

impl SweepRow {
    pub fn ran(&self) -> bool {
        self.skipped.is_none() && self.stats.is_some()
    }
}

/// The device-to-device copy that serves as the bandwidth ceiling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopyCeiling {
    /// How the copy was made (API call or shader), from the backend.
    #[serde(default)]
    pub method: String,
    pub bytes: u64,
    pub times_ms: Vec<f64>,
    pub stats: TimeStats,
    /// Bytes read plus bytes written over the mean time.
    pub gbps: f64,
}

/// Everything one API's sweep measured, enough to re-render or compare later.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepResult {
    pub api: Api,
    pub device: DeviceIdentity,
    pub limits: Limits,
    pub kernel: KernelFacts,
    pub timer: TimerInfo,
    pub frame: FrameInfo,
    pub policy: GridPolicy,
    pub grid_source: String,
    pub warmups: u32,
    pub reps: u32,
    pub rows: Vec<SweepRow>,
    pub suggestion: Option<OccupancySuggestion>,
    pub copy: Option<CopyCeiling>,
    /// Set when the sweep stopped early; the rows before it are kept.
    pub error: Option<String>,
}

impl SweepResult {
    /// The fastest row that ran.
    pub fn best(&self) -> Option<&SweepRow> {
        self.rows
            .iter()
            .filter(|r| r.ran())
            .min_by(|a, b| a.stats.unwrap().mean.total_cmp(&b.stats.unwrap().mean))
    }

    /// How many rows reach at least `fraction` of the best row's speed.
    pub fn rows_within(&self, fraction: f64) -> usize {
        self.rows
            .iter()
            .filter(|r| r.of_best.is_some_and(|o| o >= fraction))
            .count()
    }

    pub fn rows_run(&self) -> usize {
        self.rows.iter().filter(|r| r.ran()).count()
    }

    fn fill_relative(&mut self) {
        let best = self.best().and_then(|r| r.stats).map(|s| s.mean);
        let copy = self.copy.as_ref().map(|c| c.gbps);
        for r in &mut self.rows {
            if let (Some(b), Some(s)) = (best, r.stats) {
                r.of_best = Some(b / s.mean);
            }
            if let (Some(c), Some(g)) = (copy, r.gbps) {
                r.of_copy = Some(g / c);
            }
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum SweepError {
    #[error(
        "{api}: verification failed at block {block}, grid {grid}: first bad pixel index {index} \
         (got {got}, expected {expected}); {bad_pixels} of {pixels} pixels wrong"
    )]
    Mismatch {
        api: Api,
        block: BlockSize,
        grid: u64,
        index: u64,
        got: f32,
        expected: f32,
        bad_pixels: u64,
        pixels: u64,
    },
    #[error("{0}")]
    Backend(#[from] BackendError),
}

/// Progress callbacks; the CLI draws a bar with them. Both default to nothing.
pub trait Observer {
    fn row_started(&mut self, _api: Api, _index: usize, _count: usize, _block: BlockSize) {}
    fn row_finished(&mut self, _api: Api, _row: &SweepRow) {}
}

/// An observer that does nothing.
pub struct Quiet;
impl Observer for Quiet {}

/// Why a block cannot run on this backend, from its limits and the kernel's facts; `None` if
/// nothing rules it out. Names the limit so the user can look it up.
pub fn limit_violation(limits: &Limits, kernel: &KernelFacts, block: BlockSize) -> Option<String> {
    device_limit_violation(limits, block).or_else(|| kernel_limit_violation(kernel, block))
}

/// The compiled kernel's own limit, which some drivers report but do not enforce.
pub fn kernel_limit_violation(kernel: &KernelFacts, block: BlockSize) -> Option<String> {
    let k = kernel.max_block.as_ref()?;
    (block.threads() > k.value).then(|| {
        format!(
            "{} threads > {} = {} for this kernel",
            block.threads(),
            k.name,
            k.value
        )
    })
}

/// The device's limits on block shape and size.
pub fn device_limit_violation(limits: &Limits, block: BlockSize) -> Option<String> {
    let t = block.threads();
    if let Some(m) = &limits.max_threads_per_block {
        if t > m.value {
            return Some(format!("{t} threads > {} = {}", m.name, m.value));
        }
    }
    if let Some(d) = &limits.max_block_dims {
        for (axis, (&want, &max)) in ["x", "y", "z"]
            .iter()
            .zip([block.x, block.y, block.z].iter().zip(&d.value.0))
        {
            if want as u64 > max {
                return Some(format!("{axis} = {want} > {}[{axis}] = {max}", d.name));
            }
        }
    }
    None
}

/// Residency from the model in the core, for APIs without an occupancy query.
pub fn modelled_residency(
    limits: &Limits,
    kernel: &KernelFacts,
    block: BlockSize,
) -> Option<Residency> {
    let m = limits.mp_model.as_ref()?;
    let regs = kernel.registers.as_ref().map(|r| r.value);
    let n = model_blocks_per_mp(m, block.threads(), regs);
    let reg_note = match &kernel.registers {
        Some(r) => format!(" + {} registers/thread ({})", r.value, r.name),
        None => " (register count unknown: not counted)".into(),
    };
    Some(Residency {
        blocks_per_mp: n,
        source: format!("{}{}", m.source, reg_note),
    })
}

/// Plans the rows for `backend`: grid from `policy`, residency from the backend (or the model).
pub fn plan(
    backend: &mut dyn Backend,
    pixels: u64,
    config: &SweepConfig,
) -> Result<Plan, BackendError> {
    let limits = backend.limits().clone();
    let kernel = backend.kernel_facts().clone();
    let mps = Limits::value(&limits.multiprocessors).unwrap_or(1);
    let max_grid_x = limits.max_grid_dims.as_ref().map(|d| d.value.0[0]);
    let mut rows = Vec::new();
    let mut sources: Vec<String> = Vec::new();
    for &block in &config.blocks {
        let blocked = match config.past_kernel_limit {
            true => device_limit_violation(&limits, block),
            false => limit_violation(&limits, &kernel, block),
        };
        let residency = if blocked.is_some() {
            None
        } else {
            match backend.residency(block)? {
                Some(r) => Some(r),
                None => modelled_residency(&limits, &kernel, block),
            }
        };
        if let Some(r) = &residency {
            if !sources.contains(&r.source) {
                sources.push(r.source.clone());
            }
        }
        let resident = residency.as_ref().map(|r| r.blocks_per_mp.max(1));
        let mut grid = config.grid.grid(block, pixels, resident, mps, max_grid_x);
        if let (GridPolicy::Wave, Some(cap)) = (config.grid, &limits.max_loop_iterations) {
            // A driver that ends loops early needs enough threads that none loops past it.
            let floor = pixels.div_ceil(block.x as u64 * cap.value.max(1));
            if floor > grid {
                grid = floor;
                let note = format!(
                    "raised to at least ceil(pixels / (block x {} = {}))",
                    cap.name, cap.value
                );
                if !sources.contains(&note) {
                    sources.push(note);
                }
            }
        }
        rows.push(PlannedRow {
            block,
            grid,
            residency,
        });
    }
    let who = format!("{} on {}", backend.api(), backend.identity().name);
    let grid_source = match config.grid {
        GridPolicy::Wave if sources.is_empty() => format!(
            "{who}: no occupancy data for this device (a {} device has no warp slots to model); \
             wave = 1 {} per compute unit x {mps} compute units",
            backend.identity().kind,
            backend.api().block_word()
        ),
        GridPolicy::Wave => format!("{who}: {}", sources.join("; ")),
        GridPolicy::Data => "data: ceil(pixels / threads per block)".into(),
        GridPolicy::Fixed(n) => format!("fixed: {n} blocks for every row"),
    };
    Ok(Plan {
        rows,
        policy: config.grid,
        grid_source,
    })
}

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
