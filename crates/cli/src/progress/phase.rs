//! What the sweep is doing (its phase, the rows of the API being timed) and how long is left.

use super::*;

/// What the sweep is doing now.
#[derive(Debug, Clone)]
pub(super) enum Phase {
    /// Nothing reported yet.
    Idle,
    /// A named phase that is not a row.
    Status {
        api: Option<Api>,
        what: String,
        since: Instant,
    },
    /// Rows of one API.
    Rows(Rows),
}

/// One API's rows: enough to say which row runs and how long the rest will take.
#[derive(Debug, Clone)]
pub(super) struct Rows {
    pub(super) api: Api,
    /// Index of the row running now (or that ran last), from 0.
    pub(super) index: usize,
    pub(super) count: usize,
    pub(super) block: BlockSize,
    /// When this API's first row started.
    pub(super) started: Instant,
    /// Rows finished, and when the last of them finished.
    pub(super) done: usize,
    pub(super) last_done: Instant,
    /// When the running row started.
    pub(super) row_started: Instant,
}

impl Rows {
    /// Time left for this API's rows, from the mean of the finished ones; `None` before one
    /// has finished.
    pub(super) fn left(&self, now: Instant) -> Option<Duration> {
        let per_row = time_per_row(self.done, self.last_done - self.started)?;
        let remaining = self.count.saturating_sub(self.done) as u32;
        // The running row has already used some of its share, but never counts as done.
        let total = per_row * remaining;
        let into_row = now.saturating_duration_since(self.last_done);
        Some(
            total
                .saturating_sub(into_row)
                .max(per_row * remaining.saturating_sub(1)),
        )
    }

    /// "row 7 of 13 (block 256), 12 s left"; no time before a row has finished.
    pub(super) fn describe(&self, now: Instant) -> String {
        let left = match self.left(now) {
            Some(d) if d < Duration::from_secs(1) => ", under 1 s left".to_string(),
            Some(d) => format!(", {} left", human(d)),
            None => String::new(),
        };
        format!(
            "row {} of {} (block {}){left}",
            (self.index + 1).min(self.count),
            self.count,
            self.block
        )
    }
}

/// Mean time of one finished row.
pub(super) fn time_per_row(done: usize, spent: Duration) -> Option<Duration> {
    (done > 0).then(|| spent / done as u32)
}

/// "850 ms", "1.9 s", "12 s", "3 min 5 s", "2 h 10 min".
pub fn human(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0 => format!("{} ms", d.as_millis()),
        1..=9 if d.subsec_millis() >= 50 => format!("{:.1} s", d.as_secs_f64()),
        1..=59 => format!("{s} s"),
        60..=3599 => match s % 60 {
            0 => format!("{} min", s / 60),
            r => format!("{} min {r} s", s / 60),
        },
        _ => match (s / 60) % 60 {
            0 => format!("{} h", s / 3600),
            m => format!("{} h {m} min", s / 3600),
        },
    }
}

/// The long phases running now on any thread ([`trace::busy`]: making the frame, an API's
/// upload, a read-back, a verification), each with its progress and time left where known:
/// "making the frame 40 %, 3 s left; CUDA: uploading the frame 50000x50000 (2 s)".
pub(super) fn describe_busy(busy: &[Busy]) -> Option<String> {
    let one = |b: &Busy| {
        let api = Api::from_key(b.scope)
            .map(|a| format!("{a}: "))
            .unwrap_or_default();
        let secs = b.elapsed.as_secs();
        let how = match (b.fraction, b.left) {
            (Some(f), Some(left)) if secs > 0 => {
                format!(
                    " {:.0} %, {} left",
                    f * 100.0,
                    human(Duration::from_secs(left.as_secs()))
                )
            }
            _ if secs > 0 => format!(" ({})", human(Duration::from_secs(secs))),
            _ => String::new(),
        };
        format!("{api}{}{how}", b.what)
    };
    (!busy.is_empty()).then(|| busy.iter().map(one).collect::<Vec<_>>().join("; "))
}

impl Phase {
    /// The phase as a line, without the "blocksweep: " a note adds, followed by what is busy
    /// on other threads.
    pub(super) fn describe(&self, now: Instant) -> Option<String> {
        self.describe_with(now, &trace::busy())
    }

    pub(super) fn describe_with(&self, now: Instant, busy: &[Busy]) -> Option<String> {
        let busy = describe_busy(busy);
        match (self.describe_phase(now), busy) {
            (Some(phase), Some(busy)) => Some(format!("{phase}; {busy}")),
            (phase, busy) => phase.or(busy),
        }
    }

    pub(super) fn describe_phase(&self, now: Instant) -> Option<String> {
        match self {
            Phase::Idle => None,
            Phase::Status { api, what, since } => {
                let api = api.map(|a| format!("{a}: ")).unwrap_or_default();
                let secs = now.saturating_duration_since(*since).as_secs();
                Some(match secs {
                    0 => format!("{api}{what}"),
                    _ => format!("{api}{what} ({})", human(Duration::from_secs(secs))),
                })
            }
            Phase::Rows(r) => Some(format!("{}: {}", r.api, r.describe(now))),
        }
    }
}

/// When the next note is due: the run has lasted [`NOTE_EVERY`], the last note is that old,
/// and the phase changed since (or [`NOTE_UNCHANGED`] passed).
pub(super) fn note_due(
    now: Instant,
    run_started: Instant,
    last: Option<(Instant, u64)>,
    gen: u64,
) -> bool {
    if now.saturating_duration_since(run_started) < NOTE_EVERY {
        return false;
    }
    match last {
        None => true,
        Some((at, seen)) => {
            let age = now.saturating_duration_since(at);
            age >= NOTE_EVERY && (seen != gen || age >= NOTE_UNCHANGED)
        }
    }
}
