//! The measurement protocol, written once for every API: warm-ups, the timed batch, the spread,
//! adaptive repetition, and when two rows are a tie.
//!
//! The classic rule is "the mean of ten timed runs, launches only inside the timed region": the
//! dispatches go back to back, ordered on the device, and one device-clock interval spans them.
//! A host wait between dispatches puts launch latency into every dispatch and compresses the
//! differences the sweep exists to show (docs/guide.md, section 2). So by default ([`Discipline::Batch`]) a row's
//! mean is one batch's interval divided by its count, and the spread (min, median, max, CV)
//! comes from a *second* back-to-back batch with a timestamp pair around each dispatch, so
//! that instrumenting never perturbs the mean.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::flush::Caches;

mod timed;
pub use timed::measure;

/// How dispatches are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Discipline {
    /// One device interval around all timed dispatches, enqueued back to back (the default).
    /// The spread comes from a second batch timed per dispatch.
    #[default]
    Batch,
    /// A device interval around each dispatch, all enqueued back to back, one wait at the end.
    Each,
    /// A device interval around each dispatch and a host wait after each: launch latency
    /// lands between dispatches, as in a naive harness. For teaching what a host wait costs.
    Synced,
}

impl Discipline {
    pub fn key(self) -> &'static str {
        match self {
            Discipline::Batch => "batch",
            Discipline::Each => "each",
            Discipline::Synced => "synced",
        }
    }

    /// The discipline in plain words, for the header line.
    pub fn describe(self) -> &'static str {
        match self {
            Discipline::Batch => {
                "dispatches enqueued back to back, one device interval around the batch \
                 (mean = interval / count); spread from a second back-to-back batch timed per dispatch"
            }
            Discipline::Each => {
                "dispatches enqueued back to back, a device interval around each (mean of those)"
            }
            Discipline::Synced => {
                "a device interval around each dispatch and a host wait after each (launch latency \
                 between dispatches: reads low on purpose)"
            }
        }
    }
}

impl fmt::Display for Discipline {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.key())
    }
}

impl std::str::FromStr for Discipline {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s.trim().to_ascii_lowercase().as_str() {
            "batch" => Ok(Discipline::Batch),
            "each" => Ok(Discipline::Each),
            "synced" => Ok(Discipline::Synced),
            _ => Err(format!(
                "'{s}' is not a timing discipline (batch, each, synced)"
            )),
        }
    }
}

/// How many timed dispatches a row gets.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Reps {
    /// Exactly this many (`--reps`).
    Fixed(u32),
    /// At least `min`, and enough that one timed batch lasts `min_time_ms` of device time,
    /// estimated from the warm-up batch, but never more than `max` (hyperfine's idea, at the
    /// scale of a dispatch).
    Adaptive {
        min: u32,
        min_time_ms: f64,
        max: u32,
        /// `--max-noise`: more batches of the same count until the mean's relative standard
        /// error is at most this (nvbench's stdrel), within `noise_cap_ms` of device time.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        max_noise: Option<f64>,
        #[serde(default = "default_noise_cap")]
        noise_cap_ms: f64,
    },
}

/// Device time a row may spend reaching `--max-noise` (`--max-noise-time`), by default.
pub const DEFAULT_NOISE_CAP_MS: f64 = 1000.0;

fn default_noise_cap() -> f64 {
    DEFAULT_NOISE_CAP_MS
}

/// What a row's `--max-noise` rule reached.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Noise {
    /// The relative standard error asked for.
    pub target: f64,
    /// The relative standard error reached (the per-dispatch samples' cv / sqrt(n)).
    pub rse: f64,
    pub reached: bool,
    /// Batches of the row's count timed for the mean.
    pub batches: u32,
}

