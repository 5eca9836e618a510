//! The sweep driver, written once for every API.
//!
//! A sweep is planned (block sizes, each with its grid and residency) and then executed on a
//! backend. Splitting the two lets a merged sweep plan once, from the best residency source
//! for the device (CUDA's occupancy API where CUDA sees it), and run the identical
//! (block, grid) pairs on every API.
//!
//! Per row, one checked dispatch (`check.rs`, the one a user's kernel shares): poison the
//! output with NaN, measure under the [`Protocol`] (warm-ups, then back-to-back timed batches;
//! see [`crate::measure`]), read the output back and compare every pixel with the CPU
//! reference. A mismatch stops the sweep.

mod check;
mod error;
mod plan;
mod rows;
mod run;
#[cfg(test)]
mod tests;

/// The checked dispatch's test doubles, for the user kernel's check's tests.
#[cfg(test)]
pub(crate) use check::tests as check_tests;
pub(crate) use check::{
    checked_dispatch, Dispatched, FrameCheck, FrameReadback, Matched, OutputCheck,
};
pub use error::{RowFault, SweepError};
pub use plan::{
    device_limit_violation, kernel_limit_violation, limit_violation, modelled_residency, plan,
    planner, shared_violation,
};
pub use rows::{grid_violation, ReadClock, SweepRun};
pub(crate) use rows::{new_result, skip_rejected, RowResult};
pub use run::{copy_ceiling, execute, measure_copy, run};

pub use crate::measure::{Discipline, Protocol, Reps, TimeStats, Timing};

use serde::{Deserialize, Serialize};

use crate::backend::{Api, DeviceIdentity, KernelFacts, OccupancySuggestion, Residency, TimerInfo};
use crate::blocks::BlockSize;
use crate::clocks::TurnClocks;
use crate::frame::FrameInfo;
use crate::grid::GridPolicy;
use crate::limits::Limits;
use crate::measure::ties;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SweepConfig {
    pub blocks: Vec<BlockSize>,
    pub grid: GridPolicy,
    pub protocol: Protocol,
    /// Skip blocks above the compiled kernel's own limit (CL_KERNEL_WORK_GROUP_SIZE,
    /// CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK), as the specifications say such launches fail.
    /// Off by default: a launch above it is well defined in CUDA and OpenCL (the API returns an
    /// error) and Vulkan has no such limit, so the API decides. Device limits always apply.
    #[serde(default)]
    pub strict_kernel_limit: bool,
    /// Measure the same-traffic device-to-device copy that serves as each API's ceiling.
    #[serde(default)]
    pub copy: bool,
    /// The kernel the rows run is loaded on the frame already (the sweep's pipeline loads the
    /// grid-stride built-in and uploads the planes while the APIs open; a test may load another
    /// built-in): the sweep loads nothing.
    #[serde(skip)]
    pub frame_on_device: bool,
    /// The grid axis of a tune: the (block, grid policy) pairs to run, in order. Empty (the
    /// default): every block of `blocks` at `grid`, one row each.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub pairs: Vec<(BlockSize, GridPolicy)>,
}

impl SweepConfig {
    /// What the plan runs: `pairs`, else every block at `grid`.
    pub fn launches(&self) -> Vec<(BlockSize, GridPolicy)> {
        match self.pairs.is_empty() {
            true => self.blocks.iter().map(|&b| (b, self.grid)).collect(),
            false => self.pairs.clone(),
        }
    }
}

impl Default for SweepConfig {
    fn default() -> Self {
        SweepConfig {
            blocks: crate::blocks::default_blocks(),
            grid: GridPolicy::Wave,
            protocol: Protocol::default(),
            strict_kernel_limit: false,
            copy: true,
            frame_on_device: false,
            pairs: Vec::new(),
        }
    }
}

/// One planned row: the launch every API will run for this block size.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PlannedRow {
    pub block: BlockSize,
    pub grid: u64,
    pub residency: Option<Residency>,
    /// The grid policy of this row where the sweep has a grid axis (a tune); `None` when every
    /// row has the plan's policy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<GridPolicy>,
}

/// A planned sweep and who decided its grids.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Plan {
    pub rows: Vec<PlannedRow>,
    pub policy: GridPolicy,
    /// e.g. "CUDA cuOccupancyMaxActiveBlocksPerMultiprocessor on NVIDIA H200".
    pub grid_source: String,
}

