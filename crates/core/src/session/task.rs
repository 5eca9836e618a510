//! What one command asks of every API of a run, as the pipeline ([`super::pipeline::run`])
//! carries it out: a sweep of the frame or of a user's kernel, `validate`'s launches, the lab's
//! shapes and tail, `limits`' questions. The pipeline opens, readies, plans, hands each API
//! its turn and closes; a task says only what is its own.

use super::SessionError;
use crate::backend::{Api, Backend, BackendError, DeviceKind};
use crate::blocks::BlockSize;
use crate::limits::{Limits, Named};
use crate::sweep::{Observer, SweepError};

/// One command's work on each API of a run.
pub trait Task: Sync {
    /// What one API's turn comes to (a sweep's result, validate's checks, ...).
    type Answer: Send;
    /// What is decided once for every API on one physical device before any is measured (the
    /// sweep's rows, the tail's wave).
    type Plan: Sync;
    /// What the caller sets for the whole run beside the task (the sweep's configuration).
    type Settings: Sync;

    /// What it is, for messages: "frame 3840x2160", "kernel 'saxpy' at n = 16777216".
    fn describe(&self) -> String;

    /// Whether one API's device can hold it; `Err` names the limit that refuses it.
    fn fits(&self, _limits: &Limits) -> Result<(), String> {
        Ok(())
    }

    /// The device memory one API's copy of the task holds, where it is known: the APIs of one
    /// GPU that cannot all hold it at once take turns holding it.
    fn device_bytes(&self) -> Option<u64> {
        None
    }

    /// Whether the host has the memory for the run with these APIs still in it.
    fn check_host(&self, _apis: &[(Api, DeviceKind)]) -> Result<(), String> {
        Ok(())
    }

    /// Readies an opened backend, untimed, on the API's opening thread (the frame uploaded, a
    /// user's kernel built and filled). A failure here is not final: the turn is told, and
    /// tries again so that the error lands in the API's answer.
    fn prepare(&self, _backend: &mut dyn Backend) -> Result<(), BackendError> {
        Ok(())
    }

    /// Whether the APIs of one physical device share one plan, and if so the block whose
    /// residency picks the planner among them (an occupancy API plans for all; `Some(None)`:
    /// the first API plans). `None` (the default): each API plans its own in its turn.
    fn shared_plan(&self, _settings: &Self::Settings) -> Option<Option<BlockSize>> {
        None
    }

    /// The plan every API of the device runs, made on the one [`Task::shared_plan`] picked.
    fn plan(
        &self,
        planner: &mut dyn Backend,
        settings: &Self::Settings,
    ) -> Result<Self::Plan, BackendError>;

    /// One API's turn, with nothing else running beside it (`prepared`: whether
    /// [`Task::prepare`] succeeded on it). Returns its answer, where it has one, and the error
    /// that stopped it, where one did.
    fn turn(&self, backend: &mut dyn Backend, prepared: bool, turn: Turn<'_, Self>) -> Ran<Self>;

    /// Once every API has had its turn: the APIs whose answers the others contradict (a user's
    /// kernel whose outputs disagree across APIs), each as its failure. Nothing by default.
    fn conclude(&self) -> Vec<crate::report::Failure> {
        Vec::new()
    }

    /// Records the device's clocks at the start and end of an API's turn on its answer (the
    /// sweep's result keeps them). Nothing by default.
    fn record_clocks(&self, _answer: &mut Self::Answer, _clocks: crate::clocks::TurnClocks) {}

    /// Marks an answer the others contradict (its rows no longer count as checked).
    fn discredit(&self, _answer: &mut Self::Answer, _why: &str) {}

    /// Whether an answer holds nothing measured yet: an out-of-memory error then means the
    /// task is too large for the device (bad input), not a failure of the API.
    fn is_empty(&self, _answer: &Self::Answer) -> bool {
        false
    }
}

/// What one API's turn is given beside its backend.
pub struct Turn<'a, T: Task + ?Sized> {
    pub settings: &'a T::Settings,
    /// The plan every API of the device runs; `None`: the API plans its own.
    pub shared: Option<&'a T::Plan>,
    pub observer: &'a mut dyn Observer,
    /// Sees the answer so far after each row, so that a caller can save as it goes.
    pub on_row: &'a mut dyn FnMut(&T::Answer),
    /// Reads the device's clocks now, where the caller has a reader (beside each row).
    pub clock: Option<&'a crate::sweep::ReadClock<'a>>,
    /// The last-level cache as another API of the same device states it, where one does
    /// (`--cold` sizes its flush from it where this API states none).
    pub peer_llc: Option<&'a (Api, Named<u64>)>,
}

