use super::*;
use crate::backend::{BatchTimes, Launch, Stamps, Work};
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
        caches: crate::flush::Caches::Hot,
    };
    let t = measure(&mut b, work(), &p).unwrap();
    assert_eq!(t.reps, 10);
    assert_eq!(t.batch_ms, Some(20.0));
    assert_eq!(t.stats.mean, 2.0);
    // The timed batch is also held against the host's clock around it (a scripted device
    // takes no time, so only the device's side is known here).
    let clock = t.clock.expect("the timed batch's clock check");
    assert_eq!(clock.device_ms, 20.0);
    assert!(
        clock.host_ms >= 0.0 && clock.host_ms.is_finite(),
        "{clock:?}"
    );
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
        caches: crate::flush::Caches::Hot,
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
            max_noise: None,
            noise_cap_ms: crate::measure::DEFAULT_NOISE_CAP_MS,
        },
        discipline: Discipline::Batch,
        caches: crate::flush::Caches::Hot,
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
            max_noise: None,
            noise_cap_ms: crate::measure::DEFAULT_NOISE_CAP_MS,
        },
        discipline: Discipline::Batch,
        caches: crate::flush::Caches::Hot,
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

/// A warm-up the host held up (its one dispatch took 100 ms, the kernel takes 1) made the
/// adaptive count one dispatch: that batch lasted 1 ms of the 20 asked, so the row is timed
/// again at the count its own pace asks for; a batch that reached half its time is not.
#[test]
fn an_adaptive_batch_far_short_of_its_time_is_timed_again_at_its_own_pace() {
    let p = Protocol {
        warmups: 1,
        reps: Reps::Adaptive {
            min: 1,
            min_time_ms: 20.0,
            max: 100_000,
            max_noise: None,
            noise_cap_ms: crate::measure::DEFAULT_NOISE_CAP_MS,
        },
        discipline: Discipline::Batch,
        caches: crate::flush::Caches::Hot,
    };
    let mut b = ScriptedBackend::new(TEST_API_A, 1.0, 0.0);
    b.first_ms = 99.0;
    let t = measure(&mut b, work(), &p).unwrap();
    assert_eq!((t.reps, t.batch_ms), (20, Some(20.0)));
    assert_eq!(
        b.batches,
        vec![
            (1, Stamps::Batch),
            (1, Stamps::Batch),
            (20, Stamps::Batch),
            (20, Stamps::Each)
        ]
    );
    let mut b = ScriptedBackend::new(TEST_API_A, 1.0, 0.0);
    b.first_ms = 1.0;
    let t = measure(&mut b, work(), &p).unwrap();
    assert_eq!(
        t.reps, 10,
        "a 2 ms estimate: 10 dispatches, 10 ms, half the time asked"
    );
    assert_eq!(b.batches.len(), 3, "{:?}", b.batches);
}

/// `--max-noise`: each batch of 10 has one dispatch that pays a 1 ms host wait (2 ms) and nine
/// of 1 ms, so every batch's samples have mean 1.1 and, over b batches,
/// sd = sqrt(0.9 b / (10 b - 1)). The relative standard error sd / 1.1 / sqrt(10 b) is 0.0506
/// at b = 3 and 0.0437 at b = 4: a 5 % target takes four batches. With 50 ms of device time allowed (22 ms a batch and
/// its per-dispatch batch), it stops after three, short of it, and says so.
#[test]
fn max_noise_times_more_batches_until_the_mean_is_that_precise_or_the_time_is_spent() {
    let rule = |cap| Protocol {
        warmups: 0,
        reps: Reps::Adaptive {
            min: 10,
            min_time_ms: 2.0,
            max: 100_000,
            max_noise: Some(0.05),
            noise_cap_ms: cap,
        },
        discipline: Discipline::Batch,
        caches: crate::flush::Caches::Hot,
    };
    let mut b = ScriptedBackend::new(TEST_API_A, 1.0, 0.0);
    b.host_wait_ms = 1.0;
    let t = measure(&mut b, work(), &rule(1000.0)).unwrap();
    let n = t.noise.unwrap();
    assert_eq!((n.batches, n.reached), (4, true), "{n:?}");
    assert!((n.rse - 0.043671).abs() < 1e-5, "{n:?}");
    assert_eq!(t.reps, 10);
    assert_eq!(t.samples_ms.len(), 40);
    assert!((t.stats.mean - 1.1).abs() < 1e-12, "{}", t.stats.mean);
    let mut b = ScriptedBackend::new(TEST_API_A, 1.0, 0.0);
    b.host_wait_ms = 1.0;
    let t = measure(&mut b, work(), &rule(50.0)).unwrap();
    let n = t.noise.unwrap();
    assert_eq!((n.batches, n.reached), (3, false), "{n:?}");
    assert!((n.rse - 0.050645).abs() < 1e-5, "{n:?}");
    // Without the rule nothing more is timed, and nothing is said.
    let mut b = ScriptedBackend::new(TEST_API_A, 1.0, 0.0);
    b.host_wait_ms = 1.0;
    let plain = Protocol {
        reps: Reps::default(),
        ..rule(0.0)
    };
    let t = measure(&mut b, work(), &plain).unwrap();
    assert_eq!((t.noise, t.samples_ms.len()), (None, 10));
}
