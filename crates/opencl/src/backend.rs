//! `OpenClBackend`: one device, its context and profiling queue, the built program, and the
//! frame's four planes, behind the core's `Backend` trait.

use std::ffi::c_void;
use std::ptr;

use blocksweep_core::{
    Backend, BackendResult, BatchTimes, BlockSize, DeviceIdentity, Frame, KernelFacts,
    KernelVariant, Limits, Residency, Stamps, TimerInfo, Work,
};
use opencl3::context::context::create_context;
use opencl3::kernel::set_kernel_arg;
use opencl3::memory::{CL_MEM_READ_ONLY, CL_MEM_READ_WRITE};
use opencl3::types::{cl_mem, cl_uint, cl_ulong};

use crate::device::{self, DeviceEntry};
use crate::error::{map_create, OpenClError};
use crate::handles::{Context, DeviceId, Kernel, Mem, Program, Queue};
use crate::kernel::{self, ARG_PIXELS, KERNEL_SOURCE};
use crate::timing::{self, TIMER_METHOD};
use crate::OpenClOptions;

/// The four planes of one uploaded frame.
struct Planes {
    r: Mem,
    g: Mem,
    b: Mem,
    out: Mem,
    pixels: u64,
}

/// The two buffers of the copy ceiling, kept while the size stays the same.
struct CopyBuffers {
    src: Mem,
    dst: Mem,
    bytes: u64,
}

/// One OpenCL device with the grayscale program built for it.
pub struct OpenClBackend {
    // Declaration order is drop order: buffers and kernels go before the program, the queue
    // and the context that they belong to.
    planes: Option<Planes>,
    copy: Option<CopyBuffers>,
    /// Indexed by `variant_index`.
    kernels: [Kernel; 2],
    _program: Program,
    queue: Queue,
    context: Context,
    identity: DeviceIdentity,
    limits: Limits,
    facts: [KernelFacts; 2],
    variant: KernelVariant,
    build_log: String,
}

fn variant_index(v: KernelVariant) -> usize {
    match v {
        KernelVariant::GridStride => 0,
        KernelVariant::OnePixelPerThread => 1,
    }
}

const VARIANTS: [KernelVariant; 2] = [KernelVariant::GridStride, KernelVariant::OnePixelPerThread];

/// A single-device context on `device`.
pub(crate) fn context_for(device: DeviceId) -> Result<Context, OpenClError> {
    let raw = create_context(&[device.0], ptr::null(), None, ptr::null_mut())
        .map_err(map_create("clCreateContext"))?;
    Ok(Context::from_raw(raw))
}

fn set_arg<T>(kernel: &Kernel, index: cl_uint, value: &T) -> Result<(), OpenClError> {
    // SAFETY: `value` is a live T for the call and the driver copies its bytes; the
    // kernel's argument `index` has size_of::<T>() bytes (cl_mem or cl_ulong, see the source).
    unsafe {
        set_kernel_arg(
            kernel.raw(),
            index,
            std::mem::size_of::<T>(),
            (value as *const T).cast::<c_void>(),
        )
    }
    .map_err(map_create("clSetKernelArg"))
}

impl OpenClBackend {
    pub(crate) fn open(
        index: usize,
        entry: &DeviceEntry,
        options: &OpenClOptions,
    ) -> Result<Self, OpenClError> {
        let device = DeviceId(entry.device);
        let identity = device::identity(index, entry)?;
        let mut limits = device::limits(entry.device)?;
        let context = context_for(device)?;
        let queue = timing::create_queue(&context, device)?;
        // cl_nv_device_attribute_query is what marks NVIDIA's compiler (and its -cl-nv-verbose).
        let nvidia = limits.compute_capability.is_some();
        let opts = kernel::build_options(nvidia, &options.extra_build_options);
        let (program, build_log) = kernel::build(&context, device, KERNEL_SOURCE, &opts)?;
        let compiled_by = format!("clBuildProgram ({})", entry.platform_name);
        let kernels = [
            kernel::kernel(&program, kernel::entry_point(VARIANTS[0]))?,
            kernel::kernel(&program, kernel::entry_point(VARIANTS[1]))?,
        ];
        let mut facts = [KernelFacts::default(), KernelFacts::default()];
        for (i, v) in VARIANTS.iter().enumerate() {
            let entry_name = kernel::entry_point(*v);
            facts[i] = kernel::facts(
                &kernels[i],
                device,
                entry_name,
                &build_log,
                compiled_by.clone(),
                &opts,
            )?;
        }
        // Without NVIDIA's warp size, the kernel's preferred work-group multiple is OpenCL's
        // nearest thing to a SIMD width (PoCL: its vector width; AMD: the wavefront).
        if limits.warp_size.is_none() {
            limits.warp_size = facts[0]
                .preferred_multiple
                .clone()
                .filter(|m| m.value.is_power_of_two());
        }
        Ok(OpenClBackend {
            planes: None,
            copy: None,
            kernels,
            _program: program,
            queue,
            context,
            identity,
            limits,
            facts,
            variant: KernelVariant::GridStride,
            build_log,
        })
    }

    /// The device's CL_PROGRAM_BUILD_LOG for the grayscale program (ptxas's report on NVIDIA).
    pub fn build_log(&self) -> &str {
        &self.build_log
    }

