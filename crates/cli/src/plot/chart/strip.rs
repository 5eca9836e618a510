//! The strip under the plotting area: bars on the same x slots as the data, on their own axis
//! from 0 to 100 %, so a second quantity (occupancy) lines up with the sizes without crossing
//! the data's lines.

use std::fmt::Write as _;

use super::layout::{Geometry, FONT, MARGIN, PLOT_W, STRIP_H};
use super::{esc, Chart};

impl Chart {
    /// The strip's frame, its 0 / 50 / 100 % grid, its title, and every bar.
    pub(super) fn svg_strip(&self, s: &mut String, g: &Geometry) {
        let Some(strip) = &self.strip else { return };
        let (left, top, frame) = (g.plot_left, g.strip_top, &g.frame);
        let py = |f: f64| top + STRIP_H - f.clamp(0.0, 1.0) * STRIP_H;
        let _ = writeln!(s, r#"<g id="strip">"#);
        let _ = writeln!(
            s,
            r##"<rect id="strip-area" x="{left}" y="{top:.1}" width="{PLOT_W}" height="{STRIP_H}" fill="none" stroke="#444"/>"##
        );
        for f in [0.0, 0.5, 1.0] {
            let y = py(f);
            let _ = writeln!(
                s,
                r##"<line x1="{left}" x2="{:.1}" y1="{y:.1}" y2="{y:.1}" stroke="#e4e4e4"/><text x="{:.1}" y="{:.1}" text-anchor="end">{:.0}%</text>"##,
                left + PLOT_W,
                left - 6.0,
                y + FONT * 0.35,
                f * 100.0
            );
        }
        let cy = top + STRIP_H / 2.0;
        let _ = writeln!(
            s,
            r#"<text x="{x:.1}" y="{cy:.1}" text-anchor="middle" transform="rotate(-90 {x:.1} {cy:.1})">{}</text>"#,
            esc(&strip.title),
            x = MARGIN + FONT,
        );
        let n = strip.bars.len();
        // One series of bars: as wide as the slot's columns of markers; several: one column each.
        let w = match frame.column_step(self.series.len().max(n)) {
            step if n > 1 && step > 0.0 => step * 0.8,
            _ => frame.slot().map_or(8.0, |w| w * 0.5),
        };
        for (i, bars) in strip.bars.iter().enumerate() {
            let colour = bars.colour.css();
            let dx = if n > 1 { frame.column(i, n) } else { 0.0 };
            for &(x, f) in &bars.values {
                let (y, cx) = (py(f), frame.px(x) + dx);
                let _ = writeln!(
                    s,
                    r#"<rect class="strip-bar" data-x="{x}" x="{:.1}" y="{y:.1}" width="{w:.1}" height="{:.1}" fill="{colour}" fill-opacity="0.55"><title>{}: {:.0}% at {x}</title></rect>"#,
                    cx - w / 2.0,
                    top + STRIP_H - y,
                    esc(&bars.name),
                    f * 100.0
                );
            }
        }
        let _ = writeln!(s, "</g>");
    }
}
