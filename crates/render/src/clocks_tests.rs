//! The clocks around each API's turn in the text report: a line per API, and the answer's
//! paragraph where an API's rows ran on moving clocks; nothing where none were read.

use crate::layout::{max_line_width, Layout};
use crate::Render;
use blocksweep_core::clocks::{Clocks, TurnClocks};
use blocksweep_core::report::{parse_report, Report};

const H200: &str = include_str!("../../core/src/report/testdata/h200-2026-11-30-v2.json");

fn reading(sm: u32, reasons: &[&str]) -> Clocks {
    Clocks {
        sm_mhz: sm,
        mem_mhz: 2619,
        max_sm_mhz: Some(1980),
        reasons: reasons.iter().map(|r| r.to_string()).collect(),
    }
}

/// The H200 run with its first API ramping from idle and the others steady at 1980 MHz.
fn with_clocks() -> Report {
    let mut r = parse_report(H200).expect("the fixture parses");
    for (i, x) in r.results.iter_mut().enumerate() {
        let start = match i {
            0 => reading(345, &["gpu_idle"]),
            _ => reading(1980, &[]),
        };
        x.set_clocks(TurnClocks {
            start,
            end: reading(1980, &[]),
        });
    }
    r.refresh_answer();
    r
}

#[test]
fn each_api_says_its_clocks_and_the_answer_names_the_one_that_moved() {
    let r = with_clocks();
    let (first, second) = (r.results[0].api, r.results[1].api);
    let short = r.table(Layout::new(100));
    assert!(
        short.contains("  clocks SM 345 MHz → 1980 MHz, memory 2619 MHz; no throttling; rows measured on moving clocks\n"),
        "{short}"
    );
    assert!(
        short.contains("  clocks SM 1980 MHz → 1980 MHz, memory 2619 MHz; no throttling\n"),
        "{short}"
    );
    let warning = format!("Clocks moved during the turn of {first} (SM clock 345 MHz");
    assert!(short.contains(&warning), "{short}");
    assert!(!short.contains(&format!("{second} (SM clock")), "{short}");
    assert!(max_line_width(&short) <= 100, "{short}");
    let full = r.table(Layout::new(100).verbose(true));
    assert!(full.contains("Clocks: SM 345 MHz → 1980 MHz"), "{full}");
}

#[test]
fn a_throttle_reason_is_named() {
    let mut r = parse_report(H200).expect("the fixture parses");
    r.results[0].set_clocks(TurnClocks {
        start: reading(1755, &[]),
        end: reading(1755, &["sw_power_cap"]),
    });
    r.refresh_answer();
    let short = r.table(Layout::new(100));
    assert!(
        short.contains(
            "clocks SM 1755 MHz → 1755 MHz, memory 2619 MHz; throttled: sw_power_cap at the end;"
        ),
        "{short}"
    );
}

#[test]
fn without_clocks_the_report_says_nothing_of_them() {
    let mut r = parse_report(H200).expect("the fixture parses");
    r.refresh_answer();
    for text in [
        r.table(Layout::new(100)),
        r.table(Layout::new(100).verbose(true)),
    ] {
        assert!(!text.to_lowercase().contains("clocks"), "{text}");
    }
}
