//! Fitting text output to a width (hyperfine, clinfo and vulkaninfo stay readable in an
//! 80–100 column terminal): tables that drop their least useful columns or split, long per-row
//! text moved into numbered footnotes, cells of text columns wrapped, prose wrapped.
//!
//! This file is the fitting policy (which columns wrap, drop or split, the footnotes); tabled
//! draws the tables.
//!
//! Widths are counted in characters: every glyph the reports use (≈, ≠, ≥, ±, —, ×, ÷) is one
//! column wide in a terminal.

mod draw;
mod notes;
mod table;
mod wrap;

pub use notes::Notes;
pub use table::{Align, Column, Overflow, Table};
#[cfg(test)]
use wrap::is_native_name;
pub use wrap::{wrap, wrap_line};

/// Where the terminal width cannot be known (a pipe, a file, no `COLUMNS`).
pub const DEFAULT_WIDTH: usize = 100;

/// Narrower than this, tables cannot be made to fit; text is laid out for this width.
pub const MIN_WIDTH: usize = 40;

/// How wide text output may be, and how much of it. Machine formats (CSV, JSON) ignore it and
/// hold everything; markdown uses the width for prose only (GitHub lays tables out itself, so
/// markdown tables keep every column).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Layout {
    pub width: usize,
    /// Everything: each API's own table under several APIs, how each was timed and built
    /// (`--verbose`, and every file). Off, a report says its answer and its evidence only.
    pub verbose: bool,
}

impl Layout {
    /// No limit: every column, no wrapping (`COLUMNS=1000`, `--wide`).
    pub const WIDE: Layout = Layout {
        width: usize::MAX,
        verbose: false,
    };

    /// `width` columns, at least [`MIN_WIDTH`].
    pub fn new(width: usize) -> Layout {
        Layout {
            width: width.max(MIN_WIDTH),
            verbose: false,
        }
    }

    /// The same width, with everything or not.
    pub fn verbose(self, verbose: bool) -> Layout {
        Layout { verbose, ..self }
    }
}

impl Default for Layout {
    fn default() -> Self {
        Layout::new(DEFAULT_WIDTH)
    }
}

/// Display width of `s` in a terminal.
pub fn width_of(s: &str) -> usize {
    s.chars().count()
}

/// The widest line of `text`, in characters.
pub fn max_line_width(text: &str) -> usize {
    text.lines().map(width_of).max().unwrap_or(0)
}

#[cfg(test)]
mod tests;
