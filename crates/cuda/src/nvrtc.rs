//! NVRTC: finding a libnvrtc and compiling CUDA C++ with it (kernels/grayscale.cu, or a user's
//! kernel) to PTX or to a cubin, as plan.rs decides for the driver.

use std::ffi::{c_char, CStr, CString};
use std::ptr;

use cudarc::nvrtc::sys::nvrtcProgram;
use libloading::Library;

use crate::codes::NvrtcCode;
use crate::entry_points::NvrtcFns;
use crate::error::{few_names, map_nvrtc, CudaError};
#[cfg(any(test, feature = "test-support"))]
use crate::plan::{pick_arch, Plan};

/// Calls an NVRTC entry point through a table (`nvrtc!(fns, nvrtcVersion(&mut a, &mut b))`),
/// giving `Result<(), CudaError>` named after the entry point, with no program log.
macro_rules! nvrtc {
    ($fns:ident, $name:ident($($arg:expr),* $(,)?)) => {
        check(stringify!($name), ($fns.$name)($($arg),*))
    };
}

fn check(call: &'static str, code: NvrtcCode) -> Result<(), CudaError> {
    match code.is_success() {
        true => Ok(()),
        false => Err(map_nvrtc(call, code, String::new())),
    }
}

/// Sonames tried, newest first: 13 and 12 are the majors whose cubins and PTX this crate's
/// floor (CUDA 12.0) can meet; a bare libnvrtc.so is whatever the toolkit links to.
const LIBNVRTC_NAMES: &[&str] = &["libnvrtc.so.13", "libnvrtc.so.12", "libnvrtc.so"];

/// One loaded libnvrtc with its table; unloaded on drop.
pub(crate) struct Nvrtc {
    fns: NvrtcFns,
    /// nvrtcVersion.
    pub version: (i32, i32),
    /// The soname it was loaded by.
    pub library: &'static str,
    // Last: the table points into it.
    _lib: Library,
}

impl Nvrtc {
    fn load(name: &'static str) -> Result<Nvrtc, String> {
        // SAFETY: loading libnvrtc runs only its own initialisers.
        let lib = unsafe { Library::new(name) }.map_err(|_| format!("{name} not found"))?;
        let fns = NvrtcFns::resolve(&lib)
            .map_err(|missing| format!("{name} lacks {}", few_names(&missing)))?;
        let (mut major, mut minor) = (0, 0);
        // SAFETY: two int out.
        unsafe { nvrtc!(fns, nvrtcVersion(&mut major, &mut minor)) }.map_err(|e| e.to_string())?;
        Ok(Nvrtc {
            fns,
            version: (major, minor),
            library: name,
            _lib: lib,
        })
    }

    /// The libnvrtc to use under a driver implementing CUDA `driver`: the newest one not newer
    /// than the driver (its PTX loads), else the newest; with no driver, the newest.
    pub(crate) fn find(driver: Option<(i32, i32)>) -> Result<Nvrtc, CudaError> {
        let mut best: Option<Nvrtc> = None;
        for name in LIBNVRTC_NAMES {
            let Ok(candidate) = Nvrtc::load(name) else {
                continue;
            };
            let rank = |n: &Nvrtc| (driver.is_none_or(|d| n.version <= d), n.version);
            if best.as_ref().is_none_or(|b| rank(&candidate) > rank(b)) {
                best = Some(candidate);
            }
        }
        best.ok_or(CudaError::LibraryMissing {
            library: "libnvrtc.so.13 or libnvrtc.so.12",
            hint: "install CUDA's NVRTC, or use the embedded PTX",
        })
    }

    /// The architectures this NVRTC compiles for (52, 75, 90, ...).
    pub(crate) fn supported_archs(&self) -> Result<Vec<i32>, CudaError> {
        let fns = &self.fns;
        let mut count = 0;
        // SAFETY: the functions are live while `self` holds libnvrtc; one int out.
        unsafe { nvrtc!(fns, nvrtcGetNumSupportedArchs(&mut count)) }?;
        let mut archs = vec![0i32; count.max(0) as usize];
        // SAFETY: `archs` has room for exactly the `count` ints NVRTC said it will write.
        unsafe { nvrtc!(fns, nvrtcGetSupportedArchs(archs.as_mut_ptr())) }?;
        Ok(archs)
    }

