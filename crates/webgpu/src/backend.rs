//! `WebGpuBackend`: the core's `Backend` trait over one device (`context`), the current
//! program (`program`: a user's kernel or a built-in one, `builtin`), the read-back and copy
//! buffers (`memory`), and the timed batches (`timing`).

use blocksweep_core::{
    Backend, BackendResult, BatchTimes, BlockSize, DeviceIdentity, Fill, KernelFacts,
    KernelVariant, Launch, Limits, ProgramArg, ProgramSource, Residency, Stamps, TimerInfo, Work,
};

use crate::context::DeviceContext;
use crate::error::{WebGpuError, WebGpuResult};
use crate::limits::{self, Sources};
use crate::memory::{CopyBuffers, Pattern, Readback};
use crate::program::UserProgram;
use crate::timing::{self, Dispatch, Timestamps};
use crate::WebGpuOptions;

/// One WebGPU device, and the program loaded on it once `load_program` has run.
pub struct WebGpuBackend {
    // Declaration order is drop order: buffers and pipelines before the device.
    program: Option<UserProgram>,
    copy: Option<CopyBuffers>,
    readback: Option<Readback>,
    timestamps: Option<Timestamps>,
    /// What `--cold`'s flushes clear, kept while the size stays.
    scratch: Option<wgpu::Buffer>,
    /// The fills' patterns, one per byte value, kept.
    patterns: Vec<Pattern>,
    context: DeviceContext,
    identity: DeviceIdentity,
    limits: Limits,
    no_facts: KernelFacts,
    /// Why the backend is unusable: a submission missed its deadline, or the device was lost.
    unusable: Option<String>,
}

impl WebGpuBackend {
    pub(crate) fn new(
        index: usize,
        adapter: wgpu::Adapter,
        options: &WebGpuOptions,
    ) -> WebGpuResult<Self> {
        let info = adapter.get_info();
        let context = DeviceContext::new(&adapter, options.limits)?;
        let limits = limits::limits(&Sources {
            device: &context.device.limits(),
            adapter: &adapter.limits(),
            info: &info,
            period_ns: context.period_ns,
            heap: crate::device::device_local_bytes(&adapter),
            choice: options.limits,
        });
        let mut timestamps = None;
        timing::warm(&context, &mut timestamps)?;
        Ok(WebGpuBackend {
            program: None,
            copy: None,
            readback: None,
            timestamps,
            scratch: None,
            patterns: Vec::new(),
            identity: crate::device::identity(index, &info),
            limits,
            context,
            no_facts: KernelFacts::default(),
            unusable: None,
        })
    }

    fn usable(&self) -> WebGpuResult<()> {
        match &self.unusable {
            Some(why) => Err(WebGpuError::Unusable(why.clone())),
            None => Ok(()),
        }
    }

    /// Marks the backend unusable after a missed deadline or a lost device, leaving what the
    /// device may still be using to the process's end.
    fn check<T>(&mut self, r: WebGpuResult<T>) -> WebGpuResult<T> {
        if let Err(e @ (WebGpuError::Deadline { .. } | WebGpuError::DeviceLost(_))) = &r {
            self.unusable = Some(format!("{e}; it may still be running"));
            std::mem::forget(self.program.take());
            std::mem::forget(self.copy.take());
        }
        r
    }

    fn batch(&mut self, work: Work, count: u32, stamps: Stamps) -> WebGpuResult<BatchTimes> {
        self.batch_with(work, (count, stamps), None)
    }

