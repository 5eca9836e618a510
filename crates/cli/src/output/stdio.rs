//! stdout and stderr without `print!`'s panics ("failed printing to stdout: Broken pipe",
//! "No space left on device" on /dev/full, exit code 101).
//!
//! - Results go through [`print()`]. When the reader of stdout has gone
//!   (`blocksweep limits | head -1`) the process ends at once, quietly, with status 0, as
//!   ripgrep does: the reader asked for no more. Temporary output files in flight are removed
//!   first. Any other error (ENOSPC on /dev/full, EIO) comes back as an error whose text starts
//!   "writing to stdout: ", for `main` to print as one line with exit code 1.
//! - Messages go through [`eprint_line`] (the `warn!` macro): an error writing them is ignored,
//!   since stderr is where it would be reported.

use std::io::{self, Write};

/// Writes `text` to stdout and flushes it. See the module doc for what errors do.
pub fn print(text: &str) -> io::Result<()> {
    write_stdout(text.as_bytes())
}

/// Writes bytes to stdout (file descriptor 1) and flushes them: a closed pipe ends the process
/// quietly (status 0), any other error is returned as "writing to stdout: ...".
pub fn write_stdout(bytes: &[u8]) -> io::Result<()> {
    let mut out = io::stdout().lock();
    match out.write_all(bytes).and_then(|()| out.flush()) {
        Ok(()) => Ok(()),
        Err(e) => Err(stdout_error(e)),
    }
}

/// A stdout write error: ends the process quietly on a closed pipe, else names stdout.
pub(crate) fn stdout_error(e: io::Error) -> io::Error {
    if e.kind() == io::ErrorKind::BrokenPipe {
        super::cleanup::remove_all();
        // Nothing is left to say to a reader that has gone; `exit` skips destructors (no more
        // flushes to the closed pipe).
        std::process::exit(0);
    }
    io::Error::new(
        e.kind(),
        format!("writing to stdout: {}", super::describe(&e)),
    )
}

/// Writes one line to stderr, ignoring any error.
pub fn eprint_line(text: &str) {
    let mut s = String::with_capacity(text.len() + 1);
    s.push_str(text);
    s.push('\n');
    let _ = io::stderr().lock().write_all(s.as_bytes());
}
