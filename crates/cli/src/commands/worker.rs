//! `blocksweep worker`: one API's worker process (blocksweep_core::worker). Requests come on
//! stdin and answers go out on what was stdout; stdout itself is pointed at stderr first, so
//! that nothing a driver prints can corrupt the answers.

use std::fs::File;
use std::io::{BufReader, BufWriter};
use std::os::fd::FromRawFd;
use std::process::ExitCode;

pub fn run() -> ExitCode {
    // SAFETY: plain descriptor calls at start-up, before any other thread writes to stdout:
    // the answers get a descriptor of their own (a duplicate of stdout), then descriptor 1
    // becomes a duplicate of stderr. The new descriptor is owned by `answers` alone.
    let answers = unsafe {
        let fd = libc::dup(1);
        if fd < 0 || libc::dup2(2, 1) < 0 {
            return ExitCode::from(2);
        }
        File::from_raw_fd(fd)
    };
    let input = BufReader::new(std::io::stdin().lock());
    let code =
        blocksweep_core::worker::serve(blocksweep_apis::all(), input, BufWriter::new(answers));
    ExitCode::from(code.clamp(0, 255) as u8)
}
