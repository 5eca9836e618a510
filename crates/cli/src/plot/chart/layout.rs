//! Where everything of one chart goes, worked out before anything is drawn: the sizes of text,
//! the rows of x labels, the title's lines, and the canvas, as tall as its content.

use super::legend::LegendEntry;
use super::{Axis, Chart, Scale, Tick};

// Layout, in SVG pixels.
pub(super) const MARGIN: f64 = 16.0;
pub(super) const PLOT_W: f64 = 700.0;
pub(super) const PLOT_H: f64 = 400.0;
const Y_LABELS: f64 = 64.0;
pub(super) const FONT: f64 = 12.0;
pub(super) const TITLE_FONT: f64 = 18.0;
const SUB_FONT: f64 = 13.0;
pub(super) const LABEL_ROW: f64 = 15.0;
const LABEL_GAP: f64 = 5.0;
/// At most this many rows of x labels; a label that fits none is left out (and counted).
const MAX_LABEL_ROWS: usize = 4;
pub(super) const LEGEND_GAP: f64 = 28.0;
pub(super) const LEGEND_ROW: f64 = 20.0;
pub(super) const LEGEND_SWATCH: f64 = 26.0;
/// The strip of bars under the plot: its gap above and its height.
const STRIP_GAP: f64 = 22.0;
pub(super) const STRIP_H: f64 = 64.0;
/// The widest marker (a diamond) and the least room between two slots' markers.
const MARKER_W: f64 = 10.0;
const SLOT_GAP: f64 = 8.0;
/// Columns of one slot at most this far apart, so a slot's markers read as one size.
const COLUMN_MAX: f64 = 14.0;
/// Horizontal spread of the series at one x on a continuous axis, so their whiskers stay apart.
const DODGE: f64 = 5.0;

