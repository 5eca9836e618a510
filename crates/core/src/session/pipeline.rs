//! The sweep as a pipeline over the APIs of one run.
//!
//! Opening an API (driver context, kernel build) is host and driver time, and on one GPU the
//! APIs take very different times to open: on an H200 CUDA is ready in about 0.3 s while
//! OpenCL needs 0.5 s (platform, context, build). So each API opens on its own thread, and this
//! thread measures each one as soon as it is open and the shared plan is known, while the
//! others are still opening; an API that is done is closed on a thread of its own, while the
//! next one measures.
//!
//! What never overlaps a timed batch is another timed batch or another API's copies: one API
//! measures at a time, all on this thread, and uploads, poisoning and read-backs happen inside
//! its turn. What may overlap it is another API's driver set-up and tear-down (context
//! creation, compilation, freeing). `isolate` turns that off: every API opens before the first
//! is timed, and none closes before the last is done (the slower, strictly sequential run,
//! for checking that the overlap changes nothing).

use std::thread::{self, Scope};

use super::openers::{close, Openers};
use super::{SessionError, SweepOutcome};
use crate::backend::{Backend, BackendError, DeviceIdentity, DeviceKind, ErrorKind};
use crate::driver::Targets;
use crate::frame::Frame;
use crate::report::{Failure, Report};
use crate::sweep::{self, Observer, Plan, SweepConfig, SweepError, SweepResult};

/// Opens one target device: [`crate::Registry::open`] with the run's options, or a test's
/// stand-in.
pub type Opener<'a> = dyn Fn(&DeviceIdentity) -> Result<Box<dyn Backend>, BackendError> + Sync + 'a;

/// The frame and its CPU reference, first asked for just before the first API is measured
/// (the caller may still be making them), then before each API.
pub trait FrameSource {
    fn frame(&mut self) -> Result<(&Frame, &[f32]), SessionError>;
}

/// What one pipelined sweep is asked to do.
pub struct SweepJob<'a> {
    pub targets: Targets,
    pub config: &'a SweepConfig,
    /// The frame's size, checked against each API's limits as it opens.
    pub size: (u32, u32),
    /// No driver set-up or tear-down beside a timed batch (see the module's notes). Always so
    /// when a target is not a GPU: there the host's cores are the device.
    pub isolate: bool,
}

/// Where one target API stands.
enum Slot {
    Opening,
    /// Open and waiting for its turn; `residency` caches whether it answers residency itself.
    Ready {
        backend: Box<dyn Backend>,
        residency: Option<bool>,
    },
    /// Could not be opened, refused the frame, or has been measured.
    Done,
}

