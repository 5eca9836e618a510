//! The CUDA backend's errors, and the named functions that map native result codes to them.
//!
//! Every driver error keeps its code (shown by its CUDA name, e.g. `CUDA_ERROR_INVALID_VALUE`)
//! and the entry point that returned it. Which [`ErrorKind`] a code means depends on the call
//! site (`CUDA_ERROR_INVALID_VALUE` from `cuLaunchKernel` is a refused launch; from anything
//! else a bug), so each call site uses the mapping function written for it, and each
//! function's doc lists the codes it treats specially there.

use blocksweep_core::{BackendError, ErrorKind};

use crate::codes::{CuCode, NvrtcCode};
use crate::entry_points::error_string;
use crate::entry_points::{driver_words, CuFailure, DriverLoadError};

/// What the install hints name: the oldest driver whose CUDA (12.0) every entry point in
/// [`crate::DRIVER_ENTRY_POINTS`] and the embedded PTX (ISA 8.0) need.
pub const MIN_DRIVER: &str = "NVIDIA driver R525 or newer (CUDA 12.0)";

#[derive(Debug, thiserror::Error)]
pub enum CudaError {
    /// A shared library could not be loaded (no driver, no NVRTC).
    #[error("{library} not found ({hint})")]
    LibraryMissing {
        library: &'static str,
        hint: &'static str,
    },
    /// The driver loaded but offers no usable device, or is older than the floor.
    #[error("{0}")]
    Unavailable(String),
    /// The driver loaded but refused to start (`cuInit` and friends). The message says the
    /// driver is installed, so no "install the driver" hint is added after it.
    #[error("CUDA driver {driver} is installed, but {call} failed: {}", init_text(*.code))]
    DriverUnusable {
        /// "535.309.01 (CUDA 12.2)": see `driver_words`.
        driver: String,
        call: &'static str,
        code: CuCode,
    },
    /// The frame does not fit the device; raised before allocating.
    #[error("{0}")]
    TooLarge(String),
    /// An allocation the driver refused.
    #[error("{call} of {bytes} bytes: {}", code_text(*.code))]
    Alloc {
        call: &'static str,
        bytes: u64,
        code: CuCode,
    },
    /// The driver refused this launch configuration.
    #[error("cuLaunchKernel refused {launch}: {}", code_text(*.code))]
    LaunchRejected { launch: String, code: CuCode },
    /// The driver could not load (JIT-compile) a kernel image; `log` is the JIT's error log.
    #[error("{call} ({source_desc}): {}{}", code_text(*.code), log_text(.log))]
    ModuleLoad {
        call: &'static str,
        source_desc: String,
        code: CuCode,
        log: String,
    },
    /// NVRTC refused to compile the kernel; `log` is its program log.
    #[error("{call}: {code} {log}")]
    Nvrtc {
        call: &'static str,
        code: NvrtcCode,
        log: String,
    },
    /// NVRTC is present but cannot produce code this driver loads.
    #[error("{0}")]
    NvrtcUnusable(String),
    /// A user's kernel that cannot be built as declared (wrong language, no such entry, an
    /// argument list the compiled kernel contradicts).
    #[error("{0}")]
    Program(String),
    /// Work still unfinished at the deadline ([`blocksweep_core::program::deadline`]).
    #[error("{what} did not finish within {seconds} s; the device may still be running it")]
    Deadline { what: &'static str, seconds: f64 },
    /// An earlier error left the context unusable; nothing more is asked of the driver.
    #[error("the CUDA context is unusable after an earlier error ({0})")]
    Unusable(String),
    /// The backend was used out of order or with mismatched sizes (a caller's bug).
    #[error("{0}")]
    Usage(String),
    /// Anything else the driver returned.
    #[error("{call}: {}", code_text(*.code))]
    Driver { call: &'static str, code: CuCode },
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
            CudaError::ModuleLoad { .. }
            | CudaError::Nvrtc { .. }
            | CudaError::NvrtcUnusable(_)
            | CudaError::Program(_) => ErrorKind::Build,
            CudaError::Driver { .. }
            | CudaError::Usage(_)
            | CudaError::Deadline { .. }
            | CudaError::Unusable(_) => ErrorKind::Driver,
        }
    }

