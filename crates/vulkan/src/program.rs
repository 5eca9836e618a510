//! A program, a user's kernel or a built-in (`crate::program` of the core states the
//! contract): its shader module, one descriptor set of storage buffers at bindings 0..n in
//! argument order, the scalars as one push-constant block, and one pipeline per (workgroup
//! size, shared bytes) through specialisation constants 0..2 (local size) and 3 (shared bytes,
//! where the shader has it). Its buffers are device-local and reached through one staging
//! buffer.

use std::ffi::CString;
use std::sync::Arc;

use ash::vk;
use blocksweep_core::{
    BatchTimes, BlockSize, Fill, KernelFacts, KernelVariant, Launch, Named, ProgramArg,
    ProgramSource, Stamps,
};

use crate::command::Commands;
use crate::context::DeviceContext;
use crate::error::{VulkanError, VulkanResult};
use crate::kernel::{self, build, DescriptorPool, PipelineCache, PushBlock, Stage, StorageLayouts};
use crate::memory::{self, Buffer};
use crate::pieces::{self, Pieces};
use crate::timing::{check_launch, check_shared, DispatchLimits, Timestamps};
use crate::{builtin, device, reflect};

/// What building a program needs to know about the device.
pub(crate) struct Device<'a> {
    pub context: &'a Arc<DeviceContext>,
    pub dispatch: &'a DispatchLimits,
    /// maxStorageBufferRange and maxMemoryAllocationSize, as the limits name them.
    pub max_range: Option<&'a Named<u64>>,
    pub max_alloc: Option<&'a Named<u64>>,
    /// The pieces a built-in's planes past those limits split into (`crate::pieces`).
    pub piece: Option<&'a Named<u64>>,
    /// The device-local heap, which planes in pieces must fit together.
    pub heap: Option<&'a Named<u64>>,
    pub max_push_bytes: u32,
    pub max_shared: u32,
    pub driver: &'a str,
    /// llvmpipe's cap on a shader loop's iterations.
    pub max_loop_iterations: Option<u64>,
}

/// A pipeline's identity: workgroup size, and the shared bytes where the shader has SpecId 3.
type Key = (BlockSize, Option<u32>);

/// A loaded program: everything to dispatch it and to move its buffers.
pub(crate) struct Program {
    device: Arc<DeviceContext>,
    module: vk::ShaderModule,
    entry: CString,
    // Dropped in this order, before the buffers: the pipelines, the pool (freeing the set),
    // the layouts.
    cache: PipelineCache<Key>,
    _pool: DescriptorPool,
    set: vk::DescriptorSet,
    layouts: StorageLayouts,
    /// One per argument: the device memory of each [`ProgramArg::Buffer`], whole or in pieces.
    buffers: Vec<Option<Pieces>>,
    /// The split shaders' table of the pieces' addresses, where the planes are split.
    _table: Option<Buffer>,
    /// One per argument: a buffer's guard band and the kernel's bytes between its bands.
    parts: Vec<Option<(u64, u64)>>,
    push: PushBlock,
    /// Whether the shader declares SpecId 1, 2 (local size y, z) and 3 (shared bytes).
    spec: [bool; 3],
    max_shared: u32,
    /// The subgroup size every pipeline requires (`--required-subgroup-size=N`).
    required: Option<u32>,
    pub facts: KernelFacts,
    /// Which of this backend's built-in kernels the source is, if one.
    pub builtin: Option<KernelVariant>,
    /// llvmpipe's cap on a shader loop's iterations, checked for the built-ins' loops.
    max_loop_iterations: Option<u64>,
}

/// A buffer argument's guard band and the kernel's bytes; `None` for the others.
fn part(arg: &ProgramArg) -> Option<(u64, u64)> {
    match *arg {
        ProgramArg::Buffer { bytes, guard } => Some((guard, bytes)),
        _ => None,
    }
}

