//! `run_batch`: back-to-back launches (or copies) timed with CUDA events, and the launch
//! itself.
//!
//! One stream carries everything. A batch issues its launches back to back in stream order,
//! with event records around the batch or between launches, and the host waits once at the
//! end, like the seed's harness ("launches only inside the timed region"). Nothing but our
//! records and the operations themselves lands inside the timed region: buffers are plain
//! allocations that record no events of their own.

use std::ffi::c_void;
use std::ptr;

use blocksweep_core::{BatchTimes, KernelVariant, Launch, Stamps};
use cudarc::driver::sys::{CUdeviceptr, CUevent, CUfunction};

use crate::context::Stream;
use crate::entry_points::cu;
use crate::error::{map_driver, map_launch, CudaError, OrMap};

/// "cuEventElapsedTime ... has a resolution of around 0.5 microseconds" (CUDA Driver API,
/// cuEventElapsedTime).
pub const EVENT_RESOLUTION_NS: f64 = 500.0;
pub const EVENT_RESOLUTION_SOURCE: &str =
    "cuEventElapsedTime (\"resolution of around 0.5 microseconds\", CUDA Driver API docs)";
pub const TIMER_METHOD: &str = "CUDA events (cuEventRecord / cuEventElapsedTime)";

/// `CU_EVENT_DEFAULT`: timing enabled, blocking sync off.
const EVENT_DEFAULT: u32 = 0;

/// A timing event of the current context, destroyed on drop.
struct Event {
    raw: CUevent,
}

// SAFETY: used from one thread at a time, with its context bound (see context.rs).
unsafe impl Send for Event {}

impl Event {
    fn new() -> Result<Event, CudaError> {
        let mut raw: CUevent = ptr::null_mut();
        // SAFETY: one pointer out; a context is current.
        unsafe { cu!(cuEventCreate(&mut raw, EVENT_DEFAULT)) }.or_map(map_driver)?;
        Ok(Event { raw })
    }

    fn record(&self, stream: &Stream) -> Result<(), CudaError> {
        // SAFETY: event and stream are live and of the same context.
        unsafe { cu!(cuEventRecord(self.raw, stream.raw())) }.or_map(map_driver)
    }

    /// Milliseconds from `self` to `end`, both recorded and complete.
    fn elapsed_ms(&self, end: &Event) -> Result<f64, CudaError> {
        let mut ms = 0f32;
        // SAFETY: one float out; both events are live. The unversioned entry point is the
        // CUDA 12.0 one (cuEventElapsedTime_v2 is 12.8+).
        unsafe { cu!(cuEventElapsedTime(&mut ms, self.raw, end.raw)) }.or_map(map_driver)?;
        Ok(f64::from(ms))
    }
}

impl Drop for Event {
    fn drop(&mut self) {
        // SAFETY: created by cuEventCreate and destroyed only here; a failure at teardown
        // cannot be acted on.
        let _ = unsafe { cu!(cuEventDestroy_v2(self.raw)) };
    }
}

/// Timing-enabled events, grown to the largest batch asked for and reused.
pub(crate) struct EventTimer {
    events: Vec<Event>,
}

impl EventTimer {
    pub(crate) fn new() -> Result<Self, CudaError> {
        let mut t = EventTimer { events: Vec::new() };
        t.ensure(2)?;
        Ok(t)
    }

