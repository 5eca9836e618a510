use super::*;
use blocksweep_core::backend::{DeviceIdentity, DeviceKind, KernelFacts, TimerInfo};
use blocksweep_core::frame::FrameInfo;
use blocksweep_core::sweep::{
    CopyCeiling, Discipline, ProgramInfo, Protocol, SweepRow, TimeStats, Timing,
};
use blocksweep_core::{Api, BlockSize, GridPolicy};

/// The CUDA column of the README's H200 run (GB/s per default size).
const H200: [(u32, f64); 13] = [
    (16, 1703.1),
    (32, 2609.5),
    (64, 3255.5),
    (96, 3249.9),
    (100, 2978.7),
    (128, 3333.2),
    (160, 3178.4),
    (192, 3304.5),
    (256, 3285.4),
    (384, 3235.7),
    (512, 3296.4),
    (768, 2875.2),
    (1024, 3288.8),
];
const BYTES: u64 = 3840 * 2160 * 16;

pub(super) fn api(key: &str) -> Api {
    blocksweep_apis::all()
        .iter()
        .map(|d| d.api())
        .find(|a| a.key() == key)
        .unwrap()
}

pub(super) fn timing(ms: f64, cv: f64) -> Timing {
    Timing {
        discipline: Discipline::Batch,
        reps: 10,
        batch_ms: Some(ms * 10.0),
        samples_ms: vec![ms; 10],
        stats: TimeStats {
            mean: ms,
            sample_mean: ms,
            min: ms * (1.0 - cv),
            median: ms,
            max: ms * (1.0 + cv),
            sd: ms * cv,
            samples: 10,
        },
        noise: None,
        clock: None,
        flush_bytes: None,
    }
}

/// One API's result: the H200 figures times `scale`, every row's spread `cv`.
pub(super) fn result(key: &str, device: &str, scale: f64, cv: f64) -> SweepResult {
    let api = api(key);
    let rows = H200
        .iter()
        .map(|&(t, gbps)| {
            let gbps = gbps * scale;
            SweepRow {
                block: BlockSize::linear(t),
                threads: t as u64,
                warps: None,
                idle_lanes: None,
                blocks_per_mp: None,
                warps_per_mp: None,
                occupancy: None,
                grid: 264,
                timing: Some(timing(BYTES as f64 / gbps / 1e6, cv)),
                gbps: Some(gbps),
                of_best: None,
                ties_best: false,
                verdict: None,
                of_copy: None,
                verified: true,
                skipped: None,
                note: None,
                policy: None,
                sm_mhz: None,
                slow_clock: false,
            }
        })
        .collect();
    SweepResult {
        api,
        device: DeviceIdentity {
            api,
            index: 0,
            name: device.into(),
            vendor: "NVIDIA".into(),
            driver_version: "580".into(),
            api_version: "1".into(),
            platform: String::new(),
            kind: DeviceKind::Gpu,
            uuid: None,
            pci_bus_id: None,
        },
        limits: Default::default(),
        kernel: KernelFacts::default(),
        timer: TimerInfo {
            method: "events".into(),
            resolution_ns: 500.0,
        },
        frame: FrameInfo {
            width: 3840,
            height: 2160,
            pixels: 3840 * 2160,
            seed: 42,
            bytes_per_pass: BYTES,
        },
        policy: GridPolicy::Wave,
        grid_source: String::new(),
        protocol: Protocol::default(),
        rows,
        suggestion: None,
        copy: Some(CopyCeiling {
            method: "copy".into(),
            bytes: BYTES / 2,
            timing: timing(0.04, 0.01),
            gbps: 3289.3 * scale,
        }),
        error: None,
        program: None,
        clocks: None,
        clocks_moved: None,
    }
}

pub(super) fn report(results: Vec<SweepResult>) -> Report {
    let mut r = Report::new("blocksweep test", "2026-11-30T00:00:00Z");
    r.results = results;
    r
}

pub(super) fn h200() -> Report {
    report(vec![
        result("cuda", "NVIDIA H200", 1.0, 0.02),
        result("vulkan", "NVIDIA H200", 1.03, 0.02),
        result("opencl", "NVIDIA H200", 1.01, 0.3),
    ])
}

pub(super) fn attr(n: roxmltree::Node, name: &str) -> f64 {
    n.attribute(name).unwrap().parse().unwrap()
}

