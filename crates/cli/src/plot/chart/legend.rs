//! The legend, right of the plotting area: one entry per series, then the guides that belong to
//! no series, then the notes (what the bands, lines and bars of every series mean), each beside
//! the mark it explains, drawn as that mark is drawn in the plot. A series' own guides get no
//! entry: their colour says whose they are, and a note says what they are.

use std::fmt::Write as _;

use super::layout::{Geometry, FONT, LEGEND_GAP, LEGEND_ROW, LEGEND_SWATCH};
use super::marks::marker;
use super::{esc, off_scale_label, Chart, Glyph, Guide, GuideKind, Note, Series};

/// Markers that explain a shape across colours are grey.
const NOTE_GREY: &str = "#555";

/// The arrow of an off-scale line's entry, larger than the text so it reads as a mark.
const ARROW_FONT: f64 = 16.0;

pub(super) struct LegendEntry {
    /// The little drawing, centred at y = 0, from x = 0 to [`LEGEND_SWATCH`].
    pub(super) swatch: String,
    pub(super) text: String,
}

impl Chart {
    /// The legend's box and entries, right of the plotting area.
    pub(super) fn svg_legend(&self, s: &mut String, g: &Geometry) {
        let (top, legend_w, legend_h) = (g.top, g.legend_w, g.legend_h);
        let lx = g.right + LEGEND_GAP;
        let _ = writeln!(s, r#"<g id="legend">"#);
        let _ = writeln!(
            s,
            r##"<rect x="{lx:.1}" y="{top:.1}" width="{legend_w:.1}" height="{legend_h:.1}" fill="white" stroke="#888"/>"##
        );
        for (k, e) in g.legend.iter().enumerate() {
            let ey = top + 8.0 + (k as f64 + 0.5) * LEGEND_ROW;
            let _ = writeln!(
                s,
                r#"<g class="legend-entry" transform="translate({:.1},{ey:.1})">{}<text x="{}" y="{:.1}">{}</text></g>"#,
                lx + 10.0,
                e.swatch,
                LEGEND_SWATCH + 6.0,
                FONT * 0.35,
                esc(&e.text)
            );
        }
        let _ = writeln!(s, "</g>");
    }

    /// One entry per series; then the guides of no series, then the notes.
    pub(super) fn legend(&self) -> Vec<LegendEntry> {
        let mut out: Vec<LegendEntry> = self.series.iter().map(series_entry).collect();
        let n = self.series.len();
        out.extend(
            self.guides
                .iter()
                .filter(|g| g.series.is_none_or(|i| i >= n))
                .map(|g| self.guide_entry(g)),
        );
        out.extend(self.notes.iter().map(note_entry));
        out
    }

    /// A band's shade, a line's dash, or for a line above the axis the arrow of its label.
    fn guide_entry(&self, g: &Guide) -> LegendEntry {
        let colour = g.colour.css();
        match g.kind {
            GuideKind::Line { y } if y > self.y.hi => LegendEntry {
                swatch: format!(
                    r#"<text x="{}" y="{:.1}" text-anchor="middle" font-size="{ARROW_FONT}" font-weight="bold" fill="{colour}">↑</text>"#,
                    LEGEND_SWATCH / 2.0,
                    ARROW_FONT * 0.35
                ),
                text: off_scale_label(&g.label),
            },
            GuideKind::Line { .. } => LegendEntry {
                swatch: format!(
                    r#"<line x1="0" x2="{LEGEND_SWATCH}" y1="0" y2="0" stroke="{colour}" stroke-width="1.5" stroke-dasharray="8 5"/>"#
                ),
                text: g.label.clone(),
            },
            GuideKind::Band { .. } => LegendEntry {
                swatch: format!(
                    r#"<rect x="0" y="-6" width="{LEGEND_SWATCH}" height="12" fill="{colour}" fill-opacity="0.25"/>"#
                ),
                text: g.label.clone(),
            },
        }
    }
}

/// The series' line with its marker on it.
fn series_entry(series: &Series) -> LegendEntry {
    let c = series.colour.css();
    LegendEntry {
        swatch: format!(
            r#"<line x1="0" x2="{LEGEND_SWATCH}" y1="0" y2="0" stroke="{c}" stroke-width="2"/>{}"#,
            marker(series.marker, LEGEND_SWATCH / 2.0, 0.0, &c)
        ),
        text: series.name.clone(),
    }
}

fn note_entry(note: &Note) -> LegendEntry {
    let half = LEGEND_SWATCH / 2.0;
    let swatch = match note.glyph {
        Glyph::Whisker => format!(
            r#"<path d="M{a:.1},-7H{b:.1}M{half},-7V7M{a:.1},7H{b:.1}" stroke="{NOTE_GREY}" stroke-width="1.2" fill="none"/>"#,
            a = half - 3.0,
            b = half + 3.0
        ),
        Glyph::Marker(m) => marker(m, half, 0.0, NOTE_GREY),
        Glyph::Band => format!(
            r#"<rect x="{:.1}" y="-7" width="14" height="14" fill="{NOTE_GREY}" fill-opacity="0.22" stroke="{NOTE_GREY}" stroke-width="0.8"/>"#,
            half - 7.0
        ),
        Glyph::Dashed => format!(
            r#"<line x1="0" x2="{LEGEND_SWATCH}" y1="0" y2="0" stroke="{NOTE_GREY}" stroke-width="1.5" stroke-dasharray="8 5"/>"#
        ),
        Glyph::Arrow => format!(
            r#"<text x="{half}" y="{:.1}" text-anchor="middle" font-size="{ARROW_FONT}" font-weight="bold" fill="{NOTE_GREY}">↑</text>"#,
            ARROW_FONT * 0.35
        ),
        Glyph::Bar => format!(
            r#"<rect x="{:.1}" y="-4" width="10" height="11" fill="{NOTE_GREY}" fill-opacity="0.55"/>"#,
            half - 5.0
        ),
    };
    LegendEntry {
        swatch,
        text: note.text.clone(),
    }
}
