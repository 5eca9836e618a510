use super::*;
use crate::report::Report;
use crate::sweep::{self, Quiet, SweepConfig, SweepRun};

/// A whole sweep of `f` on `b`.
fn run(
    b: &mut dyn Backend,
    f: &Frame,
    cfg: &SweepConfig,
) -> (sweep::SweepResult, Option<sweep::SweepError>) {
    let how = SweepRun {
        config: cfg,
        shared: None,
        observer: &mut Quiet,
        on_row: &mut |_| {},
        clock: None,
    };
    sweep::run(b, f, &f.reference(), how)
}

// The conformance kit runs every scenario on this backend in its own tests
// (crates/conformance/tests/host.rs); here, what the core's model makes of it.
#[test]
fn the_model_reproduces_the_seeds_t4_columns_through_the_sweep() {
    let mut b = HostBackend::new(TEST_API_C);
    let f = Frame::generate(64, 16, 2);
    let cfg = SweepConfig {
        protocol: crate::Protocol {
            warmups: 0,
            reps: crate::Reps::Fixed(1),
            discipline: crate::Discipline::Batch,
            caches: crate::flush::Caches::Hot,
        },
        copy: false,
        ..Default::default()
    };
    let (r, err) = run(&mut b, &f, &cfg);
    assert!(err.is_none(), "{err:?}");
    assert!(r.rows.iter().all(|x| x.verified), "{:?}", r.rows);
    let col: Vec<u32> = r.rows.iter().map(|x| x.blocks_per_mp.unwrap()).collect();
    assert_eq!(col, [16, 16, 16, 10, 8, 8, 6, 5, 4, 2, 2, 1, 1]);
    assert_eq!(r.rows[4].idle_lanes, Some(28));
}

#[test]
fn rejected_launch_is_a_skipped_row_with_the_apis_words() {
    let mut b = HostBackend::new(TEST_API_A);
    b.reject = Some(128);
    let f = Frame::generate(64, 8, 1);
    let cfg = SweepConfig {
        blocks: crate::blocks::parse_blocks("64,128,256").unwrap(),
        ..Default::default()
    };
    let (r, err) = run(&mut b, &f, &cfg);
    assert!(err.is_none());
    assert_eq!(r.rows_run(), 2);
    assert!(r.rows[1]
        .skipped
        .as_deref()
        .unwrap()
        .contains("HOST_INVALID_CONFIGURATION"));
    assert!(r.copy.is_some() && r.rows[0].of_copy.is_some());
}

#[test]
fn wave_grid_is_raised_where_a_driver_caps_loop_iterations() {
    let mut b = HostBackend::new(TEST_API_B);
    b.limits.max_loop_iterations = Some(crate::limits::Named::new(100, "TEST_LOOP_CAP"));
    let cfg = SweepConfig {
        blocks: crate::blocks::parse_blocks("16,1024").unwrap(),
        ..Default::default()
    };
    // 1 << 20 pixels / (16 threads x 100 iterations) needs 656 blocks; the model's wave
    // (4 MPs x 16 resident blocks) would give 64.
    let p = sweep::plan(&mut b, 1 << 20, &cfg).unwrap();
    assert_eq!(p.rows[0].grid, 656);
    assert_eq!(p.rows[1].grid, 11);
    assert!(p.grid_source.contains("TEST_LOOP_CAP"), "{}", p.grid_source);
}

#[test]
fn a_driver_that_reports_a_zero_limit_runs_nothing_and_says_why() {
    let mut b = HostBackend::new(TEST_API_A);
    b.limits.max_threads_per_block = Some(Named::new(0, "HOST_MAX_THREADS"));
    let f = Frame::generate(64, 8, 1);
    let cfg = SweepConfig::default();
    let (r, err) = run(&mut b, &f, &cfg);
    assert!(err.is_none(), "{err:?}");
    assert_eq!(r.rows_run(), 0);
    let mut rep = Report::new("t", "d");
    rep.results.push(r);
    let why = crate::session::nothing_ran(&rep).expect("a run with no row is a failure");
    assert!(why.contains("HOST_MAX_THREADS = 0"), "{why}");
    assert!(
        why.starts_with(
            "no block size can run: Alpha block 16: 16 threads > HOST_MAX_THREADS = 0;"
        ) && why.ends_with("; and 10 more"),
        "three reasons, then a count: {why}"
    );
}
