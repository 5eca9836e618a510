//! The renderers on a real three-API GPU run: the H200 run of 2026-11-30
//! (docs/results/h200-2026-11-30.json, converted to schema 2: its times as samples of a fixed
//! count, timed synced). Its APIs are unknown to the core's tests (no provider list here), so
//! they read in generic words; crates/cli/tests/output_design.rs renders it in each API's.

use crate::layout::{max_line_width, Layout};
use crate::{render_runs, Format, Render};
use blocksweep_core::backend::DeviceKind;
use blocksweep_core::report::{parse_report, Report};

const H200: &str = include_str!("../../core/src/report/testdata/h200-2026-11-30-v2.json");

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
    let s = r.table(Layout::new(100).verbose(true));
    assert!(max_line_width(&s) <= 100, "{s}");
    assert!(!s.contains("All APIs on one device"), "{s}");
    // CUDA and Vulkan stayed on the H200: two devices, and which API ran where.
    assert!(s.contains("APIs side by side, on 2 devices"), "{s}");
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("cuda and vulkan on NVIDIA H200"), "{s}");
    assert!(!flat.contains("Each API ran on its own device"), "{s}");
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

/// Spreads the H200 run's rows of one API: the slowest rows get a spread so wide that the noise
/// cannot tell them from the best.
fn with_noise(mut r: Report, api: usize, cv: f64) -> Report {
    for row in &mut r.results[api].rows {
        if let Some(t) = &mut row.timing {
            let m = t.stats.mean;
            let samples: Vec<f64> = (0..10)
                .map(|i| (m * (1.0 + cv * (i as f64 - 4.5) / 2.9)).abs())
                .collect();
            t.stats = blocksweep_core::measure::TimeStats::of(&samples, Some(m)).unwrap();
            t.reps = 10;
        }
    }
    r.refresh_answer();
    r
}

/// One rule for "tied" and "within 95 %", one verdict per row wherever
/// it shows, and one warning when the spreads are past what can rank the rows.
#[test]
fn noise_past_ranking_is_said_once_and_no_list_contradicts_another() {
    let quiet = h200().table(Layout::new(100));
    assert!(!quiet.contains("too noisy"), "{quiet}");
    let r = with_noise(h200(), 2, 3.0);
    let s = r.table(Layout::new(100));
    assert_eq!(s.matches("too noisy to rank").count(), 1, "{s}");
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(flat.contains("(marked ?)"), "{s}");
    let opencl = &r.results[2];
    let unranked = opencl.rows_unranked();
    assert!(!unranked.is_empty());
    for row in &unranked {
        assert!(row.of_best.unwrap() < 0.95 && row.ties_best);
        // Never in the answer's tie list, never counted as within 95 %, never portable.
        let p = r.answer.as_ref().unwrap();
        assert!(p.portable.iter().all(|c| c.block != row.block), "{p:?}");
    }
    let line = s
        .lines()
        .find(|l| l.contains("opencl: fastest"))
        .map(|l| l.to_string())
        .unwrap_or_default();
    let tied = line.split("(≈): ").nth(1).unwrap_or("");
    for row in &unranked {
        assert!(
            !tied
                .split(&[',', ';'][..])
                .any(|b| b.trim() == row.block.to_string()),
            "{line}"
        );
    }
    assert_eq!(
        opencl.rows_good(),
        opencl
            .rows
            .iter()
            .filter(|x| x.verdict.is_some_and(|v| v.good()))
            .count()
    );
    // The CSV and JSON carry the same verdict as the table.
    let csv = r.csv();
    assert!(csv
        .lines()
        .next()
        .unwrap()
        .split(',')
        .any(|c| c == "verdict"));
    assert!(csv.contains(",unranked,"), "{csv}");
    assert!(r.json().contains("\"verdict\": \"unranked\""));
}

/// The per-dispatch statistics come from one set of samples, named so.
#[test]
fn each_csv_statistic_lies_within_its_own_samples() {
    let r = with_noise(h200(), 1, 0.5);
    let csv = r.csv();
    let mut lines = csv.lines();
    let head: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |n: &str| head.iter().position(|h| *h == n).unwrap();
    for line in lines {
        let f: Vec<&str> = line.split(',').collect();
        let v = |n: &str| f[col(n)].parse::<f64>().unwrap();
        let (lo, mean, hi) = (v("each_ms_min"), v("each_ms_mean"), v("each_ms_max"));
        assert!(lo <= mean && mean <= hi, "{line}");
        assert!(
            v("each_ms_median") >= lo && v("each_ms_median") <= hi,
            "{line}"
        );
    }
}

