//! Building the grayscale kernels for a device, and their facts: NVRTC (PTX or cubin) or the
//! embedded PTX, module loading with the JIT's error log, function attributes, occupancy.
//!
//! Which path runs, and why, ends up in [`KernelFacts::compiled_by`] and `extra`; when every
//! path fails, the error keeps every path's reason ([`CudaError::NoKernel`]).

use std::ffi::{c_void, CString};
use std::ptr;

use blocksweep_core::{KernelFacts, KernelVariant, Named, OccupancySuggestion, Residency};
use cudarc::driver::sys::{CUfunction, CUfunction_attribute as F, CUjit_option, CUmodule};

use crate::device::DriverInfo;
use crate::entry_points::cu;
use crate::error::{map_driver, map_module_load, CudaError, OrMap};
use crate::nvrtc::{text_of, Compiled, Nvrtc, Unit};
use crate::plan::{plan, ptx_jit_enabled, Plan};

/// kernels/grayscale.cu, the one CUDA source (NVRTC compiles it at run time).
pub const KERNEL_SOURCE: &str = include_str!("../../../kernels/grayscale.cu");
/// kernels/grayscale.ptx: NVRTC 12.0's PTX (ISA 8.0) of the same source for compute_50, which
/// every driver since CUDA 12.0 (R525) JIT-compiles for every GPU it supports (see
/// kernels/README.md and tools/ci/regen-ptx.sh).
pub const KERNEL_PTX: &str = include_str!("../../../kernels/grayscale.ptx");
/// Entry points, unmangled (`extern "C"` in the source).
pub const GRID_STRIDE_ENTRY: &str = "grayscale";
pub const ONE_PER_THREAD_ENTRY: &str = "grayscale_one_per_thread";
/// The lab's kernels (kernels/README.md): 2-D, shared memory sized at launch, register-heavy.
pub const GRID_2D_ENTRY: &str = "grayscale_2d";
pub const SHARED_ENTRY: &str = "grayscale_shared";
pub const REGISTERS_ENTRY: &str = "grayscale_registers";

const EMBEDDED_DESC: &str = "embedded PTX (NVRTC 12.0, compute_50)";

/// How the kernel reaches the device.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CudaCompiler {
    /// NVRTC where its output will load on this driver; otherwise the embedded PTX (the reason
    /// NVRTC was not used is kept in the kernel facts).
    #[default]
    Auto,
    /// NVRTC only; an error when libnvrtc is missing, fails, or cannot serve this driver.
    Nvrtc,
    /// The embedded PTX only.
    Ptx,
}

/// A loaded module, unloaded on drop.
pub(crate) struct Module {
    raw: CUmodule,
}

impl Module {
    /// Loads `image` (NUL-terminated PTX, or a cubin) into the current context; a JIT failure
    /// carries the JIT's error log.
    pub(crate) fn load(image: &[u8], desc: &str) -> Result<Module, CudaError> {
        let mut log = vec![0u8; 16 * 1024];
        let mut options = [
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER,
            CUjit_option::CU_JIT_ERROR_LOG_BUFFER_SIZE_BYTES,
        ];
        let mut values: [*mut c_void; 2] = [
            log.as_mut_ptr().cast(),
            // The size travels in the pointer-sized slot itself (cuda.h, CUjit_option).
            ptr::without_provenance_mut(log.len()),
        ];
        let mut raw: CUmodule = ptr::null_mut();
        // SAFETY: `image` is a NUL-terminated PTX text or a whole cubin; two options with
        // their values; the log buffer outlives the call.
        unsafe {
            cu!(cuModuleLoadDataEx(
                &mut raw,
                image.as_ptr().cast(),
                options.len() as u32,
                options.as_mut_ptr(),
                values.as_mut_ptr()
            ))
        }
        .map_err(|f| map_module_load(f.call, desc, f.code, &text_of(&log)))?;
        Ok(Module { raw })
    }

    /// The entry point `name`; a missing one is `CUDA_ERROR_NOT_FOUND` (a build error).
    pub(crate) fn function(&self, name: &str) -> Result<CUfunction, CudaError> {
        let c_name = CString::new(name).map_err(|_| CudaError::Usage(format!("entry {name:?}")))?;
        let mut f: CUfunction = ptr::null_mut();
        // SAFETY: the module is live; one pointer out.
        unsafe { cu!(cuModuleGetFunction(&mut f, self.raw, c_name.as_ptr())) }
            .map_err(|e| map_module_load(e.call, name, e.code, ""))?;
        Ok(f)
    }
}

