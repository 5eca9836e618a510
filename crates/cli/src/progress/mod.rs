//! Progress on stderr while a sweep runs: what is happening, and for rows, how long is left.
//!
//! - On a terminal, one line redrawn in place: a spinner naming the phase ("opening the devices
//!   and building the kernels (4 s)", "generating the frame ...", "planning the grids",
//!   "OpenCL: timing the copy ceiling"), then while rows run a bar over that API's rows,
//!   "OpenCL [=====>      ] row 7 of 13 (block 256), 12 s left". Either is followed by the long
//!   phases other threads are in (blocksweep_core::trace::activity): "; making the frame 40 %,
//!   3 s left; CUDA: uploading the frame 50000x50000 (2 s)", "; OpenCL: verifying 60 %, ...".
//! - Anywhere else (a log file, a pipe, CI), nothing, as hyperfine does, unless `--progress`
//!   asks for it; then a plain line now and then: none in the first 10 s
//!   (a short run says nothing), then at most one every 10 s, and only when the phase changed
//!   (or what other threads are busy with) or a minute passed, plus one line when an API has
//!   finished its rows:
//!   "blocksweep: OpenCL: row 7 of 13 (block 256), 12 s left; 25 s so far".
//! - `--quiet` or the environment variable BLOCKSWEEP_QUIET: neither.
//!
//! "N left" is the API's mean time per finished row times the rows still to run (each API
//! starts its own count: the APIs run one after another). When that says the API's rows will
//! take longer than `--max-time`, or one row alone has run longer, a warning says so once per
//! API, quiet or not: the run goes on, and Ctrl-C keeps what `--output` files hold.
//!
//! A small thread redraws the line (the time left changes while a row runs) and writes the
//! notes; the sweep's own thread only records events.

use std::io::IsTerminal;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::sync::{Arc, Mutex, OnceLock};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use blocksweep_core::sweep::{Observer, SweepRow};
use blocksweep_core::trace::{self, Busy};
use blocksweep_core::{Api, BlockSize};
use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

/// What the command line asked for; `main` sets it once, before the sweep starts.
#[derive(Debug, Clone, Copy, Default)]
pub struct Settings {
    /// No bar, no notes (`--quiet`, BLOCKSWEEP_QUIET).
    pub quiet: bool,
    /// Notes where stderr is not a terminal (`--progress`); off by default there.
    pub notes: bool,
    /// `--max-time`; `None` never warns.
    pub max_time: Option<Duration>,
    /// `--output` files are rewritten after every row (so Ctrl-C loses nothing measured).
    pub saves_rows: bool,
}

impl Settings {
    /// What stopping a long run costs, for the warnings.
    fn on_interrupt(&self) -> &'static str {
        match self.saves_rows {
            true => "it goes on; Ctrl-C stops it, and the --output files keep every row measured",
            false => "it goes on; Ctrl-C stops it and loses the rows (with -o FILE they are saved as they come)",
        }
    }
}

static SETTINGS: OnceLock<Settings> = OnceLock::new();

/// Sets what every later [`Bar`] does. The first call wins.
pub fn configure(settings: Settings) {
    let _ = SETTINGS.set(settings);
}

/// No note before the run has lasted this long, and no two notes closer than this.
const NOTE_EVERY: Duration = Duration::from_secs(10);
/// Without a change of phase, a note at most this often.
const NOTE_UNCHANGED: Duration = Duration::from_secs(60);
/// How often the thread redraws the line and looks at the clock.
const TICK: Duration = Duration::from_millis(250);

mod draw;
mod phase;

use draw::*;
use phase::*;

/// The state the sweep's thread records and the drawing thread reads.
struct Shared {
    phase: Phase,
    /// Bumped on every change of phase or row, so notes can tell "nothing new".
    generation: u64,
    run_started: Instant,
    /// The last note: when, and the generation it described.
    last_note: Option<(Instant, u64)>,
    /// APIs already warned about --max-time.
    warned: Vec<Api>,
    /// Lines to print now (an API's "done" note), waiting for the drawing thread.
    pending: Vec<String>,
    /// The activities other threads were busy with at the last tick (scope and name): a
    /// change is a change of phase for the notes.
    busy_seen: Vec<String>,
}

/// The progress display; an [`Observer`] for the sweep.
pub struct Bar {
    bar: ProgressBar,
    shared: Arc<Mutex<Shared>>,
    settings: Settings,
    /// Notes go to stderr (it is not a terminal, and progress is not off).
    notes: bool,
    ticker: Option<(mpsc::Sender<()>, JoinHandle<()>)>,
}

/// Whether plain notes go to stderr: not on a terminal (the line is drawn there), and only when
/// `--progress` asked and `--quiet` did not.
fn notes_wanted(terminal: bool, settings: &Settings) -> bool {
    !terminal && !settings.quiet && settings.notes
}

impl Bar {
    pub fn new() -> Bar {
        let settings = SETTINGS.get().copied().unwrap_or_default();
        let terminal = std::io::stderr().is_terminal();
        let target = if terminal && !settings.quiet {
            ProgressDrawTarget::stderr()
        } else {
            ProgressDrawTarget::hidden()
        };
        Bar::with_target(target, settings, notes_wanted(terminal, &settings))
    }

