//! A program's buffers (its arguments, its uniform block) and those beside them: the mappable
//! buffer reads come back through (grown to the largest read, kept), the fills' patterns, the
//! cold flush's scratch, and the copy ceiling's two buffers with their shader.

use crate::context::DeviceContext;
use crate::error::{WebGpuError, WebGpuResult};

/// One buffer argument: the allocation, and where the kernel's part of it lies.
pub(crate) struct Buffer {
    pub buffer: wgpu::Buffer,
    /// Bytes of the allocation, guard bands included (the spec's, before rounding to 4).
    pub allocation: u64,
    pub guard: u64,
    pub bytes: u64,
}

/// The scalars' uniform block: its buffer, its bytes, and where each scalar lies in it.
pub(crate) struct Uniform {
    pub buffer: wgpu::Buffer,
    pub bytes: Vec<u8>,
    pub layout: Vec<(usize, u32, u32)>,
}

/// Buffer sizes and copies go in whole 4-byte words (wgpu's COPY_BUFFER_ALIGNMENT).
pub(crate) fn words(bytes: u64) -> u64 {
    bytes.next_multiple_of(4)
}

/// A MAP_READ buffer that device buffers are copied into, then mapped.
pub(crate) struct Readback {
    buffer: wgpu::Buffer,
    size: u64,
}

impl Readback {
    /// A read-back buffer of at least `bytes`: `kept` where it is large enough.
    pub fn sized(
        kept: Option<Readback>,
        ctx: &DeviceContext,
        bytes: u64,
    ) -> WebGpuResult<Readback> {
        let bytes = bytes.next_multiple_of(4).max(4);
        if let Some(r) = kept.filter(|r| r.size >= bytes) {
            return Ok(r);
        }
        let buffer = ctx.scoped("createBuffer", || {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("read-back"),
                size: bytes,
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        })?;
        Ok(Readback {
            buffer,
            size: bytes,
        })
    }

    /// Copies `out.len()` bytes of `src` from `offset` into `out`, through this buffer.
    pub fn read(
        &self,
        ctx: &DeviceContext,
        src: &wgpu::Buffer,
        offset: u64,
        out: &mut [u8],
    ) -> WebGpuResult<()> {
        // Copies go in whole words: the word-aligned span around the bytes asked for.
        let start = offset / 4 * 4;
        let end = (offset + out.len() as u64)
            .next_multiple_of(4)
            .min(src.size());
        let span = end - start;
        let mut encoder = ctx.device.create_command_encoder(&Default::default());
        ctx.scoped("copyBufferToBuffer", || {
            encoder.copy_buffer_to_buffer(src, start, &self.buffer, 0, span)
        })?;
        ctx.submit_and_wait(encoder, None, "read-back")?;
        let skip = (offset - start) as usize;
        ctx.read_mapped(&self.buffer, span, |bytes| {
            out.copy_from_slice(&bytes[skip..skip + out.len()]);
        })
    }
}

/// The scratch buffer `--cold` clears before each timed dispatch: `bytes` (whole 4 KiB pages,
/// as the core sizes it) written over the last-level cache.
pub(crate) fn scratch(ctx: &DeviceContext, bytes: u64) -> WebGpuResult<wgpu::Buffer> {
    ctx.scoped("createBuffer", || {
        ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("cold flush"),
            size: bytes.next_multiple_of(4),
            usage: wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    })
    .map_err(|e| WebGpuError::OutOfMemory(format!("the --cold flush's {bytes} bytes: {e}")))
}

/// Bytes of one fill pattern at most: a larger fill copies it several times.
const PATTERN_MAX: u64 = 64 << 20;

/// A buffer holding one byte value, copied from on the device (copyBufferToBuffer) to fill a
/// range with it: the poison before each checked dispatch and the guard bands' pattern, without
/// crossing the bus each time (call14's traced H100 run spent 125 ms writing the poison).
pub(crate) struct Pattern {
    pub byte: u8,
    pub buffer: wgpu::Buffer,
    pub size: u64,
}

impl Pattern {
    /// A pattern of `byte` for fills of up to `bytes` in one copy (at most [`PATTERN_MAX`]):
    /// `kept` where it is that byte and large enough.
    pub fn sized(
        kept: Option<Pattern>,
        ctx: &DeviceContext,
        byte: u8,
        bytes: u64,
    ) -> WebGpuResult<Pattern> {
        let want = bytes.clamp(4, PATTERN_MAX).next_multiple_of(4);
        if let Some(p) = kept.filter(|p| p.byte == byte && p.size >= want) {
            return Ok(p);
        }
        let buffer = ctx.scoped("createBuffer", || {
            ctx.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("fill pattern"),
                size: want,
                usage: wgpu::BufferUsages::COPY_SRC,
                mapped_at_creation: true,
            })
        })?;
        {
            let mut view =
                buffer
                    .slice(..)
                    .get_mapped_range_mut()
                    .map_err(|e| WebGpuError::Driver {
                        call: "Buffer::get_mapped_range_mut",
                        message: e.to_string(),
                    })?;
            view.copy_from_slice(&vec![byte; want as usize]);
        }
        buffer.unmap();
        Ok(Pattern {
            byte,
            buffer,
            size: want,
        })
    }

    /// Records copies of this pattern over `len` bytes of `dst` from `offset`.
    pub fn record(
        &self,
        encoder: &mut wgpu::CommandEncoder,
        dst: &wgpu::Buffer,
        offset: u64,
        len: u64,
    ) {
        let mut at = 0;
        while at < len {
            let n = (len - at).min(self.size);
            encoder.copy_buffer_to_buffer(&self.buffer, 0, dst, offset + at, n);
            at += n;
        }
    }
}

