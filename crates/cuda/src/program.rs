//! A program on CUDA (a user's kernel, or a built-in one, [`crate::builtin`]): CUDA C++ built
//! with NVRTC (the PTX-or-cubin plan, [`kernel::nvrtc_image`]) or PTX JIT-compiled by the
//! driver, one device buffer per buffer argument ([`Buffers`]), and the arguments packed once
//! for every `cuLaunchKernel`.
//!
//! CUDA cannot tell a kernel's parameter list from its image before CUDA 12.4; where the
//! driver has `cuFuncGetParamInfo` (optional, see entry_points.rs) the declared arguments are
//! checked against it, count and sizes.

use std::path::Path;
use std::ptr;

use blocksweep_core::{KernelFacts, Launch, ProgramArg, ProgramSource};
use cudarc::driver::sys::CUfunction;

use crate::codes::CuCode;
use crate::context::Stream;
use crate::device::DriverInfo;
use crate::entry_points::{cu, optional_fns};
use crate::error::{map_launch, CudaError};
use crate::kernel::{self, Module, Provenance};
use crate::memory::Buffers;
use crate::nvrtc::Unit;
#[cfg(any(test, feature = "test-support"))]
use crate::nvrtc::{self, NvrtcPtx};
use crate::params::{check_params, declared_params, Params};
use crate::provider::{CUDA_CPP, PTX};

/// A loaded kernel with its buffers and packed arguments.
///
/// Fields drop in order: the argument array (host memory), the buffers, then the module.
pub(crate) struct Program {
    function: CUfunction,
    facts: KernelFacts,
    params: Params,
    buffers: Buffers,
    _module: Module,
}

// SAFETY: the function, module and buffers belong to the context, used from one thread at a
// time with it bound; the argument array points only into heap memory `params` owns.
unsafe impl Send for Program {}

impl Program {
    pub(crate) fn function(&self) -> CUfunction {
        self.function
    }

    pub(crate) fn facts(&self) -> &KernelFacts {
        &self.facts
    }

    /// Issues one `cuLaunchKernel` with the launch's (x, y, z) block, (x, y) grid and dynamic
    /// shared memory, and the packed arguments. Nothing is checked here on purpose: the core
    /// skips blocks over the device limits, and one it does send (`--blocks 2048`, more shared
    /// memory or registers than a block may have) meets the driver's own refusal
    /// (`CUDA_ERROR_INVALID_VALUE`, `CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES`), as LaunchRejected.
    pub(crate) fn launch(&self, stream: &Stream, launch: Launch) -> Result<(), CudaError> {
        let (block, grid) = (launch.block, launch.grid);
        // SAFETY: the function comes from this program's loaded module in the current
        // context; `params` holds one pointer per kernel parameter, each to a value of the
        // declared size that lives as long as the program (cuLaunchKernel copies them before
        // returning); every buffer pointer is a live allocation the program owns.
        unsafe {
            cu!(cuLaunchKernel(
                self.function,
                grid.x,
                grid.y,
                1,
                block.x,
                block.y,
                block.z,
                launch.shared_bytes,
                stream.raw(),
                self.params.launch_arg(),
                ptr::null_mut()
            ))
        }
        .map_err(|f| map_launch(&launch.to_string(), f.code))
    }

    /// The program's buffers, for the copies in and out of them.
    pub(crate) fn buffers(&self) -> &Buffers {
        &self.buffers
    }

    /// Sets scalar argument `arg` to `bytes` for the launches after this call.
    pub(crate) fn set_scalar(&mut self, arg: usize, bytes: &[u8]) -> Result<(), CudaError> {
        self.params.set_scalar(arg, bytes)
    }
}

/// Compiles a user's `source` to PTX as `load_program` does (its options, C++17 by default,
/// the same refusals), for compute capability `cc` with the newest NVRTC and no driver or GPU,
/// asking NVRTC for the entry's lowered name too (a mangled C++ name, or the entry itself
/// where it is `extern "C"`). For the crate's tests of the NVRTC path (`test-support`).
#[cfg(any(test, feature = "test-support"))]
pub fn nvrtc_compile_program(
    source: &ProgramSource,
    cc: (i32, i32),
) -> Result<NvrtcPtx, CudaError> {
    check_source(source)?;
    if source.language != CUDA_CPP {
        return Err(CudaError::Program(format!(
            "{}: {} source; NVRTC compiles CUDA C++",
            source.origin, source.language
        )));
    }
    with_unit(source, Some(&source.entry), |unit| {
        nvrtc::compile_ptx(&unit, cc)
    })
}

