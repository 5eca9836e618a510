//! `VulkanBackend`: one device with the grayscale pipelines, implementing the core's `Backend`.

use blocksweep_core::Fill;
use std::sync::Arc;

use ash::vk;
use blocksweep_core::{
    trace, Backend, BackendResult, BatchTimes, BlockSize, DeviceIdentity, Frame, KernelFacts,
    KernelVariant, Limits, ProgramArg, ProgramSource, Residency, Stamps, TimerInfo, Work,
};

use crate::command::{self, Commands};
use crate::context::DeviceContext;
use crate::copy::{Copier, CopyLimits};
use crate::device::{self, AdapterInfo};
use crate::error::{VulkanError, VulkanResult};
use crate::instance::{InstanceShared, MessageLog};
use crate::kernel::{self, Pipelines};
use crate::memory::FramePlanes;
use crate::program::{self, Program};
use crate::timing::{
    self, check_launch, check_loop_iterations, check_loop_iterations_2d, check_shared,
    DispatchLimits, Timestamps,
};

/// One Vulkan device, ready to run the grayscale kernel.
///
/// Field order is drop order: everything that records or binds goes before the device, and
/// the device (through its `Arc`) before the instance.
pub struct VulkanBackend {
    frame: Option<FramePlanes>,
    /// The user's kernel last loaded; the current kernel while `program_current`.
    program: Option<Program>,
    program_current: bool,
    commands: Commands,
    timestamps: Timestamps,
    pipelines: Pipelines,
    copier: Copier,
    device: Arc<DeviceContext>,
    identity: DeviceIdentity,
    limits: Limits,
    dispatch_limits: DispatchLimits,
    /// Loop iterations the driver runs per invocation before cutting the loop (llvmpipe).
    max_loop_iterations: Option<u64>,
    /// Facts of each kernel variant built so far (the grid-stride kernel's at open, the
    /// others' when first selected).
    kernels: Vec<(KernelVariant, KernelFacts)>,
    /// maxComputeSharedMemorySize.
    max_shared: u32,
    /// maxPushConstantsSize.
    max_push_bytes: u32,
    /// The uploaded frame's width and height (the 2-D shader's push constants).
    frame_size: (u32, u32),
    driver: String,
    timer: TimerInfo,
    variant: KernelVariant,
    log: MessageLog,
}

impl VulkanBackend {
    pub(crate) fn new(
        instance: Arc<InstanceShared>,
        index: usize,
        adapter: AdapterInfo,
    ) -> VulkanResult<VulkanBackend> {
        let identity = device::identity(index, &adapter);
        if adapter.effective_version < vk::API_VERSION_1_1 {
            return Err(VulkanError::Unavailable(format!(
                "{} supports Vulkan {} (instance {}); shaders/grayscale.spv targets Vulkan 1.1",
                identity.name,
                identity.api_version,
                crate::conv::version_string(instance.api_version)
            )));
        }
        let family = adapter.compute_queue_family()?;
        let mut limits = adapter.limits(family);
        // Carried in the report, so its text and JSON say the layer was on.
        if let Some(v) = instance.validation() {
            limits.extra.push(("validation".into(), v));
        }
        let log = instance.log.clone();
        let device = trace::time("vulkan", "open: device", || {
            DeviceContext::new(instance, &adapter, family)
        })?;
        let device = Arc::new(device);
        let dispatch_limits = DispatchLimits::of(&adapter.properties.limits);
        let build = trace::span("vulkan", "open: build");
        let mut pipelines = Pipelines::new(&device)?;
        let driver = adapter.driver_name.clone();
        let driver = driver.unwrap_or_else(|| identity.driver_version.clone());
        let kernel = kernel::facts(
            &mut pipelines,
            &dispatch_limits,
            &driver,
            KernelVariant::GridStride,
        )?;
        // The copy ceiling's shader too, so that it also fails `open` if it cannot build.
        let copy_limits = CopyLimits::of(
            &adapter.properties.limits,
            adapter.sm_builtins.map(|(sms, _)| sms),
            adapter.max_loop_iterations(),
        );
        let copier = Copier::new(&device, copy_limits)?;
        build.end();
        let valid_bits = adapter.queue_families[family as usize].timestamp_valid_bits;
        let period = adapter.properties.limits.timestamp_period;
        let mut commands = Commands::new(&device)?;
        let timestamps = Timestamps::new(&device, &mut commands, valid_bits, period)?;
        Ok(VulkanBackend {
            frame: None,
            program: None,
            program_current: false,
            commands,
            timestamps,
            pipelines,
            copier,
            device,
            identity,
            limits,
            dispatch_limits,
            max_loop_iterations: adapter.max_loop_iterations(),
            kernels: vec![(KernelVariant::GridStride, kernel)],
            max_shared: adapter.properties.limits.max_compute_shared_memory_size,
            max_push_bytes: adapter.properties.limits.max_push_constants_size,
            frame_size: (0, 0),
            driver,
            timer: timing::timer(family, valid_bits, period),
            variant: KernelVariant::GridStride,
            log,
        })
    }

