//! How the commands reach the core's session pipeline: the devices `--backend` and `--device`
//! select, each API asked one thing ([`ask_each`]: `limits`), a task on each device
//! ([`run_each`]: `validate`), where each API opens ([`open_options`]: in a worker process or
//! here), and the sweep ([`Sweep`]): each physical device in turn, with
//! the progress bar, the frame's fit checked against the APIs in the run, and how each
//! device's sweep ended (measured, bad input, nothing ran) sorted into exit codes.

use blocksweep_core::report::Report;
use blocksweep_core::session::{self, SessionError, Source, Task};
use blocksweep_core::sweep::SweepConfig;
use blocksweep_core::workload::{self, Ended, SweepJob, Work, WorkloadSource};
use blocksweep_core::{Backend, BackendError, DeviceIdentity, OpenOptions, Registry, Targets};

use crate::args::{DeviceArgs, SweepArgs};
use crate::progress::Bar;
use crate::usage;

/// "blocksweep 0.x.y": the tool line of every report.
pub fn tool() -> String {
    format!("blocksweep {}", env!("CARGO_PKG_VERSION"))
}

/// Now, as every report dates its run (RFC 3339, seconds).
pub fn now() -> String {
    humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string()
}

/// Every API in the provider list, probed.
pub fn registry() -> Registry {
    Registry::probe(blocksweep_apis::all())
}

/// Resolves `--backend` and `--device` into API devices, one [`Targets`] per physical device
/// (`--device all` or a list gives several); a choice that matches nothing is bad input.
pub fn resolve_each(reg: &Registry, args: &DeviceArgs) -> anyhow::Result<Vec<Targets>> {
    reg.targets_each(&args.choice(), args.device.as_deref())
        .map_err(usage)
}

/// One physical device's answers, one per API that answered (`limits`, `validate`).
pub struct Answers<T> {
    pub heading: String,
    pub one_physical_device: bool,
    pub answers: Vec<T>,
}

/// Asks each API of each selected physical device one thing (`limits`), each failure said
/// on stderr. Returns the answers per device, and whether anything failed.
pub fn ask_each<T: Send>(
    args: &DeviceArgs,
    work: impl FnMut(&mut dyn Backend) -> Result<T, BackendError> + Send,
) -> anyhow::Result<(Vec<Answers<T>>, bool)> {
    run_each(
        args,
        open_options(args, false)?,
        &mut session::Asking::new(work),
    )
}

/// Runs `task` on each selected physical device through the core's pipeline, opened with
/// `options` (a user's kernel: in workers), each failure said on stderr. Returns the answers
/// per device, and whether anything failed.
pub fn run_each<T: Task<Settings = ()>>(
    args: &DeviceArgs,
    options: OpenOptions,
    task: &mut dyn Source<T>,
) -> anyhow::Result<(Vec<Answers<T::Answer>>, bool)> {
    run_each_of(resolve_each(&registry(), args)?, options, task)
}

/// [`run_each`] on devices resolved already.
pub fn run_each_of<T: Task<Settings = ()>>(
    each: Vec<Targets>,
    options: OpenOptions,
    task: &mut dyn Source<T>,
) -> anyhow::Result<(Vec<Answers<T::Answer>>, bool)> {
    let reg = registry();
    let mut out = Vec::new();
    let mut failed = false;
    for targets in each {
        let finished = session::run(&reg, &targets, &options, &(), task).map_err(session_error)?;
        failed |= warn_failures(&finished.failures) || finished.outcome.failed;
        out.push(Answers {
            heading: heading(&targets),
            one_physical_device: targets.one_physical_device,
            answers: finished.answers,
        });
    }
    Ok((out, failed))
}

/// "physical device 1 (NVIDIA H200, matched by UUID) (UUID ...)": the heading of each
/// device's part of a multi-device output.
pub fn heading(targets: &Targets) -> String {
    let uuid = targets
        .devices
        .first()
        .and_then(|d| d.uuid_string())
        .map(|u| format!(" (UUID {u})"))
        .unwrap_or_default();
    format!("{}{uuid}", targets.note)
}