/// One row of the sweep's table, for one API.
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
    /// How the row was timed: discipline, count, batch interval, per-dispatch samples (ms on
    /// the device's clock) and their statistics. `None` for a row that did not run.
    pub timing: Option<Timing>,
    /// 16 bytes per pixel / mean time, in 10^9 bytes per second.
    pub gbps: Option<f64>,
    /// Best mean time / this row's mean time (1.00 for the fastest row).
    pub of_best: Option<f64>,
    /// Within the measurement noise of the fastest row ([`crate::measure::ties`]): the data
    /// cannot tell this row from the best.
    #[serde(default)]
    pub ties_best: bool,
    /// What the figures allow a reader to say about this row ([`Verdict::of`]): the one rule
    /// every table, answer and file applies. `None` for a row that did not run.
    #[serde(default)]
    pub verdict: Option<Verdict>,
    /// This row's GB/s over the same API's device-to-device copy GB/s.
    pub of_copy: Option<f64>,
    pub verified: bool,
    /// Why this row did not run, where it did not.
    pub skipped: Option<String>,
    /// Anything a reader must know about a row that ran (e.g. above the kernel's own limit).
    #[serde(default)]
    pub note: Option<String>,
    /// The row's grid policy where the sweep has a grid axis (a tune); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<GridPolicy>,
    /// The GPU's SM clock read right after the row was timed, where a clock reader read it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sm_mhz: Option<u32>,
    /// Measured twice below [`crate::clocks::SLOW_FRACTION`] of the stated SM clock: the row's
    /// figures are the slowed GPU's (its note says at what clock).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub slow_clock: bool,
}

impl SweepRow {
    /// A row of `block` that has not run yet: one block, nothing known about its shape.
    pub fn new(block: BlockSize) -> SweepRow {
        SweepRow {
            block,
            threads: block.threads(),
            warps: None,
            idle_lanes: None,
            blocks_per_mp: None,
            warps_per_mp: None,
            occupancy: None,
            grid: 1,
            timing: None,
            gbps: None,
            of_best: None,
            ties_best: false,
            verdict: None,
            of_copy: None,
            verified: false,
            skipped: None,
            note: None,
            policy: None,
            sm_mhz: None,
            slow_clock: false,
        }
    }

    pub fn ran(&self) -> bool {
        self.skipped.is_none() && self.timing.is_some()
    }

    pub fn stats(&self) -> Option<&TimeStats> {
        self.timing.as_ref().map(|t| &t.stats)
    }

    /// The row's mean time in milliseconds.
    pub fn mean_ms(&self) -> Option<f64> {
        self.stats().map(|s| s.mean)
    }
}

/// A row against its API's fastest row, by one rule: "good" is at least [`GOOD_FRACTION`] of
/// the best's speed, "tied" is within the measurement noise of it ([`crate::measure::ties`]).
/// Where the two disagree (a row below the band that the noise cannot tell from the best) the
/// row is [`Verdict::Unranked`]: the data cannot say whether it is good, and nothing counts it
/// as good.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// The fastest row.
    Best,
    /// Good, and within the noise of the best: the data cannot tell the two apart.
    Tied,
    /// Good, and measurably slower than the best.
    Good,
    /// Below the band, yet within the noise of the best: the spread is too wide to rank it.
    Unranked,
    /// Below the band, and measurably slower.
    Short,
}

/// Rows at least this fraction of their API's best are "good" (95 percent, as the guide reads them).
pub const GOOD_FRACTION: f64 = 0.95;

impl Verdict {
    pub fn of(best: bool, of_best: f64, ties: bool) -> Verdict {
        match (best, of_best >= GOOD_FRACTION, ties) {
            (true, _, _) => Verdict::Best,
            (false, true, true) => Verdict::Tied,
            (false, true, false) => Verdict::Good,
            (false, false, true) => Verdict::Unranked,
            (false, false, false) => Verdict::Short,
        }
    }

    /// Within the band: counted in "N of M sizes within 95 %" and in the portable answer.
    pub fn good(self) -> bool {
        matches!(self, Verdict::Best | Verdict::Tied | Verdict::Good)
    }

    /// The mark after "of best" in tables: `≈` where the data cannot tell the row from the
    /// best, `?` where it cannot rank the row at all.
    pub fn mark(self) -> &'static str {
        match self {
            Verdict::Best | Verdict::Tied => " ≈",
            Verdict::Unranked => " ?",
            Verdict::Good | Verdict::Short => "",
        }
    }

    pub fn key(self) -> &'static str {
        match self {
            Verdict::Best => "best",
            Verdict::Tied => "tied",
            Verdict::Good => "good",
            Verdict::Unranked => "unranked",
            Verdict::Short => "short",
        }
    }
}

