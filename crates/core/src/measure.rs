//! The measurement protocol, written once for every API: warm-ups, the timed batch, the spread,
//! adaptive repetition, and when two rows are a tie.
//!
//! The seed's rule is "the mean of ten timed runs, launches only inside the timed region": the
//! dispatches go back to back, ordered on the device, and one device-clock interval spans them.
//! A host wait between dispatches puts launch latency into every dispatch and compresses the
//! differences the sweep exists to show (docs/guide.md, section 2). So by default ([`Discipline::Batch`]) a row's
//! mean is one batch's interval divided by its count, and the spread (min, median, max, CV)
//! comes from a *second* back-to-back batch with a timestamp pair around each dispatch, so
//! that instrumenting never perturbs the mean.

use serde::{Deserialize, Serialize};
use std::fmt;

use crate::backend::{Backend, BackendError, BatchTimes, Stamps, Work};

/// How dispatches are timed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Discipline {
    /// One device interval around all timed dispatches, enqueued back to back (the seed's).
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
    },
}

impl Default for Reps {
    fn default() -> Self {
        Reps::Adaptive {
            min: 10,
            min_time_ms: DEFAULT_MIN_TIME_MS,
            max: 100_000,
        }
    }
}

/// Device time one timed batch should last by default. With the 36 µs 4K kernel on an H200
/// that is about 56 dispatches, and a dispatch's spread there is 1-4 % (CV), so the mean's
/// standard error stays near 0.3 %, under the 1 % tie floor, while the whole 13-row,
/// three-API sweep (two batches a row, and the copy) stays near a second.
pub const DEFAULT_MIN_TIME_MS: f64 = 2.0;

/// Warm-ups, repetition and discipline.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Protocol {
    pub warmups: u32,
    pub reps: Reps,
    pub discipline: Discipline,
}

