//! The sweep as a pipeline over the APIs of one run.
//!
//! Opening an API (driver context, kernel build) and closing it are most of a short run's wall
//! time, so each API opens on its own thread, all at once, and everything untimed that it can
//! do before its turn is done there too: the launch shapes it builds per block size (Vulkan's
//! pipelines) and the frame's upload. Once every API has opened, this thread measures them one
//! at a time; then all are closed at once, each on a thread of its own.
//!
//! Nothing runs beside a timed batch: another API's context creation, and more rarely its
//! close, does work on the GPU and disturbs the rows timed beside it (docs/guide.md, section
//! 5, has the runs). `overlap_close` closes each API while the next is measured, for seeing
//! that effect; never on a CPU device, where the host's cores are the device.

use std::sync::mpsc;
use std::thread::{self, Scope};

use super::openers::{self, close, Opened};
use super::{SessionError, SweepOutcome};
use crate::backend::{Backend, BackendError, DeviceIdentity, DeviceKind, ErrorKind};
use crate::provider::Targets;
use crate::report::{Failure, Report};
use crate::sweep::{self, Observer, Plan, SweepConfig, SweepError, SweepResult, SweepRun};
use crate::workload::Workload;

/// Where a run's workload comes from: asked once, as the APIs start to open (the caller may
/// still be making it: generating a frame or a kernel's buffers takes a while).
pub trait WorkloadSource {
    fn workload(&mut self) -> Result<&dyn Workload, SessionError>;
}

/// A workload made already.
impl<W: Workload> WorkloadSource for W {
    fn workload(&mut self) -> Result<&dyn Workload, SessionError> {
        Ok(self)
    }
}

/// Opens one target device: [`crate::Registry::open`] with the run's options, or a test's
/// stand-in.
pub type Opener<'a> = dyn Fn(&DeviceIdentity) -> Result<Box<dyn Backend>, BackendError> + Sync + 'a;

/// What one pipelined sweep is asked to do.
pub struct SweepJob<'a> {
    pub targets: Targets,
    pub config: &'a SweepConfig,
    /// Close each API while the next is measured (see the module's notes); ignored when a
    /// target is not a GPU, as there the host's cores are the device.
    pub overlap_close: bool,
}

/// Where one target API stands.
enum Slot {
    Opening,
    /// Open and waiting for its turn; `uploaded` says the workload is ready on its device
    /// already.
    Ready {
        backend: Box<dyn Backend>,
        uploaded: bool,
    },
    /// Could not be opened, refused the workload, or has been measured.
    Done,
}

/// Opens every target on its own thread, then, once all have opened, measures each in target
/// order, and closes them all at the end (or each while the next is measured, with
/// `overlap_close`); `on_update` sees the report after every row.
pub fn sweep(
    open: &Opener,
    job: &SweepJob,
    work: &mut dyn WorkloadSource,
    report: &mut Report,
    observer: &mut dyn Observer,
    on_update: &mut dyn FnMut(&Report),
) -> Result<SweepOutcome, SessionError> {
    observer.status(None, "opening the devices and building the kernels");
    if job.targets.devices.len() > 1 {
        report.device_match = Some(job.targets.note.clone());
    }
    thread::scope(move |s| {
        let (opened, frames) = openers::spawn(s, open, &job.targets.devices, &job.config.blocks);
        let mut run = Run::new(job);
        // The workload is being made while the APIs open; each readies it as soon as both are
        // there. Without it (bad input), they open and close unused.
        let made = work.workload();
        if let Ok(w) = &made {
            for tx in &frames {
                let _ = tx.send(*w);
            }
        }
        drop(frames);
        let result = made.and_then(|w| run.drive(s, &opened, w, report, observer, on_update));
        // An early return (bad input) leaves APIs still opening: they close on their own
        // threads once open, as the channel is gone.
        drop(opened);
        run.close_all(s);
        result
    })
}

/// The coordinator's state.
struct Run<'j> {
    job: &'j SweepJob<'j>,
    slots: Vec<Slot>,
    /// Per target: its result once measured, and its failures.
    results: Vec<Option<SweepResult>>,
    failures: Vec<Vec<Failure>>,
    /// The workload-fit refusals (target index, message), for the bad-input message when nothing
    /// else could run.
    refused: Vec<(usize, String)>,
    /// `None` until decided; `Some(None)` when every API plans for itself.
    plan: Option<Option<Plan>>,
    /// Close nothing before the last is measured: the default, and always on a CPU device.
    close_at_end: bool,
    /// Measured backends waiting to be closed (`close_at_end` only).
    to_close: Vec<Box<dyn Backend>>,
    outcome: SweepOutcome,
    measured_any: bool,
}

