//! The backend's typed error, and the named functions that turn OpenCL status codes into it.
//!
//! Each mapping function has the shape every backend crate uses,
//! `map_<situation>(call) -> impl Fn(code) -> Error` (so a call site reads
//! `.map_err(map_create("clCreateContext"))`), belongs to one kind of call site, and its doc
//! lists the codes the OpenCL 3.0 specification allows there, so that a reader can check the
//! classification against the spec. Codes a driver returns outside the spec (NVIDIA's -9999 for
//! a faulting kernel, say) fall through to [`OpenClError::Driver`] with their number kept, and
//! the ones known here are named by [`cl_error_name`].

use blocksweep_core::{BackendError, ErrorKind, Launch};
use opencl3::error_codes::{
    error_text, CL_BUILD_PROGRAM_FAILURE, CL_COMPILER_NOT_AVAILABLE, CL_INVALID_BUFFER_SIZE,
    CL_INVALID_BUILD_OPTIONS, CL_INVALID_GLOBAL_WORK_SIZE, CL_INVALID_KERNEL_ARGS,
    CL_INVALID_WORK_DIMENSION, CL_INVALID_WORK_GROUP_SIZE, CL_INVALID_WORK_ITEM_SIZE,
    CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_HOST_MEMORY, CL_OUT_OF_RESOURCES,
    CL_PLATFORM_NOT_FOUND_KHR, DLOPEN_FUNCTION_NOT_AVAILABLE, DLOPEN_RUNTIME_LOAD_FAILED,
};
use opencl3::types::cl_int;

/// Everything that can go wrong in this backend.
#[derive(Debug, thiserror::Error)]
pub enum OpenClError {
    /// No OpenCL here: the library did not load, no platform, no device, or no such index.
    #[error("OpenCL unavailable: {reason}")]
    Unavailable { reason: String },
    /// The driver refused this launch configuration (`name` is its own error, e.g.
    /// `CL_INVALID_WORK_GROUP_SIZE`).
    #[error("{call} refused {launch}: {name} ({code})")]
    LaunchRejected {
        call: &'static str,
        launch: String,
        name: String,
        code: cl_int,
    },
    /// Device (or host) memory ran out, or a buffer exceeds an allocation limit.
    #[error("out of memory: {detail}")]
    OutOfMemory { detail: String },
    /// The program did not build; `log` is the device's CL_PROGRAM_BUILD_LOG.
    #[error(
        "clBuildProgram failed with {name} ({code}), options \"{options}\"; build log:\n{log}"
    )]
    Build {
        name: String,
        code: cl_int,
        options: String,
        log: String,
    },
    /// Any other failed call, with the status code and its OpenCL name.
    #[error("{call} failed: {name} ({code})")]
    Driver {
        call: String,
        name: String,
        code: cl_int,
    },
    /// A reply the specification does not allow (wrong size, impossible value).
    #[error("{query} returned {detail}")]
    Malformed { query: String, detail: String },
    /// The backend was used out of order (a dispatch with no program loaded): a bug in the caller.
    #[error("{0}")]
    Usage(String),
    /// A user's kernel that cannot run as its spec declares it: another language, no such
    /// entry point, or arguments the compiled kernel contradicts.
    #[error("{0}")]
    Program(String),
    /// An error while loading a user's kernel, under the name of the file it came from.
    #[error("{origin}: {source}")]
    InProgram {
        origin: String,
        source: Box<OpenClError>,
    },
    /// A command still running when the deadline passed (`blocksweep_core::program::deadline`):
    /// the device may be busy with it for ever, so the backend is unusable from then on.
    #[error(
        "the {what} did not finish within {seconds} s (BLOCKSWEEP_DEADLINE_S); this OpenCL \
         device is not used again in this process"
    )]
    Deadline { what: &'static str, seconds: f64 },
    /// A call after a [`OpenClError::Deadline`]; the message says what happened then.
    #[error("OpenCL backend unusable: {0}")]
    Unusable(String),
}

impl OpenClError {
    /// Which of the core's classes this error falls in.
    pub fn kind(&self) -> ErrorKind {
        match self {
            OpenClError::Unavailable { .. } => ErrorKind::Unavailable,
            OpenClError::LaunchRejected { .. } => ErrorKind::LaunchRejected,
            OpenClError::OutOfMemory { .. } => ErrorKind::OutOfMemory,
            OpenClError::Build { .. } | OpenClError::Program(_) => ErrorKind::Build,
            OpenClError::InProgram { source, .. } => source.kind(),
            OpenClError::Driver { .. }
            | OpenClError::Malformed { .. }
            | OpenClError::Usage(_)
            | OpenClError::Deadline { .. }
            | OpenClError::Unusable(_) => ErrorKind::Driver,
        }
    }

