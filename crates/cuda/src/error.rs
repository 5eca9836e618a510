//! The CUDA backend's errors, and the named functions that map native result codes to them.
//!
//! Every driver error keeps its `CUresult` (shown by its CUDA name, e.g.
//! `CUDA_ERROR_INVALID_VALUE`) and the call that returned it. Which [`ErrorKind`] a code means
//! depends on the call site (`CUDA_ERROR_INVALID_VALUE` from `cuLaunchKernel` is a refused
//! launch; from anything else a bug), so each call site uses the mapping function written for
//! it, and each function's doc lists the codes it treats specially there.

use blocksweep_core::{BackendError, ErrorKind};
use cudarc::driver::{result::DriverError, sys::CUresult};
use cudarc::nvrtc::{result::NvrtcError, sys::nvrtcResult};

#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// A shared library could not be loaded (no driver, no NVRTC).
    #[error("{library} not found ({hint})")]
    LibraryMissing {
        library: &'static str,
        hint: &'static str,
    },
    /// The driver loaded but offers no usable device, or lacks an entry point we call.
    #[error("{0}")]
    Unavailable(String),
    /// The driver loaded but refused to start (`cuInit` and friends).
    #[error("{call}: {} (the CUDA driver is installed but unusable)", code_text(*.code))]
    DriverUnusable { call: &'static str, code: CUresult },
    /// The frame does not fit the device; raised before allocating.
    #[error("{0}")]
    TooLarge(String),
    /// An allocation the driver refused.
    #[error("{call} of {bytes} bytes: {}", code_text(*.code))]
    Alloc {
        call: &'static str,
        bytes: u64,
        code: CUresult,
    },
    /// The driver refused this launch configuration.
    #[error("cuLaunchKernel refused {launch}: {}", code_text(*.code))]
    LaunchRejected { launch: String, code: CUresult },
    /// The driver could not load (JIT-compile) the kernel's PTX.
    #[error("{call} ({source_desc}): {}", code_text(*.code))]
    ModuleLoad {
        call: &'static str,
        source_desc: String,
        code: CUresult,
    },
    /// NVRTC refused to compile the kernel; `log` is its program log.
    #[error("{call}: {} {log}", nvrtc_name(*.code))]
    Nvrtc {
        call: &'static str,
        code: nvrtcResult,
        log: String,
    },
    /// The backend was used out of order or with mismatched sizes (a caller's bug).
    #[error("{0}")]
    Usage(String),
    /// Anything else the driver returned.
    #[error("{call}: {}", code_text(*.code))]
    Driver { call: &'static str, code: CUresult },
}

impl CudaError {
    /// How the core should treat this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            CudaError::LibraryMissing { .. }
            | CudaError::Unavailable(_)
            | CudaError::DriverUnusable { .. } => ErrorKind::Unavailable,
            CudaError::TooLarge(_) | CudaError::Alloc { .. } => ErrorKind::OutOfMemory,
            CudaError::LaunchRejected { .. } => ErrorKind::LaunchRejected,
            CudaError::ModuleLoad { .. } | CudaError::Nvrtc { .. } => ErrorKind::Build,
            CudaError::Driver { .. } | CudaError::Usage(_) => ErrorKind::Driver,
        }
    }

    /// The driver's result code, where the error came from one.
    pub fn code(&self) -> Option<CUresult> {
        match self {
            CudaError::DriverUnusable { code, .. }
            | CudaError::Alloc { code, .. }
            | CudaError::LaunchRejected { code, .. }
            | CudaError::ModuleLoad { code, .. }
            | CudaError::Driver { code, .. } => Some(*code),
            _ => None,
        }
    }
}

impl From<CudaError> for BackendError {
    fn from(e: CudaError) -> Self {
        let kind = e.kind();
        BackendError::with_source(crate::API, kind, e)
    }
}

/// The CUDA name of a result code, e.g. `CUDA_ERROR_INVALID_VALUE` (the enum's variants are
/// the header's names, so this needs no driver call and works without libcuda).
pub fn code_name(code: CUresult) -> String {
    format!("{code:?}")
}

/// The code's name plus the driver's own sentence for it when the driver is loaded.
fn code_text(code: CUresult) -> String {
    let name = code_name(code);
    // cuGetErrorString is only called once the driver library is known to load: calling
    // through cudarc's lazily loaded symbols without it would panic.
    if crate::device::driver_loaded() {
        if let Ok(s) = DriverError(code).error_string() {
            return format!("{name} ({})", s.to_string_lossy());
        }
    }
    name
}

/// The NVRTC name of a result code, e.g. `NVRTC_ERROR_COMPILATION`.
pub fn nvrtc_name(code: nvrtcResult) -> String {
    format!("{code:?}")
}

