//! The conformance kit: every scenario a blocksweep backend must pass, written once, and the
//! test harness that runs it on every device a driver lists.
//!
//! A backend crate's `tests/conformance.rs` (a `[[test]]` with `harness = false`) is:
//!
//! ```text
//! fn main() -> std::process::ExitCode {
//!     blocksweep_conformance::main(&blocksweep_cuda::PROVIDER)
//! }
//! ```
//!
//! Each scenario of [`SCENARIOS`] becomes one trial per device, named
//! `<scenario>::<api>#<index> <device name>` (scenarios about the API as a whole, such as
//! opening past the last device, are one trial `<scenario>::<api>`). Where the driver is
//! missing or lists no device, every trial is reported as *ignored* with the reason, so the
//! test summary counts what was not tested; when `BLOCKSWEEP_REQUIRE` names the API (CI), a
//! single trial `driver_available::<api>` fails with the reason instead.
//!
//! API-specific tests use the same harness through [`Suite`] (per-device trials, plain trials,
//! trials that skip at run time with a reason) and [`Harness`] (trials over several APIs), so
//! a skip is visible everywhere it can happen.

#![warn(clippy::undocumented_unsafe_blocks)]

pub mod checks;
mod harness;
pub mod lab;
mod scenarios;
pub mod staged;
mod trial;

use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};

use blocksweep_core::{Api, Backend, BackendResult, Launch, Provider, Stamps, Work};

pub use checks::{claimed_frame, SMALL};
pub use harness::{ignored, probe, Harness, Suite, TrialName};
pub use libtest_mimic::{self, Completion};
pub use scenarios::{Scenario, SCENARIOS};
pub use trial::{skip, skip_unless_required, IntoCompletion, Target};

/// Runs the whole kit on every device `driver` lists, as a test binary's `main`.
pub fn main(provider: &'static dyn Provider) -> ExitCode {
    Suite::new(provider).kit().run()
}

/// Whether `BLOCKSWEEP_REQUIRE` names `api` (by key, so no registration is needed).
pub fn required(api: Api) -> bool {
    std::env::var("BLOCKSWEEP_REQUIRE")
        .unwrap_or_default()
        .split(',')
        .any(|s| s.trim().eq_ignore_ascii_case(api.key()))
}

/// For tests under the standard harness (the CLI's end-to-end tests), which cannot report a
/// skip: fails when `BLOCKSWEEP_REQUIRE` names `api`, else prints a `SKIPPED` line on stderr
/// and returns `true` (the caller returns early). A `harness = false` test uses [`Suite`] or
/// [`skip_unless_required`] instead, whose skips show in the summary as ignored.
pub fn skip_unavailable(api: Api, why: &str) -> bool {
    if required(api) {
        panic!("{api} is required by BLOCKSWEEP_REQUIRE but unavailable: {why}");
    }
    // The harness's words for the same skip, so that `make test` counts the two as one reason.
    note_skip(&format!("{api} unavailable: {why}"));
    eprintln!("(set BLOCKSWEEP_REQUIRE={} to make this fail)", api.key());
    true
}

/// The file in which standard-harness tests note their skips, one line each; `make test`
/// (tools/test-run.sh) sets it and counts the lines at its end.
pub const SKIP_LOG_ENV: &str = "BLOCKSWEEP_SKIP_LOG";

/// Says that the running test returns without testing what its name says: a SKIPPED line on
/// stderr (libtest shows it only when the test fails) and `<binary> <test>: <why>` appended to
/// `$BLOCKSWEEP_SKIP_LOG`, where `make test` counts it. For tests under the standard harness,
/// which would otherwise pass as "ok"; a `harness = false` test returns [`skip`] instead.
pub fn note_skip(why: &str) {
    eprintln!("SKIPPED: {why}");
    let Some(log) = std::env::var_os(SKIP_LOG_ENV) else {
        return;
    };
    // libtest names each test's thread after the test; the binary is cargo's `<name>-<hash>`.
    let test = std::thread::current().name().unwrap_or("?").to_string();
    let exe = std::env::current_exe().ok();
    let stem = exe
        .as_ref()
        .and_then(|e| e.file_stem())
        .map(|s| s.to_string_lossy());
    let bin = stem
        .as_deref()
        .map_or("?", |s| s.rsplit_once('-').map_or(s, |(b, _)| b));
    let line = format!("{bin} {test}: {why}\n");
    // One short append per line: lines from tests running at once do not interleave.
    let written = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(&log)
        .and_then(|mut f| std::io::Write::write_all(&mut f, line.as_bytes()));
    if let Err(e) = written {
        panic!("{SKIP_LOG_ENV}={}: {e}", log.to_string_lossy());
    }
}

/// One-call shapes for API-specific tests, written over [`Backend::run_batch`]: `warmups`
/// untimed runs, then `reps` runs timed per dispatch, back to back.
pub trait BatchExt {
    fn dispatch_each(&mut self, launch: Launch, warmups: u32, reps: u32)
        -> BackendResult<Vec<f64>>;
    fn copy_each(&mut self, bytes: u64, warmups: u32, reps: u32) -> BackendResult<Vec<f64>>;
}

impl<B: Backend + ?Sized> BatchExt for B {
    fn dispatch_each(
        &mut self,
        launch: Launch,
        warmups: u32,
        reps: u32,
    ) -> BackendResult<Vec<f64>> {
        self.run_batch(Work::Kernel(launch), warmups, Stamps::None)?;
        Ok(self
            .run_batch(Work::Kernel(launch), reps, Stamps::Each)?
            .each_ms)
    }

    fn copy_each(&mut self, bytes: u64, warmups: u32, reps: u32) -> BackendResult<Vec<f64>> {
        self.run_batch(Work::Copy { bytes }, warmups, Stamps::None)?;
        Ok(self
            .run_batch(Work::Copy { bytes }, reps, Stamps::Each)?
            .each_ms)
    }
}

static VERBOSE: AtomicBool = AtomicBool::new(false);

/// Whether the run asked to see the trials' output (`--nocapture` or `--show-output`):
/// libtest-mimic captures nothing, so trials print details only then.
pub fn verbose() -> bool {
    VERBOSE.load(Ordering::Relaxed)
}

pub(crate) fn set_verbose(on: bool) {
    VERBOSE.store(on, Ordering::Relaxed);
}

/// `eprintln!` only under `--nocapture` / `--show-output` (see [`verbose`]).
#[macro_export]
macro_rules! show {
    ($($arg:tt)*) => {
        if $crate::verbose() {
            eprintln!($($arg)*);
        }
    };
}
