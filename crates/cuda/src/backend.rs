//! [`CudaBackend`]: the [`Backend`] impl tying one device's context, stream, kernels, memory
//! and timer together, a user's program among them, and the failed state an unusable context
//! leaves (after a kernel's fault or a missed deadline every call returns that error).

use blocksweep_core::Fill;
use std::mem::ManuallyDrop;
use std::time::Duration;

use blocksweep_core::verify::POISON_BITS;
use blocksweep_core::{
    Backend, BackendResult, BatchTimes, BlockSize, DeviceIdentity, Frame, KernelFacts,
    KernelVariant, Limits, OccupancySuggestion, ProgramArg, ProgramSource, Residency, Stamps,
    TimerInfo, Work,
};
use cudarc::driver::sys::CUfunction;

use crate::context::{PrimaryContext, Stream};
use crate::device::{self, DriverInfo};
use crate::error::{CudaError, Health};
use crate::kernel::{self, CudaCompiler, Kernels};
use crate::memory::{CopyBuffers, Planes};
use crate::program::{self, Program};
use crate::timing::{self, EventTimer, KernelArgs};

/// What `open` may be told.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CudaOptions {
    pub compiler: CudaCompiler,
}

/// One CUDA device, ready to run the grayscale kernels and a user's.
///
/// Teardown frees everything in order (buffers and events, then the modules, the stream and,
/// last, the primary context they live in) after binding the context, except after a
/// deadline: the device may still be running the kernel then, and a free could wait for it
/// for ever, so everything is left to the process's exit instead (see [`Drop`]).
pub struct CudaBackend {
    program: Option<Program>,
    /// Whether dispatches run the program rather than `variant`.
    running_program: bool,
    planes: Option<Planes>,
    copy: Option<CopyBuffers>,
    dev: ManuallyDrop<Device>,
    variant: KernelVariant,
    /// The uploaded frame's width and height (the 2-D kernel's arguments).
    frame_size: (u32, u32),
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
    kernels: Kernels,
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
            std::mem::forget(self.planes.take());
            return;
        }
        // The frees act on the calling thread's current context, which may be another
        // thread's than the last call's. If binding fails, the frees fail too and are
        // ignored: nothing else can be done at teardown. A faulted context fails them at once.
        let _ = self.dev.ctx.bind();
        self.program = None;
        self.copy = None;
        self.planes = None;
        // SAFETY: dropped once, here, and never used after.
        unsafe { ManuallyDrop::drop(&mut self.dev) };
    }
}

/// Opens device `index` (its position in [`crate::probe`]'s list) and builds the kernels.
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
    let kernels = blocksweep_core::trace::time("cuda", "open: build", || {
        kernel::build(cc, &driver, options.compiler)
    })?;
    let timer = EventTimer::new()?;
    Ok(CudaBackend {
        program: None,
        running_program: false,
        planes: None,
        copy: None,
        dev: ManuallyDrop::new(Device {
            timer,
            kernels,
            stream,
            ctx,
        }),
        variant: KernelVariant::GridStride,
        frame_size: (0, 0),
        health: Health::default(),
        cc,
        driver,
        identity,
        limits,
    })
}

impl CudaBackend {
    fn function(&self) -> CUfunction {
        match (&self.program, self.running_program) {
            (Some(p), true) => p.function(),
            _ => self.dev.kernels.get(self.variant).0,
        }
    }

