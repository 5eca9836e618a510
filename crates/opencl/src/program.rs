//! A program (`Backend::load_program`: a user's kernel or a built-in one): its OpenCL C built
//! with clBuildProgram, its kernel with every argument set in the given order
//! (`blocksweep_core::program` states the contract), one buffer per buffer argument, the
//! per-launch size of its `__local` arguments, scalars set again later, and the copies in and
//! out.

use blocksweep_core::Fill;
use std::ffi::c_void;
use std::ptr;

use blocksweep_core::{KernelFacts, Launch, ProgramArg, ProgramSource};
use opencl3::kernel::set_kernel_arg;
use opencl3::memory::{
    cl_buffer_region, create_sub_buffer, CL_BUFFER_CREATE_TYPE_REGION, CL_MEM_READ_WRITE,
};
use opencl3::types::{cl_int, cl_uint};

use crate::context::DeviceContext;
use crate::error::{cl_error_name, map_create, OpenClError};
use crate::facts::facts;
use crate::handles::{Kernel, Mem, Program, Queue};
use crate::kernel::{self, check_arg_count, set_value, ArgValue};
use crate::memory::{alloc, read_range, write_bytes};

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
            let (program, log, options) = kernel::build_source(ctx, nvidia, source)?;
            let kernel = kernel::entry_kernel(&program, &source.entry)?;
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
                    log: kernel::with_origin(&log, &source.origin),
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
    /// Argument `arg`'s whole buffer, for a write of `len` bytes (which must fill it).
    pub fn whole(&self, arg: usize, len: usize) -> Result<&Mem, OpenClError> {
        self.buffer(arg, len, "write_buffer")
    }

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
