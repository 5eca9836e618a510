//! The one pipeline every command runs over the APIs of one run (a [`Task`]: the sweep of
//! the frame or of a user's kernel, validate, the lab's shapes and tail, limits).
//!
//! Opening an API (driver context, kernel build) and closing it are most of a short run's wall
//! time, so each API opens on its own thread, all at once, and everything untimed that it can
//! do before its turn is done there too: the launch shapes it builds per block size (Vulkan's
//! pipelines) and the task's preparation (the frame's upload). Once every API has opened, this
//! thread gives each its turn, one at a time; then all are closed at once, each on a thread of
//! its own.
//!
//! Nothing runs beside a timed batch: another API's context creation, and more rarely its
//! close, does work on the GPU and disturbs the rows timed beside it (docs/guide.md, section
//! 5, has the runs). `overlap_close` closes each API while the next is measured, for seeing
//! that effect; never on a CPU device, where the host's cores are the device.
//!
//! What an API could not do (open, hold the task, finish its turn), what its checking layer
//! said, and what the others contradict become its failures here, and only here.

use std::sync::mpsc;
use std::thread::{self, Scope};

use super::openers::{self, close, Opened};
use super::task::{Finished, Progress, Source, Task, Turn};
use super::{SessionError, SweepOutcome};
use crate::backend::{Api, Backend, BackendError, DeviceIdentity, DeviceKind, ErrorKind};
use crate::blocks::BlockSize;
use crate::clocks::{ClockReader, TurnClocks};
use crate::limits::Named;
use crate::provider::Targets;
use crate::report::{Failure, FailureKind};
use crate::sweep::{self, Observer, SweepError};

/// Opens one target device: [`crate::Registry::open`] with the run's options, or a test's
/// stand-in.
pub type Opener<'a> = dyn Fn(&DeviceIdentity) -> Result<Box<dyn Backend>, BackendError> + Sync + 'a;

/// What one run over the pipeline is asked to do beside its task.
pub struct Job<'a, T: Task + ?Sized> {
    pub targets: &'a Targets,
    pub settings: &'a T::Settings,
    /// The block sizes whose launch shapes an API builds while it opens.
    pub blocks: &'a [BlockSize],
    /// Close each API while the next is measured (see the module's notes); ignored when a
    /// target is not a GPU, as there the host's cores are the device.
    pub overlap_close: bool,
    /// Reads the device's clocks at the start and end of each turn, where the caller has one.
    pub clocks: Option<&'a dyn ClockReader>,
}

/// Where one target API stands.
enum Slot {
    Opening,
    /// Open and waiting for its turn; `prepared` says the task is ready on its device already.
    Ready {
        backend: Box<dyn Backend>,
        prepared: bool,
    },
    /// Could not be opened, refused the task, or has had its turn.
    Done,
}

/// Opens every target on its own thread, then, once all have opened, gives each its turn in
/// target order, and closes them all at the end (or each while the next is measured, with
/// `overlap_close`); `on_update` sees every answer so far after every row.
pub fn run<T: Task + ?Sized>(
    open: &Opener,
    job: &Job<'_, T>,
    source: &mut dyn Source<T>,
    observer: &mut dyn Observer,
    on_update: &mut dyn FnMut(&Progress<'_, T::Answer>),
) -> Result<Finished<T::Answer>, SessionError> {
    observer.status(None, "opening the devices and building the kernels");
    thread::scope(move |s| {
        let one_gpu = job.targets.one_physical_device;
        let (opened, tasks) = openers::spawn(s, open, &job.targets.devices, job.blocks, one_gpu);
        let mut run = Run::new(job);
        // The task is being made while the APIs open; each readies it as soon as both are
        // there. Without it (bad input), they open and close unused.
        let made = source.task();
        if let Ok(t) = &made {
            for tx in &tasks {
                let _ = tx.send(*t);
            }
        }
        drop(tasks);
        let result = made.and_then(|t| run.drive(s, &opened, t, observer, on_update));
        // An early return (bad input) leaves APIs still opening: they close on their own
        // threads once open, as the channel is gone.
        drop(opened);
        run.close_all(s);
        result
    })
}

/// The coordinator's state.
struct Run<'j, T: Task + ?Sized> {
    job: &'j Job<'j, T>,
    slots: Vec<Slot>,
    /// Per target: its last-level cache as its API states it, once open.
    llc: Vec<Option<(Api, Named<u64>)>>,
    /// Per target: its answer once it had its turn, and its failures.
    answers: Vec<Option<T::Answer>>,
    failures: Vec<Vec<Failure>>,
    /// The refusals of the task (target index, message), for the bad-input message when
    /// nothing else could run.
    refused: Vec<(usize, String)>,
    /// `None` until decided; `Some(None)` when every API plans for itself.
    plan: Option<Option<T::Plan>>,
    /// Close nothing before the last is measured: the default, and always on a CPU device.
    close_at_end: bool,
    /// Measured backends waiting to be closed (`close_at_end` only).
    to_close: Vec<Box<dyn Backend>>,
    outcome: SweepOutcome,
    measured_any: bool,
}