/// Driver start-up: `cuInit`, `cuDeviceGetCount`, `cuDriverGetVersion`.
///
/// `CUDA_ERROR_NO_DEVICE`, `CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER`, `CUDA_ERROR_STUB_LIBRARY` (the
/// toolkit's link stub found instead of the driver), `CUDA_ERROR_SYSTEM_DRIVER_MISMATCH`,
/// `CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE`, `CUDA_ERROR_DEVICE_UNAVAILABLE`,
/// `CUDA_ERROR_OPERATING_SYSTEM`, `CUDA_ERROR_NOT_PERMITTED`, `CUDA_ERROR_NOT_SUPPORTED` and
/// `CUDA_ERROR_UNKNOWN` (what a container without the device nodes tends to give) mean there
/// is no usable CUDA here: [`CudaError::DriverUnusable`]. Anything else is a driver error.
pub fn map_init(call: &'static str, e: DriverError) -> CudaError {
    // Qualified paths, not a glob import: a name missing from the bindings must fail to
    // compile rather than become a catch-all binding.
    match e.0 {
        CUresult::CUDA_ERROR_NO_DEVICE
        | CUresult::CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER
        | CUresult::CUDA_ERROR_STUB_LIBRARY
        | CUresult::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
        | CUresult::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE
        | CUresult::CUDA_ERROR_DEVICE_UNAVAILABLE
        | CUresult::CUDA_ERROR_OPERATING_SYSTEM
        | CUresult::CUDA_ERROR_NOT_PERMITTED
        | CUresult::CUDA_ERROR_NOT_SUPPORTED
        | CUresult::CUDA_ERROR_UNKNOWN => CudaError::DriverUnusable { call, code: e.0 },
        code => CudaError::Driver { call, code },
    }
}

/// Allocation: `cuMemAlloc` / `cuMemAllocAsync`.
///
/// `CUDA_ERROR_OUT_OF_MEMORY` is [`CudaError::Alloc`] (kind OutOfMemory); anything else is a
/// driver error.
pub fn map_alloc(call: &'static str, bytes: u64, e: DriverError) -> CudaError {
    match e.0 {
        CUresult::CUDA_ERROR_OUT_OF_MEMORY => CudaError::Alloc {
            call,
            bytes,
            code: e.0,
        },
        code => CudaError::Driver { call, code },
    }
}

/// `cuLaunchKernel`, as it returns on the host (errors raised while the kernel runs surface
/// later, from a synchronisation, through [`map_driver`]).
///
/// `CUDA_ERROR_INVALID_VALUE` (a block or grid dimension over the device limit, or more
/// threads per block than the kernel allows), `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES` (registers
/// or shared memory for the block exceed the multiprocessor's) and
/// `CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING` are the API refusing this launch:
/// [`CudaError::LaunchRejected`]. Anything else is a driver error.
pub fn map_launch(launch: &str, e: DriverError) -> CudaError {
    match e.0 {
        CUresult::CUDA_ERROR_INVALID_VALUE
        | CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
        | CUresult::CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING => CudaError::LaunchRejected {
            launch: launch.to_string(),
            code: e.0,
        },
        code => CudaError::Driver {
            call: "cuLaunchKernel",
            code,
        },
    }
}

/// `cuModuleLoadData` (the driver JIT-compiles the PTX) and `cuModuleGetFunction`.
///
/// `CUDA_ERROR_INVALID_PTX`, `CUDA_ERROR_UNSUPPORTED_PTX_VERSION` (PTX newer than the driver),
/// `CUDA_ERROR_INVALID_IMAGE`, `CUDA_ERROR_NO_BINARY_FOR_GPU`, `CUDA_ERROR_JIT_COMPILER_NOT_FOUND`,
/// `CUDA_ERROR_JIT_COMPILATION_DISABLED`, `CUDA_ERROR_INVALID_SOURCE`,
/// `CUDA_ERROR_SHARED_OBJECT_INIT_FAILED` and `CUDA_ERROR_NOT_FOUND` (no such entry point) are
/// build failures: [`CudaError::ModuleLoad`]. `CUDA_ERROR_OUT_OF_MEMORY` is an allocation
/// failure. Anything else is a driver error.
pub fn map_module_load(call: &'static str, source_desc: &str, e: DriverError) -> CudaError {
    match e.0 {
        CUresult::CUDA_ERROR_INVALID_PTX
        | CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION
        | CUresult::CUDA_ERROR_INVALID_IMAGE
        | CUresult::CUDA_ERROR_NO_BINARY_FOR_GPU
        | CUresult::CUDA_ERROR_JIT_COMPILER_NOT_FOUND
        | CUresult::CUDA_ERROR_JIT_COMPILATION_DISABLED
        | CUresult::CUDA_ERROR_INVALID_SOURCE
        | CUresult::CUDA_ERROR_SHARED_OBJECT_INIT_FAILED
        | CUresult::CUDA_ERROR_NOT_FOUND => CudaError::ModuleLoad {
            call,
            source_desc: source_desc.to_string(),
            code: e.0,
        },
        CUresult::CUDA_ERROR_OUT_OF_MEMORY => map_alloc(call, 0, e),
        code => CudaError::Driver { call, code },
    }
}