impl Default for Protocol {
    fn default() -> Self {
        Protocol {
            warmups: 3,
            reps: Reps::default(),
            discipline: Discipline::Batch,
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
}

/// Runs `protocol` on `work`: warm-ups, then the timed dispatches under its discipline.
pub fn measure(
    backend: &mut dyn Backend,
    work: Work,
    protocol: &Protocol,
) -> Result<Timing, BackendError> {
    let estimate = warm_up(backend, work, protocol.warmups)?;
    let reps = match protocol.reps {
        Reps::Fixed(n) => n.max(1),
        Reps::Adaptive {
            min,
            min_time_ms,
            max,
        } => {
            // No warm-up to learn from: one timed dispatch is the estimate.
            let per = match estimate {
                Some(ms) => ms,
                None => single(backend.run_batch(work, 1, Stamps::Batch)?)?,
            };
            adaptive_count(per, min, min_time_ms, max)
        }
    };
    let (batch_ms, samples) = match protocol.discipline {
        Discipline::Batch => {
            let batch = single(backend.run_batch(work, reps, Stamps::Batch)?)?;
            let each = backend.run_batch(work, reps, Stamps::Each)?.each_ms;
            (Some(batch), each)
        }
        Discipline::Each => (None, backend.run_batch(work, reps, Stamps::Each)?.each_ms),
        Discipline::Synced => {
            let mut each = Vec::with_capacity(reps as usize);
            for _ in 0..reps {
                each.extend(backend.run_batch(work, 1, Stamps::Each)?.each_ms);
            }
            (None, each)
        }
    };
    let stats = TimeStats::of(&samples, batch_ms.map(|b| b / reps as f64)).ok_or_else(|| {
        BackendError::new(
            backend.api(),
            crate::ErrorKind::Driver,
            "the timed batch returned no per-dispatch times",
        )
    })?;
    Ok(Timing {
        discipline: protocol.discipline,
        reps,
        batch_ms,
        samples_ms: samples,
        stats,
    })
}

/// Runs the warm-ups back to back; returns the time per dispatch, `None` without warm-ups.
/// The first warm-up runs alone and untimed: it absorbs one-time costs (a driver that compiles
/// per launch shape on first use, as PoCL does, first-touch of memory), which would otherwise
/// make the estimate, and so the adaptive count, many times too small for a short kernel. The
/// rest run as one batch timed as a whole (a timestamp pair costs nothing here).
fn warm_up(
    backend: &mut dyn Backend,
    work: Work,
    warmups: u32,
) -> Result<Option<f64>, BackendError> {
    if warmups == 0 {
        return Ok(None);
    }
    let timed = match warmups {
        1 => 1,
        n => {
            backend.run_batch(work, 1, Stamps::None)?;
            n - 1
        }
    };
    let t = single(backend.run_batch(work, timed, Stamps::Batch)?)?;
    Ok(Some(t / timed as f64))
}

fn single(t: BatchTimes) -> Result<f64, BackendError> {
    Ok(t.batch_ms
        .or_else(|| t.each_ms.first().copied())
        .unwrap_or(0.0))
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
mod tests {
    use super::*;
    use crate::backend::{BatchTimes, Launch};
    use crate::testing::{ScriptedBackend, TEST_API_A};
    use crate::BlockSize;

    fn work() -> Work {
        Work::Kernel(Launch::linear(BlockSize::linear(64), 4))
    }

    #[test]
    fn batch_mean_is_the_interval_over_the_count_and_the_spread_comes_from_a_second_batch() {
        // Each dispatch "takes" 2 ms inside a batch, plus 0.5 ms of instrumentation per stamp
        // pair: the mean must not see the instrumentation.
        let mut b = ScriptedBackend::new(TEST_API_A, 2.0, 0.5);
        let p = Protocol {
            warmups: 3,
            reps: Reps::Fixed(10),
            discipline: Discipline::Batch,
        };
        let t = measure(&mut b, work(), &p).unwrap();
        assert_eq!(t.reps, 10);
        assert_eq!(t.batch_ms, Some(20.0));
        assert_eq!(t.stats.mean, 2.0);
        assert_eq!(t.samples_ms.len(), 10);
        assert_eq!(t.stats.median, 2.5);
        // The first warm-up alone and untimed, the other warm-ups, the batch, the per-dispatch
        // batch: four back-to-back batches, no more.
        assert_eq!(
            b.batches,
            vec![
                (1, Stamps::None),
                (2, Stamps::Batch),
                (10, Stamps::Batch),
                (10, Stamps::Each)
            ]
        );
    }

    #[test]
    fn each_and_synced_differ_only_in_host_waits() {
        let p = |d| Protocol {
            warmups: 0,
            reps: Reps::Fixed(4),
            discipline: d,
        };
        let mut b = ScriptedBackend::new(TEST_API_A, 1.0, 0.0);
        let each = measure(&mut b, work(), &p(Discipline::Each)).unwrap();
        assert_eq!(b.batches, vec![(4, Stamps::Each)]);
        assert_eq!((each.batch_ms, each.stats.mean), (None, 1.0));
        let mut b = ScriptedBackend::new(TEST_API_A, 1.0, 0.0);
        b.host_wait_ms = 0.25; // what a wait between dispatches costs the next one
        let synced = measure(&mut b, work(), &p(Discipline::Synced)).unwrap();
        assert_eq!(b.batches, vec![(1, Stamps::Each); 4]);
        assert_eq!(synced.stats.mean, 1.25);
    }

    #[test]
    fn adaptive_reps_fill_the_minimum_time_within_bounds() {
        assert_eq!(adaptive_count(0.036, 10, 5.0, 100_000), 139);
        assert_eq!(
            adaptive_count(50.0, 10, 5.0, 100_000),
            10,
            "slow kernels keep the floor"
        );
        assert_eq!(
            adaptive_count(1e-6, 10, 5.0, 1000),
            1000,
            "never past the cap"
        );
        assert_eq!(adaptive_count(0.0, 10, 5.0, 1000), 1000);
        let mut b = ScriptedBackend::new(TEST_API_A, 0.01, 0.0);
        let p = Protocol {
            warmups: 2,
            reps: Reps::Adaptive {
                min: 10,
                min_time_ms: 1.0,
                max: 50,
            },
            discipline: Discipline::Batch,
        };
        let t = measure(&mut b, work(), &p).unwrap();
        assert_eq!(t.reps, 50, "1 ms / 0.01 ms = 100, capped at 50");
        let mut b = ScriptedBackend::new(TEST_API_A, 0.5, 0.0);
        let p = Protocol { warmups: 0, ..p };
        let t = measure(&mut b, work(), &p).unwrap();
        assert_eq!(
            t.reps, 10,
            "estimated from one timed dispatch: 1 ms / 0.5 ms = 2 < 10"
        );
        assert_eq!(b.batches[0], (1, Stamps::Batch));
    }

    #[test]
    fn a_first_dispatchs_one_time_cost_does_not_shrink_the_adaptive_count() {
        // 5 µs dispatches whose very first one costs 100 ms (a driver compiling on first use):
        // timed with the other warm-ups, it would estimate 33 ms a dispatch and give the floor
        // of 10; run alone first, the estimate is 5 µs and the batch fills 2 ms.
        let mut b = ScriptedBackend::new(TEST_API_A, 0.005, 0.0);
        b.first_ms = 100.0;
        let p = Protocol {
            warmups: 3,
            reps: Reps::Adaptive {
                min: 10,
                min_time_ms: 2.0,
                max: 100_000,
            },
            discipline: Discipline::Batch,
        };
        let t = measure(&mut b, work(), &p).unwrap();
        assert_eq!(t.reps, 400);
        assert_eq!(t.stats.mean, 0.005);
    }

    #[test]
    fn statistics_and_ties() {
        let s = TimeStats::of(&[1.0, 2.0, 3.0, 4.0], None).unwrap();
        assert_eq!(
            (s.mean, s.min, s.median, s.max, s.samples),
            (2.5, 1.0, 2.5, 4.0, 4)
        );
        assert!((s.sd - 1.2909944).abs() < 1e-6);
        let batch = TimeStats::of(&[1.0, 2.0, 3.0], Some(0.5)).unwrap();
        assert_eq!(
            (batch.mean, batch.sample_mean),
            (0.5, 2.0),
            "each named for its samples"
        );
        assert!((batch.min..=batch.max).contains(&batch.sample_mean));
        let tight = |mean: f64| TimeStats::of(&[mean; 100], None).unwrap();
        // Noise-free samples: only the floor separates rows.
        assert!(ties(&tight(1.009), &tight(1.0), 0.0, 100));
        assert!(!ties(&tight(1.02), &tight(1.0), 0.0, 100));
        // Noisy samples widen the band beyond the floor.
        let noisy = |mean: f64| {
            let v: Vec<f64> = (0..10).map(|i| mean * (0.8 + 0.04 * i as f64)).collect();
            TimeStats::of(&v, Some(mean)).unwrap()
        };
        assert!(tie_threshold(&noisy(1.0), &noisy(1.0), 0.0, 10) > 0.05);
        assert!(ties(&noisy(1.04), &noisy(1.0), 0.0, 10));
        // A coarse clock over a short batch does too.
        assert!(ties(&tight(1.05), &tight(1.0), 0.5, 10));
        let _ = BatchTimes::default();
    }
}
