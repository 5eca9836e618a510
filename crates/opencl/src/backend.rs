//! `OpenClBackend`: the core's `Backend` trait over one device's context (`context`), the
//! current program (`program`: a user's kernel or a built-in one, `builtin`), the staged
//! read-back and the copy buffers (`memory`), and the timed batches (`timing`).

use blocksweep_core::{
    Backend, BackendResult, BatchTimes, BlockSize, DeviceIdentity, Fill, KernelFacts,
    KernelVariant, Launch, Limits, ProgramArg, ProgramSource, Residency, Stamps, TimerInfo, Work,
};

use crate::cold::{self, Scratch};
use crate::context::DeviceContext;
use crate::device::{self, DeviceEntry};
use crate::error::OpenClError;
use crate::handles::DeviceId;
use crate::memory::{CopyBuffers, Staging};

/// Writes from this size up go through the page-locked staging buffer; smaller ones go
/// direct (a user kernel's scalars-sized buffers gain nothing from a mapping).
const STAGED_WRITE: usize = 1 << 20;
use crate::program::UserProgram;
use crate::timing;
use crate::OpenClOptions;

/// One OpenCL device, and the program loaded on it once `load_program` has run.
pub struct OpenClBackend {
    // Declaration order is drop order: buffers and kernels go before the queue and the context
    // that they belong to.
    staging: Option<Staging>,
    copy: Option<CopyBuffers>,
    /// What `--cold`'s flushes write, kept while the size stays.
    scratch: Option<Scratch>,
    program: Option<UserProgram>,
    context: DeviceContext,
    identity: DeviceIdentity,
    limits: Limits,
    /// The device answers cl_nv_device_attribute_query: NVIDIA's compiler (-cl-nv-verbose).
    nvidia: bool,
    /// KernelFacts::compiled_by.
    compiled_by: String,
    /// The user's build options for the built-in kernels (`--cl-build-options`).
    extra_options: String,
    /// What `kernel_facts` lends with no program loaded.
    no_facts: KernelFacts,
    /// Why the backend is unusable: a command missed its deadline and may still be running.
    unusable: Option<String>,
}

impl OpenClBackend {
    pub(crate) fn open(
        index: usize,
        entry: &DeviceEntry,
        options: &OpenClOptions,
    ) -> Result<Self, OpenClError> {
        let (identity, mut limits) =
            blocksweep_core::trace::time("opencl", "open: identity, limits", || {
                Ok::<_, OpenClError>((
                    device::identity(index, entry)?,
                    crate::limits::limits(entry.device)?,
                ))
            })?;
        let context = blocksweep_core::trace::time("opencl", "open: context", || {
            DeviceContext::new(DeviceId(entry.device))
        })?;
        // cl_nv_device_attribute_query is what marks NVIDIA's compiler (and its -cl-nv-verbose).
        let nvidia = limits.compute_capability.is_some();
        let extra_options = options.extra_build_options.clone();
        // Without NVIDIA's warp size, the grid-stride kernel's preferred work-group multiple is
        // OpenCL's nearest thing to a SIMD width (PoCL: its vector width; AMD: the wavefront).
        if limits.warp_size.is_none() {
            let source = crate::builtin::source(KernelVariant::GridStride, &extra_options);
            limits.warp_size = blocksweep_core::trace::time("opencl", "open: width", || {
                crate::facts::preferred_multiple(&context, &source)
            })
            .filter(|m| m.value.is_power_of_two());
        }
        Ok(OpenClBackend {
            staging: None,
            copy: None,
            scratch: None,
            program: None,
            context,
            identity,
            limits,
            nvidia,
            compiled_by: format!("clBuildProgram ({})", entry.platform_name),
            extra_options,
            no_facts: KernelFacts::default(),
            unusable: None,
        })
    }

    /// An error once a command missed its deadline: the device may be busy with it for ever.
    fn usable(&self) -> Result<(), OpenClError> {
        match &self.unusable {
            Some(why) => Err(OpenClError::Unusable(why.clone())),
            None => Ok(()),
        }
    }

