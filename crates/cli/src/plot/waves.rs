//! `blocksweep tail --plot FILE.svg`: GB/s against waves, one line per API and kernel (colour
//! per API, marker per kernel: circles for the seed's grid-stride kernel, squares for one pixel
//! per thread), with the sawtooth of the model, waves / ceil(waves) times the best grid-stride
//! GB/s, drawn in grey for reference. Whiskers: ±1 sd of one dispatch, as on the sweep's plot.
//! Built on the sweep plot's chart (`chart.rs`).

use blocksweep_core::lab::report::WaveReport;
use blocksweep_core::lab::waves::{slots_busy, Series as Kernel, WaveRow};

use crate::plot::chart::{self, Axis, Chart, Colour, Marker, Point, Scale, Series, Tick};

/// The sweep plot's colours (ColorBrewer Dark2), one per API in the order they ran.
const COLOURS: [Colour; 4] = [
    Colour(0x1b, 0x9e, 0x77),
    Colour(0xd9, 0x5f, 0x02),
    Colour(0x75, 0x70, 0xb3),
    Colour(0xe7, 0x29, 0x8a),
];

const MODEL: Colour = Colour(0x99, 0x99, 0x99);

/// The SVG text; an error when no row ran.
pub fn render_svg(report: &WaveReport) -> anyhow::Result<String> {
    Ok(waves_chart(report)?.to_svg())
}

fn point(api: &str, kernel: Kernel, row: &WaveRow) -> Option<Point> {
    let gbps = row.gbps?;
    let cv = row.timing.as_ref().map_or(0.0, |t| t.stats.cv());
    Some(Point {
        x: row.point.waves,
        y: gbps,
        whisker: Some(((gbps * (1.0 - cv)).max(0.0), gbps * (1.0 + cv))),
        tip: format!(
            "{api}, {}: grid {} ({:.3} waves), {gbps:.1} GB/s, spread ±{:.1}%",
            kernel.key(),
            row.point.grid,
            row.point.waves,
            cv * 100.0
        ),
    })
}

/// GB/s against waves for every API and both kernels of the report.
pub fn waves_chart(report: &WaveReport) -> anyhow::Result<Chart> {
    let mut series = Vec::new();
    let (mut xmax, mut ymax, mut best_grid_stride): (f64, f64, f64) = (0.0, 0.0, 0.0);
    let mut model_x: Vec<f64> = Vec::new();
    for (i, r) in report.results.iter().enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        for (k, kernel) in Kernel::ALL.into_iter().enumerate() {
            let points: Vec<Point> = r
                .rows
                .iter()
                .filter(|row| row.point.series == kernel)
                .filter_map(|row| point(r.api.name(), kernel, row))
                .collect();
            if points.is_empty() {
                continue;
            }
            for p in &points {
                xmax = xmax.max(p.x);
                ymax = ymax.max(p.whisker.map_or(p.y, |w| w.1.min(p.y * 1.5)));
                if kernel == Kernel::GridStride {
                    best_grid_stride = best_grid_stride.max(p.y);
                    model_x.push(p.x);
                }
            }
            series.push(Series {
                name: format!(
                    "{}, {}",
                    r.api,
                    match kernel {
                        Kernel::GridStride => "grid-stride",
                        Kernel::OnePerThread => "one pixel per thread",
                    }
                ),
                colour,
                marker: [Marker::Circle, Marker::Square][k],
                points,
            });
        }
    }
    if series.is_empty() || ymax <= 0.0 {
        anyhow::bail!("nothing to plot: no grid ran");
    }
    if best_grid_stride > 0.0 {
        model_x.sort_by(f64::total_cmp);
        model_x.dedup();
        series.push(Series {
            name: "model: best grid-stride GB/s x waves / ceil(waves)".into(),
            colour: MODEL,
            marker: Marker::Diamond,
            points: model_x
                .iter()
                .map(|&x| Point {
                    x,
                    y: best_grid_stride * slots_busy(x),
                    whisker: None,
                    tip: format!("model at {x:.3} waves: slots busy {:.2}", slots_busy(x)),
                })
                .collect(),
        });
    }
    let xhi = (xmax * 2.0).ceil() / 2.0 + 0.25;
    let x = Axis {
        title: "grid in waves (one wave: resident blocks per SM x SMs)".into(),
        scale: Scale::Linear,
        lo: 0.0,
        hi: xhi,
        ticks: (0..)
            .map(|k| k as f64 * 0.5)
            .take_while(|&w| w <= xhi)
            .map(|at| Tick {
                at,
                label: chart::tick_label(at, 0.5),
            })
            .collect(),
    };
    let yhi = ymax * 1.08;
    let y = Axis::gbps(yhi);
    Ok(Chart {
        title: title(report),
        x,
        y,
        series,
        guides: Vec::new(),
        notes: vec![
            "whiskers: ±1 sd of one dispatch".into(),
            "circles: grid-stride, fixed frame".into(),
            "squares: one pixel per thread, frame = grid x block".into(),
        ],
    })
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
            }),
            gbps: Some(gbps),
            of_best: None,
            verified: true,
            skipped: None,
        }
    }

    #[test]
    fn one_line_per_api_and_kernel_and_the_model() {
        for d in blocksweep_drivers::all() {
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
                driver: "d".into(),
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
    }
}
