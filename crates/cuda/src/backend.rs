//! [`CudaBackend`]: the [`Backend`] impl tying one device's context, stream, memory and timer
//! together around the current program (a user's kernel or a built-in one, [`crate::builtin`]),
//! and the failed state an unusable context leaves (after a kernel's fault or a missed
//! deadline every call returns that error).

use std::mem::ManuallyDrop;
use std::time::Duration;

use blocksweep_core::{
    Backend, BackendResult, BatchTimes, BlockSize, DeviceIdentity, Fill, KernelFacts,
    KernelVariant, Limits, OccupancySuggestion, ProgramArg, ProgramSource, Residency, Stamps,
    TimerInfo, Work,
};
use cudarc::driver::sys::CUfunction;

use crate::cold::{self, Scratch};
use crate::context::{PrimaryContext, Stream};
use crate::device::{self, DriverInfo};
use crate::error::{CudaError, Health};
use crate::kernel;
use crate::memory::{CopyBuffers, Staging};
use crate::program::{self, Program};
use crate::timing::{self, EventTimer};
use crate::{CudaCompiler, CudaOptions};

/// Writes from this size up go through the page-locked staging memory; smaller ones go
/// direct (a copy from pageable memory that small is staged by the driver as fast).
const STAGED_WRITE: usize = 1 << 20;

/// One CUDA device, ready to run a program: the built-in grayscale kernels or a user's.
///
/// Teardown frees everything in order (buffers and events, then the module, the stream and,
/// last, the primary context they live in) after binding the context, except after a
/// deadline: the device may still be running the kernel then, and a free could wait for it
/// for ever, so everything is left to the process's exit instead (see [`Drop`]).
pub struct CudaBackend {
    program: Option<Program>,
    copy: Option<CopyBuffers>,
    /// What `--cold`'s flushes write, kept while the size stays.
    scratch: Option<Scratch>,
    /// Where `read_buffer_staged` copies, kept across rows and programs of one size.
    staging: Staging,
    dev: ManuallyDrop<Device>,
    /// How the built-in kernels are built (`builtin`'s source).
    compiler: CudaCompiler,
    /// What `kernel_facts` says with no program loaded: nothing.
    no_facts: KernelFacts,
    /// The first error that left the context unusable; every later call returns it.
    health: Health,
    cc: (i32, i32),
    driver: DriverInfo,
    identity: DeviceIdentity,
    limits: Limits,
}

/// What lives as long as the backend, in the order it is freed.
struct Device {
    timer: EventTimer,
    stream: Stream,
    ctx: PrimaryContext,
}

impl Drop for CudaBackend {
    fn drop(&mut self) {
        if self.health.busy() {
            // Freeing memory or unloading a module may wait for the running kernel, and a
            // teardown must not hang: leak it all (the driver reclaims it at exit).
            std::mem::forget(self.program.take());
            std::mem::forget(self.copy.take());
            std::mem::forget(self.scratch.take());
            std::mem::forget(std::mem::take(&mut self.staging));
            return;
        }
        // The frees act on the calling thread's current context, which may be another
        // thread's than the last call's. If binding fails, the frees fail too and are
        // ignored: nothing else can be done at teardown. A faulted context fails them at once.
        let _ = self.dev.ctx.bind();
        self.program = None;
        self.copy = None;
        self.scratch = None;
        self.staging = Staging::default();
        // SAFETY: dropped once, here, and never used after.
        unsafe { ManuallyDrop::drop(&mut self.dev) };
    }
}

/// Opens device `index` (its position in [`crate::probe`]'s list). No kernel is built: the
/// core loads each built-in one when it needs it (`Backend::builtin`).
pub fn open(index: usize, options: &CudaOptions) -> Result<CudaBackend, CudaError> {
    let t = blocksweep_core::trace::span("cuda", "open: enumerate");
    let (devices, driver) = device::enumerate()?;
    t.end();
    let count = devices.len();
    let identity = devices.into_iter().nth(index).ok_or_else(|| {
        CudaError::Unavailable(format!(
            "CUDA device {index} does not exist ({count} device{} found)",
            if count == 1 { "" } else { "s" }
        ))
    })?;
    let t = blocksweep_core::trace::span("cuda", "open: primary context");
    let ctx = PrimaryContext::retain(device::device_handle(index)?, &driver.words)?;
    t.end();
    let limits = blocksweep_core::trace::time("cuda", "open: limits", || {
        crate::limits::limits(ctx.device())
    })?;
    let cc = limits
        .compute_capability
        .as_ref()
        .map(|c| (c.value.0 as i32, c.value.1 as i32))
        .unwrap_or((7, 5));
    let stream = Stream::new()?;
    let timer = EventTimer::new()?;
    Ok(CudaBackend {
        program: None,
        copy: None,
        scratch: None,
        staging: Staging::default(),
        dev: ManuallyDrop::new(Device { timer, stream, ctx }),
        compiler: options.compiler,
        no_facts: KernelFacts::default(),
        health: Health::default(),
        cc,
        driver,
        identity,
        limits,
    })
}