    /// `count` runs of `work` timed as `stamps` asks, each after a clear of the scratch buffer
    /// of `flush` bytes where there is one (`--cold`).
    fn batch_with(
        &mut self,
        work: Work,
        (count, stamps): (u32, Stamps),
        flush: Option<u64>,
    ) -> WebGpuResult<BatchTimes> {
        let deadline = Some(blocksweep_core::program::deadline());
        if let Some(bytes) = flush {
            let kept = self.scratch.take().filter(|s| s.size() == bytes);
            let scratch = match kept {
                Some(s) => s,
                None => crate::memory::scratch(&self.context, bytes)?,
            };
            self.scratch = Some(scratch);
        }
        let flush = self.scratch.as_ref().filter(|_| flush.is_some());
        match work {
            Work::Kernel(launch) => {
                self.check_launch(launch)?;
                let program = self
                    .program
                    .as_mut()
                    .ok_or_else(|| WebGpuError::Usage("run_batch: no program loaded".into()))?;
                let pipeline = program.pipeline(&self.context, launch)?;
                let d = Dispatch {
                    pipeline: &pipeline,
                    bind_group: &program.bind_group,
                    groups: [launch.grid.x, launch.grid.y, 1],
                    what: "kernel",
                };
                timing::batch(
                    &self.context,
                    &mut self.timestamps,
                    &d,
                    (count, stamps),
                    deadline,
                    flush,
                )
            }
            Work::Copy { bytes } => {
                let kept = self.copy.take().filter(|c| c.bytes == bytes);
                let c = match kept {
                    Some(c) => c,
                    None => CopyBuffers::new(&self.context, bytes)?,
                };
                let c = &*self.copy.insert(c);
                let d = Dispatch {
                    pipeline: &c.pipeline,
                    bind_group: &c.bind_group,
                    groups: [c.groups(), 1, 1],
                    what: "copy",
                };
                timing::batch(
                    &self.context,
                    &mut self.timestamps,
                    &d,
                    (count, stamps),
                    None,
                    flush,
                )
            }
        }
    }

    /// What only a built-in needs checked before its launch: llvmpipe's loop cap.
    fn check_launch(&self, launch: Launch) -> WebGpuResult<()> {
        let Some(p) = self.program.as_ref() else {
            return Ok(());
        };
        let Some(kernel) = p.builtin else {
            return Ok(());
        };
        let cap = Limits::value(&self.limits.max_loop_iterations);
        crate::builtin::check_loops(kernel, launch, |i| p.scalar(i), cap)
    }
}

impl Backend for WebGpuBackend {
    fn identity(&self) -> &DeviceIdentity {
        &self.identity
    }

    fn limits(&self) -> &Limits {
        &self.limits
    }

    fn kernel_facts(&self) -> &KernelFacts {
        self.program.as_ref().map_or(&self.no_facts, |p| &p.facts)
    }

    fn timer(&self) -> TimerInfo {
        timing::timer(self.context.period_ns)
    }

    /// WebGPU has no occupancy query: the core models residency where it can.
    fn residency(&mut self, _block: BlockSize) -> BackendResult<Option<Residency>> {
        Ok(None)
    }

    /// Makes the pipelines of a sweep's workgroup sizes in parallel before its first row.
    fn prepare(&mut self, blocks: &[BlockSize]) {
        if let (Some(p), None) = (self.program.as_mut(), &self.unusable) {
            p.prepare(&self.context, blocks);
        }
    }

    fn run_batch(&mut self, work: Work, count: u32, stamps: Stamps) -> BackendResult<BatchTimes> {
        self.usable()?;
        let r = self.batch(work, count, stamps);
        Ok(self.check(r)?)
    }

    fn run_batch_flushed(
        &mut self,
        work: Work,
        count: u32,
        flush_bytes: u64,
    ) -> BackendResult<BatchTimes> {
        self.usable()?;
        let r = self.batch_with(work, (count, Stamps::Each), Some(flush_bytes));
        Ok(self.check(r)?)
    }

    fn release(&mut self) -> BackendResult<()> {
        self.scratch = None;
        self.patterns.clear();
        self.program = None;
        self.copy = None;
        self.readback = None;
        self.timestamps = None;
        Ok(())
    }

    fn copy_method(&self) -> String {
        "shaders/wgsl/copy.wgsl (a vec4<u32> copy on the shader cores), timed with timestamp queries".into()
    }

    fn builtin(&self, kernel: KernelVariant) -> Option<ProgramSource> {
        Some(crate::builtin::source(kernel))
    }

    fn set_scalar(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        self.usable()?;
        let ctx = &self.context;
        let program = self
            .program
            .as_mut()
            .ok_or_else(|| WebGpuError::Usage("set_scalar: no program loaded".into()))?;
        Ok(program.set_scalar(ctx, arg, bytes)?)
    }