/// Hands `build` the NVRTC unit of `source`, which asks for the lowered name of
/// `name_expression` where one is given.
fn with_unit<T>(
    source: &ProgramSource,
    name_expression: Option<&str>,
    build: impl FnOnce(Unit) -> Result<T, CudaError>,
) -> Result<T, CudaError> {
    let text = source.text();
    let name = unit_name(&source.origin);
    build(Unit {
        text: &text,
        name: &name,
        options: &source.options,
        name_expression,
    })
}

/// Builds `source` for a device of compute capability `cc` under `driver`, allocates its
/// buffers (contents undefined) and packs `args`, in the current context.
pub(crate) fn load(
    source: &ProgramSource,
    args: &[ProgramArg],
    cc: (i32, i32),
    driver: &DriverInfo,
) -> Result<Program, CudaError> {
    check_source(source)?;
    let declared = declared_params(args)?;
    let (module, function, mut provenance) = match source.language == PTX {
        true => ptx_function(source, driver)?,
        false => with_unit(source, None, |unit| {
            entry_function(source, unit, cc, driver)
        })?,
    };
    // Under a CUDA tool, the probe past the last parameter is an API error the tool reports:
    // only the declared ones are asked.
    let tool = crate::under_cuda_tool();
    let limit = tool.then_some(declared.len());
    let checked = match param_sizes(function, limit) {
        Some(actual) if tool => {
            check_params(&source.entry, &declared, &actual)?;
            format!(
                "{} parameters, sizes as declared (no count check under a CUDA tool)",
                actual.len()
            )
        }
        Some(actual) => {
            check_params(&source.entry, &declared, &actual)?;
            format!("{} parameters, as declared", actual.len())
        }
        None => "not checked (cuFuncGetParamInfo, CUDA 12.4+, absent or silent)".into(),
    };
    provenance.notes.push(("parameters".into(), checked));
    let buffers = Buffers::alloc(args)?;
    let params = Params::pack(args, &buffers.kernel_pointers())?;
    let facts = kernel::facts(function, &source.entry, &provenance)?;
    Ok(Program {
        function,
        facts,
        params,
        buffers,
        _module: module,
    })
}

/// Loads PTX `source` (the driver JIT-compiles it, its log kept in the error) and looks up its
/// entry, by its own name: PTX names are not mangled.
fn ptx_function(
    source: &ProgramSource,
    driver: &DriverInfo,
) -> Result<(Module, CUfunction, Provenance), CudaError> {
    let (image, provenance) = kernel::ptx_image(source, driver)?;
    let module = Module::load(&image, &provenance.compiled_by)?;
    let function = module.function(&source.entry).map_err(|e| match e.code() {
        Some(CuCode::CUDA_ERROR_NOT_FOUND) => CudaError::Program(format!(
            "{}: entry '{}' not found: the PTX has no .entry of that name",
            source.origin, source.entry
        )),
        _ => e,
    })?;
    Ok((module, function, provenance))
}

/// Compiles `unit` and loads it, and looks up `source`'s entry: by its own name, else by the
/// name NVRTC lowered it to ([`by_lowered_name`]).
fn entry_function(
    source: &ProgramSource,
    unit: Unit,
    cc: (i32, i32),
    driver: &DriverInfo,
) -> Result<(Module, CUfunction, Provenance), CudaError> {
    let (compiled, provenance) = kernel::nvrtc_image(cc, driver, &unit)?;
    let module = Module::load(&compiled.image, &provenance.compiled_by)?;
    match module.function(&source.entry) {
        Ok(f) => Ok((module, f, provenance)),
        Err(e) if e.code() == Some(CuCode::CUDA_ERROR_NOT_FOUND) => {
            drop(module);
            by_lowered_name(source, unit, cc, driver)
        }
        Err(e) => Err(e),
    }
}

