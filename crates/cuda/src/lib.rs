//! blocksweep's CUDA backend, on the CUDA driver API, for every driver since CUDA 12.0 (R525).
//!
//! - [`probe`] lists devices without creating a context or compiling anything; on a machine
//!   without the driver, or with one older than CUDA 12.0, it returns an `Unavailable` error
//!   saying so, never a panic.
//! - [`open`] retains a device's primary context and creates one stream; it builds nothing.
//! - [`CudaBackend`] implements [`blocksweep_core::Backend`] for programs only: the built-in
//!   kernels are programs too, their source the embedded PTX of `kernels/grayscale.ptx` or
//!   `kernels/grayscale.cu` through NVRTC (PTX, or a cubin where NVRTC is newer than the
//!   driver) as [`CudaCompiler`] says; occupancy from the CUDA occupancy API, timing with
//!   CUDA events on the same stream.
//!
//! libcuda and libnvrtc are loaded at run time and called through this crate's own tables of
//! entry points (cudarc supplies the types): see `entry_points.rs` for why.
//!
//! Files, one per role, as in the OpenCL and Vulkan backends:
//!
//! | file | holds |
//! |---|---|
//! | `lib.rs` | these docs, re-exports, [`probe`] / [`open`] |
//! | `provider.rs` | [`API`] (the `ApiInfo`) and [`PROVIDER`] (the core's `Provider`) |
//! | `device.rs` | driver start-up (`cuInit`), enumeration, identity (`cuDeviceGetAttribute`) |
//! | `limits.rs` | the launch limits under CUDA's names, the per-SM figures, the memory |
//! | `context.rs` | the primary context and the stream, RAII |
//! | `builtin.rs` | the built-in kernels' sources (`Backend::builtin`): the embedded PTX or grayscale.cu |
//! | `kernel.rs` | a source to a module (NVRTC PTX / cubin, PTX JIT), function attributes, occupancy |
//! | `memory.rs` | device buffers (RAII), a program's buffers and their copies, the page-locked staging of a read-back, the copy buffers |
//! | `timing.rs` | `run_batch`: back-to-back launches between CUDA events; the deadline's wait |
//! | `program.rs` | a program: its build, entry lookup, parameter check, the launch |
//! | `params.rs` | a program's arguments as `cuLaunchKernel` parameters: checked, packed, a scalar reset |
//! | `backend.rs` | the `Backend` impl tying the above together |
//! | `error.rs` | [`CudaError`] and the `map_<situation>` functions from native codes |
//! | `entry_points.rs` | every libcuda / libnvrtc entry point blocksweep can call: the one list, resolved and checked at load |
//! | `nvrtc.rs` | finding a libnvrtc, compiling (options, program log, lowered names) |
//! | `plan.rs` | planning PTX or cubin against the driver's and NVRTC's versions |
//! | `codes.rs` | `CUresult` / `nvrtcResult` as plain integers (any value is valid) and their names |

#![warn(clippy::undocumented_unsafe_blocks)]

mod backend;
mod builtin;
mod codes;
mod cold;
mod context;
mod device;
mod entry_points;
pub mod error;
mod kernel;
mod limits;
mod memory;
mod nvrtc;
mod params;
mod plan;
mod program;
mod provider;
mod timing;

use blocksweep_core::DeviceIdentity;

pub use backend::CudaBackend;
pub use builtin::{KERNEL_PTX, KERNEL_SOURCE};
pub use codes::{CuCode, NvrtcCode};
pub use entry_points::{DRIVER_ENTRY_POINTS, NVRTC_ENTRY_POINTS, OPTIONAL_DRIVER_ENTRY_POINTS};
pub use error::{CudaError, MIN_DRIVER};
pub use limits::theoretical_gbps;
pub use nvrtc::nvrtc_available;
#[cfg(any(test, feature = "test-support"))]
pub use nvrtc::{nvrtc_compile, nvrtc_compile_cubin, NvrtcCubin, NvrtcPtx};
#[cfg(any(test, feature = "test-support"))]
pub use program::nvrtc_compile_program;
pub use provider::{API, CUDA_CPP, PROVIDER, PTX};
pub use timing::{EVENT_RESOLUTION_NS, TIMER_METHOD};

/// What `open` may be told.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CudaOptions {
    pub compiler: CudaCompiler,
}

/// How the built-in kernels reach the device (`Backend::builtin`'s source); a user's CUDA C++
/// always goes through NVRTC.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CudaCompiler {
    /// kernels/grayscale.cu through NVRTC where a libnvrtc loads (or CUDA_DISABLE_PTX_JIT=1
    /// forbids the JIT); otherwise the embedded PTX, JIT-compiled by the driver.
    #[default]
    Auto,
    /// kernels/grayscale.cu through NVRTC; loading fails when libnvrtc is missing, fails, or
    /// cannot serve this driver.
    Nvrtc,
    /// The embedded PTX only.
    Ptx,
}

/// Every device the driver sees, in ordinal order (the index [`open`] takes). Starts the
/// driver; creates no context and compiles nothing.
pub fn probe() -> Result<Vec<DeviceIdentity>, CudaError> {
    blocksweep_core::trace::time("cuda", "probe", device::enumerate).map(|(devices, _)| devices)
}

/// Whether a CUDA tool has injected itself into this process: compute-sanitizer (its target
/// gets `NV_SANITIZER_INJECTION_PORT_BASE`, seen on the H200 on 2026-12-02) or another tool of
/// the CUDA injection interface (`CUDA_INJECTION64_PATH`).
pub fn under_cuda_tool() -> bool {
    ["NV_SANITIZER_INJECTION_PORT_BASE", "CUDA_INJECTION64_PATH"]
        .iter()
        .any(|v| std::env::var_os(v).is_some())
}

/// Opens device `index` of [`probe`]'s list: its primary context, a stream, the timer.
pub fn open(index: usize, options: &CudaOptions) -> Result<CudaBackend, CudaError> {
    backend::open(index, options)
}
