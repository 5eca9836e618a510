//! [`CudaBackend`]: one device's primary context, one stream, the kernels and the planes.

use std::sync::Arc;

use blocksweep_core::verify::POISON_BITS;
use blocksweep_core::{
    Backend, BackendResult, BatchTimes, BlockSize, DeviceIdentity, Frame, KernelFacts,
    KernelVariant, Limits, OccupancySuggestion, Residency, Stamps, TimerInfo, Work,
};
use cudarc::driver::sys::CUdeviceptr;
use cudarc::driver::{CudaContext, CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr};

use crate::device;
use crate::error::{map_alloc, map_driver, map_init, CudaError};
use crate::module::{self, CudaCompiler, Kernels};
use crate::timing::{self, EventTimer, KernelArgs};

/// What `open` may be told.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CudaOptions {
    pub compiler: CudaCompiler,
}

/// The copy ceiling's two buffers, kept while the size stays the same.
struct CopyBuffers {
    src: CudaSlice<u8>,
    dst: CudaSlice<u8>,
}

/// The frame's four planes on the device.
struct Planes {
    r: CudaSlice<f32>,
    g: CudaSlice<f32>,
    b: CudaSlice<f32>,
    out: CudaSlice<f32>,
    pixels: u64,
}

/// One CUDA device, ready to run the grayscale kernels.
///
/// Fields drop in order: buffers and events before the kernels' module, the stream and, last,
/// the context (every cudarc handle also keeps the context alive). cudarc's drops never panic:
/// a failure is recorded in the context and returned by its next call.
pub struct CudaBackend {
    planes: Option<Planes>,
    copy: Option<CopyBuffers>,
    timer: EventTimer,
    kernels: Kernels,
    variant: KernelVariant,
    stream: Arc<CudaStream>,
    ctx: Arc<CudaContext>,
    identity: DeviceIdentity,
    limits: Limits,
}

/// Opens device `index` (its position in [`crate::probe`]'s list) and builds the kernels.
pub fn open(index: usize, options: &CudaOptions) -> Result<CudaBackend, CudaError> {
    let devices = device::probe()?;
    let count = devices.len();
    let identity = devices.into_iter().nth(index).ok_or_else(|| {
        CudaError::Unavailable(format!(
            "CUDA device {index} does not exist ({count} device{} found)",
            if count == 1 { "" } else { "s" }
        ))
    })?;
    let ctx = CudaContext::new(index)
        .map_err(|e| map_init("cuDevicePrimaryCtxRetain (CudaContext::new)", e))?;
    // SAFETY: everything this backend does runs on one stream, so cudarc's cross-stream
    // event tracking is not needed; turned off before any allocation so that no buffer ever
    // records extra events (which would land inside the timed region).
    unsafe { ctx.disable_event_tracking() };
    let limits = device::limits(ctx.cu_device())?;
    let cc = limits
        .compute_capability
        .as_ref()
        .map(|c| (c.value.0 as i32, c.value.1 as i32))
        .unwrap_or((7, 5));
    let stream = ctx
        .new_stream()
        .map_err(|e| map_driver("cuStreamCreate", e))?;
    let kernels = module::build(&ctx, cc, options.compiler)?;
    let timer = EventTimer::new(&ctx)?;
    Ok(CudaBackend {
        planes: None,
        copy: None,
        timer,
        kernels,
        variant: KernelVariant::GridStride,
        stream,
        ctx,
        identity,
        limits,
    })
}

fn ptr<T>(slice: &CudaSlice<T>, stream: &CudaStream) -> CUdeviceptr {
    // Event tracking is off, so the returned guard records nothing.
    slice.device_ptr(stream).0
}

impl CudaBackend {
    fn function(&self) -> &CudaFunction {
        match self.variant {
            KernelVariant::GridStride => &self.kernels.grid_stride,
            KernelVariant::OnePixelPerThread => &self.kernels.one_per_thread,
        }
    }

    fn planes(&self) -> Result<&Planes, CudaError> {
        self.planes
            .as_ref()
            .ok_or_else(|| CudaError::Usage("no frame uploaded yet (call upload first)".into()))
    }

    fn bind(&self) -> Result<(), CudaError> {
        self.ctx
            .bind_to_thread()
            .map_err(|e| map_driver("cuCtxSetCurrent", e))
    }

    fn synchronize(&self) -> Result<(), CudaError> {
        self.stream
            .synchronize()
            .map_err(|e| map_driver("cuStreamSynchronize", e))
    }

    /// Refuses `bytes` of new allocations that cuMemGetInfo says cannot fit.
    fn check_free(&self, bytes: u64, what: &str) -> Result<(), CudaError> {
        let (free, total) = self
            .ctx
            .mem_get_info()
            .map_err(|e| map_driver("cuMemGetInfo_v2", e))?;
        if bytes > free as u64 {
            return Err(CudaError::TooLarge(format!(
                "{what}; cuMemGetInfo reports {free} bytes free of {total}"
            )));
        }
        Ok(())
    }

    fn alloc<T: DeviceRepr>(&self, len: usize) -> Result<CudaSlice<T>, CudaError> {
        let call = if self.ctx.has_async_alloc() {
            "cuMemAllocAsync"
        } else {
            "cuMemAlloc_v2"
        };
        let bytes = (len * std::mem::size_of::<T>()) as u64;
        // SAFETY: the contents start undefined and are only read after being written: inputs
        // by upload, the output by poison_output, the copy source by a memset.
        unsafe { self.stream.alloc::<T>(len) }.map_err(|e| map_alloc(call, bytes, e))
    }