    /// Compiles kernels/grayscale.cu's `source` for `arch` ("compute_90" gives PTX, "sm_90"
    /// a cubin).
    #[cfg(any(test, feature = "test-support"))]
    pub(crate) fn compile(&self, source: &str, arch: &str) -> Result<Compiled, CudaError> {
        let unit = Unit {
            text: source,
            name: "grayscale.cu",
            options: &[],
            name_expression: None,
        };
        self.compile_unit(&unit, arch)
    }

    /// Compiles `unit` for `arch`, with its options after the architecture (and C++17 unless
    /// they choose a standard); with a name expression, also returns its lowered name.
    pub(crate) fn compile_unit(&self, unit: &Unit, arch: &str) -> Result<Compiled, CudaError> {
        let fns = &self.fns;
        let options = compile_options(arch, unit.options);
        let invalid = |what: &str| CudaError::Nvrtc {
            call: "nvrtcCreateProgram",
            code: NvrtcCode::NVRTC_ERROR_INVALID_INPUT,
            log: format!("the {what} contains a NUL byte"),
        };
        let src = CString::new(unit.text).map_err(|_| invalid("kernel source"))?;
        let name = CString::new(unit.name).map_err(|_| invalid("program name"))?;
        let expr = unit.name_expression.map(CString::new).transpose();
        let expr = expr.map_err(|_| invalid("entry point's name"))?;
        let c_options = options
            .iter()
            .map(|o| CString::new(o.as_str()))
            .collect::<Result<Vec<_>, _>>()
            .map_err(|_| invalid("compiler options"))?;
        let mut raw: nvrtcProgram = ptr::null_mut();
        // SAFETY: NUL-terminated source and name; no headers.
        unsafe {
            nvrtc!(
                fns,
                nvrtcCreateProgram(
                    &mut raw,
                    src.as_ptr(),
                    name.as_ptr(),
                    0,
                    ptr::null(),
                    ptr::null()
                )
            )
        }?;
        let program = Program { raw, fns };
        if let Some(e) = &expr {
            // SAFETY: the program is live and not compiled yet; a NUL-terminated expression.
            unsafe { nvrtc!(fns, nvrtcAddNameExpression(raw, e.as_ptr())) }?;
        }
        let pointers: Vec<*const c_char> = c_options.iter().map(|o| o.as_ptr()).collect();
        // SAFETY: the program is live; `pointers` holds that many NUL-terminated strings.
        if let Err(e) = unsafe {
            nvrtc!(
                fns,
                nvrtcCompileProgram(raw, pointers.len() as i32, pointers.as_ptr())
            )
        } {
            let log = program.log();
            return Err(match e {
                CudaError::Nvrtc { call, code, .. } => map_nvrtc(call, code, log),
                other => other,
            });
        }
        let image = match arch.starts_with("sm_") {
            true => program.output(fns.nvrtcGetCUBINSize, fns.nvrtcGetCUBIN, "nvrtcGetCUBIN")?,
            false => program.output(fns.nvrtcGetPTXSize, fns.nvrtcGetPTX, "nvrtcGetPTX")?,
        };
        let lowered = expr.map(|e| program.lowered_name(&e)).transpose()?;
        Ok(Compiled {
            image,
            options,
            lowered,
        })
    }
}

/// One translation unit for NVRTC: its text, the name its log uses, extra options, and a
/// name expression (a `__global__` function's name) whose lowered (mangled) name is wanted.
pub(crate) struct Unit<'a> {
    pub text: &'a str,
    pub name: &'a str,
    pub options: &'a [String],
    pub name_expression: Option<&'a str>,
}

