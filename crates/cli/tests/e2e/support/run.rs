//! Running the real binary: a run that must succeed, one at a terminal width, and bad input.

use std::ffi::OsStr;
use std::process::Output;

use assert_cmd::Command;

pub fn blocksweep() -> Command {
    Command::cargo_bin("blocksweep").expect("the blocksweep binary is built for its tests")
}

/// The words of a command line whose arguments hold no space: `words("sweep --reps 2")`.
pub fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// The run's stderr, as text.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// Runs the binary with `args`, expects success (showing stderr otherwise), returns stdout.
pub fn succeeds<S: AsRef<OsStr>>(args: &[S]) -> String {
    let out = blocksweep().args(args).output().expect("run blocksweep");
    assert!(
        out.status.success(),
        "{:?} failed: {}",
        args.iter()
            .map(|a| a.as_ref().to_owned())
            .collect::<Vec<_>>(),
        stderr(&out)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Runs the binary at `COLUMNS=columns` (BLOCKSWEEP_WIDE unset); returns (exit code, stdout,
/// stderr).
pub fn run_at(columns: &str, args: &[&str]) -> (Option<i32>, String, String) {
    let out = blocksweep()
        .env("COLUMNS", columns)
        .env_remove("BLOCKSWEEP_WIDE")
        .args(args)
        .output()
        .expect("run blocksweep");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr(&out),
    )
}

/// [`run_at`] that must exit 0; returns stdout.
pub fn succeeds_at(columns: &str, args: &[&str]) -> String {
    let (code, stdout, stderr) = run_at(columns, args);
    assert_eq!(code, Some(0), "{args:?}: {stderr}");
    stdout
}

/// Runs the binary, expects exit code 2 and a one-line error containing `needle`.
pub fn bad_input(args: &[&str], needle: &str) {
    bad_input_of(blocksweep(), args, needle);
}

/// [`bad_input`] with BLOCKSWEEP_TRACE=1, which prints a line as each phase (probing an API,
/// opening it, making the frame) ends: the one line allowed is the error, so the input was
/// refused before any phase ran.
pub fn bad_input_before_any_phase(args: &[&str], needle: &str) {
    let mut cmd = blocksweep();
    cmd.env("BLOCKSWEEP_TRACE", "1");
    bad_input_of(cmd, args, needle);
}

fn bad_input_of(mut cmd: Command, args: &[&str], needle: &str) {
    let out = cmd.args(args).output().unwrap();
    let stderr = stderr(&out);
    assert_eq!(
        out.status.code(),
        Some(2),
        "{args:?}: exit {:?}, stderr: {stderr}",
        out.status.code()
    );
    assert!(
        stderr.contains(needle),
        "{args:?}: stderr {stderr:?} lacks {needle:?}"
    );
    assert_eq!(
        stderr.trim_end().lines().count(),
        1,
        "{args:?}: error must be one line: {stderr:?}"
    );
    assert!(
        !stderr.contains("panicked") && !stderr.contains("backtrace"),
        "{stderr}"
    );
    assert!(stderr.starts_with("blocksweep: error: "), "{stderr}");
}
