//! A user's kernel (`crate::program` of the core states the contract): its shader module, one
//! descriptor set of storage buffers at bindings 0..n in argument order, the scalars as one
//! push-constant block, and one pipeline per (workgroup size, shared bytes) through
//! specialisation constants 0..2 (local size) and 3 (shared bytes, where the shader has it).
//! Its buffers are device-local and reached through one staging buffer, as the frame is.

use blocksweep_core::Fill;
use std::ffi::CString;
use std::sync::Arc;

use ash::vk;
use blocksweep_core::{
    BatchTimes, BlockSize, KernelFacts, Launch, Named, ProgramArg, ProgramSource, Stamps,
};

use crate::command::Commands;
use crate::context::DeviceContext;
use crate::error::{VulkanError, VulkanResult};
use crate::kernel::{self, DescriptorPool, PipelineCache, Stage, StorageLayouts};
use crate::memory::{Buffer, MemoryKind};
use crate::provider::{GLSL, SPIR_V};
use crate::reflect::PushLayout;
use crate::timing::{check_launch, check_shared, DispatchLimits, Timestamps};
use crate::{device, glsl, reflect};

/// What building a program needs to know about the device.
pub(crate) struct Device<'a> {
    pub context: &'a Arc<DeviceContext>,
    pub dispatch: &'a DispatchLimits,
    /// maxStorageBufferRange and maxMemoryAllocationSize, as the limits name them.
    pub max_range: Option<&'a Named<u64>>,
    pub max_alloc: Option<&'a Named<u64>>,
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
    /// One per argument: the device buffer of each [`ProgramArg::Buffer`].
    buffers: Vec<Option<Buffer>>,
    /// Made on the first copy, as large as the largest buffer.
    staging: Option<Buffer>,
    push: Vec<u8>,
    /// Whether the shader declares SpecId 1, 2 (local size y, z) and 3 (shared bytes).
    spec: [bool; 3],
    max_shared: u32,
    /// The subgroup size every pipeline requires (`--required-subgroup-size=N`).
    required: Option<u32>,
    pub facts: KernelFacts,
}

fn build(detail: String) -> VulkanError {
    VulkanError::Build {
        call: "load_program",
        detail,
    }
}

/// The source as SPIR-V words (GLSL compiled with `options`), and who made them.
fn words_of(source: &ProgramSource, options: &[String]) -> VulkanResult<(Vec<u32>, String)> {
    match source.language {
        l if l == SPIR_V => {
            let words = ash::util::read_spv(&mut std::io::Cursor::new(&source.code))
                .map_err(|e| build(format!("{} is not SPIR-V: {e}", source.origin)))?;
            Ok((words, format!("SPIR-V given ({})", source.origin)))
        }
        l if l == GLSL => {
            let text = std::str::from_utf8(&source.code)
                .map_err(|e| build(format!("{} is not UTF-8: {e}", source.origin)))?;
            let words = glsl::compile(text, &source.origin, &source.entry, options)?;
            let by = glsl::compiler_name()?;
            Ok((words, format!("{by} from {}", source.origin)))
        }
        other => Err(build(format!(
            "{} is {other}; the Vulkan backend builds GLSL or SPIR-V",
            source.origin
        ))),
    }
}

/// Where each scalar goes in the push-constant block: std430, every scalar aligned to its own
/// size, in argument order; the block's size rounded up to 4 bytes.
pub(crate) fn push_layout(args: &[ProgramArg]) -> PushLayout {
    let mut layout = PushLayout::default();
    let mut at = 0u32;
    for (i, a) in args.iter().enumerate() {
        if let ProgramArg::Scalar { ty, .. } = a {
            let size = ty.size() as u32;
            at = at.div_ceil(size) * size;
            layout
                .scalars
                .push((format!("argument {i}"), ty.to_string(), at, size));
            at += size;
        }
    }
    layout.bytes = at.div_ceil(4) * 4;
    layout
}

/// The push-constant block: each scalar's bytes at its std430 offset.
fn push_block(args: &[ProgramArg], offsets: &[usize], size: usize) -> VulkanResult<Vec<u8>> {
    let mut block = vec![0u8; size];
    let scalars = args.iter().enumerate().filter_map(|(i, a)| match a {
        ProgramArg::Scalar { ty, bytes } => Some((i, ty, bytes)),
        _ => None,
    });
    for ((i, ty, bytes), &at) in scalars.zip(offsets) {
        if bytes.len() != ty.size() {
            return Err(VulkanError::Usage(format!(
                "argument {i}: a {ty} scalar is {} bytes, {} given",
                ty.size(),
                bytes.len()
            )));
        }
        block[at..at + bytes.len()].copy_from_slice(bytes);
    }
    Ok(block)
}

