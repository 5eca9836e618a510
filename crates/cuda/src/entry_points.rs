//! Every libcuda and libnvrtc entry point blocksweep can call: one list, checked when the
//! library loads.
//!
//! Each table below is written once, C signature and all, and the macro turns it into a
//! struct of function pointers, a name list ([`DRIVER_ENTRY_POINTS`], [`NVRTC_ENTRY_POINTS`])
//! and a resolver that reports every missing name at once. Calls go through [`cu!`] (driver)
//! or [`nvrtc!`](crate::nvrtc) and nowhere else, so an entry point that is not in a table cannot be
//! called, one that is in a table but never called is a dead-code warning, and a driver that
//! lacks one is refused at probe time with a one-line message instead of a panic mid-run.
//!
//! Why not cudarc's `sys` functions: they return its `CUresult` enum, and a driver newer than
//! the bindings can return a code the enum lacks (undefined behaviour); here every function
//! returns a plain integer ([`CuCode`], [`NvrtcCode`]). cudarc still supplies the types
//! (handles, attribute enums, which are only ever passed *in*, with values we chose).
//!
//! The floor is CUDA 12.0 (driver R525): every name here is exported by R535's libcuda.so.1
//! (crates/cuda/tests/data/libcuda-535-exports.txt, checked by tests/floor.rs) and by NVRTC 12.0.
//! Where the header maps a name to a versioned symbol newer than 12.0 (`cuEventElapsedTime` ->
//! `cuEventElapsedTime_v2` from 12.8), the unversioned symbol is the one called.

use std::ffi::{c_char, c_int, c_uchar, c_uint, c_void, CStr};
use std::sync::OnceLock;

use cudarc::driver::sys::{
    CUcontext, CUdevice, CUdevice_attribute, CUdeviceptr, CUevent, CUfunction,
    CUfunction_attribute, CUjit_option, CUmodule, CUoccupancyB2DSize, CUstream, CUuuid,
};
use cudarc::nvrtc::sys::nvrtcProgram;
use libloading::Library;

use crate::codes::{CuCode, NvrtcCode};

/// Declares a table of entry points: the struct of pointers, the list of names, the resolver.
macro_rules! entry_point_table {
    ($(#[$doc:meta])* $table:ident, $list:ident -> $ret:ty {
        $( fn $name:ident($($arg:ident: $ty:ty),* $(,)?); )*
    }) => {
        $(#[$doc])*
        #[allow(non_snake_case)]
        pub(crate) struct $table {
            $( pub(crate) $name: unsafe extern "C" fn($($arg: $ty),*) -> $ret, )*
        }

        /// The names in the table, in its order.
        pub const $list: &[&str] = &[$(stringify!($name)),*];

        impl $table {
            /// Every pointer of the table from `lib`, or every name `lib` lacks.
            #[allow(non_snake_case)]
            pub(crate) fn resolve(lib: &Library) -> Result<$table, Vec<&'static str>> {
                let mut missing = Vec::new();
                $( let $name = lookup(lib, stringify!($name), &mut missing); )*
                match ($($name,)*) {
                    ($(Some($name),)*) => Ok($table { $($name),* }),
                    _ => Err(missing),
                }
            }
        }
    };
}

/// One symbol as a function pointer of type `F`, or its name pushed onto `missing`.
fn lookup<F: Copy>(
    lib: &Library,
    name: &'static str,
    missing: &mut Vec<&'static str>,
) -> Option<F> {
    // SAFETY: F is the C signature the table declares for this name (cuda.h / nvrtc.h of
    // CUDA 12.0); the pointer is only called through that type, while `lib` stays loaded.
    match unsafe { lib.get::<F>(name) } {
        Ok(symbol) => Some(*symbol),
        Err(_) => {
            missing.push(name);
            None
        }
    }
}

