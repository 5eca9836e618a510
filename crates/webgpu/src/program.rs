//! The current program: its module, its buffers (guard bands around the part the kernel
//! binds), its uniform block of scalars, its bind group, and one pipeline per launch shape
//! (workgroup size and shared bytes are override constants, fixed when a pipeline is made).

use std::collections::HashMap;

use blocksweep_core::{
    BlockSize, KernelFacts, KernelVariant, Launch, Named, ProgramArg, ProgramSource,
};

use crate::context::DeviceContext;
use crate::error::{WebGpuError, WebGpuResult};
use crate::kernel::{self, Reflection, BLOCK_IDS, SHARED_ID};
use crate::memory::{words, Buffer, Uniform};
use crate::pipeline::{bind, check_limits};

pub(crate) struct UserProgram {
    module: wgpu::ShaderModule,
    layout: wgpu::PipelineLayout,
    pub bind_group: wgpu::BindGroup,
    entry: String,
    origin: String,
    reflection: Reflection,
    /// Buffer argument index → its buffer; other arguments have none.
    buffers: Vec<Option<Buffer>>,
    uniform: Option<Uniform>,
    pipelines: HashMap<(BlockSize, u32), wgpu::ComputePipeline>,
    /// Which built-in this is, where it is one.
    pub builtin: Option<KernelVariant>,
    /// The scalars as given, for the built-ins' loop check.
    args: Vec<ProgramArg>,
    pub facts: KernelFacts,
}

impl UserProgram {
    /// Builds `source` on `ctx` and allocates and binds `args` ([`kernel`] checks them first).
    pub fn load(
        ctx: &DeviceContext,
        source: &ProgramSource,
        args: &[ProgramArg],
    ) -> WebGpuResult<UserProgram> {
        let origin = source.origin.clone();
        let text = kernel::text(source)?;
        let reflection = kernel::reflect(&text, &source.entry, &origin)?;
        kernel::check_args(&reflection, args, &origin)?;
        let module = ctx
            .scoped("createShaderModule", || {
                ctx.device
                    .create_shader_module(wgpu::ShaderModuleDescriptor {
                        label: Some(&origin),
                        source: wgpu::ShaderSource::Wgsl(text.as_str().into()),
                    })
            })
            .map_err(|e| WebGpuError::build(&origin, e.to_string()))?;
        let align = u64::from(ctx.device.limits().min_storage_buffer_offset_alignment);
        let mut buffers = Vec::with_capacity(args.len());
        for (i, arg) in args.iter().enumerate() {
            buffers.push(match *arg {
                ProgramArg::Buffer { bytes, guard } => Some(allocate(ctx, i, bytes, guard, align)?),
                _ => None,
            });
        }
        let (layout_of, size) = kernel::uniform_layout(args, &origin)?;
        let uniform = (!layout_of.is_empty())
            .then(|| uniform(ctx, args, layout_of, size))
            .transpose()?;
        let (layout, bind_group) = bind(ctx, &reflection, &buffers, uniform.as_ref())?;
        let facts = facts(&reflection, &ctx.device.limits());
        Ok(UserProgram {
            module,
            layout,
            bind_group,
            entry: source.entry.clone(),
            origin,
            reflection,
            buffers,
            uniform,
            pipelines: HashMap::new(),
            builtin: crate::builtin::identify(source),
            args: args.to_vec(),
            facts,
        })
    }

    /// Buffer argument `arg`, or why there is none.
    pub fn buffer(&self, arg: usize) -> WebGpuResult<&Buffer> {
        self.buffers
            .get(arg)
            .and_then(Option::as_ref)
            .ok_or_else(|| {
                WebGpuError::Usage(format!("argument {arg} is not a buffer of {}", self.origin))
            })
    }

