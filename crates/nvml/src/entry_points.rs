//! The NVML entry points blocksweep calls, with nvml.h's C signatures, and loading the library.
//!
//! Every name here is in nvml.h since R450 except nvmlDeviceGetCurrentClocksEventReasons (R535,
//! when "throttle" became "event"); the older ...ThrottleReasons, of the same signature, stands
//! in where it is missing, and where neither is there the reasons are simply not read.

use std::ffi::{c_char, c_int, c_uint, c_ulonglong, c_void};
use std::sync::OnceLock;

use libloading::Library;

/// nvml.h's `nvmlDevice_t`: an opaque handle, valid until nvmlShutdown (never called here).
pub(crate) type Device = *mut c_void;
/// nvml.h's `nvmlReturn_t`, as a plain integer so that any value a newer driver returns is valid.
pub(crate) type Code = c_int;
pub(crate) const NVML_SUCCESS: Code = 0;

type HandleFn = unsafe extern "C" fn(*const c_char, *mut Device) -> Code;
pub(crate) type ClockFn = unsafe extern "C" fn(Device, c_uint, *mut c_uint) -> Code;
type ReasonsFn = unsafe extern "C" fn(Device, *mut c_ulonglong) -> Code;

/// The entry points, resolved once.
#[allow(non_snake_case)]
pub(crate) struct Fns {
    pub(crate) nvmlDeviceGetHandleByUUID: HandleFn,
    pub(crate) nvmlDeviceGetHandleByPciBusId_v2: HandleFn,
    pub(crate) nvmlDeviceGetClockInfo: ClockFn,
    pub(crate) nvmlDeviceGetMaxClockInfo: ClockFn,
    /// nvmlDeviceGetCurrentClocksEventReasons, else ...ThrottleReasons, else none.
    pub(crate) reasons: Option<ReasonsFn>,
    nvmlErrorString: Option<unsafe extern "C" fn(Code) -> *const c_char>,
}

/// A loaded, initialised NVML.
pub struct Nvml {
    pub(crate) fns: Fns,
    _lib: Library,
}

/// Why NVML cannot be used here: the library is missing, lacks an entry point, or would not
/// start (no NVIDIA driver loaded).
#[derive(Debug, Clone, PartialEq)]
pub struct Unavailable(pub String);

impl std::fmt::Display for Unavailable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl Nvml {
    /// `Ok` for NVML_SUCCESS, else the library's own words for `code`.
    pub(crate) fn check(&self, code: Code) -> Result<(), String> {
        if code == NVML_SUCCESS {
            return Ok(());
        }
        let text = self.fns.nvmlErrorString.and_then(|f| {
            // SAFETY: nvmlErrorString takes any nvmlReturn_t and returns a static
            // NUL-terminated string (or null, checked before reading).
            let p = unsafe { f(code) };
            // SAFETY: non-null, NUL-terminated, owned by the library, which stays loaded.
            (!p.is_null()).then(|| unsafe { std::ffi::CStr::from_ptr(p) })
        });
        Err(match text {
            Some(t) => format!("NVML error {code}: {}", t.to_string_lossy()),
            None => format!("NVML error {code}"),
        })
    }
}

#[cfg(windows)]
const LIBRARY_NAMES: &[&str] = &["nvml.dll"];
#[cfg(not(windows))]
const LIBRARY_NAMES: &[&str] = &["libnvidia-ml.so.1"];

static NVML: OnceLock<Result<Nvml, Unavailable>> = OnceLock::new();

/// Loads and initialises NVML once; later calls return the same outcome.
pub fn load() -> Result<&'static Nvml, Unavailable> {
    NVML.get_or_init(open).as_ref().map_err(Clone::clone)
}

fn open() -> Result<Nvml, Unavailable> {
    // SAFETY: loading libnvidia-ml runs its initialisers, which is what the library is for.
    let lib = LIBRARY_NAMES
        .iter()
        .find_map(|name| unsafe { Library::new(*name) }.ok())
        .ok_or_else(|| Unavailable(format!("{} not found", LIBRARY_NAMES[0])))?;
    let mut missing = Vec::new();
    let init: Option<unsafe extern "C" fn() -> Code> = lookup(&lib, "nvmlInit_v2", &mut missing);
    let by_uuid = lookup(&lib, "nvmlDeviceGetHandleByUUID", &mut missing);
    let by_pci = lookup(&lib, "nvmlDeviceGetHandleByPciBusId_v2", &mut missing);
    let clock = lookup(&lib, "nvmlDeviceGetClockInfo", &mut missing);
    let max = lookup(&lib, "nvmlDeviceGetMaxClockInfo", &mut missing);
    let (Some(init), Some(by_uuid), Some(by_pci), Some(clock), Some(max)) =
        (init, by_uuid, by_pci, clock, max)
    else {
        return Err(Unavailable(format!(
            "{} lacks {}",
            LIBRARY_NAMES[0],
            missing.join(", ")
        )));
    };
    let mut optional = Vec::new();
    let reasons = lookup(
        &lib,
        "nvmlDeviceGetCurrentClocksEventReasons",
        &mut optional,
    )
    .or_else(|| {
        lookup(
            &lib,
            "nvmlDeviceGetCurrentClocksThrottleReasons",
            &mut optional,
        )
    });
    let nvml = Nvml {
        fns: Fns {
            nvmlDeviceGetHandleByUUID: by_uuid,
            nvmlDeviceGetHandleByPciBusId_v2: by_pci,
            nvmlDeviceGetClockInfo: clock,
            nvmlDeviceGetMaxClockInfo: max,
            reasons,
            nvmlErrorString: lookup(&lib, "nvmlErrorString", &mut optional),
        },
        _lib: lib,
    };
    // SAFETY: nvmlInit_v2 takes nothing; it may be called more than once (reference counted).
    let code = unsafe { init() };
    nvml.check(code)
        .map_err(|e| Unavailable(format!("nvmlInit_v2 failed ({e})")))?;
    Ok(nvml)
}

/// One symbol as a function pointer of type `F`, or its name pushed onto `missing`.
fn lookup<F: Copy>(
    lib: &Library,
    name: &'static str,
    missing: &mut Vec<&'static str>,
) -> Option<F> {
    // SAFETY: F is the C signature nvml.h declares for this name; the pointer is only called
    // through that type, while `lib` stays loaded (it is kept beside the pointers, for good).
    match unsafe { lib.get::<F>(name.as_bytes()) } {
        Ok(symbol) => Some(*symbol),
        Err(_) => {
            missing.push(name);
            None
        }
    }
}