entry_point_table! {
    /// The CUDA driver API as blocksweep uses it.
    DriverFns, DRIVER_ENTRY_POINTS -> CuCode {
        fn cuInit(flags: c_uint);
        fn cuDriverGetVersion(version: *mut c_int);
        fn cuGetErrorName(code: CuCode, name: *mut *const c_char);
        fn cuGetErrorString(code: CuCode, text: *mut *const c_char);
        fn cuDeviceGetCount(count: *mut c_int);
        fn cuDeviceGet(device: *mut CUdevice, ordinal: c_int);
        fn cuDeviceGetName(name: *mut c_char, len: c_int, device: CUdevice);
        fn cuDeviceGetUuid_v2(uuid: *mut CUuuid, device: CUdevice);
        fn cuDeviceGetAttribute(value: *mut c_int, attribute: CUdevice_attribute, device: CUdevice);
        fn cuDeviceTotalMem_v2(bytes: *mut usize, device: CUdevice);
        fn cuDevicePrimaryCtxRetain(context: *mut CUcontext, device: CUdevice);
        fn cuDevicePrimaryCtxRelease_v2(device: CUdevice);
        fn cuCtxSetCurrent(context: CUcontext);
        fn cuStreamCreate(stream: *mut CUstream, flags: c_uint);
        fn cuStreamDestroy_v2(stream: CUstream);
        fn cuStreamSynchronize(stream: CUstream);
        fn cuMemGetInfo_v2(free: *mut usize, total: *mut usize);
        fn cuMemAlloc_v2(ptr: *mut CUdeviceptr, bytes: usize);
        fn cuMemFree_v2(ptr: CUdeviceptr);
        fn cuMemAllocHost_v2(ptr: *mut *mut c_void, bytes: usize);
        fn cuMemFreeHost(ptr: *mut c_void);
        fn cuMemcpyHtoDAsync_v2(dst: CUdeviceptr, src: *const c_void, bytes: usize, stream: CUstream);
        fn cuMemcpyDtoHAsync_v2(dst: *mut c_void, src: CUdeviceptr, bytes: usize, stream: CUstream);
        fn cuMemcpyDtoDAsync_v2(dst: CUdeviceptr, src: CUdeviceptr, bytes: usize, stream: CUstream);
        fn cuMemsetD8Async(dst: CUdeviceptr, value: c_uchar, count: usize, stream: CUstream);
        fn cuModuleLoadDataEx(
            module: *mut CUmodule,
            image: *const c_void,
            num_options: c_uint,
            options: *mut CUjit_option,
            values: *mut *mut c_void,
        );
        fn cuModuleGetFunction(function: *mut CUfunction, module: CUmodule, name: *const c_char);
        fn cuModuleUnload(module: CUmodule);
        fn cuFuncGetAttribute(value: *mut c_int, attribute: CUfunction_attribute, function: CUfunction);
        fn cuOccupancyMaxActiveBlocksPerMultiprocessor(
            blocks: *mut c_int,
            function: CUfunction,
            block_size: c_int,
            dynamic_shared: usize,
        );
        fn cuOccupancyMaxPotentialBlockSize(
            min_grid: *mut c_int,
            block_size: *mut c_int,
            function: CUfunction,
            shared_for_block: CUoccupancyB2DSize,
            dynamic_shared: usize,
            block_size_limit: c_int,
        );
        fn cuEventCreate(event: *mut CUevent, flags: c_uint);
        fn cuEventRecord(event: CUevent, stream: CUstream);
        fn cuEventElapsedTime(ms: *mut f32, start: CUevent, end: CUevent);
        fn cuEventQuery(event: CUevent);
        fn cuEventDestroy_v2(event: CUevent);
        fn cuLaunchKernel(
            function: CUfunction,
            grid_x: c_uint,
            grid_y: c_uint,
            grid_z: c_uint,
            block_x: c_uint,
            block_y: c_uint,
            block_z: c_uint,
            shared_bytes: c_uint,
            stream: CUstream,
            params: *mut *mut c_void,
            extra: *mut *mut c_void,
        );
    }
}

entry_point_table! {
    /// NVRTC as blocksweep uses it (all present since NVRTC 11.2).
    NvrtcFns, NVRTC_ENTRY_POINTS -> NvrtcCode {
        fn nvrtcVersion(major: *mut c_int, minor: *mut c_int);
        fn nvrtcGetNumSupportedArchs(count: *mut c_int);
        fn nvrtcGetSupportedArchs(archs: *mut c_int);
        fn nvrtcCreateProgram(
            program: *mut nvrtcProgram,
            source: *const c_char,
            name: *const c_char,
            num_headers: c_int,
            headers: *const *const c_char,
            include_names: *const *const c_char,
        );
        fn nvrtcCompileProgram(program: nvrtcProgram, num_options: c_int, options: *const *const c_char);
        fn nvrtcAddNameExpression(program: nvrtcProgram, name_expression: *const c_char);
        fn nvrtcGetLoweredName(
            program: nvrtcProgram,
            name_expression: *const c_char,
            lowered_name: *mut *const c_char,
        );
        fn nvrtcGetPTXSize(program: nvrtcProgram, size: *mut usize);
        fn nvrtcGetPTX(program: nvrtcProgram, ptx: *mut c_char);
        fn nvrtcGetCUBINSize(program: nvrtcProgram, size: *mut usize);
        fn nvrtcGetCUBIN(program: nvrtcProgram, cubin: *mut c_char);
        fn nvrtcGetProgramLogSize(program: nvrtcProgram, size: *mut usize);
        fn nvrtcGetProgramLog(program: nvrtcProgram, log: *mut c_char);
        fn nvrtcDestroyProgram(program: *mut nvrtcProgram);
    }
}