impl Program {
    /// Builds `source` for `args`: checks its bindings, push constants and entry point against
    /// them, allocates and binds the buffers, and builds one pipeline for the facts.
    pub fn load(dev: &Device, source: &ProgramSource, args: &[ProgramArg]) -> VulkanResult<Self> {
        let (required, options) = device::required_size(&source.options, dev.context.size_control)?;
        let builtin = builtin::identify(source);
        let piece = dev.piece.map(|p| p.value);
        let split = pieces::plan(builtin, dev.context, args, (piece, dev.heap))?;
        let split_source = split.and(builtin).and_then(builtin::split_source);
        let source = split_source.as_ref().unwrap_or(source);
        let (words, made_by) = kernel::words_of(source, &options)?;
        let mut all = args.to_vec();
        let buffers = match split {
            Some(shift) => {
                all.extend(pieces::extra_args(shift, pieces::count(args, shift)));
                0
            }
            None => args.iter().filter(|a| a.is_buffer()).count(),
        };
        let push = kernel::push_layout(&all);
        let push_bytes = push.bytes as usize;
        let found =
            reflect::reflect(&words).map_err(|e| build(format!("{}: {e}", source.origin)))?;
        found
            .check(&source.entry, buffers, &push)
            .map_err(|e| build(format!("{}: {e}", source.origin)))?;
        if push_bytes > dev.max_push_bytes as usize {
            return Err(build(format!(
                "the spec's scalars take {push_bytes} bytes of push constants; \
                 maxPushConstantsSize is {}",
                dev.max_push_bytes
            )));
        }
        let entry = CString::new(source.entry.as_str())
            .map_err(|_| build("the entry point's name contains a NUL byte".into()))?;
        let d = &dev.context.raw;
        let layouts = StorageLayouts::new(dev.context, buffers as u32, push_bytes as u32)?;
        let (pool, sets) = DescriptorPool::with_sets(dev.context, layouts.set, 1, buffers as u32)?;
        // The module goes into `p` as soon as it exists, so an early return destroys it.
        let mut p = Program {
            device: dev.context.clone(),
            module: vk::ShaderModule::null(),
            entry,
            cache: PipelineCache::new(dev.context),
            _pool: pool,
            set: sets[0],
            layouts,
            buffers: Vec::new(),
            _table: None,
            parts: args.iter().map(part).collect(),
            push: PushBlock::new(&all, &push)?,
            spec: [1, 2, 3].map(|id| found.spec_ids.contains(&id)),
            max_shared: dev.max_shared,
            required,
            facts: KernelFacts::default(),
            builtin,
            max_loop_iterations: dev.max_loop_iterations,
        };
        p.module = kernel::shader_module_of_words(d, &words)?;
        match split {
            Some(shift) => {
                p.buffers = pieces::allocate(dev.context, args, shift, dev.max_alloc)?;
                let (table, _) = pieces::table(dev.context, &p.buffers)?;
                p.push.set(args.len(), &table.address().to_le_bytes())?;
                p._table = Some(table);
            }
            None => {
                let whole = memory::allocate(dev.context, (dev.max_range, dev.max_alloc), args)?;
                let ranges = memory::bound_ranges(&whole, args, &found, dev.max_range);
                kernel::bind_storage(d, p.set, &ranges);
                p.buffers = whole.into_iter().map(|b| b.map(Pieces::whole)).collect();
            }
        }
        p.facts = p.build_facts(dev, made_by, &source.origin)?;
        p.facts.shared_bytes = Some(Named::new(
            found.workgroup_bytes,
            "Workgroup variables of constant size in the SPIR-V",
        ));
        if let Some(shift) = split {
            p.facts
                .extra
                .push(("planes".into(), pieces::describe(args, shift)));
        }
        Ok(p)
    }

    /// The driver's facts for the pipeline of a 256-wide workgroup (or the largest below).
    fn build_facts(
        &mut self,
        dev: &Device,
        made_by: String,
        origin: &str,
    ) -> VulkanResult<KernelFacts> {
        let limits = dev.dispatch;
        let most = device::most_invocations(self.required, dev.context.size_control);
        let probe = BlockSize::linear(
            256.min(limits.max_invocations)
                .min(limits.max_size[0])
                .min(most),
        );
        let pipeline = self.pipeline_for((probe, None))?;
        let stats = kernel::statistics(&self.device, pipeline)?;
        let of = kernel::FactsOf {
            limits,
            probe,
            required: self.required,
            made_by,
            origin,
            driver: dev.driver,
            max_loop_iterations: dev.max_loop_iterations,
        };
        Ok(kernel::facts(of, stats))
    }

