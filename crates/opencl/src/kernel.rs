//! Building a kernel and setting its arguments: a program's OpenCL C and options, clBuildProgram
//! with its log (naming the program's file), clCreateKernel, CL_KERNEL_NUM_ARGS against the
//! arguments given, and clSetKernelArg. What the driver says
//! about a built kernel is `facts`; a program's buffers are `program`'s.

use std::ffi::{c_void, CString};
use std::ptr;

use blocksweep_core::{ProgramArg, ProgramSource};
use cl3::info_type::InfoType;
use opencl3::error_codes::{
    CL_INVALID_ARG_SIZE, CL_INVALID_ARG_VALUE, CL_INVALID_KERNEL_NAME, CL_INVALID_MEM_OBJECT,
    CL_INVALID_SAMPLER,
};
use opencl3::kernel::{create_kernel, get_kernel_info, set_kernel_arg, CL_KERNEL_NUM_ARGS};
use opencl3::program::{
    build_program, create_program_with_source, get_program_build_data, get_program_info,
    CL_PROGRAM_BUILD_LOG, CL_PROGRAM_KERNEL_NAMES,
};
use opencl3::types::cl_uint;

use crate::context::DeviceContext;
use crate::error::{cl_error_name, map_build, map_create, map_query, OpenClError};
use crate::handles::{Context, DeviceId, Kernel, Program};

use crate::provider::OPENCL_C;

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

/// Builds OpenCL C `source` for the context's device with its options (see [`program_options`];
/// where `nvidia`, with a kernel of a new name added): the program, its build log and the
/// options it was built with.
pub(crate) fn build_source(
    ctx: &DeviceContext,
    nvidia: bool,
    source: &ProgramSource,
) -> Result<(Program, String, String), OpenClError> {
    if source.language != OPENCL_C {
        return Err(OpenClError::Program(format!(
            "the source is {}, but OpenCL builds {OPENCL_C}",
            source.language
        )));
    }
    let options = program_options(nvidia, &source.options);
    let mut text = source.text();
    if nvidia {
        // A kernel of a new name defeats NVIDIA's compute cache, so the log has ptxas's report.
        text = format!("{text}\n{}", cache_miss_kernel(&source.entry));
    }
    let (program, log) = blocksweep_core::trace::time("opencl", "load_program: build", || {
        build(&ctx.context, ctx.device, &text, &options)
    })?;
    Ok((program, log, options))
}

/// clBuildProgram options: the spec's own, and NVIDIA's verbose flag where the compiler is
/// NVIDIA's and the spec does not give it already.
pub(crate) fn program_options(nvidia: bool, options: &[String]) -> String {
    let mut o: Vec<&str> = options
        .iter()
        .map(|s| s.trim())
        .filter(|s| !s.is_empty())
        .collect();
    if nvidia && !o.contains(&NV_VERBOSE_OPTION) {
        o.push(NV_VERBOSE_OPTION);
    }
    o.join(" ")
}

/// The kernel `entry` of `program`; a name the program lacks is the spec's error, listing the
/// kernels it has.
pub(crate) fn entry_kernel(program: &Program, entry: &str) -> Result<Kernel, OpenClError> {
    match kernel(program, entry) {
        Err(OpenClError::Driver {
            code: CL_INVALID_KERNEL_NAME,
            ..
        }) => Err(OpenClError::Program(format!(
            "no kernel named `{entry}` in the program (its kernels: {})",
            kernel_names(program)
        ))),
        other => other,
    }
}

/// CL_PROGRAM_KERNEL_NAMES without the kernel added against NVIDIA's cache, for messages.
fn kernel_names(program: &Program) -> String {
    match get_program_info(program.raw(), CL_PROGRAM_KERNEL_NAMES) {
        Ok(InfoType::VecUchar(b)) => {
            let names = String::from_utf8_lossy(&b)
                .trim_end_matches('\0')
                .to_string();
            let names: Vec<&str> = names
                .split(';')
                .filter(|n| !n.is_empty() && !n.starts_with("blocksweep_unique_"))
                .collect();
            match names.is_empty() {
                true => "none".into(),
                false => names.join(", "),
            }
        }
        Ok(other) => format!("unreadable: {other:?}"),
        Err(code) => format!("unknown: {}", cl_error_name(code)),
    }
}

/// `log` with each path of a compiler's temporary copy of the source (PoCL builds
/// `.../pocl/kcache/tempfile_XXXXXX.cl`) replaced by the user's file, so that an error's
/// "file:line:column" points at what they wrote.
pub(crate) fn with_origin(log: &str, origin: &str) -> String {
    let mut out = String::with_capacity(log.len());
    let mut rest = log;
    while let Some(at) = rest.find("tempfile_") {
        let start = rest[..at]
            .rfind(|c: char| c.is_whitespace() || c == '\'' || c == '"')
            .map_or(0, |i| i + 1);
        let Some(end) = rest[at..].find(".cl").map(|e| at + e + 3) else {
            break;
        };
        out.push_str(&rest[..start]);
        out.push_str(origin);
        rest = &rest[end..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_compilers_temporary_file_is_named_as_the_users_source() {
        let log = "/root/.cache/pocl/kcache/tempfile_7tTq1B.cl:9:9: error: use of undeclared \
                   identifier 'q'\n1 error generated.";
        let named = with_origin(log, "examples/kernels/saxpy/saxpy.cl");
        assert!(
            named.starts_with("examples/kernels/saxpy/saxpy.cl:9:9: error"),
            "{named}"
        );
        assert_eq!(with_origin("no path here", "k.cl"), "no path here");
    }

    #[test]
    fn options_are_the_specs_plus_nv_verbose_once_on_nvidia() {
        let o = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(program_options(false, &o(&[])), "");
        assert_eq!(
            program_options(false, &o(&["-D N=4", " ", "-cl-std=CL1.2 "])),
            "-D N=4 -cl-std=CL1.2"
        );
        assert_eq!(
            program_options(true, &o(&["-cl-mad-enable"])),
            "-cl-mad-enable -cl-nv-verbose"
        );
        assert_eq!(
            program_options(true, &o(&["-cl-nv-verbose"])),
            "-cl-nv-verbose"
        );
    }
}