/// NVRTC's options: the architecture, C++17 unless `extra` chooses a standard, then `extra`.
pub(crate) fn compile_options(arch: &str, extra: &[String]) -> Vec<String> {
    let mut options = vec![format!("--gpu-architecture={arch}")];
    if !extra
        .iter()
        .any(|o| o.starts_with("--std") || o.starts_with("-std"))
    {
        options.push("--std=c++17".into());
    }
    options.extend(extra.iter().cloned());
    options
}

/// What one compilation produced: PTX text (NUL-terminated, as NVRTC returns it) or a cubin.
#[derive(Clone)]
pub(crate) struct Compiled {
    pub image: Vec<u8>,
    pub options: Vec<String>,
    /// The name expression's lowered name, where one was asked for.
    pub lowered: Option<String>,
}

/// An NVRTC program, destroyed on drop.
struct Program<'a> {
    raw: nvrtcProgram,
    fns: &'a NvrtcFns,
}

type SizeFn = unsafe extern "C" fn(nvrtcProgram, *mut usize) -> NvrtcCode;
type CopyFn = unsafe extern "C" fn(nvrtcProgram, *mut c_char) -> NvrtcCode;

impl Program<'_> {
    /// A compiled output (PTX or cubin) through its size and copy entry points.
    fn output(&self, size: SizeFn, copy: CopyFn, call: &'static str) -> Result<Vec<u8>, CudaError> {
        let mut len = 0usize;
        // SAFETY: the program compiled (`self` owns it); one size_t out.
        check(call, unsafe { size(self.raw, &mut len) })?;
        let mut buf = vec![0u8; len];
        // SAFETY: `buf` is `len` bytes, the size NVRTC just reported for this output of the same
        // compiled program.
        check(call, unsafe { copy(self.raw, buf.as_mut_ptr().cast()) })?;
        Ok(buf)
    }

    /// What `expr` (added before compiling) lowered to, e.g. `_Z5saxpyPfPKffi`.
    fn lowered_name(&self, expr: &CString) -> Result<String, CudaError> {
        let fns = self.fns;
        let mut name: *const c_char = ptr::null();
        // SAFETY: the program compiled with this expression added; NVRTC writes a pointer to
        // a string it owns until the program is destroyed, copied out below.
        unsafe { nvrtc!(fns, nvrtcGetLoweredName(self.raw, expr.as_ptr(), &mut name)) }?;
        match name.is_null() {
            true => Ok(String::new()),
            // SAFETY: non-null, NUL-terminated, alive while `self` is.
            false => Ok(unsafe { CStr::from_ptr(name) }
                .to_string_lossy()
                .into_owned()),
        }
    }

    /// The program log, trimmed (empty when NVRTC has none).
    fn log(&self) -> String {
        let fns = self.fns;
        let mut len = 0usize;
        // SAFETY: as in `output`.
        if unsafe { nvrtc!(fns, nvrtcGetProgramLogSize(self.raw, &mut len)) }.is_err() {
            return String::new();
        }
        let mut buf = vec![0u8; len];
        // SAFETY: `buf` is `len` bytes, the log size NVRTC just reported for this program.
        if unsafe { nvrtc!(fns, nvrtcGetProgramLog(self.raw, buf.as_mut_ptr().cast())) }.is_err() {
            return String::new();
        }
        text_of(&buf).trim().to_string()
    }
}

impl Drop for Program<'_> {
    fn drop(&mut self) {
        let fns = self.fns;
        // SAFETY: created by nvrtcCreateProgram and destroyed only here. A failure leaks a
        // little host memory and is not worth failing a run for.
        let _ = unsafe { nvrtc!(fns, nvrtcDestroyProgram(&mut self.raw)) };
    }
}