impl CudaBackend {
    fn function(&self) -> Option<CUfunction> {
        self.program.as_ref().map(Program::function)
    }

    /// The deadline every wait honours: a kernel may never end.
    fn limit(&self) -> Duration {
        blocksweep_core::program::deadline()
    }

    /// Runs `f` with the context bound, unless an earlier error left the context unusable
    /// (then that error, without a driver call); an error that does so now is recorded.
    fn guarded<T>(
        &mut self,
        f: impl FnOnce(&mut Self) -> Result<T, CudaError>,
    ) -> BackendResult<T> {
        self.health.check()?;
        let r = self.dev.ctx.bind().and_then(|()| f(self));
        if let Err(e) = &r {
            self.health.record(e);
        }
        Ok(r?)
    }

    fn program(&self) -> Result<&Program, CudaError> {
        self.program.as_ref().ok_or_else(no_program)
    }

    fn batch(&mut self, work: Work, count: u32, stamps: Stamps) -> Result<BatchTimes, CudaError> {
        let limit = self.limit();
        match work {
            Work::Kernel(launch) => {
                let program = self.program.as_ref().ok_or_else(no_program)?;
                let dev = &mut *self.dev;
                let mut op = || program.launch(&dev.stream, launch);
                dev.timer
                    .run_batch(&dev.stream, count, stamps, limit, &mut op)
            }
            Work::Copy { bytes } => {
                self.ensure_copy_buffers(bytes)?;
                let copy = self
                    .copy
                    .as_ref()
                    .ok_or_else(|| CudaError::Usage("copy buffers missing".into()))?;
                let dev = &mut *self.dev;
                let stream = &dev.stream;
                let mut op = || copy.copy(stream);
                dev.timer.run_batch(stream, count, stamps, limit, &mut op)
            }
        }
    }

    /// The copy's two buffers for `bytes`, allocated on first use for that size.
    /// `count` runs of `work`, each after a memset of the scratch buffer of `flush_bytes`
    /// ([`cold::flushed_batch`]).
    fn flushed(
        &mut self,
        work: Work,
        count: u32,
        flush_bytes: u64,
    ) -> Result<BatchTimes, CudaError> {
        let limit = self.limit();
        if let Work::Copy { bytes } = work {
            self.ensure_copy_buffers(bytes)?;
        }
        let scratch = Scratch::sized(self.scratch.take(), flush_bytes)?;
        let scratch = &*self.scratch.insert(scratch);
        let dev = &mut *self.dev;
        let stream = &dev.stream;
        let run = (count, limit);
        match work {
            Work::Kernel(launch) => {
                let program = self.program.as_ref().ok_or_else(no_program)?;
                let mut op = || program.launch(stream, launch);
                cold::flushed_batch(&mut dev.timer, stream, scratch, run, &mut op)
            }
            Work::Copy { .. } => {
                let copy = (self.copy.as_ref())
                    .ok_or_else(|| CudaError::Usage("copy buffers missing".into()))?;
                let mut op = || copy.copy(stream);
                cold::flushed_batch(&mut dev.timer, stream, scratch, run, &mut op)
            }
        }
    }

    fn ensure_copy_buffers(&mut self, bytes: u64) -> Result<(), CudaError> {
        if bytes == 0 {
            return Err(CudaError::Usage("copy of 0 bytes".into()));
        }
        if self.copy.as_ref().is_some_and(|c| c.bytes() == bytes) {
            return Ok(());
        }
        self.copy = None;
        self.copy = Some(CopyBuffers::new(bytes, &self.dev.stream)?);
        Ok(())
    }

    /// Replaces the program with one built from `source`.
    fn load(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> Result<(), CudaError> {
        // Free the previous program's buffers first (once the stream is done with them), so
        // they do not count against these.
        self.wait("the work before load_program")?;
        self.program = None;
        let program = blocksweep_core::trace::time("cuda", "load_program", || {
            program::load(source, args, self.cc, &self.driver)
        })?;
        self.program = Some(program);
        Ok(())
    }

    /// Copies the kernel's part of buffer `arg` into the staging memory and waits; whether
    /// it did (`false`: the driver refused the page-locked memory).
    fn stage(&mut self, arg: usize) -> Result<bool, CudaError> {
        let (src, len) = self.program()?.buffers().kernel_part(arg)?;
        if !self.staging.enqueue(src, len, &self.dev.stream)? {
            return Ok(false);
        }
        self.wait_copy()?;
        self.staging.finished();
        Ok(true)
    }

    /// Waits for the copies just issued, within the deadline (a kernel before them on the
    /// stream may never end).
    fn wait_copy(&self) -> Result<(), CudaError> {
        self.wait("the copy")
    }

    /// Waits for everything issued so far, within the deadline; `what` names it if late.
    fn wait(&self, what: &'static str) -> Result<(), CudaError> {
        let limit = self.limit();
        self.dev.timer.wait_within(&self.dev.stream, limit, what)
    }
}

fn no_program() -> CudaError {
    CudaError::Usage("no program loaded (call load_program first)".into())
}

impl Backend for CudaBackend {
    fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }

    fn limits(&self) -> &Limits {
        &self.limits
    }

    /// The current program's, or nothing ([`KernelFacts::default`]) with none loaded.
    fn kernel_facts(&self) -> &KernelFacts {
        self.program.as_ref().map_or(&self.no_facts, Program::facts)
    }

    fn timer(&self) -> TimerInfo {
        TimerInfo {
            method: timing::TIMER_METHOD.into(),
            resolution_ns: timing::EVENT_RESOLUTION_NS,
        }
    }

    /// cuOccupancyMaxActiveBlocksPerMultiprocessor with no dynamic shared memory (the block
    /// size alone is asked about); `None` with no program loaded.
    fn residency(&mut self, block: BlockSize) -> BackendResult<Option<Residency>> {
        self.guarded(|b| match b.function() {
            Some(f) => kernel::residency(f, block.threads()),
            None => Ok(None),
        })
    }

    fn occupancy_suggestion(&mut self) -> BackendResult<Option<OccupancySuggestion>> {
        self.guarded(|b| b.function().map(kernel::suggestion).transpose())
    }

    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        self.guarded(|b| b.batch(work, count, stamps))
    }

    fn run_batch_flushed(
        &mut self,
        work: Work,
        count: u32,
        flush_bytes: u64,
    ) -> BackendResult<BatchTimes> {
        self.guarded(|b| b.flushed(work, count, flush_bytes))
    }

    fn copy_method(&self) -> String {
        "cuMemcpyDtoDAsync, timed with CUDA events".into()
    }

    fn builtin(&self, kernel: KernelVariant) -> Option<ProgramSource> {
        Some(crate::builtin::source(kernel, self.compiler))
    }

    /// CUDA C++ through NVRTC, whatever compiler `open` was given (that chooses the built-in
    /// kernels' source), or PTX through the driver's JIT; see program.rs.
    /// The program's buffers, the copy's and the page-locked staging memory freed on the
    /// context's thread binding; the context stays.
    fn release(&mut self) -> BackendResult<()> {
        self.guarded(|b| {
            b.program = None;
            b.copy = None;
            b.scratch = None;
            b.staging = Staging::default();
            Ok(())
        })
    }

    fn load_program(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> BackendResult<()> {
        self.guarded(|b| b.load(source, args))
    }

    /// Rewrites the value the packed parameters hold; no driver call.
    fn set_scalar(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        self.guarded(|b| {
            let program = b.program.as_mut().ok_or_else(no_program)?;
            program.set_scalar(arg, bytes)
        })
    }

    /// Through the staging memory where it has the write's size (or there is none yet): a
    /// frame's three planes, then its read-backs, share one page-locked buffer, whose first
    /// use (pinning a 10 GB plane takes seconds) the upload then pays, at the bus's speed.
    fn write_buffer(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        self.guarded(|b| {
            let buffers = b.program.as_ref().ok_or_else(no_program)?.buffers();
            let dst = buffers.whole(arg, bytes.len())?;
            let staged =
                bytes.len() >= STAGED_WRITE && b.staging.write(dst, bytes, &b.dev.stream)?;
            if !staged {
                buffers.write(arg, bytes, &b.dev.stream)?;
            }
            b.wait_copy()
        })
    }

    fn fill_buffer(&mut self, arg: usize, fills: &[Fill]) -> BackendResult<bool> {
        self.guarded(|b| {
            b.program()?.buffers().fill(arg, fills, &b.dev.stream)?;
            b.wait_copy()?;
            Ok(true)
        })
    }

    fn read_buffer(&mut self, arg: usize, offset: u64, out: &mut [u8]) -> BackendResult<()> {
        self.guarded(|b| {
            b.program()?
                .buffers()
                .read(arg, offset, out, &b.dev.stream)?;
            b.wait_copy()
        })
    }

    /// Into page-locked memory (`cuMemAllocHost`) kept while the size stays the same.
    fn read_buffer_staged(&mut self, arg: usize) -> BackendResult<Option<&[u8]>> {
        let staged = self.guarded(|b| b.stage(arg))?;
        Ok(staged.then(|| self.staging.bytes()).flatten())
    }
}