impl Drop for Module {
    fn drop(&mut self) {
        // SAFETY: loaded by cuModuleLoadDataEx and unloaded only here, with the context bound
        // (the backend binds it before its fields drop).
        let _ = unsafe { cu!(cuModuleUnload(self.raw)) };
    }
}

/// Every kernel of the module loaded into a context, with its facts, in
/// [`KernelVariant::ALL`]'s order.
pub(crate) struct Kernels {
    functions: Vec<(KernelVariant, CUfunction, KernelFacts)>,
    // Owns the functions above; dropped with them.
    _module: Module,
}

impl Kernels {
    /// The function of `variant` and its facts.
    pub fn get(&self, variant: KernelVariant) -> (CUfunction, &KernelFacts) {
        let i = KernelVariant::ALL
            .iter()
            .position(|v| *v == variant)
            .unwrap_or(0);
        let (_, f, facts) = &self.functions[i];
        (*f, facts)
    }
}

// SAFETY: module and function handles belong to the context, usable from whichever thread
// has it bound; the backend uses them from one thread at a time.
unsafe impl Send for Kernels {}
// SAFETY: as for `Kernels`.
unsafe impl Send for Module {}

/// How a build went: what `compiled_by` says, and the notes for `extra`.
pub(crate) struct Provenance {
    pub compiled_by: String,
    pub notes: Vec<(String, String)>,
}

/// Builds the kernels for a device of compute capability `cc` as `compiler` says.
pub(crate) fn build(
    cc: (i32, i32),
    driver: &DriverInfo,
    compiler: CudaCompiler,
) -> Result<Kernels, CudaError> {
    let why_not_nvrtc = match compiler {
        CudaCompiler::Nvrtc => return build_with_nvrtc(cc, driver),
        CudaCompiler::Ptx => "--cuda-compiler ptx".to_string(),
        CudaCompiler::Auto => match build_with_nvrtc(cc, driver) {
            Ok(k) => return Ok(k),
            Err(e) => e.to_string(),
        },
    };
    build_embedded(driver, &why_not_nvrtc).map_err(|e| match compiler {
        CudaCompiler::Auto => CudaError::NoKernel(vec![
            format!("NVRTC: {why_not_nvrtc}"),
            format!("embedded PTX: {e}"),
        ]),
        _ => e,
    })
}

/// The embedded PTX's path; `why_not_nvrtc` goes into the facts.
fn build_embedded(driver: &DriverInfo, why_not_nvrtc: &str) -> Result<Kernels, CudaError> {
    let d = driver.cuda;
    let provenance = Provenance {
        compiled_by: format!(
            "{EMBEDDED_DESC}, JIT by the CUDA {}.{} driver; NVRTC not used: {why_not_nvrtc}",
            d.0, d.1
        ),
        notes: vec![
            ("kernel path".into(), "embedded PTX".into()),
            ("cuDriverGetVersion".into(), format!("{}.{}", d.0, d.1)),
            ("NVRTC not used".into(), why_not_nvrtc.into()),
        ],
    };
    let mut image = KERNEL_PTX.as_bytes().to_vec();
    image.push(0);
    kernels(Module::load(&image, EMBEDDED_DESC)?, provenance)
}

/// NVRTC's path: compile kernels/grayscale.cu as [`nvrtc_image`] does, load, look up.
fn build_with_nvrtc(cc: (i32, i32), driver: &DriverInfo) -> Result<Kernels, CudaError> {
    let unit = Unit {
        text: KERNEL_SOURCE,
        name: "grayscale.cu",
        options: &[],
        name_expression: None,
    };
    let (compiled, provenance) = nvrtc_image(cc, driver, &unit)?;
    let module = Module::load(&compiled.image, &provenance.compiled_by)?;
    kernels(module, provenance)
}