impl<'j> Run<'j> {
    fn new(job: &'j SweepJob<'j>) -> Self {
        let n = job.targets.devices.len();
        // On a CPU device the host is the device: another API's teardown would run on the cores
        // being timed.
        let cpu = job
            .targets
            .devices
            .iter()
            .any(|d| d.kind != DeviceKind::Gpu);
        Run {
            job,
            close_at_end: !job.overlap_close || cpu,
            slots: (0..n).map(|_| Slot::Opening).collect(),
            results: vec![None; n],
            failures: (0..n).map(|_| Vec::new()).collect(),
            refused: Vec::new(),
            plan: None,
            to_close: Vec::new(),
            outcome: SweepOutcome::default(),
            measured_any: false,
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn drive<'scope>(
        &mut self,
        s: &'scope Scope<'scope, '_>,
        opened: &mpsc::Receiver<Opened>,
        work: &dyn Workload,
        report: &mut Report,
        observer: &mut dyn Observer,
        on_update: &mut dyn FnMut(&Report),
    ) -> Result<SweepOutcome, SessionError> {
        loop {
            if let Some(i) = self.next_to_measure(work)? {
                if !self.measured_any {
                    self.check_host_memory(work)?;
                }
                self.measure(s, i, work, report, observer, on_update);
                continue;
            }
            if !self.slots.iter().any(|x| matches!(x, Slot::Opening)) {
                break;
            }
            match opened.recv() {
                Ok((i, r, uploaded)) => self.accept(s, i, r, uploaded, work),
                Err(_) => break,
            }
        }
        self.blame(work);
        self.publish(report);
        report.shared_plan = matches!(self.plan, Some(Some(_))) && report.results.len() > 1;
        if !self.measured_any {
            // The first target's refusal, whichever opened first.
            if let Some((_, why)) = self.refused.iter().min_by_key(|(i, _)| *i) {
                return Err(SessionError::Input(why.clone()));
            }
            return Err(SessionError::nothing_opened(&report.failures));
        }
        Ok(std::mem::take(&mut self.outcome))
    }

    /// An API finished opening: ready if the workload fits it, else a failure.
    fn accept<'scope>(
        &mut self,
        s: &'scope Scope<'scope, '_>,
        i: usize,
        r: Result<Box<dyn Backend>, BackendError>,
        uploaded: bool,
        work: &dyn Workload,
    ) {
        match r {
            Err(e) => {
                self.failures[i].push(Failure {
                    api: e.api,
                    message: e.message,
                });
                self.slots[i] = Slot::Done;
            }
            Ok(backend) => match work.fits(backend.limits()) {
                Ok(()) => self.slots[i] = Slot::Ready { backend, uploaded },
                Err(why) => {
                    let message = format!(
                        "{} is too large for {} on {}: {why}",
                        work.describe(),
                        backend.api(),
                        backend.identity().name
                    );
                    self.failures[i].push(Failure {
                        api: backend.api(),
                        message: message.clone(),
                    });
                    self.refused.push((i, message));
                    self.slots[i] = Slot::Done;
                    s.spawn(move || close(backend));
                }
            },
        }
    }

    /// The host's memory with every API still in the run, before the workload is needed.
    fn check_host_memory(&self, work: &dyn Workload) -> Result<(), SessionError> {
        let apis: Vec<_> = self
            .job
            .targets
            .devices
            .iter()
            .zip(&self.slots)
            .filter(|(_, slot)| !matches!(slot, Slot::Done))
            .map(|(d, _)| (d.api, d.kind))
            .collect();
        work.check_host(&apis).map_err(SessionError::Input)
    }

    /// The next API to measure: the first ready one in target order, once no API is still
    /// opening (and so the plan is known).
    fn next_to_measure(&mut self, work: &dyn Workload) -> Result<Option<usize>, SessionError> {
        if self.slots.iter().any(|x| matches!(x, Slot::Opening)) {
            return Ok(None);
        }
        if self.plan.is_none() && !self.decide_plan(work)? {
            return Ok(None);
        }
        Ok(self
            .slots
            .iter()
            .position(|x| matches!(x, Slot::Ready { .. })))
    }

