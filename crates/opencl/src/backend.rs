//! `OpenClBackend`: the core's `Backend` trait over one device's context (`context`), its built
//! kernels (`kernel`), the frame's planes and the copy buffers (`memory`), and the timed batches
//! (`timing`).

use blocksweep_core::{
    Backend, BackendResult, BatchTimes, BlockSize, DeviceIdentity, Frame, KernelFacts,
    KernelVariant, Limits, Residency, Stamps, TimerInfo, Work,
};

use crate::context::DeviceContext;
use crate::device::{self, DeviceEntry};
use crate::error::OpenClError;
use crate::handles::DeviceId;
use crate::kernel::Kernels;
use crate::memory::{CopyBuffers, Planes};
use crate::timing;
use crate::OpenClOptions;

/// One OpenCL device with the grayscale kernels built for it: the grid-stride one at open,
/// each other the first time `set_kernel` selects it.
pub struct OpenClBackend {
    // Declaration order is drop order: buffers and kernels go before the queue and the context
    // that they belong to.
    planes: Option<Planes>,
    copy: Option<CopyBuffers>,
    kernels: Kernels,
    context: DeviceContext,
    identity: DeviceIdentity,
    limits: Limits,
    variant: KernelVariant,
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
                    device::limits(entry.device)?,
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
            kernels,
            context,
            identity,
            limits,
            variant: KernelVariant::GridStride,
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
        self.kernels.facts(self.variant)
    }

    fn timer(&self) -> TimerInfo {
        timing::timer(&self.limits)
    }

    fn upload(&mut self, frame: &Frame) -> BackendResult<()> {
        let _t = blocksweep_core::trace::span("opencl", "upload");
        // Free the previous frame's planes before asking for the new ones.
        self.planes = None;
        self.planes = Some(Planes::upload(&self.context, frame)?);
        self.kernels.bind(self.planes("upload")?)?;
        Ok(())
    }

    fn residency(&mut self, _block: BlockSize) -> BackendResult<Option<Residency>> {
        // OpenCL has no occupancy query; the core models it from limits.mp_model.
        Ok(None)
    }

    fn poison_output(&mut self) -> BackendResult<()> {
        Ok(self.planes("poison_output")?.poison(&self.context)?)
    }

    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        Ok(match work {
            Work::Kernel(launch) => {
                self.planes("run_batch")?;
                if self.variant == KernelVariant::SharedProbe {
                    self.kernels.size_shared(launch.shared_bytes)?;
                }
                let kernel = self.kernels.get(self.variant)?;
                timing::kernel_batch(&self.context, kernel, launch, count, stamps)?
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
        Ok(self
            .planes("read_output")?
            .read_output(&self.context, out)?)
    }

    /// Reads into a mapped CL_MEM_ALLOC_HOST_PTR buffer kept with the frame's planes.
    fn read_output_lent(&mut self) -> BackendResult<Option<&[f32]>> {
        let planes = self.planes.as_mut().ok_or_else(|| {
            OpenClError::Usage("read_output_lent before upload(): no frame on the device".into())
        })?;
        Ok(planes.read_output_lent(&self.context)?)
    }

    fn copy_method(&self) -> String {
        "clEnqueueCopyBuffer, timed with profiling events".into()
    }

    /// Selects `variant`; the first time, builds its program (a build failure is returned
    /// here, the selection unchanged). With a frame up, binds the kernel to its planes again:
    /// cheap, and right however the kernel came to be built.
    fn set_kernel(&mut self, variant: KernelVariant) -> BackendResult<()> {
        self.kernels.ensure(&self.context, variant)?;
        if let Some(planes) = &self.planes {
            self.kernels.bind_one(variant, planes)?;
        }
        self.variant = variant;
        Ok(())
    }
}