/// The device-to-device copy that serves as the bandwidth ceiling.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CopyCeiling {
    /// How the copy was made (API call or shader), from the backend.
    #[serde(default)]
    pub method: String,
    pub bytes: u64,
    pub timing: Timing,
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
    pub protocol: Protocol,
    pub rows: Vec<SweepRow>,
    pub suggestion: Option<OccupancySuggestion>,
    pub copy: Option<CopyCeiling>,
    /// Set when the sweep stopped early; the rows before it are kept.
    pub error: Option<String>,
    /// A user's kernel (`sweep --kernel`): what ran instead of the grayscale frame, whose
    /// `frame` then holds the work's extent and the bytes one dispatch moves.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub program: Option<ProgramInfo>,
    /// The device's clocks at the start and end of this API's turn, where a
    /// [`crate::clocks::ClockReader`] had them (a GPU whose management library loads).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocks: Option<TurnClocks>,
    /// Why this API's rows ran on moving clocks ([`TurnClocks::moved`]): the SM clock changed
    /// during the turn, or a reason that slows the device was set; `None` where they held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clocks_moved: Option<String>,
}

/// Which user's kernel a result measured, and how its outputs were checked.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ProgramInfo {
    /// The spec's `name`.
    pub name: String,
    /// The spec file, as given.
    pub spec: String,
    /// The sizes it ran at: "n=16777216".
    pub sizes: String,
    /// Where the source came from and its language: "saxpy.cu (CUDA C++), entry saxpy".
    pub source: String,
    /// The written buffers, each checked at every size, and how.
    pub checked: Vec<String>,
    /// Whether GB/s could be computed (the spec gave bytes per work item).
    pub bytes_known: bool,
    /// The written buffers checked against a file of expected contents (`reference` in the
    /// spec), each with its file; empty when the spec names none.
    #[serde(default, skip_serializing_if = "std::collections::BTreeMap::is_empty")]
    pub reference_files: std::collections::BTreeMap<String, String>,
    /// SHA-256 of the spec's file, sources and sizes (absent in files written before it was
    /// recorded: which spec ran is then unknown).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spec_hash: Option<String>,
}

impl SweepResult {
    /// Records the clocks around this API's turn, and whether they moved.
    pub fn set_clocks(&mut self, clocks: TurnClocks) {
        self.clocks_moved = clocks.moved();
        self.clocks = Some(clocks);
    }

    /// The fastest row that ran.
    pub fn best(&self) -> Option<&SweepRow> {
        self.rows.iter().filter(|r| r.ran()).min_by(|a, b| {
            a.mean_ms()
                .unwrap_or(f64::MAX)
                .total_cmp(&b.mean_ms().unwrap_or(f64::MAX))
        })
    }

    /// How many rows are good ([`Verdict::good`]): within 95 % of the best row's speed and
    /// not [`Verdict::Unranked`].
    pub fn rows_good(&self) -> usize {
        self.rows
            .iter()
            .filter(|r| r.verdict.is_some_and(Verdict::good))
            .count()
    }

    /// Rows the noise cannot rank ([`Verdict::Unranked`]).
    pub fn rows_unranked(&self) -> Vec<&SweepRow> {
        self.rows
            .iter()
            .filter(|r| r.verdict == Some(Verdict::Unranked))
            .collect()
    }

    /// The widest per-dispatch spread (coefficient of variation) of a row that ran, and its row.
    pub fn widest_spread(&self) -> Option<(&SweepRow, f64)> {
        self.rows
            .iter()
            .filter_map(|r| r.stats().map(|s| (r, s.cv())))
            .max_by(|a, b| a.1.total_cmp(&b.1))
    }

    pub fn rows_run(&self) -> usize {
        self.rows.iter().filter(|r| r.ran()).count()
    }

    /// Fills `of_best`, `ties_best` and `of_copy` from the rows and the copy ceiling.
    pub fn fill_relative(&mut self) {
        // A tune has several rows per block (one per grid): the best is one row, by position.
        let best_at = self.best().map(|b| b as *const SweepRow as usize);
        let best = self.best().and_then(|r| r.timing.clone());
        let copy = self.copy.as_ref().map(|c| c.gbps);
        let resolution_ms = self.timer.resolution_ns / 1e6;
        for r in &mut self.rows {
            if let (Some(b), Some(t)) = (&best, &r.timing) {
                let of_best = b.stats.mean / t.stats.mean;
                r.of_best = Some(of_best);
                r.ties_best = ties(&t.stats, &b.stats, resolution_ms, t.reps.min(b.reps));
                r.verdict = Some(Verdict::of(
                    best_at == Some(&*r as *const SweepRow as usize),
                    of_best,
                    r.ties_best,
                ));
            }
            if let (Some(c), Some(g)) = (copy, r.gbps) {
                r.of_copy = Some(g / c);
            }
        }
    }
}

/// Progress callbacks; the CLI draws a bar with them. All default to nothing.
pub trait Observer {
    /// A phase that is not a row: opening a device, compiling, generating the frame, the copy.
    fn status(&mut self, _api: Option<Api>, _what: &str) {}
    fn row_started(&mut self, _api: Api, _index: usize, _count: usize, _block: BlockSize) {}
    fn row_finished(&mut self, _api: Api, _row: &SweepRow) {}
}

/// An observer that does nothing.
pub struct Quiet;
impl Observer for Quiet {}
