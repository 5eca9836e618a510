//! The sweep as a task of the pipeline: a [`Workload`] (the frame, or a user's kernel) over the
//! sweep's block sizes, each API's result a [`SweepResult`] of the run's [`Report`].

use super::Workload;
use crate::backend::{Api, Backend, BackendError, DeviceKind, KernelVariant};
use crate::blocks::BlockSize;
use crate::clocks::{ClockReader, TurnClocks};
use crate::limits::Limits;
use crate::provider::Targets;
use crate::report::Report;
use crate::report::{Failure, Partial};
use crate::session::pipeline::{self, Job, Opener};
use crate::session::{Ran, SessionError, Source, SweepOutcome, Task, Turn};
use crate::sweep::{self, Observer, Plan, SweepConfig, SweepResult, SweepRun};

/// What one pipelined sweep is asked to do.
pub struct SweepJob<'a> {
    pub targets: Targets,
    pub config: &'a SweepConfig,
    /// Close each API while the next is measured (see [`pipeline`]'s notes); ignored when a
    /// target is not a GPU, as there the host's cores are the device.
    pub overlap_close: bool,
    /// Reads the device's clocks around each API's turn ([`crate::clocks`]), where the caller
    /// has a reader.
    pub clocks: Option<&'a dyn ClockReader>,
}

/// Where a sweep's workload comes from (see [`Source`]).
pub type WorkloadSource<'a> = dyn Source<Workload> + 'a;

impl Task for Workload {
    type Answer = SweepResult;
    type Plan = Plan;
    type Settings = SweepConfig;

    fn describe(&self) -> String {
        match self {
            Workload::Frame(f) => f.describe(),
            Workload::Kernel(k) => k.describe(),
        }
    }

    fn fits(&self, limits: &Limits) -> Result<(), String> {
        match self {
            Workload::Frame(f) => f.fits(limits),
            Workload::Kernel(k) => k.fits(limits),
        }
    }

    fn check_host(&self, apis: &[(Api, DeviceKind)]) -> Result<(), String> {
        match self {
            Workload::Frame(f) => f.check_host(apis),
            Workload::Kernel(k) => k.check_host(apis),
        }
    }

    /// The frame's planes, a kernel's buffers with their guard bands.
    fn device_bytes(&self) -> Option<u64> {
        Some(match self {
            Workload::Frame(f) => f.device_bytes(),
            Workload::Kernel(k) => k.device_bytes(),
        })
    }

    /// Uploads the frame beside the built-in kernel; builds the user's kernel and fills its
    /// buffers.
    fn prepare(&self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        match self {
            Workload::Frame(f) => {
                crate::builtin::load(backend, KernelVariant::GridStride, &f.frame)
            }
            Workload::Kernel(k) => k.prepare(backend),
        }
    }

    /// The sweep's first block picks the planner: an API that answers its residency.
    fn shared_plan(&self, config: &SweepConfig) -> Option<Option<BlockSize>> {
        Some(config.blocks.first().copied())
    }

    /// The rows over the work items: pixels, or the kernel's work items.
    fn plan(&self, planner: &mut dyn Backend, config: &SweepConfig) -> Result<Plan, BackendError> {
        let items = match self {
            Workload::Frame(f) => f.frame.pixels(),
            Workload::Kernel(k) => k.items(),
        };
        sweep::plan(planner, items, config)
    }

    /// Measures and checks every planned row under the run's configuration, a cold protocol's
    /// flush sized for this device.
    fn turn(&self, backend: &mut dyn Backend, prepared: bool, turn: Turn<'_, Self>) -> Ran<Self> {
        let mut config = turn.settings.clone();
        let caches = &turn.settings.protocol.caches;
        if caches.is_cold() {
            let sized = caches.sized(backend.limits(), turn.peer_llc);
            config.protocol = config.protocol.with_caches(sized);
        }
        if let Workload::Frame(_) = self {
            // The sweep uploads the frame itself where `prepare` failed.
            config.frame_on_device = prepared;
        }
        let how = SweepRun {
            config: &config,
            shared: turn.shared,
            observer: turn.observer,
            on_row: turn.on_row,
            clock: turn.clock,
        };
        let (result, err) = match self {
            Workload::Frame(f) => sweep::run(backend, &f.frame, &f.reference, how),
            Workload::Kernel(k) => k.measure(backend, prepared, how),
        };
        (Some(result), err)
    }

