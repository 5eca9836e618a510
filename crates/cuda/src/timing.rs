//! Device-clock timing with CUDA events, and the operations it times: the kernel launch and
//! the device-to-device copy.
//!
//! One stream carries everything. A batch issues its launches back to back in stream order,
//! with event records around the batch or between launches, and the host waits once at the
//! end, like the seed's harness ("launches only inside the timed region"). The context's
//! per-buffer event tracking is off (see `backend::open`), so nothing but our records and
//! the operations themselves lands inside the timed region.

use std::ffi::c_void;
use std::sync::Arc;

use blocksweep_core::{BatchTimes, BlockSize, GridSize, Stamps};
use cudarc::driver::sys::{self, CUdeviceptr, CUevent_flags};
use cudarc::driver::{result, CudaContext, CudaEvent, CudaFunction, CudaStream};

use crate::error::{map_driver, map_launch, CudaError};

/// "cuEventElapsedTime ... has a resolution of around 0.5 microseconds" (CUDA Driver API,
/// cuEventElapsedTime).
pub const EVENT_RESOLUTION_NS: f64 = 500.0;
pub const EVENT_RESOLUTION_SOURCE: &str =
    "cuEventElapsedTime (\"resolution of around 0.5 microseconds\", CUDA Driver API docs)";
pub const TIMER_METHOD: &str = "CUDA events (cuEventRecord / cuEventElapsedTime)";

/// Timing-enabled events, grown to the largest batch asked for and reused.
pub(crate) struct EventTimer {
    ctx: Arc<CudaContext>,
    events: Vec<CudaEvent>,
}

impl EventTimer {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> Result<Self, CudaError> {
        let mut t = EventTimer {
            ctx: ctx.clone(),
            events: Vec::new(),
        };
        t.ensure(2)?;
        Ok(t)
    }

    fn ensure(&mut self, count: usize) -> Result<(), CudaError> {
        while self.events.len() < count {
            // CU_EVENT_DEFAULT: cudarc's `None` would mean CU_EVENT_DISABLE_TIMING.
            let e = self
                .ctx
                .new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| map_driver("cuEventCreate", e))?;
            self.events.push(e);
        }
        Ok(())
    }

    /// Issues `count` runs of `op` back to back on the stream (stream order runs each after
    /// the one before; the host does not wait between them) and waits once at the end.
    /// Events are recorded before the first and after the last run for [`Stamps::Batch`], and
    /// before the first and after every run for [`Stamps::Each`] (N + 1 events: run i's
    /// interval is from event i to event i + 1).
    pub(crate) fn run_batch(
        &mut self,
        stream: &CudaStream,
        count: u32,
        stamps: Stamps,
        op: &mut dyn FnMut() -> Result<(), CudaError>,
    ) -> Result<BatchTimes, CudaError> {
        let marks = match stamps {
            Stamps::None => 0,
            Stamps::Batch => 2,
            Stamps::Each => count as usize + 1,
        };
        self.ensure(marks)?;
        let record = |e: &CudaEvent| e.record(stream).map_err(|e| map_driver("cuEventRecord", e));
        if marks > 0 {
            record(&self.events[0])?;
        }
        for i in 0..count as usize {
            op()?;
            if stamps == Stamps::Each {
                record(&self.events[i + 1])?;
            }
        }
        if stamps == Stamps::Batch {
            record(&self.events[1])?;
        }
        stream
            .synchronize()
            .map_err(|e| map_driver("cuStreamSynchronize", e))?;
        let elapsed = |a: &CudaEvent, b: &CudaEvent| -> Result<f64, CudaError> {
            a.elapsed_ms(b)
                .map(f64::from)
                .map_err(|e| map_driver("cuEventElapsedTime", e))
        };
        let e = &self.events;
        Ok(match stamps {
            Stamps::None => BatchTimes::default(),
            Stamps::Batch => BatchTimes {
                batch_ms: Some(elapsed(&e[0], &e[1])?),
                each_ms: Vec::new(),
            },
            Stamps::Each => BatchTimes {
                batch_ms: None,
                each_ms: e[..marks]
                    .windows(2)
                    .map(|w| elapsed(&w[0], &w[1]))
                    .collect::<Result<_, _>>()?,
            },
        })
    }
}

