//! The core's shared conformance checks, on every OpenCL device this machine has.

mod common;

blocksweep_core::conformance_tests!(common::devices, common::open_device);
