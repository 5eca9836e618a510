//! Shared by the integration tests: the devices to test, or a skip.

#![allow(dead_code)]

use blocksweep_core::conformance::skip_unavailable;
use blocksweep_core::DeviceIdentity;
use blocksweep_vulkan::{open, probe, VulkanBackend, VulkanOptions};

/// Every Vulkan device, or `None` after reporting why there is none (which panics when
/// BLOCKSWEEP_REQUIRE names vulkan).
pub fn devices() -> Option<Vec<DeviceIdentity>> {
    match probe() {
        Ok(d) if !d.is_empty() => Some(d),
        Ok(_) => {
            skip_unavailable(blocksweep_vulkan::API, "probe() found no device");
            None
        }
        Err(e) => {
            skip_unavailable(blocksweep_vulkan::API, &e.to_string());
            None
        }
    }
}

/// Opens `d` without validation; a failure to open a listed device is a test failure.
pub fn open_device(d: &DeviceIdentity) -> VulkanBackend {
    open(d.index, &VulkanOptions { validation: false })
        .unwrap_or_else(|e| panic!("open({}) [{}] failed: {e}", d.index, d.name))
}
