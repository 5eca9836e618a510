//! Progress where stderr is not a terminal (a pipe here): nothing unless --progress asks, and
//! then a short run says nothing; a run whose measured pace exceeds --max-time says so once
//! per API either way, and goes on.

use crate::support::{available, blocksweep, stderr, words};

/// A one-API sweep whose rows each time at least 200 ms of device work (half of --min-time,
/// what the protocol holds a batch to however its warm-ups went): eight of them cannot fit in
/// one second.
fn slow_sweep(extra: &[&str]) -> (bool, String, std::time::Duration) {
    let mut args = words(
        "sweep --backend opencl --size 64x64 --blocks 16,32,64,96,128,192,256,512 \
         --min-time 400 --no-copy --format csv",
    );
    args.extend_from_slice(extra);
    let started = std::time::Instant::now();
    let out = blocksweep().args(&args).output().unwrap();
    (out.status.success(), stderr(&out), started.elapsed())
}

#[test]
fn a_run_slower_than_max_time_is_warned_about_once_and_goes_on() {
    if !available("opencl") {
        return;
    }
    let (ok, stderr, took) = slow_sweep(&["--max-time", "1", "--progress"]);
    assert!(ok, "{stderr}");
    let warnings: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with("blocksweep: warning: OpenCL: "))
        .collect();
    assert_eq!(warnings.len(), 1, "one warning for the API:\n{stderr}");
    // Either the pace of the rows so far, or one row already past the limit.
    assert!(
        warnings[0].contains("than --max-time 1 s") && warnings[0].contains("Ctrl-C"),
        "{stderr}"
    );
    // A pipe gets no progress note in the first 10 s and at most one per 10 s after: checked
    // on the times the notes give ("...; 12 s so far"), so a loaded machine's slower run is
    // checked too (it was skipped past 9 s).
    let notes: Vec<&str> = stderr.lines().filter(|l| l.ends_with(" so far")).collect();
    assert!(
        notes.len() as u64 <= took.as_secs() / 10,
        "in {took:?}:\n{stderr}"
    );
    for note in notes {
        let (_, at) = note.rsplit_once("; ").unwrap();
        let secs: Option<u64> = at.strip_suffix(" s so far").and_then(|n| n.parse().ok());
        assert!(secs.is_none_or(|s| s >= 10), "a note before 10 s: {note}");
    }
}

#[test]
fn max_time_zero_never_warns() {
    if !available("opencl") {
        return;
    }
    let (ok, stderr, _) = slow_sweep(&["--max-time", "0"]);
    assert!(ok, "{stderr}");
    assert!(!stderr.contains("warning"), "{stderr}");
}