    /// The APIs a user's kernel's outputs on the others contradict.
    fn conclude(&self) -> Vec<Failure> {
        match self {
            Workload::Frame(_) => Vec::new(),
            Workload::Kernel(k) => k.blames(),
        }
    }

    fn record_clocks(&self, result: &mut SweepResult, clocks: TurnClocks) {
        result.set_clocks(clocks);
    }

    fn discredit(&self, result: &mut SweepResult, why: &str) {
        result.error = Some(why.to_string());
        for row in &mut result.rows {
            row.verified = false;
        }
    }

    fn is_empty(&self, result: &SweepResult) -> bool {
        result.rows.is_empty()
    }
}

/// Sweeps every target through the pipeline into `report`; `on_update` sees the report after
/// every row, marked interrupted there (where the run stood, should it end before the next
/// save) and unmarked once the pipeline has finished.
pub fn sweep(
    open: &Opener,
    job: &SweepJob,
    work: &mut WorkloadSource<'_>,
    report: &mut Report,
    observer: &mut dyn Observer,
    on_update: &mut dyn FnMut(&Report),
) -> Result<SweepOutcome, SessionError> {
    if job.targets.devices.len() > 1 {
        report.device_match = Some(job.targets.note.clone());
    }
    let run = Job {
        targets: &job.targets,
        settings: job.config,
        blocks: &job.config.blocks,
        overlap_close: job.overlap_close,
        clocks: job.clocks,
    };
    let planned = job.config.launches().len();
    let apis: Vec<Api> = job.targets.devices.iter().map(|d| d.api).collect();
    let mut last_turn = None;
    let finished = pipeline::run(open, &run, work, observer, &mut |p| {
        report.results = p.answers().cloned().collect();
        report.failures = p.failures().cloned().collect();
        last_turn = p.current.map(|(i, _)| i).or(last_turn);
        let rows = |a: &SweepResult| a.rows.len();
        report.partial = Partial::at(p.stood(&apis, last_turn, rows, Some(planned)));
        on_update(report);
    })?;
    report.partial = Partial::default();
    report.failures = finished.failures.clone();
    let finished = finished.require_any()?;
    report.results = finished.answers;
    report.shared_plan = finished.shared_plan;
    Ok(finished.outcome)
}

/// How one device's sweep ended.
#[derive(Debug, Clone, PartialEq)]
pub enum Ended {
    /// Measured (perhaps with failures recorded in the report).
    Measured { failed: bool },
    /// Bad input found during the run (a frame too large when allocated, no row of the given
    /// sizes could run).
    BadInput(String),
    /// No row of the default sizes could run on any API.
    NothingRan(String),
}

/// Sweeps one physical device (see [`sweep`]), its answer refreshed after every row and at the
/// end, and says how it ended; `sizes_given`: the block sizes were the user's, so that none
/// running is bad input rather than a failure.
pub fn sweep_device(
    open: &Opener,
    job: &SweepJob,
    work: &mut WorkloadSource<'_>,
    report: &mut Report,
    observer: &mut dyn Observer,
    on_update: &mut dyn FnMut(&Report),
    sizes_given: bool,
) -> Result<Ended, SessionError> {
    let mut on_row = |r: &Report| {
        let mut r = r.clone();
        r.refresh_answer();
        on_update(&r);
    };
    let outcome = sweep(open, job, work, report, observer, &mut on_row)?;
    report.refresh_answer();
    // Out of memory is the frame's size (bad input) only where no API measured anything: an API
    // that found the device's memory taken by another's copy fails alone, under its name, and
    // the rows the others measured are kept (the H100's 50000x50000 frame: CUDA's verified rows
    // had been dropped with an exit code 2).
    if let Some(msg) = outcome.too_big {
        return Ok(match crate::session::nothing_ran(report) {
            Some(_) => Ended::BadInput(msg),
            None => Ended::Measured { failed: true },
        });
    }
    if !outcome.failed {
        if let Some(why) = crate::session::nothing_ran(report) {
            // A run that measured nothing writes nothing: with the sizes given, the sizes were
            // wrong (bad input); with the default ones, the device's limits refused them all (a
            // driver reporting a zero limit): a failure.
            return Ok(match sizes_given {
                true => Ended::BadInput(why),
                false => Ended::NothingRan(why),
            });
        }
    }
    let failed = outcome.failed || !report.failures.is_empty();
    Ok(Ended::Measured { failed })
}
