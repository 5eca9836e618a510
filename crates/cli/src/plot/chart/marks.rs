//! What is drawn in the plotting area: the guides (bands and lines) under the data, the labels
//! of lines above the y axis' top, and each series' line, whiskers and markers.

use std::fmt::Write as _;

use super::layout::{Frame, Geometry, LABEL_ROW, PLOT_W};
use super::{esc, off_scale_label, Chart, GuideKind, Marker, Point, Series};

impl Chart {
    /// The bands and the lines within the y axis, under the data.
    pub(super) fn svg_guides(&self, s: &mut String, g: &Geometry) {
        let (plot_left, right, frame) = (g.plot_left, g.right, &g.frame);
        let _ = writeln!(s, r#"<g id="guides">"#);
        for guide in &self.guides {
            let colour = guide.colour.css();
            match guide.kind {
                GuideKind::Band { lo, hi } => {
                    let (y1, y2) = (frame.py(hi), frame.py(lo));
                    let h = (y2 - y1).max(0.5);
                    for (x, w) in self.band_columns(frame, guide.series) {
                        let _ = writeln!(
                            s,
                            r#"<rect class="band" x="{x:.1}" y="{y1:.1}" width="{w:.1}" height="{h:.1}" fill="{colour}" fill-opacity="0.22" stroke="{colour}" stroke-opacity="0.7" stroke-width="0.8"><title>{}</title></rect>"#,
                            esc(&guide.label)
                        );
                    }
                }
                GuideKind::Line { y } if y <= self.y.hi => {
                    let py = frame.py(y);
                    let _ = writeln!(
                        s,
                        r#"<line class="guide-line" x1="{plot_left}" x2="{right}" y1="{py:.1}" y2="{py:.1}" stroke="{colour}" stroke-width="1.5" stroke-dasharray="8 5"/>"#,
                    );
                }
                GuideKind::Line { .. } => {}
            }
        }
        let _ = writeln!(s, "</g>");
    }

    /// Where a band is drawn, (left, width) in pixels: across the plot, or on a categorical
    /// axis in its series' column of every slot, so three bands of close values never blend.
    fn band_columns(&self, frame: &Frame, series: Option<usize>) -> Vec<(f64, f64)> {
        let (Some(slot), Some(i)) = (frame.slot(), series) else {
            return vec![(frame.left, PLOT_W)];
        };
        let n = self.series.len();
        let step = frame.column_step(n);
        let w = if step > 0.0 { step } else { slot * 0.5 };
        self.x
            .ticks
            .iter()
            .map(|t| (frame.px(t.at) + frame.column(i, n) - w / 2.0, w))
            .collect()
    }

    /// One label per line above the y axis' top, in rows over the plotting area's top edge,
    /// so the axis stays fitted to the data.
    pub(super) fn svg_off_scale(&self, s: &mut String, g: &Geometry) {
        let labels: Vec<_> = self.off_scale().collect();
        if labels.is_empty() {
            return;
        }
        let _ = writeln!(s, r#"<g id="off-scale" text-anchor="end">"#);
        for (k, guide) in labels.iter().enumerate() {
            let _ = writeln!(
                s,
                r#"<text class="off-scale" x="{:.1}" y="{:.1}" fill="{}">{}</text>"#,
                g.right,
                g.off_scale_top + (k as f64 + 1.0) * LABEL_ROW - 3.0,
                guide.colour.css(),
                esc(&off_scale_label(&guide.label))
            );
        }
        let _ = writeln!(s, "</g>");
    }

    /// Each series, side by side at one x so their whiskers stay apart.
    pub(super) fn svg_data(&self, s: &mut String, g: &Geometry) {
        let n = self.series.len();
        let _ = writeln!(s, r#"<g id="data">"#);
        for (i, series) in self.series.iter().enumerate() {
            self.svg_series(s, &g.frame, series, g.frame.column(i, n));
        }
        let _ = writeln!(s, "</g>");
    }

    /// One series: its line, then each point's whisker and marker.
    fn svg_series(&self, s: &mut String, frame: &Frame, series: &Series, dodge: f64) {
        let colour = series.colour.css();
        let mut pts: Vec<&Point> = series.points.iter().collect();
        pts.sort_by(|a, b| a.x.total_cmp(&b.x));
        let path: Vec<String> = pts
            .iter()
            .map(|p| format!("{:.1},{:.1}", frame.px(p.x) + dodge, frame.py(p.y)))
            .collect();
        let name = esc(&series.name);
        let _ = writeln!(s, r#"<g class="series" data-series="{name}">"#);
        let _ = writeln!(
            s,
            r#"<polyline class="series-line" points="{}" fill="none" stroke="{colour}" stroke-width="2"/>"#,
            path.join(" ")
        );
        for p in &pts {
            let (cx, cy) = (frame.px(p.x) + dodge, frame.py(p.y));
            if let Some((lo, hi)) = p.whisker {
                let d = whisker_path(cx, frame.py(hi), frame.py(lo), hi > self.y.hi);
                let _ = writeln!(
                    s,
                    r#"<path class="whisker" d="{d}" stroke="{colour}" stroke-width="1.2" fill="none"/>"#
                );
            }
            let _ = writeln!(
                s,
                r#"<g class="point" data-series="{name}" data-x="{}" data-y="{:.3}">{}<title>{}</title></g>"#,
                p.x,
                p.y,
                marker(series.marker, cx, cy, &colour),
                esc(&p.tip)
            );
        }
        let _ = writeln!(s, "</g>");
    }
}

/// A whisker at `cx` from `y1` (top) to `y2` in pixels, with caps; one cut at the axis' top
/// ends in an arrowhead instead of its top cap.
fn whisker_path(cx: f64, y1: f64, y2: f64, cut: bool) -> String {
    let top_end = if cut {
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
    format!(
        "{top_end}M{cx:.1},{y1:.1}V{y2:.1}M{:.1},{y2:.1}H{:.1}",
        cx - 3.0,
        cx + 3.0
    )
}

/// The marker's shape centred at (`x`, `y`).
pub(super) fn marker(m: Marker, x: f64, y: f64, colour: &str) -> String {
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
