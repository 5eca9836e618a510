//! The H200 run of 2026-11-30 rendered in each API's words, no GPU needed: its table and its
//! limits fit 100 columns, name each API's concepts in that API's words, and a wide layout
//! shows every column.

use crate::support::{assert_fits, line_starting};
use blocksweep_core::report::{parse_report, Report};
use blocksweep_render::layout::Layout;
use blocksweep_render::Render;

const H200: &str = include_str!("../../../core/src/report/testdata/h200-2026-11-30-v2.json");

fn h200() -> Report {
    for d in blocksweep_apis::all() {
        blocksweep_core::Api::register(d.api());
    }
    let mut r = parse_report(H200).expect("the fixture parses");
    r.refresh_answer();
    r
}

/// Prints `text` when SHOW is set, to look at.
fn show(text: &str) {
    if std::env::var_os("SHOW").is_some() {
        println!("{text}");
    }
}

#[test]
fn the_h200_run_reads_in_each_apis_words_within_100_columns() {
    let r = h200();
    let s = r.table(Layout::new(100).verbose(true));
    show(&s);
    assert_fits(&s, 100, "H200 table");
    assert!(
        s.starts_with(
            "Answer\n- Within 95 % of each API's best on all three APIs (CUDA, Vulkan, OpenCL):"
        ),
        "{s}"
    );
    let head = |api: &str| {
        let at = s.find(&format!("\n{api}: NVIDIA H200")).unwrap();
        s[at..].to_string()
    };
    for (api, size, warps, per_mp) in [
        ("CUDA", "thr/blk", "warps", "blk/SM"),
        ("Vulkan", "inv/wg", "subgroups", "wg/SM"),
        ("OpenCL", "wi/wg", "sub-groups", "wg/CU"),
    ] {
        let header = line_starting(&head(api), size).to_string();
        assert!(
            header.contains(warps) && header.contains(per_mp),
            "{api}: {header}"
        );
    }
    // Long per-row notes are footnotes, not a 100-character cell.
    assert!(s.contains("ok [1]"), "{s}");
    assert!(s.contains("[1] 384: ran although 384 threads > CL_KERNEL_WORK_GROUP_SIZE"));
    // The merged table: one device, neutral words mapped in the legend.
    assert!(s.contains("All APIs on one device\n"), "{s}");
    assert!(s.contains("OpenCL/CUDA"), "{s}");
    assert!(
        s.contains("CUDA thread block of threads, Vulkan workgroup of invocations, OpenCL"),
        "{s}"
    );
    assert!(!s.contains("own device"), "{s}");
    // A GPU run says nothing about CPUs.
    assert!(!s.contains("What carries over"), "{s}");
    // Wide: every column, nothing left out.
    let wide = r.table(Layout::WIDE.verbose(true));
    assert!(wide.contains("sg/SM"), "{wide}");
    assert!(!wide.contains("Left out"), "{wide}");
    // Markdown: no cell as long as a sentence.
    let md = r.markdown(Layout::new(100).verbose(true));
    for line in md.lines().filter(|l| l.starts_with('|')) {
        assert!(line.chars().count() <= 160, "{line}");
    }
    assert!(md.contains("## All APIs on one device"), "{md}");
}

#[test]
fn the_h200_limits_fit_100_columns_and_mark_what_the_apis_disagree_on() {
    use blocksweep_core::report::limits::{ApiLimits, LimitsGroup, LimitsReport};
    let r = h200();
    let views: Vec<ApiLimits> = r
        .results
        .iter()
        .map(|x| ApiLimits {
            device: x.device.clone(),
            limits: x.limits.clone(),
            kernel: x.kernel.clone(),
            timer: x.timer.clone(),
        })
        .collect();
    let report = LimitsReport {
        groups: vec![LimitsGroup {
            heading: None,
            one_physical_device: true,
            views,
        }],
    };
    let s = report.table(Layout::new(100));
    show(&s);
    assert_fits(&s, 100, "H200 limits");
    // The kernel's own limit: 1024 in CUDA, 256 in NVIDIA's OpenCL for the same code.
    assert!(s.contains("kernel: max block size  ≠"), "{s}");
    assert!(
        s.contains("CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN"),
        "no name is cut: {s}"
    );
}

#[test]
fn wide_shows_every_column_on_one_line_per_row() {
    let r = h200();
    // BLOCKSWEEP_WIDE and COLUMNS=1000 both lift the limit (the CLI maps them to this).
    let s = r.table(Layout::new(1000).verbose(true));
    let header = s
        .lines()
        .find(|l| l.contains("inv/wg") && l.contains("check"))
        .unwrap();
    assert!(
        header.contains("sg/SM") && header.contains("% copy"),
        "{header}"
    );
    assert!(!s.contains("Left out"), "{s}");
    let narrow = r.table(Layout::new(80).verbose(true));
    assert_fits(&narrow, 80, "H200 at 80 columns");
    assert!(narrow.contains("Left out to fit 80 columns"), "{narrow}");
}
