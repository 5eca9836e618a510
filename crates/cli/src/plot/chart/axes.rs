//! The title block, the plotting area with its y grid, and the x axis with its labels.

use std::fmt::Write as _;

use super::layout::{Geometry, FONT, LABEL_ROW, MARGIN, PLOT_H, PLOT_W, TITLE_FONT};
use super::{esc, Axis, Chart, Scale, Tick};

impl Axis {
    /// A linear axis from 0 to `hi` with about six unlabelled grid lines (the values are
    /// printed beside them).
    pub fn from_zero(title: &str, hi: f64) -> Axis {
        Axis {
            title: title.into(),
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
fn nice_ticks(hi: f64, want: usize) -> Vec<f64> {
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

impl Chart {
    /// The title block, centred.
    pub(super) fn svg_title(&self, s: &mut String, g: &Geometry) {
        let mut y = MARGIN;
        let _ = writeln!(s, r#"<g id="title" text-anchor="middle">"#);
        for (line, font) in &g.title {
            y += font * 1.1;
            let _ = writeln!(
                s,
                r#"<text x="{:.1}" y="{y:.1}" font-size="{font}"{}>{}</text>"#,
                g.width / 2.0,
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
    pub(super) fn svg_y_axis(&self, s: &mut String, g: &Geometry) {
        let (plot_left, right, top, frame) = (g.plot_left, g.right, g.top, &g.frame);
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

    /// The vertical grid lines (a categorical axis' slot edges) and the x labels, in rows so
    /// none overlaps another, under the strip where there is one.
    pub(super) fn svg_x_axis(&self, s: &mut String, g: &Geometry) {
        let (top, bottom, axis_bottom) = (g.top, g.bottom, g.axis_bottom);
        let _ = writeln!(s, r#"<g id="x-axis" text-anchor="middle">"#);
        let edges = g.frame.slot_edges();
        let grid: &[f64] = if edges.is_empty() { &g.centres } else { &edges };
        for &c in grid {
            let _ = writeln!(
                s,
                r##"<line x1="{c:.1}" x2="{c:.1}" y1="{top:.1}" y2="{bottom:.1}" stroke="#e4e4e4"/>"##
            );
        }
        for ((t, &c), row) in g.ticks.iter().zip(&g.centres).zip(&g.rows) {
            let Some(row) = row else { continue };
            let label_y = axis_bottom + 8.0 + (*row as f64 + 1.0) * LABEL_ROW - 3.0;
            // A tick down to its label, longer for the lower rows.
            let _ = writeln!(
                s,
                r##"<line x1="{c:.1}" x2="{c:.1}" y1="{axis_bottom:.1}" y2="{:.1}" stroke="#888"/><text class="x-label" x="{c:.1}" y="{label_y:.1}">{}</text>"##,
                label_y - FONT + 1.0,
                esc(&t.label)
            );
        }
        let x_title = match g.unlabelled {
            0 => self.x.title.clone(),
            n => format!("{} ({n} sizes too close to label)", self.x.title),
        };
        let _ = writeln!(
            s,
            r#"<text x="{:.1}" y="{:.1}">{}</text>"#,
            g.plot_left + PLOT_W / 2.0,
            g.x_title_y,
            esc(&x_title)
        );
        let _ = writeln!(s, "</g>");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_round() {
        assert_eq!(nice_ticks(3700.0, 6), vec![0.0, 1000.0, 2000.0, 3000.0]);
        assert_eq!(nice_ticks(6.3, 6), vec![0.0, 2.0, 4.0, 6.0]);
        let ms: Vec<String> = nice_ticks(0.285, 6)
            .iter()
            .map(|&v| tick_label(v, 0.05))
            .collect();
        assert_eq!(ms, ["0.00", "0.05", "0.10", "0.15", "0.20", "0.25"]);
        assert_eq!(nice_ticks(0.0, 6), vec![0.0]);
        assert_eq!(tick_label(2.5, 0.5), "2.5");
        assert_eq!(tick_label(1500.0, 500.0), "1500");
    }
}