/// Says each failure on stderr; true when there was any.
pub fn warn_failures(failures: &[blocksweep_core::report::Failure]) -> bool {
    for f in failures {
        warn!("{}: {}", f.api, f.message);
    }
    !failures.is_empty()
}

/// A session error as the CLI reports it: bad input exits 2, the rest 1.
pub fn session_error(e: SessionError) -> anyhow::Error {
    match e {
        SessionError::Input(m) => usage(m),
        SessionError::NothingOpened(m) | SessionError::Failed(m) => anyhow::anyhow!(m),
    }
}

/// How each API opens: in a worker process of its own (this executable, `worker`), where a
/// user's kernel's faults cannot end this one, for a user's kernel (`users_kernel`), for any
/// work under `--workers` or an injection tool, unless `--in-process`; else here. Every
/// command opens through this one decision.
pub fn open_options(args: &DeviceArgs, users_kernel: bool) -> anyhow::Result<OpenOptions> {
    let options = args.api_options();
    let workers = users_kernel || args.workers || blocksweep_apis::under_injection_tool();
    if !workers || args.in_process {
        return Ok(options);
    }
    let program = std::env::current_exe()
        .map_err(|e| anyhow::anyhow!("cannot start worker processes: {e}"))?;
    Ok(options.in_workers(blocksweep_core::worker::WorkerCommand {
        program,
        args: vec!["worker".into()],
    }))
}

/// What every device's sweep of one run shares.
pub struct Sweep<'a> {
    pub args: &'a SweepArgs,
    pub config: &'a SweepConfig,
    pub reg: &'a Registry,
    /// What is measured: the frame or a user's kernel.
    pub work: &'a Work,
    /// The run's date, in every report.
    pub date: &'a str,
}

impl Sweep<'_> {
    /// Sweeps each physical device in turn, the workload from `source` (made once, for all);
    /// `save` sees every device's report so far after every row. Returns the reports, and
    /// whether any API failed.
    pub fn each(
        &self,
        each: Vec<Targets>,
        source: &mut WorkloadSource<'_>,
        save: &mut dyn FnMut(&[Report]),
    ) -> anyhow::Result<(Vec<Report>, bool)> {
        let mut runs: Vec<Report> = Vec::new();
        let mut failed = false;
        for targets in each {
            let report = Report::new(tool(), self.date);
            let mut save_one = |r: &Report| {
                let mut all = runs.clone();
                all.push(r.clone());
                save(&all);
            };
            let (report, ended) = self.one(targets, source, report, &mut save_one)?;
            match ended {
                Ended::BadInput(why) => return Err(usage(why)),
                Ended::NothingRan(why) => return Err(anyhow::anyhow!(why)),
                Ended::Measured { failed: f } => failed |= f,
            }
            failed |= warn_failures(&report.failures);
            runs.push(report);
        }
        Ok((runs, failed))
    }

    /// Opens the APIs on one physical device and sweeps them through the core's pipeline
    /// (every API open before the first is timed); `save` sees the report after every row,
    /// its answer refreshed.
    fn one(
        &self,
        targets: Targets,
        source: &mut WorkloadSource<'_>,
        mut report: Report,
        save: &mut dyn FnMut(&Report),
    ) -> anyhow::Result<(Report, Ended)> {
        // Before the bar: where NVML is missing, that is said once, on a line of its own.
        let clocks = crate::clocks::reader(&targets.devices);
        let mut bar = Bar::new();
        let job = SweepJob {
            targets,
            config: self.config,
            overlap_close: self.args.overlap_close,
            clocks,
        };
        let options = open_options(&self.args.device, self.work.is_users())?;
        let open = |d: &DeviceIdentity| blocksweep_core::worker::open(self.reg, d, &options);
        // With the sizes given, none running is bad input; with the default ones, a failure.
        let given = self.args.blocks.is_some();
        let ended = workload::sweep_device(&open, &job, source, &mut report, &mut bar, save, given);
        bar.finish();
        Ok((report, ended.map_err(session_error)?))
    }
}
