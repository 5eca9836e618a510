//! One checked dispatch, the one protocol of every launch whose output is trusted (the sweep's
//! rows of either workload, the lab's shapes, tail and resource rows, validate's claims): the
//! outputs reset, the launch dispatched (timed or not), read back and verified. What is reset
//! and verified is the check's ([`OutputCheck`]): the frame's against the CPU reference
//! ([`FrameCheck`]), or a user kernel's (`workload::dispatch`).

use super::SweepError;
use crate::api::Api;
use crate::backend::{Backend, BackendError, Dispatch, ErrorKind, Launch, Work};
use crate::builtin;
use crate::frame::try_zeroed;
use crate::measure::{measure, Protocol, Timing};
use crate::verify::{verify_counted, Mismatch};

/// Whether a dispatch's output passed its check: `Err` holds what was wrong, in the check's
/// terms (the frame's first bad pixel, a user kernel's failed check).
pub(crate) type Matched<W> = Result<(), W>;

/// What a checked dispatch checks: how its outputs are reset before the launch and how they
/// are verified after it.
pub(crate) trait OutputCheck {
    /// What a wrong output is, in this check's terms.
    type Wrong;

    /// Makes the outputs what a dispatch must start from (poisoned, so an element the launch
    /// skips shows).
    fn reset(&mut self, backend: &mut dyn Backend) -> Result<(), BackendError>;

    /// Resets the outputs and dispatches `launch` once, untimed: `Ok(Err)` is the dispatch's
    /// own failure. By default [`OutputCheck::reset`], then the dispatch; a check may do it
    /// as one [`Backend::run_checked`] and read its output back in the same call.
    fn reset_and_dispatch(
        &mut self,
        backend: &mut dyn Backend,
        launch: Launch,
    ) -> Result<Dispatch, BackendError> {
        self.reset(backend)?;
        Ok(crate::backend::checked::dispatch(backend, Some(launch)))
    }

    /// Reads the dispatched output back and checks it. May dispatch `launch` again (a user
    /// kernel's second poison tells never-written elements from written poison).
    fn verify(
        &mut self,
        backend: &mut dyn Backend,
        launch: Launch,
    ) -> Result<Matched<Self::Wrong>, SweepError>;

    /// Whether the timed batch's last dispatch is what gets verified. True where the output
    /// depends on the input only (the frame: it saves a dispatch on a huge frame); false
    /// where the kernel may read what it writes, so that it is checked from reset outputs
    /// first and timed only once it matched.
    fn checks_timed_output(&self) -> bool;
}

/// What one checked dispatch came to.
pub(crate) enum Dispatched<W> {
    /// The API refused the launch's first dispatch (its `LaunchRejected` error).
    Refused(BackendError),
    /// A dispatch of the launch failed otherwise, or a later one was refused.
    Failed(BackendError),
    /// It ran: the timed batch's timing (where one was asked for and the output allowed it),
    /// and whether the output matched.
    Ran(Option<Timing>, Matched<W>),
}

/// One checked dispatch of `launch`: `check` resets the outputs, the launch runs, `check`
/// verifies; timed under `timed` where it is given (validate and the resource rows time
/// nothing). The order is the check's ([`OutputCheck::checks_timed_output`]). A failure of
/// the dispatch is a result; failing to reset or to read back is returned.
pub(crate) fn checked_dispatch<W>(
    backend: &mut dyn Backend,
    launch: Launch,
    timed: Option<&Protocol>,
    check: &mut dyn OutputCheck<Wrong = W>,
) -> Result<Dispatched<W>, SweepError> {
    let work = Work::Kernel(launch);
    let timed_first = timed.filter(|_| check.checks_timed_output());
    let first = match timed_first {
        Some(protocol) => {
            check.reset(backend)?;
            measure(backend, work, protocol).map(Some)
        }
        None => check.reset_and_dispatch(backend, launch)?.map(|()| None),
    };
    let timing = match first {
        Ok(timing) => timing,
        Err(e) if e.kind == ErrorKind::LaunchRejected => return Ok(Dispatched::Refused(e)),
        Err(e) => return Ok(Dispatched::Failed(e)),
    };
    let matched = check.verify(backend, launch)?;
    let timing = match (timed, timing, &matched) {
        // Checked from reset outputs already: timed only now, and only if it matched.
        (Some(protocol), None, Ok(())) => match measure(backend, work, protocol) {
            Ok(timing) => Some(timing),
            Err(e) => return Ok(Dispatched::Failed(e)),
        },
        (_, timing, _) => timing,
    };
    Ok(Dispatched::Ran(timing, matched))
}

/// What the frame's checks keep from one dispatch to the next: the read-back buffer (made
/// once, where the backend lends no host memory) and the time of each phase.
pub(crate) struct FrameReadback {
    own_output: Option<Vec<f32>>,
    phases: RowPhases,
    /// Whether the dispatches are a sweep's rows, timed: only theirs are traced as the poison
    /// and timed-batch phases (validate's claims trace their read-back and verify alone).
    timed: bool,
    /// When the outputs were poisoned: the dispatch's phase runs from there to the read-back.
    dispatched: Option<std::time::Instant>,
}

impl FrameReadback {
    /// For rows timed under a protocol (the sweep's, the lab's shapes and tail).
    pub(crate) fn timed(api: Api) -> FrameReadback {
        FrameReadback::new(api, true)
    }

