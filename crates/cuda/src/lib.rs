//! blocksweep's CUDA backend, on the CUDA driver API through cudarc.
//!
//! - [`probe`] lists devices without creating a context or compiling anything; on a machine
//!   without the driver it returns an `Unavailable` error ("libcuda.so.1 not found") instead
//!   of letting cudarc's lazily loaded symbols panic.
//! - [`open`] retains a device's primary context, creates one stream, and builds the two
//!   kernels of `kernels/grayscale.cu`, with NVRTC or from the embedded PTX
//!   ([`CudaCompiler`]).
//! - [`CudaBackend`] implements [`blocksweep_core::Backend`]: occupancy from the CUDA
//!   occupancy API, timing with CUDA events on the same stream.
//!
//! Files, one per role (mirroring the OpenCL and Vulkan backends): `device.rs` (presence,
//! enumeration, identity, limits), `module.rs` (kernel source and PTX, NVRTC, function
//! attributes, occupancy), `timing.rs` (events, launch, copy), `backend.rs` (the trait),
//! `error.rs` (errors and the mapping from CUresult / nvrtcResult).

mod backend;
mod device;
mod driver;
pub mod error;
mod module;
mod timing;

pub use backend::{open, CudaBackend, CudaOptions};
pub use device::{pci_bus_id, probe, theoretical_gbps};
pub use driver::{CudaDriver, API, DRIVER};
pub use error::CudaError;
pub use module::{
    nvrtc_available, nvrtc_compile, CudaCompiler, NvrtcPtx, GRID_STRIDE_ENTRY, KERNEL_PTX,
    KERNEL_SOURCE, ONE_PER_THREAD_ENTRY,
};
pub use timing::{EVENT_RESOLUTION_NS, TIMER_METHOD};
