//! A small SVG chart, written by hand: series of points with whiskers, horizontal reference
//! lines and bands, an x axis that is linear or log2 with a label at every chosen tick, and the
//! legend outside the plotting area (on its right), so it never covers data.
//!
//! It knows nothing about sweeps: `plot.rs` turns a report into a [`Chart`]. A second kind of
//! plot (GB/s against waves, say) is another function that builds a [`Chart`].
//!
//! The SVG names what a reader (or a test in a browser) looks for: `id="legend"`,
//! `id="plot-area"`, `class="point"` on every data marker (with `data-series`, `data-x`,
//! `data-y`), `class="whisker"`, `class="x-label"` on every x tick label, and a `<title>` on
//! every point, shown when the mouse rests on it.

use std::fmt::Write as _;

/// An RGB colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Colour(pub u8, pub u8, pub u8);

impl Colour {
    fn css(self) -> String {
        format!("#{:02x}{:02x}{:02x}", self.0, self.1, self.2)
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Scale {
    Linear,
    /// Equal distances for equal ratios; ticks go where they are asked to.
    Log2,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Tick {
    pub at: f64,
    pub label: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub title: String,
    pub scale: Scale,
    pub lo: f64,
    pub hi: f64,
    pub ticks: Vec<Tick>,
}

/// The shape drawn at each point of a series; one per series, so series differ by more than
/// colour.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Marker {
    Circle,
    Square,
    Diamond,
    Triangle,
}

impl Marker {
    pub const ALL: [Marker; 4] = [
        Marker::Circle,
        Marker::Square,
        Marker::Diamond,
        Marker::Triangle,
    ];
}

#[derive(Debug, Clone, PartialEq)]
pub struct Point {
    pub x: f64,
    pub y: f64,
    /// A whisker from `.0` to `.1` on the y scale.
    pub whisker: Option<(f64, f64)>,
    /// Shown when the mouse rests on the point.
    pub tip: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Series {
    /// The legend's text for the line and markers.
    pub name: String,
    pub colour: Colour,
    pub marker: Marker,
    pub points: Vec<Point>,
}

/// Something drawn across the whole plotting area, with its legend entry.
#[derive(Debug, Clone, PartialEq)]
pub struct Guide {
    pub kind: GuideKind,
    pub colour: Colour,
    pub label: String,
    /// The series it belongs to: its legend entry follows that series'.
    pub series: Option<usize>,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum GuideKind {
    /// A dashed horizontal line at y.
    Line { y: f64 },
    /// A shaded horizontal band from `lo` to `hi`.
    Band { lo: f64, hi: f64 },
}

#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// The first line is the title; the others (smaller) say what was measured where.
    pub title: Vec<String>,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub guides: Vec<Guide>,
    /// Legend lines after the series and guides, explaining the marks (e.g. the whiskers).
    pub notes: Vec<String>,
}

// Layout, in SVG pixels.
const MARGIN: f64 = 16.0;
const PLOT_W: f64 = 700.0;
const PLOT_H: f64 = 400.0;
const Y_LABELS: f64 = 64.0;
const FONT: f64 = 12.0;
const TITLE_FONT: f64 = 18.0;
const SUB_FONT: f64 = 13.0;
const LABEL_ROW: f64 = 15.0;
const LABEL_GAP: f64 = 5.0;
/// At most this many rows of x labels; a label that fits none is left out (and counted).
const MAX_LABEL_ROWS: usize = 4;
const LEGEND_GAP: f64 = 28.0;
const LEGEND_ROW: f64 = 20.0;
const LEGEND_SWATCH: f64 = 26.0;
/// Horizontal spread of the series at one x, so their whiskers stay apart.
const DODGE: f64 = 5.0;

/// A generous width of `text` at `font` px in a sans-serif face: DejaVu Sans (the widest
/// common default) advances digits by 0.636 em and averages about 0.62 em over text.
pub fn text_width(text: &str, font: f64) -> f64 {
    text.chars()
        .map(|c| match c {
            '0'..='9' => 0.64,
            'i' | 'j' | 'l' | '.' | ',' | ':' | ';' | '\'' | '|' | '!' => 0.32,
            ' ' | '(' | ')' | '[' | ']' | 'f' | 't' | 'r' => 0.4,
            'm' | 'w' | 'M' | 'W' | '%' | '≥' => 0.95,
            c if c.is_ascii_uppercase() => 0.72,
            _ => 0.62,
        })
        .sum::<f64>()
        * font
}

/// Rows for labels centred at `centres` (sorted) with `widths`: each goes into the first row
/// where it clears the previous label of that row by `gap`; `None` when no row of `max_rows`
/// has room.
pub fn label_rows(
    centres: &[f64],
    widths: &[f64],
    gap: f64,
    max_rows: usize,
) -> Vec<Option<usize>> {
    let mut right_edge: Vec<f64> = Vec::new();
    centres
        .iter()
        .zip(widths)
        .map(|(&c, &w)| {
            let left = c - w / 2.0;
            let row = right_edge.iter().position(|&r| left >= r + gap);
            let row = match row {
                Some(r) => Some(r),
                None if right_edge.len() < max_rows => {
                    right_edge.push(f64::NEG_INFINITY);
                    Some(right_edge.len() - 1)
                }
                None => None,
            };
            if let Some(r) = row {
                right_edge[r] = c + w / 2.0;
            }
            row
        })
        .collect()
}

impl Axis {
    /// The y axis every blocksweep chart shares: GB/s from 0 to `hi`, about six unlabelled
    /// grid lines (the values are printed beside them).
    pub fn gbps(hi: f64) -> Axis {
        Axis {
            title: "GB/s (16 bytes per pixel / mean time)".into(),
            scale: Scale::Linear,
            lo: 0.0,
            hi,
            ticks: nice_ticks(hi, 6)
                .into_iter()
                .map(|at| Tick {
                    at,
                    label: String::new(),
                })
                .collect(),
        }
    }
}

/// About `want` evenly spaced round values (1, 2 or 5 times a power of ten) from 0 to `hi`.
pub fn nice_ticks(hi: f64, want: usize) -> Vec<f64> {
    if hi.is_nan() || hi <= 0.0 || hi.is_infinite() {
        return vec![0.0];
    }
    let raw = hi / want.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    (0..)
        .map(|i| i as f64 * step)
        .take_while(|v| *v <= hi * (1.0 + 1e-9))
        .collect()
}

/// "1500", "2.5", "0.25": as many decimals as the step between ticks needs.
pub fn tick_label(v: f64, step: f64) -> String {
    let decimals = if step >= 1.0 {
        0
    } else {
        (-step.log10()).ceil() as usize
    };
    format!("{v:.decimals$}")
}

fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

struct Frame {
    left: f64,
    top: f64,
    x: Axis,
    y: Axis,
}

impl Frame {
    fn px(&self, x: f64) -> f64 {
        let t = match self.x.scale {
            Scale::Linear => (x - self.x.lo) / (self.x.hi - self.x.lo),
            Scale::Log2 => (x.log2() - self.x.lo.log2()) / (self.x.hi.log2() - self.x.lo.log2()),
        };
        self.left + t * PLOT_W
    }

    fn py(&self, y: f64) -> f64 {
        let t = (y - self.y.lo) / (self.y.hi - self.y.lo);
        self.top + PLOT_H - t.clamp(0.0, 1.0) * PLOT_H
    }
}

/// Splits `text` at "; " into lines no wider than `width`.
fn wrap(text: &str, font: f64, width: f64) -> Vec<String> {
    let mut lines: Vec<String> = Vec::new();
    for part in text.split("; ") {
        match lines.last_mut() {
            Some(l) if text_width(&format!("{l}; {part}"), font) <= width => {
                l.push_str("; ");
                l.push_str(part);
            }
            _ => lines.push(part.to_string()),
        }
    }
    lines
}

struct LegendEntry {
    swatch: String,
    text: String,
}

/// Where everything of one chart goes, worked out before anything is drawn.
struct Geometry<'a> {
    legend: Vec<LegendEntry>,
    legend_w: f64,
    legend_h: f64,
    plot_left: f64,
    right: f64,
    width: f64,
    height: f64,
    /// Each title line with its font size.
    title: Vec<(String, f64)>,
    top: f64,
    bottom: f64,
    frame: Frame,
    /// The x ticks in order, their centres, and the label row of each (`None`: no room).
    ticks: Vec<&'a Tick>,
    centres: Vec<f64>,
    rows: Vec<Option<usize>>,
    unlabelled: usize,
    x_title_y: f64,
}

impl Chart {
    /// The chart as an SVG document.
    pub fn to_svg(&self) -> String {
        let g = self.geometry();
        let mut s = String::new();
        let _ = writeln!(
            s,
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="{FONT}">"#,
            w = g.width,
            h = g.height.ceil()
        );
        let _ = writeln!(s, r#"<rect width="100%" height="100%" fill="white"/>"#);
        self.svg_title(&mut s, &g);
        self.svg_y_axis(&mut s, &g);
        self.svg_x_axis(&mut s, &g);
        self.svg_guides(&mut s, &g);
        self.svg_data(&mut s, &g);
        self.svg_legend(&mut s, &g);
        let _ = writeln!(s, "</svg>");
        s
    }

    /// The sizes and places: the legend's width sets the document's, the title's lines the
    /// plot's top, the x labels' rows its bottom.
    fn geometry(&self) -> Geometry<'_> {
        let legend = self.legend();
        let legend_w = legend
            .iter()
            .map(|e| text_width(&e.text, FONT))
            .fold(0.0, f64::max)
            + LEGEND_SWATCH
            + 24.0;
        let plot_left = MARGIN + Y_LABELS;
        let width = (plot_left + PLOT_W + LEGEND_GAP + legend_w + MARGIN).ceil();

        // Title block.
        let mut title: Vec<(String, f64)> = Vec::new();
        for (i, line) in self.title.iter().enumerate() {
            let font = if i == 0 { TITLE_FONT } else { SUB_FONT };
            for l in wrap(line, font, width - 2.0 * MARGIN) {
                title.push((l, font));
            }
        }
        let title_h: f64 = title.iter().map(|(_, f)| f * 1.4).sum();
        let top = MARGIN + title_h + 12.0;
        let frame = Frame {
            left: plot_left,
            top,
            x: self.x.clone(),
            y: self.y.clone(),
        };

        // X labels, placed in rows so none overlaps another.
        let mut ticks: Vec<&Tick> = self.x.ticks.iter().collect();
        ticks.sort_by(|a, b| a.at.total_cmp(&b.at));
        let centres: Vec<f64> = ticks.iter().map(|t| frame.px(t.at)).collect();
        let widths: Vec<f64> = ticks.iter().map(|t| text_width(&t.label, FONT)).collect();
        let rows = label_rows(&centres, &widths, LABEL_GAP, MAX_LABEL_ROWS);
        let used_rows = rows.iter().flatten().max().map_or(1, |r| r + 1);
        let unlabelled = rows.iter().filter(|r| r.is_none()).count();
        let bottom = top + PLOT_H;
        let x_title_y = bottom + 8.0 + used_rows as f64 * LABEL_ROW + 20.0;
        let legend_h = legend.len() as f64 * LEGEND_ROW + 16.0;
        let height = (x_title_y + 12.0).max(top + legend_h) + MARGIN;

        Geometry {
            legend,
            legend_w,
            legend_h,
            plot_left,
            right: plot_left + PLOT_W,
            width,
            height,
            title,
            top,
            bottom,
            frame,
            ticks,
            centres,
            rows,
            unlabelled,
            x_title_y,
        }
    }

    /// The title block, centred.
    fn svg_title(&self, s: &mut String, g: &Geometry) {
        let (title, width) = (&g.title, g.width);
        let mut y = MARGIN;
        let _ = writeln!(s, r#"<g id="title" text-anchor="middle">"#);
        for (line, font) in title {
            y += font * 1.1;
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{y:.1}" font-size="{font}"{}>{}</text>"#,
                width / 2.0,
                if *font == TITLE_FONT {
                    r#" font-weight="bold""#
                } else {
                    ""
                },
                esc(line)
            );
            y += font * 0.3;
        }
        let _ = writeln!(s, "</g>");
    }

    /// The plotting area, its horizontal grid lines and the y axis.
    fn svg_y_axis(&self, s: &mut String, g: &Geometry) {
        let (plot_left, right, top, frame) = (g.plot_left, g.right, g.top, &g.frame);
        // Plotting area, grid and axes.
        let _ = writeln!(
            s,
            r##"<rect id="plot-area" x="{plot_left}" y="{top:.1}" width="{PLOT_W}" height="{PLOT_H}" fill="none" stroke="#444"/>"##
        );
        let y_step = self
            .y
            .ticks
            .windows(2)
            .map(|w| w[1].at - w[0].at)
            .next()
            .unwrap_or(1.0);
        let _ = writeln!(s, r#"<g id="y-axis" text-anchor="end">"#);
        for t in &self.y.ticks {
            let py = frame.py(t.at);
            let _ = writeln!(
                s,
                r##"<line x1="{plot_left}" x2="{right}" y1="{py:.1}" y2="{py:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}">{}</text>"##,
                plot_left - 6.0,
                py + FONT * 0.35,
                esc(&if t.label.is_empty() {
                    tick_label(t.at, y_step)
                } else {
                    t.label.clone()
                })
            );
        }
        let cy = top + PLOT_H / 2.0;
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{cy:.1}" text-anchor="middle" transform="rotate(-90 {:.1} {cy:.1})">{}</text>"#,
            MARGIN + FONT,
            MARGIN + FONT,
            esc(&self.y.title)
        );
        let _ = writeln!(s, "</g>");
    }

    /// The vertical grid lines and the x labels, in rows so none overlaps another.
    fn svg_x_axis(&self, s: &mut String, g: &Geometry) {
        let (ticks, centres, rows) = (&g.ticks, &g.centres, &g.rows);
        let (plot_left, top, bottom, x_title_y) = (g.plot_left, g.top, g.bottom, g.x_title_y);
        let unlabelled = g.unlabelled;
        let _ = writeln!(s, r#"<g id="x-axis" text-anchor="middle">"#);
        for ((t, &c), row) in ticks.iter().zip(centres).zip(rows) {
            let _ = writeln!(
                s,
                r##"<line x1="{c:.1}" x2="{c:.1}" y1="{top:.1}" y2="{bottom:.1}" stroke="#e4e4e4"/>"##
            );
            let Some(row) = row else { continue };
            let label_y = bottom + 8.0 + (*row as f64 + 1.0) * LABEL_ROW - 3.0;
            // A tick down to its label, longer for the lower rows.
            let _ = writeln!(
                s,
                r##"<line x1="{c:.1}" x2="{c:.1}" y1="{bottom:.1}" y2="{:.1}" stroke="#888"/><text class="x-label" x="{c:.1}" y="{label_y:.1}">{}</text>"##,
                label_y - FONT + 1.0,
                esc(&t.label)
            );
        }
        let x_title = match unlabelled {
            0 => self.x.title.clone(),
            n => format!("{} ({n} sizes too close to label)", self.x.title),
        };
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{x_title_y:.1}">{}</text>"#,
            plot_left + PLOT_W / 2.0,
            esc(&x_title)
        );
        let _ = writeln!(s, "</g>");
    }

    /// The guides (bands and lines), under the data.
    fn svg_guides(&self, s: &mut String, g: &Geometry) {
        let (plot_left, right, frame) = (g.plot_left, g.right, &g.frame);
        // Guides under the data.
        let _ = writeln!(s, r#"<g id="guides">"#);
        for g in &self.guides {
            let colour = g.colour.css();
            match g.kind {
                GuideKind::Band { lo, hi } => {
                    let (y1, y2) = (frame.py(hi), frame.py(lo));
                    let _ = writeln!(
                        s,
                        r#"<rect class="band" x="{plot_left}" y="{y1:.1}" width="{PLOT_W}" height="{:.1}" fill="{colour}" fill-opacity="0.12"/>"#,
                        (y2 - y1).max(0.5),
                    );
                }
                GuideKind::Line { y } => {
                    let py = frame.py(y);
                    let _ = writeln!(
                        s,
                        r#"<line class="guide-line" x1="{plot_left}" x2="{right}" y1="{py:.1}" y2="{py:.1}" stroke="{colour}" stroke-width="1.5" stroke-dasharray="8 5"/>"#,
                    );
                }
            }
        }
        let _ = writeln!(s, "</g>");
    }

    /// Each series: its line, whiskers and points.
    fn svg_data(&self, s: &mut String, g: &Geometry) {
        let frame = &g.frame;
        // The data.
        let n = self.series.len();
        let _ = writeln!(s, r#"<g id="data">"#);
        for (i, series) in self.series.iter().enumerate() {
            let dodge = (i as f64 - (n as f64 - 1.0) / 2.0) * DODGE;
            let colour = series.colour.css();
            let mut pts: Vec<&Point> = series.points.iter().collect();
            pts.sort_by(|a, b| a.x.total_cmp(&b.x));
            let path: Vec<String> = pts
                .iter()
                .map(|p| format!("{:.1},{:.1}", frame.px(p.x) + dodge, frame.py(p.y)))
                .collect();
            let _ = writeln!(
                s,
                r#"<g class="series" data-series="{}">"#,
                esc(&series.name)
            );
            let _ = writeln!(
                s,
                r#"<polyline class="series-line" points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
                path.join(" ")
            );
            for p in &pts {
                let (cx, cy) = (frame.px(p.x) + dodge, frame.py(p.y));
                if let Some((lo, hi)) = p.whisker {
                    let (y1, y2) = (frame.py(hi), frame.py(lo));
                    // A whisker past the top ends in an arrowhead instead of a cap.
                    let top_end = if hi > self.y.hi {
                        format!(
                            "M{:.1},{:.1}L{cx:.1},{y1:.1}L{:.1},{:.1}",
                            cx - 3.0,
                            y1 + 5.0,
                            cx + 3.0,
                            y1 + 5.0
                        )
                    } else {
                        format!("M{:.1},{y1:.1}H{:.1}", cx - 3.0, cx + 3.0)
                    };
                    let _ = writeln!(
                        s,
                        r#"<path class="whisker" d="{top_end}M{cx:.1},{y1:.1}V{y2:.1}M{:.1},{y2:.1}H{:.1}" stroke="{colour}" stroke-width="1.2" fill="none"/>"#,
                        cx - 3.0,
                        cx + 3.0
                    );
                }
                let _ = writeln!(
                    s,
                    r#"<g class="point" data-series="{}" data-x="{}" data-y="{:.3}">{}<title>{}</title></g>"#,
                    esc(&series.name),
                    p.x,
                    p.y,
                    marker(series.marker, cx, cy, &colour),
                    esc(&p.tip)
                );
            }
            let _ = writeln!(s, "</g>");
        }
        let _ = writeln!(s, "</g>");
    }

    /// The legend, right of the plotting area.
    fn svg_legend(&self, s: &mut String, g: &Geometry) {
        let (right, top, legend_w, legend_h, legend) =
            (g.right, g.top, g.legend_w, g.legend_h, &g.legend);
        // The legend, right of the plotting area.
        let lx = right + LEGEND_GAP;
        let _ = writeln!(s, r#"<g id="legend">"#);
        let _ = writeln!(
            s,
            r##"<rect x="{lx:.1}" y="{top:.1}" width="{legend_w:.1}" height="{legend_h:.1}" fill="white" stroke="#888"/>"##
        );
        for (k, e) in legend.iter().enumerate() {
            let ey = top + 8.0 + (k as f64 + 0.5) * LEGEND_ROW;
            let _ = writeln!(
                s,
                r#"<g transform="translate({:.1},{ey:.1})">{}<text x="{}" y="{:.1}">{}</text></g>"#,
                lx + 10.0,
                e.swatch,
                LEGEND_SWATCH + 6.0,
                FONT * 0.35,
                esc(&e.text)
            );
        }
        let _ = writeln!(s, "</g>");
    }

    /// One entry per series, guide and note, in that order, each with its little drawing
    /// (centred at y = 0, from x = 0 to [`LEGEND_SWATCH`]).
    fn legend(&self) -> Vec<LegendEntry> {
        let mut out = Vec::new();
        let half = LEGEND_SWATCH / 2.0;
        let guide = |g: &Guide| LegendEntry {
            swatch: match g.kind {
                GuideKind::Line { .. } => format!(
                    r#"<line x1="0" x2="{LEGEND_SWATCH}" y1="0" y2="0" stroke="{}" stroke-width="1.5" stroke-dasharray="8 5"/>"#,
                    g.colour.css()
                ),
                GuideKind::Band { .. } => format!(
                    r#"<rect x="0" y="-6" width="{LEGEND_SWATCH}" height="12" fill="{}" fill-opacity="0.25"/>"#,
                    g.colour.css()
                ),
            },
            text: g.label.clone(),
        };
        for (i, series) in self.series.iter().enumerate() {
            let c = series.colour.css();
            out.push(LegendEntry {
                swatch: format!(
                    r#"<line x1="0" x2="{LEGEND_SWATCH}" y1="0" y2="0" stroke="{c}" stroke-width="2"/>{}"#,
                    marker(series.marker, half, 0.0, &c)
                ),
                text: series.name.clone(),
            });
            out.extend(
                self.guides
                    .iter()
                    .filter(|g| g.series == Some(i))
                    .map(guide),
            );
        }
        let n = self.series.len();
        out.extend(
            self.guides
                .iter()
                .filter(|g| g.series.is_none_or(|i| i >= n))
                .map(guide),
        );
        for note in &self.notes {
            out.push(LegendEntry {
                swatch: format!(
                    r##"<path d="M{a:.1},-7H{b:.1}M{half},-7V7M{a:.1},7H{b:.1}" stroke="#555" stroke-width="1.2" fill="none"/>"##,
                    a = half - 3.0,
                    b = half + 3.0
                ),
                text: note.clone(),
            });
        }
        out
    }
}

fn marker(m: Marker, x: f64, y: f64, colour: &str) -> String {
    match m {
        Marker::Circle => format!(r#"<circle cx="{x:.1}" cy="{y:.1}" r="4" fill="{colour}"/>"#),
        Marker::Square => format!(
            r#"<rect x="{:.1}" y="{:.1}" width="7" height="7" fill="{colour}"/>"#,
            x - 3.5,
            y - 3.5
        ),
        Marker::Diamond => format!(
            r#"<path d="M{x:.1},{:.1}L{:.1},{y:.1}L{x:.1},{:.1}L{:.1},{y:.1}Z" fill="{colour}"/>"#,
            y - 5.0,
            x + 5.0,
            y + 5.0,
            x - 5.0
        ),
        Marker::Triangle => format!(
            r#"<path d="M{x:.1},{:.1}L{:.1},{:.1}L{:.1},{:.1}Z" fill="{colour}"/>"#,
            y - 5.0,
            x + 4.5,
            y + 3.5,
            x - 4.5,
            y + 3.5
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn close_labels_go_to_different_rows() {
        // 64, 96, 100, 128 at the default layout: 96 and 100 are 6 px apart.
        let centres = [100.0, 164.0, 170.0, 209.0];
        let widths = [16.0, 16.0, 24.0, 24.0];
        assert_eq!(
            label_rows(&centres, &widths, 5.0, 4),
            vec![Some(0), Some(0), Some(1), Some(0)]
        );
        // More labels than rows can hold: the ones left over get none.
        let crowded = [10.0, 11.0, 12.0, 13.0, 14.0];
        let rows = label_rows(&crowded, &[20.0; 5], 5.0, 4);
        assert_eq!(rows.iter().filter(|r| r.is_none()).count(), 1);
    }

    #[test]
    fn ticks_are_round() {
        assert_eq!(nice_ticks(3700.0, 6), vec![0.0, 1000.0, 2000.0, 3000.0]);
        assert_eq!(nice_ticks(6.3, 6), vec![0.0, 2.0, 4.0, 6.0]);
        assert_eq!(nice_ticks(0.0, 6), vec![0.0]);
        assert_eq!(tick_label(2.5, 0.5), "2.5");
        assert_eq!(tick_label(1500.0, 500.0), "1500");
    }

    #[test]
    fn long_lines_wrap_at_semicolons() {
        let text = "Vulkan on llvmpipe (LLVM 15.0.6, 256 bits); OpenCL on pthread-haswell-AMD EPYC 7B13 64-Core Processor";
        let lines = wrap(text, 13.0, 400.0);
        assert_eq!(lines.len(), 2);
        assert!(lines[1].starts_with("OpenCL on"));
        assert_eq!(wrap("short; two", 13.0, 400.0), vec!["short; two"]);
    }
}
