//! How wide text output may be (the [`Layout`] handed to the core's renderers), and which
//! format a `--format` choice names.
//!
//! Width: `--wide` or `BLOCKSWEEP_WIDE=1` lifts the limit; else `COLUMNS` when it is set (as
//! `ls` and hyperfine read it); else the terminal's own width when stdout is one; else 100.
//! Files are always 100 columns unless `--wide` (or BLOCKSWEEP_WIDE) lifts the limit: they are
//! read later, elsewhere, so the terminal they were written from must not shape them.

use std::io::IsTerminal;

use blocksweep_render::layout::{Layout, DEFAULT_WIDTH};
use blocksweep_render::Format;

use crate::args::FormatChoice;

/// The format `--format` names.
pub fn format(choice: FormatChoice) -> Format {
    match choice {
        FormatChoice::Table => Format::Table,
        FormatChoice::Markdown => Format::Markdown,
        FormatChoice::Csv => Format::Csv,
        FormatChoice::Json => Format::Json,
    }
}

/// The layout from `--wide` and the environment, before looking at any terminal.
fn from_env(wide: bool) -> Option<Layout> {
    if wide || std::env::var("BLOCKSWEEP_WIDE").is_ok_and(|v| !v.is_empty() && v != "0") {
        return Some(Layout::WIDE);
    }
    std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok())
        .filter(|&c| c > 0)
        .map(Layout::new)
}

/// For stdout; `wide`: `--wide`.
pub fn stdout(wide: bool) -> Layout {
    from_env(wide)
        .or_else(|| terminal_width().map(Layout::new))
        .unwrap_or_else(|| Layout::new(DEFAULT_WIDTH))
}

/// For an output file; `wide`: `--wide`. A file holds everything (verbose): it is read later,
/// by someone who may want the details; and one width, whatever `COLUMNS` says.
pub fn file(wide: bool) -> Layout {
    let wide = wide || std::env::var("BLOCKSWEEP_WIDE").is_ok_and(|v| !v.is_empty() && v != "0");
    match wide {
        true => Layout::WIDE,
        false => Layout::new(DEFAULT_WIDTH),
    }
    .verbose(true)
}

/// The terminal's width when stdout is a terminal.
fn terminal_width() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    // SAFETY: winsize is four integers, for which all zero bytes are a valid value.
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGWINSZ writes one winsize into `ws`, owned here and alive for the call; on
    // failure nothing is read.
    let rc = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) };
    (rc == 0 && ws.ws_col > 0).then_some(ws.ws_col as usize)
}