    fn planes(&self, what: &str) -> Result<&Planes, OpenClError> {
        self.planes.as_ref().ok_or_else(|| {
            OpenClError::Usage(format!("{what} before upload(): no frame on the device"))
        })
    }

    /// The copy's buffers for `bytes`, allocated (and written once, so the timed copies read
    /// initialised memory and the driver commits the pages outside the timing) on first use.
    fn copy_buffers(&mut self, bytes: u64) -> Result<(), OpenClError> {
        if bytes == 0 {
            return Err(OpenClError::Usage("a copy of 0 bytes".into()));
        }
        if self.copy.as_ref().is_none_or(|c| c.bytes != bytes) {
            self.copy = None;
            let src = timing::alloc(&self.context, CL_MEM_READ_WRITE, bytes)?;
            let dst = timing::alloc(&self.context, CL_MEM_READ_WRITE, bytes)?;
            let words = (bytes as usize) / 4 * 4;
            if words > 0 {
                timing::fill(&self.queue, &src, 0.0, words)?;
                timing::fill(&self.queue, &dst, 0.0, words)?;
            }
            self.copy = Some(CopyBuffers { src, dst, bytes });
        }
        Ok(())
    }

    fn bind_arguments(&self) -> Result<(), OpenClError> {
        let p = self.planes("binding kernel arguments")?;
        let n: cl_ulong = p.pixels;
        for k in &self.kernels {
            for (i, m) in [&p.r, &p.g, &p.b, &p.out].into_iter().enumerate() {
                let raw: cl_mem = m.raw();
                set_arg(k, i as cl_uint, &raw)?;
            }
            set_arg(k, ARG_PIXELS, &n)?;
        }
        Ok(())
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
        &self.facts[variant_index(self.variant)]
    }

    fn timer(&self) -> TimerInfo {
        TimerInfo {
            method: TIMER_METHOD.into(),
            resolution_ns: self
                .limits
                .timer_resolution_ns
                .as_ref()
                .map_or(0.0, |r| r.value),
        }
    }

    fn upload(&mut self, frame: &Frame) -> BackendResult<()> {
        let pixels = frame.pixels();
        if [&frame.r, &frame.g, &frame.b]
            .iter()
            .any(|p| p.len() as u64 != pixels)
        {
            return Err(OpenClError::Usage(format!(
                "frame of {} x {} = {pixels} pixels has planes of {}, {} and {} values",
                frame.width,
                frame.height,
                frame.r.len(),
                frame.g.len(),
                frame.b.len()
            ))
            .into());
        }
        // Free the previous frame's planes before asking for the new ones.
        self.planes = None;
        let bytes = pixels * 4;
        let alloc = |flags| timing::alloc(&self.context, flags, bytes);
        let planes = Planes {
            r: alloc(CL_MEM_READ_ONLY)?,
            g: alloc(CL_MEM_READ_ONLY)?,
            b: alloc(CL_MEM_READ_ONLY)?,
            out: alloc(CL_MEM_READ_WRITE)?,
            pixels,
        };
        timing::write(&self.queue, &planes.r, &frame.r)?;
        timing::write(&self.queue, &planes.g, &frame.g)?;
        timing::write(&self.queue, &planes.b, &frame.b)?;
        self.planes = Some(planes);
        self.bind_arguments()?;
        Ok(())
    }

    fn residency(&mut self, _block: BlockSize) -> BackendResult<Option<Residency>> {
        // OpenCL has no occupancy query; the core models it from limits.mp_model.
        Ok(None)
    }

    fn poison_output(&mut self) -> BackendResult<()> {
        let p = self.planes("poison_output")?;
        let poison = f32::from_bits(blocksweep_core::verify::POISON_BITS);
        timing::fill(&self.queue, &p.out, poison, (p.pixels * 4) as usize)?;
        Ok(())
    }

    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        Ok(match work {
            Work::Kernel(launch) => {
                self.planes("run_batch")?;
                let kernel = &self.kernels[variant_index(self.variant)];
                let queue = &self.queue;
                timing::run_batch(count, stamps, "kernel", || {
                    timing::enqueue_kernel(queue, kernel, launch)
                })?
            }
            Work::Copy { bytes } => {
                self.copy_buffers(bytes)?;
                let (queue, buffers) = (
                    &self.queue,
                    self.copy.as_ref().ok_or_else(|| {
                        OpenClError::Usage("copy buffers missing after allocation".into())
                    })?,
                );
                let size = buffers.bytes as usize; // `alloc` checked that it fits size_t
                timing::run_batch(count, stamps, "copy", || {
                    timing::enqueue_copy(queue, &buffers.src, &buffers.dst, size)
                })?
            }
        })
    }

    fn read_output(&mut self, out: &mut [f32]) -> BackendResult<()> {
        let p = self.planes("read_output")?;
        if out.len() as u64 != p.pixels {
            return Err(OpenClError::Usage(format!(
                "read_output into {} pixels, but the frame on the device has {}",
                out.len(),
                p.pixels
            ))
            .into());
        }
        timing::read(&self.queue, &p.out, out)?;
        Ok(())
    }

    fn copy_method(&self) -> String {
        "clEnqueueCopyBuffer, timed with profiling events".into()
    }

    fn set_kernel(&mut self, variant: KernelVariant) -> BackendResult<()> {
        self.variant = variant;
        Ok(())
    }
}
