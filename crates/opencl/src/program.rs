//! A program (`Backend::load_program`: a user's kernel or a built-in one): its OpenCL C built
//! with clBuildProgram, its kernel with every argument set in the given order
//! (`blocksweep_core::program` states the contract), one buffer per buffer argument, the
//! per-launch size of its `__local` arguments, scalars set again later, and the copies in and
//! out.

use blocksweep_core::Fill;
use std::ffi::c_void;
use std::ptr;

use blocksweep_core::{KernelFacts, Launch, ProgramArg, ProgramSource};
use cl3::info_type::InfoType;
use opencl3::error_codes::CL_INVALID_KERNEL_NAME;
use opencl3::kernel::set_kernel_arg;
use opencl3::memory::{
    cl_buffer_region, create_sub_buffer, CL_BUFFER_CREATE_TYPE_REGION, CL_MEM_READ_WRITE,
};
use opencl3::program::{get_program_info, CL_PROGRAM_KERNEL_NAMES};
use opencl3::types::{cl_int, cl_uint};

use crate::context::DeviceContext;
use crate::error::{cl_error_name, map_create, OpenClError};
use crate::handles::{Kernel, Mem, Program, Queue};
use crate::kernel::{
    self, cache_miss_kernel, check_arg_count, facts, set_value, ArgValue, NV_VERBOSE_OPTION,
};
use crate::memory::{alloc, read_range, write_bytes};
use crate::provider::OPENCL_C;

/// The size a `__local` argument gets at load, before a launch gives it its own: any size a
/// `__local` argument takes, so that the driver's answer tells whether the argument is one.
const PROBE_LOCAL_BYTES: usize = 4;

/// One argument's buffer and its size (guard bands included); the kernel sees `window`, a
/// sub-buffer past the leading band, where there are bands.
struct ArgBuffer {
    _window: Option<Mem>,
    mem: Mem,
    bytes: usize,
    /// Each guard band's bytes (0 for none).
    guard: usize,
}

/// A built program with its arguments set and its buffers allocated.
pub(crate) struct UserProgram {
    // Declaration order is drop order: the kernel goes before its program and its buffers.
    kernel: Kernel,
    _program: Program,
    /// One entry per argument: the buffer of each buffer argument.
    buffers: Vec<Option<ArgBuffer>>,
    /// Indices of the `__local` arguments, sized per launch ([`UserProgram::size_locals`]).
    locals: Vec<cl_uint>,
    /// The arguments as given, which [`UserProgram::set_scalar`] checks a new value against.
    args: Vec<ProgramArg>,
    /// The fill of ranges past 4 GiB (`fill.rs`), built when first needed.
    fill_kernel: std::cell::OnceCell<crate::fill::FillKernel>,
    facts: KernelFacts,
}

impl UserProgram {
    /// Builds `source` for the context's device (adding NVIDIA's verbose flag where `nvidia`,
    /// so that ptxas's register count lands in the log), creates its entry point, checks and
    /// sets `args`. Every error names the source's origin.
    pub fn load(
        ctx: &DeviceContext,
        nvidia: bool,
        compiled_by: &str,
        source: &ProgramSource,
        args: &[ProgramArg],
    ) -> Result<UserProgram, OpenClError> {
        let load = || -> Result<UserProgram, OpenClError> {
            let (program, log, options) = build(ctx, nvidia, source)?;
            let kernel = entry_kernel(&program, &source.entry)?;
            check_arg_count(&kernel, args.len())?;
            let (buffers, locals) = bind(ctx, &kernel, args)?;
            let mut facts = facts(
                &kernel,
                ctx.device,
                &source.entry,
                &log,
                compiled_by.to_string(),
                &options,
            )?;
            facts
                .extra
                .insert(0, ("source".into(), source.origin.clone()));
            Ok(UserProgram {
                kernel,
                _program: program,
                buffers,
                locals,
                args: args.to_vec(),
                fill_kernel: std::cell::OnceCell::new(),
                facts,
            })
        };
        load()
            .map_err(|e| match e {
                OpenClError::Build {
                    name,
                    code,
                    options,
                    log,
                } => OpenClError::Build {
                    name,
                    code,
                    options,
                    log: with_origin(&log, &source.origin),
                },
                other => other,
            })
            .map_err(|e| e.in_program(&source.origin))
    }

    pub fn kernel(&self) -> &Kernel {
        &self.kernel
    }

    pub fn facts(&self) -> &KernelFacts {
        &self.facts
    }

