//! `run_batch`: back-to-back launches (or copies) timed with CUDA events, and the deadline's
//! wait.
//!
//! One stream carries everything. A batch issues its launches back to back in stream order,
//! with event records around the batch or between launches, and the host waits once at the
//! end, like a plain harness ("launches only inside the timed region"). Nothing but our
//! records and the operations themselves lands inside the timed region: buffers are plain
//! allocations that record no events of their own.

use std::ptr;
use std::thread;
use std::time::{Duration, Instant};

use blocksweep_core::{BatchTimes, Stamps};
use cudarc::driver::sys::CUevent;

use crate::codes::CuCode;
use crate::context::Stream;
use crate::entry_points::cu;
use crate::error::{map_driver, CudaError, OrMap};

/// "cuEventElapsedTime ... has a resolution of around 0.5 microseconds" (CUDA Driver API,
/// cuEventElapsedTime).
pub const EVENT_RESOLUTION_NS: f64 = 500.0;
pub const EVENT_RESOLUTION_SOURCE: &str =
    "cuEventElapsedTime (\"resolution of around 0.5 microseconds\", CUDA Driver API docs)";
pub const TIMER_METHOD: &str = "CUDA events (cuEventRecord / cuEventElapsedTime)";

/// `CU_EVENT_DEFAULT`: timing enabled, blocking sync off.
const EVENT_DEFAULT: u32 = 0;

/// A timing event of the current context, destroyed on drop.
struct Event {
    raw: CUevent,
}

// SAFETY: used from one thread at a time, with its context bound (see context.rs).
unsafe impl Send for Event {}

impl Event {
    fn new() -> Result<Event, CudaError> {
        let mut raw: CUevent = ptr::null_mut();
        // SAFETY: one pointer out; a context is current.
        unsafe { cu!(cuEventCreate(&mut raw, EVENT_DEFAULT)) }.or_map(map_driver)?;
        Ok(Event { raw })
    }

    fn record(&self, stream: &Stream) -> Result<(), CudaError> {
        // SAFETY: event and stream are live and of the same context.
        unsafe { cu!(cuEventRecord(self.raw, stream.raw())) }.or_map(map_driver)
    }

    /// Whether everything recorded before this event has finished (`cuEventQuery`): its
    /// `CUDA_ERROR_NOT_READY` is "not yet"; any other error is the work's own (a fault).
    fn done(&self) -> Result<bool, CudaError> {
        // SAFETY: the event is live.
        match unsafe { cu!(cuEventQuery(self.raw)) } {
            Ok(()) => Ok(true),
            Err(f) if f.code == CuCode::CUDA_ERROR_NOT_READY => Ok(false),
            Err(f) => Err(map_driver(f.call, f.code)),
        }
    }

    /// Milliseconds from `self` to `end`, both recorded and complete.
    fn elapsed_ms(&self, end: &Event) -> Result<f64, CudaError> {
        let mut ms = 0f32;
        // SAFETY: one float out; both events are live. The unversioned entry point is the
        // CUDA 12.0 one (cuEventElapsedTime_v2 is 12.8+).
        unsafe { cu!(cuEventElapsedTime(&mut ms, self.raw, end.raw)) }.or_map(map_driver)?;
        Ok(f64::from(ms))
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by cuEventCreate and destroyed only here; a failure at teardown
        // cannot be acted on.
        let _ = unsafe { cu!(cuEventDestroy_v2(self.raw)) };
    }
}

/// Timing-enabled events, grown to the largest batch asked for and reused, and one more that
/// marks the end of the work a deadline waits for.
pub(crate) struct EventTimer {
    events: Vec<Event>,
    end: Event,
}

impl EventTimer {
    pub(crate) fn new() -> Result<Self, CudaError> {
        let mut t = EventTimer {
            events: Vec::new(),
            end: Event::new()?,
        };
        t.ensure(2)?;
        Ok(t)
    }

    /// Waits for everything issued on `stream` so far, for `limit` at most (polling
    /// cuEventQuery, where cuStreamSynchronize would wait for ever on a kernel that loops):
    /// past it, [`CudaError::Deadline`] saying `what` was late. The first [`SPIN`] asks
    /// without sleeping, as cuStreamSynchronize spins, so a short batch or a row's read-back
    /// ends when the device does rather than a pause later.
    pub(crate) fn wait_within(
        &self,
        stream: &Stream,
        limit: Duration,
        what: &'static str,
    ) -> Result<(), CudaError> {
        self.end.record(stream)?;
        let start = Instant::now();
        let finished = spin_then_poll(
            limit,
            || start.elapsed(),
            |_| thread::yield_now(),
            thread::sleep,
            || self.end.done(),
        )?;
        match finished {
            true => Ok(()),
            false => Err(CudaError::Deadline {
                what,
                seconds: limit.as_secs_f64(),
            }),
        }
    }

