//! `--plot FILE.svg`: GB/s against block size, one line per API, with
//!
//! - one slot per block size on the x axis, labelled as in the table, so 96 and 100 are as far
//!   apart as 512 and 768; each API's marker has its own column within the slot,
//! - one colour and marker per API key, the same in every plot (`api_style`),
//! - a whisker on every point: GB/s × (1 ± sd / mean) of one dispatch, the table's "spread",
//!   ending in an arrowhead where it reaches past a fifth above the highest point,
//! - each API's ≥ 95 %-of-best band, drawn in that API's column of every slot so close bands
//!   stay apart, and its device-to-device copy ceiling: a dashed line when it is near the data,
//!   a label at the top edge when it is far above (a CPU's memcpy),
//! - the y axis fitted to the kernel's points, so the bands and the curves' shape show,
//! - occupancy, where the rows have it, as bars in a strip under the plot on its own 0–100 %
//!   axis: one grey bar per size when every API has the same, else one bar per API,
//! - the legend to the right of the plotting area, where it covers nothing: one entry per API
//!   (with its copy ceiling), then what the whiskers, bands, lines and bars mean,
//! - a title naming each API's device when they differ.
//!
//! A kernel that declared no bytes moved (`sweep --kernel` without `bytes_per_item`) has no
//! GB/s: its plot shows the mean time per dispatch in ms instead.

use blocksweep_core::report::{Report, GOOD_FRACTION};
use blocksweep_core::sweep::{SweepResult, SweepRow};
use blocksweep_render::and_list;

use super::chart::{
    self, Axis, Bars, Chart, Colour, Glyph, Guide, GuideKind, Note, Point, Scale, Series, Strip,
    Tick,
};
use super::{api_style, whisker, whiskers_note};

/// The occupancy bars' colour when every API has the same occupancy.
const SHARED_GREY: Colour = Colour(0x77, 0x77, 0x77);

/// A copy ceiling up to this factor above the data's top stretches the y axis to show its
/// line; a higher one gets a label at the top edge, so the data keep the plot's height.
const CEILING_REACH: f64 = 1.25;

/// What the y axis shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Quantity {
    Gbps,
    /// The mean time per dispatch, for a kernel that declared no bytes moved.
    Ms,
}

impl Quantity {
    /// GB/s when any row has it, else ms.
    fn of(report: &Report) -> Quantity {
        let rows = report.results.iter().flat_map(|r| &r.rows);
        match rows.clone().any(|row| row.gbps.is_some()) {
            true => Quantity::Gbps,
            false => Quantity::Ms,
        }
    }

    fn value(self, row: &SweepRow) -> Option<f64> {
        match self {
            Quantity::Gbps => row.gbps,
            Quantity::Ms => row.mean_ms(),
        }
    }

    fn unit(self) -> &'static str {
        match self {
            Quantity::Gbps => "GB/s",
            Quantity::Ms => "ms",
        }
    }

    /// From `best` to where a row is still within 95 % of it (of best: its time ÷ the row's).
    fn band(self, best: f64) -> (f64, f64) {
        match self {
            Quantity::Gbps => (best * GOOD_FRACTION, best),
            Quantity::Ms => (best, best / GOOD_FRACTION),
        }
    }

    /// "GB/s (16 bytes per pixel / mean time)", "GB/s (12 bytes per item / mean time)", "ms
    /// per dispatch (mean)".
    fn axis_title(self, first: &SweepResult) -> String {
        let frame = &first.frame;
        match self {
            Quantity::Gbps => format!(
                "GB/s ({} bytes per {} / mean time)",
                frame.bytes_per_pass / frame.pixels.max(1),
                if first.program.is_some() {
                    "item"
                } else {
                    "pixel"
                }
            ),
            Quantity::Ms => "ms per dispatch (mean)".into(),
        }
    }
}

/// The SVG text; an error when no row ran.
pub fn render_svg(report: &Report) -> anyhow::Result<String> {
    Ok(sweep_chart(report)?.to_svg())
}

/// The row's value with its whisker.
fn point(q: Quantity, r: &SweepResult, row: &SweepRow) -> Option<Point> {
    let y = q.value(row)?;
    let cv = row.stats().map(|s| s.cv());
    let spread = cv
        .map(|cv| format!(", spread ±{:.1}%", cv * 100.0))
        .unwrap_or_default();
    let value = match q {
        Quantity::Gbps => format!("{y:.1} GB/s"),
        Quantity::Ms => format!("{y:.4} ms"),
    };
    Some(Point {
        x: row.threads as f64,
        y,
        whisker: cv.map(|cv| whisker(y, cv)),
        tip: format!(
            "{}: block {} (grid {}), {value}{spread}",
            r.api, row.block, row.grid
        ),
    })
}

/// GB/s (or ms) against threads per block for every API of the report.
pub fn sweep_chart(report: &Report) -> anyhow::Result<Chart> {
    let q = Quantity::of(report);
    let mut series = Vec::new();
    let mut guides = Vec::new();
    let mut ran = Vec::new();
    for r in &report.results {
        let points: Vec<Point> = r.rows.iter().filter_map(|row| point(q, r, row)).collect();
        if points.is_empty() {
            continue;
        }
        let (colour, marker) = api_style(r.api.key());
        guides.extend(guides_of(q, r, colour, series.len()));
        series.push(Series {
            name: r.api.to_string(),
            colour,
            marker,
            points,
        });
        ran.push(r);
    }
    let top = chart::data_top(series.iter().flat_map(|s| &s.points));
    if series.is_empty() || top <= 0.0 {
        anyhow::bail!("nothing to plot: no row ran");
    }
    let y = Axis::from_zero(
        &q.axis_title(&report.results[0]),
        reach_ceilings(top, &guides),
    );
    // Each API's one legend entry names its copy, now that the axis says where its line is.
    for g in &guides {
        if let (GuideKind::Line { y: c }, Some(i)) = (g.kind, g.series) {
            let off = if c > y.hi { ", off scale ↑" } else { "" };
            series[i].name = format!("{} (copy {c:.1} GB/s{off})", series[i].name);
        }
    }
    let strip = occupancy(&ran);
    Ok(Chart {
        title: title(report, q),
        x: block_axis(&series),
        notes: notes(&guides, y.hi, strip.is_some()),
        y,
        series,
        guides,
        strip,
    })
}

