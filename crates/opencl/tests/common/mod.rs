//! Shared by the integration tests: opening a device, and running a trial in a child process.

#![allow(dead_code)]

use std::process::Command;

use blocksweep_core::DeviceIdentity;
use blocksweep_opencl::{open, OpenClBackend, OpenClOptions};

/// Opens `d` with default options; a failure to open a listed device is a test failure.
pub fn open_device(d: &DeviceIdentity) -> OpenClBackend {
    open(d.index, &OpenClOptions::default())
        .unwrap_or_else(|e| panic!("open({}) [{}] failed: {e}", d.index, d.name))
}

/// What a child trial prints once its assertions have passed.
pub const PASSED: &str = "CHILD ASSERTIONS PASSED";

/// Runs the ignored trial `name` of this test binary in a child process through `launcher` (a
/// command line that ends with the binary's path, with the environment the case needs), and
/// asserts that it ran and passed. For what can only be set before OpenCL is first loaded.
pub fn run_child(launcher: &mut Command, name: &str) {
    let out = launcher
        .args([
            "--exact",
            name,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .output()
        .expect("run the test binary again");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success() && stdout.contains(PASSED) && stdout.contains("1 passed"),
        "child {name} failed ({:?}):\n{stdout}\n{stderr}",
        out.status
    );
}
