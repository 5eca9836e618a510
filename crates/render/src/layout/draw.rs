//! tabled draws the fitted table: plain text with bottom-aligned multi-line headers and
//! section lines, or GitHub markdown.

use tabled::builder::Builder;
use tabled::settings::object::{Columns, Rows};
use tabled::settings::{Alignment, Padding, Span, Style};

use super::table::{Align, Row, Table, SEP};
use super::width_of;
use super::wrap::wrap_line;

impl Table {
    /// Draws the `shown` columns with tabled: the header (bottom-aligned, one line per `\n`)
    /// and the rows, cells of wrap columns wrapped at `widths`, columns two spaces apart; a
    /// section's title is a line of its own between the rows.
    pub(super) fn lines(&self, shown: &[usize], widths: &[usize], width: usize) -> String {
        let mut b = Builder::default();
        // A wrap column's header wraps too, or it would hold the column at its own width.
        let heads: Vec<String> = shown
            .iter()
            .map(|&c| match self.columns[c].wrap_min {
                Some(_) => self.columns[c]
                    .head
                    .split('\n')
                    .map(|l| wrap_line(l, widths[c], ""))
                    .collect::<Vec<_>>()
                    .join("\n"),
                None => self.columns[c].head.clone(),
            })
            .collect();
        let depth = heads
            .iter()
            .map(|h| h.split('\n').count())
            .max()
            .unwrap_or(1);
        b.push_record(heads);
        let heads = depth;
        // Lines each record takes, and the sections to put before data row k.
        let mut heights = vec![heads];
        let mut sections: Vec<(usize, String)> = Vec::new();
        for row in &self.rows {
            match row {
                Row::Section(t) => sections.push((heights.len(), wrap_line(t, width, "  "))),
                Row::Cells(cells) => {
                    let wrapped: Vec<String> = shown
                        .iter()
                        .map(|&c| match self.columns[c].wrap_min {
                            Some(_) if width_of(&cells[c]) > widths[c] => {
                                wrap_line(&cells[c], widths[c], "")
                            }
                            _ => cells[c].clone(),
                        })
                        .collect();
                    heights.push(
                        wrapped
                            .iter()
                            .map(|w| w.split('\n').count())
                            .max()
                            .unwrap_or(1),
                    );
                    b.push_record(wrapped);
                }
            }
        }
        let mut t = b.build();
        t.with(Style::empty())
            .with(Padding::new(0, SEP.len(), 0, 0))
            .modify(Columns::last(), Padding::new(0, 0, 0, 0))
            .modify(Rows::first(), Alignment::bottom());
        for (i, &c) in shown.iter().enumerate() {
            if self.columns[c].align == Align::Right {
                t.modify(Columns::one(i), Alignment::right());
            }
        }
        let drawn = t.to_string();
        let mut lines = drawn.lines().map(|l| l.trim_end().to_string());
        let mut out: Vec<String> = Vec::new();
        for (record, &h) in heights.iter().enumerate() {
            out.extend(
                sections
                    .iter()
                    .filter(|(k, _)| *k == record)
                    .map(|(_, t)| t.clone()),
            );
            out.extend(lines.by_ref().take(h));
        }
        out.extend(
            sections
                .iter()
                .filter(|(k, _)| *k == heights.len())
                .map(|(_, t)| t.clone()),
        );
        out.join("\n")
    }

    /// The table as GitHub-flavoured markdown, drawn by tabled: every column, one header
    /// line, the alignment row, cells padded so the source reads as a table too.
    pub fn markdown(&self) -> String {
        let n = self.columns.len();
        let esc = |s: &str| s.replace('|', "\\|");
        let heads: Vec<String> = self.columns.iter().map(|c| esc(&c.flat_head())).collect();
        let mut widths: Vec<usize> = heads.iter().map(|h| width_of(h).max(3)).collect();
        for row in &self.rows {
            if let Row::Cells(cells) = row {
                for c in 0..n {
                    widths[c] = widths[c].max(width_of(&esc(&cells[c])));
                }
            }
        }
        let mut b = Builder::default();
        b.push_record(heads);
        b.push_record(widths.iter().zip(&self.columns).map(|(w, col)| {
            let dashes = "-".repeat(w.saturating_sub(1));
            match col.align {
                Align::Right => format!("{dashes}:"),
                Align::Left => format!(":{dashes}"),
            }
        }));
        // A section's title spans the row, so that it does not widen the first column.
        let mut sections = Vec::new();
        for row in &self.rows {
            match row {
                Row::Cells(cells) => b.push_record(cells.iter().map(|c| esc(c))),
                Row::Section(t) => {
                    sections.push(b.count_records());
                    let mut v = vec![format!("**{}**", esc(t))];
                    v.resize(n, String::new());
                    b.push_record(v);
                }
            }
        }
        let mut t = b.build();
        t.with(Style::empty().left('|').right('|').vertical('|'));
        for (i, col) in self.columns.iter().enumerate() {
            if col.align == Align::Right {
                t.modify(Columns::one(i), Alignment::right());
            }
        }
        for r in sections {
            t.modify((r, 0), (Span::column(n as isize), Alignment::left()));
        }
        t.to_string()
    }
}
