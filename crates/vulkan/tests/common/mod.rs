//! Shared by the integration tests: opening a device.

#![allow(dead_code)]

use blocksweep_core::DeviceIdentity;
use blocksweep_vulkan::{open, VulkanBackend, VulkanOptions};

/// Opens `d` without validation; a failure to open a listed device is a test failure.
pub fn open_device(d: &DeviceIdentity) -> VulkanBackend {
    open(d.index, &VulkanOptions { validation: false })
        .unwrap_or_else(|e| panic!("open({}) [{}] failed: {e}", d.index, d.name))
}