    /// Gives every `__local` argument the launch's `shared_bytes` (clSetKernelArg with a size
    /// and no value). A size the driver refuses, or none, is a refusal of the launch.
    pub fn size_locals(&self, launch: Launch) -> Result<(), OpenClError> {
        let bytes = launch.shared_bytes as usize;
        let refused = |name: String, code: cl_int| OpenClError::LaunchRejected {
            call: "clSetKernelArg",
            launch: launch.to_string(),
            name,
            code,
        };
        if bytes == 0 && !self.locals.is_empty() {
            let why = "a __local argument needs the launch's shared_bytes above 0";
            return Err(refused(why.into(), 0));
        }
        for &index in &self.locals {
            // SAFETY: a `__local` argument takes a size and a null value (clSetKernelArg).
            unsafe { set_kernel_arg(self.kernel.raw(), index, bytes, ptr::null()) }
                .map_err(|code| refused(cl_error_name(code), code))?;
        }
        Ok(())
    }

    /// Sets scalar argument `arg` to `bytes` (its little-endian value, as many bytes as the
    /// type it was loaded with) for the launches after this call.
    pub fn set_scalar(&self, arg: usize, bytes: &[u8]) -> Result<(), OpenClError> {
        let usage = |why: String| OpenClError::Usage(format!("set_scalar({arg}): {why}"));
        let given = self
            .args
            .get(arg)
            .ok_or_else(|| usage(format!("the program has {} arguments", self.args.len())))?;
        let ProgramArg::Scalar { ty, .. } = given else {
            return Err(usage(format!("argument {arg} is not a scalar")));
        };
        if bytes.len() != ty.size() {
            let why = format!("{} bytes for a {ty} scalar of {}", bytes.len(), ty.size());
            return Err(usage(why));
        }
        set_value(&self.kernel, arg as cl_uint, ArgValue::Bytes(bytes), given)
    }

    /// The kernel's part of argument `arg`'s buffer (its guard bands left out): the buffer,
    /// the part's offset and its length in bytes.
    pub fn kernel_part(&self, arg: usize) -> Result<(&Mem, usize, usize), OpenClError> {
        let b = self.arg_buffer(arg, "read_buffer_staged")?;
        Ok((&b.mem, b.guard, b.bytes - 2 * b.guard))
    }

    /// Copies `data` into argument `arg`'s buffer, which it must fill exactly; returns when
    /// the copy is done. Blocking, so `data` is never read after the call: no transfer is
    /// left behind when a deadline passes.
    pub fn write(&self, queue: &Queue, arg: usize, data: &[u8]) -> Result<(), OpenClError> {
        write_bytes(queue, self.buffer(arg, data.len(), "write_buffer")?, data)
    }

    /// Sets each of `fills` in argument `arg`'s buffer; returns when all are done.
    pub fn fill(&self, ctx: &DeviceContext, arg: usize, fills: &[Fill]) -> Result<(), OpenClError> {
        let (mem, bytes) = self.slot(arg, "fill_buffer")?;
        for f in fills {
            if f.offset.checked_add(f.len).is_none_or(|e| e > bytes as u64) {
                return Err(OpenClError::Usage(format!(
                    "fill_buffer({arg}): {} bytes at {} of a {bytes}-byte buffer",
                    f.len, f.offset
                )));
            }
        }
        crate::fill::fill_ranges(ctx, &self.fill_kernel, mem, fills)
    }

    /// Copies `out.len()` bytes of argument `arg`'s buffer from `offset` into `out`; returns
    /// when the copy is done.
    pub fn read(
        &self,
        queue: &Queue,
        arg: usize,
        offset: u64,
        out: &mut [u8],
    ) -> Result<(), OpenClError> {
        let (mem, bytes) = self.slot(arg, "read_buffer")?;
        let end = offset.checked_add(out.len() as u64);
        if end.is_none_or(|e| e > bytes as u64) {
            return Err(OpenClError::Usage(format!(
                "read_buffer({arg}): {} bytes at {offset} of a {bytes}-byte buffer",
                out.len()
            )));
        }
        read_range(queue, mem, offset as usize, out)
    }

    /// Argument `arg`'s buffer, if it is a buffer of `len` bytes.
    fn buffer(&self, arg: usize, len: usize, call: &str) -> Result<&Mem, OpenClError> {
        let (mem, bytes) = self.slot(arg, call)?;
        if bytes != len {
            return Err(OpenClError::Usage(format!(
                "{call}({arg}): {len} bytes, but the buffer holds {bytes}"
            )));
        }
        Ok(mem)
    }