/// The default report: the answer, a line per API and the side-by-side table, at most about
/// 50 lines at 100 columns for three APIs; verbose adds each API's header and own table.
#[test]
fn the_short_report_answers_in_fifty_lines_and_verbose_adds_each_api() {
    let r = h200();
    let short = r.table(Layout::new(100));
    let full = r.table(Layout::new(100).verbose(true));
    let lines = short.lines().count();
    assert!(lines <= 50, "{lines} lines:\n{short}");
    assert!(full.lines().count() > 2 * lines, "{full}");
    for s in [&short, &full] {
        assert!(s.starts_with("Answer\n"), "{s}");
        assert!(s.contains("\nAll APIs on one device\n"), "{s}");
    }
    // Spreads and the protocol are in each API's own table and header, shown by verbose.
    for detail in ["±", "Timing (", "Copy ceiling:", "Fastest measured"] {
        assert!(!short.contains(detail), "{detail}:\n{short}");
        assert!(full.contains(detail), "{detail}:\n{full}");
    }
    for x in &r.results {
        let line = format!("{}: {} (", x.api, x.device.name);
        assert!(short.contains(&line), "{line}:\n{short}");
    }
    assert!(
        short
            .trim_end()
            .ends_with("--verbose (every -o file has them)."),
        "{short}"
    );
    assert!(!full.contains("--verbose"), "{full}");
}

/// One API: its own table stays (the sweep's columns), the protocol goes behind verbose.
#[test]
fn one_api_keeps_its_table_in_the_short_report() {
    let mut r = h200();
    r.results.truncate(1);
    r.refresh_answer();
    let s = r.table(Layout::new(100));
    let checked = s.lines().filter(|l| l.trim_end().ends_with(" ok")).count();
    assert_eq!(checked, r.results[0].rows.len(), "{s}");
    assert!(s.contains("occ"), "{s}");
    assert!(
        !s.contains("Timing (") && !s.contains("Fastest measured"),
        "{s}"
    );
    if let Some(sg) = &r.results[0].suggestion {
        assert!(s.contains(&format!("{} suggests", sg.source)), "{s}");
    }
    assert!(!s.contains("All APIs on one device"), "{s}");
}

/// A size one API refused shows in the side-by-side table with that API's words under it.
#[test]
fn a_refusal_in_the_short_report_keeps_the_apis_words() {
    let mut r = h200();
    let row = &mut r.results[1].rows[12];
    row.timing = None;
    row.gbps = None;
    row.skipped = Some("rejected by the API: ERROR_OUT_OF_POOL_MEMORY".into());
    r.results[1].fill_relative();
    r.refresh_answer();
    let s = r.table(Layout::new(100));
    assert!(s.contains("skipped [1]"), "{s}");
    let note = format!(
        "[1] {} {}: rejected by the API: ERROR_OUT_OF_POOL_MEMORY",
        r.results[1].api, r.results[1].rows[12].block
    );
    assert!(s.contains(&note), "{note}:\n{s}");
}

/// "Sizes ... ran above the kernel's own stated limit" names the launches above it (OpenCL's
/// 384 to 1024 against CL_KERNEL_WORK_GROUP_SIZE = 256), not rows with any note: a user's
/// kernel notes its reference row, which is no limit (issue 40).
#[test]
fn only_launches_above_the_kernel_limit_are_said_to_be() {
    let mut r = h200();
    for x in &mut r.results {
        x.rows[0].note = Some("the reference: its other sizes are compared with it".into());
    }
    let said = |verbose: bool| -> Vec<String> {
        let s = r.table(Layout::new(200).verbose(verbose));
        s.lines()
            .filter(|l| l.contains("above the kernel's own stated limit"))
            .map(|l| l.trim().to_string())
            .collect()
    };
    assert_eq!(
        said(false),
        [
            "Sizes 384, 512, 768, 1024 ran above the kernel's own stated limit and the driver \
          accepted them (--verbose names the limit)"
        ]
    );
    assert_eq!(
        said(true),
        [
            "4 configuration(s) ran above the kernel's own stated limit, and the driver accepted \
          them (notes under the table)."
        ]
    );
}