#[test]
fn every_size_is_labelled_and_the_legend_is_right_of_the_data() {
    let svg = render_svg(&h200()).unwrap();
    let doc = roxmltree::Document::parse(&svg).expect("the SVG is well-formed XML");
    let by_id = |id: &str| {
        doc.descendants()
            .find(|n| n.attribute("id") == Some(id))
            .unwrap()
    };
    let class = |c: &'static str| {
        doc.descendants()
            .filter(move |n| n.attribute("class") == Some(c))
    };
    let labels: Vec<&str> = class("x-label").map(|n| n.text().unwrap()).collect();
    let sizes: Vec<String> = H200.iter().map(|(t, _)| t.to_string()).collect();
    assert_eq!(labels, sizes, "one x label per measured size, in order");
    assert_eq!(class("point").count(), 39);
    assert_eq!(class("whisker").count(), 39);
    let plot = by_id("plot-area");
    let plot_right = attr(plot, "x") + attr(plot, "width");
    let legend_box = by_id("legend").first_element_child().unwrap();
    assert!(
        attr(legend_box, "x") >= plot_right + 20.0,
        "the legend is outside the plot"
    );
    let svg_width = attr(doc.root_element(), "width");
    assert!(attr(legend_box, "x") + attr(legend_box, "width") <= svg_width);
    // One slot per size: the labels in one row, evenly spaced, 96 and 100 as far apart as
    // 512 and 768.
    let at = |t: &str, a: &str| {
        class("x-label")
            .find(|n| n.text() == Some(t))
            .map(|n| attr(n, a))
            .unwrap()
    };
    assert_eq!(at("16", "y"), at("1024", "y"));
    assert_eq!(at("96", "y"), at("100", "y"));
    let gap = |a: &str, b: &str| at(b, "x") - at(a, "x");
    assert!((gap("96", "100") - gap("512", "768")).abs() < 0.2);
    assert!(gap("96", "100") > 50.0, "{}", gap("96", "100"));
}

#[test]
fn the_title_names_each_device_when_they_differ() {
    let same = title(&h200(), Quantity::Gbps);
    assert_eq!(same[1], "CUDA, Vulkan and OpenCL on NVIDIA H200");
    let mixed = report(vec![
        result("vulkan", "llvmpipe (LLVM 15.0.6, 256 bits)", 0.001, 0.05),
        result("opencl", "pthread-haswell-AMD EPYC", 0.002, 0.05),
    ]);
    assert_eq!(
        title(&mixed, Quantity::Gbps)[1],
        "Vulkan on llvmpipe (LLVM 15.0.6, 256 bits); OpenCL on pthread-haswell-AMD EPYC"
    );
    assert!(title(&mixed, Quantity::Gbps)[0].contains("3840x2160"));
}

#[test]
fn whiskers_are_the_tables_spread_and_long_ones_are_cut_with_an_arrow() {
    let r = result("opencl", "CPU", 0.001, 0.3);
    let p = point(Quantity::Gbps, &r, &r.rows[0]).unwrap();
    let (lo, hi) = p.whisker.unwrap();
    assert!((lo - p.y * 0.7).abs() < 1e-9 && (hi - p.y * 1.3).abs() < 1e-9);
    assert!(p.tip.contains("±30.0%"), "{}", p.tip);
    // A spread of 300 %: the axis grows by a fifth at most, and the whisker ends in an arrow.
    let wild = report(vec![result("opencl", "CPU", 1.0, 3.0)]);
    let chart = sweep_chart(&wild).unwrap();
    let top = 3333.2 * 1.2 * 1.02;
    assert!(chart.y.hi <= top + 1e-6, "{} > {top}", chart.y.hi);
    let svg = chart.to_svg();
    let arrows = svg
        .lines()
        .filter(|l| l.contains(r#"class="whisker""#) && l.contains('L'))
        .count();
    assert_eq!(
        arrows, 13,
        "every whisker past the top ends in an arrowhead"
    );
}

#[test]
fn nothing_ran_is_an_error() {
    let mut r = result("cuda", "NVIDIA H200", 1.0, 0.0);
    for row in &mut r.rows {
        row.gbps = None;
        row.timing = None;
        row.skipped = Some("limit".into());
    }
    let e = render_svg(&report(vec![r])).unwrap_err();
    assert!(e.to_string().contains("no row ran"));
}

pub(super) fn svg_doc(svg: &str) -> roxmltree::Document<'_> {
    roxmltree::Document::parse(svg).expect("the SVG is well-formed XML")
}

pub(super) fn count(doc: &roxmltree::Document, class: &str) -> usize {
    doc.descendants()
        .filter(|n| n.attribute("class") == Some(class))
        .count()
}

fn data_max(chart: &Chart) -> f64 {
    chart
        .series
        .iter()
        .flat_map(|s| &s.points)
        .map(|p| p.y)
        .fold(0.0, f64::max)
}

/// Vulkan and OpenCL on CPU drivers: a few GB/s, and a memcpy ceiling 15 times higher.
fn cpu() -> Report {
    let mut results = vec![
        result("vulkan", "llvmpipe", 0.0018, 0.05),
        result("opencl", "pthread", 0.002, 0.05),
    ];
    for (r, copy) in results.iter_mut().zip([91.5, 95.8]) {
        r.copy.as_mut().unwrap().gbps = copy;
    }
    report(results)
}

#[test]
fn a_copy_ceiling_far_above_the_data_is_a_label_and_the_axis_fits_the_data() {
    let chart = sweep_chart(&cpu()).unwrap();
    let top = data_max(&chart);
    assert!(
        chart.y.hi >= top && chart.y.hi <= top * 1.25,
        "y axis up to {} for data up to {top}",
        chart.y.hi
    );
    let svg = chart.to_svg();
    let doc = svg_doc(&svg);
    assert_eq!(count(&doc, "guide-line"), 0, "no line above the axis");
    let labels: Vec<&str> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("off-scale"))
        .map(|n| n.text().unwrap())
        .collect();
    assert_eq!(
        labels,
        [
            "Vulkan device-to-device copy: 91.5 GB/s (off scale ↑)",
            "OpenCL device-to-device copy: 95.8 GB/s (off scale ↑)"
        ]
    );
    // The ≥ 95 % bands: 5 % of the best, which is most of the axis, so a band is tall.
    for band in doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("band"))
    {
        assert!(
            attr(band, "height") >= 10.0,
            "a band {} px tall",
            attr(band, "height")
        );
    }
}

