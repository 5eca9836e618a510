//! The one answer, over a sweep's rows (a report) and a tune's configurations alike.

use super::*;
use crate::report::{Failure, Report};
use crate::sweep::{SweepResult, SweepRow, Verdict};
use crate::testing::{TEST_API_A as A, TEST_API_B as B, TEST_API_C as C};

/// A result whose rows run at these speeds relative to 1.0 (`None`: refused by a limit).
fn result(api: Api, of_best: &[(u32, Option<f64>)]) -> SweepResult {
    let mut r = crate::testing::empty_result(api);
    for &(threads, o) in of_best {
        let mut row: SweepRow = crate::testing::empty_row(BlockSize::linear(threads));
        match o {
            Some(o) => row.timing = Some(crate::testing::timing(1.0 / o)),
            None => row.skipped = Some(format!("{threads} threads > maxLimit = 1024")),
        }
        r.rows.push(row);
    }
    r.fill_relative();
    r
}

fn answer(results: Vec<SweepResult>, failures: Vec<Failure>) -> Answer {
    let mut rep = Report::new("t", "d");
    rep.results = results;
    rep.failures = failures;
    rep.refresh_answer();
    assert_eq!(
        rep.measurements.len(),
        rep.results.iter().map(|r| r.rows.len()).sum::<usize>()
    );
    rep.answer.expect("an answer")
}

fn blocks(v: &[Config]) -> Vec<u32> {
    v.iter().map(|c| c.block.x).collect()
}

#[test]
fn a_sweep_answers_sizes_good_everywhere_and_the_exceptions() {
    let a = answer(
        vec![
            result(
                A,
                &[
                    (32, Some(0.80)),
                    (64, Some(0.99)),
                    (128, Some(1.0)),
                    (2048, None),
                ],
            ),
            result(
                B,
                &[
                    (32, Some(0.96)),
                    (64, Some(0.95)),
                    (128, Some(1.0)),
                    (2048, Some(0.97)),
                ],
            ),
        ],
        vec![],
    );
    assert!(a.plain());
    assert_eq!(blocks(&a.portable), [64, 128], "0.95 is good, 0.80 not");
    assert_eq!(a.exceptions.len(), 2, "{:?}", a.exceptions);
    assert_eq!(
        a.exceptions[1].short[0].why,
        "2048 threads > maxLimit = 1024"
    );
    let s = a.sentences();
    assert_eq!(
        s[0],
        "Within 95 % of each API's best on both APIs (Alpha, Beta): 64, 128 threads per block."
    );
    assert_eq!(
        s[1],
        "Not portable (where each API falls short): 32 (Alpha: 0.80 of its best); \
         2048 (Alpha: 2048 threads > maxLimit = 1024)."
    );
    let best = &a.best[0];
    assert_eq!((best.api, best.config.block.x, best.ranked), (A, 128, 3));
    let c = a.choice.expect("a choice");
    assert_eq!(c.config.block.x, 128);
    assert!(c.portable);
}

#[test]
fn an_api_that_failed_or_stopped_makes_nothing_portable() {
    let a = answer(
        vec![result(A, &[(64, Some(1.0))])],
        vec![Failure::new(
            C,
            crate::report::FailureKind::Unavailable,
            "could not open",
        )],
    );
    assert_eq!(a.apis, [A, C]);
    assert!(a.portable.is_empty() && a.exceptions.is_empty(), "{a:?}");
    assert_eq!(a.stopped[0].kind, StopKind::Failed);
    assert!(a.sentences()[0].starts_with("No block size is known good on both APIs"));
    let mut stopped = result(A, &[(64, Some(1.0))]);
    stopped.error = Some(format!("{A}: output 'y' at block 128 differs"));
    let b = answer(
        vec![stopped, result(B, &[(64, Some(1.0)), (128, Some(1.0))])],
        vec![],
    );
    assert!(b.portable.is_empty());
    assert_eq!(b.best.len(), 1, "a stopped API is given no speed");
    assert_eq!(b.stopped[0].message, "output 'y' at block 128 differs");
    assert!(b.sentences()[0].contains("Alpha stopped: output 'y' at block 128 differs"));
}