    /// Marks the backend unusable after a missed deadline, so that no later call waits behind
    /// the command, and leaves to the process's end what could wait for it when released: the
    /// queue, the context, the staging buffer (whose unmap is queued behind it), the program
    /// (NVIDIA's release of a kernel waits for the running one: 2.5 s on the H200) and the
    /// buffers the command may still be using.
    fn check_deadline<T>(&mut self, r: Result<T, OpenClError>) -> Result<T, OpenClError> {
        if let Err(e @ OpenClError::Deadline { .. }) = &r {
            self.unusable = Some(format!("{e}; it may still be running"));
            std::mem::forget(self.staging.take());
            std::mem::forget(self.program.take());
            std::mem::forget(self.copy.take());
            std::mem::forget(self.scratch.take());
            self.context.abandon();
        }
        r
    }

    /// The current program, for a call that needs one.
    fn program(&self, call: &str) -> Result<&UserProgram, OpenClError> {
        self.program.as_ref().ok_or_else(|| {
            OpenClError::Usage(format!(
                "{call}: no program loaded (load_program was not called, or it failed)"
            ))
        })
    }

    /// `count` runs of the current program under the deadline (a kernel may loop for ever).
    fn kernel_batch(
        &self,
        launch: Launch,
        count: u32,
        stamps: Stamps,
    ) -> Result<BatchTimes, OpenClError> {
        let program = self.program("run_batch")?;
        program.size_locals(launch)?;
        let deadline = Some(blocksweep_core::program::deadline());
        let kernel = program.kernel();
        timing::kernel_batch(&self.context, kernel, launch, count, stamps, deadline)
    }

    /// `count` copies of `bytes`, between buffers allocated on first use and kept while the
    /// size stays.
    fn copy_batch(&mut self, bytes: u64, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        self.copy_buffers(bytes)?;
        let buffers = self
            .copy
            .as_ref()
            .ok_or_else(|| OpenClError::Usage("copy buffers missing after allocation".into()))?;
        Ok(timing::copy_batch(&self.context, buffers, count, stamps)?)
    }

    /// The copy's buffers of `bytes`, allocated on first use and kept while the size stays.
    fn copy_buffers(&mut self, bytes: u64) -> Result<(), OpenClError> {
        if self.copy.as_ref().is_none_or(|c| c.bytes != bytes) {
            self.copy = None;
            self.copy = Some(CopyBuffers::new(&self.context, bytes)?);
        }
        Ok(())
    }

    /// `count` runs of `work`, each after a fill of the scratch buffer of `flush_bytes`
    /// ([`cold::flushed_batch`]).
    fn flushed(
        &mut self,
        work: Work,
        count: u32,
        flush_bytes: u64,
    ) -> Result<BatchTimes, OpenClError> {
        if let Work::Copy { bytes } = work {
            self.copy_buffers(bytes)?;
        }
        let scratch = Scratch::sized(self.scratch.take(), &self.context, flush_bytes)?;
        let scratch = &*self.scratch.insert(scratch);
        let ctx = &self.context;
        match work {
            Work::Kernel(launch) => {
                let program = self.program.as_ref().ok_or_else(|| {
                    OpenClError::Usage("run_batch_flushed: no program loaded".into())
                })?;
                program.size_locals(launch)?;
                let deadline = Some(blocksweep_core::program::deadline());
                let kernel = program.kernel();
                cold::flushed_batch(ctx, scratch, count, ("kernel", deadline), |want| {
                    timing::enqueue_kernel(&ctx.queue, kernel, launch, want)
                })
            }
            Work::Copy { .. } => {
                let b = self.copy.as_ref().ok_or_else(|| {
                    OpenClError::Usage("copy buffers missing after allocation".into())
                })?;
                let size = b.bytes as usize;
                cold::flushed_batch(ctx, scratch, count, ("copy", None), |want| {
                    timing::enqueue_copy(&ctx.queue, &b.src, &b.dst, size, want)
                })
            }
        }
    }

    /// The kernel's part of buffer `arg` read into the staging buffer, kept while the size
    /// stays; `None` where the driver refuses a mapped buffer of that size.
    fn staged(&mut self, arg: usize) -> Result<Option<&[u8]>, OpenClError> {
        let program = self
            .program
            .as_ref()
            .ok_or_else(|| OpenClError::Usage("read_buffer_staged: no program loaded".into()))?;
        let (mem, offset, len) = program.kernel_part(arg)?;
        let staging = Staging::sized(self.staging.take(), &self.context, len);
        match self.staging.insert(staging) {
            Staging::Mapped(host) => host.fill_from(mem, offset).map(Some),
            Staging::Refused(_) => Ok(None),
        }
    }
}