    /// indicatif ignores the errors of its draws (a full or closed terminal is not a panic);
    /// the test below holds it to that.
    fn with_target(target: ProgressDrawTarget, settings: Settings, notes: bool) -> Bar {
        let bar = ProgressBar::with_draw_target(None, target);
        bar.set_style(spinner_style());
        let shared = Arc::new(Mutex::new(Shared {
            phase: Phase::Idle,
            generation: 0,
            run_started: Instant::now(),
            last_note: None,
            warned: Vec::new(),
            pending: Vec::new(),
            busy_seen: Vec::new(),
        }));
        let mut me = Bar {
            bar,
            shared,
            settings,
            notes,
            ticker: None,
        };
        me.start_ticker();
        me
    }

    fn start_ticker(&mut self) {
        let (stop, stopped) = mpsc::channel::<()>();
        let bar = self.bar.clone();
        let shared = self.shared.clone();
        let settings = self.settings;
        let notes = self.notes;
        let spawned = std::thread::Builder::new()
            .name("progress".into())
            .spawn(move || loop {
                match stopped.recv_timeout(TICK) {
                    Err(RecvTimeoutError::Timeout) => {}
                    _ => return,
                }
                let now = Instant::now();
                let Ok(mut s) = shared.lock() else { return };
                redraw(&bar, &s.phase, now);
                check_row_time(&mut s, settings, now, &bar);
                if notes {
                    write_notes(&mut s, now);
                }
            });
        if let Ok(handle) = spawned {
            self.ticker = Some((stop, handle));
        }
    }

    /// Stops the thread, prints what it had not yet printed, and clears the line.
    pub fn finish(&mut self) {
        if let Some((stop, handle)) = self.ticker.take() {
            let _ = stop.send(());
            let _ = handle.join();
        }
        if let Ok(mut s) = self.shared.lock() {
            if self.notes {
                for line in s.pending.drain(..) {
                    warn!("{line}");
                }
            }
        }
        self.bar.finish_and_clear();
    }

    /// Records a new phase, redraws at once.
    fn set_phase(&mut self, phase: Phase) {
        let Ok(mut s) = self.shared.lock() else {
            return;
        };
        match (&s.phase, &phase) {
            (Phase::Rows(_), Phase::Rows(_)) => {}
            (_, Phase::Rows(_)) => self.bar.set_style(row_style()),
            (_, _) => self.bar.set_style(spinner_style()),
        }
        s.phase = phase;
        s.generation += 1;
        redraw(&self.bar, &s.phase, Instant::now());
    }

    /// A warning above the bar (the bar is redrawn below it).
    fn warn_once(&self, s: &mut Shared, api: Api, text: String) {
        if s.warned.contains(&api) {
            return;
        }
        s.warned.push(api);
        self.bar.suspend(|| warn!("warning: {text}"));
    }
}

impl Drop for Bar {
    fn drop(&mut self) {
        if self.ticker.is_some() {
            self.finish();
        }
    }
}

impl Observer for Bar {
    /// A phase that is not a row, e.g. "opening the devices and building the kernels".
    fn status(&mut self, api: Option<Api>, what: &str) {
        self.set_phase(Phase::Status {
            api,
            what: what.to_string(),
            since: Instant::now(),
        });
    }

    fn row_started(&mut self, api: Api, index: usize, count: usize, block: BlockSize) {
        let now = Instant::now();
        let previous = self.shared.lock().ok().map(|s| s.phase.clone());
        let rows = match previous {
            // The same API's next row: keep its clock.
            Some(Phase::Rows(r)) if r.api == api && index > 0 && r.count == count => Rows {
                index,
                block,
                row_started: now,
                ..r
            },
            _ => Rows {
                api,
                index,
                count,
                block,
                started: now,
                done: 0,
                last_done: now,
                row_started: now,
            },
        };
        self.set_phase(Phase::Rows(rows));
    }

    fn row_finished(&mut self, api: Api, _row: &SweepRow) {
        let now = Instant::now();
        let Ok(mut s) = self.shared.lock() else {
            return;
        };
        let Phase::Rows(r) = &mut s.phase else {
            return;
        };
        if r.api != api {
            return;
        }
        r.done += 1;
        r.last_done = now;
        let r = r.clone();
        s.generation += 1;
        redraw(&self.bar, &s.phase, now);
        if let (Some(max), Some(left)) = (self.settings.max_time, r.left(now)) {
            let spent = now - r.started;
            if spent + left > max {
                let text = format!(
                    "{api}: {} of {} rows took {}; at that pace its rows take about {}, more than \
                     --max-time {} s; {}",
                    r.done,
                    r.count,
                    human(spent),
                    human(spent + left),
                    max.as_secs(),
                    self.settings.on_interrupt()
                );
                self.warn_once(&mut s, api, text);
            }
        }
        if r.done == r.count && self.notes && s.last_note.is_some() {
            // An API's last row, in a run long enough to have said anything: one line for it.
            s.pending.push(format!(
                "{api}: {} rows done in {}",
                r.count,
                human(now - r.started)
            ));
        }
    }
}

#[cfg(test)]
mod tests;