/// One API's turn: its answer where it has one, and the error that stopped it where one did.
pub type Ran<T> = (Option<<T as Task>::Answer>, Option<SweepError>);

/// Where a run's task comes from: asked once, as the APIs start to open (the caller may still
/// be making it: generating a frame or a kernel's buffers takes a while).
pub trait Source<T: Task + ?Sized> {
    fn task(&mut self) -> Result<&T, SessionError>;
}

/// A task made already.
impl<T: Task> Source<T> for T {
    fn task(&mut self) -> Result<&T, SessionError> {
        Ok(self)
    }
}

/// A task made on first asking, while the APIs open.
pub struct Later<T, F> {
    make: Option<F>,
    made: Option<T>,
}

impl<T, F: FnOnce() -> Result<T, SessionError>> Later<T, F> {
    pub fn new(make: F) -> Self {
        Later {
            make: Some(make),
            made: None,
        }
    }
}

impl<T: Task, F: FnOnce() -> Result<T, SessionError>> Source<T> for Later<T, F> {
    fn task(&mut self) -> Result<&T, SessionError> {
        if let Some(make) = self.make.take() {
            self.made = Some(make()?);
        }
        let why = "the task could not be made";
        self.made
            .as_ref()
            .ok_or_else(|| SessionError::Failed(why.into()))
    }
}

/// Every API's answer and failure once the run is over, in target order.
pub struct Finished<A> {
    pub answers: Vec<A>,
    pub failures: Vec<crate::report::Failure>,
    /// Whether the APIs ran one shared plan.
    pub shared_plan: bool,
    pub outcome: super::SweepOutcome,
    /// Whether any API had its turn.
    pub measured_any: bool,
    /// The first target's refusal of the task (too large for its device), where one refused.
    pub refused: Option<String>,
}

impl<A> Finished<A> {
    /// The run, where an API had its turn; else why none did: the task too large for every
    /// device that opened (bad input), or no API open.
    pub fn require_any(self) -> Result<Self, SessionError> {
        if self.measured_any {
            return Ok(self);
        }
        match self.refused {
            Some(why) => Err(SessionError::Input(why)),
            None => Err(SessionError::nothing_opened(&self.failures)),
        }
    }
}

/// Where a run stands after a row: every API's answer so far and its failures, in target
/// order.
pub struct Progress<'a, A> {
    /// The answers of the APIs that have had their turn.
    pub answers: &'a [Option<A>],
    /// The API in its turn (its index), with its answer so far.
    pub current: Option<(usize, &'a A)>,
    pub failures: &'a [Vec<crate::report::Failure>],
}

impl<'a, A> Progress<'a, A> {
    /// Every answer so far, in target order.
    pub fn answers(&self) -> impl Iterator<Item = &'a A> + '_ {
        let current = self.current;
        self.answers
            .iter()
            .enumerate()
            .filter_map(move |(i, a)| match current {
                Some((c, now)) if c == i => Some(now),
                _ => a.as_ref(),
            })
    }

    /// Every failure so far, in target order.
    pub fn failures(&self) -> impl Iterator<Item = &'a crate::report::Failure> + '_ {
        self.failures.iter().flatten()
    }

    /// Where the run stands, for a document saved now: the API in its turn, else the last to
    /// have had one (`last_turn`, the caller's memory of `current`), with `rows` of its answer
    /// of `planned`; and the APIs of `apis` (target order) not begun (no answer, no failure).
    pub fn stood(
        &self,
        apis: &[crate::backend::Api],
        last_turn: Option<usize>,
        rows: impl Fn(&A) -> usize,
        planned: Option<usize>,
    ) -> crate::report::StoppedAt {
        let turn = self.current.map(|(i, _)| i).or(last_turn);
        let answer = |i: usize| match self.current {
            Some((c, now)) if c == i => Some(now),
            _ => self.answers.get(i).and_then(Option::as_ref),
        };
        let begun = |i: usize| {
            Some(i) == turn
                || answer(i).is_some()
                || self.failures.get(i).is_some_and(|f| !f.is_empty())
        };
        crate::report::StoppedAt {
            api: turn.and_then(|i| apis.get(i).copied()),
            kept: turn.and_then(answer).map_or(0, rows),
            planned,
            not_reached: (apis.iter().enumerate())
                .filter(|&(i, _)| !begun(i))
                .map(|(_, &a)| a)
                .collect(),
        }
    }
}
