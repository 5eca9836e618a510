//! The core's shared conformance checks, on every Vulkan device this machine has.

mod common;

blocksweep_core::conformance_tests!(common::devices, common::open_device);