impl Backend for OpenClBackend {
    fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }

    fn limits(&self) -> &Limits {
        &self.limits
    }

    fn kernel_facts(&self) -> &KernelFacts {
        self.program.as_ref().map_or(&self.no_facts, |p| p.facts())
    }

    fn timer(&self) -> TimerInfo {
        timing::timer(&self.limits)
    }

    fn residency(&mut self, _block: BlockSize) -> BackendResult<Option<Residency>> {
        self.usable()?;
        // OpenCL has no occupancy query; the core models it from limits.mp_model.
        Ok(None)
    }

    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        self.usable()?;
        Ok(match work {
            Work::Kernel(launch) => {
                let r = self.kernel_batch(launch, count, stamps);
                self.check_deadline(r)?
            }
            Work::Copy { bytes } => self.copy_batch(bytes, count, stamps)?,
        })
    }

    fn run_batch_flushed(
        &mut self,
        work: Work,
        count: u32,
        flush_bytes: u64,
    ) -> BackendResult<BatchTimes> {
        self.usable()?;
        let r = self.flushed(work, count, flush_bytes);
        Ok(self.check_deadline(r)?)
    }

    fn copy_method(&self) -> String {
        "clEnqueueCopyBuffer, timed with profiling events".into()
    }

    fn builtin(&self, kernel: KernelVariant) -> Option<ProgramSource> {
        Some(crate::builtin::source(kernel, &self.extra_options))
    }

    fn set_scalar(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        self.usable()?;
        Ok(self.program("set_scalar")?.set_scalar(arg, bytes)?)
    }

    /// Reads into a mapped CL_MEM_ALLOC_HOST_PTR buffer kept while the size stays the same.
    fn read_buffer_staged(&mut self, arg: usize) -> BackendResult<Option<&[u8]>> {
        self.usable()?;
        Ok(self.staged(arg)?)
    }

    /// Frees the previous program and its buffers first. With a failed load no program is
    /// current: dispatches then fail too, rather than run another kernel.
    /// The program with its buffers, the copy's and the staging memory released; the context
    /// and queue stay.
    fn release(&mut self) -> BackendResult<()> {
        self.program = None;
        self.copy = None;
        self.staging = None;
        self.scratch = None;
        Ok(())
    }

    fn load_program(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> BackendResult<()> {
        let _t = blocksweep_core::trace::span("opencl", "load_program");
        self.usable()?;
        self.program = None;
        // PoCL allocates lazily and would take buffers past its own stated memory.
        let buffers: Vec<(String, u64)> = (args.iter().enumerate())
            .filter(|(_, a)| a.is_buffer())
            .map(|(i, a)| (format!("argument {i}"), a.allocation()))
            .collect();
        if let Err(detail) = self.limits.program_fits(&buffers) {
            return Err(OpenClError::OutOfMemory { detail }.into());
        }
        let (nvidia, compiled_by) = (self.nvidia, &self.compiled_by);
        let program = UserProgram::load(&self.context, nvidia, compiled_by, source, args)?;
        self.program = Some(program);
        Ok(())
    }

    /// Through the staging buffer where it has the write's size (or there is none yet): a
    /// frame's three planes, then its read-backs, share one page-locked buffer.
    fn write_buffer(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        self.usable()?;
        let program = self
            .program
            .as_ref()
            .ok_or_else(|| OpenClError::Usage("write_buffer: no program loaded".into()))?;
        let dst = program.whole(arg, bytes.len())?;
        let staged = (bytes.len() >= STAGED_WRITE)
            .then(|| Staging::for_write(&mut self.staging, &self.context, bytes.len()))
            .flatten();
        match staged {
            Some(host) => Ok(host.write_into(dst, bytes)?),
            None => Ok(program.write(&self.context.queue, arg, bytes)?),
        }
    }

    fn fill_buffer(&mut self, arg: usize, fills: &[Fill]) -> BackendResult<bool> {
        self.usable()?;
        self.program("fill_buffer")?
            .fill(&self.context, arg, fills)?;
        Ok(true)
    }

    fn read_buffer(&mut self, arg: usize, offset: u64, out: &mut [u8]) -> BackendResult<()> {
        self.usable()?;
        Ok(self
            .program("read_buffer")?
            .read(&self.context.queue, arg, offset, out)?)
    }
}