    /// Scalar `arg`'s value (up to 8 bytes, little-endian), for the built-ins' loop check.
    pub fn scalar(&self, arg: usize) -> Option<u64> {
        let bytes = match (&self.uniform, self.args.get(arg)?) {
            (Some(u), ProgramArg::Scalar { .. }) => {
                let &(_, at, size) = u.layout.iter().find(|l| l.0 == arg)?;
                &u.bytes[at as usize..(at + size) as usize]
            }
            _ => return None,
        };
        let mut le = [0u8; 8];
        le[..bytes.len()].copy_from_slice(bytes);
        Some(u64::from_le_bytes(le))
    }

    /// Sets scalar `arg` for the launches after this call.
    pub fn set_scalar(
        &mut self,
        ctx: &DeviceContext,
        arg: usize,
        bytes: &[u8],
    ) -> WebGpuResult<()> {
        let u = self
            .uniform
            .as_mut()
            .ok_or_else(|| WebGpuError::Usage("the program has no scalars".into()))?;
        let &(_, at, size) = u
            .layout
            .iter()
            .find(|l| l.0 == arg)
            .ok_or_else(|| WebGpuError::Usage(format!("argument {arg} is not a scalar")))?;
        if bytes.len() != size as usize {
            return Err(WebGpuError::Usage(format!(
                "scalar argument {arg} takes {size} bytes, not {}",
                bytes.len()
            )));
        }
        u.bytes[at as usize..(at + size) as usize].copy_from_slice(bytes);
        ctx.scoped("Queue::writeBuffer", || {
            ctx.queue.write_buffer(&u.buffer, 0, &u.bytes)
        })
    }

    /// The pipeline of `launch`'s workgroup size and shared bytes, made on first use.
    pub fn pipeline(
        &mut self,
        ctx: &DeviceContext,
        launch: Launch,
    ) -> WebGpuResult<wgpu::ComputePipeline> {
        let b = launch.block;
        if let Some(fixed) = self.reflection.fixed_size.filter(|s| *s != [b.x, b.y, b.z]) {
            return Err(WebGpuError::LaunchRejected(format!(
                "{} fixes @workgroup_size({}, {}, {}); declare `@id(0) override` constants for the workgroup size so blocksweep can set {}x{}x{}",
                self.origin, fixed[0], fixed[1], fixed[2], b.x, b.y, b.z
            )));
        }
        check_limits(
            &ctx.device.limits(),
            launch,
            self.reflection.workgroup_bytes,
        )?;
        let key = (b, launch.shared_bytes);
        if !self.pipelines.contains_key(&key) {
            let pipeline = self.make_pipeline(ctx, launch)?;
            self.pipelines.insert(key, pipeline);
        }
        Ok(self.pipelines[&key].clone())
    }

    /// Makes the pipelines of a sweep's workgroup sizes at once, one thread each (wgpu's device
    /// is shared across threads): WGSL's translation and the driver's compile, for every row
    /// before the first. A size that fails is left for its launch to report.
    pub fn prepare(&mut self, ctx: &DeviceContext, blocks: &[BlockSize]) {
        let limits = ctx.device.limits();
        let constant = self.reflection.workgroup_bytes;
        let fixed = self.reflection.fixed_size;
        let todo: Vec<Launch> = (blocks.iter())
            .map(|&b| Launch::linear(b, 1))
            .filter(|l| !self.pipelines.contains_key(&(l.block, 0)))
            .filter(|l| check_limits(&limits, *l, constant).is_ok())
            .filter(|l| fixed.is_none_or(|s| s == [l.block.x, l.block.y, l.block.z]))
            .collect();
        let this = &*self;
        let made: Vec<(BlockSize, wgpu::ComputePipeline)> = std::thread::scope(|scope| {
            let threads: Vec<_> = (todo.iter())
                .map(|&l| {
                    scope.spawn(move || this.make_pipeline(ctx, l).ok().map(|p| (l.block, p)))
                })
                .collect();
            threads
                .into_iter()
                .filter_map(|t| t.join().ok().flatten())
                .collect()
        });
        for (block, pipeline) in made {
            self.pipelines.insert((block, 0), pipeline);
        }
    }