    fn ensure(&mut self, count: usize) -> Result<(), CudaError> {
        while self.events.len() < count {
            self.events.push(Event::new()?);
        }
        Ok(())
    }

    /// Issues `count` runs of `op` back to back on the stream (stream order runs each after
    /// the one before; the host does not wait between them) and waits once at the end.
    /// Events are recorded before the first and after the last run for [`Stamps::Batch`], and
    /// before the first and after every run for [`Stamps::Each`] (N + 1 events: run i's
    /// interval is from event i to event i + 1). The wait ends at `limit`
    /// ([`EventTimer::wait_within`]): a kernel may never finish.
    pub(crate) fn run_batch(
        &mut self,
        stream: &Stream,
        count: u32,
        stamps: Stamps,
        limit: Duration,
        op: &mut dyn FnMut() -> Result<(), CudaError>,
    ) -> Result<BatchTimes, CudaError> {
        let marks = match stamps {
            Stamps::None => 0,
            Stamps::Batch => 2,
            Stamps::Each => count as usize + 1,
        };
        self.ensure(marks)?;
        let e = &self.events;
        if marks > 0 {
            e[0].record(stream)?;
        }
        for i in 0..count as usize {
            op()?;
            if stamps == Stamps::Each {
                e[i + 1].record(stream)?;
            }
        }
        if stamps == Stamps::Batch {
            e[1].record(stream)?;
        }
        self.wait_within(stream, limit, "the kernel")?;
        Ok(match stamps {
            Stamps::None => BatchTimes::default(),
            Stamps::Batch => BatchTimes {
                batch_ms: Some(e[0].elapsed_ms(&e[1])?),
                each_ms: Vec::new(),
            },
            Stamps::Each => BatchTimes {
                batch_ms: None,
                each_ms: e[..marks]
                    .windows(2)
                    .map(|w| w[0].elapsed_ms(&w[1]))
                    .collect::<Result<_, _>>()?,
            },
        })
    }
}

impl EventTimer {
    /// `count` runs of `op` back to back on the stream, each after `before` (which stream
    /// order finishes first): an event after `before` and one after `op`, so run i's interval
    /// (event 2i to 2i + 1) is its own. Waits once, at most `limit`.
    pub(crate) fn run_each_after(
        &mut self,
        stream: &Stream,
        (count, limit): (u32, Duration),
        before: &mut dyn FnMut() -> Result<(), CudaError>,
        op: &mut dyn FnMut() -> Result<(), CudaError>,
    ) -> Result<BatchTimes, CudaError> {
        let marks = 2 * count as usize;
        self.ensure(marks)?;
        let e = &self.events;
        for i in 0..count as usize {
            before()?;
            e[2 * i].record(stream)?;
            op()?;
            e[2 * i + 1].record(stream)?;
        }
        self.wait_within(stream, limit, "the kernel")?;
        Ok(BatchTimes {
            batch_ms: None,
            each_ms: e[..marks]
                .chunks(2)
                .map(|w| w[0].elapsed_ms(&w[1]))
                .collect::<Result<_, _>>()?,
        })
    }
}

/// How long a wait asks without sleeping: a 2 ms batch (the adaptive protocol's aim) or a 4K
/// row's read-back is over by then.
const SPIN: Duration = Duration::from_millis(5);
/// The first poll's pause, and the longest: short waits stay short, long ones cost little.
const FIRST_PAUSE: Duration = Duration::from_millis(1);
const LONGEST_PAUSE: Duration = Duration::from_millis(10);

/// [`poll_until`] in two phases: for the first [`SPIN`] (or `limit`, if sooner) asking again
/// after each `spin` (a yield), then after each `sleep`.
pub(crate) fn spin_then_poll(
    limit: Duration,
    mut elapsed: impl FnMut() -> Duration,
    spin: impl FnMut(Duration),
    sleep: impl FnMut(Duration),
    mut done: impl FnMut() -> Result<bool, CudaError>,
) -> Result<bool, CudaError> {
    if poll_until(limit.min(SPIN), &mut elapsed, spin, &mut done)? {
        return Ok(true);
    }
    poll_until(limit, elapsed, sleep, done)
}

