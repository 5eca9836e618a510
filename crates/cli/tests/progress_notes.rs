//! Progress where stderr is not a terminal (a pipe here): a short run says nothing, and a run
//! whose measured pace exceeds --max-time says so once per API, and goes on.

mod support;

use support::{available, blocksweep, stderr, words};

/// A one-API sweep whose rows each time at least 200 ms of device work: eight of them cannot
/// fit in one second.
fn slow_sweep(extra: &[&str]) -> (bool, String, std::time::Duration) {
    let mut args = words(
        "sweep --backend opencl --size 64x64 --blocks 16,32,64,96,128,192,256,512 \
         --min-time 200 --no-copy --format csv",
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
    let (ok, stderr, took) = slow_sweep(&["--max-time", "1"]);
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
    // Under 10 s, a pipe gets no progress notes ("...; 12 s so far"). (A machine loaded enough
    // to stretch the run past 10 s may get one: then there is nothing to check.)
    if took.as_secs() < 9 {
        assert!(!stderr.contains(" so far"), "{stderr}");
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