#[test]
fn a_copy_ceiling_just_above_the_data_is_a_line_within_the_axis() {
    // The synthetic H200 run: ceilings at the data's height.
    let chart = sweep_chart(&h200()).unwrap();
    let svg = chart.to_svg();
    let doc = svg_doc(&svg);
    assert_eq!(count(&doc, "guide-line"), 3);
    assert_eq!(count(&doc, "off-scale"), 0);
    // A ceiling 20 % above the data stretches the axis to show it.
    let mut above = h200();
    for r in &mut above.results {
        r.copy.as_mut().unwrap().gbps = 3333.2 * 1.03 * 1.2 * 1.08;
    }
    let chart = sweep_chart(&above).unwrap();
    let ceiling = above.results[0].copy.as_ref().unwrap().gbps;
    assert!(chart.y.hi > ceiling && chart.y.hi < ceiling * 1.1);
    assert_eq!(count(&svg_doc(&chart.to_svg()), "guide-line"), 3);
}

#[test]
fn the_committed_h200_run_keeps_its_copy_lines_on_the_axis() {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../docs/results/h200-2026-11-30-d/core/h200-2026-11-30.json"
    );
    let text = std::fs::read_to_string(path).unwrap();
    // Known before the file is read, or reading it registers each API under its bare key.
    for d in blocksweep_apis::all() {
        Api::register(d.api());
    }
    let runs = blocksweep_core::report::parse_reports(&text).unwrap();
    let chart = sweep_chart(&runs[0]).unwrap();
    let ceilings: Vec<f64> = runs[0]
        .results
        .iter()
        .map(|r| r.copy.as_ref().unwrap().gbps)
        .collect();
    let highest = ceilings.iter().copied().fold(data_max(&chart), f64::max);
    assert!(chart.y.hi >= highest && chart.y.hi <= highest * 1.1);
    let svg = chart.to_svg();
    let doc = svg_doc(&svg);
    assert_eq!(count(&doc, "guide-line"), ceilings.len());
    assert_eq!(count(&doc, "off-scale"), 0);
}

#[test]
fn a_kernel_without_bytes_is_plotted_in_ms() {
    let mut r = result("opencl", "pthread", 1.0, 0.05);
    for row in &mut r.rows {
        row.gbps = None;
    }
    r.copy = None;
    r.frame.bytes_per_pass = 0;
    r.program = Some(ProgramInfo {
        name: "saxpy".into(),
        spec: "saxpy/kernel.toml".into(),
        sizes: "n=65536".into(),
        source: "saxpy.cl (OpenCL C), entry saxpy".into(),
        checked: vec!["y (exact)".into()],
        bytes_known: false,
        reference_files: Default::default(),
        spec_hash: None,
    });
    let chart = sweep_chart(&report(vec![r.clone()])).unwrap();
    assert_eq!(
        chart.title[0],
        "saxpy sweep: ms against block size, n=65536"
    );
    assert_eq!(chart.y.title, "ms per dispatch (mean)");
    let slowest = r
        .rows
        .iter()
        .filter_map(|row| row.mean_ms())
        .fold(0.0, f64::max);
    assert!((data_max(&chart) - slowest).abs() < 1e-12);
    assert!(chart.y.hi >= slowest && chart.y.hi <= slowest * 1.25);
    // Within 95 % of the best time: from it up to best / 0.95.
    let best = r.best().unwrap().mean_ms().unwrap();
    let band = chart
        .guides
        .iter()
        .find_map(|g| match g.kind {
            GuideKind::Band { lo, hi } => Some((lo, hi)),
            GuideKind::Line { .. } => None,
        })
        .unwrap();
    assert_eq!(band, (best, best / blocksweep_core::report::GOOD_FRACTION));
    assert!(chart.series[0].points[0].tip.ends_with(" ms, spread ±5.0%"));
}

#[test]
fn the_gbps_axis_says_the_bytes_counted() {
    let chart = sweep_chart(&h200()).unwrap();
    assert_eq!(chart.y.title, "GB/s (16 bytes per pixel / mean time)");
}
