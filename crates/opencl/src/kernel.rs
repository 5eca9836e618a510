//! Building a kernel and setting its arguments: clBuildProgram with its log, clCreateKernel,
//! CL_KERNEL_NUM_ARGS against the arguments given, and clSetKernelArg. What the driver says
//! about a built kernel is `facts`; a program's buffers are `program`'s.

use std::ffi::{c_void, CString};
use std::ptr;

use blocksweep_core::ProgramArg;
use cl3::info_type::InfoType;
use opencl3::error_codes::{
    CL_INVALID_ARG_SIZE, CL_INVALID_ARG_VALUE, CL_INVALID_MEM_OBJECT, CL_INVALID_SAMPLER,
};
use opencl3::kernel::{create_kernel, get_kernel_info, set_kernel_arg, CL_KERNEL_NUM_ARGS};
use opencl3::program::{
    build_program, create_program_with_source, get_program_build_data, CL_PROGRAM_BUILD_LOG,
};
use opencl3::types::cl_uint;

use crate::error::{cl_error_name, map_build, map_create, map_query, OpenClError};
use crate::handles::{Context, DeviceId, Kernel, Program};

pub(crate) use crate::facts::facts;

/// Makes NVIDIA's compiler append ptxas's resource report (registers per thread) to the log.
pub(crate) const NV_VERBOSE_OPTION: &str = "-cl-nv-verbose";

/// Sets argument `index` of `kernel` to `value`'s bytes (a cl_mem, cl_ulong or cl_uint of
/// the kernel's own, as in `fill.rs`).
pub(crate) fn set_arg<T>(kernel: &Kernel, index: cl_uint, value: &T) -> Result<(), OpenClError> {
    // SAFETY: `value` is a live T for the call and the driver copies its bytes; the
    // kernel's argument `index` has size_of::<T>() bytes (the caller's source says so).
    unsafe {
        set_kernel_arg(
            kernel.raw(),
            index,
            std::mem::size_of::<T>(),
            (value as *const T).cast::<c_void>(),
        )
    }
    .map_err(map_create("clSetKernelArg"))
}

/// An empty kernel with a name no earlier build used (`entry` in it keeps programs apart
/// even where the clock is coarse). NVIDIA's driver prints ptxas's report (the register count)
/// only when it really compiles, and serves a source it has seen from its compute cache
/// (~/.nv/ComputeCache) with an empty log. Turning the cache off instead
/// (CUDA_CACHE_DISABLE=1) also makes every context recompile the driver's own kernels: on an
/// H200 (driver 580.159.04) clCreateContext then took 1.8-2.1 s instead of a fraction.
pub(crate) fn cache_miss_kernel(entry: &str) -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!(
        "__kernel void blocksweep_unique_{entry}_{}_{nanos}(void) {{}}\n",
        std::process::id()
    )
}

/// Builds `source` for `device` and returns the program and its build log. A failed build
/// is [`OpenClError::Build`] carrying the log.
pub(crate) fn build(
    context: &Context,
    device: DeviceId,
    source: &str,
    options: &str,
) -> Result<(Program, String), OpenClError> {
    let raw = create_program_with_source(context.raw(), &[source])
        .map_err(map_create("clCreateProgramWithSource"))?;
    let program = Program::from_raw(raw);
    let c_options = CString::new(options).map_err(|_| {
        OpenClError::Usage(format!("build options contain a NUL byte: {options:?}"))
    })?;
    let status = crate::stderr::quieted(|| {
        build_program(
            program.raw(),
            &[device.0],
            &c_options,
            None,
            ptr::null_mut(),
        )
    });
    // The log is read either way: on success it holds ptxas's report, on failure the errors.
    let log = get_program_build_data(program.raw(), device.0, CL_PROGRAM_BUILD_LOG)
        .map(|b| {
            let end = b.iter().position(|&c| c == 0).unwrap_or(b.len());
            String::from_utf8_lossy(&b[..end]).trim().to_string()
        })
        .unwrap_or_else(|c| {
            format!(
                "(CL_PROGRAM_BUILD_LOG unavailable: {})",
                crate::error::cl_error_name(c)
            )
        });
    status.map_err(map_build("clBuildProgram", options, log.clone()))?;
    Ok((program, log))
}

/// The kernel named `name` in `program`.
pub(crate) fn kernel(program: &Program, name: &str) -> Result<Kernel, OpenClError> {
    let c_name = CString::new(name)
        .map_err(|_| OpenClError::Usage(format!("kernel name contains a NUL byte: {name:?}")))?;
    let raw = create_kernel(program.raw(), &c_name).map_err(map_create("clCreateKernel"))?;
    Ok(Kernel::from_raw(raw))
}

/// CL_KERNEL_NUM_ARGS against the spec's argument count.
pub(crate) fn check_arg_count(kernel: &Kernel, declared: usize) -> Result<(), OpenClError> {
    const NAME: &str = "CL_KERNEL_NUM_ARGS";
    let takes = match get_kernel_info(kernel.raw(), CL_KERNEL_NUM_ARGS)
        .map_err(map_query("clGetKernelInfo", NAME))?
    {
        InfoType::Uint(n) => n as usize,
        other => {
            return Err(OpenClError::Malformed {
                query: NAME.into(),
                detail: format!("{other:?} where a cl_uint was expected"),
            })
        }
    };
    if takes != declared {
        return Err(OpenClError::Program(format!(
            "the kernel takes {takes} arguments, the spec declares {declared}"
        )));
    }
    Ok(())
}

/// What one clSetKernelArg passes: a value's bytes, or a `__local` size with no value.
pub(crate) enum ArgValue<'a> {
    Bytes(&'a [u8]),
    Local(usize),
}

/// Sets argument `index` to `value`; a value the kernel's argument cannot take (its size, or a
/// `__local` size for an argument that is not `__local`) is the spec's error, naming both.
pub(crate) fn set_value(
    kernel: &Kernel,
    index: cl_uint,
    value: ArgValue,
    arg: &ProgramArg,
) -> Result<(), OpenClError> {
    let (size, value) = match value {
        ArgValue::Bytes(b) => (b.len(), b.as_ptr().cast::<c_void>()),
        ArgValue::Local(size) => (size, ptr::null()),
    };
    // SAFETY: `value` is null (a `__local` size) or points at `size` live bytes, which the
    // driver copies before returning.
    unsafe { set_kernel_arg(kernel.raw(), index, size, value) }.map_err(|code| match code {
        CL_INVALID_ARG_SIZE | CL_INVALID_ARG_VALUE | CL_INVALID_MEM_OBJECT | CL_INVALID_SAMPLER => {
            OpenClError::Program(format!(
                "argument {index} is declared as {}, which the kernel's argument {index} \
                 cannot take: clSetKernelArg answered {} ({code})",
                describe(arg),
                cl_error_name(code)
            ))
        }
        _ => map_create("clSetKernelArg")(code),
    })
}

/// An argument as the spec declares it, in words.
fn describe(arg: &ProgramArg) -> String {
    match arg {
        ProgramArg::Buffer { bytes, .. } => format!("a buffer of {bytes} bytes"),
        ProgramArg::Scalar { ty, .. } => format!("a {ty} scalar ({} bytes)", ty.size()),
        ProgramArg::Local => "a __local argument".into(),
    }
}