    fn frame(&self) -> VulkanResult<&FramePlanes> {
        self.frame.as_ref().ok_or_else(no_frame)
    }

    fn upload_frame(&mut self, frame: &Frame) -> VulkanResult<()> {
        let pixels = FramePlanes::pixels_of(frame)?;
        if !matches!(&self.frame, Some(f) if f.pixels == pixels) {
            // Free the old planes before allocating new ones; nothing is pending.
            self.frame = None;
            let max_alloc = self.limits.max_alloc_bytes.as_ref();
            let planes = FramePlanes::new(&self.device, pixels, max_alloc)?;
            self.pipelines.bind_planes(&planes.planes);
            self.frame = Some(planes);
        }
        let Some(f) = self.frame.as_mut() else {
            return Err(VulkanError::Usage(
                "frame planes missing after allocation".into(),
            ));
        };
        f.write(&mut self.commands, frame)?;
        self.frame_size = (frame.width, frame.height);
        Ok(())
    }

    fn batch(&mut self, work: Work, count: u32, stamps: Stamps) -> VulkanResult<BatchTimes> {
        match work {
            Work::Kernel(launch) if self.program_current => {
                let p = self.program.as_mut().ok_or_else(no_program)?;
                let (commands, timestamps) = (&mut self.commands, &mut self.timestamps);
                let run = (launch, count, stamps);
                p.run_batch(commands, timestamps, &self.dispatch_limits, run)
            }
            Work::Kernel(launch) => {
                check_launch(launch, &self.dispatch_limits)?;
                let variant = self.variant;
                if variant == KernelVariant::SharedProbe {
                    check_shared(launch, self.max_shared)?;
                }
                let pixels = self.frame()?.pixels;
                let (width, height) = self.frame_size;
                match variant {
                    KernelVariant::OnePixelPerThread => {}
                    KernelVariant::GridStride2D => check_loop_iterations_2d(
                        launch,
                        width.into(),
                        height.into(),
                        self.max_loop_iterations,
                    )?,
                    _ => check_loop_iterations(launch, pixels.into(), self.max_loop_iterations)?,
                }
                let pipeline = self
                    .pipelines
                    .get(launch.block, variant, launch.shared_bytes)?;
                // grayscale.comp and the shared-memory shader read the pixel count; the 2-D
                // shader the width and height; the register-heavy one the count and salt 0.
                let push = match variant {
                    KernelVariant::GridStride2D => [width, height],
                    _ => [pixels, 0],
                };
                let (layout, set) = (self.pipelines.layouts.pipeline, self.pipelines.set);
                let commands = &mut self.commands;
                self.timestamps.run_batch(commands, count, stamps, |d, cb| {
                    command::record_dispatch(d, cb, pipeline, layout, set, &push, launch.grid)
                })
            }
            Work::Copy { bytes } => {
                let (commands, timestamps) = (&mut self.commands, &mut self.timestamps);
                self.copier.prepare_size(
                    commands,
                    timestamps,
                    &self.device,
                    &self.limits,
                    bytes,
                )?;
                let copier = &self.copier;
                timestamps.run_batch(commands, count, stamps, |d, cb| copier.record(d, cb))
            }
        }
    }

    fn poison(&mut self) -> VulkanResult<()> {
        let f = self.frame.as_ref().ok_or_else(no_frame)?;
        f.poison(&mut self.commands)
    }

    fn read_back(&mut self, out: &mut [f32]) -> VulkanResult<()> {
        let f = self.frame.as_mut().ok_or_else(no_frame)?;
        f.read_output(&mut self.commands, out)
    }

    fn read_back_staged(&mut self) -> VulkanResult<Option<&[f32]>> {
        let f = self.frame.as_mut().ok_or_else(no_frame)?;
        f.read_output_staged(&mut self.commands)
    }
}

#[path = "inspect.rs"]
mod inspect;

fn no_frame() -> VulkanError {
    VulkanError::Usage("no frame uploaded: call upload first".into())
}

fn no_program() -> VulkanError {
    VulkanError::Usage("no program loaded: call load_program first".into())
}

impl Drop for VulkanBackend {
    fn drop(&mut self) {
        if self.commands.abandoned() {
            // A kernel missed its deadline and may never end: waiting for the device would
            // hang (lavapipe: 128 s), so the device and what it runs on are left to the
            // process's end (the buffers, still in its use, with it).
            std::mem::forget(self.device.clone());
            std::mem::forget(self.frame.take());
            std::mem::forget(self.program.take());
            return;
        }
        // Nothing may be destroyed while the device still uses it.
        if let Err(e) = self.device.wait_idle() {
            self.log.push(format!("drop: {e}"));
        }
    }
}