/// A device-local buffer for each buffer argument, refused by name above maxStorageBufferRange
/// or maxMemoryAllocationSize.
fn allocate(dev: &Device, args: &[ProgramArg]) -> VulkanResult<Vec<Option<Buffer>>> {
    let usage = vk::BufferUsageFlags::STORAGE_BUFFER
        | vk::BufferUsageFlags::TRANSFER_SRC
        | vk::BufferUsageFlags::TRANSFER_DST;
    let too_large = |i: usize, bytes: u64, limit: &Named<u64>| {
        VulkanError::TooLarge(format!(
            "argument {i}: a buffer of {bytes} bytes; {} is {}",
            limit.name, limit.value
        ))
    };
    let one = |(i, a): (usize, &ProgramArg)| -> VulkanResult<Option<Buffer>> {
        let ProgramArg::Buffer { bytes, .. } = *a else {
            return Ok(None);
        };
        if bytes == 0 {
            return Err(VulkanError::Usage(format!(
                "argument {i}: a buffer of 0 bytes (Vulkan has no empty buffers)"
            )));
        }
        if let Some(limit) = dev.max_range.filter(|l| bytes > l.value) {
            return Err(too_large(i, bytes, limit));
        }
        let total = a.allocation();
        if let Some(limit) = dev.max_alloc.filter(|l| total > l.value) {
            return Err(too_large(i, total, limit));
        }
        let kind = MemoryKind::DeviceLocal;
        Buffer::new(dev.context, total, usage, kind, dev.max_alloc).map(Some)
    };
    args.iter().enumerate().map(one).collect()
}

/// Each buffer's binding: from past its leading guard band, over the kernel's bytes and the
/// trailing band too, so that a store past the end lands in the band and is found (lavapipe and
/// NVIDIA drop a store past a binding's range, which would hide it). Where the shader reads the
/// array's length (`.length()`), or the range would pass maxStorageBufferRange, the binding
/// ends with the kernel's bytes.
fn bound_ranges(
    buffers: &[Option<Buffer>],
    args: &[ProgramArg],
    found: &reflect::Reflection,
    max_range: Option<&Named<u64>>,
) -> Vec<(vk::Buffer, u64, u64)> {
    let mut binding = 0u32;
    let mut ranges = Vec::new();
    for (b, a) in buffers.iter().zip(args) {
        let (Some(b), ProgramArg::Buffer { bytes, guard }) = (b, a) else {
            continue;
        };
        let reads_length = found.length_read.contains(&(0, binding));
        let with_tail = bytes + guard;
        let fits = max_range.is_none_or(|m| with_tail <= m.value);
        let range = match reads_length || !fits {
            true => *bytes,
            false => with_tail,
        };
        ranges.push((b.raw, *guard, range));
        binding += 1;
    }
    ranges
}

impl Program {
    /// Builds `source` for `args`: checks its bindings, push constants and entry point against
    /// them, allocates and binds the buffers, and builds one pipeline for the facts.
    pub fn load(dev: &Device, source: &ProgramSource, args: &[ProgramArg]) -> VulkanResult<Self> {
        let (required, options) = device::required_size(&source.options, dev.context.size_control)?;
        let (words, made_by) = words_of(source, &options)?;
        let buffers = args.iter().filter(|a| a.is_buffer()).count();
        let push = push_layout(args);
        let offsets: Vec<usize> = push.scalars.iter().map(|s| s.2 as usize).collect();
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
            staging: None,
            push: push_block(args, &offsets, push_bytes)?,
            spec: [1, 2, 3].map(|id| found.spec_ids.contains(&id)),
            max_shared: dev.max_shared,
            required,
            facts: KernelFacts::default(),
        };
        p.module = kernel::shader_module_of_words(d, &words)?;
        p.buffers = allocate(dev, args)?;
        let ranges = bound_ranges(&p.buffers, args, &found, dev.max_range);
        kernel::bind_storage(d, p.set, &ranges);
        p.facts = p.build_facts(dev, made_by, &source.origin)?;
        p.facts.shared_bytes = Some(Named::new(
            found.workgroup_bytes,
            "Workgroup variables of constant size in the SPIR-V",
        ));
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
        let mut extra = vec![("shader".to_string(), origin.to_string())];
        if let Some(r) = self.required {
            extra.push(("requiredSubgroupSize".into(), r.to_string()));
        }
        if !stats.all.is_empty() {
            extra.push((
                "statistics of".into(),
                format!("the pipeline for workgroup {probe}"),
            ));
        }
        extra.extend(stats.all);
        if let Some(cap) = dev.max_loop_iterations {
            extra.push((
                "loop iterations".into(),
                format!("llvmpipe ends a shader's loops after {cap} (LP_MAX_TGSI_LOOP_ITERATIONS)"),
            ));
        }
        Ok(KernelFacts {
            max_block: Some(Named::new(
                limits.max_invocations.into(),
                "maxComputeWorkGroupInvocations (no per-pipeline query in Vulkan)",
            )),
            registers: stats.registers.map(|r| {
                Named::new(
                    r.value,
                    format!("{}, pipeline for workgroup {probe}", r.name),
                )
            }),
            compiled_by: format!(
                "{made_by}; vkCreateComputePipelines (driver {})",
                dev.driver
            ),
            extra,
            ..KernelFacts::default()
        })
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