/// Bytes up to the first NUL, as text.
pub(crate) fn text_of(bytes: &[u8]) -> String {
    let end = bytes.iter().position(|&b| b == 0).unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

/// Whether a usable libnvrtc (12 or 13, with every entry point in the table) loads.
pub fn nvrtc_available() -> bool {
    Nvrtc::find(None).is_ok()
}

/// PTX that NVRTC produced, and how.
#[cfg(any(test, feature = "test-support"))]
#[derive(Debug, Clone)]
pub struct NvrtcPtx {
    pub ptx: String,
    /// NVRTC's own version (nvrtcVersion).
    pub version: (i32, i32),
    /// The virtual architecture compiled for, e.g. "compute_90".
    pub arch: String,
    pub options: Vec<String>,
    /// The entry's lowered name, where it was asked for ([`crate::nvrtc_compile_program`]).
    pub lowered: Option<String>,
}

/// A cubin that NVRTC produced, and how.
#[cfg(any(test, feature = "test-support"))]
#[derive(Debug, Clone)]
pub struct NvrtcCubin {
    pub cubin: Vec<u8>,
    pub version: (i32, i32),
    /// The real architecture compiled for, e.g. "sm_75".
    pub arch: String,
    pub options: Vec<String>,
}

/// Compiles `source` to PTX for the newest virtual architecture the newest libnvrtc found
/// supports at or below compute capability `cc` (no GPU and no driver needed). For the
/// crate's tests of the NVRTC path (`test-support`).
#[cfg(any(test, feature = "test-support"))]
pub fn nvrtc_compile(source: &str, cc: (i32, i32)) -> Result<NvrtcPtx, CudaError> {
    let unit = Unit {
        text: source,
        name: "grayscale.cu",
        options: &[],
        name_expression: None,
    };
    compile_ptx(&unit, cc)
}

/// [`nvrtc_compile`] for any unit.
#[cfg(any(test, feature = "test-support"))]
pub(crate) fn compile_ptx(unit: &Unit, cc: (i32, i32)) -> Result<NvrtcPtx, CudaError> {
    let nvrtc = Nvrtc::find(None)?;
    let archs = nvrtc.supported_archs()?;
    let arch = Plan::Ptx {
        arch: pick_arch(&archs, cc).ok_or_else(|| {
            CudaError::NvrtcUnusable(format!("NVRTC supports {archs:?}, none at or below {cc:?}"))
        })?,
    }
    .arch_option();
    let out = nvrtc.compile_unit(unit, &arch)?;
    Ok(NvrtcPtx {
        ptx: text_of(&out.image),
        version: nvrtc.version,
        arch,
        options: out.options,
        lowered: out.lowered,
    })
}

/// Compiles `source` to a cubin for compute capability `cc` exactly (no GPU needed). For the
/// crate's tests (`test-support`).
#[cfg(any(test, feature = "test-support"))]
pub fn nvrtc_compile_cubin(source: &str, cc: (i32, i32)) -> Result<NvrtcCubin, CudaError> {
    let nvrtc = Nvrtc::find(None)?;
    let arch = Plan::Cubin {
        arch: cc.0 * 10 + cc.1,
    }
    .arch_option();
    let out = nvrtc.compile(source, &arch)?;
    Ok(NvrtcCubin {
        cubin: out.image,
        version: nvrtc.version,
        arch,
        options: out.options,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn options_put_the_architecture_first_and_default_to_cpp17() {
        assert_eq!(
            compile_options("compute_90", &[]),
            ["--gpu-architecture=compute_90", "--std=c++17"]
        );
        let user = ["-DN=4".to_string(), "--use_fast_math".to_string()];
        assert_eq!(
            compile_options("sm_90", &user),
            [
                "--gpu-architecture=sm_90",
                "--std=c++17",
                "-DN=4",
                "--use_fast_math"
            ]
        );
        // The user's own standard replaces the default rather than following it.
        for std in ["--std=c++20", "-std=c++14"] {
            let o = compile_options("compute_90", &[std.to_string()]);
            assert_eq!(o, ["--gpu-architecture=compute_90", std]);
        }
    }

    #[test]
    fn text_stops_at_the_nul() {
        assert_eq!(text_of(b"ab\0cd"), "ab");
        assert_eq!(text_of(b"ab"), "ab");
    }
}