    /// Argument `arg`'s buffer and its size, if it is a buffer.
    fn slot(&self, arg: usize, call: &str) -> Result<(&Mem, usize), OpenClError> {
        let b = self.arg_buffer(arg, call)?;
        Ok((&b.mem, b.bytes))
    }

    fn arg_buffer(&self, arg: usize, call: &str) -> Result<&ArgBuffer, OpenClError> {
        let usage = |why: String| OpenClError::Usage(format!("{call}({arg}): {why}"));
        let slot = self
            .buffers
            .get(arg)
            .ok_or_else(|| usage(format!("the program has {} arguments", self.buffers.len())))?;
        slot.as_ref()
            .ok_or_else(|| usage(format!("argument {arg} is not a buffer")))
    }
}

/// Builds OpenCL C `source` for the context's device with its options (see [`program_options`];
/// where `nvidia`, with a kernel of a new name added): the program, its build log and the
/// options it was built with.
fn build(
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
        kernel::build(&ctx.context, ctx.device, &text, &options)
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
fn entry_kernel(program: &Program, entry: &str) -> Result<Kernel, OpenClError> {
    match kernel::kernel(program, entry) {
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

/// Allocates each buffer argument's buffer and sets every argument in order; returns the
/// buffers (one slot per argument) and the `__local` arguments' indices.
fn bind(
    ctx: &DeviceContext,
    kernel: &Kernel,
    args: &[ProgramArg],
) -> Result<(Vec<Option<ArgBuffer>>, Vec<cl_uint>), OpenClError> {
    let mut buffers = Vec::with_capacity(args.len());
    let mut locals = Vec::new();
    for (i, arg) in args.iter().enumerate() {
        let index = i as cl_uint;
        let mut buffer = None;
        match arg {
            ProgramArg::Buffer { bytes: 0, .. } => {
                return Err(OpenClError::Program(format!(
                    "argument {i} is a buffer of 0 bytes: an OpenCL buffer holds at least one"
                )))
            }
            ProgramArg::Buffer { bytes, guard } => {
                let total = arg.allocation();
                let mem = alloc(&ctx.context, CL_MEM_READ_WRITE, total)?;
                let window = match *guard {
                    0 => None,
                    g => Some(sub_buffer(&mem, g, *bytes)?),
                };
                // A cl_mem argument's value is the handle itself (a pointer's bytes).
                let seen = window.as_ref().unwrap_or(&mem);
                let handle = (seen.raw() as usize).to_ne_bytes();
                set_value(kernel, index, ArgValue::Bytes(&handle), arg)?;
                // The allocation succeeded, so the sizes fit size_t.
                buffer = Some(ArgBuffer {
                    _window: window,
                    mem,
                    bytes: total as usize,
                    guard: *guard as usize,
                });
            }
            ProgramArg::Scalar { ty, bytes } => {
                if bytes.len() != ty.size() {
                    return Err(OpenClError::Usage(format!(
                        "argument {i}: a {ty} scalar given as {} bytes",
                        bytes.len()
                    )));
                }
                set_value(kernel, index, ArgValue::Bytes(bytes), arg)?;
            }
            ProgramArg::Local => {
                set_value(kernel, index, ArgValue::Local(PROBE_LOCAL_BYTES), arg)?;
                locals.push(index);
            }
        }
        buffers.push(buffer);
    }
    Ok((buffers, locals))
}

/// `log` with each path of a compiler's temporary copy of the source (PoCL builds
/// `.../pocl/kcache/tempfile_XXXXXX.cl`) replaced by the user's file, so that an error's
/// "file:line:column" points at what they wrote.
fn with_origin(log: &str, origin: &str) -> String {
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

/// The `bytes` of `mem` from byte `origin` on, as a buffer of their own (clCreateSubBuffer):
/// what the kernel sees of a buffer with guard bands.
fn sub_buffer(mem: &Mem, origin: u64, bytes: u64) -> Result<Mem, OpenClError> {
    let region = cl_buffer_region {
        origin: origin as usize,
        size: bytes as usize,
    };
    // SAFETY: `mem` is a live buffer of at least origin + bytes bytes; `region` is read during
    // the call only.
    let raw = unsafe {
        create_sub_buffer(
            mem.raw(),
            CL_MEM_READ_WRITE,
            CL_BUFFER_CREATE_TYPE_REGION,
            (&raw const region).cast::<c_void>(),
        )
    }
    .map_err(map_create("clCreateSubBuffer"))?;
    Ok(Mem::from_raw(raw))
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
