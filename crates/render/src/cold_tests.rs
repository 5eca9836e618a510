//! Hot and cold caches in the sweep's report: every format says which ran; cold gives each
//! API's flush and drops the "fits in the cache" note, which no longer holds.

use crate::layout::Layout;
use crate::Render;
use blocksweep_core::flush::{Caches, Flush};
use blocksweep_core::report::{parse_report, Report};

const H200: &str = include_str!("../../core/src/report/testdata/h200-2026-11-30-v2.json");
const MIB: u64 = 1 << 20;

/// The H200 run, cold: each API's flush twice a 50 MiB L2, every timing after it.
fn cold() -> Report {
    let mut r = parse_report(H200).expect("the fixture parses");
    for x in &mut r.results {
        let flush = Flush {
            bytes: 100 * MIB,
            llc_bytes: 50 * MIB,
            llc_source: "TEST_L2_CACHE_SIZE".into(),
        };
        x.protocol = x
            .protocol
            .clone()
            .with_caches(Caches::Cold { flush: Some(flush) });
        for t in x.rows.iter_mut().filter_map(|row| row.timing.as_mut()) {
            t.flush_bytes = Some(100 * MIB);
        }
    }
    r.refresh_answer();
    r
}

#[test]
fn a_cold_run_says_so_in_every_format_and_a_hot_one_too() {
    let r = cold();
    let short = r.table(Layout::new(100));
    assert!(
        short.contains("caches cold: the last-level cache flushed"),
        "{short}"
    );
    let line = "  cold: LLC flushed (100.0 MiB) before each dispatch\n";
    assert_eq!(short.matches(line).count(), 3, "one per API:\n{short}");
    let full = r.table(Layout::new(100).verbose(true));
    let line = "Caches: cold: LLC flushed (100.0 MiB) before each dispatch, every row reads memory";
    assert_eq!(full.matches(line).count(), 3, "{full}");
    assert!(full.contains("TEST_L2_CACHE_SIZE"), "{full}");
    assert!(!full.contains("this run measures the cache"), "{full}");
    let csv = r.csv();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    let first: Vec<&str> = lines.next().unwrap().split(',').collect();
    assert_eq!(first[col("caches")], "cold");
    assert_eq!(first[col("flush_bytes")], (100 * MIB).to_string());
    let hot = parse_report(H200).expect("the fixture parses");
    assert!(hot.table(Layout::new(100)).contains("caches hot"));
    let full = hot.table(Layout::new(100).verbose(true));
    assert!(
        full.contains("Caches: hot: dispatches back to back"),
        "{full}"
    );
    let csv = hot.csv();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let first: Vec<&str> = lines.next().unwrap().split(',').collect();
    let at = head.iter().position(|h| *h == "caches").unwrap();
    assert_eq!((first[at], first[at + 1]), ("hot", ""), "{csv}");
    assert_eq!(head.last(), Some(&"interrupted"), "still the last column");
}

/// A user's kernel that declares no bytes moved says nothing of the cache (it said "the 0.0 MiB
/// a pass moves fits in the ... last-level cache: this run measures the cache").
#[test]
fn traffic_not_declared_says_nothing_of_the_cache() {
    let mut r = parse_report(H200).expect("the fixture parses");
    let full = r.table(Layout::new(100).verbose(true));
    assert!(
        full.contains("Cache: "),
        "the fixture's 4K frame says where it reads: {full}"
    );
    for x in &mut r.results {
        x.frame.bytes_per_pass = 0;
    }
    let full = r.table(Layout::new(100).verbose(true));
    assert!(!full.contains("Cache: "), "{full}");
    assert!(!full.contains("0.0 MiB a pass moves"), "{full}");
}