    /// This error under the name of the user's source it happened in (`origin`).
    pub(crate) fn in_program(self, origin: &str) -> OpenClError {
        OpenClError::InProgram {
            origin: origin.to_string(),
            source: Box::new(self),
        }
    }
}

impl From<OpenClError> for BackendError {
    fn from(e: OpenClError) -> Self {
        let kind = e.kind();
        BackendError::with_source(crate::API, kind, e)
    }
}

/// NVIDIA's own status for a command that failed on the device, outside the specification:
/// seen for kernels that fault and for single transfers or fills above about 4 GiB.
pub const NVIDIA_ERROR_9999: cl_int = -9999;

/// The OpenCL name of a status code, e.g. "CL_INVALID_WORK_GROUP_SIZE"; the vendor codes known
/// here are described, and any other code outside the specification is named by number.
pub fn cl_error_name(code: cl_int) -> String {
    match (code, error_text(code)) {
        (NVIDIA_ERROR_9999, _) => "NVIDIA driver error -9999 (typically a kernel fault such as \
             an out-of-bounds access, or a transfer the driver cannot do in one piece)"
            .to_string(),
        (_, "UNKNOWN_ERROR") => format!("unknown OpenCL status {code}"),
        (_, name) => name.to_string(),
    }
}

fn driver(call: &str, code: cl_int) -> OpenClError {
    OpenClError::Driver {
        call: call.to_string(),
        name: cl_error_name(code),
        code,
    }
}

/// Why the OpenCL library could not be loaded, in dlopen's own words.
fn library_load_failure() -> String {
    match cl3::load_library() {
        Err(e) => format!("libOpenCL.so.1 could not be loaded ({e}); install an OpenCL ICD loader (e.g. ocl-icd-libopencl1) or point OPENCL_DYLIB_PATH at one"),
        Ok(_) => "libOpenCL.so.1 could not be loaded".to_string(),
    }
}

/// The codes of cl3's dynamic loading, possible at every call: the library is missing, or it
/// lacks the entry point (an ICD loader older than the call).
fn dynamic_loading(call: &str, code: cl_int) -> Option<OpenClError> {
    match code {
        DLOPEN_RUNTIME_LOAD_FAILED => Some(OpenClError::Unavailable {
            reason: library_load_failure(),
        }),
        DLOPEN_FUNCTION_NOT_AVAILABLE => Some(OpenClError::Unavailable {
            reason: format!("the loaded libOpenCL.so.1 has no {call}"),
        }),
        _ => None,
    }
}

/// clGetPlatformIDs: CL_PLATFORM_NOT_FOUND_KHR (the ICD loader found no vendor driver),
/// CL_INVALID_VALUE, CL_OUT_OF_HOST_MEMORY; plus the dynamic-loading codes.
pub fn map_platform_query(call: &'static str) -> impl Fn(cl_int) -> OpenClError {
    move |code| {
        dynamic_loading(call, code).unwrap_or_else(|| match code {
            CL_PLATFORM_NOT_FOUND_KHR => OpenClError::Unavailable {
                reason: "no OpenCL platforms (CL_PLATFORM_NOT_FOUND_KHR: the ICD loader found no \
                         vendor driver under /etc/OpenCL/vendors or OCL_ICD_VENDORS)"
                    .to_string(),
            },
            _ => driver(call, code),
        })
    }
}

/// clCreateBuffer: CL_INVALID_BUFFER_SIZE (0 or above CL_DEVICE_MAX_MEM_ALLOC_SIZE),
/// CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY are memory;
/// CL_INVALID_CONTEXT, CL_INVALID_VALUE, CL_INVALID_PROPERTY, CL_INVALID_HOST_PTR are not.
pub fn map_alloc(call: &'static str, bytes: u64) -> impl Fn(cl_int) -> OpenClError {
    move |code| {
        dynamic_loading(call, code).unwrap_or_else(|| match code {
            CL_INVALID_BUFFER_SIZE
            | CL_MEM_OBJECT_ALLOCATION_FAILURE
            | CL_OUT_OF_RESOURCES
            | CL_OUT_OF_HOST_MEMORY => OpenClError::OutOfMemory {
                detail: format!("{call} of {bytes} bytes failed: {}", cl_error_name(code)),
            },
            _ => driver(call, code),
        })
    }
}

