//! `VulkanBackend`: one device and the program loaded on it (a user's kernel or a built-in),
//! implementing the core's `Backend`.

use std::sync::Arc;

use ash::vk;
use blocksweep_core::{
    trace, Backend, BackendResult, BatchTimes, BlockSize, DeviceIdentity, Fill, KernelFacts,
    KernelVariant, Limits, ProgramArg, ProgramSource, Residency, Stamps, TimerInfo, Work,
};

use crate::cold::{self, Scratch};
use crate::command::Commands;
use crate::context::DeviceContext;
use crate::copy::{Copier, CopyLimits};
use crate::device::{self, AdapterInfo};
use crate::error::{VulkanError, VulkanResult};
use crate::instance::{InstanceShared, MessageLog};
use crate::memory::{self, Staging};
use crate::program::{self, Program};
use crate::timing::{self, DispatchLimits, Timestamps};

/// One Vulkan device, ready to load and run programs.
///
/// Field order is drop order: everything that records or binds goes before the device, and
/// the device (through its `Arc`) before the instance.
pub struct VulkanBackend {
    /// The program last loaded: the current kernel.
    program: Option<Program>,
    /// What the program's host copies go through, and `read_buffer_staged` lends.
    staging: Staging,
    /// What `--cold`'s flushes write, kept while the size stays.
    scratch: Option<Scratch>,
    commands: Commands,
    timestamps: Timestamps,
    copier: Copier,
    device: Arc<DeviceContext>,
    identity: DeviceIdentity,
    limits: Limits,
    dispatch_limits: DispatchLimits,
    /// Loop iterations the driver runs per invocation before cutting the loop (llvmpipe).
    max_loop_iterations: Option<u64>,
    /// What `kernel_facts` says with no program loaded: nothing.
    no_facts: KernelFacts,
    /// maxComputeSharedMemorySize.
    max_shared: u32,
    /// maxPushConstantsSize.
    max_push_bytes: u32,
    driver: String,
    timer: TimerInfo,
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
                "{} supports Vulkan {} (instance {}); the shaders here target Vulkan 1.1",
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
        let driver = adapter.driver_name.clone();
        let driver = driver.unwrap_or_else(|| identity.driver_version.clone());
        // The copy ceiling's shader, so that `open` fails if it cannot build; the kernels are
        // programs, built when the core loads them.
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
            program: None,
            staging: Staging::default(),
            scratch: None,
            commands,
            timestamps,
            copier,
            device,
            identity,
            limits,
            dispatch_limits,
            max_loop_iterations: adapter.max_loop_iterations(),
            no_facts: KernelFacts::default(),
            max_shared: adapter.properties.limits.max_compute_shared_memory_size,
            max_push_bytes: adapter.properties.limits.max_push_constants_size,
            driver,
            timer: timing::timer(family, valid_bits, period),
            log,
        })
    }

    fn batch(&mut self, work: Work, count: u32, stamps: Stamps) -> VulkanResult<BatchTimes> {
        match work {
            Work::Kernel(launch) => {
                let p = self.program.as_mut().ok_or_else(no_program)?;
                let (commands, timestamps) = (&mut self.commands, &mut self.timestamps);
                let run = (launch, count, stamps);
                p.run_batch(commands, timestamps, &self.dispatch_limits, run)
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

    /// `count` runs of `work`, each after a fill of the scratch buffer of `flush_bytes`
    /// ([`cold::flushed_batch`]).
    fn flushed(&mut self, work: Work, count: u32, flush_bytes: u64) -> VulkanResult<BatchTimes> {
        let max_alloc = self.limits.max_alloc_bytes.as_ref();
        let scratch = Scratch::sized(self.scratch.take(), &self.device, flush_bytes, max_alloc)?;
        let scratch = &*self.scratch.insert(scratch);
        let (commands, timestamps) = (&mut self.commands, &mut self.timestamps);
        match work {
            Work::Kernel(launch) => {
                let p = self.program.as_mut().ok_or_else(no_program)?;
                let record = p.recorder(launch, &self.dispatch_limits)?;
                cold::flushed_batch(timestamps, commands, scratch, count, record)
            }
            Work::Copy { bytes } => {
                let (device, limits) = (&self.device, &self.limits);
                self.copier
                    .prepare_size(commands, timestamps, device, limits, bytes)?;
                let copier = &self.copier;
                let record = |d: &ash::Device, cb| copier.record(d, cb);
                cold::flushed_batch(timestamps, commands, scratch, count, record)
            }
        }
    }

    /// The kernel's part of argument `arg`'s buffer, staged and lent (`read_buffer_staged`).
    fn read_staged(&mut self, arg: usize) -> VulkanResult<Option<&[u8]>> {
        let p = self.program.as_ref().ok_or_else(no_program)?;
        let Some(part) = p.kernel_part(arg)? else {
            return Ok(None);
        };
        let max_alloc = self.limits.max_alloc_bytes.as_ref();
        let staging = self
            .staging
            .of(&self.device, p.staging_bytes(), max_alloc)?;
        memory::read_in_place(staging, &mut self.commands, part)
    }
}

#[path = "inspect.rs"]
mod inspect;

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
            std::mem::forget(self.program.take());
            std::mem::forget(std::mem::take(&mut self.staging));
            std::mem::forget(self.scratch.take());
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

    /// The loaded program's facts; nothing before the first.
    fn kernel_facts(&self) -> &KernelFacts {
        self.program.as_ref().map_or(&self.no_facts, |p| &p.facts)
    }

    fn timer(&self) -> TimerInfo {
        self.timer.clone()
    }

    /// Vulkan has no occupancy query: the core models residency from `limits.mp_model`.
    fn residency(&mut self, _block: BlockSize) -> BackendResult<Option<Residency>> {
        Ok(None)
    }

    /// Builds the pipelines of a sweep's workgroup sizes in parallel before its first row.
    fn prepare(&mut self, blocks: &[BlockSize]) {
        if let Some(p) = self.program.as_mut() {
            p.prepare(blocks, &self.dispatch_limits);
        }
    }

    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        Ok(self.batch(work, count, stamps)?)
    }

    fn run_batch_flushed(
        &mut self,
        work: Work,
        count: u32,
        flush_bytes: u64,
    ) -> BackendResult<BatchTimes> {
        Ok(self.flushed(work, count, flush_bytes)?)
    }

    fn copy_method(&self) -> String {
        self.copier.describe()
    }

    fn diagnostics(&self) -> Vec<String> {
        self.validation_messages()
    }

    /// The built-in's SPIR-V, embedded (shaders/<kernel>.spv).
    fn builtin(&self, kernel: KernelVariant) -> Option<ProgramSource> {
        Some(crate::builtin::source(kernel))
    }

    /// Rewrites the scalar's bytes in the program's push-constant block; the next batch
    /// pushes them.
    fn set_scalar(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        let p = self.program.as_mut().ok_or_else(no_program)?;
        Ok(p.set_scalar(arg, bytes)?)
    }

    /// Lends the persistently mapped staging buffer after the copy into it, where its memory
    /// is HOST_CACHED.
    fn read_buffer_staged(&mut self, arg: usize) -> BackendResult<Option<&[u8]>> {
        Ok(self.read_staged(arg)?)
    }

    /// The program with its buffers and the staging buffer freed (nothing of them is pending
    /// after a batch has been waited for); the device stays.
    fn release(&mut self) -> BackendResult<()> {
        self.program = None;
        self.staging = Default::default();
        self.scratch = None;
        Ok(())
    }

    /// Builds the program (GLSL through libshaderc, or SPIR-V as given), checks its bindings
    /// against `args`, and makes it current. Its batches and copies then wait no longer than
    /// the core's deadline, the built-ins' as a user's kernel's (one policy on every API).
    fn load_program(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> BackendResult<()> {
        let _t = trace::span("vulkan", "load_program");
        self.commands.usable()?;
        // The old program (and its buffers) first: nothing of it is pending.
        self.program = None;
        let device = program::Device {
            context: &self.device,
            dispatch: &self.dispatch_limits,
            max_range: self.limits.max_buffer_binding_bytes.as_ref(),
            max_alloc: self.limits.max_alloc_bytes.as_ref(),
            piece: self.limits.frame_piece_bytes.as_ref(),
            heap: self.limits.global_mem_bytes.as_ref(),
            max_push_bytes: self.max_push_bytes,
            max_shared: self.max_shared,
            driver: &self.driver,
            max_loop_iterations: self.max_loop_iterations,
        };
        let p = Program::load(&device, source, args)?;
        self.commands
            .set_timeout(Some(blocksweep_core::program::deadline()));
        self.program = Some(p);
        Ok(())
    }

    fn write_buffer(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        let p = self.program.as_ref().ok_or_else(no_program)?;
        let max_alloc = self.limits.max_alloc_bytes.as_ref();
        let staging = self
            .staging
            .of(&self.device, p.staging_bytes(), max_alloc)?;
        Ok(p.write((&mut self.commands, staging), arg, bytes)?)
    }

    fn fill_buffer(&mut self, arg: usize, fills: &[Fill]) -> BackendResult<bool> {
        let p = self.program.as_mut().ok_or_else(no_program)?;
        Ok(p.fill(&mut self.commands, arg, fills)?)
    }

    fn read_buffer(&mut self, arg: usize, offset: u64, out: &mut [u8]) -> BackendResult<()> {
        let p = self.program.as_ref().ok_or_else(no_program)?;
        let max_alloc = self.limits.max_alloc_bytes.as_ref();
        let staging = self
            .staging
            .of(&self.device, p.staging_bytes(), max_alloc)?;
        Ok(p.read((&mut self.commands, staging), arg, offset, out)?)
    }
}
