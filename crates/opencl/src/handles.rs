//! RAII owners of the OpenCL objects this backend creates.
//!
//! opencl3's own owners (`Context`, `CommandQueue`, `Buffer`, `Kernel`, `Program`, `Event`)
//! call `.expect()` in `Drop`, so a driver error while releasing would panic, and abort the
//! process if it happened during unwinding. These own the same raw handles through cl3's
//! fallible functions (re-exported by opencl3) and record a failed release instead; the
//! records are read with [`take_release_errors`]. Drop never panics.

use std::sync::Mutex;

use opencl3::command_queue::release_command_queue;
use opencl3::context::context::release_context;
use opencl3::event::release_event;
use opencl3::kernel::release_kernel;
use opencl3::memory::release_mem_object;
use opencl3::program::release_program;
use opencl3::types::{
    cl_command_queue, cl_context, cl_device_id, cl_event, cl_int, cl_kernel, cl_mem, cl_program,
};

use crate::error::cl_error_name;

static RELEASE_ERRORS: Mutex<Vec<String>> = Mutex::new(Vec::new());

pub(crate) fn record_release_error(call: &str, code: cl_int) {
    // A poisoned lock only means another thread panicked mid-push; the list is still usable.
    let mut errors = match RELEASE_ERRORS.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    errors.push(format!("{call} failed: {} ({code})", cl_error_name(code)));
}

/// Releases that failed since the last call (e.g. "clReleaseMemObject failed:
/// CL_INVALID_MEM_OBJECT (-38)"), oldest first. Empty in a healthy run.
pub fn take_release_errors() -> Vec<String> {
    let mut errors = match RELEASE_ERRORS.lock() {
        Ok(g) => g,
        Err(poisoned) => poisoned.into_inner(),
    };
    std::mem::take(&mut *errors)
}

macro_rules! owned_handle {
    ($(#[$doc:meta])* $name:ident, $raw:ty, $release:path, $call:literal) => {
        $(#[$doc])*
        pub(crate) struct $name($raw);

        impl $name {
            /// Takes over the one reference the creating call returned.
            pub(crate) fn from_raw(raw: $raw) -> Self {
                $name(raw)
            }

            pub(crate) fn raw(&self) -> $raw {
                self.0
            }
        }

        impl Drop for $name {
            fn drop(&mut self) {
                // SAFETY: this owner holds exactly one reference, taken in `from_raw`, and
                // gives it back exactly once.
                if let Err(code) = unsafe { $release(self.0) } {
                    record_release_error($call, code);
                }
            }
        }

        // SAFETY: OpenCL objects may be used from any thread (OpenCL 3.0 API spec, "Shared
        // OpenCL objects": all API calls are thread-safe except clSetKernelArg and
        // clCloneKernel on one kernel). Send without Sync moves an owner between threads but
        // never shares it, so two threads never set one kernel's arguments at once.
        unsafe impl Send for $name {}
    };
}

owned_handle!(
    /// A cl_context holding the one device this backend drives.
    Context, cl_context, release_context, "clReleaseContext"
);
owned_handle!(
    /// An in-order cl_command_queue with CL_QUEUE_PROFILING_ENABLE.
    Queue, cl_command_queue, release_command_queue, "clReleaseCommandQueue"
);
owned_handle!(
    /// A built cl_program.
    Program, cl_program, release_program, "clReleaseProgram"
);
owned_handle!(
    /// One kernel of a program.
    Kernel, cl_kernel, release_kernel, "clReleaseKernel"
);
owned_handle!(
    /// A device buffer (cl_mem).
    Mem, cl_mem, release_mem_object, "clReleaseMemObject"
);
owned_handle!(
    /// The event an enqueue returned.
    Event, cl_event, release_event, "clReleaseEvent"
);

/// A root device id from clGetDeviceIDs. Root devices are not reference counted (OpenCL 1.2
/// and later ignore clRetainDevice/clReleaseDevice on them), so this owns nothing.
#[derive(Clone, Copy)]
pub(crate) struct DeviceId(pub cl_device_id);

// SAFETY: as for the owners above; a device id is an immutable handle.
unsafe impl Send for DeviceId {}