    /// The built-in kernels' launch checks, and a y or z the shader cannot take.
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
        self.refuse(launch, limits)?;
        let pipeline = self.pipeline_for(self.key(launch))?;
        let (layout, set, push) = (self.layouts.pipeline, self.set, &self.push);
        timestamps.run_batch(commands, count, stamps, |d, cb| {
            crate::command::record_dispatch_bytes(d, cb, pipeline, layout, set, push, launch.grid)
        })
    }

    /// The device buffer of argument `arg`, whose whole length `bytes` must be (where given).
    fn buffer(&self, arg: usize, bytes: Option<usize>) -> VulkanResult<(vk::Buffer, u64)> {
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
        Ok((b.raw, b.size))
    }

    fn staging(&mut self) -> VulkanResult<&mut Buffer> {
        if self.staging.is_none() {
            let largest = self
                .buffers
                .iter()
                .flatten()
                .map(|b| b.size)
                .max()
                .unwrap_or(4);
            let usage = vk::BufferUsageFlags::TRANSFER_SRC | vk::BufferUsageFlags::TRANSFER_DST;
            let staging = Buffer::new(&self.device, largest, usage, MemoryKind::Staging, None)?;
            self.staging = Some(staging);
        }
        self.staging
            .as_mut()
            .ok_or_else(|| VulkanError::Usage("staging buffer missing".into()))
    }

    /// Copies `data` through the staging buffer into argument `arg`'s buffer, and waits.
    pub fn write(&mut self, commands: &mut Commands, arg: usize, data: &[u8]) -> VulkanResult<()> {
        let (dst, size) = self.buffer(arg, Some(data.len()))?;
        let staging = self.staging()?;
        staging.write_bytes(data)?;
        let src = staging.raw;
        commands.run(|d, cb| crate::command::record_copy(d, cb, src, dst, size))
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
        let (dst, whole) = self.buffer(arg, None)?;
        let fits = |f: &Fill| {
            f.offset.is_multiple_of(4)
                && f.len.is_multiple_of(4)
                && f.offset.checked_add(f.len).is_some_and(|e| e <= whole)
        };
        if !fills.iter().all(fits) {
            return Ok(false);
        }
        commands.run(|d, cb| {
            for f in fills.iter().filter(|f| f.len > 0) {
                let word = u32::from_ne_bytes([f.byte; 4]);
                unsafe { d.cmd_fill_buffer(cb, dst, f.offset, f.len, word) };
            }
        })?;
        Ok(true)
    }

    /// Copies `out.len()` bytes of argument `arg`'s buffer from `offset` through the staging
    /// buffer into `out`, and waits.
    pub fn read(
        &mut self,
        commands: &mut Commands,
        arg: usize,
        offset: u64,
        out: &mut [u8],
    ) -> VulkanResult<()> {
        let (src, whole) = self.buffer(arg, None)?;
        let size = out.len() as u64;
        if offset.checked_add(size).is_none_or(|end| end > whole) {
            return Err(VulkanError::Usage(format!(
                "argument {arg} is a buffer of {whole} bytes; {size} asked at {offset}"
            )));
        }
        let dst = self.staging()?.raw;
        commands.run(|d, cb| {
            crate::command::record_copy_from(d, cb, (src, offset), dst, size);
            crate::command::record_host_read_barrier(d, cb);
        })?;
        self.staging()?.read_bytes(out)
    }
}

impl Drop for Program {
    fn drop(&mut self) {
        // SAFETY: the backend waited for the queue before replacing or dropping a program; a
        // module may go before the pipelines made from it; a null handle is a no-op.
        unsafe { self.device.raw.destroy_shader_module(self.module, None) };
    }
}
