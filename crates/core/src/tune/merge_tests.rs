//! Merging made-up tunes of one space: disjoint shares, and whole runs that overlap.

use super::*;
use crate::answer::{Config, GridPolicyKey, Measurement, Outcome};
use crate::measure::TimeStats;
use crate::testing::{TEST_API_A as A, TEST_API_B as B};
use crate::tune::Search;
use crate::BlockSize;

/// A tune of blocks `blocks` on grid 1w, on two APIs (a block's time: `ms(block)`), over a
/// space of four blocks; `cached`: read from the cache rather than measured.
fn tune(blocks: &[u32], ms: impl Fn(u32) -> f64, cached: bool, share: &str) -> TuneReport {
    let mut measurements = Vec::new();
    for api in [A, B] {
        for &b in blocks {
            let mean = ms(b);
            measurements.push(Measurement {
                api,
                gpu: None,
                config: Config {
                    params: Default::default(),
                    block: BlockSize::linear(b),
                    grid: GridPolicyKey("1w".into()),
                },
                grid_blocks: 4,
                outcome: Outcome::Ran {
                    stats: TimeStats::of(&[mean; 4], None).unwrap(),
                    reps: 4,
                    resolution_ms: 0.001,
                    gbps: None,
                },
                cached,
            });
        }
    }
    let n = measurements.len();
    let mut r = TuneReport {
        tool: "t".into(),
        date: "d".into(),
        partial: Default::default(),
        kernel: "kernel 'k' at n=16".into(),
        spec_hash: None,
        caches: Default::default(),
        params: Vec::new(),
        restrict: Vec::new(),
        grids: vec!["1w".into()],
        blocks: [32, 64, 128, 256].map(BlockSize::linear).to_vec(),
        devices: vec!["Alpha: X (1)".into(), "Beta: X (1)".into()],
        answer: Default::default(),
        search: Search {
            order: format!("exhaustive{share}"),
            space: 4,
            covered: blocks.len(),
            measured: if cached { 0 } else { n },
            from_cache: if cached { n } else { 0 },
            compiles: usize::from(!cached),
            compile_s: 0.5,
            wall_s: 1.0,
            stopped: None,
        },
        rejected: Vec::new(),
        wrong: Vec::new(),
        errors: Vec::new(),
        measurements,
        clocks: Vec::new(),
    };
    r.refresh_answer(&[]);
    r
}

fn time(r: &TuneReport, api: crate::Api, block: u32) -> Option<f64> {
    let m = r
        .measurements
        .iter()
        .find(|m| m.api == api && m.config.block.x == block);
    m.and_then(|m| m.ms())
}

#[test]
fn disjoint_shares_add_up_to_the_space() {
    let first = tune(&[32, 64], |b| b as f64, false, ", share 1/2");
    let second = tune(&[128, 256], |b| b as f64, false, ", share 2/2");
    let m = merge(vec![first, second]).unwrap();
    assert_eq!(m.search.order, "exhaustive (merged from 2 shares)");
    assert_eq!((m.search.covered, m.search.space), (4, 4));
    assert_eq!((m.search.measured, m.search.from_cache), (8, 0));
    assert_eq!(m.measurements.len(), 8);
}

/// A whole tune and the same tune read back from the cache: every configuration is in both,
/// so the merge covers the space once and keeps the first file's measurements.
#[test]
fn whole_runs_that_overlap_count_each_configuration_once() {
    let all = [32, 64, 128, 256];
    let measured = tune(&all, |b| b as f64, false, "");
    let cached = tune(&all, |b| 2.0 * b as f64, true, "");
    let m = merge(vec![measured, cached]).unwrap();
    assert_eq!((m.search.covered, m.search.space), (4, 4), "not 8 of 4");
    assert_eq!(m.measurements.len(), 8);
    assert_eq!(
        (m.search.measured, m.search.from_cache),
        (8, 0),
        "the first file's kept"
    );
    assert_eq!(time(&m, B, 64), Some(64.0), "the first file's time");
    assert_eq!(
        m.search.order,
        "exhaustive (merged from 2 runs; 4 configurations in more than one, each kept from \
         the first file that has it)"
    );
    // Half of the second run is new: those are counted from it, from the cache.
    let first = tune(&[32, 64], |b| b as f64, false, "");
    let second = tune(&all, |b| 2.0 * b as f64, true, "");
    let m = merge(vec![first, second]).unwrap();
    assert_eq!(m.search.covered, 4);
    assert_eq!((m.search.measured, m.search.from_cache), (4, 4));
    assert_eq!(
        (time(&m, A, 32), time(&m, A, 128)),
        (Some(32.0), Some(256.0))
    );
    assert!(
        m.search.order.contains("2 configurations in more than one"),
        "{}",
        m.search.order
    );
}