/// The kernel's five arguments: r, g, b, out and the pixel count (size_t).
#[derive(Debug, Clone, Copy)]
pub(crate) struct KernelArgs {
    pub r: CUdeviceptr,
    pub g: CUdeviceptr,
    pub b: CUdeviceptr,
    pub out: CUdeviceptr,
    pub n: u64,
}

/// Issues one `cuLaunchKernel` of `func` with a (x, y, z) block and an (x, y) grid.
///
/// Nothing is checked here on purpose: the core skips blocks over the device limits before
/// asking, and a block it does send (`--blocks 2048`, a limit it does not know) should meet the
/// driver's own refusal, reported as LaunchRejected with the CUDA error name.
pub(crate) fn launch(
    func: &CudaFunction,
    stream: &CudaStream,
    block: BlockSize,
    grid: GridSize,
    args: KernelArgs,
) -> Result<(), CudaError> {
    let (mut r, mut g, mut b, mut out, mut n) = (args.r, args.g, args.b, args.out, args.n);
    let mut params: [*mut c_void; 5] = [
        (&mut r as *mut CUdeviceptr).cast(),
        (&mut g as *mut CUdeviceptr).cast(),
        (&mut b as *mut CUdeviceptr).cast(),
        (&mut out as *mut CUdeviceptr).cast(),
        (&mut n as *mut u64).cast(),
    ];
    // SAFETY: the function comes from a loaded module of this context; the five parameters
    // match the kernel's signature (three const float*, float*, size_t) and point at locals
    // that outlive the call (cuLaunchKernel copies them before returning); the pointers are
    // live allocations of `n` floats owned by the backend, which keeps them until the stream
    // has finished with them.
    unsafe {
        result::launch_kernel(
            func.cu_function(),
            (grid.x, grid.y, 1),
            (block.x, block.y, block.z),
            0,
            stream.cu_stream(),
            &mut params,
        )
    }
    .map_err(|e| map_launch(&format!("block {block} x grid {grid}"), e))
}

/// Fills `count` 32-bit words at `ptr` with `value` on the stream (cuMemsetD32Async).
pub(crate) fn memset_d32(
    stream: &CudaStream,
    ptr: CUdeviceptr,
    value: u32,
    count: usize,
) -> Result<(), CudaError> {
    // SAFETY: ptr is a live allocation of at least `count` 32-bit words on this context.
    unsafe { sys::cuMemsetD32Async(ptr, value, count, stream.cu_stream()) }
        .result()
        .map_err(|e| map_driver("cuMemsetD32Async", e))
}

/// Fills `count` bytes at `ptr` with `value` on the stream (cuMemsetD8Async).
pub(crate) fn memset_d8(
    stream: &CudaStream,
    ptr: CUdeviceptr,
    value: u8,
    count: usize,
) -> Result<(), CudaError> {
    // SAFETY: ptr is a live allocation of at least `count` bytes on this context.
    unsafe { result::memset_d8_async(ptr, value, count, stream.cu_stream()) }
        .map_err(|e| map_driver("cuMemsetD8Async", e))
}

/// Copies `bytes` from `src` to `dst` on the stream (cuMemcpyDtoDAsync).
pub(crate) fn copy_d2d(
    stream: &CudaStream,
    dst: CUdeviceptr,
    src: CUdeviceptr,
    bytes: usize,
) -> Result<(), CudaError> {
    // SAFETY: both are live, distinct allocations of at least `bytes` bytes on this context.
    unsafe { result::memcpy_dtod_async(dst, src, bytes, stream.cu_stream()) }
        .map_err(|e| map_driver("cuMemcpyDtoDAsync", e))
}
