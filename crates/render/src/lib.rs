//! blocksweep's presentation, apart from the measurement library (as ripgrep keeps its printer
//! in grep-printer): every command's result, which blocksweep-core computes as data, drawn in
//! every format the commands offer. A [`Render`] implementation gives the table (a terminal,
//! fitted to its width), GitHub markdown, CSV and JSON of one result type, so every command
//! honours every format.
//!
//! | result | command | drawn by |
//! |---|---|---|
//! | a sweep of one device | `sweep` | `text` (its `merged` table), `csv` |
//! | sweeps of several devices | `sweep --device all` | [`Runs`] |
//! | devices of every API | `devices` | `devices` |
//! | launch limits | `limits` | [`limits`] |
//! | portable assumptions | `validate` | `validate`, `claim`, `subgroup` |
//! | runs side by side | `compare` | [`compare`] |
//! | the lab's sweeps | `shapes`, `tail` | [`lab`] |
//! | a tune | `sweep` that tunes | [`tune::Tunes`] |
//! | what a launch costs | `launch-cost` | [`launch_cost`] |
//!
//! Text layout (widths, footnotes, wrapping) lives in [`layout`].

#![warn(clippy::undocumented_unsafe_blocks)]

use std::path::Path;

pub use blocksweep_core::report::to_json;

mod across;
mod claim;
#[cfg(test)]
mod clocks_tests;
#[cfg(test)]
mod cold_tests;
pub mod compare;
mod csv;
mod devices;
#[cfg(test)]
mod export_tests;
mod fleet;
pub mod lab;
pub mod launch_cost;
pub mod layout;
pub mod limits;
#[cfg(test)]
mod metal_like_tests;
#[cfg(test)]
mod render_tests;
mod subgroup;
pub mod targets;
mod text;
pub mod tune;
mod validate;

pub use self::fleet::{heading, render_runs, Runs};
pub use self::layout::Layout;
pub use blocksweep_core::words::and_list;

/// One command's result, in every format the commands offer.
pub trait Render {
    /// The table (`md` false) or markdown (`md` true) text; the two share one layout of the
    /// same content.
    fn text(&self, layout: Layout, md: bool) -> String;
    /// For a terminal: fitted to `layout` (long notes as footnotes, columns left out or split,
    /// prose wrapped).
    fn table(&self, layout: Layout) -> String {
        self.text(layout, false)
    }
    /// GitHub-flavoured markdown: every column; prose wrapped at `layout`.
    fn markdown(&self, layout: Layout) -> String {
        self.text(layout, true)
    }
    fn csv(&self) -> String;
    fn json(&self) -> String;

    fn render(&self, format: Format, layout: Layout) -> String {
        match format {
            Format::Table => self.table(layout),
            Format::Markdown => self.markdown(layout),
            Format::Csv => self.csv(),
            Format::Json => self.json(),
        }
    }
}

/// CSV from records (the first is the header); writing to memory cannot fail.
pub fn to_csv(records: &[Vec<String>]) -> String {
    let mut w = ::csv::Writer::from_writer(Vec::new());
    for rec in records {
        let _ = w.write_record(rec);
    }
    String::from_utf8(w.into_inner().unwrap_or_default()).unwrap_or_default()
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    Table,
    Markdown,
    Csv,
    Json,
}

impl Format {
    /// The extensions an output file may have, and what each means.
    pub const EXTENSIONS: [(&'static str, Format); 6] = [
        ("json", Format::Json),
        ("csv", Format::Csv),
        ("md", Format::Markdown),
        ("markdown", Format::Markdown),
        ("txt", Format::Table),
        ("text", Format::Table),
    ];

    /// The format an output file's extension names: `Ok(None)` for a path without an
    /// extension, `Err(extension)` for one that names no format (`.xlsx`).
    pub fn of_extension(path: &Path) -> Result<Option<Format>, String> {
        let Some(ext) = path.extension() else {
            return Ok(None);
        };
        let ext = ext.to_string_lossy().to_ascii_lowercase();
        Format::EXTENSIONS
            .iter()
            .find(|(e, _)| *e == ext)
            .map(|(_, f)| Some(*f))
            .ok_or(ext)
    }
}
