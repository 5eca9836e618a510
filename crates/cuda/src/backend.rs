//! [`CudaBackend`]: the [`Backend`] impl tying one device's context, stream, kernels, memory
//! and timer together.

use blocksweep_core::verify::POISON_BITS;
use blocksweep_core::{
    Backend, BackendResult, BatchTimes, BlockSize, DeviceIdentity, Frame, KernelFacts,
    KernelVariant, Limits, OccupancySuggestion, Residency, Stamps, TimerInfo, Work,
};
use cudarc::driver::sys::CUfunction;

use crate::context::{PrimaryContext, Stream};
use crate::device;
use crate::error::CudaError;
use crate::kernel::{self, CudaCompiler, Kernels};
use crate::memory::{CopyBuffers, Planes};
use crate::timing::{self, EventTimer, KernelArgs};

/// What `open` may be told.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CudaOptions {
    pub compiler: CudaCompiler,
}

/// One CUDA device, ready to run the grayscale kernels.
///
/// Fields drop in declaration order, after [`Drop::drop`] has made the context current: buffers
/// and events, then the module, the stream and, last, the primary context they live in.
pub struct CudaBackend {
    planes: Option<Planes>,
    copy: Option<CopyBuffers>,
    timer: EventTimer,
    kernels: Kernels,
    variant: KernelVariant,
    /// The uploaded frame's width and height (the 2-D kernel's arguments).
    frame_size: (u32, u32),
    stream: Stream,
    ctx: PrimaryContext,
    identity: DeviceIdentity,
    limits: Limits,
}

impl Drop for CudaBackend {
    fn drop(&mut self) {
        // The fields' own drops free through the driver, which acts on the calling thread's
        // current context; this may be another thread than the last call's. If binding
        // fails, the frees fail too and are ignored: nothing else can be done at teardown.
        let _ = self.ctx.bind();
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
    let limits =
        blocksweep_core::trace::time("cuda", "open: limits", || device::limits(ctx.device()))?;
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
        planes: None,
        copy: None,
        timer,
        kernels,
        variant: KernelVariant::GridStride,
        frame_size: (0, 0),
        stream,
        ctx,
        identity,
        limits,
    })
}

impl CudaBackend {
    fn function(&self) -> CUfunction {
        self.kernels.get(self.variant).0
    }

    fn planes(&self) -> Result<&Planes, CudaError> {
        self.planes.as_ref().ok_or_else(no_frame)
    }

    fn upload_planes(&mut self, frame: &Frame) -> Result<(), CudaError> {
        self.ctx.bind()?;
        // Free the previous frame first, so it does not count against the new one.
        self.planes = None;
        self.stream.synchronize()?;
        let stream = &self.stream;
        self.planes = Some(blocksweep_core::trace::time("cuda", "upload", || {
            Planes::upload(frame, stream)
        })?);
        self.frame_size = (frame.width, frame.height);
        Ok(())
    }

    fn batch(&mut self, work: Work, count: u32, stamps: Stamps) -> Result<BatchTimes, CudaError> {
        self.ctx.bind()?;
        match work {
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
                let (func, stream, variant) = (self.function(), &self.stream, self.variant);
                let mut op = || timing::launch(func, stream, launch, variant, args);
                self.timer.run_batch(stream, count, stamps, &mut op)
            }
            Work::Copy { bytes } => {
                self.ensure_copy_buffers(bytes)?;
                let copy = self
                    .copy
                    .as_ref()
                    .ok_or_else(|| CudaError::Usage("copy buffers missing".into()))?;
                let stream = &self.stream;
                let mut op = || copy.copy(stream);
                self.timer.run_batch(stream, count, stamps, &mut op)
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
        self.copy = Some(CopyBuffers::new(bytes, &self.stream)?);
        Ok(())
    }
}

fn no_frame() -> CudaError {
    CudaError::Usage("no frame uploaded yet (call upload first)".into())
}

impl Backend for CudaBackend {
    fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }

    fn limits(&self) -> &Limits {
        &self.limits
    }

    fn kernel_facts(&self) -> &KernelFacts {
        self.kernels.get(self.variant).1
    }

    fn timer(&self) -> TimerInfo {
        TimerInfo {
            method: timing::TIMER_METHOD.into(),
            resolution_ns: timing::EVENT_RESOLUTION_NS,
        }
    }

    fn upload(&mut self, frame: &Frame) -> BackendResult<()> {
        Ok(self.upload_planes(frame)?)
    }

    fn residency(&mut self, block: BlockSize) -> BackendResult<Option<Residency>> {
        self.ctx.bind()?;
        Ok(kernel::residency(self.function(), block.threads())?)
    }

    fn occupancy_suggestion(&mut self) -> BackendResult<Option<OccupancySuggestion>> {
        self.ctx.bind()?;
        Ok(Some(kernel::suggestion(self.function())?))
    }

    fn poison_output(&mut self) -> BackendResult<()> {
        self.ctx.bind()?;
        Ok(self.planes()?.poison(POISON_BITS, &self.stream)?)
    }

    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        Ok(self.batch(work, count, stamps)?)
    }

    fn read_output(&mut self, out: &mut [f32]) -> BackendResult<()> {
        self.ctx.bind()?;
        Ok(self.planes()?.read_output(out, &self.stream)?)
    }

    /// Reads into page-locked memory (`cuMemAllocHost`) kept with the frame's planes.
    fn read_output_lent(&mut self) -> BackendResult<Option<&[f32]>> {
        self.ctx.bind()?;
        let planes = self.planes.as_mut().ok_or_else(no_frame)?;
        Ok(planes.read_output_lent(&self.stream)?)
    }

    fn copy_method(&self) -> String {
        "cuMemcpyDtoDAsync, timed with CUDA events".into()
    }

    fn set_kernel(&mut self, variant: KernelVariant) -> BackendResult<()> {
        self.variant = variant;
        Ok(())
    }
}
