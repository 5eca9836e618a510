//! Opt-in phase timing for start-up questions ("where do the two seconds go?").
//!
//! With `BLOCKSWEEP_TRACE=1` every [`span`] prints one line to stderr when it ends:
//!
//! ```text
//! blocksweep trace   412.7 ms  opencl open: build 388.1 ms
//! ```
//!
//! the time since the first traced phase of the process, the scope (an API key, or "core"), the
//! phase, and how long the phase took. Nested spans print inner phases first. Without the
//! variable a span costs one relaxed atomic load and prints nothing. Written once, here; the
//! backends and the core call it.
//!
//! A long phase on any thread (making the frame, an upload, a verification) is also an
//! [`activity`]: a span that is listed, with its progress, for as long as it runs, whether or
//! not tracing is on, so that the progress line can say what the process is waiting for.

use std::io::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

/// The environment variable that turns tracing on ("1").
pub const TRACE_ENV: &str = "BLOCKSWEEP_TRACE";

/// When the first span of this process started, where tracing is on.
static EPOCH: OnceLock<Option<Instant>> = OnceLock::new();

fn epoch() -> Option<Instant> {
    *EPOCH.get_or_init(|| {
        std::env::var(TRACE_ENV)
            .is_ok_and(|v| v.trim() == "1")
            .then(Instant::now)
    })
}

/// Whether `BLOCKSWEEP_TRACE=1` (read once per process).
pub fn enabled() -> bool {
    epoch().is_some()
}

/// One traced phase; prints its line when dropped (or [`Span::end`]ed).
#[must_use = "a span measures until it is dropped"]
pub struct Span {
    open: Option<(Instant, &'static str, String)>,
}

/// Starts timing `phase` of `scope` (e.g. `span("opencl", "open: build")`).
pub fn span(scope: &'static str, phase: impl Into<String>) -> Span {
    Span {
        open: enabled().then(|| (Instant::now(), scope, phase.into())),
    }
}

/// Runs `f` as one traced phase.
pub fn time<T>(scope: &'static str, phase: impl Into<String>, f: impl FnOnce() -> T) -> T {
    let _span = span(scope, phase);
    f()
}

impl Span {
    /// Ends the phase now.
    pub fn end(self) {}
}

impl Drop for Span {
    fn drop(&mut self) {
        if let Some((start, scope, phase)) = self.open.take() {
            record(scope, &phase, start.elapsed());
        }
    }
}

/// Prints one phase's line for time measured elsewhere (e.g. a sum over the rows of a sweep).
pub fn record(scope: &str, phase: &str, took: std::time::Duration) {
    let Some(epoch) = epoch() else {
        return;
    };
    let ms = |d: std::time::Duration| d.as_secs_f64() * 1e3;
    let line = format!(
        "blocksweep trace {:>9.1} ms  {scope} {phase}: {:.1} ms\n",
        ms(Instant::now().saturating_duration_since(epoch)),
        ms(took)
    );
    // One write per line, so lines from parallel threads do not interleave; a failing
    // stderr is not worth a panic.
    let _ = std::io::stderr().lock().write_all(line.as_bytes());
}

/// The activities running now, oldest first.
static ACTIVE: Mutex<Vec<Entry>> = Mutex::new(Vec::new());
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

struct Entry {
    id: u64,
    scope: &'static str,
    what: String,
    since: Instant,
    /// Units of work in all (0: unknown) and done so far.
    total: u64,
    done: Arc<AtomicU64>,
}

fn active_list() -> std::sync::MutexGuard<'static, Vec<Entry>> {
    // A poisoned lock only means a thread panicked mid-update; the list is still usable.
    ACTIVE
        .lock()
        .unwrap_or_else(|poisoned| poisoned.into_inner())
}

/// A long phase, traced as a [`span`] and listed by [`busy`] until dropped.
#[must_use = "an activity is listed until it is dropped"]
pub struct Activity {
    id: u64,
    done: Arc<AtomicU64>,
    _span: Span,
}

/// Starts `what` of `scope` (an API key, or "core"), of `total` units of work (bytes, pixels;
/// 0 when unknown), e.g. `activity("core", "making the frame", 3 * pixels)`.
pub fn activity(scope: &'static str, what: impl Into<String>, total: u64) -> Activity {
    let what = what.into();
    let id = NEXT_ID.fetch_add(1, Ordering::Relaxed);
    let done = Arc::new(AtomicU64::new(0));
    active_list().push(Entry {
        id,
        scope,
        what: what.clone(),
        since: Instant::now(),
        total,
        done: done.clone(),
    });
    Activity {
        id,
        done,
        _span: span(scope, what),
    }
}

impl Activity {
    /// `units` more of the total are done (callable from every worker thread at once).
    pub fn advance(&self, units: u64) {
        self.done.fetch_add(units, Ordering::Relaxed);
    }
}

impl Drop for Activity {
    fn drop(&mut self) {
        active_list().retain(|e| e.id != self.id);
    }
}

/// One activity as [`busy`] sees it.
#[derive(Debug, Clone, PartialEq)]
pub struct Busy {
    pub scope: &'static str,
    pub what: String,
    pub elapsed: Duration,
    /// Done over total, where the total is known.
    pub fraction: Option<f64>,
    /// The time left at the rate so far, once some of it is done.
    pub left: Option<Duration>,
}

/// The activities running now, oldest first.
pub fn busy() -> Vec<Busy> {
    let now = Instant::now();
    active_list()
        .iter()
        .map(|e| {
            let elapsed = now.saturating_duration_since(e.since);
            let done = e.done.load(Ordering::Relaxed).min(e.total);
            let fraction = (e.total > 0).then(|| done as f64 / e.total as f64);
            let left = fraction
                .filter(|&f| f > 0.0)
                .map(|f| elapsed.mul_f64((1.0 - f) / f));
            Busy {
                scope: e.scope,
                what: e.what.clone(),
                elapsed,
                fraction,
                left,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_span_without_tracing_is_inert() {
        // The test binary does not set the variable (it is read once per process).
        if std::env::var_os(TRACE_ENV).is_none() {
            assert!(!enabled());
            assert!(span("core", "nothing").open.is_none());
            assert_eq!(time("core", "nothing", || 7), 7);
        }
    }

    #[test]
    fn an_activity_is_listed_with_its_progress_until_dropped() {
        let what = format!("test activity {}", std::process::id());
        let mine = |b: &Busy| b.what == what;
        {
            let a = activity("core", what.clone(), 4);
            a.advance(1);
            let b = busy().into_iter().find(mine).expect("listed");
            assert_eq!((b.scope, b.fraction), ("core", Some(0.25)));
            a.advance(9);
            let b = busy().into_iter().find(mine).expect("listed");
            assert_eq!(b.fraction, Some(1.0));
            assert_eq!(b.left, Some(Duration::ZERO));
        }
        assert!(!busy().iter().any(mine));
    }
}