/// clEnqueueNDRangeKernel. The launch-shape refusals are CL_INVALID_WORK_GROUP_SIZE (local
/// size above CL_KERNEL_WORK_GROUP_SIZE, or not dividing the global size on 1.x),
/// CL_INVALID_WORK_ITEM_SIZE (a dimension above CL_DEVICE_MAX_WORK_ITEM_SIZES),
/// CL_INVALID_GLOBAL_WORK_SIZE, CL_INVALID_WORK_DIMENSION (a 3-D block on a device with fewer
/// dimensions), and CL_OUT_OF_RESOURCES (NVIDIA: the block needs more
/// registers than the multiprocessor has). CL_MEM_OBJECT_ALLOCATION_FAILURE and
/// CL_OUT_OF_HOST_MEMORY are memory; the CL_INVALID_* object errors are driver errors.
pub fn map_launch(call: &'static str, launch: Launch) -> impl Fn(cl_int) -> OpenClError {
    move |code| {
        dynamic_loading(call, code).unwrap_or_else(|| match code {
            CL_INVALID_WORK_GROUP_SIZE
            | CL_INVALID_WORK_ITEM_SIZE
            | CL_INVALID_GLOBAL_WORK_SIZE
            | CL_INVALID_WORK_DIMENSION
            | CL_OUT_OF_RESOURCES
            // NVIDIA (driver 580) answers some launches outside its limits with this code
            // although every argument is set: another launch of the same kernel then runs.
            | CL_INVALID_KERNEL_ARGS => OpenClError::LaunchRejected {
                call,
                launch: launch.to_string(),
                name: cl_error_name(code),
                code,
            },
            CL_MEM_OBJECT_ALLOCATION_FAILURE | CL_OUT_OF_HOST_MEMORY => OpenClError::OutOfMemory {
                detail: format!("{call} ({launch}): {}", cl_error_name(code)),
            },
            _ => driver(call, code),
        })
    }
}

/// clBuildProgram: CL_BUILD_PROGRAM_FAILURE, CL_INVALID_BUILD_OPTIONS and
/// CL_COMPILER_NOT_AVAILABLE are the program's (or the options') fault and carry the log;
/// anything else (CL_INVALID_PROGRAM, CL_INVALID_VALUE, CL_INVALID_DEVICE, CL_INVALID_OPERATION,
/// CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY) is the driver's.
pub fn map_build(call: &'static str, options: &str, log: String) -> impl Fn(cl_int) -> OpenClError {
    let options = options.to_string();
    move |code| {
        dynamic_loading(call, code).unwrap_or_else(|| match code {
            CL_BUILD_PROGRAM_FAILURE | CL_INVALID_BUILD_OPTIONS | CL_COMPILER_NOT_AVAILABLE => {
                OpenClError::Build {
                    name: cl_error_name(code),
                    code,
                    options: options.clone(),
                    log: log.clone(),
                }
            }
            _ => driver(call, code),
        })
    }
}

/// Resource exhaustion (CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY,
/// CL_MEM_OBJECT_ALLOCATION_FAILURE) is memory; the rest is the driver's, named.
fn resources_or_driver(call: &str, code: cl_int) -> OpenClError {
    dynamic_loading(call, code).unwrap_or_else(|| match code {
        CL_OUT_OF_RESOURCES | CL_OUT_OF_HOST_MEMORY | CL_MEM_OBJECT_ALLOCATION_FAILURE => {
            OpenClError::OutOfMemory {
                detail: format!("{call}: {}", cl_error_name(code)),
            }
        }
        _ => driver(call, code),
    })
}

/// Queries (clGetDeviceInfo, clGetKernelWorkGroupInfo, clGetEventProfilingInfo): the
/// CL_INVALID_* object and value codes (and CL_PROFILING_INFO_NOT_AVAILABLE for events on a
/// queue without profiling) are the driver's; CL_OUT_OF_RESOURCES and CL_OUT_OF_HOST_MEMORY
/// are memory. The error names the call and the parameter: "clGetDeviceInfo(CL_DEVICE_NAME)".
pub fn map_query(call: &'static str, param: &'static str) -> impl Fn(cl_int) -> OpenClError {
    move |code| resources_or_driver(&format!("{call}({param})"), code)
}

/// Object creation (clCreateContext, clCreateCommandQueue, clCreateProgramWithSource,
/// clCreateKernel) and clSetKernelArg: CL_INVALID_* (context, device, value, properties,
/// program, kernel name, argument index or size), CL_DEVICE_NOT_AVAILABLE are the driver's;
/// CL_OUT_OF_RESOURCES and CL_OUT_OF_HOST_MEMORY are memory.
pub fn map_create(call: &'static str) -> impl Fn(cl_int) -> OpenClError {
    move |code| resources_or_driver(call, code)
}

/// Buffer commands (clEnqueueCopyBuffer, clEnqueueFillBuffer, clEnqueueWriteBuffer,
/// clEnqueueReadBuffer): CL_INVALID_* (queue, context, memory object, value, wait list),
/// CL_MEM_COPY_OVERLAP, CL_MISALIGNED_SUB_BUFFER_OFFSET and, for a blocking transfer,
/// CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST are the driver's;
/// CL_MEM_OBJECT_ALLOCATION_FAILURE, CL_OUT_OF_RESOURCES, CL_OUT_OF_HOST_MEMORY are memory.
pub fn map_enqueue(call: &'static str) -> impl Fn(cl_int) -> OpenClError {
    move |code| resources_or_driver(call, code)
}

