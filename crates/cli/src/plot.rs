//! `--plot FILE.svg`: GB/s against block size on a log2 axis, one line per API, with
//!
//! - a label under every block size that ran (rows of labels where sizes are close: 96 and
//!   100 sit 6 px apart),
//! - a whisker on every point: GB/s × (1 ± sd / mean) of one dispatch, the table's "spread",
//! - each API's device-to-device copy ceiling as a dashed line and its ≥ 95 %-of-best band,
//! - the legend to the right of the plotting area, where it covers nothing,
//! - a title naming each API's device when they differ.
//!
//! This file turns a report into a [`chart::Chart`]; `chart.rs` draws any chart as SVG. A new
//! kind of plot is a new function here that builds a `Chart`.

pub(crate) mod chart;
pub mod waves;

use blocksweep_core::report::Report;
use blocksweep_core::sweep::SweepResult;

use chart::{Axis, Chart, Colour, Guide, GuideKind, Marker, Point, Scale, Series, Tick};

/// Colour-blind-safe (ColorBrewer Dark2), one per API in the order they ran.
const COLOURS: [Colour; 4] = [
    Colour(0x1b, 0x9e, 0x77),
    Colour(0xd9, 0x5f, 0x02),
    Colour(0x75, 0x70, 0xb3),
    Colour(0xe7, 0x29, 0x8a),
];

/// The SVG text; an error when no row ran.
pub fn render_svg(report: &Report) -> anyhow::Result<String> {
    Ok(sweep_chart(report)?.to_svg())
}

/// The row's GB/s with its whisker.
fn point(r: &SweepResult, row: &blocksweep_core::sweep::SweepRow) -> Option<Point> {
    let gbps = row.gbps?;
    let whisker = row.stats().map(|s| {
        let cv = s.cv();
        ((gbps * (1.0 - cv)).max(0.0), gbps * (1.0 + cv))
    });
    let spread = row
        .stats()
        .map(|s| format!(", spread ±{:.1}%", s.cv() * 100.0))
        .unwrap_or_default();
    Some(Point {
        x: row.threads as f64,
        y: gbps,
        whisker,
        tip: format!(
            "{}: block {} (grid {}), {gbps:.1} GB/s{spread}",
            r.api, row.block, row.grid
        ),
    })
}

/// GB/s against threads per block for every API of the report.
pub fn sweep_chart(report: &Report) -> anyhow::Result<Chart> {
    let mut series = Vec::new();
    let mut guides = Vec::new();
    // The points and copy lines set the y range; whiskers may stretch it by half again, and
    // the rest of a longer one is an arrowhead.
    let mut ymax: f64 = 0.0;
    let mut whisker_max: f64 = 0.0;
    let mut sizes: Vec<u64> = Vec::new();
    for (i, r) in report.results.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        let points: Vec<Point> = r.rows.iter().filter_map(|row| point(r, row)).collect();
        if points.is_empty() {
            continue;
        }
        for p in &points {
            ymax = ymax.max(p.y);
            whisker_max = whisker_max.max(p.whisker.map_or(p.y, |w| w.1));
            sizes.push(p.x as u64);
        }
        let index = series.len();
        series.push(Series {
            name: format!("{} kernel", r.api),
            colour,
            marker: Marker::ALL[i % Marker::ALL.len()],
            points,
        });
        if let Some(c) = &r.copy {
            ymax = ymax.max(c.gbps);
            guides.push(Guide {
                kind: GuideKind::Line { y: c.gbps },
                colour,
                label: format!("{} device-to-device copy ({:.1} GB/s)", r.api, c.gbps),
                series: Some(index),
            });
        }
        if let Some(best) = r.best().and_then(|b| b.gbps) {
            guides.push(Guide {
                kind: GuideKind::Band {
                    lo: best * 0.95,
                    hi: best,
                },
                colour,
                label: format!("{} >= 95% of best", r.api),
                series: Some(index),
            });
        }
    }
    if series.is_empty() || ymax <= 0.0 {
        anyhow::bail!("nothing to plot: no row ran");
    }
    sizes.sort_unstable();
    sizes.dedup();
    let (xmin, xmax) = (sizes[0] as f64, sizes[sizes.len() - 1] as f64);
    let yhi = (ymax * 1.08).max(whisker_max.min(ymax * 1.5) * 1.02);
    let x = Axis {
        title: "threads per block (log2 scale)".into(),
        scale: Scale::Log2,
        lo: (xmin / 1.25).max(0.5),
        hi: xmax * 1.25,
        ticks: sizes
            .iter()
            .map(|&n| Tick {
                at: n as f64,
                label: n.to_string(),
            })
            .collect(),
    };
    let y = Axis::gbps(yhi);
    Ok(Chart {
        title: title(report),
        x,
        y,
        series,
        guides,
        notes: vec!["whiskers: ±1 sd of one dispatch".into()],
    })
}

