//! The binary's stdout and stderr when they fail (a full device, a reader that has gone),
//! input that never ends, and block sizes whose product overflows: one line and a chosen exit
//! code each, never a panic (exit code 101).

#![warn(clippy::undocumented_unsafe_blocks)]

use std::fs::File;
use std::os::fd::FromRawFd;
use std::process::{Output, Stdio};
use std::time::Duration;

use crate::support::{bad_input, blocksweep};

/// Whether any API has a device here: one is enough, so a missing one is no skip.
fn any_api() -> bool {
    let any = !crate::support::physical_devices().is_empty();
    if !any {
        blocksweep_conformance::note_skip("no API has a device here");
    }
    any
}

fn no_panic(out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(101), "panicked: {stderr}");
    assert!(!stderr.contains("panicked"), "{stderr}");
}

fn dev_full() -> Stdio {
    Stdio::from(File::options().write(true).open("/dev/full").unwrap())
}

/// The write end of a pipe whose read end is already closed: every write is EPIPE.
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe(2) writes.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: the read end is new and owned by nothing else; it is closed once, here.
    unsafe { libc::close(fds[0]) };
    // SAFETY: the write end is new and owned by nothing else; the File takes it.
    Stdio::from(unsafe { File::from_raw_fd(fds[1]) })
}

fn run(args: &[&str], stdout: Stdio, stderr: Stdio) -> Output {
    std::process::Command::new(assert_cmd::cargo::cargo_bin("blocksweep"))
        .args(args)
        .stdout(stdout)
        .stderr(stderr)
        .output()
        .unwrap()
}

#[test]
fn stdout_on_a_full_device_is_one_line_and_exit_1() {
    let mut commands: Vec<&[&str]> = vec![&["devices"], &["devices", "--format", "json"]];
    if any_api() {
        commands.push(&["limits"]);
        commands.push(&["limits", "--format", "csv"]);
    }
    for args in commands {
        let out = run(args, dev_full(), Stdio::piped());
        no_panic(&out);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{args:?}: {stderr}");
        assert_eq!(
            stderr, "blocksweep: error: writing to stdout: No space left on device\n",
            "{args:?}"
        );
    }
    let out = run(&["--help"], dev_full(), Stdio::piped());
    no_panic(&out);
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "blocksweep: error: writing to stdout: No space left on device\n"
    );
}

#[test]
fn stderr_on_a_full_device_changes_no_exit_code() {
    // Messages that cannot be written are dropped; the exit code still tells.
    let out = run(&["frobnicate"], Stdio::null(), dev_full());
    assert_eq!(out.status.code(), Some(2));
    let out = run(
        &["limits", "--device", "no-such-gpu-xyz"],
        Stdio::null(),
        dev_full(),
    );
    assert_eq!(out.status.code(), Some(2));
    let out = run(&["devices"], Stdio::null(), dev_full());
    assert_eq!(out.status.code(), Some(0));
    let out = run(
        &["compare", "/dev/null", "/dev/null"],
        Stdio::null(),
        dev_full(),
    );
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn a_reader_that_has_gone_ends_the_run_quietly() {
    let mut commands: Vec<&[&str]> =
        vec![&["devices"], &["devices", "--format", "json"], &["--help"]];
    if any_api() {
        commands.push(&["limits"]);
        commands.push(&["limits", "--format", "json"]);
    }
    for args in commands {
        let out = run(args, closed_pipe(), Stdio::piped());
        no_panic(&out);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(0), "{args:?}: {stderr}");
        assert_eq!(stderr, "", "{args:?}: nothing to say about a closed pipe");
    }
}

#[test]
fn compare_caps_what_it_reads() {
    // /dev/zero never ends: without the cap this would run until the timeout kills it.
    let out = blocksweep()
        .args(["compare", "/dev/zero", "x.json"])
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    no_panic(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert_eq!(
        stderr,
        "blocksweep: error: /dev/zero holds more than 64 MiB: not a blocksweep results file\n"
    );
    bad_input(
        &["compare", "/", "x.json"],
        "/ is a directory, not a results file",
    );
    bad_input(&["compare", "/dev/null", "x.json"], "/dev/null: not JSON");
}

#[test]
fn block_products_that_overflow_are_bad_input() {
    // The product used to wrap to 12884901887 threads (a panic in a debug build).
    bad_input(
        &["sweep", "--blocks", "4294967295x4294967295x4294967295"],
        "more than the 4294967295 (2^32 - 1) a block may have",
    );
    bad_input(
        &["sweep", "--blocks", "64,65536x65536"],
        "block '65536x65536' has 4294967296 threads",
    );
}