    fn stage(&self) -> Stage<'_> {
        Stage {
            module: self.module,
            entry: &self.entry,
            layout: self.layouts.pipeline,
            flags: kernel::statistics_flags(&self.device),
        }
    }

    /// Constants 0..2 are the workgroup size; 3 the shared bytes, where the key has them.
    fn constants((block, shared): Key) -> Vec<u32> {
        let mut c = vec![block.x, block.y, block.z];
        c.extend(shared);
        c
    }

    fn key(&self, launch: Launch) -> Key {
        (launch.block, self.spec[2].then_some(launch.shared_bytes))
    }

    fn pipeline_for(&mut self, key: Key) -> VulkanResult<vk::Pipeline> {
        if let Some(p) = self.cache.get(&key) {
            return Ok(p);
        }
        let phase = format!("program pipeline for workgroup {}", key.0);
        let pipeline = blocksweep_core::trace::time("vulkan", phase, || {
            self.stage()
                .pipeline_requiring(&self.device.raw, &Self::constants(key), self.required)
        })?;
        self.cache.insert(key, pipeline);
        Ok(pipeline)
    }

    /// Builds the missing pipelines of `blocks` in parallel; where the shader sizes shared
    /// memory by launch, `run_batch` builds them, knowing the bytes.
    pub fn prepare(&mut self, blocks: &[BlockSize], limits: &DispatchLimits) {
        if self.spec[2] || self.required.is_some() {
            return;
        }
        let keys: Vec<(Key, Vec<u32>)> = blocks
            .iter()
            .filter(|&&b| self.refuse(Launch::linear(b, 1), limits).is_ok())
            .map(|&b| (b, None))
            .filter(|k| !self.cache.contains(k))
            .map(|k| (k, Self::constants(k)))
            .collect();
        let made = self.stage().build_parallel(&self.device.raw, &keys);
        self.cache.keep(made);
    }

    /// The launch checks (as for any Vulkan dispatch), a y or z the shader cannot take, and
    /// shared bytes above maxComputeSharedMemorySize where the shader takes them.
    fn refuse(&self, launch: Launch, limits: &DispatchLimits) -> VulkanResult<()> {
        check_launch(launch, limits)?;
        let b = launch.block;
        if let (Some(r), Some(c)) = (self.required, self.device.size_control) {
            device::check_block(b, r, c)?;
        }
        for (axis, size, declared) in [("y", b.y, self.spec[0]), ("z", b.z, self.spec[1])] {
            if size > 1 && !declared {
                return Err(VulkanError::LaunchRejected(format!(
                    "workgroup {b}: the shader fixes local_size_{axis} (it declares no \
                     local_size_{axis}_id)"
                )));
            }
        }
        match self.spec[2] {
            true => check_shared(launch, self.max_shared),
            false => Ok(()),
        }
    }

    /// `count` dispatches of `launch`, timed as the built-in kernels are.
    pub fn run_batch(
        &mut self,
        commands: &mut Commands,
        timestamps: &mut Timestamps,
        limits: &DispatchLimits,
        (launch, count, stamps): (Launch, u32, Stamps),
    ) -> VulkanResult<BatchTimes> {
        let record = self.recorder(launch, limits)?;
        timestamps.run_batch(commands, count, stamps, record)
    }

    /// What records one dispatch of `launch`, once the launch is checked and its pipeline
    /// built.
    pub fn recorder(
        &mut self,
        launch: Launch,
        limits: &DispatchLimits,
    ) -> VulkanResult<impl Fn(&ash::Device, vk::CommandBuffer) + '_> {
        self.refuse(launch, limits)?;
        if let Some(k) = self.builtin {
            let limit = self.max_loop_iterations;
            builtin::check_loops(k, launch, |arg| self.push.value(arg), limit)?;
        }
        let pipeline = self.pipeline_for(self.key(launch))?;
        let (layout, set, push) = (self.layouts.pipeline, self.set, &self.push.bytes);
        Ok(move |d: &ash::Device, cb| {
            crate::command::record_dispatch_bytes(d, cb, pipeline, layout, set, push, launch.grid)
        })
    }

    /// The device memory of argument `arg`, whose whole length `bytes` must be (where given).
    fn buffer(&self, arg: usize, bytes: Option<usize>) -> VulkanResult<&Pieces> {
        let Some(Some(b)) = self.buffers.get(arg) else {
            return Err(VulkanError::Usage(format!(
                "argument {arg} is not a buffer of the loaded program"
            )));
        };
        if let Some(bytes) = bytes.filter(|&n| n as u64 != b.size) {
            return Err(VulkanError::Usage(format!(
                "argument {arg} is a buffer of {} bytes; {bytes} given (whole buffers only)",
                b.size
            )));
        }
        Ok(b)
    }

    /// The staging buffer its copies need: as large as its largest buffer (or piece).
    pub fn staging_bytes(&self) -> u64 {
        self.buffers
            .iter()
            .flatten()
            .map(Pieces::largest)
            .max()
            .unwrap_or(4)
    }

    /// Copies `data` through the staging buffer into argument `arg`'s buffer, and waits.
    pub fn write(
        &self,
        (commands, staging): (&mut Commands, &mut Buffer),
        arg: usize,
        data: &[u8],
    ) -> VulkanResult<()> {
        self.buffer(arg, Some(data.len()))?
            .write(commands, staging, data)
    }

    /// Sets each of `fills` in argument `arg`'s buffer with vkCmdFillBuffer, in one submission,
    /// and waits; `false`, with nothing changed, where a range is not whole 32-bit words (the
    /// command's own rule), for the caller to write instead.
    pub fn fill(
        &mut self,
        commands: &mut Commands,
        arg: usize,
        fills: &[Fill],
    ) -> VulkanResult<bool> {
        let dst = self.buffer(arg, None)?;
        let whole = dst.size;
        let fits = |f: &Fill| {
            f.offset.is_multiple_of(4)
                && f.len.is_multiple_of(4)
                && f.offset.checked_add(f.len).is_some_and(|e| e <= whole)
        };
        if !fills.iter().all(fits) {
            return Ok(false);
        }
        // `fits` checked each range is whole words inside the buffer.
        commands.run(|d, cb| dst.record_fills(d, cb, fills))?;
        Ok(true)
    }

    /// Copies `out.len()` bytes of argument `arg`'s buffer from `offset` through the staging
    /// buffer into `out`, and waits.
    pub fn read(
        &self,
        (commands, staging): (&mut Commands, &Buffer),
        arg: usize,
        offset: u64,
        out: &mut [u8],
    ) -> VulkanResult<()> {
        let src = self.buffer(arg, None)?;
        let (size, whole) = (out.len() as u64, src.size);
        if offset.checked_add(size).is_none_or(|end| end > whole) {
            return Err(VulkanError::Usage(format!(
                "argument {arg} is a buffer of {whole} bytes; {size} asked at {offset}"
            )));
        }
        src.read(commands, staging, offset, out)
    }

    /// Sets scalar argument `arg` to its little-endian `value` for the dispatches after this.
    pub fn set_scalar(&mut self, arg: usize, value: &[u8]) -> VulkanResult<()> {
        self.push.set(arg, value)
    }

    /// Argument `arg`'s buffer, and where the kernel's bytes are in it (past the leading
    /// guard band): (buffer, offset, bytes); `None` for a plane in pieces.
    pub fn kernel_part(&self, arg: usize) -> VulkanResult<Option<(vk::Buffer, u64, u64)>> {
        let Some(whole) = self.buffer(arg, None)?.one() else {
            return Ok(None);
        };
        let raw = whole.raw;
        let (guard, bytes) = self.parts.get(arg).copied().flatten().ok_or_else(|| {
            VulkanError::Usage(format!(
                "argument {arg} is not a buffer of the loaded program"
            ))
        })?;
        Ok(Some((raw, guard, bytes)))
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the backend waited for the queue before replacing or dropping a program; a
        // module may go before the pipelines made from it; a null handle is a no-op.
        unsafe { self.device.raw.destroy_shader_module(self.module, None) };
    }
}
