//! blocksweep's OpenCL backend.
//!
//! [`probe`] lists every device of every platform without building anything; [`open`] opens
//! one of them and returns an [`OpenClBackend`], which implements [`blocksweep_core::Backend`]
//! and knows programs only: a user's kernel, or a built-in one of kernels/grayscale.cl (its
//! source from `Backend::builtin`, loaded by the core). libOpenCL.so.1 is loaded at run time
//! (opencl3's "dynamic" feature), so a machine without OpenCL gets
//! [`OpenClError::Unavailable`], not a loader failure at start-up.
//!
//! Layers, as in opencl3 itself: cl3's fallible functions (re-exported by opencl3) at the
//! bottom, this crate's RAII owners in `handles` (whose Drop never panics, unlike opencl3's),
//! and above them one file per role, the same files as in the CUDA and Vulkan backends:
//!
//! ```text
//! lib.rs      this overview, re-exports, probe() and open()
//! provider.rs   ApiInfo (OpenCL's name, words, guarantees) and the Provider the core calls
//! device.rs   which devices exist and what they are: platforms, devices, identity
//! limits.rs   the launch limits under OpenCL's names, NVIDIA's attribute queries
//! context.rs  the handle the rest hangs off: context + in-order profiling queue, event waits
//! builtin.rs  the built-in kernels' sources: kernels/grayscale.cl, one kernel per program
//! kernel.rs   building a kernel and setting its arguments: clBuildProgram, clSetKernelArg
//! facts.rs    a kernel's facts: clGetKernelWorkGroupInfo, ptxas's register count
//! program.rs  the current program: its arguments in the given order, its buffers, scalars
//!             set again, and the copies in and out
//! memory.rs   buffers: the mapped host buffer of the staged read-back, the copy buffers
//! fill.rs     a buffer's fills, by a kernel of ours past 4 GiB
//! transfer.rs fills, writes and reads in pieces of at most 1 GiB, waited for once
//! timing.rs   run_batch: back-to-back enqueues timed by profiling events; the NDRange
//! backend.rs  the Backend impl, tying the above together
//! error.rs    OpenClError and the map_<situation>(call) functions from status codes
//! handles.rs  RAII owners of cl_context, cl_command_queue, cl_program, cl_kernel, cl_mem...
//! ```

#![warn(clippy::undocumented_unsafe_blocks)]

mod backend;
mod builtin;
mod cold;
mod context;
mod device;
pub mod error;
mod facts;
mod fill;
mod handles;
mod kernel;
mod limits;
mod memory;
mod program;
mod provider;
mod stderr;
mod timing;
mod transfer;

use blocksweep_core::{trace, DeviceIdentity};

pub use backend::OpenClBackend;
pub use builtin::KERNEL_SOURCE;
pub use error::{cl_error_name, OpenClError};
pub use handles::take_release_errors;
pub use provider::{API, OPENCL_C, PROVIDER};

/// What `open` can be told beyond the device index.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct OpenClOptions {
    /// Appended to the built-in kernels' build options ("-cl-std=CL1.2" and the defines that
    /// select one kernel; "-cl-nv-verbose" on NVIDIA).
    pub extra_build_options: String,
}

/// Every OpenCL device, in platform order then device order; `DeviceIdentity::index` is the
/// position in this list and the index [`open`] takes. Builds nothing.
pub fn probe() -> Result<Vec<DeviceIdentity>, OpenClError> {
    let _t = trace::span("opencl", "probe");
    device::enumerate("probe")?
        .iter()
        .enumerate()
        .map(|(i, entry)| device::identity(i, entry))
        .collect()
}

/// Opens device `index` of [`probe`]'s list: its context and profiling queue. Where the
/// device has no warp size query, the grid-stride kernel is built once for its preferred
/// work-group multiple (`Limits::warp_size`).
pub fn open(index: usize, options: &OpenClOptions) -> Result<OpenClBackend, OpenClError> {
    let _t = trace::span("opencl", "open");
    let entries = device::enumerate("open")?;
    let entry = entries.get(index).ok_or_else(|| OpenClError::Unavailable {
        reason: format!(
            "no OpenCL device {index}: there are {} (indices 0 to {})",
            entries.len(),
            entries.len().saturating_sub(1)
        ),
    })?;
    OpenClBackend::open(index, entry, options)
}

/// Builds `source` with `options` on device `index` and returns the build log; a failed build
/// is [`OpenClError::Build`] with the log. For tests of the build-error path (`test-support`).
#[cfg(any(test, feature = "test-support"))]
pub fn build_program_source(
    index: usize,
    source: &str,
    options: &str,
) -> Result<String, OpenClError> {
    let entries = device::enumerate("build")?;
    let entry = entries.get(index).ok_or_else(|| OpenClError::Unavailable {
        reason: format!("no OpenCL device {index}"),
    })?;
    let device = handles::DeviceId(entry.device);
    let context = context::create_context_for(device)?;
    let (_program, log) = kernel::build(&context, device, source, options)?;
    Ok(log)
}
