//! `blocksweep tail --plot FILE.svg`: GB/s against waves, one line per API and kernel (colour
//! per API key, the same as on the sweep's plot; marker per kernel: circles for the sweep's grid-stride kernel, squares for one pixel
//! per thread), with the sawtooth of the model, waves / ceil(waves) times the best grid-stride
//! GB/s, drawn in grey for reference. Whiskers: ±1 sd of one dispatch, as on the sweep's plot.
//! Drawn by `chart.rs`, as the sweep's plot is.

use blocksweep_core::lab::report::WaveReport;
use blocksweep_core::lab::waves::{slots_busy, WaveKernel as Kernel, WaveRow};

use super::chart::{self, Axis, Chart, Colour, Glyph, Marker, Note, Point, Scale, Series, Tick};
use super::{api_colour, whisker, whiskers_note};

const MODEL: Colour = Colour(0x99, 0x99, 0x99);

const Y_TITLE: &str = "GB/s (16 bytes per pixel / mean time)";

/// The SVG text; an error when no row ran.
pub fn render_svg(report: &WaveReport) -> anyhow::Result<String> {
    Ok(waves_chart(report)?.to_svg())
}

/// Each kernel's marker, the same on every API.
pub(super) fn marker(kernel: Kernel) -> Marker {
    match kernel {
        Kernel::GridStride => Marker::Circle,
        Kernel::OnePerThread => Marker::Square,
    }
}

fn point(api: &str, kernel: Kernel, row: &WaveRow) -> Option<Point> {
    let gbps = row.gbps?;
    let cv = row.timing.as_ref().map_or(0.0, |t| t.stats.cv());
    Some(Point {
        x: row.point.waves,
        y: gbps,
        whisker: Some(whisker(gbps, cv)),
        tip: format!(
            "{api}, {}: grid {} ({:.3} waves), {gbps:.1} GB/s, spread ±{:.1}%",
            kernel.key(),
            row.point.grid,
            row.point.waves,
            cv * 100.0
        ),
    })
}

/// GB/s against waves for every API and both kernels of the report, and the model.
pub fn waves_chart(report: &WaveReport) -> anyhow::Result<Chart> {
    let mut series = measured(report);
    let top = chart::data_top(series.iter().flat_map(|s| &s.points));
    if series.is_empty() || top <= 0.0 {
        anyhow::bail!("nothing to plot: no grid ran");
    }
    let xmax = series
        .iter()
        .flat_map(|s| &s.points)
        .map(|p| p.x)
        .fold(0.0, f64::max);
    series.extend(model(report));
    Ok(Chart {
        title: title(report),
        x: waves_axis(xmax),
        y: Axis::from_zero(Y_TITLE, top),
        series,
        guides: Vec::new(),
        notes: vec![
            whiskers_note(),
            Note {
                glyph: Glyph::Marker(marker(Kernel::GridStride)),
                text: "circles: grid-stride, fixed frame".into(),
            },
            Note {
                glyph: Glyph::Marker(marker(Kernel::OnePerThread)),
                text: "squares: one pixel per thread, frame = grid x block".into(),
            },
        ],
        strip: None,
    })
}

/// One series per API and kernel that ran: colour per API, marker per kernel.
fn measured(report: &WaveReport) -> Vec<Series> {
    let mut series = Vec::new();
    for r in &report.results {
        for kernel in Kernel::ALL {
            let points: Vec<Point> = r
                .rows
                .iter()
                .filter(|row| row.point.series == kernel)
                .filter_map(|row| point(r.api.name(), kernel, row))
                .collect();
            if points.is_empty() {
                continue;
            }
            let name = match kernel {
                Kernel::GridStride => "grid-stride",
                Kernel::OnePerThread => "one pixel per thread",
            };
            series.push(Series {
                name: format!("{}, {name}", r.api),
                colour: api_colour(r.api.key()),
                marker: marker(kernel),
                points,
            });
        }
    }
    series
}

/// The sawtooth waves / ceil(waves) times the best grid-stride GB/s, at every grid-stride
/// grid that ran; `None` without one.
fn model(report: &WaveReport) -> Option<Series> {
    let grid_stride: Vec<(f64, f64)> = report
        .results
        .iter()
        .flat_map(|r| &r.rows)
        .filter(|row| row.point.series == Kernel::GridStride)
        .filter_map(|row| Some((row.point.waves, row.gbps?)))
        .collect();
    let best = grid_stride.iter().map(|p| p.1).fold(0.0, f64::max);
    if best <= 0.0 {
        return None;
    }
    let mut xs: Vec<f64> = grid_stride.iter().map(|p| p.0).collect();
    xs.sort_by(f64::total_cmp);
    xs.dedup();
    Some(Series {
        name: "model: best grid-stride GB/s x waves / ceil(waves)".into(),
        colour: MODEL,
        marker: Marker::Diamond,
        points: xs
            .iter()
            .map(|&x| Point {
                x,
                y: best * slots_busy(x),
                whisker: None,
                tip: format!("model at {x:.3} waves: slots busy {:.2}", slots_busy(x)),
            })
            .collect(),
    })
}

