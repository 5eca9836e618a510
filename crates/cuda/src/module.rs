//! The grayscale kernels: source, embedded PTX, NVRTC compilation, module loading, and the
//! compiled functions' facts (`cuFuncGetAttribute`) and occupancy.

use std::ffi::{c_char, CString};
use std::sync::{Arc, OnceLock};

use blocksweep_core::{KernelFacts, Named, OccupancySuggestion, Residency};
use cudarc::driver::sys::CUfunction_attribute as F;
use cudarc::driver::{result, CudaContext, CudaFunction, CudaModule};
use cudarc::nvrtc::result::NvrtcError;
use cudarc::nvrtc::sys::{self as nvrtc_sys, nvrtcProgram, nvrtcResult};
use cudarc::nvrtc::{result as nvrtc, Ptx};

use crate::error::{map_driver, map_module_load, map_nvrtc, CudaError};

/// kernels/grayscale.cu, the one CUDA source (NVRTC compiles it at run time).
pub const KERNEL_SOURCE: &str = include_str!("../../../kernels/grayscale.cu");
/// kernels/grayscale.ptx: nvcc 13.0's PTX of the same source for compute_75 (see
/// kernels/README.md), used when NVRTC is absent or asked not to be used.
pub const KERNEL_PTX: &str = include_str!("../../../kernels/grayscale.ptx");
/// Entry points, unmangled (`extern "C"` in the source).
pub const GRID_STRIDE_ENTRY: &str = "grayscale";
pub const ONE_PER_THREAD_ENTRY: &str = "grayscale_one_per_thread";

const EMBEDDED_DESC: &str = "embedded PTX (kernels/grayscale.ptx, JIT by the driver)";

/// How the kernel reaches the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CudaCompiler {
    /// NVRTC when libnvrtc loads and compiles; otherwise the embedded PTX (the reason NVRTC
    /// was not used is kept in the kernel facts).
    #[default]
    Auto,
    /// NVRTC only; an error when libnvrtc is missing or fails.
    Nvrtc,
    /// The embedded PTX only.
    Ptx,
}

static NVRTC_PRESENT: OnceLock<bool> = OnceLock::new();

/// Whether libnvrtc (libnvrtc.so.13, .so.12, .so) loads; checked once, without panicking.
pub fn nvrtc_available() -> bool {
    // SAFETY: is_culib_present only tries to dlopen the candidate names.
    *NVRTC_PRESENT.get_or_init(|| unsafe { nvrtc_sys::is_culib_present() })
}

/// PTX that NVRTC produced, and how.
#[derive(Debug, Clone)]
pub struct NvrtcPtx {
    pub ptx: String,
    /// NVRTC's own version (nvrtcVersion).
    pub version: (i32, i32),
    /// The virtual architecture compiled for, e.g. "compute_90".
    pub arch: String,
    pub options: Vec<String>,
}

/// An NVRTC program that is destroyed when dropped.
struct Program(nvrtcProgram);

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: created by nvrtcCreateProgram and destroyed only here. A failure to free
        // a program leaks host memory and is not worth failing a run for.
        let _ = unsafe { nvrtc::destroy_program(self.0) };
    }
}

fn nvrtc_call(call: &'static str, r: nvrtcResult) -> Result<(), CudaError> {
    r.result().map_err(|e| map_nvrtc(call, e, String::new()))
}