    fn make_pipeline(
        &self,
        ctx: &DeviceContext,
        launch: Launch,
    ) -> WebGpuResult<wgpu::ComputePipeline> {
        let b = launch.block;
        let values = [
            ("0", b.x),
            ("1", b.y),
            ("2", b.z),
            ("3", launch.shared_bytes),
        ];
        let ids = BLOCK_IDS.iter().chain([&SHARED_ID]);
        let constants: Vec<(&str, f64)> = values
            .iter()
            .zip(ids)
            .filter(|(_, id)| self.reflection.overrides.contains(id))
            .map(|(&(k, v), _)| (k, f64::from(v)))
            .collect();
        ctx.scoped("createComputePipeline", || {
            ctx.device
                .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                    label: Some(&self.origin),
                    layout: Some(&self.layout),
                    module: &self.module,
                    entry_point: Some(&self.entry),
                    compilation_options: wgpu::PipelineCompilationOptions {
                        constants: &constants,
                        zero_initialize_workgroup_memory: false,
                    },
                    cache: None,
                })
        })
        .map_err(|e| WebGpuError::LaunchRejected(format!("workgroup {b}: {e}")))
    }
}

/// A buffer of `bytes` with `guard` bytes either side, usable as storage and by copies.
fn allocate(
    ctx: &DeviceContext,
    arg: usize,
    bytes: u64,
    guard: u64,
    align: u64,
) -> WebGpuResult<Buffer> {
    if !guard.is_multiple_of(align) {
        return Err(WebGpuError::Usage(format!(
            "argument {arg}'s guard band of {guard} bytes is not a multiple of minStorageBufferOffsetAlignment = {align}"
        )));
    }
    let allocation = bytes.saturating_add(guard.saturating_mul(2));
    let buffer = ctx
        .scoped("createBuffer", || {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("argument"),
                size: words(allocation),
                usage: wgpu::BufferUsages::STORAGE
                    | wgpu::BufferUsages::COPY_SRC
                    | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })
        .map_err(|e| {
            WebGpuError::OutOfMemory(format!("argument {arg} ({allocation} bytes): {e}"))
        })?;
    Ok(Buffer {
        buffer,
        allocation,
        guard,
        bytes,
    })
}

/// The uniform block of `args`' scalars, written once.
fn uniform(
    ctx: &DeviceContext,
    args: &[ProgramArg],
    layout: Vec<(usize, u32, u32)>,
    size: u32,
) -> WebGpuResult<Uniform> {
    let mut bytes = vec![0u8; size as usize];
    for &(i, at, len) in &layout {
        if let ProgramArg::Scalar { bytes: value, .. } = &args[i] {
            let n = value.len().min(len as usize);
            bytes[at as usize..at as usize + n].copy_from_slice(&value[..n]);
        }
    }
    let buffer = ctx.scoped("createBuffer", || {
        ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("scalars"),
            size: u64::from(size),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    })?;
    ctx.scoped("Queue::writeBuffer", || {
        ctx.queue.write_buffer(&buffer, 0, &bytes)
    })?;
    Ok(Uniform {
        buffer,
        bytes,
        layout,
    })
}

/// What is known of a built kernel: its constant workgroup storage and how it was built.
fn facts(refl: &Reflection, limits: &wgpu::Limits) -> KernelFacts {
    KernelFacts {
        max_block: Some(Named::new(
            u64::from(limits.max_compute_invocations_per_workgroup),
            "maxComputeInvocationsPerWorkgroup (no per-pipeline query in WebGPU)",
        )),
        shared_bytes: (refl.workgroup_bytes > 0).then(|| {
            Named::new(
                refl.workgroup_bytes,
                "var<workgroup> of constant size (naga)",
            )
        }),
        compiled_by: format!(
            "wgpu {} (naga: WGSL to the backend's shaders)",
            crate::device::wgpu_version()
        ),
        extra: vec![(
            "bounds checks".into(),
            "WebGPU's: an access outside its binding is clamped into it or dropped, never past it"
                .into(),
        )],
        ..KernelFacts::default()
    }
}
