//! The renderers on a real three-API GPU run: the H200 run of 2026-11-30
//! (docs/results/h200-2026-11-30.json, converted to schema 2: its times as samples of a fixed
//! count, timed synced). Its APIs are unknown to the core's tests (no driver list here), so
//! they read in generic words; crates/cli/tests/output_design.rs renders it in each API's.

use super::layout::{max_line_width, Layout};
use super::{parse_report, render_runs, Format, Render, Report};
use crate::backend::DeviceKind;

const H200: &str = include_str!("testdata/h200-2026-11-30-v2.json");

fn h200() -> Report {
    let mut r = parse_report(H200).expect("the fixture parses");
    r.refresh_answer();
    r
}

#[test]
fn every_text_format_fits_and_answers_first() {
    let r = h200();
    for width in [80, 100] {
        let s = r.table(Layout::new(width));
        assert!(max_line_width(&s) <= width, "{width}:\n{s}");
    }
    let s = r.table(Layout::new(100));
    assert!(
        s.starts_with("Answer\n- Within 95 % of each API's best on all three APIs"),
        "{s}"
    );
    assert!(s.contains("\nAll APIs on one device\n"), "{s}");
    assert!(!s.contains("What carries over"), "a GPU run: {s}");
    let md = r.markdown(Layout::new(100));
    assert!(md.contains("**Answer**\n- Within 95 %"), "{md}");
    assert!(md.contains("## All APIs on one device"), "{md}");
    // Footnotes keep the markdown table narrow (it was 200 wide with the notes in a cell).
    let widest_row = md
        .lines()
        .filter(|l| l.starts_with('|'))
        .map(|l| l.chars().count())
        .max()
        .unwrap();
    assert!(widest_row <= 160, "{widest_row}");
}

#[test]
fn rendering_leaves_the_json_as_it_was() {
    let r = h200();
    let _ = r.table(Layout::new(100));
    let back = parse_report(&r.json()).unwrap();
    assert_eq!(back, r);
    assert_eq!(
        render_runs(Format::Json, std::slice::from_ref(&r), Layout::default()),
        r.json()
    );
    let csv = r.csv();
    assert_eq!(csv.lines().count(), 1 + 3 * 13);
    let two = render_runs(Format::Table, &[r.clone(), r.clone()], Layout::new(100));
    assert!(max_line_width(&two) <= 100, "{two}");
    assert_eq!(two.matches("Answer\n").count(), 2);
}

#[test]
fn apis_on_different_devices_are_not_called_one_device() {
    let mut r = h200();
    r.shared_plan = false;
    r.device_match = Some("each API on its own default device".into());
    r.results[2].device.name = "pthread-haswell".into();
    r.results[2].device.kind = DeviceKind::Cpu;
    for row in &mut r.results[2].rows {
        row.grid = 2;
    }
    let s = r.table(Layout::new(100));
    assert!(max_line_width(&s) <= 100, "{s}");
    assert!(!s.contains("All APIs on one device"), "{s}");
    assert!(
        s.contains("APIs side by side, each on its own device"),
        "{s}"
    );
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("opencl on pthread-haswell (CPU)"), "{s}");
    assert!(flat.contains("How the devices were chosen: each API on its own default device"));
    // The grids differ per API: one grid column per API, and the legend says why.
    assert!(flat.contains("grid: blocks launched, per API"), "{s}");
    assert!(!flat.contains("the same on every API"), "{s}");
    // One API on a CPU: said once.
    assert_eq!(s.matches("What carries over to a GPU").count(), 1, "{s}");
    assert!(s.contains("Part of this ran on a CPU"), "{s}");
    // Each API's fastest line names its device when they differ.
    assert!(
        flat.contains("- opencl on pthread-haswell (CPU): fastest"),
        "{s}"
    );
}