fn c_chars_to_string(v: &[c_char]) -> String {
    let bytes: Vec<u8> = v.iter().map(|&c| c as u8).take_while(|&c| c != 0).collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// The newest virtual architecture this NVRTC supports at or below compute capability
/// `cc` (so a GPU newer than the NVRTC still gets PTX its driver can JIT).
fn pick_arch(supported: &[i32], cc: (i32, i32)) -> Option<i32> {
    let want = cc.0 * 10 + cc.1;
    supported.iter().copied().filter(|&a| a <= want).max()
}

/// Compiles `source` with NVRTC for compute capability `cc` (no GPU needed).
pub fn nvrtc_compile(source: &str, cc: (i32, i32)) -> Result<NvrtcPtx, CudaError> {
    if !nvrtc_available() {
        return Err(CudaError::LibraryMissing {
            library: "libnvrtc.so.13",
            hint: "install CUDA's NVRTC, or use the embedded PTX",
        });
    }
    let (mut major, mut minor) = (0, 0);
    // SAFETY: plain out-parameters; the library is known to load.
    nvrtc_call("nvrtcVersion", unsafe {
        nvrtc_sys::nvrtcVersion(&mut major, &mut minor)
    })?;
    let mut count = 0;
    // SAFETY: as above; the array is sized from the count NVRTC reports.
    nvrtc_call("nvrtcGetNumSupportedArchs", unsafe {
        nvrtc_sys::nvrtcGetNumSupportedArchs(&mut count)
    })?;
    let mut archs = vec![0i32; count.max(0) as usize];
    nvrtc_call("nvrtcGetSupportedArchs", unsafe {
        nvrtc_sys::nvrtcGetSupportedArchs(archs.as_mut_ptr())
    })?;
    let arch = pick_arch(&archs, cc).ok_or_else(|| CudaError::Nvrtc {
        call: "nvrtcGetSupportedArchs",
        code: nvrtcResult::NVRTC_ERROR_INVALID_OPTION,
        log: format!(
            "NVRTC {major}.{minor} supports {archs:?}, none at or below compute capability {}.{}",
            cc.0, cc.1
        ),
    })?;
    let arch = format!("compute_{arch}");
    let options = vec![
        format!("--gpu-architecture={arch}"),
        "--std=c++17".to_string(),
    ];

    let src = CString::new(source).map_err(|_| CudaError::Nvrtc {
        call: "nvrtcCreateProgram",
        code: nvrtcResult::NVRTC_ERROR_INVALID_INPUT,
        log: "the kernel source contains a NUL byte".into(),
    })?;
    let name = c"grayscale.cu";
    let prog = Program(
        nvrtc::create_program(&src, Some(name))
            .map_err(|e| map_nvrtc("nvrtcCreateProgram", e, String::new()))?,
    );
    // SAFETY: prog is live; the options contain no NUL bytes.
    if let Err(e) = unsafe { nvrtc::compile_program(prog.0, &options) } {
        return Err(compile_failure(&prog, e));
    }
    // SAFETY: prog compiled successfully.
    let ptx = unsafe { nvrtc::get_ptx(prog.0) }
        .map_err(|e| map_nvrtc("nvrtcGetPTX", e, String::new()))?;
    Ok(NvrtcPtx {
        ptx: c_chars_to_string(&ptx),
        version: (major, minor),
        arch,
        options,
    })
}

fn compile_failure(prog: &Program, e: NvrtcError) -> CudaError {
    // SAFETY: prog is live; the log exists after a compile attempt.
    let log = unsafe { nvrtc::get_program_log(prog.0) }
        .map(|l| c_chars_to_string(&l))
        .unwrap_or_else(|l| format!("(no log: {l:?})"));
    map_nvrtc("nvrtcCompileProgram", e, log.trim().to_string())
}

/// The two kernels loaded into a context, with their facts.
pub(crate) struct Kernels {
    pub grid_stride: CudaFunction,
    pub one_per_thread: CudaFunction,
    pub grid_stride_facts: KernelFacts,
    pub one_per_thread_facts: KernelFacts,
    // The functions hold the module alive; kept for clarity of ownership.
    _module: Arc<CudaModule>,
}

/// Builds the kernels for a device of compute capability `cc` as `compiler` says.
pub(crate) fn build(
    ctx: &Arc<CudaContext>,
    cc: (i32, i32),
    compiler: CudaCompiler,
) -> Result<Kernels, CudaError> {
    let mut notes: Vec<(String, String)> = Vec::new();
    let use_nvrtc = match compiler {
        CudaCompiler::Ptx => false,
        CudaCompiler::Nvrtc => true,
        CudaCompiler::Auto if nvrtc_available() => true,
        CudaCompiler::Auto => {
            notes.push((
                "NVRTC".into(),
                "libnvrtc not found: embedded PTX used".into(),
            ));
            false
        }
    };
    if use_nvrtc {
        match nvrtc_compile(KERNEL_SOURCE, cc).and_then(|out| {
            let desc = format!("NVRTC {}.{} ({})", out.version.0, out.version.1, out.arch);
            let module = load(ctx, out.ptx, &desc)?;
            let mut extra = notes.clone();
            extra.push((
                "nvrtcVersion".into(),
                format!("{}.{}", out.version.0, out.version.1),
            ));
            extra.push(("NVRTC options".into(), out.options.join(" ")));
            kernels(module, &desc, extra)
        }) {
            Ok(k) => return Ok(k),
            Err(e) if compiler == CudaCompiler::Auto => {
                notes.push(("NVRTC".into(), format!("not used ({e}): embedded PTX used")));
            }
            Err(e) => return Err(e),
        }
    }
    let module = load(ctx, KERNEL_PTX.to_string(), EMBEDDED_DESC)?;
    kernels(module, EMBEDDED_DESC, notes)
}

fn load(ctx: &Arc<CudaContext>, ptx: String, desc: &str) -> Result<Arc<CudaModule>, CudaError> {
    // cudarc turns the text into a C string; PTX never holds a NUL, but a stray one would
    // panic there, so refuse it here.
    if ptx.contains('\0') {
        return Err(CudaError::ModuleLoad {
            call: "cuModuleLoadData",
            source_desc: format!("{desc}: PTX contains a NUL byte"),
            code: cudarc::driver::sys::CUresult::CUDA_ERROR_INVALID_PTX,
        });
    }
    ctx.load_module(Ptx::from_src(ptx))
        .map_err(|e| map_module_load("cuModuleLoadData", desc, e))
}

fn kernels(
    module: Arc<CudaModule>,
    compiled_by: &str,
    extra: Vec<(String, String)>,
) -> Result<Kernels, CudaError> {
    let function = |name: &str| {
        module
            .load_function(name)
            .map_err(|e| map_module_load("cuModuleGetFunction", name, e))
    };
    let grid_stride = function(GRID_STRIDE_ENTRY)?;
    let one_per_thread = function(ONE_PER_THREAD_ENTRY)?;
    Ok(Kernels {
        grid_stride_facts: facts(&grid_stride, GRID_STRIDE_ENTRY, compiled_by, &extra)?,
        one_per_thread_facts: facts(&one_per_thread, ONE_PER_THREAD_ENTRY, compiled_by, &extra)?,
        grid_stride,
        one_per_thread,
        _module: module,
    })
}

fn func_attr(f: &CudaFunction, a: F) -> Result<Named<u64>, CudaError> {
    let v = f
        .get_attribute(a)
        .map_err(|e| map_driver("cuFuncGetAttribute", e))?;
    Ok(Named::new(v.max(0) as u64, format!("{a:?}")))
}

/// "90" -> "9.0": PTX_VERSION and BINARY_VERSION are major * 10 + minor.
fn version_text(v: u64) -> String {
    format!("{}.{}", v / 10, v % 10)
}

fn facts(
    f: &CudaFunction,
    entry: &str,
    compiled_by: &str,
    notes: &[(String, String)],
) -> Result<KernelFacts, CudaError> {
    let ptx = func_attr(f, F::CU_FUNC_ATTRIBUTE_PTX_VERSION)?;
    let bin = func_attr(f, F::CU_FUNC_ATTRIBUTE_BINARY_VERSION)?;
    let cmem = func_attr(f, F::CU_FUNC_ATTRIBUTE_CONST_SIZE_BYTES)?;
    let mut extra = vec![
        ("entry".to_string(), entry.to_string()),
        (
            ptx.name,
            format!("{} (sm_{})", version_text(ptx.value), ptx.value),
        ),
        (
            bin.name,
            format!("{} (sm_{})", version_text(bin.value), bin.value),
        ),
        (cmem.name, cmem.value.to_string()),
    ];
    extra.extend(notes.iter().cloned());
    Ok(KernelFacts {
        max_block: Some(func_attr(f, F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?),
        preferred_multiple: None,
        registers: Some(func_attr(f, F::CU_FUNC_ATTRIBUTE_NUM_REGS)?),
        private_bytes: Some(func_attr(f, F::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?),
        shared_bytes: Some(func_attr(f, F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?),
        compiled_by: compiled_by.to_string(),
        extra,
    })
}

/// cuOccupancyMaxActiveBlocksPerMultiprocessor for `threads` per block, no dynamic shared
/// memory. `None` when the count does not fit the API's int.
pub(crate) fn residency(f: &CudaFunction, threads: u64) -> Result<Option<Residency>, CudaError> {
    let Ok(threads) = i32::try_from(threads) else {
        return Ok(None);
    };
    // SAFETY: the function belongs to a loaded module of the current context.
    let n = unsafe {
        result::occupancy::max_active_block_per_multiprocessor(f.cu_function(), threads, 0)
    }
    .map_err(|e| map_driver("cuOccupancyMaxActiveBlocksPerMultiprocessor", e))?;
    Ok(Some(Residency {
        blocks_per_mp: n.max(0) as u32,
        source: "cuOccupancyMaxActiveBlocksPerMultiprocessor".into(),
    }))
}

/// cuOccupancyMaxPotentialBlockSize with no dynamic shared memory and no block limit.
pub(crate) fn suggestion(f: &CudaFunction) -> Result<OccupancySuggestion, CudaError> {
    // SAFETY: as above; a null size callback means "no dynamic shared memory".
    let (min_grid, block) =
        unsafe { result::occupancy::max_potential_block_size(f.cu_function(), None, 0, 0) }
            .map_err(|e| map_driver("cuOccupancyMaxPotentialBlockSize", e))?;
    Ok(OccupancySuggestion {
        block: block.max(0) as u32,
        min_grid: min_grid.max(0) as u32,
        source: "cuOccupancyMaxPotentialBlockSize".into(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn picks_newest_supported_arch_not_above_device() {
        let nvrtc13 = [75, 80, 86, 87, 88, 89, 90, 100, 103, 110, 120, 121];
        assert_eq!(pick_arch(&nvrtc13, (9, 0)), Some(90));
        assert_eq!(pick_arch(&nvrtc13, (8, 9)), Some(89));
        // A GPU newer than NVRTC gets the newest PTX NVRTC can write.
        assert_eq!(pick_arch(&nvrtc13, (13, 0)), Some(121));
        // An older GPU than NVRTC supports gets nothing.
        assert_eq!(pick_arch(&nvrtc13, (6, 1)), None);
    }

    #[test]
    fn versions_read_as_major_minor() {
        assert_eq!(version_text(90), "9.0");
        assert_eq!(version_text(75), "7.5");
        assert_eq!(version_text(121), "12.1");
    }

    #[test]
    fn kernel_uses_the_core_weights() {
        for w in ["0.299f", "0.587f", "0.114f"] {
            assert!(KERNEL_SOURCE.contains(w), "grayscale.cu lacks {w}");
        }
        assert_eq!(blocksweep_core::WEIGHTS, [0.299, 0.587, 0.114]);
    }
}