    fn ensure(&mut self, count: usize) -> Result<(), CudaError> {
        while self.events.len() < count {
            self.events.push(Event::new()?);
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
        stream: &Stream,
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
        let e = &self.events;
        if marks > 0 {
            e[0].record(stream)?;
        }
        for i in 0..count as usize {
            op()?;
            if stamps == Stamps::Each {
                e[i + 1].record(stream)?;
            }
        }
        if stamps == Stamps::Batch {
            e[1].record(stream)?;
        }
        stream.synchronize()?;
        Ok(match stamps {
            Stamps::None => BatchTimes::default(),
            Stamps::Batch => BatchTimes {
                batch_ms: Some(e[0].elapsed_ms(&e[1])?),
                each_ms: Vec::new(),
            },
            Stamps::Each => BatchTimes {
                batch_ms: None,
                each_ms: e[..marks]
                    .windows(2)
                    .map(|w| w[0].elapsed_ms(&w[1]))
                    .collect::<Result<_, _>>()?,
            },
        })
    }
}

/// The kernels' arguments: r, g, b, out, then the pixel count (size_t) or, for the 2-D kernel,
/// the frame's width and height.
#[derive(Debug, Clone, Copy)]
pub(crate) struct KernelArgs {
    pub r: CUdeviceptr,
    pub g: CUdeviceptr,
    pub b: CUdeviceptr,
    pub out: CUdeviceptr,
    pub n: u64,
    pub width: u32,
    pub height: u32,
}

/// The register-heavy kernel's `salt`: 0, so its test never holds (kernels/grayscale.cu).
const SALT: u32 = 0;

/// Issues one `cuLaunchKernel` of `func` (the kernel of `variant`) with the launch's (x, y, z)
/// block, (x, y) grid and, for the shared-memory kernel, its dynamic shared memory.
///
/// Nothing is checked here on purpose: the core skips blocks over the device limits before
/// asking, and a launch it does send (`--blocks 2048`, more shared memory than a block may
/// have, a block the registers cannot hold) should meet the driver's own refusal, reported as
/// LaunchRejected with the CUDA error name.
pub(crate) fn launch(
    func: CUfunction,
    stream: &Stream,
    launch: Launch,
    variant: KernelVariant,
    args: KernelArgs,
) -> Result<(), CudaError> {
    let (block, grid) = (launch.block, launch.grid);
    let (mut r, mut g, mut b, mut out, mut n) = (args.r, args.g, args.b, args.out, args.n);
    let (mut width, mut height) = (args.width, args.height);
    let mut words = launch.shared_bytes / 4;
    let mut salt = SALT;
    let mut shared_bytes = 0;
    let ptrs: [*mut c_void; 4] = [
        (&mut r as *mut CUdeviceptr).cast(),
        (&mut g as *mut CUdeviceptr).cast(),
        (&mut b as *mut CUdeviceptr).cast(),
        (&mut out as *mut CUdeviceptr).cast(),
    ];
    let mut params: Vec<*mut c_void> = ptrs.to_vec();
    match variant {
        KernelVariant::GridStride | KernelVariant::OnePixelPerThread => {
            params.push((&mut n as *mut u64).cast());
        }
        KernelVariant::GridStride2D => {
            params.push((&mut width as *mut u32).cast());
            params.push((&mut height as *mut u32).cast());
        }
        KernelVariant::SharedProbe => {
            params.push((&mut n as *mut u64).cast());
            params.push((&mut words as *mut u32).cast());
            shared_bytes = launch.shared_bytes;
        }
        KernelVariant::RegisterHeavy => {
            params.push((&mut n as *mut u64).cast());
            params.push((&mut salt as *mut u32).cast());
        }
    }
    // SAFETY: the function comes from a loaded module of this context; the parameters match
    // the variant's signature in kernels/grayscale.cu (three const float*, float*, then
    // size_t n, or unsigned width and height, plus unsigned words or salt) and point at locals
    // that outlive the call (cuLaunchKernel copies them before returning); the pointers are
    // live allocations of `n` floats owned by the backend, which keeps them until the stream
    // has finished with them.
    unsafe {
        cu!(cuLaunchKernel(
            func,
            grid.x,
            grid.y,
            1,
            block.x,
            block.y,
            block.z,
            shared_bytes,
            stream.raw(),
            params.as_mut_ptr(),
            ptr::null_mut()
        ))
    }
    .map_err(|f| map_launch(&launch.to_string(), f.code))
}