/// One API fastest at 16 threads only: no size is good on both, and the answer lists where
/// each falls short at the sizes good on one; the sizes good on neither are said too (a
/// reader took the unlisted ones for fine), and the `all ≥95%` column says yes or no on every
/// row instead of a blank (issue 40).
#[test]
fn the_answer_and_the_everywhere_column_account_for_every_size() {
    let mut r = h200();
    r.results.truncate(2);
    for row in &mut r.results[1].rows {
        let t = row.timing.as_mut().unwrap();
        let m = if row.block.x == 16 { 0.01 } else { 0.1 };
        t.samples_ms = vec![m; 10];
        t.stats = blocksweep_core::measure::TimeStats::of(&t.samples_ms, Some(m)).unwrap();
    }
    r.refresh_answer();
    let s = r.table(Layout::new(100));
    let nowhere: Vec<String> = r.results[0]
        .rows
        .iter()
        .filter(|x| {
            r.results.iter().all(|a| {
                a.rows
                    .iter()
                    .any(|y| y.block == x.block && !y.verdict.unwrap().good())
            })
        })
        .map(|x| x.block.to_string())
        .collect();
    assert!(!nowhere.is_empty());
    let flat = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let said = format!(
        "Not within 95 % of its best on any API: {} threads per block.",
        nowhere.join(", ")
    );
    assert!(flat.contains(&said), "{said}\n{s}");
    let rows: Vec<&str> = s
        .lines()
        .filter(|l| {
            l.split_whitespace()
                .next()
                .is_some_and(|w| w.parse::<u32>().is_ok())
        })
        .collect();
    assert_eq!(rows.len(), 13, "{s}");
    for l in rows {
        assert!(l.ends_with(" no"), "{l}\n{s}");
    }
}

/// A user's kernel run through several APIs names each API's source: the short report's
/// header said only the first API's ("source scale.comp (GLSL)") while OpenCL ran scale.cl.
#[test]
fn a_kernel_header_names_the_source_each_api_ran() {
    let mut r = h200();
    for x in &mut r.results {
        let (file, language) = match x.api.key() {
            "cuda" => ("scale.cu", "CUDA C++"),
            "vulkan" => ("scale.comp", "GLSL"),
            _ => ("scale.cl", "OpenCL C"),
        };
        x.program = Some(blocksweep_core::sweep::ProgramInfo {
            name: "scale".into(),
            spec: "scale/kernel.toml".into(),
            sizes: "n=1048576".into(),
            source: format!("{file} ({language})"),
            checked: vec!["y (exact)".into()],
            bytes_known: true,
            spec_hash: None,
            reference_files: Default::default(),
        });
    }
    let names: Vec<&str> = r.results.iter().map(|x| x.api.name()).collect();
    // 48 KiB a dispatch is said in KiB ("0.0 MiB" said nothing).
    for x in &mut r.results {
        x.frame.bytes_per_pass = 48 << 10;
    }
    let s = r.table(Layout::new(400));
    assert!(s.contains("48.0 KiB moved per dispatch"), "{s}");
    let each = format!(
        "sources scale.cu (CUDA C++) ({}); scale.comp (GLSL) ({}); scale.cl (OpenCL C) ({});",
        names[0], names[1], names[2]
    );
    assert!(s.contains(&each), "{s}");
}

/// Rows measured twice on a slowed GPU are said after the answer, by API and block, and keep
/// their clock in the CSV.
#[test]
fn rows_measured_on_a_slowed_gpu_are_said_and_their_clock_kept() {
    let mut r = h200();
    for row in &mut r.results[0].rows[..2] {
        row.sm_mhz = Some(900);
        row.slow_clock = true;
    }
    let s = r.table(Layout::new(400));
    let name = r.results[0].api.name();
    let said = format!("Measured twice below 75 % of the GPU's stated SM clock: {name} 16, 32");
    assert!(s.contains(&said), "{s}");
    let csv = r.csv();
    let header: Vec<&str> = csv.lines().next().unwrap().split(',').collect();
    let at = |c: &str| header.iter().position(|h| *h == c).unwrap();
    let first: Vec<&str> = csv.lines().nth(1).unwrap().split(',').collect();
    assert_eq!(
        (first[at("row_sm_mhz")], first[at("slow_clock")]),
        ("900", "true")
    );
}

/// A row whose output was found wrong after it ran (a user kernel's first size that the other
/// rows contradict) has no time and says WRONG with its note, not "skipped: not run".
#[test]
fn a_row_found_wrong_says_so_not_skipped() {
    let mut r = h200();
    let why = "wrong output: this first size's output differs from the other sizes'";
    let row = &mut r.results[1].rows[0];
    row.timing = None;
    row.gbps = None;
    row.verified = false;
    row.note = Some(why.into());
    r.results[1].fill_relative();
    r.refresh_answer();
    let s = r.table(Layout::new(100).verbose(true));
    assert!(s.contains("WRONG [1]"), "{s}");
    let note = format!(
        "[1] {} {}s: {why}",
        r.results[1].rows[0].block,
        r.results[1].api.words().thread
    );
    assert!(s.contains(&note), "{note}:\n{s}");
    assert!(!s.contains("skipped: not run"), "{s}");
}