/// Waves from 0 past the largest grid, a labelled tick every half wave.
fn waves_axis(xmax: f64) -> Axis {
    let hi = (xmax * 2.0).ceil() / 2.0 + 0.25;
    Axis {
        title: "grid in waves (one wave: resident blocks per SM x SMs)".into(),
        scale: Scale::Linear,
        lo: 0.0,
        hi,
        ticks: (0..)
            .map(|k| k as f64 * 0.5)
            .take_while(|&w| w <= hi)
            .map(|at| Tick {
                at,
                label: chart::tick_label(at, 0.5),
            })
            .collect(),
    }
}

fn title(report: &WaveReport) -> Vec<String> {
    let Some(first) = report.results.first() else {
        return vec!["The tail effect".into()];
    };
    let waves: Vec<String> = report
        .results
        .iter()
        .map(|r| {
            format!(
                "{} on {} (wave {} blocks)",
                r.api, r.device.name, r.wave.blocks
            )
        })
        .collect();
    vec![
        format!(
            "The tail effect: GB/s against grid size in waves, block {}, {}x{} frame",
            report.block, first.frame.width, first.frame.height
        ),
        waves.join("; "),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use blocksweep_core::backend::{DeviceIdentity, DeviceKind};
    use blocksweep_core::frame::FrameInfo;
    use blocksweep_core::lab::waves::{Wave, WavePoint, WaveResult};
    use blocksweep_core::measure::{Discipline, Protocol, TimeStats, Timing};
    use blocksweep_core::{Api, BlockSize};

    fn row(series: Kernel, asked: u64, grid: u64, gbps: f64) -> WaveRow {
        let waves = grid as f64 / 100.0;
        WaveRow {
            point: WavePoint {
                series,
                asked,
                asked_last: None,
                grid,
                waves,
                width: 100,
                height: 100,
            },
            slots_busy: slots_busy(waves),
            timing: Some(Timing {
                discipline: Discipline::Batch,
                reps: 10,
                batch_ms: Some(1.0),
                samples_ms: vec![0.1; 10],
                stats: TimeStats::of(&[0.1, 0.1], None).unwrap(),
                noise: None,
                clock: None,
                flush_bytes: None,
            }),
            gbps: Some(gbps),
            of_best: None,
            verified: true,
            skipped: None,
        }
    }

    #[test]
    fn one_line_per_api_and_kernel_and_the_model() {
        for d in blocksweep_apis::all() {
            Api::register(d.api());
        }
        let api = Api::from_key("opencl").unwrap();
        let result = WaveResult {
            api,
            device: DeviceIdentity {
                api,
                index: 0,
                name: "test device".into(),
                vendor: "v".into(),
                driver_version: "d".into(),
                api_version: "1".into(),
                platform: String::new(),
                kind: DeviceKind::Gpu,
                uuid: None,
                pci_bus_id: None,
            },
            wave: Wave::new(BlockSize::linear(256), None, 100, DeviceKind::Gpu),
            frame: FrameInfo {
                width: 100,
                height: 100,
                pixels: 10_000,
                seed: 1,
                bytes_per_pass: 160_000,
            },
            rows: vec![
                row(Kernel::GridStride, 1000, 100, 1000.0),
                row(Kernel::GridStride, 1100, 110, 600.0),
                row(Kernel::OnePerThread, 1000, 100, 500.0),
            ],
            error: None,
        };
        let report = WaveReport {
            partial: Default::default(),
            tool: "t".into(),
            date: "d".into(),
            spec: "1..1.1".parse().unwrap(),
            block: BlockSize::linear(256),
            protocol: Protocol::default(),
            shared_wave: false,
            results: vec![result],
            failures: Vec::new(),
        };
        let c = waves_chart(&report).unwrap();
        assert_eq!(c.series.len(), 3);
        let model = &c.series[2];
        assert!((model.points[1].y - 1000.0 * 1.1 / 2.0).abs() < 1e-9);
        let svg = c.to_svg();
        assert!(svg.contains("The tail effect"));
        assert!(svg.contains("class=\"point\""));
        // Each legend line about a kernel's marker shows that marker.
        let doc = roxmltree::Document::parse(&svg).unwrap();
        let swatch = |text: &str| {
            let entry = doc
                .descendants()
                .filter(|n| n.attribute("class") == Some("legend-entry"))
                .find(|e| e.children().any(|c| c.text() == Some(text)))
                .unwrap_or_else(|| panic!("no legend entry {text:?}"));
            entry.first_element_child().unwrap().tag_name().name()
        };
        assert_eq!(swatch("circles: grid-stride, fixed frame"), "circle");
        assert_eq!(
            swatch("squares: one pixel per thread, frame = grid x block"),
            "rect"
        );
        assert_eq!(swatch("whiskers: ±1 sd of one dispatch"), "path");
        assert_eq!(c.series[0].marker, Marker::Circle);
        assert_eq!(c.series[1].marker, Marker::Square);
    }
}