/// Opens every target on its own thread, then measures each as soon as it can, in target
/// order among those ready; results land in `report` in target order whatever the order of
/// measurement, and `on_update` sees the report after every row.
pub fn sweep(
    open: &Opener,
    job: &SweepJob,
    frame: &mut dyn FrameSource,
    report: &mut Report,
    observer: &mut dyn Observer,
    on_update: &mut dyn FnMut(&Report),
) -> Result<SweepOutcome, SessionError> {
    observer.status(None, "opening the devices and building the kernels");
    if job.targets.devices.len() > 1 {
        report.device_match = Some(job.targets.note.clone());
    }
    thread::scope(|s| {
        let mut openers = Openers::new(s, open, &job.targets.devices, &job.config.blocks);
        let mut run = Run::new(job);
        match run.stagger {
            true => openers.start(0),
            false => openers.start_rest(),
        }
        let result = run.drive(s, &mut openers, frame, report, observer, on_update);
        // An early return (bad input) leaves APIs still opening: they close on their own
        // threads once open, as the channel is gone.
        drop(openers);
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
    /// The frame-fit refusals, for the bad-input message when nothing else could run.
    refused: Vec<String>,
    /// `None` until decided; `Some(None)` when every API plans for itself.
    plan: Option<Option<Plan>>,
    /// No set-up or tear-down beside a timed batch: asked for, or forced by a CPU device.
    isolate: bool,
    /// The first target opens alone, before the others: it plans for every API.
    stagger: bool,
    /// Measured backends waiting to be closed (`isolate` only).
    to_close: Vec<Box<dyn Backend>>,
    outcome: SweepOutcome,
    measured_any: bool,
}

impl<'j> Run<'j> {
    fn new(job: &'j SweepJob<'j>) -> Self {
        let n = job.targets.devices.len();
        // On a CPU device the host is the device: another API's compiler would run on the cores
        // being timed.
        let cpu = job
            .targets
            .devices
            .iter()
            .any(|d| d.kind != DeviceKind::Gpu);
        let isolate = job.isolate || cpu;
        // NVIDIA's driver serialises much of context creation and kernel JIT across the APIs
        // of one process (on an H200 three contexts at once took 0.27 s each; CUDA's build
        // 0.03 s alone, 0.30 s beside OpenCL's): the API whose occupancy calculator plans
        // every API's grids opens first, alone, so that measuring starts as early as it can
        // and the others open while it is measured.
        let stagger = !isolate
            && job.targets.one_physical_device
            && n > 1
            && job.targets.devices[0].api.info().answers_residency;
        Run {
            job,
            isolate,
            stagger,
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
        openers: &mut Openers,
        frame: &mut dyn FrameSource,
        report: &mut Report,
        observer: &mut dyn Observer,
        on_update: &mut dyn FnMut(&Report),
    ) -> Result<SweepOutcome, SessionError> {
        loop {
            if let Some(i) = self.next_to_measure()? {
                if !self.measured_any {
                    self.check_host_memory()?;
                    observer.status(None, "generating the frame and its CPU reference");
                }
                let (f, reference) = frame.frame()?;
                self.measure(s, i, f, reference, report, observer, on_update);
                continue;
            }
            if !self.slots.iter().any(|x| matches!(x, Slot::Opening)) {
                break;
            }
            match openers.rx.recv() {
                Ok((i, r)) => {
                    self.accept(s, i, r);
                    // The planner has opened (or failed): the others may open now.
                    openers.start_rest();
                }
                Err(_) => break,
            }
        }
        self.publish(report);
        report.shared_plan = matches!(self.plan, Some(Some(_))) && report.results.len() > 1;
        if !self.measured_any {
            if let Some(why) = self.refused.first() {
                return Err(SessionError::Input(why.clone()));
            }
            let why: Vec<String> = report
                .failures
                .iter()
                .map(|f| format!("{}: {}", f.api, f.message))
                .collect();
            return Err(SessionError::NothingOpened(format!(
                "no API could open the device ({})",
                why.join("; ")
            )));
        }
        Ok(std::mem::take(&mut self.outcome))
    }

    /// An API finished opening: ready if the frame fits it, else a failure.
    fn accept<'scope>(
        &mut self,
        s: &'scope Scope<'scope, '_>,
        i: usize,
        r: Result<Box<dyn Backend>, BackendError>,
    ) {
        match r {
            Err(e) => {
                self.failures[i].push(Failure {
                    api: e.api,
                    message: e.message,
                });
                self.slots[i] = Slot::Done;
            }
            Ok(backend) => {
                let (w, h) = self.job.size;
                match backend.limits().frame_fits(Frame::pixel_count(w, h)) {
                    Ok(()) => {
                        self.slots[i] = Slot::Ready {
                            backend,
                            residency: None,
                        }
                    }
                    Err(why) => {
                        let message = format!(
                            "frame {w}x{h} is too large for {} on {}: {why}",
                            backend.api(),
                            backend.identity().name
                        );
                        self.failures[i].push(Failure {
                            api: backend.api(),
                            message: message.clone(),
                        });
                        self.refused.push(message);
                        self.slots[i] = Slot::Done;
                        s.spawn(move || close(backend));
                    }
                }
            }
        }
    }

    /// The host's memory with every API still in the run, before the frame is needed.
    fn check_host_memory(&self) -> Result<(), SessionError> {
        let (w, h) = self.job.size;
        let apis: Vec<_> = self
            .job
            .targets
            .devices
            .iter()
            .zip(&self.slots)
            .filter(|(_, slot)| !matches!(slot, Slot::Done))
            .map(|(d, _)| (d.api, d.kind))
            .collect();
        crate::hostmem::check_frame(w, h, &apis).map_err(|e| SessionError::Input(e.to_string()))
    }

    /// The next API to measure: the first ready one in target order, once the plan is known
    /// (and, with `isolate`, once every API has opened).
    fn next_to_measure(&mut self) -> Result<Option<usize>, SessionError> {
        if self.isolate && self.slots.iter().any(|x| matches!(x, Slot::Opening)) {
            return Ok(None);
        }
        if self.plan.is_none() && !self.decide_plan()? {
            return Ok(None);
        }
        Ok(self
            .slots
            .iter()
            .position(|x| matches!(x, Slot::Ready { .. })))
    }

    /// On one physical device every API runs the same (block, grid) pairs, planned by the
    /// first API in target order that answers residency itself (an occupancy API), else by
    /// the first that opened (the core's model). Returns false while an API that could be the
    /// planner is still opening.
    fn decide_plan(&mut self) -> Result<bool, SessionError> {
        let config = self.job.config;
        if !self.job.targets.one_physical_device || self.slots.len() < 2 {
            self.plan = Some(None);
            return Ok(true);
        }
        let probe = config.blocks.first().copied();
        let mut planner = None;
        for (i, slot) in self.slots.iter_mut().enumerate() {
            match slot {
                Slot::Opening => return Ok(false),
                Slot::Done => continue,
                Slot::Ready { backend, residency } => {
                    let answers = match (*residency, probe) {
                        (Some(a), _) => a,
                        (None, None) => false,
                        (None, Some(block)) => backend.residency(block).map_err(failed)?.is_some(),
                    };
                    *residency = Some(answers);
                    planner = planner.or(Some(i));
                    if answers {
                        planner = Some(i);
                        break;
                    }
                }
            }
        }
        let Some(i) = planner else {
            // Nothing opened: nothing to plan for.
            self.plan = Some(None);
            return Ok(true);
        };
        let Slot::Ready { backend, .. } = &mut self.slots[i] else {
            unreachable!("the planner is a ready slot");
        };
        let (w, h) = self.job.size;
        let plan =
            sweep::plan(backend.as_mut(), Frame::pixel_count(w, h), config).map_err(failed)?;
        self.plan = Some(Some(plan));
        Ok(true)
    }

    /// Measures target `i`, then closes it on its own thread (or keeps it for the end, with
    /// `isolate`).
    #[allow(clippy::too_many_arguments)]
    fn measure<'scope>(
        &mut self,
        s: &'scope Scope<'scope, '_>,
        i: usize,
        frame: &Frame,
        reference: &[f32],
        report: &mut Report,
        observer: &mut dyn Observer,
        on_update: &mut dyn FnMut(&Report),
    ) {
        let Slot::Ready { mut backend, .. } = std::mem::replace(&mut self.slots[i], Slot::Done)
        else {
            return;
        };
        let api = backend.api();
        let shared = self.plan.as_ref().and_then(Option::as_ref);
        let (result, err) = {
            let _t = crate::trace::span(api.key(), "sweep (plan, rows, copy ceiling)");
            let mut save = |r: &SweepResult| {
                self.results[i] = Some(r.clone());
                publish(&self.results, &self.failures, report);
                on_update(report);
            };
            sweep::run(
                backend.as_mut(),
                frame,
                reference,
                self.job.config,
                shared,
                observer,
                &mut save,
            )
        };
        self.measured_any = true;
        if let Some(e) = err {
            self.record_error(i, frame, &result, e);
        }
        let said = backend.diagnostics();
        if !said.is_empty() {
            // The API's own checking spoke: the run is not clean, whatever the pixels say.
            self.outcome.failed = true;
            self.failures[i].push(Failure {
                api,
                message: format!("{} validation message(s): {}", said.len(), said.join(" | ")),
            });
        }
        self.results[i] = Some(result);
        self.publish(report);
        on_update(report);
        match self.isolate {
            true => self.to_close.push(backend),
            false => {
                s.spawn(move || close(backend));
            }
        }
    }

    fn record_error(&mut self, i: usize, frame: &Frame, result: &SweepResult, e: SweepError) {
        match &e {
            SweepError::Backend(be)
                if be.kind == ErrorKind::OutOfMemory && result.rows.is_empty() =>
            {
                self.outcome.too_big = Some(format!(
                    "frame {}x{} is too large for the device: {be}",
                    frame.width, frame.height
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

    /// Closes what `isolate` kept, every API at once.
    fn close_all<'scope>(&mut self, s: &'scope Scope<'scope, '_>) {
        for b in self.to_close.drain(..) {
            s.spawn(move || close(b));
        }
        for slot in &mut self.slots {
            if let Slot::Ready { .. } = slot {
                if let Slot::Ready { backend, .. } = std::mem::replace(slot, Slot::Done) {
                    s.spawn(move || close(backend));
                }
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
