//! A small SVG chart, written by hand: series of points with whiskers, horizontal reference
//! lines and bands, an x axis that is linear or categorical (one slot per tick) with a
//! label at every chosen tick, an optional strip of bars under the plot (a second y axis in %),
//! and the legend outside the plotting area (on its right), so it never covers data.
//!
//! Beside it, `heat.rs` draws heat maps ([`HeatMaps`]), a tune's.
//!
//! It knows nothing about sweeps: `sweep.rs` and `waves.rs` turn reports into a [`Chart`],
//! `tune.rs` into [`HeatMaps`]. This
//! file holds what a chart is; `layout.rs` places its parts, `axes.rs` draws the title and axes,
//! `marks.rs` the guides and the data, `strip.rs` the bars under the plot, `legend.rs` the legend.
//!
//! The SVG names what a reader (or a test in a browser) looks for: `id="legend"`,
//! `id="plot-area"`, `class="point"` on every data marker (with `data-series`, `data-x`,
//! `data-y`), `class="whisker"`, `class="x-label"` on every x tick label, `class="off-scale"` on
//! the label of a line above the y axis' top, `class="band"` on every band's rectangle,
//! `id="strip-area"` and `class="strip-bar"` (with `data-x`) for the strip, and a `<title>` on
//! every point, shown when the mouse rests on it.

mod axes;
mod heat;
mod layout;
mod legend;
mod marks;
mod strip;

pub use axes::tick_label;
pub use heat::{HeatMap, HeatMaps};

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
    /// One equal slot per tick, in the ticks' order; a point's x is its tick's `at`. Sizes as
    /// close as 96 and 100 get slots as wide as any other, as rows of a table do.
    Category,
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
    /// A dashed horizontal line at y; above the y axis' top, a label at the top edge instead.
    Line { y: f64 },
    /// A shaded horizontal band from `lo` to `hi`; on a categorical axis, a band of a series is
    /// drawn in that series' column of each slot, so bands of close values stay apart.
    Band { lo: f64, hi: f64 },
}

/// A legend line after the series, explaining a mark, drawn beside that mark.
#[derive(Debug, Clone, PartialEq)]
pub struct Note {
    pub glyph: Glyph,
    pub text: String,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Glyph {
    /// A whisker with its caps.
    Whisker,
    /// A series' marker, in grey: what the shape means across colours.
    Marker(Marker),
    /// A band's shade, in grey: what every series' band means.
    Band,
    /// A dashed line, in grey: what every series' line guide means.
    Dashed,
    /// The arrow of a line guide's label above the y axis' top.
    Arrow,
    /// A bar of the strip under the plot.
    Bar,
}

/// Bars under the plotting area on the same x slots, on their own axis from 0 to 100 %.
#[derive(Debug, Clone, PartialEq)]
pub struct Strip {
    /// The strip's y axis title, e.g. "occupancy".
    pub title: String,
    pub bars: Vec<Bars>,
}

/// One series of bars; with several, each sits in the column of the series of the same index.
#[derive(Debug, Clone, PartialEq)]
pub struct Bars {
    pub name: String,
    pub colour: Colour,
    /// (x, fraction from 0 to 1).
    pub values: Vec<(f64, f64)>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct Chart {
    /// The first line is the title; the others (smaller) say what was measured where.
    pub title: Vec<String>,
    pub x: Axis,
    pub y: Axis,
    pub series: Vec<Series>,
    pub guides: Vec<Guide>,
    pub notes: Vec<Note>,
    pub strip: Option<Strip>,
}

/// How far above the highest point whiskers may stretch the y axis; a longer one is cut with an
/// arrowhead, so a noisy row cannot squash the data into the bottom of the plot.
const WHISKER_REACH: f64 = 1.2;

/// The y axis' top for `points`: the highest point plus 8 %, or the highest whisker plus 2 %
/// where it ends higher, up to [`WHISKER_REACH`].
pub fn data_top<'a>(points: impl IntoIterator<Item = &'a Point>) -> f64 {
    let (top, whisker_top) = points.into_iter().fold((0.0f64, 0.0f64), |(y, w), p| {
        (y.max(p.y), w.max(p.whisker.map_or(p.y, |wh| wh.1)))
    });
    (top * 1.08).max(whisker_top.min(top * WHISKER_REACH) * 1.02)
}

impl Chart {
    /// The chart as an SVG document.
    pub fn to_svg(&self) -> String {
        let g = self.geometry();
        let mut s = String::new();
        s.push_str(&format!(
            r#"<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" font-family="sans-serif" font-size="{font}">"#,
            w = g.width,
            h = g.height.ceil(),
            font = layout::FONT
        ));
        s.push('\n');
        s.push_str("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        self.svg_title(&mut s, &g);
        self.svg_y_axis(&mut s, &g);
        self.svg_x_axis(&mut s, &g);
        self.svg_guides(&mut s, &g);
        self.svg_off_scale(&mut s, &g);
        self.svg_data(&mut s, &g);
        self.svg_strip(&mut s, &g);
        self.svg_legend(&mut s, &g);
        s.push_str("</svg>\n");
        s
    }

    /// The line guides above the y axis' top, in order: each gets a label at the top edge.
    fn off_scale(&self) -> impl Iterator<Item = &Guide> {
        self.guides
            .iter()
            .filter(|g| matches!(g.kind, GuideKind::Line { y } if y > self.y.hi))
    }
}

/// `label` with the mark that it is above the y axis' top.
fn off_scale_label(label: &str) -> String {
    format!("{label} (off scale ↑)")
}

/// `s` as SVG text or a double-quoted attribute's value (`&`, `<`, `>` and `"` escaped): the
/// one escaper of every plot.
pub(crate) fn esc(s: &str) -> String {
    s.replace('&', "&amp;")
        .replace('<', "&lt;")
        .replace('>', "&gt;")
        .replace('"', "&quot;")
}

#[cfg(test)]
#[path = "chart_tests.rs"]
mod tests;
