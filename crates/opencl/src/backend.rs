//! `OpenClBackend`: the core's `Backend` trait over one device's context (`context`), its built
//! kernels (`kernel`), a user's kernel (`program`), the frame's planes and the copy buffers
//! (`memory`), and the timed batches (`timing`).

use blocksweep_core::Fill;
use blocksweep_core::{
    Backend, BackendResult, BatchTimes, BlockSize, DeviceIdentity, Frame, KernelFacts,
    KernelVariant, Launch, Limits, ProgramArg, ProgramSource, Residency, Stamps, TimerInfo, Work,
};

use std::mem::ManuallyDrop;

use crate::context::DeviceContext;
use crate::device::{self, DeviceEntry};
use crate::error::OpenClError;
use crate::handles::DeviceId;
use crate::kernel::Kernels;
use crate::memory::{CopyBuffers, Planes};
use crate::program::UserProgram;
use crate::timing;
use crate::OpenClOptions;

/// One OpenCL device with the grayscale kernels built for it: the grid-stride one at open,
/// each other the first time `set_kernel` selects it; and a user's kernel once loaded.
pub struct OpenClBackend {
    // Declaration order is drop order: buffers and kernels go before the queue and the context
    // that they belong to.
    planes: Option<Planes>,
    copy: Option<CopyBuffers>,
    program: Option<UserProgram>,
    /// Released in `Drop` unless a command missed its deadline: NVIDIA's release of a kernel
    /// waits for the running one (seen on the H200: 2.5 s, the rest of the abandoned kernel).
    kernels: ManuallyDrop<Kernels>,
    context: DeviceContext,
    identity: DeviceIdentity,
    limits: Limits,
    variant: KernelVariant,
    /// Whether dispatches run the user's kernel (since `load_program`) or `variant`.
    program_current: bool,
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
        let kernels = Kernels::build(
            &context,
            &entry.platform_name,
            nvidia,
            &options.extra_build_options,
        )?;
        // Without NVIDIA's warp size, the kernel's preferred work-group multiple is OpenCL's
        // nearest thing to a SIMD width (PoCL: its vector width; AMD: the wavefront).
        if limits.warp_size.is_none() {
            limits.warp_size = kernels
                .facts(KernelVariant::GridStride)
                .preferred_multiple
                .clone()
                .filter(|m| m.value.is_power_of_two());
        }
        Ok(OpenClBackend {
            planes: None,
            copy: None,
            kernels: ManuallyDrop::new(kernels),
            context,
            identity,
            limits,
            variant: KernelVariant::GridStride,
            program: None,
            program_current: false,
            unusable: None,
        })
    }

    /// The device's CL_PROGRAM_BUILD_LOG for the grid-stride kernel's program (ptxas's report
    /// on NVIDIA).
    pub fn build_log(&self) -> &str {
        self.kernels.build_log()
    }

    fn planes(&self, what: &str) -> Result<&Planes, OpenClError> {
        self.planes.as_ref().ok_or_else(|| {
            OpenClError::Usage(format!("{what} before upload(): no frame on the device"))
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
    /// queue, the context, the planes' mapped copy (whose unmap is queued behind it) and the
    /// buffers the command may still be using.
    fn check_deadline<T>(&mut self, r: Result<T, OpenClError>) -> Result<T, OpenClError> {
        if let Err(e @ OpenClError::Deadline { .. }) = &r {
            self.unusable = Some(format!("{e}; it may still be running"));
            std::mem::forget(self.planes.take());
            std::mem::forget(self.program.take());
            std::mem::forget(self.copy.take());
            self.context.abandon();
        }
        r
    }

    /// The user's kernel, for a call that needs one.
    fn program(&self, call: &str) -> Result<&UserProgram, OpenClError> {
        self.program.as_ref().ok_or_else(|| {
            OpenClError::Usage(format!(
                "{call} with no user kernel: load_program was not called, or it failed"
            ))
        })
    }

    /// `count` runs of the current kernel, built-in or the user's (under the deadline).
    fn kernel_batch(
        &self,
        launch: Launch,
        count: u32,
        stamps: Stamps,
    ) -> Result<BatchTimes, OpenClError> {
        if self.program_current {
            let program = self.program("run_batch")?;
            program.size_locals(launch)?;
            let deadline = Some(blocksweep_core::program::deadline());
            return timing::kernel_batch(
                &self.context,
                program.kernel(),
                launch,
                count,
                stamps,
                deadline,
            );
        }
        self.planes("run_batch")?;
        if self.variant == KernelVariant::SharedProbe {
            self.kernels.size_shared(launch.shared_bytes)?;
        }
        let kernel = self.kernels.get(self.variant)?;
        timing::kernel_batch(&self.context, kernel, launch, count, stamps, None)
    }

    /// The copy's buffers for `bytes`, allocated on first use and kept while the size stays.
    fn copy_buffers(&mut self, bytes: u64) -> Result<(), OpenClError> {
        if self.copy.as_ref().is_none_or(|c| c.bytes != bytes) {
            self.copy = None;
            self.copy = Some(CopyBuffers::new(&self.context, bytes)?);
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
        match (&self.program, self.program_current) {
            (Some(p), true) => p.facts(),
            _ => self.kernels.facts(self.variant),
        }
    }

    fn timer(&self) -> TimerInfo {
        timing::timer(&self.limits)
    }

    fn upload(&mut self, frame: &Frame) -> BackendResult<()> {
        let _t = blocksweep_core::trace::span("opencl", "upload");
        self.usable()?;
        // Free the previous frame's planes before asking for the new ones.
        self.planes = None;
        self.planes = Some(Planes::upload(&self.context, frame)?);
        self.kernels.bind(self.planes("upload")?)?;
        Ok(())
    }

    fn residency(&mut self, _block: BlockSize) -> BackendResult<Option<Residency>> {
        self.usable()?;
        // OpenCL has no occupancy query; the core models it from limits.mp_model.
        Ok(None)
    }

    fn poison_output(&mut self) -> BackendResult<()> {
        self.usable()?;
        Ok(self.planes("poison_output")?.poison(&self.context)?)
    }

    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        self.usable()?;
        Ok(match work {
            Work::Kernel(launch) => {
                let r = self.kernel_batch(launch, count, stamps);
                self.check_deadline(r)?
            }
            Work::Copy { bytes } => {
                self.copy_buffers(bytes)?;
                let buffers = self.copy.as_ref().ok_or_else(|| {
                    OpenClError::Usage("copy buffers missing after allocation".into())
                })?;
                timing::copy_batch(&self.context, buffers, count, stamps)?
            }
        })
    }

    fn read_output(&mut self, out: &mut [f32]) -> BackendResult<()> {
        self.usable()?;
        Ok(self
            .planes("read_output")?
            .read_output(&self.context, out)?)
    }

    /// Reads into a mapped CL_MEM_ALLOC_HOST_PTR buffer kept with the frame's planes.
    fn read_output_staged(&mut self) -> BackendResult<Option<&[f32]>> {
        self.usable()?;
        let planes = self.planes.as_mut().ok_or_else(|| {
            OpenClError::Usage("read_output_staged before upload(): no frame on the device".into())
        })?;
        Ok(planes.read_output_staged(&self.context)?)
    }

    fn copy_method(&self) -> String {
        "clEnqueueCopyBuffer, timed with profiling events".into()
    }

    /// Selects `variant`; the first time, builds its program (a build failure is returned
    /// here, the selection unchanged). With a frame up, binds the kernel to its planes again:
    /// cheap, and right however the kernel came to be built.
    /// The user's kernel stays loaded (its buffers readable) until the next load_program.
    fn set_kernel(&mut self, variant: KernelVariant) -> BackendResult<()> {
        self.usable()?;
        self.kernels.ensure(&self.context, variant)?;
        if let Some(planes) = &self.planes {
            self.kernels.bind_one(variant, planes)?;
        }
        self.variant = variant;
        self.program_current = false;
        Ok(())
    }

    /// Frees the previous user kernel and its buffers first. The new one is current even if
    /// it fails to load: dispatches then fail too, rather than run another kernel.
    fn load_program(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> BackendResult<()> {
        let _t = blocksweep_core::trace::span("opencl", "load_program");
        self.usable()?;
        self.program = None;
        self.program_current = true;
        let (nvidia, compiled_by) = (self.kernels.nvidia(), self.kernels.compiled_by());
        let program = UserProgram::load(&self.context, nvidia, compiled_by, source, args)?;
        self.program = Some(program);
        Ok(())
    }

    fn write_buffer(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        self.usable()?;
        Ok(self
            .program("write_buffer")?
            .write(&self.context.queue, arg, bytes)?)
    }

    fn fill_buffer(&mut self, arg: usize, fills: &[Fill]) -> BackendResult<bool> {
        self.usable()?;
        let queue = &self.context.queue;
        self.program("fill_buffer")?.fill(queue, arg, fills)?;
        Ok(true)
    }

    fn read_buffer(&mut self, arg: usize, offset: u64, out: &mut [u8]) -> BackendResult<()> {
        self.usable()?;
        Ok(self
            .program("read_buffer")?
            .read(&self.context.queue, arg, offset, out)?)
    }
}

impl Drop for OpenClBackend {
    fn drop(&mut self) {
        if self.unusable.is_none() {
            // SAFETY: dropped once, here, and never used after.
            unsafe { ManuallyDrop::drop(&mut self.kernels) }
        }
    }
}