/// What the marks of every API mean, for the marks this chart has.
fn notes(guides: &[Guide], y_hi: f64, strip: bool) -> Vec<Note> {
    let line = |on: bool| {
        guides
            .iter()
            .any(|g| matches!(g.kind, GuideKind::Line { y } if (y <= y_hi) == on))
    };
    let mut notes = vec![whiskers_note()];
    let mut add = |glyph, text: &str| {
        notes.push(Note {
            glyph,
            text: text.into(),
        })
    };
    if guides
        .iter()
        .any(|g| matches!(g.kind, GuideKind::Band { .. }))
    {
        add(Glyph::Band, "shaded: within 95 % of that API's best");
    }
    if line(true) {
        add(Glyph::Dashed, "dashed: that API's device-to-device copy");
    }
    if line(false) {
        add(Glyph::Arrow, "label at the top: a copy off the scale");
    }
    if strip {
        add(Glyph::Bar, "bars below: occupancy (warps/SM ÷ warp slots)");
    }
    notes
}

/// The strip of occupancy bars: one grey series when every API has the same occupancy at
/// every size (one plan for all), else one per API in its column; `None` when no row has one.
fn occupancy(results: &[&SweepResult]) -> Option<Strip> {
    let per_api: Vec<Vec<(f64, f64)>> = results
        .iter()
        .map(|r| {
            r.rows
                .iter()
                .filter_map(|row| Some((row.threads as f64, row.occupancy?)))
                .collect()
        })
        .collect();
    if per_api.iter().all(Vec::is_empty) {
        return None;
    }
    let bars = if per_api.windows(2).all(|w| w[0] == w[1]) {
        vec![Bars {
            name: "occupancy, every API".into(),
            colour: SHARED_GREY,
            values: per_api[0].clone(),
        }]
    } else {
        results
            .iter()
            .zip(per_api)
            .map(|(r, values)| Bars {
                name: format!("{} occupancy", r.api),
                colour: api_style(r.api.key()).0,
                values,
            })
            .collect()
    };
    Some(Strip {
        title: "occupancy".into(),
        bars,
    })
}

/// One API's copy ceiling (GB/s only) and its ≥ 95 %-of-best band, for its series `index`.
fn guides_of(q: Quantity, r: &SweepResult, colour: Colour, index: usize) -> Vec<Guide> {
    let mut guides = Vec::new();
    if let (Quantity::Gbps, Some(c)) = (q, &r.copy) {
        guides.push(Guide {
            kind: GuideKind::Line { y: c.gbps },
            colour,
            label: format!("{} device-to-device copy: {:.1} GB/s", r.api, c.gbps),
            series: Some(index),
        });
    }
    if let Some(best) = r.best().and_then(|b| q.value(b)) {
        let (lo, hi) = q.band(best);
        guides.push(Guide {
            kind: GuideKind::Band { lo, hi },
            colour,
            label: format!("{} >= 95% of best", r.api),
            series: Some(index),
        });
    }
    guides
}

/// The y axis' top: the data's, raised to show each line a little above it; a line further
/// up stays off the axis (the chart labels it at the top edge).
fn reach_ceilings(top: f64, guides: &[Guide]) -> f64 {
    guides
        .iter()
        .filter_map(|g| match g.kind {
            GuideKind::Line { y } if y > top && y <= top * CEILING_REACH => Some(y * 1.04),
            _ => None,
        })
        .fold(top, f64::max)
}

/// Threads per block, one slot per size that ran, labelled as the table's rows are.
fn block_axis(series: &[Series]) -> Axis {
    let mut sizes: Vec<u64> = series
        .iter()
        .flat_map(|s| &s.points)
        .map(|p| p.x as u64)
        .collect();
    sizes.sort_unstable();
    sizes.dedup();
    Axis {
        title: "threads per block (one slot per size, as in the table)".into(),
        scale: Scale::Category,
        lo: sizes[0] as f64,
        hi: sizes[sizes.len() - 1] as f64,
        ticks: sizes
            .iter()
            .map(|&n| Tick {
                at: n as f64,
                label: n.to_string(),
            })
            .collect(),
    }
}

/// "Grayscale sweep: GB/s against block size, 3840x2160 frame" (or the user's kernel and its
/// sizes) and where it ran: "CUDA, Vulkan and OpenCL on NVIDIA H200", or each API's device
/// when they differ.
fn title(report: &Report, q: Quantity) -> Vec<String> {
    let Some(first) = report.results.first() else {
        return vec!["Grayscale sweep".into()];
    };
    let unit = q.unit();
    let mut lines = vec![match &first.program {
        Some(p) => format!("{} sweep: {unit} against block size, {}", p.name, p.sizes),
        None => format!(
            "Grayscale sweep: {unit} against block size, {}x{} frame",
            first.frame.width, first.frame.height
        ),
    }];
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

#[cfg(test)]
#[path = "sweep_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "sweep_slot_tests.rs"]
mod slot_tests;