/// A generous width of `text` at `font` px in a sans-serif face: DejaVu Sans (the widest
/// common default) advances digits by 0.636 em and averages about 0.62 em over text.
pub(super) fn text_width(text: &str, font: f64) -> f64 {
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
fn label_rows(centres: &[f64], widths: &[f64], gap: f64, max_rows: usize) -> Vec<Option<usize>> {
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

/// Data coordinates to pixels.
pub(super) struct Frame {
    pub(super) left: f64,
    pub(super) top: f64,
    x: Axis,
    y: Axis,
    /// The ticks' values in order: the slots of a categorical axis.
    slots: Vec<f64>,
}

impl Frame {
    pub(super) fn px(&self, x: f64) -> f64 {
        let t = match self.x.scale {
            Scale::Linear => (x - self.x.lo) / (self.x.hi - self.x.lo),
            Scale::Category => {
                // The nearest slot's centre: a value between two ticks has no slot of its own.
                let i = (0..self.slots.len())
                    .min_by(|&a, &b| {
                        (self.slots[a] - x)
                            .abs()
                            .total_cmp(&(self.slots[b] - x).abs())
                    })
                    .unwrap_or(0);
                (i as f64 + 0.5) / self.slots.len().max(1) as f64
            }
        };
        self.left + t * PLOT_W
    }

    /// The width of one slot of a categorical axis; `None` on a continuous one.
    pub(super) fn slot(&self) -> Option<f64> {
        (self.x.scale == Scale::Category).then(|| PLOT_W / self.slots.len().max(1) as f64)
    }

    /// How far apart the columns of `n` series are within one slot: the markers of one slot
    /// never reach into the next.
    pub(super) fn column_step(&self, n: usize) -> f64 {
        match self.slot() {
            None => DODGE,
            Some(_) if n < 2 => 0.0,
            Some(w) => ((w - MARKER_W - SLOT_GAP) / (n - 1) as f64).clamp(0.0, COLUMN_MAX),
        }
    }

    /// The offset of series `i` of `n` from its x's centre.
    pub(super) fn column(&self, i: usize, n: usize) -> f64 {
        (i as f64 - (n as f64 - 1.0) / 2.0) * self.column_step(n)
    }

    /// The slot boundaries of a categorical axis, in pixels.
    pub(super) fn slot_edges(&self) -> Vec<f64> {
        match self.slot() {
            None => Vec::new(),
            Some(w) => (0..=self.slots.len())
                .map(|i| self.left + i as f64 * w)
                .collect(),
        }
    }

    pub(super) fn py(&self, y: f64) -> f64 {
        let t = (y - self.y.lo) / (self.y.hi - self.y.lo);
        self.top + PLOT_H - t.clamp(0.0, 1.0) * PLOT_H
    }
}

/// Where everything of one chart goes.
pub(super) struct Geometry<'a> {
    pub(super) legend: Vec<LegendEntry>,
    pub(super) legend_w: f64,
    pub(super) legend_h: f64,
    pub(super) plot_left: f64,
    pub(super) right: f64,
    pub(super) width: f64,
    pub(super) height: f64,
    /// Each title line with its font size.
    pub(super) title: Vec<(String, f64)>,
    /// The top of the rows of off-scale labels, between the title and the plotting area.
    pub(super) off_scale_top: f64,
    pub(super) top: f64,
    pub(super) bottom: f64,
    /// The strip's top and bottom; both `bottom` without a strip.
    pub(super) strip_top: f64,
    pub(super) axis_bottom: f64,
    pub(super) frame: Frame,
    /// The x ticks in order, their centres, and the label row of each (`None`: no room).
    pub(super) ticks: Vec<&'a Tick>,
    pub(super) centres: Vec<f64>,
    pub(super) rows: Vec<Option<usize>>,
    pub(super) unlabelled: usize,
    pub(super) x_title_y: f64,
}

impl Chart {
    /// The sizes and places: the legend's width sets the document's, the title's lines and
    /// the off-scale labels the plot's top, the x labels' rows its bottom, and the lower of the
    /// x title and the legend the document's height.
    pub(super) fn geometry(&self) -> Geometry<'_> {
        let legend = self.legend();
        let legend_w = legend
            .iter()
            .map(|e| text_width(&e.text, FONT))
            .fold(0.0, f64::max)
            + LEGEND_SWATCH
            + 24.0;
        let plot_left = MARGIN + Y_LABELS;
        let width = (plot_left + PLOT_W + LEGEND_GAP + legend_w + MARGIN).ceil();
        let title = self.title_lines(width - 2.0 * MARGIN);
        let off_scale_top = MARGIN + title.iter().map(|(_, f)| f * 1.4).sum::<f64>() + 12.0;
        let off_scale_h = match self.off_scale().count() {
            0 => 0.0,
            n => n as f64 * LABEL_ROW + 4.0,
        };
        let top = off_scale_top + off_scale_h;
        // X labels, placed in rows so none overlaps another.
        let mut ticks: Vec<&Tick> = self.x.ticks.iter().collect();
        ticks.sort_by(|a, b| a.at.total_cmp(&b.at));
        let frame = Frame {
            left: plot_left,
            top,
            x: self.x.clone(),
            y: self.y.clone(),
            slots: ticks.iter().map(|t| t.at).collect(),
        };
        let centres: Vec<f64> = ticks.iter().map(|t| frame.px(t.at)).collect();
        let widths: Vec<f64> = ticks.iter().map(|t| text_width(&t.label, FONT)).collect();
        let rows = label_rows(&centres, &widths, LABEL_GAP, MAX_LABEL_ROWS);
        let used_rows = rows.iter().flatten().max().map_or(1, |r| r + 1);
        let unlabelled = rows.iter().filter(|r| r.is_none()).count();
        let bottom = top + PLOT_H;
        let (strip_top, axis_bottom) = match self.strip {
            Some(_) => (bottom + STRIP_GAP, bottom + STRIP_GAP + STRIP_H),
            None => (bottom, bottom),
        };
        let x_title_y = axis_bottom + 8.0 + used_rows as f64 * LABEL_ROW + 20.0;
        let legend_h = legend.len() as f64 * LEGEND_ROW + 16.0;
        // The x title's descenders end about a third of a font below its baseline.
        let height = (x_title_y + FONT * 0.35).max(top + legend_h) + MARGIN;

        Geometry {
            legend,
            legend_w,
            legend_h,
            plot_left,
            right: plot_left + PLOT_W,
            width,
            height,
            title,
            off_scale_top,
            top,
            bottom,
            strip_top,
            axis_bottom,
            frame,
            ticks,
            centres,
            rows,
            unlabelled,
            x_title_y,
        }
    }

    /// The title's lines wrapped to `width`, each with its font size.
    fn title_lines(&self, width: f64) -> Vec<(String, f64)> {
        let mut lines = Vec::new();
        for (i, line) in self.title.iter().enumerate() {
            let font = if i == 0 { TITLE_FONT } else { SUB_FONT };
            lines.extend(wrap(line, font, width).into_iter().map(|l| (l, font)));
        }
        lines
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
    fn long_lines_wrap_at_semicolons() {
        let text = "Vulkan on llvmpipe (LLVM 15.0.6, 256 bits); OpenCL on pthread-haswell-AMD EPYC 7B13 64-Core Processor";
        let lines = wrap(text, 13.0, 400.0);
        assert_eq!(lines.len(), 2);
        assert!(lines[1].starts_with("OpenCL on"));
        assert_eq!(wrap("short; two", 13.0, 400.0), vec!["short; two"]);
    }
}