    /// For untimed dispatches (validate's claims, the resource rows).
    pub(crate) fn untimed(api: Api) -> FrameReadback {
        FrameReadback::new(api, false)
    }

    fn new(api: Api, timed: bool) -> FrameReadback {
        FrameReadback {
            own_output: None,
            phases: RowPhases::new(api),
            timed,
            dispatched: None,
        }
    }

    /// The start of the poison's or the dispatch's phase, where those are traced.
    fn dispatch_phase_start(&self) -> Option<std::time::Instant> {
        self.phases.start().filter(|_| self.timed)
    }
}

/// The frame's check of one dispatch: the output plane poisoned with NaN, then read back (into
/// the host memory the backend lends, else the kept buffer) and compared pixel by pixel with
/// `reference`, the uploaded frame's CPU output.
pub(crate) struct FrameCheck<'a> {
    kept: &'a mut FrameReadback,
    reference: &'a [f32],
}

impl<'a> FrameCheck<'a> {
    pub(crate) fn new(kept: &'a mut FrameReadback, reference: &'a [f32]) -> FrameCheck<'a> {
        FrameCheck { kept, reference }
    }
}

impl OutputCheck for FrameCheck<'_> {
    type Wrong = Mismatch;

    fn reset(&mut self, backend: &mut dyn Backend) -> Result<(), BackendError> {
        let pixels = self.reference.len() as u64;
        let kept = &mut *self.kept;
        let started = kept.dispatch_phase_start();
        let poisoned = builtin::poison(backend, pixels);
        kept.phases.stop(0, started);
        kept.dispatched = kept.dispatch_phase_start();
        poisoned
    }

    fn verify(
        &mut self,
        backend: &mut dyn Backend,
        _: Launch,
    ) -> Result<Matched<Mismatch>, SweepError> {
        let kept = &mut *self.kept;
        let dispatched = kept.dispatched.take();
        kept.phases.stop(1, dispatched);
        // The lab's grid series uploads a frame of its own per point: a buffer of another
        // frame's size is made again.
        if (kept.own_output.as_ref()).is_some_and(|o| o.len() != self.reference.len()) {
            kept.own_output = None;
        }
        read_and_verify(
            backend,
            &mut kept.own_output,
            self.reference,
            &mut kept.phases,
        )
    }

    fn checks_timed_output(&self) -> bool {
        true
    }
}

/// Reads a row's output back and verifies it: in place, in the host memory the backend lends
/// (pinned or mapped: no copy on the host), else through a read into `own`, allocated
/// at the first row that needs it. Read-back and verify are traced as phases 2 and 3.
fn read_and_verify(
    backend: &mut dyn Backend,
    own: &mut Option<Vec<f32>>,
    reference: &[f32],
    phases: &mut RowPhases,
) -> Result<Result<(), Mismatch>, SweepError> {
    let started = phases.start();
    let api = backend.api();
    let reading = crate::trace::activity(api.key(), "reading back", 0);
    let lent = builtin::read_staged(backend)?;
    let output: &[f32] = match lent {
        Some(view) if view.len() != reference.len() => {
            let message = format!(
                "the lent output holds {} values; the frame has {} pixels",
                view.len(),
                reference.len()
            );
            return Err(BackendError::new(api, ErrorKind::Driver, message).into());
        }
        Some(view) => view,
        None => {
            let out = match own {
                Some(out) => out,
                None => own.insert(try_zeroed(reference.len() as u64, "the read-back buffer")?),
            };
            builtin::read(backend, out)?;
            out
        }
    };
    phases.stop(2, started);
    drop(reading);
    let busy = crate::trace::activity(api.key(), "verifying", reference.len() as u64);
    Ok(phases.time(3, || {
        verify_counted(output, reference, &|n| busy.advance(n))
    }))
}

/// Where a sweep's row time goes, summed over the rows and traced once at the end
/// (`BLOCKSWEEP_TRACE=1`; nothing is timed otherwise).
struct RowPhases {
    api: Api,
    took: Option<[std::time::Duration; 4]>,
}

impl RowPhases {
    const NAMES: [&'static str; 4] = ["poison", "timed batches", "read-back", "verify"];

    fn new(api: Api) -> Self {
        RowPhases {
            api,
            took: crate::trace::enabled().then_some(Default::default()),
        }
    }

    fn time<T>(&mut self, phase: usize, f: impl FnOnce() -> T) -> T {
        let started = self.start();
        let out = f();
        self.stop(phase, started);
        out
    }

    /// The start of a phase timed by hand (where a closure cannot return what it borrows).
    fn start(&self) -> Option<std::time::Instant> {
        self.took.is_some().then(std::time::Instant::now)
    }

    fn stop(&mut self, phase: usize, started: Option<std::time::Instant>) {
        if let (Some(took), Some(started)) = (&mut self.took, started) {
            took[phase] += started.elapsed();
        }
    }
}

impl Drop for RowPhases {
    fn drop(&mut self) {
        for (name, took) in Self::NAMES.iter().zip(self.took.iter().flatten()) {
            crate::trace::record(self.api.key(), &format!("rows: {name}"), *took);
        }
    }
}

#[cfg(test)]
#[path = "check_tests.rs"]
pub(crate) mod tests;