    /// On one physical device every API runs the same (block, grid) pairs, planned by
    /// [`sweep::planner`]'s choice among the APIs that opened. Returns false while an API is
    /// still opening (it could be the planner).
    fn decide_plan(&mut self, work: &dyn Workload) -> Result<bool, SessionError> {
        let config = self.job.config;
        if !self.job.targets.one_physical_device || self.slots.len() < 2 {
            self.plan = Some(None);
            return Ok(true);
        }
        if self.slots.iter().any(|x| matches!(x, Slot::Opening)) {
            return Ok(false);
        }
        let probe = config.blocks.first().copied();
        let chosen = sweep::planner(self.ready(), probe).map_err(failed)?;
        // Nothing opened: nothing to plan for.
        let Some(backend) = chosen.and_then(|i| self.ready().nth(i)) else {
            self.plan = Some(None);
            return Ok(true);
        };
        let plan = sweep::plan(backend, work.items(), config).map_err(failed)?;
        self.plan = Some(Some(plan));
        Ok(true)
    }

    /// The APIs open and waiting for their turn, in target order.
    fn ready(&mut self) -> impl Iterator<Item = &mut dyn Backend> {
        self.slots.iter_mut().filter_map(|slot| match slot {
            Slot::Ready { backend, .. } => Some(backend.as_mut() as &mut dyn Backend),
            _ => None,
        })
    }

    /// Measures target `i`, then closes it on its own thread (or keeps it for the end, with
    /// `close_at_end`).
    #[allow(clippy::too_many_arguments)]
    fn measure<'scope>(
        &mut self,
        s: &'scope Scope<'scope, '_>,
        i: usize,
        work: &dyn Workload,
        report: &mut Report,
        observer: &mut dyn Observer,
        on_update: &mut dyn FnMut(&Report),
    ) {
        let Slot::Ready {
            mut backend,
            uploaded,
            ..
        } = std::mem::replace(&mut self.slots[i], Slot::Done)
        else {
            return;
        };
        let api = backend.api();
        let shared = self.plan.as_ref().and_then(Option::as_ref);
        let config = self.job.config;
        let (result, err) = {
            let _t = crate::trace::span(api.key(), "sweep (plan, rows, copy ceiling)");
            let mut save = |r: &SweepResult| {
                self.results[i] = Some(r.clone());
                publish(&self.results, &self.failures, report);
                on_update(report);
            };
            let how = SweepRun {
                config,
                shared,
                observer,
                on_row: &mut save,
            };
            work.measure(backend.as_mut(), uploaded, how)
        };
        self.measured_any = true;
        if let Some(e) = err {
            self.record_error(i, work, &result, e);
        }
        if let Some(f) = super::Said::default().failure(backend.as_ref()) {
            self.outcome.failed = true;
            self.failures[i].push(f);
        }
        self.results[i] = Some(result);
        self.publish(report);
        on_update(report);
        match self.close_at_end {
            true => self.to_close.push(backend),
            false => {
                s.spawn(move || close(backend));
            }
        }
    }

    /// The APIs the workload blames once all were measured (outputs the other APIs
    /// contradict): each fails, and its rows no longer count as checked.
    fn blame(&mut self, work: &dyn Workload) {
        for blame in work.conclude() {
            let Some(i) = self
                .results
                .iter()
                .position(|r| r.as_ref().is_some_and(|r| r.api == blame.api))
            else {
                continue;
            };
            if let Some(r) = self.results[i].as_mut() {
                r.error = Some(blame.message.clone());
                for row in &mut r.rows {
                    row.verified = false;
                }
            }
            self.failures[i].push(Failure {
                api: blame.api,
                message: blame.message,
            });
            self.outcome.failed = true;
        }
    }

    fn record_error(&mut self, i: usize, work: &dyn Workload, result: &SweepResult, e: SweepError) {
        match &e {
            SweepError::Backend(be)
                if be.kind == ErrorKind::OutOfMemory && result.rows.is_empty() =>
            {
                self.outcome.too_big = Some(format!(
                    "{} is too large for the device: {be}",
                    work.describe()
                ));
            }
            _ => self.outcome.failed = true,
        }
        self.failures[i].push(Failure {
            api: result.api,
            message: e.detail(),
        });
    }

    fn publish(&self, report: &mut Report) {
        publish(&self.results, &self.failures, report);
    }

    /// Closes what `close_at_end` kept, every API at once.
    fn close_all<'scope>(&mut self, s: &'scope Scope<'scope, '_>) {
        for b in self.to_close.drain(..) {
            s.spawn(move || close(b));
        }
        for slot in &mut self.slots {
            if let Slot::Ready { backend, .. } = std::mem::replace(slot, Slot::Done) {
                s.spawn(move || close(backend));
            }
        }
    }
}

/// The results and failures so far, in target order.
fn publish(results: &[Option<SweepResult>], failures: &[Vec<Failure>], report: &mut Report) {
    report.results = results.iter().flatten().cloned().collect();
    report.failures = failures.iter().flatten().cloned().collect();
}

fn failed(e: impl std::fmt::Display) -> SessionError {
    SessionError::Failed(e.to_string())
}
