//! `--plot FILE.svg`: GB/s against block size on a log2 axis, one line per API, each API's
//! copy ceiling as a dashed line, and each API's >= 95 %-of-best band shaded.

use blocksweep_core::report::Report;
use plotters::prelude::*;

const COLOURS: [RGBColor; 3] = [
    RGBColor(0x1b, 0x9e, 0x77),
    RGBColor(0xd9, 0x5f, 0x02),
    RGBColor(0x75, 0x70, 0xb3),
];

/// The SVG text; an error when no row ran.
pub fn render_svg(report: &Report) -> anyhow::Result<String> {
    let mut svg = String::new();
    draw(report, SVGBackend::with_string(&mut svg, (960, 600)))?;
    Ok(svg)
}

fn draw(report: &Report, backend: SVGBackend<'_>) -> anyhow::Result<()> {
    let points: Vec<Vec<(f64, f64)>> = report
        .results
        .iter()
        .map(|r| {
            r.rows
                .iter()
                .filter_map(|x| Some((x.threads as f64, x.gbps?)))
                .collect()
        })
        .collect();
    let all = points.iter().flatten();
    let xmin = all.clone().map(|p| p.0).fold(f64::INFINITY, f64::min);
    let xmax = all.clone().map(|p| p.0).fold(0.0, f64::max);
    let copies = report
        .results
        .iter()
        .filter_map(|r| r.copy.as_ref().map(|c| c.gbps));
    let ymax = all.map(|p| p.1).chain(copies).fold(0.0, f64::max);
    if !xmin.is_finite() || ymax <= 0.0 {
        anyhow::bail!("nothing to plot: no row ran");
    }
    let title = format!(
        "Grayscale sweep on {} ({}x{})",
        report
            .results
            .first()
            .map(|r| r.device.name.as_str())
            .unwrap_or("?"),
        report.results.first().map(|r| r.frame.width).unwrap_or(0),
        report.results.first().map(|r| r.frame.height).unwrap_or(0)
    );
    let root = backend.into_drawing_area();
    root.fill(&WHITE)?;
    let x_range = ((xmin / 1.2).max(1.0)..xmax * 1.2).log_scale().base(2.0);
    let mut chart = ChartBuilder::on(&root)
        .caption(title, ("sans-serif", 22))
        .margin(16)
        .x_label_area_size(48)
        .y_label_area_size(64)
        .build_cartesian_2d(x_range, 0.0..ymax * 1.12)?;
    chart
        .configure_mesh()
        .x_desc("threads per block (log2 scale)")
        .y_desc("GB/s (16 bytes per pixel / mean time)")
        .x_label_formatter(&|v| format!("{}", v.round() as u64))
        .y_label_formatter(&|v| format!("{v:.0}"))
        .light_line_style(RGBColor(238, 238, 238))
        .draw()?;
    for (i, (r, pts)) in report.results.iter().zip(&points).enumerate() {
        let colour = COLOURS[i % COLOURS.len()];
        if let Some(best) = r.best().and_then(|b| b.gbps) {
            let band = [(xmin / 1.2, best * 0.95), (xmax * 1.2, best)];
            chart
                .draw_series(std::iter::once(Rectangle::new(
                    [(band[0].0.max(1.0), band[0].1), band[1]],
                    colour.mix(0.12).filled(),
                )))?
                .label(format!("{} >= 95% of best", r.api))
                .legend(move |(x, y)| {
                    Rectangle::new([(x, y - 5), (x + 18, y + 5)], colour.mix(0.2).filled())
                });
        }
        chart
            .draw_series(LineSeries::new(pts.iter().copied(), colour.stroke_width(2)))?
            .label(format!("{} kernel", r.api))
            .legend(move |(x, y)| {
                PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(2))
            });
        chart.draw_series(pts.iter().map(|&p| Circle::new(p, 3, colour.filled())))?;
        if let Some(c) = &r.copy {
            let dashed = DashedLineSeries::new(
                vec![(xmin / 1.2, c.gbps), (xmax * 1.2, c.gbps)],
                8,
                5,
                colour.stroke_width(1),
            );
            chart
                .draw_series(dashed)?
                .label(format!(
                    "{} device-to-device copy ({:.0} GB/s)",
                    r.api, c.gbps
                ))
                .legend(move |(x, y)| {
                    PathElement::new(vec![(x, y), (x + 18, y)], colour.stroke_width(1))
                });
        }
    }
    chart
        .configure_series_labels()
        .position(SeriesLabelPosition::LowerRight)
        .background_style(WHITE.mix(0.85))
        .border_style(BLACK)
        .draw()?;
    root.present()?;
    Ok(())
}