    /// Whether this error leaves the context unusable, and how: see [`Poison`].
    /// ([`CudaError::Unusable`] reports a state recorded when it began, so it is not one.)
    pub(crate) fn poison(&self) -> Option<Poison> {
        match self {
            CudaError::Deadline { .. } => Some(Poison::Busy),
            e => e.code().filter(|c| is_sticky(*c)).map(|_| Poison::Faulted),
        }
    }

    /// The driver's result code, where the error came from one.
    pub fn code(&self) -> Option<CuCode> {
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

/// How an error leaves the context: either way every later call fails without the driver.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Poison {
    /// A kernel faulted: every call in the context returns the error at once, so teardown is
    /// safe (and releasing the primary context is what lets a later open start afresh).
    Faulted,
    /// Work may still be running: anything that frees memory could wait for it for ever, so
    /// teardown leaks the context instead.
    Busy,
}

/// Whether a backend's context is still usable: the first error that poisons it is kept,
/// and every later call is answered with it ([`CudaError::Unusable`]) without the driver.
#[derive(Debug, Default)]
pub(crate) struct Health {
    failed: Option<(String, Poison)>,
}

impl Health {
    pub(crate) fn check(&self) -> Result<(), CudaError> {
        match &self.failed {
            Some((reason, _)) => Err(CudaError::Unusable(reason.clone())),
            None => Ok(()),
        }
    }

    /// Notes `e`: the first error that poisons the context is kept; any other changes nothing.
    pub(crate) fn record(&mut self, e: &CudaError) {
        if let (None, Some(poison)) = (&self.failed, e.poison()) {
            self.failed = Some((e.to_string(), poison));
        }
    }