impl Reps {
    /// The rule in words: "fixed by --reps", or the adaptive rule's bounds.
    pub fn words(&self) -> String {
        match self {
            Reps::Fixed(_) => "fixed by --reps".to_string(),
            Reps::Adaptive {
                min,
                min_time_ms,
                max_noise,
                noise_cap_ms,
                ..
            } => {
                let mut w = format!(
                    "adaptive: at least {min}, aiming at {min_time_ms} ms of device time per \
                     batch from the warm-ups' pace"
                );
                if let Some(n) = max_noise {
                    w.push_str(&format!(
                        ", then more batches until the mean's relative standard error is at \
                         most {:.2} % (--max-noise; at most {noise_cap_ms} ms of device time a \
                         row)",
                        n * 100.0
                    ));
                }
                w
            }
        }
    }
}

impl Default for Reps {
    fn default() -> Self {
        Reps::Adaptive {
            min: 10,
            min_time_ms: DEFAULT_MIN_TIME_MS,
            max: 100_000,
            max_noise: None,
            noise_cap_ms: DEFAULT_NOISE_CAP_MS,
        }
    }
}

/// Device time one timed batch should last by default. With the 36 µs 4K kernel on an H200
/// that is about 56 dispatches, and a dispatch's spread there is 1-4 % (CV), so the mean's
/// standard error stays near 0.3 %, under the 1 % tie floor, while the whole 13-row,
/// three-API sweep (two batches a row, and the copy) stays near a second.
pub const DEFAULT_MIN_TIME_MS: f64 = 2.0;

/// Warm-ups, repetition, discipline and caches.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Protocol {
    pub warmups: u32,
    pub reps: Reps,
    pub discipline: Discipline,
    /// Hot (the default, and what a file without this field ran) or cold (`--cold`,
    /// [`crate::flush`]).
    #[serde(default)]
    pub caches: Caches,
}

impl Protocol {
    /// This protocol with `caches`; cold times every dispatch on its own, so `batch` becomes
    /// `each` (one interval around a batch would hold the flushes).
    pub fn with_caches(self, caches: Caches) -> Protocol {
        let p = Protocol { caches, ..self };
        Protocol {
            discipline: p.timed_discipline(),
            ..p
        }
    }

    /// The discipline the timed dispatches run under: as asked, but `each` for `batch` when
    /// cold.
    pub fn timed_discipline(&self) -> Discipline {
        match (&self.caches, self.discipline) {
            (Caches::Cold { .. }, Discipline::Batch) => Discipline::Each,
            (_, d) => d,
        }
    }
}

impl Default for Protocol {
    fn default() -> Self {
        Protocol {
            warmups: 3,
            reps: Reps::default(),
            discipline: Discipline::Batch,
            caches: Caches::Hot,
        }
    }
}

/// Order statistics and spread of per-dispatch device times, in milliseconds.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct TimeStats {
    /// The row's time: batch interval / count under [`Discipline::Batch`], else the mean of
    /// the per-dispatch samples. Under `batch` it comes from another batch than the fields
    /// below, so it may lie outside `min ..= max`.
    pub mean: f64,
    /// The mean of the per-dispatch samples, the ones `min`, `median`, `max` and `sd` describe
    /// (under `batch`, the second, per-dispatch-timed batch).
    #[serde(default)]
    pub sample_mean: f64,
    pub min: f64,
    pub median: f64,
    pub max: f64,
    /// Sample standard deviation of the per-dispatch samples.
    #[serde(default)]
    pub sd: f64,
    /// How many per-dispatch samples the spread comes from.
    #[serde(default)]
    pub samples: u32,
}

impl TimeStats {
    /// Statistics of `times`; the mean is theirs unless `mean` overrides it.
    pub fn of(times: &[f64], mean: Option<f64>) -> Option<TimeStats> {
        if times.is_empty() {
            return None;
        }
        let mut s = times.to_vec();
        s.sort_by(f64::total_cmp);
        let n = s.len();
        let median = if n % 2 == 1 {
            s[n / 2]
        } else {
            (s[n / 2 - 1] + s[n / 2]) / 2.0
        };
        let sample_mean = s.iter().sum::<f64>() / n as f64;
        let sd = if n > 1 {
            (s.iter().map(|t| (t - sample_mean).powi(2)).sum::<f64>() / (n - 1) as f64).sqrt()
        } else {
            0.0
        };
        Some(TimeStats {
            mean: mean.unwrap_or(sample_mean),
            sample_mean,
            min: s[0],
            median,
            max: s[n - 1],
            sd,
            samples: n as u32,
        })
    }