    /// The deadline a wait honours: while a user's kernel is current, which may never end.
    fn limit(&self) -> Option<Duration> {
        self.running_program
            .then(blocksweep_core::program::deadline)
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

    fn planes(&self) -> Result<&Planes, CudaError> {
        self.planes.as_ref().ok_or_else(no_frame)
    }

    fn program(&self) -> Result<&Program, CudaError> {
        self.program.as_ref().ok_or_else(no_program)
    }

    fn upload_planes(&mut self, frame: &Frame) -> Result<(), CudaError> {
        // Free the previous frame first, so it does not count against the new one.
        self.planes = None;
        self.dev.stream.synchronize()?;
        let stream = &self.dev.stream;
        self.planes = Some(blocksweep_core::trace::time("cuda", "upload", || {
            Planes::upload(frame, stream)
        })?);
        self.frame_size = (frame.width, frame.height);
        Ok(())
    }

    fn batch(&mut self, work: Work, count: u32, stamps: Stamps) -> Result<BatchTimes, CudaError> {
        let limit = self.limit();
        match work {
            Work::Kernel(launch) if self.running_program => {
                let program = self.program.as_ref().ok_or_else(no_program)?;
                let dev = &mut *self.dev;
                let mut op = || program.launch(&dev.stream, launch);
                dev.timer
                    .run_batch(&dev.stream, count, stamps, limit, &mut op)
            }
            Work::Kernel(launch) => {
                let planes = self.planes()?;
                let args = KernelArgs {
                    r: planes.r.ptr(),
                    g: planes.g.ptr(),
                    b: planes.b.ptr(),
                    out: planes.out.ptr(),
                    n: planes.pixels,
                    width: self.frame_size.0,
                    height: self.frame_size.1,
                };
                let (func, variant) = (self.function(), self.variant);
                let dev = &mut *self.dev;
                let stream = &dev.stream;
                let mut op = || timing::launch(func, stream, launch, variant, args);
                dev.timer.run_batch(stream, count, stamps, limit, &mut op)
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

    /// Replaces the program with one built from `source`, and makes it current.
    fn load(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> Result<(), CudaError> {
        // Free the previous program's buffers first (once the stream is done with them), so
        // they do not count against these.
        self.dev.stream.synchronize()?;
        self.program = None;
        self.running_program = false;
        let program = blocksweep_core::trace::time("cuda", "load_program", || {
            program::load(source, args, self.cc, &self.driver)
        })?;
        self.program = Some(program);
        self.running_program = true;
        Ok(())
    }

    /// Waits for the copy just issued, within the deadline while a program is current.
    fn wait_copy(&self) -> Result<(), CudaError> {
        match self.limit() {
            Some(limit) => self
                .dev
                .timer
                .wait_within(&self.dev.stream, limit, "the copy"),
            None => self.dev.stream.synchronize(),
        }
    }
}

fn no_frame() -> CudaError {
    CudaError::Usage("no frame uploaded yet (call upload first)".into())
}

fn no_program() -> CudaError {
    CudaError::Usage("no program loaded yet (call load_program first)".into())
}

impl Backend for CudaBackend {
    fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }

    fn limits(&self) -> &Limits {
        &self.limits
    }

    fn kernel_facts(&self) -> &KernelFacts {
        match (&self.program, self.running_program) {
            (Some(p), true) => p.facts(),
            _ => self.dev.kernels.get(self.variant).1,
        }
    }

    fn timer(&self) -> TimerInfo {
        TimerInfo {
            method: timing::TIMER_METHOD.into(),
            resolution_ns: timing::EVENT_RESOLUTION_NS,
        }
    }

    fn upload(&mut self, frame: &Frame) -> BackendResult<()> {
        self.guarded(|b| b.upload_planes(frame))
    }

    /// For a program too: cuOccupancyMaxActiveBlocksPerMultiprocessor with no dynamic shared
    /// memory (the block size alone is asked about).
    fn residency(&mut self, block: BlockSize) -> BackendResult<Option<Residency>> {
        self.guarded(|b| kernel::residency(b.function(), block.threads()))
    }

    fn occupancy_suggestion(&mut self) -> BackendResult<Option<OccupancySuggestion>> {
        self.guarded(|b| kernel::suggestion(b.function()).map(Some))
    }

    fn poison_output(&mut self) -> BackendResult<()> {
        self.guarded(|b| b.planes()?.poison(POISON_BITS, &b.dev.stream))
    }

    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        self.guarded(|b| b.batch(work, count, stamps))
    }

    fn read_output(&mut self, out: &mut [f32]) -> BackendResult<()> {
        self.guarded(|b| b.planes()?.read_output(out, &b.dev.stream))
    }

    /// Reads into page-locked memory (`cuMemAllocHost`) kept with the frame's planes.
    fn read_output_staged(&mut self) -> BackendResult<Option<&[f32]>> {
        self.guarded(|b| {
            let stream = &b.dev.stream;
            b.planes.as_mut().ok_or_else(no_frame)?.fill_staged(stream)
        })?;
        Ok(self.planes.as_ref().and_then(Planes::staged))
    }

    fn copy_method(&self) -> String {
        "cuMemcpyDtoDAsync, timed with CUDA events".into()
    }

    fn set_kernel(&mut self, variant: KernelVariant) -> BackendResult<()> {
        self.variant = variant;
        self.running_program = false;
        Ok(())
    }

    /// NVRTC only (the embedded PTX holds the built-in kernels alone), whatever compiler
    /// `open` was given; see program.rs.
    fn load_program(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> BackendResult<()> {
        self.guarded(|b| b.load(source, args))
    }

    fn write_buffer(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        self.guarded(|b| {
            b.program()?.write(arg, bytes, &b.dev.stream)?;
            b.wait_copy()
        })
    }

    fn fill_buffer(&mut self, arg: usize, fills: &[Fill]) -> BackendResult<bool> {
        self.guarded(|b| {
            b.program()?.fill(arg, fills, &b.dev.stream)?;
            b.wait_copy()?;
            Ok(true)
        })
    }

    fn read_buffer(&mut self, arg: usize, offset: u64, out: &mut [u8]) -> BackendResult<()> {
        self.guarded(|b| {
            b.program()?.read(arg, offset, out, &b.dev.stream)?;
            b.wait_copy()
        })
    }
}