    /// Whether work may still be running, so that teardown must not free anything.
    pub(crate) fn busy(&self) -> bool {
        matches!(self.failed, Some((_, Poison::Busy)))
    }
}

/// The codes after which the context is unusable ("the context ... must be destroyed", cuda.h):
/// a kernel's memory fault, trap, assert or uncorrectable ECC error, a watchdog timeout, a
/// destroyed context. Each call returns them from then on.
pub(crate) fn is_sticky(code: CuCode) -> bool {
    matches!(
        code,
        CuCode::CUDA_ERROR_ILLEGAL_ADDRESS
            | CuCode::CUDA_ERROR_LAUNCH_FAILED
            | CuCode::CUDA_ERROR_ILLEGAL_INSTRUCTION
            | CuCode::CUDA_ERROR_MISALIGNED_ADDRESS
            | CuCode::CUDA_ERROR_HARDWARE_STACK_ERROR
            | CuCode::CUDA_ERROR_INVALID_ADDRESS_SPACE
            | CuCode::CUDA_ERROR_INVALID_PC
            | CuCode::CUDA_ERROR_ASSERT
            | CuCode::CUDA_ERROR_LAUNCH_TIMEOUT
            | CuCode::CUDA_ERROR_ECC_UNCORRECTABLE
            | CuCode::CUDA_ERROR_CONTEXT_IS_DESTROYED
    )
}

impl From<CudaError> for BackendError {
    fn from(e: CudaError) -> Self {
        let kind = e.kind();
        BackendError::with_source(crate::API, kind, e)
    }
}

impl From<DriverLoadError> for CudaError {
    fn from(e: DriverLoadError) -> Self {
        match e {
            DriverLoadError::NotFound => CudaError::LibraryMissing {
                library: "libcuda.so.1",
                hint: "install NVIDIA driver R525 or newer: CUDA 12.0",
            },
            DriverLoadError::Missing {
                file,
                version,
                names,
            } => CudaError::Unavailable(format!(
                "the installed CUDA driver {} lacks {}: install {MIN_DRIVER}",
                driver_words(file.as_deref(), version),
                few_names(&names)
            )),
        }
    }
}

/// At most three names, then how many more: "a, b, c and 4 more".
pub(crate) fn few_names(names: &[&str]) -> String {
    let shown = names.iter().take(3).copied().collect::<Vec<_>>().join(", ");
    match names.len() {
        n if n > 3 => format!("{shown} and {} more", n - 3),
        _ => shown,
    }
}

/// The code's name plus the driver's own sentence for it when the driver is loaded.
fn code_text(code: CuCode) -> String {
    match error_string(code) {
        Some(s) => format!("{} ({s})", code.name()),
        None => code.name(),
    }
}

/// As [`code_text`], with plain words for what start-up codes mean on a real machine.
fn init_text(code: CuCode) -> String {
    let why = match code {
        CuCode::CUDA_ERROR_NO_DEVICE => "no NVIDIA GPU visible",
        CuCode::CUDA_ERROR_STUB_LIBRARY => "the toolkit's link stub was loaded, not the driver",
        CuCode::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH => {
            "the user-space driver and the kernel module differ in version"
        }
        CuCode::CUDA_ERROR_OPERATING_SYSTEM | CuCode::CUDA_ERROR_UNKNOWN => {
            "no usable NVIDIA GPU: the kernel module or /dev/nvidia* may be missing"
        }
        _ => return code_text(code),
    };
    format!("{} ({why})", code.name())
}

fn log_text(log: &str) -> String {
    match log.trim() {
        "" => String::new(),
        l => format!(": {}", l.replace('\n', " | ")),
    }
}

/// Driver start-up: `cuInit`, `cuDeviceGetCount`, `cuDevicePrimaryCtxRetain`.
///
/// `CUDA_ERROR_NO_DEVICE`, `CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER`, `CUDA_ERROR_STUB_LIBRARY` (the
/// toolkit's link stub found instead of the driver), `CUDA_ERROR_SYSTEM_DRIVER_MISMATCH`,
/// `CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE`, `CUDA_ERROR_DEVICE_UNAVAILABLE`,
/// `CUDA_ERROR_OPERATING_SYSTEM`, `CUDA_ERROR_NOT_PERMITTED`, `CUDA_ERROR_NOT_SUPPORTED` and
/// `CUDA_ERROR_UNKNOWN` (what a container without the device nodes tends to give) mean there
/// is no usable CUDA here: [`CudaError::DriverUnusable`], which names the driver (`driver`).
/// Anything else is a driver error.
pub fn map_init(call: &'static str, driver: &str, code: CuCode) -> CudaError {
    match code {
        CuCode::CUDA_ERROR_NO_DEVICE
        | CuCode::CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER
        | CuCode::CUDA_ERROR_STUB_LIBRARY
        | CuCode::CUDA_ERROR_SYSTEM_DRIVER_MISMATCH
        | CuCode::CUDA_ERROR_COMPAT_NOT_SUPPORTED_ON_DEVICE
        | CuCode::CUDA_ERROR_DEVICE_UNAVAILABLE
        | CuCode::CUDA_ERROR_OPERATING_SYSTEM
        | CuCode::CUDA_ERROR_NOT_PERMITTED
        | CuCode::CUDA_ERROR_NOT_SUPPORTED
        | CuCode::CUDA_ERROR_UNKNOWN => CudaError::DriverUnusable {
            driver: driver.to_string(),
            call,
            code,
        },
        code => CudaError::Driver { call, code },
    }
}

/// Allocation: `cuMemAlloc_v2`.
///
/// `CUDA_ERROR_OUT_OF_MEMORY` is [`CudaError::Alloc`] (kind OutOfMemory); anything else is a
/// driver error.
pub fn map_alloc(call: &'static str, bytes: u64, code: CuCode) -> CudaError {
    match code {
        CuCode::CUDA_ERROR_OUT_OF_MEMORY => CudaError::Alloc { call, bytes, code },
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
pub fn map_launch(launch: &str, code: CuCode) -> CudaError {
    match code {
        CuCode::CUDA_ERROR_INVALID_VALUE
        | CuCode::CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
        | CuCode::CUDA_ERROR_LAUNCH_INCOMPATIBLE_TEXTURING => CudaError::LaunchRejected {
            launch: launch.to_string(),
            code,
        },
        code => CudaError::Driver {
            call: "cuLaunchKernel",
            code,
        },
    }
}

/// `cuModuleLoadDataEx` (the driver JIT-compiles PTX or checks a cubin) and
/// `cuModuleGetFunction`; `log` is the JIT's error log (empty where there is none).
///
/// `CUDA_ERROR_INVALID_PTX`, `CUDA_ERROR_UNSUPPORTED_PTX_VERSION` (PTX newer than the driver),
/// `CUDA_ERROR_INVALID_IMAGE`, `CUDA_ERROR_NO_BINARY_FOR_GPU`, `CUDA_ERROR_JIT_COMPILER_NOT_FOUND`,
/// `CUDA_ERROR_JIT_COMPILATION_DISABLED`, `CUDA_ERROR_INVALID_SOURCE`,
/// `CUDA_ERROR_SHARED_OBJECT_INIT_FAILED` and `CUDA_ERROR_NOT_FOUND` (no such entry point) are
/// build failures: [`CudaError::ModuleLoad`]. `CUDA_ERROR_OUT_OF_MEMORY` is an allocation
/// failure. Anything else is a driver error.
pub fn map_module_load(
    call: &'static str,
    source_desc: &str,
    code: CuCode,
    log: &str,
) -> CudaError {
    match code {
        CuCode::CUDA_ERROR_INVALID_PTX
        | CuCode::CUDA_ERROR_UNSUPPORTED_PTX_VERSION
        | CuCode::CUDA_ERROR_INVALID_IMAGE
        | CuCode::CUDA_ERROR_NO_BINARY_FOR_GPU
        | CuCode::CUDA_ERROR_JIT_COMPILER_NOT_FOUND
        | CuCode::CUDA_ERROR_JIT_COMPILATION_DISABLED
        | CuCode::CUDA_ERROR_INVALID_SOURCE
        | CuCode::CUDA_ERROR_SHARED_OBJECT_INIT_FAILED
        | CuCode::CUDA_ERROR_NOT_FOUND => CudaError::ModuleLoad {
            call,
            source_desc: source_desc.to_string(),
            code,
            log: log.to_string(),
        },
        CuCode::CUDA_ERROR_OUT_OF_MEMORY => map_alloc(call, 0, code),
        code => CudaError::Driver { call, code },
    }
}

/// Every other driver call (queries, copies, memset, events, synchronisation).
///
/// `CUDA_ERROR_OUT_OF_MEMORY` keeps its OutOfMemory kind; everything else, including the
/// sticky errors of a kernel that faulted (`CUDA_ERROR_ILLEGAL_ADDRESS`,
/// `CUDA_ERROR_LAUNCH_FAILED`), is a driver error.
pub fn map_driver(call: &'static str, code: CuCode) -> CudaError {
    match code {
        CuCode::CUDA_ERROR_OUT_OF_MEMORY => map_alloc(call, 0, code),
        code => CudaError::Driver { call, code },
    }
}

/// NVRTC calls. Every failure is a build failure; `log` is the program log where there is one.
pub fn map_nvrtc(call: &'static str, code: NvrtcCode, log: String) -> CudaError {
    CudaError::Nvrtc { call, code, log }
}

/// `result.or_map(map_driver)`: a failed call through a `map_<situation>` function.
pub(crate) trait OrMap<T> {
    fn or_map(self, map: fn(&'static str, CuCode) -> CudaError) -> Result<T, CudaError>;
}

impl<T> OrMap<T> for Result<T, CuFailure> {
    fn or_map(self, map: fn(&'static str, CuCode) -> CudaError) -> Result<T, CudaError> {
        self.map_err(|f| map(f.call, f.code))
    }
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;