    fn load_program(&mut self, source: &ProgramSource, args: &[ProgramArg]) -> BackendResult<()> {
        let _t = blocksweep_core::trace::span("webgpu", "load_program");
        self.usable()?;
        self.program = None;
        let buffers: Vec<(String, u64)> = (args.iter().enumerate())
            .filter(|(_, a)| a.is_buffer())
            .map(|(i, a)| (format!("argument {i}"), a.allocation()))
            .collect();
        if let Err(detail) = self.limits.program_fits(&buffers) {
            return Err(WebGpuError::OutOfMemory(detail).into());
        }
        self.program = Some(UserProgram::load(&self.context, source, args)?);
        Ok(())
    }

    fn write_buffer(&mut self, arg: usize, bytes: &[u8]) -> BackendResult<()> {
        self.usable()?;
        let ctx = &self.context;
        let program = self
            .program
            .as_mut()
            .ok_or_else(|| WebGpuError::Usage("write_buffer: no program loaded".into()))?;
        let b = program.buffer(arg)?;
        if bytes.len() as u64 != b.allocation {
            return Err(WebGpuError::Usage(format!(
                "write_buffer: {} bytes for argument {arg}'s {} (guard bands included)",
                bytes.len(),
                b.allocation
            ))
            .into());
        }
        let whole = bytes.len() / 4 * 4;
        ctx.scoped("Queue::writeBuffer", || {
            ctx.queue.write_buffer(&b.buffer, 0, &bytes[..whole]);
            if whole < bytes.len() {
                let mut tail = [0u8; 4];
                tail[..bytes.len() - whole].copy_from_slice(&bytes[whole..]);
                ctx.queue.write_buffer(&b.buffer, whole as u64, &tail);
            }
        })?;
        let encoder = ctx.device.create_command_encoder(&Default::default());
        Ok(ctx.submit_and_wait(encoder, None, "write")?)
    }

    /// Zeros by clearBuffer on the device; any other byte the core writes instead.
    /// Zeros by clearBuffer, any other byte by copies from a pattern buffer of it, on the
    /// device; a fill not in whole words the core writes instead.
    fn fill_buffer(&mut self, arg: usize, fills: &[Fill]) -> BackendResult<bool> {
        self.usable()?;
        let aligned = |f: &Fill| f.offset.is_multiple_of(4) && f.len.is_multiple_of(4);
        if !fills.iter().all(aligned) {
            return Ok(false);
        }
        for f in fills.iter().filter(|f| f.byte != 0) {
            let at = self.patterns.iter().position(|p| p.byte == f.byte);
            let kept = at.map(|i| self.patterns.swap_remove(i));
            self.patterns
                .push(Pattern::sized(kept, &self.context, f.byte, f.len)?);
        }
        let ctx = &self.context;
        let program = self
            .program
            .as_mut()
            .ok_or_else(|| WebGpuError::Usage("fill_buffer: no program loaded".into()))?;
        let b = program.buffer(arg)?;
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        ctx.scoped("clearBuffer, copyBufferToBuffer", || {
            for f in fills {
                match self
                    .patterns
                    .iter()
                    .find(|p| p.byte == f.byte && f.byte != 0)
                {
                    Some(p) => p.record(&mut encoder, &b.buffer, f.offset, f.len),
                    None => encoder.clear_buffer(&b.buffer, f.offset, Some(f.len)),
                }
            }
        })?;
        ctx.submit_and_wait(encoder, None, "fill")?;
        Ok(true)
    }

    fn read_buffer(&mut self, arg: usize, offset: u64, out: &mut [u8]) -> BackendResult<()> {
        self.usable()?;
        let readback = Readback::sized(self.readback.take(), &self.context, out.len() as u64 + 8)?;
        let readback = &*self.readback.insert(readback);
        let program = self
            .program
            .as_ref()
            .ok_or_else(|| WebGpuError::Usage("read_buffer: no program loaded".into()))?;
        let b = program.buffer(arg)?;
        if offset.saturating_add(out.len() as u64) > b.allocation {
            return Err(WebGpuError::Usage(format!(
                "read_buffer: {} bytes at {offset} of argument {arg}'s {} bytes",
                out.len(),
                b.allocation
            ))
            .into());
        }
        Ok(readback.read(&self.context, &b.buffer, offset, out)?)
    }
}
