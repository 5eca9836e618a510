//! Every kind of bad input: one line on stderr, exit code 2, never a panic.

use crate::support::{bad_input, succeeds};

#[test]
fn block_lists() {
    bad_input(&["sweep", "--blocks", "0"], "block size 0");
    bad_input(&["sweep", "--blocks", "abc"], "'abc' is not a block size");
    bad_input(&["sweep", "--blocks", "64..32"], "start is above its end");
    bad_input(&["sweep", "--blocks", "32x0x1"], "block size 0");
    bad_input(&["sweep", "--blocks", ""], "block list is empty");
}

#[test]
fn sizes_and_counts() {
    bad_input(&["sweep", "--size", "0x10"], "no pixels");
    bad_input(&["sweep", "--size", "4k"], "expected WIDTHxHEIGHT");
    bad_input(&["sweep", "--size", "100000x100000"], "2^32");
    bad_input(&["sweep", "--reps", "0"], "--reps");
    bad_input(&["sweep", "--reps", "ten"], "--reps");
    bad_input(&["sweep", "--warmups=-1"], "--warmups");
    bad_input(&["sweep", "--warmups", "-1"], "-1");
    bad_input(&["sweep", "--grid", "0"], "at least one block");
    bad_input(&["sweep", "--grid", "lots"], "not a grid policy");
    bad_input(&["sweep", "--seed", "x"], "--seed");
    bad_input(
        &["sweep", "--max-noise", "0"],
        "is not a percentage above 0",
    );
    bad_input(&["sweep", "--max-noise", "lots"], "is not a percentage");
    bad_input(&["sweep", "--max-noise", "1%", "--reps", "5"], "--reps");
    bad_input(&["sweep", "--max-noise-time", "100"], "--max-noise");
}

#[test]
fn names() {
    bad_input(&["sweep", "--backend", "metal"], "metal");
    bad_input(&["limits", "--backend", "directx"], "directx");
    bad_input(&["sweep", "--format", "xml"], "xml");
    bad_input(&["frobnicate"], "frobnicate");
}

#[test]
fn contradicting_flags() {
    // --quiet prints nothing and --verbose prints more: asked together, one line says so.
    bad_input(
        &["sweep", "--quiet", "--verbose"],
        "'--quiet' cannot be used with '--verbose'",
    );
}

#[test]
fn unknown_device() {
    bad_input(
        &["sweep", "--device", "no-such-gpu-xyz", "--size", "64x64"],
        "no-such-gpu-xyz",
    );
    bad_input(
        &["limits", "--device", "no-such-gpu-xyz"],
        "no-such-gpu-xyz",
    );
}

#[test]
fn help_has_examples() {
    for sub in ["devices", "limits", "sweep"] {
        let s = succeeds(&[sub, "--help"]);
        assert!(s.contains("Example"), "{sub} --help has no example:\n{s}");
    }
}

/// BLOCKSWEEP_APIS naming no API of this build: one line naming the variable and the APIs there
/// are, exit 2 (it said "no GPU API found a device ()").
#[test]
fn an_environment_that_names_no_api() {
    let out = crate::support::blocksweep()
        .env("BLOCKSWEEP_APIS", "nothing")
        .args(["sweep", "--size", "64x64"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 1, "{err}");
    assert!(
        lines[0].contains("BLOCKSWEEP_APIS=\"nothing\" names no API"),
        "{err}"
    );
    assert!(lines[0].contains("cuda, vulkan, opencl, webgpu"), "{err}");
}
