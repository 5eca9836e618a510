//! Device-clock timing with CUDA events, and the operations it times: the kernel launch and
//! the device-to-device copy.
//!
//! One stream carries everything. Each timed operation is bracketed by its own pair of event
//! records on that stream and waited for before the next starts, like the seed's harness. The
//! context's per-buffer event tracking is off (see `backend::open`), so nothing but our two
//! records and the operation itself lands inside the timed region.

use std::ffi::c_void;
use std::sync::Arc;

use blocksweep_core::BlockSize;
use cudarc::driver::sys::{self, CUdeviceptr, CUevent_flags};
use cudarc::driver::{result, CudaContext, CudaEvent, CudaFunction, CudaStream};

use crate::error::{map_driver, map_launch, CudaError};

/// "cuEventElapsedTime ... has a resolution of around 0.5 microseconds" (CUDA Driver API,
/// cuEventElapsedTime).
pub const EVENT_RESOLUTION_NS: f64 = 500.0;
pub const EVENT_RESOLUTION_SOURCE: &str =
    "cuEventElapsedTime (\"resolution of around 0.5 microseconds\", CUDA Driver API docs)";
pub const TIMER_METHOD: &str = "CUDA events (cuEventRecord / cuEventElapsedTime)";

/// A start/end pair of timing-enabled events.
pub(crate) struct EventTimer {
    start: CudaEvent,
    end: CudaEvent,
}

impl EventTimer {
    pub(crate) fn new(ctx: &Arc<CudaContext>) -> Result<Self, CudaError> {
        // CU_EVENT_DEFAULT: cudarc's `None` would mean CU_EVENT_DISABLE_TIMING.
        let event = || {
            ctx.new_event(Some(CUevent_flags::CU_EVENT_DEFAULT))
                .map_err(|e| map_driver("cuEventCreate", e))
        };
        Ok(EventTimer {
            start: event()?,
            end: event()?,
        })
    }

    /// Runs `op` between two event records and waits for it; returns the device time in ms.
    fn time(
        &self,
        stream: &CudaStream,
        op: &mut dyn FnMut() -> Result<(), CudaError>,
    ) -> Result<f64, CudaError> {
        self.start
            .record(stream)
            .map_err(|e| map_driver("cuEventRecord", e))?;
        op()?;
        self.end
            .record(stream)
            .map_err(|e| map_driver("cuEventRecord", e))?;
        self.end
            .synchronize()
            .map_err(|e| map_driver("cuEventSynchronize", e))?;
        let ms = self
            .start
            .elapsed_ms(&self.end)
            .map_err(|e| map_driver("cuEventElapsedTime_v2", e))?;
        Ok(ms as f64)
    }

    /// `warmups` untimed runs of `op`, then `reps` timed ones; every run finishes on the
    /// device before the next is issued.
    pub(crate) fn run(
        &self,
        stream: &CudaStream,
        warmups: u32,
        reps: u32,
        op: &mut dyn FnMut() -> Result<(), CudaError>,
    ) -> Result<Vec<f64>, CudaError> {
        for _ in 0..warmups {
            op()?;
            stream
                .synchronize()
                .map_err(|e| map_driver("cuStreamSynchronize", e))?;
        }
        (0..reps).map(|_| self.time(stream, op)).collect()
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

/// Issues one `cuLaunchKernel` of `func` with a (x, y, z) block and a 1-D grid.
///
/// Nothing is checked here on purpose: the core skips blocks over the device limits before
/// asking, and a block it does send (`--blocks 2048`, a limit it does not know) should meet the
/// driver's own refusal, reported as LaunchRejected with the CUDA error name.
pub(crate) fn launch(
    func: &CudaFunction,
    stream: &CudaStream,
    block: BlockSize,
    grid: u32,
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
            (grid, 1, 1),
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
