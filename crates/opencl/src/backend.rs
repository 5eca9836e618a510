//! `OpenClBackend`: one device, its context and profiling queue, the built program, and the
//! frame's four planes, behind the core's `Backend` trait.

use std::ffi::c_void;
use std::ptr;

use blocksweep_core::{
    Backend, BackendResult, BlockSize, DeviceIdentity, Frame, KernelFacts, KernelVariant, Launch,
    Limits, Named, Residency, TimerInfo,
};
use opencl3::context::context::create_context;
use opencl3::kernel::set_kernel_arg;
use opencl3::memory::{CL_MEM_READ_ONLY, CL_MEM_READ_WRITE};
use opencl3::types::{cl_mem, cl_uint, cl_ulong};

use crate::device::{self, DeviceEntry};
use crate::error::{call, OpenClError};
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

/// One OpenCL device with the grayscale program built for it.
pub struct OpenClBackend {
    // Declaration order is drop order: buffers and kernels go before the program, the queue
    // and the context that they belong to.
    planes: Option<Planes>,
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
        .map_err(call("clCreateContext"))?;
    Ok(Context::from_raw(raw))
}

/// Refuses a frame whose planes the device cannot hold, before anything is allocated: each of
/// the four f32 planes must fit CL_DEVICE_MAX_MEM_ALLOC_SIZE, and all four together
/// CL_DEVICE_GLOBAL_MEM_SIZE.
pub fn check_frame_fits(pixels: u64, limits: &Limits) -> Result<(), OpenClError> {
    let plane = pixels
        .checked_mul(4)
        .ok_or_else(|| OpenClError::OutOfMemory {
            detail: format!("a frame of {pixels} pixels needs more than 2^64 bytes per plane"),
        })?;
    check_buffers_fit(4, plane, "frame", limits)
}

/// `count` buffers of `bytes` bytes each against the allocation and total memory limits.
fn check_buffers_fit(
    count: u64,
    bytes: u64,
    what: &str,
    limits: &Limits,
) -> Result<(), OpenClError> {
    let refuse = |limit: &Named<u64>, need: String| OpenClError::OutOfMemory {
        detail: format!("{what} needs {need}; {} is {}", limit.name, limit.value),
    };
    if let Some(max) = limits.max_alloc_bytes.as_ref().filter(|m| bytes > m.value) {
        return Err(refuse(max, format!("{count} x {bytes} bytes")));
    }
    let total = bytes.saturating_mul(count);
    if let Some(global) = limits.global_mem_bytes.as_ref().filter(|g| total > g.value) {
        return Err(refuse(global, format!("{count} x {bytes} = {total} bytes")));
    }
    Ok(())
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
    .map_err(call("clSetKernelArg"))
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
        check_frame_fits(pixels, &self.limits)?;
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
        timing::fill(&self.queue, &p.out, f32::NAN, (p.pixels * 4) as usize)?;
        Ok(())
    }

    fn dispatch_timed(
        &mut self,
        launch: Launch,
        warmups: u32,
        reps: u32,
    ) -> BackendResult<Vec<f64>> {
        self.planes("dispatch_timed")?;
        let kernel = &self.kernels[variant_index(self.variant)];
        Ok(timing::dispatch_timed(
            &self.queue,
            kernel,
            launch,
            warmups,
            reps,
        )?)
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

    fn copy_timed(
        &mut self,
        bytes: u64,
        warmups: u32,
        reps: u32,
    ) -> BackendResult<Option<Vec<f64>>> {
        if bytes == 0 {
            return Err(OpenClError::Usage("copy_timed of 0 bytes".into()).into());
        }
        // The copy's two buffers come on top of the frame's four planes, if any.
        let mut limits = self.limits.clone();
        if let (Some(g), Some(p)) = (limits.global_mem_bytes.as_mut(), self.planes.as_ref()) {
            g.value = g.value.saturating_sub(4 * 4 * p.pixels);
        }
        check_buffers_fit(2, bytes, "copy", &limits)?;
        let times = timing::copy_timed(&self.context, &self.queue, bytes, warmups, reps)?;
        Ok(Some(times))
    }

    fn set_kernel(&mut self, variant: KernelVariant) -> BackendResult<()> {
        self.variant = variant;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_alloc: u64, global: u64) -> Limits {
        Limits {
            max_alloc_bytes: Some(Named::new(max_alloc, "CL_DEVICE_MAX_MEM_ALLOC_SIZE")),
            global_mem_bytes: Some(Named::new(global, "CL_DEVICE_GLOBAL_MEM_SIZE")),
            ..Limits::default()
        }
    }

    #[test]
    fn a_plane_above_max_alloc_is_refused_naming_the_limit() {
        // The seed's 4K frame: 8294400 pixels, 33177600 bytes per plane.
        let e = check_frame_fits(3840 * 2160, &limits(33_177_599, 1 << 40)).unwrap_err();
        assert_eq!(e.kind(), blocksweep_core::ErrorKind::OutOfMemory);
        assert_eq!(
            e.to_string(),
            "out of memory: frame needs 4 x 33177600 bytes; CL_DEVICE_MAX_MEM_ALLOC_SIZE is 33177599"
        );
        assert!(check_frame_fits(3840 * 2160, &limits(33_177_600, 1 << 40)).is_ok());
    }

    #[test]
    fn four_planes_above_global_memory_are_refused() {
        let e = check_frame_fits(1000, &limits(4000, 15_999)).unwrap_err();
        assert!(
            e.to_string()
                .contains("4 x 4000 = 16000 bytes; CL_DEVICE_GLOBAL_MEM_SIZE is 15999"),
            "{e}"
        );
        assert!(check_frame_fits(1000, &limits(4000, 16_000)).is_ok());
        assert!(check_frame_fits(u64::MAX, &limits(u64::MAX, u64::MAX)).is_err());
    }
}