/// A row below the band that the noise cannot tell from the best is neither good nor tied.
#[test]
fn an_unranked_row_is_not_good_anywhere() {
    let mut r = crate::testing::empty_result(A);
    for (threads, mean, spread) in [(64, 1.0, 0.0), (128, 1.5, 3.0)] {
        let mut row = crate::testing::empty_row(BlockSize::linear(threads));
        let samples: Vec<f64> = (0..10)
            .map(|i| (mean * (1.0 + spread * (i as f64 - 4.5) / 4.5)).abs())
            .collect();
        let mut t = crate::testing::timing(mean);
        t.stats = TimeStats::of(&samples, Some(mean)).unwrap();
        row.timing = Some(t);
        r.rows.push(row);
    }
    r.fill_relative();
    assert_eq!(r.rows[1].verdict, Some(Verdict::Unranked));
    let a = answer(
        vec![r, result(B, &[(64, Some(1.0)), (128, Some(1.0))])],
        vec![],
    );
    assert_eq!(blocks(&a.portable), [64]);
    assert!(a.best[0].tied.is_empty());
    assert!(a.exceptions[0].short[0].why.starts_with("cannot be ranked"));
}

fn config(elems: u64, block: u32) -> Config {
    Config {
        params: [("ELEMS".to_string(), elems)].into_iter().collect(),
        block: BlockSize::linear(block),
        grid: GridPolicy::Wave.into(),
    }
}

/// Steady samples: the noise cannot tie rows 5 % apart.
fn ran(api: Api, c: Config, ms: f64) -> Measurement {
    let outcome = Outcome::Ran {
        stats: TimeStats::of(&[ms; 20], None).unwrap(),
        reps: 20,
        resolution_ms: 1e-6,
        gbps: None,
    };
    Measurement {
        api,
        gpu: None,
        config: c,
        grid_blocks: 1,
        outcome,
        cached: false,
    }
}

#[test]
fn a_tune_answers_its_portable_set_regret_and_never_ranks_a_wrong_set() {
    let all = vec![
        ran(A, config(1, 64), 1.00),
        ran(B, config(1, 64), 2.00),
        ran(A, config(1, 256), 1.02),
        ran(B, config(1, 256), 1.03),
        ran(A, config(2, 64), 1.30),
        ran(B, config(2, 64), 1.00),
        // The fastest on A, but its set is wrong there: never ranked.
        ran(A, config(4, 64), 0.50),
        ran(B, config(4, 64), 1.50),
    ];
    let wrong = vec![Wrong {
        api: A,
        params: config(4, 64).params,
        detail: "differs".into(),
    }];
    let asked = Asked {
        wrong: &wrong,
        ..Asked::default()
    };
    let a = Answer::of(&all, &asked);
    assert!(!a.plain());
    let best = |api| a.best.iter().find(|b| b.api == api).unwrap();
    assert_eq!(best(A).config, config(1, 64));
    assert_eq!(best(A).ranked, 3);
    assert_eq!(best(B).config, config(2, 64));
    // Only 256 is within 95 % on both (A: 1/1.02, B: 1/1.03).
    assert_eq!(a.portable, vec![config(1, 256)]);
    let c = a.choice.clone().unwrap();
    assert_eq!(c.config, config(1, 256));
    assert!(c.portable);
    assert!((c.regret[0].regret - 1.02).abs() < 1e-9 && (c.regret[1].regret - 1.03).abs() < 1e-9);
    let wrong_set = a
        .exceptions
        .iter()
        .find(|e| e.config == config(4, 64))
        .unwrap();
    assert_eq!(wrong_set.short[0].why, "wrong output: differs");
    assert!(
        a.sentences()[0].contains("ELEMS=1 block 256 grid wave"),
        "{:?}",
        a.sentences()
    );
}