/// The second try for an entry `cuModuleGetFunction` does not know by its own name (a C++
/// name is mangled): compile again with it as NVRTC's name expression, and look up what it
/// lowered to. Any failure here says how to declare the entry.
fn by_lowered_name(
    source: &ProgramSource,
    unit: Unit,
    cc: (i32, i32),
    driver: &DriverInfo,
) -> Result<(Module, CUfunction, Provenance), CudaError> {
    let missing = |why: &str| {
        CudaError::Program(format!(
            "{}: entry '{}' not found: declare it extern \"C\" __global__{why}",
            source.origin, source.entry
        ))
    };
    let unit = Unit {
        name_expression: Some(&source.entry),
        ..unit
    };
    let (compiled, mut provenance) =
        kernel::nvrtc_image(cc, driver, &unit).map_err(|e| match e {
            CudaError::Nvrtc { log, .. } => {
                missing(&format!(" (NVRTC: {})", log.replace('\n', " | ")))
            }
            other => other,
        })?;
    let lowered = compiled
        .lowered
        .filter(|l| !l.is_empty())
        .ok_or_else(|| missing(""))?;
    let module = Module::load(&compiled.image, &provenance.compiled_by)?;
    let function = module.function(&lowered).map_err(|_| missing(""))?;
    provenance
        .notes
        .push(("nvrtcGetLoweredName".into(), lowered));
    Ok((module, function, provenance))
}

/// Refuses what this backend cannot build: another language, no entry, options for PTX
/// (they are NVRTC's), an option that would override the architecture the plan chose (and
/// with it PTX or cubin).
fn check_source(source: &ProgramSource) -> Result<(), CudaError> {
    let origin = &source.origin;
    if source.language != CUDA_CPP && source.language != PTX {
        return Err(CudaError::Program(format!(
            "{origin}: {} source; the CUDA backend builds CUDA C++ (NVRTC) and PTX only",
            source.language
        )));
    }
    if source.entry.trim().is_empty() {
        return Err(CudaError::Program(format!(
            "{origin}: no entry point named"
        )));
    }
    if let Some(o) = source.options.first().filter(|_| source.language == PTX) {
        return Err(CudaError::Program(format!(
            "{origin}: option '{o}': PTX is JIT-compiled by the driver, which takes no options"
        )));
    }
    if let Some(o) = source
        .options
        .iter()
        .find(|o| o.starts_with("-arch") || o.starts_with("--gpu-architecture"))
    {
        return Err(CudaError::Program(format!(
            "{origin}: option '{o}': blocksweep chooses the architecture for the device \
             (PTX or cubin, shown in the kernel facts)"
        )));
    }
    Ok(())
}

/// The name NVRTC's log gives the source: the file name of `origin`, else "program.cu".
fn unit_name(origin: &str) -> String {
    Path::new(origin)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "program.cu".into())
}

/// Parameter sizes from `cuFuncGetParamInfo`, asked index by index until it says
/// `CUDA_ERROR_INVALID_VALUE` (past the last), or only the first `limit` where given; `None`
/// where the driver lacks it, answers anything else, or finds no parameter at all (not told
/// apart from "cannot say").
fn param_sizes(f: CUfunction, limit: Option<usize>) -> Option<Vec<usize>> {
    let get = optional_fns()?.cuFuncGetParamInfo?;
    let mut sizes = Vec::new();
    // CUDA passes at most 32764 bytes of parameters, so fewer parameters than that.
    let last = limit.unwrap_or(32_768);
    for index in 0..last {
        let (mut offset, mut size) = (0usize, 0usize);
        // SAFETY: the function belongs to a loaded module of the current context; two
        // size_t out.
        let code = unsafe { get(f, index, &mut offset, &mut size) };
        if !code.is_success() {
            let past_last = code == CuCode::CUDA_ERROR_INVALID_VALUE && !sizes.is_empty();
            return past_last.then_some(sizes);
        }
        sizes.push(size);
    }
    limit.map(|_| sizes)
}

#[cfg(test)]
#[path = "program_tests.rs"]
mod tests;