/// Asks `done` until it says yes (`Ok(true)`), fails, or `elapsed` reaches `limit`
/// (`Ok(false)`, after one last ask), pausing with `sleep` from 1 ms, doubling up to 10 ms,
/// never past the limit. The clock and the pause are parameters so that tests need no device.
pub(crate) fn poll_until(
    limit: Duration,
    mut elapsed: impl FnMut() -> Duration,
    mut sleep: impl FnMut(Duration),
    mut done: impl FnMut() -> Result<bool, CudaError>,
) -> Result<bool, CudaError> {
    let mut pause = FIRST_PAUSE;
    loop {
        if done()? {
            return Ok(true);
        }
        let now = elapsed();
        if now >= limit {
            return Ok(false);
        }
        sleep(pause.min(limit - now));
        pause = (pause * 2).min(LONGEST_PAUSE);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::cell::{Cell, RefCell};

    /// `poll_until` on a fake clock that the fake pause advances; the pauses it took.
    fn poll(
        limit_ms: u64,
        mut answers: impl FnMut(u32) -> Result<bool, CudaError>,
    ) -> (Result<bool, CudaError>, Vec<u64>) {
        let now = Cell::new(Duration::ZERO);
        let mut pauses = Vec::new();
        let mut asked = 0;
        let r = poll_until(
            Duration::from_millis(limit_ms),
            || now.get(),
            |d| {
                pauses.push(d.as_millis() as u64);
                now.set(now.get() + d);
            },
            || {
                asked += 1;
                answers(asked)
            },
        );
        (r, pauses)
    }

    #[test]
    fn a_wait_spins_through_its_first_5_ms_then_sleeps() {
        let now = Cell::new(Duration::ZERO);
        let tick = |d: Duration| now.set(now.get() + d);
        let (spins, sleeps) = (Cell::new(0), RefCell::new(Vec::new()));
        let mut asked = 0;
        // Each spin takes 100 µs; done at the 54th ask: 51 asks over 5 ms of spinning, then
        // three more, 1 and 2 ms asleep between them.
        let r = spin_then_poll(
            Duration::from_millis(500),
            || now.get(),
            |_| {
                spins.set(spins.get() + 1);
                tick(Duration::from_micros(100));
            },
            |d| {
                sleeps.borrow_mut().push(d.as_millis() as u64);
                tick(d);
            },
            || {
                asked += 1;
                Ok(asked == 54)
            },
        );
        assert!(r.unwrap());
        assert_eq!(spins.get(), 50, "5 ms of 100 µs spins");
        assert_eq!(*sleeps.borrow(), [1, 2]);
        // A deadline inside the spin ends the wait there, asleep never.
        let late = spin_then_poll(
            Duration::from_millis(2),
            || now.get(),
            |_| tick(Duration::from_micros(100)),
            |_| panic!("no sleep before a 2 ms deadline"),
            || Ok(false),
        );
        assert!(!late.unwrap());
    }

    #[test]
    fn finished_work_is_not_waited_for() {
        let (r, pauses) = poll(500, |_| Ok(true));
        assert_eq!((r.unwrap(), pauses), (true, vec![]));
    }

    #[test]
    fn pauses_grow_from_1_ms_to_10_ms_until_the_work_is_done() {
        let (r, pauses) = poll(500, |asked| Ok(asked == 8));
        assert!(r.unwrap());
        assert_eq!(pauses, [1, 2, 4, 8, 10, 10, 10]);
    }

    #[test]
    fn the_deadline_ends_the_wait_without_sleeping_past_it() {
        let (r, pauses) = poll(25, |_| Ok(false));
        assert!(!r.unwrap(), "still running at the deadline");
        // 1 + 2 + 4 + 8 = 15, then the 10 left, then one last ask at 25 ms.
        assert_eq!(pauses, [1, 2, 4, 8, 10]);
        let (r, pauses) = poll(0, |_| Ok(false));
        assert!(!r.unwrap());
        assert!(pauses.is_empty());
    }

    #[test]
    fn a_fault_ends_the_wait_with_its_error() {
        let (r, pauses) = poll(500, |asked| match asked {
            3 => Err(map_driver(
                "cuEventQuery",
                CuCode::CUDA_ERROR_ILLEGAL_ADDRESS,
            )),
            _ => Ok(false),
        });
        let e = r.unwrap_err();
        assert_eq!(e.code(), Some(CuCode::CUDA_ERROR_ILLEGAL_ADDRESS));
        assert_eq!(pauses, [1, 2]);
    }

    #[test]
    fn the_real_clock_gives_up_at_a_short_deadline() {
        let start = Instant::now();
        let late = poll_until(
            Duration::from_millis(30),
            || start.elapsed(),
            thread::sleep,
            || Ok(false),
        );
        assert!(!late.unwrap());
        // Never before the deadline, whatever the scheduler does (no upper bound: a loaded
        // machine may wake the last sleep late, and a wait that never ends hangs the test).
        let took = start.elapsed();
        assert!(took >= Duration::from_millis(30), "{took:?}");
    }
}