#[test]
fn a_winner_holds_within_five_percent() {
    assert!(Held::new(A, config(1, 64), 1.0, 1.04).held);
    assert!(!Held::new(A, config(1, 64), 1.0, 1.10).held);
}

/// Alpha stopped after block 64 (its output differed at 128); Beta ran 64 to 512, half speed
/// at 256.
fn alpha_stopped_beta_ran() -> (SweepResult, SweepResult) {
    let mut a = result(A, &[(64, Some(1.0))]);
    a.error = Some("output 'y' at block 128 differs".into());
    let b = result(
        B,
        &[
            (64, Some(1.0)),
            (128, Some(1.0)),
            (256, Some(0.5)),
            (512, Some(1.0)),
        ],
    );
    (a, b)
}

/// An API that stopped part-way is said once with the sizes it did not reach, not once per
/// size ("did not run: the API stopped earlier" was repeated 12 times in one line).
#[test]
fn the_sizes_an_api_did_not_reach_are_said_once() {
    let (a, b) = alpha_stopped_beta_ran();
    let s = answer(vec![a, b], vec![]).sentences();
    // 256, short on Beta and not reached on Alpha, is said once with both (it was listed
    // twice: with Beta's shortfall and among Alpha's unreached sizes; a new user's trial).
    assert_eq!(
        s[1],
        "Not portable (where each API falls short): 256 (Alpha: did not run: the API stopped \
         earlier; Beta: 0.50 of its best); 128, 512 (Alpha: did not run: the API stopped \
         earlier).",
        "{s:?}"
    );
}

/// Two APIs that stopped part-way: a size neither reached is said once, with both named (it
/// was listed once under each API's unreached sizes), and a size another API fell short at is
/// said once with every reason.
#[test]
fn a_size_two_stopped_apis_did_not_reach_is_said_once() {
    let (a, b) = alpha_stopped_beta_ran();
    let mut c = result(C, &[(64, Some(1.0)), (128, Some(1.0))]);
    c.error = Some("output 'y' at block 256 differs".into());
    let s = answer(vec![a, b, c], vec![]).sentences();
    let stopped = "did not run: the API stopped earlier";
    assert_eq!(
        s[1],
        format!(
            "Not portable (where each API falls short): 256 (Alpha: {stopped}; Beta: 0.50 of its \
             best; Gamma: {stopped}); 128 (Alpha: {stopped}); 512 (Alpha, Gamma: {stopped})."
        ),
        "{s:?}"
    );
    for size in ["128", "256", "512"] {
        let n = s[1]
            .split(|c: char| !c.is_ascii_digit())
            .filter(|w| *w == size);
        assert_eq!(n.count(), 1, "{size} in {}", s[1]);
    }
}

#[test]
fn a_fraction_below_the_bar_never_reads_as_the_bar() {
    // 0.9455 and 0.9499 fall short of 0.95: rounded to two places they would read 0.95.
    let sizes = [32, 64, 128, 256, 512];
    let b: Vec<(u32, Option<f64>)> = sizes.iter().map(|&t| (t, Some(1.0))).collect();
    let of_a = [0.9455, 0.9499, 0.95, 0.951, 1.0];
    let a: Vec<(u32, Option<f64>)> = sizes.iter().zip(of_a).map(|(&t, o)| (t, Some(o))).collect();
    let a = answer(vec![result(A, &a), result(B, &b)], vec![]);
    assert_eq!(blocks(&a.portable), [128, 256, 512]);
    let s = a.sentences();
    assert!(
        s[1].contains("32 (Alpha: 0.94 of its best)")
            && s[1].contains("64 (Alpha: 0.94 of its best)"),
        "{s:?}"
    );
    assert!(!s[1].contains("0.95"), "{s:?}");
}