/// clWaitForEvents and clFinish: whatever they return is the driver's. NVIDIA reports a
/// kernel that faulted as CL_OUT_OF_RESOURCES here, and others as
/// CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, so no code is read as "out of memory".
/// The error names what was waited for: "clWaitForEvents (kernel)".
pub fn map_wait(call: &'static str, what: &'static str) -> impl Fn(cl_int) -> OpenClError {
    move |code| {
        let call = format!("{call} ({what})");
        dynamic_loading(&call, code).unwrap_or_else(|| driver(&call, code))
    }
}

/// A negative CL_EVENT_COMMAND_EXECUTION_STATUS: the command ended abnormally, with this code
/// (any status the driver likes: NVIDIA's -9999 for a faulting kernel). Always the driver's.
pub fn map_status(what: &'static str) -> impl Fn(cl_int) -> OpenClError {
    move |code| {
        driver(
            &format!("the {what} (CL_EVENT_COMMAND_EXECUTION_STATUS)"),
            code,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn launch_refusals_are_launch_rejected_and_named() {
        let big = Launch::linear(blocksweep_core::BlockSize::linear(2048), 1);
        for code in [
            CL_INVALID_WORK_GROUP_SIZE,
            CL_INVALID_WORK_ITEM_SIZE,
            CL_INVALID_GLOBAL_WORK_SIZE,
            CL_OUT_OF_RESOURCES,
            CL_INVALID_KERNEL_ARGS,
        ] {
            let e = map_launch("clEnqueueNDRangeKernel", big)(code);
            assert_eq!(e.kind(), ErrorKind::LaunchRejected);
            let msg = e.to_string();
            assert!(msg.contains(error_text(code)), "{msg}");
            assert!(msg.contains("block 2048"), "{msg}");
        }
        let other =
            map_launch("clEnqueueNDRangeKernel", big)(opencl3::error_codes::CL_INVALID_KERNEL);
        assert_eq!(other.kind(), ErrorKind::Driver);
        assert!(other.to_string().contains("CL_INVALID_KERNEL"));
    }

    #[test]
    fn missing_library_and_platforms_are_unavailable() {
        let e = map_platform_query("clGetPlatformIDs")(CL_PLATFORM_NOT_FOUND_KHR);
        assert_eq!(e.kind(), ErrorKind::Unavailable);
        assert!(e.to_string().contains("no OpenCL platforms"));
        let e = map_query("clGetDeviceInfo", "CL_DEVICE_NAME")(DLOPEN_RUNTIME_LOAD_FAILED);
        assert_eq!(e.kind(), ErrorKind::Unavailable);
        assert!(e.to_string().contains("libOpenCL.so.1"));
        let e = map_query("clGetDeviceInfo", "CL_DEVICE_NAME")(DLOPEN_FUNCTION_NOT_AVAILABLE);
        assert!(
            e.to_string()
                .contains("has no clGetDeviceInfo(CL_DEVICE_NAME)"),
            "{e}"
        );
    }

    #[test]
    fn allocation_failures_are_out_of_memory() {
        for code in [CL_INVALID_BUFFER_SIZE, CL_MEM_OBJECT_ALLOCATION_FAILURE] {
            let e = map_alloc("clCreateBuffer", 1 << 40)(code);
            assert_eq!(e.kind(), ErrorKind::OutOfMemory);
            assert!(e.to_string().contains("1099511627776 bytes"), "{e}");
        }
    }

    #[test]
    fn build_failure_keeps_the_log_and_unknown_codes_keep_their_number() {
        let e = map_build("clBuildProgram", "-cl-std=CL1.2", "error: oops".into())(
            CL_BUILD_PROGRAM_FAILURE,
        );
        assert_eq!(e.kind(), ErrorKind::Build);
        assert!(e.to_string().contains("error: oops"));
        let e = map_wait("clWaitForEvents", "kernel")(CL_OUT_OF_RESOURCES);
        assert_eq!(e.kind(), ErrorKind::Driver);
        let e = map_wait("clWaitForEvents", "kernel")(-9999);
        assert_eq!(e.kind(), ErrorKind::Driver);
        assert!(e.to_string().contains("-9999"), "{e}");
        assert!(e.to_string().contains("NVIDIA driver error -9999"), "{e}");
        assert_eq!(cl_error_name(-12345), "unknown OpenCL status -12345");
        let b: BackendError = e.into();
        assert_eq!(b.api, crate::API);
        assert!(b.source.is_some());
    }
}