    /// Coefficient of variation of one dispatch (sd / mean).
    pub fn cv(&self) -> f64 {
        if self.mean > 0.0 {
            self.sd / self.mean
        } else {
            0.0
        }
    }

    /// Relative standard error of the mean (cv / sqrt(samples)).
    pub fn relative_se(&self) -> f64 {
        self.cv() / (self.samples.max(1) as f64).sqrt()
    }
}

/// What one row's (or one copy's) measurement produced.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Timing {
    pub discipline: Discipline,
    /// Timed dispatches behind the mean.
    pub reps: u32,
    /// The whole timed batch's device interval ([`Discipline::Batch`] only).
    pub batch_ms: Option<f64>,
    /// Per-dispatch device intervals, in order.
    pub samples_ms: Vec<f64>,
    pub stats: TimeStats,
    /// What `--max-noise` reached, where it was asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub noise: Option<Noise>,
    /// The first timed batch on the device's clock and on the host's around it: the device's
    /// timer checked against an independent one (the host also pays for submitting and
    /// waiting, so the ratio is at most about 1 and near it for a long batch).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub clock: Option<ClockCheck>,
    /// Bytes written to flush the last-level cache before each timed dispatch (`--cold`);
    /// absent: hot.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub flush_bytes: Option<u64>,
}

/// One batch timed twice: by its device interval and by the host's clock around it.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct ClockCheck {
    pub device_ms: f64,
    pub host_ms: f64,
}

impl ClockCheck {
    /// Device time over host time.
    pub fn ratio(&self) -> f64 {
        match self.host_ms > 0.0 {
            true => self.device_ms / self.host_ms,
            false => 0.0,
        }
    }
}

/// How many dispatches make a batch of at least `min_time_ms`, given `per_dispatch_ms`.
pub fn adaptive_count(per_dispatch_ms: f64, min: u32, min_time_ms: f64, max: u32) -> u32 {
    let max = max.max(min).max(1);
    if per_dispatch_ms <= 0.0 || !per_dispatch_ms.is_finite() {
        return max;
    }
    let want = (min_time_ms / per_dispatch_ms).ceil();
    (want.clamp(min.max(1) as f64, max as f64)) as u32
}

/// Smallest relative difference from the best row that counts as real: run-to-run variation
/// of a batch mean on a GPU (on the H200 the fastest row inside the plateau changed between
/// repeated runs by up to this much), below which no ranking is claimed.
pub const TIE_FLOOR: f64 = 0.01;

/// The relative difference under which `row` and `best` are indistinguishable: the larger of
/// twice their combined standard error, the timer's resolution over each batch, and
/// [`TIE_FLOOR`].
pub fn tie_threshold(row: &TimeStats, best: &TimeStats, resolution_ms: f64, reps: u32) -> f64 {
    let se = (row.relative_se().powi(2) + best.relative_se().powi(2)).sqrt();
    let clock = if best.mean > 0.0 {
        2.0 * resolution_ms / (best.mean * reps.max(1) as f64)
    } else {
        0.0
    };
    (2.0 * se).max(clock).max(TIE_FLOOR)
}

/// Whether `row` is within the noise of `best` (slower by no more than the threshold).
pub fn ties(row: &TimeStats, best: &TimeStats, resolution_ms: f64, reps: u32) -> bool {
    row.mean <= best.mean * (1.0 + tie_threshold(row, best, resolution_ms, reps))
}

#[cfg(test)]
#[path = "measure_tests.rs"]
mod tests;
