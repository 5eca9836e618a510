//! A measurement session: the selected APIs opened on their devices, and everything decided
//! across them (the frame fit, the shared plan, per-API failures). The CLI parses arguments and
//! renders; every measurement decision is made here. [`pipeline`] is the sweep's own flow:
//! each API measured as soon as it is open, while the others still open.

use std::convert::Infallible;
use std::thread;

mod openers;
pub mod pipeline;
mod said;

pub use pipeline::{SweepJob, WorkloadSource};
pub use said::Said;

use crate::backend::{Backend, BackendError, DeviceIdentity, ErrorKind};
use crate::frame::Frame;
use crate::options::OpenOptions;
use crate::provider::{Registry, Targets};
use crate::report::{Failure, Report};

/// The opened backends of one run.
pub struct Session {
    backends: Vec<Box<dyn Backend>>,
    /// APIs that could not be opened, with their reasons.
    failures: Vec<Failure>,
}

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

impl Session {
    /// Opens every target in parallel, through the sweep's own opening threads (with no
    /// workload to ready); what could not open is in `failures`, in target order.
    fn open_all(registry: &Registry, targets: Targets, options: &OpenOptions) -> Session {
        let t = crate::trace::span("core", "open, every target in parallel");
        let open = |d: &DeviceIdentity| crate::worker::open(registry, d, options);
        let devices = &targets.devices;
        let mut opened: Vec<Option<Result<Box<dyn Backend>, BackendError>>> =
            devices.iter().map(|_| None).collect();
        thread::scope(|s| {
            let (done, workloads) = openers::spawn(s, &open, devices, &[]);
            drop(workloads);
            for (i, r, _) in done {
                opened[i] = Some(r);
            }
        });
        t.end();
        let mut session = Session {
            backends: Vec::new(),
            failures: Vec::new(),
        };
        for (d, r) in devices.iter().zip(opened) {
            let r = r.unwrap_or_else(|| {
                let why = "its opening thread ended without an answer";
                Err(BackendError::new(d.api, ErrorKind::Driver, why))
            });
            match r {
                Ok(b) => session.backends.push(b),
                Err(e) => session.failures.push(Failure {
                    api: e.api,
                    message: e.message,
                }),
            }
        }
        session
    }

    /// The whole life of a command that asks each API one thing (`limits`, `validate`): opens
    /// `targets` in parallel, hands each opened API to `work` in target order, and closes them
    /// all. What could not open, what `work` failed with, and any message of an API's own
    /// checking layer (`--vk-validation`) become failures, here and only here.
    pub fn each<T>(
        registry: &Registry,
        targets: Targets,
        options: &OpenOptions,
        mut work: impl FnMut(&mut dyn Backend) -> Result<T, BackendError>,
    ) -> (Vec<T>, Vec<Failure>) {
        let ready = |_: &mut [Box<dyn Backend>], _: &[Failure]| Ok::<_, Infallible>(());
        let Ok(((), out, failures)) =
            Session::each_ready(registry, targets, options, ready, |_, b| work(b));
        (out, failures)
    }

    /// [`Session::each`] with a step between opening and the work (the lab's): `ready` sees
    /// every API that opened, and the failures of those that did not, at once, to check and
    /// make what the work needs across them (the frame's fit, the frame, one wave for all);
    /// each call of `work` gets what it made. An error of `ready` closes every API and is
    /// returned.
    pub fn each_ready<R, T, E>(
        registry: &Registry,
        targets: Targets,
        options: &OpenOptions,
        ready: impl FnOnce(&mut [Box<dyn Backend>], &[Failure]) -> Result<R, E>,
        mut work: impl FnMut(&R, &mut dyn Backend) -> Result<T, BackendError>,
    ) -> Result<(R, Vec<T>, Vec<Failure>), E> {
        let mut session = Session::open_all(registry, targets, options);
        let mut failures = std::mem::take(&mut session.failures);
        let made = match ready(&mut session.backends, &failures) {
            Ok(made) => made,
            Err(e) => {
                session.close();
                return Err(e);
            }
        };
        let mut out = Vec::new();
        for b in session.backends() {
            match work(&made, b.as_mut()) {
                Ok(v) => out.push(v),
                Err(e) => failures.push(Failure {
                    api: e.api,
                    message: e.message,
                }),
            }
            failures.extend(Said::default().failure(b.as_ref()));
        }
        session.close();
        Ok((made, out, failures))
    }

    /// Closes every API at once, each on its own thread: destroying contexts and devices is
    /// driver time, and the APIs do not wait for each other.
    pub fn close(mut self) {
        let backends = std::mem::take(&mut self.backends);
        let _t = crate::trace::span("core", "close, every API in parallel");
        thread::scope(|s| {
            for b in backends {
                s.spawn(move || openers::close(b));
            }
        });
    }

    pub fn backends(&mut self) -> &mut [Box<dyn Backend>] {
        &mut self.backends
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
}

/// Refuses a frame that cannot fit before it is generated: each API's allocation limits,
/// then the host's memory.
pub fn check_frame(
    backends: &[Box<dyn Backend>],
    width: u32,
    height: u32,
) -> Result<(), SessionError> {
    let pixels = Frame::pixel_count(width, height);
    for b in backends {
        if let Err(why) = b.limits().frame_fits(pixels) {
            return Err(SessionError::Input(format!(
                "frame {width}x{height} is too large for {} on {}: {why}",
                b.api(),
                b.identity().name
            )));
        }
    }
    let apis: Vec<_> = backends
        .iter()
        .map(|b| (b.api(), b.identity().kind))
        .collect();
    crate::hostmem::check_frame(width, height, &apis)
        .map_err(|e| SessionError::Input(e.to_string()))
}

#[cfg(test)]
mod each_tests;
#[cfg(test)]
mod pipeline_tests;