/// `cuFuncGetParamInfo(function, index, &offset, &size)`: CUDA 12.4, so newer than the floor.
pub(crate) type FuncGetParamInfo =
    unsafe extern "C" fn(CUfunction, usize, *mut usize, *mut usize) -> CuCode;

/// Driver entry points newer than the floor: called where the driver has them, skipped where
/// it does not, and never a reason to refuse a driver (so not in [`DRIVER_ENTRY_POINTS`]).
#[allow(non_snake_case)]
pub(crate) struct OptionalFns {
    pub(crate) cuFuncGetParamInfo: Option<FuncGetParamInfo>,
}

/// The names in `OptionalFns`.
pub const OPTIONAL_DRIVER_ENTRY_POINTS: &[&str] = &["cuFuncGetParamInfo"];

impl OptionalFns {
    fn resolve(lib: &Library) -> OptionalFns {
        let mut absent = Vec::new();
        OptionalFns {
            cuFuncGetParamInfo: lookup(lib, OPTIONAL_DRIVER_ENTRY_POINTS[0], &mut absent),
        }
    }
}

/// A call that returned something other than success: which entry point, and its code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CuFailure {
    pub call: &'static str,
    pub code: CuCode,
}

impl CuFailure {
    pub(crate) fn check(call: &'static str, code: CuCode) -> Result<(), CuFailure> {
        if code.is_success() {
            Ok(())
        } else {
            Err(CuFailure { call, code })
        }
    }
}

/// Calls a driver entry point from the table, `unsafe { cu!(cuInit(0)) }`, giving
/// `Result<(), CuFailure>` named after the entry point. Before the driver has loaded, every
/// call fails with `CUDA_ERROR_NOT_INITIALIZED` instead of panicking.
macro_rules! cu {
    ($name:ident($($arg:expr),* $(,)?)) => {
        match $crate::entry_points::driver_fns() {
            Some(fns) => $crate::entry_points::CuFailure::check(
                stringify!($name),
                (fns.$name)($($arg),*),
            ),
            None => Err($crate::entry_points::CuFailure {
                call: stringify!($name),
                code: $crate::codes::CuCode::CUDA_ERROR_NOT_INITIALIZED,
            }),
        }
    };
}
pub(crate) use cu;

/// libcuda, loaded once per process and never unloaded (the pointers point into it).
pub(crate) struct LoadedDriver {
    _lib: Library,
    pub fns: DriverFns,
    pub optional: OptionalFns,
    /// The file the loader mapped, e.g. ".../libcuda.so.535.309.01", where /proc says.
    pub file: Option<String>,
}

/// Why libcuda could not be used, kept so that every later probe gives the same answer.
#[derive(Debug, Clone)]
pub(crate) enum DriverLoadError {
    NotFound,
    /// The library loaded but lacks entry points (a driver older than CUDA 12.0).
    Missing {
        file: Option<String>,
        version: Option<i32>,
        names: Vec<&'static str>,
    },
}

static PROVIDER: OnceLock<Result<LoadedDriver, DriverLoadError>> = OnceLock::new();

#[cfg(windows)]
const LIBCUDA_NAMES: &[&str] = &["nvcuda.dll"];
#[cfg(not(windows))]
const LIBCUDA_NAMES: &[&str] = &["libcuda.so.1", "libcuda.so"];

/// Loads libcuda and resolves the whole table (once; later calls return the same outcome).
pub(crate) fn load_driver() -> Result<&'static LoadedDriver, DriverLoadError> {
    PROVIDER
        .get_or_init(open_driver)
        .as_ref()
        .map_err(Clone::clone)
}

fn open_driver() -> Result<LoadedDriver, DriverLoadError> {
    // SAFETY: loading libcuda runs its initialisers, which is what the driver is for.
    let lib = LIBCUDA_NAMES
        .iter()
        .find_map(|name| unsafe { Library::new(*name) }.ok())
        .ok_or(DriverLoadError::NotFound)?;
    let file = mapped_file("libcuda.so");
    match DriverFns::resolve(&lib) {
        Ok(fns) => Ok(LoadedDriver {
            optional: OptionalFns::resolve(&lib),
            _lib: lib,
            fns,
            file,
        }),
        Err(names) => {
            let mut missing = Vec::new();
            let get_version: Option<unsafe extern "C" fn(*mut c_int) -> CuCode> =
                lookup(&lib, "cuDriverGetVersion", &mut missing);
            let mut v = 0;
            // SAFETY: cuDriverGetVersion writes one int and needs no cuInit.
            let version = get_version
                .filter(|f| unsafe { f(&mut v) }.is_success())
                .map(|_| v);
            Err(DriverLoadError::Missing {
                file,
                version,
                names,
            })
        }
    }
}

