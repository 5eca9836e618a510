//! Shared by the integration tests: opening a device, and running a trial in a child process.

#![allow(dead_code)]

use std::process::Command;

use blocksweep_conformance::{skip_unless_required, Completion};
use blocksweep_core::DeviceIdentity;
use blocksweep_vulkan::{open, VulkanBackend, VulkanOptions};

/// Opens `d` without validation; a failure to open a listed device is a test failure.
pub fn open_device(d: &DeviceIdentity) -> VulkanBackend {
    open(d.index, &VulkanOptions { validation: false })
        .unwrap_or_else(|e| panic!("open({}) [{}] failed: {e}", d.index, d.name))
}

/// Runs this test binary again with `args` (which pick the trial) and `env` set, for what is
/// read from the environment before a test could set it, and asserts that the child exited
/// successfully. Completed when `ran(stdout)` says the trial ran there; else a skip (a
/// failure under BLOCKSWEEP_REQUIRE=vulkan) showing the child's output.
pub fn run_in_child(
    args: &[&str],
    env: &[(&str, &str)],
    ran: impl FnOnce(&str) -> bool,
) -> Completion {
    let run = Command::new(std::env::current_exe().unwrap())
        .args(args)
        .envs(env.iter().copied())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&run.stdout);
    assert!(
        run.status.success(),
        "the child failed:\n{out}{}",
        String::from_utf8_lossy(&run.stderr)
    );
    match ran(&out) {
        true => Completion::Completed,
        false => skip_unless_required(blocksweep_vulkan::API, format!("the child: {out}")),
    }
}