impl<'j, T: Task + ?Sized> Run<'j, T> {
    fn new(job: &'j Job<'j, T>) -> Self {
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
            llc: vec![None; n],
            answers: (0..n).map(|_| None).collect(),
            failures: (0..n).map(|_| Vec::new()).collect(),
            refused: Vec::new(),
            plan: None,
            to_close: Vec::new(),
            outcome: SweepOutcome::default(),
            measured_any: false,
        }
    }

    fn drive<'scope>(
        &mut self,
        s: &'scope Scope<'scope, '_>,
        opened: &mpsc::Receiver<Opened>,
        task: &T,
        observer: &mut dyn Observer,
        on_update: &mut dyn FnMut(&Progress<'_, T::Answer>),
    ) -> Result<Finished<T::Answer>, SessionError> {
        loop {
            if let Some(i) = self.next_turn(task)? {
                if !self.measured_any {
                    self.check_host_memory(task)?;
                }
                self.turn(s, i, task, observer, on_update);
                continue;
            }
            if !self.slots.iter().any(|x| matches!(x, Slot::Opening)) {
                break;
            }
            match opened.recv() {
                Ok((i, r, prepared)) => self.accept(s, i, r, prepared, task),
                Err(_) => break,
            }
        }
        self.blame(task);
        let failures: Vec<Failure> = self.failures.iter().flatten().cloned().collect();
        // The first target's refusal, whichever opened first.
        let refused = self.refused.iter().min_by_key(|(i, _)| *i);
        let answers: Vec<T::Answer> = self.answers.drain(..).flatten().collect();
        Ok(Finished {
            shared_plan: matches!(self.plan, Some(Some(_))) && answers.len() > 1,
            answers,
            failures,
            outcome: std::mem::take(&mut self.outcome),
            measured_any: self.measured_any,
            refused: refused.map(|(_, why)| why.clone()),
        })
    }

    /// An API finished opening: ready if the task fits it, else a failure.
    fn accept<'scope>(
        &mut self,
        s: &'scope Scope<'scope, '_>,
        i: usize,
        r: Result<Box<dyn Backend>, BackendError>,
        prepared: bool,
        task: &T,
    ) {
        match r {
            Err(e) => {
                let kind = FailureKind::of_backend(&e);
                self.failures[i].push(Failure::new(e.api, kind, e.message));
                self.slots[i] = Slot::Done;
            }
            Ok(backend) => match task.fits(backend.limits()) {
                Ok(()) => {
                    let llc = backend.limits().l2_bytes.clone();
                    self.llc[i] = llc.filter(|l| l.value > 0).map(|l| (backend.api(), l));
                    self.slots[i] = Slot::Ready { backend, prepared };
                }
                Err(why) => {
                    let message = format!(
                        "{} is too large for {} on {}: {why}",
                        task.describe(),
                        backend.api(),
                        backend.identity().name
                    );
                    let kind = FailureKind::Resources;
                    self.failures[i].push(Failure::new(backend.api(), kind, message.clone()));
                    self.refused.push((i, message));
                    self.slots[i] = Slot::Done;
                    s.spawn(move || close(backend));
                }
            },
        }
    }

    /// The host's memory with every API still in the run, before the first turn.
    fn check_host_memory(&self, task: &T) -> Result<(), SessionError> {
        let apis: Vec<_> = self
            .job
            .targets
            .devices
            .iter()
            .zip(&self.slots)
            .filter(|(_, slot)| !matches!(slot, Slot::Done))
            .map(|(d, _)| (d.api, d.kind))
            .collect();
        task.check_host(&apis).map_err(SessionError::Input)
    }

    /// The next API to have its turn: the first ready one in target order, once no API is
    /// still opening (and so the plan is known).
    fn next_turn(&mut self, task: &T) -> Result<Option<usize>, SessionError> {
        if self.slots.iter().any(|x| matches!(x, Slot::Opening)) {
            return Ok(None);
        }
        if self.plan.is_none() {
            self.decide_plan(task)?;
        }
        // The APIs holding the task on the device go first: one that could not hold it beside
        // them readies it in its turn, once they have released theirs.
        let ready = |prepared: bool| {
            self.slots
                .iter()
                .position(|x| matches!(x, Slot::Ready { prepared: p, .. } if *p == prepared))
        };
        Ok(ready(true).or_else(|| ready(false)))
    }

    /// Whether an API of this physical device still waits for its turn without the task on
    /// the device (it could not hold it beside the others): the one whose turn ends releases
    /// its memory for it.
    fn one_waits_unprepared(&self) -> bool {
        self.job.targets.one_physical_device
            && self.slots.iter().any(|x| {
                matches!(
                    x,
                    Slot::Ready {
                        prepared: false,
                        ..
                    }
                )
            })
    }

    /// On one physical device every API runs the same plan, made by [`sweep::planner`]'s
    /// choice among the APIs that opened, where the task shares one.
    fn decide_plan(&mut self, task: &T) -> Result<(), SessionError> {
        let settings = self.job.settings;
        self.plan = Some(None);
        let Some(probe) = task.shared_plan(settings) else {
            return Ok(());
        };
        if !self.job.targets.one_physical_device || self.slots.len() < 2 {
            return Ok(());
        }
        let chosen = sweep::planner(self.ready(), probe).map_err(failed)?;
        // Nothing opened: nothing to plan for.
        let Some(backend) = chosen.and_then(|i| self.ready().nth(i)) else {
            return Ok(());
        };
        let plan = task.plan(backend, settings).map_err(failed)?;
        self.plan = Some(Some(plan));
        Ok(())
    }

    /// The APIs open and waiting for their turn, in target order.
    fn ready(&mut self) -> impl Iterator<Item = &mut dyn Backend> {
        self.slots.iter_mut().filter_map(|slot| match slot {
            Slot::Ready { backend, .. } => Some(backend.as_mut() as &mut dyn Backend),
            _ => None,
        })
    }

    /// Target `i`'s turn; then it closes on its own thread (or waits for the end, with
    /// `close_at_end`).
    fn turn<'scope>(
        &mut self,
        s: &'scope Scope<'scope, '_>,
        i: usize,
        task: &T,
        observer: &mut dyn Observer,
        on_update: &mut dyn FnMut(&Progress<'_, T::Answer>),
    ) {
        let Slot::Ready {
            mut backend,
            prepared,
        } = std::mem::replace(&mut self.slots[i], Slot::Done)
        else {
            return;
        };
        let api = backend.api();
        let device = &self.job.targets.devices[i];
        let read = |r: &dyn ClockReader| r.read(device);
        let start = self.job.clocks.and_then(read);
        let now = || {
            let _t = crate::trace::span(api.key(), "rows: clock");
            self.job.clocks.and_then(|r| r.read_row(device))
        };
        let clock: Option<&crate::sweep::ReadClock<'_>> = self.job.clocks.map(|_| &now as _);
        let (mut answer, err) = {
            let _t = crate::trace::span(api.key(), "turn (plan, rows, copy ceiling)");
            let (answers, failures) = (&self.answers, &self.failures);
            let mut save = |a: &T::Answer| {
                on_update(&Progress {
                    answers,
                    current: Some((i, a)),
                    failures,
                })
            };
            let turn = Turn {
                settings: self.job.settings,
                shared: self.plan.as_ref().and_then(Option::as_ref),
                observer,
                on_row: &mut save,
                clock,
                peer_llc: self.peer_llc(i),
            };
            task.turn(backend.as_mut(), prepared, turn)
        };
        // Read after the turn, before anything closes: what the device ran its last rows at.
        let end = self.job.clocks.and_then(read);
        if let (Some(a), Some(start), Some(end)) = (answer.as_mut(), start, end) {
            task.record_clocks(a, TurnClocks { start, end });
        }
        self.measured_any = true;
        if let Some(e) = err {
            self.record_error(i, task, answer.as_ref(), e);
        }
        if let Some(f) = super::said::checking_layer(backend.as_ref()) {
            self.outcome.failed = true;
            self.failures[i].push(f);
        }
        self.answers[i] = answer;
        if self.one_waits_unprepared() {
            let _t = crate::trace::span(api.key(), "release (another API's turn needs the memory)");
            let _ = backend.release();
        }
        on_update(&Progress {
            answers: &self.answers,
            current: None,
            failures: &self.failures,
        });
        match self.close_at_end {
            true => self.to_close.push(backend),
            false => {
                s.spawn(move || close(backend));
            }
        }
    }

    /// The largest last-level cache another API of target `i`'s device states, on one
    /// physical device.
    fn peer_llc(&self, i: usize) -> Option<&(Api, Named<u64>)> {
        let one = self.job.targets.one_physical_device;
        let others = self.llc.iter().enumerate().filter(|&(j, _)| one && j != i);
        others
            .filter_map(|(_, l)| l.as_ref())
            .max_by_key(|(_, l)| l.value)
    }

    /// The APIs the task blames once all had their turn (outputs the other APIs contradict):
    /// each fails, and its answer is discredited.
    fn blame(&mut self, task: &T) {
        for blame in task.conclude() {
            let Some(i) = (0..self.slots.len()).find(|&i| {
                self.answers[i].is_some() && self.job.targets.devices[i].api == blame.api
            }) else {
                continue;
            };
            if let Some(a) = self.answers[i].as_mut() {
                task.discredit(a, &blame.message);
            }
            self.failures[i].push(blame);
            self.outcome.failed = true;
        }
    }

    fn record_error(&mut self, i: usize, task: &T, answer: Option<&T::Answer>, e: SweepError) {
        let api = self.job.targets.devices[i].api;
        match &e {
            SweepError::Backend(be)
                if be.kind == ErrorKind::OutOfMemory && answer.is_none_or(|a| task.is_empty(a)) =>
            {
                self.outcome.too_big = Some(format!(
                    "{} is too large for the device: {be}",
                    task.describe()
                ));
            }
            _ => self.outcome.failed = true,
        }
        self.failures[i].push(Failure::new(api, FailureKind::of_sweep(&e), e.detail()));
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

fn failed(e: impl std::fmt::Display) -> SessionError {
    SessionError::Failed(e.to_string())
}
