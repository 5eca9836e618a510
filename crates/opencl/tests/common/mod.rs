//! Shared by the integration tests: the devices to test, or a skip.

#![allow(dead_code)]

use std::process::Command;

use blocksweep_core::conformance::skip_unavailable;
use blocksweep_core::DeviceIdentity;
use blocksweep_opencl::{open, probe, OpenClBackend, OpenClOptions};

/// Every OpenCL device, or `None` after reporting why there is none (which panics when
/// BLOCKSWEEP_REQUIRE names opencl).
pub fn devices() -> Option<Vec<DeviceIdentity>> {
    match probe() {
        Ok(d) if !d.is_empty() => Some(d),
        Ok(_) => {
            skip_unavailable(blocksweep_opencl::API, "probe() found no device");
            None
        }
        Err(e) => {
            skip_unavailable(blocksweep_opencl::API, &e.to_string());
            None
        }
    }
}

/// Opens `d` with default options; a failure to open a listed device is a test failure.
pub fn open_device(d: &DeviceIdentity) -> OpenClBackend {
    open(d.index, &OpenClOptions::default())
        .unwrap_or_else(|e| panic!("open({}) [{}] failed: {e}", d.index, d.name))
}

/// What a child test prints once its assertions have passed.
pub const PASSED: &str = "CHILD ASSERTIONS PASSED";

/// Runs the ignored test `name` of this test binary in a child process through `launcher` (a
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
        out.status.success() && stdout.contains(PASSED),
        "child {name} failed ({:?}):\n{stdout}\n{stderr}",
        out.status
    );
}
