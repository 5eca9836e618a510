//! A measurement session: the selected APIs opened on their devices, and everything decided
//! across them (the task's fit, the shared plan, per-API failures). The CLI parses arguments
//! and renders; every measurement decision is made here. [`pipeline`] is the one flow every
//! command runs ([`Task`]: the sweep, validate, the lab, limits): each API opened on its own
//! thread, readied there, given its turn once all are open, and closed.

use std::marker::PhantomData;
use std::sync::Mutex;

mod openers;
pub mod pipeline;
mod said;
pub mod task;

pub use pipeline::{Job, Opener};
pub use task::{Finished, Later, Progress, Ran, Source, Task, Turn};

use crate::backend::{Backend, BackendError, DeviceIdentity};
use crate::options::OpenOptions;
use crate::provider::{Registry, Targets};
use crate::report::{Failure, Report};
use crate::sweep::{Quiet, SweepError};

/// Why a sweep cannot start, or how it ended.
#[derive(Debug)]
pub enum SessionError {
    /// Bad input: the frame cannot fit, or no block size can run (exit code 2).
    Input(String),
    /// No API could be opened (every reason is in the message).
    NothingOpened(String),
    /// The run failed for a reason that is not the input (planning through a driver).
    Failed(String),
}

impl std::fmt::Display for SessionError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SessionError::Input(m) | SessionError::NothingOpened(m) | SessionError::Failed(m) => {
                f.write_str(m)
            }
        }
    }
}

impl std::error::Error for SessionError {}

impl SessionError {
    /// No API opened: every API's reason, in one line.
    pub fn nothing_opened(failures: &[Failure]) -> SessionError {
        let why: Vec<String> = failures
            .iter()
            .map(|f| format!("{}: {}", f.api, f.message))
            .collect();
        SessionError::NothingOpened(format!("no API could open the device ({})", why.join("; ")))
    }
}

/// How a sweep over every API went.
#[derive(Debug, Default)]
pub struct SweepOutcome {
    /// An API failed (mismatch, driver error, validation message).
    pub failed: bool,
    /// The frame turned out too large for a device when it was allocated.
    pub too_big: Option<String>,
}

/// Runs `task` on every API of `targets`, opened with `options` (in workers where they say),
/// through the pipeline: the one life of every command.
pub fn run<T: Task + ?Sized>(
    registry: &Registry,
    targets: &Targets,
    options: &OpenOptions,
    settings: &T::Settings,
    source: &mut dyn Source<T>,
) -> Result<Finished<T::Answer>, SessionError> {
    run_saving(registry, targets, options, settings, source, &mut |_| {})
}

/// [`run`], with `on_update` seeing every answer so far after every row (a caller that saves
/// its files as it goes).
pub fn run_saving<T: Task + ?Sized>(
    registry: &Registry,
    targets: &Targets,
    options: &OpenOptions,
    settings: &T::Settings,
    source: &mut dyn Source<T>,
    on_update: &mut dyn FnMut(&Progress<'_, T::Answer>),
) -> Result<Finished<T::Answer>, SessionError> {
    let open = |d: &DeviceIdentity| crate::worker::open(registry, d, options);
    let job = Job {
        targets,
        settings,
        blocks: &[],
        overlap_close: false,
        clocks: None,
    };
    pipeline::run(&open, &job, source, &mut Quiet, on_update)
}

/// The core's tests' shorthand for [`Asking`] (the CLI's `limits` runs `Asking` through its
/// own `ask_each`): opens `targets` in parallel, hands each opened API to `work` in target
/// order, and closes them all. What could not open, what `work` failed with, and any message
/// of an API's own checking layer (`--vk-validation`) become failures, in the pipeline.
#[cfg(test)]
pub fn each<T: Send>(
    registry: &Registry,
    targets: Targets,
    options: &OpenOptions,
    work: impl FnMut(&mut dyn Backend) -> Result<T, BackendError> + Send,
) -> (Vec<T>, Vec<Failure>) {
    let mut asking = Asking::new(work);
    match run(registry, &targets, options, &(), &mut asking) {
        Ok(f) => (f.answers, f.failures),
        // Only a task's own checks refuse a run before any turn, and asking has none: were
        // one to, it is the first target's failure.
        Err(e) => {
            let first = targets
                .devices
                .first()
                .map(|d| Failure::new(d.api, crate::report::FailureKind::Other, e.to_string()));
            (Vec::new(), first.into_iter().collect())
        }
    }
}

/// One question for each API, as a task: `work` asked of each in its turn.
pub struct Asking<F, T> {
    work: Mutex<F>,
    answers: PhantomData<fn() -> T>,
}

impl<F, T> Asking<F, T> {
    pub fn new(work: F) -> Self {
        Asking {
            work: Mutex::new(work),
            answers: PhantomData,
        }
    }
}

impl<T: Send, F: FnMut(&mut dyn Backend) -> Result<T, BackendError> + Send> Task for Asking<F, T> {
    type Answer = T;
    type Plan = ();
    type Settings = ();

    fn describe(&self) -> String {
        "the question".into()
    }

    fn plan(&self, _: &mut dyn Backend, _: &()) -> Result<(), BackendError> {
        Ok(())
    }

    fn turn(&self, backend: &mut dyn Backend, _: bool, _: Turn<'_, Self>) -> Ran<Self> {
        let mut work = self.work.lock().unwrap_or_else(|p| p.into_inner());
        match work(backend) {
            Ok(answer) => (Some(answer), None),
            Err(e) => (None, Some(SweepError::Backend(e))),
        }
    }
}

/// Why no row ran anywhere, for a run that measured nothing: every skipped row's reason.
pub fn nothing_ran(report: &Report) -> Option<String> {
    let ran: usize = report.results.iter().map(|r| r.rows_run()).sum();
    if ran > 0 {
        return None;
    }
    // At most three sizes' reasons per API, so that the line stays readable.
    const SHOWN: usize = 3;
    let per_api: Vec<String> = report
        .results
        .iter()
        .filter_map(|r| {
            let reasons: Vec<String> = r
                .rows
                .iter()
                .filter_map(|x| {
                    x.skipped
                        .as_ref()
                        .map(|s| format!("block {}: {s}", x.block))
                })
                .collect();
            let more = reasons.len().saturating_sub(SHOWN);
            let mut line = reasons
                .into_iter()
                .take(SHOWN)
                .collect::<Vec<_>>()
                .join("; ");
            if more > 0 {
                line.push_str(&format!("; and {more} more"));
            }
            (!line.is_empty()).then(|| format!("{} {line}", r.api))
        })
        .collect();
    Some(match per_api.is_empty() {
        true => "no row ran".to_string(),
        false => format!("no block size can run: {}", per_api.join("; ")),
    })
}

#[cfg(test)]
mod alpha_beta_tests;
#[cfg(test)]
mod clocks_tests;
#[cfg(test)]
mod cold_tests;
#[cfg(test)]
mod each_tests;
#[cfg(test)]
mod memory_tests;
#[cfg(test)]
mod pipeline_tests;