    fn upload_planes(&mut self, frame: &Frame) -> Result<(), CudaError> {
        self.bind()?;
        // Free the previous frame first, so it does not count against the new one.
        self.planes = None;
        self.synchronize()?;
        let pixels = frame.pixels();
        let plane_bytes = pixels * 4;
        self.check_free(
            4 * plane_bytes,
            &format!("frame needs 4 x {plane_bytes} bytes"),
        )?;
        let len = usize::try_from(pixels)
            .map_err(|_| CudaError::TooLarge(format!("{pixels} pixels do not fit usize")))?;
        if [&frame.r, &frame.g, &frame.b]
            .iter()
            .any(|p| p.len() != len)
        {
            return Err(CudaError::Usage(format!(
                "frame planes hold {}, {}, {} values for {pixels} pixels",
                frame.r.len(),
                frame.g.len(),
                frame.b.len()
            )));
        }
        let upload = |host: &[f32]| -> Result<CudaSlice<f32>, CudaError> {
            let mut dev = self.alloc(len)?;
            self.stream
                .memcpy_htod(host, &mut dev)
                .map_err(|e| map_driver("cuMemcpyHtoDAsync_v2", e))?;
            Ok(dev)
        };
        let r = upload(&frame.r)?;
        let g = upload(&frame.g)?;
        let b = upload(&frame.b)?;
        let out = self.alloc(len)?;
        self.synchronize()?;
        self.planes = Some(Planes {
            r,
            g,
            b,
            out,
            pixels,
        });
        Ok(())
    }

    fn batch(&mut self, work: Work, count: u32, stamps: Stamps) -> Result<BatchTimes, CudaError> {
        self.bind()?;
        match work {
            Work::Kernel(launch) => {
                let planes = self.planes()?;
                let s = &self.stream;
                let args = KernelArgs {
                    r: ptr(&planes.r, s),
                    g: ptr(&planes.g, s),
                    b: ptr(&planes.b, s),
                    out: ptr(&planes.out, s),
                    n: planes.pixels,
                };
                let func = match self.variant {
                    KernelVariant::GridStride => &self.kernels.grid_stride,
                    KernelVariant::OnePixelPerThread => &self.kernels.one_per_thread,
                };
                let mut op = || timing::launch(func, s, launch.block, launch.grid, args);
                self.timer.run_batch(s, count, stamps, &mut op)
            }
            Work::Copy { bytes } => {
                self.copy_buffers(bytes)?;
                let s = &self.stream;
                let c = self
                    .copy
                    .as_ref()
                    .ok_or_else(|| CudaError::Usage("copy buffers missing".into()))?;
                let (src, dst, len) = (ptr(&c.src, s), ptr(&c.dst, s), c.src.len());
                let mut op = || timing::copy_d2d(s, dst, src, len);
                self.timer.run_batch(s, count, stamps, &mut op)
            }
        }
    }

    /// The copy's two buffers for `bytes`, allocated on first use for that size; the source
    /// is written once so the timed copies read initialised memory.
    fn copy_buffers(&mut self, bytes: u64) -> Result<(), CudaError> {
        if bytes == 0 {
            return Err(CudaError::Usage("copy of 0 bytes".into()));
        }
        if self
            .copy
            .as_ref()
            .is_some_and(|c| c.src.len() as u64 == bytes)
        {
            return Ok(());
        }
        self.copy = None;
        self.check_free(2 * bytes, &format!("copy needs 2 x {bytes} bytes"))?;
        let len = usize::try_from(bytes)
            .map_err(|_| CudaError::TooLarge(format!("{bytes} bytes do not fit usize")))?;
        let src = self.alloc::<u8>(len)?;
        let dst = self.alloc::<u8>(len)?;
        timing::memset_d8(&self.stream, ptr(&src, &self.stream), 0, len)?;
        self.synchronize()?;
        self.copy = Some(CopyBuffers { src, dst });
        Ok(())
    }
}

impl Backend for CudaBackend {
    fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }

    fn limits(&self) -> &Limits {
        &self.limits
    }

    fn kernel_facts(&self) -> &KernelFacts {
        match self.variant {
            KernelVariant::GridStride => &self.kernels.grid_stride_facts,
            KernelVariant::OnePixelPerThread => &self.kernels.one_per_thread_facts,
        }
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
        self.bind()?;
        Ok(module::residency(self.function(), block.threads())?)
    }

    fn occupancy_suggestion(&mut self) -> BackendResult<Option<OccupancySuggestion>> {
        self.bind()?;
        Ok(Some(module::suggestion(self.function())?))
    }

    fn poison_output(&mut self) -> BackendResult<()> {
        self.bind()?;
        let planes = self.planes()?;
        // upload checked that the pixel count fits usize.
        let len = planes.pixels as usize;
        timing::memset_d32(
            &self.stream,
            ptr(&planes.out, &self.stream),
            POISON_BITS,
            len,
        )?;
        Ok(self.synchronize()?)
    }

    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        Ok(self.batch(work, count, stamps)?)
    }

    fn read_output(&mut self, out: &mut [f32]) -> BackendResult<()> {
        self.bind()?;
        let planes = self.planes()?;
        if out.len() as u64 != planes.pixels {
            return Err(CudaError::Usage(format!(
                "read_output into {} floats; the frame has {} pixels",
                out.len(),
                planes.pixels
            ))
            .into());
        }
        self.stream
            .memcpy_dtoh(&planes.out, out)
            .map_err(|e| map_driver("cuMemcpyDtoHAsync_v2", e))?;
        Ok(self.synchronize()?)
    }

    fn copy_method(&self) -> String {
        "cuMemcpyDtoDAsync, timed with CUDA events".into()
    }

    fn set_kernel(&mut self, variant: KernelVariant) -> BackendResult<()> {
        self.variant = variant;
        Ok(())
    }
}