/// The driver's table once libcuda has loaded with every entry point, else `None`.
pub(crate) fn driver_fns() -> Option<&'static DriverFns> {
    PROVIDER.get()?.as_ref().ok().map(|d| &d.fns)
}

/// The driver's optional entry points once libcuda has loaded, else `None`.
pub(crate) fn optional_fns() -> Option<&'static OptionalFns> {
    PROVIDER.get()?.as_ref().ok().map(|d| &d.optional)
}

/// The path of the first file mapped into this process whose name starts with `prefix`
/// (Linux: /proc/self/maps names the real file behind a `libcuda.so.1` link).
pub(crate) fn mapped_file(prefix: &str) -> Option<String> {
    let maps = std::fs::read_to_string("/proc/self/maps").ok()?;
    maps.lines()
        .filter_map(|l| l.split_whitespace().nth(5))
        .find(|p| {
            std::path::Path::new(p)
                .file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(prefix))
        })
        .map(str::to_string)
}

/// The version in a driver library's file name: ".../libcuda.so.535.309.01" -> "535.309.01";
/// `None` for a name without one ("libcuda.so.1").
pub(crate) fn file_version(file: &str) -> Option<String> {
    let name = std::path::Path::new(file).file_name()?.to_string_lossy();
    let v = name.split_once(".so.")?.1;
    (v.contains('.') && v.chars().all(|c| c.is_ascii_digit() || c == '.')).then(|| v.to_string())
}

/// "535.309.01 (CUDA 12.2)", from what is known of a driver: its library file's version and
/// cuDriverGetVersion's number.
pub(crate) fn driver_words(file: Option<&str>, version: Option<i32>) -> String {
    let file = file.and_then(file_version);
    let cuda = version.map(|v| format!("CUDA {}.{}", v / 1000, (v % 1000) / 10));
    match (file, cuda) {
        (Some(f), Some(c)) => format!("{f} ({c})"),
        (Some(f), None) => f,
        (None, Some(c)) => format!("for {c}"),
        (None, None) => "(libcuda.so.1)".into(),
    }
}

/// A code's name needs the loaded driver for codes newer than the bindings, so it is here,
/// beside the entry points, not in codes.rs (which the entry points' signatures use).
impl CuCode {
    /// The header's name (`CUDA_ERROR_INVALID_VALUE`): from codes.rs's table, else from the
    /// loaded driver's `cuGetErrorName` (which knows codes newer than these bindings), else
    /// `CUresult 12345`.
    pub fn name(self) -> String {
        if self == CuCode::CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER {
            return "CUDA_ERROR_CALL_REQUIRES_NEWER_DRIVER".into();
        }
        if let Some((_, n)) = crate::codes::DRIVER_NAMES.iter().find(|(c, _)| *c == self) {
            return (*n).to_string();
        }
        error_name(self).unwrap_or_else(|| format!("CUresult {}", self.0))
    }
}

/// The driver's `cuGetErrorName` for `code`, when the driver is loaded and knows the code.
pub(crate) fn error_name(code: CuCode) -> Option<String> {
    let mut s: *const c_char = std::ptr::null();
    // SAFETY: cuGetErrorName only writes a pointer to a static string (or leaves it null).
    unsafe { cu!(cuGetErrorName(code, &mut s)) }.ok()?;
    static_c_str(s)
}

/// The driver's sentence for `code` (`cuGetErrorString`), when it has one.
pub(crate) fn error_string(code: CuCode) -> Option<String> {
    let mut s: *const c_char = std::ptr::null();
    // SAFETY: as above.
    unsafe { cu!(cuGetErrorString(code, &mut s)) }.ok()?;
    static_c_str(s)
}

fn static_c_str(s: *const c_char) -> Option<String> {
    // SAFETY: non-null pointers here come from the driver's static string tables.
    (!s.is_null()).then(|| unsafe { CStr::from_ptr(s) }.to_string_lossy().into_owned())
}

#[cfg(test)]
#[path = "entry_points_tests.rs"]
mod tests;