impl Backend for VulkanBackend {
    fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }

    fn limits(&self) -> &Limits {
        &self.limits
    }

    fn kernel_facts(&self) -> &KernelFacts {
        if let Some(p) = self.program.as_ref().filter(|_| self.program_current) {
            return &p.facts;
        }
        self.kernels
            .iter()
            .find(|(v, _)| *v == self.variant)
            .or(self.kernels.first())
            .map(|(_, f)| f)
            .expect("the grid-stride kernel's facts are built at open")
    }

    fn timer(&self) -> TimerInfo {
        self.timer.clone()
    }

    fn upload(&mut self, frame: &Frame) -> BackendResult<()> {
        let _t = trace::span("vulkan", "upload");
        Ok(self.upload_frame(frame)?)
    }

    /// Vulkan has no occupancy query: the core models residency from `limits.mp_model`.
    fn residency(&mut self, _block: BlockSize) -> BackendResult<Option<Residency>> {
        Ok(None)
    }

    /// Builds the pipelines of a sweep's workgroup sizes in parallel before its first row.
    fn prepare(&mut self, blocks: &[BlockSize]) {
        if let Some(p) = self.program.as_mut().filter(|_| self.program_current) {
            p.prepare(blocks, &self.dispatch_limits);
        } else if self.variant != KernelVariant::SharedProbe {
            self.pipelines
                .prepare(blocks, self.variant, &self.dispatch_limits);
        }
    }

    fn poison_output(&mut self) -> BackendResult<()> {
        Ok(self.poison()?)
    }

    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        Ok(self.batch(work, count, stamps)?)
    }

    fn read_output(&mut self, out: &mut [f32]) -> BackendResult<()> {
        Ok(self.read_back(out)?)
    }

    /// Lends the persistently mapped staging buffer after the copy into it, where its memory
    /// is HOST_CACHED.
    fn read_output_staged(&mut self) -> BackendResult<Option<&[f32]>> {
        Ok(self.read_back_staged()?)
    }

    fn copy_method(&self) -> String {
        self.copier.describe()
    }

    fn diagnostics(&self) -> Vec<String> {
        self.validation_messages()
    }

    /// Selects `variant`; the first time, builds one of its pipelines for its facts (a shader
    /// the driver cannot compile fails here).
    fn set_kernel(&mut self, variant: KernelVariant) -> BackendResult<()> {
        self.commands.usable()?;
        if !self.kernels.iter().any(|(v, _)| *v == variant) {
            let facts = kernel::facts(
                &mut self.pipelines,
                &self.dispatch_limits,
                &self.driver,
                variant,
            )?;
            self.kernels.push((variant, facts));
        }
        self.variant = variant;
        self.program_current = false;
        self.commands.set_timeout(None);
        Ok(())
    }

    /// Builds the program (GLSL through libshaderc, or SPIR-V as given), checks its bindings
    /// against `args`, and makes it current; its batches and copies then wait no longer than
    /// the core's deadline.
    fn load_program(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> BackendResult<()> {
        let _t = trace::span("vulkan", "load_program");
        self.commands.usable()?;
        // The old program (and its buffers) first: nothing of it is pending.
        self.program = None;
        self.program_current = false;
        let device = program::Device {
            context: &self.device,
            dispatch: &self.dispatch_limits,
            max_range: self.limits.max_buffer_binding_bytes.as_ref(),
            max_alloc: self.limits.max_alloc_bytes.as_ref(),
            max_push_bytes: self.max_push_bytes,
            max_shared: self.max_shared,
            driver: &self.driver,
            max_loop_iterations: self.max_loop_iterations,
        };
        self.program = Some(Program::load(&device, source, args)?);
        self.program_current = true;
        self.commands
            .set_timeout(Some(blocksweep_core::program::deadline()));
        Ok(())
    }

    fn write_buffer(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        let p = self.program.as_mut().ok_or_else(no_program)?;
        Ok(p.write(&mut self.commands, arg, bytes)?)
    }

    fn fill_buffer(&mut self, arg: usize, fills: &[Fill]) -> BackendResult<bool> {
        let p = self.program.as_mut().ok_or_else(no_program)?;
        Ok(p.fill(&mut self.commands, arg, fills)?)
    }

    fn read_buffer(&mut self, arg: usize, offset: u64, out: &mut [u8]) -> BackendResult<()> {
        let p = self.program.as_mut().ok_or_else(no_program)?;
        Ok(p.read(&mut self.commands, arg, offset, out)?)
    }
}