/// "Grayscale sweep, 3840x2160 frame" and where it ran: "CUDA, Vulkan and OpenCL on NVIDIA
/// H200", or each API's device when they differ.
fn title(report: &Report) -> Vec<String> {
    let Some(first) = report.results.first() else {
        return vec!["Grayscale sweep".into()];
    };
    let mut lines = vec![format!(
        "Grayscale sweep: GB/s against block size, {}x{} frame",
        first.frame.width, first.frame.height
    )];
    let same = report
        .results
        .iter()
        .all(|r| r.device.name == first.device.name);
    let names: Vec<String> = report.results.iter().map(|r| r.api.to_string()).collect();
    lines.push(if same {
        format!("{} on {}", and_list(&names), first.device.name)
    } else {
        report
            .results
            .iter()
            .map(|r| format!("{} on {}", r.api, r.device.name))
            .collect::<Vec<_>>()
            .join("; ")
    });
    lines
}

/// "A", "A and B", "A, B and C".
fn and_list(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [init @ .., last] => format!("{} and {last}", init.join(", ")),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use blocksweep_core::backend::{DeviceIdentity, DeviceKind, KernelFacts, TimerInfo};
    use blocksweep_core::frame::FrameInfo;
    use blocksweep_core::sweep::{CopyCeiling, Discipline, Protocol, SweepRow, TimeStats, Timing};
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

    fn api(key: &str) -> Api {
        blocksweep_drivers::all()
            .iter()
            .map(|d| d.api())
            .find(|a| a.key() == key)
            .unwrap()
    }

    fn timing(ms: f64, cv: f64) -> Timing {
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
        }
    }

    /// One API's result: the H200 figures times `scale`, every row's spread `cv`.
    fn result(key: &str, device: &str, scale: f64, cv: f64) -> SweepResult {
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
                driver: "580".into(),
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
        }
    }

    fn report(results: Vec<SweepResult>) -> Report {
        let mut r = Report::new("blocksweep test", "2026-11-30T00:00:00Z");
        r.results = results;
        r
    }

    fn h200() -> Report {
        report(vec![
            result("cuda", "NVIDIA H200", 1.0, 0.02),
            result("vulkan", "NVIDIA H200", 1.03, 0.02),
            result("opencl", "NVIDIA H200", 1.01, 0.3),
        ])
    }

    fn attr(n: roxmltree::Node, name: &str) -> f64 {
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
        // 96 and 100 are a few pixels apart: not on the same row of labels.
        let y_of = |t: &str| {
            class("x-label")
                .find(|n| n.text() == Some(t))
                .map(|n| attr(n, "y"))
                .unwrap()
        };
        assert_ne!(y_of("96"), y_of("100"));
        assert_eq!(y_of("16"), y_of("1024"));
    }

    #[test]
    fn the_title_names_each_device_when_they_differ() {
        let same = title(&h200());
        assert_eq!(same[1], "CUDA, Vulkan and OpenCL on NVIDIA H200");
        let mixed = report(vec![
            result("vulkan", "llvmpipe (LLVM 15.0.6, 256 bits)", 0.001, 0.05),
            result("opencl", "pthread-haswell-AMD EPYC", 0.002, 0.05),
        ]);
        assert_eq!(
            title(&mixed)[1],
            "Vulkan on llvmpipe (LLVM 15.0.6, 256 bits); OpenCL on pthread-haswell-AMD EPYC"
        );
        assert!(title(&mixed)[0].contains("3840x2160"));
    }

    #[test]
    fn whiskers_are_the_tables_spread_and_long_ones_are_cut_with_an_arrow() {
        let r = result("opencl", "CPU", 0.001, 0.3);
        let p = point(&r, &r.rows[0]).unwrap();
        let (lo, hi) = p.whisker.unwrap();
        assert!((lo - p.y * 0.7).abs() < 1e-9 && (hi - p.y * 1.3).abs() < 1e-9);
        assert!(p.tip.contains("±30.0%"), "{}", p.tip);
        // A spread of 300 %: the axis grows by half at most, and the whisker ends in an arrow.
        let wild = report(vec![result("opencl", "CPU", 1.0, 3.0)]);
        let chart = sweep_chart(&wild).unwrap();
        let top = 3333.2 * 1.5 * 1.02;
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

    #[test]
    fn lists_read_as_words() {
        let s = |v: &[&str]| and_list(&v.iter().map(|x| x.to_string()).collect::<Vec<_>>());
        assert_eq!(s(&["CUDA"]), "CUDA");
        assert_eq!(s(&["CUDA", "OpenCL"]), "CUDA and OpenCL");
        assert_eq!(s(&["CUDA", "Vulkan", "OpenCL"]), "CUDA, Vulkan and OpenCL");
    }
}