/// The copy ceiling's two buffers of `bytes`, its shader's pipeline, and the bind group.
pub(crate) struct CopyBuffers {
    pub bytes: u64,
    pub pipeline: wgpu::ComputePipeline,
    pub bind_group: wgpu::BindGroup,
    /// vec4<u32> elements copied.
    pub elements: u32,
    _buffers: [wgpu::Buffer; 3],
}

/// The copy shader's workgroup size.
pub(crate) const COPY_BLOCK: u32 = 256;

impl CopyBuffers {
    pub fn new(ctx: &DeviceContext, bytes: u64) -> WebGpuResult<CopyBuffers> {
        // Whole 16-byte elements, as Vulkan's copy: 4000012 bytes (n = 1000003) copies 4000016.
        let copied = bytes.next_multiple_of(16);
        let l = ctx.device.limits();
        let limits = [
            (l.max_buffer_size, "maxBufferSize"),
            (
                l.max_storage_buffer_binding_size,
                "maxStorageBufferBindingSize",
            ),
            (
                16 * u64::from(u32::MAX),
                "16 x 2^32 - 1 (the copy shader's u32 count of vec4<u32>)",
            ),
        ];
        if let Some((max, name)) = limits.iter().find(|(max, _)| copied > *max) {
            return Err(WebGpuError::OutOfMemory(format!(
                "the copy ceiling's buffers of {bytes} bytes: more than {name} = {max}"
            )));
        }
        let Some(elements) = u32::try_from(copied / 16).ok().filter(|_| bytes > 0) else {
            return Err(WebGpuError::Usage(
                "the copy ceiling copies at least one byte".into(),
            ));
        };
        let storage = |label| wgpu::BufferDescriptor {
            label: Some(label),
            size: copied,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        };
        let (pipeline, bind_group, buffers) = ctx
            .scoped("copy ceiling: createBuffer, createComputePipeline", || {
                let src = ctx.device.create_buffer(&storage("copy source"));
                let dst = ctx.device.create_buffer(&storage("copy destination"));
                let n = ctx.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("copy n"),
                    size: 16,
                    usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
                    mapped_at_creation: false,
                });
                let mut n_bytes = [0u8; 16];
                n_bytes[..4].copy_from_slice(&elements.to_le_bytes());
                ctx.queue.write_buffer(&n, 0, &n_bytes);
                let module = ctx
                    .device
                    .create_shader_module(wgpu::ShaderModuleDescriptor {
                        label: Some("shaders/wgsl/copy.wgsl"),
                        source: wgpu::ShaderSource::Wgsl(crate::builtin::COPY_WGSL.into()),
                    });
                let constants = [("0", f64::from(COPY_BLOCK))];
                let pipeline =
                    ctx.device
                        .create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                            label: Some("copy"),
                            layout: None,
                            module: &module,
                            entry_point: Some("main"),
                            compilation_options: wgpu::PipelineCompilationOptions {
                                constants: &constants,
                                zero_initialize_workgroup_memory: false,
                            },
                            cache: None,
                        });
                let bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
                    label: Some("copy"),
                    layout: &pipeline.get_bind_group_layout(0),
                    entries: &[
                        wgpu::BindGroupEntry {
                            binding: 0,
                            resource: src.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 1,
                            resource: dst.as_entire_binding(),
                        },
                        wgpu::BindGroupEntry {
                            binding: 2,
                            resource: n.as_entire_binding(),
                        },
                    ],
                });
                (pipeline, bind_group, [src, dst, n])
            })
            .map_err(|e| {
                WebGpuError::OutOfMemory(format!("the copy's two buffers of {bytes} bytes: {e}"))
            })?;
        Ok(CopyBuffers {
            bytes,
            pipeline,
            bind_group,
            elements,
            _buffers: buffers,
        })
    }

    /// The copy's workgroup count: one element per invocation, at most 65535 workgroups.
    pub fn groups(&self) -> u32 {
        self.elements.div_ceil(COPY_BLOCK).clamp(1, 65535)
    }
}
