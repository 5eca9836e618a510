//! Turning a kernel's source into a loaded module, and its facts: NVRTC (PTX or cubin) for
//! CUDA C++, the driver's JIT for PTX, module loading with the JIT's error log, function
//! attributes, occupancy.
//!
//! Which path ran, and why, ends up in [`KernelFacts::compiled_by`] and `extra`.

use std::ffi::{c_void, CString};
use std::ptr;

use blocksweep_core::{KernelFacts, Named, OccupancySuggestion, ProgramSource, Residency};
use cudarc::driver::sys::{CUfunction, CUfunction_attribute as F, CUjit_option, CUmodule};

use crate::device::DriverInfo;
use crate::entry_points::cu;
use crate::error::{map_driver, map_module_load, CudaError, OrMap};
use crate::nvrtc::{text_of, Compiled, Nvrtc, Unit};
use crate::plan::{plan, ptx_jit_enabled, Plan};

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

// SAFETY: module and function handles belong to the context, usable from whichever thread
// has it bound; the backend uses them from one thread at a time.
unsafe impl Send for Module {}

/// How a build went: what `compiled_by` says, and the notes for `extra`.
pub(crate) struct Provenance {
    pub compiled_by: String,
    pub notes: Vec<(String, String)>,
}

/// A PTX source as the image `cuModuleLoadDataEx` JIT-compiles (NUL-terminated), and how it
/// was built: by the driver, from the embedded PTX or a user's.
pub(crate) fn ptx_image(
    source: &ProgramSource,
    driver: &DriverInfo,
) -> Result<(Vec<u8>, Provenance), CudaError> {
    let origin = &source.origin;
    let mut image = source.code.clone();
    if image.last() == Some(&0) {
        image.pop();
    }
    if image.contains(&0) {
        return Err(CudaError::Program(format!(
            "{origin}: a NUL byte inside PTX text"
        )));
    }
    image.push(0);
    let desc = match crate::builtin::is_embedded_ptx(source) {
        true => crate::builtin::EMBEDDED_DESC.to_string(),
        false => "PTX".to_string(),
    };
    let d = driver.cuda;
    let provenance = Provenance {
        compiled_by: format!(
            "PTX JIT by the CUDA {}.{} driver: {desc}, {origin}",
            d.0, d.1
        ),
        notes: vec![
            ("kernel path".into(), desc),
            ("cuDriverGetVersion".into(), format!("{}.{}", d.0, d.1)),
        ],
    };
    Ok((image, provenance))
}

/// NVRTC's output for `unit`, compiled once per process: the built-in kernels are five entries
/// of one source, loaded again for each kernel the lab and validate switch to (each compile
/// costs tens of milliseconds). The last few units are kept, keyed by all NVRTC is given.
fn compile_once(nvrtc: &Nvrtc, unit: &Unit, arch: &str) -> Result<Compiled, CudaError> {
    type Key = (String, String, Vec<String>, Option<String>, String);
    static DONE: std::sync::Mutex<Vec<(Key, Compiled)>> = std::sync::Mutex::new(Vec::new());
    let key: Key = (
        arch.to_string(),
        unit.name.to_string(),
        unit.options.to_vec(),
        unit.name_expression.map(str::to_string),
        unit.text.to_string(),
    );
    let found = DONE.lock().ok().and_then(|done| {
        let hit = done.iter().find(|(k, _)| *k == key);
        hit.map(|(_, c)| c.clone())
    });
    if let Some(compiled) = found {
        return Ok(compiled);
    }
    let compiled = nvrtc.compile_unit(unit, arch)?;
    if let Ok(mut done) = DONE.lock() {
        if done.len() >= 8 {
            done.remove(0);
        }
        done.push((key, compiled.clone()));
    }
    Ok(compiled)
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
    let compiled = compile_once(&nvrtc, unit, &arch)?;
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
    use crate::CudaCompiler;

    #[test]
    fn versions_read_as_major_minor() {
        assert_eq!(version_text(90), "9.0");
        assert_eq!(version_text(75), "7.5");
        assert_eq!(version_text(121), "12.1");
    }

    #[test]
    fn ptx_reaches_the_jit_nul_terminated_and_says_whose_it_is() {
        use blocksweep_core::KernelVariant;
        let driver = DriverInfo {
            cuda: (12, 8),
            words: String::new(),
        };
        let embedded = crate::builtin::source(KernelVariant::GridStride, CudaCompiler::Ptx);
        let (image, p) = ptx_image(&embedded, &driver).unwrap();
        assert_eq!(image.last(), Some(&0));
        assert_eq!(image.iter().filter(|&&b| b == 0).count(), 1);
        assert_eq!(
            p.compiled_by,
            "PTX JIT by the CUDA 12.8 driver: embedded PTX (NVRTC 12.0, compute_50), \
             kernels/grayscale.ptx"
        );
        let mut user = embedded.clone();
        user.code = b".version 8.0\n.target sm_50\n\0".to_vec();
        user.origin = "mine.ptx".into();
        let (image, p) = ptx_image(&user, &driver).unwrap();
        assert_eq!(image, user.code, "one NUL, not two");
        assert_eq!(
            p.compiled_by,
            "PTX JIT by the CUDA 12.8 driver: PTX, mine.ptx"
        );
        user.code.insert(3, 0);
        let e = ptx_image(&user, &driver).err().unwrap();
        assert_eq!(e.to_string(), "mine.ptx: a NUL byte inside PTX text");
    }
}
