//! blocksweep's core: everything that is the same for CUDA, Vulkan and OpenCL.
//!
//! The backends (`blocksweep-cuda`, `blocksweep-vulkan`, `blocksweep-opencl`) only implement
//! [`Backend`]: device identity and limits, upload, poison, a timed dispatch and read-back.
//! Timing statistics, verification, grid sizing and reporting live here, once, so that the
//! three APIs are measured and checked by the same code (the BabelStream lesson).

pub mod backend;
pub mod blocks;
pub mod conformance;
pub mod frame;
pub mod grid;
pub mod hostmem;
pub mod limits;
pub mod physical;
pub mod report;

pub mod sweep;
#[cfg(test)]
mod testing;
pub mod validate;
pub mod verify;

pub use backend::{
    Api, Backend, BackendError, BackendResult, DeviceIdentity, DeviceKind, ErrorKind, KernelFacts,
    KernelVariant, Launch, OccupancySuggestion, Residency, TimerInfo,
};
pub use blocks::{BlockSize, BlockSpecError};
pub use frame::{Frame, BYTES_PER_PIXEL, WEIGHTS};
pub use grid::GridPolicy;
pub use limits::{Limits, Named};
pub use sweep::{SweepConfig, SweepError, SweepResult, SweepRow};