/// Finds a libnvrtc, plans PTX or cubin against the driver and the device, and compiles
/// `unit`: the one way any CUDA source here (the built-in kernels, a user's) becomes an image.
pub(crate) fn nvrtc_image(
    cc: (i32, i32),
    driver: &DriverInfo,
    unit: &Unit,
) -> Result<(Compiled, Provenance), CudaError> {
    let nvrtc = Nvrtc::find(Some(driver.cuda))?;
    let archs = nvrtc.supported_archs()?;
    let ptx_jit = ptx_jit_enabled();
    let chosen =
        plan(nvrtc.version, driver.cuda, cc, &archs, ptx_jit).map_err(CudaError::NvrtcUnusable)?;
    let arch = chosen.arch_option();
    let compiled = nvrtc.compile_unit(unit, &arch)?;
    let (n, d) = (nvrtc.version, driver.cuda);
    let compiled_by = match chosen {
        Plan::Ptx { .. } => format!(
            "NVRTC {}.{} ({arch} PTX, JIT by the CUDA {}.{} driver)",
            n.0, n.1, d.0, d.1
        ),
        Plan::Cubin { .. } if !ptx_jit => format!(
            "NVRTC {}.{} ({arch} cubin: PTX JIT disabled by CUDA_DISABLE_PTX_JIT=1)",
            n.0, n.1
        ),
        Plan::Cubin { .. } => format!(
            "NVRTC {}.{} ({arch} cubin: NVRTC is newer than the CUDA {}.{} driver, whose JIT \
             would refuse its PTX)",
            n.0, n.1, d.0, d.1
        ),
    };
    let path = match chosen {
        Plan::Ptx { .. } => "NVRTC PTX",
        Plan::Cubin { .. } => "NVRTC cubin",
    };
    let notes = vec![
        ("kernel path".into(), path.into()),
        ("cuDriverGetVersion".into(), format!("{}.{}", d.0, d.1)),
        ("nvrtcVersion".into(), format!("{}.{}", n.0, n.1)),
        ("NVRTC library".into(), nvrtc.library.into()),
        ("NVRTC options".into(), compiled.options.join(" ")),
    ];
    Ok((compiled, Provenance { compiled_by, notes }))
}

fn kernels(module: Module, provenance: Provenance) -> Result<Kernels, CudaError> {
    let mut functions = Vec::new();
    for variant in KernelVariant::ALL {
        let entry = variant.entry();
        let f = module.function(entry)?;
        functions.push((variant, f, facts(f, entry, &provenance)?));
    }
    Ok(Kernels {
        functions,
        _module: module,
    })
}

fn func_attr(f: CUfunction, a: F) -> Result<Named<u64>, CudaError> {
    let mut v = 0;
    // SAFETY: the function belongs to a loaded module of the current context; one int out.
    unsafe { cu!(cuFuncGetAttribute(&mut v, a, f)) }.or_map(map_driver)?;
    Ok(Named::new(v.max(0) as u64, format!("{a:?}")))
}

/// "90" -> "9.0": PTX_VERSION and BINARY_VERSION are major * 10 + minor.
fn version_text(v: u64) -> String {
    format!("{}.{}", v / 10, v % 10)
}

/// A function's facts under the CU_FUNC_ATTRIBUTE names, with how it was built.
pub(crate) fn facts(
    f: CUfunction,
    entry: &str,
    provenance: &Provenance,
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
    extra.extend(provenance.notes.iter().cloned());
    Ok(KernelFacts {
        max_block: Some(func_attr(f, F::CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK)?),
        preferred_multiple: None,
        registers: Some(func_attr(f, F::CU_FUNC_ATTRIBUTE_NUM_REGS)?),
        private_bytes: Some(func_attr(f, F::CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES)?),
        shared_bytes: Some(func_attr(f, F::CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES)?),
        compiled_by: provenance.compiled_by.clone(),
        extra,
    })
}

/// cuOccupancyMaxActiveBlocksPerMultiprocessor for `threads` per block, no dynamic shared
/// memory. `None` when the count does not fit the API's int.
pub(crate) fn residency(f: CUfunction, threads: u64) -> Result<Option<Residency>, CudaError> {
    let Ok(threads) = i32::try_from(threads) else {
        return Ok(None);
    };
    let mut n = 0;
    // SAFETY: the function belongs to a loaded module of the current context; one int out.
    unsafe {
        cu!(cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &mut n, f, threads, 0
        ))
    }
    .or_map(map_driver)?;
    Ok(Some(Residency {
        blocks_per_mp: n.max(0) as u32,
        source: "cuOccupancyMaxActiveBlocksPerMultiprocessor".into(),
    }))
}

/// cuOccupancyMaxPotentialBlockSize with no dynamic shared memory and no block limit.
pub(crate) fn suggestion(f: CUfunction) -> Result<OccupancySuggestion, CudaError> {
    let (mut min_grid, mut block) = (0, 0);
    // SAFETY: as above; a null size callback means "no dynamic shared memory".
    unsafe {
        cu!(cuOccupancyMaxPotentialBlockSize(
            &mut min_grid,
            &mut block,
            f,
            None,
            0,
            0
        ))
    }
    .or_map(map_driver)?;
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

    #[test]
    fn the_embedded_ptx_is_for_every_driver_since_cuda_12_0() {
        assert!(KERNEL_PTX.contains("\n.version 8.0\n"), "PTX ISA above 8.0");
        assert!(KERNEL_PTX.contains("\n.target sm_50\n"));
        assert!(!KERNEL_PTX.contains('\0'));
    }
}
