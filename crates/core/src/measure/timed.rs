//! The protocol run on one row's work: the warm-ups, the timed batches under the discipline
//! (each dispatch after a flush where the protocol is cold), and `--max-noise`'s further
//! batches.

use super::{adaptive_count, ClockCheck, Discipline, Noise, Protocol, Reps, TimeStats, Timing};
use crate::backend::{Backend, BackendError, BatchTimes, Stamps, Work};
use crate::flush::Batches;

/// Runs `protocol` on `work`: warm-ups, then the timed dispatches under its discipline (each
/// after a flush of the last-level cache, where the protocol is cold: then `batch` times each
/// dispatch, as `each` does).
pub fn measure(
    backend: &mut dyn Backend,
    work: Work,
    protocol: &Protocol,
) -> Result<Timing, BackendError> {
    let flush = protocol.caches.flush_bytes(backend.limits());
    let discipline = protocol.timed_discipline();
    let b = &mut Batches {
        backend,
        work,
        flush,
    };
    let estimate = warm_up(b, protocol.warmups)?;
    let mut reps = match protocol.reps {
        Reps::Fixed(n) => n.max(1),
        Reps::Adaptive {
            min,
            min_time_ms,
            max,
            ..
        } => {
            // No warm-up to learn from: one timed dispatch is the estimate.
            let per = match estimate {
                Some(ms) => ms,
                None => single(b.run(1, Stamps::Batch)?)?,
            };
            adaptive_count(per, min, min_time_ms, max)
        }
    };
    let held = std::time::Instant::now();
    let mut first = timed(b, discipline, reps)?;
    let mut host_ms = held.elapsed().as_secs_f64() * 1e3;
    if let Some(again) = recount(protocol.reps, reps, took(&first)) {
        reps = again;
        let held = std::time::Instant::now();
        first = timed(b, discipline, reps)?;
        host_ms = held.elapsed().as_secs_f64() * 1e3;
    }
    // Cold, the host's clock also runs through the flushes: no check of the device's timer.
    let clock = flush.is_none().then(|| ClockCheck {
        device_ms: took(&first),
        host_ms,
    });
    let (batch_ms, mut samples) = match discipline {
        // The per-dispatch intervals of a batch come from a second batch of the same count.
        Discipline::Batch => (Some(single(first)?), b.run(reps, Stamps::Each)?.each_ms),
        Discipline::Each | Discipline::Synced => (None, first.each_ms),
    };
    let no_times = || {
        BackendError::new(
            b.api(),
            crate::backend::ErrorKind::Driver,
            "the timed batch returned no per-dispatch times",
        )
    };
    let mut stats =
        TimeStats::of(&samples, batch_ms.map(|x| x / reps as f64)).ok_or_else(no_times)?;
    let noise = match protocol.reps {
        Reps::Adaptive {
            max_noise: Some(target),
            noise_cap_ms,
            ..
        } => {
            let rule = (target, noise_cap_ms);
            let so_far = (batch_ms, &mut samples, &mut stats);
            Some(quieter(b, discipline, reps, rule, so_far)?)
        }
        _ => None,
    };
    Ok(Timing {
        discipline,
        reps,
        batch_ms,
        samples_ms: samples,
        stats,
        noise,
        clock,
        flush_bytes: flush,
    })
}

/// `--max-noise`: more batches of `reps` (each timed as the discipline says, its dispatches'
/// intervals added to the samples) while the mean's relative standard error is above `target`
/// and the row has spent less than `cap_ms` of device time; the mean becomes that of every
/// batch. Returns what it reached.
fn quieter(
    b: &mut Batches<'_>,
    discipline: Discipline,
    reps: u32,
    (target, cap_ms): (f64, f64),
    (first_batch, samples, stats): (Option<f64>, &mut Vec<f64>, &mut TimeStats),
) -> Result<Noise, BackendError> {
    let mut batches = 1u32;
    let mut batch_total = first_batch;
    let mut spent = first_batch.unwrap_or(0.0) + samples.iter().sum::<f64>();
    while stats.relative_se() > target && spent < cap_ms {
        let more = timed(b, discipline, reps)?;
        spent += took(&more);
        match discipline {
            Discipline::Batch => {
                batch_total = Some(batch_total.unwrap_or(0.0) + single(more)?);
                let each = b.run(reps, Stamps::Each)?.each_ms;
                spent += each.iter().sum::<f64>();
                samples.extend(each);
            }
            Discipline::Each | Discipline::Synced => samples.extend(more.each_ms),
        }
        batches += 1;
        let mean = batch_total.map(|t| t / (reps as f64 * batches as f64));
        if let Some(s) = TimeStats::of(samples, mean) {
            *stats = s;
        }
    }
    let rse = stats.relative_se();
    Ok(Noise {
        target,
        rse,
        reached: rse <= target,
        batches,
    })
}

/// One row's timed dispatches under `discipline`, `reps` of them: the batch's interval (batch),
/// or each dispatch's (each: in one batch; synced: each a batch of its own).
fn timed(
    b: &mut Batches<'_>,
    discipline: Discipline,
    reps: u32,
) -> Result<BatchTimes, BackendError> {
    match discipline {
        Discipline::Batch => b.run(reps, Stamps::Batch),
        Discipline::Each => b.run(reps, Stamps::Each),
        Discipline::Synced => {
            let mut each = Vec::with_capacity(reps as usize);
            for _ in 0..reps {
                each.extend(b.run(1, Stamps::Each)?.each_ms);
            }
            Ok(BatchTimes {
                batch_ms: None,
                each_ms: each,
            })
        }
    }
}

/// A batch's device time: its interval, else the sum of its dispatches'.
fn took(t: &BatchTimes) -> f64 {
    t.batch_ms.unwrap_or_else(|| t.each_ms.iter().sum())
}

/// An adaptive count whose batch lasted under half its minimum time: its estimate came from
/// warm-ups the host held up (a CPU driver sharing its cores), so it was too long. The count
/// the batch's own pace asks for, where that is more; `None` otherwise.
fn recount(reps: Reps, count: u32, took_ms: f64) -> Option<u32> {
    let Reps::Adaptive {
        min,
        min_time_ms,
        max,
        ..
    } = reps
    else {
        return None;
    };
    if took_ms <= 0.0 || took_ms >= min_time_ms / 2.0 {
        return None;
    }
    let again = adaptive_count(took_ms / count.max(1) as f64, min, min_time_ms, max);
    (again > count).then_some(again)
}

/// Runs the warm-ups back to back; returns the time per dispatch, `None` without warm-ups.
/// The first warm-up runs alone and untimed: it absorbs one-time costs (a driver that compiles
/// per launch shape on first use, as PoCL does, first-touch of memory), which would otherwise
/// make the estimate, and so the adaptive count, many times too small for a short kernel. The
/// rest run as one batch timed as a whole (a timestamp pair costs nothing here).
fn warm_up(b: &mut Batches<'_>, warmups: u32) -> Result<Option<f64>, BackendError> {
    if warmups == 0 {
        return Ok(None);
    }
    let timed = match warmups {
        1 => 1,
        n => {
            b.run(1, Stamps::None)?;
            n - 1
        }
    };
    let t = single(b.run(timed, Stamps::Batch)?)?;
    Ok(Some(t / timed as f64))
}

fn single(t: BatchTimes) -> Result<f64, BackendError> {
    Ok(t.batch_ms
        .or_else(|| t.each_ms.first().copied())
        .unwrap_or(0.0))
}
