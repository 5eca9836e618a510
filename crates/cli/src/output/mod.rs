//! Everything the binary writes: results to stdout, messages to stderr, and `--output` /
//! `--plot` files. docs/output-files.md states what the files promise.
//!
//! - [`stdio`]: stdout and stderr without panics. A closed pipe on stdout ends the process
//!   quietly with status 0 (ripgrep's choice); any other stdout error is an error to return;
//!   a failing stderr is ignored (there is nowhere left to say so).
//! - [`OutputTarget`]: an output path checked before anything is measured, then written
//!   atomically (regular files: temporary file, fsync, rename, fsync of the directory) or
//!   through (FIFOs, character devices, this process's own descriptors), symlinks followed.
//! - [`files`]: a command's `--output` files with their formats, and the plot ([`crate::results`]
//!   rewrites the sweep's and the tune's as they measure). [`width`]: how wide tables may be.
//! - `cleanup` (private): the temporary files in flight, removed on SIGINT, SIGTERM or SIGHUP
//!   before the process dies of that signal.

/// One line on stderr, prefixed "blocksweep: ", that never panics (stderr may be /dev/full or
/// closed): the replacement for `eprintln!`. `main.rs` declares this module first, with
/// `#[macro_use]`, so every module after it can call `warn!`; defined before this module's
/// own children for the same reason.
macro_rules! warn {
    ($($arg:tt)*) => {
        $crate::output::stdio::eprint_line(&format!("blocksweep: {}", format_args!($($arg)*)))
    };
}

mod cleanup;
pub mod files;
pub mod stdio;
mod target;
pub mod width;

pub use target::OutputTarget;

/// Records what the output files hold after a save, for the line a signal's exit prints:
/// "5 rows kept in int.json" (or, before the first row, that they are as they were).
pub fn kept_on_interrupt(rows: usize, files: &[&std::path::Path]) {
    let names: Vec<String> = files.iter().map(|p| p.display().to_string()).collect();
    if names.is_empty() {
        return;
    }
    let names = blocksweep_render::and_list(&names);
    cleanup::set_kept(match rows {
        0 => format!("no row was measured yet; {names} left as it was"),
        1 => format!("1 row kept in {names}"),
        n => format!("{n} rows kept in {names}"),
    });
}

/// Starts watching SIGINT, SIGTERM and SIGHUP (once), before any driver installs a handler of
/// its own: one installed later hands the signal on to this one when it is done.
pub fn watch_signals() {
    cleanup::install();
}

/// Held across a save and its [`kept_on_interrupt`]: a signal meanwhile waits for both.
pub fn saving() -> std::sync::MutexGuard<'static, ()> {
    cleanup::saving()
}

/// An I/O error's text without Rust's " (os error N)" suffix: "No space left on device".
pub fn describe(e: &std::io::Error) -> String {
    let s = e.to_string();
    match s.rfind(" (os error ") {
        Some(i) if s.ends_with(')') => s[..i].to_string(),
        _ => s,
    }
}