/// Every other driver call (queries, copies, memset, events, synchronisation).
///
/// `CUDA_ERROR_OUT_OF_MEMORY` keeps its OutOfMemory kind; everything else, including the
/// sticky errors of a kernel that faulted (`CUDA_ERROR_ILLEGAL_ADDRESS`,
/// `CUDA_ERROR_LAUNCH_FAILED`), is a driver error.
pub fn map_driver(call: &'static str, e: DriverError) -> CudaError {
    match e.0 {
        CUresult::CUDA_ERROR_OUT_OF_MEMORY => map_alloc(call, 0, e),
        code => CudaError::Driver { call, code },
    }
}

/// NVRTC calls. Every failure is a build failure; `log` is the program log where there is one.
pub fn map_nvrtc(call: &'static str, e: NvrtcError, log: String) -> CudaError {
    CudaError::Nvrtc {
        call,
        code: e.0,
        log,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_the_cuda_header_names() {
        assert_eq!(
            code_name(CUresult::CUDA_ERROR_INVALID_VALUE),
            "CUDA_ERROR_INVALID_VALUE"
        );
        assert_eq!(
            nvrtc_name(nvrtcResult::NVRTC_ERROR_COMPILATION),
            "NVRTC_ERROR_COMPILATION"
        );
    }

    #[test]
    fn launch_errors_are_rejections_with_the_cuda_name() {
        for code in [
            CUresult::CUDA_ERROR_INVALID_VALUE,
            CUresult::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES,
        ] {
            let e = map_launch("block 2048 x grid 4", DriverError(code));
            assert_eq!(e.kind(), ErrorKind::LaunchRejected);
            let b: BackendError = e.into();
            assert_eq!(b.kind, ErrorKind::LaunchRejected);
            assert_eq!(b.api, crate::API);
            assert!(b.message.contains(&code_name(code)), "{}", b.message);
            assert!(b.message.contains("block 2048 x grid 4"), "{}", b.message);
        }
        // A fault is not a refusal.
        let e = map_launch(
            "block 64 x grid 1",
            DriverError(CUresult::CUDA_ERROR_ILLEGAL_ADDRESS),
        );
        assert_eq!(e.kind(), ErrorKind::Driver);
    }

    #[test]
    fn each_call_site_classifies_its_codes() {
        let oom = DriverError(CUresult::CUDA_ERROR_OUT_OF_MEMORY);
        assert_eq!(
            map_alloc("cuMemAlloc", 1 << 40, oom).kind(),
            ErrorKind::OutOfMemory
        );
        assert_eq!(
            map_driver("cuMemsetD32Async", oom).kind(),
            ErrorKind::OutOfMemory
        );
        assert_eq!(
            map_init("cuInit", DriverError(CUresult::CUDA_ERROR_NO_DEVICE)).kind(),
            ErrorKind::Unavailable
        );
        assert_eq!(
            map_init("cuInit", DriverError(CUresult::CUDA_ERROR_STUB_LIBRARY)).kind(),
            ErrorKind::Unavailable
        );
        let ptx = DriverError(CUresult::CUDA_ERROR_UNSUPPORTED_PTX_VERSION);
        let e = map_module_load("cuModuleLoadData", "embedded PTX", ptx);
        assert_eq!(e.kind(), ErrorKind::Build);
        assert!(e.to_string().contains("CUDA_ERROR_UNSUPPORTED_PTX_VERSION"));
        // The same code means different things at different call sites.
        let inval = DriverError(CUresult::CUDA_ERROR_INVALID_VALUE);
        assert_eq!(
            map_driver("cuMemcpyDtoHAsync", inval).kind(),
            ErrorKind::Driver
        );
        assert_eq!(map_launch("x", inval).kind(), ErrorKind::LaunchRejected);
        let e = map_nvrtc(
            "nvrtcCompileProgram",
            NvrtcError(nvrtcResult::NVRTC_ERROR_COMPILATION),
            "error: expected a \";\"".into(),
        );
        assert_eq!(e.kind(), ErrorKind::Build);
        assert!(e.to_string().contains("NVRTC_ERROR_COMPILATION"));
        assert!(e.to_string().contains("expected a"));
    }

    #[test]
    fn missing_library_is_unavailable() {
        let e = CudaError::LibraryMissing {
            library: "libcuda.so.1",
            hint: "install the NVIDIA driver",
        };
        assert_eq!(e.kind(), ErrorKind::Unavailable);
        assert_eq!(
            e.to_string(),
            "libcuda.so.1 not found (install the NVIDIA driver)"
        );
    }
}
