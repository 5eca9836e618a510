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

use std::io::Write;
use std::sync::OnceLock;
use std::time::Instant;

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
}
